// SPDX-License-Identifier: MIT
/*
 * trace_decode.c - check and decode one chunk of a d9prof trace (layout:
 * trace_format.h) for the reader (trace_reader.c, whose header says the
 * rules): the string arena, the reader's messages, a decoder per chunk
 * type, the inline expansion, zstd. API: reader_int.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "lib/hash.h"
#include "trace/reader_int.h"

/* ---- string arena: every string of a trace, freed at once ------------- */

char *trace_arena_strdup(struct trace_arena *a, const uint8_t *s, size_t len)
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

void trace_arena_free_blocks(struct trace_arena *a)
{
	struct arena_block *b, *next;

	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}

void trace_arena_free(struct trace_arena *a)
{
	if (!a)
		return;
	trace_arena_free_blocks(a);
	free(a);
}

/* The message buffer is per thread so that concurrent readers do not
 * overwrite each other's errors; *errmsg stays valid until the thread's
 * next trace__read(). */
static __thread char errbuf[512];

int trace_fail(struct reader *r, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, sizeof(errbuf), fmt, ap);
	va_end(ap);
	r->msg = errbuf;
	return err;
}

/* A corrupt chunk: the message names the chunk and where it starts. */
int trace_bad(struct reader *r, const char *what)
{
	if (r->file)
		return trace_fail(r, -EBADMSG, "%s: chunk %zu at offset %zu: %s", r->file,
				  r->chunk, r->pos, what);
	return trace_fail(r, -EBADMSG, "chunk %zu at offset %zu: %s", r->chunk, r->pos,
			  what);
}

int trace_nomem(struct reader *r)
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
		return trace_bad(r, "truncated string");
	if (opt) {
		if (!len)
			return 0;
		len--;
	}
	p = cursor_bytes(c, len);
	if (!p)
		return trace_bad(r, "string runs past the end of the chunk");
	*s = trace_arena_strdup(r->t->arena, p, len);
	return *s ? 0 : trace_nomem(r);
}

int trace_decode_meta(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	size_t i;
	int err;

	if (count > cursor_left(c) / 2)
		return trace_bad(r, "record count exceeds chunk size");
	if (LIB_GROW(t->meta, r->meta_cap, t->nmeta + count))
		return trace_nomem(r);
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
			  struct trace_thread **v, size_t *n, size_t *cap,
			  struct lib_map *ix_of)
{
	size_t i;
	int err;

	if (count > cursor_left(c) / 2)
		return trace_bad(r, "record count exceeds chunk size");
	for (i = 0; i < count; i++) {
		uint64_t tid = cursor_varint(c);
		uint64_t *slot;
		size_t ix;
		char *name;
		int added;

		if (c->err || tid > UINT32_MAX)
			return trace_bad(r, "bad thread id");
		if ((err = get_string(r, c, 1, &name)))
			return err;
		if (*n >= UINT32_MAX - 1) /* ids in the map are u32 */
			return trace_bad(r, "too many threads");
		slot = lib_map_get(ix_of, tid, &added);
		if (!slot || LIB_GROW(*v, *cap, *n + 1))
			return trace_nomem(r);
		if (added)
			*slot = *n;
		ix = (size_t)*slot;
		if (added) {
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

/* SUMS: lean mode's sums, those in the window */
static int decode_sums(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	size_t i, j;

	/* a sum takes ten bytes at least */
	if (count > cursor_left(c) / 10)
		return trace_bad(r, "record count exceeds chunk size");
	if (LIB_GROW(t->sums, r->sums_cap, t->nsums + count))
		return trace_nomem(r);
	for (i = 0; i < count; i++) {
		struct trace_sum s;
		uint64_t v[10];

		for (j = 0; j < 10; j++)
			v[j] = cursor_varint(c);
		if (c->err || v[2] > UINT32_MAX || v[3] > UINT32_MAX ||
		    v[4] > UINT32_MAX || v[4] > v[3] || v[9] > 2 * TRACE_SUM_BUCKETS ||
		    2 * v[9] > cursor_left(c))
			return trace_bad(r, "bad SUMS record");
		s = (struct trace_sum){.time = v[0],
				       .task = v[1],
				       .tid = (uint32_t)v[2],
				       .polls = (uint32_t)v[3],
				       .delays = (uint32_t)v[4],
				       .poll_total = v[5],
				       .delay_total = v[6],
				       .poll_max = v[7],
				       .delay_max = v[8],
				       .nent = (uint32_t)v[9],
				       .ent = t->nsum_ents};
		if (LIB_GROW(t->sum_ents, r->sum_ents_cap, t->nsum_ents + s.nent))
			return trace_nomem(r);
		for (j = 0; j < s.nent; j++) {
			uint64_t k = cursor_varint(c), n = cursor_varint(c);

			if (c->err || (k >> 8) > 1 || (k & 0xff) >= TRACE_SUM_BUCKETS ||
			    n > UINT32_MAX)
				return trace_bad(r, "bad SUMS entry");
			t->sum_ents[s.ent + j] =
				(struct trace_sum_ent){.which = (uint8_t)(k >> 8),
						       .bucket = (uint8_t)(k & 0xff),
						       .count = (uint32_t)n};
		}
		if (!trace_in_window(r, &s, 1, sizeof(s)))
			continue; /* its entries are overwritten by the next */
		t->nsum_ents += s.nent;
		t->sums[t->nsums++] = s;
	}
	return 0;
}

static int decode_tasks(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	size_t i;
	int err;

	if (count > cursor_left(c) / 2)
		return trace_bad(r, "record count exceeds chunk size");
	for (i = 0; i < count; i++) {
		uint64_t id = cursor_varint(c), *slot;
		size_t ix;
		char *name;
		int added;

		if (c->err)
			return trace_bad(r, "bad task id");
		if ((err = get_string(r, c, 1, &name)))
			return err;
		if (t->ntasks >= UINT32_MAX - 1) /* ids in the map are u32 */
			return trace_bad(r, "too many tasks");
		slot = lib_map_get(&r->task_ix, id, &added);
		if (!slot || LIB_GROW(t->tasks, r->tasks_cap, t->ntasks + 1))
			return trace_nomem(r);
		if (added)
			*slot = t->ntasks;
		ix = (size_t)*slot;
		if (added) {
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
	const uint64_t *old = lib_map_find(&r->stack_ix, h);

	if (old) {
		uint32_t oa = t->stack_off[*old], ob = t->stack_off[*old + 1];

		if (ob - oa == b - a && !memcmp(t->stack_frames + oa, t->stack_frames + a,
						(b - a) * sizeof(uint32_t))) {
			*id = (uint32_t)*old;
			return 1;
		}
	}
	*id = (uint32_t)t->nstacks;
	t->stack_off[t->nstacks + 1] = (uint32_t)b;
	t->nstacks++;
	/* a colliding hash keeps the first stack: the second is not shared */
	if (!old && lib_map_set(&r->stack_ix, h, *id))
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
		return trace_bad(r, "truncated STACKS header");
	if (first_frame != r->nfmap || first_stack != r->nsmap)
		return trace_bad(r, "STACKS chunk out of sequence");
	/* every frame and stack takes at least one byte */
	if (nf > cursor_left(c) || count > cursor_left(c) - nf)
		return trace_bad(r, "record count exceeds chunk size");
	if (t->nframes + nf >= UINT32_MAX || t->nstacks + count >= UINT32_MAX ||
	    r->nfmap + nf >= UINT32_MAX || r->nsmap + count >= UINT32_MAX)
		return trace_bad(r, "too many frames or stacks");

	if (LIB_GROW(t->frames, r->frames_cap, t->nframes + nf) ||
	    LIB_GROW(r->fmap, r->fmap_cap, r->nfmap + nf))
		return trace_nomem(r);
	prev = 0;
	for (i = 0; i < nf; i++) {
		uint64_t *id;
		int added;

		prev += unzigzag(cursor_varint(c));
		id = lib_map_get(&r->addr_ix, prev, &added);
		if (!id)
			return trace_nomem(r);
		if (added) {
			*id = t->nframes;
			t->frames[t->nframes++] = (struct trace_frame){
				.addr = prev, .kernel = trace_addr_is_kernel(prev)};
		}
		r->fmap[r->nfmap + i] = (uint32_t)*id;
	}
	if (c->err)
		return trace_bad(r, "truncated frame addresses");
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
		return trace_bad(r, "stack depths exceed chunk size");
	if (r->nstack_frames + total >= UINT32_MAX)
		return trace_bad(r, "too many stack frames");
	if (LIB_GROW(t->stack_off, r->off_cap, t->nstacks + count + 1) ||
	    LIB_GROW(t->stack_frames, r->sf_cap, r->nstack_frames + total) ||
	    !(smap = smap_room(r, r->nsmap + count)))
		return trace_nomem(r);

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
					return c->err ? trace_bad(r, "truncated stack")
						      : trace_bad(r, "stack refers to an "
								     "undefined frame");
				t->stack_frames[k++] = r->fmap[prev];
			}
			dup = intern_stack(r, a, k, &smap[r->nsmap + i]);
			if (dup < 0)
				return trace_nomem(r);
			if (dup)
				k = a; /* the frames of the copy go */
			t->stack_off[t->nstacks] = (uint32_t)k;
		}
	}
	if (c->err)
		return trace_bad(r, "truncated stack");
	r->nstack_frames = k;
	r->nsmap += (uint32_t)count;
	return 0;
}

/* Keep the @n records of @size bytes at @v (each starting with its u64
 * time) that are in the window; how many. */
size_t trace_in_window(const struct reader *r, void *v, size_t n, size_t size)
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
int trace_check_samples(struct reader *r, struct cursor *c, size_t count)
{
	return count > cursor_left(c) / 6
		       ? trace_bad(r, "record count exceeds chunk size")
		       : 0;
}

/* The task column of @count records of @size bytes at @recs (a u64 task at
 * @off each), if the chunk has one (it is its last): else all 0. */
static void get_tasks(struct cursor *c, void *recs, size_t size, size_t off, size_t count)
{
	char *r = recs;
	uint64_t prev = 0;
	int have = cursor_left(c) != 0;

	for (size_t i = 0; i < count; i++, r += size) {
		if (have)
			prev += unzigzag(cursor_varint(c));
		*(uint64_t *)(r + off) = have ? prev : 0;
	}
}

/* Decode @count samples into @s (room checked by trace_check_samples()); stack
 * ids must be below @nstacks, and become @smap's. */
int trace_decode_samples(struct reader *r, struct cursor *c, size_t count,
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
			return trace_bad(r, "bad sample thread id");
		s[i].tid = (uint32_t)v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v >= nstacks)
			return c->err ? trace_bad(r, "truncated samples")
				      : trace_bad(r,
						  "sample refers to an undefined stack");
		s[i].stack = smap[v];
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return trace_bad(r, "bad sample weight");
		s[i].weight = (uint32_t)v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT16_MAX)
			return trace_bad(r, "bad sampler");
		s[i].sampler = (uint16_t)v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT16_MAX)
			return trace_bad(r, "bad sample flags");
		s[i].flags = (uint16_t)v;
	}
	get_tasks(c, s, sizeof(*s), offsetof(struct trace_sample, task), count);
	if (c->err)
		return trace_bad(r, "truncated samples");
	return 0;
}

/* A record takes 4 bytes at least; in POLLS one of 5 is up to 3 events. */
int trace_check_events(struct reader *r, struct cursor *c, size_t count, uint32_t type)
{
	size_t most = type == TRACE_CHUNK_POLLS ? cursor_left(c) / 5 * 3 + 2
						: cursor_left(c) / 4;

	return count > most ? trace_bad(r, "record count exceeds chunk size") : 0;
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
			return trace_bad(r, "bad event thread id");
		e[i].tid = (uint32_t)v;
		prev = v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return trace_bad(r, "bad event type");
		e[i].type = (uint32_t)v;
	}
	if (c->err)
		return trace_bad(r, "truncated events");
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
		return trace_bad(r, "bad record count in events");
	rec = e + (count - m);
	err = decode_events(r, c, m, rec, 1);
	if (err)
		return err;
	for (i = 0; i < m; i++) {
		size_t k = trace_rec_events(rec[i].type);
		uint64_t len = 0;

		/* the k events must leave records i + 1.. unread */
		if (j + k > count - m + i + 1)
			return trace_bad(r, "more events than the chunk says");
		if (k > 1) {
			len = cursor_varint(c);
			if (c->err || len > rec[i].time)
				return trace_bad(r, "bad poll length");
		}
		j += trace_rec_spread(rec[i], len, &e[j]);
	}
	if (c->err || j != count)
		return trace_bad(r, "fewer events than the chunk says");
	return 0;
}

/* The events of an EVENTS, STATE or POLLS chunk. */
int trace_decode_any_events(struct reader *r, struct cursor *c, uint32_t type,
			    size_t count, struct trace_event *e)
{
	return type == TRACE_CHUNK_POLLS ? decode_polls(r, c, count, e)
					 : decode_events(r, c, count, e, 0);
}

static int load_samples(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	int err = trace_check_samples(r, c, count);

	if (err)
		return err;
	if (LIB_GROW(t->samples, r->samples_cap, t->nsamples + count))
		return trace_nomem(r);
	err = trace_decode_samples(r, c, count, t->samples + t->nsamples, r->nsmap,
				   r->smaps[r->nsmaps - 1]);
	if (!err)
		t->nsamples += trace_in_window(r, t->samples + t->nsamples, count,
					       sizeof(*t->samples));
	return err;
}

static int load_events(struct reader *r, struct cursor *c, size_t count, uint32_t type)
{
	struct trace *t = r->t;
	int err = trace_check_events(r, c, count, type);

	if (err)
		return err;
	if (LIB_GROW(t->events, r->events_cap, t->nevents + count))
		return trace_nomem(r);
	err = trace_decode_any_events(r, c, type, count, t->events + t->nevents);
	if (!err)
		t->nevents += trace_in_window(r, t->events + t->nevents, count,
					      sizeof(*t->events));
	return err;
}

static int decode_switches(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	struct trace_switch *s;
	uint64_t v, prev = 0;
	size_t i;

	if (count > cursor_left(c) / 5)
		return trace_bad(r, "record count exceeds chunk size");
	if (LIB_GROW(t->switches, r->switches_cap, t->nswitches + count))
		return trace_nomem(r);
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
			return trace_bad(r, "switch-in time past 2^64");
		s[i].time_in = v ? s[i].time + (v - 1) : 0;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return trace_bad(r, "bad switch thread id");
		s[i].tid = (uint32_t)v;
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v >= r->nsmap)
			return c->err ? trace_bad(r, "truncated switches")
				      : trace_bad(r,
						  "switch refers to an undefined stack");
		s[i].stack = r->smaps[r->nsmaps - 1][v];
	}
	for (i = 0; i < count; i++) {
		v = cursor_varint(c);
		if (v > 1)
			return trace_bad(r, "bad switch preempted flag");
		s[i].preempted = (uint8_t)v;
	}
	/* files from before the run-queue columns end here */
	for (i = 0; i < count && cursor_left(c); i++) {
		v = cursor_varint(c);
		if (v && (s[i].time + (v - 1) < s[i].time ||
			  (s[i].time_in && s[i].time + (v - 1) > s[i].time_in)))
			return trace_bad(r, "bad switch runnable time");
		s[i].runnable = v ? s[i].time + (v - 1) : 0;
	}
	for (i = 0; i < count && cursor_left(c); i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			return trace_bad(r, "bad switch holder thread id");
		s[i].holder = (uint32_t)v;
	}
	/* who held the CPU: absent in older files */
	for (i = 0; i < count; i++) {
		v = cursor_left(c) ? cursor_varint(c) : 0;
		if (v > TRACE_MAX_HOLDS || (v && (!s[i].runnable || !s[i].time_in)))
			return trace_bad(r, "bad switch holder count");
		s[i].nhold = (uint8_t)v;
	}
	for (i = 0; i < count; i++) {
		uint64_t left = s[i].nhold ? s[i].time_in - s[i].runnable : 0;

		if (!s[i].nhold)
			continue;
		if (t->nholds + s[i].nhold >= UINT32_MAX)
			return trace_bad(r, "too many switch holders");
		if (LIB_GROW(t->holds, r->holds_cap, t->nholds + s[i].nhold))
			return trace_nomem(r);
		s[i].hold = (uint32_t)t->nholds;
		for (uint32_t k = 0; k < s[i].nhold; k++) {
			struct trace_hold *h = &t->holds[t->nholds++];

			v = cursor_varint(c);
			if (v > UINT32_MAX)
				return trace_bad(r, "bad switch holder thread id");
			h->tid = (uint32_t)v;
			h->ns = cursor_varint(c);
			if (h->ns > left)
				return c->err ? trace_bad(r, "truncated switches")
					      : trace_bad(r,
							  "switch holders past its wait");
			left -= h->ns;
		}
	}
	get_tasks(c, s, sizeof(*s), offsetof(struct trace_switch, task), count);
	if (c->err)
		return trace_bad(r, "truncated switches");
	t->nswitches += trace_in_window(r, s, count, sizeof(*s));
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
		return trace_nomem(r);
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
		return trace_bad(r, "truncated FRAMES header");
	if (first > r->nfmap || count > r->nfmap - first)
		return trace_bad(r, "FRAMES chunk names undefined frames");
	if (nstr > cursor_left(c) || count > cursor_left(c) / 4)
		return trace_bad(r, "record count exceeds chunk size");
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
		err = trace_bad(r, what);
out:
	free(strs);
	return err;
}

/* The string count that opens an INLINES or LINES chunk of @count records
 * of @min bytes at least (@trunc: its message if cut short), then the
 * string table as get_strtab(). 0 or -errno; the caller frees *@strs. */
static int get_strtab_hdr(struct reader *r, struct cursor *c, size_t count, size_t min,
			  const char *trunc, uint64_t *nstr, char ***strs)
{
	*strs = NULL;
	*nstr = cursor_varint(c);
	if (c->err)
		return trace_bad(r, trunc);
	if (*nstr > cursor_left(c) || count > cursor_left(c) / min)
		return trace_bad(r, "record count exceeds chunk size");
	return get_strtab(r, c, *nstr, strs);
}

/* Is a record of type @type about a span's life (not an event)? */
static int span_life(uint32_t type)
{
	return type == TRACE_SPAN_NEW || type == TRACE_SPAN_FIELD ||
	       type == TRACE_SPAN_ENTER || type == TRACE_SPAN_EXIT ||
	       type == TRACE_SPAN_CLOSE;
}

/* A span record is kept in a window if it is in it, or is about a span's
 * life before it (NEW, FIELD, ENTER, EXIT, CLOSE: not an EVENT): a span
 * created before the window may be entered or closed in it, and one
 * closed before it must be seen closed there (analysis leaves it out)
 * rather than open into the window. Records after the window are not. */
static size_t spans_in_window(const struct reader *r, struct trace_span *s, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		if ((span_life(s[i].type) && (!r->to || s[i].time <= r->to)) ||
		    trace_in_window(r, &s[i], 1, sizeof(s[i])))
			s[k++] = s[i];
	return k;
}

int trace_decode_spans(struct reader *r, struct cursor *c, size_t count,
		       struct trace_span *s, size_t *n)
{
	uint64_t nstr, v, prev = 0;
	const char *what = NULL;
	char **strs;
	size_t i;
	int err;

	*n = 0;
	err = get_strtab_hdr(r, c, count, 7, "truncated SPANS header", &nstr, &strs);
	if (err)
		goto out;
	memset(s, 0, count * sizeof(*s));
	for (i = 0; i < count; i++) {
		prev += unzigzag(cursor_varint(c));
		s[i].time = prev;
	}
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (v > UINT32_MAX)
			what = "bad span thread id";
		s[i].tid = (uint32_t)v;
	}
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (v < TRACE_SPAN_NEW || v > TRACE_SPAN_TYPE_MAX)
			what = "bad span record type";
		s[i].type = (uint32_t)v;
	}
	prev = 0;
	for (i = 0; i < count && !what; i++) {
		prev += unzigzag(cursor_varint(c));
		s[i].id = prev;
	}
	for (i = 0; i < count && !what; i++)
		s[i].value = (int64_t)unzigzag(cursor_varint(c));
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (v > nstr)
			what = "bad span name";
		else
			s[i].name = v ? strs[v - 1] : NULL;
	}
	for (i = 0; i < count && !what; i++) {
		v = cursor_varint(c);
		if (v > nstr)
			what = "bad span text";
		else
			s[i].text = v ? strs[v - 1] : NULL;
	}
	if (!what && c->err)
		what = "truncated spans";
	if (what)
		err = trace_bad(r, what);
	else
		*n = spans_in_window(r, s, count);
out:
	free(strs);
	return err;
}

static int decode_spans(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	size_t n;
	int err;

	/* (count was checked against the chunk's size: get_strtab_hdr()) */
	if (count > SIZE_MAX / sizeof(*t->spans) - t->nspans ||
	    LIB_GROW(t->spans, r->spans_cap, t->nspans + count))
		return trace_nomem(r);
	err = trace_decode_spans(r, c, count, t->spans + t->nspans, &n);
	if (!err)
		t->nspans += n;
	return err;
}

/* What an INLINES or a LINES chunk says of a bad frame column. */
struct frame_msgs {
	const char *truncated, *undefined, *twice;
};

static const struct frame_msgs inl_msgs = {
	"truncated inlines",
	"INLINES chunk names undefined frames",
	"INLINES chunk names a frame twice or out of order",
};

static const struct frame_msgs lines_msgs = {
	"truncated lines",
	"LINES chunk names undefined frames",
	"LINES chunk names a frame twice or out of order",
};

/* Record @i's frame in an INLINES or LINES chunk: the change from *@id,
 * the frame before it (before the chunk's first, @seq's last), into *@id.
 * A message (@m's), or NULL. */
static const char *next_frame(const struct reader *r, struct cursor *c,
			      const struct frame_seq *seq, const struct frame_msgs *m,
			      size_t i, uint64_t *id)
{
	uint64_t v = cursor_varint(c);
	const char *what = NULL;

	if (c->err)
		what = m->truncated;
	else if (v >= r->nfmap || *id + v >= r->nfmap)
		what = m->undefined;
	else if ((i || seq->any) && *id + v <= (i ? *id : seq->last))
		what = m->twice;
	*id += v;
	return what;
}

static int decode_inlines(struct reader *r, struct cursor *c, size_t count)
{
	uint64_t nstr, v, id = 0, total = 0;
	const char *what = NULL;
	size_t i, base = r->ninl;
	char **strs;
	int err = 0;

	err = get_strtab_hdr(r, c, count, 2, "truncated INLINES header", &nstr, &strs);
	if (err)
		goto out;
	if (LIB_GROW(r->inl, r->inl_cap, base + count)) {
		err = trace_nomem(r);
		goto out;
	}
	for (i = 0; i < count && !what; i++) {
		what = next_frame(r, c, &r->inl_seq, &inl_msgs, i, &id);
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
		err = trace_nomem(r);
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
		err = trace_bad(r, what);
		goto out;
	}
	r->ninl += count;
	r->ninl_names += total;
	if (count)
		r->inl_seq = (struct frame_seq){.any = 1, .last = id};
out:
	free(strs);
	return err;
}

/* One column of LINES: @n values, each at most @max, into @v (every
 * @stride u32s); a message, or NULL. */
static const char *lines_column(struct cursor *c, size_t n, uint64_t max, uint32_t *v,
				size_t stride, const char *bad)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t x = cursor_varint(c);

		if (c->err)
			return "truncated lines";
		if (x > max)
			return bad;
		v[i * stride] = (uint32_t)x;
	}
	return NULL;
}

static int decode_lines(struct reader *r, struct cursor *c, size_t count)
{
	struct trace *t = r->t;
	uint64_t nstr, id = 0, total = 0;
	const char *what = NULL;
	uint32_t *col = NULL;
	size_t i, base = r->nsites;
	char **strs = NULL;
	int err = 0;

	err = get_strtab_hdr(r, c, count, 5, "truncated LINES header", &nstr, &strs);
	if (err)
		goto out;
	/* per record: frame, file, line, start_line, nsite */
	col = malloc((count ? count : 1) * 5 * sizeof(*col));
	if (!col) {
		err = trace_nomem(r);
		goto out;
	}
	for (i = 0; i < count && !what; i++) {
		what = next_frame(r, c, &r->lines_seq, &lines_msgs, i, &id);
		col[i * 5] = (uint32_t)id;
	}
	if (!what)
		what = lines_column(c, count, nstr, col + 1, 5, "bad line file");
	if (!what)
		what = lines_column(c, count, UINT32_MAX, col + 2, 5, "bad line number");
	if (!what)
		what = lines_column(c, count, UINT32_MAX, col + 3, 5, "bad line number");
	if (!what)
		what = lines_column(c, count, TRACE_MAX_INLINE, col + 4, 5,
				    "bad inline site count");
	for (i = 0; i < count && !what; i++)
		total += col[i * 5 + 4];
	if (!what && total > cursor_left(c) / 3)
		what = "truncated lines";
	if (what)
		goto bad;
	if (LIB_GROW(r->sites, r->sites_cap, base + total) ||
	    LIB_GROW(r->lsite, r->lsite_cap, r->nlsite + count)) {
		err = trace_nomem(r);
		goto out;
	}
	/* the three site columns */
	for (i = 0; i < total && !what; i++) {
		uint64_t v = cursor_varint(c);

		if (v > nstr)
			what = "bad line file";
		else
			r->sites[base + i].call_file = v ? strs[v - 1] : NULL;
	}
	for (i = 0; i < total && !what; i++) {
		uint64_t v = cursor_varint(c);

		if (v > UINT32_MAX)
			what = "bad line number";
		r->sites[base + i].call_line = (uint32_t)v;
	}
	for (i = 0; i < total && !what; i++) {
		uint64_t v = cursor_varint(c);

		if (v > UINT32_MAX)
			what = "bad line number";
		r->sites[base + i].decl_line = (uint32_t)v;
	}
	if (!what && c->err)
		what = "truncated lines";
	if (what)
		goto bad;
	for (i = 0; i < count; i++) {
		struct trace_frame *f = &t->frames[r->fmap[col[i * 5]]];
		uint32_t ns = col[i * 5 + 4];

		f->file = col[i * 5 + 1] ? strs[col[i * 5 + 1] - 1] : NULL;
		f->line = col[i * 5 + 2];
		f->start_line = col[i * 5 + 3];
		if (ns)
			r->lsite[r->nlsite++] =
				(struct inl_chain){.frame = r->fmap[col[i * 5]],
						   .first = (uint32_t)r->nsites,
						   .count = ns};
		r->nsites += ns;
	}
	if (count)
		r->lines_seq = (struct frame_seq){.any = 1, .last = id};
	goto out;
bad:
	err = trace_bad(r, what);
out:
	free(col);
	free(strs);
	return err;
}

/* The sites of frame @f's chain of @n names, or NULL: the first LINES
 * record of @f (per frame: @sfirst index + 1 into r->lsite). */
static const struct trace_inline_src *
chain_sites(const struct reader *r, const uint32_t *sfirst, uint32_t f, uint32_t n)
{
	const struct inl_chain *l;

	if (!sfirst || !sfirst[f])
		return NULL;
	l = &r->lsite[sfirst[f] - 1];
	return l->count == n ? &r->sites[l->first] : NULL;
}

/* Every frame with an inline chain becomes, in every stack, the chain's
 * functions as frames of their own, then itself (see TRACE_READ_NO_INLINE). */
int trace_expand_inlines(struct reader *r)
{
	struct trace *t = r->t;
	uint32_t *first = NULL, *cnt = NULL, *off = NULL, *sf = NULL, *sfirst = NULL;
	size_t i, j, k, nf0 = t->nframes, add = 0, total = 0;

	if (!r->ninl)
		return 0;
	first = calloc(nf0, sizeof(*first));
	cnt = calloc(nf0, sizeof(*cnt));
	if (!first || !cnt || (r->nlsite && !(sfirst = calloc(nf0, sizeof(*sfirst)))))
		goto nomem;
	for (i = 0; i < r->nlsite; i++)
		if (!sfirst[r->lsite[i].frame])
			sfirst[r->lsite[i].frame] = (uint32_t)i + 1;
	for (i = 0; i < r->ninl; i++)
		add += r->inl[i].count;
	if (nf0 + add >= UINT32_MAX || LIB_GROW(t->frames, r->frames_cap, nf0 + add))
		goto nomem;
	/* the synthetic frames, after the recorded ones */
	for (i = 0; i < r->ninl; i++) {
		uint32_t f = r->inl[i].frame, n = r->inl[i].count;
		const struct trace_inline_src *site = chain_sites(r, sfirst, f, n);

		if (cnt[f])
			continue; /* the same frame in a later segment */
		first[f] = (uint32_t)t->nframes;
		cnt[f] = n;
		for (k = 0; k < n; k++) {
			struct trace_frame *x = &t->frames[t->nframes++];

			*x = t->frames[f];
			x->sym = r->inl_names[r->inl[i].first + k];
			x->offset = 0;
			x->inlined = 1;
			/* its line: the address's for the innermost, else
			 * where the one inlined into it was called */
			if (k) {
				x->file = site ? site[k - 1].call_file : NULL;
				x->line = site ? site[k - 1].call_line : 0;
			}
			x->start_line = site ? site[k].decl_line : 0;
		}
		t->frames[f].file = site ? site[n - 1].call_file : NULL;
		t->frames[f].line = site ? site[n - 1].call_line : 0;
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
	free(sfirst);
	return 0;
nomem:
	free(first);
	free(cnt);
	free(sfirst);
	free(off);
	free(sf);
	return trace_nomem(r);
}

int trace_decode_end(struct reader *r, struct cursor *c)
{
	struct trace_counters *k = &r->segc;

	k->samples = cursor_varint(c);
	k->events = cursor_varint(c);
	k->lost_samples = cursor_varint(c);
	k->shim_drops = cursor_varint(c);
	k->start_time = cursor_varint(c);
	k->end_time = cursor_varint(c);
	if (c->err)
		return trace_bad(r, "truncated END chunk");
	/* appended after the first version: absent in older files */
	k->switches = cursor_left(c) ? cursor_varint(c) : 0;
	if (c->err)
		return trace_bad(r, "truncated END chunk");
	/* later versions may append counters */
	c->p = c->end;
	r->seen_end = 1;
	return 0;
}

/* Check the payload of the chunk at @h (checksum, one zstd frame of the
 * declared size), without decompressing it. */
int trace_check_chunk(struct reader *r, const uint8_t *h)
{
	uint32_t csize = get_le32(h + 8);
	uint32_t rsize = get_le32(h + 12);
	const uint8_t *payload = h + TRACE_CHUNK_HDR_SIZE;

	if (lib_xxh32(payload, csize, 0) != get_le32(h + 20))
		return trace_bad(r, "checksum mismatch");
	if (r->seen_end)
		return trace_bad(r, "data after the END chunk");
	if (ZSTD_findFrameCompressedSize(payload, csize) != csize ||
	    ZSTD_getFrameContentSize(payload, csize) != rsize)
		return trace_bad(r, "payload is not one zstd frame of the declared size");
	return 0;
}

/* A zstd decompression context costs a ~100 KiB allocation and two CPUID
 * instructions (zstd probes for BMI2 at each creation; in a VM each traps
 * to the hypervisor), more than reading a small trace: one is kept for
 * the process between reads and walks, whatever thread made it. */
static _Atomic(ZSTD_DCtx *) spare_dctx;

ZSTD_DCtx *trace_dctx_get(void)
{
	ZSTD_DCtx *d = atomic_exchange(&spare_dctx, NULL);

	return d ? d : ZSTD_createDCtx();
}

void trace_dctx_put(ZSTD_DCtx *d)
{
	ZSTD_DCtx *none = NULL;

	/* (ZSTD_decompressDCtx starts each frame afresh: nothing carries
	 * over from the last user) */
	if (d && !atomic_compare_exchange_strong(&spare_dctx, &none, d))
		ZSTD_freeDCtx(d);
}

/* Decompress the checked chunk at @h into r->raw; a cursor over it. */
int trace_inflate(struct reader *r, const uint8_t *h, struct cursor *c)
{
	uint32_t csize = get_le32(h + 8);
	uint32_t rsize = get_le32(h + 12);
	size_t n;

	if (LIB_GROW(r->raw, r->raw_cap, rsize ? rsize : 1))
		return trace_nomem(r);
	n = ZSTD_decompressDCtx(r->dctx, r->raw, rsize, h + TRACE_CHUNK_HDR_SIZE, csize);
	if (ZSTD_isError(n) || n != rsize)
		return trace_bad(r, "undecodable zstd frame");
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
		return trace_nomem(r);
	k = &l->v[l->n++];
	k->pos = r->pos;
	k->index = r->chunk;
	k->csize = get_le32(h + 8);
	k->nstacks = r->nsmap;
	k->type = get_le32(h + 4);
	k->file = r->file_ix;
	k->seg = (uint32_t)(r->nsmaps - 1);
	k->seq = r->t->src->samples.n + r->t->src->events.n - 1;
	k->timed = 0;
	return 0;
}

/* A samples or events chunk went by: in @list (0 samples, 1 events, -1
 * none) at its end, for the next INDEX chunk. */
static int ixq_push(struct reader *r, int list)
{
	const struct trace_src *s = r->t->src;

	if (LIB_GROW(r->ixq, r->ixq_cap, r->nixq + 1))
		return trace_nomem(r);
	r->ixq[r->nixq++] = (struct ixq){list, list == 0   ? s->samples.n - 1
					       : list == 1 ? s->events.n - 1
							   : 0};
	return 0;
}

/* INDEX: the times of the chunks since the last one, given to those left
 * on disk (a count that is not theirs: none). */
static int decode_index(struct reader *r, struct cursor *c, size_t count)
{
	struct trace_src *s = r->t->src;
	uint64_t lo = 0, *v;
	size_t i, n = r->nixq;
	int err = 0;

	r->nixq = 0;
	if (count > cursor_left(c) / 2)
		return trace_bad(r, "record count exceeds chunk size");
	v = malloc((2 * count + 1) * sizeof(*v));
	if (!v)
		return trace_nomem(r);
	for (i = 0; i < count; i++) {
		lo += unzigzag(cursor_varint(c));
		v[2 * i] = lo;
	}
	for (i = 0; i < count; i++) {
		uint64_t d = cursor_varint(c);

		if (v[2 * i] + d < v[2 * i])
			err = trace_bad(r, "index time past 2^64");
		v[2 * i + 1] = v[2 * i] + d;
	}
	if (!err && c->err)
		err = trace_bad(r, "truncated index");
	for (i = 0; !err && s && count == n && i < n; i++) {
		struct src_chunk *k = r->ixq[i].list == 0   ? &s->samples.v[r->ixq[i].ix]
				      : r->ixq[i].list == 1 ? &s->events.v[r->ixq[i].ix]
							    : NULL;

		if (k) {
			k->tmin = v[2 * i];
			k->tmax = v[2 * i + 1];
			k->timed = 1;
		}
	}
	free(v);
	return err;
}

/* Check, decompress and decode the chunk at @h, whose header and payload are
 * known to be in the buffer; or check and remember it if it is left on
 * disk. */
int trace_read_chunk(struct reader *r, const uint8_t *h)
{
	uint32_t type = get_le32(h + 4);
	uint32_t count = get_le32(h + 16);
	int data = type == TRACE_CHUNK_SAMPLES || type == TRACE_CHUNK_EVENTS ||
		   type == TRACE_CHUNK_STATE || type == TRACE_CHUNK_POLLS;
	struct cursor c;
	int err;

	err = trace_check_chunk(r, h);
	if (err)
		return err;
	/* what was open at the segment's start: the segment before it, when
	 * read, has the same events at their own place */
	if ((type == TRACE_CHUNK_STATE || type == TRACE_CHUNK_SPAN_STATE) &&
	    !r->use_state)
		return data ? ixq_push(r, -1) : 0;
	if ((type == TRACE_CHUNK_SPANS || type == TRACE_CHUNK_SPAN_STATE) &&
	    (r->flags & (TRACE_READ_NO_SPANS | TRACE_READ_SPANS_LATER))) {
		/* counted, as their chunks say (no window filters them) */
		r->t->nspans += count;
		return r->flags & TRACE_READ_SPANS_LATER ? defer(r, &r->t->src->spans, h)
							 : 0;
	}
	if (type == TRACE_CHUNK_SAMPLES && (r->flags & TRACE_READ_NO_SAMPLES)) {
		r->t->nsamples += count;
		err = defer(r, &r->t->src->samples, h);
		return err ? err : ixq_push(r, 0);
	}
	if ((type == TRACE_CHUNK_EVENTS || type == TRACE_CHUNK_STATE ||
	     type == TRACE_CHUNK_POLLS) &&
	    (r->flags & TRACE_READ_NO_EVENTS)) {
		r->t->nevents += count;
		err = defer(r, &r->t->src->events, h);
		return err ? err : ixq_push(r, 1);
	}
	if (data && (err = ixq_push(r, -1)))
		return err;
	err = trace_inflate(r, h, &c);
	if (err)
		return err;
	switch (type) {
	case TRACE_CHUNK_META:
		err = trace_decode_meta(r, &c, count);
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
	case TRACE_CHUNK_SUMS:
		err = decode_sums(r, &c, count);
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
	case TRACE_CHUNK_LINES:
		err = decode_lines(r, &c, count);
		break;
	case TRACE_CHUNK_SPANS:
	case TRACE_CHUNK_SPAN_STATE:
		err = decode_spans(r, &c, count);
		break;
	case TRACE_CHUNK_END:
		err = trace_decode_end(r, &c);
		break;
	case TRACE_CHUNK_INDEX:
		err = decode_index(r, &c, count);
		break;
	default:
		/* a newer writer's chunk type, checked and skipped */
		return 0;
	}
	if (err)
		return err;
	if (c.p != c.end)
		return trace_bad(r, "trailing bytes in chunk");
	return 0;
}
