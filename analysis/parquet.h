/* SPDX-License-Identifier: MIT */
/*
 * parquet.h - a table written as an Apache Parquet file, the subset the
 * exports need (parquet.c): what DuckDB, Trino/Athena, Spark, ClickHouse
 * and BigQuery read.
 *
 * Columns are INT64, BOOLEAN, STRING (BYTE_ARRAY, UTF8) and LIST<STRING>
 * (the three-level LIST of the spec: "NAME.list.element"), each required
 * or optional (NULL allowed; a list column is required, an empty list
 * allowed). Rows are buffered and written as row groups of up to
 * PQ_GROUP_ROWS rows (or PQ_GROUP_BYTES of strings): per column chunk one
 * data page (v1, levels RLE), its values PLAIN; for integers
 * DELTA_BINARY_PACKED where that compresses smaller (both are made); for
 * strings a dictionary page and RLE_DICTIONARY indices where the distinct
 * strings are at most half the values; pages zstd-compressed (level 3); column
 * statistics (null count, min and max: signed for INT64, bytewise for
 * strings of up to 64 bytes) for pruning, with TypeDefinedOrder column
 * orders so that readers trust them. Memory: one row group's values and
 * its pages, nothing per row written.
 *
 * Use: pq__new() with the columns, then per row one value per column
 * (pq_i64(), pq_bool(), pq_str(), pq_null(); for a list column any number
 * of pq_item() calls) and pq_row_end(); pq__finish() writes the rest and
 * the footer. Errors are sticky (as pbuf's): a call after one is a no-op,
 * and pq_row_end() and pq__finish() return the first: -EINVAL for a row
 * that gave a column no value, two values, a NULL to a required column or
 * a value of the wrong kind; -ENOMEM; -EIO for a failed write; -EOVERFLOW
 * past 2^31 values in a group. Not thread-safe.
 */
#ifndef D9_ANALYSIS_PARQUET_H
#define D9_ANALYSIS_PARQUET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pq_kind {
	PQ_INT64 = 0,
	PQ_BOOL = 1,
	PQ_STRING = 2,
	PQ_STRINGS = 3, /* LIST<STRING> */
};

struct pq_column {
	const char *name;
	enum pq_kind kind;
	int nullable; /* 1: optional (not for PQ_STRINGS) */
};

#define PQ_GROUP_ROWS  131072
#define PQ_GROUP_BYTES (32u << 20)

struct pq_table;

/* A table of the @n columns @cols (copied, names too) written to @out,
 * which must be at offset 0 and outlive the table; @created_by is the
 * footer's "created_by" (copied). 0, -EINVAL (no columns, a bad kind, a
 * nullable list), -ENOMEM. */
int pq__new(FILE *out, const struct pq_column *cols, size_t n, const char *created_by,
	    struct pq_table **out_table);
void pq_i64(struct pq_table *t, size_t col, int64_t v);
void pq_bool(struct pq_table *t, size_t col, int v);
/* @s with its @len bytes; NULL @s is NULL (pq_null()). */
void pq_str(struct pq_table *t, size_t col, const char *s, size_t len);
void pq_null(struct pq_table *t, size_t col);
/* One more item of this row's list in column @col. */
void pq_item(struct pq_table *t, size_t col, const char *s, size_t len);
/* The row is whole: 0 or the sticky error. */
int pq_row_end(struct pq_table *t);
/* Rows written or buffered so far. */
uint64_t pq_rows(const struct pq_table *t);
/* Flush the last row group and write the footer: 0 or the first error.
 * The file is not closed. */
int pq__finish(struct pq_table *t);
/* NULL is a no-op. */
void pq__free(struct pq_table *t);

#endif /* D9_ANALYSIS_PARQUET_H */
