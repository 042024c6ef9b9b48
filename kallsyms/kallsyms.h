/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.h - a snapshot of the kernel symbol table (/proc/kallsyms).
 *
 * Depends on libc only (no other part of d9prof). The snapshot is sorted by
 * address; lookups are binary searches and allocate nothing.
 */
#ifndef D9_KALLSYMS_H
#define D9_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* Parse kallsyms text ("ffffffff81000000 T _stext\t[module]" lines). Only
 * text symbols (t/T/w/W) are kept; linker section markers (_stext, _etext,
 * __start_*, *_text_end, ...) are not symbols but _etext and _einittext
 * bound the core kernel text. Returns 0 and a snapshot in *@out, or -errno
 * with *@out = NULL: -ENOMEM, -EINVAL (no line parses), -EPERM (every
 * address is zero: kptr_restrict hides them from this user). */
int kallsyms__parse(const char *text, size_t len, struct kallsyms **out);

/* Read and parse @path (NULL means /proc/kallsyms). 0 or -errno as above. */
int kallsyms__load(const char *path, struct kallsyms **out);

/* The symbol containing @addr: its name, and addr - symbol start in
 * *@offset, the module ("[kernel]" for the core kernel, else the module
 * name in brackets, e.g. "[ext4]") in *@module if non-NULL. NULL when @addr
 * is below the first symbol or past the end of the kernel text: a symbol
 * ends where the next one starts, at _etext/_einittext, or, for the last
 * symbol of a module, 64 KiB after its start. Among aliases (same address)
 * the global one (T before W, t, w), then the first listed, is returned.
 * The strings live as long as the snapshot. @k may be NULL (returns NULL). */
const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr, uint64_t *offset,
			     const char **module);

/* The address of the core kernel's text symbol @name, 0 if none (a
 * linear search: for the few names a program needs once). */
uint64_t kallsyms__find(const struct kallsyms *k, const char *name);

size_t kallsyms__count(const struct kallsyms *k);
void kallsyms__free(struct kallsyms *k);

#endif /* D9_KALLSYMS_H */
