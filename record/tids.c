// SPDX-License-Identifier: MIT
/*
 * tids.c - the target's thread ids (tids.h): a sorted array.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "record/proc.h"
#include "record/tids.h"

struct tids {
	pid_t pid;
	int inner;
	uint32_t *v;
	size_t n, cap;
};

int tids__new(pid_t pid, int inner, struct tids **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->pid = pid;
	(*out)->inner = inner;
	return 0;
}

void tids__free(struct tids *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

/* Where @tid is or would go. */
static size_t find(const struct tids *t, uint32_t tid)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void tids__add(struct tids *t, uint32_t tid)
{
	size_t at = find(t, tid);

	if (!tid || (at < t->n && t->v[at] == tid) || t->n >= TIDS_MAX)
		return;
	if (LIB_GROW(t->v, t->cap, t->n + 1))
		return; /* looked up in /proc next time */
	memmove(&t->v[at + 1], &t->v[at], (t->n - at) * sizeof(*t->v));
	t->v[at] = tid;
	t->n++;
}

int tids__is_target(struct tids *t, uint32_t tid)
{
	size_t at = find(t, tid);

	if (at < t->n && t->v[at] == tid)
		return 1;
	if (tid > INT32_MAX || !proc_has_thread(t->pid, (pid_t)tid, t->inner))
		return 0;
	tids__add(t, tid);
	return 1;
}
