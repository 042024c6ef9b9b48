/* SPDX-License-Identifier: MIT */
/*
 * spanstate.h - the application's spans open at any instant, from the span
 * records as they are written (internal to record/).
 *
 * A segment read alone must know the spans created before it that are
 * still open in it, and the ones entered then (trace.h: SPAN_STATE chunk):
 * this keeps, per open span, its NEW record, its first SPANSTATE_FIELDS
 * FIELD records and its enters not exited yet, each at its own time; a
 * CLOSE forgets it, a NEW of the same id replaces it (ids are reused).
 * Memory follows what is open: at most SPANSTATE_MAX spans (more are
 * refused and counted), SPANSTATE_ENTERS enters each.
 */
#ifndef D9_SPANSTATE_H
#define D9_SPANSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

#define SPANSTATE_MAX	 65536
#define SPANSTATE_FIELDS 4
#define SPANSTATE_ENTERS 8

struct spanstate;

int spanstate__new(struct spanstate **out);
void spanstate__free(struct spanstate *ss);
/* Take span record @s (strings copied; events are ignored). 0 or -ENOMEM
 * (then a later segment may miss the span). */
int spanstate__feed(struct spanstate *ss, const struct trace_span *s);
/* What is open now, as span records (each span's NEW and FIELDs, then its
 * enters), in *@out (owned by @ss, valid until the next call); how many. */
size_t spanstate__open(struct spanstate *ss, const struct trace_span **out);
/* Spans refused for want of room (and fields and enters, past
 * spanstate__set_max_bytes()). */
uint64_t spanstate__refused(const struct spanstate *ss);
/* At most @max bytes of open spans, about as a SPAN_STATE chunk holds
 * them (0: no bound but SPANSTATE_MAX): a flight recorder's segments
 * each start with them. */
void spanstate__set_max_bytes(struct spanstate *ss, size_t max);
/* Spans open now that spanstate__open() lacks (refused, not closed). */
size_t spanstate__left_out(const struct spanstate *ss);

#endif /* D9_SPANSTATE_H */
