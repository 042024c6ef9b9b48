/* SPDX-License-Identifier: MIT */
/*
 * losses.h - what a trace says was lost, per kind, and which data each
 * loss leaves short (losses.c).
 */
#ifndef D9_ANALYSIS_LOSSES_H
#define D9_ANALYSIS_LOSSES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

/* The data a loss leaves short; a view passes the ones it shows. */
enum loss_data {
	LOSS_CPU = 1 << 0,     /* CPU samples */
	LOSS_OFFCPU = 1 << 1,  /* switches: off-CPU intervals */
	LOSS_POLLS = 1 << 2,   /* shim events: polls, tasks, wakes, spawns */
	LOSS_WAKEUPS = 1 << 3, /* kernel wakeups: blocked vs run-queue time */
	LOSS_ALL = 0xf,
};

#define LOSS_KINDS    20  /* kinds of loss a trace can record */
#define LOSS_TEXT_MAX 768 /* room for analysis_losses_text() */

struct loss {
	const char *key;      /* JSON key: "samples", "switch_records", ... */
	const char *what;     /* text after the count: "samples (perf ring
			       * full)" (static) */
	uint64_t count;	      /* > 0 */
	unsigned int affects; /* enum loss_data bits */
	const char *advice;   /* the recording that would lose less of it
			       * ("d9prof record -F 499  # fewer samples": a
			       * command, then why as a shell comment),
			       * NULL where none would */
};

/* The losses recorded in @t that leave short any of the data in @affects
 * (enum loss_data bits), in a fixed order, into @out (room for LOSS_KINDS
 * entries): perf ring overflows (PERF_RECORD_LOST), ctimer samples the
 * shim dropped, ctimer samples the recorder refused (not real, or faster
 * than the sampler can take them), forked children's samples left out, CPU samples whose
 * user stack is cut short (analysis_stack_cut(); counted by one walk of
 * the samples, kept for the next call on the same @t), switch records lost,
 * switch-outs whose switch-in was lost, off-CPU stacks whose unwind
 * stopped short, wakeups lost, shim records dropped, threads without a
 * shim ring, lease lapses, shim records dropped as garbage, open state
 * a segment's STATE could not carry (record/livestate.h), and gaps
 * between segments (trace.h). Values summed over segments. Returns
 * how many (0: nothing lost). */
size_t analysis_losses(const struct trace *t, unsigned int affects, struct loss *out);
/* Is stack @stack of @t cut short: does its outermost user frame fail to
 * be a thread's root (_start, __libc_start_main, __libc_start_call_main,
 * main, start_thread, clone, clone3, Rust's thread_start, Go's
 * runtime.goexit and the like)? A frame-pointer walk through code built
 * without them stops at the first such frame. 1 cut, 0 whole, -1 no user
 * frame (kernel only, or no such stack): not counted either way. */
int analysis_stack_cut(const struct trace *t, uint32_t stack);
/* The same as one line, "lost: 3 samples (perf ring full), 1 ...", in
 * @buf (cut to @len); "" when nothing was lost. Returns @buf. */
char *analysis_losses_text(const struct trace *t, unsigned int affects, char *buf,
			   size_t len);
/* "# lost: ...\n" on @out, nothing when nothing was lost. 0 or -EIO. */
int analysis_losses_footer(const struct trace *t, unsigned int affects, FILE *out);
/* A member "losses":{"samples":3,...} (keys of struct loss) of the
 * object open in @w (lib/json.h); nothing when nothing was lost. Returns
 * lib_json_error(@w). */
struct lib_json;
int analysis_losses_json(const struct trace *t, unsigned int affects, struct lib_json *w);

/* Append "; lost: ..." (analysis_losses_text()) to a flamegraph's
 * subtitle at @buf; nothing when nothing was lost. */
void losses_note(const struct trace *t, unsigned int affects, char *buf, size_t len);

#endif /* D9_ANALYSIS_LOSSES_H */
