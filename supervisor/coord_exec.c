/* supervisor/coord_exec.c: a fire in ZooKeeper mode: wait for the assignment, write the running
 * nodes of the local items in one multi, run them with the epoch, and write their completed nodes
 * in batched multis. */
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

/* ---- fires ----------------------------------------------------------------------------------------- */

static void zk_name(const fire_t *t, char *buf, size_t len)
{
	snprintf(buf, len, "job %s: fire %" PRIu64, t->job, t->fire_ms);
}

/* the ZooKeeper requests sent while it ran (with one job firing: this fire's round trips) */
static void zk_tail(const fire_t *t, int all_ok, char *buf, size_t len)
{
	const struct cfire *f = t->owner;
	uint64_t rq = zkc_requests(f->j->c->z) - f->requests0;
	if (all_ok) snprintf(buf, len, " (epoch 0x%" PRIx64 ", %" PRIu64 " zk requests)", t->epoch, rq);
	else snprintf(buf, len, ", %" PRIu64 " zk requests", rq);
}

static void zk_item_ended(fire_t *t, uint32_t item, const struct disp_outcome *o);

static const struct fire_ops zk_ops = {
	.item_ended = zk_item_ended, .name = zk_name, .tail = zk_tail, .here = " here", .fail_level = LL_WARN,
};

void cx_free(struct cfire *f)
{
	fire_free(f->fire);
	free(f->pending);
	free(f);
}

/* A fire of a job of `total` items, started now, with no items yet. NULL when out of memory. */
static struct cfire *cx_new(struct cjob *j, uint32_t total, uint64_t fire_ms)
{
	struct cfire *f = calloc(1, sizeof *f);
	if (!f) return NULL;
	f->pending = calloc(total ? total : 1, sizeof *f->pending);
	f->fire = fire_new(j->c->fires, &zk_ops, f, j->name, total, fire_ms);
	if (!f->pending || !f->fire) {
		free(f->pending);
		fire_free(f->fire);
		free(f);
		return NULL;
	}
	f->j = j;
	f->requests0 = zkc_requests(j->c->z);
	f->session = zkc_session(j->c->z);
	return f;
}

struct cfire *cx_side_run(struct cjob *j, uint32_t item)
{
	/* its own fire id: when it started, in ms, never a whole second (that is a cron fire's) and
	 * never one an earlier side run of the job had (two can start in the same ms) */
	uint64_t ms = (uint64_t)(wait_realtime_ns() / 1000000u);
	if (ms <= j->side_ms) ms = j->side_ms + 1;
	if (ms % 1000 == 0) ms++;
	struct cfire *f = cx_new(j, j->total, ms);
	if (!f) return NULL;
	j->side_ms = ms;
	f->failover = 1;
	f->fire->items[0] = item;
	f->fire->n = 1;
	f->next = j->ffires;
	j->ffires = f;
	return f;
}

void cx_end(struct cfire *f)
{
	struct cjob *j = f->j;
	coord_t *c = j->c;
	sched_job_t *h = f->handle;
	if (f->fire->n) fire_summary(f->fire);
	if (f->failover) {
		for (struct cfire **pp = &j->ffires; *pp; pp = &(*pp)->next)
			if (*pp == f) {
				*pp = f->next;
				break;
			}
	} else {
		j->fire = NULL;
	}
	int fo = f->failover, missed = f->missed;
	cx_free(f);
	if (!fo && !c->closing) c->h.fire_ended(c->arg, h, missed);
	if (j->gone && !c->closing) cj_retired(j);
}

void cx_submit(struct cfire *f)
{
	struct cjob *j = f->j;
	uint32_t n = fire_submit(f->fire, cj_conf(j), j->epoch);
	f->state = F_RUN;
	if (!n) {
		cx_end(f);
		return;
	}
	log_info("job %s: fire %" PRIu64 ": %" PRIu32 " item%s here, epoch 0x%" PRIx64, j->name, f->fire->fire_ms, n,
	         n == 1 ? "" : "s", j->epoch);
	fires_kick(j->c->fires);    /* last: outcomes may come back inside */
}

static void running_written(void *arg, const struct zkc_res *r);

/* one multi: the running node of each item (and away with our old completed nodes) */
static void write_running(struct cfire *f)
{
	struct cjob *j = f->j;
	if (j->gone) {
		f->fire->n = 0;
		cx_end(f);
		return;
	}
	const conf_job_t *cj = cj_conf(j);
	f->monitor = cj->monitor_execution;
	if (!f->monitor) {
		cx_submit(f);
		return;
	}
	char p[PATH_MAX_];
	const char *id = j->c->id;
	f->session = zkc_session(j->c->z);
	zkc_multi_t *m = zkc_multi_new();
	for (uint32_t i = 0; i < f->fire->n; i++) {
		uint32_t it = f->fire->items[i];
		zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", it), id, (int)strlen(id),
		                 cj->failover ? 0 : ZOO_EPHEMERAL);
		if (j->completed && it < j->total && j->completed[it])
			zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/completed", it), -1);
	}
	if (zkc_multi_commit(j->c->z, m, running_written, f) != ZOK) {
		log_warn("job %s: fire %" PRIu64 ": cannot write its running nodes (not connected); the fire is missed", j->name,
		         f->fire->fire_ms);
		f->fire->n = 0;
		f->missed = 1;
		cx_end(f);
	}
}

static void running_written(void *arg, const struct zkc_res *r)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	if (r->rc == ZOK) {
		for (uint32_t i = 0; i < f->fire->n; i++)
			if (f->fire->items[i] < j->total && j->completed) j->completed[f->fire->items[i]] = 0;
		cx_submit(f);
		return;
	}
	if (!cj_live(j, r->session) || r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT) {
		/* The multi may or may not have been applied: if it was, its running nodes would say
		 * "running" for items that never ran. Clear ours when the connection is back. */
		if (r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT)
			for (uint32_t i = 0; i < f->fire->n; i++)
				if (j->stale && f->fire->items[i] < j->total) j->stale[f->fire->items[i]] = 1;
		log_warn("job %s: fire %" PRIu64 ": its running nodes could not be written (%s); the fire is missed%s", j->name,
		         f->fire->fire_ms, zerror(r->rc), f->failover ? "" : cj_conf(j)->misfire ? ": its catch-up runs once the job can run"
		         : " (misfire: false)");
		f->fire->n = 0;
		f->missed = 1;
		cx_end(f);
		return;
	}
	/* the first op that failed names the item: still running somewhere (misfire), or a completed
	 * node that is not there; drop that and try again */
	int k = 0;
	while (k < r->nops && r->op_rc[k] == ZOK) k++;
	unsigned item = 0;
	const char *q = NULL;
	/* map op k back to its item: ops are (running[, completed]) per item in order */
	int op = 0;
	for (uint32_t i = 0; i < f->fire->n && !q; i++) {
		uint32_t it = f->fire->items[i];
		if (op == k) {
			q = "running";
			item = it;
			break;
		}
		op++;
		if (j->completed && it < j->total && j->completed[it]) {
			if (op == k) {
				q = "completed";
				item = it;
				break;
			}
			op++;
		}
	}
	if (!q) {
		log_warn("job %s: fire %" PRIu64 ": writing running nodes: %s", j->name, f->fire->fire_ms, zerror(r->rc));
		f->fire->n = 0;
		cx_end(f);
		return;
	}
	if (!strcmp(q, "completed")) {
		j->completed[item] = 0;
	} else {
		cx_misfire(j, item);
		uint32_t w = 0;
		for (uint32_t i = 0; i < f->fire->n; i++)
			if (f->fire->items[i] != item) f->fire->items[w++] = f->fire->items[i];
		f->fire->n = w;
	}
	if (!f->fire->n) {
		cx_end(f);
		return;
	}
	write_running(f);
}

void cx_continue(struct cjob *j)
{
	struct cfire *f = j->fire;
	if (!f || f->state != F_WAIT) return;
	if (j->stale_pending) return;      /* clearing running nodes left by a lost connection */
	if (j->gone) {
		f->fire->n = 0;
		cx_end(f);
		return;
	}
	if (!j->reg_session || !cj_live(j, j->reg_session)) return;   /* registering: its assignment load calls again */
	if (j->states_loading || j->loading) return;     /* their answers call again */
	if (j->necessary || !j->have || j->total != (uint32_t)cj_conf(j)->sharding_total_count) {
		log_debug("job %s: fire %" PRIu64 " waits for sharding (necessary %d, assignment %s, %s)", j->name, f->fire->fire_ms,
		          j->necessary, j->have ? "loaded" : "none", j->leader ? "sharding it now" : "the leader shards");
		if (j->leader) cj_shard_now(j);
		return;             /* the sharding node's watch (or necessary's) calls again */
	}
	const char *me = j->c->id;
	uint32_t owned = 0;
	f->fire->n = 0;
	for (uint32_t i = 0; i < j->total; i++) {
		if (!j->owner[i] || strcmp(j->owner[i], me)) continue;
		owned++;
		if (!j->disabled[i]) f->fire->items[f->fire->n++] = i;
	}
	if (!f->fire->n) {
		/* nothing here: the fire is over at once (the scheduler counts it ended) */
		if (owned)
			log_info("job %s: fire %" PRIu64 ": nothing runs here: all %" PRIu32 " item%s of this instance %s disabled "
			         "(sharding/{i}/disabled)", j->name, f->fire->fire_ms, owned, owned == 1 ? "" : "s", owned == 1 ? "is" : "are");
		else {
			char cause[64];
			snprintf(cause, sizeof cause, "no items %" PRIx64, j->epoch);
			log_cause(&j->idle_cause, LL_INFO, cause, "job %s: no item of the assignment of epoch 0x%" PRIx64
			          " is this instance's: its fires run nothing here", j->name, j->epoch);
		}
		cx_end(f);
		return;
	}
	log_cause_reset(&j->idle_cause);
	f->state = F_START;
	write_running(f);
}

/* A fire that does not run here says why, every time: at WARN when the cause is new, at INFO
 * while it stays the same (so a refusal that lasts is one WARN, then one short line per fire). */
static void fire_refused(struct cjob *j, const struct sched_fire_info *fi, const char *cause, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fire_refused(struct cjob *j, const struct sched_fire_info *fi, const char *cause, const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	int64_t ms = fi->fire_s * 1000;
	if (!log_cause(&j->fire_cause, LL_WARN, cause, "job %s: %sfire %" PRId64 " does not run here: %s", j->name,
	               fi->catch_up ? "catch-up " : "", ms, why))
		log_info("job %s: %sfire %" PRId64 " does not run here: %s", j->name, fi->catch_up ? "catch-up " : "", ms, why);
}

int coord_fire(void *arg, const struct sched_fire_info *fi)
{
	coord_t *c = arg;
	struct cjob *j = cj_find(c, fi->job);
	if (c->stopping || !j) return -1;
	const conf_job_t *cj = cj_conf(j);
	if (j->shut) {
		fire_refused(j, fi, "shut", "the job is shut down on this instance (its instances/%s node was deleted) "
		             "until the supervisor restarts", c->id);
		return 1;
	}
	if (!j->clock_known && cj->max_time_diff_seconds >= 0 && zkc_state(c->z) == ZKC_CONNECTED) {
		/* not a fire on a clock nobody looked at: the first comparison is one round trip, sent
		 * as soon as the session is there, so this only happens when ZooKeeper is slow */
		fire_refused(j, fi, "clock unknown", "this machine's clock has not been compared with ZooKeeper's yet "
		             "(maxTimeDiffSeconds: %d); %s", cj->max_time_diff_seconds,
		             cj->misfire ? "it runs once it has been (misfire: true)" : "it is dropped (misfire: false)");
		return -1;
	}
	if (j->clock_bad && cj->max_time_diff_seconds >= 0) {
		int64_t off = j->clock_off_ms;
		fire_refused(j, fi, "clock", "this machine's clock is %.1fs %s ZooKeeper's, over maxTimeDiffSeconds (%d)",
		             (double)(off < 0 ? -off : off) / 1000.0, off < 0 ? "behind" : "ahead of", cj->max_time_diff_seconds);
		return 1;
	}
	/* a fire while the job registers (the first one after a start, say) waits for it, bounded
	 * like any wait (coord.c wait_bound) */
	if ((!cj_live(j, j->reg_session) || !j->reg_session) && !(j->registering && zkc_state(c->z) == ZKC_CONNECTED)) {
		int conn = zkc_state(c->z) == ZKC_CONNECTED;
		fire_refused(j, fi, conn ? "not registered" : "not connected",
		             "%s; %s", conn ? "the job is not registered yet" : "not connected to ZooKeeper",
		             cj->misfire ? "it runs once the job can run again (misfire: true)" : "it is dropped (misfire: false)");
		return -1;
	}
	if (cj->disabled || j->server_off) {
		fire_refused(j, fi, "disabled", "%s", cj->disabled ? "the job is disabled (disabled: true)"
		             : "this server is DISABLED (servers/{ip})");
		return 1;
	}
	log_cause_reset(&j->fire_cause);
	struct cfire *f = cx_new(j, (uint32_t)cj->sharding_total_count, (uint64_t)fi->fire_s * 1000u);
	if (!f) return -1;
	f->handle = fi->handle;
	f->state = F_WAIT;
	j->fire = f;
	cx_continue(j);
	return 0;
}

/* ---- completions: batched into multis ------------------------------------------------------------- */

static void completed_written(void *arg, const struct zkc_res *r);

#define COMPLETION_HOLD_NS 100000000ull    /* 100 ms */

static void flush_fire(struct cfire *f)
{
	struct cjob *j = f->j;
	if (f->flushing || !f->npending) return;
	/* Not connected: the running nodes must still go, or the items stay "running" for ever once
	 * the same session is back. Wait: a reconnect flushes (on_state, coord.c); an expired session
	 * took its ephemeral running nodes with it (cx_session_lost ends these fires). A job
	 * removed from the file still writes the completions of its last fires. */
	int same = f->session == zkc_session(j->c->z);
	if (f->monitor && same && zkc_state(j->c->z) != ZKC_CONNECTED) return;
	if (!f->monitor || !same) {
		f->flushed += f->npending;
		f->npending = 0;
		if (f->flushed == f->fire->n) cx_end(f);
		return;
	}
	/* One multi for a fire whose items end close together: wait for the rest of the fire, up to
	 * COMPLETION_HOLD_NS after the oldest completion (coord_tick comes back for it). */
	if (f->fire->ended < f->fire->n && wait_now_ns() - f->pending_since_ns < COMPLETION_HOLD_NS) return;
	char p[PATH_MAX_];
	const char *id = j->c->id;
	zkc_multi_t *m = zkc_multi_new();
	for (uint32_t i = 0; i < f->npending; i++) {
		uint32_t it = f->pending[i];
		zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", it), -1);
		if (f->failover && !f->misfire_run) {
			zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/failover", it), -1);
			zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", it), -1);
		}
		/* completed says it ran to its end; a failed or stopped item is only no longer running */
		if (f->fire->done[it] == FIRE_OK)
			zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/completed", it), id, (int)strlen(id), 0);
		/* stopped for a shutdown here: queued for failover (the leader names a taker) */
		if (f->fire->done[it] == FIRE_HANDED_OVER) zkc_multi_create(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, it), "", 0, 0);
	}
	f->flushing = (int)f->npending;
	if (zkc_multi_commit(j->c->z, m, completed_written, f) != ZOK) {
		f->flushing = 0;
		f->flushed += f->npending;
		f->npending = 0;
		if (f->flushed == f->fire->n) cx_end(f);
	}
}

static void completed_written(void *arg, const struct zkc_res *r)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	uint32_t n = (uint32_t)f->flushing;
	if (r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT) {
		/* not written, not refused: try again when the connection is back */
		f->flushing = 0;
		return;
	}
	if (r->rc != ZOK && r->session == zkc_session(j->c->z) && zkc_state(j->c->z) == ZKC_CONNECTED) {
		/* someone else touched those nodes: write them one by one, each as far as it goes */
		log_info("job %s: fire %" PRIu64 ": completed nodes in one multi: %s; writing them one by one", j->name,
		         f->fire->fire_ms, zerror(r->rc));
		char p[PATH_MAX_];
		const char *id = j->c->id;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t it = f->pending[i];
			zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", it), -1, NULL, NULL);
			if (f->failover && !f->misfire_run) {
				zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failover", it), -1, NULL, NULL);
				zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", it), -1, NULL, NULL);
			}
			if (f->fire->done[it] == FIRE_HANDED_OVER)
				zkc_create(j->c->z, cj_path(j, p, "/leader/failover/items/%" PRIu32, it), "", 0, 0, NULL, NULL);
			if (f->fire->done[it] != FIRE_OK) continue;
			zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/completed", it), -1, NULL, NULL);
			zkc_create(j->c->z, p, id, (int)strlen(id), 0, NULL, NULL);
			if (j->completed && it < j->total) j->completed[it] = 1;
		}
	} else if (r->rc == ZOK && j->completed)
		for (uint32_t i = 0; i < n; i++)
			if (f->pending[i] < j->total && f->fire->done[f->pending[i]] == FIRE_OK) j->completed[f->pending[i]] = 1;
	memmove(f->pending, f->pending + n, (f->npending - n) * sizeof *f->pending);
	f->npending -= n;
	f->flushed += n;
	f->flushing = 0;
	if (f->flushed == f->fire->n) {
		cx_end(f);
		return;
	}
	flush_fire(f);
}

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
	char p[PATH_MAX_];
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
	char p[PATH_MAX_];
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
		char p[PATH_MAX_];
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
	char p[PATH_MAX_];
	const conf_job_t *cj = cj_conf(j);
	if (cj->failover) {
		uint32_t n = (uint32_t)cj->sharding_total_count;
		if (j->total > n) n = j->total;
		for (uint32_t i = 0; i < n; i++)
			if (zkc_get(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), NULL, NULL, orphan_read, j) == ZOK)
				j->stale_pending++;
	}
	/* misfire flags of our items: their watches went with the old session */
	for (uint32_t i = 0; i < j->total; i++)
		if (cj_owned(j, i)) zkc_exists(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/misfire", i), NULL, NULL, misfire_flag, j);
}

/* The session ended: its ephemeral running nodes are gone with it; fires waiting to write their
 * completions have nothing left to write. */
void cx_session_lost(struct cjob *j)
{
	for (struct cfire *f = j->ffires, *n; f; f = n) {
		n = f->next;
		f->monitor = 0;
		flush_fire(f);
	}
	if (j->fire && j->fire->state == F_RUN) {
		j->fire->monitor = 0;
		flush_fire(j->fire);
	}
}

void cx_flush_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)revents;
	coord_t *c = w->data;
	ev_idle_stop(loop, w);
	for (size_t i = 0; i < c->n; i++) {
		if (c->jobs[i]->fire && c->jobs[i]->fire->state == F_RUN) flush_fire(c->jobs[i]->fire);
		for (struct cfire *f = c->jobs[i]->ffires, *n; f; f = n) {
			n = f->next;        /* flush_fire may end (free) f */
			flush_fire(f);
		}
	}
}

/* An item's final outcome (the tracker's item_ended): its completion waits to be written. */
static void zk_item_ended(fire_t *t, uint32_t item, const struct disp_outcome *o)
{
	struct cfire *f = t->owner;
	/* stopped because an operator shut the job down here: it did not run to its end, and the
	 * leader waits for us to hand it over (coord_failover.c) */
	if (f->j->shut && o->status == FRAME_ST_CANCELLED && cj_conf(f->j)->failover) t->done[item] = FIRE_HANDED_OVER;
	if (!f->npending) f->pending_since_ns = wait_now_ns();
	f->pending[f->npending++] = item;
	/* completions that end close together go in one multi: write when the loop is idle */
	ev_idle_start(f->j->c->loop, &f->j->c->flush_w);
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
	char p[PATH_MAX_], q[PATH_MAX_];
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
	char p[PATH_MAX_];
	if (zkc_exists(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), misfire_event, j, misfire_known, j) == ZOK)
		j->mis_wait[i] = 1;
}

void cx_misfire(struct cjob *j, uint32_t item)
{
	char p[PATH_MAX_];
	log_info("job %s: item %" PRIu32 " is still running from an earlier fire: misfire (sharding/%" PRIu32
	         "/misfire)%s", j->name, item, item, cj_conf(j)->misfire ? "; it runs again here when that run ends" : "");
	zkc_create(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/misfire", item), "", 0, 0, NULL, NULL);
	misfire_watch(j, item);
}
