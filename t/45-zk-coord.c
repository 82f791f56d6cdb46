/* t/45-zk-coord.c: two real supervisors ("hosts" 127.0.0.1 and 127.0.0.2) sharing a job through
 * a real ZooKeeper 3.8 server:
 *   - the layout, node by node, read back with the plain ZooKeeper client: job type, config
 *     node, servers, instances with ElasticJob's data, the leader, sharding/{i}/instance as
 *     AVG_ALLOCATION gives it, completed nodes;
 *   - once both run, every fire runs each item exactly once across the two, with the epoch the
 *     items see equal to the sharding node's mzxid;
 *   - one leaves (SIGTERM): the other reshards and runs all items, none twice in a fire. */
#include <inttypes.h>
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

/* data of a node (malloc'd; NULL if none), its stat and the return code */
static char *zget(zhandle_t *zh, const char *path, struct Stat *st, int *rc)
{
	char *d = NULL;
	struct Stat s;
	int r = tzk_get(zh, path, &d, &s);
	if (rc) *rc = r;
	if (st && r == ZOK) *st = s;
	if (r == ZOK && !d) d = strdup("");
	return d;
}

static const char rec_sh[] =
	"#!/bin/sh\n"
	"echo \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_EPOCH $EJOB_TASK_ID\" >> \"$OUT\"\n";

#define MAXR 4096
struct rec { int64_t fire; int item; uint64_t epoch; char task[160]; };

static int read_recs(const char *path, struct rec *r)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p && n < MAXR; p = strtok(NULL, "\n"))
		if (sscanf(p, "%" SCNd64 " %d %" SCNu64 " %159s", &r[n].fire, &r[n].item, &r[n].epoch, r[n].task) == 4) n++;
	free(t);
	return n;
}

static void config(struct tzkup *u, struct tsup *t, const char *name, const char *out)
{
	char jobs[2048];
	snprintf(jobs, sizeof jobs,
	         "  shared:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 4\n"
	         "    shardingItemParameters: \"0=a,1=b\"\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s/rec.sh\"}\n",
	         out, tlib_tmpdir());
	tzkup_config(u, t, name, "workers: 2", jobs);
}

struct have { zhandle_t *zh; const char *path; const char *want; };

static int node_is(void *arg)
{
	struct have *h = arg;
	char *d = zget(h->zh, h->path, NULL, NULL);
	int ok = d && (!h->want || !strcmp(d, h->want));
	free(d);
	if (!ok) usleep(20000);
	return ok;
}

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 500, "t45", 4000);
	char sh[600], out[600];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());

	struct tsup a, b;
	config(&u, &a, "a", out);
	config(&u, &b, "b", out);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_leader(&u, "shared", a.id, 15000), "the first supervisor leads the job");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "shared", b.id, 0, 15000), "the second registers");
	ok(tzkup_wait_owned(&u, "shared", 4, a.id, 2, 15000) && tzkup_wait_owned(&u, "shared", 4, b.id, 2, 15000),
	   "after a reshard each owns 2 of the 4 items");

	/* the layout, read with the plain client */
	zhandle_t *zh = u.zh;
	const char *ida = a.id, *idb = b.id;
	char p[256];
	char *d = zget(zh, "/t45/shared", NULL, NULL);
	is_str(d, "SCRIPT", "/t45/shared holds the job type");
	free(d);
	d = zget(zh, "/t45/shared/config", NULL, NULL);
	char cfg_head[2048];
	snprintf(cfg_head, sizeof cfg_head,
	       "cron: '* * * * * ?'\n"
	       "description: ''\n"
	       "disabled: false\n"
	       "failover: false\n"
	       "jobName: shared\n"
	       "jobParameter: ''\n"
	       "maxTimeDiffSeconds: -1\n"
	       "misfire: true\n"
	       "monitorExecution: true\n"
	       "overwrite: false\n"
	       "props:\n"
	       "  script.command.line: /usr/bin/env OUT=%s %s/rec.sh\n"
	       "  ejob.timeoutSeconds: '0'\n"
	       "  ejob.maxRetries: '0'\n"
	       "  ejob.type: script\n"
	       "reconcileIntervalMinutes: 10\n"
	       "shardingItemParameters: 0=a,1=b\n"
	       "shardingTotalCount: 4\n"
	       "staticSharding: false\n", out, tlib_tmpdir());
	is_str(d, cfg_head, "the config node is exactly as ElasticJob writes it");
	free(d);
	d = tzk_ls(zh, "/t45/shared/servers", NULL);
	is_str(d, "127.0.0.1,127.0.0.2", "servers/ has both hosts");
	free(d);
	d = zget(zh, "/t45/shared/servers/127.0.0.2", NULL, NULL);
	is_str(d, "ENABLED", "servers/127.0.0.2 is ENABLED");
	free(d);
	snprintf(p, sizeof p, "/t45/shared/instances/%s", idb);
	struct Stat st;
	d = zget(zh, p, &st, NULL);
	char want[300];
	snprintf(want, sizeof want, "jobInstanceId: %s\nserverIp: 127.0.0.2\n", idb);
	is_str(d, want, "instances/%s has ElasticJob's data", idb);
	ok(st.ephemeralOwner != 0, "and is ephemeral");
	free(d);
	d = zget(zh, "/t45/shared/leader/election/instance", &st, NULL);
	is_str(d, ida, "the leader node names the first supervisor");
	ok(st.ephemeralOwner != 0, "and is ephemeral");
	free(d);
	/* AVG_ALLOCATION over [127.0.0.2@..., 127.0.0.1@...] (descending): .2 gets 0,1; .1 gets 2,3 */
	static const int owner_b[4] = { 1, 1, 0, 0 };
	int right = 0;
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "/t45/shared/sharding/%d/instance", i);
		d = zget(zh, p, NULL, NULL);
		right += d && !strcmp(d, owner_b[i] ? idb : ida);
		free(d);
	}
	is_int(right, 4, "sharding/{0,1}/instance is the second supervisor, {2,3} the first (AVG_ALLOCATION)");
	struct Stat sst;
	d = zget(zh, "/t45/shared/sharding", &sst, NULL);
	free(d);
	snprintf(p, sizeof p, "/t45/shared/sharding/0/completed");
	struct have h = { zh, p, idb };
	ok(tlib_wait_for(node_is, &h, 5000), "sharding/0/completed names the instance that ran it");

	/* every fire after the reshard: each item once, with the epoch of the sharding node */
	usleep(3500000);   /* several fires */
	static struct rec r[MAXR];
	int n = read_recs(out, r);
	int64_t first = -1;
	for (int i = 0; i < n; i++)
		if (r[i].epoch == (uint64_t)sst.mzxid && (first < 0 || r[i].fire < first)) first = r[i].fire;
	int fires = 0, bad = 0, wrong_owner = 0, bad_epoch = 0;
	for (int64_t f = first; first >= 0; f += 1000) {
		int cnt[4] = { 0 }, any = 0;
		for (int i = 0; i < n; i++) {
			if (r[i].fire != f) continue;
			any = 1;
			if (r[i].item >= 0 && r[i].item < 4) cnt[r[i].item]++;
			if (r[i].epoch != (uint64_t)sst.mzxid) bad_epoch++;
			const char *who = owner_b[r[i].item & 3] ? idb : ida;
			if (!strstr(r[i].task, who)) wrong_owner++;
		}
		if (!any) break;
		for (int k = 0; k < 4; k++) bad += cnt[k] != 1;
		fires++;
	}
	ok(fires >= 2, "%d fires since the reshard", fires);
	is_int(bad, 0, "in each, every item ran exactly once across the two supervisors");
	is_int(wrong_owner, 0, "each on the supervisor that owns it");
	is_int(bad_epoch, 0, "with EJOB_EPOCH = the sharding node's mzxid (0x%" PRIx64 ")", (uint64_t)sst.mzxid);

	/* one leaves */
	int s = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "the second supervisor stops cleanly");
	ok(tzkup_wait_owned(&u, "shared", 4, a.id, 4, 15000), "the first reshards to all 4 items");
	snprintf(p, sizeof p, "/t45/shared/instances/%s", idb);
	int rc = 0;
	d = zget(zh, p, NULL, &rc);
	is_int(rc, ZNONODE, "the leaving instance's node is gone");
	free(d);
	usleep(2500000);
	n = read_recs(out, r);
	int dup = 0;
	for (int i = 0; i < n; i++)
		for (int k = 0; k < i; k++) dup += r[i].fire == r[k].fire && r[i].item == r[k].item;
	is_int(dup, 0, "over the whole run no item of a fire ran twice (%d runs)", n);
	s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "the first supervisor stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
