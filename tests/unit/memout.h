/* SPDX-License-Identifier: MIT */
/*
 * memout.h - the memory stream a test hands to code that prints: `out`,
 * whose text so far is `buf` (`buflen` bytes), read back with output().
 * A suite opens it in its .init with memout_open() and closes it in its
 * .fini with memout_close() (view_fixture.h does both).
 */
#ifndef D9_MEMOUT_H
#define D9_MEMOUT_H

#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

static char *buf;
static size_t buflen;
static FILE *out;

static inline void memout_open(void)
{
	buf = NULL;
	out = open_memstream(&buf, &buflen);
	cr_assert(out);
}

static inline void memout_close(void)
{
	if (out)
		fclose(out);
	out = NULL;
	free(buf);
	buf = NULL;
}

/* What was written to out so far. */
static inline const char *output(void)
{
	fflush(out);
	return buf ? buf : "";
}

#endif
