/* bench/lib/serveproc.h: `ejobctl serve` for the benchmarks of it and its console (bench/serve,
 * bench/console), on a namespace bench/lib/jobs made. */
#ifndef EJOB_SERVEPROC_H
#define EJOB_SERVEPROC_H

#include <sys/types.h>

/* ejobctl serve --listen 127.0.0.1:0 --zk CONNECT --namespace NS --timeout 30 [extra] (extra NULL:
 * none), its output in tlib_tmpdir()/serve{extra}.out; its pid and *port once it listens (fail()s
 * after 30 s). Tracked by t/lib/tlib. */
pid_t serveproc_start(const char *connect, const char *ns, const char *extra, int *port);
/* SIGTERM, and reaped */
void serveproc_stop(pid_t pid);

#endif
