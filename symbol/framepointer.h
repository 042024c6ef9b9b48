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
 * .eh_frame_hdr's table of FDEs): a function built with frame pointers
 * makes the frame pointer its CFA register after its prologue (x86-64:
 * `push rbp; mov rbp,rsp`, then CFA = rbp+16; aarch64: x29), one built
 * without never does unless it needs a frame (alloca). Asked are up to
 * SYMBOL_FP_SAMPLES FDEs spread over the table, of functions that set up
 * a frame at all: not leaves that move no SP (gcc leaves them frameless
 * even with -fno-omit-frame-pointer on Debian; the recorder's leaf step
 * covers those), PLT stubs or _start.
 */
#ifndef D9_FRAMEPOINTER_H
#define D9_FRAMEPOINTER_H

#define SYMBOL_FP_SAMPLES 4096

/* Frame pointers in the ELF file @path (x86-64 and aarch64 code):
 *   1        they keep them: fewer than 2% of the functions asked lack
 *            them
 *   0        they do not, or only partly (Rust's std has them, a crate
 *            built without has not): a frame-pointer walk is cut there
 *   -ENODATA no .eh_frame_hdr table (or an encoding this does not read)
 *            or no function long enough to judge: unknown
 *   -EOPNOTSUPP  another architecture: unknown
 *   -errno   the file cannot be opened or is not ELF (-ENOEXEC)
 * *@with and *@of (each may be NULL) get how many of the sampled
 * functions keep one, of how many; 0/0 on error. Reads the file only;
 * thread-safe. */
int symbol_frame_pointers(const char *path, unsigned int *with, unsigned int *of);

#endif
