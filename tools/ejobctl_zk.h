/* tools/ejobctl_zk.h: what every ejobctl command on a live cluster shares: the connection
 * options, a ZooKeeper session that the command waits on (the multi-threaded client: ejobctl is a
 * command, not a loop), reads by namespace-relative path, one at a time or pipelined, the job name check with "did you mean", and the two
 * outputs: an aligned table and JSON.
 *
 * Exit statuses, for every command: 0 ok, 1 runtime failure (ZooKeeper unreachable within the
 * connect timeout, a refused or failed request), 2 usage or an unknown name (job, item, server,
 * instance). Messages go to stderr as "ejobctl CMD: ...". */
#ifndef EJOB_EJOBCTL_ZK_H
#define EJOB_EJOBCTL_ZK_H

#include <stdarg.h>
#include <stdio.h>
#include <zookeeper/zookeeper.h>

#include "conf/conf.h"

#define CTL_PATH_MAX 1024

struct ctl {
	const char *cmd;            /* for messages: "status" */
	const char *hosts;          /* --zk, else regCenter.serverLists of -c FILE */
	const char *ns;             /* --namespace, else regCenter.namespace (no slashes) */
	const char *digest;         /* --digest USER:PASS, else regCenter.digest; NULL: none */
	int json;                   /* --json */
	int timeout_ms;             /* connect within this (--timeout SECONDS; default 5 s) */
	zhandle_t *zh;
	conf_t *conf;               /* -c FILE, owns the strings above that came from it */
	FILE *out;                  /* what the command prints: stdout (serve: the response's body) */
	FILE *err;                  /* the lines a check prints before its message: stderr (serve: kept) */
	char *msg;                  /* NULL: messages go to stderr; else (serve) the failure's messages are
	                             * kept here, msgcap bytes (the first, then each later one after a
	                             * newline), and warnings (status 0) go to err as lines */
	size_t msgcap;
	int kept;                   /* serve: the session is the caller's: ctl_connect and ctl_close leave it */
	int ns_may_be_new;          /* in: a missing namespace is no error (apply and serve create it;
	                               ctl_jobs lists no job in it) */
	int ns_missing;             /* out of ctl_connect with ns_may_be_new: the namespace does not exist */
	watcher_fn watch;           /* serve's model: NULL; else every read of ctl_read_many leaves this watch
	                             * (with watch_ctx) on its path, also where the node is absent */
	void *watch_ctx;
};

/* Take ejobctl's connection options out of argv (--zk HOSTS, --namespace NS, --digest U:P,
 * -c/--config FILE, --json, --timeout SECONDS; also as --opt=VALUE) and leave the rest, argv[0]
 * first, in order. Each of hosts, namespace and digest comes from its flag, else -c FILE's
 * regCenter, else $EJOB_ZK, $EJOB_NAMESPACE, $EJOB_DIGEST, else (no -c, and hosts or namespace
 * still unknown) ctl_default_file()'s regCenter. Returns 0, or 2 after a message (an option
 * without its value, a config file that does not load, no cluster named anywhere). A namespace
 * given with slashes is taken without. */
int ctl_options(struct ctl *c, const char *cmd, int *argc, char **argv);

/* The file read when nothing else says where the cluster is: $EJOB_CONFIG if set ("" : none),
 * else CTL_DEFAULT_FILE if it exists; NULL if none. */
#define CTL_DEFAULT_FILE "/etc/ejob/ejob.yaml"
const char *ctl_default_file(void);

/* conf_load_file, or NULL after its errors and "ejobctl CMD: FILE: the configuration does not
 * load (above); WHY" on stderr (a configuration problem: the caller exits 2). */
conf_t *ctl_load_conf(const char *cmd, const char *file, const char *why);

/* Connect, add the digest, and check that the namespace exists (with ns_may_be_new, say whether in
 * ns_missing). 0, or 1 after a message:
 * "cannot reach ZooKeeper at HOSTS within 5 s", "namespace /NS does not exist at HOSTS", ... */
int ctl_connect(struct ctl *c);
/* The namespace's node, made if it is not there (a cluster's first job: as a supervisor's first
 * registration makes it); ns_missing 0 after. 0, or 1 after a message. */
int ctl_ns_create(struct ctl *c);
void ctl_close(struct ctl *c);

/* "/NS" + the formatted relative path ("" for the namespace itself); truncation aborts. */
const char *ctl_path(const struct ctl *c, char *buf, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Reads by absolute path (from ctl_path). Return ZooKeeper's code: ZOK, ZNONODE, ... */
int ctl_get(struct ctl *c, const char *path, char **data, struct Stat *st);   /* *data malloc'd, NUL-terminated; "" if none */
int ctl_exists(struct ctl *c, const char *path, struct Stat *st);            /* st may be NULL */
int ctl_children(struct ctl *c, const char *path, char ***names, int *n);    /* sorted by strcmp; free with ctl_strv_free */
void ctl_strv_free(char **v, int n);

/* Many reads at once: one round trip each is what makes a listing of 10,000 jobs slow, so the
 * requests go out pipelined (asynchronous calls, at most CTL_WINDOW unanswered) and
 * ctl_read_many returns when every one has its answer. A request that fails is its own rc and
 * stops nothing else, but for a lost session: what was not sent yet is not sent and gets that
 * rc (ZCONNECTIONLOSS, ...). ZooKeeper answers in order, so a read sees what the ones before it
 * saw or later. The three ctl_ reads above are one-request batches.
 * With c->watch, each read leaves that watch on its path (zoo_awget, zoo_awexists,
 * zoo_awget_children); a read that found no node leaves an exists watch there instead (ZooKeeper
 * keeps none for a get or a listing of nothing), and if the node was made in between, the watch
 * is called at once as for its creation. */
#define CTL_WINDOW 1000

enum ctl_op { CTL_GET, CTL_EXISTS, CTL_CHILDREN };

struct ctl_read {
	enum ctl_op op;             /* in */
	const char *path;           /* in: absolute; the caller's, until ctl_read_many returns */
	int rc;                     /* out: ZOK, ZNONODE, ...; ZSYSTEMERROR if out of memory */
	char *data;                 /* out, CTL_GET with ZOK: malloc'd, NUL-terminated, "" if none; the caller's */
	struct Stat st;             /* out, CTL_GET and CTL_EXISTS with ZOK */
	char **names;               /* out, CTL_CHILDREN with ZOK: sorted by strcmp; ctl_strv_free(names, n) */
	int n;
};

void ctl_read_many(struct ctl *c, struct ctl_read *r, int n);

/* Many multis at once, pipelined the same way (a namespace-wide operation writes one multi per
 * job: one round trip each made 1,000 jobs as slow as 1,000 round trips). Each multi succeeds or
 * fails whole, on its own; ZooKeeper applies them in the order sent. */
struct ctl_multi {
	int n;                      /* in: ops */
	zoo_op_t *ops;              /* in: ready to send (plan_ops); the caller's until ctl_multi_many returns */
	zoo_op_result_t *res;       /* in: n of them; out: each op's result */
	int rc;                     /* out: ZOK, or why the multi failed (ZNONODE, ZNOAUTH, ZCONNECTIONLOSS, ...) */
};

void ctl_multi_many(struct ctl *c, struct ctl_multi *m, int n);

/* A failed request: "ejobctl CMD: WHAT PATH: reason" (a hint for ZNOAUTH: the digest); returns 1. */
int ctl_fail(const struct ctl *c, int rc, const char *what, const char *path);
/* A message on stderr, "ejobctl CMD: ..." and a newline (with c->msg: kept there, a warning on
 * c->err); returns status. */
int ctl_msg(const struct ctl *c, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The jobs of the namespace: its children that have a config node, sorted. 0, or 1 after a message. */
int ctl_jobs(struct ctl *c, char ***names, int *n);
/* job is a job of the namespace: 0; else 2 after "no job 'X' in namespace /NS (did you mean 'Y'?)",
 * or 1 if ZooKeeper failed. */
int ctl_need_job(struct ctl *c, const char *job);
/* After ejobctl rewrote or removed job's config node: if the node it read (old) or wrote (new,
 * NULL for a removal) says overwrite: true, a supervisor with the job in its file publishes the
 * file's config at its next start or reload and undoes what was done. A warning on stderr naming
 * the job, why and the fix; the exit status is not changed. */
void ctl_warn_overwrite(const struct ctl *c, const char *job, const char *old, size_t oldlen, const char *new_,
                        size_t newlen);
/* The closest of names[0..n-1] to s (edit distance), NULL if none is close: for "did you mean". */
const char *ctl_suggest(const char *s, char *const *names, int n);

/* Out of memory: one line on stderr and exit 1 (operations write last, in one multi: nothing is
 * left half-written). */
__attribute__((noreturn)) void ctl_oom(void);
#define CTL_NEED(x)                     \
	do {                            \
		if (!(x)) ctl_oom();    \
	} while (0)

/* ---- output ---------------------------------------------------------------------------- */

/* An aligned table: headers in upper case, columns two spaces apart, the last one unpadded. */
struct ctl_table;
struct ctl_table *ctl_table_new(int ncols, ...);                   /* ncols header strings */
void ctl_table_row(struct ctl_table *t, ...);                       /* ncols cells (NULL: "-") */
void ctl_table_print(struct ctl_table *t, FILE *f);                 /* and frees it */

/* JSON, written as it goes (one document per command, a newline at its end). Keys and strings
 * are escaped (control characters, quotes, backslashes; bytes that are not UTF-8 as \u00XX). */
struct jw {
	FILE *f;
	int depth;
	int first[64];              /* per level: nothing written in it yet */
	char close[64];             /* per level: '}' or ']' */
	int key;                    /* a key was just written: the value follows without a comma */
};
void jw_begin(struct jw *w, FILE *f);
void jw_obj(struct jw *w);            /* { */
void jw_arr(struct jw *w);            /* [ */
void jw_end(struct jw *w);            /* } or ] ; at depth 0, a newline */
void jw_key(struct jw *w, const char *k);
void jw_str(struct jw *w, const char *s);     /* NULL: null */
void jw_strn(struct jw *w, const char *s, size_t n);
void jw_int(struct jw *w, long long v);
void jw_bool(struct jw *w, int v);
void jw_null(struct jw *w);

#endif
