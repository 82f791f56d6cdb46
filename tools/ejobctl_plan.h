/* tools/ejobctl_plan.h: the writes an ejobctl operation plans after its reads and then makes in
 * one ZooKeeper multi (tools/ejobctl_ops.c for one job, tools/ejobctl_server.c for every job on a
 * server): create, delete or set, each with its path and data, and how they are printed. */
#ifndef EJOB_EJOBCTL_PLAN_H
#define EJOB_EJOBCTL_PLAN_H

#include <stddef.h>
#include <zookeeper/zookeeper.h>

#include "tools/ejobctl_zk.h"

#define OPS_TRIES 5                       /* plans made again when the cluster changed under one */
#define OPS_MAX_BYTES (256 * 1024)        /* one multi's request, well under jute.maxbuffer (1 MB) */

enum { W_CREATE, W_DELETE, W_SET };

struct plan {
	int n, cap;
	size_t bytes;               /* what the request weighs, about */
	zoo_op_t *ops;
	int *kind;
	char **path, **data;        /* owned */
	const struct ACL_vector *acl;
};

void plan_free(struct plan *p);
/* One more write (data NULL for a delete); out of memory ends the process (ctl_oom), before
 * anything of the plan was written. */
void plan_add(struct plan *p, int kind, const char *path, const char *data);
/* p->ops[from, to) made ready for zoo_multi / zoo_amulti from kind, path and data. */
void plan_ops(struct plan *p, int from, int to);
/* The ops of p[from, to) as one multi, waited for. 0, or ZooKeeper's code; *bad: the index of
 * the op that failed (-1 if none is named). */
int plan_run(struct ctl *c, struct plan *p, int from, int to, int *bad);
/* At most this many ops per multi: 1,000, or $EJOBCTL_MULTI_OPS (tests make removals span
 * several multis with a small job). */
int plan_max_ops(void);

/* The multi failed because the cluster changed between the read and the write (a node created
 * or deleted meanwhile, a version moved): plan again from a new read. */
int plan_racy(int rc);

/* "created", "deleted", "set"; and for JSON "create", "delete", "set". */
const char *plan_verb(int kind);
const char *plan_op_name(int kind);
/* Write i as text: "set PATH = DATA", "created PATH = \"\"", "deleted PATH" (no newline). */
int plan_line(const struct plan *p, int i, char *buf, size_t len);
/* The writes as a JSON array [{"op","path","data"}] ("data" left out for a delete). */
void plan_json(struct jw *w, const struct plan *p);

#endif
