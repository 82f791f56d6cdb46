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
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define NS "t137"
#define SESSION_MS 4000

/* both sides: the sharding context JSON is the last argument; ejob's items also have EJOB_* */
static const char job_sh[] =
	"#!/bin/sh\n"
	"for ctx; do :; done\n"
	"item=${ctx#*\\\"shardingItem\\\":}; item=${item%%%%[,\\}]*}\n"
	"task=${ctx#*\\\"taskId\\\":\\\"}; task=${task%%%%\\\"*}\n"
	"job=${ctx#*\\\"jobName\\\":\\\"}; job=${job%%%%\\\"*}\n"
	"echo \"start $job $item ${EJOB_WORKFLOW_RUN:-0} $(date +%%s%%N) $task\" >> %s/runs.log\n"
	"sleep 0.5\n"
	"echo \"end $job $item ${EJOB_WORKFLOW_RUN:-0} $(date +%%s%%N) $task\" >> %s/runs.log\n";

struct line {
	char kind[8], job[8], task[200];
	int item;
	unsigned long long run, ns;
};
static struct line L[400];
static int nl;
static char logp[600];

static void read_log(void)
{
	nl = 0;
	FILE *f = fopen(logp, "re");
	char buf[512];
	while (f && nl < 400 && fgets(buf, sizeof buf, f)) {
		struct line *l = &L[nl];
		l->task[0] = 0;
		if (sscanf(buf, "%7s %7s %d %llu %llu %199s", l->kind, l->job, &l->item, &l->run, &l->ns, l->task) >= 5) nl++;
	}
	if (f) fclose(f);
}

static int count(const char *kind, const char *job, int item)
{
	int n = 0;
	for (int i = 0; i < nl; i++)
		if (!strcmp(L[i].kind, kind) && !strcmp(L[i].job, job) && (item < 0 || L[i].item == item)) n++;
	return n;
}

static unsigned long long edge(const char *kind, const char *job, int latest)
{
	unsigned long long t = latest ? 0 : ~0ull;
	for (int i = 0; i < nl; i++)
		if (!strcmp(L[i].kind, kind) && !strcmp(L[i].job, job))
			t = latest ? (L[i].ns > t ? L[i].ns : t) : (L[i].ns < t ? L[i].ns : t);
	return t;
}

static int d_ended(void *arg)
{
	(void)arg;
	read_log();
	return count("end", "D", -1) >= 2;
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
	char sh[600], body[2048];
	snprintf(logp, sizeof logp, "%s/runs.log", tlib_tmpdir());
	snprintf(body, sizeof body, job_sh, tlib_tmpdir(), tlib_tmpdir());
	tlib_script(sh, sizeof sh, "job.sh", body);

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
	read_log();
	unsigned long long run = 0;
	for (int i = 0; i < nl; i++)
		if (!strcmp(L[i].job, "A")) run = L[i].run;
	ok(count("start", "B", 0) == 1 && count("start", "B", 1) == 1 && count("end", "B", -1) == 2,
	   "B: each item ran once");
	int on_ej = 0;
	for (int i = 0; i < nl; i++)
		if (!strcmp(L[i].kind, "start") && !strcmp(L[i].job, "B") && strstr(L[i].task, ej.id)) on_ej++;
	is_int(on_ej, 1, "  one of them on the ElasticJob instance, in the run");
	ok(edge("start", "B", 0) > edge("end", "A", 1), "  both after A's items ended");
	ok(count("start", "D", 0) == 1 && count("start", "D", 1) == 1 && count("end", "D", -1) == 2,
	   "D: each item ran once");
	ok(edge("start", "D", 0) > edge("end", "B", 1), "  after both of B's items ended, the ElasticJob one too");
	int d_in_run = 1;
	for (int i = 0; i < nl; i++)
		if (!strcmp(L[i].job, "D")) d_in_run &= L[i].run == run && run;
	ok(d_in_run, "  in run %llu (EJOB_WORKFLOW_RUN)", run);
	int proxied = 0;
	for (int i = 0; i < 2; i++)
		proxied += strstr(tzkup_data(&u, tzkup_path(&u, "B", "ejob-flow/runs/%llu/%d.ok", run, i)),
		                  "an ElasticJob instance") != NULL;
	is_int(proxied, 1, "B's part of the run: the ElasticJob instance's item recorded ok by the supervisor");
	tej_stop(&ej, 10000);
	return done_testing();
}
