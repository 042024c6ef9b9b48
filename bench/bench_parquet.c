// SPDX-License-Identifier: MIT
/*
 * bench_parquet: the Parquet writer's speed (analysis/parquet.c) on rows
 * shaped like the samples table's (13 columns: times that grow, a few
 * threads, a thousand tasks of twenty names, five hundred stacks, spans
 * now and then), N rows into FILE. Prints "key value" lines: rows,
 * seconds (CPU time of the writing), bytes, rows_per_sec, bytes_per_row.
 *
 *   bench_parquet FILE [ROWS]   (default 2000000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/parquet.h"

static const struct pq_column cols[] = {
	{"time_ns", PQ_INT64, 0},    {"tid", PQ_INT64, 0},
	{"thread", PQ_STRING, 1},    {"task", PQ_INT64, 1},
	{"task_name", PQ_STRING, 1}, {"poll", PQ_INT64, 1},
	{"span", PQ_STRING, 1},	     {"span_id", PQ_INT64, 1},
	{"weight_ns", PQ_INT64, 0},  {"stack_id", PQ_INT64, 0},
	{"pid", PQ_INT64, 0},	     {"service", PQ_STRING, 0},
	{"host", PQ_STRING, 0},
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long rows = argc > 2 ? atol(argv[2]) : 2000000;
	uint64_t x = 88172645463325252ull, t = 1795000000000000000ull;
	char thread[32], name[32];
	struct pq_table *tab;
	double t0, t1;
	FILE *f;

	if (argc < 2 || rows <= 0) {
		fprintf(stderr, "usage: bench_parquet FILE [ROWS]\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (!f || pq__new(f, cols, sizeof(cols) / sizeof(cols[0]), "bench", &tab)) {
		perror(argv[1]);
		return 1;
	}
	t0 = cpu_now();
	for (long i = 0; i < rows; i++) {
		uint64_t task;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		task = x % 1000;
		t += 1000000 + x % 1000;
		pq_i64(tab, 0, (int64_t)t);
		pq_i64(tab, 1, 4000 + (int64_t)(x % 4));
		snprintf(thread, sizeof(thread), "worker-%d", (int)(x % 4));
		pq_str(tab, 2, thread, strlen(thread));
		snprintf(name, sizeof(name), "handler_%d", (int)(task % 20));
		if (x % 10) {
			pq_i64(tab, 3, (int64_t)task);
			pq_str(tab, 4, name, strlen(name));
			pq_i64(tab, 5, i / 3);
		} else {
			pq_null(tab, 3);
			pq_null(tab, 4);
			pq_null(tab, 5);
		}
		if (x % 4 == 0) {
			pq_str(tab, 6, "request", 7);
			pq_i64(tab, 7, i / 50);
		} else {
			pq_null(tab, 6);
			pq_null(tab, 7);
		}
		pq_i64(tab, 8, 1001001);
		pq_i64(tab, 9, (int64_t)((x % 500) * 0x9e3779b97f4a7c1ull & INT64_MAX));
		pq_i64(tab, 10, 4242);
		pq_str(tab, 11, "api", 3);
		pq_str(tab, 12, "host-a", 6);
		if (pq_row_end(tab)) {
			fprintf(stderr, "bench_parquet: a row failed\n");
			return 1;
		}
	}
	if (pq__finish(tab)) {
		fprintf(stderr, "bench_parquet: the footer failed\n");
		return 1;
	}
	t1 = cpu_now();
	printf("rows %ld\nseconds %.3f\nbytes %ld\nrows_per_sec %.0f\nbytes_per_row %.2f\n",
	       rows, t1 - t0, ftell(f), (double)rows / (t1 - t0),
	       (double)ftell(f) / (double)rows);
	pq__free(tab);
	fclose(f);
	return 0;
}
