/* SPDX-License-Identifier: MIT */
/*
 * test_json_str.c - analysis_json_str(), the one writer of every JSON string the
 * views and exports write: well-formed UTF-8 as it is, everything a strict
 * parser refuses as \ufffd, and controls escaped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"

TestSuite(analysis_json_str);

/* analysis_json_str(@s) as a string (freed at the next call). */
static const char *js(const char *s)
{
	static char *buf;
	size_t len = 0;
	FILE *out;

	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &len);
	cr_assert(out);
	analysis_json_str(out, s);
	fclose(out);
	return buf;
}

Test(analysis_json_str, null_and_plain_strings)
{
	cr_assert_str_eq(js(NULL), "null");
	cr_assert_str_eq(js(""), "\"\"");
	cr_assert_str_eq(js("a \"q\" \\ /"), "\"a \\\"q\\\" \\\\ /\"");
}

Test(analysis_json_str, escapes_c0_del_and_c1_controls)
{
	cr_assert_str_eq(js("\x1b[2J\x07\n\t"), "\"\\u001b[2J\\u0007\\u000a\\u0009\"");
	cr_assert_str_eq(js("del\x7f"), "\"del\\u007f\"");
	/* U+009B (CSI) and U+0085 (NEL) as UTF-8: escaped, not raw */
	cr_assert_str_eq(js("\xc2\x9b"
			    "31m\xc2\x85"),
			 "\"\\u009b31m\\u0085\"");
	/* U+2028, U+2029 end a line in JavaScript; U+202E reorders one */
	cr_assert_str_eq(js("a\xe2\x80\xa8"
			    "b\xe2\x80\xa9"
			    "c\xe2\x80\xae"),
			 "\"a\\u2028b\\u2029c\\u202e\"");
}

Test(analysis_json_str, raw_c1_and_invalid_bytes_become_replacement_characters)
{
	cr_assert_str_eq(js("x\x9by"), "\"x\\ufffdy\"");
	cr_assert_str_eq(js("\xff\xfe"), "\"\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("cut\xe2\x82"), "\"cut\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xc3"
			    "A"),
			 "\"\\ufffdA\"");
}

Test(analysis_json_str, overlong_forms_are_not_copied)
{
	cr_assert_str_eq(js("\xc0\x80"), "\"\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xc1\xbf"), "\"\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xe0\x80\xaf"), "\"\\ufffd\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xe0\x9f\xbf"), "\"\\ufffd\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xf0\x80\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xf0\x8f\xbf\xbf"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
}

Test(analysis_json_str, encoded_surrogates_are_not_copied)
{
	cr_assert_str_eq(js("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xed\xbf\xbf"), "\"\\ufffd\\ufffd\\ufffd\"");
	/* a surrogate pair encoded as two 3-byte sequences (CESU-8) */
	cr_assert_str_eq(js("\xed\xa0\xbd\xed\xb8\x80"),
			 "\"\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* the last code point before them is fine */
	cr_assert_str_eq(js("\xed\x9f\xbf"), "\"\xed\x9f\xbf\"");
}

Test(analysis_json_str, code_points_above_10ffff_are_not_copied)
{
	cr_assert_str_eq(js("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xf5\x80\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	cr_assert_str_eq(js("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");
}

Test(analysis_json_str, valid_multibyte_text_stays)
{
	const char *s =
	    "caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\xa6\x80 \xc2\xa0\xef\xbf\xbd";
	char want[128];

	snprintf(want, sizeof(want), "\"%s\"", s);
	cr_assert_str_eq(js(s), want);
}
