// SPDX-License-Identifier: MIT
/*
 * noperf [--system-wide] CMD [ARGS...] - run CMD under a seccomp filter
 * that makes perf_event_open(2) and bpf(2) fail with EPERM, as Docker's
 * default profile does; with --system-wide only bpf(2) and events on
 * every task of a CPU (pid -1) fail, with EPERM and EACCES, as for a user
 * without CAP_BPF and CAP_PERFMON.
 * Everything else is allowed. For the end-to-end tests of the recorder's
 * fallbacks: the ctimer sampler, perf_event for the scheduler events, and
 * off-CPU time without wakeups.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

/* Both filters start so: another architecture's calls are allowed, then
 * the system call's number is loaded. */
#define LOAD_NR                                                                          \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),         \
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),            \
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                            \
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

int main(int argc, char **argv)
{
	struct sock_filter all[] = {
		LOAD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	/* pid (args[1], an int: its low 32 bits) == -1 */
	struct sock_filter cpuwide[] = {
		LOAD_NR,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = sizeof(all) / sizeof(all[0]), .filter = all};

	if (argc > 1 && !strcmp(argv[1], "--system-wide")) {
		prog.len = sizeof(cpuwide) / sizeof(cpuwide[0]);
		prog.filter = cpuwide;
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: noperf [--system-wide] CMD [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		fprintf(stderr, "noperf: cannot install the seccomp filter: %s\n",
			strerror(errno));
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "noperf: cannot run '%s': %s\n", argv[1], strerror(errno));
	return 127;
}
