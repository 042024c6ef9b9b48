/* SPDX-License-Identifier: MIT */
/*
 * view_fixture.h - what the tests of a view share: a synthetic trace T
 * (synth_trace.h) and what is built on it, J (join), OC (off-CPU) and D
 * (delays), NULL until a test builds them and freed after it; and `out`,
 * a memory stream the view writes to, read back with output()
 * (memout.h). A suite
 * takes them with TestSuite(NAME, .init = setup, .fini = teardown).
 */
#ifndef D9_VIEW_FIXTURE_H
#define D9_VIEW_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "tests/unit/memout.h"
#include "tests/unit/synth_trace.h"

static struct trace T;
static struct join *J;
static struct offcpu *OC;
static struct delays *D;

static void setup(void)
{
	memset(&T, 0, sizeof(T));
	J = NULL;
	OC = NULL;
	D = NULL;
	memout_open();
}

static void teardown(void)
{
	memout_close();
	delays__free(D);
	offcpu__free(OC);
	join__free(J);
	sy_free(&T);
}

#endif
