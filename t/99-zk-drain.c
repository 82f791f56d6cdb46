/* t/99-zk-drain.c: draining a machine. Three supervisors run two jobs (failover on) that fire
 * every 5 s: "quick", whose items take 1 s, and "long", whose items take 4 s; shutdownGraceSeconds
 * is 2. Half a second into a fire, `ejobctl drain --server 127.0.0.2` returns once that machine
 * holds nothing: its quick items finished there (ok, not cut), its long ones were stopped past
 * the grace and run once elsewhere, right after, without overlap; its instance nodes are gone while
 * its supervisor still runs, and the fires after it run every item exactly once, none there. A
 * restart brings it back (servers/{ip} ENABLED, items owned again). SIGUSR2 drains another
 * supervisor the same way. An ip no job knows is refused. The leader gives an instance on a
 * DRAINING server nothing, as ElasticJob's does. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/truns.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define PERIOD_MS 5000
#define ITEMS 6

#define MAXR 2048

/* the runs of a file (t/lib/truns.h) */
struct runs {
	int n;
	struct trun x[MAXR];
};

static void read_runs(const char *path, struct runs *o)
{
	o->n = truns_read(path, 0, 0, o->x, MAXR);
}

/* the fires after `after` up to `upto`: each item has exactly one ok run per fire that started
 * in them (a normal run, or a misfire's run again when the item still ran at its fire), and none
 * ran on host */
static int fires_clean(const struct runs *o, long long after, long long upto, const char *host, int *nfires)
{
	int good = 1, cnt[ITEMS] = { 0 };
	*nfires = (int)((upto - after) / PERIOD_MS);
	for (int k = 0; k < o->n; k++) {
		if (o->x[k].start < after + PERIOD_MS || o->x[k].start >= upto + PERIOD_MS) continue;
		if (o->x[k].item < 0 || o->x[k].item >= ITEMS) continue;
		cnt[o->x[k].item] += o->x[k].ok;
		if (strstr(o->x[k].task, host)) {
			diag("item %d ran on %s at %lld (fire %lld)", o->x[k].item, o->x[k].task, o->x[k].start, o->x[k].fire);
			good = 0;
		}
	}
	for (int i = 0; i < ITEMS; i++) {
		if (cnt[i] != *nfires) diag("item %d: %d ok runs in %d fires", i, cnt[i], *nfires);
		good &= cnt[i] == *nfires;
	}
	return good;
}

/* an instance of job on ip is in instances/ */
static int online_on(const struct tzkup *u, const char *job, const char *ip)
{
	struct String_vector v = { 0, NULL };
	int yes = 0;
	if (tzk_children(u->zh, tzkup_path(u, job, "instances"), &v) != ZOK) return -1;
	for (int i = 0; i < v.count; i++)
		yes |= !strncmp(v.data[i], ip, strlen(ip)) && !strncmp(v.data[i] + strlen(ip), "@-@", 3);
	deallocate_String_vector(&v);
	return yes;
}

int main(void)
{
	tlib_init(240);
	struct tzkup u;
	tzkup_start(&u, 200, "t99", 4000);
	char sh[600], outq[600], outl[600], jobs[4096], sup[700], *out = NULL, *err = NULL;
	tlib_script(sh, sizeof sh, "item.sh", truns_script);
	snprintf(outq, sizeof outq, "%s/quick", tlib_tmpdir());
	snprintf(outl, sizeof outl, "%s/long", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  quick:\n"
	         "    type: script\n"
	         "    cron: \"0/5 * * * * ?\"\n"
	         "    failover: true\n"
	         "    shardingTotalCount: %d\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s SECS=1 %s\"}\n"
	         "  long:\n"
	         "    type: script\n"
	         "    cron: \"0/5 * * * * ?\"\n"
	         "    failover: true\n"
	         "    shardingTotalCount: %d\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s SECS=4 %s\"}\n",
	         ITEMS, outq, sh, ITEMS, outl, sh);
	snprintf(sup, sizeof sup, "workers: 8, shutdownGraceSeconds: 2, killGraceSeconds: 2");
	struct tsup s[3];
	const char *ips[3] = { "127.0.0.1", "127.0.0.2", "127.0.0.3" };
	for (int k = 0; k < 3; k++) {
		char name[8];
		snprintf(name, sizeof name, "s%d", k);
		tzkup_config(&u, &s[k], name, sup, jobs);
		tzkup_run(&u, &s[k], ips[k]);
	}
	for (int k = 0; k < 3; k++)
		if (!tzkup_wait_registered(&u, "long", s[k].id, 0, 15000) || !tzkup_wait_registered(&u, "quick", s[k].id, 0, 15000))
			BAIL_OUT("s%d did not register", k);
	pass("three supervisors run both jobs");

	is_int(tzkup_ctl(&u, &out, &err, "drain", "--server", "127.0.0.9", NULL), 2, "drain of an ip no job knows: exit 2");
	ok(strstr(err, "no job has server 127.0.0.9") != NULL, "  naming it (%s)", err);

	/* a fire in which 127.0.0.2 runs items of both jobs */
	long long f = 0;
	for (int tries = 0; tries < 4; tries++) {
		f = truns_wait_fire(outl, PERIOD_MS, f, 15000);
		usleep(300000);
		struct runs *o = calloc(1, sizeof *o);
		read_runs(outl, o);
		int mine = 0;
		for (int k = 0; k < o->n; k++) mine += o->x[k].fire == f && strstr(o->x[k].task, "127.0.0.2@-@") != NULL;
		free(o);
		if (mine) break;
	}
	ok(f > 0, "a fire runs items on 127.0.0.2 (fire %lld)", f);
	truns_sleep_until(f + 500);
	uint64_t t0 = tlib_now_ms();
	int rc = tzkup_ctl(&u, &out, &err, "drain", "--server", "127.0.0.2", "--wait", "20", NULL);
	double took = (double)(tlib_now_ms() - t0) / 1000.0;
	is_int(rc, 0, "ejobctl drain --server 127.0.0.2: exit 0 once it holds nothing (%s%s)", out, err);
	ok(took < 6.5, "  in %.1fs: the grace (2 s) for its long items, the kill grace at most, and the hand-over", took);
	ok(strstr(out, "server 127.0.0.2 is drained") != NULL, "  saying so");
	ok(kill(s[1].pid, 0) == 0, "its supervisor still runs");
	ok(!online_on(&u, "long", "127.0.0.2") && !online_on(&u, "quick", "127.0.0.2"),
	   "  but no instance of it is in instances/ any more");
	is_str(tzkup_data(&u, tzkup_path(&u, "long", "servers/127.0.0.2")), "DRAINING", "servers/127.0.0.2 says DRAINING");
	int held = 0;
	for (int i = 0; i < ITEMS; i++) {
		const char *d = tzkup_data(&u, tzkup_path(&u, "long", "sharding/%d/running", i));
		held += !strncmp(d, "127.0.0.2@-@", 12);
	}
	is_int(held, 0, "no running node names it");

	/* two more fires, then look at the runs */
	long long g = f + 2 * PERIOD_MS;
	/* a run of those fires may start late (a misfire's run again) and take 4 s */
	truns_sleep_until(g + PERIOD_MS + 4600);
	struct runs *q = calloc(1, sizeof *q), *l = calloc(1, sizeof *l);
	read_runs(outq, q);
	read_runs(outl, l);
	int q_on_b = 0, q_cut = 0;
	for (int k = 0; k < q->n; k++)
		if (q->x[k].fire == f && strstr(q->x[k].task, "127.0.0.2@-@")) {
			q_on_b++;
			q_cut += !q->x[k].ok;
		}
	ok(q_on_b > 0 && !q_cut, "its quick items of the drained fire finished there within the grace (%d, none cut)",
	   q_on_b);
	int l_cut = 0, l_taken = 0, l_overlap = 0, l_twice = 0;
	for (int k = 0; k < l->n; k++) {
		if (l->x[k].fire != f || !strstr(l->x[k].task, "127.0.0.2@-@") || !l->x[k].cut) continue;
		l_cut++;
		int item = l->x[k].item, again = 0;
		for (int m = 0; m < l->n; m++) {
			if (l->x[m].item != item || m == k || l->x[m].start < l->x[k].start) continue;
			if (l->x[m].start < l->x[k].end) l_overlap++;
			/* the run again: not a normal run of a later fire */
			if (l->x[m].fire % PERIOD_MS && l->x[m].ok && l->x[m].start - l->x[k].end < 2500) again++;
		}
		l_taken += again == 1;
		l_twice += again > 1;
	}
	ok(l_cut > 0 && l_taken == l_cut, "its long items were stopped past the grace and each run once elsewhere right "
	   "after (%d of %d)", l_taken, l_cut);
	is_int(l_overlap + l_twice, 0, "  with no overlap and no second run");
	int nf1 = 0, nf2 = 0;
	int c1 = fires_clean(q, f, g, "127.0.0.2@-@", &nf1), c2 = fires_clean(l, f, g, "127.0.0.2@-@", &nf2);
	ok(c1 && c2 && nf1 == 2, "the %d fires after the drain ran every item of both jobs exactly once, none on 127.0.0.2",
	   nf1);
	free(q);
	free(l);

	/* a restart brings it back */
	t0 = tlib_now_ms();
	int st = tsup_stop(&s[1], SIGTERM, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && tlib_now_ms() - t0 < 1500,
	   "the drained supervisor stops at once: it holds nothing (%.1fs)", (double)(tlib_now_ms() - t0) / 1000.0);
	tzkup_run(&u, &s[1], ips[1]);
	ok(tzkup_wait_registered(&u, "long", s[1].id, 0, 15000), "started again, it registers");
	is_str(tzkup_data(&u, tzkup_path(&u, "long", "servers/127.0.0.2")), "ENABLED", "  servers/127.0.0.2 is ENABLED again");
	ok(tzkup_wait_owned(&u, "long", ITEMS, s[1].id, 2, 15000), "  and it owns its share (2 of 6 items) after the next sharding");

	/* SIGUSR2 drains 127.0.0.3 the same way */
	kill(s[2].pid, SIGUSR2);
	uint64_t end = tlib_now_ms() + 10000;
	while ((online_on(&u, "long", "127.0.0.3") || online_on(&u, "quick", "127.0.0.3")) && tlib_now_ms() < end)
		usleep(50000);
	ok(!online_on(&u, "long", "127.0.0.3") && !online_on(&u, "quick", "127.0.0.3"),
	   "SIGUSR2: the supervisor leaves every job (its instance nodes go)");
	ok(tsup_wait_log(&s[2], "drained: nothing runs or waits here any more", 1, 10000), "  and, once it holds nothing, "
	   "says so");
	ok(kill(s[2].pid, 0) == 0, "  while it keeps running");
	long long h = truns_wait_fire(outl, PERIOD_MS, truns_wall_ms(), 12000);
	truns_sleep_until(h + PERIOD_MS + 4600);
	struct runs *l2 = calloc(1, sizeof *l2);
	read_runs(outl, l2);
	int nf3 = 0, c3 = fires_clean(l2, h - PERIOD_MS, h, "127.0.0.3@-@", &nf3);
	ok(c3 && nf3 == 1, "the next fire runs every item once, none on 127.0.0.3");
	free(l2);

	/* ejob's leader leaves a DRAINING server out of the sharding, as ElasticJob's leader does (any
	 * server not ENABLED): an instance there that does not drain by itself (an ElasticJob instance;
	 * here a node the test holds) is given nothing; ENABLED, it is given its share */
	const char *fake = "127.0.0.9@-@1";
	tzk_create(u.zh, tzkup_path(&u, "long", "servers/127.0.0.9"), "DRAINING", 0, NULL);
	tzk_create(u.zh, tzkup_path(&u, "long", "instances/%s", fake), "jobInstanceId: 127.0.0.9@-@1\nserverIp: 127.0.0.9\n",
	           ZOO_EPHEMERAL, NULL);
	uint64_t e0 = tzkup_epoch(&u, "long");
	tzk_create(u.zh, tzkup_path(&u, "long", "leader/sharding/necessary"), "", 0, NULL);
	int resharded = tzkup_wait_epoch(&u, "long", e0, 15000), got = tzkup_owned(&u, "long", ITEMS, fake);
	ok(resharded && got == 0, "the leader shards again and gives an instance on a DRAINING server nothing (%d items)",
	   got);
	tzk_set(u.zh, tzkup_path(&u, "long", "servers/127.0.0.9"), "ENABLED");
	e0 = tzkup_epoch(&u, "long");
	tzk_create(u.zh, tzkup_path(&u, "long", "leader/sharding/necessary"), "", 0, NULL);
	resharded = tzkup_wait_epoch(&u, "long", e0, 15000);
	got = tzkup_owned(&u, "long", ITEMS, fake);
	ok(resharded && got > 0, "  and, ENABLED, its share (%d items)", got);

	for (int k = 0; k < 3; k++) tsup_stop(&s[k], SIGTERM, 15000);
	free(out);
	free(err);
	tzkup_end(&u);
	return done_testing();
}
