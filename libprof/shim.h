/* SPDX-License-Identifier: MIT */
/*
 * shim.h - internals of the runtime shim, for its tests. Not installed; the
 * symbols are hidden in libd9prof.so (linkable from libd9prof.a).
 */
#ifndef D9_SHIM_H
#define D9_SHIM_H

#include <stddef.h>

/* The calling process's segment (initialising the shim if needed), or NULL
 * if the shim could not set itself up. */
void *d9__segment(void);
/* Its size in bytes (D9_SEG_SIZE), 0 without a segment. */
size_t d9__segment_size(void);
/* The memfd that backs it (the shim keeps it open), -1 without a segment. */
int d9__segment_fd(void);

#endif /* D9_SHIM_H */
