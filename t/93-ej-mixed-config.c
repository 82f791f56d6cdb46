/* t/93-ej-mixed-config.c: one job shared by ejob supervisors and real ElasticJob-Lite 3.0.4
 * instances, with a strategy other than the default, and operators' edits of its config node
 * (issue 24).
 *
 *   - An ElasticJob instance leads a ROUND_ROBIN job; two supervisors join with a file that still
 *     says ejob's old ROUND_ROBIN_BY_NAME and overwrite: true: what they publish is ElasticJob's
 *     ROUND_ROBIN (ElasticJob threw "Cannot find sharding strategy" at every fire and ran nothing
 *     on the old name), ElasticJob's leader shards the three instances exactly as ROUND_ROBIN
 *     does (checked against shard_assign), and every item runs once per fire.
 *   - ElasticJob's leader stops: an ejob supervisor leads and reshards with ROUND_ROBIN; a new
 *     ElasticJob instance joins and gets its items from ejob's leader, and runs them.
 *   - An operator sets cron 0/7 in the node: both sides fire at seconds 0, 7, ..., 56 from then on
 *     (ejob used to refuse a node with a strategy it did not know and keep its old cron: two
 *     schedules).
 *   - ElasticJob-UI's edit of shardingTotalCount 6 -> 2 that keeps the six parameters: both sides
 *     run items 0 and 1 only, with parameters a and b (ejob used to refuse it and run 6 items).
 * Runs are read from what the job's script recorded (its sharding context, ElasticJob's JSON:
 * taskId names the instance), ejob's and ElasticJob's alike. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/coord/shard.h"
#include "t/lib/tej.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define JOB "mixed"   /* ROUND_ROBIN rotates 1 for 2 and 3 instances, 3 for 4: unlike AVG_ALLOCATION */

static char runs_path[600];

struct run {
	double t;           /* when the script started (s) */
	int item;
	char who[80];       /* the instance id, from the taskId */
	char param[32];
};

static int read_runs(struct run *r, int max)
{
	char *text = tsup_slurp(runs_path);
	int n = 0;
	for (char *l = text ? strtok(text, "\n") : NULL; l && n < max; l = strtok(NULL, "\n")) {
		long long ns;
		if (sscanf(l, "%lld", &ns) != 1) continue;
		const char *task = strstr(l, "\"taskId\":\""), *item = strstr(l, "\"shardingItem\":");
		if (!task || !item) continue;
		task += 10;
		/* {job}@-@{items}@-@READY@-@{ip}@-@{pid} */
		const char *ready = strstr(task, "@-@READY@-@"), *end = strchr(task, '"');
		if (!ready || !end || ready > end) continue;
		ready += 11;
		snprintf(r[n].who, sizeof r[n].who, "%.*s", (int)(end - ready), ready);
		r[n].item = atoi(item + 15);
		r[n].param[0] = 0;
		const char *p = strstr(l, "\"shardingParameter\":\"");
		if (p) sscanf(p + 21, "%31[^\"]", r[n].param);
		r[n].t = (double)ns / 1e9;
		n++;
	}
	free(text);
	return n;
}

/* The owners ZooKeeper holds equal ROUND_ROBIN's for these instances: 1, else 0 (said). */
static int rr_is(const struct tzkup *u, const char *const *ids, size_t n, int total)
{
	uint32_t owner[16];
	if (shard_assign(CONF_STRATEGY_ROUND_ROBIN, JOB, 0, ids, n, (uint32_t)total, owner) < 0) return 0;
	int same = 1;
	for (int i = 0; i < total; i++) {
		char *d = NULL;
		tzk_get(u->zh, tzkup_path(u, JOB, "sharding/%d/instance", i), &d, NULL);
		if (!d || strcmp(d, ids[owner[i]])) {
			diag("item %d: %s, ROUND_ROBIN says %s", i, d ? d : "(none)", ids[owner[i]]);
			same = 0;
		}
		free(d);
	}
	return same;
}

static int wait_rr(const struct tzkup *u, const char *const *ids, size_t n, int total, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	while (tlib_now_ms() < end) {
		int same = 1;
		uint32_t owner[16];
		shard_assign(CONF_STRATEGY_ROUND_ROBIN, JOB, 0, ids, n, (uint32_t)total, owner);
		for (int i = 0; i < total && same; i++) {
			char *d = NULL;
			tzk_get(u->zh, tzkup_path(u, JOB, "sharding/%d/instance", i), &d, NULL);
			same = d && !strcmp(d, ids[owner[i]]);
			free(d);
		}
		if (same && tzk_exists(u->zh, tzkup_path(u, JOB, "leader/sharding/necessary"), NULL) == ZNONODE) return 1;
		usleep(100000);
	}
	return rr_is(u, ids, n, total);
}

/* Runs that started in [from, to): per item how many, on whom (the last), and at which second. */
static void window(double from, double to, int cnt[16], char who[16][80], int *off7, char param[16][32])
{
	static struct run r[20000];
	int n = read_runs(r, 20000);
	memset(cnt, 0, 16 * sizeof *cnt);
	if (off7) *off7 = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].t < from || r[i].t >= to || r[i].item < 0 || r[i].item >= 16) continue;
		cnt[r[i].item]++;
		snprintf(who[r[i].item], 80, "%s", r[i].who);
		if (param) snprintf(param[r[i].item], 32, "%s", r[i].param);
		/* a run of a 0/7 fire (seconds 0, 7, ... 56 of each minute) starts within a second of it */
		if (off7 && ((long long)r[i].t % 60) % 7 != 0) (*off7)++;
	}
}

static double now_s(void)
{
	return (double)tlib_wall_ns() / 1e9;
}

int main(void)
{
	tlib_init(240);
	char sh[600], cmdline[700], jobs[2048];
	snprintf(runs_path, sizeof runs_path, "%s/runs", tlib_tmpdir());
	char rec[1024];
	snprintf(rec, sizeof rec, "#!/bin/sh\necho \"$(date +%%s%%N) $*\" >> %s\n", runs_path);
	tlib_script(sh, sizeof sh, "rec.sh", rec);
	snprintf(cmdline, sizeof cmdline, "%s", sh);
	struct tzkup u;
	tzkup_start(&u, 200, "t93", 4000);

	/* ---- ElasticJob leads a ROUND_ROBIN job ---- */
	struct tej a, b;
	const char *const ej_a[] = { "ip=127.0.0.5", "overwrite=true", "shardingItemParameters=0=a,1=b,2=c,3=d,4=e,5=f", NULL };
	if (tej_start(&a, "a", u.connect, "t93", JOB, "0/2 * * * * ?", 6, 0, cmdline, 4000, "ROUND_ROBIN", ej_a) < 0)
		BAIL_OUT("cannot start ElasticJob (see above)");
	ok(tzkup_wait_leader(&u, JOB, a.id, 20000), "an ElasticJob instance leads the job, ROUND_ROBIN");
	/* ejob's file still says the old name; overwrite: true publishes it */
	snprintf(jobs, sizeof jobs,
	         "  " JOB ":\n    type: script\n    cron: \"0/2 * * * * ?\"\n    shardingTotalCount: 6\n"
	         "    shardingItemParameters: \"0=a,1=b,2=c,3=d,4=e,5=f\"\n"
	         "    jobShardingStrategyType: ROUND_ROBIN_BY_NAME\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s\"}\n", cmdline);
	struct tsup s[2];
	tzkup_run_n(&u, s, 2, "workers: 4", jobs);
	char *node = NULL;
	ok(tzkup_wait_registered(&u, JOB, s[0].id, 0, 15000) && tzkup_wait_registered(&u, JOB, s[1].id, 0, 15000),
	   "two ejob supervisors join, their file saying ROUND_ROBIN_BY_NAME (overwrite: true)");
	tzk_get(u.zh, tzkup_path(&u, JOB, "config"), &node, NULL);
	ok(node && strstr(node, "\njobShardingStrategyType: ROUND_ROBIN\n") && !strstr(node, "_BY_NAME"),
	   "  what they publish is ElasticJob's ROUND_ROBIN");
	free(node);
	const char *three[] = { a.id, s[0].id, s[1].id };
	ok(wait_rr(&u, three, 3, 6, 15000), "ElasticJob's leader shards the three exactly as ROUND_ROBIN does");
	usleep(2500000);
	double from = now_s();
	usleep(6100000);
	int cnt[16];
	char who[16][80], param[16][32];
	window(from, now_s() - 1.5, cnt, who, NULL, param);
	int each = 1;
	for (int i = 0; i < 6; i++) each &= cnt[i] >= 2 && cnt[i] <= 3;
	ok(each, "  and every item runs once per fire on both sides (runs: %d %d %d %d %d %d)", cnt[0], cnt[1], cnt[2],
	   cnt[3], cnt[4], cnt[5]);
	char *ejlog = tsup_slurp(a.log);
	ok(ejlog && !strstr(ejlog, "Cannot find sharding strategy"), "  ElasticJob never fails on the strategy");
	free(ejlog);

	/* ---- ElasticJob's leader stops; ejob leads; another ElasticJob instance joins ---- */
	tej_stop(&a, 15000);
	const char *two[] = { s[0].id, s[1].id };
	ok(wait_rr(&u, two, 2, 6, 20000), "ElasticJob's leader stops: ejob's leader reshards with ROUND_ROBIN");
	const char *const ej_b[] = { "ip=127.0.0.6", NULL };
	if (tej_start(&b, "b", u.connect, "t93", JOB, "0/2 * * * * ?", 6, 0, cmdline, 4000, "ROUND_ROBIN", ej_b) < 0)
		BAIL_OUT("cannot start ElasticJob (see above)");
	const char *three2[] = { b.id, s[0].id, s[1].id };
	ok(wait_rr(&u, three2, 3, 6, 20000), "an ElasticJob instance joins: ejob's leader shards the three as ROUND_ROBIN");
	usleep(2500000);
	from = now_s();
	usleep(6100000);
	window(from, now_s() - 1.5, cnt, who, NULL, param);
	int bruns = 0;
	each = 1;
	for (int i = 0; i < 6; i++) {
		each &= cnt[i] >= 2 && cnt[i] <= 3;
		bruns += strcmp(who[i], b.id) == 0;
	}
	ok(each && bruns == 2, "  every item runs once per fire, ElasticJob's two among them (%d)", bruns);

	/* ---- an operator sets cron 0/7 in the node (as ElasticJob-UI writes it: ElasticJob's
	 * strategy name, whatever was there) ---- */
	char *n0 = NULL;
	tzk_get(u.zh, tzkup_path(&u, JOB, "config"), &n0, NULL);
	char *c = n0 ? strstr(n0, "cron: 0/2 * * * * ?") : NULL;
	if (c) c[8] = '7';
	char edit[4096] = "";
	const char *st = n0 ? strstr(n0, "jobShardingStrategyType: ") : NULL;
	if (st) {
		const char *eol = strchr(st, '\n');
		snprintf(edit, sizeof edit, "%.*sjobShardingStrategyType: ROUND_ROBIN%s", (int)(st - n0), n0, eol ? eol : "");
	}
	is_int(*edit ? zoo_set(u.zh, tzkup_path(&u, JOB, "config"), edit, (int)strlen(edit), -1) : -1, ZOK,
	       "an operator sets cron 0/7 in the config node (jobShardingStrategyType: ROUND_ROBIN)");
	free(n0);
	usleep(3000000);
	from = now_s();
	usleep(15000000);
	int off7;
	window(from, now_s() - 1.5, cnt, who, &off7, NULL);
	int total = 0;
	for (int i = 0; i < 6; i++) total += cnt[i];
	int ejr = 0;
	for (int i = 0; i < 6; i++) ejr += cnt[i] && !strcmp(who[i], b.id);
	ok(off7 == 0 && total >= 12 && ejr == 2, "both sides fire on 0/7 only (seconds 0, 7, ..., 56): %d runs, %d off "
	   "those marks, ElasticJob's items among them", total, off7);

	/* ---- ElasticJob-UI lowers shardingTotalCount to 2 and keeps the six parameters ---- */
	tzk_get(u.zh, tzkup_path(&u, JOB, "config"), &n0, NULL);
	c = n0 ? strstr(n0, "shardingTotalCount: 6") : NULL;
	if (c) c[20] = '2';
	char *cr = n0 ? strstr(n0, "cron: 0/7 * * * * ?") : NULL;
	if (cr) cr[8] = '2';
	is_int(n0 ? zoo_set(u.zh, tzkup_path(&u, JOB, "config"), n0, (int)strlen(n0), -1) : -1, ZOK,
	       "shardingTotalCount 6 -> 2 (cron 0/2), the parameters of six items kept, as ElasticJob-UI leaves them");
	free(n0);
	ok(tsup_wait_log(&s[0], "item 2 is out of range (shardingTotalCount is 2, so items are 0-1): never read", 1, 5000),
	   "  ejob takes it, with a warning for the parameters");
	usleep(4500000);
	from = now_s();
	usleep(6100000);
	window(from, now_s() - 1.5, cnt, who, NULL, param);
	int rest = 0;
	for (int i = 2; i < 16; i++) rest += cnt[i];
	ok(cnt[0] >= 2 && cnt[1] >= 2 && rest == 0 && !strcmp(param[0], "a") && !strcmp(param[1], "b"),
	   "  both sides run items 0 and 1 only, with parameters a and b (runs %d %d, others %d)", cnt[0], cnt[1], rest);

	tej_stop(&b, 15000);
	for (int i = 0; i < 2; i++) tsup_stop(&s[i], SIGTERM, 15000);
	tzkup_end(&u);
	return done_testing();
}
