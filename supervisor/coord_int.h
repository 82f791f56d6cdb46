/* supervisor/coord_int.h: what the coord*.c files share; private to them. Who owns what:
 *   coord.c           the session's changes told to every concern; the jobs a config brings and
 *                     removes (retirement); the tick
 *   coord_reg.c       registration in each session, and the config rule's publishing
 *   coord_config.c    the config node: taken, watched
 *   coord_lead.c      election and fence; the resharding flag; the leader's instance listing; the
 *                     bounded wait for sharding (deposing)
 *   coord_shard.c     the leader's sharding multi
 *   coord_assign.c    the assignment in force, and the state of our items (completed, disabled)
 *   coord_fire.c      fires and side runs: running nodes, the completion multi
 *   coord_running.c   running nodes that outlive their run: stale, orphaned, misfire flags
 *   coord_failover.c  failover: hand-out (leader) and takes
 *   coord_lease.c     the lease told to the workers; items stopped and released for it
 *   coord_check.c     the clock against ZooKeeper's; the leader's reconcile
 *   coord_ops.c       the operator's nodes: trigger, servers/{ip}, instances/{id} deleted */
#ifndef EJOB_COORD_INT_H
#define EJOB_COORD_INT_H

#include <stdint.h>

#include "supervisor/coord.h"
#include "supervisor/fire.h"
#include "supervisor/log.h"
#include "supervisor/sched.h"
#include "supervisor/zkc.h"

#define CJ_PATH_MAX 600            /* a job node's path (cj_path), relative to the namespace */

struct cfire;

struct cjob {
	coord_t *c;
	char *name;
	const conf_job_t *local;    /* from the file (valid until the next coord_set_jobs) */
	conf_job_t *node;           /* the stored config node in force, or NULL: local */
	int gone;                   /* removed from the config */
	int publish;                /* overwrite: true and the file's config not yet published (start, reload) */
	int retiring;               /* removed: its alive node goes once its running fires have ended */
	int retire_zk;              /* removed while disconnected: its nodes go at the reconnect */
	int seen;                   /* coord_set_jobs: in the new config */
	uint64_t reg_session;       /* registered in this session (0: not) */
	int registering;
	uint64_t reg_retry_ns;      /* a failed registration starts over then (0: not failed) */
	struct log_cause fire_cause;   /* why fires cannot run, said once per change */
	struct log_cause idle_cause;   /* "no item of this epoch is ours", said once per epoch */
	int leader;
	int fence;                  /* leader: version of leader/election after our write */
	int necessary;              /* leader/sharding/necessary exists */
	int sharding;               /* the leader is sharding */
	/* the assignment in force */
	uint64_t epoch;             /* mzxid of the sharding node */
	uint32_t total;
	char **owner;               /* [total] instance ids */
	int have;                   /* owner[] loaded for epoch */
	int loading;
	uint8_t *completed;         /* [total]: sharding/i/completed exists (items we own) */
	uint8_t *disabled;          /* [total]: sharding/i/disabled exists (items we own) */
	uint8_t *stale;             /* [stale_n]: a running node of ours may exist for an item not running */
	uint32_t stale_n;
	int stale_pending;          /* their reads and deletes in flight: fires wait */
	int ever_registered;        /* registered in some session of this process */
	int orphan_scan;            /* a new session after one we registered in: look for our running
	                               nodes left from it (failover on) and queue them */
	int states_loading;         /* reading the nodes under our items */
	uint8_t *w_disabled;        /* [w_disabled_n]: exists watch on sharding/i/disabled armed */
	uint32_t w_disabled_n;
	int w_sharding, w_necessary, w_leader, w_instances;   /* watch armed (this session) */
	struct cfire *fire;         /* the fire in progress, or NULL */
	struct cfire *ffires;       /* failover runs in progress (list) */
	uint64_t side_ms;           /* the fire id of the latest failover or misfire run */
	char **live;                /* leader: the instances at the last listing, sorted */
	int nlive;
	uint64_t inst_gen;
	uint32_t fo_rr;             /* leader: where the next failover hand-out's round robin starts */          /* leader: changes of instances/ seen (watch events, listings that differ) */
	uint8_t *taking;            /* [total]: a failover item being taken here */
	uint32_t taking_total;
	int w_failover;             /* watch on leader/failover/items armed */
	int w_trigger;              /* watch on trigger/{instance} armed */
	int w_server;               /* watch on servers/{ip} armed */
	int w_config;               /* watch on config armed */
	uint64_t clock_next_ns;     /* maxTimeDiffSeconds: the next check of the clock (0: at once) */
	int clock_inflight;
	int64_t clock_off_ms;       /* the last measured difference: local - ZooKeeper */
	int clock_bad;              /* over maxTimeDiffSeconds: fires are refused */
	int clock_known;            /* the clock was compared at least once (fires wait for that) */
	uint64_t reconcile_next_ns; /* the leader's next reconcile (0: not scheduled) */
	int reconciling;
	uint8_t *mis_wait;          /* [mis_wait_n]: a misfired item waits for its running node to go */
	uint32_t mis_wait_n;
	int w_self;                 /* watch on instances/{our id} armed */
	int shut;                   /* instances/{our id} deleted by an operator: the job is shut down here */
	int server_off;             /* servers/{ip} is DISABLED */
};

/* A fire of a job in ZooKeeper mode, or a side run (a failover take, a misfire's run again): the
 * tracker's fire (items, outcomes, counts) and what ZooKeeper adds to it. */
struct cfire {
	fire_t *fire;               /* the tracker's fire (fire.h): items, outcomes, counts; its owner is this */
	struct cjob *j;
	sched_job_t *handle;        /* the scheduler's (not for side runs) */
	int state;                  /* F_WAIT (for sharding), F_START (running nodes), F_RUN */
	int monitor;                /* monitorExecution when it started */
	uint32_t flushed;           /* ended items whose completion is written (or has nothing to write) */
	uint32_t *pending;          /* ended items whose completion is not written yet */
	uint32_t npending;
	uint64_t pending_since_ns;  /* when the oldest unwritten completion ended */
	int flushing;
	uint64_t requests0;         /* zkc_requests when it started: its round trips, in its last log line */
	uint64_t session;           /* the session its running nodes were written in */
	int failover;               /* a side run (on the job's ffires list): items taken over from a
	                             * crashed instance, or a misfire's run again (misfire_run) */
	int misfire_run;            /* the run again of an item whose fire found it running */
	int missed;                 /* ended without running: the scheduler counts it missed */
	struct cfire *next;         /* failover runs: the job's list */
};

enum { F_WAIT = 1, F_START, F_RUN };

struct coord {
	struct ev_loop *loop;
	struct coord_hooks h;
	void *arg;
	fires_t *fires;
	zkc_t *z;
	char *id;                   /* this instance: "{ip}@-@{pid}" */
	char *ip;
	char *ns;                   /* regCenter.namespace, for messages */
	char *servers;              /* regCenter.serverLists, for messages */
	int digest;                 /* regCenter.digest is set */
	uint32_t kill_grace_s;      /* supervisor.killGraceSeconds (coord_set_jobs) */
	struct cjob **jobs;
	size_t n, cap;
	int connected;
	int stopping;               /* coord_stop: no fire starts */
	int closing;                /* coord_free: answers still come (ZCLOSING); tell no one */
	int lease_stopped;          /* running items were stopped for the lease */
	ev_idle flush_w;
};

static inline const conf_job_t *cj_conf(const struct cjob *j)
{
	return j->node ? j->node : j->local;
}



static inline int cj_live(const struct cjob *j, uint64_t session)
{
	return !j->gone && session == zkc_session(j->c->z) && zkc_state(j->c->z) == ZKC_CONNECTED;
}

/* coord.c: the session, the jobs of the config */
void cj_kick(struct cjob *j);
void cj_retired(struct cjob *j);                /* a removed job's last fire has ended */                   /* the job can fire again: a catch-up owed starts */
const char *cj_path(const struct cjob *j, char *buf, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct cjob *cj_find(coord_t *c, const char *name);

/* coord_reg.c: registration in each session */
void cj_reg_start(struct cjob *j);              /* register (once at a time); its end arms the watches */
void cj_publish_now(struct cjob *j);            /* overwrite: true and the file changed: publish it */

/* coord_lead.c: election, the resharding flag, the leader's instances, the bounded wait */
void cj_elect(struct cjob *j);                  /* stand for leader, or watch the one there */
void cj_watch_necessary(struct cjob *j);        /* everyone: leader/sharding/necessary, watched */
/* A fire that waited for the assignment for 2 session timeouts is missed and the leader deposed. */
void cj_wait_bound(struct cjob *j, uint64_t now_ns, uint64_t timeout_ns);

/* coord_lease.c: the lease as the workers see it */
void cl_lease_back(coord_t *c, uint64_t now_ns);   /* fresh (connected): told now; held items run */
void cl_lease_tick(coord_t *c, uint64_t now_ns);

/* coord_assign.c: the assignment in force */
void cj_load_assignment(struct cjob *j);       /* read it (again), watching the sharding node */
void cj_install(struct cjob *j, char **owner, uint32_t total, uint64_t epoch);   /* takes owner */
void cj_free_owner(char **owner, uint32_t n);
int cj_owned(const struct cjob *j, uint32_t i);     /* item i is ours in the assignment in force */
/* An instance id as ElasticJob writes them: {ip}@-@{pid}. */
int cj_id_ok(const char *id);
/* Text an operator wrote, fit for a log line: at most 40 bytes, non-printable bytes as '?'. */
const char *cj_show(const char *data, int len, char *buf, size_t sz);

/* coord_ops.c: the operator's nodes for this instance, watched */
void cj_watch_trigger(struct cjob *j);
void cj_watch_server(struct cjob *j);
void cj_watch_self(struct cjob *j);

/* coord_config.c */
/* Take a config node's text as the job's config (watched: an operator's change, acted on; else
 * the one found at registration). 0 taken (or the same), -1 refused (logged: the config in force
 * stays). */
int cj_take_node(struct cjob *j, const void *data, size_t len, int watched);
void cj_watch_config(struct cjob *j);
size_t cj_keys_list(const char **keys, size_t n, char *buf, size_t sz);

/* coord_check.c: the clock against ZooKeeper's; the leader's reconcile */
void cj_checks(struct cjob *j, uint64_t now_ns);    /* from coord_tick: whatever is due */

/* The leader raises leader/sharding/necessary (fenced); logged once it is set. */
void cj_set_necessary(struct cjob *j, const char *why);
/* The leader: an item assigned to an instance that is not online (in its last listing) raises
 * the flag; costs nothing while the assignment is sound. */
void cj_check_owners(struct cjob *j);

/* coord_shard.c */
void cj_shard_now(struct cjob *j);              /* the leader: shard at once (once at a time) */

/* coord_fire.c: fires */
void cx_continue(struct cjob *j);             /* a waiting fire: go on if the assignment allows */
void cx_submit(struct cfire *f);              /* queue its items (running nodes written) */
void cx_end(struct cfire *f);
void cx_free(struct cfire *f);
/* A one-item run outside the fires (a failover take, a misfire's run again), on the job's
 * ffires list, started now; NULL when out of memory. */
struct cfire *cx_side_run(struct cjob *j, uint32_t item);
void cx_flush_cb(struct ev_loop *loop, ev_idle *w, int revents);
void cx_session_lost(struct cjob *j);

/* coord_running.c: running nodes that outlive their run */
void cx_misfire(struct cjob *j, uint32_t item);   /* item still running elsewhere: flag it, run it again after */
void cx_clear_stale(struct cjob *j);             /* connection back: clear unanswered running nodes */
/* Registered again in a new session: queue for failover the items whose running node still
 * names us from the old one (they were stopped for the lease), and watch again the misfire
 * flags of our items. */
void cx_rejoined(struct cjob *j);
void cx_misfire_found(struct cjob *j, uint32_t item);   /* sharding/{i}/misfire seen on an item we own */

/* coord_failover.c */
void cf_scan(struct cjob *j);                 /* read leader/failover/items, take ours */
void cf_instances(struct cjob *j, const struct zkc_res *r);   /* the leader's listing of instances */

#endif
