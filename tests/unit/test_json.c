/* SPDX-License-Identifier: MIT */
/*
 * test_json.c - the JSON writer (lib/json.h): commas and nesting, strings
 * by lib/text.h's one rule (well-formed UTF-8 as it is, everything a
 * strict parser refuses as \ufffd, controls escaped), numbers, line
 * breaks, and errors that stick.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "lib/json.h"
#include "tests/unit/str_cases.h"

TestSuite(json);

/* A writer on a memory stream; done() closes it and returns the text. */
static struct lib_json w;
static FILE *out;
static char *buf;
static size_t len;

static void start(void)
{
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &len);
	cr_assert(out);
	lib_json_init(&w, out);
}

static const char *done(void)
{
	fclose(out);
	return buf;
}

/* lib_json_finish() says @rc; then done(). */
static const char *finish(int rc)
{
	int got = lib_json_finish(&w);

	done();
	cr_assert_eq(got, rc, "lib_json_finish() is %d, not %d, after \"%s\"", got, rc,
		     buf);
	return buf;
}

/* lib_json_str(@s) as a document's only value, without its line break. */
static const char *js(const char *s)
{
	start();
	lib_json_str(&w, s);
	finish(0);
	cr_assert(len && buf[len - 1] == '\n');
	buf[len - 1] = '\0';
	return buf;
}

Test(json, commas_and_nesting)
{
	start();
	lib_json_object_begin(&w);
	lib_json_uint_field(&w, "a", 1);
	lib_json_name(&w, "b");
	lib_json_array_begin(&w);
	lib_json_array_end(&w);
	lib_json_name(&w, "c");
	lib_json_array_begin(&w);
	lib_json_object_begin(&w);
	lib_json_object_end(&w);
	lib_json_array_begin(&w);
	lib_json_int(&w, -2);
	lib_json_null(&w);
	lib_json_array_end(&w);
	lib_json_bool(&w, 1);
	lib_json_array_end(&w);
	lib_json_bool_field(&w, "d", 0);
	lib_json_str_field(&w, "e", NULL);
	lib_json_object_end(&w);
	cr_assert_str_eq(finish(0),
			 "{\"a\":1,\"b\":[],\"c\":[{},[-2,null],true],\"d\":false,"
			 "\"e\":null}\n");
}

Test(json, line_breaks_after_the_comma_or_right_here)
{
	start();
	lib_json_object_begin(&w);
	lib_json_str_field(&w, "x", "y");
	lib_json_break(&w);
	lib_json_name(&w, "ev");
	lib_json_array_begin(&w);
	for (int i = 0; i < 3; i++) {
		lib_json_break(&w);
		lib_json_uint(&w, (uint64_t)i);
	}
	lib_json_array_end(&w);
	lib_json_name(&w, "o");
	lib_json_object_begin(&w);
	lib_json_object_end(&w);
	lib_json_newline(&w);
	lib_json_uint_field(&w, "z", 9);
	lib_json_object_end(&w);
	cr_assert_str_eq(finish(0),
			 "{\"x\":\"y\",\n\"ev\":[\n0,\n1,\n2],\"o\":{}\n,\"z\":9}\n");
}

Test(json, numbers)
{
	start();
	lib_json_array_begin(&w);
	lib_json_uint(&w, UINT64_MAX);
	lib_json_int(&w, INT64_MIN);
	lib_json_int(&w, 0);
	lib_json_double(&w, "%.0f", 2.5e9);
	lib_json_double(&w, "%.3f", 1.0 / 3);
	lib_json_double(&w, "%.0f", NAN);
	lib_json_double(&w, "%.0f", -INFINITY);
	lib_json_printf(&w, "%d.%03d", 12, 5);
	lib_json_array_end(&w);
	cr_assert_str_eq(finish(0),
			 "[18446744073709551615,-9223372036854775808,0,2500000000,"
			 "0.333,null,null,12.005]\n");
}

Test(json, member_names_are_escaped_like_strings)
{
	start();
	lib_json_object_begin(&w);
	lib_json_uint_field(&w, "a\"b\x1b", 1);
	lib_json_object_end(&w);
	cr_assert_str_eq(finish(0), "{\"a\\\"b\\u001b\":1}\n");
}

Test(json, null_and_plain_strings)
{
	static const struct str_case cases[] = {
		{NULL, "null"},
		{"", "\"\""},
		{"a \"q\" \\ /", "\"a \\\"q\\\" \\\\ /\""},
	};

	EXPECT_EACH(js, cases);
}

Test(json, escapes_c0_del_and_c1_controls)
{
	static const struct str_case cases[] = {
		{"\x1b[2J\x07\n\t", "\"\\u001b[2J\\u0007\\u000a\\u0009\""},
		{"del\x7f", "\"del\\u007f\""},
		/* U+009B (CSI) and U+0085 (NEL) as UTF-8: escaped, not raw */
		{"\xc2\x9b"
		 "31m\xc2\x85",
		 "\"\\u009b31m\\u0085\""},
	};

	EXPECT_EACH(js, cases);
}

Test(json, escapes_line_separators_and_bidi_controls)
{
	static const struct str_case cases[] = {
		/* U+2028, U+2029 end a line in JavaScript; U+202E reorders one */
		{"a\xe2\x80\xa8"
		 "b\xe2\x80\xa9"
		 "c\xe2\x80\xae",
		 "\"a\\u2028b\\u2029c\\u202e\""},
		/* U+061C, U+200E, U+200F, U+2066..U+2069 */
		{"\xd8\x9c\xe2\x80\x8e\xe2\x80\x8f\xe2\x81\xa6\xe2\x81\xa9",
		 "\"\\u061c\\u200e\\u200f\\u2066\\u2069\""},
	};

	EXPECT_EACH(js, cases);
}

Test(json, raw_c1_and_invalid_bytes_become_replacement_characters)
{
	static const struct str_case cases[] = {
		{"x\x9by", "\"x\\ufffdy\""},
		{"\xff\xfe", "\"\\ufffd\\ufffd\""},
		{"cut\xe2\x82", "\"cut\\ufffd\\ufffd\""},
		{"\xc3"
		 "A",
		 "\"\\ufffdA\""},
	};

	EXPECT_EACH(js, cases);
}

/* @s, ill-formed UTF-8 throughout, is one \ufffd a byte. */
static void refused(const char *s)
{
	char want[64] = "\"";

	for (size_t i = 0; s[i]; i++)
		strcat(want, "\\ufffd");
	strcat(want, "\"");
	cr_assert_str_eq(js(s), want, "%s", want);
}

Test(json, overlong_forms_are_not_copied)
{
	refused("\xc0\x80");
	refused("\xc1\xbf");
	refused("\xe0\x80\xaf");
	refused("\xe0\x9f\xbf");
	refused("\xf0\x80\x80\x80");
	refused("\xf0\x8f\xbf\xbf");
}

Test(json, encoded_surrogates_are_not_copied)
{
	refused("\xed\xa0\x80");
	refused("\xed\xbf\xbf");
	/* a surrogate pair encoded as two 3-byte sequences (CESU-8) */
	refused("\xed\xa0\xbd\xed\xb8\x80");
	/* the last code point before them is fine */
	cr_assert_str_eq(js("\xed\x9f\xbf"), "\"\xed\x9f\xbf\"");
}

Test(json, code_points_above_10ffff_are_not_copied)
{
	refused("\xf4\x90\x80\x80");
	refused("\xf5\x80\x80\x80");
	cr_assert_str_eq(js("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");
}

Test(json, valid_multibyte_text_stays)
{
	const char *s =
		"caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\xa6\x80 \xc2\xa0\xef\xbf\xbd";
	char want[128];

	snprintf(want, sizeof(want), "\"%s\"", s);
	cr_assert_str_eq(js(s), want);
}

Test(json, a_value_where_a_name_is_due_sticks_and_stops_output)
{
	start();
	lib_json_object_begin(&w);
	lib_json_uint(&w, 1);
	cr_assert_eq(lib_json_error(&w), -EINVAL);
	lib_json_uint_field(&w, "a", 2);
	lib_json_object_end(&w);
	cr_assert_str_eq(finish(-EINVAL), "{");
}

Test(json, misuses_are_einval)
{
	/* a name in an array */
	start();
	lib_json_array_begin(&w);
	lib_json_name(&w, "a");
	finish(-EINVAL);
	/* a close of what is not open */
	start();
	lib_json_array_begin(&w);
	lib_json_object_end(&w);
	finish(-EINVAL);
	/* a name without its value */
	start();
	lib_json_object_begin(&w);
	lib_json_name(&w, "a");
	lib_json_object_end(&w);
	finish(-EINVAL);
	/* two top-level values */
	start();
	lib_json_uint(&w, 1);
	lib_json_uint(&w, 2);
	finish(-EINVAL);
}

Test(json, an_unfinished_or_empty_document_is_einval)
{
	start();
	finish(-EINVAL);
	start();
	lib_json_object_begin(&w);
	lib_json_name(&w, "a");
	lib_json_array_begin(&w);
	lib_json_array_end(&w);
	cr_assert_eq(lib_json_error(&w), 0);
	cr_assert_str_eq(finish(-EINVAL), "{\"a\":[]");
}

Test(json, nesting_past_the_limit_is_einval)
{
	start();
	for (int i = 0; i < LIB_JSON_DEPTH; i++)
		lib_json_array_begin(&w);
	cr_assert_eq(lib_json_error(&w), 0);
	lib_json_array_begin(&w);
	cr_assert_eq(lib_json_error(&w), -EINVAL);
	done();
}

Test(json, a_stream_error_is_eio)
{
	FILE *f = fopen("/dev/full", "w");

	cr_assert(f);
	setvbuf(f, NULL, _IONBF, 0);
	lib_json_init(&w, f);
	lib_json_object_begin(&w);
	lib_json_object_end(&w);
	cr_assert_eq(lib_json_finish(&w), -EIO);
	fclose(f);
}
