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
#include "t/lib/truns.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define PERIOD_MS 6000
#define ITEMS 6

#define MAXR 2048

int main(void)
{
	tlib_init(240);
	struct tzkup u;
	tzkup_start(&u, 200, "t98", 4000);
	char sh[600], out[600], jobs[4096], sup[3][700];
	tlib_script(sh, sizeof sh, "item.sh", truns_script);
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
	long long f0 = truns_wait_fire(out, PERIOD_MS, truns_wall_ms(), 15000);
	ok(f0 > 0, "the fires go on (first fire of the window: %lld)", f0);
	long long last = f0;
	int clean = 1;
	double worst_stop = 0;
	for (int k = 0; k < 3 && f0; k++) {
		long long f = truns_wait_fire(out, PERIOD_MS, last, 15000);
		if (!f) break;
		last = f;
		truns_sleep_until(f + 1000);
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
	truns_sleep_until(g + 4500);
	for (int k = 0; k < 3; k++) tsup_stop(&s[k], SIGTERM, 15000);

	/* the runs of the window */
	static struct trun runs[MAXR];
	int nruns = truns_read(out, f0, g + PERIOD_MS, runs, MAXR);
	int nfires = (int)((g - f0) / PERIOD_MS) + 1;
	struct truns_stats st;
	truns_judge(runs, nruns, ITEMS, 2500, &st);
	int cuts = st.cuts;
	ok(cuts >= 3, "the restarts cut items that ran longer than the grace (%d cut runs)", cuts);
	int exact = 1;
	for (int i = 0; i < ITEMS; i++) {
		if (st.oks[i] != nfires) diag("item %d: %d ok runs for %d fires", i, st.oks[i], nfires);
		exact &= st.oks[i] == nfires;
	}
	ok(exact, "every item of every fire of the window (%d fires) has exactly one ok run: nothing lost, nothing run twice",
	   nfires);
	is_int(st.overlaps, 0, "no two runs of one item overlap");
	is_int(st.unended, 0, "every run started in the window ended (ok or cut)");
	is_int(st.untaken, 0, "every cut run was run again");
	is_int(st.late, 0, "  each at once (within 2.5 s of its cut), as a failover run, not at the next fire");

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
