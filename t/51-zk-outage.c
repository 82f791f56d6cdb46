/* t/51-zk-outage.c: ZooKeeper going away never stops ejob.
 *   - at start, no ZooKeeper: the supervisor gives up after 1 + regCenter.maxRetries rounds of
 *     attempts and exits 1 naming the server and why (ElasticJob's registry center fails its start
 *     so too), and one whose ZooKeeper comes up within them registers (issue 24);
 *   - the only server is killed and restarted on the same port: the supervisor does not exit and
 *     its fires resume;
 *   - in a 3-server ensemble one member (the one the supervisors may be talking to) is killed:
 *     no reshard, and no item of a fire runs twice. */
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

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_ATTEMPT $EJOB_TASK_ID\" >> \"$OUT\"\n";

/* runs of fires after `after`; dups: a (fire, item) run twice as the same attempt (two runs
 * of it at once, on two machines); again: runs of a later attempt, an item stopped for the
 * ZooKeeper lease and run again by design (a loaded machine's ensemble may take longer than the
 * lease to serve the session again) */
static int runs_after(const char *path, long long after, int *dups, int *again)
{
	char *t = tsup_slurp(path);
	long long f[4096];
	int it[4096], at[4096], n = 0, all = 0;
	if (dups) *dups = 0;
	if (again) *again = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long fire;
		int item, attempt;
		if (sscanf(p, "%lld %d %d", &fire, &item, &attempt) != 3) continue;
		if (again) *again += attempt > 1;
		if (dups && all < 4096) {
			for (int k = 0; k < all; k++)
				if (f[k] == fire && it[k] == item && at[k] == attempt) {
					++*dups;
					diag("run twice: %s", p);
				}
			f[all] = fire;
			it[all] = item;
			at[all++] = attempt;
		}
		if (fire > after) n++;
	}
	free(t);
	return n;
}

static void config(struct tzkup *u, struct tsup *t, const char *name, const char *out, const char *sh)
{
	char jobs[2048];
	snprintf(jobs, sizeof jobs,
	         "  out:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out, sh);
	tzkup_config(u, t, name, "workers: 2", jobs);
}

int main(void)
{
	tlib_init(150);
	char sh[600], out1[600], out2[600];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out1, sizeof out1, "%s/runs1", tlib_tmpdir());
	snprintf(out2, sizeof out2, "%s/runs2", tlib_tmpdir());

	/* ---- at start: nothing there, or something there soon ---- */
	struct tzkup u;
	tzkup_start(&u, 500, "t51", 6000);
	tzk_stop(&u.zk, SIGKILL, 5000);
	struct tsup g;
	u.regcenter = "maxRetries: 1, baseSleepTimeMilliseconds: 200, maxSleepTimeMilliseconds: 400";
	config(&u, &g, "gives-up", out1, sh);
	uint64_t t0 = tlib_now_ms();
	int gs = tsup_run(&g, (const char *const[]){ "--ip", "127.0.0.1", NULL }, 15000);
	ok(WIFEXITED(gs) && WEXITSTATUS(gs) == 1, "no ZooKeeper at start, maxRetries 1: the supervisor exits 1 (after %.1fs)",
	   (double)(tlib_now_ms() - t0) / 1000);
	char need[400];
	snprintf(need, sizeof need, "no session with ZooKeeper at %s after ", u.zk.connect);
	ok(tsup_log_count(&g, need) == 1 && tsup_log_count(&g, "Connection refused; giving up (regCenter.maxRetries 1") == 1,
	   "  saying so, with the server and the cause");
	u.regcenter = "maxRetries: 20, baseSleepTimeMilliseconds: 200, maxSleepTimeMilliseconds: 400";
	struct tsup w;
	config(&u, &w, "waits", out1, sh);
	tzkup_run(&u, &w, "127.0.0.1");
	usleep(1500000);
	ok(tsup_alive(w.pid), "maxRetries 20: still trying after 1.5 s");
	ok(tzk_restart(&u.zk, 30000) == 0, "ZooKeeper starts");
	ok(tzkup_wait_registered(&u, "out", w.id, 0, 15000), "  the supervisor registers: within its retries it waits");
	ok(tsup_alive(w.pid), "  and runs on");
	int ws = tsup_stop(&w, SIGTERM, 15000);
	ok(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "  stops cleanly");
	u.regcenter = NULL;

	/* ---- restart of the only server ---- */
	struct tsup t;
	config(&u, &t, "one", out1, sh);
	tzkup_run(&u, &t, "127.0.0.1");
	ok(tzkup_wait_owned(&u, "out", 4, t.id, 4, 20000), "the supervisor runs its job");
	tzk_stop(&u.zk, SIGKILL, 5000);
	ok(tsup_wait_log(&t, "the connection to", 1, 10000), "the server is killed: the supervisor sees the connection go");
	usleep(1500000);
	ok(tsup_alive(t.pid), "and does not exit");
	ok(tzk_restart(&u.zk, 30000) == 0, "the server is back on the same port");
	/* the client reconnects with backoff; a restarting server (a JVM on a loaded machine) may
	 * take an attempt's whole read timeout before it answers: waited for, bounded */
	long long back = tlib_wall_ns() / 1000000 + 1000;
	int resumed = 0;
	for (int k = 0; k < 150 && (resumed = runs_after(out1, back, NULL, NULL)) < 4; k++) usleep(100000);
	ok(resumed >= 4, "fires resume within 15 s (%d runs since)", resumed);
	ok(tsup_alive(t.pid), "the supervisor never exited");
	int s = tsup_stop(&t, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "stops cleanly");
	tzkup_end(&u);

	/* ---- one member of three ---- */
	struct tzk_ensemble e;
	if (tzk_ensemble_start(&e, "ens", 3, &(struct tzk_opts){ .tick_ms = 500 }, 60000) < 0)
		BAIL_OUT("cannot start a 3-server ensemble");
	struct tzkup ue;
	tzkup_on(&ue, e.connect, "t51e", 6000);
	struct tsup a, b;
	config(&ue, &a, "ea", out2, sh);
	config(&ue, &b, "eb", out2, sh);
	tzkup_run(&ue, &a, "127.0.0.1");
	tzkup_run(&ue, &b, "127.0.0.2");
	ok(tzkup_wait_owned(&ue, "out", 4, a.id, 2, 20000) && tzkup_wait_owned(&ue, "out", 4, b.id, 2, 20000),
	   "two supervisors share the job over the ensemble");
	uint64_t epoch = tzkup_epoch(&ue, "out");
	int lead = tzk_ensemble_leader(&e);
	int victim = lead >= 0 ? lead : 0;
	tzk_stop(&e.m[victim], SIGKILL, 5000);
	ok(tzk_ensemble_wait_quorum(&e, 30000) == 0, "member %d (the leader) killed; the other two keep a quorum", victim + 1);
	long long after = tlib_wall_ns() / 1000000 + 500;
	usleep(6000000);
	int dups = 0, again = 0;
	ok(runs_after(out2, after, &dups, &again) >= 16, "fires go on (%d runs since)", runs_after(out2, after, NULL, NULL));
	is_int(dups, 0, "no item of any fire ran twice at once (the same attempt twice)");
	if (dups) {
		/* what each supervisor said of the fires run twice (runs_after named them above) */
		for (struct tsup *sp = &a; sp; sp = sp == &a ? &b : NULL) {
			char *log = tsup_log_text(sp);
			for (char *l = log ? strtok(log, "\n") : NULL; l; l = strtok(NULL, "\n"))
				if (strstr(l, "INFO") || strstr(l, "WARN") || strstr(l, "ERROR")) diag("%s: %s", sp == &a ? "ea" : "eb", l);
			free(log);
		}
	}
	if (again) diag("%d run%s again after being stopped for the lease (the ensemble took longer than it)", again,
	                again == 1 ? "" : "s");
	uint64_t now_epoch = tzkup_epoch(&ue, "out");
	ok(now_epoch == epoch, "no reshard: the assignment's epoch is still 0x%llx (now 0x%llx)", (unsigned long long)epoch,
	   (unsigned long long)now_epoch);
	ok(tsup_alive(a.pid) && tsup_alive(b.pid), "both supervisors are still running");
	int s1 = tsup_stop(&a, SIGTERM, 15000), s2 = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(s1) && !WEXITSTATUS(s1) && WIFEXITED(s2) && !WEXITSTATUS(s2), "both stop cleanly");
	tzkup_end(&ue);
	tzk_ensemble_stop(&e, SIGKILL, 5000);
	return done_testing();
}
