/* supervisor/coord/coord_failover.c: every item of a crashed instance handed out at once. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/lastrun.h"
#include "ipc/wait.h"
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
 * instance that ran it, rejoining under the same id) gets one from the leader.
 *
 * Items of the instance that went that were not running are handed out the same way when fires
 * came while it could not run them (missed_decide): its taker runs one catch-up for them. A
 * returning instance's own catch-up leaves such items out (cf_vet). docs/design.md, "Missed fires
 * fail over too". */

/* An item of an instance that went which was not running when it went: did fires pass it by? The
 * owner ran the fires of its assignment while it could; those that came after it could not (it died,
 * or lost its connection and stopped dispatching) and before the resharding flag that its going
 * raised (fires after that flag wait for the reshard and run under the new assignment) ran nowhere.
 * The item's last record (sharding/{i}/last, coord_last.c) says the latest fire it ran for. */
struct miss {
	char *owner;                /* its owner in the assignment (the instance that went); NULL: not looked at */
	int ejob;                   /* the owner was an ejob instance (it writes last records) at the last listing */
	int64_t from_ms;            /* sharding/{i}/instance's mtime (ZooKeeper's clock); -1: it names another */
	int64_t rec_ms;             /* its last record's fireId; -1: no record */
	int rec_own;                /* that record is its owner's */
	int off;                    /* disabled, its server disabled, queued already, or unknown: not handed out */
};

struct crash {
	struct cjob *j;
	uint64_t session;
	char *gone;                 /* the instance that went */
	uint32_t left, n;
	uint32_t *items;
	char **owner;               /* [n]: whose running node each item had (a missed item: its owner) */
	uint8_t *fo_exists;         /* [n]: sharding/{i}/failovering exists (a taker that died running it) */
	char **entry;               /* [n]: the queue entry of an item with missed fires (the owner, the
	                               fires it stands for); NULL: the owner's id alone */
	uint8_t *idle;              /* [n]: not running when its owner went (missed fires only) */
	uint32_t total;             /* the assignment's size the two below are of */
	uint8_t *run;               /* [total]: sharding/{i}/running is there (anyone's) */
	struct miss *miss;          /* [total] */
	int64_t call_ms;            /* this machine's clock when the leader saw it go */
	int64_t flag_ms;            /* leader/sharding/necessary's ctime (ZooKeeper's clock); -1: not there */
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
	uint32_t nmissed;           /* of them, items that were not running: fires missed */
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
	if (r->rc == ZOK && w->nmissed)
		log_info("job %s: failover: %" PRIu32 " item%s of a crashed instance handed out to %d instance%s at once (%" PRIu32
		         " not running, whose fires came while %s could not run them: one catch-up each)", j->name, w->n,
		         w->n == 1 ? "" : "s", w->to, w->to == 1 ? "" : "s", w->nmissed, w->who);
	else if (r->rc == ZOK)
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

static void hand_out(struct cjob *j, const char *gone, const uint32_t *items, const uint8_t *fo_exists, char *const *entry,
                     const uint8_t *idle, uint32_t n)
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
		 * a missed item's: the fires its run stands for too. ElasticJob writes "" and never reads it */
		const char *e = entry[k] ? entry[k] : gone;
		zkc_multi_create(m, cj_path(j, p, "/leader/failover/items/%" PRIu32, items[k]), e, (int)strlen(e), 0);
		/* an item the instance had itself taken over still names it as its taker */
		if (fo_exists[k])
			zkc_multi_set(m, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", items[k]), to, (int)strlen(to), -1);
		else
			zkc_multi_create(m, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", items[k]), to, (int)strlen(to), 0);
		if (idle[k]) w->nmissed++;      /* not running: no running node to remove */
		else zkc_multi_delete(m, cj_path(j, p, "/sharding/%" PRIu32 "/running", items[k]), -1);
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
	for (uint32_t a = 0; a < cr->n; a++) {
		free(cr->owner[a]);
		free(cr->entry[a]);
	}
	for (uint32_t i = 0; cr->miss && i < cr->total; i++) free(cr->miss[i].owner);
	free(cr->owner);
	free(cr->entry);
	free(cr->idle);
	free(cr->gone);
	free(cr->items);
	free(cr->fo_exists);
	free(cr->run);
	free(cr->miss);
	free(cr);
}

/* every answer in: one hand-out per instance that went (a new leader may find several) */
static void crash_hand_out(struct crash *cr)
{
	struct cjob *j = cr->j;
	uint32_t *mine = calloc(cr->n ? cr->n : 1, sizeof *mine);
	uint8_t *fo = calloc(cr->n ? cr->n : 1, 1);
	char **ent = calloc(cr->n ? cr->n : 1, sizeof *ent);
	uint8_t *idle = calloc(cr->n ? cr->n : 1, 1);
	for (uint32_t a = 0; mine && fo && ent && idle && cj_live(j, cr->session) && a < cr->n; a++) {
		if (!cr->owner[a]) continue;
		uint32_t k = 0;
		char *who = cr->owner[a];
		for (uint32_t b = a; b < cr->n; b++)
			if (cr->owner[b] && !strcmp(cr->owner[b], who)) {
				fo[k] = cr->fo_exists[b];
				ent[k] = cr->entry[b];
				idle[k] = cr->idle[b];
				mine[k++] = cr->items[b];
				if (b != a) {
					free(cr->owner[b]);
					cr->owner[b] = NULL;
				}
			}
		hand_out(j, who, mine, fo, ent, idle, k);
	}
	free(mine);
	free(fo);
	free(ent);
	free(idle);
	crash_free(cr);
}

static void crashed_failovering(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	if (r->rc == ZOK)
		for (uint32_t a = 0; a < cr->n; a++)
			if (cr->items[a] == r->item && !cr->idle[a]) cr->fo_exists[a] = 1;
	if (--cr->left) return;
	crash_hand_out(cr);
}

/* The fire times of j's cron after lo_ms and before to_ms (this machine's clock): how many (up to
 * SCHED_MISSED_CAP), the latest SCHED_LISTED of them in fires_s, ascending. */
static uint32_t fires_between(const conf_job_t *cj, const tz_t *tz, int64_t lo_ms, int64_t to_ms, int64_t *fires_s,
                              uint32_t *nlisted)
{
	uint32_t n = 0;
	*nlisted = 0;
	int64_t t = lo_ms < 0 ? -1 : lo_ms / 1000;
	while (n < SCHED_MISSED_CAP && (t = cron_next(cj->cron_compiled, tz, t)) >= 0 && t * 1000 < to_ms) {
		if (t * 1000 <= lo_ms) continue;
		if (*nlisted == SCHED_LISTED) memmove(fires_s, fires_s + 1, (SCHED_LISTED - 1) * sizeof *fires_s);
		else (*nlisted)++;
		fires_s[*nlisted - 1] = t;
		n++;
	}
	return n;
}

/* The latest fire time of j's cron at or before at_ms, if it is at most back_ms before it; -1: none. */
static int64_t fire_at_or_before(const conf_job_t *cj, const tz_t *tz, int64_t at_ms, int64_t back_ms)
{
	int64_t t = (at_ms - back_ms) / 1000 - 1, found = -1;
	while ((t = cron_next(cj->cron_compiled, tz, t)) >= 0 && t * 1000 <= at_ms) found = t;
	return found;
}

/* The fires of item i (its owner m->owner went) that came after its last run and before to_ms, as
 * the queue entry of its hand-out (malloc'd): "{owner}\n{kind} N t1 t2 ...", or NULL: none. */
static char *missed_entry(const struct cjob *j, const struct miss *m, uint32_t i, const tz_t *tz, int64_t off,
                          int64_t to_ms, const char *kind)
{
	const conf_job_t *cj = cj_conf(j);
	int64_t back_ms = 2 * (int64_t)zkc_timeout_ms(j->c->z) + 1000;
	int64_t fires_s[SCHED_LISTED];
	/* the assignment's first fire: the one that waited for its commit (the leader shards when a
	 * fire needs it), if one came within the bounded wait before it; else its commit */
	int64_t from = m->from_ms + off;
	int64_t first = fire_at_or_before(cj, tz, from, back_ms);
	int64_t lo = first >= 0 ? first * 1000 - 1 : from;
	if (m->rec_ms > lo) lo = m->rec_ms;     /* it ran that fire (or a catch-up standing for it) */
	uint32_t nl;
	uint32_t nf = fires_between(cj, tz, lo, to_ms, fires_s, &nl);
	if (!nf) return NULL;
	size_t cap = strlen(m->owner) + 40 + (size_t)nl * 21;
	char *e = malloc(cap);
	if (!e) return NULL;
	size_t o = (size_t)snprintf(e, cap, "%s\n%s %" PRIu32, m->owner, kind, nf);
	for (uint32_t k = 0; k < nl && o < cap; k++) o += (size_t)snprintf(e + o, cap - o, " %" PRId64, fires_s[k]);
	log_info("job %s: failover: item %" PRIu32 " of %s: %" PRIu32 " fire%s (the latest %" PRId64 "000) came while %s "
	         "could not run %s%s", j->name, i, m->owner, nf, nf == 1 ? "" : "s", fires_s[nl - 1], m->owner,
	         nf == 1 ? "it" : "them", strcmp(kind, "fires") ? "; its take stands for them" : ": handed out as one catch-up");
	return e;
}

/* The reads are in: which items that were not running did fires pass by? Each becomes a failover
 * item whose queue entry names the fires its one run stands for. A crashed item's take stands for
 * the fires that came while it ran on its dead owner too (one run after it, as a misfire flag's). */
static void missed_decide(struct crash *cr)
{
	struct cjob *j = cr->j;
	const conf_job_t *cj = cj_conf(j);
	/* only as crashed items are (failover on), only where a missed fire has a catch-up (misfire on:
	 * with misfire off the scheduler drops missed fires, and so does this), only where runs leave
	 * records (monitorExecution) and fires are the cron's */
	if (!cr->miss || !cj->misfire || !cj->monitor_execution || cj->disabled || !cj->cron_compiled ||
	    cr->total != j->as.total)
		return;
	const tz_t *tz = cj->tz ? cj->tz : j->c->local;
	int64_t off = j->chk.clock_known ? j->chk.clock_off_ms : 0;
	/* A fire before the resharding flag ran (or not) under the assignment read; one after it waits
	 * for the reshard and is its new owner's ordinary fire (coord_fsm.c flag_after). No flag (it
	 * was raised after our read, or staticSharding raises none): the fires before the leader saw
	 * the instance go. */
	int64_t to_ms = cr->flag_ms >= 0 ? cr->flag_ms + off : cr->call_ms;
	/* crashed items its owner ran (owned in the assignment, their owner's running node) */
	for (uint32_t a = 0; a < cr->n; a++) {
		uint32_t i = cr->items[a];
		struct miss *m = i < cr->total ? &cr->miss[i] : NULL;
		if (!m || !m->owner || m->off || m->from_ms < 0 || !(m->ejob || m->rec_own) || strcmp(m->owner, cr->owner[a]))
			continue;
		cr->entry[a] = missed_entry(j, m, i, tz, off, to_ms, "crashed");
	}
	for (uint32_t i = 0; i < cr->total && cr->n < cr->total; i++) {
		struct miss *m = &cr->miss[i];
		if (!m->owner || m->off || cr->run[i] || m->from_ms < 0 || !(m->ejob || m->rec_own)) continue;
		char *e = missed_entry(j, m, i, tz, off, to_ms, "fires");
		if (!e) continue;
		cr->items[cr->n] = i;
		cr->entry[cr->n] = e;
		cr->idle[cr->n] = 1;
		cr->owner[cr->n++] = m->owner;
		m->owner = NULL;
	}
}

/* one more read answered; all in: the missed items decided, then the failovering nodes of the
 * crashed ones read */
static void crash_counted(struct crash *cr)
{
	if (--cr->left) return;
	struct cjob *j = cr->j;
	if (cj_live(j, cr->session)) missed_decide(cr);
	/* the items found: is a taker named for any crashed one (one that died running it)? */
	cr->left = 1;
	char p[CJ_PATH_MAX];
	for (uint32_t a = 0; cj_live(j, cr->session) && a < cr->n; a++)
		if (!cr->idle[a] && zkc_exists_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", cr->items[a]),
		                                     cr->items[a], NULL, NULL, crashed_failovering, cr) == ZOK)
			cr->left++;
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	crashed_failovering(cr, &go);
}

static void crashed_running(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	int hit = 0;
	if (r->rc == ZOK && r->item < cr->total && cr->run) cr->run[r->item] = 1;
	if (r->rc == ZOK && r->data) {
		if (cr->gone) {
			hit = !strcmp(r->data, cr->gone);
		} else {            /* a new leader: any running node of an instance that is not there */
			hit = 1;
			for (int k = 0; k < cr->j->lead.nlive && hit; k++) hit = strcmp(r->data, cr->j->lead.live[k]) != 0;
		}
	} else if (r->rc != ZOK && r->rc != ZNONODE && r->item < cr->total && cr->miss) {
		cr->miss[r->item].off = 1;     /* not known whether it runs: not a missed item */
	}
	if (hit && (cr->owner[cr->n] = strdup(r->data))) cr->items[cr->n++] = r->item;
	crash_counted(cr);
}

/* ---- what a missed item's reads say ---- */

static void miss_instance(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	struct miss *m = r->item < cr->total ? &cr->miss[r->item] : NULL;
	if (m && m->owner) {
		if (r->rc == ZOK && r->data && !strcmp(r->data, m->owner)) m->from_ms = r->stat.mtime;
		else m->from_ms = -1;       /* resharded since: its fires are another's */
	}
	crash_counted(cr);
}

/* disabled, failovering, leader/failover/items/{i}: there (or not known) means not handed out */
static void miss_there(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	if (r->item < cr->total && r->rc != ZNONODE) cr->miss[r->item].off = 1;
	crash_counted(cr);
}

static void miss_server(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	if (r->item < cr->total && r->rc == ZOK && r->data && !strcmp(r->data, "DISABLED")) cr->miss[r->item].off = 1;
	crash_counted(cr);
}

static void miss_last(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	struct miss *m = r->item < cr->total ? &cr->miss[r->item] : NULL;
	struct lastrun lr;
	if (!m) {
	} else if (r->rc == ZNONODE) {
		m->rec_ms = -1;
	} else if (r->rc == ZOK && lastrun_parse(r->data, r->data ? (size_t)r->len : 0, &lr) == 1) {
		m->rec_ms = (int64_t)lr.fire_id;
		m->rec_own = m->owner && !strcmp(lr.instance, m->owner);
		lastrun_clear(&lr);
	} else {
		m->off = 1;                 /* a record it cannot read: not known what ran */
	}
	crash_counted(cr);
}

static void crash_flag(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	cr->flag_ms = r->rc == ZOK ? r->stat.ctime : -1;
	crash_counted(cr);
}

static int is_live(const struct cjob *j, const char *id)
{
	for (int k = 0; k < j->lead.nlive; k++)
		if (!strcmp(j->lead.live[k], id)) return 1;
	return 0;
}

static int is_ejob(const struct cjob *j, const char *id)
{
	for (int k = 0; k < j->fo.nejob; k++)
		if (!strcmp(j->fo.ejob[k], id)) return 1;
	return 0;
}

/* the reads for item i of owner, not running when it went (or running: crashed_running says) */
static void miss_read(struct crash *cr, uint32_t i, const char *owner)
{
	struct cjob *j = cr->j;
	struct miss *m = &cr->miss[i];
	char p[CJ_PATH_MAX], ip[160];
	if (!(m->owner = strdup(owner))) return;
	m->ejob = is_ejob(j, owner);
	m->from_ms = -1;            /* until its read says since when */
	m->rec_ms = -1;
	const char *at = strstr(owner, "@-@");
	snprintf(ip, sizeof ip, "%.*s", at ? (int)(at - owner) : (int)strlen(owner), owner);
	zkc_t *z = j->c->z;
	if (zkc_get_item(z, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), i, NULL, NULL, miss_instance, cr) == ZOK)
		cr->left++;
	if (zkc_exists_item(z, cj_path(j, p, "/sharding/%" PRIu32 "/disabled", i), i, NULL, NULL, miss_there, cr) == ZOK)
		cr->left++;
	if (zkc_exists_item(z, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", i), i, NULL, NULL, miss_there, cr) == ZOK)
		cr->left++;
	if (zkc_exists_item(z, cj_path(j, p, "/leader/failover/items/%" PRIu32, i), i, NULL, NULL, miss_there, cr) == ZOK)
		cr->left++;
	if (zkc_get_item(z, cj_path(j, p, "/servers/%s", ip), i, NULL, NULL, miss_server, cr) == ZOK) cr->left++;
	if (zkc_get_item(z, cj_path(j, p, "/sharding/%" PRIu32 "/last", i), i, NULL, NULL, miss_last, cr) == ZOK)
		cr->left++;
}

/* the leader: instance `gone` left (NULL: a new leader, any instance not there); which of its items
 * were running, and which did fires pass by? */
static void failover_crashed(struct cjob *j, const char *gone)
{
	if (!cj_conf(j)->failover || !j->as.have) return;
	struct crash *cr = calloc(1, sizeof *cr);
	size_t cap = j->as.total ? j->as.total : 1;
	if (!cr || (gone && !(cr->gone = strdup(gone))) || !(cr->items = calloc(cap, sizeof *cr->items)) ||
	    !(cr->owner = calloc(cap, sizeof *cr->owner)) || !(cr->fo_exists = calloc(cap, 1)) ||
	    !(cr->entry = calloc(cap, sizeof *cr->entry)) || !(cr->idle = calloc(cap, 1)) || !(cr->run = calloc(cap, 1)) ||
	    !(cr->miss = calloc(cap, sizeof *cr->miss))) {
		if (cr) crash_free(cr);
		return;
	}
	cr->j = j;
	cr->total = j->as.total;
	cr->session = zkc_session(j->c->z);
	cr->call_ms = (int64_t)(wait_realtime_ns() / 1000000u);
	cr->flag_ms = -1;
	cr->left = 1;
	char p[CJ_PATH_MAX];
	/* every item: the crashed instance may run an item it owned, or one it had taken over */
	for (uint32_t i = 0; i < j->as.total; i++)
		if (zkc_get_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/running", i), i, NULL, NULL, crashed_running, cr) ==
		    ZOK)
			cr->left++;
	/* the items it owned: fires that came while it could not run them (missed_decide) */
	for (uint32_t i = 0; i < j->as.total; i++) {
		const char *o = j->as.owner ? j->as.owner[i] : NULL;
		if (o && *o && (gone ? !strcmp(o, gone) : !is_live(j, o))) miss_read(cr, i, o);
	}
	/* last, after the flag its going raised (the listing sent that first) */
	if (zkc_exists(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), NULL, NULL, crash_flag, cr) == ZOK) cr->left++;
	crash_counted(cr);
}

static void ejob_listed(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK || !j->lead.leader) return;
	char **v = calloc((size_t)r->nchildren + 1, sizeof *v);
	if (!v) return;
	int n = 0;
	for (int k = 0; k < r->nchildren; k++)
		if (cj_id_ok(r->children[k]) && (v[n] = strdup(r->children[k]))) n++;
	for (int k = 0; k < j->fo.nejob; k++) free(j->fo.ejob[k]);
	free(j->fo.ejob);
	j->fo.ejob = v;
	j->fo.nejob = n;
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
		cx_flow_gone(j, old[k]);    /* a workflow run's trigger it never took (coord_flow.c) */
	}
	/* a new leader does not know who was there before: items running for an instance that is
	 * not there now crashed with it (it may have been the old leader) */
	if (!old) failover_crashed(j, NULL);
	if (!old) cx_flow_orphans(j);   /* and run triggers left by instances not there (coord_flow.c) */
	/* which of those there now are ejob's (they hold leader/failover/alive/{id}): when one goes,
	 * its items' last records say which fires it ran (ElasticJob's instances write none) */
	char p[CJ_PATH_MAX];
	if (cj_conf(j)->failover) zkc_children(j->c->z, cj_path(j, p, "/leader/failover/alive"), NULL, NULL, ejob_listed, j);
	/* queued items whose taker is gone: hand them out again */
	cf_scan(j);
}

/* ---- taking over ---- */

static void taken(void *arg, const struct zkc_res *r);

struct take {
	struct cjob *j;
	uint32_t item;
	char *gone;                 /* the crashed instance, as its queue entry names it (NULL: unknown) */
	uint32_t missed;            /* the fires that passed it by while its owner could not run them (0: none named) */
	int crashed;                /* it was running on the instance that went (its take stands for them too) */
	uint32_t nfires;            /* the latest of them, listed */
	int64_t fires_s[SCHED_LISTED];
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
	uint32_t missed = t->missed, nfires = t->nfires;
	int crashed = t->crashed;
	int64_t fires_s[SCHED_LISTED];
	memcpy(fires_s, t->fires_s, sizeof fires_s);
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
	f->monitor = 1;
	j->c->failovers++;
	/* the crashed instance: as the queue entry names it, else the item's owner in the assignment
	 * this instance knows */
	const char *from = gone ? gone : i < j->as.total && j->as.owner && j->as.owner[i] ? j->as.owner[i] : NULL;
	if (missed && !crashed) {
		/* not running when its owner went: one catch-up for the fires that passed it by, named as
		 * the scheduler's catch-ups name theirs. It was part of no fire there (no afterAll to find). */
		fire_set_source(f->fire, EVS_MISFIRE);
		fire_stands_for(f->fire, fires_s, nfires, missed);
		log_info("job %s: failover: took item %" PRIu32 " of %s, whose %" PRIu32 " fire%s (the latest %" PRId64
		         "000) came while %s could not run %s; running it now as one catch-up", j->name, i, from ? from : "?",
		         missed, missed == 1 ? "" : "s", fires_s[nfires - 1], from ? from : "it", missed == 1 ? "it" : "them");
		free(gone);
	} else {
		/* a crashed item: its fire's run again, standing also for the fires that came while it ran
		 * there (the first of them its own, when its record was older) */
		f->crashed = gone;
		if (missed) fire_stands_for(f->fire, fires_s, nfires, missed);
		log_info("job %s: failover: took item %" PRIu32 " of a crashed instance%s%s; running it now%s", j->name, i,
		         from ? " " : "", from ? from : "", missed ? " (for the fires it missed there too)" : "");
	}
	struct event ev = { .type = EVT_FAILOVER, .item = i, .count = 1, .detail = from, .epoch = j->as.epoch };
	cj_event(j, &ev);
	f->session = zkc_session(j->c->z);
	/* a workflow job's: the run it was part of there first (coord_flow.c), which steps it then */
	if (!cx_flow_take(f, missed && !crashed ? NULL : from)) cx_step(f, FX_WRITTEN, NULL);
}

/* answered before failovering_read, which frees t (or hands gone to the side run). The entry names
 * the crashed instance; an item with missed fires (missed_decide) then "\nfires N t1 t2 ..." (it was not
 * running) or "\ncrashed N t1 t2 ..." (it was): how many fires passed it by, and the latest of them
 * (epoch seconds, ascending). */
static void entry_read(void *arg, const struct zkc_res *r)
{
	struct take *t = arg;
	if (r->rc != ZOK || r->len <= 0 || !r->data || t->gone) return;
	const char *nl = strchr(r->data, '\n');
	t->gone = nl ? strndup(r->data, (size_t)(nl - r->data)) : strdup(r->data);
	int crashed = nl && !strncmp(nl + 1, "crashed ", 8);
	if (!nl || (strncmp(nl + 1, "fires ", 6) && !crashed)) return;
	char *e;
	unsigned long n = strtoul(nl + (crashed ? 9 : 7), &e, 10);
	uint32_t k = 0;
	while (k < SCHED_LISTED && *e == ' ') {
		char *q;
		long long v = strtoll(e + 1, &q, 10);
		if (q == e + 1 || v <= 0) break;
		t->fires_s[k++] = v;
		e = q;
	}
	if (!k || n < k || n > SCHED_MISSED_CAP) return;   /* not ours to read: a crashed item */
	t->missed = (uint32_t)n;
	t->nfires = k;
	t->crashed = crashed;
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
		/* the entry's data first (answered in order): the crashed instance, and for an item that was
		 * not running the fires it stands for */
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
	for (int k = 0; k < j->fo.nejob; k++) free(j->fo.ejob[k]);
	free(j->fo.ejob);
}
