/* supervisor/coord/coord_running.c: running nodes that outlive their run: ours left unanswered by a
 * lost connection (stale), ours left from a lost session (rejoining: queued for failover), and
 * the misfire flag of an item a fire found still running from an earlier one. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_int.h"

/* Running nodes of ours whose creation went unanswered: delete each that names this instance. */
static void stale_done(struct cjob *j)
{
	if (j->run.stale_pending > 0 && --j->run.stale_pending == 0) cx_ready_changed(j);
}

static void stale_deleted(void *arg, const struct zkc_res *r)
{
	(void)r;
	stale_done(arg);
}

static void stale_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	/* ours: nobody else writes our id, and no fire of ours runs meanwhile (they wait for this) */
	if (cj_live(j, r->session) && r->rc == ZOK && r->data && !strcmp(r->data, j->c->id) &&
	    zkc_delete(j->c->z, r->path, r->stat.version, stale_deleted, j) == ZOK)
		return;
	stale_done(j);
}

void cx_mark_stale(struct cjob *j, uint32_t item)
{
	if (item >= j->run.nstale) {
		uint32_t n = item + 1 > 2 * j->run.nstale ? item + 1 : 2 * j->run.nstale;
		uint8_t *v = realloc(j->run.stale, n);
		if (!v) return;
		memset(v + j->run.nstale, 0, n - j->run.nstale);
		j->run.stale = v;
		j->run.nstale = n;
	}
	j->run.stale[item] = 1;
}

void cx_stale_forget(struct cjob *j)
{
	j->run.stale_pending = 0;
}

void cx_clear_stale(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	for (uint32_t i = 0; i < j->run.nstale; i++) {
		if (!j->run.stale[i]) continue;
		j->run.stale[i] = 0;
		/* an item running here now (a later fire) keeps its node */
		const fire_t *t = j->fx.fire ? j->fx.fire->fire : NULL;
		if (j->fx.fire && j->fx.fire->state == F_RUN && i < fire_total(t) && !fire_end_of(t, i)) {
			int mine = 0;
			for (uint32_t k = 0; k < fire_n(t); k++) mine |= fire_item(t, k) == i;
			if (mine) continue;
		}
		if (zkc_get(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), NULL, NULL, stale_read, j) == ZOK)
			j->run.stale_pending++;
	}
}

/* ---- rejoining ---------------------------------------------------------------------------------------
 *
 * A session was lost and a new one began. Every item that ran here then was stopped before the
 * old session could expire (the lease); with failover on, their running nodes are persistent and
 * still name us. The leader hands such items out when it sees the old instance node go, but if
 * this process registered again under the same id before the leader listed the instances (or was
 * the leader itself), nobody did: the item would stay "running" for good, and every later fire
 * would misfire on it. So the instance hands them over itself, before its fires of the new session
 * write anything: each running node that still names us is deleted and the item queued under
 * leader/failover/items in one multi; the leader names a taker (coord_failover.c). */

struct orphan {
	struct cjob *j;
	uint32_t item;
	int version;
};

static void orphan_queued(void *arg, const struct zkc_res *r)
{
	struct orphan *o = arg;
	struct cjob *j = o->j;
	char p[CJ_PATH_MAX];
	if (r->rc == ZOK)
		log_info("job %s: item %" PRIu32 " was running here when the last session was lost; stopped then, it is "
		         "queued for failover now", j->name, o->item);
	else if (cj_live(j, r->session) && r->nops > 1 && r->op_rc[1] == ZNODEEXISTS)
		/* already queued (the leader saw us go): only the stale running node is left to go */
		zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", o->item), o->version, NULL, NULL);
	free(o);
	stale_done(j);
}

static void orphan_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	struct orphan *o = NULL;
	if (cj_live(j, r->session) && r->rc == ZOK && r->data && !strcmp(r->data, j->c->id) &&
	    (o = calloc(1, sizeof *o))) {
		o->j = j;
		o->item = r->item;
		o->version = r->stat.version;
		char p[CJ_PATH_MAX];
		zkc_multi_t *m = zkc_multi_new();
		zkc_multi_delete(m, r->path, r->stat.version);
		zkc_multi_create(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, o->item), "", 0, 0);
		if (zkc_multi_commit(j->c->z, m, orphan_queued, o) == ZOK) return;
		free(o);
	}
	stale_done(j);
}

static void misfire_flag(void *arg, const struct zkc_res *r);

void cx_rejoined(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	const conf_job_t *cj = cj_conf(j);
	if (cj->failover) {
		uint32_t n = cj->sharding_total_count;
		if (j->as.total > n) n = j->as.total;
		for (uint32_t i = 0; i < n; i++)
			if (zkc_get_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), i, NULL, NULL, orphan_read, j) ==
			    ZOK)
				j->run.stale_pending++;
	}
	/* misfire flags of our items: their watches went with the old session */
	for (uint32_t i = 0; i < j->as.total; i++)
		if (cj_owned(j, i))
			zkc_exists_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/misfire", i), i, NULL, NULL, misfire_flag, j);
}

/* ---- misfire: an item still running from an earlier fire ------------------------------------------
 *
 * A fire that finds one of its items still running (on another instance after a reshard, or run
 * again after a failover) sets sharding/{i}/misfire, as ElasticJob does, and watches the running
 * node. When it goes, the item runs here once more (misfire: true) in one multi that creates its
 * running node and deletes the flag; with misfire: false the flag is only deleted. This costs
 * requests only when a misfire happens. */

static void misfire_watch(struct cjob *j, uint32_t i);

void cx_misfire_found(struct cjob *j, uint32_t item)
{
	if (item < j->run.nw_misfire && j->run.w_misfire[item]) return;    /* waiting already */
	log_info("job %s: item %" PRIu32 " has a misfire flag (sharding/%" PRIu32 "/misfire): it runs again here when "
	         "its running node goes", j->name, item, item);
	misfire_watch(j, item);
}

static void misfire_flag(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (cj_live(j, r->session) && r->rc == ZOK) cx_misfire_found(j, r->item);
}

static void misfire_started(void *arg, const struct zkc_res *r)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	uint32_t i = fire_item(f->fire, 0);
	if (r->rc == ZOK) {
		log_info("job %s: item %" PRIu32 " runs again for its misfire", j->name, i);
		f->session = zkc_session(j->c->z);
		cx_step(f, FX_WRITTEN, NULL);
		return;
	}
	cx_step(f, FX_ABORT, NULL);
	/* running again somewhere: wait once more; the flag gone: someone else ran it */
	if (cj_live(j, r->session) && r->nops > 0 && r->op_rc[0] == ZNODEEXISTS) misfire_watch(j, i);
}

/* The job's catch-up here, if it runs item i (or has yet to choose its items): it stands for
 * every fire missed so far, the one the flag was set for too. */
const struct cfire *cx_catchup_runs(const struct cjob *j, uint32_t i)
{
	const struct cfire *f = j->fx.fire;
	if (!f || f->failover || fire_source(f->fire) != EVS_MISFIRE) return NULL;
	if (f->state == F_WAIT) return f;
	for (uint32_t k = 0; k < fire_n(f->fire); k++)
		if (fire_item(f->fire, k) == i) return f;
	return NULL;
}

static void misfire_act(struct cjob *j, uint32_t i)
{
	char p[CJ_PATH_MAX], q[CJ_PATH_MAX];
	if (i < j->run.nw_misfire) {
		zkc_keep_free(j->run.w_misfire[i]);     /* its wait is over */
		j->run.w_misfire[i] = NULL;
	}
	const conf_job_t *cj = cj_conf(j);
	cj_path(j, q, "/sharding/%" PRIu32 "/misfire", i);
	if (j->gone || j->ops.shut || j->ops.server_off || cj->disabled || !cj_owned(j, i) || (i < j->as.total && j->as.disabled[i])) {
		zkc_delete(j->c->z, q, -1, NULL, NULL);
		return;
	}
	if (!cj->misfire) {
		log_info("job %s: item %" PRIu32 ": its misfire is dropped (misfire: false)", j->name, i);
		zkc_delete(j->c->z, q, -1, NULL, NULL);
		return;
	}
	/* One catch-up for N missed fires: a catch-up of ours that runs the item stands for the fire
	 * the flag was set for too (an ElasticJob instance's trigger that misfired while it waited for
	 * the reshard flags the items it had; the reshard gave them to us, and we missed that fire
	 * too). Running the flag as well ran the item a third time where two were due. */
	const struct cfire *cu = cx_catchup_runs(j, i);
	if (cu) {
		log_info("job %s: item %" PRIu32 ": its misfire flag is for a fire the catch-up %" PRIu64 " stands for; no run again",
		         j->name, i, fire_id(cu->fire));
		zkc_delete(j->c->z, q, -1, NULL, NULL);
		return;
	}
	struct cfire *f = cx_side_run(j, i);
	if (!f) return;
	f->misfire_run = 1;
	fire_set_source(f->fire, EVS_MISFIRE);
	f->monitor = cj->monitor_execution;
	const char *id = j->c->id;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), id, (int)strlen(id),
	                 cj->failover ? 0 : ZOO_EPHEMERAL);
	zkc_multi_delete(m, q, -1);
	if (zkc_multi_commit(j->c->z, m, misfire_started, f) != ZOK) cx_step(f, FX_ABORT, NULL);
}

/* sharding/{i}/running of a misfired item, kept until it goes */
static void misfire_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	uint32_t i = r->item;
	if (!cj_live(j, r->session) || i >= j->run.nw_misfire || !j->run.w_misfire[i]) return;
	if (r->rc == ZNONODE) misfire_act(j, i);
}

static void misfire_watch(struct cjob *j, uint32_t i)
{
	zkc_keep_t **k = cj_keep_at(&j->run.w_misfire, &j->run.nw_misfire, i);
	if (!k || *k) return;
	char p[CJ_PATH_MAX];
	zkc_keep_arm(cj_keep(j, k, ZKC_KEEP_EXISTS, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), i, misfire_known));
}

void cx_misfire(struct cjob *j, uint32_t item)
{
	char p[CJ_PATH_MAX];
	j->c->misfires++;
	log_info("job %s: item %" PRIu32 " is still running from an earlier fire: misfire (sharding/%" PRIu32
	         "/misfire)%s", j->name, item, item, cj_conf(j)->misfire ? "; it runs again here when that run ends" : "");
	zkc_create(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/misfire", item), "", 0, 0, NULL, NULL);
	misfire_watch(j, item);
	struct event ev = { .type = EVT_MISFIRE, .item = item, .count = 1, .reason = "still_running" };
	cj_event(j, &ev);
}

void cx_running_session(struct cjob *j)
{
	j->run.stale_pending = 0;
	/* the misfire waits went with the old session: rejoining reads the flags again */
	cj_keeps_free(j->run.w_misfire, j->run.nw_misfire);
}

void cx_running_unwatch(struct cjob *j)
{
	cj_keeps_free(j->run.w_misfire, j->run.nw_misfire);
}

void cx_running_free(struct cjob *j)
{
	cx_running_unwatch(j);
	free(j->run.w_misfire);
	free(j->run.stale);
}
