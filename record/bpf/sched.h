/* SPDX-License-Identifier: MIT */
/*
 * sched.h - what the BPF scheduler programs (record/bpf/sched.bpf.c) hand
 * the recorder (record/sched_bpf.c, then record/offcpu.c) through their ring buffer, and
 * how they are set up: shared by both sides, so plain fixed-size C types only.
 *
 * Records, in the order the kernel reserved them (one ring for all CPUs:
 * a thread's switch-out always comes before its switch-in):
 *   SCHED_BPF_TICK with cfg.tick_fn: the scheduler's tick found a target
 *                  thread on its CPU, a CPU sample with an OUT's layout
 *                  (no holder; its kernel chain from the tick's program
 *                  down, through the interrupt to what it interrupted);
 *   SCHED_BPF_OUT  a target thread left its CPU: when, whether it was
 *                  still runnable (preempted or yielded), who took the CPU,
 *                  its kernel and user frame-pointer chains, and its user
 *                  SP, frame pointer and the top of its user stack for the
 *                  recorder's CFI step;
 *   SCHED_BPF_IN   it got a CPU again: when, when it became runnable (the
 *                  first wakeup after it blocked, or the switch-out when
 *                  it never blocked, or was woken on its way to sleep;
 *                  0 when wakeups are off), who ran
 *                  before it on that CPU, and who held that CPU while it
 *                  waited, summed in the kernel from the CPU's last
 *                  SCHED_BPF_HIST switches (what is older: unknown):
 *                  nholds of them, the record
 *                  only as long as those (a variable size).
 *
 * With cfg.min_ns, a switch-out waits in the kernel (task storage) for its
 * switch-in: an interval at least that long sends its OUT just before its
 * IN; a shorter one sends only its IN, flagged SCHED_BPF_IN_SHORT, and its
 * stacks never leave the kernel. The switch-outs still waiting when the
 * recording ends are sent by the task iterator (d9_open) when the
 * recorder reads it.
 */
#ifndef D9_SCHED_BPF_H
#define D9_SCHED_BPF_H

#include "tokio_tag.h"

#define SCHED_BPF_OUT  1
#define SCHED_BPF_IN   2
#define SCHED_BPF_TICK 3 /* a CPU sample (cfg.tick): an OUT's layout */

#define SCHED_BPF_FRAMES    127	  /* per chain, perf's default maximum */
#define SCHED_BPF_STACK_MAX 32768 /* bytes of user stack, at most */
/* switches kept per CPU (32 bytes each, 256 KiB a CPU; a power of two,
 * for the verifier to bound the index): a run-queue wait is charged to
 * what ran in it back to the oldest (82 ms of a CPU switching 100k times
 * a second, 0.8 s at 10k); the rest of a longer one is
 * TRACE_HOLD_UNKNOWN */
#define SCHED_BPF_HIST	8192
#define SCHED_BPF_SLOTS 16	    /* holders per wait; the rest summed */
#define SCHED_BPF_IDLE	0xffffffffu /* the idle task held the CPU */

/* The pairing rules both paths apply (here and in record/offcpu.c):
 * sched_switch's prev_state sleep bits (S D T t X Z P I; none set: still
 * runnable, preempted or yielded), and how close before a switch-out a
 * wakeup came while the thread was on its way to sleep (it was runnable
 * all along) */
#define SCHED_STATE_BITS    0xffu
#define SCHED_EARLY_WAKE_NS 100000ULL

struct sched_bpf_out {
	unsigned int type, tid;
	unsigned long long time;
	unsigned int holder;	   /* next on the CPU, 0 for idle */
	unsigned int preempted;	   /* 1: runnable as it left */
	char holder_comm[16];	   /* its name */
	int kbytes, ubytes;	   /* bytes of kips, uips; < 0 an error */
	unsigned long long sp, fp; /* user registers (0: none, a kthread) */
	unsigned int stack_len;	   /* bytes of stack copy */
	unsigned int unseen_in;	   /* 1: the thread's last switch-out had no
				    * switch-in this program saw (the kernel
				    * did not run it for that one) */
	unsigned int pad;
	unsigned long long task; /* the task it left (cfg.slot), 0: none */
	/* then, packed: kbytes of kernel chain, ubytes of user frame-pointer
	 * chain (8 bytes a frame, [0] the pc), stack_len bytes of the top of
	 * the user stack from sp up */
};

struct sched_bpf_hold {
	unsigned int tid; /* or SCHED_BPF_IDLE */
	unsigned int pad;
	unsigned long long ns;
	char comm[16];
};

/* sched_bpf_in.flags. With cfg.min_ns: SHORT, under it (no OUT was sent);
 * PREEMPTED, a SHORT one was runnable as it left; UNSEEN, the switch-out
 * before this one had no switch-in the program saw (an OUT's unseen_in). */
#define SCHED_BPF_IN_SHORT     1u
#define SCHED_BPF_IN_PREEMPTED 2u
#define SCHED_BPF_IN_UNSEEN    4u

struct sched_bpf_in {
	unsigned int type, tid;
	unsigned long long time;
	unsigned long long out;	     /* the switch-out it ends */
	unsigned long long runnable; /* 0: not known */
	unsigned int prev;	     /* the thread that ran before, 0 idle */
	unsigned int nholds;	     /* of holds[] */
	unsigned int flags;	     /* SCHED_BPF_IN_* */
	unsigned int taker;	     /* SHORT: who took the CPU at the
				      * switch-out (an OUT's holder) */
	unsigned long long others;   /* held by threads past the slots */
	unsigned long long unknown;  /* before the CPU's oldest switch kept */
	unsigned long long task;     /* SHORT: the task it left (an OUT's) */
	struct sched_bpf_hold holds[SCHED_BPF_SLOTS];
};

/* The bytes of an IN record with @n holders */
#define SCHED_BPF_IN_SIZE(n)                                                             \
	(sizeof(struct sched_bpf_in) -                                                   \
	 (SCHED_BPF_SLOTS - (n)) * sizeof(struct sched_bpf_hold))

/* The programs' settings (.rodata, set before load) */
struct sched_bpf_cfg {
	unsigned int tgid;	     /* the target */
	unsigned int children;	     /* and the processes it forks */
	unsigned int stack_bytes;    /* user stack copied per switch-out */
	unsigned int kernel;	     /* kernel chains wanted */
	unsigned long long wake_at;  /* bytes in the ring that wake the
				      * recorder (it polls anyway) */
	unsigned long long short_at; /* bytes in the ring past which stack
				      * copies are cut to SCHED_BPF_STACK_SHORT:
				      * a recorder behind loses stack depth
				      * before it loses records */
	unsigned long long min_ns;   /* 0: every switch-out sent as it
				      * happens; else only those of intervals
				      * this long, at their switch-in */
	struct tokio_bpf_slot slot;  /* where a thread keeps its task's id
				      * (zero-code Tokio; kind 0: none) */
	unsigned long long tick_fn;  /* CPU samples at the tick (TICK): the
				      * tick's hrtimer function; 0 none */
	unsigned int tick_stack;     /* user stack copied per tick sample */
	unsigned int pad;
};

/* The stack copy a waiting switch-out keeps (cfg.min_ns) at most: task
 * storage is allocated per thread of the target, at its size */
#define SCHED_BPF_PEND_STACK 8192

/* The stack copy of a switch-out while the ring is over cfg.short_at:
 * enough for CFI over a libc leaf or two (a blocking call's) before the
 * frame-pointer chain takes over; an eighth of the 8 KiB default. */
#define SCHED_BPF_STACK_SHORT 1024

#endif /* D9_SCHED_BPF_H */
