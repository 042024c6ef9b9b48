// SPDX-License-Identifier: MIT
/*
 * bpfload.c - libbpf's messages and the reasons of failed loads
 * (bpfload.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "record/bpfload.h"

/* libbpf's messages: the first warning kept for the reason (the later
 * ones only say that loading failed), none printed (the recorder says
 * what happened in one line of its own) */
static __thread char last_msg[200];

static int on_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[sizeof(last_msg)];
	size_t n;

	if (level == LIBBPF_DEBUG || last_msg[0])
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	/* its first line, without libbpf's prefix */
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	while (n && buf[n - 1] == ' ')
		buf[--n] = '\0';
	snprintf(last_msg, sizeof(last_msg), "%s",
		 strncmp(buf, "libbpf: ", 8) ? buf : buf + 8);
	return 0;
}

libbpf_print_fn_t bpfload_begin(void)
{
	last_msg[0] = '\0';
	return libbpf_set_print(on_libbpf);
}

void bpfload_end(libbpf_print_fn_t old)
{
	libbpf_set_print(old);
}

int bpfload_fail(int err, const char *what, char *why, size_t whylen)
{
	/* libbpf's -ESRCH: no vmlinux BTF to relocate against, not a
	 * process gone (which the caller's -ESRCH means) */
	if (err == -ESRCH)
		err = -ENOENT;
	if (err == -EPERM)
		snprintf(why, whylen,
			 "BPF refused: needs root or CAP_BPF+CAP_PERFMON, and bpf(2) not "
			 "blocked (seccomp, lockdown)");
	else if (err == -EACCES) /* the verifier's answer, or an LSM's */
		snprintf(why, whylen, "BPF: the kernel refused the programs%s%s",
			 last_msg[0] ? ": " : "", last_msg);
	else
		snprintf(why, whylen, "BPF: cannot %s: %s%s%s", what,
			 err == -ENOENT ? "no kernel BTF" : strerror(-err),
			 last_msg[0] ? "; " : "", last_msg);
	return err;
}

/* The initial pid namespace's inode (include/linux/proc_ns.h) */
#define PROC_PID_INIT_INO 0xEFFFFFFCU

int bpfload_pidns(char *why, size_t whylen)
{
	struct stat ns;

	if (!stat("/proc/self/ns/pid", &ns) && ns.st_ino != PROC_PID_INIT_INO) {
		snprintf(why, whylen,
			 "BPF: this recorder runs in a pid namespace of its own");
		return -EPERM;
	}
	return 0;
}
