// SPDX-License-Identifier: MIT
/*
 * offcpu.c - sched-switch collector: off-CPU intervals with complete stacks.
 *
 * See offcpu.h for what is collected. The parts:
 *   - finding tracefs and the sched_switch tracepoint's id and prev_state
 *     field (mounting tracefs when it is missing and we may);
 *   - the perf_event attr for either source, opened through record/perf.c;
 *   - the stack of a switch-out: kernel frames from the callchain, then the
 *     user frames unwound with CFI over the stack copy, continued by the
 *     kernel's frame-pointer chain from the first return address both
 *     agree on;
 *   - pairing switch-outs with switch-ins per thread in time order.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "record/offcpu.h"
#include "record/record.h"
#include "record/perf.h"
#include "record/ustack.h"
#include "symbol/symbolize.h"
#include "trace/trace.h"

#define MAX_CHAIN 512
#define RING_PAGES                                                                       \
	256 /* 1 MiB per CPU: ~100 switches with 8 KiB                                   \
	     * stack copies, several ticks of a busy                                     \
	     * target */
#define SETTLE_NS                                                                        \
	2000000ULL /* a record stamped this long before a                                \
		    * drain began is in its ring by then */
#define TASK_STATE_BITS                                                                  \
	0xffu /* prev_state sleep bits (S D T t X Z P I);                                \
	       * above them the "preempted" marker */

/* ---- tracefs ------------------------------------------------------------ */

int tracefs_find_in(const char *mounts, char *path, size_t len)
{
	const char *line = mounts;
	char debugfs[256] = "";

	while (line && *line) {
		char dev[256], dir[256], type[64];
		const char *nl = strchr(line, '\n');

		if (sscanf(line, "%255s %255s %63s", dev, dir, type) == 3) {
			if (!strcmp(type, "tracefs")) {
				snprintf(path, len, "%s", dir);
				return 0;
			}
			if (!strcmp(type, "debugfs") && !debugfs[0])
				snprintf(debugfs, sizeof(debugfs), "%s", dir);
		}
		line = nl ? nl + 1 : NULL;
	}
	if (debugfs[0]) {
		/* older kernels: tracefs shows up inside debugfs */
		snprintf(path, len, "%s/tracing", debugfs);
		return 0;
	}
	return -ENOENT;
}

int tracepoint_field(const char *format, const char *field, unsigned int *offset,
		     unsigned int *size, int *is_signed)
{
	size_t flen = strlen(field);
	const char *p = format;

	/* "\tfield:<type> <name>[<n>];\toffset:<o>;\tsize:<s>;\tsigned:<0|1>;" */
	while ((p = strstr(p, "field:"))) {
		const char *semi = strchr(p, ';'), *name;
		unsigned int o, s;
		int sg = 0;

		if (!semi)
			return -EINVAL;
		name = semi;
		while (name > p && name[-1] != ' ' && name[-1] != '\t')
			name--;
		/* an array field is "name[16]" */
		if ((size_t)(semi - name) >= flen && !strncmp(name, field, flen) &&
		    (name[flen] == ';' || name[flen] == '[')) {
			const char *q = strstr(semi, "offset:"),
				   *r = strstr(semi, "size:");
			const char *sgp = strstr(semi, "signed:");
			const char *eol = strchr(semi, '\n');

			if (!q || !r || (eol && (q > eol || r > eol)) ||
			    sscanf(q, "offset:%u", &o) != 1 ||
			    sscanf(r, "size:%u", &s) != 1)
				return -EINVAL;
			if (sgp && (!eol || sgp < eol))
				sscanf(sgp, "signed:%d", &sg);
			*offset = o;
			*size = s;
			if (is_signed)
				*is_signed = sg;
			return 0;
		}
		p = semi;
	}
	return -ENOENT;
}

int offcpu_state_is_preempted(uint64_t state)
{
	return !(state & TASK_STATE_BITS);
}

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return 0;
}

struct tp_info {
	uint64_t id;
	unsigned int state_off, state_size;
};

/* The sched_switch tracepoint under tracefs @dir. */
static int tp_info_read(const char *dir, struct tp_info *tp, char *why, size_t whylen)
{
	char path[192], buf[8192];
	unsigned long long id;
	int err;

	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", dir);
	err = read_text(path, buf, sizeof(buf));
	if (err || sscanf(buf, "%llu", &id) != 1) {
		snprintf(why, whylen, "cannot read '%s': %s", path,
			 strerror(err ? -err : EINVAL));
		return err ? err : -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/format", dir);
	err = read_text(path, buf, sizeof(buf));
	if (!err)
		err = tracepoint_field(buf, "prev_state", &tp->state_off, &tp->state_size,
				       NULL);
	if (err || (tp->state_size != 4 && tp->state_size != 8)) {
		snprintf(why, whylen, "no usable prev_state field in '%s'", path);
		return -ENOENT;
	}
	tp->id = id;
	return 0;
}

/* Find (or mount) tracefs and read the tracepoint. 0 or -errno + @why. */
static int find_tracepoint(const struct offcpu_rec_opts *o, struct offcpu_rec_stats *st,
			   struct tp_info *tp, char *why, size_t whylen)
{
	static const char mnt[] = "/sys/kernel/tracing";
	char mounts[65536];
	int err;

	err = read_text("/proc/mounts", mounts, sizeof(mounts));
	if (!err)
		err = tracefs_find_in(mounts, st->tracefs, sizeof(st->tracefs));
	if (err == -ENOENT && o->may_mount && geteuid() == 0) {
		if (mount("tracefs", mnt, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  NULL) == 0) {
			snprintf(st->tracefs, sizeof(st->tracefs), "%s", mnt);
			st->mounted_tracefs = 1;
			err = 0;
		} else {
			err = -errno;
			snprintf(why, whylen,
				 "tracefs is not mounted and mounting it at %s "
				 "failed: %s",
				 mnt, strerror(errno));
			return err;
		}
	}
	if (err) {
		snprintf(why, whylen,
			 "tracefs is not mounted (mount -t tracefs "
			 "nodev /sys/kernel/tracing as root)");
		return -ENOENT;
	}
	return tp_info_read(st->tracefs, tp, why, whylen);
}

/* ---- per-thread pairing ------------------------------------------------- */

enum ev_kind { EV_OUT, EV_OUT_REC, EV_IN };

struct ev {
	uint64_t time;
	uint32_t stack;
	uint8_t kind;
	uint8_t preempted;
	uint8_t known; /* EV_OUT: preempted is known (tracepoint) */
};

struct tstate {
	uint32_t tid;  /* 0: empty slot */
	struct ev *ev; /* unprocessed, time order */
	uint32_t n, cap;
	/* the switch-out waiting for its switch-in */
	int open;
	struct ev out;
};

struct offcpu_rec {
	struct perf_set *ps;
	struct perf_callbacks cb;
	struct symbolizer *sym;
	struct trace_writer *w;
	struct offcpu_rec_stats *st;
	pid_t pid;
	int tracepoint;
	struct tp_info tp;
	struct tstate *ts; /* open addressing by tid */
	size_t nts, capts;
	uint64_t watermark; /* records before it are all read */
	int err;
};

static size_t tid_hash(uint32_t tid, size_t mask)
{
	return (size_t)(tid * 2654435761u) & mask;
}

static struct tstate *tstate_get(struct offcpu_rec *oc, uint32_t tid)
{
	size_t i, mask;

	if (2 * (oc->nts + 1) > oc->capts) {
		size_t ncap = oc->capts ? 2 * oc->capts : 64, j;
		struct tstate *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return NULL;
		for (j = 0; j < oc->capts; j++) {
			if (!oc->ts[j].tid)
				continue;
			for (i = tid_hash(oc->ts[j].tid, ncap - 1); nt[i].tid;
			     i = (i + 1) & (ncap - 1))
				;
			nt[i] = oc->ts[j];
		}
		free(oc->ts);
		oc->ts = nt;
		oc->capts = ncap;
	}
	mask = oc->capts - 1;
	for (i = tid_hash(tid, mask); oc->ts[i].tid; i = (i + 1) & mask)
		if (oc->ts[i].tid == tid)
			return &oc->ts[i];
	oc->ts[i].tid = tid;
	oc->nts++;
	return &oc->ts[i];
}

/* Insert in time order; equal times keep arrival order (same ring). */
static void push_ev(struct offcpu_rec *oc, uint32_t tid, const struct ev *e)
{
	struct tstate *t = tstate_get(oc, tid);
	uint32_t i;

	if (!t) {
		oc->err = oc->err ? oc->err : -ENOMEM;
		return;
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 8;
		struct ev *n = realloc(t->ev, cap * sizeof(*n));

		if (!n) {
			oc->err = oc->err ? oc->err : -ENOMEM;
			return;
		}
		t->ev = n;
		t->cap = cap;
	}
	for (i = t->n; i > 0 && t->ev[i - 1].time > e->time; i--)
		;
	memmove(&t->ev[i + 1], &t->ev[i], (t->n - i) * sizeof(*e));
	t->ev[i] = *e;
	t->n++;
}

static void write_interval(struct offcpu_rec *oc, uint32_t tid, const struct ev *out,
			   uint64_t time_in)
{
	struct trace_switch s = {
	    .time = out->time,
	    .time_in = time_in,
	    .tid = tid,
	    .stack = out->stack,
	    .preempted = out->preempted,
	};
	int err = trace_writer__switch(oc->w, &s);

	if (err && !oc->err)
		oc->err = err;
	oc->st->switches++;
	if (out->preempted)
		oc->st->preempted++;
	else
		oc->st->blocked++;
	if (!time_in)
		oc->st->open_at_end++;
}

/* Pair what is settled (before @until) of thread @t. */
static void settle(struct offcpu_rec *oc, struct tstate *t, uint64_t until)
{
	uint32_t i;

	for (i = 0; i < t->n && t->ev[i].time < until; i++) {
		const struct ev *e = &t->ev[i];

		switch (e->kind) {
		case EV_OUT:
			if (t->open)
				oc->st->unpaired++; /* its switch-in was lost */
			t->out = *e;
			t->open = 1;
			break;
		case EV_OUT_REC:
			if (t->open && !t->out.known) {
				t->out.preempted = e->preempted;
				t->out.known = 1;
			}
			break;
		case EV_IN:
			/* a switch-in without a switch-out: the first one of a
			 * thread that was off-CPU at attach time */
			if (t->open)
				write_interval(oc, t->tid, &t->out, e->time);
			t->open = 0;
			break;
		}
	}
	memmove(t->ev, t->ev + i, (t->n - i) * sizeof(*t->ev));
	t->n -= i;
}

static void settle_all(struct offcpu_rec *oc, uint64_t until)
{
	size_t i;

	for (i = 0; i < oc->capts; i++)
		if (oc->ts[i].tid && oc->ts[i].n)
			settle(oc, &oc->ts[i], until);
}

static void on_sample(void *ctx, const struct perf_sample *s)
{
	struct offcpu_rec *oc = ctx;
	uint64_t ips[MAX_CHAIN];
	unsigned int n;
	struct ev e = {.time = s->time, .kind = EV_OUT};
	int err;

	if (oc->tracepoint) {
		uint64_t state = 0;

		if (!s->raw || s->raw_size < oc->tp.state_off + oc->tp.state_size)
			return;
		memcpy(&state, (const unsigned char *)s->raw + oc->tp.state_off,
		       oc->tp.state_size); /* little endian */
		if (oc->tp.state_size == 4)
			state = (uint32_t)state;
		e.preempted = (uint8_t)offcpu_state_is_preempted(state);
		e.known = 1;
	}
	n = ustack_chain(oc->sym, s, ips, MAX_CHAIN, &oc->st->ustack);
	err = trace_writer__stack(oc->w, ips, n, &e.stack);
	if (err) {
		if (!oc->err)
			oc->err = err;
		return;
	}
	push_ev(oc, s->tid, &e);
}

static void on_ctxsw(void *ctx, uint32_t tid, uint64_t time, int out, int preempted)
{
	struct offcpu_rec *oc = ctx;
	struct ev e = {.time = time,
		       .kind = out ? EV_OUT_REC : EV_IN,
		       .preempted = (uint8_t)preempted};

	if (tid)
		push_ev(oc, tid, &e);
}

static void on_lost(void *ctx, uint64_t lost)
{
	struct offcpu_rec *oc = ctx;

	oc->st->lost += lost;
}

/* ---- opening ------------------------------------------------------------ */

static void make_attr(const struct offcpu_rec *oc, const struct offcpu_rec_opts *o,
		      struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (oc->tracepoint) {
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = oc->tp.id;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	}
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	if (oc->tracepoint)
		a->sample_type |= PERF_SAMPLE_RAW;
	ustack_attr(a, o->stack_bytes);
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->inherit = 1;
	a->sample_id_all = 1;
	a->context_switch = 1;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = !!o->exclude_kernel;
}

static int open_source(struct offcpu_rec *oc, const struct offcpu_rec_opts *o)
{
	struct perf_event_attr a;
	int err;

	make_attr(oc, o, &a);
	oc->ps = perf_set__new_attr(&a, RING_PAGES);
	if (!oc->ps)
		return -errno;
	err = perf_set__add_process(oc->ps, oc->pid, NULL, NULL);
	if (err < 0) {
		perf_set__free(oc->ps);
		oc->ps = NULL;
		return err;
	}
	return 0;
}

int offcpu_rec__open(pid_t pid, const struct offcpu_rec_opts *o, struct symbolizer *sym,
		     struct trace_writer *w, struct offcpu_rec_stats *st,
		     struct offcpu_rec **out, char *why, size_t whylen)
{
	struct offcpu_rec *oc;
	int err = -ENOENT;

	*out = NULL;
	why[0] = '\0';
	if (o->stack_bytes % 8 || o->stack_bytes > OFFCPU_STACK_MAX) {
		snprintf(why, whylen, "bad stack copy size %u", o->stack_bytes);
		return -EINVAL;
	}
	oc = calloc(1, sizeof(*oc));
	if (!oc)
		return -ENOMEM;
	oc->pid = pid;
	oc->sym = sym;
	oc->w = w;
	oc->st = st;
	oc->cb = (struct perf_callbacks){
	    .ctx = oc, .sample = on_sample, .ctxsw = on_ctxsw, .lost = on_lost};
	if (o->source != OFFCPU_REC_SWITCH) {
		char tpwhy[256];

		err = find_tracepoint(o, st, &oc->tp, tpwhy, sizeof(tpwhy));
		if (!err) {
			oc->tracepoint = 1;
			err = open_source(oc, o);
			if (err)
				snprintf(tpwhy, sizeof(tpwhy),
					 "cannot open sched:sched_switch: %s",
					 strerror(-err));
		}
		if (err && o->source == OFFCPU_REC_TRACEPOINT) {
			snprintf(why, whylen, "%s", tpwhy);
			goto fail;
		}
		if (err)
			snprintf(st->fallback_why, sizeof(st->fallback_why), "%s", tpwhy);
		if (err == -ESRCH)
			goto fail;
	}
	if (err) {
		oc->tracepoint = 0;
		st->tracefs[0] = '\0';
		err = open_source(oc, o);
		if (err) {
			snprintf(why, whylen, "cannot open the context-switch event: %s",
				 strerror(-err));
			goto fail;
		}
	}
	st->source = oc->tracepoint ? "tracepoint" : "context-switch";
	oc->watermark = 0;
	*out = oc;
	return 0;
fail:
	offcpu_rec__free(oc);
	return err;
}

int offcpu_rec__drain(struct offcpu_rec *oc)
{
	uint64_t start = record_now_ns();

	perf_set__drain(oc->ps, &oc->cb);
	/* everything stamped before the previous drain began (less a margin
	 * for records being written as it read) has been read by now */
	if (oc->watermark)
		settle_all(oc, oc->watermark);
	oc->watermark = start > SETTLE_NS ? start - SETTLE_NS : 1;
	return oc->err;
}

int offcpu_rec__finish(struct offcpu_rec *oc)
{
	size_t i;

	perf_set__drain(oc->ps, &oc->cb);
	settle_all(oc, UINT64_MAX);
	for (i = 0; i < oc->capts; i++)
		if (oc->ts[i].tid && oc->ts[i].open) {
			write_interval(oc, oc->ts[i].tid, &oc->ts[i].out, 0);
			oc->ts[i].open = 0;
		}
	return oc->err;
}

void offcpu_rec__free(struct offcpu_rec *oc)
{
	size_t i;

	if (!oc)
		return;
	perf_set__free(oc->ps);
	for (i = 0; i < oc->capts; i++)
		free(oc->ts[i].ev);
	free(oc->ts);
	free(oc);
}
