/* t/66-zk-rearm.c: every watch a supervisor keeps on ZooKeeper works again after its session was
 * lost and a new one began (zkc's kept watches: unarmed by the new session, armed again by the
 * registration in it), and each acts as ElasticJob's does. One supervisor, its session expired
 * first (SIGSTOP past the timeout), then, in the new session, an operator's every move:
 *   - trigger/{id}: the job fires once, the node is consumed;
 *   - sharding/0/disabled: the next fire leaves item 0 out;
 *   - the config node (shardingTotalCount 2 -> 3): the job reshards to 3 items at the next fire;
 *   - servers/{ip} DISABLED: the instance steps down as leader and runs nothing; ENABLED: it leads
 *     again;
 *   - a second instance joins and is given items; when it dies, the leader's instances/ watch
 *     raises the resharding flag;
 *   - instances/{id} deleted (the console's shutdown): the instance gives up leading for good and
 *     runs nothing more.
 * The job's cron is in 2099: every run here comes from a trigger. */
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

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM\" >> \"$OUT\"\n";

static struct tzkup u;
static char trig[256];

/* create trigger/{id}; 1 if the instance consumed it (deleted it) within 5 s */
static int trigger(void)
{
	int rc = zoo_create(u.zh, trig, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	if (rc != ZOK) diag("create %s: %s", trig, zerror(rc));
	if (rc != ZOK) return 0;
	return tzk_wait_exists(u.zh, trig, 0, 5000);
}

/* runs of item i so far */
static int runs(const char *out, int i)
{
	char want[16];
	snprintf(want, sizeof want, " %d", i);
	return tsup_count_lines(out, want);
}

/* the leader node names id (NULL: there is none) */
static int leader_is(const char *id)
{
	char *d = NULL;
	int rc = tzk_get(u.zh, tzkup_path(&u, "op", "leader/election/instance"), &d, NULL);
	int is = id ? rc == ZOK && d && !strcmp(d, id) : rc == ZNONODE;
	free(d);
	return is;
}

/* until there has been no leader for hold_ms on end, within timeout_ms */
static int wait_no_leader(unsigned hold_ms, unsigned timeout_ms)
{
	long long t0 = tlib_now_ms(), since = -1;
	while (tlib_now_ms() - t0 < timeout_ms) {
		if (leader_is(NULL)) {
			if (since < 0) since = tlib_now_ms();
			if (tlib_now_ms() - since >= hold_ms) return 1;
		} else {
			since = -1;
		}
		usleep(50000);
	}
	return 0;
}

int main(void)
{
	tlib_init(150);
	tzkup_start(&u, 200, "t66", 2000);
	char sh[600], out[600], jobs[2048];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  op:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out, sh);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 2, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	const char *id = a.id;
	snprintf(trig, sizeof trig, "%s", tzkup_path(&u, "op", "trigger/%s", id));
	ok(tzkup_wait_registered(&u, "op", id, 0, 15000) && tzkup_wait_leader(&u, "op", id, 5000), "registered, leading");

	/* ---- the session lost: frozen past its timeout ---- */
	int64_t s0 = tzkup_session(&u, "op", id);
	kill(a.pid, SIGSTOP);
	usleep(4000000);
	kill(a.pid, SIGCONT);
	ok(tzkup_wait_registered(&u, "op", id, s0, 15000), "SIGCONT: registered again in a new session");
	ok(tzkup_wait_leader(&u, "op", id, 5000), "and leading again");

	/* ---- trigger/{id} ---- */
	ok(trigger(), "trigger/{id} is consumed in the new session");
	ok(tsup_wait_lines(out, " 0", 1, 5000) && tsup_wait_lines(out, " 1", 1, 5000), "the job fires: items 0 and 1 run");

	/* ---- sharding/0/disabled ---- */
	is_int(zoo_create(u.zh, tzkup_path(&u, "op", "sharding/0/disabled"), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK,
	       "item 0 disabled");
	usleep(300000);
	ok(trigger(), "triggered");
	ok(tsup_wait_lines(out, " 1", 2, 5000), "item 1 runs");
	usleep(1000000);
	is_int(runs(out, 0), 1, "item 0 does not");

	/* ---- the config node: 3 items ---- */
	uint64_t e0 = tzkup_epoch(&u, "op");
	char node[2048];
	snprintf(node, sizeof node,
	         "cron: 0 0 0 1 1 ? 2099\njobName: op\nprops:\n  ejob.type: script\n  script.command.line: /usr/bin/env OUT=%s "
	         "%s\nshardingTotalCount: 3\n", out, sh);
	is_int(zoo_set(u.zh, tzkup_path(&u, "op", "config"), node, (int)strlen(node), -1), ZOK,
	       "shardingTotalCount set to 3 in the config node");
	ok(tzk_wait_exists(u.zh, tzkup_path(&u, "op", "leader/sharding/necessary"), 1, 5000),
	   "the instance takes it: resharding is due");
	ok(trigger(), "triggered");
	ok(tzkup_wait_epoch(&u, "op", e0, 5000) && tzkup_owned(&u, "op", 3, id) == 3, "the job reshards to 3 items, all here");
	ok(tsup_wait_lines(out, " 2", 1, 5000) && tsup_wait_lines(out, " 1", 3, 5000), "items 1 and 2 run");
	usleep(800000);
	is_int(runs(out, 0), 1, "item 0, still disabled, does not");

	/* ---- servers/{ip} ---- */
	char srv[256];
	snprintf(srv, sizeof srv, "%s", tzkup_path(&u, "op", "servers/127.0.0.1"));
	int n1 = runs(out, 1), n2 = runs(out, 2);
	is_int(tzk_set(u.zh, srv, "DISABLED"), ZOK, "servers/127.0.0.1 set to DISABLED");
	ok(wait_no_leader(1000, 5000), "the instance steps down and does not stand again");
	ok(trigger(), "triggered");
	usleep(1200000);
	ok(runs(out, 1) == n1 && runs(out, 2) == n2, "nothing runs on a disabled server");
	is_int(tzk_set(u.zh, srv, "ENABLED"), ZOK, "ENABLED again");
	ok(tzkup_wait_leader(&u, "op", id, 5000), "it leads again");

	/* ---- a second instance, then its death: the leader's instances/ watch ---- */
	tzkup_config(&u, &b, "b", "workers: 2, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "op", b.id, 0, 15000), "b registered");
	ok(trigger(), "a triggered");
	int ob = 0, oa = 0;
	for (int k = 0; k < 160 && !(ob > 0 && oa > 0 && oa + ob == 3); k++) {
		usleep(50000);
		ob = tzkup_owned(&u, "op", 3, b.id);
		oa = tzkup_owned(&u, "op", 3, id);
	}
	ok(ob > 0 && oa > 0 && oa + ob == 3, "the leader reshards: a has %d items, b %d", oa, ob);
	kill(b.pid, SIGKILL);
	ok(tzk_wait_exists(u.zh, tzkup_path(&u, "op", "instances/%s", b.id), 0, 8000), "b's session ends");
	ok(tzk_wait_exists(u.zh, tzkup_path(&u, "op", "leader/sharding/necessary"), 1, 3000),
	   "the leader saw b go: resharding is due");
	tsup_stop(&b, SIGKILL, 5000);

	/* ---- instances/{id} deleted: shut down here ---- */
	is_int(zoo_delete(u.zh, tzkup_path(&u, "op", "instances/%s", id), -1), ZOK, "instances/{a} deleted");
	ok(wait_no_leader(1500, 5000), "a gives up leading and does not stand again");
	n1 = runs(out, 1);
	n2 = runs(out, 2);
	ok(trigger(), "triggered");
	usleep(1200000);
	ok(runs(out, 1) == n1 && runs(out, 2) == n2 && runs(out, 0) == 1, "nothing runs on a shut instance");
	ok(tzk_exists(u.zh, tzkup_path(&u, "op", "instances/%s", id), NULL) == ZNONODE, "its instance node stays gone");

	int st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "a stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
