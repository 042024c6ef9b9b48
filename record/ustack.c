// SPDX-License-Identifier: MIT
/*
 * ustack.c - kernel frames + CFI-unwound user frames joined to the
 * kernel's frame-pointer chain (see ustack.h).
 */
#include <string.h>
#include <linux/perf_event.h>

#include "record/perf.h"
#include "record/proc.h"
#include "record/ustack.h"
#include "symbol/symbolize.h"

#define MAX_CHAIN 512

/* ---- user registers: perf's numbering -> DWARF's --------------------- */

#if defined(__x86_64__)
/* perf_regs.h (x86): AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS
 * R8..R15; DS..GS are refused on x86-64. */
#define PERF_REG_IP 8
#define REGS_MASK   (0x1ffull | (0xffull << 16))
static const int perf_to_dwarf[24] = {
	[0] = 0,   [1] = 3,   [2] = 2,	 [3] = 1,   [4] = 4,   [5] = 5,
	[6] = 6,   [7] = 7,   [8] = -1,	 [9] = -1,  [10] = -1, [11] = -1,
	[12] = -1, [13] = -1, [14] = -1, [15] = -1, [16] = 8,  [17] = 9,
	[18] = 10, [19] = 11, [20] = 12, [21] = 13, [22] = 14, [23] = 15,
};
#elif defined(__aarch64__)
/* X0..X30, SP (31), PC (32); DWARF numbers X0..X30 and SP the same */
#define PERF_REG_IP 32
#define REGS_MASK   ((1ull << 33) - 1)
#else
#define REGS_MASK 0
#endif

void ustack_attr(struct perf_event_attr *a, unsigned int stack_bytes)
{
	if (!REGS_MASK || !stack_bytes)
		return;
	a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = REGS_MASK;
	a->sample_stack_user = stack_bytes;
}

/* @s's user registers as the unwinder wants them; 0, or -1 if it has none. */
static int user_regs(const struct perf_sample *s, struct unwind_regs *ur)
{
	unsigned int i, bit;

	if (!s->regs || s->regs_abi == PERF_SAMPLE_REGS_ABI_NONE || !REGS_MASK)
		return -1;
	memset(ur, 0, sizeof(*ur));
	for (i = 0, bit = 0; bit < 64 && i < s->nregs; bit++) {
		if (!(REGS_MASK & (1ull << bit)))
			continue;
#if defined(__x86_64__)
		if (bit == PERF_REG_IP)
			ur->pc = s->regs[i];
		else if (bit < 24 && perf_to_dwarf[bit] >= 0) {
			ur->reg[perf_to_dwarf[bit]] = s->regs[i];
			ur->valid |= 1u << perf_to_dwarf[bit];
		}
#elif defined(__aarch64__)
		if (bit == PERF_REG_IP)
			ur->pc = s->regs[i];
		else {
			ur->reg[bit] = s->regs[i];
			ur->valid |= 1u << bit;
		}
#endif
		i++;
	}
	return 0;
}

/*
 * @cfi (from the CFI unwinder, cfi[0] = the user pc) and @fp (the kernel's
 * frame-pointer walk, fp[0] = the same pc) describe one stack. CFI is right
 * as far as it got: a prefix of the true chain. The frame-pointer chain can
 * start with garbage (a leaf that uses rbp for itself) and, past a function
 * without a frame pointer, skips that function's caller, anywhere in the
 * stack; it never holds a frame the stack lacks. So after its garbage it
 * is a subsequence of the true chain: the two are aligned at the first
 * frame-pointer entry that CFI also has (its first occurrence there), then
 * matched as a subsequence, CFI advancing alone past each frame the
 * frame-pointer chain skipped. The result is the whole CFI chain, then the
 * frame-pointer chain after the last entry matched (the last shared
 * return address): a caller skipped anywhere the copy reached is kept, and
 * recursion, which repeats addresses, is matched in order. Without a
 * shared address, the CFI frames then the frame-pointer ones after the pc
 * (the CFI unwinder stopped before reaching frame-pointer code: the stack
 * copy ended). Returns the frames written to @out; *@joined tells whether
 * a shared address was found, *@recovered whether CFI has a frame the
 * frame-pointer chain skipped (before its end).
 */
unsigned int ustack_join(const uint64_t *cfi, unsigned int ncfi, int cfi_done,
			 const uint64_t *fp, unsigned int nfp, uint64_t *out,
			 unsigned int max, int *joined, int *recovered)
{
	unsigned int i = 0, j, k, n = 0;

	*joined = 0;
	*recovered = 0;
	for (k = 1; k < nfp; k++) {
		for (i = 1; i < ncfi && cfi[i] != fp[k]; i++)
			;
		if (i < ncfi) {
			*joined = 1;
			break;
		}
	}
	if (!*joined) {
		k = cfi_done ? nfp : (nfp ? 1 : 0);
		*recovered = ncfi > k;
	} else {
		/* cfi[i] == fp[k]: CFI frames before i are ones the walk
		 * lacks (beyond its garbage); then a subsequence match */
		*recovered = i > k;
		for (j = i; j < ncfi; j++) {
			if (k < nfp && cfi[j] == fp[k])
				k++;
			else if (k < nfp)
				*recovered = 1; /* a frame the walk skipped */
			/* else past the walk's end (it stops in code
			 * without frame pointers, e.g. at start_thread):
			 * frames gained, but no caller it skipped */
		}
		if (cfi_done)
			k = nfp;
	}
	for (j = 0; j < ncfi && n < max; j++)
		out[n++] = cfi[j];
	for (; k < nfp && n < max; k++)
		out[n++] = fp[k];
	return n;
}

/* Mark the return addresses of @ips (ips[0] the pc, the rest return
 * addresses) by subtracting one from ips[1..n). */
static void mark_returns(uint64_t *ips, unsigned int n)
{
	unsigned int i;

	for (i = 1; i < n; i++)
		if (ips[i])
			ips[i]--;
}

/* The frame-pointer chain alone: @fp into @out, at most @max. */
static unsigned int copy_fp(const uint64_t *fp, unsigned int nfp, uint64_t *out,
			    unsigned int max)
{
	unsigned int n = nfp < max ? nfp : max;

	memcpy(out, fp, n * sizeof(*out));
	return n;
}

/* CFI from @ur over @stack (@len bytes from the SP) joined to the
 * frame-pointer chain @fp, or @fp alone if CFI gets nowhere. */
static unsigned int join_regs(struct symbolizer *sym, const struct unwind_regs *ur,
			      const void *stack, size_t len, const uint64_t *fp,
			      unsigned int nfp, uint64_t *out, unsigned int max,
			      struct ustack_stats *st)
{
	uint64_t cfi[MAX_CHAIN];
	struct unwind_result res;
	uint64_t t0;
	int joined, recovered, err;
	unsigned int n;

	st->stacks++;
	t0 = record_now_ns();
	err = symbolizer__unwind(sym, ur, stack, len, cfi, MAX_CHAIN, &res);
	st->unwind_ns += record_now_ns() - t0;
	if (err || res.n < 2) {
		return copy_fp(fp, nfp, out, max);
	}
	if (res.stack_used > st->stack_used_max)
		st->stack_used_max = res.stack_used;
	if (res.stack_used > st->used_recent)
		st->used_recent = res.stack_used;
	n = ustack_join(cfi, res.n, res.end == UNWIND_END_OUTERMOST, fp, nfp, out, max,
			&joined, &recovered);
	if (joined || res.end == UNWIND_END_OUTERMOST)
		st->complete++;
	else if (res.end == UNWIND_END_MEMORY)
		st->cut++;
	if (recovered)
		st->recovered++;
	return n;
}

/* The user part of @s's stack into @out: CFI over the stack copy joined to
 * the frame-pointer chain @fp, or @fp alone. */
static unsigned int user_stack(struct symbolizer *sym, const struct perf_sample *s,
			       const uint64_t *fp, unsigned int nfp, uint64_t *out,
			       unsigned int max, struct ustack_stats *st)
{
	struct unwind_regs ur;

	if (!sym || user_regs(s, &ur))
		return copy_fp(fp, nfp, out, max);
	return join_regs(sym, &ur, s->stack, s->stack ? s->stack_size : 0, fp, nfp, out,
			 max, st);
}

unsigned int ustack_fp_regs(struct symbolizer *sym, uint64_t sp, uint64_t fpreg,
			    const uint64_t *stack, unsigned int nstack,
			    const uint64_t *fp, unsigned int nfp, uint64_t *out,
			    unsigned int max, struct ustack_stats *st)
{
	struct unwind_regs ur;
	unsigned int n;

	if (!sym || !nfp || !REGS_MASK) {
		n = copy_fp(fp, nfp, out, max);
		mark_returns(out, n);
		return n;
	}
	memset(&ur, 0, sizeof(ur));
	ur.pc = fp[0];
#if defined(__x86_64__)
	ur.reg[7] = sp;
	ur.reg[6] = fpreg;
	ur.valid = 1u << 7 | 1u << 6;
#elif defined(__aarch64__)
	ur.reg[31] = sp;
	ur.reg[29] = fpreg;
	ur.valid = 1u << 31 | 1u << 29;
#endif
	n = join_regs(sym, &ur, stack, (size_t)nstack * 8, fp, nfp, out, max, st);
	mark_returns(out, n);
	return n;
}

unsigned int ustack_chain(struct symbolizer *sym, const struct perf_sample *s,
			  uint64_t *out, unsigned int max, struct ustack_stats *st)
{
	uint64_t fp[MAX_CHAIN];
	unsigned int n = 0, nfp = 0, nu;
	uint64_t i, ctxmark = 0;

	/* kernel frames as they are; user frames collected apart */
	for (i = 0; i < s->nr; i++) {
		uint64_t ip = s->ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctxmark = ip;
			continue;
		}
		if (ctxmark == (uint64_t)PERF_CONTEXT_USER) {
			if (nfp < MAX_CHAIN)
				fp[nfp++] = ip;
		} else if (n < max) {
			out[n++] = ip;
		}
	}
	mark_returns(out, n);
	nu = user_stack(sym, s, fp, nfp, out + n, max - n, st);
	mark_returns(out + n, nu);
	return n + nu;
}

unsigned int ustack_split(struct symbolizer *sym, const uint64_t *kips, unsigned int nk,
			  uint64_t sp, uint64_t fpreg, const void *stack, size_t len,
			  const uint64_t *fp, unsigned int nfp, uint64_t *out,
			  unsigned int max, struct ustack_stats *st)
{
	unsigned int n = nk < max ? nk : max;

	memcpy(out, kips, n * sizeof(*out));
	mark_returns(out, n);
	return n + ustack_fp_regs(sp && len ? sym : NULL, sp, fpreg, stack,
				  (unsigned int)(len / 8), fp, nfp, out + n, max - n, st);
}
