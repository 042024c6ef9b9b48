/* SPDX-License-Identifier: MIT */
/*
 * tokio.h - where an unmodified Tokio program keeps the id of the task a
 * thread is polling, found in its executable file.
 *
 * Tokio 1.22 and later set the thread-local CONTEXT.current_task_id (a
 * Cell<Option<task::Id>>) around every poll of a task (TaskIdGuard), so a
 * CPU sample or a switch-out that reads it at the sampled thread's
 * fs_base + task_off learns the task without any probe on the poll path.
 * This finds task_off and the slot's layout from the executable:
 *
 *  - CONTEXT is an STT_TLS symbol of .symtab (tokio::runtime::context::
 *    CONTEXT::...::VAL): the executable's TLS block sits right below the
 *    thread pointer (x86-64 TLS variant II, glibc's static layout), so the
 *    symbol is at fs_base - roundup(memsz - fb, align) - fb + st_value,
 *    fb = -(PT_TLS p_vaddr) mod align;
 *  - the field's place inside CONTEXT is the compiler's choice (Rust
 *    reorders fields, and line-tables DWARF has no types): it is read from
 *    the code of the non-generic TaskIdGuard::enter(id), which loads the
 *    thread pointer (mov %fs:0,%reg), offsets it, and stores Some(id).
 *    That store is fs-relative as the static linker resolved it, so it is
 *    the answer; the ELF arithmetic above only checks it (the slot must
 *    lie inside CONTEXT).
 *  - the Tokio version is read from the source paths of its panic
 *    locations (".../tokio-1.24.2/src/..."), the most frequent if several;
 *    it decides the layout to expect: before 1.40 Option<Id> is a u64 tag
 *    and a u64 id, from 1.40 (Id is a NonZeroU64) one word, 0 for None.
 *
 * Only the executable is asked: a Tokio linked into a shared library has
 * its CONTEXT in that library's TLS block, which is not at a fixed offset
 * from fs_base (dynamic TLS, reached through the DTV), and a cdylib loaded
 * by dlopen() cannot be read from BPF at all. A binary with two Tokio
 * runtimes (two major versions) has two CONTEXTs: this finds the first
 * TaskIdGuard::enter of .symtab.
 */
#ifndef D9_SYMBOL_TOKIO_H
#define D9_SYMBOL_TOKIO_H

#include <stddef.h>
#include <stdint.h>

/* How current_task_id is laid out at fs_base + task_off */
enum tokio_id_kind {
	TOKIO_ID_TAGGED = 1,  /* 16 bytes: u64 tag (1 = Some), u64 id (Tokio < 1.40) */
	TOKIO_ID_NONZERO = 2, /* 8 bytes: the id, 0 = None (Tokio >= 1.40) */
};

struct tokio_layout {
	int64_t task_off;    /* current_task_id at fs_base + task_off (the tag
				word for TAGGED); negative */
	uint32_t kind;	     /* enum tokio_id_kind */
	char version[24];    /* "1.24.2", or "" where the binary does not say
				(a vendored or renamed crate) */
	uint64_t enter_addr; /* TaskIdGuard::enter's link-time address (for
				messages and tests) */
};

/* The layout in the x86-64 ELF executable @path (the target's executable,
 * e.g. /proc/PID/exe). 0 and *@out; else -errno, *@out zeroed, and a
 * one-line reason in @why (no trailing newline: which case, and what to
 * do where there is something to do):
 *   -ENOENT   no Tokio runtime in it: no CONTEXT symbol and no tokio
 *             source path, or tokio without its runtime (-ENOENT is also
 *             what a @path that does not exist gives: @why says which)
 *   -ENODATA  stripped (no .symtab) where tokio source paths show Tokio:
 *             rebuild without `strip` (cargo's default keeps .symtab)
 *   -EPROTONOSUPPORT  Tokio older than 1.22 (no per-thread task id), or a
 *             layout this does not recognise: CONTEXT without
 *             TaskIdGuard::enter (older than 1.22, or enter inlined), code
 *             in enter that is not the known pattern, a slot outside
 *             CONTEXT, or a layout other than the version's
 *   -ENOTSUP  an ELF file but not x86-64 (64-bit, EM_X86_64)
 *   -ENOEXEC  not an ELF file
 *   other -errno: the file cannot be read
 * @why may be NULL (or @len 0); it is "" on success. Reads the file only;
 * thread-safe. */
int tokio_layout_find(const char *path, struct tokio_layout *out, char *why, size_t len);

/* The decoder on its own: from the first @len code bytes of
 * TaskIdGuard::enter(id) (x86-64, the id in %rdi), the fs-relative offset
 * of current_task_id in *@task_off and its layout in *@kind. A small strict
 * pattern decoder, not a disassembler: it follows one path through the code
 * (falling through conditional branches, taking direct jumps, stopping at
 * the first ret or after 64 instructions) and tracks which registers hold
 * the thread pointer plus a constant (mov %fs:0,%reg, then lea, add, sub,
 * mov), the id (%rdi and its copies) and small constants (mov $imm,
 * xor). It recognises:
 *   TAGGED   a store of 1 (movq $1, or a register holding 1) at d(%base)
 *            and of the id at d+8(%base), in either order, at most three
 *            instructions apart: the slot is at the base's offset + d;
 *   NONZERO  a store of the id at d(%base), and no other store into the
 *            word before it (on the path so far, or three instructions on).
 * An %fs:disp32 operand counts as a base of the thread pointer itself.
 * tokio_layout_find() gives it the whole code section, so that the path
 * can follow enter's tail call to set_current_task_id (opt-level "s");
 * here a jump out of @code is refused.
 * Returns 0, or -EPROTONOSUPPORT for code it does not recognise (an
 * instruction it cannot length-decode before the answer, no such store,
 * code that ends first). Either output pointer may be NULL. */
int tokio_decode_enter(const uint8_t *code, size_t len, int64_t *task_off,
		       uint32_t *kind);

/* Where `record --tokio probes` puts its uprobes in the executable @path:
 * each function's first byte as an offset in the file (what the kernel's
 * uprobes take), found in .symtab by its mangled path:
 *   poll         every instance of tokio::runtime::task::raw::poll<T,S>, the
 *                function a task's vtable calls to poll it (never inlined:
 *                its address is in the vtable); its first argument is the
 *                task's Header
 *   wake_by_val, wake_by_ref  the waker's wake functions (0: not found);
 *                their first argument is the task's Header too */
struct tokio_sites {
	uint64_t *poll;
	char **name; /* per poll: the task's name from the instance's DWARF
		      * name, poll<T, S> (lib_tokio_poll_name()); "" none */
	size_t npoll;
	uint64_t wake_by_val, wake_by_ref;
};
/* 0 and *@out (tokio_sites_release() it), or -errno and why: -ENOENT no
 * raw::poll in it (stripped, or no Tokio runtime), the file's errors. */
int tokio_sites_find(const char *path, struct tokio_sites *out, char *why, size_t len);
void tokio_sites_release(struct tokio_sites *s);

#endif
