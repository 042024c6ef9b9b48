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

/* ---- maps text, and a symbolizer of no process (tests, fuzzing) ------ */

/* One line of /proc/PID/maps: "start-end perms offset major:minor inode
 * path" (addresses, offset and device in hex). */
struct symbol_maps_line {
	uint64_t start, end, pgoff;
	uint64_t dev; /* makedev(major, minor) */
	uint64_t ino;
	const char *path; /* inside the line: the rest of it, "" if none */
};

/* Parse @line (NUL-terminated, without its '\n') into *@out. Returns 0
 * for a mapping the symbolizer keeps (executable, and of a file or the
 * vDSO), -ENOENT for one it skips (*@out is set: not executable,
 * anonymous, [vsyscall], ...), -EINVAL for a line that does not parse
 * (*@out untouched). Reads nothing but @line. */
int symbol_maps_line(const char *line, struct symbol_maps_line *out);

/* The mappings of /proc/PID/maps text @buf into @s: each line that
 * symbol_maps_line() keeps, through symbolizer__add_mapping() (one that
 * refuses it, e.g. a path of PATH_MAX bytes or more, is skipped). @buf is
 * @len bytes followed by a NUL, and is modified: lines are cut in place.
 * 0 or -ENOMEM (the mappings before the failure are kept). */
struct symbolizer;
int symbolizer_parse_maps(struct symbolizer *s, char *buf, size_t len);

/* A symbolizer of no process, to be given mappings by
 * symbolizer_parse_maps() or symbolizer__add_mapping(): it reads nothing
 * at creation, opens no file (every module is unreadable, "not opened":
 * a user address resolves to its module and file offset, never a name,
 * and unwinding finds no CFI), never re-reads maps nor a perf map
 * (symbolizer__refresh returns -ESRCH) and costs one allocation. Kernel
 * addresses go through @ksyms, borrowed: it must outlive the symbolizer
 * (NULL: they stay unresolved). 0, or -ENOMEM with *@out = NULL. */
struct kallsyms;
int symbolizer__new_offline(const struct kallsyms *ksyms, struct symbolizer **out);

/* unwind.c's cache of frame rules by pc, kept in the symbolizer (freed
 * with it), and the mappings' generation it is valid for (*@gen). */
struct unwind_cache;
struct unwind_cache **symbolizer_ucache(struct symbolizer *s, uint64_t *gen);

#endif /* D9_SYMBOLIZE_INT_H */
