// SPDX-License-Identifier: MIT
/*
 * d9prof top: the running process's tasks as they are now. A recording of
 * its own runs in a thread (record__run(), its trace to /dev/null) with a
 * tap that feeds the live state (analysis/live.c); every interval a
 * snapshot becomes a frame (analysis__top()): on the terminal through
 * ncurses, or, with --batch or --format json, on standard output.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ncurses.h>

#include "analysis/join.h"
#include "analysis/live.h"
#include "analysis/views.h"
#include "cli/cli.h"
#include "lib/text.h"
#include "record/command.h"
#include "record/record.h"
#include "symbol/symbolize.h"

enum { OPT_SORT = 256, OPT_FILTER, OPT_TASK };

static const char *const sort_keys[] = {
	[TOP_BY_CPU] = "cpu",	  [TOP_BY_POLLS] = "polls",	[TOP_BY_MAX] = "max",
	[TOP_BY_DELAY] = "delay", [TOP_BY_BLOCKED] = "blocked", [TOP_BY_RUNQ] = "runq",
	[TOP_BY_NAME] = "name",
};

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof top -p PID | -- CMD [ARGS...] [-d SECS]\n"
		"                  [--by auto|task|name|thread]\n"
		"                  [--sort KEY]\n"
		"                  [--filter TEXT] [--task ID] [-F HZ] [-b [-n COUNT]]\n"
		"                  [--format text|json]\n\n"
		"The running process's tasks as they are now, refreshed every interval: a\n"
		"recording of its own runs meanwhile (CPU samples, the shim's records,\n"
		"off-CPU time), kept in memory only. Per task (or task name, or thread):\n"
		"CPU%% (its samples' share of one CPU over the interval), POLLS/S, MEAN\n"
		"and MAX poll, DELAY-P99 (wake to poll), BLOCKED and RUNQ (off-CPU inside\n"
		"its polls: blocked, or waiting for a CPU) and STATE (polled now, woken\n"
		"and waiting, idle, parked). Above: the threads' time (in polls, outside,\n"
		"parked; blocked off-CPU outside parking, run queue), what was lost, what\n"
		"the rows are (grouping, sort column, filter), and the red flags of\n"
		"'d9prof report' as they hold now (a poll running past 10ms, a task woken\n"
		"5ms ago and not polled, a task in one poll for a second, a lost waker,\n"
		"self-wakes, a task leak).\n\n"
		"keys: q quit, space pause, b auto/task/name/thread, < > sort column,\n"
		"      c cpu, p polls, m max, d delay, k blocked, r runq, n name,\n"
		"      / filter by name (empty: all), up/down select\n\n"
		"options:\n"
		"  -p, --pid PID         the process (it links the d9prof shim; without\n"
		"                        it: threads and CPU only)\n"
		"  -- CMD [ARGS...]      or run CMD (its output to /dev/null on the\n"
		"                        screen) and watch it until it ends; it is\n"
		"                        stopped (SIGTERM) when top quits\n"
		"  -d, --interval SECS   seconds between frames (default 1)\n"
		"      --by KEY          auto (default: by task, by name once 20 tasks\n"
		"                        end in a frame), task, name or thread\n"
		"      --sort KEY        cpu (default), polls, max, delay, blocked, runq\n"
		"                        or name\n"
		"      --filter TEXT     only rows whose name holds TEXT\n"
		"      --task ID         follow task ID from the start: below the table,\n"
		"                        its polls since (count, mean, percentiles,\n"
		"                        longest) and who woke it (on the screen, the\n"
		"                        selected row's, with its hottest stacks)\n"
		"  -F, --freq HZ         CPU samples per second (default 999)\n"
		"  -b, --batch           plain text frames on standard output, no screen\n"
		"  -n, --iterations N    with --batch: N frames, then exit\n"
		"  -f, --format FMT      text (default) or json (one object a frame;\n"
		"                        implies --batch; schema in d9prof(1))\n"
		"  -h, --help            this help\n\n"
		"It needs what 'd9prof record -p' needs (see PERMISSIONS in d9prof(1)),\n"
		"and only one recorder may attach to a process's shim.\n\n"
		"examples:\n"
		"  d9prof top -p 4242\n"
		"  d9prof top -- ./server --port 8080\n"
		"  d9prof top -p 4242 -b -n 3 --sort delay\n"
		"  d9prof top -p 4242 --format json -n 10 | jq '.rows[0]'\n");
}

struct top {
	pid_t pid;
	double interval;
	int batch, json;
	unsigned long frames; /* --iterations, 0: until stopped */
	struct top_opts v;
	enum group_by by;
	struct live *live;
	struct record_opts o;
	struct record_stats st;
	pthread_t th;
	pthread_mutex_t lock; /* what the recorder's thread says */
	char msg[256];	      /* its last message */
	int done, err;	      /* it returned, with err (or the one beside
			       * ended); done only under the lock */
	char title[160];
	int fd;			/* beside a recording: its live socket, else -1 */
	uint64_t want;		/* the selected task: its hottest stacks */
	uint64_t follow;	/* --task: the one wanted when none is selected */
	struct record_cmd cmd;	/* -- CMD: started here, stopped at the end */
	char **argv;		/* ... its argv, NULL for -p */
	struct symbolizer *sym; /* for them, made when first needed */
};

static volatile sig_atomic_t stop_rec, stop_ui;
/* Beside a recording: its socket, shut down by a signal so that a wait
 * for the recorder ends at once (-1: none). */
static volatile sig_atomic_t live_fd = -1;

static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	stop_ui = 1;
	if (live_fd >= 0)
		shutdown(live_fd, SHUT_RDWR); /* async-signal-safe */
	errno = saved;
}

static void log_msg(void *ctx, enum record_log_level lvl, const char *msg)
{
	struct top *x = ctx;

	pthread_mutex_lock(&x->lock);
	snprintf(x->msg, sizeof(x->msg), "%s%s", lvl == RECORD_WARN ? "warning: " : "",
		 msg);
	pthread_mutex_unlock(&x->lock);
	if (x->batch && lvl == RECORD_WARN)
		warning("%s", msg);
}

static void progress(void *ctx, const struct record_stats *st, double seconds)
{
	struct top *x = ctx;

	(void)seconds;
	live_set_lost(x->live, st);
}

static void polling(void *ctx, uint32_t tid, uint64_t task, uint64_t begin, uint64_t now)
{
	live__polling(ctx, tid, task, begin, now);
}

/* -- CMD: it may exec now that the recorder is attached. */
static int release_cmd(void *ctx)
{
	struct top *x = ctx;

	return x->cmd.pid > 0 ? record_cmd__release(&x->cmd) : 0;
}

/* Start -- CMD stopped before its exec, its standard input and, on the
 * screen, its output on /dev/null. 0 or -errno. */
static int start_cmd(struct top *x, int devnull)
{
	int saved[3] = {-1, -1, -1}, n = x->batch ? 1 : 3, err;

	/* stdin (the screen's keys), and stdout and stderr on the screen */
	for (int fd = 0; fd < n; fd++) {
		saved[fd] = dup(fd);
		dup2(devnull, fd);
	}
	err = record_cmd__start(&x->cmd, x->argv, 1, NULL);
	for (int fd = 0; fd < n; fd++)
		if (saved[fd] >= 0) {
			dup2(saved[fd], fd);
			close(saved[fd]);
		}
	if (!err) {
		x->pid = x->cmd.pid;
		x->o.fresh_target = 1;
		x->o.exe = x->argv[0];
		x->o.on_attached = release_cmd;
	}
	return err;
}

static void *recorder(void *arg)
{
	struct top *x = arg;
	int err = record__run(&x->o, &x->st);

	pthread_mutex_lock(&x->lock);
	x->done = 1;
	x->err = err;
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

/* Has the recording ended (ours, or the one beside)? */
static int is_done(struct top *x)
{
	int done;

	pthread_mutex_lock(&x->lock);
	done = x->done;
	pthread_mutex_unlock(&x->lock);
	return done;
}

static void set_done(struct top *x)
{
	pthread_mutex_lock(&x->lock);
	x->done = 1;
	pthread_mutex_unlock(&x->lock);
}

/* Beside a recording, a connection lost: the recorder drops a viewer that
 * stalls (stopped with ^Z in the middle of an answer), so connect again;
 * none that answers: the recording ended. 0 or -errno. */
static int reconnect(struct top *x)
{
	int fd, err = live_client__connect(x->pid, &fd);

	if (err)
		return err;
	live_fd = -1;
	close(x->fd);
	x->fd = fd;
	live_fd = fd;
	return stop_ui ? -EINTR : 0; /* a signal meanwhile found no socket */
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The interval now ending, from our recording or the one beside us (gone:
 * its end, as our recorder's). 0 or -errno: -EINTR after a signal,
 * -ETIMEDOUT (the recorder beside does not answer), -EBUSY (it serves
 * another viewer). */
static int take(struct top *x, struct live_snap *s)
{
	int err;

	if (x->fd < 0) {
		live__want_stacks(x->live, x->want);
		return live__snapshot(x->live, mono_ns(), x->by, s);
	}
	if (stop_ui) /* before live_fd was set: no shutdown ends the wait */
		return -EINTR;
	err = live_client__snapshot(x->fd, x->by, x->want, s);
	if ((err == -EPIPE || err == -ECONNRESET) && !stop_ui && !reconnect(x))
		err = live_client__snapshot(x->fd, x->by, x->want, s);
	if (stop_ui && err)
		return -EINTR;
	if (err == -EPIPE || err == -ECONNRESET)
		set_done(x);
	return err;
}

/* "pid N (comm) - HH:MM:SS" */
static void set_title(struct top *x)
{
	char path[64], comm[64] = "", clean[64], when[16];
	time_t now = time(NULL);
	struct tm tm;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)x->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	text_clean(comm, clean, sizeof(clean));
	if (!localtime_r(&now, &tm) || !strftime(when, sizeof(when), "%H:%M:%S", &tm))
		snprintf(when, sizeof(when), "?");
	snprintf(x->title, sizeof(x->title), "pid %d (%s)%s - %s", (int)x->pid, clean,
		 x->fd >= 0 ? " beside its recorder" : "", when);
}

static void memswap(void *a, void *b, size_t n)
{
	char tmp[600];

	memcpy(tmp, a, n);
	memcpy(a, b, n);
	memcpy(b, tmp, n);
}

/* Frame @addr of a stack (@leaf: the interrupted pc, else a return
 * address) as its function's name, cleaned, into @buf. */
static void frame_name(struct top *x, uint64_t addr, int leaf, char *buf, size_t len)
{
	struct trace_frame f = {0};

	if (!x->sym && symbolizer__new(x->pid, &x->sym))
		x->sym = NULL;
	if (x->sym && !symbolizer__resolve(x->sym, leaf ? addr : addr - 1, &f) && f.sym)
		text_clean(f.sym, buf, len);
	else
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
}

/* The selected task's hottest stacks below the frame: their innermost
 * frames by function, leaf first (stacks that read the same, at other
 * addresses in the same functions, are one line). */
static void stacks_text(struct top *x, const struct live_snap *s, FILE *out)
{
	struct {
		char text[512];
		uint32_t samples;
	} line[LIVE_STACKS];
	size_t n = 0, i, k;

	if (!s->stacks_task)
		return;
	for (i = 0; i < s->nstacks; i++) {
		const struct live_stack *st = &s->stacks[i];
		char name[160];
		size_t len = 0;

		line[n].text[0] = '\0';
		for (uint32_t f = 0; f < st->n && f < 5 && len < sizeof(line[n].text);
		     f++) {
			frame_name(x, st->ips[f], !f, name, sizeof(name));
			len += (size_t)snprintf(line[n].text + len,
						sizeof(line[n].text) - len, "%s%s",
						f ? " <- " : "", name);
		}
		for (k = 0; k < n && strcmp(line[k].text, line[n].text); k++)
			;
		if (k < n) {
			line[k].samples += st->samples;
			continue;
		}
		line[n++].samples = st->samples;
	}
	fprintf(out,
		"\ntask %llu, hottest stacks of the last intervals (samples, leaf first):\n",
		(unsigned long long)s->stacks_task);
	if (!n)
		fprintf(out, "  (no sample yet)\n");
	for (i = 0; i < n; i++) { /* most samples first */
		size_t best = i;

		for (k = i + 1; k < n; k++)
			if (line[k].samples > line[best].samples)
				best = k;
		if (best != i) {
			memswap(&line[i], &line[best], sizeof(line[i]));
		}
		fprintf(out, "%6u  %s\n", line[i].samples, line[i].text);
	}
}

/* One frame of @s into a string (the caller frees it); NULL on -ENOMEM. */
static char *frame(struct top *x, const struct live_snap *s, size_t width)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int err;

	if (!m)
		return NULL;
	set_title(x);
	pthread_mutex_lock(&x->lock);
	x->v.title = x->title;
	x->v.width = width;
	err = analysis__top(s, &x->v, m);
	pthread_mutex_unlock(&x->lock);
	if (!err && !x->batch)
		stacks_text(x, s, m);
	if (fclose(m) || err) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Wait until @until (CLOCK_MONOTONIC ns), or a signal, or the recorder's
 * end: 0, or 1 to stop. */
static int wait_until(struct top *x, uint64_t until)
{
	for (;;) {
		uint64_t now = mono_ns();

		if (stop_ui || is_done(x))
			return 1;
		if (now >= until)
			return 0;
		usleep(until - now > 50000000 ? 50000
					      : (useconds_t)((until - now) / 1000));
	}
}

static int batch_loop(struct top *x)
{
	uint64_t next = mono_ns();
	unsigned long i;
	int err;

	for (i = 0; !x->frames || i < x->frames; i++) {
		struct live_snap s;
		char *f;

		next += (uint64_t)(x->interval * 1e9);
		if (wait_until(x, next))
			break;
		if ((err = take(x, &s)))
			return is_done(x) || stop_ui ? 0 : err;
		f = frame(x, &s, 0);
		live_snap_release(&s);
		if (!f)
			return -ENOMEM;
		fputs(f, stdout);
		if (!x->json)
			fputc('\n', stdout);
		free(f);
		if (fflush(stdout))
			return -EIO;
	}
	return 0;
}

/* ---- the screen -------------------------------------------------------- */

static void draw(const char *text, const char *status)
{
	int y = 0;

	erase();
	for (const char *p = text; p && *p && y < LINES - 1; y++) {
		const char *nl = strchr(p, '\n');
		int len = nl ? (int)(nl - p) : (int)strlen(p);

		if (y == 0 && !getenv("NO_COLOR"))
			attron(A_BOLD);
		mvaddnstr(y, 0, p, len);
		if (y == 0)
			attroff(A_BOLD);
		p = nl ? nl + 1 : p + len;
	}
	if (status && *status) {
		attron(A_REVERSE);
		mvaddnstr(LINES - 1, 0, status, COLS);
		attroff(A_REVERSE);
	}
	refresh();
}

/* The filter, typed on the status line. */
static void read_filter(char *buf, size_t len)
{
	echo();
	curs_set(1);
	timeout(-1);
	move(LINES - 1, 0);
	clrtoeol();
	addstr("filter: ");
	getnstr(buf, (int)len - 1);
	noecho();
	curs_set(0);
}

static int screen_loop(struct top *x)
{
	char filter[64] = "", status[320], *text = NULL;
	uint64_t next = mono_ns() + (uint64_t)(x->interval * 1e9);
	int paused = 0, redraw = 0, err = 0;

	if (!initscr())
		return -EIO;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	x->v.selected = -1;
	draw("d9prof top: starting the recording...", NULL);
	while (!stop_ui) {
		uint64_t now = mono_ns();
		int c, done;

		pthread_mutex_lock(&x->lock);
		done = x->done;
		snprintf(status, sizeof(status),
			 "%s%s  q quit  space pause  b by  </> sort  / filter",
			 paused ? "[paused] " : "", x->msg);
		pthread_mutex_unlock(&x->lock);
		if (done)
			break;
		if (now >= next) {
			struct live_snap s;

			next = now + (uint64_t)(x->interval * 1e9);
			if ((err = take(x, &s))) {
				/* said after endwin(): an end is no failure */
				if (is_done(x) || stop_ui)
					err = 0;
				break;
			}
			if (!paused) {
				/* the rows that fit: the header and warnings
				 * above, the stacks of the selected task below */
				int rows = LINES - 10 - (x->want ? 5 + LIVE_STACKS : 0);

				free(text);
				x->v.filter = filter;
				x->v.limit = rows > 3 ? (size_t)rows : 3;
				text = frame(x, &s, (size_t)COLS);
			}
			/* the selected row's stacks, from the next interval on */
			x->want = x->v.selected >= 0
					  ? analysis__top_row_id(&s, &x->v, x->v.selected)
					  : x->follow;
			live_snap_release(&s);
			redraw = 1;
		}
		if (redraw)
			draw(text, status);
		redraw = 0;
		timeout((int)((next > now ? next - now : 0) / 1000000) + 1);
		c = getch();
		switch (c) {
		case 'q':
		case 'Q':
			stop_ui = 1;
			break;
		case ' ':
			paused = !paused;
			redraw = 1;
			break;
		case 'b':
			x->by = x->by == GROUP_AUTO   ? GROUP_TASK
				: x->by == GROUP_TASK ? GROUP_NAME
				: x->by == GROUP_NAME ? GROUP_THREAD
						      : GROUP_AUTO;
			next = 0;
			break;
		case '<':
			x->v.sort = x->v.sort ? x->v.sort - 1 : TOP_BY_NAME;
			next = 0;
			break;
		case '>':
			x->v.sort = x->v.sort == TOP_BY_NAME ? TOP_BY_CPU : x->v.sort + 1;
			next = 0;
			break;
		case 'c':
		case 'p':
		case 'm':
		case 'd':
		case 'k':
		case 'r':
		case 'n': {
			static const char keys[] = "cpmdkrn";

			x->v.sort = (enum top_sort)(strchr(keys, c) - keys);
			next = 0;
			break;
		}
		case '/':
			read_filter(filter, sizeof(filter));
			next = 0;
			break;
		case KEY_UP:
			if (x->v.selected >= 0)
				x->v.selected--;
			next = 0;
			break;
		case KEY_DOWN:
			x->v.selected++;
			next = 0;
			break;
		case KEY_RESIZE:
			next = 0;
			break;
		default:
			break;
		}
	}
	free(text);
	endwin();
	return err;
}

/* ---- the command -------------------------------------------------------- */

static int parse(struct top *x, int argc, char **argv)
{
	static const struct option lopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"interval", required_argument, NULL, 'd'},
		{"by", required_argument, NULL, 'B'},
		{"sort", required_argument, NULL, OPT_SORT},
		{"filter", required_argument, NULL, OPT_FILTER},
		{"task", required_argument, NULL, OPT_TASK},
		{"freq", required_argument, NULL, 'F'},
		{"batch", no_argument, NULL, 'b'},
		{"iterations", required_argument, NULL, 'n'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	uint64_t v;
	int c, k;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:d:F:bn:f:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, &v) || v == 0 || v > 4194304)
				return usage_error("top ",
						   "bad pid '%s': want a process id",
						   optarg);
			x->pid = (pid_t)v;
			break;
		case 'd':
			if (parse_seconds(optarg, &x->interval) || x->interval < 0.1 ||
			    x->interval > 3600)
				return usage_error(
					"top ",
					"bad interval '%s': want seconds, 0.1 to 3600",
					optarg);
			break;
		case 'B':
			if (!strcmp(optarg, "auto"))
				k = GROUP_AUTO;
			else if ((k = parse_group_by(optarg)) < 0 || k == GROUP_SPAN)
				return usage_error(
					"top ",
					"bad --by '%s': want auto, task, name or thread",
					optarg);
			x->by = (enum group_by)k;
			break;
		case OPT_SORT:
			if (WORD_OPTION("top ", "sort key", optarg, sort_keys, &k))
				return EXIT_USAGE;
			x->v.sort = (enum top_sort)k;
			break;
		case OPT_FILTER:
			x->v.filter = optarg;
			break;
		case OPT_TASK:
			if (parse_u64(optarg, &v) || v == 0 || v >= TRACE_TASK_TOKIO)
				return usage_error(
					"top ", "bad task '%s': want a task id", optarg);
			x->want = x->follow = v;
			break;
		case 'F':
			if (parse_u64(optarg, &v) || v == 0 || v > 100000)
				return usage_error("top ",
						   "bad frequency '%s': want 1 to 100000",
						   optarg);
			x->o.freq = (unsigned int)v;
			break;
		case 'b':
			x->batch = 1;
			break;
		case 'n':
			if (parse_u64(optarg, &v) || v == 0)
				return usage_error("top ",
						   "bad count '%s': want a number > 0",
						   optarg);
			x->frames = (unsigned long)v;
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				x->json = x->batch = 1;
			else if (strcmp(optarg, "text"))
				return usage_error("top ",
						   "bad format '%s': want text or json",
						   optarg);
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			return usage_error("top ", "bad option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc && strcmp(argv[optind - 1], "--"))
		return usage_error("top ",
				   "unexpected argument '%s' (a command goes after --)",
				   argv[optind]);
	if (optind < argc)
		x->argv = argv + optind;
	if (!x->pid == !x->argv)
		return usage_error("top ",
				   x->pid ? "-p PID or -- CMD, not both"
					  : "no -p PID or -- CMD: which process?");
	if (!x->batch && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)))
		x->batch = 1; /* no terminal: frames as text */
	if (x->frames && !x->batch)
		return usage_error("top ", "-n goes with --batch (or --format json)");
	return -1;
}

/* Beside the recorder of x->pid: -ETIMEDOUT (it does not answer), -EBUSY
 * (another viewer) or another error, said in one line. EXIT_FAIL. */
static int beside_failed(struct top *x, int err)
{
	if (err == -ETIMEDOUT)
		error("the recorder beside pid %d does not answer (stopped or stuck?): "
		      "try again once it runs",
		      (int)x->pid);
	else if (err == -EBUSY)
		error("another viewer is watching pid %d beside its recorder; one at a "
		      "time: quit that top first",
		      (int)x->pid);
	else
		error("cannot watch pid %d beside its recording: %s", (int)x->pid,
		      strerror(-err));
	return EXIT_FAIL;
}

/* Beside a running recording of x->pid: its frames, until it ends. */
static int beside(struct top *x)
{
	struct live_snap s;
	int err;

	live_fd = x->fd;
	err = take(x, &s);
	if (!err) {
		live_snap_release(&s);
		if (x->batch)
			info("beside the recording of pid %d that runs now", (int)x->pid);
		err = x->batch ? batch_loop(x) : screen_loop(x);
	}
	live_fd = -1;
	close(x->fd);
	symbolizer__free(x->sym);
	if (stop_ui) /* ^C, or q: whatever the recorder did meanwhile */
		return EXIT_OK;
	if (err)
		return beside_failed(x, err);
	if (is_done(x))
		info("the recording of pid %d ended", (int)x->pid);
	return EXIT_OK;
}

int cmd_top(int argc, char **argv)
{
	struct top x = {.interval = 1.0, .by = GROUP_AUTO, .v = {.selected = -1}};
	struct sigaction sa = {.sa_handler = on_signal};
	int ret, err, devnull;

	x.o.freq = 999;
	x.fd = -1;
	x.cmd.pid = -1;
	x.cmd.go_fd = x.cmd.err_fd = -1;
	if ((ret = parse(&x, argc, argv)) >= 0)
		return ret;
	x.v.json = x.json;
	setlocale(LC_ALL, "");
	pthread_mutex_init(&x.lock, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a recording serves its live view: beside it (only one recorder
	 * may attach to the shim) */
	if (!x.argv) {
		char why[256];

		err = live_client__connect(x.pid, &x.fd);
		if (!err)
			return beside(&x);
		if (err == -ETIMEDOUT)
			return beside_failed(&x, err);
		if (err == -EPERM) { /* a recording could not serve, nor we look */
			live_sock__why(x.pid, err, why, sizeof(why));
			warning("cannot look for a recording of pid %d to watch beside: %s",
				(int)x.pid, why);
		}
	}
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (devnull < 0 || live__new(1e9 / x.o.freq, &x.live)) {
		error("cannot start: %s", strerror(devnull < 0 ? errno : ENOMEM));
		return EXIT_FAIL;
	}
	if (x.argv && (err = start_cmd(&x, devnull))) {
		error("cannot start '%s': %s", x.argv[0], strerror(-err));
		return EXIT_FAIL;
	}
	x.o.pid = x.pid;
	x.o.out_fd = devnull;
	x.o.stop = &stop_rec;
	x.o.log = log_msg;
	x.o.progress = progress;
	x.o.ctx = &x;
	x.o.tap = live__tap(x.live);
	x.o.polling = polling;
	x.o.polling_ctx = x.live;
	if (pthread_create(&x.th, NULL, recorder, &x)) {
		error("cannot start the recording thread");
		return EXIT_FAIL;
	}
	/* the interval starts now */
	{
		struct live_snap s;

		if (!live__snapshot(x.live, mono_ns(), x.by, &s))
			live_snap_release(&s);
	}
	err = x.batch ? batch_loop(&x) : screen_loop(&x);
	stop_rec = 1;
	pthread_join(x.th, NULL);
	if (x.argv)
		record_cmd__reap(&x.cmd);
	close(devnull);
	ret = EXIT_OK;
	if (x.err == -ESRCH) {
		error("cannot attach to pid %d: no such process", (int)x.pid);
		ret = EXIT_FAIL;
	} else if (x.err) {
		error("cannot watch pid %d: %s", (int)x.pid,
		      x.st.why[0] ? x.st.why : strerror(-x.err));
		ret = EXIT_FAIL;
	} else if (err) {
		error("cannot show the frames: %s", strerror(-err));
		ret = EXIT_FAIL;
	} else if (x.done && !stop_ui && x.st.target_exited) {
		info("pid %d exited", (int)x.pid);
	}
	live__free(x.live);
	symbolizer__free(x.sym);
	return ret;
}
