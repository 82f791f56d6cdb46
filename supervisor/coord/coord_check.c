/* supervisor/coord/coord_check.c: two periodic checks, as ElasticJob has them, without its cost.
 *
 * maxTimeDiffSeconds: this machine's clock against ZooKeeper's. ElasticJob writes
 * systemTime/current and reads its mtime at every fire (two round trips per fire); ejob does it
 * once a minute per job (one set: its answer carries the mtime), compares the mtime with the
 * local wall clock at the middle of the round trip, and while the difference is over the limit
 * refuses the job's fires, saying why, once per change.
 *
 * reconcileIntervalMinutes: the leader reads every sharding/{i}/instance again and, if an item is
 * assigned to an instance that is not online (or to garbage), raises the resharding flag, so that
 * an assignment that went wrong behind everyone's back is mended at the next fire. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/wait.h"
#include "supervisor/coord/coord_int.h"

#define CLOCK_EVERY_NS 60000000000ull

/* a check of this session in flight (one of an earlier session never answers in this one) */
static int in_flight(const struct cjob *j, uint64_t session)
{
	return session && session == zkc_session(j->c->z);
}

struct clockq {
	struct cjob *j;
	uint64_t session;
	int64_t sent_ms;            /* local wall clock when sent */
	int created;                /* a create after the set found no node */
};

static void clock_answer(void *arg, const struct zkc_res *r)
{
	struct clockq *q = arg;
	struct cjob *j = q->j;
	int64_t now_ms = (int64_t)(wait_realtime_ns() / 1000000u);
	if (j->chk.clock_session == q->session) j->chk.clock_session = 0;
	if (!cj_live(j, q->session)) {
		free(q);
		return;
	}
	char p[CJ_PATH_MAX];
	if (r->rc == ZNONODE && !q->created) {
		/* ElasticJob creates it on its first check: so do we (parents first) */
		q->created = 1;
		zkc_create(j->c->z, cj_path(j, p, "/systemTime"), "", 0, 0, NULL, NULL);
		q->sent_ms = now_ms;
		if (zkc_create(j->c->z, cj_path(j, p, "/systemTime/current"), "", 0, 0, NULL, NULL) == ZOK &&
		    zkc_set(j->c->z, p, "", 0, -1, clock_answer, q) == ZOK) {
			j->chk.clock_session = q->session;
			return;
		}
		free(q);
		return;
	}
	if (r->rc != ZOK) {
		free(q);
		return;
	}
	int64_t mid = q->sent_ms + (now_ms - q->sent_ms) / 2;
	int64_t off = mid - (int64_t)r->stat.mtime;
	free(q);
	int max = cj_conf(j)->max_time_diff_seconds;
	j->chk.clock_off_ms = off;
	int bad = max >= 0 && (off > (int64_t)max * 1000 || -off > (int64_t)max * 1000);
	if (bad && !j->chk.clock_bad)
		log_error("job %s: this machine's clock is %.1fs %s ZooKeeper's (maxTimeDiffSeconds: %d): its fires are refused "
		          "until the clock is fixed (check NTP on this machine)", j->name, (double)(off < 0 ? -off : off) / 1000.0,
		          off > 0 ? "ahead of" : "behind", max);
	else if (!bad && j->chk.clock_bad)
		log_info("job %s: the clock is within maxTimeDiffSeconds again (%.3fs off ZooKeeper's): fires run", j->name,
		         (double)off / 1000.0);
	j->chk.clock_bad = bad;
	if (!j->chk.clock_known) {
		j->chk.clock_known = 1;
		cj_kick(j);     /* a fire refused until now gets its catch-up */
	}
}

static void clock_check(struct cjob *j, uint64_t now_ns)
{
	if (in_flight(j, j->chk.clock_session) || (j->chk.clock_next_ns && now_ns < j->chk.clock_next_ns)) return;
	if (cj_conf(j)->max_time_diff_seconds < 0) {
		j->chk.clock_bad = 0;
		return;
	}
	struct clockq *q = calloc(1, sizeof *q);
	if (!q) return;
	q->j = j;
	q->session = zkc_session(j->c->z);
	q->sent_ms = (int64_t)(wait_realtime_ns() / 1000000u);
	char p[CJ_PATH_MAX];
	j->chk.clock_next_ns = now_ns + CLOCK_EVERY_NS;
	if (zkc_set(j->c->z, cj_path(j, p, "/systemTime/current"), "", 0, -1, clock_answer, q) == ZOK)
		j->chk.clock_session = q->session;
	else free(q);
}

/* ---- reconcile (the leader) ---- */

struct recon {
	struct cjob *j;
	uint64_t session;
	uint32_t left;
	int off;                    /* an item whose owner is not online */
	char who[200];
	uint32_t item;
};

static void owner_known(void *arg, const struct zkc_res *r)
{
	struct recon *rc = arg;
	struct cjob *j = rc->j;
	if (r->rc == ZOK && !rc->off) {
		const char *o = r->data ? r->data : "";
		int live = 0;
		for (int k = 0; k < j->lead.nlive && !live; k++) live = !strcmp(j->lead.live[k], o);
		if (!live) {
			rc->off = 1;
			rc->item = r->item;
			cj_show(o, r->len, rc->who, sizeof rc->who);
		}
	}
	if (--rc->left) return;
	if (j->chk.reconcile_session == rc->session) j->chk.reconcile_session = 0;
	if (rc->off && cj_live(j, rc->session) && j->lead.leader && !j->lead.necessary && !cj_static_held(j)) {
		char why[300];
		snprintf(why, sizeof why, "reconcile: item %" PRIu32 " is assigned to '%s', which is not online", rc->item,
		         rc->who);
		log_warn("job %s: %s", j->name, why);
		cj_set_necessary(j, why);
	}
	free(rc);
}

static void reconcile(struct cjob *j, uint64_t now_ns)
{
	int mins = cj_conf(j)->reconcile_interval_minutes;
	if (!j->lead.leader || mins <= 0 || !j->lead.live || !j->as.have) {
		j->chk.reconcile_next_ns = 0;
		return;
	}
	if (!j->chk.reconcile_next_ns) {
		j->chk.reconcile_next_ns = now_ns + (uint64_t)mins * 60000000000ull;
		return;
	}
	if (now_ns < j->chk.reconcile_next_ns || in_flight(j, j->chk.reconcile_session) || j->lead.necessary ||
	    j->shard.busy)
		return;
	j->chk.reconcile_next_ns = now_ns + (uint64_t)mins * 60000000000ull;
	struct recon *rc = calloc(1, sizeof *rc);
	if (!rc) return;
	rc->j = j;
	rc->session = zkc_session(j->c->z);
	rc->left = 1;
	j->chk.reconcile_session = rc->session;
	char p[CJ_PATH_MAX];
	uint32_t total = (uint32_t)cj_conf(j)->sharding_total_count;
	for (uint32_t i = 0; i < total; i++)
		if (zkc_get_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), i, NULL, NULL, owner_known, rc) == ZOK)
			rc->left++;
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	owner_known(rc, &go);
}

void cj_check_session(struct cjob *j)
{
	j->chk.clock_next_ns = j->chk.reconcile_next_ns = 0;     /* both at once in the new session */
	cj_due(j->c, 0);
}

/* Whatever is due, and when the next is: the minute of each. What the look each second over every
 * job finds (coord_tick) needs no call: a new leader's first reconcile, a check in flight. */
uint64_t cj_checks(struct cjob *j, uint64_t now_ns)
{
	if (j->gone || j->ops.shut || !cj_registered(j)) return UINT64_MAX;
	clock_check(j, now_ns);
	reconcile(j, now_ns);
	/* one still due after the calls above waits for something else (an answer, the flag to go):
	 * the look each second comes back for it */
	uint64_t next = UINT64_MAX;
	if (cj_conf(j)->max_time_diff_seconds >= 0 && j->chk.clock_next_ns > now_ns) next = j->chk.clock_next_ns;
	if (j->chk.reconcile_next_ns > now_ns && j->chk.reconcile_next_ns < next) next = j->chk.reconcile_next_ns;
	return next;
}
