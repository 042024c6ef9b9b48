// SPDX-License-Identifier: MIT
/*
 * The ctimer signal handler: everything of the shim that runs in signal
 * context, and nothing else (the thread side is ctimer_arm.c).
 *
 * Rules for this file: async-signal-safe calls only (clock_gettime,
 * syscall(2) for timer_delete and process_vm_readv, sigaction, tgkill),
 * no allocation, no locks, no stdio; all memory is the shared segment, the
 * thread's d9__ct (whose TLS block the thread touched on its marker path
 * before it armed a timer) and a fixed stack buffer; errno is preserved.
 *
 * Safety of the stack walk on arbitrary code: the interrupted frame pointer
 * may be anything (code built without frame pointers uses rbp as a general
 * register). We read only 8-byte-aligned pairs inside [sp, stack top) of
 * the thread's own stack, which is mapped, and require each frame above the
 * last; off that stack (a coroutine or signal stack), reads go through
 * process_vm_readv on ourselves, which fails with EFAULT instead of
 * faulting. Either way the walk ends at the depth limit.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "libprof/ctimer.h"
#include "libprof/d9_segment.h"
#include "libprof/shim_clock.h"

#pragma GCC poison malloc calloc realloc free printf fprintf sprintf snprintf

#define NO_SAN __attribute__((no_sanitize("address", "thread", "undefined")))

__thread struct d9_ct_thread d9__ct __attribute__((tls_model("initial-exec")));
int d9__ct_signo;
struct sigaction d9__ct_prev;

/* ---- reading the stack ----------------------------------------------------- */

/* Read 16 bytes at @addr, known to lie in a mapped stack. */
static NO_SAN void read_direct(uintptr_t addr, uint64_t out[2])
{
	const volatile uint64_t *p = (const volatile uint64_t *)addr;

	out[0] = p[0];
	out[1] = p[1];
}

/* Read 16 bytes at @addr of our own memory without faulting: -1 if unmapped
 * (or process_vm_readv is refused, e.g. by seccomp). About a microsecond. */
static int read_probe(uintptr_t addr, uint64_t out[2])
{
	struct iovec local = {.iov_base = out, .iov_len = 16};
	struct iovec remote = {.iov_base = (void *)addr, .iov_len = 16};

	return syscall(SYS_process_vm_readv, (long)getpid(), &local, 1UL, &remote, 1UL,
		       0UL) == 16
		       ? 0
		       : -1;
}

unsigned int d9__fp_walk(const struct d9_fp_regs *regs, uintptr_t lo, uintptr_t hi,
			 uint64_t *ips, unsigned int max, uint32_t *flags)
{
	uintptr_t sp = (uintptr_t)regs->sp, fp = (uintptr_t)regs->fp, prev;
	int direct = lo < hi && sp >= lo && sp < hi;
	unsigned int n = 0;

	if (!max)
		return 0;
	ips[n++] = regs->ip;
	if (direct) {
		lo = sp;
	} else {
		lo = sp;
		hi = sp + D9_CT_PROBE_WINDOW < sp ? UINTPTR_MAX : sp + D9_CT_PROBE_WINDOW;
	}
	prev = lo - 1 < lo ? lo - 1 : 0; /* the first frame may sit at sp */
	for (;;) {
		uint64_t pair[2];

		if ((fp & 7) || fp <= prev || fp < lo || hi - lo < 16 || fp > hi - 16)
			break;
		if (direct)
			read_direct(fp, pair);
		else if (read_probe(fp, pair))
			break;
		if (!pair[1])
			break;
		if (n == max) {
			*flags |= D9_SAMPLE_TRUNCATED;
			break;
		}
		ips[n++] = pair[1];
		prev = fp;
		fp = (uintptr_t)pair[0];
	}
	return n;
}

/* ---- the handler ----------------------------------------------------------- */

void d9__ctimer_delete(struct d9_ct_thread *t)
{
	struct d9_seg_hdr *h = t->seg;

	if (!t->has_timer)
		return;
	syscall(SYS_timer_delete, (long)t->timer);
	t->has_timer = 0;
	if (h)
		__atomic_fetch_sub(&h->ctimer_threads, 1, __ATOMIC_RELAXED);
}

/* Not our signal: do what would have happened without us. */
static void chain(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *p = &d9__ct_prev;

	if (p->sa_flags & SA_SIGINFO) {
		if (p->sa_sigaction)
			p->sa_sigaction(sig, si, uc);
		return;
	}
	if (p->sa_handler == SIG_IGN)
		return;
	if (p->sa_handler == SIG_DFL) {
		/* the default action of the signals we take is to terminate:
		 * let it, as it would have without us */
		struct sigaction dfl = {.sa_handler = SIG_DFL};
		sigset_t set;

		sigaction(sig, &dfl, NULL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		syscall(SYS_tgkill, (long)getpid(), (long)syscall(SYS_gettid), (long)sig);
		return;
	}
	p->sa_handler(sig);
}

/* Still wanted by a live recorder for the generation we armed? */
static int wanted(struct d9_seg_hdr *h, const struct d9_ct_thread *t, uint64_t now)
{
	uint32_t one = 1;

	if (!__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE))
		return 0;
	if (now > __atomic_load_n(&h->lease_deadline, __ATOMIC_RELAXED)) {
		/* as a marker would: the recorder is gone */
		__atomic_compare_exchange_n(&h->attached, &one, 0, 0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
		return 0;
	}
	return __atomic_load_n(&h->request_gen, __ATOMIC_ACQUIRE) == t->gen &&
	       (__atomic_load_n(&h->request, __ATOMIC_RELAXED) & D9_REQ_CTIMER);
}

/* Copy up to D9_SAMPLE_MAX_STACK words of stack from @sp into @out (for
 * the recorder's CFI step): directly inside the known stack, else through
 * process_vm_readv, which fails instead of faulting. Returns the words
 * copied, 0 if none could be. */
static NO_SAN unsigned int copy_stack(uintptr_t sp, uintptr_t lo, uintptr_t hi,
				      uint64_t *out)
{
	unsigned int i, n = D9_SAMPLE_MAX_STACK;

	if (sp & 7)
		return 0;
	if (lo < hi && sp >= lo && sp < hi) {
		const volatile uint64_t *p = (const volatile uint64_t *)sp;

		if ((hi - sp) / 8 < n)
			n = (unsigned int)((hi - sp) / 8);
		for (i = 0; i < n; i++)
			out[i] = p[i];
		return n;
	}
	{
		struct iovec local = {.iov_base = out, .iov_len = n * 8};
		struct iovec remote = {.iov_base = (void *)sp, .iov_len = n * 8};
		long got = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1UL,
				   &remote, 1UL, 0UL);

		return got > 0 ? (unsigned int)(got / 8) : 0;
	}
}

static void put_sample(struct d9_ct_thread *t, uint64_t now, uint32_t weight,
		       const uint64_t *ips, unsigned int n, uint32_t flags,
		       const struct d9_fp_regs *regs, const uint64_t *stack,
		       unsigned int nstack)
{
	struct d9_ring_hdr *r = t->ring;
	const uint64_t mask = D9_SEG_SAMPLE_WORDS - 1;
	uint64_t head = __atomic_load_n(&r->sample_head, __ATOMIC_RELAXED);
	uint64_t tail = __atomic_load_n(&r->sample_tail, __ATOMIC_ACQUIRE);
	uint64_t need, *w = t->words, at;
	unsigned int i;

	if (stack)
		flags |= D9_SAMPLE_STACK | (uint32_t)nstack << 16;
	need = D9_SAMPLE_HDR_WORDS + n + D9_SAMPLE_EXTRA(flags);

	/* the unsigned difference reads a tail beyond head as full, too */
	if (head - tail > D9_SEG_SAMPLE_WORDS - need) {
		__atomic_store_n(&r->sample_drops,
				 __atomic_load_n(&r->sample_drops, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&w[head & mask], (uint64_t)n | (uint64_t)weight << 32,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&w[(head + 1) & mask], now, __ATOMIC_RELAXED);
	__atomic_store_n(&w[(head + 2) & mask],
			 __atomic_load_n(&t->task, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&w[(head + 3) & mask], (uint64_t)t->tid | (uint64_t)flags << 32,
			 __ATOMIC_RELAXED);
	at = head + D9_SAMPLE_HDR_WORDS;
	for (i = 0; i < n; i++)
		__atomic_store_n(&w[(at++) & mask], ips[i], __ATOMIC_RELAXED);
	if (stack) {
		__atomic_store_n(&w[(at++) & mask], regs->sp, __ATOMIC_RELAXED);
		__atomic_store_n(&w[(at++) & mask], regs->fp, __ATOMIC_RELAXED);
		for (i = 0; i < nstack; i++)
			__atomic_store_n(&w[(at++) & mask], stack[i], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&r->sample_head, head + need, __ATOMIC_RELEASE);
	__atomic_store_n(&r->samples, __atomic_load_n(&r->samples, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

void d9__ctimer_handler(int sig, siginfo_t *si, void *ucv)
{
	struct d9_ct_thread *t = &d9__ct;
	int saved_errno = errno;
	uint64_t ips[D9_SAMPLE_MAX_FRAMES], stack[D9_SAMPLE_MAX_STACK], now;
	const ucontext_t *uc = ucv;
	struct d9_fp_regs regs;
	uint32_t flags = 0, weight;
	unsigned int n, nstack = 0;
	int with_stack;

	if (!si || si->si_code != SI_TIMER || si->si_value.sival_int != D9_CT_COOKIE) {
		chain(sig, si, ucv);
		goto out;
	}
	/* a late signal of a timer this thread no longer has */
	if (!t->has_timer || si->si_timerid != t->timer || !t->words || !uc)
		goto out;
	now = d9__clock_now();
	if (!wanted(t->seg, t, now)) {
		d9__ctimer_delete(t);
		goto out;
	}
#if defined(__x86_64__)
	regs.ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	regs.fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
	regs.sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	regs.ip = (uint64_t)uc->uc_mcontext.pc;
	regs.fp = (uint64_t)uc->uc_mcontext.regs[29];
	regs.sp = (uint64_t)uc->uc_mcontext.sp;
#else
#error "ctimer: no frame-pointer walk for this architecture"
#endif
	n = d9__fp_walk(&regs, t->stack_lo, t->stack_hi, ips, D9_SAMPLE_MAX_FRAMES,
			&flags);
	weight = si->si_overrun >= 0 && si->si_overrun < INT32_MAX
			 ? 1U + (uint32_t)si->si_overrun
			 : 1U;
	with_stack = __atomic_load_n(&t->seg->request, __ATOMIC_RELAXED) & D9_REQ_STACK;
	if (with_stack)
		nstack = copy_stack((uintptr_t)regs.sp, t->stack_lo, t->stack_hi, stack);
	put_sample(t, now, weight, ips, n, flags, &regs, nstack ? stack : NULL, nstack);
out:
	errno = saved_errno;
}
