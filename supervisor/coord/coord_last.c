/* supervisor/coord/coord_last.c: each item's last execution, kept in ZooKeeper by the instance that
 * ran it (sharding/{i}/last, ipc/lastrun.h), as one op of the fire's completion multi: no request
 * more per fire. The op is a setData when the node is known to be there, a create when it is known
 * not to be; either can meet a node changed meanwhile (an ElasticJob leader deleting sharding/{i}
 * as the item count shrinks, another instance's first record): then the multi fails whole and
 * coord_fire.c writes that fire's nodes one by one, this record as a create then a set, so a fire's
 * completion never depends on its record.
 *
 * Consecutive failures and the last success come from the record before: read when the item
 * becomes ours (cj_install lists sharding/{i}; its "last" child is read once) and when a side run
 * takes an item (failover), before its running nodes are written, so ZooKeeper answers it first
 * (a session's requests are answered in order). That is how the count survives a failover or a
 * reshard to another instance: the new one reads the old one's record. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/frame.h"
#include "ipc/lastrun.h"
#include "ipc/wait.h"
#include "supervisor/coord/coord_int.h"

enum { LK_UNKNOWN = 0, LK_THERE, LK_ABSENT };

struct cx_rec {                 /* an item's end in a fire, until its completion is written */
	uint32_t status, attempt;
	uint64_t end_ms;
	char *why;                  /* not ok: its cause, '\0', its output's tail (malloc'd, until its
	                               record is written); NULL for an ok one (or out of memory) */
};

static int sized(struct cjob *j)
{
	uint32_t n = j->as.total;
	if (j->last.n == n && j->last.known) return 1;
	free(j->last.known);
	free(j->last.fails);
	free(j->last.ok_ms);
	j->last.known = calloc(n ? n : 1, 1);
	j->last.fails = calloc(n ? n : 1, sizeof *j->last.fails);
	j->last.ok_ms = calloc(n ? n : 1, sizeof *j->last.ok_ms);
	j->last.n = j->last.known && j->last.fails && j->last.ok_ms ? n : 0;
	return j->last.n == n && n;
}

static void record_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	uint32_t i = r->item;
	if (!sized(j) || i >= j->last.n) return;
	if (r->rc == ZNONODE) {
		j->last.known[i] = LK_ABSENT;
		j->last.fails[i] = 0;
		j->last.ok_ms[i] = 0;
		return;
	}
	if (r->rc != ZOK) return;   /* unknown: the completion's setData finds out */
	struct lastrun lr;
	j->last.known[i] = LK_THERE;
	if (lastrun_parse(r->data, r->data ? (size_t)r->len : 0, &lr) == 1) {
		j->last.fails[i] = lr.failures;
		j->last.ok_ms[i] = lr.ok_ms;
		lastrun_clear(&lr);
	} else {
		j->last.fails[i] = 0;
		j->last.ok_ms[i] = 0;
	}
}

void cx_last_learn(struct cjob *j, uint32_t i)
{
	char p[CJ_PATH_MAX];
	if (!sized(j) || i >= j->last.n) return;
	j->last.known[i] = LK_UNKNOWN;
	zkc_get_item(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/last", i), i, NULL, NULL, record_read, j);
}

void cx_last_listed(struct cjob *j, uint32_t i, int listed)
{
	if (listed) {
		cx_last_learn(j, i);
	} else if (sized(j) && i < j->last.n) {
		j->last.known[i] = LK_ABSENT;
		j->last.fails[i] = 0;
		j->last.ok_ms[i] = 0;
	}
}

void cx_last_ended(struct cfire *f, uint32_t item, const struct disp_outcome *o)
{
	uint32_t total = fire_total(f->fire);
	if (item >= total) return;
	if (!f->last && !(f->last = calloc(total, sizeof *f->last))) return;
	struct cx_rec *x = &f->last[item];
	x->status = o->status;
	x->attempt = o->attempt;
	x->end_ms = wait_realtime_ns() / 1000000u;
	free(x->why);
	x->why = NULL;
	if (o->status == FRAME_ST_OK) return;
	/* what the record says of a failure, held only as long as it waits to be written */
	char cause[LASTRUN_ERROR_MAX + 1];
	size_t cn = lastrun_cause(cause, sizeof cause, frame_status_name(o->status), o->exit_code, o->signal, o->error);
	const char *out = o->output ? o->output : "";
	size_t on = strlen(out), from = lastrun_tail_start(out, on);
	if ((x->why = malloc(cn + 1 + (on - from) + 1))) {
		memcpy(x->why, cause, cn + 1);
		memcpy(x->why + cn + 1, out + from, on - from + 1);
	}
}

void cx_last_free(struct cfire *f)
{
	if (f->last)
		for (uint32_t i = 0, n = fire_total(f->fire); i < n; i++) free(f->last[i].why);
	free(f->last);
	f->last = NULL;
}

/* the record of item it in fire f, from what we know of the one before; 0, or -1 if none */
static int record(const struct cfire *f, uint32_t it, char *buf, size_t len, uint32_t *fails, uint64_t *ok_ms)
{
	const struct cjob *j = f->j;
	if (!f->last || it >= fire_total(f->fire) || !f->last[it].end_ms) return -1;
	const struct cx_rec *x = &f->last[it];
	struct lastrun lr = { .fire_id = fire_id(f->fire), .end_ms = x->end_ms, .attempt = x->attempt };
	if (x->why) {
		lr.error = x->why;
		lr.tail = x->why + strlen(x->why) + 1;
	}
	snprintf(lr.outcome, sizeof lr.outcome, "%s", frame_status_name(x->status));
	snprintf(lr.instance, sizeof lr.instance, "%s", j->c->id);
	snprintf(lr.source, sizeof lr.source, "%s", event_source_name(fire_source(f->fire)));
	uint32_t prev = it < j->last.n ? j->last.fails[it] : 0;
	uint64_t ok = it < j->last.n ? j->last.ok_ms[it] : 0;
	lr.failures = x->status == FRAME_ST_OK ? 0 : lastrun_is_failure(lr.outcome) ? prev + 1 : prev;
	lr.ok_ms = x->status == FRAME_ST_OK ? x->end_ms : ok;
	*fails = lr.failures;
	*ok_ms = lr.ok_ms;
	return lastrun_fmt(&lr, buf, len) < 0 ? -1 : 0;
}

void cx_last_op(zkc_multi_t *m, struct cfire *f, uint32_t it)
{
	struct cjob *j = f->j;
	char p[CJ_PATH_MAX], d[LASTRUN_MAX];
	uint32_t fails;
	uint64_t ok;
	if (record(f, it, d, sizeof d, &fails, &ok)) return;
	cj_path(j, p, "/sharding/%" PRIu32 "/last", it);
	if (it < j->last.n && j->last.known[it] == LK_ABSENT) zkc_multi_create(m, p, d, (int)strlen(d), 0);
	else zkc_multi_set(m, p, d, (int)strlen(d), -1);
}

void cx_last_written(struct cfire *f, uint32_t it)
{
	struct cjob *j = f->j;
	char d[LASTRUN_MAX];
	uint32_t fails;
	uint64_t ok;
	int r = record(f, it, d, sizeof d, &fails, &ok);
	if (!r) {
		free(f->last[it].why);  /* written: the failure's text is ZooKeeper's to keep now */
		f->last[it].why = NULL;
	}
	if (r || !sized(j) || it >= j->last.n) return;
	j->last.known[it] = LK_THERE;
	j->last.fails[it] = fails;
	j->last.ok_ms[it] = ok;
}

void cx_last_one(struct cfire *f, uint32_t it)
{
	struct cjob *j = f->j;
	char p[CJ_PATH_MAX], d[LASTRUN_MAX];
	uint32_t fails;
	uint64_t ok;
	if (record(f, it, d, sizeof d, &fails, &ok)) return;
	/* create-or-set: answered in order, the set finds the node either way (unless its item
	 * node went: then nothing is written, and nothing else depends on it) */
	cj_path(j, p, "/sharding/%" PRIu32 "/last", it);
	zkc_create(j->c->z, p, d, (int)strlen(d), 0, NULL, NULL);
	zkc_set(j->c->z, p, d, (int)strlen(d), -1, NULL, NULL);
	cx_last_written(f, it);
}

void cj_last_free(struct cjob *j)
{
	free(j->last.known);
	free(j->last.fails);
	free(j->last.ok_ms);
	j->last.known = NULL;
	j->last.fails = NULL;
	j->last.ok_ms = NULL;
	j->last.n = 0;
}

const char *cx_last_why(const struct cfire *f, uint32_t item)
{
	return f->last && item < fire_total(f->fire) ? f->last[item].why : NULL;
}
