/* t/98-zk-rolling-restart.c: a rolling restart loses nothing. Three supervisors run a job of 6
 * items (failover on) that fires every 6 s and whose items take 3 s; shutdownGraceSeconds is 1.
 * Each supervisor in turn gets SIGTERM a second into a fire (its items have 2 s left, longer than
 * the grace) and is started again at once, while the fires go on. Every item of every fire must
 * have exactly one run that ended ok; the runs of one item never overlap (a cut run is handed
 * over only once it has stopped); each cut run is taken over at once, not at the next fire. A
 * second job without failover says in the history why its cut items did not complete. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define PERIOD_MS 6000
#define ITEMS 6

/* start, then end (ran to its end) or cut (SIGTERM), each "KIND ITEM NS TASK FIRE" */
static const char item_sh[] =
	"#!/bin/sh\n"
	"rec() { echo \"$1 $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID\" >> \"$OUT\"; }\n"
	"rec start\n"
	"trap 'rec cut; exit 143' TERM\n"
	"sleep 3 & wait\n"
	"rec end\n";

#define MAXR 2048
static struct tsup_rec r[MAXR];

/* the newest fire (a fire id on the cron's grid, started within a second of it) with a start */
static long long newest_fire(const char *out)
{
	int n = tsup_read_recs(out, r, MAXR);
	long long f = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].kind, "start") && r[i].extra % PERIOD_MS == 0 && r[i].ns / 1000000 - r[i].extra < 1000 &&
		    r[i].extra > f)
			f = r[i].extra;
	return f;
}

/* the wall clock (fire ids are wall-clock ms; tlib_now_ms is monotonic) */
static long long wall_ms(void) { return tlib_wall_ns() / 1000000; }

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
	int item;
	long long start, end;       /* ms; end 0: none seen */
	int ok, cut;
	char task[200];
	long long fire;
};

int main(void)
{
	tlib_init(240);
	struct tzkup u;
	tzkup_start(&u, 200, "t98", 4000);
	char sh[600], out[600], jobs[4096], sup[3][700];
	tlib_script(sh, sizeof sh, "item.sh", item_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  roll:\n"
	         "    type: script\n"
	         "    cron: \"0/6 * * * * ?\"\n"
	         "    timeZone: UTC\n"
	         "    failover: true\n"
	         "    shardingTotalCount: %d\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
	         "  nofo:\n"
	         "    type: script\n"
	         "    cron: \"0/6 * * * * ?\"\n"
	         "    timeZone: UTC\n"
	         "    failover: false\n"
	         "    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s.nofo %s\"}\n",
	         ITEMS, out, sh, out, sh);
	struct tsup s[3];
	const char *ips[3] = { "127.0.0.1", "127.0.0.2", "127.0.0.3" };
	for (int k = 0; k < 3; k++) {
		snprintf(sup[k], sizeof sup[k], "workers: 8, shutdownGraceSeconds: 1, killGraceSeconds: 2, "
		         "history: {file: \"%s/history-%d.jsonl\"}", tlib_tmpdir(), k);
		char name[8];
		snprintf(name, sizeof name, "s%d", k);
		tzkup_config(&u, &s[k], name, sup[k], jobs);
		tzkup_run(&u, &s[k], ips[k]);
	}
	for (int k = 0; k < 3; k++)
		if (!tzkup_wait_registered(&u, "roll", s[k].id, 0, 15000)) BAIL_OUT("s%d did not register", k);
	pass("three supervisors run the job");

	/* the window: from the first fire after all three are there */
	long long f0 = wait_fire_after(out, wall_ms(), 15000);
	ok(f0 > 0, "the fires go on (first fire of the window: %lld)", f0);
	long long last = f0;
	int clean = 1;
	double worst_stop = 0;
	for (int k = 0; k < 3 && f0; k++) {
		long long f = wait_fire_after(out, last, 15000);
		if (!f) break;
		last = f;
		sleep_until_ms(f + 1000);
		uint64_t t0 = tlib_now_ms();
		int st = tsup_stop(&s[k], SIGTERM, 15000);
		double took = (double)(tlib_now_ms() - t0) / 1000.0;
		if (took > worst_stop) worst_stop = took;
		clean &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
		tzkup_run(&u, &s[k], ips[k]);
		if (!tzkup_wait_registered(&u, "roll", s[k].id, 0, 15000)) BAIL_OUT("s%d did not register again", k);
	}
	ok(clean, "each supervisor stopped cleanly on SIGTERM (exit 0), the slowest in %.1fs (grace 1 s, kill grace 2 s)",
	   worst_stop);
	ok(worst_stop < 6.0, "  within the grace, the kill grace and the hand-over");
	/* two more fires after the last restart, then everything stops while nothing runs */
	long long g = last + 2 * PERIOD_MS;
	sleep_until_ms(g + 4500);
	for (int k = 0; k < 3; k++) tsup_stop(&s[k], SIGTERM, 15000);

	/* the runs of the window, paired by item, task and fire id */
	static struct run runs[MAXR];
	int nruns = 0;
	int n = tsup_read_recs(out, r, MAXR);
	for (int i = 0; i < n; i++) {
		long long ms = r[i].ns / 1000000;
		if (!strcmp(r[i].kind, "start")) {
			if (ms < f0 || ms >= g + PERIOD_MS || nruns == MAXR) continue;
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
	int nfires = (int)((g - f0) / PERIOD_MS) + 1;
	int oks[ITEMS] = { 0 }, overlaps = 0, cuts = 0, unended = 0, late_takes = 0, untaken = 0;
	for (int a = 0; a < nruns; a++) {
		struct run *x = &runs[a];
		if (x->item < 0 || x->item >= ITEMS) continue;
		oks[x->item] += x->ok;
		unended += !x->end;
		for (int b = 0; b < nruns; b++) {
			struct run *y = &runs[b];
			if (b == a || y->item != x->item || !x->end) continue;
			if (y->start >= x->start && y->start < x->end) {
				overlaps++;
				diag("item %d: a run from %lld to %lld (%s) and one from %lld (%s) overlap", x->item, x->start, x->end,
				     x->task, y->start, y->task);
			}
		}
		if (!x->cut) continue;
		cuts++;
		/* taken over at once: the next run of the item starts after the cut ended, well before
		 * the next fire */
		long long next = 0;
		for (int b = 0; b < nruns; b++)
			if (runs[b].item == x->item && runs[b].start >= x->end && (!next || runs[b].start < next)) next = runs[b].start;
		if (!next) untaken++;
		else if (next - x->end > 2500) late_takes++;
		diag("item %d: cut at %+lld ms into its fire; taken over %lld ms later", x->item, x->end - x->fire,
		     next ? next - x->end : -1);
	}
	ok(cuts >= 3, "the restarts cut items that ran longer than the grace (%d cut runs)", cuts);
	int exact = 1;
	for (int i = 0; i < ITEMS; i++) {
		if (oks[i] != nfires) diag("item %d: %d ok runs for %d fires", i, oks[i], nfires);
		exact &= oks[i] == nfires;
	}
	ok(exact, "every item of every fire of the window (%d fires) has exactly one ok run: nothing lost, nothing run twice",
	   nfires);
	is_int(overlaps, 0, "no two runs of one item overlap");
	is_int(unended, 0, "every run started in the window ended (ok or cut)");
	is_int(untaken, 0, "every cut run was run again");
	is_int(late_takes, 0, "  each at once (within 2.5 s of its cut), as a failover run, not at the next fire");

	/* failover off: the cut items' history records say why */
	int nofo_cut = 0, nofo_cause = 0;
	for (int k = 0; k < 3; k++) {
		char p[700];
		snprintf(p, sizeof p, "%s/history-%d.jsonl", tlib_tmpdir(), k);
		char *h = tsup_slurp(p);
		for (char *l = h ? strtok(h, "\n") : NULL; l; l = strtok(NULL, "\n")) {
			if (!strstr(l, "\"job\":\"nofo\"") || !strstr(l, "\"outcome\":\"cancelled\"")) continue;
			nofo_cut++;
			nofo_cause += strstr(l, "\"cause\":\"stopped by the supervisor's shutdown: still running after "
			                        "shutdownGraceSeconds (1s)") != NULL;
		}
		free(h);
	}
	ok(nofo_cut >= 1 && nofo_cause == nofo_cut, "failover off: each cut item's history record has its cause "
	   "(%d of %d)", nofo_cause, nofo_cut);
	int said = 0;
	for (int k = 0; k < 3; k++) said += tsup_log_count(&s[k], "with failover off, run") > 0;
	ok(said >= 1, "  and a WARN names the items of the fire that will not run until the next fire");
	tzkup_end(&u);
	return done_testing();
}
