// SPDX-License-Identifier: MIT
/*
 * unwind.c - CFI unwinding of a copy of a user stack.
 *
 * At a context switch the kernel gives the user registers and, on request,
 * a few KiB of the user stack above the SP. The frame-pointer chain the
 * kernel walks loses whatever was called through code built without frame
 * pointers (Debian's glibc): starting in nanosleep() it jumps from the
 * syscall straight to the caller's caller. Stepping the innermost frames
 * with the modules' DWARF CFI recovers them.
 *
 * libdwfl's own unwinder (dwfl_attach_state/dwfl_thread_getframes) wants
 * one Dwfl with every module at its runtime address; the symbolizer keeps
 * one Dwfl per file at link-time addresses instead (see symbolize.c), so
 * this steps frames itself: per frame, the mapping gives the object and
 * (through its PT_LOADs) the bias at the pc, dwarf_cfi_addrframe() the
 * rules, and a small DWARF expression evaluator applies them to the
 * registers and the stack copy.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"

#if defined(__x86_64__)
#define REG_SP	7
#define REG_FP	6
#define NREGS	17 /* 0-15 and 16, the return address column */
#define REG_PC	16 /* ... which expressions read as the frame's rip */
#define ARCH_OK 1
#elif defined(__aarch64__)
#define REG_SP	31
#define REG_FP	29
#define NREGS	32
#define ARCH_OK 1
#else
#define ARCH_OK 0
#define REG_SP	0
#define REG_FP	0
#define NREGS	1
#endif

struct frame_state {
	uint64_t reg[UNWIND_NREGS];
	uint32_t valid;
};

struct mem {
	const unsigned char *base;
	uint64_t start; /* the SP the copy begins at */
	size_t len;
	uint64_t hi; /* highest byte read, + 1, relative to start */
	int fault;
};

static int mem_read(struct mem *m, uint64_t addr, unsigned int size, uint64_t *out)
{
	uint64_t v = 0;

	if (addr < m->start || addr - m->start > m->len ||
	    m->len - (addr - m->start) < size) {
		m->fault = 1;
		return -1;
	}
	memcpy(&v, m->base + (addr - m->start), size); /* little endian */
	*out = v;
	if (addr - m->start + size > m->hi)
		m->hi = addr - m->start + size;
	return 0;
}

static int reg_get(const struct frame_state *f, uint64_t regno, uint64_t *out)
{
	if (regno >= UNWIND_NREGS || !(f->valid & (1u << regno)))
		return -1;
	*out = f->reg[regno];
	return 0;
}

/* Index of the op at DWARF byte offset @off, for DW_OP_skip/bra. */
static size_t op_at(const Dwarf_Op *ops, size_t nops, Dwarf_Word off)
{
	size_t i;

	for (i = 0; i < nops; i++)
		if (ops[i].offset == off)
			return i;
	return nops + 1; /* past the end: stops with an error */
}

#define STACK_MAX 16

/*
 * Evaluate @ops with @cfa pushed first when @push_cfa (register rules are
 * relative to it). *@is_value tells whether the result is a value (it
 * ended in DW_OP_stack_value or named a register) or an address to read.
 * 0 or -1 for anything outside the subset CFI uses in practice.
 */
static int eval(const Dwarf_Op *ops, size_t nops, const struct frame_state *f,
		struct mem *m, uint64_t cfa, int push_cfa, uint64_t *out, int *is_value)
{
	uint64_t st[STACK_MAX], a, b;
	size_t sp = 0, i = 0, steps = 0;

	*is_value = 0;
	if (push_cfa)
		st[sp++] = cfa;
#define PUSH(x)                                                                          \
	do {                                                                             \
		uint64_t v_ = (x);                                                       \
		if (sp == STACK_MAX)                                                     \
			return -1;                                                       \
		st[sp++] = v_;                                                           \
	} while (0)
#define POP(x)                                                                           \
	do {                                                                             \
		if (!sp)                                                                 \
			return -1;                                                       \
		(x) = st[--sp];                                                          \
	} while (0)
	while (i < nops) {
		const Dwarf_Op *op = &ops[i++];
		uint8_t atom = op->atom;

		if (++steps > 256)
			return -1; /* a loop of DW_OP_skip */
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH((uint64_t)(atom - DW_OP_lit0));
		} else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			if (reg_get(f, atom - DW_OP_breg0, &a))
				return -1;
			PUSH(a + op->number);
		} else if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
			if (reg_get(f, atom - DW_OP_reg0, &a))
				return -1;
			*out = a;
			*is_value = 1;
			return 0;
		} else {
			switch (atom) {
			case DW_OP_regx:
				if (reg_get(f, op->number, &a))
					return -1;
				*out = a;
				*is_value = 1;
				return 0;
			case DW_OP_bregx:
				if (reg_get(f, op->number, &a))
					return -1;
				PUSH(a + op->number2);
				break;
			case DW_OP_call_frame_cfa:
				PUSH(cfa);
				break;
			case DW_OP_addr:
			case DW_OP_const1u:
			case DW_OP_const1s:
			case DW_OP_const2u:
			case DW_OP_const2s:
			case DW_OP_const4u:
			case DW_OP_const4s:
			case DW_OP_const8u:
			case DW_OP_const8s:
			case DW_OP_constu:
			case DW_OP_consts:
				PUSH(op->number);
				break;
			case DW_OP_plus_uconst:
				POP(a);
				PUSH(a + op->number);
				break;
			case DW_OP_deref:
				POP(a);
				if (mem_read(m, a, 8, &b))
					return -1;
				PUSH(b);
				break;
			case DW_OP_deref_size:
				POP(a);
				if (op->number < 1 || op->number > 8 ||
				    mem_read(m, a, (unsigned int)op->number, &b))
					return -1;
				PUSH(b);
				break;
			case DW_OP_dup:
				if (!sp)
					return -1;
				PUSH(st[sp - 1]);
				break;
			case DW_OP_drop:
				POP(a);
				break;
			case DW_OP_over:
				if (sp < 2)
					return -1;
				PUSH(st[sp - 2]);
				break;
			case DW_OP_pick:
				if (op->number >= sp)
					return -1;
				PUSH(st[sp - 1 - op->number]);
				break;
			case DW_OP_swap:
				POP(a);
				POP(b);
				PUSH(a);
				PUSH(b);
				break;
			case DW_OP_neg:
				POP(a);
				PUSH(-a);
				break;
			case DW_OP_not:
				POP(a);
				PUSH(~a);
				break;
			case DW_OP_abs:
				POP(a);
				PUSH((int64_t)a < 0 ? -a : a);
				break;
			case DW_OP_plus:
			case DW_OP_minus:
			case DW_OP_mul:
			case DW_OP_and:
			case DW_OP_or:
			case DW_OP_xor:
			case DW_OP_shl:
			case DW_OP_shr:
			case DW_OP_shra:
			case DW_OP_eq:
			case DW_OP_ne:
			case DW_OP_lt:
			case DW_OP_le:
			case DW_OP_gt:
			case DW_OP_ge:
			case DW_OP_div:
			case DW_OP_mod:
				POP(b);
				POP(a);
				switch (atom) {
				case DW_OP_plus:
					a += b;
					break;
				case DW_OP_minus:
					a -= b;
					break;
				case DW_OP_mul:
					a *= b;
					break;
				case DW_OP_and:
					a &= b;
					break;
				case DW_OP_or:
					a |= b;
					break;
				case DW_OP_xor:
					a ^= b;
					break;
				case DW_OP_shl:
					a = b < 64 ? a << b : 0;
					break;
				case DW_OP_shr:
					a = b < 64 ? a >> b : 0;
					break;
				case DW_OP_shra:
					a = (uint64_t)((int64_t)a >> (b < 64 ? b : 63));
					break;
				case DW_OP_eq:
					a = a == b;
					break;
				case DW_OP_ne:
					a = a != b;
					break;
				case DW_OP_lt:
					a = (int64_t)a < (int64_t)b;
					break;
				case DW_OP_le:
					a = (int64_t)a <= (int64_t)b;
					break;
				case DW_OP_gt:
					a = (int64_t)a > (int64_t)b;
					break;
				case DW_OP_ge:
					a = (int64_t)a >= (int64_t)b;
					break;
				case DW_OP_div:
					if (!b)
						return -1;
					a = (uint64_t)((int64_t)a / (int64_t)b);
					break;
				case DW_OP_mod:
					if (!b)
						return -1;
					a %= b;
					break;
				}
				PUSH(a);
				break;
			case DW_OP_skip:
				i = op_at(ops, nops,
					  op->offset + 3 + (int16_t)op->number);
				break;
			case DW_OP_bra:
				POP(a);
				if (a)
					i = op_at(ops, nops,
						  op->offset + 3 + (int16_t)op->number);
				break;
			case DW_OP_nop:
				break;
			case DW_OP_stack_value:
				POP(a);
				*out = a;
				*is_value = 1;
				return 0;
			default:
				return -1;
			}
		}
	}
#undef PUSH
#undef POP
	if (i != nops || !sp)
		return -1;
	*out = st[sp - 1];
	return 0;
}

/* The rules at @pc (a runtime address) of @c: eh_frame first, then
 * .debug_frame. Caller frees. */
static Dwarf_Frame *frame_at(const struct symbol_cfi *c, uint64_t pc)
{
	Dwarf_Frame *fr = NULL;

	if (c->eh && dwarf_cfi_addrframe(c->eh, pc - c->eh_bias, &fr) == 0)
		return fr;
	if (c->debug && dwarf_cfi_addrframe(c->debug, pc - c->debug_bias, &fr) == 0)
		return fr;
	return NULL;
}

/*
 * Rules by pc. Nearly every frame's rules are simple: the CFA is a register
 * plus an offset, and each register is unchanged, undefined, or saved at
 * the CFA plus an offset. Those are kept per lookup address (direct
 * mapped, for the mappings' generation they were read under), so a stack
 * seen before costs no libdw lookup, no allocation and no expression: an
 * unwind can then go as far as the copy reaches for little more than the
 * memory reads. Other rules take libdw's path every time.
 */
#define UC_SLOTS   4096
#define RULE_SAME  INT32_MIN
#define RULE_UNDEF (INT32_MIN + 1)
#define RULE_CFA   (INT32_MIN + 2) /* the CFA itself (libdw's rule for SP) */

struct rules {
	uint64_t pc, gen; /* gen: the mappings' generation + 1 (0: empty) */
	uint32_t obj;
	uint8_t cfa_reg, ra_reg, sig;
	int32_t cfa_off;
	int32_t off[NREGS]; /* saved at CFA + off, or RULE_* */
};

struct unwind_cache {
	struct rules slot[UC_SLOTS];
};

static struct rules *uc_slot(struct symbolizer *s, uint64_t pc, uint64_t *gen)
{
	struct unwind_cache **uc = symbolizer_ucache(s, gen);

	if (!*uc && !(*uc = calloc(1, sizeof(**uc))))
		return NULL;
	return &(*uc)->slot[(pc ^ pc >> 12) & (UC_SLOTS - 1)];
}

/* @ops of a CFA as a register plus an offset: 0, or -1 if it is more. */
static int simple_cfa(const Dwarf_Op *ops, size_t nops, struct rules *r)
{
	if (nops != 1)
		return -1;
	if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		r->cfa_reg = ops[0].atom - DW_OP_breg0;
	} else if (ops[0].atom == DW_OP_bregx && ops[0].number < NREGS) {
		r->cfa_reg = (uint8_t)ops[0].number;
		if ((int64_t)ops[0].number2 != (int32_t)ops[0].number2)
			return -1;
		r->cfa_off = (int32_t)ops[0].number2;
		return 0;
	} else {
		return -1;
	}
	if (r->cfa_reg >= NREGS || (int64_t)ops[0].number != (int32_t)ops[0].number)
		return -1;
	r->cfa_off = (int32_t)ops[0].number;
	return 0;
}

/* A register's rule from libdw's ops: same value, undefined, saved at
 * CFA + N (call_frame_cfa[, plus_uconst N]), or the CFA itself
 * (call_frame_cfa, stack_value). 0, or -1 if it is more. */
static int simple_reg(const Dwarf_Op *ops, size_t nops, int32_t *off)
{
	if (!nops) {
		*off = ops ? RULE_UNDEF : RULE_SAME;
		return 0;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (nops == 1) {
		*off = 0;
		return 0;
	}
	if (nops == 2 && ops[1].atom == DW_OP_stack_value) {
		*off = RULE_CFA;
		return 0;
	}
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst &&
	    (int64_t)ops[1].number == (int32_t)ops[1].number &&
	    (int32_t)ops[1].number > RULE_CFA) {
		*off = (int32_t)ops[1].number;
		return 0;
	}
	return -1;
}

/* What every step ends with: the ABIs define the caller's SP as the CFA
 * (libdw says "same"), no return address is the outermost frame, and a
 * stack that does not grow towards the caller is a loop. */
static int step_finish(struct frame_state *f, struct frame_state *caller, uint64_t cfa,
		       int ra_reg, int sig, uint64_t *pc, enum unwind_end *why,
		       int *signal)
{
	uint64_t ra;

	if (REG_SP < NREGS) {
		caller->reg[REG_SP] = cfa;
		caller->valid |= 1u << REG_SP;
	}
	if (!(caller->valid & (1u << ra_reg)) || !(ra = caller->reg[ra_reg])) {
		*why = UNWIND_END_OUTERMOST;
		return -1;
	}
	if (!sig && (f->valid & (1u << REG_SP)) && cfa <= f->reg[REG_SP]) {
		*why = UNWIND_END_BAD;
		return -1;
	}
	*f = *caller;
	*pc = ra;
	*signal = sig;
	return 0;
}

/* One step by simple rules @r. */
static int step_rules(const struct rules *r, struct frame_state *f, uint64_t *pc,
		      struct mem *m, enum unwind_end *why, int *signal)
{
	struct frame_state caller;
	uint64_t cfa, v;
	int i;

	*why = UNWIND_END_BAD;
	if (!(f->valid & (1u << r->cfa_reg)))
		return -1;
	cfa = f->reg[r->cfa_reg] + (int64_t)r->cfa_off;
	memset(&caller, 0, sizeof(caller));
	for (i = 0; i < NREGS; i++) {
		if (r->off[i] == RULE_UNDEF)
			continue;
		if (r->off[i] == RULE_SAME || r->off[i] == RULE_CFA) {
			if (r->off[i] == RULE_CFA) {
				caller.reg[i] = cfa;
				caller.valid |= 1u << i;
			} else if (f->valid & (1u << i)) {
				caller.reg[i] = f->reg[i];
				caller.valid |= 1u << i;
			}
			continue;
		}
		m->fault = 0;
		if (mem_read(m, cfa + (int64_t)r->off[i], 8, &v)) {
			if (i == r->ra_reg) {
				*why = UNWIND_END_MEMORY;
				return -1;
			}
			continue; /* as step() does: a register nobody may need */
		}
		caller.reg[i] = v;
		caller.valid |= 1u << i;
	}
	return step_finish(f, &caller, cfa, r->ra_reg, r->sig, pc, why, signal);
}

/* One step: the caller's registers from @f at @pc. 0, or the reason to
 * stop. @lookup is the address to find the rules at (pc - 1 for a return
 * address: the call may be the last instruction of a function). */
static int step(struct symbolizer *s, struct frame_state *f, uint64_t *pc, int exact,
		struct mem *m, uint32_t *obj, enum unwind_end *why, int *signal)
{
	struct symbol_cfi c;
	struct frame_state caller;
	struct rules *slot, nr;
	Dwarf_Frame *fr;
	Dwarf_Op *ops, ops_mem[3];
	size_t nops;
	uint64_t lookup = exact ? *pc : *pc - 1, cfa, v, gen = 0;
	int is_value, ra_reg, r, simple;
	bool sig = false;

	slot = uc_slot(s, lookup, &gen);
	if (slot && slot->pc == lookup && slot->gen == gen + 1) {
		*obj = slot->obj;
		return step_rules(slot, f, pc, m, why, signal);
	}
	r = symbolizer__cfi_at(s, lookup, &c);
	*obj = c.obj;
	if (r) {
		*why = UNWIND_END_NO_CFI;
		return -1;
	}
	fr = frame_at(&c, lookup);
	if (!fr) {
		*why = UNWIND_END_NO_CFI;
		return -1;
	}
	*why = UNWIND_END_BAD;
	ra_reg = dwarf_frame_info(fr, NULL, NULL, &sig);
	if (ra_reg < 0 || ra_reg >= NREGS)
		goto fail;
	if (dwarf_frame_cfa(fr, &ops, &nops) || !nops)
		goto fail;
	memset(&nr, 0, sizeof(nr));
	simple = !simple_cfa(ops, nops, &nr);
	if (eval(ops, nops, f, m, 0, 0, &cfa, &is_value))
		goto fail_mem;
	memset(&caller, 0, sizeof(caller));
	for (r = 0; r < NREGS; r++) {
		if (dwarf_frame_register(fr, r, ops_mem, &ops, &nops))
			goto fail;
		if (simple && simple_reg(ops, nops, &nr.off[r]))
			simple = 0;
		if (!nops && !ops) {
			/* same value: unchanged by this frame */
			if (f->valid & (1u << r)) {
				caller.reg[r] = f->reg[r];
				caller.valid |= 1u << r;
			}
			continue;
		}
		if (!nops)
			continue; /* undefined */
		if (eval(ops, nops, f, m, cfa, 1, &v, &is_value)) {
			if (r == ra_reg || r == REG_FP)
				goto fail_mem;
			continue; /* a register nobody may need */
		}
		if (!is_value && mem_read(m, v, 8, &v)) {
			if (r == ra_reg)
				goto fail_mem;
			continue;
		}
		caller.reg[r] = v;
		caller.valid |= 1u << r;
	}
	free(fr);
	if (simple && slot) {
		nr.pc = lookup;
		nr.gen = gen + 1;
		nr.obj = c.obj;
		nr.ra_reg = (uint8_t)ra_reg;
		nr.sig = sig;
		*slot = nr;
	}
	return step_finish(f, &caller, cfa, ra_reg, sig, pc, why, signal);
fail_mem:
	if (m->fault)
		*why = UNWIND_END_MEMORY;
fail:
	free(fr);
	return -1;
}

int symbolizer__unwind(struct symbolizer *s, const struct unwind_regs *regs,
		       const void *stack, size_t stack_len, uint64_t *pcs,
		       unsigned int max, struct unwind_result *res)
{
	struct frame_state f;
	struct mem m;
	uint64_t pc = regs->pc;
	uint32_t obj, leaf_obj = 0;
	int exact = 1, sig = 0;

	memset(res, 0, sizeof(*res));
	if (!ARCH_OK)
		return -ENOTSUP;
	if (!pc || !(regs->valid & (1u << REG_SP)) || !max)
		return -EINVAL;
	memset(&f, 0, sizeof(f));
	memcpy(f.reg, regs->reg, sizeof(f.reg));
	f.valid = regs->valid;
	m = (struct mem){
		.base = stack, .start = regs->reg[REG_SP], .len = stack ? stack_len : 0};
	pcs[res->n++] = pc;
	for (;;) {
		enum unwind_end why;

		if (res->n == max) {
			res->end = UNWIND_END_MAX;
			break;
		}
		m.fault = 0;
#ifdef REG_PC
		/* a PLT entry's CFA depends on where in it the pc is
		 * (DW_OP_breg16): the frame's rip is its pc */
		f.reg[REG_PC] = pc;
		f.valid |= 1u << REG_PC;
#endif
		if (step(s, &f, &pc, exact, &m, &obj, &why, &sig)) {
			res->end = why;
			if (res->n == 1)
				leaf_obj = obj;
			break;
		}
		if (res->n == 1)
			leaf_obj = obj;
		/* the caller's pc belongs to whichever object holds it */
		{
			struct symbol_cfi c;

			symbolizer__cfi_at(s, sig ? pc : pc - 1, &c);
			if (!res->past_leaf_module && c.obj != leaf_obj)
				res->past_leaf_module = res->n;
		}
		pcs[res->n++] = pc;
		exact = sig; /* a signal frame's "return address" is exact */
	}
	res->stack_used = m.hi;
	return 0;
}
