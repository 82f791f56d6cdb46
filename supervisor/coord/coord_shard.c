/* supervisor/coord/coord_shard.c: the leader shards a job: the enabled instances, the strategy, and one
 * fenced multi that writes every sharding/{i}/instance and the sharding node (its mzxid is the epoch)
 * and removes the resharding flag. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/wait.h"
#include "supervisor/coord/coord_int.h"
#include "supervisor/coord/shard.h"

/* ---- sharding (the leader) ------------------------------------------------------------------------ */

/* What an assignment is computed from: the instances listed and the servers/{ip} read, each
 * with what was seen. The commit checks every one of them (each instance node still exists,
 * each server node has the version read), so an instance that goes, or a server an operator
 * disables, between the listing and the commit fails the commit instead of leaving an
 * assignment that names it; the leader then shards again at once.
 *
 * Since the commit checks each server node's version, the leader keeps what it read (j->shard)
 * and reads only the servers it has not seen in this session: a changed one fails the commit,
 * which forgets them all and shards again from fresh reads. Likewise the nodes every commit
 * sets (sharding/{i}/instance) are made once per session, not at every sharding. After a mass
 * death, each sharding was a listing, a read per instance and two creates per item before its
 * commit (25 requests for 8 items over 6 instances); it is a listing and the commit. */
struct cj_server_seen {
	char *ip;
	int version;
	int disabled;
};

struct shardop {
	struct cjob *j;
	uint64_t session;
	uint64_t gen;               /* j->lead.inst_gen at the listing */
	int left, failed;
	int sleft;                  /* servers/{ip} reads outstanding */
	char **ids;                 /* instances listed (the disabled ones dropped after the reads) */
	int nids;
	struct cj_server_seen *srv; /* [nsrv] servers read or remembered (ENABLED or DISABLED) */
	int nsrv;
	int no_processing;          /* the commit makes no processing node to delete */
};

struct commit {
	struct cjob *j;
	uint32_t total;
	char **owner;               /* [total] */
	int nchecks;                /* ops 1..nchecks: the inputs' checks */
	char **checked;             /* [nchecks]: the node each check is on (relative to the job) */
	int sharding_op;            /* index of the set of the sharding node */
	int flag_op;                /* index of the create of leader/sharding/necessary, or -1 */
	int fence;                  /* the fence it was written under */
	uint64_t gen;               /* j->lead.inst_gen at the listing */
	int ninst;                  /* instances it shards over */
	int eager;                  /* an eager sharding: ops run_lo..run_hi-1 check that no item runs */
	int run_lo, run_hi;
	int fresh;                  /* it creates the item nodes (cj_shard_fresh) */
};

static void servers_forget(struct cjob *j)
{
	for (int i = 0; i < j->shard.nsrv; i++) free(j->shard.srv[i].ip);
	free(j->shard.srv);
	j->shard.srv = NULL;
	j->shard.nsrv = 0;
}

static void shard_start(struct cjob *j, int eager);

/* a sharding ended (committed, refused, or never sent): an eager one frees its place */
static void shard_done(struct cjob *j)
{
	j->shard.busy = 0;
	if (!j->shard.eager_run) return;
	j->shard.eager_run = 0;
	coord_t *c = j->c;
	if (c->eager_inflight) c->eager_inflight--;
	/* its place goes to the next one due; not to this job itself (busy meanwhile): its caller
	 * (an answer) is not done with it */
	j->shard.busy = 1;
	cj_shard_pump(c, wait_now_ns(), CJ_EAGER_MAX);
	j->shard.busy = 0;
}

void cj_shard_free(struct cjob *j)
{
	servers_forget(j);
	cj_shard_eager_off(j);
	if (j->shard.eager_run && j->c->eager_inflight) j->c->eager_inflight--;
	j->shard.eager_run = 0;
}

/* what the leader knows is of this session only */
static void shard_session(struct cjob *j, uint64_t session)
{
	if (j->shard.session == session) return;
	servers_forget(j);
	j->shard.made = 0;
	j->shard.fresh = 0;
	j->shard.session = session;
}

/* A job whose nodes this session's registration multi made (reg_fresh): there is no item node
 * yet, so its first commit creates sharding/{i} and sharding/{i}/instance itself, with the owners,
 * where a sharding of a job that has them creates the missing ones first and then sets them (a
 * round trip and 2 writes an item). Nothing can run under an item node that is not there: no
 * running checks, and no processing node (ElasticJob's followers wait while it is there; the
 * commit is one transaction, the flag deleted in it). servers/{ip} is ours as the multi created
 * it (version 0, enabled: a disabled server does not lead). A node there after all (an operator,
 * a leader before us) fails the commit whole: the leader shards again the usual way. */
void cj_shard_fresh(struct cjob *j, uint64_t session)
{
	cj_shard_server(j, session, 0);
	j->shard.fresh = 1;
}

/* servers/{ip} of this instance as registration wrote it (its version in the answer): a sharding
 * checks that version instead of reading the node first */
void cj_shard_server(struct cjob *j, uint64_t session, int version)
{
	shard_session(j, session);
	servers_forget(j);
	if (!(j->shard.srv = calloc(1, sizeof *j->shard.srv))) return;
	if (!(j->shard.srv[0].ip = strdup(j->c->ip))) return;
	j->shard.srv[0].version = version;
	j->shard.srv[0].disabled = cj_conf(j)->disabled;
	j->shard.nsrv = 1;
}

/* remember the servers this sharding used */
static void servers_keep(struct cjob *j, const struct shardop *o)
{
	servers_forget(j);
	if (!o->nsrv || !(j->shard.srv = calloc((size_t)o->nsrv, sizeof *j->shard.srv))) return;
	for (int i = 0; i < o->nsrv; i++) {
		if (!(j->shard.srv[j->shard.nsrv].ip = strdup(o->srv[i].ip))) continue;
		j->shard.srv[j->shard.nsrv].version = o->srv[i].version;
		j->shard.srv[j->shard.nsrv++].disabled = o->srv[i].disabled;
	}
}

static const struct cj_server_seen *server_known(const struct cjob *j, const char *ip, size_t n)
{
	for (int i = 0; i < j->shard.nsrv; i++)
		if (strlen(j->shard.srv[i].ip) == n && !strncmp(j->shard.srv[i].ip, ip, n)) return &j->shard.srv[i];
	return NULL;
}

static void shardop_free(struct shardop *o)
{
	for (int i = 0; i < o->nids; i++) free(o->ids[i]);
	free(o->ids);
	for (int i = 0; i < o->nsrv; i++) free(o->srv[i].ip);
	free(o->srv);
	free(o);
}

static void commit_free(struct commit *cm)
{
	cj_free_owner(cm->owner, cm->total);
	for (int i = 0; i < cm->nchecks; i++) free(cm->checked[i]);
	free(cm->checked);
	free(cm);
}

static void sharded(void *arg, const struct zkc_res *r)
{
	struct commit *cm = arg;
	struct cjob *j = cm->j;
	int fence = cm->fence;
	int changed = cm->gen != j->lead.inst_gen;
	int eager = cm->eager, run_lo = cm->run_lo, run_hi = cm->run_hi;
	shard_done(j);
	int fresh = cm->fresh;
	if (fresh) j->shard.fresh = 0;      /* made now, or found there: either way not again */
	if (r->rc == ZOK && cj_live(j, r->session) && cm->sharding_op < r->nops) {
		cj_sharded(j);
		uint64_t epoch = (uint64_t)r->op_stat[cm->sharding_op].mzxid;
		struct event ev = { .type = EVT_SHARDED, .epoch = epoch, .count = (uint32_t)cm->ninst };
		cj_event(j, &ev);
		if (fresh) {
			j->shard.made = cm->total;
			cj_install_made(j, cm->owner, cm->total, epoch);
		} else {
			cj_install(j, cm->owner, cm->total, epoch);
		}
		cm->owner = NULL;
	}
	int k = 0;
	while (k < r->nops && r->op_rc[k] == ZOK) k++;
	int cm_flag_op = cm->flag_op, cm_nchecks = cm->nchecks;
	char what[CJ_PATH_MAX] = "";
	if (r->rc != ZOK && k >= 1 && k <= cm->nchecks) snprintf(what, sizeof what, "%s", cm->checked[k - 1]);
	commit_free(cm);
	if (!cj_live(j, r->session)) return;
	if (r->rc == ZOK) {
		/* an instance that came (or went) after the listing: its watch's flag was refused (it
		 * still existed) and the commit has just removed it; raise it again */
		if (changed && j->lead.leader) cj_set_necessary(j, "the instances changed while sharding");
		return;
	}
	if (fresh && r->rc == ZNODEEXISTS && k > cm_nchecks && k != cm_flag_op && j->lead.leader) {
		/* an item node was there after all: the usual way, which makes what is missing */
		log_info("job %s: its item nodes were there already (op %d of the first commit); sharding again", j->name, k);
		j->shard.made = 0;
		j->shard.remake = 1;
		cj_shard_now(j);
		return;
	}
	if (eager && r->rc == ZNODEEXISTS && k >= run_lo && k < run_hi) {
		/* an item of the job runs (its running node is there): nothing was written, and nothing
		 * is moved while it runs; the fire shards (a waiting one now) */
		log_info("job %s: item %d is running (sharding/%d/running): the reshard is left for the next fire", j->name,
		         (k - run_lo) / 2, (k - run_lo) / 2);
		if (j->lead.leader) cx_ready_changed(j);
		return;
	}
	if (r->rc != ZOK && !strncmp(what, "servers/", 8)) servers_forget(j);
	if (r->rc != ZOK && k > cm_nchecks) {
		j->shard.made = 0;      /* a node it sets may not be there: make them all again */
		j->shard.remake = 1;
	}
	if (what[0] && j->lead.leader) {
		/* an input changed under the sharding (an instance went, a server was disabled): nothing
		 * was written; shard again from fresh reads */
		log_info("job %s: %s changed while sharding (%s); sharding again", j->name, what, zerror(r->rc));
		cj_shard_now(j);
		return;
	}
	if (k == cm_flag_op && r->rc == ZNODEEXISTS) {
		/* the flag was raised after we last saw it gone: its watch tells us, then we shard again */
		log_info("job %s: the resharding flag was raised while sharding; sharding again", j->name);
		if (j->lead.leader) cx_ready_changed(j);
		return;
	}
	log_warn("job %s: sharding failed: %s (op %d)%s", j->name, zerror(r->rc), k,
	         k == 0 && r->rc == ZBADVERSION ? ": this instance is no longer the leader" : "");
	/* deposed, unless it was an older term's fence and we lead again since */
	if (k == 0 && r->rc == ZBADVERSION && fence == j->lead.fence) {
		cj_deposed(j);
	} else if (j->lead.leader) {
		cx_ready_changed(j);     /* still the leader: a waiting fire shards again */
	}
}

static void shard_commit(struct shardop *o)
{
	struct cjob *j = o->j;
	char **ids = o->ids;
	int n = o->nids;
	const conf_job_t *cj = cj_conf(j);
	uint32_t total = cj->sharding_total_count;
	uint32_t *owner = calloc(total ? total : 1, sizeof *owner);
	if (!owner) {
		shard_done(j);
		return;
	}
	/* SINGLE_SHARDING_BALANCE starts the deal where the time of the sharding says */
	int64_t now_ms = (int64_t)(wait_realtime_ns() / 1000000u);
	if (shard_assign(cj->strategy.effective, j->name, now_ms, (const char *const *)ids, (size_t)n, total, owner) < 0) {
		int ssb = cj->strategy.effective == CONF_STRATEGY_SINGLE_SHARDING_BALANCE;
		log_error("job %s: cannot shard %" PRIu32 " items over %d instances with %s: %s", j->name, total, n,
		          conf_strategy_name(cj->strategy.effective),
		          errno != EDOM ? strerror(errno)
		          : ssb ? "ElasticJob's SINGLE_SHARDING_BALANCE fails at this millisecond for this job name with this many "
		                  "instances (Math.abs of Integer.MIN_VALUE); the next sharding, at another, will not"
		                : "ElasticJob's ROUND_ROBIN fails for this job name with this many instances (Math.abs of "
		                  "Integer.MIN_VALUE); choose another jobShardingStrategyType");
		free(owner);
		shard_done(j);
		return;
	}
	char p[CJ_PATH_MAX];
	struct commit *cm = calloc(1, sizeof *cm);
	if (!cm || !(cm->owner = calloc(total ? total : 1, sizeof *cm->owner)) ||
	    !(cm->checked = calloc((size_t)(n + o->nsrv) + 1, sizeof *cm->checked))) {
		if (cm) free(cm->owner);
		free(cm);
		free(owner);
		shard_done(j);
		return;
	}
	cm->j = j;
	cm->total = total;
	cm->gen = o->gen;
	cm->ninst = n;
	zkc_multi_t *m = zkc_multi_new();
	cm->fence = j->lead.fence;
	zkc_multi_check(m, cj_path(j, p, "/leader/election"), j->lead.fence);
	/* the inputs: every instance sharded over still there (version -1: it exists), every server
	 * as it was read */
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof p, "instances/%s", ids[i]);
		cm->checked[cm->nchecks++] = strdup(p);
		zkc_multi_check(m, cj_path(j, p, "/instances/%s", ids[i]), -1);
	}
	for (int i = 0; i < o->nsrv; i++) {
		snprintf(p, sizeof p, "servers/%s", o->srv[i].ip);
		cm->checked[cm->nchecks++] = strdup(p);
		zkc_multi_check(m, cj_path(j, p, "/servers/%s", o->srv[i].ip), o->srv[i].version);
	}
	/* Eager (not at a fire): nothing is moved while it runs, as ElasticJob's leader waits for
	 * running items before it shards. Each item's running node is created and deleted in the
	 * commit: the create fails if the node is there, and the whole commit with it (ZooKeeper has
	 * no check for a node's absence). The pair is atomic: nobody sees the node. */
	cm->eager = j->shard.eager_run;
	cm->fresh = j->shard.fresh && j->shard.session == o->session;
	cm->run_lo = cm->run_hi = zkc_multi_count(m);
	for (uint32_t i = 0; cm->eager && !cm->fresh && i < total; i++) {
		zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), "", 0, ZOO_EPHEMERAL);
		zkc_multi_delete(m, p, -1);
	}
	cm->run_hi = zkc_multi_count(m);
	for (uint32_t i = 0; i < total; i++) {
		const char *id = ids[owner[i]];
		cm->owner[i] = strdup(id);
		if (cm->fresh) {
			zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32, i), "", 0, 0);
			zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), id, (int)strlen(id), 0);
		} else {
			zkc_multi_set(m, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), id, (int)strlen(id), -1);
		}
	}
	cm->sharding_op = zkc_multi_count(m);
	/* its mzxid is the epoch; its data the whole assignment, which the followers read in one
	 * request (coord_assign.c) */
	char *all = cj_assignment_text(cm->owner, total);
	zkc_multi_set(m, cj_path(j, p, "/sharding"), all ? all : "", all ? (int)strlen(all) : 0, -1);
	free(all);
	/* the flag goes in the same commit, and is made first if it was not raised (a job with no
	 * assignment yet): its watch is how every instance learns that the assignment changed */
	cm->flag_op = j->lead.necessary ? -1 : zkc_multi_count(m);
	if (!j->lead.necessary) zkc_multi_create(m, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0);
	zkc_multi_delete(m, cj_path(j, p, "/leader/sharding/necessary"), -1);
	if (!cm->fresh && !o->no_processing) zkc_multi_delete(m, cj_path(j, p, "/leader/sharding/processing"), -1);
	free(owner);
	if (zkc_multi_commit(j->c->z, m, sharded, cm) != ZOK) {
		commit_free(cm);
		shard_done(j);
	}
}

static void shard_nodes_made(void *arg, const struct zkc_res *r)
{
	struct shardop *o = arg;
	if (r->rc != ZOK && r->rc != ZNODEEXISTS) {
		if (!o->failed) log_warn("job %s: sharding: creating %s: %s", o->j->name, r->path, zerror(r->rc));
		o->failed = 1;
	}
	if (--o->left) return;
	struct cjob *j = o->j;
	if (!o->failed && cj_live(j, o->session) && j->shard.session == o->session) {
		j->shard.made = (uint32_t)cj_conf(j)->sharding_total_count;
		j->shard.remake = 0;
	}
	if (!o->failed && cj_live(j, o->session)) shard_commit(o);
	else shard_done(j);
	shardop_free(o);
}

/* the item nodes are there: made in this session, or read with the assignment (a node read
 * has an owner string, "" when empty; a missing one none) */
static int nodes_known(const struct cjob *j, uint64_t session, uint32_t total)
{
	if (j->shard.remake) return 0;
	if (j->shard.session == session && j->shard.made >= total) return 1;
	if (!j->as.have || j->as.total < total || !j->as.owner) return 0;
	for (uint32_t i = 0; i < total; i++)
		if (!j->as.owner[i]) return 0;
	return 1;
}

/* instances listed: create processing and any missing sharding/{i}/instance, then commit */
static void shard_make_nodes(struct shardop *o)
{
	struct cjob *j = o->j;
	if (o->nids == 0) {
		log_warn("job %s: no enabled instance to shard over", j->name);
		shardop_free(o);
		shard_done(j);
		return;
	}
	if (j->shard.fresh && j->shard.session == o->session) {
		shard_commit(o);    /* the commit makes the item nodes (cj_shard_fresh) */
		shardop_free(o);
		return;
	}
	uint32_t total = (uint32_t)cj_conf(j)->sharding_total_count;
	if (nodes_known(j, o->session, total)) {
		/* Nothing to make: the commit alone, without ElasticJob's processing node (a round trip
		 * of every sharding after a restart; ElasticJob's followers wait while the flag is up,
		 * and the commit writes everything and takes the flag down at once, as a fresh one) */
		o->no_processing = 1;
		shard_commit(o);
		shardop_free(o);
		return;
	}
	char p[CJ_PATH_MAX];
	o->left = 1;
	if (zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/processing"), "", 0, ZOO_EPHEMERAL, shard_nodes_made, o) == ZOK)
		o->left++;
	for (uint32_t i = 0; i < total; i++) {
		if (zkc_create(j->c->z, cj_path(j, p, "/sharding/%" PRIu32, i), "", 0, 0, shard_nodes_made, o) == ZOK) o->left++;
		if (zkc_create(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), "", 0, 0, shard_nodes_made, o) == ZOK)
			o->left++;
	}
	struct zkc_res go = { .rc = ZOK, .path = "" };
	shard_nodes_made(o, &go);
}

/* servers/{ip} of each instance: DISABLED ones are left out of the sharding, and DRAINING ones
 * (ejobctl drain: its ejob supervisor leaves by itself; an ElasticJob instance there stays online,
 * and ElasticJob's leader leaves it out too, as any server not ENABLED) */
static void shard_server(void *arg, const struct zkc_res *r)
{
	struct shardop *o = arg;
	const char *ip = strrchr(r->path, '/');
	ip = ip ? ip + 1 : "";
	if (r->rc == ZOK && *ip && o->srv && (o->srv[o->nsrv].ip = strdup(ip))) {
		o->srv[o->nsrv].version = r->stat.version;
		o->srv[o->nsrv++].disabled = r->data && (!strcmp(r->data, "DISABLED") || !strcmp(r->data, "DRAINING"));
	}
	if (--o->sleft) return;
	struct cjob *j = o->j;
	/* DISABLED servers' instances are left out (read now or remembered) */
	for (int s = 0; s < o->nsrv; s++) {
		if (!o->srv[s].disabled) continue;
		for (int k = 0; k < o->nids; k++) {
			const char *sep = strstr(o->ids[k], "@-@");
			size_t n = sep ? (size_t)(sep - o->ids[k]) : strlen(o->ids[k]);
			if (strlen(o->srv[s].ip) == n && !strncmp(o->ids[k], o->srv[s].ip, n)) o->ids[k][0] = '\0';   /* mark */
		}
	}
	if (cj_live(j, o->session)) servers_keep(j, o);
	int k = 0;
	for (int i = 0; i < o->nids; i++) {
		if (o->ids[i][0]) o->ids[k++] = o->ids[i];
		else free(o->ids[i]);
	}
	o->nids = k;
	if (!cj_live(j, o->session)) {
		shardop_free(o);
		shard_done(j);
		return;
	}
	shard_make_nodes(o);
}

static void shard_instances(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK) {
		shard_done(j);
		return;
	}
	struct shardop *o = calloc(1, sizeof *o);
	if (!o || !(o->ids = calloc((size_t)r->nchildren + 1, sizeof *o->ids)) ||
	    !(o->srv = calloc((size_t)r->nchildren + 1, sizeof *o->srv))) {
		if (o) free(o->ids);
		free(o);
		shard_done(j);
		return;
	}
	o->j = j;
	o->session = r->session;
	/* the instances' watch events processed from here on are changes the listing missed */
	o->gen = j->lead.inst_gen;
	for (int i = 0; i < r->nchildren; i++) {
		if (cj_id_ok(r->children[i])) {
			o->ids[o->nids++] = strdup(r->children[i]);
			continue;
		}
		char show[64];
		log_warn("job %s: /%s/%s/instances/%s is not an instance id ({ip}@-@{pid}); left out of the sharding", j->name,
		         j->c->ns, j->name,
		         cj_show(r->children[i], (int)strlen(r->children[i]), show, sizeof show));
	}
	o->sleft = 1;
	shard_session(j, r->session);
	char p[CJ_PATH_MAX];
	for (int i = 0; i < o->nids; i++) {
		const char *sep = strstr(o->ids[i], "@-@");
		int n = sep ? (int)(sep - o->ids[i]) : (int)strlen(o->ids[i]);
		int dup = 0;            /* two instances on one server: read (or taken) once */
		for (int k = 0; k < i && !dup; k++)
			dup = !strncmp(o->ids[k], o->ids[i], (size_t)n) && !strncmp(o->ids[k] + n, "@-@", 3);
		if (dup) continue;
		const struct cj_server_seen *seen = server_known(j, o->ids[i], (size_t)n);
		if (seen) {
			if ((o->srv[o->nsrv].ip = strdup(seen->ip))) {
				o->srv[o->nsrv].version = seen->version;
				o->srv[o->nsrv++].disabled = seen->disabled;
			}
			continue;
		}
		if (zkc_get(j->c->z, cj_path(j, p, "/servers/%.*s", n, o->ids[i]), NULL, NULL, shard_server, o) == ZOK)
			o->sleft++;
	}
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	shard_server(o, &go);
}

static void shard_start(struct cjob *j, int eager)
{
	char p[CJ_PATH_MAX];
	j->shard.busy = 1;
	if (eager) {
		j->shard.eager_run = 1;
		j->c->eager_inflight++;
	}
	if (zkc_children(j->c->z, cj_path(j, p, "/instances"), NULL, NULL, shard_instances, j) != ZOK) shard_done(j);
}

void cj_shard_now(struct cjob *j)
{
	if (j->shard.busy) return;
	shard_start(j, 0);
}

/* ---- eager sharding ------------------------------------------------------------------------------ *
 *
 * ElasticJob shards at the fire: the first fire after a start waits for the leader to shard every
 * job (10,000 jobs: the last item 22-35 s late). Nothing in its rules asks for that: the leader
 * may shard as soon as the flag is up, while nothing of the job runs. So the leader does, once the
 * job's instances and flag have been still for CJ_EAGER_QUIET_MS (20 supervisors starting within a
 * second make one reshard of each job, not 20; at most CJ_EAGER_CAP_MS after the first change),
 * not while a fire of the job is in progress here nor within CJ_EAGER_AFTER_FIRE_MS of one (an
 * instance still choosing the items of a fire whose time came before the flag runs the
 * assignment in force then: design.md), and with CJ_EAGER_MAX in flight at once so that 10,000 of
 * them do not hold the loop or fill ZooKeeper's window. A fire that comes first shards as before. */

void cj_shard_eager(struct cjob *j)
{
	if (j->gone || !j->lead.leader || !j->lead.necessary) return;
	uint64_t now = wait_now_ns();
	if (!j->shard.eager) {
		j->shard.eager = 1;
		j->shard.eager_first_ns = now;
		j->c->eager_want++;
	}
	uint64_t due = now + CJ_EAGER_QUIET_MS * 1000000ull, cap = j->shard.eager_first_ns + CJ_EAGER_CAP_MS * 1000000ull;
	j->shard.eager_due_ns = due < cap ? due : cap;
}

void cj_shard_eager_off(struct cjob *j)
{
	if (!j->shard.eager) return;
	j->shard.eager = 0;
	if (j->c->eager_want) j->c->eager_want--;
}

/* -1: no longer wanted; 0: not yet; 1: now */
static int eager_state(const struct cjob *j, uint64_t now)
{
	const conf_job_t *cj = cj_conf(j);
	if (j->gone || !j->lead.leader || !j->lead.necessary || j->ops.shut || j->ops.server_off || cj->disabled) return -1;
	if (now < j->shard.eager_due_ns || j->shard.busy || j->fx.fire || j->fx.side) return 0;
	if (j->fx.born_ns && now - j->fx.born_ns < CJ_EAGER_AFTER_FIRE_MS * 1000000ull) return 0;
	if (!cj_registered(j) || !cj_assign_settled(j) || !cx_running_settled(j)) return 0;
	return 1;
}

/* Start the eager shardings that are due, looking at no more than `look` jobs (the tick looks at
 * all, each end at a few: its place goes to the next one due). */
void cj_shard_pump(coord_t *c, uint64_t now_ns, size_t look)
{
	/* not while registrations are in flight: ZooKeeper is busy with theirs (cj_arm_pump) */
	if (!c->eager_want || !c->connected || c->stopping || c->eager_pumping || !cj_reg_settled(c)) return;
	c->eager_pumping = 1;
	/* the first job that waits (not due yet) is where the next look starts: the jobs of a start
	 * become due in order, and a cursor that ran past them would leave the places free until the
	 * tick (200 every 100 ms: 800 shardings/s where the burst at a fire does 3,000) */
	size_t wait = SIZE_MAX;
	for (size_t k = 0; k < look && k < c->n && c->eager_want && c->eager_inflight < CJ_EAGER_MAX; k++) {
		if (c->eager_cursor >= c->n) c->eager_cursor = 0;
		size_t at = c->eager_cursor++;
		struct cjob *j = c->jobs[at];
		if (!j->shard.eager) continue;
		int st = eager_state(j, now_ns);
		if (st < 0) cj_shard_eager_off(j);
		if (!st && wait == SIZE_MAX) wait = at;
		if (st <= 0) continue;
		cj_shard_eager_off(j);
		log_debug("job %s: sharding now, not at the next fire (the flag is up, nothing of the job runs here)", j->name);
		shard_start(j, 1);
	}
	if (wait != SIZE_MAX) c->eager_cursor = wait;
	c->eager_pumping = 0;
}
