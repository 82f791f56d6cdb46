/* tools/ejobctl_ops.h: what tools/ejobctl_ops.c (trigger, disable, enable, the items', shutdown,
 * ctl_operate) and tools/ejobctl_remove.c (remove) share: the arguments of an operation and the
 * plan-write-retry loop. Internal to those two. */
#ifndef EJOB_EJOBCTL_OPS_H
#define EJOB_EJOBCTL_OPS_H

#include "tools/ejobctl_plan.h"
#include "tools/ejobctl_zk.h"

struct args {
	const char *job;
	const char *server;         /* --server IP */
	const char *instance;       /* --instance ID */
	const char *param;          /* trigger --parameter P */
	int has_param;
	int force;                  /* --force */
	char **rest;                /* positional arguments after JOB */
	int nrest;
	char *config;               /* remove: the config node read before (for the overwrite warning) */
};

/* ctl_options, then this command's own: which of --server, --instance, --force it takes (a
 * string of 's', 'i', 'f'), JOB and (want_rest) more positional arguments. 0 or 2. */
int ops_parse(struct ctl *c, const char *cmd, int argc, char **argv, const char *takes, int want_rest,
              const char *usage, struct args *a);
int ops_done(struct ctl *c, struct args *a, int status);   /* closes c, frees a's; returns status */
/* children of /NS/JOB/rel; a missing node has none. ZooKeeper's code. */
int ops_kids(struct ctl *c, const char *job, const char *rel, char ***v, int *n);
/* "job 'J' has no server 'X'; did you mean 'Y'?", or the list of what it has; returns 2 */
int ops_unknown(const struct ctl *c, const char *what, const char *name, const char *job, char *const *v, int n);
/* The instances of the job that --server / --instance name (all without either): their ids, in
 * *ids. 0, or an exit status after a message (2: an unknown server or instance). */
int ops_pick_instances(struct ctl *c, const struct args *a, char ***ids, int *n);

/* Make the plan: 0 (p filled), or an exit status after a message. */
typedef int plan_fn(struct ctl *c, const struct args *a, struct plan *p);
/* after a plan was written: what else to tell (the plan as written) */
typedef void after_fn(const struct ctl *c, const struct args *a, const struct plan *p);
/* connect, plan, write in one multi (planned again while the cluster changes under it), print */
int ops_operate(struct ctl *c, struct args *a, plan_fn *fn, const char *none, after_fn *after);

/* remove (tools/ejobctl_remove.c) */
int ops_plan_remove_server(struct ctl *c, const struct args *a, struct plan *p);
int ops_remove_job(struct ctl *c, struct args *a);

#endif
