// SPDX-License-Identifier: MIT
/*
 * tokio_names.c - Tokio's task machinery in a stack's function names: where it
 * polls a task's future, what that future is, where it parks a thread
 * (lib/tokio_names.h). Strings only: the recorder asks it of the names its
 * symbolizer gives, the analysis of a trace's frames.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/tokio_names.h"

/* Tokio's poll of a task, from inside: Core::poll, where the task's id is
 * set around the future's poll (TaskIdGuard) */
#define CORE_POLL "tokio::runtime::task::core::Core<T,S>::poll"
/* ... its closure, out of line where inlining is less eager (full debug
 * info) */
#define CORE_CLOSURE "tokio::runtime::task::core::Core<T,S>::poll::{{closure}}"
/* ... and from outside: the harness around it and the vtable's entry,
 * where the thread-local still holds the task outside (the worker's
 * launch task): a sample there is that task's */
static const char *const harness[] = {
	"tokio::runtime::task::harness::Harness<T,S>::poll",
	"tokio::runtime::task::raw::poll",
};

#define STAGE "with_mut<tokio::runtime::task::core::Stage<"
/* Core::set_stage, where the harness stores a future's output or drops it
 * (store_output, drop_future_or_output): under the task's id too, but its
 * code is the same for many futures and the linker folds the copies into
 * one (lld's identical code folding), so the names of its own frames, its
 * stage access's T among them, may be another task's: T comes from its
 * callers in the harness, which are the task's own */
#define SET_STAGE "tokio::runtime::task::core::Core<T,S>::set_stage"
/* Core::poll's access to its stage, out of line where inlining is less
 * eager (opt-level s) */
#define CELL "tokio::loom::std::unsafe_cell::UnsafeCell<T>::with_mut"

/* Wrappers whose first type argument is what the task is (a
 * spawn_blocking closure, a future instrumented by tracing) */
static const char *const wrappers[] = {
	"tokio::runtime::blocking::task::BlockingTask<",
	"tracing::instrument::Instrumented<",
};

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* The end of the generic argument starting at @s (at its ',' or closing
 * '>' at depth 0, or the string's end) */
static const char *arg_end(const char *s)
{
	int depth = 0;

	for (; *s; s++) {
		if (*s == '<' || *s == '(' || *s == '[')
			depth++;
		else if ((*s == '>' || *s == ')' || *s == ']') && depth-- == 0)
			return s;
		else if (*s == ',' && !depth)
			return s;
	}
	return s;
}

/* Is frame @sym an inlined Harness helper of a Tokio task (its S, the
 * scheduler, is Tokio's)? "poll_future<T, S>", "poll_inner<T, S>" */
static int harness_inline(const char *sym)
{
	return (starts(sym, "poll_future<") || starts(sym, "poll_inner<")) &&
	       strstr(sym, "tokio::runtime::");
}

/* ... or one that calls set_stage */
static int stage_caller(const char *sym)
{
	return (starts(sym, "store_output<") || starts(sym, "drop_future_or_output<")) &&
	       strstr(sym, "tokio::runtime::");
}

/* Core::poll's access to its stage (not set_stage's) */
static int poll_stage(const char *sym)
{
	return starts(sym, STAGE) && !strstr(sym, "::set_stage::");
}

/* Is the @k-th of the @m names Tokio's Core::poll, or its own code right
 * over it (its closure, its access to the stage, inlined or not)? */
static int core_level(lib_tokio_name_fn fn, void *ctx, size_t k, size_t m)
{
	const char *sym = fn(ctx, k), *next = k + 1 < m ? fn(ctx, k + 1) : "";

	return !strcmp(sym, CORE_POLL) || !strcmp(sym, CORE_CLOSURE) || poll_stage(sym) ||
	       (starts(sym, "{closure#0}<") && poll_stage(next)) ||
	       (!strcmp(sym, CELL) && !strcmp(next, CORE_POLL));
}

/* A function's full path ("a::b::f", "<X as T>::poll"), as a symbol
 * table names it, not the short name DWARF gives an inlined function
 * ("transition_to_running", "poll_inner<a::T, S>") */
static int full_path(const char *sym)
{
	const char *lt = strchr(sym, '<'), *sep = strstr(sym, "::");

	return sep && (!lt || sep < lt || sym[0] == '<');
}

static int harness_level(const char *sym)
{
	for (size_t i = 0; i < sizeof(harness) / sizeof(*harness); i++)
		if (!strcmp(sym, harness[i]))
			return 1;
	return harness_inline(sym);
}

/* T, the first generic argument after @open in @sym, into @buf */
static void first_arg(const char *sym, size_t open, char *buf, size_t len)
{
	const char *a = sym + open, *e = arg_end(a);

	snprintf(buf, len, "%.*s", (int)(e - a), a);
}

/* The type a future's own poll frame @sym is the poll of: "<X as
 * core::future::future::Future>::poll" -> X; "a::b::{{closure}}" (an async
 * fn's body) -> a::b; "X::poll" -> X */
static void future_of(const char *sym, char *buf, size_t len)
{
	const char *as = strstr(sym, " as ");
	size_t n;

	if (sym[0] == '<' && as) {
		snprintf(buf, len, "%.*s", (int)(as - sym - 1), sym + 1);
		return;
	}
	snprintf(buf, len, "%s", sym);
	n = strlen(buf);
	if (n > 14 && !strcmp(buf + n - 13, "::{{closure}}"))
		buf[n - 13] = '\0';
	else if (n > 6 && !strcmp(buf + n - 6, "::poll"))
		buf[n - 6] = '\0';
}

/* @t as a task's name, in place: a wrapper's inner type, generic
 * arguments dropped, an async fn's environment as the fn ("a::f::
 * {async_fn_env#0}" -> "a::f"), other environments as "{closure}" and
 * "{async block}" */
static void clean_type(char *t)
{
	char out[512];
	size_t o = 0;

	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < sizeof(wrappers) / sizeof(*wrappers); i++) {
			size_t w = strlen(wrappers[i]);

			if (!strncmp(t, wrappers[i], w)) {
				const char *e = arg_end(t + w);

				memmove(t, t + w, (size_t)(e - (t + w)));
				t[e - (t + w)] = '\0';
				again = 1;
			}
		}
	}
	for (const char *p = t; *p && o + 1 < sizeof(out);) {
		if (*p == '<') {
			const char *e = arg_end(p + 1);

			while (*e == ',')
				e = arg_end(e + 1);
			p = *e ? e + 1 : e;
			continue;
		}
		if (starts(p, "::{async_fn_env#")) {
			p = strchr(p, '}') ? strchr(p, '}') + 1 : p + strlen(p);
			continue;
		}
		if (starts(p, "{closure_env#") || starts(p, "{async_block_env#")) {
			const char *rep = p[1] == 'c' ? "{closure}" : "{async block}";
			size_t r = strlen(rep);

			if (o + r < sizeof(out)) {
				memcpy(out + o, rep, r);
				o += r;
			}
			p = strchr(p, '}') ? strchr(p, '}') + 1 : p + strlen(p);
			continue;
		}
		out[o++] = *p++;
	}
	out[o] = '\0';
	memcpy(t, out, o + 1);
}

#define WORKER "tokio::runtime::scheduler::multi_thread::worker::"

/* The worker's own launch task, polled at @k: its thread-local id while it
 * polls none. Its future is a BlockingTask of the launch closure, which
 * runs the worker: named so in T, else the frames right above (the
 * BlockingTask's poll, then the worker's code) say it. */
static int is_launch(lib_tokio_name_fn fn, void *ctx, size_t k, const char *type)
{
	const char *own = k ? fn(ctx, k - 1) : "";

	if (strstr(type, "multi_thread::worker::{impl#0}::launch") || strstr(own, WORKER))
		return 1;
	return k >= 2 && strstr(own, "tokio::runtime::blocking::task::BlockingTask<") &&
	       strstr(fn(ctx, k - 2), WORKER);
}

/* A task the d9prof crate marks (its wrapper future polls it): the
 * crate's own records name it and bound its polls */
static int marked(lib_tokio_name_fn fn, void *ctx, size_t k, const char *type)
{
	if (starts(type, "d9prof::tokio::Marked<"))
		return 1;
	for (size_t i = 0; i < k; i++)
		if (strstr(fn(ctx, i), "d9prof::tokio::Marked<"))
			return 1;
	return 0;
}

size_t lib_tokio_split(lib_tokio_name_fn fn, void *ctx, size_t m, char *name, size_t len,
		       int *runtime)
{
	char type[512] = "";
	const char *own = "";
	size_t k, h, i;

	if (name && len)
		name[0] = '\0';
	*runtime = 0;
	/* the innermost Core::poll: the task whose id the thread holds (the
	 * harness around it, entering and leaving the poll, still holds the
	 * one outside) */
	for (k = 0; k < m && !core_level(fn, ctx, k, m); k++)
		;
	/* set_stage nearer the leaf: the task whose output is stored or
	 * dropped, named by set_stage's callers (not the leaf in set_stage
	 * itself: entering or leaving its guard) */
	for (h = 0; h < k && strcmp(fn(ctx, h), SET_STAGE); h++)
		;
	if (h < k) {
		if (h == 0)
			return SIZE_MAX;
		for (i = h + 1; i < m && i < h + 8 && !type[0]; i++)
			if (stage_caller(fn(ctx, i)) || harness_inline(fn(ctx, i)))
				first_arg(fn(ctx, i),
					  (size_t)(strchr(fn(ctx, i), '<') - fn(ctx, i)) +
						  1,
					  type, sizeof(type));
		k = h;
		goto named;
	}
	/* where Core::poll was inlined into the harness with no inline
	 * frames to say so (no DWARF, or a reader that left them out), a
	 * harness nearer the leaf than any Core::poll named polls the task:
	 * the one named is an outer task's (a worker's launch task). Then
	 * the harness, where the frame over it is the future's own (a
	 * function's full path, not Tokio's code) */
	for (h = 0; h < k && !harness_level(fn(ctx, h)); h++)
		;
	if (h < k && h > 0 && full_path(fn(ctx, h - 1)) &&
	    !starts(fn(ctx, h - 1), "tokio::"))
		k = h;
	else if (k == m)
		return SIZE_MAX;
	/* the leaf in Core::poll itself, or its stage access: Tokio entering
	 * or leaving the future's poll (its closure sets the task's id) */
	if (k == 0 && (!strcmp(fn(ctx, 0), CORE_POLL) || !strcmp(fn(ctx, 0), CELL)))
		return SIZE_MAX;
	/* T from the inlined helpers' names, nearest first */
	for (i = k; i < m && i < k + 8 && !type[0]; i++) {
		const char *sym = fn(ctx, i);

		if (poll_stage(sym))
			first_arg(sym, strlen(STAGE), type, sizeof(type));
		else if (harness_inline(sym) || (i == k && starts(sym, "{closure#0}<")))
			first_arg(sym, (size_t)(strchr(sym, '<') - sym) + 1, type,
				  sizeof(type));
	}
	/* else the future's own frame over it, where that is not Tokio's
	 * (storing the output, waking the joiner: no name) */
	own = k ? fn(ctx, k - 1) : "";
	/* never drop glue: no future's poll, it is a stack cut at a callee's
	 * first instruction (its frame pointer not yet pushed, so the poll
	 * that called it is lost), which would name a task after the value
	 * its poll dropped */
	if (!type[0] && own[0] && !starts(own, "tokio::") &&
	    !starts(own, "core::ptr::drop_in_place"))
		future_of(own, type, sizeof(type));
named:
	*runtime = is_launch(fn, ctx, k, type) || marked(fn, ctx, k, type);
	clean_type(type);
	/* Tokio's own machinery (a guard dropped as a poll ends, read off a
	 * stack cut short) and drop glue are no task's future: no name */
	if (!strncmp(type, "tokio::runtime::", 16) || !strncmp(type, "core::ptr::", 11))
		type[0] = '\0';
	if (name && len)
		snprintf(name, len, "%s", type);
	return k;
}

void lib_tokio_poll_name(const char *sym, char *name, size_t len)
{
	char type[512] = "";

	if (len)
		name[0] = '\0';
	if (!starts(sym, "poll<"))
		return;
	first_arg(sym, 5, type, sizeof(type));
	clean_type(type);
	snprintf(name, len, "%s", type);
}

/* Where Tokio parks a thread with nothing to run: a worker's park, a
 * current-thread runtime's or block_on's, the blocking pool's wait */
static const char *const parks[] = {
	"tokio::runtime::scheduler::multi_thread::worker::Context::park",
	"tokio::runtime::scheduler::multi_thread::park::",
	"tokio::runtime::scheduler::current_thread::Context::park",
	"tokio::runtime::park::",
	"wait_timeout<tokio::runtime::blocking::pool::Shared>",
};

int lib_tokio_parked(lib_tokio_name_fn fn, void *ctx, size_t m)
{
	for (size_t k = 0; k < m; k++) {
		const char *sym = fn(ctx, k);

		for (size_t i = 0; i < sizeof(parks) / sizeof(*parks); i++)
			if (starts(sym, parks[i]))
				return 1;
	}
	return 0;
}
