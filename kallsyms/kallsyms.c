// SPDX-License-Identifier: MIT
/*
 * kallsyms.c - parse /proc/kallsyms into a sorted table of text symbols.
 *
 * The text is copied once into a buffer owned by the snapshot and names are
 * NUL-terminated in place, so parsing allocates two blocks (the text and the
 * entry array) plus a small module table, whatever the number of lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kallsyms/kallsyms.h"

/* The last symbol of a module (or of the whole table) has no successor to
 * bound it; attribute at most this many bytes to it. Module text is laid
 * out page by page, so anything further is most likely not that symbol. */
#define LAST_SYMBOL_CAP (64 * 1024)

#define CORE_MODULE 0 /* mods[0] is "[kernel]" */

struct ksym {
	uint64_t addr;
	uint64_t end;  /* first address past the symbol */
	uint32_t name; /* offset into buf; also the original line order */
	uint16_t mod;  /* index into mods */
	uint8_t rank;  /* preference among aliases: T, W, t, w */
	uint8_t pad;
};

struct kallsyms {
	char *buf; /* the text, names NUL-terminated in place */
	struct ksym *syms;
	size_t nsyms;
	const char **mods; /* module names, "[kernel]" first */
	size_t nmods;
};

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int type_rank(char t)
{
	switch (t) {
	case 'T':
		return 0;
	case 'W':
		return 1;
	case 't':
		return 2;
	case 'w':
		return 3;
	default:
		return -1;
	}
}

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int has_suffix(const char *s, size_t len, const char *x)
{
	size_t xl = strlen(x);

	return len >= xl && memcmp(s + len - xl, x, xl) == 0;
}

/* Linker-generated section boundaries that kallsyms lists as text symbols.
 * They are not functions: an address at or after one belongs to the code
 * that follows (or, for the end markers, to nothing), so they are dropped.
 * Returns 1 for a start marker, 2 for an end-of-text marker, 0 otherwise. */
static int marker_kind(const char *name, size_t len)
{
	if (name[0] != '_')
		return 0;
	if (!strcmp(name, "_etext") || !strcmp(name, "_einittext"))
		return 2;
	if (!strcmp(name, "_text") || !strcmp(name, "_stext") ||
	    !strcmp(name, "_sinittext") || has_prefix(name, "__start_") ||
	    has_prefix(name, "__stop_") || has_suffix(name, len, "_text_start") ||
	    has_suffix(name, len, "_text_end"))
		return 1;
	return 0;
}

/* By address, then in the order listed (the name offset grows with the
 * line number); the preferred alias is chosen at lookup. */
static int cmp_ksym(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* Sorts k->syms. The core kernel comes first and in address order; the
 * modules follow, each in order but not relative to each other. So only
 * the tail after the longest sorted prefix is sorted, then merged (module
 * text lies above the core text, so usually there is nothing to merge). */
static int sort_syms(struct kallsyms *k)
{
	struct ksym *t = k->syms, *tmp;
	size_t n = k->nsyms, p = 1, i, j, o;

	while (p < n && cmp_ksym(&t[p - 1], &t[p]) <= 0)
		p++;
	if (p >= n)
		return 0;
	qsort(t + p, n - p, sizeof(*t), cmp_ksym);
	if (cmp_ksym(&t[p - 1], &t[p]) <= 0)
		return 0;
	tmp = malloc(p * sizeof(*t));
	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, t, p * sizeof(*t));
	for (i = 0, j = p, o = 0; i < p;) {
		if (j < n && cmp_ksym(&t[j], &tmp[i]) < 0)
			t[o++] = t[j++];
		else
			t[o++] = tmp[i++];
	}
	free(tmp);
	return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* Index of @name in k->mods, adding it if new. Module lines come in runs,
 * so the previous answer is checked first. */
static int intern_module(struct kallsyms *k, const char *name, size_t *last, size_t *cap)
{
	size_t i;

	if (!strcmp(k->mods[*last], name))
		return 0;
	for (i = 0; i < k->nmods; i++) {
		if (!strcmp(k->mods[i], name)) {
			*last = i;
			return 0;
		}
	}
	if (k->nmods > UINT16_MAX)
		return -EOVERFLOW;
	if (k->nmods == *cap) {
		size_t ncap = *cap * 2;
		const char **m = realloc(k->mods, ncap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		k->mods = m;
		*cap = ncap;
	}
	k->mods[k->nmods] = name;
	*last = k->nmods++;
	return 0;
}

/* Sets each symbol's end: the next higher address in the same module, the
 * end-of-text marker that follows it, or LAST_SYMBOL_CAP bytes for the last
 * symbol of a module. @ends is sorted. */
static void set_ends(struct kallsyms *k, const uint64_t *ends, size_t nends)
{
	size_t i = k->nsyms, e = nends;

	while (i-- > 0) {
		struct ksym *s = &k->syms[i];
		uint64_t end;
		size_t j = i + 1;

		/* skip aliases: the bound is the next distinct address */
		while (j < k->nsyms && k->syms[j].addr == s->addr)
			j++;
		if (j < k->nsyms && k->syms[j].mod == s->mod) {
			end = k->syms[j].addr;
		} else {
			end = s->addr + LAST_SYMBOL_CAP;
			if (end < s->addr)
				end = UINT64_MAX;
			if (j < k->nsyms && k->syms[j].addr < end)
				end = k->syms[j].addr;
		}
		if (s->mod == CORE_MODULE) {
			/* first end marker above s->addr; walking down,
			 * e only ever moves left */
			while (e > 0 && ends[e - 1] > s->addr)
				e--;
			if (e < nends && ends[e] < end)
				end = ends[e];
		}
		s->end = end;
	}
}

/* Parses the NUL-terminated @buf of @len bytes in place and takes
 * ownership of it (freed on error too). */
static int parse_owned(char *buf, size_t len, struct kallsyms **out)
{
	struct kallsyms *k;
	size_t cap = 0, mcap = 8, lastmod = CORE_MODULE, nends = 0, ecap = 0;
	uint64_t *ends = NULL;
	size_t nlines = 0, nonzero = 0;
	char *p = buf, *eob = buf + len;
	int err = -ENOMEM;

	*out = NULL;
	if (len > UINT32_MAX) {
		free(buf);
		return -EFBIG;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		free(buf);
		return -ENOMEM;
	}
	k->buf = buf;
	k->mods = malloc(mcap * sizeof(*k->mods));
	if (!k->mods)
		goto err;
	k->mods[k->nmods++] = "[kernel]";

	while (p < eob) {
		char *nl = memchr(p, '\n', eob - p);
		char *line = p, *name, *q, *mod = NULL;
		uint64_t addr = 0;
		size_t nlen;
		int ndig = 0, d, rank, kind;

		if (!nl)
			nl = eob;
		p = nl + 1;
		*nl = '\0';

		for (q = line; (d = hexval(*q)) >= 0 && ndig < 17; q++, ndig++)
			addr = addr << 4 | (uint64_t)d;
		if (ndig == 0 || ndig > 16 || q[0] != ' ' || !q[1] || q[2] != ' ' ||
		    !q[3])
			continue;
		nlines++;
		if (addr)
			nonzero++;
		rank = type_rank(q[1]);
		if (rank < 0)
			continue;
		name = q + 3;
		/* the name ends at the tab before "[module]" (or the line end,
		 * minus a stray '\r') */
		q = strchr(name, '\t');
		if (q) {
			*q = '\0';
			mod = q + 1;
			while (*mod == ' ' || *mod == '\t')
				mod++;
			if (*mod != '[')
				mod = NULL;
		}
		nlen = strlen(name);
		while (nlen && (name[nlen - 1] == '\r' || name[nlen - 1] == ' '))
			name[--nlen] = '\0';
		if (!nlen)
			continue;
		kind = marker_kind(name, nlen);
		if (kind == 2 && !mod) {
			if (nends == ecap) {
				size_t ncap = ecap ? ecap * 2 : 4;
				uint64_t *ne = realloc(ends, ncap * sizeof(*ne));

				if (!ne)
					goto err;
				ends = ne;
				ecap = ncap;
			}
			ends[nends++] = addr;
		}
		if (kind)
			continue;

		if (k->nsyms == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			struct ksym *ns = realloc(k->syms, ncap * sizeof(*ns));

			if (!ns)
				goto err;
			k->syms = ns;
			cap = ncap;
		}
		if (mod) {
			char *r = strchr(mod, ']');

			if (r)
				r[1] = '\0';
			err = intern_module(k, mod, &lastmod, &mcap);
			if (err)
				goto err;
			err = -ENOMEM;
		} else {
			lastmod = CORE_MODULE;
		}
		k->syms[k->nsyms] = (struct ksym){
			.addr = addr,
			.name = (uint32_t)(name - buf),
			.mod = (uint16_t)lastmod,
			.rank = (uint8_t)rank,
		};
		k->nsyms++;
	}

	if (!nlines) {
		err = -EINVAL;
		goto err;
	}
	if (!nonzero) {
		/* kptr_restrict hides the addresses: nothing is usable */
		err = -EPERM;
		goto err;
	}
	err = sort_syms(k);
	if (err)
		goto err;
	if (nends > 1)
		qsort(ends, nends, sizeof(*ends), cmp_u64);
	set_ends(k, ends, nends);
	free(ends);
	*out = k;
	return 0;
err:
	free(ends);
	kallsyms__free(k);
	return err;
}

int kallsyms__parse(const char *text, size_t len, struct kallsyms **out)
{
	char *buf;

	*out = NULL;
	if (len == SIZE_MAX)
		return -EINVAL;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	if (len)
		memcpy(buf, text, len);
	buf[len] = '\0';
	return parse_owned(buf, len, out);
}

int kallsyms__load(const char *path, struct kallsyms **out)
{
	size_t len = 0, cap = 1 << 20;
	char *buf;
	int fd, err;

	*out = NULL;
	fd = open(path ? path : "/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* procfs reports size 0: read until EOF, growing the buffer */
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 65536) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				err = -ENOMEM;
				goto err;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return parse_owned(buf, len, out);
err:
	close(fd);
	free(buf);
	return err;
}

const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr, uint64_t *offset,
			     const char **module)
{
	const struct ksym *s, *p;
	size_t lo = 0, hi;

	if (!k || !k->nsyms)
		return NULL;
	/* last symbol whose start is <= addr */
	hi = k->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &k->syms[lo - 1];
	if (addr >= s->end)
		return NULL;
	/* among aliases, the best type, then the first listed */
	for (p = s; p > k->syms && p[-1].addr == s->addr;) {
		p--;
		if (p->rank <= s->rank)
			s = p;
	}
	if (offset)
		*offset = addr - s->addr;
	if (module)
		*module = k->mods[s->mod];
	return k->buf + s->name;
}

uint64_t kallsyms__find(const struct kallsyms *k, const char *name)
{
	for (size_t i = 0; k && i < k->nsyms; i++)
		if (!k->syms[i].mod && !strcmp(k->buf + k->syms[i].name, name))
			return k->syms[i].addr;
	return 0;
}

size_t kallsyms__count(const struct kallsyms *k)
{
	return k ? k->nsyms : 0;
}

void kallsyms__free(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->buf);
	free(k->syms);
	free(k->mods);
	free(k);
}
