// SPDX-License-Identifier: MIT
/*
 * mktrace FILE - write the fixed synthetic trace of the golden tests: a
 * two-worker runtime with a timer thread, 61 tasks (7 "net", 42 "disk",
 * 61 "forgotten", the rest "short"), 1,400 polls, CPU samples with named
 * stacks, off-CPU intervals split into blocked and run-queue time behind
 * "stress", and wakes; the application's spans (a "request" per poll of
 * the net task, from its wake to its end, and one of 350 ms entered in the
 * disk task's polls) and events ("cache_miss" in each disk poll).
 * Everything is a function of the loop counters: the same bytes every
 * run.
 *
 * mktrace --segments A-B [--cut] [--dump REASON] [--exit STATUS] FILE -
 * the same records as recording "golden-rec" cut into segments at 0.2,
 * 0.4 and 0.6 s (the fourth runs to 3 s), as a flight recorder keeps
 * them; segments A to B of them back to back in FILE, each whole alone
 * (its names, stacks, and in STATE what was open at its start) and with
 * the wall clock (it starts at 2026-11-20 23:59:59.800 UTC, so it runs
 * past midnight). --cut leaves the last one without its END, --dump and
 * --exit give it the meta of a dump.
 *
 * mktrace --hostile FILE - the same trace with the names a hostile target
 * chooses (its command line, comm, thread, task and symbol names, and
 * what a recording's meta says of it): terminal escapes, a bell, C1
 * controls as UTF-8 and as raw bytes, overlong, surrogate, truncated and
 * out-of-range UTF-8, line breaks and bidi controls, next to valid é,
 * CJK and emoji. No view may show those controls or write invalid UTF-8
 * (tests/golden/textcheck.py).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"

#define T0    1000000000ULL
#define US    1000ULL
#define MS    1000000ULL
#define KADDR 0xffffffff81000000ULL

static const struct sym {
	uint64_t addr;
	const char *name, *module;
} syms[] = {
	{0x401000, "main", "golden"},
	{0x402000, "worker_main", "golden"},
	{0x403000, "run_poll", "golden"},
	{0x404000, "short_poll", "golden"},
	{0x405000, "net_poll", "golden"},
	{0x406000, "parse_request", "golden"},
	{0x407000, "disk_poll", "golden"},
	{0x408000, "read_block", "golden"},
	{0x409000, "hash_loop", "golden"},
	{0x40a000,
	 "ns::detail::Codec<std::vector<unsigned char, std::allocator<unsigned char> >, "
	 "ns::Options>::decode(unsigned char const*, unsigned long)",
	 "golden"},
	{0x7f0000001000, "read", "libc.so.6"},
	{0x7f0000002000, "start_thread", "libc.so.6"},
	{KADDR + 0x100, "schedule", "[kernel]"},
	{KADDR + 0x200, "vfs_read", "[kernel]"},
};

/* ESC [2J (clear the screen), BEL, U+009B (CSI) as UTF-8 and as a raw
 * byte, an overlong NUL (C0 80), a surrogate (ED A0 80), U+110000 (F4 90
 * 80 80), U+202E (right-to-left override), U+2028, CR, LF, then a
 * sequence cut short (E2 82): every kind of string a view must not pass
 * through as it is */
#define EVIL                                                                             \
	"\x1b[2J\x07\xc2\x9b"                                                            \
	"1m\x9b\xc0\x80\xed\xa0\x80\xf4\x90\x80\x80"                                     \
	"\xe2\x80\xae\xe2\x80\xa8\r\n\xe2\x82"
/* what must stay as it is */
#define GOOD "\xc3\xa9\xe4\xb8\xad\xf0\x9f\xa6\x80" /* é, 中, 🦀 */

static int hostile;
/* --lean: as record --lean=1ms writes it: polls under 1 ms and their
 * wakes not written, every poll summed per thread and task (SUMS), the
 * samples carrying their task, a wait of 1 ms written as its WAKE by
 * thread 0 */
static int lean;
#define LEAN_NS 1000000ULL

/* The hostile symbols and modules of --hostile, by index in syms[]. */
static const char *const hostile_sym[] = {
	[4] = "net_poll" GOOD,
	[5] = "parse;request" EVIL,
	[8] = "hash_loop\x1b]0;pwned\x07",
};
static const char *const hostile_module[] = {
	[8] = "gold\xc2\x85"
	      "en",
	[10] = "libc\x1b[1m.so.6",
};

static int resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (syms[i].addr == addr) {
			out->sym = syms[i].name;
			out->module = syms[i].module;
			/* a source line each (LINES chunks); the hostile
			 * trace's files carry escapes and invalid UTF-8 */
			out->file = hostile ? "/src/evil\x1b]0;pwned\x07\xff.c"
					    : "/src/demo.c";
			out->line = 100 + (uint32_t)i;
			out->start_line = 90 + (uint32_t)i;
			if (hostile && i < sizeof(hostile_sym) / sizeof(*hostile_sym) &&
			    hostile_sym[i])
				out->sym = hostile_sym[i];
			if (hostile &&
			    i < sizeof(hostile_module) / sizeof(*hostile_module) &&
			    hostile_module[i])
				out->module = hostile_module[i];
			if (hostile && i == 10) /* named by its module: libc...+0x.. */
				out->sym = NULL;
			return 0;
		}
	return -1;
}

/* The records, in the order the loop makes them. */
static struct trace_event evs[8192];
static struct trace_sample sams[4096];
static struct trace_switch sws[128];
/* who ran while the disk task's worker waited 1 ms for its CPU: the
 * lossy trace has none (a recorder without the CPUs' timelines) */
static const struct trace_hold holds[] = {
	{999, 700 * 1000}, {12, 250 * 1000}, {TRACE_HOLD_IDLE, 50 * 1000}};
static int with_holds = 1;
static size_t nev, nsam, nsw;
static struct trace_span sps[1024];
static size_t nsp;

static void span(uint64_t t, uint32_t tid, uint32_t type, uint64_t id, int64_t value,
		 const char *name, const char *text)
{
	sps[nsp++] = (struct trace_span){.time = t,
					 .id = id,
					 .value = value,
					 .name = name,
					 .text = text,
					 .tid = tid,
					 .type = type};
}

static void ev(uint64_t t, uint32_t tid, uint32_t type, uint64_t task)
{
	evs[nev++] =
		(struct trace_event){.time = t, .task = task, .tid = tid, .type = type};
}

static void sample(uint64_t t, uint32_t tid, uint32_t st, uint64_t task)
{
	sams[nsam++] = (struct trace_sample){.time = t,
					     .tid = tid,
					     .stack = st,
					     .weight = 1,
					     .sampler = TRACE_SAMPLER_PERF,
					     .task = lean ? task : 0};
}

/* --lean's sums: one per thread and task, its buckets as the shim's */
struct lsum {
	struct trace_sum s;
	uint32_t len[TRACE_SUM_BUCKETS], wait[TRACE_SUM_BUCKETS];
};
static struct lsum lsums[256];
static size_t nlsum;

static uint32_t bucket(uint64_t v)
{
	unsigned e = 63 - (unsigned)__builtin_clzll(v | 1);

	return v < 8 ? (uint32_t)v : 4 * (e - 1) + (uint32_t)((v >> (e - 2)) & 3);
}

static void lean_poll(uint32_t tid, uint64_t task, uint64_t len, uint64_t wait)
{
	struct lsum *l = lsums;

	while (l < lsums + nlsum && !(l->s.tid == tid && l->s.task == task))
		l++;
	if (l == lsums + nlsum) {
		nlsum++;
		l->s.tid = tid;
		l->s.task = task;
	}
	l->s.polls++;
	l->s.poll_total += len;
	l->s.poll_max = len > l->s.poll_max ? len : l->s.poll_max;
	l->len[bucket(len)]++;
	if (!wait) /* no wake: the disk task's polls */
		return;
	l->s.delays++;
	l->s.delay_total += wait;
	l->s.delay_max = wait > l->s.delay_max ? wait : l->s.delay_max;
	l->wait[bucket(wait)]++;
}

static void lean_sums(struct trace_writer *w, uint64_t at)
{
	for (struct lsum *l = lsums; l < lsums + nlsum; l++) {
		struct trace_sum_ent e[2 * TRACE_SUM_BUCKETS];
		uint32_t n = 0;

		for (uint32_t b = 0; b < TRACE_SUM_BUCKETS; b++) {
			if (l->len[b])
				e[n++] = (struct trace_sum_ent){0, (uint8_t)b, 0,
								l->len[b]};
			if (l->wait[b])
				e[n++] = (struct trace_sum_ent){1, (uint8_t)b, 0,
								l->wait[b]};
		}
		l->s.time = at;
		l->s.nent = n;
		trace_writer__sum(w, &l->s, e);
	}
}

enum { ST_SHORT, ST_NET, ST_DISK, ST_BLOCK, ST_IDLE, NSTACKS };

/* The golden runtime's records; stacks by enum index. */
static void make_records(void)
{
	uint64_t t[2] = {T0, T0};
	const char *req = hostile ? "request" EVIL GOOD : "request";
	int i;

	/* a slow request: 350 ms, entered in the disk polls meanwhile */
	span(T0 + 50 * MS, 102, TRACE_SPAN_NEW, 1, 0, req, NULL);
	span(T0 + 50 * MS, 102, TRACE_SPAN_FIELD, 1, 0, "route", "/slow");
	span(T0 + 50 * MS, 102, TRACE_SPAN_FIELD, 1, 1 << 20, "bytes", NULL);

	/* 1,400 polls, alternating workers; every 10th is the net task, woken
	 * by the timer 1 ms before; every 25th the disk task, which blocks in
	 * read() for 2 ms and then waits 1 ms behind stress */
	for (i = 0; i < 1400; i++) {
		uint32_t tid = 100 + (uint32_t)(i % 2);
		uint64_t *now = &t[i % 2], task, dur;
		uint32_t st;

		uint64_t wait = 0;

		if (i % 25 == 0) {
			task = 42, dur = 5 * MS, st = ST_DISK;
		} else if (i % 10 == 0) {
			task = 7, dur = 1500 * US, st = ST_NET, wait = 1 * MS;
			ev(*now, lean ? 0 : 102, TRACE_EV_WAKE, 7);
			span(*now, 102, TRACE_SPAN_NEW, 1000 + (uint64_t)i, 0, req, NULL);
			span(*now, 102, TRACE_SPAN_FIELD, 1000 + (uint64_t)i, 0, "route",
			     hostile ? "/api" EVIL : "/api");
			*now += 1 * MS;
		} else {
			task = 1 + (uint64_t)(i % 60), dur = 300 * US, st = ST_SHORT;
			if (task == 7 || task == 42 || task == 61)
				task = 2;
			if (!lean)
				ev(*now, tid, TRACE_EV_WAKE, task);
			*now += 20 * US, wait = 20 * US;
		}
		if (lean)
			lean_poll(tid, task, dur, wait);
		if (!lean || dur >= LEAN_NS)
			ev(*now, tid, TRACE_EV_POLL_BEGIN, task);
		for (uint64_t k = 100 * US; k < dur; k += 1 * MS)
			if (task != 42 || k < 1 * MS || k > 4 * MS)
				sample(*now + k, tid, st, task);
		if (task == 7) {
			span(*now + 10 * US, tid, TRACE_SPAN_ENTER, 1000 + (uint64_t)i, 0,
			     NULL, NULL);
			span(*now + dur - 10 * US, tid, TRACE_SPAN_EXIT,
			     1000 + (uint64_t)i, 0, NULL, NULL);
			span(*now + dur, tid, TRACE_SPAN_CLOSE, 1000 + (uint64_t)i, 0,
			     NULL, NULL);
		}
		if (task == 42 && *now >= T0 + 50 * MS && *now + dur < T0 + 400 * MS) {
			span(*now, tid, TRACE_SPAN_ENTER, 1, 0, NULL, NULL);
			span(*now + dur, tid, TRACE_SPAN_EXIT, 1, 0, NULL, NULL);
		}
		if (task == 42)
			span(*now + 1 * MS, tid, TRACE_SPAN_EVENT, 0, (i / 25) % 7,
			     "cache_miss", i % 50 ? "block" : "inode");
		if (task == 42)
			sws[nsw++] = (struct trace_switch){.time = *now + 1 * MS,
							   .time_in = *now + 4 * MS,
							   .runnable = *now + 3 * MS,
							   .tid = tid,
							   .stack = ST_BLOCK,
							   .holder = 999};
		if (!lean || dur >= LEAN_NS)
			ev(*now + dur, tid, TRACE_EV_POLL_END, task);
		*now += dur + 50 * US;
		if (i % 100 == 99) { /* a park between bursts */
			ev(*now, tid, TRACE_EV_PARK, 0);
			sample(*now + 10 * US, tid, ST_IDLE, 0);
			ev(*now + 400 * US, tid, TRACE_EV_UNPARK, 0);
			*now += 450 * US;
		}
	}
	if (!lean) { /* lean mode writes neither (nor does task 61 poll) */
		ev(T0 + 100 * MS, 102, TRACE_EV_SPAWN, 61);
		ev(T0 + 200 * MS, 102, TRACE_EV_WAKE, 61);
	}
	span(T0 + 400 * MS, 102, TRACE_SPAN_CLOSE, 1, 0, NULL, NULL);
}

/* Meta, names and stacks: what every segment carries; stack ids in @st. */
static void head(struct trace_writer *w, int losses, uint32_t *st)
{
	static const uint64_t s_short[] = {0x409000, 0x404000, 0x403000, 0x402000,
					   0x7f0000002000};
	static const uint64_t s_net[] = {0x40a000, 0x406000, 0x405000,
					 0x403000, 0x402000, 0x7f0000002000};
	static const uint64_t s_disk[] = {0x408000, 0x407000, 0x403000, 0x402000,
					  0x7f0000002000};
	static const uint64_t s_block[] = {KADDR + 0x100, KADDR + 0x200, 0x7f0000001000,
					   0x408000,	  0x407000,	 0x403000,
					   0x402000,	  0x7f0000002000};
	static const uint64_t s_idle[] = {0x402000, 0x401000};
	static const struct {
		const uint64_t *ips;
		unsigned n;
	} stacks[NSTACKS] = {
		{s_short, 5}, {s_net, 6}, {s_disk, 5}, {s_block, 8}, {s_idle, 2}};
	char name[96];

	trace_writer__meta(w, "pid", "4242");
	trace_writer__meta(w, "cmdline",
			   hostile ? "evil-runtime " EVIL " --port " GOOD
				   : "golden-runtime --port 8080");
	trace_writer__meta(w, "event", hostile ? "cpu-clock" EVIL : "cpu-clock");
	if (hostile) {
		trace_writer__meta(w, "comm", "ev\x1b[2Jil\xc2\x9b");
		trace_writer__meta(w, "hostname", "host" EVIL);
		trace_writer__meta(w, "recording", "rec" EVIL);
		trace_writer__meta(w, "dump_reason", "trigger\x1b[2J" EVIL);
		trace_writer__meta(w, "target_exit", "killed by \x07" EVIL);
		trace_writer__meta(w, "target_exit_time", "2990000000");
		/* a poll site of no frame here (info names it, escaped), and
		 * a module's mapping that is no number (the pprof export
		 * falls back to its frames' range) */
		trace_writer__meta(w, TRACE_META_POLL_SITE,
				   "/evil\x1b[2J" GOOD "\trun_inl" EVIL "\trun");
		trace_writer__meta(w,
				   TRACE_META_MAP_PFX "gold\xc2\x85"
						      "en",
				   "zz 10" EVIL);
	}
	trace_writer__meta(w, "sampler", "perf");
	trace_writer__meta(w, "frequency", "1000");
	trace_writer__meta(w, "offcpu", "tracepoint");
	trace_writer__meta(w, "wakeups", "sched:sched_waking");
	if (!losses)
		trace_writer__meta(w, "runq_holders", "sched:sched_switch");
	if (losses) { /* one of each kind, counts told apart */
		trace_writer__meta(w, "ctimer samples dropped", "4");
		trace_writer__meta(w, "child samples left out", "5");
		trace_writer__meta(w, "offcpu lost", "6");
		trace_writer__meta(w, "offcpu unpaired", "7");
		trace_writer__meta(w, "offcpu stacks complete", "50/52");
		trace_writer__meta(w, "wakeups lost", "8");
		trace_writer__meta(w, "threads without a ring", "10");
		trace_writer__meta(w, "shim_reattached", "1500000000");
		trace_writer__meta(w, "shim garbage", "11");
	}
	trace_writer__thread(w, 100, hostile ? "worker-0" EVIL : "worker-0");
	trace_writer__thread(w, 101, hostile ? "worker-1\x1b]0;pwned\x07" : "worker-1");
	trace_writer__thread(w, 102, hostile ? "timer\xc2\x85" GOOD : "timer");
	trace_writer__comm(w, 999, hostile ? "stress\x1b[5m" EVIL : "stress");
	trace_writer__comm(w, 12, hostile ? "kw\xe2\x80\xaeorker\x9b" : "kworker/0:1");
	for (int i = 1; i <= 61; i++) {
		if (hostile)
			snprintf(name, sizeof(name), "%s",
				 i == 7	   ? "net" EVIL
				 : i == 42 ? "disk\x1b[31m" GOOD
				 : i == 61 ? "forg\xc2\x9b\x07otten"
					   : "short;" GOOD);
		else
			snprintf(name, sizeof(name), "%s",
				 i == 7	   ? "net"
				 : i == 42 ? "disk"
				 : i == 61 ? "forgotten"
					   : "short");
		trace_writer__task(w, (uint64_t)i, name);
	}
	/* the worker stacks begin at start_thread, idle ones at main; with
	 * losses, the idle stack is cut short (no thread root: main gone) */
	for (int i = 0; i < NSTACKS; i++)
		trace_writer__stack(w, stacks[i].ips,
				    stacks[i].n - (losses && i == ST_IDLE), &st[i]);
}

/* The records from @from to before @to, in the order made. */
static void body(struct trace_writer *w, const uint32_t *st, uint64_t from, uint64_t to)
{
	size_t i;

	for (i = 0; i < nev; i++)
		if (evs[i].time >= from && evs[i].time < to)
			trace_writer__event(w, &evs[i]);
	for (i = 0; i < nsam; i++)
		if (sams[i].time >= from && sams[i].time < to) {
			struct trace_sample s = sams[i];

			s.stack = st[s.stack];
			trace_writer__sample(w, &s);
		}
	for (i = 0; i < nsp; i++)
		if (sps[i].time >= from && sps[i].time < to)
			trace_writer__span(w, &sps[i]);
	for (i = 0; i < nsw; i++)
		if (sws[i].time >= from && sws[i].time < to) {
			struct trace_switch s = sws[i];

			s.stack = st[s.stack];
			trace_writer__switch_held(w, &s, holds, with_holds ? 3 : 0);
		}
}

static int finish(struct trace_writer *w, int fd, const struct trace_counters *c,
		  const char *path)
{
	if (trace_writer__finish(w, resolve, NULL, c)) {
		fprintf(stderr, "mktrace: cannot write %s\n", path);
		return 1;
	}
	trace_writer__free(w);
	close(fd);
	return 0;
}

/* ---- segments ------------------------------------------------------------ */

#define NSEG 4
static const uint64_t cuts[NSEG + 1] = {T0, T0 + 200 * MS, T0 + 400 * MS, T0 + 600 * MS,
					T0 + 3000 * MS};
/* CLOCK_REALTIME - CLOCK_MONOTONIC: T0 is 2026-11-20 23:59:59.800 UTC */
#define WALL_OFFSET "1795219198800000000"

static int ev_cmp(const void *a, const void *b)
{
	const struct trace_event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* What is open at @at, as a recorder's STATE: the BEGIN of a poll in
 * progress and a park per worker, a wake not yet polled per task, a spawn
 * of a task alive. */
static void state(struct trace_writer *w, uint64_t at)
{
	struct trace_event open[3][2] = {{{0}}}, wake[62] = {{0}}, spawn[62] = {{0}},
			   v[200];
	size_t i, n = 0;

	for (i = 0; i < nev; i++) {
		const struct trace_event *e = &evs[i];
		size_t th = e->tid - 100;

		if (e->time >= at)
			continue;
		switch (e->type) {
		case TRACE_EV_POLL_BEGIN:
			open[th][0] = *e;
			wake[e->task].time = 0;
			break;
		case TRACE_EV_POLL_END:
			open[th][0].time = 0;
			break;
		case TRACE_EV_PARK:
			open[th][1] = *e;
			break;
		case TRACE_EV_UNPARK:
			open[th][1].time = 0;
			break;
		case TRACE_EV_WAKE:
			if (!wake[e->task].time)
				wake[e->task] = *e;
			break;
		case TRACE_EV_SPAWN:
			spawn[e->task] = *e;
			break;
		}
	}
	for (i = 0; i < 3; i++)
		for (size_t k = 0; k < 2; k++)
			if (open[i][k].time)
				v[n++] = open[i][k];
	for (i = 0; i < 62; i++) {
		if (spawn[i].time)
			v[n++] = spawn[i];
		if (wake[i].time)
			v[n++] = wake[i];
	}
	qsort(v, n, sizeof(v[0]), ev_cmp);
	if (n)
		trace_writer__state(w, v, n);
}

static int segments(const char *path, unsigned a, unsigned b, int cut, const char *reason,
		    const char *exit_status)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || a > b || b >= NSEG) {
		perror(path);
		return 1;
	}
	/* the recorder's order: events in time order within a segment */
	qsort(evs, nev, sizeof(evs[0]), ev_cmp);
	for (unsigned k = a; k <= b; k++) {
		struct trace_counters c = {.start_time = cuts[k],
					   .end_time = cuts[k + 1]};
		struct trace_writer *w;
		uint32_t st[NSTACKS];
		char v[32];

		int err = trace_writer__new(fd, &w);

		if (err) {
			fprintf(stderr, "%s: %s\n", path, strerror(-err));
			return 1;
		}
		trace_writer__meta(w, "recording", "golden-rec");
		snprintf(v, sizeof(v), "%u", k);
		trace_writer__meta(w, "segment", v);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)cuts[k]);
		trace_writer__meta(w, "segment_start", v);
		trace_writer__meta(w, "clock_realtime", WALL_OFFSET);
		trace_writer__meta(w, "comm", "golden");
		trace_writer__meta(w, "hostname", "golden-host");
		trace_writer__meta(w, "kernel", "Linux 6.8.0-golden x86_64");
		trace_writer__meta(w, "recorder", "d9prof 0.1.0");
		head(w, 0, st);
		state(w, cuts[k]);
		body(w, st, cuts[k], cuts[k + 1]);
		if (k == b && reason)
			trace_writer__meta(w, "dump_reason", reason);
		if (k == b && exit_status) {
			snprintf(v, sizeof(v), "%llu",
				 (unsigned long long)(cuts[k + 1] - 10 * MS));
			trace_writer__meta(w, "target_exit", exit_status);
			trace_writer__meta(w, "target_exit_time", v);
		}
		if (k == b && cut) { /* the recorder was killed: no END */
			trace_writer__flush(w);
			trace_writer__free(w);
			close(fd);
			return 0;
		}
		if (k < b) {
			if (trace_writer__finish(w, resolve, NULL, &c)) {
				fprintf(stderr, "mktrace: cannot write %s\n", path);
				return 1;
			}
			trace_writer__free(w);
		} else {
			return finish(w, fd, &c, path);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct trace_counters c = {.start_time = T0, .end_time = T0 + 3000 * MS};
	const char *path = argv[argc - 1], *reason = NULL, *exit_status = NULL;
	struct trace_writer *w;
	uint32_t st[NSTACKS];
	unsigned a = 0, b = 0;
	int losses = 0, seg = 0, cut = 0, fd, i, err;

	for (i = 1; i < argc - 1; i++) {
		if (!strcmp(argv[i], "--losses"))
			losses = 1;
		else if (!strcmp(argv[i], "--segments") && i + 2 < argc &&
			 sscanf(argv[++i], "%u-%u", &a, &b) == 2)
			seg = 1;
		else if (!strcmp(argv[i], "--hostile"))
			hostile = 1;
		else if (!strcmp(argv[i], "--lean"))
			lean = 1;
		else if (!strcmp(argv[i], "--cut"))
			cut = 1;
		else if (!strcmp(argv[i], "--dump") && i + 2 < argc)
			reason = argv[++i];
		else if (!strcmp(argv[i], "--exit") && i + 2 < argc)
			exit_status = argv[++i];
		else
			break;
	}
	if (argc < 2 || i != argc - 1 || path[0] == '-' || (seg && (losses || hostile)) ||
	    (!seg && (cut || reason || exit_status)) ||
	    (lean && (seg || hostile || losses))) {
		fprintf(stderr, "usage: mktrace [--losses] [--hostile] [--lean] FILE\n"
				"       mktrace --segments A-B [--cut] [--dump REASON] "
				"[--exit STATUS] FILE\n");
		return 2;
	}
	make_records();
	if (seg)
		return segments(path, a, b, cut, reason, exit_status);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	err = trace_writer__new(fd, &w);
	if (err) {
		fprintf(stderr, "%s: %s\n", path, strerror(-err));
		return 1;
	}
	with_holds = !losses;
	if (losses) {
		c.lost_samples = 3;
		c.shim_drops = 9;
	}
	head(w, losses, st);
	if (lean)
		trace_writer__meta(w, TRACE_META_LEAN,
				   "poll=1000000 delay=1000000 unit=1");
	body(w, st, 0, UINT64_MAX);
	if (lean)
		lean_sums(w, T0 + 2900 * MS);
	return finish(w, fd, &c, path);
}
