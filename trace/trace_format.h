/* SPDX-License-Identifier: MIT */
/*
 * trace_format.h - byte-level layout of a d9prof trace and the encoding
 * helpers shared by the writer and the reader. Private to trace/.
 *
 * All integers little-endian. "v" = unsigned LEB128 varint (at most 10
 * bytes), "z" = zigzag varint of a signed 64-bit difference (computed with
 * unsigned wrap-around, so any two u64 values have a delta).
 *
 * File header, 16 bytes:
 *   u8[8] TRACE_MAGIC, u32 version (TRACE_VERSION), u32 flags (0)
 *
 * Chunk header, TRACE_CHUNK_HDR_SIZE = 28 bytes, then csize bytes holding
 * exactly one zstd frame that decompresses to rsize bytes:
 *   0  u32 magic    TRACE_CHUNK_MAGIC
 *   4  u32 type     enum trace_chunk_type
 *   8  u32 csize    compressed payload bytes
 *   12 u32 rsize    raw (decompressed) bytes, <= TRACE_MAX_RAW
 *   16 u32 count    records in the chunk (see below)
 *   20 u32 pcheck   XXH32(payload, seed 0)
 *   24 u32 hcheck   XXH32(header bytes 0..23, seed 0)
 * The header has its own checksum so that a reader can tell a file cut
 * inside a payload (header intact, payload short: stop, not an error) from
 * a corrupt size field (error), instead of silently dropping the rest of
 * the file when a bit flips in csize.
 *
 * Raw payloads. Columns: all values of one field, then the next field;
 * this groups similar bytes, which zstd compresses far better than rows.
 * Delta bases start at 0 in every chunk so each chunk decodes alone.
 *
 *   META     count = n     n x (v klen, key, v vlen, value)
 *   THREADS  count = n     n x (v tid, v namelen + 1 (0: no name), name)
 *   TASKS    count = n     n x (v id,  v namelen + 1 (0: no name), name)
 *   STACKS   count = ns    v first_frame, v nf, v first_stack,
 *                          nf x z addr (delta to the previous address),
 *                          ns x v depth,
 *                          sum(depth) x z frame id (delta to previous id)
 *            first_frame/first_stack must equal the number of frames and
 *            stacks defined so far (chunks are strictly in sequence).
 *   SAMPLES  count = n     n x z time (delta), n x v tid, n x v stack,
 *                          n x v weight, n x v sampler, n x v flags,
 *                          then only where a sample of the chunk has a
 *                          task: n x z task (delta) (readers from before
 *                          it reject such a chunk; absent: all 0)
 *   EVENTS   count = n     n x z time (delta), n x z task (delta),
 *                          n x v tid, n x v type
 *   POLLS    count = n     v m (records), then EVENTS' columns over the
 *                          m records (but tids as z change from the record
 *                          before, from 0), then v length per record of
 *                          type TRACE_REC_POLL or TRACE_REC_POLL_WOKEN: a
 *                          whole poll, at its end, read as BEGIN at time -
 *                          length, (WAKE at time,) END at time; n counts the
 *                          events so read (version 2; the writer makes one
 *                          of a BEGIN directly followed by its END)
 *   FRAMES   count = n     v first_frame, v nstr, nstr x (v len, bytes),
 *                          n x v sym (0: none, else string index + 1),
 *                          n x v module (same), n x v offset, n x v kernel
 *            (a string table per chunk: module names and symbols of
 *            several addresses in one function are stored once)
 *   INLINES  count = n     v nstr, nstr x (v len, bytes),
 *                          n x v frame id (delta to the previous id, the
 *                          first to 0), n x v ninl (1 to TRACE_MAX_INLINE
 *                          of trace.h), sum(ninl) x v name (string index)
 *            the functions inlined at a frame's address, innermost first;
 *            ids must be defined by an earlier STACKS chunk and strictly
 *            increase, within a chunk and across INLINES chunks (a frame
 *            has one chain at most). Written after the FRAMES chunk of the
 *            same frames. The bound on ninl bounds what the reader makes
 *            of a chain: every stack entry of a frame becomes ninl + 1.
 *   LINES    count = n     v nstr, nstr x (v len, bytes),
 *                          n x v frame id (delta to the previous id, the
 *                          first to 0), n x v file (0: none, else string
 *                          index + 1), n x v line, n x v start_line,
 *                          n x v nsite (0 to TRACE_MAX_INLINE), then over
 *                          all sum(nsite): v call_file (as file), v
 *                          call_line, v decl_line (three columns)
 *            trace_frame's file, line and start_line (0: unknown) and
 *            its inline chain's trace_inline_src, one per name of its
 *            INLINES chain, innermost first (a count that differs from
 *            the chain's is read as none). Ids as in INLINES (defined,
 *            strictly increasing within a segment); written after the
 *            INLINES chunk of the same frames. Readers from before it
 *            skip it.
 *   SPANS    count = n     v nstr, nstr x (v len, bytes),
 *                          n x z time (delta), n x v tid, n x v type
 *                          (enum trace_span_type), n x z id (delta),
 *                          n x z value (the signed value itself),
 *                          n x v name, n x v text (0: none, else string
 *                          index + 1)
 *            the application's spans and events in time order per
 *            thread; a string table per chunk (span names repeat).
 *            Readers from before it skip it.
 *   SPAN_STATE count = n   as SPANS: the spans open at the segment's
 *                          start (at most one, before its SPANS), read
 *                          only as STATE is
 *   INDEX    count = n     n x z first (delta, the first to 0), n x v
 *                          (last - first): the earliest and the latest
 *                          time of the records of each SAMPLES, POLLS,
 *                          EVENTS and STATE chunk written since the last
 *                          INDEX chunk of the segment (or its start), in
 *                          file order, a whole poll from its begin. The
 *                          writer adds one at each flush. A count that
 *                          differs from the chunks read is read as none;
 *                          readers from before it skip it.
 *   SWITCHES count = n     n x z time (delta), n x v dur, n x v tid,
 *                          n x v stack, n x v preempted (0 or 1),
 *                          n x v blocked, n x v holder
 *            dur = 0 for time_in = 0 (still off-CPU at the end), else
 *            time_in - time + 1 (writers reject time_in < time; a dur
 *            that wraps time_in past 2^64 is corrupt); blocked = 0 for
 *            runnable = 0 (not known), else runnable - time + 1, and
 *            runnable must not pass time_in when that is known. The
 *            last two columns are absent in files from before them
 *            (read as 0); readers from before them reject the chunk.
 *            Then, also absent in older files (readers from before
 *            them reject the chunk): n x v nhold (<= TRACE_MAX_HOLDS; 0 unless
 *            blocked and dur are known), then per switch nhold x (v tid,
 *            v ns), their ns summing to at most dur - blocked. Then,
 *            only where a switch of the chunk has a task (as SAMPLES):
 *            n x z task (delta).
 *   COMMS    count = n     as THREADS: threads outside the target
 *   STATE    count = n     as EVENTS: what was open at the segment's
 *                          start (at most one, before its EVENTS)
 *   END      count = 1     v samples, v events, v lost_samples,
 *                          v shim_drops, v start_time, v end_time,
 *                          v switches (absent in older files: 0)
 *                          (readers ignore further bytes: later versions
 *                          may append counters)
 * Readers skip chunks of a type they do not know (after checking them).
 * Segments: after an END chunk the file ends or another file header
 * starts the next segment, whose ids (frames, stacks) start at 0 again.
 * Strings are not NUL-terminated in the file.
 */
#ifndef D9_TRACE_FORMAT_H
#define D9_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/map.h"
#include "trace/trace.h"

#define TRACE_FILE_HDR_SIZE  16
#define TRACE_CHUNK_HDR_SIZE 28
#define TRACE_CHUNK_MAGIC    0x4b433944u /* "D9CK" little-endian */
#define TRACE_MAX_RAW	     (1u << 30)	 /* reader's limit on rsize */
#define TRACE_VARINT_MAX     10

/* x86_64: the kernel half of the address space. */
#define TRACE_KERNEL_START 0xffff800000000000ULL

static inline int trace_addr_is_kernel(uint64_t addr)
{
	return addr >= TRACE_KERNEL_START;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t zigzag(uint64_t delta)
{
	return (delta << 1) ^ (0 - (delta >> 63));
}

static inline uint64_t unzigzag(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

/* Encode @v at @p (room for TRACE_VARINT_MAX bytes); returns the end. */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/*
 * A bounds-checked read cursor over a raw payload. Errors are sticky: a
 * read past the end or an overlong varint sets err and returns 0, so a
 * decoder checks err once after a column instead of after every value.
 */
struct cursor {
	const uint8_t *p;
	const uint8_t *end;
	int err;
};

uint64_t trace_cursor_varint_slow(struct cursor *c);

static inline uint64_t cursor_varint(struct cursor *c)
{
	const uint8_t *p = c->p;
	uint64_t v = 0;
	int shift;

	/* fast path, away from the end of the payload: no bounds checks;
	 * values of 9+ bytes (>= 2^63) are rare and take the slow path */
	if (c->end - p >= TRACE_VARINT_MAX) {
		for (shift = 0; shift < 63; shift += 7) {
			uint8_t b = *p++;

			v |= (uint64_t)(b & 0x7f) << shift;
			if (b < 0x80) {
				c->p = p;
				return v;
			}
		}
	}
	return trace_cursor_varint_slow(c);
}

static inline size_t cursor_left(const struct cursor *c)
{
	return (size_t)(c->end - c->p);
}

/* A pointer to the next @len bytes, or NULL (and err) if there are fewer. */
static inline const uint8_t *cursor_bytes(struct cursor *c, size_t len)
{
	const uint8_t *p = c->p;

	if (len > cursor_left(c)) {
		c->err = 1;
		c->p = c->end;
		return NULL;
	}
	c->p += len;
	return p;
}

#endif /* D9_TRACE_FORMAT_H */
