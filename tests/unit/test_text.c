/* SPDX-License-Identifier: MIT */
/*
 * test_text.c - lib/text: the UTF-8 decoder (RFC 3629, exactly) and the
 * cleaner every shown string of the target goes through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "lib/text.h"
#include "tests/unit/str_cases.h"

TestSuite(text);

/* text_clean() of @s into a roomy buffer. */
static const char *clean(const char *s)
{
	static char buf[256];

	text_clean(s, buf, sizeof(buf));
	return buf;
}

static size_t len_of(const char *s, uint32_t *cp)
{
	return text_utf8(s, strlen(s) + 1, cp);
}

Test(text, decodes_every_length_at_its_bounds)
{
	static const struct {
		const char *s;
		size_t len;
		uint32_t cp;
	} ok[] = {
		{"A", 1, 'A'},
		{"\x7f", 1, 0x7f},
		{"\xc2\x80", 2, 0x80},
		{"\xc3\xa9", 2, 0xe9},
		{"\xdf\xbf", 2, 0x7ff},
		{"\xe0\xa0\x80", 3, 0x800},
		{"\xe4\xb8\xad", 3, 0x4e2d},
		{"\xed\x9f\xbf", 3, 0xd7ff},
		{"\xee\x80\x80", 3, 0xe000},
		{"\xef\xbf\xbf", 3, 0xffff},
		{"\xf0\x90\x80\x80", 4, 0x10000},
		{"\xf0\x9f\xa6\x80", 4, 0x1f980},
		{"\xf4\x8f\xbf\xbf", 4, 0x10ffff},
	};
	uint32_t cp;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		cp = 0xdead;
		cr_assert_eq(len_of(ok[i].s, &cp), ok[i].len, "case %zu", i);
		cr_assert_eq(cp, ok[i].cp, "case %zu: U+%04X", i, cp);
	}
	cr_assert_eq(text_utf8("", 1, &cp), 1, "NUL is U+0000");
	cr_assert_eq(cp, 0);
}

Test(text, refuses_overlong_surrogates_out_of_range_and_cut_sequences)
{
	/* clang-format off */
	static const char *const bad[] = {
	    /* lone continuations; C1 CSI as a raw byte */
	    "\x80", "\xbf", "\x9b",
	    /* overlong 2-, 3- and 4-byte forms */
	    "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xe0\x9f\xbf", "\xf0\x80\x80\x80",
	    "\xf0\x8f\xbf\xbf",
	    /* surrogates, above U+10FFFF, bytes UTF-8 never uses */
	    "\xed\xa0\x80", "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
	    "\xf7\xbf\xbf\xbf", "\xf8\x88\x80\x80\x80", "\xff", "\xfe",
	    /* cut short by the NUL, by what follows */
	    "\xc3", "\xe2\x82", "\xf0\x9f\xa6", "\xc3" "A", "\xe2\x82" "A", "\xe4\xc3\xa9",
	};
	/* clang-format on */

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(len_of(bad[i], NULL), 0, "case %zu", i);
	/* cut short by @n */
	cr_assert_eq(text_utf8("\xc3\xa9", 1, NULL), 0);
	cr_assert_eq(text_utf8("\xf0\x9f\xa6\x80", 3, NULL), 0);
	cr_assert_eq(text_utf8("A", 0, NULL), 0);
}

Test(text, printable_leaves_out_controls_separators_and_bidi)
{
	static const uint32_t no[] = {0,      7,      '\t',   '\n',   '\r',   0x1b,
				      0x1f,   0x7f,   0x80,   0x85,   0x9b,   0x9f,
				      0x61c,  0x200e, 0x200f, 0x2028, 0x2029, 0x202a,
				      0x202e, 0x2066, 0x2069};
	static const uint32_t yes[] = {' ',    'a',    '~',    0xa0,   0xe9,	0x4e2d,
				       0x200b, 0x2030, 0x206a, 0xfffd, 0x1f980, 0x10ffff};

	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		cr_assert(!text_printable(no[i]), "U+%04X", no[i]);
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		cr_assert(text_printable(yes[i]), "U+%04X", yes[i]);
}

Test(text, clean_hides_escapes_bell_and_c1_controls)
{
	static const struct str_case cases[] = {
		{"a\x1b[2Jb", "a?[2Jb"},
		{"ding\x07", "ding?"},
		{"\x1b]0;title\x07", "?]0;title?"},
		/* U+009B as UTF-8 is one character, one '?'; as a raw byte too */
		{"x\xc2\x9b"
		 "31my",
		 "x?31my"},
		{"x\x9b"
		 "31my",
		 "x?31my"},
		{"nel\xc2\x85", "nel?"},
		{"del\x7f", "del?"},
		{"two\nlines\r\ttab", "two?lines??tab"},
		{"rlo\xe2\x80\xae"
		 "x\xe2\x80\xa8",
		 "rlo?x?"},
	};

	EXPECT_EACH(clean, cases);
}

Test(text, clean_replaces_each_bad_byte)
{
	static const struct str_case cases[] = {
		{"a\xc0\x80z", "a??z"},		  /* overlong NUL */
		{"a\xe0\x80\xafz", "a???z"},	  /* overlong '/' */
		{"a\xed\xa0\x80z", "a???z"},	  /* surrogate */
		{"a\xf4\x90\x80\x80z", "a????z"}, /* > U+10FFFF */
		{"a\xff\xfez", "a??z"},
		{"cut\xe2\x82", "cut??"},
		/* a bad lead does not swallow the good character after it */
		{"\xe2\xc3\xa9", "?\xc3\xa9"},
	};

	EXPECT_EACH(clean, cases);
}

Test(text, clean_keeps_valid_multibyte_text)
{
	const char *s = "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\xa6\x80 \xc2\xa0"
			"\xef\xbf\xbd ns::f<T>(int) a;b";

	cr_assert_str_eq(clean(s), s);
	cr_assert_eq(text_clean(s, (char[256]){0}, 256), strlen(s));
}

Test(text, clean_cuts_at_whole_characters)
{
	char b[6];

	/* room for 5 bytes: "ab" and one "é"; the second would be cut */
	cr_assert_eq(text_clean("ab\xc3\xa9\xc3\xa9", b, sizeof(b)), 4);
	cr_assert_str_eq(b, "ab\xc3\xa9");
	cr_assert_eq(text_clean("\xf0\x9f\xa6\x80", b, 4), 0);
	cr_assert_str_eq(b, "");
	cr_assert_eq(text_clean("abcdef", b, 1), 0);
	cr_assert_str_eq(b, "");
	b[0] = 'x';
	cr_assert_eq(text_clean("abc", b, 0), 0);
	cr_assert_eq(b[0], 'x', "len 0 writes nothing");
}

Test(text, clean_works_in_place)
{
	char s[] = "\xc2\x9b\x1b[2J\xed\xa0\x80ok\xc3\xa9\xe2\x82";

	cr_assert_eq(text_clean(s, s, sizeof(s)), 14);
	cr_assert_str_eq(s, "??[2J???ok\xc3\xa9??");
}

Test(text, put_writes_what_clean_makes_whatever_the_length)
{
	char *buf = NULL, *big = malloc(10001), *want = malloc(10001);
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	cr_assert(out && big && want);
	for (size_t i = 0; i < 10000; i++)
		big[i] = "ab\x1b\xc3\xa9\x9b\xe4\xb8\xad\x07"[i % 10];
	big[10000] = '\0';
	text_put(out, big);
	text_put(out, NULL);
	fclose(out);
	text_clean(big, want, 10001);
	cr_assert_str_eq(buf, want);
	cr_assert(!strchr(buf, '\x1b'));
	free(buf);
	free(big);
	free(want);
}

/* A word d9prof puts into a command to paste is read back by a real
 * shell as itself, and runs nothing. */
Test(text, shell_arg_is_read_back_as_itself_and_runs_nothing)
{
	static const char *const words[] = {
		"api",
		"s3://bkt/p",
		"api$(id>PWNED)",
		"web-1;touch${IFS}PWNED2;#",
		"a'b",
		"'",
		"``",
		"a b\tc",
		"$HOME",
		"*",
		"~root",
		"x\\'y",
		"--from=1s",
		"",
		"!!",
		"a\"b",
	};
	char cmd[512], got[256];

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t at;
		FILE *p;

		size_t from = at =
			(size_t)snprintf(cmd, sizeof(cmd), "cd /tmp && printf '%%s|' ");

		cr_assert_eq(text_shell_arg(words[i], cmd, sizeof(cmd), &at), 0);
		/* a plain word as it is, anything else quoted */
		cr_expect_eq(text_shell_word(words[i]), !strcmp(cmd + from, words[i]),
			     "%s", cmd);
		p = popen(cmd, "r");
		cr_assert_not_null(p);
		memset(got, 0, sizeof(got));
		cr_assert_neq(fgets(got, sizeof(got), p), NULL, "%s", cmd);
		pclose(p);
		cr_expect(strlen(got) > 0 && got[strlen(got) - 1] == '|', "%s: %s", cmd,
			  got);
		got[strlen(got) - 1] = '\0';
		cr_expect_str_eq(got, words[i], "%s", cmd);
	}
	cr_expect_eq(access("/tmp/PWNED", F_OK), -1);
	cr_expect_eq(access("/tmp/PWNED2", F_OK), -1);
	/* what does not fit is not written */
	{
		char small[8] = "abc";
		size_t at = 3;

		cr_expect_eq(text_shell_arg("a b c d e", small, sizeof(small), &at), -1);
		cr_expect_eq(at, 3);
		cr_expect_str_eq(small, "abc");
	}
}

Test(text, chars_counts_a_character_or_a_stray_byte_as_one)
{
	cr_expect_eq(text_chars(""), 0);
	cr_expect_eq(text_chars("abc"), 3);
	cr_expect_eq(text_chars("caf\xc3\xa9"), 4, "a two-byte character is one");
	cr_expect_eq(text_chars("\xff\x80x"), 3, "each byte that starts none is one");
	cr_expect_eq(text_chars("\xe2\x82"), 2, "a sequence cut short: each byte");
}
