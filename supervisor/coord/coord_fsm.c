/* supervisor/coord/coord_fsm.c: a fire's states and the one function that changes them.
 *
 * The files that do a fire's work report what happened to cx_step() as an event (the assignment
 * files: cx_ready_changed; coord_listen.c: the before listener's end; coord_barrier.c: beforeAll's
 * decision; coord_fire.c and coord_running.c: running nodes written, the completions written;
 * whoever ends a fire before it runs: FX_ABORT, having said why). cx_step decides what comes
 * next and starts it; nothing else sets cfire.state or calls the next stage.
 *
 * A scheduled fire is born in F_WAIT (coord_fire), a side run (a failover take, a misfire's run
 * again) in F_START with its running node being written (cx_side_run).
 *
 *   state      event              next: what starts                              when
 *   F_WAIT     FX_READY           F_WAIT: nothing (the leader shards)            the assignment is not ready
 *                                 F_WAIT: what the leader handed out, read       a catch-up, failover on (cf_vet:
 *                                   (FX_READY again when answered)               once per fire)
 *                                 F_BEFORE: the before listener                  items here, a before listener
 *                                 F_BARRIER: beforeAll's barrier                 no before; beforeAll
 *                                 F_START: the running nodes                     no before, no beforeAll
 *                                 end                                            nothing here; the job removed
 *   F_BEFORE   FX_BEFORE_OK       F_BARRIER | F_START | end, as above, with the items still ours
 *              FX_BEFORE_FAILED   F_BARRIER (its items written as not run) | end
 *   F_BARRIER  FX_BARRIER_OK      F_START (the items still ours) | end
 *              FX_BARRIER_FAILED  end (no item of the fire runs anywhere)
 *   F_START    FX_WRITTEN         F_RUN: its items submitted
 *              FX_DROPPED         F_START: the others written again | end       an item runs elsewhere
 *   F_RUN      FX_FLUSHED         end                                            every completion written
 *   not F_RUN  FX_ABORT           end (the caller said why: missed, stopped, out of memory)
 *
 *   A side run:  F_START  FX_WRITTEN  F_BEFORE: its before listener | F_RUN: submitted
 *                F_BEFORE FX_BEFORE_OK F_RUN: submitted | F_RUN: not run (handed over, or failed)
 *                         FX_BEFORE_FAILED F_RUN: not run, failed
 *
 * On the way, before F_RUN: a job removed from the config ends the fire; a job that left this
 * instance (a stop, a drain, an operator's shutdown) goes to F_RUN with its items handed over for
 * failover or cut (their completions written as for any end), or ends. F_READY is only for
 * F_WAIT: elsewhere it is nothing. Any other pair is a bug (EJOB_CHECK). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/wait.h"
#include "supervisor/coord/coord_int.h"

static void to_before(struct cfire *f);

static void end_empty(struct cfire *f)
{
	fire_clear(f->fire);
	cx_end(f);
}

/* F_RUN without running: every open item ends (handed over for failover, or failed) and its
 * completion is written as any item's. */
static void not_run(struct cfire *f, int hand)
{
	fire_t *t = f->fire;
	f->state = F_RUN;
	if (!f->npending) f->pending_since_ns = wait_now_ns();
	for (uint32_t i = 0; i < fire_n(t); i++) {
		uint32_t it = fire_item(t, i);
		if (fire_end_item(t, it, hand ? FIRE_HANDED_OVER : FIRE_FAILED)) f->pending[f->npending++] = it;
	}
	cx_flush_want(f);
}

/* The job left here (a stop, a drain, an operator's shutdown) before the fire's items were
 * submitted: with failover they are handed over as if stopped here (their running nodes not
 * written yet: norunning), else they do not run in this fire, which is said. */
static void left(struct cfire *f, int norunning)
{
	struct cjob *j = f->j;
	const conf_job_t *cj = f->conf;
	uint32_t n = fire_n(f->fire);
	if (cj->failover && cj->monitor_execution && zkc_state(j->c->z) == ZKC_CONNECTED && n) {
		f->monitor = 1;
		f->norunning = norunning;
		f->session = zkc_session(j->c->z);
		log_info("job %s: fire %" PRIu64 ": the job left this instance before its %" PRIu32 " item%s here started: "
		         "handed over for failover", j->name, fire_id(f->fire), n, n == 1 ? "" : "s");
		not_run(f, 1);
		return;
	}
	for (uint32_t i = 0; i < n; i++) cx_cut_note(f, fire_item(f->fire, i));
	if (!norunning && n) {   /* their running nodes go */
		f->monitor = cj->monitor_execution;
		not_run(f, 0);
		return;
	}
	end_empty(f);
}

static void to_run(struct cfire *f)
{
	if (f->j->ops.shut && !f->failover) {
		left(f, 0);
		return;
	}
	f->state = F_RUN;
	if (!cx_submit(f)) cx_end(f);
}

/* a scheduled fire's running nodes (monitorExecution), then its items */
static void to_start(struct cfire *f)
{
	struct cjob *j = f->j;
	if (j->gone) {
		end_empty(f);
		return;
	}
	if (j->ops.shut) {
		left(f, 1);
		return;
	}
	f->state = F_START;
	f->monitor = f->conf->monitor_execution;
	if (!f->monitor) to_run(f);
	else cx_write_running(f);       /* FX_WRITTEN, FX_DROPPED or FX_ABORT */
}

static void to_barrier(struct cfire *f)
{
	f->state = F_BARRIER;
	f->bar_epoch = f->j->as.epoch;
	cx_barrier(f);                  /* FX_BARRIER_OK, FX_BARRIER_FAILED or FX_ABORT */
}

/* the before listener is done, or there is none */
static void after_before(struct cfire *f)
{
	if (f->conf->listener.before_all) to_barrier(f);
	else if (fire_n(f->fire)) to_start(f);
	else cx_end(f);
}

static void to_before(struct cfire *f)
{
	f->state = F_BEFORE;
	f->before_epoch = f->j->as.epoch;
	cx_before(f);                   /* FX_BEFORE_OK or FX_BEFORE_FAILED; FX_ABORT if it cannot start */
}

/* ---- F_WAIT: the assignment -------------------------------------------------------------------- */

enum cj_wait cj_ready(const struct cjob *j)
{
	if (!cx_running_settled(j)) return CJ_WAIT_STALE;
	if (!cj_registered(j)) return CJ_WAIT_REG;
	if (!cj_assign_settled(j)) return CJ_WAIT_READING;
	if (j->lead.necessary || !cj_assign_current(j)) return CJ_WAIT_SHARDING;
	return CJ_READY;
}

/* The only thing a fire waits for is the resharding flag, and it came after the fire's time (in
 * this machine's clock, by the last comparison with ZooKeeper's): the fire runs the assignment
 * loaded, the one the others ran that time with. A catch-up too: the instance that missed the
 * fire (not connected at its first one, say) runs its items of that assignment, the ones nobody
 * ran; under the reshard it would run others' items again and leave its own. */
static int flag_after(const struct cjob *j, uint64_t fire_ms)
{
	if (!j->lead.necessary || !j->as.have || !cj_assign_current(j)) return 0;
	int64_t local = j->lead.necessary_ctime + (j->chk.clock_known ? j->chk.clock_off_ms : 0);
	return local > (int64_t)fire_ms;
}

/* nothing of the fire runs here: said, and over at once (the scheduler counts it ended) */
static void nothing_here(struct cfire *f, uint32_t owned)
{
	struct cjob *j = f->j;
	uint64_t ms = fire_id(f->fire);
	if (owned == 1)
		log_info("job %s: fire %" PRIu64 ": nothing runs here: item %" PRIu32 ", this instance's only one, is "
		         "disabled (sharding/%" PRIu32 "/disabled)", j->name, ms, f->unrun[0], f->unrun[0]);
	else if (owned)
		log_info("job %s: fire %" PRIu64 ": nothing runs here: all %" PRIu32 " items of this instance are disabled "
		         "(sharding/{i}/disabled)", j->name, ms, owned);
	else {
		char cause[64];
		snprintf(cause, sizeof cause, "no items %" PRIx64, j->as.epoch);
		log_cause(&j->fx.idle_cause, LL_INFO, cause, "job %s: no item of the assignment of epoch 0x%" PRIx64
		          " is this instance's: its fires run nothing here", j->name, j->as.epoch);
	}
	cx_end(f);
}

static void wait_ready(struct cfire *f)
{
	struct cjob *j = f->j;
	if (f->vet || f->fv) return;        /* its answers report FX_READY */
	enum cj_wait w = cj_ready(j);
	if (w == CJ_WAIT_STALE) return;     /* clearing running nodes left by a lost connection */
	if (j->gone) {
		end_empty(f);
		return;
	}
	/* registering: its assignment load reports again; reading: their answers report again */
	if (w == CJ_WAIT_REG || w == CJ_WAIT_READING) return;
	uint64_t ms = fire_id(f->fire);
	if (w == CJ_WAIT_SHARDING && flag_after(j, ms)) {
		/* The resharding flag came after this fire's time: the others ran this fire with the
		 * assignment in force then (an instance that joined during it, say), so it runs here with
		 * that assignment too; the reshard is for the next fire. Waiting for it would run items
		 * of this fire that another instance has run already. */
		log_info("job %s: fire %" PRIu64 ": the resharding flag came after its time: it runs the assignment of epoch 0x%"
		         PRIx64 ", the reshard is for the next fire", j->name, ms, j->as.epoch);
		w = CJ_READY;
	}
	if (w == CJ_WAIT_SHARDING) {
		log_debug("job %s: fire %" PRIu64 " waits for sharding (necessary %d, assignment %s, %s)", j->name, ms,
		          j->lead.necessary, j->as.have ? "loaded" : "none", j->lead.leader ? "sharding it now" : "the leader shards");
		if (j->lead.leader) cj_shard_now(j);
		return;             /* the sharding node's watch (or necessary's) reports again */
	}
	/* The config it runs with is the one in force now. A fire that came while its job registered
	 * was made with the file's, and the config node read since is the job's (overwrite: false: an
	 * operator's node, ElasticJob's); it ran the file's command once (t/78 in CI, a fire in the
	 * start's second). One whose size changed meanwhile cannot take it: it is missed, and said so. */
	const conf_job_t *now = cj_conf(j);
	if (f->conf != now && !f->vetted) {
		if ((uint32_t)now->sharding_total_count != fire_total(f->fire)) {
			log_info("job %s: fire %" PRIu64 ": not run: it came while the job registered, and the config node read since "
			         "has shardingTotalCount %d (the file's %" PRIu32 "); the next fire runs the node's", j->name, ms,
			         now->sharding_total_count, fire_total(f->fire));
			end_empty(f);
			return;
		}
		conf_release(f->hold);
		f->conf = now;
		f->hold = j->cfg.node ? conf_job_hold(j->cfg.node) : conf_hold(j->file);
	}
	const char *me = j->c->id;
	uint32_t owned = 0, vout = 0;
	fire_clear(f->fire);
	f->nunrun = 0;
	for (uint32_t i = 0; i < j->as.total && i < fire_total(f->fire); i++) {
		if (!j->as.owner[i] || strcmp(j->as.owner[i], me)) continue;
		owned++;
		if (f->vetted && f->vetted[i] == 2) {
			/* it ran on the leader's taker for these fires: not run here, written as such for
			 * beforeAll and afterAll (as a disabled item) */
			f->unrun[f->nunrun++] = i;
			vout++;
			continue;
		}
		if (!j->as.disabled[i]) fire_add(f->fire, i);
		else f->unrun[f->nunrun++] = i;
	}
	/* A catch-up: items the leader handed out for its fires (this instance's session ended while
	 * they came) ran on a taker; the reads report FX_READY again. */
	if (!f->vetted && fire_n(f->fire) && fire_source(f->fire) == EVS_MISFIRE && cf_vet(f)) return;
	/* A workflow run's fire: items of it recorded in the run already are not run again */
	if (!f->vetted && fire_n(f->fire) && cx_flow_vet(f)) return;
	if (!fire_n(f->fire) && vout && vout == f->nunrun && !f->conf->listener.before_all) {
		cx_end(f);              /* all of them ran on takers (cf_vet said which) */
		return;
	}
	if (!fire_n(f->fire) && f->nunrun && f->conf->listener.before_all) {
		/* nothing runs here, but the others wait for these items: they are written as started */
		if (owned == 1)
			log_info("job %s: fire %" PRIu64 ": nothing runs here: item %" PRIu32 ", this instance's only one, is "
			         "disabled (sharding/%" PRIu32 "/disabled); it is written for its beforeAll", j->name, ms,
			         f->unrun[0], f->unrun[0]);
		else
			log_info("job %s: fire %" PRIu64 ": nothing runs here: all %" PRIu32 " items of this instance are disabled "
			         "(sharding/{i}/disabled); they are written for its beforeAll", j->name, ms, owned);
		to_barrier(f);
		return;
	}
	if (!fire_n(f->fire)) {
		nothing_here(f, owned);
		return;
	}
	log_cause_reset(&j->fx.idle_cause);
	if (f->conf->listener.before) to_before(f);
	else after_before(f);
}

/* ---- a side run's before listener ended ----------------------------------------------------------- */

static void side_before_ended(struct cfire *f, enum fx_event ev, const char *why)
{
	struct cjob *j = f->j;
	int same = f->session == zkc_session(j->c->z);
	if (ev == FX_BEFORE_OK && same && !j->gone && !j->c->stopping) {
		to_run(f);
		return;
	}
	int hand = 0;
	if (ev == FX_BEFORE_FAILED) {
		cx_before_failed(f, why);
	} else if (!same) {
		log_warn("job %s: item %" PRIu32 ", %s: the session that took it ended while its before listener ran: it "
		         "does not run here", j->name, fire_item(f->fire, 0),
		         f->misfire_run ? "run again for its misfire" : "taken over");
	} else {
		/* stopping or removed: a take goes back to the queue for another instance */
		hand = !f->misfire_run && f->conf->failover && (j->c->stopping || j->ops.shut);
	}
	not_run(f, hand);
}

/* ---- the transition function ------------------------------------------------------------------------ */

static const char *const state_names[] = { "?", "F_WAIT", "F_BEFORE", "F_BARRIER", "F_START", "F_RUN" };
static const char *const event_names[] = {
	"FX_READY", "FX_BEFORE_OK", "FX_BEFORE_FAILED", "FX_BARRIER_OK", "FX_BARRIER_FAILED", "FX_WRITTEN",
	"FX_DROPPED", "FX_FLUSHED", "FX_ABORT",
};

static void unexpected(const struct cfire *f, enum fx_event ev)
{
	char what[160];
	snprintf(what, sizeof what, "job %s: fire %" PRIu64 ": event %s in state %s", f->j->name, fire_id(f->fire),
	         (unsigned)ev < sizeof event_names / sizeof *event_names ? event_names[ev] : "?",
	         f->state > 0 && f->state <= F_RUN ? state_names[f->state] : "?");
	EJOB_CHECK(0, what);
}

void cx_step(struct cfire *f, enum fx_event ev, const char *why)
{
	struct cjob *j = f->j;
	if (ev == FX_READY) {
		if (f->state == F_WAIT) wait_ready(f);
		return;
	}
	if (ev == FX_ABORT && f->state != F_RUN) {
		end_empty(f);
		return;
	}
	switch (f->state * 16 + ev) {
	case F_BEFORE * 16 + FX_BEFORE_OK:
	case F_BEFORE * 16 + FX_BEFORE_FAILED:
		if (f->failover) {
			side_before_ended(f, ev, why);
			return;
		}
		if (j->gone) {
			end_empty(f);
			return;
		}
		if (j->c->stopping || j->ops.shut) {
			left(f, 1);
			return;
		}
		if (ev == FX_BEFORE_FAILED) {
			cx_before_failed(f, why);      /* said; its items are written as not run */
			if (f->conf->listener.before_all) to_barrier(f);
			else cx_end(f);
			return;
		}
		cx_keep_owned(f, f->before_epoch, "before");
		after_before(f);
		return;
	case F_BARRIER * 16 + FX_BARRIER_OK:
	case F_BARRIER * 16 + FX_BARRIER_FAILED:
		if (j->gone || j->c->stopping) {
			end_empty(f);
			return;
		}
		if (ev == FX_BARRIER_FAILED) {
			cx_bar_failed(f, why);
			/* nothing of the fire runs anywhere: its afterAll has nothing to wait for */
			f->nunrun = 0;
			end_empty(f);
			return;
		}
		cx_keep_owned(f, f->bar_epoch, "beforeAll");
		if (fire_n(f->fire)) to_start(f);
		else cx_end(f);
		return;
	case F_START * 16 + FX_WRITTEN:
		if (f->failover && f->conf->listener.before) to_before(f);
		else to_run(f);
		return;
	case F_START * 16 + FX_DROPPED:
		if (fire_n(f->fire)) to_start(f);
		else cx_end(f);
		return;
	case F_RUN * 16 + FX_FLUSHED:
		cx_end(f);
		return;
	default:
		unexpected(f, ev);
	}
}

void cx_ready_changed(struct cjob *j)
{
	if (j->fx.fire) cx_step(j->fx.fire, FX_READY, NULL);
}
