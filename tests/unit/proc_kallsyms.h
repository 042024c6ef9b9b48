/* SPDX-License-Identifier: MIT */
/*
 * proc_kallsyms.h - for the tests that check a lookup against the running
 * kernel (test_kallsyms, test_symbolize): a symbol's address read from
 * /proc/kallsyms the plain way, with no code of the tree's.
 */
#ifndef D9_PROC_KALLSYMS_H
#define D9_PROC_KALLSYMS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The address of @name as a text symbol of the core kernel, or 0 (no
 * such symbol, no /proc/kallsyms, or addresses hidden as 0). */
static inline uint64_t scan_kallsyms(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 &&
		    !strchr(line, '[') && (type == 'T' || type == 't') &&
		    !strcmp(sym, name)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

#endif /* D9_PROC_KALLSYMS_H */
