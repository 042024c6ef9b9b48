// SPDX-License-Identifier: MIT
/*
 * trace_writer.c - write a d9prof trace (layout: trace_format.h).
 *
 * The writer interns addresses into frame ids and callchains into stack ids,
 * buffers records per chunk type and turns a buffer into a chunk when it
 * holds CHUNK_RECORDS records (or on flush). Interning is on the recorder's
 * per-sample path: a known callchain costs one hash over its addresses and
 * one memcmp; only a new one touches the frame map.
 *
 * Shim events are the volume (millions a second from a poll-heavy runtime),
 * so they are encoded as they arrive, straight into one buffer per column
 * of the EVENTS payload, a batch at a time; a chunk is the four columns
 * concatenated. Records that come by the million are compressed at a fast
 * zstd level (ZSTD_LEVEL_FAST: measured on the demo's events, level 1 is
 * 2.7x faster than 3 for 10% more bytes; negative levels gain little more
 * speed for 25-50% more bytes); the rest at ZSTD_LEVEL.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "lib/hash.h"
#include "lib/map.h"
#include "lib/strset.h"
#include "trace/trace.h"
#include "trace/trace_format.h"

#define CHUNK_RECORDS	 65536		  /* samples/events/stacks/frames per chunk */
#define CHUNK_BYTES	 (1u << 20)	  /* meta/threads/tasks/stack ids per chunk */
#define FRAMES_STR_BYTES (64u << 20)	  /* string table of one FRAMES chunk */
#define MAX_STRING	 (16u << 20)	  /* one meta value, name or symbol */
#define MAX_DEPTH	 (1u << 20)	  /* addresses in one callchain */
#define MAX_IDS		 (UINT32_MAX - 1) /* ids are u32; stack_tab stores id + 1 */
#define ZSTD_LEVEL	 3		  /* meta, names, stacks, frames */
#define ZSTD_LEVEL_FAST	 1		  /* samples, events, switches */

struct bytes {
	uint8_t *p;
	size_t len;
	size_t cap;
};

struct stack_slot {
	uint32_t hash; /* low bits of the callchain hash */
	uint32_t id1;  /* stack id + 1; 0 = empty */
};

struct trace_writer {
	int fd;
	int err; /* sticky write error: the file is unusable */
	int finished;
	ZSTD_CCtx *cctx;

	/* the tasks samples and switches carry, each put in TASKS once */
	struct lib_map tasks_seen;

	/* frames: id -> address, address -> id */
	uint64_t *frame_addr;
	size_t nframes, frame_cap;
	struct lib_map frame_ids; /* address -> frame id */
	size_t frames_written;	  /* frames below this are in a STACKS chunk */

	/* stacks: every interned callchain as addresses (for lookup), and
	 * the frame ids of those not yet written */
	uint64_t *stack_ips;
	size_t nips, ips_cap;
	size_t *stack_off; /* nstacks + 1 offsets into stack_ips */
	size_t nstacks, off_cap;
	struct stack_slot *stack_tab;
	size_t stack_tab_cap; /* power of two */
	size_t stacks_written;
	uint32_t *pend_ids;
	size_t npend_ids, pend_cap;

	struct trace_sample *samples;
	size_t nsamples, samples_cap;
	/* events, delta/varint-encoded on arrival, one buffer per column;
	 * the delta bases restart at 0 in every chunk. nevents counts the
	 * events, nrecs the records they became (a whole poll is one, its
	 * length in ev_len); crec: one batch's records */
	struct bytes ev_time, ev_task, ev_tid, ev_type, ev_len;
	uint64_t ev_prev_time, ev_prev_task;
	uint32_t ev_prev_tid;
	size_t nevents, nrecs;
	struct trace_event *crec;
	size_t crec_cap;
	struct trace_switch *switches; /* hold: first of w->holds */
	size_t nswitches, switches_cap;
	struct trace_hold *holds;
	size_t nholds, holds_cap;
	struct bytes meta, threads, tasks, comms, sums;
	size_t nmeta, nthreads, ntasks, ncomms, nsums;
	/* span records, their strings as indices + 1 (0: NULL) into
	 * span_str, the string table of the chunk they go into */
	struct span_row {
		uint64_t time, id, value;
		uint32_t tid, type;
		uint32_t name, text;
	} * spans;
	size_t nspans, spans_cap;
	struct strtab *span_str;
	int span_state; /* trace_writer__span_state() queues: a full chunk is
			 * SPAN_STATE too */

	struct bytes raw; /* payload being encoded */
	struct bytes out; /* chunk header + compressed payload */

	uint64_t total_samples, total_events, total_switches;
	uint64_t min_time, max_time;
	uint64_t ev_lo, ev_hi; /* times of the events chunk being filled */
	/* the times of the samples and events chunks written since the
	 * last INDEX chunk, in order */
	struct idx_ent {
		uint64_t lo, hi;
	} * idx;
	size_t nidx, idx_cap;
	struct trace_tap tap; /* all NULL: none */
};

/* ---- byte buffers ------------------------------------------------------- */

static int write_spans(struct trace_writer *w);
static int write_spans_as(struct trace_writer *w, uint32_t type);
static void strtab_free(struct strtab *st);

static __attribute__((noinline)) uint8_t *reserve_grow(struct bytes *b, size_t n)
{
	if (n > SIZE_MAX - b->len)
		return NULL;
	if (LIB_GROW(b->p, b->cap, b->len + n))
		return NULL;
	return b->p + b->len;
}

/* Room for @n more bytes at b->p + b->len, or NULL. */
static inline uint8_t *reserve(struct bytes *b, size_t n)
{
	if (b->cap - b->len >= n)
		return b->p + b->len;
	return reserve_grow(b, n);
}

/* A string as its length + @bias, then its bytes. */
static int put_string_biased(struct bytes *b, const char *s, size_t len, uint64_t bias)
{
	uint8_t *p = reserve(b, TRACE_VARINT_MAX + len);

	if (!p)
		return -ENOMEM;
	p = put_varint(p, len + bias);
	memcpy(p, s, len);
	b->len = (size_t)(p - b->p) + len;
	return 0;
}

static int put_string(struct bytes *b, const char *s, size_t len)
{
	return put_string_biased(b, s, len, 0);
}

/* An optional string: 0 for "no name", else length + 1 and the bytes. */
static int put_opt_string(struct bytes *b, const char *s)
{
	uint8_t *p;

	if (s)
		return put_string_biased(b, s, strlen(s), 1);
	p = reserve(b, 1);
	if (!p)
		return -ENOMEM;
	*p = 0;
	b->len++;
	return 0;
}

static void bytes_release(struct bytes *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---- chunk output ------------------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = write(fd, p, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Compress w->raw into one chunk of @type and write it. A failed write
 * leaves a partial chunk, which readers take for a cut file; the error is
 * sticky because later chunks could not be read past it anyway. */
static int write_chunk(struct trace_writer *w, uint32_t type, size_t count)
{
	int level = type == TRACE_CHUNK_POLLS || type == TRACE_CHUNK_SAMPLES ||
				    type == TRACE_CHUNK_SWITCHES
			    ? ZSTD_LEVEL_FAST
			    : ZSTD_LEVEL;
	size_t bound = ZSTD_compressBound(w->raw.len);
	size_t csize;
	uint8_t *h;
	int err;

	if (w->raw.len > TRACE_MAX_RAW || count > UINT32_MAX)
		return -E2BIG; /* the limits above keep us far below */
	w->out.len = 0;
	h = reserve(&w->out, TRACE_CHUNK_HDR_SIZE + bound);
	if (!h)
		return -ENOMEM;
	csize = ZSTD_compressCCtx(w->cctx, h + TRACE_CHUNK_HDR_SIZE, bound,
				  w->raw.p ? w->raw.p : (const uint8_t *)"", w->raw.len,
				  level);
	if (ZSTD_isError(csize))
		return -ENOMEM; /* only allocation can fail with this bound */
	put_le32(h, TRACE_CHUNK_MAGIC);
	put_le32(h + 4, type);
	put_le32(h + 8, (uint32_t)csize);
	put_le32(h + 12, (uint32_t)w->raw.len);
	put_le32(h + 16, (uint32_t)count);
	put_le32(h + 20, lib_xxh32(h + TRACE_CHUNK_HDR_SIZE, csize, 0));
	put_le32(h + 24, lib_xxh32(h, 24, 0));
	err = write_all(w->fd, h, TRACE_CHUNK_HDR_SIZE + csize);
	if (err)
		w->err = err;
	return err;
}

/* Write a pre-encoded buffer (meta, threads, tasks) as a chunk. */
static int write_bytes_chunk(struct trace_writer *w, uint32_t type, struct bytes *b,
			     size_t *count)
{
	struct bytes tmp;
	int err;

	if (!*count)
		return 0;
	/* swap instead of copying: the buffer is the payload */
	tmp = w->raw;
	w->raw = *b;
	*b = tmp;
	err = write_chunk(w, type, *count);
	tmp = w->raw;
	w->raw = *b;
	*b = tmp;
	if (!err) {
		b->len = 0;
		*count = 0;
	}
	return err;
}

/* Start a chunk's payload: room for @max bytes at the start of w->raw,
 * or NULL. */
static uint8_t *payload_begin(struct trace_writer *w, size_t max)
{
	w->raw.len = 0;
	return reserve(&w->raw, max);
}

/* End the payload at @p and write it as a chunk of @type and @count. */
static int payload_write(struct trace_writer *w, const uint8_t *p, uint32_t type,
			 size_t count)
{
	w->raw.len = (size_t)(p - w->raw.p);
	return write_chunk(w, type, count);
}

/* One column of a payload: @expr of record @i for each i < @n, as
 * varints (a loop of its own per column: see encode_columns()). */
#define PUT_COLUMN(p, i, n, expr)                                                        \
	for ((i) = 0; (i) < (n); (i)++)                                                  \
	(p) = put_varint((p), (expr))

/* The task column of @n records of @size bytes at @recs (each with a u64
 * task at @off), written only where one of them has a task, as changes
 * from the record before: a reader from before the column keeps reading
 * chunks without one. */
static uint8_t *put_tasks(uint8_t *p, const void *recs, size_t size, size_t off, size_t n)
{
	const char *r = recs;
	uint64_t prev = 0;
	size_t i;

	for (i = 0; i < n && !*(const uint64_t *)(r + i * size + off); i++)
		;
	if (i == n)
		return p;
	for (i = 0; i < n; i++, r += size) {
		uint64_t t = *(const uint64_t *)(r + off);

		p = put_varint(p, zigzag(t - prev));
		prev = t;
	}
	return p;
}

static int write_stacks(struct trace_writer *w)
{
	size_t nf = w->nframes - w->frames_written;
	size_t ns = w->nstacks - w->stacks_written;
	uint64_t prev = 0;
	uint8_t *p;
	size_t i;
	int err;

	if (!nf && !ns)
		return 0;
	p = payload_begin(w, TRACE_VARINT_MAX * (3 + nf + ns + w->npend_ids));
	if (!p)
		return -ENOMEM;
	p = put_varint(p, w->frames_written);
	p = put_varint(p, nf);
	p = put_varint(p, w->stacks_written);
	for (i = w->frames_written; i < w->nframes; i++) {
		p = put_varint(p, zigzag(w->frame_addr[i] - prev));
		prev = w->frame_addr[i];
	}
	for (i = w->stacks_written; i < w->nstacks; i++)
		p = put_varint(p, w->stack_off[i + 1] - w->stack_off[i]);
	prev = 0;
	for (i = 0; i < w->npend_ids; i++) {
		p = put_varint(p, zigzag((uint64_t)w->pend_ids[i] - prev));
		prev = w->pend_ids[i];
	}
	err = payload_write(w, p, TRACE_CHUNK_STACKS, ns);
	if (err)
		return err;
	w->frames_written = w->nframes;
	w->stacks_written = w->nstacks;
	w->npend_ids = 0;
	return 0;
}

/* Start the payload of a SAMPLES or SWITCHES chunk: its records may only
 * name stacks that readers already know, so those go first; then room for
 * @max bytes at *@p. 0 or -errno. */
static int timed_begin(struct trace_writer *w, size_t max, uint8_t **p)
{
	int err = write_stacks(w);

	if (err)
		return err;
	*p = payload_begin(w, max);
	return *p ? 0 : -ENOMEM;
}

/* The time column of @n records of @size bytes at @recs, each starting
 * with its u64 time: the change from the record before. */
_Static_assert(offsetof(struct trace_sample, time) == 0, "a sample starts with its time");
_Static_assert(offsetof(struct trace_switch, time) == 0, "a switch starts with its time");
_Static_assert(offsetof(struct span_row, time) == 0, "a span row starts with its time");
static inline uint8_t *put_times(uint8_t *p, const void *recs, size_t size, size_t n)
{
	const char *r = recs;
	uint64_t prev = 0;

	for (size_t i = 0; i < n; i++, r += size) {
		uint64_t t = *(const uint64_t *)r;

		p = put_varint(p, zigzag(t - prev));
		prev = t;
	}
	return p;
}

/* A samples or events chunk of records from @lo to @hi was written: its
 * entry for the next INDEX chunk. */
static int idx_add(struct trace_writer *w, uint64_t lo, uint64_t hi)
{
	if (LIB_GROW(w->idx, w->idx_cap, w->nidx + 1))
		return -ENOMEM;
	w->idx[w->nidx++] = (struct idx_ent){lo, hi};
	return 0;
}

/* The INDEX chunk of the chunks written since the last one. */
static int write_index(struct trace_writer *w)
{
	uint64_t prev = 0;
	size_t i, n = w->nidx;
	uint8_t *p;
	int err;

	if (!n)
		return 0;
	p = payload_begin(w, 2 * TRACE_VARINT_MAX * n);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		p = put_varint(p, zigzag(w->idx[i].lo - prev));
		prev = w->idx[i].lo;
	}
	for (i = 0; i < n; i++)
		p = put_varint(p, w->idx[i].hi - w->idx[i].lo);
	err = payload_write(w, p, TRACE_CHUNK_INDEX, n);
	if (!err)
		w->nidx = 0;
	return err;
}

static int write_samples(struct trace_writer *w)
{
	const struct trace_sample *s = w->samples;
	size_t i, n = w->nsamples;
	uint8_t *p;
	int err;

	if (!n)
		return 0;
	err = timed_begin(w, TRACE_VARINT_MAX * 7 * n, &p);
	if (err)
		return err;
	p = put_times(p, s, sizeof(*s), n);
	PUT_COLUMN(p, i, n, s[i].tid);
	PUT_COLUMN(p, i, n, s[i].stack);
	PUT_COLUMN(p, i, n, s[i].weight);
	PUT_COLUMN(p, i, n, s[i].sampler);
	PUT_COLUMN(p, i, n, s[i].flags);
	p = put_tasks(p, s, sizeof(*s), offsetof(struct trace_sample, task), n);
	err = payload_write(w, p, TRACE_CHUNK_SAMPLES, n);
	if (!err) {
		uint64_t lo = UINT64_MAX, hi = 0;

		for (i = 0; i < n; i++) {
			lo = s[i].time < lo ? s[i].time : lo;
			hi = s[i].time > hi ? s[i].time : hi;
		}
		w->nsamples = 0;
		err = idx_add(w, lo, hi);
	}
	return err;
}

static void events_reset(struct trace_writer *w)
{
	w->ev_time.len = w->ev_task.len = w->ev_tid.len = w->ev_type.len = 0;
	w->ev_len.len = 0;
	w->ev_prev_time = w->ev_prev_task = 0;
	w->ev_prev_tid = 0;
	w->nevents = w->nrecs = 0;
	w->ev_lo = UINT64_MAX;
	w->ev_hi = 0;
}

/* The columns are the payload: concatenate them and write the chunk
 * (POLLS: the record count first, the lengths last; or STATE). */
static int write_events_as(struct trace_writer *w, uint32_t type)
{
	const struct bytes *col[] = {&w->ev_time, &w->ev_task, &w->ev_tid, &w->ev_type,
				     &w->ev_len};
	size_t i, len = TRACE_VARINT_MAX;
	uint8_t *p;
	int err;

	if (!w->nevents)
		return 0;
	for (i = 0; i < 5; i++)
		len += col[i]->len;
	p = payload_begin(w, len);
	if (!p)
		return -ENOMEM;
	if (type == TRACE_CHUNK_POLLS)
		p = put_varint(p, w->nrecs);
	for (i = 0; i < 5; i++) {
		if (col[i]->len) /* (an empty column may have no buffer) */
			memcpy(p, col[i]->p, col[i]->len);
		p += col[i]->len;
	}
	err = payload_write(w, p, type, w->nevents);
	if (!err)
		err = idx_add(w, w->ev_lo, w->ev_hi);
	if (!err)
		events_reset(w);
	return err;
}

static int write_events(struct trace_writer *w)
{
	return write_events_as(w, TRACE_CHUNK_POLLS);
}

static int write_switches(struct trace_writer *w)
{
	const struct trace_switch *s = w->switches;
	size_t i, n = w->nswitches;
	uint8_t *p;
	int err;

	if (!n)
		return 0;
	err = timed_begin(w, TRACE_VARINT_MAX * (9 * n + 2 * w->nholds), &p);
	if (err)
		return err;
	p = put_times(p, s, sizeof(*s), n);
	/* the interval's length (+ 1; 0: still off-CPU), not a second
	 * absolute time: small, and blocked intervals repeat lengths */
	PUT_COLUMN(p, i, n, s[i].time_in ? s[i].time_in - s[i].time + 1 : 0);
	PUT_COLUMN(p, i, n, s[i].tid);
	PUT_COLUMN(p, i, n, s[i].stack);
	PUT_COLUMN(p, i, n, s[i].preempted != 0);
	/* the blocked part (+ 1; 0: not known), like dur */
	PUT_COLUMN(p, i, n, s[i].runnable ? s[i].runnable - s[i].time + 1 : 0);
	PUT_COLUMN(p, i, n, s[i].holder);
	/* who held the CPU meanwhile */
	PUT_COLUMN(p, i, n, s[i].nhold);
	for (i = 0; i < n; i++)
		for (uint32_t k = 0; k < s[i].nhold; k++) {
			p = put_varint(p, w->holds[s[i].hold + k].tid);
			p = put_varint(p, w->holds[s[i].hold + k].ns);
		}
	p = put_tasks(p, s, sizeof(*s), offsetof(struct trace_switch, task), n);
	err = payload_write(w, p, TRACE_CHUNK_SWITCHES, n);
	if (!err)
		w->nswitches = w->nholds = 0;
	return err;
}

/* ---- public API --------------------------------------------------------- */

int trace_writer__new(int fd, struct trace_writer **out)
{
	struct trace_writer *w;
	uint8_t hdr[TRACE_FILE_HDR_SIZE];
	int err;

	*out = NULL;
	if (fd < 0)
		return -EBADF;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->min_time = UINT64_MAX;
	w->ev_lo = UINT64_MAX;
	w->cctx = ZSTD_createCCtx();
	w->stack_off = malloc(16 * sizeof(*w->stack_off));
	if (!w->cctx || !w->stack_off) {
		err = -ENOMEM;
		goto fail;
	}
	w->off_cap = 16;
	w->stack_off[0] = 0;

	memcpy(hdr, TRACE_MAGIC, 8);
	put_le32(hdr + 8, TRACE_VERSION);
	put_le32(hdr + 12, 0);
	err = write_all(fd, hdr, sizeof(hdr));
	if (err)
		goto fail;
	*out = w;
	return 0;
fail:
	trace_writer__free(w);
	return err;
}

/* Hand a queued record to @w's tap and to those chained after it */
/* clang-format off */
#define TAP(w, fn, ...)                                                            \
	for (const struct trace_tap *tap_ = &(w)->tap; tap_; tap_ = tap_->next)    \
		if (tap_->fn)                                                      \
			tap_->fn(tap_->ctx, __VA_ARGS__)
/* clang-format on */

#define WARM_BYTES (512u << 10) /* a second of a busy target's chunk */

int trace_writer__warm(struct trace_writer *w)
{
	size_t bound = ZSTD_compressBound(WARM_BYTES);
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint8_t *in = malloc(WARM_BYTES), *o;
	int err = 0;

	o = in ? reserve(&w->out, bound) : NULL;
	if (!o) {
		free(in);
		return -ENOMEM;
	}
	/* varint-like bytes, some repeated: matches to find, and misses */
	for (size_t i = 0; i < WARM_BYTES; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		in[i] = (uint8_t)(x & 0x3f);
	}
	if (ZSTD_isError(
		    ZSTD_compressCCtx(w->cctx, o, bound, in, WARM_BYTES, ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_compressCCtx(w->cctx, o, bound, in, WARM_BYTES,
					   ZSTD_LEVEL_FAST)))
		err = -ENOMEM;
	free(in);
	return err;
}

static int check_writable(const struct trace_writer *w)
{
	if (!w || w->finished)
		return -EINVAL;
	return w->err;
}

int trace_writer__meta(struct trace_writer *w, const char *key, const char *value)
{
	size_t klen, vlen, len0 = 0;
	int err = check_writable(w);

	if (err)
		return err;
	if (!key || !value)
		return -EINVAL;
	klen = strlen(key);
	vlen = strlen(value);
	if (klen > MAX_STRING || vlen > MAX_STRING)
		return -E2BIG;
	TAP(w, meta, key, value);
	len0 = w->meta.len;
	if (put_string(&w->meta, key, klen) || put_string(&w->meta, value, vlen)) {
		w->meta.len = len0;
		return -ENOMEM;
	}
	if (++w->nmeta >= CHUNK_RECORDS || w->meta.len >= CHUNK_BYTES)
		return write_bytes_chunk(w, TRACE_CHUNK_META, &w->meta, &w->nmeta);
	return 0;
}

static int queue_name(struct trace_writer *w, uint32_t type, struct bytes *b,
		      size_t *count, uint64_t id, const char *name)
{
	size_t len0 = b->len;
	uint8_t *p;
	int err = check_writable(w);

	if (err)
		return err;
	if (name && strlen(name) > MAX_STRING)
		return -E2BIG;
	p = reserve(b, TRACE_VARINT_MAX);
	if (!p)
		return -ENOMEM;
	b->len = (size_t)(put_varint(p, id) - b->p);
	if (put_opt_string(b, name)) {
		b->len = len0;
		return -ENOMEM;
	}
	if (++*count >= CHUNK_RECORDS || b->len >= CHUNK_BYTES)
		return write_bytes_chunk(w, type, b, count);
	return 0;
}

int trace_writer__thread(struct trace_writer *w, uint32_t tid, const char *name)
{
	if (!w)
		return -EINVAL;
	if (name)
		TAP(w, name, 0, tid, name);
	return queue_name(w, TRACE_CHUNK_THREADS, &w->threads, &w->nthreads, tid, name);
}

int trace_writer__comm(struct trace_writer *w, uint32_t tid, const char *name)
{
	if (!w)
		return -EINVAL;
	return queue_name(w, TRACE_CHUNK_COMMS, &w->comms, &w->ncomms, tid, name);
}

static int see_task(struct trace_writer *w, uint64_t task);

int trace_writer__sum(struct trace_writer *w, const struct trace_sum *s,
		      const struct trace_sum_ent *ent)
{
	const uint64_t v[] = {s->time,	    s->task,	   s->tid,	   s->polls,
			      s->delays,    s->poll_total, s->delay_total, s->poll_max,
			      s->delay_max, s->nent};
	uint8_t *p;
	size_t i;
	int err = check_writable(w);

	if (err)
		return err;
	if (s->nent > 2 * TRACE_SUM_BUCKETS)
		return -EINVAL;
	/* a task no sample or name made known yet */
	if ((err = see_task(w, s->task)))
		return err;
	TAP(w, sum, s, ent);
	p = reserve(&w->sums,
		    (sizeof(v) / sizeof(v[0]) + 2 * s->nent) * TRACE_VARINT_MAX);
	if (!p)
		return -ENOMEM;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		p = put_varint(p, v[i]);
	for (i = 0; i < s->nent; i++) {
		p = put_varint(p, (uint64_t)ent[i].which << 8 | ent[i].bucket);
		p = put_varint(p, ent[i].count);
	}
	w->sums.len = (size_t)(p - w->sums.p);
	if (++w->nsums >= CHUNK_RECORDS || w->sums.len >= CHUNK_BYTES)
		return write_bytes_chunk(w, TRACE_CHUNK_SUMS, &w->sums, &w->nsums);
	return 0;
}

int trace_writer__task(struct trace_writer *w, uint64_t id, const char *name)
{
	if (!w)
		return -EINVAL;
	if (name)
		TAP(w, name, 1, id, name);
	return queue_name(w, TRACE_CHUNK_TASKS, &w->tasks, &w->ntasks, id, name);
}

/* A task a sample or a switch carries: in TASKS the first time, so that a
 * reader knows every task before it walks the samples. */
static int see_task(struct trace_writer *w, uint64_t task)
{
	int err;

	if (!task || lib_map_find(&w->tasks_seen, task))
		return 0;
	err = lib_map_set(&w->tasks_seen, task, 1);
	return err ? err
		   : queue_name(w, TRACE_CHUNK_TASKS, &w->tasks, &w->ntasks, task, NULL);
}

static uint64_t hash_callchain(const uint64_t *ips, unsigned int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	unsigned int i;

	for (i = 0; i < n; i++)
		h = lib_hash64(h ^ ips[i]);
	return h;
}

static int stack_tab_grow(struct trace_writer *w)
{
	size_t ncap = w->stack_tab_cap ? w->stack_tab_cap * 2 : 1024;
	size_t mask = ncap - 1;
	struct stack_slot *nt;
	size_t i;

	nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	for (i = 0; i < w->stack_tab_cap; i++) {
		struct stack_slot s = w->stack_tab[i];
		size_t j;

		if (!s.id1)
			continue;
		/* rehash from the stored addresses: the slot keeps only 32
		 * bits of the hash, not enough to place it in a bigger table
		 * consistently with lookups */
		j = (size_t)hash_callchain(w->stack_ips + w->stack_off[s.id1 - 1],
					   (unsigned int)(w->stack_off[s.id1] -
							  w->stack_off[s.id1 - 1])) &
		    mask;
		while (nt[j].id1)
			j = (j + 1) & mask;
		nt[j] = s;
	}
	free(w->stack_tab);
	w->stack_tab = nt;
	w->stack_tab_cap = ncap;
	return 0;
}

int trace_writer__stack(struct trace_writer *w, const uint64_t *ips, unsigned int n,
			uint32_t *stack)
{
	size_t mask, i, slot, id, first;
	uint64_t h;
	int err = check_writable(w);

	if (err)
		return err;
	if (!stack || (n && !ips))
		return -EINVAL;
	if (n > MAX_DEPTH)
		return -E2BIG;
	if ((w->nstacks + 1) * 2 > w->stack_tab_cap) {
		err = stack_tab_grow(w);
		if (err)
			return err;
	}

	h = hash_callchain(ips, n);
	mask = w->stack_tab_cap - 1;
	for (slot = (size_t)h & mask; w->stack_tab[slot].id1; slot = (slot + 1) & mask) {
		struct stack_slot s = w->stack_tab[slot];
		size_t off = w->stack_off[s.id1 - 1];

		if (s.hash == (uint32_t)h && w->stack_off[s.id1] - off == n &&
		    (!n || !memcmp(w->stack_ips + off, ips, n * sizeof(*ips)))) {
			*stack = s.id1 - 1;
			return 0;
		}
	}

	/* new stack: reserve everything first so a failure changes nothing
	 * but possibly interns a few frames no stack uses (harmless) */
	if (w->nstacks >= MAX_IDS || w->nframes + n > MAX_IDS)
		return -E2BIG;
	if (LIB_GROW(w->stack_ips, w->ips_cap, w->nips + n) ||
	    LIB_GROW(w->stack_off, w->off_cap, w->nstacks + 2) ||
	    LIB_GROW(w->pend_ids, w->pend_cap, w->npend_ids + n) ||
	    LIB_GROW(w->frame_addr, w->frame_cap, w->nframes + n))
		return -ENOMEM;
	first = w->npend_ids;
	for (i = 0; i < n; i++) {
		int created;
		uint64_t *fid = lib_map_get(&w->frame_ids, ips[i], &created);

		if (!fid)
			return -ENOMEM;
		if (created) {
			*fid = w->nframes;
			w->frame_addr[w->nframes++] = ips[i];
		}
		w->pend_ids[first + i] = (uint32_t)*fid;
	}
	w->npend_ids += n;
	if (n)
		memcpy(w->stack_ips + w->nips, ips, n * sizeof(*ips));
	w->nips += n;
	id = w->nstacks++;
	w->stack_off[w->nstacks] = w->nips;
	/* the lookup stopped at the empty slot where this stack goes */
	w->stack_tab[slot].hash = (uint32_t)h;
	w->stack_tab[slot].id1 = (uint32_t)id + 1;
	*stack = (uint32_t)id;

	if (w->nstacks - w->stacks_written >= CHUNK_RECORDS ||
	    w->npend_ids >= CHUNK_BYTES)
		return write_stacks(w);
	return 0;
}

static void note_time(struct trace_writer *w, uint64_t t)
{
	if (t < w->min_time)
		w->min_time = t;
	if (t > w->max_time)
		w->max_time = t;
}

int trace_writer__sample(struct trace_writer *w, const struct trace_sample *s)
{
	int err = check_writable(w);

	if (err)
		return err;
	if (!s || s->stack >= w->nstacks)
		return -EINVAL;
	err = see_task(w, s->task);
	if (err)
		return err;
	if (LIB_GROW(w->samples, w->samples_cap, w->nsamples + 1))
		return -ENOMEM;
	w->samples[w->nsamples++] = *s;
	w->total_samples++;
	TAP(w, sample, s, w->stack_ips + w->stack_off[s->stack],
	    (unsigned int)(w->stack_off[s->stack + 1] - w->stack_off[s->stack]));
	note_time(w, s->time);
	if (w->nsamples >= CHUNK_RECORDS)
		return write_samples(w);
	return 0;
}

/* put_varint() with the common short cases unrolled: deltas of a busy
 * thread's times take 1-3 bytes, of its tasks 1-2. */
static inline uint8_t *put_varint_short(uint8_t *p, uint64_t v)
{
	if (v < 0x80) {
		*p = (uint8_t)v;
		return p + 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7);
		return p + 2;
	}
	return put_varint(p, v);
}

/* Encode @n records into the columns, which have room (8 bytes of slack
 * in the tid column: a tid is stored as one 8-byte word); @tid_delta
 * (POLLS): tids as the change from the record before. A column at a
 * time over the batch: tight loops on locals (byte stores alias
 * everything, so one loop over all fields would reload them after every
 * store). Runs of one tid are the rule: a batch is a ring. */
static void encode_columns(struct trace_writer *w, const struct trace_event *e, size_t n,
			   int tid_delta)
{
	uint8_t *pt = w->ev_time.p + w->ev_time.len;
	uint8_t *pk = w->ev_task.p + w->ev_task.len;
	uint8_t *pd = w->ev_tid.p + w->ev_tid.len;
	uint8_t *py = w->ev_type.p + w->ev_type.len;
	uint64_t prev = w->ev_prev_time;
	uint64_t code = 0;
	uint32_t tid = 0;
	size_t i, len = 0;

	for (i = 0; i < n; i++) {
		pt = put_varint_short(pt, zigzag(e[i].time - prev));
		prev = e[i].time;
	}
	w->ev_prev_time = prev;
	prev = w->ev_prev_task;
	for (i = 0; i < n; i++) {
		pk = put_varint_short(pk, zigzag(e[i].task - prev));
		prev = e[i].task;
	}
	w->ev_prev_task = prev;
	if (tid_delta) {
		/* POLLS: the change from the record before, 0 within a run */
		tid = w->ev_prev_tid;
		for (i = 0; i < n; i++) {
			if (e[i].tid == tid) {
				*pd++ = 0;
				continue;
			}
			pd = put_varint(
				pd, zigzag((uint64_t)((int64_t)e[i].tid - (int64_t)tid)));
			tid = e[i].tid;
		}
		w->ev_prev_tid = tid;
	} else {
		for (i = 0; i < n; i++) {
			if (!len || e[i].tid != tid) {
				uint8_t b[8] = {0};

				tid = e[i].tid;
				len = (size_t)(put_varint(b, tid) - b);
				memcpy(&code, b, sizeof(b));
			}
			memcpy(pd, &code, sizeof(code));
			pd += len;
		}
	}
	for (i = 0; i < n; i++) {
		if (e[i].type < 0x80)
			*py++ = (uint8_t)e[i].type;
		else
			py = put_varint(py, e[i].type);
	}
	w->ev_time.len = (size_t)(pt - w->ev_time.p);
	w->ev_task.len = (size_t)(pk - w->ev_task.p);
	w->ev_tid.len = (size_t)(pd - w->ev_tid.p);
	w->ev_type.len = (size_t)(py - w->ev_type.p);
}

/* The batch's first and last times into the writer's span. */
static void note_times(struct trace_writer *w, const struct trace_event *e, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		lo = e[i].time < lo ? e[i].time : lo;
		hi = e[i].time > hi ? e[i].time : hi;
	}
	w->min_time = lo < w->min_time ? lo : w->min_time;
	w->max_time = hi > w->max_time ? hi : w->max_time;
	/* and the chunk's: these records go into it */
	w->ev_lo = lo < w->ev_lo ? lo : w->ev_lo;
	w->ev_hi = hi > w->ev_hi ? hi : w->ev_hi;
}

/* @n events as records into w->crec (which has room), a whole poll as one:
 * a BEGIN directly followed by the END of that task on that thread, or by
 * a WAKE of it at the END's time and the END, becomes one POLL (POLL_WOKEN)
 * record at the end, its length into the length column (which has room).
 * The number of records. */
static size_t compact_polls(struct trace_writer *w, const struct trace_event *e, size_t n)
{
	uint8_t *pl = w->ev_len.p + w->ev_len.len;
	struct trace_event *o = w->crec;
	size_t i = 0, m = 0;

	while (i < n) {
		const struct trace_event *b = &e[i], *x = i + 1 < n ? &e[i + 1] : NULL;
		uint32_t type = TRACE_REC_POLL;
		size_t k = 2;

		if (b->type == TRACE_EV_POLL_BEGIN && x && x->type == TRACE_EV_WAKE &&
		    i + 2 < n && e[i + 2].type == TRACE_EV_POLL_END &&
		    x->time == e[i + 2].time && x->task == b->task && x->tid == b->tid) {
			x = &e[i + 2];
			type = TRACE_REC_POLL_WOKEN;
			k = 3;
		}
		if (b->type == TRACE_EV_POLL_BEGIN && x && x->type == TRACE_EV_POLL_END &&
		    x->task == b->task && x->tid == b->tid && x->time >= b->time) {
			o[m] = *x;
			o[m++].type = type;
			pl = put_varint_short(pl, x->time - b->time);
			i += k;
			continue;
		}
		o[m++] = *b;
		i++;
	}
	w->ev_len.len = (size_t)(pl - w->ev_len.p);
	return m;
}

int trace_writer__events(struct trace_writer *w, const struct trace_event *e, size_t n)
{
	int err = check_writable(w);

	if (err)
		return err;
	if (n && !e)
		return -EINVAL;
	/* whole polls come with their lengths: trace_writer__records() */
	for (size_t i = 0; i < n; i++)
		if (trace_rec_events(e[i].type) > 1)
			return -EINVAL;
	if (n)
		TAP(w, records, e, NULL, n);
	while (n) {
		size_t k = CHUNK_RECORDS - w->nrecs, m;

		if (k > n)
			k = n;
		/* worst case per record: three 10-byte varints, two 5-byte ones */
		if (!reserve(&w->ev_time, k * TRACE_VARINT_MAX) ||
		    !reserve(&w->ev_task, k * TRACE_VARINT_MAX) ||
		    !reserve(&w->ev_tid, k * 5 + 8) || !reserve(&w->ev_type, k * 5) ||
		    !reserve(&w->ev_len, k * TRACE_VARINT_MAX) ||
		    LIB_GROW(w->crec, w->crec_cap, k))
			return -ENOMEM;
		note_times(w, e, k);
		m = compact_polls(w, e, k);
		encode_columns(w, w->crec, m, 1);
		w->nrecs += m;
		w->nevents += k;
		w->total_events += k;
		if (w->nrecs >= CHUNK_RECORDS) {
			err = write_events(w);
			if (err)
				return err;
		}
		e += k;
		n -= k;
	}
	return 0;
}

int trace_writer__records(struct trace_writer *w, const struct trace_event *rec,
			  const uint64_t *len, size_t n)
{
	int err = check_writable(w);

	if (err)
		return err;
	if (n && (!rec || !len))
		return -EINVAL;
	while (n) {
		size_t k = CHUNK_RECORDS - w->nrecs, i, events = 0;
		uint64_t lo = w->min_time, hi = w->max_time;
		uint8_t *pl;

		if (k > n)
			k = n;
		if (!reserve(&w->ev_time, k * TRACE_VARINT_MAX) ||
		    !reserve(&w->ev_task, k * TRACE_VARINT_MAX) ||
		    !reserve(&w->ev_tid, k * 5 + 8) || !reserve(&w->ev_type, k * 5) ||
		    !reserve(&w->ev_len, k * TRACE_VARINT_MAX))
			return -ENOMEM;
		pl = w->ev_len.p + w->ev_len.len;
		for (i = 0; i < k; i++) {
			uint64_t t = rec[i].time, b = t;

			if (trace_rec_events(rec[i].type) > 1) {
				if (len[i] > t)
					return -EINVAL;
				b = t - len[i];
				pl = put_varint_short(pl, len[i]);
			}
			events += trace_rec_events(rec[i].type);
			lo = b < lo ? b : lo;
			hi = t > hi ? t : hi;
			/* the chunk's own times */
			w->ev_lo = b < w->ev_lo ? b : w->ev_lo;
			w->ev_hi = t > w->ev_hi ? t : w->ev_hi;
		}
		w->ev_len.len = (size_t)(pl - w->ev_len.p);
		w->min_time = lo;
		w->max_time = hi;
		/* the tap gets what the trace takes: after the checks */
		TAP(w, records, rec, len, k);
		encode_columns(w, rec, k, 1);
		w->nrecs += k;
		w->nevents += events;
		w->total_events += events;
		if (w->nrecs >= CHUNK_RECORDS) {
			err = write_events(w);
			if (err)
				return err;
		}
		rec += k;
		len += k;
		n -= k;
	}
	return 0;
}

int trace_writer__state(struct trace_writer *w, const struct trace_event *e, size_t n)
{
	uint64_t lo, hi;
	int err = trace_writer__flush(w);

	if (err)
		return err;
	if (n && !e)
		return -EINVAL;
	/* copies of what earlier segments recorded: neither counted as
	 * events nor taken for the segment's times */
	lo = w->min_time;
	hi = w->max_time;
	while (n && !err) {
		size_t k = n < CHUNK_RECORDS ? n : CHUNK_RECORDS;

		if (!reserve(&w->ev_time, k * TRACE_VARINT_MAX) ||
		    !reserve(&w->ev_task, k * TRACE_VARINT_MAX) ||
		    !reserve(&w->ev_tid, k * 5 + 8) || !reserve(&w->ev_type, k * 5))
			return -ENOMEM;
		/* records as they are: STATE has no whole polls */
		encode_columns(w, e, k, 0);
		for (size_t i = 0; i < k; i++) {
			w->ev_lo = e[i].time < w->ev_lo ? e[i].time : w->ev_lo;
			w->ev_hi = e[i].time > w->ev_hi ? e[i].time : w->ev_hi;
		}
		w->nrecs = w->nevents = k;
		err = write_events_as(w, TRACE_CHUNK_STATE);
		e += k;
		n -= k;
	}
	w->min_time = lo;
	w->max_time = hi;
	return err;
}

int trace_writer__event(struct trace_writer *w, const struct trace_event *e)
{
	if (!e)
		return -EINVAL;
	return trace_writer__events(w, e, 1);
}

int trace_writer__switch(struct trace_writer *w, const struct trace_switch *s)
{
	return trace_writer__switch_held(w, s, NULL, 0);
}

int trace_writer__switch_held(struct trace_writer *w, const struct trace_switch *s,
			      const struct trace_hold *h, size_t n)
{
	int err = check_writable(w);
	uint64_t sum = 0;

	if (err)
		return err;
	/* time_in - time + 1 must not wrap to 0 ("still off-CPU") */
	if (!s || s->stack >= w->nstacks ||
	    (s->time_in &&
	     (s->time_in < s->time || s->time_in - s->time == UINT64_MAX)) ||
	    (s->runnable &&
	     (s->runnable < s->time || s->runnable - s->time == UINT64_MAX ||
	      (s->time_in && s->runnable > s->time_in))))
		return -EINVAL;
	if (n && (n > TRACE_MAX_HOLDS || !h || !s->runnable || !s->time_in))
		return -EINVAL;
	for (size_t k = 0; k < n; k++) {
		if (h[k].ns > s->time_in - s->runnable - sum)
			return -EINVAL;
		sum += h[k].ns;
	}
	err = see_task(w, s->task);
	if (err)
		return err;
	if (LIB_GROW(w->switches, w->switches_cap, w->nswitches + 1) ||
	    LIB_GROW(w->holds, w->holds_cap, w->nholds + n + 1))
		return -ENOMEM;
	if (n)
		memcpy(w->holds + w->nholds, h, n * sizeof(*h));
	TAP(w, sw, s);
	w->switches[w->nswitches] = *s;
	w->switches[w->nswitches].hold = (uint32_t)w->nholds;
	w->switches[w->nswitches++].nhold = (uint8_t)n;
	w->nholds += n;
	w->total_switches++;
	note_time(w, s->time);
	if (s->time_in)
		note_time(w, s->time_in);
	if (w->nswitches >= CHUNK_RECORDS)
		return write_switches(w);
	return 0;
}

void trace_writer__set_tap(struct trace_writer *w, const struct trace_tap *tap)
{
	if (w)
		w->tap = tap ? *tap : (struct trace_tap){0};
}

int trace_writer__flush(struct trace_writer *w)
{
	int err = check_writable(w);

	if (err)
		return err;
	/* names first: a reader of a cut file then knows the threads and
	 * tasks of the samples and events it has */
	if ((err = write_bytes_chunk(w, TRACE_CHUNK_META, &w->meta, &w->nmeta)) ||
	    (err = write_bytes_chunk(w, TRACE_CHUNK_THREADS, &w->threads,
				     &w->nthreads)) ||
	    (err = write_bytes_chunk(w, TRACE_CHUNK_TASKS, &w->tasks, &w->ntasks)) ||
	    (err = write_bytes_chunk(w, TRACE_CHUNK_COMMS, &w->comms, &w->ncomms)) ||
	    (err = write_bytes_chunk(w, TRACE_CHUNK_SUMS, &w->sums, &w->nsums)) ||
	    (err = write_stacks(w)) || (err = write_samples(w)) ||
	    (err = write_events(w)) || (err = write_switches(w)) ||
	    (err = write_spans(w)) || (err = write_index(w)))
		return err;
	return 0;
}

unsigned int trace_writer__stack_ips(const struct trace_writer *w, uint32_t stack,
				     const uint64_t **ips)
{
	*ips = NULL;
	if (!w || stack >= w->nstacks)
		return 0;
	*ips = w->stack_ips + w->stack_off[stack];
	return (unsigned int)(w->stack_off[stack + 1] - w->stack_off[stack]);
}

size_t trace_writer__nframes(const struct trace_writer *w)
{
	return w ? w->nframes : 0;
}

uint64_t trace_writer__frame_addr(const struct trace_writer *w, size_t i)
{
	return w && i < w->nframes ? w->frame_addr[i] : 0;
}

/* ---- FRAMES ------------------------------------------------------------- */

/* The string table of a FRAMES, INLINES or LINES chunk, or of a SPANS
 * chunk: each string once, in the order they came. */
struct strtab {
	struct lib_strset set;
	size_t enc_len; /* its bytes in the chunk: v len, bytes per string */
};

static void strtab_reset(struct strtab *st)
{
	lib_strset_clear(&st->set);
	st->enc_len = 0;
}

static void strtab_release(struct strtab *st)
{
	lib_strset_release(&st->set);
}

/* The table index + 1 of @s (added if new), 0 for NULL, or -errno. */
static int64_t strtab_add(struct strtab *st, const char *s)
{
	uint8_t v[TRACE_VARINT_MAX];
	size_t len;
	uint32_t id;
	int added;

	if (!s)
		return 0;
	len = strlen(s);
	if (len > MAX_STRING)
		return 0; /* absurd symbol: store the frame unnamed */
	added = lib_strset_add(&st->set, s, len, &id);
	if (added < 0)
		return added;
	if (added)
		st->enc_len += (size_t)(put_varint(v, len) - v) + len;
	return (int64_t)id + 1;
}

/* The string table at the start of a FRAMES, INLINES, LINES or SPANS
 * payload: the count, then the strings. */
static uint8_t *put_strtab(uint8_t *p, const struct strtab *st)
{
	uint32_t i, n = (uint32_t)lib_strset_count(&st->set);

	p = put_varint(p, n);
	for (i = 0; i < n; i++) {
		size_t len = lib_strset_len(&st->set, i);

		p = put_varint(p, len);
		memcpy(p, lib_strset_str(&st->set, i), len);
		p += len;
	}
	return p;
}

static void strtab_free(struct strtab *st)
{
	if (!st)
		return;
	strtab_release(st);
	free(st);
}

/* ---- SPANS -------------------------------------------------------------- */

int trace_writer__span(struct trace_writer *w, const struct trace_span *s)
{
	int64_t name, text;
	int err = check_writable(w);

	if (err)
		return err;
	if (!s || s->type < TRACE_SPAN_NEW || s->type > TRACE_SPAN_TYPE_MAX)
		return -EINVAL;
	if (!w->span_str && !(w->span_str = calloc(1, sizeof(*w->span_str))))
		return -ENOMEM;
	if (LIB_GROW(w->spans, w->spans_cap, w->nspans + 1))
		return -ENOMEM;
	name = strtab_add(w->span_str, s->name);
	text = name < 0 ? name : strtab_add(w->span_str, s->text);
	if (name < 0 || text < 0)
		return -ENOMEM;
	w->spans[w->nspans++] = (struct span_row){
		.time = s->time,
		.id = s->id,
		.value = (uint64_t)s->value,
		.tid = s->tid,
		.type = s->type,
		.name = (uint32_t)name,
		.text = (uint32_t)text,
	};
	/* (a segment's open spans were tapped when they came) */
	if (!w->span_state)
		TAP(w, span, s);
	note_time(w, s->time);
	if (w->nspans >= CHUNK_RECORDS || w->span_str->enc_len >= CHUNK_BYTES)
		return write_spans_as(w, w->span_state ? TRACE_CHUNK_SPAN_STATE
						       : TRACE_CHUNK_SPANS);
	return 0;
}

static int write_spans(struct trace_writer *w)
{
	return write_spans_as(w, TRACE_CHUNK_SPANS);
}

int trace_writer__span_state(struct trace_writer *w, const struct trace_span *s, size_t n)
{
	int err = check_writable(w);

	/* what is queued first: the segment's meta leads it */
	if (err || (err = trace_writer__flush(w)))
		return err;
	/* queued as spans, not tapped (they were when they came) */
	w->span_state = 1;
	for (size_t i = 0; !err && i < n; i++)
		err = trace_writer__span(w, &s[i]);
	if (!err)
		err = write_spans_as(w, TRACE_CHUNK_SPAN_STATE);
	w->span_state = 0;
	return err;
}

static int write_spans_as(struct trace_writer *w, uint32_t type)
{
	const struct span_row *s = w->spans;
	size_t i, n = w->nspans;
	uint64_t prev = 0;
	uint8_t *p;
	int err;

	if (!n)
		return 0;
	p = payload_begin(
		w, TRACE_VARINT_MAX * (1 + lib_strset_count(&w->span_str->set) + 7 * n) +
			   w->span_str->enc_len);
	if (!p)
		return -ENOMEM;
	p = put_strtab(p, w->span_str);
	p = put_times(p, s, sizeof(*s), n);
	PUT_COLUMN(p, i, n, s[i].tid);
	PUT_COLUMN(p, i, n, s[i].type);
	for (i = 0; i < n; i++) {
		p = put_varint(p, zigzag(s[i].id - prev));
		prev = s[i].id;
	}
	PUT_COLUMN(p, i, n, zigzag(s[i].value));
	PUT_COLUMN(p, i, n, s[i].name);
	PUT_COLUMN(p, i, n, s[i].text);
	err = payload_write(w, p, type, n);
	if (!err) {
		w->nspans = 0;
		strtab_reset(w->span_str);
	}
	return err;
}

struct frame_cols {
	uint32_t *sym, *mod;
	uint64_t *off;
	uint8_t *kernel;
};

/* The inline chains of the frames of one FRAMES chunk, for the INLINES
 * chunk that follows it. */
struct inl_cols {
	struct strtab st;
	struct inl_chain { /* per frame with a chain */
		uint32_t frame, count;
	} * chain;
	size_t n, cap;
	uint32_t *names; /* string indexes + 1, all chains */
	size_t nnames, names_cap;
};

/* Add @frame's chain; the indexes of the names kept go in @kept (room for
 * TRACE_MAX_INLINE) and their count in *@nkept. */
static int inl_add(struct inl_cols *ic, uint32_t frame, const char *const *names,
		   uint32_t n, uint16_t *kept, uint32_t *nkept)
{
	uint32_t i, k;

	*nkept = 0;
	if (!n)
		return 0;
	if (n > TRACE_MAX_INLINE)
		n = TRACE_MAX_INLINE; /* the innermost, the most specific */
	if (LIB_GROW(ic->chain, ic->cap, ic->n + 1) ||
	    LIB_GROW(ic->names, ic->names_cap, ic->nnames + n))
		return -ENOMEM;
	for (i = k = 0; i < n; i++) {
		int64_t s = strtab_add(&ic->st, names[i]);

		if (s < 0)
			return -ENOMEM;
		if (!s) /* an absurd or NULL name is left out */
			continue;
		kept[k] = (uint16_t)i;
		ic->names[ic->nnames + k++] = (uint32_t)s;
	}
	*nkept = k;
	if (!k)
		return 0;
	ic->chain[ic->n++] = (struct inl_chain){.frame = frame, .count = k};
	ic->nnames += k;
	return 0;
}

static int write_inlines_chunk(struct trace_writer *w, struct inl_cols *ic)
{
	uint32_t prev = 0;
	uint8_t *p;
	size_t i;
	int err;

	if (!ic->n)
		return 0;
	p = payload_begin(w, TRACE_VARINT_MAX * (1 + 2 * ic->n + ic->nnames) +
				     ic->st.enc_len);
	if (!p)
		return -ENOMEM;
	p = put_strtab(p, &ic->st);
	for (i = 0; i < ic->n; i++) {
		p = put_varint(p, ic->chain[i].frame - prev);
		prev = ic->chain[i].frame;
	}
	PUT_COLUMN(p, i, ic->n, ic->chain[i].count);
	PUT_COLUMN(p, i, ic->nnames, ic->names[i] - 1);
	err = payload_write(w, p, TRACE_CHUNK_INLINES, ic->n);
	strtab_reset(&ic->st);
	ic->n = ic->nnames = 0;
	return err;
}

/* The source lines of the frames of one FRAMES chunk, for the LINES chunk
 * that follows its INLINES chunk. */
struct line_cols {
	struct strtab st;
	struct line_rec { /* per frame with a file, a line or sites */
		uint32_t frame, file, line, start, nsite;
	} * rec;
	size_t n, cap;
	struct line_site { /* all frames' sites */
		uint32_t file, line, decl;
	} * site;
	size_t nsite, site_cap;
};

/* Add frame @frame's source lines as @f has them, the sites of the
 * inlined names @kept[0..@nkept) (those its INLINES record keeps). */
static int lines_add(struct line_cols *lc, uint32_t frame, const struct trace_frame *f,
		     const uint16_t *kept, uint32_t nkept)
{
	struct line_rec r = {.frame = frame, .line = f->line, .start = f->start_line};
	int64_t file = strtab_add(&lc->st, f->file);

	if (file < 0)
		return -ENOMEM;
	r.file = (uint32_t)file;
	if (f->inl_src && nkept) {
		if (LIB_GROW(lc->site, lc->site_cap, lc->nsite + nkept))
			return -ENOMEM;
		for (uint32_t k = 0; k < nkept; k++) {
			const struct trace_inline_src *x = &f->inl_src[kept[k]];
			int64_t cf = strtab_add(&lc->st, x->call_file);

			if (cf < 0)
				return -ENOMEM;
			lc->site[lc->nsite + k] =
				(struct line_site){.file = (uint32_t)cf,
						   .line = x->call_line,
						   .decl = x->decl_line};
		}
		r.nsite = nkept;
	}
	if (!r.file && !r.line && !r.start && !r.nsite)
		return 0;
	if (LIB_GROW(lc->rec, lc->cap, lc->n + 1))
		return -ENOMEM;
	lc->rec[lc->n++] = r;
	lc->nsite += r.nsite;
	return 0;
}

static int write_lines_chunk(struct trace_writer *w, struct line_cols *lc)
{
	uint32_t prev = 0;
	uint8_t *p;
	size_t i;
	int err;

	if (!lc->n)
		return 0;
	p = payload_begin(w, TRACE_VARINT_MAX * (1 + 5 * lc->n + 3 * lc->nsite) +
				     lc->st.enc_len);
	if (!p)
		return -ENOMEM;
	p = put_strtab(p, &lc->st);
	for (i = 0; i < lc->n; i++) {
		p = put_varint(p, lc->rec[i].frame - prev);
		prev = lc->rec[i].frame;
	}
	PUT_COLUMN(p, i, lc->n, lc->rec[i].file);
	PUT_COLUMN(p, i, lc->n, lc->rec[i].line);
	PUT_COLUMN(p, i, lc->n, lc->rec[i].start);
	PUT_COLUMN(p, i, lc->n, lc->rec[i].nsite);
	/* the sites */
	PUT_COLUMN(p, i, lc->nsite, lc->site[i].file);
	PUT_COLUMN(p, i, lc->nsite, lc->site[i].line);
	PUT_COLUMN(p, i, lc->nsite, lc->site[i].decl);
	err = payload_write(w, p, TRACE_CHUNK_LINES, lc->n);
	strtab_reset(&lc->st);
	lc->n = lc->nsite = 0;
	return err;
}

static int write_frames_chunk(struct trace_writer *w, size_t first, size_t n,
			      struct strtab *st, const struct frame_cols *c)
{
	uint8_t *p;
	size_t i;

	p = payload_begin(w, TRACE_VARINT_MAX * (2 + 4 * n) + st->enc_len);
	if (!p)
		return -ENOMEM;
	p = put_varint(p, first);
	p = put_strtab(p, st);
	PUT_COLUMN(p, i, n, c->sym[i]);
	PUT_COLUMN(p, i, n, c->mod[i]);
	PUT_COLUMN(p, i, n, c->off[i]);
	PUT_COLUMN(p, i, n, c->kernel[i]);
	return payload_write(w, p, TRACE_CHUNK_FRAMES, n);
}

static int write_frames(struct trace_writer *w, trace_resolve_fn resolve, void *ctx)
{
	struct strtab st = {0};
	struct inl_cols ic = {0};
	struct line_cols lc = {0};
	struct frame_cols c;
	uint16_t kept[TRACE_MAX_INLINE];
	size_t first = 0, n = 0, i;
	int err = 0;

	if (!resolve || !w->nframes)
		return 0;
	c.sym = malloc(CHUNK_RECORDS * sizeof(*c.sym));
	c.mod = malloc(CHUNK_RECORDS * sizeof(*c.mod));
	c.off = malloc(CHUNK_RECORDS * sizeof(*c.off));
	c.kernel = malloc(CHUNK_RECORDS);
	if (!c.sym || !c.mod || !c.off || !c.kernel) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < w->nframes; i++) {
		struct trace_frame f = {
			.addr = w->frame_addr[i],
			.kernel = trace_addr_is_kernel(w->frame_addr[i]),
		};
		int64_t sym, mod;
		uint32_t nkept = 0;

		if (f.addr == TRACE_ADDR_NOT_KEPT) {
			f.sym = TRACE_SYM_NOT_KEPT;
		} else if (resolve(ctx, f.addr, &f) < 0) {
			f.sym = f.module = f.file = NULL;
			f.offset = 0;
			f.ninl = f.line = f.start_line = 0;
		}
		if (f.ninl && f.inl &&
		    inl_add(&ic, (uint32_t)i, f.inl, f.ninl, kept, &nkept)) {
			err = -ENOMEM;
			goto out;
		}
		if (lines_add(&lc, (uint32_t)i, &f, kept, nkept)) {
			err = -ENOMEM;
			goto out;
		}
		sym = strtab_add(&st, f.sym);
		mod = strtab_add(&st, f.module);
		if (sym < 0 || mod < 0) {
			err = -ENOMEM;
			goto out;
		}
		c.sym[n] = (uint32_t)sym;
		c.mod[n] = (uint32_t)mod;
		c.off[n] = f.offset;
		c.kernel[n] = f.kernel != 0;
		if (++n == CHUNK_RECORDS || st.enc_len >= FRAMES_STR_BYTES ||
		    ic.st.enc_len >= FRAMES_STR_BYTES ||
		    lc.st.enc_len >= FRAMES_STR_BYTES) {
			err = write_frames_chunk(w, first, n, &st, &c);
			if (!err)
				err = write_inlines_chunk(w, &ic);
			if (!err)
				err = write_lines_chunk(w, &lc);
			if (err)
				goto out;
			first += n;
			n = 0;
			strtab_reset(&st);
		}
	}
	if (n)
		err = write_frames_chunk(w, first, n, &st, &c);
	if (!err)
		err = write_inlines_chunk(w, &ic);
	if (!err)
		err = write_lines_chunk(w, &lc);
out:
	strtab_release(&st);
	strtab_release(&ic.st);
	strtab_release(&lc.st);
	free(ic.chain);
	free(ic.names);
	free(lc.rec);
	free(lc.site);
	free(c.sym);
	free(c.mod);
	free(c.off);
	free(c.kernel);
	return err;
}

int trace_writer__finish(struct trace_writer *w, trace_resolve_fn resolve, void *ctx,
			 const struct trace_counters *c)
{
	struct trace_counters end = {0};
	uint8_t *p;
	int err;

	err = trace_writer__flush(w);
	if (err)
		return err;
	err = write_frames(w, resolve, ctx);
	if (err)
		return err;

	if (c)
		end = *c;
	/* the writer's own counts are exact; times default to the span of
	 * the records written */
	end.samples = w->total_samples;
	end.events = w->total_events;
	end.switches = w->total_switches;
	if (!end.start_time && w->min_time != UINT64_MAX)
		end.start_time = w->min_time;
	if (!end.end_time)
		end.end_time = w->max_time;
	p = payload_begin(w, TRACE_VARINT_MAX * 7);
	if (!p)
		return -ENOMEM;
	p = put_varint(p, end.samples);
	p = put_varint(p, end.events);
	p = put_varint(p, end.lost_samples);
	p = put_varint(p, end.shim_drops);
	p = put_varint(p, end.start_time);
	p = put_varint(p, end.end_time);
	p = put_varint(p, end.switches);
	err = payload_write(w, p, TRACE_CHUNK_END, 1);
	if (err)
		return err;
	w->finished = 1;
	return 0;
}

void trace_writer__free(struct trace_writer *w)
{
	if (!w)
		return;
	ZSTD_freeCCtx(w->cctx);
	lib_map_release(&w->tasks_seen);
	free(w->frame_addr);
	lib_map_release(&w->frame_ids);
	free(w->stack_ips);
	free(w->stack_off);
	free(w->stack_tab);
	free(w->pend_ids);
	free(w->samples);
	free(w->idx);
	bytes_release(&w->ev_time);
	bytes_release(&w->ev_task);
	bytes_release(&w->ev_tid);
	bytes_release(&w->ev_type);
	bytes_release(&w->ev_len);
	free(w->crec);
	free(w->switches);
	free(w->holds);
	free(w->spans);
	strtab_free(w->span_str);
	bytes_release(&w->meta);
	bytes_release(&w->threads);
	bytes_release(&w->comms);
	bytes_release(&w->sums);
	bytes_release(&w->tasks);
	bytes_release(&w->raw);
	bytes_release(&w->out);
	free(w);
}
