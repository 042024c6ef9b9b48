/* SPDX-License-Identifier: MIT */
/*
 * symcache.h - each address symbolized once per recording, however many
 * trace segments name it (internal to record/).
 *
 * A segmented recording (flight recorder, rotation) writes every segment
 * with its own symbols (trace.h), so the same hot addresses come up for
 * resolution again at every seal. This remembers each answer: a
 * trace_resolve_fn in front of another one. Names are interned once. The
 * memory follows the distinct addresses the target ran (its code), not the
 * recording's length.
 */
#ifndef D9_SYMCACHE_H
#define D9_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct symcache;

/* Answers come from @resolve(@ctx, ...) the first time. 0 or -ENOMEM. */
int symcache__new(trace_resolve_fn resolve, void *ctx, struct symcache **out);
void symcache__free(struct symcache *c);
/* A trace_resolve_fn: @c is the struct symcache. An answer (its strings,
 * inl and inl_src) is valid until the next call. */
int symcache__resolve(void *c, uint64_t addr, struct trace_frame *out);
/* Addresses resolved through the underlying function, and answered. */
void symcache__stats(const struct symcache *c, uint64_t *resolved, uint64_t *lookups);

#endif /* D9_SYMCACHE_H */
