// SPDX-License-Identifier: MIT
/*
 * Finding, trusting and mapping the d9prof shim segment of another process.
 *
 * The shim's segment is a memfd; /proc/PID/maps shows it as
 * "/memfd:d9prof-seg (deleted)" with its inode. We open it through
 * /proc/PID/map_files (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), else
 * through the shim's open fd in /proc/PID/fd (needs ptrace-read access, the
 * same access perf_event_open needs), and check that what we opened is that
 * inode. Both paths work across PID and mount namespaces.
 *
 * The lease: the recording loop renews it on every drain, and so does a
 * thread of its own (lease_thread) every D9_LEASE_NS / 8, so that the
 * loop's long pieces of work (sealing a segment and opening the next,
 * symbolizing, a slow disk) never let it lapse. The thread renews only
 * while the loop has renewed within LOOP_BUSY_MAX_NS: a loop stuck for
 * good (or a recorder stopped or killed, threads and all) leaves the
 * target detached after the lease as before. It writes lease_deadline and
 * our copy of it, nothing else; attach, detach and the lapse's handling
 * stay the loop's.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "libprof/d9_segment.h"
#include "record/proc.h"
#include "record/segment.h"
#include "symbol/symbolize.h"

/*
 * Segment times to CLOCK_MONOTONIC ns. With D9_CLOCK_TSC the shim stamps raw
 * ticks; the kernel's CLOCK_MONOTONIC runs off the same TSC, so the map is
 * linear up to NTP's slew (parts per million). Every renew (each drain tick)
 * takes a (tsc, ns) pair; records drained after it were written between the
 * previous pair and this one, and are interpolated on the line through the
 * two: a 20 ms stretch, so slew costs nanoseconds, not microseconds.
 */
struct tsc_fit {
	uint64_t tsc, ns;   /* the latest pair */
	double ns_per_tick; /* slope through the pair before it */
};

/* How long the recording loop may be busy in one piece of work and keep
 * the lease (lease_thread). */
#define LOOP_BUSY_MAX_NS (30ULL * 1000000000ULL)

struct shim_seg {
	void *base;
	size_t size;
	pid_t pid;
	struct d9_seg_layout layout; /* verified once, never re-read */
	int tsc;		     /* times are TSC ticks */
	struct tsc_fit fit;
	uint64_t armed;	    /* the lease deadline we wrote last
			     * (atomic: the lease thread too) */
	uint64_t lapsed_ns; /* the one a renew found run out, ns */
	/* the lease thread; what it shares is read and written atomically */
	pthread_t thread;
	int thread_on;
	pthread_mutex_t lock; /* with wake: its sleep, and stop */
	pthread_cond_t wake;
	int stop;
	uint64_t lease_ticks; /* D9_LEASE_NS in the segment's unit */
	uint64_t loop_ns;     /* the loop's last renew */
	unsigned long inode;  /* the memfd's */
};

static uint64_t rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return 0;
#endif
}

/* A (tsc, ns) pair: the ns read between two tsc reads, paired with their
 * midpoint. A recorder preempted between the reads would pair them
 * milliseconds apart and shift every record converted against the pair
 * (samples at poll boundaries then cross into the next poll), so take the
 * tightest of several tries. */
static void tsc_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 8; i++) {
		uint64_t a = rdtsc(), n = record_now_ns(), b = rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = n;
		}
		/* a clean read: a vDSO call's worth of ticks */
		if (best < 4000 && i >= 2)
			break;
	}
}

static void fit_update(struct tsc_fit *f)
{
	uint64_t tsc, ns;

	tsc_pair(&tsc, &ns);
	/* a slope over less than 1 ms would carry the pairs' jitter */
	if (tsc - f->tsc > 0 && ns - f->ns >= 1000000)
		f->ns_per_tick = (double)(ns - f->ns) / (double)(tsc - f->tsc);
	if (ns - f->ns >= 1000000 || !f->ns_per_tick) {
		f->tsc = tsc;
		f->ns = ns;
	}
}

static void fit_init(struct tsc_fit *f)
{
	struct timespec d = {0, 2000000};

	tsc_pair(&f->tsc, &f->ns);
	f->ns_per_tick = 0;
	nanosleep(&d, NULL);
	fit_update(f);
}

void shim_seg__clock(const struct shim_seg *s, struct shim_clock *c)
{
	c->tsc = s->fit.tsc;
	c->ns = s->fit.ns;
	/* a TSC segment's slope is never 0: fit_init() measured one */
	c->ns_per_tick = s->tsc ? s->fit.ns_per_tick : 0;
}

uint64_t shim_seg__ns(const struct shim_seg *s, uint64_t t)
{
	struct shim_clock c;

	shim_seg__clock(s, &c);
	return shim_clock__ns(&c, t);
}

/* now + D9_LEASE_NS in the segment's unit */
static uint64_t lease_deadline(struct shim_seg *s)
{
	if (!s->tsc)
		return record_now_ns() + D9_LEASE_NS;
	return rdtsc() + __atomic_load_n(&s->lease_ticks, __ATOMIC_RELAXED);
}

/* The fit changed: the lease in ticks, for the loop and the thread. */
static void lease_length(struct shim_seg *s)
{
	if (s->tsc)
		__atomic_store_n(&s->lease_ticks,
				 (uint64_t)((double)D9_LEASE_NS / s->fit.ns_per_tick),
				 __ATOMIC_RELAXED);
}

struct seg_map {
	char range[64];
	unsigned long inode;
};

/* The segment mappings listed in /proc/PID/maps (at most @max). */
static int find_maps(pid_t pid, struct seg_map *maps, int max)
{
	char path[64], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && n < max) {
		char range[64], perms[8], dev[16];
		unsigned long long off;
		unsigned long inode;
		int pos = 0;
		size_t l;

		if (sscanf(line, "%63s %7s %llx %15s %lu %n", range, perms, &off, dev,
			   &inode, &pos) < 5 ||
		    !pos)
			continue;
		/* the whole path, exactly: a file named ".../memfd:d9prof-seg"
		 * is not the shim's memfd */
		l = strcspn(line + pos, "\n");
		line[pos + l] = '\0';
		if (strcmp(line + pos, "/memfd:" D9_SEG_NAME " (deleted)") &&
		    strcmp(line + pos, "/memfd:" D9_SEG_NAME))
			continue;
		snprintf(maps[n].range, sizeof(maps[n].range), "%s", range);
		maps[n].inode = inode;
		n++;
	}
	fclose(f);
	return n;
}

/* Open the memfd with inode @inode of @pid, by map_files then by fd. */
static int open_seg(pid_t pid, const struct seg_map *m)
{
	char path[PATH_MAX], link[256];
	struct stat st;
	struct dirent *de;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%s", (int)pid, m->range);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0)
		return fd;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	fd = -ENOENT;
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid, de->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:" D9_SEG_NAME, 7 + strlen(D9_SEG_NAME)))
			continue;
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			continue;
		}
		if (fstat(fd, &st) == 0 && st.st_ino == m->inode)
			break;
		close(fd);
		fd = -ENOENT;
	}
	closedir(d);
	return fd;
}

static int defined_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return 1;
#else
	return 0;
#endif
}

static int verify(pid_t pid, int fd, void **basep, size_t *sizep,
		  struct d9_seg_layout *layout, uint32_t *clock, char *why, size_t len)
{
	struct d9_seg_hdr *h;
	struct stat st, pst;
	char ppath[64];
	void *base;
	int seals;

	if (fstat(fd, &st))
		return -errno;
	snprintf(ppath, sizeof(ppath), "/proc/%d", (int)pid);
	if (stat(ppath, &pst))
		return -errno;
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, len, "not a regular file");
		return -EPERM;
	}
	if ((st.st_mode & 07777) != 0600) {
		snprintf(why, len, "mode %04o, want 0600", st.st_mode & 07777);
		return -EPERM;
	}
	if (st.st_uid != pst.st_uid) {
		snprintf(why, len, "owned by uid %u, the process runs as uid %u",
			 st.st_uid, pst.st_uid);
		return -EPERM;
	}
	if ((uint64_t)st.st_size < D9_SEG_HDR_SIZE ||
	    (uint64_t)st.st_size > D9_SEG_MAP_MAX) {
		snprintf(why, len, "%lld bytes, not a d9prof segment's size",
			 (long long)st.st_size);
		return -EPERM;
	}
	/* the target must not be able to shrink it under our mapping (a
	 * SIGBUS in the recorder): the shim seals its memfd; a file that
	 * cannot be sealed is not a memfd at all */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		snprintf(why, len, "%s",
			 seals < 0 ? "not a memfd" : "not sealed against shrinking");
		return -EPERM;
	}
	base = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	h = base;
	switch (d9_seg_check(base, (uint64_t)st.st_size, layout)) {
	case 0:
		break;
	case -EPROTO:
		if (h->magic == D9_SEG_MAGIC)
			snprintf(why, len, "segment version %u, this d9prof reads %u",
				 h->version, D9_SEG_VERSION);
		else
			snprintf(why, len, "bad magic");
		goto bad;
	default:
		snprintf(why, len, "inconsistent sizes");
		goto bad;
	}
	*clock = __atomic_load_n(&h->clock, __ATOMIC_RELAXED);
	if (*clock != CLOCK_MONOTONIC && !(*clock == D9_CLOCK_TSC && (defined_tsc()))) {
		snprintf(why, len, "unknown clock %#x", *clock);
		goto bad;
	}
	if (h->pid != (uint32_t)symbol_inner_pid(pid)) {
		snprintf(why, len, "made by pid %u, not this process", h->pid);
		goto bad;
	}
	*basep = base;
	*sizep = st.st_size;
	return 0;
bad:
	munmap(base, st.st_size);
	return -EPERM;
}

int shim_seg__open(pid_t pid, struct shim_seg **out, char *why, size_t len)
{
	struct seg_map maps[8];
	int n, i, err = -ENOENT;

	*out = NULL;
	why[0] = '\0';
	n = find_maps(pid, maps, 8);
	if (n < 0)
		return n == -ENOENT ? -ESRCH : n;
	for (i = 0; i < n; i++) {
		struct d9_seg_layout layout;
		uint32_t clock = CLOCK_MONOTONIC;
		struct shim_seg *s;
		void *base = NULL;
		size_t size = 0;
		int fd = open_seg(pid, &maps[i]);

		if (fd < 0) {
			err = fd;
			snprintf(why, len, "cannot open it: %s", strerror(-fd));
			continue;
		}
		err = verify(pid, fd, &base, &size, &layout, &clock, why, len);
		close(fd);
		if (err)
			continue;
		s = calloc(1, sizeof(*s));
		if (!s) {
			munmap(base, size);
			return -ENOMEM;
		}
		pthread_mutex_init(&s->lock, NULL);
		s->base = base;
		s->size = size;
		s->pid = pid;
		s->inode = maps[i].inode;
		s->layout = layout;
		s->tsc = clock == D9_CLOCK_TSC;
		*out = s;
		return 0;
	}
	return err;
}

/* Renew the lease for a busy loop: every D9_LEASE_NS / 8 while attached
 * and the loop renewed within LOOP_BUSY_MAX_NS. */
static void *lease_thread(void *arg)
{
	struct shim_seg *s = arg;
	struct d9_seg_hdr *h = s->base;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		struct timespec ts;
		uint64_t at;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		at = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec +
		     D9_LEASE_NS / 8;
		ts.tv_sec = (time_t)(at / 1000000000ULL);
		ts.tv_nsec = (long)(at % 1000000000ULL);
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
		if (s->stop)
			break;
		/* a lapse (attached cleared by a marker) is the loop's to see
		 * and handle: never renewed over */
		if (record_now_ns() - __atomic_load_n(&s->loop_ns, __ATOMIC_RELAXED) >
			    LOOP_BUSY_MAX_NS ||
		    !__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE))
			continue;
		/* our copy moves only if the shim still holds on after the
		 * store: a lapse is then of the deadline before it */
		at = lease_deadline(s);
		if (!d9_seg_renew(s->base, at))
			__atomic_store_n(&s->armed, at, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void lease_thread_stop(struct shim_seg *s)
{
	if (!s->thread_on)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	pthread_cond_destroy(&s->wake);
	s->thread_on = 0;
}

/* Start the lease thread once attached. Without it the loop's own
 * renews hold the lease, as long as it is never busy for a lease. */
static void lease_thread_start(struct shim_seg *s)
{
	pthread_condattr_t ca;

	if (s->thread_on || pthread_condattr_init(&ca))
		return;
	s->stop = 0;
	if (!pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) &&
	    !pthread_cond_init(&s->wake, &ca)) {
		if (pthread_create(&s->thread, NULL, lease_thread, s))
			pthread_cond_destroy(&s->wake);
		else
			s->thread_on = 1;
	}
	pthread_condattr_destroy(&ca);
}

/* The loop's part of an attach or a renew, once the fit is up to date:
 * the lease in ticks, the loop's time, and a new deadline, kept in
 * s->armed (our own copy) and returned for the segment. */
static uint64_t loop_arm(struct shim_seg *s)
{
	uint64_t at;

	lease_length(s);
	__atomic_store_n(&s->loop_ns, record_now_ns(), __ATOMIC_RELAXED);
	at = lease_deadline(s);
	__atomic_store_n(&s->armed, at, __ATOMIC_RELAXED);
	return at;
}

/* @ns in the segment's unit, at least 1 */
static uint64_t units_of(const struct shim_seg *s, uint64_t ns)
{
	double u = s->tsc ? (double)ns / s->fit.ns_per_tick : (double)ns;

	return u < 1 ? 1 : u > 1e18 ? (uint64_t)1e18 : (uint64_t)u;
}

void shim_seg__attach(struct shim_seg *s, const struct shim_lean *lean)
{
	if (s->tsc)
		fit_init(&s->fit);
	d9_seg_set_lean(s->base, &s->layout,
			lean && lean->poll_ns ? units_of(s, lean->poll_ns) : 0,
			lean && lean->poll_ns ? units_of(s, lean->delay_ns) : 0);
	d9_seg_attach(s->base, &s->layout, (uint32_t)getpid(), loop_arm(s));
	lease_thread_start(s);
}

int shim_seg__renew(struct shim_seg *s)
{
	uint64_t was = __atomic_load_n(&s->armed, __ATOMIC_RELAXED);
	int err;

	if (s->tsc)
		fit_update(&s->fit);
	err = d9_seg_renew(s->base, loop_arm(s));
	/* our own copy of the deadline: the segment's is the target's to
	 * write over; converted on the line the records are */
	if (err)
		s->lapsed_ns = shim_seg__ns(s, was);
	return err;
}

uint64_t shim_seg__lapsed_ns(const struct shim_seg *s)
{
	return s->lapsed_ns;
}

void shim_seg__detach(struct shim_seg *s)
{
	lease_thread_stop(s);
	d9_seg_detach(s->base);
}

void *shim_seg__base(struct shim_seg *s)
{
	return s->base;
}

const struct d9_seg_layout *shim_seg__layout(const struct shim_seg *s)
{
	return &s->layout;
}

/* 1 if @pid maps the segment with inode @inode. */
static int maps_segment(pid_t pid, unsigned long inode)
{
	struct seg_map maps[8];
	int n = find_maps(pid, maps, 8);

	for (int i = 0; i < n; i++)
		if (maps[i].inode == inode)
			return 1;
	return 0;
}

pid_t shim_seg__recorder(const struct shim_seg *s)
{
	pid_t r = (pid_t)__atomic_load_n(
		&((const struct d9_seg_hdr *)s->base)->recorder_pid, __ATOMIC_ACQUIRE);
	struct dirent *de;
	DIR *d;

	/* the target writes the header: believe it only if that process
	 * maps this very segment, as its recorder does; else look for the
	 * process that does */
	if (r > 0 && r != s->pid && r != getpid() && maps_segment(r, s->inode))
		return r;
	r = 0;
	d = opendir("/proc");
	while (d && !r && (de = readdir(d))) {
		char *e;
		long p = strtol(de->d_name, &e, 10);

		if (*e || p <= 0 || p == s->pid || p == getpid())
			continue;
		if (maps_segment((pid_t)p, s->inode))
			r = (pid_t)p;
	}
	if (d)
		closedir(d);
	return r;
}

void shim_seg__close(struct shim_seg *s)
{
	if (!s)
		return;
	lease_thread_stop(s);
	pthread_mutex_destroy(&s->lock);
	munmap(s->base, s->size);
	free(s);
}
