/* SPDX-License-Identifier: MIT */
/*
 * writer.h - a trace writer for a test that writes a trace: new_writer()
 * returns one on @fd, or the test fails there.
 */
#ifndef D9_TEST_WRITER_H
#define D9_TEST_WRITER_H

#include <criterion/criterion.h>

#include "trace/trace.h"

static inline struct trace_writer *new_writer(int fd)
{
	struct trace_writer *w = NULL;

	cr_assert_eq(trace_writer__new(fd, &w), 0, "trace_writer__new(%d)", fd);
	return w;
}

#endif
