/* t/138-flow-outage.c: workflows (docs/config.md "Workflows") through a ZooKeeper outage and a
 * leader change, on a real ZooKeeper and three real supervisors: A (2 items) -> B (2) -> D (2).
 *   - ZooKeeper frozen (SIGSTOP) for 2.5 s while B's items end: their records, the downstream
 *     instances' watches and the decision all wait for the connection; D then runs once, each
 *     item once, after B;
 *   - the supervisor that leads D (and B) stopped (SIGTERM) while A runs: another leads, and the
 *     run goes on: B and D once, each item once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tflow.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define NSUP 3

static struct tzkup u;
static struct tsup s[NSUP];
static char logp[600];

static unsigned long long trigger_a(unsigned long long after)
{
	char *o = NULL, *e = NULL;
	is_int(tzkup_ctl(&u, &o, &e, "trigger", "A", NULL), 0, "ejobctl trigger A");
	free(o), free(e);
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end; usleep(20000)) {
		tflow_read(logp);
		unsigned long long r = tflow_run_after("A", after);
		if (r) return r;
	}
	return 0;
}

/* each item of job ran once (a start and an end) in run, and started after every item of up ended */
static void once_after(const char *job, int items, const char *up, unsigned long long run)
{
	int once = 1;
	for (int i = 0; i < items; i++) once &= tflow_count("start", job, i, run) == 1 && tflow_count("end", job, i, run) == 1;
	ok(once, "  %s: each of its %d items once in run %llu", job, items, run);
	ok(tflow_edge("start", job, run, 0) > tflow_edge("end", up, run, 1), "  %s after %s's last item ended", job, up);
}

int main(void)
{
	tlib_init(180);
	tzkup_start(&u, 200, "t138", 4000);
	snprintf(logp, sizeof logp, "%s/runs.log", tlib_tmpdir());
	char sh[600], jobs[4096];
	tflow_script(sh, sizeof sh, logp);
	snprintf(jobs, sizeof jobs,
	         "  A:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n    failover: true\n"
	         "    overwrite: true\n    props: {script.command.line: \"%s\"}\n"
	         "  B:\n    type: script\n    dependsOn: [A]\n    shardingTotalCount: 2\n    failover: true\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  D:\n    type: script\n    dependsOn: [B]\n    shardingTotalCount: 2\n    failover: true\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s\"}\n",
	         sh, sh, sh);
	tzkup_run_n(&u, s, NSUP, "workers: 4, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	for (int i = 0; i < NSUP; i++) ok(tzkup_wait_registered(&u, "D", s[i].id, 0, 20000), "s%d registered D", i);

	/* ---- ZooKeeper frozen while B's items end ------------------------------------------------------ */
	tflow_touch("slow-B-0", 1);
	tflow_touch("slow-B-1", 1);
	unsigned long long r1 = trigger_a(0);
	ok(r1 > 0, "run 1: %llu", r1);
	int b = 0;
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end && b < 2; usleep(20000)) {
		tflow_read(logp);
		b = tflow_count("start", "B", -1, r1);
	}
	is_int(b, 2, "B's two items run");
	usleep(2000000);            /* they end 3.2 s after their start: inside the freeze */
	unsigned long long from = (unsigned long long)tlib_wall_ns();
	tzk_pause(&u.zk);
	usleep(2500000);
	tzk_resume(&u.zk);
	unsigned long long to = (unsigned long long)tlib_wall_ns();
	diag("ZooKeeper frozen %.2f s", (double)(to - from) / 1e9);
	tflow_touch("slow-B-0", 0);
	tflow_touch("slow-B-1", 0);
	tflow_read(logp);
	ok(tflow_count("end", "B", -1, r1) == 2 && tflow_edge("end", "B", r1, 1) > from && tflow_edge("end", "B", r1, 1) < to,
	   "B's items ended during the freeze");
	ok(tflow_wait_ends(logp, "D", r1, 2, 30000), "D's two items ended after it");
	usleep(1500000);
	tflow_read(logp);
	once_after("B", 2, "A", r1);
	once_after("D", 2, "B", r1);

	/* ---- the leader of D stopped while A runs -------------------------------------------------------- */
	char leader[200];
	snprintf(leader, sizeof leader, "%s", tzkup_data(&u, tzkup_path(&u, "D", "leader/election/instance")));
	int li = -1;
	for (int i = 0; i < NSUP; i++)
		if (!strcmp(leader, s[i].id)) li = i;
	ok(li >= 0, "s%d leads D", li);
	tflow_touch("slow-A-0", 1);
	tflow_touch("slow-A-1", 1);
	unsigned long long r2 = trigger_a(r1);
	ok(r2 > r1, "run 2: %llu", r2);
	if (li >= 0) {
		int st = tsup_stop(&s[li], SIGTERM, 15000);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "s%d stopped (SIGTERM) while A runs", li);
	}
	tflow_touch("slow-A-0", 0);
	tflow_touch("slow-A-1", 0);
	ok(tflow_wait_ends(logp, "D", r2, 2, 40000), "D's two items ended in run 2");
	usleep(1500000);
	tflow_read(logp);
	ok(strcmp(tzkup_data(&u, tzkup_path(&u, "D", "leader/election/instance")), leader) != 0, "  another leads D now");
	ok(tflow_count("end", "A", 0, r2) >= 1 && tflow_count("end", "A", 1, r2) >= 1, "  A's items ended (one may have "
	   "been handed over by the stop, and ran again)");
	once_after("B", 2, "A", r2);
	once_after("D", 2, "B", r2);
	return done_testing();
}
