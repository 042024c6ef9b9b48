// SPDX-License-Identifier: MIT
/*
 * exitwatch.c - how the target died (see exitwatch.h for the sources).
 *
 * Why system-wide events and not per-thread ones with inherit: a signal is
 * generated in its sender's context (another process, or the OOM killer
 * in whoever allocated), which per-thread events of the target never see;
 * and per-thread events cost one fd per thread and CPU, where these cost
 * one per tracepoint and CPU whatever the target's size. The kernel
 * filters keep only the records that can say something about a death
 * (fatal-by-default signals, group_dead exits, exit_group, the target's
 * exec), not tid ranges: every thread of the target must pass, including
 * those it creates later, and a range open at the top lets in every newer
 * process anyway. So the rings see the rare deaths of the whole machine
 * (about three records a process exit) and user space keeps the target's:
 * records fired in its context by the sample's pid, signals sent to it by
 * the receiving tid.
 *
 * What the kernel does, measured on 6.18 with perf record -a (the OOM kill
 * in a memory cgroup; tests/unit/test_exitwatch.c holds the rest):
 *   exit(3)      sys_enter_exit_group(3); other threads then take SIGKILL
 *                (signal_deliver); sched_process_exit group_dead last.
 *   kill -9      signal_generate(9, SI_USER, from the sender); every thread
 *                signal_deliver(9); group_dead.
 *   kill -TERM   the same, with signal_generate(15): with the default
 *                action, complete_signal() turns a fatal signal into a
 *                group exit and the threads dequeue SIGKILL, not SIGTERM.
 *   OOM kill     signal_generate(9, SI_KERNEL) in the allocating task, then
 *                oom:mark_victim; then as kill -9.
 *   segfault     signal_generate(11, SEGV_*) and signal_deliver(11) in the
 *                faulting thread (core-dumping signals are not turned into
 *                a group exit at generation), SIGKILL to the others.
 *   exec         the other threads take SIGKILL; no group_dead; exec.
 * Hence the verdict: in time order, since the last exec, the first of an
 * exit_group (exited), a fatal non-SIGKILL delivery (that signal), or a
 * SIGKILL delivery (the last default-fatal signal sent to the target
 * before it, else SIGKILL).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/grow.h"
#include "lib/search.h"
#include "record/exitwatch.h"
#include "record/perf.h"
#include "record/proc.h"
#include "record/tracefs.h"

/* Data pages per CPU, shared by every tracepoint: 16 KiB, about 130
 * process exits of other processes (two records each), woken at a
 * quarter: undrained, two CPUs last half a second of a machine ending 500
 * processes a second. */
#define RING_PAGES 4
#define MAX_EVENTS 65536 /* kept records of the target, beyond: dropped */
#define NSENT	   64	 /* signals sent to the target kept, the latest */
#define NUNKNOWN   16	 /* signals sent to tids not known yet, the latest */

/* not in Debian 12's headers (Linux >= 6.13, exit_code >= 6.15) */
struct pidfd_info_exit {
	__u64 mask;
	__u64 cgroupid;
	__u32 pid, tgid, ppid, ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	__s32 exit_code;
};
#define PIDFD_GET_INFO_EXIT _IOWR(0xFF, 11, struct pidfd_info_exit)
#define PIDFD_INFO_EXIT_BIT (1ULL << 3)

/* Signals whose default action is not to terminate: SIGCHLD, SIGCONT, the
 * four stops, SIGURG, SIGWINCH. */
#define NOT_FATAL_SIGS                                                                   \
	"sig!=17&&sig!=18&&sig!=19&&sig!=20&&sig!=21&&sig!=22&&sig!=23&&sig!=28"

enum tp_kind { TP_SENT, TP_TAKEN, TP_EXIT_GROUP, TP_GONE, TP_EXEC, TP_OOM, TP_N };

/* the tracepoints, their fields (name and size; 0 ends) and filter;
 * %d is the target's pid */
static const struct tp_def {
	const char *name;
	int optional;
	const char *filter;
	struct {
		const char *name;
		unsigned int size;
	} field[4];
} tp_defs[TP_N] = {
	/* clang-format off */
    [TP_SENT] = {"signal/signal_generate", 0, "result==0&&code!=-2&&" NOT_FATAL_SIGS,
		 {{"sig", 4}, {"code", 4}, {"pid", 4}}},
    [TP_TAKEN] = {"signal/signal_deliver", 0, "sa_handler==0&&" NOT_FATAL_SIGS,
		  {{"sig", 4}, {"code", 4}}},
    [TP_EXIT_GROUP] = {"syscalls/sys_enter_exit_group", 0, NULL, {{"error_code", 8}}},
    [TP_GONE] = {"sched/sched_process_exit", 0, "group_dead==1", {{"group_dead", 1}}},
    [TP_EXEC] = {"sched/sched_process_exec", 1, "pid==%d", {{NULL, 0}}},
    [TP_OOM] = {"oom/mark_victim", 1, NULL, {{"pid", 4}}},
	/* clang-format on */
};

struct tp {
	uint64_t id;
	int open;
	unsigned int off[4], size[4];
};

/* a record of the target, in the form the verdict reads */
struct ev {
	uint64_t time;
	int32_t a, b;	 /* SENT: sig, code; TAKEN: sig, code; EXIT_GROUP:
			  * status */
	uint32_t tid;	 /* SENT: the receiver; else the thread it fired in */
	uint32_t sender; /* SENT: the sending process */
	uint8_t kind;
};

struct evs {
	struct ev *v;
	size_t n, cap;
};

struct exitwatch {
	pid_t pid;
	int pidfd;
	struct perf_set *ps;
	struct perf_callbacks cb;
	struct tp tp[TP_N];
	struct evs evs;		     /* all but SENT */
	struct ev sent[NSENT];	     /* a ring of the latest */
	unsigned int nsent;	     /* ever kept */
	struct ev unknown[NUNKNOWN]; /* SENT to tids not known then */
	unsigned int nunknown;
	uint32_t *tids; /* the target's threads known: sorted */
	size_t ntids, captids;
	uint64_t lost, dropped;
};

/* ---- the target's threads ----------------------------------------------- */

static int tid_find(const struct exitwatch *ew, uint32_t tid, size_t *at)
{
	*at = LIB_PARTITION_POINT(0, ew->ntids, m, ew->tids[m] < tid);
	return *at < ew->ntids && ew->tids[*at] == tid;
}

static void tid_add(struct exitwatch *ew, uint32_t tid)
{
	size_t at;

	if (tid_find(ew, tid, &at))
		return;
	if (LIB_GROW(ew->tids, ew->captids, ew->ntids + 1))
		return; /* known by /proc while it lives */
	memmove(&ew->tids[at + 1], &ew->tids[at], (ew->ntids - at) * sizeof(*ew->tids));
	ew->tids[at] = tid;
	ew->ntids++;
}

/* Is @tid one of the target's threads: known, or listed now. */
static int tid_is_target(struct exitwatch *ew, uint32_t tid)
{
	char path[64];
	struct stat st;
	size_t at;

	if (tid == (uint32_t)ew->pid || tid_find(ew, tid, &at))
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)ew->pid, tid);
	if (stat(path, &st))
		return 0;
	tid_add(ew, tid);
	return 1;
}

static void tid_found(void *ctx, pid_t tid)
{
	tid_add(ctx, (uint32_t)tid);
}

/* ---- records ------------------------------------------------------------- */

static int64_t raw_field(const struct tp *t, const struct perf_sample *s, unsigned int i)
{
	const unsigned char *p = (const unsigned char *)s->raw + t->off[i];
	int64_t v = 0;

	switch (t->size[i]) {
	case 1:
		return *p;
	case 4: {
		int32_t x;

		memcpy(&x, p, 4);
		return x;
	}
	case 8:
		memcpy(&v, p, 8);
		return v;
	}
	return 0;
}

static void push(struct exitwatch *ew, const struct ev *e)
{
	if (ew->evs.n >= MAX_EVENTS || LIB_GROW(ew->evs.v, ew->evs.cap, ew->evs.n + 1)) {
		ew->dropped++;
		return;
	}
	ew->evs.v[ew->evs.n++] = *e;
}

static void on_sample(void *ctx, const struct perf_sample *s)
{
	struct exitwatch *ew = ctx;
	struct ev e = {.time = s->time, .tid = s->tid};
	uint16_t type;
	unsigned int k, i;
	const struct tp *t;

	if (!s->raw || s->raw_size < 8)
		return;
	memcpy(&type, s->raw, sizeof(type));
	for (k = 0; k < TP_N && !(ew->tp[k].open && ew->tp[k].id == type); k++)
		;
	if (k == TP_N)
		return;
	t = &ew->tp[k];
	for (i = 0; i < 4 && t->size[i]; i++)
		if (s->raw_size < t->off[i] + t->size[i])
			return;
	e.kind = (uint8_t)k;
	switch (k) {
	case TP_SENT:
		e.a = (int32_t)raw_field(t, s, 0);
		e.b = (int32_t)raw_field(t, s, 1);
		e.tid = (uint32_t)raw_field(t, s, 2);
		e.sender = s->pid;
		if (tid_is_target(ew, e.tid))
			ew->sent[ew->nsent++ % NSENT] = e;
		else
			ew->unknown[ew->nunknown++ % NUNKNOWN] = e;
		return;
	case TP_OOM:
		e.tid = (uint32_t)raw_field(t, s, 0);
		if (tid_is_target(ew, e.tid))
			push(ew, &e);
		return;
	case TP_TAKEN:
		e.a = (int32_t)raw_field(t, s, 0);
		e.b = (int32_t)raw_field(t, s, 1);
		break;
	case TP_EXIT_GROUP:
		/* exit_group(status): the low byte is the exit status */
		e.a = (int32_t)(raw_field(t, s, 0) & 0xff);
		break;
	case TP_GONE:
		if (!raw_field(t, s, 0))
			return;
		break;
	}
	/* fired in the thread's own context */
	if (s->pid != (uint32_t)ew->pid)
		return;
	tid_add(ew, s->tid);
	push(ew, &e);
}

static void on_lost(void *ctx, uint64_t lost)
{
	((struct exitwatch *)ctx)->lost += lost;
}

/* ---- opening ------------------------------------------------------------- */

static int tp_open(struct exitwatch *ew, const char *tracefs, enum tp_kind k, char *why,
		   size_t whylen)
{
	const struct tp_def *d = &tp_defs[k];
	struct tp *t = &ew->tp[k];
	char fmt[8192], filter[512];
	unsigned int i;
	int err;

	err = tracepoint_read(tracefs, d->name, &t->id, fmt, sizeof(fmt), why, whylen);
	if (err)
		return err;
	for (i = 0; i < 4 && d->field[i].name; i++) {
		t->size[i] = d->field[i].size;
		t->off[i] = tracepoint_offset(fmt, d->field[i].name, t->size[i]);
		/* error_code is "int" of 8 bytes on some kernels, 4 on others */
		if (!t->off[i] && t->size[i] == 8)
			t->off[i] =
				tracepoint_offset(fmt, d->field[i].name, t->size[i] = 4);
		if (!t->off[i]) {
			snprintf(why, whylen, "no field '%s' in %s's format",
				 d->field[i].name, d->name);
			return -ENOENT;
		}
	}
	if (d->filter)
		snprintf(filter, sizeof(filter), d->filter, (int)ew->pid);
	err = perf_set__add_cpus_config(ew->ps, t->id, d->filter ? filter : NULL);
	if (err) {
		snprintf(why, whylen, "cannot open %s on every CPU: %s%s", d->name,
			 strerror(-err),
			 err == -EACCES || err == -EPERM
				 ? " (system-wide tracepoints need root or CAP_PERFMON)"
				 : "");
		return err;
	}
	t->open = 1;
	return 0;
}

static int tps_open(struct exitwatch *ew, unsigned int flags, char *why, size_t whylen)
{
	struct perf_event_attr a;
	char tracefs[128], opt[256];
	int mounted, err;
	unsigned int k;

	err = tracefs_find(!!(flags & EXITWATCH_MAY_MOUNT), tracefs, sizeof(tracefs),
			   &mounted, why, whylen);
	if (err)
		return err;
	perf_attr_init(&a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.sample_period = 1;
	a.sample_type |= PERF_SAMPLE_RAW;
	err = perf_set__new_attr(&a, RING_PAGES, &ew->ps);
	if (err)
		return err;
	for (k = 0; k < TP_N; k++) {
		err = tp_open(ew, tracefs, k, tp_defs[k].optional ? opt : why,
			      tp_defs[k].optional ? sizeof(opt) : whylen);
		if (err && !tp_defs[k].optional)
			return err;
	}
	return 0;
}

int exitwatch__open(pid_t pid, unsigned int flags, struct exitwatch **out, char *why,
		    size_t whylen)
{
	struct exitwatch *ew;
	int err;

	*out = NULL;
	if (whylen)
		why[0] = '\0';
	if (pid <= 0)
		return -EINVAL;
	ew = calloc(1, sizeof(*ew));
	if (!ew)
		return -ENOMEM;
	ew->pid = pid;
	ew->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (ew->pidfd < 0) {
		err = -errno;
		free(ew);
		return err;
	}
	ew->cb = (struct perf_callbacks){.ctx = ew, .sample = on_sample, .lost = on_lost};
	if (flags & EXITWATCH_NO_TRACEPOINTS) {
		snprintf(why, whylen, "tracepoints not wanted");
	} else if (tps_open(ew, flags, why, whylen)) {
		perf_set__free(ew->ps);
		ew->ps = NULL;
		memset(ew->tp, 0, sizeof(ew->tp));
	}
	/* after the events exist: a thread created since is seen by them */
	proc_for_each_tid(ew->pid, tid_found, ew);
	*out = ew;
	return 0;
}

int exitwatch__traced(const struct exitwatch *ew)
{
	return ew && ew->ps;
}

void exitwatch__enable(struct exitwatch *ew)
{
	if (ew)
		perf_set__enable(ew->ps);
}

unsigned int exitwatch__pollfds(const struct exitwatch *ew, struct pollfd *pfd,
				unsigned int max)
{
	unsigned int n;

	if (!ew)
		return 0;
	n = perf_set__pollfds(ew->ps, pfd, max);
	if (n < max)
		pfd[n++] = (struct pollfd){.fd = ew->pidfd, .events = POLLIN};
	return n;
}

void exitwatch__drain(struct exitwatch *ew)
{
	if (ew && ew->ps)
		perf_set__drain(ew->ps, &ew->cb);
}

/* ---- the verdict --------------------------------------------------------- */

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	return x->time < y->time ? -1 : x->time > y->time;
}

static int sig_dumps_core(int sig)
{
	switch (sig) {
	case SIGQUIT:
	case SIGILL:
	case SIGTRAP:
	case SIGABRT:
	case SIGBUS:
	case SIGFPE:
	case SIGSEGV:
	case SIGXCPU:
	case SIGXFSZ:
	case SIGSYS:
		return 1;
	}
	return 0;
}

static void signaled(struct exitwatch_result *r, int sig, int code, uint32_t sender,
		     uint64_t time)
{
	r->how = EXITWATCH_SIGNALED;
	r->status = sig;
	r->core = sig_dumps_core(sig);
	r->code = code;
	/* a process sent it (kill, tgkill, sigqueue); else the kernel did */
	r->sender = code == SI_USER || code == SI_TKILL || code == SI_QUEUE
			    ? (pid_t)sender
			    : 0;
	r->time = time;
}

/* The target's records in time order, read as the file comment says. */
static int verdict(struct exitwatch *ew, struct exitwatch_result *r)
{
	unsigned int i, nsent = ew->nsent < NSENT ? ew->nsent : NSENT;
	unsigned int nunk = ew->nunknown < NUNKNOWN ? ew->nunknown : NUNKNOWN;
	const struct ev *last_sent = NULL;
	uint64_t gone = 0;
	int oom = 0, have = 0;
	size_t at, j;

	for (i = 0; i < nsent; i++)
		push(ew, &ew->sent[i]);
	/* sent to a thread that was gone when we looked: one that took a
	 * SIGKILL or exited since is the target's */
	for (i = 0; i < nunk; i++)
		if (tid_find(ew, ew->unknown[i].tid, &at))
			push(ew, &ew->unknown[i]);
	ew->nsent = ew->nunknown = 0;
	qsort(ew->evs.v, ew->evs.n, sizeof(*ew->evs.v), ev_cmp);
	for (j = 0; j < ew->evs.n; j++) {
		const struct ev *e = &ew->evs.v[j];

		switch (e->kind) {
		case TP_EXEC: /* the process lives on */
			have = oom = 0;
			gone = 0;
			last_sent = NULL;
			memset(r, 0, sizeof(*r));
			break;
		case TP_SENT:
			if (!have)
				last_sent = e;
			break;
		case TP_OOM:
			oom = 1;
			break;
		case TP_EXIT_GROUP:
			if (have++)
				break;
			r->how = EXITWATCH_EXITED;
			r->status = e->a;
			r->time = e->time;
			break;
		case TP_TAKEN:
			if (have++)
				break;
			if (e->a != SIGKILL)
				signaled(r, e->a, e->b, 0, e->time);
			else if (last_sent)
				signaled(r, last_sent->a, last_sent->b, last_sent->sender,
					 e->time);
			else /* its cause unseen (lost) */
				signaled(r, SIGKILL, 0, 0, e->time);
			break;
		case TP_GONE:
			/* the end: later records are of a process that
			 * reused the pid once this one was reaped */
			if (have)
				gone = e->time;
			break;
		}
		if (gone)
			break;
	}
	if (!have)
		return 0;
	r->oom = oom;
	if (gone > r->time)
		r->time = gone;
	return 1;
}

/* The exit code of zombie @pid from /proc/PID/stat: 1 with the wait status
 * in @status, 0 if there is none (reaped, or not dead). */
static int proc_stat_status(int pidfd, pid_t pid, int *status)
{
	char path[64], buf[4096], *p, state;
	long code = -1;
	int field;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p)
		return 0;
	/* "pid (comm) S ...": comm may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %c", &state) != 1 || (state != 'Z' && state != 'X'))
		return 0;
	for (field = 2, p++; *p && field < 52; p++)
		if (*p == ' ')
			field++;
	if (field != 52 || sscanf(p, "%ld", &code) != 1 || code < 0)
		return 0;
	/* still not reaped now, so the pid was not reused before the read */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0))
		return 0;
	*status = (int)code;
	return 1;
}

/* The exit status the kernel keeps for a reaped process's pidfd. */
static int pidfd_status(int pidfd, int *status)
{
	struct pidfd_info_exit info;

	memset(&info, 0, sizeof(info));
	info.mask = PIDFD_INFO_EXIT_BIT;
	if (ioctl(pidfd, PIDFD_GET_INFO_EXIT, &info) ||
	    !(info.mask & PIDFD_INFO_EXIT_BIT))
		return 0;
	*status = info.exit_code;
	return 1;
}

static void from_status(struct exitwatch_result *r, int status, const char *source)
{
	if (WIFEXITED(status)) {
		r->how = EXITWATCH_EXITED;
		r->status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		r->how = EXITWATCH_SIGNALED;
		r->status = WTERMSIG(status);
		r->core = sig_dumps_core(r->status);
	} else {
		return;
	}
	snprintf(r->source, sizeof(r->source), "%s", source);
}

int exitwatch__result(struct exitwatch *ew, struct exitwatch_result *out)
{
	struct pollfd pfd = {.fd = ew->pidfd, .events = POLLIN};
	int status;

	memset(out, 0, sizeof(*out));
	if (poll(&pfd, 1, 0) <= 0 || !(pfd.revents & (POLLIN | POLLHUP)))
		return -EAGAIN;
	exitwatch__drain(ew);
	if (ew->ps && verdict(ew, out)) {
		out->lost = ew->lost + ew->dropped;
		snprintf(out->source, sizeof(out->source), "tracepoint");
		return 0;
	}
	if (proc_stat_status(ew->pidfd, ew->pid, &status))
		from_status(out, status, "/proc stat");
	else if (pidfd_status(ew->pidfd, &status))
		from_status(out, status, "pidfd");
	return 0;
}

void exitwatch__free(struct exitwatch *ew)
{
	if (!ew)
		return;
	perf_set__free(ew->ps);
	if (ew->pidfd >= 0)
		close(ew->pidfd);
	free(ew->evs.v);
	free(ew->tids);
	free(ew);
}

const char *exitwatch_describe(const struct exitwatch_result *r, char *buf, size_t len)
{
	const char *abbrev;
	char name[24];
	int n;

	if (r->how == EXITWATCH_EXITED) {
		snprintf(buf, len, "exit %d", r->status);
		return buf;
	}
	if (r->how != EXITWATCH_SIGNALED) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	abbrev = sigabbrev_np(r->status);
	if (abbrev)
		snprintf(name, sizeof(name), "SIG%s", abbrev);
	else if (r->status >= SIGRTMIN && r->status <= SIGRTMAX)
		snprintf(name, sizeof(name), "SIGRTMIN+%d", r->status - SIGRTMIN);
	else
		snprintf(name, sizeof(name), "?");
	n = snprintf(buf, len, "signal %d (%s%s)", r->status, name,
		     r->core ? ", dumps core" : "");
	if (n < 0 || (size_t)n >= len)
		return buf;
	if (r->oom)
		snprintf(buf + n, len - (size_t)n, " by the OOM killer");
	else if (r->sender)
		snprintf(buf + n, len - (size_t)n, " from pid %d", (int)r->sender);
	return buf;
}
