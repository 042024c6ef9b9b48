/* SPDX-License-Identifier: MIT */
/*
 * inline.h - the functions inlined at an address, from the DWARF inline
 * scopes; internal to symbol/ (libdw types appear only there).
 */
#ifndef D9_INLINE_H
#define D9_INLINE_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

#include "trace/trace.h"

/* Deepest DIE nesting followed below a function (or a unit) down to the
 * address; code nested deeper is read as if it were at this depth. */
#define SYMBOL_INLINE_MAX_DEPTH 256

/* The code ranges of one module's concrete functions (DW_TAG_subprogram
 * DIEs with addresses), sorted: what makes a lookup cost a binary search
 * and a walk down one function instead of a walk of its whole unit (a
 * Rust crate is one unit of millions of DIEs). */
struct inline_index;

/*
 * The functions inlined at address @addr of @mod, innermost first: the
 * function whose code is at @addr, then the function it was inlined into,
 * and so on, up to but not including the out-of-line function holding
 * @addr (the DW_TAG_subprogram: what the ELF symbol already names; for an
 * out-of-line copy of an inline function, foo.constprop.0, that copy).
 *
 * @addr is in @mod's Dwfl address space; for a module reported at its
 * link-time addresses (dwfl_report_elf(..., base 0, add_p_vaddr true):
 * bias 0, as the symbolizer does) that is the link-time address. For a
 * return address, pass the address of the call instruction (ra - 1): its
 * inline scopes are those of the call site.
 *
 * @index: the module's index, built by the first call (*@index NULL: one
 * pass over every unit's top-level DIEs, namespaces and types) and kept
 * by the caller for the next calls on @mod; free it with
 * inline_index__free() before dwfl_end(). A NULL @index walks the unit
 * holding @addr on every call instead (no state; slow on big units).
 * Units of split DWARF (-gsplit-dwarf: .dwo files) and of partial units
 * are read; nested functions (GNU C, Ada, Fortran) are not found.
 *
 * Writes at most @max names into @names and returns how many it wrote;
 * deeper chains keep their innermost @max. A name is the DW_AT_linkage_name
 * (mangled: demangle it like a symbol-table name) found through the
 * DW_AT_abstract_origin and DW_AT_specification links, else the DW_AT_name,
 * else "[unnamed inline]"; never NULL. The strings are libdw's, valid until
 * the Dwfl is ended (dwfl_end()).
 *
 * Returns 0 when @addr is in no inlined code or in no function the DWARF
 * describes, and when @mod has no DWARF: libdwfl then looks for separate
 * debug information (the Dwfl's find_debuginfo callback) once, and the
 * index is empty, so later calls cost nothing. -EINVAL for a NULL @mod, or
 * NULL @names with @max > 0; -ENOMEM if the index cannot be built
 * (*@index stays NULL); -EBADMSG when libdw cannot read the DIEs on the way
 * down to @addr (corrupt DWARF). A unit that is corrupt further on is
 * indexed up to that point.
 * Not thread-safe on one Dwfl (libdw's lazy caches). The walk keeps its
 * path on the stack: about 10 KiB.
 */
int symbol__inline_chain(Dwfl_Module *mod, struct inline_index **index, uint64_t addr,
			 const char **names, unsigned int max);

/* symbol__inline_chain() that also gives, in @sites (room for @max; may be
 * NULL), where each inlined function was called from (DW_AT_call_file and
 * DW_AT_call_line: a line of the function it was inlined into) and where
 * it begins (DW_AT_decl_line), and in *@start_line (may be NULL) where the
 * out-of-line function holding @addr begins; NULL/0 where the DWARF does
 * not say. The file names are libdw's, valid until dwfl_end(). */
int symbol__inline_sites(Dwfl_Module *mod, struct inline_index **index, uint64_t addr,
			 const char **names, struct trace_inline_src *sites,
			 unsigned int max, uint32_t *start_line);

/* Free an index (NULL is a no-op); before its module's dwfl_end(). */
void inline_index__free(struct inline_index *index);

#endif /* D9_INLINE_H */
