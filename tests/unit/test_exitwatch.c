// SPDX-License-Identifier: MIT
/*
 * How a watched process died. Each test forks a child that waits on a pipe
 * until the watch is enabled, lets it die one way, waits for its pidfd and
 * asks for the verdict before reaping it (the /proc fallback reads the
 * zombie), then compares with what waitpid() says. The tracepoint tests
 * need tracefs and root (or CAP_PERFMON) and skip without them; the
 * fallback tests run anywhere.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record/exitwatch.h"

TestSuite(exitwatch, .timeout = 30);

#define MS 1000000ULL

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct child {
	pid_t pid;
	int go;	   /* write a byte: the child goes on */
	int ready; /* the child writes a byte here when it is ready to die */
	int pidfd;
	struct exitwatch *ew;
};

/* Fork a child that waits for the go byte, then runs @body. */
static void spawn(struct child *c, void (*body)(int ready))
{
	int go[2], ready[2];
	char b;

	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(ready), 0);
	c->pid = fork();
	cr_assert_geq(c->pid, 0);
	if (c->pid == 0) {
		close(go[1]);
		close(ready[0]);
		if (read(go[0], &b, 1) != 1)
			_exit(100);
		body(ready[1]);
		_exit(101);
	}
	close(go[0]);
	close(ready[1]);
	c->go = go[1];
	c->ready = ready[0];
	c->pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
	cr_assert_geq(c->pidfd, 0);
}

/* Watch the child (@flags of exitwatch__open), then let it go. Skips the
 * test (the child killed and reaped) if the tracepoints were wanted and
 * are not there. */
static void watch_and_go(struct child *c, unsigned int flags)
{
	char why[256];

	cr_assert_eq(exitwatch__open(c->pid, flags, &c->ew, why, sizeof(why)), 0);
	if (!(flags & EXITWATCH_NO_TRACEPOINTS) && !exitwatch__traced(c->ew)) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		exitwatch__free(c->ew);
		cr_skip_test("tracepoints unavailable: %s", why);
	}
	exitwatch__enable(c->ew);
	cr_assert_eq(write(c->go, "g", 1), 1);
}

static void wait_ready(struct child *c)
{
	char b;

	cr_assert_eq(read(c->ready, &b, 1), 1, "the child died before it was ready");
}

/* Wait until the child is gone (without reaping it), take the verdict,
 * then reap it into *@status. Returns when the pidfd said it was gone. */
static uint64_t verdict(struct child *c, struct exitwatch_result *r, int *status)
{
	struct pollfd p = {.fd = c->pidfd, .events = POLLIN};
	uint64_t seen;

	cr_assert_eq(poll(&p, 1, 10000), 1, "the child did not die");
	seen = now_ns();
	cr_assert_eq(exitwatch__result(c->ew, r), 0);
	cr_assert_eq(waitpid(c->pid, status, 0), c->pid);
	exitwatch__free(c->ew);
	close(c->pidfd);
	close(c->go);
	close(c->ready);
	return seen;
}

static void expect_time(const struct exitwatch_result *r, uint64_t seen)
{
	cr_expect_neq(r->time, 0);
	cr_expect_leq(r->time, seen);
	cr_expect_lt(seen - r->time, 100 * MS, "death %llu ns before the pidfd said it",
		     (unsigned long long)(seen - r->time));
}

/* ---- the children ------------------------------------------------------- */

static void exit_3(int ready)
{
	exit(3);
}

static void sleep_forever(int ready)
{
	cr_assert_eq(write(ready, "r", 1), 1);
	for (;;)
		pause();
}

/* an unmapped address the compiler cannot see through (and not NULL, which
 * UBSan would catch first) */
static volatile int *volatile nowhere = (volatile int *)16;

static void segfault(int ready)
{
	struct rlimit no = {0, 0};

	setrlimit(RLIMIT_CORE, &no); /* no core file in the test's directory */
	signal(SIGSEGV, SIG_DFL);
	*nowhere = 1;
}

static void on_usr1(int sig)
{
}

static void handled_usr1_then_exit_0(int ready)
{
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	exit(0);
}

static sigjmp_buf back;

static void on_segv(int sig)
{
	siglongjmp(back, 1);
}

static void handled_segv_then_exit_0(int ready)
{
	signal(SIGSEGV, on_segv);
	if (!sigsetjmp(back, 1))
		*nowhere = 1;
	exit(0);
}

static void *park(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

static void threads_then_sleep(int ready)
{
	pthread_t t;

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t, NULL, park, NULL))
			_exit(102);
	sleep_forever(ready);
}

static void threads_then_exec_exit_7(int ready)
{
	pthread_t t;

	for (int i = 0; i < 4; i++)
		if (pthread_create(&t, NULL, park, NULL))
			_exit(102);
	execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
	_exit(103);
}

/* ---- the tracepoints ---------------------------------------------------- */

/* Run @body in a child watched with @flags, send it @sig once it is ready
 * (0: none), and take the verdict into @r; the pidfd said it was gone at
 * *@seen. Returns its wait status. */
static int die(void (*body)(int ready), unsigned int flags, int sig,
	       struct exitwatch_result *r, uint64_t *seen)
{
	struct child c;
	int st;

	spawn(&c, body);
	watch_and_go(&c, flags);
	if (sig) {
		wait_ready(&c);
		kill(c.pid, sig);
	}
	*seen = verdict(&c, r, &st);
	return st;
}

/* @body exits with @status: the tracepoints say so, with the time. */
static void expect_exit(void (*body)(int ready), int status)
{
	struct exitwatch_result r;
	uint64_t seen;
	int st = die(body, 0, 0, &r, &seen);

	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == status);
	cr_expect_eq(r.how, EXITWATCH_EXITED);
	cr_expect_eq(r.status, status);
	cr_expect_str_eq(r.source, "tracepoint");
	cr_expect_eq(r.lost, 0);
	expect_time(&r, seen);
}

/* Wait status @st and verdict @r both say death by @sig. */
static void expect_signaled(int st, const struct exitwatch_result *r, int sig)
{
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == sig);
	cr_expect_eq(r->how, EXITWATCH_SIGNALED);
	cr_expect_eq(r->status, sig);
}

/* @body, sent @sig by us once ready, dies of it: the tracepoints say so,
 * with us as the sender and the time. */
static void expect_killed(void (*body)(int ready), int sig)
{
	struct exitwatch_result r;
	uint64_t seen;

	expect_signaled(die(body, 0, sig, &r, &seen), &r, sig);
	cr_expect_eq(r.code, SI_USER);
	cr_expect_eq(r.sender, getpid());
	cr_expect_eq(r.core, 0);
	cr_expect_eq(r.oom, 0);
	cr_expect_str_eq(r.source, "tracepoint");
	expect_time(&r, seen);
}

Test(exitwatch, an_exit_gives_its_status_and_time)
{
	expect_exit(exit_3, 3);
}

Test(exitwatch, sigkill_from_the_parent_names_the_sender)
{
	expect_killed(sleep_forever, SIGKILL);
}

Test(exitwatch, sigkill_of_a_threaded_process)
{
	expect_killed(threads_then_sleep, SIGKILL);
}

/* the dying threads dequeue SIGKILL: the signal sent says which it was */
Test(exitwatch, default_sigterm_is_sigterm_not_the_sigkill_the_threads_take)
{
	expect_killed(threads_then_sleep, SIGTERM);
}

Test(exitwatch, a_segfault_is_sigsegv_from_the_kernel)
{
	struct exitwatch_result r;
	uint64_t seen;

	expect_signaled(die(segfault, 0, 0, &r, &seen), &r, SIGSEGV);
	cr_expect_eq(r.core, 1);
	cr_expect_eq(r.code, SEGV_MAPERR);
	cr_expect_eq(r.sender, 0);
	expect_time(&r, seen);
}

Test(exitwatch, a_handled_signal_is_not_the_death)
{
	expect_exit(handled_usr1_then_exit_0, 0);
}

Test(exitwatch, a_handled_segfault_is_not_the_death)
{
	expect_exit(handled_segv_then_exit_0, 0);
}

/* exec kills the other threads with SIGKILL; the process lives on */
Test(exitwatch, the_sigkills_of_an_exec_are_not_the_death)
{
	expect_exit(threads_then_exec_exit_7, 7);
}

Test(exitwatch, no_verdict_while_it_runs)
{
	struct child c;
	struct exitwatch_result r;
	int st;

	spawn(&c, sleep_forever);
	watch_and_go(&c, 0);
	wait_ready(&c);
	cr_expect_eq(exitwatch__result(c.ew, &r), -EAGAIN);
	kill(c.pid, SIGKILL);
	verdict(&c, &r, &st);
	cr_expect_eq(r.status, SIGKILL);
}

Test(exitwatch, pollfds_are_the_rings_then_the_pidfd)
{
	struct child c;
	struct exitwatch_result r;
	struct pollfd p[1024];
	unsigned int n;
	int st;

	spawn(&c, sleep_forever);
	watch_and_go(&c, 0);
	n = exitwatch__pollfds(c.ew, p, 1024);
	cr_assert_geq(n, 2);
	cr_expect_eq(exitwatch__pollfds(c.ew, p, 1), 1);
	wait_ready(&c);
	kill(c.pid, SIGKILL);
	n = exitwatch__pollfds(c.ew, p, 1024);
	cr_assert_eq(poll(&p[n - 1], 1, 10000), 1);
	verdict(&c, &r, &st);
}

/* ---- the fallbacks ------------------------------------------------------ */

Test(exitwatch, proc_stat_of_the_zombie_gives_an_exit)
{
	struct exitwatch_result r;
	uint64_t seen;

	die(exit_3, EXITWATCH_NO_TRACEPOINTS, 0, &r, &seen);
	cr_expect_eq(r.how, EXITWATCH_EXITED);
	cr_expect_eq(r.status, 3);
	cr_expect_eq(r.time, 0);
	cr_expect_str_eq(r.source, "/proc stat");
}

Test(exitwatch, proc_stat_of_the_zombie_gives_a_signal)
{
	struct exitwatch_result r;
	uint64_t seen;

	die(segfault, EXITWATCH_NO_TRACEPOINTS, 0, &r, &seen);
	cr_expect_eq(r.how, EXITWATCH_SIGNALED);
	cr_expect_eq(r.status, SIGSEGV);
	cr_expect_eq(r.core, 1);
	cr_expect_str_eq(r.source, "/proc stat");
}

Test(exitwatch, the_pidfd_tells_once_it_is_reaped)
{
	struct child c;
	struct exitwatch_result r;
	struct pollfd p;
	int st;

	spawn(&c, sleep_forever);
	watch_and_go(&c, EXITWATCH_NO_TRACEPOINTS);
	wait_ready(&c);
	kill(c.pid, SIGTERM);
	p = (struct pollfd){.fd = c.pidfd, .events = POLLIN};
	cr_assert_eq(poll(&p, 1, 10000), 1);
	cr_assert_eq(waitpid(c.pid, &st, 0), c.pid); /* no zombie left */
	cr_assert_eq(exitwatch__result(c.ew, &r), 0);
	exitwatch__free(c.ew);
	if (r.how == EXITWATCH_UNKNOWN)
		cr_skip_test("no PIDFD_INFO_EXIT (Linux < 6.15)");
	cr_expect_eq(r.how, EXITWATCH_SIGNALED);
	cr_expect_eq(r.status, SIGTERM);
	cr_expect_str_eq(r.source, "pidfd");
}

Test(exitwatch, no_such_process)
{
	struct exitwatch *ew = (struct exitwatch *)1;
	char why[64];
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	cr_expect_eq(exitwatch__open(pid, 0, &ew, why, sizeof(why)), -ESRCH);
	cr_expect_null(ew);
	cr_expect_eq(exitwatch__open(0, 0, &ew, why, sizeof(why)), -EINVAL);
}

/* ---- in words ----------------------------------------------------------- */

Test(exitwatch, verdicts_in_words)
{
	static const struct {
		struct exitwatch_result r;
		const char *want;
	} words[] = {
		{{.how = EXITWATCH_EXITED, .status = 3}, "exit 3"},
		{{.how = EXITWATCH_SIGNALED, .status = SIGKILL, .oom = 1},
		 "signal 9 (SIGKILL) by the OOM killer"},
		{{.how = EXITWATCH_SIGNALED, .status = SIGTERM, .sender = 1234},
		 "signal 15 (SIGTERM) from pid 1234"},
		{{.how = EXITWATCH_SIGNALED, .status = SIGSEGV, .core = 1},
		 "signal 11 (SIGSEGV, dumps core)"},
		{{0}, "unknown"},
	};
	struct exitwatch_result r;
	char b[96], w[96];

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		cr_expect_str_eq(exitwatch_describe(&words[i].r, b, sizeof(b)),
				 words[i].want, "case %zu", i);
	r = (struct exitwatch_result){.how = EXITWATCH_SIGNALED, .status = SIGRTMIN + 2};
	snprintf(w, sizeof(w), "signal %d (SIGRTMIN+2)", SIGRTMIN + 2);
	cr_expect_str_eq(exitwatch_describe(&r, b, sizeof(b)), w);
	/* cut, not overrun */
	r = (struct exitwatch_result){
		.how = EXITWATCH_SIGNALED, .status = SIGTERM, .sender = 1};
	cr_expect_str_eq(exitwatch_describe(&r, b, 8), "signal ");
}
