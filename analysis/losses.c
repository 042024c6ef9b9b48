/* SPDX-License-Identifier: MIT */
/*
 * losses.c - what a trace says was lost, per kind, and which data each
 * loss leaves short: the one list that `report`, every table's "# lost:"
 * footer, the flamegraphs' subtitles and the JSON "losses" objects print,
 * so that no view silently includes or excludes lost time.
 *
 * The recorder writes two trace counters (lost_samples, shim_drops) and
 * meta keys for the rest (record/record.c); a key is absent when nothing
 * of its kind was lost.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/analysis_int.h"

enum loss_source {
	SRC_LOST_SAMPLES,	/* counters.lost_samples */
	SRC_SHIM_DROPS,		/* counters.shim_drops */
	SRC_META,		/* the key's values (numbers), summed: one
				 * per segment of a trace */
	SRC_META_COUNT,		/* how many times the key is there */
	SRC_META_UNDONE,	/* "done/all": all - done, summed */
};

static const struct {
	const char *key, *what;
	enum loss_source src;
	const char *meta;
	unsigned int affects;
} kinds[LOSS_KINDS] = {
	{"samples", "samples (perf ring full)", SRC_LOST_SAMPLES, NULL, LOSS_CPU},
	{"ctimer_samples", "ctimer samples (shim sample area full)", SRC_META,
	 "ctimer samples dropped", LOSS_CPU},
	{"child_samples", "samples of forked children (left out)", SRC_META,
	 "child samples left out", LOSS_CPU},
	{"switch_records", "switch records (ring full)", SRC_META, "offcpu lost", LOSS_OFFCPU},
	{"unpaired_switches", "switch-outs whose switch-in was lost", SRC_META,
	 "offcpu unpaired", LOSS_OFFCPU},
	{"offcpu_stacks_cut", "off-CPU stacks cut short (unwind failed)", SRC_META_UNDONE,
	 "offcpu stacks complete", LOSS_OFFCPU},
	{"wakeups", "wakeups (ring full)", SRC_META, "wakeups lost", LOSS_WAKEUPS},
	{"shim_records", "shim records (shim ring full)", SRC_SHIM_DROPS, NULL, LOSS_POLLS},
	{"threads_without_ring", "threads' runtime events (no ring slot in the shim)", SRC_META,
	 "threads without a ring", LOSS_POLLS},
	{"reattached", "lease lapses (runtime events of the gap)", SRC_META_COUNT,
	 "shim_reattached", LOSS_POLLS},
	{"shim_garbage", "shim records that could not be real (dropped)", SRC_META,
	 "shim garbage", LOSS_POLLS},
	{"segment_gaps", "gaps between segments (nothing recorded)", SRC_META_COUNT,
	 "segment_gap", LOSS_CPU | LOSS_OFFCPU | LOSS_POLLS | LOSS_WAKEUPS},
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
static uint64_t meta_sum(const struct trace *t, const char *key, uint64_t (*f)(const char *))
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
		case SRC_META_UNDONE:
			c = meta_sum(t, kinds[i].meta, meta_undone);
			break;
		}
		if (!c)
			continue;
		out[n++] = (struct loss){.key = kinds[i].key, .what = kinds[i].what, .count = c,
					 .affects = kinds[i].affects};
	}
	return n;
}

char *analysis_losses_text(const struct trace *t, unsigned int affects, char *buf, size_t len)
{
	struct loss l[LOSS_KINDS];
	size_t n = analysis_losses(t, affects, l), at = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n && at < len; i++) {
		int k = snprintf(buf + at, len - at, "%s%" PRIu64 " %s", i ? ", " : "lost: ",
				 l[i].count, l[i].what);

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

int analysis_losses_json(const struct trace *t, unsigned int affects, FILE *out)
{
	struct loss l[LOSS_KINDS];
	size_t n = analysis_losses(t, affects, l);

	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s\"%s\":%" PRIu64, i ? "," : ",\"losses\":{", l[i].key,
			l[i].count);
	if (n)
		fputc('}', out);
	return ferror(out) ? -EIO : 0;
}
