/* supervisor/coord/coord_once.c: ejob.listener.afterAll, once per fire across the cluster (ElasticJob's
 * AbstractDistributeOnceElasticJobListener.doAfterJobExecutedAtLastCompleted, done so that it
 * runs exactly once; docs/design.md "Once per fire").
 *
 * Under /{job}/guarantee/once/{fireId} (P, data "" at version 0 until the run is done):
 *   completed/{item}  P  the instance that ran it: written by each instance when its items of the
 *                        fire have their final outcome (one multi)
 *   runs/r-NNNNNNNNNN PS one per claim: a second one means the run is a takeover
 *   afterAll          E  the claim: the instance running the command
 * Every instance that wrote items of the fire watches completed/ until it holds every item of
 * the fire; then it claims in one multi: check {fireId} at version 0, create afterAll (E), create
 * runs/r- (PS). The one whose multi succeeds runs the command; the others watch afterAll. When the
 * command ends (whatever its result) the claimant sets {fireId}'s data to "done" at version 0 and
 * deletes afterAll in one multi, then deletes the fire's nodes. A claim made after that fails its
 * check (version 1, or the node gone): nobody runs it again. A claimant that loses its connection
 * kills its command at once (before its session can expire) and claims again when it is back; one
 * whose session ends (its supervisor killed: the command dies with it, PR_SET_PDEATHSIG) loses the
 * ephemeral claim, and a watcher takes over: the command runs again there, told by
 * EJOB_LISTENER_TAKEOVER=1. Never two at once, never skipped while an instance that wrote items
 * of the fire lives; a run cut short by a crash runs again once more per crash. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_int.h"
#include "supervisor/run/listen.h"

#define ONCE_PENDING_MAX 16     /* a fire still waiting when this many newer ones have come is given up */

enum { O_REG = 1, O_WAIT, O_CLAIM, O_HELD, O_RUN, O_END, O_FIND };

struct once {
	struct cjob *j;
	uint64_t fire_ms, epoch;
	uint32_t total;
	int state;
	int again;                  /* O_REG, O_END: its write went unanswered; send it when connected */
	uint32_t *items;            /* the items this instance ran */
	uint32_t nitems;
	zkc_keep_t *w;              /* O_WAIT: completed/ (children); O_HELD: afterAll (exists) */
	listen_run_t *lr;           /* O_RUN */
	int takeover;
	char *crashed;              /* O_FIND: the instance whose item this failover take ran */
	uint64_t before_ms;         /* O_FIND: the take's start: its fire began before */
	int left, lost;             /* O_FIND: answers due; one of them went unanswered */
	int only_reg;               /* another of the job's list waits on the same fire: write, no more */
	int seen;                   /* O_WAIT: items completed at the last count */
	uint64_t seq;               /* the job's count of fires waited on here when it came (adopt) */
	struct once *next;
};

static const char *opath(const struct once *o, char *buf, const char *rel)
{
	return cj_path(o->j, buf, "/guarantee/once/%" PRIu64 "%s", o->fire_ms, rel);
}

static void once_free(struct once *o)
{
	listen_cancel(o->lr);
	zkc_keep_free(o->w);
	free(o->items);
	free(o->crashed);
	free(o);
}

/* done with it here: off the job's list, freed */
static void finish(struct once *o)
{
	for (struct once **pp = &o->j->once; *pp; pp = &(*pp)->next)
		if (*pp == o) {
			*pp = o->next;
			break;
		}
	once_free(o);
}

static void claim(struct once *o);

/* Another of the job's list on the same fire (a failover take of its item and the fire itself, here
 * both): one waits and claims, or the instance would claim against itself. */
static int has_twin(const struct once *o)
{
	for (const struct once *x = o->j->once; x; x = x->next)
		if (x != o && x->fire_ms == o->fire_ms && x->state != O_FIND) return 1;
	return 0;
}

static void registered(void *arg, const struct zkc_res *r);
static void counted(void *arg, const struct zkc_res *r);
static void holder(void *arg, const struct zkc_res *r);

/* O_WAIT: completed/ watched (children) until it holds every item */
static void wait_all(struct once *o)
{
	char p[CJ_PATH_MAX];
	o->state = O_WAIT;
	zkc_keep_free(o->w);
	o->w = zkc_keep_new(o->j->c->z, ZKC_KEEP_CHILDREN, opath(o, p, "/completed"), 0, counted, o);
	zkc_keep_arm(o->w);
}

/* O_HELD: the claim watched (exists) until it goes */
static void hold(struct once *o)
{
	char p[CJ_PATH_MAX];
	o->state = O_HELD;
	zkc_keep_free(o->w);
	o->w = zkc_keep_new(o->j->c->z, ZKC_KEEP_EXISTS, opath(o, p, "/afterAll"), 0, holder, o);
	zkc_keep_arm(o->w);
}

static void reg_send(struct once *o);
static void end_send(struct once *o);
static void find_send(struct once *o);

/* A write or claim that went unanswered (a lost connection, an ended session): again once
 * connected; at once if the connection is already back (its notice came before this answer). */
static void again(struct once *o, int state, int what)
{
	o->state = state;
	o->again = what;
	if (zkc_state(o->j->c->z) != ZKC_CONNECTED) return;
	if (what == 3) find_send(o);
	else if (what == 2) hold(o);
	else if (state == O_REG) reg_send(o);
	else end_send(o);
}

static void reg_send(struct once *o)
{
	char p[CJ_PATH_MAX];
	zkc_t *z = o->j->c->z;
	const char *id = o->j->c->id;
	o->state = O_REG;
	o->again = 0;
	/* the parents first (answered in order; NODEEXISTS is what the others find) */
	zkc_create(z, cj_path(o->j, p, "/guarantee"), "", 0, 0, NULL, NULL);
	zkc_create(z, cj_path(o->j, p, "/guarantee/once"), "", 0, 0, NULL, NULL);
	zkc_create(z, opath(o, p, ""), "", 0, 0, NULL, NULL);
	zkc_create(z, opath(o, p, "/completed"), "", 0, 0, NULL, NULL);
	zkc_create(z, opath(o, p, "/runs"), "", 0, 0, NULL, NULL);
	if (!o->nitems) {
		/* its items were written with their completions (cx_once_begin): wait */
		if (o->only_reg) finish(o);
		else wait_all(o);
		return;
	}
	zkc_multi_t *m = zkc_multi_new();
	for (uint32_t i = 0; i < o->nitems; i++) {
		char rel[32];
		snprintf(rel, sizeof rel, "/completed/%" PRIu32, o->items[i]);
		zkc_multi_create(m, opath(o, p, rel), id, (int)strlen(id), 0);
	}
	if (zkc_multi_commit(z, m, registered, o) != ZOK) o->again = 1;
}

static void counted(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	if (o->state != O_WAIT) return;
	if (r->rc == ZNONODE) {
		/* its nodes are gone: the run is done and cleaned up */
		finish(o);
		return;
	}
	if (r->rc != ZOK) return;
	o->seen = r->nchildren;
	log_debug("job %s: fire %" PRIu64 ": afterAll: %d of %" PRIu32 " items completed", o->j->name, o->fire_ms,
	          r->nchildren, o->total);
	if ((uint32_t)r->nchildren < o->total) return;     /* the kept watch tells the next change */
	claim(o);
}

static void registered(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	if (cj_unanswered(r->rc)) {
		again(o, O_REG, 1);
		return;
	}
	if (o->only_reg) {
		finish(o);              /* the other one waits, and sees these */
		return;
	}
	/* NODEEXISTS: written before (a write whose answer was lost); NONODE: the fire is done */
	if (r->rc != ZOK && r->rc != ZNODEEXISTS) {
		log_warn("job %s: fire %" PRIu64 ": afterAll: writing its completed items: %s; it does not wait for them here",
		         o->j->name, o->fire_ms, zerror(r->rc));
		finish(o);
		return;
	}
	wait_all(o);
}

/* ---- the claim, the run --------------------------------------------------------------------- */

static void claimed(void *arg, const struct zkc_res *r);

static void claim(struct once *o)
{
	char p[CJ_PATH_MAX];
	const char *id = o->j->c->id;
	zkc_keep_free(o->w);
	o->w = NULL;
	o->state = O_CLAIM;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_check(m, opath(o, p, ""), 0);
	zkc_multi_create(m, opath(o, p, "/afterAll"), id, (int)strlen(id), ZOO_EPHEMERAL);
	zkc_multi_create(m, opath(o, p, "/runs/r-"), id, (int)strlen(id), ZOO_SEQUENCE);
	if (zkc_multi_commit(o->j->c->z, m, claimed, o) != ZOK) {
		o->state = O_END;       /* claim again when connected */
		o->again = 2;
	}
}

static void run_done(void *arg, enum listen_result res, const char *why, uint64_t us);

static void runs_counted(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	if (o->state != O_RUN || o->lr) return;
	o->takeover = r->rc == ZOK && r->nchildren > 1;
	const conf_job_t *cj = cj_conf(o->j);
	if (!cj->listener.after_all) {
		run_done(o, LISTEN_OK, "no afterAll in the config in force", 0);
		return;
	}
	char *ctx = listen_once_context_json(cj, o->total, o->fire_ms, o->epoch, o->takeover);
	if (!ctx) {
		run_done(o, LISTEN_FAILED, "out of memory", 0);
		return;
	}
	struct listen_spec s = {
		.job = o->j->name, .kind = "afterAll", .cmd = cj->listener.after_all, .context = ctx, .fire_ms = o->fire_ms,
		.epoch = o->epoch, .timeout_s = (uint32_t)cj->listener.timeout_seconds, .takeover = (unsigned)o->takeover,
		.lease_ms = cx_once_lease_ms(o->j),
	};
	log_info("job %s: fire %" PRIu64 ": every item has completed: its afterAll runs here%s", o->j->name, o->fire_ms,
	         o->takeover ? " (a takeover: an earlier run was cut short)" : "");
	o->lr = listen_start(o->j->c->listen, &s, run_done, o);
	free(ctx);
	if (!o->lr) run_done(o, LISTEN_FAILED, "out of memory", 0);
}

static void claimed(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	char p[CJ_PATH_MAX];
	if (o->state != O_CLAIM) return;
	if (r->rc == ZOK) {
		o->state = O_RUN;
		zkc_children(o->j->c->z, opath(o, p, "/runs"), NULL, NULL, runs_counted, o);
		return;
	}
	if (cj_unanswered(r->rc)) {
		again(o, O_END, 2);     /* claim again when connected (a claim of ours is found and deleted) */
		return;
	}
	int check = r->nops > 0 ? r->op_rc[0] : r->rc, take = r->nops > 1 ? r->op_rc[1] : r->rc;
	if (check == ZBADVERSION || check == ZNONODE) {
		/* done (and maybe cleaned up) by another instance */
		finish(o);
		return;
	}
	if (take == ZNODEEXISTS) {
		/* held: watch it (a claim of ours from before a lost connection is deleted there) */
		hold(o);
		return;
	}
	log_warn("job %s: fire %" PRIu64 ": afterAll: claiming it: %s; it does not run here", o->j->name, o->fire_ms,
	         zerror(r->rc));
	finish(o);
}

static void holder(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	char p[CJ_PATH_MAX];
	if (o->state != O_HELD) return;
	if (r->rc == ZNONODE) {
		claim(o);               /* done (the claim fails its check) or its holder's session ended */
		return;
	}
	if (r->rc == ZOK && (int64_t)r->stat.ephemeralOwner == zkc_session_id(o->j->c->z)) {
		/* ours, from before a lost connection: its command was killed then; away with it */
		zkc_delete(o->j->c->z, opath(o, p, "/afterAll"), -1, NULL, NULL);
	}
}

static void ended_written(void *arg, const struct zkc_res *r);

static void end_send(struct once *o)
{
	char p[CJ_PATH_MAX];
	o->state = O_END;
	o->again = 0;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_set(m, opath(o, p, ""), "done", 4, 0);
	zkc_multi_delete(m, opath(o, p, "/afterAll"), -1);
	if (zkc_multi_commit(o->j->c->z, m, ended_written, o) != ZOK) o->again = 1;
}

uint32_t cx_once_lease_ms(const struct cjob *j)
{
	int t = zkc_timeout_ms(j->c->z);
	return (uint32_t)(t > 400 ? t / 2 : 200);
}

static void run_done(void *arg, enum listen_result res, const char *why, uint64_t us)
{
	struct once *o = arg;
	o->lr = NULL;
	if (listen_lease_lost(res, why)) {
		/* cut short by this supervisor's own stall, not ended: its session may have expired and
		 * another instance taken over; as after a lost connection, claim again */
		log_warn("job %s: fire %" PRIu64 ": afterAll: %s: it runs again, here or elsewhere", o->j->name, o->fire_ms, why);
		struct event ev = { .type = EVT_LISTENER, .fire_ms = o->fire_ms, .epoch = o->epoch, .reason = "afterAll",
		                    .detail = why, .status = (uint32_t)res, .duration_us = us };
		cj_event(o->j, &ev);
		again(o, O_END, 2);
		return;
	}
	if (res != LISTEN_OK)
		log_warn("job %s: fire %" PRIu64 ": its afterAll listener failed (%s)", o->j->name, o->fire_ms, why);
	else
		log_info("job %s: fire %" PRIu64 ": afterAll done in %.2fs", o->j->name, o->fire_ms, (double)us / 1e6);
	struct event ev = { .type = EVT_LISTENER, .fire_ms = o->fire_ms, .epoch = o->epoch, .reason = "afterAll",
	                    .detail = why, .status = (uint32_t)res, .duration_us = us };
	cj_event(o->j, &ev);
	end_send(o);
}

static void on_listed(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	char p[CJ_PATH_MAX], rel[80];
	zkc_t *z = o->j->c->z;
	for (int i = 0; r->rc == ZOK && !o->j->c->closing && i < r->nchildren; i++) {
		snprintf(rel, sizeof rel, "/on/%.60s", r->children[i]);
		zkc_delete(z, opath(o, p, rel), -1, NULL, NULL);
	}
	if (!o->j->c->closing) {
		zkc_delete(z, opath(o, p, "/on"), -1, NULL, NULL);
		zkc_delete(z, opath(o, p, "/started"), -1, NULL, NULL);   /* beforeAll's, if left: then it stays */
		zkc_delete(z, opath(o, p, ""), -1, NULL, NULL);
	}
	finish(o);
}

static void runs_listed(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	char p[CJ_PATH_MAX], rel[64];
	zkc_t *z = o->j->c->z;
	for (int i = 0; r->rc == ZOK && i < r->nchildren; i++) {
		snprintf(rel, sizeof rel, "/runs/%.40s", r->children[i]);
		zkc_delete(z, opath(o, p, rel), -1, NULL, NULL);
	}
	zkc_delete(z, opath(o, p, "/runs"), -1, NULL, NULL);
	for (uint32_t i = 0; i < o->total; i++) {
		snprintf(rel, sizeof rel, "/completed/%" PRIu32, i);
		zkc_delete(z, opath(o, p, rel), -1, NULL, NULL);
	}
	zkc_delete(z, opath(o, p, "/completed"), -1, NULL, NULL);
	/* the instances that began the fire (cx_once_begin) */
	if (o->j->c->closing || zkc_children(z, opath(o, p, "/on"), NULL, NULL, on_listed, o) != ZOK) finish(o);
}

static void ended_written(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	char p[CJ_PATH_MAX];
	if (cj_unanswered(r->rc)) {
		again(o, O_END, 1);     /* sent again when connected */
		return;
	}
	if (r->rc != ZOK) {
		/* not ours any more (a session that ended: another instance took it over), or done */
		log_warn("job %s: fire %" PRIu64 ": afterAll: marking it done: %s", o->j->name, o->fire_ms, zerror(r->rc));
		finish(o);
		return;
	}
	/* done: its nodes go (a claim now fails its check, a wait finds the node gone) */
	zkc_children(o->j->c->z, opath(o, p, "/runs"), NULL, NULL, runs_listed, o);
}

/* ---- what the fires and the session tell ------------------------------------------------------ */

/* ---- a failover take: the fire its item was part of --------------------------------------------- */

static void find_on(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	if (o->state != O_FIND) return;
	if (cj_unanswered(r->rc)) {
		o->lost = 1;
	} else if (r->rc == ZOK && r->path) {
		const char *q = strstr(r->path, "/guarantee/once/");
		uint64_t id = q ? strtoull(q + 16, NULL, 10) : 0;
		if (id > o->fire_ms) o->fire_ms = id;
	}
	if (--o->left) return;
	if (o->lost) {
		again(o, O_FIND, 3);
		return;
	}
	uint32_t item = o->items[0];
	if (!o->fire_ms) {
		log_info("job %s: failover: item %" PRIu32 ", taken over from %s: no fire of %s waits for its afterAll", o->j->name,
		         item, o->crashed, o->crashed);
		finish(o);
		return;
	}
	log_info("job %s: fire %" PRIu64 ": item %" PRIu32 ", taken over from %s, has completed here: written for its "
	         "afterAll", o->j->name, o->fire_ms, item, o->crashed);
	o->only_reg = has_twin(o);
	reg_send(o);
}

static void find_listed(void *arg, const struct zkc_res *r)
{
	struct once *o = arg;
	char p[CJ_PATH_MAX], rel[200];
	if (o->state != O_FIND) return;
	if (cj_unanswered(r->rc)) {
		again(o, O_FIND, 3);
		return;
	}
	o->left = 1;
	/* the fires that began on the crashed instance before this take: the item was part of the last */
	for (int i = 0; r->rc == ZOK && i < r->nchildren; i++) {
		char *end;
		uint64_t id = strtoull(r->children[i], &end, 10);
		if (*end || !id || id >= o->before_ms) continue;
		snprintf(rel, sizeof rel, "/guarantee/once/%" PRIu64 "/on/%.140s", id, o->crashed);
		if (zkc_exists(o->j->c->z, cj_path(o->j, p, "%s", rel), NULL, NULL, find_on, o) == ZOK) o->left++;
	}
	struct zkc_res none = { .rc = ZNONODE };
	find_on(o, &none);
}

static void find_send(struct once *o)
{
	char p[CJ_PATH_MAX];
	o->state = O_FIND;
	o->again = 0;
	o->lost = 0;
	o->fire_ms = 0;
	if (zkc_children(o->j->c->z, cj_path(o->j, p, "/guarantee/once"), NULL, NULL, find_listed, o) != ZOK) o->again = 3;
}

/* ---- what the fires and the session tell ------------------------------------------------------ */

void cx_once_begin(struct cfire *f)
{
	struct cjob *j = f->j;
	if (f->failover || !f->conf->listener.after_all || !fire_n(f->fire) || !f->monitor || j->c->closing) return;
	if (!f->gw && !(f->gw = calloc(fire_total(f->fire) ? fire_total(f->fire) : 1, 1))) return;
	char p[CJ_PATH_MAX], rel[200];
	zkc_t *z = j->c->z;
	uint64_t ms = fire_id(f->fire);
	zkc_create(z, cj_path(j, p, "/guarantee"), "", 0, 0, NULL, NULL);
	zkc_create(z, cj_path(j, p, "/guarantee/once"), "", 0, 0, NULL, NULL);
	static const char *const sub[] = { "", "/completed", "/runs", "/on" };
	for (size_t k = 0; k < sizeof sub / sizeof sub[0]; k++)
		zkc_create(z, cj_path(j, p, "/guarantee/once/%" PRIu64 "%s", ms, sub[k]), "", 0, 0, NULL, NULL);
	snprintf(rel, sizeof rel, "/on/%.140s", j->c->id);
	zkc_create(z, cj_path(j, p, "/guarantee/once/%" PRIu64 "%s", ms, rel), "", 0, 0, NULL, NULL);
}

/* A fire whose items never all ended (an instance gone with failover: false, its items with it):
 * it will not run, and its nodes go (a wait elsewhere finds them gone and ends too). */
static void give_up(struct cjob *j, struct once *old)
{
	char p[CJ_PATH_MAX];
	if (old->state == O_WAIT && zkc_state(j->c->z) == ZKC_CONNECTED) {
		log_warn("job %s: fire %" PRIu64 ": afterAll: only %d of its %" PRIu32 " items completed, and %u newer fires have "
		         "come: it does not run; its nodes under guarantee/once are deleted", j->name, old->fire_ms, old->seen,
		         old->total, ONCE_PENDING_MAX);
		zkc_keep_free(old->w);
		old->w = NULL;
		old->state = O_END;
		if (zkc_children(j->c->z, opath(old, p, "/runs"), NULL, NULL, runs_listed, old) != ZOK) once_free(old);
		return;
	}
	log_warn("job %s: fire %" PRIu64 ": afterAll: still not every item completed after %u newer fires: no longer "
	         "waited for here", j->name, old->fire_ms, ONCE_PENDING_MAX);
	once_free(old);
}

/* Bounded: a fire still waiting when ONCE_PENDING_MAX newer ones have come here is given up. */
static void adopt(struct cjob *j, struct once *o)
{
	o->seq = ++j->once_seq;
	for (struct once **pp = &j->once; *pp;) {
		struct once *x = *pp;
		if (x->state != O_RUN && x->state != O_CLAIM && x->state != O_END && o->seq - x->seq >= ONCE_PENDING_MAX) {
			*pp = x->next;
			give_up(j, x);
			continue;
		}
		pp = &x->next;
	}
	o->next = j->once;
	j->once = o;
}

void cx_once_fire(struct cfire *f)
{
	struct cjob *j = f->j;
	const conf_job_t *cj = f->conf;
	fire_t *t = f->fire;
	if (!cj->listener.after_all || j->c->closing) return;
	if (f->failover) {
		/* a failover take counts for the fire its item was part of on the crashed instance, found
		 * by that instance's on/ node; a misfire's run again is not a fire's item */
		if (f->misfire_run || !f->crashed || !fire_n(t) || fire_end_of(t, fire_item(t, 0)) == FIRE_OPEN ||
		    fire_end_of(t, fire_item(t, 0)) == FIRE_HANDED_OVER)
			return;
		struct once *o = calloc(1, sizeof *o);
		if (!o || !(o->items = calloc(1, sizeof *o->items)) || !(o->crashed = strdup(f->crashed))) {
			if (o) free(o->items);
			free(o);
			log_error("job %s: out of memory: a failover take's item is not written for its fire's afterAll", j->name);
			return;
		}
		o->j = j;
		o->epoch = fire_epoch(t);
		o->total = fire_total(t);
		o->items[o->nitems++] = fire_item(t, 0);
		o->before_ms = fire_id(t);
		adopt(j, o);
		find_send(o);
		return;
	}
	/* items that ran (but for those written with their completions, cx_once_begin), and items of
	 * this instance the fire did not run (disabled, a failed before): those have their final
	 * outcome too, and the others must not wait for them */
	if ((fire_n(t) && !fire_ended(t)) || !(fire_n(t) + f->nunrun)) return;
	struct once *o = calloc(1, sizeof *o);
	if (!o || !(o->items = calloc(fire_n(t) + f->nunrun + 1, sizeof *o->items))) {
		free(o);
		log_error("job %s: fire %" PRIu64 ": out of memory: its afterAll is not waited for here", j->name, fire_id(t));
		return;
	}
	o->j = j;
	o->fire_ms = fire_id(t);
	o->epoch = fire_epoch(t);
	o->total = fire_total(t);
	for (uint32_t i = 0; i < fire_n(t); i++) {
		uint32_t it = fire_item(t, i);
		if (fire_end_of(t, it) != FIRE_OPEN && fire_end_of(t, it) != FIRE_HANDED_OVER && !(f->gw && f->gw[it]))
			o->items[o->nitems++] = it;
	}
	for (uint32_t i = 0; i < f->nunrun; i++) o->items[o->nitems++] = f->unrun[i];
	adopt(j, o);
	o->only_reg = has_twin(o);
	reg_send(o);
}

void cx_once_state(struct cjob *j, int connected)
{
	for (struct once *o = j->once, *n; o; o = n) {
		n = o->next;
		if (!connected) {
			if (o->state == O_RUN) {
				/* its session may end before it is back: another instance would take over (a
				 * claim whose command has not started yet starts none) */
				if (o->lr) log_warn("job %s: fire %" PRIu64 ": afterAll: the ZooKeeper connection is lost: its command is killed "
				         "(it runs again, here or elsewhere, once the connection or the session is back)",
				         j->name, o->fire_ms);
				listen_cancel(o->lr);
				o->lr = NULL;
				o->state = O_END;
				o->again = 2;
			}
			continue;
		}
		if (o->state == O_FIND && o->again) find_send(o);
		else if (o->state == O_REG && o->again) reg_send(o);
		else if (o->state == O_END && o->again == 1) end_send(o);
		else if (o->state == O_END && o->again == 2) hold(o);
		/* a new session unarmed the kept watch */
		else if (o->state == O_WAIT && !zkc_keep_armed(o->w)) wait_all(o);
		else if (o->state == O_HELD && !zkc_keep_armed(o->w)) hold(o);
	}
}

void cx_once_free(struct cjob *j)
{
	while (j->once) {
		struct once *o = j->once;
		j->once = o->next;
		once_free(o);
	}
}
