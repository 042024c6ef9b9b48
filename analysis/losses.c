/* SPDX-License-Identifier: MIT */
/*
 * losses.c - what a trace says was lost, per kind, and which data each
 * loss leaves short: the one list that `report`, every table's "# lost:"
 * footer, the flamegraphs' subtitles and the JSON "losses" objects print,
 * so that no view silently includes or excludes lost time.
 *
 * The recorder writes two trace counters (lost_samples, shim_drops) and
 * meta keys for the rest (record/record.c); a key is absent when nothing
 * of its kind was lost. One kind is read from the samples themselves:
 * CPU stacks cut short, whose outermost user frame is no thread's root
 * (a frame-pointer chain stopped in code built without frame pointers).
 * That takes the names of the frames, which the recorder has only once a
 * segment is sealed, and is then true of any trace, old ones too, and of
 * the window read.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/losses.h"
#include "lib/json.h"

enum loss_source {
	SRC_LOST_SAMPLES, /* counters.lost_samples */
	SRC_SHIM_DROPS,	  /* counters.shim_drops */
	SRC_META,	  /* the key's values (numbers), summed: one
			   * per segment of a trace */
	SRC_META_COUNT,	  /* how many times the key is there */
	SRC_META_FIRST,	  /* the first segment's value (the one whose
			   * start a read uses) */
	SRC_META_UNDONE,  /* "done/all": all - done, summed */
	SRC_CUT_STACKS,	  /* samples whose stack analysis_stack_cut() */
	SRC_SKIPPED,	  /* trace.nskipped: files left out */
};

static const struct {
	const char *key, *what;
	enum loss_source src;
	const char *meta;
	unsigned int affects;
	const char *advice; /* struct loss.advice */
} kinds[LOSS_KINDS] = {
	{"samples", "samples (perf ring full)", SRC_LOST_SAMPLES, NULL, LOSS_CPU,
	 "d9prof record -F 499  # fewer samples"},
	{"ctimer_samples", "ctimer samples (shim sample area full)", SRC_META,
	 "ctimer samples dropped", LOSS_CPU, "d9prof record -F 499  # fewer samples"},
	{"ctimer_refused",
	 "ctimer samples refused (not real, or faster than the sampler)", SRC_META,
	 TRACE_META_CTIMER_SAMPLES_REFUSED, LOSS_CPU, NULL},
	{"child_samples", "samples of forked children (left out)", SRC_META,
	 "child samples left out", LOSS_CPU, "d9prof record --children  # keeps them"},
	{"cpu_stacks_cut",
	 "CPU stacks cut short (no thread root: record --call-graph dwarf)",
	 SRC_CUT_STACKS, NULL, LOSS_CPU, "d9prof record --call-graph dwarf"},
	{"tokio_untagged",
	 "samples' task tags (read in their thread; counted outside tasks)", SRC_META,
	 TRACE_META_TOKIO_UNTAGGED, LOSS_CPU, "d9prof record -F 499  # fewer samples"},
	{"switch_records", "switch records (ring full)", SRC_META, TRACE_META_OFFCPU_LOST,
	 LOSS_OFFCPU, "d9prof record --offcpu-min 1ms  # fewer switches kept"},
	{"unpaired_switches", "switch-outs whose switch-in was lost", SRC_META,
	 TRACE_META_OFFCPU_UNPAIRED, LOSS_OFFCPU,
	 "d9prof record --offcpu-min 1ms  # fewer switches kept"},
	{"unreported_switch_ins", "switch-ins the kernel did not report", SRC_META,
	 TRACE_META_OFFCPU_UNREPORTED, LOSS_OFFCPU, NULL},
	{"offcpu_stacks_cut", "off-CPU stacks cut short (unwind failed)", SRC_META_UNDONE,
	 "offcpu stacks complete", LOSS_OFFCPU,
	 "d9prof record --offcpu-stack 16384  # a bigger copy"},
	{"wakeups", "wakeups (ring full)", SRC_META, TRACE_META_WAKEUPS_LOST,
	 LOSS_WAKEUPS, NULL},
	{"shim_records", "shim records (shim ring full)", SRC_SHIM_DROPS, NULL,
	 LOSS_POLLS, NULL},
	{"threads_without_ring", "threads' runtime events (no ring slot in the shim)",
	 SRC_META, "threads without a ring", LOSS_POLLS, NULL},
	{"reattached", "lease lapses (runtime events of the gap)", SRC_META_COUNT,
	 "shim_reattached", LOSS_POLLS, NULL},
	{"shim_garbage", "shim records that could not be real (dropped)", SRC_META,
	 "shim garbage", LOSS_POLLS, NULL},
	{"tokio_polls_unwritten",
	 "polls and wakes the poll probes did not write (nested in another, "
	 "not Tokio's layout, its task unreadable, or ring full)",
	 SRC_META, TRACE_META_TOKIO_POLLS_UNWRITTEN, LOSS_POLLS, NULL},
	{"state_refused",
	 "threads', tasks' and spans' open state (too much open to carry "
	 "into the next segment's start)",
	 SRC_META, TRACE_META_OPEN_STATE_REFUSED, LOSS_POLLS, NULL},
	{"spans_left_out",
	 "open spans the first segment read starts without (too many to carry: "
	 "--max-size bounds them)",
	 SRC_META_FIRST, TRACE_META_SPANS_LEFT_OUT, LOSS_POLLS,
	 "d9prof record --flight=... --max-size 64M  # room for them"},
	{"unreadable_files", "files left out (corrupt, or cut before their first chunk)",
	 SRC_SKIPPED, NULL, LOSS_CPU | LOSS_OFFCPU | LOSS_POLLS | LOSS_WAKEUPS, NULL},
	{"segment_gaps", "gaps between segments (nothing recorded)", SRC_META_COUNT,
	 TRACE_META_SEGMENT_GAP, LOSS_CPU | LOSS_OFFCPU | LOSS_POLLS | LOSS_WAKEUPS,
	 NULL},
};

static uint64_t meta_u64(const char *v)
{
	char *end = NULL;
	unsigned long long n;

	if (!v || !*v)
		return 0;
	n = strtoull(v, &end, 10);
	return end && !*end ? (uint64_t)n : 0;
}

/* The sum of @f over the values of @key (@f = NULL: count them). */
static uint64_t meta_sum(const struct trace *t, const char *key,
			 uint64_t (*f)(const char *))
{
	uint64_t n = 0;

	for (size_t i = 0; i < t->nmeta; i++)
		if (t->meta[i].key && !strcmp(t->meta[i].key, key))
			n += f ? f(t->meta[i].value) : 1;
	return n;
}

/* "done/all" -> all - done; 0 when malformed */
static uint64_t meta_undone(const char *v)
{
	unsigned long long done, all;
	char *end = NULL;

	if (!v)
		return 0;
	done = strtoull(v, &end, 10);
	if (!end || *end != '/')
		return 0;
	all = strtoull(end + 1, &end, 10);
	return end && !*end && all > done ? (uint64_t)(all - done) : 0;
}

/* ---- CPU stacks cut short --------------------------------------------- */

/* Where a thread's user stack begins: the C runtime's entry and main
 * (glibc itself has no frame pointers on Debian, so a chain through it
 * ends at main or __libc_start_call_main), a new thread's entry in libc,
 * musl, Rust and Go. */
static const char *const roots[] = {
	"_start",
	"__start",
	"_dl_start",
	"_dl_start_user",
	"__libc_start_main",
	"__libc_start_call_main",
	"__libc_start_main_impl",
	"main",
	"start_thread",
	"clone",
	"clone3",
	"__clone",
	"__clone3",
	"__clone_internal",
	"thread_start",
	"start",
	"__thread_start",
	"start_c",
	"runtime.goexit",
	"runtime.goexit.abi0",
	"runtime.rt0_go",
	"runtime.rt0_go.abi0",
	"runtime.mstart",
	"runtime.mstart.abi0",
};

/* @sym without glibc's internal-alias prefix and without a Rust legacy
 * hash ("::h0123456789abcdef"), then its last "::" component. */
static bool is_root(const char *sym)
{
	const char *last = sym, *p;
	size_t n;

	if (!strncmp(sym, "__GI_", 5))
		sym += 5, last = sym;
	for (p = sym; (p = strstr(p, "::")); p += 2)
		last = p + 2;
	n = strlen(last);
	/* a legacy Rust hash: the component is "h" and 16 hex digits */
	if (last != sym && n == 17 && last[0] == 'h' &&
	    strspn(last + 1, "0123456789abcdef") == 16) {
		const char *end = last - 2;

		for (p = end; p > sym && !(p[-1] == ':' && p - 1 > sym && p[-2] == ':');
		     p--)
			;
		last = p;
		n = (size_t)(end - p);
	}
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (strlen(roots[i]) == n && !strncmp(last, roots[i], n))
			return true;
	return false;
}

int analysis_stack_cut(const struct trace *t, uint32_t stack)
{
	const struct trace_frame *f = NULL;

	if (stack >= t->nstacks)
		return -1;
	for (uint32_t i = t->stack_off[stack]; i < t->stack_off[stack + 1]; i++) {
		uint32_t id = t->stack_frames[i];

		if (id < t->nframes && !t->frames[id].kernel)
			f = &t->frames[id];
	}
	if (!f)
		return -1;
	return !(f->sym && is_root(f->sym));
}

/* The count for one trace as read, kept: views ask for their losses two
 * or three times, and it takes a walk of every sample. The read is known
 * by its stack table (allocated per trace) and window. */
static struct {
	const struct trace *t;
	const uint32_t *stack_off;
	size_t nsamples, nstacks;
	uint64_t from, to;
	uint64_t cut;
} cut_memo;

struct cut_walk {
	const struct trace *t;
	int8_t *state; /* per stack: 0 not yet seen, 1 cut, 2 not */
	uint64_t cut;
};

static int count_cut(void *ctx, const struct trace_sample *s, size_t n)
{
	struct cut_walk *w = ctx;

	for (size_t i = 0; i < n; i++) {
		uint32_t st = s[i].stack;

		if (st >= w->t->nstacks)
			continue;
		if (!w->state[st])
			w->state[st] = analysis_stack_cut(w->t, st) == 1 ? 1 : 2;
		w->cut += w->state[st] == 1;
	}
	return 0;
}

static uint64_t cpu_stacks_cut(const struct trace *t)
{
	struct cut_walk w = {.t = t};

	if (!t->nsamples || !t->nstacks || !t->frames)
		return 0;
	if (cut_memo.t == t && cut_memo.stack_off == t->stack_off &&
	    cut_memo.nsamples == t->nsamples && cut_memo.nstacks == t->nstacks &&
	    cut_memo.from == t->from && cut_memo.to == t->to)
		return cut_memo.cut;
	w.state = calloc(t->nstacks, 1);
	if (!w.state)
		return 0;
	/* a walk that fails part way counts what it read: the view that
	 * walks the samples says the error */
	trace__for_each_sample(t, count_cut, &w);
	free(w.state);
	cut_memo.t = t;
	cut_memo.stack_off = t->stack_off;
	cut_memo.nsamples = t->nsamples;
	cut_memo.nstacks = t->nstacks;
	cut_memo.from = t->from;
	cut_memo.to = t->to;
	cut_memo.cut = w.cut;
	return w.cut;
}

size_t analysis_losses(const struct trace *t, unsigned int affects, struct loss *out)
{
	size_t n = 0;

	for (size_t i = 0; i < LOSS_KINDS; i++) {
		uint64_t c = 0;

		if (!(kinds[i].affects & affects))
			continue;
		switch (kinds[i].src) {
		case SRC_LOST_SAMPLES:
			c = t->counters.lost_samples;
			break;
		case SRC_SHIM_DROPS:
			c = t->counters.shim_drops;
			break;
		case SRC_META:
			c = meta_sum(t, kinds[i].meta, meta_u64);
			break;
		case SRC_META_COUNT:
			c = meta_sum(t, kinds[i].meta, NULL);
			break;
		case SRC_META_FIRST:
			for (size_t m = 0; m < t->nmeta; m++)
				if (t->meta[m].key &&
				    !strcmp(t->meta[m].key, kinds[i].meta)) {
					c = meta_u64(t->meta[m].value);
					break;
				}
			break;
		case SRC_META_UNDONE:
			c = meta_sum(t, kinds[i].meta, meta_undone);
			break;
		case SRC_CUT_STACKS:
			c = cpu_stacks_cut(t);
			break;
		case SRC_SKIPPED:
			c = t->nskipped;
			break;
		}
		if (!c)
			continue;
		out[n] = (struct loss){.key = kinds[i].key,
				       .what = kinds[i].what,
				       .count = c,
				       .affects = kinds[i].affects,
				       .advice = kinds[i].advice};
		/* recorded with the big copy already: no option to point to */
		if (kinds[i].src == SRC_CUT_STACKS &&
		    trace__meta(t, TRACE_META_CALL_GRAPH) &&
		    !strncmp(trace__meta(t, TRACE_META_CALL_GRAPH), "dwarf", 5)) {
			out[n].what =
				"CPU stacks cut short (no thread root, though unwound by CFI)";
			out[n].advice = NULL;
		}
		n++;
	}
	return n;
}

char *analysis_losses_text(const struct trace *t, unsigned int affects, char *buf,
			   size_t len)
{
	struct loss l[LOSS_KINDS];
	size_t n = analysis_losses(t, affects, l), at = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++) {
		int k = snprintf(buf + at, len - at, "%s%" PRIu64 " %s",
				 i ? ", " : "lost: ", l[i].count, l[i].what);

		if (k < 0)
			break;
		at += (size_t)k;
	}
	return buf;
}

void losses_note(const struct trace *t, unsigned int affects, char *buf, size_t len)
{
	char what[LOSS_TEXT_MAX];

	if (*analysis_losses_text(t, affects, what, sizeof(what)))
		snprintf(buf, len, "; %s", what);
}

int analysis_losses_footer(const struct trace *t, unsigned int affects, FILE *out)
{
	char buf[LOSS_TEXT_MAX];

	if (*analysis_losses_text(t, affects, buf, sizeof(buf)))
		fprintf(out, "# %s\n", buf);
	return ferror(out) ? -EIO : 0;
}

int analysis_losses_json(const struct trace *t, unsigned int affects, struct lib_json *w)
{
	struct loss l[LOSS_KINDS];
	size_t n = analysis_losses(t, affects, l);

	if (n) {
		lib_json_name(w, "losses");
		lib_json_object_begin(w);
		for (size_t i = 0; i < n; i++)
			lib_json_uint_field(w, l[i].key, l[i].count);
		lib_json_object_end(w);
	}
	return lib_json_error(w);
}
