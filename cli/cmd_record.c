// SPDX-License-Identifier: MIT
/* d9prof record: options, the target (pid or command), the summary. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "record/record.h"

static volatile sig_atomic_t stop;

enum { OPT_NO_OFFCPU = 256, OPT_OFFCPU_SOURCE, OPT_OFFCPU_STACK, OPT_CPU_STACK,
       OPT_NO_WAKEUPS };
enum { OPT_SAMPLER = 300 };

static void on_signal(int sig)
{
	stop = 1;
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof record -p PID [options]\n"
		"       d9prof record [options] -- CMD [ARGS...]\n\n"
		"Sample every thread of a process (threads started later too) with\n"
		"perf_event and frame-pointer callchains, record each context switch\n"
		"with its stack and the time off-CPU, drain the d9prof shim's task\n"
		"and poll events, and write one self-contained trace.\n\n"
		"options:\n"
		"  -p, --pid PID         record the running process PID\n"
		"  -o, --output FILE     trace file (default ./" DEFAULT_TRACE
		"; an existing one\n"
		"                        is kept as FILE.old)\n"
		"  -d, --duration SECS   stop after SECS seconds (default: until ^C or\n"
		"                        the target exits)\n"
		"  -F, --freq HZ         samples per second per thread (default 999)\n"
		"  -e, --event EVENT     sampling event, a libpfm4/perf name (default\n"
		"                        cycles, or cpu-clock without a hardware PMU)\n"
		"      --sampler S       auto (default): perf_event, falling back to\n"
		"                        ctimer when perf_event_open is refused or\n"
		"                        delivers nothing; perf; ctimer: the shim's\n"
		"                        per-thread CPU timers inside the target (needs\n"
		"                        libd9prof in it; user stacks only)\n"
		"      --no-offcpu       do not record context switches (off-CPU time)\n"
		"      --offcpu-source SRC  auto (default): the sched_switch tracepoint,\n"
		"                        else the context-switch event; tracepoint or\n"
		"                        switch: that one only\n"
		"      --no-wakeups      do not record wakeups (system-wide, filtered to\n"
		"                        the target's threads): off-CPU time is then\n"
		"                        not split into blocked and run-queue time\n"
		"      --offcpu-stack BYTES  user stack copied per switch to unwind\n"
		"                        through code without frame pointers (default\n"
		"                        8192, at most 32768; 0: frame pointers only)\n"
		"      --cpu-stack BYTES  user stack copied per CPU sample to find the\n"
		"                        caller of a function without a frame (default\n"
		"                        512, at most 32768; 0: frame pointers only)\n"
		"  -h, --help            this help\n\n"
		"Stops on SIGINT/SIGTERM, at -d, or when the target exits, and writes\n"
		"what it has. A summary goes to stderr.\n\n"
		"examples:\n"
		"  d9prof record -p 4242 -d 10\n"
		"  d9prof record -F 499 -o api.d9 -- ./my-server --port 8080\n");
}

static void log_msg(void *ctx, enum record_log_level lvl, const char *msg)
{
	if (lvl == RECORD_WARN)
		warning("%s", msg);
	else
		info("%s", msg);
}

struct child {
	pid_t pid;
	int go_fd;	/* write end: closing it lets the child exec */
};

static void release_child(void *ctx)
{
	struct child *c = ctx;

	if (c->go_fd >= 0) {
		close(c->go_fd);
		c->go_fd = -1;
	}
}

/* Fork CMD stopped at a pipe read, so that sampling is armed before it
 * runs its first instruction. */
static int start_child(char **argv, struct child *c)
{
	int go[2], err_pipe[2];
	char ebuf[4];

	if (pipe2(go, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		int e;

		close(go[1]);
		close(err_pipe[0]);
		while (read(go[0], ebuf, 1) < 0 && errno == EINTR)
			;
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(err_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err_pipe[1]);
	c->go_fd = go[1];
	/* The child writes errno here if exec fails; read after release. */
	return err_pipe[0];
}

static const char *human_size(double b, char *buf, size_t len)
{
	const char *u[] = { "B", "KiB", "MiB", "GiB" };
	int i = 0;

	while (b >= 1024 && i < 3) {
		b /= 1024;
		i++;
	}
	snprintf(buf, len, i ? "%.1f %s" : "%.0f %s", b, u[i]);
	return buf;
}

int cmd_record(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "freq", required_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },
		{ "sampler", required_argument, NULL, OPT_SAMPLER },
		{ "no-offcpu", no_argument, NULL, OPT_NO_OFFCPU },
		{ "offcpu-source", required_argument, NULL, OPT_OFFCPU_SOURCE },
		{ "no-wakeups", no_argument, NULL, OPT_NO_WAKEUPS },
		{ "offcpu-stack", required_argument, NULL, OPT_OFFCPU_STACK },
		{ "cpu-stack", required_argument, NULL, OPT_CPU_STACK },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct record_opts o = { .freq = 999, .stop = &stop, .log = log_msg };
	struct child child = { .pid = -1, .go_fd = -1 };
	const char *out = DEFAULT_TRACE;
	struct record_stats st;
	struct sigaction sa;
	char cmdline[1024] = "", sz[32];
	struct stat sb;
	uint64_t v;
	int c, fd, err, exec_err_fd = -1, ret = EXIT_OK;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:o:d:F:e:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, &v) || v == 0 || v > 4194304)
				return usage_error("record ", "bad pid '%s': want a process id",
						   optarg);
			o.pid = (pid_t)v;
			break;
		case 'o':
			if (!*optarg)
				return usage_error("record ", "empty output file name");
			out = optarg;
			break;
		case 'd':
			if (parse_seconds(optarg, &o.duration))
				return usage_error("record ",
						   "bad duration '%s': want seconds > 0, e.g. 10 or 2.5",
						   optarg);
			break;
		case 'F':
			if (parse_u64(optarg, &v) || v == 0 || v > 100000)
				return usage_error("record ",
						   "bad frequency '%s': want 1 to 100000 Hz", optarg);
			o.freq = (unsigned int)v;
			break;
		case 'e':
			o.event = optarg;
			break;
		case OPT_SAMPLER:
			if (!strcmp(optarg, "auto"))
				o.sampler = RECORD_SAMPLER_AUTO;
			else if (!strcmp(optarg, "perf"))
				o.sampler = RECORD_SAMPLER_PERF;
			else if (!strcmp(optarg, "ctimer"))
				o.sampler = RECORD_SAMPLER_CTIMER;
			else
				return usage_error("record ", "bad sampler '%s': want auto, perf "
						   "or ctimer", optarg);
			break;
		case OPT_NO_OFFCPU:
			o.offcpu = RECORD_OFFCPU_OFF;
			break;
		case OPT_NO_WAKEUPS:
			o.no_wakeups = 1;
			break;
		case OPT_OFFCPU_SOURCE:
			if (!strcmp(optarg, "auto"))
				o.offcpu = RECORD_OFFCPU_AUTO;
			else if (!strcmp(optarg, "tracepoint"))
				o.offcpu = RECORD_OFFCPU_TRACEPOINT;
			else if (!strcmp(optarg, "switch"))
				o.offcpu = RECORD_OFFCPU_SWITCH;
			else
				return usage_error("record ", "bad off-CPU source '%s': want "
						   "auto, tracepoint or switch", optarg);
			break;
		case OPT_OFFCPU_STACK:
		case OPT_CPU_STACK:
			if (parse_u64(optarg, &v) || v % 8 || v > 32768)
				return usage_error("record ", "bad stack size '%s': want bytes, "
						   "a multiple of 8 up to 32768", optarg);
			if (c == OPT_CPU_STACK) {
				o.cpu_stack = (unsigned int)v;
				o.cpu_fp_only = v == 0;
			} else {
				o.offcpu_stack = (unsigned int)v;
				o.offcpu_fp_only = v == 0;
			}
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		default:
			return usage_error("record ", "bad option");
		}
	}
	if (o.pid && optind < argc)
		return usage_error("record ", "give -p PID or a command, not both");
	if (!o.pid && optind >= argc)
		return usage_error("record ", "nothing to record: give -p PID or -- CMD");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: the loop's poll wakes */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if (o.pid && kill(o.pid, 0) && errno == ESRCH) {
		error("cannot attach to pid %d: no such process", (int)o.pid);
		return EXIT_FAIL;
	}
	/* Keep the previous trace, as perf does: nothing lost. */
	if (strcmp(out, "-") && stat(out, &sb) == 0 && S_ISREG(sb.st_mode)) {
		char old[4096];

		snprintf(old, sizeof(old), "%s.old", out);
		if (rename(out, old))
			warning("cannot keep the previous '%s' as '%s': %s", out, old,
				strerror(errno));
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		error("cannot write '%s': %s", out, strerror(errno));
		return EXIT_FAIL;
	}
	o.out_fd = fd;
	if (!o.pid) {
		size_t n = 0;
		int i;

		for (i = optind; i < argc && n + 2 < sizeof(cmdline); i++)
			n += (size_t)snprintf(cmdline + n, sizeof(cmdline) - n, "%s%s",
					      i > optind ? " " : "", argv[i]);
		exec_err_fd = start_child(argv + optind, &child);
		if (exec_err_fd < 0) {
			error("cannot start '%s': %s", argv[optind], strerror(-exec_err_fd));
			close(fd);
			return EXIT_FAIL;
		}
		o.pid = child.pid;
		o.on_attached = release_child;
		o.ctx = &child;
		o.cmdline = cmdline;
	}

	err = record__run(&o, &st);
	release_child(&child);
	if (exec_err_fd >= 0) {
		int e;

		if (read(exec_err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e)) {
			error("cannot run '%s': %s", argv[optind], strerror(e));
			ret = EXIT_FAIL;
		}
		close(exec_err_fd);
	}
	if (child.pid > 0) {
		int status;

		if (waitpid(child.pid, &status, WNOHANG) == 0) {
			kill(child.pid, SIGTERM);
			waitpid(child.pid, &status, 0);
		}
	}
	if (fsync(fd) && errno != EINVAL && !err)
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		if (err == -ESRCH)
			error("cannot attach to pid %d: no such process", (int)o.pid);
		else
			error("cannot record pid %d: %s", (int)o.pid,
			      st.why[0] ? st.why : strerror(-err));
		if (!st.samples && !st.events)
			unlink(out);
		return EXIT_FAIL;
	}
	if (stat(out, &sb))
		sb.st_size = 0;
	fprintf(stderr,
		"d9prof: recorded %.2f s of pid %d%s: %llu samples (%s), %llu shim events, "
		"%u unique frames\n",
		st.seconds, (int)o.pid, st.target_exited ? " (it exited)" : "",
		(unsigned long long)st.samples, st.event_name,
		(unsigned long long)st.events, (unsigned int)st.frames);
	if (st.cpu_stacks)
		fprintf(stderr,
			"d9prof: CPU stacks: %.1f%% had a caller frame pointers skip, "
			"recovered with CFI (%.0f ms)\n",
			100.0 * (double)st.cpu_recovered / (double)st.cpu_stacks,
			st.cpu_unwind_s * 1e3);
	if (st.switches || !strcmp(st.offcpu, "tracepoint") ||
	    !strcmp(st.offcpu, "context-switch"))
		fprintf(stderr,
			"d9prof: off-CPU (%s): %llu switches (%llu blocked, %llu preempted)\n",
			st.offcpu, (unsigned long long)st.switches,
			(unsigned long long)st.switches_blocked,
			(unsigned long long)(st.switches - st.switches_blocked));
	if (st.switches && st.wakeups[0] && strncmp(st.wakeups, "off", 3) &&
	    strncmp(st.wakeups, "refused", 7))
		fprintf(stderr,
			"d9prof: run queue (%s): %llu intervals, %.1f ms runnable waiting "
			"for a CPU\n",
			st.wakeups, (unsigned long long)st.runnable, (double)st.runq_ns / 1e6);
	else if (st.switches)
		fprintf(stderr,
			"d9prof: run queue: wakeups not recorded (%s): blocked and run-queue "
			"time cannot be split, only preempted time is run-queue time\n",
			st.wakeups[0] ? st.wakeups : "off");
	if (st.wake_lost)
		fprintf(stderr, "d9prof: lost %llu wakeup records (ring full)\n",
			(unsigned long long)st.wake_lost);
	if (st.offcpu_stacks)
		fprintf(stderr,
			"d9prof: off-CPU stacks: %.1f%% of %llu whole, CFI joined to frame pointers "
			"(%.0f ms; at most %llu bytes of stack read)\n",
			100.0 * (double)st.offcpu_complete / (double)st.offcpu_stacks,
			(unsigned long long)st.offcpu_stacks, st.offcpu_unwind_s * 1e3,
			(unsigned long long)st.offcpu_stack_used);
	else if (st.switches)
		fprintf(stderr, "d9prof: off-CPU stacks: frame pointers only\n");
	if (st.offcpu_lost)
		fprintf(stderr, "d9prof: lost %llu context-switch records (ring full)\n",
			(unsigned long long)st.offcpu_lost);
	if (st.ctimer_drops)
		fprintf(stderr, "d9prof: the shim dropped %llu ctimer samples (sample area "
			"full)\n", (unsigned long long)st.ctimer_drops);
	if (st.lost_samples || st.shim_drops)
		fprintf(stderr, "d9prof: lost %llu samples (perf ring full), dropped %llu "
			"shim events (shim ring full)\n",
			(unsigned long long)st.lost_samples,
			(unsigned long long)st.shim_drops);
	else if (!st.offcpu_lost && !st.wake_lost && !st.ctimer_drops)
		fprintf(stderr, "d9prof: nothing lost or dropped\n");
	fprintf(stderr, "d9prof: wrote %s (%s)\n", out,
		human_size((double)sb.st_size, sz, sizeof(sz)));
	return ret;
}
