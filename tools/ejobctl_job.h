/* tools/ejobctl_job.h: a job's writes as one call each, for `ejobctl apply`, `trigger`, `remove`
 * and the HTTP API (`ejobctl serve`: PUT /api/v1/jobs/{job}, POST .../trigger, DELETE), so that
 * both check and write exactly alike. Each takes a connected struct ctl (ctl_connect). Messages
 * that are not in err go to stderr as "ejobctl CMD: ..." (ctl_msg). */
#ifndef EJOB_EJOBCTL_JOB_H
#define EJOB_EJOBCTL_JOB_H

#include <stddef.h>

#include "conf/conf.h"
#include "tools/ejobctl_plan.h"
#include "tools/ejobctl_zk.h"

/* ---- a job's config node: create or update (tools/ejobctl_apply.c) --------------------------- */

enum ctl_put_action {
	CTL_PUT_CREATE,      /* no config node: the job's root node (if missing) and config, in one multi */
	CTL_PUT_UPDATE,      /* a node that differs from the job: set at the version read */
	CTL_PUT_UNCHANGED,   /* the node says what the job says (same bytes, or conf_job_equal): left alone */
	CTL_PUT_CONFLICT,    /* the node changed (or came, or went) between the read and the write, or is not
	                        expected_version: nothing written */
};

#define CTL_VERSION_ANY (-1)   /* expected_version: whatever version is read first */
#define CTL_VERSION_NONE (-2)  /* expected_version: only if there is no config node (create only) */
#define CTL_PUT_KEYS_MAX 40

struct ctl_put {
	enum ctl_put_action action;    /* what was done (dry run: would be) */
	int version;                   /* the node's version after the write (dry run, unchanged: as read; -1: none) */
	size_t nkeys;                  /* CTL_PUT_UPDATE: the keys that differ (conf_job_diff: ElasticJob's names) */
	const char *keys[CTL_PUT_KEYS_MAX];
	char *old_node;                /* the node as read (NULL: none), malloc'd */
	char *new_node;                /* the node the job makes (conf_node_emit), malloc'd */
};

/* The config node of job j (a file's job, checked by conf_parse: the supervisor's own check) as
 * `ejobctl config set` writes it (conf_node_emit). Reads the node and, unless dry_run, makes it
 * so: a new job gets its root node (data: its type as the supervisor writes it, SCRIPT, HTTP, ...,
 * ElasticJob's JobScheduler writes its class name there) and its config in one multi; a changed
 * one is set with the version read (or expected_version: the node must be that version, as an
 * HTTP If-Match). The namespace must exist (ctl_connect). Returns 0 with *out filled
 * (ctl_put_free), 1 for a conflict (out->action CTL_PUT_CONFLICT) or a failed request, 2 when the
 * node cannot be written (too big; expected_version for a job that has no node); err says why
 * ("/ns/job/config changed meanwhile (version 3 when read, now 4): nothing written"). */
int ctl_job_put(struct ctl *c, const conf_job_t *j, int expected_version, int dry_run, struct ctl_put *out,
                char *err, size_t errsz);
void ctl_put_free(struct ctl_put *p);
const char *ctl_put_action_name(enum ctl_put_action a);   /* "create", "update", "unchanged", "conflict" */

/* ---- workflows (tools/ejobctl_flow.c) ---------------------------------------------------------- */

/* The workflows (conf/conf_flow.h: dependsOn names jobs, no cron with it, no cycle, one root
 * each) the namespace would hold with jobs[0..n) written, each in place of the namespace's job of
 * its name, and the jobs gone[0..ngone) removed: the namespace's other jobs read from their
 * config nodes (one pipelined read; a node that does not parse is a job in no workflow), all
 * checked together by conf_flow_check. A change that touches no workflow reads only the given
 * jobs' nodes. c is connected (ctl_connect; ns_missing: no other job). Returns 0; 2 after the
 * message "ejobctl CMD: job D: dependsOn: ...; nothing written" (conf_flow_check's, e.g. "job B:
 * dependsOn: a cycle: B -> C -> D -> B; ..."); 1 after a failed read. For apply (its file loaded
 * with conf_opts_t.flow_open), config set and edit, and the HTTP API's job create. */
int ctl_flow_check(struct ctl *c, const conf_job_t *const *jobs, size_t n, char *const *gone, int ngone);

/* ---- trigger and remove (tools/ejobctl_ops.c, tools/ejobctl_remove.c) -------------------------- */

/* A fire now on every online instance of job (trigger/{instanceId}, ElasticJob's contract); with
 * param (NULL: none), that fire's items get it as their jobParameter, carried in the trigger
 * node's data (ipc/trigdata.h). An instance with a trigger pending already keeps it (with
 * another parameter: refused, nothing written). 0 with the writes made in *written (may be NULL;
 * plan_free), or an exit status after a message: 1 (no instance online, a failed request), 2 (no
 * such job, a parameter longer than TRIGDATA_PARAM_MAX). */
int ctl_job_trigger(struct ctl *c, const char *job, const char *param, struct plan *written);

/* `ejobctl remove JOB [--force]`: the whole job, refused while an instance is online unless
 * force. 0 (*nodes: how many were deleted; may be NULL), or an exit status after a message. */
int ctl_job_remove(struct ctl *c, const char *job, int force, int *nodes);

#endif
