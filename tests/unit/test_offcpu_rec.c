// SPDX-License-Identifier: MIT
/*
 * The off-CPU collector's pieces that need no perf_event: tracefs and
 * tracepoint format parsing, prev_state decoding, and the CFI unwinder on a
 * stack copy of this very process taken inside a call from libc (qsort
 * calling our comparator), where a frame-pointer walk would skip frames.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/offcpu.h"
#include "symbol/symbolize.h"

TestSuite(offcpu_rec);

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

Test(offcpu_rec, format_file_gives_prev_state_offset_and_size)
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

Test(offcpu_rec, format_file_of_an_older_kernel_with_an_int_state)
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

Test(offcpu_rec, tracefs_found_as_tracefs_or_under_debugfs)
{
	char p[128];

	cr_assert_eq(tracefs_find_in("proc /proc proc rw 0 0\n"
				     "none /sys/kernel/tracing tracefs rw,relatime 0 0\n",
				     p, sizeof(p)),
		     0);
	cr_expect_str_eq(p, "/sys/kernel/tracing");
	cr_assert_eq(
	    tracefs_find_in("debugfs /sys/kernel/debug debugfs rw 0 0\n", p, sizeof(p)),
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

Test(offcpu_rec, prev_state_tells_blocked_from_preempted)
{
	cr_expect(offcpu_state_is_preempted(0));     /* R: runnable (yield) */
	cr_expect(offcpu_state_is_preempted(0x100)); /* R+: preempted */
	cr_expect(!offcpu_state_is_preempted(0x1));  /* S */
	cr_expect(!offcpu_state_is_preempted(0x2));  /* D */
	cr_expect(!offcpu_state_is_preempted(0x80)); /* I */
	cr_expect(!offcpu_state_is_preempted(0x101));
}

Test(offcpu_rec, tid_filter_is_ranges_with_an_open_end)
{
	uint32_t tids[] = {105, 100, 101, 102, 200, 300, 301};
	char buf[4096];

	cr_assert_eq(offcpu_tid_filter("pid", tids, 7, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "(pid>=100&&pid<=102)||pid==105||pid==200||pid>=300");
	cr_assert_eq(offcpu_tid_filter("next_pid", tids, 1, buf, sizeof(buf)), 0);
	cr_expect_str_eq(buf, "next_pid>=100");
}

Test(offcpu_rec, tid_filter_merges_the_closest_ranges_until_it_fits)
{
	uint32_t tids[400];
	char buf[256];

	/* 400 scattered tids cannot be listed in 256 bytes */
	for (int i = 0; i < 400; i++)
		tids[i] = 1000 + 10 * (uint32_t)i + (i % 7 == 0 ? 3000 : 0);
	cr_assert_eq(offcpu_tid_filter("pid", tids, 400, buf, sizeof(buf)), 0);
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
	cr_expect_eq(offcpu_tid_filter("pid", tids, 400, buf, 8), -E2BIG);
}

/* ---- unwinding our own stack -------------------------------------------- */

#if defined(__x86_64__)

#define COPY 16384

struct capture {
	struct unwind_regs regs;
	unsigned char stack[COPY];
	size_t len;
	int done;
};

static struct capture cap;

/* Registers as the kernel would give them at this point, and the stack
 * above the SP up to the thread's stack end. */
static __attribute__((noinline)) void capture_here(void)
{
	uint64_t pc, sp, bp, bx, r12, r13, r14, r15;
	pthread_attr_t a;
	void *lo;
	size_t size;
	uint64_t top;

	__asm__ volatile("lea 0(%%rip), %0\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2\n\t"
			 "mov %%rbx, %3\n\t"
			 "mov %%r12, %4\n\t"
			 "mov %%r13, %5\n\t"
			 "mov %%r14, %6\n\t"
			 "mov %%r15, %7\n\t"
			 : "=r"(pc), "=r"(sp), "=r"(bp), "=r"(bx), "=r"(r12), "=r"(r13),
			   "=r"(r14), "=r"(r15));
	memset(&cap.regs, 0, sizeof(cap.regs));
	cap.regs.pc = pc;
	cap.regs.reg[7] = sp;
	cap.regs.reg[6] = bp;
	cap.regs.reg[3] = bx;
	cap.regs.reg[12] = r12;
	cap.regs.reg[13] = r13;
	cap.regs.reg[14] = r14;
	cap.regs.reg[15] = r15;
	cap.regs.valid = 1u << 7 | 1u << 6 | 1u << 3 | 0xfu << 12;
	cr_assert_eq(pthread_getattr_np(pthread_self(), &a), 0);
	cr_assert_eq(pthread_attr_getstack(&a, &lo, &size), 0);
	pthread_attr_destroy(&a);
	top = (uint64_t)(uintptr_t)lo + size;
	cap.len = top - sp < COPY ? top - sp : COPY;
	memcpy(cap.stack, (const void *)(uintptr_t)sp, cap.len);
	cap.done = 1;
}

static int compare(const void *a, const void *b)
{
	if (!cap.done)
		capture_here();
	return *(const int *)a - *(const int *)b;
}

/* Calls into libc, which calls back: the frame a frame-pointer walk from
 * inside libc would lose. */
__attribute__((noinline)) void offcpu_test_calls_libc(void)
{
	int v[64];
	int i;

	for (i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	cap.done = 0;
	qsort(v, 64, sizeof(v[0]), compare);
	__asm__ volatile("" ::: "memory");
}

static int frame_is(struct symbolizer *s, uint64_t pc, int ret, const char *name)
{
	struct trace_frame f;

	/* a return address may sit just past its call: look one byte back */
	if (symbolizer__resolve(s, ret ? pc - 1 : pc, &f) || !f.sym)
		return 0;
	return !strcmp(f.sym, name);
}

Test(offcpu_rec, cfi_unwinds_through_libc_to_the_calling_function)
{
	struct symbolizer *s = NULL;
	struct unwind_result res;
	uint64_t pcs[64];
	unsigned int i, in_libc = 0, caller = 0, at = 0;

	offcpu_test_calls_libc();
	cr_assert(cap.done);
	cr_assert_eq(symbolizer__new(getpid(), &s), 0);
	cr_assert_eq(symbolizer__unwind(s, &cap.regs, cap.stack, cap.len, pcs, 64, &res),
		     0);
	cr_assert_geq(res.n, 4, "only %u frames (end %d)", res.n, (int)res.end);
	cr_expect(frame_is(s, pcs[0], 0, "capture_here"));
	cr_expect(frame_is(s, pcs[1], 1, "compare"));
	for (i = 2; i < res.n; i++) {
		struct trace_frame f;

		if (!symbolizer__resolve(s, pcs[i] - 1, &f) && f.module &&
		    strstr(f.module, "libc"))
			in_libc++;
		if (frame_is(s, pcs[i], 1, "offcpu_test_calls_libc")) {
			caller = 1;
			at = i;
		}
	}
	cr_expect_gt(in_libc, 0, "no libc frame between the callback and its caller");
	cr_expect(caller, "offcpu_test_calls_libc not among %u frames", res.n);
	cr_expect_gt(res.past_leaf_module, 0);
	cr_expect_gt(res.stack_used, 0);
	cr_expect_leq(res.stack_used, cap.len);
	/* the rest of the way to main and beyond also unwinds */
	cr_expect_gt(res.n, at + 1);
	symbolizer__free(s);
}

Test(offcpu_rec, a_short_stack_copy_stops_the_unwind_cleanly)
{
	struct symbolizer *s = NULL;
	struct unwind_result res;
	uint64_t pcs[64];

	offcpu_test_calls_libc();
	cr_assert_eq(symbolizer__new(getpid(), &s), 0);
	cr_assert_eq(symbolizer__unwind(s, &cap.regs, cap.stack, 16, pcs, 64, &res), 0);
	cr_expect_geq(res.n, 1);
	cr_expect_lt(res.n, 4);
	cr_expect_eq(res.end, UNWIND_END_MEMORY);
	cr_expect_leq(res.stack_used, 16);
	/* no stack at all: just the pc */
	cr_assert_eq(symbolizer__unwind(s, &cap.regs, NULL, 0, pcs, 64, &res), 0);
	cr_expect_geq(res.n, 1);
	cr_expect_eq(pcs[0], cap.regs.pc);
	/* max frames is honoured */
	cr_assert_eq(symbolizer__unwind(s, &cap.regs, cap.stack, cap.len, pcs, 2, &res),
		     0);
	cr_expect_eq(res.n, 2);
	cr_expect_eq(res.end, UNWIND_END_MAX);
	symbolizer__free(s);
}

Test(offcpu_rec, unwinding_stops_where_it_joins_the_frame_pointer_chain)
{
	struct symbolizer *s = NULL;
	struct unwind_result res;
	uint64_t pcs[64], part[64], stop[3];
	unsigned int j, k;

	offcpu_test_calls_libc();
	cr_assert_eq(symbolizer__new(getpid(), &s), 0);
	cr_assert_eq(symbolizer__unwind(s, &cap.regs, cap.stack, cap.len, pcs, 64, &res),
		     0);
	cr_assert_geq(res.n, 5);
	/* a chain that starts at the pc and holds a later return address
	 * (the first one from the 4th on that does not repeat an earlier
	 * one: qsort recurses) */
	for (j = 4; j < res.n; j++) {
		for (k = 1; k < j && pcs[k] != pcs[j]; k++)
			;
		if (k == j)
			break;
	}
	cr_assert_lt(j, res.n);
	stop[0] = pcs[0];
	stop[1] = 0x1234;
	stop[2] = pcs[j];
	cr_assert_eq(symbolizer__unwind_until(s, &cap.regs, cap.stack, cap.len, part, 64,
					      stop, 3, &res),
		     0);
	cr_expect_eq(res.n, j + 1);
	cr_expect_eq(res.end, UNWIND_END_JOINED);
	for (k = 0; k <= j; k++)
		cr_expect_eq(part[k], pcs[k], "frame %u: %llx, want %llx", k,
			     (unsigned long long)part[k], (unsigned long long)pcs[k]);
	/* the shared pc alone does not stop it */
	cr_assert_eq(symbolizer__unwind_until(s, &cap.regs, cap.stack, cap.len, part, 64,
					      stop, 1, &res),
		     0);
	cr_expect_neq(res.end, UNWIND_END_JOINED);
	symbolizer__free(s);
}

Test(offcpu_rec, unwinding_needs_a_pc_and_an_sp)
{
	struct symbolizer *s = NULL;
	struct unwind_regs r = {0};
	struct unwind_result res;
	uint64_t pcs[4];

	cr_assert_eq(symbolizer__new(getpid(), &s), 0);
	cr_expect_eq(symbolizer__unwind(s, &r, NULL, 0, pcs, 4, &res), -EINVAL);
	r.pc = 0x1000;
	cr_expect_eq(symbolizer__unwind(s, &r, NULL, 0, pcs, 4, &res), -EINVAL);
	/* a pc in no module: one frame, no CFI */
	r.reg[7] = 0x7000;
	r.valid = 1u << 7;
	cr_assert_eq(symbolizer__unwind(s, &r, NULL, 0, pcs, 4, &res), 0);
	cr_expect_eq(res.n, 1);
	cr_expect_eq(res.end, UNWIND_END_NO_CFI);
	symbolizer__free(s);
}

#endif /* __x86_64__ */
