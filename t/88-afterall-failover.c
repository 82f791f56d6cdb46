/* t/88-afterall-failover.c: ejob.listener.afterAll when an instance dies in the middle of an item
 * and the item is failed over (failover: true), where ElasticJob counts the failover run for
 * whatever fire its guarantee nodes hold. Two supervisors, four items, item 1 slow (4 s), the others
 * quick; the owner of item 1 (which also owns item 0, already completed) is killed (-9) while item
 * 1 runs. Checked by the records the items and the command write:
 *   - item 1 runs again, to its end, on the survivor (a failover take), inside that instance's
 *     before and after listeners, told source FAILOVER and item 1 only;
 *   - the fire's afterAll runs exactly once, on the survivor, after that run ended (the take
 *     counts for the fire its item was part of; item 0, completed before the kill, counts too);
 *   - its nodes under guarantee/once are gone afterwards, and the next fire runs it once again. */
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

/* items: "start ITEM FIRE NS PID" and "end ITEM FIRE NS PID" (PID: the worker's parent's parent is
 * not stable; the supervisor is named by EJOB_TASK_ID's pid, the last field of the task id) */
static const char items_sh[] =
	"#!/bin/sh\n"
	"sup=${EJOB_TASK_ID##*@-@}\n"
	"echo \"start $EJOB_ITEM $EJOB_FIRE_ID $(date +%s%N) $sup\" >> \"$1\"\n"
	"case $EJOB_ITEM in 1) sleep 4;; *) sleep 0.2;; esac\n"
	"echo \"end $EJOB_ITEM $EJOB_FIRE_ID $(date +%s%N) $sup\" >> \"$1\"\n";
/* afterAll: "start FIRE PID TAKEOVER NS", 0.5 s, "end FIRE PID 0 NS" (PID: the supervisor, the
 * keeper's parent) */
static const char aa_sh[] =
	"#!/bin/sh\n"
	"sup=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
	"echo \"start $EJOB_FIRE_ID $sup $EJOB_LISTENER_TAKEOVER $(date +%s%N)\" >> \"$1\"\n"
	"sleep 0.5\n"
	"echo \"end $EJOB_FIRE_ID $sup 0 $(date +%s%N)\" >> \"$1\"\n";

/* before/after: "KIND FIRE NS CONTEXT" */
static const char ls_sh[] =
	"#!/bin/sh\n"
	"echo \"$EJOB_LISTENER $EJOB_FIRE_ID $(date +%s%N) $2\" >> \"$1\"\n";

#define MAXA 256
static struct tafter_rec recs[MAXA];
static int nrecs;

static void load(const char *path) { nrecs = tafter_load(path, recs, MAXA); }

static int count(const char *kind, long long fire) { return tafter_count(recs, nrecs, kind, fire, 0); }

static const struct tafter_rec *first(const char *kind, long long fire)
{
	for (int i = 0; i < nrecs; i++)
		if (!strcmp(recs[i].kind, kind) && recs[i].fire == fire) return &recs[i];
	return NULL;
}

struct irec { char kind[8]; int item; long long fire, ns; int pid; };

static int load_items(const char *path, struct irec *r, int max)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p && n < max; p = strtok(NULL, "\n"))
		if (sscanf(p, "%7s %d %lld %lld %d", r[n].kind, &r[n].item, &r[n].fire, &r[n].ns, &r[n].pid) == 5) n++;
	free(t);
	return n;
}

int main(void)
{
	tlib_init(90);
	tzkup_start(&u, 200, "t88", 3000);
	char ish[400], aash[400], lsh[400], r_items[400], r_aa[400], r_ls[400], jobs[4096];
	tlib_script(ish, sizeof ish, "items.sh", items_sh);
	tlib_script(lsh, sizeof lsh, "listener.sh", ls_sh);
	snprintf(r_ls, sizeof r_ls, "%s/listeners", tlib_tmpdir());
	tlib_script(aash, sizeof aash, "afterall.sh", aa_sh);
	snprintf(r_items, sizeof r_items, "%s/items", tlib_tmpdir());
	snprintf(r_aa, sizeof r_aa, "%s/afterall", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  fo:\n    type: script\n    cron: \"0/15 * * * * ?\"\n    shardingTotalCount: 4\n    failover: true\n"
	         "    props: {script.command.line: \"%s %s\", ejob.listener.afterAll: \"%s %s\",\n"
	         "            ejob.listener.before: \"%s %s\", ejob.listener.after: \"%s %s\"}\n",
	         ish, r_items, aash, r_aa, lsh, r_ls, lsh, r_ls);
	struct tsup s[2];
	tzkup_run_n(&u, s, 2, "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	int ready = 1;
	for (int i = 0; i < 2; i++) ready &= tzkup_wait_registered(&u, "fo", s[i].id, 0, 10000);
	/* sharded at the first fire, up to 15 s away */
	ready &= tzkup_wait_owned(&u, "fo", 4, s[0].id, 2, 17000) && tzkup_wait_owned(&u, "fo", 4, s[1].id, 2, 17000);
	ok(ready, "two supervisors, two of the four items each");

	/* ---- item 1 starts: kill its supervisor ---- */
	struct irec it[256];
	int ni = 0, vpid = 0;
	long long fire = 0;
	for (uint64_t end = tlib_now_ms() + 20000; tlib_now_ms() < end && !fire; usleep(50000)) {
		ni = load_items(r_items, it, 256);
		for (int k = 0; k < ni; k++)
			if (!strcmp(it[k].kind, "start") && it[k].item == 1) {
				fire = it[k].fire;
				vpid = it[k].pid;
			}
	}
	int victim = -1;
	for (int i = 0; i < 2; i++)
		if (s[i].pid == vpid) victim = i;
	ok(fire && victim >= 0, "fire %lld: item 1 started on s%d", fire, victim);
	if (victim < 0) BAIL_OUT("no item 1 to kill");
	int surv = 1 - victim;
	/* item 0 is the victim's too (AVG_ALLOCATION: 0 and 1 on one, 2 and 3 on the other): its end first */
	int done0 = 0;
	for (uint64_t end = tlib_now_ms() + 2000; tlib_now_ms() < end && !done0; usleep(50000)) {
		ni = load_items(r_items, it, 256);
		for (int k = 0; k < ni; k++)
			done0 |= !strcmp(it[k].kind, "end") && it[k].item == 0 && it[k].fire == fire && it[k].pid == vpid;
	}
	ok(done0, "  item 0 of the same supervisor ended first");
	usleep(300000);     /* its completion written */
	kill(s[victim].pid, SIGKILL);
	diag("killed s%d (pid %d) while item 1 of fire %lld runs", victim, vpid, fire);

	/* ---- the survivor takes item 1 over; afterAll after that ---- */
	const struct tafter_rec *a = NULL;
	for (uint64_t end = tlib_now_ms() + 20000; tlib_now_ms() < end && !(a = first("end", fire)); usleep(200000))
		load(r_aa);
	usleep(500000);
	load(r_aa);
	ni = load_items(r_items, it, 256);
	long long take_end = 0;
	int takes = 0, ends1 = 0;
	for (int k = 0; k < ni; k++) {
		if (it[k].item != 1 || it[k].pid != s[surv].pid) continue;
		/* a take's fire id is when it started, never a whole second (a cron fire's) */
		if (it[k].fire % 1000 == 0) continue;
		if (!strcmp(it[k].kind, "start")) takes++;
		if (!strcmp(it[k].kind, "end")) ends1++, take_end = it[k].ns;
	}
	ok(takes == 1 && ends1 == 1, "item 1 ran again to its end on the survivor (a failover take: %d starts, %d ends)",
	   takes, ends1);
	{
		/* the take's before and after: its fire id is the take's */
		long long take_fire = 0, take_start = 0;
		for (int k = 0; k < ni; k++)
			if (it[k].item == 1 && it[k].pid == s[surv].pid && it[k].fire % 1000 && !strcmp(it[k].kind, "start"))
				take_fire = it[k].fire, take_start = it[k].ns;
		char *txt = tsup_slurp(r_ls), want_b[64], want_a[64];
		snprintf(want_b, sizeof want_b, "before %lld ", take_fire);
		snprintf(want_a, sizeof want_a, "after %lld ", take_fire);
		const char *b = txt && take_fire ? strstr(txt, want_b) : NULL, *a2 = txt && take_fire ? strstr(txt, want_a) : NULL;
		long long bns = b ? atoll(b + strlen(want_b)) : 0, ans = a2 ? atoll(a2 + strlen(want_a)) : 0;
		const char *bend = b ? strchr(b, '\n') : NULL, *aend = a2 ? strchr(a2, '\n') : NULL;
		int bok = b && bend && bns < take_start && strstr(b, "\"shardingItemParameters\":{\"1\":\"\"}") < bend &&
		          strstr(b, "\"source\":\"FAILOVER\"") && strstr(b, "\"source\":\"FAILOVER\"") < bend &&
		          strstr(b, "\"shardingItemParameters\":{\"1\":\"\"}");
		int aok = a2 && aend && ans > take_end && strstr(a2, "\"succeeded\":[1],\"failed\":[]}") &&
		          strstr(a2, "\"succeeded\":[1],\"failed\":[]}") < aend;
		ok(bok, "  its before listener ran before it, told source FAILOVER and item 1");
		ok(aok, "  its after listener ran after it, told item 1 succeeded");
		if (!bok || !aok) diag("take %lld started %lld ended %lld; listeners:\n%s", take_fire, take_start, take_end,
		                       txt ? txt : "");
		free(txt);
	}
	a = first("start", fire);
	const struct tafter_rec *e = first("end", fire);
	ok(a && e && count("start", fire) == 1 && count("end", fire) == 1 && a->pid == s[surv].pid && !a->takeover,
	   "fire %lld's afterAll ran exactly once, on the survivor", fire);
	ok(a && take_end && a->ns > take_end, "  after the take of item 1 ended");
	int gone = 0;
	for (uint64_t end = tlib_now_ms() + 3000; tlib_now_ms() < end && !gone; usleep(100000))
		gone = tzk_exists(u.zh, tzkup_path(&u, "fo", "guarantee/once/%lld", fire), NULL) == ZNONODE;
	ok(gone, "  its guarantee/once node is gone");

	/* ---- the next fire on the one left: once ---- */
	long long next = fire + 15000;
	for (uint64_t end = tlib_now_ms() + 25000; tlib_now_ms() < end && !first("end", next); usleep(200000))
		load(r_aa);
	usleep(300000);
	load(r_aa);
	ok(count("start", next) == 1 && count("end", next) == 1, "the next fire (%lld) runs it once", next);

	tsup_stop(&s[surv], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
