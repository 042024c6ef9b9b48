/* SPDX-License-Identifier: MIT */
/*
 * rust_names.h - Rust functions named in full where line-tables-only
 * DWARF names them short.
 *
 * With `debug = "line-tables-only"` (and `debug = 1` in older rustc) an
 * inlined function's DWARF name is its last path segment: an async fn's
 * body is "{async_fn#0}", a closure "{closure#0}<T, S>", an async block
 * "{async_block#0}", std's u64::rotate_left "rotate_left<u64>". What the
 * DWARF still holds is in the names around them: generic arguments carry
 * full paths, and a body's future type is one of them where it is polled
 * ("poll<app::handle::{async_fn_env#0}>", the frame that calls
 * "{async_fn#0}"); what a body defines names the body in its own path
 * ("tokio::task::yield_now::yield_now::{async_fn#0}::{impl#0}::poll" in a
 * frame it calls); and each function's code is in a source file whose
 * path says its crate and module ("/rustc/H/library/core/src/num/...").
 *
 * A body is named as the symbol table names an async fn's or closure's
 * body ("app::handle::{{closure}}", rustc's legacy mangling, which is
 * cargo's default), so the inlined and the out-of-line copies of one body
 * are one function in every view. Strings only, no allocation.
 */
#ifndef D9_LIB_RUST_NAMES_H
#define D9_LIB_RUST_NAMES_H

#include <stddef.h>

/* A body with no path: "{KIND#NUM}", maybe followed by generic arguments */
struct lib_rust_body {
	const char *kind; /* "closure", "async_fn", "async_block", ... (in
			   * the name it was read from) */
	size_t klen;
	unsigned long num;
};

/* 1 if @sym is an unqualified body ("{async_fn#0}", "{closure#1}<T>"),
 * its kind and number in *@b; 0 for anything else (a path, an impl's
 * "{impl#2}", an environment type "{closure_env#0}", C and C++ names). */
int lib_rust_body(const char *sym, struct lib_rust_body *b);

/* 1 if @sym is a body, qualified or not: its last path segment (generic
 * arguments aside) is "{{closure}}" or a "{KIND#NUM}" that is no impl. */
int lib_rust_is_body(const char *sym);

/* Body @b as a function name @name mentions its future or closure type,
 * "PATH::{KIND_env#NUM}" (the least nested mention, the last of those):
 * "PATH::{{closure}}" into @out (@len bytes); 1 if @name mentions it,
 * else 0 and @out untouched (also where it does not fit: a name cut
 * short would be another's). */
int lib_rust_body_from_env(const char *name, const struct lib_rust_body *b, char *out,
			   size_t len);

/* Body @b as a function name @name mentions something defined in it,
 * "PATH::{KIND#NUM}::X" (DWARF's words) or "PATH::{{closure}}::X" (a
 * symbol's): "PATH::{{closure}}" into @out; 1 if found and it fits, else
 * 0 and @out untouched. */
int lib_rust_body_from_inner(const char *name, const struct lib_rust_body *b, char *out,
			     size_t len);

/* The crate and module a Rust source @file is, "core::num" for
 * ".../library/core/src/num/uint_macros.rs" (std's crates), "tokio::task"
 * for ".../tokio-1.24.2/src/task/mod.rs" (a registry's crate: NAME-VERSION):
 * into @out, 1; 0 where the path names no crate (the program's own
 * sources, a crate by path) or the module does not fit in @len. A file of
 * macros is the module that holds it. */
int lib_rust_module(const char *file, char *out, size_t len);

#endif /* D9_LIB_RUST_NAMES_H */
