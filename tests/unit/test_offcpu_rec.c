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
#include "record/ustack.h"
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

Test(offcpu_rec, a_second_unwind_from_cached_rules_is_the_same)
{
	struct symbolizer *s = NULL;
	struct unwind_result a, b;
	uint64_t first[64], again[64];

	offcpu_test_calls_libc();
	cr_assert_eq(symbolizer__new(getpid(), &s), 0);
	cr_assert_eq(symbolizer__unwind(s, &cap.regs, cap.stack, cap.len, first, 64, &a),
		     0);
	cr_assert_eq(symbolizer__unwind(s, &cap.regs, cap.stack, cap.len, again, 64, &b),
		     0);
	cr_assert_geq(a.n, 5);
	cr_expect_eq(a.n, b.n);
	cr_expect_eq(a.end, b.end);
	cr_expect_eq(a.stack_used, b.stack_used);
	cr_expect_eq(a.past_leaf_module, b.past_leaf_module);
	for (unsigned int k = 0; k < a.n && k < b.n; k++)
		cr_expect_eq(first[k], again[k], "frame %u", k);
	symbolizer__free(s);
}

/* ustack_join on synthetic chains: @cfi and @fp joined must be @want. */
static void expect_join(const uint64_t *cfi, unsigned int ncfi, int done,
			const uint64_t *fp, unsigned int nfp, const uint64_t *want,
			unsigned int nwant, int want_recovered)
{
	uint64_t out[64];
	int joined, recovered;
	unsigned int n, i;

	n = ustack_join(cfi, ncfi, done, fp, nfp, out, 64, &joined, &recovered);
	cr_assert_eq(n, nwant, "%u frames, want %u", n, nwant);
	for (i = 0; i < n; i++)
		cr_expect_eq(out[i], want[i], "frame %u: %llx, want %llx", i,
			     (unsigned long long)out[i], (unsigned long long)want[i]);
	cr_expect_eq(recovered, want_recovered);
}

Test(offcpu_rec, the_join_keeps_the_caller_of_a_frameless_middle_function)
{
	/* main -> now (frame pointer) -> clock_gettime (none) -> vdso leaf:
	 * the frame-pointer walk goes from the vdso's frame to now's, whose
	 * return address is in main: "now" is missing. The first shared
	 * address (the return into clock_gettime) is not where to join. */
	const uint64_t cfi[] = {0x100, 0x200 /* cg */, 0x300 /* now */, 0x400 /* main */};
	const uint64_t fp[] = {0x100, 0x200, 0x400, 0x500 /* libc start */};
	const uint64_t want[] = {0x100, 0x200, 0x300, 0x400, 0x500};

	expect_join(cfi, 4, 0, fp, 4, want, 5, 1);
}

Test(offcpu_rec, the_join_keeps_a_skipped_caller_further_up)
{
	/* main -> qsort (no frame pointer) -> cmp -> leaf: the walk has
	 * qsort's address (stored by cmp's frame) but skips main */
	const uint64_t cfi[] = {0x10, 0x20 /* cmp */, 0x30 /* qsort */, 0x40 /* main */};
	const uint64_t fp[] = {0x10, 0x20, 0x30, 0x50, 0x60};
	const uint64_t want[] = {0x10, 0x20, 0x30, 0x40, 0x50, 0x60};

	expect_join(cfi, 4, 0, fp, 5, want, 6, 1);
}

Test(offcpu_rec, the_join_keeps_frames_between_repeated_addresses)
{
	/* true chain pc a0 d0 f0 d0 e0: d0 is reached both through a
	 * function without a frame pointer and through one with it; the walk
	 * skipped the first d0, CFI stopped after it */
	const uint64_t cfi[] = {0x1, 0xa0, 0xd0};
	const uint64_t fp[] = {0x1, 0xa0, 0xf0, 0xd0, 0xe0};
	const uint64_t want[] = {0x1, 0xa0, 0xd0, 0xf0, 0xd0, 0xe0};
	/* a leaf without a frame pointer: pc d0 f0 d0 e0, the walk from f0 */
	const uint64_t cfi2[] = {0x1, 0xd0, 0xf0};
	const uint64_t fp2[] = {0x1, 0xf0, 0xd0, 0xe0};
	const uint64_t want2[] = {0x1, 0xd0, 0xf0, 0xd0, 0xe0};

	expect_join(cfi, 3, 0, fp, 5, want, 6, 1);
	expect_join(cfi2, 3, 0, fp2, 4, want2, 5, 1);
}

Test(offcpu_rec, frames_past_the_walks_end_are_gained_not_a_skip)
{
	/* the walk stops at start_thread (no frame pointer there); CFI goes
	 * on to clone3: more frames, but no caller the walk skipped */
	const uint64_t cfi[] = {0x1, 0x2, 0x3, 0x4};
	const uint64_t fp[] = {0x1, 0x2, 0x3};

	expect_join(cfi, 4, 1, fp, 3, cfi, 4, 0);
	expect_join(cfi, 4, 0, fp, 3, cfi, 4, 0);
}

Test(offcpu_rec, the_join_counts_recursion_once)
{
	/* a recursion: the same return address many times; CFI saw three
	 * of them, the walk all six */
	const uint64_t cfi[] = {0x1, 0x9, 0x9, 0x9};
	const uint64_t fp[] = {0x1, 0x9, 0x9, 0x9, 0x9, 0x9, 0x9, 0x7, 0x8};
	const uint64_t want[] = {0x1, 0x9, 0x9, 0x9, 0x9, 0x9, 0x9, 0x7, 0x8};

	expect_join(cfi, 4, 0, fp, 9, want, 9, 0);
}

Test(offcpu_rec, the_join_skips_a_garbage_start_of_the_frame_pointer_walk)
{
	/* the leaf used rbp for itself: the walk's second entry is garbage */
	const uint64_t cfi[] = {0x1, 0x2, 0x3};
	const uint64_t fp[] = {0x1, 0xdead, 0x2, 0x3, 0x4};
	const uint64_t want[] = {0x1, 0x2, 0x3, 0x4};

	expect_join(cfi, 3, 0, fp, 5, want, 4, 0);
	/* CFI that reached the outermost frame is the whole chain */
	expect_join(cfi, 3, 1, fp, 5, cfi, 3, 0);
	/* nothing shared: CFI, then the walk after its pc */
	{
		const uint64_t other[] = {0x1, 0x7, 0x8};
		const uint64_t w2[] = {0x1, 0x2, 0x3, 0x7, 0x8};

		expect_join(cfi, 3, 0, other, 3, w2, 5, 1);
	}
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
