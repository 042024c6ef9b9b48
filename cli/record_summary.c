// SPDX-License-Identifier: MIT
/*
 * record_summary.c - what `d9prof record` says on stderr once the
 * recording ended: what it recorded, how its stacks were unwound, the
 * off-CPU and Tokio lines, every loss or refusal (or that there was
 * none), what the recorder cost, the file written, and the segmented
 * modes' segments, dumps and hooks. It reads the engine's counts
 * (struct record_stats) and, for the CPU stacks cut short, the trace file
 * written; it decides nothing about the recording.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "analysis/losses.h"
#include "cli/cli.h"
#include "lib/text.h"
#include "record/proc.h"
#include "record/record.h"

/* Lines of the summary that said something was lost or refused: "nothing
 * lost" follows none */
static unsigned int said_lost;

/* "d9prof: VERB N NOUN(s) WHY" on stderr, if @n is not 0: one line of
 * what the recording lost or refused. */
static void lost_line(const char *verb, uint64_t n, const char *noun, const char *why)
{
	if (!n)
		return;
	fprintf(stderr, "d9prof: %s %llu %s%s %s\n", verb, (unsigned long long)n, noun,
		plural(n), why);
	said_lost++;
}

/* "d9prof: BEFORE N NOUN(s) WHY: off-CPU interval(s) left out", if @n is
 * not 0: switches that could not be paired, one interval each. */
static void intervals_line(const char *before, uint64_t n, const char *noun,
			   const char *why)
{
	if (!n)
		return;
	fprintf(stderr, "d9prof: %s%llu %s%s %s: off-CPU interval%s left out\n", before,
		(unsigned long long)n, noun, plural(n), why, plural(n));
	said_lost++;
}

/* The off-CPU and run-queue lines of the summary. */
static void summary_offcpu(const struct record_stats *st)
{
	if (st->switches || !strcmp(st->offcpu, "tracepoint") ||
	    !strcmp(st->offcpu, "context-switch") || !strcmp(st->offcpu, "bpf"))
		fprintf(stderr,
			"d9prof: off-CPU (%s): %llu switch%s (%llu blocked, %llu preempted)\n",
			st->offcpu, (unsigned long long)st->switches,
			st->switches == 1 ? "" : "es",
			(unsigned long long)st->switches_blocked,
			(unsigned long long)(st->switches - st->switches_blocked));
	if (st->switches && st->wakeups[0] && strncmp(st->wakeups, "off", 3) &&
	    strncmp(st->wakeups, "refused", 7)) {
		fprintf(stderr,
			"d9prof: run queue (%s): %llu interval%s, %.1f ms runnable waiting "
			"for a CPU",
			st->wakeups, (unsigned long long)st->runnable,
			plural(st->runnable), (double)st->runq_ns / 1e6);
		if (!strncmp(st->holders, "sched:", 6))
			fprintf(stderr,
				", %.1f ms charged to what ran on their CPUs (%s)\n",
				(double)st->held_ns / 1e6, st->holders);
		else
			fprintf(stderr,
				"; who held the CPU is approximated (the thread that "
				"preempted, else the one before): %s\n",
				st->holders[0] ? st->holders : "no system-wide switches");
	} else if (st->switches)
		fprintf(stderr,
			"d9prof: run queue: wakeups not recorded (%s): blocked and run-queue "
			"time cannot be split, only preempted time is run-queue time\n",
			st->wakeups[0] ? st->wakeups : "off");
	lost_line("lost", st->wake_lost, "wakeup record", "(ring full)");
	if (st->offcpu_stacks) {
		fprintf(stderr,
			"d9prof: off-CPU stacks: %.1f%% of %llu whole, CFI joined to frame pointers "
			"(%.0f ms; at most %llu byte%s of stack read",
			100.0 * (double)st->offcpu_complete / (double)st->offcpu_stacks,
			(unsigned long long)st->offcpu_stacks, st->offcpu_unwind_s * 1e3,
			(unsigned long long)st->offcpu_stack_used,
			plural(st->offcpu_stack_used));
		if (st->offcpu_copy_min)
			fprintf(stderr, ", copies adapted down to %u bytes",
				st->offcpu_copy_min);
		fputs(")\n", stderr);
	} else if (st->switches && st->offcpu_not_kept < st->switches)
		fprintf(stderr, "d9prof: off-CPU stacks: frame pointers only\n");
	if (st->offcpu_not_kept)
		fprintf(stderr,
			"d9prof: off-CPU: %llu of the intervals were under --offcpu-min: "
			"their time is kept, not their stack%s\n",
			(unsigned long long)st->offcpu_not_kept,
			strcmp(st->offcpu, "bpf") ? " (unwound all the same: perf_event "
						    "copies every stack)"
						  : "");
	lost_line("copied", st->offcpu_cut_short, "off-CPU stack",
		  "short (1 KiB) while the ring was half full, the recorder behind: CFI "
		  "recovers less of them");
}

/* Zero-code Tokio: what gave the task ids, and what it cannot give. */
static void summary_tokio(const struct record_stats *st)
{
	uint64_t tagged = st->tokio_tagged + st->tokio_no_task;

	if (!st->tokio[0])
		return;
	fprintf(stderr,
		"d9prof: tasks: Tokio %s read from outside (zero-code): %llu of %llu "
		"sample%s ran a task, %llu of %llu off-CPU interval%s left one%s\n",
		st->tokio, (unsigned long long)st->tokio_tagged,
		(unsigned long long)(tagged + st->tokio_untagged),
		plural(tagged + st->tokio_untagged),
		(unsigned long long)st->tokio_switches, (unsigned long long)st->switches,
		plural(st->switches),
		st->tokio_probes
			? ""
			: "; no poll boundaries, poll counts or wake-to-poll delays "
			  "(--tokio probes, or the d9prof crate, gives those)");
	lost_line("found no task tag for", st->tokio_untagged, "sample",
		  "(their tag was lost: they count outside tasks)");
	if (st->tokio_probes) {
		double cost = (double)st->tokio_polls * (double)st->tokio_pair_ns / 1e9;

		fprintf(stderr,
			"d9prof: poll probes on %llu raw::poll instances: %llu polls and %llu "
			"wakes recorded; at %.1f us a probed poll here (timed at the attach), "
			"they cost the target ~%.3f s of CPU (%.1f%% of one CPU)\n",
			(unsigned long long)st->tokio_sites,
			(unsigned long long)st->tokio_polls,
			(unsigned long long)st->tokio_wakes,
			(double)st->tokio_pair_ns / 1e3, cost,
			st->seconds > 0 ? 100.0 * cost / st->seconds : 0.0);
		if (st->tokio_off_why == RECORD_PROBES_OFF_RATE)
			fprintf(stderr,
				"d9prof: poll probes off at %.1f s: hit %llu times a second, "
				"over the cap: no polls or wakes after it\n",
				st->tokio_off_s, (unsigned long long)st->tokio_off_rate);
		else if (st->tokio_off_why == RECORD_PROBES_OFF_LAYOUT)
			fprintf(stderr,
				"d9prof: poll probes off at %.1f s: tasks not laid out as Tokio "
				"%s's: no polls or wakes after it\n",
				st->tokio_off_s, st->tokio);
		said_lost += !!st->tokio_off_why;
		lost_line("did not write", st->tokio_nested, "poll",
			  "with another poll inside (the inner one is written; their "
			  "samples stay the tasks')");
		lost_line("did not write", st->tokio_too_deep, "poll",
			  "nested past the probes' depth");
		lost_line("did not write", st->tokio_bad_vtable, "poll",
			  "of a task not laid out as Tokio's");
		lost_line("the ring had no room for", st->tokio_dropped,
			  "poll probe record", "(polls and wakes lost)");
	}
}

/* CPU stacks cut short (no thread root) in the trace file @out, as every
 * view counts them (the recorder sees addresses; the symbols written at
 * the end say which frame is a thread's root): one line, if any */
static void stacks_cut_line(const char *out)
{
	struct loss l[LOSS_KINDS];
	struct trace *t;
	const char *why;
	size_t n;

	if (!out || trace__read_opts(out,
				     TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS |
					     TRACE_READ_NO_SPANS,
				     &t, &why))
		return;
	n = analysis_losses(t, LOSS_CPU, l);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].key, "cpu_stacks_cut")) {
			fprintf(stderr, "d9prof: lost: %llu %s\n",
				(unsigned long long)l[i].count, l[i].what);
			said_lost++;
		}
	trace__free(t);
}

/* What was lost or refused, one line each, or that nothing was; @out: the
 * one trace file written, else NULL */
static void summary_losses(const struct record_stats *st, const char *out)
{
	lost_line("lost", st->offcpu_lost, "context-switch record", "(ring full)");
	intervals_line("", st->offcpu_unpaired, "switch-out",
		       "without a switch-in (lost)");
	intervals_line("the kernel did not report ", st->offcpu_unseen_in, "switch-in",
		       "to the BPF program (a thread switched out twice)");
	lost_line("the shim dropped", st->ctimer_drops, "ctimer sample",
		  "(sample area full)");
	lost_line("refused", st->ctimer_refused, "ctimer sample",
		  "that came faster than its timers can fire (the target wrote them)");
	lost_line("refused", st->ctimer_garbage, "ctimer sample",
		  "that could not be real (of another thread than their area's, or at a "
		  "time outside the recording)");
	lost_line("lost", st->lost_samples, "sample", "(perf ring full)");
	lost_line("dropped", st->shim_drops, "shim event", "(shim ring full)");
	lost_line("left out", st->child_samples, "sample",
		  "of forked children (--children keeps them)");
	if (st->no_ring_threads) {
		fprintf(stderr,
			"d9prof: %llu thread%s of the target found no free ring slot in the "
			"shim: their runtime events are lost\n",
			(unsigned long long)st->no_ring_threads,
			plural(st->no_ring_threads));
		said_lost++;
	}
	if (st->reattaches || st->gap_ns) {
		fprintf(stderr,
			"d9prof: the recorder stalled past the shim's lease (attached again "
			"%llu time%s): runtime events of those gaps (%.3f s) are lost\n",
			(unsigned long long)st->reattaches, plural(st->reattaches),
			(double)st->gap_ns / 1e9);
		said_lost++;
	}
	stacks_cut_line(out);
	if (st->shim_garbage) {
		fprintf(stderr,
			"d9prof: dropped %llu records or counters of the shim segment "
			"that could not be real (the target wrote over it)\n",
			(unsigned long long)st->shim_garbage);
		said_lost++;
	}
	if (!said_lost)
		fprintf(stderr, "d9prof: nothing lost or dropped\n");
}

void record_summary(const struct record_stats *st, pid_t pid, const char *out,
		    int one_file, int own_cmd)
{
	char sz[32];
	struct rusage ru;
	struct stat sb;

	if (!out || stat(out, &sb))
		sb.st_size = 0;
	fprintf(stderr,
		"d9prof: recorded %.2f s of pid %d%s: %llu sample%s (%s), %llu shim event%s "
		"(%llu ring record%s), %u unique frame%s\n",
		st->seconds, (int)pid, st->target_exited ? " (it exited)" : "",
		(unsigned long long)st->samples, plural(st->samples), st->event_name,
		(unsigned long long)st->events, plural(st->events),
		(unsigned long long)st->shim_records, plural(st->shim_records),
		(unsigned int)st->frames, plural(st->frames));
	if (st->spans)
		fprintf(stderr, "d9prof: %llu span record%s and application event%s\n",
			(unsigned long long)st->spans, plural(st->spans),
			plural(st->spans));
	/* the ctimer sampler copies its own 256 bytes: no call graph to say */
	if (strcmp(st->sampler, "ctimer") && st->callgraph_auto && st->fp_missing[0])
		fprintf(stderr,
			"d9prof: call graph: dwarf,%u (no frame pointers in %s: their frames "
			"unwound by CFI)\n",
			st->cpu_stack, st->fp_missing);
	else if (strcmp(st->sampler, "ctimer") && st->callgraph_auto)
		fprintf(stderr,
			"d9prof: call graph: fp (the target's own code keeps frame "
			"pointers%s%s)\n",
			st->fp_unknown[0] ? "; could not judge " : "", st->fp_unknown);
	if (st->cpu_stacks && !strcmp(st->sampler, "ctimer"))
		fprintf(stderr,
			"d9prof: CPU stacks: %.1f%% had a caller frame pointers skip, "
			"recovered with CFI (%.0f ms)\n",
			100.0 * (double)st->cpu_recovered / (double)st->cpu_stacks,
			st->cpu_unwind_s * 1e3);
	else if (st->cpu_stacks)
		fprintf(stderr,
			"d9prof: CPU stacks (%s, %u bytes copied): %.1f%% had a caller frame "
			"pointers skip, recovered with CFI (%.0f ms)\n",
			st->callgraph, st->cpu_stack,
			100.0 * (double)st->cpu_recovered / (double)st->cpu_stacks,
			st->cpu_unwind_s * 1e3);
	summary_tokio(st);
	summary_offcpu(st);
	summary_losses(st, one_file ? out : NULL);
	if (!getrusage(RUSAGE_SELF, &ru)) {
		double cpu =
			(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;

		uint64_t wait = proc_self_run_delay_ns(), during;

		/* its time runnable without a CPU while starting and finishing:
		 * what a busy machine adds to the time around the recording */
		during = st->stop_run_delay_ns > st->start_run_delay_ns
				 ? st->stop_run_delay_ns - st->start_run_delay_ns
				 : 0;
		wait = wait > during ? wait - during : 0;
		fprintf(stderr,
			"d9prof: the recorder used %.2f s of CPU (%.1f%% of a core) and "
			"%s of memory at most; starting and finishing, it waited %.2f s for a "
			"CPU (%.2f s while recording)\n",
			cpu, st->seconds > 0 ? 100.0 * cpu / st->seconds : 0.0,
			text_size((double)ru.ru_maxrss * 1024.0, sz, sizeof(sz)),
			(double)wait / 1e9, (double)during / 1e9);
	}
	/* (a command's end is said by child_exit()) */
	/* info(): how it ended may name the sender's comm */
	if (st->exit_how[0] && !own_cmd)
		info("pid %d %s", (int)pid, st->exit_how);
	if (out)
		info("wrote %s (%s)", out, text_size((double)sb.st_size, sz, sizeof(sz)));
}

void record_summary_segments(const struct record_opts *o, const struct record_stats *st)
{
	char sz[32], cap[32], name[96];

	if (o->segments == RECORD_FLIGHT) {
		fprintf(stderr,
			"d9prof: flight recorder: %llu segment%s, %llu dropped out of the %g s "
			"window, %s held at most; %llu dump%s into %s%s\n",
			(unsigned long long)st->segments, plural(st->segments),
			(unsigned long long)st->segments_dropped, o->window,
			text_size((double)st->held_max, sz, sizeof(sz)),
			(unsigned long long)st->dumps, plural(st->dumps), o->dir,
			st->dump_failures ? " (some failed, see above)" : "");
		if (st->dumps_deleted)
			fprintf(stderr,
				"d9prof: deleted the %llu oldest dump%s of this recording "
				"to keep them within --max-total %s\n",
				(unsigned long long)st->dumps_deleted,
				plural(st->dumps_deleted),
				text_size((double)o->max_total, cap, sizeof(cap)));
		for (unsigned int i = 0; i < o->ntriggers; i++)
			if (st->trigger_cooled[i])
				fprintf(stderr,
					"d9prof: trigger %s: %llu dump%s, and held %llu "
					"more time%s in its cooldown (no dump)\n",
					record_trigger_name(&o->triggers[i], name,
							    sizeof(name)),
					(unsigned long long)st->trigger_dumps[i],
					plural(st->trigger_dumps[i]),
					(unsigned long long)st->trigger_cooled[i],
					plural(st->trigger_cooled[i]));
		return;
	}
	fprintf(stderr,
		"d9prof: rotated %llu segment file%s into %s, %llu deleted for "
		"--max-total%s\n",
		(unsigned long long)st->segments, plural(st->segments), o->dir,
		(unsigned long long)st->segments_dropped,
		st->hook_failures ? ", some --on-segment commands failed (see above)"
				  : "");
	if (st->hooks_skipped)
		fprintf(stderr,
			"d9prof: --on-segment: %llu file%s deleted for --max-total before "
			"their command could run (%d run at once at most)\n",
			(unsigned long long)st->hooks_skipped, plural(st->hooks_skipped),
			RECORD_MAX_HOOKS);
	if (st->hooks_running)
		fprintf(stderr,
			"d9prof: --on-segment: %llu command%s still running or waiting, "
			"left to finish\n",
			(unsigned long long)st->hooks_running, plural(st->hooks_running));
}
