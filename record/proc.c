// SPDX-License-Identifier: MIT
/*
 * proc.c - small reads of /proc (record.h: "reading /proc").
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "record/proc.h"

size_t record_read_file(const char *path, char *buf, size_t len, int nul_to_space)
{
	FILE *f = fopen(path, "re");
	size_t n = 0, i;

	buf[0] = '\0';
	if (!f)
		return 0;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (i = 0; nul_to_space && i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[strcspn(buf, "\n")] = '\0';
	return n;
}

int proc_stat(pid_t pid, char *state, long long *v, unsigned int first, unsigned int n)
{
	char path[64], buf[1024], *p;
	unsigned int field = 3;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!record_read_file(path, buf, sizeof(buf), 0))
		return -1;
	/* comm may hold spaces and parens: fields restart after the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	p += 2;
	if (state)
		*state = *p;
	for (; *p && field < first + n; field++) {
		char *end;
		long long x = strtoll(p, &end, 10);

		if (field >= first)
			v[field - first] = x;
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
	}
	return field == first + n ? 0 : -1;
}

int proc_for_each_tid(pid_t pid, void (*fn)(void *ctx, pid_t tid), void *ctx)
{
	char path[64];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		pid_t tid = atoi(de->d_name);

		if (tid <= 0)
			continue;
		n++;
		if (fn)
			fn(ctx, tid);
	}
	closedir(d);
	return n;
}

/* The last field of the NSpid line of /proc/PID/task/TID/status: the
 * thread's id in its innermost pid namespace. */
static pid_t inner_tid(pid_t pid, pid_t tid)
{
	char path[96], line[256];
	pid_t id = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (long v; (v = strtol(p, &end, 10)) > 0 && end != p; p = end)
			id = (pid_t)v;
		break;
	}
	fclose(f);
	return id;
}

struct find_inner {
	pid_t pid, tid;
	int found;
};

static void match_inner(void *ctx, pid_t tid)
{
	struct find_inner *x = ctx;

	if (!x->found && inner_tid(x->pid, tid) == x->tid)
		x->found = 1;
}

int proc_has_thread(pid_t pid, pid_t tid, int inner)
{
	char path[64];
	struct find_inner x = {.pid = pid, .tid = tid};

	if (tid <= 0)
		return 0;
	if (!inner) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
		return !access(path, F_OK);
	}
	proc_for_each_tid(pid, match_inner, &x);
	return x.found;
}

uint64_t proc_self_run_delay_ns(void)
{
	char buf[128];
	unsigned long long on, wait;

	if (!record_read_file("/proc/thread-self/schedstat", buf, sizeof(buf), 0) ||
	    sscanf(buf, "%llu %llu", &on, &wait) != 2)
		return 0;
	return wait;
}

int proc_identity(pid_t pid, char *buf, size_t len)
{
	struct timespec real, boot;
	char id[64];
	long long ticks;
	long hz = sysconf(_SC_CLK_TCK);

	buf[0] = '\0';
	if (hz <= 0 || proc_stat(pid, NULL, &ticks, 22, 1) || ticks < 0 ||
	    !record_read_file("/proc/sys/kernel/random/boot_id", id, sizeof(id), 0) ||
	    clock_gettime(CLOCK_REALTIME, &real) || clock_gettime(CLOCK_BOOTTIME, &boot))
		return -1;
	/* the start in ticks since boot (CLOCK_BOOTTIME), as a wall time */
	snprintf(buf, len, "%s %d %lld %lld", id, (int)pid, ticks,
		 (long long)real.tv_sec - ((long long)boot.tv_sec - ticks / hz));
	return 0;
}

uint64_t proc_cpu_ns(pid_t pid)
{
	long long t[2];
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0 || proc_stat(pid, NULL, t, 14, 2) || t[0] < 0 || t[1] < 0)
		return 0;
	return (uint64_t)(t[0] + t[1]) * (1000000000ULL / (uint64_t)hz);
}

/* ---- the recorder's priority ----------------------------------------- */

#define RECORD_NICE (-20) /* where it may */

static int nice_before = INT_MIN; /* record_boost() changed it from this */

void record_boost(void)
{
	int n;

	errno = 0;
	n = getpriority(PRIO_PROCESS, 0);
	if (!errno && n > RECORD_NICE && !setpriority(PRIO_PROCESS, 0, RECORD_NICE))
		nice_before = n;
}

#define BOOST_WAIT_NS 20000000ULL

static uint64_t waited_before; /* run delay at the start or the unboost */

void record_boost_if_waiting(void)
{
	if (nice_before == INT_MIN &&
	    proc_self_run_delay_ns() >= waited_before + BOOST_WAIT_NS)
		record_boost();
}

void record_unboost(void)
{
	if (nice_before != INT_MIN)
		setpriority(PRIO_PROCESS, 0, nice_before);
	nice_before = INT_MIN;
	waited_before = proc_self_run_delay_ns();
}

/* ---- clocks ------------------------------------------------------------- */

uint64_t record_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int64_t record_realtime_offset_ns(void)
{
	struct timespec rt, mono;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &rt);
	return (int64_t)(rt.tv_sec - mono.tv_sec) * 1000000000LL +
	       (rt.tv_nsec - mono.tv_nsec);
}

int proc_which(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(buf, len, "%s", name);
		return 0;
	}
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if ((size_t)snprintf(buf, len, "%.*s/%s", (int)n, n ? path : ".", name) <
			    len &&
		    !access(buf, X_OK))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

int proc_for_each_own_file(pid_t pid, int (*fn)(void *ctx, const char *path), void *ctx)
{
	char line[PATH_MAX + 128], last[PATH_MAX] = "";
	int ret = 0;
	FILE *f;

	snprintf(line, sizeof(line), "/proc/%d/maps", (int)pid);
	f = fopen(line, "re");
	if (!f)
		return -errno;
	while (!ret && fgets(line, sizeof(line), f)) {
		char perms[8], *path;
		int at = 0;

		/* start-end perms offset dev inode path */
		if (sscanf(line, "%*x-%*x %7s %*x %*x:%*x %*u %n", perms, &at) < 1 ||
		    !at || perms[2] != 'x')
			continue;
		path = line + at;
		path[strcspn(path, "\n")] = '\0';
		if (path[0] != '/' || strstr(path, " (deleted)") ||
		    proc_system_path(path) || !strcmp(path, last))
			continue;
		snprintf(last, sizeof(last), "%s", path);
		ret = fn(ctx, path);
	}
	fclose(f);
	return ret;
}

int proc_system_path(const char *p)
{
	static const char *const dirs[] = {"/lib/",	   "/lib32/",	  "/lib64/",
					   "/usr/lib/",	   "/usr/lib32/", "/usr/lib64/",
					   "/usr/libexec/"};

	if (strstr(p, "/libd9prof.so"))
		return 1; /* the shim: built with frame pointers */
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!strncmp(p, dirs[i], strlen(dirs[i])))
			return 1;
	return 0;
}
