/* SPDX-License-Identifier: MIT */
/*
 * symbolize_int.h - what the unwinder (unwind.c) needs from the
 * symbolizer's mappings; internal to symbol/, the only place libdw types
 * may appear.
 */
#ifndef D9_SYMBOLIZE_INT_H
#define D9_SYMBOLIZE_INT_H

#include <elfutils/libdw.h>
#include <stdint.h>

#include "symbol/symbolize.h"

struct symbol_cfi {
	uint32_t obj;	  /* the object (file) index, for comparisons;
			   * UINT32_MAX if no mapping holds the address
			   * (set even when the call fails) */
	Dwarf_CFI *eh;	  /* .eh_frame, NULL if none */
	uint64_t eh_bias; /* runtime address - address in @eh */
	Dwarf_CFI *debug; /* .debug_frame, looked up only without @eh */
	uint64_t debug_bias;
};

/* The CFI of the object mapped at runtime address @addr (owned by the
 * symbolizer). 0, or -ENOENT when no mapping, file or CFI covers it. */
int symbolizer__cfi_at(struct symbolizer *s, uint64_t addr, struct symbol_cfi *out);

#endif /* D9_SYMBOLIZE_INT_H */
