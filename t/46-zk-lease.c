/* t/46-zk-lease.c: the session lease. A supervisor runs a long item; the ZooKeeper server is frozen
 * (SIGSTOP), so nothing answers and the session may expire on the server's side: the item is
 * stopped before the session could expire (negotiated timeout after the last answered request).
 * After the server thaws, the supervisor goes on firing: no exit, no restart. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static const char long_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_FIRE_ID $(date +%s%N)\" >> \"$OUT\"\n"
	"trap 'echo \"term $EJOB_FIRE_ID $(date +%s%N)\" >> \"$OUT\"; exit 143' TERM\n"
	"if [ ! -e \"$OUT.long\" ]; then : > \"$OUT.long\"; sleep 60 & wait; fi\n"
	"echo \"end $EJOB_FIRE_ID $(date +%s%N)\" >> \"$OUT\"\n";

static int64_t stamp_of(const char *path, const char *kind, int nth)
{
	char *t = tsup_slurp(path);
	int64_t v = -1;
	int k = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		char what[16];
		long long fire, ns;
		if (sscanf(p, "%15s %lld %lld", what, &fire, &ns) == 3 && !strcmp(what, kind) && k++ == nth) {
			v = ns;
			break;
		}
	}
	free(t);
	return v;
}

struct st { const char *path; const char *kind; int nth; };
static int has_stamp(void *arg)
{
	struct st *s = arg;
	if (stamp_of(s->path, s->kind, s->nth) >= 0) return 1;
	usleep(20000);
	return 0;
}

int main(void)
{
	tlib_init(90);
	struct tzkup u;
	tzkup_start(&u, 500, "t46", 4000);
	char sh[600], out[600], jobs[2048];
	tlib_script(sh, sizeof sh, "long.sh", long_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  long:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out, sh);
	struct tsup t;
	tzkup_config(&u, &t, "sup", "workers: 1, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &t, "127.0.0.1");
	struct st started = { out, "start", 0 };
	ok(tlib_wait_for(has_stamp, &started, 20000), "the long item started");
	usleep(300000);   /* a ping or two answered */

	int64_t frozen = tlib_wall_ns();
	kill(u.zk.pid, SIGSTOP);
	struct st termed = { out, "term", 0 };
	ok(tlib_wait_for(has_stamp, &termed, 10000), "the item was stopped while ZooKeeper did not answer");
	int64_t term = stamp_of(out, "term", 0);
	ok(term > frozen && term < frozen + 4000000000ll,
	   "before the session could expire: %.2fs after the server froze (session timeout 4s)",
	   (double)(term - frozen) / 1e9);
	/* the worker acts on the deadline in shared memory itself; the supervisor says so too */
	ok(tsup_wait_log(&t, "the session may expire", 1, 5000), "the supervisor logs that the lease ran out");
	ok(tsup_wait_log(&t, "dispatching paused", 1, 5000), "and that dispatching is paused");

	kill(u.zk.pid, SIGCONT);
	struct st again = { out, "end", 0 };
	ok(tlib_wait_for(has_stamp, &again, 20000), "after the server thaws, the job runs again to its end");
	ok(tsup_alive(t.pid), "the supervisor never exited");
	int s = tsup_stop(&t, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
