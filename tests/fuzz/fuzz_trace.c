// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the trace reader and every analysis over what it
 * accepts (tasks, polls, delays, report, flame and offcpu folded, the
 * application's spans and events).
 * The first byte picks the read flags (and JSON for the report); the rest
 * is the file: seeds are a flags byte and a trace.
 *
 * What does not depend on the input is made once: the memfd the file is
 * written to (the reader opens it by path, as a file on disk), and the
 * stream the analyses print to, which discards without a system call.
 */
#include "tests/fuzz/fuzz_io.h" /* first: it defines _GNU_SOURCE */

#include "analysis/delays.h"
#include "analysis/flame.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/spans.h"
#include "analysis/views.h"

FUZZ_ONE_FILE("fuzz-trace")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace *t = NULL;
	struct join *j = NULL;
	struct offcpu *oc = NULL;
	struct delays *d = NULL;
	const char *msg;

	/* the file is the input, whatever the last one left */
	if (!size || fuzz_memfd_set(fd, data + 1, size - 1))
		return 0;
	struct trace_read_opts ro = {.flags = fuzz_read_flags(data[0])};
	const char *paths[] = {path};

	/* bit 3: the middle third of what the segments cover */
	if (data[0] & 8) {
		ro.window = fuzz_window;
		ro.ctx = &(struct fuzz_part){1, 2, 3};
	}
	if (!trace__read_paths(paths, 1, &ro, &t, &msg) &&
	    !join__new(t, JOIN_POLL_LIST, &j) && !offcpu__new(j, 0, &oc) &&
	    !delays__new(j, NULL, &d)) {
		struct flame_opts fo = {.format = FLAME_FOLDED};
		struct offcpu_opts oo = {.format = FLAME_FOLDED, .idle = 1};
		struct polls_opts po = {.limit = 20};
		struct delays_opts dop = {.limit = 5};
		struct tasks_opts to = {.by = GROUP_NAME};

		analysis__tasks(j, d, NULL, out);
		analysis__tasks(j, d, &to, out);
		analysis__polls(oc, &po, out);
		po.by = GROUP_THREAD;
		analysis__polls(oc, &po, out);
		analysis__delays(oc, d, &dop, out);
		analysis__report(oc, d, NULL, "-i x", data[0] & 4, out);
		analysis__info(t, &(struct info_opts){.json = data[0] & 4}, out);
		analysis__flame(j, &fo, out);
		fo.by = GROUP_THREAD;
		analysis__flame(j, &fo, out);
		analysis__offcpu(oc, &oo, out);
		/* the application's spans and events */
		struct spans *sp = NULL;

		if (!spans__new(j, oc, &sp)) {
			struct spans_opts so = {.limit = 3, .json = data[0] & 4};

			analysis__spans(sp, oc, d, &so, out);
			so.instances = 1;
			analysis__spans(sp, oc, d, &so, out);
			analysis__events(sp, &(struct events_opts){.json = data[0] & 4},
					 out);
			if (!spans__select(sp, NULL, 0)) {
				fo.span.spans = sp;
				fo.by = GROUP_SPAN;
				analysis__flame(j, &fo, out);
				fo.span.spans = NULL;
			}
			analysis__report(oc, d, sp, NULL, data[0] & 4, out);
			spans__free(sp);
		}
		if (j->npolls) {
			struct poll_flame_opts pf = {.poll = 0, .format = FLAME_SVG};

			analysis__poll_flame(oc, &pf, out);
		}
	}
	fuzz_views_free(t, j, oc, d, out);
	return 0;
}
