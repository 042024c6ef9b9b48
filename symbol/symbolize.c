// SPDX-License-Identifier: MIT
/*
 * symbolize.c - addresses of a process -> (symbol, offset, module).
 *
 * The symbolizer keeps its own table of the target's executable mappings
 * (sorted, binary-searched) and one "object" per distinct file. Each object
 * is opened as soon as its first mapping is seen, while the target is still
 * alive: the file descriptor held by libdwfl keeps the right file even if
 * the target exits or the file is replaced on disk before the addresses are
 * resolved at the end of a recording.
 *
 * Every object gets its own Dwfl holding one module reported at its link-time
 * addresses (bias 0). A user address is first turned into a link-time address
 * with the bias of the mapping it falls in, then looked up in that module.
 * Keeping the bias per mapping rather than per module is what lets one file
 * be mapped twice (dlclose + dlopen at another address), and lets stale
 * mappings stay around without ever overlapping in a shared Dwfl.
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kallsyms/kallsyms.h"
#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"

struct load {		 /* one PT_LOAD of an object */
	uint64_t offset; /* p_offset */
	uint64_t vaddr;	 /* p_vaddr */
	uint64_t filesz; /* p_filesz */
	uint64_t memsz;	 /* p_memsz */
};

struct sym {		  /* one symbol of an object's index */
	uint64_t addr;	  /* link-time address */
	uint64_t size;	  /* 0 if unknown (assembly labels) */
	const char *name; /* inside the ELF string table */
	uint32_t ndx;	  /* symbol table index: last tie-break */
	uint8_t pref;	  /* smaller is preferred among aliases */
};

struct object {
	char *path;		   /* as in /proc/PID/maps ("[vdso]" for the vdso) */
	char build_id[2 * 64 + 1]; /* lowercase hex, "" if none */
	Dwfl *dwfl;		   /* NULL if the file could not be opened */
	Dwfl_Module *mod;
	struct load *loads;
	size_t nloads;
	struct sym *syms; /* sorted by addr, best alias first */
	size_t nsyms;
	int indexed; /* syms built (possibly empty) */
};

struct mapping {
	uint64_t start, end, pgoff;
	uint64_t bias; /* runtime address - link-time address */
	uint32_t obj;  /* index into objects */
};

struct name_ent {	 /* raw ELF name -> demangled name */
	const char *raw; /* NULL: empty slot */
	const char *out; /* raw itself, or an owned demangled copy */
};

struct symbolizer {
	pid_t pid;
	int rootfd;		/* /proc/PID/root as O_PATH, -1 if unusable */
	int same_root;		/* the target sees our "/" */
	struct kallsyms *ksyms; /* NULL if /proc/kallsyms is unusable */

	struct mapping *maps; /* sorted by start, no overlaps */
	size_t nmaps, capmaps;
	struct object *objs;
	size_t nobjs, capobjs;

	struct name_ent *names; /* open addressing, power-of-2 size */
	size_t nnames, capnames;
};

static const Dwfl_Callbacks dwfl_callbacks = {
    /* never called: every module is reported with an open file */
    .find_elf = dwfl_build_id_find_elf,
    /* .debug files by build-id under /usr/lib/debug, or by debuglink */
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

int symbol_is_kernel(uint64_t addr)
{
#if UINTPTR_MAX == 0xffffffffu
	return addr >= 0xc0000000u;
#else
	/* the upper half of the canonical 48-bit (and 57-bit) address space */
	return addr >= 0xffff800000000000ull;
#endif
}

/* ---- opening files -------------------------------------------------- */

/* Opens @path as the target sees it. With RESOLVE_IN_ROOT even absolute
 * symlinks inside a container resolve inside it, and the root fd taken at
 * symbolizer__new keeps working after the target has exited. */
static int open_in_root(struct symbolizer *s, const char *path, char *used, size_t usedsz)
{
	int fd;

	snprintf(used, usedsz, "%s", path);
	if (s->rootfd >= 0 && !s->same_root) {
		struct open_how how = {
		    .flags = O_RDONLY | O_CLOEXEC,
		    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
		};

		fd = (int)syscall(SYS_openat2, s->rootfd, path, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno == ENOSYS || errno == EINVAL || errno == E2BIG) {
			/* pre-5.6 kernel: the magic link works while the
			 * target lives */
			char p[PATH_MAX];

			if (snprintf(p, sizeof(p), "/proc/%d/root%s", (int)s->pid, path) <
			    (int)sizeof(p)) {
				fd = open(p, O_RDONLY | O_CLOEXEC);
				if (fd >= 0)
					return fd;
			}
		}
	}
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* A memfd with a copy of the target's vDSO image (a complete ELF file in
 * memory). Read from the target while it lives; else our own vDSO, which is
 * the same image when the target has the same ABI (checked by size). */
static int open_vdso(struct symbolizer *s, uint64_t start, uint64_t len)
{
	char p[64];
	void *img;
	ssize_t n = -1;
	int fd, memfd = -1;

	if (!len || len > (64u << 20))
		return -1;
	img = malloc(len);
	if (!img)
		return -1;
	snprintf(p, sizeof(p), "/proc/%d/mem", (int)s->pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = pread(fd, img, len, (off_t)start);
		close(fd);
	}
	if (n != (ssize_t)len) {
		unsigned long self = getauxval(AT_SYSINFO_EHDR);
		uint64_t selflen = 0;
		FILE *f;
		char line[256];

		f = self ? fopen("/proc/self/maps", "re") : NULL;
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long a, b;

			if (strstr(line, "[vdso]") &&
			    sscanf(line, "%lx-%lx", &a, &b) == 2 && a == self)
				selflen = b - a;
		}
		if (f)
			fclose(f);
		if (selflen != len)
			goto out;
		memcpy(img, (const void *)self, len);
	}
	memfd = memfd_create("d9prof-vdso", MFD_CLOEXEC);
	if (memfd >= 0 && write(memfd, img, len) != (ssize_t)len) {
		close(memfd);
		memfd = -1;
	}
out:
	free(img);
	return memfd;
}

static void set_build_id(struct object *o)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int i, n = dwfl_module_build_id(o->mod, &bits, &vaddr);

	if (n <= 0 || n > 64)
		return;
	for (i = 0; i < n; i++) {
		o->build_id[2 * i] = hex[bits[i] >> 4];
		o->build_id[2 * i + 1] = hex[bits[i] & 15];
	}
	o->build_id[2 * n] = '\0';
}

/* Reports @fd (consumed) as the single module of a new Dwfl, at its
 * link-time addresses, and records its PT_LOADs for the bias computation.
 * Returns 0 or -errno; on failure the object stays unresolvable. */
static int report_object(struct object *o, int fd, const char *file_name)
{
	GElf_Addr elfbias;
	size_t i, phnum;
	Elf *elf;

	o->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!o->dwfl) {
		close(fd);
		return -ENOMEM;
	}
	dwfl_report_begin(o->dwfl);
	/* ET_DYN: base 0 with add_p_vaddr keeps p_vaddr as is (bias 0);
	 * ET_EXEC is always placed at its p_vaddr */
	o->mod = dwfl_report_elf(o->dwfl, o->path, file_name, fd, 0, true);
	if (dwfl_report_end(o->dwfl, NULL, NULL) != 0 || !o->mod) {
		if (!o->mod)
			close(fd);
		goto fail;
	}
	elf = dwfl_module_getelf(o->mod, &elfbias);
	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		goto fail;
	o->loads = calloc(phnum ? phnum : 1, sizeof(*o->loads));
	if (!o->loads)
		goto fail;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		o->loads[o->nloads++] = (struct load){
		    .offset = ph->p_offset,
		    .vaddr = ph->p_vaddr,
		    .filesz = ph->p_filesz,
		    .memsz = ph->p_memsz,
		};
	}
	set_build_id(o);
	return 0;
fail:
	dwfl_end(o->dwfl);
	o->dwfl = NULL;
	o->mod = NULL;
	return -ENOEXEC;
}

/* The object for @path, opened now if new. Returns its index or -errno. */
static long get_object(struct symbolizer *s, const char *path, uint64_t start,
		       uint64_t end)
{
	struct object *o;
	char used[PATH_MAX + 32];
	size_t i;
	int fd;

	for (i = s->nobjs; i-- > 0;)
		if (!strcmp(s->objs[i].path, path))
			return (long)i;
	if (s->nobjs == s->capobjs) {
		size_t ncap = s->capobjs ? 2 * s->capobjs : 16;
		struct object *no = realloc(s->objs, ncap * sizeof(*no));

		if (!no)
			return -ENOMEM;
		s->objs = no;
		s->capobjs = ncap;
	}
	o = &s->objs[s->nobjs];
	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	s->nobjs++;

	if (!strcmp(path, "[vdso]")) {
		fd = open_vdso(s, start, end - start);
		snprintf(used, sizeof(used), "[vdso]");
	} else {
		fd = open_in_root(s, path, used, sizeof(used));
	}
	/* an object whose file cannot be read (deleted, JIT memfd, no
	 * permission) still names its frames by module */
	if (fd >= 0)
		report_object(o, fd, used);
	return (long)(s->nobjs - 1);
}

/* The load bias of a mapping of @o: runtime address - link-time address.
 *
 * The mapping puts file offset pgoff at address start, so file offset x is
 * at start + (x - pgoff). The PT_LOAD containing pgoff puts file offset x at
 * link-time address p_vaddr + (x - p_offset). The difference is the same for
 * every x of the segment:
 *
 *	bias = start - pgoff + p_offset - p_vaddr
 *
 * For ET_EXEC this is 0; for PIE executables and shared libraries it is the
 * base the loader chose. Today's linkers map text by a segment of its own
 * at a nonzero file offset (r--p at 0, r-xp at 0x1000...), which is why the
 * segment must be matched by pgoff instead of taking the first PT_LOAD. The
 * ELF spec guarantees p_offset == p_vaddr modulo the page size, so the
 * result is page-aligned whatever rounding the loader did. Unsigned
 * wrap-around is intended (prelinked libraries moved down). */
static uint64_t mapping_bias(const struct object *o, uint64_t start, uint64_t pgoff)
{
	const uint64_t page = 4096;
	size_t i;

	for (i = 0; i < o->nloads; i++) {
		const struct load *l = &o->loads[i];
		uint64_t lo = l->offset & ~(page - 1);

		if (pgoff >= lo && pgoff < l->offset + (l->filesz ? l->filesz : 1))
			return start - pgoff + l->offset - l->vaddr;
	}
	/* unknown layout: assume link-time address == file offset */
	return start - pgoff;
}

/* ---- mappings ------------------------------------------------------- */

/* Index of the first mapping with end > @addr. */
static size_t map_search(const struct symbolizer *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int symbolizer__add_mapping(struct symbolizer *s, uint64_t start, uint64_t end,
			    uint64_t pgoff, const char *path)
{
	struct mapping m;
	size_t i, j;
	long obj;

	if (!s || !path || !*path || end <= start)
		return -EINVAL;
	i = map_search(s, start);
	/* already known (refresh sees the same mappings again) */
	if (i < s->nmaps && s->maps[i].start == start && s->maps[i].end == end &&
	    s->maps[i].pgoff == pgoff && !strcmp(s->objs[s->maps[i].obj].path, path))
		return 0;

	obj = get_object(s, path, start, end);
	if (obj < 0)
		return (int)obj;
	m = (struct mapping){
	    .start = start,
	    .end = end,
	    .pgoff = pgoff,
	    .bias = mapping_bias(&s->objs[obj], start, pgoff),
	    .obj = (uint32_t)obj,
	};

	/* a new mapping over old ones replaces them: the address space
	 * was reused (munmap/dlclose then mmap) and the newest wins */
	j = i;
	while (j < s->nmaps && s->maps[j].start < end)
		j++;
	if (j == i && s->nmaps == s->capmaps) {
		size_t ncap = s->capmaps ? 2 * s->capmaps : 64;
		struct mapping *nm = realloc(s->maps, ncap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		s->maps = nm;
		s->capmaps = ncap;
	}
	if (j == i) {
		memmove(&s->maps[i + 1], &s->maps[i], (s->nmaps - i) * sizeof(m));
		s->nmaps++;
	} else if (j > i + 1) {
		memmove(&s->maps[i + 1], &s->maps[j], (s->nmaps - j) * sizeof(m));
		s->nmaps -= j - i - 1;
	}
	s->maps[i] = m;
	return 0;
}

static int read_file(const char *path, char **out, size_t *outlen)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);
	int fd, err = 0;

	if (!buf)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(buf);
		return err;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	return 0;
}

int symbolizer__refresh(struct symbolizer *s)
{
	char path[64], *buf = NULL, *line, *next;
	size_t len = 0;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	err = read_file(path, &buf, &len);
	if (err == -ENOENT)
		return -ESRCH;
	if (err)
		return err;
	/* "start-end perms offset dev inode   path" */
	for (line = buf; line < buf + len; line = next) {
		unsigned long long start, end, pgoff;
		char perms[8], *name;
		int n = 0;
		size_t nlen;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = buf + len;
		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %*u %n", &start, &end, perms,
			   &pgoff, &n) < 4 ||
		    !n)
			continue;
		if (strlen(perms) < 3 || perms[2] != 'x')
			continue;
		name = line + n;
		nlen = strlen(name);
		if (nlen > 10 && !strcmp(name + nlen - 10, " (deleted)"))
			name[nlen -= 10] = '\0';
		/* files, and the vDSO; not [vsyscall] (a fixed legacy page)
		 * nor anonymous JIT code */
		if (name[0] != '/' && strcmp(name, "[vdso]"))
			continue;
		err = symbolizer__add_mapping(s, start, end, pgoff, name);
		if (err == -ENOMEM)
			break;
		err = 0;
	}
	free(buf);
	return err;
}

/* ---- lifecycle ------------------------------------------------------ */

int symbolizer__new(pid_t pid, struct symbolizer **out)
{
	struct symbolizer *s;
	struct stat a, b;
	char path[64];
	int err;

	*out = NULL;
	if (pid <= 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	s->rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->rootfd < 0 && errno == ENOENT) {
		err = -ESRCH;
		goto err;
	}
	/* The common case, no container: paths open as they are. Both the
	 * root directory and the mount namespace must match: a private /tmp
	 * (systemd PrivateTmp) shares the root but not the mounts. */
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	if (s->rootfd >= 0 && fstat(s->rootfd, &a) == 0 && stat("/", &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino && stat(path, &a) == 0 &&
	    stat("/proc/self/ns/mnt", &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		s->same_root = 1;

	err = symbolizer__refresh(s);
	if (err)
		goto err;
	/* kernel frames stay unresolved without it */
	if (kallsyms__load(NULL, &s->ksyms) != 0)
		s->ksyms = NULL;
	*out = s;
	return 0;
err:
	symbolizer__free(s);
	return err;
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nobjs; i++) {
		dwfl_end(s->objs[i].dwfl);
		free(s->objs[i].loads);
		free(s->objs[i].syms);
		free(s->objs[i].path);
	}
	for (i = 0; i < s->capnames; i++)
		if (s->names[i].raw && s->names[i].out != s->names[i].raw)
			free((char *)s->names[i].out);
	free(s->names);
	free(s->objs);
	free(s->maps);
	kallsyms__free(s->ksyms);
	if (s->rootfd >= 0)
		close(s->rootfd);
	free(s);
}

/* ---- symbol index --------------------------------------------------- */

/*
 * dwfl_module_addrinfo() scans the whole symbol table on every call (about
 * 0.3 ms per address in libc), so each object gets a sorted index instead,
 * built on its first lookup from the table libdwfl picked: .symtab, a .debug
 * file found by build-id or debuglink, .gnu_debugdata, or .dynsym.
 */

/* Preference among symbols at one address: functions first, sized before
 * sizeless, then the public name: fewer leading underscores (gettext, not
 * __gettext), global before weak before local, the shorter name (modfl,
 * not modff64x). */
static uint8_t sym_pref(const GElf_Sym *sym, const char *name)
{
	int type = GELF_ST_TYPE(sym->st_info), bind = GELF_ST_BIND(sym->st_info);
	unsigned int p = 0, us = 0;

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		p |= 1u << 7;
	if (!sym->st_size)
		p |= 1u << 6;
	while (us < 7 && name[us] == '_')
		us++;
	p |= us << 2;
	if (bind == STB_WEAK)
		p |= 1u;
	else if (bind != STB_GLOBAL && bind != STB_GNU_UNIQUE)
		p |= 2u;
	return (uint8_t)p;
}

static int cmp_sym(const void *pa, const void *pb)
{
	const struct sym *a = pa, *b = pb;
	size_t la, lb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->pref != b->pref)
		return a->pref < b->pref ? -1 : 1;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return a->ndx < b->ndx ? -1 : a->ndx > b->ndx;
}

static void index_object(struct object *o)
{
	int i, n;

	n = dwfl_module_getsymtab(o->mod);
	if (n <= 1) {
		o->indexed = 1; /* no symbols: offsets only */
		return;
	}
	o->syms = malloc((size_t)n * sizeof(*o->syms));
	if (!o->syms)
		return; /* tried again at the next lookup */
	o->indexed = 1;
	for (i = 1; i < n; i++) {
		GElf_Word shndx;
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name;
		int type;

		name =
		    dwfl_module_getsym_info(o->mod, i, &sym, &addr, &shndx, NULL, NULL);
		if (!name || !*name)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_SECTION || type == STT_FILE || type == STT_TLS)
			continue;
		/* undefined, absolute (version names) or not loaded */
		if (shndx == SHN_UNDEF || shndx == SHN_ABS || shndx == (GElf_Word)-1)
			continue;
		o->syms[o->nsyms++] = (struct sym){
		    .addr = addr,
		    .size = sym.st_size,
		    .name = name,
		    .ndx = (uint32_t)i,
		    .pref = sym_pref(&sym, name),
		};
	}
	qsort(o->syms, o->nsyms, sizeof(*o->syms), cmp_sym);
}

/* How far back a sized symbol enclosing the address is looked for, past
 * sizeless labels inside it. */
#define ENCLOSING_LOOKBACK 16

/* 1 if link-time addresses @a and @b are in the same PT_LOAD of @o. */
static int same_segment(const struct object *o, uint64_t a, uint64_t b)
{
	size_t i;

	for (i = 0; i < o->nloads; i++) {
		const struct load *l = &o->loads[i];

		if (a - l->vaddr < l->memsz)
			return b - l->vaddr < l->memsz;
	}
	return 0;
}

/* The symbol of @o containing link-time address @a, or NULL. A sized
 * symbol must contain it; failing that the nearest sizeless symbol before
 * it extends up to the next symbol or the end of its segment. Padding after
 * a sized function, or code no symbol covers, stays unnamed. */
static const struct sym *find_sym(const struct object *o, uint64_t a)
{
	const struct sym *t = o->syms;
	size_t lo = 0, hi = o->nsyms, j, k, stop;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	j = lo - 1;
	stop = j >= ENCLOSING_LOOKBACK ? j - ENCLOSING_LOOKBACK : 0;
	for (k = j + 1; k-- > stop;) {
		if (t[k].size && a - t[k].addr < t[k].size) {
			/* aliases sort best first: the lowest index of this
			 * address that still contains @a */
			while (k > 0 && t[k - 1].addr == t[k].addr && t[k - 1].size &&
			       a - t[k - 1].addr < t[k - 1].size)
				k--;
			return &t[k];
		}
	}
	/* sizeless aliases sort after sized ones: the first is the best */
	for (k = j; k > 0 && t[k - 1].addr == t[j].addr; k--)
		;
	for (; k <= j; k++)
		if (!t[k].size)
			return same_segment(o, t[k].addr, a) ? &t[k] : NULL;
	return NULL;
}

/* ---- resolving ------------------------------------------------------ */

static size_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

/* The display name for @raw, a name inside an ELF string table (stable for
 * the symbolizer's life): demangled once, then looked up by pointer. */
static const char *display_name(struct symbolizer *s, const char *raw)
{
	struct name_ent *e;
	size_t mask, i;
	char *dem;

	if (2 * (s->nnames + 1) > s->capnames) {
		size_t ncap = s->capnames ? 2 * s->capnames : 1024;
		struct name_ent *nt = calloc(ncap, sizeof(*nt));

		if (!nt)
			return raw; /* still correct, only not demangled */
		for (i = 0; i < s->capnames; i++) {
			size_t k;

			if (!s->names[i].raw)
				continue;
			for (k = hash_ptr(s->names[i].raw) & (ncap - 1); nt[k].raw;
			     k = (k + 1) & (ncap - 1))
				;
			nt[k] = s->names[i];
		}
		free(s->names);
		s->names = nt;
		s->capnames = ncap;
	}
	mask = s->capnames - 1;
	for (i = hash_ptr(raw) & mask; s->names[i].raw; i = (i + 1) & mask)
		if (s->names[i].raw == raw)
			return s->names[i].out;
	e = &s->names[i];
	dem = symbol_demangle(raw);
	e->raw = raw;
	e->out = dem ? dem : raw;
	s->nnames++;
	return e->out;
}

static int resolve_kernel(struct symbolizer *s, uint64_t addr, struct trace_frame *out)
{
	const char *mod = NULL;
	uint64_t off = 0;
	const char *name = kallsyms__lookup(s->ksyms, addr, &off, &mod);

	if (!name)
		return -ENOENT;
	out->sym = name;
	out->module = mod;
	out->offset = off;
	return 0;
}

int symbolizer__resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	struct symbolizer *s = ctx;
	const struct mapping *m;
	const struct sym *sym;
	struct object *o;
	uint64_t vaddr;
	size_t i;

	*out = (struct trace_frame){.addr = addr};
	if (symbol_is_kernel(addr)) {
		out->kernel = 1;
		return resolve_kernel(s, addr, out);
	}
	i = map_search(s, addr);
	if (i == s->nmaps || s->maps[i].start > addr)
		return -ENOENT;
	m = &s->maps[i];
	o = &s->objs[m->obj];
	out->module = o->path;
	if (!o->mod) {
		/* no ELF to learn the link-time address from: the file
		 * offset is the best stable coordinate */
		out->offset = addr - m->start + m->pgoff;
		return 0;
	}
	vaddr = addr - m->bias;
	out->offset = vaddr;
	if (!o->indexed)
		index_object(o);
	sym = find_sym(o, vaddr);
	if (sym) {
		out->sym = display_name(s, sym->name);
		out->offset = vaddr - sym->addr;
	}
	return 0;
}

size_t symbolizer__nmodules(const struct symbolizer *s)
{
	return s ? s->nobjs : 0;
}

int symbolizer__module(const struct symbolizer *s, size_t i, const char **path,
		       const char **build_id)
{
	if (!s || i >= s->nobjs)
		return -EINVAL;
	if (path)
		*path = s->objs[i].path;
	if (build_id)
		*build_id = s->objs[i].build_id;
	return 0;
}

/* ---- for the unwinder ------------------------------------------------- */

int symbolizer__cfi_at(struct symbolizer *s, uint64_t addr, struct symbol_cfi *out)
{
	const struct mapping *m;
	struct object *o;
	Dwarf_Addr b;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->obj = UINT32_MAX;
	i = map_search(s, addr);
	if (i == s->nmaps || s->maps[i].start > addr)
		return -ENOENT;
	m = &s->maps[i];
	o = &s->objs[m->obj];
	out->obj = m->obj;
	if (!o->mod)
		return -ENOENT;
	/* both are cached by libdwfl after the first call */
	out->eh = dwfl_module_eh_cfi(o->mod, &b);
	out->eh_bias = m->bias + b;
	if (!out->eh) {
		out->debug = dwfl_module_dwarf_cfi(o->mod, &b);
		out->debug_bias = m->bias + b;
	}
	return out->eh || out->debug ? 0 : -ENOENT;
}
