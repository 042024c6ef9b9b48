/* SPDX-License-Identifier: MIT */
/*
 * framepointer.h - was an object file built with frame pointers?
 *
 * The kernel's callchain of a CPU sample follows frame pointers. A module
 * built without them (gcc -O2's default, Rust release builds, most
 * distribution packages) cuts that chain at its first frame, and only a
 * copy of the stack unwound with the module's CFI gets past it. The
 * recorder asks this of the target's own modules to size that copy.
 *
 * The judgement reads the module's CFI (.eh_frame, found through
 * .eh_frame_hdr's table of FDEs): in code that keeps a frame pointer
 * nearly every function makes it the CFA register after its prologue
 * (x86-64: `push rbp; mov rbp,rsp` then CFA = rbp+16; aarch64: x29), in
 * code without frame pointers almost none does (only functions that
 * need one, e.g. for alloca). Up to SYMBOL_FP_SAMPLES FDEs spread over
 * the table are asked whether any row of theirs computes the CFA from
 * the frame-pointer register.
 */
#ifndef D9_FRAMEPOINTER_H
#define D9_FRAMEPOINTER_H

#define SYMBOL_FP_SAMPLES 512

/* Frame pointers in the ELF file @path (x86-64 and aarch64 code):
 *   1        most sampled functions keep one (at least half; asked are
 *            functions that set up a frame: not _start, PLT stubs,
 *            functions under 16 bytes nor leaves that move no SP)
 *   0        most do not: a frame-pointer walk is cut in this module
 *   -ENODATA no .eh_frame_hdr table (or an encoding this does not read)
 *            or no function long enough to judge: unknown
 *   -EOPNOTSUPP  another architecture: unknown
 *   -errno   the file cannot be opened or is not ELF (-ENOEXEC)
 * *@with and *@of (each may be NULL) get how many of the sampled
 * functions keep one, of how many; 0/0 on error. Reads the file only;
 * thread-safe. */
int symbol_frame_pointers(const char *path, unsigned int *with, unsigned int *of);

#endif
