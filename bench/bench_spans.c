// SPDX-License-Identifier: MIT
/*
 * bench_spans: what the trace writer's string tables cost, the recorder's
 * hot path for spans (every span record with a name or a text interns it
 * into its chunk's table) and the end of a recording (each frame's symbol,
 * module, inlined names and files into the FRAMES, INLINES and LINES
 * tables).
 *
 *   bench_spans [-n SPANS] [-f FRAMES] [-r ROUNDS] [-o FILE]
 *
 * Each round writes a trace to FILE (/dev/null by default): SPANS span
 * records (NEW, ENTER, FIELD, EXIT, EVENT, CLOSE in turn; names from 64,
 * texts from 4,096 of 1 to 300 bytes), then FRAMES distinct frames in
 * stacks of 8, resolved at the end to synthetic names of 20 to 300 bytes
 * (a module in 16, two inlined names in 3). Everything is a function of
 * the counters: the same bytes every run, so two builds' FILEs compare.
 *
 * stdout, a line a round: "spans_ns N frames_ns N", nanoseconds per span
 * queued (chunks written included) and per frame written at the finish.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"

#define NNAMES 64
#define NTEXTS 4096

static char *names[NNAMES], *texts[NTEXTS];

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* @len bytes made of @seed at @s (room for @len + 1), "ns::" leading
 * (Rust and C++ names do). */
static char *make_str(char *s, uint64_t seed, size_t len)
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyz_:<>{}#0123456789";

	for (size_t i = 0; i < len; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		s[i] = al[(seed >> 33) % (sizeof(al) - 1)];
	}
	memcpy(s, "ns::", len < 4 ? len : 4);
	s[len] = '\0';
	return s;
}

static char *new_str(uint64_t seed, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		exit(1);
	return make_str(s, seed, len);
}

struct names {
	char buf[3][320];
	const char *inl[2];
	struct trace_inline_src src[2];
};

static int resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	struct names *n = ctx;
	uint64_t i = addr >> 4;

	out->sym = make_str(n->buf[0], i, 20 + i * 7 % 281);
	out->module = i % 16 ? "/usr/lib/libapp.so" : "/usr/bin/app";
	out->offset = addr & 0xf;
	out->file = i % 5 ? "src/app/handler.rs" : "src/app/io.rs";
	out->line = (uint32_t)(i % 900);
	if (i % 3 == 0) {
		n->inl[0] = make_str(n->buf[1], ~i, 20 + i % 61);
		n->inl[1] = make_str(n->buf[2], i ^ 0x55, 20 + i % 200);
		n->src[0] = (struct trace_inline_src){.call_file = "src/lib.rs",
						      .call_line = 7};
		n->src[1] =
			(struct trace_inline_src){.call_file = out->file, .call_line = 9};
		out->inl = n->inl;
		out->inl_src = n->src;
		out->ninl = 2;
	}
	return 0;
}

static int round_of(const char *path, size_t nspans, size_t nframes, double *spans_ns,
		    double *frames_ns)
{
	static const uint32_t type[6] = {TRACE_SPAN_NEW,   TRACE_SPAN_ENTER,
					 TRACE_SPAN_FIELD, TRACE_SPAN_EXIT,
					 TRACE_SPAN_EVENT, TRACE_SPAN_CLOSE};
	struct trace_writer *w;
	struct names n;
	uint64_t t, ips[8];
	uint32_t stack;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), err;

	if (fd < 0 || trace_writer__new(fd, &w))
		return -1;
	t = now_ns();
	for (size_t i = 0; i < nspans; i++) {
		uint32_t k = (uint32_t)(i * 2654435761u >> 7);
		struct trace_span s = {
			.time = 1000 + i,
			.id = 1 + i / 6,
			.tid = 100 + (uint32_t)(i % 7),
			.type = type[i % 6],
		};

		if (s.type == TRACE_SPAN_NEW || s.type == TRACE_SPAN_FIELD ||
		    s.type == TRACE_SPAN_EVENT)
			s.name = names[k % NNAMES];
		if (s.type == TRACE_SPAN_FIELD || s.type == TRACE_SPAN_EVENT)
			s.text = texts[k % NTEXTS];
		if (trace_writer__span(w, &s))
			return -1;
	}
	*spans_ns = (double)(now_ns() - t) / (double)(nspans ? nspans : 1);
	for (size_t i = 0; i < nframes; i += 8) {
		for (size_t d = 0; d < 8; d++)
			ips[d] = 0x400000 + ((i + d) << 4);
		if (trace_writer__stack(w, ips, 8, &stack))
			return -1;
	}
	memset(&n, 0, sizeof(n));
	t = now_ns();
	err = trace_writer__finish(w, resolve, &n, NULL);
	*frames_ns = (double)(now_ns() - t) / (double)(nframes ? nframes : 1);
	trace_writer__free(w);
	close(fd);
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	size_t nspans = 2000000, nframes = 200000, rounds = 1;
	const char *path = "/dev/null";
	int c;

	while ((c = getopt(argc, argv, "n:f:r:o:")) != -1) {
		switch (c) {
		case 'n':
			nspans = strtoull(optarg, NULL, 0);
			break;
		case 'f':
			nframes = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			rounds = strtoull(optarg, NULL, 0);
			break;
		case 'o':
			path = optarg;
			break;
		default:
			fprintf(stderr, "usage: bench_spans [-n SPANS] [-f FRAMES] "
					"[-r ROUNDS] [-o FILE]\n");
			return 2;
		}
	}
	for (uint64_t i = 0; i < NNAMES; i++)
		names[i] = new_str(i, 4 + i % 24);
	for (uint64_t i = 0; i < NTEXTS; i++)
		texts[i] = new_str(i + NNAMES, 1 + i * 37 % 300);
	for (size_t r = 0; r < rounds; r++) {
		double s, f;

		if (round_of(path, nspans, nframes, &s, &f)) {
			fprintf(stderr, "bench_spans: cannot write %s\n", path);
			return 1;
		}
		printf("spans_ns %.1f frames_ns %.1f\n", s, f);
	}
	return 0;
}
