/* bench/lib/bigns.h: a big namespace for the benchmarks of `ejobctl serve` and its console
 * (bench/serve, bench/console): N jobs as two supervisors on 10.0.0.1 and 10.0.0.2 leave them (16
 * nodes each: the job's node, its config, servers/, instances/ (ephemeral: the caller's session
 * holds them), sharding/0 and 1 with their owners, the leader), made directly and pipelined; and
 * `ejobctl serve` started on a free port of it. */
#ifndef EJOB_BIGNS_H
#define EJOB_BIGNS_H

#include <sys/types.h>
#include <zookeeper/zookeeper.h>

/* /ns/j00000 .. /ns/j{n-1} on zh (fail()s if a create fails) */
void bigns_make(zhandle_t *zh, const char *ns, int n);

/* ejobctl serve --listen 127.0.0.1:0 --zk CONNECT --namespace NS --timeout 30 [extra] (extra NULL:
 * none), its output in tlib_tmpdir()/serve{extra}.out; its pid and *port once it listens (fail()s
 * after 30 s). Tracked by t/lib/tlib. */
pid_t bigns_serve(const char *connect, const char *ns, const char *extra, int *port);
void bigns_serve_stop(pid_t pid);

#endif
