/* tools/ejobctl_api.h: what the CLI's commands and `ejobctl serve` share. Each function works on
 * a struct ctl that ctl_options filled (the CLI) or that serve keeps (c->kept: its own session,
 * c->out and c->err a response's buffers, c->msg the failure's message): it connects (a kept
 * session: not again), does the command's work, prints what the command prints (c->json: the
 * --json document) on c->out, and returns the command's exit status (0, 1 runtime failure, 2 an
 * unknown name or bad input) after its message. The API's answers are these documents, so that
 * `ejobctl jobs --json` and GET /api/v1/jobs give the same fields. */
#ifndef EJOB_EJOBCTL_API_H
#define EJOB_EJOBCTL_API_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/ejobctl_zk.h"

/* tools/ejobctl_list.c: jobs, servers [JOB] [--server IP], instances [JOB] [--instance ID]
 * (job, server, instance: NULL for all) */
int ctl_show_jobs(struct ctl *c);
int ctl_show_servers(struct ctl *c, const char *job, const char *server);
int ctl_show_instances(struct ctl *c, const char *job, const char *instance);
/* jobs --json's document on out: the jobs (sorted by name), the namespace's children without a
 * config node (extra), health judged at now_ms. What ctl_show_jobs prints, and serve's model. */
struct snap_job;
void ctl_jobs_json(const struct ctl *c, FILE *out, const struct snap_job *const *jobs, int n, char *const *extra,
                   int nextra, int64_t now_ms);
/* The jobs a listing shows (sorted by name) and the namespace's children without a config node:
 * read now (the CLI), or serve's model's table. */
struct ctl_jobset {
	const struct snap_job *const *j;
	int n;
	char *const *extra;
	int nextra;
};
/* servers and instances [JOB] [--server IP | --instance ID] on out (json: the --json document,
 * else the table), of s (with job: s is that job alone); only is one of s's names (checked by the
 * caller). What ctl_show_servers / ctl_show_instances print, and serve's model (c: its namespace). */
void ctl_servers_out(const struct ctl *c, FILE *out, int json, const struct ctl_jobset *s, const char *job,
                     const char *only);
void ctl_instances_out(const struct ctl *c, FILE *out, int json, const struct ctl_jobset *s, const char *job,
                       const char *only);

/* tools/ejobctl_status.c: status JOB [ITEM...] (nonly 0: every item) */
int ctl_show_status(struct ctl *c, const char *job, const int *only, int nonly);

/* tools/ejobctl_runs.c: runs ROOT [--limit N] (the newest limit runs of the workflow whose root is
 * root); root NULL: the namespace's workflows. 2 for an unknown job ("no job 'X' ...") and for one
 * that is not a workflow's root ("job 'B' is not a workflow's root: ..."). */
int ctl_show_runs(struct ctl *c, const char *root, int limit);

/* tools/ejobctl_ops.c: cmd is trigger, disable, enable, disable-item, enable-item, shutdown or
 * remove, with the CLI's --server, --instance, ITEM..., --force and (trigger) --parameter (NULL/0: not given). */
int ctl_operate(struct ctl *c, const char *cmd, const char *job, const char *server, const char *instance,
                char *const *items, int nitems, int force, const char *param);

/* tools/ejobctl_config.c: config set JOB with buf (len bytes; label names it in messages): the
 * check's lines on c->err, then written with the version read (want >= 0: only if the node is at
 * that version). *conflict: refused because the node changed (or was at another version than
 * want). res (may be NULL): what was done. */
#define CTL_SET_KEYS_MAX 40
struct ctl_set_res {
	int version;                /* the node's version after (unchanged bytes: no write, as read) */
	int changed;                /* written */
	size_t nkeys;               /* written: the keys whose values differ (conf_job_diff: ElasticJob's names) */
	const char *keys[CTL_SET_KEYS_MAX];
};
int ctl_config_set(struct ctl *c, const char *job, const char *label, char *buf, size_t len, long want,
                   int *conflict, struct ctl_set_res *res);

#endif
