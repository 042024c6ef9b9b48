// SPDX-License-Identifier: MIT
/*
 * framepointer.c - judge from its CFI whether a module keeps frame
 * pointers (framepointer.h says why and how).
 *
 * .eh_frame_hdr holds the sorted start addresses of every FDE, which is
 * the one index of functions a stripped file still has; libdw gives the
 * rules at an address (dwarf_cfi_addrframe) and the FDE's range
 * (dwarf_frame_info, per row). A function that keeps a frame pointer
 * has a row whose CFA is that register (after its prologue); one that
 * does not, has none unless it needs a frame (alloca, realignment).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbol/framepointer.h"

/* Functions shorter than this are left out: PLT-like stubs and
 * trampolines set up no frame whatever the flags. */
#define FP_MIN_FUNC 16
#define FP_MAX_ROWS 64
#define FP_MAX_PLTS 4

/* DWARF register numbers: the frame pointer, the return address column */
static const struct arch {
	int fp, ra;
} x86_64 = {6, 16}, aarch64 = {29, 30};

/* DW_EH_PE_* value formats this reads: the 4-byte ones (all that gcc,
 * clang, lld and GNU ld write in .eh_frame_hdr) and 2- and 8-byte ones. */
static int enc_size(unsigned int enc)
{
	switch (enc & 0x0f) {
	case 0x02:
	case 0x0a:
		return 2;
	case 0x03:
	case 0x0b:
		return 4;
	case 0x04:
	case 0x0c:
		return 8;
	default:
		return -1;
	}
}

/* The value at @p in format @enc (one enc_size() knows), sign- or
 * zero-extended as the format says. */
static int64_t read_enc(const unsigned char *p, unsigned int enc)
{
	union {
		uint16_t u16;
		int16_t s16;
		uint32_t u32;
		int32_t s32;
		int64_t s64;
	} v;
	int n = enc_size(enc);

	memcpy(&v, p, n > 0 ? (size_t)n : sizeof(v));
	switch (enc & 0x0f) {
	case 0x02:
		return v.u16;
	case 0x0a:
		return v.s16;
	case 0x03:
		return v.u32;
	case 0x0b:
		return v.s32;
	default:
		return v.s64;
	}
}

/* PLT sections (.plt, .plt.got, .plt.sec, .iplt): stubs, not functions */
struct plts {
	uint64_t start[FP_MAX_PLTS], end[FP_MAX_PLTS];
	int n;
};

static int in_plt(const struct plts *p, uint64_t pc)
{
	for (int i = 0; i < p->n; i++)
		if (pc >= p->start[i] && pc < p->end[i])
			return 1;
	return 0;
}

/* The section named @name: its data and address; NULL if absent. The
 * PLT sections go into @plts on the way. */
static Elf_Data *section(Elf *elf, const char *name, uint64_t *addr, struct plts *plts)
{
	Elf_Data *found = NULL;
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n)
			continue;
		if (!strcmp(n, name)) {
			*addr = sh.sh_addr;
			found = elf_getdata(scn, NULL);
		} else if ((!strncmp(n, ".plt", 4) || !strcmp(n, ".iplt")) &&
			   plts->n < FP_MAX_PLTS) {
			plts->start[plts->n] = sh.sh_addr;
			plts->end[plts->n++] = sh.sh_addr + sh.sh_size;
		}
	}
	return found;
}

/* Does the function whose FDE starts at @pc make @fpreg its CFA
 * register in any row before @limit (the next FDE's start)? 1 or 0;
 * -1 to leave it out, as telling nothing either way: no FDE there,
 * shorter than FP_MIN_FUNC, a thread's outermost frame (return address
 * @ra undefined: _start), a CFA that is not always a register plus an
 * offset, or one that never moves (a leaf that sets up no
 * frame: gcc leaves none in leaves even with -fno-omit-frame-pointer on
 * Debian, and the recorder's leaf step covers those). dwarf_frame_info()
 * gives one row's range, so the rows are walked one by one, at most
 * FP_MAX_ROWS of them. */
static int fde_uses_fp(Dwarf_CFI *cfi, uint64_t pc, uint64_t limit, const struct arch *a)
{
	uint64_t start = pc, reg0 = 0, off0 = 0;
	int fp = 0, moved = 0, rows = 0;
	const int fpreg = a->fp, ra = a->ra;

	for (; rows < FP_MAX_ROWS && pc < limit; rows++) {
		Dwarf_Op mem[3], *ops;
		Dwarf_Frame *fr = NULL;
		Dwarf_Addr s, e;
		uint64_t reg, off;
		size_t nops;

		if (dwarf_cfi_addrframe(cfi, pc, &fr) || !fr)
			break;
		if (!dwarf_frame_register(fr, ra, mem, &ops, &nops) && !nops &&
		    ops == mem) {
			free(fr);
			return -1;
		}
		if (dwarf_frame_cfa(fr, &ops, &nops) || nops != 1) {
			free(fr);
			return -1;
		}
		if (ops[0].atom == DW_OP_bregx) {
			reg = ops[0].number;
			off = ops[0].number2;
		} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
			reg = (uint64_t)(ops[0].atom - DW_OP_breg0);
			off = ops[0].number;
		} else {
			free(fr);
			return -1;
		}
		if (!rows) {
			reg0 = reg;
			off0 = off;
		}
		moved |= reg != reg0 || off != off0;
		fp |= reg == (uint64_t)fpreg;
		if (dwarf_frame_info(fr, &s, &e, NULL) < 0)
			e = 0;
		free(fr);
		if (e <= pc)
			break;
		pc = e;
	}
	if (!rows || !moved || pc - start < FP_MIN_FUNC)
		return -1;
	return fp;
}

static int judge(Elf *elf, unsigned int *with, unsigned int *of)
{
	const unsigned char *h, *p, *e;
	uint64_t hdr_addr = 0, nfde;
	unsigned int table_enc;
	Dwarf_CFI *cfi;
	struct plts plts = {.n = 0};
	GElf_Ehdr eh;
	Elf_Data *d;
	const struct arch *a;
	int n;

	if (!gelf_getehdr(elf, &eh))
		return -ENOEXEC;
	if (eh.e_machine == EM_X86_64)
		a = &x86_64;
	else if (eh.e_machine == EM_AARCH64)
		a = &aarch64;
	else
		return -EOPNOTSUPP;
	d = section(elf, ".eh_frame_hdr", &hdr_addr, &plts);
	if (!d || !d->d_buf || d->d_size < 4)
		return -ENODATA;
	h = d->d_buf;
	e = h + d->d_size;
	table_enc = h[3];
	/* version, eh_frame_ptr's encoding, fde_count's, the table's: its
	 * values relative to the header (datarel), after the two fields */
	if (h[0] != 1 || (table_enc & 0x70) != 0x30 || enc_size(table_enc) < 0 ||
	    (n = enc_size(h[1])) < 0)
		return -ENODATA;
	p = h + 4 + n;
	if ((n = enc_size(h[2])) < 0 || p + n > e)
		return -ENODATA;
	nfde = (uint64_t)read_enc(p, h[2]);
	p += n;
	n = enc_size(table_enc);
	if (!nfde || (uint64_t)(e - p) / (2u * (unsigned int)n) < nfde)
		return -ENODATA;
	cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		return -ENODATA;
	for (uint64_t i = 0, step = nfde / SYMBOL_FP_SAMPLES + 1; i < nfde; i += step) {
		const unsigned char *at = p + i * 2u * (unsigned int)n;
		uint64_t pc = hdr_addr + (uint64_t)read_enc(at, table_enc);
		uint64_t next = i + 1 < nfde ? hdr_addr + (uint64_t)read_enc(at + 2 * n,
									     table_enc)
					     : UINT64_MAX;
		int r = in_plt(&plts, pc) ? -1 : fde_uses_fp(cfi, pc, next, a);

		if (r < 0)
			continue;
		(*of)++;
		*with += (unsigned int)r;
	}
	dwarf_cfi_end(cfi);
	if (!*of)
		return -ENODATA;
	/* a mixed module (Rust: std with frame pointers, the crate without;
	 * a static library without) cuts chains where it lacks them */
	return (*of - *with) * 50 < *of;
}

int symbol_frame_pointers(const char *path, unsigned int *with, unsigned int *of)
{
	unsigned int w = 0, o = 0;
	Elf *elf;
	int fd, r;

	if (with)
		*with = 0;
	if (of)
		*of = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		r = -ENOEXEC;
	else
		r = judge(elf, &w, &o);
	elf_end(elf);
	close(fd);
	if (r >= 0) {
		if (with)
			*with = w;
		if (of)
			*of = o;
	}
	return r;
}
