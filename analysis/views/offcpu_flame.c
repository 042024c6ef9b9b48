/* SPDX-License-Identifier: MIT */
/*
 * offcpu_flame.c - the work behind `d9prof offcpu` and `d9prof flame
 * --poll`: off-CPU flamegraphs in microseconds, and one poll's CPU and
 * off-CPU time in one picture.
 *
 * Intervals collapse to (root, part) -> ns first, a part being a stack
 * blocked, or a stack waiting on the run queue behind a holder (after a
 * wakeup, or preempted); ns become us per distinct path, so a million 3 us
 * waits do not each lose their rounding.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/group.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/losses.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/stacks.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/map.h"
#include "lib/text.h"

#define PREEMPTED_LABEL "[preempted]"
#define DEFAULT_HZ	999 /* the recorder's default -F */

/* Aggregation keys: root << 34 | kind << 32 | x, x a stack id (PART_STACK)
 * or a run-queue part id (struct parts). Roots: */
#define ROOT_NO_POLL 0
#define ROOT_IDLE    1
#define ROOT_GROUP0  2 /* group + ROOT_GROUP0 (struct groups) */
#define ROOT_CPU     0 /* flame --poll: "[cpu]" */
#define ROOT_OFFCPU  1 /* flame --poll: "[off-cpu]" */

enum part_kind {
	PART_STACK = 0,	    /* CPU samples, or blocked */
	PART_WOKEN = 1,	    /* on the run queue after a wakeup */
	PART_PREEMPTED = 2, /* on the run queue after a preemption */
};

/* Weights per (root, part), and the run-queue parts: (stack, holder). */
struct parts {
	struct lib_map agg;
	struct lib_map ids; /* holder << 32 | stack -> part id */
	uint32_t *stack, *holder;
	size_t n, cap;
};

static uint64_t agg_key(uint64_t root, enum part_kind kind, uint32_t x)
{
	return root << 34 | (uint64_t)kind << 32 | x;
}

static int parts_init(struct parts *ps, size_t hint)
{
	memset(ps, 0, sizeof(*ps));
	return lib_map_init(&ps->agg, hint) || lib_map_init(&ps->ids, 64) ? -ENOMEM : 0;
}

static void parts_release(struct parts *ps)
{
	lib_map_release(&ps->agg);
	lib_map_release(&ps->ids);
	free(ps->stack);
	free(ps->holder);
}

static int parts_add(struct parts *ps, uint64_t root, enum part_kind kind, uint32_t stack,
		     uint32_t holder, uint64_t w)
{
	uint32_t x = stack;
	uint64_t *v;
	int created;

	if (!w)
		return 0;
	if (kind != PART_STACK) {
		v = lib_map_get(&ps->ids, (uint64_t)holder << 32 | stack, &created);
		if (!v)
			return -ENOMEM;
		if (created) {
			/* two arrays on one count: each grows the same way */
			size_t scap = ps->cap, hcap = ps->cap;

			if (LIB_GROW(ps->stack, scap, ps->n + 1) ||
			    LIB_GROW(ps->holder, hcap, ps->n + 1))
				return -ENOMEM;
			ps->cap = scap;
			ps->stack[ps->n] = stack;
			ps->holder[ps->n] = holder;
			*v = ps->n++;
		}
		x = (uint32_t)*v;
	}
	v = lib_map_get(&ps->agg, agg_key(root, kind, x), NULL);
	if (!v)
		return -ENOMEM;
	*v += w;
	return 0;
}

/* Switch @i's weight: its blocked part under its stack, its run-queue
 * part under its stack and "[runqueue: holder]", one such frame per
 * thread that held the CPU meanwhile (analysis_switch_holds()). */
static int parts_add_switch(struct parts *ps, const struct offcpu *oc, size_t i,
			    uint64_t root)
{
	const struct trace_switch *s = &oc->trace->switches[i];
	const struct offcpu_switch *w = &oc->sw[i];
	struct trace_hold h[TRACE_MAX_HOLDS];
	size_t nh = analysis_switch_holds(oc->trace, s, w->runq, h);
	int err;

	err = parts_add(ps, root, PART_STACK, s->stack, 0, w->ns - w->runq);
	for (size_t k = 0; k < nh && !err; k++)
		err = parts_add(ps, root, s->preempted ? PART_PREEMPTED : PART_WOKEN,
				s->stack, h[k].tid, h[k].ns);
	return err;
}

static uint64_t ns_to_us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

struct agg_ent {
	uint64_t key;
	uint64_t val;
};

static int agg_ent_cmp(const void *a, const void *b)
{
	const struct agg_ent *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Label id of root @root: the task roots, or the fixed ones in @fixed. */
typedef int (*root_label_fn)(struct flame *f, const void *ctx, uint64_t root,
			     uint32_t *id);

static int offcpu_root(struct flame *f, const void *ctx, uint64_t root, uint32_t *id)
{
	char lab[300];

	if (root == ROOT_NO_POLL)
		return flame_intern(f, "[no poll]", 9, id);
	if (root == ROOT_IDLE)
		return flame_intern(f, "[idle]", 6, id);
	groups__label(ctx, (uint32_t)(root - ROOT_GROUP0), lab, sizeof(lab));
	return flame_intern(f, lab, strlen(lab), id);
}

static int poll_root(struct flame *f, const void *ctx, uint64_t root, uint32_t *id)
{
	if (root == ROOT_CPU)
		return flame_intern(f, "[cpu]", 5, id);
	return flame_intern(f, "[off-cpu]", 9, id);
}

/*
 * Fill @f from @ps, (root, part) -> weight, converting each weight with
 * @conv (NULL: as is). Entries go in key order, so the picture does not
 * depend on hash order. Stacks under roots from @cut_from up are cut where
 * the runtime called the task (join__keep()).
 */
static int fill(struct flame *f, const struct join *j, const struct parts *ps,
		uint64_t cut_from, root_label_fn root_label, const void *label_ctx,
		uint64_t (*conv)(uint64_t, const void *), const void *ctx,
		uint64_t *total)
{
	const struct trace *t = j->trace;
	const struct lib_map *agg = &ps->agg;
	struct agg_ent *ent = malloc((lib_map_count(agg) + 1) * sizeof(*ent));
	uint32_t *flab = malloc((t->nframes + 1) * sizeof(*flab));
	uint32_t *ids = NULL, pre, rootlab = 0;
	uint64_t last_root = UINT64_MAX;
	size_t cap = 0, m = 0, i, n;
	uint64_t key, *val;
	int err = -ENOMEM;

	if (!ent || !flab ||
	    flame_intern(f, PREEMPTED_LABEL, strlen(PREEMPTED_LABEL), &pre))
		goto out;
	memset(flab, 0xff, (t->nframes + 1) * sizeof(*flab));
	i = 0;
	while (lib_map_next(agg, &i, &key, &val)) {
		ent[m].key = key;
		ent[m].val = *val;
		m++;
	}
	qsort(ent, m, sizeof(*ent), agg_ent_cmp);
	for (i = 0; i < m; i++) {
		uint64_t root = ent[i].key >> 34, w;
		enum part_kind kind = (enum part_kind)((ent[i].key >> 32) & 3);
		uint32_t x = (uint32_t)ent[i].key, stack = x, rq = 0;

		w = conv ? conv(ent[i].val, ctx) : ent[i].val;
		if (!w)
			continue;
		if (root != last_root) {
			err = root_label(f, label_ctx, root, &rootlab);
			if (err)
				goto out;
			last_root = root;
		}
		if (kind != PART_STACK) {
			char h[96], lab[128];
			int k;

			stack = ps->stack[x];
			k = snprintf(
				lab, sizeof(lab), "[runqueue: %s]",
				analysis_holder_label(t, ps->holder[x], h, sizeof(h)));
			/* no holder: older than the CPU's history, where the
			 * trace has them at all */
			if (ps->holder[x] == 0 && analysis_runq_holders_missing(t))
				k = snprintf(lab, sizeof(lab), "[runqueue]");
			err = flame_intern(f, lab,
					   (size_t)k < sizeof(lab) ? (size_t)k
								   : sizeof(lab) - 1,
					   &rq);
			if (err)
				goto out;
		}
		err = analysis_stack_path(f, t, flab, stack,
					  root >= cut_from ? join__keep(j, stack)
							   : UINT32_MAX,
					  &ids, &cap, 1, &n);
		if (err)
			goto out;
		ids[0] = rootlab;
		if (kind != PART_STACK) {
			err = -ENOMEM;
			if (LIB_GROW(ids, cap, n + 3))
				goto out;
			if (kind == PART_PREEMPTED)
				ids[++n] = pre;
			ids[++n] = rq;
		}
		err = flame_add_ids(f, ids, n + 1, w, NULL);
		if (err)
			goto out;
		*total += w;
	}
	err = 0;
out:
	free(ent);
	free(flab);
	free(ids);
	return err;
}

static uint64_t conv_us(uint64_t ns, const void *ctx)
{
	return ns_to_us(ns);
}

/* ---- d9prof offcpu ------------------------------------------------------ */

static int write_offcpu_svg(const struct offcpu *oc, const struct offcpu_opts *o,
			    const struct flame *f, const struct offcpu_result *res,
			    FILE *out)
{
	const struct trace *t = oc->trace;
	char title[512], sub[640], a[32], b[32], c[32];
	int n = 0;

	analysis_svg_title(t, o->title, "Off-CPU flame graph", title, sizeof(title));
	n = snprintf(
		sub, sizeof(sub),
		"microseconds off-CPU, stacks at switch-out: %s in %" PRIu64
		" intervals (%s waiting for a CPU, marked [runqueue: holder]%s)",
		text_duration(res->ns, a, sizeof(a)), res->intervals,
		text_duration(res->runq_ns, b, sizeof(b)),
		!oc->runq_split ? ": preempted only, wakeups not recorded"
		: analysis_runq_holders_missing(oc->trace)
			? ", the holder approximate: the thread that preempted, else the one before"
			: ", charged to what ran by time");
	if (oc->join->sel.on && n > 0 && (size_t)n < sizeof(sub)) {
		char what[160], lab[300];

		if (oc->join->sel.name)
			task_sel_text(&oc->join->sel, what, sizeof(what));
		else
			snprintf(what, sizeof(what), "%s",
				 analysis_task_label(oc->join,
						     join__selected(oc->join)->task, lab,
						     sizeof(lab)));
		n += snprintf(sub + n, sizeof(sub) - n, "; %s", what);
	}
	if (o->min_poll_ns && n > 0 && (size_t)n < sizeof(sub))
		n += snprintf(sub + n, sizeof(sub) - n, "; polls >= %s",
			      text_duration(o->min_poll_ns, c, sizeof(c)));
	if (o->min_block_ns && n > 0 && (size_t)n < sizeof(sub))
		n += snprintf(sub + n, sizeof(sub) - n, "; intervals >= %s",
			      text_duration(o->min_block_ns, c, sizeof(c)));
	if (!o->idle && !oc->join->sel.on && !o->min_poll_ns && oc->ns[OFFCPU_IDLE] &&
	    n > 0 && (size_t)n < sizeof(sub))
		n += snprintf(sub + n, sizeof(sub) - n, "; %s parked left out (--idle)",
			      text_duration(oc->ns[OFFCPU_IDLE], c, sizeof(c)));
	if (n > 0 && (size_t)n < sizeof(sub))
		n += span_filter_note(&o->span, res->weight, "us", sub + n,
				      sizeof(sub) - n);
	if (n > 0 && (size_t)n < sizeof(sub))
		losses_note(t, LOSS_OFFCPU | LOSS_POLLS | LOSS_WAKEUPS, sub + n,
			    sizeof(sub) - n);
	return flame__write_svg(f, out, title, sub, "us");
}

int analysis__offcpu(const struct offcpu *oc, const struct offcpu_opts *o, FILE *out)
{
	const struct join *j;
	const struct trace *t;
	struct flame *f = NULL;
	struct parts ps;
	struct offcpu_result res = {0};
	struct groups *g = NULL;
	uint64_t total = 0;
	size_t i;
	int err;

	if (!oc || !o || !out)
		return -EINVAL;
	j = oc->join;
	t = oc->trace;
	if (join__keeps_none(j))
		return -ENOENT;
	if (j->ntasks >= (1u << 29))
		return -EOVERFLOW;
	err = groups__new(j, o->by, NULL, &g);
	if (err)
		return err;
	err = -ENOMEM;
	f = flame__new();
	if (parts_init(&ps, 1024) || !f)
		goto out;
	f->task_roots = 1;
	/* blue: the off-CPU convention */
	flame__set_style(f, &(struct flame_style){.offcpu = 1, .reverse = o->reverse});

	for (i = 0; i < t->nswitches; i++) {
		const struct trace_switch *s = &t->switches[i];
		const struct offcpu_switch *w = &oc->sw[i];
		uint64_t root;
		int32_t ti = -1;
		uint32_t grp;

		if (w->len < o->min_block_ns)
			continue;
		if (span_filter_on(&o->span) &&
		    !spans__kept_at(o->span.spans, s->tid, s->time))
			continue;
		if (w->where == OFFCPU_IN_POLL) {
			const struct poll *p = join__poll(j, (uint32_t)w->poll);
			const struct task_stat *ts = join__task(j, p->task);

			if (!ts || p->end - p->start < o->min_poll_ns)
				continue;
			ti = (int32_t)(ts - j->tasks);
		} else if (w->where == OFFCPU_IN_TASK && !o->min_poll_ns) {
			ti = w->task; /* zero-code: its task, no poll */
		} else if (j->sel.on || o->min_poll_ns) {
			continue; /* asked for polls: this was in none */
		} else if (w->where == OFFCPU_IDLE && !o->idle) {
			continue;
		}
		grp = groups__of(g, ti, s->tid);
		if (grp == UINT32_MAX)
			continue;
		if (grp != GROUP_NONE)
			root = (uint64_t)grp + ROOT_GROUP0;
		else if (w->where == OFFCPU_IDLE)
			root = ROOT_IDLE;
		else
			root = ROOT_NO_POLL;
		err = parts_add_switch(&ps, oc, i, root);
		if (err)
			goto out;
		res.intervals++;
		res.ns += w->ns;
		res.runq_ns += w->runq;
		if (s->preempted)
			res.preempted_ns += w->ns;
	}
	res.stacks = ps.agg.n;
	err = fill(f, j, &ps, g->by == GROUP_THREAD ? UINT64_MAX : ROOT_GROUP0,
		   offcpu_root, g, conv_us, NULL, &total);
	if (err)
		goto out;
	res.weight = total;
	if (o->format == FLAME_FOLDED)
		err = flame__write_folded(f, out);
	else
		err = write_offcpu_svg(oc, o, f, &res, out);
	if (!err && !res.intervals)
		err = -ENODATA;
out:
	if (o->result)
		*o->result = res;
	parts_release(&ps);
	flame__free(f);
	groups__free(g);
	return err;
}

/* ---- d9prof flame --poll ------------------------------------------------ */

/* The samples of one poll, per stack. */
struct poll_walk {
	struct parts *ps;
	uint32_t poll;
	struct poll_flame_result *res;
};

static int poll_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct poll_walk *pw = ctx;

	if (!p || p->id != (int32_t)pw->poll)
		return 0;
	pw->res->samples += sample_weight(s);
	return parts_add(pw->ps, ROOT_CPU, PART_STACK, s->stack, 0, sample_weight(s));
}

int analysis__poll_flame(const struct offcpu *oc, const struct poll_flame_opts *o,
			 FILE *out)
{
	const struct join *j;
	const struct trace *t;
	const struct poll *p;
	struct flame *f = NULL;
	struct parts ps;
	struct lib_map *agg = &ps.agg;
	struct poll_flame_result res = {0};
	uint64_t total = 0, key, *val;
	double period;
	size_t i;
	int err = -ENOMEM;

	if (!oc || !o || !out)
		return -EINVAL;
	j = oc->join;
	t = oc->trace;
	if (o->poll >= j->npolls || !(p = join__poll(j, o->poll)))
		return -ENOENT;
	period = analysis_period_ns(t);
	res.period_guessed = period == 0;
	if (!period)
		period = 1e9 / DEFAULT_HZ;
	res.period_us = period / 1000;

	f = flame__new();
	if (parts_init(&ps, 256) || !f)
		goto out;
	f->task_roots = 1;
	/* CPU: sample weight per stack, then us; off-CPU: ns per part, then
	 * us; fill() then adds the values as they are */
	{
		struct poll_walk pw = {.ps = &ps, .poll = o->poll, .res = &res};

		err = join_for_each_sample(j, poll_sample, &pw);
		if (err)
			goto out;
		err = -ENOMEM;
	}
	for (i = 0; lib_map_next(agg, &i, &key, &val);)
		*val = (uint64_t)(*val * period / 1000 + 0.5);
	for (i = 0; i < t->nswitches; i++) {
		if (oc->sw[i].poll != (int32_t)o->poll)
			continue;
		/* ns for now: the conversion below needs the sums */
		err = parts_add_switch(&ps, oc, i, ROOT_OFFCPU);
		if (err)
			goto out;
	}
	err = -ENOMEM;
	for (i = 0; lib_map_next(agg, &i, &key, &val);)
		if (key >> 34 == ROOT_OFFCPU)
			*val = ns_to_us(*val);
	err = fill(f, j, &ps, 0, poll_root, NULL, NULL, NULL, &total);
	if (err)
		goto out;
	for (i = 0; lib_map_next(agg, &i, &key, &val);)
		if (key >> 34 == ROOT_CPU)
			res.cpu_us += *val;
	res.offcpu_us = total - res.cpu_us;

	if (o->format == FLAME_FOLDED) {
		err = flame__write_folded(f, out);
	} else {
		char title[512], sub[640], a[32], b[32], c[32];
		const struct task_stat *ts = join__task(j, p->task);
		char name[256] = "";
		int n;

		if (ts && ts->name)
			analysis_clean_name(ts->name, name, sizeof(name));
		if (o->title)
			snprintf(title, sizeof(title), "%s", o->title);
		else
			snprintf(title, sizeof(title),
				 "Poll %" PRIu32 ": task %" PRIu64 "%s%s", o->poll,
				 trace_task_number(p->task), *name ? " " : "", name);
		n = snprintf(
			sub, sizeof(sub),
			"microseconds: [cpu] %" PRIu64 " samples x %.0f us (%s%s), "
			"[off-cpu] time off-CPU at switch-out stacks; poll lasted %s, "
			"%s off-CPU (%s on the run queue%s), on thread %" PRIu32,
			res.samples, res.period_us,
			res.period_guessed ? "frequency unknown: assumed " : "1e6 / ",
			res.period_guessed ? "999 Hz" : "sampling frequency",
			text_duration(p->end - p->start, a, sizeof(a)),
			text_duration(offcpu__poll(oc, o->poll)->ns, b, sizeof(b)),
			text_duration(offcpu__poll(oc, o->poll)->runq_ns, c, sizeof(c)),
			oc->runq_split ? "" : ": preempted only, wakeups not recorded",
			p->tid);
		if (n > 0 && (size_t)n < sizeof(sub))
			losses_note(oc->trace, LOSS_ALL, sub + n, sizeof(sub) - n);
		err = flame__write_svg(f, out, title, sub, "us");
	}
	if (!err && !res.samples && !offcpu__poll(oc, o->poll)->switches)
		err = -ENODATA;
out:
	if (o->result)
		*o->result = res;
	parts_release(&ps);
	flame__free(f);
	return err;
}
