// SPDX-License-Identifier: MIT
/*
 * trace_rust.c - full names for the inlined Rust functions that
 * line-tables-only DWARF names by their last segment (lib/rust_names.h),
 * read from the frames around them in the trace's stacks. The names the
 * DWARF gave stay in trace_frame.sym (what the recorder matched, what
 * Tokio's machinery is recognised by); the full ones are .full, which the
 * views show.
 *
 * A body ("{async_fn#0}") takes the path of the future or closure type
 * polled or called in the frames toward the root, up to the body that
 * calls it ("poll<app::handle::{async_fn_env#0}>"); else of what it
 * defines in the frames it calls, up to the next body
 * ("<app::f::{{closure}}::Sleep as Future>::poll"). A frame is named once,
 * by the first stack that says; the same code has the same callers in
 * every stack (a generic function's copies are one per type). Any other
 * short name (std's "rotate_left<u64>", a crate's helper) takes the crate
 * and module of its source file. Names no stack qualifies stay as they
 * are.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/rust_names.h"
#include "trace/reader_int.h"

/* how far a stack is searched from a body, each way */
#define RUST_REACH 64
/* stacks searched for one body at most (its callers are the same in
 * each, its callees the leaf's: a few stacks say what they can) */
#define RUST_TRIES 16
/* a trace's names are untrusted: a longer one is read as saying nothing,
 * and the bytes read in all for bodies are bounded (a second or so) */
#define RUST_NAME_MAX 4096
#define RUST_SCAN_MAX (512ull << 20)

static const char *name_of(const struct trace *t, uint32_t f)
{
	const struct trace_frame *x = &t->frames[f];

	return x->full ? x->full : x->sym ? x->sym : "";
}

/* 1 if @s has a path at its top level ("a::f", "<X as T>::f") */
static int qualified(const char *s)
{
	int d = 0;

	for (const char *p = s; *p; p++)
		if (*p == '<')
			d++;
		else if (*p == '>' && d && !(p > s && p[-1] == '-'))
			d--;
		else if (!d && p[0] == ':' && p[1] == ':')
			return 1;
	return 0;
}

static int set_full(struct trace *t, uint32_t f, const char *s)
{
	char *c = trace_arena_strdup(t->arena, (const uint8_t *)s, strlen(s));

	if (!c)
		return -1;
	t->frames[f].full = c;
	return 0;
}

/* The name of frame @f to read, or NULL where it is too long to (what is
 * read is taken off *@left) */
static const char *readable(const struct trace *t, uint32_t f, uint64_t *left)
{
	const char *s = name_of(t, f);
	size_t n = strnlen(s, RUST_NAME_MAX + 1);

	if (n > RUST_NAME_MAX)
		return NULL;
	*left = *left > 2 * n ? *left - 2 * n : 0;
	return s;
}

/* Body frame fr[i] of a stack of @m frames (leaf first) by its
 * neighbours: 1 and its name in @out, else 0. */
static int body_name(const struct trace *t, const uint32_t *fr, size_t m, size_t i,
		     const struct lib_rust_body *b, char *out, size_t len, uint64_t *left)
{
	size_t j, end = i + RUST_REACH < m ? i + RUST_REACH : m;
	const char *s;

	for (j = i + 1; j < end && *left; j++) {
		if (fr[j] >= t->nframes || !(s = readable(t, fr[j], left)))
			continue;
		if (lib_rust_body_from_env(s, b, out, len))
			return 1;
		if (lib_rust_is_body(s))
			break;
	}
	for (j = i; j-- > 0 && i - j <= RUST_REACH && *left;) {
		if (fr[j] >= t->nframes || !(s = readable(t, fr[j], left)))
			continue;
		if (lib_rust_body_from_inner(s, b, out, len))
			return 1;
		if (lib_rust_is_body(s))
			break;
	}
	return 0;
}

int trace_name_rust(struct reader *r)
{
	struct trace *t = r->t;
	uint8_t *tries; /* a body's stacks yet to search, 0 when named */
	char buf[1024], mod[512];
	size_t i, k, nbody = 0;
	uint64_t left = RUST_SCAN_MAX;
	int err = 0;

	tries = calloc(t->nframes ? t->nframes : 1, 1);
	if (!tries)
		return trace_nomem(r);
	for (k = 0; k < t->nframes; k++) {
		struct lib_rust_body b;

		if (t->frames[k].inlined && lib_rust_body(t->frames[k].sym, &b)) {
			tries[k] = RUST_TRIES;
			nbody++;
		}
	}
	for (i = 0; i < t->nstacks && nbody && left && !err; i++) {
		const uint32_t *fr = t->stack_frames + t->stack_off[i];
		size_t m = t->stack_off[i + 1] - t->stack_off[i];

		/* root to leaf: a body's callers are named before it */
		for (k = m; k-- > 0 && !err;) {
			struct lib_rust_body b;

			if (fr[k] >= t->nframes || !tries[fr[k]])
				continue;
			lib_rust_body(t->frames[fr[k]].sym, &b);
			if (body_name(t, fr, m, k, &b, buf, sizeof(buf), &left)) {
				err = set_full(t, fr[k], buf);
				tries[fr[k]] = 1;
			}
			if (!--tries[fr[k]])
				nbody--;
		}
	}
	for (k = 0; k < t->nframes && !err; k++) {
		struct trace_frame *x = &t->frames[k];
		size_t n;

		if (!x->inlined || x->full || !x->sym || qualified(x->sym) ||
		    !lib_rust_module(x->file, mod, sizeof(mod)))
			continue;
		n = strlen(mod);
		if (n + 2 + strlen(x->sym) >= sizeof(buf))
			continue;
		memcpy(buf, mod, n);
		memcpy(buf + n, "::", 2);
		strcpy(buf + n + 2, x->sym);
		err = set_full(t, (uint32_t)k, buf);
	}
	free(tries);
	return err ? trace_nomem(r) : 0;
}
