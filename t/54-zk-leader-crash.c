/* t/54-zk-leader-crash.c: kill -9 the leader. No instance leads while its instance node expires,
 * so no leader sees it go; the new leader must still find the items assigned to it and reshard
 * them, or they would run nowhere (found by the demo: the dead leader's items never ran again). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_TASK_ID\" >> \"$OUT\"\n";

int main(void)
{
	tlib_init(90);
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	char sh[300], out[300], yaml[2048];
	snprintf(sh, sizeof sh, "%s/rec.sh", tlib_tmpdir());
	tlib_write_file(sh, rec_sh, sizeof rec_sh - 1);
	chmod(sh, 0755);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	struct tsup a, b;
	for (int k = 0; k < 2; k++) {
		snprintf(yaml, sizeof yaml,
		         "regCenter: {serverLists: \"%s\", namespace: t54, sessionTimeoutMilliseconds: 2000}\n"
		         "supervisor: {workers: 2, attachSocket: \"@SOCK@\"}\n"
		         "jobs:\n"
		         "  lc:\n"
		         "    type: script\n"
		         "    cron: \"* * * * * ?\"\n"
		         "    shardingTotalCount: 4\n"
		         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
		         zk.connect, out, sh);
		tsup_config(k ? &b : &a, k ? "b" : "a", yaml);
	}
	const char *args_a[] = { "--ip", "127.0.0.1", NULL };
	const char *args_b[] = { "--ip", "127.0.0.2", NULL };
	if (tsup_start(&a, args_a) <= 0) BAIL_OUT("cannot start a");
	ok(tsup_wait_log(&a, "job lc: this instance is the leader", 1, 15000), "a leads");
	if (tsup_start(&b, args_b) <= 0) BAIL_OUT("cannot start b");
	ok(tsup_wait_log(&b, "2 of 4 items here", 1, 15000), "b has 2 of the 4 items");
	usleep(1500000);
	long long killed = tlib_wall_ns() / 1000000;
	kill(a.pid, SIGKILL);
	ok(tsup_wait_log(&b, "job lc: this instance is the leader", 1, 8000), "b is elected when a's session ends");
	ok(tsup_wait_log(&b, "is assigned to 127.0.0.1@-@", 1, 3000), "and finds a's items assigned to an instance that is gone");
	ok(tsup_wait_log(&b, "4 of 4 items here", 1, 5000), "it reshards: all 4 items are b's");
	long long since = tlib_wall_ns() / 1000000;
	usleep(3500000);
	int exact = 0;
	char idb[64];
	snprintf(idb, sizeof idb, "127.0.0.2@-@%d", (int)b.pid);
	int n = tsup_fires_exact(out, since, 4, idb, &exact);
	ok(n >= 2 && exact, "every fire since runs items 0-3 exactly once, on b (%d fires)", n);
	diag("reshard done %.1fs after the kill", (double)(since - killed) / 1000.0);
	int st = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "b stops cleanly");
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
