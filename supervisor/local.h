/* supervisor/local.h: fires without ZooKeeper, where every item runs here: the scheduler's fires
 * with --standalone, and --run JOB[:ITEMS], one fire here and now. Both are fires of the one
 * tracker (fire.h). */
#ifndef EJOB_LOCAL_H
#define EJOB_LOCAL_H

#include <stdint.h>

#include "conf/conf.h"
#include "supervisor/attach.h"
#include "supervisor/fire.h"
#include "supervisor/pool.h"
#include "supervisor/sched.h"

typedef struct local local_t;

struct local_params {
	fires_t *fires;
	pool_t *pool;               /* --run: a worker must become ready */
	att_t *att;                 /* --run of an external job: a worker must attach */
	const char *config;         /* the config file, for messages */
	/* --run: every item has its final outcome: exit with code */
	void (*finished)(void *arg, int code);
	void *arg;
};

local_t *local_new(const struct local_params *p);
void local_free(local_t *l);
/* Nothing new starts (shutdown). */
void local_stop(local_t *l);

/* --standalone: the scheduler's start hook (arg: the local_t); the scheduler is told when each
 * fire ends. */
int local_fire(void *arg, const struct sched_fire_info *f);
void local_set_sched(local_t *l, sched_t *s);

/* --run JOB[:ITEMS]: queue the fire (0), or say why not (-1, logged). */
int local_run(local_t *l, const conf_t *conf, const char *spec);
int local_is_run(const local_t *l);
/* From the tick: --run gives up when no worker becomes ready, and says it waits for an attach. */
void local_tick(local_t *l, uint64_t now_ns, int stopping);
/* After the loop: --run's exit status, 0 only if every item ended ok (items that never ended,
 * because a signal or a failure stopped the supervisor first, did not); says which did not. */
int local_run_finish(const local_t *l);

#endif
