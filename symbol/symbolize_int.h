/* SPDX-License-Identifier: MIT */
/*
 * symbolize_int.h - internal to symbol/, the only place libdw types may
 * appear: what the unwinder (unwind.c) needs from the symbolizer's
 * mappings, the maps text and a symbolizer of no process (tests,
 * fuzzing), and at the end the symbolizer's own state, shared by its
 * files: symbolize.c (objects, names, resolving), maps.c (the mapping
 * table, a maps line's parser), perfmap.c (/tmp/perf-PID.map) and files.c
 * (opening and reading the target's files).
 */
#ifndef D9_SYMBOLIZE_INT_H
#define D9_SYMBOLIZE_INT_H

#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/map.h"
#include "symbol/symbolize.h"

struct symbol_cfi {
	uint32_t obj;	  /* the object (file) index, for comparisons;
			   * UINT32_MAX if no mapping holds the address
			   * (set even when the call fails) */
	Dwarf_CFI *eh;	  /* .eh_frame, NULL if none */
	uint64_t eh_bias; /* runtime address - address in @eh */
	Dwarf_CFI *debug; /* .debug_frame, looked up only without @eh */
	uint64_t debug_bias;
};

/* One PT_LOAD of an object, as the program header has it. */
struct symbol_load {
	uint64_t offset; /* p_offset */
	uint64_t vaddr;	 /* p_vaddr */
	uint64_t filesz; /* p_filesz */
	uint64_t memsz;	 /* p_memsz */
	uint32_t flags;	 /* p_flags (PF_X, PF_W, PF_R) */
};

/*
 * The link-time address of file offset @off through the segments @loads
 * (@n of them, in any order): the segment whose file bytes [p_offset,
 * p_offset + p_filesz) hold @off maps it to p_vaddr + (@off - p_offset).
 * A runtime address turns into a file offset through its mapping (start,
 * pgoff from /proc/PID/maps: off = addr - start + pgoff), so this is the
 * whole address translation, whatever the layout: ET_EXEC, PIE, shared
 * objects, prelinked, static-pie, and lld's packing where the read-only
 * and executable segments share a file page (p_vaddr != p_offset, and the
 * executable mapping's pgoff lies inside the read-only segment). Where two
 * segments claim @off (malformed overlaps), the executable one wins.
 * Returns 0 with *@vaddr set, or -ENOENT if no segment holds @off (padding
 * between segments, or a mapping the file's headers do not describe).
 */
int symbol_load_vaddr(const struct symbol_load *loads, size_t n, uint64_t off,
		      uint64_t *vaddr);

/* The CFI of the object mapped at runtime address @addr (owned by the
 * symbolizer). 0, or -ENOENT when no mapping, file or CFI covers it. */
int symbolizer__cfi_at(struct symbolizer *s, uint64_t addr, struct symbol_cfi *out);

/* ---- maps text, and a symbolizer of no process (tests, fuzzing) ------ */

/* One line of /proc/PID/maps: "start-end perms offset major:minor inode
 * path" (addresses, offset and device in hex). */
struct symbol_maps_line {
	uint64_t start, end, pgoff;
	uint64_t dev; /* makedev(major, minor) */
	uint64_t ino;
	const char *path; /* inside the line: the rest of it, "" if none */
};

/* Parse @line (NUL-terminated, without its '\n') into *@out. Returns 0
 * for a mapping the symbolizer keeps (executable, and of a file or the
 * vDSO), -ENOENT for one it skips (*@out is set: not executable,
 * anonymous, [vsyscall], ...), -EINVAL for a line that does not parse
 * (*@out untouched). Reads nothing but @line. */
int symbol_maps_line(const char *line, struct symbol_maps_line *out);

/* The mappings of /proc/PID/maps text @buf into @s: each line that
 * symbol_maps_line() keeps, through symbolizer__add_mapping() (one that
 * refuses it, e.g. a path of PATH_MAX bytes or more, is skipped). @buf is
 * @len bytes followed by a NUL, and is modified: lines are cut in place.
 * 0 or -ENOMEM (the mappings before the failure are kept). */
struct symbolizer;
int symbolizer_parse_maps(struct symbolizer *s, char *buf, size_t len);

/* A symbolizer of no process, to be given mappings by
 * symbolizer_parse_maps() or symbolizer__add_mapping(): it reads nothing
 * at creation, opens no file (every module is unreadable, "not opened":
 * a user address resolves to its module and file offset, never a name,
 * and unwinding finds no CFI), never re-reads maps nor a perf map
 * (symbolizer__refresh returns -ESRCH) and costs one allocation. Kernel
 * addresses go through @ksyms, borrowed: it must outlive the symbolizer
 * (NULL: they stay unresolved). 0, or -ENOMEM with *@out = NULL. */
struct kallsyms;
int symbolizer__new_offline(const struct kallsyms *ksyms, struct symbolizer **out);

/* unwind.c's cache of frame rules by pc, kept in the symbolizer (freed
 * with it), and the mappings' generation it is valid for (*@gen). */
struct unwind_cache;
struct unwind_cache **symbolizer_ucache(struct symbolizer *s, uint64_t *gen);

/* ---- the symbolizer's state: symbolize.c, maps.c, perfmap.c, files.c */

/* Only these four files touch the fields below; the unwinder and the
 * tests go through the functions above. */

struct sym;
struct inline_index;

struct object {
	char *path;		   /* as in /proc/PID/maps ("[vdso]" for the vdso) */
	uint64_t dev, ino;	   /* of the mapped file, 0 if unknown */
	char build_id[2 * 64 + 1]; /* lowercase hex, "" if none */
	Dwfl *dwfl;		   /* NULL if the file could not be opened */
	Dwfl_Module *mod;
	struct symbol_load *loads;
	size_t nloads;
	const char *unreadable; /* why the file is not used, NULL if it is */
	struct sym *syms;	/* sorted by addr, best alias first */
	size_t nsyms;
	int indexed;			/* syms built (possibly empty) */
	struct inline_index *inl_index; /* its DWARF functions, built on the
					 * first inline lookup (inline.h) */
	uint64_t image_len;		/* a vDSO's: its mapping's length; 0 for files */
	uint64_t image_hash;		/* a vDSO's: image_hash() of its image, 0 if
					 * there is none (unreadable) */
};

struct mapping {
	uint64_t start, end, pgoff;
	uint32_t obj; /* index into objects */
};

/* Inlined functions named at one address, at most (deeper chains keep
 * their innermost). */
#define SYMBOL_MAX_INLINE 32

struct perfmap_sym { /* one line of /tmp/perf-PID.map */
	uint64_t start, size;
	const char *name; /* inside perfmap.text */
	uint32_t line;	  /* later lines win over earlier overlapping ones */
};

/* JIT code named by the perf map convention, read on the first address
 * no file mapping holds (and again after a refresh). */
struct perfmap {
	int state;     /* 0 unread, 1 read (possibly empty) */
	char path[64]; /* "/tmp/perf-NSPID.map", as the target sees it */
	uid_t uid;     /* the target's owner (0 if unknown): the map's */
	char *text;
	struct perfmap_sym *syms; /* sorted by start, then line */
	size_t n, cap;
};

struct symbolizer {
	pid_t pid;		      /* 0: of no process (symbolizer__new_offline) */
	int rootfd;		      /* /proc/PID/root as O_PATH, -1 if unusable */
	int same_root;		      /* the target sees our "/" */
	const struct kallsyms *ksyms; /* NULL if /proc/kallsyms is unusable;
				       * read through kernel_syms() */
	struct kallsyms *own_ksyms;   /* ksyms when loaded here, else NULL */
	pthread_t kloader;	      /* reading own_ksyms, while kloading */
	int kloading;

	struct mapping *maps; /* sorted by start, no overlaps */
	size_t nmaps, capmaps;
	struct object *objs;
	size_t nobjs, capobjs;

	struct lib_map names; /* raw ELF name -> its display name: raw
			       * itself, or an owned demangled copy
			       * (pointers) */

	uint64_t miss_refresh_ns;    /* when a miss last re-read the maps */
	int gone;		     /* the maps can no longer be read */
	uint64_t maps_gen;	     /* bumped by every new mapping */
	struct unwind_cache *ucache; /* unwind.c's rules by pc */

	/* the inline chain of the last resolve (trace_frame.inl, inl_src) */
	const char *inl[SYMBOL_MAX_INLINE];
	struct trace_inline_src inl_src[SYMBOL_MAX_INLINE];

	struct perfmap perfmap;
};

/* files.c: the target's files */

/* Opens @path as the target of @s sees it, a regular file only (else -1,
 * errno set), the last component not a link if @nofollow; the path
 * actually opened goes to @used (@usedsz bytes). */
int symbolizer_open(struct symbolizer *s, const char *path, int nofollow, char *used,
		    size_t usedsz);

/* Read all of @fd (consumed: closed), at most @max bytes (the rest is
 * left unread), into a malloc'd NUL-terminated buffer. 0 or -errno. */
int symbol_read_fd(int fd, size_t max, char **out, size_t *outlen);

/* symbolize.c: objects */

/* The object for the file @path (@dev, @ino: 0 if unknown), opened now if
 * new: by its path if that still names the mapped file, else through
 * map_files (@deleted: the path is known to be gone); for "[vdso]", the
 * image mapped at [@start, @end). Returns its index or -errno. */
long symbolizer_object(struct symbolizer *s, const char *path, uint64_t dev, uint64_t ino,
		       int deleted, uint64_t start, uint64_t end);

/* maps.c: the mapping table (it reads nothing, opens no object) */

/* The mapping holding user address @addr, or NULL. */
const struct mapping *symbolizer_map_at(const struct symbolizer *s, uint64_t addr);

/* The name of the object a mapping of @path is of, into @name (@namesz
 * bytes): @path without its " (deleted)" (then *@deleted = 1, else 0).
 * 0, -ENOENT for a mapping the symbolizer does not keep (anonymous,
 * [vsyscall], [heap], ...: see symbol_maps_line), -EINVAL for a path
 * longer than @name holds. */
int symbol_map_path(const char *path, char *name, size_t namesz, int *deleted);

/* 1 if the table already holds [@start, @end) at @pgoff of the object
 * named @path (and of inode @ino, unless 0), else 0. */
int symbolizer_has_map(const struct symbolizer *s, uint64_t start, uint64_t end,
		       uint64_t pgoff, uint64_t ino, const char *path);

/* Puts [@start, @end) at @pgoff of object @obj into the table, in place
 * of the mappings it overlaps, and bumps maps_gen. 0 or -ENOMEM. */
int symbolizer_insert_map(struct symbolizer *s, uint64_t start, uint64_t end,
			  uint64_t pgoff, uint32_t obj);

/* perfmap.c: /tmp/perf-PID.map */

/* Names the perf map of @pid (its innermost pid) and its owner; unread. */
void perfmap_init(struct perfmap *pm, pid_t pid);

/* Frees what was read; the map is read again on the next lookup. */
void perfmap_release(struct perfmap *pm);

/* The region of @pm holding @addr (the latest line of those that do), or
 * NULL; reads the map first if unread, opening it through @s. The name
 * lives until perfmap_release(). */
const struct perfmap_sym *perfmap_find(struct perfmap *pm, struct symbolizer *s,
				       uint64_t addr);

#endif /* D9_SYMBOLIZE_INT_H */
