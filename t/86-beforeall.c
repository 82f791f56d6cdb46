/* t/86-beforeall.c: ejob.listener.beforeAll, once per fire across the cluster before any item of
 * it runs anywhere (coord_barrier.c), on three supervisors and one ZooKeeper, checked by the
 * records the command and the items write, ZooKeeper's nodes and /metrics:
 *   - each fire's beforeAll runs exactly once, on one instance, and every item of the fire (one
 *     on each supervisor) starts after it ended; the fire's nodes are gone afterwards;
 *   - a disabled item does not hold the fire: the others run after beforeAll;
 *   - a beforeAll that fails runs no item of its fire anywhere, counted as skipped (listener) and
 *     in ejob_listener_runs_total{kind="beforeAll",result="failed"} once per fire;
 *   - the supervisor running it is killed (-9) in the middle: its command dies with it, and it
 *     runs once more to its end on another instance, told it is a takeover, started after the
 *     kill; no item of the fire starts before that end;
 *   - a supervisor frozen (SIGSTOP) across a fire time holds the others for timeoutSeconds only:
 *     then the fire runs nowhere (beforeAll not run), and the next fire runs whole. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tafter.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;

/* beforeAll: OUT SLEEP [RC]: "start FIRE SUP TAKEOVER NS", SLEEP s, "end FIRE SUP 0 NS", exit RC (SUP:
 * the supervisor that ran it, its keeper's parent: it runs under a lease, supervisor/run/listen.h) */
static const char ba_sh[] =
	"#!/bin/sh\n"
	"sup=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
	"echo \"start $EJOB_FIRE_ID $sup $EJOB_LISTENER_TAKEOVER $(date +%s%N)\" >> \"$1\"\n"
	"sleep \"$2\"\n"
	"echo \"end $EJOB_FIRE_ID $sup 0 $(date +%s%N)\" >> \"$1\"\n"
	"case $3 in [0-9]*) exit $3;; esac\n";

#define MAXA 512
static struct tafter_rec recs[MAXA];
static int nrecs;

static void load(const char *path) { nrecs = tafter_load(path, recs, MAXA); }

static int count(const char *kind, long long fire, int pid) { return tafter_count(recs, nrecs, kind, fire, pid); }

static const struct tafter_rec *find(const char *kind, long long fire, int not_pid)
{
	return tafter_find(recs, nrecs, kind, fire, not_pid);
}

/* the items of fire from OUT.se ("start ITEM NS TASK FIRE"): how many started, the earliest start,
 * and a bit per item */
static int items_of(const char *se, long long fire, long long *first, unsigned *mask)
{
	static struct tsup_rec r[2048];
	int k = tsup_read_recs(se, r, 2048), n = 0;
	*first = 0;
	*mask = 0;
	for (int i = 0; i < k; i++)
		if (!strcmp(r[i].kind, "start") && r[i].extra == fire) {
			n++;
			if (!*first || r[i].ns < *first) *first = r[i].ns;
			if (r[i].item >= 0 && r[i].item < 32) *mask |= 1u << r[i].item;
		}
	return n;
}

/* the fires above `after` with an end record, ascending */
static int ended_fires(long long after, long long *out, int max)
{
	return tafter_ended_fires(recs, nrecs, after, out, max);
}

/* one start and one end, by one supervisor, not a takeover; `want` items (mask) of the fire, each
 * started after that end */
static int exactly_once_before(long long fire, const char *se, unsigned want)
{
	const struct tafter_rec *s = find("start", fire, 0), *e = find("end", fire, 0);
	long long first;
	unsigned mask;
	int n = items_of(se, fire, &first, &mask);
	if (count("start", fire, 0) != 1 || count("end", fire, 0) != 1 || !s || !e || s->pid != e->pid || s->takeover ||
	    mask != want || n != __builtin_popcount(want) || first < e->ns) {
		diag("fire %lld: %d starts, %d ends, %d items started (mask %#x, first %lld), beforeAll ended %lld", fire,
		     count("start", fire, 0), count("end", fire, 0), n, mask, first, e ? e->ns : 0);
		return 0;
	}
	return 1;
}

/* the records of kind in path, any fire */
static int records_of(const char *path, const char *kind)
{
	static struct tafter_rec r[MAXA];
	int n = tafter_load(path, r, MAXA), c = 0;
	for (int i = 0; i < n; i++) c += !strcmp(r[i].kind, kind);
	return c;
}

/* the sum over the supervisors of a metric series (-1 if none has it) */
static long metric_sum(const int *ports, int n, const char *series)
{
	long sum = -1;
	for (int k = 0; k < n; k++) {
		long v = tlib_metric(ports[k], series);
		if (v >= 0) sum = (sum < 0 ? 0 : sum) + v;
	}
	return sum;
}

static int gone_soon(const char *job, long long fire, unsigned ms)
{
	for (uint64_t end = tlib_now_ms() + ms;; usleep(100000)) {
		if (tzk_exists(u.zh, tzkup_path(&u, job, "guarantee/once/%lld", fire), NULL) == ZNONODE) return 1;
		if (tlib_now_ms() > end) return 0;
	}
}

int main(void)
{
	tlib_init(120);
	tzkup_start(&u, 200, "t86", 3000);
	const char *rec = tsup_rec_script();
	char bash[400], r_items[400], se[420], r_ba[400], r_bad[400], r_badba[400], r_gate[400], gse[420], r_gba[400];
	char jobs[4096];
	tlib_script(bash, sizeof bash, "beforeall.sh", ba_sh);
	snprintf(r_items, sizeof r_items, "%s/runs-prep", tlib_tmpdir());
	snprintf(se, sizeof se, "%s.se", r_items);
	snprintf(r_ba, sizeof r_ba, "%s/ba-prep", tlib_tmpdir());
	snprintf(r_bad, sizeof r_bad, "%s/runs-bad", tlib_tmpdir());
	snprintf(r_badba, sizeof r_badba, "%s/ba-bad", tlib_tmpdir());
	snprintf(r_gate, sizeof r_gate, "%s/runs-gate", tlib_tmpdir());
	snprintf(gse, sizeof gse, "%s.se", r_gate);
	snprintf(r_gba, sizeof r_gba, "%s/ba-gate", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  prep:\n    type: script\n    cron: \"0/4 * * * * ?\"\n    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"%s %s 0.3\", ejob.listener.beforeAll: \"%s %s 1\"}\n"
	         "  bad:\n    type: script\n    cron: \"2/4 * * * * ?\"\n    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"%s %s 0.1\", ejob.listener.beforeAll: \"%s %s 0 3\"}\n"
	         "  gate:\n    type: script\n    cron: \"1/4 * * * * ?\"\n    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"%s %s 0.1\", ejob.listener.beforeAll: \"%s %s 0\","
	         " ejob.listener.timeoutSeconds: \"1\"}\n",
	         rec, r_items, bash, r_ba, rec, r_bad, bash, r_badba, rec, r_gate, bash, r_gba);
	struct tsup s[3];
	int ports[3];
	const char *ips[3] = { "127.0.0.1", "127.0.0.2", "127.0.0.3" };
	for (int i = 0; i < 3; i++) {
		char name[8], sup[200];
		ports[i] = tzk_free_port();
		snprintf(name, sizeof name, "s%d", i);
		snprintf(sup, sizeof sup, "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1, metrics: \"127.0.0.1:%d\"",
		         ports[i]);
		tzkup_config(&u, &s[i], name, sup, jobs);
		tzkup_run(&u, &s[i], ips[i]);
	}
	int ready = 1;
	const char *jn[3] = { "prep", "bad", "gate" };
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 3; k++)
			ready &= tzkup_wait_registered(&u, jn[k], s[i].id, 0, 10000) &&
			         tzkup_wait_owned(&u, jn[k], 3, s[i].id, 1, 10000);
	ok(ready, "three supervisors, one item of each job each");
	long long since = tlib_wall_ns() / 1000000 + 500;

	/* ---- two fires: beforeAll once each, every item after it ---- */
	long long f[16];
	int nf = 0;
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end && nf < 3; usleep(200000)) {
		load(r_ba);
		nf = ended_fires(since, f, 16);
	}
	ok(nf >= 3, "beforeAll ended for %d fires", nf);
	usleep(600000);     /* the last one's items */
	load(r_ba);
	int once = nf >= 3;
	for (int k = 0; k < nf && k < 2; k++) once &= exactly_once_before(f[k], se, 7);
	ok(once, "each ran exactly once, on one instance, before any of the three items started");
	int gone = 1;
	for (int k = 0; k < nf && k < 2; k++) gone &= gone_soon("prep", f[k], 3000);
	ok(gone, "their guarantee/once/{fireId} nodes are gone");

	/* ---- a failing beforeAll: nothing of its fires runs ---- */
	load(r_badba);
	long long b[16];
	int nb = ended_fires(since, b, 16);
	ok(nb >= 2, "bad's beforeAll ran for %d fires", nb);
	int alone = nb >= 2;
	for (int k = 0; k < nb; k++) alone &= count("start", b[k], 0) == 1;
	/* no run record at all: the item script writes a line per run to r_bad */
	int none = access(r_bad, F_OK) != 0;
	ok(alone, "  once per fire");
	ok(none, "  no item of bad ran anywhere");
	/* every run of it counted once, failed: the runs recorded before and after the read bound it
	 * (a run writes its records before it exits; one may be running as the metrics are read) */
	int runs0 = records_of(r_badba, "start");
	long failed = metric_sum(ports, 3, "ejob_listener_runs_total{job_name=\"bad\",kind=\"beforeAll\",result=\"failed\"}");
	int runs1 = records_of(r_badba, "start");
	long skipped = metric_sum(ports, 3, "ejob_fires_skipped_total{job_name=\"bad\",reason=\"listener\"}");
	ok(failed >= runs0 - 1 && failed <= runs1, "  ejob_listener_runs_total{kind=\"beforeAll\",result=\"failed\"}: %ld over "
	   "the three, for %d-%d runs", failed, runs0, runs1);
	ok(skipped >= 3 * (nb - 1), "  ejob_fires_skipped_total{reason=\"listener\"}: %ld over the three (each instance "
	   "skips each fire)", skipped);

	/* ---- a disabled item does not hold the fire ---- */
	tzk_create(u.zh, tzkup_path(&u, "prep", "sharding/2/disabled"), "", 0, NULL);
	usleep(300000);
	load(r_ba);
	long long last = 0;
	nf = ended_fires(since, f, 16);
	last = nf ? f[nf - 1] : since;
	long long d[16];
	int nd = 0;
	for (uint64_t end = tlib_now_ms() + 10000; tlib_now_ms() < end && nd < 1; usleep(200000)) {
		load(r_ba);
		nd = ended_fires(last, d, 16);
	}
	usleep(800000);
	load(r_ba);
	ok(nd >= 1 && exactly_once_before(d[0], se, 3), "item 2 disabled: beforeAll once, items 0 and 1 after it (fire %lld)",
	   nd ? d[0] : 0);
	tzk_delete_r(u.zh, tzkup_path(&u, "prep", "sharding/2/disabled"));

	/* ---- the one running it is killed: it runs once more elsewhere, never at once ---- */
	long long after = nd ? d[nd - 1] : last, fk = 0;
	int pk = 0;
	tafter_wait_start(r_ba, after, 10000, &fk, &pk);
	int victim = -1;
	for (int i = 0; i < 3; i++)
		if (s[i].pid == pk) victim = i;
	ok(fk && victim >= 0, "fire %lld's beforeAll started on supervisor s%d", fk, victim);
	if (victim < 0) BAIL_OUT("no beforeAll start to kill");
	kill(s[victim].pid, SIGKILL);
	long long killed_ns = tlib_wall_ns();
	diag("killed s%d (pid %d) during fire %lld's beforeAll", victim, pk, fk);
	tafter_wait_end(r_ba, fk, pk, 15000);
	usleep(800000);
	load(r_ba);
	const struct tafter_rec *e2 = find("end", fk, pk);
	const struct tafter_rec *s2 = find("start", fk, pk);
	ok(e2 && s2 && e2->pid == s2->pid, "fire %lld's beforeAll ran to its end on another supervisor", fk);
	is_int(count("end", fk, pk), 0, "the killed run never ended (it died with its supervisor)");
	is_int(count("start", fk, 0), 2, "two starts: the killed run and the takeover");
	ok(s2 && s2->takeover == 1, "the second run was told it is a takeover");
	ok(s2 && s2->ns > killed_ns, "it started after the kill (never two at once)");
	long long first;
	unsigned mask;
	int nk = items_of(se, fk, &first, &mask);
	ok(e2 && (!nk || first > e2->ns), "no item of the fire started before its end (%d started)", nk);

	/* ---- the two left: once again, and the killed one's nodes are swept ---- */
	long long g[16];
	int ng = 0;
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end && ng < 1; usleep(200000)) {
		load(r_ba);
		ng = ended_fires(fk, g, 16);
	}
	usleep(800000);
	load(r_ba);
	ok(ng >= 1 && exactly_once_before(g[0], se, 7), "a later fire on the two left: once, all three items after it");
	ok(gone_soon("prep", fk, 3000), "fire %lld's nodes, left by the killed one, are gone", fk);

	/* ---- a frozen supervisor holds the others for timeoutSeconds only ---- */
	int fz = (victim + 1) % 3, other = (victim + 2) % 3;
	/* gate fires at 1, 5, 9 ... s: freeze from 0.5 s before one to 1.5 s after it */
	long long now_ms = tlib_wall_ns() / 1000000;
	long long next = (now_ms / 1000 + 1) * 1000;
	while ((next / 1000) % 4 != 1 || next - now_ms < 800) next += 1000;
	usleep((useconds_t)((next - 500 - now_ms) * 1000));
	kill(s[fz].pid, SIGSTOP);
	usleep(2000000);
	kill(s[fz].pid, SIGCONT);
	diag("s%d frozen around gate's fire %lld", fz, next);
	usleep(2500000);
	{
		long long gfirst;
		unsigned gmask;
		load(r_gba);
		int ran = items_of(gse, next, &gfirst, &gmask);
		ok(ran == 0 && count("start", next, 0) == 0, "fire %lld ran nowhere: %d items, %d beforeAll runs", next, ran,
		   count("start", next, 0));
	}
	ok(gone_soon("gate", next, 4000), "  its nodes are gone");
	{
		/* why, in the recent events of one that was not frozen */
		char *st = NULL, want[64];
		snprintf(want, sizeof want, "%lld", next);
		int code = tlib_http_get(ports[other], "/status", &st);
		const char *t = st ? strstr(st, "items had started after 1s") : NULL;
		ok(code == 200 && t && strstr(st, want), "  /status says why: the wait for every item timed out");
		if (!t) diag("%s", st ? st : "(no answer)");
		free(st);
	}
	long long gn = next + 4000;
	for (uint64_t end = tlib_now_ms() + 8000; tlib_now_ms() < end; usleep(200000)) {
		load(r_gba);
		if (find("end", gn, 0)) break;
	}
	usleep(600000);
	load(r_gba);
	ok(exactly_once_before(gn, gse, 7), "the next fire (%lld) runs whole", gn);

	tsup_stop(&s[fz], SIGTERM, 10000);
	tsup_stop(&s[other], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
