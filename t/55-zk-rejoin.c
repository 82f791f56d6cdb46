/* t/55-zk-rejoin.c: a supervisor that loses its session and comes back under the same instance id
 * before anyone saw it go. It is alone (its own leader), so no other instance can fail its items
 * over:
 *   - failover on: the items it was running were stopped for the lease; their running nodes
 *     (persistent) still name it. Back in a new session it queues them for failover itself, the
 *     leader (itself) names a taker, and each runs again exactly once. Before, they stayed
 *     "running" for good and every later fire misfired on them;
 *   - a misfire flag set in the old session (an item running elsewhere) is watched again in the
 *     new one: when that run ends, the item runs once more. That job fires only when triggered, so
 *     no fire of the new session can set the flag (and its watch) again. */
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

/* first run of each item: long (stopped for the lease); later runs: quick */
static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_ITEM $EJOB_TASK_ID $EJOB_FIRE_ID\" >> \"$OUT\"\n"
	"if mkdir \"$OUT.$EJOB_ITEM\" 2>/dev/null; then sleep 60; fi\n";

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM\" >> \"$OUT\"\n";

/* the fire id of the nth (0, 1, ...) start of item, -1 if there is none */
static long long fire_of(const char *path, int item, int nth)
{
	char *t = tsup_slurp(path);
	long long v = -1;
	int k = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		int it;
		long long f;
		if (sscanf(l, "start %d %*s %lld", &it, &f) == 2 && it == item && k++ == nth) {
			v = f;
			break;
		}
	}
	free(t);
	return v;
}

static int starts(const char *path, int item)
{
	char want[32];
	snprintf(want, sizeof want, "start %d ", item);
	return tsup_count_lines(path, want);
}

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 200, "t55", 2000);
	char sh[600], rsh[600], out[600], mout[600], cron[64], jobs[4096];
	tlib_script(sh, sizeof sh, "item.sh", item_sh);
	tlib_script(rsh, sizeof rsh, "rec.sh", rec_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(mout, sizeof mout, "%s/mis", tlib_tmpdir());
	tsup_cron_once(cron, sizeof cron, 4);
	snprintf(jobs, sizeof jobs,
	         "  rj:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    timeZone: UTC\n"
	         "    failover: true\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
	         "  mf:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         cron, out, sh, mout, rsh);
	struct tsup a;
	tzkup_config(&u, &a, "a", "workers: 4, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	zhandle_t *zh = u.zh;
	const char *id = a.id;

	ok(tzkup_wait_registered(&u, "mf", id, 0, 15000), "registered");
	char trig[128];
	snprintf(trig, sizeof trig, "/t55/mf/trigger/%s", id);
	is_int(zoo_create(zh, trig, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK, "mf triggered");
	ok(tsup_wait_lines(mout, " 0", 1, 10000), "mf's item 0 runs");
	ok(tsup_wait_lines(out, "start", 2, 15000), "rj's one fire started both items here");
	/* mf's item 0 held by a run elsewhere: its next fire sets the misfire flag */
	int rc = -1;
	for (int k = 0; k < 200 && rc != ZOK; k++) {
		rc = zoo_create(zh, "/t55/mf/sharding/0/running", "10.9.9.9@-@1", 12, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
		if (rc != ZOK) usleep(20000);
	}
	is_int(rc, ZOK, "a foreign running node holds mf's item 0");
	tzk_wait_exists(zh, trig, 0, 3000);
	is_int(zoo_create(zh, trig, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK, "mf triggered again");
	ok(tsup_wait_log(&a, "job mf: item 0 is still running from an earlier fire", 1, 5000), "mf misfires, saying why");
	ok(tzk_wait_exists(zh, "/t55/mf/sharding/0/misfire", 1, 3000), "its flag is set");
	char *d = NULL;
	is_int(tzk_get(zh, "/t55/rj/sharding/0/running", &d, NULL), ZOK, "rj's item 0 has a running node");
	ok(d && !strcmp(d, id), "  naming this instance (%s)", d ? d : "-");
	free(d);

	/* frozen past the session timeout: the workers stop rj's items for the lease, the session
	 * expires, and nobody is there to see it go */
	int64_t old_session = tzkup_session(&u, "rj", id);
	kill(a.pid, SIGSTOP);
	usleep(4000000);
	int n0 = starts(out, 0), n1 = starts(out, 1);
	kill(a.pid, SIGCONT);
	ok(tzkup_wait_registered(&u, "rj", id, old_session, 15000), "SIGCONT: registered again in a new session, same id");
	ok(tsup_wait_lines(out, "start 0 ", n0 + 1, 10000) && tsup_wait_lines(out, "start 1 ", n1 + 1, 5000),
	   "each runs again");
	long long cron_fire = fire_of(out, 0, 0), fo0 = fire_of(out, 0, n0), fo1 = fire_of(out, 1, n1);
	ok(cron_fire > 0 && fo0 > 0 && fo1 > 0 && fo0 != cron_fire && fo1 != cron_fire && fo0 != fo1,
	   "as failover runs: both items it was running were queued for failover and taken over (here: the only "
	   "instance), each with a fire id of its own (%lld, %lld; the cron's was %lld)", fo0, fo1, cron_fire);
	usleep(1500000);
	is_int(starts(out, 0), n0 + 1, "item 0 exactly once");
	is_int(starts(out, 1), n1 + 1, "item 1 exactly once");
	ok(tzkup_wait_ended(&u, "rj", 0, 3000) && tzkup_wait_ended(&u, "rj", 1, 3000),
	   "both runs ended: completed written, no running node left behind");
	ok(tzk_wait_exists(zh, "/t55/rj/leader/failover/items/0", 0, 3000) &&
	   tzk_wait_exists(zh, "/t55/rj/leader/failover/items/1", 0, 3000), "nor a queued item");

	/* the misfire flag from the old session */
	ok(tsup_wait_log(&a, "job mf: item 0 has a misfire flag", 1, 5000),
	   "mf's misfire flag is seen again in the new session");
	int m0 = tsup_count_lines(mout, " 0");
	is_int(zoo_delete(zh, "/t55/mf/sharding/0/running", -1), ZOK, "the foreign run of mf's item 0 ends");
	ok(tsup_wait_lines(mout, " 0", m0 + 1, 4000), "mf's item 0 runs again at once");
	ok(tzk_wait_exists(zh, "/t55/mf/sharding/0/misfire", 0, 3000), "and its flag is deleted");

	int st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "a stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
