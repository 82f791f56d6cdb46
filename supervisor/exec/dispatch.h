/* supervisor/exec/dispatch.h: every shard-item execution from request to outcome.
 *
 * Requests queue here and are published to a target (the worker pool's segment, or an external
 * attachment's) only while that target has an idle worker: an item's deadline therefore starts
 * when it starts, and nothing waits in a ring behind a busy pool. Completions are drained from
 * each target's completion ring when its eventfd fires; items of dead workers come back through
 * disp_lost. Each request ends in exactly one final outcome, after its retries. */
#ifndef EJOB_DISPATCH_H
#define EJOB_DISPATCH_H

#include <ev.h>
#include <stdint.h>

#include "ipc/frame.h"
#include "ipc/seg.h"

typedef struct disp disp_t;
typedef struct disp_target disp_target_t;

/* One item to run. frame: the item as its frame carries it (ipc/item_fields.h), strings copied
 * at submit; its xid, attempt and deadline_ms are the dispatcher's (ignored here); item_param
 * and job_param NULL stand for "". By kind: SCRIPT needs cmd, NATIVE lib and sym (a dataflow
 * job's: lib, fetch and process), HTTP uri and method; flow (a dataflow job's, NATIVE or
 * EXTERNAL) needs batch_max. */
struct disp_req {
	struct frame_submit frame;
	uint32_t timeout_s;         /* 0 = none */
	uint32_t max_retries;       /* runs again while attempt <= max_retries */
	uint32_t concurrency;       /* items of this job published at once, at most (0: no limit but
	                               the targets' workers): the job's executor SINGLE_THREAD is 1 */
	uint64_t cookie;            /* handed back with the outcome */
};

struct disp_outcome {
	uint64_t xid, cookie, fire_id, epoch;
	const char *job;
	uint32_t item, attempt;
	uint32_t status;            /* enum frame_status */
	int32_t exit_code, signal;
	uint64_t duration_us;
	const char *error;
	const char *where;          /* "worker 3", "attach:4242#0" */
	const char *output;         /* the last lines of its output (NULL: none sent) */
	int final;                  /* 1: no retry follows */
};

/* An attempt published to a worker. */
struct disp_started {
	uint64_t xid, cookie;
	const char *job;
	uint32_t item, attempt;
	const char *where;          /* the target: "pool", "attach:4242" */
};

struct disp_hooks {
	void (*outcome)(void *arg, const struct disp_outcome *o);   /* every attempt's end */
	void (*started)(void *arg, const struct disp_started *s);   /* published to a worker */
};

/* A target's side of things, supplied by whoever owns it (pool, attachment). */
struct disp_target_ops {
	uint32_t (*capacity)(void *arg);                 /* workers able to take an item now */
	int (*accepts)(void *arg, const char *job, uint32_t kind);
	pid_t (*worker_pid)(void *arg, uint32_t worker); /* to signal a cancel; 0 = do not signal */
	void (*kill_worker)(void *arg, uint32_t worker, const char *why);   /* past the grace */
	/* Garbage in its completion ring: the owner should drop the target. It must not call
	 * disp_remove_target from inside this call (the drain is still using it): defer it. */
	void (*bad_frame)(void *arg, const char *why);
};

disp_t *disp_new(struct ev_loop *loop, const struct disp_hooks *h, void *arg, uint32_t kill_grace_ms);
void disp_free(disp_t *d);    /* items still out end untold: their fires are freed before it */

disp_target_t *disp_add_target(disp_t *d, seg_t *seg, const char *name, const struct disp_target_ops *ops,
                               void *arg);
/* A target going away: its held items must have been handed to disp_lost already; anything
 * still published to it and not reported is treated as lost too. */
void disp_remove_target(disp_t *d, disp_target_t *t);

/* Queue one execution; returns its xid (never 0), or 0 with errno (EINVAL: bad request). */
uint64_t disp_submit(disp_t *d, const struct disp_req *r);
/* Publish what can be published now (after submits, when capacity grew). */
void disp_kick(disp_t *d);
/* While paused nothing is published (queued items wait; running ones go on). Unpausing kicks. */
void disp_pause(disp_t *d, int on);
/* An item a dead worker held (frame bytes from the segment). */
void disp_lost(disp_t *d, disp_target_t *t, uint32_t worker, const void *frame, uint32_t len);
/* Report every queued item cancelled (final). */
void disp_cancel_queued(disp_t *d, const char *why);
/* Ask every running item to stop (reason SHM_CANCEL_*); none of them will run again. why
 * (static text, or NULL): the cause its outcome carries when its worker names none. */
void disp_cancel_running(disp_t *d, uint32_t reason, const char *why);
/* Every item of one job: queued ones end cancelled (why), running ones are asked to stop
 * (reason SHM_CANCEL_*, killed after the kill grace); none runs again. */
void disp_cancel_job(disp_t *d, const char *job, uint32_t reason, const char *why);
/* As disp_cancel_running, with the kill (process group and worker) due at kill_at_ns
 * (CLOCK_MONOTONIC) instead of a kill grace after now: for the ZooKeeper lease, which ends at a
 * fixed time. */
void disp_cancel_running_by(disp_t *d, uint32_t reason, uint64_t kill_at_ns);
/* The ZooKeeper lease is running out: publish nothing, and ask every running item to stop (SIGTERM
 * now, the kill at kill_at_ns). An item that ends stopped (and one its worker stops or refuses to
 * start for the lease in shared memory) goes back to the queue as its next attempt, without using
 * up a retry, and waits there with the queued ones: disp_release() when the session is known to
 * be safe again publishes them; disp_drop_held() when it is gone ends them all, final. */
void disp_hold(disp_t *d, uint64_t kill_at_ns);
void disp_release(disp_t *d);
int disp_held(const disp_t *d);
void disp_drop_held(disp_t *d, const char *why);
/* The lease deadline given to the workers (CLOCK_MONOTONIC; 0: none): an item that ends after it
 * without being asked to stop was stopped for the lease. */
void disp_set_lease(disp_t *d, uint64_t deadline_ns);
/* Report every item published to t and not yet ended with `status` (items no worker claimed
 * when the target stops). */
void disp_abandon(disp_t *d, disp_target_t *t, uint32_t status, const char *why);
/* Timeouts; called by the supervisor's tick. */
void disp_tick(disp_t *d, uint64_t now_ns);

uint32_t disp_pending(const disp_t *d);     /* queued, not yet published */
uint32_t disp_running(const disp_t *d);     /* published, no outcome yet */

/* The items published and not ended, oldest first (for /status): fn(arg, r) for each. */
struct disp_run_info {
	const char *job, *target;   /* target: "pool", "attach:4242" */
	uint32_t item, attempt;
	uint64_t fire_id, epoch;
	uint64_t started_ns;        /* CLOCK_MONOTONIC: published */
};
void disp_foreach_running(const disp_t *d, void (*fn)(void *arg, const struct disp_run_info *r), void *arg);

#endif
