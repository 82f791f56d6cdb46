/* conf/conf_flow.h: workflows, the graph that jobs' dependsOn make, checked. Pure logic: no I/O.
 *
 * A job with dependsOn runs after the jobs it names (its upstreams), when they end; it has no
 * cron of its own. Jobs joined by dependsOn, either way, are one workflow, and a workflow has
 * exactly one root: its one job without dependsOn, which fires on its cron (or, without one, when
 * triggered). A job that no dependsOn joins to another is in no workflow.
 *
 * The loader checks a file's jobs (conf_parse, unless conf_opts_t.flow_open); `ejobctl apply`,
 * `config set` and the HTTP API check the jobs they write with the namespace's others. */
#ifndef EJOB_CONF_FLOW_H
#define EJOB_CONF_FLOW_H

#include <stddef.h>

#include "conf/conf.h"

/* The workflows of jobs[0..n-1] (unique names; dependsOn may name only these) checked. 0 when
 * they are sound; else -1, the first problem found into err (errlen bytes, cut with "..." when it
 * does not fit) and in *at (may be NULL) the name of the job it is about (jobs[]'s own string).
 * errno: EINVAL for a problem, ENOMEM when memory ran out ("out of memory" in err, *at NULL).
 * Checked in this order, each job in jobs' order; the messages:
 *   job D: dependsOn: names D itself; a job cannot run after itself: take it out
 *   job D: dependsOn: no job named X (did you mean 'Y'?); add a job X, or take it out of dependsOn
 *   job D: dependsOn: names X twice; give each job once
 *   job D: cron and dependsOn: a job with dependsOn fires when the jobs it names end, not on a cron;
 *          remove one of them
 *   job B: dependsOn: a cycle: B -> C -> D -> B; each runs after the one before it, so none of them
 *          ever runs: take one out of the next one's dependsOn      (from its first job in jobs' order)
 *   job E: dependsOn: a workflow has one root, and A and E both start this one (A -> B -> D <- E);
 *          give E a dependsOn, or split the workflow
 * In the last, A is the workflow's first job without dependsOn in jobs' order, E the one nearest
 * to it, and the path joins them: X -> Y where Y runs after X, X <- Y where X runs after Y. A
 * workflow with no root at all has a cycle, and is said as one. */
int conf_flow_check(const conf_job_t *const *jobs, size_t n, char *err, size_t errlen, const char **at);

#endif
