/* SPDX-License-Identifier: MIT */
/*
 * causes.c - what kept a delayed task from its poll, as the views show it:
 * the hottest stack of each poll a cause names (struct hot), and the
 * causes as text and JSON. The delays table, the spans' slowest and the
 * report show causes the same way through these.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/causes.h"
#include "analysis/lean.h"
#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/offcpu.h"
#include "analysis/stacks.h"
#include "lib/grow.h"
#include "lib/json.h"
#include "lib/map.h"
#include "lib/text.h"

#define TEXT_CAUSES 4 /* shown in a text row */

/* ---- hot stacks of polls (struct hot in analysis_int.h) ---------------- */

int hot_init(struct hot *h)
{
	memset(h, 0, sizeof(*h));
	return lib_map_init(&h->want, 64) || lib_map_init(&h->w, 256) ? -ENOMEM : 0;
}

int hot_want(struct hot *h, int32_t poll)
{
	int created;
	uint64_t *v;

	if (poll < 0)
		return 0;
	v = lib_map_get(&h->want, (uint64_t)poll, &created);
	if (!v)
		return -ENOMEM;
	if (!created)
		return 0;
	if (LIB_GROW(h->best, h->cap, h->n + 1))
		return -ENOMEM;
	h->n++;
	*v = h->n;
	return 0;
}

static int hot_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct hot *h = ctx;
	uint64_t *v;

	if (!p || p->id < 0 || !lib_map_find(&h->want, (uint64_t)p->id))
		return 0;
	v = lib_map_get(
		&h->w, (uint64_t)p->id << 32 | stack_canon(h->canon, h->ncanon, s->stack),
		NULL);
	if (!v)
		return -ENOMEM;
	*v += sample_weight(s);
	return 0;
}

int hot_walk(struct hot *h, const struct join *j)
{
	uint64_t k, *w;
	size_t i;
	int err;

	h->best_w = calloc(h->n + 1, sizeof(*h->best_w));
	if (!h->best_w)
		return -ENOMEM;
	err = analysis_stack_canon(j->trace, &h->canon);
	if (err)
		return err;
	h->ncanon = j->trace->nstacks;
	if (!h->n)
		return 0;
	memset(h->best, 0xff, h->n * sizeof(*h->best));
	err = join_for_each_sample(j, hot_sample, h);
	if (err)
		return err;
	i = 0;
	while (lib_map_next(&h->w, &i, &k, &w)) {
		uint32_t stack = (uint32_t)k;
		uint64_t *ix = lib_map_find(&h->want, k >> 32);

		if (!ix)
			continue;
		if (*w > h->best_w[*ix - 1] ||
		    (*w == h->best_w[*ix - 1] && stack < h->best[*ix - 1])) {
			h->best_w[*ix - 1] = *w;
			h->best[*ix - 1] = stack;
		}
	}
	return 0;
}

void hot_release(struct hot *h)
{
	lib_map_release(&h->want);
	lib_map_release(&h->w);
	free(h->canon);
	free(h->best);
	free(h->best_w);
}

size_t hot_frames(const struct hot *h, const struct trace *t, int32_t poll,
		  char lab[HOT_FRAMES][256])
{
	const uint64_t *ix = poll >= 0 ? lib_map_find(&h->want, (uint64_t)poll) : NULL;

	return ix ? analysis_stack_labels(t, h->best[*ix - 1], lab, HOT_FRAMES) : 0;
}

/* ---- causes, as text and JSON ----------------------------------------- */

void analysis_causes_text(const struct offcpu *oc, const struct hot *h,
			  const struct delay_cause *c, size_t n, uint64_t all,
			  const uint64_t *own, FILE *out)
{
	const struct trace *t = oc->trace;
	char d[32], a[256], b[128], lab[HOT_FRAMES][256];
	/* a lean trace's short polls are not in it: time in them reads as
	 * no poll's */
	int lean = analysis_is_lean(t, NULL, NULL, NULL);

	for (size_t i = 0; i < n && i < TEXT_CAUSES; i++) {
		const struct delay_cause *x = &c[i];
		int pct = all ? (int)(100.0 * (double)x->ns / (double)all + 0.5) : 0;
		int mine = own && x->task == *own;

		text_duration(x->ns, d, sizeof(d));
		if (i)
			fputs("; ", out);
		switch (x->kind) {
		case CAUSE_POLL: {
			size_t k, m = hot_frames(h, t, x->poll, lab);

			if (mine)
				fprintf(out, "CPU %s (%d%%)", d, pct);
			else
				fprintf(out, "polling %s %s (%d%%)",
					analysis_task_label(oc->join, x->task, a,
							    sizeof(a)),
					d, pct);
			for (k = 0; k < m; k++)
				fprintf(out, "%s%s", k ? " <- " : " in ", lab[k]);
			break;
		}
		case CAUSE_BLOCKED:
			if (x->frame != UINT32_MAX)
				site_label(t, x->frame, x->under, a, sizeof(a));
			else
				strcpy(a, "?");
			fprintf(out, "blocked %s (%d%%) in %s", d, pct, a);
			break;
		case CAUSE_RUNQ:
			fprintf(out, "runqueue %s (%d%%) behind %s", d, pct,
				analysis_holder_label(t, x->holder, b, sizeof(b)));
			break;
		case CAUSE_PARKED:
			fprintf(out, "parked %s (%d%%)", d, pct);
			break;
		case CAUSE_RUNNING:
			fprintf(out,
				lean ? "running outside the polls recorded %s (%d%%)"
				     : "running outside polls %s (%d%%)",
				d, pct);
			break;
		}
		if ((x->kind == CAUSE_BLOCKED || x->kind == CAUSE_RUNQ) && x->in_poll &&
		    !mine)
			fprintf(out, " inside %s's poll",
				analysis_task_label(oc->join, x->task, a, sizeof(a)));
	}
}

/* A frame's label, or null for UINT32_MAX. */
static void frame_json(const struct trace *t, uint32_t frame, struct lib_json *w)
{
	char a[256];

	if (frame == UINT32_MAX) {
		lib_json_null(w);
		return;
	}
	analysis_frame_label(t, frame, a, sizeof(a));
	lib_json_str(w, a);
}

void analysis_causes_json(const struct offcpu *oc, const struct hot *h,
			  const struct delay_cause *c, size_t n, struct lib_json *w)
{
	static const char *const kind[] = {"poll", "blocked", "runqueue", "parked",
					   "running"};
	const struct trace *t = oc->trace;
	char lab[HOT_FRAMES][256];

	lib_json_array_begin(w);
	for (size_t i = 0; i < n; i++) {
		const struct delay_cause *x = &c[i];

		lib_json_object_begin(w);
		lib_json_str_field(w, "what", kind[x->kind]);
		lib_json_uint_field(w, "ns", x->ns);
		if (x->kind == CAUSE_POLL || x->in_poll) {
			const struct task_stat *ts = join__task(oc->join, x->task);

			lib_json_uint_field(w, "task", trace_task_number(x->task));
			lib_json_str_field(w, "task_name", ts ? ts->name : NULL);
		}
		if (x->kind == CAUSE_POLL) {
			size_t m = hot_frames(h, t, x->poll, lab);

			lib_json_int_field(w, "poll", x->poll);
			lib_json_name(w, "stack");
			lib_json_array_begin(w);
			for (size_t k = 0; k < m; k++)
				lib_json_str(w, lab[k]);
			lib_json_array_end(w);
		} else if (x->kind == CAUSE_BLOCKED) {
			lib_json_name(w, "function");
			frame_json(t, x->frame, w);
			lib_json_name(w, "call");
			frame_json(t, x->under, w);
		} else if (x->kind == CAUSE_RUNQ) {
			lib_json_name(w, "holder");
			analysis_holder_json(t, x->holder, NULL, w);
		}
		lib_json_object_end(w);
	}
	lib_json_array_end(w);
}
