/* t/113-serve-history-all.c: `ejobctl serve`'s history over every job, GET /api/v1/history and
 * /api/v1/trace (docs/api.md), from a real PostgreSQL 15 (t/lib/tpg) holding two jobs' rows as
 * ElasticJob's tracing writes them:
 *   - every row of both jobs, newest first (ties by id), "job": null; paged, each row once;
 *   - job= filters to one job: the same rows and pages as GET /api/v1/jobs/{job}/history; with
 *     the other filters too;
 *   - the trace the same way;
 *   - a bad job=, limit=, a filter of the other table: 400 naming it; POST: 405; no --pg: 503;
 *   - GET /api/v1/me says "history": true with --pg.
 * ZooKeeper is not needed: nobody listens where serve looks for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "t/lib/tlib.h"
#include "t/lib/tpg.h"
#include "t/lib/tserve.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

static struct tpg pg;
static struct tserve sv;
static long long base_ms;

#define NA 30                   /* rows of job a */
#define NB 20                   /* rows of job b */

/* row i of job j: a's at base + 2i s, b's at base + 2i+1 s (the jobs interleave); b's row 3 at
 * a's row 4's time (a tie across jobs, ordered by id); every 4th failed */
static long long start_of(char j, int i)
{
	return j == 'b' && i == 3 ? base_ms + 8000 : base_ms + (2 * i + (j == 'b')) * 1000LL;
}

static void insert(char j, int i)
{
	char st[40], en[40], sql[1200];
	tpg_local(start_of(j, i), st, sizeof st);
	tpg_local(start_of(j, i) + 300, en, sizeof en);
	int failed = i % 4 == 0;
	snprintf(sql, sizeof sql,
	         "INSERT INTO job_execution_log (id, job_name, task_id, hostname, ip, sharding_item, execution_source, "
	         "failure_cause, is_success, start_time, complete_time) VALUES ('%c-%02d', '%c', '%c@-@%d@-@READY@-@10.0.0.1@-@42', "
	         "'host', '10.0.0.1', %d, 'NORMAL_TRIGGER', %s, %s, '%s', '%s');"
	         "INSERT INTO job_status_trace_log (id, job_name, original_task_id, task_id, slave_id, source, execution_type, "
	         "sharding_item, state, message, creation_time) VALUES ('t%c-%02d', '%c', '', '%c@-@%d@-@READY@-@10.0.0.1@-@42', "
	         "'10.0.0.1', 'LITE_EXECUTOR', 'READY', '%d', '%s', '', '%s')",
	         j, i, j, j, i % 2, i % 2, failed ? "'boom'" : "NULL", failed ? "false" : "true", st, en, j, i, j, j, i % 2,
	         i % 2, failed ? "TASK_ERROR" : "TASK_FINISHED", st);
	tpg_exec(&pg, sql);
}

static json_t *get(const char *path, long *code)
{
	char *out = NULL;
	*code = tserve_http(&sv, "GET", path, NULL, NULL, NULL, &out);
	json_t *j = json_loads(out ? out : "", 0, NULL);
	if (!j) diag("not JSON: %s", out ? out : "");
	free(out);
	return j ? j : json_object();
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* Every row of path, following "next" pages of limit, into ids (one "id," each, in order): how
 * many (-1 on an error); *ordered: newest first, ties by id, across pages; *jobs: the jobNames
 * seen ("a", "b", "ab"); the key of the time: startMs or creationMs */
static int all_rows(const char *path, int limit, const char *tkey, char *ids, size_t il, int *ordered, char *jobs)
{
	char p[1024], cursor[300] = "";
	int n = 0, pages = 0;
	long long last_ms = -1;
	char last_id[64] = "";
	*ordered = 1, ids[0] = 0, jobs[0] = 0;
	size_t k = 0;
	for (;;) {
		long code;
		snprintf(p, sizeof p, "%s%slimit=%d%s%s", path, strchr(path, '?') ? "&" : "?", limit, *cursor ? "&cursor=" : "",
		         cursor);
		json_t *d = get(p, &code);
		if (code != 200) {
			diag("GET %s: %ld %s", p, code, str(d, "error"));
			json_decref(d);
			return -1;
		}
		json_t *rows = json_object_get(d, "rows"), *r;
		size_t i;
		json_array_foreach(rows, i, r) {
			long long ms = json_integer_value(json_object_get(r, tkey));
			const char *id = str(r, "id");
			if (last_ms >= 0 && (ms > last_ms || (ms == last_ms && strcmp(id, last_id) >= 0))) *ordered = 0;
			last_ms = ms;
			snprintf(last_id, sizeof last_id, "%s", id);
			if (k < il) k += (size_t)snprintf(ids + k, il - k, "%s,", id);
			if (!strchr(jobs, str(r, "jobName")[0])) strncat(jobs, str(r, "jobName"), 1);
			n++;
		}
		const char *next = json_string_value(json_object_get(d, "next"));
		if (!next) {
			json_decref(d);
			break;
		}
		snprintf(cursor, sizeof cursor, "%s", next);
		json_decref(d);
		if (++pages > 1000) return -1;
	}
	/* "ab" for both, in either order */
	if (strlen(jobs) == 2 && jobs[0] == 'b') jobs[0] = 'a', jobs[1] = 'b';
	return n;
}

int main(void)
{
	tlib_init(60);
	tpg_start(&pg, "pg");
	tpg_tables(&pg);
	base_ms = ((long long)time(NULL) - 3600) * 1000 + 250;
	for (int i = 0; i < NA; i++) insert('a', i);
	for (int i = 0; i < NB; i++) insert('b', i);
	pass("PostgreSQL 15 on 127.0.0.1:%d: %d rows of job a, %d of job b, in both tables", pg.port, NA, NB);

	char zk[64];
	snprintf(zk, sizeof zk, "127.0.0.1:%d", tzk_free_port());
	const char *nopg[] = { "--zk", zk, "--namespace", "t113", "--timeout", "1", "--no-model", NULL };
	tserve_start(&sv, "serve-nopg", nopg);
	long code;
	json_t *d = get("/api/v1/history", &code);
	ok(code == 503 && strstr(str(d, "hint"), "--pg URL"), "without --pg: GET /api/v1/history is 503, saying to give --pg");
	json_decref(d);
	tserve_stop(&sv);

	const char *withpg[] = { "--zk", zk, "--namespace", "t113", "--timeout", "1", "--no-model", "--pg", pg.url, NULL };
	tserve_start(&sv, "serve", withpg);
	d = get("/api/v1/me", &code);
	ok(code == 200 && json_is_true(json_object_get(d, "history")) && json_is_false(json_object_get(d, "auth")),
	   "GET /api/v1/me: history true (--pg), auth false");
	json_decref(d);

	/* every job */
	d = get("/api/v1/history", &code);
	json_t *rows = json_object_get(d, "rows");
	ok(code == 200 && json_is_null(json_object_get(d, "job")) && !strcmp(str(d, "table"), "JOB_EXECUTION_LOG") &&
	   json_array_size(rows) == NA + NB && json_is_null(json_object_get(d, "next")),
	   "GET /api/v1/history: the %d rows of both jobs on one page (50 a page), job null, no next", NA + NB);
	json_t *r0 = json_array_get(rows, 0), *r1 = json_array_get(rows, 1);
	json_t *r20 = json_array_get(rows, 10), *r21 = json_array_get(rows, 11);
	ok(!strcmp(str(r0, "id"), "a-29") && !strcmp(str(r1, "id"), "a-28") && !strcmp(str(r20, "id"), "b-19") &&
	   !strcmp(str(r21, "id"), "a-19") && json_integer_value(json_object_get(r0, "startMs")) == start_of('a', 29),
	   "newest first across the jobs: a-29, a-28, ... b-19, a-19, ... (%s, %s, %s, %s)", str(r0, "id"), str(r1, "id"),
	   str(r20, "id"), str(r21, "id"));
	json_decref(d);
	char ids[4096], ref[4096], jobs[8];
	int ordered;
	is_int(all_rows("/api/v1/history", 7, "startMs", ids, sizeof ids, &ordered, jobs), NA + NB,
	       "paged by 7: every row of both jobs once");
	ok(ordered && !strcmp(jobs, "ab"), "newest first, ties by id (b-03 and a-04 start together), across pages and jobs");
	ok(strstr(ids, "b-03,a-04,"), "the tie: b-03 before a-04 (ids descending)");

	/* job= filters */
	is_int(all_rows("/api/v1/history?job=a", 7, "startMs", ids, sizeof ids, &ordered, jobs), NA, "?job=a paged by 7: a's %d rows", NA);
	ok(ordered && !strcmp(jobs, "a"), "only a's, in order");
	is_int(all_rows("/api/v1/jobs/a/history", 7, "startMs", ref, sizeof ref, &ordered, jobs), NA, "GET /api/v1/jobs/a/history: the same count");
	is_str(ids, ref, "?job=a gives the rows and pages GET /api/v1/jobs/a/history gives");
	is_int(all_rows("/api/v1/history?job=b&outcome=failed", 2, "startMs", ids, sizeof ids, &ordered, jobs), 5,
	       "?job=b&outcome=failed: b's 5 failed rows");
	is_str(ids, "b-16,b-12,b-08,b-04,b-00,", "each of them, newest first");
	is_int(all_rows("/api/v1/history?outcome=failed&item=0", 500, "startMs", ids, sizeof ids, &ordered, jobs), 13,
	       "?outcome=failed&item=0 over every job: the 8 of a and 5 of b");
	ok(!strcmp(jobs, "ab"), "of both jobs");
	is_int(all_rows("/api/v1/history?job=nothing", 500, "startMs", ids, sizeof ids, &ordered, jobs), 0, "?job=nothing: none");

	/* the trace */
	d = get("/api/v1/trace?state=TASK_ERROR", &code);
	rows = json_object_get(d, "rows");
	ok(code == 200 && json_is_null(json_object_get(d, "job")) && !strcmp(str(d, "table"), "JOB_STATUS_TRACE_LOG") &&
	   json_array_size(rows) == 13 && !strcmp(str(json_array_get(rows, 0), "id"), "ta-28"),
	   "GET /api/v1/trace?state=TASK_ERROR: both jobs' 13, newest first (ta-28)");
	json_decref(d);
	is_int(all_rows("/api/v1/trace", 9, "creationMs", ids, sizeof ids, &ordered, jobs), NA + NB, "the trace paged by 9: every row once");
	ok(ordered && !strcmp(jobs, "ab"), "in order, both jobs");
	is_int(all_rows("/api/v1/trace?job=b", 9, "creationMs", ids, sizeof ids, &ordered, jobs), NB, "?job=b: b's %d", NB);
	is_int(all_rows("/api/v1/jobs/b/trace", 9, "creationMs", ref, sizeof ref, &ordered, jobs), NB, "GET /api/v1/jobs/b/trace: the same");
	is_str(ids, ref, "the same rows and pages");

	/* bad requests */
	struct {
		const char *q, *says;
		long code;
	} bad[] = {
		{ "/api/v1/history?job=", "job=", 400 },
		{ "/api/v1/history?job=x%2Fy", "job=x/y", 400 },
		{ "/api/v1/history?limit=0", "limit=0", 400 },
		{ "/api/v1/history?state=TASK_ERROR", "a filter of trace", 400 },
		{ "/api/v1/trace?item=1", "a filter of history", 400 },
		{ "/api/v1/history?cursor=zz", "cursor=zz", 400 },
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		d = get(bad[k].q, &code);
		ok(code == bad[k].code && strstr(str(d, "error"), bad[k].says), "%s: %ld saying '%s' (%s)", bad[k].q, bad[k].code,
		   bad[k].says, str(d, "error"));
		json_decref(d);
	}
	is_int(tserve_http(&sv, "POST", "/api/v1/history", NULL, NULL, NULL, NULL), 405, "POST /api/v1/history: 405");

	tserve_stop(&sv);
	tpg_stop(&pg);
	return done_testing();
}
