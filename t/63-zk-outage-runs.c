/* t/63-zk-outage-runs.c: what runs after a short ZooKeeper outage that the sessions survive
 * (issue 10, 2 and 3). Three supervisors, 4 s sessions (items get B = 2 s to stop: SIGTERM when
 * ZooKeeper has been silent for 2 s); `cut` fires every 4 s, `span` every 10 s (a supervisor's
 * first connection attempt to a server still starting can wait its read timeout, 2.7 s, and a
 * reconnection after the next fire time would rightly fold the missed fire into that fire's run:
 * misfire gives one catch-up run for all the fires missed).
 *
 *   - ZooKeeper frozen (SIGSTOP: a short partition) for 0.6 of the session timeout while the
 *     items of `cut` (3 s each) run: they are stopped for the lease, as they must be, and run
 *     again once the same session answers: every item of that fire ends ok, none is lost.
 *   - ZooKeeper killed and started again, down for about 0.6-0.75 of the session timeout, over a
 *     fire time of `span` (0.5 s items): that fire's catch-up runs at the reconnection, under the
 *     renewed lease: every item of it ends ok, none is stopped or killed.
 * And over the whole test every cron fire of both jobs has a successful run of every item. */
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

#define ITEMS 6
#define MAXR 4096

/* "start ITEM NS TASK FIRE ATTEMPT" and "end ..." when it ran to its end */
static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID $EJOB_ATTEMPT\" >> \"$1\"\n"
	"sleep \"$2\"\n"
	"echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID $EJOB_ATTEMPT\" >> \"$1\"\n";

static char out_cut[600], out_span[600];

struct rec {
	char kind[8];
	int item, attempt;
	long long ns, fire;
	char task[200];
};

static int read_recs(const char *path, struct rec *r, int max)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p && n < max; p = strtok(NULL, "\n"))
		if (sscanf(p, "%7s %d %lld %199s %lld %d", r[n].kind, &r[n].item, &r[n].ns, r[n].task, &r[n].fire,
		           &r[n].attempt) == 6)
			n++;
	free(t);
	return n;
}

/* of a fire: items with a run that ended (ok), runs that started and never ended, the highest attempt */
static void fire_runs(const char *path, long long fire, int *done, int *cut, int *max_attempt)
{
	static struct rec r[MAXR];
	int n = read_recs(path, r, MAXR);
	int ok_item[ITEMS] = { 0 };
	*cut = *max_attempt = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].fire != fire || r[i].item < 0 || r[i].item >= ITEMS) continue;
		if (r[i].attempt > *max_attempt) *max_attempt = r[i].attempt;
		if (!strcmp(r[i].kind, "end")) {
			ok_item[r[i].item] = 1;
			continue;
		}
		int ended = 0;
		for (int k = i + 1; k < n && !ended; k++)
			ended = !strcmp(r[k].kind, "end") && r[k].item == r[i].item && r[k].fire == fire &&
			        r[k].attempt == r[i].attempt && !strcmp(r[k].task, r[i].task);
		if (!ended) (*cut)++;
	}
	*done = 0;
	for (int i = 0; i < ITEMS; i++) *done += ok_item[i];
}

/* every cron fire time in [from, to] (every 10 s): each item of it ran to its end; how many fires */
static int every_fire_done(const char *path, long long from, long long to, long long *first_bad)
{
	int fires = 0;
	*first_bad = 0;
	for (long long f = (from + 9999) / 10000 * 10000; f <= to; f += 10000) {
		int done, cut, att;
		fire_runs(path, f, &done, &cut, &att);
		if (done != ITEMS && !*first_bad) *first_bad = f;
		fires++;
	}
	return fires;
}

static long long now_ms(void) { return tlib_wall_ns() / 1000000; }

static void sleep_until(long long at_ms)
{
	long long n = now_ms();
	if (at_ms > n) usleep((useconds_t)((at_ms - n) * 1000));
}

int main(void)
{
	tlib_init(150);
	struct tzkup u;
	tzkup_start(&u, 200, "t63", 4000);
	char sh[600], jobs[4096];
	tlib_script(sh, sizeof sh, "item.sh", item_sh);
	snprintf(out_cut, sizeof out_cut, "%s/runs.cut", tlib_tmpdir());
	snprintf(out_span, sizeof out_span, "%s/runs.span", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  cut:\n"
	         "    type: script\n"
	         "    cron: \"0/4 * * * * ?\"\n"
	         "    shardingTotalCount: %d\n"
	         "    props: {script.command.line: \"%s %s 3\"}\n"
	         "  span:\n"
	         "    type: script\n"
	         "    cron: \"0/10 * * * * ?\"\n"
	         "    shardingTotalCount: %d\n"
	         "    props: {script.command.line: \"%s %s 0.5\"}\n",
	         ITEMS, sh, out_cut, ITEMS, sh, out_span);
	static struct tsup s[3];
	char name[8], ip[32];
	for (int k = 0; k < 3; k++) {
		snprintf(name, sizeof name, "s%d", k);
		snprintf(ip, sizeof ip, "127.0.0.%d", k + 2);
		tzkup_config(&u, &s[k], name, "workers: 4", jobs);
		tzkup_run(&u, &s[k], ip);
	}
	uint64_t end = 0;
	for (int k = 0; k < 3; k++)
		if (!tzkup_wait_registered(&u, "span", s[k].id, 0, 20000)) BAIL_OUT("s%d does not register", k);
	tzk_close(u.zh);   /* the outages below are the supervisors' alone */
	u.zh = NULL;
	/* a full fire after every instance is there: the steady state the checks start from */
	long long steady = (now_ms() / 4000 + 2) * 4000;

	/* 1: a partition of 0.6 T (2.4 s) while cut's items (3 s) run: stopped for the lease at
	 * 2 s of silence, run again when the same session answers */
	long long f1 = steady;
	sleep_until(f1 + 600);
	tzk_pause(&u.zk);
	usleep(2400000);
	tzk_resume(&u.zk);
	end = tlib_now_ms() + 15000;
	int done = 0, cut = 0, att = 0;
	while (tlib_now_ms() < end) {
		fire_runs(out_cut, f1, &done, &cut, &att);
		if (done == ITEMS) break;
		usleep(100000);
	}
	ok(cut > 0, "a partition of 2.4 s stops the running items for the lease (%d stopped)", cut);
	is_int(done, ITEMS, "and every item of that fire runs again and ends ok once the session answers");
	/* attempt 2, or a later one: a ZooKeeper slow to answer after SIGCONT (a loaded machine) can
	 * let the lease lapse once more, and items stopped again for it run again (the lease
	 * working); t/46 and t/50 check the lease's timing itself */
	ok(att >= 2, "as a later attempt (attempt %d)", att);

	/* 2: ZooKeeper down for about 0.6-0.75 T over one of span's fire times: its catch-up runs at
	 * the reconnection and is not stopped */
	/* (a few fires later: cut's run again and the catch-up behind it are over by then) */
	long long spanned = (now_ms() / 10000 + 2) * 10000;
	sleep_until(spanned - 1800);
	long long down = now_ms();
	tzk_stop(&u.zk, SIGKILL, 5000);
	usleep(2200000);
	if (tzk_restart(&u.zk, 20000) < 0) BAIL_OUT("ZooKeeper does not start again");
	long long up = now_ms();
	diag("ZooKeeper was down %.2f s (%.2f of the session timeout), over the fire at %lld ms", (up - down) / 1000.0,
	     (up - down) / 4000.0, spanned);
	end = tlib_now_ms() + 15000;
	while (tlib_now_ms() < end) {
		fire_runs(out_span, spanned, &done, &cut, &att);
		if (done == ITEMS) break;
		usleep(100000);
	}
	ok(up > spanned && down < spanned, "the outage covered a fire time");
	if (!is_int(done, ITEMS, "the catch-up of the fire in the outage runs every item to its end")) {
		/* what ran of it, and what each supervisor saw of ZooKeeper meanwhile */
		static struct rec r[MAXR];
		int n = read_recs(out_span, r, MAXR);
		for (int i = 0; i < n; i++)
			if (r[i].fire >= spanned - 10000)
				diag("span: %s item %d fire %lld at +%lld ms attempt %d task %s", r[i].kind, r[i].item,
				     r[i].fire, r[i].ns / 1000000 - spanned, r[i].attempt, r[i].task);
		for (int k = 0; k < 3; k++) tsup_log_tail(&s[k], 40, "supervisor");
	}
	is_int(cut, 0, "none of its items is stopped or killed (the renewed lease is in force before they start)");
	is_int(att, 1, "each at its first attempt");

	/* every cron fire of span since the steady state, but the newest (cut's later fires collapse
	 * into catch-up runs while its long items run again: misfire) */
	sleep_until((now_ms() / 10000 + 1) * 10000 + 1000);
	long long last = (now_ms() / 10000 - 1) * 10000, bad = 0;
	int nf = every_fire_done(out_span, steady, last, &bad);
	ok(!bad, "span: each of its %d fires ran every item to its end%s", nf, bad ? " (not all did)" : "");
	if (bad) diag("span: fire %lld", bad);
	for (int k = 0; k < 3; k++) {
		int st = tsup_stop(&s[k], SIGTERM, 15000);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "s%d stops cleanly", k);
	}
	tzkup_end(&u);
	return done_testing();
}
