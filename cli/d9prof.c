// SPDX-License-Identifier: MIT
/* d9prof: the command dispatch. Each subcommand lives in cli/cmd_*.c. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{"record", cmd_record, "record a process: CPU samples + runtime events"},
	{"top", cmd_top, "the running process's tasks as they are now, live"},
	{"report", cmd_report,
	 "one page to read first: workers, slow polls, delays, red flags"},
	{"flame", cmd_flame, "CPU flamegraph, per task or split by task"},
	{"tasks", cmd_tasks, "table of tasks: polls, samples, poll times"},
	{"polls", cmd_polls, "slow polls: duration, CPU samples, off-CPU time"},
	{"offcpu", cmd_offcpu, "off-CPU flamegraph: what polls blocked on"},
	{"delays", cmd_delays, "wake-to-poll delays, worst first, and their causes"},
	{"spans", cmd_spans, "the application's spans: durations and where they went"},
	{"events", cmd_events, "the application's events: counts and values"},
	{"export", cmd_export, "pprof, speedscope or Chrome trace (Perfetto) files"},
	{"info", cmd_info, "what a trace holds: target, time span, segments, losses"},
	{"dump", cmd_dump, "make a flight recorder write its window now"},
	{"ls", cmd_ls, "what a store of recordings holds: services, hosts, times"},
	{"fleet", cmd_fleet, "every host of a store's window in one row, worst first"},
};

static void help(FILE *f)
{
	size_t i;

	fprintf(f, "usage: d9prof <command> [options]\n\n"
		   "A profiler for asynchronous runtimes: joins every CPU sample to the\n"
		   "task that was being polled on that thread at that instant.\n\n"
		   "commands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f,
		"\n'd9prof <command> --help' for its options; 'man d9prof' for all.\n\n"
		"examples:\n"
		"  d9prof record -p 4242 -d 10        # 10 s of pid 4242 into d9prof.data\n"
		"  d9prof report                      # read this first\n"
		"  d9prof tasks                       # which tasks burned the CPU\n"
		"  d9prof flame --task 42 -o t42.svg  # where task 42 spent it\n"
		"  d9prof polls --min 1ms             # the slow polls\n"
		"  d9prof offcpu --min-poll 1ms -o off.svg  # what they blocked on\n"
		"  d9prof delays --min 5ms                 # woken tasks that waited\n"
		"  d9prof info -i flight/                  # what the dumps in flight/ hold\n"
		"  d9prof export --format pprof -o p.pb.gz # for go tool pprof, Pyroscope\n"
		"  d9prof export --format chrome -o t.json # a timeline for Perfetto\n");
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return usage_error(NULL, "missing command");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		help(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("d9prof %s\n", D9_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	return usage_error(NULL, "unknown command '%s'", argv[1]);
}
