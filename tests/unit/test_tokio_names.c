// SPDX-License-Identifier: MIT
/* lib/tokio_names.h: Tokio's task machinery in a stack's names, on stacks
 * as real builds of an unmodified Tokio 1.24 program name them (rustc 1.95:
 * line-tables DWARF, no DWARF, opt-level s, full debug info). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "lib/tokio_names.h"

static const char *at(void *ctx, size_t k)
{
	return ((const char *const *)ctx)[k];
}

#define N(v) (sizeof(v) / sizeof((v)[0]))

/* split @v: its return, the name, the flag */
static size_t split(const char *const *v, size_t n, char *name, int *runtime)
{
	return lib_tokio_split(at, (void *)v, n, name, 256, runtime);
}

/* the hog's CPU, line-tables DWARF: inlined helpers name T */
static const char *const hog[] = {
	"lt [inlined]",
	"zcapp::hog_work",
	"zcapp::hog_task::{{closure}}",
	"{closure#0}<zcapp::hog_task::{async_fn_env#0}, alloc::sync::Arc<tokio::runtime::"
	"scheduler::multi_thread::handle::Handle, alloc::alloc::Global>>",
	"with_mut<tokio::runtime::task::core::Stage<zcapp::hog_task::{async_fn_env#0}>, "
	"core::task::poll::Poll<()>, tokio::runtime::task::core::{impl#6}::poll::"
	"{closure_env#0}<zcapp::hog_task::{async_fn_env#0}, alloc::sync::Arc<tokio::runtime"
	"::scheduler::multi_thread::handle::Handle, alloc::alloc::Global>>>",
	"tokio::runtime::task::core::Core<T,S>::poll",
	"poll_future<zcapp::hog_task::{async_fn_env#0}, alloc::sync::Arc<tokio::runtime::"
	"scheduler::multi_thread::handle::Handle, alloc::alloc::Global>>",
	"tokio::runtime::task::harness::Harness<T,S>::poll",
	"tokio::runtime::scheduler::multi_thread::worker::Context::run_task",
	"start_thread",
};

Test(tokio_names, an_async_fn_task_is_named_by_its_fn_and_cut_at_its_future)
{
	char name[256];
	int runtime = -1;

	cr_assert_eq(split(hog, N(hog), name, &runtime), 3, "hog_work and its body kept");
	cr_assert_str_eq(name, "zcapp::hog_task");
	cr_assert_eq(runtime, 0);
}

/* no DWARF: the future's own frame names it */
static const char *const nodebug[] = {
	"zcapp::hog_work",
	"zcapp::hog_task::{{closure}}",
	"tokio::runtime::task::core::Core<T,S>::poll",
	"tokio::runtime::task::harness::Harness<T,S>::poll",
	"start_thread",
};

Test(tokio_names, without_debug_info_the_futures_frame_names_it)
{
	char name[256];
	int runtime = -1;

	cr_assert_eq(split(nodebug, N(nodebug), name, &runtime), 2);
	cr_assert_str_eq(name, "zcapp::hog_task");
	cr_assert_eq(runtime, 0);
}

/* hyper's connection task, no DWARF: "<X as Future>::poll", generics dropped */
static const char *const conn[] = {
	"zchyper::cpu_route",
	"<hyper::server::server::new_svc::NewSvcTask<I,N,S,E,W> as "
	"core::future::future::Future>::poll",
	"tokio::runtime::task::core::Core<T,S>::poll",
	"tokio::runtime::task::raw::poll",
};

Test(tokio_names, a_library_future_is_named_by_its_type)
{
	char name[256];
	int runtime = -1;

	cr_assert_eq(split(conn, N(conn), name, &runtime), 2);
	cr_assert_str_eq(name, "hyper::server::server::new_svc::NewSvcTask");
	cr_assert_eq(runtime, 0);
}

/* a worker outside any task: its launch task, line-tables DWARF */
static const char *const launch[] = {
	"epoll_wait",
	"tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout",
	"tokio::runtime::scheduler::multi_thread::worker::run",
	"poll<tokio::runtime::scheduler::multi_thread::worker::{impl#0}::launch::{closure_env#0}"
	", ()> [inlined]",
	"{closure#0}<tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::"
	"multi_thread::worker::{impl#0}::launch::{closure_env#0}>, tokio::runtime::blocking::"
	"schedule::BlockingSchedule>",
	"with_mut<tokio::runtime::task::core::Stage<tokio::runtime::blocking::task::"
	"BlockingTask<tokio::runtime::scheduler::multi_thread::worker::{impl#0}::launch::"
	"{closure_env#0}>>, core::task::poll::Poll<()>>",
	"tokio::runtime::task::core::Core<T,S>::poll",
	"tokio::runtime::blocking::pool::Inner::run",
};

/* ... and opt-level s, no DWARF: UnsafeCell::with_mut out of line over
 * Core::poll, the BlockingTask's poll, then the worker */
static const char *const launch_s[] = {
	"tokio::runtime::scheduler::multi_thread::worker::Context::run",
	"tokio::runtime::scheduler::multi_thread::worker::run",
	"<tokio::runtime::blocking::task::BlockingTask<T> as "
	"core::future::future::Future>::poll",
	"tokio::loom::std::unsafe_cell::UnsafeCell<T>::with_mut",
	"tokio::runtime::task::core::Core<T,S>::poll",
	"tokio::runtime::task::harness::Harness<T,S>::poll",
};

Test(tokio_names, a_workers_launch_task_is_the_runtime)
{
	char name[256];
	int runtime = 0;

	cr_assert_neq(split(launch, N(launch), name, &runtime), SIZE_MAX);
	cr_assert_eq(runtime, 1, "DWARF's T is the launch closure");
	runtime = 0;
	cr_assert_eq(split(launch_s, N(launch_s), name, &runtime), 3,
		     "UnsafeCell::with_mut right over Core::poll is Tokio's");
	cr_assert_eq(runtime, 1, "the BlockingTask's poll, then the worker");
}

/* spawn_blocking: the closure, not the wrapper */
static const char *const blocking[] = {
	"zcapp::main::{{closure}}",
	"{closure#0}<tokio::runtime::blocking::task::BlockingTask<zcapp::main::"
	"{closure_env#0}>, tokio::runtime::blocking::schedule::BlockingSchedule>",
	"with_mut<tokio::runtime::task::core::Stage<tokio::runtime::blocking::task::"
	"BlockingTask<zcapp::main::{closure_env#0}>>, core::task::poll::Poll<()>>",
	"tokio::runtime::task::core::Core<T,S>::poll",
};

Test(tokio_names, a_spawn_blocking_task_is_named_by_its_closure)
{
	char name[256];
	int runtime = -1;

	cr_assert_eq(split(blocking, N(blocking), name, &runtime), 1);
	cr_assert_str_eq(name, "zcapp::main::{closure}");
	cr_assert_eq(runtime, 0);
}

/* the d9prof crate's wrapper: its own records name the task */
static const char *const marked[] = {
	"app::handler::{{closure}}",
	"d9prof::tokio::Marked<F>::poll_marked",
	"<d9prof::tokio::Marked<F> as core::future::future::Future>::poll",
	"tokio::runtime::task::core::Core<T,S>::poll::{{closure}}",
	"tokio::loom::std::unsafe_cell::UnsafeCell<T>::with_mut",
	"tokio::runtime::task::core::Core<T,S>::poll",
};

Test(tokio_names, a_task_the_crate_marks_is_none_of_the_zero_code_ones)
{
	char name[256];
	int runtime = 0;

	cr_assert_eq(split(marked, N(marked), name, &runtime), 3,
		     "Core::poll's closure out of line is Tokio's");
	cr_assert_eq(runtime, 1);
}

Test(tokio_names, no_machinery_or_a_leaf_in_it_names_nothing)
{
	static const char *const plain[] = {"main", "start_thread"};
	static const char *const entering[] = {
		"poll_future<zcapp::blocker_task::{async_fn_env#0}, alloc::sync::Arc<tokio::"
		"runtime::scheduler::multi_thread::handle::Handle, alloc::alloc::Global>>",
		"tokio::runtime::task::harness::Harness<T,S>::poll",
	};
	/* a poll_future of some other crate's: not Tokio's */
	static const char *const other[] = {"x", "poll_future<my::Fut, my::Sched>", "y"};
	char name[256] = "junk";
	int runtime = 1;

	cr_assert_eq(split(plain, N(plain), name, &runtime), SIZE_MAX);
	cr_assert_str_eq(name, "");
	cr_assert_eq(runtime, 0);
	cr_assert_eq(split(entering, N(entering), name, &runtime), SIZE_MAX,
		     "the leaf in Tokio's harness: its id may be the worker's");
	cr_assert_eq(split(other, N(other), name, &runtime), SIZE_MAX);
	cr_assert_eq(lib_tokio_split(at, (void *)plain, 0, NULL, 0, &runtime), SIZE_MAX);
}

/* the recorded frames only (a reader that left the inline frames out):
 * the task's Core::poll inlined into its raw::poll, the worker's launch
 * task's Core::poll out of line further down */
static const char *const recorded[] = {
	"d9demo_tokio::library_work",
	"d9demo_tokio::library_flush::{{closure}}",
	"tokio::runtime::task::raw::poll",
	"tokio::runtime::scheduler::multi_thread::worker::Context::run_task",
	"tokio::runtime::scheduler::multi_thread::worker::run",
	"tokio::runtime::task::core::Core<T,S>::poll",
	"tokio::runtime::blocking::pool::Inner::run",
};

Test(tokio_names, a_harness_nearer_the_leaf_than_any_core_poll_polls_the_task)
{
	char name[256];
	int runtime = -1;

	cr_assert_eq(split(recorded, N(recorded), name, &runtime), 2);
	cr_assert_str_eq(name, "d9demo_tokio::library_flush");
	cr_assert_eq(runtime, 0, "the launch task's Core::poll is further down");
}

/* a sample at the first instruction of drop glue a task's poll called:
 * no frame pointer pushed yet, so the poll's own frame is lost and the
 * glue sits right over Core::poll. It names no task (a marked task's
 * sample named so was a task of its own). */
Test(tokio_names, drop_glue_over_core_poll_names_no_task)
{
	static const char *const cut[] = {
		"core::ptr::drop_in_place<tokio::time::sleep::Sleep>",
		"tokio::runtime::task::core::Core<T,S>::poll",
		"tokio::runtime::task::harness::Harness<T,S>::poll",
		"start_thread",
	};
	char name[256];
	int runtime = -1;

	cr_assert_eq(split(cut, N(cut), name, &runtime), 1);
	cr_assert_str_eq(name, "");
	cr_assert_eq(runtime, 0);
}

/* Tokio's own types are never a task's name, whatever helper names them
 * (a TaskIdGuard dropped as a poll ends, on a stack cut short: a marked
 * task was a zero-code task "tokio::runtime::task::core::TaskIdGuard") */
Test(tokio_names, tokios_own_types_name_no_task)
{
	static const char *const guard[] = {
		"<tokio::runtime::task::core::TaskIdGuard as core::ops::drop::Drop>::drop",
		"tokio::runtime::task::core::Core<T,S>::poll",
		"tokio::runtime::task::harness::Harness<T,S>::poll",
		"start_thread",
	};
	char name[256];
	int runtime = -1;

	split(guard, N(guard), name, &runtime);
	cr_assert_str_eq(name, "");
}

#define ARC_HANDLE                                                                       \
	"alloc::sync::Arc<tokio::runtime::scheduler::multi_thread::handle::Handle, "     \
	"alloc::alloc::Global>"
#define LAUNCH_T                                                                         \
	"tokio::runtime::blocking::task::BlockingTask<tokio::runtime::scheduler::"       \
	"multi_thread::worker::{impl#0}::launch::{closure_env#0}>"

/* a short task's future dropped as it completes, in set_stage, which lld
 * folded with bench_task's (the same code): its own frames name the other
 * task; its caller in the harness names this one. The worker's launch
 * task polls further down. */
static const char *const folded_drop[] = {
	"with_mut<tokio::runtime::task::core::Stage<zcapp::bench_task::{async_fn_env#0}>, (), "
	"tokio::runtime::task::core::{impl#6}::set_stage::{closure_env#0}<zcapp::bench_task::"
	"{async_fn_env#0}, " ARC_HANDLE ">> [inlined]",
	"tokio::runtime::task::core::Core<T,S>::set_stage",
	"drop_future_or_output<zcapp::short_task::{async_fn_env#0}, " ARC_HANDLE
	"> [inlined]",
	"poll_future<zcapp::short_task::{async_fn_env#0}, " ARC_HANDLE "> [inlined]",
	"poll_inner<zcapp::short_task::{async_fn_env#0}, " ARC_HANDLE "> [inlined]",
	"tokio::runtime::task::harness::Harness<T,S>::poll",
	"tokio::runtime::scheduler::multi_thread::worker::Context::run_task",
	"tokio::runtime::scheduler::multi_thread::worker::run",
	"with_mut<tokio::runtime::task::core::Stage<" LAUNCH_T
	">, core::task::poll::Poll<()>, "
	"tokio::runtime::task::core::{impl#6}::poll::{closure_env#0}<" LAUNCH_T ", "
	"tokio::runtime::blocking::schedule::BlockingSchedule>> [inlined]",
	"tokio::runtime::task::core::Core<T,S>::poll",
};

Test(tokio_names, set_stage_is_named_by_its_caller_not_its_folded_code)
{
	char name[256];
	int runtime = -1;

	cr_assert_eq(split(folded_drop, N(folded_drop), name, &runtime), 1);
	cr_assert_str_eq(name, "zcapp::short_task");
	cr_assert_eq(runtime, 0);
}

Test(tokio_names, a_leaf_in_set_stage_itself_names_nothing)
{
	/* entering or leaving its guard: the id may be the launch task's */
	static const char *const leaf[] = {
		"tokio::runtime::task::core::Core<T,S>::set_stage",
		"store_output<zcapp::short_task::{async_fn_env#0}, " ARC_HANDLE
		"> [inlined]",
		"poll_future<zcapp::short_task::{async_fn_env#0}, " ARC_HANDLE
		"> [inlined]",
		"tokio::runtime::task::harness::Harness<T,S>::poll",
		"tokio::runtime::scheduler::multi_thread::worker::run",
		"tokio::runtime::task::core::Core<T,S>::poll",
	};
	char name[256];
	int runtime = -1;

	cr_assert_eq(split(leaf, N(leaf), name, &runtime), SIZE_MAX);
	cr_assert_eq(runtime, 0);
}

Test(tokio_names, a_worker_parked_in_tokio_is_told)
{
	static const char *const parked[] = {
		"epoll_wait",
		"tokio::runtime::scheduler::multi_thread::park::Parker::park_timeout",
		"tokio::runtime::scheduler::multi_thread::worker::Context::park_timeout",
	};
	static const char *const pool[] = {
		"futex_wait",
		"wait_timeout<tokio::runtime::blocking::pool::Shared> [inlined]",
		"tokio::runtime::blocking::pool::Inner::run"};

	cr_assert(lib_tokio_parked(at, (void *)parked, N(parked)));
	cr_assert(lib_tokio_parked(at, (void *)pool, N(pool)));
	cr_assert_not(lib_tokio_parked(at, (void *)hog, N(hog)));
}
