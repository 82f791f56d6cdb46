/* bench/lib/floor.h: the registration floor of bench/scale (issue 30, point 2): the requests of
 * ejob's registration (supervisor/coord/coord_reg.c) sent by the ZooKeeper C library alone, no ejob
 * code, as fast as the server takes them; and ZooKeeper's JVM warmed up by them before anything is
 * measured. */
#ifndef EJOB_BENCH_FLOOR_H
#define EJOB_BENCH_FLOOR_H

#include "t/lib/tzk.h"

#define FL_WINDOW 256                /* ZKC_WINDOW */
#define FL_OPS 1000                  /* ZKC_SHARE_OPS */
#define FL_BYTES ((size_t)256 << 10) /* ZKC_SHARE_BYTES */
#define FL_JOB_OPS 18                /* reg_fresh's multi: the most ops one job adds */

struct floor_run {
	double fresh_s, restart_s;       /* zookeeper_init to the last answer; -1: not measured */
	long fresh_req, restart_req;     /* requests sent (a multi is one) */
	long fresh_ops, restart_ops;     /* of which ops in multis */
	int cfg_len;                     /* the config node's size, as ejob wrote it */
	long long znodes;                /* the nodes the new namespace's pass made (mntr) */
};

/* The floor at n jobs, in namespace fl<n>, with the config node ejob wrote for j00000 in ejob_ns
 * (its text and size), after ejob's run of n jobs on the same ZooKeeper (no supervisor running):
 * a new namespace, then a restart (the session closed, so its ephemerals are gone; a new one). */
void run_floor(const struct tzk_server *zk, const char *ejob_ns, int n, struct floor_run *f);

#define WARM_JOBS 2000               /* a warm-up round's jobs */
#define WARM_MIN 5                   /* rounds at least */
#define WARM_MAX 15                  /* and at most */

/* The warm-up's rounds: each one's new-namespace pass (s) */
struct warm {
	int rounds;
	double fresh_s[WARM_MAX];
};

/* ZooKeeper's JVM brought to its steady speed before anything is measured (floor_warm_up). */
void floor_warm_up(const struct tzk_server *zk, struct warm *w);

#endif
