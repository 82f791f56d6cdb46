/* t/61-zk-shard-race.c: instances come and go while the leader shards (issue 10).
 *
 * A rolling restart: a new instance joins (the leader must reshard at the next fire) and, while
 * the leader shards at that fire, an old one leaves. The leader listed the instances with the
 * old one still there; if it commits that, the assignment names an instance that is gone, and
 * the resharding flag the departure raised was refused (it still existed) and then deleted by
 * that very commit: the old instance's items ran nowhere, fire after fire, until the reconcile.
 * The window between listing and commit is a few milliseconds on an idle machine and long under
 * load; here the leader's ZooKeeper is made slow to answer that one listing (t/native/libzkslow,
 * 800 ms) so that the departure lands in it every time.
 *
 * Required: the fire during which it happens, and every fire after it, runs every item exactly
 * once on the instances that are there. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tclu.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define ITEMS 6

static int nkids(zhandle_t *zh, const char *path)
{
	struct String_vector sv = { 0, NULL };
	if (tzk_children(zh, path, &sv) != ZOK) return -1;
	int n = sv.count;
	deallocate_String_vector(&sv);
	return n;
}

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 200, "t61", 4000);
	char rec[600], runs[600], jobs[2048];
	snprintf(rec, sizeof rec, "%s", tsup_rec_script());
	snprintf(runs, sizeof runs, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  sr:\n"
	         "    type: script\n"
	         "    cron: \"0/3 * * * * ?\"\n"
	         "    shardingTotalCount: %d\n"
	         "    props: {script.command.line: \"%s %s\"}\n",
	         ITEMS, rec, runs);
	static struct tsup a, b, v, d;
	struct tsup *all[4] = { &a, &b, &v, &d };
	const char *names[4] = { "a", "b", "v", "d" };
	const char *ips[4] = { "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5" };
	for (int k = 0; k < 4; k++) tzkup_config(&u, all[k], names[k], "workers: 2", jobs);
	zhandle_t *zh = u.zh;

	/* a leads, and its ZooKeeper answers the sharding's listing of instances/ 800 ms late */
	char slow[PATH_MAX];
	if (!realpath(BUILT("t/native/libzkslow.so"), slow)) BAIL_OUT(BUILT("t/native/libzkslow.so") ": %s (run make)", strerror(errno));
	setenv("LD_PRELOAD", slow, 1);
	/* a sanitizer build wants its runtime first; the fault library only wraps one call */
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0", 1);
	setenv("EJOB_ZKSLOW_MS", "800", 1);
	tzkup_run(&u, &a, ips[0]);
	unsetenv("LD_PRELOAD");
	unsetenv("ASAN_OPTIONS");
	unsetenv("EJOB_ZKSLOW_MS");
	ok(tzkup_wait_leader(&u, "sr", a.id, 15000), "a is elected");
	for (int k = 1; k < 3; k++) tzkup_run(&u, all[k], ips[k]);
	uint64_t end = tlib_now_ms() + 15000;
	while (nkids(zh, "/t61/sr/instances") != 3 && tlib_now_ms() < end) usleep(20000);
	long long t0 = tlib_wall_ns() / 1000000;
	int exact = 0, n = 0;
	end = tlib_now_ms() + 20000;
	while ((n = tsup_fires_exact(runs, t0 + 3000, ITEMS, NULL, &exact)) < 2 && tlib_now_ms() < end) usleep(100000);
	ok(n >= 2 && exact, "steady: every fire runs the %d items exactly once over a, b and v", ITEMS);

	/* the next fire time at least 2 s away: d joins 1.5 s before it (the flag is raised), and v
	 * leaves 200 ms after it, inside the leader's sharding */
	long long now = tlib_wall_ns() / 1000000;
	long long fire = (now / 3000 + 1) * 3000;
	if (fire - now < 2000) fire += 3000;
	usleep((useconds_t)((fire - 1500 - now) * 1000));
	tzkup_run(&u, &d, ips[3]);
	now = tlib_wall_ns() / 1000000;
	if (fire + 200 > now) usleep((useconds_t)((fire + 200 - now) * 1000));
	char vid[128];
	snprintf(vid, sizeof vid, "%s", tzkup_path(&u, "sr", "instances/%s", v.id));
	int st = tsup_stop(&v, SIGTERM, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "v stops cleanly (a rolling restart)");
	long long gone = tlib_wall_ns() / 1000000;
	ok(tzk_exists(zh, vid, NULL) == ZNONODE, "v's instance node went with its session");
	diag("fire %lld: d joined 1.5 s before it, v's node was gone %lld ms after it", fire, gone - fire);
	if (gone - fire > 750) diag("v took long to leave: the leader may have listed after it went (no race this run)");

	end = tlib_now_ms() + 20000;
	while ((n = tsup_fires_exact(runs, fire - 1, ITEMS, NULL, &exact)) < 2 && tlib_now_ms() < end) usleep(100000);
	ok(n >= 2 && exact, "the fire at which v left and every one after it run all %d items exactly once (%d fires)",
	   ITEMS, n);
	char *dump = tzk_dump(zh, "/t61/sr/sharding", NULL);
	ok(dump && !strstr(dump, vid + strlen("/t61/sr/instances/")), "no item is assigned to v");
	if (dump && strstr(dump, vid + strlen("/t61/sr/instances/"))) diag("%s", dump);
	free(dump);
	for (int k = 0; k < 4; k++) {
		if (k == 2) continue;
		st = tsup_stop(all[k], SIGTERM, 15000);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s stops cleanly", names[k]);
	}
	tzkup_end(&u);
	return done_testing();
}
