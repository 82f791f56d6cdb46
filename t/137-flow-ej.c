/* t/137-flow-ej.c: a workflow in a mixed cluster (docs/config.md "Workflows"), on a real ZooKeeper
 * with a real ElasticJob-Lite 3.0.4 instance of job B beside an ejob supervisor:
 *   A (2 items, ejob only) -> B (2 items: ejob and ElasticJob) -> D (2 items, ejob only).
 * ElasticJob starts first with B as a cron job (its launcher needs one) and publishes it; the
 * supervisor's file makes B ejob's (dependsOn, no cron: overwrite), which ElasticJob takes as a
 * one-off job (RescheduleListenerManager). A run (A triggered): the ElasticJob instance takes its
 * trigger node and runs its item of B in the run, the supervisor that fired B records it once its
 * running node goes, and D then runs once, each item once, after both of B's items ended. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tej.h"
#include "t/lib/tflow.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define NS "t137"
#define SESSION_MS 4000

static char logp[600];

static int d_ended(void *arg)
{
	(void)arg;
	tflow_read(logp);
	return tflow_count("end", "D", -1, 0) >= 2;
}

static struct tzkup u;
static struct tej ej;

static int ej_one_off(void *arg)
{
	(void)arg;
	/* B's node is the supervisor's (dependsOn, no cron), and ElasticJob is still an instance of it */
	const char *cfg = tzkup_data(&u, tzkup_path(&u, "B", "config"));
	return strstr(cfg, "ejob.dependsOn: A") && !strstr(cfg, "cron:") &&
	       !tzkup_missing(&u, tzkup_path(&u, "B", "instances/%s", ej.id));
}

int main(void)
{
	tlib_init(180);
	if (!tej_launcher()) {
		struct tej none;
		ok(tej_start(&none, "none", "", "", "", "", 0, 0, "", 0, NULL, NULL) == 0,
		   "ElasticJob-Lite 3.0.4's launcher is there (this test needs the real ElasticJob)");
		return done_testing();
	}
	tzkup_start(&u, 200, NS, SESSION_MS);
	char sh[600];
	snprintf(logp, sizeof logp, "%s/runs.log", tlib_tmpdir());
	tflow_script(sh, sizeof sh, logp);

	/* ElasticJob first: B as it knows it, a cron job that never fires */
	const char *o[] = { "ip=127.0.0.11", NULL };
	if (tej_start(&ej, "ej", u.connect, NS, "B", "0 0 0 1 1 ? 2099", 2, 1, sh, SESSION_MS, NULL, o) < 0)
		BAIL_OUT("cannot start the ElasticJob instance");
	ok(!tzkup_missing(&u, tzkup_path(&u, "B", "config")), "ElasticJob published B (%s)", ej.id);

	char jobs[4096];
	snprintf(jobs, sizeof jobs,
	         "  A:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  B:\n    type: script\n    dependsOn: [A]\n    shardingTotalCount: 2\n    failover: true\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  D:\n    type: script\n    dependsOn: [B]\n    shardingTotalCount: 2\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s\"}\n",
	         sh, sh, sh);
	struct tsup s;
	tzkup_config(&u, &s, "s0", "workers: 4, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &s, "127.0.0.1");
	ok(tzkup_wait_registered(&u, "B", s.id, 0, 20000) && tzkup_wait_registered(&u, "D", s.id, 0, 20000),
	   "the supervisor registered A, B and D");
	ok(tlib_wait_for(ej_one_off, NULL, 15000), "B's config node is the supervisor's (dependsOn, no cron); ElasticJob "
	   "is still an instance of B");

	char *out = NULL, *err = NULL;
	is_int(tzkup_ctl(&u, &out, &err, "trigger", "A", NULL), 0, "ejobctl trigger A: a run");
	free(out), free(err);
	ok(tlib_wait_for(d_ended, NULL, 40000), "D's two items ended");
	usleep(1500000);
	tflow_read(logp);
	unsigned long long run = 0;
	for (int i = 0; i < tflow_n; i++)
		if (!strcmp(tflow_lines[i].job, "A")) run = tflow_lines[i].run;
	ok(tflow_count("start", "B", 0, 0) == 1 && tflow_count("start", "B", 1, 0) == 1 && tflow_count("end", "B", -1, 0) == 2,
	   "B: each item ran once");
	int on_ej = 0;
	for (int i = 0; i < tflow_n; i++)
		if (!strcmp(tflow_lines[i].kind, "start") && !strcmp(tflow_lines[i].job, "B") && strstr(tflow_lines[i].task, ej.id)) on_ej++;
	is_int(on_ej, 1, "  one of them on the ElasticJob instance, in the run");
	ok(tflow_edge("start", "B", 0, 0) > tflow_edge("end", "A", 0, 1), "  both after A's items ended");
	ok(tflow_count("start", "D", 0, 0) == 1 && tflow_count("start", "D", 1, 0) == 1 && tflow_count("end", "D", -1, 0) == 2,
	   "D: each item ran once");
	ok(tflow_edge("start", "D", 0, 0) > tflow_edge("end", "B", 0, 1), "  after both of B's items ended, the ElasticJob one too");
	int d_in_run = 1;
	for (int i = 0; i < tflow_n; i++)
		if (!strcmp(tflow_lines[i].job, "D")) d_in_run &= tflow_lines[i].run == run && run;
	ok(d_in_run, "  in run %llu (EJOB_WORKFLOW_RUN)", run);
	int proxied = 0;
	for (int i = 0; i < 2; i++)
		proxied += strstr(tzkup_data(&u, tzkup_path(&u, "B", "ejob-flow/runs/%llu/%d.ok", run, i)),
		                  "an ElasticJob instance") != NULL;
	is_int(proxied, 1, "B's part of the run: the ElasticJob instance's item recorded ok by the supervisor");
	tej_stop(&ej, 10000);
	return done_testing();
}
