/* t/lib/tbrowser.h: the web console's tests in a real browser. A C test sets up what the console
 * shows (a real ZooKeeper, real supervisors, `ejobctl serve`), then runs a driver, t/console/NAME.py
 * (Python with selenium, driving Debian's headless chromium through chromedriver; t/118's drives
 * firefox-esr through Marionette, t/console/marionette.py), that uses the
 * page as a user does and prints what it checked as TAP lines; they are relayed here as the C
 * test's own checks. The driver may ask the C test to act on the processes it owns (kill a
 * supervisor, stop ZooKeeper): a line "@ WORDS" on its stdout gets the answer of act() on its
 * stdin, one line. Its stderr is the test's (its diagnostics reach prove as they are).
 *
 * The driver runs in a process group of its own (chromedriver and chromium are in it), tracked by
 * t/lib/tlib: killed at the end of the run, at the test's exit, on a failure that ends it, on a
 * fatal signal or when the watchdog fires. */
#ifndef EJOB_TBROWSER_H
#define EJOB_TBROWSER_H

struct tserve;
struct tzkup;

/* `ejobctl serve --auth` on u's cluster, as sv ("serve"), with the console tests' three users:
 * adm (admin), oper (operator), view (viewer), passwords adm-pass, oper-pass, view-pass. */
void tbrowser_serve(struct tserve *sv, const struct tzkup *u);

/* The drivers' environment for sv and u: EJOB_URL, EJOB_ZK, EJOB_NS, EJOB_USERS (the three users
 * above), EJOB_CTL; e->v, NULL-terminated, is what tbrowser_run takes. */
struct tbrowser_env {
	char url[128], zk[300], ns[100];
	const char *v[6];
};
const char *const *tbrowser_env(struct tbrowser_env *e, const struct tserve *sv, const struct tzkup *u);

/* what the driver asked ("kill s1"): the one-line answer ("ok", or why not); arg is tbrowser_run's */
typedef const char *(*tbrowser_act)(void *arg, const char *cmd);

/* Fail the test (BAIL_OUT, naming tools/install-deps) unless /usr/bin/chromium, /usr/bin/chromedriver
 * and python3-selenium (for /usr/bin/python3) are there. */
void tbrowser_require(void);

/* Run /usr/bin/python3 DRIVER (a path from the repository's root) with the environment variables
 * env ("NAME=VALUE", NULL-terminated) beside the test's own and these:
 *   EJOB_SHOTS   build/screenshots (made if missing): where it saves each page's screenshot
 *   EJOB_TMP     tlib_tmpdir()
 * Each "ok - ...", "not ok - ..." and "ok - ... # SKIP why" line becomes a check of this test
 * (through check(), which is the test's: tap.h's counters are each file's own, so the macro below
 * passes the including test's); "Bail out! ..." a failed one that ends the run. At most timeout_s
 * seconds, then its group is killed and that is a failed check. Returns the checks it failed (a
 * driver that ended badly, exit status other than 0 with no failed check, counts 1). */
typedef void (*tbrowser_check)(int pass, const char *name, const char *skip_why);
int tbrowser_run_(const char *driver, const char *const *env, tbrowser_act act, void *arg, unsigned timeout_s,
                  tbrowser_check check);

/* a test's tbrowser_run (include t/tap.h before this header; a benchmark, without tap.h, gives
 * tbrowser_run_ a check() of its own) */
#ifdef EJOB_TAP_H
__attribute__((unused)) static void tbrowser_check_here(int pass_, const char *name, const char *skip_why)
{
	if (skip_why) skip(1, skip_why);
	else tap_ok(pass_, "the driver", 0, "%s", name);
}
#define tbrowser_run(driver, env, act, arg, timeout_s) \
	tbrowser_run_((driver), (env), (act), (arg), (timeout_s), tbrowser_check_here)
#endif

#endif
