/* supervisor/coord/coord_fire.c: a fire in ZooKeeper mode, and the side runs (failover takes, misfire
 * runs): wait for the assignment, write the running nodes of the local items in one multi, run
 * them with the epoch (a fire of the tracker, fire.h), and write their completed nodes in batched
 * multis (the completion multi). */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/frame.h"
#include "ipc/wait.h"
#include "supervisor/coord/coord_int.h"
#include "supervisor/run/listen.h"

/* ---- fires ----------------------------------------------------------------------------------------- */

static void zk_name(const fire_t *t, char *buf, size_t len)
{
	snprintf(buf, len, "job %s: fire %" PRIu64, fire_job(t), fire_id(t));
}

/* the ZooKeeper requests sent while it ran (with one job firing: this fire's round trips) */
static void zk_tail(const fire_t *t, int all_ok, char *buf, size_t len)
{
	const struct cfire *f = fire_owner(t);
	uint64_t rq = zkc_requests(f->j->c->z) - f->requests0;
	if (all_ok) snprintf(buf, len, " (epoch 0x%" PRIx64 ", %" PRIu64 " zk requests)", fire_epoch(t), rq);
	else snprintf(buf, len, ", %" PRIu64 " zk requests", rq);
}

static void zk_item_ended(fire_t *t, uint32_t item, const struct disp_outcome *o);

static const struct fire_ops zk_ops = {
	.item_ended = zk_item_ended, .name = zk_name, .tail = zk_tail, .here = " here", .fail_level = LL_WARN,
};

void cx_free(struct cfire *f)
{
	cx_flush_unqueue(f);
	cf_vet_detach(f);
	free(f->vetted);
	cx_bar_detach(f);
	listen_cancel(f->lr);
	cx_last_free(f);            /* before fire_free: it asks the fire its item count */
	cx_flow_detach(f);
	fire_free(f->fire);
	conf_release(f->hold);
	free(f->pending);
	free(f->unrun);
	free(f->crashed);
	free(f->gw);
	if (f->j && f->j->c->fires_live) f->j->c->fires_live--;
	free(f);
}

void cx_fires_free(struct cjob *j)
{
	if (j->fx.fire) cx_free(j->fx.fire);
	for (struct cfire *f = j->fx.side, *n; f; f = n) {
		n = f->next;
		cx_free(f);
	}
	j->fx.fire = j->fx.side = NULL;
}

/* A fire of a job of `total` items, started now, with no items yet. NULL when out of memory. */
static struct cfire *cx_new(struct cjob *j, uint32_t total, uint64_t fire_ms)
{
	struct cfire *f = calloc(1, sizeof *f);
	if (!f) return NULL;
	f->pending = calloc(total ? total : 1, sizeof *f->pending);
	f->unrun = calloc(total ? total : 1, sizeof *f->unrun);
	f->fire = fire_new(j->c->fires, &zk_ops, f, j->name, total, fire_ms);
	if (!f->pending || !f->unrun || !f->fire) {
		free(f->pending);
		free(f->unrun);
		fire_free(f->fire);
		free(f);
		return NULL;
	}
	f->j = j;
	j->c->fires_live++;
	j->c->fires_burst++;
	f->conf = cj_conf(j);
	f->hold = j->cfg.node ? conf_job_hold(j->cfg.node) : conf_hold(j->file);
	f->requests0 = zkc_requests(j->c->z);
	f->session = zkc_session(j->c->z);
	return f;
}

struct cfire *cx_side_run(struct cjob *j, uint32_t item)
{
	/* its own fire id: when it started, in ms, never a whole second (that is a cron fire's) and
	 * never one an earlier side run of the job had (two can start in the same ms) */
	uint64_t ms = (uint64_t)(wait_realtime_ns() / 1000000u);
	if (ms <= j->fx.side_ms) ms = j->fx.side_ms + 1;
	if (ms % 1000 == 0) ms++;
	struct cfire *f = cx_new(j, j->as.total, ms);
	if (!f) return NULL;
	j->fx.side_ms = ms;
	f->failover = 1;
	f->state = F_START;                 /* its caller writes its running node (cx_step, coord_fsm.c) */
	cx_last_learn(j, item);             /* the record before (the crashed owner's): answered first */
	fire_set_source(f->fire, EVS_FAILOVER);   /* a misfire's run again says MISFIRE (coord_running.c) */
	fire_add(f->fire, item);
	f->next = j->fx.side;
	j->fx.side = f;
	return f;
}

void cx_end(struct cfire *f)
{
	struct cjob *j = f->j;
	coord_t *c = j->c;
	sched_job_t *h = f->handle;
	if (fire_n(f->fire)) fire_summary(f->fire);
	if (f->ncut)
		log_warn("job %s: %s %" PRIu64 ": item%s %s%s did not complete here (%s) and, with failover off, run%s again "
		         "only at the job's next fire", j->name, f->failover ? "run" : "fire", fire_id(f->fire),
		         f->ncut == 1 ? "" : "s", f->cut, strlen(f->cut) + 8 >= sizeof f->cut ? "..." : "",
		         j->ops.left == CJ_LEFT_DRAIN ? "the supervisor drained" : j->ops.left ? "the supervisor stopped"
		         : "the job was shut down here", f->ncut == 1 ? "s" : "");
	cx_after(f);
	cx_once_fire(f);
	cx_flow_end(f);
	if (f->failover) {
		for (struct cfire **pp = &j->fx.side; *pp; pp = &(*pp)->next)
			if (*pp == f) {
				*pp = f->next;
				break;
			}
	} else {
		j->fx.fire = NULL;
	}
	int fo = f->failover, missed = f->missed;
	cx_free(f);
	if (!fo && !c->closing) c->h.fire_ended(c->arg, h, missed);
	if (j->retiring && !c->closing) cj_retired(j);
}

void cx_cut_note(struct cfire *f, uint32_t item)
{
	size_t o = strlen(f->cut);
	if (o + 12 < sizeof f->cut) snprintf(f->cut + o, sizeof f->cut - o, "%s%" PRIu32, o ? ", " : "", item);
	f->ncut++;
}

uint32_t cx_submit(struct cfire *f)
{
	struct cjob *j = f->j;
	uint32_t n = fire_submit(f->fire, f->conf, j->as.epoch);
	if (!n) return 0;
	log_info("job %s: fire %" PRIu64 ": %" PRIu32 " item%s here, epoch 0x%" PRIx64, j->name, fire_id(f->fire), n,
	         n == 1 ? "" : "s", j->as.epoch);
	cx_once_begin(f);
	cx_flow_begin(f);
	fires_kick(j->c->fires);    /* last: outcomes may come back inside, and end it */
	return n;
}

static void running_written(void *arg, const struct zkc_res *r);

/* one multi: the running node of each item (and away with our old completed nodes) */
void cx_write_running(struct cfire *f)
{
	struct cjob *j = f->j;
	const conf_job_t *cj = f->conf;
	char p[CJ_PATH_MAX];
	const char *id = j->c->id;
	f->session = zkc_session(j->c->z);
	/* The first fire after an assignment came skips the check: its items' nodes were listed (or
	 * made) for it a moment ago, as in the watches' mode, whose watches are armed a moment after
	 * the listing too (at 10,000 jobs' first fire the checks' 40,000 ops cost it a second) */
	f->check_disabled = !f->failover && cj_disabled_at_fire(j) && !j->as.states_fresh;
	if (!f->failover) j->as.states_fresh = 0;
	zkc_multi_t *m = zkc_multi_new();
	for (uint32_t i = 0; i < fire_n(f->fire); i++) {
		uint32_t it = fire_item(f->fire, i);
		zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", it), id, (int)strlen(id),
		                 cj->failover ? 0 : ZOO_EPHEMERAL);
		if (cj_is_completed(j, it))
			zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/completed", it), -1);
		if (f->check_disabled) {
			/* the item is not disabled: made and gone in this transaction, nobody sees it (the
			 * create fails if an operator's node is there, and the multi with it) */
			zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/disabled", it), "", 0, 0);
			zkc_multi_delete(m, p, -1);
		}
	}
	/* shared with the other jobs' fires of this instant (zkc_multi_share) */
	if (zkc_multi_share(j->c->z, m, running_written, f) != ZOK) {
		log_warn("job %s: fire %" PRIu64 ": cannot write its running nodes (not connected); the fire is missed", j->name,
		         fire_id(f->fire));
		cx_skipped(j, fire_id(f->fire), "not_connected", "its running nodes could not be written (not connected)");
		f->missed = 1;
		cx_step(f, FX_ABORT, NULL);
	}
}

/* item i runs here for its misfire flag (a side run) */
static int misfire_run_here(const struct cjob *j, uint32_t i)
{
	for (const struct cfire *s = j->fx.side; s; s = s->next)
		if (s->misfire_run && fire_n(s->fire) == 1 && fire_item(s->fire, 0) == i) return 1;
	return 0;
}

static void running_written(void *arg, const struct zkc_res *r)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	if (r->rc == ZOK) {
		for (uint32_t i = 0; i < fire_n(f->fire); i++)
			cj_set_completed(j, fire_item(f->fire, i), 0);
		cx_step(f, FX_WRITTEN, NULL);
		return;
	}
	if (!cj_live(j, r->session) || r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT) {
		/* The multi may or may not have been applied: if it was, its running nodes would say
		 * "running" for items that never ran. Clear ours when the connection is back. */
		if (r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT)
			for (uint32_t i = 0; i < fire_n(f->fire); i++)
				cx_mark_stale(j, fire_item(f->fire, i));
		log_warn("job %s: fire %" PRIu64 ": its running nodes could not be written (%s); the fire is missed%s", j->name,
		         fire_id(f->fire), zerror(r->rc), f->failover ? "" : f->conf->misfire ? ": its catch-up runs once the job can run"
		         : " (misfire: false)");
		char why[160];
		snprintf(why, sizeof why, "its running nodes could not be written (%s)", zerror(r->rc));
		cx_skipped(j, fire_id(f->fire), "running_nodes", why);
		f->missed = 1;
		cx_step(f, FX_ABORT, NULL);
		return;
	}
	/* the first op that failed names the item: still running somewhere (misfire), a completed
	 * node that is not there, or disabled; drop that and try again */
	int k = 0;
	while (k < r->nops && r->op_rc[k] == ZOK) k++;
	unsigned item = 0;
	const char *q = NULL;
	/* map op k back to its item: ops are (running[, completed][, disabled made, gone]) per item in
	 * order */
	int op = 0;
	for (uint32_t i = 0; i < fire_n(f->fire) && !q; i++) {
		uint32_t it = fire_item(f->fire, i);
		if (op == k) {
			q = "running";
			item = it;
			break;
		}
		op++;
		if (cj_is_completed(j, it)) {
			if (op == k) {
				q = "completed";
				item = it;
				break;
			}
			op++;
		}
		if (f->check_disabled) {
			if (op == k || op + 1 == k) {
				q = "disabled";
				item = it;
				break;
			}
			op += 2;
		}
	}
	if (!q) {
		log_warn("job %s: fire %" PRIu64 ": writing running nodes: %s", j->name, fire_id(f->fire), zerror(r->rc));
		cx_step(f, FX_ABORT, NULL);
		return;
	}
	if (!strcmp(q, "completed")) {
		cj_set_completed(j, item, 0);
	} else if (!strcmp(q, "disabled")) {
		/* an operator's sharding/{i}/disabled: not run in this fire (nor later, until enabled) */
		log_info("job %s: fire %" PRIu64 ": item %u is disabled (sharding/%u/disabled): it does not run", j->name,
		         fire_id(f->fire), item, item);
		cj_disabled_found(j, item);
		fire_drop(f->fire, item);
		f->unrun[f->nunrun++] = item;
	} else if (fire_source(f->fire) == EVS_MISFIRE && !f->failover && misfire_run_here(j, item)) {
		/* running here for its misfire flag: that run and this catch-up stand for the same missed
		 * fires; one catch-up for all of them, so no flag for one more */
		log_info("job %s: catch-up %" PRIu64 ": item %" PRIu32 " runs here for its misfire flag already; that run "
		         "stands for this catch-up", j->name, fire_id(f->fire), item);
		fire_drop(f->fire, item);
	} else {
		cx_misfire(j, item);
		fire_drop(f->fire, item);
	}
	cx_step(f, FX_DROPPED, NULL);
}

void cx_skipped(struct cjob *j, uint64_t fire_ms, const char *reason, const char *why)
{
	struct event ev = { .type = EVT_FIRE_SKIPPED, .fire_ms = fire_ms, .reason = reason, .detail = why };
	cj_event(j, &ev);
}

/* A fire that does not run here says why, every time: at WARN when the cause is new, at INFO
 * while it stays the same (so a refusal that lasts is one WARN, then one short line per fire).
 * A state an operator chose (the job or server disabled, the job shut down, the supervisor
 * stopping or drained) is said once per change at WARN, then per fire at DEBUG and in the events
 * (fire_skipped, with its reason): a line per fire per server says nothing new. */
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
	int chosen = !strcmp(cause, "disabled") || !strcmp(cause, "shut") || !strcmp(cause, "left") ||
	             !strcmp(cause, "not_allowed");
	if (!log_cause(&j->fx.fire_cause, LL_WARN, cause, "job %s: %sfire %" PRId64 " does not run here: %s%s", j->name,
	               fi->catch_up ? "catch-up " : "", ms, why, chosen ? " (said once; fires go on being skipped)" : ""))
		log_msg(chosen ? LL_DEBUG : LL_INFO, "job %s: %sfire %" PRId64 " does not run here: %s", j->name,
		       fi->catch_up ? "catch-up " : "", ms, why);
	cx_skipped(j, (uint64_t)ms, cause, why);
}

int coord_fire(void *arg, const struct sched_fire_info *fi)
{
	coord_t *c = arg;
	struct cjob *j = fi->owner;         /* the handle coord gave with its config (h.job_conf) */
	if (c->stopping || !j || j->gone) return -1;
	const conf_job_t *cj = cj_conf(j);
	if (j->ops.left) {
		fire_refused(j, fi, "left", "the supervisor %s: the job left this instance (instances/%s) until the "
		             "supervisor restarts", j->ops.left == CJ_LEFT_DRAIN ? "is drained" : "is stopping", c->id);
		return 1;
	}
	if (j->ops.shut) {
		fire_refused(j, fi, "shut", "the job is shut down on this instance (its instances/%s node was deleted) "
		             "until the supervisor restarts", c->id);
		return 1;
	}
	if (j->adopt.refused) {
		/* supervisor.allowedCommands: decided when the config was taken (coord_adopt.c) */
		fire_refused(j, fi, "not_allowed", "%s", j->adopt.why ? j->adopt.why : "outside supervisor.allowedCommands");
		return 1;
	}
	if (!j->chk.clock_known && cj->max_time_diff_seconds >= 0 && zkc_state(c->z) == ZKC_CONNECTED) {
		/* not a fire on a clock nobody looked at: the first comparison is one round trip, sent
		 * as soon as the session is there, so this only happens when ZooKeeper is slow */
		fire_refused(j, fi, "clock_unknown", "this machine's clock has not been compared with ZooKeeper's yet "
		             "(maxTimeDiffSeconds: %d); %s", cj->max_time_diff_seconds,
		             cj->misfire ? "it runs once it has been (misfire: true)" : "it is dropped (misfire: false)");
		return -1;
	}
	if (j->chk.clock_bad && cj->max_time_diff_seconds >= 0) {
		int64_t off = j->chk.clock_off_ms;
		fire_refused(j, fi, "clock", "this machine's clock is %.1fs %s ZooKeeper's, over maxTimeDiffSeconds (%d)",
		             (double)(off < 0 ? -off : off) / 1000.0, off < 0 ? "behind" : "ahead of", cj->max_time_diff_seconds);
		return 1;
	}
	/* a fire while the job registers (the first one after a start, say) waits for it, bounded
	 * like any wait (coord_lead.c cj_wait_bound) */
	if (!cj_registered(j) && !(j->reg.busy && zkc_state(c->z) == ZKC_CONNECTED)) {
		int conn = zkc_state(c->z) == ZKC_CONNECTED;
		fire_refused(j, fi, conn ? "not_registered" : "not_connected",
		             "%s; %s", conn ? "the job is not registered yet" : "not connected to ZooKeeper",
		             cj->misfire ? "it runs once the job can run again (misfire: true)" : "it is dropped (misfire: false)");
		return -1;
	}
	if (cj->disabled || j->ops.server_off) {
		fire_refused(j, fi, "disabled", "%s%s%s", cj->disabled ? "the job is disabled (disabled: true)"
		             : "this server is DISABLED (servers/", cj->disabled ? "" : c->ip, cj->disabled ? "" : ")");
		return 1;
	}
	log_cause_reset(&j->fx.fire_cause);
	struct cfire *f = cx_new(j, cj->sharding_total_count, (uint64_t)fi->fire_ms);
	if (!f) return -1;
	f->handle = fi->handle;
	fire_set_source(f->fire, fi->catch_up ? EVS_MISFIRE : EVS_NORMAL);
	/* a workflow's: a trigger of its run, or a fire of its root, which starts one (coord_flow.c) */
	uint64_t run = fi->run ? fi->run : cj_flow_root(j) ? (uint64_t)fi->fire_ms : 0;
	if ((fi->param && fire_set_param(f->fire, fi->param) < 0) ||
	    (run && fire_set_run(f->fire, run, fi->run ? fi->root : j->name) < 0)) {
		log_error("job %s: out of memory starting a fire", j->name);
		cx_free(f);
		return -1;
	}
	fire_stands_for(f->fire, fi->fires_s, fi->nfires, fi->catch_up ? fi->missed : 1);
	f->state = F_WAIT;          /* born waiting for the assignment (cx_step, coord_fsm.c) */
	j->fx.fire = f;
	j->fx.born_ns = wait_now_ns();
	/* its wait is bounded (cj_wait_bound): coord_tick looks then (a new session looks at once) */
	cj_due(c, fire_started_ns(f->fire) + 2 * (uint64_t)zkc_timeout_ms(c->z) * 1000000u);
	cx_step(f, FX_READY, NULL);
	return 0;
}

/* ---- completions: batched into multis ------------------------------------------------------------- */

static void completed_written(void *arg, const struct zkc_res *r);

#define COMPLETION_HOLD_NS 100000000ull    /* 100 ms */

/* Write f's completions, or wait: 1 if it waits to write them (not connected, or held for the rest
 * of the fire), 0 if there is nothing more to do now (written, sent, or in flight: their answer
 * writes the rest; f may have ended and be freed). */
static int flush_fire(struct cfire *f)
{
	struct cjob *j = f->j;
	if (f->flushing || !f->npending) return 0;
	/* Not connected: the running nodes must still go, or the items stay "running" for ever once
	 * the same session is back. Wait: a reconnect flushes (on_state, coord.c); an expired session
	 * took its ephemeral running nodes with it (cx_session_lost ends these fires). A job
	 * removed from the file still writes the completions of its last fires. */
	int same = f->session == zkc_session(j->c->z);
	if (f->monitor && same && zkc_state(j->c->z) != ZKC_CONNECTED) return 1;
	if (!f->monitor || !same) {
		f->flushed += f->npending;
		f->npending = 0;
		if (f->flushed == fire_n(f->fire)) cx_step(f, FX_FLUSHED, NULL);
		return 0;
	}
	/* One multi for a fire whose items end close together: wait for the rest of the fire, up to
	 * COMPLETION_HOLD_NS after the oldest completion (coord_tick comes back for it). */
	if (fire_ended(f->fire) < fire_n(f->fire) && wait_now_ns() - f->pending_since_ns < COMPLETION_HOLD_NS) return 1;
	char p[CJ_PATH_MAX];
	const char *id = j->c->id;
	/* a handed-over item's queue entry names the instance whose fire it is (a take's: the crashed one) */
	const char *who = f->crashed ? f->crashed : id;
	zkc_multi_t *m = zkc_multi_new();
	/* as many items as keep the request under ZKC_MULTI_BYTES (a failed item's record carries
	 * its output's tail: a big fire of failing items would pass ZooKeeper's jute.maxbuffer); the
	 * rest go in the next multi, once this one is answered (completed_written) */
	uint32_t n = 0;
	for (; n < f->npending && (!n || zkc_multi_bytes(m) < ZKC_MULTI_BYTES); n++) {
		uint32_t it = f->pending[n];
		if (!f->norunning) zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", it), -1);
		if (f->failover && !f->misfire_run) {
			zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/failover", it), -1);
			zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", it), -1);
		}
		/* completed says it ran to its end; a failed or stopped item is only no longer running */
		if (fire_end_of(f->fire, it) == FIRE_OK)
			zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/completed", it), id, (int)strlen(id), 0);
		/* stopped for a shutdown here: queued for failover (the leader names a taker; the entry
		 * names us, so that the taker finds the fire for its afterAll) */
		if (fire_end_of(f->fire, it) == FIRE_HANDED_OVER)
			zkc_multi_create(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, it), who, (int)strlen(who), 0);
		/* afterAll: written as completed for the fire in the same multi, so that an item is either
		 * still running (and failed over if we crash) or counted (coord_once.c) */
		else if (f->gw) {
			zkc_multi_create(m, cj_path(j, p, "/guarantee/once/%" PRIu64 "/completed/%" PRIu32, fire_id(f->fire), it), id,
			                 (int)strlen(id), 0);
			f->gw[it] = 1;
		}
		cx_flow_record(f, m, it);   /* a workflow run's: its record goes with it (coord_flow.c) */
		cx_last_op(m, f, it);   /* its last execution: one op more in the same multi (coord_last.c) */
	}
	f->flushing = (int)n;
	if (zkc_multi_share(j->c->z, m, completed_written, f) != ZOK) {
		f->flushing = 0;
		f->flushed += f->npending;
		f->npending = 0;
		if (f->flushed == fire_n(f->fire)) cx_step(f, FX_FLUSHED, NULL);
	}
	return 0;
}

static void fl_link(struct cfire **at, struct cfire *f);

static void completed_written(void *arg, const struct zkc_res *r)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	uint32_t n = (uint32_t)f->flushing;
	if (r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT) {
		/* not written, not refused: try again when the connection is back */
		f->flushing = 0;
		fl_link(&j->c->due.heldq, f);
		return;
	}
	if (r->rc != ZOK && r->session == zkc_session(j->c->z) && zkc_state(j->c->z) == ZKC_CONNECTED) {
		/* someone else touched those nodes: write them one by one, each as far as it goes */
		log_info("job %s: fire %" PRIu64 ": completed nodes in one multi: %s; writing them one by one", j->name,
		         fire_id(f->fire), zerror(r->rc));
		char p[CJ_PATH_MAX];
		const char *id = j->c->id, *who = f->crashed ? f->crashed : id;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t it = f->pending[i];
			/* its last record first: requests of one session are taken in order, so whoever reads
			 * failovering gone and then the record (a returning owner's catch-up, cf_vet) sees the
			 * take's record; after the deletes, a read between them saw neither and ran it again */
			cx_last_one(f, it);
			if (!f->norunning) zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", it), -1, NULL, NULL);
			if (f->failover && !f->misfire_run) {
				zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failover", it), -1, NULL, NULL);
				zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", it), -1, NULL, NULL);
			}
			if (fire_end_of(f->fire, it) == FIRE_HANDED_OVER)
				zkc_create(j->c->z, cj_path(j, p, "/leader/failover/items/%" PRIu32, it), who, (int)strlen(who), 0, NULL,
				           NULL);
			else if (f->gw)
				zkc_create(j->c->z, cj_path(j, p, "/guarantee/once/%" PRIu64 "/completed/%" PRIu32, fire_id(f->fire), it), id,
				           (int)strlen(id), 0, NULL, NULL);
			cx_flow_record(f, NULL, it);
			if (fire_end_of(f->fire, it) != FIRE_OK) continue;
			zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/completed", it), -1, NULL, NULL);
			zkc_create(j->c->z, p, id, (int)strlen(id), 0, NULL, NULL);
			cj_set_completed(j, it, 1);
		}
	} else if (r->rc == ZOK)
		for (uint32_t i = 0; i < n; i++) {
			if (fire_end_of(f->fire, f->pending[i]) == FIRE_OK) cj_set_completed(j, f->pending[i], 1);
			cx_last_written(f, f->pending[i]);
		}
	memmove(f->pending, f->pending + n, (f->npending - n) * sizeof *f->pending);
	f->npending -= n;
	f->flushed += n;
	f->flushing = 0;
	if (f->flushed == fire_n(f->fire)) {
		cx_step(f, FX_FLUSHED, NULL);
		return;
	}
	if (flush_fire(f)) fl_link(&j->c->due.heldq, f);
}

/* The session ended: its ephemeral running nodes are gone with it; fires waiting to write their
 * completions have nothing left to write. */
void cx_session_lost(struct cjob *j)
{
	for (struct cfire *f = j->fx.side, *n; f; f = n) {
		n = f->next;
		f->monitor = 0;
		flush_fire(f);
	}
	if (j->fx.fire && j->fx.fire->state == F_RUN) {
		j->fx.fire->monitor = 0;
		flush_fire(j->fx.fire);
	}
}

/* The flush queues: fires with completions to write (cx_flush_want), looked at when the loop is
 * idle, and fires that wait to write them (held for the rest of the fire, or not connected),
 * looked at each tick (cx_flush_held). Each look was a loop over every job: 50,000 of them each
 * time an item ended; then one over every fire waiting, at each idle of a burst. */
static void fl_link(struct cfire **at, struct cfire *f)
{
	if (f->fl_pprev) cx_flush_unqueue(f);
	if ((f->fl_next = *at)) f->fl_next->fl_pprev = &f->fl_next;
	*at = f;
	f->fl_pprev = at;
}

void cx_flush_unqueue(struct cfire *f)
{
	if (!f->fl_pprev) return;
	if ((*f->fl_pprev = f->fl_next)) f->fl_next->fl_pprev = f->fl_pprev;
	f->fl_next = NULL;
	f->fl_pprev = NULL;
}

void cx_flush_want(struct cfire *f)
{
	coord_t *c = f->j->c;
	fl_link(&c->due.flushq, f);
	ev_idle_start(c->loop, &c->due.flush_w);
}

/* coord_tick: the waiting ones are looked at again (connected) */
void cx_flush_held(coord_t *c)
{
	if (!c->due.heldq) return;
	while (c->due.heldq) fl_link(&c->due.flushq, c->due.heldq);
	ev_idle_start(c->loop, &c->due.flush_w);
}

void cx_flush_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)revents;
	coord_t *c = w->data;
	ev_idle_stop(loop, w);
	/* each off the queue before its flush, which may end and free it (or another of the queue:
	 * cx_free takes it off whichever it is on) */
	while (c->due.flushq) {
		struct cfire *f = c->due.flushq;
		cx_flush_unqueue(f);
		if (!f->npending) continue;
		/* a scheduled fire writes once it runs (a side run is born running) */
		if ((f == f->j->fx.fire && f->state != F_RUN) || flush_fire(f)) fl_link(&c->due.heldq, f);
	}
}

/* An item's final outcome (the tracker's item_ended): its completion waits to be written. */
static void zk_item_ended(fire_t *t, uint32_t item, const struct disp_outcome *o)
{
	struct cfire *f = fire_owner(t);
	/* stopped because an operator shut the job down here: it did not run to its end, and the
	 * leader waits for us to hand it over (coord_failover.c) */
	if (f->j->ops.shut && o->status == FRAME_ST_CANCELLED) {
		if (f->conf->failover && !f->misfire_run) fire_end_item(t, item, FIRE_HANDED_OVER);
		else cx_cut_note(f, item);
	}
	cx_last_ended(f, item, o);
	if (!f->npending) f->pending_since_ns = wait_now_ns();
	f->pending[f->npending++] = item;
	/* completions that end close together go in one multi: write when the loop is idle */
	cx_flush_want(f);
}
