/* t/115-console-job.c: a job's page in the web console, in a real headless Chromium
 * (t/console/115-job.py) against a real cluster: one ZooKeeper, two supervisors (127.0.0.1,
 * 127.0.0.2) with script jobs that record each run ("FIRE_ID ITEM JOB_PARAMETER" in runs.JOB):
 * op (never fires by its cron: it runs when triggered), tick (3 items, every 2 s) and edit (a
 * nightly cron), and `ejobctl serve --auth` (an admin, an operator, a viewer). The driver, as the
 * admin:
 *   - triggers op from its page with a parameter: its run appears in the page (each item's last
 *     run) without a reload; the API has it, and the run's record here has the parameter;
 *   - disables tick's item 1: the page says disabled (ejobctl status --json too), and at the next
 *     fires the item is skipped (the page says so, its last run stays while the others move);
 *   - edits edit's cron in the form: a bad one is refused with the check's message under the
 *     field and the config unchanged; in the YAML editor the same message at its line; a good one
 *     saved: the page shows the new next fire, as the API computes it;
 *   - a change made meanwhile (the API, as someone else): saving is refused (409), and Reload
 *     loads theirs;
 *   - shuts op down on one instance after a confirmation (Escape cancels: nothing done; Tab to the
 *     button and Enter confirms), and removes a job after typing its name.
 * Screenshots of the pages under build/screenshots/. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tsup.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"
#include "t/lib/tbrowser.h"

static struct tzkup u;
static struct tserve sv;

/* "runs JOB": the last line JOB's script recorded */
static const char *act(void *arg, const char *cmd)
{
	(void)arg;
	static char out[512];
	char path[700];
	if (strncmp(cmd, "runs ", 5)) return "unknown command";
	snprintf(path, sizeof path, "%s/runs.%s", tlib_tmpdir(), cmd + 5);
	char *t = tsup_slurp(path);
	if (!t) return "none";
	size_t n = strlen(t);
	while (n && t[n - 1] == '\n') t[--n] = 0;
	const char *last = strrchr(t, '\n') ? strrchr(t, '\n') + 1 : t;
	snprintf(out, sizeof out, "%s", last);
	free(t);
	return out;
}

int main(void)
{
	tlib_init(150);
	tbrowser_require();
	tzkup_start(&u, 200, "t115", 4000);
	char rec[600], sh[900], jobs[4096];
	snprintf(sh, sizeof sh, "#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_JOB_PARAMETER\" >> %s/runs.$EJOB_JOB\n", tlib_tmpdir());
	tlib_script(rec, sizeof rec, "rec.sh", sh);
	snprintf(jobs, sizeof jobs,
	         "  op:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n    failover: true\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  tick:\n    type: script\n    cron: \"0/2 * * * * ?\"\n    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  edit:\n    type: script\n    cron: \"0 0 3 * * ?\"\n    shardingTotalCount: 2\n    description: nightly\n"
	         "    props: {script.command.line: \"%s\"}\n", rec, rec, rec);
	struct tsup s[2];
	tzkup_run_n(&u, s, 2, "workers: 2", jobs);
	const char *names[] = { "op", "tick", "edit" };
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < 2; i++)
			if (!tzkup_wait_registered(&u, names[j], s[i].id, 0, 20000)) BAIL_OUT("%s did not register %s", s[i].id, names[j]);
	pass("two supervisors run op, tick and edit");

	tbrowser_serve(&sv, &u);
	struct tbrowser_env e;
	const char *const *env = tbrowser_env(&e, &sv, &u);
	tbrowser_run("t/console/115-job.py", env, act, NULL, 120);

	tserve_stop(&sv);
	for (int i = 0; i < 2; i++) tsup_stop(&s[i], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
