/* t/76-tracing-pg.c: ElasticJob's RDB tracing (tracing: {type: RDB, url}) into a real PostgreSQL 15
 * server this test starts (initdb in its tmpdir, run as the postgres user, on a free loopback port),
 * from a real supervisor (--standalone, real workers):
 *   - supervisors started together on an empty database create the tables once, quietly, and
 *     every row of each arrives;
 *   - the tables are ElasticJob 3.0.x's (PostgreSQL.properties): every column's type, length and
 *     nullability, the primary keys, TASK_ID_STATE_INDEX;
 *   - one fire with an ok, a failed (retried) and a timed-out item: a JOB_EXECUTION_LOG row per
 *     attempt, field by field; JOB_STATUS_TRACE_LOG TASK_STAGING, TASK_RUNNING, TASK_ERROR with
 *     ElasticJob's messages; an all-ok fire ends TASK_FINISHED;
 *   - PostgreSQL stopped during fires and started again: every run has exactly one row, all
 *     written when it is back;
 *   - PostgreSQL stopped with SIGSTOP, the postmaster and every backend (it accepts, never
 *     answers, the sink's open connection neither): fires stay on time, and every row arrives
 *     once it runs again;
 *   - failover (ZooKeeper, two supervisors, failover: true): the item of a supervisor killed with
 *     SIGKILL runs on the other, whose row says execution_source FAILOVER, as its history line does. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "t/lib/tlib.h"
#include "t/lib/tpg.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tpg pg;

static PGconn *db;

static PGresult *q(const char *sql)
{
	if (!db || PQstatus(db) != CONNECTION_OK) {
		if (db) PQfinish(db);
		db = PQconnectdb(pg.url);
	}
	PGresult *r = PQexec(db, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK && PQstatus(db) != CONNECTION_OK) {
		PQclear(r);     /* the server was restarted since: once more on a new connection */
		PQfinish(db);
		db = PQconnectdb(pg.url);
		r = PQexec(db, sql);
	}
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		/* the tables not there yet is what a wait sees first: not worth a line each time */
		const char *code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
		if (!code || strcmp(code, "42P01")) diag("query failed: %s: %s", sql, PQresultErrorMessage(r));
		PQclear(r);
		return NULL;
	}
	return r;
}

static long long q_int(const char *sql)
{
	PGresult *r = q(sql);
	long long v = r && PQntuples(r) ? atoll(PQgetvalue(r, 0, 0)) : -1;
	PQclear(r);
	return v;
}

struct qwait { const char *sql; long long want; };
static int q_reaches(void *arg)
{
	struct qwait *w = arg;
	usleep(50000);
	return q_int(w->sql) >= w->want;
}

static const char job_sh[] =
	"#!/bin/sh\n"
	"echo \"$EJOB_FIRE_ID $EJOB_ITEM $(date +%s%N)\" >> \"$OUT\"\n"
	"case \"$EJOB_ITEM\" in\n"
	"1) exit 3;;\n"
	"2) exec sleep 5;;\n"
	"esac\n";

/* ElasticJob's DDL, column by column: name, data_type, character_maximum_length, is_nullable */
static const char *const exec_cols[] = {
	"id|character varying|40|NO", "job_name|character varying|100|NO", "task_id|character varying|255|NO",
	"hostname|character varying|255|NO", "ip|character varying|50|NO", "sharding_item|integer||NO",
	"execution_source|character varying|20|NO", "failure_cause|character varying|4000|YES",
	"is_success|boolean||NO", "start_time|timestamp without time zone||YES",
	"complete_time|timestamp without time zone||YES",
};
static const char *const trace_cols[] = {
	"id|character varying|40|NO", "job_name|character varying|100|NO", "original_task_id|character varying|255|NO",
	"task_id|character varying|255|NO", "slave_id|character varying|50|NO", "source|character varying|50|NO",
	"execution_type|character varying|20|NO", "sharding_item|character varying|100|NO",
	"state|character varying|20|NO", "message|character varying|4000|YES",
	"creation_time|timestamp without time zone||YES",
};

static int columns_are(const char *table, const char *const *want, int n)
{
	char sql[512];
	snprintf(sql, sizeof sql, "SELECT column_name || '|' || data_type || '|' || coalesce(character_maximum_length::text, "
	         "'') || '|' || is_nullable FROM information_schema.columns WHERE table_name = '%s' ORDER BY "
	         "ordinal_position", table);
	PGresult *r = q(sql);
	int same = r && PQntuples(r) == n;
	for (int i = 0; same && i < n; i++)
		if (strcmp(PQgetvalue(r, i, 0), want[i]) != 0) {
			diag("%s column %d: got %s, want %s", table, i, PQgetvalue(r, i, 0), want[i]);
			same = 0;
		}
	if (r && PQntuples(r) != n) diag("%s: %d columns, want %d", table, PQntuples(r), n);
	PQclear(r);
	return same;
}

static int is_uuid(const char *s)
{
	if (strlen(s) != 36) return 0;
	for (int i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-') return 0;
		} else if (!strchr("0123456789abcdef", s[i])) {
			return 0;
		}
	}
	return 1;
}

/* the runs job o recorded: fire ids, and how late each started after its fire time (ms) */
static int read_runs(const char *path, long long *fire, long long *late, int max)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l && n < max; l = strtok(NULL, "\n")) {
		long long f, ns;
		int item;
		if (sscanf(l, "%lld %d %lld", &f, &item, &ns) != 3) continue;
		fire[n] = f;
		late[n++] = ns / 1000000 - f;
	}
	free(t);
	return n;
}

static int runs_at_least(void *arg)
{
	const char **a = arg;
	static long long f[4096], l[4096];
	return read_runs(a[0], f, l, 4096) >= atoi(a[1]);
}

/* "ITEM PID" of each run of fo, and it sleeps: the kill finds it running */
static const char fo_sh[] =
	"#!/bin/sh\n"
	"echo \"$EJOB_ITEM $$\" >> \"$OUT\"\n"
	"sleep 1.5\n";

static void failover_rows(void)
{
	struct tzkup u;
	tzkup_start(&u, 200, "t76fo", 2000);
	char sh[600], runs[600], jobs[1500], sup[600];
	tlib_script(sh, sizeof sh, "fo.sh", fo_sh);
	snprintf(runs, sizeof runs, "%s/fo-runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  fo: {type: script, cron: \"0 0 0 1 1 ? 2099\", shardingTotalCount: 2, failover: true,\n"
	         "       props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}}\n", runs, sh);
	static struct tsup x, y;
	/* the supervisor: section's keys, then (closing it) a tracing: section of its own */
	snprintf(sup, sizeof sup, "workers: 2, history: {file: \"@DIR@/history.jsonl\"}}\n"
	         "tracing: {type: RDB, url: \"jdbc:postgresql://127.0.0.1:%d/postgres\", username: postgres, "
	         "spoolDir: \"@DIR@/spool\"", pg.port);
	tzkup_config(&u, &x, "fx", sup, jobs);
	tzkup_config(&u, &y, "fy", sup, jobs);
	tzkup_run(&u, &x, "127.0.0.7");
	tzkup_run(&u, &y, "127.0.0.8");
	if (!tzkup_wait_registered(&u, "fo", x.id, 0, 10000) || !tzkup_wait_registered(&u, "fo", y.id, 0, 10000))
		BAIL_OUT("fo does not register");
	/* both take part: one item each, once the leader has sharded */
	uint64_t end = tlib_now_ms() + 8000;
	while (tlib_now_ms() < end && (tzkup_owned(&u, "fo", 2, x.id) != 1 || tzkup_owned(&u, "fo", 2, y.id) != 1)) {
		zoo_create(u.zh, tzkup_path(&u, "fo", "leader/sharding/necessary"), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
		usleep(300000);
	}
	zoo_create(u.zh, tzkup_path(&u, "fo", "trigger/%s", x.id), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	zoo_create(u.zh, tzkup_path(&u, "fo", "trigger/%s", y.id), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	ok(tsup_wait_lines(runs, " ", 2, 8000), "fo: both items run, one on each supervisor");
	/* its start row written (the sink's thread inserts it a moment after the item starts) */
	struct qwait xs = { "SELECT count(*) FROM job_execution_log WHERE job_name = 'fo' AND ip = '127.0.0.7'", 1 };
	ok(tlib_wait_for(q_reaches, &xs, 5000), "  the start row of the one on 127.0.0.7 is in PostgreSQL");
	kill(x.pid, SIGKILL);
	waitpid(x.pid, NULL, 0);
	tlib_untrack(x.pid);
	struct qwait w = { "SELECT count(*) FROM job_execution_log WHERE job_name = 'fo' AND execution_source = 'FAILOVER' "
	                   "AND is_success AND complete_time IS NOT NULL AND ip = '127.0.0.8'", 1 };
	ok(tlib_wait_for(q_reaches, &w, 12000), "the item of the supervisor killed runs on the other: a FAILOVER row, "
	   "ok, from 127.0.0.8");
	is_int((int)q_int("SELECT count(*) FROM job_execution_log WHERE job_name = 'fo' AND ip = '127.0.0.8'"), 2,
	       "  its rows: its own item (NORMAL_TRIGGER) and the one it took (FAILOVER)");
	is_int((int)q_int("SELECT count(*) FROM job_execution_log WHERE job_name = 'fo' AND ip = '127.0.0.7' AND "
	                  "complete_time IS NULL"), 1, "  the killed supervisor's row of it never completes (as in ElasticJob)");
	int st = tsup_stop(&y, SIGTERM, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the other stops cleanly");
	char hp[700];
	snprintf(hp, sizeof hp, "%s/history.jsonl", y.dir);
	char *h = tsup_slurp(hp);
	ok(h && strstr(h, "\"job\":\"fo\"") && strstr(h, "\"source\":\"FAILOVER\"") &&
	   strstr(h, "\"source\":\"NORMAL_TRIGGER\""), "  its history file has both, one with source FAILOVER");
	/* the epoch in hex, as ejobctl status shows it: the sharding commit's zxid */
	char *ep = h ? strstr(h, "\"epoch\":\"0x") : NULL;
	unsigned long long epoch = ep ? strtoull(ep + 11, NULL, 16) : 0;
	ok(epoch > 0 && ep[11 + strspn(ep + 11, "0123456789abcdef")] == '"', "  and the epoch it ran under (0x%llx)", epoch);
	free(h);
	tzkup_end(&u);
}

/* NSUP supervisors, started together on an empty database, whose first rows come at the same
 * instant: each creates the tables then, at once with the others */
#define NSUP 4
static void create_together(void)
{
	PGresult *r = PQexec(db, "CREATE DATABASE together");
	if (PQresultStatus(r) != PGRES_COMMAND_OK) BAIL_OUT("CREATE DATABASE together: %s", PQresultErrorMessage(r));
	PQclear(r);
	static struct tsup s[NSUP];
	char cron[64], yaml[1500], name[8];
	tsup_cron_once(cron, sizeof cron, 3);
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t76}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	         "tracing: {type: RDB, url: \"jdbc:postgresql://127.0.0.1:%d/together\", username: postgres,\n"
	         "          spoolDir: \"@DIR@/spool\"}\n"
	         "jobs:\n"
	         "  t: {type: script, cron: \"%s\", shardingTotalCount: 2, props: {script.command.line: /bin/true}}\n",
	         pg.port, cron);
	const char *args[] = { "--standalone", NULL };
	for (int i = 0; i < NSUP; i++) {
		snprintf(name, sizeof name, "c%d", i);
		tsup_config(&s[i], name, yaml);
		if (tsup_start(&s[i], args) <= 0) BAIL_OUT("cannot start supervisor %s", name);
	}
	char c2[700];
	snprintf(c2, sizeof c2, "postgresql://postgres@127.0.0.1:%d/together?connect_timeout=3", pg.port);
	PGconn *t = PQconnectdb(c2);
	long long rows = -1, tasks = -1;
	for (uint64_t end = tlib_now_ms() + 10000; tlib_now_ms() < end; usleep(100000)) {
		r = PQexec(t, "SELECT count(*), count(DISTINCT task_id) FROM job_execution_log WHERE complete_time IS NOT NULL");
		if (PQresultStatus(r) == PGRES_TUPLES_OK) rows = atoll(PQgetvalue(r, 0, 0)), tasks = atoll(PQgetvalue(r, 0, 1));
		PQclear(r);
		if (rows >= 2 * NSUP) break;
	}
	is_int((int)rows, 2 * NSUP, "%d supervisors started together on an empty database: every item's row is there", NSUP);
	is_int((int)tasks, NSUP, "  from each of them (its own taskId)");
	r = PQexec(t, "SELECT (SELECT count(*) FROM pg_tables WHERE tablename IN ('job_execution_log', "
	              "'job_status_trace_log')), (SELECT count(*) FROM pg_indexes WHERE indexname = 'task_id_state_index')");
	ok(PQresultStatus(r) == PGRES_TUPLES_OK && !strcmp(PQgetvalue(r, 0, 0), "2") && !strcmp(PQgetvalue(r, 0, 1), "1"),
	   "  the two tables and the index, once");
	PQclear(r);
	PQfinish(t);
	int errors = 0, notices = 0, stopped = 1;
	for (int i = 0; i < NSUP; i++) {
		int st = tsup_stop(&s[i], SIGTERM, 10000);
		stopped &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
		errors += tsup_log_count(&s[i], " ERROR ");
		notices += tsup_log_count(&s[i], "NOTICE");
		snprintf(name, sizeof name, "c%d", i);
		if (tsup_log_count(&s[i], " ERROR ") || tsup_log_count(&s[i], "NOTICE")) tsup_log_tail(&s[i], 20, name);
	}
	ok(stopped, "  they stop cleanly");
	is_int(errors, 0, "  creating the tables together logs no ERROR");
	is_int(notices, 0, "  nor PostgreSQL's notices (\"already exists, skipping\")");
}

int main(void)
{
	tlib_init(60);
	tpg_start(&pg, "pg");
	pass("PostgreSQL 15 runs on 127.0.0.1:%d", pg.port);
	db = PQconnectdb(pg.url);
	create_together();

	/* jobs: h fires once (ok, failed and retried, timed out and retried), g fires once (all ok),
	 * o every second (ok) */
	static struct tsup a;
	char cron_once[64], yaml[3000];
	tsup_cron_once(cron_once, sizeof cron_once, 2);
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t76}\n"
	         "supervisor: {workers: 4, attachSocket: \"@SOCK@\", killGraceSeconds: 1}\n"
	         "tracing: {type: RDB, url: \"jdbc:postgresql://127.0.0.1:%d/postgres\", username: postgres,\n"
	         "          spoolDir: \"@DIR@/spool\"}\n"
	         "jobs:\n"
	         "  h:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    shardingTotalCount: 3\n"
	         "    timeoutSeconds: 1\n"
	         "    maxRetries: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=@DIR@/hruns @DIR@/job.sh\"}\n"
	         "  g:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/bin/true\"}\n"
	         "  o:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=@DIR@/oruns @DIR@/job.sh\"}\n",
	         pg.port, cron_once, cron_once);
	tsup_config(&a, "a", yaml);
	char sh[700], oruns[700], spool[700];
	snprintf(sh, sizeof sh, "%s/job.sh", a.dir);
	tlib_write_file(sh, job_sh, sizeof job_sh - 1);
	chmod(sh, 0755);
	snprintf(oruns, sizeof oruns, "%s/oruns", a.dir);
	snprintf(spool, sizeof spool, "%s/spool/tracing.spool", a.dir);
	const char *args[] = { "--standalone", NULL };
	if (tsup_start(&a, args) <= 0) BAIL_OUT("cannot start the supervisor");

	/* ---- one fire of h, row by row -------------------------------------------------------- */
	struct qwait w = { "SELECT count(*) FROM job_status_trace_log WHERE job_name = 'h' AND state = 'TASK_ERROR'", 1 };
	ok(tlib_wait_for(q_reaches, &w, 12000), "h's fire ends with a TASK_ERROR row");
	ok(columns_are("job_execution_log", exec_cols, 11), "JOB_EXECUTION_LOG has ElasticJob's columns and types");
	ok(columns_are("job_status_trace_log", trace_cols, 11), "JOB_STATUS_TRACE_LOG has ElasticJob's columns and types");
	is_int((int)q_int("SELECT count(*) FROM pg_indexes WHERE indexname IN ('job_execution_log_pkey', "
	                  "'job_status_trace_log_pkey') OR (indexname = 'task_id_state_index' AND indexdef LIKE "
	                  "'%(task_id, state)')"), 3, "  with their primary keys (id) and TASK_ID_STATE_INDEX (task_id, state)");

	char host[256] = "";
	gethostname(host, sizeof host);
	PGresult *r = q("SELECT id, job_name, task_id, hostname, ip, sharding_item, execution_source, "
	                "coalesce(failure_cause, '<null>'), is_success, start_time <= complete_time, "
	                "extract(epoch FROM complete_time - start_time) FROM job_execution_log WHERE job_name = 'h' "
	                "ORDER BY sharding_item, start_time");
	int n = r ? PQntuples(r) : 0;
	is_int(n, 5, "h: 5 executions (item 0 once, items 1 and 2 twice: retried)");
	if (n != 5) BAIL_OUT("rows missing");
	char ip[64];
	snprintf(ip, sizeof ip, "%s", PQgetvalue(r, 0, 4));
	char want_task[300], inst_tail[64];
	snprintf(inst_tail, sizeof inst_tail, "@-@%d", (int)a.pid);
	snprintf(want_task, sizeof want_task, "h@-@0,1,2@-@READY@-@%s%s", ip, inst_tail);
	int same = 1, ids = 1;
	for (int i = 0; i < n; i++) {
		same &= !strcmp(PQgetvalue(r, i, 1), "h") && !strcmp(PQgetvalue(r, i, 2), want_task) &&
		        !strcmp(PQgetvalue(r, i, 3), host) && !strcmp(PQgetvalue(r, i, 4), ip) &&
		        !strcmp(PQgetvalue(r, i, 6), "NORMAL_TRIGGER") && !strcmp(PQgetvalue(r, i, 9), "t");
		ids &= is_uuid(PQgetvalue(r, i, 0));
		for (int j = 0; j < i; j++) ids &= strcmp(PQgetvalue(r, i, 0), PQgetvalue(r, j, 0)) != 0;
	}
	ok(same, "each: job_name h, task_id %s, hostname, ip %s, NORMAL_TRIGGER, start_time <= complete_time", want_task, ip);
	ok(ids, "  ids are distinct UUIDs");
	ok(!strcmp(PQgetvalue(r, 0, 5), "0") && !strcmp(PQgetvalue(r, 0, 8), "t") && !strcmp(PQgetvalue(r, 0, 7), "<null>"),
	   "item 0: is_success true, failure_cause NULL");
	ok(!strcmp(PQgetvalue(r, 1, 5), "1") && !strcmp(PQgetvalue(r, 1, 8), "f") &&
	   !strcmp(PQgetvalue(r, 1, 7), "failed (exit 3)") && !strcmp(PQgetvalue(r, 2, 5), "1") &&
	   !strcmp(PQgetvalue(r, 2, 8), "f") && !strcmp(PQgetvalue(r, 2, 7), "failed (exit 3)"),
	   "item 1: two executions, is_success false, failure_cause 'failed (exit 3)' (got '%s')", PQgetvalue(r, 1, 7));
	ok(!strcmp(PQgetvalue(r, 3, 5), "2") && !strcmp(PQgetvalue(r, 3, 8), "f") &&
	   !strncmp(PQgetvalue(r, 3, 7), "timeout (signal ", 16) && atof(PQgetvalue(r, 3, 10)) >= 0.9 &&
	   !strcmp(PQgetvalue(r, 4, 5), "2") && !strncmp(PQgetvalue(r, 4, 7), "timeout", 7),
	   "item 2: two executions timed out after 1 s: '%s' (%ss)", PQgetvalue(r, 3, 7), PQgetvalue(r, 3, 10));
	char cause1[200], cause2[600];
	snprintf(cause1, sizeof cause1, "%s", PQgetvalue(r, 2, 7));
	snprintf(cause2, sizeof cause2, "%s", PQgetvalue(r, 4, 7));
	PQclear(r);

	char sql[1200];
	snprintf(sql, sizeof sql, "SELECT id, job_name, original_task_id, task_id, slave_id, source, execution_type, "
	         "sharding_item, state, coalesce(message, '<null>') FROM job_status_trace_log WHERE task_id = '%s' "
	         "ORDER BY creation_time, state DESC", want_task);
	r = q(sql);
	n = r ? PQntuples(r) : 0;
	is_int(n, 3, "h's fire: 3 status trace rows");
	if (n != 3) BAIL_OUT("rows missing");
	same = 1;
	for (int i = 0; i < n; i++)
		same &= is_uuid(PQgetvalue(r, i, 0)) && !strcmp(PQgetvalue(r, i, 1), "h") && !strcmp(PQgetvalue(r, i, 2), "") &&
		        !strcmp(PQgetvalue(r, i, 4), ip) && !strcmp(PQgetvalue(r, i, 5), "LITE_EXECUTOR") &&
		        !strcmp(PQgetvalue(r, i, 6), "READY") && !strcmp(PQgetvalue(r, i, 7), "[0, 1, 2]");
	ok(same, "each: a UUID, job_name h, original_task_id '', slave_id %s, LITE_EXECUTOR, READY, sharding_item "
	   "'[0, 1, 2]'", ip);
	is_str(PQgetvalue(r, 0, 8), "TASK_STAGING", "first TASK_STAGING");
	is_str(PQgetvalue(r, 0, 9), "Job 'h' execute begin.", "  message Job 'h' execute begin.");
	ok(!strcmp(PQgetvalue(r, 1, 8), "TASK_RUNNING") && !strcmp(PQgetvalue(r, 1, 9), ""), "then TASK_RUNNING, message ''");
	char want_msg[1000];
	snprintf(want_msg, sizeof want_msg, "{1=%s, 2=%s}", cause1, cause2);
	ok(!strcmp(PQgetvalue(r, 2, 8), "TASK_ERROR"), "then TASK_ERROR");
	is_str(PQgetvalue(r, 2, 9), want_msg, "  message: the final failure of each failed item, as ElasticJob's map");
	PQclear(r);
	w.sql = "SELECT count(*) FROM job_status_trace_log WHERE job_name = 'g' AND state = 'TASK_FINISHED' AND message = ''";
	ok(tlib_wait_for(q_reaches, &w, 3000), "g's fire (all ok) ends with TASK_FINISHED, message ''");
	is_int((int)q_int("SELECT count(*) FROM job_execution_log WHERE job_name = 'g' AND is_success AND complete_time "
	                  "IS NOT NULL AND failure_cause IS NULL"), 2, "  and its 2 executions succeeded");

	/* ---- PostgreSQL stopped during fires, started again ------------------------------------ */
	static long long fire[4096], late[4096];
	tpg_stop(&pg);
	int before = read_runs(oruns, fire, late, 4096);
	char want[16];
	snprintf(want, sizeof want, "%d", before + 3);
	const char *ra[] = { oruns, want };
	ok(tlib_wait_for(runs_at_least, ra, 6000), "PostgreSQL stopped: o still fires (3 more runs)");
	struct stat sst;
	ok(stat(spool, &sst) == 0 && sst.st_size > 0, "  its rows wait in the spool (%lld bytes)",
	   (long long)(stat(spool, &sst) == 0 ? sst.st_size : -1));
	tpg_restart(&pg);
	int runs = read_runs(oruns, fire, late, 4096);
	w.sql = "SELECT count(*) FROM job_execution_log WHERE job_name = 'o' AND complete_time IS NOT NULL";
	w.want = runs;
	ok(tlib_wait_for(q_reaches, &w, 6000), "started again: the spooled rows arrive (%d runs so far)", runs);

	/* ---- PostgreSQL stopped with SIGSTOP: it accepts and never answers --------------------- */
	/* the postmaster and every backend: the sink's open connection too (the postmaster alone
	 * left it answering, and the rows went on arriving while "stuck") */
	tpg_pause(&pg);
	before = read_runs(oruns, fire, late, 4096);
	snprintf(want, sizeof want, "%d", before + 5);
	ok(tlib_wait_for(runs_at_least, ra, 8000), "PostgreSQL stuck: o still fires (5 more runs)");
	int n2 = read_runs(oruns, fire, late, 4096);
	long long worst = 0;
	for (int i = before; i < n2; i++) worst = late[i] > worst ? late[i] : worst;
	ok(worst < 500, "  each on time (the latest started %lld ms after its fire time)", worst);
	tpg_resume(&pg);
	runs = read_runs(oruns, fire, late, 4096);
	w.want = runs;
	ok(tlib_wait_for(q_reaches, &w, 12000), "PostgreSQL runs again: the rows arrive (%d runs so far)", runs);

	int st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the supervisor stops cleanly (status 0x%x)", st);
	runs = read_runs(oruns, fire, late, 4096);
	is_int((int)q_int("SELECT count(*) FROM job_execution_log WHERE job_name = 'o'"), runs,
	       "o: one execution row per run (%d), none twice", runs);
	is_int((int)q_int("SELECT count(*) FROM job_execution_log WHERE job_name = 'o' AND is_success AND complete_time "
	                  "IS NOT NULL"), runs, "  each complete and successful");
	is_int((int)q_int("SELECT count(DISTINCT start_time) FROM job_execution_log WHERE job_name = 'o'"), runs,
	       "  each its own run");
	is_int((int)q_int("SELECT count(*) FROM job_status_trace_log WHERE job_name = 'o'"), 3 * runs,
	       "  and 3 status trace rows per fire (STAGING, RUNNING, FINISHED)");
	is_int((int)q_int("SELECT count(*) FROM (SELECT task_id FROM job_status_trace_log WHERE job_name = 'o' GROUP BY "
	                  "task_id, creation_time, state HAVING count(*) > 1) d"), 0, "  none twice");
	ok(stat(spool, &sst) == 0 && sst.st_size == 0, "the spool is empty again");

	/* ejobctl history reads the same rows */
	char *out = NULL, *err = NULL;
	const char *hargv[] = { BUILT("tools/ejobctl"), "history", "o", "--pg", pg.url, "--json", NULL };
	st = tlib_run(hargv, &out, &err);
	int nexec = 0;
	for (const char *p = out; p && (p = strstr(p, "\"outcome\":\"ok\"")); p++) nexec++;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && nexec == runs, "ejobctl history o --pg: every run, each ok (%d of %d)",
	   nexec, runs);
	free(out), free(err);
	const char *fargv[] = { BUILT("tools/ejobctl"), "history", "o", "--pg", pg.url, "--failed", "--json", NULL };
	st = tlib_run(fargv, &out, &err);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && out && strstr(out, "\"executions\":[]"), "  --failed: none of them");
	free(out), free(err);
	failover_rows();
	if (db) PQfinish(db);
	tpg_stop(&pg);
	return done_testing();
}
