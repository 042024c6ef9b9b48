/* SPDX-License-Identifier: MIT */
/*
 * usdt.h - the shim as a USDT probe provider: provider "d9prof", one probe
 * per marker, in tokio-dtrace's vocabulary. A tracer (perf probe, bpftrace,
 * systemtap) attached to them sees the runtime's events whether or not a
 * d9prof recorder is attached. Only shim.c includes this file.
 *
 *   probe                 marker            arguments
 *   task_spawn            d9_task_spawn     arg0 task id, arg1 name (char *, or NULL)
 *   task_poll_start       d9_poll_begin     arg0 task id
 *   task_poll_end         d9_poll_end       arg0 task id
 *   task_terminate        d9_task_end       arg0 task id
 *   task_wake             d9_task_wake      arg0 task id
 *   task_waker_drop       d9_task_waker_drop arg0 task id
 *   worker_thread_start   d9_thread_start   arg0 thread name (char *, or NULL)
 *   worker_thread_stop    d9_thread_stop    none
 *   worker_thread_park    d9_park           none
 *   worker_thread_unpark  d9_unpark         none
 *
 * Notes cannot carry '-': tokio-dtrace's task-poll-start is task_poll_start
 * here (perf: sdt_d9prof:task_poll_start, bpftrace:
 * usdt:PATH:d9prof:task_poll_start).
 *
 * Where the probes sit. Every probe is in the shim's own function (in
 * libd9prof.so, or in the program that links libd9prof.a), first thing,
 * before the detached return: one provider, each event fired once, for C
 * callers and other languages' bindings alike. The poll-path markers are
 * gated inline in the caller (<d9prof.h>), so that function is called only
 * while the gate is open; every probe therefore shares one USDT semaphore,
 * d9__probe_sem, which the kernel counts up while a tracer is attached to
 * any of them, and the inline gate reads it beside the recorder's attached
 * word (one more load, the same branch). The probe site itself is a nop.
 * The other place, a probe in the inline macro, would cost no load but put
 * the notes in every caller's binary (C callers only: bindings gate on
 * their own), where a tracer of libd9prof.so does not look, and fire a
 * second probe in the function whenever the gate is open.
 * Built without <sys/sdt.h> (systemtap-sdt-dev), the shim has no probes
 * and the semaphore stays 0.
 */
#ifndef D9_USDT_H
#define D9_USDT_H

#if defined(__has_include)
#if __has_include(<sys/sdt.h>)
#define D9_USDT 1
#endif
#endif

#ifdef D9_USDT
/* every probe's note names its semaphore, d9prof_<probe>_semaphore:
 * shim.c makes each an alias of d9__probe_sem */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#define D9_USDT_SEM_(name) extern volatile unsigned short d9prof_##name##_semaphore
D9_USDT_SEM_(task_spawn);
D9_USDT_SEM_(task_poll_start);
D9_USDT_SEM_(task_poll_end);
D9_USDT_SEM_(task_terminate);
D9_USDT_SEM_(task_wake);
D9_USDT_SEM_(task_waker_drop);
D9_USDT_SEM_(worker_thread_start);
D9_USDT_SEM_(worker_thread_stop);
D9_USDT_SEM_(worker_thread_park);
D9_USDT_SEM_(worker_thread_unpark);

#define D9_PROBE0(name)	      STAP_PROBE(d9prof, name)
#define D9_PROBE1(name, a)    STAP_PROBE1(d9prof, name, a)
#define D9_PROBE2(name, a, b) STAP_PROBE2(d9prof, name, a, b)
#else
#define D9_PROBE0(name)	      ((void)0)
#define D9_PROBE1(name, a)    ((void)(a))
#define D9_PROBE2(name, a, b) ((void)(a), (void)(b))
#endif

#endif /* D9_USDT_H */
