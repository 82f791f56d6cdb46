/* t/62-zk-mass-failover.c: several instances die while their items run, failover on (issue 10).
 *
 * 6 supervisors, 4 jobs of 6 items that run 1.5 s, a fire every 10 s, 2 s sessions (so that the
 * failover runs end before the next fire: a fire that finds an item still running is a misfire,
 * and its run again would look like a second failover run here). While a fire's items run,
 * the leader of the jobs and another instance are killed at once (crashed machines: supervisor,
 * workers, items). When their sessions expire, every item they were running runs elsewhere
 * exactly once, at once. Then one of the instances running an item it took over is killed while
 * it runs it (a failure during the failover): that item, and the instance's own, run elsewhere
 * exactly once again when its session expires. No item ever runs on two instances at once, the
 * cron fires after the last expiry run every item exactly once, and nothing is left queued or
 * marked running. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tclu.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

#define NSUP 6
#define NJOB 4
#define ITEMS 6
#define MAXR 4096

static const char *jobs[NJOB] = { "f0", "f1", "f2", "f3" };
static struct tclu c;
static long long killed_at[NSUP];      /* wall ns */
static long long first_kill;

static const char *se_path(const char *job, char *buf, size_t len)
{
	char p[700];
	snprintf(buf, len, "%s.se", tclu_runs(&c, job, p, sizeof p));
	return buf;
}

static int who(const char *task)
{
	for (int k = 0; k < NSUP; k++)
		if (strstr(task, c.id[k])) return k;
	return -1;
}

/* a failover (or misfire) run: its fire id is not a whole second */
static int side(long long fire) { return fire % 1000 != 0; }

/* the first failover run now running on an instance that is alive: its instance, or -1 */
static int find_taker(void)
{
	static struct tsup_rec r[MAXR];
	for (int j = 0; j < NJOB; j++) {
		char p[700];
		int n = tsup_read_recs(se_path(jobs[j], p, sizeof p), r, MAXR);
		for (int i = 0; i < n; i++) {
			if (strcmp(r[i].kind, "start") || !side(r[i].extra)) continue;
			int k = who(r[i].task), ended = 0;
			for (int x = i + 1; x < n && !ended; x++)
				ended = !strcmp(r[x].kind, "end") && r[x].item == r[i].item && r[x].extra == r[i].extra;
			if (k >= 0 && !c.dead[k] && !ended) return k;
		}
	}
	return -1;
}

struct verdict {
	int interrupted, failovers, wrong, overlaps, unfinished;
};

/* For each item of a job: every run cut by a kill (started on a killed instance, no end, before
 * its kill) is followed by exactly one failover run that started after the kill; runs never
 * overlap (a cut run lasts until its instance's kill); the last run of each item ended. */
static void judge(const char *job, struct verdict *v)
{
	static struct tsup_rec r[MAXR];
	char p[700];
	int n = tsup_read_recs(se_path(job, p, sizeof p), r, MAXR);
	for (int item = 0; item < ITEMS; item++) {
		long long st[256], en[256], fire[256];
		int k_of[256], m = 0;
		for (int i = 0; i < n && m < 256; i++) {
			if (r[i].item != item || strcmp(r[i].kind, "start")) continue;
			st[m] = r[i].ns;
			fire[m] = r[i].extra;
			k_of[m] = who(r[i].task);
			en[m] = 0;
			for (int x = i + 1; x < n && !en[m]; x++)
				if (!strcmp(r[x].kind, "end") && r[x].item == item && r[x].extra == r[i].extra &&
				    !strcmp(r[x].task, r[i].task))
					en[m] = r[x].ns;
			m++;
		}
		int cut = 0, fo = 0;
		for (int a = 0; a < m; a++) {
			int k = k_of[a];
			if (!en[a] && k >= 0 && c.dead[k] && st[a] < killed_at[k]) {
				cut++;
				en[a] = killed_at[k];
			}
			if (side(fire[a])) fo++;
		}
		v->interrupted += cut;
		v->failovers += fo;
		if (cut != fo) {
			v->wrong++;
			diag("job %s item %d: %d runs cut by a kill, %d failover runs:", job, item, cut, fo);
			for (int a = 0; a < m; a++)
				diag("  run of fire %lld on %s, %.3f s to %.3f s after the first kill", fire[a],
				     k_of[a] >= 0 ? c.id[k_of[a]] : "?", (double)(st[a] - first_kill) / 1e9,
				     en[a] ? (double)(en[a] - first_kill) / 1e9 : -1.0);
		}
		for (int a = 0; a < m; a++)
			for (int b = 0; b < m; b++) {
				if (a == b || !en[a] || !en[b]) continue;
				if (st[a] < st[b] && st[b] < en[a]) {
					v->overlaps++;
					diag("job %s item %d: a run on %s started while one on %s ran", job, item,
					     k_of[b] >= 0 ? c.id[k_of[b]] : "?", k_of[a] >= 0 ? c.id[k_of[a]] : "?");
				}
			}
		long long last = 0;
		int last_i = -1;
		for (int a = 0; a < m; a++)
			if (st[a] > last) last = st[a], last_i = a;
		if (last_i >= 0 && !en[last_i]) v->unfinished++;
	}
}

/* cron fires (whole-second ids) of a job in (after, until]: each runs every item exactly once */
static int cron_fires_exact(const char *job, long long after, long long until, int *nfires)
{
	char p[700];
	char *t = tsup_slurp(tclu_runs(&c, job, p, sizeof p));
	long long fire[256];
	int cnt[256][ITEMS], nf = 0, bad = 0;
	memset(cnt, 0, sizeof cnt);
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		int item;
		if (sscanf(l, "%lld %d", &f, &item) != 2 || f <= after || f > until || side(f) || item < 0 || item >= ITEMS)
			continue;
		int k = 0;
		while (k < nf && fire[k] != f) k++;
		if (k == nf && nf < 256) fire[nf++] = f;
		cnt[k][item]++;
	}
	free(t);
	for (int k = 0; k < nf; k++)
		for (int i = 0; i < ITEMS; i++) bad |= cnt[k][i] != 1;
	*nfires = nf;
	return !bad;
}

int main(void)
{
	tlib_init(180);
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	char body[4096] = "";
	for (int j = 0; j < NJOB; j++)
		snprintf(body + strlen(body), sizeof body - strlen(body),
		         "  %s:\n"
		         "    type: script\n"
		         "    cron: \"0/10 * * * * ?\"\n"
		         "    shardingTotalCount: %d\n"
		         "    failover: true\n"
		         "    props: {script.command.line: \"@REC@ @OUT@.%s 1.5\"}\n",
		         jobs[j], ITEMS, jobs[j]);
	if (tclu_start(&c, zk.connect, "t62", NSUP, 8, 2000, body, jobs, NJOB) < 0) BAIL_OUT("cannot start the cluster");

	/* steady: a fire after all are registered, then the kill 0.5 s into the next one */
	long long now = tlib_wall_ns() / 1000000;
	long long fire = (now / 10000 + 2) * 10000;
	usleep((useconds_t)((fire + 500 - now) * 1000));
	int l0 = tclu_leader(&c, jobs[0]);
	if (l0 < 0) l0 = 0;
	int v2 = (l0 + 2) % NSUP;
	diag("fire %lld: killing %s (the leader) and %s while their items run", fire, c.id[l0], c.id[v2]);
	/* the kill's time is taken once every process of the machine is dead: a run that started
	 * before it was cut, one that starts after it is elsewhere */
	first_kill = tlib_wall_ns();
	tclu_kill(&c, l0);
	killed_at[l0] = tlib_wall_ns();
	tclu_kill(&c, v2);
	killed_at[v2] = tlib_wall_ns();
	ok(tclu_wait_instances(&c, jobs, NJOB, NSUP - 2, 15000), "ZooKeeper expires both sessions");

	/* the first instance to run an item it took over dies while it runs it */
	int x = -1;
	uint64_t end = tlib_now_ms() + 5000;
	while ((x = find_taker()) < 0 && tlib_now_ms() < end) usleep(5000);
	ok(x >= 0, "the items of the two start elsewhere (failover)");
	if (x >= 0) {
		diag("killing %s while it runs an item it took over", c.id[x]);
		tclu_kill(&c, x);
		killed_at[x] = tlib_wall_ns();
	}
	ok(tclu_wait_instances(&c, jobs, NJOB, NSUP - 3, 15000), "its session expires too");
	long long expired = tlib_wall_ns() / 1000000;
	/* two more cron fires, to their end */
	long long until = (expired / 10000 + 2) * 10000;
	now = tlib_wall_ns() / 1000000;
	usleep((useconds_t)((until + 4000 - now) * 1000));

	struct verdict v = { 0 };
	for (int j = 0; j < NJOB; j++) judge(jobs[j], &v);
	ok(v.interrupted > 0, "the kills cut %d running items", v.interrupted);
	is_int(v.wrong, 0, "each cut run was followed by exactly one failover run (%d failover runs)", v.failovers);
	is_int(v.overlaps, 0, "no item ran on two instances at once");
	is_int(v.unfinished, 0, "every item's last run ran to its end");
	int good = 1, least = 1 << 30;
	for (int j = 0; j < NJOB; j++) {
		int nf = 0;
		good &= cron_fires_exact(jobs[j], expired, until, &nf);
		if (nf < least) least = nf;
	}
	ok(good && least >= 2, "the cron fires after the last expiry run every item exactly once (%d fires)", least);
	int stale = 0, queued = 0;
	for (int j = 0; j < NJOB; j++) {
		char p[256];
		snprintf(p, sizeof p, "/t62/%s/leader/failover/items", jobs[j]);
		struct String_vector sv = { 0, NULL };
		if (tzk_children(c.zh, p, &sv) == ZOK) queued += sv.count;
		deallocate_String_vector(&sv);
		for (int i = 0; i < ITEMS; i++) {
			snprintf(p, sizeof p, "/t62/%s/sharding/%d", jobs[j], i);
			char *kids = tzk_ls(c.zh, p, NULL);
			if (kids && (strstr(kids, "failover") || strstr(kids, "misfire"))) stale++;
			free(kids);
		}
	}
	is_int(queued, 0, "nothing is left in the failover queue");
	is_int(stale, 0, "no failover, failovering or misfire node is left");
	is_int(tclu_stop(&c), 0, "the supervisors left stop cleanly");
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
