/* supervisor/run/fire.h: the one fire tracker. Every run of a job's items on this supervisor is a
 * fire here, whatever started it: the scheduler without ZooKeeper (local.c), --run (local.c), a
 * fire in ZooKeeper mode, a failover take or a misfire's run again (coord_fire.c). A fire keeps
 * its items, how each ended and the counts; it builds the dispatcher's requests; and every
 * outcome the dispatcher reports comes back through one entry point, fires_outcome().
 *
 * What differs between the owners is a small ops table: what to do when an item has ended (the
 * ZooKeeper fire writes its completed node), when all have (tell the scheduler, exit --run), and
 * how the summary line names the fire.
 *
 * item_started() and item_ended() in fire.c are the one place where an item starts and ends: the
 * execution events (log today; metrics, history, error handlers next) come from there. */
#ifndef EJOB_FIRE_H
#define EJOB_FIRE_H

#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "supervisor/exec/dispatch.h"
#include "supervisor/run/events.h"

typedef struct fires fires_t;
typedef struct fire fire_t;       /* fire.c's (opaque): read and changed through fire_* */

/* How an item of a fire ended: fire_t.done[item]. */
enum fire_end {
	FIRE_OPEN = 0,              /* not ended (or not this fire's) */
	FIRE_OK,                    /* ran to its end and succeeded */
	FIRE_FAILED,                /* failed, timed out, was cancelled or lost: it did not complete */
	FIRE_HANDED_OVER,           /* stopped because the job was shut down here: queued for failover
	                             * (set by the ZooKeeper fire's item_ended) */
};

struct fire_ops {
	/* An item's final outcome, after the fire counted it (done[item] is FIRE_OK or FIRE_FAILED,
	 * and the op may refine it). NULL: nothing to do. */
	void (*item_ended)(fire_t *f, uint32_t item, const struct disp_outcome *o);
	/* Every item submitted has its final outcome. NULL: nothing to do (the owner ends it). */
	void (*all_ended)(fire_t *f);
	/* The summary line's name of the fire ("job J: fire F"), and what follows the counts (the
	 * line ends "...succeeded in 1.00s{tail}" or "...failed (1.00s{tail})"; NULL: nothing). */
	void (*name)(const fire_t *f, char *buf, size_t len);
	void (*tail)(const fire_t *f, int all_ok, char *buf, size_t len);
	const char *here;           /* after the item count: " here" when other instances run the rest */
	int fail_level;             /* enum log_level of a summary with failures */
};

/* A fire is fire.c's: its owner reads it through these, and changes its items only through the
 * operations below (the tracker counts ends against them). */
uint64_t fire_id(const fire_t *f);          /* the fire id: its scheduled time in ms (a side run: its start) */
uint64_t fire_first(const fire_t *f);       /* the earliest fire id it stands for (fire_stands_for), or its own */
const char *fire_job(const fire_t *f);
void *fire_owner(const fire_t *f);          /* the ops' object */
uint32_t fire_total(const fire_t *f);       /* the job's shardingTotalCount */
uint32_t fire_n(const fire_t *f);           /* items it runs here */
uint32_t fire_item(const fire_t *f, uint32_t k);   /* the k-th of them, k < fire_n */
const uint32_t *fire_items(const fire_t *f);       /* all of them */
enum fire_end fire_end_of(const fire_t *f, uint32_t item);   /* FIRE_OPEN for an item not its */
uint32_t fire_ended(const fire_t *f);       /* items with a final outcome */
uint32_t fire_ok(const fire_t *f);          /* of them, FIRE_OK */
uint64_t fire_epoch(const fire_t *f);       /* the assignment it ran under (0: none), from fire_submit */
uint64_t fire_started_ns(const fire_t *f);  /* CLOCK_MONOTONIC, at fire_new */
enum event_source fire_source(const fire_t *f);
void fire_set_source(fire_t *f, enum event_source s);
/* This fire's jobParameter instead of the job's (a trigger with a parameter: ipc/trigdata.h):
 * copied; NULL: the job's own. Set before fire_submit. 0, or -1 out of memory (unchanged). */
int fire_set_param(fire_t *f, const char *p);
const char *fire_param(const fire_t *f);    /* NULL: the job's own */
/* The workflow run this fire is part of (docs/config.md "Workflows"): run (its root's fire id) and
 * root (NULL: none; copied). -1 when out of memory. Its items carry run (EJOB_WORKFLOW_RUN). */
int fire_set_run(fire_t *f, uint64_t run, const char *root);
uint64_t fire_run(const fire_t *f);         /* 0: no workflow's */
const char *fire_root(const fire_t *f);     /* NULL: no workflow's */

/* Its items, before fire_submit: */
void fire_clear(fire_t *f);                 /* none */
void fire_add(fire_t *f, uint32_t item);    /* one more (item < total, not there yet) */
int fire_drop(fire_t *f, uint32_t item);    /* without item: 1 if it was there */
/* Keep only the items keep() says yes to; returns how many were dropped. */
uint32_t fire_keep(fire_t *f, int (*keep)(void *arg, uint32_t item), void *arg);
/* Its items end without running (or an outcome refined by the owner's item_ended): item gets
 * end (FIRE_FAILED or FIRE_HANDED_OVER), counted as ended if it was open. 1 if it was open. */
int fire_end_item(fire_t *f, uint32_t item, enum fire_end end);

/* The fires of one supervisor: they queue to d, and name instance in their taskIds. */
fires_t *fires_new(disp_t *d, const char *instance);
/* The execution events go to e (NULL: none); set before the first fire. */
void fires_set_events(fires_t *fs, events_t *e);
/* The events they go to (the scheduler and coord emit theirs there too; NULL: none). */
events_t *fires_events(const fires_t *fs);
/* At exit: forget the fires still open, and the set. */
void fires_free(fires_t *fs);

/* The dispatcher's hooks (struct disp_hooks): every request's cookie is its fire. */
void fires_outcome(fires_t *fs, const struct disp_outcome *o);
void fires_started(fires_t *fs, const struct disp_started *s);

/* A fire of job (of `total` items) with fire id fire_ms, started now, with no items yet: the
 * owner fills items[0..n) (room for total). NULL when out of memory (logged). */
fire_t *fire_new(fires_t *fs, const struct fire_ops *ops, void *owner, const char *job, uint32_t total,
                 uint64_t fire_ms);
/* The fires it stands for: a fire, its own id; a catch-up, every missed fire (ms, ascending, the
 * latest n of missed; the others counted). The execution events name them. */
void fire_stands_for(fire_t *f, const int64_t *fires_s, uint32_t n, uint32_t missed);
/* Queue items[0..n) with the job's config c and the assignment's epoch, with one taskId naming
 * them all. n becomes the number queued (0: none; logged). Nothing is published yet, so no
 * outcome comes back before fires_kick(). */
uint32_t fire_submit(fire_t *f, const conf_job_t *c, uint64_t epoch);
/* Publish what was submitted. An outcome (and the end of a fire, which may free it) can come
 * back before this returns: call it last. */
void fires_kick(fires_t *fs);
/* The fire's name as its summary line says it ("job J: fire F"): its ops' name. */
void fire_name(const fire_t *f, char *buf, size_t len);
/* The summary line: every item succeeded (INFO), or how many failed (ops->fail_level). */
void fire_summary(const fire_t *f);
void fire_free(fire_t *f);

/* FRAME_KIND_* of a job's type (FRAME_KIND_NONE: no type). */
uint32_t fire_kind(const conf_job_t *j);
/* ElasticJob's taskId: "{job}@-@{items,...}@-@READY@-@{instance}" (malloc'd; NULL: no memory). */
char *fire_task_id(const char *job, const uint32_t *items, uint32_t n, const char *instance);
/* A time in ms as the log shows fire times: UTC, like the log's own timestamps. */
void fire_fmt_time(uint64_t ms, char *buf, size_t len);

#endif
