// SPDX-License-Identifier: MIT
/*
 * symbolize.c - addresses of a process -> (symbol, offset, module): the
 * objects (one per distinct file, and the vDSO's images), their symbol
 * indexes, names and resolving, and the mappings learned (each given its
 * object): /proc/PID/maps read at creation, by symbolizer__refresh() and
 * again on a miss (rate-limited), and PERF_RECORD_MMAP2s through
 * symbolizer__add_mapping(). The table of mappings and the maps line's
 * parser are maps.c's, JIT code's names perfmap.c's, opening and reading
 * the target's files files.c's, all below this file (symbolize_int.h
 * holds the state they share).
 *
 * Each object is opened as soon as its first mapping is seen, while the
 * target is still alive: the file descriptor held by libdwfl keeps the
 * right file even if the target exits or the file is replaced on disk
 * before the addresses are resolved at the end of a recording.
 *
 * Every object gets its own Dwfl holding one module reported at its
 * link-time addresses (bias 0). A user address becomes a file offset
 * through the mapping it falls in (addr - start + pgoff), then a link-time
 * address through the PT_LOAD of the object that holds that offset
 * (symbol_load_vaddr), and is looked up in that module. There is never one
 * bias per mapping: lld packs two segments into one file page, so a
 * mapping can span segments whose biases differ. Translating per mapping
 * rather than placing the module at a runtime base is what lets one file
 * be mapped twice (dlclose + dlopen at another address), and lets stale
 * mappings stay around without ever overlapping in a shared Dwfl.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kallsyms/kallsyms.h"
#include "lib/grow.h"
#include "lib/hash.h"
#include "lib/map.h"
#include "lib/search.h"
#include "symbol/inline.h"
#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"

struct sym {		  /* one symbol of an object's index */
	uint64_t addr;	  /* link-time address */
	uint64_t size;	  /* 0 if unknown (assembly labels) */
	const char *name; /* inside the ELF string table */
	uint32_t ndx;	  /* symbol table index: last tie-break */
	uint8_t pref;	  /* smaller is preferred among aliases */
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
 * link-time addresses, and records its PT_LOADs for the address
 * translation (symbol_load_vaddr). Returns 0 or -errno; on failure the
 * object stays unresolvable. */
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
		o->loads[o->nloads++] = (struct symbol_load){
			.offset = ph->p_offset,
			.vaddr = ph->p_vaddr,
			.filesz = ph->p_filesz,
			.memsz = ph->p_memsz,
			.flags = ph->p_flags,
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

/* 1 if @fd is the file with device @dev and inode @ino (as /proc/PID/maps
 * and PERF_RECORD_MMAP2 give them; 0 = unknown matches anything). Only the
 * inode decides: overlayfs shows another device in maps than stat does. */
static int same_file(int fd, uint64_t dev, uint64_t ino)
{
	struct stat st;

	(void)dev;
	if (!ino)
		return 1;
	return fstat(fd, &st) == 0 && (uint64_t)st.st_ino == ino;
}

/* The file behind mapping [@start, @end) of the target, whatever happened
 * to its path since: /proc/PID/map_files/ opens the very file mapped (also
 * one deleted or replaced on disk). Needs CAP_SYS_ADMIN and a live target;
 * -1 otherwise. */
static int open_map_file(struct symbolizer *s, uint64_t start, uint64_t end)
{
	char p[96];

	snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)s->pid,
		 (unsigned long long)start, (unsigned long long)end);
	return open(p, O_RDONLY | O_CLOEXEC);
}

/* A new object for @path (@dev, @ino: 0 if unknown), nothing opened yet;
 * NULL without memory. */
static struct object *add_object(struct symbolizer *s, const char *path, uint64_t dev,
				 uint64_t ino)
{
	struct object *o;

	if (LIB_GROW(s->objs, s->capobjs, s->nobjs + 1))
		return NULL;
	o = &s->objs[s->nobjs];
	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		return NULL;
	o->dev = dev;
	o->ino = ino;
	s->nobjs++;
	return o;
}

/* ---- the vDSO --------------------------------------------------------- */

/*
 * The vDSO is no file: its image (a whole ELF file, .dynsym and .eh_frame
 * included) is copied into a memfd when a mapping of it is learned, from
 * the target's memory while it lives, so that it names the target's frames
 * after the target has gone. A mapping learned after that (a command that
 * exec'd and exited before its maps were read again: its new [vdso] known
 * only from a PERF_RECORD_MMAP2) gets an image of the same length already
 * read from the target (its vDSO before the exec), else ours: one kernel
 * maps one image into every process of an ABI, and the length tells
 * another ABI's (32-bit, x32) from ours, which must not name its frames.
 * An image the target shows that differs from every one known (read, not
 * guessed) is an object of its own.
 */

/* Larger than any vDSO (a few pages); what is read and copied at most. */
#define VDSO_MAX (1u << 20)

/* The identity of an image: its bytes and length, never 0. */
static uint64_t image_hash(const unsigned char *p, size_t len)
{
	uint64_t h = lib_hash64(len), v;
	size_t i;

	for (i = 0; i + sizeof(v) <= len; i += sizeof(v)) {
		memcpy(&v, p + i, sizeof(v));
		h = lib_hash64(h ^ v);
	}
	for (; i < len; i++)
		h = lib_hash64(h ^ p[i]);
	return h ? h : 1;
}

/* The target's memory [@start, @start + @len) in a malloc'd copy, or NULL:
 * gone (a zombie has no memory), or not ours to read (ptrace access). */
static unsigned char *read_target(struct symbolizer *s, uint64_t start, uint64_t len)
{
	unsigned char *img;
	char p[64];
	ssize_t n = -1;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/mem", (int)s->pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	img = malloc(len);
	if (img)
		n = pread(fd, img, len, (off_t)start);
	close(fd);
	if (n != (ssize_t)len) {
		free(img);
		return NULL;
	}
	return img;
}

/* Our own vDSO image if it is @len bytes long, else NULL. */
static const unsigned char *own_vdso(uint64_t len)
{
	unsigned long self = getauxval(AT_SYSINFO_EHDR), a, b;
	uint64_t selflen = 0;
	char line[256];
	FILE *f;

	f = self ? fopen("/proc/self/maps", "re") : NULL;
	if (!f)
		return NULL;
	while (!selflen && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &a, &b) == 2 &&
		    a == self)
			selflen = b - a;
	fclose(f);
	return selflen && selflen == len ? (const unsigned char *)self : NULL;
}

/* A memfd holding @len bytes of @img, or -1. */
static int image_fd(const unsigned char *img, size_t len)
{
	int fd = memfd_create("d9prof-vdso", MFD_CLOEXEC);

	if (fd >= 0 && write(fd, img, len) != (ssize_t)len) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The object for the vDSO mapped at [@start, @end) of a target of ours
 * (s->pid), made now if no image known fits (see above). Its index, or
 * -ENOMEM. */
static long vdso_object(struct symbolizer *s, uint64_t start, uint64_t end)
{
	uint64_t len = end - start, h = 0;
	const unsigned char *use = NULL;
	unsigned char *img = NULL;
	long any = -1;
	struct object *o;
	size_t i;
	int fd;

	if (len <= VDSO_MAX)
		img = read_target(s, start, len);
	if (img)
		h = image_hash(img, len);
	/* newest first: the target's image of that length read last */
	for (i = s->nobjs; i-- > 0;) {
		o = &s->objs[i];
		if (o->image_len != len)
			continue;
		if (img ? o->image_hash == h : o->mod != NULL) {
			free(img);
			return (long)i;
		}
		if (any < 0)
			any = (long)i;
	}
	use = img;
	if (!use && len <= VDSO_MAX && (use = own_vdso(len)))
		h = image_hash(use, len);
	if (!use && any >= 0)
		return any; /* unreadable already: said once */
	o = add_object(s, "[vdso]", 0, 0);
	if (!o) {
		free(img);
		return -ENOMEM;
	}
	o->image_len = len;
	o->image_hash = use ? h : 0;
	fd = use ? image_fd(use, len) : -1;
	free(img);
	if (!use)
		o->unreadable = "unreadable in the target; ours has another length";
	else if (fd < 0)
		o->unreadable = "cannot be copied (memfd_create)";
	else if (report_object(o, fd, "[vdso]"))
		o->unreadable = "not an ELF file libdw reads";
	return (long)(s->nobjs - 1);
}

long symbolizer_object(struct symbolizer *s, const char *path, uint64_t dev, uint64_t ino,
		       int deleted, uint64_t start, uint64_t end)
{
	struct object *o;
	char used[PATH_MAX + 32];
	size_t i;
	int fd = -1, replaced = 0;

	if (s->pid && !strcmp(path, "[vdso]"))
		return vdso_object(s, start, end);
	for (i = s->nobjs; i-- > 0;) {
		o = &s->objs[i];
		if (!strcmp(o->path, path) &&
		    (!ino || !o->ino || (o->ino == ino && o->dev == dev)))
			return (long)i;
	}
	o = add_object(s, path, dev, ino);
	if (!o)
		return -ENOMEM;

	if (s->pid) {
		if (!deleted) {
			fd = symbolizer_open(s, path, 0, used, sizeof(used));
			if (fd >= 0 && !same_file(fd, dev, ino)) {
				close(fd);
				fd = -1;
				replaced = 1;
			}
		}
		/* the name libdwfl sees is the path: debuglinks are
		 * looked up next to it */
		if (fd < 0 && (deleted || replaced)) {
			fd = open_map_file(s, start, end);
			snprintf(used, sizeof(used), "%s", path);
		}
	}
	/* an object whose file cannot be read (deleted or replaced without
	 * map_files access, JIT memfd, no permission) still names its
	 * frames by module and file offset, never by another file's symbols */
	if (!s->pid)
		o->unreadable = "not opened (a symbolizer of no process)";
	else if (fd < 0)
		o->unreadable =
			deleted ? "deleted, and /proc/PID/map_files is not readable"
			: replaced
				? "replaced on disk, and /proc/PID/map_files is not readable"
				: "cannot be opened";
	else if (report_object(o, fd, used))
		o->unreadable = "not an ELF file libdw reads";
	return (long)(s->nobjs - 1);
}

int symbol_load_vaddr(const struct symbol_load *loads, size_t n, uint64_t off,
		      uint64_t *vaddr)
{
	const struct symbol_load *best = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct symbol_load *l = &loads[i];

		/* unsigned: an @off below p_offset wraps past filesz */
		if (off - l->offset >= l->filesz)
			continue;
		if (!best || ((l->flags & PF_X) && !(best->flags & PF_X)))
			best = l;
	}
	if (!best)
		return -ENOENT;
	*vaddr = off - best->offset + best->vaddr;
	return 0;
}

/* The link-time address of runtime address @addr of mapping @m (of object
 * @o): its file offset, through the object's program headers. */
static int map_vaddr(const struct object *o, const struct mapping *m, uint64_t addr,
		     uint64_t *vaddr)
{
	return symbol_load_vaddr(o->loads, o->nloads, addr - m->start + m->pgoff, vaddr);
}

/* ---- the target's mappings ------------------------------------------ */

int symbolizer__add_mapping(struct symbolizer *s, uint64_t start, uint64_t end,
			    uint64_t pgoff, uint64_t dev, uint64_t ino, const char *path)
{
	char name[PATH_MAX];
	int deleted, err;
	long obj;

	if (!s || !path || !*path || end <= start)
		return -EINVAL;
	err = symbol_map_path(path, name, sizeof(name), &deleted);
	if (err)
		return err;
	/* already known (refresh sees the same mappings again) */
	if (symbolizer_has_map(s, start, end, pgoff, ino, name))
		return 0;
	obj = symbolizer_object(s, name, dev, ino, deleted, start, end);
	if (obj < 0)
		return (int)obj;
	return symbolizer_insert_map(s, start, end, pgoff, (uint32_t)obj);
}

int symbolizer_parse_maps(struct symbolizer *s, char *buf, size_t len)
{
	char *line, *next;
	int err = 0;

	for (line = buf; line < buf + len; line = next) {
		struct symbol_maps_line m;

		next = memchr(line, '\n', (size_t)(buf + len - line));
		if (next)
			*next++ = '\0';
		else
			next = buf + len;
		if (symbol_maps_line(line, &m))
			continue;
		err = symbolizer__add_mapping(s, m.start, m.end, m.pgoff, m.dev, m.ino,
					      m.path);
		if (err == -ENOMEM)
			break;
		err = 0;
	}
	return err;
}

static int read_file(const char *path, char **out, size_t *outlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -errno : symbol_read_fd(fd, SIZE_MAX, out, outlen);
}

int symbolizer__refresh(struct symbolizer *s)
{
	char path[64], *buf = NULL;
	size_t len = 0;
	int err;

	if (!s->pid)
		return -ESRCH;
	/* the JIT may have written more: read again on need */
	perfmap_release(&s->perfmap);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)s->pid);
	err = read_file(path, &buf, &len);
	if (err == -ENOENT)
		return -ESRCH;
	if (err)
		return err;
	err = symbolizer_parse_maps(s, buf, len);
	free(buf);
	return err;
}

/* How often an address in no known mapping may re-read the maps. */
#define MISS_REFRESH_NS 50000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The mapping holding user address @addr, or NULL. A miss re-reads the
 * maps, at most every MISS_REFRESH_NS and while the target lives: a
 * process that has just exec'd under `record -- CMD`, or a library it
 * loaded since, is found while its samples are being unwound, not only
 * at the next periodic refresh. */
static const struct mapping *find_map(struct symbolizer *s, uint64_t addr)
{
	const struct mapping *m = symbolizer_map_at(s, addr);
	uint64_t now;

	if (m || s->gone || (now = now_ns()) - s->miss_refresh_ns < MISS_REFRESH_NS)
		return m;
	s->miss_refresh_ns = now;
	if (symbolizer__refresh(s) == -ESRCH)
		s->gone = 1;
	return symbolizer_map_at(s, addr);
}

/* ---- lifecycle ------------------------------------------------------ */

/* /proc/kallsyms is formatted by the kernel as it is read: ~0.1 s of CPU
 * for 200k lines, the largest fixed cost of a recording. It is read on a
 * thread of its own, overlapping the rest of the set-up, and joined at the
 * first kernel address. */
static void *load_kernel_syms(void *arg)
{
	struct symbolizer *s = arg;

	/* kernel frames stay unresolved without it */
	if (kallsyms__load(NULL, &s->own_ksyms) != 0)
		s->own_ksyms = NULL;
	return NULL;
}

static void kernel_syms_start(struct symbolizer *s)
{
	sigset_t all, old;

	/* signals stay the caller's: its poll() must see them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->kloading = !pthread_create(&s->kloader, NULL, load_kernel_syms, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->kloading) { /* no thread: read it now */
		load_kernel_syms(s);
		s->ksyms = s->own_ksyms;
	}
}

static const struct kallsyms *kernel_syms(struct symbolizer *s)
{
	if (s->kloading) {
		pthread_join(s->kloader, NULL);
		s->kloading = 0;
		s->ksyms = s->own_ksyms;
	}
	return s->ksyms;
}

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
	perfmap_init(&s->perfmap, pid);
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

	kernel_syms_start(s);
	err = symbolizer__refresh(s);
	if (err)
		goto err;
	*out = s;
	return 0;
err:
	symbolizer__free(s);
	return err;
}

int symbolizer__new_offline(const struct kallsyms *ksyms, struct symbolizer **out)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->rootfd = -1;
	s->gone = 1;	      /* no maps to read again on a miss */
	s->perfmap.state = 1; /* nor a perf map */
	s->ksyms = ksyms;
	*out = s;
	return 0;
}

const struct kallsyms *symbolizer__kallsyms(struct symbolizer *s)
{
	return s ? kernel_syms(s) : NULL;
}

void symbolizer__free(struct symbolizer *s)
{
	uint64_t raw, *out;
	size_t i;

	if (!s)
		return;
	kernel_syms(s);
	for (i = 0; i < s->nobjs; i++) {
		inline_index__free(s->objs[i].inl_index);
		dwfl_end(s->objs[i].dwfl);
		free(s->objs[i].loads);
		free(s->objs[i].syms);
		free(s->objs[i].path);
	}
	for (i = 0; lib_map_next(&s->names, &i, &raw, &out);)
		if (*out != raw)
			free((char *)(uintptr_t)*out);
	lib_map_release(&s->names);
	free(s->objs);
	perfmap_release(&s->perfmap);
	free(s->maps);
	free(s->ucache);
	kallsyms__free(s->own_ksyms);
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

		name = dwfl_module_getsym_info(o->mod, i, &sym, &addr, &shndx, NULL,
					       NULL);
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
		const struct symbol_load *l = &o->loads[i];

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
	size_t lo = LIB_PARTITION_POINT(0, o->nsyms, m, t[m].addr <= a);
	size_t j, k, stop;

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

/* ---- names ---------------------------------------------------------- */

/* The display name for @raw, a name inside an ELF string table (stable for
 * the symbolizer's life): demangled once, then looked up by pointer. */
static const char *display_name(struct symbolizer *s, const char *raw)
{
	int created;
	uint64_t *out = lib_map_get(&s->names, (uintptr_t)raw, &created);
	const char *at;
	char *dem;

	if (!out)
		return raw; /* still correct, only not demangled */
	if (!created)
		return (const char *)(uintptr_t)*out;
	/* a symbol version ("clock_gettime@@GLIBC_2.17") is not part of the
	 * function's name */
	at = raw[0] != '@' ? strchr(raw, '@') : NULL;
	if (at) {
		char *base = strndup(raw, (size_t)(at - raw));

		dem = base ? symbol_demangle(base) : NULL;
		if (dem)
			free(base);
		else
			dem = base;
	} else {
		dem = symbol_demangle(raw);
	}
	*out = (uintptr_t)(dem ? dem : raw);
	return (const char *)(uintptr_t)*out;
}

static int resolve_kernel(struct symbolizer *s, uint64_t addr, struct trace_frame *out)
{
	const char *mod = NULL;
	uint64_t off = 0;
	const char *name = kallsyms__lookup(kernel_syms(s), addr, &off, &mod);

	if (!name)
		return -ENOENT;
	out->sym = name;
	out->module = mod;
	out->offset = off;
	return 0;
}

/* ---- inline frames ---------------------------------------------------- */

/* The functions inlined at link-time address @vaddr of @o, innermost first,
 * demangled, into s->inl and their call sites into s->inl_src; returns how
 * many (0 without DWARF, or outside any inlined code). */
static uint32_t inline_chain(struct symbolizer *s, struct object *o, uint64_t vaddr,
			     uint32_t *start_line)
{
	const char *raw[SYMBOL_MAX_INLINE];
	int i, n = symbol__inline_sites(o->mod, &o->inl_index, vaddr, raw, s->inl_src,
					SYMBOL_MAX_INLINE, start_line);

	for (i = 0; i < n; i++)
		s->inl[i] = display_name(s, raw[i]); /* demangled once per name */
	return n > 0 ? (uint32_t)n : 0;
}

/* @file (a name from libdw, stable for the symbolizer's life) as a path
 * from the root: under @comp_dir, the unit's compilation directory, when
 * relative; made once, then looked up by pointer as display_name() does. */
static const char *source_path(struct symbolizer *s, const char *file,
			       const char *comp_dir)
{
	int created;
	uint64_t *out;
	char *p;

	if (!file || !*file)
		return NULL;
	if (file[0] == '/' || !comp_dir || comp_dir[0] != '/')
		return file;
	out = lib_map_get(&s->names, (uintptr_t)file, &created);
	if (!out)
		return file;
	if (!created)
		return (const char *)(uintptr_t)*out;
	p = malloc(strlen(comp_dir) + strlen(file) + 2);
	if (p)
		sprintf(p, "%s/%s", comp_dir, file);
	*out = (uintptr_t)(p ? p : file);
	return (const char *)(uintptr_t)*out;
}

/* The source file and line of the code at @vaddr of @o (the line table's:
 * the innermost inlined function's line) and the inline chain's call
 * sites' files as paths from the root; NULL/0 without DWARF lines. */
static void source_line(struct symbolizer *s, struct object *o, uint64_t vaddr,
			struct trace_frame *out)
{
	Dwfl_Line *l = dwfl_module_getsrc(o->mod, vaddr);
	const char *file, *dir = NULL;
	Dwarf_Attribute a;
	Dwarf_Die *cu;
	int line = 0;

	if (!l)
		return;
	file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	cu = dwfl_linecu(l);
	if (cu)
		dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a));
	out->file = source_path(s, file, dir);
	out->line = line > 0 ? (uint32_t)line : 0;
	for (uint32_t i = 0; i < out->ninl; i++)
		s->inl_src[i].call_file = source_path(s, s->inl_src[i].call_file, dir);
}

/* ---- resolving ------------------------------------------------------ */

int symbolizer__resolve(void *ctx, uint64_t addr, struct trace_frame *out)
{
	struct symbolizer *s = ctx;
	const struct mapping *m;
	const struct sym *sym;
	struct object *o;
	uint64_t vaddr;

	*out = (struct trace_frame){.addr = addr};
	if (symbol_is_kernel(addr)) {
		out->kernel = 1;
		return resolve_kernel(s, addr, out);
	}
	m = find_map(s, addr);
	if (!m) {
		const struct perfmap_sym *j = perfmap_find(&s->perfmap, s, addr);

		if (!j)
			return -ENOENT;
		out->sym = j->name;
		out->module = s->perfmap.path;
		out->offset = addr - j->start;
		return 0;
	}
	o = &s->objs[m->obj];
	out->module = o->path;
	/* without a symbol, the file offset: the coordinate that holds
	 * whatever the layout, and what objdump -F and readelf show */
	out->offset = addr - m->start + m->pgoff;
	if (!o->mod || map_vaddr(o, m, addr, &vaddr))
		return 0;
	if (!o->indexed)
		index_object(o);
	sym = find_sym(o, vaddr);
	if (sym) {
		out->sym = display_name(s, sym->name);
		out->offset = vaddr - sym->addr;
		out->ninl = inline_chain(s, o, vaddr, &out->start_line);
		out->inl = out->ninl ? s->inl : NULL;
		out->inl_src = out->ninl ? s->inl_src : NULL;
		source_line(s, o, vaddr, out);
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

const char *symbolizer__module_unreadable(const struct symbolizer *s, size_t i)
{
	return s && i < s->nobjs ? s->objs[i].unreadable : NULL;
}

/* ---- for the unwinder ------------------------------------------------- */

struct unwind_cache **symbolizer_ucache(struct symbolizer *s, uint64_t *gen)
{
	*gen = s->maps_gen;
	return &s->ucache;
}

int symbolizer__cfi_at(struct symbolizer *s, uint64_t addr, struct symbol_cfi *out)
{
	const struct mapping *m;
	struct object *o;
	Dwarf_Addr b;
	uint64_t vaddr;

	memset(out, 0, sizeof(*out));
	out->obj = UINT32_MAX;
	m = find_map(s, addr);
	if (!m)
		return -ENOENT;
	o = &s->objs[m->obj];
	out->obj = m->obj;
	if (!o->mod || map_vaddr(o, m, addr, &vaddr))
		return -ENOENT;
	/* both are cached by libdwfl after the first call; the bias holds
	 * for the segment of @addr, which is all the caller looks up */
	out->eh = dwfl_module_eh_cfi(o->mod, &b);
	out->eh_bias = addr - vaddr + b;
	if (!out->eh) {
		out->debug = dwfl_module_dwarf_cfi(o->mod, &b);
		out->debug_bias = addr - vaddr + b;
	}
	return out->eh || out->debug ? 0 : -ENOENT;
}
