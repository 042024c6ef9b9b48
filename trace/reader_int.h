/* SPDX-License-Identifier: MIT */
/*
 * reader_int.h - private to trace/: the reader's state and what its
 * files share. trace_decode.c checks and decodes one chunk at a time (the
 * string arena, the reader's messages, the chunk decoders, zstd);
 * trace_reader.c reads whole files and inputs with them and walks the
 * chunks left on disk; trace_rust.c names inlined Rust functions in
 * full. Everything here is prefixed trace_ and follows the reader's rules
 * (trace_reader.c's header): nothing is allocated for a count before the
 * chunk is checked to hold it.
 */
#ifndef D9_TRACE_READER_INT_H
#define D9_TRACE_READER_INT_H

#include <stddef.h>
#include <stdint.h>
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

/* A copy of @len bytes at @s, NUL-terminated, in @a; NULL without memory. */
char *trace_arena_strdup(struct trace_arena *a, const uint8_t *s, size_t len);
/* Free every string of @a (a itself stays). */
void trace_arena_free_blocks(struct trace_arena *a);
/* Free @a and its strings (NULL: nothing). */
void trace_arena_free(struct trace_arena *a);

/* ---- reader state ------------------------------------------------------- */

/* A chunk left on disk: where it is and what it may refer to. */
struct src_chunk {
	uint64_t pos;	     /* file offset of its header */
	size_t index;	     /* chunk number, for messages */
	uint32_t csize;	     /* payload bytes */
	uint32_t nstacks;    /* stacks its segment defined before it */
	uint32_t type;	     /* its chunk type (EVENTS, STATE or POLLS for events) */
	uint32_t file;	     /* index in trace_src.fds */
	uint32_t seg;	     /* index in trace_src.smap: its stack ids */
	uint64_t seq;	     /* its place among the chunks of both lists */
	uint64_t tmin, tmax; /* its records' times, if timed (INDEX) */
	int timed;
};

struct src_list {
	struct src_chunk *v;
	size_t n, cap;
};

struct trace_src {
	int *fds; /* per file read: open (one file), or -1: opened again
		   * when a walk needs it, one at a time (a directory
		   * may hold more files than a process may open) */
	size_t nfds;
	char **names;	 /* their paths */
	int multi;	 /* several: messages name the file */
	int cur;	 /* the file opened again, -1 if none */
	uint32_t **smap; /* per segment: its stack ids -> the trace's */
	size_t nsmap;
	struct src_list samples, events;
	struct src_list spans; /* TRACE_READ_SPANS_LATER */
	/* a walk's buffers, kept between walks */
	uint8_t *cbuf, *raw;
	size_t cbuf_cap, raw_cap;
	void *recs;	 /* one chunk's records, samples or events */
	size_t recs_cap; /* ... its bytes: the two walks share it, and
			  * their records differ in size */
	ZSTD_DCtx *dctx;
	int failed;
	char msg[192];
};

/* The frames that the INLINES (or the LINES) chunks of a segment name,
 * each once and in order: where they have got to. */
struct frame_seq {
	int any;       /* a chunk named a frame ... */
	uint64_t last; /* ... and this was the last (segment id) */
};

struct reader {
	struct trace *t;
	unsigned int flags;	  /* TRACE_READ_* */
	struct lib_map thread_ix; /* tid -> index in t->threads */
	struct lib_map comm_ix;	  /* tid -> index in t->comms */
	struct lib_map task_ix;	  /* task id -> index in t->tasks */
	size_t meta_cap, threads_cap, comms_cap, tasks_cap, frames_cap;
	size_t off_cap, sf_cap, samples_cap, events_cap, switches_cap, holds_cap;
	size_t spans_cap, sums_cap, sum_ents_cap;
	size_t nstack_frames; /* used entries of t->stack_frames */
	uint8_t *raw;	      /* decompressed payload */
	size_t raw_cap;
	uint8_t *cbuf; /* the chunk as read: header and payload */
	size_t cbuf_cap;
	ZSTD_DCtx *dctx;
	size_t chunk;	  /* index of the chunk being read */
	size_t pos;	  /* its file offset */
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
	int use_state;		    /* apply its STATE chunk */
	struct frame_seq inl_seq;   /* of the INLINES chunks */
	struct trace_counters segc; /* its END chunk */
	size_t segs_cap;
	/* within one recording a frame (address) and a stack are one id
	 * across its segments */
	struct lib_map addr_ix;	 /* address -> frame id */
	struct lib_map stack_ix; /* hash of frame ids -> stack id */
	uint64_t from, to;	 /* the window kept (0 = unbounded) */
	/* the samples and events chunks since the segment's last INDEX
	 * chunk: which list holds each (0 samples, 1 events, -1 none: read
	 * into memory or left out) and where */
	struct ixq {
		int list;
		size_t ix;
	} * ixq;
	size_t nixq, ixq_cap;
	const char *msg;
	/* INLINES, turned into frames once the whole file is read */
	struct inl_chain {	       /* per chain */
		uint32_t frame;	       /* the frame it is inlined at */
		uint32_t first, count; /* its names in inl_names */
	} * inl;
	size_t ninl, inl_cap;
	char **inl_names; /* all chains' names */
	size_t ninl_names, inl_names_cap;
	/* LINES: the call sites of inline chains, given to the frames
	 * the chains become */
	struct frame_seq lines_seq; /* of the LINES chunks */
	struct inl_chain *lsite;    /* per frame with sites: first, count in
				     * sites */
	size_t nlsite, lsite_cap;
	struct trace_inline_src *sites;
	size_t nsites, sites_cap;
};

/* Set the reader's message (printf @fmt, per thread: valid until the
 * thread's next trace__read()); returns @err. */
int trace_fail(struct reader *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A corrupt chunk: the message names the file, the chunk and its offset;
 * -EBADMSG. */
int trace_bad(struct reader *r, const char *what);
/* -ENOMEM, said. */
int trace_nomem(struct reader *r);

/* ---- chunk decoders (trace_decode.c) ---------------------------------- */

/* @count meta key/value pairs into the trace. */
int trace_decode_meta(struct reader *r, struct cursor *c, size_t count);
/* Keep the @n records of @size bytes at @v (each starting with its u64
 * time) that are in the window; how many. */
size_t trace_in_window(const struct reader *r, void *v, size_t n, size_t size);
/* A SPANS (or SPAN_STATE) chunk's @count records decoded into @out, their
 * strings in the trace's arena; those the window keeps in *@n. */
int trace_decode_spans(struct reader *r, struct cursor *c, size_t count,
		       struct trace_span *out, size_t *n);
/* Check a SAMPLES chunk's @count against the chunk before anything is
 * allocated for it. */
int trace_check_samples(struct reader *r, struct cursor *c, size_t count);
/* Decode @count samples into @s (room checked by trace_check_samples());
 * stack ids must be below @nstacks, and become @smap's. */
int trace_decode_samples(struct reader *r, struct cursor *c, size_t count,
			 struct trace_sample *s, size_t nstacks, const uint32_t *smap);
/* The same for events: a record takes 4 bytes at least; in POLLS one of 5
 * is up to 3 events. */
int trace_check_events(struct reader *r, struct cursor *c, size_t count, uint32_t type);
/* The events of an EVENTS, STATE or POLLS chunk. */
int trace_decode_any_events(struct reader *r, struct cursor *c, uint32_t type,
			    size_t count, struct trace_event *e);
/* Every frame with an inline chain becomes, in every stack, the chain's
 * functions as frames of their own, then itself (TRACE_READ_NO_INLINE). */
int trace_expand_inlines(struct reader *r);
/* Full names (trace_frame.full) for the inlined Rust functions DWARF named
 * short, from their stacks (trace_rust.c). 0 or -ENOMEM. */
int trace_name_rust(struct reader *r);
/* The END chunk: what the writer counted, checked against what was read. */
int trace_decode_end(struct reader *r, struct cursor *c);
/* Check the payload of the chunk at @h (checksum, one zstd frame of the
 * declared size), without decompressing it. */
int trace_check_chunk(struct reader *r, const uint8_t *h);
/* A zstd decompression context: the one kept for the process between
 * reads and walks, or a new one (NULL without memory). */
ZSTD_DCtx *trace_dctx_get(void);
/* Give @d back (kept if none is, else freed). */
void trace_dctx_put(ZSTD_DCtx *d);
/* Decompress the checked chunk at @h into r->raw; a cursor over it. */
int trace_inflate(struct reader *r, const uint8_t *h, struct cursor *c);
/* Check, decompress and decode the chunk at @h (header and payload in the
 * buffer); or check and remember it if it is left on disk. */
int trace_read_chunk(struct reader *r, const uint8_t *h);

#endif
