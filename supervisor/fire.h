/* supervisor/fire.h: fires of jobs on this supervisor: a fire queues the items this instance runs,
 * counts their final outcomes, and tells the scheduler when the last one has ended. */
#ifndef EJOB_FIRE_H
#define EJOB_FIRE_H

#include <stdint.h>

#include "conf/conf.h"
#include "supervisor/dispatch.h"
#include "supervisor/sched.h"

struct sup;

/* The scheduler's start hook (arg: struct sup *): without ZooKeeper, every item runs here. */
int fire_start(void *arg, const struct sched_fire_info *f);
/* A dispatcher outcome whose cookie is a fire. */
void fire_outcome(struct sup *s, const struct disp_outcome *o);
/* At exit: forget the fires still open. */
void fire_free_all(struct sup *s);

/* Queue items[0..n) of job j (of `total` items) for one fire, with one taskId naming them all;
 * each outcome comes back with `cookie`. Returns how many were queued (0: none; logged). */
uint32_t fire_queue(struct sup *s, const conf_job_t *j, const uint32_t *items, uint32_t n, uint32_t total,
                    uint64_t fire_ms, uint64_t epoch, uint64_t cookie);

/* FRAME_KIND_* of a job's type (FRAME_KIND_NONE: no type). */
uint32_t fire_kind(const conf_job_t *j);
/* ElasticJob's taskId: "{job}@-@{items,...}@-@READY@-@{instance}" (malloc'd; NULL: no memory). */
char *fire_task_id(const char *job, const uint32_t *items, uint32_t n, const char *instance);

#endif
