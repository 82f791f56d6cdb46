/* t/71-ctl-ops.c: ejobctl's operations on a live cluster (one ZooKeeper, two supervisors), each
 * checked by the nodes it leaves (read back with zoo_get) and by what the jobs then run (their
 * scripts' run records):
 *   - bad names: an unknown job, server, instance or item is exit 2 naming it, with "did you mean"
 *     or the range, and nothing written;
 *   - trigger: a job whose cron is in 2099 fires once on each instance; a stale trigger node goes;
 *   - disable/enable --server: the server's items move to the other instance and come back;
 *   - disable-item/enable-item: the items stop running, then run again;
 *   - shutdown --instance: instances/{id} gone, its items move; the alive node stays; it says
 *     how to bring it back, and `instances` lists it as shut down;
 *   - remove: refused while an instance is online (exit 1, the subtree unchanged); --force takes
 *     the whole job in one multi and nothing comes back (a warning when overwrite: true); --server; a job spanning several multis,
 *     cut off after the first (no job left, nothing online) and finished; the job again once its
 *     supervisors have stopped. */
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

static struct tzkup u;
static char *out, *err;

/* ejobctl ARGS... --zk ... --namespace NS: its exit status; stdout and stderr in out, err */
#define ctl(...) tzkup_ctl(&u, &out, &err, __VA_ARGS__)

static long long now_ms(void) { return tlib_wall_ns() / 1000000; }

/* runs recorded after `after` (ms, by fire id) of item (-1: any) on tasks containing host (NULL: any) */
static int runs(const char *path, long long after, int item, const char *host)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long f;
		int i;
		char task[200];
		if (sscanf(p, "%lld %d %199s", &f, &i, task) != 3 || f <= after) continue;
		if ((item < 0 || i == item) && (!host || strstr(task, host))) n++;
	}
	free(t);
	return n;
}

#define data(path) tzkup_data(&u, path)
#define missing(path) tzkup_missing(&u, path)

int main(void)
{
	tlib_init(90);
	uint64_t start = tlib_now_ms();
	tzkup_start(&u, 200, "t71", 2000);
	char runs_tr[600], runs_op[600], runs_rm[600], jobs[4096];
	snprintf(runs_tr, sizeof runs_tr, "%s/runs-tr", tlib_tmpdir());
	snprintf(runs_op, sizeof runs_op, "%s/runs-op", tlib_tmpdir());
	snprintf(runs_rm, sizeof runs_rm, "%s/runs-rm", tlib_tmpdir());
	const char *sh = tsup_rec_script();
	snprintf(jobs, sizeof jobs,
	         "  tr:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s\"}\n"
	         "  op:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"%s %s\"}\n"
	         "  rm:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 2\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s %s\"}\n",
	         sh, runs_tr, sh, runs_op, sh, runs_rm);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_config(&u, &b, "b", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_owned(&u, "op", 4, a.id, 2, 10000) && tzkup_wait_owned(&u, "op", 4, b.id, 2, 10000),
	   "two supervisors share op's 4 items");
	ok(tzkup_wait_registered(&u, "tr", a.id, 0, 5000) && tzkup_wait_registered(&u, "tr", b.id, 0, 5000),
	   "both run tr");

	/* ---- bad names: exit 2, named, nothing written ---- */
	is_int(ctl("disable", "opp", NULL), 2, "disable of an unknown job: exit 2");
	ok(strstr(err, "'opp'") && strstr(err, "did you mean 'op'"), "  names it and suggests op: %s", err);
	is_int(ctl("disable", "op", "--server", "127.0.0.3", NULL), 2, "unknown server: exit 2");
	ok(strstr(err, "'127.0.0.3'") && strstr(err, "did you mean '127.0.0.1'"), "  names it, did you mean: %s", err);
	is_int(ctl("disable-item", "op", "1", "4", NULL), 2, "item 4 of 4: exit 2");
	ok(strstr(err, "'4'") && strstr(err, "0-3"), "  names it and the range 0-3: %s", err);
	is_int(ctl("enable-item", "op", "x", NULL), 2, "item 'x': exit 2");
	char bogus[100];
	snprintf(bogus, sizeof bogus, "%s1", a.id);
	is_int(ctl("shutdown", "op", "--instance", bogus, NULL), 2, "unknown instance: exit 2");
	ok(strstr(err, bogus) && strstr(err, "did you mean"), "  names it, did you mean: %s", err);
	is_int(ctl("shutdown", "op", "--server", "10.9.9.9", NULL), 2, "shutdown on an unknown server: exit 2");
	is_int(ctl("remove", "op", "--server", "127.0.0.9", NULL), 2, "remove of an unknown server: exit 2");
	is_int(ctl("remove", "nojob", NULL), 2, "remove of an unknown job: exit 2");
	is_int(ctl("trigger", "op", "--server", "127.0.0.1", NULL), 2, "trigger takes no --server: exit 2");
	ok(!strcmp(data("/t71/op/servers/127.0.0.1"), "ENABLED") && !strcmp(data("/t71/op/servers/127.0.0.2"), "ENABLED") &&
	   missing("/t71/op/sharding/1/disabled") && missing("/t71/nojob") &&
	   !missing(tzkup_path(&u, "op", "instances/%s", a.id)), "  nothing was written");

	/* ---- trigger ---- */
	is_int(tzk_create(u.zh, "/t71/tr/trigger/10.0.0.9@-@1", "", 0, NULL), ZOK, "a stale trigger node (an instance gone)");
	is_int(ctl("trigger", "tr", NULL), 0, "trigger tr: exit 0");
	char want[512];
	snprintf(want, sizeof want, "deleted /t71/tr/trigger/10.0.0.9@-@1\ncreated /t71/tr/trigger/%s = \"\"\ncreated /t71/tr/trigger/%s = \"\"\n",
	         a.id, b.id);
	is_str(out, want, "  prints each node written");
	ok(tsup_wait_lines(runs_tr, "", 2, 5000), "tr ran");
	ok(tzk_wait_exists(u.zh, tzkup_path(&u, "tr", "trigger/%s", a.id), 0, 3000) &&
	   tzk_wait_exists(u.zh, tzkup_path(&u, "tr", "trigger/%s", b.id), 0, 3000),
	   "  each instance deleted its trigger node");
	ok(missing("/t71/tr/trigger/10.0.0.9@-@1"), "  the stale one is gone");
	usleep(1200000);
	is_int(runs(runs_tr, 0, -1, NULL), 2, "  exactly twice");
	ok(runs(runs_tr, 0, 0, NULL) == 1 && runs(runs_tr, 0, 1, NULL) == 1, "  item 0 once and item 1 once");
	ok(runs(runs_tr, 0, -1, a.id) == 1 && runs(runs_tr, 0, -1, b.id) == 1, "  once on each instance");

	/* ---- disable / enable a server ---- */
	is_int(ctl("disable", "op", "--server", "127.0.0.2", NULL), 0, "disable op --server 127.0.0.2: exit 0");
	is_str(out, "set /t71/op/servers/127.0.0.2 = DISABLED\n", "  prints the node written");
	is_str(data("/t71/op/servers/127.0.0.2"), "DISABLED", "  servers/127.0.0.2 is DISABLED");
	is_str(data("/t71/op/servers/127.0.0.1"), "ENABLED", "  servers/127.0.0.1 stays ENABLED");
	ok(tzkup_wait_owned(&u, "op", 4, a.id, 4, 5000), "  a owns all 4 items");
	long long t0 = now_ms() + 300;
	ok(tsup_wait_lines(runs_op, "", 1, 0) && (usleep(2300000), 1), "  (2.3 s of fires)");
	int exact = 0;
	ok(tsup_fires_exact(runs_op, t0, 4, a.ip, &exact) >= 1 && exact, "  every item of each fire ran once, all on a");
	is_int(runs(runs_op, t0, -1, b.ip), 0, "  none on b");
	is_int(ctl("disable", "op", "--server", "127.0.0.2", NULL), 0, "disable again: exit 0");
	ok(strstr(out, "nothing written") != NULL, "  nothing written: %s", out);
	is_int(ctl("enable", "op", "--json", NULL), 0, "enable op (every server), --json: exit 0");
	is_str(out, "{\"command\":\"enable\",\"job\":\"op\",\"writes\":[{\"op\":\"set\",\"path\":\"/t71/op/servers/127.0.0.2\","
	            "\"data\":\"ENABLED\"}]}\n", "  the one server that was not ENABLED");
	ok(tzkup_wait_owned(&u, "op", 4, b.id, 2, 5000), "  b owns 2 items again");
	t0 = now_ms() + 300;
	usleep(2300000);
	exact = 0;
	ok(tsup_fires_exact(runs_op, t0, 4, NULL, &exact) >= 1 && exact && runs(runs_op, t0, -1, b.ip) >= 2,
	   "  every item once per fire, b runs its items (%d)", runs(runs_op, t0, -1, b.ip));

	/* ---- disable / enable items ---- */
	is_int(ctl("disable-item", "op", "1", "3", "1", NULL), 0, "disable-item op 1 3 1: exit 0");
	is_str(out, "created /t71/op/sharding/1/disabled = \"\"\ncreated /t71/op/sharding/3/disabled = \"\"\n",
	       "  each item's node once");
	ok(!strcmp(data("/t71/op/sharding/1/disabled"), "") && !strcmp(data("/t71/op/sharding/3/disabled"), ""),
	   "  sharding/1/disabled and sharding/3/disabled hold \"\"");
	t0 = now_ms() + 300;
	usleep(2300000);
	ok(!runs(runs_op, t0, 1, NULL) && !runs(runs_op, t0, 3, NULL), "  items 1 and 3 do not run");
	ok(runs(runs_op, t0, 0, NULL) >= 1 && runs(runs_op, t0, 2, NULL) >= 1, "  items 0 and 2 do");
	is_int(ctl("enable-item", "op", "1", "3", NULL), 0, "enable-item op 1 3: exit 0");
	ok(missing("/t71/op/sharding/1/disabled") && missing("/t71/op/sharding/3/disabled"), "  both nodes deleted");
	t0 = now_ms() + 300;
	usleep(1800000);
	ok(runs(runs_op, t0, 1, NULL) >= 1 && runs(runs_op, t0, 3, NULL) >= 1, "  items 1 and 3 run again");

	/* ---- shutdown one instance ---- */
	is_int(ctl("shutdown", "op", "--instance", b.id, NULL), 0, "shutdown op --instance b: exit 0");
	char undo[300];
	snprintf(undo, sizeof undo, "job 'op' stays stopped on %s until its supervisor restarts (on 127.0.0.2", b.id);
	ok(strstr(out, undo) != NULL, "  and says how to bring it back: restart b's supervisor: %s", out);
	ok(missing(tzkup_path(&u, "op", "instances/%s", b.id)), "  instances/{b} deleted");
	ok(!missing(tzkup_path(&u, "tr", "instances/%s", b.id)), "  b's instance of tr stays");
	ok(tzkup_wait_owned(&u, "op", 4, a.id, 4, 5000), "  a owns all 4 items");
	ok(!missing(tzkup_path(&u, "op", "leader/failover/alive/%s", b.id)), "  b's alive node stays (its session lives)");
	/* the shut-down instance stays in the listings (issue 25): its alive node without instances/{id} */
	is_int(ctl("instances", "op", "--json", NULL), 0, "instances op --json: exit 0");
	char key[200];
	snprintf(key, sizeof key, "{\"id\":\"%s\"", b.id);
	const char *bj = strstr(out, key), *st = bj ? strstr(bj, "\"state\":") : NULL;
	ok(st && !strncmp(st, "\"state\":\"shutdown\"", 18) && strstr(bj, "\"online\":false,\"kind\":\"ejob\""),
	   "  b listed, ejob, state shutdown: %.160s", bj ? bj : out);
	is_int(ctl("instances", "op", NULL), 0, "instances op: exit 0");
	const char *brow = strstr(out, b.id), *eol = brow ? strchr(brow, '\n') : NULL;
	ok(eol && eol - brow > 11 && !strncmp(eol - 11, "  shut down", 11), "  its row's STATE: shut down: %.*s",
	   eol ? (int)(eol - brow) : 0, brow ? brow : "");
	t0 = now_ms() + 300;
	usleep(2300000);
	exact = 0;
	if (!ok(tsup_fires_exact(runs_op, t0, 4, a.ip, &exact) >= 1 && exact, "  every item of each fire ran once, on a")) {
		char *t = tsup_slurp(runs_op);
		diag("t0 %lld, runs:\n%s", t0, t ? t + (strlen(t) > 1500 ? strlen(t) - 1500 : 0) : "");
		free(t);
	}

	/* ---- remove ---- */
	char *before = tzk_dump(u.zh, "/t71/rm", NULL);
	is_int(ctl("remove", "rm", NULL), 1, "remove rm with instances online: exit 1");
	ok(strstr(err, "online") && strstr(err, "--force"), "  says why and how: %s", err);
	char *after = tzk_dump(u.zh, "/t71/rm", NULL);
	ok(before && after && tzk_exists(u.zh, "/t71/rm/config", NULL) == ZOK &&
	   tzk_exists(u.zh, tzkup_path(&u, "rm", "instances/%s", a.id), NULL) == ZOK, "  nothing deleted");
	free(before), free(after);
	is_int(ctl("remove", "op", "--server", "127.0.0.1", NULL), 1, "remove op --server 127.0.0.1 (a online): exit 1");
	is_str(data("/t71/op/servers/127.0.0.1"), "ENABLED", "  servers/127.0.0.1 stays");
	is_int(ctl("remove", "op", "--server", "127.0.0.2", NULL), 0, "remove op --server 127.0.0.2 (b shut down): exit 0");
	is_str(out, "deleted /t71/op/servers/127.0.0.2\n", "  deletes servers/127.0.0.2 only");
	is_int(ctl("remove", "rm", "--force", NULL), 0, "remove rm --force: exit 0");
	ok(strstr(err, "warning: job 'rm' has overwrite: true") && strstr(err, "remove the job from the supervisors' files"),
	   "  warns that the supervisors' files (overwrite: true) bring rm back: %s", err);
	ok(strstr(out, "in 1 multi\n") != NULL, "  in one multi: %s", out);
	ok(missing("/t71/rm"), "  /t71/rm is gone");
	long long t1 = now_ms();
	usleep(1500000);
	ok(missing("/t71/rm"), "  and stays gone (no supervisor writes into it again)");
	is_int(runs(runs_rm, t1 + 300, -1, NULL), 0, "  rm runs no more");

	/* a job bigger than a multi, as its supervisors would leave it, with an instance online */
	static const char *const big[] = { "/t71/big/config", "/t71/big/servers/10.0.0.1", "/t71/big/instances/10.0.0.1@-@1",
		"/t71/big/leader/election", "/t71/big/leader/sharding", "/t71/big/trigger", NULL };
	int made = 1;
	for (int i = 0; big[i]; i++) made &= tzk_create(u.zh, big[i], "", 0, NULL) == ZOK;
	for (int i = 0; i < 8; i++) made &= tzk_create(u.zh, tzkup_path(&u, "big", "sharding/%d/instance", i), "x", 0, NULL) == ZOK;
	/* guarantee/ sorts before instances/: deepest first alone would not take the instance first */
	for (int i = 0; i < 4; i++)
		made &= tzk_create(u.zh, tzkup_path(&u, "big", "guarantee/started/%d", i), "", 0, NULL) == ZOK &&
		        tzk_create(u.zh, tzkup_path(&u, "big", "guarantee/completed/%d", i), "", 0, NULL) == ZOK;
	ok(made, "a job 'big' of 38 nodes made by hand");
	setenv("EJOBCTL_MULTI_OPS", "5", 1);
	setenv("EJOBCTL_CUT_AFTER_MULTIS", "1", 1);
	is_int(ctl("remove", "big", "--force", NULL), 1, "remove big --force, at most 5 ops a multi, cut off after the first");
	unsetenv("EJOBCTL_CUT_AFTER_MULTIS");
	ok(missing("/t71/big/config") && missing("/t71/big/instances/10.0.0.1@-@1"),
	   "  the first multi took config and the instance: what is left is no job, and none of it is online");
	ok(!missing("/t71/big/sharding/7/instance"), "  the rest is there");
	is_int(ctl("remove", "big", NULL), 0, "remove big again: exit 0");
	unsetenv("EJOBCTL_MULTI_OPS");
	ok(strstr(err, "/t71/big has no config node") != NULL, "  says what it found: %s", err);
	is_str(out, "removed /t71/big: 33 nodes deleted in 7 multis\n", "  the other 33 nodes in 7 multis");
	ok(missing("/t71/big"), "  /t71/big is gone");

	/* the supervisors stop: op can go */
	int s1 = tsup_stop(&a, SIGTERM, 10000), s2 = tsup_stop(&b, SIGTERM, 10000);
	ok(WIFEXITED(s1) && !WEXITSTATUS(s1) && WIFEXITED(s2) && !WEXITSTATUS(s2), "both supervisors stop cleanly");
	ok(tzk_wait_exists(u.zh, tzkup_path(&u, "op", "instances/%s", a.id), 0, 5000), "op has no instance online");
	is_int(ctl("remove", "op", "--json", NULL), 0, "remove op: exit 0");
	ok(!strstr(err, "overwrite"), "  op has overwrite: false: no warning (%s)", err);
	ok(!strncmp(out, "{\"command\":\"remove\",\"job\":\"op\",\"path\":\"/t71/op\",\"nodes\":", 55) &&
	   strstr(out, "\"multis\":1,\"leftover\":false}"), "  --json says what: %s", out);
	ok(missing("/t71/op"), "  /t71/op is gone");
	ok(!missing("/t71/tr/config"), "  tr stays");
	is_int(ctl("trigger", "tr", NULL), 1, "trigger tr with no instance online: exit 1");
	diag("t/71 took %.1f s", (tlib_now_ms() - start) / 1000.0);
	tzkup_end(&u);
	free(out), free(err);
	return done_testing();
}
