/* t/84-afterall-deaths.c: ejob.listener.afterAll when instances die between their items' end and
 * the end of the fire (where ElasticJob's GuaranteeService runs it twice or never). Three
 * supervisors, items 0 and 1 quick, item 2 slow (3 s); checked by the records the items and the
 * command write:
 *   - the owner of item 0 is killed (-9) once its item is written as completed, while item 2 still
 *     runs: afterAll runs exactly once, after item 2 ended, on a survivor;
 *   - on a later fire the owner of item 2 (the last to complete, the one about to claim) is killed
 *     the moment the set is complete: afterAll still runs to its end exactly once on the last
 *     supervisor (a second start only as a takeover, after the kill). */
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

static const char items_sh[] =
	"#!/bin/sh\n"
	"case $EJOB_ITEM in 2) sleep 3;; *) sleep 0.2;; esac\n"
	"echo \"end $EJOB_ITEM $EJOB_FIRE_ID $(date +%s%N)\" >> \"$1\"\n";
/* afterAll: "start FIRE SUP TAKEOVER NS", 1 s, "end FIRE SUP 0 NS": SUP the supervisor that ran it, its
 * keeper's parent (afterAll runs under a lease, supervisor/run/listen.h) */
static const char aa_sh[] =
	"#!/bin/sh\n"
	"sup=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
	"echo \"start $EJOB_FIRE_ID $sup $EJOB_LISTENER_TAKEOVER $(date +%s%N)\" >> \"$1\"\n"
	"sleep 1\n"
	"echo \"end $EJOB_FIRE_ID $sup 0 $(date +%s%N)\" >> \"$1\"\n";

#define MAXA 256
static struct tafter_rec recs[MAXA];
static int nrecs;

static void load(const char *path) { nrecs = tafter_load(path, recs, MAXA); }

static int count(const char *kind, long long fire) { return tafter_count(recs, nrecs, kind, fire, 0); }

static const struct tafter_rec *nth(const char *kind, long long fire, int n)
{
	return tafter_nth(recs, nrecs, kind, fire, n);
}

/* item's end record of fire: its ns, 0 if none ("end ITEM FIRE NS") */
static long long item_end(const char *path, int item, long long fire)
{
	char *t = tsup_slurp(path);
	long long ns = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		int i;
		long long f, n;
		if (sscanf(p, "end %d %lld %lld", &i, &f, &n) == 3 && i == item && f == fire) ns = n;
	}
	free(t);
	return ns;
}

/* the newest fire id under guarantee/once above `after` (0: none) */
static long long once_fire(long long after)
{
	struct String_vector v = { 0, NULL };
	long long best = 0;
	if (tzk_children(u.zh, tzkup_path(&u, "agg", "guarantee/once"), &v) == ZOK)
		for (int i = 0; i < v.count; i++) {
			long long f = atoll(v.data[i]);
			if (f > after && f > best) best = f;
		}
	deallocate_String_vector(&v);
	return best;
}

static int completed(long long fire)
{
	struct String_vector v = { 0, NULL };
	int n = -1;
	if (tzk_children(u.zh, tzkup_path(&u, "agg", "guarantee/once/%lld/completed", fire), &v) == ZOK) n = v.count;
	deallocate_String_vector(&v);
	return n;
}

static int supervisor_of(struct tsup *s, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s[i].id, id)) return i;
	return -1;
}

int main(void)
{
	tlib_init(75);
	tzkup_start(&u, 200, "t84", 3000);
	char ish[400], aash[400], r_items[400], r_aa[400], jobs[2048];
	tlib_script(ish, sizeof ish, "items.sh", items_sh);
	tlib_script(aash, sizeof aash, "afterall.sh", aa_sh);
	snprintf(r_items, sizeof r_items, "%s/items", tlib_tmpdir());
	snprintf(r_aa, sizeof r_aa, "%s/afterall", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  agg:\n    type: script\n    cron: \"0/5 * * * * ?\"\n    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"%s %s\", ejob.listener.afterAll: \"%s %s\"}\n",
	         ish, r_items, aash, r_aa);
	struct tsup s[3];
	tzkup_run_n(&u, s, 3, "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	int ready = 1;
	for (int i = 0; i < 3; i++) ready &= tzkup_wait_owned(&u, "agg", 3, s[i].id, 1, 10000);
	ok(ready, "three supervisors, one item each");
	long long since = tlib_wall_ns() / 1000000 + 500;

	/* ---- the owner of item 0 dies once its item is written, item 2 still running ---- */
	char *owner = NULL;
	tzk_get(u.zh, tzkup_path(&u, "agg", "sharding/0/instance"), &owner, NULL);
	int v0 = owner ? supervisor_of(s, 3, owner) : -1;
	free(owner);
	long long f1 = 0;
	for (uint64_t end = tlib_now_ms() + 10000; tlib_now_ms() < end && !(f1 && completed(f1) >= 1); usleep(20000))
		if (!f1) f1 = once_fire(since);
	char p0[64];
	snprintf(p0, sizeof p0, "guarantee/once/%lld/completed/0", f1);
	for (uint64_t end = tlib_now_ms() + 5000; tlib_now_ms() < end; usleep(20000))
		if (tzk_exists(u.zh, tzkup_path(&u, "agg", "%s", p0), NULL) == ZOK) break;
	ok(v0 >= 0 && f1 && tzk_exists(u.zh, tzkup_path(&u, "agg", "%s", p0), NULL) == ZOK && !item_end(r_items, 2, f1),
	   "fire %lld: item 0 written as completed while item 2 runs", f1);
	if (v0 < 0 || !f1) BAIL_OUT("no fire to break");
	kill(s[v0].pid, SIGKILL);
	diag("killed s%d, the owner of item 0", v0);
	for (uint64_t end = tlib_now_ms() + 10000; tlib_now_ms() < end && !count("end", f1); usleep(200000)) load(r_aa);
	usleep(500000);
	load(r_aa);
	const struct tafter_rec *st = nth("start", f1, 0);
	ok(count("start", f1) == 1 && count("end", f1) == 1 && st && !st->takeover, "fire %lld: afterAll ran exactly once", f1);
	ok(st && st->pid != s[v0].pid && st->ns > item_end(r_items, 2, f1) && item_end(r_items, 2, f1),
	   "  on a survivor, after item 2 ended");

	/* ---- later: the owner of the last item dies the moment the set is complete ---- */
	struct tsup left[2];
	int nl = 0;
	for (int i = 0; i < 3; i++)
		if (i != v0) left[nl++] = s[i];
	int ok2 = 0;
	for (uint64_t end = tlib_now_ms() + 10000; tlib_now_ms() < end && !ok2; usleep(100000)) {
		int n0 = tzkup_owned(&u, "agg", 3, left[0].id), n1 = tzkup_owned(&u, "agg", 3, left[1].id);
		ok2 = n0 + n1 == 3 && n0 && n1;
	}
	owner = NULL;
	tzk_get(u.zh, tzkup_path(&u, "agg", "sharding/2/instance"), &owner, NULL);
	int v2 = owner ? supervisor_of(left, 2, owner) : -1;
	free(owner);
	ok(ok2 && v2 >= 0, "the two left own every item; item 2 is %s's", v2 >= 0 ? left[v2].id : "nobody");
	if (v2 < 0) BAIL_OUT("no owner of item 2");
	long long f2 = 0;
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end; usleep(5000)) {
		if (!f2 || f2 <= f1) f2 = once_fire(f1 + 1000);
		if (f2 && completed(f2) >= 3) break;
	}
	ok(f2 && completed(f2) >= 3, "fire %lld: every item written as completed", f2);
	kill(left[v2].pid, SIGKILL);
	long long killed_ns = tlib_wall_ns();
	diag("killed %s, the owner of item 2, at once", left[v2].id);
	for (uint64_t end = tlib_now_ms() + 12000; tlib_now_ms() < end && !count("end", f2); usleep(200000)) load(r_aa);
	usleep(500000);
	load(r_aa);
	const struct tafter_rec *e = nth("end", f2, 0), *s1 = nth("start", f2, 0), *s2 = nth("start", f2, 1);
	ok(count("end", f2) == 1 && e && e->pid == left[1 - v2].pid, "fire %lld: afterAll ran to its end once, on the last "
	   "supervisor", f2);
	ok(count("start", f2) == 1 || (count("start", f2) == 2 && s1 && s1->pid == left[v2].pid && s2 && s2->takeover &&
	   s2->ns > killed_ns), "  a second start only as a takeover after the kill (%d starts)", count("start", f2));
	tsup_stop(&left[1 - v2], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
