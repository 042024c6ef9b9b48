/* SPDX-License-Identifier: MIT */
/*
 * proc.h - the recorder process and /proc (record/proc.c): its priority
 * while it records, the small files of /proc it reads, and its clocks.
 */
#ifndef D9_RECORD_PROC_H
#define D9_RECORD_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A target with hundreds of busy threads leaves a recorder of ordinary
 * priority a sliver of a CPU: its rings overflow between drains and every
 * system call waits for a turn (400 threads: 20 s of wall time for -d 3,
 * 7 s of it before record__run() even started). The recorder drains at
 * nice -20 where it may (root, CAP_SYS_NICE; silently nothing elsewhere):
 * record_boost(). What it then uses is what it needs, a few percent of a
 * core at ordinary rates. Starting and finishing it reads BTF, kallsyms
 * and ELF files, 100-150 ms of CPU: at nice -20 that CPU was taken from
 * the target (a request of a 2-CPU target 100 ms late at each start), so
 * there it keeps its priority, and record_boost_if_waiting() boosts only
 * once it waited BOOST_WAIT_NS for a CPU since it started or since
 * record_unboost(): a busy machine, where it would not start otherwise.
 * record_unboost() puts the nice value back (the finish, a forked command
 * before its exec). */
void record_boost(void);
void record_boost_if_waiting(void);
void record_unboost(void);

/* Up to @len - 1 bytes of the small file @path into @buf, NUL-terminated:
 * with @nul_to_space its NULs (a cmdline's) become spaces; it ends at its
 * first newline. The bytes read; 0 (and "") if it cannot be read. */
size_t record_read_file(const char *path, char *buf, size_t len, int nul_to_space);
/* Fields @first .. @first + @n - 1 (1-based, as in proc(5); from 4 on) of
 * /proc/@pid/stat into @v, and its state letter (field 3) into *@state
 * if non-NULL. 0 or -1. */
int proc_stat(pid_t pid, char *state, long long *v, unsigned int first, unsigned int n);
/* Call @fn (if non-NULL) for every thread of @pid listed in
 * /proc/@pid/task now; how many, or -1 if it cannot be listed. */
int proc_for_each_tid(pid_t pid, void (*fn)(void *ctx, pid_t tid), void *ctx);
/* Is @tid a thread of @pid now? With @inner, @tid is an id in the
 * process's own (innermost) pid namespace, as its gettid() says (a
 * container's), found through each thread's NSpid: a walk of
 * /proc/@pid/task. 1 or 0. */
int proc_has_thread(pid_t pid, pid_t tid, int inner);
/* Which process @pid is, for meta "process" (trace.h): "BOOT PID TICKS
 * UNIX", the boot's id, the pid, its start in clock ticks since boot and
 * in Unix seconds; a pid is reused, the three first never together. 0, or
 * -1 (and "") where /proc cannot say. */
int proc_identity(pid_t pid, char *buf, size_t len);
/* CPU time (user + system) @pid has used, in ns; 0 if unknown. */
uint64_t proc_cpu_ns(pid_t pid);
/* How long the calling thread has been runnable without a CPU, in ns
 * (/proc/thread-self/schedstat); 0 if unknown. */
uint64_t proc_self_run_delay_ns(void);

/* The program file @name names as execvp(3) finds it (PATH searched for
 * a name without '/'), into @buf; 0 or -ENOENT. */
int proc_which(const char *name, char *buf, size_t len);

/* Is @path where the system's own libraries live (/lib/, /usr/lib/ and
 * the like; the shim, built with frame pointers, counts as one), not the
 * target's own code? */
int proc_system_path(const char *path);
/* Call @fn with each file @pid maps executable that is its own code (a
 * path, not deleted, not proc_system_path()'s), once per run of its
 * mappings, in address order: its program file and its own libraries.
 * Stops at @fn's nonzero return and returns it; 0, or -errno where the
 * maps cannot be read. */
int proc_for_each_own_file(pid_t pid, int (*fn)(void *ctx, const char *path), void *ctx);

/* CLOCK_MONOTONIC now, in ns. */
uint64_t record_now_ns(void);
/* CLOCK_REALTIME - CLOCK_MONOTONIC now, in ns: a monotonic time plus this
 * is its wall-clock time (trace meta "clock_realtime"). */
int64_t record_realtime_offset_ns(void);

#endif /* D9_RECORD_PROC_H */
