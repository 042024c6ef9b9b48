/* SPDX-License-Identifier: MIT */
/*
 * s3_int.h - private to s3.c and s3_config.c, the two files that hold
 * secrets: the small string helpers both use. No other file includes it.
 * ASCII only, whatever the locale says.
 */
#ifndef D9_STORE_S3_INT_H
#define D9_STORE_S3_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/text.h"

/* @s made safe to quote in a message (text_clean()), cut to fit @buf. */
static inline const char *shown(const char *s, char *buf, size_t len)
{
	text_clean(s ? s : "", buf, len);
	return buf;
}

static inline bool lower_digit(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* The variable @name, NULL if unset or empty */
static inline const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* @src whole into @dst, or false (and nothing copied) if it does not fit */
static inline bool copy(char *dst, size_t len, const char *src)
{
	size_t n = strlen(src);

	if (n >= len)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

#endif /* D9_STORE_S3_INT_H */
