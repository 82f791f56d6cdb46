/* t/49-zk-disable.c: what an operator writes with zkCli, as ElasticJob's console would:
 *   - servers/{ip} DISABLED: that server stops running the job's items and leaves the sharding
 *     (the other takes every item); ENABLED again: it comes back;
 *   - servers/{ip} with garbage: a log line naming the node, taken as ENABLED;
 *   - sharding/{i}/disabled: item i is skipped at the next fires, and runs again once removed. */
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

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_TASK_ID\" >> \"$OUT\"\n";

struct rec { long long fire; int item; char task[200]; };

/* runs of fires after `after` ms: which item ran where */
static int runs_after(const char *path, long long after, int item, const char *host)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		struct rec r;
		if (sscanf(p, "%lld %d %199s", &r.fire, &r.item, r.task) != 3 || r.fire <= after) continue;
		if ((item < 0 || r.item == item) && (!host || strstr(r.task, host))) n++;
	}
	free(t);
	return n;
}

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 500, "t49", 4000);
	char sh[600], out[600], jobs[2048];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  dis:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out, sh);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_config(&u, &b, "b", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_owned(&u, "dis", 4, a.id, 2, 20000) && tzkup_wait_owned(&u, "dis", 4, b.id, 2, 20000),
	   "two supervisors share the 4 items");
	const char *ida = a.id, *idb = b.id;
	zhandle_t *zh = u.zh;

	/* disable b's server */
	is_int(zoo_set(zh, "/t49/dis/servers/127.0.0.2", "DISABLED", 8, -1), ZOK, "servers/127.0.0.2 set to DISABLED");
	ok(tsup_wait_log(&b, "job dis: this server is DISABLED", 1, 5000), "b says its server is disabled");
	ok(tzkup_wait_owned(&u, "dis", 4, ida, 4, 5000), "a reshards to all 4 items");
	long long t0 = tlib_wall_ns() / 1000000 + 500;
	usleep(2500000);
	ok(runs_after(out, t0, -1, ida) >= 8, "a runs every item since (%d runs)", runs_after(out, t0, -1, ida));
	is_int(runs_after(out, t0, -1, idb), 0, "b runs none");
	/* a state an operator chose is said once, not once per fire per server, and names the server */
	is_int(tsup_log_count(&b, "does not run here: this server is DISABLED (servers/127.0.0.2)"), 1,
	       "b says once why its fires do not run (%d fires since), naming servers/127.0.0.2",
	       tsup_log_count(&b, "job dis: fire "));
	is_int(tsup_log_count(&b, "{ip}"), 0, "  with the ip filled in");

	/* garbage, then ENABLED again */
	long long garbage = tlib_wall_ns() / 1000000;
	is_int(zoo_set(zh, "/t49/dis/servers/127.0.0.2", "b\x01gus", 5, -1), ZOK, "garbage written to servers/127.0.0.2");
	ok(tsup_wait_log(&b, "/t49/dis/servers/127.0.0.2 holds", 1, 5000), "b logs the node and what is wrong with it");
	ok(tzkup_wait_owned(&u, "dis", 4, idb, 2, 5000), "and takes it as ENABLED: b is back in the sharding");
	uint64_t end = tlib_now_ms() + 3000;
	while (!runs_after(out, garbage, -1, idb) && tlib_now_ms() < end) usleep(20000);
	ok(runs_after(out, garbage, -1, idb) > 0, "  and runs its items");
	is_int(zoo_set(zh, "/t49/dis/servers/127.0.0.2", "ENABLED", 7, -1), ZOK, "servers/127.0.0.2 set to ENABLED");
	ok(tzkup_wait_owned(&u, "dis", 4, idb, 2, 5000), "b stays in the sharding");
	t0 = tlib_wall_ns() / 1000000 + 1500;
	usleep(3000000);
	ok(runs_after(out, t0, -1, idb) >= 2, "and runs its items again");

	/* disable item 0 */
	is_int(zoo_create(zh, "/t49/dis/sharding/0/disabled", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK,
	       "sharding/0/disabled created");
	usleep(500000);
	t0 = tlib_wall_ns() / 1000000;
	usleep(2500000);
	is_int(runs_after(out, t0, 0, NULL), 0, "item 0 does not run while disabled");
	ok(runs_after(out, t0, 1, NULL) >= 2, "item 1 still does");
	is_int(zoo_delete(zh, "/t49/dis/sharding/0/disabled", -1), ZOK, "sharding/0/disabled removed");
	usleep(500000);
	t0 = tlib_wall_ns() / 1000000;
	usleep(2000000);
	ok(runs_after(out, t0, 0, NULL) >= 1, "item 0 runs again");
	ok(tsup_alive(a.pid) && tsup_alive(b.pid), "both supervisors are still running");
	int s1 = tsup_stop(&a, SIGTERM, 15000), s2 = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(s1) && !WEXITSTATUS(s1) && WIFEXITED(s2) && !WEXITSTATUS(s2), "both stop cleanly");
	tzkup_end(&u);
	return done_testing();
}
