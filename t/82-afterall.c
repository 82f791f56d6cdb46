/* t/82-afterall.c: ejob.listener.afterAll, once per fire across the cluster (coord_once.c), on
 * three supervisors and one ZooKeeper, checked by the records the command and the items write
 * and by the nodes left in ZooKeeper:
 *   - each fire's afterAll runs exactly once, on one instance, after every item of the fire (on
 *     all three) has ended, and its nodes under guarantee/once/{fireId} are gone afterwards;
 *   - the supervisor running it is killed (-9) in the middle: its command dies with it (no end
 *     record), and the command runs once more to its end on another instance, told it is a
 *     takeover (EJOB_LISTENER_TAKEOVER=1), started only after the kill: never two at once;
 *   - the next fires on the two left run it exactly once again;
 *   - a disabled item does not hold it: it runs once after the items that ran. */
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

/* afterAll: OUT, then the context; "start FIRE SUP TAKEOVER NS", 2 s, "end FIRE SUP NS": SUP the supervisor
 * that ran it, its keeper's parent (afterAll runs under a lease, supervisor/run/listen.h) */
static const char aa_sh[] =
	"#!/bin/sh\n"
	"sup=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
	"echo \"start $EJOB_FIRE_ID $sup $EJOB_LISTENER_TAKEOVER $(date +%s%N)\" >> \"$1\"\n"
	"sleep 2\n"
	"echo \"end $EJOB_FIRE_ID $sup 0 $(date +%s%N)\" >> \"$1\"\n";

#define MAXA 256
static struct tafter_rec recs[MAXA];
static int nrecs;

static void load(const char *path) { nrecs = tafter_load(path, recs, MAXA); }

static int count(const char *kind, long long fire, int pid) { return tafter_count(recs, nrecs, kind, fire, pid); }

static const struct tafter_rec *find(const char *kind, long long fire, int not_pid)
{
	return tafter_find(recs, nrecs, kind, fire, not_pid);
}

/* the latest end of an item of fire (OUT.se of the run script: "end ITEM NS TASK FIRE"), 0 if none */
static long long items_end(const char *se, long long fire, int *n)
{
	struct tsup_rec r[512];
	int k = tsup_read_recs(se, r, 512);
	long long last = 0;
	*n = 0;
	for (int i = 0; i < k; i++)
		if (!strcmp(r[i].kind, "end") && r[i].extra == fire) {
			(*n)++;
			if (r[i].ns > last) last = r[i].ns;
		}
	return last;
}

/* the fires above `after` with an end record, ascending */
static int ended_fires(long long after, long long *out, int max)
{
	return tafter_ended_fires(recs, nrecs, after, out, max);
}

/* one start and one end, by one supervisor, not a takeover, after every item ended */
static int exactly_once(long long fire, const char *se)
{
	const struct tafter_rec *s = find("start", fire, 0), *e = find("end", fire, 0);
	int n;
	long long last = items_end(se, fire, &n);
	if (count("start", fire, 0) != 1 || count("end", fire, 0) != 1 || !s || !e || s->pid != e->pid || s->takeover ||
	    n != 3 || s->ns < last) {
		diag("fire %lld: %d starts, %d ends, %d items ended (last %lld), start %lld", fire, count("start", fire, 0),
		     count("end", fire, 0), n, last, s ? s->ns : 0);
		return 0;
	}
	return 1;
}

int main(void)
{
	tlib_init(90);
	tzkup_start(&u, 200, "t82", 3000);
	const char *rec = tsup_rec_script();
	char aash[400], r_items[400], r_aa[400], se[420], jobs[2048];
	tlib_script(aash, sizeof aash, "afterall.sh", aa_sh);
	snprintf(r_items, sizeof r_items, "%s/runs-agg", tlib_tmpdir());
	snprintf(se, sizeof se, "%s.se", r_items);
	snprintf(r_aa, sizeof r_aa, "%s/afterall", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  agg:\n    type: script\n    cron: \"0/4 * * * * ?\"\n    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"%s %s 0.3\", ejob.listener.afterAll: \"%s %s\"}\n",
	         rec, r_items, aash, r_aa);
	struct tsup s[3];
	tzkup_run_n(&u, s, 3, "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	int ready = 1;
	for (int i = 0; i < 3; i++)
		ready &= tzkup_wait_registered(&u, "agg", s[i].id, 0, 10000) && tzkup_wait_owned(&u, "agg", 3, s[i].id, 1, 10000);
	ok(ready, "three supervisors, one item each");
	long long since = tlib_wall_ns() / 1000000 + 500;

	/* ---- two fires: once each ---- */
	long long f[16];
	int nf = 0;
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end && nf < 2; usleep(200000)) {
		load(r_aa);
		nf = ended_fires(since, f, 16);
	}
	ok(nf >= 2, "afterAll ended for %d fires", nf);
	int once = nf >= 2;
	for (int k = 0; k < nf && k < 2; k++) once &= exactly_once(f[k], se);
	ok(once, "each ran exactly once, on one instance, after all three items ended");
	int gone = 1;
	for (int k = 0; k < nf && k < 2; k++)
		gone &= tzk_exists(u.zh, tzkup_path(&u, "agg", "guarantee/once/%lld", f[k]), NULL) == ZNONODE;
	ok(gone, "their guarantee/once/{fireId} nodes are gone");

	/* ---- the one running it is killed: it runs once more elsewhere, never at once ---- */
	long long after = nf ? f[nf - 1] : since, fk = 0;
	int pk = 0;
	tafter_wait_start(r_aa, after, 10000, &fk, &pk);
	int victim = -1;
	for (int i = 0; i < 3; i++)
		if (s[i].pid == pk) victim = i;
	ok(fk && victim >= 0, "fire %lld's afterAll started on supervisor s%d", fk, victim);
	if (victim < 0) BAIL_OUT("no afterAll start to kill");
	kill(s[victim].pid, SIGKILL);
	long long killed_ns = tlib_wall_ns();
	diag("killed s%d (pid %d) during fire %lld's afterAll", victim, pk, fk);
	tafter_wait_end(r_aa, fk, pk, 15000);
	load(r_aa);
	const struct tafter_rec *e2 = find("end", fk, pk);
	const struct tafter_rec *s2 = find("start", fk, pk);
	ok(e2 && s2 && e2->pid == s2->pid, "fire %lld's afterAll ran to its end on another supervisor", fk);
	is_int(count("end", fk, pk), 0, "the killed run never ended (it died with its supervisor)");
	is_int(count("start", fk, 0), 2, "two starts: the killed run and the takeover");
	is_int(count("end", fk, 0), 1, "one end");
	ok(s2 && s2->takeover == 1, "the second run was told it is a takeover");
	ok(s2 && s2->ns > killed_ns, "it started after the kill (never two at once)");

	/* ---- the two left: once again ---- */
	long long g[16];
	int ng = 0;
	for (uint64_t end = tlib_now_ms() + 20000; tlib_now_ms() < end && ng < 1; usleep(200000)) {
		load(r_aa);
		ng = ended_fires(fk, g, 16);
	}
	ok(ng >= 1, "a later fire's afterAll ended on the two left");
	if (ng >= 1) {
		const struct tafter_rec *a = find("start", g[0], 0), *b = find("end", g[0], 0);
		ok(count("start", g[0], 0) == 1 && count("end", g[0], 0) == 1 && a && b && a->pid == b->pid && !a->takeover,
		   "  exactly once (fire %lld)", g[0]);
	} else {
		ok(0, "  exactly once");
	}
	/* ---- a disabled item: afterAll still runs, once, after the others ---- */
	tzk_create(u.zh, tzkup_path(&u, "agg", "sharding/1/disabled"), "", 0, NULL);
	usleep(300000);
	load(r_aa);
	long long from = ng ? g[ng - 1] : fk, h[16];
	int nh = ended_fires(from, h, 16);
	from = nh ? h[nh - 1] : from;
	nh = 0;
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end && nh < 1; usleep(200000)) {
		load(r_aa);
		nh = ended_fires(from, h, 16);
	}
	if (nh >= 1) {
		const struct tafter_rec *a = find("start", h[0], 0);
		int n;
		long long lastend = items_end(se, h[0], &n);
		ok(count("start", h[0], 0) == 1 && count("end", h[0], 0) == 1 && a && n == 2 && a->ns > lastend,
		   "item 1 disabled: afterAll once after the 2 items that ran (fire %lld: %d items)", h[0], n);
	} else {
		ok(0, "item 1 disabled: afterAll ran");
	}
	for (int i = 0; i < 3; i++)
		if (i != victim) tsup_stop(&s[i], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
