/* t/77-oneoff.c: one-off jobs (no cron; ElasticJob's OneOffJobBootstrap) on two supervisors and
 * one ZooKeeper, checked by the nodes ZooKeeper holds, ejobctl's output and the records the
 * items write:
 *   - the config node ejob publishes for one has no cron; ejobctl jobs and status show it as
 *     one-off, next fire "on trigger" (null in --json);
 *   - nothing runs on its own for 3 s;
 *   - ejobctl trigger runs each item exactly once across the two supervisors, each its own;
 *     a second trigger runs each once again; two triggers in one second are two fires, each with
 *     an id of its own (the ms it came), each item once in each;
 *   - a config node as ElasticJob writes a one-off job (no cron, no ejob.type, the root node
 *     SCRIPT) is in force: a trigger runs its command, not the file's;
 *   - failover: true and a supervisor killed (-9) in the middle of its triggered items: they run
 *     on the other supervisor, once each; the other's own items are not run again. */
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

#define EJOBCTL BUILT("tools/ejobctl")
#define MAXR 64

static struct tzkup u;
static char *out, *err;

/* ejobctl ARGS... --zk ... --namespace NS: its exit status; stdout and stderr in out, err */
#define ctl(...) tzkup_ctl(&u, &out, &err, __VA_ARGS__)

/* run records "FIRE_ID ITEM TASK_ID" of item (-1: any) on tasks containing who (NULL: any) */
static int runs(const char *path, int item, const char *who)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long f;
		int i;
		char task[200];
		if (sscanf(p, "%lld %d %199s", &f, &i, task) == 3 && (item < 0 || i == item) && (!who || strstr(task, who)))
			n++;
	}
	free(t);
	return n;
}

/* every item 0 .. total-1 of path has exactly `times` runs */
static int each_ran(const char *path, int total, int times)
{
	int all = 1;
	for (int i = 0; i < total; i++) all &= runs(path, i, NULL) == times;
	return all;
}

/* items 0 .. total-1 of job ended (running gone, completed there) */
static int all_ended(const char *job, int total)
{
	int all = 1;
	for (int i = 0; i < total; i++) all &= tzkup_wait_ended(&u, job, i, 5000);
	return all;
}

int main(void)
{
	tlib_init(60);
	uint64_t t_start = tlib_now_ms();
	tzkup_start(&u, 200, "t77", 2000);
	const char *sh = tsup_rec_script();
	char r_oo[600], r_ejfile[600], r_ejnode[600], r_fo[600], jobs[4096];
	snprintf(r_oo, sizeof r_oo, "%s/runs-oo", tlib_tmpdir());
	snprintf(r_ejfile, sizeof r_ejfile, "%s/runs-ej-file", tlib_tmpdir());
	snprintf(r_ejnode, sizeof r_ejnode, "%s/runs-ej-node", tlib_tmpdir());
	snprintf(r_fo, sizeof r_fo, "%s/runs-fo", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  oo:\n    type: script\n    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"%s %s\"}\n"
	         "  ej:\n    type: script\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s\"}\n"
	         "  fo:\n    type: script\n    shardingTotalCount: 4\n    failover: true\n"
	         "    props: {script.command.line: \"%s %s 3\"}\n",
	         sh, r_oo, sh, r_ejfile, sh, r_fo);

	/* ej's config node as ElasticJob writes a one-off SCRIPT job (JobConfiguration.newBuilder("ej", 3)
	 * without cron: JobConfigurationPOJO's dump leaves the null out), before any supervisor */
	char node[1024];
	snprintf(node, sizeof node,
	         "description: ''\ndisabled: false\nfailover: false\njobName: ej\njobParameter: ''\n"
	         "maxTimeDiffSeconds: -1\nmisfire: true\nmonitorExecution: true\noverwrite: false\nprops:\n"
	         "  script.command.line: %s %s\nreconcileIntervalMinutes: 10\nshardingItemParameters: ''\n"
	         "shardingTotalCount: 3\nstaticSharding: false\n", sh, r_ejnode);
	ok(tzk_create(u.zh, "/t77", "", 0, NULL) == ZOK && tzk_create(u.zh, "/t77/ej", "SCRIPT", 0, NULL) == ZOK &&
	   tzk_create(u.zh, "/t77/ej/config", node, 0, NULL) == ZOK, "ElasticJob's one-off job ej: its nodes");

	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 4", jobs);
	tzkup_config(&u, &b, "b", "workers: 4", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	tzkup_run(&u, &b, "127.0.0.2");
	const char *names[] = { "oo", "ej", "fo" };
	int reg = 1;
	for (int k = 0; k < 3; k++)
		reg &= tzkup_wait_registered(&u, names[k], a.id, 0, 10000) &&
		       tzkup_wait_registered(&u, names[k], b.id, 0, 10000);
	ok(reg, "both supervisors register the three one-off jobs");
	uint64_t t_reg = tlib_now_ms();

	/* ---- what ZooKeeper and ejobctl show ---- */
	char *cfg = NULL;
	tzk_get(u.zh, "/t77/oo/config", &cfg, NULL);
	ok(cfg && strstr(cfg, "jobName: oo\n") && !strstr(cfg, "cron"), "oo's config node, published by ejob, has no cron");
	free(cfg);
	is_int(tsup_log_count(&a, "(server ENABLED; one-off: runs on trigger only)"), 3,
	       "a's registration line of each job says one-off");
	ok(!tsup_log_count(&a, "is not valid") && !tsup_log_count(&b, "is not valid"), "ej's node is not refused");
	is_int(ctl("jobs", "--json", NULL), 0, "ejobctl jobs --json: exit 0");
	ok(strstr(out, "{\"name\":\"oo\",\"type\":\"SCRIPT\",\"cron\":null,") != NULL, "  oo: cron null");
	const char *oo = strstr(out, "\"name\":\"oo\"");
	const char *nf = oo ? strstr(oo, "\"nextFire\":") : NULL;
	ok(nf && !strncmp(nf, "\"nextFire\":null,\"nextFireEpoch\":null,", 37), "  oo: nextFire and nextFireEpoch null");
	is_int(ctl("jobs", NULL), 0, "ejobctl jobs: exit 0");
	const char *row = strstr(out, "\noo ");
	char line[256] = "";
	if (row) snprintf(line, sizeof line, "%.*s", (int)strcspn(row + 1, "\n"), row + 1);
	if (!ok(strstr(line, "  (one-off)  ") && strstr(line, "  on trigger  "), "  oo's row: CRON (one-off), NEXT FIRE on trigger"))
		diag("%s", out);
	is_int(ctl("status", "ej", NULL), 0, "ejobctl status ej: exit 0");
	if (!ok(strstr(out, "\ncron         none: a one-off job; next fire on trigger (ejobctl trigger ej)\n") != NULL,
	        "  says one-off, next fire on trigger"))
		diag("%s", out);
	is_int(ctl("status", "ej", "--json", NULL), 0, "ejobctl status ej --json: exit 0");
	ok(strstr(out, "\"cron\":null,") && strstr(out, "\"nextFire\":null,") && strstr(out, "\"shardingTotalCount\":3,"),
	   "  cron and nextFire null; the node's 3 items");

	/* ---- nothing on its own ---- */
	uint64_t quiet_until = t_reg + 3000;
	if (tlib_now_ms() < quiet_until) usleep((useconds_t)(quiet_until - tlib_now_ms()) * 1000);
	ok(runs(r_oo, -1, NULL) + runs(r_ejfile, -1, NULL) + runs(r_ejnode, -1, NULL) + runs(r_fo, -1, NULL) == 0,
	   "nothing ran in the 3 s after registration");

	/* ---- trigger ---- */
	is_int(ctl("trigger", "oo", NULL), 0, "ejobctl trigger oo: exit 0");
	ok(tsup_wait_lines(r_oo, "", 4, 8000) && all_ended("oo", 4), "  4 items ran and ended");
	ok(each_ran(r_oo, 4, 1), "  each item exactly once");
	ok(runs(r_oo, -1, a.id) == 2 && runs(r_oo, -1, b.id) == 2, "  2 on each supervisor");
	int own = 1;
	for (int i = 0; i < 4; i++) {
		char *owner = NULL;
		tzk_get(u.zh, tzkup_path(&u, "oo", "sharding/%d/instance", i), &owner, NULL);
		own &= owner && runs(r_oo, i, owner) == 1;
		free(owner);
	}
	ok(own, "  each on the instance that owns it (sharding/{i}/instance)");
	ok(tzk_wait_exists(u.zh, tzkup_path(&u, "oo", "trigger/%s", a.id), 0, 3000) &&
	   tzk_wait_exists(u.zh, tzkup_path(&u, "oo", "trigger/%s", b.id), 0, 3000), "  both trigger nodes deleted");
	is_int(ctl("trigger", "oo", NULL), 0, "trigger oo again");
	ok(tsup_wait_lines(r_oo, "", 8, 8000) && all_ended("oo", 4), "  4 more ran and ended");
	usleep(300000);
	ok(each_ran(r_oo, 4, 2), "  each item exactly once more (twice in all)");

	/* ---- two triggers in one second: two fires, each with an id of its own ---- */
	long long ms = tlib_wall_ns() / 1000000;
	usleep((useconds_t)((1000 - ms % 1000 + 20) * 1000));       /* just after a whole second */
	long long t1 = tlib_wall_ns() / 1000000;
	int both = ctl("trigger", "oo", NULL) == 0 && tsup_wait_lines(r_oo, "", 12, 3000) && all_ended("oo", 4) &&
	           tzk_wait_exists(u.zh, tzkup_path(&u, "oo", "trigger/%s", a.id), 0, 3000) &&
	           tzk_wait_exists(u.zh, tzkup_path(&u, "oo", "trigger/%s", b.id), 0, 3000) &&
	           ctl("trigger", "oo", NULL) == 0;
	long long t2 = tlib_wall_ns() / 1000000;
	both &= tsup_wait_lines(r_oo, "", 16, 3000) && all_ended("oo", 4);
	ok(both && t1 / 1000 == t2 / 1000, "two triggers in one second (%lld and %lld ms), both ran", t1 % 100000,
	   t2 % 100000);
	usleep(300000);
	{
		/* the last 8 runs: on each supervisor, two fire ids, each with its 2 items */
		char *t = tsup_slurp(r_oo);
		long long f[64];
		int it[64], n = 0;
		char task[64][200];
		for (char *p = t ? strtok(t, "\n") : NULL; p && n < 64; p = strtok(NULL, "\n"))
			if (sscanf(p, "%lld %d %199s", &f[n], &it[n], task[n]) == 3) n++;
		free(t);
		int good = n == 16;
		for (int who = 0; who < 2 && good; who++) {
			const char *id = who ? b.id : a.id;
			long long ids[8];
			int cnt[8] = { 0 }, nid = 0;
			for (int k = 8; k < n; k++) {
				if (!strstr(task[k], id)) continue;
				int x = 0;
				while (x < nid && ids[x] != f[k]) x++;
				if (x == nid) ids[nid++] = f[k];
				cnt[x]++;
			}
			good &= nid == 2 && cnt[0] == 2 && cnt[1] == 2;
		}
		ok(good, "  on each supervisor, two fires with ids of their own, each running its 2 items once");
		ok(each_ran(r_oo, 4, 4), "  each item once more per trigger (4 in all)");
	}

	/* ---- ElasticJob's node ---- */
	is_int(ctl("trigger", "ej", NULL), 0, "trigger ej");
	ok(tsup_wait_lines(r_ejnode, "", 3, 8000) && all_ended("ej", 3), "  its node's 3 items ran");
	usleep(300000);
	ok(each_ran(r_ejnode, 3, 1), "  each once, by the node's command");
	is_int(runs(r_ejfile, -1, NULL), 0, "  the file's command never");

	/* ---- failover of triggered items ---- */
	char se[640];
	snprintf(se, sizeof se, "%s.se", r_fo);
	is_int(ctl("trigger", "fo", NULL), 0, "trigger fo (4 items of 3 s, failover: true)");
	ok(tsup_wait_lines(se, "start", 4, 8000), "  4 items started");
	usleep(300000);
	int64_t killed = tlib_wall_ns();
	kill(b.pid, SIGKILL);
	pid_t kids[64];
	int nk = tsup_descendants(b.pid, kids, 64);
	for (int i = 0; i < nk; i++) kill(kids[i], SIGKILL);
	waitpid(b.pid, NULL, 0);
	tlib_untrack(b.pid);
	ok(tsup_wait_lines(se, "start", 6, 10000), "b killed (-9) while its items ran: 2 items start again");
	usleep(500000);
	static struct tsup_rec r[MAXR];
	int n = tsup_read_recs(se, r, MAXR), starts[4] = { 0 }, on_b[4] = { 0 }, after = 0, after_on_a = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(r[i].kind, "start") || r[i].item < 0 || r[i].item > 3) continue;
		starts[r[i].item]++;
		if (strstr(r[i].task, b.id)) on_b[r[i].item] = 1;
		if (r[i].ns > killed) after++, after_on_a += strstr(r[i].task, a.id) != NULL;
	}
	int nb = 0, right = 0;
	for (int i = 0; i < 4; i++) {
		nb += on_b[i];
		right += starts[i] == (on_b[i] ? 2 : 1);
	}
	is_int(nb, 2, "  b was running 2 items");
	ok(after == 2 && after_on_a == 2, "  2 starts after the kill, both on a (%d, %d)", after, after_on_a);
	is_int(right, 4, "  each of b's items ran again once, a's own once");

	int s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "a stops cleanly");
	tzkup_end(&u);
	diag("%.1f s", (double)(tlib_now_ms() - t_start) / 1000.0);
	free(out), free(err);
	return done_testing();
}
