/* t/90-afterall-forget.c: ejob.listener.afterAll of a fire whose items never all end. Two
 * supervisors, a fire every second, failover: false; the one running the first fire's slow item
 * is killed (-9), so that item never ends and the fire's afterAll can never run. Checked by
 * ZooKeeper's nodes and the command's records:
 *   - the fire's afterAll never runs, and once 16 newer fires wait the survivor gives it up and
 *     deletes its nodes under guarantee/once (nothing is left behind for an operator to clean);
 *   - the fires after the reshard run their afterAll once each, on the survivor. */
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

/* items: OUT MARK GO: "FIRE ITEM PID"; the first run of item 1 once GO exists (no MARK yet) takes
 * 60 s. GO comes once both supervisors hold an item: a fire that one of them ran alone before the
 * other registered (a loaded machine straddles a second) must not hold the reshard for a minute */
static const char items_sh[] =
	"#!/bin/sh\n"
	"echo \"$EJOB_FIRE_ID $EJOB_ITEM ${EJOB_TASK_ID##*@-@}\" >> \"$1\"\n"
	"if [ \"$EJOB_ITEM\" = 1 ] && [ -e \"$3\" ] && [ ! -e \"$2\" ]; then : > \"$2\"; sleep 60; fi\n";
/* afterAll: "start FIRE SUP 0 NS" and "end FIRE SUP 0 NS" */
static const char aa_sh[] =
	"#!/bin/sh\n"
	"sup=$(cut -d' ' -f4 /proc/$PPID/stat)\n"
	"echo \"start $EJOB_FIRE_ID $sup $EJOB_LISTENER_TAKEOVER $(date +%s%N)\" >> \"$1\"\n"
	"echo \"end $EJOB_FIRE_ID $sup 0 $(date +%s%N)\" >> \"$1\"\n";

#define MAXA 512
static struct tafter_rec recs[MAXA];
static int nrecs;

/* the fire ids under guarantee/once from `from` on, how many; *oldest the smallest */
static int once_nodes(long long from, long long *oldest)
{
	struct String_vector v = { 0, NULL };
	int n = 0;
	*oldest = 0;
	if (tzk_children(u.zh, tzkup_path(&u, "fg", "guarantee/once"), &v) == ZOK)
		for (int i = 0; i < v.count; i++) {
			long long f = atoll(v.data[i]);
			if (f < from) continue;
			if (!*oldest || f < *oldest) *oldest = f;
			n++;
		}
	deallocate_String_vector(&v);
	return n;
}

int main(void)
{
	tlib_init(90);
	tzkup_start(&u, 200, "t90", 3000);
	char ish[400], aash[400], r_items[400], mark[400], go[400], r_aa[400], jobs[4096];
	tlib_script(ish, sizeof ish, "items.sh", items_sh);
	tlib_script(aash, sizeof aash, "afterall.sh", aa_sh);
	snprintf(r_items, sizeof r_items, "%s/items", tlib_tmpdir());
	snprintf(mark, sizeof mark, "%s/mark", tlib_tmpdir());
	snprintf(go, sizeof go, "%s/go", tlib_tmpdir());
	snprintf(r_aa, sizeof r_aa, "%s/afterall", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  fg:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 2\n    failover: false\n"
	         "    props: {script.command.line: \"%s %s %s %s\", ejob.listener.afterAll: \"%s %s\"}\n",
	         ish, r_items, mark, go, aash, r_aa);
	struct tsup s[2];
	tzkup_run_n(&u, s, 2, "workers: 2, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	int ready = 1;
	for (int i = 0; i < 2; i++)
		ready &= tzkup_wait_registered(&u, "fg", s[i].id, 0, 10000) && tzkup_wait_owned(&u, "fg", 2, s[i].id, 1, 10000);
	ok(ready, "two supervisors, one item each");
	FILE *g = fopen(go, "w");
	if (!g) BAIL_OUT("cannot write %s", go);
	fclose(g);
	/* the first run of item 1 (the mark appears): kill the one running it */
	for (uint64_t end = tlib_now_ms() + 10000; tlib_now_ms() < end && access(mark, F_OK); usleep(50000)) {}
	char *t = tsup_slurp(r_items);
	long long fire = 0;
	int vpid = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long f;
		int item, pid;
		/* the latest run of item 1: the slow one (the fires before GO ran it quickly; while it
		 * runs, its owner's later fires of it are misfires, not runs) */
		if (sscanf(p, "%lld %d %d", &f, &item, &pid) == 3 && item == 1) fire = f, vpid = pid;
	}
	free(t);
	int victim = s[0].pid == vpid ? 0 : s[1].pid == vpid ? 1 : -1;
	ok(fire && victim >= 0, "fire %lld: item 1 runs long on s%d", fire, victim);
	if (victim < 0) BAIL_OUT("no slow item to kill");
	kill(s[victim].pid, SIGKILL);
	int surv = 1 - victim;
	usleep(500000);
	ok(tzk_exists(u.zh, tzkup_path(&u, "fg", "guarantee/once/%lld", fire), NULL) == ZOK,
	   "its afterAll waits (guarantee/once/%lld is there)", fire);

	/* 16 newer fires later: given up, its nodes gone */
	int gone = 0;
	for (uint64_t end = tlib_now_ms() + 30000; tlib_now_ms() < end && !gone; usleep(250000))
		gone = tzk_exists(u.zh, tzkup_path(&u, "fg", "guarantee/once/%lld", fire), NULL) == ZNONODE;
	ok(gone, "  given up after 16 newer fires: its nodes are deleted");
	nrecs = tafter_load(r_aa, recs, MAXA);
	is_int(tafter_count(recs, nrecs, "start", fire, 0), 0, "  its afterAll never ran");
	/* the fires until the reshard (the dead one's item not run) go the same way, each 16 fires on */
	long long oldest = 0;
	int left = 0;
	/* (from the slow fire on: a fire before it that one supervisor missed while it registered,
	 * whose only waiter is the one killed, stays; docs/config.md "afterAll") */
	for (uint64_t end = tlib_now_ms() + 10000; tlib_now_ms() < end; usleep(250000)) {
		left = once_nodes(fire, &oldest);
		if (!left || oldest > fire + 8000) break;
	}
	ok(!left || oldest > fire + 8000, "  so do those of the fires until the reshard: nothing of them is left under "
	   "guarantee/once (%d nodes, the oldest %lld ms after the fire)", left, left ? oldest - fire : 0);
	/* the fires since the survivor has both items: afterAll once each */
	long long f[64];
	nrecs = tafter_load(r_aa, recs, MAXA);
	int nf = tafter_ended_fires(recs, nrecs, fire + 8000, f, 64), once = nf >= 3;
	for (int k = 0; k < nf; k++) {
		const struct tafter_rec *a = tafter_find(recs, nrecs, "start", f[k], 0);
		once &= tafter_count(recs, nrecs, "start", f[k], 0) == 1 && a && a->pid == s[surv].pid;
	}
	ok(once, "the fires since the reshard ran their afterAll once each, on the survivor (%d fires)", nf);
	tsup_stop(&s[surv], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
