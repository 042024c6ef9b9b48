// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the /proc/PID/maps parser of the symbolizer, the
 * mapping table it fills (a new mapping replaces the ones it overlaps)
 * and lookups of addresses in and around every mapping.
 *
 * Per input, two symbolizers of no process (symbolizer__new_offline: one
 * allocation each, no file opened, no maps re-read) take the text: one
 * whole through symbolizer_parse_maps(), as symbolizer__refresh() hands it
 * over, the other line by line through symbol_maps_line() and
 * symbolizer__add_mapping(), each mapping looked up as soon as it is
 * added; then both must hold what a model of the table holds, at the
 * edges of every mapping ever added. The kallsyms snapshot that kernel
 * addresses go through is loaded once, in LLVMFuzzerInitialize.
 *
 * The checks are not instrumented for coverage (HARNESS): the fuzzer is
 * steered by the library's code alone, and checking a table costs less
 * than filling it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms/kallsyms.h"
#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"

#define HARNESS __attribute__((no_sanitize("coverage")))

static struct kallsyms *ksyms; /* NULL if /proc/kallsyms is unusable */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (kallsyms__load(NULL, &ksyms))
		ksyms = NULL;
	return 0;
}

struct model_map {
	uint64_t start, end, pgoff;
	const char *path; /* not NUL-terminated: without " (deleted)" */
	size_t plen;
};

/* What the table must hold: v, n (no two overlap); every mapping added. */
struct model {
	struct model_map *v; /* in no order until model_sort() */
	size_t n;
	struct model_map *all; /* in the order added */
	size_t nall;
};

/* What symbolizer__add_mapping() does to the table: the mappings that
 * overlap @m go, @m comes in. */
HARNESS static void model_add(struct model *md, const struct model_map *m)
{
	size_t i, k = 0;

	for (i = 0; i < md->n; i++)
		if (md->v[i].end <= m->start || md->v[i].start >= m->end)
			md->v[k++] = md->v[i];
	md->v[k++] = *m;
	md->n = k;
}

HARNESS static int cmp_start(const void *pa, const void *pb)
{
	const struct model_map *a = pa, *b = pb;

	return a->start < b->start ? -1 : a->start > b->start;
}

HARNESS static void model_sort(struct model *md)
{
	qsort(md->v, md->n, sizeof(*md->v), cmp_start);
}

/* The mapping of the sorted model that holds @addr, or NULL. */
HARNESS static const struct model_map *model_at(const struct model *md, uint64_t addr)
{
	size_t lo = 0, hi = md->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (md->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < md->v[lo - 1].end ? &md->v[lo - 1] : NULL;
}

/* Resolving @addr in @s must give @want (NULL: no mapping). */
HARNESS static void check_addr(struct symbolizer *s, const struct model_map *want,
			       uint64_t addr)
{
	struct trace_frame f;
	int err = symbolizer__resolve(s, addr, &f);

	if (f.addr != addr)
		abort();
	if (symbol_is_kernel(addr)) {
		/* through the kallsyms snapshot, whatever the table holds */
		if (!f.kernel || (err && err != -ENOENT) || (!err && !f.sym))
			abort();
		return;
	}
	if (f.kernel)
		abort();
	if (!want) {
		/* and no perf map either */
		if (err != -ENOENT || f.module || f.sym)
			abort();
		return;
	}
	/* a module never opened: its path and the file offset */
	if (err || f.sym || !f.module || strlen(f.module) != want->plen ||
	    memcmp(f.module, want->path, want->plen) ||
	    f.offset != addr - want->start + want->pgoff)
		abort();
}

/* Around and inside @m, @s must hold what the sorted model holds. */
HARNESS static void check_map(struct symbolizer *s, const struct model *md,
			      const struct model_map *m)
{
	const uint64_t at[] = {m->start - 1, m->start, m->start + (m->end - m->start) / 2,
			       m->end - 1, m->end};

	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
		check_addr(s, model_at(md, at[i]), at[i]);
}

HARNESS static void check_modules(const struct symbolizer *s, size_t nadded)
{
	size_t i, n = symbolizer__nmodules(s);

	for (i = 0; i < n; i++) {
		const char *path, *bid;

		if (symbolizer__module(s, i, &path, &bid) || !path || !bid || *bid ||
		    !symbolizer__module_unreadable(s, i))
			abort();
	}
	if (n > nadded || symbolizer__module(s, n, NULL, NULL) != -EINVAL)
		abort();
}

/* Line by line into @s, cut as symbolizer_parse_maps() cuts them (at
 * '\n'), each mapping looked up once added. The number of mappings added. */
HARNESS static size_t by_line(struct symbolizer *s, char *buf, size_t len,
			      struct model *md)
{
	static const char deleted[] = " (deleted)";
	const size_t dl = sizeof(deleted) - 1;
	char *line, *next;
	size_t nadded = 0;

	for (line = buf; line < buf + len; line = next) {
		struct symbol_maps_line l;
		struct symbol_cfi cfi;
		struct model_map m;
		int err;

		next = memchr(line, '\n', (size_t)(buf + len - line));
		if (next)
			*next++ = '\0';
		else
			next = buf + len;
		err = symbol_maps_line(line, &l);
		if (err == -EINVAL)
			continue;
		if (err && err != -ENOENT)
			abort();
		if (l.path < line || l.path > line + strlen(line))
			abort();
		if (err)
			continue;
		err = symbolizer__add_mapping(s, l.start, l.end, l.pgoff, l.dev, l.ino,
					      l.path);
		if (err == -ENOMEM)
			break;
		if (err == -EINVAL)
			continue; /* an empty range, or a path too long */
		if (err || l.end <= l.start)
			abort();
		m = (struct model_map){
			.start = l.start, .end = l.end, .pgoff = l.pgoff, .path = l.path};
		m.plen = strlen(l.path);
		if (m.plen > dl && !memcmp(m.path + m.plen - dl, deleted, dl))
			m.plen -= dl;
		model_add(md, &m);
		md->all[md->nall++] = m;
		/* the newest mapping holds all of its range */
		check_addr(s, &m, m.start);
		check_addr(s, &m, m.end - 1);
		/* as the unwinder asks: the mapping's object, and no CFI */
		if (!symbol_is_kernel(m.start) &&
		    (symbolizer__cfi_at(s, m.start, &cfi) != -ENOENT ||
		     cfi.obj >= symbolizer__nmodules(s)))
			abort();
		nadded++;
	}
	return nadded;
}

HARNESS int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symbolizer *whole = NULL, *lines = NULL;
	char *wbuf = malloc(size + 1), *lbuf = malloc(size + 1);
	struct model md = {0};
	size_t i, nl = 1, nadded;

	/* the model holds at most one mapping a line */
	for (i = 0; i < size; i++)
		nl += data[i] == '\n';
	md.v = malloc(nl * sizeof(*md.v));
	md.all = malloc(nl * sizeof(*md.all));
	if (!wbuf || !lbuf || !md.v || !md.all ||
	    symbolizer__new_offline(ksyms, &whole) ||
	    symbolizer__new_offline(ksyms, &lines))
		goto out;
	memcpy(wbuf, data, size);
	wbuf[size] = '\0';
	memcpy(lbuf, wbuf, size + 1);

	if (symbolizer_parse_maps(whole, wbuf, size))
		goto out; /* -ENOMEM */
	nadded = by_line(lines, lbuf, size, &md);
	/* every mapping ever added, replaced or not, at its edges */
	model_sort(&md);
	for (i = 0; i < md.nall; i++) {
		check_map(lines, &md, &md.all[i]);
		check_map(whole, &md, &md.all[i]);
	}
	check_modules(lines, nadded);
	check_modules(whole, nadded);
	if (symbolizer__nmodules(whole) != symbolizer__nmodules(lines) ||
	    symbolizer__refresh(whole) != -ESRCH)
		abort();
out:
	symbolizer__free(lines);
	symbolizer__free(whole);
	free(md.all);
	free(md.v);
	free(lbuf);
	free(wbuf);
	return 0;
}
