/* t/91-ej-mixed-catchup.c: a catch-up in a mixed cluster stands for every missed fire at once.
 *
 * Two real ElasticJob-Lite 3.0.4 instances (t/lib/tej: the first leads) and two ejob
 * supervisors share a 6-item job firing every 3 s (failover on; each run takes 2 s). The second
 * ElasticJob instance is killed (-9) while its items run; its session (5.3 s) ends shortly before
 * a fire (F2). ElasticJob's leader takes the crashed item over and runs it across F2, so its F2
 * trigger misfires and nobody shards until F3: F2 runs nowhere on ElasticJob's side, and ejob's
 * F2 waits for the reshard, runs after it with the new assignment, and F3 is ejob's catch-up
 * (one for the missed fire: it came while F2 still ran).
 *
 * ElasticJob catches up with its misfire flags: its leader's misfired F2 trigger created
 * sharding/{i}/misfire on the items it owned then, and the reshard gave those items to ejob.
 * ejob ran such an item for F2, for its catch-up (F3), and once more for the flag (whose fire
 * the catch-up had stood for), then again each time that extra run spilled into the next fire:
 * "3 runs more" on today's code. The test counts, per fire and per item, the runs that stand for
 * it (ejob's history names the fires of each run; an ElasticJob run counts for the period it
 * started in), from F2 on: ejob's items exactly once each, and no run more; ElasticJob's items
 * once in each fire after F2. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tej.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

#define ITEMS 6
#define PERIOD_MS 3000
#define SESSION_MS 5300   /* expires ~0.4 s before a fire: the failover run spans it */
#define NS "t91"
#define JOB "mix"
#define CRON "0/3 * * * * ?"

static const char job_sh[] =
    "#!/bin/sh\n"
    "# the sharding context JSON is the last argument, on both sides\n"
    "for ctx; do :; done\n"
    "item=${ctx#*\\\"shardingItem\\\":}; item=${item%%%%[,\\}]*}\n"
    "task=${ctx#*\\\"taskId\\\":\\\"}; task=${task%%%%\\\"*}\n"
    "echo \"$(date +%%s%%N) $item ${EJOB_FIRE_ID:-0} $task\" >> %s/runs\n"
    "sleep 2\n";

static zhandle_t *zh;

static int instances(void)
{
	struct String_vector v = { 0 };
	if (zoo_get_children(zh, "/" NS "/" JOB "/instances", 0, &v) != ZOK) return -1;
	int n = v.count;
	deallocate_String_vector(&v);
	return n;
}

struct run {
	long long start_ms, fire;   /* fire: ejob's fire id (0: an ElasticJob run) */
	int item;
	char who[64];               /* the instance (from the taskId) */
};

static int read_runs(const char *path, struct run *r, int max)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l && n < max; l = strtok(NULL, "\n")) {
		long long ns, fire;
		int item;
		char task[200];
		if (sscanf(l, "%lld %d %lld %199s", &ns, &item, &fire, task) != 4) continue;
		const char *w = strstr(task, "@-@READY@-@");
		r[n].start_ms = ns / 1000000;
		r[n].fire = fire;
		r[n].item = item;
		snprintf(r[n].who, sizeof r[n].who, "%s", w ? w + 11 : "?");
		n++;
	}
	free(t);
	return n;
}

int main(void)
{
	tlib_init(240);
	const char *run = tej_launcher();
	if (!run) {
		struct tej none;
		ok(tej_start(&none, "none", "", "", "", "", 0, 0, "", 0, NULL, NULL) == 0,
		   "ElasticJob-Lite 3.0.4's launcher is there (this test needs the real ElasticJob)");
		return done_testing();
	}
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200, .max_session_ms = 10000 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	zh = tzk_connect(zk.connect, 10000, NULL, 10000);
	if (!zh) BAIL_OUT("cannot connect to ZooKeeper");
	char sh[600], runs[600], cmd[700];
	snprintf(runs, sizeof runs, "%s/runs", tlib_tmpdir());
	char body[1024];
	snprintf(body, sizeof body, job_sh, tlib_tmpdir());
	tlib_script(sh, sizeof sh, "job.sh", body);
	snprintf(cmd, sizeof cmd, "%s", sh);

	/* ElasticJob first: it publishes the config and leads */
	struct tej ej1, ej2;
	const char *o1[] = { "ip=127.0.0.11", NULL }, *o2[] = { "ip=127.0.0.12", NULL };
	if (tej_start(&ej1, "ej1", zk.connect, NS, JOB, CRON, ITEMS, 1, cmd, SESSION_MS, NULL, o1) < 0)
		BAIL_OUT("cannot start ElasticJob instance ej1");
	if (tej_start(&ej2, "ej2", zk.connect, NS, JOB, CRON, ITEMS, 1, cmd, SESSION_MS, NULL, o2) < 0)
		BAIL_OUT("cannot start ElasticJob instance ej2");
	char yaml[2048];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"%s\", namespace: " NS ", sessionTimeoutMilliseconds: %d}\n"
	         "supervisor: {workers: 4, attachSocket: \"@SOCK@\", history: {file: \"@DIR@/history.jsonl\"}}\n"
	         "jobs:\n  " JOB ":\n    type: script\n    cron: \"" CRON "\"\n    shardingTotalCount: %d\n"
	         "    failover: true\n    overwrite: false\n    props: {script.command.line: \"%s\"}\n",
	         zk.connect, SESSION_MS, ITEMS, cmd);
	static struct tsup s[2];
	const char *ips[2] = { "127.0.0.2", "127.0.0.3" };
	for (int k = 0; k < 2; k++) {
		char name[8];
		snprintf(name, sizeof name, "s%d", k);
		tsup_config(&s[k], name, yaml);
		const char *args[] = { "--ip", ips[k], NULL };
		if (tsup_start(&s[k], args) <= 0) BAIL_OUT("cannot start supervisor %d", k);
	}
	uint64_t end = tlib_now_ms() + 30000;
	while (instances() != 4 && tlib_now_ms() < end) usleep(100000);
	is_int(instances(), 4, "two ElasticJob instances and two ejob supervisors on one job");

	/* steady: a fire whose 6 items all ran, after everyone is there */
	long long joined = tlib_wall_ns() / 1000000;
	end = tlib_now_ms() + 30000;
	int steady = 0;
	while (!steady && tlib_now_ms() < end) {
		struct run r[512];
		int n = read_runs(runs, r, 512);
		for (int a = 0; a < n && !steady; a++) {
			long long f = r[a].start_ms / PERIOD_MS;
			int seen[ITEMS] = { 0 }, all = 1;
			if (r[a].start_ms < joined + PERIOD_MS) continue;
			for (int b = 0; b < n; b++)
				if (r[b].start_ms / PERIOD_MS == f && r[b].item >= 0 && r[b].item < ITEMS) seen[r[b].item]++;
			for (int i = 0; i < ITEMS; i++) all &= seen[i] == 1;
			steady = all;
		}
		usleep(200000);
	}
	ok(steady, "steady: a fire runs each of the 6 items once, on both sides");

	/* kill ej2 while its items of a fire run */
	long long now = tlib_wall_ns() / 1000000;
	long long at = (now / PERIOD_MS + 1) * PERIOD_MS + 400;
	usleep((useconds_t)((at - now) * 1000));
	tej_kill(&ej2);
	long long killed = tlib_wall_ns() / 1000000;
	end = tlib_now_ms() + 20000;
	while (instances() != 3 && tlib_now_ms() < end) usleep(50000);
	long long expired = tlib_wall_ns() / 1000000;
	is_int(instances(), 3, "its session expires (%lld ms after the kill)", expired - killed);
	/* the fire after the expiry runs nowhere, its catch-up at the next one; then a few more */
	usleep(8u * PERIOD_MS * 1000u);
	long long upto = tlib_wall_ns() / 1000000;

	/* who owns what after the reshard */
	char owner[ITEMS][64];
	for (int i = 0; i < ITEMS; i++) {
		char p[128];
		int len = (int)sizeof owner[i] - 1;
		snprintf(p, sizeof p, "/" NS "/" JOB "/sharding/%d/instance", i);
		if (zoo_get(zh, p, 0, owner[i], &len, NULL) != ZOK || len < 0) len = 0;
		owner[i][len] = '\0';
	}
	/* per fire from the first after the expiry (F2) on, per item: the runs that stand for it */
	long long f2 = (expired / PERIOD_MS + 1) * PERIOD_MS;
	enum { MAXF = 16 };
	/* the fires counted: those whose runs (a catch-up comes a run later) are over by the end */
	int NF = (int)((upto - 2 * PERIOD_MS - f2) / PERIOD_MS);
	if (NF > MAXF) NF = MAXF;
	if (NF < 1) NF = 1;
	int cnt[MAXF][ITEMS] = { { 0 } }, extra[ITEMS] = { 0 }, ej_item[ITEMS] = { 0 };
	for (int i = 0; i < ITEMS; i++) ej_item[i] = !strcmp(owner[i], ej1.id);
	for (int k = 0; k < 2; k++) {
		char p[700];
		snprintf(p, sizeof p, "%s/history.jsonl", s[k].dir);
		char *t = tsup_slurp(p);
		for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
			char item[16], fin[8], start[40];
			if (!tlib_json_field(l, "item", item, sizeof item) || !tlib_json_field(l, "final", fin, sizeof fin) ||
			    strcmp(fin, "true") || !tlib_json_field(l, "start", start, sizeof start))
				continue;
			int it = atoi(item);
			if (it < 0 || it >= ITEMS) continue;
			const char *fs = strstr(l, "\"fires\":");
			if (fs && fs[8] == '[') {
				for (const char *q = fs + 9; *q && *q != ']';) {
					char *e;
					long long f = strtoll(q, &e, 10);
					if (e == q) break;
					if (f >= f2 && f < f2 + NF * PERIOD_MS && (f - f2) % PERIOD_MS == 0) cnt[(f - f2) / PERIOD_MS][it]++;
					q = *e == ',' ? e + 1 : e;
				}
				continue;
			}
			/* a run that names no fire (a misfire flag's, a failover's): after F2, one too many */
			char fid[32];
			if (tlib_json_field(l, "fireId", fid, sizeof fid) && atoll(fid) >= f2) extra[it]++;
		}
		free(t);
	}
	struct run r[1024];
	int n = read_runs(runs, r, 1024);
	for (int a = 0; a < n; a++) {
		if (r[a].start_ms >= killed - PERIOD_MS)
			diag("run: +%lld ms item %d fire %lld on %s", r[a].start_ms - killed, r[a].item, r[a].fire, r[a].who);
		/* ElasticJob's: its fire is the period its run started in */
		if (r[a].fire || r[a].start_ms < f2 || r[a].start_ms >= f2 + NF * PERIOD_MS || r[a].item < 0 || r[a].item >= ITEMS)
			continue;
		cnt[(r[a].start_ms - f2) / PERIOD_MS][r[a].item]++;
	}
	for (int k = 0; k < NF; k++) {
		char line[128] = "";
		for (int i = 0; i < ITEMS; i++) snprintf(line + strlen(line), sizeof line - strlen(line), " %d", cnt[k][i]);
		diag("fire %lld (F2+%d): runs per item:%s", f2 + k * PERIOD_MS, k, line);
	}
	diag("owners after the reshard: %s %s %s %s %s %s", owner[0], owner[1], owner[2], owner[3], owner[4], owner[5]);
	int ours = 0;
	for (int i = 0; i < ITEMS; i++) {
		if (ej_item[i] || !owner[i][0]) continue;
		ours++;
		char want[80] = "", got[80] = "";
		int good = extra[i] == 0;
		for (int k = 0; k < NF; k++) {
			good &= cnt[k][i] == 1;
			snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", k ? " " : "", cnt[k][i]);
			snprintf(want + strlen(want), sizeof want - strlen(want), "%s1", k ? " " : "");
		}
		ok(good, "item %d (ejob's %s): runs for each fire from the expiry on, %s where %s are due, and %d run%s more",
		   i, owner[i], got, want, extra[i], extra[i] == 1 ? "" : "s");
	}
	ok(ours >= 2, "ejob runs %d of the items after the reshard", ours);
	for (int i = 0; i < ITEMS; i++)
		if (ej_item[i])
			ok(NF >= 3 && cnt[1][i] == 1 && cnt[2][i] == 1, "item %d (ElasticJob's): once in each of the next fires (%d %d)",
			   i, cnt[1][i], cnt[2][i]);

	for (int k = 0; k < 2; k++) tsup_stop(&s[k], SIGTERM, 10000);
	tej_stop(&ej1, 10000);
	tej_stop(&ej2, 10000);
	zookeeper_close(zh);
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
