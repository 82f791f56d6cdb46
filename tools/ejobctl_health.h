/* tools/ejobctl_health.h: a job's health, judged from one snapshot (tools/ejobctl_snap.h) by
 * whoever shows it: `ejobctl jobs`, `ejobctl status`, the HTTP API (`ejobctl serve`). One place,
 * so that every reader says the same word. docs/operations.md ("Job health") gives the rules. */
#ifndef EJOB_EJOBCTL_HEALTH_H
#define EJOB_EJOBCTL_HEALTH_H

#include <stdint.h>

#include "tools/ejobctl_snap.h"

struct ctl_health {
	const char *word;           /* OK, FAILING, LATE, DISABLED, CRASHED, SHARDING_FLAG */
	char why[512];              /* for people ("" with OK) */
	int64_t last_fire_ms;       /* the latest fire id among the items' last records (-1: none) */
	int64_t last_end_ms;        /* the latest end among them (-1: none) */
	const char *last_outcome;   /* the outcome of that latest end (NULL: none) */
	int64_t last_success_ms;    /* the latest success's end, any item (-1: none known) */
	int failing;                /* items (< shardingTotalCount) whose last execution failed */
	int64_t period_ms;          /* the cron's period after the last end (-1: no cron, or never ran) */
};

int64_t ctl_now_ms(void);       /* the wall clock, epoch ms */

/* Judge job j at now_ms (epoch ms). First that holds:
 *   DISABLED       the job is disabled (config), or every server of it is DISABLED;
 *   CRASHED        an item's running node names an instance that is gone (neither online nor its
 *                  ejob session alive), or an item waits in leader/failover/items for a taker;
 *   FAILING        the last execution of some item failed (failed, crashed, timeout, error);
 *   LATE           the job has a cron and no item's execution ended within twice its period;
 *   SHARDING_FLAG  leader/sharding/necessary stands (resharding due at the next fire);
 *   OK. */
void ctl_job_health(const struct snap_job *j, int64_t now_ms, struct ctl_health *h);

/* The health's keys into the object w is in (the names are an interface: docs/operations.md):
 * health, healthReason, lastFireMs, lastEndMs, lastOutcome, lastSuccessMs, lastSuccess (ISO
 * 8601), failingItems. */
void ctl_health_json(struct jw *w, const struct ctl_health *h);
/* An item's "last" key: its record as an object (fireId, outcome, endMs, end, instance, attempt,
 * consecutiveFailures, lastSuccessMs, source, error, tail: the last two null for an ok one), or
 * null. */
void ctl_last_json(struct jw *w, const struct snap_item *it);
/* The job's "failing" key: an array of the items whose last execution failed (those that
 * failingItems counts), each {item, instance, outcome, endMs, consecutiveFailures, error, tail};
 * [] when none. */
void ctl_failing_json(struct jw *w, const struct snap_job *j);

#endif
