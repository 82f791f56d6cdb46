/* tools/ejobctl_serve_changes.h: GET /api/v1/changes: what serve's model of the cluster
 * (tools/ejobctl_model.h) saw change, and every audited write through serve, in memory (the last
 * CHANGES_KEEP), numbered from 1 in the order they came. The model's thread adds a job's events at
 * its swap (changes_job, its hook: the job's snapshot before and after, compared); the request
 * threads add the writes (changes_audit) and read (changes_json). One lock of its own, held only
 * to copy in or out: a reader never waits on ZooKeeper nor on the model's reads. */
#ifndef EJOB_EJOBCTL_SERVE_CHANGES_H
#define EJOB_EJOBCTL_SERVE_CHANGES_H

#include <stdint.h>

#define CHANGES_KEEP 1000
#define CHANGES_LIMIT_DEFAULT 100

typedef struct changes changes_t;
struct snap_job;
struct json_t;

changes_t *changes_new(void);   /* NULL if out of memory */
void changes_free(changes_t *f);

/* The model's hook at its swap (model_change_fn; f is the changes_t): job's snapshot before
 * and after (NULL: no such child of the namespace; a child without a config node is no job),
 * compared; the events of what differs (docs/api.md lists the kinds), health judged at now_ms
 * for both. */
void changes_job(void *f, const char *job, const struct snap_job *before, const struct snap_job *after,
                 int64_t now_ms);

/* A write through serve, as its audit line has it: kind "audit", the user, the job and item (or
 * instance) the path names (NULL: none), detail "METHOD PATH (STATUS)". f may be NULL (no feed). */
void changes_audit(changes_t *f, const char *user, const char *job, const char *item, const char *instance,
                   const char *method, const char *path, unsigned status);

/* {"changes": [...], "next": N}: the events with seq >= since, oldest first, at most limit (since
 * < 0: the last limit); "next" the seq to ask for next time. A since beyond what this feed has
 * numbered (serve restarted: its feed starts again at 1) is taken as 1. f may be NULL (--no-model:
 * no feed, none). NULL if out of memory. */
struct json_t *changes_json(changes_t *f, long long since, int limit);

#endif
