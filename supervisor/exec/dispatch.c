/* supervisor/exec/dispatch.c: requests, targets, in-flight table, outcomes (see dispatch.h). */
#include "supervisor/exec/dispatch.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/ring.h"
#include "ipc/shm.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"

enum { E_QUEUED, E_PUBLISHED };

struct entry {
	struct entry *hnext;               /* in-flight hash chain (published only) */
	struct entry *prev, *next;         /* queue or published list */
	int state;
	disp_target_t *target;
	uint64_t pos;                      /* ring position when published */
	uint64_t published_ns, deadline_ns, cancel_ns;
	uint64_t kill_ns;           /* kill by then (0: cancel_ns + the kill grace) */
	uint32_t cancel, killed;
	const char *cancel_why;     /* the outcome's cause when its worker gives none (static text) */
	int lease;                  /* stopped for the lease: it runs again (disp_hold) */
	int dropped;                /* disp_drop_held: its end is final whatever it is */
	struct jobrun *run;                /* published with a limit: its job's count */
	/* the item as its next attempt's frame carries it (f.xid: this attempt's id), its strings
	 * inside this allocation; and the request's limits and cookie (max_retries: changed by
	 * cancels and the lease) */
	struct frame_submit f;
	uint32_t timeout_s, max_retries, concurrency;
	uint64_t cookie;
};

struct list {
	struct entry *head, *tail;
	uint32_t n;
};

struct disp_target {
	disp_t *d;
	seg_t *seg;
	char name[48];
	struct disp_target_ops ops;
	void *arg;
	uint32_t outstanding;
	ev_io efd_w;
	disp_target_t *next;
	int removed;
	int bad;                           /* reported bad: stop reading it until it is removed */
	unsigned char *buf;                /* frame buffer, sized for the segment */
	uint32_t buf_len;
	frame_decoder_t *dec;
};

#define NBUCKETS 1024u
#define NJOBRUN 256u

/* Items of a job published now, for a job with a concurrency limit (only those have one): made
 * at its first publish, freed when its last item ends. */
struct jobrun {
	struct jobrun *next;
	uint32_t running;
	char job[];
};

struct disp {
	struct ev_loop *loop;
	struct disp_hooks h;
	void *arg;
	uint64_t kill_grace_ns;
	uint64_t next_xid;
	struct list q_pool, q_ext, published;
	struct entry *buckets[NBUCKETS];
	struct jobrun *jobruns[NJOBRUN];
	disp_target_t *targets;
	int paused;                 /* publish nothing (ZooKeeper connection lost) */
	int held;                   /* publish nothing: the lease ran out (disp_hold) */
	uint64_t lease_ns;          /* the lease deadline published to the workers (0: none) */
	int closing;                /* disp_free: no one hears outcomes any more (their fires are freed) */
};

/* ---- lists and the in-flight hash ----------------------------------------------------------- */

static void list_push(struct list *l, struct entry *e)
{
	e->next = NULL;
	e->prev = l->tail;
	if (l->tail) l->tail->next = e;
	else l->head = e;
	l->tail = e;
	l->n++;
}

static void list_del(struct list *l, struct entry *e)
{
	if (e->prev) e->prev->next = e->next;
	else l->head = e->next;
	if (e->next) e->next->prev = e->prev;
	else l->tail = e->prev;
	e->prev = e->next = NULL;
	l->n--;
}

static void hash_add(disp_t *d, struct entry *e)
{
	struct entry **b = &d->buckets[e->f.xid & (NBUCKETS - 1)];
	e->hnext = *b;
	*b = e;
}

static void hash_del(disp_t *d, struct entry *e)
{
	for (struct entry **p = &d->buckets[e->f.xid & (NBUCKETS - 1)]; *p; p = &(*p)->hnext)
		if (*p == e) {
			*p = e->hnext;
			return;
		}
}

static struct entry *hash_get(disp_t *d, uint64_t xid)
{
	for (struct entry *e = d->buckets[xid & (NBUCKETS - 1)]; e; e = e->hnext)
		if (e->f.xid == xid) return e;
	return NULL;
}

static struct jobrun **jobrun_slot(disp_t *d, const char *job)
{
	uint32_t h = 2166136261u;
	for (const char *c = job; *c; c++) h = (h ^ (unsigned char)*c) * 16777619u;
	struct jobrun **p = &d->jobruns[h & (NJOBRUN - 1)];
	while (*p && strcmp((*p)->job, job)) p = &(*p)->next;
	return p;
}

/* Whether e may be published now: its job's items out are below its limit. */
static int under_limit(disp_t *d, const struct entry *e)
{
	if (!e->concurrency) return 1;
	struct jobrun *r = *jobrun_slot(d, e->f.job);
	return !r || r->running < e->concurrency;
}

static int jobrun_add(disp_t *d, struct entry *e)
{
	if (!e->concurrency) return 0;
	struct jobrun **p = jobrun_slot(d, e->f.job);
	if (!*p) {
		size_t n = strlen(e->f.job) + 1;
		struct jobrun *r = calloc(1, sizeof *r + n);
		if (!r) return -1;
		memcpy(r->job, e->f.job, n);
		*p = r;
	}
	(*p)->running++;
	e->run = *p;
	return 0;
}

static void jobrun_del(disp_t *d, struct entry *e)
{
	struct jobrun *r = e->run;
	e->run = NULL;
	if (!r || --r->running) return;
	for (struct jobrun **p = jobrun_slot(d, r->job); *p; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	free(r);
}

static struct list *queue_of(disp_t *d, const struct entry *e)
{
	return e->f.kind == FRAME_KIND_EXTERNAL ? &d->q_ext : &d->q_pool;
}

/* ---- entries ----------------------------------------------------------------------------------- */

uint64_t disp_submit(disp_t *d, const struct disp_req *r)
{
	struct frame_submit f = r->frame;
	uint32_t k = f.kind;
	if (!f.item_param) f.item_param = "";
	if (!f.job_param) f.job_param = "";
	if (!f.job || !f.task_id || f.item >= f.total || (k == FRAME_KIND_SCRIPT && !f.cmd) ||
	    (k == FRAME_KIND_NATIVE && (!f.lib || (f.flow ? !f.fetch || !f.process : !f.sym))) ||
	    (f.flow && ((k != FRAME_KIND_NATIVE && k != FRAME_KIND_EXTERNAL) || f.flow > FRAME_FLOW_MAX ||
	                !f.batch_max || f.batch_max > FRAME_BATCH_MAX)) ||
	    (k == FRAME_KIND_HTTP && (!f.uri || !f.method))) {
		errno = EINVAL;
		return 0;
	}
	struct entry *e = calloc(1, sizeof(struct entry) + frame_submit_strings(&f));
	if (!e) return 0;
	frame_submit_copy(&e->f, &f, (char *)(e + 1));
	e->f.xid = d->next_xid++;
	e->f.attempt = 1;
	e->f.deadline_ms = 0;
	e->cookie = r->cookie;
	e->timeout_s = r->timeout_s;
	e->max_retries = r->max_retries;
	e->concurrency = r->concurrency;
	e->state = E_QUEUED;
	list_push(queue_of(d, e), e);
	return e->f.xid;
}

/* ---- publishing ------------------------------------------------------------------------------- */

static void finish(disp_t *d, struct entry *e, uint32_t status, int32_t code, int32_t sig, uint64_t dur_us,
                   const char *error, const char *where);

static int publish(disp_t *d, disp_target_t *t, struct entry *e)
{
	uint64_t now = wait_now_ns();
	if (e->timeout_s) {
		e->f.deadline_ms = wait_realtime_ns() / 1000000u + (uint64_t)e->timeout_s * 1000u;
		e->deadline_ns = now + (uint64_t)e->timeout_s * 1000000000u;
	} else {
		e->f.deadline_ms = 0;
		e->deadline_ns = 0;
	}
	long n = frame_encode_submit(&e->f, t->buf, t->buf_len);
	if (n < 0) {
		char why[160];
		snprintf(why, sizeof why, "%s", errno == EMSGSIZE ? "its frame does not fit a ring slot: the task id or "
		                                                    "parameters are too long" : "invalid values");
		list_del(queue_of(d, e), e);
		finish(d, e, FRAME_ST_ERROR, 0, 0, 0, why, t->name);
		return 0;
	}
	e->pos = atomic_load_explicit(&seg_header(t->seg)->sub_head, memory_order_relaxed);
	if (jobrun_add(d, e) < 0) return -1;     /* out of memory: try later */
	if (ring_publish(t->seg, t->buf, (uint32_t)n) < 0) {
		jobrun_del(d, e);
		return -1;   /* full (a worker still holds a claim it is copying out): try later */
	}
	list_del(queue_of(d, e), e);
	e->state = E_PUBLISHED;
	e->target = t;
	e->published_ns = now;
	e->cancel = e->killed = 0;
	e->cancel_why = NULL;
	e->kill_ns = 0;
	t->outstanding++;
	list_push(&d->published, e);
	hash_add(d, e);
	if (d->h.started) {
		struct disp_started st = {
			.xid = e->f.xid, .cookie = e->cookie, .job = e->f.job, .item = e->f.item, .attempt = e->f.attempt,
			.where = t->name,
		};
		d->h.started(d->arg, &st);
	}
	return 1;
}

void disp_pause(disp_t *d, int on)
{
	d->paused = on;
	if (!on) disp_kick(d);
}

void disp_set_lease(disp_t *d, uint64_t deadline_ns)
{
	d->lease_ns = deadline_ns;
}

void disp_kick(disp_t *d)
{
	if (d->paused || d->held || d->closing) return;
	/* never publish under a lease that has passed: its worker would refuse (or stop) the item at
	 * once, and it would come back here, again and again, until the lease is renewed */
	if (d->lease_ns && wait_now_ns() >= d->lease_ns) return;
	for (disp_target_t *t = d->targets; t; t = t->next) {
		if (t->removed) continue;
		uint32_t cap = t->ops.capacity(t->arg);
		int published = 0;
		struct list *queues[2] = { &d->q_pool, &d->q_ext };
		for (int qi = 0; qi < 2 && t->outstanding < cap; qi++) {
			struct entry *e = queues[qi]->head;
			while (e && t->outstanding < cap) {
				struct entry *next = e->next;
				/* a job at its concurrency waits; those behind it go on */
				if (under_limit(d, e) && t->ops.accepts(t->arg, e->f.job, e->f.kind)) {
					int r = publish(d, t, e);
					if (r < 0) break;
					published += r;
				}
				e = next;
			}
		}
		if (published) ring_flush(t->seg);
	}
}

/* ---- outcomes ------------------------------------------------------------------------------- */

/* output: the last lines of the item's output, as its worker sent them (NULL: none) */
static void finish_out(disp_t *d, struct entry *e, uint32_t status, int32_t code, int32_t sig, uint64_t dur_us,
                       const char *error, const char *where, const char *output)
{
	/* stopped for the lease: not the item's failure; it runs again once the session is known to
	 * be safe (disp_release), without using up a retry */
	int again = e->lease && !e->dropped && status != FRAME_ST_OK;
	int retry = again || ((status == FRAME_ST_FAILED || status == FRAME_ST_CRASHED || status == FRAME_ST_TIMEOUT) &&
	                      e->f.attempt <= e->max_retries);
	if (e->cancel && e->cancel_why && (!error || !error[0])) error = e->cancel_why;
	if (again) {
		if (!error || !error[0]) error = "stopped for the ZooKeeper lease";
		if (e->max_retries < UINT32_MAX) e->max_retries++;
		e->lease = 0;
	}
	struct disp_outcome o = {
		.xid = e->f.xid, .cookie = e->cookie, .fire_id = e->f.fire_id, .epoch = e->f.epoch, .job = e->f.job,
		.item = e->f.item, .attempt = e->f.attempt, .status = status, .exit_code = code, .signal = sig,
		.duration_us = dur_us, .error = error ? error : "", .where = where ? where : "", .final = !retry,
		.output = output,
	};
	if (!d->closing) d->h.outcome(d->arg, &o);
	if (retry) {
		/* a new xid per attempt: a cancel meant for this attempt (its timeout, say) names its
		 * xid in the worker's entry, and must not stop the next one */
		e->f.xid = d->next_xid++;
		e->f.attempt++;
		e->state = E_QUEUED;
		e->target = NULL;
		list_push(queue_of(d, e), e);
	} else {
		free(e);
	}
}

static void finish(disp_t *d, struct entry *e, uint32_t status, int32_t code, int32_t sig, uint64_t dur_us,
                   const char *error, const char *where)
{
	finish_out(d, e, status, code, sig, dur_us, error, where, NULL);
}

/* An item leaves its target (completed or lost). */
static void unpublish(disp_t *d, struct entry *e)
{
	list_del(&d->published, e);
	hash_del(d, e);
	jobrun_del(d, e);
	if (e->target && e->target->outstanding) e->target->outstanding--;
}

static uint32_t cancel_status(uint32_t reason)
{
	return reason == SHM_CANCEL_TIMEOUT ? FRAME_ST_TIMEOUT : FRAME_ST_CANCELLED;
}

/* An outcome the supervisor did not ask for, caused by the lease: the worker refused to start it
 * or stopped it (cancelled), or killed what was left of it, because the lease it was given had
 * passed; or it ended while the dispatcher holds everything for the lease. */
static int is_lease_stop(const disp_t *d)
{
	return d->held || (d->lease_ns && wait_now_ns() >= d->lease_ns);
}

static void blame(disp_target_t *t, const char *why)
{
	t->bad = 1;
	t->ops.bad_frame(t->arg, why);
}

static void handle_completion(disp_t *d, disp_target_t *t, const struct ring_comp *ci, const unsigned char *buf,
                              size_t len)
{
	struct frame_complete c;
	struct frame_err err;
	char why[256];
	if (frame_decode_complete(t->dec, buf, len, &c, &err) < 0) {
		snprintf(why, sizeof why, "worker %" PRIu32 " wrote a bad completion frame (%s): %s", ci->worker,
		         frame_errc_name(err.code), err.msg);
		blame(t, why);
		return;
	}
	struct entry *e = hash_get(d, c.xid);
	if (!e || e->target != t || e->f.item != c.item || e->f.attempt != c.attempt || strcmp(e->f.job, c.job)) {
		/* A worker that could not decode its item reports an error without its identity (xid
		 * 0); the completion still names the position it held, which is ours to match. */
		struct entry *byp = NULL;
		for (struct entry *x = d->published.head; x && ci->held_pos; x = x->next)
			if (x->target == t && x->pos + 1 == ci->held_pos) byp = x;
		if (c.xid == 0 && c.status == FRAME_ST_ERROR && byp) {
			e = byp;
		} else {
			snprintf(why, sizeof why, "worker %" PRIu32 " reported xid %" PRIu64 " (%s item %" PRIu32
			         " attempt %" PRIu32 "), which it was not running", ci->worker, c.xid, c.job, c.item, c.attempt);
			blame(t, why);
			/* what it did hold is not lost: report it as an error rather than forget it */
			if (byp) {
				char where[64];
				snprintf(where, sizeof where, "%s#%" PRIu32, t->name, ci->worker);
				unpublish(d, byp);
				finish(d, byp, FRAME_ST_ERROR, 0, 0, 0, "its worker reported garbage for it", where);
			}
			return;
		}
	}
	char where[64];
	snprintf(where, sizeof where, "%s#%" PRIu32, t->name, ci->worker);
	unpublish(d, e);
	uint32_t st = c.status;
	/* an item asked to stop reports how it ended; a kill we caused is ours to name */
	if (e->cancel && (st == FRAME_ST_CRASHED || st == FRAME_ST_FAILED)) st = cancel_status(e->cancel);
	/* stopped, or not started, by its worker for the lease in shared memory (the supervisor was
	 * held up, or had not published the renewed one): as if we had stopped it */
	if (!e->cancel && st != FRAME_ST_OK && is_lease_stop(d)) e->lease = 1;
	finish_out(d, e, st, c.exit_code, c.signal, c.duration_us, c.error, where, c.output);
}

/* Take every completion waiting in t's ring; returns how many. */
static int drain_target(disp_t *d, disp_target_t *t)
{
	int got = 0;
	while (!t->bad) {
		struct ring_comp ci;
		long n = ring_drain(t->seg, t->buf, t->buf_len, &ci);
		if (n > 0) {
			handle_completion(d, t, &ci, t->buf, (size_t)n);
			got++;
			continue;
		}
		if (n < 0) {
			char why[128];
			snprintf(why, sizeof why, "completion slot from worker %" PRIu32 " holds garbage (%s)", ci.worker,
			         strerror(errno));
			blame(t, why);
			break;
		}
		if (!ring_comp_idle(t->seg)) break;
	}
	return got;
}

static void efd_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	disp_target_t *t = w->data;
	uint64_t v;
	if (read(t->efd_w.fd, &v, sizeof v) < 0 && errno != EAGAIN && errno != EINTR)
		log_error("read(eventfd %d) failed: %s", t->efd_w.fd, strerror(errno));
	if (drain_target(t->d, t)) disp_kick(t->d);
}

void disp_lost(disp_t *d, disp_target_t *t, uint32_t worker, const void *frame, uint32_t len)
{
	if (len > t->buf_len) len = t->buf_len;
	memcpy(t->buf, frame, len);   /* out of shared memory before decoding */
	struct frame_submit f;
	struct frame_err err;
	if (frame_decode_submit(t->dec, t->buf, len, &f, &err) < 0) {
		log_error("dispatch: %s worker %" PRIu32 " held an undecodable item (%s)", t->name, worker, err.msg);
		return;
	}
	struct entry *e = hash_get(d, f.xid);
	if (!e || e->target != t) {
		log_warn("dispatch: %s worker %" PRIu32 " held xid %" PRIu64 ", which is not in flight", t->name, worker, f.xid);
		return;
	}
	char where[64], why[96];
	snprintf(where, sizeof where, "%s#%" PRIu32, t->name, worker);
	unpublish(d, e);
	uint32_t st = e->cancel ? cancel_status(e->cancel) : FRAME_ST_CRASHED;
	snprintf(why, sizeof why, "%s", e->cancel ? "stopped after the grace period" : "its worker died");
	if (!e->cancel && is_lease_stop(d)) e->lease = 1;
	finish(d, e, st, 0, e->killed ? SIGKILL : 0, (wait_now_ns() - e->published_ns) / 1000u, why, where);
}

/* ---- cancel and timeouts ------------------------------------------------------------------------ */

static int holder(disp_target_t *t, const struct entry *e)
{
	for (uint32_t i = 0; i < seg_nworkers(t->seg); i++)
		if (atomic_load(&seg_worker(t->seg, i)->held_pos) == e->pos + 1) return (int)i;
	return -1;
}

static void request_cancel(disp_t *d, struct entry *e, uint32_t reason, uint64_t now)
{
	(void)d;
	e->cancel = reason;
	e->cancel_ns = now;
	int w = holder(e->target, e);
	if (w < 0) return;   /* not claimed yet: the worker sees the passed deadline when it claims */
	struct shm_worker *sw = seg_worker(e->target->seg, (uint32_t)w);
	atomic_store(&sw->cancel_xid, e->f.xid);
	atomic_store(&sw->cancel, reason);
	pid_t pid = e->target->ops.worker_pid ? e->target->ops.worker_pid(e->target->arg, (uint32_t)w) : 0;
	if (pid > 0 && kill(pid, SIGUSR1) < 0 && errno != ESRCH)
		log_error("kill(%d, SIGUSR1) failed: %s", (int)pid, strerror(errno));
}

void disp_tick(disp_t *d, uint64_t now)
{
	for (struct entry *e = d->published.head, *next; e; e = next) {
		next = e->next;
		if (!e->cancel && e->deadline_ns && now >= e->deadline_ns) {
			log_warn("dispatch: %s item %" PRIu32 " (xid %" PRIu64 ") ran past its %" PRIu32 "s timeout; stopping it",
			         e->f.job, e->f.item, e->f.xid, e->timeout_s);
			request_cancel(d, e, SHM_CANCEL_TIMEOUT, now);
		} else if (e->cancel && !e->killed &&
		           now >= (e->kill_ns ? e->kill_ns : e->cancel_ns + d->kill_grace_ns)) {
			int w = holder(e->target, e);
			if (w < 0) continue;
			e->killed = 1;
			e->target->ops.kill_worker(e->target->arg, (uint32_t)w, "its item did not stop within the grace period");
		}
	}
}

void disp_cancel_queued(disp_t *d, const char *why)
{
	struct list *queues[2] = { &d->q_pool, &d->q_ext };
	for (int qi = 0; qi < 2; qi++)
		while (queues[qi]->head) {
			struct entry *e = queues[qi]->head;
			list_del(queues[qi], e);
			e->max_retries = 0;
			finish(d, e, FRAME_ST_CANCELLED, 0, 0, 0, why, "queue");
		}
}

void disp_cancel_running(disp_t *d, uint32_t reason, const char *why)
{
	uint64_t now = wait_now_ns();
	for (struct entry *e = d->published.head; e; e = e->next) {
		e->max_retries = 0;
		if (e->cancel) continue;
		request_cancel(d, e, reason, now);
		e->cancel_why = why;
	}
}

void disp_cancel_job(disp_t *d, const char *job, uint32_t reason, const char *why)
{
	uint64_t now = wait_now_ns();
	struct list *queues[2] = { &d->q_pool, &d->q_ext };
	for (int qi = 0; qi < 2; qi++)
		for (struct entry *e = queues[qi]->head, *next; e; e = next) {
			next = e->next;
			if (strcmp(e->f.job, job)) continue;
			list_del(queues[qi], e);
			e->max_retries = 0;
			finish(d, e, FRAME_ST_CANCELLED, 0, 0, 0, why, "queue");
		}
	for (struct entry *e = d->published.head; e; e = e->next) {
		if (strcmp(e->f.job, job)) continue;
		e->max_retries = 0;
		if (!e->cancel) request_cancel(d, e, reason, now);
	}
}

void disp_cancel_running_by(disp_t *d, uint32_t reason, uint64_t kill_at_ns)
{
	uint64_t now = wait_now_ns();
	for (struct entry *e = d->published.head; e; e = e->next) {
		e->max_retries = 0;
		if (!e->cancel) request_cancel(d, e, reason, now);
		if (!e->kill_ns || kill_at_ns < e->kill_ns) e->kill_ns = kill_at_ns;
	}
}

void disp_hold(disp_t *d, uint64_t kill_at_ns)
{
	uint64_t now = wait_now_ns();
	d->held = 1;
	for (struct entry *e = d->published.head; e; e = e->next) {
		if (!e->cancel) request_cancel(d, e, SHM_CANCEL_LEASE, now);
		if (e->cancel == SHM_CANCEL_LEASE) e->lease = 1;
		if (!e->kill_ns || kill_at_ns < e->kill_ns) e->kill_ns = kill_at_ns;
	}
}

void disp_release(disp_t *d)
{
	d->held = 0;
	disp_kick(d);
}

int disp_held(const disp_t *d)
{
	return d->held;
}

void disp_drop_held(disp_t *d, const char *why)
{
	/* queued ones end now (a requeued entry no longer has its lease mark); running ones end
	 * for good however they end */
	disp_cancel_queued(d, why);
	for (struct entry *e = d->published.head; e; e = e->next) {
		e->dropped = 1;
		e->max_retries = 0;
	}
}

void disp_abandon(disp_t *d, disp_target_t *t, uint32_t status, const char *why)
{
	/* a worker may have written its completion and left before we read it: read it first */
	drain_target(d, t);
	for (struct entry *e = d->published.head, *next; e; e = next) {
		next = e->next;
		if (e->target != t) continue;
		unpublish(d, e);
		e->max_retries = 0;
		finish(d, e, status, 0, 0, 0, why, t->name);
	}
}

/* ---- targets ----------------------------------------------------------------------------------- */

disp_target_t *disp_add_target(disp_t *d, seg_t *seg, const char *name, const struct disp_target_ops *ops,
                               void *arg)
{
	disp_target_t *t = calloc(1, sizeof *t);
	if (!t) return NULL;
	t->d = d;
	t->seg = seg;
	snprintf(t->name, sizeof t->name, "%s", name);
	t->ops = *ops;
	t->arg = arg;
	uint32_t a = seg_sub_frame_max(seg), b = seg_comp_frame_max(seg);
	t->buf_len = a > b ? a : b;
	t->buf = malloc(t->buf_len);
	t->dec = frame_decoder_new(t->buf_len < FRAME_HDR_LEN ? FRAME_HDR_LEN : t->buf_len);
	if (!t->buf || !t->dec) {
		free(t->buf);
		frame_decoder_free(t->dec);
		free(t);
		return NULL;
	}
	ev_io_init(&t->efd_w, efd_cb, seg_eventfd(seg), EV_READ);
	t->efd_w.data = t;
	ev_io_start(d->loop, &t->efd_w);
	ring_comp_idle(seg);   /* arm the eventfd wakeup */
	t->next = d->targets;
	d->targets = t;
	return t;
}

void disp_remove_target(disp_t *d, disp_target_t *t)
{
	ev_io_stop(d->loop, &t->efd_w);
	/* completions written before the target went away count: an item that finished must not
	 * be reported lost (and run again) */
	drain_target(d, t);
	t->removed = 1;
	for (struct entry *e = d->published.head, *next; e; e = next) {
		next = e->next;
		if (e->target != t) continue;
		unpublish(d, e);
		finish(d, e, e->cancel ? cancel_status(e->cancel) : FRAME_ST_CRASHED, 0, 0,
		       (wait_now_ns() - e->published_ns) / 1000u, "its worker went away", t->name);
	}
	for (disp_target_t **p = &d->targets; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	free(t->buf);
	frame_decoder_free(t->dec);
	free(t);
	disp_kick(d);
}

disp_t *disp_new(struct ev_loop *loop, const struct disp_hooks *h, void *arg, uint32_t kill_grace_ms)
{
	disp_t *d = calloc(1, sizeof *d);
	if (!d) return NULL;
	d->loop = loop;
	d->h = *h;
	d->arg = arg;
	d->kill_grace_ns = (uint64_t)kill_grace_ms * 1000000u;
	d->next_xid = 1;
	return d;
}

void disp_free(disp_t *d)
{
	if (!d) return;
	d->closing = 1;
	while (d->targets) disp_remove_target(d, d->targets);
	struct list *lists[3] = { &d->q_pool, &d->q_ext, &d->published };
	for (int i = 0; i < 3; i++)
		while (lists[i]->head) {
			struct entry *e = lists[i]->head;
			list_del(lists[i], e);
			free(e);
		}
	for (uint32_t b = 0; b < NJOBRUN; b++)
		while (d->jobruns[b]) {
			struct jobrun *r = d->jobruns[b];
			d->jobruns[b] = r->next;
			free(r);
		}
	free(d);
}

uint32_t disp_pending(const disp_t *d) { return d->q_pool.n + d->q_ext.n; }
uint32_t disp_running(const disp_t *d) { return d->published.n; }

void disp_foreach_running(const disp_t *d, void (*fn)(void *arg, const struct disp_run_info *r), void *arg)
{
	for (const struct entry *e = d->published.head; e; e = e->next) {
		struct disp_run_info r = {
			.job = e->f.job, .target = e->target ? e->target->name : "", .item = e->f.item, .attempt = e->f.attempt,
			.fire_id = e->f.fire_id, .epoch = e->f.epoch, .started_ns = e->published_ns,
		};
		fn(arg, &r);
	}
}
