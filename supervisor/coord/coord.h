/* supervisor/coord/coord.h: the jobs of this supervisor in ZooKeeper, with ElasticJob-Lite 3.x's layout
 * (docs/design.md): registration, leader election, sharding, and the execution nodes of each fire.
 *
 * Everything runs on the loop through supervisor/zkc. Per job:
 *   registration  /{job} (its type), config (written when absent or overwrite: true; otherwise the
 *                 stored one is used), servers/{ip}, instances/{ip}@-@{pid} (ephemeral); again on
 *                 every new session;
 *   election      leader/election/instance (ephemeral) created in one multi with a write of
 *                 leader/election whose new version is the leader's fence: every leader write is a
 *                 multi that starts by checking it, so a deposed leader cannot write;
 *   sharding      the leader marks leader/sharding/necessary when instances, servers or the item
 *                 count change, and at the next fire shards in one multi (instance nodes, the
 *                 sharding node whose mzxid becomes the epoch, necessary and processing removed);
 *                 the others follow the sharding node's watch;
 *   a fire        the items this instance owns (minus disabled ones) get their running nodes in
 *                 one multi, run with the epoch as fencing token, and their completed nodes in
 *                 batched multis as they end. */
#ifndef EJOB_COORD_H
#define EJOB_COORD_H

#include <ev.h>
#include <stdint.h>

#include "conf/conf.h"
#include "supervisor/run/fire.h"
#include "supervisor/run/sched.h"

typedef struct coord coord_t;

/* What coord asks of the rest of the supervisor: it reaches nothing else. */
struct coord_hooks {
	/* Dispatching: paused while ZooKeeper is away (on), going again (off). */
	void (*pause)(void *arg, int on);
	/* The lease as the workers must see it (CLOCK_MONOTONIC; 0: none): items stop by
	 * deadline_ns and are killed at kill_ns. Told at every tick, and at once when a connection
	 * brings a fresh lease, before anything is dispatched under it. */
	void (*lease)(void *arg, uint64_t deadline_ns, uint64_t kill_ns);
	/* The lease runs out: stop every running item (killed at kill_ns) and hold them with the
	 * queued ones; release() when the session is safe again, drop_held() when it is gone. */
	void (*hold)(void *arg, uint64_t kill_ns);
	void (*release)(void *arg);
	void (*drop_held)(void *arg, const char *why);
	/* For the log: items running, queued (held ones among them), whether they are held. */
	void (*counts)(void *arg, uint32_t *running, uint32_t *queued, int *held);
	/* Stop every item of job here, queued and running (an operator shut it down or disabled
	 * this server); why: the outcome's text for the queued ones. */
	void (*cancel_job)(void *arg, const char *job, const char *why);
	/* The scheduler's side: a fire it started has ended (missed: without running, its catch-up
	 * follows); the job can fire again (a catch-up owed starts); fire it now (the trigger
	 * node; param: its parameter, that fire's jobParameter, NULL: none; run and root: a workflow
	 * run's trigger (0, NULL: none); at_ms: the node's ctime, the fire's id, the same on every
	 * instance that one multi triggered; 0, or -1 for no such job). */
	void (*fire_ended)(void *arg, sched_job_t *h, int missed);
	void (*kick)(void *arg, const char *job);
	int (*trigger)(void *arg, const char *job, const char *param, uint64_t run, const char *root, int64_t at_ms);
	/* A workflow run failed: item of job failed for good here, in run of root, and this instance
	 * made the run's one message node (coord_flow.c): send the one message (cause, output tail). */
	void (*flow_failed)(void *arg, const char *job, uint32_t item, uint64_t run, const char *root, const char *cause,
	                    const char *tail);
	/* The one holder of each job's config in force is coord (the node's, else the file's): the
	 * scheduler learns it only here, at coord_set_jobs and at each change of the node. c is the
	 * config in force (valid until the next call for job), handle what the scheduler hands back
	 * with each fire (coord_fire); c NULL: the job is removed. */
	void (*job_conf)(void *arg, const char *job, const conf_job_t *c, void *handle);
	/* No first session with ZooKeeper within regCenter.maxRetries rounds of attempts (ElasticJob's
	 * registry center gives up at start too): why, to say before exiting. */
	void (*unreachable)(void *arg, const char *why);
	/* An operator asked this machine to drain (servers/{ip} DRAINING, ejobctl drain): the
	 * supervisor drains as for SIGUSR2 (coord_drain, then its running items' grace). */
	void (*drain)(void *arg);
};

struct coord_params {
	struct ev_loop *loop;
	const conf_t *conf;         /* regCenter (copied), and what coord_set_jobs takes */
	const char *instance_id;    /* ElasticJob's "{ip}@-@{pid}" */
	const char *ip;
	fires_t *fires;             /* where its fires are tracked */
};

coord_t *coord_new(const struct coord_params *p, const struct coord_hooks *h, void *arg);
void coord_start(coord_t *c);                   /* connect; jobs come with coord_set_jobs */
void coord_stop(coord_t *c);                    /* shutdown: no fire starts any more; every job leaves */
/* Drain: every job leaves this instance (instances/{id} deleted, the resharding flag raised, the
 * leadership given up) while the session lives; items stopped or not started here are handed over
 * (failover on) as each ends. Nothing undoes it but a restart. */
void coord_drain(coord_t *c);
/* Fires and runs of this instance whose completions are not written yet (0: it holds nothing
 * in ZooKeeper that a stop would lose; also 0 once the session is gone). */
uint32_t coord_busy(const coord_t *c);
void coord_free(coord_t *c);
int coord_set_jobs(coord_t *c, const conf_t *conf);

/* The scheduler's start hook in ZooKeeper mode (arg: the coord_t). */
int coord_fire(void *arg, const struct sched_fire_info *f);
void coord_tick(coord_t *c, uint64_t now_ns);

/* Where the session and the registration stand, for systemd's READY=1 and STATUS= (sdnotify.h). */
struct coord_status {
	int connected;              /* the session is connected */
	int ever_connected;         /* connected at least once */
	uint32_t jobs;              /* jobs of the config that register here (not removed, not shut down
	                               by an operator) */
	uint32_t registered;        /* of them, registered in the current session */
	uint64_t lease_ns;          /* CLOCK_MONOTONIC until which the session surely lives (0: none) */
};
void coord_status(const coord_t *c, struct coord_status *st);

/* For the benchmark and tests: ZooKeeper requests sent so far. */
uint64_t coord_requests(const coord_t *c);

/* For the metrics (counters since the start) and /status. */
struct coord_stats {
	enum { COORD_CONNECTING, COORD_CONNECTED, COORD_EXPIRED, COORD_AUTH_FAILED } session;
	int64_t session_id;         /* the server's id of the session (0: none) */
	int timeout_ms;             /* negotiated session timeout (0: never connected) */
	uint64_t requests;          /* ZooKeeper requests sent */
	uint64_t errors;            /* of them, failed without the server's answer (lost connection, ...) */
	uint64_t expirations;       /* sessions found expired */
	uint64_t failovers;         /* items of a crashed instance taken over here */
	uint64_t misfires;          /* items found still running at their next fire (flagged misfire) */
	uint32_t leader_of;         /* jobs this instance leads now */
};
void coord_stats(const coord_t *c, struct coord_stats *st);

/* Slot i (0 ..) of the job table, in the config's order: 0 and *out filled; 1 for a slot to skip
 * (a job removed from the config, still leaving); -1 past the last. */
struct coord_job {
	const char *name;
	int registered;             /* in the current session */
	int leader;                 /* leader/election/instance is ours */
	int shut;                   /* an operator shut it down here (instances/{id} deleted) */
	uint32_t total;             /* shardingTotalCount in force */
	uint64_t epoch;             /* the assignment in force (0: none) */
};
int coord_job_at(const coord_t *c, size_t i, struct coord_job *out);

/* The config in force of job here (its config node's, else the file's until the node is read),
 * or NULL when coord has no such job. It lives until the node changes or the job goes: use it
 * at once. */
const conf_job_t *coord_job_conf(coord_t *c, const char *job);

#endif
