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
 * window to DIR/d9prof-PID-YYYYmmdd-HHMMSS.data, back to back: one trace
 * file; this recording's oldest dumps are deleted while all of them pass
 * max_total.
 *
 * Rotate mode: a segment is written in DIR/[KEYS/] and named
 * EPOCH-INDEX.d9 when sealed; the oldest sealed files are deleted while
 * all of them pass max_total; the on-segment command runs on each sealed
 * file in the background (its failures counted, never fatal).
 *
 * The recorder is root and the target's owner may not be: every file is
 * made under a random ".NAME.XXXXXX.tmp" name with O_CREAT|O_EXCL|
 * O_NOFOLLOW, mode 0600, and renamed once complete (a dump never over a
 * file that is there); directories are made 0700 and opened a component
 * at a time, following only root's (or our) links, and refused when the
 * target's owner owns one or anyone may write in one without the sticky
 * bit. Names the target chooses (SERVICE) are made safe components.
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
	const char *dir;	  /* output directory (created if missing) */
	pid_t pid;		  /* the target, for file names */
	uint64_t window_ns;	  /* memory: what a dump covers at least */
	uint64_t max_bytes;	  /* memory: all segments kept, at most */
	uint64_t max_total;	  /* rotate: all segment files, at most (0:
				   * no limit) */
	const char *key_prefix;	  /* rotate: NULL, or files under
				   * PREFIX/YYYY-MM-DD/HHMM/SERVICE/HOST/BOOT/ */
	const char *service;	  /* ... SERVICE: the target's name */
	const char *host;	  /* ... HOST: NULL, the host's name */
	int open_sealed;	  /* 1: each sealed file and dump comes with
				   * a read-only fd of it (its uploader's) */
	const char *on_segment;	  /* rotate: "CMD {}", run by /bin/sh with
				   * $D9PROF_SEGMENT the sealed file's path
				   * and {} a reference to it */
	unsigned int max_hooks;	  /* rotate: commands running at once, at
				   * most (the next ones wait) */
	uint64_t hook_timeout_ns; /* rotate: a command running longer is
				   * killed, with its process group (0: never) */
	uid_t owner;		  /* the target's owner ((uid_t)-1: none) */
	const char *tag;	  /* rotate: NULL, or [0-9a-f]{1,16}, the
				   * recording's own, in each file's name:
				   * two recordings that start in one second
				   * (a service restarted) never share one */
};

struct flight;

/* The directory is made if missing. 0 or -errno; with -EACCES or -ELOOP
 * the directory or link refused and why in @why. */
int flight__new(const struct flight_opts *o, struct flight **out, char *why, size_t len);
void flight__free(struct flight *f);

/* An fd for segment @index, started at @start_ns (CLOCK_MONOTONIC) and
 * @start_wall (unix seconds): flight owns it; write it, then seal. */
int flight__open(struct flight *f, uint64_t index, uint64_t start_ns, time_t start_wall,
		 int *fd);

/* Where a file goes in an object store: its object-store layout key,
 * DATE/HHMM/SERVICE/HOST/BOOT/NAME (UTC; without --key-prefix's PREFIX),
 * and, with flight_opts.open_sealed, a read-only fd of the file (the
 * caller closes it; -1 otherwise or if it could not be opened). */
struct flight_sealed {
	char path[4096];  /* rotate: the file sealed */
	char key[512];	  /* rotate: its layout key */
	int fd;		  /* rotate: see above */
	uint64_t bytes;	  /* its size */
	uint64_t dropped; /* segments dropped (memory) or files deleted
			   * (rotate) to stay within bounds */
};

/* The open segment is complete, ending at @end_ns: keep it (memory) or
 * seal its file (rotate). 0 or -errno (the segment is lost). */
int flight__seal(struct flight *f, uint64_t end_ns, struct flight_sealed *out);

struct flight_dump {
	char path[4096];   /* the file written */
	char key[512];	   /* its layout key (above) */
	int fd;		   /* see above */
	uint64_t from, to; /* the time it covers (ns) */
	unsigned int segments;
	uint64_t bytes;
	unsigned int deleted; /* older dumps deleted for max_total */
};

/* Write the kept segments overlapping [@to - window, @to] as one file in
 * DIR, named for @wall (unix seconds) and unique. 0 or -errno (no file
 * is left behind). -ENODATA when nothing is kept. */
int flight__dump(struct flight *f, uint64_t to, time_t wall, struct flight_dump *out);

/* Bytes held now: the kept segments and the open one (memory mode); the
 * open one's alone in *@open if non-NULL. */
uint64_t flight__bytes(const struct flight *f, uint64_t *open);

/* The on-segment commands since the last flight__reap(). */
struct flight_hooks {
	unsigned int failed;	       /* exit status not 0, killed, or past the
					* timeout (then killed) */
	unsigned int skipped;	       /* files deleted for max_total while their
					* command waited for a slot */
	unsigned int running, waiting; /* now */
	char why[160];		       /* the last failure */
};

/* Reap the on-segment commands that ended, kill those past the timeout at
 * @now (CLOCK_MONOTONIC ns), start waiting ones. Returns h->failed. */
unsigned int flight__reap(struct flight *f, uint64_t now, struct flight_hooks *h);
/* Commands still running. */
unsigned int flight__running(const struct flight *f);

#endif /* D9_FLIGHT_H */
