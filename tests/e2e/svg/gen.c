/* SPDX-License-Identifier: MIT */
/*
 * gen.c - the flamegraphs tests/e2e/svg.sh opens in a browser.
 *
 *   gen DIR    writes DIR/cpu.svg (a flame graph, CPU palette) and
 *              DIR/icicle.svg (the same graph as an icicle, off-CPU blues)
 *
 * The graph: 2,000 tasks with a few frames each, weights falling off as
 * 1/rank (most are narrower than a pixel), and two wide tasks: one whose
 * frame has a long C++ name, cut in the middle to fit, and one with a long
 * C name, cut on the right. Exit status 0, or 1 with a message.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "analysis/flame.h"

#define CXX_NAME "ns::detail::Type<std::vector<int>, Alloc>::method(int, char const*)"
#define C_NAME	 "a_very_long_c_function_name_that_is_cut_on_the_right"

static int build(struct flame *f)
{
	const char *cxx[] = {"task 1 server", "runtime::worker::run", CXX_NAME, "memcpy"};
	const char *c[] = {"task 2 logger", "runtime::worker::run", C_NAME, "write"};
	char root[64], mid[64], leaf[64];
	int err;

	err = flame__add(f, cxx, 4, 400000);
	err = err ? err : flame__add(f, cxx, 3, 100000);
	err = err ? err : flame__add(f, c, 4, 120000);
	for (int i = 3; i <= 2002 && !err; i++) {
		const char *p[] = {root, "runtime::worker::run", mid, leaf};

		snprintf(root, sizeof(root), "task %d handler", i);
		snprintf(mid, sizeof(mid), "app::handlers::Conn<Tls>::handle_%d(Req&)",
			 i % 40);
		snprintf(leaf, sizeof(leaf), "leaf_%d", i % 7);
		err = flame__add(f, p, 4, 1 + 100000 / i);
		err = err ? err : flame__add(f, p, 3, 1 + 30000 / i);
	}
	return err;
}

/* A subtitle as long as off-CPU's on a lossy trace with a filter: wider
 * than a 1400 px window on one line */
#define LONG_SUB                                                                         \
	"microseconds off-CPU, stacks at switch-out: 2.09s in 704 intervals (76.8ms "    \
	"waiting for a CPU, marked [runqueue: holder], charged to what ran by time); "   \
	"polls >= 1.00ms; span slow_route, its enters longer than 10.0ms; lost: 4 "      \
	"switch-ins the kernel did not report, 5 off-CPU stacks cut short (unwind "      \
	"failed); tests/e2e/svg.sh"

static int write_svg(struct flame *f, const char *dir, const char *name,
		     const struct flame_style *st, const char *sub)
{
	char path[4096];
	FILE *out;
	int err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w");
	if (!out) {
		fprintf(stderr, "gen: cannot write '%s': %s\n", path, strerror(errno));
		return 1;
	}
	flame__set_style(f, st);
	err = flame__write_svg(f, out, "2,000 tasks", sub, "samples");
	if (fclose(out) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, "gen: cannot write '%s': %s\n", path, strerror(-err));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct flame_style icicle = {.offcpu = 1, .reverse = 1};
	struct flame *f;
	int err, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: gen DIR\n");
		return 2;
	}
	f = flame__new();
	if (!f) {
		fprintf(stderr, "gen: out of memory\n");
		return 1;
	}
	err = build(f);
	if (err) {
		fprintf(stderr, "gen: cannot build the graph: %s\n", strerror(-err));
		flame__free(f);
		return 1;
	}
	rc = write_svg(f, argv[1], "cpu.svg", NULL, LONG_SUB);
	if (!rc)
		rc = write_svg(f, argv[1], "icicle.svg", &icicle, "tests/e2e/svg.sh");
	flame__free(f);
	return rc;
}
