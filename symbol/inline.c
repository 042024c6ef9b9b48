// SPDX-License-Identifier: MIT
/*
 * inline.c - the functions inlined at an address (contract in inline.h).
 *
 * The scopes holding an address are found by a walk down the DIE tree
 * that enters only DIEs whose ranges hold the address (and, from a unit,
 * the namespaces, types and imported units that may own such DIEs). With
 * an index the walk starts at the function holding the address, found by
 * binary search; without, at its unit. libdw's dwarf_getscopes() is not
 * used: it walks the whole unit per address, gives up on the unit at the
 * first DIE whose ranges it cannot read (rustc writes such DIEs), and past
 * the innermost inlined subroutine goes on in the inlined function's
 * abstract definition, where the chain we want goes on in the concrete
 * scopes the code was inlined into.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/inline.h"
#include "lib/grow.h"
#include "lib/search.h"

enum die_kind {
	DIE_OTHER,  /* holds no code */
	DIE_SCOPE,  /* may hold the address itself (has pc ranges) */
	DIE_OWNER,  /* no ranges, but may own DIEs that have them */
	DIE_IMPORT, /* DW_TAG_imported_unit: a partial unit's DIEs go here */
};

static enum die_kind die_kind(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_subprogram:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_lexical_block:
	case DW_TAG_entry_point:
	case DW_TAG_try_block:
	case DW_TAG_catch_block:
	case DW_TAG_with_stmt:
	case DW_TAG_module:
		return DIE_SCOPE;
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return DIE_OWNER;
	case DW_TAG_imported_unit:
		return DIE_IMPORT;
	default:
		return DIE_OTHER;
	}
}

/* One level of the walk: the DIE looked at, and whether it is a scope
 * holding the address (then its siblings are not looked at). */
struct level {
	Dwarf_Die die;
	int holds;
};

/*
 * Walk the children of @root (a unit, or the function holding @pc) down to
 * the innermost scope holding @pc. Returns the number of levels of @lv in
 * use (the last one that innermost scope; levels with holds == 0 are
 * owners on the way), 0 if no scope holds @pc, or -EBADMSG.
 */
static int find_scopes(Dwarf_Die *root, Dwarf_Addr pc, struct level *lv)
{
	int d = 0, r;

	r = dwarf_child(root, &lv[0].die);
	if (r)
		return r < 0 ? -EBADMSG : 0;
	lv[0].holds = 0;
	for (;;) {
		Dwarf_Die *die = &lv[d].die, imported, *parent = NULL;
		Dwarf_Attribute a;

		switch (die_kind(die)) {
		case DIE_SCOPE:
			/* < 0 also for a DIE without ranges (a declaration,
			 * an abstract definition): not a match */
			if (dwarf_haspc(die, pc) > 0) {
				lv[d].holds = 1;
				parent = die;
			}
			break;
		case DIE_OWNER:
			parent = die;
			break;
		case DIE_IMPORT:
			parent = dwarf_formref_die(dwarf_attr(die, DW_AT_import, &a),
						   &imported);
			break;
		case DIE_OTHER:
			break;
		}
		if (parent && d + 1 < SYMBOL_INLINE_MAX_DEPTH) {
			r = dwarf_child(parent, &lv[d + 1].die);
			if (r < 0)
				return -EBADMSG;
			if (r == 0) {
				lv[++d].holds = 0;
				continue;
			}
		}
		if (lv[d].holds)
			return d + 1; /* nothing inside it holds pc */
		/* the next sibling; back up past finished levels */
		for (;;) {
			r = dwarf_siblingof(&lv[d].die, &lv[d].die);
			if (r < 0)
				return -EBADMSG;
			if (r == 0)
				break;
			if (d == 0)
				return 0;
			if (lv[--d].holds)
				return d + 1;
		}
	}
}

/* ---- the index ---------------------------------------------------------- */

/* Ranges looked at below the last one starting at or below an address, in
 * case ranges overlap (they should not). */
#define FN_LOOKBACK 8

struct fn_range {
	uint64_t lo, hi; /* [lo, hi), DWARF addresses */
	Dwarf_Off off;	 /* the DW_TAG_subprogram DIE, in dws[dw] */
	uint32_t dw;
};

struct inline_index {
	struct fn_range *fns; /* sorted by lo */
	size_t n, cap;
	Dwarf **dws; /* [0] the module's; then split units' (.dwo) */
	size_t ndws, dws_cap;
	Dwarf_Addr bias; /* Dwfl address - DWARF address */
};

void inline_index__free(struct inline_index *ix)
{
	if (!ix)
		return;
	free(ix->fns);
	free(ix->dws);
	free(ix);
}

static int add_fn(struct inline_index *ix, Dwarf_Die *fn, uint32_t dw)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	/* none for a declaration or an abstract (inline) definition */
	while ((off = dwarf_ranges(fn, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (LIB_GROW(ix->fns, ix->cap, ix->n + 1))
			return -ENOMEM;
		ix->fns[ix->n++] = (struct fn_range){
			.lo = lo, .hi = hi, .off = dwarf_dieoffset(fn), .dw = dw};
	}
	return 0;
}

/* The functions among the children of @parent, and under the namespaces,
 * types and modules among them. 0 or -ENOMEM; a DIE libdw cannot read
 * ends its list (what came before it is kept). */
static int index_under(struct inline_index *ix, Dwarf_Die *parent, uint32_t dw,
		       unsigned int depth)
{
	Dwarf_Die child;

	if (depth >= SYMBOL_INLINE_MAX_DEPTH || dwarf_child(parent, &child) != 0)
		return 0;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			if (add_fn(ix, &child, dw))
				return -ENOMEM;
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			if (index_under(ix, &child, dw, depth + 1))
				return -ENOMEM;
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int cmp_fn(const void *pa, const void *pb)
{
	const struct fn_range *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Index every unit of @mod (for a skeleton unit, its split unit). */
static int index_build(Dwfl_Module *mod, struct inline_index **out)
{
	struct inline_index *ix = calloc(1, sizeof(*ix));
	Dwarf_CU *cu = NULL;
	Dwarf *dw;
	int err = 0;

	if (!ix)
		return -ENOMEM;
	dw = dwfl_module_getdwarf(mod, &ix->bias);
	if (dw && LIB_GROW(ix->dws, ix->dws_cap, 1))
		err = -ENOMEM;
	if (dw && !err)
		ix->dws[ix->ndws++] = dw;
	while (dw && !err) {
		Dwarf_Die unit, split = {0}, *root = &unit;
		uint8_t type;
		uint32_t id = 0;

		if (dwarf_get_units(dw, cu, &cu, NULL, &type, &unit, NULL) != 0)
			break;
		if (type == DW_UT_type || type == DW_UT_split_type || !unit.addr)
			continue; /* no code in type units */
		if (type == DW_UT_skeleton) {
			Dwarf *sdw;

			if (dwarf_cu_info(cu, NULL, NULL, NULL, &split, NULL, NULL,
					  NULL) ||
			    !split.addr)
				continue; /* its .dwo is missing */
			sdw = dwarf_cu_getdwarf(split.cu);
			if (ix->dws[ix->ndws - 1] != sdw) {
				if (LIB_GROW(ix->dws, ix->dws_cap, ix->ndws + 1)) {
					err = -ENOMEM;
					break;
				}
				ix->dws[ix->ndws++] = sdw;
			}
			id = (uint32_t)(ix->ndws - 1);
			root = &split;
		}
		err = index_under(ix, root, id, 0);
	}
	if (err) {
		inline_index__free(ix);
		return err;
	}
	if (ix->n > 1)
		qsort(ix->fns, ix->n, sizeof(*ix->fns), cmp_fn);
	*out = ix;
	return 0;
}

/* The function holding @pc, or NULL. */
static const struct fn_range *index_find(const struct inline_index *ix, uint64_t pc)
{
	size_t lo = LIB_PARTITION_POINT(0, ix->n, m, ix->fns[m].lo <= pc);
	size_t k, stop;

	stop = lo > FN_LOOKBACK ? lo - FN_LOOKBACK : 0;
	for (k = lo; k-- > stop;)
		if (pc < ix->fns[k].hi)
			return &ix->fns[k];
	return NULL;
}

/* ---- the chain ------------------------------------------------------------ */

/* An inlined subroutine's name: its linkage name (mangled, demangled like
 * the symbol table's), else its name, both through its abstract origin. */
static const char *inline_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n || !*n)
		n = dwarf_formstring(
			dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!n || !*n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return n && *n ? n : "[unnamed inline]";
}

/* Where inlined subroutine @die was called from: the file of its unit's
 * line table its DW_AT_call_file names, and its DW_AT_call_line. */
static void call_site(Dwarf_Die *die, struct trace_inline_src *out)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t nfiles;
	int line;

	*out = (struct trace_inline_src){0};
	if (dwarf_decl_line(die, &line) == 0 && line > 0)
		out->decl_line = (uint32_t)line;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &v) == 0 &&
	    v <= UINT32_MAX)
		out->call_line = (uint32_t)v;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &v) == 0 &&
	    dwarf_diecu(die, &cu, NULL, NULL) &&
	    dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && v < nfiles)
		out->call_file = dwarf_filesrc(files, v, NULL, NULL);
}

static uint32_t decl_line(Dwarf_Die *die)
{
	int line;

	return dwarf_decl_line(die, &line) == 0 && line > 0 ? (uint32_t)line : 0;
}

int symbol__inline_chain(Dwfl_Module *mod, struct inline_index **index, uint64_t addr,
			 const char **names, unsigned int max)
{
	return symbol__inline_sites(mod, index, addr, names, NULL, max, NULL);
}

int symbol__inline_sites(Dwfl_Module *mod, struct inline_index **index, uint64_t addr,
			 const char **names, struct trace_inline_src *sites,
			 unsigned int max, uint32_t *start_line)
{
	struct level lv[SYMBOL_INLINE_MAX_DEPTH];
	Dwarf_Die *root, die, split = {0};
	Dwarf_Addr bias;
	unsigned int n = 0;
	int d, fn = 0;

	if (start_line)
		*start_line = 0;
	if (!mod || (!names && max))
		return -EINVAL;
	if (index) {
		const struct fn_range *f;

		if (!*index) {
			d = index_build(mod, index);
			if (d)
				return d;
		}
		bias = (*index)->bias;
		f = (*index)->n ? index_find(*index, addr - bias) : NULL;
		if (!f || !max)
			return 0;
		if (!dwarf_offdie((*index)->dws[f->dw], f->off, &die))
			return -EBADMSG;
		root = &die;
	} else {
		uint8_t type;

		/* NULL: no DWARF (libdwfl remembers, the next call is
		 * cheap), or no unit covers addr */
		root = dwfl_module_addrdie(mod, addr, &bias);
		if (!root || !max)
			return 0;
		/* split DWARF (-gsplit-dwarf): the DIEs are in the .dwo's */
		if (dwarf_cu_info(root->cu, NULL, &type, NULL, &split, NULL, NULL,
				  NULL) == 0 &&
		    type == DW_UT_skeleton && split.addr)
			root = &split;
	}
	d = find_scopes(root, addr - bias, lv);
	if (d < 0)
		return d;
	/* innermost first, up to the out-of-line function (the root itself
	 * when it is the indexed function) */
	while (d-- > 0 && n < max) {
		int tag;

		if (!lv[d].holds)
			continue;
		tag = dwarf_tag(&lv[d].die);
		if (tag == DW_TAG_subprogram) {
			if (start_line)
				*start_line = decl_line(&lv[d].die);
			fn = 1;
			break;
		}
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		if (sites)
			call_site(&lv[d].die, &sites[n]);
		names[n++] = inline_name(&lv[d].die);
	}
	/* with the index the walk starts inside the function */
	if (!fn && index && start_line)
		*start_line = decl_line(root);
	return (int)n;
}
