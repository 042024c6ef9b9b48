// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the snapshot a recorder sends `d9prof top` over its
 * live socket (live_snap_unpack()), and the frame top draws from it, in
 * text and JSON (analysis__top(), analysis__top_row_id()). The recorder
 * runs as root and `top` as the user, or the other way round: neither
 * trusts the other's bytes.
 *
 * Input: two bytes of options (bits 0-2 the sort; 3 JSON; 4-5 the width:
 * any, 40, 80, 200; 6 a filter; 7 the row id asked by name, not task; the
 * second byte the selected row), then the packed snapshot.
 *
 * D9FUZZ_SEEDS=DIR fuzz_live writes seeds into DIR (snapshots of a live
 * state fed as the recorder feeds it, by task, name and thread, packed by
 * this build) and exits: the packing is this build's, so seeds are made
 * by it, not kept in the repository.
 */
#include "tests/fuzz/fuzz_io.h" /* first: it defines _GNU_SOURCE */

#include "analysis/join.h"
#include "analysis/live.h"
#include "analysis/views.h"

#define MS 1000000ULL

static void event(const struct trace_tap *t, uint64_t time, uint32_t tid, uint32_t type,
		  uint64_t task)
{
	struct trace_event e = {.time = time, .task = task, .tid = tid, .type = type};
	uint64_t zero = 0;

	t->records(t->ctx, &e, &zero, 1);
}

/* three tasks polled on two threads, woken by a third, sampled and
 * switched out; then one ends, one is woken and one is polled now */
static void feed(struct live *l, uint64_t t0)
{
	const struct trace_tap *t = live__tap(l);
	uint64_t ip[3] = {0x401000, 0x402000, 0x403000};

	t->name(t->ctx, 1, 1, "accept_loop");
	t->name(t->ctx, 1, 2, "handle \"request\"\t\xe2\x9c\x93");
	for (uint64_t i = 0; i < 40; i++) {
		uint64_t len = (i % 7 + 1) * MS / 4, task = 1 + i % 3;
		struct trace_event e = {.time = t0 + i * MS,
					.task = task,
					.tid = 10 + (uint32_t)(i % 2),
					.type = TRACE_REC_POLL};
		struct trace_sample s = {.time = t0 + i * MS + MS / 8,
					 .tid = 10 + (uint32_t)(i % 2),
					 .weight = 1};
		struct trace_switch sw = {.time = t0 + i * MS + MS / 16,
					  .time_in = t0 + i * MS + MS / 8,
					  .runnable = t0 + i * MS + MS / 10,
					  .tid = 10 + (uint32_t)(i % 2)};
		event(t, t0 + i * MS - MS / 8, 12, TRACE_EV_WAKE, task);
		t->records(t->ctx, &e, &len, 1);
		t->sample(t->ctx, &s, ip, 3);
		if (t->sw)
			t->sw(t->ctx, &sw);
	}
	event(t, t0 + 40 * MS, 10, TRACE_EV_TASK_END, 3);
	event(t, t0 + 41 * MS, 12, TRACE_EV_WAKE, 1);
	event(t, t0 + 41 * MS, 11, TRACE_EV_PARK, 0);
	event(t, t0 + 42 * MS, 10, TRACE_EV_POLL_BEGIN, 2);
}

static void write_seeds(const char *dir)
{
	static const enum group_by by[] = {GROUP_TASK, GROUP_NAME, GROUP_THREAD,
					   GROUP_AUTO};
	static const uint8_t opts[][2] = {{0, 0},      {8, 0},	     {1 | 16, 1},
					  {6 | 32, 2}, {64 | 48, 0}, {128 | 8, 3}};
	struct live *l;
	char path[512];

	if (live__new(1 * MS, &l))
		exit(1);
	live__want_stacks(l, 2);
	for (size_t i = 0; i < sizeof(by) / sizeof(by[0]); i++) {
		struct live_snap s;
		void *buf;
		size_t len;
		FILE *f;

		feed(l, (i + 1) * 100 * MS);
		if (live__snapshot(l, (i + 1) * 100 * MS + 50 * MS, by[i], &s) ||
		    live_snap_pack(&s, &buf, &len))
			exit(1);
		live_snap_release(&s);
		for (size_t o = 0; o < sizeof(opts) / sizeof(opts[0]); o++) {
			snprintf(path, sizeof(path), "%s/snap-%zu-%zu", dir, i, o);
			f = fopen(path, "w");
			if (!f || fwrite(opts[o], 2, 1, f) != 1 ||
			    fwrite(buf, len, 1, f) != 1 || fclose(f))
				exit(1);
		}
		free(buf);
	}
	live__free(l);
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("D9FUZZ_SEEDS");

	(void)argc;
	(void)argv;
	if (dir)
		write_seeds(dir);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t widths[] = {0, 40, 80, 200};
	struct live_snap s;
	struct top_opts o = {0};
	static FILE *out;
	char *copy;

	if (!out)
		out = fuzz_discard_stream();
	if (size < 2)
		return 0;
	/* unpack() reads a struct from any offset: a copy that is only the
	 * snapshot, so ASan sees a read past its end */
	copy = malloc(size - 2);
	if (!copy)
		return 0;
	memcpy(copy, data + 2, size - 2);
	if (live_snap_unpack(copy, size - 2, &s)) {
		free(copy);
		return 0;
	}
	o.sort = (enum top_sort)((data[0] & 7) % (TOP_BY_NAME + 1));
	o.json = !!(data[0] & 8);
	o.width = widths[(data[0] >> 4) & 3];
	o.filter = data[0] & 64 ? "handle" : NULL;
	o.selected = data[1] == 255 ? -1 : data[1];
	o.title = "pid 1 (fuzz) - 00:00:00";
	analysis__top(&s, &o, out);
	o.json = !o.json;
	analysis__top(&s, &o, out);
	if (data[0] & 128)
		s.by = GROUP_NAME;
	analysis__top_row_id(&s, &o, data[1]);
	live_snap_release(&s);
	free(copy);
	return 0;
}
