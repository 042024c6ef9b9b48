/* SPDX-License-Identifier: MIT */
/*
 * xmllint.h - for the tests of the SVG writers (test_flame,
 * test_flame_svg): is a document well-formed XML, by xmllint(1) when it
 * is installed.
 */
#ifndef D9_XMLLINT_H
#define D9_XMLLINT_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <criterion/criterion.h>

/* Whether xmllint is on PATH. */
static inline int have_xmllint(void)
{
	return system("command -v xmllint >/dev/null 2>&1") == 0;
}

/* Run xmllint --noout on @svg; 0 if well-formed. */
static inline int xmllint(const char *svg)
{
	char path[] = "/tmp/d9prof-test-XXXXXX.svg", cmd[128];
	int fd = mkstemps(path, 4), rc;
	FILE *f;

	cr_assert_geq(fd, 0);
	f = fdopen(fd, "w");
	cr_assert(f);
	fputs(svg, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	rc = system(cmd);
	unlink(path);
	return rc;
}

#endif
