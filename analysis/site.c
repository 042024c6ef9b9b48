// SPDX-License-Identifier: MIT
/*
 * site.c - the one frame a view names for a stack: the application's own
 * frame, with the call it made into the system under it.
 *
 * The rule (one place; docs in d9prof(1), "The application's frame"): a
 * frame is the system's when it is the kernel's, in the C library, its
 * loader, the vDSO, the C++ and gcc runtimes or the d9prof shim (by
 * module), or, by its demangled name, in Rust's std, core or alloc, the
 * async runtime's own crates (tokio, mio, futures' executors) or the
 * d9prof crate, or glibc's internal names. Everything else is the
 * application's.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/labels.h"
#include "analysis/stacks.h"

/* Modules of the system, by the start of their file name. */
static const char *const sys_modules[] = {
	"libc.so",     "libc-2.",      "libpthread.so", "libpthread-",	"ld-linux",
	"ld-2.",       "ld.so",	       "linux-vdso",	"[vdso]",	"libm.so",
	"libm-2.",     "libdl.so",     "libdl-2.",	"librt.so",	"librt-2.",
	"libgcc_s.so", "libstdc++.so", "libd9prof.so",	"libresolv.so", "libunwind.so",
};

/* Functions of the system, by the start of their (demangled) name; a
 * trait impl "<T as Trait>::f" is judged by T. */
static const char *const sys_names[] = {
	"std::",
	"core::",
	"alloc::",
	"tokio::",
	"mio::",
	"d9prof::",
	"futures_executor::",
	"futures_util::",
	"__GI_",
	"__libc_",
	"__pthread",
	"__clock_",
	"__nanosleep",
	"__rust",
	"rust_begin_unwind",
	"d9_",
};

/* ... and by the whole name: where threads and processes start */
static const char *const sys_whole[] = {
	"_start", "clone", "clone3", "__clone", "__clone3", "start_thread",
};

/* Rust's primitive types: their methods ("<u64>::wrapping_mul", "<[T]>::
 * iter", "<str as core::fmt::Display>::fmt") are core's. */
static const char *const primitives[] = {
	"u8",  "u16",  "u32",	"u64", "u128", "usize", "i8",	"i16", "i32",
	"i64", "i128", "isize", "f32", "f64",  "bool",	"char", "str",
};

static int is_primitive(const char *s)
{
	if (*s == '[' || *s == '(' || !strncmp(s, "*const ", 7) ||
	    !strncmp(s, "*mut ", 5))
		return 1;
	for (size_t i = 0; i < sizeof(primitives) / sizeof(*primitives); i++) {
		size_t n = strlen(primitives[i]);

		if (!strncmp(s, primitives[i], n) && (s[n] == '>' || s[n] == ' '))
			return 1;
	}
	return 0;
}

static int starts(const char *s, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strncmp(s, v[i], strlen(v[i])))
			return 1;
	return 0;
}

#define NV(v) (sizeof(v) / sizeof(*(v)))

int analysis_frame_is_shim(const struct trace *t, uint32_t id)
{
	const struct trace_frame *f;
	const char *m;

	/* (not an inlined frame: where a call returns into a marker's
	 * inline gate, "d9_poll_end [inlined]" is the caller's own code) */
	if (id >= t->nframes || t->frames[id].kernel || t->frames[id].inlined)
		return 0;
	f = &t->frames[id];
	if (f->module) {
		m = strrchr(f->module, '/');
		if (!strncmp(m ? m + 1 : f->module, "libd9prof.so", 12))
			return 1;
	}
	if (f->sym && !strncmp(f->sym, "d9_", 3))
		return 1;
	/* linked in: its helpers have plain names, their source says */
	return f->file &&
	       (strstr(f->file, "libprof/shim") || strstr(f->file, "libprof/ctimer"));
}

int analysis_frame_is_system(const struct trace *t, uint32_t id)
{
	const struct trace_frame *f;
	const char *m, *s;

	if (id >= t->nframes)
		return 1;
	f = &t->frames[id];
	if (f->kernel)
		return 1;
	if (f->module) {
		m = strrchr(f->module, '/');
		m = m ? m + 1 : f->module;
		if (starts(m, sys_modules, NV(sys_modules)))
			return 1;
	}
	s = f->full ? f->full : f->sym;
	if (!s)
		return 0;
	for (size_t i = 0; i < NV(sys_whole); i++)
		if (!strcmp(s, sys_whole[i]))
			return 1;
	if (*s == '<') {
		/* "<&mut dyn T as ...>", "<&[u8] as ...>": the type itself */
		s++;
		while (*s == '&')
			s++;
		if (!strncmp(s, "mut ", 4))
			s += 4;
		if (!strncmp(s, "dyn ", 4))
			s += 4;
		if (is_primitive(s))
			return 1;
	}
	return starts(s, sys_names, NV(sys_names));
}

/* Frames of stack @s (leaf first in the trace), or 0 frames if the id or
 * its bounds are bad. */
size_t analysis_stack_frames(const struct trace *t, uint32_t s, const uint32_t **fr)
{
	uint32_t a, b;

	if (s >= t->nstacks || !t->stack_off)
		return 0;
	a = t->stack_off[s];
	b = t->stack_off[s + 1];
	if (b < a || b > t->stack_off[t->nstacks])
		return 0;
	*fr = t->stack_frames + a;
	return b - a;
}

int analysis_site(const struct trace *t, uint32_t stack, int raw_leaf, int cpu,
		  uint32_t *frame, uint32_t *under)
{
	const uint32_t *fr = NULL;
	size_t m = analysis_stack_frames(t, stack, &fr), base, k;

	*under = UINT32_MAX;
	if (!m)
		return 0;
	if (raw_leaf && cpu) {
		*frame = fr[0];
		return 1;
	}
	/* the call into the kernel: the leaf-most user frame, else the leaf */
	for (base = 0; base < m && (fr[base] >= t->nframes || t->frames[fr[base]].kernel);
	     base++)
		;
	if (base == m)
		base = 0;
	*frame = fr[base];
	if (raw_leaf)
		return 1;
	for (k = base; k < m && analysis_frame_is_system(t, fr[k]); k++)
		;
	if (k == m || k == base)
		return 1; /* no application frame, or the call is its own */
	/* under it: the function the call is in, not what was inlined there */
	while (base + 1 < k && t->frames[fr[base]].inlined)
		base++;
	*frame = fr[k];
	*under = fr[base];
	return 1;
}

char *site_label(const struct trace *t, uint32_t frame, uint32_t under, char *buf,
		 size_t len)
{
	char a[256];

	if (under == UINT32_MAX || under == frame)
		return analysis_frame_label(t, frame, buf, len);
	analysis_frame_label(t, under, a, sizeof(a));
	snprintf(buf, len, "%s <- ", a);
	analysis_frame_label(t, frame, buf + strlen(buf), len - strlen(buf));
	return buf;
}
