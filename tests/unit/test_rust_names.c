// SPDX-License-Identifier: MIT
/* lib/rust_names.h: names as rustc 1.95's line-tables-only DWARF and
 * symbol tables give them (the README's app and Tokio 1.24). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rust_names.h"

static struct lib_rust_body body(const char *sym)
{
	struct lib_rust_body b = {0};

	cr_assert(lib_rust_body(sym, &b), "'%s' is a body", sym);
	return b;
}

Test(rust_names, a_body_is_a_kind_and_a_number_alone)
{
	struct lib_rust_body b;

	b = body("{async_fn#0}");
	cr_assert_eq(b.klen, 8);
	cr_assert_eq(strncmp(b.kind, "async_fn", 8), 0);
	cr_assert_eq(b.num, 0);
	b = body("{closure#12}<d9prof::tokio::Marked<F>, alloc::sync::Arc<H>>");
	cr_assert_eq(b.num, 12);
	cr_assert_eq(strncmp(b.kind, "closure", b.klen), 0);
	cr_assert_not(lib_rust_body("{impl#3}", &b));
	cr_assert_not(lib_rust_body("{closure_env#0}", &b));
	cr_assert_not(lib_rust_body("app::f::{async_fn#0}", &b));
	cr_assert_not(lib_rust_body("{closure#0}::x", &b));
	cr_assert_not(lib_rust_body("{closure#}", &b));
	cr_assert_not(lib_rust_body("d9_poll_end", &b));
	cr_assert_not(lib_rust_body("std::vector<int>::push_back", &b));
}

Test(rust_names, bodies_qualified_or_not)
{
	cr_assert(lib_rust_is_body("app::compute_report::{{closure}}"));
	cr_assert(lib_rust_is_body("{async_fn#0}"));
	cr_assert(lib_rust_is_body("{closure#0}<T, S>"));
	cr_assert(lib_rust_is_body(
		"tokio::runtime::task::harness::poll_future::{{closure}}"));
	cr_assert_not(lib_rust_is_body(
		"<tokio::task::yield_now::yield_now::{{closure}}::YieldNow "
		"as core::future::future::Future>::poll"));
	cr_assert_not(lib_rust_is_body("poll<app::compute_report::{async_fn_env#0}>"));
	cr_assert_not(lib_rust_is_body("tokio::runtime::task::core::Core<T,S>::poll"));
	cr_assert_not(lib_rust_is_body(
		"is_some_and<core::cmp::Ordering, fn(core::cmp::Ordering) "
		"-> bool>"));
}

static void env(const char *name, const char *sym, const char *want)
{
	struct lib_rust_body b = body(sym);
	char out[256] = "untouched";

	if (!want) {
		cr_assert_not(lib_rust_body_from_env(name, &b, out, sizeof(out)), "%s",
			      out);
		cr_assert_str_eq(out, "untouched");
		return;
	}
	cr_assert(lib_rust_body_from_env(name, &b, out, sizeof(out)), "%s in %s", sym,
		  name);
	cr_assert_str_eq(out, want);
}

Test(rust_names, a_body_is_named_by_the_future_polled_around_it)
{
	env("poll<app::compute_report::{async_fn_env#0}>", "{async_fn#0}",
	    "app::compute_report::{{closure}}");
	/* the closure Core::poll passes to with_mut, not the task's future
	 * nested in its arguments */
	env("with_mut<tokio::runtime::task::core::Stage<d9prof::tokio::Marked<app::compute_report::"
	    "{async_fn_env#0}>>, core::task::poll::Poll<u64>, tokio::runtime::task::core::{impl#6}::"
	    "poll::{closure_env#0}<d9prof::tokio::Marked<app::compute_report::{async_fn_env#0}>, "
	    "alloc::sync::Arc<tokio::runtime::scheduler::multi_thread::handle::Handle, "
	    "alloc::alloc::Global>>>",
	    "{closure#0}<d9prof::tokio::Marked<app::compute_report::{async_fn_env#0}>, "
	    "alloc::sync::Arc<H>>",
	    "tokio::runtime::task::core::{impl#6}::poll::{{closure}}");
	/* a body inside a body: both as a symbol names them */
	env("poll<app::serve::{async_fn#0}::{async_block_env#1}>", "{async_block#1}",
	    "app::serve::{{closure}}::{{closure}}");
	/* the number and the kind must agree */
	env("poll<app::compute_report::{async_fn_env#1}>", "{async_fn#0}", NULL);
	env("poll<app::compute_report::{async_block_env#0}>", "{async_fn#0}", NULL);
	env("poll<app::compute_report::{async_fn_env#0}>", "{closure#0}", NULL);
	/* no path before it */
	env("poll<{async_fn_env#0}>", "{async_fn#0}", NULL);
	/* a path that does not fit is none: cut short it would be another's */
	{
		char big[2048], out[64] = "untouched";
		struct lib_rust_body b = body("{async_fn#0}");

		snprintf(big, sizeof(big), "poll<app::%01500d::handle::{async_fn_env#0}>",
			 0);
		cr_assert_not(lib_rust_body_from_env(big, &b, out, sizeof(out)));
		cr_assert_str_eq(out, "untouched");
		cr_assert_not(
			lib_rust_module("/usr/share/cargo/registry/tokio-1.24.2/src/"
					"a_long_module_name/another_one.rs",
					out, 20));
	}
	/* "->" is no bracket: the least nested mention is still found */
	env("call<fn() -> u8, app::a::{closure_env#0}<app::b::{closure_env#0}>>",
	    "{closure#0}", "app::a::{{closure}}");
}

static void inner(const char *name, const char *sym, const char *want)
{
	struct lib_rust_body b = body(sym);
	char out[256] = "untouched";

	if (!want) {
		cr_assert_not(lib_rust_body_from_inner(name, &b, out, sizeof(out)), "%s",
			      out);
		return;
	}
	cr_assert(lib_rust_body_from_inner(name, &b, out, sizeof(out)), "%s in %s", sym,
		  name);
	cr_assert_str_eq(out, want);
}

Test(rust_names, a_body_is_named_by_what_it_defines)
{
	inner("with_defer<(), tokio::task::yield_now::yield_now::{async_fn#0}::{impl#0}::poll::"
	      "{closure_env#0}>",
	      "{async_fn#0}", "tokio::task::yield_now::yield_now::{{closure}}");
	/* a symbol's words */
	inner("<tokio::task::yield_now::yield_now::{{closure}}::YieldNow as "
	      "core::future::future::Future>::poll",
	      "{async_fn#0}", "tokio::task::yield_now::yield_now::{{closure}}");
	/* a closure defined in the body, called by it */
	inner("app::bar::{{closure}}::{{closure}}", "{async_fn#0}",
	      "app::bar::{{closure}}");
	/* defined in a closure in the body: the closure's, not the body's */
	inner("app::foo::{async_fn#0}::{closure#0}::X", "{async_fn#0}", NULL);
	inner("app::foo::{async_fn#0}::{closure#0}::X", "{closure#0}",
	      "app::foo::{{closure}}::{{closure}}");
	/* a body at the end of a path defines nothing */
	inner("app::compute_report::{{closure}}", "{async_fn#0}", NULL);
	inner("zcapp::hog_work", "{async_fn#0}", NULL);
}

static void module(const char *file, const char *want)
{
	char out[128] = "untouched";

	if (!want) {
		cr_assert_not(lib_rust_module(file, out, sizeof(out)), "%s: %s", file,
			      out);
		return;
	}
	cr_assert(lib_rust_module(file, out, sizeof(out)), "%s", file);
	cr_assert_str_eq(out, want);
}

Test(rust_names, a_source_file_says_its_crate_and_module)
{
	module("/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/num/uint_macros.rs",
	       "core::num");
	module("/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/core/src/iter/range.rs",
	       "core::iter::range");
	module("/rustc/h/library/core/src/cmp.rs", "core::cmp");
	module("/rustc/h/library/std/src/thread/local.rs", "std::thread::local");
	module("/rustc/h/library/alloc/src/lib.rs", "alloc");
	module("/usr/share/cargo/registry/tokio-1.24.2/src/task/yield_now.rs",
	       "tokio::task::yield_now");
	module("/usr/share/cargo/registry/tokio-1.24.2/src/runtime/task/mod.rs",
	       "tokio::runtime::task");
	module("/root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/pin-project-lite-0.2.9/"
	       "src/lib.rs",
	       "pin_project_lite");
	module("/rust/deps/hashbrown-0.16.1/src/raw/mod.rs", "hashbrown::raw");
	/* the program's own, a crate by path, not Rust, generated code */
	module("/tmp/app/src/main.rs", NULL);
	module("src/main.rs", NULL);
	module("/work/main/bindings/rust/d9prof/src/tokio.rs", NULL);
	module("/usr/include/x86_64-linux-gnu/bits/stdio2.h", NULL);
	module("/tmp/app/target/release/build/x-1.0/out/gen.rs", NULL);
	module(NULL, NULL);
}

/* a trace's names are untrusted: a long one is read in linear time */
Test(rust_names, a_long_name_is_read_in_linear_time, .timeout = 20)
{
	size_t n = 4u << 20, i;
	char *s = malloc(n + 1), out[64];
	struct lib_rust_body b = body("{x#0}");
	const char *pat[] = {"a<", "::{x_env#0}", "a::{x#0}::b,", "::"};

	cr_assert_not_null(s);
	for (size_t p = 0; p < sizeof(pat) / sizeof(*pat); p++) {
		size_t pl = strlen(pat[p]);

		for (i = 0; i + pl <= n; i += pl)
			memcpy(s + i, pat[p], pl);
		s[i] = '\0';
		lib_rust_body_from_env(s, &b, out, sizeof(out));
		lib_rust_body_from_inner(s, &b, out, sizeof(out));
		lib_rust_is_body(s);
		lib_rust_module(s, out, sizeof(out));
	}
	free(s);
}
