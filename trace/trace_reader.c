// SPDX-License-Identifier: MIT
/*
 * trace_reader.c - read a d9prof trace into memory (layout: trace_format.h).
 *
 * The input is untrusted (traces get copied around, cut short, fuzzed).
 * Every chunk is checked (header checksum, payload checksum, one zstd frame
 * of the declared size) before it is decoded, every count is checked
 * against the bytes that could hold it before anything is allocated for
 * it, and every id must refer to something already defined. A file cut
 * short is not corrupt: decoding stops at the last whole chunk.
 *
 * The file is read one chunk at a time, never whole. Samples and events,
 * the records that grow with the recording's length, may be left on disk
 * (TRACE_READ_NO_*): their chunks are checked and remembered by offset,
 * and each trace__for_each_sample()/_event() decodes them again one at a
 * time with the same decoders, so the checks are the same either way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "trace/trace.h"
#include "trace/trace_format.h"

/* ---- string arena: every string of a trace, freed at once ------------- */

#define ARENA_BLOCK (64u << 10)

struct arena_block {
	struct arena_block *next;
	size_t used, size;
	char data[];
};

struct trace_arena {
	struct arena_block *head;
};

static char *arena_strdup(struct trace_arena *a, const uint8_t *s, size_t len)
{
	struct arena_block *b = a->head;
	char *p;

	if (!b || b->size - b->used < len + 1) {
		size_t size = len + 1 > ARENA_BLOCK ? len + 1 : ARENA_BLOCK;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->used = 0;
		b->size = size;
		/* a big string gets its own block behind the current one so
		 * the current block's free space is not lost */
		if (size > ARENA_BLOCK && a->head) {
			b->next = a->head->next;
			a->head->next = b;
		} else {
			b->next = a->head;
			a->head = b;
		}
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

static void arena_free_blocks(struct trace_arena *a)
{
	struct arena_block *b, *next;

	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}

static void arena_free(struct trace_arena *a)
{
	if (!a)
		return;
	arena_free_blocks(a);
	free(a);
}

/* ---- reader state ------------------------------------------------------- */

/* A chunk left on disk: where it is and what it may refer to. */
struct src_chunk {
	uint64_t pos;	  /* file offset of its header */
	size_t index;	  /* chunk number, for messages */
	uint32_t csize;	  /* payload bytes */
	uint32_t nstacks; /* stacks its segment defined before it */
	uint32_t type;	  /* its chunk type (EVENTS, STATE or POLLS for events) */
	uint32_t file;	  /* index in trace_src.fds */
	uint32_t seg;	  /* index in trace_src.smap: its stack ids */
};

struct src_list {
	struct src_chunk *v;
	size_t n, cap;
};

struct trace_src {
	int *fds;	  /* per file read: open (one file), or -1: opened again
			   * when a walk needs it, one at a time (a directory
			   * may hold more files than a process may open) */
	size_t nfds;
	char **names;	  /* their paths */
	int multi;	  /* several: messages name the file */
	int cur;	  /* the file opened again, -1 if none */
	uint32_t **smap;  /* per segment: its stack ids -> the trace's */
	size_t nsmap;
	struct src_list samples, events;
	/* a walk's buffers, kept between walks */
	uint8_t *cbuf, *raw;
	size_t cbuf_cap, raw_cap;
	void *recs;
	size_t recs_cap;
	ZSTD_DCtx *dctx;
	int failed;
	char msg[192];
};

struct reader {
	struct trace *t;
	unsigned int flags;	/* TRACE_READ_* */
	struct idmap thread_ix; /* tid -> index in t->threads */
	struct idmap comm_ix;	/* tid -> index in t->comms */
	struct idmap task_ix;	/* task id -> index in t->tasks */
	size_t meta_cap, threads_cap, comms_cap, tasks_cap, frames_cap;
	size_t off_cap, sf_cap, samples_cap, events_cap, switches_cap, holds_cap;
	size_t nstack_frames; /* used entries of t->stack_frames */
	uint8_t *raw;	      /* decompressed payload */
	size_t raw_cap;
	uint8_t *cbuf;	      /* the chunk as read: header and payload */
	size_t cbuf_cap;
	ZSTD_DCtx *dctx;
	size_t chunk; /* index of the chunk being read */
	size_t pos;   /* its file offset */
	const char *file; /* its file's path, in messages when several */
	int seen_end;
	/* the segment being read: its frame and stack ids -> the trace's
	 * (smap lives in smaps[seg], kept for the walks) */
	uint32_t *fmap;
	size_t nfmap, fmap_cap;
	uint32_t nsmap;
	size_t smap_cap;
	uint32_t **smaps;
	size_t nsmaps, smaps_cap;
	uint32_t file_ix;
	int use_state;		/* apply its STATE chunk */
	int inl_any;		/* an INLINES chunk named a frame ... */
	uint64_t inl_last;	/* ... and this was the last (segment id) */
	struct trace_counters segc;	/* its END chunk */
	size_t segs_cap;
	/* within one recording a frame (address) and a stack are one id
	 * across its segments */
	struct idmap addr_ix;	/* address -> frame id */
	struct idmap stack_ix;	/* hash of frame ids -> stack id */
	uint64_t from, to;	/* the window kept (0 = unbounded) */
	const char *msg;
	/* INLINES, turned into frames once the whole file is read */
	struct inl_chain {	/* per chain */
		uint32_t frame;	/* the frame it is inlined at */
		uint32_t first, count; /* its names in inl_names */
	} *inl;
	size_t ninl, inl_cap;
	char **inl_names;			      /* all chains' names */
	size_t ninl_names, inl_names_cap;
};

/* The message buffer is per thread so that concurrent readers do not
 * overwrite each other's errors; *errmsg stays valid until the thread's
 * next trace__read(). */
static __thread char errbuf[192];

static int fail(struct reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	r->msg = errbuf;
	return err;
}

/* A corrupt chunk: the message names the chunk and where it starts. */
static int bad(struct reader *r, const char *what)
{
	if (r->file)
		return fail(r, -EBADMSG, "%s: chunk %zu at offset %zu: %s", r->file, r->chunk,
			    r->pos, what);
	return fail(r, -EBADMSG, "chunk %zu at offset %zu: %s", r->chunk, r->pos, what);
}

static int nomem(struct reader *r)
{
	r->msg = "out of memory";
	return -ENOMEM;
}

/* ---- chunk decoders ----------------------------------------------------- */

/* A length-prefixed string (@opt: 0 means none, else length + 1) copied
 * into the arena; *@s = NULL for none. 0 or -errno. */
static int get_string(struct reader *r, struct cursor *c, int opt, char **s)
{
	uint64_t len = cursor_varint(c);
	const uint8_t *p;

	*s = NULL;
	if (c->err)
		return bad(r, "truncated string");
	if (opt) {
		if (!len)
			return 0;
		len--;
	}
	p = cursor_bytes(c, len);
	if (!p)
		return bad(r, "string runs past the end of the chunk");
	*s = arena_strdup(r->t->arena, p, len);
	return *s ? 0 : nomem(r);
}

static int decode_meta(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	size_t i;
	int err;

	if (count > cursor_left(c) / 2)
		return bad(r, "record count exceeds chunk size");
	if (LIB_GROW(t->meta, r->meta_cap, t->nmeta + count))
		return nomem(r);
	for (i = 0; i < count; i++) {
		struct trace_meta *m = &t->meta[t->nmeta];

		if ((err = get_string(r, c, 0, (char **)&m->key)) ||
		    (err = get_string(r, c, 0, (char **)&m->value)))
			return err;
		t->nmeta++;
	}
	return 0;
}

/* THREADS and COMMS: (tid, name) into *@v (@n, @cap), indexed by @ix. */
static int decode_threads(struct reader *r, struct cursor *c, size_t count,
			  struct trace_thread **v, size_t *n, size_t *cap, struct idmap *ix_of)
{
	size_t i;
	int err;

	if (count > cursor_left(c) / 2)
		return bad(r, "record count exceeds chunk size");
	for (i = 0; i < count; i++) {
		uint64_t tid = cursor_varint(c);
		uint32_t ix = (uint32_t)*n;
		char *name;
		int found;

		if (c->err || tid > UINT32_MAX)
			return bad(r, "bad thread id");
		if ((err = get_string(r, c, 1, &name)))
			return err;
		if (*n >= UINT32_MAX - 1) /* ids in the map are u32 */
			return bad(r, "too many threads");
		found = idmap_get_or_add(ix_of, tid, &ix);
		if (found < 0 || LIB_GROW(*v, *cap, *n + 1))
			return nomem(r);
		if (!found) {
			(*v)[ix].tid = (uint32_t)tid;
			(*v)[ix].name = NULL;
			(*n)++;
		}
		/* the last name wins; a later "no name" forgets nothing */
		if (name)
			(*v)[ix].name = name;
	}
	return 0;
}

static int decode_tasks(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	size_t i;
	int err;

	if (count > cursor_left(c) / 2)
		return bad(r, "record count exceeds chunk size");
	for (i = 0; i < count; i++) {
		uint64_t id = cursor_varint(c);
		uint32_t ix = (uint32_t)t->ntasks;
		char *name;
		int found;

		if (c->err)
			return bad(r, "bad task id");
		if ((err = get_string(r, c, 1, &name)))
			return err;
		if (t->ntasks >= UINT32_MAX - 1) /* ids in the map are u32 */
			return bad(r, "too many tasks");
		found = idmap_get_or_add(&r->task_ix, id, &ix);
		if (found < 0 || LIB_GROW(t->tasks, r->tasks_cap, t->ntasks + 1))
			return nomem(r);
		if (!found) {
			t->tasks[ix].id = id;
			t->tasks[ix].name = NULL;
			t->ntasks++;
		}
		if (name)
			t->tasks[ix].name = name;
	}
	return 0;
}

/* The segment's stack map (local id -> the trace's), room for @n. */
static uint32_t *smap_room(struct reader *r, size_t n)
{
	uint32_t *m = r->smaps[r->nsmaps - 1];

	if (LIB_GROW(m, r->smap_cap, n ? n : 1))
		return NULL;
	r->smaps[r->nsmaps - 1] = m;
	return m;
}

static uint64_t hash_frames(const uint32_t *f, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;

	for (size_t i = 0; i < n; i++)
		h = lib_hash64(h ^ f[i]) + i;
	return h;
}

/* The stack just decoded at stack_frames[a .. b): an id of the trace for it,
 * the one of an identical stack of the same recording if there is one. */
static int intern_stack(struct reader *r, size_t a, size_t b, uint32_t *id)
{
	struct trace *t = r->t;
	uint64_t h = hash_frames(t->stack_frames + a, b - a);
	uint32_t old;

	if (idmap_find(&r->stack_ix, h, &old)) {
		uint32_t oa = t->stack_off[old], ob = t->stack_off[old + 1];

		if (ob - oa == b - a &&
		    !memcmp(t->stack_frames + oa, t->stack_frames + a, (b - a) * sizeof(uint32_t))) {
			*id = old;
			return 1;
		}
	}
	*id = (uint32_t)t->nstacks;
	t->stack_off[t->nstacks + 1] = (uint32_t)b;
	t->nstacks++;
	/* a colliding hash keeps the first stack: the second is not shared */
	if (!idmap_find(&r->stack_ix, h, &old) && idmap_set(&r->stack_ix, h, *id))
		return -ENOMEM;
	return 0;
}

static int decode_stacks(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	uint64_t first_frame, nf, first_stack, prev, total = 0;
	const uint8_t *depths;
	uint32_t *smap;
	size_t i, j, k;

	first_frame = cursor_varint(c);
	nf = cursor_varint(c);
	first_stack = cursor_varint(c);
	if (c->err)
		return bad(r, "truncated STACKS header");
	if (first_frame != r->nfmap || first_stack != r->nsmap)
		return bad(r, "STACKS chunk out of sequence");
	/* every frame and stack takes at least one byte */
	if (nf > cursor_left(c) || count > cursor_left(c) - nf)
		return bad(r, "record count exceeds chunk size");
	if (t->nframes + nf >= UINT32_MAX || t->nstacks + count >= UINT32_MAX ||
	    r->nfmap + nf >= UINT32_MAX || r->nsmap + count >= UINT32_MAX)
		return bad(r, "too many frames or stacks");

	if (LIB_GROW(t->frames, r->frames_cap, t->nframes + nf) ||
	    LIB_GROW(r->fmap, r->fmap_cap, r->nfmap + nf))
		return nomem(r);
	prev = 0;
	for (i = 0; i < nf; i++) {
		uint32_t id = (uint32_t)t->nframes;
		int found;

		prev += unzigzag(cursor_varint(c));
		found = idmap_get_or_add(&r->addr_ix, prev, &id);
		if (found < 0)
			return nomem(r);
		if (!found)
			t->frames[t->nframes++] =
				(struct trace_frame){.addr = prev, .kernel = trace_addr_is_kernel(prev)};
		r->fmap[r->nfmap + i] = id;
	}
	if (c->err)
		return bad(r, "truncated frame addresses");
	r->nfmap += nf;

	/* sum the depths first, so that the frame ids can be bounded by the
	 * bytes left before allocating room for them */
	depths = c->p;
	for (i = 0; i < count; i++) {
		uint64_t d = cursor_varint(c);

		if (d > cursor_left(c) || total + d > cursor_left(c)) {
			c->err = 1;
			break;
		}
		total += d;
	}
	if (c->err)
		return bad(r, "stack depths exceed chunk size");
	if (r->nstack_frames + total >= UINT32_MAX)
		return bad(r, "too many stack frames");
	if (LIB_GROW(t->stack_off, r->off_cap, t->nstacks + count + 1) ||
	    LIB_GROW(t->stack_frames, r->sf_cap, r->nstack_frames + total) ||
	    !(smap = smap_room(r, r->nsmap + count)))
		return nomem(r);

	{
		struct cursor dc = {.p = depths, .end = c->p};

		k = r->nstack_frames;
		prev = 0;
		t->stack_off[t->nstacks] = (uint32_t)k;
		for (i = 0; i < count; i++) {
			uint64_t d = cursor_varint(&dc);
			size_t a = k;
			int dup;

			for (j = 0; j < d; j++) {
				prev += unzigzag(cursor_varint(c));
				if (prev >= r->nfmap)
					return c->err ? bad(r, "truncated stack")
						      : bad(r, "stack refers to an "
							       "undefined frame");
				t->stack_frames[k++] = r->fmap[prev];
			}
			dup = intern_stack(r, a, k, &smap[r->nsmap + i]);
			if (dup < 0)
				return nomem(r);
			if (dup)
				k = a;	/* the frames of the copy go */
			t->stack_off[t->nstacks] = (uint32_t)k;
		}
	}
	if (c->err)
		return bad(r, "truncated stack");
	r->nstack_frames = k;
	r->nsmap += (uint32_t)count;
	return 0;
}

/* Keep the @n records of @size bytes at @v (each starting with its u64
 * time) that are in the window; how many. */
static size_t in_window(const struct reader *r, void *v, size_t n, size_t size)
{
	uint8_t *p = v, *q = v;

	if (!r->from && !r->to)
		return n;
	for (size_t i = 0; i < n; i++, p += size) {
		uint64_t time;

		memcpy(&time, p, sizeof(time));
		if (time < r->from || (r->to && time > r->to))
			continue;
		if (q != p)
			memmove(q, p, size);
		q += size;
	}
	return (size_t)(q - (uint8_t *)v) / size;
}

/* Check @count against the chunk before anything is allocated for it. */
static int check_samples(struct reader *r, struct cursor *c, size_t count)
{
	return count > cursor_left(c) / 6 ? bad(r, "record count exceeds chunk size") : 0;
}

/* Decode @count samples into @s (room checked by check_samples()); stack
 * ids must be below @nstacks, and become @smap's. */
static int decode_samples(struct reader *r, struct cursor *c, size_t count,
			  struct trace_sample *s, size_t nstacks, const uint32_t *smap)
{
	uint64_t v, prev = 0;
	size_t i;

	for (i = 0; i < count; i++) {
		prev += unzigzag(cursor_varint(c));
		s[i].time = prev;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return bad(r, "bad sample thread id");
		s[i].tid = (uint32_t)v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v >= nstacks)
			return c->err ? bad(r, "truncated samples")
				      : bad(r, "sample refers to an undefined stack");
		s[i].stack = smap[v];
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return bad(r, "bad sample weight");
		s[i].weight = (uint32_t)v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT16_MAX)
			return bad(r, "bad sampler");
		s[i].sampler = (uint16_t)v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT16_MAX)
			return bad(r, "bad sample flags");
		s[i].flags = (uint16_t)v;
	}
	if (c->err)
		return bad(r, "truncated samples");
	return 0;
}

/* A record takes 4 bytes at least; in POLLS one of 5 is up to 3 events. */
static int check_events(struct reader *r, struct cursor *c, size_t count, uint32_t type)
{
	size_t most = type == TRACE_CHUNK_POLLS ? cursor_left(c) / 5 * 3 + 2 : cursor_left(c) / 4;

	return count > most ? bad(r, "record count exceeds chunk size") : 0;
}

static int decode_events(struct reader *r, struct cursor *c, size_t count,
			 struct trace_event *e, int tid_delta)
{
	uint64_t v, prev = 0;
	size_t i;

	for (i = 0; i < count; i++) {
		prev += unzigzag(cursor_varint(c));
		e[i].time = prev;
	}
	prev = 0;
	for (i = 0; i < count; i++) {
		prev += unzigzag(cursor_varint(c));
		e[i].task = prev;
	}
	prev = 0;
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		/* POLLS: the change from the record before */
		if (tid_delta)
			v = prev + unzigzag(v);
		if (v > UINT32_MAX)
			return bad(r, "bad event thread id");
		e[i].tid = (uint32_t)v;
		prev = v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return bad(r, "bad event type");
		e[i].type = (uint32_t)v;
	}
	if (c->err)
		return bad(r, "truncated events");
	return 0;
}

/* POLLS: @count events from its records (trace_format.h), decoded into
 * the end of @e and spread forward as each whole poll becomes BEGIN,
 * (WAKE,) END: an event is written only where a record was already read,
 * as every record is at least one event. */
static int decode_polls(struct reader *r, struct cursor *c, size_t count,
			struct trace_event *e)
{
	uint64_t m = cursor_varint(c);
	struct trace_event *rec;
	size_t i, j = 0;
	int err;

	if (c->err || m > count || (count && !m))
		return bad(r, "bad record count in events");
	rec = e + (count - m);
	err = decode_events(r, c, m, rec, 1);
	if (err)
		return err;
	for (i = 0; i < m; i++) {
		size_t k = trace_rec_events(rec[i].type);
		uint64_t len = 0;

		/* the k events must leave records i + 1.. unread */
		if (j + k > count - m + i + 1)
			return bad(r, "more events than the chunk says");
		if (k > 1) {
			len = cursor_varint(c);
			if (c->err || len > rec[i].time)
				return bad(r, "bad poll length");
		}
		j += trace_rec_spread(rec[i], len, &e[j]);
	}
	if (c->err || j != count)
		return bad(r, "fewer events than the chunk says");
	return 0;
}

/* The events of an EVENTS, STATE or POLLS chunk. */
static int decode_any_events(struct reader *r, struct cursor *c, uint32_t type, size_t count,
			     struct trace_event *e)
{
	return type == TRACE_CHUNK_POLLS ? decode_polls(r, c, count, e)
					 : decode_events(r, c, count, e, 0);
}

static int load_samples(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	int err = check_samples(r, c, count);

	if (err)
		return err;
	if (LIB_GROW(t->samples, r->samples_cap, t->nsamples + count))
		return nomem(r);
	err = decode_samples(r, c, count, t->samples + t->nsamples, r->nsmap,
			     r->smaps[r->nsmaps - 1]);
	if (!err)
		t->nsamples += in_window(r, t->samples + t->nsamples, count, sizeof(*t->samples));
	return err;
}

static int load_events(struct reader *r, struct cursor *c, size_t count, uint32_t type)
{
	struct trace *t = r->t;
	int err = check_events(r, c, count, type);

	if (err)
		return err;
	if (LIB_GROW(t->events, r->events_cap, t->nevents + count))
		return nomem(r);
	err = decode_any_events(r, c, type, count, t->events + t->nevents);
	if (!err)
		t->nevents += in_window(r, t->events + t->nevents, count, sizeof(*t->events));
	return err;
}

static int decode_switches(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	struct trace_switch *s;
	uint64_t v, prev = 0;
	size_t i;

	if (count > cursor_left(c) / 5)
		return bad(r, "record count exceeds chunk size");
	if (LIB_GROW(t->switches, r->switches_cap, t->nswitches + count))
		return nomem(r);
	s = t->switches + t->nswitches;
	/* columns absent in older files read as 0 */
	memset(s, 0, count * sizeof(*s));
	for (i = 0; i < count; i++) {
		prev += unzigzag(cursor_varint(c));
		s[i].time = prev;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v && s[i].time + (v - 1) < s[i].time)
			return bad(r, "switch-in time past 2^64");
		s[i].time_in = v ? s[i].time + (v - 1) : 0;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return bad(r, "bad switch thread id");
		s[i].tid = (uint32_t)v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v >= r->nsmap)
			return c->err ? bad(r, "truncated switches")
				      : bad(r, "switch refers to an undefined stack");
		s[i].stack = r->smaps[r->nsmaps - 1][v];
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > 1)
			return bad(r, "bad switch preempted flag");
		s[i].preempted = (uint8_t)v;
	}
	/* files from before the run-queue columns end here */
	for (i = 0; i < count && cursor_left(c); i++) {
		v = cursor_varint(c);
		if (v && (s[i].time + (v - 1) < s[i].time ||
			  (s[i].time_in && s[i].time + (v - 1) > s[i].time_in)))
			return bad(r, "bad switch runnable time");
		s[i].runnable = v ? s[i].time + (v - 1) : 0;
	}
	for (i = 0; i < count && cursor_left(c); i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return bad(r, "bad switch holder thread id");
		s[i].holder = (uint32_t)v;
	}
	/* who held the CPU: absent in older files */
	for (i = 0; i < count; i++) {
		v = cursor_left(c) ? cursor_varint(c) : 0;
		if (v > TRACE_MAX_HOLDS || (v && (!s[i].runnable || !s[i].time_in)))
			return bad(r, "bad switch holder count");
		s[i].nhold = (uint8_t)v;
	}
	for (i = 0; i < count; i++) {
		uint64_t left = s[i].nhold ? s[i].time_in - s[i].runnable : 0;

		if (!s[i].nhold)
			continue;
		if (t->nholds + s[i].nhold >= UINT32_MAX)
			return bad(r, "too many switch holders");
		if (LIB_GROW(t->holds, r->holds_cap, t->nholds + s[i].nhold))
			return nomem(r);
		s[i].hold = (uint32_t)t->nholds;
		for (uint32_t k = 0; k < s[i].nhold; k++) {
			struct trace_hold *h = &t->holds[t->nholds++];

			v = cursor_varint(c);
			if (v > UINT32_MAX)
				return bad(r, "bad switch holder thread id");
			h->tid = (uint32_t)v;
			h->ns = cursor_varint(c);
			if (h->ns > left)
				return c->err ? bad(r, "truncated switches")
					      : bad(r, "switch holders past its wait");
			left -= h->ns;
		}
	}
	if (c->err)
		return bad(r, "truncated switches");
	t->nswitches += in_window(r, s, count, sizeof(*s));
	return 0;
}

/* A chunk's string table of @nstr strings into a new array *@strs (the
 * strings in the arena). 0 or -errno; the caller frees *@strs either way. */
static int get_strtab(struct reader *r, struct cursor *c, uint64_t nstr, char ***strs)
{
	size_t i;
	int err = 0;

	*strs = calloc(nstr ? nstr : 1, sizeof(**strs));
	if (!*strs)
		return nomem(r);
	for (i = 0; i < nstr && !err; i++)
		err = get_string(r, c, 0, &(*strs)[i]);
	return err;
}

static int decode_frames(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	uint64_t first, nstr, v;
	const char *what = NULL;
	char **strs;
	size_t i;
	int err = 0;

	first = cursor_varint(c);
	nstr = cursor_varint(c);
	if (c->err)
		return bad(r, "truncated FRAMES header");
	if (first > r->nfmap || count > r->nfmap - first)
		return bad(r, "FRAMES chunk names undefined frames");
	if (nstr > cursor_left(c) || count > cursor_left(c) / 4)
		return bad(r, "record count exceeds chunk size");
	err = get_strtab(r, c, nstr, &strs);
	if (err)
		goto out;
	/* (no pointer arithmetic on frames: it is NULL in a trace without
	 * stacks, where only an empty FRAMES chunk can get here) */
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (v > nstr)
			what = "bad frame symbol";
		else
			t->frames[r->fmap[first + i]].sym = v ? strs[v - 1] : NULL;
	}
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (v > nstr)
			what = "bad frame module";
		else
			t->frames[r->fmap[first + i]].module = v ? strs[v - 1] : NULL;
	}
	for (i = 0; i < count && !what; i++)
		t->frames[r->fmap[first + i]].offset = cursor_varint(c);
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (v > 1)
			what = "bad frame kernel flag";
		else
			t->frames[r->fmap[first + i]].kernel = (uint8_t)v;
	}
	if (!what && c->err)
		what = "truncated frames";
	if (what)
		err = bad(r, what);
out:
	free(strs);
	return err;
}

static int decode_inlines(struct reader *r, struct cursor *c, size_t count)
{
	uint64_t nstr, v, id = 0, total = 0;
	const char *what = NULL;
	size_t i, base = r->ninl;
	char **strs;
	int err = 0;

	nstr = cursor_varint(c);
	if (c->err)
		return bad(r, "truncated INLINES header");
	if (nstr > cursor_left(c) || count > cursor_left(c) / 2)
		return bad(r, "record count exceeds chunk size");
	err = get_strtab(r, c, nstr, &strs);
	if (err)
		goto out;
	if (LIB_GROW(r->inl, r->inl_cap, base + count)) {
		err = nomem(r);
		goto out;
	}
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (c->err)
			what = "truncated inlines";
		else if (v >= r->nfmap || id + v >= r->nfmap)
			what = "INLINES chunk names undefined frames";
		else if ((i || r->inl_any) && id + v <= (i ? id : r->inl_last))
			what = "INLINES chunk names a frame twice or out of order";
		id += v;
		if (!what)
			r->inl[base + i].frame = r->fmap[id];
	}
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (!v || v > TRACE_MAX_INLINE || v > cursor_left(c))
			what = "bad inline count";
		r->inl[base + i].first = (uint32_t)(r->ninl_names + total);
		r->inl[base + i].count = (uint32_t)v;
		total += v;
	}
	if (!what && (c->err || total > cursor_left(c)))
		what = "truncated inlines";
	if (!what && LIB_GROW(r->inl_names, r->inl_names_cap, r->ninl_names + total)) {
		err = nomem(r);
		goto out;
	}
	for (i = 0; i < total && !what; i++) {
		v = cursor_varint(c);
		if (v >= nstr)
			what = "bad inline name";
		else
			r->inl_names[r->ninl_names + i] = strs[v];
	}
	if (!what && c->err)
		what = "truncated inlines";
	if (what) {
		err = bad(r, what);
		goto out;
	}
	r->ninl += count;
	r->ninl_names += total;
	if (count) {
		r->inl_any = 1;
		r->inl_last = id;
	}
out:
	free(strs);
	return err;
}

/* Every frame with an inline chain becomes, in every stack, the chain's
 * functions as frames of their own, then itself (see TRACE_READ_NO_INLINE). */
static int expand_inlines(struct reader *r)
{
	struct trace *t = r->t;
	uint32_t *first = NULL, *cnt = NULL, *off = NULL, *sf = NULL;
	size_t i, j, k, nf0 = t->nframes, add = 0, total = 0;

	if (!r->ninl)
		return 0;
	first = calloc(nf0, sizeof(*first));
	cnt = calloc(nf0, sizeof(*cnt));
	if (!first || !cnt)
		goto nomem;
	for (i = 0; i < r->ninl; i++)
		add += r->inl[i].count;
	if (nf0 + add >= UINT32_MAX || LIB_GROW(t->frames, r->frames_cap, nf0 + add))
		goto nomem;
	/* the synthetic frames, after the recorded ones */
	for (i = 0; i < r->ninl; i++) {
		uint32_t f = r->inl[i].frame;

		if (cnt[f])
			continue;	/* the same frame in a later segment */
		first[f] = (uint32_t)t->nframes;
		cnt[f] = r->inl[i].count;
		for (k = 0; k < r->inl[i].count; k++) {
			struct trace_frame *x = &t->frames[t->nframes++];

			*x = t->frames[f];
			x->sym = r->inl_names[r->inl[i].first + k];
			x->offset = 0;
			x->inlined = 1;
		}
	}
	for (i = 0; i < r->nstack_frames; i++)
		total += 1 + cnt[t->stack_frames[i]];
	if (total >= UINT32_MAX)
		goto nomem;
	off = malloc((t->nstacks + 1) * sizeof(*off));
	sf = malloc((total ? total : 1) * sizeof(*sf));
	if (!off || !sf)
		goto nomem;
	for (i = 0, k = 0; i < t->nstacks; i++) {
		off[i] = (uint32_t)k;
		for (j = t->stack_off[i]; j < t->stack_off[i + 1]; j++) {
			uint32_t f = t->stack_frames[j], m;

			for (m = 0; m < cnt[f]; m++)
				sf[k++] = first[f] + m;
			sf[k++] = f;
		}
	}
	off[t->nstacks] = (uint32_t)k;
	free(t->stack_off);
	free(t->stack_frames);
	t->stack_off = off;
	t->stack_frames = sf;
	r->off_cap = t->nstacks + 1;
	r->sf_cap = total ? total : 1;
	r->nstack_frames = k;
	free(first);
	free(cnt);
	return 0;
nomem:
	free(first);
	free(cnt);
	free(off);
	free(sf);
	return nomem(r);
}

static int decode_end(struct reader *r, struct cursor *c)
{
	struct trace_counters *k = &r->segc;

	k->samples = cursor_varint(c);
	k->events = cursor_varint(c);
	k->lost_samples = cursor_varint(c);
	k->shim_drops = cursor_varint(c);
	k->start_time = cursor_varint(c);
	k->end_time = cursor_varint(c);
	if (c->err)
		return bad(r, "truncated END chunk");
	/* appended after the first version: absent in older files */
	k->switches = cursor_left(c) ? cursor_varint(c) : 0;
	if (c->err)
		return bad(r, "truncated END chunk");
	/* later versions may append counters */
	c->p = c->end;
	r->seen_end = 1;
	return 0;
}

/* Check the payload of the chunk at @h (checksum, one zstd frame of the
 * declared size), without decompressing it. */
static int check_chunk(struct reader *r, const uint8_t *h)
{
	uint32_t csize = get_le32(h + 8);
	uint32_t rsize = get_le32(h + 12);
	const uint8_t *payload = h + TRACE_CHUNK_HDR_SIZE;

	if (trace_xxh32(payload, csize, 0) != get_le32(h + 20))
		return bad(r, "checksum mismatch");
	if (r->seen_end)
		return bad(r, "data after the END chunk");
	if (ZSTD_findFrameCompressedSize(payload, csize) != csize ||
	    ZSTD_getFrameContentSize(payload, csize) != rsize)
		return bad(r, "payload is not one zstd frame of the declared size");
	return 0;
}

/* A zstd decompression context costs a ~100 KiB allocation and two CPUID
 * instructions (zstd probes for BMI2 at each creation; in a VM each traps
 * to the hypervisor), more than reading a small trace: one is kept for
 * the process between reads and walks, whatever thread made it. */
static _Atomic(ZSTD_DCtx *) spare_dctx;

static ZSTD_DCtx *dctx_get(void)
{
	ZSTD_DCtx *d = atomic_exchange(&spare_dctx, NULL);

	return d ? d : ZSTD_createDCtx();
}

static void dctx_put(ZSTD_DCtx *d)
{
	ZSTD_DCtx *none = NULL;

	/* (ZSTD_decompressDCtx starts each frame afresh: nothing carries
	 * over from the last user) */
	if (d && !atomic_compare_exchange_strong(&spare_dctx, &none, d))
		ZSTD_freeDCtx(d);
}

/* Decompress the checked chunk at @h into r->raw; a cursor over it. */
static int inflate(struct reader *r, const uint8_t *h, struct cursor *c)
{
	uint32_t csize = get_le32(h + 8);
	uint32_t rsize = get_le32(h + 12);
	size_t n;

	if (LIB_GROW(r->raw, r->raw_cap, rsize ? rsize : 1))
		return nomem(r);
	n = ZSTD_decompressDCtx(r->dctx, r->raw, rsize, h + TRACE_CHUNK_HDR_SIZE, csize);
	if (ZSTD_isError(n) || n != rsize)
		return bad(r, "undecodable zstd frame");
	c->p = r->raw;
	c->end = r->raw + rsize;
	c->err = 0;
	return 0;
}

/* Remember a chunk left on disk. */
static int defer(struct reader *r, struct src_list *l, const uint8_t *h)
{
	struct src_chunk *k;

	if (LIB_GROW(l->v, l->cap, l->n + 1))
		return nomem(r);
	k = &l->v[l->n++];
	k->pos = r->pos;
	k->index = r->chunk;
	k->csize = get_le32(h + 8);
	k->nstacks = r->nsmap;
	k->type = get_le32(h + 4);
	k->file = r->file_ix;
	k->seg = (uint32_t)(r->nsmaps - 1);
	return 0;
}

/* Check, decompress and decode the chunk at @h, whose header and payload are
 * known to be in the buffer; or check and remember it if it is left on
 * disk. */
static int read_chunk(struct reader *r, const uint8_t *h)
{
	uint32_t type = get_le32(h + 4);
	uint32_t count = get_le32(h + 16);
	struct cursor c;
	int err;

	err = check_chunk(r, h);
	if (err)
		return err;
	/* what was open at the segment's start: the segment before it, when
	 * read, has the same events at their own place */
	if (type == TRACE_CHUNK_STATE && !r->use_state)
		return 0;
	if (type == TRACE_CHUNK_SAMPLES && (r->flags & TRACE_READ_NO_SAMPLES)) {
		r->t->nsamples += count;
		return defer(r, &r->t->src->samples, h);
	}
	if ((type == TRACE_CHUNK_EVENTS || type == TRACE_CHUNK_STATE ||
	     type == TRACE_CHUNK_POLLS) &&
	    (r->flags & TRACE_READ_NO_EVENTS)) {
		r->t->nevents += count;
		return defer(r, &r->t->src->events, h);
	}
	err = inflate(r, h, &c);
	if (err)
		return err;
	switch (type) {
	case TRACE_CHUNK_META:
		err = decode_meta(r, &c, count);
		break;
	case TRACE_CHUNK_THREADS:
		err = decode_threads(r, &c, count, &r->t->threads, &r->t->nthreads,
				     &r->threads_cap, &r->thread_ix);
		break;
	case TRACE_CHUNK_COMMS:
		err = decode_threads(r, &c, count, &r->t->comms, &r->t->ncomms,
				     &r->comms_cap, &r->comm_ix);
		break;
	case TRACE_CHUNK_TASKS:
		err = decode_tasks(r, &c, count);
		break;
	case TRACE_CHUNK_STACKS:
		err = decode_stacks(r, &c, count);
		break;
	case TRACE_CHUNK_SAMPLES:
		err = load_samples(r, &c, count);
		break;
	case TRACE_CHUNK_EVENTS:
	case TRACE_CHUNK_STATE:
	case TRACE_CHUNK_POLLS:
		err = load_events(r, &c, count, type);
		break;
	case TRACE_CHUNK_FRAMES:
		err = decode_frames(r, &c, count);
		break;
	case TRACE_CHUNK_SWITCHES:
		err = decode_switches(r, &c, count);
		break;
	case TRACE_CHUNK_INLINES:
		err = decode_inlines(r, &c, count);
		break;
	case TRACE_CHUNK_END:
		err = decode_end(r, &c);
		break;
	default:
		/* a newer writer's chunk type, checked and skipped */
		return 0;
	}
	if (err)
		return err;
	if (c.p != c.end)
		return bad(r, "trailing bytes in chunk");
	return 0;
}

/* ---- whole file --------------------------------------------------------- */

/* Read up to @len bytes at the current offset; the bytes read (fewer only
 * at the end of the file), or -errno. */
static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
	size_t n = 0;

	while (n < len) {
		ssize_t got = read(fd, buf + n, len - n);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	return (ssize_t)n;
}

/* The same at @off (a walk: the file is read again where a chunk was). */
static ssize_t pread_full(int fd, uint8_t *buf, size_t len, uint64_t off)
{
	size_t n = 0;

	while (n < len) {
		ssize_t got = pread(fd, buf + n, len - n, (off_t)(off + n));

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	return (ssize_t)n;
}

static int read_failed(struct reader *r, ssize_t got)
{
	r->msg = "cannot read the trace file";
	return (int)got;
}

/* Check a chunk header (in r->cbuf); its payload size in *@csize. */
static int check_header(struct reader *r, uint32_t *csize)
{
	const uint8_t *h = r->cbuf;
	uint32_t rsize;

	if (get_le32(h) != TRACE_CHUNK_MAGIC)
		return bad(r, "bad chunk magic");
	if (trace_xxh32(h, 24, 0) != get_le32(h + 24))
		return bad(r, "header checksum mismatch");
	*csize = get_le32(h + 8);
	rsize = get_le32(h + 12);
	if (rsize > TRACE_MAX_RAW)
		return bad(r, "raw size over 1 GiB");
	if (!*csize || *csize > ZSTD_compressBound(rsize))
		return bad(r, "compressed size does not fit the raw size");
	return 0;
}

/* A whole-file failure (no chunk to name): @what, after the file's path
 * when several are read. */
static int fail_file(struct reader *r, int err, const char *what)
{
	if (r->file)
		return fail(r, err, "%s: %s", r->file, what);
	return fail(r, err, "%s", what);
}

static ssize_t get_bytes(int fd, uint8_t *buf, size_t len, uint64_t off, int seq)
{
	return seq ? read_full(fd, buf, len) : pread_full(fd, buf, len, off);
}

/* Check the file header of a segment at @pos (@got bytes of it in @fh): 0,
 * 1 if the file ends there (cut inside a header after an END), or -errno. */
static int check_file_header(struct reader *r, const uint8_t *fh, ssize_t got, uint64_t pos)
{
	uint32_t version;

	if (memcmp(fh, TRACE_MAGIC, got < 8 ? (size_t)got : 8)) {
		if (!pos)
			return fail_file(r, -EBADMSG, "bad file magic");
		r->pos = (size_t)pos;
		return bad(r, "data after the END chunk");
	}
	if (got < TRACE_FILE_HDR_SIZE) {
		if (pos)
			return 1;
		return fail_file(r, -EBADMSG, "file shorter than the trace header");
	}
	version = get_le32(fh + 8);
	if (version < TRACE_VERSION_MIN || version > TRACE_VERSION) {
		if (r->file)
			return fail(r, -EPROTONOSUPPORT,
				    "%s: trace format version %u not supported (this build "
				    "reads %u to %u)", r->file, version, TRACE_VERSION_MIN,
				    TRACE_VERSION);
		return fail(r, -EPROTONOSUPPORT,
			    "trace format version %u not supported (this build reads %u to %u)",
			    version, TRACE_VERSION_MIN, TRACE_VERSION);
	}
	return 0;
}

/* Read the next chunk at @pos (or next in the stream, @seq) into r->cbuf,
 * checking its header: 1 and its payload size in *@csize, 0 if the file
 * ends before it is whole (cut short), or -errno. */
static int next_chunk(struct reader *r, int fd, uint64_t pos, int seq, uint32_t *csize)
{
	ssize_t got;
	int err;

	r->pos = (size_t)pos;
	if (LIB_GROW(r->cbuf, r->cbuf_cap, TRACE_CHUNK_HDR_SIZE))
		return nomem(r);
	got = get_bytes(fd, r->cbuf, TRACE_CHUNK_HDR_SIZE, pos, seq);
	if (got < 0)
		return read_failed(r, got);
	if (got < TRACE_CHUNK_HDR_SIZE)
		return 0;
	err = check_header(r, csize);
	if (err)
		return err;
	if (LIB_GROW(r->cbuf, r->cbuf_cap, (size_t)TRACE_CHUNK_HDR_SIZE + *csize))
		return nomem(r);
	got = get_bytes(fd, r->cbuf + TRACE_CHUNK_HDR_SIZE, *csize, pos + TRACE_CHUNK_HDR_SIZE,
			seq);
	if (got < 0)
		return read_failed(r, got);
	/* an intact header whose payload is cut: the file ends here */
	return (size_t)got < *csize ? 0 : 1;
}

/* Read a segment's chunks from @pos (after its file header) up to its END,
 * @end, or the last whole chunk. */
static int parse_chunks(struct reader *r, int fd, uint64_t pos, uint64_t end, int seq)
{
	uint32_t csize;
	int err;

	while (pos < end) {
		err = next_chunk(r, fd, pos, seq, &csize);
		if (err <= 0)
			return err;
		err = read_chunk(r, r->cbuf);
		if (err)
			return err;
		r->chunk++;
		r->t->chunks++;
		pos += TRACE_CHUNK_HDR_SIZE + csize;
		if (r->seen_end)
			break;
	}
	return 0;
}

/* A segment found by scan_file(): where it is, and what its first chunk
 * and its END say. */
struct seg_at {
	uint32_t file;
	uint64_t end;		/* past its last whole chunk */
	size_t chunk;		/* index of its first chunk in the file */
	struct trace_segment info;
	int dup;		/* a copy of one read instead */
};

struct seg_list {
	struct seg_at *v;
	size_t n, cap;
};

/* What the segment's first META chunk (in r->cbuf) says about it. */
static int seg_meta(struct reader *r, struct trace_segment *g)
{
	struct trace *real = r->t, scratch = {0};
	struct trace_arena arena = {0};
	size_t cap = r->meta_cap;
	struct cursor c;
	int err;

	scratch.arena = &arena;
	r->t = &scratch;
	r->meta_cap = 0;
	err = inflate(r, r->cbuf, &c);
	if (!err)
		err = decode_meta(r, &c, get_le32(r->cbuf + 16));
	r->t = real;
	r->meta_cap = cap;
	for (size_t i = 0; !err && i < scratch.nmeta; i++) {
		const char *k = scratch.meta[i].key, *v = scratch.meta[i].value;

		if (!strcmp(k, TRACE_META_RECORDING)) {
			g->recording = arena_strdup(real->arena, (const uint8_t *)v, strlen(v));
			if (!g->recording)
				err = nomem(r);
		} else if (!strcmp(k, TRACE_META_SEGMENT)) {
			g->index = strtoull(v, NULL, 10);
		} else if (!strcmp(k, TRACE_META_SEGMENT_START)) {
			g->start = strtoull(v, NULL, 10);
		} else if (!strcmp(k, TRACE_META_CLOCK_REALTIME)) {
			g->wall_offset = strtoll(v, NULL, 10);
		}
	}
	free(scratch.meta);
	arena_free_blocks(&arena);
	return err;
}

/* Find the segments of the regular file @fd (@size bytes): one pass over
 * the chunk headers, decoding only each segment's first META and its END. */
static int scan_file(struct reader *r, int fd, uint32_t file, uint64_t size, struct seg_list *l)
{
	uint8_t fh[TRACE_FILE_HDR_SIZE];
	uint64_t pos = 0;
	int err;

	r->chunk = 0;
	for (;;) {
		struct seg_at g = {.file = file, .chunk = r->chunk};
		uint64_t p = pos + TRACE_FILE_HDR_SIZE;
		uint32_t csize;
		ssize_t got = pread_full(fd, fh, sizeof(fh), pos);

		if (got < 0)
			return read_failed(r, got);
		if (!got && pos)
			return 0;
		err = check_file_header(r, fh, got, pos);
		if (err)
			return err < 0 ? err : 0;
		g.info.file = r->file;
		g.info.offset = pos;
		memset(&r->segc, 0, sizeof(r->segc));
		r->seen_end = 0;
		while (p < size) {
			uint32_t type;

			err = next_chunk(r, fd, p, 0, &csize);
			if (err < 0)
				return err;
			if (!err)
				break;
			type = get_le32(r->cbuf + 4);
			err = check_chunk(r, r->cbuf);
			if (!err && type == TRACE_CHUNK_META && p == pos + TRACE_FILE_HDR_SIZE)
				err = seg_meta(r, &g.info);
			if (!err && type == TRACE_CHUNK_END) {
				struct cursor c;

				err = inflate(r, r->cbuf, &c);
				if (!err)
					err = decode_end(r, &c);
			}
			if (err)
				return err;
			r->chunk++;
			p += TRACE_CHUNK_HDR_SIZE + csize;
			if (r->seen_end)
				break;
		}
		g.end = p;
		g.info.complete = r->seen_end;
		if (!g.info.start)
			g.info.start = r->segc.start_time;
		g.info.end = r->seen_end ? r->segc.end_time : 0;
		if (LIB_GROW(l->v, l->cap, l->n + 1))
			return nomem(r);
		l->v[l->n++] = g;
		r->seen_end = 0;
		/* what follows a segment cut short is not a segment */
		if (!g.info.complete)
			return 0;
		pos = p;
	}
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg_at *x = a, *y = b;

	if (x->info.start != y->info.start)
		return x->info.start < y->info.start ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->info.offset < y->info.offset ? -1 : x->info.offset > y->info.offset;
}

static int same_recording(const struct trace_segment *a, const struct trace_segment *b)
{
	return a && b && a->recording && b->recording && !strcmp(a->recording, b->recording);
}

/* Mark the copies: of two segments with one recording and index, keep the
 * complete one, else the longer. */
static void mark_dups(struct seg_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		for (size_t j = i + 1; j < l->n && !l->v[i].dup; j++) {
			struct seg_at *x = &l->v[i], *y = &l->v[j];
			int y_better;

			if (y->dup || !same_recording(&x->info, &y->info) ||
			    x->info.index != y->info.index)
				continue;
			y_better = y->info.complete != x->info.complete
					   ? y->info.complete
					   : y->end - y->info.offset > x->end - x->info.offset;
			if (y_better)
				x->dup = 1;
			else
				y->dup = 1;
		}
}

static int add_meta(struct reader *r, const char *key, const char *value)
{
	struct trace *t = r->t;
	char *k, *v;

	if (LIB_GROW(t->meta, r->meta_cap, t->nmeta + 1))
		return nomem(r);
	k = arena_strdup(t->arena, (const uint8_t *)key, strlen(key));
	v = arena_strdup(t->arena, (const uint8_t *)value, strlen(value));
	if (!k || !v)
		return nomem(r);
	t->meta[t->nmeta++] = (struct trace_meta){.key = k, .value = v};
	return 0;
}

/* Start reading segment @g, after @prev (the segment read before it, or
 * NULL): its ids start afresh; within one recording frames and stacks are
 * shared; its STATE applies unless @prev is the segment just before it. */
static int seg_begin(struct reader *r, const struct trace_segment *g,
		     const struct trace_segment *prev)
{
	struct trace *t = r->t;
	struct trace_segment *s;

	if (!same_recording(g, prev)) {
		idmap_release(&r->addr_ix);
		idmap_release(&r->stack_ix);
	}
	r->use_state = !(same_recording(g, prev) && prev->index + 1 == g->index);
	if (prev && prev->end && g->start > prev->end && r->use_state) {
		char v[48];
		int err;

		snprintf(v, sizeof(v), "%llu-%llu", (unsigned long long)prev->end,
			 (unsigned long long)g->start);
		err = add_meta(r, TRACE_META_SEGMENT_GAP, v);
		if (err)
			return err;
	}
	r->nfmap = 0;
	r->nsmap = 0;
	r->smap_cap = 0;
	r->inl_any = 0;
	r->seen_end = 0;
	memset(&r->segc, 0, sizeof(r->segc));
	if (LIB_GROW(r->smaps, r->smaps_cap, r->nsmaps + 1) ||
	    LIB_GROW(t->segments, r->segs_cap, t->nsegments + 1))
		return nomem(r);
	r->smaps[r->nsmaps++] = NULL;
	s = &t->segments[t->nsegments++];
	*s = *g;
	s->state_used = r->use_state;
	return 0;
}

static void seg_end(struct reader *r)
{
	struct trace *t = r->t;
	struct trace_segment *s = &t->segments[t->nsegments - 1];
	struct trace_counters *c = &t->counters, *k = &r->segc;

	s->complete = r->seen_end;
	if (!s->complete)
		return;
	s->end = k->end_time;
	if (!s->start)
		s->start = k->start_time;
	c->samples += k->samples;
	c->events += k->events;
	c->lost_samples += k->lost_samples;
	c->shim_drops += k->shim_drops;
	c->switches += k->switches;
	if (k->start_time && (!c->start_time || k->start_time < c->start_time))
		c->start_time = k->start_time;
	if (k->end_time > c->end_time)
		c->end_time = k->end_time;
}

/* A pipe: segments in the order they come, no copies looked for. */
static int parse_stream(struct reader *r, int fd)
{
	uint8_t fh[TRACE_FILE_HDR_SIZE];
	uint64_t pos = 0;
	int err;

	for (;;) {
		struct trace_segment g = {.file = r->file, .offset = pos};
		ssize_t got = read_full(fd, fh, sizeof(fh));

		if (got < 0)
			return read_failed(r, got);
		if (!got && pos)
			return 0;
		err = check_file_header(r, fh, got, pos);
		if (err)
			return err < 0 ? err : 0;
		/* only the first applies its STATE: the rest follow it */
		err = seg_begin(r, &g, NULL);
		if (err)
			return err;
		r->use_state = r->t->nsegments == 1;
		r->t->segments[r->t->nsegments - 1].state_used = r->use_state;
		err = parse_chunks(r, fd, pos + TRACE_FILE_HDR_SIZE, UINT64_MAX, 1);
		if (err)
			return err;
		seg_end(r);
		if (!r->seen_end)
			return 0;
		pos = r->pos + TRACE_CHUNK_HDR_SIZE + get_le32(r->cbuf + 8);
	}
}

static int cmp_thread(const void *a, const void *b)
{
	uint32_t x = ((const struct trace_thread *)a)->tid;
	uint32_t y = ((const struct trace_thread *)b)->tid;

	return (x > y) - (x < y);
}

static int cmp_task(const void *a, const void *b)
{
	uint64_t x = ((const struct trace_task *)a)->id;
	uint64_t y = ((const struct trace_task *)b)->id;

	return (x > y) - (x < y);
}

static void src_free(struct trace_src *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfds; i++)
		if (s->fds[i] >= 0)
			close(s->fds[i]);
	free(s->fds);
	free(s->names);
	for (size_t i = 0; i < s->nsmap; i++)
		free(s->smap[i]);
	free(s->smap);
	free(s->samples.v);
	free(s->events.v);
	free(s->cbuf);
	free(s->raw);
	free(s->recs);
	dctx_put(s->dctx);
	free(s);
}

/* Open @path for reading, refusing a directory. The fd or -errno. */
static int open_trace_file(struct reader *r, const char *path, int *regular, uint64_t *size)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		fail_file(r, err, "cannot open the trace file");
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		fail_file(r, err, "cannot stat the trace file");
		close(fd);
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		fail_file(r, -EISDIR, "the trace path is a directory");
		close(fd);
		return -EISDIR;
	}
	*regular = S_ISREG(st.st_mode);
	*size = (uint64_t)st.st_size;
	return fd;
}

/* ---- inputs ------------------------------------------------------------- */

struct inputs {
	char **v;	/* paths, in the arena */
	size_t n, cap;
};

static int input_add(struct reader *r, struct inputs *in, const char *path)
{
	char *p = arena_strdup(r->t->arena, (const uint8_t *)path, strlen(path));

	if (!p || LIB_GROW(in->v, in->cap, in->n + 1))
		return nomem(r);
	in->v[in->n++] = p;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A trace file in a directory: *.d9 (segments) or *.data (recordings,
 * dumps); not hidden (a segment being written is ".NAME.tmp"). */
static int trace_name(const char *n)
{
	size_t len = strlen(n);

	return n[0] != '.' && ((len > 3 && !strcmp(n + len - 3, ".d9")) ||
			       (len > 5 && !strcmp(n + len - 5, ".data")));
}

/* @path, or the trace files in it if it is a directory, sorted by name. */
static int expand(struct reader *r, struct inputs *in, const char *path)
{
	struct stat st;
	struct dirent *e;
	size_t first = in->n;
	DIR *d;
	int err = 0;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return input_add(r, in, path);
	d = opendir(path);
	if (!d) {
		err = -errno;
		r->file = path;
		fail_file(r, err, "cannot read the directory");
		return err;
	}
	while (!err && (e = readdir(d))) {
		char buf[4096];

		if (!trace_name(e->d_name))
			continue;
		if ((size_t)snprintf(buf, sizeof(buf), "%s/%s", path, e->d_name) >= sizeof(buf))
			continue;
		if (stat(buf, &st) || !S_ISREG(st.st_mode))
			continue;
		err = input_add(r, in, buf);
	}
	closedir(d);
	if (err)
		return err;
	if (in->n == first) {
		r->file = path;
		return fail_file(r, -ENOENT, "no trace files (*.d9, *.data) in the directory");
	}
	qsort(in->v + first, in->n - first, sizeof(*in->v), name_cmp);
	return 0;
}

/* The fd of input @i: open already, or opened again (closing the one
 * opened again before, *@cur). The fd, or -errno after saying why. */
static int input_fd(struct reader *r, int *fds, char *const *names, uint32_t i, int *cur)
{
	int fd;

	if (fds[i] >= 0)
		return fds[i];
	if (*cur >= 0) {
		close(fds[*cur]);
		fds[*cur] = -1;
		*cur = -1;
	}
	fd = open(names[i], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		r->file = names[i];
		return fail_file(r, fd, "cannot open the trace file again");
	}
	fds[i] = fd;
	*cur = (int)i;
	return fd;
}

/* Read the inputs: scan every file for its segments, order them by time,
 * then read each once. */
static int read_inputs(struct reader *r, const struct inputs *in,
		       const struct trace_read_opts *o, int multi)
{
	struct trace *t = r->t;
	struct seg_list l = {0};
	struct trace_segment *kept = NULL, *prev = NULL;
	int *fds = calloc(in->n, sizeof(*fds));
	uint64_t *sizes = calloc(in->n, sizeof(*sizes));
	size_t i, nkept = 0;
	int err = 0, cur = -1;

	if (!fds || !sizes) {
		err = nomem(r);
		goto out;
	}
	for (i = 0; i < in->n; i++)
		fds[i] = -1;
	/* each file is scanned, and closed unless it is the only one */
	for (i = 0; i < in->n && !err; i++) {
		int reg = 0, fd;

		r->file = multi ? in->v[i] : NULL;
		fd = open_trace_file(r, in->v[i], &reg, &sizes[i]);
		if (fd < 0) {
			err = fd;
			break;
		}
		/* a pipe cannot be read twice: load everything from it, in
		 * order */
		if (!reg && in->n == 1) {
			r->flags = 0;
			err = parse_stream(r, fd);
			close(fd);
			goto out;
		}
		if (!reg)
			err = fail(r, -EINVAL, "several inputs must all be regular files");
		else
			err = scan_file(r, fd, (uint32_t)i, sizes[i], &l);
		if (in->n == 1)
			fds[i] = fd;
		else
			close(fd);
	}
	if (err)
		goto out;
	qsort(l.v, l.n, sizeof(*l.v), seg_cmp);
	mark_dups(&l);
	kept = calloc(l.n ? l.n : 1, sizeof(*kept));
	if (!kept) {
		err = nomem(r);
		goto out;
	}
	for (i = 0; i < l.n; i++)
		if (!l.v[i].dup)
			kept[nkept++] = l.v[i].info;
	t->dup_segments = l.n - nkept;
	if (o && o->window && nkept) {
		err = o->window(o->ctx, kept, nkept, &r->from, &r->to);
		if (err) {
			r->msg = o->why ? o->why : "bad time window";
			goto out;
		}
		t->from = r->from;
		t->to = r->to;
	}
	if (r->flags) {
		t->src = calloc(1, sizeof(*t->src));
		if (!t->src) {
			err = nomem(r);
			goto out;
		}
	}
	for (i = 0; i < l.n && !err; i++) {
		struct seg_at *g = &l.v[i];

		if (g->dup)
			continue;
		/* wholly before the window: the next segment read brings
		 * its own state */
		if (r->from && g->info.end && g->info.end < r->from)
			continue;
		/* past it: the first such may still complete an interval
		 * begun in it */
		if (r->to && prev && prev->start > r->to)
			break;
		r->file = multi ? in->v[g->file] : NULL;
		r->file_ix = g->file;
		r->chunk = g->chunk;
		err = seg_begin(r, &g->info, prev);
		if (!err) {
			int fd = input_fd(r, fds, in->v, g->file, &cur);

			err = fd < 0 ? fd
				     : parse_chunks(r, fd, g->info.offset + TRACE_FILE_HDR_SIZE,
						    g->end, 0);
		}
		if (!err) {
			seg_end(r);
			prev = &t->segments[t->nsegments - 1];
		}
	}
out:
	/* the walks read the files again: keep them (a cut file's segment
	 * may be all there is) */
	if (!err && t->src && (t->src->samples.n || t->src->events.n) &&
	    !(t->src->names = calloc(in->n, sizeof(char *))))
		err = nomem(r);
	if (!err && t->src && t->src->names) {
		/* (the paths are in the trace's arena) */
		memcpy(t->src->names, in->v, in->n * sizeof(char *));
		t->src->fds = fds;
		t->src->nfds = in->n;
		t->src->multi = multi;
		t->src->cur = cur;
		fds = NULL;
	}
	for (i = 0; fds && i < in->n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(sizes);
	free(l.v);
	free(kept);
	return err;
}

int trace__read_paths(const char *const *paths, size_t npaths,
		      const struct trace_read_opts *o, struct trace **out,
		      const char **errmsg)
{
	struct reader r = {0};
	struct inputs in = {0};
	unsigned int flags = o ? o->flags : 0;
	size_t i;
	int err = 0, multi;

	if (errmsg)
		*errmsg = NULL;
	if (!paths || !npaths || !out)
		return -EINVAL;
	*out = NULL;
	r.t = calloc(1, sizeof(*r.t));
	if (r.t)
		r.t->arena = calloc(1, sizeof(*r.t->arena));
	r.dctx = dctx_get();
	if (!r.t || !r.t->arena || !r.dctx) {
		err = nomem(&r);
		goto out;
	}
	r.flags = flags & (TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS);
	for (i = 0; i < npaths && !err; i++)
		err = expand(&r, &in, paths[i]);
	if (err)
		goto out;
	multi = in.n > 1 || npaths > 1 || strcmp(in.v[0], paths[0]);
	err = read_inputs(&r, &in, o, multi);
	if (err)
		goto out;
	r.t->complete = r.t->nsegments > 0;
	for (i = 0; i < r.t->nsegments; i++)
		r.t->complete &= r.t->segments[i].complete;
	/* a segment cut short: the times come from the records */
	if (!r.t->complete)
		r.t->counters.start_time = r.t->counters.end_time = 0;
	if (r.from && r.t->counters.start_time && r.t->counters.start_time < r.from)
		r.t->counters.start_time = r.from;
	if (r.to && r.t->counters.end_time > r.to)
		r.t->counters.end_time = r.to;

	/* stack i spans stack_off[i] .. stack_off[i + 1], also for i = 0 of
	 * an empty trace: keep one offset */
	if (!r.t->stack_off && LIB_GROW(r.t->stack_off, r.off_cap, 1)) {
		err = nomem(&r);
		goto out;
	}
	if (r.t->nstacks == 0)
		r.t->stack_off[0] = 0;
	if (!(flags & TRACE_READ_NO_INLINE)) {
		err = expand_inlines(&r);
		if (err)
			goto out;
	}
	if (r.t->nthreads > 1)
		qsort(r.t->threads, r.t->nthreads, sizeof(*r.t->threads), cmp_thread);
	if (r.t->ncomms > 1)
		qsort(r.t->comms, r.t->ncomms, sizeof(*r.t->comms), cmp_thread);
	if (r.t->ntasks > 1)
		qsort(r.t->tasks, r.t->ntasks, sizeof(*r.t->tasks), cmp_task);
out:
	free(in.v);
	free(r.cbuf);
	free(r.raw);
	free(r.fmap);
	dctx_put(r.dctx);
	idmap_release(&r.thread_ix);
	idmap_release(&r.comm_ix);
	idmap_release(&r.task_ix);
	idmap_release(&r.addr_ix);
	idmap_release(&r.stack_ix);
	free(r.inl);
	free(r.inl_names);
	if (!err && r.t->src) {
		r.t->src->smap = r.smaps;
		r.t->src->nsmap = r.nsmaps;
	} else {
		for (i = 0; i < r.nsmaps; i++)
			free(r.smaps[i]);
		free(r.smaps);
	}
	if (err) {
		trace__free(r.t);
		if (errmsg)
			*errmsg = r.msg;
		return err;
	}
	*out = r.t;
	return 0;
}

int trace__read_opts(const char *path, unsigned int flags, struct trace **out,
		     const char **errmsg)
{
	struct trace_read_opts o = {.flags = flags};

	if (errmsg)
		*errmsg = NULL;
	if (!path)
		return -EINVAL;
	return trace__read_paths(&path, 1, &o, out, errmsg);
}

int trace__read(const char *path, struct trace **out, const char **errmsg)
{
	return trace__read_opts(path, 0, out, errmsg);
}

void trace__free(struct trace *t)
{
	if (!t)
		return;
	free(t->meta);
	free(t->threads);
	free(t->comms);
	free(t->tasks);
	free(t->frames);
	free(t->stack_off);
	free(t->stack_frames);
	free(t->samples);
	free(t->events);
	free(t->switches);
	free(t->holds);
	free(t->segments);
	arena_free(t->arena);
	src_free(t->src);
	free(t);
}

/* ---- walks -------------------------------------------------------------- */

/* Read chunk @k of @s again, check it and decode its @rec_size-byte records
 * (samples or events, by @type) into s->recs; their number in *@n. */
static int walk_chunk(struct trace_src *s, struct reader *r, const struct src_chunk *k,
		      size_t rec_size, uint32_t type, size_t *n)
{
	size_t len = (size_t)TRACE_CHUNK_HDR_SIZE + k->csize;
	uint32_t csize, count;
	struct cursor c;
	ssize_t got;
	int fd, err;

	r->chunk = k->index;
	r->pos = (size_t)k->pos;
	r->file = s->multi ? s->names[k->file] : NULL;
	if (LIB_GROW(s->cbuf, s->cbuf_cap, len))
		return nomem(r);
	r->cbuf = s->cbuf;
	fd = input_fd(r, s->fds, s->names, k->file, &s->cur);
	if (fd < 0)
		return fd;
	got = pread_full(fd, s->cbuf, len, k->pos);
	if (got < 0)
		return read_failed(r, got);
	if ((size_t)got < len)
		return fail(r, -EIO, "chunk %zu at offset %zu: the file was cut short "
			    "since it was opened", r->chunk, r->pos);
	err = check_header(r, &csize);
	if (!err && (csize != k->csize || get_le32(s->cbuf + 4) != k->type))
		err = fail(r, -EIO, "chunk %zu at offset %zu: the file changed since "
			   "it was opened", r->chunk, r->pos);
	if (!err)
		err = check_chunk(r, s->cbuf);
	if (!err)
		err = inflate(r, s->cbuf, &c);
	if (err)
		return err;
	count = get_le32(s->cbuf + 16);
	err = type == TRACE_CHUNK_SAMPLES ? check_samples(r, &c, count)
					  : check_events(r, &c, count, k->type);
	if (err)
		return err;
	if (lib_grow(&s->recs, &s->recs_cap, count ? count : 1, rec_size))
		return nomem(r);
	err = type == TRACE_CHUNK_SAMPLES
		  ? decode_samples(r, &c, count, s->recs, k->nstacks, s->smap[k->seg])
		  : decode_any_events(r, &c, k->type, count, s->recs);
	if (err)
		return err;
	if (c.p != c.end)
		return bad(r, "trailing bytes in chunk");
	*n = in_window(r, s->recs, count, rec_size);
	return 0;
}

/* Walk the chunks of @l through @sfn (samples) or @efn (events). */
static int walk(const struct trace *t, const struct src_list *l, trace_sample_fn sfn,
		trace_event_fn efn, void *ctx)
{
	size_t rec_size = sfn ? sizeof(struct trace_sample) : sizeof(struct trace_event);
	uint32_t type = sfn ? TRACE_CHUNK_SAMPLES : TRACE_CHUNK_EVENTS;
	struct trace_src *s = t->src;
	struct reader r = {0};
	size_t i, n = 0;
	int err = 0;

	s->failed = 0;
	if (!s->dctx && !(s->dctx = dctx_get()))
		err = nomem(&r);
	/* the reader borrows the walk's buffers */
	r.t = (struct trace *)t;
	r.from = t->from;
	r.to = t->to;
	r.dctx = s->dctx;
	r.raw = s->raw;
	r.raw_cap = s->raw_cap;
	for (i = 0; i < l->n && !err; i++) {
		err = walk_chunk(s, &r, &l->v[i], rec_size, type, &n);
		s->raw = r.raw;
		s->raw_cap = r.raw_cap;
		if (!err && n)
			err = sfn ? sfn(ctx, s->recs, n) : efn(ctx, s->recs, n);
		else if (err && r.msg) {
			s->failed = 1;
			snprintf(s->msg, sizeof(s->msg), "%s", r.msg);
		}
	}
	s->raw = r.raw;
	s->raw_cap = r.raw_cap;
	return err;
}

/* In-memory records go in batches too, so that callers see one shape. */
#define MEM_BATCH 65536

int trace__for_each_sample(const struct trace *t, trace_sample_fn fn, void *ctx)
{
	size_t i, n;
	int err;

	if (!t || !fn)
		return -EINVAL;
	if (t->src && t->src->samples.n)
		return walk(t, &t->src->samples, fn, NULL, ctx);
	if (t->src)
		t->src->failed = 0;
	for (i = 0; t->samples && i < t->nsamples; i += n) {
		n = t->nsamples - i < MEM_BATCH ? t->nsamples - i : MEM_BATCH;
		err = fn(ctx, t->samples + i, n);
		if (err)
			return err;
	}
	return 0;
}

int trace__for_each_event(const struct trace *t, trace_event_fn fn, void *ctx)
{
	size_t i, n;
	int err;

	if (!t || !fn)
		return -EINVAL;
	if (t->src && t->src->events.n)
		return walk(t, &t->src->events, NULL, fn, ctx);
	if (t->src)
		t->src->failed = 0;
	for (i = 0; t->events && i < t->nevents; i += n) {
		n = t->nevents - i < MEM_BATCH ? t->nevents - i : MEM_BATCH;
		err = fn(ctx, t->events + i, n);
		if (err)
			return err;
	}
	return 0;
}

const char *trace__error(const struct trace *t)
{
	return t && t->src && t->src->failed ? t->src->msg : NULL;
}

/* ---- helpers ------------------------------------------------------------ */

const char *trace__meta(const struct trace *t, const char *key)
{
	size_t i;

	if (!t || !key)
		return NULL;
	for (i = t->nmeta; i-- > 0;)
		if (!strcmp(t->meta[i].key, key))
			return t->meta[i].value;
	return NULL;
}

/*
 * trace__read() sorts threads and tasks by id, so the lookups bisect; a trace
 * built by hand (arena == NULL, e.g. in a test) may be in any order and is
 * scanned.
 */
const char *trace__task_name(const struct trace *t, uint64_t task)
{
	size_t lo = 0, hi, i;

	if (!t)
		return NULL;
	if (!t->arena) {
		for (i = 0; i < t->ntasks; i++)
			if (t->tasks[i].id == task)
				return t->tasks[i].name;
		return NULL;
	}
	for (hi = t->ntasks; lo < hi;) {
		i = lo + (hi - lo) / 2;
		if (t->tasks[i].id == task)
			return t->tasks[i].name;
		if (t->tasks[i].id < task)
			lo = i + 1;
		else
			hi = i;
	}
	return NULL;
}

static const char *thread_in(const struct trace *t, const struct trace_thread *v, size_t n,
			     uint32_t tid)
{
	size_t lo = 0, hi, i;

	if (!t->arena) {
		for (i = 0; i < n; i++)
			if (v[i].tid == tid)
				return v[i].name;
		return NULL;
	}
	for (hi = n; lo < hi;) {
		i = lo + (hi - lo) / 2;
		if (v[i].tid == tid)
			return v[i].name;
		if (v[i].tid < tid)
			lo = i + 1;
		else
			hi = i;
	}
	return NULL;
}

const char *trace__thread_name(const struct trace *t, uint32_t tid)
{
	return t ? thread_in(t, t->threads, t->nthreads, tid) : NULL;
}

const char *trace__comm(const struct trace *t, uint32_t tid)
{
	const char *n;

	if (!t)
		return NULL;
	n = thread_in(t, t->comms, t->ncomms, tid);
	return n ? n : thread_in(t, t->threads, t->nthreads, tid);
}
