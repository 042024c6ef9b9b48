/* SPDX-License-Identifier: MIT */
/*
 * test_offcpu.c - off-CPU intervals joined to polls and parked time, the
 * off-CPU flamegraph, one poll's flamegraph, the poll table, and the CPU
 * flamegraph's --min-poll filter.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/offcpu.h"
#include "analysis/views.h"
#include "tests/unit/view_fixture.h"

TestSuite(offcpu, .init = setup, .fini = teardown);

static void do_join(void)
{
	cr_assert_eq(join__new(&T, JOIN_POLL_LIST, &J), 0);
	cr_assert_eq(offcpu__new(J, 0, &OC), 0);
}

/* Weight of the folded line for @path ("root;...;leaf"), -1 if absent. */
static long long folded(const char *path)
{
	const char *o = output(), *p = o;
	size_t n = strlen(path);

	while ((p = strstr(p, path))) {
		if ((p == o || p[-1] == '\n') && p[n] == ' ')
			return strtoll(p + n + 1, NULL, 10);
		p += n;
	}
	return -1;
}

#define MS 1000000ULL
#define US 1000ULL

/* Stacks of the scenario, leaf first as the trace stores them. */
static uint32_t S_BLOCK, S_PREEMPT, S_CPU, S_PARK, S_NOPOLL;

/* main -> run -> demo_blocking_read -> clock_nanosleep -> kernel; etc. */
static void frames(void)
{
	uint32_t sched = sy_frame(&T, 0xffffffff81000100, "schedule", "[kernel]", 0, 1);
	uint32_t dns = sy_frame(&T, 0xffffffff81000200, "do_nanosleep", "[kernel]", 0, 1);
	uint32_t futex = sy_frame(&T, 0xffffffff81000300, "futex_wait", "[kernel]", 0, 1);
	uint32_t cns = sy_frame(&T, 0x7f0000001000, "clock_nanosleep", "libc.so.6", 0, 0);
	uint32_t cw =
		sy_frame(&T, 0x7f0000002000, "pthread_cond_wait", "libc.so.6", 0, 0);
	uint32_t rd = sy_frame(&T, 0x401000, "demo_blocking_read", "demo", 0, 0);
	uint32_t work = sy_frame(&T, 0x402000, "work", "demo", 0, 0);
	uint32_t park = sy_frame(&T, 0x403000, "park_worker", "demo", 0, 0);
	uint32_t run = sy_frame(&T, 0x404000, "run", "demo", 0, 0);
	uint32_t mn = sy_frame(&T, 0x405000, "main", "demo", 0, 0);
	uint32_t rdv = sy_frame(&T, 0x406000, "read_config", "demo", 0, 0);

	S_BLOCK = sy_stack(&T, 6, sched, dns, cns, rd, run, mn);
	S_PREEMPT = sy_stack(&T, 4, sched, work, run, mn);
	S_CPU = sy_stack(&T, 3, work, run, mn);
	S_PARK = sy_stack(&T, 5, sched, futex, cw, park, mn);
	S_NOPOLL = sy_stack(&T, 4, sched, futex, rdv, mn);
}

#define P_BLOCK                                                                          \
	"task 1 blocker;main;run;demo_blocking_read;clock_nanosleep;"                    \
	"do_nanosleep_[k];schedule_[k]"

/*
 * Thread 10 over 10 ms:
 *   1-5 ms    task 1 "blocker" polls; blocks 1.5-4.5 ms in nanosleep;
 *             one CPU sample
 *   6-6.5 ms  task 2 "cruncher" polls; 3 CPU samples; preempted 50 us
 *   7-9.1 ms  parked; off-CPU 7.1-9 ms in the condvar
 *   9.5 ms    off-CPU 100 us outside any poll, not parked
 */
static void scenario(void)
{
	frames();
	sy_task(&T, 1, "blocker");
	sy_task(&T, 2, "cruncher");
	sy_meta(&T, "frequency", "1000");
	sy_poll(&T, 10, 1, 1 * MS, 5 * MS);
	sy_poll(&T, 10, 2, 6 * MS, 6 * MS + 500 * US);
	sy_event(&T, 7 * MS, 10, TRACE_EV_PARK, 0);
	sy_event(&T, 9 * MS + 100 * US, 10, TRACE_EV_UNPARK, 0);
	sy_sample(&T, 1 * MS + 100 * US, 10, S_CPU, 1);
	sy_sample(&T, 6 * MS + 100 * US, 10, S_CPU, 1);
	sy_sample(&T, 6 * MS + 200 * US, 10, S_CPU, 2);
	sy_switch(&T, 1 * MS + 500 * US, 4 * MS + 500 * US, 10, S_BLOCK, 0);
	sy_switch(&T, 6 * MS + 100 * US, 6 * MS + 150 * US, 10, S_PREEMPT, 1);
	sy_switch(&T, 7 * MS + 100 * US, 9 * MS, 10, S_PARK, 0);
	sy_switch(&T, 9 * MS + 500 * US, 9 * MS + 600 * US, 10, S_NOPOLL, 0);
	T.counters.end_time = 10 * MS;
	do_join();
}

static void offcpu_folded(struct offcpu_opts o, struct offcpu_result *res, int want)
{
	o.format = FLAME_FOLDED;
	o.result = res;
	cr_assert_eq(analysis__offcpu(OC, &o, out), want);
}

/* ---- the join ----------------------------------------------------------- */

Test(offcpu, intervals_go_to_their_poll_to_parked_time_or_to_no_poll)
{
	scenario();
	cr_assert_eq(OC->sw[0].where, OFFCPU_IN_POLL);
	cr_assert_eq(J->polls[OC->sw[0].poll].task, 1);
	cr_assert_eq(OC->sw[0].ns, 3 * MS);
	cr_assert_eq(OC->sw[1].where, OFFCPU_IN_POLL);
	cr_assert_eq(J->polls[OC->sw[1].poll].task, 2);
	cr_assert_eq(OC->sw[2].where, OFFCPU_IDLE);
	cr_assert_eq(OC->sw[2].poll, -1);
	cr_assert_eq(OC->sw[3].where, OFFCPU_NO_POLL);
	cr_assert_eq(offcpu__poll(OC, 0)->ns, 3 * MS);
	cr_assert_eq(offcpu__poll(OC, 0)->switches, 1);
	cr_assert_eq(offcpu__poll(OC, 1)->ns, 50 * US);
	cr_assert_eq(offcpu__poll(OC, 1)->preempted_ns, 50 * US);
	cr_assert_eq(OC->ns[OFFCPU_IDLE], 1900 * US);
	cr_assert_eq(OC->ns[OFFCPU_NO_POLL], 100 * US);
	cr_assert_eq(OC->parks, 1);
}

Test(offcpu, time_off_cpu_is_clipped_to_a_poll_whose_end_was_lost)
{
	frames();
	/* task 1's END was lost: task 2's BEGIN at 3 ms ends it there */
	sy_event(&T, 1 * MS, 10, TRACE_EV_POLL_BEGIN, 1);
	sy_poll(&T, 10, 2, 3 * MS, 4 * MS);
	sy_switch(&T, 2 * MS, 3 * MS + 400 * US, 10, S_BLOCK, 0);
	do_join();
	cr_assert(J->polls[0].open_end);
	cr_assert_eq(OC->sw[0].len, 1400 * US, "--min-block sees the whole interval");
	cr_assert_eq(OC->sw[0].ns, 1 * MS, "the weight stops at the poll's end");
	cr_assert_eq(offcpu__poll(OC, 0)->ns, 1 * MS);
	cr_assert_eq(offcpu__poll(OC, 1)->ns, 0, "nothing spills into the next poll");
}

Test(offcpu, still_off_cpu_at_the_end_counts_to_the_recording_end)
{
	frames();
	sy_event(&T, 1 * MS, 10, TRACE_EV_POLL_BEGIN, 1); /* open at the end */
	sy_switch(&T, 2 * MS, 0, 10, S_BLOCK, 0);
	sy_switch(&T, 2 * MS, 0, 11, S_NOPOLL, 0);
	T.counters.end_time = 7 * MS;
	do_join();
	cr_assert_eq(OC->end_time, 7 * MS);
	cr_assert_eq(OC->sw[0].len, 5 * MS);
	/* still switched out when the complete recording ended: off-CPU in
	 * its open poll until the end (a poll blocked at the end is the one
	 * worth seeing) */
	cr_assert_eq(OC->sw[0].where, OFFCPU_IN_POLL);
	cr_assert_eq(OC->sw[0].ns, 5 * MS);
	cr_assert_eq(OC->sw[1].where, OFFCPU_NO_POLL);
	cr_assert_eq(OC->sw[1].ns, 5 * MS);
}

Test(offcpu, unpark_first_on_a_thread_means_parked_since_the_start)
{
	frames();
	sy_sample(&T, 0, 10, S_CPU, 1); /* the recording starts at 0 */
	sy_switch(&T, 1 * MS, 2 * MS, 10, S_PARK, 0);
	sy_event(&T, 3 * MS, 10, TRACE_EV_UNPARK, 0);
	sy_switch(&T, 4 * MS, 5 * MS, 10, S_NOPOLL, 0);
	/* parked at the end: lasts to the recording end */
	sy_event(&T, 6 * MS, 10, TRACE_EV_PARK, 0);
	sy_switch(&T, 7 * MS, 0, 10, S_PARK, 0);
	sy_event(&T, 8 * MS, 11, TRACE_EV_PARK, 0);
	T.counters.end_time = 9 * MS;
	do_join();
	cr_assert_eq(OC->sw[0].where, OFFCPU_IDLE);
	cr_assert_eq(OC->sw[1].where, OFFCPU_NO_POLL);
	cr_assert_eq(OC->sw[2].where, OFFCPU_IDLE);
	cr_assert_eq(OC->sw[2].ns, 2 * MS);
	cr_assert_eq(OC->parks, 3);
}

Test(offcpu, parks_are_known_from_the_shims_attach_and_not_across_a_gap)
{
	frames();
	T.counters.start_time = 1;
	T.counters.end_time = 10 * MS;
	/* command mode: the shim attached at 2 ms; the recorder stalled and
	 * the shim recorded nothing from 5 to 7 ms */
	sy_meta(&T, "shim_attached", "2000000");
	sy_meta(&T, "shim_gap", "5000000-7000000");
	/* thread 10: an UNPARK first (parked since the attach, not since 0);
	 * parked at 4 ms, its UNPARK lost in the gap, the next one at 8 ms */
	sy_switch(&T, 1 * MS, 1 * MS + 500 * US, 10, S_PARK, 0);
	sy_switch(&T, 2 * MS + 500 * US, 2 * MS + 600 * US, 10, S_PARK, 0);
	sy_event(&T, 3 * MS, 10, TRACE_EV_UNPARK, 0);
	sy_event(&T, 4 * MS, 10, TRACE_EV_PARK, 0);
	sy_switch(&T, 6 * MS, 6 * MS + 100 * US, 10, S_PARK, 0);
	sy_switch(&T, 7 * MS + 500 * US, 7 * MS + 600 * US, 10, S_PARK, 0);
	sy_event(&T, 8 * MS, 10, TRACE_EV_UNPARK, 0);
	/* thread 11: parked at 4.5 ms, no event after the gap */
	sy_event(&T, 4 * MS + 500 * US, 11, TRACE_EV_PARK, 0);
	sy_switch(&T, 6 * MS, 6 * MS + 100 * US, 11, S_PARK, 0);
	do_join();
	cr_assert_eq(OC->parks, 4);
	cr_assert_eq(OC->sw[0].where, OFFCPU_NO_POLL, "before the attach");
	cr_assert_eq(OC->sw[1].where, OFFCPU_IDLE);
	cr_assert_eq(OC->sw[2].where, OFFCPU_NO_POLL, "in the gap");
	cr_assert_eq(OC->sw[3].where, OFFCPU_IDLE, "from the gap's end");
	cr_assert_eq(OC->sw[4].where, OFFCPU_NO_POLL, "in the gap, never unparked");
	cr_assert_eq(offcpu__parked_ns(OC, 10, 0, 10 * MS), 3 * MS);
	cr_assert_eq(offcpu__parked_ns(OC, 11, 0, 10 * MS), 500 * US);
}

Test(offcpu, off_cpu_time_in_a_poll_stops_where_a_gap_began)
{
	frames();
	T.counters.start_time = 1;
	T.counters.end_time = 10 * MS;
	sy_meta(&T, "shim_gap", "5000000-7000000");
	/* blocked at 4 ms in task 1's poll, back at 8 ms: which poll it was
	 * in after 5 ms is not known (its END may be in the gap) */
	sy_event(&T, 3 * MS, 10, TRACE_EV_POLL_BEGIN, 1);
	sy_switch(&T, 4 * MS, 8 * MS, 10, S_BLOCK, 0);
	sy_event(&T, 9 * MS, 10, TRACE_EV_POLL_END, 2);
	do_join();
	cr_assert_eq(OC->sw[0].where, OFFCPU_IN_POLL);
	cr_assert_eq(OC->sw[0].len, 4 * MS);
	cr_assert_eq(OC->sw[0].ns, 1 * MS);
	cr_assert_eq(OC->ns[OFFCPU_NO_POLL], 0);
	cr_assert_eq(J->polls[1].start, 7 * MS, "task 2 from the gap's end");
}

Test(offcpu, a_poll_wins_over_a_park_inside_it)
{
	frames();
	sy_poll(&T, 10, 1, 1 * MS, 5 * MS);
	sy_event(&T, 2 * MS, 10, TRACE_EV_PARK, 0);
	sy_switch(&T, 2 * MS + 1, 3 * MS, 10, S_PARK, 0);
	sy_event(&T, 3 * MS + 1, 10, TRACE_EV_UNPARK, 0);
	do_join();
	cr_assert_eq(OC->sw[0].where, OFFCPU_IN_POLL);
}

Test(offcpu, trace_without_switches_joins_to_nothing_and_says_why)
{
	sy_poll(&T, 10, 1, 1 * MS, 5 * MS);
	do_join();
	cr_assert_eq(OC->ns[0] + OC->ns[1] + OC->ns[2], 0);
	cr_assert(strstr(offcpu_missing(&T), "without off-CPU"));
	sy_meta(&T, "offcpu", "off");
	cr_assert(strstr(offcpu_missing(&T), "--no-offcpu"));
	sy_meta(&T, "offcpu", "refused: perf_event_paranoid 2");
	cr_assert(strstr(offcpu_missing(&T), "refused"));
}

/* ---- the off-CPU flamegraph -------------------------------------------- */

Test(offcpu, flame_weighs_microseconds_blocked_under_task_roots)
{
	struct offcpu_result res;

	scenario();
	offcpu_folded((struct offcpu_opts){0}, &res, 0);
	cr_assert_eq(folded(P_BLOCK), 3000, "%s", output());
	cr_assert_eq(
		folded("task 2 cruncher;main;run;work;schedule_[k];[preempted];[runqueue]"),
		50, "%s", output());
	cr_assert_eq(folded("[no poll];main;read_config;futex_wait_[k];schedule_[k]"),
		     100, "%s", output());
	cr_assert_eq(res.intervals, 3);
	cr_assert_eq(res.ns, 3150 * US);
	cr_assert_eq(res.preempted_ns, 50 * US);
	cr_assert_eq(res.weight, 3150);
}

Test(offcpu, parked_time_is_left_out_unless_asked_for)
{
	scenario();
	offcpu_folded((struct offcpu_opts){0}, NULL, 0);
	cr_assert_null(strstr(output(), "[idle]"));
	cr_assert_null(strstr(output(), "park_worker"));
	offcpu_folded((struct offcpu_opts){.idle = 1}, NULL, 0);
	cr_assert_eq(folded("[idle];main;park_worker;pthread_cond_wait;futex_wait_[k];"
			    "schedule_[k]"),
		     1900, "%s", output());
}

Test(offcpu, min_poll_keeps_only_time_inside_polls_that_long)
{
	struct offcpu_result res;

	scenario();
	offcpu_folded((struct offcpu_opts){.min_poll_ns = 1 * MS, .idle = 1}, &res, 0);
	cr_assert_eq(folded(P_BLOCK), 3000);
	cr_assert_null(strstr(output(), "cruncher"), "a 500 us poll");
	cr_assert_null(strstr(output(), "[no poll]"));
	cr_assert_null(strstr(output(), "[idle]"), "min-poll asks for polls only");
	cr_assert_eq(res.intervals, 1);
	fclose(out);
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &buflen);
	offcpu_folded((struct offcpu_opts){.min_poll_ns = 4 * MS + 1}, &res, -ENODATA);
	cr_assert_eq(res.intervals, 0);
}

Test(offcpu, min_block_keeps_only_intervals_that_long)
{
	struct offcpu_result res;

	scenario();
	offcpu_folded((struct offcpu_opts){.min_block_ns = 100 * US}, &res, 0);
	cr_assert_eq(folded(P_BLOCK), 3000);
	cr_assert_null(strstr(output(), "[preempted]"), "50 us is shorter");
	cr_assert_eq(folded("[no poll];main;read_config;futex_wait_[k];schedule_[k]"),
		     100, "exactly 100 us is kept");
	cr_assert_eq(res.intervals, 2);
}

Test(offcpu, task_keeps_one_tasks_time_and_an_unknown_task_is_enoent)
{
	scenario();
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 2}), 0);
	offcpu_folded((struct offcpu_opts){0}, NULL, 0);
	cr_assert_null(strstr(output(), "blocker"));
	cr_assert_null(strstr(output(), "[no poll]"));
	cr_assert_eq(
		folded("task 2 cruncher;main;run;work;schedule_[k];[preempted];[runqueue]"),
		50);
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 99}), -ENOENT);
	offcpu_folded((struct offcpu_opts){0}, NULL, -ENOENT);
}

Test(offcpu, microseconds_are_rounded_per_stack_not_per_interval)
{
	struct offcpu_result res;

	frames();
	sy_task(&T, 1, "t");
	sy_poll(&T, 10, 1, 0, 1 * MS);
	/* three 1.4 us waits: 4.2 us, not 3 x 1 us */
	for (int i = 0; i < 3; i++)
		sy_switch(&T, 100 * US + i * 10 * US, 100 * US + i * 10 * US + 1400, 10,
			  S_BLOCK, 0);
	do_join();
	offcpu_folded((struct offcpu_opts){0}, &res, 0);
	cr_assert_eq(folded("task 1 t;main;run;demo_blocking_read;clock_nanosleep;"
			    "do_nanosleep_[k];schedule_[k]"),
		     4, "%s", output());
	cr_assert_eq(res.ns, 4200);
}

Test(offcpu, svg_says_its_unit_and_what_was_left_out)
{
	scenario();
	cr_assert_eq(
		analysis__offcpu(OC, &(struct offcpu_opts){.min_block_ns = 10 * US}, out),
		0);
	cr_assert(strstr(output(), "<svg"));
	cr_assert(strstr(output(), "microseconds off-CPU"));
	cr_assert(strstr(output(), "parked left out"));
	cr_assert(strstr(output(), "intervals &gt;= 10.0us") ||
		  strstr(output(), "intervals >= 10.0us"));
}

/* ---- one poll ----------------------------------------------------------- */

Test(offcpu, poll_flame_puts_cpu_and_off_cpu_side_by_side_in_microseconds)
{
	struct poll_flame_result res;
	struct poll_flame_opts o = {.poll = 1, .format = FLAME_FOLDED, .result = &res};

	scenario();
	/* poll 1 is task 2: 3 samples at 1000 Hz = 3000 us, 50 us preempted */
	cr_assert_eq(analysis__poll_flame(OC, &o, out), 0);
	cr_assert_eq(folded("[cpu];main;run;work"), 3000, "%s", output());
	cr_assert_eq(
		folded("[off-cpu];main;run;work;schedule_[k];[preempted];[runqueue]"), 50,
		"%s", output());
	cr_assert_eq(res.samples, 3);
	cr_assert_eq(res.cpu_us, 3000);
	cr_assert_eq(res.offcpu_us, 50);
	cr_assert_eq(res.period_guessed, 0);
	cr_assert_null(strstr(output(), "blocker"), "only this poll");
}

Test(offcpu, poll_flame_of_an_unknown_poll_is_enoent_and_writes_nothing)
{
	struct poll_flame_opts o = {.poll = 2, .format = FLAME_FOLDED};

	scenario();
	cr_assert_eq(analysis__poll_flame(OC, &o, out), -ENOENT);
	cr_assert_str_eq(output(), "");
}

Test(offcpu, poll_flame_without_a_frequency_assumes_999_hz_and_says_so)
{
	struct poll_flame_result res;
	struct poll_flame_opts o = {.poll = 0, .result = &res};

	frames();
	sy_poll(&T, 10, 1, 0, 1 * MS);
	sy_sample(&T, 10, 10, S_CPU, 1);
	do_join();
	cr_assert_eq(analysis__poll_flame(OC, &o, out), 0);
	cr_assert_eq(res.period_guessed, 1);
	cr_assert_eq(res.cpu_us, 1001);
	cr_assert(strstr(output(), "assumed"));
}

/* ---- the poll table ---------------------------------------------------- */

/* The data lines of the table (header and "#" lines skipped), each cut at
 * its first two columns: "POLL TASK-ID". */
static int rows(char ids[][16], int max)
{
	const char *p = output();
	int n = 0;

	while (*p && n < max) {
		const char *e = strchr(p, '\n');
		unsigned poll;
		unsigned long long task;

		if (sscanf(p, "%u %llu", &poll, &task) == 2)
			snprintf(ids[n++], 16, "%u/%llu", poll, task);
		p = e ? e + 1 : p + strlen(p);
	}
	return n;
}

Test(offcpu, polls_table_lists_longest_first_with_off_cpu_time_and_top_frame)
{
	char ids[8][16];
	size_t shown;

	scenario();
	sy_thread(&T, 10, "worker-0");
	cr_assert_eq(analysis__polls(OC, &(struct polls_opts){.shown = &shown}, out), 0);
	cr_assert_eq(rows(ids, 8), 2, "%s", output());
	cr_assert_str_eq(ids[0], "0/1");
	cr_assert_str_eq(ids[1], "1/2");
	cr_assert_eq(shown, 2);
	cr_assert(strstr(output(), "POLL"), "a header");
	cr_assert(strstr(output(), "10 worker-0"), "%s", output());
	cr_assert(strstr(output(), "3.000ms"), "blocker's off-CPU time: %s", output());
	cr_assert(strstr(output(), "clock_nanosleep <- demo_blocking_read (off-CPU)"),
		  "mostly blocked: the application's frame over the call into the "
		  "kernel: %s",
		  output());
	cr_assert(strstr(output(), "50.0us  work\n"), "mostly on CPU: its hot leaf: %s",
		  output());
	/* no counters.start_time: the recording starts at the first record */
	cr_assert(strstr(output(), " 0.005000 "), "start in seconds: %s", output());
}

Test(offcpu, polls_table_filters_by_duration_and_task_and_sorts_by_start)
{
	char ids[8][16];

	scenario();
	sy_poll(&T, 11, 2, 500 * US, 3 * MS); /* task 2, 2.5 ms, starts first */
	join__free(J);
	offcpu__free(OC);
	do_join();
	cr_assert_eq(analysis__polls(OC, &(struct polls_opts){.min_ns = 1 * MS}, out), 0);
	cr_assert_eq(rows(ids, 8), 2, "%s", output());
	cr_assert_str_eq(ids[0], "1/1", "4 ms");
	cr_assert_str_eq(ids[1], "0/2", "2.5 ms");
	cr_assert(strstr(output(), "# 2 of 2 polls (3 in the trace)"), "%s", output());
	fclose(out);
	free(buf);
	buf = NULL;
	out = open_memstream(&buf, &buflen);
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 2}), 0);
	cr_assert_eq(
		analysis__polls(OC, &(struct polls_opts){.sort = POLLS_BY_START}, out),
		0);
	cr_assert_eq(rows(ids, 8), 2, "%s", output());
	cr_assert_str_eq(ids[0], "0/2");
	cr_assert_str_eq(ids[1], "2/2");
	cr_assert_eq(join__select(J, &(struct task_sel){.on = 1, .id = 7}), -ENOENT);
	cr_assert_eq(analysis__polls(OC, &(struct polls_opts){0}, out), -ENOENT);
}

Test(offcpu, polls_table_limit_keeps_the_first_rows)
{
	char ids[8][16];
	size_t shown;

	scenario();
	cr_assert_eq(analysis__polls(
			     OC, &(struct polls_opts){.limit = 1, .shown = &shown}, out),
		     0);
	cr_assert_eq(rows(ids, 8), 1);
	cr_assert_str_eq(ids[0], "0/1");
	cr_assert_eq(shown, 1);
	cr_assert(strstr(output(), "# 1 of 2 polls"), "%s", output());
}

Test(offcpu, polls_table_without_off_cpu_data_shows_dashes_and_says_why)
{
	frames();
	sy_meta(&T, "offcpu", "off");
	sy_poll(&T, 10, 1, 1 * MS, 5 * MS);
	sy_sample(&T, 2 * MS, 10, S_CPU, 1);
	do_join();
	cr_assert_eq(analysis__polls(OC, &(struct polls_opts){0}, out), 0);
	cr_assert(strstr(output(), "      -  work\n"), "%s", output());
	cr_assert(strstr(output(),
			 "# OFF-CPU, RUNQ: none, it was recorded with --no-offcpu"),
		  "%s", output());
}

Test(offcpu, open_polls_show_their_duration_as_a_lower_bound)
{
	frames();
	sy_event(&T, 1 * MS, 10, TRACE_EV_POLL_BEGIN, 1);
	sy_sample(&T, 3 * MS, 10, S_CPU, 1);
	T.counters.end_time = 4 * MS;
	do_join();
	cr_assert_eq(analysis__polls(OC, &(struct polls_opts){0}, out), 0);
	cr_assert(strstr(output(), "2.000ms+"), "%s", output());
}

Test(offcpu, top_frame_is_none_without_samples_or_off_cpu_time)
{
	uint32_t fr = 77;

	frames();
	sy_poll(&T, 10, 1, 1 * MS, 5 * MS);
	do_join();
	cr_assert_eq(offcpu__poll_top(OC, 0, &fr, NULL), POLL_TOP_NONE);
	cr_assert_eq(fr, 77);
	cr_assert_eq(offcpu__poll_top(OC, 1, &fr, NULL), -EINVAL);
}

/* Task 1 polls 1-2 ms on thread 10, preempted for 800 of its 1000 us and
 * blocked for 10; @samples CPU samples in "work" (0: none). */
static void mostly_preempted_poll(uint32_t samples)
{
	frames();
	sy_poll(&T, 10, 1, 1 * MS, 2 * MS);
	if (samples)
		sy_sample(&T, 1 * MS + 10 * US, 10, S_CPU, samples);
	sy_switch(&T, 1 * MS + 100 * US, 1 * MS + 900 * US, 10, S_PREEMPT, 1);
	sy_switch(&T, 1 * MS + 950 * US, 1 * MS + 960 * US, 10, S_BLOCK, 0);
	do_join();
}

/* The poll's top frame is "work", of kind @top, and the poll table's
 * line for it ends in @line. */
static void expect_top_work(int top, const char *line)
{
	uint32_t fr;
	char lab[64];

	cr_assert_eq(offcpu__poll_top(OC, 0, &fr, NULL), top);
	cr_assert_str_eq(analysis_frame_label(&T, fr, lab, sizeof(lab)), "work");
	cr_assert_eq(analysis__polls(OC, &(struct polls_opts){0}, out), 0);
	cr_assert(strstr(output(), line), "%s", output());
}

Test(offcpu, top_frame_of_a_mostly_preempted_poll_is_its_cpu_leaf)
{
	/* preempted for 800 of its 1000 us: the kernel's doing, not the
	 * poll's; what it ran is what its samples show */
	mostly_preempted_poll(5);
	expect_top_work(POLL_TOP_CPU, "  work\n");
}

Test(offcpu, top_frame_of_a_preempted_poll_without_samples_says_preempted)
{
	mostly_preempted_poll(0);
	expect_top_work(POLL_TOP_PREEMPTED, "  work (run queue)\n");
}

/* ---- flame --min-poll ---------------------------------------------------- */

Test(offcpu, cpu_flame_min_poll_keeps_samples_of_long_polls_only)
{
	struct flame_result res;

	scenario();
	sy_sample(&T, 9 * MS + 900 * US, 10, S_CPU, 1); /* outside polls */
	join__free(J);
	offcpu__free(OC);
	do_join();
	cr_assert_eq(analysis__flame(J,
				     &(struct flame_opts){.min_poll_ns = 1 * MS,
							  .format = FLAME_FOLDED,
							  .result = &res},
				     out),
		     0);
	cr_assert_eq(folded("task 1 blocker;main;run;work"), 1, "%s", output());
	cr_assert_null(strstr(output(), "cruncher"));
	cr_assert_null(strstr(output(), "[no poll]"));
	cr_assert_eq(res.weight, 1);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* A column of polls --by's row starting @label as ns (its unit: us, ms, s) */
static double by_cell(const char *label, int col)
{
	const char *p = strstr(output(), label);
	char cell[64], unit[8];
	double v;

	cr_assert_not_null(p, "%s", output());
	p += strlen(label);
	for (int c = 0; c <= col; c++) {
		int n = 0;

		cr_assert_eq(sscanf(p, " %63s%n", cell, &n), 1);
		p += n;
	}
	unit[0] = 0;
	if (sscanf(cell, "%lf%7s", &v, unit) < 1)
		return -1;
	return v * (!strcmp(unit, "s")	  ? 1e9
		    : !strcmp(unit, "ms") ? 1e6
		    : !strcmp(unit, "us") ? 1e3
					  : 1);
}

/* Nearest rank @num/100 of @v[0..n) sorted */
static uint64_t rank(const uint64_t *v, size_t n, unsigned num)
{
	return v[(n * num + 99) / 100 - 1];
}

Test(offcpu, polls_by_percentiles_are_exact_to_1024_polls_then_within_1_percent)
{
	enum { MANY = 5000, FEW = 300 };
	static uint64_t many[MANY], few[FEW];
	uint64_t t = 1 * MS, t2 = 1 * MS;
	struct polls_by *pb;
	struct join *sj;
	char *whole;

	frames();
	sy_task(&T, 1, "many");
	sy_task(&T, 2, "few");
	/* durations spread over 1 us .. 2.5 ms, in a shuffled order */
	for (size_t i = 0; i < MANY; i++) {
		many[i] = 1 * US + (i * 7919 % MANY) * 500;
		sy_poll(&T, 10, 1, t, t + many[i]);
		t += many[i] + 2 * US;
		if (i < FEW) {
			few[i] = 3 * US + (i * 101 % FEW) * 1000;
			sy_poll(&T, 11, 2, t2, t2 + few[i]);
			t2 += few[i] + 2 * US;
		}
	}
	T.counters.end_time = (t > t2 ? t : t2) + 1 * MS;
	qsort(many, MANY, sizeof(*many), u64_cmp);
	qsort(few, FEW, sizeof(*few), u64_cmp);
	do_join();
	/* the whole list walked again */
	cr_assert_eq(analysis__polls(OC, &(struct polls_opts){.by = GROUP_TASK}, out), 0);
	/* POLLS TOTAL P50 P99 LONGEST: few's exact, many's within 1% */
	cr_assert_eq(by_cell("task 2 few", 0), FEW, "%s", output());
	cr_assert_float_eq(by_cell("task 2 few", 2), (double)rank(few, FEW, 50), 1, "%s",
			   output());
	cr_assert_float_eq(by_cell("task 2 few", 3), (double)rank(few, FEW, 99), 1, "%s",
			   output());
	cr_assert_eq(by_cell("task 1 many", 0), MANY, "%s", output());
	cr_assert_float_eq(by_cell("task 1 many", 2), (double)rank(many, MANY, 50),
			   0.01 * (double)rank(many, MANY, 50), "%s", output());
	cr_assert_float_eq(by_cell("task 1 many", 3), (double)rank(many, MANY, 99),
			   0.01 * (double)rank(many, MANY, 99), "%s", output());
	/* (shown to the us: exact is within half of one) */
	cr_assert_float_eq(by_cell("task 1 many", 4), (double)many[MANY - 1], 500, "%s",
			   output());
	whole = strdup(output());
	/* the same from a join that lists none, each poll given as it goes */
	cr_assert_eq(polls_by__new(&(struct polls_opts){.by = GROUP_TASK}, &pb), 0);
	cr_assert_eq(join__new_keep(&T, 0,
				    &(struct join_keep){.min_ns = UINT64_MAX,
							.switches = 1,
							.each = polls_by__poll,
							.ctx = pb},
				    &sj),
		     0);
	offcpu__free(OC);
	cr_assert_eq(offcpu__new(sj, 0, &OC), 0);
	memout_close();
	memout_open();
	cr_assert_eq(
		analysis__polls(
			OC, &(struct polls_opts){.by = GROUP_TASK, .polls_by = pb}, out),
		0);
	cr_assert_str_eq(output(), whole);
	offcpu__free(OC);
	OC = NULL;
	join__free(sj);
	polls_by__free(pb);
	free(whole);
}
