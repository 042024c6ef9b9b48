// SPDX-License-Identifier: MIT
/*
 * lifetime CMD [ARGS...] - run CMD and say what its life cost, as the
 * kernel counted it: "rc RC wall SECONDS waited SECONDS" on stderr, last,
 * once CMD has exited. wall runs from the fork to the exit; waited is the
 * time CMD's main thread was runnable without a CPU (its schedstat run
 * delay), read from the zombie before it is reaped, so it covers the exec,
 * the dynamic loader and the exit too. For tests/e2e/load.sh: what a busy
 * machine added to a recording's wall time, measured outside the recorder.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long long on = 0, wait = 0;
	char path[64];
	siginfo_t si = {0};
	double start, end;
	int status = 0;
	pid_t pid;
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: lifetime CMD [ARGS...]\n");
		return 2;
	}
	start = now();
	pid = fork();
	if (pid < 0) {
		perror("lifetime: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		perror("lifetime: exec");
		_exit(127);
	}
	/* exited, not yet reaped: /proc/PID/schedstat still answers */
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT)) {
		perror("lifetime: waitid");
		return 2;
	}
	end = now();
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu %llu", &on, &wait) != 2) {
		fprintf(stderr, "lifetime: cannot read %s\n", path);
		return 2;
	}
	fclose(f);
	waitpid(pid, &status, 0);
	fprintf(stderr, "rc %d wall %.3f waited %.3f\n",
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
		end - start, (double)wait / 1e9);
	return 0;
}
