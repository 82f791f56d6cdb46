/* t/101-trigger-param.c: ejobctl trigger JOB --parameter P against a real ZooKeeper and a real
 * supervisor, checked by the trigger nodes and by what the script's items saw:
 *   - the trigger node of each instance holds {"parameter":"P"} (ipc/trigdata.h); a pending
 *     trigger with another parameter is not replaced (exit 1, the node as it was);
 *   - the triggered fire's items get P as EJOB_JOB_PARAMETER (and in the context JSON), for that
 *     fire only: the next scheduled fire has the job's own jobParameter again;
 *   - a trigger without a parameter is ElasticJob's (empty node) and runs with the job's own;
 *   - a trigger with a parameter while the job's previous fire still runs is a misfire: its
 *     catch-up runs with the job's own parameter, and P runs nowhere. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;
static char *out, *err;

#define ctl(...) tzkup_ctl(&u, &out, &err, __VA_ARGS__)

/* lines of path that contain needle */
static int count(const char *path, const char *needle)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) n += strstr(p, needle) != NULL;
	free(t);
	return n;
}

int main(void)
{
	tlib_init(60);
	tzkup_start(&u, 200, "t101", 4000);
	char sh[600], r_p[600], r_s[600], jobs[4096];
	/* each item: "FIRE ITEM [EJOB_JOB_PARAMETER] CONTEXT-JSON"; a second argument: sleep that long */
	tlib_script(sh, sizeof sh, "param.sh",
	            "#!/bin/sh\nout=$1; shift\n[ $# -gt 1 ] && { sleep \"$1\"; shift; }\n"
	            "echo \"$EJOB_FIRE_ID $EJOB_ITEM [$EJOB_JOB_PARAMETER] $1\" >> \"$out\"\n");
	snprintf(r_p, sizeof r_p, "%s/runs-p", tlib_tmpdir());
	snprintf(r_s, sizeof r_s, "%s/runs-slow", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  p:\n    type: script\n    cron: \"0/3 * * * * ?\"\n    shardingTotalCount: 2\n    jobParameter: own\n"
	         "    props: {script.command.line: \"%s %s\"}\n"
	         "  slow:\n    type: script\n    shardingTotalCount: 1\n    jobParameter: own\n"
	         "    props: {script.command.line: \"%s %s 2\"}\n",
	         sh, r_p, sh, r_s);
	struct tsup s;
	tzkup_config(&u, &s, "s", "workers: 4", jobs);
	tzkup_run(&u, &s, "127.0.0.1");
	ok(tzkup_wait_registered(&u, "p", s.id, 0, 10000) && tzkup_wait_registered(&u, "slow", s.id, 0, 10000),
	   "the supervisor registers p and slow");

	/* ---- the node: JSON with the parameter; a pending one is not replaced ---- */
	const char *fake = "10.9.9.9@-@1";
	ok(tzk_create(u.zh, tzkup_path(&u, "slow", "instances/%s", fake), "", ZOO_EPHEMERAL, NULL) == ZOK,
	   "an instance that never fires (its node only) for slow");
	is_int(ctl("trigger", "slow", "--parameter", "x\"y", NULL), 0, "trigger slow --parameter 'x\"y': exit 0");
	is_str(tzkup_data(&u, tzkup_path(&u, "slow", "trigger/%s", fake)), "{\"parameter\":\"x\\\"y\"}",
	       "  the idle instance's trigger node holds {\"parameter\":\"x\\\"y\"}");
	ok(tsup_wait_lines(r_s, "[x\"y]", 1, 8000), "  the supervisor's item ran with EJOB_JOB_PARAMETER x\"y");
	is_int(ctl("trigger", "slow", "--parameter", "other", NULL), 1, "another parameter while that one is pending: exit 1");
	ok(strstr(err, "has a trigger pending already") != NULL, "  says a trigger is pending");
	is_str(tzkup_data(&u, tzkup_path(&u, "slow", "trigger/%s", fake)), "{\"parameter\":\"x\\\"y\"}", "  the node as it was");
	ok(tzkup_missing(&u, tzkup_path(&u, "slow", "trigger/%s", s.id)), "  and none written for the supervisor");
	tzk_delete_r(u.zh, tzkup_path(&u, "slow", "trigger/%s", fake));
	tzk_delete_r(u.zh, tzkup_path(&u, "slow", "instances/%s", fake));
	ok(tzkup_wait_ended(&u, "slow", 0, 8000), "slow's triggered fire ended");

	/* ---- that fire only: the next scheduled one has the job's own ---- */
	ok(tsup_wait_lines(r_p, "[own]", 2, 8000), "p's scheduled fire: both items with its own parameter");
	int own0 = count(r_p, "[own]");
	ok(tzkup_wait_ended(&u, "p", 0, 3000) && tzkup_wait_ended(&u, "p", 1, 3000), "  ended");
	is_int(ctl("trigger", "p", "--parameter", "batch=42 \"quoted\"", NULL), 0, "trigger p --parameter 'batch=42 \"quoted\"'");
	ok(tsup_wait_lines(r_p, "[batch=42 \"quoted\"]", 2, 5000), "  both items of that fire got it as EJOB_JOB_PARAMETER");
	ok(count(r_p, "\"jobParameter\":\"batch\\u003d42 \\\"quoted\\\"\"") == 2, "  and as the context JSON's jobParameter");
	ok(tsup_wait_lines(r_p, "[own]", own0 + 2, 8000), "the next scheduled fire ran");
	is_int(count(r_p, "[batch=42"), 2, "  with the job's own parameter: the trigger's ran in its fire only");
	is_int(ctl("trigger", "p", NULL), 0, "trigger p without a parameter");
	int own1 = count(r_p, "[own]");
	ok(tsup_wait_lines(r_p, "[own]", own1 + 2, 5000), "  runs with the job's own parameter");

	/* ---- a trigger with a parameter that misfires ---- */
	int before = count(r_s, "");
	is_int(ctl("trigger", "slow", NULL), 0, "slow triggered (its items sleep 2 s)");
	ok(tzk_wait_exists(u.zh, tzkup_path(&u, "slow", "sharding/0/running"), 1, 5000), "  its item runs");
	is_int(ctl("trigger", "slow", "--parameter", "late", NULL), 0, "trigger slow --parameter late while it runs");
	ok(tsup_wait_lines(r_s, "", before + 2, 10000), "  two runs: the fire and the misfire's catch-up");
	usleep(500000);
	is_int(count(r_s, "") - before, 2, "  no more");
	is_int(count(r_s, "[late]"), 0, "  the catch-up ran with the job's own parameter, 'late' nowhere");
	ok(tsup_log_count(&s, "triggered with parameter 'late' while its previous fire still runs: misfire") == 1,
	   "  the supervisor says it dropped the parameter");
	tsup_stop(&s, SIGTERM, 5000);
	tzkup_end(&u);
	return done_testing();
}
