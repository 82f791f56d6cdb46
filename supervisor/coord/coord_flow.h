/* supervisor/coord/coord_flow.h: what coord_flow.c (the downstream side: waiting, deciding) and
 * coord_flow_rec.c (the upstream side: a fire's nodes, its items' records, a take's run, the
 * run's one message) share. The nodes are described in coord_flow.c. */
#ifndef EJOB_COORD_FLOW_H
#define EJOB_COORD_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "supervisor/coord/coord_int.h"

#define FLOW_KEEP 32            /* runs kept under each job's ejob-flow/runs */
#define FLOW_WINDOW 16          /* a run undecided when this many newer ones have started is given up */

struct flist {                  /* a runs/ list: the run ids, ascending */
	uint64_t *id;
	size_t n;
	int known;
};

/* A job with dependsOn: what its instance here watches and decides (coord_flow.c) */
struct cflow {
	struct cjob *j;
	size_t nup;
	char **up;                  /* the upstream jobs (dependsOn, a copy) */
	zkc_keep_t **w_up;          /* [nup]: /{U}/ejob-flow/runs children */
	struct flist *ul;           /* [nup] */
	zkc_keep_t *w_own;          /* /{D}/ejob-flow/runs children */
	struct flist own;
	struct frun *runs;
	struct fproxy *proxies;     /* the runs whose ElasticJob instances' items this instance records */
	uint64_t session;
	int refs;                   /* requests in flight with it as their argument */
	int dead;                   /* freed by its job: the last of them frees it */
};

/* coord_flow_ej.c: the items of ElasticJob's instances (ej[0..nej), taken) of a run this instance
 * fired: every item's running node watched from now; an ElasticJob instance's recorded ok when it
 * goes. NULL: out of memory (ej freed). Dropped when the trigger multi fails. */
struct fproxy;
struct fproxy *fl_proxy_new(struct cflow *fl, uint64_t run, char **ej, int nej);
void fl_proxy_drop(struct cflow *fl, struct fproxy *x);
void fl_proxies_free(struct cflow *fl);

/* s is one of v[0..n) */
int fl_has(char *const *v, int n, const char *s);

/* another job's node: "/{job}" and fmt's */
const char *fl_path(char *buf, const char *job, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* l: the run ids of a children answer (others' names skipped), ascending */
void fl_list_set(struct flist *l, const struct zkc_res *r);
int fl_list_has(const struct flist *l, uint64_t id);
/* The runs under job's ejob-flow/runs beyond the FLOW_KEEP newest go (each with its children). */
void fl_prune(coord_t *c, const char *job);

#endif
