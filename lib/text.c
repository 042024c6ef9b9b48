/* SPDX-License-Identifier: MIT */
/*
 * text.c - the UTF-8 decoder, the cleaner of shown text, sizes and
 * durations as people read them (text.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/text.h"

size_t text_utf8(const char *s, size_t n, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
	uint32_t c;
	size_t len;

	if (!n)
		return 0;
	c = p[0];
	if (c < 0x80) {
		len = 1;
	} else if (c < 0xc2) { /* a continuation byte, or C0/C1: overlong */
		return 0;
	} else if (c < 0xe0) {
		len = 2;
		c &= 0x1f;
	} else if (c < 0xf0) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong below U+0800 */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates U+D800..U+DFFF */
		c &= 0x0f;
	} else if (c < 0xf5) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong below U+10000 */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
		c &= 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if (i >= n || p[i] < lo || p[i] > hi)
			return 0;
		c = c << 6 | (p[i] & 0x3fu);
		lo = 0x80;
		hi = 0xbf;
	}
	if (cp)
		*cp = c;
	return len;
}

size_t text_chars(const char *s)
{
	size_t n = 0, l;

	for (; *s; s += l ? l : 1, n++)
		l = text_utf8(s, 4, NULL);
	return n;
}

int text_printable(uint32_t cp)
{
	if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
		return 0;
	if (cp < 0x61c)
		return 1;
	return !(cp == 0x61c || cp == 0x200e || cp == 0x200f || cp == 0x2028 ||
		 cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
		 (cp >= 0x2066 && cp <= 0x2069));
}

/* The next step over @s (not at its NUL): the bytes of a character shown
 * as it is, returned (*@used of them); or 0, and *@used bytes to replace
 * with one TEXT_REPLACEMENT. */
static size_t step(const char *s, size_t *used)
{
	uint32_t cp;
	size_t k = text_utf8(s, 4, &cp);

	*used = k ? k : 1;
	return k && text_printable(cp) ? k : 0;
}

size_t text_clean(const char *s, char *buf, size_t len)
{
	size_t i = 0, o = 0, k, used;

	if (!len)
		return 0;
	while (s[i]) {
		k = step(s + i, &used);
		if (o + (k ? k : 1) >= len)
			break;
		/* o <= i: in place, the write never passes the read */
		if (k)
			memmove(buf + o, s + i, k);
		else
			buf[o] = TEXT_REPLACEMENT;
		o += k ? k : 1;
		i += used;
	}
	buf[o] = '\0';
	return o;
}

void text_put(FILE *out, const char *s)
{
	size_t i = 0, k, used;

	if (!s)
		return;
	while (s[i]) {
		/* runs of shown characters in one write */
		size_t run = 0;

		while (s[i + run] && (k = step(s + i + run, &used)))
			run += k;
		if (run) {
			fwrite(s + i, 1, run, out);
			i += run;
			continue;
		}
		step(s + i, &used);
		putc(TEXT_REPLACEMENT, out);
		i += used;
	}
}

int text_shell_word(const char *s)
{
	return *s && !s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				  "0123456789_.:/-=,+@%")];
}

int text_shell_arg(const char *s, char *buf, size_t len, size_t *at)
{
	size_t n = 0, k = *at;

	if (text_shell_word(s)) {
		n = strlen(s);
		if (k + n >= len)
			return -1;
		memcpy(buf + k, s, n + 1);
		*at = k + n;
		return 0;
	}
	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	if (k + n + 2 >= len)
		return -1;
	buf[k++] = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(buf + k, "'\\''", 4);
			k += 4;
		} else {
			buf[k++] = *c;
		}
	}
	buf[k++] = '\'';
	buf[k] = '\0';
	*at = k;
	return 0;
}

char *text_size(double bytes, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB"};
	int i = 0;

	while (bytes >= 1024 && i < 3) {
		bytes /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", bytes, unit[i]);
	return buf;
}

char *text_duration(uint64_t ns, char *buf, size_t len)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	double v;
	int u = 1;

	if (ns < 1000) {
		snprintf(buf, len, "%" PRIu64 "ns", ns);
		return buf;
	}
	/* choose the unit after rounding, so 999.7us prints as 1.00ms */
	v = ns / 1000.0;
	while (u < 3 && v >= 999.5) {
		v /= 1000;
		u++;
	}
	if (v < 9.995)
		snprintf(buf, len, "%.2f%s", v, unit[u]);
	else if (v < 99.95)
		snprintf(buf, len, "%.1f%s", v, unit[u]);
	else
		snprintf(buf, len, "%.0f%s", v, unit[u]);
	return buf;
}

void text_say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

void text_name_component(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; s && *s && n + 1 < len; s++, n++)
		buf[n] = text_name_char(*s) && (*s != '.' || n) ? *s : '_';
	buf[n] = '\0';
	if (!n)
		snprintf(buf, len, "unknown");
}
