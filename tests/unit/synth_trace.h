/* SPDX-License-Identifier: MIT */
/*
 * synth_trace.h - build a struct trace by hand for analysis tests, without
 * trace.c. Every function aborts the test on ENOMEM (cr_assert).
 */
#ifndef D9_SYNTH_TRACE_H
#define D9_SYNTH_TRACE_H

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "trace/trace.h"

/* Grow @p (holding @n) so that it holds @n + 1: capacity doubles at powers
 * of two, so no separate capacity field is needed. */
static inline void *sy_grow(void *p, size_t n, size_t size)
{
	if (n >= 16 && (n & (n - 1)))
		return p;
	p = realloc(p, (n < 16 ? 16 : n * 2) * size);
	cr_assert(p, "out of memory");
	return p;
}

static inline void sy_event(struct trace *t, uint64_t time, uint32_t tid, uint32_t type,
			    uint64_t task)
{
	struct trace_event *e;

	t->events = sy_grow(t->events, t->nevents, sizeof(*e));
	e = &t->events[t->nevents++];
	e->time = time;
	e->tid = tid;
	e->type = type;
	e->task = task;
}

static inline void sy_poll(struct trace *t, uint32_t tid, uint64_t task, uint64_t start,
			   uint64_t end)
{
	sy_event(t, start, tid, TRACE_EV_POLL_BEGIN, task);
	sy_event(t, end, tid, TRACE_EV_POLL_END, task);
}

static inline void sy_sample(struct trace *t, uint64_t time, uint32_t tid, uint32_t stack,
			     uint32_t weight)
{
	struct trace_sample *s;

	t->samples = sy_grow(t->samples, t->nsamples, sizeof(*s));
	s = &t->samples[t->nsamples++];
	memset(s, 0, sizeof(*s));
	s->time = time;
	s->tid = tid;
	s->stack = stack;
	s->weight = weight;
	s->sampler = TRACE_SAMPLER_PERF;
}

/* An off-CPU interval (time_in 0: still off-CPU at the end). */
static inline void sy_switch(struct trace *t, uint64_t time, uint64_t time_in,
			     uint32_t tid, uint32_t stack, int preempted)
{
	struct trace_switch *s;

	t->switches = sy_grow(t->switches, t->nswitches, sizeof(*s));
	s = &t->switches[t->nswitches++];
	memset(s, 0, sizeof(*s));
	s->time = time;
	s->time_in = time_in;
	s->tid = tid;
	s->stack = stack;
	s->preempted = (uint8_t)preempted;
}

static inline void sy_thread(struct trace *t, uint32_t tid, const char *name)
{
	t->threads = sy_grow(t->threads, t->nthreads, sizeof(*t->threads));
	t->threads[t->nthreads].tid = tid;
	t->threads[t->nthreads++].name = name;
}

/* A thread outside the target (a switch's holder). */
static inline void sy_comm(struct trace *t, uint32_t tid, const char *name)
{
	t->comms = sy_grow(t->comms, t->ncomms, sizeof(*t->comms));
	t->comms[t->ncomms].tid = tid;
	t->comms[t->ncomms++].name = name;
}

/* Strings are not copied: pass literals. */
static inline void sy_task(struct trace *t, uint64_t id, const char *name)
{
	t->tasks = sy_grow(t->tasks, t->ntasks, sizeof(*t->tasks));
	t->tasks[t->ntasks].id = id;
	t->tasks[t->ntasks++].name = name;
}

static inline void sy_meta(struct trace *t, const char *key, const char *value)
{
	t->meta = sy_grow(t->meta, t->nmeta, sizeof(*t->meta));
	t->meta[t->nmeta].key = key;
	t->meta[t->nmeta++].value = value;
}

static inline uint32_t sy_frame(struct trace *t, uint64_t addr, const char *sym,
				const char *module, uint64_t offset, int kernel)
{
	struct trace_frame *f;

	t->frames = sy_grow(t->frames, t->nframes, sizeof(*f));
	f = &t->frames[t->nframes];
	*f = (struct trace_frame){.addr = addr,
				  .sym = sym,
				  .module = module,
				  .offset = offset,
				  .kernel = kernel};
	return t->nframes++;
}

/* A stack of @n frame ids, leaf first (as the trace stores them). */
static inline uint32_t sy_stack(struct trace *t, unsigned int n, ...)
{
	uint32_t off = t->nstacks ? t->stack_off[t->nstacks] : 0;
	va_list ap;

	t->stack_off = sy_grow(t->stack_off, t->nstacks + 1, sizeof(uint32_t));
	if (!t->nstacks)
		t->stack_off[0] = 0;
	va_start(ap, n);
	for (unsigned int i = 0; i < n; i++) {
		t->stack_frames = sy_grow(t->stack_frames, off + i, sizeof(uint32_t));
		t->stack_frames[off + i] = va_arg(ap, uint32_t);
	}
	va_end(ap);
	t->stack_off[t->nstacks + 1] = off + n;
	return t->nstacks++;
}

/* A stack from symbol names, leaf first: one new frame per name. */
static inline uint32_t sy_stack_syms(struct trace *t, unsigned int n,
				     const char *const *leaf_first)
{
	uint32_t off = t->nstacks ? t->stack_off[t->nstacks] : 0;

	t->stack_off = sy_grow(t->stack_off, t->nstacks + 1, sizeof(uint32_t));
	if (!t->nstacks)
		t->stack_off[0] = 0;
	for (unsigned int i = 0; i < n; i++) {
		uint32_t id = sy_frame(t, 0x1000 + t->nframes, leaf_first[i],
				       "/usr/bin/app", 0, 0);

		t->stack_frames = sy_grow(t->stack_frames, off + i, sizeof(uint32_t));
		t->stack_frames[off + i] = id;
	}
	t->stack_off[t->nstacks + 1] = off + n;
	return t->nstacks++;
}

/* A span record (trace_span): @name and @text are not copied. */
static inline void sy_span(struct trace *t, uint64_t time, uint32_t tid, uint32_t type,
			   uint64_t id, int64_t value, const char *name, const char *text)
{
	struct trace_span *s;

	t->spans = sy_grow(t->spans, t->nspans, sizeof(*s));
	s = &t->spans[t->nspans++];
	*s = (struct trace_span){.time = time,
				 .id = id,
				 .value = value,
				 .name = name,
				 .text = text,
				 .tid = tid,
				 .type = type};
}

static inline void sy_free(struct trace *t)
{
	free(t->spans);
	free(t->events);
	free(t->samples);
	free(t->switches);
	free(t->threads);
	free(t->comms);
	free(t->tasks);
	free(t->meta);
	free(t->frames);
	free(t->stack_off);
	free(t->stack_frames);
	memset(t, 0, sizeof(*t));
}

#endif /* D9_SYNTH_TRACE_H */
