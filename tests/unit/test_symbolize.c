// SPDX-License-Identifier: MIT
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbol/symbolize.h"
#include "symbol/symbolize_int.h"
#include "tests/unit/proc_kallsyms.h"

TestSuite(symbolize);

/* A function of the test binary itself, big enough to point inside. */
static volatile int sink;
static __attribute__((noinline)) int target_fn(int x)
{
	int i;

	for (i = 0; i < x; i++)
		sink += i * x;
	return sink;
}

/* Code inlined twice deep into an out-of-line function. */
static volatile uint64_t inl_sink;
static inline __attribute__((always_inline)) void inl_inner(int i)
{
	inl_sink = inl_sink * 31 + (uint64_t)i;
}
static inline __attribute__((always_inline)) void inl_outer(int n)
{
	for (int i = 0; i < n; i++)
		inl_inner(i);
}
static __attribute__((noinline)) void inl_host(int n)
{
	inl_outer(n);
	inl_sink ^= 1;
}

/* In .data, whose PT_LOAD has p_offset != p_vaddr (unlike text). */
static int data_var[16] = {1, 2, 3};

static uint64_t addr_of(void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static struct symbolizer *self_symbolizer(void)
{
	struct symbolizer *s = NULL;
	int err = symbolizer__new(getpid(), &s);

	cr_assert_eq(err, 0, "symbolizer__new: %s", strerror(-err));
	cr_assert_not_null(s);
	return s;
}

static const char *self_exe(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	cr_assert_gt(n, 0);
	path[n] = '\0';
	return path;
}

/* The executable mapping of /proc/self/maps that contains @addr. */
static void find_mapping(uint64_t addr, uint64_t *start, uint64_t *end, uint64_t *pgoff,
			 char *path, size_t pathsz)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");
	int found = 0;

	cr_assert_not_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off;
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*x:%*x %*u %n", &a, &b, &off, &n) <
			    3 ||
		    addr < a || addr >= b)
			continue;
		*start = a;
		*end = b;
		*pgoff = off;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, pathsz, "%s", line + n);
		found = 1;
	}
	fclose(f);
	cr_assert(found, "no mapping for 0x%" PRIx64, addr);
}

Test(symbolize, resolves_static_function_of_the_executable)
{
	struct symbolizer *s = self_symbolizer();
	struct trace_frame f;

	cr_assert_eq(symbolizer__resolve(s, addr_of(target_fn), &f), 0);
	cr_expect_eq(f.addr, addr_of(target_fn));
	cr_expect_eq(f.kernel, 0);
	cr_assert_not_null(f.sym);
	cr_expect_str_eq(f.sym, "target_fn");
	cr_expect_eq(f.offset, 0);
	cr_assert_not_null(f.module);
	cr_expect_str_eq(f.module, self_exe());
	symbolizer__free(s);
}

Test(symbolize, address_inside_a_function_gives_the_offset)
{
	struct symbolizer *s = self_symbolizer();
	struct trace_frame f;

	cr_assert_eq(symbolizer__resolve(s, addr_of(target_fn) + 5, &f), 0);
	cr_assert_not_null(f.sym);
	cr_expect_str_eq(f.sym, "target_fn");
	cr_expect_eq(f.offset, 5);
	symbolizer__free(s);
}

static int is_libc_path(const char *m)
{
	return m && strstr(m, "/libc.so");
}

Test(symbolize, resolves_shared_library_function)
{
	struct symbolizer *s = self_symbolizer();
	/* through a pointer so that a PIE build takes libc's address from the
	 * GOT rather than a PLT stub in the executable */
	pid_t (*volatile fn)(void) = getpid;
	struct trace_frame f;

	cr_assert_eq(symbolizer__resolve(s, addr_of(fn), &f), 0);
	cr_assert_not_null(f.sym);
	/* glibc's getpid is a weak alias of __getpid */
	cr_expect(!strcmp(f.sym, "getpid") || !strcmp(f.sym, "__getpid"), "got %s",
		  f.sym);
	cr_expect_eq(f.offset, 0);
	cr_expect(is_libc_path(f.module), "module %s", f.module);
	symbolizer__free(s);
}

/* The same file mapped at another address, with the real mapping's file
 * offset: the symbolizer must derive the bias from pgoff and the program
 * headers alone. */
static void check_bias_at_fake_address(struct symbolizer *s, uint64_t addr, uint64_t fake,
				       const char *name)
{
	uint64_t start, end, pgoff;
	char path[PATH_MAX];
	struct trace_frame f;

	find_mapping(addr, &start, &end, &pgoff, path, sizeof(path));
	cr_assert_eq(
		symbolizer__add_mapping(s, fake, fake + (end - start), pgoff, 0, 0, path),
		0);
	cr_assert_eq(symbolizer__resolve(s, fake + (addr - start) + 2, &f), 0);
	cr_assert_not_null(f.sym, "nothing at fake address for %s", name);
	cr_expect_str_eq(f.sym, name);
	cr_expect_eq(f.offset, 2);
	cr_expect_str_eq(f.module, path);
}

Test(symbolize, computes_load_bias_from_file_offset)
{
	struct symbolizer *s = self_symbolizer();
	pid_t (*volatile fn)(void) = getpid;
	struct trace_frame f;

	check_bias_at_fake_address(s, addr_of(target_fn), 0x100000000000ull, "target_fn");
	cr_assert_eq(symbolizer__resolve(s, addr_of(fn), &f), 0);
	check_bias_at_fake_address(s, addr_of(fn), 0x200000000000ull, f.sym);
	/* a segment whose file offset and link-time address differ */
	check_bias_at_fake_address(s, addr_of(data_var), 0x400000000000ull, "data_var");
	/* the real mappings still resolve */
	cr_assert_eq(symbolizer__resolve(s, addr_of(target_fn), &f), 0);
	cr_expect_str_eq(f.sym, "target_fn");
	symbolizer__free(s);
}

Test(symbolize, unknown_user_address_is_enoent)
{
	struct symbolizer *s = self_symbolizer();
	struct trace_frame f;

	cr_expect_eq(symbolizer__resolve(s, 0x1000, &f), -ENOENT);
	cr_expect_eq(f.addr, 0x1000);
	cr_expect_eq(f.kernel, 0);
	cr_expect_null(f.sym);
	cr_expect_null(f.module);
	symbolizer__free(s);
}

Test(symbolize, address_without_symbol_keeps_module_and_file_address)
{
	struct symbolizer *s = self_symbolizer();
	uint64_t start, end, pgoff;
	char path[PATH_MAX];
	struct trace_frame f;

	/* a mapping of the executable over a range of its file the symbol
	 * table does not cover: past the end of the code */
	find_mapping(addr_of(target_fn), &start, &end, &pgoff, path, sizeof(path));
	cr_assert_eq(symbolizer__add_mapping(s, 0x300000000000ull,
					     0x300000000000ull + 0x100000,
					     pgoff + 0x10000000, 0, 0, path),
		     0);
	cr_assert_eq(symbolizer__resolve(s, 0x300000000010ull, &f), 0);
	cr_expect_null(f.sym);
	cr_expect_str_eq(f.module, path);
	/* no PT_LOAD holds that offset: the file offset, no name */
	cr_expect_eq(f.offset, pgoff + 0x10000000 + 0x10);
	symbolizer__free(s);
}

Test(symbolize, kernel_address_resolves_through_kallsyms)
{
	struct symbolizer *s = self_symbolizer();
	uint64_t addr = scan_kallsyms("schedule");
	struct trace_frame f;

	if (!addr) {
		symbolizer__free(s);
		cr_skip_test("no address for schedule in /proc/kallsyms: need "
			     "root or kernel.kptr_restrict=0");
	}
	cr_assert(symbol_is_kernel(addr));
	cr_assert_eq(symbolizer__resolve(s, addr + 4, &f), 0);
	cr_expect_eq(f.kernel, 1);
	cr_expect_str_eq(f.sym, "schedule");
	cr_expect_eq(f.offset, 4);
	cr_expect_str_eq(f.module, "[kernel]");
	symbolizer__free(s);
}

Test(symbolize, unknown_kernel_address_is_enoent)
{
	struct symbolizer *s = self_symbolizer();
	struct trace_frame f;

	cr_expect_eq(symbolizer__resolve(s, 0xffffffffffffff00ull, &f), -ENOENT);
	cr_expect_eq(f.kernel, 1);
	cr_expect_eq(f.addr, 0xffffffffffffff00ull);
	cr_expect_null(f.sym);
	symbolizer__free(s);
}

Test(symbolize, kernel_address_test)
{
	cr_expect(symbol_is_kernel(0xffffffff81000000ull));
	cr_expect(!symbol_is_kernel(0x7fffffffe000ull));
	cr_expect(!symbol_is_kernel(0));
}

Test(symbolize, nonexistent_pid_is_esrch)
{
	struct symbolizer *s = (void *)1;

	/* above any pid_max (at most 2^22) */
	cr_expect_eq(symbolizer__new(0x7ffffff0, &s), -ESRCH);
	cr_expect_null(s);
}

Test(symbolize, resolves_after_the_target_exited)
{
	struct symbolizer *s = NULL;
	struct trace_frame f;
	pid_t child = fork();
	int status, err;

	cr_assert_geq(child, 0);
	if (child == 0) {
		for (;;)
			pause();
	}
	err = symbolizer__new(child, &s);
	kill(child, SIGKILL);
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert_eq(err, 0, "symbolizer__new: %s", strerror(-err));

	/* the child is a fork: same binary at the same addresses */
	cr_assert_eq(symbolizer__resolve(s, addr_of(target_fn) + 1, &f), 0);
	cr_assert_not_null(f.sym);
	cr_expect_str_eq(f.sym, "target_fn");
	cr_expect_eq(f.offset, 1);
	cr_expect_eq(symbolizer__refresh(s), -ESRCH);
	symbolizer__free(s);
}

Test(symbolize, dlopened_libraries_are_found_on_a_miss)
{
	static const char lib[] = "libBrokenLocale.so.1";
	struct symbolizer *s = self_symbolizer();
	struct trace_frame f;
	void *h, *fn;

	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		symbolizer__free(s);
		cr_skip_test("cannot dlopen %s", lib);
	}
	fn = dlsym(h, "__ctype_get_mb_cur_max");
	cr_assert_not_null(fn);
	/* not in the maps read at symbolizer__new: the miss re-reads them */
	cr_assert_eq(symbolizer__resolve(s, addr_of(fn), &f), 0);
	cr_assert_not_null(f.sym);
	cr_expect_str_eq(f.sym, "__ctype_get_mb_cur_max");
	cr_expect(strstr(f.module, lib), "module %s", f.module);
	symbolizer__free(s);
	dlclose(h);
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out, ok = 0;
	struct stat st;

	if (in < 0)
		return 0;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out >= 0 && fstat(in, &st) == 0)
		ok = sendfile(out, in, NULL, (size_t)st.st_size) == st.st_size;
	if (out >= 0)
		close(out);
	close(in);
	return ok;
}

/* The child of a container: in its own mount namespace, @dir holds a tmpfs
 * with a library that does not exist on the host at that path. Reports the
 * address of a function of that library on @fd (0 on failure). */
static void __attribute__((noreturn)) container_child(const char *dir, int fd)
{
	char lib[PATH_MAX];
	struct link_map *lm = NULL;
	uint64_t addr = 0;
	void *h;

	h = dlopen("libBrokenLocale.so.1", RTLD_NOW);
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm)
		goto out;
	snprintf(lib, sizeof(lib), "%s/libd9test.so", dir);
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("tmpfs", dir, "tmpfs", 0, NULL) != 0 || !copy_file(lm->l_name, lib))
		goto out;
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (h)
		addr = (uint64_t)(uintptr_t)dlsym(h, "__ctype_get_mb_cur_max");
out:
	if (write(fd, &addr, sizeof(addr)) != sizeof(addr))
		_exit(1);
	for (;;)
		pause();
}

Test(symbolize, opens_files_inside_the_target_mount_namespace_after_exit)
{
	char dir[] = "/tmp/d9prof-test-XXXXXX", lib[PATH_MAX];
	struct symbolizer *s = NULL;
	struct trace_frame f;
	uint64_t addr = 0;
	int pfd[2], status, err;
	pid_t child;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(pipe(pfd), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0)
		container_child(dir, pfd[1]);
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &addr, sizeof(addr)), sizeof(addr));
	close(pfd[0]);
	err = addr ? symbolizer__new(child, &s) : 0;
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	rmdir(dir);
	if (!addr)
		cr_skip_test("cannot create a mount namespace (needs root)");
	cr_assert_eq(err, 0, "symbolizer__new: %s", strerror(-err));

	/* the host has no such file: only /proc/PID/root could open it */
	snprintf(lib, sizeof(lib), "%s/libd9test.so", dir);
	cr_assert_neq(access(lib, F_OK), 0);
	cr_assert_eq(symbolizer__resolve(s, addr, &f), 0);
	cr_expect_str_eq(f.module, lib);
	cr_assert_not_null(f.sym);
	cr_expect_str_eq(f.sym, "__ctype_get_mb_cur_max");
	cr_expect_eq(f.offset, 0);
	symbolizer__free(s);
}

static int is_hex_build_id(const char *b)
{
	size_t n = strlen(b);

	return n >= 16 && n % 2 == 0 && strspn(b, "0123456789abcdef") == n;
}

Test(symbolize, lists_modules_with_build_ids)
{
	struct symbolizer *s = self_symbolizer();
	const char *path, *bid;
	int exe = 0, libc = 0;
	size_t i, n = symbolizer__nmodules(s);

	cr_assert_gt(n, 1);
	for (i = 0; i < n; i++) {
		cr_assert_eq(symbolizer__module(s, i, &path, &bid), 0);
		cr_assert_not_null(path);
		cr_assert_not_null(bid);
		if (!strcmp(path, self_exe())) {
			exe = 1;
			cr_expect(is_hex_build_id(bid), "exe build-id '%s'", bid);
		}
		if (is_libc_path(path)) {
			libc = 1;
			cr_expect(is_hex_build_id(bid), "libc build-id '%s'", bid);
		}
	}
	cr_expect(exe && libc);
	cr_expect_eq(symbolizer__module(s, n, &path, &bid), -EINVAL);
	symbolizer__free(s);
}

/* The address of @name in our own vDSO image, found with libelf. */
static uint64_t vdso_symbol(const char *name)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), found = 0, min_vaddr = UINT64_MAX;
	Elf_Scn *scn = NULL;
	size_t i, phnum;
	Elf *e;

	if (!base)
		return 0;
	elf_version(EV_CURRENT);
	/* the image is smaller than this; libelf only reads what the
	 * headers point to */
	e = elf_memory((char *)(uintptr_t)base, 1 << 16);
	if (!e)
		return 0;
	if (elf_getphdrnum(e, &phnum) == 0) {
		for (i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    ph.p_vaddr < min_vaddr)
				min_vaddr = ph.p_vaddr;
		}
	}
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		d = elf_getdata(scn, NULL);
		for (i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			n = elf_strptr(e, sh.sh_link, sym.st_name);
			if (n && !strcmp(n, name) && sym.st_value) {
				found = base + sym.st_value - min_vaddr;
				break;
			}
		}
	}
	elf_end(e);
	return found;
}

Test(symbolize, resolves_vdso_functions)
{
	uint64_t addr = vdso_symbol("__vdso_clock_gettime");
	struct symbolizer *s;
	struct trace_frame f;

	if (!addr)
		cr_skip_test("no vDSO with __vdso_clock_gettime");
	s = self_symbolizer();
	cr_assert_eq(symbolizer__resolve(s, addr, &f), 0);
	cr_expect_str_eq(f.module, "[vdso]");
	cr_assert_not_null(f.sym);
	cr_expect(strstr(f.sym, "clock_gettime"), "got %s", f.sym);
	cr_expect_eq(f.offset, 0);
	symbolizer__free(s);
}

/* The [vdso] of /proc/@pid/maps: *@start, *@end (both 0 if none). */
static void vdso_range(pid_t pid, uint64_t *start, uint64_t *end)
{
	char path[64], line[PATH_MAX + 128];
	unsigned long long a, b;
	FILE *f;

	*start = *end = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &a, &b) == 2) {
			*start = a;
			*end = b;
		}
	fclose(f);
}

/* `record -- CMD`: the symbolizer reads the maps of the command stopped
 * before its exec; the exec maps a vDSO elsewhere, which the recorder
 * learns from its PERF_RECORD_MMAP2 only after the command has exited
 * (a short one is gone before its maps are read again). */
Test(symbolize, vdso_mapped_by_an_exec_is_named_after_the_target_exited)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR),
		 fn = vdso_symbol("__vdso_clock_gettime");
	uint64_t vs, ve;
	int go[2], hold[2], execd[2], status, err;
	struct symbolizer *s = NULL;
	struct symbol_cfi cfi;
	struct trace_frame f;
	pid_t child;
	char c;

	if (!fn)
		cr_skip_test("no vDSO with __vdso_clock_gettime");
	cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(execd, O_CLOEXEC), 0);
	cr_assert_eq(pipe(hold), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		close(go[1]);
		close(hold[1]);
		close(execd[0]);
		if (read(go[0], &c, 1) != 1 || dup2(hold[0], 0) != 0)
			_exit(126);
		/* waits for its stdin to close */
		execl("/bin/sh", "sh", "-c", "read x", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(hold[0]);
	close(execd[1]);
	err = symbolizer__new(child, &s);
	cr_assert_eq(write(go[1], "g", 1), 1);
	/* end of file once it has exec'd (the pipe is close-on-exec) */
	cr_assert_eq(read(execd[0], &c, 1), 0);
	vdso_range(child, &vs, &ve);
	close(hold[1]);
	cr_assert_eq(waitpid(child, &status, 0), child);
	close(go[1]);
	close(execd[0]);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) < 126, "child status %#x",
		  status);
	cr_assert_eq(err, 0, "symbolizer__new: %s", strerror(-err));
	cr_assert_gt(ve, vs, "no [vdso] after the exec");

	cr_assert_eq(symbolizer__add_mapping(s, vs, ve, 0, 0, 0, "[vdso]"), 0);
	cr_assert_eq(symbolizer__resolve(s, vs + (fn - base), &f), 0);
	cr_expect_str_eq(f.module, "[vdso]");
	cr_assert_not_null(f.sym, "[vdso]+%#" PRIx64 " has no name", f.offset);
	cr_expect(strstr(f.sym, "clock_gettime"), "got %s", f.sym);
	cr_expect_eq(f.offset, 0);
	/* and its CFI unwinds a sample out of it */
	cr_expect_eq(symbolizer__cfi_at(s, vs + (fn - base), &cfi), 0);
	symbolizer__free(s);
}

/* A target whose vDSO the symbolizer learns only once it has gone: ours
 * names it if it has the same length (the same kernel's image), else it
 * stays unnamed (another ABI's, e.g. a 32-bit target's). */
Test(symbolize, vdso_learned_after_the_target_exited_is_ours_if_the_length_matches)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR),
		 fn = vdso_symbol("__vdso_clock_gettime");
	uint64_t start, end, pgoff, len, at = 0x7e5500000000ull;
	char path[PATH_MAX];
	struct symbolizer *s = NULL;
	struct trace_frame f;
	int ready[2], status, err;
	size_t i, n;
	pid_t child;
	char c;

	if (!fn)
		cr_skip_test("no vDSO with __vdso_clock_gettime");
	find_mapping(base, &start, &end, &pgoff, path, sizeof(path));
	len = end - start;
	cr_assert_eq(pipe(ready), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		/* no vDSO in its maps: none is known when it has gone */
		if (munmap((void *)(uintptr_t)start, len) != 0 ||
		    write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	cr_assert_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(ready[1]);
	err = symbolizer__new(child, &s);
	kill(child, SIGKILL);
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert_eq(err, 0, "symbolizer__new: %s", strerror(-err));
	n = symbolizer__nmodules(s);
	for (i = 0; i < n; i++) {
		const char *mod;

		cr_assert_eq(symbolizer__module(s, i, &mod, NULL), 0);
		cr_assert_str_neq(mod, "[vdso]");
	}

	cr_assert_eq(symbolizer__add_mapping(s, at, at + len, 0, 0, 0, "[vdso]"), 0);
	cr_assert_eq(symbolizer__resolve(s, at + (fn - base), &f), 0);
	cr_expect_str_eq(f.module, "[vdso]");
	cr_assert_not_null(f.sym);
	cr_expect(strstr(f.sym, "clock_gettime"), "got %s", f.sym);
	cr_expect_eq(f.offset, 0);
	cr_expect_null(symbolizer__module_unreadable(s, n));

	/* another length: ours is not its image */
	at += 0x100000000ull;
	cr_assert_eq(symbolizer__add_mapping(s, at, at + len + 4096, 0, 0, 0, "[vdso]"),
		     0);
	cr_assert_eq(symbolizer__resolve(s, at + (fn - base), &f), 0);
	cr_expect_str_eq(f.module, "[vdso]");
	cr_expect_null(f.sym, "named %s by an image of another length", f.sym);
	cr_expect_eq(f.offset, fn - base);
	cr_assert_eq(symbolizer__nmodules(s), n + 2);
	cr_expect_not_null(symbolizer__module_unreadable(s, n + 1));
	symbolizer__free(s);
}

/* While the target lives, the image it shows is the one read: a vDSO
 * whose bytes differ from every one known is an object of its own, one
 * with the same bytes is the same object. */
Test(symbolize, vdso_names_come_from_the_image_the_target_maps)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR),
		 fn = vdso_symbol("__vdso_clock_gettime");
	uint64_t start, end, pgoff, len, same, patched;
	struct symbolizer *s;
	struct trace_frame f;
	char path[PATH_MAX], *p, *q;
	size_t n;

	if (!fn)
		cr_skip_test("no vDSO with __vdso_clock_gettime");
	find_mapping(base, &start, &end, &pgoff, path, sizeof(path));
	len = end - start;
	/* two copies of our image, in memory of ours: one as it is, one whose
	 * names are "clock_gettimX" */
	p = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		 0);
	cr_assert_neq(p, MAP_FAILED);
	memcpy(p, (const void *)(uintptr_t)start, len);
	memcpy(p + len, p, len);
	for (q = p + len;
	     (q = memmem(q, (size_t)(p + 2 * len - q), "clock_gettime", 13));)
		q[12] = 'X';
	same = (uint64_t)(uintptr_t)p;
	patched = same + len;

	s = self_symbolizer();
	n = symbolizer__nmodules(s);
	cr_assert_eq(symbolizer__add_mapping(s, same, same + len, 0, 0, 0, "[vdso]"), 0);
	cr_expect_eq(symbolizer__nmodules(s), n, "the same image read twice");
	cr_assert_eq(
		symbolizer__add_mapping(s, patched, patched + len, 0, 0, 0, "[vdso]"), 0);
	cr_expect_eq(symbolizer__nmodules(s), n + 1);

	cr_assert_eq(symbolizer__resolve(s, same + (fn - base), &f), 0);
	cr_assert_not_null(f.sym);
	cr_expect(strstr(f.sym, "clock_gettime"), "got %s", f.sym);
	cr_assert_eq(symbolizer__resolve(s, patched + (fn - base), &f), 0);
	cr_expect_str_eq(f.module, "[vdso]");
	cr_assert_not_null(f.sym);
	cr_expect(strstr(f.sym, "clock_gettimX"), "got %s", f.sym);
	cr_assert_eq(symbolizer__resolve(s, fn, &f), 0);
	cr_assert_not_null(f.sym);
	cr_expect(strstr(f.sym, "clock_gettime"), "got %s", f.sym);
	symbolizer__free(s);
	munmap(p, 2 * len);
}

Test(symbolize, many_addresses_resolve)
{
	struct symbolizer *s = self_symbolizer();
	struct trace_frame f;
	int i;

	for (i = 0; i < 10000; i++) {
		cr_assert_eq(symbolizer__resolve(s, addr_of(target_fn) + (i % 8), &f), 0);
		cr_assert_str_eq(f.sym, "target_fn");
	}
	symbolizer__free(s);
}

/* ---- demangling ----------------------------------------------------- */

static void expect_demangled(const char *in, const char *want)
{
	char *out = symbol_demangle(in);

	if (!want) {
		cr_expect_null(out, "%s demangled to %s", in, out);
	} else {
		cr_assert_not_null(out, "%s not demangled", in);
		cr_expect_str_eq(out, want);
	}
	free(out);
}

Test(symbolize, demangles_cxx)
{
	expect_demangled("_ZN3foo3barEv", "foo::bar()");
	expect_demangled(
		"_ZNK3foo3Bar3bazERKSt6vectorIiSaIiEE",
		"foo::Bar::baz(std::vector<int, std::allocator<int> > const&) const");
}

Test(symbolize, demangles_rust_legacy_without_hash)
{
	expect_demangled("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
	expect_demangled(
		"_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$"
		"$GT$..$u7b$$u7b$closure$u7d$$u7d$$GT$17h0123456789abcdefE",
		"core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>");
}

Test(symbolize, symbol_versions_are_not_part_of_names)
{
	struct symbolizer *s = self_symbolizer();
	int (*volatile fn)(clockid_t, struct timespec *) = clock_gettime;
	struct trace_frame f;

	cr_assert_eq(symbolizer__resolve(s, addr_of(fn), &f), 0);
	cr_assert_not_null(f.sym);
	cr_expect(!strchr(f.sym, '@'), "got %s", f.sym);
	cr_expect(strstr(f.sym, "clock_gettime"), "got %s", f.sym);
	symbolizer__free(s);
}

Test(symbolize, demangles_rust_v0)
{
	expect_demangled("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar");
}

Test(symbolize, plain_names_are_not_demangled)
{
	expect_demangled("main", NULL);
	expect_demangled("__libc_start_main", NULL);
	expect_demangled("_Z", NULL);
	expect_demangled("", NULL);
	cr_expect_null(symbol_demangle(NULL));
}

/* ---- address translation through program headers ------------------------ */

/* symbol_load_vaddr() of @off in @loads[0..@n) finds @want. */
static void expect_vaddr(const struct symbol_load *loads, size_t n, uint64_t off,
			 uint64_t want)
{
	uint64_t v;

	cr_assert_eq(symbol_load_vaddr(loads, n, off, &v), 0, "offset 0x%" PRIx64, off);
	cr_expect_eq(v, want, "offset 0x%" PRIx64 ": 0x%" PRIx64, off, v);
}

/* A PT_LOAD as symbol_load_vaddr() sees it. */
#define LOAD(off, va, fsz, msz, fl)                                                      \
	{                                                                                \
		.offset = (off), .vaddr = (va), .filesz = (fsz), .memsz = (msz),         \
		.flags = (fl)                                                            \
	}

/* lld's default x86-64 layout: the read-only segment ends inside the page
 * where the executable one begins, so p_vaddr != p_offset from there on. */
static const struct symbol_load lld_loads[] = {
	LOAD(0, 0, 0x2fdb0, 0x2fdb0, PF_R),
	LOAD(0x2fdb0, 0x30db0, 0x5000, 0x5000, PF_R | PF_X),
	LOAD(0x34db0, 0x36db0, 0x200, 0x1000, PF_R | PF_W),
};

Test(symbolize, lld_layout_translates_by_the_segment_holding_the_offset)
{
	uint64_t v;

	/* the r-xp mapping starts at pgoff 0x2f000, inside the read-only
	 * segment's file range: code past 0x2fdb0 is the executable one's */
	expect_vaddr(lld_loads, 3, 0x2fdb0, 0x30db0);
	expect_vaddr(lld_loads, 3, 0x30895, 0x31895);
	/* the tail of the read-only data in that shared page */
	expect_vaddr(lld_loads, 3, 0x2f100, 0x2f100);
	expect_vaddr(lld_loads, 3, 0x34db8, 0x36db8);
	/* past the file bytes of every segment */
	cr_expect_eq(symbol_load_vaddr(lld_loads, 3, 0x35000, &v), -ENOENT);
	cr_expect_eq(symbol_load_vaddr(lld_loads, 0, 0x10, &v), -ENOENT);
}

Test(symbolize, several_executable_segments_and_et_exec)
{
	/* a non-PIE executable at 0x400000 with two executable segments
	 * (e.g. .init/.text split by a linker script) in any order */
	static const struct symbol_load exec_loads[] = {
		LOAD(0x3000, 0x603000, 0x800, 0x800, PF_R | PF_X),
		LOAD(0, 0x400000, 0x1000, 0x1000, PF_R),
		LOAD(0x1000, 0x401000, 0x1800, 0x1800, PF_R | PF_X),
	};
	/* overlapping claims: the executable segment wins */
	static const struct symbol_load overlap[] = {
		LOAD(0, 0x10000, 0x2000, 0x2000, PF_R),
		LOAD(0x1000, 0x21000, 0x1000, 0x1000, PF_R | PF_X),
	};
	uint64_t v;

	expect_vaddr(exec_loads, 3, 0x1234, 0x401234);
	expect_vaddr(exec_loads, 3, 0x3010, 0x603010);
	expect_vaddr(exec_loads, 3, 0x10, 0x400010);
	cr_expect_eq(symbol_load_vaddr(exec_loads, 3, 0x2900, &v), -ENOENT);
	expect_vaddr(overlap, 2, 0x1800, 0x21800);
}

/* ---- JIT code named by /tmp/perf-PID.map ----------------------------------- */

/* Write @text as this process's /tmp/perf-PID.map, its path in @path. */
static void put_perf_map(char *path, size_t len, const char *text)
{
	FILE *m;

	snprintf(path, len, "/tmp/perf-%d.map", (int)getpid());
	m = fopen(path, "w");
	cr_assert_not_null(m);
	fputs(text, m);
	fclose(m);
}

Test(symbolize, perf_map_names_anonymous_code)
{
	char path[64];
	struct symbolizer *s;
	struct trace_frame f;

	put_perf_map(path, sizeof(path),
		     "7e0000001000 100 jit_old\n"
		     "0x7e0000002000 0x40 LazyCompile:*hot_loop app.js:12\n"
		     "garbage line\n"
		     "7e0000001080 20 jit_new\n");
	s = self_symbolizer();
	cr_assert_eq(symbolizer__resolve(s, 0x7e0000002010ull, &f), 0);
	cr_expect_str_eq(f.sym, "LazyCompile:*hot_loop app.js:12");
	cr_expect_str_eq(f.module, path);
	cr_expect_eq(f.offset, 0x10);
	cr_assert_eq(symbolizer__resolve(s, 0x7e0000001010ull, &f), 0);
	cr_expect_str_eq(f.sym, "jit_old");
	/* a later line over an earlier region wins */
	cr_assert_eq(symbolizer__resolve(s, 0x7e0000001090ull, &f), 0);
	cr_expect_str_eq(f.sym, "jit_new");
	cr_expect_eq(f.offset, 0x10);
	cr_expect_eq(symbolizer__resolve(s, 0x7e0000002040ull, &f), -ENOENT);
	/* file mappings still win over the map */
	cr_assert_eq(symbolizer__resolve(s, addr_of(target_fn), &f), 0);
	cr_expect_str_eq(f.sym, "target_fn");
	symbolizer__free(s);
	unlink(path);
}

/* Anonymous executable memory is no module (perf says "//anon" in its
 * PERF_RECORD_MMAP2 of it): its addresses stay for the perf map to name. */
Test(symbolize, mappings_of_no_file_are_not_kept)
{
	/* at 0x7e0000010000, 0x7e0000030000, 0x7e0000050000, 64 KiB each */
	static const char *const no_file[] = {"//anon", "[heap]", "[anon:jit]"};
	char path[64];
	struct symbolizer *s;
	struct trace_frame f;
	size_t n;

	put_perf_map(path, sizeof(path), "7e0000011000 100 jit_fn\n");
	s = self_symbolizer();
	n = symbolizer__nmodules(s);
	for (size_t i = 0; i < sizeof(no_file) / sizeof(no_file[0]); i++) {
		uint64_t start = 0x7e0000010000ull + i * 0x20000;

		cr_expect_eq(symbolizer__add_mapping(s, start, start + 0x10000, 0, 0, 0,
						     no_file[i]),
			     -ENOENT, "%s", no_file[i]);
	}
	cr_expect_eq(symbolizer__nmodules(s), n);
	cr_assert_eq(symbolizer__resolve(s, 0x7e0000011010ull, &f), 0);
	cr_expect_str_eq(f.sym, "jit_fn");
	cr_expect_str_eq(f.module, path);
	cr_expect_eq(symbolizer__resolve(s, 0x7e0000030010ull, &f), -ENOENT);
	symbolizer__free(s);
	unlink(path);
}

/* ---- inline frames ----------------------------------------------------------- */

Test(symbolize, inlined_code_names_its_chain_innermost_first)
{
	struct symbolizer *s = self_symbolizer();
	uint64_t a = addr_of(inl_host), i;
	struct trace_frame f;
	int both = 0, outer_only = 0;

	inl_host(3);
	/* some instruction of inl_host lies inside inl_inner inside inl_outer
	 * (DWARF's inline scopes); none names inl_host itself in the chain */
	for (i = 0; i < 256; i++) {
		cr_assert_eq(symbolizer__resolve(s, a + i, &f), 0);
		if (!f.sym || strcmp(f.sym, "inl_host"))
			break;
		cr_assert_leq(f.ninl, 2);
		if (f.ninl == 2 && !strcmp(f.inl[0], "inl_inner") &&
		    !strcmp(f.inl[1], "inl_outer"))
			both = 1;
		if (f.ninl == 1 && !strcmp(f.inl[0], "inl_outer"))
			outer_only = 1;
	}
	cr_expect(both, "no address of inl_host reads inl_inner <- inl_outer");
	cr_expect(outer_only, "no address of inl_host reads inl_outer alone");
	symbolizer__free(s);
}

/* ---- source lines ---------------------------------------------------------- */

/* The line of @file holding @text first (1-based), 0 if none. */
static uint32_t line_of(const char *file, const char *text)
{
	FILE *f = fopen(file, "r");
	char buf[512];
	uint32_t n = 0, at = 0;

	cr_assert_not_null(f, "%s", file);
	while (!at && fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, text))
			at = n;
	}
	fclose(f);
	return at;
}

Test(symbolize, source_lines_come_from_the_line_table)
{
	struct symbolizer *s = self_symbolizer();
	uint32_t body, i;
	struct trace_frame f;
	int seen = 0;

	cr_assert_eq(symbolizer__resolve(s, addr_of(target_fn), &f), 0);
	cr_assert_not_null(f.file, "no source file for target_fn");
	/* a path from the root, the file that is this test */
	cr_expect_eq(f.file[0], '/', "%s", f.file);
	cr_expect(strstr(f.file, "tests/unit/test_symbolize.c"), "%s", f.file);
	cr_expect_eq(f.start_line, line_of(f.file, "int target_fn(int x)"));
	body = line_of(f.file, "sink += i * x;");
	cr_assert_gt(body, 0);
	for (i = 0; i < 64 && !seen; i++) {
		cr_assert_eq(symbolizer__resolve(s, addr_of(target_fn) + i, &f), 0);
		if (f.sym && !strcmp(f.sym, "target_fn") && f.line == body)
			seen = 1;
	}
	cr_expect(seen, "no address of target_fn is on its line %u", body);
	symbolizer__free(s);
}

Test(symbolize, inlined_code_has_its_call_sites)
{
	struct symbolizer *s = self_symbolizer();
	uint64_t a = addr_of(inl_host), i;
	struct trace_frame f;
	const char *file = NULL;
	int both = 0;

	inl_host(3);
	for (i = 0; i < 256 && !both; i++) {
		cr_assert_eq(symbolizer__resolve(s, a + i, &f), 0);
		if (!f.sym || strcmp(f.sym, "inl_host"))
			break;
		both = f.ninl == 2 && f.inl_src && f.file;
	}
	cr_assert(both, "no address of inl_host reads inl_inner <- inl_outer");
	file = f.file;
	cr_expect_eq(f.line, line_of(file, "inl_sink = inl_sink * 31"));
	cr_expect_eq(f.start_line, line_of(file, "void inl_host(int n)"));
	cr_assert_not_null(f.inl_src[0].call_file);
	cr_expect_str_eq(f.inl_src[0].call_file, file);
	cr_expect_eq(f.inl_src[0].call_line, line_of(file, "inl_inner(i);"));
	cr_expect_eq(f.inl_src[0].decl_line, line_of(file, "void inl_inner(int i)"));
	cr_expect_eq(f.inl_src[1].call_line, line_of(file, "inl_outer(n);"));
	cr_expect_eq(f.inl_src[1].decl_line, line_of(file, "void inl_outer(int n)"));
	symbolizer__free(s);
}

/* ---- maps text, and a symbolizer of no process ------------------------ */

Test(symbolize, maps_line_keeps_executable_files_and_the_vdso)
{
	struct symbol_maps_line l;
	char line[] = "7fb8fedff000-7fb8fef55000 r-xp 00026000 fe:01 332835"
		      "                     /usr/lib/x86_64-linux-gnu/libc.so.6";

	cr_assert_eq(symbol_maps_line(line, &l), 0);
	cr_expect_eq(l.start, 0x7fb8fedff000ull);
	cr_expect_eq(l.end, 0x7fb8fef55000ull);
	cr_expect_eq(l.pgoff, 0x26000);
	cr_expect_eq(l.dev, makedev(0xfe, 1));
	cr_expect_eq(l.ino, 332835);
	cr_expect_str_eq(l.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	cr_expect_eq(
		symbol_maps_line("7ffd1000-7ffd3000 r-xp 00000000 00:00 0  [vdso]", &l),
		0);
	cr_expect_str_eq(l.path, "[vdso]");
	/* a file name with spaces and a deleted file keep the whole rest */
	cr_expect_eq(symbol_maps_line("1000-2000 r-xp 0 08:01 7 /tmp/a b (deleted)", &l),
		     0);
	cr_expect_str_eq(l.path, "/tmp/a b (deleted)");

	cr_expect_eq(symbol_maps_line("1000-2000 r--p 0 08:01 7 /usr/bin/cat", &l),
		     -ENOENT);
	cr_expect_eq(symbol_maps_line("1000-2000 rwxp 0 00:00 0 ", &l), -ENOENT);
	cr_expect_str_eq(l.path, "");
	cr_expect_eq(symbol_maps_line("ffffffffff600000-ffffffffff601000 --xp 00000000 "
				      "00:00 0  [vsyscall]",
				      &l),
		     -ENOENT);
	cr_expect_eq(symbol_maps_line("", &l), -EINVAL);
	cr_expect_eq(symbol_maps_line("1000-2000 r-xp 0 08:01", &l), -EINVAL);
	cr_expect_eq(symbol_maps_line("garbage", &l), -EINVAL);
}

Test(symbolize, offline_symbolizer_agrees_with_the_real_one_on_modules_and_offsets)
{
	struct symbolizer *real = self_symbolizer(), *off = NULL;
	uint64_t addrs[] = {addr_of(target_fn), addr_of(getpid), addr_of(data_var)};
	char *text = NULL;
	size_t len = 0, i;
	FILE *f = fopen("/proc/self/maps", "re");
	FILE *m = open_memstream(&text, &len);
	char buf[4096];
	size_t n;

	cr_assert(f && m);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	fclose(f);
	fclose(m);
	cr_assert_eq(symbolizer__new_offline(NULL, &off), 0);
	cr_assert_eq(symbolizer_parse_maps(off, text, len), 0);
	cr_expect_eq(symbolizer__nmodules(off), symbolizer__nmodules(real));
	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct trace_frame fr, fo;

		if (symbolizer__resolve(real, addrs[i], &fr))
			continue; /* data: not in an executable mapping */
		cr_assert_eq(symbolizer__resolve(off, addrs[i], &fo), 0);
		cr_expect_null(fo.sym, "an offline symbolizer opens no file");
		cr_expect_str_eq(fo.module, fr.module);
		cr_expect_not_null(symbolizer__module_unreadable(off, 0));
	}
	/* no process: nothing to re-read, no perf map, no kernel symbols */
	cr_expect_eq(symbolizer__refresh(off), -ESRCH);
	{
		struct trace_frame fo;

		cr_expect_eq(symbolizer__resolve(off, 0x1000, &fo), -ENOENT);
		cr_expect_eq(symbolizer__resolve(off, 0xffffffff81000000ull, &fo),
			     -ENOENT);
		cr_expect_eq(fo.kernel, 1);
	}
	symbolizer__free(off);
	symbolizer__free(real);
	free(text);
}

Test(symbolize, a_mapping_replaces_the_ones_it_overlaps)
{
	struct symbolizer *s = NULL;
	struct trace_frame f;
	char text[] = "1000-3000 r-xp 00000000 08:01 11 /a\n"
		      "3000-5000 r-xp 00002000 08:01 11 /a\n"
		      "5000-6000 r-xp 00000000 08:01 12 /b\n"
		      /* over the end of the first and the start of the second */
		      "2000-4000 r-xp 00010000 08:01 13 /c (deleted)\n"
		      "4800-4900 r--p 00000000 08:01 14 /d\n"
		      "no newline at the end: ignored";

	cr_assert_eq(symbolizer__new_offline(NULL, &s), 0);
	cr_assert_eq(symbolizer_parse_maps(s, text, strlen(text)), 0);
	cr_expect_eq(symbolizer__nmodules(s), 3);
	/* both mappings /c overlaps are gone, whole */
	cr_expect_eq(symbolizer__resolve(s, 0x1000, &f), -ENOENT);
	cr_expect_eq(symbolizer__resolve(s, 0x4800, &f), -ENOENT);
	cr_assert_eq(symbolizer__resolve(s, 0x2010, &f), 0);
	cr_expect_str_eq(f.module, "/c");
	cr_expect_eq(f.offset, 0x10010);
	cr_expect_null(f.sym);
	cr_assert_eq(symbolizer__resolve(s, 0x5fff, &f), 0);
	cr_expect_str_eq(f.module, "/b");
	cr_expect_eq(f.offset, 0xfff);
	cr_expect_eq(symbolizer__resolve(s, 0x6000, &f), -ENOENT);
	symbolizer__free(s);
}
