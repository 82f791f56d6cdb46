/* tools/ejobctl_wf.h: a workflow's graph and the state of its runs, from what ZooKeeper holds
 * (docs/config.md "Workflows"), for `ejobctl runs` and the HTTP API's /api/v1/workflows. Pure
 * logic: no I/O; tools/ejobctl_runs.c reads the nodes and prints.
 *
 * The graph: each job's dependsOn (its config node's props ejob.dependsOn). A workflow's root has
 * no dependsOn and at least one job depends on it; its workflow is the root and every job that
 * reaches it through dependsOn. The jobs are kept in topological order: by depth (the longest path
 * from the root), then by name, so the root comes first and every job after those it runs after.
 *
 * A run R (the root's fire id) leaves under each job J /{J}/ejob-flow/runs/{R}, "J's part": its
 * data ("fired N ROOT", "skipped ROOT WHY", "given-up ROOT WHY"), ctime, and its records {i}.ok and
 * {i}.failed ("INSTANCE: CAUSE"), each with its ctime. wf_judge makes the states of docs/operations.md
 * "A workflow's runs" out of them. */
#ifndef EJOB_EJOBCTL_WF_H
#define EJOB_EJOBCTL_WF_H

#include <stddef.h>
#include <stdint.h>

/* ---- the graph ------------------------------------------------------------------------------- */

struct wf_node {                /* a job of the namespace, as its config node says */
	const char *name;
	char *const *up;            /* dependsOn, in the node's order */
	size_t nup;
};

struct wf_job {
	const char *name;           /* the wf_node's */
	char *const *up;            /* its dependsOn (may name jobs outside the workflow: hand-written nodes) */
	size_t nup;
	int depth;                  /* the longest path from the root: 0 for the root */
};

struct wf {
	const char *root;
	struct wf_job *j;           /* malloc'd, topological: root first */
	int n;
};

/* Whether nodes[i] is a workflow's root: no dependsOn, and some node names it in its own. */
int wf_is_root(const struct wf_node *nodes, int n, int i);

/* Every i that wf_is_root, in nodes' order, into roots (n of room): how many; -1 out of memory.
 * O(n log n) where wf_is_root for each would be O(n^2) over 10,000 jobs. */
int wf_roots(const struct wf_node *nodes, int n, int *roots);

/* The workflow of nodes[root] (a wf_is_root) into *w (wf_free). 0, or -1 out of memory. */
int wf_build(const struct wf_node *nodes, int n, int root, struct wf *w);
void wf_free(struct wf *w);

/* The root of the workflow job i is part of (its first upstream's, then that one's, until a job
 * without dependsOn), NULL if a dependsOn names no job or loops. For the message that names the
 * root to give instead of a downstream job. */
const char *wf_root_of(const struct wf_node *nodes, int n, int i);

/* ---- a run ---------------------------------------------------------------------------------- */

struct wf_rec {                 /* {item}.ok or {item}.failed */
	int item;
	int failed;
	const char *data;           /* .ok: the instance; .failed: "INSTANCE: CAUSE" */
	int64_t ctime;              /* ms */
};

struct wf_part {                /* a job's part of the run, as read */
	int present;                /* runs/{R} exists */
	const char *data;
	int64_t ctime;
	const struct wf_rec *rec;   /* its .ok and .failed children (others: left out by the reader) */
	int nrec;
};

enum wf_state { WF_WAITING, WF_RUNNING, WF_OK, WF_FAILED, WF_SKIPPED };
enum wf_run_state { WF_RUN_RUNNING, WF_RUN_OK, WF_RUN_FAILED, WF_RUN_GIVEN_UP };

struct wf_fail {                /* a failed item */
	int item;
	char *instance;             /* the record's data before ": " */
	char *cause;                /* after it ("failed" if none) */
	int64_t ctime;
};

struct wf_jstate {
	enum wf_state state;
	int given_up;               /* skipped because its part says given-up */
	int items;                  /* N of "fired N": -1 when it did not fire */
	int done;                   /* items ended (.ok and .failed records) */
	struct wf_fail *failed;     /* by item */
	int nfailed;
	char *why;                  /* skipped: why ("C item 1 failed", "given up: ..."); else NULL */
	int64_t started;            /* its part's ctime when it fired; -1 none */
	int64_t ended;              /* ok or failed with every item ended: the newest record's ctime;
	                               skipped with a part: the part's ctime; else -1 */
};

struct wf_run {
	enum wf_run_state state;
	char *why;                  /* failed: "C item 1 on INSTANCE: CAUSE"; given-up: "D given up: ..."; else NULL */
	struct wf_jstate *js;       /* per job of the workflow, in its order */
};

/* The states of run parts[0..w->n) (w's order) into *r (wf_run_free); msg: the root's message
 * node's data ("JOB ITEM INSTANCE", NULL none): the failure the run's why names, when it is one of
 * the records. The run's why otherwise names its earliest failure. 0, or -1 out of memory. */
int wf_judge(const struct wf *w, const struct wf_part *parts, const char *msg, struct wf_run *r);
void wf_run_free(const struct wf *w, struct wf_run *r);

const char *wf_state_name(enum wf_state s);           /* "waiting", "running", "ok", "failed", "skipped" */
const char *wf_run_state_name(enum wf_run_state s);   /* "running", "ok", "failed", "given-up" */

#endif
