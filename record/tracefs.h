/* SPDX-License-Identifier: MIT */
/*
 * tracefs.h - finding tracefs and reading tracepoints (internal to
 * record/).
 *
 * The collectors that open tracepoints with perf_event_open (offcpu.c,
 * exitwatch.c) need where tracefs is (mounted here if missing and we may),
 * a tracepoint's id, the offsets of its fields in the raw record, and
 * kernel filters that let through a process's threads. None of this opens
 * an event. Functions return 0 or -errno and never print; those that can
 * fail for a reason the user must hear put one line in @why.
 */
#ifndef D9_TRACEFS_H
#define D9_TRACEFS_H

#include <stddef.h>
#include <stdint.h>

/* Where tracefs is mounted, from /proc/mounts-format text @mounts: a tracefs
 * mount, or "tracing" under a debugfs mount. 0, or -ENOENT. */
int tracefs_find_in(const char *mounts, char *path, size_t len);
/* Where tracefs is mounted on this machine, into @path. If it is not and
 * @may_mount, as root, it is mounted at /sys/kernel/tracing and *@mounted
 * set to 1 (else 0). 0, or -errno with a reason in @why. */
int tracefs_find(int may_mount, char *path, size_t len, int *mounted, char *why,
		 size_t whylen);
/* The id and format file text of tracepoint @name ("sched/sched_switch")
 * under tracefs @dir. 0, or -errno with a reason in @why. */
int tracepoint_read(const char *dir, const char *name, uint64_t *id, char *fmt,
		    size_t len, char *why, size_t whylen);
/* The offset, size and signedness of @field in the tracepoint format file
 * text @format ("\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;").
 * 0, -ENOENT (no such field) or -EINVAL (malformed). */
int tracepoint_field(const char *format, const char *field, unsigned int *offset,
		     unsigned int *size, int *is_signed);
/* The offset of field @name of exactly @size bytes in @format, 0 if there
 * is no such field (no field of interest sits at offset 0: the common
 * header is there). */
unsigned int tracepoint_offset(const char *format, const char *name, unsigned int size);
/* A tracepoint filter letting through tids @tids (@n > 0, sorted here) of
 * field @field: "(f>=a&&f<=b)||f==c||f>=d", at most @len bytes with the
 * NUL, ranges merged until it fits (the last one open-ended, for threads
 * created later). 0, -E2BIG or -ENOMEM. */
int tracepoint_tid_filter(const char *field, uint32_t *tids, size_t n, char *buf,
			  size_t len);

#endif /* D9_TRACEFS_H */
