/* supervisor/local.h: fires without ZooKeeper, where every item runs here: the scheduler's fires
 * with --standalone, and --run JOB[:ITEMS], one fire here and now. Both are fires of the one
 * tracker (fire.h). */
#ifndef EJOB_LOCAL_H
#define EJOB_LOCAL_H

#include <ev.h>
#include <stdint.h>

#include "conf/conf.h"
#include "supervisor/exec/attach.h"
#include "supervisor/exec/pool.h"
#include "supervisor/run/fire.h"
#include "supervisor/run/sched.h"

typedef struct local local_t;

struct local_params {
	struct ev_loop *loop;       /* the listener commands run on it */
	const char *instance_id;    /* "{ip}@-@{pid}": the taskId in the listeners' context */
	fires_t *fires;
	pool_t *pool;               /* --run: a worker must become ready */
	att_t *att;                 /* --run of an external job: a worker must attach */
	const char *config;         /* the config file, for messages */
	uint64_t wait_ns;           /* --run of an external job: give up when no worker serving it has
	                               been attached for this long (--wait; 0: wait for ever) */
	/* the config in force of a job (NULL: no such job now): a fire's steps that come later (after
	 * its listeners) take the job's config then, which a reload may have changed */
	const conf_job_t *(*job_conf)(void *arg, const char *job);
	/* --run: every item has its final outcome (and its after listeners ended), or none will
	 * run (its before or beforeAll failed): exit with code */
	void (*finished)(void *arg, int code);
	void *arg;
};

local_t *local_new(const struct local_params *p);
void local_free(local_t *l);
/* Nothing new starts (shutdown). */
void local_stop(local_t *l);

/* --standalone: the scheduler's start hook (arg: the local_t); the scheduler is told when each
 * fire ends (its items have ended, or its before or beforeAll listener failed). */
int local_fire(void *arg, const struct sched_fire_info *f);
void local_set_sched(local_t *l, sched_t *s);

/* --run JOB[:ITEMS] against conf, before anything starts (no worker, no socket): 0, or -1 with
 * the error logged (an unknown job, with the closest name and the jobs there are; items that are
 * not the job's, with its range). config: the file, for the message. */
int local_run_check(const conf_t *conf, const char *spec, const char *config);
/* --run JOB[:ITEMS]: start the fire (its before and beforeAll listeners, then its items) (0), or
 * say why not (-1, logged). */
int local_run(local_t *l, const conf_t *conf, const char *spec);
int local_is_run(const local_t *l);
/* From the tick: --run gives up when no worker becomes ready, or (external) when none serving the
 * job is attached for wait_ns; it says meanwhile that it waits for one. */
void local_tick(local_t *l, uint64_t now_ns, int stopping);
/* After the loop: --run's exit status, 0 only if every item ended ok (items that never ended,
 * because a signal or a failure stopped the supervisor first, did not); says which did not. */
int local_run_finish(const local_t *l);

#endif
