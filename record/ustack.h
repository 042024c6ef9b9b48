/* SPDX-License-Identifier: MIT */
/*
 * ustack.h - one callchain out of a perf sample (internal to record/): the
 * kernel's frames, then the user frames, for the CPU sampler and the
 * off-CPU collector alike.
 *
 * The kernel walks user frame pointers. That walk is wrong in two places
 * that CFI (.eh_frame) gets right: a function that has not set up its frame
 * (a leaf gcc compiled without frame setup even with
 * -fno-omit-frame-pointer, or any function in its prologue or epilogue),
 * whose caller the walk skips, and code built without frame pointers
 * (Debian's glibc), which the walk cannot cross. With the user registers
 * and a copy of the top of the user stack in the sample, the user part is
 * unwound with CFI as far as the copy reaches and joined to the kernel's
 * frame-pointer chain at the last return address both agree on, so that a
 * caller the walk skipped anywhere the copy reaches is kept.
 *
 * Return addresses are stored minus one (inside the call instruction), so
 * that a frame whose call is the last instruction of its function (a
 * noreturn call) is named after that function, not the next one; the first
 * frame of the kernel part and of the user part is the interrupted pc,
 * stored as it is.
 */
#ifndef D9_USTACK_H
#define D9_USTACK_H

#include <stdint.h>
#include <linux/perf_event.h>

struct perf_sample;
struct symbolizer;

struct ustack_stats {
	uint64_t stacks;	 /* samples with user registers */
	uint64_t complete;	 /* ... CFI reached the frame-pointer chain or
				  * the outermost frame */
	uint64_t recovered;	 /* ... where CFI found a caller the
				  * frame-pointer chain had skipped */
	uint64_t stack_used_max; /* most bytes of a stack copy read */
	uint64_t used_recent;	 /* ... since the caller last set it to 0 */
	uint64_t cut;		 /* ... CFI ran past the end of the copy and
				  * did not reach the frame-pointer chain:
				  * a longer copy would have had more */
	uint64_t unwind_ns;	 /* time spent unwinding */
};

/* Ask @a for the user registers and @stack_bytes (a multiple of 8) of user
 * stack with each sample. No-op on an architecture the unwinder does not
 * know, or with @stack_bytes 0 (frame pointers only). */
void ustack_attr(struct perf_event_attr *a, unsigned int stack_bytes);

/* The callchain of @s into @out (at most @max addresses, leaf first):
 * kernel frames, then user frames (CFI joined to frame pointers where @s
 * has registers and a stack copy, else frame pointers alone), context
 * markers dropped and return addresses minus one. Returns the number
 * written. */
unsigned int ustack_chain(struct symbolizer *sym, const struct perf_sample *s,
			  uint64_t *out, unsigned int max, struct ustack_stats *st);

/* The same for a frame-pointer walk @fp (@nfp entries, fp[0] the pc)
 * taken in the target itself (the ctimer handler) with the interrupted SP
 * @sp and frame pointer @fpreg and @nstack words of stack from @sp: CFI
 * joined to @fp into @out, return addresses minus one. A NULL @sym (no
 * stack words to unwind over) gives @fp alone. */
unsigned int ustack_fp_regs(struct symbolizer *sym, uint64_t sp, uint64_t fpreg,
			    const uint64_t *stack, unsigned int nstack,
			    const uint64_t *fp, unsigned int nfp, uint64_t *out,
			    unsigned int max, struct ustack_stats *st);

/* A chain taken apart (the BPF scheduler programs): the kernel frames
 * @kips (@nk, [0] the pc) as they are, then the user frames of
 * ustack_fp_regs() over @len bytes of @stack from @sp (@sp 0 or @len 0:
 * the frame-pointer chain @fp alone). Returns the count written to @out. */
unsigned int ustack_split(struct symbolizer *sym, const uint64_t *kips, unsigned int nk,
			  uint64_t sp, uint64_t fpreg, const void *stack, size_t len,
			  const uint64_t *fp, unsigned int nfp, uint64_t *out,
			  unsigned int max, struct ustack_stats *st);

/* The join itself, on return-address chains (leaf first, [0] the pc):
 * the CFI chain @cfi (@cfi_done: it reached the outermost frame) and the
 * frame-pointer chain @fp of the same stack into @out (at most @max).
 * They are aligned at the first entry of @fp (after the pc) that @cfi
 * also has, then @fp is matched as a subsequence of @cfi; the result is
 * @cfi whole, then @fp after the last entry matched. Without a shared
 * address: @cfi then @fp after its pc (unless @cfi_done). *@joined: an
 * address was shared; *@recovered: @cfi has a frame @fp skipped (before
 * @fp's end). Returns the count. */
unsigned int ustack_join(const uint64_t *cfi, unsigned int ncfi, int cfi_done,
			 const uint64_t *fp, unsigned int nfp, uint64_t *out,
			 unsigned int max, int *joined, int *recovered);

#endif /* D9_USTACK_H */
