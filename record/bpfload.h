/* SPDX-License-Identifier: MIT */
/*
 * bpfload.h - what loading the recorder's BPF programs shares (internal to
 * record/): libbpf's messages kept rather than printed, and one line
 * saying why a load failed (record/sched_bpf.c, record/tokio_rec.c).
 */
#ifndef D9_BPFLOAD_H
#define D9_BPFLOAD_H

#include <stddef.h>
#include <bpf/libbpf.h>

/* Keep libbpf's first warning, print nothing, until bpfload_end(); returns
 * the print function to give back to it. */
libbpf_print_fn_t bpfload_begin(void);
void bpfload_end(libbpf_print_fn_t old);
/* A one-line reason for libbpf's @err while trying to @what into @why,
 * with its kept warning; returns @err (-ESRCH, libbpf's "no vmlinux BTF",
 * as -ENOENT: not a process gone). */
int bpfload_fail(int err, const char *what, char *why, size_t whylen);

/* The programs see the kernel's own pid numbers: from inside another pid
 * namespace, the target's pid would name another process. 0 where this
 * recorder runs in the initial one, else -EPERM and why. */
int bpfload_pidns(char *why, size_t whylen);

#endif /* D9_BPFLOAD_H */
