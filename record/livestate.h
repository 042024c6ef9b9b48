/* SPDX-License-Identifier: MIT */
/*
 * livestate.h - what the runtime has open at any instant, from its events
 * as they are drained (internal to record/).
 *
 * A trace segment must join exactly from its first record when read alone
 * (trace.h: STATE chunk): the polls in progress at its start (their BEGIN),
 * parked workers (their PARK), tasks woken and not yet polled (their WAKE)
 * and tasks spawned and never polled (their SPAWN), each at its own time.
 * This keeps exactly that: an entry lives while it has something open, and
 * until the next livestate__purge() after (a task's for a second), so
 * memory follows what is open and recent, never how long the recording
 * ran or how many tasks and threads came and went.
 *
 * It also sees every poll's length and every wake-to-poll delay go by,
 * which is where the flight recorder's triggers look (livestate_hit).
 */
#ifndef D9_LIVESTATE_H
#define D9_LIVESTATE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct livestate;

/* The latest event over a threshold (livestate__set_limits). */
struct livestate_hit {
	int kind; /* LIVESTATE_POLL or LIVESTATE_DELAY; 0: none */
	uint64_t task;
	uint32_t tid;  /* the thread that polled */
	uint64_t time; /* the poll's end (POLL), its begin (DELAY) */
	uint64_t ns;   /* the poll's length, or the delay */
};
#define LIVESTATE_POLL	1
#define LIVESTATE_DELAY 2

/* Entries per table (threads, tasks) by default: 48 bytes each, in an
 * array at most twice their number, and 32 to 64 bytes each in its
 * index (lib/map.h). */
#define LIVESTATE_MAX (1u << 17)

int livestate__new(struct livestate **out);
void livestate__free(struct livestate *ls);

/* At most @max threads and as many tasks are kept (each with what it has
 * open, or over for less than a second): past that, what has nothing
 * open is forgotten at once, then new ones are refused and counted. */
void livestate__set_max(struct livestate *ls, size_t max);
/* Threads and tasks refused so far for want of room: their open polls,
 * wakes and spawns are missing from the STATE of later segments. */
uint64_t livestate__refused(const struct livestate *ls);

/* Report polls longer than @poll_ns and wake-to-poll delays longer than
 * @delay_ns (0: never) through livestate__hit(). */
void livestate__set_limits(struct livestate *ls, uint64_t poll_ns, uint64_t delay_ns);

/* Take @n records (in time order per thread): events, and whole polls
 * (TRACE_REC_POLL, _WOKEN: at their end, @len[i] long) as their BEGIN,
 * (WAKE,) END (trace_rec_spread()); @len may be NULL when none is one.
 * 0 or -ENOMEM (then the state is incomplete: the next segment's STATE may
 * miss an open poll). */
int livestate__feed(struct livestate *ls, const struct trace_event *rec,
		    const uint64_t *len, size_t n);

/* Forget tasks with nothing open whose last poll or end is before
 * @before (ns), and threads with nothing open. Until then a task's late
 * spawn or wake (drained from another thread's ring after its poll or
 * end) is known to be over; after, it costs nothing. Call it now and then,
 * e.g. at each segment: between two calls entries stay, so that a poll
 * finds its thread and task where the last one left them. */
void livestate__purge(struct livestate *ls, uint64_t before);

/* What went by since the last call (a segment's index, for `d9prof ls`):
 * polls ended, the longest poll and wake-to-poll delay, those still open
 * at @now counted as long as they have lasted. */
struct livestate_summary {
	uint64_t polls;
	uint64_t max_poll_ns, max_delay_ns;
};
void livestate__summary(struct livestate *ls, uint64_t now, struct livestate_summary *s);

/* The first event over a limit since the last call, into *@hit: 1, else 0. */
int livestate__hit(struct livestate *ls, struct livestate_hit *hit);

/* What is open now, as events in time order, in *@ev (owned by @ls, valid
 * until the next call); their number. */
size_t livestate__open(struct livestate *ls, const struct trace_event **ev);

#endif /* D9_LIVESTATE_H */
