/* SPDX-License-Identifier: MIT */
/*
 * banned.h - calls the tree does not make outside lib/, kallsyms/ and the
 * shim (git's banned.h): arrays grow through LIB_GROW() (lib/grow.h),
 * which checks for overflow and is tested once, not by hand.
 *
 * The Makefile puts it in front of every object of the core and the cli
 * (-include), after <stdlib.h> has declared what it bans: a use is then
 * a call to an undeclared function, which those objects compile as an
 * error (-Werror=implicit-function-declaration).
 */
#ifndef D9_LIB_BANNED_H
#define D9_LIB_BANNED_H

#include <stdlib.h>

#define BANNED(func) sorry_##func##_is_banned_grow_with_LIB_GROW

#undef realloc
#define realloc(p, n) BANNED(realloc)(p, n)
#undef reallocarray
#define reallocarray(p, n, s) BANNED(reallocarray)(p, n, s)

#endif /* D9_LIB_BANNED_H */
