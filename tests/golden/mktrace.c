// SPDX-License-Identifier: MIT
/*
 * mktrace FILE - write the fixed synthetic trace of the golden tests: a
 * two-worker runtime with a timer thread, 61 tasks (7 "net", 42 "disk",
 * 61 "forgotten", the rest "short"), 1,400 polls, CPU samples with named
 * stacks, off-CPU intervals split into blocked and run-queue time behind
 * "stress", and wakes. Everything is a function of the loop counters: the
 * same bytes every run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libprof/d9_segment.h"
#include "trace/trace.h"

#define T0 1000000000ULL
#define US 1000ULL
#define MS 1000000ULL
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
	{0x40a000, "ns::detail::Codec<std::vector<unsigned char, std::allocator<unsigned char> >, "
		   "ns::Options>::decode(unsigned char const*, unsigned long)",
	 "golden"},
	{0x7f0000001000, "read", "libc.so.6"},
	{KADDR + 0x100, "schedule", "[kernel]"},
	{KADDR + 0x200, "vfs_read", "[kernel]"},
};

static int resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (syms[i].addr == addr) {
			out->sym = syms[i].name;
			out->module = syms[i].module;
			return 0;
		}
	return -1;
}

static uint32_t stack(struct trace_writer *w, unsigned n, const uint64_t *ips)
{
	uint32_t id = 0;

	trace_writer__stack(w, ips, n, &id);
	return id;
}

static void ev(struct trace_writer *w, uint64_t t, uint32_t tid, uint32_t type, uint64_t task)
{
	struct trace_event e = {.time = t, .task = task, .tid = tid, .type = type};

	trace_writer__event(w, &e);
}

static void sample(struct trace_writer *w, uint64_t t, uint32_t tid, uint32_t st)
{
	struct trace_sample s = {.time = t, .tid = tid, .stack = st, .weight = 1,
				 .sampler = TRACE_SAMPLER_PERF};

	trace_writer__sample(w, &s);
}

int main(int argc, char **argv)
{
	static const uint64_t s_short[] = {0x409000, 0x404000, 0x403000, 0x402000};
	static const uint64_t s_net[] = {0x40a000, 0x406000, 0x405000, 0x403000, 0x402000};
	static const uint64_t s_disk[] = {0x408000, 0x407000, 0x403000, 0x402000};
	static const uint64_t s_block[] = {KADDR + 0x100, KADDR + 0x200, 0x7f0000001000,
					   0x408000, 0x407000, 0x403000, 0x402000};
	static const uint64_t s_idle[] = {0x402000, 0x401000};
	struct trace_counters c = {.start_time = T0, .end_time = T0 + 3000 * MS};
	struct trace_writer *w;
	uint32_t st_short, st_net, st_disk, st_block, st_idle;
	uint64_t t[2] = {T0, T0};
	const char *path = argv[argc - 1];
	int losses = argc == 3 && !strcmp(argv[1], "--losses");
	char name[32];
	int fd, i;

	if (argc != 2 && !losses) {
		fprintf(stderr, "usage: mktrace [--losses] FILE\n");
		return 2;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	w = fd < 0 ? NULL : trace_writer__new(fd);
	if (!w) {
		perror(path);
		return 1;
	}
	trace_writer__meta(w, "pid", "4242");
	trace_writer__meta(w, "cmdline", "golden-runtime --port 8080");
	trace_writer__meta(w, "event", "cpu-clock");
	trace_writer__meta(w, "sampler", "perf");
	trace_writer__meta(w, "frequency", "1000");
	trace_writer__meta(w, "offcpu", "tracepoint");
	trace_writer__meta(w, "wakeups", "sched:sched_waking");
	if (losses) { /* one of each kind, counts told apart */
		c.lost_samples = 3;
		c.shim_drops = 9;
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
	trace_writer__thread(w, 100, "worker-0");
	trace_writer__thread(w, 101, "worker-1");
	trace_writer__thread(w, 102, "timer");
	trace_writer__comm(w, 999, "stress");
	for (i = 1; i <= 61; i++) {
		snprintf(name, sizeof(name), "%s",
			 i == 7 ? "net" : i == 42 ? "disk" : i == 61 ? "forgotten" : "short");
		trace_writer__task(w, (uint64_t)i, name);
	}
	st_short = stack(w, 4, s_short);
	st_net = stack(w, 5, s_net);
	st_disk = stack(w, 4, s_disk);
	st_block = stack(w, 7, s_block);
	st_idle = stack(w, 2, s_idle);

	/* 1,400 polls, alternating workers; every 10th is the net task, woken
	 * by the timer 1 ms before; every 25th the disk task, which blocks in
	 * read() for 2 ms and then waits 1 ms behind stress */
	for (i = 0; i < 1400; i++) {
		uint32_t tid = 100 + (uint32_t)(i % 2);
		uint64_t *now = &t[i % 2], task, dur;
		uint32_t st;

		if (i % 25 == 0) {
			task = 42, dur = 5 * MS, st = st_disk;
		} else if (i % 10 == 0) {
			task = 7, dur = 1500 * US, st = st_net;
			ev(w, *now, 102, D9_EV_WAKE, 7);
			*now += 1 * MS;
		} else {
			task = 1 + (uint64_t)(i % 60), dur = 300 * US, st = st_short;
			if (task == 7 || task == 42 || task == 61)
				task = 2;
			ev(w, *now, tid, D9_EV_WAKE, task);
			*now += 20 * US;
		}
		ev(w, *now, tid, D9_EV_POLL_BEGIN, task);
		for (uint64_t k = 100 * US; k < dur; k += 1 * MS)
			if (task != 42 || k < 1 * MS || k > 4 * MS)
				sample(w, *now + k, tid, st);
		if (task == 42) {
			struct trace_switch sw = {.time = *now + 1 * MS, .time_in = *now + 4 * MS,
						  .runnable = *now + 3 * MS, .tid = tid,
						  .stack = st_block, .holder = 999};

			trace_writer__switch(w, &sw);
		}
		ev(w, *now + dur, tid, D9_EV_POLL_END, task);
		*now += dur + 50 * US;
		if (i % 100 == 99) { /* a park between bursts */
			ev(w, *now, tid, D9_EV_PARK, 0);
			sample(w, *now + 10 * US, tid, st_idle);
			ev(w, *now + 400 * US, tid, D9_EV_UNPARK, 0);
			*now += 450 * US;
		}
	}
	ev(w, T0 + 100 * MS, 102, D9_EV_SPAWN, 61);
	ev(w, T0 + 200 * MS, 102, D9_EV_WAKE, 61);
	if (trace_writer__finish(w, resolve, NULL, &c)) {
		fprintf(stderr, "mktrace: cannot write %s\n", path);
		return 1;
	}
	trace_writer__free(w);
	close(fd);
	return 0;
}
