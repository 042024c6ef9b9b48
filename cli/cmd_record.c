// SPDX-License-Identifier: MIT
/* d9prof record: options, the target (pid or command), the status line;
 * the summary at the end is record_summary.c's. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/labels.h"
#include "analysis/live.h"
#include "cli/cli.h"
#include "lib/grow.h"
#include "lib/text.h"
#include "record/command.h"
#include "record/proc.h"
#include "record/record.h"

static volatile sig_atomic_t stop, dump_now;

/* --lean's threshold when none is given */
#define LEAN_DEFAULT_NS 1000000ULL

enum {
	OPT_NO_OFFCPU = 256,
	OPT_OFFCPU_SOURCE,
	OPT_SCHED,
	OPT_OFFCPU_STACK,
	OPT_CPU_STACK,
	OPT_NO_WAKEUPS,
	OPT_CHILDREN,
	OPT_NO_SHIM,
	OPT_CALL_GRAPH,
	OPT_OFFCPU_MIN,
	OPT_TOKIO,
	OPT_LEAN
};
enum {
	OPT_SAMPLER = 300,
	OPT_FLIGHT,
	OPT_MAX_SIZE,
	OPT_TRIGGER,
	OPT_COOLDOWN,
	OPT_ROTATE,
	OPT_MAX_TOTAL,
	OPT_KEY_PREFIX,
	OPT_ON_SEGMENT,
	OPT_HOOK_TIMEOUT,
	OPT_UPLOAD,
	OPT_UPLOAD_TABLES,
	OPT_ENDPOINT_URL,
	OPT_SERVICE,
	OPT_HOST,
	OPT_KEEP_AWS_ENV
};

/* What --upload takes out of the command's environment: the recorder's
 * credentials are not a command's that may drop to another user keeping
 * its environment (setpriv, gosu, an entrypoint). A service that calls
 * AWS with its own role finds none of these set. */
static const char *const aws_secrets[] = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
					  "AWS_SESSION_TOKEN", NULL};

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		dump_now = 1;
	else
		stop = 1;
}

/* The poll probes' default cap: ~2 us a probed poll here, so ~4% of one
 * CPU of the target's at most */
#define TOKIO_MAX_RATE 20000

/* --tokio auto|off|probes[=RATE] */
static int parse_tokio(const char *arg, struct record_opts *o)
{
	unsigned long long v = TOKIO_MAX_RATE;
	char *end;

	if (!strcmp(arg, "auto") || !strcmp(arg, "off")) {
		o->tokio = arg[0] == 'a' ? RECORD_TOKIO_AUTO : RECORD_TOKIO_OFF;
		return 0;
	}
	if (strncmp(arg, "probes", 6) || (arg[6] && arg[6] != '='))
		return usage_error("record ",
				   "bad Tokio mode '%s': want auto, off or probes[=RATE]",
				   arg);
	if (arg[6]) {
		errno = 0;
		v = strtoull(arg + 7, &end, 10);
		if (errno || end == arg + 7 || *end)
			return usage_error("record ",
					   "bad --tokio probes rate '%s': want polls a "
					   "second (0: no cap)",
					   arg + 7);
	}
	o->tokio = RECORD_TOKIO_PROBES;
	o->tokio_max_rate = v;
	return 0;
}

static void help(FILE *f)
{
	fprintf(f,
		"usage: d9prof record -p PID [options] [-- CMD [ARGS...]]\n"
		"       d9prof record [options] -- CMD [ARGS...]\n\n"
		"Sample every thread of a process (threads started later too) with\n"
		"perf_event and callchains (unwound by CFI where the target's code has\n"
		"no frame pointers), record each context switch\n"
		"with its stack and the time off-CPU, drain the d9prof shim's task\n"
		"and poll events, and write one self-contained trace.\n\n"
		"options:\n"
		"  -p, --pid PID         record the running process PID; with -- CMD,\n"
		"                        while CMD runs (CMD only times the recording)\n"
		"  -o, --output FILE     trace file (default ./" DEFAULT_TRACE
		"; an existing one\n"
		"                        is kept as FILE.old)\n"
		"  -d, --duration DUR    stop after DUR: seconds (10, 2.5) or a number\n"
		"                        and a unit (500ms, 2s; ns, us, ms, s); default:\n"
		"                        until ^C, the target exits or CMD ends\n"
		"  -F, --freq HZ         samples per second per thread (default 999;\n"
		"                        --sampler tick: the kernel's HZ)\n"
		"  -e, --event EVENT     sampling event, a libpfm4/perf name (default\n"
		"                        cycles, or cpu-clock without a hardware PMU)\n"
		"      --sampler S       auto (default): perf_event, falling back to\n"
		"                        ctimer when perf_event_open is refused or\n"
		"                        delivers nothing; perf; ctimer: the shim's\n"
		"                        per-thread CPU timers inside the target (needs\n"
		"                        libd9prof in it; user stacks only); tick: the\n"
		"                        scheduler's tick, read by BPF with the\n"
		"                        switches (no interrupt of its own: the\n"
		"                        cheapest; at HZ, so in step with work the\n"
		"                        tick's timers drive; needs --sched bpf's\n"
		"                        privileges)\n"
		"      --no-offcpu       do not record context switches (off-CPU time)\n"
		"      --sched WAY       auto (default): scheduler events filtered and\n"
		"                        paired in the kernel by BPF where it is allowed\n"
		"                        (root or CAP_BPF+CAP_PERFMON, a kernel with\n"
		"                        BTF), else perf_event; bpf or perf: that one\n"
		"      --offcpu-source SRC  perf_event's source: auto (default): the\n"
		"                        sched_switch tracepoint, else the context-switch\n"
		"                        event; tracepoint or switch: that one only\n"
		"                        (implies --sched perf; not with --sched bpf)\n"
		"      --children        also the samples of processes the target forks\n"
		"                        (inherited events follow them; left out and\n"
		"                        counted by default)\n"
		"      --no-shim         leave the target's d9prof shim detached: CPU\n"
		"                        samples and switches only, no task ids (as\n"
		"                        perf records; to see what task awareness costs)\n"
		"      --tokio MODE      auto (default): where the target is an unmodified\n"
		"                        Tokio program (1.22+, not stripped), read the\n"
		"                        task each thread runs at every sample and\n"
		"                        switch-out (BPF; no probe on its polls): task\n"
		"                        ids with no code change; off: not;\n"
		"                        probes[=RATE]: also uprobes on its polls and\n"
		"                        wakes (polls, delays; 2 to 5 us of the\n"
		"                        target's time a poll), off for good once\n"
		"                        hit faster than RATE a second (polls and\n"
		"                        wakes; 20000; 0: never)\n"
		"      --lean[=DUR]      lean mode: the shim writes only the polls that\n"
		"                        lasted DUR (default 1ms) or whose wake waited\n"
		"                        DUR, and counts the others per task (counts,\n"
		"                        totals, histograms); samples and switch-outs\n"
		"                        carry their task (BPF): a cost that grows\n"
		"                        with samples, not with polls; sampled at the\n"
		"                        tick where BPF may be used, unless -F, -e,\n"
		"                        --sampler or the off-CPU options say\n"
		"      --no-wakeups      do not record wakeups (system-wide, filtered to\n"
		"                        the target's threads): off-CPU time is then\n"
		"                        not split into blocked and run-queue time\n"
		"      --offcpu-stack BYTES  user stack copied per switch to unwind\n"
		"                        through code without frame pointers (default\n"
		"                        8192, at most 32768; 0: frame pointers only)\n"
		"      --offcpu-min DUR  off-CPU intervals shorter than DUR (100us, 1ms)\n"
		"                        keep their time but not their stack: with BPF\n"
		"                        the stacks of those never leave the kernel\n"
		"                        (and at most 8192 bytes of stack are copied);\n"
		"                        in the views they are \"[stack not kept ...]\"\n"
		"      --call-graph MODE  CPU samples' user stacks: fp (frame pointers,\n"
		"                        and 512 bytes of stack for the caller of a\n"
		"                        function without a frame), dwarf[,SIZE] (SIZE\n"
		"                        bytes of stack unwound by CFI, default 8192,\n"
		"                        at most 32768), auto (default: dwarf where the\n"
		"                        target's own code lacks frame pointers, else fp)\n"
		"      --cpu-stack BYTES  the same as --call-graph dwarf,BYTES; 0: frame\n"
		"                        pointers alone, no stack copied\n"
		"\nflight recorder (always on, bounded):\n"
		"      --flight[=WINDOW] record until stopped, keeping the last WINDOW\n"
		"                        (default 30s) in memory; dump it as one trace\n"
		"                        into the -o directory (default .) on SIGUSR1\n"
		"                        ('d9prof dump PID'), on a --trigger, when the\n"
		"                        target dies (with how) and when stopped\n"
		"      --max-size SIZE   keep at most SIZE bytes (64M, 1G; default 64M)\n"
		"      --trigger COND    dump when COND holds: poll>DUR (a poll longer),\n"
		"                        delay>DUR (a woken task waiting longer for its\n"
		"                        poll), runq>DUR (a thread waiting longer for a\n"
		"                        CPU), span>DUR or span:NAME>DUR (a span of the\n"
		"                        application, of that name, lasting longer),\n"
		"                        or what a detector finds: lost-waker,\n"
		"                        self-wakes, never-yielded, task-leak (as top\n"
		"                        warns); half a window later, so the dump holds\n"
		"                        before and after; may be given more than once\n"
		"      --cooldown DUR    at most one dump per DUR for each trigger\n"
		"                        (default: the window)\n"
		"      --rotate PERIOD   instead: a self-contained segment file every\n"
		"                        PERIOD into the -o directory, EPOCH-INDEX.d9\n"
		"      --max-total SIZE  delete the oldest segment files (with --flight:\n"
		"                        dumps) this recording wrote beyond SIZE\n"
		"                        (--flight default: 8 times --max-size)\n"
		"      --key-prefix P    segment files under P/YYYY-MM-DD/HHMM/SERVICE/\n"
		"                        HOST/BOOT/ (an object store's layout)\n"
		"      --on-segment CMD  run CMD by /bin/sh on each sealed file, with\n"
		"                        $D9PROF_SEGMENT its path and {} standing for\n"
		"                        it (e.g. 'aws s3 cp {} s3://bucket/'); at most\n"
		"                        4 at once; failures counted, never fatal\n"
		"      --hook-timeout DUR  kill an --on-segment command running longer\n"
		"                        (default 10m; 0: never)\n"
		"      --upload s3://BUCKET[/PREFIX]  put each sealed segment (--rotate)\n"
		"                        or dump (--flight) in S3 under PREFIX/DATE/\n"
		"                        HHMM/SERVICE/HOST/BOOT/, from a background\n"
		"                        thread (retried, never blocking the recording;\n"
		"                        local files kept as without it); credentials,\n"
		"                        region and endpoint as the AWS CLI finds them\n"
		"      --upload-tables   with --upload and --rotate, each segment's Parquet\n"
		"                        tables too (as 'export --format parquet' makes\n"
		"                        them, at the lowest priority), under\n"
		"                        PREFIX/TABLE/service=S/host=H/date=D/\n"
		"      --endpoint-url URL  an S3-compatible store (path-style)\n"
		"      --keep-aws-env    with --upload, leave AWS_ACCESS_KEY_ID,\n"
		"                        AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN in\n"
		"                        CMD's environment (taken out by default)\n"
		"      --service NAME    the layout's SERVICE (default: the target's name)\n"
		"      --host NAME       the layout's HOST (default: the host name)\n"
		"  -h, --help            this help\n\n"
		"Stops on SIGINT/SIGTERM, at -d, when the target exits or when CMD\n"
		"ends, and writes what it has. A summary goes to stderr, and on a\n"
		"terminal a status line while recording. With a command, its exit\n"
		"status is record's (128 + N when a signal N killed it); nothing is\n"
		"written when it cannot be run.\n\n"
		"examples:\n"
		"  d9prof record -p 4242 -d 10\n"
		"  d9prof record -p 4242 -- sleep 5\n"
		"  d9prof record -F 499 -o api.d9 -- ./my-server --port 8080\n"
		"  d9prof record -p 4242 --flight=30s --trigger 'poll>50ms' -o /var/tmp/d9\n"
		"  d9prof record -p 4242 --rotate 60s --max-total 500M -o /var/tmp/d9 \\\n"
		"      --upload s3://traces/prod\n");
}

/* What a recording with a command needs between the option parsing and
 * the summary: the command, the output until it is opened, the status
 * line. */
struct rec_ctx {
	/* the command: the target, or with -p only the timer */
	struct record_cmd cmd;
	char *held; /* messages held until it runs (nothing but
		     * "cannot run" is said if it cannot) */
	size_t nheld, held_cap;
	/* the output */
	const char *out;
	int fd;	     /* the trace's: a memfd until out is opened */
	int opened;  /* fd is out */
	int rotated; /* the previous out is now out.old */
	int said;    /* on_attached said what failed */
	/* the status line on a terminal */
	pid_t target;
	double duration;
	int forever;		       /* no -d and no command: say how to stop */
	const char *upload, *endpoint; /* --upload, --endpoint-url */
	int keep_aws_env;	       /* --keep-aws-env */
	int upload_tables;	       /* --upload-tables */
	struct record_upload *up;
	int line;	    /* a status line is showing */
	int status;	    /* ... is wanted (a terminal) */
	struct live *live;  /* `top` beside: fed the losses too */
	char cmdline[1024]; /* a command's, for the trace */
};

/* -d: seconds as before (parse_seconds(): 10, 2.5, 2s) or a number and
 * a unit (duration_parse(): 500ms). 0 or -EINVAL. */
static int parse_duration(const char *s, double *out)
{
	uint64_t ns;

	if (!parse_seconds(s, out))
		return 0;
	if (duration_parse(s, &ns) || !ns)
		return -EINVAL;
	*out = (double)ns / 1e9;
	return 0;
}

static void erase_line(struct rec_ctx *x)
{
	if (x->line) {
		fputs("\r\033[K", stderr);
		x->line = 0;
	}
}

/* Say the held messages, or forget them (@say = 0). */
static void flush_held(struct rec_ctx *x, int say)
{
	if (x->held && say)
		fwrite(x->held, 1, x->nheld, stderr);
	free(x->held);
	x->held = NULL;
	x->nheld = x->held_cap = 0;
}

static void log_msg(void *ctx, enum record_log_level lvl, const char *msg)
{
	struct rec_ctx *x = ctx;
	const char *pfx = lvl == RECORD_WARN ? "d9prof: warning: " : "d9prof: ";
	size_t n = strlen(pfx) + strlen(msg) + 1;
	char *p;

	if (x->cmd.pid > 0 && !x->cmd.released) {
		if (!LIB_GROW(x->held, x->held_cap, x->nheld + n + 1)) {
			/* cleaned as warning() and info() clean what they say:
			 * the engine's messages name the target's files */
			p = stpcpy(x->held + x->nheld, pfx);
			p += text_clean(msg, p, strlen(msg) + 1);
			*p++ = '\n';
			*p = '\0';
			x->nheld = (size_t)(p - x->held);
			return;
		}
	}
	erase_line(x);
	if (lvl == RECORD_WARN)
		warning("%s", msg);
	else
		info("%s", msg);
}

/* The status line: one write, at most as wide as the terminal. */
static void progress(void *ctx, const struct record_stats *st, double seconds)
{
	struct rec_ctx *x = ctx;
	uint64_t drops = st->lost_samples + st->shim_drops + st->offcpu_lost +
			 st->wake_lost + st->ctimer_drops + st->ctimer_refused;
	char line[320], of[32] = "";
	struct winsize ws;
	int n;

	live_set_lost(x->live, st);
	if (!x->status)
		return;
	if (x->duration > 0)
		snprintf(of, sizeof(of), " of %g s", x->duration);
	n = snprintf(
		line, sizeof(line),
		"\r\033[Kd9prof: recording pid %d: %.1f s%s, %llu sample%s, %llu shim "
		"event%s, %llu drop%s%s",
		(int)x->target, seconds, of, (unsigned long long)st->samples,
		plural(st->samples), (unsigned long long)st->events, plural(st->events),
		(unsigned long long)drops, plural(drops),
		x->forever ? " - Ctrl-C to stop" : "");
	/* a line wider than the terminal wraps, and \r then erases only its
	 * last part: cut it (4 bytes of \r\033[K take no column) */
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 &&
	    n > 4 + ws.ws_col - 1 && (size_t)(4 + ws.ws_col - 1) < sizeof(line))
		line[4 + ws.ws_col - 1] = '\0';
	fputs(line, stderr);
	x->line = 1;
}

/* Open the output, keeping a previous trace as FILE.old as perf does.
 * -errno after saying what failed. */
static int open_out(struct rec_ctx *x)
{
	int fd = record_output__open(x->out, &x->rotated);

	if (fd == -EEXIST) {
		warning("cannot keep the previous '%s' as '%s.old': it stays", x->out,
			x->out);
		fd = record_output__open(x->out, NULL);
	}
	if (fd < 0)
		error("cannot write '%s': %s", x->out, strerror(-fd));
	return fd;
}

/* The trace so far (its header) went to a memfd: move it to the output
 * and put the output under the writer's fd. */
static int move_to_out(struct rec_ctx *x)
{
	int fd = open_out(x), e;

	if (fd < 0)
		return fd;
	x->opened = 1;
	e = record_output__move(x->fd, fd);
	close(fd);
	if (e)
		error("cannot write '%s': %s", x->out, strerror(-e));
	return e;
}

/* Everything is attached: let the command run if there is one, and open
 * the output only once it did. */
static int on_attached(void *ctx)
{
	struct rec_ctx *x = ctx;
	int e;

	if (x->cmd.pid > 0 && (e = -record_cmd__release(&x->cmd))) {
		flush_held(x, 0);
		error("cannot run '%s': %s", x->cmd.name, strerror(e));
		x->said = 1;
		return -e;
	}
	flush_held(x, 1);
	if (!x->opened && (e = move_to_out(x))) {
		x->said = 1;
		return e;
	}
	return 0;
}

/* perf's convention: record's exit status is the command's. Say how it
 * ended unless that was success. */
static int child_exit(const struct rec_ctx *x, int status)
{
	if (status < 0)
		return EXIT_OK;
	if (WIFEXITED(status)) {
		if (WEXITSTATUS(status))
			error("%s exited with status %d", x->cmd.name,
			      WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status)) {
		error("%s was killed by signal %d (%s)", x->cmd.name, WTERMSIG(status),
		      strsignal(WTERMSIG(status)));
		return 128 + WTERMSIG(status);
	}
	return EXIT_OK;
}

/* A bad option: which one, in one line (getopt is silent). */
static int bad_option(int c, char **argv, const struct option *lopts)
{
	const char *arg = argv[optind - 1];
	int len = (int)strcspn(arg, "=");
	int lng = !strncmp(arg, "--", 2), n = 0;

	for (; lng && lopts->name; lopts++)
		n += !strncmp(lopts->name, arg + 2, (size_t)len - 2);
	if (n > 1)
		return usage_error("record ", "ambiguous option '%.*s'", len, arg);

	if (c == ':' && lng)
		return usage_error("record ", "option '%.*s' needs a value", len, arg);
	if (c == ':')
		return usage_error("record ", "option '-%c' needs a value", optopt);
	if (lng && optopt)
		return usage_error("record ", "option '%.*s' takes no value", len, arg);
	if (lng)
		return usage_error("record ", "unknown option '%.*s'", len, arg);
	if (optopt > ' ' && optopt < 127)
		return usage_error("record ", "unknown option '-%c'", optopt);
	return usage_error("record ", "bad option '%s'", arg);
}

/* --trigger poll>DUR | delay>DUR | runq>DUR | span[:NAME]>DUR, or a
 * detector: lost-waker | self-wakes | never-yielded | task-leak. 0 or
 * -EINVAL. */
static int parse_trigger(const char *s, struct record_trigger *t)
{
	static const struct {
		const char *name;
		enum record_trigger_kind kind;
	} kinds[] = {{"poll", RECORD_TRIGGER_POLL},
		     {"delay", RECORD_TRIGGER_DELAY},
		     {"runq", RECORD_TRIGGER_RUNQ},
		     {"span", RECORD_TRIGGER_SPAN},
		     {"lost-waker", RECORD_TRIGGER_LOST_WAKER},
		     {"self-wakes", RECORD_TRIGGER_SELF_WAKES},
		     {"never-yielded", RECORD_TRIGGER_NO_YIELD},
		     {"task-leak", RECORD_TRIGGER_LEAK}};
	const char *gt = strrchr(s, '>'), *colon = strchr(s, ':');
	size_t klen = gt ? (size_t)((colon && colon < gt ? colon : gt) - s) : strlen(s);

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (klen != strlen(kinds[i].name) || strncmp(s, kinds[i].name, klen))
			continue;
		t->kind = kinds[i].kind;
		if (t->kind >= RECORD_TRIGGER_LOST_WAKER)
			return gt ? -EINVAL : 0; /* (its threshold is the detector's) */
		if (!gt)
			return -EINVAL;
		if (colon && colon < gt) {
			size_t n = (size_t)(gt - colon - 1);

			/* a span's name, only for span */
			if (t->kind != RECORD_TRIGGER_SPAN || !n || n >= sizeof(t->span))
				return -EINVAL;
			memcpy(t->span, colon + 1, n);
			t->span[n] = '\0';
		}
		return duration_parse(gt + 1, &t->ns) || !t->ns ? -EINVAL : 0;
	}
	return -EINVAL;
}

/* A duration option in seconds: DUR (500ms, 30s) or bare seconds. */
static int parse_dur_s(const char *s, double *out)
{
	return parse_duration(s, out) || *out <= 0 ? -EINVAL : 0;
}

/* The local time of day of CLOCK_MONOTONIC ns @mono, "HH:MM:SS". */
static char *clock_hms(uint64_t mono, int64_t offset, char *buf, size_t len)
{
	time_t t = (time_t)(((int64_t)mono + offset) / 1000000000LL);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
	return buf;
}

/* One line per dump (flight): the file, the time it covers, why. */
static void on_dump(void *ctx, const struct record_dump *d)
{
	struct rec_ctx *x = ctx;
	int64_t off = record_realtime_offset_ns();
	char a[16], b[16], sz[32];

	clock_hms(d->from, off, a, sizeof(a));
	clock_hms(d->to, off, b, sizeof(b));
	erase_line(x);
	info("dump: %s (%.1f s, %s-%s, %u segment%s, %s): %s", d->path,
	     (double)(d->to - d->from) / 1e9, a, b, d->segments, plural(d->segments),
	     text_size((double)d->bytes, sz, sizeof(sz)), d->why);
	if (x->up)
		record_upload__dump(x->up, d);
}

static void on_sealed(void *ctx, const struct record_sealed *s)
{
	struct rec_ctx *x = ctx;

	record_upload__sealed(x->up, s);
}

/* The options of the segmented modes (--flight, --rotate and theirs)
 * into @o: 0 if @c is one, EXIT_USAGE after saying what is wrong, -1 if
 * it is none. */
static int segment_option(struct record_opts *o, int c, const char *arg,
			  int *hook_timeout_given)
{
	uint64_t v;

	switch (c) {
	case OPT_FLIGHT:
		o->segments = RECORD_FLIGHT;
		o->window = 30;
		if (arg && (parse_dur_s(arg, &o->window) || o->window < 1))
			return usage_error("record ",
					   "bad --flight window '%s': want a "
					   "duration of at least 1s, e.g. 30s",
					   arg);
		return 0;
	case OPT_ROTATE:
		o->segments = RECORD_ROTATE;
		if (parse_dur_s(arg, &o->rotate) || o->rotate < 1)
			return usage_error("record ",
					   "bad --rotate period '%s': want a "
					   "duration of at least 1s, e.g. 60s",
					   arg);
		return 0;
	case OPT_MAX_SIZE:
	case OPT_MAX_TOTAL:
		if (parse_size(arg, &v) || !v)
			return usage_error("record ", "bad size '%s': " SIZE_WANT, arg);
		*(c == OPT_MAX_SIZE ? &o->max_size : &o->max_total) = v;
		return 0;
	case OPT_TRIGGER:
		if (o->ntriggers == RECORD_MAX_TRIGGERS)
			return usage_error("record ", "at most %d --trigger",
					   RECORD_MAX_TRIGGERS);
		if (parse_trigger(arg, &o->triggers[o->ntriggers]))
			return usage_error("record ",
					   "bad trigger '%s': want poll>DUR, "
					   "delay>DUR, runq>DUR, span[:NAME]>DUR "
					   "(e.g. 'poll>50ms'), lost-waker, "
					   "self-wakes, never-yielded or task-leak",
					   arg);
		o->ntriggers++;
		return 0;
	case OPT_COOLDOWN:
		if (parse_dur_s(arg, &o->cooldown))
			return usage_error("record ",
					   "bad --cooldown '%s': " DURATION_WANT, arg);
		return 0;
	case OPT_KEY_PREFIX:
		if (!*arg || *arg == '/' || strstr(arg, ".."))
			return usage_error("record ",
					   "bad --key-prefix '%s': want a "
					   "relative path without '..'",
					   arg);
		o->key_prefix = arg;
		return 0;
	case OPT_ON_SEGMENT:
		o->on_segment = arg;
		return 0;
	case OPT_SERVICE:
	case OPT_HOST:
		if (!*arg || strchr(arg, '/') || !strcmp(arg, ".") || !strcmp(arg, ".."))
			return usage_error("record ",
					   "bad --%s '%s': want a name without '/'",
					   c == OPT_SERVICE ? "service" : "host", arg);
		*(c == OPT_SERVICE ? &o->service : &o->host) = arg;
		return 0;
	case OPT_HOOK_TIMEOUT:
		if (!strcmp(arg, "0"))
			o->hook_timeout = 0;
		else if (parse_dur_s(arg, &o->hook_timeout))
			return usage_error("record ",
					   "bad --hook-timeout '%s': " DURATION_WANT
					   " (0: never)",
					   arg);
		*hook_timeout_given = 1;
		return 0;
	default:
		return -1;
	}
}

/* What the options say together: EXIT_USAGE (or EXIT_FAIL) after saying
 * what does not fit, else -1 to go on. */
static int check_args(struct record_opts *o, struct rec_ctx *x, int argc, int out_given,
		      int hook_timeout_given)
{
	if (!o->pid && optind >= argc)
		return usage_error("record ", "nothing to record: give -p PID or -- CMD");
	if (o->offcpu_min_ns && o->offcpu == RECORD_OFFCPU_OFF)
		return usage_error(
			"record ",
			"--offcpu-min keeps off-CPU intervals: not with --no-offcpu");
	if (o->sched == RECORD_SCHED_BPF &&
	    (o->offcpu == RECORD_OFFCPU_TRACEPOINT || o->offcpu == RECORD_OFFCPU_SWITCH))
		return usage_error(
			"record ",
			"--offcpu-source chooses perf_event's source: not with --sched bpf");
	if (o->segments == RECORD_FLIGHT &&
	    (o->rotate > 0 || o->key_prefix || o->on_segment || hook_timeout_given))
		return usage_error(
			"record ",
			"--flight keeps segments in memory: --rotate, "
			"--key-prefix, --on-segment and --hook-timeout are for --rotate");
	if (o->segments == RECORD_FLIGHT && !o->max_total)
		o->max_total = 8 * (o->max_size ? o->max_size : 64ULL << 20);
	if (o->no_shim && o->lean_ns)
		return usage_error("record ",
				   "--lean is a mode of the shim: not with --no-shim");
	if (o->no_shim && o->sampler == RECORD_SAMPLER_CTIMER)
		return usage_error("record ",
				   "--sampler ctimer samples through the shim: "
				   "not with --no-shim");
	/* lean: the tick where BPF may be used (no interrupt of its own),
	 * unless how to sample was said */
	if (o->lean_ns && o->sampler == RECORD_SAMPLER_AUTO && !o->freq && !o->event &&
	    o->offcpu == RECORD_OFFCPU_AUTO && o->sched != RECORD_SCHED_PERF &&
	    record_tick_usable())
		o->sampler = RECORD_SAMPLER_TICK;
	if (o->sampler == RECORD_SAMPLER_TICK &&
	    (o->freq || o->event || o->offcpu != RECORD_OFFCPU_AUTO ||
	     o->sched == RECORD_SCHED_PERF))
		return usage_error(
			"record ",
			"--sampler tick samples at the kernel's tick in its scheduler "
			"programs: not with -F, -e, --no-offcpu, --offcpu-source or "
			"--sched perf");
	if (o->sampler == RECORD_SAMPLER_TICK && !(o->freq = record_tick_hz()))
		return usage_error("record ",
				   "--sampler tick: cannot tell the kernel's tick rate "
				   "(clock_getres(CLOCK_MONOTONIC_COARSE))");
	if (!o->freq)
		o->freq = 999;
	if (o->segments != RECORD_FLIGHT && (o->ntriggers || o->cooldown > 0))
		return usage_error("record ", "--trigger and --cooldown need --flight");
	if (o->segments == RECORD_ONE_TRACE && (x->upload || o->service || o->host))
		return usage_error(
			"record ",
			"--upload, --service and --host need --rotate or --flight");
	if (x->endpoint && !x->upload)
		return usage_error("record ", "--endpoint-url is for --upload");
	if (x->upload_tables && (!x->upload || o->segments != RECORD_ROTATE))
		return usage_error("record ",
				   "--upload-tables needs --upload and --rotate");
	if (x->keep_aws_env && !x->upload)
		return usage_error("record ", "--keep-aws-env is for --upload");
	if (o->segments == RECORD_ONE_TRACE &&
	    (o->max_total || o->key_prefix || o->on_segment || hook_timeout_given))
		return usage_error("record ",
				   "--max-total, --key-prefix, --on-segment and "
				   "--hook-timeout need --rotate");
	if (o->segments != RECORD_ONE_TRACE) {
		struct stat sb;

		o->dir = out_given ? x->out : ".";
		if (!stat(o->dir, &sb) && !S_ISDIR(sb.st_mode)) {
			error("-o '%s' is not a directory: --%s writes its files into one",
			      o->dir, o->segments == RECORD_FLIGHT ? "flight" : "rotate");
			return EXIT_FAIL;
		}
	}
	return -1;
}

/* The options into @o and @x: -1 to go on, else the exit status (after
 * saying what is wrong, or the help). */
/* The options of what is sampled and how (-F, -e, the sampler, off-CPU
 * and its sources, stacks, --tokio) into @o: 0 if @c is one, EXIT_USAGE
 * after saying what is wrong, -1 if it is none. */
static int source_option(struct record_opts *o, int c, const char *arg)
{
	static const char *const samplers[] = {
		[RECORD_SAMPLER_AUTO] = "auto",
		[RECORD_SAMPLER_PERF] = "perf",
		[RECORD_SAMPLER_CTIMER] = "ctimer",
		[RECORD_SAMPLER_TICK] = "tick",
	};
	static const char *const scheds[] = {
		[RECORD_SCHED_AUTO] = "auto",
		[RECORD_SCHED_BPF] = "bpf",
		[RECORD_SCHED_PERF] = "perf",
	};
	static const char *const sources[] = {
		[RECORD_OFFCPU_AUTO] = "auto",
		[RECORD_OFFCPU_TRACEPOINT] = "tracepoint",
		[RECORD_OFFCPU_SWITCH] = "switch",
	};
	uint64_t v;
	int k;

	switch (c) {
	case 'F':
		if (parse_u64(arg, &v) || v == 0 || v > 100000)
			return usage_error("record ",
					   "bad frequency '%s': want 1 to 100000 Hz",
					   arg);
		o->freq = (unsigned int)v;
		return 0;
	case 'e':
		o->event = arg;
		return 0;
	case OPT_SAMPLER:
		if (WORD_OPTION("record ", "sampler", arg, samplers, &k))
			return EXIT_USAGE;
		o->sampler = (enum record_sampler)k;
		return 0;
	case OPT_NO_OFFCPU:
		o->offcpu = RECORD_OFFCPU_OFF;
		return 0;
	case OPT_CHILDREN:
		o->children = 1;
		return 0;
	case OPT_NO_WAKEUPS:
		o->no_wakeups = 1;
		return 0;
	case OPT_NO_SHIM:
		o->no_shim = 1;
		return 0;
	case OPT_OFFCPU_SOURCE:
		if (WORD_OPTION("record ", "off-CPU source", arg, sources, &k))
			return EXIT_USAGE;
		o->offcpu = (enum record_offcpu)k;
		return 0;
	case OPT_SCHED:
		if (WORD_OPTION("record ", "scheduler event path", arg, scheds, &k))
			return EXIT_USAGE;
		o->sched = (enum record_sched)k;
		return 0;
	case OPT_TOKIO:
		if (parse_tokio(arg, o))
			return EXIT_USAGE;
		return 0;
	case OPT_CALL_GRAPH:
		if (record_callgraph_parse(arg, &o->callgraph, &o->cpu_stack))
			return usage_error("record ",
					   "bad call graph '%s': want auto, fp, "
					   "dwarf or dwarf,SIZE (bytes, a multiple of 8 "
					   "up to 32768)",
					   arg);
		o->cpu_fp_only = 0;
		return 0;
	case OPT_LEAN:
		o->lean_ns = LEAN_DEFAULT_NS;
		if (arg && (duration_parse(arg, &o->lean_ns) || !o->lean_ns))
			return usage_error("record ", "bad --lean '%s': " DURATION_WANT,
					   arg);
		o->lean_delay_ns = o->lean_ns;
		return 0;
	case OPT_OFFCPU_MIN:
		if (duration_parse(arg, &o->offcpu_min_ns))
			return usage_error("record ",
					   "bad --offcpu-min '%s': " DURATION_WANT, arg);
		return 0;
	case OPT_OFFCPU_STACK:
	case OPT_CPU_STACK:
		if (parse_u64(arg, &v) || v % 8 || v > 32768)
			return usage_error("record ",
					   "bad stack size '%s': want bytes, "
					   "a multiple of 8 up to 32768",
					   arg);
		if (c == OPT_CPU_STACK) {
			o->callgraph = RECORD_CALLGRAPH_DWARF;
			o->cpu_stack = (unsigned int)v;
			o->cpu_fp_only = v == 0;
		} else {
			o->offcpu_stack = (unsigned int)v;
			o->offcpu_fp_only = v == 0;
		}
		return 0;
	}
	return -1;
}

static int parse_args(int argc, char **argv, struct record_opts *o, struct rec_ctx *x)
{
	static const struct option lopts[] = {
		{"pid", required_argument, NULL, 'p'},
		{"output", required_argument, NULL, 'o'},
		{"duration", required_argument, NULL, 'd'},
		{"freq", required_argument, NULL, 'F'},
		{"event", required_argument, NULL, 'e'},
		{"sampler", required_argument, NULL, OPT_SAMPLER},
		{"no-offcpu", no_argument, NULL, OPT_NO_OFFCPU},
		{"offcpu-source", required_argument, NULL, OPT_OFFCPU_SOURCE},
		{"sched", required_argument, NULL, OPT_SCHED},
		{"no-wakeups", no_argument, NULL, OPT_NO_WAKEUPS},
		{"no-shim", no_argument, NULL, OPT_NO_SHIM},
		{"tokio", required_argument, NULL, OPT_TOKIO},
		{"children", no_argument, NULL, OPT_CHILDREN},
		{"offcpu-stack", required_argument, NULL, OPT_OFFCPU_STACK},
		{"offcpu-min", required_argument, NULL, OPT_OFFCPU_MIN},
		{"lean", optional_argument, NULL, OPT_LEAN},
		{"cpu-stack", required_argument, NULL, OPT_CPU_STACK},
		{"call-graph", required_argument, NULL, OPT_CALL_GRAPH},
		{"flight", optional_argument, NULL, OPT_FLIGHT},
		{"max-size", required_argument, NULL, OPT_MAX_SIZE},
		{"trigger", required_argument, NULL, OPT_TRIGGER},
		{"cooldown", required_argument, NULL, OPT_COOLDOWN},
		{"rotate", required_argument, NULL, OPT_ROTATE},
		{"max-total", required_argument, NULL, OPT_MAX_TOTAL},
		{"key-prefix", required_argument, NULL, OPT_KEY_PREFIX},
		{"on-segment", required_argument, NULL, OPT_ON_SEGMENT},
		{"hook-timeout", required_argument, NULL, OPT_HOOK_TIMEOUT},
		{"upload", required_argument, NULL, OPT_UPLOAD},
		{"upload-tables", no_argument, NULL, OPT_UPLOAD_TABLES},
		{"keep-aws-env", no_argument, NULL, OPT_KEEP_AWS_ENV},
		{"endpoint-url", required_argument, NULL, OPT_ENDPOINT_URL},
		{"service", required_argument, NULL, OPT_SERVICE},
		{"host", required_argument, NULL, OPT_HOST},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int hook_timeout_given = 0, out_given = 0, c, err;
	uint64_t v;

	x->out = DEFAULT_TRACE;
	optind = 1;
	/* '+': stop at CMD; ':': getopt says nothing, bad_option() does */
	while ((c = getopt_long(argc, argv, "+:p:o:d:F:e:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, &v) || v == 0 || v > 4194304)
				return usage_error("record ",
						   "bad pid '%s': want a process id",
						   optarg);
			o->pid = (pid_t)v;
			break;
		case 'o':
			if (!*optarg)
				return usage_error("record ", "empty output file name");
			x->out = optarg;
			out_given = 1;
			break;
		case 'd':
			if (parse_duration(optarg, &o->duration))
				return usage_error(
					"record ",
					"bad duration '%s': want seconds > 0 or a number "
					"and a unit, e.g. 10, 2.5, 500ms or 2s",
					optarg);
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		case OPT_UPLOAD:
			x->upload = optarg;
			break;
		case OPT_UPLOAD_TABLES:
			x->upload_tables = 1;
			break;
		case OPT_ENDPOINT_URL:
			x->endpoint = optarg;
			break;
		case OPT_KEEP_AWS_ENV:
			x->keep_aws_env = 1;
			break;
		default:
			err = source_option(o, c, optarg);
			if (err >= 0) {
				if (err)
					return err;
				break;
			}
			err = segment_option(o, c, optarg, &hook_timeout_given);
			if (err < 0)
				return bad_option(c, argv, lopts);
			if (err)
				return err;
		}
	}
	return check_args(o, x, argc, out_given, hook_timeout_given);
}

/* Everything before the recording: the signals, the target (the command
 * started, stopped before its exec), the output (a memfd until the
 * recording is sure), the status line. 0 or EXIT_FAIL after saying why. */
static int setup(struct record_opts *o, struct rec_ctx *x, int argc, char **argv)
{
	struct sigaction sa;
	int err;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: the loop's poll wakes */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a dump (flight), the next segment (rotate); else nothing: a stray
	 * SIGUSR1 must not kill a recording */
	sigaction(SIGUSR1, &sa, NULL);

	if (o->pid && kill(o->pid, 0) && errno == ESRCH) {
		error("cannot attach to pid %d: no such process", (int)o->pid);
		return EXIT_FAIL;
	}
	if (o->segments != RECORD_ONE_TRACE) {
		x->opened = 1; /* no one output: files in o->dir */
		x->out = NULL;
	} else if ((err = record_output__check(x->out))) {
		if (err == -ELOOP)
			error("cannot write '%s': it is a symbolic link, which d9prof does not "
			      "follow (give the path it points to)",
			      x->out);
		else if (err == -EEXIST)
			error("'%s' exists and is not a d9prof trace: remove it or choose "
			      "another -o",
			      x->out);
		else
			error("cannot write '%s': %s", x->out, strerror(-err));
		return EXIT_FAIL;
	}
	/* The trace starts in memory: the output is opened (and a previous
	 * one renamed) only once the recording is sure to happen. */
	x->fd = o->segments != RECORD_ONE_TRACE
			? -1
			: memfd_create("d9prof-trace", MFD_CLOEXEC);
	if (x->fd < 0 && o->segments == RECORD_ONE_TRACE) {
		x->fd = open_out(x);
		if (x->fd < 0)
			return EXIT_FAIL;
		x->opened = 1;
	}
	o->out_fd = x->fd;
	if (optind < argc) {
		/* the layout's SERVICE: the command's name (its comm is still
		 * d9prof's until it execs) */
		if (!o->service && o->segments != RECORD_ONE_TRACE)
			o->service = strrchr(argv[optind], '/')
					     ? strrchr(argv[optind], '/') + 1
					     : argv[optind];
		err = record_cmd__start(&x->cmd, argv + optind, !o->pid,
					x->upload && !x->keep_aws_env ? aws_secrets
								      : NULL);
		if (err) {
			error("cannot start '%s': %s", argv[optind], strerror(-err));
			close(x->fd);
			return EXIT_FAIL;
		}
		if (o->pid) {
			o->until_pid = x->cmd.pid;
		} else {
			size_t n = 0;
			int i;

			for (i = optind; i < argc && n + 2 < sizeof(x->cmdline); i++)
				n += (size_t)snprintf(x->cmdline + n,
						      sizeof(x->cmdline) - n, "%s%s",
						      i > optind ? " " : "", argv[i]);
			o->pid = x->cmd.pid;
			o->fresh_target = 1;
			o->exe = argv[optind];
			o->cmdline = x->cmdline;
		}
	}
	x->target = o->pid;
	x->duration = o->duration;
	x->forever = o->duration <= 0 && x->cmd.pid < 0;
	if (isatty(STDERR_FILENO)) {
		const char *term = getenv("TERM");

		if (!term || strcmp(term, "dumb"))
			x->status = 1;
	}
	return 0;
}

/* After record__run() returned @err: the output kept or put back, the
 * command reaped, the summary. The exit status. */
static int finish(const struct record_opts *o, struct rec_ctx *x,
		  const struct record_stats *st, int err)
{
	int status;

	erase_line(x);
	flush_held(x, !x->cmd.exec_failed);
	status = record_cmd__reap(&x->cmd);
	if (x->fd >= 0 && close(x->fd) && x->opened && !err)
		err = -errno;
	if (err) {
		/* (when on_attached failed, it said why) */
		if (!x->said && err == -ESRCH)
			error("cannot attach to pid %d: no such process", (int)o->pid);
		else if (!x->said)
			error("cannot record pid %d: %s", (int)o->pid,
			      st->why[0] ? st->why : strerror(-err));
		if (x->out && x->opened && !st->samples && !st->events) {
			/* nothing worth a file: leave things as they were */
			unlink(x->out);
			if (x->rotated) {
				char old[4096];

				snprintf(old, sizeof(old), "%s.old", x->out);
				if (rename(old, x->out))
					warning("cannot put '%s' back as '%s': %s", old,
						x->out, strerror(errno));
			}
		}
		child_exit(x, status);
		return EXIT_FAIL;
	}
	record_summary(st, o->pid, x->out, o->segments == RECORD_ONE_TRACE,
		       o->fresh_target);
	if (o->segments != RECORD_ONE_TRACE)
		record_summary_segments(o, st);
	return child_exit(x, status);
}

static void live_polling(void *ctx, uint32_t tid, uint64_t task, uint64_t begin,
			 uint64_t now)
{
	live__polling(ctx, tid, task, begin, now);
}

/* record__run() with the live view `d9prof top` reads beside it (a socket
 * of the target's pid, fed only while a viewer is connected); without it,
 * after a warning that says why, where the socket cannot be made. The
 * exit status. */
static int serve_live(struct record_opts *o, struct rec_ctx *x, struct record_stats *st)
{
	struct live *l = NULL;
	struct live_server *srv = NULL;
	struct record_detect *det = NULL;
	char why[256];
	int ret;

	if ((ret = live__new(1e9 / o->freq, &l)) ||
	    (ret = live_server__start(o->pid, l, &srv))) {
		live_sock__why(o->pid, ret, why, sizeof(why));
		warning("'d9prof top' cannot watch this recording: %s", why);
	} else {
		o->tap = live__tap(l);
		o->polling = live_polling;
		_Static_assert(LIVE_WANT_NAMES == RECORD_WANT_NAMES &&
				       LIVE_WANT_SUMS == RECORD_WANT_SUMS,
			       "the live state wants in the recorder's words");
		o->wants = live__wants;
		o->polling_ctx = l;
		x->live = l;
	}
	if (x->status || x->live)
		o->progress = progress;
	ret = record_detect__start(o, &det);
	if (ret)
		*st = (struct record_stats){
			.why = "no memory for the detectors of --trigger"};
	ret = finish(o, x, st, ret ? ret : record__run(o, st));
	x->live = NULL;
	live_server__stop(srv);
	live__free(l);
	record_detect__free(det);
	return ret;
}

int cmd_record(int argc, char **argv)
{
	struct rec_ctx x = {.cmd = {.pid = -1, .go_fd = -1, .err_fd = -1}, .fd = -1};
	struct record_opts o = {.freq = 0, /* check_args: 999 */
				.stop = &stop,
				.log = log_msg,
				.ctx = &x,
				.on_attached = on_attached,
				.dump_now = &dump_now,
				.on_dump = on_dump,
				.max_size = 64ULL << 20,
				.hook_timeout = 600};
	struct record_stats st;
	int ret;

	record_boost_if_waiting();
	ret = parse_args(argc, argv, &o, &x);
	if (ret >= 0)
		return ret;
	if (x.upload) {
		ret = record_upload__start(x.upload, x.endpoint, x.upload_tables, &x.up);
		if (ret)
			return ret;
		o.on_sealed = on_sealed;
	}
	if (setup(&o, &x, argc, argv)) {
		record_upload__finish(x.up);
		return EXIT_FAIL;
	}
	ret = serve_live(&o, &x, &st);
	record_upload__finish(x.up);
	return ret;
}
