// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the exports (pprof, speedscope, chrome) of what the
 * trace reader accepts, joined as `d9prof export` joins it. The first
 * byte picks what the command line would; the rest is the file (seeds: a
 * flags byte and a trace):
 *
 *   bits 0-1  format: pprof, pprof --offcpu, speedscope, chrome
 *   bit  2    read as analysis does (samples and events left on disk)
 *   bit  3    --no-inline
 *   bits 4-5  --task: none, a task's id, its name, an id no task has
 *   bits 6-7  speedscope: --by (none, task, name, thread); the others:
 *             bit 6 --from/--to of the middle third, bit 7 --frame leaf
 */
#include "tests/fuzz/fuzz_io.h" /* first: it defines _GNU_SOURCE */

#include "analysis/delays.h"
#include "analysis/join.h"
#include "analysis/offcpu.h"
#include "analysis/views.h"

FUZZ_ONE_FILE("fuzz-export")

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum export_format fmts[] = {EXPORT_PPROF, EXPORT_PPROF,
						  EXPORT_SPEEDSCOPE, EXPORT_CHROME};
	struct trace *t = NULL;
	struct join *j = NULL;
	struct offcpu *oc = NULL;
	struct delays *d = NULL;
	struct export_result res = {0};
	struct export_opts eo = {.result = &res};
	const char *msg;
	unsigned int b;
	int speedscope, err = 0;

	if (!size || fuzz_memfd_set(fd, data + 1, size - 1))
		return 0;
	b = data[0];
	eo.format = fmts[b & 3];
	eo.offcpu = (b & 3) == 1;
	speedscope = eo.format == EXPORT_SPEEDSCOPE;
	struct trace_read_opts ro = {
		.flags = (b & 4 ? TRACE_READ_NO_SAMPLES | TRACE_READ_NO_EVENTS : 0) |
			 (b & 8 ? TRACE_READ_NO_INLINE : 0),
	};
	const char *paths[] = {path};

	if (!speedscope && (b & 64)) {
		ro.window = fuzz_window;
		ro.ctx = &(struct fuzz_part){1, 2, 3};
	}
	if (trace__read_paths(paths, 1, &ro, &t, &msg))
		return 0;
	/* as session_open() makes them for the format */
	err = join__new(t, JOIN_POLL_LIST, &j);
	if (!err && ro.window)
		j->origin = t->segments ? t->segments[0].start : 0;
	if (!err && (eo.offcpu || eo.format == EXPORT_CHROME))
		err = offcpu__new(j, !speedscope && (b & 128) ? OFFCPU_RAW_LEAF : 0, &oc);
	if (!err && eo.format == EXPORT_CHROME)
		err = delays__new(j, NULL, &d);
	if (err)
		goto out;
	fuzz_pick_task(j, (b >> 4) & 3, size);
	if (speedscope)
		eo.by = (enum group_by)((b >> 6) & 3);
	switch (eo.format) {
	case EXPORT_PPROF:
		analysis__export_pprof(j, oc, &eo, out);
		break;
	case EXPORT_SPEEDSCOPE:
		analysis__export_speedscope(j, &eo, out);
		break;
	case EXPORT_CHROME:
		analysis__export_chrome(oc, d, &eo, out);
		break;
	case EXPORT_PARQUET: /* (fuzz_parquet's) */
		break;
	}
out:
	fuzz_views_free(t, j, oc, d, out);
	return 0;
}
