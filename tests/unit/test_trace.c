// SPDX-License-Identifier: MIT
/*
 * test_trace.c - the trace writer and reader: round trips, interning, cut
 * files, corruption, write errors, and a large trace's size and speed.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/hash.h"
#include "trace/trace.h"
#include "trace/trace_format.h"
#include "tests/unit/writer.h"

#define KADDR 0xffffffff81000000ULL

/* ---- helpers ------------------------------------------------------------ */

static char *tmp_path(void)
{
	char *p = strdup("/tmp/d9trace-test-XXXXXX");
	int fd;

	cr_assert_not_null(p);
	fd = mkstemp(p);
	cr_assert(fd >= 0, "mkstemp: %s", strerror(errno));
	close(fd);
	return p;
}

/* Undo tmp_path(): the file goes, and the name. */
static void tmp_remove(char *path)
{
	unlink(path);
	free(path);
}

/* A trace a test writes: a temporary file (path: tmp_path()'s, for
 * tmp_remove()), open, and a writer on it. */
struct trace_file {
	char *path;
	int fd;
	struct trace_writer *w;
};

static struct trace_writer *trace_file_open(struct trace_file *f)
{
	f->path = tmp_path();
	f->fd = open(f->path, O_WRONLY | O_TRUNC);
	f->w = new_writer(f->fd);
	return f->w;
}

/* The writer freed and the file closed, as they are. */
static void trace_file_close(struct trace_file *f)
{
	trace_writer__free(f->w);
	close(f->fd);
}

/* The trace finished (its frames named by @resolve), then closed. */
static void trace_file_finish(struct trace_file *f, trace_resolve_fn resolve)
{
	cr_assert_eq(trace_writer__finish(f->w, resolve, NULL, NULL), 0);
	trace_file_close(f);
}

/* The trace @f wrote, read back whole (trace__read()). */
static struct trace *trace_file_read(const struct trace_file *f)
{
	struct trace *t;
	const char *msg;

	cr_assert_eq(trace__read(f->path, &t, &msg), 0, "%s", msg);
	return t;
}

static void put_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static uint8_t *get_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	cr_assert(fd >= 0);
	cr_assert_eq(fstat(fd, &st), 0);
	buf = malloc((size_t)st.st_size + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* File offsets where each chunk ends (chunk headers: 28 bytes, the
 * compressed size at offset 8). Returns the number of chunks. */
#define CHUNK_HDR 28
static size_t chunk_ends(const uint8_t *buf, size_t len, size_t *ends, uint32_t *types,
			 size_t max)
{
	size_t pos = 16, n = 0;

	while (pos + CHUNK_HDR <= len && n < max) {
		if (types)
			types[n] = le32(buf + pos + 4);
		pos += CHUNK_HDR + le32(buf + pos + 8);
		cr_assert_leq(pos, len);
		ends[n++] = pos;
	}
	return n;
}

/* Symbolizer for tests: kernel addresses are "[kernel]" symbols, addresses
 * ending in 0xf are unresolvable, everything else is fn_<hex> in "demo". */
static int resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	static char sym[64];
	unsigned int *calls = ctx;

	if (calls)
		(*calls)++;
	if ((addr & 0xf) == 0xf)
		return -ENOENT;
	/* several addresses per function: the string table dedupes them */
	snprintf(sym, sizeof(sym), "fn_%" PRIx64, addr & ~(uint64_t)0xff);
	out->sym = sym;
	out->module = out->kernel ? "[kernel]" : "demo";
	out->offset = addr & 0xff;
	return 0;
}

static const char *frame_sym(const struct trace *t, uint32_t stack, unsigned i)
{
	return t->frames[t->stack_frames[t->stack_off[stack] + i]].sym;
}

static uint64_t frame_addr(const struct trace *t, uint32_t stack, unsigned i)
{
	return t->frames[t->stack_frames[t->stack_off[stack] + i]].addr;
}

static uint32_t frame_id(const struct trace *t, uint32_t stack, unsigned i)
{
	return t->stack_frames[t->stack_off[stack] + i];
}

static unsigned stack_depth(const struct trace *t, uint32_t stack)
{
	return t->stack_off[stack + 1] - t->stack_off[stack];
}

/*
 * A small trace in several chunks: each flush ends a batch. Returns the
 * number of samples; fills @stacks with the ids of its three stacks.
 */
static const uint64_t cs_a[] = {0x401010, 0x401120, 0x401230};
static const uint64_t cs_b[] = {KADDR + 0x10, 0x401010, 0x401230};
static const uint64_t cs_c[] = {0x40200f, 0x401230};

static size_t write_small(int fd, int finish, uint32_t *stacks)
{
	struct trace_writer *w = new_writer(fd);
	struct trace_counters c = {.lost_samples = 3, .shim_drops = 5};
	size_t nsamples = 0;
	int i;

	cr_assert_not_null(w);
	cr_assert_eq(trace_writer__meta(w, "cmd", "demo --fast"), 0);
	cr_assert_eq(trace_writer__meta(w, "hz", "997"), 0);
	cr_assert_eq(trace_writer__flush(w), 0);

	cr_assert_eq(trace_writer__thread(w, 100, "main"), 0);
	cr_assert_eq(trace_writer__thread(w, 101, "worker-1"), 0);
	cr_assert_eq(trace_writer__task(w, 7, "accept"), 0);
	cr_assert_eq(trace_writer__stack(w, cs_a, 3, &stacks[0]), 0);
	cr_assert_eq(trace_writer__stack(w, cs_b, 3, &stacks[1]), 0);
	for (i = 0; i < 10; i++) {
		struct trace_sample s = {.time = 1000 + i * 10,
					 .tid = 100 + i % 2,
					 .stack = stacks[i % 2],
					 .weight = 1,
					 .sampler = TRACE_SAMPLER_PERF};

		cr_assert_eq(trace_writer__sample(w, &s), 0);
		nsamples++;
	}
	cr_assert_eq(trace_writer__flush(w), 0);

	for (i = 0; i < 6; i++) {
		struct trace_event e = {.time = 1005 + i * 10,
					.task = 7,
					.tid = 101,
					.type = TRACE_EV_POLL_BEGIN + i % 2};

		cr_assert_eq(trace_writer__event(w, &e), 0);
	}
	for (i = 0; i < 4; i++) {
		struct trace_switch sw = {.time = 1007 + i * 20,
					  .time_in = i == 3 ? 0 : 1015 + i * 20,
					  .tid = 101,
					  .stack = stacks[i % 2],
					  .preempted = i == 1};

		cr_assert_eq(trace_writer__switch(w, &sw), 0);
	}
	cr_assert_eq(trace_writer__flush(w), 0);

	cr_assert_eq(trace_writer__thread(w, 100, "main-renamed"), 0);
	cr_assert_eq(trace_writer__stack(w, cs_c, 2, &stacks[2]), 0);
	for (i = 0; i < 5; i++) {
		struct trace_sample s = {.time = 2000 + i,
					 .tid = 100,
					 .stack = stacks[2],
					 .weight = 2,
					 .sampler = TRACE_SAMPLER_PERF};

		cr_assert_eq(trace_writer__sample(w, &s), 0);
		nsamples++;
	}
	if (finish)
		cr_assert_eq(trace_writer__finish(w, resolve, NULL, &c), 0);
	else
		cr_assert_eq(trace_writer__flush(w), 0);
	trace_writer__free(w);
	return nsamples;
}

static char *small_trace_file(int finish, size_t *nsamples)
{
	char *path = tmp_path();
	uint32_t stacks[3];
	int fd = open(path, O_WRONLY | O_TRUNC);

	cr_assert(fd >= 0);
	*nsamples = write_small(fd, finish, stacks);
	close(fd);
	return path;
}

/*
 * small_trace_file(1, ...) on disk and in memory: its path, its bytes and
 * their length, its number of samples; @scratch, when asked for, another
 * temporary file for cut or damaged copies of it (NULL otherwise).
 */
struct small_file {
	char *path, *scratch;
	uint8_t *buf;
	size_t len, nsamples;
};

static void small_file_open(struct small_file *sf, int scratch)
{
	sf->path = small_trace_file(1, &sf->nsamples);
	sf->scratch = scratch ? tmp_path() : NULL;
	sf->buf = get_file(sf->path, &sf->len);
}

static void small_file_release(struct small_file *sf)
{
	free(sf->buf);
	tmp_remove(sf->path);
	if (sf->scratch)
		tmp_remove(sf->scratch);
}

/* The index of @sf's first chunk of @type (*@nch if none) and where it
 * starts, in *@from unless NULL; the ends of its chunks in
 * @ends[0..*@nch), 64 at most. */
static size_t first_chunk(const struct small_file *sf, uint32_t type, size_t *ends,
			  size_t *nch, size_t *from)
{
	uint32_t types[64];
	size_t i;

	*nch = chunk_ends(sf->buf, sf->len, ends, types, 64);
	for (i = 0; i < *nch && types[i] != type; i++)
		;
	if (from)
		*from = i ? ends[i - 1] : 16;
	return i;
}

/* @sf's bytes with byte @off flipped, as its scratch file. */
static void put_flipped(const struct small_file *sf, size_t off)
{
	sf->buf[off] ^= 0x20;
	put_file(sf->scratch, sf->buf, sf->len);
	sf->buf[off] ^= 0x20;
}

/* ---- round trips -------------------------------------------------------- */

TestSuite(trace);

Test(trace, round_trip_keeps_meta_threads_tasks_stacks_samples_events_frames)
{
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	struct trace_counters c = {.lost_samples = 3, .shim_drops = 5, .end_time = 99999};
	static const uint64_t ips[3][4] = {
		{0x401010, 0x401120, 0x401230, 0x7f0000001000},
		{KADDR + 0x10, KADDR + 0x2000, 0x401010, 0x401230},
		{0x40200f},
	};
	static const unsigned depth[3] = {4, 4, 1};
	uint32_t st[4];
	struct trace *t;
	unsigned int calls = 0;
	size_t i, j;

	/* warmed as the recorder does: nothing of it in the file */
	cr_assert_eq(trace_writer__warm(w), 0);
	cr_assert_eq(trace_writer__meta(w, "cmd", "demo"), 0);
	cr_assert_eq(trace_writer__meta(w, "pid", "42"), 0);
	cr_assert_eq(trace_writer__meta(w, "cmd", "demo2"), 0);
	cr_assert_eq(trace_writer__thread(w, 100, "main"), 0);
	cr_assert_eq(trace_writer__thread(w, 101, "worker-1"), 0);
	cr_assert_eq(trace_writer__thread(w, 100, "main2"), 0);
	cr_assert_eq(trace_writer__thread(w, 102, NULL), 0);
	cr_assert_eq(trace_writer__thread(w, 101, NULL), 0);
	cr_assert_eq(trace_writer__task(w, 7, "accept"), 0);
	cr_assert_eq(trace_writer__task(w, UINT64_MAX, "big id"), 0);
	cr_assert_eq(trace_writer__task(w, 7, "accept2"), 0);
	for (i = 0; i < 3; i++)
		cr_assert_eq(trace_writer__stack(w, ips[i], depth[i], &st[i]), 0);
	cr_assert_eq(trace_writer__stack(w, NULL, 0, &st[3]), 0);
	cr_assert_eq(trace_writer__nframes(w), 7);
	cr_assert_eq(trace_writer__frame_addr(w, 4), KADDR + 0x10);

	for (i = 0; i < 100; i++) {
		struct trace_sample s = {
			/* times go backwards now and then: deltas are signed */
			.time = 5000 + i * 37 - (i % 7 == 3 ? 100 : 0),
			.tid = (uint32_t)(100 + i % 3),
			.stack = st[i % 4],
			.weight = (uint32_t)(i == 50 ? UINT32_MAX : 1),
			.sampler = (uint16_t)(i % 2 ? TRACE_SAMPLER_PERF
						    : TRACE_SAMPLER_CTIMER),
		};
		struct trace_event e = {
			.time = 5000 + i * 11,
			.task = i % 5 == 0 ? UINT64_MAX : 7 + i % 3,
			.tid = (uint32_t)(100 + i % 3),
			.type = (uint32_t)(1 + i % 9),
		};

		cr_assert_eq(trace_writer__sample(w, &s), 0);
		cr_assert_eq(trace_writer__event(w, &e), 0);
	}
	cr_assert_eq(trace_writer__finish(w, resolve, &calls, &c), 0);
	cr_assert_eq(calls, 7, "resolver called once per unique address");
	trace_file_close(&f);

	t = trace_file_read(&f);
	cr_assert_eq(t->complete, 1);

	cr_assert_eq(t->nmeta, 3);
	cr_assert_str_eq(trace__meta(t, "cmd"), "demo2");
	cr_assert_str_eq(trace__meta(t, "pid"), "42");
	cr_assert_null(trace__meta(t, "nope"));
	cr_assert_str_eq(t->meta[0].value, "demo");

	cr_assert_eq(t->nthreads, 3);
	cr_assert_str_eq(trace__thread_name(t, 100), "main2");
	cr_assert_str_eq(trace__thread_name(t, 101), "worker-1");
	cr_assert_null(trace__thread_name(t, 102));
	cr_assert_null(trace__thread_name(t, 103));
	cr_assert_eq(t->ntasks, 2);
	cr_assert_str_eq(trace__task_name(t, 7), "accept2");
	cr_assert_str_eq(trace__task_name(t, UINT64_MAX), "big id");

	cr_assert_eq(t->nstacks, 4);
	cr_assert_eq(t->nframes, 7);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(stack_depth(t, st[i]), depth[i]);
		for (j = 0; j < depth[i]; j++)
			cr_assert_eq(frame_addr(t, st[i], j), ips[i][j]);
	}
	cr_assert_eq(stack_depth(t, st[3]), 0);
	cr_assert_str_eq(frame_sym(t, st[0], 0), "fn_401000");
	cr_assert_str_eq(frame_sym(t, st[0], 1), "fn_401100");
	cr_assert_null(frame_sym(t, st[2], 0), "unresolvable stays NULL");
	for (i = 0; i < t->nframes; i++) {
		const struct trace_frame *fr = &t->frames[i];

		cr_assert_eq(fr->kernel, fr->addr >= KADDR);
		if ((fr->addr & 0xf) == 0xf) {
			cr_assert_null(fr->module);
			continue;
		}
		cr_assert_str_eq(fr->module, fr->kernel ? "[kernel]" : "demo");
		cr_assert_eq(fr->offset, fr->addr & 0xff);
	}

	cr_assert_eq(t->nsamples, 100);
	cr_assert_eq(t->nevents, 100);
	for (i = 0; i < 100; i++) {
		const struct trace_sample *s = &t->samples[i];
		const struct trace_event *e = &t->events[i];

		cr_assert_eq(s->time, 5000 + i * 37 - (i % 7 == 3 ? 100 : 0));
		cr_assert_eq(s->tid, 100 + i % 3);
		cr_assert_eq(s->stack, st[i % 4]);
		cr_assert_eq(s->weight, i == 50 ? UINT32_MAX : 1);
		cr_assert_eq(s->sampler,
			     i % 2 ? TRACE_SAMPLER_PERF : TRACE_SAMPLER_CTIMER);
		cr_assert_eq(s->flags, 0);
		cr_assert_eq(e->time, 5000 + i * 11);
		cr_assert_eq(e->task, i % 5 == 0 ? UINT64_MAX : 7 + i % 3);
		cr_assert_eq(e->tid, 100 + i % 3);
		cr_assert_eq(e->type, 1 + i % 9);
	}

	cr_assert_eq(t->counters.samples, 100);
	cr_assert_eq(t->counters.events, 100);
	cr_assert_eq(t->counters.lost_samples, 3);
	cr_assert_eq(t->counters.shim_drops, 5);
	cr_assert_eq(t->counters.start_time, 5000,
		     "start defaults to the earliest record");
	cr_assert_eq(t->counters.end_time, 99999);
	trace__free(t);
	tmp_remove(f.path);
}

Test(trace, identical_callchains_share_a_stack_id)
{
	int fd = open("/dev/null", O_WRONLY);
	struct trace_writer *w = new_writer(fd);
	uint64_t a[] = {1, 2, 3}, b[] = {1, 2, 3}, pre[] = {1, 2};
	uint64_t sup[] = {1, 2, 3, 4}, rev[] = {3, 2, 1};
	uint32_t ia, ib, ip, is, ir, ie, ie2;

	cr_assert_not_null(w);
	cr_assert_eq(trace_writer__stack(w, a, 3, &ia), 0);
	cr_assert_eq(trace_writer__stack(w, b, 3, &ib), 0);
	cr_assert_eq(trace_writer__stack(w, pre, 2, &ip), 0);
	cr_assert_eq(trace_writer__stack(w, sup, 4, &is), 0);
	cr_assert_eq(trace_writer__stack(w, rev, 3, &ir), 0);
	cr_assert_eq(trace_writer__stack(w, NULL, 0, &ie), 0);
	cr_assert_eq(trace_writer__stack(w, a, 0, &ie2), 0);
	cr_assert_eq(ia, ib);
	cr_assert_eq(ie, ie2);
	cr_assert_neq(ia, ip);
	cr_assert_neq(ia, is);
	cr_assert_neq(ia, ir);
	cr_assert_neq(ip, is);
	cr_assert_eq(trace_writer__nframes(w), 4, "one frame per address");
	trace_writer__free(w);
	close(fd);
}

Test(trace, many_stacks_keep_their_ids_across_table_growth)
{
	int fd = open("/dev/null", O_WRONLY);
	struct trace_writer *w = new_writer(fd);
	uint64_t ips[3];
	uint32_t id, i;

	cr_assert_not_null(w);
	for (i = 0; i < 20000; i++) {
		ips[0] = 0x400000 + i;
		ips[1] = 0x500000 + i % 17;
		ips[2] = 0x600000;
		cr_assert_eq(trace_writer__stack(w, ips, 3, &id), 0);
		cr_assert_eq(id, i);
	}
	for (i = 0; i < 20000; i += 7) {
		ips[0] = 0x400000 + i;
		ips[1] = 0x500000 + i % 17;
		ips[2] = 0x600000;
		cr_assert_eq(trace_writer__stack(w, ips, 3, &id), 0);
		cr_assert_eq(id, i);
	}
	trace_writer__free(w);
	close(fd);
}

Test(trace, without_frames_chunk_frames_are_bare_addresses)
{
	size_t n;
	char *path = small_trace_file(0, &n);
	struct trace *t;
	const char *msg;
	size_t i;

	cr_assert_eq(trace__read(path, &t, &msg), 0, "%s", msg);
	cr_assert_eq(t->complete, 0);
	cr_assert_eq(t->nsamples, n);
	cr_assert_eq(t->counters.samples, 0, "no END: counters stay zero");
	cr_assert_eq(t->nframes, 5);
	for (i = 0; i < t->nframes; i++) {
		cr_assert_null(t->frames[i].sym);
		cr_assert_null(t->frames[i].module);
		cr_assert_eq(t->frames[i].kernel, t->frames[i].addr >= KADDR);
	}
	cr_assert_str_eq(trace__thread_name(t, 100), "main-renamed");
	trace__free(t);
	tmp_remove(path);
}

/* ---- cut and corrupt files ---------------------------------------------- */

Test(trace, cut_at_any_byte_reads_a_prefix_of_whole_chunks)
{
	struct small_file sf;
	size_t nch, cut, i;
	size_t ends[64];
	struct trace *full, *t;
	const char *msg;
	int rc;

	small_file_open(&sf, 1);
	nch = chunk_ends(sf.buf, sf.len, ends, NULL, 64);
	cr_assert_geq(nch, 8, "the test wants a multi-chunk trace");
	cr_assert_eq(ends[nch - 1], sf.len);
	cr_assert_eq(trace__read(sf.path, &full, &msg), 0, "%s", msg);
	cr_assert_eq(full->chunks, nch);
	cr_assert_eq(full->complete, 1);

	for (cut = 0; cut <= sf.len; cut++) {
		size_t whole = 0;

		while (whole < nch && ends[whole] <= cut)
			whole++;
		put_file(sf.scratch, sf.buf, cut);
		msg = NULL;
		rc = trace__read(sf.scratch, &t, &msg);
		if (cut < 16) {
			cr_assert_eq(rc, -EBADMSG, "cut %zu in the file header", cut);
			cr_assert_not_null(msg);
			cr_assert_null(t);
			continue;
		}
		if (!whole) {
			/* a header and no whole chunk: nothing recorded */
			cr_assert_eq(rc, -ENODATA, "cut %zu before the first chunk's end",
				     cut);
			cr_assert_not_null(msg);
			cr_assert_null(t);
			continue;
		}
		cr_assert_eq(rc, 0, "cut at %zu: %s", cut, msg);
		cr_assert_eq(t->chunks, whole, "cut at %zu", cut);
		cr_assert_eq(t->complete, cut == sf.len);
		cr_assert_leq(t->nsamples, full->nsamples);
		for (i = 0; i < t->nsamples; i++)
			cr_assert_eq(t->samples[i].time, full->samples[i].time);
		for (i = 0; i < t->nframes; i++)
			cr_assert_eq(t->frames[i].addr, full->frames[i].addr);
		trace__free(t);
	}
	trace__free(full);
	small_file_release(&sf);
}

Test(trace, any_flipped_byte_after_the_file_header_is_corruption)
{
	struct small_file sf;
	size_t off;
	struct trace *t;
	const char *msg;
	int rc;

	small_file_open(&sf, 1);
	for (off = 16; off < sf.len; off++) {
		put_flipped(&sf, off);
		msg = NULL;
		rc = trace__read(sf.scratch, &t, &msg);
		cr_assert_eq(rc, -EBADMSG, "flip at %zu: %d", off, rc);
		cr_assert_not_null(msg);
		cr_assert_null(t);
	}
	small_file_release(&sf);
}

Test(trace, flipped_payload_byte_says_checksum_mismatch)
{
	struct small_file sf;
	struct trace *t;
	const char *msg;

	small_file_open(&sf, 0);
	/* the first chunk's payload starts after file and chunk headers */
	sf.buf[16 + CHUNK_HDR + 2] ^= 1;
	put_file(sf.path, sf.buf, sf.len);
	cr_assert_eq(trace__read(sf.path, &t, &msg), -EBADMSG);
	cr_assert_str_eq(msg, "chunk 0 at offset 16: checksum mismatch");
	small_file_release(&sf);
}

Test(trace, undefined_stack_ids_are_corruption)
{
	struct small_file sf;
	size_t nch, i, from = 0;
	size_t ends[64];
	struct trace *t;
	const char *msg;

	small_file_open(&sf, 0);
	/* cut the first STACKS chunk out: the SAMPLES after it name stacks
	 * the reader never saw */
	i = first_chunk(&sf, TRACE_CHUNK_STACKS, ends, &nch, &from);
	cr_assert_lt(i, nch);
	cr_assert_eq(le32(sf.buf + ends[i] + 4), TRACE_CHUNK_SAMPLES);
	memmove(sf.buf + from, sf.buf + ends[i], sf.len - ends[i]);
	put_file(sf.path, sf.buf, sf.len - (ends[i] - from));
	cr_assert_eq(trace__read(sf.path, &t, &msg), -EBADMSG);
	cr_assert(strstr(msg, "undefined stack"), "%s", msg);
	small_file_release(&sf);
}

Test(trace, not_a_trace_is_rejected_with_a_message)
{
	static const char text[] = "#!/bin/sh\necho this is not a trace\n";
	char *path = tmp_path();
	struct trace *t = (struct trace *)1;
	const char *msg = NULL;

	put_file(path, text, sizeof(text) - 1);
	cr_assert_eq(trace__read(path, &t, &msg), -EBADMSG);
	cr_assert_null(t);
	cr_assert_str_eq(msg, "bad file magic");

	put_file(path, "", 0);
	cr_assert_eq(trace__read(path, &t, &msg), -EBADMSG);
	cr_assert_not_null(msg);
	tmp_remove(path);
}

Test(trace, newer_format_version_is_not_supported)
{
	struct small_file sf;
	struct trace *t;
	const char *msg;

	small_file_open(&sf, 0);
	sf.buf[8] = TRACE_VERSION + 1;
	put_file(sf.path, sf.buf, sf.len);
	cr_assert_eq(trace__read(sf.path, &t, &msg), -EPROTONOSUPPORT);
	{
		char want[32];

		snprintf(want, sizeof(want), "version %d", TRACE_VERSION + 1);
		cr_assert(strstr(msg, want), "%s", msg);
	}
	small_file_release(&sf);
}

Test(trace, missing_file_is_enoent)
{
	struct trace *t;
	const char *msg;

	cr_assert_eq(trace__read("/nonexistent/d9prof.data", &t, &msg), -ENOENT);
	cr_assert_null(t);
	cr_assert_not_null(msg);
}

/* ---- off-CPU intervals ------------------------------------------------- */

Test(trace, switches_round_trip_with_open_and_preempted_intervals)
{
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	static const uint64_t blk[] = {KADDR + 0x100, KADDR + 0x200, 0x7f0000001234,
				       0x401230};
	static const uint64_t pre[] = {KADDR + 0x300, 0x401010};
	uint32_t sb, sp;
	struct trace *t;
	size_t i, n = 70000; /* more than one chunk's worth */
	uint64_t last_in = 0;

	cr_assert_eq(trace_writer__stack(w, blk, 4, &sb), 0);
	cr_assert_eq(trace_writer__stack(w, pre, 2, &sp), 0);
	for (i = 0; i < n; i++) {
		struct trace_switch sw = {
			/* out of order now and then: deltas are signed */
			.time = 1000000 + i * 100 - (i % 11 == 5 ? 300 : 0),
			.time_in = i % 1000 == 999 ? 0 : 1000000 + i * 100 + 50 + i % 7,
			.tid = (uint32_t)(200 + i % 4),
			.stack = i % 3 ? sb : sp,
			.preempted = i % 3 == 0,
		};

		if (sw.time_in && sw.time_in < sw.time)
			sw.time_in = sw.time;
		cr_assert_eq(trace_writer__switch(w, &sw), 0);
	}
	trace_file_finish(&f, resolve);

	t = trace_file_read(&f);
	cr_assert_eq(t->complete, 1);
	cr_assert_eq(t->nswitches, n);
	cr_assert_eq(t->counters.switches, n);
	cr_assert_eq(t->counters.samples, 0);
	for (i = 0; i < n; i++) {
		const struct trace_switch *sw = &t->switches[i];
		uint64_t time = 1000000 + i * 100 - (i % 11 == 5 ? 300 : 0);
		uint64_t in = i % 1000 == 999 ? 0 : 1000000 + i * 100 + 50 + i % 7;

		if (in && in < time)
			in = time;
		cr_assert_eq(sw->time, time, "switch %zu", i);
		cr_assert_eq(sw->time_in, in, "switch %zu", i);
		cr_assert_eq(sw->tid, 200 + i % 4);
		cr_assert_eq(sw->stack, i % 3 ? sb : sp);
		cr_assert_eq(sw->preempted, i % 3 == 0);
		if (in > last_in)
			last_in = in;
		if (time > last_in)
			last_in = time;
	}
	cr_assert_eq(stack_depth(t, sb), 4);
	cr_assert_eq(frame_addr(t, sb, 2), 0x7f0000001234);
	cr_assert(t->frames[t->stack_frames[t->stack_off[sb]]].kernel);
	cr_assert_eq(t->counters.start_time, 1000000, "start spans switch times");
	cr_assert_eq(t->counters.end_time, last_in, "end spans switch times");
	trace__free(t);
	tmp_remove(f.path);
}

Test(trace, switches_carry_their_run_queue_part_and_its_holder_by_name)
{
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	static const uint64_t ips[] = {0x401230};
	struct trace_switch bad = {.time = 100, .time_in = 200, .runnable = 201};
	uint32_t st;
	struct trace *t;

	cr_assert_eq(trace_writer__stack(w, ips, 1, &st), 0);
	/* runnable before the switch-out, or after the switch-in: refused */
	cr_expect_eq(trace_writer__switch(w, &bad), -EINVAL);
	bad.runnable = 99;
	cr_expect_eq(trace_writer__switch(w, &bad), -EINVAL);
	struct trace_switch sw[] = {
		/* blocked 30, then 70 on the run queue behind tid 4567 */
		{.time = 1000,
		 .time_in = 1100,
		 .runnable = 1030,
		 .tid = 7,
		 .holder = 4567},
		/* preempted: all run queue */
		{.time = 2000,
		 .time_in = 2040,
		 .runnable = 2000,
		 .tid = 7,
		 .holder = 8,
		 .preempted = 1},
		/* wakeup not known */
		{.time = 3000, .time_in = 3500, .tid = 8},
		/* woken, still waiting at the end */
		{.time = 4000, .runnable = 4200, .tid = 8},
	};
	for (size_t i = 0; i < 4; i++) {
		sw[i].stack = st;
		cr_assert_eq(trace_writer__switch(w, &sw[i]), 0);
	}
	cr_assert_eq(trace_writer__thread(w, 8, "worker-1"), 0);
	cr_assert_eq(trace_writer__comm(w, 4567, "stress-ng"), 0);
	trace_file_finish(&f, resolve);

	t = trace_file_read(&f);
	cr_assert_eq(t->nswitches, 4);
	for (size_t i = 0; i < 4; i++) {
		cr_expect_eq(t->switches[i].runnable, sw[i].runnable, "switch %zu", i);
		cr_expect_eq(t->switches[i].holder, sw[i].holder, "switch %zu", i);
		cr_expect_eq(t->switches[i].time_in, sw[i].time_in, "switch %zu", i);
	}
	cr_expect_str_eq(trace__comm(t, 4567), "stress-ng");
	cr_expect_str_eq(trace__comm(t, 8), "worker-1", "target threads too");
	cr_expect_null(trace__comm(t, 9));
	cr_expect_null(trace__thread_name(t, 4567), "not a thread of the target");
	trace__free(t);
	tmp_remove(f.path);
}

Test(trace, switches_carry_who_held_the_cpu_while_they_waited)
{
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	static const uint64_t ips[] = {0x401230};
	static const struct trace_hold h[] = {{.tid = 4567, .ns = 50},
					      {.tid = TRACE_HOLD_IDLE, .ns = 15},
					      {.tid = 9, .ns = 5}};
	static const struct trace_hold over[] = {{.tid = 4567, .ns = 71}};
	struct trace_switch sw = {.time = 1000,
				  .time_in = 1100,
				  .runnable = 1030,
				  .tid = 7,
				  .holder = 4567};
	struct trace_switch open_sw = {.time = 2000, .runnable = 2010, .tid = 7};
	struct trace *t;

	cr_assert_eq(trace_writer__stack(w, ips, 1, &sw.stack), 0);
	open_sw.stack = sw.stack;
	/* more than the wait, no wait known, too many: refused */
	cr_expect_eq(trace_writer__switch_held(w, &sw, over, 1), -EINVAL);
	cr_expect_eq(trace_writer__switch_held(w, &open_sw, h, 1), -EINVAL);
	cr_expect_eq(trace_writer__switch_held(w, &sw, h, TRACE_MAX_HOLDS + 1), -EINVAL);
	cr_assert_eq(trace_writer__switch_held(w, &sw, h, 3), 0);
	cr_assert_eq(trace_writer__switch(w, &open_sw), 0);
	cr_assert_eq(trace_writer__switch_held(w, &sw, h + 1, 2), 0);
	trace_file_finish(&f, resolve);

	t = trace_file_read(&f);
	cr_assert_eq(t->nswitches, 3);
	cr_assert_eq(t->switches[0].nhold, 3);
	cr_assert_eq(t->switches[1].nhold, 0);
	cr_assert_eq(t->switches[2].nhold, 2);
	for (size_t k = 0; k < 3; k++) {
		const struct trace_hold *x = &t->holds[t->switches[0].hold + k];

		cr_expect_eq(x->tid, h[k].tid, "hold %zu", k);
		cr_expect_eq(x->ns, h[k].ns, "hold %zu", k);
	}
	cr_expect_eq(t->holds[t->switches[2].hold].tid, TRACE_HOLD_IDLE);
	cr_expect_eq(t->holds[t->switches[2].hold + 1].ns, 5);
	trace__free(t);
	tmp_remove(f.path);
}

Test(trace, small_trace_keeps_its_switches_whole_or_not_at_all_when_cut)
{
	struct small_file sf;
	size_t nch, cut;
	size_t ends[64];
	struct trace *full, *t;
	const char *msg;

	small_file_open(&sf, 1);
	cr_assert_eq(trace__read(sf.path, &full, &msg), 0, "%s", msg);
	cr_assert_eq(full->nswitches, 4);
	cr_assert_eq(full->switches[3].time_in, 0, "still off-CPU at the end");
	cr_assert_eq(full->switches[1].preempted, 1);
	cr_assert_eq(full->switches[2].time_in, 1055);
	cut = first_chunk(&sf, TRACE_CHUNK_SWITCHES, ends, &nch, NULL);
	cr_assert_lt(cut, nch, "a SWITCHES chunk");
	/* one byte short of the SWITCHES chunk: none of it; whole: all */
	put_file(sf.scratch, sf.buf, ends[cut] - 1);
	cr_assert_eq(trace__read(sf.scratch, &t, &msg), 0, "%s", msg);
	cr_assert_eq(t->nswitches, 0);
	trace__free(t);
	put_file(sf.scratch, sf.buf, ends[cut]);
	cr_assert_eq(trace__read(sf.scratch, &t, &msg), 0, "%s", msg);
	cr_assert_eq(t->nswitches, 4);
	cr_assert_eq(t->counters.switches, 0, "no END: counters stay zero");
	trace__free(t);
	trace__free(full);
	small_file_release(&sf);
}

Test(trace, switch_naming_a_stack_never_defined_is_corruption)
{
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	struct trace_switch sw = {.time = 10, .time_in = 20, .tid = 1};
	uint64_t ip = 0x401000;
	size_t len, ends[16], nch;
	uint32_t types[16];
	uint8_t *buf;
	struct trace *t;
	const char *msg;

	cr_assert_eq(trace_writer__stack(w, &ip, 1, &sw.stack), 0);
	cr_assert_eq(trace_writer__switch(w, &sw), 0);
	cr_assert_eq(trace_writer__flush(w), 0);
	trace_file_close(&f);

	/* STACKS then SWITCHES: drop the STACKS chunk */
	buf = get_file(f.path, &len);
	nch = chunk_ends(buf, len, ends, types, 16);
	cr_assert_eq(nch, 2);
	cr_assert_eq(types[0], TRACE_CHUNK_STACKS);
	cr_assert_eq(types[1], TRACE_CHUNK_SWITCHES);
	memmove(buf + 16, buf + ends[0], len - ends[0]);
	put_file(f.path, buf, len - (ends[0] - 16));
	cr_assert_eq(trace__read(f.path, &t, &msg), -EBADMSG);
	cr_assert(strstr(msg, "switch refers to an undefined stack"), "%s", msg);
	free(buf);
	tmp_remove(f.path);
}

Test(trace, writer_rejects_switches_with_unknown_stacks_or_switch_in_before_out)
{
	int fd = open("/dev/null", O_WRONLY);
	struct trace_writer *w = new_writer(fd);
	struct trace_switch sw = {.time = 100, .time_in = 200};
	uint32_t id;

	cr_assert_not_null(w);
	cr_assert_eq(trace_writer__switch(w, &sw), -EINVAL, "no stack 0 yet");
	cr_assert_eq(trace_writer__stack(w, NULL, 0, &id), 0);
	cr_assert_eq(trace_writer__switch(w, &sw), 0);
	cr_assert_eq(trace_writer__switch(w, NULL), -EINVAL);
	sw.time_in = 99;
	cr_assert_eq(trace_writer__switch(w, &sw), -EINVAL);
	sw.time_in = 0;
	cr_assert_eq(trace_writer__switch(w, &sw), 0, "0: still off-CPU");
	sw.time = 0;
	sw.time_in = UINT64_MAX;
	cr_assert_eq(trace_writer__switch(w, &sw), -EINVAL, "length would wrap");
	cr_assert_eq(trace_writer__finish(w, NULL, NULL, NULL), 0);
	cr_assert_eq(trace_writer__switch(w, &sw), -EINVAL, "after finish");
	trace_writer__free(w);
	close(fd);
}

/*
 * Hand-made chunks, for payloads the writer never produces. @raw is the
 * uncompressed payload; the chunk is appended to @f.
 */
#include <zstd.h>

static void put_chunk(FILE *f, uint32_t type, uint32_t count, const uint8_t *raw,
		      size_t rlen)
{
	uint8_t out[4096], h[CHUNK_HDR];
	size_t c = ZSTD_compress(out, sizeof(out), rlen ? raw : (const uint8_t *)"", rlen,
				 3);
	uint32_t v[5] = {0x4b433944u, type, (uint32_t)c, (uint32_t)rlen, count};

	cr_assert(!ZSTD_isError(c));
	for (int i = 0; i < 5; i++)
		for (int k = 0; k < 4; k++)
			h[i * 4 + k] = (uint8_t)(v[i] >> (8 * k));
	v[0] = lib_xxh32(out, c, 0);
	for (int k = 0; k < 4; k++)
		h[20 + k] = (uint8_t)(v[0] >> (8 * k));
	v[0] = lib_xxh32(h, 24, 0);
	for (int k = 0; k < 4; k++)
		h[24 + k] = (uint8_t)(v[0] >> (8 * k));
	cr_assert_eq(fwrite(h, 1, CHUNK_HDR, f), CHUNK_HDR);
	cr_assert_eq(fwrite(out, 1, c, f), c);
}

/* A new file of hand-made chunks, its path in *@path: the file header,
 * then the STACKS chunk @stacks (@len bytes). */
static FILE *crafted_open(char **path, const uint8_t *stacks, size_t len)
{
	uint8_t hdr[16] = "D9PROF\0\n";
	FILE *f;

	*path = tmp_path();
	f = fopen(*path, "w");
	cr_assert_not_null(f);
	hdr[8] = TRACE_VERSION;
	cr_assert_eq(fwrite(hdr, 1, 16, f), 16);
	put_chunk(f, TRACE_CHUNK_STACKS, 1, stacks, len);
	return f;
}

/* The END chunk @end (@len bytes) closes @f; returns trace__read_opts()
 * of @path with @flags, and removes the file. */
static int crafted_read(FILE *f, char *path, const uint8_t *end, size_t len,
			unsigned int flags, struct trace **t, const char **msg)
{
	int rc;

	put_chunk(f, TRACE_CHUNK_END, 1, end, len);
	fclose(f);
	rc = trace__read_opts(path, flags, t, msg);
	tmp_remove(path);
	return rc;
}

/* A trace with one empty stack and the SWITCHES payload @sw, then an END
 * chunk of @nend varints (all 1). Returns trace__read()'s result. */
static int read_crafted(const uint8_t *sw, size_t swlen, size_t nend, struct trace **t,
			const char **msg)
{
	static const uint8_t stacks[] = {0, 0, 0, 0}; /* no frames, one stack of 0 */
	uint8_t end[16];
	char *path;
	FILE *f = crafted_open(&path, stacks, sizeof(stacks));

	if (sw)
		put_chunk(f, TRACE_CHUNK_SWITCHES, 1, sw, swlen);
	memset(end, 1, nend);
	return crafted_read(f, path, end, nend, 0, t, msg);
}

Test(trace, crafted_switch_payloads_are_checked)
{
	/* time 5, dur, tid 1, stack 0, preempted */
	static const uint8_t good[] = {10, 4, 1, 0, 1};
	static const uint8_t bad_flag[] = {10, 4, 1, 0, 2};
	static const uint8_t bad_stack[] = {10, 4, 1, 1, 0};
	static const uint8_t short_cols[] = {10, 4, 1, 0};
	/* time 2^64 - 1 (zigzag of -1 is 1), dur 3: switch-in past 2^64 */
	static const uint8_t wraps[] = {1, 3, 1, 0, 0};
	struct trace *t;
	const char *msg;

	cr_assert_eq(read_crafted(good, sizeof(good), 7, &t, &msg), 0, "%s", msg);
	cr_assert_eq(t->nswitches, 1);
	cr_assert_eq(t->switches[0].time, 5);
	cr_assert_eq(t->switches[0].time_in, 8);
	cr_assert_eq(t->switches[0].preempted, 1);
	cr_assert_eq(t->counters.switches, 1);
	trace__free(t);
	cr_assert_eq(read_crafted(bad_flag, sizeof(bad_flag), 7, &t, &msg), -EBADMSG);
	cr_assert(strstr(msg, "preempted"), "%s", msg);
	cr_assert_eq(read_crafted(bad_stack, sizeof(bad_stack), 7, &t, &msg), -EBADMSG);
	cr_assert(strstr(msg, "undefined stack"), "%s", msg);
	cr_assert_eq(read_crafted(short_cols, sizeof(short_cols), 7, &t, &msg), -EBADMSG);
	cr_assert_eq(read_crafted(wraps, sizeof(wraps), 7, &t, &msg), -EBADMSG);
	cr_assert(strstr(msg, "2^64"), "%s", msg);
}

Test(trace, end_chunk_of_the_first_version_reads_zero_switches)
{
	struct trace *t;
	const char *msg;

	cr_assert_eq(read_crafted(NULL, 0, 6, &t, &msg), 0, "%s", msg);
	cr_assert_eq(t->complete, 1);
	cr_assert_eq(t->counters.end_time, 1);
	cr_assert_eq(t->counters.switches, 0);
	cr_assert_eq(t->nswitches, 0);
	trace__free(t);
}

/* ---- writer errors ------------------------------------------------------ */

Test(trace, writer_reports_write_errors_and_keeps_them)
{
	char *path = tmp_path();
	int fd = open(path, O_WRONLY | O_TRUNC);
	int full = open("/dev/full", O_WRONLY);
	struct trace_sample s = {.time = 1, .tid = 1, .weight = 1};
	uint64_t ip = 0x401000;
	struct trace_writer *w;

	cr_assert_eq(trace_writer__new(-1, &w), -EBADF);
	cr_assert_null(w);
	cr_assert(full >= 0);
	cr_assert_eq(trace_writer__new(full, &w), -ENOSPC);
	cr_assert_null(w);

	w = new_writer(fd);
	cr_assert_not_null(w);
	cr_assert_eq(trace_writer__stack(w, &ip, 1, &s.stack), 0);
	cr_assert_eq(trace_writer__sample(w, &s), 0);
	/* the disk fills up under the writer */
	cr_assert_eq(dup2(full, fd), fd);
	cr_assert_eq(trace_writer__flush(w), -ENOSPC);
	cr_assert_eq(trace_writer__sample(w, &s), -ENOSPC);
	cr_assert_eq(trace_writer__finish(w, resolve, NULL, NULL), -ENOSPC);
	trace_writer__free(w);
	close(fd);
	close(full);
	tmp_remove(path);
}

Test(trace, writer_rejects_unknown_stacks_and_calls_after_finish)
{
	int fd = open("/dev/null", O_WRONLY);
	struct trace_writer *w = new_writer(fd);
	struct trace_sample s = {.stack = 0};
	uint32_t id;

	cr_assert_eq(trace_writer__sample(w, &s), -EINVAL);
	cr_assert_eq(trace_writer__stack(w, NULL, 0, &id), 0);
	cr_assert_eq(trace_writer__sample(w, &s), 0);
	cr_assert_eq(trace_writer__meta(w, NULL, "x"), -EINVAL);
	cr_assert_eq(trace_writer__finish(w, NULL, NULL, NULL), 0);
	cr_assert_eq(trace_writer__sample(w, &s), -EINVAL);
	cr_assert_eq(trace_writer__flush(w), -EINVAL);
	trace_writer__free(w);
	close(fd);
}

/* Batches, single events and flushes mixed, across chunk boundaries, with
 * values that take every varint length: the reader sees them all, in order. */
Test(trace, event_batches_round_trip_like_single_events_across_chunks)
{
	enum { N = 150000 };
	static const size_t sizes[] = {1, 255, 256, 70000, 3, 0, 65536};
	struct trace_event *ev = calloc(N, sizeof(*ev));
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	struct trace *t;
	size_t i, at = 0, k = 0, len, nchunks;
	size_t ends[64];
	uint32_t types[64];
	uint64_t time = 1000000000ULL;
	unsigned events_chunks = 0;
	uint8_t *buf;

	cr_assert_not_null(ev);
	for (i = 0; i < N; i++) {
		/* mostly small steps; now and then huge ones, backwards too */
		time += i % 1000 == 7	? (1ULL << 40)
			: i % 1000 == 9 ? -(1ULL << 41)
					: 1500;
		ev[i].time = i == N / 2 ? UINT64_MAX : time;
		ev[i].task =
			i % 5000 == 3 ? UINT64_MAX - i : 0x7f0000001000ULL + i % 37 * 64;
		ev[i].tid = i % 300 < 200   ? 4242
			    : i % 300 < 290 ? 7
					    : UINT32_MAX - (uint32_t)i;
		ev[i].type = i % 777 == 0 ? 300 : TRACE_EV_POLL_BEGIN + (uint32_t)(i % 3);
	}
	cr_assert_eq(trace_writer__events(w, NULL, 0), 0);
	cr_assert_eq(trace_writer__events(w, NULL, 1), -EINVAL);
	while (at < N) {
		size_t n = sizes[k++ % (sizeof(sizes) / sizeof(*sizes))];

		if (n > N - at)
			n = N - at;
		if (k % 3 == 0) {
			for (i = 0; i < n; i++)
				cr_assert_eq(trace_writer__event(w, &ev[at + i]), 0);
		} else {
			cr_assert_eq(trace_writer__events(w, &ev[at], n), 0);
		}
		if (k % 4 == 0)
			cr_assert_eq(trace_writer__flush(w), 0);
		at += n;
	}
	trace_file_finish(&f, NULL);

	t = trace_file_read(&f);
	cr_assert_eq(t->complete, 1);
	cr_assert_eq(t->nevents, N);
	cr_assert_eq(t->counters.events, N);
	for (i = 0; i < N; i++) {
		cr_assert_eq(t->events[i].time, ev[i].time, "event %zu", i);
		cr_assert_eq(t->events[i].task, ev[i].task, "event %zu", i);
		cr_assert_eq(t->events[i].tid, ev[i].tid, "event %zu", i);
		cr_assert_eq(t->events[i].type, ev[i].type, "event %zu", i);
	}
	buf = get_file(f.path, &len);
	nchunks = chunk_ends(buf, len, ends, types, 64);
	for (i = 0; i < nchunks; i++)
		events_chunks += types[i] == TRACE_CHUNK_POLLS;
	cr_assert_geq(events_chunks, 3, "%u POLLS chunks", events_chunks);
	free(buf);
	trace__free(t);
	tmp_remove(f.path);
	free(ev);
}

Test(trace, free_of_null_is_a_noop)
{
	trace__free(NULL);
	trace_writer__free(NULL);
}

/* ---- a large trace ------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: deterministic, fast */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

#define BIG_SAMPLES 1000000
#define BIG_EVENTS  1000000
#define BIG_STACKS  5000
#define BIG_THREADS 8

/* Callchain @i of the synthetic workload: 8..40 frames, leaves spread over
 * 20k addresses, shared roots like a real runtime (start_thread, the
 * scheduler loop, the poll function), some kernel frames on top. */
static unsigned big_stack(unsigned i, uint64_t *ips)
{
	uint64_t save = rng_state;
	unsigned n, j;

	rng_state = 0x9e3779b97f4a7c15ULL * (i + 1);
	n = 8 + (unsigned)(rnd() % 33);
	for (j = 0; j < n; j++) {
		if (j < 3 && i % 4 == 0)
			ips[j] = KADDR + (rnd() % 4096) * 16;
		else if (j + 4 >= n)
			ips[j] = 0x401000 + (n - j) * 0x40; /* roots */
		else
			ips[j] = 0x500000 + (rnd() % 20000) * 24;
	}
	rng_state = save;
	return n;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

Test(trace, large_trace_round_trips_compactly_and_fast)
{
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	static uint32_t ids[BIG_STACKS];
	static uint64_t ips[64];
	uint64_t ttime[BIG_THREADS] = {0}, etime = 0, depth_sum = 0;
	size_t bytes_by_type[16] = {0}, len, pos, i;
	struct trace *t;
	double t0, t1, t2;
	uint8_t *buf;

	t0 = now();
	for (i = 0; i < BIG_STACKS; i++) {
		unsigned n = big_stack((unsigned)i, ips);

		cr_assert_eq(trace_writer__stack(w, ips, n, &ids[i]), 0);
		cr_assert_eq(ids[i], i);
	}
	rng_state = 42;
	for (i = 0; i < BIG_SAMPLES; i++) {
		/* threads sample at ~1 kHz each, ready in roughly time order;
		 * stacks skewed: a few hot ones, a long tail */
		unsigned th = (unsigned)(rnd() % BIG_THREADS);
		uint64_t r = rnd();
		unsigned si =
			(unsigned)((r % BIG_STACKS) * (r % BIG_STACKS) / BIG_STACKS);
		unsigned n = big_stack(si, ips);
		struct trace_sample s = {
			.tid = 5000 + th, .weight = 1, .sampler = TRACE_SAMPLER_PERF};
		uint32_t id;

		ttime[th] += 1000000 + rnd() % 2000;
		s.time = 1000000000000ULL + ttime[th];
		/* the recorder interns every sample's callchain */
		cr_assert_eq(trace_writer__stack(w, ips, n, &id), 0);
		cr_assert_eq(id, si);
		s.stack = id;
		depth_sum += n;
		cr_assert_eq(trace_writer__sample(w, &s), 0);
	}
	for (i = 0; i < BIG_EVENTS; i++) {
		/* poll begin/end pairs, ~2.5 us apart, tasks 1..10000 */
		struct trace_event e = {.tid = 5000 + (uint32_t)(i / 2 % BIG_THREADS)};

		etime += 1000 + rnd() % 3000;
		e.time = 1000000000000ULL + etime;
		e.task = 0x7f3a00000000ULL + (i / 2 * 7919 % 10000) * 256;
		e.type = i % 2 ? TRACE_EV_POLL_END : TRACE_EV_POLL_BEGIN;
		cr_assert_eq(trace_writer__event(w, &e), 0);
	}
	trace_file_finish(&f, resolve);
	t1 = now();

	t = trace_file_read(&f);
	t2 = now();
	cr_assert_eq(t->complete, 1);
	cr_assert_eq(t->nsamples, BIG_SAMPLES);
	cr_assert_eq(t->nevents, BIG_EVENTS);
	cr_assert_eq(t->nstacks, BIG_STACKS);
	cr_assert_eq(t->counters.samples, BIG_SAMPLES);
	for (i = 0; i < BIG_STACKS; i += 97) {
		unsigned n = big_stack((unsigned)i, ips), j;

		cr_assert_eq(stack_depth(t, (uint32_t)i), n);
		for (j = 0; j < n; j++)
			cr_assert_eq(frame_addr(t, (uint32_t)i, j), ips[j]);
	}

	buf = get_file(f.path, &len);
	for (pos = 16; pos + CHUNK_HDR <= len;) {
		uint32_t type = le32(buf + pos + 4), csize = le32(buf + pos + 8);

		bytes_by_type[type & 15] += CHUNK_HDR + csize;
		pos += CHUNK_HDR + csize;
	}
	/* perf.data: a PERF_RECORD_SAMPLE with IP|TID|TIME|PERIOD|CALLCHAIN
	 * is 8 header + 8 ip + 8 pid/tid + 8 time + 8 period + 8 nr + 8 per
	 * frame (+ context markers) */
	{
		double perf = 48.0 + 8.0 * ((double)depth_sum / BIG_SAMPLES + 1);
		double bps = (double)(bytes_by_type[TRACE_CHUNK_SAMPLES] +
				      bytes_by_type[TRACE_CHUNK_STACKS]) /
			     BIG_SAMPLES;

		fprintf(stderr,
			"trace: %zu bytes total; samples %.2f B/sample (%.2f incl. "
			"stacks; perf.data ~%.0f B/sample); events %.2f B/event; "
			"frames %zu B for %zu frames\n"
			"trace: write %.0f ms (2M records + 1M interned callchains), "
			"read %.0f ms\n",
			len, (double)bytes_by_type[TRACE_CHUNK_SAMPLES] / BIG_SAMPLES,
			bps, perf, (double)bytes_by_type[TRACE_CHUNK_POLLS] / BIG_EVENTS,
			bytes_by_type[TRACE_CHUNK_FRAMES], t->nframes, (t1 - t0) * 1e3,
			(t2 - t1) * 1e3);
		cr_assert_lt(bps, perf / 4, "at most 1/4 of perf.data");
	}
	free(buf);
	trace__free(t);
	tmp_remove(f.path);
}

/* Whole polls: the writer makes one record of BEGIN, END (or BEGIN, WAKE,
 * END at one time) of a task on a thread; everything reads back as written,
 * loaded and walked, whatever does not fit the pattern included. */
struct ev_walk {
	const struct trace_event *want;
	size_t n, at, bad;
};

static int check_walked(void *ctx, const struct trace_event *e, size_t n)
{
	struct ev_walk *c = ctx;

	for (size_t i = 0; i < n; i++, c->at++)
		if (c->at >= c->n || memcmp(&e[i], &c->want[c->at], sizeof(*e)))
			c->bad++;
	return 0;
}

Test(trace, whole_polls_read_back_as_their_events)
{
	enum { N = 200000 };
	struct trace_event *ev = calloc(N + 3, sizeof(*ev));
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	struct ev_walk c = {.want = ev};
	const char *msg = NULL;
	struct trace *t;
	uint64_t time = 5000000000ULL, seed = 42;
	size_t i = 0, at = 0, n;

	cr_assert_not_null(ev);
	while (i < N) {
		uint64_t task = 1 + (seed = seed * 6364136223846793005ULL + 1) % 50;
		uint32_t tid = 100 + (uint32_t)(seed >> 40) % 3,
			 k = (uint32_t)(seed >> 33) % 9;

		time += 1 + (seed >> 20) % 5000;
		ev[i++] = (struct trace_event){time, task, tid, TRACE_EV_POLL_BEGIN};
		if (k == 0) /* a begin alone */
			continue;
		if (k == 1) /* a wake of another task inside the poll */
			ev[i++] = (struct trace_event){time + 3, task + 1, tid,
						       TRACE_EV_WAKE};
		if (k == 2) /* woken at the end: one record */
			ev[i++] =
				(struct trace_event){time + 9, task, tid, TRACE_EV_WAKE};
		if (k == 3) /* woken before the end: not a whole poll */
			ev[i++] =
				(struct trace_event){time + 5, task, tid, TRACE_EV_WAKE};
		if (k == 4) /* an end of another thread, or back in time */
			ev[i++] = (struct trace_event){time + 9, task, tid + 1,
						       TRACE_EV_POLL_END};
		if (k == 5)
			time += 1ULL << 40; /* a long poll */
		ev[i++] = (struct trace_event){k == 6 ? time - 1 : time + 9, task, tid,
					       TRACE_EV_POLL_END};
		time += 9;
	}
	/* in uneven batches, so that some polls are cut between two */
	while (at < i) {
		n = 1 + (at * 7919) % 3001;
		if (n > i - at)
			n = i - at;
		cr_assert_eq(trace_writer__events(w, &ev[at], n), 0);
		at += n;
	}
	trace_file_finish(&f, NULL);

	t = trace_file_read(&f);
	cr_assert_eq(t->nevents, i);
	cr_assert_eq(t->counters.events, i);
	for (size_t j = 0; j < i; j++)
		cr_assert_eq(memcmp(&t->events[j], &ev[j], sizeof(*ev)), 0, "event %zu",
			     j);
	trace__free(t);

	cr_assert_eq(trace__read_opts(f.path,
				      TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS, &t,
				      &msg),
		     0, "%s", msg);
	cr_assert_eq(t->nevents, i);
	c.n = i;
	cr_assert_eq(trace__for_each_event(t, check_walked, &c), 0);
	cr_expect_eq(c.at, i);
	cr_expect_eq(c.bad, 0, "%zu events walked differently", c.bad);
	trace__free(t);

	tmp_remove(f.path);
	free(ev);
}

/* The recorder's path: records with whole polls, mixed with events, read
 * back as the events they stand for. */
Test(trace, records_read_back_as_events)
{
	static const struct trace_event rec[] = {
		{1000, 7, 42, TRACE_REC_POLL},
		{1100, 8, 42, TRACE_EV_WAKE},
		{2000, 8, 42, TRACE_REC_POLL_WOKEN},
		{2500, 9, 43, TRACE_EV_POLL_BEGIN},
	};
	static const uint64_t len[] = {400, 0, 900, 0};
	static const struct trace_event want[] = {
		{600, 7, 42, TRACE_EV_POLL_BEGIN},  {1000, 7, 42, TRACE_EV_POLL_END},
		{1100, 8, 42, TRACE_EV_WAKE},	    {1100, 8, 42, TRACE_EV_POLL_BEGIN},
		{2000, 8, 42, TRACE_EV_WAKE},	    {2000, 8, 42, TRACE_EV_POLL_END},
		{2500, 9, 43, TRACE_EV_POLL_BEGIN}, {2600, 9, 43, TRACE_EV_POLL_BEGIN},
		{2700, 9, 43, TRACE_EV_POLL_END},
	};
	static const struct trace_event ev[] = {{2600, 9, 43, TRACE_EV_POLL_BEGIN},
						{2700, 9, 43, TRACE_EV_POLL_END}};
	static const uint64_t too_long = 5000;
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	struct trace *t;

	cr_assert_eq(trace_writer__records(w, rec, len, 4), 0);
	cr_assert_eq(trace_writer__records(w, rec, NULL, 1), -EINVAL);
	cr_assert_eq(trace_writer__records(w, rec, &too_long, 1), -EINVAL);
	cr_assert_eq(trace_writer__events(w, ev, 2), 0);
	trace_file_finish(&f, NULL);
	t = trace_file_read(&f);
	cr_assert_eq(t->nevents, sizeof(want) / sizeof(*want));
	cr_assert_eq(t->counters.events, t->nevents);
	for (size_t i = 0; i < t->nevents; i++)
		cr_expect_eq(memcmp(&t->events[i], &want[i], sizeof(*want)), 0,
			     "event %zu", i);
	cr_expect_eq(t->counters.start_time, 600);
	trace__free(t);
	tmp_remove(f.path);
}

/* The same whole polls as POLLS (one record each) and as STATE (their
 * events as they are): far fewer bytes to compress. */
Test(trace, whole_polls_take_one_record)
{
	enum { N = 20000 };
	struct trace_event *ev = calloc(2 * N, sizeof(*ev));
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	size_t i, len, nchunks, raw_polls = 0, raw_state = 0, ends[64];
	uint32_t types[64];
	uint8_t *buf;

	cr_assert_not_null(ev);
	for (i = 0; i < N; i++) {
		ev[2 * i] = (struct trace_event){1000000 + i * 900, 1 + i % 7, 55,
						 TRACE_EV_POLL_BEGIN};
		ev[2 * i + 1] = ev[2 * i];
		ev[2 * i + 1].time += 300 + i % 11;
		ev[2 * i + 1].type = TRACE_EV_POLL_END;
	}
	cr_assert_eq(trace_writer__state(w, ev, 2 * N), 0);
	cr_assert_eq(trace_writer__events(w, ev, 2 * N), 0);
	trace_file_finish(&f, NULL);
	buf = get_file(f.path, &len);
	nchunks = chunk_ends(buf, len, ends, types, 64);
	for (i = 0; i < nchunks; i++) {
		size_t raw = le32(buf + (i ? ends[i - 1] : 16) + 12);

		raw_polls += types[i] == TRACE_CHUNK_POLLS ? raw : 0;
		raw_state += types[i] == TRACE_CHUNK_STATE ? raw : 0;
	}
	cr_expect_gt(raw_state, 0);
	cr_expect_lt(raw_polls * 4, raw_state * 3, "POLLS %zu bytes, STATE %zu",
		     raw_polls, raw_state);
	free(buf);
	tmp_remove(f.path);
	free(ev);
}

/* ---- samples and events left on disk ------------------------------------ */

#define NO_RECORDS (TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS)

struct collected {
	struct trace_sample s[64];
	struct trace_event e[64];
	size_t ns, ne, calls;
};

static int collect_samples(void *ctx, const struct trace_sample *s, size_t n)
{
	struct collected *c = ctx;

	for (size_t i = 0; i < n && c->ns < 64; i++)
		c->s[c->ns++] = s[i];
	c->calls++;
	return 0;
}

static int collect_events(void *ctx, const struct trace_event *e, size_t n)
{
	struct collected *c = ctx;

	for (size_t i = 0; i < n && c->ne < 64; i++)
		c->e[c->ne++] = e[i];
	return 0;
}

static int stop_at_once(void *ctx, const struct trace_sample *s, size_t n)
{
	return 42;
}

/* Walk both; the first error, if any. */
static int walk_all(const struct trace *t, struct collected *c)
{
	int rc = trace__for_each_sample(t, collect_samples, c);

	return rc ? rc : trace__for_each_event(t, collect_events, c);
}

Test(trace, walks_from_the_file_see_what_trace_read_loads)
{
	size_t n;
	char *path = small_trace_file(1, &n);
	struct trace *full, *t;
	struct collected cf = {0}, ct = {0};
	const char *msg;

	cr_assert_eq(trace__read(path, &full, &msg), 0);
	cr_assert_eq(trace__read_opts(path, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS,
				      &t, &msg),
		     0, "%s", msg);
	cr_assert_null(t->samples);
	cr_assert_null(t->events);
	cr_assert_eq(t->nsamples, full->nsamples);
	cr_assert_eq(t->nevents, full->nevents);
	cr_assert_eq(t->nstacks, full->nstacks);
	cr_assert_eq(t->nswitches, full->nswitches);
	cr_assert_eq(t->complete, 1);
	cr_assert_eq(t->chunks, full->chunks);
	/* twice: a walk can be repeated */
	for (int k = 0; k < 2; k++) {
		memset(&ct, 0, sizeof(ct));
		cr_assert_eq(walk_all(t, &ct), 0);
		cr_assert_eq(ct.ns, n);
		cr_assert_eq(ct.calls, 2, "one call per SAMPLES chunk");
		cr_assert_arr_eq(ct.s, full->samples, n * sizeof(*ct.s));
		cr_assert_eq(ct.ne, full->nevents);
		cr_assert_arr_eq(ct.e, full->events, ct.ne * sizeof(*ct.e));
		cr_assert_null(trace__error(t));
	}
	/* a loaded trace walks from memory, the same records */
	cr_assert_eq(walk_all(full, &cf), 0);
	cr_assert_eq(cf.ns, n);
	cr_assert_arr_eq(cf.s, full->samples, n * sizeof(*cf.s));
	cr_assert_eq(trace__for_each_sample(t, stop_at_once, NULL), 42);
	trace__free(full);
	trace__free(t);
	tmp_remove(path);
}

static int collect_record_samples(void *ctx, const struct trace_sample *s, size_t n)
{
	struct collected *c = ctx;

	c->calls++;
	for (size_t i = 0; i < n && c->ns < 64; i++)
		c->s[c->ns++] = s[i];
	return 0;
}

Test(trace, a_walk_from_a_time_gives_the_records_from_it_on)
{
	size_t n;
	char *path = small_trace_file(1, &n);
	struct trace *full, *t;
	const char *msg;

	cr_assert_eq(trace__read(path, &full, &msg), 0);
	cr_assert_eq(trace__read_opts(path, TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS,
				      &t, &msg),
		     0, "%s", msg);
	cr_assert_eq(trace__seekable(t), 1, "its chunks are indexed, on disk");
	cr_assert_eq(trace__seekable(full), 0, "all in memory");
	for (size_t k = 0; k <= full->nsamples; k++) {
		uint64_t from = k < full->nsamples ? full->samples[k].time : UINT64_MAX;
		struct collected c = {0};
		size_t want = 0, ne = 0;

		cr_assert_eq(trace__for_each_record_from(t, from, collect_record_samples,
							 collect_events, &c),
			     0);
		for (size_t i = 0; i < full->nsamples; i++)
			if (full->samples[i].time >= from)
				cr_assert_eq(memcmp(&c.s[want++], &full->samples[i],
						    sizeof(c.s[0])),
					     0, "from %" PRIu64 ": sample %zu", from, i);
		cr_assert_eq(c.ns, want, "from %" PRIu64, from);
		for (size_t i = 0; i < full->nevents; i++)
			if (full->events[i].time >= from)
				cr_assert_eq(memcmp(&c.e[ne++], &full->events[i],
						    sizeof(c.e[0])),
					     0);
		cr_assert_eq(c.ne, ne, "from %" PRIu64, from);
	}
	trace__free(full);
	trace__free(t);
	tmp_remove(path);
}

Test(trace, walks_of_a_cut_file_stop_at_its_last_whole_chunk)
{
	struct small_file sf;
	size_t cut, ends[64];
	struct trace *full, *t;
	const char *msg;

	small_file_open(&sf, 1);
	cr_assert_geq(chunk_ends(sf.buf, sf.len, ends, NULL, 64), 1);
	cr_assert_eq(trace__read(sf.path, &full, &msg), 0);
	/* from the first whole chunk on (before it nothing is read) */
	for (cut = ends[0]; cut <= sf.len; cut++) {
		struct trace *ref;
		struct collected c = {0};

		put_file(sf.scratch, sf.buf, cut);
		cr_assert_eq(trace__read(sf.scratch, &ref, &msg), 0);
		cr_assert_eq(trace__read_opts(sf.scratch, NO_RECORDS, &t, &msg), 0,
			     "cut %zu", cut);
		cr_assert_eq(t->chunks, ref->chunks);
		cr_assert_eq(t->complete, ref->complete);
		cr_assert_eq(walk_all(t, &c), 0, "cut %zu", cut);
		cr_assert_eq(c.ns, ref->nsamples);
		cr_assert_eq(t->nsamples, ref->nsamples);
		cr_assert_eq(c.ne, ref->nevents);
		if (c.ns)
			cr_assert_arr_eq(c.s, ref->samples, c.ns * sizeof(*c.s));
		trace__free(t);
		trace__free(ref);
	}
	trace__free(full);
	small_file_release(&sf);
}

Test(trace, corruption_of_a_chunk_left_on_disk_is_found_with_trace_read_message)
{
	struct small_file sf;
	size_t off;
	struct trace *t;
	const char *msg, *want;
	char wantbuf[256];

	small_file_open(&sf, 1);
	for (off = 16; off < sf.len; off++) {
		struct collected c = {0};
		int rc;

		put_flipped(&sf, off);
		cr_assert_eq(trace__read(sf.scratch, &t, &want), -EBADMSG);
		snprintf(wantbuf, sizeof(wantbuf), "%s", want);
		msg = NULL;
		rc = trace__read_opts(sf.scratch, NO_RECORDS, &t, &msg);
		if (rc) {
			cr_assert_eq(rc, -EBADMSG);
			cr_assert_str_eq(msg, wantbuf, "flip at %zu", off);
			continue;
		}
		/* only what decoding finds is left for the walk */
		cr_assert_eq(walk_all(t, &c), -EBADMSG, "flip at %zu", off);
		cr_assert_str_eq(trace__error(t), wantbuf, "flip at %zu", off);
		trace__free(t);
	}
	small_file_release(&sf);
}

Test(trace, walked_samples_naming_undefined_stacks_are_corruption)
{
	struct small_file sf;
	size_t nch, i, from = 0;
	size_t ends[64];
	struct trace *t;
	struct collected c = {0};
	const char *msg;

	small_file_open(&sf, 0);
	i = first_chunk(&sf, TRACE_CHUNK_STACKS, ends, &nch, &from);
	/* swap the first STACKS chunk and the SAMPLES chunk after it: those
	 * samples name stacks not defined yet */
	cr_assert_lt(i + 1, nch);
	cr_assert_eq(le32(sf.buf + ends[i] + 4), TRACE_CHUNK_SAMPLES);
	{
		size_t a = ends[i] - from, b = ends[i + 1] - ends[i];
		uint8_t *tmp = malloc(a + b);

		cr_assert_not_null(tmp);
		memcpy(tmp, sf.buf + ends[i], b);
		memcpy(tmp + b, sf.buf + from, a);
		memcpy(sf.buf + from, tmp, a + b);
		free(tmp);
	}
	put_file(sf.path, sf.buf, sf.len);
	cr_assert_eq(trace__read(sf.path, &t, &msg), -EBADMSG);
	cr_assert(strstr(msg, "undefined stack"), "%s", msg);
	cr_assert_eq(trace__read_opts(sf.path,
				      TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS, &t,
				      &msg),
		     0, "%s", msg);
	cr_assert_eq(trace__for_each_sample(t, collect_samples, &c), -EBADMSG);
	cr_assert(strstr(trace__error(t), "undefined stack"), "%s", trace__error(t));
	trace__free(t);
	small_file_release(&sf);
}

/* ---- inline frames ------------------------------------------------------- */

/* Frames 0x1000 and 0x2000 have code inlined at them; the rest not. */
static int resolve_inl(void *ctx, uint64_t addr, struct trace_frame *out)
{
	static const char *const a[] = {"inner_a", "outer_a"}, *const b[] = {"only_b"};

	resolve(ctx, addr, out);
	if (addr == 0x1000) {
		out->inl = a;
		out->ninl = 2;
	} else if (addr == 0x2000) {
		out->inl = b;
		out->ninl = 1;
	}
	return 0;
}

/* Stacks [0x1000 0x2000 0x3000] and [0x2000 0x4000], one sample each;
 * @with_samples 0 leaves samples out. */
static char *inline_trace(int with_samples)
{
	static const uint64_t s0[] = {0x1000, 0x2000, 0x3000}, s1[] = {0x2000, 0x4000};
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	struct trace_sample smp = {.time = 1, .tid = 1, .weight = 1, .sampler = 1};

	cr_assert_eq(trace_writer__stack(w, s0, 3, &smp.stack), 0);
	if (with_samples)
		cr_assert_eq(trace_writer__sample(w, &smp), 0);
	cr_assert_eq(trace_writer__stack(w, s1, 2, &smp.stack), 0);
	if (with_samples)
		cr_assert_eq(trace_writer__sample(w, &smp), 0);
	trace_file_finish(&f, resolve_inl);
	return f.path;
}

Test(trace, inline_chains_become_frames_of_their_own)
{
	static const char *const want0[] = {"inner_a", "outer_a", "fn_1000",
					    "only_b",  "fn_2000", "fn_3000"};
	char *path = inline_trace(1);
	struct trace *t;
	unsigned int i;

	cr_assert_eq(trace__read(path, &t, NULL), 0);
	cr_assert_eq(t->nstacks, 2);
	cr_assert_eq(t->nframes, 4 + 3);
	/* the recorded frames keep their ids */
	cr_expect_eq(t->frames[0].addr, 0x1000);
	cr_expect_eq(t->frames[3].addr, 0x4000);
	cr_assert_eq(t->stack_off[1] - t->stack_off[0], 6);
	for (i = 0; i < 6; i++)
		cr_expect_str_eq(frame_sym(t, 0, i), want0[i]);
	cr_expect_eq(t->frames[t->stack_frames[t->stack_off[0]]].inlined, 1);
	cr_expect_eq(t->frames[t->stack_frames[t->stack_off[0] + 2]].inlined, 0);
	/* an inlined frame sits at the address of the frame it is inlined in */
	cr_expect_eq(frame_addr(t, 0, 1), 0x1000);
	cr_expect_str_eq(t->frames[t->stack_frames[t->stack_off[0] + 1]].module, "demo");
	cr_assert_eq(t->stack_off[2] - t->stack_off[1], 3);
	cr_expect_str_eq(frame_sym(t, 1, 0), "only_b");
	cr_expect_str_eq(frame_sym(t, 1, 2), "fn_4000");
	cr_expect_eq(t->nsamples, 2);
	trace__free(t);

	cr_assert_eq(trace__read_opts(path, TRACE_READ_NO_INLINE, &t, NULL), 0);
	cr_assert_eq(t->nframes, 4);
	cr_assert_eq(t->stack_off[1] - t->stack_off[0], 3);
	cr_expect_str_eq(frame_sym(t, 0, 0), "fn_1000");
	cr_expect_eq(t->frames[0].inlined, 0);
	trace__free(t);
	tmp_remove(path);
}

/* The file at @path with its one chunk of @type dropped (@retype 0) or
 * given type @retype; @path. */
static char *retype_chunk(char *path, uint32_t type, uint32_t retype)
{
	size_t len, nch, i, out = 16, seen = 0;
	uint8_t *buf = get_file(path, &len), *nb = malloc(len);
	size_t ends[64];
	uint32_t types[64];

	cr_assert_not_null(nb);
	nch = chunk_ends(buf, len, ends, types, 64);
	memcpy(nb, buf, 16);
	for (i = 0; i < nch; i++) {
		size_t from = i ? ends[i - 1] : 16;

		if (types[i] == type) {
			seen++;
			if (!retype)
				continue;
		}
		memcpy(nb + out, buf + from, ends[i] - from);
		if (types[i] == type) {
			uint8_t *h = nb + out;
			uint32_t check;

			for (int k = 0; k < 4; k++)
				h[4 + k] = (uint8_t)(retype >> (8 * k));
			check = lib_xxh32(h, 24, 0);
			for (int k = 0; k < 4; k++)
				h[24 + k] = (uint8_t)(check >> (8 * k));
		}
		out += ends[i] - from;
	}
	cr_assert_eq(seen, 1);
	put_file(path, nb, out);
	free(buf);
	free(nb);
	return path;
}

Test(trace, inlines_naming_undefined_frames_are_corruption)
{
	char *path = inline_trace(0);
	struct trace *t;
	const char *msg;

	/* drop the STACKS and FRAMES chunks: the INLINES chunk is left
	 * naming frames no chunk defined */
	retype_chunk(path, TRACE_CHUNK_STACKS, 0);
	retype_chunk(path, TRACE_CHUNK_FRAMES, 0);
	cr_assert_eq(trace__read(path, &t, &msg), -EBADMSG);
	cr_assert(strstr(msg, "INLINES chunk names undefined frames"), "%s", msg);
	tmp_remove(path);
}

/* 0x1000 has a chain of 300 functions, deep_0 the innermost. */
static int resolve_deep(void *ctx, uint64_t addr, struct trace_frame *out)
{
	static char names[300][16];
	static const char *chain[300];

	resolve(ctx, addr, out);
	if (addr != 0x1000)
		return 0;
	for (int i = 0; i < 300; i++) {
		snprintf(names[i], sizeof(names[i]), "deep_%d", i);
		chain[i] = names[i];
	}
	out->inl = chain;
	out->ninl = 300;
	return 0;
}

Test(trace, inline_chains_over_the_limit_keep_their_innermost)
{
	static const uint64_t ips[] = {0x1000, 0x2000};
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	struct trace *t;
	uint32_t id;
	char want[16];

	cr_assert_eq(trace_writer__stack(w, ips, 2, &id), 0);
	trace_file_finish(&f, resolve_deep);
	cr_assert_eq(trace__read(f.path, &t, NULL), 0);
	/* the innermost inlined frames, then the frame, then 0x2000 */
	cr_assert_eq(stack_depth(t, 0), TRACE_MAX_INLINE + 2);
	cr_expect_str_eq(frame_sym(t, 0, 0), "deep_0");
	snprintf(want, sizeof(want), "deep_%d", TRACE_MAX_INLINE - 1);
	cr_expect_str_eq(frame_sym(t, 0, TRACE_MAX_INLINE - 1), want);
	cr_expect_str_eq(frame_sym(t, 0, TRACE_MAX_INLINE), "fn_1000");
	cr_expect_eq(t->frames[frame_id(t, 0, TRACE_MAX_INLINE)].inlined, 0);
	trace__free(t);
	tmp_remove(f.path);
}

/* inline_trace()'s file with its INLINES chunk dropped (@retype 0) or
 * turned into a chunk type this reader does not know (a later format's,
 * as an older reader sees INLINES). */
static char *inline_trace_without_inlines(uint32_t retype)
{
	return retype_chunk(inline_trace(1), TRACE_CHUNK_INLINES, retype);
}

Test(trace, trace_without_inlines_or_unknown_to_the_reader_reads_as_recorded)
{
	uint32_t retype[] = {0, 99};

	for (unsigned int k = 0; k < 2; k++) {
		char *path = inline_trace_without_inlines(retype[k]);
		struct trace *t;
		const char *msg;

		cr_assert_eq(trace__read(path, &t, &msg), 0, "%s", msg);
		cr_expect_eq(t->complete, 1);
		cr_expect_eq(t->nframes, 4);
		cr_assert_eq(stack_depth(t, 0), 3);
		cr_expect_str_eq(frame_sym(t, 0, 0), "fn_1000");
		cr_expect_str_eq(frame_sym(t, 0, 1), "fn_2000");
		cr_expect_eq(t->nsamples, 2);
		for (size_t i = 0; i < t->nframes; i++)
			cr_expect_eq(t->frames[i].inlined, 0);
		trace__free(t);
		tmp_remove(path);
	}
}

/* A hand-made chunk payload of @count records. */
struct raw {
	const uint8_t *p;
	size_t len;
	uint32_t count;
};

#define RAW(a, cnt) ((struct raw){a, sizeof(a), cnt})

/* An END chunk's payload: seven zero varints. */
static const uint8_t zero_end[7] = {0};

/* crafted_open() of a trace with three frames (0x10, 0x20, 0x30) in one
 * stack [0 1 2]. */
static FILE *crafted_three_frames(char **path)
{
	/* first frame 0, 3 frames, first stack 0, addr deltas 0x10 (zigzag
	 * 0x20), depth 3, id deltas 0 +1 +1 */
	static const uint8_t stacks[] = {0, 3, 0, 0x20, 0x20, 0x20, 3, 0, 2, 2};

	return crafted_open(path, stacks, sizeof(stacks));
}

/* A trace with three frames (0x10, 0x20, 0x30) in one stack [0 1 2], the
 * INLINES chunks @inl (@n of them), then END. Returns trace__read()'s
 * result. */
static int read_crafted_inlines(const struct raw *inl, int n, struct trace **t,
				const char **msg)
{
	char *path;
	FILE *f = crafted_three_frames(&path);

	for (int i = 0; i < n; i++)
		put_chunk(f, TRACE_CHUNK_INLINES, inl[i].count, inl[i].p, inl[i].len);
	return crafted_read(f, path, zero_end, sizeof(zero_end), 0, t, msg);
}

Test(trace, crafted_inline_payloads_are_checked)
{
	/* strings "a" "b"; frames 0 and 2; counts 2 and 1; names a b, b */
	static const uint8_t good[] = {2, 1, 'a', 1, 'b', 0, 2, 2, 1, 0, 1, 1};
	static const uint8_t first[] = {2, 1, 'a', 1, 'b', 0, 2, 0, 1};
	static const uint8_t last[] = {1, 1, 'c', 2, 1, 0};
	static const uint8_t again[] = {1, 1, 'c', 0, 1, 0};
	static const uint8_t zero_count[] = {2, 1, 'a', 1, 'b', 0, 0};
	static const uint8_t bad_name[] = {2, 1, 'a', 1, 'b', 0, 1, 2};
	static const uint8_t undefined[] = {2, 1, 'a', 1, 'b', 3, 1, 0};
	static const uint8_t twice[] = {2, 1, 'a', 1, 'b', 1, 0, 1, 1, 0, 0};
	static const uint8_t short_names[] = {2, 1, 'a', 1, 'b', 0, 2, 0};
	uint8_t deep[16 + 2 * (TRACE_MAX_INLINE + 1)], *p = deep;
	static const char *const want[] = {"a", "b", "fn", "fn", "b", "fn"};
	struct raw two[] = {RAW(first, 1), RAW(last, 1)}, deep_raw;
	struct raw dup[] = {RAW(first, 1), RAW(again, 1)};
	struct trace *t;
	const char *msg;
	int i;

	cr_assert_eq(read_crafted_inlines(&RAW(good, 2), 1, &t, &msg), 0, "%s", msg);
	cr_assert_eq(t->nframes, 3 + 3);
	cr_assert_eq(stack_depth(t, 0), 6);
	for (i = 0; i < 6; i++) {
		const struct trace_frame *fr = &t->frames[t->stack_frames[i]];

		cr_expect_eq(fr->inlined, strcmp(want[i], "fn") != 0, "frame %d", i);
		if (fr->inlined)
			cr_expect_str_eq(fr->sym, want[i]);
	}
	cr_expect_eq(frame_addr(t, 0, 1), 0x10);
	cr_expect_eq(frame_addr(t, 0, 4), 0x30);
	trace__free(t);

	/* chains of one frame each in two chunks, in frame order */
	cr_assert_eq(read_crafted_inlines(two, 2, &t, &msg), 0, "%s", msg);
	cr_assert_eq(stack_depth(t, 0), 6);
	cr_expect_str_eq(frame_sym(t, 0, 0), "a");
	cr_expect_str_eq(frame_sym(t, 0, 1), "b");
	cr_expect_str_eq(frame_sym(t, 0, 4), "c");
	trace__free(t);

	cr_assert_eq(read_crafted_inlines(dup, 2, &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "a frame twice"), "%s", msg);
	cr_assert_eq(read_crafted_inlines(&RAW(twice, 2), 1, &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "a frame twice"), "%s", msg);
	cr_assert_eq(read_crafted_inlines(&RAW(zero_count, 1), 1, &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "bad inline count"), "%s", msg);
	cr_assert_eq(read_crafted_inlines(&RAW(bad_name, 1), 1, &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "bad inline name"), "%s", msg);
	cr_assert_eq(read_crafted_inlines(&RAW(undefined, 1), 1, &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "undefined frames"), "%s", msg);
	/* (a count the bytes left cannot hold is already a bad count) */
	cr_assert_eq(read_crafted_inlines(&RAW(short_names, 1), 1, &t, &msg), -EBADMSG);

	/* one function more than a chain may hold */
	*p++ = 1;
	*p++ = 1;
	*p++ = 'a';
	*p++ = 0;
	*p++ = ((TRACE_MAX_INLINE + 1) & 0x7f) | 0x80;
	*p++ = (TRACE_MAX_INLINE + 1) >> 7;
	for (i = 0; i <= TRACE_MAX_INLINE; i++)
		*p++ = 0;
	deep_raw = (struct raw){deep, (size_t)(p - deep), 1};
	cr_assert_eq(read_crafted_inlines(&deep_raw, 1, &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "bad inline count"), "%s", msg);
}

/* ---- source lines -------------------------------------------------------- */

/* inline_trace()'s frames with source lines: 0x1000's code is inner_a's
 * (inner.h:10), inlined at outer.h:20 into outer_a, inlined at fn.c:11
 * into fn_1000 (which starts at line 5); 0x2000 has only_b's line, its
 * call site unknown; 0x3000 a line of its own; 0x4000 none. */
static int resolve_lines(void *ctx, uint64_t addr, struct trace_frame *out)
{
	static const struct trace_inline_src a[] = {{"outer.h", 20, 30},
						    {"fn.c", 11, 40}},
					     b[] = {{NULL, 0, 0}};

	resolve_inl(ctx, addr, out);
	if (addr == 0x1000) {
		*out = (struct trace_frame){.addr = out->addr,
					    .sym = out->sym,
					    .module = out->module,
					    .offset = out->offset,
					    .inl = out->inl,
					    .ninl = out->ninl,
					    .file = "inner.h",
					    .line = 10,
					    .start_line = 5,
					    .inl_src = a};
	} else if (addr == 0x2000) {
		out->file = "b.h";
		out->line = 7;
		out->inl_src = b;
	} else if (addr == 0x3000) {
		out->file = "/src/c.c";
		out->line = 3;
		out->start_line = 2;
	}
	return 0;
}

static char *lines_trace(void)
{
	static const uint64_t s0[] = {0x1000, 0x2000, 0x3000}, s1[] = {0x2000, 0x4000};
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	uint32_t id;

	cr_assert_eq(trace_writer__stack(w, s0, 3, &id), 0);
	cr_assert_eq(trace_writer__stack(w, s1, 2, &id), 0);
	trace_file_finish(&f, resolve_lines);
	return f.path;
}

static void expect_line(const struct trace *t, unsigned int i, const char *sym,
			const char *file, uint32_t line, uint32_t start)
{
	const struct trace_frame *f = &t->frames[frame_id(t, 0, i)];

	cr_expect_str_eq(f->sym, sym, "frame %u", i);
	if (file)
		cr_expect(f->file && !strcmp(f->file, file), "frame %u: %s", i,
			  f->file ? f->file : "(null)");
	else
		cr_expect_null(f->file, "frame %u: %s", i, f->file);
	cr_expect_eq(f->line, line, "frame %u: line %u", i, f->line);
	cr_expect_eq(f->start_line, start, "frame %u: start %u", i, f->start_line);
}

Test(trace, source_lines_and_inline_call_sites_round_trip)
{
	char *path = lines_trace();
	struct trace *t;

	cr_assert_eq(trace__read(path, &t, NULL), 0);
	cr_assert_eq(stack_depth(t, 0), 6);
	/* each frame has the line in its own function */
	expect_line(t, 0, "inner_a", "inner.h", 10, 30);
	expect_line(t, 1, "outer_a", "outer.h", 20, 40);
	expect_line(t, 2, "fn_1000", "fn.c", 11, 5);
	expect_line(t, 3, "only_b", "b.h", 7, 0);
	expect_line(t, 4, "fn_2000", NULL, 0, 0); /* call site not known */
	expect_line(t, 5, "fn_3000", "/src/c.c", 3, 2);
	cr_expect_null(t->frames[3].file); /* 0x4000 */
	trace__free(t);

	/* as recorded: the address's own line */
	cr_assert_eq(trace__read_opts(path, TRACE_READ_NO_INLINE, &t, NULL), 0);
	cr_assert_eq(stack_depth(t, 0), 3);
	expect_line(t, 0, "fn_1000", "inner.h", 10, 5);
	expect_line(t, 1, "fn_2000", "b.h", 7, 0);
	trace__free(t);
	tmp_remove(path);
}

Test(trace, lines_unknown_to_the_reader_or_absent_read_without_lines)
{
	uint32_t retype[] = {0, 99};

	for (unsigned int k = 0; k < 2; k++) {
		char *path = retype_chunk(lines_trace(), TRACE_CHUNK_LINES, retype[k]);
		struct trace *t;
		const char *msg;

		cr_assert_eq(trace__read(path, &t, &msg), 0, "%s", msg);
		cr_expect_eq(t->complete, 1);
		cr_assert_eq(stack_depth(t, 0), 6);
		cr_expect_str_eq(frame_sym(t, 0, 1), "outer_a");
		for (size_t i = 0; i < t->nframes; i++) {
			cr_expect_null(t->frames[i].file);
			cr_expect_eq(t->frames[i].line, 0);
			cr_expect_eq(t->frames[i].start_line, 0);
		}
		trace__free(t);
		tmp_remove(path);
	}
}

/* A trace with frames 0x10, 0x20, 0x30 in one stack, the LINES chunk
 * @lines, then END; trace__read_opts()'s result (no inline expansion). */
static int read_crafted_lines(const struct raw *lines, struct trace **t, const char **msg)
{
	char *path;
	FILE *f = crafted_three_frames(&path);

	put_chunk(f, TRACE_CHUNK_LINES, lines->count, lines->p, lines->len);
	return crafted_read(f, path, zero_end, sizeof(zero_end), TRACE_READ_NO_INLINE, t,
			    msg);
}

Test(trace, crafted_lines_payloads_are_checked)
{
	/* strings "a.c"; frames 0 and 2: files 1, 0; lines 7, 9; starts
	 * 1, 0; sites 0, 1: file 1, line 4, decl 2 */
	static const uint8_t good[] = {1, 3, 'a', '.', 'c', 0, 2, 1, 0,
				       7, 9, 1,	  0,   0,   1, 1, 4, 2};
	static const uint8_t undefined[] = {1, 3, 'a', '.', 'c', 3, 1, 7, 0, 0};
	static const uint8_t twice[] = {1, 3, 'a', '.', 'c', 1, 0, 1,
					1, 7, 7,   0,	0,   0, 0};
	static const uint8_t bad_file[] = {1, 3, 'a', '.', 'c', 0, 2, 7, 0, 0};
	static const uint8_t bad_sites[] = {1, 3, 'a', '.', 'c', 0, 1, 7, 0, 0x81, 0x02};
	static const uint8_t short_sites[] = {1, 3, 'a', '.', 'c', 0, 1,
					      7, 0, 2,	 1,   4,   2};
	struct trace *t;
	const char *msg;

	cr_assert_eq(read_crafted_lines(&RAW(good, 2), &t, &msg), 0, "%s", msg);
	cr_expect_str_eq(t->frames[0].file, "a.c");
	cr_expect_eq(t->frames[0].line, 7);
	cr_expect_eq(t->frames[0].start_line, 1);
	cr_expect_null(t->frames[1].file);
	cr_expect_null(t->frames[2].file);
	cr_expect_eq(t->frames[2].line, 9);
	trace__free(t);
	cr_assert_eq(read_crafted_lines(&RAW(undefined, 1), &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "undefined frames"), "%s", msg);
	cr_assert_eq(read_crafted_lines(&RAW(twice, 2), &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "a frame twice"), "%s", msg);
	cr_assert_eq(read_crafted_lines(&RAW(bad_file, 1), &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "bad line file"), "%s", msg);
	cr_assert_eq(read_crafted_lines(&RAW(bad_sites, 1), &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "bad inline site count"), "%s", msg);
	cr_assert_eq(read_crafted_lines(&RAW(short_sites, 1), &t, &msg), -EBADMSG);
	cr_expect(strstr(msg, "truncated lines"), "%s", msg);
}

Test(trace, lean_sums_round_trip_with_their_entries)
{
	struct trace_file f;
	struct trace_writer *w = trace_file_open(&f);
	struct trace *t;
	size_t i, n = 70000; /* more than one chunk's worth */

	for (i = 0; i < n; i++) {
		struct trace_sum_ent e[3] = {
			{.which = 0,
			 .bucket = (uint8_t)(i % TRACE_SUM_BUCKETS),
			 .count = 5},
			{.which = 1, .bucket = 143, .count = (uint32_t)i},
			{.which = 1, .bucket = 0, .count = 1},
		};
		struct trace_sum s = {.time = 1000000 + i * 10,
				      .task = 1 + i % 17,
				      .tid = 300,
				      .polls = 5,
				      .delays = 2,
				      .nent = i % 4 ? 3 : 1,
				      .poll_total = i,
				      .delay_total = 2 * i,
				      .poll_max = 7,
				      .delay_max = UINT64_MAX / 3};

		cr_assert_eq(trace_writer__sum(w, &s, e), 0);
	}
	trace_file_finish(&f, resolve);
	t = trace_file_read(&f);
	cr_assert_eq(t->nsums, n);
	/* their tasks are known */
	cr_assert_eq(t->ntasks, 17);
	for (i = 0; i < n; i++) {
		const struct trace_sum *s = &t->sums[i];
		const struct trace_sum_ent *e = &t->sum_ents[s->ent];

		cr_assert_eq(s->time, 1000000 + i * 10);
		cr_assert_eq(s->task, 1 + i % 17);
		cr_assert_eq(s->polls, 5);
		cr_assert_eq(s->delay_total, 2 * i);
		cr_assert_eq(s->delay_max, UINT64_MAX / 3);
		cr_assert_eq(s->nent, i % 4 ? 3 : 1);
		cr_assert_eq(e[0].bucket, i % TRACE_SUM_BUCKETS);
		cr_assert_eq(e[0].count, 5);
		if (s->nent > 1) {
			cr_assert_eq(e[1].which, 1);
			cr_assert_eq(e[1].bucket, 143);
			cr_assert_eq(e[1].count, i);
		}
	}
	trace__free(t);
	tmp_remove(f.path);
}
