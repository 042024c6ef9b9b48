/* SPDX-License-Identifier: MIT */
/*
 * tokio_names.h - Tokio's task machinery in a stack's function names, for
 * zero-code Tokio (a trace whose samples and switches carry Tokio's task
 * ids): where a stack leaves Tokio's poll of a task for the task's own
 * future, what that future is (the task's name), and where Tokio parks a
 * thread with nothing to run. Strings only, no allocation: the recorder
 * asks it of the names its symbolizer gives, the analysis of a trace's
 * frames.
 *
 * Every task's poll runs the same generic code, innermost first:
 *   the future's poll                     zcapp::hog_task::{{closure}}
 *   {closure#0}<T, S>        [inlined]    Core::poll's closure
 *   with_mut<...Stage<T>, ...>  [inlined] its UnsafeCell access
 *   tokio::runtime::task::core::Core<T,S>::poll
 *   ... poll_future<T, S>, poll_inner<T, S> [inlined]
 *   tokio::runtime::task::harness::Harness<T,S>::poll
 *   tokio::runtime::task::raw::poll       (the task's vtable holds it)
 * T, the future's type, is in the names DWARF gives the inlined frames
 * (line-tables-only debug info is enough); without DWARF the future's own
 * frame right above the machinery names it. A worker thread runs inside
 * its own launch task (a BlockingTask of the worker's launch closure), so
 * Tokio's thread-local holds that task's id whenever the worker polls no
 * task of its own: such a task is the runtime, not a task of the program.
 * The inlined helpers' names are Tokio 1.24's; a version that names them
 * otherwise still has the machinery's own frames and the future's.
 */
#ifndef D9_LIB_TOKIO_NAMES_H
#define D9_LIB_TOKIO_NAMES_H

#include <stddef.h>

/* The @k-th function name of a stack, leaf first, an inlined function an
 * entry of its own before the function it was inlined into (as the trace
 * reader expands frames); "" where unknown, never NULL */
typedef const char *(*lib_tokio_name_fn)(void *ctx, size_t k);

/* The stack of @n names @fn gives at Tokio's task machinery: the number
 * of entries from the leaf over the innermost Core::poll, the task whose
 * id Tokio holds in the thread then (the rest is Tokio's poll of it and
 * the thread below; a sample in the harness around Core::poll, entering
 * or leaving a poll, is the task outside's, a worker's launch task), or
 * over a Core::set_stage nearer the leaf (storing or dropping the task's
 * future, under its id too; named by its callers: its own code may be
 * folded with another task's), or SIZE_MAX where the stack is in no
 * task's poll or its leaf is in Core::poll's or set_stage's own code
 * (around what sets the task's id);
 * the future's type as the task's name in @name, "" where the names do
 * not say (Tokio's own code over Core::poll and no DWARF): generic
 * arguments dropped, an async fn's body as the fn, a BlockingTask or
 * Instrumented wrapper as what it wraps (@name may be NULL); and in
 * *@runtime whether the task polled is none of the program's zero-code
 * tasks: a worker's own launch task (the runtime), or a task the d9prof
 * crate marks (its records name it and bound its polls). */
size_t lib_tokio_split(lib_tokio_name_fn fn, void *ctx, size_t n, char *name, size_t len,
		       int *runtime);
/* The task name of a raw::poll instance from its DWARF name,
 * "poll<T, S>" (T as lib_tokio_split() names it), into @name; "" if @sym is
 * no such name. */
void lib_tokio_poll_name(const char *sym, char *name, size_t len);
/* Does the stack park a Tokio thread with nothing to run (a worker's
 * park, block_on's, the blocking pool's wait)? */
int lib_tokio_parked(lib_tokio_name_fn fn, void *ctx, size_t n);

#endif /* D9_LIB_TOKIO_NAMES_H */
