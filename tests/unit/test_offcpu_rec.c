// SPDX-License-Identifier: MIT
/*
 * The off-CPU collector's pieces that need no perf_event: prev_state
 * decoding, and the CFI unwinder on a stack copy of this very process taken
 * inside a call from libc (qsort calling our comparator), where a
 * frame-pointer walk would skip frames.
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

Test(offcpu_rec, prev_state_tells_blocked_from_preempted)
{
	cr_expect(offcpu_state_is_preempted(0));     /* R: runnable (yield) */
	cr_expect(offcpu_state_is_preempted(0x100)); /* R+: preempted */
	cr_expect(!offcpu_state_is_preempted(0x1));  /* S */
	cr_expect(!offcpu_state_is_preempted(0x2));  /* D */
	cr_expect(!offcpu_state_is_preempted(0x80)); /* I */
	cr_expect(!offcpu_state_is_preempted(0x101));
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
