/* t/52-zk-config.c: the config node is watched, and what an operator writes into the job's nodes
 * with zkCli is checked before it is believed:
 *   - a cron change in the config node reschedules at once; a shardingTotalCount change
 *     reshards at the next fire (each item of each fire exactly once); failover: false clears the
 *     failover queue and failovering nodes;
 *   - garbage in the config node (bad YAML, a bad cron, binary bytes), in sharding/{i}/instance and
 *     as an instances/ child: a log line naming the node and the problem, the job goes on with what
 *     it knew, the other job keeps firing, nothing crashes;
 *   - the config node deleted: the job goes on; written again: taken;
 *   - an instance node deleted by an operator shuts that job down on that instance only;
 *   - a "leader" that never shards (another client holding leader/election/instance and an ejob
 *     instance's leader/failover/alive/{id}) blocks a fire for at most twice the session timeout:
 *     the fire is missed, the leader deposed, and the job runs. */
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

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM\" >> \"$OUT\"\n";

static long long now_ms(void) { return tlib_wall_ns() / 1000000; }

/* the config node with one line (the one starting with `key:`) replaced */
static int set_line(zhandle_t *zh, const char *path, const char *key, const char *line)
{
	char *data = NULL;
	if (tzk_get(zh, path, &data, NULL) != ZOK || !data) return -1;
	char out[8192];
	size_t n = 0, kl = strlen(key);
	int found = 0;
	for (char *p = data; *p;) {
		char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			n += (size_t)snprintf(out + n, sizeof out - n, "%s\n", line);
			found = 1;
		} else {
			n += (size_t)snprintf(out + n, sizeof out - n, "%.*s\n", (int)len, p);
		}
		p += len + (e ? 1 : 0);
	}
	if (!found) n += (size_t)snprintf(out + n, sizeof out - n, "%s\n", line);
	free(data);
	return zoo_set(zh, path, out, (int)n, -1);
}

/* the fires of a runs file after `after` (ms), how many there were, and how many of them were
 * not at a multiple of every_ms (in *off) */
static int fires_since(const char *path, long long after, long long every_ms, int *off)
{
	char *t = tsup_slurp(path);
	long long seen[512];
	int n = 0;
	*off = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		if (sscanf(l, "%lld", &f) != 1 || f <= after) continue;
		int k = 0;
		while (k < n && seen[k] != f) k++;
		if (k < n || n == 512) continue;
		seen[n++] = f;
		*off += f % every_ms != 0;
	}
	free(t);
	return n;
}

int main(void)
{
	tlib_init(180);
	struct tzkup u;
	tzkup_start(&u, 200, "t52", 2000);
	char sh[300], out_cfg[300], out_oth[300], out_stk[300], jobs[4096];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out_cfg, sizeof out_cfg, "%s/cfg", tlib_tmpdir());
	snprintf(out_oth, sizeof out_oth, "%s/other", tlib_tmpdir());
	snprintf(out_stk, sizeof out_stk, "%s/stuck", tlib_tmpdir());
	zhandle_t *zh = u.zh;

	/* a foreign client holds job stuck's election node and will never shard */
	zhandle_t *fake = tzk_connect(u.connect, 10000, NULL, 10000);
	if (!fake) BAIL_OUT("cannot connect");
	const char *dirs[] = { "/t52", "/t52/stuck", "/t52/stuck/leader", "/t52/stuck/leader/election",
		               "/t52/stuck/leader/failover", "/t52/stuck/leader/failover/alive" };
	for (size_t k = 0; k < 6; k++) zoo_create(fake, dirs[k], "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	is_int(zoo_create(fake, "/t52/stuck/leader/election/instance", "10.9.9.9@-@1", 12, &ZOO_OPEN_ACL_UNSAFE,
	                  ZOO_EPHEMERAL, NULL, 0), ZOK, "a foreign client holds stuck's leader node");
	/* as an ejob instance would (an ElasticJob leader is never deposed: t/68) */
	is_int(zoo_create(fake, "/t52/stuck/leader/failover/alive/10.9.9.9@-@1", "", 0, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL,
	                  NULL, 0), ZOK, "  and says it is an ejob instance (leader/failover/alive/{id})");

	snprintf(jobs, sizeof jobs,
	         "  cfg:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 3\n"
	         "    failover: true\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
	         "  other:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
	         "  stuck:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out_cfg, sh, out_oth, sh, out_stk, sh);
	struct tsup a;
	tzkup_config(&u, &a, "a", "workers: 3", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_registered(&u, "cfg", a.id, 0, 15000), "registered");
	ok(tsup_wait_lines(out_oth, " 0", 1, 15000), "job other fires");

	/* ---- the stuck leader ---- */
	ok(tsup_wait_log(&a, "no assignment after", 1, 12000), "a fire of stuck gives up waiting for a leader that never shards");
	char *log = tsup_log_text(&a);
	const char *m = log ? strstr(log, "no assignment after") : NULL;
	const char *bol = m;
	while (bol && bol > log && bol[-1] != '\n') bol--;
	const char *eol = m ? strchr(m, '\n') : NULL;
	double waited = m ? strtod(m + strlen("no assignment after "), NULL) : 0;
	ok(bol && !strncmp(strstr(bol, "job "), "job stuck: fire", 15), "it is stuck's fire, and only stuck's");
	ok(waited >= 3.9 && waited < 6.0, "after twice the 2 s session timeout (%.1fs)", waited);
	ok(m && eol && memmem(m, (size_t)(eol - m), "deposing the leader", 19), "and deposes the leader");
	free(log);
	ok(tzkup_wait_leader(&u, "stuck", a.id, 5000), "the supervisor is elected instead");
	ok(tsup_wait_lines(out_stk, " 0", 2, 8000), "and stuck's item runs");
	tzk_close(fake);

	/* ---- cron change in the node ---- */
	usleep(1500000);
	is_int(tsup_count_lines(out_cfg, " "), 0, "cfg does not fire with the file's cron");
	is_int(set_line(zh, "/t52/cfg/config", "cron", "cron: '* * * * * ?'"), ZOK, "cron set to every second in the node");
	ok(tsup_wait_lines(out_cfg, " ", 1, 5000), "the supervisor reschedules: cfg fires");
	long long t0 = now_ms();
	usleep(3500000);
	int exact = 0;
	int nf = tsup_fires_exact(out_cfg, t0, 3, NULL, &exact);
	ok(nf >= 2 && exact, "cfg fires every second: %d fires, items 0-2 each exactly once", nf);

	/* ---- shardingTotalCount change ---- */
	is_int(set_line(zh, "/t52/cfg/config", "shardingTotalCount", "shardingTotalCount: 5"), ZOK,
	       "shardingTotalCount set to 5 in the node");
	ok(tzkup_wait_owned(&u, "cfg", 5, a.id, 5, 5000), "the job reshards to 5 items");
	usleep(1200000);
	t0 = now_ms();
	usleep(3500000);
	nf = tsup_fires_exact(out_cfg, t0, 5, NULL, &exact);
	ok(nf >= 2 && exact, "then fires items 0-4, each exactly once per fire (%d fires)", nf);

	/* ---- garbage in the config node ---- */
	int oth0 = tsup_count_lines(out_oth, " ");
	int bad0 = tsup_log_count(&a, "the config node /t52/cfg/config is not valid");
	is_int(zoo_set(zh, "/t52/cfg/config", "jobName: cfg\ncron: [unclosed\n", 28, -1), ZOK, "bad YAML written");
	ok(tsup_wait_log(&a, "the config node /t52/cfg/config is not valid", bad0 + 1, 5000),
	   "a log line names the node");
	/* a cron Quartz refuses: ElasticJob keeps its trigger and takes the rest of the node at the
	 * next fire; so does ejob (issue 24): the cron in force stays, the new item count is taken */
	char good[4096];
	snprintf(good, sizeof good,
	         "cron: 61 * * * * ?\njobName: cfg\nprops:\n  ejob.type: script\n  script.command.line: /usr/bin/env OUT=%s %s\n"
	         "shardingTotalCount: 4\n", out_cfg, sh);
	is_int(zoo_set(zh, "/t52/cfg/config", good, (int)strlen(good), -1), ZOK, "a cron with second 61 written, and 4 items");
	ok(tsup_wait_log(&a, "cron: seconds: value 61 out of range 0-59; the rest of the node is taken", 1, 5000),
	   "an error names the node, the cron and the problem");
	ok(tzkup_wait_owned(&u, "cfg", 4, a.id, 4, 5000), "the rest of the node is taken: the job reshards to 4 items");
	static const char bin[] = "\x00\xff\xfe garbage \x01\x02";
	is_int(zoo_set(zh, "/t52/cfg/config", bin, sizeof bin - 1, -1), ZOK, "binary garbage written");
	ok(tsup_wait_log(&a, "the config node /t52/cfg/config is not valid", bad0 + 2, 5000), "refused whole");
	usleep(1200000);
	t0 = now_ms();
	usleep(3500000);
	nf = tsup_fires_exact(out_cfg, t0, 4, NULL, &exact);
	ok(nf >= 2 && exact, "cfg goes on with what it knew: every second (the cron kept), 4 items (%d fires)", nf);
	ok(tsup_count_lines(out_oth, " ") >= oth0 + 2, "job other kept firing (%d runs)", tsup_count_lines(out_oth, " ") - oth0);
	ok(tsup_alive(a.pid), "the supervisor is alive");

	/* ---- deleted, then written again ---- */
	is_int(zoo_delete(zh, "/t52/cfg/config", -1), ZOK, "config node deleted");
	ok(tsup_wait_log(&a, "the config node /t52/cfg/config was deleted", 1, 5000), "logged");
	snprintf(good, sizeof good,
	         "cron: 0/2 * * * * ?\nfailover: true\njobName: cfg\nprops:\n  ejob.type: script\n"
	         "  script.command.line: /usr/bin/env OUT=%s %s\nshardingTotalCount: 5\n", out_cfg, sh);
	is_int(zoo_create(zh, "/t52/cfg/config", good, (int)strlen(good), &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK,
	       "written again, cron every 2 s");
	/* taken: checked below, once it has fired every 2 s for a while */
	long long rewritten = now_ms();

	/* ---- failover: false clears ---- */
	zoo_create(zh, "/t52/cfg/leader/failover/items/4", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	zoo_create(zh, "/t52/cfg/sharding/4/failovering", "10.9.9.9@-@1", 12, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	is_int(set_line(zh, "/t52/cfg/config", "failover", "failover: false"), ZOK, "failover set to false");
	ok(tzk_wait_exists(zh, "/t52/cfg/leader/failover/items/4", 0, 5000), "the leader clears the failover queue");
	ok(tzk_wait_exists(zh, "/t52/cfg/sharding/4/failovering", 0, 3000), "and the items' failovering nodes");

	/* ---- garbage in sharding/0/instance ---- */
	/* as a writer of assignments commits one (ejob's leader or ElasticJob's): the item nodes, the
	 * sharding node (a new epoch) and the resharding flag cleared, in one multi; once the reshard
	 * to 5 items (the node written again) has cleared its flag */
	ok(tzk_wait_exists(zh, "/t52/cfg/leader/sharding/necessary", 0, 5000), "the reshard to 5 items is done");
	zoo_op_t ops[4];
	zoo_op_result_t res[4];
	zoo_create_op_init(&ops[0], "/t52/cfg/leader/sharding/necessary", "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	zoo_set_op_init(&ops[1], "/t52/cfg/sharding/0/instance", "zz\x01junk", 7, -1, NULL);
	zoo_set_op_init(&ops[2], "/t52/cfg/sharding", "", 0, -1, NULL);
	zoo_delete_op_init(&ops[3], "/t52/cfg/leader/sharding/necessary", -1);
	is_int(zoo_multi(zh, 4, ops, res), ZOK, "garbage committed in sharding/0/instance, as a sharding commits");
	ok(tsup_wait_log(&a, "/t52/cfg/sharding/0/instance holds 'zz?junk'", 1, 5000),
	   "a log line names the node and shows the bytes");
	ok(tzkup_wait_owned(&u, "cfg", 5, a.id, 5, 8000), "the leader reshards at the next fire");
	char *owner = NULL;
	const char *id = a.id;
	tzk_get(zh, "/t52/cfg/sharding/0/instance", &owner, NULL);
	is_str(owner, id, "sharding/0/instance is repaired");
	free(owner);

	/* ---- garbage under instances/ ---- */
	uint64_t e0 = tzkup_epoch(&u, "cfg");
	is_int(zoo_create(zh, "/t52/cfg/instances/garbage", "\x01\x02", 2, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK,
	       "instances/garbage created");
	ok(tsup_wait_log(&a, "/t52/cfg/instances/garbage is not an instance id", 1, 8000),
	   "the leader names it and leaves it out");
	ok(tzkup_wait_epoch(&u, "cfg", e0, 8000) && tzkup_wait_owned(&u, "cfg", 5, id, 5, 100),
	   "the leader reshards: every item is still here");
	zoo_delete(zh, "/t52/cfg/instances/garbage", -1);

	/* ---- an instance node deleted: job other shuts down here ---- */
	char p[200];
	snprintf(p, sizeof p, "/t52/other/instances/%s", id);
	is_int(zoo_delete(zh, p, -1), ZOK, "other's instance node deleted");
	ok(tsup_wait_log(&a, "job other: its instance node", 1, 5000), "the supervisor shuts job other down");
	usleep(1500000);
	int oth1 = tsup_count_lines(out_oth, " ");
	int cfg1 = tsup_count_lines(out_cfg, " ");
	usleep(3000000);
	is_int(tsup_count_lines(out_oth, " "), oth1, "other fires no more");
	ok(tsup_count_lines(out_cfg, " ") > cfg1, "cfg keeps firing");
	int off = 0, nf2 = fires_since(out_cfg, rewritten + 1000, 2000, &off);
	ok(nf2 >= 2 && !off, "the config node written again was taken: cfg fires every 2 s since (%d fires, %d off it)",
	   nf2, off);
	is_int(tzk_get(zh, p, NULL, NULL), ZNONODE, "and other's instance node stays gone");

	ok(tsup_alive(a.pid), "the supervisor is still running");
	int st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "it stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
