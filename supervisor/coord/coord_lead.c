/* supervisor/coord/coord_lead.c: leadership of a job: the election (fenced: every leader write checks
 * the version of leader/election its election wrote), the resharding flag the leader raises and
 * everyone watches, the leader's listing of instances, and the bound on a fire's wait for the
 * leader's sharding (past it, the leader is deposed). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/wait.h"
#include "supervisor/coord/coord_int.h"

/* ---- election ------------------------------------------------------------------------------------ */

static void leader_watch_instances(struct cjob *j);

static void free_live(struct cjob *j)
{
	for (int k = 0; k < j->lead.nlive; k++) free(j->lead.live[k]);
	free(j->lead.live);
	j->lead.live = NULL;
	j->lead.nlive = 0;
}

void cj_lead_won(struct cjob *j, int fence, int fresh)
{
	cj_set_leader(j, 1);
	j->lead.fence = fence;
	/* a new term: the first listing of instances looks for items orphaned before it */
	free_live(j);
	log_info("job %s: this instance is the leader", j->name);
	/* a job new to the namespace, elected by its registration: nothing is orphaned, and its
	 * listing waits for the other registrations (coord_reg.c cj_arm_pump) */
	if (fresh && !cj_reg_settled(j->c)) cj_arm_later(j, CJ_ARM_INST);
	else leader_watch_instances(j);
	cj_shard_eager(j);      /* the flag up: shard before the fire (coord_shard.c) */
	cx_ready_changed(j);    /* a fire waiting for sharding */
}

static void elected(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) return;
	if (r->rc == ZOK) {
		cj_lead_won(j, r->nops > 1 ? r->op_stat[1].version : -1, 0);
		return;
	}
	/* someone else won (ZNODEEXISTS at the first op): follow, watching their node */
	cj_elect(j);
}

/* leader/election/instance, kept: who leads, and when it goes */
static void leader_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (j->gone) return;
	if (r->event == ZOO_DELETED_EVENT) {
		if (j->lead.leader) log_warn("job %s: this instance's leader node went away; electing again", j->name);
		cj_set_leader(j, 0);
	}
	if (!cj_live(j, r->session)) return;
	if (r->rc == ZOK) {
		/* a leader exists (maybe us: our own create fires the creation watch); the watch
		 * tells when it goes */
		if ((int64_t)r->stat.ephemeralOwner != zkc_session_id(j->c->z)) {
			cj_set_leader(j, 0);
		} else if (!j->lead.leader) {
			/* ours, but we stepped down (a sharding refused): without its fence we cannot
			 * write as leader; give it up and stand again */
			char p[CJ_PATH_MAX];
			zkc_delete(j->c->z, cj_path(j, p, "/leader/election/instance"), r->stat.version, NULL, NULL);
		}
		return;
	}
	if (r->rc != ZNONODE) return;
	if (cj_conf(j)->disabled || j->ops.server_off || j->ops.shut) return;   /* a disabled server does not lead */
	char p[CJ_PATH_MAX], q[CJ_PATH_MAX];
	const char *id = j->c->id;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, cj_path(j, p, "/leader/election/instance"), id, (int)strlen(id), ZOO_EPHEMERAL);
	zkc_multi_set(m, cj_path(j, q, "/leader/election"), id, (int)strlen(id), -1);
	zkc_multi_share(j->c->z, m, elected, j);     /* with the other elections of this turn */
}

void cj_elect(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	if (zkc_state(j->c->z) != ZKC_CONNECTED) return;
	zkc_keep_read(cj_keep(j, &j->lead.w_leader, ZKC_KEEP_EXISTS, cj_path(j, p, "/leader/election/instance"), ZKC_NO_ITEM,
	                      leader_known));
}

/* ---- the leader keeps the resharding flag ------------------------------------------------------- */

struct flag {
	struct cjob *j;
	char why[300];
};

static void necessary_set(void *arg, const struct zkc_res *r)
{
	struct flag *fl = arg;
	struct cjob *j = fl->j;
	if (r->rc == ZOK)
		log_info("job %s: resharding is due: %s", j->name, fl->why);
	else if (r->nops > 1 && r->op_rc[1] == ZNODEEXISTS)
		log_debug("job %s: resharding is already due (%s)", j->name, fl->why);
	else if (cj_live(j, r->session) && r->rc != ZCLOSING)     /* not while stopping */
		log_warn("job %s: cannot raise the resharding flag (%s): %s%s", j->name, fl->why, zerror(r->rc),
		         r->nops > 0 && r->op_rc[0] == ZBADVERSION ? ": this instance is no longer the leader" : "");
	free(fl);
}

void cj_set_necessary(struct cjob *j, const char *why)
{
	if (!j->lead.leader) return;
	struct flag *fl = calloc(1, sizeof *fl);
	if (!fl) return;
	fl->j = j;
	snprintf(fl->why, sizeof fl->why, "%s", why);
	char p[CJ_PATH_MAX], q[CJ_PATH_MAX];
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_check(m, cj_path(j, q, "/leader/election"), j->lead.fence);
	zkc_multi_create(m, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0);
	if (zkc_multi_commit(j->c->z, m, necessary_set, fl) != ZOK) free(fl);
}

void cj_check_owners(struct cjob *j)
{
	if (!j->lead.leader || !j->lead.live || !j->as.have || j->lead.necessary || j->shard.busy) return;
	uint32_t off = 0, first = 0;
	for (uint32_t i = 0; i < j->as.total; i++) {
		int live = 0;
		for (int k = 0; k < j->lead.nlive && !live; k++) live = j->as.owner[i] && !strcmp(j->as.owner[i], j->lead.live[k]);
		if (live) continue;
		if (cj_static_held(j)) {
			/* an item stays with its owner, online or not (ElasticJob's static sharding): it
			 * runs nowhere meanwhile, which is said once per change */
			if (!off++) first = i;
			continue;
		}
		char why[300];
		snprintf(why, sizeof why, "item %u is assigned to %.200s, which is not online", i,
		         j->as.owner[i] && j->as.owner[i][0] ? j->as.owner[i] : "no instance");
		cj_set_necessary(j, why);
		return;
	}
	char cause[64];
	snprintf(cause, sizeof cause, "%" PRIu32 " from %" PRIu32 " epoch %" PRIu64, off, first, j->as.epoch);
	if (!off) log_cause_reset(&j->lead.static_cause);
	else
		log_cause(&j->lead.static_cause, LL_WARN, cause, "job %s: staticSharding: %" PRIu32 " item%s (item %" PRIu32
		          " first) %s assigned to an instance that is not online (%.200s); they run nowhere until it comes "
		          "back under the same id%s, or the job is resharded (a change of shardingTotalCount, or "
		          "leader/sharding/necessary created)", j->name, off, off == 1 ? "" : "s", first, off == 1 ? "is" : "are",
		          j->as.owner[first] && j->as.owner[first][0] ? j->as.owner[first] : "no instance",
		          cj_conf(j)->failover ? " (failover runs those that were running when it crashed)" : "");
}

/* the listing r says the same as live[] (descending, instance ids only) */
static int same_as_live(const struct cjob *j, const struct zkc_res *r)
{
	int k = 0;
	for (int i = r->nchildren - 1; i >= 0; i--) {
		if (!cj_id_ok(r->children[i])) continue;
		if (k >= j->lead.nlive || strcmp(r->children[i], j->lead.live[k])) return 0;
		k++;
	}
	return k == j->lead.nlive;
}

/* instances/, kept while leading: the listing after each change (r->event), or the new term's */
static void instances_listed(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK) return;
	if (!j->lead.leader) {
		/* no longer the leader: its listings are no business of ours until we lead again */
		zkc_keep_free(j->lead.w_instances);
		j->lead.w_instances = NULL;
		return;
	}
	if (r->event) {
		j->lead.inst_gen++;
		cj_shard_eager(j);      /* a change: an eager sharding waits until they stop */
		if (!cj_static_held(j)) cj_set_necessary(j, "the instances changed");
		else log_info("job %s: the instances changed; staticSharding: the items stay where they are", j->name);
	} else if (j->lead.live && !same_as_live(j, r)) {
		/* a change that no event told (between two listings): the sharding must not miss it */
		j->lead.inst_gen++;
	}
	char **nl = calloc((size_t)r->nchildren + 1, sizeof *nl);
	if (!nl) return;
	int n = 0;
	/* descending, as ElasticJob orders instances; garbage is no taker */
	for (int i = r->nchildren - 1; i >= 0; i--)
		if (cj_id_ok(r->children[i]) && (nl[n] = strdup(r->children[i]))) n++;
	char **old = j->lead.live;
	int nold = j->lead.nlive;
	j->lead.live = nl;
	j->lead.nlive = n;
	cf_instances(j, old, nold);
	for (int k = 0; k < nold; k++) free(old[k]);
	free(old);
	/* A new term: instances that went while no one led (the old leader among them) were seen by
	 * no one; an item owned by an instance that is not online now would run nowhere. Checked at
	 * every listing, not only the first: it costs nothing while the assignment is sound. */
	cj_check_owners(j);
}

static void leader_watch_instances(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	if (!j->lead.leader) return;        /* stepped down before a deferred listing (cj_lead_list) */
	zkc_keep_read(cj_keep(j, &j->lead.w_instances, ZKC_KEEP_CHILDREN, cj_path(j, p, "/instances"), ZKC_NO_ITEM,
	                      instances_listed));
}

void cj_lead_list(struct cjob *j)
{
	leader_watch_instances(j);
}

/* ---- the resharding flag, for everyone ------------------------------------------------------------ */

static void necessary_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) return;
	int was = j->lead.necessary;
	j->lead.necessary = r->rc == ZOK;
	if (r->rc == ZOK) j->lead.necessary_ctime = r->stat.ctime;
	/* the leader shards as soon as the changes stop, not at the next fire (coord_shard.c) */
	if (j->lead.necessary && (!was || r->event)) cj_shard_eager(j);
	else if (!j->lead.necessary) cj_shard_eager_off(j);
	/* gone (or come and gone between two reads: r->event): the leader's multi that removed it
	 * also wrote the new assignment; read it before a waiting fire goes on with the old one. This
	 * is how every instance learns of a reshard: the sharding node itself is not watched. */
	if (!j->lead.necessary && (was || r->event)) cj_load_assignment(j);
	/* gone and raised again between two reads (there before and now, and an event between): a
	 * commit came between them, which wrote an assignment; read it, or an instance that had none
	 * (its read came before the leader's first commit) waits for the next reshard with a fire
	 * whose time came before the flag, and runs it under that later assignment (t/86 once: its
	 * beforeAll barrier for a fire the others had ended held every later fire of the job) */
	else if (j->lead.necessary && was && r->event == ZOO_DELETED_EVENT) cj_load_assignment(j);
	/* raised while this instance has no assignment (its read came before the first commit, say):
	 * read it again, so that a fire whose time came before the flag runs the assignment the
	 * others ran it with (coord_fsm.c) rather than wait for the reshard */
	else if (j->lead.necessary && !was && !j->as.have && !j->as.loading) cj_load_assignment(j);
	cx_ready_changed(j);
}

void cj_watch_necessary(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	zkc_keep_read(cj_keep(j, &j->lead.w_necessary, ZKC_KEEP_EXISTS, cj_path(j, p, "/leader/sharding/necessary"),
	                      ZKC_NO_ITEM, necessary_known));
}

/* ---- leadership lost, given up, or void -------------------------------------------------------- */

void cj_lead_session(struct cjob *j)
{
	cj_set_leader(j, 0);
}

void cj_step_down(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	if (!j->lead.leader) return;
	cj_set_leader(j, 0);
	zkc_delete(j->c->z, cj_path(j, p, "/leader/election/instance"), -1, NULL, NULL);
}

void cj_deposed(struct cjob *j)
{
	cj_set_leader(j, 0);
	cj_elect(j);
}

void cj_sharded(struct cjob *j)
{
	j->lead.necessary = 0;      /* the sharding multi deleted it */
}

void cj_lead_unwatch(struct cjob *j)
{
	zkc_keep_free(j->lead.w_leader);
	zkc_keep_free(j->lead.w_necessary);
	zkc_keep_free(j->lead.w_instances);
	j->lead.w_leader = j->lead.w_necessary = j->lead.w_instances = NULL;
}

void cj_lead_free(struct cjob *j)
{
	cj_lead_unwatch(j);
	free_live(j);
}

/* A fire waits for the assignment for at most twice the session timeout (ElasticJob's followers
 * can wait for ever on a leader that never shards). Past it the fire is missed. A leader that is
 * ejob and has nothing to wait for is deposed: its election node is deleted, so that everyone
 * elects again. A leader whose loop hangs while its client library keeps the session alive, or
 * that cannot write its sharding, no longer blocks the job; a leader that is merely slow elects
 * itself or another again and goes on (its old fence fails its writes).
 *
 * Deposed only what is known to be stuck (a look at ZooKeeper first, struct probe):
 *   - never a leader that is not ejob (no leader/failover/alive/{id}, the node every ejob
 *     instance holds): an ElasticJob leader whose session is alive is healthy as far as anyone
 *     can tell, and it legitimately waits for every running item before it shards;
 *   - never while sharding/{i}/running nodes explain the wait;
 *   - only the election node that was read: the delete checks leader/election's version (every
 *     ejob election sets it) and the instance node's, so a leader elected since is left alone. */

static void wait_missed(struct cjob *j, struct cfire *f, const char *why, const char *then)
{
	log_error("job %s: fire %" PRIu64 " missed: no assignment after %.1fs (%s); %s", j->name, fire_id(f->fire),
	          (double)(wait_now_ns() - fire_started_ns(f->fire)) / 1e9, why, then);
	char d[300];
	snprintf(d, sizeof d, "no assignment after %.1fs (%s); %s", (double)(wait_now_ns() - fire_started_ns(f->fire)) / 1e9, why,
	         then);
	cx_skipped(j, fire_id(f->fire), "no_assignment", d);
	/* a request that never got its answer would hold the flags: read again from scratch */
	cx_stale_forget(j);
	cj_assign_reload(j);
	f->missed = 1;
	cx_step(f, FX_ABORT, NULL);
}

struct probe {
	struct cjob *j;
	uint64_t session;
	uint64_t fire_ms;           /* the waiting fire it is for */
	int left;                   /* answers outstanding */
	int failed;                 /* a read failed: decide nothing */
	int stage;                  /* 0: election, leader, items; 1: alive, running */
	int ev;                     /* leader/election's version */
	int iv;                     /* leader/election/instance's version (-1: no leader) */
	char id[160];               /* its data: the leader's instance id */
	int alive;                  /* leader/failover/alive/{id} exists */
	uint32_t *items;            /* sharding's children (item numbers) */
	int nitems;
	int nrunning;               /* of which sharding/{i}/running exists */
	char running[96];           /* the first of them, for the message */
};

static void probe_free(struct probe *pr)
{
	pr->j->lead.probing = 0;
	free(pr->items);
	free(pr);
}

/* the fire the probe is for, if it still waits */
static struct cfire *probe_fire(const struct probe *pr)
{
	struct cjob *j = pr->j;
	struct cfire *f = j->fx.fire;
	if (!cj_live(j, pr->session) || !f || f->state != F_WAIT || fire_id(f->fire) != pr->fire_ms) return NULL;
	return f;
}

static void deposed_done(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (r->rc == ZOK || !cj_live(j, r->session)) return;
	log_info("job %s: the leader was not deposed: %s (elected again meanwhile)", j->name, zerror(r->rc));
}

static void probe_decide(struct probe *pr)
{
	struct cjob *j = pr->j;
	struct cfire *f = probe_fire(pr);
	if (!f) return;                     /* the assignment came meanwhile, or the session went */
	char p[CJ_PATH_MAX], q[CJ_PATH_MAX], then[600];
	if (pr->failed) {
		wait_missed(j, f, "the leader has not sharded", "the leader could not be read: not deposed");
	} else if (pr->iv < 0) {
		wait_missed(j, f, "there is no leader", "electing one");
		cj_elect(j);
	} else if (!pr->alive) {
		snprintf(then, sizeof then,
		         "the leader %s is not an ejob instance (no leader/failover/alive/%s: ElasticJob?) and its "
		         "session is alive: not deposed (ElasticJob's leader waits for every running item before it shards)",
		         pr->id, pr->id);
		wait_missed(j, f, "the leader has not sharded", then);
	} else if (pr->nrunning) {
		snprintf(then, sizeof then, "%d item%s still running (%s%s): the leader %s waits for them, not deposed",
		         pr->nrunning, pr->nrunning == 1 ? " is" : "s are", pr->running, pr->nrunning > 1 ? ", ..." : "",
		         pr->id);
		wait_missed(j, f, "the leader has not sharded", then);
	} else {
		snprintf(then, sizeof then, "deposing the leader %s: everyone elects again", pr->id);
		wait_missed(j, f, "the leader has not sharded", then);
		zkc_multi_t *m = zkc_multi_new();
		zkc_multi_check(m, cj_path(j, q, "/leader/election"), pr->ev);
		zkc_multi_delete(m, cj_path(j, p, "/leader/election/instance"), pr->iv);
		zkc_multi_commit(j->c->z, m, deposed_done, j);
	}
}

static void probe_read(void *arg, const struct zkc_res *r);

static void probe_stage1(struct probe *pr)
{
	struct cjob *j = pr->j;
	char p[CJ_PATH_MAX];
	pr->stage = 1;
	pr->left = 1;          /* held while sending */
	if (pr->iv >= 0 && cj_id_ok(pr->id) &&
	    zkc_exists(j->c->z, cj_path(j, p, "/leader/failover/alive/%s", pr->id), NULL, NULL, probe_read, pr) == ZOK)
		pr->left++;
	for (int k = 0; k < pr->nitems; k++)
		if (zkc_exists_item(j->c->z, cj_path(j, p, "/sharding/%u/running", pr->items[k]), pr->items[k], NULL, NULL,
		                    probe_read, pr) == ZOK)
			pr->left++;
	probe_read(pr, NULL);
}

enum { PR_ELECTION, PR_LEADER, PR_ITEMS };     /* stage 0's reads (their r->item) */

static void probe_read(void *arg, const struct zkc_res *r)
{
	struct probe *pr = arg;
	if (r) {
		if (r->rc != ZOK && r->rc != ZNONODE) pr->failed = 1;
		else if (pr->stage == 0 && r->item == PR_LEADER) {
			if (r->rc == ZOK) {
				pr->iv = r->stat.version;
				snprintf(pr->id, sizeof pr->id, "%s", r->data ? r->data : "");
			}
		} else if (pr->stage == 0 && r->item == PR_ELECTION) {
			if (r->rc == ZOK) pr->ev = r->stat.version;
		} else if (pr->stage == 0) {        /* PR_ITEMS: sharding's children */
			free(pr->items);
			pr->items = r->rc == ZOK && r->nchildren ? calloc((size_t)r->nchildren, sizeof *pr->items) : NULL;
			pr->nitems = 0;
			for (int k = 0; pr->items && k < r->nchildren; k++) {
				char *e;
				unsigned long v = strtoul(r->children[k], &e, 10);
				if (*r->children[k] && !*e && v < UINT32_MAX) pr->items[pr->nitems++] = (uint32_t)v;
			}
		} else if (r->item == ZKC_NO_ITEM) {
			pr->alive = r->rc == ZOK;
		} else if (r->rc == ZOK) {
			if (!pr->nrunning++) snprintf(pr->running, sizeof pr->running, "sharding/%u/running", r->item);
		}
	}
	if (--pr->left > 0) return;
	if (pr->stage == 0 && !pr->failed && probe_fire(pr)) {
		probe_stage1(pr);
		return;
	}
	probe_decide(pr);
	probe_free(pr);
}

/* Read, in this order (leader/election before its instance: a leader elected between the two
 * reads fails the version check), what decides whether the leader may be deposed. */
static void probe_start(struct cjob *j, struct cfire *f)
{
	struct probe *pr = calloc(1, sizeof *pr);
	if (!pr) {
		wait_missed(j, f, "the leader has not sharded", "out of memory: not deposed");
		return;
	}
	pr->j = j;
	pr->session = zkc_session(j->c->z);
	pr->fire_ms = fire_id(f->fire);
	pr->iv = -1;
	pr->left = 1;
	j->lead.probing = 1;
	char p[CJ_PATH_MAX];
	zkc_t *z = j->c->z;
	if (zkc_get_item(z, cj_path(j, p, "/leader/election"), PR_ELECTION, NULL, NULL, probe_read, pr) == ZOK) pr->left++;
	else pr->failed = 1;
	if (zkc_get_item(z, cj_path(j, p, "/leader/election/instance"), PR_LEADER, NULL, NULL, probe_read, pr) == ZOK)
		pr->left++;
	else pr->failed = 1;
	if (zkc_children_item(z, cj_path(j, p, "/sharding"), PR_ITEMS, NULL, NULL, probe_read, pr) == ZOK) pr->left++;
	else pr->failed = 1;
	probe_read(pr, NULL);
}

/* A waiting fire past its bound is looked at each tick until it runs or is missed (rare: the
 * next look is now); one within it, at its bound. */
uint64_t cj_wait_bound(struct cjob *j, uint64_t now_ns, uint64_t timeout)
{
	struct cfire *f = j->fx.fire;
	if (!f || f->state != F_WAIT || !timeout) return UINT64_MAX;
	if (now_ns - fire_started_ns(f->fire) < 2 * timeout) return fire_started_ns(f->fire) + 2 * timeout;
	if (!cj_registered(j)) {
		log_error("job %s: fire %" PRIu64 " missed: the job is still not registered after %.1fs", j->name, fire_id(f->fire),
		          (double)(now_ns - fire_started_ns(f->fire)) / 1e9);
		cx_skipped(j, fire_id(f->fire), "not_registered", "the job is still not registered");
		f->missed = 1;
		cx_step(f, FX_ABORT, NULL);
		return now_ns;
	}
	if (j->lead.probing) return now_ns;            /* the look at the leader decides */
	enum cj_wait w = cj_ready(j);
	/* Waiting on our own requests (the assignment's reads, clearing stale running nodes, or our own
	 * sharding as leader) while this supervisor still has requests at ZooKeeper or waiting for the
	 * window: ZooKeeper is busy with a burst of ours (10,000 jobs' first fire shards them all), not
	 * stuck. Stepping down or deposing would only add to the burst (and every job would elect
	 * again). The fire waits on, up to 5 times the bound. */
	int ours = w == CJ_WAIT_STALE || w == CJ_WAIT_READING || (w == CJ_WAIT_SHARDING && j->lead.leader && j->shard.busy);
	if (ours && zkc_backlog(j->c->z) > 0 && now_ns - fire_started_ns(f->fire) < 10 * timeout) return now_ns;
	if (w == CJ_WAIT_SHARDING && !j->lead.leader) {
		probe_start(j, f);
		return now_ns;
	}
	const char *why = w == CJ_WAIT_STALE ? "running nodes left by a lost connection are still being cleared"
	                  : w == CJ_WAIT_READING ? "the assignment is still being read"
	                  : "the leader has not sharded";
	if (j->lead.leader) {
		/* first step down: the catch-up fire that cx_end may start must not shard with the old fence */
		char p[CJ_PATH_MAX];
		cj_set_leader(j, 0);
		zkc_delete(j->c->z, cj_path(j, p, "/leader/election/instance"), -1, NULL, NULL);
		wait_missed(j, f, why, "this instance steps down as leader");
	} else {
		wait_missed(j, f, why, "reading it again");
	}
	return now_ns;
}
