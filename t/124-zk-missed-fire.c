/* t/124-zk-missed-fire.c: fires that come while an instance is dead but its session lives.
 *
 * An instance killed between fires (nothing of it running) keeps its items in the assignment until
 * ZooKeeper ends its session; the fires that come meanwhile run its items nowhere. Failover hands
 * out only running items (ElasticJob 3.0.4's getCrashedShardingItems too), so those items of those
 * fires were lost. Now the leader hands each such item out like a crashed one, and its taker runs
 * it once, as one catch-up naming the fires it stands for (its history's "fires").
 *
 *   1. two supervisors, a job of 4 items every 2 s, failover on, sessions of 4 s: the follower is
 *      killed just after a fire completed on it (its items' last records written). Every item of
 *      every fire from that one to two fires after the reshard ran exactly once (the history,
 *      a catch-up counted for each fire it names), the missed ones as one catch-up that names
 *      them; the fire that completed before the kill did not run again.
 *   2. the same kill, for a job whose next fire comes after the session ended: nothing of it was
 *      missed, so nothing is handed out (no catch-up), and its fire before the kill ran once.
 *   3. at size: 8 supervisors, 3 killed at once between fires (the jobs' leader among them: the
 *      new leader finds owners that are not there), a job of 16 items: every item of every fire
 *      from the kill on ran exactly once.
 *   4. (first, on the two of 1) the follower frozen (SIGSTOP) just after a fire until its session
 *      ended, then let go: its catch-up for the fires meanwhile leaves out the items the leader's
 *      taker ran; every item of every fire exactly once. */
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

#define SESSION 4000
#define PERIOD 2

static long long now_ms(void)
{
	return tlib_wall_ns() / 1000000;
}

/* the fireId in sharding/{item}/last, 0 if none */
static long long last_fire(struct tclu *c, const char *job, int item)
{
	char p[256], *d = NULL;
	snprintf(p, sizeof p, "/%s/%s/sharding/%d/last", c->ns, job, item);
	long long f = 0;
	if (tzk_get(c->zh, p, &d, NULL) == ZOK && d) {
		const char *q = strstr(d, "\"fireId\":");
		if (q) f = atoll(q + 9);
	}
	free(d);
	return f;
}

/* the items of job that k owns, in owned[]; how many */
static int owned_by(struct tclu *c, const char *job, int total, int k, int *owned)
{
	int n = 0;
	for (int i = 0; i < total; i++) {
		char p[256], *d = NULL;
		snprintf(p, sizeof p, "/%s/%s/sharding/%d/instance", c->ns, job, i);
		if (tzk_get(c->zh, p, &d, NULL) == ZOK && d && !strcmp(d, c->id[k])) owned[n++] = i;
		free(d);
	}
	return n;
}

/* until every item in items[] has a last record of fire `fire` (ms) */
static int wait_records(struct tclu *c, const char *job, const int *items, int n, long long fire, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	for (;;) {
		int all = 1;
		for (int i = 0; i < n && all; i++) all = last_fire(c, job, items[i]) == fire;
		if (all) return 1;
		if (tlib_now_ms() > end) return 0;
		usleep(20000);
	}
}

/* until the history (of every supervisor) has a run of each item in items[] for fire `fire`: a
 * supervisor killed before its history's thread wrote them would lose them, not the fire */
static int wait_history(struct tclu *c, const char *job, const int *items, int n, long long fire, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	for (;;) {
		char p[700];
		char *t = tsup_slurp(tclu_history_runs(c, job, p, sizeof p));
		int have = 0;
		for (int i = 0; i < n; i++) {
			char want[64];
			snprintf(want, sizeof want, "%lld %d ", fire, items[i]);
			for (char *q = t; q && (q = strstr(q, want)); q++)
				if (q == t || q[-1] == '\n') {
					have++;
					break;
				}
		}
		free(t);
		if (have == n) return 1;
		if (tlib_now_ms() > end) return 0;
		usleep(20000);
	}
}

/* complete fires of job with id > after in the history (a catch-up counted for each fire it
 * names), until `want` of them; *exact: each ran every item once */
static int wait_exact(struct tclu *c, const char *job, long long after, int total, int want, int *exact, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	int n;
	for (;;) {
		char p[700];
		n = tsup_fires_exact(tclu_history_runs(c, job, p, sizeof p), after, total, NULL, exact);
		if (n >= want || tlib_now_ms() > end) return n;
		usleep(200000);
	}
}

/* per fire of job after `after`, how often each item ran, as diag lines */
static void say_fires(struct tclu *c, const char *job, long long after, int total)
{
	char p[700];
	char *t = tsup_slurp(tclu_history_runs(c, job, p, sizeof p));
	long long fire[64];
	static int cnt[64][64];
	int nf = 0;
	memset(cnt, 0, sizeof cnt);
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		int item;
		if (sscanf(l, "%lld %d", &f, &item) != 2 || f <= after || item < 0 || item >= total) continue;
		int k = 0;
		while (k < nf && fire[k] != f) k++;
		if (k == nf && nf < 64) fire[nf++] = f;
		if (k < 64) cnt[k][item]++;
	}
	free(t);
	for (int k = 0; k < nf; k++) {
		char line[512] = "";
		for (int i = 0; i < total; i++) snprintf(line + strlen(line), sizeof line - strlen(line), " %d", cnt[k][i]);
		diag("job %s fire %lld: runs per item:%s", job, fire[k], line);
	}
}

/* history lines of job's runs that are catch-ups of a taken item (source MISFIRE, a fire id that is
 * not a whole second) naming fire f in their "fires" */
static int catchups_naming(struct tclu *c, const char *job, long long f, int item)
{
	int n = 0;
	char want[80], fs[40], it[40];
	snprintf(want, sizeof want, "{\"job\":\"%s\",", job);
	snprintf(fs, sizeof fs, "%lld", f);
	snprintf(it, sizeof it, "\"item\":%d,", item);
	for (int k = 0; k < c->n; k++) {
		char p[700];
		snprintf(p, sizeof p, "%s/history.jsonl", c->sup[k].dir);
		char *t = tsup_slurp(p);
		for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
			const char *fid = strstr(l, "\"fireId\":"), *fires = strstr(l, "\"fires\":[");
			if (strncmp(l, want, strlen(want)) || !strstr(l, it) || !fid || !fires || !strstr(l, "\"final\":true")) continue;
			if (atoll(fid + 9) % 1000 == 0) continue;
			const char *end = strchr(fires, ']');
			const char *hit = strstr(fires, fs);
			if (hit && end && hit < end) n++;
		}
		free(t);
	}
	return n;
}

/* sleep until `ms` after the next multiple of period_s (ms): just after a fire */
static long long after_next_fire(int period_s, long long ms)
{
	long long per = period_s * 1000LL, now = now_ms();
	long long fire = (now / per + 1) * per;
	usleep((useconds_t)((fire + ms - now) * 1000));
	return fire;
}

int main(void)
{
	tlib_init(150);
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");

	/* ---- 1 and 2: two supervisors; "fast" fires every 2 s, "slow" every 6 s ---- */
	static const char body2[] =
	    "  fast:\n"
	    "    type: script\n"
	    "    cron: \"0/2 * * * * ?\"\n"
	    "    shardingTotalCount: 4\n"
	    "    failover: true\n"
	    "    props: {script.command.line: \"@REC@ @OUT@.fast\"}\n"
	    "  slow:\n"
	    "    type: script\n"
	    "    cron: \"0/6 * * * * ?\"\n"
	    "    shardingTotalCount: 4\n"
	    "    failover: true\n"
	    "    props: {script.command.line: \"@REC@ @OUT@.slow\"}\n";
	const char *jobs2[] = { "fast", "slow" };
	static struct tclu c;
	if (tclu_start(&c, zk.connect, "t123a", 2, 2, SESSION, body2, jobs2, 2) < 0) BAIL_OUT("cannot start the cluster");
	/* the follower of "fast" is the victim (the leader hands its items out); of "slow" it may lead
	 * (then the survivor, elected, finds its owner not there) */
	int lf = tclu_leader(&c, "fast");
	uint64_t until = tlib_now_ms() + 15000;
	while (lf < 0 && tlib_now_ms() < until) {
		usleep(100000);
		lf = tclu_leader(&c, "fast");
	}
	if (lf < 0) BAIL_OUT("no one leads fast");
	int victim = 1 - lf;

	/* 4 (first, on the same two): the victim frozen (SIGSTOP) just after a fire until its session
	 * ends, then let go: its items of the fires meanwhile were handed out and ran on the leader;
	 * back in a new session, its own catch-up for those fires must not run them again */
	{
		int mine[4];
		long long h0 = 0;
		for (int tries = 0; tries < 4 && !h0; tries++) {
			long long fire = after_next_fire(PERIOD, 0);
			if (owned_by(&c, "fast", 4, victim, mine) == 2 && wait_records(&c, "fast", mine, 2, fire, 1500) &&
			    wait_history(&c, "fast", mine, 2, fire, 500))
				h0 = fire;
		}
		if (!h0) BAIL_OUT("the victim did not run 2 items of a fire");
		int64_t sess = 0;
		{
			char p[256];
			struct Stat st;
			snprintf(p, sizeof p, "/t123a/fast/instances/%s", c.id[victim]);
			if (tzk_exists(c.zh, p, &st) == ZOK) sess = st.ephemeralOwner;
		}
		kill(c.sup[victim].pid, SIGSTOP);
		diag("froze %s %lld ms after fire %lld", c.id[victim], now_ms() - h0, h0);
		int gone = tclu_wait_instances(&c, jobs2, 2, 1, 3 * SESSION + 10000);
		kill(c.sup[victim].pid, SIGCONT);
		ok(gone, "ZooKeeper ends the frozen instance's session");
		int back = tclu_wait_instances(&c, jobs2, 2, 2, 20000);
		char p[256];
		struct Stat st;
		snprintf(p, sizeof p, "/t123a/fast/instances/%s", c.id[victim]);
		ok(back && tzk_exists(c.zh, p, &st) == ZOK && st.ephemeralOwner != sess,
		   "let go, it registers again in a new session");
		long long backed = now_ms();
		int ex = 0;
		int nf = wait_exact(&c, "fast", h0 - 1, 4, (int)((backed - h0) / 2000) + 3, &ex, 20000);
		ok(ex && nf > 0, "every item of every fire from %lld to two fires after it came back ran exactly once (%d fires): "
		   "its catch-up left out what the leader's taker ran", h0, nf);
		if (!ex) say_fires(&c, "fast", h0 - 1, 4);
	}

	/* a fire of both jobs (a multiple of 6 s) that ran items on the victim: it owns 2 of each */
	int of[4], os[4], nof = 0, nos = 0;
	long long f0 = 0;
	for (int tries = 0; tries < 4; tries++) {
		long long per = 6000, now = now_ms();
		long long fire = (now / per + 1) * per;
		if (fire - now < 1500) fire += per;      /* time to read the assignment before it */
		usleep((useconds_t)((fire - 1000 - now) * 1000));
		nof = owned_by(&c, "fast", 4, victim, of);
		nos = owned_by(&c, "slow", 4, victim, os);
		if (nof == 2 && nos == 2 && wait_records(&c, "fast", of, nof, fire, 3000) &&
		    wait_records(&c, "slow", os, nos, fire, 3000) && wait_history(&c, "fast", of, nof, fire, 1000) &&
		    wait_history(&c, "slow", os, nos, fire, 1000)) {
			f0 = fire;
			break;
		}
	}
	if (!f0) BAIL_OUT("the victim did not run 2 items of each job in one fire");
	/* the fire's items ended on the victim, their last records written: kill it now, between fires */
	diag("fire %lld ran items %d,%d (fast) and %d,%d (slow) on %s; killing it %lld ms after the fire", f0, of[0], of[1],
	     os[0], os[1], c.id[victim], now_ms() - f0);
	if (now_ms() - f0 > 1500) BAIL_OUT("too late to kill between fires");
	tclu_kill(&c, victim);
	long long killed = now_ms();
	ok(tclu_wait_instances(&c, jobs2, 2, 1, 3 * SESSION + 10000), "ZooKeeper ends the victim's session");
	long long expired = now_ms();
	diag("its session ended %lld ms after the kill", expired - killed);
	/* fires between the kill and the end of its session: every one of them is whole */
	int want = (int)((expired - f0) / 2000) + 3, exact = 0;
	int n = wait_exact(&c, "fast", f0 - 1, 4, want, &exact, 20000);
	ok(n >= want && exact, "fast: every item of every fire from %lld (before the kill) to two fires after the reshard "
	   "ran exactly once (%d fires)", f0, n);
	if (!exact) say_fires(&c, "fast", f0 - 1, 4);
	/* the fires between the kill and the end of the session: the victim's items as one catch-up */
	long long m1 = f0 + 2000;
	int named = catchups_naming(&c, "fast", m1, of[0]) + catchups_naming(&c, "fast", m1, of[1]);
	is_int(named, 2, "fast: items %d and %d of fire %lld (missed by the dead instance) ran as catch-ups naming it",
	       of[0], of[1], m1);

	/* 2: the slow job's next fire came after the session ended: nothing handed out, fire f0 once */
	int sexact = 0;
	n = wait_exact(&c, "slow", f0 - 1, 4, 2, &sexact, 25000);
	ok(n >= 2 && sexact, "slow: the fire before the kill and the one after the reshard each ran every item once");
	if (!sexact) say_fires(&c, "slow", f0 - 1, 4);
	int sc = 0;
	for (int i = 0; i < 4; i++) sc += catchups_naming(&c, "slow", f0, i);
	is_int(sc, 0, "slow: nothing of fire %lld ran again (its last records said it ran)", f0);
	is_int(tclu_stop(&c), 0, "the survivor stops cleanly");

	/* ---- 3: 8 supervisors, one job of 16 items, 3 killed at once (the leader among them) ---- */
	static const char body8[] =
	    "  big:\n"
	    "    type: script\n"
	    "    cron: \"0/2 * * * * ?\"\n"
	    "    shardingTotalCount: 16\n"
	    "    failover: true\n"
	    "    props: {script.command.line: \"@REC@ @OUT@.big\"}\n";
	const char *jobs8[] = { "big" };
	static struct tclu d;
	if (tclu_start(&d, zk.connect, "t123b", 8, 1, SESSION, body8, jobs8, 1) < 0) BAIL_OUT("cannot start the cluster of 8");
	/* steady: two whole fires on the 8 */
	int e8 = 0;
	long long start = now_ms();
	n = wait_exact(&d, "big", start, 16, 2, &e8, 30000);
	ok(n >= 2 && e8, "8 supervisors: steady fires run every item once");
	int lead = tclu_leader(&d, "big");
	if (lead < 0) BAIL_OUT("no leader of big");
	int kill3[3] = { lead, (lead + 3) % 8, (lead + 5) % 8 };
	long long g0 = after_next_fire(PERIOD, 0);
	int all16[16];
	for (int i = 0; i < 16; i++) all16[i] = i;
	if (!wait_history(&d, "big", all16, 16, g0, 1200)) diag("fire %lld is not whole in the history before the kill", g0);
	diag("killing %s (the leader), %s and %s %lld ms after fire %lld", d.id[kill3[0]], d.id[kill3[1]], d.id[kill3[2]],
	     now_ms() - g0, g0);
	for (int i = 0; i < 3; i++) tclu_kill(&d, kill3[i]);
	ok(tclu_wait_instances(&d, jobs8, 1, 5, 3 * SESSION + 10000), "ZooKeeper ends the 3 sessions");
	expired = now_ms();
	want = (int)((expired - g0) / 2000) + 3;
	n = wait_exact(&d, "big", g0 - 1, 16, want, &e8, 25000);
	ok(n >= want && e8, "every item of every fire from %lld (before the kill) to two after the reshard ran exactly once "
	   "on the 5 left (%d fires)", g0, n);
	if (!e8) say_fires(&d, "big", g0 - 1, 16);
	is_int(tclu_stop(&d), 0, "the 5 left stop cleanly");
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
