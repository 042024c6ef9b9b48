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

/* One PT_LOAD of an object, as the program header has it. */
struct symbol_load {
	uint64_t offset; /* p_offset */
	uint64_t vaddr;	 /* p_vaddr */
	uint64_t filesz; /* p_filesz */
	uint64_t memsz;	 /* p_memsz */
	uint32_t flags;	 /* p_flags (PF_X, PF_W, PF_R) */
};

/*
 * The link-time address of file offset @off through the segments @loads
 * (@n of them, in any order): the segment whose file bytes [p_offset,
 * p_offset + p_filesz) hold @off maps it to p_vaddr + (@off - p_offset).
 * A runtime address turns into a file offset through its mapping (start,
 * pgoff from /proc/PID/maps: off = addr - start + pgoff), so this is the
 * whole address translation, whatever the layout: ET_EXEC, PIE, shared
 * objects, prelinked, static-pie, and lld's packing where the read-only
 * and executable segments share a file page (p_vaddr != p_offset, and the
 * executable mapping's pgoff lies inside the read-only segment). Where two
 * segments claim @off (malformed overlaps), the executable one wins.
 * Returns 0 with *@vaddr set, or -ENOENT if no segment holds @off (padding
 * between segments, or a mapping the file's headers do not describe).
 */
int symbol_load_vaddr(const struct symbol_load *loads, size_t n, uint64_t off,
		      uint64_t *vaddr);

/* The CFI of the object mapped at runtime address @addr (owned by the
 * symbolizer). 0, or -ENOENT when no mapping, file or CFI covers it. */
int symbolizer__cfi_at(struct symbolizer *s, uint64_t addr, struct symbol_cfi *out);

/* The mappings of /proc/PID/maps text @buf (@len bytes, modified: lines
 * are cut in place) into @s: executable files and the vDSO. 0 or
 * -ENOMEM. (symbolize.c; a fuzz target drives it.) */
struct symbolizer;
int symbolizer_parse_maps(struct symbolizer *s, char *buf, size_t len);

#endif /* D9_SYMBOLIZE_INT_H */
