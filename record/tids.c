// SPDX-License-Identifier: MIT
/*
 * tids.c - the target's thread ids (tids.h): a set, as a lib_map.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/map.h"
#include "record/proc.h"
#include "record/tids.h"

struct tids {
	pid_t pid;
	int inner;
	struct lib_map known; /* tid -> 1 */
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
	lib_map_release(&t->known);
	free(t);
}

void tids__add(struct tids *t, uint32_t tid)
{
	if (!tid || lib_map_find(&t->known, tid) || lib_map_count(&t->known) >= TIDS_MAX)
		return;
	/* (no memory: looked up in /proc next time) */
	lib_map_set(&t->known, tid, 1);
}

int tids__is_target(struct tids *t, uint32_t tid)
{
	if (lib_map_find(&t->known, tid))
		return 1;
	if (tid > INT32_MAX || !proc_has_thread(t->pid, (pid_t)tid, t->inner))
		return 0;
	tids__add(t, tid);
	return 1;
}
