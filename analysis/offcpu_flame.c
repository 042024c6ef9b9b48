/* SPDX-License-Identifier: MIT */
/*
 * offcpu_flame.c - the work behind `d9prof offcpu` and `d9prof flame
 * --poll`: off-CPU flamegraphs in microseconds, and one poll's CPU and
 * off-CPU time in one picture.
 *
 * Intervals collapse to (root, stack, preempted) -> ns first; ns become us
 * per distinct path, so a million 3 us waits do not each lose their
 * rounding.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"

#define PREEMPTED_LABEL "[preempted]"
#define DEFAULT_HZ	999 /* the recorder's default -F */

/* Aggregation keys: root << 33 | preempted << 32 | stack. Roots: */
#define ROOT_NO_POLL 0
#define ROOT_IDLE    1
#define ROOT_TASK0   2 /* task index + ROOT_TASK0 */
#define ROOT_CPU     0 /* flame --poll: "[cpu]" */
#define ROOT_OFFCPU  1 /* flame --poll: "[off-cpu]" */

static uint64_t agg_key(uint64_t root, int preempted, uint32_t stack)
{
	return root << 33 | (uint64_t)(preempted != 0) << 32 | stack;
}

static uint64_t ns_to_us(uint64_t ns)
{
	return ns / 1000 + (ns % 1000 >= 500);
}

static const char *trace_command(const struct trace *t)
{
	static const char *const keys[] = {"cmdline", "command", "comm", "exe"};
	const char *v;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = analysis_meta(t, keys[i]);
		if (v && *v)
			return v;
	}
	return NULL;
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
typedef int (*root_label_fn)(struct flame *f, const struct join *j, uint64_t root,
			     uint32_t *id);

static int offcpu_root(struct flame *f, const struct join *j, uint64_t root, uint32_t *id)
{
	if (root == ROOT_NO_POLL)
		return flame_intern(f, "[no poll]", 9, id);
	if (root == ROOT_IDLE)
		return flame_intern(f, "[idle]", 6, id);
	return analysis_task_root(f, &j->tasks[root - ROOT_TASK0], id);
}

static int poll_root(struct flame *f, const struct join *j, uint64_t root, uint32_t *id)
{
	if (root == ROOT_CPU)
		return flame_intern(f, "[cpu]", 5, id);
	return flame_intern(f, "[off-cpu]", 9, id);
}

/*
 * Fill @f from @agg, (root, preempted, stack) -> weight, converting each
 * weight with @conv (NULL: as is). Entries go in key order, so the picture
 * does not depend on hash order.
 */
static int fill(struct flame *f, const struct join *j, const struct amap *agg,
		root_label_fn root_label, uint64_t (*conv)(uint64_t, const void *),
		const void *ctx, uint64_t *total)
{
	const struct trace *t = j->trace;
	struct agg_ent *ent = malloc((agg->n + 1) * sizeof(*ent));
	uint32_t *flab = malloc((t->nframes + 1) * sizeof(*flab));
	uint32_t *ids = NULL, pre, rootlab = 0;
	uint64_t last_root = UINT64_MAX;
	size_t cap = 0, m = 0, i, n;
	int err = -ENOMEM;

	if (!ent || !flab ||
	    flame_intern(f, PREEMPTED_LABEL, strlen(PREEMPTED_LABEL), &pre))
		goto out;
	memset(flab, 0xff, (t->nframes + 1) * sizeof(*flab));
	for (i = 0; i < agg->cap; i++) {
		if (agg->keys[i] == AMAP_EMPTY)
			continue;
		ent[m].key = agg->keys[i];
		ent[m].val = agg->vals[i];
		m++;
	}
	qsort(ent, m, sizeof(*ent), agg_ent_cmp);
	for (i = 0; i < m; i++) {
		uint64_t root = ent[i].key >> 33, w;
		int preempted = (ent[i].key >> 32) & 1;

		w = conv ? conv(ent[i].val, ctx) : ent[i].val;
		if (!w)
			continue;
		if (root != last_root) {
			err = root_label(f, j, root, &rootlab);
			if (err)
				goto out;
			last_root = root;
		}
		err = analysis_stack_path(f, t, flab, (uint32_t)ent[i].key, &ids, &cap, 1,
					  &n);
		if (err)
			goto out;
		ids[0] = rootlab;
		if (preempted) {
			if (n + 2 > cap) {
				uint32_t *tmp = realloc(ids, (n + 2) * sizeof(*ids));

				err = -ENOMEM;
				if (!tmp)
					goto out;
				ids = tmp;
				cap = n + 2;
			}
			ids[++n] = pre;
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
	const char *cmd = trace_command(t);
	int n = 0;

	if (o->title)
		snprintf(title, sizeof(title), "%s", o->title);
	else if (cmd)
		snprintf(title, sizeof(title), "Off-CPU flame graph: %s", cmd);
	else
		snprintf(title, sizeof(title), "Off-CPU flame graph");
	n = snprintf(sub, sizeof(sub),
		     "microseconds off-CPU, stacks at switch-out: %s in %" PRIu64
		     " intervals (%s preempted, marked [preempted])",
		     fmt_duration(res->ns, a, sizeof(a)), res->intervals,
		     fmt_duration(res->preempted_ns, b, sizeof(b)));
	if (o->have_task && n > 0 && (size_t)n < sizeof(sub)) {
		const struct task_stat *ts = join__task(oc->join, o->task);
		char name[256] = "";

		if (ts && ts->name)
			analysis_clean_name(ts->name, name, sizeof(name));
		n += snprintf(sub + n, sizeof(sub) - n, "; task %" PRIu64 "%s%s", o->task,
			      *name ? " " : "", name);
	}
	if (o->min_poll_ns && n > 0 && (size_t)n < sizeof(sub))
		n += snprintf(sub + n, sizeof(sub) - n, "; polls >= %s",
			      fmt_duration(o->min_poll_ns, c, sizeof(c)));
	if (o->min_block_ns && n > 0 && (size_t)n < sizeof(sub))
		n += snprintf(sub + n, sizeof(sub) - n, "; intervals >= %s",
			      fmt_duration(o->min_block_ns, c, sizeof(c)));
	if (!o->idle && !o->have_task && !o->min_poll_ns && oc->ns[OFFCPU_IDLE] &&
	    n > 0 && (size_t)n < sizeof(sub))
		snprintf(sub + n, sizeof(sub) - n, "; %s parked left out (--idle)",
			 fmt_duration(oc->ns[OFFCPU_IDLE], c, sizeof(c)));
	return flame__write_svg(f, out, title, sub, "us");
}

int analysis__offcpu(const struct offcpu *oc, const struct offcpu_opts *o, FILE *out)
{
	const struct join *j;
	const struct trace *t;
	struct flame *f = NULL;
	struct amap agg = {0};
	struct offcpu_result res = {0};
	uint64_t want = 0, total = 0;
	size_t i;
	int err = -ENOMEM;

	if (!oc || !o || !out)
		return -EINVAL;
	j = oc->join;
	t = oc->trace;
	if (o->have_task) {
		const struct task_stat *ts = join__task(j, o->task);

		if (!ts)
			return -ENOENT;
		want = (uint64_t)(ts - j->tasks) + ROOT_TASK0;
	}
	if (j->ntasks >= (1u << 30))
		return -EOVERFLOW;
	f = flame__new();
	if (!f || amap_init(&agg, 1024))
		goto out;
	f->task_roots = 1;

	for (i = 0; i < t->nswitches; i++) {
		const struct trace_switch *s = &t->switches[i];
		const struct offcpu_switch *w = &oc->sw[i];
		uint64_t root, *v;

		if (w->len < o->min_block_ns)
			continue;
		if (w->where == OFFCPU_IN_POLL) {
			const struct poll *p = &j->polls[w->poll];
			const struct task_stat *ts = join__task(j, p->task);

			if (!ts || p->end - p->start < o->min_poll_ns)
				continue;
			root = (uint64_t)(ts - j->tasks) + ROOT_TASK0;
			if (o->have_task && root != want)
				continue;
		} else if (o->have_task || o->min_poll_ns) {
			continue; /* asked for polls: this was in none */
		} else if (w->where == OFFCPU_IDLE) {
			if (!o->idle)
				continue;
			root = ROOT_IDLE;
		} else {
			root = ROOT_NO_POLL;
		}
		v = amap_get(&agg, agg_key(root, s->preempted, s->stack), NULL);
		if (!v)
			goto out;
		*v += w->ns;
		res.intervals++;
		res.ns += w->ns;
		if (s->preempted)
			res.preempted_ns += w->ns;
	}
	res.stacks = agg.n;
	err = fill(f, j, &agg, offcpu_root, conv_us, NULL, &total);
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
	amap_release(&agg);
	flame__free(f);
	return err;
}

/* ---- d9prof flame --poll ------------------------------------------------ */

/* One sample's worth in ns: 1e9 / meta "frequency"; 0 if absent or bad. */
static double sample_period_ns(const struct trace *t)
{
	const char *v = analysis_meta(t, "frequency");
	char *end;
	double hz;

	if (!v || !*v)
		return 0;
	hz = strtod(v, &end);
	if (end == v || (*end && strcmp(end, "Hz") && strcmp(end, " Hz")) || !(hz > 0) ||
	    hz > 1e9)
		return 0;
	return 1e9 / hz;
}

/* The samples of one poll, per stack. */
struct poll_walk {
	struct amap *agg;
	uint32_t poll;
	struct poll_flame_result *res;
};

static int poll_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct poll_walk *pw = ctx;
	uint64_t *v;

	if (!p || p->id != (int32_t)pw->poll)
		return 0;
	v = amap_get(pw->agg, agg_key(ROOT_CPU, 0, s->stack), NULL);
	if (!v)
		return -ENOMEM;
	*v += sample_weight(s);
	pw->res->samples += sample_weight(s);
	return 0;
}

int analysis__poll_flame(const struct offcpu *oc, const struct poll_flame_opts *o,
			 FILE *out)
{
	const struct join *j;
	const struct trace *t;
	const struct poll *p;
	struct flame *f = NULL;
	struct amap agg = {0};
	struct poll_flame_result res = {0};
	uint64_t total = 0;
	double period;
	size_t i;
	int err = -ENOMEM;

	if (!oc || !o || !out)
		return -EINVAL;
	j = oc->join;
	t = oc->trace;
	if (o->poll >= j->npolls)
		return -ENOENT;
	p = &j->polls[o->poll];
	period = sample_period_ns(t);
	res.period_guessed = period == 0;
	if (!period)
		period = 1e9 / DEFAULT_HZ;
	res.period_us = period / 1000;

	f = flame__new();
	if (!f || amap_init(&agg, 256))
		goto out;
	f->task_roots = 1;
	/* CPU: sample weight per stack, then us; off-CPU: ns per (stack,
	 * preempted), then us; fill() then adds the values as they are */
	{
		struct poll_walk pw = {.agg = &agg, .poll = o->poll, .res = &res};

		err = join_for_each_sample(j, poll_sample, &pw);
		if (err)
			goto out;
		err = -ENOMEM;
	}
	for (i = 0; i < agg.cap; i++)
		if (agg.keys[i] != AMAP_EMPTY)
			agg.vals[i] = (uint64_t)(agg.vals[i] * period / 1000 + 0.5);
	for (i = 0; i < t->nswitches; i++) {
		const struct trace_switch *s = &t->switches[i];
		uint64_t *v;

		if (oc->sw[i].poll != (int32_t)o->poll)
			continue;
		v = amap_get(&agg, agg_key(ROOT_OFFCPU, s->preempted, s->stack), NULL);
		if (!v)
			goto out;
		/* ns for now: the conversion below needs the sums */
		*v += oc->sw[i].ns;
	}
	for (i = 0; i < agg.cap; i++)
		if (agg.keys[i] != AMAP_EMPTY && agg.keys[i] >> 33 == ROOT_OFFCPU)
			agg.vals[i] = ns_to_us(agg.vals[i]);
	err = fill(f, j, &agg, poll_root, NULL, NULL, &total);
	if (err)
		goto out;
	for (i = 0; i < agg.cap; i++)
		if (agg.keys[i] != AMAP_EMPTY && agg.keys[i] >> 33 == ROOT_CPU)
			res.cpu_us += agg.vals[i];
	res.offcpu_us = total - res.cpu_us;

	if (o->format == FLAME_FOLDED) {
		err = flame__write_folded(f, out);
	} else {
		char title[512], sub[640], a[32], b[32];
		const struct task_stat *ts = join__task(j, p->task);
		char name[256] = "";

		if (ts && ts->name)
			analysis_clean_name(ts->name, name, sizeof(name));
		if (o->title)
			snprintf(title, sizeof(title), "%s", o->title);
		else
			snprintf(title, sizeof(title),
				 "Poll %" PRIu32 ": task %" PRIu64 "%s%s", o->poll,
				 p->task, *name ? " " : "", name);
		snprintf(sub, sizeof(sub),
			 "microseconds: [cpu] %" PRIu64 " samples x %.0f us (%s%s), "
			 "[off-cpu] time off-CPU at switch-out stacks; poll lasted %s, "
			 "%s off-CPU, on thread %" PRIu32,
			 res.samples, res.period_us,
			 res.period_guessed ? "frequency unknown: assumed " : "1e6 / ",
			 res.period_guessed ? "999 Hz" : "meta frequency",
			 fmt_duration(p->end - p->start, a, sizeof(a)),
			 fmt_duration(oc->polls[o->poll].ns, b, sizeof(b)), p->tid);
		err = flame__write_svg(f, out, title, sub, "us");
	}
	if (!err && !res.samples && !oc->polls[o->poll].switches)
		err = -ENODATA;
out:
	if (o->result)
		*o->result = res;
	amap_release(&agg);
	flame__free(f);
	return err;
}
