/* tools/ejobctl_serve_pg.c: `ejobctl serve`'s history pages from PostgreSQL (--pg URL): ElasticJob's
 * RDB tracing tables, as the supervisors' tracing sink writes them (supervisor/sink/events_pg.c)
 * and ElasticJob-UI's two history pages read them: JOB_EXECUTION_LOG (one row per attempt of an
 * item) and JOB_STATUS_TRACE_LOG (a fire's states). Newest first, keyset paging: the cursor is the
 * last row's sort key (its time, microseconds, and its id), so a page costs the same at any depth
 * and rows written meanwhile neither repeat nor vanish. One connection, kept, made again when it
 * breaks; libpq's connect_timeout bounds a PostgreSQL that is away. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <libpq-fe.h>

#include "tools/ejobctl_serve.h"

#define PAGE_DEFAULT 50
#define PAGE_MAX 500
#define ID_MAX 40               /* id VARCHAR(40) */

static PGconn *conn;

/* a connection that works, or NULL with why */
static PGconn *connection(const char *url, char *err, size_t el)
{
	if (conn && PQstatus(conn) == CONNECTION_OK) return conn;
	PQfinish(conn);
	const char *u = !strncmp(url, "jdbc:", 5) ? url + 5 : url;
	const char *keys[] = { "dbname", "connect_timeout", "application_name", NULL };
	const char *vals[] = { u, "3", "ejobctl serve", NULL };
	conn = PQconnectdbParams(keys, vals, 1);
	if (conn && PQstatus(conn) == CONNECTION_OK) return conn;
	snprintf(err, el, "cannot connect to PostgreSQL (--pg): %s", conn ? PQerrorMessage(conn) : "out of memory");
	err[strcspn(err, "\n")] = 0;
	PQfinish(conn);
	conn = NULL;
	return NULL;
}

/* "2026-11-24T07:00:00Z", "2026-11-24T07:00:00.250+02:00", "2026-11-24" (UTC midnight) or epoch
 * milliseconds, as the local wall-clock time the tables hold (TIMESTAMP without a zone, written as
 * ElasticJob's JDBC writes it): out "YYYY-MM-DD HH:MM:SS.mmm". 0, or -1 if s is no time. */
static int local_ts(const char *s, char out[40])
{
	long long ms;
	char *e;
	errno = 0;
	ms = strtoll(s, &e, 10);
	if (!(*s && !*e && !errno && ms >= 0)) {
		struct tm tm = { 0 };
		int n = 0, frac = 0;
		if (sscanf(s, "%4d-%2d-%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3) return -1;
		const char *p = s + n;
		if (*p == 'T' || *p == ' ') {
			int m = 0;
			if (sscanf(p + 1, "%2d:%2d%n", &tm.tm_hour, &tm.tm_min, &m) != 2) return -1;
			p += 1 + m;
			if (*p == ':') {
				if (sscanf(p + 1, "%2d%n", &tm.tm_sec, &m) != 1) return -1;
				p += 1 + m;
			}
			if (*p == '.') {
				int k = 0;
				if (sscanf(p + 1, "%9d%n", &frac, &k) != 1) return -1;
				for (; k > 3; k--) frac /= 10;
				for (; k < 3; k++) frac *= 10;
				p += 1 + strspn(p + 1, "0123456789");
			}
		}
		long off = 0;
		if (*p == 'Z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			int hh, mm, k = 0;
			if (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &k) != 2) return -1;
			off = (hh * 60L + mm) * 60 * (*p == '-' ? -1 : 1);
			p += 1 + k;
		}
		if (*p || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 ||
		    tm.tm_min > 59 || tm.tm_sec > 60)
			return -1;
		tm.tm_year -= 1900, tm.tm_mon -= 1;
		ms = ((long long)timegm(&tm) - off) * 1000 + frac;
	}
	time_t t = (time_t)(ms / 1000);
	struct tm lt;
	if (!localtime_r(&t, &lt) || !strftime(out, 40, "%Y-%m-%d %H:%M:%S", &lt)) return -1;
	size_t n = strlen(out);
	snprintf(out + n, 40 - n, ".%03lld", ms % 1000);
	return 0;
}

/* a stored local time ("YYYY-MM-DDTHH:MM:SS.mmm") as epoch ms, -1 if none */
static long long epoch_ms(const char *s)
{
	struct tm tm = { 0 };
	int ms = 0;
	if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d.%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
	                 &tm.tm_sec, &ms) < 6)
		return -1;
	tm.tm_year -= 1900, tm.tm_mon -= 1, tm.tm_isdst = -1;
	return (long long)mktime(&tm) * 1000 + ms;
}

/* the cursor: hex of "KEY|ID" (KEY "YYYY-MM-DD HH:MM:SS.uuuuuu") */
static void cursor_make(const char *key, const char *id, char *out, size_t ol)
{
	char raw[128];
	snprintf(raw, sizeof raw, "%s|%s", key, id);
	size_t k = 0;
	for (const unsigned char *p = (const unsigned char *)raw; *p && k + 3 < ol; p++) k += (size_t)snprintf(out + k, ol - k, "%02x", *p);
}

static int cursor_read(const char *cur, char key[32], char id[ID_MAX + 1])
{
	char raw[128];
	size_t n = strlen(cur);
	if (n % 2 || n / 2 >= sizeof raw) return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(cur + 2 * i, "%2x", &v) != 1 || !v) return -1;
		raw[i] = (char)v;
	}
	raw[n / 2] = 0;
	char *bar = strchr(raw, '|');
	int y, mo, d, h, mi, s, us, k = 0;
	if (!bar || bar - raw != 26 || strlen(bar + 1) > ID_MAX || !bar[1]) return -1;
	*bar = 0;
	if (sscanf(raw, "%4d-%2d-%2d %2d:%2d:%2d.%6d%n", &y, &mo, &d, &h, &mi, &s, &us, &k) != 7 || k != 26) return -1;
	snprintf(key, 32, "%.26s", raw);
	snprintf(id, ID_MAX + 1, "%s", bar + 1);
	return 0;
}

/* The query's one result, or NULL if PostgreSQL does not answer within QUERY_SECONDS (a server
 * stopped with SIGSTOP accepts and never answers: without a bound, every request of serve's one
 * thread would wait for it). The caller drops the connection after NULL. */
#define QUERY_SECONDS 5
static PGresult *bounded_query(PGconn *c, const char *sql, const char *const *v, int n)
{
	if (!PQsendQueryParams(c, sql, n, NULL, v, NULL, NULL, 0)) return PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	PGresult *res = NULL, *r;
	for (;;) {
		if (PQflush(c) < 0) break;
		while (!PQisBusy(c)) {
			if (!(r = PQgetResult(c))) return res ? res : PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
			if (res) PQclear(res);
			res = r;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		long left = QUERY_SECONDS * 1000L - ((now.tv_sec - t0.tv_sec) * 1000L + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) break;
		struct pollfd pfd = { .fd = PQsocket(c), .events = POLLIN };
		int pr = poll(&pfd, 1, (int)left);
		if (pr < 0 && errno != EINTR) break;
		if (pr > 0 && !PQconsumeInput(c)) {
			/* the connection broke: what libpq made of it */
			while ((r = PQgetResult(c))) {
				if (res) PQclear(res);
				res = r;
			}
			return res ? res : PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
		}
	}
	if (res) PQclear(res);
	return NULL;
}

static json_t *col(PGresult *r, int i, int c)
{
	return PQgetisnull(r, i, c) ? json_null() : json_string(PQgetvalue(r, i, c));
}

static json_t *col_ms(PGresult *r, int i, int c)
{
	long long v = PQgetisnull(r, i, c) ? -1 : epoch_ms(PQgetvalue(r, i, c));
	return v < 0 ? json_null() : json_integer(v);
}

#define TS(x) "to_char(" x ", 'YYYY-MM-DD\"T\"HH24:MI:SS.MS')"
#define KEY(x) "coalesce(" x ", 'epoch'::timestamp)"

static const char sql_history[] =
	"SELECT id, job_name, task_id, hostname, ip, sharding_item, execution_source, failure_cause, is_success, "
	TS("start_time") ", " TS("complete_time") ", to_char(" KEY("start_time") ", 'YYYY-MM-DD HH24:MI:SS.US') "
	"FROM job_execution_log WHERE ($1::text IS NULL OR job_name = $1::text) "
	"AND ($2::int IS NULL OR sharding_item = $2::int) AND ($3::text IS NULL OR ip = $3::text) "
	"AND ($4::text IS NULL OR ($4::text = 'running' AND complete_time IS NULL) OR ($4::text = 'ok' AND complete_time "
	"IS NOT NULL AND is_success) OR ($4::text = 'failed' AND complete_time IS NOT NULL AND NOT is_success)) "
	"AND ($5::timestamp IS NULL OR start_time >= $5::timestamp) AND ($6::timestamp IS NULL OR start_time < $6::timestamp) "
	"AND ($7::timestamp IS NULL OR (" KEY("start_time") ", id) < ($7::timestamp, $8::text)) "
	"ORDER BY " KEY("start_time") " DESC, id DESC LIMIT $9::int";

static const char sql_trace[] =
	"SELECT id, job_name, original_task_id, task_id, slave_id, source, execution_type, sharding_item, state, message, "
	TS("creation_time") ", to_char(" KEY("creation_time") ", 'YYYY-MM-DD HH24:MI:SS.US') "
	"FROM job_status_trace_log WHERE ($1::text IS NULL OR job_name = $1::text) "
	"AND ($2::text IS NULL OR state = $2::text) AND ($3::text IS NULL OR slave_id = $3::text) "
	"AND ($4::text IS NULL OR task_id = $4::text) "
	"AND ($5::timestamp IS NULL OR creation_time >= $5::timestamp) AND ($6::timestamp IS NULL OR creation_time < "
	"$6::timestamp) AND ($7::timestamp IS NULL OR (" KEY("creation_time") ", id) < ($7::timestamp, $8::text)) "
	"ORDER BY " KEY("creation_time") " DESC, id DESC LIMIT $9::int";

static json_t *history_row(PGresult *r, int i)
{
	int done = !PQgetisnull(r, i, 10), okv = !strcmp(PQgetvalue(r, i, 8), "t");
	json_t *o = json_object();
	json_object_set_new(o, "id", col(r, i, 0));
	json_object_set_new(o, "jobName", col(r, i, 1));
	json_object_set_new(o, "taskId", col(r, i, 2));
	json_object_set_new(o, "hostname", col(r, i, 3));
	json_object_set_new(o, "ip", col(r, i, 4));
	json_object_set_new(o, "shardingItem", json_integer(atoll(PQgetvalue(r, i, 5))));
	json_object_set_new(o, "executionSource", col(r, i, 6));
	json_object_set_new(o, "failureCause", col(r, i, 7));
	json_object_set_new(o, "success", json_boolean(okv));
	json_object_set_new(o, "outcome", json_string(!done ? "running" : okv ? "ok" : "failed"));
	json_object_set_new(o, "startTime", col(r, i, 9));
	json_object_set_new(o, "completeTime", col(r, i, 10));
	json_object_set_new(o, "startMs", col_ms(r, i, 9));
	json_object_set_new(o, "completeMs", col_ms(r, i, 10));
	return o;
}

static json_t *trace_row(PGresult *r, int i)
{
	json_t *o = json_object();
	static const char *const k[] = { "id", "jobName", "originalTaskId", "taskId", "slaveId", "source", "executionType",
		                         "shardingItems", "state", "message", "creationTime" };
	for (int c = 0; c < 11; c++) json_object_set_new(o, k[c], col(r, i, c));
	json_object_set_new(o, "creationMs", col_ms(r, i, 10));
	return o;
}

unsigned srv_pg_query(const char *url, const struct srv_pgq *q, struct json_t **doc, char *err, size_t el,
                      const char **hint)
{
	*doc = NULL;
	*hint = NULL;
	if (!url) {
		snprintf(err, el, "no history here: ejobctl serve was started without --pg");
		*hint = "start serve with --pg URL (the PostgreSQL of the supervisors' tracing: url), or use ejobctl history JOB";
		return 503;
	}
	/* the parameters, checked: a bad one is 400 before PostgreSQL is asked */
	char since[40], until[40], ckey[32], cid[ID_MAX + 1], lim[16];
	long limit = PAGE_DEFAULT;
	if (q->limit) {
		char *e;
		errno = 0;
		limit = strtol(q->limit, &e, 10);
		if (errno || e == q->limit || *e || limit < 1 || limit > PAGE_MAX) {
			snprintf(err, el, "limit=%.32s: give 1 to %d rows a page (default %d)", q->limit, PAGE_MAX, PAGE_DEFAULT);
			return 400;
		}
	}
	snprintf(lim, sizeof lim, "%ld", limit + 1);   /* one more: is there a next page? */
	if (q->item) {
		char *e;
		errno = 0;
		long it = strtol(q->item, &e, 10);
		if (errno || e == q->item || *e || it < 0 || it > 0x7fffffff) {
			snprintf(err, el, "item=%.32s: give an item number (0 .. shardingTotalCount-1)", q->item);
			return 400;
		}
	}
	if (q->outcome && strcmp(q->outcome, "ok") && strcmp(q->outcome, "failed") && strcmp(q->outcome, "running")) {
		snprintf(err, el, "outcome=%.32s: give ok, failed or running", q->outcome);
		return 400;
	}
	if ((q->since && local_ts(q->since, since)) || (q->until && local_ts(q->until, until))) {
		snprintf(err, el, "%s=%.40s: give an ISO 8601 time (2026-11-24T07:00:00Z, a zone offset, or a date) or epoch "
		         "milliseconds", q->since && local_ts(q->since, since) ? "since" : "until",
		         q->since && local_ts(q->since, since) ? q->since : q->until);
		return 400;
	}
	if (q->cursor && cursor_read(q->cursor, ckey, cid)) {
		snprintf(err, el, "cursor=%.40s...: not a cursor this API gave (pass \"next\" of the page before as it is)",
		         q->cursor);
		return 400;
	}
	const char *v[9];
	if (q->trace)
		v[0] = q->job, v[1] = q->state, v[2] = q->ip, v[3] = q->task;
	else
		v[0] = q->job, v[1] = q->item, v[2] = q->ip, v[3] = q->outcome;
	v[4] = q->since ? since : NULL;
	v[5] = q->until ? until : NULL;
	v[6] = q->cursor ? ckey : NULL;
	v[7] = q->cursor ? cid : NULL;
	v[8] = lim;

	PGresult *res = NULL;
	for (int tries = 0; tries < 2; tries++) {
		PGconn *c = connection(url, err, el);
		if (!c) {
			*hint = "PostgreSQL is away or --pg is wrong: the history answers once it is back";
			return 503;
		}
		res = bounded_query(c, q->trace ? sql_trace : sql_history, v, 9);
		if (!res) {
			snprintf(err, el, "PostgreSQL did not answer within %d s (stopped? overloaded?)", QUERY_SECONDS);
			*hint = "PostgreSQL is away: the history answers once it is back";
			PQfinish(conn);
			conn = NULL;
			return 503;
		}
		if (PQresultStatus(res) == PGRES_TUPLES_OK) break;
		const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		if (state && !strcmp(state, "42P01")) {
			/* no table yet: no supervisor with tracing has written (events_pg.c creates them) */
			PQclear(res);
			res = NULL;
			break;
		}
		snprintf(err, el, "PostgreSQL: %s", PQerrorMessage(c));
		err[strcspn(err, "\n")] = 0;
		PQclear(res);
		res = NULL;
		if (PQstatus(c) == CONNECTION_OK) {
			*hint = "the query failed (above); nothing else is wrong with the request";
			return 500;
		}
		/* the kept connection broke (PostgreSQL restarted): once more on a new one */
	}
	if (!res && PQstatus(conn) != CONNECTION_OK) {
		*hint = "PostgreSQL is away: the history answers once it is back";
		return 503;
	}
	json_t *rows = json_array();
	int n = res ? PQntuples(res) : 0;
	int more = n > limit;
	if (more) n = (int)limit;
	for (int i = 0; i < n; i++) json_array_append_new(rows, q->trace ? trace_row(res, i) : history_row(res, i));
	json_t *o = json_object();
	json_object_set_new(o, "job", q->job ? json_string(q->job) : json_null());
	json_object_set_new(o, "table", json_string(q->trace ? "JOB_STATUS_TRACE_LOG" : "JOB_EXECUTION_LOG"));
	json_object_set_new(o, "rows", rows);
	if (more) {
		char cur[256];
		/* the sort key is the last column (11) of both queries */
		cursor_make(PQgetvalue(res, n - 1, 11), PQgetvalue(res, n - 1, 0), cur, sizeof cur);
		json_object_set_new(o, "next", json_string(cur));
	} else {
		json_object_set_new(o, "next", json_null());
	}
	PQclear(res);
	*doc = o;
	return 200;
}
