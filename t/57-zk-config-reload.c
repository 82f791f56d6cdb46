/* t/57-zk-config-reload.c: what a reload (SIGHUP) does to a job in the cluster (issue 10).
 *
 * One rule: the config node is the job's config for the whole cluster; a file with
 * overwrite: true publishes its job's config there at the start and at a reload that changes it;
 * otherwise the node wins (and the log says the file is not in force). Instances adopt what the
 * node says and never write it back. Shown here:
 *   - a with overwrite: true reloads a new cron: the node gets it (one write) and b follows;
 *   - b with overwrite: false reloads another cron: the node does not change, b fires on it, and
 *     its log says no cron change (the cron in force did not change);
 *   - c starts with a third cron and overwrite: true: the node gets c's, a and b follow, and the
 *     node does not flip between a's and c's;
 *   - a reload that removes a job: its instance node goes at once, its running items end and
 *     write their completions, its alive node goes after them, and b runs every item of it. */
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
#include "t/lib/tzkup.h"
#include "t/tap.h"

static char rec[600], out_cr[600], out_rm[600];
static struct tzkup u;

static void conf_of(struct tsup *t, const char *name, const char *cron, int overwrite, int with_rm)
{
	char jobs[4096];
	int n = snprintf(jobs, sizeof jobs,
	                 "  cr:\n"
	                 "    type: script\n"
	                 "    cron: \"%s\"\n"
	                 "    overwrite: %s\n"
	                 "    shardingTotalCount: 2\n"
	                 "    props: {script.command.line: \"%s %s\"}\n",
	                 cron, overwrite ? "true" : "false", rec, out_cr);
	if (with_rm)
		snprintf(jobs + n, sizeof jobs - (size_t)n,
		         "  rm:\n"
		         "    type: script\n"
		         "    cron: \"0/2 * * * * ?\"\n"
		         "    shardingTotalCount: 2\n"
		         "    props: {script.command.line: \"%s %s 1.5\"}\n",
		         rec, out_rm);
	if (t->pid) tzkup_reconfig(&u, t, "workers: 4", jobs);
	else tzkup_config(&u, t, name, "workers: 4", jobs);
}

/* the config node's version, and whether it holds `cron` */
static int node_version(zhandle_t *zh, const char *cron, int *has)
{
	char *data = NULL;
	struct Stat st;
	if (tzk_get(zh, "/t57/cr/config", &data, &st) != ZOK) return -1;
	*has = data && strstr(data, cron) != NULL;
	free(data);
	return st.version;
}

/* every run of cr with a fire id after `after`: all at a multiple of `every` seconds; how many
 * runs there were on each of the hosts named */
static int runs_on(long long after, int every, const char *host, int *bad)
{
	char *t = tsup_slurp(out_cr);
	int n = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		int item;
		char task[200] = "";
		if (sscanf(l, "%lld %d %199s", &f, &item, task) < 3 || f <= after) continue;
		if (f % (every * 1000LL)) (*bad)++;
		if (strstr(task, host)) n++;
	}
	free(t);
	return n;
}

/* the lines of t's log that say cr's cron in force changed ("job cr: cron 'X' now (was 'Y')") */
static int cron_said(struct tsup *t)
{
	char *log = tsup_log_text(t);
	int n = 0;
	for (char *l = strtok(log, "\n"); l; l = strtok(NULL, "\n")) n += strstr(l, "job cr: cron '") && strstr(l, " now (was ");
	free(log);
	return n;
}

static int wait_node(zhandle_t *zh, const char *cron, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	int has = 0;
	while (tlib_now_ms() < end) {
		if (node_version(zh, cron, &has) >= 0 && has) return 1;
		usleep(20000);
	}
	return 0;
}

int main(void)
{
	tlib_init(120);
	tzkup_start(&u, 200, "t57", 4000);
	snprintf(rec, sizeof rec, "%s", tsup_rec_script());
	snprintf(out_cr, sizeof out_cr, "%s/runs.cr", tlib_tmpdir());
	snprintf(out_rm, sizeof out_rm, "%s/runs.rm", tlib_tmpdir());
	static struct tsup a, b, c;
	conf_of(&a, "a", "0/2 * * * * ?", 1, 1);
	conf_of(&b, "b", "0/2 * * * * ?", 0, 1);
	zhandle_t *zh = u.zh;
	tzkup_run(&u, &a, "127.0.0.2");
	ok(tzkup_wait_leader(&u, "rm", a.id, 15000), "a registers and leads");
	tzkup_run(&u, &b, "127.0.0.3");
	const char *ida = a.id, *idb = b.id;
	ok(tzkup_wait_registered(&u, "cr", idb, 0, 15000), "b registers");
	usleep(2500000);

	/* a (overwrite: true) reloads cron 0/3 */
	int has = 0, v0 = node_version(zh, "0/2 * * * * ?", &has);
	ok(has, "the node holds the files' cron 0/2");
	conf_of(&a, "a", "0/3 * * * * ?", 1, 1);
	int said_a = cron_said(&a);
	kill(a.pid, SIGHUP);
	ok(wait_node(zh, "0/3 * * * * ?", 5000), "a's reload publishes cron 0/3 to the config node");
	long long changed = tlib_wall_ns() / 1000000 + 1000;
	usleep(6500000);
	int v1 = node_version(zh, "0/3 * * * * ?", &has);
	is_int(v1, v0 + 1, "in one write: nobody writes it back (version %d -> %d)", v0, v1);
	int bad = 0;
	int on_a = runs_on(changed, 3, ida, &bad), on_b = runs_on(changed, 3, idb, &bad);
	ok(on_a > 0 && on_b > 0 && !bad, "a and b both fire on the new cron (%d and %d runs, %d off it)", on_a, on_b, bad);
	is_int(cron_said(&a) - said_a, 1, "a's log says the change once");
	is_int(tsup_log_count(&a, "job cr: cron '0/3 * * * * ?' now (was '0/2 * * * * ?')"), 1, "  cron 0/3 now (was 0/2)");

	/* b (overwrite: false) reloads cron 0/5: the node stays, and so does b */
	conf_of(&b, "b", "0/5 * * * * ?", 0, 1);
	int said_b = cron_said(&b);
	kill(b.pid, SIGHUP);
	changed = tlib_wall_ns() / 1000000 + 500;
	usleep(7000000);
	int v2 = node_version(zh, "0/3 * * * * ?", &has);
	ok(has && v2 == v1, "b's reload leaves the node as it is (overwrite: false): cron 0/3, version %d", v2);
	bad = 0;
	on_b = runs_on(changed, 3, idb, &bad);
	ok(on_b > 0 && !bad, "b goes on firing on the node's cron (%d runs, %d off it)", on_b, bad);
	ok(tsup_log_count(&b, "the file's cron is not in force") == 1, "and says that its file's cron is not in force");
	is_int(cron_said(&b) - said_b, 0, "  and no cron change: the one in force did not (not the file's, then the node's again)");

	/* a reload that removes rm from a, while its items run there */
	char ia[256], alive[256];
	snprintf(ia, sizeof ia, "/t57/rm/instances/%s", ida);
	snprintf(alive, sizeof alive, "/t57/rm/leader/failover/alive/%s", ida);
	long long now = tlib_wall_ns() / 1000000;
	long long fire = (now / 2000 + 1) * 2000;
	usleep((useconds_t)((fire + 400 - now) * 1000));
	conf_of(&a, "a", "0/3 * * * * ?", 1, 0);
	kill(a.pid, SIGHUP);
	uint64_t t0 = tlib_now_ms();
	ok(tzk_wait_exists(zh, ia, 0, 1000), "a's instance node of rm goes at once (%llu ms)",
	   (unsigned long long)(tlib_now_ms() - t0));
	ok(tzk_exists(zh, alive, NULL) == ZOK, "while its items still run, its alive node stays (nobody fails them over)");
	ok(tzk_wait_exists(zh, alive, 0, 4000), "then it goes");
	int left = 0;
	for (int i = 0; i < 2; i++) {
		char rp[128], *data = NULL;
		snprintf(rp, sizeof rp, "/t57/rm/sharding/%d/running", i);
		if (tzk_get(zh, rp, &data, NULL) == ZOK && data && !strcmp(data, ida)) left++;
		free(data);
	}
	is_int(left, 0, "no running node of a's is left behind");
	long long gone = tlib_wall_ns() / 1000000;
	int exact = 0, nf = 0;
	uint64_t end = tlib_now_ms() + 15000;
	while ((nf = tsup_fires_exact(out_rm, gone, 2, idb, &exact)) < 2 && tlib_now_ms() < end) usleep(100000);
	ok(nf >= 2 && exact, "b runs every item of rm from then on (%d fires)", nf);
	/* removed: a watches nothing of rm any more, its trigger included */
	char tr[256];
	snprintf(tr, sizeof tr, "/t57/rm/trigger/%s", ida);
	is_int(zoo_create(zh, tr, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK, "rm triggered on a");
	usleep(1500000);
	ok(tzk_exists(zh, tr, NULL) == ZOK, "a, which no longer has rm, leaves the trigger node alone");
	zoo_delete(zh, tr, -1);

	/* c starts with cron 0/4 and overwrite: true */
	conf_of(&c, "c", "0/4 * * * * ?", 1, 0);
	tzkup_run(&u, &c, "127.0.0.4");
	ok(wait_node(zh, "0/4 * * * * ?", 10000), "c's start publishes cron 0/4");
	int v3 = node_version(zh, "0/4 * * * * ?", &has);
	changed = tlib_wall_ns() / 1000000 + 1000;
	usleep(8500000);
	int v4 = node_version(zh, "0/4 * * * * ?", &has);
	ok(has && v4 == v3, "the node stays c's: a (overwrite: true too) adopts it and does not write back (%d -> %d)", v3,
	   v4);
	bad = 0;
	on_a = runs_on(changed, 4, ida, &bad);
	on_b = runs_on(changed, 4, idb, &bad);
	ok(on_a + on_b > 0 && !bad, "a and b fire on it (%d + %d runs, %d off it)", on_a, on_b, bad);
	struct tsup *all[3] = { &a, &b, &c };
	for (int k = 0; k < 3; k++) {
		int st = tsup_stop(all[k], SIGTERM, 15000);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%c stops cleanly", 'a' + k);
	}
	tzkup_end(&u);
	return done_testing();
}
