/* t/69-zk-static-sharding.c: staticSharding: true, as ElasticJob's (issue 24: it was parsed,
 * published, and ignored).
 *
 * ElasticJob (ShardingListenerManager, ReconcileService): once a job's items are assigned, an
 * instance or server coming or going raises no resharding flag; only a changed shardingTotalCount
 * (or an operator's flag) reshards. So here, with a dynamic job beside it as the control (which
 * reshards on every one of these events):
 *   - a fourth instance joins: the static job keeps its assignment (same epoch), the newcomer owns
 *     none of its items, every fire runs each item once where it was;
 *   - an instance crashes (kill -9, its workers too; failover off): after its session has expired
 *     the assignment is the same, its two items run nowhere (and the leader says so), the others
 *     run as before;
 *   - a server is disabled: the same;
 *   - shardingTotalCount 6 -> 8 in the config node reshards over the instances online. */
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

/* runs of fire ids in (after, before]: per item how many, and the task id (naming the instance) of the last */
static void runs(const char *path, long long after, long long before, int cnt[8], char who[8][200])
{
	memset(cnt, 0, 8 * sizeof *cnt);
	char *t = tsup_slurp(path);
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long f;
		int item;
		char id[200];
		if (sscanf(p, "%lld %d %199s", &f, &item, id) != 3 || f <= after || f > before || item < 0 || item >= 8) continue;
		cnt[item]++;
		snprintf(who[item], 200, "%s", id);
	}
	free(t);
}

static void kill_machine(struct tsup *t)
{
	kill(t->pid, SIGKILL);
	pid_t kids[64];
	int nk = tsup_descendants(t->pid, kids, 64);
	for (int i = 0; i < nk; i++) kill(kids[i], SIGKILL);
	waitpid(t->pid, NULL, 0);
	tlib_untrack(t->pid);
	t->pid = 0;
}

int main(void)
{
	tlib_init(150);
	char sh[600], out_st[600], out_dy[600], jobs[4096];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out_st, sizeof out_st, "%s/runs-st", tlib_tmpdir());
	snprintf(out_dy, sizeof out_dy, "%s/runs-dy", tlib_tmpdir());
	struct tzkup u;
	tzkup_start(&u, 200, "t69", 3000);
	snprintf(jobs, sizeof jobs,
	         "  st:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 6\n    staticSharding: true\n"
	         "    overwrite: true\n    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
	         "  dy:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 6\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out_st, sh, out_dy, sh);
	struct tsup s[4];
	tzkup_run_n(&u, s, 3, "workers: 2", jobs);
	ok(tzkup_wait_owned(&u, "st", 6, s[0].id, 2, 20000) && tzkup_wait_owned(&u, "st", 6, s[1].id, 2, 20000) &&
	   tzkup_wait_owned(&u, "st", 6, s[2].id, 2, 20000), "three instances: 2 items each of the static job");
	ok(tzkup_wait_owned(&u, "dy", 6, s[2].id, 2, 20000), "and of the dynamic one");
	/* the first sharding of both is done; later registrations of the three raise no flag */
	usleep(2500000);
	uint64_t e_st = tzkup_epoch(&u, "st"), e_dy = tzkup_epoch(&u, "dy");
	char owner0[6][80];
	for (int i = 0; i < 6; i++) {
		char *d = NULL;
		tzk_get(u.zh, tzkup_path(&u, "st", "sharding/%d/instance", i), &d, NULL);
		snprintf(owner0[i], sizeof owner0[i], "%s", d ? d : "");
		free(d);
	}

	/* ---- a fourth instance joins ---- */
	tzkup_config(&u, &s[3], "s3", "workers: 2", jobs);
	tzkup_run(&u, &s[3], "127.0.0.4");
	ok(tzkup_wait_registered(&u, "st", s[3].id, 0, 15000), "a fourth instance registers");
	ok(tzkup_wait_epoch(&u, "dy", e_dy, 8000), "the dynamic job reshards");
	usleep(1500000);
	ok(tzkup_epoch(&u, "st") == e_st && tzk_exists(u.zh, tzkup_path(&u, "st", "leader/sharding/necessary"), NULL) == ZNONODE,
	   "the static job does not: same epoch, no flag");
	is_int(tzkup_owned(&u, "st", 6, s[3].id), 0, "  the newcomer owns none of its items");
	long long a = tlib_wall_ns() / 1000000;
	usleep(3200000);
	long long b = tlib_wall_ns() / 1000000 - 1000;
	int cnt[8];
	char who[8][200];
	runs(out_st, a, b, cnt, who);
	int where = 1, each = 1;
	for (int i = 0; i < 6; i++) {
		each &= cnt[i] >= 2 && cnt[i] <= 3;
		where &= strstr(who[i], owner0[i]) != NULL;
	}
	ok(each && where, "  every item runs at each fire, where it was assigned");

	/* ---- an instance crashes (failover off) ---- */
	kill_machine(&s[2]);
	char p[512];
	snprintf(p, sizeof p, "%s", tzkup_path(&u, "st", "instances/%s", s[2].id));
	ok(tzk_wait_exists(u.zh, p, 0, 10000), "s2 is killed; its session expires");
	e_dy = tzkup_epoch(&u, "dy");
	usleep(2500000);
	ok(tzkup_epoch(&u, "st") == e_st, "the static job keeps its assignment");
	is_int(tzkup_owned(&u, "st", 6, s[2].id), 2, "  s2 still owns its 2 items");
	a = tlib_wall_ns() / 1000000;
	usleep(3200000);
	b = tlib_wall_ns() / 1000000 - 1000;
	runs(out_st, a, b, cnt, who);
	int mine = 0, others = 1;
	for (int i = 0; i < 6; i++) {
		if (!strcmp(owner0[i], s[2].id)) mine += cnt[i];
		else others &= cnt[i] >= 2 && strstr(who[i], owner0[i]) != NULL;
	}
	ok(mine == 0 && others, "  s2's items run nowhere (ElasticJob's static sharding), the others where they were");
	ok(tsup_wait_log(&s[0], "staticSharding: 2 items", 1, 5000) || tsup_wait_log(&s[1], "staticSharding: 2 items", 1, 100) ||
	   tsup_wait_log(&s[3], "staticSharding: 2 items", 1, 100), "  and the leader says why");
	ok(tzkup_owned(&u, "dy", 6, s[2].id) == 0, "the dynamic job resharded without s2");

	/* ---- a server disabled ---- */
	snprintf(p, sizeof p, "%s", tzkup_path(&u, "st", "servers/127.0.0.2"));
	is_int(zoo_set(u.zh, p, "DISABLED", 8, -1), ZOK, "servers/127.0.0.2 of the static job DISABLED");
	usleep(2500000);
	ok(tzkup_epoch(&u, "st") == e_st && tzkup_owned(&u, "st", 6, s[1].id) == 2,
	   "  no reshard: its items stay with it");

	/* ---- shardingTotalCount changes: a reshard ---- */
	char *node = NULL;
	tzk_get(u.zh, tzkup_path(&u, "st", "config"), &node, NULL);
	char *c6 = node ? strstr(node, "shardingTotalCount: 6") : NULL;
	if (c6) c6[20] = '8';
	is_int(node ? zoo_set(u.zh, tzkup_path(&u, "st", "config"), node, (int)strlen(node), -1) : -1, ZOK,
	       "shardingTotalCount 6 -> 8 in the config node");
	free(node);
	ok(tzkup_wait_epoch(&u, "st", e_st, 8000), "the static job reshards");
	ok(tzkup_wait_owned(&u, "st", 8, s[0].id, 4, 8000) && tzkup_wait_owned(&u, "st", 8, s[3].id, 4, 8000),
	   "  over the enabled instances online (s0, s3: 4 items each)");

	for (int i = 0; i < 4; i++)
		if (s[i].pid) tsup_stop(&s[i], SIGTERM, 15000);
	tzkup_end(&u);
	return done_testing();
}
