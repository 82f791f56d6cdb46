/* supervisor/sink/errh.h: the error handlers (jobErrorHandlerType). When an item of a job fails for
 * good (its final outcome, after maxRetries, is failed, timeout, crashed or error), its job's
 * handler in force says what happens besides the supervisor's log line: LOG (the default),
 * THROW (as LOG) and IGNORE nothing more; DINGTALK, WECHAT, EMAIL send ElasticJob's message, and
 * ejob's WEBHOOK POSTs the failure's record as JSON (docs/config.md, "Error handlers").
 *
 * A tap on the execution events (events.h) decides on the loop, at once and cheaply: it looks up
 * the job's config in force (a hook), and for a sending handler builds a request that holds
 * everything it needs (the message and the props, copied) and queues it. One thread of this
 * module's own sends them, one after another, with libcurl (HTTP and SMTP), each transfer
 * bounded by its timeouts and tried up to ERRH_ATTEMPTS times when the server could not be
 * reached or answered 5xx. The queue is bounded (ERRH_QUEUE): past it a message is dropped,
 * counted, and the log says so once per episode. The thread touches nothing of the loop's; its
 * counters are atomics. It starts with the first message, so a supervisor without a sending
 * handler has no thread for it. */
#ifndef EJOB_ERRH_H
#define EJOB_ERRH_H

#include <stdint.h>

#include "conf/conf.h"
#include "supervisor/run/events.h"

#define ERRH_QUEUE 256          /* messages waiting to be sent */
#define ERRH_ATTEMPTS 3         /* per message: 1 + 2 retries, 0.5 s then 1 s apart */
#define ERRH_STOP_MS 5000       /* at the stop: what is queued gets this long */
#define ERRH_MAIL_CONNECT_MS 10000   /* EMAIL: ElasticJob sets no timeouts; ejob bounds the */
#define ERRH_MAIL_TOTAL_MS 30000     /* connection and the whole exchange */

typedef struct errh errh_t;

struct errh_hooks {
	/* The config in force of job: the config node's under ZooKeeper, else the file's; NULL when
	 * there is no such job any more. Called on the loop, in the tap. */
	const conf_job_t *(*job_conf)(void *arg, const char *job);
};

/* For the supervisor whose instance id is instance ("{ip}@-@{pid}"). NULL: out of memory. */
errh_t *errh_new(const struct errh_hooks *h, void *arg, const char *instance);
/* Take the failed items of e's events (a tap). 0, or -1 (no room for another tap). */
int errh_subscribe(errh_t *x, events_t *e);
/* At the exit: what is queued is sent within ERRH_STOP_MS (a transfer still going then is cut),
 * then the thread ends. NULL is fine. */
void errh_free(errh_t *x);

/* A workflow run failed (docs/config.md "Workflows"): item of job failed for good in run of root,
 * and this instance won the run's one message (coord_flow.c): job's handler sends
 *   Workflow 'ROOT' run RUN failed: job 'JOB' exception occur in job processing, caused by item I: CAUSE
 *   on INSTANCE[
 *   last output:
 *   TAIL]
 * (WEBHOOK: {"workflow","workflowRun","job","item","instance","error","output","message"}). The
 * items of a workflow's fires send nothing of their own. Called on the loop; x may be NULL. */
void errh_run_failed(errh_t *x, const char *job, uint32_t item, uint64_t run, const char *root, const char *instance,
                     const char *cause, const char *tail);

enum errh_result { ERRH_SENT = 0, ERRH_FAILED, ERRH_DROPPED, ERRH__RESULTS };
const char *errh_result_name(enum errh_result r);            /* "sent", "failed", "dropped" */
/* Messages since the start, by handler (conf_errh_type_t: DINGTALK, WECHAT, EMAIL, WEBHOOK count)
 * and result. x may be NULL (all 0). */
void errh_counts(const errh_t *x, uint64_t out[CONF_ERRH__COUNT][ERRH__RESULTS]);

/* The text every handler sends for an ended attempt (ElasticJob's sentence, then ejob's cause),
 * malloc'd; NULL: out of memory. Pure:
 *   Job 'J' exception occur in job processing, caused by item I: OUTCOME[ (exit N|signal N)][: ERROR]
 *   fire FIRE_TIME (SOURCE), attempt A, on INSTANCE (WHERE)
 *   [last output:
 *   OUTPUT] */
char *errh_message(const struct event *ev, const char *instance);

#endif
