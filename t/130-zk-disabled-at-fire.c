/* t/130-zk-disabled-at-fire.c: an item's sharding/{i}/disabled checked by each fire's running multi
 * (a create and a delete of the node in the multi: the create fails if an operator's node is
 * there), so its owner watches it only while it is disabled (issue 30: 6 watches a job, not 6 +
 * one an item). On a real ZooKeeper, ZooKeeper's own table of watches (wchp) read:
 *   - a job with monitorExecution and no beforeAll/afterAll: no watch on its items' disabled nodes,
 *     and none left by its fires (nobody sees the node come and go: no item is skipped);
 *   - an operator disables item 0: the next fires skip it (item 1 runs), its owner watches the node;
 *     the node removed: item 0 runs again;
 *   - a job with afterAll (which must know before the multi which items will not run), and one
 *     with monitorExecution false (no multi): every owned item's node watched, as before. */
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

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM $1\" >> \"$OUT\"\n";

/* runs of job's item (-1: any) of fires after `after` ms */
static int runs_after(const char *path, const char *job, long long after, int item)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long fire;
		int it;
		char j[64];
		if (sscanf(p, "%lld %d %63s", &fire, &it, j) != 3 || fire <= after || strcmp(j, job)) continue;
		if (item < 0 || it == item) n++;
	}
	free(t);
	return n;
}

/* the paths ZooKeeper holds a watch on, under the namespace (wchp), as one string */
static char *watched(const struct tzkup *u)
{
	return tzk_4lw(&u->zk, "wchp", 5000);
}

static int has_path(const char *w, const struct tzkup *u, const char *job, const char *rel)
{
	char p[256];
	snprintf(p, sizeof p, "/%s/%s/%s\n", u->ns, job, rel);
	return w && strstr(w, p) != NULL;
}

/* the wall clock, as fire ids are */
static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct later { const char *out, *job; long long after; int item, min; };

struct watch_wait { const struct tzkup *u; const char *job, *rel; };

static int is_watched(void *arg)
{
	const struct watch_wait *ww = arg;
	char *w = watched(ww->u);
	int yes = has_path(w, ww->u, ww->job, ww->rel);
	free(w);
	return yes;
}

static int ran(void *arg)
{
	const struct later *l = arg;
	return runs_after(l->out, l->job, l->after, l->item) >= l->min;
}

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 500, "t130", 4000);
	char sh[600], out[600], jobs[4096];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  plain:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s plain\"}\n"
	         "  after:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s after\", ejob.listener.afterAll: \"true\"}\n"
	         "  nomon:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    monitorExecution: false\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s nomon\"}\n",
	         out, sh, out, sh, out, sh);
	struct tsup a;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_owned(&u, "plain", 2, a.id, 2, 20000) && tzkup_wait_owned(&u, "after", 2, a.id, 2, 20000) &&
	   tzkup_wait_owned(&u, "nomon", 2, a.id, 2, 20000), "one supervisor owns the 2 items of each job");
	struct later l = { out, "plain", now_ms(), -1, 4 };
	ok(tlib_wait_for(ran, &l, 10000), "plain's items run at its fires");
	l.job = "after";
	ok(tlib_wait_for(ran, &l, 10000), "after's too");
	l.job = "nomon";
	ok(tlib_wait_for(ran, &l, 10000), "nomon's too");

	char *w = watched(&u);
	if (!w) BAIL_OUT("wchp: no answer");
	ok(!has_path(w, &u, "plain", "sharding/0/disabled") && !has_path(w, &u, "plain", "sharding/1/disabled"),
	   "plain (monitorExecution, no beforeAll/afterAll): no watch on its items' disabled nodes");
	ok(has_path(w, &u, "plain", "leader/sharding/necessary") && has_path(w, &u, "plain", "config"),
	   "  (its job's watches are there: wchp lists them)");
	ok(has_path(w, &u, "after", "sharding/0/disabled") && has_path(w, &u, "after", "sharding/1/disabled"),
	   "after (afterAll): both items' disabled nodes watched");
	ok(has_path(w, &u, "nomon", "sharding/0/disabled") && has_path(w, &u, "nomon", "sharding/1/disabled"),
	   "nomon (monitorExecution false): both watched");
	free(w);
	/* the node each fire makes and deletes never made an item look disabled: every fire of plain
	 * ran both items */
	l = (struct later){ out, "plain", now_ms(), -1, 8 };
	int waited = tlib_wait_for(ran, &l, 10000);
	long long cut = now_ms() - 1500;    /* fires before it have ended */
	int r0 = runs_after(out, "plain", l.after, 0) - runs_after(out, "plain", cut, 0);
	int r1 = runs_after(out, "plain", l.after, 1) - runs_after(out, "plain", cut, 1);
	ok(waited && r0 >= 2 && r0 == r1, "no item skipped by the check: items 0 and 1 ran in the same fires (%d, %d runs)",
	   r0, r1);

	/* an operator disables plain's item 0 */
	is_int(zoo_create(u.zh, tzkup_path(&u, "plain", "sharding/0/disabled"), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK,
	       "plain/sharding/0/disabled created");
	struct watch_wait ww = { &u, "plain", "sharding/0/disabled" };
	ok(tlib_wait_for(is_watched, &ww, 5000), "  the next fire finds it: its owner watches the node (wchp)");
	long long t0 = now_ms() + 1000;
	sleep(3);
	is_int(runs_after(out, "plain", t0, 0), 0, "  item 0 does not run while disabled");
	ok(runs_after(out, "plain", t0, 1) >= 1, "  item 1 still does (%d runs)", runs_after(out, "plain", t0, 1));
	w = watched(&u);
	ok(has_path(w, &u, "plain", "sharding/0/disabled") && !has_path(w, &u, "plain", "sharding/1/disabled"),
	   "  item 0's node is watched (to hear it go), item 1's is not");
	free(w);
	is_int(zoo_delete(u.zh, tzkup_path(&u, "plain", "sharding/0/disabled"), -1), ZOK, "the node removed");
	l = (struct later){ out, "plain", now_ms() + 1000, 0, 1 };
	ok(tlib_wait_for(ran, &l, 10000), "  item 0 runs again");
	ok(tsup_alive(a.pid), "the supervisor still runs");
	tsup_stop(&a, SIGTERM, 20000);
	tzkup_end(&u);
	return done_testing();
}
