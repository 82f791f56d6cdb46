/* t/lib/tzk.h: a real ZooKeeper server for a test (Debian's zookeeper package), on a free
 * loopback port in the test's tmpdir, tracked by t/lib/tlib (killed at exit), and a small
 * synchronous client to read back what the supervisors wrote. */
#ifndef EJOB_TZK_H
#define EJOB_TZK_H

#include <sys/types.h>
#include <zookeeper/zookeeper.h>

struct tzk {
	pid_t pid;
	int port;
	char dir[512];
	char connect[64];        /* "127.0.0.1:PORT" */
};

/* Start a standalone server with this tickTime (session timeouts are negotiated into
 * [2, 20] x tick); BAIL_OUT with the tail of its log if it is not up within 20 s. */
void tzk_start(struct tzk *z, const char *name, int tick_ms);
void tzk_stop(struct tzk *z);                 /* SIGKILL and reap */

/* A connected client (BAIL_OUT if it cannot connect within 10 s). digest may be NULL. */
zhandle_t *tzk_client(const struct tzk *z, const char *digest);

/* The data of path (malloc'd, NUL-terminated; NULL if there is no such node; rc in *rc if
 * rc is not NULL) and its stat (if st is not NULL). */
char *tzk_get(zhandle_t *zh, const char *path, struct Stat *st, int *rc);
/* Children of path, sorted and joined with ',' (malloc'd; "" if none; NULL if no node). */
char *tzk_children(zhandle_t *zh, const char *path);

#endif
