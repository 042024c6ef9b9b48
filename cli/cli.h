/* SPDX-License-Identifier: MIT */
/*
 * cli.h - what the subcommands share: the exit codes, then a section per
 * file that owns it: messages and option values (msg.c); what an
 * analysis command reads and builds on it (session.c, inputs_s3.c); the
 * options, filters and outputs of the views (view.c); record's upload
 * and summary (record_upload.c, record_summary.c); the live view's socket
 * (live_sock.c).
 *
 * Messages follow one shape: "d9prof: <what failed>: <why>", lowercase, no
 * full stop, with what to do when there is something to do. Primary output
 * goes to stdout; messages to stderr.
 */
#ifndef D9_CLI_H
#define D9_CLI_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/window.h"
#include "trace/trace.h"

struct delays;
struct delays_keep;
struct live;
struct live_snap;
struct offcpu;
struct spans;
struct spans_keep;

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
};

#define DEFAULT_TRACE "d9prof.data"

/* ---- messages and option values (msg.c) ---------------------------------- */

/* One message line on stderr: "d9prof: " @prefix, then @fmt's text shown
 * through text_put(); error(), warning() ("warning: ") and info() are it. */
void cli_msg(const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define error(...)   cli_msg("", __VA_ARGS__)
#define warning(...) cli_msg("warning: ", __VA_ARGS__)
#define info(...)    cli_msg("", __VA_ARGS__)
/* A usage error: the message, then "try 'd9prof CMD --help'"; returns
 * EXIT_USAGE for `return usage_error(...)`. */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Strict number parsing: the whole string must be the number. 0 or -EINVAL. */
int parse_u64(const char *s, uint64_t *out);
int parse_seconds(const char *s, double *out);
/* A size: bytes, or a number and K, M, G or T (powers of 1024; KiB, MB
 * spelled so are the same). 0 or -EINVAL. */
int parse_size(const char *s, uint64_t *out);
#define SIZE_WANT "want bytes or a number and a unit, e.g. 500M or 2G"
/* What a duration option wants, for usage errors (the parser is
 * duration_parse() in analysis/). */
#define DURATION_WANT "want a number and a unit: ns, us, ms or s (e.g. 500us, 1ms, 2.5s)"

/* The index in @words (@n of them; NULL ones match nothing) of the word
 * @s is, e.g. an enum's value named by a table indexed by it; -EINVAL if
 * none. PARSE_WORD(s, words) for an array. */
int parse_word(const char *s, const char *const *words, size_t n);
#define PARSE_WORD(s, words) parse_word((s), (words), sizeof(words) / sizeof((words)[0]))
/* An option whose value is one of @words (NULL ones skipped), for command
 * @cmd ("tasks "): its index in *@out and 0, or after "bad WHAT 'ARG':
 * want a, b or c" (usage_error()) EXIT_USAGE. WORD_OPTION() for an
 * array. */
int word_option(const char *cmd, const char *what, const char *arg,
		const char *const *words, size_t n, int *out);
#define WORD_OPTION(cmd, what, arg, words, out)                                          \
	word_option((cmd), (what), (arg), (words), sizeof(words) / sizeof((words)[0]),   \
		    (out))
/* The "s" of a message's noun after the count @n: "" for 1. */
static inline const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* ---- what an analysis command reads: -i, --from, --to (session.c) -------- */

/* -i given more often is a usage error: give
 * their directory */
#define INPUTS_MAX 256
/* Option codes shared by the analysis commands (view_option()); a
 * command's own start at 256. */
enum {
	OPT_FROM = 0x400,
	OPT_TO,
	OPT_FRAME,
	OPT_BY,
	OPT_REVERSE,
	OPT_TITLE,
	OPT_MIN_POLL,
	OPT_NO_INLINE,
	OPT_MIN,
	OPT_WIDE,
	OPT_FULL_STACKS,
	OPT_STORE_SERVICE,
	OPT_STORE_HOST,
	OPT_PID,
};

struct inputs {
	const char *path[INPUTS_MAX]; /* -i, in order (files or
				       * directories); none: DEFAULT_TRACE */
	size_t n;
	struct trace_window win;    /* --from/--to (analysis/window.c) */
	int quiet;		    /* the command lists the segments
				     * itself: no note of gaps and copies */
	int raw_leaf;		    /* --frame leaf (OFFCPU_RAW_LEAF) */
	const char *service, *host; /* -i s3://: --service, --host */
	struct catalog *listed;	    /* -i s3://: the window already listed
				     * (all its objects' keys), or NULL */
	uint32_t pid;		    /* --pid (trace_read_opts.pid) */
	int last_process;	    /* trace_read_opts.last */
	const char **all;	    /* open_trace(): what it read, fetched */
	char **fetched;		    /* ... files included; the command's */
	size_t nfetched;	    /* whole life */
	unsigned int jflags;	    /* --full-stacks: JOIN_WHOLE_STACKS */
	char name[256];		    /* inputs_name() */
	char args[768];		    /* inputs_args() */
};

#define FRAME_HELP                                                                       \
	"      --frame app|leaf  name a blocking call or a poll by the application's\n"  \
	"                        frame over the call it made (default: app, e.g.\n"      \
	"                        'read <- slow_read'; libc, the loader, the vDSO,\n"     \
	"                        Rust's std/core/alloc, tokio and the shim are\n"        \
	"                        skipped), or by the raw leaf (leaf)\n"
/* --full-stacks (VIEW_STACKS): session_open() and join_flags() use it */
#define STACKS_HELP                                                                       \
	"      --full-stacks     keep the runtime's frames below a task's code (by\n"     \
	"                        default a poll's stacks start at \"[runtime]\", where\n" \
	"                        the runtime called the task)\n"
/* Join flags @flags with what @in asks for. */
static inline unsigned int join_flags(const struct inputs *in, unsigned int flags)
{
	return flags | in->jflags;
}

#define TIME_WANT                                                                        \
	"want seconds from the start (12.5, 500ms), a time of day HH:MM:SS[.frac], "     \
	"a UTC date and time YYYY-MM-DDTHH:MM[:SS] or a duration before now (-15m)"
/* Take option @c (view_option() hands them over) with @arg for command
 * @cmd: -i, --pid, --service, --host, --from, --to, --frame or
 * --full-stacks into @in. 0, or EXIT_USAGE after saying why (a bad TIME
 * or pid, --from not before --to, -i more than INPUTS_MAX times). */
int inputs_option(struct inputs *in, const char *cmd, int c, const char *arg);

/* The inputs for a message: "d9prof.data", "a.d9 and 2 more". */
const char *inputs_name(struct inputs *in);
/* The options that name them, to repeat in a suggested command, in this
 * order: "-i a.d9 -i b.d9 --pid 42 --service S --host H --from 12 --to
 * 20", a time before now ("-5m") as the UTC time it named. */
const char *inputs_args(struct inputs *in);
#define INPUT_USAGE "[-i FILE|DIR ...] [--from TIME] [--to TIME]"
#define INPUT_FILE_HELP                                                                  \
	"  -i, --input FILE|DIR  trace (default ./" DEFAULT_TRACE "); again for more\n"  \
	"                        files, read as one; a directory: its *.d9 and\n"        \
	"                        *.data files; s3://BUCKET[/PREFIX]: a host's\n"         \
	"                        segments in the window, fetched\n"                      \
	"      --pid PID         of inputs that recorded several processes (never\n"     \
	"                        read as one), the one of PID\n"
#define INPUT_HELP                                                                       \
	INPUT_FILE_HELP                                                                  \
	"      --from TIME       only what was recorded from TIME on\n"                  \
	"      --to TIME         ... and up to TIME; TIME is seconds from the start\n"   \
	"                        (12.5, 500ms), a time of day HH:MM:SS[.frac]\n"         \
	"                        (local, on the day the recording started), a\n"         \
	"                        UTC date and time YYYY-MM-DDTHH:MM[:SS], or a\n"        \
	"                        duration before now (-15m, -2h, -1d)\n"                 \
	"      --service S, --host H  with -i s3://BUCKET[/PREFIX]: the host whose\n"    \
	"                        segments to fetch (man d9prof, FLEET)\n"

/* Read @in for analysis with trace__read_paths(@flags) and its window,
 * saying what is wrong on failure (a missing, empty or special file, a
 * window outside the trace), warning for each file cut short, and noting
 * once copies skipped and gaps between segments (unless @in->quiet). NULL
 * on failure. */
struct trace *open_trace(struct inputs *in, unsigned int flags);
/* Free @t (NULL: nothing) and what open_trace() kept in @in for it. */
void close_trace(struct inputs *in, struct trace *t);
/* -i s3://... (inputs_s3.c): the local paths of the files @url holds for
 * @in's window, service and host, fetched into the cache; 0, or -1 after
 * saying why. store_fetch_free() frees *@paths. */
int inputs_fetch(struct inputs *in, const char *url, char ***paths, size_t *npaths);
/* The catalog of @url for @in's window, service and host, finished,
 * with the keys of at most @keys_max of its objects, in *@c (at least one
 * object); 0, or -1 after saying why (then nothing to free). */
struct catalog;
int inputs_catalog(struct inputs *in, const char *url, size_t keys_max,
		   struct catalog **c);
/* A trace read for analysis and what the commands build on it. */
struct session {
	struct inputs *in; /* what session_close() closes @t with */
	struct trace *t;
	struct join *j;
	struct offcpu *oc;	  /* with SESSION_OFFCPU */
	struct delays *d;	  /* after session_delays() */
	struct spans *sp;	  /* with SESSION_SPANS */
	struct delays_feed *feed; /* session_open_fed()'s */
};
#define SESSION_OFFCPU                                                                   \
	0x1u /* the off-CPU join (implies JOIN_POLL_LIST                                 \
	      * without a keep) */
#define SESSION_SPANS                                                                    \
	0x4u /* the application's spans (with the off-CPU                                \
	      * join when SESSION_OFFCPU) */
#define SESSION_SPAN_RECORDS                                                             \
	0x8u /* their records read, the spans left for the                               \
	      * view to build */
/* Read @in (open_trace()), join it with @jflags (times shown counting
 * from the start of the whole trace when a window was read) and build
 * what @want asks. 0, or -1 after saying what failed (everything freed). */
int session_open(struct session *s, struct inputs *in, unsigned int rflags,
		 unsigned int jflags, unsigned int want);
/* session_open() listing only the polls @keep says (join__new_keep()):
 * the join streams (SESSION_OFFCPU adds the polls off-CPU time began in). */
int session_open_keep(struct session *s, struct inputs *in, unsigned int rflags,
		      unsigned int jflags, unsigned int want,
		      const struct join_keep *keep);
/* session_open_keep() replaying the delays as @dkeep asks during the
 * join's walk (a delays_feed): session_delays() with the same keep then
 * needs no walk of its own (where the feed could not know, it walks).
 * With SESSION_SPANS, the spans kept whole are @skeep's (NULL: all). */
int session_open_fed(struct session *s, struct inputs *in, unsigned int rflags,
		     unsigned int jflags, unsigned int want, const struct join_keep *keep,
		     const struct delays_keep *dkeep, const struct spans_keep *skeep);
/* The wake-to-poll delays, as @keep asks (delays__new()), once the tasks
 * the view shows are chosen. 0, or -1 after saying what failed (the
 * session stays open). */
int session_delays(struct session *s, const struct delays_keep *keep);
void session_close(struct session *s);
/* Report a failed analysis of @t (read from @in): what trace__error()
 * says if a walk of the file found it corrupt, else @err's text. */
void analysis_failed(struct inputs *in, const struct trace *t, int err);

/* ---- the views' options, filters and outputs (view.c) -------------------- */

/* What they set. A command initialises it with its defaults (e.g. .format
 * = FLAME_SVG, .limit = DEFAULT_LIMIT, .text_json = 1), lists the ones it
 * takes in its option table (the VIEW_OPT_* entries below) and reads what
 * it uses after parsing. */
struct view_args {
	struct task_sel sel;	  /* -t, --task ID|NAME */
	enum group_by by;	  /* --by task|name|thread (|span where the
				   * command sets .by_span) */
	int by_span;		  /* set by the command: --by span too */
	int reverse;		  /* --reverse */
	const char *title;	  /* --title */
	uint64_t min_poll_ns;	  /* --min-poll DUR */
	uint64_t min_ns;	  /* --min DUR */
	size_t limit;		  /* -n, --limit N (0: all) */
	int wide;		  /* --wide */
	int text_json;		  /* set by the command: -f is text|json */
	int json;		  /* -f json (with .text_json) */
	enum flame_format format; /* -f svg|folded (without .text_json) */
	const char *out;	  /* -o, --output FILE */
	unsigned int rflags;	  /* --no-inline: TRACE_READ_NO_INLINE */
};
/* The options the views share, each taken by a view that names it in
 * struct view_cmd.shared (view_parse() builds getopt's tables from them):
 * -i, --input FILE|DIR; --from, --to TIME; --frame app|leaf; --full-stacks;
 * -t, --task; --by; --reverse; --title; --min-poll DUR; --min DUR;
 * -n, --limit N; --wide; -f, --format; -o, --output; --no-inline. */
#define VIEW_FILES     0x0001u
#define VIEW_WINDOW    0x0002u
#define VIEW_FRAME     0x0004u
#define VIEW_STACKS    0x0008u
#define VIEW_TASK      0x0010u
#define VIEW_BY	       0x0020u
#define VIEW_REVERSE   0x0040u
#define VIEW_TITLE     0x0080u
#define VIEW_MIN_POLL  0x0100u
#define VIEW_MIN       0x0200u
#define VIEW_LIMIT     0x0400u
#define VIEW_WIDE      0x0800u
#define VIEW_FORMAT    0x1000u
#define VIEW_OUTPUT    0x2000u
#define VIEW_NO_INLINE 0x4000u
#define VIEW_INPUTS    (VIEW_FILES | VIEW_WINDOW)
/* the options of the flamegraphs (flame, offcpu) */
#define VIEW_FLAMES                                                                      \
	(VIEW_INPUTS | VIEW_TASK | VIEW_BY | VIEW_REVERSE | VIEW_TITLE | VIEW_MIN_POLL | \
	 VIEW_FORMAT | VIEW_OUTPUT | VIEW_NO_INLINE | VIEW_STACKS)
/* The flamegraph options of @va into @o, a struct flame_opts or
 * offcpu_opts (the same field names). */
#define VIEW_FLAME_OPTS(o, va)                                                           \
	((o).by = (va).by, (o).reverse = (va).reverse, (o).title = (va).title,           \
	 (o).min_poll_ns = (va).min_poll_ns, (o).format = (va).format)
/* Take option @c with @arg for command @cmd ("flame ", for usage_error()):
 * one of the above, or -i, --from, --to or --frame into @in (a bad TIME,
 * --from not before --to, -i more than INPUTS_MAX times). 0 if taken,
 * else EXIT_USAGE after saying why: a bad value, or "bad option" for
 * anything else. */
int view_option(struct view_args *v, struct inputs *in, const char *cmd, int c,
		const char *arg);

/* An analysis command's command line. Its own options (and its own -f or
 * --by where they mean something else) go to @own first, which returns 0
 * when it took one, EXIT_USAGE after usage_error(), or VIEW_NOT_MINE for
 * view_option() to take it. */
#define VIEW_NOT_MINE (-1)
struct view_cmd {
	const char *name;	       /* "flame ", as usage_error() wants it */
	unsigned int shared;	       /* VIEW_* options it takes */
	const char *sopts;	       /* its own short options ("s:"), or NULL */
	const struct option *own_opts; /* its own long ones ({0}-ended),
					* or NULL */
	void (*help)(FILE *f);
	int (*own)(void *ctx, int c, const char *arg); /* NULL: none */
};
/* The end of a view printed to stdout: @err from the analysis of @t
 * said (analysis_failed()), stdout closed; the exit code. */
int view_done(struct inputs *in, const struct trace *t, int err);

/* Parse @argv for @cmd into @v and @in (and @ctx through cmd->own): -h
 * prints the help to stdout, an argument that is no option is a usage
 * error. VIEW_RUN to go on, else the exit code to return (EXIT_OK after
 * the help, EXIT_USAGE after saying what is wrong). */
#define VIEW_RUN (-1)
int view_parse(const struct view_cmd *cmd, void *ctx, struct view_args *v,
	       struct inputs *in, int argc, char **argv);

/* --help line of --no-inline (TRACE_READ_NO_INLINE), for every command
 * that prints stacks. */
#define NO_INLINE_HELP                                                                   \
	"      --no-inline       no frames for inlined functions (by default\n"          \
	"                        code inlined into a function shows as\n"                \
	"                        \"name [inlined]\" frames above it)\n"
/* --task ID or NAME: a number > 0 is an id, anything else a name. 0 or
 * -EINVAL (empty, or 0). */
int parse_task_sel(const char *s, struct task_sel *sel);
#define TASK_WANT "want a task id > 0 or a task name"
/* --by task|name|thread: enum group_by, or -EINVAL. */
int parse_group_by(const char *s);
/* --task tokio:ID, in every view's --task */
#define TASK_TOKIO_HELP                                                                  \
	"                        (tokio:ID: Tokio's task ID seen from outside,\n"        \
	"                        where a task the crate marks has that ID too)\n"
#define TASK_HELP                                                                        \
	"  -t, --task ID|NAME    only task ID, or every task named NAME\n" TASK_TOKIO_HELP
#define BY_HELP                                                                          \
	"      --by KEY          task, name (all tasks of one name together) or\n"       \
	"                        thread\n"

/* The task filter, once for every view of @j (join__select()): 0 if
 * @sel keeps a task of the trace @j joined; else say why on stderr (a
 * trace of a target without the shim has no task ids at all) and return
 * -1. */
int check_task(struct join *j, const struct task_sel *sel, struct inputs *in);
/* The span filter (--span NAME, --min DUR; NULL and 0: all), once for
 * every view of @sp (spans__select()); with @events, only whether @sp has
 * application events. 0, or -1 after saying on stderr that the trace has
 * none, or none that matches. */
struct spans;
int check_spans(struct spans *sp, const char *name, uint64_t min_ns, int events,
		struct inputs *in);
/* 0 if the trace has tasks; else say that the target had no shim, -1. */
int check_shim(const struct join *j, struct inputs *in);
/* Folded output stays pure: "d9prof: lost: ..." on stderr for what
 * @format = FLAME_FOLDED leaves out of the data in @affects (enum
 * loss_data); the SVG says it in its subtitle. */
void folded_losses(const struct trace *t, enum flame_format format, unsigned int affects);
/* On stderr where a lean trace (record --lean) cannot answer a
 * --min-poll of @min_poll_ns: it keeps only the polls of its threshold
 * or longer */
void lean_min_poll(const struct trace *t, uint64_t min_poll_ns);

/* With no -o and stdout a terminal, an SVG goes to the file @file
 * instead, and says so: *@outp = @file. */
void terminal_svg(const char **outp, const char *file);
/* The width of the terminal @f writes to, in characters; 0 if it is not a
 * terminal (a file or a pipe: nothing is cut for it). */
size_t terminal_width(FILE *f);
/* Open @path for writing ("-" or NULL = stdout). NULL after an error. */
FILE *open_output(const char *path);
/* Close an output from open_output, reporting write errors. 0 or -1. */
int close_output(FILE *f, const char *path);

/* record --upload (record_upload.c): 0, or after saying why EXIT_USAGE
 * or EXIT_FAIL. The callbacks queue a file; finish waits a while for the
 * queue, says what was uploaded and frees. */
struct record_upload;
struct record_sealed;
struct record_dump;
int record_upload__start(const char *url, const char *endpoint, int tables,
			 struct record_upload **out);
void record_upload__sealed(struct record_upload *ru, const struct record_sealed *s);
void record_upload__dump(struct record_upload *ru, const struct record_dump *d);
void record_upload__finish(struct record_upload *ru);
/* record's summary on stderr once the recording of @pid ended
 * (record_summary.c): what it recorded, how stacks were unwound, every
 * loss (with @one_file, those the trace @out tells too) or "nothing lost
 * or dropped", what the recorder cost, how the target ended unless it was
 * record's own command (@own_cmd: child_exit() says that) and the file
 * written (@out; NULL: none). The segments' part, for --flight and
 * --rotate, follows it. */
struct record_stats;
struct record_opts;
void record_summary(const struct record_stats *st, pid_t pid, const char *out,
		    int one_file, int own_cmd);
void record_summary_segments(const struct record_opts *o, const struct record_stats *st);

/* ---- the live view a recording serves (live_sock.c) --------------------- */

/* A recording's live state for `d9prof top` beside it: a socket of target
 * @pid (/run/d9prof/PID.sock as root, else $XDG_RUNTIME_DIR/d9prof/ or
 * /tmp/d9prof-UID/, in a directory of this user alone), one viewer at a
 * time (another is refused and told so), this user or root; a viewer
 * that does not finish its request or take its answer within 1.5 s is
 * dropped, and the stop never waits for one. @l is fed only while one is
 * connected. 0, -EADDRINUSE (another recording of @pid serves one),
 * -EPERM (no directory is ours alone) or -errno. */
struct live_server;
int live_server__start(pid_t pid, struct live *l, struct live_server **out);
void live_server__stop(struct live_server *s);
/* The viewer: the socket of @pid's recording in *@fd (0, -ENOENT: none,
 * -ECONNREFUSED: one left by a recorder that died, -EPERM: not this
 * user's or root's, -ETIMEDOUT: the recorder accepts no one), then a
 * snapshot grouped @by at each call, with the hottest stacks of task
 * @stacks_of (0: none) (0, or -errno: the recording is gone, -EBADMSG,
 * -ETIMEDOUT: no answer within a few seconds, -EBUSY: it serves another
 * viewer; -EPIPE at once once the viewer's signal handler shut its socket
 * down). */
int live_client__connect(pid_t pid, int *fd);
int live_client__snapshot(int fd, enum group_by by, uint64_t stacks_of,
			  struct live_snap *out);
/* Why live_server__start() or live_client__connect() for @pid failed with
 * @err, as a phrase into @buf (cut to fit): which directory is not this
 * user's alone and why, "another recording of pid N serves its live
 * view", or the socket's path and strerror(-@err). It looks at the
 * directories again, as the failed call did; it never fails. */
void live_sock__why(pid_t pid, int err, char *buf, size_t len);

/* The recording's losses so far (@st) into the live view @l's snapshots
 * (NULL: none), as top beside it and top's own recording show them. */
struct record_stats;
void live_set_lost(struct live *l, const struct record_stats *st);

/* ---- the flight recorder's detector triggers (record_detect.c) ----------- */

/* Where @o has triggers of a detector's kind (lost-waker, self-wakes,
 * never-yielded, task-leak): the detectors' own live state, fed by @o's
 * tap beside the one @o has (put in front of it), and @o->detect set to
 * ask it. *@out NULL where none is wanted. 0 or -ENOMEM. */
struct record_opts;
struct record_detect;
int record_detect__start(struct record_opts *o, struct record_detect **out);
void record_detect__free(struct record_detect *d);

/* ---- the subcommands (cmd_*.c) ------------------------------------------- */

int cmd_record(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_tasks(int argc, char **argv);
int cmd_offcpu(int argc, char **argv);
int cmd_polls(int argc, char **argv);
int cmd_delays(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_fleet(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_spans(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_export(int argc, char **argv);

#endif /* D9_CLI_H */
