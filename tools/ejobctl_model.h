/* tools/ejobctl_model.h: `ejobctl serve`'s model of the cluster: every job of the namespace as
 * `ejobctl jobs` reads it (tools/ejobctl_snap.h), kept up to date from ZooKeeper watches, so that
 * GET /api/v1/jobs over 10,000 jobs is an answer from memory, not 160,000 reads.
 *
 * Its own session and thread. Every node a job's snapshot reads is read with a watch (absent ones
 * with an exists watch), as is the namespace's children; a watch that fires marks its job dirty
 * (or the namespace: jobs come and go), and the thread reads the dirty jobs again, pipelined, and
 * swaps them in. An expired session is closed, a new one opened, and every job read again; until
 * that is done, and while the session is not connected, the model answers nothing (the caller
 * reads ZooKeeper as before). Readers take the table under a read lock; each rendered document
 * (jobs, servers, instances) is kept for one wall-clock second of one table generation (health and
 * next fire are judged at the time of rendering), so many clients cost one rendering a second. */
#ifndef EJOB_EJOBCTL_MODEL_H
#define EJOB_EJOBCTL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "tools/ejobctl_zk.h"

typedef struct model model_t;

/* What the model saw change, told at its swap (on its thread, outside its locks, before the pass
 * counts as done: model_sync returns after it): job's snapshot before and after (NULL: not a
 * child of the namespace), for each job a pass read again, and for each child gone. The first
 * build tells nothing (there is no before); a rebuild after the session expired tells every job
 * (the hook finds what differs). The snapshots are valid during the call only. */
struct snap_job;
typedef void model_change_fn(void *ctx, const char *job, const struct snap_job *before,
                             const struct snap_job *after, int64_t now_ms);

/* Start keeping the model of c's cluster (hosts, namespace, digest are copied); changed (may be
 * NULL) is told what changed, with ctx. NULL if out of memory or the thread cannot start. The
 * first build runs in the background. */
model_t *model_start(const struct ctl *c, model_change_fn *changed, void *ctx);
void model_stop(model_t *m);

/* `ejobctl jobs --json`'s document from the model (malloc'd, *len bytes, NUL-terminated), or NULL
 * if the model cannot answer now (not built yet, session not connected or being rebuilt). */
char *model_jobs_json(model_t *m, size_t *len);
/* The same for `ejobctl servers --json` and `ejobctl instances --json` (the whole namespace),
 * each kept for its second and generation as the jobs' is. */
char *model_servers_json(model_t *m, size_t *len);
char *model_instances_json(model_t *m, size_t *len);

/* Read-your-writes: after a write made on another session, wait (at most timeout_ms) until the
 * model has seen every change ZooKeeper made before this call: a sync on the model's session (the
 * watch events of earlier changes come before its answer), then the thread's pass over what they
 * marked. 0; 1 if the model cannot answer now (reads go to ZooKeeper: nothing to wait for); -1 if
 * the time ran out or the sync failed. */
int model_sync(model_t *m, int timeout_ms);

/* how many times the model read jobs (passes) and jobs read in all: for tests and the bench */
void model_counts(model_t *m, unsigned long *passes, unsigned long *jobs_read);

#endif
