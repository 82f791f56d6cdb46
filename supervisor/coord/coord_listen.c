/* supervisor/coord/coord_listen.c: the per-instance listeners of a fire in ZooKeeper mode (props
 * ejob.listener.before / after, docs/config.md "Listeners"; the commands run by listen.c).
 *
 * before runs once the fire's items here are known (the assignment in force) and before anything
 * of them is written or dispatched: its running nodes are written only after it succeeded, so a
 * failing before leaves nothing "running"; the fire then ends here without its items, as a
 * fire_skipped event with reason "listener". after runs once every item of the fire here has its
 * final outcome and its completion is written (cx_end); its failure is logged and counted, and
 * changes nothing else. Side runs (failover takes, misfire runs) run both around their one item,
 * once its running node is written (cx_side_before): a failing before ends the item there as failed,
 * not run. With a beforeAll
 * (coord_barrier.c), the fire waits at its barrier after before and before its running nodes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/json.h"
#include "supervisor/coord/coord_int.h"
#include "supervisor/run/listen.h"

static void listener_event(struct cjob *j, const char *kind, uint64_t fire_ms, uint64_t epoch, enum listen_result r,
                           const char *why, uint64_t us)
{
	struct event ev = { .type = EVT_LISTENER, .fire_ms = fire_ms, .epoch = epoch, .reason = kind, .detail = why,
	                    .status = (uint32_t)r, .duration_us = us };
	cj_event(j, &ev);
}

static listen_run_t *start(struct cjob *j, const struct cfire *f, const char *kind, const char *cmd, uint64_t epoch,
                           int after, listen_done_fn done, void *arg)
{
	const conf_job_t *cj = cj_conf(j);
	char *ctx = listen_context_json(f->fire, cj, j->c->id, epoch, after);
	if (!ctx) {
		log_error("job %s: fire %" PRIu64 ": out of memory building its %s listener's context", j->name,
		          f->fire->fire_ms, kind);
		return NULL;
	}
	struct listen_spec s = {
		.job = j->name, .kind = kind, .cmd = cmd, .context = ctx, .fire_ms = f->fire->fire_ms, .epoch = epoch,
		.timeout_s = (uint32_t)cj->listener.timeout_seconds,
	};
	listen_run_t *r = listen_start(j->c->listen, &s, done, arg);
	free(ctx);
	return r;
}

/* ---- before ------------------------------------------------------------------------------------ */

void cx_keep_owned(struct cfire *f, uint64_t epoch, const char *what)
{
	struct cjob *j = f->j;
	if (j->as.epoch == epoch) return;
	/* resharded meanwhile: only the items still ours run here */
	uint32_t w = 0;
	for (uint32_t i = 0; i < f->fire->n; i++)
		if (cj_owned(j, f->fire->items[i])) f->fire->items[w++] = f->fire->items[i];
	if (w != f->fire->n)
		log_info("job %s: fire %" PRIu64 ": resharded while its %s listener ran: %" PRIu32 " of its %" PRIu32
		         " item%s here %s no longer this instance's and do%s not run here", j->name, f->fire->fire_ms, what,
		         f->fire->n - w, f->fire->n, f->fire->n == 1 ? "" : "s", f->fire->n - w == 1 ? "is" : "are",
		         f->fire->n - w == 1 ? "es" : "");
	f->fire->n = w;
}

/* before is done (or there is none): beforeAll's barrier, or the running nodes */
static void before_next(struct cfire *f)
{
	if (cj_conf(f->j)->listener.before_all) cx_barrier(f);
	else if (f->fire->n) cx_write_running(f);
	else cx_end(f);
}

static void before_done(void *arg, enum listen_result r, const char *why, uint64_t us)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	f->lr = NULL;
	listener_event(j, "before", f->fire->fire_ms, f->before_epoch, r, why, us);
	if (j->gone) {
		f->fire->n = 0;
		cx_end(f);
		return;
	}
	if (j->c->stopping || j->ops.shut) {
		cx_left_before_run(f, 1);
		return;
	}
	if (r != LISTEN_OK) {
		log_warn("job %s: fire %" PRIu64 ": its before listener failed (%s): its %" PRIu32 " item%s here do%s not run",
		         j->name, f->fire->fire_ms, why, f->fire->n, f->fire->n == 1 ? "" : "s", f->fire->n == 1 ? "es" : "");
		char d[300];
		snprintf(d, sizeof d, "the before listener (ejob.listener.before) failed: %s", why);
		cx_skipped(j, f->fire->fire_ms, "listener", d);
		/* not run, but accounted for: beforeAll and afterAll do not wait for them */
		memcpy(f->unrun + f->nunrun, f->fire->items, f->fire->n * sizeof *f->unrun);
		f->nunrun += f->fire->n;
		f->fire->n = 0;
		if (cj_conf(j)->listener.before_all) cx_barrier(f);
		else cx_end(f);
		return;
	}
	log_debug("job %s: fire %" PRIu64 ": before listener ok in %.2fs", j->name, f->fire->fire_ms, (double)us / 1e6);
	cx_keep_owned(f, f->before_epoch, "before");
	before_next(f);
}

void cx_before(struct cfire *f)
{
	struct cjob *j = f->j;
	const conf_job_t *cj = cj_conf(j);
	f->state = F_START;
	if (f->failover) {
		cx_write_running(f);
		return;
	}
	if (!cj->listener.before) {
		before_next(f);
		return;
	}
	f->state = F_BEFORE;
	f->before_epoch = j->as.epoch;
	f->lr = start(j, f, "before", cj->listener.before, f->before_epoch, 0, before_done, f);
	if (!f->lr) {
		cx_skipped(j, f->fire->fire_ms, "listener", "the before listener could not start (out of memory)");
		f->fire->n = 0;
		cx_end(f);
	}
}

/* ---- side runs: a failover take, a misfire's run again ------------------------------------------ */

static void side_before_done(void *arg, enum listen_result r, const char *why, uint64_t us)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	uint32_t i = f->fire->items[0];
	const char *what = f->misfire_run ? "run again for its misfire" : "taken over";
	f->lr = NULL;
	listener_event(j, "before", f->fire->fire_ms, f->before_epoch, r, why, us);
	int same = f->session == zkc_session(j->c->z);
	if (r == LISTEN_OK && same && !j->gone && !j->c->stopping) {
		cx_submit(f);
		return;
	}
	int hand = 0;
	if (r != LISTEN_OK) {
		log_warn("job %s: item %" PRIu32 ", %s: its before listener failed (%s): it does not run here and counts as "
		         "failed", j->name, i, what, why);
		char d[300];
		snprintf(d, sizeof d, "the before listener (ejob.listener.before) failed: %s", why);
		cx_skipped(j, f->fire->fire_ms, "listener", d);
		f->before_failed = 1;
	} else if (!same) {
		log_warn("job %s: item %" PRIu32 ", %s: the session that took it ended while its before listener ran: it "
		         "does not run here", j->name, i, what);
	} else {
		/* stopping or removed: a take goes back to the queue for another instance */
		hand = !f->misfire_run && cj_conf(j)->failover && (j->c->stopping || j->ops.shut);
	}
	cx_not_run(f, hand);
}

/* Its running node is written (a take's failover node too): run the before listener, then the
 * item; or at once. */
void cx_side_before(struct cfire *f)
{
	struct cjob *j = f->j;
	const conf_job_t *cj = cj_conf(j);
	if (!cj->listener.before) {
		cx_submit(f);
		return;
	}
	f->state = F_BEFORE;
	f->before_epoch = j->as.epoch;
	f->lr = start(j, f, "before", cj->listener.before, f->before_epoch, 0, side_before_done, f);
	if (!f->lr) side_before_done(f, LISTEN_FAILED, "out of memory", 0);
}

/* ---- after ------------------------------------------------------------------------------------- */

struct after_run {              /* what after's end needs: the fire (and a removed job) may be gone */
	coord_t *c;
	uint64_t fire_ms, epoch;
	char job[];
};

static void after_done(void *arg, enum listen_result r, const char *why, uint64_t us)
{
	struct after_run *a = arg;
	if (r != LISTEN_OK)
		log_warn("job %s: fire %" PRIu64 ": its after listener failed (%s)", a->job, a->fire_ms, why);
	else
		log_debug("job %s: fire %" PRIu64 ": after listener ok in %.2fs", a->job, a->fire_ms, (double)us / 1e6);
	struct event ev = { .type = EVT_LISTENER, .job = a->job, .fire_ms = a->fire_ms, .epoch = a->epoch,
	                    .reason = "after", .detail = why, .status = (uint32_t)r, .duration_us = us };
	events_emit(fires_events(a->c->fires), &ev);
	free(a);
}

void cx_after(struct cfire *f)
{
	struct cjob *j = f->j;
	const conf_job_t *cj = cj_conf(j);
	if (f->before_failed || !f->fire->n || !f->fire->ended || !cj->listener.after || j->c->closing) return;
	size_t len = strlen(j->name) + 1;
	struct after_run *a = malloc(sizeof *a + len);
	if (!a) {
		log_error("job %s: fire %" PRIu64 ": out of memory starting its after listener", j->name, f->fire->fire_ms);
		return;
	}
	a->c = j->c;
	a->fire_ms = f->fire->fire_ms;
	a->epoch = f->fire->epoch;
	memcpy(a->job, j->name, len);
	/* coord_free cancels every run still going (after_done is then never called) */
	if (!start(j, f, "after", cj->listener.after, f->fire->epoch, 1, after_done, a)) free(a);
}
