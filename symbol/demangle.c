// SPDX-License-Identifier: MIT
/*
 * demangle.c - C++ and Rust symbol names through libiberty.
 *
 * libiberty's cplus_demangle() with DMGL_AUTO tries Rust first (legacy
 * "_ZN...17h<hash>E" names come out without the hash, v0 "_R" names are
 * understood) and then the Itanium C++ ABI.
 */
#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symbolize.h"

/* A legacy Rust name that libiberty took for C++ (it rejects some escapes
 * as Rust) still ends in "::h" and 16 hex digits: drop that hash. */
static void strip_rust_hash(char *s)
{
	size_t i, len = strlen(s);
	char *h;

	if (len < 19)
		return;
	h = s + len - 19;
	if (memcmp(h, "::h", 3))
		return;
	for (i = 3; i < 19; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return;
	*h = '\0';
}

char *symbol_demangle(const char *sym)
{
	char *out;

	if (!sym || sym[0] != '_' || (sym[1] != 'Z' && sym[1] != 'R'))
		return NULL;
	out = cplus_demangle(sym, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (out && sym[1] == 'Z' && strstr(sym, "17h"))
		strip_rust_hash(out);
	return out;
}
