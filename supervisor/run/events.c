/* supervisor/run/events.c: execution events to sinks, each behind a bounded queue and a thread of
 * its own (events.h). */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "supervisor/base/log.h"
#include "supervisor/run/events.h"

struct event_sink {
	events_t *e;
	char *name;
	void (*fn)(void *arg, const struct event *ev);
	void (*fin)(void *arg);
	void (*idle)(void *arg);
	unsigned idle_ms;
	void (*flush)(void *arg);   /* when the queue is found empty after events (NULL: none) */
	unsigned types;             /* the event types it takes: bit 1 << type */
	void *arg;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct event **q;           /* ring of copies: [head, head + n) mod cap */
	unsigned cap, head, n;
	int stop;
	int deep;                   /* the thread sleeps until woken (else it naps: it looks again by itself) */
	uint64_t lost;              /* records the sink could not keep (events_sink_report), under mu */
	char failing[256];          /* why it is failing now ("": it works), under mu */
	/* the loop's side */
	uint64_t dropped;
	uint64_t episode;           /* dropped since the queue was last found full (0: not dropping) */
	struct event_sink *next;
};

#define EVENTS_TAPS_MAX 4

struct events {
	char *instance;
	event_sink_t *sinks;
	unsigned types;             /* what any tap or sink takes: events_emit returns at once else */
	size_t ntaps;
	struct {
		unsigned types;
		void (*fn)(void *arg, const struct event *ev);
		void *arg;
	} taps[EVENTS_TAPS_MAX];
};

const char *event_type_name(enum event_type t)
{
	static const char *const names[EVT__COUNT] = {
		[EVT_ITEM_STARTED] = "item_started", [EVT_ITEM_ENDED] = "item_ended", [EVT_FIRE_STARTED] = "fire_started",
		[EVT_FIRE_ENDED] = "fire_ended", [EVT_FIRE_SKIPPED] = "fire_skipped", [EVT_MISFIRE] = "misfire",
		[EVT_FAILOVER] = "failover", [EVT_ASSIGNMENT] = "assignment", [EVT_SHARDED] = "sharded",
		[EVT_LEADER] = "leader", [EVT_SESSION] = "session", [EVT_LISTENER] = "listener",
	};
	return (unsigned)t < EVT__COUNT && names[t] ? names[t] : "?";
}

int events_tap(events_t *e, unsigned types, void (*fn)(void *arg, const struct event *ev), void *arg)
{
	if (!e || e->ntaps == EVENTS_TAPS_MAX) return -1;
	e->taps[e->ntaps].types = types;
	e->taps[e->ntaps].fn = fn;
	e->taps[e->ntaps].arg = arg;
	e->ntaps++;
	e->types |= types;
	return 0;
}

const char *event_source_name(enum event_source s)
{
	return s == EVS_MISFIRE ? "MISFIRE" : s == EVS_FAILOVER ? "FAILOVER" : "NORMAL_TRIGGER";
}

events_t *events_new(const char *instance)
{
	events_t *e = calloc(1, sizeof *e);
	if (!e || !(e->instance = strdup(instance))) {
		free(e);
		return NULL;
	}
	return e;
}

const char *events_instance(const events_t *e)
{
	return e->instance;
}

/* in ms: how long a sink that has just emptied its queue waits for more before it sleeps until
 * woken. Under a steady stream it takes each nap's events in one go and the loop never has to
 * wake it (a futex call on the loop per wake cost about a tenth of bench/pool's items/s); an
 * event waits at most this long to be written. */
#define SINK_NAP_MS 20

static void deadline_in(struct timespec *dl, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, dl);
	dl->tv_sec += ms / 1000u;
	dl->tv_nsec += (long)(ms % 1000u) * 1000000L;
	if (dl->tv_nsec >= 1000000000L) dl->tv_sec++, dl->tv_nsec -= 1000000000L;
}

static void *sink_main(void *arg)
{
	event_sink_t *s = arg;
	int dirty = 0, napped = 0;
	struct timespec dl;
	/* background work: the loop and the workers go first when the CPUs are busy (on Linux the
	 * nice value is the calling thread's) */
	if (setpriority(PRIO_PROCESS, 0, 5) != 0) { /* not allowed: runs at the process's */ }
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->n && !s->stop) {
			if (dirty && s->flush) {
				/* a batch is done: the sink writes it out before it sleeps */
				dirty = 0;
				pthread_mutex_unlock(&s->mu);
				s->flush(s->arg);
				pthread_mutex_lock(&s->mu);
				continue;
			}
			if (!napped) {              /* more may come at once: wait a little, unasked */
				napped = 1;
				deadline_in(&dl, SINK_NAP_MS);
				pthread_cond_timedwait(&s->cv, &s->mu, &dl);
				continue;
			}
			/* nothing came: sleep until the loop wakes us (s->deep tells it to) */
			s->deep = 1;
			if (!s->idle) {
				pthread_cond_wait(&s->cv, &s->mu);
			} else {
				deadline_in(&dl, s->idle_ms);
				if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT && !s->n && !s->stop) {
					void (*idle)(void *) = s->idle;
					s->deep = 0;
					pthread_mutex_unlock(&s->mu);
					idle(s->arg);
					pthread_mutex_lock(&s->mu);
				}
			}
			s->deep = 0;
		}
		if (!s->n) break;                   /* stopping, and all written */
		napped = 0;
		/* a batch per lock: the loop takes the lock once per event, this side once per batch */
		struct event *batch[64];
		unsigned nb = 0;
		while (s->n && nb < 64) {
			batch[nb++] = s->q[s->head];
			s->head = (s->head + 1) % s->cap;
			s->n--;
		}
		pthread_mutex_unlock(&s->mu);
		for (unsigned k = 0; k < nb; k++) {
			s->fn(s->arg, batch[k]);
			free(batch[k]);
		}
		dirty = 1;
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	if (dirty && s->flush) s->flush(s->arg);
	if (s->fin) s->fin(s->arg);
	return NULL;
}

event_sink_t *events_sink(events_t *e, const char *name, unsigned cap, void (*fn)(void *arg, const struct event *ev),
                          void (*fin)(void *arg), void *arg)
{
	event_sink_t *s = calloc(1, sizeof *s);
	if (!s || !(s->name = strdup(name)) || !(s->q = calloc(cap ? cap : 1, sizeof *s->q))) {
		log_error("events: out of memory for the %s sink", name);
		if (s) free(s->name);
		free(s);
		return NULL;
	}
	s->e = e;
	s->cap = cap ? cap : 1;
	s->types = ~0u;
	s->fn = fn;
	s->fin = fin;
	s->arg = arg;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	/* the loop takes the signals (signalfd): the sink's thread must never get one */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&s->th, NULL, sink_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		log_error("events: cannot start the %s sink's thread: %s", name, strerror(rc));
		free(s->q);
		free(s->name);
		free(s);
		return NULL;
	}
	s->next = e->sinks;
	e->sinks = s;
	e->types |= s->types;
	return s;
}

void events_sink_idle(event_sink_t *s, unsigned period_ms, void (*idle)(void *arg))
{
	pthread_mutex_lock(&s->mu);
	s->idle_ms = period_ms ? period_ms : 1;
	s->idle = idle;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

void events_sink_types(event_sink_t *s, unsigned types)
{
	pthread_mutex_lock(&s->mu);
	s->types = types;
	pthread_mutex_unlock(&s->mu);
	/* the loop's filter: what every tap and sink takes, now */
	events_t *e = s->e;
	e->types = 0;
	for (size_t i = 0; i < e->ntaps; i++) e->types |= e->taps[i].types;
	for (const event_sink_t *k = e->sinks; k; k = k->next) e->types |= k->types;
}

void events_sink_flush(event_sink_t *s, void (*flush)(void *arg))
{
	pthread_mutex_lock(&s->mu);
	s->flush = flush;
	pthread_mutex_unlock(&s->mu);
}

uint64_t events_dropped(const event_sink_t *s)
{
	return s->dropped;
}

void events_sink_lost(event_sink_t *s, uint64_t n)
{
	pthread_mutex_lock(&s->mu);
	s->lost += n;
	pthread_mutex_unlock(&s->mu);
}

void events_sink_failing(event_sink_t *s, const char *why)
{
	pthread_mutex_lock(&s->mu);
	snprintf(s->failing, sizeof s->failing, "%s", why ? why : "");
	pthread_mutex_unlock(&s->mu);
}

int events_sink_health(const event_sink_t *s, uint64_t *lost, char *why, size_t len)
{
	pthread_mutex_t *mu = (pthread_mutex_t *)&s->mu;     /* the lock, not the sink, changes */
	pthread_mutex_lock(mu);
	*lost = s->lost;
	int failing = s->failing[0] != 0;
	if (len) snprintf(why, len, "%s", s->failing);
	pthread_mutex_unlock(mu);
	return failing;
}

const event_sink_t *events_sink_at(const events_t *e, size_t i)
{
	const event_sink_t *s = e ? e->sinks : NULL;
	while (s && i--) s = s->next;
	return s;
}

const char *events_sink_name(const event_sink_t *s)
{
	return s->name;
}

static size_t slen(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* one block: the event, then its strings */
static struct event *copy(const struct event *ev)
{
	size_t fires = ev->fires ? ev->nfires * sizeof *ev->fires : 0;
	size_t n = sizeof *ev + fires + slen(ev->job) + slen(ev->task_id) + slen(ev->where) + slen(ev->error) +
	           slen(ev->output) + slen(ev->reason) + slen(ev->detail);
	struct event *c = malloc(n);
	if (!c) return NULL;
	*c = *ev;
	char *p = (char *)(c + 1);
	if (fires) {                /* first: the block is aligned for them */
		memcpy(p, ev->fires, fires);
		c->fires = (const uint64_t *)(void *)p;
		p += fires;
	} else {
		c->fires = NULL;
	}
	const char **f[] = { &c->job, &c->task_id, &c->where, &c->error, &c->output, &c->reason, &c->detail };
	for (size_t k = 0; k < sizeof f / sizeof f[0]; k++) {
		if (!*f[k]) continue;
		size_t l = strlen(*f[k]) + 1;
		memcpy(p, *f[k], l);
		*f[k] = p;
		p += l;
	}
	return c;
}

void events_emit(events_t *e, const struct event *ev)
{
	if (!e || !(e->types & (1u << ev->type))) return;
	for (size_t i = 0; i < e->ntaps; i++)
		if (e->taps[i].types & (1u << ev->type)) e->taps[i].fn(e->taps[i].arg, ev);
	for (event_sink_t *s = e->sinks; s; s = s->next) {
		if (!(s->types & (1u << ev->type))) continue;
		struct event *c = copy(ev);
		pthread_mutex_lock(&s->mu);
		int full = !c || s->n == s->cap;
		if (!full) {
			s->q[(s->head + s->n) % s->cap] = c;
			/* wake the thread only when it sleeps for good, or when a quarter of the queue
			 * waits (a signal per event cost a futex call per event at 250,000 items/s) */
			s->n++;
			if (s->deep || s->n == (s->cap >= 4 ? s->cap / 4 : 1)) {
				pthread_cond_signal(&s->cv);
				s->deep = 0;
			}
		}
		/* caught up only once half the queue is free again: a queue that is drained a batch at a
		 * time hovers at full, and each step would start and end an episode */
		int low = s->n <= s->cap / 2;
		pthread_mutex_unlock(&s->mu);
		if (full) {
			free(c);
			s->dropped++;
			if (!s->episode++)
				log_warn("events: the %s sink is behind (%u events queued): events for it are dropped until it "
				         "catches up", s->name, s->cap);
		} else if (s->episode && low) {
			log_warn("events: the %s sink caught up; %" PRIu64 " event%s dropped for it (%" PRIu64 " in all)",
			         s->name, s->episode, s->episode == 1 ? " was" : "s were", s->dropped);
			s->episode = 0;
		}
	}
}

void events_free(events_t *e)
{
	if (!e) return;
	event_sink_t *s = e->sinks;
	while (s) {
		event_sink_t *next = s->next;
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_cond_signal(&s->cv);
		unsigned left = s->n;
		pthread_mutex_unlock(&s->mu);
		/* a sink stuck in a write (a file on a hung NFS mount) must not hold the exit */
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 5;
		if (pthread_timedjoin_np(s->th, NULL, &dl) == ETIMEDOUT) {
			log_warn("events: the %s sink did not finish within 5 s; %u queued event%s not written", s->name,
			         left, left == 1 ? " is" : "s are");
			s = next;           /* its thread still uses it: left to the exit */
			continue;
		}
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
		free(s->q);
		free(s->name);
		free(s);
		s = next;
	}
	free(e->instance);
	free(e);
}
