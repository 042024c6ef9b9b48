/* SPDX-License-Identifier: MIT */
/*
 * tokio_rec.h - zero-code Tokio, the recorder's side of the CPU sampler
 * (internal to record/): loads record/bpf/tokio_tag.bpf.c, whose program runs
 * at each sample of the sampler's perf events (perf_set__set_bpf) and tags
 * it with the Tokio task its thread runs, read from the thread's own
 * memory (record/bpf/tokio_tag.h); reads those tags and gives each sample its
 * task. The off-CPU side is the scheduler program's (record/bpf/sched.bpf.c
 * reads the same slot at each switch-out).
 *
 * A tag is written in the same overflow as its sample, on the same clock,
 * before perf writes the sample (whose time was taken a few microseconds
 * before the program's): the sample's tag is its thread's tag nearest the
 * sample's time, at most TOKIO_TAG_WINDOW_NS away. Tags are read from
 * their ring before the samples (tokio_rec__drain() at each drain of the
 * sampler, and again for a sample whose tag is not read yet: the kernel
 * submitted it before perf wrote the sample).
 *
 * Needs what the BPF scheduler path needs: CAP_BPF and CAP_PERFMON (or
 * root), the kernel's BTF, and the recorder in the initial pid namespace.
 */
#ifndef D9_TOKIO_REC_H
#define D9_TOKIO_REC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/bpf/tokio_tag.h"
#include "record/record.h"
#include "trace/trace.h"

struct tokio_rec;

/* A tag this far from a sample is not its own (a sample's tag comes a few
 * microseconds after its time; a thread's samples are a period of its CPU
 * time apart, 1 ms at 999 Hz) */
#define TOKIO_TAG_WINDOW_NS 100000ULL

struct tokio_rec_counts {
	uint64_t in_task;  /* samples given a task */
	uint64_t no_task;  /* samples tagged outside any task */
	uint64_t untagged; /* samples no tag was found for (the ring had no
			    * room for it, a thread's queue pushed it out,
			    * or no memory for the queue) */
};

/* Where the threads of process @pid (or of @exe, a command not yet
 * exec'd: that program file, found as execvp does) keep their Tokio
 * task's id: *@slot, and Tokio's version in @version ("" if the binary
 * does not say); the executable's path as read in @path (/proc/PID/exe
 * for a running process). 0, or -errno with a one-line reason in @why: those of
 * tokio_layout_find() (symbol/tokio.h; -ENOENT: no Tokio in it, nothing to
 * say), and -EOPNOTSUPP for a Tokio in one of its shared libraries (its
 * thread-locals are not at a fixed place from the thread pointer). */
int tokio_rec_find(pid_t pid, const char *exe, struct tokio_bpf_slot *slot, char *version,
		   size_t vlen, char *path, size_t plen, char *why, size_t whylen);
/* Load the program for process @pid's threads, reading @slot, and with
 * @probes the poll probes' (tier 1). 0, or -errno with a one-line reason
 * in @why (as sched_bpf__open()). */
int tokio_rec__open(pid_t pid, const struct tokio_bpf_slot *slot, int probes,
		    struct tokio_rec **out, char *why, size_t whylen);
/* The program's fd, for perf_set__set_bpf() */
int tokio_rec__prog_fd(const struct tokio_rec *tr);
/* Read the tags written so far. */
void tokio_rec__drain(struct tokio_rec *tr);
/* The task id (Tokio's, 0: none or not known) thread @tid ran at its
 * sample of @time. */
uint64_t tokio_rec__tag(struct tokio_rec *tr, uint32_t tid, uint64_t time);
/* Lean mode: tags carry the shim's task where a thread polls one (its
 * struct d9_tls at @off from the thread pointer), with
 * TOKIO_BPF_SHIM_TASK */
void tokio_rec__set_shim(struct tokio_rec *tr, int64_t off);

/* Names: each task is named from its code, the first stack of it that
 * shows Tokio polling its future (lib/tokio_names.h), symbolized through
 * @resolve (the recorder's symbolizer or its cache), once per stack of a
 * segment's writer; and a worker's own launch task (its id is what a
 * worker shows outside any task) is the runtime, no task. The writer of
 * the segment from now on (its stack ids; each task named in it once). */
void tokio_rec__set_writer(struct tokio_rec *tr, struct trace_writer *w,
			   trace_resolve_fn resolve, void *rctx);
/* The trace's task for Tokio's task @raw (0: none) seen on stack @stack of
 * the writer: TRACE_TASK_TOKIO | @raw, named in the writer the first time
 * (trace_writer__task()), or 0 where it is the runtime. 0 or -errno of the
 * writer in *@err. */
uint64_t tokio_rec__task(struct tokio_rec *tr, uint64_t raw, uint32_t stack, int *err);
void tokio_rec__counts(const struct tokio_rec *tr, struct tokio_rec_counts *c);

/* ---- tier 1: the poll probes ---- */
struct tokio_sites;

/* What the poll probes did */
struct tokio_probe_counts {
	uint64_t sites;	  /* raw::poll instances probed */
	uint64_t polls;	  /* polls written */
	uint64_t wakes;	  /* wakes written */
	uint64_t pair_ns; /* what a probed poll costs its thread here
			   * (entry and return, calibrated at the attach);
			   * 0 unknown */
	uint64_t rate;	  /* the rate that took them off, polls and wakes
			   * a second */
	uint64_t off_at;  /* when their records stopped (0: on to the end,
			   * or the shim's records took over) */
	/* polls not written (their samples stay the tasks' by tag): */
	uint64_t too_deep;   /* nested past TOKIO_BPF_DEPTH */
	uint64_t nested;     /* with another poll begun inside (the inner
			      * one is written: a thread's polls never overlap) */
	uint64_t bad_vtable; /* of tasks whose vtable was not Tokio's as known */
	uint64_t dropped;    /* polls and wakes the ring had no room for */
	uint64_t unread;     /* wakes whose task's id could not be read
			      * (its memory not readable then) */
};

/* Put uprobes on every raw::poll instance of @s (entry and return) and on
 * the wake functions, in @path for the target, after timing what a probed
 * poll costs here; with @max_rate, tokio_rec__tick() takes them off once
 * they are hit faster (polls begun and wakes a second, over a second). Each poll and
 * wake becomes a record of the writer, as the shim's (a whole poll, a
 * WAKE), of its task. 0, or -errno and why. */
int tokio_rec__probe(struct tokio_rec *tr, const char *path, const struct tokio_sites *s,
		     uint64_t max_rate, char *why, size_t whylen);
/* At @now: the probes' rate and layout; the time they were taken off if
 * it is now (for good; why in *@why, RECORD_PROBES_OFF_*), else 0. */
uint64_t tokio_rec__tick(struct tokio_rec *tr, uint64_t now, int *why);
/* Take the probes off now, for good; with @gap their records stop here
 * (off_at), else others take over (the shim's). */
void tokio_rec__off(struct tokio_rec *tr, uint64_t now, int gap);
void tokio_rec__probe_counts(const struct tokio_rec *tr, struct tokio_probe_counts *c);
/* The writer's first error on the probes' records, 0 none */
int tokio_rec__writer_err(const struct tokio_rec *tr);
void tokio_rec__free(struct tokio_rec *tr);

#endif /* D9_TOKIO_REC_H */
