/* SPDX-License-Identifier: MIT */
/*
 * test_site.c - the one frame a view names for a stack: the application's
 * frame over the call it made (analysis/site.c).
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "analysis/stacks.h"
#include "synth_trace.h"

TestSuite(site);

static struct trace T;

static void fini(void)
{
	sy_free(&T);
}

/* The label analysis_site() gives stack @s (@cpu, @raw as it takes them). */
static const char *site_of(uint32_t s, int raw, int cpu)
{
	static char buf[512];
	uint32_t f, u;

	if (!analysis_site(&T, s, raw, cpu, &f, &u))
		return "(none)";
	return site_label(&T, f, u, buf, sizeof(buf));
}

Test(site, a_c_read_through_libc_names_the_function_that_called_it, .fini = fini)
{
	uint32_t k = sy_frame(&T, 0xffffffff81000000, "schedule", "[kernel]", 0, 1);
	uint32_t gi = sy_frame(&T, 0x7f0000001000, "__GI___libc_read",
			       "/lib/x86_64-linux-gnu/libc.so.6", 0, 0);
	uint32_t rd = sy_frame(&T, 0x7f0000001000, "read",
			       "/lib/x86_64-linux-gnu/libc.so.6", 0, 0);
	uint32_t app = sy_frame(&T, 0x401000, "slow_read", "/srv/app", 0, 0);
	uint32_t poll = sy_frame(&T, 0x402000, "reader_poll", "/srv/app", 0, 0);
	uint32_t s;

	T.frames[gi].inlined = 1;
	s = sy_stack(&T, 5, k, gi, rd, app, poll);
	cr_expect_str_eq(site_of(s, 0, 0), "read <- slow_read");
	/* --frame leaf: the raw call into the kernel */
	cr_expect_str_eq(site_of(s, 1, 0), "__GI___libc_read [inlined]");
	cr_expect_str_eq(site_of(s, 1, 1), "schedule_[k]");
}

Test(site, rust_std_and_tokio_frames_are_skipped, .fini = fini)
{
	static const char *const lf[] = {
		"clock_nanosleep",
		"std::thread::sleep",
		"<std::sys::pal::unix::thread::Thread>::sleep",
		"svc::load_config::{{closure}}",
		"<d9prof::tokio::Marked<F> as core::future::future::Future>::poll",
		"tokio::runtime::task::harness::Harness<T,S>::poll",
	};
	uint32_t s = sy_stack_syms(&T, 6, lf);

	T.frames[T.stack_frames[T.stack_off[s]]].module = "libc.so.6";
	cr_expect_str_eq(site_of(s, 0, 0),
			 "clock_nanosleep <- svc::load_config::{{closure}}");
}

Test(site, a_call_of_the_application_itself_or_no_application_frame_is_named_alone,
     .fini = fini)
{
	static const char *const own[] = {"demo_raw_syscall", "demo_poll", "main"};
	static const char *const none[] = {"std::thread::sleep", "tokio::park"};
	uint32_t a = sy_stack_syms(&T, 3, own), b = sy_stack_syms(&T, 2, none);

	cr_expect_str_eq(site_of(a, 0, 0), "demo_raw_syscall");
	cr_expect_str_eq(site_of(b, 0, 0), "std::thread::sleep");
}

Test(site, the_rule_by_module_and_by_name, .fini = fini)
{
	static const struct {
		const char *sym, *module;
		int sys;
	} v[] = {
		{"memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", 1},
		{"__vdso_clock_gettime", "[vdso]", 1},
		{"_dl_runtime_resolve", "/lib64/ld-linux-x86-64.so.2", 1},
		{"operator new", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 1},
		{"d9_poll_begin", "/usr/lib/libd9prof.so.0", 1},
		{"core::ptr::drop_in_place<x>", "/srv/app", 1},
		{"<alloc::vec::Vec<T> as Drop>::drop", "/srv/app", 1},
		{"mio::poll::Poll::poll", "/srv/app", 1},
		{"<u64>::wrapping_mul", "/srv/app", 1},
		{"<[u8]>::iter", "/srv/app", 1},
		{"<str as core::fmt::Display>::fmt", "/srv/app", 1},
		{"<&mut dyn std::io::Write as std::io::Write>::write", "/srv/app", 1},
		{"<&my_crate::Conn as std::io::Read>::read", "/srv/app", 0},
		{"u64_table_lookup", "/srv/app", 0},
		{"<&str as core::fmt::Display>::fmt", "/srv/app", 1},
		{"<&[u8] as std::io::Read>::read", "/srv/app", 1},
		{"<&mut [u8] as std::io::Write>::write", "/srv/app", 1},
		{"clone", "/lib/x86_64-linux-gnu/libc.so.6", 1},
		{"clone_repo", "/srv/app", 0},
		{"start_thread_pool", "/srv/app", 0},
		{"_start_server", "/srv/app", 0},
		{"_start", "/srv/app", 1},
		{"rte_eth_rx_burst", "/usr/lib/librte_ethdev.so.23", 0},
		{"pthread_cond_wait", "/lib/x86_64-linux-gnu/libc.so.6", 1},
		{"my_crate::handler", "/srv/app", 0},
		{"<my_crate::Db as my_crate::Store>::get", "/srv/app", 0},
		{NULL, "/srv/app", 0},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
		uint32_t f = sy_frame(&T, 0x1000 + i, v[i].sym, v[i].module, 0, 0);

		cr_expect_eq(analysis_frame_is_system(&T, f), v[i].sys, "%s in %s",
			     v[i].sym ? v[i].sym : "(null)", v[i].module);
	}
	cr_expect(analysis_frame_is_system(&T, 12345), "a bad id");
}
