// SPDX-License-Identifier: MIT
/*
 * sched_bpf.c - load, filter and read the BPF scheduler programs
 * (sched_bpf.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "record/bpfload.h"
#include "record/sched_bpf.h"
#include "sched.skel.h"

struct sched_bpf {
	struct d9_sched *skel;
	struct ring_buffer *rb;
	int epfd; /* the ring, edge-triggered: readable at the programs'
		   * wakeups only (sched_bpf__fd) */
	struct sched_bpf_cb cb;
	unsigned int budget; /* records left to read in this drain */
};

/* Records read per drain at most: libbpf 1.1's consume reads for as long
 * as the programs write, and the recorder has a lease, segments and -d
 * to see to (the rest is read at the next drain) */
#define DRAIN_BUDGET 8192

static int on_record(void *ctx, void *data, size_t size)
{
	struct sched_bpf *sb = ctx;
	const unsigned int *type = data;

	if (size < sizeof(*type))
		return 0;
	if ((*type == SCHED_BPF_OUT || (*type == SCHED_BPF_TICK && sb->cb.tick)) &&
	    size >= sizeof(struct sched_bpf_out)) {
		const struct sched_bpf_out *o = data;
		const uint64_t *chains = (const void *)(o + 1);
		uint64_t kb = o->kbytes > 0 ? (uint64_t)o->kbytes : 0;
		uint64_t ub = o->ubytes > 0 ? (uint64_t)o->ubytes : 0;

		/* cannot be: the kernel wrote them all */
		if (kb % 8 || ub % 8 || kb + ub + o->stack_len > size - sizeof(*o))
			return 0;
		(*type == SCHED_BPF_OUT ? sb->cb.out : sb->cb.tick)(
			sb->cb.ctx, o, chains, (unsigned int)(kb / 8), chains + kb / 8,
			(unsigned int)(ub / 8), (const unsigned char *)chains + kb + ub);
	} else if (*type == SCHED_BPF_IN && size >= SCHED_BPF_IN_SIZE(0)) {
		const struct sched_bpf_in *in = data;

		/* only its holders: a variable size */
		if (in->nholds <= SCHED_BPF_SLOTS &&
		    size >= SCHED_BPF_IN_SIZE(in->nholds))
			sb->cb.in(sb->cb.ctx, in);
	}
	/* this record is read either way; a negative return stops there */
	return --sb->budget ? 0 : -EAGAIN;
}

/* Whether the running kernel is @major.@minor or later */
static int kernel_at_least(int major, int minor)
{
	struct utsname u;
	int a = 0, b = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &a, &b) != 2)
		return 0;
	return a > major || (a == major && b >= minor);
}

/* Task storage is allocated in sched_switch, with the run queue locked:
 * safe where local storage allocates from the BPF memory allocator (Linux
 * 6.5), not where it called kmalloc(GFP_ATOMIC), which may wake kswapd. */
static int storage_safe(void)
{
	return kernel_at_least(6, 5);
}

/* The threads map's elements from the BPF memory allocator as threads
 * come (hash maps since Linux 6.1: safe in any context) rather than all
 * 65536 made at load, a tenth of what a recording costs to start */
static int htab_alloc_safe(void)
{
	return kernel_at_least(6, 1);
}

int sched_bpf__open(const struct sched_bpf_opts *o, const struct sched_bpf_cb *cb,
		    struct sched_bpf **out, char *why, size_t whylen)
{
	struct sched_bpf *sb;
	libbpf_print_fn_t old;
	int ncpu, err;

	*out = NULL;
	why[0] = '\0';
	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	sb->cb = *cb;
	sb->epfd = -1;
	old = bpfload_begin();
	sb->skel = d9_sched__open();
	if (!sb->skel) {
		err = bpfload_fail(-errno, "open the programs", why, whylen);
		goto out;
	}
	sb->skel->rodata->cfg.tgid = (unsigned int)o->pid;
	sb->skel->rodata->cfg.children = !!o->children;
	sb->skel->rodata->cfg.stack_bytes = o->stack_bytes > SCHED_BPF_STACK_MAX
						    ? SCHED_BPF_STACK_MAX
						    : o->stack_bytes;
	sb->skel->rodata->cfg.kernel = !!o->kernel;
	sb->skel->rodata->cfg.wake_at = o->ring_bytes / 4;
	sb->skel->rodata->cfg.short_at = o->ring_bytes / 2;
	sb->skel->rodata->cfg.min_ns = o->min_ns;
	sb->skel->rodata->cfg.slot = o->slot;
	sb->skel->rodata->cfg.tick_fn = o->tick_fn;
	sb->skel->rodata->cfg.tick_stack =
		o->tick_stack > SCHED_BPF_STACK_MAX ? SCHED_BPF_STACK_MAX : o->tick_stack;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0) {
		err = bpfload_fail(ncpu ? ncpu : -EINVAL, "count the CPUs", why, whylen);
		goto out;
	}
	if ((err = bpf_map__set_max_entries(sb->skel->maps.outs, (unsigned int)ncpu)) ||
	    (err = bpf_map__set_max_entries(sb->skel->maps.hists, (unsigned int)ncpu)) ||
	    (err = bpf_map__set_max_entries(sb->skel->maps.ring,
					    (unsigned int)o->ring_bytes))) {
		bpfload_fail(err, "size the maps", why, whylen);
		goto out;
	}
	if (htab_alloc_safe() &&
	    (err = bpf_map__set_map_flags(sb->skel->maps.threads,
					  bpf_map__map_flags(sb->skel->maps.threads) |
						  BPF_F_NO_PREALLOC))) {
		bpfload_fail(err, "size the maps", why, whylen);
		goto out;
	}
	bpf_program__set_autoattach(sb->skel->progs.d9_waking, !!o->wakeups);
	bpf_program__set_autoattach(sb->skel->progs.d9_fork, !!o->children);
	bpf_program__set_autoattach(sb->skel->progs.d9_free, !!o->children);
	bpf_program__set_autoload(sb->skel->progs.d9_tick, !!o->tick_fn);
	/* the iterator is read, not attached, and only needed with min_ns */
	bpf_program__set_autoattach(sb->skel->progs.d9_open, false);
	bpf_program__set_autoload(sb->skel->progs.d9_open, o->min_ns > 0);
	if (o->min_ns && !storage_safe()) {
		err = -EOPNOTSUPP;
		snprintf(why, whylen,
			 "BPF: --offcpu-min keeps switch-outs in task storage, allocated "
			 "in the scheduler: not before Linux 6.5");
		goto out;
	}
	if ((err = d9_sched__load(sb->skel))) {
		bpfload_fail(err, "load the programs", why, whylen);
		goto out;
	}
	if ((err = d9_sched__attach(sb->skel))) {
		bpfload_fail(err,
			     o->tick_fn ? "attach to sched_switch and the tick"
					: "attach to sched_switch",
			     why, whylen);
		goto out;
	}
	sb->rb = ring_buffer__new(bpf_map__fd(sb->skel->maps.ring), on_record, sb, NULL);
	if (!sb->rb) {
		err = bpfload_fail(-errno, "map the ring buffer", why, whylen);
		goto out;
	}
	/* A ring buffer polls readable while it holds any record: polled
	 * as it is, the recorder would wake for every few records the
	 * programs write, the very wakeups they hold back until a quarter
	 * full. Edge-triggered, it is readable once per wakeup they send. */
	sb->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sb->epfd < 0 ||
	    epoll_ctl(sb->epfd, EPOLL_CTL_ADD, bpf_map__fd(sb->skel->maps.ring),
		      &(struct epoll_event){.events = EPOLLIN | EPOLLET})) {
		err = bpfload_fail(-errno, "poll the ring buffer", why, whylen);
		goto out;
	}
	*out = sb;
	sb = NULL;
	err = 0;
out:
	bpfload_end(old);
	sched_bpf__free(sb);
	return err;
}

int sched_bpf__fd(const struct sched_bpf *sb)
{
	return sb->epfd;
}

void sched_bpf__enable(struct sched_bpf *sb, int on)
{
	__atomic_store_n(&sb->skel->bss->enabled, on ? 1u : 0u, __ATOMIC_RELEASE);
}

int sched_bpf__drain(struct sched_bpf *sb)
{
	struct epoll_event ev;
	int n;

	/* the wakeup is taken: the fd is readable again at the next one */
	epoll_wait(sb->epfd, &ev, 1, 0);
	sb->budget = DRAIN_BUDGET;
	n = ring_buffer__consume(sb->rb);
	if (n == -EAGAIN)
		return 1;
	return n < 0 ? n : 0;
}

int sched_bpf__send_open(struct sched_bpf *sb)
{
	struct bpf_link *link;
	char buf[64];
	ssize_t n;
	int fd, err = 0;

	if (!sb->skel->rodata->cfg.min_ns)
		return 0;
	link = bpf_program__attach_iter(sb->skel->progs.d9_open, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		err = -errno;
	/* a byte here per record sent to the ring, which is drained after
	 * each read, the last too (a few thousand threads off-CPU would fill
	 * it in one) */
	while (fd >= 0) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			err = -errno;
		while (sched_bpf__drain(sb) == 1)
			;
		if (n <= 0)
			break;
	}
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	return err;
}

void sched_bpf__set_copy(struct sched_bpf *sb, unsigned int bytes)
{
	__atomic_store_n(&sb->skel->bss->copy_bytes, bytes, __ATOMIC_RELAXED);
}

void sched_bpf__set_shim(struct sched_bpf *sb, int64_t off)
{
	__atomic_store_n(&sb->skel->bss->shim_off, off, __ATOMIC_RELAXED);
}

void sched_bpf__counts(const struct sched_bpf *sb, struct sched_bpf_counts *c)
{
	c->lost = __atomic_load_n(&sb->skel->bss->lost, __ATOMIC_RELAXED);
	c->cut_short = __atomic_load_n(&sb->skel->bss->cut_short, __ATOMIC_RELAXED);
}

void sched_bpf__free(struct sched_bpf *sb)
{
	if (!sb)
		return;
	if (sb->epfd >= 0)
		close(sb->epfd);
	ring_buffer__free(sb->rb);
	d9_sched__destroy(sb->skel);
	free(sb);
}
