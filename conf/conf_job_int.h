/* conf/conf_job_int.h: what conf_job.c (a job's keys) and conf_job_props.c (its props) share;
 * private to them. */
#ifndef EJOB_CONF_JOB_INT_H
#define EJOB_CONF_JOB_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/conf_int.h"

#define NELEM(a) (sizeof(a) / sizeof *(a))
#define KEPT_MAX 24

typedef struct jb {
	conf_ctx_t *cx;
	conf_job_t *j;
	const char *path;
	const conf_tnode_t *at;       /* where job-level errors point: the name key or the map */
	int errors;
	const char *kept[KEPT_MAX];   /* a node's keys whose values are not usable (key_close) */
	size_t nkept;
} jb_t;

/* An error handler's prop (conf_errh.c) reported at the prop's key when it is written (else at
 * props, or the job): jb_errh_err's argument. */
struct errh_arg {
	jb_t *b;
	const conf_tnode_t *props, *at;
};

/* the key's path under the job ("jobs.NAME.KEY", or "KEY" in a node) */
void jb_kpath(const jb_t *b, char *out, size_t outsz, const char *key);
/* one problem of a key checked on its own (a node: that key keeps its value in force) */
void jb_key_err(jb_t *b, const conf_tnode_t *at, const char *path, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
bool jb_is_identifier(const char *s);
/* conf_job_props.c: props (in a node, ejob's own keys come out of them: *ejob, *ejobk), what each
 * type needs in them, an error handler's prop's problem */
void jb_props(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at, const conf_tnode_t **ejob,
              const conf_tnode_t **ejobk);
void jb_type_props(jb_t *b, const conf_tnode_t *pk, const conf_tnode_t *pv);
void jb_errh_err(void *arg, const char *key, const char *msg);
/* A key checked on its own (conf_job.c): in a node its problems, between open and close, are
 * CONF_DIAG_KEY, and the key (as "props.ejob.dependsOn") goes to kept.keys; in a file, errors. */
int jb_key_open(jb_t *b);
void jb_key_close(jb_t *b, int before, const char *key);
/* conf_job_flow.c: dependsOn, the jobs this one runs after, into j->flow: the file's key (a list
 * of job names; v, its key node at, may be NULL: none), a node's prop ejob.dependsOn (the names
 * separated by one space; a problem is that key's own, kept) */
void jb_depends(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at);
void jb_depends_node(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at);

#endif
