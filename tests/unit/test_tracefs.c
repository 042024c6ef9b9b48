// SPDX-License-Identifier: MIT
/*
 * Finding tracefs, reading tracepoint format files and building tid
 * filters: the pieces of record/tracefs.c that need no tracefs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "record/tracefs.h"

TestSuite(tracefs);

/* sched_switch's format file of a 6.x kernel */
static const char sched_switch_format[] =
	"name: sched_switch\n"
	"ID: 372\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_state=%s%s\", REC->prev_comm\n";

Test(tracefs, format_file_gives_prev_state_offset_and_size)
{
	unsigned int off = 0, size = 0;
	int sg = -1;

	cr_assert_eq(
		tracepoint_field(sched_switch_format, "prev_state", &off, &size, &sg), 0);
	cr_expect_eq(off, 32);
	cr_expect_eq(size, 8);
	cr_expect_eq(sg, 1);
	/* an array field, and a name that is a prefix of another */
	cr_assert_eq(
		tracepoint_field(sched_switch_format, "prev_comm", &off, &size, NULL), 0);
	cr_expect_eq(off, 8);
	cr_expect_eq(size, 16);
	cr_assert_eq(tracepoint_field(sched_switch_format, "next_pid", &off, &size, NULL),
		     0);
	cr_expect_eq(off, 56);
	cr_expect_eq(tracepoint_field(sched_switch_format, "prev", &off, &size, NULL),
		     -ENOENT);
	cr_expect_eq(tracepoint_field(sched_switch_format, "state", &off, &size, NULL),
		     -ENOENT);
}

Test(tracefs, offset_is_zero_for_a_missing_field_or_another_size)
{
	cr_expect_eq(tracepoint_offset(sched_switch_format, "next_pid", 4), 56);
	cr_expect_eq(tracepoint_offset(sched_switch_format, "next_pid", 8), 0);
	cr_expect_eq(tracepoint_offset(sched_switch_format, "no_such", 4), 0);
}

Test(tracefs, format_file_of_an_older_kernel_with_an_int_state)
{
	static const char old[] =
		"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
		"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
		"\tfield:int prev_state;\toffset:40;\tsize:4;\tsigned:1;\n";
	unsigned int off = 0, size = 0;

	cr_assert_eq(tracepoint_field(old, "prev_state", &off, &size, NULL), 0);
	cr_expect_eq(off, 40);
	cr_expect_eq(size, 4);
	cr_expect_eq(tracepoint_field("\tfield:long prev_state\n", "prev_state", &off,
				      &size, NULL),
		     -EINVAL);
}

Test(tracefs, tracefs_found_as_tracefs_or_under_debugfs)
{
	char p[128];

	cr_assert_eq(tracefs_find_in("proc /proc proc rw 0 0\n"
				     "none /sys/kernel/tracing tracefs rw,relatime 0 0\n",
				     p, sizeof(p)),
		     0);
	cr_expect_str_eq(p, "/sys/kernel/tracing");
	cr_assert_eq(tracefs_find_in("debugfs /sys/kernel/debug debugfs rw 0 0\n", p,
				     sizeof(p)),
		     0);
	cr_expect_str_eq(p, "/sys/kernel/debug/tracing");
	/* tracefs wins over debugfs whatever the order */
	cr_assert_eq(tracefs_find_in("debugfs /d debugfs rw 0 0\nnodev /t tracefs rw 0 0",
				     p, sizeof(p)),
		     0);
	cr_expect_str_eq(p, "/t");
	cr_expect_eq(tracefs_find_in("proc /proc proc rw 0 0\n", p, sizeof(p)), -ENOENT);
	cr_expect_eq(tracefs_find_in("", p, sizeof(p)), -ENOENT);
}

Test(tracefs, tid_filter_is_ranges_with_an_open_end)
{
	uint32_t tids[] = {105, 100, 101, 102, 200, 300, 301};
	char buf[4096];

	cr_assert_eq(tracepoint_tid_filter("pid", tids, 7, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "(pid>=100&&pid<=102)||pid==105||pid==200||pid>=300");
	cr_assert_eq(tracepoint_tid_filter("next_pid", tids, 1, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "next_pid>=100");
}

Test(tracefs, tid_filter_merges_the_closest_ranges_until_it_fits)
{
	uint32_t tids[400];
	char buf[256];

	/* 400 scattered tids cannot be listed in 256 bytes */
	for (int i = 0; i < 400; i++)
		tids[i] = 1000 + 10 * (uint32_t)i + (i % 7 == 0 ? 3000 : 0);
	cr_assert_eq(tracepoint_tid_filter("pid", tids, 400, buf, sizeof(buf)), 0);
	cr_expect_lt(strlen(buf), sizeof(buf));
	/* every tid still passes: check by evaluating the ranges */
	for (int i = 0; i < 400; i++) {
		const char *p = buf;
		int ok = 0;

		while (*p && !ok) {
			unsigned a, b;

			if (sscanf(p, "(pid>=%u&&pid<=%u)", &a, &b) == 2)
				ok = tids[i] >= a && tids[i] <= b;
			else if (sscanf(p, "pid==%u", &a) == 1)
				ok = tids[i] == a;
			else if (sscanf(p, "pid>=%u", &a) == 1)
				ok = tids[i] >= a;
			p = strstr(p, "||");
			p = p ? p + 2 : "";
		}
		cr_expect(ok, "tid %u left out by %s", tids[i], buf);
	}
	cr_expect_eq(tracepoint_tid_filter("pid", tids, 400, buf, 8), -E2BIG);
}
