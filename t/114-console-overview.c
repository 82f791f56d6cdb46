/* t/114-console-overview.c: the web console's overview and jobs table, in a real headless Chromium
 * (t/console/114-overview.py, through t/lib/tbrowser) against a real cluster: one ZooKeeper, two
 * supervisors (127.0.0.1, 127.0.0.2) running four script jobs (ok1 fires every 2 s; fails, whose
 * item 1 prints two lines and exits 3; nightly, which never fired; off, disabled in its config),
 * and `ejobctl serve --auth` with an admin, an operator and a viewer. What the driver checks:
 *   - the console as served: GET / and /assets/ with no credentials (the login form loads), the
 *     Content-Security-Policy and the other headers, ETag and 304, gzip, 404 and 405;
 *   - the login form (a wrong password said so), then the overview: every job of the cluster with
 *     its health (as GET /api/v1/jobs says), the failing item with its cause and output tail;
 *   - the overview updating itself (a job disabled through the API shows DISABLED, and the
 *     write in "what changed") without a reload and without losing the scroll position;
 *   - the jobs table: filter, health select, sort by a column with the keyboard;
 *   - a phone's width (390x844): no sideways scrolling; no script error or CSP violation;
 *   - logout: the login form again, and the old session refused.
 * Screenshots of each page under build/screenshots/. */
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

int main(void)
{
	tlib_init(150);
	tbrowser_require();
	tzkup_start(&u, 200, "t114", 4000);
	char fail[600], jobs[2048];
	tlib_script(fail, sizeof fail, "fail.sh",
	            "#!/bin/sh\necho \"connecting to db1 (item $EJOB_ITEM)\"\n"
	            "if [ \"$EJOB_ITEM\" = 1 ]; then echo 'ERROR: relation \"bills\" does not exist'; exit 3; fi\n");
	snprintf(jobs, sizeof jobs,
	         "  ok1:\n    type: script\n    cron: \"0/2 * * * * ?\"\n    shardingTotalCount: 2\n    description: every two seconds\n"
	         "    props: {script.command.line: /bin/true}\n"
	         "  fails:\n    type: script\n    cron: \"0/2 * * * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  nightly:\n    type: script\n    cron: \"0 0 3 * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: /bin/true}\n"
	         "  off:\n    type: script\n    cron: \"0 0 3 * * ?\"\n    disabled: true\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: /bin/true}\n", fail);
	struct tsup s[2];
	tzkup_run_n(&u, s, 2, "workers: 2", jobs);
	const char *names[] = { "ok1", "fails", "nightly", "off" };
	for (int j = 0; j < 4; j++)
		for (int i = 0; i < 2; i++)
			if (!tzkup_wait_registered(&u, names[j], s[i].id, 0, 20000)) BAIL_OUT("%s did not register %s", s[i].id, names[j]);
	pass("two supervisors run ok1, fails, nightly and off");

	tbrowser_serve(&sv, &u);
	struct tbrowser_env e;
	const char *const *env = tbrowser_env(&e, &sv, &u);
	tbrowser_run("t/console/114-overview.py", env, NULL, NULL, 120);

	tserve_stop(&sv);
	for (int i = 0; i < 2; i++) tsup_stop(&s[i], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
