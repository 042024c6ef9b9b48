/* SPDX-License-Identifier: MIT */
/*
 * flight.h - where a segmented recording's trace segments go (internal to
 * record/): kept in memory for a flight recorder's window and written out
 * as one file on a dump, or sealed as one file each when rotating to disk.
 *
 * The recording engine (record.c) writes each segment with its own trace
 * writer into the fd flight__open() gives it, finishes it, and hands it
 * back with flight__seal(). Nothing here prints; failures return -errno
 * and what the caller should say is in the result structs.
 *
 * Memory mode: segments live in memfds (the page cache, not the
 * recorder's heap); whole segments are dropped from the old end while the
 * newer ones still cover the window, and whenever all of them together
 * pass max_bytes. A dump writes every kept segment that overlaps the last
 * window to DIR/d9prof-PID-YYYYmmdd-HHMMSS.data (".NAME.tmp" until it is
 * complete, then renamed), back to back: one trace file.
 *
 * Rotate mode: a segment is written to DIR/[KEYS/].EPOCH-INDEX.d9.tmp and
 * renamed to EPOCH-INDEX.d9 when sealed; the oldest sealed files are
 * deleted while all of them pass max_total; the on-segment command runs on
 * each sealed file in the background (its failures counted, never fatal).
 */
#ifndef D9_FLIGHT_H
#define D9_FLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum flight_mode {
	FLIGHT_MEMORY = 1,
	FLIGHT_ROTATE = 2,
};

struct flight_opts {
	enum flight_mode mode;
	const char *dir;	/* output directory (created if missing) */
	pid_t pid;		/* the target, for file names */
	uint64_t window_ns;	/* memory: what a dump covers at least */
	uint64_t max_bytes;	/* memory: all segments kept, at most */
	uint64_t max_total;	/* rotate: all segment files, at most (0:
				 * no limit) */
	const char *key_prefix;	/* rotate: NULL, or files under
				 * PREFIX/YYYY-MM-DD/HHMM/SERVICE/HOST/BOOT/ */
	const char *service;	/* ... SERVICE: the target's name */
	const char *on_segment;	/* rotate: "CMD {}", run by /bin/sh with {}
				 * the sealed file's path (quoted) */
};

struct flight;

/* The directory is created (one level) if missing. 0 or -errno. */
int flight__new(const struct flight_opts *o, struct flight **out);
void flight__free(struct flight *f);

/* An fd for segment @index, started at @start_ns (CLOCK_MONOTONIC) and
 * @start_wall (unix seconds): flight owns it; write it, then seal. */
int flight__open(struct flight *f, uint64_t index, uint64_t start_ns, time_t start_wall,
		 int *fd);

struct flight_sealed {
	char path[4096];	/* rotate: the file sealed */
	uint64_t bytes;		/* its size */
	uint64_t dropped;	/* segments dropped (memory) or files deleted
				 * (rotate) to stay within bounds */
};

/* The open segment is complete, ending at @end_ns: keep it (memory) or
 * seal its file (rotate). 0 or -errno (the segment is lost). */
int flight__seal(struct flight *f, uint64_t end_ns, struct flight_sealed *out);

struct flight_dump {
	char path[4096];	/* the file written */
	uint64_t from, to;	/* the time it covers (ns) */
	unsigned int segments;
	uint64_t bytes;
};

/* Write the kept segments overlapping [@to - window, @to] as one file in
 * DIR, named for @wall (unix seconds) and unique. 0 or -errno (no file
 * is left behind). -ENODATA when nothing is kept. */
int flight__dump(struct flight *f, uint64_t to, time_t wall, struct flight_dump *out);

/* Bytes held now: the kept segments and the open one (memory mode); the
 * open one's alone in *@open if non-NULL. */
uint64_t flight__bytes(const struct flight *f, uint64_t *open);

/* Reap the on-segment commands that ended: how many failed (exit status
 * not 0, or killed) since the last call, and the last one's description
 * in @why. */
unsigned int flight__reap(struct flight *f, char *why, size_t len);
/* Commands still running. */
unsigned int flight__running(const struct flight *f);

#endif /* D9_FLIGHT_H */
