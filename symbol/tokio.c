// SPDX-License-Identifier: MIT
/*
 * tokio.c - find Tokio's per-thread current task id in an executable
 * (tokio.h says what and why).
 *
 * Two halves. The ELF half finds the symbols (CONTEXT's TLS storage,
 * TaskIdGuard::enter), the static TLS layout and the Tokio version. The
 * decoder reads enter's code: it is strict on purpose, since a wrong
 * offset would attribute samples to tasks silently. It length-decodes the
 * few x86-64 forms that such a small function is made of and tracks two
 * facts per register along one path: "thread pointer + constant" and "the
 * id argument". A store is understood only when its address is the
 * former and its value 1 or the latter; anything it cannot decode before
 * the answer makes it refuse rather than guess.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/grow.h"
#include "lib/text.h"
#include "lib/tokio_names.h"
#include "symbol/tokio.h"

/* ---- the decoder ------------------------------------------------------- */

#define DEC_MAX_INSNS  64 /* on one path, jumps taken included */
#define DEC_WINDOW     3  /* the tag and the id stored this many insns apart, at most */
#define DEC_MAX_STORES 16

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI, R8, R9, R10, R11 };

#define BIT(r) (1u << (r))
#define CALLER_SAVED                                                                     \
	(BIT(RAX) | BIT(RCX) | BIT(RDX) | BIT(RSI) | BIT(RDI) | BIT(R8) | BIT(R9) |      \
	 BIT(R10) | BIT(R11))

/* What an opcode writes, besides memory through its r/m operand */
enum dest { D_NONE, D_REG, D_RM, D_BOTH, D_RAX, D_RAX_RDX, D_OPREG };
/* How the path goes on after it */
enum flow { F_NEXT, F_JCC, F_JMP, F_CALL, F_END };

struct insn {
	unsigned int len, op; /* op: one byte, or 0x0f00 | the second */
	uint8_t rex;
	int fs, seg, opsize16;	   /* %fs prefix; another segment prefix; 0x66 */
	int modrm;		   /* has a ModRM byte */
	unsigned int mod, reg, rm; /* reg, rm (mod 3) extended by REX */
	int base, index, rip;	   /* a memory operand: -1 for none */
	int64_t disp, imm, rel;
	enum dest dest;
	enum flow flow;
	unsigned int width; /* of a memory store, bytes */
};

#define REX_W(in) ((in)->rex & 8)

/* "fs-0xb0": an offset from the thread pointer, for "fs%c%#llx" */
#define FS_OFF(v)                                                                        \
	(v) < 0 ? '-' : '+',                                                             \
		(v) < 0 ? 0ULL - (unsigned long long)(v) : (unsigned long long)(v)

struct store {
	int64_t addr;
	unsigned int width, at;
	enum { S_TAG1, S_ID, S_OTHER } what;
};

struct path {
	uint16_t tp;  /* registers that hold the thread pointer + tpoff[] */
	uint16_t id;  /* registers that hold enter()'s argument */
	uint16_t cst; /* registers that hold the constant cval[] */
	int64_t tpoff[16], cval[16];
	int saw_tp, calls; /* for the reason of a refusal */
	struct store st[DEC_MAX_STORES];
	unsigned int nst;
};

static int64_t le(const uint8_t *p, unsigned int n)
{
	switch (n) {
	case 1:
		return (int8_t)p[0];
	case 2:
		return (int16_t)(p[0] | p[1] << 8);
	case 4:
		return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
				 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
	default: {
		uint64_t v = 0;

		for (unsigned int i = 0; i < 8; i++)
			v |= (uint64_t)p[i] << (8 * i);
		return (int64_t)v;
	}
	}
}

/* Operand sizes of an opcode's immediate or branch displacement */
enum { I_NONE, I_8, I_Z, I_V, I_16, R_8, R_32 };

/* The forms this knows: ModRM or not, immediate, destination, flow. The
 * group opcodes (80-83, C0-C1, C6-C7, D0-D3, F6-F7, FE-FF) are settled
 * by their /digit once the ModRM byte is read. 0 if unknown. */
static int classify(struct insn *in, int *has_modrm, int *imm)
{
	unsigned int op = in->op;

	*has_modrm = 0;
	*imm = I_NONE;
	in->dest = D_NONE;
	in->flow = F_NEXT;
	if (op < 0x40 && (op & 7) < 6) { /* the eight ALU ops */
		if ((op & 7) < 4) {
			*has_modrm = 1;
			in->dest = (op & 0x38) == 0x38 ? D_NONE : op & 2 ? D_REG : D_RM;
		} else {
			*imm = op & 1 ? I_Z : I_8;
			in->dest = (op & 0x38) == 0x38 ? D_NONE : D_RAX;
		}
		return 1;
	}
	if (op >= 0x50 && op <= 0x57)
		return 1;
	if (op >= 0x58 && op <= 0x5f) {
		in->dest = D_OPREG;
		return 1;
	}
	if (op >= 0x70 && op <= 0x7f) {
		*imm = R_8;
		in->flow = F_JCC;
		return 1;
	}
	if (op >= 0xb0 && op <= 0xbf) {
		*imm = op < 0xb8 ? I_8 : I_V;
		in->dest = D_OPREG;
		return 1;
	}
	if (op >= 0x0f40 && op <= 0x0f4f) { /* cmovcc */
		*has_modrm = 1;
		in->dest = D_REG;
		return 1;
	}
	if (op >= 0x0f80 && op <= 0x0f8f) {
		*imm = R_32;
		in->flow = F_JCC;
		return 1;
	}
	if (op >= 0x0f90 && op <= 0x0f9f) { /* setcc */
		*has_modrm = 1;
		in->dest = D_RM;
		return 1;
	}
	switch (op) {
	case 0x63: /* movsxd */
	case 0x8a:
	case 0x8b:
	case 0x8d:
	case 0x0faf:
	case 0x0fb6:
	case 0x0fb7:
	case 0x0fbe:
	case 0x0fbf:
		*has_modrm = 1;
		in->dest = D_REG;
		return 1;
	case 0x69:
	case 0x6b:
		*has_modrm = 1;
		*imm = op == 0x69 ? I_Z : I_8;
		in->dest = D_REG;
		return 1;
	case 0x80:
	case 0x81:
	case 0x83:
	case 0xc0:
	case 0xc1:
	case 0xc6:
	case 0xc7:
		*has_modrm = 1;
		*imm = op == 0x81 || op == 0xc7 ? I_Z : I_8;
		in->dest = D_RM; /* cmp (/7) and the unknown /digits: below */
		return 1;
	case 0x84:
	case 0x85:
	case 0x0f1e: /* endbr64 (f3 0f 1e fa) and hint nops */
	case 0x0f1f:
		*has_modrm = 1;
		return 1;
	case 0x86:
	case 0x87:
		*has_modrm = 1;
		in->dest = D_BOTH;
		return 1;
	case 0x88:
	case 0x89:
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
		*has_modrm = 1;
		in->dest = D_RM;
		return 1;
	case 0xf6:
	case 0xf7:
	case 0xfe:
	case 0xff:
		*has_modrm = 1;
		return 1;
	case 0x90:
		return 1;
	case 0x98:
		in->dest = D_RAX;
		return 1;
	case 0x99:
		in->dest = D_RAX_RDX;
		return 1;
	case 0x68:
		*imm = I_Z;
		return 1;
	case 0x6a:
	case 0xa8:
		*imm = I_8;
		return 1;
	case 0xa9:
		*imm = I_Z;
		return 1;
	case 0xc2:
		*imm = I_16;
		in->flow = F_END;
		return 1;
	case 0xc3:
	case 0xcc:
	case 0x0f0b: /* ud2 */
		in->flow = F_END;
		return 1;
	case 0xe8:
		*imm = R_32;
		in->flow = F_CALL;
		return 1;
	case 0xe9:
		*imm = R_32;
		in->flow = F_JMP;
		return 1;
	case 0xeb:
		*imm = R_8;
		in->flow = F_JMP;
		return 1;
	}
	return 0;
}

/* The group opcodes' /digit: what it writes, its immediate. 0 if unknown. */
static int settle_group(struct insn *in, int *imm)
{
	unsigned int d = in->reg & 7;

	switch (in->op) {
	case 0x80:
	case 0x81:
	case 0x83:
		if (d == 7)
			in->dest = D_NONE;
		return 1;
	case 0xc0:
	case 0xc1:
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
		return d != 6;
	case 0xc6:
	case 0xc7:
		return d == 0;
	case 0xf6:
	case 0xf7:
		if (d <= 1) { /* test */
			*imm = in->op == 0xf6 ? I_8 : I_Z;
			in->dest = D_NONE;
		} else {
			in->dest = d <= 3 ? D_RM : D_RAX_RDX;
		}
		return d != 1;
	case 0xfe:
		in->dest = D_RM;
		return d <= 1;
	case 0xff:
		switch (d) {
		case 0:
		case 1:
			in->dest = D_RM;
			return 1;
		case 2:
			in->flow = F_CALL;
			return 1;
		case 4:
			in->flow = F_END; /* an indirect jump: the path is lost */
			return 1;
		case 6:
			return 1;
		}
		return 0;
	}
	return 1;
}

static unsigned int store_width(const struct insn *in)
{
	switch (in->op) {
	case 0x80:
	case 0x86:
	case 0x88:
	case 0xc0:
	case 0xc6:
	case 0xd0:
	case 0xd2:
	case 0xf6:
	case 0xfe:
		return 1;
	}
	if (in->op >= 0x0f90 && in->op <= 0x0f9f)
		return 1;
	if (in->op < 0x40 && !(in->op & 1))
		return 1;
	return REX_W(in) ? 8 : in->opsize16 ? 2 : 4;
}

/* One instruction at @p (@n bytes left). 0, -ENODATA if it runs past
 * the end, -EPROTONOSUPPORT if it is not one of the known forms. */
static int decode1(const uint8_t *p, size_t n, struct insn *in)
{
	size_t i = 0;
	int has_modrm, imm;
	unsigned int isz = 0;

	memset(in, 0, sizeof(*in));
	in->base = in->index = -1;
	for (;; i++) {
		if (i >= n)
			return -ENODATA;
		if (i > 4)
			return -EPROTONOSUPPORT;
		switch (p[i]) {
		case 0x66:
			in->opsize16 = 1;
			continue;
		case 0x64:
			in->fs = 1;
			continue;
		case 0x26:
		case 0x2e:
		case 0x36:
		case 0x3e:
		case 0x65:
			in->seg = 1; /* gs, and the ignored ones (notrack) */
			continue;
		case 0xf0:
		case 0xf2:
		case 0xf3:
			continue;
		}
		break;
	}
	if ((p[i] & 0xf0) == 0x40)
		in->rex = p[i++];
	if (i >= n)
		return -ENODATA;
	in->op = p[i++];
	if (in->op == 0x0f) {
		if (i >= n)
			return -ENODATA;
		in->op = 0x0f00 | p[i++];
	}
	if (!classify(in, &has_modrm, &imm))
		return -EPROTONOSUPPORT;
	if (has_modrm) {
		unsigned int m, rmlo;

		if (i >= n)
			return -ENODATA;
		m = p[i++];
		in->modrm = 1;
		in->mod = m >> 6;
		in->reg = ((m >> 3) & 7) | (in->rex & 4 ? 8 : 0);
		rmlo = m & 7;
		if (in->mod == 3) {
			in->rm = rmlo | (in->rex & 1 ? 8 : 0);
		} else if (rmlo == 4) {
			unsigned int sib, idx;

			if (i >= n)
				return -ENODATA;
			sib = p[i++];
			idx = ((sib >> 3) & 7) | (in->rex & 2 ? 8 : 0);
			in->index = idx == 4 ? -1 : (int)idx;
			if ((sib & 7) == 5 && in->mod == 0) {
				if (i + 4 > n)
					return -ENODATA;
				in->disp = le(p + i, 4);
				i += 4;
			} else {
				in->base = (int)((sib & 7) | (in->rex & 1 ? 8 : 0));
			}
		} else if (rmlo == 5 && in->mod == 0) {
			if (i + 4 > n)
				return -ENODATA;
			in->rip = 1;
			in->disp = le(p + i, 4);
			i += 4;
		} else {
			in->base = (int)(rmlo | (in->rex & 1 ? 8 : 0));
		}
		if (in->mod == 1 || in->mod == 2) {
			unsigned int dn = in->mod == 1 ? 1 : 4;

			if (i + dn > n)
				return -ENODATA;
			in->disp = le(p + i, dn);
			i += dn;
		}
		if (!settle_group(in, &imm))
			return -EPROTONOSUPPORT;
	}
	switch (imm) {
	case I_8:
	case R_8:
		isz = 1;
		break;
	case I_16:
		isz = 2;
		break;
	case I_Z:
	case R_32:
		isz = in->opsize16 && imm == I_Z ? 2 : 4;
		break;
	case I_V:
		isz = REX_W(in) ? 8 : in->opsize16 ? 2 : 4;
		break;
	}
	if (i + isz > n)
		return -ENODATA;
	if (isz) {
		if (imm == R_8 || imm == R_32)
			in->rel = le(p + i, isz);
		else
			in->imm = le(p + i, isz);
	}
	i += isz;
	in->len = (unsigned int)i;
	in->width = store_width(in);
	return 0;
}

static void clobber(struct path *s, unsigned int mask)
{
	s->tp &= (uint16_t)~mask;
	s->id &= (uint16_t)~mask;
	s->cst &= (uint16_t)~mask;
}

/* The address of @in's memory operand as an offset from the thread
 * pointer: 1 and *@addr if it is one (through a tracked base, or
 * %fs:disp32), 0 if not. */
static int tp_addr(const struct insn *in, const struct path *s, int64_t *addr)
{
	if (!in->modrm || in->mod == 3 || in->rip || in->index >= 0 || in->seg)
		return 0;
	if (in->fs) {
		if (in->base >= 0)
			return 0;
		*addr = in->disp;
		return 1;
	}
	if (in->base < 0 || !(s->tp & BIT(in->base)))
		return 0;
	*addr = s->tpoff[in->base] + in->disp;
	return 1;
}

static void set_tp(struct path *s, unsigned int r, int64_t off)
{
	clobber(s, BIT(r));
	s->tp |= (uint16_t)BIT(r);
	s->tpoff[r] = off;
	s->saw_tp = 1;
}

static void set_const(struct path *s, unsigned int r, int64_t v)
{
	clobber(s, BIT(r));
	s->cst |= (uint16_t)BIT(r);
	s->cval[r] = v;
}

/* Carry the register facts across @in, and note a store into the thread's
 * TLS in s->st. */
static void step(const struct insn *in, struct path *s, unsigned int at)
{
	int64_t addr;
	unsigned int w = REX_W(in) != 0;

	/* the thread pointer and its offsets, the id and its copies */
	if (in->op == 0x8b && w && in->fs && in->mod == 0 && in->base < 0 &&
	    in->index < 0 && !in->rip && in->disp == 0) {
		set_tp(s, in->reg, 0); /* mov %fs:0,%reg: the TCB's self pointer */
		return;
	}
	if ((in->op == 0x89 || in->op == 0x8b) && in->mod == 3 && w) {
		unsigned int src = in->op == 0x89 ? in->reg : in->rm;
		unsigned int dst = in->op == 0x89 ? in->rm : in->reg;
		int tp = s->tp & BIT(src), id = s->id & BIT(src), cst = s->cst & BIT(src);
		int64_t off = s->tpoff[src], v = s->cval[src];

		clobber(s, BIT(dst));
		if (tp)
			set_tp(s, dst, off);
		if (id)
			s->id |= (uint16_t)BIT(dst);
		if (cst)
			set_const(s, dst, v);
		return;
	}
	if (in->op == 0x8d && w && tp_addr(in, s, &addr) && !in->fs) {
		set_tp(s, in->reg, addr);
		return;
	}
	if ((in->op == 0x81 || in->op == 0x83) && w && in->mod == 3 &&
	    ((in->reg & 7) == 0 || (in->reg & 7) == 5) && (s->tp & BIT(in->rm))) {
		s->tpoff[in->rm] += (in->reg & 7) == 0 ? in->imm : -in->imm;
		s->id &= (uint16_t)~BIT(in->rm);
		return;
	}
	if ((in->op == 0x05 || in->op == 0x2d) && w && (s->tp & BIT(RAX))) {
		s->tpoff[RAX] += in->op == 0x05 ? in->imm : -in->imm;
		s->id &= (uint16_t)~BIT(RAX);
		return;
	}

	/* a store into the TLS: remembered, whatever it is */
	if ((in->dest == D_RM || in->dest == D_BOTH) && in->mod != 3 &&
	    tp_addr(in, s, &addr) && s->nst < DEC_MAX_STORES) {
		struct store *st = &s->st[s->nst++];

		st->addr = addr;
		st->width = in->width;
		st->at = at;
		st->what = S_OTHER;
		if (in->op == 0xc7 && w && in->imm == 1)
			st->what = S_TAG1;
		else if (in->op == 0x89 && w && (s->cst & BIT(in->reg)) &&
			 s->cval[in->reg] == 1)
			st->what =
				S_TAG1; /* the tag passed in a register (opt-level s) */
		else if (in->op == 0x89 && w && (s->id & BIT(in->reg)))
			st->what = S_ID;
	}

	/* everything else only destroys what was known */
	switch (in->dest) {
	case D_NONE:
		break;
	case D_REG:
		clobber(s, BIT(in->reg));
		break;
	case D_RM:
		if (in->mod == 3)
			clobber(s, BIT(in->rm));
		break;
	case D_BOTH:
		clobber(s, BIT(in->reg) | (in->mod == 3 ? BIT(in->rm) : 0));
		break;
	case D_RAX:
		clobber(s, BIT(RAX));
		break;
	case D_RAX_RDX:
		clobber(s, BIT(RAX) | BIT(RDX));
		break;
	case D_OPREG:
		clobber(s, BIT((in->op & 7) | (in->rex & 1 ? 8u : 0u)));
		break;
	}
	if (in->flow == F_CALL) {
		clobber(s, CALLER_SAVED);
		s->calls++;
	}

	/* constants: mov $imm (32-bit writes zero-extend), xor %r,%r */
	if (in->opsize16)
		return;
	if (in->op >= 0xb8 && in->op <= 0xbf)
		set_const(s, (in->op & 7) | (in->rex & 1 ? 8u : 0u),
			  w ? in->imm : (int64_t)(uint32_t)in->imm);
	else if (in->op == 0xc7 && in->mod == 3)
		set_const(s, in->rm, w ? in->imm : (int64_t)(uint32_t)in->imm);
	else if ((in->op == 0x31 || in->op == 0x33) && in->mod == 3 && in->reg == in->rm)
		set_const(s, in->rm, 0);
}

/* The stores seen so far, judged once the id's store @id is known.
 * 1: decided (0 into *@off, *@kind), 0: wait for more, -1: refused. */
static int judge(const struct path *s, const struct store *id, unsigned int now,
		 int final, int64_t *off, uint32_t *kind, char *why, size_t len)
{
	const struct store *tag = NULL;

	for (unsigned int i = 0; i < s->nst; i++) {
		const struct store *t = &s->st[i];

		/* anything written over the word before the id */
		if (t == id || t->addr >= id->addr ||
		    t->addr + (int64_t)t->width <= id->addr - 8)
			continue;
		if (t->what == S_TAG1 && t->addr == id->addr - 8) {
			unsigned int apart =
				t->at > id->at ? t->at - id->at : id->at - t->at;

			if (apart <= DEC_WINDOW) {
				tag = t;
				continue;
			}
			text_say(
				why, len,
				"the tag 1 at fs%c%#llx is stored %u instructions away from the id",
				FS_OFF(t->addr), apart);
			return -1;
		}
		text_say(
			why, len,
			"a store of %u bytes at fs%c%#llx next to the id at fs%c%#llx is not the tag 1 "
			"of a tagged Option",
			t->width, FS_OFF(t->addr), FS_OFF(id->addr));
		return -1;
	}
	if (tag) {
		*off = tag->addr;
		*kind = TOKIO_ID_TAGGED;
		return 1;
	}
	if (!final && now - id->at < DEC_WINDOW)
		return 0; /* the tag may follow the id */
	*off = id->addr;
	*kind = TOKIO_ID_NONZERO;
	return 1;
}

/* The path from @code + @start, @len bytes in all (a direct jump may
 * land anywhere in them: enter's tail call to set_current_task_id). */
static int decode(const uint8_t *code, size_t len, size_t start, int64_t *task_off,
		  uint32_t *kind, char *why, size_t wlen)
{
	struct path s = {.id = BIT(RDI)};
	const struct store *id = NULL;
	size_t pc = start;
	int64_t off = 0;
	uint32_t k = 0;
	int r = 0;

	for (unsigned int n = 0;; n++) {
		long long at = (long long)pc - (long long)start;
		struct insn in;
		int err;

		if (n == DEC_MAX_INSNS) {
			if (id && (r = judge(&s, id, n, 1, &off, &k, why, wlen)))
				break;
			text_say(why, wlen,
				 "no store of the id into TLS in %u instructions",
				 DEC_MAX_INSNS);
			return -EPROTONOSUPPORT;
		}
		if (pc >= len) {
			/* not a ret: what follows might have been the tag */
			text_say(why, wlen, "the code ends at %+lld before a ret", at);
			return -EPROTONOSUPPORT;
		}
		err = decode1(code + pc, len - pc, &in);
		if (err == -ENODATA) {
			text_say(why, wlen,
				 "the code ends inside the instruction at %+lld", at);
			return -EPROTONOSUPPORT;
		}
		if (err) {
			char b[3 * 4 + 1] = "";
			int bn = 0;

			for (size_t i = 0; i < 4 && pc + i < len; i++)
				bn += snprintf(b + bn, sizeof(b) - (size_t)bn, "%s%02x",
					       i ? " " : "", code[pc + i]);
			text_say(why, wlen, "instruction not understood at %+lld (%s)",
				 at, b);
			return -EPROTONOSUPPORT;
		}
		step(&in, &s, n);
		if (!id)
			for (unsigned int i = 0; i < s.nst; i++)
				if (s.st[i].what == S_ID) {
					id = &s.st[i];
					break;
				}
		if (id && (r = judge(&s, id, n, in.flow == F_END, &off, &k, why, wlen)))
			break;
		switch (in.flow) {
		case F_END:
			if (!s.saw_tp && s.calls)
				text_say(
					why, wlen,
					"no TLS access before the ret at %+lld, only calls (an "
					"unoptimised build? profile a release build)",
					at);
			else
				text_say(
					why, wlen,
					"no store of the id (%%rdi) into TLS before the ret at %+lld",
					at);
			return -EPROTONOSUPPORT;
		case F_JMP: {
			int64_t to = (int64_t)(pc + in.len) + in.rel;

			if (to < 0 || (uint64_t)to >= len) {
				text_say(why, wlen, "the jump at %+lld leaves the code",
					 at);
				return -EPROTONOSUPPORT;
			}
			pc = (size_t)to;
			break;
		}
		default:
			pc += in.len;
		}
	}
	if (r < 0)
		return -EPROTONOSUPPORT;
	if (task_off)
		*task_off = off;
	if (kind)
		*kind = k;
	return 0;
}

int tokio_decode_enter(const uint8_t *code, size_t len, int64_t *task_off, uint32_t *kind)
{
	return decode(code, len, 0, task_off, kind, NULL, 0);
}

/* ---- the executable ---------------------------------------------------- */

#define MAX_CONTEXTS 4
#define MAX_VERSIONS 8

struct version {
	unsigned int major, minor, patch, count;
};

struct tls_sym {
	uint64_t value, size;
};

/* The "/tokio-X.Y.Z/" source paths in @p: counted into @v. */
static void count_versions(const char *p, size_t n, struct version *v, unsigned int *nv)
{
	static const char key[] = "/tokio-";
	const char *end = p + n, *q = p;

	while ((q = memmem(q, (size_t)(end - q), key, sizeof(key) - 1))) {
		unsigned long x[3];
		const char *c = q + sizeof(key) - 1;
		int ok = 1;

		q = c;
		for (int i = 0; i < 3 && ok; i++) {
			x[i] = 0;
			if (c >= end || *c < '0' || *c > '9')
				ok = 0;
			while (ok && c < end && *c >= '0' && *c <= '9' && x[i] < 100000)
				x[i] = x[i] * 10 + (unsigned long)(*c++ - '0');
			if (ok && c < end && *c == (i < 2 ? '.' : '/'))
				c++;
			else
				ok = 0;
		}
		if (!ok)
			continue;
		for (unsigned int i = 0; i <= *nv && i < MAX_VERSIONS; i++) {
			if (i == *nv) {
				v[i] = (struct version){(unsigned int)x[0],
							(unsigned int)x[1],
							(unsigned int)x[2], 0};
				(*nv)++;
			}
			if (v[i].major == x[0] && v[i].minor == x[1] &&
			    v[i].patch == x[2]) {
				v[i].count++;
				break;
			}
		}
	}
}

static int older(const struct version *v, unsigned int major, unsigned int minor)
{
	return v->major < major || (v->major == major && v->minor < minor);
}

struct found {
	struct version ver; /* count 0: none */
	Elf_Scn *symtab;
	struct tls_sym ctx[MAX_CONTEXTS];
	unsigned int nctx;
	uint64_t enter;
	int have_enter;
};

/* The version (from the loaded data) and .symtab */
static void scan_sections(Elf *elf, struct found *f)
{
	struct version v[MAX_VERSIONS];
	unsigned int nv = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			f->symtab = scn;
		/* loaded data only: debug info is not the program */
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    (sh.sh_flags & SHF_EXECINSTR))
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf)
			count_versions(d->d_buf, d->d_size, v, &nv);
	}
	for (unsigned int i = 0; i < nv; i++)
		if (v[i].count > f->ver.count ||
		    (v[i].count == f->ver.count &&
		     !older(&v[i], f->ver.major, f->ver.minor)))
			f->ver = v[i];
}

static void find_symbols(Elf *elf, struct found *f)
{
	Elf_Data *d = elf_getdata(f->symtab, NULL);
	GElf_Shdr sh;
	size_t n;

	if (!d || !gelf_getshdr(f->symtab, &sh) || !sh.sh_entsize)
		return;
	n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || !sym.st_name)
			continue;
		if (GELF_ST_TYPE(sym.st_info) != STT_TLS &&
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		/* legacy and v0 mangling both spell the path this way */
		if (GELF_ST_TYPE(sym.st_info) == STT_TLS && sym.st_size &&
		    strstr(name, "5tokio7runtime7context7CONTEXT") &&
		    f->nctx < MAX_CONTEXTS) {
			f->ctx[f->nctx].value = sym.st_value;
			f->ctx[f->nctx++].size = sym.st_size;
		} else if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && !f->have_enter &&
			   sym.st_shndx != SHN_UNDEF &&
			   strstr(name, "11TaskIdGuard5enter") &&
			   strstr(name, "5tokio")) {
			f->have_enter = 1;
			f->enter = sym.st_value;
		}
	}
}

/* The code section that holds the address @addr: its bytes in *@code,
 * their number returned (0 if none), @addr's offset in them in *@start */
static size_t code_at(Elf *elf, uint64_t addr, const uint8_t **code, size_t *start)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr - sh.sh_addr >= sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr >= d->d_size)
			return 0;
		*code = d->d_buf;
		*start = (size_t)(addr - sh.sh_addr);
		return d->d_size;
	}
	return 0;
}

/* Where the executable's TLS block starts, below the thread pointer
 * (glibc's _dl_determine_tlsoffset for variant II, the first module):
 * 0 and *@off, or -1 without a PT_TLS. */
static int tls_block(Elf *elf, int64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		uint64_t align, first, memsz;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		align = ph.p_align ? ph.p_align : 1;
		if (align & (align - 1))
			return -1;
		first = (0 - (ph.p_vaddr & (align - 1))) & (align - 1);
		memsz = ph.p_memsz > first ? ph.p_memsz : first;
		*off = (int64_t)(((memsz - first + align - 1) & ~(align - 1)) + first);
		return 0;
	}
	return -1;
}

static int layout(Elf *elf, const char *path, struct tokio_layout *out, char *why,
		  size_t len)
{
	struct found f = {.nctx = 0};
	const struct tls_sym *ctx = NULL;
	const uint8_t *code = NULL;
	char ver[24] = "";
	const char *tv;
	int64_t block, slot;
	uint32_t kind;
	unsigned int width;
	GElf_Ehdr eh;
	size_t n, start;
	char dwhy[160];

	if (!gelf_getehdr(elf, &eh)) {
		text_say(why, len, "'%s' is not an ELF file", path);
		return -ENOEXEC;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		text_say(why, len, "'%s' is not an x86-64 ELF file (machine %u)", path,
			 (unsigned int)eh.e_machine);
		return -ENOTSUP;
	}
	scan_sections(elf, &f);
	if (f.ver.count)
		snprintf(ver, sizeof(ver), "%u.%u.%u", f.ver.major, f.ver.minor,
			 f.ver.patch);
	tv = ver[0] ? ver : "(version unknown)";
	if (f.ver.count && older(&f.ver, 1, 22)) {
		text_say(
			why, len,
			"tokio %s in '%s' is older than 1.22 and keeps no per-thread task id: "
			"upgrade tokio",
			ver, path);
		return -EPROTONOSUPPORT;
	}
	if (!f.symtab) {
		if (!f.ver.count) {
			text_say(why, len,
				 "no tokio in '%s': no .symtab and no tokio source path",
				 path);
			return -ENOENT;
		}
		text_say(
			why, len,
			"'%s' (tokio %s) is stripped, no .symtab: rebuild without `strip` "
			"(cargo's default keeps .symtab)",
			path, ver);
		return -ENODATA;
	}
	find_symbols(elf, &f);
	if (!f.nctx) {
		if (f.ver.count)
			text_say(why, len,
				 "'%s' has tokio %s but not its runtime (no thread-local "
				 "tokio::runtime::context::CONTEXT)",
				 path, ver);
		else
			text_say(why, len,
				 "no tokio in '%s': no tokio::runtime::context::CONTEXT",
				 path);
		return -ENOENT;
	}
	if (!f.have_enter) {
		text_say(
			why, len,
			"tokio %s in '%s' has no TaskIdGuard::enter in .symtab: tokio older than "
			"1.22, or enter was inlined",
			tv, path);
		return -EPROTONOSUPPORT;
	}
	if (tls_block(elf, &block)) {
		text_say(why, len,
			 "'%s' has tokio's CONTEXT but no usable PT_TLS segment", path);
		return -EPROTONOSUPPORT;
	}
	n = code_at(elf, f.enter, &code, &start);
	if (!n) {
		text_say(why, len,
			 "TaskIdGuard::enter at 0x%llx in '%s' is not in a code section",
			 (unsigned long long)f.enter, path);
		return -EPROTONOSUPPORT;
	}
	dwhy[0] = '\0';
	if (decode(code, n, start, &slot, &kind, dwhy, sizeof(dwhy))) {
		text_say(why, len,
			 "tokio %s: TaskIdGuard::enter at 0x%llx not recognised: %s", tv,
			 (unsigned long long)f.enter, dwhy);
		return -EPROTONOSUPPORT;
	}
	/* the ELF's own arithmetic must agree: the slot inside CONTEXT */
	width = kind == TOKIO_ID_TAGGED ? 16 : 8;
	for (unsigned int i = 0; i < f.nctx && !ctx; i++) {
		int64_t at = -block + (int64_t)f.ctx[i].value;

		if (slot >= at && slot + width <= at + (int64_t)f.ctx[i].size)
			ctx = &f.ctx[i];
	}
	if (!ctx) {
		int64_t at = -block + (int64_t)f.ctx[0].value;

		text_say(
			why, len,
			"tokio %s: TaskIdGuard::enter stores the task id at fs%c%#llx, outside "
			"CONTEXT at fs%c%#llx (%llu bytes): layout not trusted",
			tv, FS_OFF(slot), FS_OFF(at), (unsigned long long)f.ctx[0].size);
		return -EPROTONOSUPPORT;
	}
	if (f.ver.count && f.ver.major == 1 &&
	    (kind == TOKIO_ID_TAGGED) != older(&f.ver, 1, 40)) {
		text_say(
			why, len,
			"tokio %s: TaskIdGuard::enter stores a %s id, but tokio %s 1.40 keeps a %s "
			"one: layout not trusted",
			ver,
			kind == TOKIO_ID_TAGGED ? "tagged 16-byte" : "non-zero 8-byte",
			kind == TOKIO_ID_TAGGED ? "since" : "before",
			kind == TOKIO_ID_TAGGED ? "non-zero 8-byte" : "tagged 16-byte");
		return -EPROTONOSUPPORT;
	}
	out->task_off = slot;
	out->kind = kind;
	memcpy(out->version, ver, sizeof(out->version));
	out->enter_addr = f.enter;
	return 0;
}

/* @fn on the ELF file @path, opened and closed around it: its return, or
 * -errno (and why) where the file cannot be opened or is not ELF */
static int with_elf(const char *path,
		    int (*fn)(Elf *, const char *, void *, char *, size_t), void *out,
		    char *why, size_t len)
{
	Elf *elf;
	int fd, r;

	if (why && len)
		why[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		text_say(why, len, "cannot open '%s': %s", path, strerror(-r));
		return r;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		text_say(why, len, "'%s' is not an ELF file", path);
		r = -ENOEXEC;
	} else {
		r = fn(elf, path, out, why, len);
	}
	elf_end(elf);
	close(fd);
	return r;
}

static int layout_fn(Elf *elf, const char *path, void *out, char *why, size_t len)
{
	return layout(elf, path, out, why, len);
}

int tokio_layout_find(const char *path, struct tokio_layout *out, char *why, size_t len)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = with_elf(path, layout_fn, out, why, len);
	if (r)
		memset(out, 0, sizeof(*out));
	return r;
}

/* ---- tier 1's sites --------------------------------------------------- */

/* @vaddr's offset in the file, through the executable PT_LOAD holding it;
 * 0 if none does */
static uint64_t file_offset(Elf *elf, uint64_t vaddr)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_flags & PF_X) && vaddr >= ph.p_vaddr &&
		    vaddr - ph.p_vaddr < ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	return 0;
}

/* The name DWARF gives @die (through an abstract origin or a
 * specification), or NULL */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute at;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &at));
}

/* The first function inlined under @die (depth first, at most @budget DIEs
 * looked at) whose name starts with one of @pfx's, into @buf */
static int find_inlined(Dwarf_Die *die, const char *const *pfx, size_t npfx, char *buf,
			size_t len, int *budget)
{
	Dwarf_Die c;

	if (dwarf_child(die, &c))
		return 0;
	do {
		const char *nm;

		if (--*budget < 0)
			return 0;
		if (dwarf_tag(&c) == DW_TAG_inlined_subroutine && (nm = die_name(&c)))
			for (size_t i = 0; i < npfx; i++)
				if (!strncmp(nm, pfx[i], strlen(pfx[i]))) {
					snprintf(buf, len, "%s", nm);
					return 1;
				}
		if (find_inlined(&c, pfx, npfx, buf, len, budget))
			return 1;
	} while (!dwarf_siblingof(&c, &c));
	return 0;
}

/* The DWARF name of a raw::poll<T,S> instance at @vaddr that says T,
 * "poll<T, S>" (the instance's own, or, for a thunk that only jumps to
 * its Harness::poll, what that has inlined: poll_inner<T, S>), into @buf
 * as "poll<...>"; "" if none */
static void poll_dwarf_name(Elf *elf, Dwarf *dw, uint64_t vaddr, char *buf, size_t len)
{
	static const char *const inl[] = {"poll_inner<", "poll_future<"};
	const uint8_t *code;
	size_t start, n, i;
	Dwarf_Die cu, *scopes = NULL;
	int k, budget = 4096;

	buf[0] = '\0';
	if (!dw)
		return;
	/* a thunk: jmp rel32 or rel8 to Harness::poll, after a frame
	 * pointer's push %rbp; mov %rsp,%rbp; pop %rbp */
	n = code_at(elf, vaddr, &code, &start);
	i = start;
	if (i < n && code[i] == 0x55)
		i++;
	if (i + 3 <= n && !memcmp(code + i, "\x48\x89\xe5", 3))
		i += 3;
	if (i < n && code[i] == 0x5d)
		i++;
	if (n > i + 5 && code[i] == 0xe9)
		vaddr += (i - start) + 5 +
			 (uint64_t)(int64_t)(int32_t)((uint32_t)code[i + 1] |
						      (uint32_t)code[i + 2] << 8 |
						      (uint32_t)code[i + 3] << 16 |
						      (uint32_t)code[i + 4] << 24);
	else if (n > i + 2 && code[i] == 0xeb)
		vaddr += (i - start) + 2 + (uint64_t)(int64_t)(int8_t)code[i + 1];
	if (!dwarf_addrdie(dw, vaddr, &cu))
		return;
	k = dwarf_getscopes(&cu, vaddr, &scopes);
	for (int j = 0; j < k; j++) {
		const char *nm;
		char t[1024];

		if (dwarf_tag(&scopes[j]) != DW_TAG_subprogram)
			continue;
		nm = die_name(&scopes[j]);
		if (nm && !strncmp(nm, "poll<", 5))
			snprintf(buf, len, "%s", nm);
		else if (find_inlined(&scopes[j], inl, 2, t, sizeof(t), &budget))
			snprintf(buf, len, "poll<%s", strchr(t, '<') + 1);
		break;
	}
	free(scopes);
}

static int sites(Elf *elf, const char *path, struct tokio_sites *out, Dwarf *dw,
		 char *why, size_t len)
{
	struct found f = {0};
	Elf_Data *d;
	GElf_Shdr sh;
	size_t n, cap = 0;

	scan_sections(elf, &f);
	if (!f.symtab || !(d = elf_getdata(f.symtab, NULL)) ||
	    !gelf_getshdr(f.symtab, &sh) || !sh.sh_entsize) {
		text_say(why, len, "'%s' has no symbol table: no raw::poll to probe",
			 path);
		return -ENOENT;
	}
	n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		uint64_t off;

		if (!gelf_getsym(d, (int)i, &sym) || !sym.st_name ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) ||
		    !strstr(name, "5tokio") || !(off = file_offset(elf, sym.st_value)))
			continue;
		if (strstr(name, "4task3raw4poll")) {
			char dn[1024], task[512];

			/* two arrays on one count: each grows the same way */
			size_t ncap = cap;

			if (LIB_GROW(out->poll, cap, out->npoll + 1) ||
			    LIB_GROW(out->name, ncap, out->npoll + 1))
				return -ENOMEM;
			poll_dwarf_name(elf, dw, sym.st_value, dn, sizeof(dn));
			lib_tokio_poll_name(dn, task, sizeof(task));
			out->name[out->npoll] = strdup(task);
			if (!out->name[out->npoll])
				return -ENOMEM;
			out->poll[out->npoll++] = off;
		} else if (strstr(name, "5waker11wake_by_val")) {
			out->wake_by_val = off;
		} else if (strstr(name, "5waker11wake_by_ref")) {
			out->wake_by_ref = off;
		}
	}
	if (!out->npoll) {
		text_say(why, len, "no tokio::runtime::task::raw::poll in '%s'", path);
		return -ENOENT;
	}
	return 0;
}

/* sites() with the file's DWARF, where it has some, for the names */
static int sites_dwarf(Elf *elf, const char *path, void *out, char *why, size_t len)
{
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	int r = sites(elf, path, out, dw, why, len);

	if (dw)
		dwarf_end(dw);
	return r;
}

int tokio_sites_find(const char *path, struct tokio_sites *out, char *why, size_t len)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = with_elf(path, sites_dwarf, out, why, len);
	if (r)
		tokio_sites_release(out);
	return r;
}

void tokio_sites_release(struct tokio_sites *s)
{
	for (size_t i = 0; s->name && i < s->npoll; i++)
		free(s->name[i]);
	free(s->name);
	free(s->poll);
	memset(s, 0, sizeof(*s));
}
