// SPDX-License-Identifier: MIT
/*
 * stress_markers - the shim under load, built with ASan+UBSan and with TSan.
 *
 * Producer threads call every marker as fast as they can, restart
 * themselves (d9_thread_stop/start) now and then, and a churn thread keeps
 * creating short-lived threads, half of which exit without d9_thread_stop.
 * Meanwhile a consumer thread plays the recorder with the d9_segment.h
 * functions: it attaches, drains and renews, stalls so rings fill and drop,
 * lets its lease lapse, detaches and attaches again, and reads the task-name
 * table while it changes. It checks every record it reads:
 *   - types and group sizes are valid and groups arrive whole;
 *   - per ring, times never go backwards and each producer's task sequence
 *     never goes backwards;
 *   - SPAWN text and name-table names are exactly the names given;
 * every other session is lean (d9_segment.h: polls written only past a
 * threshold, the others summed; the consumer asks for the sums as a
 * recorder does), and its D9_EV_SUMMARY groups are whole and sane;
 * and at the end: drops were counted, no more records were read than
 * markers were called, every ring is drained and every slot is free again.
 * Exit 0 on success, 1 with a message on failure.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "d9prof.h"
#include "libprof/d9_segment.h"
#include "libprof/shim.h"
#include "tests/shim_recorder.h"

#define NPROD  3
#define RUN_NS 1500000000ULL

/* set by the consumer once drops, a lapse, 3 sessions and names were seen */
static int exercised;
#define ID_SHIFT 40 /* task = (id << ID_SHIFT) | seq */
/* ids: producers 1..NPROD, short-lived threads from CHURN_BASE up */
#define CHURN_BASE (NPROD + 1)
#define LIVE_TASKS 64 /* tasks a producer keeps un-ended */

static int stop;
static int failed;
static uint64_t calls; /* markers called by all threads (summed at exit) */
static uint32_t churn_next = CHURN_BASE;

#define FAIL(...) RECORDER_FAIL(&failed, "stress_markers", __VA_ARGS__)

static int stopping(void)
{
	return __atomic_load_n(&stop, __ATOMIC_RELAXED);
}

static uint64_t task_of(uint32_t id, uint64_t seq)
{
	return (uint64_t)id << ID_SHIFT | seq;
}

/* The name a task is spawned with: its id, then 0..59 filler characters,
 * so lengths cross every text-record boundary and the truncation limits. */
static void name_of(uint64_t task, char *buf, size_t len)
{
	int n = snprintf(buf, len, "task-%llx-", (unsigned long long)task);
	size_t fill = task % 60, i;

	for (i = 0; i < fill && n + i + 1 < len; i++)
		buf[n + i] = (char)('a' + (task + i) % 26);
	buf[n + i] = '\0';
}

/* ---- producers ------------------------------------------------------------ */

static void *producer(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	uint64_t seq, n = 0;
	char tname[32], name[128];

	snprintf(tname, sizeof(tname), "worker-%u", id);
	d9_thread_start(tname);
	for (seq = 1; !stopping(); seq++) {
		uint64_t task = task_of(id, seq);

		name_of(task, name, sizeof(name));
		d9_task_spawn(task, name);
		d9_task_wake(task);
		d9_poll_begin(task);
		d9_poll_end(task);
		n += 4;
		if (seq % 7 == 0) {
			d9_park();
			d9_unpark();
			n += 2;
		}
		if (seq > LIVE_TASKS) {
			d9_task_end(task_of(id, seq - LIVE_TASKS));
			n++;
		}
		/* a fresh ring now and then, but only after more records than
		 * one ring holds (~6 per seq), so that stalls can overflow it */
		if (seq % (D9_SEG_RING_EVENTS / 4) == 0) {
			d9_thread_stop();
			d9_thread_start(tname);
			n += 2;
		}
	}
	for (seq = seq > LIVE_TASKS ? seq - LIVE_TASKS : 1; seq < LIVE_TASKS * 2; seq++)
		d9_task_end(task_of(id, seq));
	d9_thread_stop();
	__atomic_fetch_add(&calls, n + 2, __ATOMIC_RELAXED);
	return NULL;
}

static void *short_lived(void *arg)
{
	uint32_t id = __atomic_fetch_add(&churn_next, 1, __ATOMIC_RELAXED);
	uint64_t seq, n = 0;
	char tname[32];

	if (id & 1) {
		snprintf(tname, sizeof(tname), "churn-%u", id);
		d9_thread_start(tname);
		n++;
	}
	for (seq = 1; seq <= 50; seq++) {
		d9_poll_begin(task_of(id, seq));
		d9_poll_end(task_of(id, seq));
		n += 2;
	}
	/* half stop explicitly, half leave it to the key destructor */
	if (id & 2) {
		d9_thread_stop();
		n++;
	}
	__atomic_fetch_add(&calls, n + 1, __ATOMIC_RELAXED);
	return NULL;
}

static void *churn(void *arg)
{
	while (!stopping()) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_lived, NULL)) {
			FAIL("pthread_create: %s", strerror(errno));
			break;
		}
		pthread_join(t, NULL);
	}
	return NULL;
}

/* ---- the consumer --------------------------------------------------------- */

struct ring_seen {
	uint64_t gen, drops, last_time;
	uint64_t last_seq[NPROD]; /* per producer (id - 1), task records */
	uint64_t last_end[NPROD]; /* per producer (id - 1), TASK_END */
	uint32_t churn_id;	  /* the short-lived owner seen last */
	uint64_t churn_seq;
};

struct consumer {
	struct d9_seg_hdr *h;
	struct ring_seen *seen;
	struct d9_event *buf;
	size_t buflen;
	uint64_t records, drops, sessions, lapses, names_checked, sums;
};

static int has_task(uint32_t type)
{
	return type == D9_EV_SPAWN || type == D9_EV_WAKE || type == D9_EV_POLL_BEGIN ||
	       type == D9_EV_POLL_END || type == D9_EV_TASK_END || type == D9_EV_POLL ||
	       type == D9_EV_POLL_WOKEN || type == D9_EV_WOKEN_BEFORE;
}

static void check_task(struct ring_seen *s, uint32_t ring, const struct d9_event *ev)
{
	uint64_t id = ev->task >> ID_SHIFT, seq = ev->task & ((1ULL << ID_SHIFT) - 1);

	if (!id || id > __atomic_load_n(&churn_next, __ATOMIC_RELAXED) || !seq) {
		FAIL("ring %u: corrupt task id %#llx (type %u)", ring,
		     (unsigned long long)ev->task, ev->type);
		return;
	}
	if (id <= NPROD) {
		uint64_t *last = ev->type == D9_EV_TASK_END ? &s->last_end[id - 1]
							    : &s->last_seq[id - 1];

		if (seq < *last)
			FAIL("ring %u: producer %llu went back from task %llu to %llu",
			     ring, (unsigned long long)id, (unsigned long long)*last,
			     (unsigned long long)seq);
		*last = seq;
		return;
	}
	if (ev->type != D9_EV_POLL_BEGIN && ev->type != D9_EV_POLL_END &&
	    ev->type != D9_EV_POLL)
		FAIL("ring %u: short-lived thread wrote type %u", ring, ev->type);
	if (id == s->churn_id && seq < s->churn_seq)
		FAIL("ring %u: thread %llu went back", ring, (unsigned long long)id);
	s->churn_id = (uint32_t)id;
	s->churn_seq = seq;
}

/* A lean sum: a task of a producer or a short-lived thread, no more
 * delays than polls, as many bucket counts of each as they say */
static void check_sum(uint32_t ring, const struct d9_event *ev, uint32_t k)
{
	const struct d9_sum_head *hd = (const void *)(ev + 1);
	const uint64_t *e = (const void *)(ev + 3);
	uint64_t id = ev->task >> ID_SHIFT, n[2] = {0, 0};

	if (!id || id > __atomic_load_n(&churn_next, __ATOMIC_RELAXED))
		FAIL("ring %u: summary of task %#llx", ring,
		     (unsigned long long)ev->task);
	if (hd->delays > hd->polls)
		FAIL("ring %u: %u delays of %u polls", ring, hd->delays, hd->polls);
	for (uint32_t j = 0; j < (k - 2) * 3; j++) {
		if (e[j] &&
		    ((e[j] >> 32 & 0x7fffffff) >= D9_SUM_BUCKETS || !(uint32_t)e[j]))
			FAIL("ring %u: bad summary entry %#llx", ring,
			     (unsigned long long)e[j]);
		n[e[j] >> 63] += (uint32_t)e[j];
	}
	/* a group past the first one carries buckets only */
	if ((hd->polls && n[0] != hd->polls) || (hd->polls && n[1] != hd->delays))
		FAIL("ring %u: %u polls and %u delays, buckets of %llu and %llu", ring,
		     hd->polls, hd->delays, (unsigned long long)n[0],
		     (unsigned long long)n[1]);
}

static void check_text(uint32_t ring, const struct d9_event *ev)
{
	char got[D9_NAME_MAX + 1], want[128];

	d9_event_text(ev + 1, ev->arg, got, sizeof(got));
	if (((const char *)&ev[ev->arg])[sizeof(*ev) - 1] != '\0')
		FAIL("ring %u: text not NUL-terminated", ring);
	if (ev->type == D9_EV_SPAWN) {
		name_of(ev->task, want, sizeof(want));
		want[D9_NAME_MAX] = '\0';
		if (strcmp(got, want))
			FAIL("ring %u: task %#llx named \"%s\", want \"%s\"", ring,
			     (unsigned long long)ev->task, got, want);
	} else if (strncmp(got, "worker-", 7) && strncmp(got, "churn-", 6)) {
		FAIL("ring %u: thread named \"%s\"", ring, got);
	}
}

static void check(struct consumer *c, uint32_t ring, const struct d9_event *ev, size_t n,
		  uint64_t now)
{
	struct ring_seen *s = &c->seen[ring];
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t k = 0;

		if (ev[i].type < D9_EV_THREAD_START || ev[i].type > D9_EV_WOKEN_BEFORE ||
		    ev[i].type == D9_EV_WAKER_DROP) {
			FAIL("ring %u: bad record type %u", ring, ev[i].type);
			return;
		}
		/* a whole poll: its begin, too, after the record before it */
		if ((ev[i].type == D9_EV_POLL || ev[i].type == D9_EV_POLL_WOKEN) &&
		    (ev[i].arg > ev[i].time || ev[i].time - ev[i].arg < s->last_time))
			FAIL("ring %u: a poll of %u ticks began before the record "
			     "before it",
			     ring, ev[i].arg);
		if (ev[i].time < s->last_time || ev[i].time > now)
			FAIL("ring %u: time went from %llu to %llu (now %llu)", ring,
			     (unsigned long long)s->last_time,
			     (unsigned long long)ev[i].time, (unsigned long long)now);
		s->last_time = ev[i].time;
		if (ev[i].type == D9_EV_SPAWN || ev[i].type == D9_EV_THREAD_START) {
			k = ev[i].arg;
			if (k > D9_TEXT_RECORDS || i + k >= n) {
				FAIL("ring %u: bad or cut text group (%u records)", ring,
				     k);
				return;
			}
			if (k)
				check_text(ring, &ev[i]);
		} else if (ev[i].type == D9_EV_SUMMARY) {
			k = d9_group_more(&ev[i]);
			if (k < 2 || i + k >= n) {
				FAIL("ring %u: bad or cut summary (%u records)", ring,
				     ev[i].arg);
				return;
			}
			check_sum(ring, &ev[i], k);
			c->sums++;
		} else if (ev[i].arg && ev[i].type != D9_EV_POLL &&
			   ev[i].type != D9_EV_POLL_WOKEN &&
			   ev[i].type != D9_EV_WOKEN_BEFORE) {
			FAIL("ring %u: type %u with arg %u", ring, ev[i].type, ev[i].arg);
		}
		if (has_task(ev[i].type))
			check_task(s, ring, &ev[i]);
		else if ((ev[i].type == D9_EV_THREAD_START ||
			  ev[i].type == D9_EV_THREAD_STOP) &&
			 !ev[i].task)
			FAIL("ring %u: thread record without tid", ring);
		c->records++;
		i += k;
	}
}

static void drain(struct consumer *c)
{
	struct d9_seg_hdr *h = c->h;
	uint32_t i;

	for (i = 0; i < h->nrings; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(h, lay(h), i);
		struct ring_seen *s = &c->seen[i];
		uint32_t state, tid;
		uint64_t gen, drops;
		size_t n;

		state = d9_ring_owner(r, &tid, &gen, NULL, 0);
		if (state > D9_RING_DEAD)
			FAIL("ring %u: state %u", i, state);
		if (gen != s->gen) {
			s->gen = gen;
			s->drops = 0;
		}
		do {
			n = d9_ring_consume(r, h->ring_events, c->buf, c->buflen);
			check(c, i, c->buf, n, seg_now());
		} while (n); /* a short batch may only mean a group was left whole */
		/* the poll kept in the header, read racing its producer as the
		 * recorder reads it (taken only if no record came meanwhile):
		 * a real task, begun after everything consumed */
		{
			uint64_t task, time, end,
				upto = __atomic_load_n(&r->tail, __ATOMIC_RELAXED);
			uint64_t attach =
				__atomic_load_n(&h->attach_count, __ATOMIC_ACQUIRE);

			if (d9_ring_open_poll(r, attach, &task, &time, &end) &&
			    __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == upto) {
				struct d9_event ev = {.time = time,
						      .task = task,
						      .type = D9_EV_POLL_BEGIN};

				if (time > seg_now() || end > seg_now())
					FAIL("ring %u: open poll in the future", i);
				if (time < s->last_time)
					FAIL("ring %u: open poll begun before a record consumed",
					     i);
				check_task(s, i, &ev);
			}
		}
		drops = d9_ring_drops(r);
		if (drops > s->drops) {
			c->drops += drops - s->drops;
			s->drops = drops;
		}
		if (state == D9_RING_DEAD)
			d9_ring_reap(r);
	}
}

static void check_names(struct consumer *c)
{
	struct d9_name_slot *slots = d9_layout_names(c->h, lay(c->h));
	char got[sizeof(slots[0].name) + 1], want[128];
	uint32_t i;

	for (i = 0; i < c->h->names_count; i++) {
		uint64_t task;

		if (d9_name_slot_read(&slots[i], &task, got, sizeof(got)))
			continue;
		name_of(task, want, sizeof(want));
		want[sizeof(slots[0].name) - 1] = '\0';
		if (strcmp(got, want))
			FAIL("name slot %u: task %#llx named \"%s\", want \"%s\"", i,
			     (unsigned long long)task, got, want);
		c->names_checked++;
	}
}

static uint64_t all_drops(struct d9_seg_hdr *h)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < h->nrings; i++)
		n += d9_ring_drops(d9_layout_ring(h, lay(h), i));
	return n;
}

/* Stop draining until some ring overflows (or 1 s passes): the producers
 * must drop and count, not wait. The lease is still renewed. */
static void stall(struct consumer *c)
{
	uint64_t before = all_drops(c->h), give_up = now_ns() + 1000000000;

	while (all_drops(c->h) == before && now_ns() < give_up && !stopping()) {
		sleep_us(1000);
		d9_seg_renew(c->h, lease());
	}
}

static void *consumer(void *arg)
{
	struct consumer *c = arg;
	struct d9_seg_hdr *h = c->h;

	while (!stopping()) {
		uint64_t until = now_ns() + 40000000;
		int round = 0;

		/* every other session lean: sums only, or every poll written */
		d9_seg_set_lean(h, lay(h),
				c->sessions % 2	  ? 0
				: c->sessions % 4 ? 1
						  : UINT64_MAX / 2,
				c->sessions % 4 ? 1 : UINT64_MAX / 2);
		d9_seg_attach(h, lay(h), (uint32_t)getpid(), lease());
		c->sessions++;
		while (now_ns() < until && !stopping()) {
			drain(c);
			if (d9_seg_renew(h, lease())) {
				/* we let it lapse below, or were slow */
				d9_seg_attach(h, lay(h), (uint32_t)getpid(), lease());
				c->sessions++;
			}
			if (++round % 4 == 1)
				check_names(c);
			if (round % 8 == 3)
				d9_seg_flush_sums(h);
			if (round == 2 && c->sessions % 2)
				stall(c);
			else
				sleep_us(200);
		}
		if (stopping()) {
			/* producers may be gone: nobody left to see a lapse */
			d9_seg_detach(h);
			break;
		}
		if (c->sessions % 3 == 0) {
			/* die without detaching: the markers notice the lease */
			uint64_t give_up = now_ns() + 500000000;

			__atomic_store_n(&h->lease_deadline, seg_now() - 1,
					 __ATOMIC_RELEASE);
			while (__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE) &&
			       now_ns() < give_up)
				sleep_us(100);
			if (__atomic_load_n(&h->attached, __ATOMIC_ACQUIRE))
				FAIL("markers did not detach an expired lease");
			if (d9_seg_renew(h, lease()) != -ETIMEDOUT)
				FAIL("renew did not report the lapsed lease");
			c->lapses++;
		} else {
			d9_seg_detach(h);
		}
		drain(c);
		if (c->records && c->drops && c->lapses && c->sessions >= 3 &&
		    c->names_checked)
			__atomic_store_n(&exercised, 1, __ATOMIC_RELAXED);
		sleep_us(2000);
	}
	return NULL;
}

int main(void)
{
	struct consumer c = {0};
	pthread_t prod[NPROD], ch, con;
	uint64_t start = now_ns(), pending = 0;
	uint32_t i, live = 0;
	int err;

	err = d9_init();
	if (err) {
		fprintf(stderr, "stress_markers: d9_init: %s\n", strerror(-err));
		return 1;
	}
	c.h = d9__segment();
	if (!c.h || d9_seg_check(c.h, d9__segment_size(), NULL)) {
		fprintf(stderr, "stress_markers: no usable segment\n");
		return 1;
	}
	c.buflen = 4096;
	c.buf = calloc(c.buflen, sizeof(*c.buf));
	c.seen = calloc(c.h->nrings, sizeof(*c.seen));
	if (!c.buf || !c.seen)
		return 1;

	for (i = 0; i < NPROD; i++)
		pthread_create(&prod[i], NULL, producer, (void *)(uintptr_t)(i + 1));
	pthread_create(&ch, NULL, churn, NULL);
	pthread_create(&con, NULL, consumer, &c);
	/* at least RUN_NS, and until every path was taken (sanitizers make the
	 * producers slow), but never more than 8 * RUN_NS */
	while (!__atomic_load_n(&failed, __ATOMIC_RELAXED) &&
	       (now_ns() - start < RUN_NS ||
		(!__atomic_load_n(&exercised, __ATOMIC_RELAXED) &&
		 now_ns() - start < 8 * RUN_NS)))
		sleep_us(10000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NPROD; i++)
		pthread_join(prod[i], NULL);
	pthread_join(ch, NULL);
	pthread_join(con, NULL);

	/* every thread is gone: drain, and every slot must come back */
	d9_seg_detach(c.h);
	drain(&c);
	for (i = 0; i < c.h->nrings; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(c.h, lay(c.h), i);

		pending += __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) -
			   __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		live += __atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != D9_RING_FREE;
	}
	if (pending)
		FAIL("%llu records left in the rings", (unsigned long long)pending);
	if (live)
		FAIL("%u ring slots not freed", live);
	if (c.records > __atomic_load_n(&calls, __ATOMIC_RELAXED))
		FAIL("read %llu records from %llu marker calls",
		     (unsigned long long)c.records, (unsigned long long)calls);
	if (!c.records || !c.drops || !c.lapses || c.sessions < 3 || !c.names_checked ||
	    !c.sums)
		FAIL("did not exercise enough: %llu records, %llu drops, %llu sessions, "
		     "%llu lapses, %llu names, %llu sums",
		     (unsigned long long)c.records, (unsigned long long)c.drops,
		     (unsigned long long)c.sessions, (unsigned long long)c.lapses,
		     (unsigned long long)c.names_checked, (unsigned long long)c.sums);

	printf("stress_markers: %s: %llu marker calls, %llu records read, %llu dropped, "
	       "%llu sessions (%llu lapsed, %llu sums), %u threads, %llu names checked, "
	       "%llu names dropped, %llu exhausted\n",
	       failed ? "FAIL" : "ok", (unsigned long long)calls,
	       (unsigned long long)c.records, (unsigned long long)c.drops,
	       (unsigned long long)c.sessions, (unsigned long long)c.lapses,
	       (unsigned long long)c.sums,
	       __atomic_load_n(&churn_next, __ATOMIC_RELAXED) - CHURN_BASE + NPROD,
	       (unsigned long long)c.names_checked,
	       (unsigned long long)__atomic_load_n(&c.h->names_dropped, __ATOMIC_RELAXED),
	       (unsigned long long)__atomic_load_n(&c.h->rings_exhausted,
						   __ATOMIC_RELAXED));
	free(c.buf);
	free(c.seen);
	return failed ? 1 : 0;
}
