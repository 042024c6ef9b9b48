// SPDX-License-Identifier: MIT
/* d9prof flame: CPU flamegraph of a trace, per task or split by task. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis.h"
#include "cli/cli.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof flame [-i FILE] [--task ID] [--format svg|folded] [-o OUT]\n\n"
		"Join every CPU sample to the poll running on its thread at that instant\n"
		"and draw the result. Without --task, each sample sits under a root frame\n"
		"naming its task (\"[no poll]\" outside any poll), so one picture shows the\n"
		"split between tasks.\n\n"
		"options:\n"
		"  -i, --input FILE      trace (default ./" DEFAULT_TRACE ")\n"
		"  -t, --task ID         only samples taken while task ID was polled\n"
		"  -f, --format FMT      svg (default: interactive, self-contained) or\n"
		"                        folded (\"root;...;leaf count\" lines for\n"
		"                        flamegraph.pl, inferno, speedscope)\n"
		"  -o, --output OUT      write there instead of stdout\n"
		"  -h, --help            this help\n\n"
		"examples:\n"
		"  d9prof flame -o all.svg\n"
		"  d9prof flame --task 42 --format folded | sort -k2 -n | tail\n");
}

int cmd_flame(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "task", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct flame_opts fo = { .format = FLAME_SVG };
	const char *in = DEFAULT_TRACE, *outp = NULL;
	struct trace *t;
	struct join *j = NULL;
	FILE *out;
	int c, err, ret = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:t:f:o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			in = optarg;
			break;
		case 't':
			if (parse_u64(optarg, &fo.task) || fo.task == 0)
				return usage_error("flame ", "bad task id '%s': want a number > 0",
						   optarg);
			fo.have_task = 1;
			break;
		case 'f':
			if (!strcmp(optarg, "svg"))
				fo.format = FLAME_SVG;
			else if (!strcmp(optarg, "folded"))
				fo.format = FLAME_FOLDED;
			else
				return usage_error("flame ", "bad format '%s': want svg or folded",
						   optarg);
			break;
		case 'o':
			outp = optarg;
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			return usage_error("flame ", "bad option");
		}
	}
	if (optind < argc)
		return usage_error("flame ", "unexpected argument '%s'", argv[optind]);

	t = open_trace(in);
	if (!t)
		return EXIT_FAIL;
	err = join__new(t, &j);
	if (err) {
		error("cannot analyse '%s': %s", in, strerror(-err));
		trace__free(t);
		return EXIT_FAIL;
	}
	if (fo.have_task && !t->nevents && !t->ntasks) {
		error("'%s' has no task ids: the target had no d9prof shim (link "
		      "libd9prof; see d9prof(3))", in);
		ret = EXIT_FAIL;
		goto out;
	}
	if (fo.have_task && !join__task(j, fo.task)) {
		error("no task %llu in '%s' (list them with 'd9prof tasks -i %s')",
		      (unsigned long long)fo.task, in, in);
		ret = EXIT_FAIL;
		goto out;
	}
	out = open_output(outp);
	if (!out) {
		ret = EXIT_FAIL;
		goto out;
	}
	err = analysis__flame(j, &fo, out);
	if (close_output(out, outp))
		ret = EXIT_FAIL;
	if (err == -ENODATA) {
		if (fo.have_task)
			warning("no CPU samples inside polls of task %llu",
				(unsigned long long)fo.task);
		else
			warning("no CPU samples in '%s'", in);
	} else if (err == -ENOENT) {
		error("no task %llu in '%s'", (unsigned long long)fo.task, in);
		ret = EXIT_FAIL;
	} else if (err) {
		error("cannot draw the flamegraph: %s", strerror(-err));
		ret = EXIT_FAIL;
	}
out:
	join__free(j);
	trace__free(t);
	return ret;
}
