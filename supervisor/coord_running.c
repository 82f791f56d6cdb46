/* supervisor/coord_running.c: running nodes that outlive their run: ours left unanswered by a
 * lost connection (stale), ours left from a lost session (rejoining: queued for failover), and
 * the misfire flag of an item a fire found still running from an earlier one. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/coord.h"
#include "supervisor/coord_int.h"
#include "supervisor/zkc.h"

/* Running nodes of ours whose creation went unanswered: delete each that names this instance. */
static void stale_done(struct cjob *j)
{
	if (j->stale_pending > 0 && --j->stale_pending == 0 && j->fire && j->fire->state == F_WAIT) cx_continue(j);
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

void cx_clear_stale(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	for (uint32_t i = 0; j->stale && i < j->total; i++) {
		if (!j->stale[i]) continue;
		j->stale[i] = 0;
		/* an item running here now (a later fire) keeps its node */
		const fire_t *t = j->fire ? j->fire->fire : NULL;
		if (j->fire && j->fire->state == F_RUN && i < t->total && !t->done[i]) {
			int mine = 0;
			for (uint32_t k = 0; k < t->n; k++) mine |= t->items[k] == i;
			if (mine) continue;
		}
		if (zkc_get(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), NULL, NULL, stale_read, j) == ZOK)
			j->stale_pending++;
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
	const char *q = strstr(r->path, "/sharding/");
	struct orphan *o = NULL;
	if (cj_live(j, r->session) && q && r->rc == ZOK && r->data && !strcmp(r->data, j->c->id) &&
	    (o = calloc(1, sizeof *o))) {
		o->j = j;
		o->item = (uint32_t)strtoul(q + 10, NULL, 10);
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
		if (j->total > n) n = j->total;
		for (uint32_t i = 0; i < n; i++)
			if (zkc_get(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), NULL, NULL, orphan_read, j) == ZOK)
				j->stale_pending++;
	}
	/* misfire flags of our items: their watches went with the old session */
	for (uint32_t i = 0; i < j->total; i++)
		if (cj_owned(j, i)) zkc_exists(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/misfire", i), NULL, NULL, misfire_flag, j);
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
	if (item < j->mis_wait_n && j->mis_wait[item]) return;
	log_info("job %s: item %" PRIu32 " has a misfire flag (sharding/%" PRIu32 "/misfire): it runs again here when "
	         "its running node goes", j->name, item, item);
	misfire_watch(j, item);
}

static void misfire_flag(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	const char *q = strstr(r->path, "/sharding/");
	if (cj_live(j, r->session) && q && r->rc == ZOK) cx_misfire_found(j, (uint32_t)strtoul(q + 10, NULL, 10));
}

static void misfire_started(void *arg, const struct zkc_res *r)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	uint32_t i = f->fire->items[0];
	if (r->rc == ZOK) {
		log_info("job %s: item %" PRIu32 " runs again for its misfire", j->name, i);
		cx_submit(f);
		return;
	}
	f->fire->n = 0;
	cx_end(f);
	/* running again somewhere: wait once more; the flag gone: someone else ran it */
	if (cj_live(j, r->session) && r->nops > 0 && r->op_rc[0] == ZNODEEXISTS) misfire_watch(j, i);
}

static void misfire_act(struct cjob *j, uint32_t i)
{
	char p[CJ_PATH_MAX], q[CJ_PATH_MAX];
	if (i < j->mis_wait_n) j->mis_wait[i] = 0;
	const conf_job_t *cj = cj_conf(j);
	cj_path(j, q, "/sharding/%" PRIu32 "/misfire", i);
	if (j->gone || j->shut || j->server_off || cj->disabled || !cj_owned(j, i) || (i < j->total && j->disabled[i])) {
		zkc_delete(j->c->z, q, -1, NULL, NULL);
		return;
	}
	if (!cj->misfire) {
		log_info("job %s: item %" PRIu32 ": its misfire is dropped (misfire: false)", j->name, i);
		zkc_delete(j->c->z, q, -1, NULL, NULL);
		return;
	}
	struct cfire *f = cx_side_run(j, i);
	if (!f) return;
	f->misfire_run = 1;
	f->monitor = cj->monitor_execution;
	f->state = F_START;
	const char *id = j->c->id;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), id, (int)strlen(id),
	                 cj->failover ? 0 : ZOO_EPHEMERAL);
	zkc_multi_delete(m, q, -1);
	if (zkc_multi_commit(j->c->z, m, misfire_started, f) != ZOK) {
		f->fire->n = 0;
		cx_end(f);
	}
}

static void misfire_event(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	const char *q = strstr(path, "/sharding/");
	uint32_t i = q ? (uint32_t)strtoul(q + 10, NULL, 10) : UINT32_MAX;
	if (i >= j->mis_wait_n || !j->mis_wait[i]) return;
	if (type == ZOO_DELETED_EVENT && zkc_state(j->c->z) == ZKC_CONNECTED) misfire_act(j, i);
	else if (zkc_state(j->c->z) == ZKC_CONNECTED) {
		j->mis_wait[i] = 0;
		misfire_watch(j, i);
	}
}

static void misfire_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	const char *q = strstr(r->path, "/sharding/");
	uint32_t i = q ? (uint32_t)strtoul(q + 10, NULL, 10) : UINT32_MAX;
	if (!cj_live(j, r->session) || i >= j->mis_wait_n || !j->mis_wait[i]) return;
	if (r->rc == ZNONODE) misfire_act(j, i);     /* already gone (its watch, on creation, is ignored) */
}

static void misfire_watch(struct cjob *j, uint32_t i)
{
	if (i >= j->mis_wait_n) {
		uint32_t n = i + 1 > 2 * j->mis_wait_n ? i + 1 : 2 * j->mis_wait_n;
		uint8_t *v = realloc(j->mis_wait, n);
		if (!v) return;
		memset(v + j->mis_wait_n, 0, n - j->mis_wait_n);
		j->mis_wait = v;
		j->mis_wait_n = n;
	}
	if (j->mis_wait[i]) return;
	char p[CJ_PATH_MAX];
	if (zkc_exists(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), misfire_event, j, misfire_known, j) == ZOK)
		j->mis_wait[i] = 1;
}

void cx_misfire(struct cjob *j, uint32_t item)
{
	char p[CJ_PATH_MAX];
	log_info("job %s: item %" PRIu32 " is still running from an earlier fire: misfire (sharding/%" PRIu32
	         "/misfire)%s", j->name, item, item, cj_conf(j)->misfire ? "; it runs again here when that run ends" : "");
	zkc_create(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/misfire", item), "", 0, 0, NULL, NULL);
	misfire_watch(j, item);
}
