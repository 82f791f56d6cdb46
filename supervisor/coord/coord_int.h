/* supervisor/coord/coord_int.h: what the coord*.c files share; private to them. Who owns what:
 *   coord.c           the session's changes told to every concern; the jobs a config brings and
 *                     removes (retirement); the tick
 *   coord_reg.c       registration in each session, and the config rule's publishing
 *   coord_config.c    the config node: taken, watched
 *   coord_lead.c      election and fence; the resharding flag; the leader's instance listing; the
 *                     bounded wait for sharding (deposing)
 *   coord_shard.c     the leader's sharding multi
 *   coord_assign.c    the assignment in force, and the state of our items (completed, disabled)
 *   coord_fsm.c       a fire's states, and the one function that changes them (cx_step)
 *   coord_fire.c      fires and side runs: running nodes, the completion multi
 *   coord_running.c   running nodes that outlive their run: stale, orphaned, misfire flags
 *   coord_failover.c  failover: hand-out (leader) and takes
 *   coord_lease.c     the lease told to the workers; items stopped and released for it
 *   coord_check.c     the clock against ZooKeeper's; the leader's reconcile
 *   coord_ops.c       the operator's nodes: trigger, servers/{ip}, instances/{id} deleted
 *   coord_listen.c    the per-instance listeners of a fire (before, after)
 *   coord_last.c      each item's last execution record (sharding/{i}/last), in the completion multi
 *   coord_once.c      afterAll: once per fire across the cluster (guarantee/once/{fireId})
 *   coord_barrier.c   beforeAll: once per fire across the cluster, before any item runs
 *   coord_adopt.c     jobs of the namespace adopted by their label (supervisor.labels), and what
 *                     supervisor.allowedCommands lets them run */
#ifndef EJOB_COORD_INT_H
#define EJOB_COORD_INT_H

#include <stdarg.h>
#include <stdint.h>

#include "supervisor/base/log.h"
#include "supervisor/base/nidx.h"
#include "supervisor/coord/coord.h"
#include "supervisor/run/events.h"
#include "supervisor/run/fire.h"
#include "supervisor/run/sched.h"
#include "supervisor/zk/zkc.h"

#define CJ_PATH_MAX 600            /* a job node's path (cj_path), relative to the namespace */

struct cfire;
struct cj_server_seen;
struct alive_wait;

/* Each concern's part of a job, owned by (written only in) its file; the others read it. A
 * watch is a kept watch of zkc (zkc_keep_*): armed in a session, re-armed by zkc after each event,
 * unarmed by zkc on a new session (each concern arms its own again in cj_*_session). */

struct cj_reg {                 /* coord_reg.c: registration in each session */
	uint64_t session;           /* registered in this session (0: not) */
	int busy;                   /* registering now */
	uint64_t retry_ns;          /* a failed registration starts over then (0: not failed) */
	int ever;                   /* registered in some session of this process */
	int rejoin;                 /* a new session after one we registered in: look for our running
	                               nodes left from it (failover on) and queue them */
	int publish;                /* overwrite: true and the file's config not yet published (start, reload) */
	int elect;                  /* the new job's multi in flight elects this instance too (reg_fresh) */
	int arm;                    /* watches to arm when ZooKeeper has room (CJ_ARM_*; c->arm_want counts it) */
	int queued;                 /* busy, waiting for a place among CJ_REG_MAX (c->reg.queued counts it) */
	int counted;                /* busy and in c->reg.inflight */
};

struct cj_cfg {                 /* coord_config.c: the config node */
	conf_job_t *node;           /* the stored config node in force, or NULL: local */
	zkc_keep_t *watch;          /* config (data) */
	char root_type[32];         /* the job's root node (ElasticJob: SCRIPT, HTTP, or a Java class),
	                               read at registration; "" if none */
	uint64_t said;              /* a hash of the last node whose problems were logged (they are
	                               said once per content, not at each read) */
	uint64_t own;               /* cj_hash of the config this instance wrote last (0: none): read
	                               back by the watch while the file's is in force, it is known
	                               without a parse */
};

struct cj_lead {                /* coord_lead.c: election, the resharding flag, the instances */
	int leader;
	int fence;                  /* leader: version of leader/election after our write */
	int necessary;              /* leader/sharding/necessary exists */
	int64_t necessary_ctime;    /* when it was made (ZooKeeper's clock, ms) */
	char **live;                /* leader: the instances at the last listing, descending */
	int nlive;
	uint64_t inst_gen;          /* leader: changes of instances/ seen (events, listings that differ) */
	int probing;                /* a waiting fire's look at the leader (may it be deposed?) in flight */
	zkc_keep_t *w_leader;       /* leader/election/instance (exists) */
	zkc_keep_t *w_necessary;    /* leader/sharding/necessary (exists) */
	zkc_keep_t *w_instances;    /* instances (children), the leader's */
	struct log_cause static_cause;   /* staticSharding: items left with an offline owner, said once */
};

struct cj_shard {               /* coord_shard.c: the leader's sharding */
	int busy;                   /* sharding now */
	uint64_t session;           /* the session the two below were learnt in */
	uint32_t made;              /* sharding/{i}/instance known to exist for i < made */
	int remake;                 /* a commit found one missing: make them before the next */
	struct cj_server_seen *srv; /* servers/{ip} as last read (each commit checks them) */
	int nsrv;
	/* eager sharding (the leader shards when the flag is raised, not at the fire) */
	int eager;                  /* wanted: the flag is up and this instance leads (c->eager_want counts it) */
	int eager_run;              /* the sharding in flight is an eager one (c->eager_inflight counts it) */
	uint64_t eager_first_ns;    /* when it was first wanted (the debounce's cap counts from it) */
	uint64_t eager_due_ns;      /* not before (the debounce: the last change seen + CJ_EAGER_QUIET) */
	int fresh;                  /* no item node yet (this session's multi made the job): the first commit makes them */
};

struct cj_assign {              /* coord_assign.c: the assignment in force, our items' state */
	uint64_t epoch;             /* the highest mzxid of sharding/{i}/instance: the commit that wrote them */
	uint32_t total;
	char **owner;               /* [total] instance ids */
	int have;                   /* owner[] loaded for epoch */
	int loading;                /* reads of the sharding node in flight */
	int states_loading;         /* reading the nodes under our items */
	int states_fresh;           /* what is under them was read (or made) for this assignment and no
	                               fire's multi has checked them since (cj_disabled_at_fire) */
	uint8_t *completed;         /* [total]: sharding/i/completed exists (items we own) */
	uint8_t *disabled;          /* [total]: sharding/i/disabled exists (items we own) */
	zkc_keep_t **w_disabled;    /* [nw_disabled]: sharding/i/disabled (exists) of items we own */
	uint32_t nw_disabled;
};

struct cj_fires {               /* coord_fire.c: fires and side runs */
	struct cfire *fire;         /* the fire in progress, or NULL */
	struct cfire *side;         /* side runs in progress: failover takes, misfire runs (list) */
	uint64_t side_ms;           /* the fire id of the latest side run */
	uint64_t born_ns;           /* when its latest scheduled fire was born here (monotonic; 0: none) */
	struct log_cause fire_cause;   /* why fires cannot run, said once per change */
	struct log_cause idle_cause;   /* "no item of this epoch is ours", said once per epoch */
};

struct cj_running {             /* coord_running.c: running nodes that outlive their run */
	uint8_t *stale;             /* [nstale]: a running node of ours may exist for an item not running */
	uint32_t nstale;
	int stale_pending;          /* their reads and deletes in flight: fires wait */
	zkc_keep_t **w_misfire;     /* [nw_misfire]: sharding/i/running (exists) of a misfired item */
	uint32_t nw_misfire;
};

struct cj_failover {            /* coord_failover.c */
	uint8_t *taking;            /* [ntaking]: a failover item being taken here */
	uint32_t ntaking;
	uint32_t rr;                /* leader: where the next hand-out's round robin starts */
	zkc_keep_t *w_items;        /* leader/failover/items (children) */
	struct alive_wait *alive;   /* leader: shut instances whose session's end it waits for (list) */
	char **ejob;                /* leader: the ejob instances (leader/failover/alive/) at the last
	                               listing: an owner that writes last records (missed fires) */
	int nejob;
};

struct cj_last {                /* coord_last.c: what the last records of the items say (sharding/{i}/last) */
	uint32_t n;                 /* the arrays' size: the assignment's total when they were made */
	uint8_t *known;             /* [n]: the node is there, not there, or not known */
	uint32_t *fails;            /* [n]: its consecutive failures */
	uint64_t *ok_ms;            /* [n]: its last success's end (0: none known) */
};

struct cj_adopt {               /* coord_adopt.c: a job not in the file, adopted by its label */
	int on;                     /* adopted: its config is its node's alone (local NULL, cfg.node set) */
	int refused;                /* a program it runs is outside supervisor.allowedCommands: no fire runs */
	char *why;                  /* what is refused, for the WARN and the fire_skipped event (NULL: not) */
};

/* Why a job is no longer run here (cj_ops.left): it left as the supervisor stops or drains. */
enum cj_left { CJ_STAYS = 0, CJ_LEFT_STOP, CJ_LEFT_DRAIN };

struct cj_ops {                 /* coord_ops.c: the operator's nodes */
	int shut;                   /* instances/{our id} deleted by an operator, or by us leaving (left):
	                               the job is shut down here */
	int left;                   /* enum cj_left: we deleted it ourselves (cj_leave) */
	int server_off;             /* servers/{ip} is DISABLED */
	zkc_keep_t *w_trigger;      /* trigger/{our id} (exists) */
	zkc_keep_t *w_server;       /* servers/{ip} (data) */
	zkc_keep_t *w_self;         /* instances/{our id} (exists) */
};

struct cj_check {               /* coord_check.c: the clock, the leader's reconcile */
	uint64_t clock_next_ns;     /* maxTimeDiffSeconds: the next check of the clock (0: at once) */
	uint64_t clock_session;     /* the session of the check in flight (0: none) */
	int64_t clock_off_ms;       /* the last measured difference: local - ZooKeeper */
	int clock_bad;              /* over maxTimeDiffSeconds: fires are refused */
	int clock_known;            /* the clock was compared at least once (fires wait for that) */
	uint64_t reconcile_next_ns; /* the leader's next reconcile (0: not scheduled) */
	uint64_t reconcile_session; /* the session of the reconcile in flight (0: none) */
};

struct cjob {                   /* coord.c: a job of the config, and what each concern keeps of it */
	coord_t *c;
	char *name;
	const conf_job_t *local;    /* from the file (valid until the next coord_set_jobs); NULL for an
	                               adopted job (adopt.on): it has no file, its node is its config */
	const conf_t *file;         /* the file's config local is of (a fire holds it: conf_hold) */
	int gone;                   /* removed from the config */
	int retiring;               /* removed: its alive node goes once its running fires have ended */
	int retire_zk;              /* removed while disconnected: its nodes go at the reconnect */
	int seen;                   /* coord_set_jobs: in the new config */
	struct cj_reg reg;
	struct cj_cfg cfg;
	struct cj_lead lead;
	struct cj_shard shard;
	struct cj_assign as;
	struct cj_fires fx;
	struct cj_running run;
	struct cj_failover fo;
	struct cj_ops ops;
	struct cj_check chk;
	struct cj_last last;
	struct cj_adopt adopt;
	struct once *once;          /* coord_once.c: fires whose afterAll this instance waits on (list) */
	struct cflow *flow;         /* coord_flow.c: with dependsOn, the runs of its upstream jobs watched */
	int flow_root;              /* coord_flow.c: a workflow's root (cj_flow_root) */
	uint64_t once_seq;          /* coord_once.c: fires waited on so far (their bound) */
};

/* A fire of a job in ZooKeeper mode, or a side run (a failover take, a misfire's run again): the
 * tracker's fire (items, outcomes, counts) and what ZooKeeper adds to it. */
struct cfire {
	fire_t *fire;               /* the tracker's fire (fire.h): items, outcomes, counts; its owner is this */
	struct cjob *j;
	const conf_job_t *conf;     /* the config it runs by: the job's in force when it was made */
	conf_hold_t *hold;          /* what keeps conf alive while it runs (a reload, a changed node) */
	sched_job_t *handle;        /* the scheduler's (not for side runs) */
	int state;                  /* enum fx_state: set by cx_step only (coord_fsm.c) */
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
	struct cfire *fl_next, **fl_pprev;   /* on c->due.flushq, completions to write (fl_pprev NULL: not) */
	struct listen_run *lr;      /* F_BEFORE: its before listener running (coord_listen.c) */
	uint64_t before_epoch;      /* the assignment its before listener was told */
	uint64_t bar_epoch;         /* the assignment when it came to its barrier */
	uint32_t *unrun;            /* items of this instance that the fire does not run here (disabled,
	                               a failed before): written for beforeAll and afterAll all the same,
	                               so that they never wait for them */
	uint32_t nunrun;
	struct barrier *bar;        /* F_BARRIER: waiting for beforeAll (coord_barrier.c) */
	char *crashed;              /* a failover take: the instance that crashed running it, if known */
	int before_failed;          /* a side run whose before listener failed: no after */
	int norunning;              /* its items' running nodes were never written (left(), coord_fsm.c) */
	int check_disabled;         /* its running multi checks each item's disabled node (cj_disabled_at_fire) */
	uint32_t ncut;              /* items of it stopped by our leaving with failover off (cx_end says them) */
	char cut[96];               /* their numbers, as far as they fit */
	struct cx_rec *last;        /* [total]: how each item ended here, for its last record (coord_last.c);
	                               NULL until one ends */
	uint8_t *gw;                /* [total], with afterAll: the item's guarantee/once completed node
	                               goes in its completion multi (cx_once_begin); NULL: not */
	struct vet *vet;            /* F_WAIT, a catch-up: reading whether the leader handed its items out
	                               (coord_failover.c cf_vet); NULL: not reading */
	uint8_t *vetted;            /* [total] after that read: 1 the item runs here, 2 it ran (or runs)
	                               elsewhere for these fires; NULL: not read */
	struct ffind *ff;           /* coord_flow.c: a take of a workflow job's item: finding its run */
	struct fvet *fv;            /* coord_flow_rec.c: a run's fire reading what of it ran already */
};

/* A fire's states and the events that move it: coord_fsm.c has the table. */
enum fx_state {
	F_WAIT = 1,                 /* for the assignment (a scheduled fire is born here) */
	F_BEFORE,                   /* its before listener runs */
	F_BARRIER,                  /* at beforeAll's barrier */
	F_START,                    /* its running nodes are written (a side run is born here) */
	F_RUN,                      /* its items are submitted, or end without running; completions written */
};
enum fx_event {
	FX_READY,                   /* what a waiting fire waits for may have changed (cx_ready_changed) */
	FX_BEFORE_OK,               /* its before listener succeeded */
	FX_BEFORE_FAILED,           /* it failed, or could not start (why) */
	FX_BARRIER_OK,              /* beforeAll ran to success */
	FX_BARRIER_FAILED,          /* it did not (why): no item of the fire runs anywhere */
	FX_WRITTEN,                 /* its running nodes are written */
	FX_DROPPED,                 /* an item was dropped for a conflict in writing them: the rest again */
	FX_FLUSHED,                 /* every ended item's completion is written */
	FX_ABORT,                   /* it ends before running anything here (the caller said why) */
};

/* coord_tick (ten times a second) looks at every job only when one may be due: at 50,000 jobs
 * the loops over them, each cheap, were the idle supervisor's 6% of a core. A concern that makes
 * a job due sooner than its last look said calls cj_due; a look over every job at least once a
 * second (CJ_SCAN_IDLE_MS) catches what nobody said (a new leader's first reconcile). */
struct cdue {
	uint64_t scan_ns;           /* the next look over every job (0: at the next tick) */
	struct cfire *flushq;       /* fires with completions to write, looked at when the loop is idle */
	struct cfire *heldq;        /* fires that wait to write them, looked at each tick (cx_flush_held) */
	ev_idle flush_w;            /* that look (cx_flush_cb) */
};
#define CJ_SCAN_IDLE_MS 1000

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
	int ever_connected;          /* connected in some session of this process (systemd's STATUS=) */
	int stopping;               /* coord_stop: no fire starts */
	int drained;                /* coord_drain: every job left, also the ones a reload brings */
	int closing;                /* coord_free: answers still come (ZCLOSING); tell no one */
	int lease_stopped;          /* running items were stopped for the lease */
	uint64_t failovers;         /* coord_failover.c: items of a crashed instance taken here */
	uint64_t misfires;          /* coord_running.c: items found still running at their next fire */
	struct listen *listen;      /* coord_listen.c: the listener commands running (listen.h) */
	struct adopt *adopt;        /* coord_adopt.c: the namespace's jobs by label (NULL: no labels) */
	tz_t *local;                /* this machine's zone, for the fire times of jobs without timeZone
	                               (coord_failover.c: missed fires), as the scheduler's */
	uint32_t eager_want;        /* coord_shard.c: jobs whose eager sharding is wanted */
	uint32_t eager_inflight;    /* eager shardings in flight (at most CJ_EAGER_MAX) */
	size_t eager_cursor;        /* where the next look for one to start begins (round robin) */
	int eager_pumping;          /* cj_shard_pump is on the stack (an end inside it does not pump again) */
	struct nidx ix;             /* coord.c: the jobs by name (cj_find) */
	struct creg {               /* coord_reg.c: the registrations' pacing */
		uint32_t inflight, queued;   /* registrations sent (at most CJ_REG_MAX), waiting */
		size_t cursor;          /* where the next look for a waiting one begins */
		int pumping;            /* reg_pump is on the stack */
	} reg;
	uint32_t fires_live;        /* coord_fire.c: fires and side runs in progress */
	uint32_t fires_burst;       /* fires made since the heap was last trimmed (coord_tick) */
	uint32_t arm_want;          /* coord_reg.c: jobs with watches to arm when ZooKeeper has room */
	uint32_t join_want;         /* coord_reg.c: jobs of them with CJ_ARM_AFTER (wait for the registrations) */
	size_t arm_cursor;          /* where the next look for one begins */
	struct cdue due;            /* coord.c: what coord_tick and the idle flush look at */
	int flow_dirty;             /* coord_flow.c: a job's config changed: which jobs are roots, again */
};

/* A request that went unanswered (a lost connection, a timeout, the handle closing, the session
 * over): it may or may not have been applied, and is sent again (or read back) once connected. */
static inline int cj_unanswered(int rc)
{
	return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZCLOSING || rc == ZSESSIONEXPIRED;
}

/* FNV-1a, to tell a node's content from another's */
static inline uint64_t cj_hash(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ull;
	for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
	return h ^ n;
}

static inline const conf_job_t *cj_conf(const struct cjob *j)
{
	return j->cfg.node ? j->cfg.node : j->local;
}



static inline int cj_live(const struct cjob *j, uint64_t session)
{
	return !j->gone && session == zkc_session(j->c->z) && zkc_state(j->c->z) == ZKC_CONNECTED;
}

/* ---- each concern's readiness, read by the fires (coord_fire.c cj_ready composes them) -------- */

static inline int cj_registered(const struct cjob *j)         /* coord_reg.c: in this session */
{
	return j->reg.session && cj_live(j, j->reg.session);
}

static inline int cx_running_settled(const struct cjob *j)    /* coord_running.c: no stale node being cleared */
{
	return !j->run.stale_pending;
}

static inline int cj_assign_settled(const struct cjob *j)     /* coord_assign.c: no read in flight */
{
	return !j->as.loading && !j->as.states_loading;
}

static inline int cj_assign_current(const struct cjob *j)     /* coord_assign.c: an assignment of the config's size */
{
	return j->as.have && j->as.total == cj_conf(j)->sharding_total_count;
}

/* staticSharding with an assignment in force (ElasticJob's isStaticSharding() && hasShardingInfo()):
 * instances and servers coming and going do not reshard, nor does the leader's check of owners
 * (ShardingListenerManager, ReconcileService); a changed item count or an operator's flag does */
static inline int cj_static_held(const struct cjob *j)
{
	return cj_conf(j)->static_sharding && j->as.have && j->as.total > 0;
}

static inline int cj_is_completed(const struct cjob *j, uint32_t i)   /* coord_assign.c */
{
	return j->as.completed && i < j->as.total && j->as.completed[i];
}

/* Why a fire waits (the first unmet of the concerns' readiness), or CJ_READY: it may take the
 * assignment in force. */
enum cj_wait { CJ_READY, CJ_WAIT_STALE, CJ_WAIT_REG, CJ_WAIT_READING, CJ_WAIT_SHARDING };
enum cj_wait cj_ready(const struct cjob *j);

/* coord.c: the session, the jobs of the config; kept watches for every concern */
void cj_kick(struct cjob *j);
/* An event of job j (ev->job is set here). */
struct event;
void cj_event(struct cjob *j, struct event *ev);
/* A fire time that runs nothing here: the event (reason: a code; why: for people). The log
 * line is the caller's. */
void cx_skipped(struct cjob *j, uint64_t fire_ms, const char *reason, const char *why);
/* Lead or not: the event when it changes. */
void cj_set_leader(struct cjob *j, int on);
void cj_retired(struct cjob *j);                /* a removed job's last fire has ended */
const char *cj_path(const struct cjob *j, char *buf, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* the same for any job's name (another job's nodes: workflows) */
const char *cj_vpath(char *buf, const char *job, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
struct cjob *cj_find(coord_t *c, const char *name);
/* The kept watch in *slot, made on first use (cb gets the job, r->item = item); NULL when out of
 * memory (logged; zkc_keep_arm/read of NULL send nothing). */
zkc_keep_t *cj_keep(struct cjob *j, zkc_keep_t **slot, enum zkc_keep_kind kind, const char *path, uint32_t item,
                    zkc_cb cb);
zkc_keep_t **cj_keep_at(zkc_keep_t ***v, uint32_t *n, uint32_t i);   /* slot i of a growing array (NULL: no memory) */
void cj_keeps_free(zkc_keep_t **v, uint32_t n);                        /* each freed, its slot NULL */

struct cjob *cj_add(coord_t *c, const char *name);   /* a new slot of the job table (gone), or NULL */
void cj_retire(struct cjob *j);                  /* the job leaves this instance (removed from the file) */
void cj_withdraw(struct cjob *j);                /* it stays, but leaves the cluster here (refused) */

/* coord_adopt.c: jobs adopted by their label */
int ca_set(coord_t *c, const conf_t *conf);      /* supervisor.labels, allowedCommands (start, reload) */
void ca_session(coord_t *c);                     /* a new session: the namespace and the jobs watched again */
void ca_verdict(struct cjob *j);                 /* an adopted job's config taken: allowedCommands' verdict */
void ca_free(coord_t *c);

/* coord_reg.c: registration in each session */
void cj_reg_start(struct cjob *j);              /* register (once at a time); its end arms the watches */
void cj_publish_now(struct cjob *j);            /* overwrite: true and the file changed: publish it */
void cj_publish_due(struct cjob *j, int due);   /* the file's config is (not) to be published */
/* a failed registration starts over when due; returns when it next needs looking at (UINT64_MAX: never) */
uint64_t cj_reg_tick(struct cjob *j, uint64_t now_ns);
void cj_due(coord_t *c, uint64_t when_ns);          /* coord.c: a job needs coord_tick's look by then */
void cj_reg_session(struct cjob *j);            /* a new session (or the old one expired): not registered */
void cj_reg_forget(struct cjob *j);             /* the job is freed: its place, if it had one */
#define CJ_REG_MAX 1000                          /* registrations in flight at once (coord_reg.c reg_read) */
#define CJ_TRIM_FIRES 1000                       /* fires that make a burst (coord_tick trims the heap after) */
int cj_reg_leave(struct cjob *j);               /* removed: 1 if it was registered (its nodes go) */
/* Watches a job needs but no fire waits for are armed when ZooKeeper has room (zkc's idle hook):
 * never queued in front of the registrations, shardings and fires of thousands of jobs (coord_reg.c) */
/* CJ_ARM_FLAG (the resharding flag's watch), CJ_ARM_JOIN (a restart's: the flag, the assignment,
 * the election, the failover queue) and CJ_ARM_INST (a new leader's listing of instances/) go all at
 * once when the last registration is answered */
enum { CJ_ARM_OPS = 1, CJ_ARM_LEAD = 2, CJ_ARM_ITEMS = 4, CJ_ARM_JOIN = 8, CJ_ARM_FLAG = 16, CJ_ARM_INST = 32 };
#define CJ_ARM_AFTER (CJ_ARM_JOIN | CJ_ARM_FLAG | CJ_ARM_INST)
void cj_arm_later(struct cjob *j, int what);   /* CJ_ARM_*: to arm once registered in this session */
void cj_arm_pump(coord_t *c);                  /* arm what is due while the window has room */
void cj_arm_forget(struct cjob *j);            /* the job is freed */

/* No registration is in flight or waiting for its place (coord_reg.c): what the registered jobs
 * send next (their watches, their leaders' listings, the eager shardings) waits for this */
static inline int cj_reg_settled(const coord_t *c)
{
	return !c->reg.inflight && !c->reg.queued;
}

/* coord_config.c: the config node */
/* Take a config node's text as the job's config (watched: an operator's change, acted on; else
 * the one found at registration; version: the node's, for writing an old strategy name back).
 * 0 taken (or the same), -1 refused (logged: the config in force stays). */
int cj_take_node(struct cjob *j, const void *data, size_t len, int watched, int version);
void cj_watch_config(struct cjob *j);
void cj_node_drop(struct cjob *j);              /* the file's config is in force again */
const conf_job_t *cj_node_pin(struct cjob *j);  /* a private copy of the config in force, kept */
void cj_config_unwatch(struct cjob *j);          /* its kept watch freed (a removed job) */
void cj_config_free(struct cjob *j);
size_t cj_keys_list(const char **keys, size_t n, char *buf, size_t sz);

/* coord_lead.c: election, the resharding flag, the leader's instances, the bounded wait */
void cj_elect(struct cjob *j);                  /* stand for leader, or watch the one there */
/* Elected (leader/election/instance made and leader/election set to fence, in cj_elect's multi or
 * a new job's registration multi): lead. */
void cj_lead_won(struct cjob *j, int fence, int fresh);   /* fresh: elected by its registration's multi */
void cj_lead_list(struct cjob *j);              /* a leader's listing of instances/, deferred (CJ_ARM_INST) */
void cj_watch_necessary(struct cjob *j);        /* everyone: leader/sharding/necessary, watched */
/* The leader raises leader/sharding/necessary (fenced); logged once it is set. */
void cj_set_necessary(struct cjob *j, const char *why);
/* The leader: an item assigned to an instance that is not online (in its last listing) raises
 * the flag; costs nothing while the assignment is sound. */
void cj_check_owners(struct cjob *j);
void cj_lead_session(struct cjob *j);           /* not the leader (a new session, a registration) */
void cj_step_down(struct cjob *j);              /* the leader gives it up: its election node goes */
void cj_deposed(struct cjob *j);                /* its fence failed: not the leader; elect again */
void cj_sharded(struct cjob *j);                /* its sharding multi deleted the flag */
void cj_lead_unwatch(struct cjob *j);
void cj_lead_free(struct cjob *j);
/* A fire that waited for the assignment for 2 session timeouts is missed and the leader deposed. */
uint64_t cj_wait_bound(struct cjob *j, uint64_t now_ns, uint64_t timeout_ns);   /* when next (cj_reg_tick) */

/* coord_lease.c: the lease as the workers see it */
void cl_lease_back(coord_t *c, uint64_t now_ns);   /* fresh (connected): told now; held items run */
void cl_lease_tick(coord_t *c, uint64_t now_ns);

/* coord_shard.c */
void cj_shard_now(struct cjob *j);              /* the leader: shard at once (once at a time) */
/* Eager sharding: the leader shards a job as soon as its flag is up (a new term, instances joining
 * or leaving) rather than at its next fire, once the changes have stopped for CJ_EAGER_QUIET_MS,
 * when no fire of the job is in progress here, and only if no item of the job runs (the commit
 * checks it), at most CJ_EAGER_MAX at once. cj_shard_eager: a change was seen (the flag raised,
 * elected, the instances changed); cj_shard_pump: start what is due (the tick, and each end). */
#define CJ_EAGER_QUIET_MS 500       /* no change of the job's instances or flag for this long */
#define CJ_EAGER_CAP_MS 2000        /* but no later than this after the first change */
#define CJ_EAGER_AFTER_FIRE_MS 2000 /* nor sooner than this after a fire of the job here */
#define CJ_EAGER_MAX 1000           /* eager shardings in flight (each 2-4 requests, one out at a time) */
void cj_shard_eager(struct cjob *j);
void cj_shard_eager_off(struct cjob *j);        /* no longer wanted (the flag went, not the leader) */
void cj_shard_pump(coord_t *c, uint64_t now_ns, size_t look);
void cj_shard_fresh(struct cjob *j, uint64_t session);   /* reg_fresh made the job: no item node, servers/{ip} ours */
void cj_shard_server(struct cjob *j, uint64_t session, int version);   /* servers/{ip} as registration set it */
void cj_shard_free(struct cjob *j);             /* what it remembers of the servers */

/* coord_last.c: each item's last execution record */
struct disp_outcome;
void cx_last_listed(struct cjob *j, uint32_t i, int listed);   /* an item of ours: sharding/{i} has "last" */
void cx_last_learn(struct cjob *j, uint32_t i);    /* read its record (a take), before its running node */
void cx_last_ended(struct cfire *f, uint32_t item, const struct disp_outcome *o);   /* how it ended */
void cx_last_op(zkc_multi_t *m, struct cfire *f, uint32_t it);   /* its record, as an op of the multi */
void cx_last_written(struct cfire *f, uint32_t it);   /* the multi succeeded */
void cx_last_one(struct cfire *f, uint32_t it);      /* the multi failed: written alone */
void cx_last_free(struct cfire *f);                  /* with the fire (cx_free) */
void cj_last_free(struct cjob *j);

/* coord_assign.c: the assignment in force */
void cj_root_type(struct cjob *j, const char *data, int len);   /* coord_config.c: the root node read */
void cj_load_assignment(struct cjob *j);       /* read it (again): the sharding node, then its owners */
char *cj_assignment_text(char *const *owner, uint32_t total);   /* the sharding node's data (malloc'd; NULL: too big) */
void cj_assign_reload(struct cjob *j);         /* from scratch: reads in flight are forgotten */
void cj_install(struct cjob *j, char **owner, uint32_t total, uint64_t epoch);   /* takes owner */
/* the same for an assignment whose item nodes its own commit made: nothing under them to read */
void cj_install_made(struct cjob *j, char **owner, uint32_t total, uint64_t epoch);
void cj_assign_arm(struct cjob *j);           /* arm sharding/{i}/disabled of the items we own */
/* A fire's running multi checks each item's sharding/{i}/disabled (a create and a delete: the
 * create fails if the node is there), so only the items known disabled are watched (for when they
 * are enabled again): with monitorExecution, and no beforeAll or afterAll (which must know before
 * the multi which items will not run). Else every owned item's node is watched. */
int cj_disabled_at_fire(const struct cjob *j);
void cj_disabled_found(struct cjob *j, uint32_t item);   /* a fire's multi found it there */
void cj_set_completed(struct cjob *j, uint32_t i, int on);   /* sharding/i/completed written, deleted */
void cj_assign_session(struct cjob *j);
void cj_assign_unwatch(struct cjob *j);
void cj_assign_free(struct cjob *j);
void cj_free_owner(char **owner, uint32_t n);
int cj_owned(const struct cjob *j, uint32_t i);     /* item i is ours in the assignment in force */
/* An instance id as ElasticJob writes them: {ip}@-@{pid}. */
int cj_id_ok(const char *id);
/* Text an operator wrote, fit for a log line: at most 40 bytes, non-printable bytes as '?'. */
const char *cj_show(const char *data, int len, char *buf, size_t sz);

/* coord_ops.c: the operator's nodes for this instance, watched from registration on */
void cj_watch_ops(struct cjob *j);
void cj_ops_registered(struct cjob *j);       /* servers/{ip} as registration wrote it */
void cj_leave(struct cjob *j, enum cj_left why);   /* stop or drain: the job leaves this instance */
void cj_leave_nodes(struct cjob *j);            /* registered: the flag raised, our instances/{id} deleted */
void cj_ops_unwatch(struct cjob *j);           /* also what cj_ops_free is */

/* coord_check.c: the clock against ZooKeeper's; the leader's reconcile */
uint64_t cj_checks(struct cjob *j, uint64_t now_ns);    /* from coord_tick: whatever is due; when next */
void cj_check_session(struct cjob *j);               /* a new session: both are due at once */

/* coord_fsm.c: the one place a fire's state changes. ev happened to f (why: a failure's cause,
 * or NULL); what comes next starts now. f may be freed when it returns. */
void cx_step(struct cfire *f, enum fx_event ev, const char *why);
void cx_ready_changed(struct cjob *j);        /* the assignment, the flag, registration...: the waiting fire looks again */

/* coord_fire.c: fires */
/* Queue its items and publish them: how many (0: none queued, nothing published). f may be
 * freed when it returns a count (outcomes come back inside). */
uint32_t cx_submit(struct cfire *f);
void cx_end(struct cfire *f);
void cx_cut_note(struct cfire *f, uint32_t item);   /* an item stopped by our leaving, with failover off */
void cx_free(struct cfire *f);
void cx_fires_free(struct cjob *j);            /* coord_free: every fire of the job, told to no one */
/* A one-item run outside the fires (a failover take, a misfire's run again), on the job's side
 * list, started now; NULL when out of memory. */
struct cfire *cx_side_run(struct cjob *j, uint32_t item);
void cx_flush_cb(struct ev_loop *loop, ev_idle *w, int revents);
void cx_flush_want(struct cfire *f);           /* it has completions to write: on the flush queue */
void cx_flush_held(coord_t *c);                /* coord_tick: the fires that wait to write, again */
void cx_flush_unqueue(struct cfire *f);
void cx_session_lost(struct cjob *j);
void cx_write_running(struct cfire *f);     /* its running nodes: FX_WRITTEN, FX_DROPPED or FX_ABORT */

/* coord_listen.c: the per-instance listeners (ejob.listener.before / after) */
/* Run its before listener (told f->before_epoch): FX_BEFORE_OK or FX_BEFORE_FAILED when it ends;
 * FX_ABORT (a scheduled fire) if it cannot start. */
void cx_before(struct cfire *f);
/* It failed (why): said, and a scheduled fire's items are written as not run (f->unrun), so that
 * beforeAll and afterAll do not wait for them; a side run's counts as failed (before_failed). */
void cx_before_failed(struct cfire *f, const char *why);
void cx_after(struct cfire *f);                /* cx_end: its after listener, when it has one */
/* After a listener or the barrier (what: its name, for the log): the assignment changed since
 * epoch, so only the items still this instance's run here; the others are dropped. */
void cx_keep_owned(struct cfire *f, uint64_t epoch, const char *what);

/* coord_once.c: ejob.listener.afterAll, once per fire across the cluster */
/* cx_submit: a fire of a job with afterAll that runs items here says so under its guarantee/once
 * node (on/{id}: a failover take of one of its items finds the fire by it), and its items' guarantee
 * completed nodes go in their completion multis from now on (cfire.gw) */
/* coord_flow.c: workflows (dependsOn) */
int cj_flow_root(struct cjob *j);              /* a workflow's root: another job here depends on it */
void cj_flow_sync(struct cjob *j);             /* registered, or its config changed: the waits on its upstream jobs */
void cj_flow_connected(struct cjob *j);        /* the connection is back: what waited for it */
void cj_flow_free(struct cjob *j);
void cx_flow_begin(struct cfire *f);           /* cx_submit: the run's nodes of a fire that is part of one */
void cx_flow_record(struct cfire *f, zkc_multi_t *m, uint32_t item);   /* its record, in the completion multi
                                                                           (m NULL: alone) */
void cx_flow_end(struct cfire *f);             /* cx_end: items the fire did not run here */
int cx_flow_take(struct cfire *f, const char *from);   /* a failover take of from's item: from's run of it
                                                  (1: finding it; it steps the take to FX_WRITTEN then) */
void cx_flow_detach(struct cfire *f);          /* cx_free */
int cx_flow_vet(struct cfire *f);              /* F_WAIT: a run's fire reads its records (1: FX_READY follows) */
void cx_flow_gone(struct cjob *j, const char *gone);   /* the leader: an instance went; its run trigger, if untaken */
void cx_flow_orphans(struct cjob *j);          /* a new leader: the run triggers of instances not there */
const char *cx_last_why(const struct cfire *f, uint32_t item);         /* coord_last.c: a failed item's cause */

void cx_once_begin(struct cfire *f);
/* The lease of a once-per-fire command (listen.h): half the session timeout, so that a stalled
 * supervisor's command is dead before its session can expire and another instance take over. */
uint32_t cx_once_lease_ms(const struct cjob *j);
void cx_once_fire(struct cfire *f);           /* cx_end: its items here are written as completed, waited on */
void cx_once_state(struct cjob *j, int connected);   /* the connection lost (its command killed), or back */
void cx_once_free(struct cjob *j);

/* coord_barrier.c: ejob.listener.beforeAll, once per fire across the cluster, before its items */
/* Its items here are known and its before listener done: write them (and f->unrun) under the
 * fire's started/ and wait for the others' (bounded), the run of beforeAll on one instance, and
 * its result: FX_BARRIER_OK or FX_BARRIER_FAILED (FX_ABORT: out of memory). */
void cx_barrier(struct cfire *f);
void cx_bar_failed(struct cfire *f, const char *why);   /* beforeAll did not succeed: said (skipped: "listener") */
void cx_bar_detach(struct cfire *f);          /* cx_free: the fire goes; a claim of ours is let go */
void cx_bar_stop(struct cjob *j);             /* coord_stop: a fire waiting at the barrier ends */
void cx_bar_state(struct cjob *j, int connected);   /* the connection lost (its command killed), or back */

/* coord_running.c: running nodes that outlive their run */
void cx_misfire(struct cjob *j, uint32_t item);   /* item still running elsewhere: flag it, run it again after */
const struct cfire *cx_catchup_runs(const struct cjob *j, uint32_t i);   /* our catch-up that runs item i, or NULL */
void cx_mark_stale(struct cjob *j, uint32_t item);   /* its running node's creation went unanswered */
void cx_clear_stale(struct cjob *j);             /* connection back: clear unanswered running nodes */
void cx_stale_forget(struct cjob *j);            /* reads and deletes in flight are not waited for */
/* Registered again in a new session: queue for failover the items whose running node still
 * names us from the old one (they were stopped for the lease), and watch again the misfire
 * flags of our items. */
void cx_rejoined(struct cjob *j);
void cx_misfire_found(struct cjob *j, uint32_t item);   /* sharding/{i}/misfire seen on an item we own */
void cx_running_session(struct cjob *j);
void cx_running_unwatch(struct cjob *j);
void cx_running_free(struct cjob *j);

/* coord_failover.c */
void cf_scan(struct cjob *j);                 /* read leader/failover/items, take ours (failover on) */
/* The leader's new listing is in lead.live; old (nold) is the one before it, NULL in a new term:
 * the items of who went are handed out. */
void cf_instances(struct cjob *j, char *const *old, int nold);
void cf_unwatch(struct cjob *j);
void cf_free(struct cjob *j);
/* A catch-up (failover and misfire on) about to run the items in its fire: an item that the leader
 * handed out for the fires it stands for (this instance went for them: its session ended) ran, or
 * runs, on its taker. 1: reads sent, f->vetted is set and FX_READY reported when they are answered
 * (wait_ready then leaves those items out); 0: nothing to read. */
int cf_vet(struct cfire *f);
void cf_vet_detach(struct cfire *f);          /* cx_free: its answers go to no one */

#endif
