/* supervisor/coord/coord_failover.c: every item of a crashed instance handed out at once. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_int.h"

/* ---- failover ---------------------------------------------------------------------------------------
 *
 * With failover on, running nodes are persistent, so they outlive a crashed instance. The leader
 * sees an instance go (its instances/ watch), reads the running nodes of the items that instance
 * owned, and hands every one of them out at once, round robin over the instances still there, in
 * one fenced multi: leader/failover/items/{i} queued and sharding/{i}/failovering naming the taker,
 * the stale running node removed. Every instance watches leader/failover/items: an item whose
 * failovering names it is taken in one multi (failover and running created, the queue entry
 * removed) and run at once. A taker that dies before taking leaves its items queued; the leader
 * hands them out again at the next change of instances. An item queued without a taker (by the
 * instance that ran it, rejoining under the same id) gets one from the leader. */

struct crash {
	struct cjob *j;
	uint64_t session;
	char *gone;                 /* the instance that went */
	uint32_t left, n;
	uint32_t *items;
	char **owner;               /* [n]: whose running node each item had */
	uint8_t *fo_exists;         /* [n]: sharding/{i}/failovering exists (a taker that died running it) */
};

static void failover_crashed(struct cjob *j, const char *gone);

/* An instance whose node went while its session lives (an operator deleted instances/{id}) is
 * still stopping its items: they are not handed out now, or they would run twice. It queues them
 * itself once they have stopped (coord_running.c); if it dies first, its alive node goes with its
 * session, and this watch hands them out then. */
struct alive_wait {
	struct cjob *j;
	zkc_keep_t *k;              /* leader/failover/alive/{who} (exists) */
	char *who;
	uint32_t n;                 /* items handed out */
	int to;                     /* to that many instances */
	struct alive_wait *next;    /* the job's fo.alive list */
};

static void alive_free(struct alive_wait *w)
{
	for (struct alive_wait **pp = &w->j->fo.alive; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	zkc_keep_free(w->k);        /* also from inside its own callback */
	free(w->who);
	free(w);
}

static void alive_known(void *arg, const struct zkc_res *r)
{
	struct alive_wait *w = arg;
	struct cjob *j = w->j;
	if (r->rc == ZOK) return;      /* alive: its kept watch tells when it goes */
	if (r->rc == ZNONODE && cj_live(j, r->session) && j->lead.leader) {
		if (r->event) log_info("job %s: failover: instance %s has ended its session", j->name, w->who);
		failover_crashed(j, w->who);
	}
	alive_free(w);
}

static void hand_out_done(void *arg, const struct zkc_res *r)
{
	struct alive_wait *w = arg;
	struct cjob *j = w->j;
	if (r->rc == ZOK)
		log_info("job %s: failover: %" PRIu32 " item%s of a crashed instance handed out to %d instance%s at once", j->name,
		         w->n, w->n == 1 ? "" : "s", w->to, w->to == 1 ? "" : "s");
	else if (r->nops > 2 && r->op_rc[1] == ZNODEEXISTS && cj_live(j, r->session) && j->lead.leader) {
		log_info("job %s: failover: instance %s is gone from instances/ but its session lives (an operator's shutdown): "
		         "its items are handed out once it has stopped them", j->name, w->who);
		char p[CJ_PATH_MAX];
		w->next = j->fo.alive;
		j->fo.alive = w;
		w->k = zkc_keep_new(j->c->z, ZKC_KEEP_EXISTS, cj_path(j, p, "/leader/failover/alive/%s", w->who), ZKC_NO_ITEM,
		                    alive_known, w);
		if (zkc_keep_arm(w->k) != ZOK) alive_free(w);
		return;
	}
	free(w->who);
	free(w);
}

static void hand_out(struct cjob *j, const char *gone, const uint32_t *items, const uint8_t *fo_exists, uint32_t n)
{
	if (!j->lead.leader || !j->lead.nlive || !n) return;
	struct alive_wait *w = calloc(1, sizeof *w);
	if (!w || !(w->who = strdup(gone))) {
		free(w);
		return;
	}
	w->j = j;
	char p[CJ_PATH_MAX];
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_check(m, cj_path(j, p, "/leader/election"), j->lead.fence);
	/* only if its session is over: creating its alive node fails while that lives */
	zkc_multi_create(m, cj_path(j, p, "/leader/failover/alive/%s", gone), "", 0, 0);
	zkc_multi_delete(m, p, -1);
	for (uint32_t k = 0; k < n; k++) {
		/* round robin over the instances there, going on from the last hand-out's end, so that
		 * the items of several instances that went at once spread out too */
		const char *to = j->lead.live[(j->fo.rr + k) % (uint32_t)j->lead.nlive];
		/* the crashed instance: its taker finds the fire the item was part of (afterAll, coord_once.c);
		 * ElasticJob writes "" and never reads it */
		zkc_multi_create(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, items[k]), gone, (int)strlen(gone), 0);
		/* an item the instance had itself taken over still names it as its taker */
		if (fo_exists[k])
			zkc_multi_set(m, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", items[k]), to, (int)strlen(to), -1);
		else
			zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", items[k]), to, (int)strlen(to), 0);
		zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", items[k]), -1);
	}
	j->fo.rr += n;
	w->n = n;
	w->to = j->lead.nlive < (int)n ? j->lead.nlive : (int)n;
	if (zkc_multi_commit(j->c->z, m, hand_out_done, w) != ZOK) {
		free(w->who);
		free(w);
	}
}

static void crash_free(struct crash *cr)
{
	for (uint32_t a = 0; a < cr->n; a++) free(cr->owner[a]);
	free(cr->owner);
	free(cr->gone);
	free(cr->items);
	free(cr->fo_exists);
	free(cr);
}

/* every answer in: one hand-out per instance that went (a new leader may find several) */
static void crash_hand_out(struct crash *cr)
{
	struct cjob *j = cr->j;
	uint32_t *mine = calloc(cr->n ? cr->n : 1, sizeof *mine);
	uint8_t *fo = calloc(cr->n ? cr->n : 1, 1);
	for (uint32_t a = 0; mine && fo && cj_live(j, cr->session) && a < cr->n; a++) {
		if (!cr->owner[a]) continue;
		uint32_t k = 0;
		char *who = cr->owner[a];
		for (uint32_t b = a; b < cr->n; b++)
			if (cr->owner[b] && !strcmp(cr->owner[b], who)) {
				fo[k] = cr->fo_exists[b];
				mine[k++] = cr->items[b];
				if (b != a) {
					free(cr->owner[b]);
					cr->owner[b] = NULL;
				}
			}
		hand_out(j, who, mine, fo, k);
	}
	free(mine);
	free(fo);
	crash_free(cr);
}

static void crashed_failovering(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	if (r->rc == ZOK)
		for (uint32_t a = 0; a < cr->n; a++)
			if (cr->items[a] == r->item) cr->fo_exists[a] = 1;
	if (--cr->left) return;
	crash_hand_out(cr);
}

static void crashed_running(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	int hit = 0;
	if (r->rc == ZOK && r->data) {
		if (cr->gone) {
			hit = !strcmp(r->data, cr->gone);
		} else {            /* a new leader: any running node of an instance that is not there */
			hit = 1;
			for (int k = 0; k < cr->j->lead.nlive && hit; k++) hit = strcmp(r->data, cr->j->lead.live[k]) != 0;
		}
	}
	if (hit && (cr->owner[cr->n] = strdup(r->data))) cr->items[cr->n++] = r->item;
	if (--cr->left) return;
	/* the items found: is a taker named for any (one that died running it)? */
	struct cjob *j = cr->j;
	cr->left = 1;
	char p[CJ_PATH_MAX];
	for (uint32_t a = 0; cj_live(j, cr->session) && a < cr->n; a++)
		if (zkc_exists_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", cr->items[a]), cr->items[a],
		                    NULL, NULL, crashed_failovering, cr) == ZOK)
			cr->left++;
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	crashed_failovering(cr, &go);
}

/* the leader: instance `gone` left; which of its items were running? */
static void failover_crashed(struct cjob *j, const char *gone)
{
	if (!cj_conf(j)->failover || !j->as.have) return;
	struct crash *cr = calloc(1, sizeof *cr);
	size_t cap = j->as.total ? j->as.total : 1;
	if (!cr || (gone && !(cr->gone = strdup(gone))) || !(cr->items = calloc(cap, sizeof *cr->items)) ||
	    !(cr->owner = calloc(cap, sizeof *cr->owner)) || !(cr->fo_exists = calloc(cap, 1))) {
		if (cr) crash_free(cr);
		else free(cr);
		return;
	}
	cr->j = j;
	cr->session = zkc_session(j->c->z);
	cr->left = 1;
	char p[CJ_PATH_MAX];
	/* every item: the crashed instance may run an item it owned, or one it had taken over */
	for (uint32_t i = 0; i < j->as.total; i++)
		if (zkc_get_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), i, NULL, NULL, crashed_running, cr) ==
		    ZOK)
			cr->left++;
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	crashed_running(cr, &go);
}

void cf_instances(struct cjob *j, char *const *old, int nold)
{
	/* who went since the last listing (lead.live is the new one, where items are handed out) */
	for (int k = 0; k < nold; k++) {
		int still = 0;
		for (int i = 0; i < j->lead.nlive && !still; i++) still = !strcmp(old[k], j->lead.live[i]);
		if (still) continue;
		log_info("job %s: instance %s went away", j->name, old[k]);
		failover_crashed(j, old[k]);
	}
	/* a new leader does not know who was there before: items running for an instance that is
	 * not there now crashed with it (it may have been the old leader) */
	if (!old) failover_crashed(j, NULL);
	/* queued items whose taker is gone: hand them out again */
	cf_scan(j);
}

/* ---- taking over ---- */

static void taken(void *arg, const struct zkc_res *r);

struct take {
	struct cjob *j;
	uint32_t item;
	char *gone;                 /* the crashed instance, as its queue entry names it (NULL: unknown) */
};

static void take_free(struct take *t)
{
	free(t->gone);
	free(t);
}

static void failovering_read(void *arg, const struct zkc_res *r)
{
	struct take *t = arg;
	struct cjob *j = t->j;
	uint32_t i = t->item;
	if (cj_live(j, r->session) && r->rc == ZNONODE && j->lead.leader && j->lead.nlive) {
		/* queued without a taker: by the instance that ran it, back under the same id in a new
		 * session (coord_running.c). The leader names one; the entry is queued again in the same
		 * multi, so every instance's watch on the queue sees a change and reads the taker. */
		char p[CJ_PATH_MAX];
		const char *to = j->lead.live[i % (uint32_t)j->lead.nlive];
		zkc_multi_t *m = zkc_multi_new();
		zkc_multi_check(m, cj_path(j, p, "/leader/election"), j->lead.fence);
		zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", i), to, (int)strlen(to), 0);
		zkc_multi_delete(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, i), -1);
		zkc_multi_create(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, i), "", 0, 0);
		if (zkc_multi_commit(j->c->z, m, NULL, NULL) == ZOK)
			log_info("job %s: failover: item %" PRIu32 " was queued without a taker: handing it to %s", j->name, i, to);
		take_free(t);
		return;
	}
	if (!cj_live(j, r->session) || r->rc != ZOK || !r->data) {
		take_free(t);
		return;
	}
	const char *me = j->c->id;
	if (strcmp(r->data, me)) {
		/* the leader: queued for an instance that is gone? hand it out again */
		int there = 0;
		for (int k = 0; k < j->lead.nlive && !there; k++) there = !strcmp(j->lead.live[k], r->data);
		if (j->lead.leader && j->lead.nlive && !there) {
			/* named again, and queued again in the same multi so that every instance's watch on
			 * the queue sees a change and reads its new taker */
			char p[CJ_PATH_MAX];
			const char *to = j->lead.live[i % (uint32_t)j->lead.nlive];
			zkc_multi_t *m = zkc_multi_new();
			zkc_multi_check(m, cj_path(j, p, "/leader/election"), j->lead.fence);
			zkc_multi_set(m, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", i), to, (int)strlen(to), r->stat.version);
			zkc_multi_delete(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, i), -1);
			zkc_multi_create(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, i), "", 0, 0);
			if (zkc_multi_commit(j->c->z, m, NULL, NULL) == ZOK)
				log_info("job %s: failover: item %" PRIu32 " was queued for %s, which is gone: handing it to %s", j->name,
				         i, r->data, to);
		}
		take_free(t);
		return;
	}
	if (i >= j->fo.ntaking || j->fo.taking[i]) {
		take_free(t);
		return;
	}
	j->fo.taking[i] = 1;
	char p[CJ_PATH_MAX];
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/failover", i), me, (int)strlen(me), ZOO_EPHEMERAL);
	zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), me, (int)strlen(me), 0);
	zkc_multi_delete(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, i), -1);
	if (zkc_multi_commit(j->c->z, m, taken, t) != ZOK) {
		j->fo.taking[i] = 0;
		take_free(t);
	}
}

static void taken(void *arg, const struct zkc_res *r)
{
	struct take *t = arg;
	struct cjob *j = t->j;
	uint32_t i = t->item;
	char *gone = t->gone;
	free(t);
	if (i < j->fo.ntaking) j->fo.taking[i] = 0;
	if (r->rc != ZOK || !cj_live(j, r->session)) {
		if (r->rc != ZOK) log_warn("job %s: failover: taking item %" PRIu32 ": %s", j->name, i, zerror(r->rc));
		free(gone);
		return;
	}
	struct cfire *f = cx_side_run(j, i);
	if (!f) {
		free(gone);
		return;
	}
	f->crashed = gone;
	f->monitor = 1;
	j->c->failovers++;
	/* the crashed instance: as the queue entry names it, else the item's owner in the assignment
	 * this instance knows */
	const char *from = gone ? gone : i < j->as.total && j->as.owner && j->as.owner[i] ? j->as.owner[i] : NULL;
	log_info("job %s: failover: took item %" PRIu32 " of a crashed instance%s%s; running it now", j->name, i,
	         from ? " " : "", from ? from : "");
	struct event ev = { .type = EVT_FAILOVER, .item = i, .count = 1, .detail = from, .epoch = j->as.epoch };
	cj_event(j, &ev);
	f->session = zkc_session(j->c->z);
	cx_step(f, FX_WRITTEN, NULL);
}

/* answered before failovering_read, which frees t (or hands gone to the side run) */
static void entry_read(void *arg, const struct zkc_res *r)
{
	struct take *t = arg;
	if (r->rc == ZOK && r->len > 0 && r->data && !t->gone) t->gone = strdup(r->data);
}

static void failover_listed(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK || !j->as.have || j->ops.shut) return;   /* shut down here: no taking */
	if (j->fo.ntaking != j->as.total) {
		free(j->fo.taking);
		j->fo.taking = calloc(j->as.total ? j->as.total : 1, 1);
		j->fo.ntaking = j->fo.taking ? j->as.total : 0;
	}
	char p[CJ_PATH_MAX];
	for (int k = 0; k < r->nchildren; k++) {
		struct take *t = calloc(1, sizeof *t);
		if (!t) return;
		t->j = j;
		t->item = (uint32_t)strtoul(r->children[k], NULL, 10);
		/* the entry's data first (answered in order): the crashed instance */
		if (cj_conf(j)->listener.after_all)
			zkc_get(j->c->z, cj_path(j, p, "/leader/failover/items/%" PRIu32, t->item), NULL, NULL, entry_read, t);
		if (zkc_get(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", t->item), NULL, NULL, failovering_read, t) != ZOK)
			take_free(t);
	}
}

/* leader/failover/items, kept while the job fails over (a job with failover: false watches
 * nothing here: no one queues its items) */
void cf_scan(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	if (!cj_conf(j)->failover) {
		zkc_keep_free(j->fo.w_items);
		j->fo.w_items = NULL;
		return;
	}
	zkc_keep_read(cj_keep(j, &j->fo.w_items, ZKC_KEEP_CHILDREN, cj_path(j, p, "/leader/failover/items"), ZKC_NO_ITEM,
	                      failover_listed));
}

void cf_unwatch(struct cjob *j)
{
	while (j->fo.alive) alive_free(j->fo.alive);
	zkc_keep_free(j->fo.w_items);
	j->fo.w_items = NULL;
}

void cf_free(struct cjob *j)
{
	cf_unwatch(j);
	free(j->fo.taking);
}
