/* SPDX-License-Identifier: MIT */
/*
 * hot.h - the program every layout in tests/e2e/layouts.sh is built from:
 * a hot leaf without a frame, called through a caller with one.
 */
#ifndef LAYOUTS_HOT_H
#define LAYOUTS_HOT_H
#include <stdint.h>

/* no inlining, and with gcc no cloning either (a ".constprop.0" clone
 * would carry another name than the one the test looks for) */
#if defined(__clang__)
#define HOT_NOINLINE __attribute__((noinline))
#else
#define HOT_NOINLINE __attribute__((noinline, noclone))
#endif

/* A pure loop over a small static array (FNV-1a over a table, 64k steps,
 * about 0.1 ms): no calls, no stack, so gcc -O2 -fno-omit-frame-pointer
 * gives it no frame setup. */
uint32_t layout_leaf(uint32_t h);
/* Calls layout_leaf @n times; has a frame. */
uint32_t layout_caller(uint32_t seed, unsigned n);

#endif
