/* t/51-zk-outage.c: ZooKeeper going away never stops ejob.
 *   - the only server is killed and restarted on the same port: the supervisor does not exit and
 *     its fires resume;
 *   - in a 3-server ensemble one member (the one the supervisors may be talking to) is killed:
 *     no reshard, and no item of a fire runs twice. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_TASK_ID\" >> \"$OUT\"\n";

/* runs of fires after `after`; dups: a (fire, item) seen twice */
static int runs_after(const char *path, long long after, int *dups)
{
	char *t = tsup_slurp(path);
	long long f[4096];
	int it[4096], n = 0, all = 0;
	if (dups) *dups = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long fire;
		int item;
		if (sscanf(p, "%lld %d", &fire, &item) != 2) continue;
		if (dups && all < 4096) {
			for (int k = 0; k < all; k++) *dups += f[k] == fire && it[k] == item;
			f[all] = fire;
			it[all++] = item;
		}
		if (fire > after) n++;
	}
	free(t);
	return n;
}

static void config(struct tsup *t, const char *name, const char *hosts, const char *ns, const char *out,
                   const char *sh)
{
	char yaml[2048];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"%s\", namespace: %s, sessionTimeoutMilliseconds: 6000}\n"
	         "supervisor: {workers: 2, attachSocket: \"@SOCK@\"}\n"
	         "jobs:\n"
	         "  out:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         hosts, ns, out, sh);
	tsup_config(t, name, yaml);
}

int main(void)
{
	tlib_init(150);
	char sh[600], out1[600], out2[600];
	snprintf(sh, sizeof sh, "%s/rec.sh", tlib_tmpdir());
	tlib_write_file(sh, rec_sh, sizeof rec_sh - 1);
	chmod(sh, 0755);
	snprintf(out1, sizeof out1, "%s/runs1", tlib_tmpdir());
	snprintf(out2, sizeof out2, "%s/runs2", tlib_tmpdir());

	/* ---- restart of the only server ---- */
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 500 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	struct tsup t;
	config(&t, "one", zk.connect, "t51", out1, sh);
	const char *args[] = { "--ip", "127.0.0.1", NULL };
	if (tsup_start(&t, args) <= 0) BAIL_OUT("cannot start");
	ok(tsup_wait_log(&t, "4 of 4 items here", 1, 20000), "the supervisor runs its job");
	tzk_stop(&zk, SIGKILL, 5000);
	ok(tsup_wait_log(&t, "zookeeper: the connection to", 1, 10000), "the server is killed: the supervisor sees the connection go");
	usleep(1500000);
	ok(tsup_alive(t.pid), "and does not exit");
	ok(tzk_restart(&zk, 30000) == 0, "the server is back on the same port");
	long long back = tlib_wall_ns() / 1000000 + 1000;
	usleep(4000000);
	ok(runs_after(out1, back, NULL) >= 4, "fires resume (%d runs since)", runs_after(out1, back, NULL));
	ok(tsup_alive(t.pid), "the supervisor never exited");
	int s = tsup_stop(&t, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "stops cleanly");
	tzk_stop(&zk, SIGKILL, 5000);

	/* ---- one member of three ---- */
	struct tzk_ensemble e;
	if (tzk_ensemble_start(&e, "ens", 3, &(struct tzk_opts){ .tick_ms = 500 }, 60000) < 0)
		BAIL_OUT("cannot start a 3-server ensemble");
	struct tsup a, b;
	config(&a, "ea", e.connect, "t51e", out2, sh);
	config(&b, "eb", e.connect, "t51e", out2, sh);
	const char *args_b[] = { "--ip", "127.0.0.2", NULL };
	if (tsup_start(&a, args) <= 0 || tsup_start(&b, args_b) <= 0) BAIL_OUT("cannot start");
	ok(tsup_wait_log(&a, "2 of 4 items here", 1, 20000) && tsup_wait_log(&b, "2 of 4 items here", 1, 20000),
	   "two supervisors share the job over the ensemble");
	int ra = tsup_log_count(&a, "assignment of epoch"), rb = tsup_log_count(&b, "assignment of epoch");
	int lead = tzk_ensemble_leader(&e);
	int victim = lead >= 0 ? lead : 0;
	tzk_stop(&e.m[victim], SIGKILL, 5000);
	ok(tzk_ensemble_wait_quorum(&e, 30000) == 0, "member %d (the leader) killed; the other two keep a quorum", victim + 1);
	long long after = tlib_wall_ns() / 1000000 + 500;
	usleep(6000000);
	int dups = 0;
	ok(runs_after(out2, after, &dups) >= 16, "fires go on (%d runs since)", runs_after(out2, after, NULL));
	is_int(dups, 0, "no item of any fire ran twice");
	is_int(tsup_log_count(&a, "assignment of epoch") - ra + tsup_log_count(&b, "assignment of epoch") - rb, 0,
	       "no reshard");
	ok(tsup_alive(a.pid) && tsup_alive(b.pid), "both supervisors are still running");
	int s1 = tsup_stop(&a, SIGTERM, 15000), s2 = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(s1) && !WEXITSTATUS(s1) && WIFEXITED(s2) && !WEXITSTATUS(s2), "both stop cleanly");
	tzk_ensemble_stop(&e, SIGKILL, 5000);
	return done_testing();
}
