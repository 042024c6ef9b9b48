// SPDX-License-Identifier: MIT
/*
 * stress_ctimer - the ctimer sampler under load, built with ASan+UBSan and
 * with TSan.
 *
 * Producer threads call the markers as fast as they can (restarting
 * themselves now and then, so timers are deleted and made again) while
 * their CPU timers fire at 10 kHz and interrupt marker writes. A consumer
 * thread plays the recorder: it attaches, asks for ctimer, drains records
 * and samples, stalls so sample areas fill and drop, detaches and attaches
 * again, and lets its lease lapse. It checks every sample:
 *   - the tid is one of the producers', the task one the producer polls
 *     (or 0), frames 1..D9_SAMPLE_MAX_FRAMES, weight >= 1;
 *   - per slot, times never go backwards;
 * and at the end: samples arrived (unless the sanitizer held every signal
 * back), and once the recorder has detached and the threads ran again, no
 * timer is left.
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

#define NPROD	 3
#define RUN_NS	 1500000000ULL
#define HZ	 10000
#define ID_SHIFT 40

static int stop, failed;
static uint32_t tids[NPROD];

#define FAIL(...) RECORDER_FAIL(&failed, "stress_ctimer", __VA_ARGS__)

static void *producer(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	volatile uint64_t x = id;
	uint64_t seq;
	int i;

	__atomic_store_n(&tids[id - 1], (uint32_t)gettid(), __ATOMIC_RELEASE);
	d9_thread_start("ct-producer");
	for (seq = 1; !__atomic_load_n(&stop, __ATOMIC_RELAXED); seq++) {
		uint64_t task = (uint64_t)id << ID_SHIFT | seq;

		d9_task_wake(task);
		d9_poll_begin(task);
		for (i = 0; i < 200; i++) /* some CPU inside the poll */
			x = x * 6364136223846793005ULL + 1;
		d9_poll_end(task);
		if (seq % 5000 == 0) {
			d9_thread_stop();
			d9_thread_start("ct-producer");
		}
	}
	/* keep running markers a little after the recorder left: the timers
	 * must go away by themselves */
	for (seq = 0; seq < 200000; seq++) {
		d9_poll_begin(1);
		d9_poll_end(1);
	}
	d9_thread_stop();
	return NULL;
}

struct consumer {
	struct d9_seg_hdr *h;
	uint64_t last_time[D9_SEG_RINGS];
	struct d9_event *evbuf;
	struct d9_sample s;
	uint64_t samples, weight, drops_seen, sessions, lapses;
};

static void check_sample(struct consumer *c, uint32_t slot, const struct d9_sample *s)
{
	uint32_t i, id = 0;
	uint64_t task_id = s->task >> ID_SHIFT;

	for (i = 0; i < NPROD; i++)
		if (__atomic_load_n(&tids[i], __ATOMIC_ACQUIRE) == s->tid)
			id = i + 1;
	if (!id)
		FAIL("slot %u: sample of unknown tid %u", slot, s->tid);
	if (s->task && s->task != 1 && task_id != id)
		FAIL("slot %u: tid %u sampled in task %#llx of producer %llu", slot,
		     s->tid, (unsigned long long)s->task, (unsigned long long)task_id);
	if (!s->nframes || s->nframes > D9_SAMPLE_MAX_FRAMES || !s->weight)
		FAIL("slot %u: %u frames, weight %u", slot, s->nframes, s->weight);
	if (s->time < c->last_time[slot])
		FAIL("slot %u: time went back", slot);
	if (s->time > seg_now())
		FAIL("slot %u: sample from the future", slot);
	c->last_time[slot] = s->time;
	c->samples++;
	c->weight += s->weight;
}

static void drain(struct consumer *c)
{
	const struct d9_seg_layout *l = lay(c->h);
	uint32_t i;

	for (i = 0; i < l->nrings; i++) {
		struct d9_ring_hdr *r = d9_layout_ring(c->h, l, i);
		uint64_t *words = d9_layout_samples(c->h, l, i);

		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == D9_RING_FREE)
			continue;
		while (d9_sample_take(r, words, l->sample_words, &c->s))
			check_sample(c, i, &c->s);
		while (d9_ring_consume(r, l->ring_events, c->evbuf, l->ring_events))
			;
		c->drops_seen += d9_sample_drops(r) ? 1 : 0;
		d9_ring_reap(r);
	}
}

static void attach(struct consumer *c)
{
	d9_seg_attach(c->h, lay(c->h), (uint32_t)getpid(), lease());
	d9_seg_request(c->h, D9_REQ_CTIMER, HZ);
	c->sessions++;
}

static void *consumer(void *arg)
{
	struct consumer *c = arg;
	uint64_t end = now_ns() + RUN_NS;
	unsigned int round = 0;

	attach(c);
	while (now_ns() < end && !failed) {
		round++;
		drain(c);
		if (d9_seg_renew(c->h, lease())) {
			c->lapses++;
			attach(c);
		}
		if (round % 50 == 0) {
			sleep_us(30000); /* stall: areas fill, samples drop */
		} else if (round % 97 == 0) {
			d9_seg_detach(c->h);
			drain(c);
			sleep_us(2000);
			attach(c);
		} else if (round % 151 == 0) {
			/* a lapsed lease: the shim detaches itself */
			__atomic_store_n(&c->h->lease_deadline, seg_now() - 1,
					 __ATOMIC_RELEASE);
			sleep_us(5000);
		} else {
			sleep_us(1000);
		}
	}
	d9_seg_detach(c->h);
	drain(c);
	return NULL;
}

int main(void)
{
	pthread_t prod[NPROD], cons;
	struct consumer c;
	uint32_t i;

	memset(&c, 0, sizeof(c));
	if (d9_init()) {
		fprintf(stderr, "stress_ctimer: d9_init failed\n");
		return 1;
	}
	c.h = d9__segment();
	c.evbuf = calloc(lay(c.h)->ring_events, sizeof(*c.evbuf));
	if (!c.evbuf)
		return 1;
	for (i = 0; i < NPROD; i++)
		if (pthread_create(&prod[i], NULL, producer, (void *)(uintptr_t)(i + 1)))
			return 1;
	pthread_create(&cons, NULL, consumer, &c);
	pthread_join(cons, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < NPROD; i++)
		pthread_join(prod[i], NULL);
	drain(&c);
	if (__atomic_load_n(&c.h->ctimer_threads, __ATOMIC_RELAXED))
		FAIL("%u timers left after the recorder detached and threads stopped",
		     c.h->ctimer_threads);
	if (c.h->ctimer_status != D9_CTIMER_ON)
		FAIL("ctimer status %u", c.h->ctimer_status);
	if (!c.samples)
		FAIL("no sample at all in %u sessions", (unsigned)c.sessions);
	free(c.evbuf);
	if (failed)
		return 1;
	printf("stress_ctimer: ok: %llu samples (weight %llu), %llu sessions, %llu lapses, "
	       "drops seen %llu times\n",
	       (unsigned long long)c.samples, (unsigned long long)c.weight,
	       (unsigned long long)c.sessions, (unsigned long long)c.lapses,
	       (unsigned long long)c.drops_seen);
	return 0;
}
