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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/map.h"
#include "trace/reader_int.h"

/* ---- whole file --------------------------------------------------------- */

/* Read up to @len bytes at @off, or at the current offset if @seq; the
 * bytes read (fewer only at the end of the file), or -errno. */
static ssize_t read_full(int fd, uint8_t *buf, size_t len, uint64_t off, int seq)
{
	size_t n = 0;

	while (n < len) {
		ssize_t got = seq ? read(fd, buf + n, len - n)
				  : pread(fd, buf + n, len - n, (off_t)(off + n));

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
		return trace_bad(r, "bad chunk magic");
	if (lib_xxh32(h, 24, 0) != get_le32(h + 24))
		return trace_bad(r, "header checksum mismatch");
	*csize = get_le32(h + 8);
	rsize = get_le32(h + 12);
	if (rsize > TRACE_MAX_RAW)
		return trace_bad(r, "raw size over 1 GiB");
	if (!*csize || *csize > ZSTD_compressBound(rsize))
		return trace_bad(r, "compressed size does not fit the raw size");
	return 0;
}

/* A whole-file failure (no chunk to name): @what, after the file's path
 * when several are read. */
static int fail_file(struct reader *r, int err, const char *what)
{
	if (r->file)
		return trace_fail(r, err, "%s: %s", r->file, what);
	return trace_fail(r, err, "%s", what);
}

/* Check the file header of a segment at @pos (@got bytes of it in @fh): 0,
 * 1 if the file ends there (cut inside a header after an END), or -errno. */
static int check_file_header(struct reader *r, const uint8_t *fh, ssize_t got,
			     uint64_t pos)
{
	uint32_t version;

	if (memcmp(fh, TRACE_MAGIC, got < 8 ? (size_t)got : 8)) {
		if (!pos)
			return fail_file(r, -EBADMSG, "bad file magic");
		r->pos = (size_t)pos;
		return trace_bad(r, "data after the END chunk");
	}
	if (got < TRACE_FILE_HDR_SIZE) {
		if (pos)
			return 1;
		return fail_file(r, -EBADMSG, "file shorter than the trace header");
	}
	version = get_le32(fh + 8);
	if (version < TRACE_VERSION_MIN || version > TRACE_VERSION) {
		if (r->file)
			return trace_fail(
				r, -EPROTONOSUPPORT,
				"%s: trace format version %u not supported (this build "
				"reads %u to %u)",
				r->file, version, TRACE_VERSION_MIN, TRACE_VERSION);
		return trace_fail(
			r, -EPROTONOSUPPORT,
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
		return trace_nomem(r);
	got = read_full(fd, r->cbuf, TRACE_CHUNK_HDR_SIZE, pos, seq);
	if (got < 0)
		return read_failed(r, got);
	if (got < TRACE_CHUNK_HDR_SIZE)
		return 0;
	err = check_header(r, csize);
	if (err)
		return err;
	if (LIB_GROW(r->cbuf, r->cbuf_cap, (size_t)TRACE_CHUNK_HDR_SIZE + *csize))
		return trace_nomem(r);
	got = read_full(fd, r->cbuf + TRACE_CHUNK_HDR_SIZE, *csize,
			pos + TRACE_CHUNK_HDR_SIZE, seq);
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
		err = trace_read_chunk(r, r->cbuf);
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
	uint64_t end; /* past its last whole chunk */
	size_t chunk; /* index of its first chunk in the file */
	struct trace_segment info;
	int dup;   /* a copy of one read instead */
	int other; /* another process's (one_process()) */
};

struct seg_list {
	struct seg_at *v;
	size_t n, cap;
};

/* @v as a string of the trace's arena into *@out, unless set */
static int seg_str(struct reader *r, const char **out, const char *v, size_t n)
{
	if (*out)
		return 0;
	*out = trace_arena_strdup(r->t->arena, (const uint8_t *)v, n);
	return *out ? 0 : trace_nomem(r);
}

/* Which process the segment recorded: its meta "process" (its Unix start
 * apart) */
static int seg_process(struct reader *r, struct trace_segment *g, const char *process)
{
	const char *last = strrchr(process, ' ');

	if (!last)
		return 0;
	g->started = strtoll(last + 1, NULL, 10);
	return seg_str(r, &g->process, process, (size_t)(last - process));
}

/* ... else (a trace of an older d9prof) its host and pid */
static int seg_process_old(struct reader *r, struct trace_segment *g)
{
	char buf[160];

	if (g->process || !g->pid)
		return 0;
	snprintf(buf, sizeof(buf), "%s %u", g->host ? g->host : "", g->pid);
	return seg_str(r, &g->process, buf, strlen(buf));
}

/* What a META chunk of the segment (in r->cbuf) says about it: its first
 * one which recording and segment, from when; the one with the target's
 * meta which process. What a segment knew stays. */
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
	err = trace_inflate(r, r->cbuf, &c);
	if (!err)
		err = trace_decode_meta(r, &c, get_le32(r->cbuf + 16));
	r->t = real;
	r->meta_cap = cap;
	for (size_t i = 0; !err && i < scratch.nmeta; i++) {
		const char *k = scratch.meta[i].key, *v = scratch.meta[i].value;

		if (!strcmp(k, TRACE_META_RECORDING)) {
			err = seg_str(r, &g->recording, v, strlen(v));
		} else if (!strcmp(k, TRACE_META_PROCESS)) {
			err = g->process ? 0 : seg_process(r, g, v);
		} else if (!strcmp(k, TRACE_META_HOSTNAME)) {
			err = seg_str(r, &g->host, v, strlen(v));
		} else if (!strcmp(k, TRACE_META_PID) && !g->pid) {
			g->pid = (uint32_t)strtoul(v, NULL, 10);
		} else if (!strcmp(k, TRACE_META_COMM)) {
			err = seg_str(r, &g->comm, v, strlen(v));
		} else if (!strcmp(k, TRACE_META_SEGMENT)) {
			g->index = strtoull(v, NULL, 10);
		} else if (!strcmp(k, TRACE_META_SEGMENT_START)) {
			g->start = strtoull(v, NULL, 10);
		} else if (!strcmp(k, TRACE_META_CLOCK_REALTIME)) {
			g->wall_offset = strtoll(v, NULL, 10);
		}
	}
	free(scratch.meta);
	trace_arena_free_blocks(&arena);
	return err;
}

/* Find the segments of the regular file @fd (@size bytes): one pass over
 * the chunk headers, decoding only each segment's first META and its END. */
static int scan_file(struct reader *r, int fd, uint32_t file, uint64_t size,
		     struct seg_list *l)
{
	uint8_t fh[TRACE_FILE_HDR_SIZE];
	uint64_t pos = 0;
	int err;

	r->chunk = 0;
	for (;;) {
		struct seg_at g = {.file = file, .chunk = r->chunk};
		uint64_t p = pos + TRACE_FILE_HDR_SIZE;
		uint32_t csize;
		ssize_t got = read_full(fd, fh, sizeof(fh), pos, 0);

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
			err = trace_check_chunk(r, r->cbuf);
			/* the first META, and the next until one says which
			 * process (the target's meta follows the head; in an
			 * older trace, every one) */
			if (!err && type == TRACE_CHUNK_META &&
			    (p == pos + TRACE_FILE_HDR_SIZE || !g.info.process))
				err = seg_meta(r, &g.info);
			if (!err && type == TRACE_CHUNK_END) {
				struct cursor c;

				err = trace_inflate(r, r->cbuf, &c);
				if (!err)
					err = trace_decode_end(r, &c);
			}
			if (err)
				return err;
			r->chunk++;
			p += TRACE_CHUNK_HDR_SIZE + csize;
			if (r->seen_end)
				break;
		}
		err = seg_process_old(r, &g.info);
		if (err)
			return err;
		g.end = p;
		g.info.complete = r->seen_end;
		if (!g.info.start)
			g.info.start = r->segc.start_time;
		g.info.end = r->seen_end ? r->segc.end_time : 0;
		if (LIB_GROW(l->v, l->cap, l->n + 1))
			return trace_nomem(r);
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
	return a && b && a->recording && b->recording &&
	       !strcmp(a->recording, b->recording);
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
					   : y->end - y->info.offset >
						     x->end - x->info.offset;
			if (y_better)
				x->dup = 1;
			else
				y->dup = 1;
		}
}

/* The processes of @l's segments (not copies), in the order they were
 * first recorded: each one's first segment */
static size_t processes(const struct seg_list *l, const struct seg_at **v, size_t cap)
{
	size_t n = 0, k;

	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].dup || !l->v[i].info.process)
			continue;
		for (k = 0; k < n && strcmp(v[k]->info.process, l->v[i].info.process);
		     k++)
			;
		if (k == n && n < cap)
			v[n++] = &l->v[i];
	}
	return n;
}

/* "pid 4242 'demo' started 2026-11-29 04:01:02 (3 files)" for each
 * process of @v[0 .. @n), into @buf */
static void name_processes(const struct seg_list *l, const struct seg_at *const *v,
			   size_t n, size_t nfiles, char *buf, size_t len)
{
	uint8_t *seen = calloc(nfiles ? nfiles : 1, 1);
	size_t at = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < n && at < len; k++) {
		const struct trace_segment *g = &v[k]->info;
		time_t when = (time_t)g->started;
		char day[32] = "", comm[48] = "";
		struct tm tm;
		size_t files = 0;

		if (g->started && localtime_r(&when, &tm))
			strftime(day, sizeof(day), " started %Y-%m-%d %H:%M:%S", &tm);
		if (g->comm)
			snprintf(comm, sizeof(comm), " '%s'", g->comm);
		/* the files holding its segments */
		for (size_t i = 0; seen && i < l->n; i++)
			if (!l->v[i].dup && l->v[i].info.process &&
			    !strcmp(l->v[i].info.process, g->process) &&
			    seen[l->v[i].file] != k + 1) {
				seen[l->v[i].file] = (uint8_t)(k + 1);
				files++;
			}
		at += (size_t)snprintf(buf + at, len - at, "%spid %u%s%s (%zu file%s)",
				       k ? ", " : "", g->pid, comm, day, files,
				       files == 1 ? "" : "s");
	}
	free(seen);
}

/* Keep one process: of several, the one @o picks (the others' segments
 * left out), else fail naming each. Segments that do not say which
 * process they recorded go with it. */
static int one_process(struct reader *r, struct seg_list *l, size_t nfiles,
		       const struct trace_read_opts *o)
{
	enum { SHOWN = 4 };
	const struct seg_at *v[SHOWN + 1], *keep = NULL;
	char names[400];
	size_t n = processes(l, v, SHOWN + 1), same = 0;

	if (n == 1 && o && o->pid && v[0]->info.pid != o->pid) {
		name_processes(l, v, 1, nfiles, names, sizeof(names));
		return trace_fail(r, -ENOTUNIQ, "no recording of pid %u here: %s", o->pid,
				  names);
	}
	if (n <= 1)
		return 0;
	if (o && o->last) {
		for (size_t i = 0; i < l->n; i++)
			if (!l->v[i].dup && l->v[i].info.process)
				keep = &l->v[i];
	} else if (o && o->pid) {
		for (size_t k = 0; k < n; k++)
			if (v[k]->info.pid == o->pid) {
				keep = v[k];
				same++;
			}
		if (same != 1) {
			name_processes(l, v, n > SHOWN ? SHOWN : n, nfiles, names,
				       sizeof(names));
			if (!same)
				return trace_fail(r, -ENOTUNIQ,
						  "no recording of pid %u here: %s",
						  o->pid, names);
			return trace_fail(
				r, -ENOTUNIQ,
				"pid %u is %zu processes here (a reboot between): "
				"%s; read one by giving -i its files",
				o->pid, same, names);
		}
	}
	if (!keep) {
		name_processes(l, v, n > SHOWN ? SHOWN : n, nfiles, names, sizeof(names));
		return trace_fail(r, -ENOTUNIQ,
				  "recordings of %s%zu processes, which are never merged "
				  "(their task ids would collide): %s%s; read one with "
				  "--pid PID",
				  n > SHOWN ? "over " : "", n > SHOWN ? SHOWN : n, names,
				  n > SHOWN ? ", ..." : "");
	}
	for (size_t i = 0; i < l->n; i++) {
		struct seg_at *g = &l->v[i];

		if (!g->dup && g->info.process &&
		    strcmp(g->info.process, keep->info.process)) {
			g->other = 1;
			r->t->other_segments++;
		}
	}
	return 0;
}

static int add_meta(struct reader *r, const char *key, const char *value)
{
	struct trace *t = r->t;
	char *k, *v;

	if (LIB_GROW(t->meta, r->meta_cap, t->nmeta + 1))
		return trace_nomem(r);
	k = trace_arena_strdup(t->arena, (const uint8_t *)key, strlen(key));
	v = trace_arena_strdup(t->arena, (const uint8_t *)value, strlen(value));
	if (!k || !v)
		return trace_nomem(r);
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
		lib_map_release(&r->addr_ix);
		lib_map_release(&r->stack_ix);
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
	r->inl_seq.any = 0;
	r->lines_seq.any = 0;
	r->seen_end = 0;
	r->nixq = 0;
	memset(&r->segc, 0, sizeof(r->segc));
	if (LIB_GROW(r->smaps, r->smaps_cap, r->nsmaps + 1) ||
	    LIB_GROW(t->segments, r->segs_cap, t->nsegments + 1))
		return trace_nomem(r);
	r->smaps[r->nsmaps++] = NULL;
	s = &t->segments[t->nsegments++];
	*s = *g;
	s->state_used = r->use_state;
	s->meta_from = s->meta_to = t->nmeta;
	return 0;
}

static void seg_end(struct reader *r)
{
	struct trace *t = r->t;
	struct trace_segment *s = &t->segments[t->nsegments - 1];
	struct trace_counters *c = &t->counters, *k = &r->segc;

	s->complete = r->seen_end;
	s->meta_to = t->nmeta;
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
		ssize_t got = read_full(fd, fh, sizeof(fh), 0, 1);

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
	free(s->spans.v);
	free(s->cbuf);
	free(s->raw);
	free(s->recs);
	trace_dctx_put(s->dctx);
	free(s);
}

/* Open @path for reading, refusing a directory. The fd or -errno. */
static int open_trace_file(struct reader *r, const char *path, int *regular,
			   uint64_t *size)
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
	char **v; /* paths, in the arena */
	size_t n, cap;
};

static int input_add(struct reader *r, struct inputs *in, const char *path)
{
	char *p = trace_arena_strdup(r->t->arena, (const uint8_t *)path, strlen(path));

	if (!p || LIB_GROW(in->v, in->cap, in->n + 1))
		return trace_nomem(r);
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
	size_t first = in->n, dir_len = strlen(path);
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
	while (dir_len > 1 && path[dir_len - 1] == '/')
		dir_len--;
	while (!err && (e = readdir(d))) {
		char buf[4096];

		if (!trace_name(e->d_name))
			continue;
		/* "flight/" and "flight" name the same files: "flight/x.d9" */
		if ((size_t)snprintf(buf, sizeof(buf), "%.*s/%s", (int)dir_len, path,
				     e->d_name) >= sizeof(buf))
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
		return fail_file(r, -ENOENT,
				 "no trace files (*.d9, *.data) in the directory");
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

/* Leave file @path out, saying why (r->msg): one of several that cannot
 * be read. -ENOMEM, else 0. */
static int skip_file(struct reader *r, const char *path)
{
	struct trace *t = r->t;
	const char *why = r->msg ? r->msg : "unreadable";
	/* (it holds at least nskipped: growing from that is growing from
	 * less than it may hold, on a path taken once per bad file) */
	size_t cap = t->nskipped;
	struct trace_skipped *v;

	/* the message names the file first: the rest is why */
	if (!strncmp(why, path, strlen(path)) && !strncmp(why + strlen(path), ": ", 2))
		why += strlen(path) + 2;
	if (LIB_GROW(t->skipped, cap, t->nskipped + 1))
		return trace_nomem(r);
	v = &t->skipped[t->nskipped];
	v->file = path;
	v->why = trace_arena_strdup(t->arena, (const uint8_t *)why, strlen(why));
	if (!v->why)
		return trace_nomem(r);
	t->nskipped++;
	r->msg = NULL;
	return 0;
}

/* Read the inputs: scan every file for its segments, order them by time,
 * then read each once. Of several, a file that cannot be read is left
 * out (skip_file()). */
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
		err = trace_nomem(r);
		goto out;
	}
	for (i = 0; i < in->n; i++)
		fds[i] = -1;
	/* each file is scanned, and closed unless it is the only one */
	for (i = 0; i < in->n && !err; i++) {
		int reg = 0, fd;

		size_t before = l.n;

		r->file = multi ? in->v[i] : NULL;
		fd = open_trace_file(r, in->v[i], &reg, &sizes[i]);
		if (fd < 0) {
			err = fd;
			if (multi && err != -ENOMEM)
				err = skip_file(r, in->v[i]);
			continue;
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
			err = trace_fail(r, -EINVAL,
					 "several inputs must all be regular files");
		else
			err = scan_file(r, fd, (uint32_t)i, sizes[i], &l);
		/* a header and no whole chunk: nothing recorded in it */
		if (!err && l.n > before &&
		    l.v[before].end == l.v[before].info.offset + TRACE_FILE_HDR_SIZE)
			err = fail_file(r, -ENODATA,
					"no whole chunk after its header: its recorder "
					"stopped before writing any");
		if (in->n == 1)
			fds[i] = fd;
		else
			close(fd);
		if (err && multi && err != -ENOMEM) {
			l.n = before;
			err = skip_file(r, in->v[i]);
		}
	}
	if (!err && !l.n && t->nskipped)
		err = trace_fail(r, -ENODATA, "no readable trace file: %s: %s%s",
				 t->skipped[0].file, t->skipped[0].why,
				 t->nskipped > 1 ? " (and the others)" : "");
	if (err)
		goto out;
	qsort(l.v, l.n, sizeof(*l.v), seg_cmp);
	mark_dups(&l);
	err = one_process(r, &l, in->n, o);
	kept = err ? NULL : calloc(l.n ? l.n : 1, sizeof(*kept));
	if (!kept) {
		err = err ? err : trace_nomem(r);
		goto out;
	}
	for (i = 0; i < l.n; i++)
		if (!l.v[i].dup && !l.v[i].other)
			kept[nkept++] = l.v[i].info;
	t->dup_segments = l.n - nkept - t->other_segments;
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
			err = trace_nomem(r);
			goto out;
		}
	}
	for (i = 0; i < l.n && !err; i++) {
		struct seg_at *g = &l.v[i];

		if (g->dup || g->other)
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
				     : parse_chunks(r, fd,
						    g->info.offset + TRACE_FILE_HDR_SIZE,
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
	if (!err && t->src &&
	    (t->src->samples.n || t->src->events.n || t->src->spans.n) &&
	    !(t->src->names = calloc(in->n, sizeof(char *))))
		err = trace_nomem(r);
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
	r.dctx = trace_dctx_get();
	if (!r.t || !r.t->arena || !r.dctx) {
		err = trace_nomem(&r);
		goto out;
	}
	r.flags = flags & (TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS |
			   TRACE_READ_NO_SPANS | TRACE_READ_SPANS_LATER);
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
		err = trace_nomem(&r);
		goto out;
	}
	if (r.t->nstacks == 0)
		r.t->stack_off[0] = 0;
	if (!(flags & TRACE_READ_NO_INLINE)) {
		err = trace_expand_inlines(&r);
		if (!err)
			err = trace_name_rust(&r);
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
	trace_dctx_put(r.dctx);
	lib_map_release(&r.thread_ix);
	lib_map_release(&r.comm_ix);
	lib_map_release(&r.task_ix);
	lib_map_release(&r.addr_ix);
	lib_map_release(&r.stack_ix);
	free(r.inl);
	free(r.ixq);
	free(r.inl_names);
	free(r.lsite);
	free(r.sites);
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
	free(t->sums);
	free(t->sum_ents);
	free(t->tasks);
	free(t->frames);
	free(t->stack_off);
	free(t->stack_frames);
	free(t->samples);
	free(t->events);
	free(t->switches);
	free(t->holds);
	free(t->spans);
	free(t->segments);
	free(t->skipped);
	trace_arena_free(t->arena);
	src_free(t->src);
	free(t);
}

/* ---- walks -------------------------------------------------------------- */

/* In-memory records go in batches too, so that callers see one shape. */
#define MEM_BATCH 65536

/* Read chunk @k of @s again, check it and decode its @rec_size-byte records
 * (samples, events or spans, by @type) into s->recs; their number in *@n. */
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
		return trace_nomem(r);
	r->cbuf = s->cbuf;
	fd = input_fd(r, s->fds, s->names, k->file, &s->cur);
	if (fd < 0)
		return fd;
	got = read_full(fd, s->cbuf, len, k->pos, 0);
	if (got < 0)
		return read_failed(r, got);
	if ((size_t)got < len)
		return trace_fail(r, -EIO,
				  "chunk %zu at offset %zu: the file was cut short "
				  "since it was opened",
				  r->chunk, r->pos);
	err = check_header(r, &csize);
	if (!err && (csize != k->csize || get_le32(s->cbuf + 4) != k->type))
		err = trace_fail(r, -EIO,
				 "chunk %zu at offset %zu: the file changed since "
				 "it was opened",
				 r->chunk, r->pos);
	if (!err)
		err = trace_check_chunk(r, s->cbuf);
	if (!err)
		err = trace_inflate(r, s->cbuf, &c);
	if (err)
		return err;
	count = get_le32(s->cbuf + 16);
	err = type == TRACE_CHUNK_SAMPLES ? trace_check_samples(r, &c, count)
	      : type == TRACE_CHUNK_SPANS ? 0 /* (trace_decode_spans() does) */
					  : trace_check_events(r, &c, count, k->type);
	if (err)
		return err;
	/* (a span record takes 7 bytes at least: its count is bounded) */
	if (type == TRACE_CHUNK_SPANS && count > cursor_left(&c))
		return trace_bad(r, "record count exceeds chunk size");
	if (lib_grow(&s->recs, &s->recs_cap, (count ? count : 1) * rec_size, 1))
		return trace_nomem(r);
	if (type == TRACE_CHUNK_SPANS) {
		err = trace_decode_spans(r, &c, count, s->recs, n);
		if (!err && c.p != c.end)
			err = trace_bad(r, "trailing bytes in chunk");
		return err;
	}
	err = type == TRACE_CHUNK_SAMPLES
		      ? trace_decode_samples(r, &c, count, s->recs, k->nstacks,
					     s->smap[k->seg])
		      : trace_decode_any_events(r, &c, k->type, count, s->recs);
	if (err)
		return err;
	if (c.p != c.end)
		return trace_bad(r, "trailing bytes in chunk");
	*n = trace_in_window(r, s->recs, count, rec_size);
	return 0;
}

/* Walk the chunks of @ls through @sfn (samples) and those of @le through
 * @efn (events), either list may be NULL, the two merged in file order;
 * the records before @from (0: none) left out too. */
/* A walk's reader of @t, borrowing the trace's buffers, from @from (and
 * the trace's window); 0 or -ENOMEM */
static int walk_begin(const struct trace *t, struct reader *r, uint64_t from)
{
	struct trace_src *s = t->src;

	memset(r, 0, sizeof(*r));
	s->failed = 0;
	r->t = (struct trace *)t;
	r->from = from > t->from ? from : t->from;
	r->to = t->to;
	if (!s->dctx && !(s->dctx = trace_dctx_get()))
		return trace_nomem(r);
	r->dctx = s->dctx;
	r->raw = s->raw;
	r->raw_cap = s->raw_cap;
	return 0;
}

/* After a chunk of the walk of @r: its buffer kept, its error said */
static void walk_chunk_done(struct trace_src *s, struct reader *r, int err)
{
	s->raw = r->raw;
	s->raw_cap = r->raw_cap;
	if (err && r->msg) {
		s->failed = 1;
		snprintf(s->msg, sizeof(s->msg), "%s", r->msg);
	}
}

static int walk(const struct trace *t, const struct src_list *ls,
		const struct src_list *le, trace_sample_fn sfn, trace_event_fn efn,
		void *ctx, uint64_t from)
{
	struct trace_src *s = t->src;
	struct reader r;
	size_t i = 0, k = 0, ns = ls ? ls->n : 0, ne = le ? le->n : 0, n = 0;
	int err = walk_begin(t, &r, from);

	while ((i < ns || k < ne) && !err) {
		int smp = k == ne || (i < ns && ls->v[i].seq < le->v[k].seq);
		const struct src_chunk *ck = smp ? &ls->v[i] : &le->v[k];

		/* a window skips what its index says lies outside it */
		if (ck->timed &&
		    ((r.from && ck->tmax < r.from) || (t->to && ck->tmin > t->to))) {
			i += smp;
			k += !smp;
			continue;
		}
		if (smp)
			err = walk_chunk(s, &r, &ls->v[i++], sizeof(struct trace_sample),
					 TRACE_CHUNK_SAMPLES, &n);
		else
			err = walk_chunk(s, &r, &le->v[k++], sizeof(struct trace_event),
					 TRACE_CHUNK_EVENTS, &n);
		walk_chunk_done(s, &r, err);
		if (!err && n)
			err = smp ? sfn(ctx, s->recs, n) : efn(ctx, s->recs, n);
	}
	return err;
}

int trace__for_each_span(const struct trace *t, trace_span_fn fn, void *ctx)
{
	struct trace_src *s;
	struct reader r;
	size_t n = 0;
	int err;

	if (!t || !fn)
		return -EINVAL;
	s = t->src;
	if (!s || !s->spans.n) {
		if (s)
			s->failed = 0;
		for (size_t i = 0; i < t->nspans && t->spans; i += n) {
			n = t->nspans - i < MEM_BATCH ? t->nspans - i : MEM_BATCH;
			if ((err = fn(ctx, t->spans + i, n)))
				return err;
		}
		return 0;
	}
	err = walk_begin(t, &r, 0);
	for (size_t i = 0; i < s->spans.n && !err; i++) {
		err = walk_chunk(s, &r, &s->spans.v[i], sizeof(struct trace_span),
				 TRACE_CHUNK_SPANS, &n);
		walk_chunk_done(s, &r, err);
		if (!err && n)
			err = fn(ctx, s->recs, n);
	}
	return err;
}

/* Hand @sfn (samples) or @efn (events) the records: those of the chunks
 * @l left on disk, if any, else the @n in memory at @mem (in batches). */
static int for_each(const struct trace *t, const struct src_list *l, const void *mem,
		    size_t n, trace_sample_fn sfn, trace_event_fn efn, void *ctx)
{
	size_t size = sfn ? sizeof(struct trace_sample) : sizeof(struct trace_event);
	size_t i, k;
	int err;

	if (l && l->n)
		return walk(t, sfn ? l : NULL, efn ? l : NULL, sfn, efn, ctx, 0);
	if (t->src)
		t->src->failed = 0;
	for (i = 0; mem && i < n; i += k) {
		const void *v = (const char *)mem + i * size;

		k = n - i < MEM_BATCH ? n - i : MEM_BATCH;
		err = sfn ? sfn(ctx, v, k) : efn(ctx, v, k);
		if (err)
			return err;
	}
	return 0;
}

int trace__for_each_sample(const struct trace *t, trace_sample_fn fn, void *ctx)
{
	if (!t || !fn)
		return -EINVAL;
	return for_each(t, t->src ? &t->src->samples : NULL, t->samples, t->nsamples, fn,
			NULL, ctx);
}

int trace__for_each_event(const struct trace *t, trace_event_fn fn, void *ctx)
{
	if (!t || !fn)
		return -EINVAL;
	return for_each(t, t->src ? &t->src->events : NULL, t->events, t->nevents, NULL,
			fn, ctx);
}

int trace__for_each_record_from(const struct trace *t, uint64_t from, trace_sample_fn sfn,
				trace_event_fn efn, void *ctx)
{
	const struct trace_src *s;
	int err;

	if (!t || !sfn || !efn)
		return -EINVAL;
	s = t->src;
	if (!s || !s->events.n)
		err = for_each(t, NULL, t->events, t->nevents, NULL, efn, ctx);
	else if (!s->samples.n)
		err = for_each(t, NULL, t->samples, t->nsamples, sfn, NULL, ctx);
	else
		return walk(t, &s->samples, &s->events, sfn, efn, ctx, from);
	if (err)
		return err;
	if (!s || !s->events.n)
		return s && s->samples.n
			       ? walk(t, &s->samples, NULL, sfn, NULL, ctx, from)
			       : trace__for_each_sample(t, sfn, ctx);
	return walk(t, NULL, &s->events, NULL, efn, ctx, from);
}

int trace__seekable(const struct trace *t)
{
	const struct src_list *l[2] = {t && t->src ? &t->src->samples : NULL,
				       t && t->src ? &t->src->events : NULL};

	if (!l[0] || (!l[0]->n && !l[1]->n))
		return 0;
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < l[k]->n; i++)
			if (!l[k]->v[i].timed)
				return 0;
	return 1;
}

int trace__for_each_record(const struct trace *t, trace_sample_fn sfn, trace_event_fn efn,
			   void *ctx)
{
	return trace__for_each_record_from(t, 0, sfn, efn, ctx);
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

static const char *thread_in(const struct trace *t, const struct trace_thread *v,
			     size_t n, uint32_t tid)
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
