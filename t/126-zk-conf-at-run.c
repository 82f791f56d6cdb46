/* t/126-zk-conf-at-run.c: a fire runs the config in force when it runs, not the one known
 * when its time came.
 *
 * A fire that waits (for its job's registration, for a reshard) was made with the config known at
 * its time. With overwrite: false the config node is the job's config (docs/config.md): when the
 * node became known or changed while the fire waited, the fire still ran the old one. t/78 saw it
 * in CI: a supervisor started in the last milliseconds of a second made the job's first fire with
 * the file's config while it registered the job, and that fire ran the file's command, not the
 * node's.
 *
 * Deterministic here: the test plays the leader, as t/68 does (ElasticJob's writes). The job fires
 * every second; the leader raises the resharding flag and holds it, so that a fire waits; the
 * operator changes the node's command meanwhile; then the leader shards. The waiting fire runs the
 * new command, and no run after the change takes the old one. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define EJ_ID "10.9.9.9@-@77"

/* the config node as ElasticJob 3.0.4 dumps one, running `rec OUT` */
static void node_of(char *buf, size_t len, const char *out)
{
	int n = snprintf(buf, len,
	                 "cron: '* * * * * ?'\ndescription: ''\ndisabled: false\nfailover: false\njobName: kept\n"
	                 "jobParameter: ''\nmaxTimeDiffSeconds: -1\nmisfire: true\nmonitorExecution: true\n"
	                 "overwrite: false\nprops:\n  script.command.line: %s %s\nreconcileIntervalMinutes: 10\n"
	                 "shardingItemParameters: ''\nshardingTotalCount: 2\nstaticSharding: false\n",
	                 tsup_rec_script(), out);
	if (n < 0 || (size_t)n >= len) BAIL_OUT("node too long");
}

/* runs recorded in path for fires after `after` (ms) */
static int runs_after(const char *path, long long after)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		if (sscanf(l, "%lld", &f) == 1 && f > after) n++;
	}
	free(t);
	return n;
}

int main(void)
{
	tlib_init(60);
	struct tzkup u;
	tzkup_start(&u, 200, "t126", 4000);
	zhandle_t *zh = u.zh;
	char out_a[600], out_b[600], out_file[600], node[2048], jobs[2048];
	snprintf(out_a, sizeof out_a, "%s/runs.a", tlib_tmpdir());
	snprintf(out_b, sizeof out_b, "%s/runs.b", tlib_tmpdir());
	snprintf(out_file, sizeof out_file, "%s/runs.file", tlib_tmpdir());

	/* ElasticJob's leader and its job, whose node runs command A */
	tzkup_ej_leader(&u, "kept", "SCRIPT", EJ_ID);
	node_of(node, sizeof node, out_a);
	tzkup_mk(&u, "/t126/kept/config", node, 0);
	/* the supervisor's file says another command, overwrite: false: the node is in force */
	int w = snprintf(jobs, sizeof jobs,
	                 "  kept:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 2\n"
	                 "    overwrite: false\n    props: {script.command.line: \"%s %s\"}\n",
	                 tsup_rec_script(), out_file);
	if (w < 0 || (size_t)w >= (int)sizeof jobs) BAIL_OUT("config too long");
	static struct tsup a;
	tzkup_config(&u, &a, "a", NULL, jobs);
	tzkup_run(&u, &a, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "kept", a.id, 0, 15000), "the supervisor registers and follows the test's leader");
	ok(tzk_wait_exists(zh, "/t126/kept/leader/sharding/necessary", 1, 5000), "  and raises the resharding flag");
	const char *const mine[2] = { a.id, a.id };
	for (int i = 0; i < 2; i++) tzkup_mk(&u, tzkup_path(&u, "kept", "sharding/%d", i), "", 0);
	is_int(tzkup_ej_shard(&u, "kept", mine, 2, 0, 0), ZOK, "the leader shards: both items to the supervisor");
	ok(tsup_wait_lines(out_a, " ", 4, 8000), "the node's command A runs");

	/* the leader raises the flag and holds it: the next fire waits for the sharding */
	tzkup_mk(&u, "/t126/kept/leader/sharding/necessary", "", 0);
	long long flagged = tlib_wall_ns() / 1000000;
	/* a fire time passes: that fire waits; then the operator changes the node's command */
	usleep((useconds_t)((1000 - flagged % 1000) + 300) * 1000);
	node_of(node, sizeof node, out_b);
	is_int(tzk_set(zh, "/t126/kept/config", node), ZOK, "while a fire waits for the sharding, the node's command "
	       "becomes B");
	long long changed = tlib_wall_ns() / 1000000;
	usleep(300000);
	is_int(tzkup_ej_shard(&u, "kept", mine, 2, 1, 0), ZOK, "the leader shards (both items to the supervisor again)");
	uint64_t end = tlib_now_ms() + 8000;
	while (runs_after(out_b, changed - 1000) < 4 && tlib_now_ms() < end) usleep(100000);
	int b_runs = runs_after(out_b, changed - 1000);
	ok(b_runs >= 4, "command B runs (%d runs), the waiting fire's too", b_runs);
	/* any run of A that started after the change is a fire that ran the config it was made with */
	struct stat st;
	int a_late = 0;
	char *t = tsup_slurp(out_a);
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		if (sscanf(l, "%lld", &f) == 1 && f >= flagged - flagged % 1000 + 1000) a_late++;
	}
	free(t);
	is_int(a_late, 0, "no fire after the flag ran the old command A: the fire that waited ran the config in force "
	       "when it ran");
	char *ran = tsup_slurp(out_file);
	ok((!ran || !*ran) && stat(out_file, &st) != 0, "the file's command never ran (overwrite: false)");
	free(ran);

	int s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "the supervisor stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
