// SPDX-License-Identifier: MIT
/* The recorder's side of the segment: finding it and refusing what it must
 * not trust. Each test forks a child that maps a memfd named like the
 * shim's, doctored one way, and asks record/segment.c to open it. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "d9prof.h"
#include "libprof/d9_segment.h"
#include "libprof/shim.h"
#include "record/proc.h"
#include "record/segment.h"

TestSuite(segment);

enum doctor { REAL, MODE_0644, BAD_MAGIC, BAD_SIZES, OTHER_PID };

/* Fork a child holding a segment doctored by @how; returns its pid once the
 * mapping exists. */
static pid_t child_with(enum doctor how)
{
	int ready[2];
	char c;
	pid_t pid;

	cr_assert_eq(pipe(ready), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct d9_seg_hdr *h;

		close(ready[0]);
		if (d9_init())
			_exit(1);
		h = d9__segment();
		switch (how) {
		case REAL:
			break;
		case MODE_0644:
			fchmod(d9__segment_fd(), 0644);
			break;
		case BAD_MAGIC:
			h->magic ^= 1;
			break;
		case BAD_SIZES:
			h->nrings = 1u << 20;
			break;
		case OTHER_PID:
			h->pid += 1;
			break;
		}
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	cr_assert_eq(read(ready[0], &c, 1), 1, "child failed to set up");
	close(ready[0]);
	return pid;
}

static int open_child(enum doctor how, char *why, size_t len)
{
	struct shim_seg *s = NULL;
	pid_t pid = child_with(how);
	int err = shim_seg__open(pid, &s, why, len);

	if (!err) {
		shim_seg__attach(s, NULL);
		cr_expect_eq(((struct d9_seg_hdr *)shim_seg__base(s))->attached, 1);
		shim_seg__detach(s);
	}
	shim_seg__close(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return err;
}

/* The doctored segment @how is refused (-EPERM) with a reason that says
 * @reason. */
static void expect_refused(enum doctor how, const char *reason)
{
	char why[160];

	cr_expect_eq(open_child(how, why, sizeof(why)), -EPERM, "%s", reason);
	cr_expect(strstr(why, reason), "why: %s", why);
}

Test(segment, real_segment_opens_and_attaches)
{
	char why[160];

	cr_expect_eq(open_child(REAL, why, sizeof(why)), 0, "%s", why);
}

Test(segment, group_readable_segment_is_refused)
{
	expect_refused(MODE_0644, "mode 0644");
}

Test(segment, bad_magic_is_refused)
{
	expect_refused(BAD_MAGIC, "magic");
}

Test(segment, inconsistent_sizes_are_refused)
{
	expect_refused(BAD_SIZES, "sizes");
}

Test(segment, segment_of_another_process_is_refused)
{
	expect_refused(OTHER_PID, "made by pid");
}

Test(segment, process_without_shim_is_enoent)
{
	struct shim_seg *s = NULL;
	char why[160];
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	usleep(20000);
	cr_expect_eq(shim_seg__open(pid, &s, why, sizeof(why)), -ENOENT);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

Test(segment, missing_process_is_esrch)
{
	struct shim_seg *s = NULL;
	char why[160];

	cr_expect_eq(shim_seg__open(4194304, &s, why, sizeof(why)), -ESRCH);
}

/* A recording loop busy for longer than the lease (sealing a segment under
 * a flood) renews nothing itself: the lease holds all the same, and the
 * loop's next renew finds the shim attached. */
Test(segment, lease_holds_while_the_loop_is_busy)
{
	struct shim_seg *s = NULL;
	struct d9_seg_hdr *h;
	char why[160];
	pid_t pid = child_with(REAL);
	uint64_t deadline;

	cr_assert_eq(shim_seg__open(pid, &s, why, sizeof(why)), 0, "%s", why);
	h = shim_seg__base(s);
	shim_seg__attach(s, NULL);
	usleep(D9_LEASE_NS / 1000 + 600000);
	deadline = shim_seg__ns(s, __atomic_load_n(&h->lease_deadline, __ATOMIC_ACQUIRE));
	cr_expect_gt(deadline, record_now_ns(), "the lease ran out %.3f s ago",
		     (double)(record_now_ns() - deadline) / 1e9);
	cr_expect_eq(shim_seg__renew(s), 0);
	shim_seg__detach(s);
	cr_expect_eq(h->lease_deadline, 0, "renewed after the detach");
	shim_seg__close(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
