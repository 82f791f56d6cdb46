/* supervisor/exec/pool.h: the pre-forked worker pool: spawn (posix_spawn of ejob-worker with the
 * segment at fixed fds, docs/worker.md), readiness, reaping, respawn with backoff, heartbeat
 * watchdog, stop. Items a dead worker held are reclaimed from the segment and handed to the
 * dispatcher through a hook; the pool never decides an item's fate. */
#ifndef EJOB_POOL_H
#define EJOB_POOL_H

#include <ev.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/seg.h"
#include "supervisor/base/log.h"

typedef struct pool pool_t;

struct pool_hooks {
	/* An item a dead worker held, still in the segment: copy it before returning. */
	void (*lost_item)(void *arg, uint32_t worker, const void *frame, uint32_t len);
	/* A worker became ready (capacity may have grown). */
	void (*ready)(void *arg, uint32_t worker);
	/* After pool_stop: the last worker is gone. */
	void (*stopped)(void *arg);
};

struct pool_params {
	uint32_t nworkers;               /* the segment's worker entries, all used */
	const char *worker_bin;          /* path of ejob-worker */
	enum log_level log_level;        /* passed to workers */
	int log_json;                    /* passed to workers: --log-format json (supervisor.logFormat) */
	uint32_t heartbeat_timeout_ms;   /* kill a worker whose heartbeat is older (not in native code) */
	uint32_t backoff_max_ms;         /* respawn delay ceiling while a worker keeps dying before ready */
	/* passed to workers (--script-output-max-lines/-bytes): how much of a script item's output
	 * one run may put in the log; 0 = no limit */
	uint32_t script_output_max_lines, script_output_max_bytes;
};

pool_t *pool_new(struct ev_loop *loop, seg_t *seg, const struct pool_params *p, const struct pool_hooks *h,
                 void *arg);
void pool_start(pool_t *p);
/* Stop: set the segment's shutdown flag, SIGTERM every worker (each finishes its item), and
 * SIGKILL whatever is left (with its item's process group) after grace_ms. hooks.stopped runs
 * once all are reaped. */
void pool_stop(pool_t *p, uint32_t grace_ms);
void pool_free(pool_t *p);

uint32_t pool_size(const pool_t *p);
int pool_is_ready(const pool_t *p, uint32_t worker);   /* alive and said ready */
uint32_t pool_ready_count(const pool_t *p);
/* The slots by state, and the restarts so far (for the metrics). */
struct pool_stats {
	uint32_t idle;              /* no process, none coming (stopped) */
	uint32_t starting;          /* started, not ready yet */
	uint32_t ready;             /* said ready: capacity */
	uint32_t waiting;           /* died: its respawn is due (backoff) */
	uint64_t respawns;          /* workers started again after one died */
};
void pool_stats(const pool_t *p, struct pool_stats *st);
pid_t pool_pid(const pool_t *p, uint32_t worker);      /* 0 when no process */

/* Kill a worker and the process group of its running item (SIGKILL), e.g. when its item
 * outlived its timeout grace. It is reaped, its items reclaimed, and it is replaced. */
void pool_kill(pool_t *p, uint32_t worker, const char *why);

/* Periodic checks (heartbeats); called by the supervisor's tick. */
void pool_tick(pool_t *p, uint64_t now_ns);

/* Handle a reaped child if it is one of ours: 1 if it was, 0 if not. */
int pool_reaped(pool_t *p, pid_t pid, int status);

#endif
