// SPDX-License-Identifier: MIT
/*
 * tokio_rec.c - zero-code Tokio's sample tags (tokio_rec.h).
 *
 * Each thread's tags are kept in time order in a ring of their own (a
 * thread runs on one CPU at a time, and the program's ring is one for all
 * CPUs, so a thread's tags come in order), the last TQ_CAP of them: a
 * thread's samples come from one ring per CPU, read one ring after the
 * other, so they are not looked up in time order, and a tag stays until
 * it is pushed out.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/grow.h"
#include "lib/map.h"
#include "lib/tokio_names.h"
#include "record/bpfload.h"
#include "record/proc.h"
#include "record/tokio_rec.h"
#include "symbol/tokio.h"
#include "trace/trace.h"
#include "tokio_tag.skel.h"

/* tags kept per thread: ~250 ms of samples at 999 Hz (the sampler's rings
 * hold about that much) */
#define TQ_CAP 256

/* the tags' ring: a few hundred ms of samples of ~100 busy threads */
#define TAG_RING_BYTES (4u << 20)

/* Each second the threads and tasks not seen for IDLE_S are forgotten (a
 * thread gone, a task done): what is held is what the target shows in
 * that time, however long the recording. A task seen again is voted on
 * and named anew. */
#define PRUNE_NS 1000000000ULL
#define IDLE_S	 10

struct tq {
	uint32_t head; /* oldest */
	uint32_t n;
	uint32_t seen; /* the epoch of its last tag */
	uint64_t time[TQ_CAP];
	uint64_t task[TQ_CAP];
};

/* What a task's votes say of it: its stacks in its own future (named
 * from the first of them), or in a worker's launch task */
struct task_votes {
	uint32_t name; /* index in names + 1; 0: none yet */
	uint32_t own, launch;
	uint32_t seen; /* the epoch it was last seen in */
};

struct tokio_rec {
	struct d9_tokio_tag *skel;
	struct ring_buffer *rb;
	struct lib_map of_tid; /* tid -> index in q */
	struct tq **q;
	size_t nq, capq;
	struct tokio_rec_counts c;
	uint32_t epoch;	   /* seconds of pruning */
	uint64_t prune_at; /* the next, CLOCK_MONOTONIC */
	/* naming */
	struct trace_writer *w;
	trace_resolve_fn resolve;
	void *rctx;
	struct lib_map kind;	/* writer stack id -> name index + 3, or
				 * KIND_NONE, KIND_LAUNCH */
	struct lib_map in_seg;	/* tasks named in this writer */
	struct lib_map of_task; /* Tokio's id -> index in votes */
	struct task_votes *votes;
	size_t nvotes, capvotes;
	char **names;
	size_t nnames, capnames;
	char *buf; /* a stack's names, NUL-separated */
	size_t buf_cap;
	size_t *at; /* ... where each starts */
	size_t at_cap;
	/* the poll probes (tier 1) */
	pid_t pid;
	struct bpf_link **links;
	size_t nlinks, capl;
	uint64_t max_rate;   /* polls a second past which they go; 0 none */
	uint64_t rate_from;  /* the second being counted, from */
	uint64_t rate_hits;  /* ... the probes' hits before it */
	uint64_t off_at;     /* they went at, their records stopping (0: on,
			      * or the shim's records took over) */
	uint64_t *site_kind; /* per raw::poll instance: its task's kind
			      * (KIND_*, a name's), from DWARF */
	size_t nsites;
	int wr_err; /* the writer's first error */
	struct tokio_probe_counts pc;
};

#define KIND_NONE   1 /* no task's poll in the stack */
#define KIND_LAUNCH 2 /* in a worker's launch task */

static struct tq *queue_of(struct tokio_rec *tr, uint32_t tid, int add)
{
	const uint64_t *ix = lib_map_find(&tr->of_tid, tid);
	struct tq *q;

	if (ix)
		return tr->q[*ix];
	if (!add || LIB_GROW(tr->q, tr->capq, tr->nq + 1))
		return NULL;
	q = calloc(1, sizeof(*q));
	if (!q || lib_map_set(&tr->of_tid, tid, tr->nq)) {
		free(q);
		return NULL;
	}
	tr->q[tr->nq++] = q;
	return q;
}

static uint64_t task_id(struct tokio_rec *tr, uint64_t raw, int *err);
static uint64_t site_task(struct tokio_rec *tr, uint64_t raw, uint64_t kind, int *err);

/* A poll or a wake the probes wrote: a record of the writer's, as the
 * shim's are (a whole poll at its end with its length) */
static void probe_record(struct tokio_rec *tr, const struct tokio_bpf_tag *t)
{
	struct trace_event e = {.time = t->time, .tid = t->tid};
	uint64_t len = t->len;
	int err = 0;

	if (t->type == TOKIO_BPF_POLL && t->len <= t->time) {
		e.type = TRACE_REC_POLL;
		tr->pc.polls++;
	} else if (t->type == TOKIO_BPF_WAKE) {
		e.type = TRACE_EV_WAKE;
		tr->pc.wakes++;
	} else {
		return;
	}
	e.task = t->site && t->site <= tr->nsites
			 ? site_task(tr, t->task, tr->site_kind[t->site - 1], &err)
			 : task_id(tr, t->task, &err);
	if (!err && e.task && tr->w)
		err = trace_writer__records(tr->w, &e, &len, 1);
	if (err && !tr->wr_err)
		tr->wr_err = err;
}

static int on_tag(void *ctx, void *data, size_t size)
{
	struct tokio_rec *tr = ctx;
	const struct tokio_bpf_tag *t = data;
	struct tq *q;
	uint32_t at;

	if (size < sizeof(*t))
		return 0;
	if (t->type != TOKIO_BPF_TAG) {
		probe_record(tr, t);
		return 0;
	}
	q = queue_of(tr, t->tid, 1);
	if (!q)
		return 0; /* its sample goes untagged */
	if (q->n == TQ_CAP) {
		q->head = (q->head + 1) % TQ_CAP;
		q->n--;
	}
	q->seen = tr->epoch;
	at = (q->head + q->n++) % TQ_CAP;
	q->time[at] = t->time;
	q->task[at] = t->task;
	return 0;
}

struct lib_walk {
	pid_t pid;
	char exe[PATH_MAX];
	char *lib;
	size_t len;
};

/* 1 (and its name) where @path, not the program file, holds Tokio */
static int tokio_in(void *ctx, const char *path)
{
	struct lib_walk *w = ctx;
	char at[PATH_MAX + 32];
	struct tokio_layout l;
	const char *base = strrchr(path, '/');

	snprintf(at, sizeof(at), "/proc/%d/root%s", (int)w->pid, path);
	if (!strcmp(path, w->exe) || tokio_layout_find(at, &l, NULL, 0) == -ENOENT)
		return 0;
	snprintf(w->lib, w->len, "%s", base ? base + 1 : path);
	return 1;
}

/* The first of @pid's own shared libraries (outside the system's
 * directories) with a Tokio runtime in it, into @lib; 0 or -ENOENT. */
static int tokio_library(pid_t pid, char *lib, size_t len)
{
	struct lib_walk w = {.pid = pid, .lib = lib, .len = len};
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, w.exe, sizeof(w.exe) - 1);
	w.exe[n > 0 ? n : 0] = '\0';
	return proc_for_each_own_file(pid, tokio_in, &w) == 1 ? 0 : -ENOENT;
}

int tokio_rec_find(pid_t pid, const char *exe, struct tokio_bpf_slot *slot, char *version,
		   size_t vlen, char *path, size_t plen, char *why, size_t whylen)
{
	char lib[128];
	struct tokio_layout l;
	int err;

	memset(slot, 0, sizeof(*slot));
	version[0] = why[0] = '\0';
	if (exe)
		err = proc_which(exe, path, plen);
	else
		err = snprintf(path, plen, "/proc/%d/exe", (int)pid) < 0;
	if (err)
		return -ENOENT;
	err = tokio_layout_find(path, &l, why, whylen);
	if (err == -ENOENT && !exe && !tokio_library(pid, lib, sizeof(lib))) {
		snprintf(
			why, whylen,
			"Tokio is in a shared library (%s): its thread-locals are not at "
			"a fixed place from the thread pointer, where BPF could read them",
			lib);
		return -EOPNOTSUPP;
	}
	if (err)
		return err;
	slot->off = l.task_off;
	slot->kind = l.kind == TOKIO_ID_TAGGED ? TOKIO_BPF_TAGGED : TOKIO_BPF_NONZERO;
	snprintf(version, vlen, "%s", l.version);
	return 0;
}

int tokio_rec__open(pid_t pid, const struct tokio_bpf_slot *slot, int probes,
		    struct tokio_rec **out, char *why, size_t whylen)
{
	struct tokio_rec *tr;
	libbpf_print_fn_t old;
	int err;

	*out = NULL;
	why[0] = '\0';
	err = bpfload_pidns(why, whylen);
	if (err)
		return err;
	tr = calloc(1, sizeof(*tr));
	if (!tr || lib_map_init(&tr->of_tid, 64)) {
		free(tr);
		return -ENOMEM;
	}
	old = bpfload_begin();
	tr->skel = d9_tokio_tag__open();
	if (!tr->skel) {
		err = bpfload_fail(-errno, "open the sampler's program", why, whylen);
		goto out;
	}
	tr->skel->rodata->cfg.tgid = (unsigned int)pid;
	tr->skel->rodata->cfg.slot = *slot;
	/* read at every drain of the sampler, never woken for */
	tr->skel->rodata->cfg.wake_at = TAG_RING_BYTES;
	if ((err = bpf_map__set_max_entries(tr->skel->maps.tags, TAG_RING_BYTES))) {
		bpfload_fail(err, "size the tags' ring", why, whylen);
		goto out;
	}
	/* the poll probes only where asked for (tier 1) */
	bpf_program__set_autoload(tr->skel->progs.d9_poll_enter, !!probes);
	bpf_program__set_autoload(tr->skel->progs.d9_poll_ret, !!probes);
	bpf_program__set_autoload(tr->skel->progs.d9_wake, !!probes);
	if ((err = d9_tokio_tag__load(tr->skel))) {
		bpfload_fail(err, "load the sampler's program", why, whylen);
		goto out;
	}
	tr->pid = pid;
	tr->rb = ring_buffer__new(bpf_map__fd(tr->skel->maps.tags), on_tag, tr, NULL);
	if (!tr->rb) {
		err = bpfload_fail(-errno, "map the tags' ring", why, whylen);
		goto out;
	}
	*out = tr;
	tr = NULL;
	err = 0;
out:
	bpfload_end(old);
	tokio_rec__free(tr);
	return err;
}

int tokio_rec__prog_fd(const struct tokio_rec *tr)
{
	return bpf_program__fd(tr->skel->progs.d9_sample);
}

/* Forget the threads and tasks idle IDLE_S (new maps and arrays: the
 * old ones shrink to what is kept). -ENOMEM leaves all as it was. */
static int prune(struct tokio_rec *tr)
{
	struct lib_map of_tid = {0}, of_task = {0};
	struct tq **q = NULL;
	struct task_votes *v = NULL;
	size_t nq = 0, nv = 0, capq = 0, capv = 0, it = 0;
	uint64_t key, *val;

	while (lib_map_next(&tr->of_tid, &it, &key, &val)) {
		if (tr->epoch - tr->q[*val]->seen > IDLE_S)
			continue;
		if (LIB_GROW(q, capq, nq + 1) || lib_map_set(&of_tid, key, nq))
			goto nomem;
		q[nq++] = tr->q[*val];
	}
	for (it = 0; lib_map_next(&tr->of_task, &it, &key, &val);) {
		if (tr->epoch - tr->votes[*val].seen > IDLE_S)
			continue;
		if (LIB_GROW(v, capv, nv + 1) || lib_map_set(&of_task, key, nv))
			goto nomem;
		v[nv++] = tr->votes[*val];
	}
	/* the queues not kept */
	for (it = 0; lib_map_next(&tr->of_tid, &it, &key, &val);)
		if (!lib_map_find(&of_tid, key))
			free(tr->q[*val]);
	lib_map_release(&tr->of_tid);
	lib_map_release(&tr->of_task);
	free(tr->q);
	free(tr->votes);
	tr->of_tid = of_tid;
	tr->of_task = of_task;
	tr->q = q;
	tr->nq = nq;
	tr->capq = capq;
	tr->votes = v;
	tr->nvotes = nv;
	tr->capvotes = capv;
	return 0;
nomem:
	lib_map_release(&of_tid);
	lib_map_release(&of_task);
	free(q);
	free(v);
	return -ENOMEM;
}

void tokio_rec__drain(struct tokio_rec *tr)
{
	uint64_t now;

	ring_buffer__consume(tr->rb);
	now = record_now_ns();
	if (now < tr->prune_at)
		return;
	tr->prune_at = now + PRUNE_NS;
	tr->epoch++;
	prune(tr);
}

/* The latest tag of @q at or before @time, or -1 */
static int64_t latest(const struct tq *q, uint64_t time)
{
	uint32_t lo = 0, hi = q->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (q->time[(q->head + mid) % TQ_CAP] <= time)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (int64_t)lo - 1 : -1;
}

/* The tag of @q nearest @time, within TOKIO_TAG_WINDOW_NS either way: its
 * index in the ring, or -1 */
static int64_t nearest(const struct tq *q, uint64_t time)
{
	int64_t k = latest(q, time + TOKIO_TAG_WINDOW_NS), best = -1;
	uint64_t best_d = UINT64_MAX;

	for (; k >= 0; k--) {
		uint64_t t = q->time[(q->head + (uint32_t)k) % TQ_CAP];
		uint64_t d = t > time ? t - time : time - t;

		if (d > TOKIO_TAG_WINDOW_NS && t < time)
			break;
		if (d < best_d) {
			best_d = d;
			best = (int64_t)((q->head + (uint32_t)k) % TQ_CAP);
		}
	}
	return best_d <= TOKIO_TAG_WINDOW_NS ? best : -1;
}

uint64_t tokio_rec__tag(struct tokio_rec *tr, uint32_t tid, uint64_t time)
{
	for (int pass = 0; pass < 2; pass++) {
		const struct tq *q = queue_of(tr, tid, 0);
		int64_t at = q ? nearest(q, time) : -1;

		if (at >= 0) {
			if (q->task[at])
				tr->c.in_task++;
			else
				tr->c.no_task++;
			return q->task[at];
		}
		/* written before the sample, not read yet */
		if (!pass)
			tokio_rec__drain(tr);
	}
	tr->c.untagged++;
	return 0;
}

void tokio_rec__set_shim(struct tokio_rec *tr, int64_t off)
{
	__atomic_store_n(&tr->skel->bss->shim_off, off, __ATOMIC_RELAXED);
}

void tokio_rec__set_writer(struct tokio_rec *tr, struct trace_writer *w,
			   trace_resolve_fn resolve, void *rctx)
{
	tr->w = w;
	tr->resolve = resolve;
	tr->rctx = rctx;
	/* stack ids and names are the writer's */
	lib_map_release(&tr->kind);
	lib_map_release(&tr->in_seg);
}

/* Append @s to the stack's names */
static int put_name(struct tokio_rec *tr, size_t *len, size_t *n, const char *s)
{
	size_t l = strlen(s) + 1;

	if (LIB_GROW(tr->at, tr->at_cap, *n + 1) ||
	    LIB_GROW(tr->buf, tr->buf_cap, *len + l))
		return -ENOMEM;
	tr->at[(*n)++] = *len;
	memcpy(tr->buf + *len, s, l);
	*len += l;
	return 0;
}

static const char *name_at(void *ctx, size_t k)
{
	struct tokio_rec *tr = ctx;

	return tr->buf + tr->at[k];
}

/* The kind of task name @name: its index + 3 among the names (added the
 * first time), KIND_NONE without memory */
static uint64_t name_kind(struct tokio_rec *tr, const char *name)
{
	size_t i;

	for (i = 0; i < tr->nnames && strcmp(tr->names[i], name); i++)
		;
	if (i == tr->nnames) {
		if (LIB_GROW(tr->names, tr->capnames, tr->nnames + 1) ||
		    !(tr->names[i] = strdup(name)))
			return KIND_NONE;
		tr->nnames++;
	}
	return i + 3;
}

#define USER_END 0xffff800000000000ULL /* kernel addresses from here */

/* What stack @stack of the writer is: KIND_NONE, KIND_LAUNCH, or a name's
 * index + 3 */
static uint64_t stack_kind(struct tokio_rec *tr, uint32_t stack)
{
	const uint64_t *ips, *have = lib_map_find(&tr->kind, stack);
	unsigned int nips = trace_writer__stack_ips(tr->w, stack, &ips);
	size_t len = 0, n = 0, k;
	uint64_t kind = KIND_NONE;
	char name[512];
	int launch;

	if (have)
		return *have;
	/* leaf first, each address's inlined functions before it */
	for (unsigned int i = 0; i < nips && n < 1024; i++) {
		struct trace_frame f = {.addr = ips[i]};

		if (ips[i] >= USER_END)
			continue;
		if (tr->resolve(tr->rctx, ips[i], &f) || !f.sym)
			f.sym = "";
		for (uint32_t j = 0; f.inl && j < f.ninl; j++)
			if (put_name(tr, &len, &n, f.inl[j] ? f.inl[j] : ""))
				return KIND_NONE;
		if (put_name(tr, &len, &n, f.sym))
			return KIND_NONE;
	}
	k = lib_tokio_split(name_at, tr, n, name, sizeof(name), &launch);
	if (k != SIZE_MAX && launch)
		kind = KIND_LAUNCH;
	else if (k != SIZE_MAX && name[0])
		kind = name_kind(tr, name);
	lib_map_set(&tr->kind, stack, kind);
	return kind;
}

/* The votes of Tokio's task @raw, made the first time (NULL: no memory) */
static struct task_votes *votes_of(struct tokio_rec *tr, uint64_t raw)
{
	const uint64_t *ix = lib_map_find(&tr->of_task, raw);

	if (!ix) {
		if (LIB_GROW(tr->votes, tr->capvotes, tr->nvotes + 1) ||
		    lib_map_set(&tr->of_task, raw, tr->nvotes))
			return NULL;
		memset(&tr->votes[tr->nvotes], 0, sizeof(*tr->votes));
		ix = lib_map_find(&tr->of_task, raw);
		tr->nvotes++;
	}
	tr->votes[*ix].seen = tr->epoch;
	return &tr->votes[*ix];
}

/* The trace's task for @raw as its votes so far say (0: the runtime),
 * named in this writer once its name is known */
static uint64_t decided(struct tokio_rec *tr, uint64_t raw, const struct task_votes *v,
			int *err)
{
	/* mostly in a worker's own launch task: the runtime, no task (a
	 * task's stacks are its own but where a sample came right before
	 * Tokio set its id, or right after) */
	if (v->launch > v->own)
		return 0;
	if (v->name && !lib_map_find(&tr->in_seg, raw)) {
		*err = lib_map_set(&tr->in_seg, raw, 1);
		if (!*err)
			*err = trace_writer__task(tr->w, TRACE_TASK_TOKIO | raw,
						  tr->names[v->name - 1]);
	}
	return TRACE_TASK_TOKIO | raw;
}

/* A poll's task, polled by an instance of @kind: named so where no stack
 * named it before (a task never sampled) */
static uint64_t site_task(struct tokio_rec *tr, uint64_t raw, uint64_t kind, int *err)
{
	struct task_votes *v;

	*err = 0;
	if (!raw || !tr->w)
		return 0;
	v = votes_of(tr, raw);
	if (!v)
		return TRACE_TASK_TOKIO | raw;
	if (kind == KIND_LAUNCH && !v->launch)
		v->launch = v->own + 1;
	else if (kind > KIND_LAUNCH && !v->name)
		v->name = (uint32_t)(kind - 3 + 1);
	return decided(tr, raw, v, err);
}

static uint64_t task_id(struct tokio_rec *tr, uint64_t raw, int *err)
{
	struct task_votes *v;

	*err = 0;
	if (!raw || !tr->w)
		return 0;
	v = votes_of(tr, raw);
	return v ? decided(tr, raw, v, err) : TRACE_TASK_TOKIO | raw;
}

uint64_t tokio_rec__task(struct tokio_rec *tr, uint64_t raw, uint32_t stack, int *err)
{
	struct task_votes *v;
	uint64_t kind;

	*err = 0;
	if (!raw || !tr->w)
		return 0;
	v = votes_of(tr, raw);
	if (!v)
		return TRACE_TASK_TOKIO | raw;
	kind = stack_kind(tr, stack);
	if (kind == KIND_LAUNCH)
		v->launch++;
	else if (kind != KIND_NONE && !v->own++ && !v->name)
		v->name = (uint32_t)(kind - 3 + 1);
	return decided(tr, raw, v, err);
}

void tokio_rec__counts(const struct tokio_rec *tr, struct tokio_rec_counts *c)
{
	*c = tr->c;
}

/* ---- the poll probes (tier 1) ----------------------------------------- */

struct links {
	struct bpf_link **v;
	size_t n;
};

static void *destroy_links(void *arg)
{
	struct links *l = arg;

	for (size_t i = 0; i < l->n; i++)
		bpf_link__destroy(l->v[i]);
	free(l->v);
	free(l);
	return NULL;
}

/* Take the probes off. The kernel waits for RCU grace periods as it
 * removes each (seconds on a busy machine): in a thread of its own, so
 * that the recording goes on meanwhile, unless @now (the recorder's last
 * words: its closer holds the fds by then, and the closes are quick). */
static void links_off(struct tokio_rec *tr, int now)
{
	struct links *l;
	pthread_t th;

	if (!tr->nlinks)
		return;
	l = malloc(sizeof(*l));
	if (l) {
		l->v = tr->links;
		l->n = tr->nlinks;
		tr->links = NULL;
		tr->nlinks = tr->capl = 0;
		if (now || pthread_create(&th, NULL, destroy_links, l))
			destroy_links(l);
		else
			pthread_detach(th);
		return;
	}
	for (size_t i = 0; i < tr->nlinks; i++)
		bpf_link__destroy(tr->links[i]);
	tr->nlinks = 0;
}

static int attach1(struct tokio_rec *tr, struct bpf_program *p, int ret, pid_t pid,
		   const char *path, uint64_t off, uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = !!ret, .bpf_cookie = cookie);
	struct bpf_link *l;

	if (LIB_GROW(tr->links, tr->capl, tr->nlinks + 1))
		return -ENOMEM;
	l = bpf_program__attach_uprobe_opts(p, pid, path, (size_t)off, &uo);
	if (!l)
		return -errno;
	tr->links[tr->nlinks++] = l;
	return 0;
}

/* Called through a pointer: never inlined, never folded; what the
 * calibration probes */
__attribute__((noinline)) static void probe_me(volatile uint64_t *x)
{
	*x = *x + 1;
}

static void (*volatile probe_me_p)(volatile uint64_t *) = probe_me;

/* The file offset of this process's code at @addr, and its file */
static int self_offset(uint64_t addr, char *path, size_t len, uint64_t *off)
{
	char line[4200];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, pg;
		int at = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*x:%*x %*u %n", &lo, &hi, &pg,
			   &at) < 3 ||
		    !at || addr < lo || addr >= hi)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, len, "%s", line + at);
		*off = addr - lo + pg;
		err = path[0] == '/' ? 0 : -ENOENT;
	}
	fclose(f);
	return err;
}

/* What a probed poll costs the thread it runs in, on this machine: the
 * entry and return probes on a function of the recorder's own, which the
 * programs leave at once (not the target), timed against no probes */
#define CALIBRATE_CALLS 20000

static void calibrate(struct tokio_rec *tr)
{
	char path[4096];
	uint64_t off = 0, t0, bare, probed;
	volatile uint64_t x = 0;
	size_t first = tr->nlinks;

	if (self_offset((uint64_t)(uintptr_t)probe_me_p, path, sizeof(path), &off))
		return;
	t0 = record_now_ns();
	for (int i = 0; i < CALIBRATE_CALLS; i++)
		probe_me_p(&x);
	bare = record_now_ns() - t0;
	if (attach1(tr, tr->skel->progs.d9_poll_enter, 0, getpid(), path, off, 0) ||
	    attach1(tr, tr->skel->progs.d9_poll_ret, 1, getpid(), path, off, 0))
		goto out;
	t0 = record_now_ns();
	for (int i = 0; i < CALIBRATE_CALLS; i++)
		probe_me_p(&x);
	probed = record_now_ns() - t0;
	tr->pc.pair_ns = probed > bare ? (probed - bare) / CALIBRATE_CALLS : 0;
out:
	while (tr->nlinks > first)
		bpf_link__destroy(tr->links[--tr->nlinks]);
}

/* The probes' hits so far: polls entered and wakes, counted in the
 * kernel whether a record came of them or not */
static uint64_t hits(const struct tokio_rec *tr)
{
	return __atomic_load_n(&tr->skel->bss->entries, __ATOMIC_RELAXED) +
	       __atomic_load_n(&tr->skel->bss->wakes, __ATOMIC_RELAXED);
}

int tokio_rec__probe(struct tokio_rec *tr, const char *path, const struct tokio_sites *s,
		     uint64_t max_rate, char *why, size_t whylen)
{
	uint64_t cookie;
	int err = 0;

	calibrate(tr);
	tr->site_kind = calloc(s->npoll + 1, sizeof(*tr->site_kind));
	if (!tr->site_kind)
		return -ENOMEM;
	tr->nsites = s->npoll;
	for (size_t i = 0; i < s->npoll && !err; i++) {
		/* each instance's task, from its DWARF name */
		tr->site_kind[i] = strstr(s->name[i], "worker::{impl#0}::launch")
					   ? KIND_LAUNCH
				   : s->name[i][0] ? name_kind(tr, s->name[i])
						   : KIND_NONE;
		cookie = (i + 1) |
			 (tr->site_kind[i] == KIND_LAUNCH ? TOKIO_SITE_RUNTIME : 0);
		err = attach1(tr, tr->skel->progs.d9_poll_enter, 0, tr->pid, path,
			      s->poll[i], cookie);
		if (!err)
			err = attach1(tr, tr->skel->progs.d9_poll_ret, 1, tr->pid, path,
				      s->poll[i], cookie);
	}
	if (!err && s->wake_by_val)
		err = attach1(tr, tr->skel->progs.d9_wake, 0, tr->pid, path,
			      s->wake_by_val, 0);
	if (!err && s->wake_by_ref)
		err = attach1(tr, tr->skel->progs.d9_wake, 0, tr->pid, path,
			      s->wake_by_ref, 0);
	if (err) {
		snprintf(why, whylen, "cannot put uprobes in '%s': %s", path,
			 strerror(-err));
		links_off(tr, 1);
		return err;
	}
	tr->pc.sites = s->npoll;
	tr->max_rate = max_rate;
	tr->rate_from = record_now_ns();
	tr->rate_hits = hits(tr);
	return 0;
}

void tokio_rec__off(struct tokio_rec *tr, uint64_t now, int gap)
{
	if (!tr->nlinks)
		return;
	__atomic_store_n(&tr->skel->bss->probes_off, 1, __ATOMIC_RELAXED);
	links_off(tr, 0);
	if (gap)
		tr->off_at = now;
}

/* Not Tokio's layout: most polls' vtables not as known (judged once a
 * thousand polls are in) */
static int bad_layout(const struct tokio_rec *tr)
{
	uint64_t e = __atomic_load_n(&tr->skel->bss->entries, __ATOMIC_RELAXED);
	uint64_t b = __atomic_load_n(&tr->skel->bss->bad_vtable, __ATOMIC_RELAXED);

	return e >= 1000 && b > e / 2;
}

uint64_t tokio_rec__tick(struct tokio_rec *tr, uint64_t now, int *why)
{
	uint64_t h, ms;

	*why = 0;
	if (!tr->nlinks || now - tr->rate_from < 1000000000ULL)
		return 0;
	h = hits(tr) - tr->rate_hits;
	ms = (now - tr->rate_from) / 1000000;
	/* over the cap a whole second, or not Tokio's layout: the probes go,
	 * for good */
	if ((tr->max_rate && h * 1000 > tr->max_rate * ms) || bad_layout(tr)) {
		*why = bad_layout(tr) ? RECORD_PROBES_OFF_LAYOUT : RECORD_PROBES_OFF_RATE;
		tr->pc.rate = h * 1000 / ms;
		tokio_rec__off(tr, now, 1);
		return now;
	}
	tr->rate_from = now;
	tr->rate_hits += h;
	return 0;
}

int tokio_rec__writer_err(const struct tokio_rec *tr)
{
	return tr->wr_err;
}

void tokio_rec__probe_counts(const struct tokio_rec *tr, struct tokio_probe_counts *c)
{
	*c = tr->pc;
	c->off_at = tr->off_at;
	c->too_deep = __atomic_load_n(&tr->skel->bss->too_deep, __ATOMIC_RELAXED);
	c->nested = __atomic_load_n(&tr->skel->bss->nested, __ATOMIC_RELAXED);
	c->bad_vtable = __atomic_load_n(&tr->skel->bss->bad_vtable, __ATOMIC_RELAXED);
	c->dropped = __atomic_load_n(&tr->skel->bss->dropped, __ATOMIC_RELAXED);
	c->unread = __atomic_load_n(&tr->skel->bss->unread, __ATOMIC_RELAXED);
}

void tokio_rec__free(struct tokio_rec *tr)
{
	if (!tr)
		return;
	links_off(tr, 1);
	free(tr->links);
	ring_buffer__free(tr->rb);
	d9_tokio_tag__destroy(tr->skel);
	for (size_t i = 0; i < tr->nq; i++)
		free(tr->q[i]);
	free(tr->q);
	lib_map_release(&tr->of_tid);
	lib_map_release(&tr->kind);
	lib_map_release(&tr->in_seg);
	lib_map_release(&tr->of_task);
	free(tr->votes);
	for (size_t i = 0; i < tr->nnames; i++)
		free(tr->names[i]);
	free(tr->names);
	free(tr->buf);
	free(tr->at);
	free(tr->site_kind);
	free(tr);
}
