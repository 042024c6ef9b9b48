// SPDX-License-Identifier: MIT
/*
 * msg.c - what every command says and takes: its messages on stderr
 * (error(), warning(), info(), usage errors), every one shown through
 * text_put(), and the option values they share (numbers, sizes, seconds,
 * one word of a list). It calls nothing else in cli/.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "lib/text.h"

/* One message line. Messages name paths and what the target is called
 * (its comm, files named after it, what a trace says): all of it shown
 * through text_put(), so no control or invalid UTF-8 reaches the
 * terminal of the root that runs the recorder. */
static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char small[1024], *m = small;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n >= (int)sizeof(small) && (m = malloc((size_t)n + 1)))
		vsnprintf(m, (size_t)n + 1, fmt, ap);
	else if (n >= (int)sizeof(small))
		m = small; /* cut, rather than nothing */
	fprintf(stderr, "d9prof: %s", prefix);
	text_put(stderr, n < 0 ? fmt : m);
	fputc('\n', stderr);
	if (m != small)
		free(m);
}

void cli_msg(const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(prefix, fmt, ap);
	va_end(ap);
}

int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	fprintf(stderr, "try 'd9prof %s--help'\n", cmd ? cmd : "");
	return EXIT_USAGE;
}

int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		end++;
		break;
	case 'M':
	case 'm':
		shift = 20;
		end++;
		break;
	case 'G':
	case 'g':
		shift = 30;
		end++;
		break;
	case 'T':
	case 't':
		shift = 40;
		end++;
		break;
	}
	if (shift && (*end == 'i' || *end == 'I'))
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	double v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || (*end && strcmp(end, "s")) || !isfinite(v) || v <= 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_word(const char *s, const char *const *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (words[i] && !strcmp(s, words[i]))
			return (int)i;
	return -EINVAL;
}

int word_option(const char *cmd, const char *what, const char *arg,
		const char *const *words, size_t n, int *out)
{
	char want[256];
	size_t len = 0, left = 0, i;

	*out = parse_word(arg, words, n);
	if (*out >= 0)
		return 0;
	for (i = 0; i < n; i++)
		left += words[i] != NULL;
	for (i = 0; i < n && len < sizeof(want); i++)
		if (words[i])
			len += (size_t)snprintf(want + len, sizeof(want) - len, "%s%s",
						words[i],
						--left > 1 ? ", "
						: left	   ? " or "
							   : "");
	return usage_error(cmd, "bad %s '%s': want %s", what, arg, want);
}
