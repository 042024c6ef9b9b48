/* SPDX-License-Identifier: MIT */
/*
 * command.h - what `record -- CMD` needs around a recording
 * (record/command.c): the command started stopped before its exec, and
 * the output opened once the recording is sure to happen.
 */
#ifndef D9_RECORD_COMMAND_H
#define D9_RECORD_COMMAND_H

#include <sys/types.h>

/* How long a started target's shim waits at its initialisation for the
 * recorder (D9_ATTACH_WAIT_ENV), ms: at most, the wait ends at the attach
 * (a tick or two); 1 s was short of it on a loaded machine, whose first
 * tasks then ran unrecorded. */
#define RECORD_ATTACH_WAIT_MS 3000

/* A command started stopped before its exec. */
struct record_cmd {
	pid_t pid;	  /* -1: none */
	const char *name; /* its argv[0] */
	int go_fd;	  /* write end: closing it lets the child exec */
	int err_fd;	  /* read end: execvp's errno, or EOF on exec */
	int released, exec_failed;
};

/* Fork @argv stopped at a pipe read; with @wait_attach (it is the target)
 * its shim waits up to RECORD_ATTACH_WAIT_MS at init for the recorder, so
 * that its first polls are recorded; the variables named in @unset (NULL
 * ended; NULL: none) taken out of its environment. 0 or -errno (fork,
 * pipe). */
int record_cmd__start(struct record_cmd *c, char **argv, int wait_attach,
		      const char *const *unset);
/* Let it exec: 0 once it did, else -errno of execvp. */
int record_cmd__release(struct record_cmd *c);
/* Reap it (killed first if never released, asked to stop with SIGTERM if
 * still running): its wait status if it ended by itself, else -1. */
int record_cmd__reap(struct record_cmd *c);

/* Could @out be written: a new file in a writable directory, an empty
 * one, or a d9prof trace (kept as .old)? 0 or -errno: -ELOOP for a
 * symbolic link (never followed), -EISDIR, -EEXIST for anything else
 * (not clobbered). */
int record_output__check(const char *out);
/* Open @out for writing, first renaming a previous regular file to
 * OUT.old when @rotated is non-NULL (*@rotated = 1 then). The fd, or
 * -errno; -EEXIST if the rename failed (nothing opened). */
int record_output__open(const char *out, int *rotated);
/* Copy all of @from (from its start) to @to, then make @from refer to
 * @to's file (dup3): the writer goes on writing into it. 0 or -errno. */
int record_output__move(int from, int to);

#endif /* D9_RECORD_COMMAND_H */
