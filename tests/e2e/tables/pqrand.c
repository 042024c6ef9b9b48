// SPDX-License-Identifier: MIT
/*
 * pqrand: a table of random rows written by d9prof's Parquet writer
 * (analysis/parquet.c), and the same rows as text, for a real reader to
 * be checked against (tests/e2e/tables.sh: DuckDB's rows must be these).
 * Columns: an INT64 that is NULL now and then, the extremes, runs,
 * growing times and noise (every encoding path: deltas of any width); a
 * BOOLEAN; a STRING, NULL now and then, from a few (a dictionary) or
 * from many (PLAIN), short and past the statistics' 64 bytes, in UTF-8;
 * a LIST<STRING> of 0 to 5 items; growing times, NULL now and then; a
 * count with the extremes every thousand rows (deltas). Text: a row a line, columns by
 * tabs, NULL as \N, a list's items joined by ';'.
 *
 *   pqrand FILE TEXT ROWS SEED
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/parquet.h"

static uint64_t x;

static uint64_t next(void)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* a random UTF-8 string of 0 to @max characters, no tab, ';' or '\' */
static size_t word(char *buf, size_t max)
{
	static const char *const part[] = {"a", "b", "z", "0", "_", " ",
					   ":", "é", "ß", "→", "𝄞"};
	size_t n = next() % (max + 1), len = 0;

	for (size_t i = 0; i < n; i++) {
		const char *p = part[next() % (sizeof(part) / sizeof(part[0]))];

		memcpy(buf + len, p, strlen(p));
		len += strlen(p);
	}
	buf[len] = '\0';
	return len;
}

int main(int argc, char **argv)
{
	static const struct pq_column cols[] = {{"v", PQ_INT64, 1},  {"b", PQ_BOOL, 0},
						{"s", PQ_STRING, 1}, {"l", PQ_STRINGS, 0},
						{"t", PQ_INT64, 1},  {"w", PQ_INT64, 0}};
	struct pq_table *t;
	FILE *f, *txt;
	long rows;
	char w[512];
	int many;

	if (argc != 5)
		return 2;
	f = fopen(argv[1], "w");
	txt = fopen(argv[2], "w");
	rows = atol(argv[3]);
	x = strtoull(argv[4], NULL, 10) * 2654435761u + 88172645463325252ull;
	many = x % 2;
	if (!f || !txt || pq__new(f, cols, 6, "pqrand", &t))
		return 1;
	for (long i = 0; i < rows; i++) {
		uint64_t r = next();
		int64_t v;

		switch (r % 8) {
		case 0:
			v = INT64_MIN;
			break;
		case 1:
			v = INT64_MAX;
			break;
		case 2:
			v = (int64_t)next();
			break;
		case 3:
			v = i;
			break;
		case 4:
			v = -(int64_t)(next() % 1000);
			break;
		case 5:
			v = 1795000000000000000LL + i * 1000 + (int64_t)(next() % 100);
			break;
		default:
			v = 7;
			break;
		}
		if (r % 13 == 0) {
			pq_null(t, 0);
			fputs("\\N", txt);
		} else {
			pq_i64(t, 0, v);
			fprintf(txt, "%lld", (long long)v);
		}
		pq_bool(t, 1, (int)(r >> 20) & 1);
		fprintf(txt, "\t%s", (r >> 20) & 1 ? "true" : "false");
		if ((r >> 8) % 9 == 0) {
			pq_null(t, 2);
			fputs("\t\\N", txt);
		} else {
			size_t n =
				many ? word(w, (r >> 30) % 4 ? 8 : 60)
				     : (size_t)sprintf(w, "name%d", (int)(r >> 40) % 5);

			pq_str(t, 2, w, n);
			fprintf(txt, "\t%s", w);
		}
		fputc('\t', txt);
		for (int k = 0, m = (int)((r >> 50) % 6); k < m; k++) {
			size_t n = word(w, 6);

			pq_item(t, 3, w, n);
			fprintf(txt, "%s%s", k ? ";" : "", w);
		}
		/* times that grow, and a count with the extremes now and then:
		 * what DELTA_BINARY_PACKED is for, at every bit width */
		if ((r >> 12) % 17 == 0) {
			pq_null(t, 4);
			fputs("\t\\N", txt);
		} else {
			v = 1795000000000000000LL + i * 1000 + (int64_t)((r >> 16) % 100);
			pq_i64(t, 4, v);
			fprintf(txt, "\t%lld", (long long)v);
		}
		v = i % 1000 == 999 ? (i % 2000 == 999 ? INT64_MIN : INT64_MAX) : i;
		pq_i64(t, 5, v);
		fprintf(txt, "\t%lld\n", (long long)v);
		if (pq_row_end(t))
			return 1;
	}
	if (pq__finish(t))
		return 1;
	pq__free(t);
	return fclose(f) || fclose(txt);
}
