// SPDX-License-Identifier: MIT
/*
 * record_detect.c - the flight recorder's detector triggers (record
 * --trigger lost-waker, self-wakes, never-yielded, task-leak): the
 * detectors `top` warns with (analysis/live.h, struct live_find), on a
 * live state of their own, fed by the recording's tap beside top's (a
 * viewer's snapshots start the counts of theirs again, and a viewer comes
 * and goes), asked each second by the engine (record_opts.detect).
 *
 * A condition that holds at one look and the next is one find: each is
 * handed to the engine once, when it starts to hold (its cooldown then
 * counts conditions, not seconds).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/live.h"
#include "cli/cli.h"
#include "lib/hash.h"
#include "record/record.h"

struct record_detect {
	struct live *live;
	struct trace_tap tap; /* the recording's: the detectors', then
			       * top's if any (o->tap before, chained) */
	void (*polling)(void *ctx, uint32_t tid, uint64_t task, uint64_t begin,
			uint64_t now);
	unsigned int (*wants)(void *ctx);
	void *polling_ctx;
	unsigned int kinds; /* the triggers' kinds, bits */
	uint64_t seen[LIVE_FINDS];
	size_t nseen; /* the finds of the last look */
};

/* ---- the detectors' live state, beside top's ---------------------------- */

static void tee_polling(void *ctx, uint32_t tid, uint64_t task, uint64_t begin,
			uint64_t now)
{
	struct record_detect *d = ctx;

	live__polling(d->live, tid, task, begin, now);
	if (d->polling)
		d->polling(d->polling_ctx, tid, task, begin, now);
}

static unsigned int tee_wants(void *ctx)
{
	struct record_detect *d = ctx;

	return d->wants ? d->wants(d->polling_ctx) : 0;
}

/* ---- the engine's question --------------------------------------------- */

static const enum record_trigger_kind kind_of[] = {
	[LIVE_LOST_WAKER] = RECORD_TRIGGER_LOST_WAKER,
	[LIVE_SELF_WAKES] = RECORD_TRIGGER_SELF_WAKES,
	[LIVE_LEAK] = RECORD_TRIGGER_LEAK,
	[LIVE_NO_YIELD] = RECORD_TRIGGER_NO_YIELD,
};

/* A find's key across looks: its kind and task (the leak's: its name) */
static uint64_t find_key(const struct live_find *f)
{
	return (uint64_t)f->kind << 60 ^ (f->task ? f->task : lib_hash_str(f->name));
}

/* record_opts.detect: what the detectors find now and did not at the last
 * look. The dump is centred on the moment that shows the bug: a lost
 * waker's last poll, the begin of a poll that never yielded; self-wakes
 * and a leak go on, so now. */
static size_t detect(void *ctx, uint64_t now, struct record_find *out, size_t max)
{
	struct record_detect *d = ctx;
	struct live_snap s;
	uint64_t keys[LIVE_FINDS];
	size_t n = 0, nk = 0;

	if (live__snapshot(d->live, now, GROUP_TASK, &s))
		return 0;
	for (size_t i = 0; i < s.nfinds; i++) {
		const struct live_find *f = &s.finds[i];
		enum record_trigger_kind kind = kind_of[f->kind];
		uint64_t key = find_key(f);
		size_t k;

		if (!(d->kinds & 1u << kind))
			continue;
		keys[nk++] = key;
		for (k = 0; k < d->nseen && d->seen[k] != key; k++)
			;
		if (k < d->nseen || n == max)
			continue;
		out[n].kind = kind;
		out[n].at = (f->kind == LIVE_LOST_WAKER || f->kind == LIVE_NO_YIELD) &&
					    f->ns < now
				    ? now - f->ns
				    : now;
		live_find_say(&s, f, out[n].what, sizeof(out[n].what));
		n++;
	}
	memcpy(d->seen, keys, nk * sizeof(keys[0]));
	d->nseen = nk;
	live_snap_release(&s);
	return n;
}

int record_detect__start(struct record_opts *o, struct record_detect **out)
{
	const struct trace_tap *live;
	struct record_detect *d;
	unsigned int kinds = 0;
	int ret;

	*out = NULL;
	for (unsigned int i = 0; i < o->ntriggers; i++)
		if (o->triggers[i].kind >= RECORD_TRIGGER_LOST_WAKER)
			kinds |= 1u << o->triggers[i].kind;
	if (!kinds)
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	ret = live__new(1e9 / o->freq, &d->live);
	if (ret) {
		free(d);
		return ret;
	}
	d->kinds = kinds;
	d->polling = o->polling;
	d->wants = o->wants;
	d->polling_ctx = o->polling_ctx;
	/* the detectors read the runtime's records, names and a lean
	 * recording's sums, not samples, switches or spans */
	live = live__tap(d->live);
	d->tap = (struct trace_tap){.records = live->records,
				    .name = live->name,
				    .sum = live->sum,
				    .meta = live->meta,
				    .ctx = live->ctx,
				    .next = o->tap};
	o->tap = &d->tap;
	o->detect = detect;
	/* (the hooks of the live state share polling_ctx) */
	o->polling = tee_polling;
	o->wants = tee_wants;
	o->polling_ctx = d;
	*out = d;
	return 0;
}

void record_detect__free(struct record_detect *d)
{
	if (!d)
		return;
	live__free(d->live);
	free(d);
}
