/* supervisor/coord/coord_barrier.c: ejob.listener.beforeAll, once per fire across the cluster, before any
 * item of the fire runs anywhere (ElasticJob's AbstractDistributeOnceElasticJobListener
 * .doBeforeJobExecutedAtLastStarted, done so that it runs exactly once and never waits for ever;
 * docs/config.md "beforeAll: once per fire, before every item").
 *
 * Under /{job}/guarantee/once/{fireId} (coord_once.c keeps afterAll's nodes there too):
 *   started             P  data "" at version 0 until the barrier is decided; then what was
 *                          decided, at version 1: "ok", or why the fire does not run
 *   started/{item}      P  the instance the item is on: written by each instance with items of the
 *                          fire once its before listener is done, in one multi with a check that
 *                          started is not decided; its items that will not run (disabled, or a
 *                          failed before) are written too, so that they never hold the others
 *   started/b-NNNNNNNNNN PS one per claim of the run: a second one means the run is a takeover
 *   beforeAll           E  the claim: the instance running the command
 * Each instance watches started/ until it holds every item, then claims: check started at version
 * 0, create beforeAll (E), create started/b- (PS), in one multi. The one whose multi succeeds runs
 * the command and then writes the decision (set started at version 0, delete beforeAll: one
 * multi); the others watch the claim and, when it goes, read started: decided, or (version 0: the
 * claimant's session ended) claim again, a takeover. An instance that has waited
 * ejob.listener.timeoutSeconds for the others closes the barrier: one multi creates and deletes
 * the claim (so nobody holds it) and sets started to "timeout: ..." at version 0; a claim held
 * meanwhile wins (the run decides). Everyone learns the same decision: "ok" runs its items, else
 * none of the fire runs anywhere. Then each instance deletes its started/{item} nodes (the decider
 * its b- nodes too) and tries to delete started and, without afterAll, the fire's node: the last
 * of them succeeds.
 *
 * The barrier belongs to its fire (cfire.bar); a fire that goes away (its job removed, a stop)
 * detaches it, and it is freed once its requests are answered. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_int.h"
#include "supervisor/run/listen.h"

enum { B_REG = 1, B_WAIT, B_CLAIM, B_HELD, B_RUN, B_END, B_READ, B_CLOSE };

struct barrier {
	struct cfire *f;            /* NULL once detached: answers still due free it */
	struct cjob *j;
	uint64_t fire_ms, epoch;
	uint32_t total;
	int state;
	int again;                  /* its request went unanswered: the state's step again once connected */
	int inflight;               /* requests with a callback not answered yet */
	int tries;                  /* registrations sent (a parent deleted under it: bounded) */
	int decider;                /* this instance wrote the decision */
	uint32_t *items;            /* this instance's items of the fire, run here or not */
	uint32_t nitems;
	uint32_t seen;              /* items started, at the last count */
	zkc_keep_t *w;              /* B_WAIT: started/ (children); B_HELD: beforeAll (exists) */
	listen_run_t *lr;           /* B_RUN */
	ev_timer timer;             /* the wait for every item's instance */
	int late;                   /* the wait ran out */
	int takeover;
	char result[400];           /* B_END: the decision to write */
};

static const char *bpath(const struct barrier *b, char *buf, const char *rel)
{
	return cj_path(b->j, buf, "/guarantee/once/%" PRIu64 "%s", b->fire_ms, rel);
}

static void bar_free(struct barrier *b)
{
	listen_cancel(b->lr);
	zkc_keep_free(b->w);
	ev_timer_stop(b->j->c->loop, &b->timer);
	free(b->items);
	free(b);
}

/* An answer came: 1 if the barrier is still its fire's (else it is freed once the last comes). */
static int answered(struct barrier *b)
{
	b->inflight--;
	if (b->f) return !b->j->c->closing;     /* closing: its fire's detach frees it */
	if (!b->inflight) bar_free(b);
	return 0;
}

static void reg_send(struct barrier *b);
static void wait_all(struct barrier *b);
static void claim(struct barrier *b);
static void hold(struct barrier *b);
static void read_started(struct barrier *b);
static void close_send(struct barrier *b);
static void end_send(struct barrier *b);

/* its request went unanswered: the step again once connected (at once if already back) */
static void again(struct barrier *b, int state)
{
	b->state = state;
	b->again = 1;
	if (zkc_state(b->j->c->z) == ZKC_CONNECTED) cx_bar_state(b->j, 1);
}

/* ---- the decision ------------------------------------------------------------------------------ */

static void tidy_listed(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	char p[CJ_PATH_MAX], rel[64];
	if (b->j->c->closing) {
		answered(b);
		return;
	}
	for (int i = 0; r->rc == ZOK && i < r->nchildren; i++)
		if (!strncmp(r->children[i], "b-", 2)) {
			snprintf(rel, sizeof rel, "/started/%.40s", r->children[i]);
			zkc_delete(b->j->c->z, bpath(b, p, rel), -1, NULL, NULL);
		}
	zkc_delete(b->j->c->z, bpath(b, p, "/started"), -1, NULL, NULL);
	if (!cj_conf(b->j)->listener.after_all) zkc_delete(b->j->c->z, bpath(b, p, ""), -1, NULL, NULL);
	answered(b);
}

/* an older fire's started/: away with it all (and the fire's node without afterAll) */
static void sweep_started(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	if (!b->j->c->closing && r->rc == ZOK) {
		zkc_t *z = b->j->c->z;
		char p[CJ_PATH_MAX];
		for (int i = 0; i < r->nchildren; i++) {
			snprintf(p, sizeof p, "%s/%.40s", r->path, r->children[i]);
			zkc_delete(z, p, -1, NULL, NULL);
		}
		zkc_delete(z, r->path, -1, NULL, NULL);
		size_t n = strlen(r->path);
		if (!cj_conf(b->j)->listener.after_all && n > 8 && n < sizeof p) {
			memcpy(p, r->path, n - 8);      /* without "/started" */
			p[n - 8] = 0;
			zkc_delete(z, p, -1, NULL, NULL);
		}
	}
	answered(b);
}

static void sweep_listed(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	char p[CJ_PATH_MAX];
	for (int i = 0; !b->j->c->closing && r->rc == ZOK && i < r->nchildren; i++) {
		char *end;
		uint64_t id = strtoull(r->children[i], &end, 10);
		if (*end || id >= b->fire_ms) continue;
		snprintf(p, sizeof p, "%s/%.40s/started", r->path, r->children[i]);
		if (zkc_children(b->j->c->z, p, NULL, NULL, sweep_started, b) == ZOK) b->inflight++;
	}
	answered(b);
}

/* The decider: an older fire's started/ is what an instance that died before it read the decision
 * left (everyone else deletes its own): gone now, since every live instance has moved on to this
 * fire. One listing per fire when there is nothing to sweep. */
static void sweep(struct barrier *b)
{
	char p[CJ_PATH_MAX];
	if (zkc_children(b->j->c->z, cj_path(b->j, p, "/guarantee/once"), NULL, NULL, sweep_listed, b) == ZOK)
		b->inflight++;
}

/* Away with this instance's nodes of the barrier (the decider's claims too); the last one to try
 * deletes started and, without afterAll (which needs it), the fire's node. */
static void tidy(struct barrier *b)
{
	char p[CJ_PATH_MAX], rel[32];
	zkc_t *z = b->j->c->z;
	for (uint32_t i = 0; i < b->nitems; i++) {
		snprintf(rel, sizeof rel, "/started/%" PRIu32, b->items[i]);
		zkc_delete(z, bpath(b, p, rel), -1, NULL, NULL);
	}
	if (b->decider) sweep(b);
	if (b->decider && zkc_children(z, bpath(b, p, "/started"), NULL, NULL, tidy_listed, b) == ZOK) {
		b->inflight++;
		return;
	}
	zkc_delete(z, bpath(b, p, "/started"), -1, NULL, NULL);
	if (!cj_conf(b->j)->listener.after_all) zkc_delete(z, bpath(b, p, ""), -1, NULL, NULL);
}

/* Decided (what: "ok" or why not): the fire goes on here or ends; the barrier is done. */
static void decided(struct barrier *b, const char *decision)
{
	struct cfire *f = b->f;
	struct cjob *j = b->j;
	/* b may be freed below (decision may be its result) */
	char what[400];
	snprintf(what, sizeof what, "%s", decision);
	zkc_keep_free(b->w);
	b->w = NULL;
	ev_timer_stop(j->c->loop, &b->timer);
	tidy(b);
	f->bar = NULL;
	b->f = NULL;
	if (!b->inflight) bar_free(b);
	if (strcmp(what, "ok")) {
		cx_step(f, FX_BARRIER_FAILED, what);
		return;
	}
	log_debug("job %s: fire %" PRIu64 ": beforeAll done: its items run", j->name, fire_id(f->fire));
	cx_step(f, FX_BARRIER_OK, NULL);
}

void cx_bar_failed(struct cfire *f, const char *what)
{
	struct cjob *j = f->j;
	uint32_t n = fire_n(f->fire);
	if (n)
		log_warn("job %s: fire %" PRIu64 ": its beforeAll did not run to success (%s): its %" PRIu32 " item%s here "
		         "do%s not run, nor any other of the fire", j->name, fire_id(f->fire), what, n, n == 1 ? "" : "s",
		         n == 1 ? "es" : "");
	else
		log_info("job %s: fire %" PRIu64 ": its beforeAll did not run to success (%s)", j->name, fire_id(f->fire), what);
	char d[460];
	snprintf(d, sizeof d, "the beforeAll listener (ejob.listener.beforeAll): %s", what);
	/* an instance with nothing to run (disabled items, a failed before: said already) skips nothing more */
	if (n) cx_skipped(j, fire_id(f->fire), "listener", d);
}

static void started_read(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	if (!answered(b) || b->state != B_READ) return;
	if (cj_unanswered(r->rc)) {
		again(b, B_READ);
		return;
	}
	if (r->rc == ZNONODE) {
		decided(b, "its started node is gone (deleted by hand?): nobody can tell whether it ran");
		return;
	}
	if (r->rc != ZOK) {
		char w[96];
		snprintf(w, sizeof w, "reading its started node: %s", zerror(r->rc));
		decided(b, w);
		return;
	}
	if (r->stat.version > 0) {
		char w[400];
		snprintf(w, sizeof w, "%.*s", r->len > 0 ? r->len : 0, r->data ? r->data : "");
		decided(b, *w ? w : "decided without a word");
		return;
	}
	/* not decided: every item had started (a claim was held or made) and its holder is gone */
	claim(b);
}

/* B_READ: what the barrier says now */
static void read_started(struct barrier *b)
{
	char p[CJ_PATH_MAX];
	zkc_keep_free(b->w);
	b->w = NULL;
	b->state = B_READ;
	b->again = 0;
	if (zkc_get(b->j->c->z, bpath(b, p, "/started"), NULL, NULL, started_read, b) == ZOK) b->inflight++;
	else b->again = 1;
}

/* ---- registration, the wait --------------------------------------------------------------------- */

static void registered(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	if (!answered(b) || b->state != B_REG) return;
	if (cj_unanswered(r->rc)) {
		again(b, B_REG);
		return;
	}
	int check = r->nops > 0 ? r->op_rc[0] : r->rc;
	if (check == ZBADVERSION) {
		read_started(b);        /* decided before this instance came (it timed out without it) */
		return;
	}
	if (check == ZNONODE && b->tries < 3) {
		reg_send(b);            /* its parents went under it (a tidy of an earlier decision): again */
		return;
	}
	if (r->rc == ZNODEEXISTS) {
		/* written before (an answer lost), or an item another instance wrote too (the assignment
		 * changed under the fire): each alone, as far as it goes */
		char p[CJ_PATH_MAX], rel[32];
		const char *id = b->j->c->id;
		for (uint32_t i = 0; i < b->nitems; i++) {
			snprintf(rel, sizeof rel, "/started/%" PRIu32, b->items[i]);
			zkc_create(b->j->c->z, bpath(b, p, rel), id, (int)strlen(id), 0, NULL, NULL);
		}
	} else if (r->rc != ZOK) {
		char w[120];
		snprintf(w, sizeof w, "writing its items under started/: %s", zerror(r->rc));
		log_warn("job %s: fire %" PRIu64 ": beforeAll: %s", b->j->name, b->fire_ms, w);
		decided(b, w);
		return;
	}
	wait_all(b);
}

static void reg_send(struct barrier *b)
{
	char p[CJ_PATH_MAX], rel[32];
	zkc_t *z = b->j->c->z;
	const char *id = b->j->c->id;
	b->state = B_REG;
	b->again = 0;
	b->tries++;
	/* the parents first (answered in order; NODEEXISTS is what the others find) */
	zkc_create(z, cj_path(b->j, p, "/guarantee"), "", 0, 0, NULL, NULL);
	zkc_create(z, cj_path(b->j, p, "/guarantee/once"), "", 0, 0, NULL, NULL);
	zkc_create(z, bpath(b, p, ""), "", 0, 0, NULL, NULL);
	zkc_create(z, bpath(b, p, "/started"), "", 0, 0, NULL, NULL);
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_check(m, bpath(b, p, "/started"), 0);
	for (uint32_t i = 0; i < b->nitems; i++) {
		snprintf(rel, sizeof rel, "/started/%" PRIu32, b->items[i]);
		zkc_multi_create(m, bpath(b, p, rel), id, (int)strlen(id), 0);
	}
	if (zkc_multi_commit(z, m, registered, b) == ZOK) b->inflight++;
	else b->again = 1;
}

static void counted(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	if (!b->f || b->state != B_WAIT) return;
	if (r->rc == ZNONODE) {
		read_started(b);
		return;
	}
	if (r->rc != ZOK) return;
	uint32_t n = 0;
	for (int i = 0; i < r->nchildren; i++)
		if (r->children[i][0] >= '0' && r->children[i][0] <= '9') n++;
	b->seen = n;
	log_debug("job %s: fire %" PRIu64 ": beforeAll: %" PRIu32 " of %" PRIu32 " items started", b->j->name, b->fire_ms,
	          n, b->total);
	if (n >= b->total) claim(b);
	else if (b->late) close_send(b);    /* ran out while a claim was held: that claim is gone */
}

/* B_WAIT: started/ watched until it holds every item */
static void wait_all(struct barrier *b)
{
	char p[CJ_PATH_MAX];
	b->state = B_WAIT;
	b->again = 0;
	zkc_keep_free(b->w);
	b->w = zkc_keep_new(b->j->c->z, ZKC_KEEP_CHILDREN, bpath(b, p, "/started"), 0, counted, b);
	zkc_keep_arm(b->w);
}

/* ---- the timeout: the barrier closed without a run ------------------------------------------------ */

static void closed(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	if (!answered(b) || b->state != B_CLOSE) return;
	if (cj_unanswered(r->rc)) {
		again(b, B_CLOSE);
		return;
	}
	if (r->rc == ZOK) {
		b->decider = 1;
		decided(b, b->result);
		return;
	}
	int take = r->nops > 0 ? r->op_rc[0] : r->rc;
	if (take == ZNODEEXISTS) hold(b);      /* a claim is held: its run decides */
	else read_started(b);                   /* decided by someone else, or gone */
}

static void close_send(struct barrier *b)
{
	char p[CJ_PATH_MAX];
	zkc_keep_free(b->w);
	b->w = NULL;
	b->state = B_CLOSE;
	b->again = 0;
	snprintf(b->result, sizeof b->result, "timeout: %" PRIu32 " of its %" PRIu32 " items had started after %ds "
	         "(ejob.listener.timeoutSeconds), so beforeAll did not run and no item of the fire runs",
	         b->seen, b->total, cj_conf(b->j)->listener.timeout_seconds);
	const char *id = b->j->c->id;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, bpath(b, p, "/beforeAll"), id, (int)strlen(id), ZOO_EPHEMERAL);
	zkc_multi_delete(m, bpath(b, p, "/beforeAll"), -1);
	zkc_multi_set(m, bpath(b, p, "/started"), b->result, (int)strlen(b->result), 0);
	if (zkc_multi_commit(b->j->c->z, m, closed, b) == ZOK) b->inflight++;
	else b->again = 1;
}

static void timed_out(struct ev_loop *loop, ev_timer *t, int revents)
{
	(void)loop;
	(void)revents;
	struct barrier *b = t->data;
	b->late = 1;
	log_info("job %s: fire %" PRIu64 ": beforeAll: %" PRIu32 " of %" PRIu32 " items started in %ds: closing the wait",
	         b->j->name, b->fire_ms, b->seen, b->total, cj_conf(b->j)->listener.timeout_seconds);
	/* a claim in the making, held or running decides; a registration closes it once counted
	 * (counted), a wait cut off once connected (cx_bar_state) */
	if (b->state == B_WAIT && zkc_state(b->j->c->z) == ZKC_CONNECTED) close_send(b);
}

/* ---- the claim, the run --------------------------------------------------------------------------- */

static void claimed(void *arg, const struct zkc_res *r);
static void run_done(void *arg, enum listen_result res, const char *why, uint64_t us);

static void claim(struct barrier *b)
{
	char p[CJ_PATH_MAX];
	const char *id = b->j->c->id;
	zkc_keep_free(b->w);
	b->w = NULL;
	b->state = B_CLAIM;
	b->again = 0;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_check(m, bpath(b, p, "/started"), 0);
	zkc_multi_create(m, bpath(b, p, "/beforeAll"), id, (int)strlen(id), ZOO_EPHEMERAL);
	zkc_multi_create(m, bpath(b, p, "/started/b-"), id, (int)strlen(id), ZOO_SEQUENCE);
	if (zkc_multi_commit(b->j->c->z, m, claimed, b) == ZOK) b->inflight++;
	else b->again = 1, b->state = B_READ;
}

static void runs_counted(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	if (!answered(b) || b->state != B_RUN || b->lr) return;
	int claims = 0;
	for (int i = 0; r->rc == ZOK && i < r->nchildren; i++) claims += !strncmp(r->children[i], "b-", 2);
	b->takeover = claims > 1;
	const conf_job_t *cj = cj_conf(b->j);
	if (!cj->listener.before_all) {
		run_done(b, LISTEN_OK, "no beforeAll in the config in force", 0);
		return;
	}
	char *ctx = listen_once_context_json(cj, b->total, b->fire_ms, b->epoch, b->takeover);
	if (!ctx) {
		run_done(b, LISTEN_FAILED, "out of memory", 0);
		return;
	}
	struct listen_spec s = {
		.job = b->j->name, .kind = "beforeAll", .cmd = cj->listener.before_all, .context = ctx, .fire_ms = b->fire_ms,
		.epoch = b->epoch, .timeout_s = (uint32_t)cj->listener.timeout_seconds, .takeover = (unsigned)b->takeover,
		.lease_ms = cx_once_lease_ms(b->j),
	};
	log_info("job %s: fire %" PRIu64 ": every item's instance is ready: its beforeAll runs here%s", b->j->name,
	         b->fire_ms, b->takeover ? " (a takeover: an earlier run was cut short)" : "");
	b->lr = listen_start(b->j->c->listen, &s, run_done, b);
	free(ctx);
	if (!b->lr) run_done(b, LISTEN_FAILED, "out of memory", 0);
}

static void claimed(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	char p[CJ_PATH_MAX];
	if (!answered(b) || b->state != B_CLAIM) return;
	if (r->rc == ZOK) {
		b->state = B_RUN;
		if (zkc_children(b->j->c->z, bpath(b, p, "/started"), NULL, NULL, runs_counted, b) == ZOK) b->inflight++;
		else again(b, B_READ);
		return;
	}
	if (cj_unanswered(r->rc)) {
		again(b, B_READ);       /* a claim of ours, if made, is found and deleted by hold */
		return;
	}
	int check = r->nops > 0 ? r->op_rc[0] : r->rc, take = r->nops > 1 ? r->op_rc[1] : r->rc;
	if (check == ZBADVERSION || check == ZNONODE) read_started(b);
	else if (take == ZNODEEXISTS) hold(b);
	else {
		char w[120];
		snprintf(w, sizeof w, "claiming its run: %s", zerror(r->rc));
		decided(b, w);
	}
}

static void holder(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	char p[CJ_PATH_MAX];
	if (!b->f || b->state != B_HELD) return;
	if (r->rc == ZNONODE) {
		read_started(b);        /* decided, or its holder's session ended */
		return;
	}
	if (r->rc == ZOK && (int64_t)r->stat.ephemeralOwner == zkc_session_id(b->j->c->z)) {
		/* ours, from before a lost connection: its command was killed then; away with it */
		zkc_delete(b->j->c->z, bpath(b, p, "/beforeAll"), -1, NULL, NULL);
	}
}

/* B_HELD: the claim watched (exists) until it goes */
static void hold(struct barrier *b)
{
	char p[CJ_PATH_MAX];
	b->state = B_HELD;
	b->again = 0;
	zkc_keep_free(b->w);
	b->w = zkc_keep_new(b->j->c->z, ZKC_KEEP_EXISTS, bpath(b, p, "/beforeAll"), 0, holder, b);
	zkc_keep_arm(b->w);
}

static void ended_written(void *arg, const struct zkc_res *r)
{
	struct barrier *b = arg;
	if (!answered(b) || b->state != B_END) return;
	if (cj_unanswered(r->rc)) {
		again(b, B_END);
		return;
	}
	if (r->rc != ZOK) {
		/* not ours any more (our session ended and another took it over), or decided */
		log_warn("job %s: fire %" PRIu64 ": beforeAll: writing what its run decided: %s", b->j->name, b->fire_ms,
		         zerror(r->rc));
		read_started(b);
		return;
	}
	b->decider = 1;
	decided(b, b->result);
}

static void end_send(struct barrier *b)
{
	char p[CJ_PATH_MAX];
	b->state = B_END;
	b->again = 0;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_set(m, bpath(b, p, "/started"), b->result, (int)strlen(b->result), 0);
	zkc_multi_delete(m, bpath(b, p, "/beforeAll"), -1);
	if (zkc_multi_commit(b->j->c->z, m, ended_written, b) == ZOK) b->inflight++;
	else b->again = 1;
}

static void run_done(void *arg, enum listen_result res, const char *why, uint64_t us)
{
	struct barrier *b = arg;
	b->lr = NULL;
	struct event ev = { .type = EVT_LISTENER, .fire_ms = b->fire_ms, .epoch = b->epoch, .reason = "beforeAll",
	                    .detail = why, .status = (uint32_t)res, .duration_us = us };
	if (listen_lease_lost(res, why)) {
		/* cut short by this supervisor's own stall, not ended: claim again (a takeover, here or
		 * elsewhere) */
		log_warn("job %s: fire %" PRIu64 ": beforeAll: %s: it runs again, here or elsewhere", b->j->name, b->fire_ms, why);
		cj_event(b->j, &ev);
		read_started(b);
		return;
	}
	if (res != LISTEN_OK) {
		log_warn("job %s: fire %" PRIu64 ": its beforeAll listener failed (%s): no item of the fire runs", b->j->name,
		         b->fire_ms, why);
		snprintf(b->result, sizeof b->result, "failed on %s: %s", b->j->c->id, why);
	} else {
		log_info("job %s: fire %" PRIu64 ": beforeAll done in %.2fs", b->j->name, b->fire_ms, (double)us / 1e6);
		snprintf(b->result, sizeof b->result, "ok");
	}
	cj_event(b->j, &ev);
	end_send(b);
}

/* ---- what the fires and the session tell ----------------------------------------------------------- */

void cx_barrier(struct cfire *f)
{
	struct cjob *j = f->j;
	fire_t *t = f->fire;
	struct barrier *b = calloc(1, sizeof *b);
	uint32_t n = fire_n(t) + f->nunrun;
	if (!b || !(b->items = calloc(n ? n : 1, sizeof *b->items))) {
		free(b);
		log_error("job %s: fire %" PRIu64 ": out of memory: it does not run here (its beforeAll cannot be waited for)",
		          j->name, fire_id(t));
		cx_skipped(j, fire_id(t), "listener", "out of memory waiting for beforeAll");
		cx_step(f, FX_ABORT, NULL);
		return;
	}
	b->f = f;
	b->j = j;
	b->fire_ms = fire_id(t);
	b->epoch = j->as.epoch;
	b->total = fire_total(t);
	memcpy(b->items, fire_items(t), fire_n(t) * sizeof *b->items);
	memcpy(b->items + fire_n(t), f->unrun, f->nunrun * sizeof *b->items);
	b->nitems = n;
	ev_timer_init(&b->timer, timed_out, (double)f->conf->listener.timeout_seconds, 0.);
	b->timer.data = b;
	ev_timer_start(j->c->loop, &b->timer);
	f->bar = b;
	reg_send(b);
}

void cx_bar_detach(struct cfire *f)
{
	struct barrier *b = f->bar;
	if (!b) return;
	f->bar = NULL;
	b->f = NULL;
	char p[CJ_PATH_MAX];
	/* a claim of ours would hold the others until our session ends: let them take it over */
	if ((b->state == B_RUN || b->state == B_END) && !b->j->c->closing)
		zkc_delete(b->j->c->z, bpath(b, p, "/beforeAll"), -1, NULL, NULL);
	listen_cancel(b->lr);
	b->lr = NULL;
	zkc_keep_free(b->w);
	b->w = NULL;
	ev_timer_stop(b->j->c->loop, &b->timer);
	if (!b->inflight) bar_free(b);
}

void cx_bar_stop(struct cjob *j)
{
	struct cfire *f = j->fx.fire;
	if (!f || !f->bar) return;
	cx_bar_detach(f);
	f->nunrun = 0;
	cx_step(f, FX_ABORT, NULL);
}

void cx_bar_state(struct cjob *j, int connected)
{
	struct barrier *b = j->fx.fire ? j->fx.fire->bar : NULL;
	if (!b) return;
	if (!connected) {
		if (b->state == B_RUN && b->lr) {
			/* its session may end before it is back, and another instance would take over */
			log_warn("job %s: fire %" PRIu64 ": beforeAll: the ZooKeeper connection is lost: its command is killed "
			         "(it runs again, here or elsewhere, once the connection or the session is back)",
			         j->name, b->fire_ms);
			listen_cancel(b->lr);
			b->lr = NULL;
		}
		if (b->state == B_RUN) b->state = B_READ, b->again = 1;
		return;
	}
	if (b->again) {
		switch (b->state) {
		case B_REG: reg_send(b); break;
		case B_CLOSE: close_send(b); break;
		case B_END: end_send(b); break;
		default: read_started(b); break;
		}
		return;
	}
	if (b->state == B_WAIT && b->late) close_send(b);
	/* a new session unarmed the kept watch */
	else if (b->state == B_WAIT && !zkc_keep_armed(b->w)) wait_all(b);
	else if (b->state == B_HELD && !zkc_keep_armed(b->w)) hold(b);
}
