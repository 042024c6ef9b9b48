/* SPDX-License-Identifier: MIT */
/*
 * report.c - the work behind `d9prof flame` and `d9prof tasks`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"
#include "lib/text.h"

char *fmt_duration(uint64_t ns, char *buf, size_t len)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	double v;
	int u = 1;

	if (ns < 1000) {
		snprintf(buf, len, "%" PRIu64 "ns", ns);
		return buf;
	}
	/* choose the unit after rounding, so 999.7us prints as 1.00ms */
	v = ns / 1000.0;
	while (u < 3 && v >= 999.5) {
		v /= 1000;
		u++;
	}
	if (v < 9.995)
		snprintf(buf, len, "%.2f%s", v, unit[u]);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f%s", v, unit[u]);
	else
		snprintf(buf, len, "%.0f%s", v, unit[u]);
	return buf;
}

void json_str(FILE *out, const char *s)
{
	const char *p = s;
	uint32_t cp;
	size_t k;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (; *p; p += k) {
		/* RFC 3629 exactly (lib/text.h): an overlong form, a surrogate
		 * or a code point past U+10FFFF is U+FFFD a byte, as a cut or
		 * lone byte is, so that strict parsers take every string */
		k = text_utf8(p, 4, &cp);
		if (!k) {
			fputs("\\ufffd", out);
			k = 1;
		} else if (cp == '"' || cp == '\\') {
			fprintf(out, "\\%c", (int)cp);
		} else if (!text_printable(cp)) {
			/* C0, DEL, C1, U+2028/2029 (line ends to JavaScript) and
			 * bidi controls: escaped, never raw on a terminal */
			fprintf(out, "\\u%04" PRIx32, cp);
		} else {
			fwrite(p, 1, k, out);
		}
	}
	fputc('"', out);
}

const char *analysis_meta(const struct trace *t, const char *key)
{
	const char *v = NULL;

	for (size_t i = 0; i < t->nmeta; i++)
		if (t->meta[i].key && !strcmp(t->meta[i].key, key))
			v = t->meta[i].value;
	return v;
}

/* Copy @s into @buf as a single-line, ';'-free name (task names come from
 * the target program and are printed and folded): text_clean(), then ';'
 * (which separates folded frames) as ':'. */
void analysis_clean_name(const char *s, char *buf, size_t len)
{
	size_t n = text_clean(s, buf, len);

	for (size_t i = 0; i < n; i++)
		if (buf[i] == ';')
			buf[i] = ':';
}

char *analysis_thread_label(const struct trace *t, uint32_t tid, char *buf, size_t len)
{
	const char *n = trace__thread_name(t, tid);
	char name[96];

	analysis_clean_name(n && *n ? n : "?", name, sizeof(name));
	snprintf(buf, len, "%s[%" PRIu32 "]", name, tid);
	return buf;
}

char *analysis_task_label(const struct join *j, uint64_t task, char *buf, size_t len)
{
	const struct task_stat *ts = join__task(j, task);
	char name[128] = "";

	if (ts && ts->name)
		analysis_clean_name(ts->name, name, sizeof(name));
	snprintf(buf, len, "task %" PRIu64 "%s%s", task, *name ? " " : "", name);
	return buf;
}

int analysis_task_root(struct flame *f, const struct task_stat *ts, uint32_t *id)
{
	char name[256], buf[300];
	int n;

	if (ts->name && *ts->name) {
		analysis_clean_name(ts->name, name, sizeof(name));
		n = snprintf(buf, sizeof(buf), "task %" PRIu64 " %s", ts->task, name);
	} else {
		n = snprintf(buf, sizeof(buf), "task %" PRIu64, ts->task);
	}
	return flame_intern(f, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1,
			    id);
}

const char *analysis_trace_command(const struct trace *t)
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

static int write_svg(const struct join *j, const struct groups *g, const struct flame_opts *o,
		     const struct flame *f, const struct flame_result *res, FILE *out)
{
	const struct trace *t = j->trace;
	char title[512], sub[640], dur[32], what[160];
	const char *cmd = analysis_trace_command(t);
	uint64_t all = j->samples, inpoll = j->samples_in_polls;
	int n;

	if (o->title)
		snprintf(title, sizeof(title), "%s", o->title);
	else if (cmd)
		snprintf(title, sizeof(title), "CPU flame graph: %s", cmd);
	else
		snprintf(title, sizeof(title), "CPU flame graph");

	if (o->sel.on && !o->sel.name) {
		const struct task_stat *ts = join__task(j, o->sel.id);
		char name[256] = "";

		if (ts->name)
			analysis_clean_name(ts->name, name, sizeof(name));
		n = snprintf(sub, sizeof(sub),
			     "task %" PRIu64 "%s%s: %" PRIu64 " samples in %" PRIu64
			     " polls (%.1f%% of all samples), longest poll %s",
			     ts->task, *name ? " " : "", name, res->weight, ts->polls,
			     all ? 100.0 * res->weight / all : 0.0,
			     fmt_duration(ts->longest_ns, dur, sizeof(dur)));
	} else if (o->sel.on) {
		n = snprintf(sub, sizeof(sub), "%s: %" PRIu64 " samples (%.1f%% of all samples)",
			     task_sel_text(&o->sel, what, sizeof(what)), res->weight,
			     all ? 100.0 * res->weight / all : 0.0);
	} else {
		n = snprintf(sub, sizeof(sub),
			     "%" PRIu64 " samples, %.1f%% inside polls of %zu tasks", all,
			     all ? 100.0 * inpoll / all : 0.0, j->ntasks);
	}
	if (n >= 0 && (size_t)n < sizeof(sub))
		n += snprintf(sub + n, sizeof(sub) - n, "; %s",
			      g->by == GROUP_NAME
				  ? (o->by == GROUP_AUTO ? "tasks grouped by name (many tasks; "
							   "--by task for one root each)"
							 : "tasks grouped by name")
			      : g->by == GROUP_THREAD ? "one root per thread"
						      : "one root per task");
	if (n >= 0 && (size_t)n < sizeof(sub) && o->min_poll_ns)
		n += snprintf(
		    sub + n, sizeof(sub) - n, "; only polls >= %s: %" PRIu64 " samples",
		    fmt_duration(o->min_poll_ns, dur, sizeof(dur)), res->weight);
	if (n >= 0 && (size_t)n < sizeof(sub))
		losses_note(t, LOSS_CPU | LOSS_POLLS, sub + n, sizeof(sub) - n);
	return flame__write_svg(f, out, title, sub, "samples");
}

/* Label ids of a stack's frames, cached per frame id: a frame is rendered
 * and interned once however many stacks and samples use it. */
static int frame_ids(struct flame *f, const struct trace *t, uint32_t *cache,
		     uint32_t fid, uint32_t *id)
{
	char buf[4096];
	int err;

	if (fid < t->nframes && cache[fid] != UINT32_MAX) {
		*id = cache[fid];
		return 0;
	}
	frame_label(t, fid, buf, sizeof(buf));
	err = flame_intern(f, buf, strlen(buf), id);
	if (!err && fid < t->nframes)
		cache[fid] = *id;
	return err;
}

/* Frames of stack @s (leaf first in the trace), or 0 frames if the id or
 * its bounds are bad. */
size_t analysis_stack_frames(const struct trace *t, uint32_t s, const uint32_t **fr)
{
	uint32_t a, b;

	if (s >= t->nstacks || !t->stack_off)
		return 0;
	a = t->stack_off[s];
	b = t->stack_off[s + 1];
	if (b < a || b > t->stack_off[t->nstacks])
		return 0;
	*fr = t->stack_frames + a;
	return b - a;
}

/* Label ids of stack @s root to leaf at (*ids)[at..], growing *ids; the
 * number of frames in *@n. */
int analysis_stack_path(struct flame *f, const struct trace *t, uint32_t *flab,
			uint32_t s, uint32_t **ids, size_t *cap, size_t at, size_t *n)
{
	const uint32_t *fr = NULL;
	size_t k, m = analysis_stack_frames(t, s, &fr);
	int err;

	if (at + m > *cap) {
		uint32_t *tmp = realloc(*ids, (at + m + 64) * sizeof(**ids));

		if (!tmp)
			return -ENOMEM;
		*ids = tmp;
		*cap = at + m + 64;
	}
	for (k = 0; k < m; k++) {
		err = frame_ids(f, t, flab, fr[m - 1 - k], &(*ids)[at + k]);
		if (err)
			return err;
	}
	*n = m;
	return 0;
}

/* 1 if stacks @a and @b have the same labels, in order. */
static int same_path(struct flame *f, const struct trace *t, uint32_t *flab, uint32_t a,
		     uint32_t b, uint32_t **ids, size_t *cap)
{
	size_t na, nb;

	if (analysis_stack_path(f, t, flab, a, ids, cap, 0, &na) ||
	    analysis_stack_path(f, t, flab, b, ids, cap, na, &nb))
		return 0;
	return na == nb && !memcmp(*ids, *ids + na, na * sizeof(**ids));
}

int analysis_stack_canon(const struct trace *t, uint32_t **out)
{
	struct flame *f = flame__new();
	uint32_t *flab = malloc((t->nframes + 1) * sizeof(*flab));
	uint32_t *canon = malloc((t->nstacks + 1) * sizeof(*canon));
	uint32_t *ids = NULL;
	size_t cap = 0, n, k;
	struct amap m = {0};
	int err = -ENOMEM;

	*out = NULL;
	if (!f || !flab || !canon || amap_init(&m, t->nstacks))
		goto out;
	memset(flab, 0xff, (t->nframes + 1) * sizeof(*flab));
	for (uint32_t s = 0; s < t->nstacks; s++) {
		uint64_t h = 0x51ed27u, *v;
		int created;

		err = analysis_stack_path(f, t, flab, s, &ids, &cap, 0, &n);
		if (err)
			goto out;
		for (k = 0; k < n; k++)
			h = amap_mix(h ^ ids[k]) + k;
		v = amap_get(&m, h, &created);
		if (!v) {
			err = -ENOMEM;
			goto out;
		}
		if (created)
			*v = s;
		/* a hash shared by different paths keeps them apart */
		canon[s] = created || same_path(f, t, flab, (uint32_t)*v, s, &ids, &cap)
			       ? (uint32_t)*v
			       : s;
	}
	*out = canon;
	canon = NULL;
	err = 0;
out:
	amap_release(&m);
	free(ids);
	free(canon);
	free(flab);
	flame__free(f);
	return err;
}

struct fentry {
	uint32_t root; /* group + 1, 0 = no poll */
	uint32_t rank; /* pre-order rank of the stack's path */
	uint32_t stack;
	uint64_t weight;
};

static int fentry_cmp(const void *a, const void *b)
{
	const struct fentry *x = a, *y = b;

	if (x->root != y->root)
		return x->root < y->root ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* Pre-order rank of every node of @trie. */
static uint32_t *preorder(const struct flame *trie)
{
	uint32_t *rank = malloc(trie->nnodes * sizeof(*rank));
	uint32_t *stack = malloc(trie->nnodes * sizeof(*stack));
	size_t top = 0, r = 0;

	if (!rank || !stack) {
		free(rank);
		free(stack);
		return NULL;
	}
	stack[top++] = 0;
	while (top) {
		uint32_t n = stack[--top];

		rank[n] = r++;
		for (uint32_t c = trie->nodes[n].child; c != FNODE_NONE;
		     c = trie->nodes[c].next)
			stack[top++] = c;
	}
	free(stack);
	return rank;
}

/* Fill @f from the (root, stack) -> weight pairs of @agg.
 *
 * Adding each pair's path through the edge map costs a hash probe per
 * frame, and with many tasks times many stacks that is millions of random
 * probes. Instead: put the distinct stacks in a small trie (one probe per
 * frame per distinct stack), sort the pairs by (root, pre-order rank of
 * the stack in that trie) so that paths sharing a prefix are adjacent, and
 * bulk-load @f with flame_run_add(), which compares with the previous path
 * only. */
static int build_tree(const struct join *j, const struct groups *g, struct flame *f,
		      const struct amap *agg, uint32_t *flab)
{
	const struct trace *t = j->trace;
	struct flame *trie = flame__new();
	struct flame_run run = {0};
	struct fentry *ent = malloc((agg->n + 1) * sizeof(*ent));
	uint32_t *leaf = malloc((t->nstacks + 1) * sizeof(*leaf));
	uint32_t *rootlab = malloc((g->ngroups + 2) * sizeof(*rootlab));
	uint32_t *rank = NULL, *ids = NULL;
	size_t cap = 0, m = 0, i, n;
	int err = -ENOMEM;

	if (!trie || !ent || !leaf || !rootlab)
		goto out;
	memset(leaf, 0xff, (t->nstacks + 1) * sizeof(*leaf));
	memset(rootlab, 0xff, (g->ngroups + 2) * sizeof(*rootlab));
	for (i = 0; i < agg->cap; i++) {
		uint64_t key = agg->keys[i];
		uint32_t s = (uint32_t)key, node = 0;

		if (key == AMAP_EMPTY)
			continue;
		if (s < t->nstacks && leaf[s] != UINT32_MAX) {
			node = leaf[s];
		} else if (s < t->nstacks) {
			err = analysis_stack_path(f, t, flab, s, &ids, &cap, 0, &n);
			if (!err)
				err = flame_add_ids(trie, ids, n, 1, &node);
			if (err)
				goto out;
			leaf[s] = node;
		}
		ent[m].root = key >> 32;
		ent[m].rank = node; /* the rank once it is known */
		ent[m].stack = s;
		ent[m].weight = agg->vals[i];
		m++;
	}
	err = -ENOMEM;
	rank = preorder(trie);
	if (!rank)
		goto out;
	for (i = 0; i < m; i++)
		ent[i].rank = rank[ent[i].rank];
	qsort(ent, m, sizeof(*ent), fentry_cmp);

	for (i = 0; i < m; i++) {
		uint32_t r = ent[i].root;
		/* by thread, samples of threads the groups do not list are one
		 * group past them ("[other threads]": groups__of) */
		uint32_t ri = r <= g->ngroups ? r : g->ngroups + 1;

		if (rootlab[ri] == UINT32_MAX) {
			char lab[300];

			groups__label(g, r ? r - 1 : GROUP_NONE, lab, sizeof(lab));
			err = flame_intern(f, lab, strlen(lab), &rootlab[ri]);
			if (err)
				goto out;
		}
		err = analysis_stack_path(f, t, flab, ent[i].stack, &ids, &cap, 1, &n);
		if (err)
			goto out;
		ids[0] = rootlab[ri];
		err = flame_run_add(f, &run, ids, n + 1, ent[i].weight);
		if (err)
			goto out;
	}
	err = 0;
out:
	flame__free(trie);
	flame_run_release(&run);
	free(ent);
	free(leaf);
	free(rootlab);
	free(rank);
	free(ids);
	return err;
}

/* The samples again (--min-poll, --by thread), per (root, stack). */
struct flame_walk {
	struct amap *agg;
	struct flame_result *res;
	const struct flame_opts *o;
	const struct groups *g;
};

/* Aggregation key root of group @grp: group + 1, 0 for "[no poll]". */
static uint64_t group_root(uint32_t grp)
{
	return grp == GROUP_NONE ? 0 : (uint64_t)grp + 1;
}

static int flame_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct flame_walk *fw = ctx;
	uint64_t w = sample_weight(s), *v;
	uint32_t grp;

	if (fw->o->min_poll_ns && (!p || p->end - p->start < fw->o->min_poll_ns))
		return 0;
	grp = groups__of(fw->g, p ? (int32_t)p->task : -1, s->tid);
	if (grp == UINT32_MAX)
		return 0;
	v = amap_get(fw->agg, group_root(grp) << 32 | s->stack, NULL);
	if (!v)
		return -ENOMEM;
	*v += w;
	fw->res->samples++;
	fw->res->weight += w;
	return 0;
}

int analysis_flame_build(const struct join *j, const struct flame_opts *o,
			 struct groups **gp, struct flame **fp, struct flame_result *rp)
{
	const struct trace *t;
	struct flame *f = NULL;
	struct groups *g = NULL;
	struct amap agg = {0};
	struct flame_result res = {0};
	uint32_t *flab = NULL;
	size_t i;
	int err;

	*gp = NULL;
	*fp = NULL;
	t = j->trace;
	if (o->sel.on && !task_sel_any(j, &o->sel))
		return -ENOENT;
	/* root keys (group + 1, 0 = no poll) share a u64 key with the stack
	 * id */
	if (j->ntasks >= UINT32_MAX - 3)
		return -EOVERFLOW;
	err = groups__new(j, o->by, &o->sel, &g);
	if (err)
		return err;
	err = -ENOMEM;
	f = flame__new();
	flab = malloc((t->nframes + 1) * sizeof(*flab));
	if (!f || !flab || amap_init(&agg, join_agg(j)->map.n))
		goto out;
	memset(flab, 0xff, (t->nframes + 1) * sizeof(*flab));
	f->task_roots = 1;
	flame__set_style(f, &(struct flame_style){.reverse = o->reverse});

	/* 1M samples collapse to a few thousand (task, stack) pairs, which
	 * the join counted: pick those wanted, then walk the tree once per
	 * pair instead of per sample. --min-poll and --by thread need the
	 * samples again (the pairs say neither how long their polls were
	 * nor on which thread). */
	if (o->min_poll_ns || g->by == GROUP_THREAD) {
		struct flame_walk fw = {.agg = &agg, .res = &res, .o = o, .g = g};

		err = join_for_each_sample(j, flame_sample, &fw);
		if (err)
			goto out;
		err = -ENOMEM;
	} else {
		const struct join_agg *ja = join_agg(j);

		for (i = 0; i < ja->map.cap; i++) {
			uint64_t key = ja->map.keys[i], *v;
			size_t e = ja->map.vals[i];
			uint32_t grp;

			if (key == AMAP_EMPTY)
				continue;
			grp = groups__of(g, (int32_t)(key >> 32) - 1, 0);
			if (grp == UINT32_MAX)
				continue;
			v = amap_get(&agg, group_root(grp) << 32 | (uint32_t)key, NULL);
			if (!v)
				goto out;
			*v += ja->weight[e];
			res.samples += ja->count[e];
			res.weight += ja->weight[e];
		}
	}
	res.stacks = agg.n;
	err = build_tree(j, g, f, &agg, flab);
out:
	*rp = res;
	amap_release(&agg);
	free(flab);
	if (err) {
		flame__free(f);
		groups__free(g);
		return err;
	}
	*fp = f;
	*gp = g;
	return 0;
}

int analysis__flame(const struct join *j, const struct flame_opts *o, FILE *out)
{
	struct flame *f = NULL;
	struct groups *g = NULL;
	struct flame_result res = {0};
	int err;

	if (!j || !o || !out)
		return -EINVAL;
	err = analysis_flame_build(j, o, &g, &f, &res);
	if (!err && o->format == FLAME_FOLDED)
		err = flame__write_folded(f, out);
	else if (!err)
		err = write_svg(j, g, o, f, &res, out);
	if (!err && !res.weight)
		err = -ENODATA;
	if (o->result)
		*o->result = res;
	flame__free(f);
	groups__free(g);
	return err;
}

/* ---- the task table ------------------------------------------------- */

/* Characters (not bytes) of a UTF-8 string, for column padding. */
size_t analysis_u8_width(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void analysis_fit_name(const char *name, size_t w, char *buf, size_t len)
{
	char tmp[4096], cut[4096 * 3 / 2 + 16];

	analysis_clean_name(name ? name : "-", buf, len);
	if (!w || analysis_u8_width(buf) <= w)
		return;
	/* the flamegraph's rule: a qualified name keeps its own name */
	snprintf(tmp, sizeof(tmp), "%s", buf);
	if (analysis_shorten(tmp, w < 3 ? 3 : w, cut) || !*cut)
		return;
	snprintf(buf, len, "%s", cut);
}

static int digits(uint64_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

#define NAME_MAX_W 32

/* One row of the task table: a task, or all tasks of one name. */
struct trow {
	uint32_t grp;
	uint64_t task;		/* GROUP_TASK: the task id */
	uint64_t ntasks, polls, weight, total_ns, longest_ns;
	struct delay_stats ds;
};

static int trow_cmp(const void *a, const void *b, void *key)
{
	const struct trow *x = a, *y = b;
	uint64_t kx, ky;

	switch (*(const enum tasks_sort *)key) {
	case TASKS_BY_POLLS:
		kx = x->polls, ky = y->polls;
		break;
	case TASKS_BY_LONGEST:
		kx = x->longest_ns, ky = y->longest_ns;
		break;
	case TASKS_BY_DELAY:
		kx = x->ds.max, ky = y->ds.max;
		break;
	case TASKS_BY_NAME:
		kx = ky = 0;
		break;
	default:
		kx = x->weight, ky = y->weight;
		if (kx == ky)
			kx = x->total_ns, ky = y->total_ns;
		break;
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->grp != y->grp) /* groups are in id or name order */
		return x->grp < y->grp ? -1 : 1;
	return 0;
}

double analysis_period_ns(const struct trace *t)
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

int analysis__tasks(const struct join *j, const struct delays *d, const struct tasks_opts *o,
		    FILE *out)
{
	static const struct tasks_opts dflt = {0};
	const struct trace *t;
	struct groups *g = NULL;
	struct trow *rows = NULL;
	struct delay_stats *ds = NULL;
	uint64_t span, lo, hi;
	double period;
	size_t i, nr, shown, namew = 4;
	int err, pw = 5;
	char name[NAME_MAX_W * 4 + 8], lab[300];

	if (!j || !out)
		return -EINVAL;
	if (!o)
		o = &dflt;
	t = j->trace;
	err = groups__new(j, o->by == GROUP_THREAD ? GROUP_TASK : o->by, NULL, &g);
	if (err)
		return err;
	err = -ENOMEM;
	nr = g->ngroups;
	rows = calloc(nr + 1, sizeof(*rows));
	if (d)
		ds = malloc((nr + 1) * sizeof(*ds));
	if (!rows || (d && (!ds || delays__task_stats(d, g->of_task, nr, ds))))
		goto out;
	for (i = 0; i < nr; i++) {
		rows[i].grp = (uint32_t)i;
		if (ds)
			rows[i].ds = ds[i];
	}
	for (i = 0; i < j->ntasks; i++) {
		const struct task_stat *ts = &j->tasks[i];
		struct trow *r = &rows[g->of_task[i]];

		r->task = ts->task;
		r->ntasks++;
		r->polls += ts->polls;
		r->weight += ts->samples;
		r->total_ns += ts->total_ns;
		if (ts->longest_ns > r->longest_ns)
			r->longest_ns = ts->longest_ns;
	}
	qsort_r(rows, nr, sizeof(*rows), trow_cmp, (void *)&o->sort);
	shown = o->limit && o->limit < nr ? o->limit : nr;
	period = analysis_period_ns(t);
	join_seen(j, &lo, &hi);
	span = t->counters.end_time > t->counters.start_time
		   ? t->counters.end_time - t->counters.start_time
		   : (hi > lo ? hi - lo : 0);
	for (i = 0; i < shown; i++) {
		if (g->by == GROUP_NAME)
			groups__label(g, rows[i].grp, lab, sizeof(lab));
		else
			snprintf(lab, sizeof(lab), "%s", j->tasks[rows[i].grp].name ?: "-");
		analysis_clean_name(lab, name, sizeof(name));
		if (analysis_u8_width(name) > namew)
			namew = analysis_u8_width(name);
		if (digits(rows[i].polls) > pw)
			pw = digits(rows[i].polls);
	}
	if (namew > NAME_MAX_W && !o->wide)
		namew = NAME_MAX_W;

	if (g->by == GROUP_NAME)
		fprintf(out, "%-*s  %6s", (int)namew, "NAME", "TASKS");
	else
		fprintf(out, "%-8s  %-*s", "TASK", (int)namew, "NAME");
	fprintf(out, "  %*s  %9s  %6s  %10s  %9s  %12s  %*s  %9s  %9s  %9s\n", pw, "POLLS", "CPU",
		"CPU%", "TOTAL-POLL", "MEAN-POLL", "LONGEST-POLL", pw, "WAKES", "DELAY-P50",
		"DELAY-P99", "DELAY-MAX");
	for (i = 0; i < shown; i++) {
		const struct trow *r = &rows[i];
		double cpu = period ? (double)r->weight * period : 0;
		char cpus[32] = "-", pct[16] = "-", tot[32] = "-", mean[32] = "-", longest[32] = "-";
		char wakes[24] = "-", p50[32] = "-", p99[32] = "-", max[32] = "-";

		if (period) {
			fmt_duration((uint64_t)cpu, cpus, sizeof(cpus));
			if (span)
				snprintf(pct, sizeof(pct), "%.1f%%", 100.0 * cpu / (double)span);
		}
		if (r->polls) {
			fmt_duration(r->total_ns, tot, sizeof(tot));
			fmt_duration(r->total_ns / r->polls, mean, sizeof(mean));
			fmt_duration(r->longest_ns, longest, sizeof(longest));
		}
		if (ds) {
			snprintf(wakes, sizeof(wakes), "%" PRIu64, r->ds.n);
			if (r->ds.n) {
				fmt_duration(r->ds.p50, p50, sizeof(p50));
				fmt_duration(r->ds.p99, p99, sizeof(p99));
				fmt_duration(r->ds.max, max, sizeof(max));
			}
		}
		if (g->by == GROUP_NAME) {
			groups__label(g, r->grp, lab, sizeof(lab));
			analysis_fit_name(lab, namew, name, sizeof(name));
			fprintf(out, "%s%*s  %6" PRIu64, name,
				(int)(namew - analysis_u8_width(name)), "", r->ntasks);
		} else {
			analysis_fit_name(j->tasks[r->grp].name, namew, name, sizeof(name));
			fprintf(out, "%-8" PRIu64 "  %s%*s", r->task, name,
				(int)(namew - analysis_u8_width(name)), "");
		}
		fprintf(out, "  %*" PRIu64 "  %9s  %6s  %10s  %9s  %12s  %*s  %9s  %9s  %9s\n", pw,
			r->polls, cpus, pct, tot, mean, longest, pw, wakes, p50, p99, max);
	}
	fprintf(out, "# %zu of %zu %s", shown, nr, g->by == GROUP_NAME ? "task names" : "tasks");
	if (g->by == GROUP_NAME)
		fprintf(out, " (%zu tasks)", j->ntasks);
	fprintf(out, ", by %s", o->sort == TASKS_BY_POLLS	  ? "polls"
				: o->sort == TASKS_BY_LONGEST ? "longest poll"
				: o->sort == TASKS_BY_DELAY   ? "longest delay"
				: o->sort == TASKS_BY_NAME    ? "name"
							      : "CPU");
	if (shown < nr)
		fprintf(out, "; --limit 0 for all");
	fputc('\n', out);
	fprintf(out,
		"# CPU: sampled CPU time inside the polls (%s); CPU%%: of one CPU over the "
		"%s recorded\n",
		period ? "sampling periods x 1/frequency" : "no sampling frequency in the trace",
		fmt_duration(span, lab, sizeof(lab)));
	/* weights, not samples: a ctimer sample may stand for several periods */
	if (period) {
		char a[32], b[32];

		fprintf(out, "# sampled CPU: %s in polls (%.1f%%), %s outside polls (%.1f%%)\n",
			fmt_duration((uint64_t)((double)j->samples_in_polls * period), a, sizeof(a)),
			j->samples ? 100.0 * j->samples_in_polls / j->samples : 0.0,
			fmt_duration((uint64_t)((double)(j->samples - j->samples_in_polls) * period),
				     b, sizeof(b)),
			j->samples ? 100.0 * (j->samples - j->samples_in_polls) / j->samples : 0.0);
	} else {
		fprintf(out,
			"# %" PRIu64 " sampling periods: %" PRIu64 " in polls (%.1f%%), %" PRIu64
			" outside polls (%.1f%%)\n",
			j->samples, j->samples_in_polls,
			j->samples ? 100.0 * j->samples_in_polls / j->samples : 0.0,
			j->samples - j->samples_in_polls,
			j->samples ? 100.0 * (j->samples - j->samples_in_polls) / j->samples : 0.0);
	}
	if (j->unmatched_ends)
		fprintf(out, "# incomplete: %" PRIu64 " poll ends without a begin\n",
			j->unmatched_ends);
	err = analysis_losses_footer(t, LOSS_CPU | LOSS_POLLS, out);
out:
	free(rows);
	free(ds);
	groups__free(g);
	return err;
}
