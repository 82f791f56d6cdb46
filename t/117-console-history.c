/* t/117-console-history.c: the web console's history, in a real headless Chromium
 * (t/console/117-history.py) on a real PostgreSQL 15 (t/lib/tpg): two supervisors write
 * ElasticJob's tables (tracing: RDB) while flaky fires every second (its item 1 prints two lines
 * and exits 2) until enough rows are there (then it is disabled, so the rows stay as they are);
 * job old has 60 rows written here as ElasticJob writes them, one a minute two hours ago (every
 * fifth failed, with its output). `ejobctl serve --auth --pg`. The driver, as the viewer:
 *   - searches old 20 rows a page: each page the API's (the cursor), Older to the last page (no
 *     more), Newer back;
 *   - filters by outcome, item and ip, and by a time range typed into the form: what the API says;
 *   - a failed row's cause and the output its item printed (flaky item 1's two lines);
 *   - flaky's chart: one dot per run, the counts of ok and failed the API's;
 *   - every job at once (GET /api/v1/history, when serve has it), and a job's page's history;
 * screenshots under build/screenshots/. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "t/lib/tlib.h"
#include "t/lib/tpg.h"
#include "t/lib/tserve.h"
#include "t/lib/tsup.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"
#include "t/lib/tbrowser.h"

static struct tzkup u;
static struct tserve sv;
static struct tpg pg;

static PGconn *db;

/* the first column of the first row of a query, -1 if none (a connection of this test's own) */
static long num(const char *sql)
{
	if (!db || PQstatus(db) != CONNECTION_OK) {
		PQfinish(db);
		db = PQconnectdb(pg.url);
	}
	PGresult *r = PQexec(db, sql);
	long v = -1;
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 && !PQgetisnull(r, 0, 0)) v = atol(PQgetvalue(r, 0, 0));
	PQclear(r);
	return v;
}

int main(void)
{
	tlib_init(180);
	tbrowser_require();
	tpg_start(&pg, "pg");
	tpg_tables(&pg);
	long long base = ((long long)time(NULL) / 60 - 120) * 60000;   /* a whole minute, two hours ago */
	for (int i = 0; i < 60; i++) {
		char st[40], en[40], sql[1200];
		tpg_local(base + i * 60000LL, st, sizeof st);
		tpg_local(base + i * 60000LL + 250 + i * 10, en, sizeof en);
		int bad = i % 5 == 0;
		char cause[128] = "NULL";
		if (bad) snprintf(cause, sizeof cause, "'failed (exit 1)\nlast output:\nold line %d\n'", i);
		snprintf(sql, sizeof sql,
		         "INSERT INTO job_execution_log (id, job_name, task_id, hostname, ip, sharding_item, execution_source, "
		         "failure_cause, is_success, start_time, complete_time) VALUES ('old-%02d', 'old', "
		         "'old@-@%d@-@READY@-@10.0.0.%d@-@42', 'host%d', '10.0.0.%d', %d, 'NORMAL_TRIGGER', %s, %s, '%s', '%s')",
		         i, i % 3, 1 + i % 2, 1 + i % 2, 1 + i % 2, i % 3, cause, bad ? "false" : "true", st, en);
		tpg_exec(&pg, sql);
	}
	pass("PostgreSQL on port %d with ElasticJob's tables; job old's 60 rows", pg.port);

	tzkup_start(&u, 200, "t117", 4000);
	char fl[600], jobs[1024], sup[1024];
	tlib_script(fl, sizeof fl, "flaky.sh",
	            "#!/bin/sh\nif [ \"$EJOB_ITEM\" = 1 ]; then echo 'copying /var/spool/in'; echo 'ERROR: disk full on /var'; exit 2; fi\n");
	snprintf(jobs, sizeof jobs, "  flaky:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s\"}\n", fl);
	snprintf(sup, sizeof sup, "workers: 2}\ntracing: {type: RDB, url: \"%s\", spoolDir: \"@DIR@/spool\"", pg.url);
	struct tsup s[2];
	tzkup_run_n(&u, s, 2, sup, jobs);
	for (int i = 0; i < 2; i++)
		if (!tzkup_wait_registered(&u, "flaky", s[i].id, 0, 20000)) BAIL_OUT("%s did not register flaky", s[i].id);
	uint64_t end = tlib_now_ms() + 30000;
	while (num("SELECT count(*) FROM job_execution_log WHERE job_name = 'flaky' AND complete_time IS NOT NULL") < 12 &&
	       tlib_now_ms() < end)
		usleep(200000);
	char *out = NULL, *err = NULL;
	if (tzkup_ctl(&u, &out, &err, "disable", "flaky", NULL) != 0) BAIL_OUT("ejobctl disable flaky: %s", err);
	/* the rows stay as they are once no fire runs: none new for 3 s, none running */
	long n = -1, m;
	end = tlib_now_ms() + 20000;
	while (tlib_now_ms() < end) {
		usleep(3000000);
		m = num("SELECT count(*) FROM job_execution_log WHERE job_name = 'flaky'");
		if (m == n && num("SELECT count(*) FROM job_execution_log WHERE complete_time IS NULL") == 0) break;
		n = m;
	}
	ok(n >= 12, "flaky ran %ld items, written by the supervisors' tracing, then was disabled", n);

	char auth[600], line[2048];
	snprintf(auth, sizeof auth, "%s/users", tlib_tmpdir());
	char *ha = tserve_hash("adm-pass"), *hv = tserve_hash("view-pass");
	snprintf(line, sizeof line, "adm:%s:admin\nview:%s:viewer\n", ha, hv);
	tlib_write_file(auth, line, strlen(line));
	free(ha), free(hv), free(out), free(err);
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, "--auth", auth, "--pg", pg.url, NULL };
	tserve_start(&sv, "serve", args);

	char url[128], zk[300], ns[100], ob[64];
	snprintf(url, sizeof url, "EJOB_URL=http://127.0.0.1:%d", sv.port);
	snprintf(zk, sizeof zk, "EJOB_ZK=%s", u.connect);
	snprintf(ns, sizeof ns, "EJOB_NS=%s", u.ns);
	snprintf(ob, sizeof ob, "EJOB_OLD_BASE=%lld", base);
	const char *env[] = { url, zk, ns, ob, "EJOB_USERS=adm:adm-pass:admin view:view-pass:viewer", "EJOB_CTL=" BUILT("tools/ejobctl"), NULL };
	tbrowser_run("t/console/117-history.py", env, NULL, NULL, 120);

	tserve_stop(&sv);
	for (int i = 0; i < 2; i++) tsup_stop(&s[i], SIGTERM, 10000);
	tzkup_end(&u);
	PQfinish(db);
	tpg_close();
	tpg_stop(&pg);
	return done_testing();
}
