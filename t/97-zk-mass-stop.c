/* t/97-zk-mass-stop.c: many supervisors stopped at once lose nothing. Eight supervisors run a job
 * of 16 items (failover on) whose items take 3 s, fired every 6 s; shutdownGraceSeconds is 1.
 * A second into a fire, four of them (the leader among them) get SIGTERM together: what they cut
 * is handed over to the four left, every item of that fire and of the next ones ends ok exactly
 * once, and no two runs of an item overlap. Then the four come back and take their share again. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define PERIOD_MS 6000
#define ITEMS 16
#define NSUP 8

static const char item_sh[] =
	"#!/bin/sh\n"
	"rec() { echo \"$1 $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID\" >> \"$OUT\"; }\n"
	"rec start\n"
	"trap 'rec cut; exit 143' TERM\n"
	"sleep 3 & wait\n"
	"rec end\n";

#define MAXR 4096
static struct tsup_rec r[MAXR];

static long long wall_ms(void) { return tlib_wall_ns() / 1000000; }

static long long newest_fire(const char *out)
{
	int n = tsup_read_recs(out, r, MAXR);
	long long f = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].kind, "start") && r[i].extra % PERIOD_MS == 0 && r[i].extra > f) f = r[i].extra;
	return f;
}

static long long wait_fire_after(const char *out, long long after, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	long long f;
	while ((f = newest_fire(out)) <= after && tlib_now_ms() < end) usleep(20000);
	return f > after ? f : 0;
}

static void sleep_until_ms(long long t)
{
	long long now = wall_ms();
	if (t > now) usleep((useconds_t)(t - now) * 1000);
}

struct run {
	int item, ok, cut;
	long long start, end, fire;
	char task[200];
};

int main(void)
{
	tlib_init(180);
	struct tzkup u;
	tzkup_start(&u, 200, "t97", 4000);
	char sh[600], out[600], jobs[2048];
	tlib_script(sh, sizeof sh, "item.sh", item_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  mass:\n"
	         "    type: script\n"
	         "    cron: \"0/6 * * * * ?\"\n"
	         "    failover: true\n"
	         "    shardingTotalCount: %d\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         ITEMS, out, sh);
	static struct tsup s[NSUP];
	tzkup_run_n(&u, s, NSUP, "workers: 4, shutdownGraceSeconds: 1, killGraceSeconds: 2", jobs);
	for (int k = 0; k < NSUP; k++)
		if (!tzkup_wait_registered(&u, "mass", s[k].id, 0, 20000)) BAIL_OUT("s%d did not register", k);
	ok(tzkup_wait_owned(&u, "mass", ITEMS, s[0].id, 2, 20000), "eight supervisors share the 16 items");

	/* the leader among the four stopped */
	char *leader = NULL;
	tzk_get(u.zh, tzkup_path(&u, "mass", "leader/election/instance"), &leader, NULL);
	int lead = -1;
	for (int k = 0; k < NSUP && leader; k++)
		if (!strcmp(leader, s[k].id)) lead = k;
	free(leader);
	int stop[4], ns = 0;
	if (lead >= 0) stop[ns++] = lead;
	for (int k = 0; k < NSUP && ns < 4; k++)
		if (k != lead) stop[ns++] = k;

	long long f = wait_fire_after(out, wall_ms(), 15000);
	ok(f > 0, "a fire runs (%lld)", f);
	sleep_until_ms(f + 1000);
	for (int i = 0; i < ns; i++) kill(s[stop[i]].pid, SIGTERM);
	int clean = 1;
	for (int i = 0; i < ns; i++) {
		int st = tsup_stop(&s[stop[i]], 0, 15000);
		clean &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	ok(clean, "four of them, the leader (s%d) among them, stopped together on SIGTERM, each exit 0", lead);
	/* the next fire too, then the four come back */
	long long g = f + PERIOD_MS;
	sleep_until_ms(g + 4500);
	for (int i = 0; i < ns; i++) {
		char ip[32];
		snprintf(ip, sizeof ip, "127.0.0.%d", stop[i] + 1);   /* as tzkup_run_n named them */
		tzkup_run(&u, &s[stop[i]], ip);
	}
	int back = 1;
	for (int i = 0; i < ns; i++) back &= tzkup_wait_registered(&u, "mass", s[stop[i]].id, 0, 15000);
	ok(back, "started again, they register");
	ok(tzkup_wait_owned(&u, "mass", ITEMS, s[stop[0]].id, 2, 15000), "  and take their share again at the next sharding");
	long long h = g + PERIOD_MS;
	sleep_until_ms(h + 4500);
	for (int k = 0; k < NSUP; k++) tsup_stop(&s[k], SIGTERM, 15000);

	static struct run runs[MAXR];
	int nruns = 0, n = tsup_read_recs(out, r, MAXR);
	for (int i = 0; i < n; i++) {
		long long ms = r[i].ns / 1000000;
		if (!strcmp(r[i].kind, "start")) {
			if (ms < f || ms >= h + PERIOD_MS || nruns == MAXR) continue;
			struct run *x = &runs[nruns++];
			memset(x, 0, sizeof *x);
			x->item = r[i].item;
			x->start = ms;
			x->fire = r[i].extra;
			snprintf(x->task, sizeof x->task, "%s", r[i].task);
			continue;
		}
		for (int k = nruns - 1; k >= 0; k--)
			if (runs[k].item == r[i].item && runs[k].fire == r[i].extra && !strcmp(runs[k].task, r[i].task) &&
			    !runs[k].end) {
				runs[k].end = ms;
				runs[k].ok = !strcmp(r[i].kind, "end");
				runs[k].cut = !strcmp(r[i].kind, "cut");
				break;
			}
	}
	int oks[ITEMS] = { 0 }, overlaps = 0, cuts = 0, unended = 0, late = 0;
	for (int a = 0; a < nruns; a++) {
		struct run *x = &runs[a];
		if (x->item < 0 || x->item >= ITEMS) continue;
		oks[x->item] += x->ok;
		unended += !x->end;
		long long next = 0;
		for (int b = 0; b < nruns; b++) {
			struct run *y = &runs[b];
			if (b == a || y->item != x->item || !x->end) continue;
			if (y->start >= x->start && y->start < x->end) overlaps++;
			if (y->start >= x->end && (!next || y->start < next)) next = y->start;
		}
		if (!x->cut) continue;
		cuts++;
		late += !next || next - x->end > 2500;
	}
	ok(cuts >= 8, "the four cut what they ran past the grace (%d runs)", cuts);
	int exact = 1;
	for (int i = 0; i < ITEMS; i++) {
		if (oks[i] != 3) diag("item %d: %d ok runs in 3 fires", i, oks[i]);
		exact &= oks[i] == 3;
	}
	ok(exact, "every item of the three fires has exactly one ok run");
	is_int(overlaps, 0, "no two runs of an item overlap");
	is_int(unended, 0, "every run ended");
	is_int(late, 0, "each cut item ran again at once (within 2.5 s), on the four left");
	tzkup_end(&u);
	return done_testing();
}
