/* t/118-console-firefox.c: the web console in headless Firefox ESR (issue 28: current Chromium and
 * Firefox), driven through Marionette, Firefox's own remote protocol (t/console/marionette.py; Debian
 * has no geckodriver, so selenium cannot drive it), by t/console/118-firefox.py through t/lib/tbrowser,
 * against the cluster of t/114: one ZooKeeper, two supervisors (127.0.0.1, 127.0.0.2) running four
 * script jobs (ok1 fires every 2 s; fails, whose item 1 prints two lines and exits 3; nightly, which
 * never fired; off, disabled in its config), and `ejobctl serve --auth`. What the driver checks:
 *   - the console loads (its root, the login form its modules draw) with no script error (an
 *     injected hook: window errors, console.error, CSP violations; and Firefox's own console,
 *     printed to its log);
 *   - the login form: a wrong password said so, the right one logs in;
 *   - the overview lists every job with its health, as GET /api/v1/jobs says;
 *   - the jobs table filters as one types;
 *   - a click on a job opens its page, with its items as GET /api/v1/jobs/NAME has them.
 * Firefox runs in the driver's process group with a fresh profile in the test's tmpdir: killed with
 * it on a failure or a timeout. Screenshots under build/screenshots/firefox-*. */
#include <signal.h>
#include <unistd.h>
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
	if (access("/usr/bin/firefox-esr", X_OK))
		BAIL_OUT("t/118 runs the console in a real headless Firefox: /usr/bin/firefox-esr (package firefox-esr) is missing; tools/install-deps installs it");
	tzkup_start(&u, 200, "t118", 4000);
	char fail[600], jobs[2048];
	tlib_script(fail, sizeof fail, "fail.sh",
	            "#!/bin/sh\necho \"connecting to db1 (item $EJOB_ITEM)\"\n"
	            "if [ \"$EJOB_ITEM\" = 1 ]; then echo 'ERROR: relation \"bills\" does not exist'; exit 3; fi\n"
	            /* item 0 ends ok after item 1 failed: the fire's last end is an ok one */
	            "sleep 0.3\n");
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
	tbrowser_run("t/console/118-firefox.py", env, NULL, NULL, 90);

	tserve_stop(&sv);
	for (int i = 0; i < 2; i++) tsup_stop(&s[i], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
