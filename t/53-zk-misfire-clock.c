/* t/53-zk-misfire-clock.c: misfire flags per item, the clock check and reconcile, against real
 * ZooKeeper servers:
 *   - a fire that finds an item's running node held by someone else sets sharding/{i}/misfire and
 *     skips the item; when that running node goes the item runs once more at once (misfire: true)
 *     and the flag is deleted; with misfire: false the flag is deleted and nothing runs;
 *   - a ZooKeeper server whose clock is 120 s ahead (libfaketime on its JVM): a job with
 *     maxTimeDiffSeconds: 60 refuses its fires and says why, a job without the check runs;
 *   - reconcile (reconcileIntervalMinutes: 1): an item assigned behind the leader's back to an
 *     instance that is not online is resharded. */
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

#define FAKETIME_LIB "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM\" >> \"$OUT\"\n";

static long long now_ms(void) { return tlib_wall_ns() / 1000000; }

/* runs of item recorded after `after` (ms); those with a fire id that is not a whole second (a
 * misfire's run again) in *odd */
static int runs(const char *path, long long after, int item, int *odd)
{
	char *t = tsup_slurp(path);
	int n = 0;
	if (odd) *odd = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long f;
		int i;
		if (sscanf(p, "%lld %d", &f, &i) != 2 || f <= after || i != item) continue;
		n++;
		if (odd && f % 1000) (*odd)++;
	}
	free(t);
	return n;
}

/* item ran in a fire after `after` (ms); with misfire, in a misfire's run (a fire id of its own) */
struct since { const char *path; long long after; int item, misfire; };
static int ran_since(void *arg)
{
	const struct since *w = arg;
	int odd = 0, n = runs(w->path, w->after, w->item, &odd);
	int yes = w->misfire ? odd > 0 : n > 0;
	if (!yes) usleep(20000);
	return yes;
}

/* create a foreign running node for item 0, between the job's own fires */
static int hold_running(zhandle_t *zh, const char *path)
{
	for (int k = 0; k < 200; k++) {
		int rc = zoo_create(zh, path, "10.9.9.9@-@1", 12, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
		if (rc == ZOK) return ZOK;
		usleep(20000);
	}
	return -1;
}

int main(void)
{
	tlib_init(240);
	struct tzkup u;
	struct tzk_server zkf;
	tzkup_start(&u, 200, "t53", 3000);
	int have_faketime = access(FAKETIME_LIB, R_OK) == 0;
	char sh[300], out_mis[300], out_nom[300], out_rec[300], out_clk[300], out_noc[300], jobs[4096];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out_mis, sizeof out_mis, "%s/mis", tlib_tmpdir());
	snprintf(out_nom, sizeof out_nom, "%s/nomis", tlib_tmpdir());
	snprintf(out_rec, sizeof out_rec, "%s/rec", tlib_tmpdir());
	snprintf(out_clk, sizeof out_clk, "%s/clk", tlib_tmpdir());
	snprintf(out_noc, sizeof out_noc, "%s/noclk", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  mis:\n"
	         "    type: script\n"
	         "    cron: \"0/3 * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    maxTimeDiffSeconds: 60\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
	         "  nomis:\n"
	         "    type: script\n"
	         "    cron: \"0/3 * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    misfire: false\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
	         "  rec:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    reconcileIntervalMinutes: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out_mis, sh, out_nom, sh, out_rec, sh);
	struct tsup a, f;
	tzkup_config(&u, &a, "a", "workers: 3", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	long long start_ms = now_ms();
	zhandle_t *zh = u.zh;
	const char *id = a.id;

	/* reconcile: item 1 of rec assigned to an instance that is not online, behind everyone's back
	 * (once it runs here: this instance has read the assignment) */
	ok(tsup_wait_lines(out_rec, " 1", 1, 15000), "rec is sharded and runs here");
	is_int(zoo_set(zh, "/t53/rec/sharding/1/instance", "10.9.9.9@-@1", 12, -1), ZOK,
	       "rec's sharding/1/instance set to an instance that is not online");

	/* ---- misfire ---- */
	ok(tsup_wait_lines(out_mis, " 0", 1, 10000) && tsup_wait_lines(out_nom, " 0", 1, 10000), "mis and nomis fire");
	is_int(hold_running(zh, "/t53/mis/sharding/0/running"), ZOK, "a foreign running node holds mis's item 0");
	is_int(hold_running(zh, "/t53/nomis/sharding/0/running"), ZOK, "and nomis's item 0");
	long long t0 = now_ms();
	ok(tsup_wait_log(&a, "job mis: item 0 is still running from an earlier fire", 1, 5000),
	   "mis's next fire finds item 0 running: misfire, and says so");
	ok(tsup_wait_log(&a, "job nomis: item 0 is still running from an earlier fire", 1, 5000), "nomis's too");
	/* (the log line comes before the create's answer) */
	ok(tzk_wait_exists(zh, "/t53/mis/sharding/0/misfire", 1, 3000), "sharding/0/misfire is set");
	ok(tzk_wait_exists(zh, "/t53/nomis/sharding/0/misfire", 1, 3000), "for nomis too");
	usleep(3500000);
	int odd;
	is_int(runs(out_mis, t0, 0, NULL), 0, "mis's item 0 does not run while it runs elsewhere");
	ok(runs(out_mis, t0, 1, NULL) >= 1, "item 1 does");
	long long t1 = now_ms();
	is_int(zoo_delete(zh, "/t53/mis/sharding/0/running", -1), ZOK, "the foreign run of mis's item 0 ends");
	is_int(zoo_delete(zh, "/t53/nomis/sharding/0/running", -1), ZOK, "and nomis's");
	ok(tlib_wait_for(ran_since, &(struct since){ out_mis, t1, 0, 1 }, 3000), "mis's item 0 runs again at once");
	ok(tsup_wait_log(&a, "job nomis: item 0: its misfire is dropped", 1, 3000), "nomis's is dropped, saying so");
	ok(tzk_wait_exists(zh, "/t53/mis/sharding/0/misfire", 0, 3000), "mis's misfire flag is deleted");
	ok(tzk_wait_exists(zh, "/t53/nomis/sharding/0/misfire", 0, 3000), "nomis's too");
	usleep(300000);
	runs(out_mis, t1, 0, &odd);
	is_int(odd, 1, "mis's item 0 ran once as the misfire's run");
	runs(out_nom, t1, 0, &odd);
	is_int(odd, 0, "nomis's item 0 did not");
	ok(tzk_wait_exists(zh, "/t53/mis/sharding/0/running", 0, 3000), "its running node is gone after the run");

	/* ---- the clock ---- */
	/* (libfaketime makes the JVM spin on both cores: it runs only for this part) */
	if (have_faketime) {
		setenv("LD_PRELOAD", FAKETIME_LIB, 1);
		setenv("FAKETIME", "+120s", 1);
		setenv("FAKETIME_DONT_FAKE_MONOTONIC", "1", 1);
		int rc = tzk_start(&zkf, "zkf", &(struct tzk_opts){ .tick_ms = 200 }, 30000);
		unsetenv("LD_PRELOAD");
		unsetenv("FAKETIME");
		unsetenv("FAKETIME_DONT_FAKE_MONOTONIC");
		if (rc < 0) BAIL_OUT("cannot start ZooKeeper under libfaketime");
	}
	struct tzkup uf;
	if (have_faketime) {
		tzkup_on(&uf, zkf.connect, "t53f", 3000);
		snprintf(jobs, sizeof jobs,
		         "  clk:\n"
		         "    type: script\n"
		         "    cron: \"* * * * * ?\"\n"
		         "    shardingTotalCount: 1\n"
		         "    maxTimeDiffSeconds: 60\n"
		         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
		         "  noclk:\n"
		         "    type: script\n"
		         "    cron: \"* * * * * ?\"\n"
		         "    shardingTotalCount: 1\n"
		         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
		         out_clk, sh, out_noc, sh);
		tzkup_config(&uf, &f, "f", "workers: 2", jobs);
		tzkup_run(&uf, &f, "127.0.0.5");
	}
	if (have_faketime) {
		ok(tsup_wait_log(&f, "job clk: this machine's clock is ", 1, 10000), "f measures its clock against ZooKeeper's");
		char *log = tsup_log_text(&f);
		const char *m = log ? strstr(log, "job clk: this machine's clock is ") : NULL;
		double off = m ? strtod(m + strlen("job clk: this machine's clock is "), NULL) : 0;
		ok(off > 118 && off < 122, "%.1fs behind (ZooKeeper's clock runs 120 s ahead)", off);
		ok(m && strstr(m, "behind ZooKeeper's (maxTimeDiffSeconds: 60): its fires are refused"), "and says why");
		free(log);
		ok(tsup_wait_log(&f, "does not run here: this machine's clock is", 1, 5000), "fires of clk are refused, each saying why");
		ok(tsup_wait_lines(out_noc, " 0", 2, 8000), "noclk (no check) runs on the same server");
		is_int(tsup_count_lines(out_clk, " "), 0, "clk never ran");
		int st = tsup_stop(&f, SIGTERM, 15000);
		ok(WIFEXITED(st) && !WEXITSTATUS(st), "f stops cleanly");
		tzkup_end(&uf);
		tzk_stop(&zkf, SIGKILL, 5000);
	} else {
		skip(7, "libfaketime is not installed (tools/install-deps installs faketime)");
	}
	is_int(tsup_log_count(&a, "clock is"), 0, "a's clock agrees with its ZooKeeper's: no complaint");

	/* ---- reconcile ---- */
	long long left = 75000 - (now_ms() - start_ms);
	ok(tzk_wait_data(zh, "/t53/rec/sharding/1/instance", id, left > 0 ? (unsigned)left : 1),
	   "the leader's reconcile finds item 1 assigned to an instance that is not online, and reshards it");
	long long t2 = now_ms();
	ok(tlib_wait_for(ran_since, &(struct since){ out_rec, t2, 1, 0 }, 3000), "item 1 runs here again at the next fire");

	ok(tsup_alive(a.pid), "a is still running");
	int st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "a stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
