/* SPDX-License-Identifier: MIT */
/*
 * label.c - how a frame is named in flamegraphs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"

/* Length of @s[0..n) cut back to whole UTF-8 characters, so a label cut to
 * fit the buffer never ends in half a character (which would make the SVG
 * invalid XML). */
static size_t utf8_cut(const char *s, size_t n)
{
	size_t i = n, back = 0;
	unsigned char c;
	size_t need;

	while (i > 0 && back < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80) {
		i--;
		back++;
	}
	if (i == 0)
		return n;
	c = (unsigned char)s[i - 1];
	if (c < 0x80)
		return n;
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	/* the lead byte plus its continuations all made it in */
	return back + 1 >= need ? n : i - 1;
}

char *frame_label(const struct trace *t, uint32_t id, char *buf, size_t len)
{
	const struct trace_frame *f;
	const char *suffix;
	size_t slen, room, n;
	int r;

	if (!buf || !len)
		return buf;
	if (!t || id >= t->nframes) {
		snprintf(buf, len, "[bad frame %" PRIu32 "]", id);
		return buf;
	}
	f = &t->frames[id];
	/* "_[k]" tells kernel apart, " [inlined]" code inlined into the frame
	 * below (perf --inline and dial9 mark them alike) */
	suffix = f->inlined ? " [inlined]" : f->kernel ? "_[k]" : "";
	slen = strlen(suffix);
	/* keep room for the suffix */
	room = len > slen + 1 ? len - slen : len;

	if (f->sym && *f->sym) {
		r = snprintf(buf, room, "%s", f->sym);
	} else if (f->module && *f->module) {
		const char *base = strrchr(f->module, '/');

		base = base && base[1] ? base + 1 : f->module;
		r = snprintf(buf, room, "%s+0x%" PRIx64, base, f->offset);
	} else {
		r = snprintf(buf, room, "0x%" PRIx64, f->addr);
	}
	n = r < 0 ? 0 : (size_t)r;
	if (n >= room) {
		n = utf8_cut(buf, room - 1);
		buf[n] = '\0';
	}
	/* ';' separates frames in folded output and newlines end lines;
	 * other control characters have no business in a name either */
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == ';')
			buf[i] = ':';
		else if (c < 0x20 || c == 0x7f)
			buf[i] = '?';
	}
	if (n + slen < len)
		memcpy(buf + n, suffix, slen + 1);
	return buf;
}
