/* supervisor/coord/coord_listen.c: the per-instance listeners of a fire in ZooKeeper mode (props
 * ejob.listener.before / after, docs/config.md "Listeners"; the commands run by listen.c).
 *
 * before runs once the fire's items here are known (the assignment in force) and before anything
 * of them is written or dispatched: its running nodes are written only after it succeeded, so a
 * failing before leaves nothing "running"; the fire then ends here without its items, as a
 * fire_skipped event with reason "listener". after runs once every item of the fire here has its
 * final outcome and its completion is written (cx_end); its failure is logged and counted, and
 * changes nothing else. Side runs (failover takes, misfire runs) run both around their one item,
 * once its running node is written (coord_fsm.c): a failing before ends the item there as failed,
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
	const conf_job_t *cj = f->conf;
	char *ctx = listen_context_json(f->fire, cj, j->c->id, epoch, after);
	if (!ctx) {
		log_error("job %s: fire %" PRIu64 ": out of memory building its %s listener's context", j->name,
		          fire_id(f->fire), kind);
		return NULL;
	}
	struct listen_spec s = {
		.job = j->name, .kind = kind, .cmd = cmd, .context = ctx, .fire_ms = fire_id(f->fire), .epoch = epoch,
		.timeout_s = (uint32_t)cj->listener.timeout_seconds,
	};
	listen_run_t *r = listen_start(j->c->listen, &s, done, arg);
	free(ctx);
	return r;
}

/* ---- before ------------------------------------------------------------------------------------ */

static int still_ours(void *arg, uint32_t item)
{
	return cj_owned(arg, item);
}

void cx_keep_owned(struct cfire *f, uint64_t epoch, const char *what)
{
	struct cjob *j = f->j;
	if (j->as.epoch == epoch) return;
	/* resharded meanwhile: only the items still ours run here */
	uint32_t n = fire_n(f->fire), gone = fire_keep(f->fire, still_ours, j);
	if (gone)
		log_info("job %s: fire %" PRIu64 ": resharded while its %s listener ran: %" PRIu32 " of its %" PRIu32
		         " item%s here %s no longer this instance's and do%s not run here", j->name, fire_id(f->fire), what,
		         gone, n, n == 1 ? "" : "s", gone == 1 ? "is" : "are", gone == 1 ? "es" : "");
}

void cx_before_failed(struct cfire *f, const char *why)
{
	struct cjob *j = f->j;
	char d[300];
	snprintf(d, sizeof d, "the before listener (ejob.listener.before) failed: %s", why);
	if (f->failover) {
		log_warn("job %s: item %" PRIu32 ", %s: its before listener failed (%s): it does not run here and counts as "
		         "failed", j->name, fire_item(f->fire, 0), f->misfire_run ? "run again for its misfire" : "taken over", why);
		cx_skipped(j, fire_id(f->fire), "listener", d);
		f->before_failed = 1;
		return;
	}
	uint32_t n = fire_n(f->fire);
	log_warn("job %s: fire %" PRIu64 ": its before listener failed (%s): its %" PRIu32 " item%s here do%s not run",
	         j->name, fire_id(f->fire), why, n, n == 1 ? "" : "s", n == 1 ? "es" : "");
	cx_skipped(j, fire_id(f->fire), "listener", d);
	/* not run, but accounted for: beforeAll and afterAll do not wait for them */
	memcpy(f->unrun + f->nunrun, fire_items(f->fire), n * sizeof *f->unrun);
	f->nunrun += n;
	fire_clear(f->fire);
}

static void before_done(void *arg, enum listen_result r, const char *why, uint64_t us)
{
	struct cfire *f = arg;
	f->lr = NULL;
	listener_event(f->j, "before", fire_id(f->fire), f->before_epoch, r, why, us);
	if (r == LISTEN_OK)
		log_debug("job %s: fire %" PRIu64 ": before listener ok in %.2fs", f->j->name, fire_id(f->fire), (double)us / 1e6);
	cx_step(f, r == LISTEN_OK ? FX_BEFORE_OK : FX_BEFORE_FAILED, why);
}

void cx_before(struct cfire *f)
{
	struct cjob *j = f->j;
	f->lr = start(j, f, "before", f->conf->listener.before, f->before_epoch, 0, before_done, f);
	if (f->lr) return;
	if (f->failover) {
		before_done(f, LISTEN_FAILED, "out of memory", 0);
		return;
	}
	cx_skipped(j, fire_id(f->fire), "listener", "the before listener could not start (out of memory)");
	cx_step(f, FX_ABORT, NULL);
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
	const conf_job_t *cj = f->conf;
	if (f->before_failed || !fire_n(f->fire) || !fire_ended(f->fire) || !cj->listener.after || j->c->closing) return;
	size_t len = strlen(j->name) + 1;
	struct after_run *a = malloc(sizeof *a + len);
	if (!a) {
		log_error("job %s: fire %" PRIu64 ": out of memory starting its after listener", j->name, fire_id(f->fire));
		return;
	}
	a->c = j->c;
	a->fire_ms = fire_id(f->fire);
	a->epoch = fire_epoch(f->fire);
	memcpy(a->job, j->name, len);
	/* coord_free cancels every run still going (after_done is then never called) */
	if (!start(j, f, "after", cj->listener.after, fire_epoch(f->fire), 1, after_done, a)) free(a);
}
