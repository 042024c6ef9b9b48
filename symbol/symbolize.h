/* SPDX-License-Identifier: MIT */
/*
 * symbolize.h - turn instruction addresses of a process into names.
 *
 * User addresses are resolved with libdwfl (ELF symbol tables, .debug
 * files found by build-id under /usr/lib/debug/.build-id, by
 * .gnu_debuglink next to the file, in .debug/ or under /usr/lib/debug,
 * and MiniDebugInfo in .gnu_debugdata) against the process's mappings,
 * read from /proc/PID/maps and completed by PERF_RECORD_MMAP2-style
 * additions. An address becomes a file offset through its mapping, then a
 * link-time address through the file's program headers (any layout:
 * symbol_load_vaddr in symbolize_int.h). ELF files are opened through
 * /proc/PID/root so that a target in another mount namespace (a container)
 * resolves too; a file deleted or replaced on disk since it was mapped
 * (checked by inode) is read through /proc/PID/map_files/. Anonymous JIT
 * code is named from /tmp/perf-PID.map (perf's convention). Kernel
 * addresses go through a kallsyms snapshot. C++ and Rust names come out
 * demangled.
 *
 * Resolution works after the target has exited as long as its files are
 * still on disk (the mappings are kept in the symbolizer). The vDSO's
 * image is copied from the target when a mapping of it is learned; one
 * learned after the target has gone takes an image of the same length
 * read from it before (its vDSO before an exec), else the recorder's own
 * if that has the same length (the same kernel's), else stays unnamed.
 * Not thread-safe: one symbolizer per thread.
 */
#ifndef D9_SYMBOLIZE_H
#define D9_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/trace.h"

struct kallsyms;
struct symbolizer;

/* A symbolizer for @pid: reads /proc/@pid/maps now, and /proc/kallsyms on
 * a thread of its own (all signals blocked) that the first kernel address
 * to resolve waits for, and opens every executable file mapped (so later
 * resolution does not depend on the target or its files staying around).
 * One thread at a time uses a symbolizer. Returns 0, or -errno with
 * *@out = NULL (-ESRCH: no such process, -EACCES: maps not readable). A
 * kallsyms that cannot be read is not an error: kernel frames then stay
 * unresolved. Holds one file descriptor per mapped file until freed. */
int symbolizer__new(pid_t pid, struct symbolizer **out);

/* Re-read /proc/PID/maps, adding mappings that appeared (dlopen). Old ones
 * are kept. 0 or -errno (-ESRCH once the process is gone). Resolving or
 * unwinding an address that no known mapping holds does this by itself, at
 * most every 50 ms while the process lives. */
int symbolizer__refresh(struct symbolizer *s);

/* Add one executable mapping [start, end) of @path at file offset @pgoff
 * (a PERF_RECORD_MMAP2), opening @path if new. @dev (makedev(major,
 * minor)) and @ino identify the file mapped (0, 0: unknown): a path whose
 * file has another inode now, or a path ending in " (deleted)", is opened
 * through /proc/PID/map_files/ instead, while the target lives. A mapping
 * over older ones replaces them. "[vdso]" is understood (its image is
 * read now: see above), so a caller hands over every executable mapping
 * and this decides: -ENOENT for one the symbolizer does not keep (@path
 * neither a file's nor "[vdso]": anonymous code, "//anon" to perf, whose
 * addresses the perf map may name; "[heap]", "[stack]", "[vsyscall]").
 * Else 0, or -EINVAL, -ENOMEM; a file that cannot be opened is not an
 * error (see symbolizer__resolve and symbolizer__module_unreadable). */
int symbolizer__add_mapping(struct symbolizer *s, uint64_t start, uint64_t end,
			    uint64_t pgoff, uint64_t dev, uint64_t ino, const char *path);

/* Resolve @addr into @out (strings owned by the symbolizer, valid until
 * symbolizer__free). Has the signature of trace_resolve_fn with the
 * symbolizer as ctx. Returns 0, or -ENOENT when nothing is known (out->
 * addr and out->kernel are still set, sym and module NULL).
 * In a known module without a symbol for @addr (stripped, or a file that
 * could not be read), returns 0 with sym NULL and offset = the file offset
 * of @addr in the module, never a neighbouring symbol. An address in no
 * file mapping but in a region of /tmp/perf-PID.map gets that name, module
 * "/tmp/perf-PID.map" and the offset into the region. Callers pass return
 * addresses minus one (inside the call), so that a call that ends its
 * function names that function. */
int symbolizer__resolve(void *s, uint64_t addr, struct trace_frame *out);

/* Modules (files) seen so far, in order of appearance: path as in
 * /proc/PID/maps and build-id as lowercase hex ("" if none or unreadable).
 * symbolizer__nmodules returns the count; symbolizer__module sets *@path
 * and *@build_id (either may be NULL) of entry @i: 0, or -EINVAL. */
size_t symbolizer__nmodules(const struct symbolizer *s);
int symbolizer__module(const struct symbolizer *s, size_t i, const char **path,
		       const char **build_id);

/* Module @i's executable mapping @k (0 the lowest address) now: its
 * start, end and file offset. 0, -ENOENT past the last, or -EINVAL. */
int symbolizer__module_map(const struct symbolizer *s, size_t i, size_t k,
			   uint64_t *start, uint64_t *end, uint64_t *pgoff);

/* Why module @i's file is not used for names (e.g. "replaced on disk, and
 * /proc/PID/map_files is not readable"), or NULL if it is read. */
const char *symbolizer__module_unreadable(const struct symbolizer *s, size_t i);

/* The kernel symbol snapshot @s names kernel addresses with (NULL when
 * /proc/kallsyms could not be read); it lives as long as @s. Waits for it
 * if it is still being read (see symbolizer__new). */
const struct kallsyms *symbolizer__kallsyms(struct symbolizer *s);

void symbolizer__free(struct symbolizer *s);

/* ---- unwinding a user stack copy (symbol/unwind.c) ------------------ */

/* Registers of the innermost frame, by DWARF register number of the
 * target's architecture (x86-64: 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi,
 * 6 rbp, 7 rsp, 8-15 r8-r15). */
#define UNWIND_NREGS 32
struct unwind_regs {
	uint64_t pc;
	uint64_t reg[UNWIND_NREGS];
	uint32_t valid; /* bit i: reg[i] is known */
};

enum unwind_end {
	UNWIND_END_OUTERMOST, /* CFI says there is no caller (thread start) */
	UNWIND_END_MEMORY,    /* needed a word outside the stack copy */
	UNWIND_END_NO_CFI,    /* a pc in no known module, or without CFI */
	UNWIND_END_BAD,	      /* a rule it cannot evaluate, a register it
			       * does not know, or a stack going backwards */
	UNWIND_END_MAX,	      /* @max frames written */
};

struct unwind_result {
	unsigned int n; /* frames written */
	enum unwind_end end;
	unsigned int past_leaf_module; /* index of the first frame in another
					* module than frame 0, 0 if none */
	uint64_t stack_used;	       /* bytes of the copy read, from the SP */
};

/* Unwind with the modules' CFI (.eh_frame, else .debug_frame) from @regs
 * over @stack, a copy of the target's stack memory starting at the SP
 * (@regs->reg[SP]) and @stack_len bytes long: writes @regs->pc then the
 * return address of each caller into @pcs (at most @max), using the files
 * the symbolizer already holds. Only the copy is read, never the target.
 * Returns 0 with *@res filled in (res->n >= 1), -EINVAL (no pc or SP),
 * -ENOTSUP on an architecture it does not know. Cost: one binary search
 * and one CFI lookup per frame (CIEs/FDEs cached by libdw). */
int symbolizer__unwind(struct symbolizer *s, const struct unwind_regs *regs,
		       const void *stack, size_t stack_len, uint64_t *pcs,
		       unsigned int max, struct unwind_result *res);

/* Demangle a C++ (Itanium) or Rust (legacy or v0) symbol into a malloc'd
 * string, or NULL if @sym is not mangled. Rust legacy hashes (::h0123...)
 * are dropped. */
char *symbol_demangle(const char *sym);

/* The innermost pid of @pid (the last NSpid field of /proc/PID/status):
 * what getpid() returns inside the target's own pid namespace, and so the
 * PID in its /tmp/perf-PID.map. @pid itself if unknown. */
pid_t symbol_inner_pid(pid_t pid);

/* 1 if @addr is a kernel address on this architecture. */
int symbol_is_kernel(uint64_t addr);

#endif /* D9_SYMBOLIZE_H */
