// SPDX-License-Identifier: MIT
/* d9prof dump: ask a flight recorder for its window now (SIGUSR1). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "record/proc.h"
#include "record/segment.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof dump PID\n\n"
		"Ask the flight recorder PID ('d9prof record --flight') to write its\n"
		"window now, as a trace in its -o directory (it says the file's name on\n"
		"its stderr), and go on recording; a --rotate recorder seals its\n"
		"segment file now. PID may also be the recorded process: its recorder\n"
		"is found through its d9prof shim. The same as 'kill -USR1 PID'.\n\n"
		"options:\n"
		"  -h, --help            this help\n");
}

/* REC_FLIGHT or REC_ROTATE if @pid runs `d9prof record` with --flight or
 * --rotate, else 0. */
enum { REC_FLIGHT = 1, REC_ROTATE = 2 };
static int is_segment_recorder(pid_t pid)
{
	char path[64], buf[4096];
	int rec = 0, seg = 0;
	size_t n, i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = record_read_file(path, buf, sizeof(buf), 0);
	for (i = 0; i < n; i += strlen(buf + i) + 1) {
		const char *a = buf + i;

		rec |= !strcmp(a, "record");
		if (!strncmp(a, "--flight", 8))
			seg = REC_FLIGHT;
		else if (!strncmp(a, "--rotate", 8) && !seg)
			seg = REC_ROTATE;
	}
	return strstr(buf, "d9prof") && rec ? seg : 0;
}

/* The recorder attached to the shim of @pid, or 0. */
static pid_t recorder_of(pid_t pid)
{
	struct shim_seg *s;
	char why[160];
	pid_t r;

	if (shim_seg__open(pid, &s, why, sizeof(why)))
		return 0;
	r = shim_seg__recorder(s);
	shim_seg__close(s);
	return r;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *what, *ask;
	pid_t pid, rec;
	uint64_t v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (c == 'h') {
			help(stdout);
			return EXIT_OK;
		}
		return usage_error("dump ", "unknown option '%s'", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return usage_error("dump ", "want one PID: the flight recorder's");
	if (parse_u64(argv[optind], &v) || !v || v > 4194304)
		return usage_error("dump ", "bad pid '%s': want a process id",
				   argv[optind]);
	pid = (pid_t)v;
	if (kill(pid, 0) && errno == ESRCH) {
		error("cannot dump pid %d: no such process", (int)pid);
		return EXIT_FAIL;
	}
	rec = is_segment_recorder(pid) ? pid : recorder_of(pid);
	if (!rec || (rec != pid && !is_segment_recorder(rec))) {
		error("pid %d is not a d9prof flight recorder%s (start one with 'd9prof record "
		      "-p PID --flight')",
		      (int)pid,
		      rec ? ", and its recorder records no window"
			  : ", nor recorded by one");
		return EXIT_FAIL;
	}
	if (kill(rec, SIGUSR1)) {
		error("cannot signal the recorder, pid %d: %s", (int)rec,
		      strerror(errno));
		return EXIT_FAIL;
	}
	/* --rotate: SIGUSR1 seals the open segment now */
	what = is_segment_recorder(rec) == REC_ROTATE ? "the rotating recorder"
						      : "the flight recorder";
	ask = is_segment_recorder(rec) == REC_ROTATE ? "to seal its segment now"
						     : "for a dump";
	if (rec != pid)
		info("asked %s of pid %d (pid %d) %s", what, (int)pid, (int)rec, ask);
	else
		info("asked %s pid %d %s", what, (int)rec, ask);
	return EXIT_OK;
}
