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
#include "t/lib/truns.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define PERIOD_MS 6000
#define ITEMS 16
#define NSUP 8

#define MAXR 4096

int main(void)
{
	tlib_init(180);
	struct tzkup u;
	tzkup_start(&u, 200, "t97", 4000);
	char sh[600], out[600], jobs[2048];
	tlib_script(sh, sizeof sh, "item.sh", truns_script);
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

	long long f = truns_wait_fire(out, PERIOD_MS, truns_wall_ms(), 15000);
	ok(f > 0, "a fire runs (%lld)", f);
	truns_sleep_until(f + 1000);
	for (int i = 0; i < ns; i++) kill(s[stop[i]].pid, SIGTERM);
	int clean = 1;
	for (int i = 0; i < ns; i++) {
		int st = tsup_stop(&s[stop[i]], 0, 15000);
		clean &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	ok(clean, "four of them, the leader (s%d) among them, stopped together on SIGTERM, each exit 0", lead);
	/* the next fire too, then the four come back */
	long long g = f + PERIOD_MS;
	truns_sleep_until(g + 4500);
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
	truns_sleep_until(h + 4500);
	for (int k = 0; k < NSUP; k++) tsup_stop(&s[k], SIGTERM, 15000);

	static struct trun runs[MAXR];
	int nruns = truns_read(out, f, h + PERIOD_MS, runs, MAXR);
	struct truns_stats st;
	truns_judge(runs, nruns, ITEMS, 2500, &st);
	int cuts = st.cuts;
	ok(cuts >= 8, "the four cut what they ran past the grace (%d runs)", cuts);
	int exact = 1;
	for (int i = 0; i < ITEMS; i++) {
		if (st.oks[i] != 3) diag("item %d: %d ok runs in 3 fires", i, st.oks[i]);
		exact &= st.oks[i] == 3;
	}
	ok(exact, "every item of the three fires has exactly one ok run");
	is_int(st.overlaps, 0, "no two runs of an item overlap");
	is_int(st.unended, 0, "every run ended");
	is_int(st.untaken + st.late, 0, "each cut item ran again at once (within 2.5 s), on the four left");
	tzkup_end(&u);
	return done_testing();
}
