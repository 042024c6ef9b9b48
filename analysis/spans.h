/* SPDX-License-Identifier: MIT */
/*
 * spans.h - the application's spans as instances with their entered
 * intervals, joined to what their threads did, summed per name; what the
 * views choose of them (spans.c).
 */
#ifndef D9_ANALYSIS_SPANS_H
#define D9_ANALYSIS_SPANS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "lib/hist.h"

/*
 * A span instance lives from its NEW to its CLOSE (trace_span). An id
 * created again before its CLOSE ends the instance before it there
 * (open_end). A record of an id never created in the trace (created before
 * the recording, or its NEW lost) makes an instance named by nothing
 * (SPANS_UNNAMED) from where the shim's records begin (open_start). It is
 * entered on a thread from an ENTER to the EXIT of the same span on the
 * same thread (the latest enter of it there); an EXIT with no ENTER was
 * entered from the instance's creation or the records' start
 * (open_start), an enter still open at its span's CLOSE or at the end
 * ends there (open_end), and an instance never closed ends at the
 * recording end (open_end: its duration is a lower bound). Enters of one
 * thread nest (enter A, enter B, exit B, exit A): a time inside B is
 * inside A too, and a sample there counts for both.
 */
struct span_enter {
	uint64_t start, end;
	uint32_t tid;
	uint32_t span; /* index in spans.v */
	uint32_t up;   /* the enter of the same thread it is nested in
			* (index in spans.enters), UINT32_MAX none */
	uint8_t open_start, open_end;
};

#define SPANS_UNNAMED	"[span created before the recording]"
#define SPANS_NO_NAME	"[unnamed span]" /* created with no name */
#define SPAN_FIELDS_MAX 200		 /* bytes of "key=value ..." kept per span */
#define SPANS_OPEN_MAX	4096		 /* enters open at once on a thread */

struct span {
	uint64_t id;		 /* the application's */
	const char *name;	 /* NULL: not created in the trace */
	char *fields;		 /* "key=value key=text", NULL if none */
	uint64_t parent;	 /* the parent's id; 0: none, or not alive
				  * in the trace when this one was created */
	const char *parent_name; /* its spans_name() */
	uint64_t seq;		 /* creation order */
	uint64_t created;	 /* ns */
	uint64_t closed;	 /* ns (the end, open_end) */
	uint8_t open_start;	 /* created before the trace: a lower bound */
	uint8_t open_end;	 /* never closed in it: a lower bound */
	int kept;		 /* spans__select() */
	uint32_t nenters;	 /* enters */
	uint64_t entered_ns;	 /* sum of its enters' lengths */
	uint64_t samples;	 /* CPU sample weight inside its enters */
	uint64_t blocked_ns;	 /* off-CPU inside its enters: blocked */
	uint64_t runq_ns;	 /* ... runnable, waiting for a CPU */
};

/* The instances of one name, summed: COUNT, duration P50, P99 (nearest
 * rank, exact to LIB_HIST_EXACT instances, then within 1%), MAX and
 * TOTAL, and the sums of their struct span figures. */
struct span_row {
	const char *name; /* spans_name() */
	uint64_t n, p50, p99, max, total;
	uint64_t entered, samples, blocked, runq, waiting;
	uint64_t open; /* never closed, or created before the trace */
};

/* What spans__new_keep() keeps whole of the instances (the rows, the
 * counts and the events it always keeps): every instance and enter
 * (@all); or those entered where a sample or, with off-CPU data, a
 * switch out fell, with those enters only (@at: what spans__at() and
 * the span filter answer there, for the samples and off-CPU intervals,
 * bounded by their number); or the slowest @top instances (SIZE_MAX:
 * every one) named @name (NULL: any) that lasted at least @min_ns, with
 * their enters. The rest of each instance is summed into its row as it
 * closes, so that memory is bounded by the instances alive at once, not
 * by those in the trace. Instances named @name of at least @min_ns are
 * counted (spans.nmatched). */
struct spans_keep {
	int all;
	int at;
	/* with @at and @longer, also the enters longer than @enter_longer_ns
	 * and the instances that lasted longer than @longer_ns: the chrome
	 * export's cut */
	int longer;
	uint64_t enter_longer_ns, longer_ns;
	int hists; /* fill spans.enter_hist, life_hist, nenters_all */
	const char *name;
	uint64_t min_ns;
	size_t top;
	uint64_t over_ns; /* count the instances at least this long
			   * (spans.nover); 0: none */
	/* and give @each every instance (with a window: closed in it) as it
	 * is done, whole, in the order they are: NULL first where the build
	 * starts over. A nonzero return stops the build with it. */
	int (*each)(void *ctx, const struct span *s);
	void *each_ctx;
};

struct spans {
	const struct join *join;
	struct span *v; /* those kept (all, or spans_keep's), in creation
			 * order */
	size_t n;
	struct span_enter *enters; /* theirs, sorted by (tid, start), outer
				    * first */
	size_t nenters;
	struct span_row *rows; /* one per name, of every instance */
	size_t nrows;
	uint64_t ninstances;  /* in the trace (with a window: not closed
			       * before it) */
	uint64_t nmatched;    /* of them, spans_keep.name and min_ns's */
	uint64_t nover;	      /* at least spans_keep.over_ns long */
	uint64_t nenters_all; /* with spans_keep.hists: every enter, and
			       * the distributions of their lengths and of
			       * the instances' lives */
	struct lib_hist enter_hist, life_hist;
	struct spans_keep keep;	   /* what v holds */
	struct trace_span *events; /* the application's events, by time */
	size_t nevents;
	uint64_t unmatched_exits; /* EXITs with no ENTER on their thread */
	uint64_t enters_refused;  /* ENTERs left out: a thread had
				   * SPANS_OPEN_MAX open */
	uint64_t late_records;	  /* records that came more than 2 s after
				   * later ones: built out of order */
	double period_ns;	  /* one sample's worth (0: unknown) */
	int selected;		  /* spans__select() was called */
	size_t nkept;
};

/* Instances, enters and events of @j's trace (trace.spans), with their
 * CPU samples and, if @oc is not NULL, their off-CPU time, all of them
 * kept (spans_keep.all). With a window: spans closed before it are left
 * out; those overlapping it keep their whole life (created to closed)
 * and enters, their CPU and off-CPU counted inside it. One walk of the
 * span records, one of the samples. 0, -ENOMEM or a walk's error. */
int spans__new(const struct join *j, const struct offcpu *oc, struct spans **out);
/* spans__new() keeping whole only what @keep says. */
int spans__new_keep(const struct join *j, const struct offcpu *oc,
		    const struct spans_keep *keep, struct spans **out);
void spans__free(struct spans *sp);
/* Were @sp's kept instances and counts built for the instances named
 * @name (NULL: all) that lasted at least @min_ns (spans_keep.all: for
 * any)? */
int spans__built_for(const struct spans *sp, const char *name, uint64_t min_ns);
/* Keep the instances named @name (NULL: all) that lasted at least
 * @min_ns. 0, or -ENOENT if none is kept. Without spans_keep.all, only
 * the @name and @min_ns it was built with: -EINVAL for others. */
int spans__select(struct spans *sp, const char *name, uint64_t min_ns);
/* Was thread @tid inside a kept span (all before spans__select()) at
 * @time? These three need spans_keep.all, or with spans_keep.at, a
 * @time of a sample or switch out of @tid. */
int spans__kept_at(const struct spans *sp, uint32_t tid, uint64_t time);
/* The innermost span entered on @tid at @time (index in spans.v), or -1
 * (also for a NULL @sp). */
int32_t spans__at(const struct spans *sp, uint32_t tid, uint64_t time);
/* ... and those it is nested in: at most @max, innermost first, in @v
 * (indices in spans.v); how many. */
size_t spans__chain_at(const struct spans *sp, uint32_t tid, uint64_t time, int32_t *v,
		       size_t max);
/* The end of that innermost entry, or UINT64_MAX (none, or a NULL @sp). */
uint64_t spans__enter_end(const struct spans *sp, uint32_t tid, uint64_t time);
/* @s's name: SPANS_UNNAMED for one not created in the trace,
 * SPANS_NO_NAME for one created without a name. */
const char *spans_name(const struct span *s);

enum spans_sort {
	SPANS_BY_P99 = 0, /* default */
	SPANS_BY_COUNT,
	SPANS_BY_MAX,
	SPANS_BY_TOTAL,
	SPANS_BY_CPU,
	SPANS_BY_BLOCKED,
	SPANS_BY_NAME,
};

struct spans_opts {
	const char *name;     /* only spans of this name (NULL: all) */
	uint64_t min_ns;      /* instances: only those at least this long */
	int instances;	      /* the slowest instances, each explained,
			       * instead of one row per name */
	enum spans_sort sort; /* rows */
	size_t limit;	      /* rows or instances (0: all) */
	int json;
};

/* With a join that lists only some polls (a keep): list also those the
 * instances analysis__spans() explains for @o were entered in (none for
 * rows). Their wakes then need only delays_keep.listed. 0, -ENOMEM or a
 * walk's error. */
int spans__list_polls(const struct spans *sp, struct join *j, const struct spans_opts *o);

/* A view's --span NAME [--min DUR]: only what happened on a thread while
 * it had a span @spans keeps entered (spans__select(@name, @min_ns),
 * which a subtitle says); @spans NULL: everything. */
struct spans;
struct span_filter {
	const struct spans *spans;
	const char *name;
	uint64_t min_ns;
};

/* The instances @o keeps (its name; with --instances, its minimum), in
 * *@ix (room for sp->n); their number. */
size_t spans__chosen(const struct spans *sp, const struct spans_opts *o, uint32_t *ix);
/* Of the @n in @ix (spans__chosen()), the slowest first, @o->limit of them
 * (0: all); their number. */
size_t spans__slowest(const struct spans *sp, const struct spans_opts *o, uint32_t *ix,
		      size_t n);
/* The spans that lasted at least @min_ns: how many, the slowest in
 * *@worst (NULL: none); without spans_keep.all, @min_ns is its over_ns,
 * and the slowest is of those it kept. */
size_t analysis_spans_over(const struct spans *sp, uint64_t min_ns,
			   const struct span **worst);

/* "; only while N spans named NAME of at least DUR were entered: W UNIT"
 * for a flamegraph's subtitle at @buf, nothing without a span filter; the
 * characters written (snprintf()'s). (spans.c) */
int span_filter_note(const struct span_filter *f, uint64_t weight, const char *unit,
		     char *buf, size_t len);
/* Does @f keep only some spans' time (spans__select() was called)? Its
 * spans without a selection only name GROUP_SPAN's roots. */
static inline int span_filter_on(const struct span_filter *f)
{
	return f->spans && f->spans->selected;
}

#endif /* D9_ANALYSIS_SPANS_H */
