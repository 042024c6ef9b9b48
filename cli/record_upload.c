// SPDX-License-Identifier: MIT
/*
 * record_upload.c - `record --upload s3://BUCKET[/PREFIX]`: each sealed
 * segment (--rotate) and dump (--flight) goes to the store under the
 * object-store layout, PREFIX/DATE/HHMM/SERVICE/HOST/BOOT/NAME, by the
 * background uploader (store/upload.h), with what `d9prof ls` shows in the
 * object's metadata (x-amz-meta-d9prof-*: kind, from, to, a dump's reason,
 * a segment's index: store/catalog.h).
 * Failures are said as they come (at the next file), and counted in the
 * summary; recording goes on locally whatever the store does.
 *
 * With --upload-tables, each sealed segment's Parquet tables too: `d9prof
 * export --format parquet` of it in a child at the lowest priority (nice
 * 19, SCHED_BATCH: on a saturated machine it gets some 1.5% of a CPU,
 * where SCHED_IDLE would get none, and the stop would wait for it in
 * vain), one at a time, TABLES_PENDING segments waiting at most
 * (past that a segment goes without, counted), its files put beside the
 * segments as PREFIX/TABLE/service=S/host=H/date=D/PART.parquet once it
 * exits (looked for at each sealed segment, and at the stop), then
 * removed from the local disk.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "lib/text.h"
#include "record/proc.h"
#include "record/record.h"
#include "store/catalog.h"
#include "store/upload.h"

/* How long the stop waits for what is still queued. */
#define FINISH_WAIT_S  30
#define TABLES_PENDING 8
#define TABLES_WAIT_S  120 /* the stop waits this long for the exporters */

struct tables {
	char dir[PATH_MAX - 64]; /* the children's output, made at the start */
	pid_t pid;		 /* the exporter running, 0: none */
	uint64_t index;		 /* ... of this segment */
	int fd[TABLES_PENDING];	 /* segments waiting (fds), oldest first */
	uint64_t ix[TABLES_PENDING];
	unsigned int n;
	uint64_t segments, files, bytes, failed, skipped, left;
	double cpu_s;	   /* the exporters' CPU time */
	uint64_t deadline; /* the stop's wait ends, CLOCK_MONOTONIC */
	int ran_out;	   /* ... and did: the rest go without */
	uint64_t from, to; /* the sealed segments' span, CLOCK_MONOTONIC */
};

struct record_upload {
	struct uploader *u;
	char url[600];
	struct tables *tab; /* --upload-tables */
};

/* ---- --upload-tables ------------------------------------------------- */

static int tables_new(struct tables **out)
{
	const char *tmp = getenv("TMPDIR");
	struct tables *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "%s/d9prof-tables-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(t->dir)) {
		free(t);
		return -1;
	}
	*out = t;
	return 0;
}

/* Under @path (@depth levels of directories at most), each regular file
 * put as its path from @from on (with @ru; not if !@put), then removed;
 * directories too, once empty. */
static void put_tree(struct record_upload *ru, char *path, size_t from, int depth,
		     int put)
{
	size_t len = strlen(path);
	DIR *d = opendir(path);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		struct stat sb;
		int fd;

		if (e->d_name[0] == '.' ||
		    (size_t)snprintf(path + len, PATH_MAX - len, "/%s", e->d_name) >=
			    PATH_MAX - len) {
			path[len] = '\0';
			continue;
		}
		if (lstat(path, &sb))
			sb.st_mode = 0;
		if (S_ISDIR(sb.st_mode) && depth > 0) {
			put_tree(ru, path, from, depth - 1, put);
			rmdir(path);
		} else if (put && S_ISREG(sb.st_mode) && len + 1 > from &&
			   (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			static const struct s3_meta kind = {"d9prof-kind", "table"};
			int err = upload__put(ru->u, fd, path + from, &kind, 1,
					      UPLOAD_UNLINKED_OK);

			if (err) {
				warning("upload: %s not queued: %s", path + from,
					strerror(-err));
			} else {
				ru->tab->files++;
				ru->tab->bytes += (uint64_t)sb.st_size;
			}
			close(fd);
		}
		if (!S_ISDIR(sb.st_mode))
			unlink(path);
		path[len] = '\0';
	}
	if (d)
		closedir(d);
}

/* the last line the exporter said, for a warning */
static void last_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	char line[400];

	buf[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			snprintf(buf, len, "%.*s", (int)strcspn(line, "\n"), line);
	if (f)
		fclose(f);
}

/* The exporter of segment fd @fd (of index @index) started; 0 or -errno */
static int tables_spawn(struct tables *t, int fd, uint64_t index)
{
	char out[PATH_MAX], err[PATH_MAX];
	pid_t pid;

	snprintf(out, sizeof(out), "%s/%llu", t->dir, (unsigned long long)index);
	snprintf(err, sizeof(err), "%s/%llu.err", t->dir, (unsigned long long)index);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* async-signal-safe calls only until the exec */
		struct sched_param sp = {0};
		int null = open("/dev/null", O_RDWR),
		    e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		setpriority(PRIO_PROCESS, 0, 19);
		sched_setscheduler(0, SCHED_BATCH, &sp);
		if (null >= 0)
			dup2(null, 0), dup2(null, 1);
		if (e >= 0)
			dup2(e, 2);
		if (fd == 3)
			fcntl(3, F_SETFD, 0);
		else if (dup2(fd, 3) < 0)
			_exit(127);
		execl("/proc/self/exe", "d9prof", "export", "--format", "parquet", "-i",
		      "/dev/fd/3", "-o", out, (char *)NULL);
		_exit(127);
	}
	t->pid = pid;
	t->index = index;
	return 0;
}

/* Look at the exporter (wait for it with @block): once it ended, its
 * tables are handed to the uploader and the next one starts. */
static void tables_poll(struct record_upload *ru, int block)
{
	struct tables *t = ru->tab;
	char path[PATH_MAX], why[300];
	struct rusage use;
	int status, ok;

	while (t && (t->pid || t->n)) {
		if (t->pid) {
			pid_t r = wait4(t->pid, &status, WNOHANG, &use);

			while (block && record_now_ns() < t->deadline &&
			       (r == 0 || (r < 0 && errno == EINTR))) {
				nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
				r = wait4(t->pid, &status, WNOHANG, &use);
			}
			if (block && r == 0) {
				kill(t->pid, SIGKILL);
				r = wait4(t->pid, &status, 0, &use);
				t->ran_out = 1;
			}
			if (r == 0 || (r < 0 && errno == EINTR))
				return;
			t->pid = 0;
			t->cpu_s +=
				(double)use.ru_utime.tv_sec + use.ru_utime.tv_usec / 1e6 +
				(double)use.ru_stime.tv_sec + use.ru_stime.tv_usec / 1e6;
			snprintf(path, sizeof(path), "%s/%llu.err", t->dir,
				 (unsigned long long)t->index);
			ok = r > 0 && WIFEXITED(status) && !WEXITSTATUS(status);
			if (ok) {
				t->segments++;
			} else {
				if (t->ran_out)
					snprintf(
						why, sizeof(why),
						"unfinished when the stop's %d s for tables ran "
						"out (at nice 19 it has only the CPU the "
						"machine leaves)",
						TABLES_WAIT_S);
				else
					last_line(path, why, sizeof(why));
				t->failed++;
				warning("upload-tables: no tables for segment %llu: %s",
					(unsigned long long)t->index,
					why[0] ? why : "the exporter failed");
			}
			unlink(path);
			snprintf(path, sizeof(path), "%s/%llu", t->dir,
				 (unsigned long long)t->index);
			put_tree(ru, path, strlen(path) + 1, 4, ok);
			rmdir(path);
		}
		if (t->n) {
			int fd = t->fd[0];
			uint64_t ix = t->ix[0];
			int err;

			memmove(t->fd, t->fd + 1, (t->n - 1) * sizeof(*t->fd));
			memmove(t->ix, t->ix + 1, (t->n - 1) * sizeof(*t->ix));
			t->n--;
			if (t->ran_out) {
				close(fd);
				t->left++;
				continue;
			}
			err = tables_spawn(t, fd, ix);
			close(fd);
			if (err) {
				t->failed++;
				warning("upload-tables: no tables for segment %llu: %s",
					(unsigned long long)ix, strerror(-err));
			}
		}
	}
}

/* Segment @s sealed: its tables wanted */
static void tables_sealed(struct record_upload *ru, const struct record_sealed *s)
{
	struct tables *t = ru->tab;
	int fd;

	tables_poll(ru, 0);
	if (s->fd < 0)
		return;
	if (t->n == TABLES_PENDING) {
		t->skipped++;
		return;
	}
	fd = fcntl(s->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0) {
		t->skipped++;
		return;
	}
	if (!t->from || s->from < t->from)
		t->from = s->from;
	t->to = s->to > t->to ? s->to : t->to;
	t->fd[t->n] = fd;
	t->ix[t->n++] = s->index;
	tables_poll(ru, 0);
}

/* The stop: every segment's tables made and handed over, the directory
 * removed; what it cost said */
static void tables_finish(struct record_upload *ru)
{
	struct tables *t = ru->tab;
	char sz[32];
	double span;

	if (!t)
		return;
	if (t->pid || t->n)
		info("upload-tables: making the tables of %u segment%s (waiting %d s at "
		     "most)",
		     t->n + !!t->pid, t->n + !!t->pid == 1 ? "" : "s", TABLES_WAIT_S);
	t->deadline = record_now_ns() + (uint64_t)TABLES_WAIT_S * 1000000000ULL;
	tables_poll(ru, 1);
	rmdir(t->dir);
	span = (double)(t->to - t->from) / 1e9;
	info("upload-tables: %llu segments' tables (%llu files, %s) in %.2f s of CPU "
	     "(%.2f%% of a core over the %.1f s they cover)%s",
	     (unsigned long long)t->segments, (unsigned long long)t->files,
	     text_size((double)t->bytes, sz, sizeof(sz)), t->cpu_s,
	     span > 0 ? 100 * t->cpu_s / span : 0.0, span,
	     t->failed || t->skipped || t->left ? "; some segments without" : "");
	if (t->skipped)
		warning("upload-tables: %llu segments without tables: %d were waiting for "
			"the exporter",
			(unsigned long long)t->skipped, TABLES_PENDING);
	if (t->left)
		warning("upload-tables: %llu segments without tables: the stop's %d s "
			"for tables ran out before their turn",
			(unsigned long long)t->left, TABLES_WAIT_S);
	free(t);
	ru->tab = NULL;
}

int record_upload__start(const char *url, const char *endpoint, int tables,
			 struct record_upload **out)
{
	struct record_upload *ru;
	struct s3_config c;
	char bucket[64], prefix[512], why[512];
	int err;

	*out = NULL;
	if (s3_parse_url(url, bucket, sizeof(bucket), prefix, sizeof(prefix))) {
		usage_error("record ",
			    "bad --upload '%s': want s3://BUCKET or s3://BUCKET/PREFIX",
			    url);
		return EXIT_USAGE;
	}
	why[0] = '\0';
	err = s3_config__load(&c, endpoint, why, sizeof(why));
	if (err) {
		error("--upload %s: %s", url, why[0] ? why : strerror(-err));
		return EXIT_FAIL;
	}
	ru = calloc(1, sizeof(*ru));
	if (!ru || (err = upload__new(&c, bucket, prefix, &ru->u))) {
		s3_config__clear(&c);
		free(ru);
		error("--upload %s: %s", url, s3_strerror(err ? err : -ENOMEM));
		return EXIT_FAIL;
	}
	snprintf(ru->url, sizeof(ru->url), "%s", url);
	if (tables && tables_new(&ru->tab)) {
		error("--upload-tables: cannot make a directory for the tables: %s",
		      strerror(errno));
		upload__free(ru->u);
		s3_config__clear(&c);
		free(ru);
		return EXIT_FAIL;
	}
	info("uploading to %s (%s, %s, credentials from %s%s)", url, c.endpoint, c.region,
	     c.source, c.expires ? ", fetched again before they expire" : "");
	s3_config__clear(&c);
	*out = ru;
	return 0;
}

/* The failures since the last look, in one line. */
static void report(struct record_upload *ru)
{
	struct upload_stats st;
	uint64_t fresh;

	upload__poll(ru->u, &st, &fresh);
	if (fresh)
		warning("upload: %llu failure%s (%s)%s", (unsigned long long)fresh,
			fresh == 1 ? "" : "s", st.last_error,
			st.broken ? "; no more uploads: recording goes on locally"
				  : "; tried again");
}

/* A metadata value S3 takes: printable ASCII, '?' for the rest. */
static void ascii(const char *s, char *buf, size_t len)
{
	size_t n = 0;

	for (; s && *s && n + 1 < len; s++)
		buf[n++] = *s >= 0x20 && *s < 0x7f ? *s : '?';
	buf[n] = '\0';
}

static void put(struct record_upload *ru, int fd, const char *key, const char *kind,
		uint64_t from, uint64_t to, const char *why, const char *index)
{
	int64_t off = record_realtime_offset_ns();
	char f[24], t[24], reason[257];
	struct s3_meta meta[5] = {
		{"d9prof-kind", kind}, {"d9prof-from", f}, {"d9prof-to", t}};
	size_t n = 3;
	int err;

	report(ru);
	if (fd < 0 || !key || !*key) {
		warning("upload: %s not uploaded: it could not be opened again", kind);
		return;
	}
	/* unix ns, the wall clock */
	snprintf(f, sizeof(f), "%lld", (long long)((int64_t)from + off));
	snprintf(t, sizeof(t), "%lld", (long long)((int64_t)to + off));
	if (why) {
		ascii(why, reason, sizeof(reason));
		meta[n++] = (struct s3_meta){"d9prof-reason", reason};
	}
	if (index)
		meta[n++] = (struct s3_meta){CATALOG_INDEX_META, index};
	err = upload__put(ru->u, fd, key, meta, n, 0);
	if (err)
		warning("upload: %s not queued: %s", key, strerror(-err));
}

void record_upload__sealed(struct record_upload *ru, const struct record_sealed *s)
{
	char index[CATALOG_INDEX_LEN];

	catalog_index_format(&(struct catalog_index){.polls = s->polls,
						     .samples = s->samples,
						     .lost = s->lost,
						     .max_poll_ns = s->max_poll_ns,
						     .max_delay_ns = s->max_delay_ns},
			     index, sizeof(index));
	put(ru, s->fd, s->key, "segment", s->from, s->to, NULL, index);
	if (ru->tab)
		tables_sealed(ru, s);
}

void record_upload__dump(struct record_upload *ru, const struct record_dump *d)
{
	put(ru, d->fd, d->key, "dump", d->from, d->to, d->why, NULL);
}

void record_upload__finish(struct record_upload *ru)
{
	struct upload_stats st;
	char sz[32];

	if (!ru)
		return;
	tables_finish(ru);
	report(ru);
	upload__poll(ru->u, &st, NULL);
	if (st.waiting)
		info("upload: waiting up to %d s for %u file%s", FINISH_WAIT_S,
		     st.waiting, st.waiting == 1 ? "" : "s");
	upload__finish(ru->u, FINISH_WAIT_S, &st);
	report(ru);
	info("upload to %s: %llu uploaded (%s), %llu retried, %llu given up", ru->url,
	     (unsigned long long)st.uploaded, text_size((double)st.bytes, sz, sizeof(sz)),
	     (unsigned long long)st.retried, (unsigned long long)st.given_up);
	upload__free(ru->u);
	free(ru);
}
