// SPDX-License-Identifier: MIT
/*
 * The recorder side of the ctimer sampler: request, drain, status.
 *
 * The segment may be rewritten by the target at any time, so every sample
 * area is addressed through the layout verified at open and every sample is
 * checked by d9_sample_take() (sizes clamped, nonsense reset).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libprof/d9_segment.h"
#include "record/ctimer_rec.h"
#include "record/ustack.h"
#include "record/record.h"
#include "trace/trace.h"

#define CTIMER_MAX_CHAIN (D9_SAMPLE_MAX_FRAMES + 64)

struct slot_seen {
	uint64_t gen;
	uint64_t drops;
};

struct ctimer_rec {
	struct shim_seg *seg;
	pid_t pid;
	struct symbolizer *sym;		/* for the CFI step, NULL: none */
	struct ustack_stats *st;
	unsigned int hz;
	struct slot_seen *seen;		/* per ring slot */
	uint32_t *tids;			/* threads named so far, sorted */
	size_t ntids, tids_cap;
	struct d9_sample sample;	/* scratch: 1 KiB, not on the stack */
	uint64_t ips[CTIMER_MAX_CHAIN];	/* scratch: the joined stack */
};

int ctimer_rec__new(struct shim_seg *seg, pid_t pid, unsigned int hz,
		    struct symbolizer *sym, struct ustack_stats *st, struct ctimer_rec **out)
{
	const struct d9_seg_layout *l = shim_seg__layout(seg);
	struct ctimer_rec *c = calloc(1, sizeof(*c));

	if (!c || !(c->seen = calloc(l->nrings, sizeof(*c->seen)))) {
		free(c);
		return -ENOMEM;
	}
	c->seg = seg;
	c->pid = pid;
	c->sym = sym;
	c->st = st;
	c->hz = hz;
	ctimer_rec__request(c);
	*out = c;
	return 0;
}

void ctimer_rec__request(struct ctimer_rec *c)
{
	d9_seg_request(shim_seg__base(c->seg), D9_REQ_CTIMER | (c->sym ? D9_REQ_STACK : 0),
		       c->hz);
}

/* Threads named at most: their tids come from the target. */
#define CTIMER_MAX_TIDS 65536

/* Name a thread the first time one of its samples shows up: perf's COMM
 * records are not there to do it. */
static int name_thread(struct ctimer_rec *c, struct trace_writer *w, uint32_t tid)
{
	char path[64], comm[64] = "";
	size_t lo = 0, hi = c->ntids;

	/* sorted insert: tids come from the target, one qsort per new tid
	 * was quadratic under a flood of them */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->tids[mid] == tid)
			return 0;
		if (c->tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (c->ntids >= CTIMER_MAX_TIDS)
		return 0; /* named enough: the rest stay unnamed */
	if (c->ntids == c->tids_cap) {
		size_t cap = c->tids_cap ? c->tids_cap * 2 : 64;
		uint32_t *t = realloc(c->tids, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		c->tids = t;
		c->tids_cap = cap;
	}
	memmove(&c->tids[lo + 1], &c->tids[lo], (c->ntids - lo) * sizeof(*c->tids));
	c->tids[lo] = tid;
	c->ntids++;
	snprintf(path, sizeof(path), "/proc/%d/task/%u/comm", (int)c->pid, tid);
	record_read_file(path, comm, sizeof(comm), 0);
	return trace_writer__thread(w, tid, comm[0] ? comm : NULL);
}

void ctimer_rec__forget_names(struct ctimer_rec *c)
{
	c->ntids = 0;
}

/* The stack of @s into c->ips: its frame-pointer walk, joined to a CFI
 * step over the stack words it carries; return addresses minus one. */
static unsigned int sample_stack(struct ctimer_rec *c, const struct d9_sample *s)
{
	return ustack_fp_regs(s->flags & D9_SAMPLE_STACK ? c->sym : NULL, s->sp, s->fp,
			      s->stack, s->nstack, s->ips, s->nframes, c->ips, CTIMER_MAX_CHAIN,
			      c->st);
}

int ctimer_rec__drain(struct ctimer_rec *c, struct trace_writer *w, uint64_t *samples,
		      uint64_t *drops)
{
	const struct d9_seg_layout *l = shim_seg__layout(c->seg);
	void *base = shim_seg__base(c->seg);
	struct d9_sample *s = &c->sample;
	uint32_t i;
	int err = 0;

	for (i = 0; i < l->nrings && !err; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(base, l, i);
		uint64_t *words = d9_layout_samples(base, l, i);
		uint64_t gen, d;
		/* at most one area's worth per drain: a target writing as fast
		 * as we read must not hold the recorder here */
		uint32_t budget = l->sample_words / D9_SAMPLE_HDR_WORDS;

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == D9_RING_FREE)
			continue;
		while (!err && budget-- && d9_sample_take(r, words, l->sample_words, s)) {
			struct trace_sample ts = {
				.time = shim_seg__ns(c->seg, s->time),
				.tid = s->tid,
				.weight = s->weight ? s->weight : 1,
				.sampler = TRACE_SAMPLER_CTIMER,
			};

			err = name_thread(c, w, s->tid);
			if (!err)
				err = trace_writer__stack(w, c->ips, sample_stack(c, s),
							  &ts.stack);
			if (!err)
				err = trace_writer__sample(w, &ts);
			if (!err)
				(*samples)++;
		}
		gen = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE);
		d = d9_sample_drops(r);
		if (gen != c->seen[i].gen) {
			c->seen[i].gen = gen;
			c->seen[i].drops = 0;
		}
		if (d > c->seen[i].drops) {
			*drops += d - c->seen[i].drops;
			c->seen[i].drops = d;
		}
	}
	return err;
}

int ctimer_rec__signal(const struct ctimer_rec *c)
{
	struct d9_seg_hdr *h = shim_seg__base(c->seg);

	return (int)__atomic_load_n(&h->ctimer_signal, __ATOMIC_RELAXED);
}

int ctimer_rec__status(struct ctimer_rec *c, unsigned int *threads, char *why, size_t len)
{
	struct d9_seg_hdr *h = shim_seg__base(c->seg);
	uint32_t st = __atomic_load_n(&h->ctimer_status, __ATOMIC_ACQUIRE);
	int sig = (int)__atomic_load_n(&h->ctimer_signal, __ATOMIC_RELAXED);
	int err = __atomic_load_n(&h->ctimer_errno, __ATOMIC_RELAXED);

	*threads = __atomic_load_n(&h->ctimer_threads, __ATOMIC_RELAXED);
	switch (st) {
	case D9_CTIMER_NOSIG:
		if (sig)
			snprintf(why, len,
				 "the application replaced the shim's handler of signal %d; "
				 "leave it alone or set D9PROF_SIGNAL to another signal in "
				 "its environment", sig);
		else
			snprintf(why, len,
				 "the application handles every signal the shim may use "
				 "(SIGRTMAX-2..SIGRTMAX-9); set D9PROF_SIGNAL=N in its "
				 "environment to share signal N");
		return -EBUSY;
	case D9_CTIMER_FAILED:
		if (!sig)
			snprintf(why, len, "bad D9PROF_SIGNAL in the target's environment");
		else
			snprintf(why, len, "the shim cannot arm its timers (signal %d): %s",
				 sig, strerror(err > 0 ? err : EINVAL));
		return err > 0 ? -err : -EINVAL;
	default:
		why[0] = '\0';
		return 0;
	}
}

void ctimer_rec__free(struct ctimer_rec *c)
{
	if (!c)
		return;
	free(c->seen);
	free(c->tids);
	free(c);
}

