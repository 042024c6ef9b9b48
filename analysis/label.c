/* SPDX-License-Identifier: MIT */
/*
 * label.c - how a frame is named in flamegraphs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"

char *analysis_frame_label(const struct trace *t, uint32_t id, char *buf, size_t len)
{
	const struct trace_frame *f;
	const char *suffix;
	size_t slen, room, n;

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

	/* cleaned as every shown name (analysis_clean_name(): no control or
	 * invalid UTF-8, ';' separates folded frames), cut at whole
	 * characters so the SVG stays valid XML */
	if (f->full) {
		analysis_clean_name(f->full, buf, room);
	} else if (f->sym && *f->sym) {
		analysis_clean_name(f->sym, buf, room);
	} else if (f->module && *f->module) {
		const char *base = strrchr(f->module, '/');
		char off[24];
		size_t olen;

		base = base && base[1] ? base + 1 : f->module;
		olen = (size_t)snprintf(off, sizeof(off), "+0x%" PRIx64, f->offset);
		analysis_clean_name(base, buf, room > olen + 1 ? room - olen : 1);
		n = strlen(buf);
		snprintf(buf + n, room - n, "%s", off);
	} else {
		snprintf(buf, room, "0x%" PRIx64, f->addr);
	}
	n = strlen(buf);
	if (n + slen < len)
		memcpy(buf + n, suffix, slen + 1);
	return buf;
}
