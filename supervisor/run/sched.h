/* supervisor/run/sched.h: when each job fires, and what a fire that cannot run becomes.
 *
 * Each job keeps `last`, the latest fire time it has handled (run or counted as missed). Its next
 * fire is the cron's first time strictly after `last`, so:
 *   - nothing fires early: a timer runs at or after the instant, and the decision is checked
 *     against the clock read after waking;
 *   - a wall clock stepped backward never fires a time twice: the times up to `last` are done,
 *     and the job waits for the first time after them on the new clock;
 *   - a wall clock stepped forward (or a supervisor stopped for a while) finds several fire times
 *     passed at once: the latest one runs if it is no more than SCHED_TOLERANCE late, and every
 *     other one counts as missed; they never run in a burst.
 * Missed fires, and fires that come while the job's previous fire still runs, set the job's
 * misfire flag; when the job is idle again and `misfire` is on, one catch-up fire runs for all of
 * them (N missed fires collapse into one, as in ElasticJob), naming each (the latest
 * SCHED_LISTED); with `misfire: false` they are dropped and logged.
 * A one-off job (no cron) has no timer: it fires only when triggered
 * (sched_trigger), and a trigger while its fire runs is a missed fire like the others.
 *
 * sched_decide() is the pure part (tests drive it with synthetic clocks); the rest keeps one
 * wall-clock timer per job and calls hooks to start fires. */
#ifndef EJOB_SCHED_H
#define EJOB_SCHED_H

#include <stdint.h>

#include "conf/conf.h"
#include "cron/cron.h"
#include "cron/tz.h"
#include "supervisor/base/wtimer.h"

#define SCHED_TOLERANCE_NS 1000000000ll   /* a fire this late still runs as itself */
#define SCHED_MISSED_CAP 10000u           /* missed fires are counted up to this many */
#define SCHED_LISTED 64                   /* missed fire times a catch-up names (the latest ones) */

enum sched_verdict {
	SCHED_WAIT,         /* nothing due: the next fire is at `next_s` */
	SCHED_DUE,          /* fire times passed: see the fields */
	SCHED_NEVER,        /* the cron has no fire after last: no timer */
};

struct sched_decision {
	enum sched_verdict verdict;
	int64_t next_s;         /* WAIT: the next fire time (epoch seconds) */
	int64_t latest_s;       /* DUE: the latest fire time <= now: `last` becomes this */
	int on_time;            /* DUE: latest_s is at most the tolerance late, and runs as itself */
	uint32_t missed;        /* DUE: fire times passed that do not run as themselves (capped) */
	int64_t latest_missed_s;/* DUE with missed > 0: the latest of those */
	int clock_back;         /* now is before `last`: the wall clock went back */
};

/* Decide for a job whose latest handled fire time is last_s, at wall-clock time now_ns. */
void sched_decide(const cron_t *cron, const tz_t *tz, int64_t last_s, int64_t now_ns, int64_t tolerance_ns,
                  struct sched_decision *d);

/* ---- the jobs' timers -------------------------------------------------------------------------- */

typedef struct sched sched_t;
typedef struct sched_job sched_job_t;   /* a job: given to start(), back to sched_fire_ended() */

struct sched_fire_info {
	const char *job;
	void *owner;              /* the handle its owner gave with the job's config (sched_set_job) */
	int64_t fire_s;           /* the scheduled fire time this run stands for */
	int64_t fire_ms;          /* its id: fire_s in ms, or for a trigger the ms it came at (two
	                             triggers in one second are two fires, with two ids) */
	int catch_up;             /* 1: one run for missed fires */
	uint32_t missed;          /* catch-up: how many fires it stands for (capped) */
	const int64_t *fires_s;   /* catch-up: the fire times it stands for, ascending: the latest
	                             nfires of them (the others, missed - nfires, are only counted);
	                             a fire: its own. Valid during start() */
	uint32_t nfires;
	sched_job_t *handle;      /* for sched_fire_ended() */
	const char *param;        /* a trigger's own jobParameter for this fire (valid during start());
	                             NULL: the job's (every scheduled fire and catch-up) */
	uint64_t run;             /* a workflow's trigger: the run (its root's fire id), else 0 */
	const char *root;         /* ...and the run's root job (valid during start()) */
};

struct sched_hooks {
	/* Start a fire of job. Return 0 when it started (sched_fire_ended() must follow, and may
	 * come before start returns), 1 when there was nothing to run here (the fire is over), -1
	 * when it could not start (logged by the hook): the fire counts as missed, and its catch-up
	 * run (misfire: true) waits for sched_kick(). */
	int (*start)(void *arg, const struct sched_fire_info *f);
};

sched_t *sched_new(struct ev_loop *loop, const struct sched_hooks *h, void *arg);
/* Fire times that do not run (still running, passed while held up) are events there. */
typedef struct events events_t;
void sched_set_events(sched_t *s, events_t *e);
void sched_free(sched_t *s);

/* Take the jobs of a (new) config: new jobs start waiting for their first fire after now;
 * jobs with a changed cron or time zone (their text) keep `last` (no time already handled fires
 * again) and wait for the new cron's next fire; removed and disabled jobs stop firing (a running
 * fire ends normally). Each job runs on the cron and zone its config compiled (cron_compiled,
 * tz: conf_parse with zone lookups, or conf_node_parse), the cron under Quartz's year limit of
 * the day it is taken; nothing is parsed here. The config must outlive its use here (it owns
 * the zones): call again before freeing it.
 * A job without a cron (a one-off job) has no timer: it fires only by sched_trigger().
 * Returns 0, or -1 if some job has a cron or time zone its config did not compile or load, or a
 * cron the year limit refuses (logged; that job stops firing until a config fixes it). */
int sched_set_jobs(sched_t *s, const conf_t *conf);

/* One job, by the config in force for it (new, or changed: the one stored in ZooKeeper, say), as
 * sched_set_jobs does for each job; owner is handed to start() with each of its fires
 * (sched_set_jobs hands the conf_job_t). What it schedules by is kept here (the cron, compiled
 * again with the year limit; disabled; misfire), but for the zone: c must outlive its use (until
 * the next call for this job, or its removal). 0; -1 when its cron or time zone cannot be used
 * (logged, as sched_set_jobs). */
int sched_set_job(sched_t *s, const conf_job_t *c, void *owner);
/* The job is no longer in the config: no more fires (a running one ends normally). */
void sched_remove_job(sched_t *s, const char *name);

/* The fire that start() started for job has ended (all of its items have final outcomes). */
void sched_fire_ended(sched_t *s, sched_job_t *job);
/* It has ended without running (its running nodes could not be written, it waited too long for
 * the sharding): it counts as missed, and its catch-up follows (misfire: true) when it can run. */
void sched_fire_missed(sched_t *s, sched_job_t *job);

/* A fire now, outside the cron (a manual trigger; a one-off job's only fires; a workflow run's
 * trigger, run and root not 0): its id is at_ms (the trigger node's ctime; 0: now; never one its
 * last trigger had), as a fire that comes at this second (while the previous fire runs, it is a misfire: one catch-up run after it
 * with misfire: true, none with false). param (NULL: none) is that fire's jobParameter instead of
 * the job's; a trigger that misfires loses it (logged at WARN): its catch-up stands for every fire
 * missed meanwhile, scheduled ones too, and runs with the job's own. 0, or -1 for no such job. */
int sched_trigger(sched_t *s, const char *job, const char *param, uint64_t run, const char *root, int64_t at_ms);
/* A workflow run's trigger while the job's fire runs is not a missed fire: it is owed, and fires
 * (with its run) as soon as that fire ends, before any catch-up; at most this many wait. */
#define SCHED_OWED_RUNS 16

/* The start hook can run fires of job again (connected, registered): a catch-up run owed for
 * fires that could not start begins now. */
void sched_kick(sched_t *s, const char *job);

/* For logs and tests: next fire time of job (epoch seconds), -1 = none or no such job. */
int64_t sched_next(const sched_t *s, const char *job);

/* Stop starting fires (shutdown); timers are disarmed. */
void sched_stop(sched_t *s);

#endif
