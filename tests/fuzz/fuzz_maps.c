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
 * symbolizer__add_mapping(), checked against a model of the table after
 * each line; then both must hold the model. The kallsyms snapshot that
 * kernel addresses go through is loaded once, in LLVMFuzzerInitialize.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms/kallsyms.h"
#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"

static struct kallsyms *ksyms; /* NULL if /proc/kallsyms is unusable */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (kallsyms__load(NULL, &ksyms))
		ksyms = NULL;
	return 0;
}

/* The model: the mappings the table must hold, in no order. */
struct model_map {
	uint64_t start, end, pgoff;
	const char *path; /* not NUL-terminated: without " (deleted)" */
	size_t plen;
};

struct model {
	struct model_map *v; /* in the table now */
	size_t n;
	struct model_map *all; /* every mapping added, in order */
	size_t nall;
};

/* What symbolizer__add_mapping() does to the table: the mappings that
 * overlap @m go, @m comes in. */
static void model_add(struct model *md, const struct model_map *m)
{
	size_t i, k = 0;

	for (i = 0; i < md->n; i++)
		if (md->v[i].end <= m->start || md->v[i].start >= m->end)
			md->v[k++] = md->v[i];
	md->v[k++] = *m;
	md->n = k;
}

/* Resolving @addr in @s must give what the model holds there. */
static void check_addr(struct symbolizer *s, const struct model *md, uint64_t addr)
{
	const struct model_map *want = NULL;
	struct trace_frame f;
	int err;
	size_t i;

	err = symbolizer__resolve(s, addr, &f);
	if (f.addr != addr)
		abort();
	if (symbol_is_kernel(addr)) {
		/* through the kallsyms snapshot, whatever the table holds */
		if (!f.kernel || (err && err != -ENOENT) || (!err && !f.sym))
			abort();
		return;
	}
	for (i = 0; i < md->n; i++)
		if (addr - md->v[i].start < md->v[i].end - md->v[i].start)
			want = &md->v[i];
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

static void check_map(struct symbolizer *s, const struct model *md,
		      const struct model_map *m)
{
	check_addr(s, md, m->start - 1);
	check_addr(s, md, m->start);
	check_addr(s, md, m->start + (m->end - m->start) / 2);
	check_addr(s, md, m->end - 1);
	check_addr(s, md, m->end);
}

static void check_modules(const struct symbolizer *s, size_t nadded)
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
 * '\n'), the table checked after each mapping added. The number of
 * mappings added. */
static size_t by_line(struct symbolizer *s, char *buf, size_t len, struct model *md)
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
		m = (struct model_map){.start = l.start,
				       .end = l.end,
				       .pgoff = l.pgoff,
				       .path = l.path,
				       .plen = strlen(l.path)};
		if (m.plen > dl && !memcmp(m.path + m.plen - dl, deleted, dl))
			m.plen -= dl;
		model_add(md, &m);
		md->all[md->nall++] = m;
		check_map(s, md, &m);
		/* as the unwinder asks: the mapping's object, and no CFI */
		if (!symbol_is_kernel(m.start) &&
		    (symbolizer__cfi_at(s, m.start, &cfi) != -ENOENT ||
		     cfi.obj >= symbolizer__nmodules(s)))
			abort();
		nadded++;
	}
	return nadded;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
	/* every mapping ever added, replaced or not, and its edges */
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
