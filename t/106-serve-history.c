/* t/106-serve-history.c: `ejobctl serve`'s history pages, GET /api/v1/jobs/{job}/history and
 * /trace, from a real PostgreSQL 15 this test starts (initdb in its tmpdir, as the postgres user,
 * on a free loopback port), holding ElasticJob's tables (the DDL of elasticjob-tracing-rdb that the
 * supervisors' sink runs) with rows as ElasticJob writes them (start_time the writer's local time):
 *   - without --pg: 503, saying to give it;
 *   - paging: every row once, newest first (ties by id), with a page's cursor, also while newer
 *     rows arrive between pages;
 *   - filters item, outcome (ok, failed, running), ip, since/until and their combination give what
 *     the table holds; a row's fields; a job without rows: none;
 *   - bad parameters are 400 naming the parameter; limits are bounded;
 *   - the status trace, filtered by state;
 *   - end to end: a real supervisor (--standalone, tracing: RDB) runs a fire whose item 1 fails;
 *     its rows come out of the API as ElasticJob's tables have them;
 *   - PostgreSQL frozen (SIGSTOP): 503 after a bounded wait, not a request hanging serve's thread;
 *   - PostgreSQL stopped: 503 with a hint; started again: answers (a new connection).
 * ZooKeeper is not needed: serve answers the history while it is unreachable. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "t/lib/tlib.h"
#include "t/lib/tpg.h"
#include "t/lib/tserve.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

static struct tpg pg;

static long long base_ms;


static void utc(long long ms, char *out, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* row i of job h: item i%3, ip by parity, failed when i%5==0, running when i%7==0 (else ok);
 * started at base + i s, but rows 10 and 11 at the same time (a tie) */
#define NROWS 150
static int item_of(int i) { return i % 3; }
static const char *ip_of(int i) { return i % 2 ? "10.0.0.2" : "10.0.0.1"; }
static const char *outcome_of(int i) { return i % 5 == 0 ? "failed" : i % 7 == 0 ? "running" : "ok"; }
static long long start_of(int i) { return base_ms + (i == 11 ? 10 : i) * 1000LL; }

static void insert(const char *job, const char *id, int i, long long start)
{
	char st[40], en[40], sql[1200];
	tpg_local(start, st, sizeof st);
	tpg_local(start + 250, en, sizeof en);
	const char *o = outcome_of(i);
	snprintf(sql, sizeof sql,
	         "INSERT INTO job_execution_log (id, job_name, task_id, hostname, ip, sharding_item, execution_source, "
	         "failure_cause, is_success, start_time, complete_time) VALUES ('%s', '%s', '%s@-@%d@-@READY@-@%s@-@42', "
	         "'host', '%s', %d, 'NORMAL_TRIGGER', %s, %s, '%s', %s%s%s)",
	         id, job, job, item_of(i), ip_of(i), ip_of(i), item_of(i), !strcmp(o, "failed") ? "'boom'" : "NULL",
	         !strcmp(o, "ok") ? "true" : "false", st, strcmp(o, "running") ? "'" : "", strcmp(o, "running") ? en : "NULL",
	         strcmp(o, "running") ? "'" : "");
	tpg_exec(&pg, sql);
}

static struct tserve sv;

static json_t *get(const char *path, long *code)
{
	char *out = NULL;
	*code = tserve_http(&sv, "GET", path, NULL, NULL, NULL, &out);
	json_t *j = json_loads(out ? out : "", 0, NULL);
	if (!j) diag("not JSON: %s", out ? out : "");
	free(out);
	return j ? j : json_object();
}

/* every row of path (pages of limit), following "next": how many; ids into seen[] (their index) */
static int all_rows(const char *path, int limit, int *pages, int *ordered)
{
	char p[1024], cursor[300] = "";
	int n = 0;
	*pages = 0, *ordered = 1;
	long long last_ms = -1;
	char last_id[64] = "";
	for (;;) {
		long code;
		snprintf(p, sizeof p, "%s%slimit=%d%s%s", path, strchr(path, '?') ? "&" : "?", limit, *cursor ? "&cursor=" : "",
		         cursor);
		json_t *d = get(p, &code);
		if (code != 200) {
			json_decref(d);
			return -1;
		}
		json_t *rows = json_object_get(d, "rows");
		(*pages)++;
		for (size_t i = 0; i < json_array_size(rows); i++) {
			json_t *r = json_array_get(rows, i);
			long long ms = json_integer_value(json_object_get(r, "startMs"));
			const char *id = json_string_value(json_object_get(r, "id"));
			if (last_ms >= 0 && (ms > last_ms || (ms == last_ms && strcmp(id, last_id) >= 0))) *ordered = 0;
			last_ms = ms;
			snprintf(last_id, sizeof last_id, "%s", id);
			n++;
		}
		const char *next = json_string_value(json_object_get(d, "next"));
		if (!next) {
			json_decref(d);
			return n;
		}
		snprintf(cursor, sizeof cursor, "%s", next);
		json_decref(d);
		if (*pages > 1000) return -1;
	}
}

int main(void)
{
	tlib_init(90);
	tpg_start(&pg, "pg");
	tpg_tables(&pg);
	base_ms = ((long long)time(NULL) - 3600) * 1000 + 123;
	char id[64];
	for (int i = 0; i < NROWS; i++) {
		snprintf(id, sizeof id, "id-%03d", i);
		insert("h", id, i, start_of(i));
	}
	for (int i = 0; i < 5; i++) {
		snprintf(id, sizeof id, "other-%d", i);
		insert("other", id, i, base_ms + i * 1000LL);
	}
	for (int i = 0; i < 30; i++) {
		char sql[800], ts[40];
		tpg_local(base_ms + i * 1000LL, ts, sizeof ts);
		static const char *const states[] = { "TASK_STAGING", "TASK_RUNNING", "TASK_FINISHED" };
		snprintf(sql, sizeof sql,
		         "INSERT INTO job_status_trace_log (id, job_name, original_task_id, task_id, slave_id, source, "
		         "execution_type, sharding_item, state, message, creation_time) VALUES ('tr-%02d', 'h', '', "
		         "'h@-@0,1,2@-@READY@-@10.0.0.1@-@42', '10.0.0.1', 'LITE_EXECUTOR', 'READY', '0,1,2', '%s', '', '%s')",
		         i, states[i % 3], ts);
		tpg_exec(&pg, sql);
	}
	pass("PostgreSQL 15 on 127.0.0.1:%d with ElasticJob's tables: %d execution rows, 30 trace rows", pg.port, NROWS + 5);

	/* ZooKeeper: nobody listens there; the history does not need it */
	char zk[64];
	snprintf(zk, sizeof zk, "127.0.0.1:%d", tzk_free_port());
	const char *nopg[] = { "--zk", zk, "--namespace", "t106", "--timeout", "1", NULL };
	tserve_start(&sv, "serve-nopg", nopg);
	long code;
	json_t *d = get("/api/v1/jobs/h/history", &code);
	is_int(code, 503, "without --pg: 503");
	ok(strstr(json_string_value(json_object_get(d, "hint")) ?: "", "--pg URL"), "the hint says to give --pg URL");
	json_decref(d);
	tserve_stop(&sv);

	const char *withpg[] = { "--zk", zk, "--namespace", "t106", "--timeout", "1", "--pg", pg.url, NULL };
	tserve_start(&sv, "serve", withpg);

	/* the first page and one row's fields */
	d = get("/api/v1/jobs/h/history", &code);
	is_int(code, 200, "GET /api/v1/jobs/h/history while ZooKeeper is unreachable: 200");
	json_t *rows = json_object_get(d, "rows");
	json_t *r0 = json_array_get(rows, 0);
	ok(json_array_size(rows) == 50 && json_is_string(json_object_get(d, "next")), "50 rows a page by default, and a next cursor");
	ok(!strcmp(json_string_value(json_object_get(r0, "id")) ?: "", "id-149") &&
	   json_integer_value(json_object_get(r0, "startMs")) == start_of(149), "newest first: id-149, startMs its start");
	json_decref(d);
	d = get("/api/v1/jobs/h/history?item=2&outcome=failed&ip=10.0.0.2&limit=500", &code);
	json_t *f5 = NULL;
	rows = json_object_get(d, "rows");
	for (size_t i = 0; i < json_array_size(rows); i++)
		if (!strcmp(json_string_value(json_object_get(json_array_get(rows, i), "id")), "id-005")) f5 = json_array_get(rows, i);
	ok(f5 && json_integer_value(json_object_get(f5, "shardingItem")) == 2 && !strcmp(json_string_value(json_object_get(f5, "ip")), "10.0.0.2") &&
	   !strcmp(json_string_value(json_object_get(f5, "outcome")), "failed") && json_is_false(json_object_get(f5, "success")) &&
	   !strcmp(json_string_value(json_object_get(f5, "failureCause")), "boom") &&
	   !strcmp(json_string_value(json_object_get(f5, "taskId")), "h@-@2@-@READY@-@10.0.0.2@-@42") &&
	   !strcmp(json_string_value(json_object_get(f5, "executionSource")), "NORMAL_TRIGGER") &&
	   json_integer_value(json_object_get(f5, "completeMs")) == start_of(5) + 250,
	   "a failed row's fields: item, ip, outcome, success, failureCause, taskId, executionSource, completeMs");
	json_decref(d);

	/* every row once, in order, page by page */
	int pages = 0, ordered = 0;
	int got = all_rows("/api/v1/jobs/h/history", 40, &pages, &ordered);
	is_int(got, NROWS, "paged by 40: every row once (%d pages)", pages);
	ok(ordered && pages == 4, "newest first, ties by id, across pages (%d pages)", pages);

	/* newer rows arriving between pages: the pages after the first go on where it ended */
	{
		char p[512], cur[300];
		d = get("/api/v1/jobs/h/history?limit=60", &code);
		snprintf(cur, sizeof cur, "%s", json_string_value(json_object_get(d, "next")) ?: "");
		json_decref(d);
		for (int i = 0; i < 3; i++) {
			snprintf(id, sizeof id, "new-%d", i);
			insert("h", id, 1, base_ms + 7200000LL + i);
		}
		snprintf(p, sizeof p, "/api/v1/jobs/h/history?limit=500&cursor=%s", cur);
		d = get(p, &code);
		rows = json_object_get(d, "rows");
		int newseen = 0;
		for (size_t i = 0; i < json_array_size(rows); i++)
			newseen += !strncmp(json_string_value(json_object_get(json_array_get(rows, i), "id")), "new-", 4);
		ok(code == 200 && json_array_size(rows) == NROWS - 60 && !newseen && json_is_null(json_object_get(d, "next")),
		   "with 3 newer rows written meanwhile, the rest after page one is the %d older rows, none repeated (%zu)",
		   NROWS - 60, json_array_size(rows));
		json_decref(d);
		tpg_exec(&pg, "DELETE FROM job_execution_log WHERE id LIKE 'new-%'");
	}

	/* filters: what the table holds */
	int n_item1 = 0, n_failed = 0, n_running = 0, n_ok = 0, n_ip2 = 0, n_combo = 0;
	for (int i = 0; i < NROWS; i++) {
		n_item1 += item_of(i) == 1;
		n_failed += !strcmp(outcome_of(i), "failed");
		n_running += !strcmp(outcome_of(i), "running");
		n_ok += !strcmp(outcome_of(i), "ok");
		n_ip2 += !strcmp(ip_of(i), "10.0.0.2");
		n_combo += item_of(i) == 0 && !strcmp(outcome_of(i), "ok") && !strcmp(ip_of(i), "10.0.0.1");
	}
	struct {
		const char *q;
		int want;
	} fl[] = {
		{ "item=1", n_item1 }, { "outcome=failed", n_failed }, { "outcome=running", n_running }, { "outcome=ok", n_ok },
		{ "ip=10.0.0.2", n_ip2 }, { "item=0&outcome=ok&ip=10.0.0.1", n_combo }, { "item=7", 0 },
	};
	for (size_t k = 0; k < sizeof fl / sizeof *fl; k++) {
		char p[256];
		snprintf(p, sizeof p, "/api/v1/jobs/h/history?%s", fl[k].q);
		is_int(all_rows(p, 500, &pages, &ordered), fl[k].want, "?%s: the %d rows the table has", fl[k].q, fl[k].want);
	}
	{
		char p[256], s1[40], s2[40];
		utc(start_of(20), s1, sizeof s1);
		utc(start_of(30), s2, sizeof s2);
		/* since is the second of row 20 (its start has .123 ms: still in), until before row 30's second */
		snprintf(p, sizeof p, "/api/v1/jobs/h/history?since=%s&until=%s", s1, s2);
		is_int(all_rows(p, 500, &pages, &ordered), 10, "?since=%s&until=%s: rows 20-29", s1, s2);
		snprintf(p, sizeof p, "/api/v1/jobs/h/history?since=%lld", start_of(140));
		is_int(all_rows(p, 500, &pages, &ordered), 10, "?since=EPOCH_MS: rows 140-149");
	}
	d = get("/api/v1/jobs/nothing/history", &code);
	ok(code == 200 && json_array_size(json_object_get(d, "rows")) == 0 && json_is_null(json_object_get(d, "next")),
	   "a job without rows: none");
	json_decref(d);
	is_int(all_rows("/api/v1/jobs/other/history", 500, &pages, &ordered), 5, "another job's rows are its own");

	/* bad parameters */
	struct {
		const char *q, *says;
	} bad[] = {
		{ "limit=0", "limit=0" }, { "limit=501", "1 to 500" }, { "item=x", "item=x" }, { "outcome=maybe", "ok, failed or running" },
		{ "since=yesterday", "since=yesterday" }, { "until=2026-13-01", "until=" }, { "cursor=zz", "cursor=zz" },
		{ "cursor=6162", "not a cursor" }, { "state=TASK_RUNNING", "a filter of trace" },
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		char p[256];
		snprintf(p, sizeof p, "/api/v1/jobs/h/history?%s", bad[k].q);
		d = get(p, &code);
		const char *e = json_string_value(json_object_get(d, "error"));
		ok(code == 400 && e && strstr(e, bad[k].says), "?%s: 400 saying '%s'", bad[k].q, bad[k].says);
		if (code != 400 || !e || !strstr(e, bad[k].says)) diag("%ld %s", code, e ? e : "(no error)");
		json_decref(d);
	}

	/* the status trace */
	d = get("/api/v1/jobs/h/trace?state=TASK_RUNNING", &code);
	rows = json_object_get(d, "rows");
	r0 = json_array_get(rows, 0);
	ok(code == 200 && json_array_size(rows) == 10 && !strcmp(json_string_value(json_object_get(r0, "state")) ?: "", "TASK_RUNNING") &&
	   !strcmp(json_string_value(json_object_get(r0, "id")) ?: "", "tr-28") &&
	   !strcmp(json_string_value(json_object_get(r0, "slaveId")) ?: "", "10.0.0.1") &&
	   !strcmp(json_string_value(json_object_get(r0, "shardingItems")) ?: "", "0,1,2"),
	   "GET .../trace?state=TASK_RUNNING: its 10 rows, newest first, with ElasticJob's columns");
	json_decref(d);
	is_int(all_rows("/api/v1/jobs/h/trace", 7, &pages, &ordered), 30, "the trace paged by 7: every row once");
	d = get("/api/v1/jobs/h/trace?outcome=ok", &code);
	is_int(code, 400, "outcome= is history's, not trace's: 400");
	json_decref(d);

	/* end to end: a real supervisor's tracing sink writes a fire (item 1 fails), the API shows it */
	{
		static struct tsup a;
		char cron[64], yaml[2000], sh[700];
		tsup_cron_once(cron, sizeof cron, 2);
		snprintf(yaml, sizeof yaml,
		         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t106}\n"
		         "supervisor: {workers: 2, attachSocket: \"@SOCK@\"}\n"
		         "tracing: {type: RDB, url: \"jdbc:postgresql://127.0.0.1:%d/postgres\", username: postgres,\n"
		         "          spoolDir: \"@DIR@/spool\"}\n"
		         "jobs:\n  e2e:\n    type: script\n    cron: \"%s\"\n    shardingTotalCount: 2\n"
		         "    props: {script.command.line: \"@DIR@/job.sh\"}\n", pg.port, cron);
		tsup_config(&a, "a", yaml);
		snprintf(sh, sizeof sh, "%s/job.sh", a.dir);
		const char job_sh[] = "#!/bin/sh\n[ \"$EJOB_ITEM\" = 1 ] && exit 3\nexit 0\n";
		tlib_write_file(sh, job_sh, sizeof job_sh - 1);
		chmod(sh, 0755);
		const char *sargs[] = { "--standalone", NULL };
		if (tsup_start(&a, sargs) <= 0) BAIL_OUT("cannot start the supervisor");
		int rows_in = 0;
		uint64_t until_ms = tlib_now_ms() + 15000;
		while (tlib_now_ms() < until_ms) {
			d = get("/api/v1/jobs/e2e/trace?state=TASK_ERROR", &code);
			rows_in = code == 200 && json_array_size(json_object_get(d, "rows")) == 1;
			json_decref(d);
			if (rows_in) break;
			usleep(200000);
		}
		ok(rows_in, "a supervisor's fire of e2e: its TASK_ERROR trace row through the API");
		d = get("/api/v1/jobs/e2e/history", &code);
		rows = json_object_get(d, "rows");
		json_t *f1 = NULL, *ok0 = NULL;
		for (size_t i = 0; i < json_array_size(rows); i++) {
			json_t *x = json_array_get(rows, i);
			if (json_integer_value(json_object_get(x, "shardingItem")) == 1) f1 = x;
			else ok0 = x;
		}
		ok(code == 200 && json_array_size(rows) == 2 && f1 && ok0 &&
		   !strcmp(json_string_value(json_object_get(f1, "outcome")) ?: "", "failed") &&
		   !strcmp(json_string_value(json_object_get(f1, "failureCause")) ?: "", "failed (exit 3)") &&
		   !strcmp(json_string_value(json_object_get(ok0, "outcome")) ?: "", "ok") &&
		   llabs(json_integer_value(json_object_get(ok0, "startMs")) - (long long)time(NULL) * 1000) < 30000,
		   "its history: item 0 ok, item 1 failed 'failed (exit 3)', started seconds ago");
		json_decref(d);
		tsup_stop(&a, SIGTERM, 10000);
	}

	/* PostgreSQL frozen (SIGSTOP: it accepts, never answers): a bounded wait, then 503 */
	/* the postmaster and every backend (each runs in a session of its own: setsid) */
	tpg_pause(&pg);
	uint64_t f0 = tlib_now_ms();
	d = get("/api/v1/jobs/h/history", &code);
	uint64_t froze = tlib_now_ms() - f0;
	if (code != 503 || froze >= 9000) diag("%ld %.300s", code, json_string_value(json_object_get(d, "error")) ?: "");
	ok(code == 503 && froze < 9000 && strstr(json_string_value(json_object_get(d, "error")) ?: "", "did not answer"),
	   "PostgreSQL frozen: 503 within %llu ms, saying it did not answer", (unsigned long long)froze);
	json_decref(d);
	tpg_resume(&pg);
	d = get("/api/v1/jobs/h/history?limit=1", &code);
	ok(code == 200 && json_array_size(json_object_get(d, "rows")) == 1, "running again: 200");
	json_decref(d);

	/* PostgreSQL away, and back */
	tpg_close();
	tpg_stop(&pg);
	uint64_t t0 = tlib_now_ms();
	d = get("/api/v1/jobs/h/history", &code);
	uint64_t took = tlib_now_ms() - t0;
	ok(code == 503 && strstr(json_string_value(json_object_get(d, "error")) ?: "", "PostgreSQL") &&
	   json_is_string(json_object_get(d, "hint")), "PostgreSQL stopped: 503 saying so, with a hint (in %llu ms)",
	   (unsigned long long)took);
	json_decref(d);
	tpg_restart(&pg);
	d = get("/api/v1/jobs/h/history?limit=1", &code);
	ok(code == 200 && json_array_size(json_object_get(d, "rows")) == 1, "started again: 200 (a new connection)");
	json_decref(d);

	tserve_stop(&sv);
	tpg_stop(&pg);
	return done_testing();
}
