/* t/136-console-workflow.c: the console's workflow pages in a real headless Chromium
 * (t/console/136-workflow.py) against a real ZooKeeper and `ejobctl serve --auth`. The workflows
 * A -> B, C; B, C -> D; B -> E and X -> Y are written by `ejobctl apply`; two runs of A are written
 * by hand as the supervisors leave them (docs/config.md "Workflows"): an older one where every job
 * ended ok, and the newest where A is ok, B has ended 1 of its 2 items, C's item 1 failed for good,
 * D (after B and C) cannot run and E (after B) waits. The driver, as the viewer:
 *   - the Workflows page lists A and X, A's latest run failed, X none yet;
 *   - A's page draws one box per job, laid out by depth, an arrow per dependsOn, each box coloured
 *     by its state in the newest run (A ok green, B running blue, C failed red, D skipped dashed,
 *     E waiting grey), as GET /api/v1/workflows/A/runs says;
 *   - a click on the older run colours every box ok; "show the newest" goes back;
 *   - a job that is not a root: the page says why, with the way back.
 * Screenshots under build/screenshots/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t/lib/tflow.h"
#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"
#include "t/lib/tbrowser.h"

#define R_OLD "1795478400000"
#define R_NEW "1795478460000"
#define I1 "127.0.0.1@-@101"
#define I2 "127.0.0.2@-@202"
#define JOB(name, extra) "  " name ":\n    type: script\n    label: etl\n" \
                         "    props: {script.command.line: /bin/true}\n" extra

static struct tzkup u;

static void part(const char *job, const char *run, const char *data)
{
	tflow_part(&u, job, run, data);
}

static void rec(const char *job, const char *run, const char *name, const char *data)
{
	tflow_rec(&u, job, run, name, data);
}

int main(void)
{
	tlib_init(120);
	tbrowser_require();
	tzkup_start(&u, 200, "t136", 4000);
	char path[600];
	snprintf(path, sizeof path, "%s/wf.yaml", tlib_tmpdir());
	const char *wf = "jobs:\n" JOB("A", "    cron: '0 0 1 * * ?'\n    shardingTotalCount: 2\n")
	                 JOB("B", "    dependsOn: [A]\n    shardingTotalCount: 2\n")
	                 JOB("C", "    dependsOn: [A]\n    shardingTotalCount: 2\n")
	                 JOB("D", "    dependsOn: [B, C]\n    shardingTotalCount: 1\n")
	                 JOB("E", "    dependsOn: [B]\n    shardingTotalCount: 1\n")
	                 JOB("X", "    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n")
	                 JOB("Y", "    dependsOn: [X]\n    shardingTotalCount: 1\n");
	if (tlib_write_file(path, wf, strlen(wf)) < 0) BAIL_OUT("cannot write %s", path);
	char *out = NULL, *err = NULL;
	if (!is_int(tzkup_ctl(&u, &out, &err, "apply", "-f", path, NULL), 0, "apply of the workflows A and X")) diag("%s", err);

	/* the older run: every item of every job ok */
	const char *jobs[] = { "A", "B", "C", "D", "E" };
	for (int k = 0; k < 5; k++) {
		part(jobs[k], R_OLD, k < 3 ? "fired 2 A" : "fired 1 A");
		rec(jobs[k], R_OLD, "0.ok", I1);
		if (k < 3) rec(jobs[k], R_OLD, "1.ok", I2);
	}
	/* the newest: A ok, B 1 of 2, C's item 1 failed; D and E not decided */
	part("A", R_NEW, "fired 2 A");
	rec("A", R_NEW, "0.ok", I1);
	rec("A", R_NEW, "1.ok", I2);
	part("B", R_NEW, "fired 2 A");
	rec("B", R_NEW, "0.ok", I1);
	part("C", R_NEW, "fired 2 A");
	rec("C", R_NEW, "0.ok", I1);
	rec("C", R_NEW, "1.failed", I2 ": failed (exit 3)");
	rec("A", R_NEW, "message", "C 1 " I2);
	pass("two runs of A written: " R_OLD " (ok) and " R_NEW);

	struct tserve sv;
	tbrowser_serve(&sv, &u);
	struct tbrowser_env e;
	const char *const *env = tbrowser_env(&e, &sv, &u);
	const char *more[] = { env[0], env[1], env[2], env[3], env[4], "EJOB_RUN_OLD=" R_OLD, "EJOB_RUN_NEW=" R_NEW, NULL };
	tbrowser_run("t/console/136-workflow.py", more, NULL, NULL, 90);

	tserve_stop(&sv);
	tzkup_end(&u);
	free(out);
	free(err);
	return done_testing();
}
