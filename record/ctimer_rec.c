// SPDX-License-Identifier: MIT
/*
 * The recorder side of the ctimer sampler: request, drain, status.
 *
 * The segment may be rewritten by the target at any time, so every sample
 * area is addressed through the layout verified at open and every sample is
 * checked by d9_sample_take() (sizes clamped, nonsense reset), then here:
 * its thread is its area's owner and one of the target's, its time within
 * the recording, and it comes no faster than the sampler could take it
 * (ctimer_rec.h: a bucket per area filled at the rate of one CPU, and the
 * process's CPU time for all of them).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/search.h"
#include "libprof/d9_segment.h"
#include "record/ctimer_rec.h"
#include "record/tids.h"
#include "record/ustack.h"
#include "record/proc.h"
#include "record/segment.h"
#include "trace/trace.h"

#define CTIMER_MAX_CHAIN (D9_SAMPLE_MAX_FRAMES + 64)

/* The slack of the rate bounds: half a second's worth of samples, and a
 * quarter more than the rate. */
#define CTIMER_SLACK_NS 500000000ULL
#define RATE(x)		((x) + (x) / 4)
/* More drops than this between two drains cannot be real: a scribbled
 * counter. */
#define CTIMER_DROPS_MAX (1ULL << 32)

struct slot_seen {
	uint64_t gen;
	uint64_t drops;
	uint32_t tid;	 /* the owner as of gen */
	int tid_ok;	 /* ... is one of the target's threads */
	uint64_t tokens; /* sample weights it may still give */
	uint64_t at;	 /* when they were topped up, ns */
};

struct ctimer_rec {
	struct shim_seg *seg;
	pid_t pid;
	struct symbolizer *sym; /* for the CFI step, NULL: none */
	struct ustack_stats *st;
	unsigned int hz;
	struct tids *target;	/* the target's threads, NULL: any */
	struct slot_seen *seen; /* per ring slot */
	/* all areas: weights written, and allowed by the target's CPU time
	 * since the request (cpu0) as last read */
	uint64_t cpu0, taken, allowed;
	uint32_t *tids; /* threads named so far, sorted */
	size_t ntids, tids_cap;
	struct d9_sample sample;	/* scratch: 1 KiB, not on the stack */
	uint64_t ips[CTIMER_MAX_CHAIN]; /* scratch: the joined stack */
};

/* What a second of CPU time (@ns of it) may give, with the slack. */
static uint64_t weights_for(const struct ctimer_rec *c, uint64_t ns)
{
	return (uint64_t)((double)RATE(c->hz) * ((double)ns / 1e9)) +
	       (uint64_t)((double)c->hz * (double)CTIMER_SLACK_NS / 1e9) + 64;
}

int ctimer_rec__new(struct shim_seg *seg, pid_t pid, unsigned int hz,
		    struct symbolizer *sym, struct ustack_stats *st, struct tids *tids,
		    struct ctimer_rec **out)
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
	c->target = tids;
	/* timers count from their arming, after this */
	c->cpu0 = proc_cpu_ns(pid);
	c->allowed = weights_for(c, 0);
	ctimer_rec__request(c);
	*out = c;
	return 0;
}

void ctimer_rec__request(struct ctimer_rec *c)
{
	d9_seg_request(shim_seg__base(c->seg),
		       D9_REQ_CTIMER | (c->sym ? D9_REQ_STACK : 0), c->hz);
}

/* Threads named at most: their tids come from the target. */
#define CTIMER_MAX_TIDS 65536

/* Name a thread the first time one of its samples shows up: perf's COMM
 * records are not there to do it. */
static int name_thread(struct ctimer_rec *c, struct trace_writer *w, uint32_t tid)
{
	char path[64], comm[64] = "";
	/* sorted insert: tids come from the target, one qsort per new tid
	 * was quadratic under a flood of them */
	size_t lo = LIB_PARTITION_POINT(0, c->ntids, m, c->tids[m] < tid);

	if (lo < c->ntids && c->tids[lo] == tid)
		return 0;
	if (c->ntids >= CTIMER_MAX_TIDS)
		return 0; /* named enough: the rest stay unnamed */
	if (LIB_GROW(c->tids, c->tids_cap, c->ntids + 1))
		return -ENOMEM;
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
			      s->stack, s->nstack, s->ips, s->nframes, c->ips,
			      CTIMER_MAX_CHAIN, c->st);
}

/* Would all areas together stay within what the target's CPU time allows
 * with @w more? The time is read once per drain (*@looked), when needed. */
static int cpu_allows(struct ctimer_rec *c, uint64_t w, int *looked)
{
	uint64_t cpu;

	if (c->taken + w <= c->allowed)
		return 1;
	if (*looked)
		return 0;
	*looked = 1;
	cpu = proc_cpu_ns(c->pid);
	if (cpu > c->cpu0 && weights_for(c, cpu - c->cpu0) > c->allowed)
		c->allowed = weights_for(c, cpu - c->cpu0);
	return c->taken + w <= c->allowed;
}

/* Slot @i's owner now (@tid, @gen): a new one is checked once, and starts
 * with a full bucket; the bucket fills at the rate of one CPU since @now,
 * and holds a lease's worth (a recorder that stalled that long finds at
 * most that much in a real area). */
static struct slot_seen *slot_owner(struct ctimer_rec *c, uint32_t i, uint32_t tid,
				    uint64_t gen, uint64_t now)
{
	struct slot_seen *seen = &c->seen[i];
	uint64_t full = (uint64_t)((double)c->hz * ((double)D9_LEASE_NS / 1e9)) + 64;

	if (gen != seen->gen || !seen->tid) {
		seen->gen = gen;
		seen->drops = 0;
		seen->tid = tid;
		seen->tid_ok = tid && (!c->target || tids__is_target(c->target, tid));
		seen->tokens = full;
		seen->at = now;
	}
	if (now > seen->at) {
		seen->tokens += (uint64_t)((double)RATE(c->hz) *
					   ((double)(now - seen->at) / 1e9));
		seen->at = now;
		if (seen->tokens > full)
			seen->tokens = full;
	}
	return seen;
}

int ctimer_rec__drain(struct ctimer_rec *c, struct trace_writer *w, uint64_t lo,
		      uint64_t hi, struct ctimer_counts *cn)
{
	const struct d9_seg_layout *l = shim_seg__layout(c->seg);
	void *base = shim_seg__base(c->seg);
	struct d9_sample *s = &c->sample;
	struct shim_clock clock;
	uint64_t now = record_now_ns();
	int err = 0, looked = 0;
	uint32_t i;

	shim_seg__clock(c->seg, &clock);
	for (i = 0; i < l->nrings && !err; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(base, l, i);
		uint64_t *words = d9_layout_samples(base, l, i);
		struct slot_seen *seen;
		uint64_t gen, d;
		uint32_t tid;
		/* at most one area's worth per drain: a target writing as fast
		 * as we read must not hold the recorder here */
		uint32_t budget = l->sample_words / D9_SAMPLE_HDR_WORDS;

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == D9_RING_FREE)
			continue;
		/* (an area holds only its owner's samples: a slot is freed, and
		 * taken again, only once its area is empty) */
		d9_ring_owner(r, &tid, &gen, NULL, 0);
		seen = slot_owner(c, i, tid, gen, now);
		while (!err && budget-- && d9_sample_take(r, words, l->sample_words, s)) {
			struct trace_sample ts = {
				.tid = s->tid,
				.weight = s->weight ? s->weight : 1,
				.sampler = TRACE_SAMPLER_CTIMER,
			};

			if (!seen->tid_ok || s->tid != seen->tid ||
			    !shim_clock__within(&clock, s->time, lo, hi, &ts.time)) {
				cn->garbage++;
				continue;
			}
			if (ts.weight > seen->tokens ||
			    !cpu_allows(c, ts.weight, &looked)) {
				cn->refused++;
				continue;
			}
			seen->tokens -= ts.weight;
			c->taken += ts.weight;
			err = name_thread(c, w, s->tid);
			if (!err)
				err = trace_writer__stack(w, c->ips, sample_stack(c, s),
							  &ts.stack);
			if (!err)
				err = trace_writer__sample(w, &ts);
			if (!err)
				cn->samples++;
		}
		d = d9_sample_drops(r);
		if (d > seen->drops &&
		    (d - seen->drops > CTIMER_DROPS_MAX || !seen->tid_ok))
			cn->garbage++; /* a scribbled counter, not drops */
		else if (d > seen->drops)
			cn->drops += d - seen->drops;
		if (d > seen->drops)
			seen->drops = d;
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
			snprintf(
				why, len,
				"the application replaced the shim's handler of signal %d; "
				"leave it alone or set D9PROF_SIGNAL to another signal in "
				"its environment",
				sig);
		else
			snprintf(why, len,
				 "the application handles every signal the shim may use "
				 "(SIGRTMAX-2..SIGRTMAX-9); set D9PROF_SIGNAL=N in its "
				 "environment to share signal N");
		return -EBUSY;
	case D9_CTIMER_FAILED:
		if (!sig)
			snprintf(why, len,
				 "bad D9PROF_SIGNAL in the target's environment");
		else
			snprintf(why, len,
				 "the shim cannot arm its timers (signal %d): %s", sig,
				 strerror(err > 0 ? err : EINVAL));
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
