// SPDX-License-Identifier: MIT
/*
 * The thread side of the ctimer sampler: which signal, installing the
 * handler (ctimer.c), and each thread's CPU-time timer.
 *
 * Runs on the attached path of the markers, once per thread per change of
 * the recorder's request (a compare of a generation otherwise), and when a
 * thread gives its ring back. Never in the handler. The per-thread timer is
 * a POSIX timer on the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID)
 * that signals that thread (SIGEV_THREAD_ID), made with raw syscalls so no
 * libc allocates for it. The stack bounds come from pthread_getattr_np(),
 * which allocates and locks: it runs in d9_thread_start(), never on the
 * poll path; a thread that never called d9_thread_start() is walked with
 * process_vm_readv() reads only (slower, equally safe).
 *
 * Signal. By default the highest real-time signal from SIGRTMAX-2 down to
 * SIGRTMAX-9 whose disposition is still SIG_DFL: one the application has
 * left alone, so nothing it does with SIGPROF (gperftools, setitimer) meets
 * our samples, and we never run its handler for them. D9PROF_SIGNAL=N in
 * the environment picks signal N instead, shared: our handler takes the
 * signals of our own timers (SI_TIMER with our cookie) and chains every
 * other one to the handler installed before it. Without a free signal the
 * shim says D9_CTIMER_NOSIG in the header and the recorder reports it. The
 * handler stays installed once it is (a late signal must never meet
 * SIG_DFL, which would kill the process); it does nothing while no timer
 * of its thread is armed.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libprof/ctimer.h"
#include "libprof/d9_segment.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

enum { SIG_NONE, SIG_INSTALLING, SIG_READY, SIG_FAILED };
static int sig_state;

int d9__ctimer_candidates(int *out, int max)
{
	int n = 0, k;

	for (k = 2; k <= 9 && n < max; k++)
		out[n++] = SIGRTMAX - k;
	return n;
}

/* D9PROF_SIGNAL: a number, or SIGPROF / PROF. 0 if unset or bad. */
static int env_signal(void)
{
	const char *s = getenv("D9PROF_SIGNAL");
	char *end;
	long v;

	if (!s || !*s)
		return 0;
	if (!strcmp(s, "SIGPROF") || !strcmp(s, "PROF"))
		return SIGPROF;
	v = strtol(s, &end, 10);
	if (*end || v <= 0 || v > SIGRTMAX || v == SIGKILL || v == SIGSTOP)
		return -1;
	return (int)v;
}

static int is_default(const struct sigaction *sa)
{
	return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_DFL;
}

static void set_status(struct d9_seg_hdr *h, uint32_t status, int sig, int err)
{
	__atomic_store_n(&h->ctimer_signal, (uint32_t)sig, __ATOMIC_RELAXED);
	__atomic_store_n(&h->ctimer_errno, err, __ATOMIC_RELAXED);
	__atomic_store_n(&h->ctimer_status, status, __ATOMIC_RELEASE);
}

/* Choose the signal and install the handler, once per process. Returns
 * the state; SIG_INSTALLING while another thread is at it. */
static int install(struct d9_seg_hdr *h)
{
	int st = __atomic_load_n(&sig_state, __ATOMIC_ACQUIRE), none = SIG_NONE;
	int cand[16], n, i, sig = 0, want;
	struct sigaction sa, old;

	if (st != SIG_NONE)
		return st;
	if (!__atomic_compare_exchange_n(&sig_state, &none, SIG_INSTALLING, 0,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return __atomic_load_n(&sig_state, __ATOMIC_ACQUIRE);
	want = env_signal();
	if (want < 0) {
		set_status(h, D9_CTIMER_FAILED, 0, EINVAL);
		__atomic_store_n(&sig_state, SIG_FAILED, __ATOMIC_RELEASE);
		return SIG_FAILED;
	}
	if (want) {
		sig = want;
		if (sigaction(sig, NULL, &old))
			sig = 0;
	} else {
		n = d9__ctimer_candidates(cand, 16);
		for (i = 0; i < n && !sig; i++)
			if (!sigaction(cand[i], NULL, &old) && is_default(&old))
				sig = cand[i];
	}
	if (!sig) {
		set_status(h, want ? D9_CTIMER_FAILED : D9_CTIMER_NOSIG, want,
			   want ? EINVAL : 0);
		__atomic_store_n(&sig_state, SIG_FAILED, __ATOMIC_RELEASE);
		return SIG_FAILED;
	}
	d9__ct_prev = old;
	d9__ct_signo = sig;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = d9__ctimer_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL)) {
		set_status(h, D9_CTIMER_FAILED, sig, errno);
		__atomic_store_n(&sig_state, SIG_FAILED, __ATOMIC_RELEASE);
		return SIG_FAILED;
	}
	set_status(h, D9_CTIMER_ON, sig, 0);
	__atomic_store_n(&sig_state, SIG_READY, __ATOMIC_RELEASE);
	return SIG_READY;
}

/* Is our handler still the one installed? An application that replaced it
 * would get our timer signals: then we arm nothing. */
static int handler_in_place(void)
{
	struct sigaction cur;

	return !sigaction(d9__ct_signo, NULL, &cur) && (cur.sa_flags & SA_SIGINFO) &&
	       cur.sa_sigaction == d9__ctimer_handler;
}

void d9__ctimer_thread_start(void)
{
	struct d9_ct_thread *t = &d9__ct;
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (t->bounds_done)
		return;
	t->bounds_done = 1;
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &addr, &size) && size) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

static int block(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, d9__ct_signo);
	return pthread_sigmask(SIG_BLOCK, &set, old);
}

static int arm(struct d9_seg_hdr *h, struct d9_ct_thread *t, struct d9_ring_hdr *r,
	       uint32_t hz)
{
	uint64_t slot =
		((uintptr_t)r - (uintptr_t)h - D9_SEG_RING_OFFSET) / D9_SEG_RING_STRIDE;
	long period = 1000000000L / (long)hz;
	struct itimerspec its = {{period / 1000000000L, period % 1000000000L},
				 {period / 1000000000L, period % 1000000000L}};

	if (!t->tid)
		t->tid = (uint32_t)syscall(SYS_gettid);
	/* bind first: a signal of the new timer finds everything in place */
	t->seg = h;
	t->ring = r;
	t->words = (uint64_t *)((char *)h + D9_SEG_SAMPLE_OFFSET +
				slot * D9_SEG_SAMPLE_STRIDE);
	if (!t->has_timer) {
		struct sigevent sev;
		int id = -1;

		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = d9__ct_signo;
		sev.sigev_value.sival_int = D9_CT_COOKIE;
		sev.sigev_notify_thread_id = (pid_t)t->tid;
		if (syscall(SYS_timer_create, (long)CLOCK_THREAD_CPUTIME_ID, &sev, &id))
			return -errno;
		t->timer = id;
		t->has_timer = 1;
		__atomic_fetch_add(&h->ctimer_threads, 1, __ATOMIC_RELAXED);
	}
	if (syscall(SYS_timer_settime, (long)t->timer, 0L, &its, NULL)) {
		int err = -errno;

		d9__ctimer_delete(t);
		return err;
	}
	return 0;
}

void d9__ctimer_update(struct d9_seg_hdr *h, struct d9_ring_hdr *r)
{
	struct d9_ct_thread *t = &d9__ct;
	uint32_t gen = __atomic_load_n(&h->request_gen, __ATOMIC_ACQUIRE);
	uint32_t req = __atomic_load_n(&h->request, __ATOMIC_RELAXED);
	uint32_t hz = __atomic_load_n(&h->request_arg, __ATOMIC_RELAXED);
	int want = (req & D9_REQ_CTIMER) && hz >= 1 && hz <= 100000 &&
		   __atomic_load_n(&h->attached, __ATOMIC_ACQUIRE);
	sigset_t old;
	int err;

	if (!want) {
		if (t->has_timer && !block(&old)) {
			d9__ctimer_delete(t);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
		}
		t->gen = gen;
		return;
	}
	switch (install(h)) {
	case SIG_INSTALLING:
		return; /* gen left stale: the next marker tries again */
	case SIG_FAILED:
		t->gen = gen;
		return;
	}
	t->gen = gen;
	if (!handler_in_place()) {
		set_status(h, D9_CTIMER_NOSIG, d9__ct_signo, EBUSY);
		return;
	}
	if (block(&old))
		return;
	if (sigismember(&old, d9__ct_signo) == 1) {
		/* the application blocks our signal in this thread: a timer
		 * would only queue signals it may read elsewhere */
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return;
	}
	err = arm(h, t, r, hz);
	if (err && err != -EAGAIN)
		set_status(h, D9_CTIMER_FAILED, d9__ct_signo, -err);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void d9__ctimer_thread_stop(struct d9_seg_hdr *h)
{
	struct d9_ct_thread *t = &d9__ct;
	sigset_t old;

	t->gen = UINT64_MAX; /* a ring claimed later re-arms */
	if (!t->has_timer && !t->words)
		return;
	if (block(&old))
		return;
	d9__ctimer_delete(t);
	t->words = NULL;
	t->ring = NULL;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void d9__ctimer_atfork_child(void)
{
	/* timers are not inherited; the installed handler is */
	d9__ct = (struct d9_ct_thread){0};
}
