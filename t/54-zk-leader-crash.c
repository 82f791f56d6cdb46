/* t/54-zk-leader-crash.c: kill -9 the leader. No instance leads while its instance node expires,
 * so no leader sees it go; the new leader must still find the items assigned to it and reshard
 * them, or they would run nowhere (found by the demo: the dead leader's items never ran again). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_TASK_ID\" >> \"$OUT\"\n";

int main(void)
{
	tlib_init(90);
	struct tzkup u;
	tzkup_start(&u, 200, "t54", 2000);
	char sh[300], out[300], jobs[2048];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  lc:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out, sh);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_config(&u, &b, "b", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_leader(&u, "lc", a.id, 15000), "a leads");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_owned(&u, "lc", 4, b.id, 2, 15000), "b has 2 of the 4 items");
	usleep(1500000);
	long long killed = tlib_wall_ns() / 1000000;
	kill(a.pid, SIGKILL);
	ok(tzkup_wait_leader(&u, "lc", b.id, 8000), "b is elected when a's session ends");
	ok(tzkup_wait_owned(&u, "lc", 4, b.id, 4, 8000),
	   "and finds a's items assigned to an instance that is gone: it reshards, all 4 items are b's");
	long long since = tlib_wall_ns() / 1000000;
	usleep(3500000);
	int exact = 0;
	int n = tsup_fires_exact(out, since, 4, b.id, &exact);
	ok(n >= 2 && exact, "every fire since runs items 0-3 exactly once, on b (%d fires)", n);
	diag("reshard done %.1fs after the kill", (double)(since - killed) / 1000.0);
	int st = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "b stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
