// SPDX-License-Identifier: MIT
/* d9prof dump: ask a flight recorder for its window now (SIGUSR1). */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/grow.h"
#include "record/proc.h"
#include "record/segment.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof dump PID\n\n"
		"Ask the flight recorder PID ('d9prof record --flight') to write its\n"
		"window now, as a trace in its -o directory, and go on recording; a\n"
		"--rotate recorder seals its segment file now. PID may also be the\n"
		"recorded process: its recorder is found through its d9prof shim. The\n"
		"same as 'kill -USR1 PID', then waiting (up to 30 s) for the dump to\n"
		"appear: its path is printed on stdout.\n\n"
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

#define WAIT_MS 30000 /* for the file: a dump copies up to --max-size */

/* The directory recorder @rec writes in: its -o (as getopt_long reads
 * it: -o DIR, -oDIR, --output DIR, --output=DIR or a prefix of it), else
 * its working directory; relative to that. 0 or -1. */
static int recorder_dir(pid_t rec, char *dir, size_t len)
{
	char path[64], buf[8192], cwd[PATH_MAX];
	const char *out = ".";
	ssize_t k;
	size_t n, i, al;

	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)rec);
	k = readlink(path, cwd, sizeof(cwd) - 1);
	if (k <= 0)
		return -1;
	cwd[k] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)rec);
	n = record_read_file(path, buf, sizeof(buf), 0);
	for (i = 0; i < n; i += al + 1) {
		const char *a = buf + i, *eq = strchr(a, '=');

		al = strlen(a);
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-o") && i + al + 1 < n)
			out = a + al + 1;
		else if (!strncmp(a, "-o", 2) && a[2])
			out = a + 2;
		else if (!strncmp(a, "--ou", 4) &&
			 !strncmp(a, "--output", eq ? (size_t)(eq - a) : al))
			out = eq ? eq + 1 : i + al + 1 < n ? a + al + 1 : out;
	}
	if ((size_t)snprintf(dir, len, "%s/%s", cwd, out) >= len)
		return -1;
	if (out[0] == '/')
		snprintf(dir, len, "%s", out);
	return 0;
}

/* A flight recorder's dump: "d9prof-PID-DATE-TIME[-N].data" */
static int is_dump(const char *name)
{
	size_t n = strlen(name);

	return !strncmp(name, "d9prof-", 7) && n > 12 && !strcmp(name + n - 5, ".data");
}

/* The dumps in @dir, "\nNAME\n..." (a buffer the caller frees); NULL where
 * it cannot be listed */
static char *dumps_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *v = NULL;
	size_t n = 1, cap = 0;

	if (!d || LIB_GROW(v, cap, 2)) {
		if (d)
			closedir(d);
		return NULL;
	}
	strcpy(v, "\n");
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);

		if (!is_dump(e->d_name))
			continue;
		if (LIB_GROW(v, cap, n + l + 2))
			break;
		memcpy(v + n, e->d_name, l);
		n += l;
		v[n++] = '\n';
		v[n] = '\0';
	}
	closedir(d);
	return v;
}

/* Wait for a dump in @dir that is not in @before (dumps_in()); print its
 * path. 0, or -1 (not seen in time, said). */
static int await_dump(const char *dir, const char *before)
{
	struct timespec nap = {0, 50 * 1000000L};

	for (int ms = 0; ms < WAIT_MS; ms += 50) {
		DIR *d = opendir(dir);
		struct dirent *e;
		char key[NAME_MAX + 3];

		while (d && (e = readdir(d))) {
			snprintf(key, sizeof(key), "\n%s\n", e->d_name);
			if (!is_dump(e->d_name) || strstr(before, key))
				continue;
			printf("%s/%s\n", dir, e->d_name);
			closedir(d);
			return close_output(stdout, NULL) ? -1 : 0;
		}
		if (d)
			closedir(d);
		nanosleep(&nap, NULL);
	}
	warning("no new dump in '%s' after %d s: the recorder's stderr names it", dir,
		WAIT_MS / 1000);
	return -1;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *what, *ask;
	char dir[PATH_MAX + 64], *before = NULL;
	pid_t pid, rec;
	uint64_t v;
	int c, rotate, ret;

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
	/* a flight recorder's dumps now: the one asked for is the new one */
	rotate = is_segment_recorder(rec) == REC_ROTATE;
	if (!rotate && !recorder_dir(rec, dir, sizeof(dir)))
		before = dumps_in(dir);
	if (kill(rec, SIGUSR1)) {
		error("cannot signal the recorder, pid %d: %s", (int)rec,
		      strerror(errno));
		free(before);
		return EXIT_FAIL;
	}
	/* --rotate: SIGUSR1 seals the open segment now */
	what = rotate ? "the rotating recorder" : "the flight recorder";
	ask = rotate ? "to seal its segment now" : "for a dump";
	if (rec != pid)
		info("asked %s of pid %d (pid %d) %s", what, (int)pid, (int)rec, ask);
	else
		info("asked %s pid %d %s", what, (int)rec, ask);
	if (rotate)
		return EXIT_OK;
	if (!before) {
		warning("cannot list the recorder's directory: its stderr names the dump");
		return EXIT_OK;
	}
	ret = await_dump(dir, before);
	free(before);
	return ret ? EXIT_FAIL : EXIT_OK;
}
