/* SPDX-License-Identifier: MIT */
/*
 * export_pprof.c - `d9prof export --format pprof`: the joined samples as a
 * gzipped profile.proto (github.com/google/pprof, proto/profile.proto).
 *
 * One walk of the samples through the join (join_for_each_sample(), as
 * analysis__flame() walks them for --by thread) aggregates them per
 * (label set, stack): a label set is a poll (which fixes its task and
 * thread) or, outside polls, a thread. Off-CPU intervals come from the
 * off-CPU join's placement (struct offcpu_switch). Locations, functions
 * and mappings are made as the aggregated stacks first use them; every
 * part of the profile goes into its own buffer (repeated fields of a
 * message may come in any order), then the whole is gzipped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/labels.h"
#include "analysis/offcpu.h"
#include "analysis/pbuf.h"
#include "analysis/spans.h"
#include "analysis/stacks.h"
#include "analysis/views.h"
#include "lib/grow.h"
#include "lib/map.h"
#include "lib/text.h"

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUE_TYPE_TYPE = 1,
	VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,
	SAMPLE_LABEL = 3,
	LABEL_KEY = 1,
	LABEL_STR = 2,
	LABEL_NUM = 3,
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

#define NVAL 3 /* samples, cpu ns, off-cpu ns */

/* Where a pprof sample's labels come from. */
struct lset {
	uint64_t task; /* task id, 0 outside tasks */
	uint32_t tid;
	int32_t poll;	 /* -1 outside polls */
	int32_t span;	 /* the innermost span entered (spans.v), -1 none */
	uint32_t fields; /* the fields of it and the spans it is in (string
			  * id, 0: none): each a label */
};

struct psample {
	uint32_t set; /* index in ex.sets */
	uint32_t stack;
	uint64_t v[NVAL]; /* samples (weight), weight then cpu ns, off-cpu ns */
};

struct mapping {
	uint32_t file;	    /* string index of the module (cleaned) */
	const char *module; /* the module as the trace names it */
	uint64_t lo, hi;    /* lowest and highest frame address */
	uint64_t off;	    /* file offset at lo, if the frame there said it */
	int has_off, has_fn, has_inl, has_file, has_line;
};

struct ex {
	const struct join *j;
	const struct trace *t;
	const struct export_opts *o;
	struct export_result res;
	struct flame *str;     /* the string table: index = label id + 1 */
	struct lib_map set_of; /* span + 1 << 33 | poll id, or 1 << 32 | tid
				* -> set index */
	struct lset *sets;
	size_t nsets, sets_cap;
	struct lib_map sample_of; /* set << 32 | stack -> index in samples */
	struct psample *samples;
	size_t nsamples, samples_cap;
	uint32_t *loc_of; /* per frame id: location id, 0 = none yet */
	uint64_t nlocs;
	uint64_t runtime_loc;  /* "[runtime]" (join__keep()), 0 = none yet */
	uint64_t shim_loc;     /* "[d9prof shim]", 0 = none yet */
	struct lib_map fn_of;  /* name << 32 | file -> function id */
	struct lib_map map_of; /* module string -> mapping index */
	struct mapping *maps;
	size_t nmaps, maps_cap;
	struct pbuf locs, fns, tmp, tmp2;
	int err; /* a string not interned: -ENOMEM */
};

/* The string table index of @s as the profile shows it: protobuf strings
 * must be valid UTF-8, and pprof prints them to a terminal, so @s goes in
 * cleaned (text_clean(): no invalid UTF-8, no control) as every shown
 * name of the target. */
static uint32_t str(struct ex *x, const char *s)
{
	char small[256], *c = small;
	size_t n;
	uint32_t id;
	int err;

	if (!s || !*s)
		return 0;
	n = strlen(s);
	if (n >= sizeof(small) && !(c = malloc(n + 1))) {
		x->err = -ENOMEM;
		return 0;
	}
	n = text_clean(s, c, n + 1);
	err = flame_intern(x->str, c, n, &id);
	if (c != small)
		free(c);
	/* a failure is kept and reported before anything is written */
	if (err) {
		x->err = -ENOMEM;
		return 0;
	}
	return id + 1;
}

static int lset_index(struct ex *x, uint64_t key, const struct lset *l, uint32_t *ix)
{
	int created;
	uint64_t *v = lib_map_get(&x->set_of, key, &created);

	if (!v)
		return -ENOMEM;
	if (created) {
		if (LIB_GROW(x->sets, x->sets_cap, x->nsets + 1))
			return -ENOMEM;
		x->sets[x->nsets] = *l;
		*v = x->nsets++;
	}
	*ix = (uint32_t)*v;
	return 0;
}

/* The labels of our own: a span field of one of these keys is not one */
static int own_label(const char *key, size_t n)
{
	static const char *const own[] = {"task", "task_id", "task_name", "thread",
					  "tid",  "poll",    "span",	  "span_id"};

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strlen(own[i]) == n && !memcmp(own[i], key, n))
			return 1;
	return 0;
}

/* The next "key=value" of span fields @s (SPAN_FIELDS_MAX: "k=v k=v",
 * a value may hold spaces: up to the next word with '='): its key in
 * [*k, *k + *kn), value [*v, *v + *vn), and where the rest starts; NULL
 * at the end */
static const char *next_field(const char *s, const char **k, size_t *kn, const char **v,
			      size_t *vn)
{
	const char *eq, *end;

	while (*s == ' ')
		s++;
	if (!*s || !(eq = strchr(s, '=')))
		return NULL;
	*k = s;
	*kn = (size_t)(eq - s);
	*v = eq + 1;
	for (const char *p = *v;;) {
		const char *w = strchr(p, ' '), *e;

		if (!w) {
			end = p + strlen(p);
			break;
		}
		e = w + 1 + strcspn(w + 1, " =");
		if (*e == '=' && e > w + 1) {
			end = w;
			break;
		}
		p = w + 1;
	}
	*vn = (size_t)(end - *v);
	return end;
}

/* The fields of the spans entered on @tid at @time, innermost first (a key
 * once: the innermost span's), as one "k=v k=v" string id; 0: none */
static uint32_t chain_fields(struct ex *x, uint32_t tid, uint64_t time)
{
	int32_t chain[16];
	size_t n = spans__chain_at(x->o->spans, tid, time, chain, 16), at = 0, nseen = 0;
	struct field_key {
		const char *k;
		size_t n;
	} seen[64]; /* the keys taken */
	char out[1024];

	for (size_t i = 0; i < n; i++) {
		const char *f = x->o->spans->v[chain[i]].fields, *k, *v;
		size_t kn, vn, j;

		while (f && (f = next_field(f, &k, &kn, &v, &vn))) {
			for (j = 0;
			     j < nseen && (seen[j].n != kn || memcmp(seen[j].k, k, kn));
			     j++)
				;
			if (j < nseen || !kn || own_label(k, kn) || nseen == 64 ||
			    at + kn + vn + 3 >= sizeof(out))
				continue;
			seen[nseen++] = (struct field_key){k, kn};
			at += (size_t)snprintf(out + at, sizeof(out) - at, "%s%.*s=%.*s",
					       at ? " " : "", (int)kn, k, (int)vn, v);
		}
	}
	return at ? str(x, out) : 0;
}

static int add(struct ex *x, uint64_t set_key, struct lset *l, uint32_t stack, int k,
	       uint64_t v, uint64_t time)
{
	uint32_t set;
	int created, err;

	/* the span is a label: one more set per span a poll ran in (above
	 * the key's kind, bits 32-33) */
	l->span = spans__at(x->o->spans, l->tid, time);
	set_key |= (uint64_t)(l->span + 1) << 34;
	l->fields = l->span >= 0 && !lib_map_find(&x->set_of, set_key)
			    ? chain_fields(x, l->tid, time)
			    : 0;
	err = lset_index(x, set_key, l, &set);
	uint64_t *p;

	if (err)
		return err;
	p = lib_map_get(&x->sample_of, (uint64_t)set << 32 | stack, &created);
	if (!p)
		return -ENOMEM;
	if (created) {
		if (LIB_GROW(x->samples, x->samples_cap, x->nsamples + 1))
			return -ENOMEM;
		x->samples[x->nsamples] = (struct psample){.set = set, .stack = stack};
		*p = x->nsamples++;
	}
	x->samples[*p].v[k] += v;
	return 0;
}

static int on_sample(void *ctx, const struct trace_sample *s, const struct join_hit *p)
{
	struct ex *x = ctx;
	struct lset l = {.tid = s->tid, .poll = -1};
	uint64_t w = sample_weight(s), key;
	int err;

	if (p && !join__kept(x->j, &x->j->tasks[p->task]))
		return 0;
	if (!p && x->j->sel.on)
		return 0;
	if (p) {
		l.task = x->j->tasks[p->task].task;
		l.poll = p->id;
		/* zero-code: the task's, no poll */
		key = p->nopoll ? 2ull << 32 | p->task : (uint32_t)p->id;
	} else {
		key = 1ull << 32 | s->tid;
	}
	err = add(x, key, &l, s->stack, 0, w, s->time);
	if (err)
		return err;
	x->res.samples++;
	x->res.weight += w;
	return 0;
}

static int add_switches(struct ex *x, const struct offcpu *oc)
{
	const struct trace *t = x->t;

	for (size_t i = 0; i < t->nswitches; i++) {
		const struct offcpu_switch *sw = &oc->sw[i];
		const struct trace_switch *ts = &t->switches[i];
		struct lset l = {.tid = ts->tid, .poll = -1};
		uint64_t key = 1ull << 32 | ts->tid;
		int err;

		if (sw->where == OFFCPU_IDLE || !sw->ns)
			continue;
		if (sw->poll >= 0) {
			const struct poll *q = join__poll(x->j, (uint32_t)sw->poll);

			if (!join__kept(x->j, join__task(x->j, q->task)))
				continue;
			l.task = q->task;
			l.poll = sw->poll;
			key = (uint32_t)sw->poll;
		} else if (sw->task >= 0) {
			const struct task_stat *zt = &x->j->tasks[sw->task];

			if (!join__kept(x->j, zt))
				continue;
			l.task = zt->task;
			key = 2ull << 32 | (uint32_t)sw->task;
		} else if (x->j->sel.on) {
			continue;
		}
		err = add(x, key, &l, ts->stack, 2, sw->ns, ts->time);
		if (err)
			return err;
		x->res.switches++;
	}
	return 0;
}

/* The name of frame @fid: its symbol, else as analysis_frame_label() names it
 * (module+0xoffset, 0xaddr) without the kernel suffix: pprof keeps kernel
 * frames apart by their addresses. */
static const char *fn_name(const struct trace *t, uint32_t fid, char *buf, size_t len)
{
	const struct trace_frame *f = &t->frames[fid];
	size_t n;

	if (f->full)
		return f->full;
	if (f->sym && *f->sym)
		return f->sym;
	analysis_frame_label(t, fid, buf, len);
	n = strlen(buf);
	if (f->kernel && n >= 4 && !strcmp(buf + n - 4, "_[k]"))
		buf[n - 4] = '\0';
	return buf;
}

static const char *module_of(const struct trace_frame *f)
{
	return f->module && *f->module ? f->module : f->kernel ? "[kernel]" : NULL;
}

/* A function is its name and file: its source file where the trace has
 * it (the module stays in the Mapping), else its module. */
static int function_id(struct ex *x, uint32_t fid, uint64_t *id)
{
	const struct trace_frame *f = &x->t->frames[fid];
	char buf[4096];
	uint32_t name = str(x, fn_name(x->t, fid, buf, sizeof(buf)));
	uint32_t file = str(x, f->file ? f->file : module_of(f));
	int created;
	uint64_t *v = lib_map_get(&x->fn_of, (uint64_t)name << 32 | file, &created);

	if (!v)
		return -ENOMEM;
	if (created) {
		*v = ++x->res.functions;
		pbuf_uint(&x->tmp2, FUNCTION_ID, *v);
		/* no system_name (the trace keeps no linkage name): pprof
		 * takes a name unlike it as demangled already and shows it
		 * whole, where it would cut "<T as Trait>::poll" to "::poll" */
		pbuf_uint(&x->tmp2, FUNCTION_NAME, name);
		pbuf_uint(&x->tmp2, FUNCTION_FILENAME, file);
		if (f->start_line)
			pbuf_uint(&x->tmp2, FUNCTION_START_LINE, f->start_line);
		pbuf_msg(&x->fns, PROFILE_FUNCTION, &x->tmp2);
	}
	*id = *v;
	return 0;
}

/* The mapping (1-based id, 0 = none) of frame @f, widened to hold it. */
static int mapping_id(struct ex *x, const struct trace_frame *f, uint64_t *id)
{
	uint32_t file = str(x, module_of(f));
	struct mapping *m;
	int created;
	uint64_t *v;

	*id = 0;
	if (!file)
		return 0;
	v = lib_map_get(&x->map_of, file, &created);
	if (!v)
		return -ENOMEM;
	if (created) {
		if (LIB_GROW(x->maps, x->maps_cap, x->nmaps + 1))
			return -ENOMEM;
		x->maps[x->nmaps] = (struct mapping){.file = file,
						     .module = module_of(f),
						     .lo = f->addr,
						     .hi = f->addr};
		*v = x->nmaps++;
	}
	m = &x->maps[*v];
	if (f->addr <= m->lo) {
		m->lo = f->addr;
		/* an unresolved frame's offset is the file offset of its address */
		m->has_off = !f->sym && !f->kernel && f->module;
		m->off = f->offset;
	}
	if (f->addr > m->hi)
		m->hi = f->addr;
	if (f->sym)
		m->has_fn = 1;
	*id = *v + 1;
	return 0;
}

/* The location of the frames @fr[0..n) of a stack (leaf first) that end
 * at the first recorded (not inlined) frame: one Location at its address,
 * a Line per frame. */
static int location_id(struct ex *x, const uint32_t *fr, size_t n, uint64_t *id)
{
	const struct trace *t = x->t;
	uint32_t c = fr[n - 1];
	uint64_t map, fn;
	int err;

	if (x->loc_of[c]) {
		*id = x->loc_of[c];
		return 0;
	}
	err = mapping_id(x, &t->frames[c], &map);
	if (err)
		return err;
	x->loc_of[c] = (uint32_t)++x->nlocs;
	pbuf_uint(&x->tmp, LOCATION_ID, x->nlocs);
	pbuf_uint(&x->tmp, LOCATION_MAPPING_ID, map);
	pbuf_uint(&x->tmp, LOCATION_ADDRESS, t->frames[c].addr);
	for (size_t i = 0; i < n; i++) {
		const struct trace_frame *f = &t->frames[fr[i]];

		err = function_id(x, fr[i], &fn);
		if (err)
			return err;
		pbuf_uint(&x->tmp2, LINE_FUNCTION_ID, fn);
		if (f->line)
			pbuf_uint(&x->tmp2, LINE_LINE, f->line);
		/* a Line of varint fields; tmp2 is free again after */
		pbuf_msg(&x->tmp, LOCATION_LINE, &x->tmp2);
		if (map && f->file)
			x->maps[map - 1].has_file = 1;
		if (map && f->line)
			x->maps[map - 1].has_line = 1;
	}
	if (n > 1 && map)
		x->maps[map - 1].has_inl = 1;
	pbuf_msg(&x->locs, PROFILE_LOCATION, &x->tmp);
	*id = x->nlocs;
	return 0;
}

/* The location standing for frames drawn as one, *@loc once made: the
 * runtime's below a task's code, the shim's at the leaf; a function of
 * that name (@label), no mapping. */
static uint64_t label_location(struct ex *x, uint64_t *loc, const char *label)
{
	if (!*loc) {
		uint32_t name = str(x, label);

		pbuf_uint(&x->tmp2, FUNCTION_ID, ++x->res.functions);
		/* (no system_name: function_id() says why) */
		pbuf_uint(&x->tmp2, FUNCTION_NAME, name);
		pbuf_msg(&x->fns, PROFILE_FUNCTION, &x->tmp2);
		*loc = ++x->nlocs;
		pbuf_uint(&x->tmp, LOCATION_ID, x->nlocs);
		pbuf_uint(&x->tmp2, LINE_FUNCTION_ID, x->res.functions);
		pbuf_msg(&x->tmp, LOCATION_LINE, &x->tmp2);
		pbuf_msg(&x->locs, PROFILE_LOCATION, &x->tmp);
	}
	return *loc;
}

/* The locations of stack @s, leaf first: the shim's frames as one
 * "[d9prof shim]"; with @keep below its depth (join__keep()), the
 * locations of the @keep frames nearest the leaf (an address's inlined
 * frames stay together) then "[runtime]": as the flame graphs draw it. */
static int stack_locations(struct ex *x, uint32_t s, uint32_t keep, uint64_t **ids,
			   size_t *cap, size_t *n)
{
	const uint32_t *fr = NULL;
	size_t m = analysis_stack_frames(x->t, s, &fr), i = 0, k,
	       end = keep < m ? keep : m;
	int err;

	*n = 0;
	if (LIB_GROW(*ids, *cap, m + 3))
		return -ENOMEM;
	i = analysis_shim_frames(x->t, fr, m);
	if (i)
		(*ids)[(*n)++] = label_location(x, &x->shim_loc, ANALYSIS_SHIM_LABEL);
	while (i < end) {
		/* inlined frames come first, then the frame they are in */
		for (k = i; k + 1 < m && x->t->frames[fr[k]].inlined; k++)
			;
		/* a cut inside one location's frames keeps all of them */
		err = location_id(x, fr + i, k - i + 1, &(*ids)[(*n)++]);
		if (err)
			return err;
		i = k + 1;
	}
	if (i < m)
		(*ids)[(*n)++] =
			label_location(x, &x->runtime_loc, ANALYSIS_RUNTIME_LABEL);
	return 0;
}

static void label(struct ex *x, struct pbuf *s, const char *key, const char *sv,
		  uint64_t num)
{
	pbuf_uint(&x->tmp2, LABEL_KEY, str(x, key));
	if (sv)
		pbuf_uint(&x->tmp2, LABEL_STR, str(x, sv));
	else
		pbuf_uint(&x->tmp2, LABEL_NUM, num);
	pbuf_msg(s, SAMPLE_LABEL, &x->tmp2);
}

static void value_type(struct ex *x, struct pbuf *b, uint32_t field, const char *type,
		       const char *unit)
{
	pbuf_uint(&x->tmp, VALUE_TYPE_TYPE, str(x, type));
	pbuf_uint(&x->tmp, VALUE_TYPE_UNIT, str(x, unit));
	pbuf_msg(b, field, &x->tmp);
}

static int64_t wall_offset(const struct trace *t)
{
	for (size_t i = 0; i < t->nsegments; i++)
		if (t->segments[i].wall_offset)
			return t->segments[i].wall_offset;
	return 0;
}

/* The program's own Mapping first: pprof takes the first one for the main
 * binary ("File:" in -top, the binary -list and -weblist look up). The
 * program is the module named as the command's first word is (its file
 * name: the command line may give a relative path). */
static int exe_mapping_first(struct ex *x)
{
	const char *cmd = analysis_trace_command(x->t), *base, *mb;
	size_t n, i;
	uint64_t id;

	if (!cmd)
		return 0;
	n = strcspn(cmd, " ");
	base = memrchr(cmd, '/', n);
	base = base ? base + 1 : cmd;
	n -= (size_t)(base - cmd);
	for (i = 0; i < x->t->nframes; i++) {
		const struct trace_frame *f = &x->t->frames[i];

		if (f->kernel || !f->module)
			continue;
		mb = strrchr(f->module, '/');
		mb = mb ? mb + 1 : f->module;
		if (!strncmp(mb, base, n) && !mb[n])
			return mapping_id(x, f, &id);
	}
	return 0;
}

/* The mapping of @m's frames among those meta TRACE_META_MAP_PFX gives in
 * @v ("START END PGOFF" hex triples): 1 and it in *@start, *@limit,
 * *@off, or 0 if none holds all of them. */
static int mapped_at(const char *v, const struct mapping *m, uint64_t *start,
		     uint64_t *limit, uint64_t *off)
{
	int n;

	while (v && sscanf(v, "%" SCNx64 " %" SCNx64 " %" SCNx64 "%n", start, limit, off,
			   &n) == 3) {
		if (*start <= m->lo && m->hi < *limit)
			return 1;
		v += n;
	}
	return 0;
}

/* Each "key=value" of fields string @id a string label */
static int field_labels(struct ex *x, struct pbuf *s, uint32_t id)
{
	const char *f = id ? flame_label_str(x->str, id - 1) : NULL, *k, *v;
	size_t kn, vn;

	while (f && (f = next_field(f, &k, &kn, &v, &vn))) {
		char key[SPAN_FIELDS_MAX + 1], val[SPAN_FIELDS_MAX + 1];

		snprintf(key, sizeof(key), "%.*s", (int)kn, k);
		snprintf(val, sizeof(val), "%.*s", (int)vn, v);
		label(x, s, key, val, 0);
	}
	return x->err;
}

static int write_profile(struct ex *x, double period, FILE *out)
{
	const struct trace *t = x->t;
	struct pbuf p = {0}, samples = {0}, s = {0}, pk = {0};
	uint64_t *locs = NULL, vals[NVAL];
	size_t cap = 0, n, nval = x->o->offcpu ? 3 : 2;
	uint64_t lo, hi;
	int err = exe_mapping_first(x);

	for (size_t i = 0; i < x->nsamples && !err; i++) {
		const struct psample *ps = &x->samples[i];
		const struct lset *l = &x->sets[ps->set];
		const struct task_stat *ts = l->task ? join__task(x->j, l->task) : NULL;
		const char *tn = ts ? ts->name : "[no poll]";
		const char *th = trace__thread_name(t, l->tid);
		char task[4200], thread[4200];

		err = stack_locations(x, ps->stack,
				      ts ? join__keep(x->j, ps->stack) : UINT32_MAX,
				      &locs, &cap, &n);
		if (err)
			break;
		vals[0] = ps->v[0];
		vals[1] = (uint64_t)((double)ps->v[0] * period + 0.5);
		vals[2] = ps->v[2];
		pbuf_packed(&s, SAMPLE_LOCATION_ID, locs, n, &pk);
		pbuf_packed(&s, SAMPLE_VALUE, vals, nval, &pk);
		/* words beside the numbers, for -tags and string filters
		 * (-tagfocus task=...): "ID NAME" and "NAME[TID]" */
		if (ts)
			snprintf(task, sizeof(task), "%" PRIu64 " %s",
				 trace_task_number(l->task),
				 tn && *tn ? tn : "[unnamed]");
		else
			snprintf(task, sizeof(task), "[no poll]");
		snprintf(thread, sizeof(thread), "%s[%" PRIu32 "]", th && *th ? th : "?",
			 l->tid);
		label(x, &s, "task", task, 0);
		label(x, &s, "task_id", NULL, trace_task_number(l->task));
		label(x, &s, "task_name", tn && *tn ? tn : "[unnamed]", 0);
		label(x, &s, "thread", thread, 0);
		label(x, &s, "tid", NULL, l->tid);
		if (l->poll >= 0)
			label(x, &s, "poll", NULL, (uint64_t)l->poll);
		if (l->span >= 0) {
			label(x, &s, "span", spans_name(&x->o->spans->v[l->span]), 0);
			label(x, &s, "span_id", NULL, x->o->spans->v[l->span].id);
		}
		err = field_labels(x, &s, l->fields);
		pbuf_msg(&samples, PROFILE_SAMPLE, &s);
	}
	if (err)
		goto out;

	value_type(x, &p, PROFILE_SAMPLE_TYPE, "samples", "count");
	value_type(x, &p, PROFILE_SAMPLE_TYPE, "cpu", "nanoseconds");
	if (x->o->offcpu)
		value_type(x, &p, PROFILE_SAMPLE_TYPE, "off-cpu", "nanoseconds");
	pbuf_append(&p, &samples);
	for (size_t i = 0; i < x->nmaps && !err; i++) {
		const struct mapping *m = &x->maps[i];
		char key[4200];
		uint64_t start, limit, off;
		int has_off = m->has_off;

		/* where the recorder saw it mapped: what -disasm and -weblist
		 * need to find an address in the file */
		snprintf(key, sizeof(key), TRACE_META_MAP_PFX "%s", m->module);
		if (mapped_at(trace__meta(t, key), m, &start, &limit, &off))
			has_off = 1;
		else
			start = m->lo, limit = m->hi + 1, off = m->off;
		snprintf(key, sizeof(key), TRACE_META_BUILDID_PFX "%s", m->module);
		pbuf_uint(&x->tmp, MAPPING_ID, i + 1);
		pbuf_uint(&x->tmp, MAPPING_MEMORY_START, start);
		pbuf_uint(&x->tmp, MAPPING_MEMORY_LIMIT, limit);
		if (has_off)
			pbuf_uint(&x->tmp, MAPPING_FILE_OFFSET, off);
		pbuf_uint(&x->tmp, MAPPING_FILENAME, m->file);
		pbuf_uint(&x->tmp, MAPPING_BUILD_ID, str(x, trace__meta(t, key)));
		pbuf_uint(&x->tmp, MAPPING_HAS_FUNCTIONS, m->has_fn);
		pbuf_uint(&x->tmp, MAPPING_HAS_FILENAMES, m->has_file);
		pbuf_uint(&x->tmp, MAPPING_HAS_LINE_NUMBERS, m->has_line);
		pbuf_uint(&x->tmp, MAPPING_HAS_INLINE_FRAMES, m->has_inl);
		pbuf_msg(&p, PROFILE_MAPPING, &x->tmp);
	}
	pbuf_append(&p, &x->locs);
	pbuf_append(&p, &x->fns);
	/* every string is interned by now: the table, "" first */
	pbuf_bytes(&p, PROFILE_STRING_TABLE, "", 0);
	for (uint32_t i = 0; i < lib_strset_count(&x->str->labels); i++)
		pbuf_bytes(&p, PROFILE_STRING_TABLE, flame_label_str(x->str, i),
			   lib_strset_len(&x->str->labels, i));
	lo = x->j->start_time;
	hi = x->j->end_time;
	if (lo && wall_offset(t))
		pbuf_uint(&p, PROFILE_TIME_NANOS,
			  (uint64_t)((int64_t)lo + wall_offset(t)));
	if (hi > lo)
		pbuf_uint(&p, PROFILE_DURATION_NANOS, hi - lo);
	value_type(x, &p, PROFILE_PERIOD_TYPE, "cpu", "nanoseconds");
	pbuf_uint(&p, PROFILE_PERIOD, (uint64_t)(period + 0.5));
	pbuf_uint(&p, PROFILE_DEFAULT_SAMPLE_TYPE, str(x, "cpu"));
	err = x->err ? x->err : pbuf_error(&p) ? pbuf_error(&p) : pbuf_error(&x->tmp);
	if (!err)
		err = pbuf_error(&x->tmp2);
	if (err)
		goto out;
	x->res.pprof_samples = x->nsamples;
	x->res.locations = x->nlocs;
	x->res.mappings = x->nmaps;
	x->res.bytes = p.len;
	err = analysis_gzip_write(p.data, p.len, out);
	if (!err && ferror(out))
		err = -EIO;
out:
	free(locs);
	pbuf_release(&p);
	pbuf_release(&samples);
	pbuf_release(&s);
	pbuf_release(&pk);
	return err;
}

int analysis__export_pprof(const struct join *j, const struct offcpu *oc,
			   const struct export_opts *o, FILE *out)
{
	struct ex x = {.j = j, .o = o};
	double period;
	int err;

	if (!j || !o || !out || o->format != EXPORT_PPROF || (o->offcpu && !oc) ||
	    (o->offcpu && j->npolls && !j->polls))
		return -EINVAL;
	x.t = j->trace;
	if (join__keeps_none(j))
		return -ENOENT;
	period = analysis_period_ns(x.t);
	if (!(period > 0)) {
		period = 1e9 / 999;
		x.res.period_guessed = 1;
	}
	err = -ENOMEM;
	x.str = flame__new();
	x.loc_of = calloc(x.t->nframes + 1, sizeof(*x.loc_of));
	if (!x.str || !x.loc_of || lib_map_init(&x.set_of, 256) ||
	    lib_map_init(&x.sample_of, 1024) || lib_map_init(&x.fn_of, 256) ||
	    lib_map_init(&x.map_of, 16))
		goto out;
	err = join_for_each_sample(j, on_sample, &x);
	if (!err && o->offcpu)
		err = add_switches(&x, oc);
	if (!err)
		err = write_profile(&x, period, out);
	if (!err && !x.res.samples && !x.res.switches)
		err = -ENODATA;
out:
	if (o->result)
		*o->result = x.res;
	flame__free(x.str);
	free(x.loc_of);
	free(x.sets);
	free(x.samples);
	free(x.maps);
	lib_map_release(&x.set_of);
	lib_map_release(&x.sample_of);
	lib_map_release(&x.fn_of);
	lib_map_release(&x.map_of);
	pbuf_release(&x.locs);
	pbuf_release(&x.fns);
	pbuf_release(&x.tmp);
	pbuf_release(&x.tmp2);
	return err;
}
