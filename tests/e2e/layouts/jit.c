/* SPDX-License-Identifier: MIT */
/*
 * jit.c - JIT code named only by /tmp/perf-PID.map.
 *   jit [SECS]   copy a hash loop (x86-64, with a frame: push rbp; mov
 *                rbp,rsp; ...; pop rbp; ret) into anonymous memory made
 *                executable, describe it in /tmp/perf-PID.map as
 *                "START SIZE jit_leaf" (hex, perf's convention), print
 *                "ready PID", then call it from jit_caller for SECS
 *                (default 30) seconds. The map file is left for the
 *                recorder to read at its end; whoever started us removes it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "run.h"

#if defined(__clang__)
#define HOT_NOINLINE __attribute__((noinline))
#else
#define HOT_NOINLINE __attribute__((noinline, noclone))
#endif

/* uint32_t jit_leaf(uint32_t h): 65536 rounds of h = (h * FNV) ^ count */
static const unsigned char code[] = {
	0x55,			      /* push %rbp */
	0x48, 0x89, 0xe5,	      /* mov %rsp,%rbp */
	0xb9, 0x00, 0x00, 0x01, 0x00, /* mov $0x10000,%ecx */
	0x89, 0xf8,		      /* mov %edi,%eax */
	/* loop: */
	0x69, 0xc0, 0x93, 0x01, 0x00, 0x01, /* imul $0x1000193,%eax,%eax */
	0x31, 0xc8,			    /* xor %ecx,%eax */
	0xff, 0xc9,			    /* dec %ecx */
	0x75, 0xf4,			    /* jne loop (-12) */
	0x5d,				    /* pop %rbp */
	0xc3,				    /* ret */
};

typedef uint32_t (*jit_fn)(uint32_t);

HOT_NOINLINE uint32_t jit_caller(jit_fn fn, uint32_t seed, unsigned n)
{
	uint32_t h = seed;

	for (unsigned i = 0; i < n; i++)
		h = fn(h + i) ^ (h >> 3);
	return h;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 30, end = now() + secs;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char path[64];
	uint32_t h = 1;
	unsigned char *mem;
	FILE *map;

	mem = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jit: mmap");
		return 1;
	}
	/* not at the start of the region: an offset of 0 proves nothing */
	memset(mem, 0xcc, pg); /* int3 around the code */
	memcpy(mem + 64, code, sizeof(code));
	if (mprotect(mem, pg, PROT_READ | PROT_EXEC)) {
		perror("jit: mprotect");
		return 1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	if (!(map = fopen(path, "w"))) {
		perror(path);
		return 1;
	}
	fprintf(map, "%lx %zx jit_leaf\n", (unsigned long)(uintptr_t)(mem + 64),
		sizeof(code));
	fclose(map);
	say_ready();
	do {
		h = jit_caller((jit_fn)(void *)(mem + 64), h, 10);
		layout_sink = h;
	} while (now() < end);
	return 0;
}
