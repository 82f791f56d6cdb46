/* t/100-adopt-label.c: jobs that live in ZooKeeper, adopted by label (supervisor.labels), with
 * real supervisors on a real ZooKeeper. Three supervisors: s0 and s1 adopt label etl, s2 label web.
 * A job the test writes into ZooKeeper (its config node in the form ejobctl config set writes)
 * runs on s0 and s1 within a fire and nowhere else; its label changed to web moves it to s2;
 * its nodes deleted stop it. An adopted script job whose program is outside allowedCommands
 * (/bin/sh -c 'touch X') never runs: X never exists and s0's metrics count the fires skipped
 * not_allowed. */
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

static char runs[600];

/* lines of the runs file naming instance id (NULL: any) */
static int runs_of(const char *id)
{
	return tsup_count_lines(runs, id ? id : "");
}

/* /{ns}/{job} */
static const char *jroot(const struct tzkup *u, const char *job)
{
	static char b[2][300];
	static int k;
	char *p = b[k++ % 2];
	snprintf(p, sizeof b[0], "/%s/%s", u->ns, job);
	return p;
}

/* write /{ns}/{job} and its config node, as a writer of the namespace does */
static void put_job(struct tzkup *u, const char *job, const char *label, const char *cmd)
{
	char y[1024];
	snprintf(y, sizeof y,
	         "cron: '* * * * * ?'\n"
	         "jobName: %s\n"
	         "label: %s\n"
	         "shardingTotalCount: 2\n"
	         "props:\n"
	         "  ejob.type: script\n"
	         "  script.command.line: %s\n", job, label, cmd);
	if (tzk_exists(u->zh, jroot(u, job), NULL) != ZOK) tzk_create(u->zh, jroot(u, job), "SCRIPT", 0, NULL);
	if (tzk_exists(u->zh, tzkup_path(u, job, "config"), NULL) == ZOK) tzk_set(u->zh, tzkup_path(u, job, "config"), y);
	else tzk_create(u->zh, tzkup_path(u, job, "config"), y, 0, NULL);
}

/* instances/ of job is exactly the ids given (n of them), within timeout_ms */
static int instances_are(struct tzkup *u, const char *job, const char *const *ids, int n, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	do {
		struct String_vector v = { 0 };
		int good = 0;
		if (tzk_children(u->zh, tzkup_path(u, job, "instances"), &v) == ZOK && v.count == n) {
			good = 1;
			for (int k = 0; k < n; k++) {
				int seen = 0;
				for (int i = 0; i < v.count; i++) seen |= !strcmp(v.data[i], ids[k]);
				good &= seen;
			}
		} else if (n == 0 && tzk_exists(u->zh, tzkup_path(u, job, "instances"), NULL) == ZNONODE) {
			good = 1;
		}
		deallocate_String_vector(&v);
		if (good) return 1;
		usleep(50000);
	} while (tlib_now_ms() < end);
	return 0;
}

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 200, "t100", 4000);
	char rec[600], body[900], sup[1200], mport[16];
	snprintf(runs, sizeof runs, "%s/runs", tlib_tmpdir());
	snprintf(body, sizeof body, "#!/bin/sh\necho \"run $EJOB_ITEM $EJOB_TASK_ID\" >> %s\n", runs);
	tlib_script(rec, sizeof rec, "rec.sh", body);
	/* a file job of each: the file's jobs keep their own rules */
	const char *jobs = "  own:\n    type: script\n    shardingTotalCount: 1\n    props: {script.command.line: /bin/true}\n";
	struct tsup s[3];
	int port = tzk_free_port();
	snprintf(mport, sizeof mport, "%d", port);
	snprintf(sup, sizeof sup, "workers: 2, labels: [etl], allowedCommands: [\"%s/*.sh\"], metrics: \"127.0.0.1:%d\"",
	         tlib_tmpdir(), port);
	tzkup_config(&u, &s[0], "s0", sup, jobs);
	snprintf(sup, sizeof sup, "workers: 2, labels: [etl, other], allowedCommands: [\"%s/*.sh\"]", tlib_tmpdir());
	tzkup_config(&u, &s[1], "s1", sup, jobs);
	snprintf(sup, sizeof sup, "workers: 2, labels: [web], allowedCommands: [\"%s/*\"]", tlib_tmpdir());
	tzkup_config(&u, &s[2], "s2", sup, jobs);
	tzkup_run(&u, &s[0], "127.0.0.1");
	tzkup_run(&u, &s[1], "127.0.0.2");
	tzkup_run(&u, &s[2], "127.0.0.3");
	const char *all[3] = { s[0].id, s[1].id, s[2].id };
	ok(instances_are(&u, "own", all, 3, 15000), "the three supervisors register their file's job");

	/* a job written into ZooKeeper with label etl */
	put_job(&u, "adj", "etl", rec);
	ok(instances_are(&u, "adj", all, 2, 10000), "adj (label etl) registers on s0 and s1, not on s2");
	ok(tsup_wait_lines(runs, "run", 2, 5000), "and runs within a fire (every second)");
	usleep(2500000);
	ok(runs_of(s[0].id) > 0 && runs_of(s[1].id) > 0, "on s0 (%d runs) and s1 (%d)", runs_of(s[0].id), runs_of(s[1].id));
	is_int(runs_of(s[2].id), 0, "never on s2 (label web)");

	/* its label changed: it moves */
	put_job(&u, "adj", "web", rec);
	ok(instances_are(&u, "adj", all + 2, 1, 10000), "label web: adj leaves s0 and s1, registers on s2");
	ok(tsup_wait_lines(runs, s[2].id, 1, 5000), "and runs on s2");
	usleep(1500000);
	int n0 = runs_of(s[0].id), n1 = runs_of(s[1].id);
	usleep(2000000);
	ok(runs_of(s[0].id) == n0 && runs_of(s[1].id) == n1, "no run on s0 or s1 any more (%d, %d)", n0, n1);
	ok(s[0].pid > 0 && tsup_alive(s[0].pid) && tsup_alive(s[2].pid), "no restart: the same processes");

	/* deleted: it stops */
	/* the instances running it write under it while it goes: deleted again until it is gone, as
	 * an operator's tool must */
	uint64_t end = tlib_now_ms() + 10000;
	int tries = 0;
	while (tzk_exists(u.zh, jroot(&u, "adj"), NULL) == ZOK && tlib_now_ms() < end) {
		tzk_delete_r(u.zh, jroot(&u, "adj"));
		tries++;
	}
	ok(tzk_exists(u.zh, jroot(&u, "adj"), NULL) == ZNONODE, "adj's nodes are deleted (%d tries)", tries);
	usleep(1500000);
	int n2 = runs_of(s[2].id);
	usleep(2000000);
	is_int(runs_of(s[2].id), n2, "and it runs nowhere any more");
	is_int(tzk_exists(u.zh, jroot(&u, "adj"), NULL), ZNONODE, "nobody wrote its nodes again");

	/* outside allowedCommands: /bin/sh -c 'touch X' never runs; a job inside the glob runs */
	char x[600], cmd[800];
	snprintf(x, sizeof x, "%s/X", tlib_tmpdir());
	snprintf(cmd, sizeof cmd, "\"/bin/sh -c 'touch %s'\"", x);
	put_job(&u, "bad", "etl", cmd);
	put_job(&u, "good", "etl", rec);
	const char *two[2] = { s[0].id, s[1].id };
	ok(instances_are(&u, "good", two, 2, 10000), "good (inside the glob) registers on s0 and s1");
	int g0 = runs_of(NULL);
	ok(tsup_wait_lines(runs, "run", g0 + 2, 5000), "and runs");
	usleep(3000000);
	ok(access(x, F_OK) != 0, "bad's X never exists: its program /bin/sh is outside allowedCommands");
	ok(instances_are(&u, "bad", NULL, 0, 1000), "bad registers nowhere: it takes no item");
	char *m = NULL;
	int code = tlib_http_get(port, "/metrics", &m);
	ok(code == 200 && m && strstr(m, "ejob_fires_skipped_total{job_name=\"bad\",reason=\"not_allowed\"}"),
	   "s0's metrics count bad's fires skipped not_allowed");
	free(m);
	m = NULL;
	code = tlib_http_get(port, "/status", &m);
	ok(code == 200 && m && strstr(m, "\"reason\":\"not_allowed\"") && strstr(m, "/bin/sh") &&
	   strstr(m, "supervisor.allowedCommands"), "s0's /status has the event, naming the program and the key");
	if (m && !strstr(m, "not_allowed")) diag("%s", m);
	free(m);
	ok(tsup_log_count(&s[0], "job bad: refused on this machine") == 1, "said once at WARN");

	for (int i = 0; i < 3; i++) tsup_stop(&s[i], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
