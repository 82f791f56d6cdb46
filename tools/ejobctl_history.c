/* tools/ejobctl_history.c: ejobctl history JOB: what ran, from ElasticJob's JOB_EXECUTION_LOG in
 * PostgreSQL when the config has tracing, else from one supervisor's history file
 * (supervisor.history, rotated files included); shown oldest first by start. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/ejobctl.h"
#include "tools/ejobctl_zk.h"

static const char usage_text[] =
	"usage: ejobctl history JOB [-c FILE | --file HISTORY | --pg URL] [--item N] [--since T] [--failed] [--json]\n"
	"\n"
	"What ran of JOB, oldest first by start: each attempt's start, fire (its fire id), item, attempt,\n"
	"source, outcome, exit code or signal, duration, instance and cause (for a failure without one:\n"
	"the exit code or signal and the last line of its output). From PostgreSQL (ElasticJob's\n"
	"JOB_EXECUTION_LOG: the whole cluster) when FILE has tracing or --pg is given, else from one\n"
	"supervisor's history file (FILE's supervisor.history.file, or --file, with its rotated files\n"
	"FILE.1, FILE.2, ...): what ran on that machine only. Without -c, --file or --pg: the file of\n"
	"$EJOB_CONFIG, else " CTL_DEFAULT_FILE " if it exists. ZooKeeper keeps no history: --zk and\n"
	"--namespace are taken, as by every command, but name no history.\n"
	"  --since T   from T on: 2026-11-24, 2026-11-24T07:00:00Z, or ago: 90s, 30m, 12h, 7d\n"
	"  --failed    only attempts that did not succeed\n";

struct row {
	char *start, *end, *job, *source, *outcome, *instance, *host, *task, *cause, *output;
	long long item, attempt, exit_code, signal, dur_ms, fire;   /* -1: unknown / null */
	long long start_ms;
	size_t seq;                 /* the order read: ties keep it */
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static void row_free(struct row *r)
{
	free(r->start), free(r->end), free(r->job), free(r->source), free(r->outcome);
	free(r->instance), free(r->host), free(r->task), free(r->cause), free(r->output);
}

static void rows_add(struct rows *rs, const struct row *r)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 256;
		struct row *v = realloc(rs->v, rs->cap * sizeof *v);
		CTL_NEED(v);
		rs->v = v;
	}
	rs->v[rs->n] = *r;
	rs->v[rs->n].seq = rs->n;
	rs->n++;
}

/* "2026-11-24T07:31:52.355Z" (or without ms / zone: UTC) -> ms; -1 if not a time */
static long long parse_time(const char *s)
{
	struct tm tm = { 0 };
	int ms = 0, n = 0;
	if (sscanf(s, "%d-%d-%d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &n) != 3) return -1;
	const char *p = s + n;
	if (*p == 'T' || *p == ' ') {
		int m = 0;
		if (sscanf(p + 1, "%d:%d:%d%n", &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &m) != 3) return -1;
		p += 1 + m;
		if (*p == '.') {
			int d = 0, k = 0;
			if (sscanf(p + 1, "%d%n", &d, &k) != 1) return -1;
			while (k > 3) d /= 10, k--;
			while (k < 3) d *= 10, k++;
			ms = d;
			p += 1 + strspn(p + 1, "0123456789");
		}
		if (*p == 'Z') p++;
	}
	if (*p) return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long long)timegm(&tm) * 1000 + ms;
}

/* --since: a time, or how long ago (90s, 30m, 12h, 7d) */
static long long parse_since(const char *s)
{
	char *e;
	errno = 0;
	double v = strtod(s, &e);
	if (!errno && e != s && e[0] && !e[1] && v >= 0) {
		double unit = e[0] == 's' ? 1 : e[0] == 'm' ? 60 : e[0] == 'h' ? 3600 : e[0] == 'd' ? 86400 : -1;
		if (unit > 0) return (long long)time(NULL) * 1000 - (long long)(v * unit * 1000);
	}
	return parse_time(s);
}

/* ---- the history file: one flat JSON object per line ------------------------------------------------ */

static char *dup_str(const json_t *v)
{
	if (!json_is_string(v)) return NULL;
	char *s = strdup(json_string_value(v));   /* a \u0000 in it ends it */
	CTL_NEED(s);
	return s;
}

/* an integer field: a number (a fraction cut), true 1, false 0; else -1 (null, absent, a string) */
static long long int_of(const json_t *v)
{
	if (json_is_integer(v)) return json_integer_value(v);
	if (json_is_real(v)) {
		double d = json_real_value(v);
		return d > -9e18 && d < 9e18 ? (long long)d : -1;
	}
	return json_is_true(v) ? 1 : json_is_false(v) ? 0 : -1;
}

/* one line into r; 0 if it is a record, -1 if not (garbage, a cut line), what is wrong in why */
static int parse_line(const char *line, size_t len, struct row *r, char *why, size_t whylen)
{
	memset(r, 0, sizeof *r);
	r->item = r->attempt = r->exit_code = r->signal = r->dur_ms = r->fire = -1;
	json_error_t e;
	json_t *o = json_loadb(line, len, JSON_ALLOW_NUL, &e);
	if (!o) {
		snprintf(why, whylen, "column %d: %s", e.column, e.text);
		return -1;
	}
	if (!json_is_object(o)) {
		snprintf(why, whylen, "a JSON value that is not an object");
		json_decref(o);
		return -1;
	}
	static const struct { const char *key; size_t off; } strs[] = {
		{ "start", offsetof(struct row, start) }, { "end", offsetof(struct row, end) },
		{ "job", offsetof(struct row, job) }, { "source", offsetof(struct row, source) },
		{ "outcome", offsetof(struct row, outcome) }, { "instance", offsetof(struct row, instance) },
		{ "host", offsetof(struct row, host) }, { "taskId", offsetof(struct row, task) },
		{ "cause", offsetof(struct row, cause) }, { "output", offsetof(struct row, output) },
	}, ints[] = {
		{ "item", offsetof(struct row, item) }, { "attempt", offsetof(struct row, attempt) },
		{ "exitCode", offsetof(struct row, exit_code) }, { "signal", offsetof(struct row, signal) },
		{ "durationMs", offsetof(struct row, dur_ms) }, { "fireId", offsetof(struct row, fire) },
	};
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		*(char **)((char *)r + strs[i].off) = dup_str(json_object_get(o, strs[i].key));
	for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
		*(long long *)((char *)r + ints[i].off) = int_of(json_object_get(o, ints[i].key));
	json_decref(o);
	const char *miss = !r->job ? "\"job\" (a string)" : !r->start ? "\"start\" (a string)"
	                   : r->item < 0 ? "\"item\" (a number, 0 or more)" : NULL;
	if (miss) {
		snprintf(why, whylen, "no %s", miss);
		row_free(r);
		return -1;
	}
	r->start_ms = parse_time(r->start);
	return 0;
}

/* the lines that are not records: each said (the first BAD_SAID), then how many more */
#define BAD_SAID 5
static void bad_line(const char *cmd, const char *path, long lineno, const char *why, long *bad)
{
	if (++*bad <= BAD_SAID)
		fprintf(stderr, "ejobctl %s: %s:%ld: not a record (cut or garbage): %s: left out\n", cmd, path, lineno, why);
}

static int read_file(const char *cmd, const char *path, struct rows *rs, long *bad)
{
	/* the rotated files first, oldest (highest number) first */
	int last = 0;
	size_t n = strlen(path) + 16;
	char *p = malloc(n);
	CTL_NEED(p);
	for (int k = 1; k <= 1000; k++) {
		snprintf(p, n, "%s.%d", path, k);
		FILE *f = fopen(p, "re");
		if (!f) break;
		fclose(f);
		last = k;
	}
	int opened = 0;
	for (int k = last; k >= 0; k--) {
		if (k) snprintf(p, n, "%s.%d", path, k);
		else snprintf(p, n, "%s", path);
		FILE *f = fopen(p, "re");
		if (!f) {
			if (k == 0 && errno != ENOENT) fprintf(stderr, "ejobctl %s: cannot read %s: %s\n", cmd, p, strerror(errno));
			continue;
		}
		opened++;
		char *line = NULL;
		size_t cap = 0;
		ssize_t len;
		long lineno = 0;
		while ((len = getline(&line, &cap, f)) > 0) {
			lineno++;
			if (line[len - 1] == '\n') line[--len] = 0;
			if (!len) continue;
			struct row r;
			char why[300];
			if (parse_line(line, (size_t)len, &r, why, sizeof why) == 0) rows_add(rs, &r);
			else bad_line(cmd, p, lineno, why, bad);
		}
		free(line);
		fclose(f);
	}
	free(p);
	if (!opened) {
		fprintf(stderr, "ejobctl %s: no history at %s (is supervisor.history.file set on the supervisors, and is this "
		        "their file?)\n", cmd, path);
		return 1;
	}
	return 0;
}

/* ---- PostgreSQL: ElasticJob's JOB_EXECUTION_LOG ------------------------------------------------------- */

static char *dup_col(PGresult *res, int i, int c)
{
	if (PQgetisnull(res, i, c)) return NULL;
	char *s = strdup(PQgetvalue(res, i, c));
	CTL_NEED(s);
	return s;
}

static int read_pg(const char *cmd, const conf_tracing_t *t, const char *job, struct rows *rs)
{
	const char *url = !strncmp(t->url, "jdbc:", 5) ? t->url + 5 : t->url;
	const char *keys[5], *vals[5];
	int k = 0;
	keys[k] = "dbname", vals[k++] = url;
	if (t->username) keys[k] = "user", vals[k++] = t->username;
	if (t->password) keys[k] = "password", vals[k++] = t->password;
	keys[k] = "connect_timeout", vals[k++] = "5";
	keys[k] = NULL, vals[k] = NULL;
	PGconn *c = PQconnectdbParams(keys, vals, 1);
	if (!c || PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "ejobctl %s: cannot connect to PostgreSQL (%s): %s", cmd, url, c ? PQerrorMessage(c) : "no memory\n");
		PQfinish(c);
		return 1;
	}
	const char *params[1] = { job };
	PGresult *res = PQexecParams(c,
	                             "SELECT to_char(start_time, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS'), "
	                             "to_char(complete_time, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS'), job_name, execution_source, "
	                             "is_success, hostname, ip, task_id, failure_cause, sharding_item, "
	                             "(extract(epoch from complete_time - start_time) * 1000)::bigint "
	                             "FROM job_execution_log WHERE job_name = $1 ORDER BY start_time, sharding_item",
	                             1, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		fprintf(stderr, "ejobctl %s: cannot read job_execution_log: %s", cmd, PQerrorMessage(c));
		PQclear(res);
		PQfinish(c);
		return 1;
	}
	for (int i = 0; i < PQntuples(res); i++) {
		struct row r = { 0 };
		r.attempt = r.exit_code = r.signal = r.dur_ms = r.fire = -1;
		r.start = dup_col(res, i, 0);
		r.end = dup_col(res, i, 1);
		r.job = dup_col(res, i, 2);
		r.source = dup_col(res, i, 3);
		int done = !PQgetisnull(res, i, 1);
		int okv = !PQgetisnull(res, i, 4) && PQgetvalue(res, i, 4)[0] == 't';
		r.outcome = strdup(!done ? "running" : okv ? "ok" : "failed");
		CTL_NEED(r.outcome);
		r.host = dup_col(res, i, 5);
		r.instance = dup_col(res, i, 6);     /* ElasticJob keeps the ip, not the instance id */
		r.task = dup_col(res, i, 7);
		r.cause = dup_col(res, i, 8);
		r.item = PQgetisnull(res, i, 9) ? -1 : atoll(PQgetvalue(res, i, 9));
		r.dur_ms = PQgetisnull(res, i, 10) ? -1 : atoll(PQgetvalue(res, i, 10));
		/* start_time is local time without a zone, as ElasticJob's JDBC writes it */
		if (r.start) {
			struct tm tm = { 0 };
			if (sscanf(r.start, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
			           &tm.tm_sec) == 6) {
				tm.tm_year -= 1900, tm.tm_mon -= 1, tm.tm_isdst = -1;
				r.start_ms = (long long)mktime(&tm) * 1000 + atoi(r.start + 20);
			}
		}
		rows_add(rs, &r);
	}
	PQclear(res);
	PQfinish(c);
	return 0;
}

/* ---- the command -------------------------------------------------------------------------------- */

static char *num(char *buf, size_t len, long long v)
{
	if (v < 0) return NULL;
	snprintf(buf, len, "%lld", v);
	return buf;
}

/* oldest first by start; then by fire, item and attempt; then as read */
static int by_start(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;
	long long k[4][2] = { { a->start_ms, b->start_ms }, { a->fire, b->fire }, { a->item, b->item },
	                      { a->attempt, b->attempt } };
	for (int i = 0; i < 4; i++)
		if (k[i][0] != k[i][1]) return k[i][0] < k[i][1] ? -1 : 1;
	return (a->seq > b->seq) - (a->seq < b->seq);
}

/* The CAUSE cell: the recorded cause; for a failure without one, how it ended and the last line
 * of its output ("exit 3: disk full"), cut to CAUSE_MAX columns. NULL: none ("-"). */
#define CAUSE_MAX 80
static const char *cause_cell(const struct row *x, char *buf, size_t len)
{
	const char *src = x->cause;
	char how[48] = "";
	if (!src) {
		if (!x->outcome || !strcmp(x->outcome, "ok") || !strcmp(x->outcome, "running")) return NULL;
		if (x->signal > 0) snprintf(how, sizeof how, "signal %lld", x->signal);
		else if (x->exit_code >= 0) snprintf(how, sizeof how, "exit %lld", x->exit_code);
		else snprintf(how, sizeof how, "%s", x->outcome);
	}
	/* the last non-empty line of the output (or of the cause), without control characters */
	const char *t = src ? src : x->output ? x->output : "";
	const char *end = t + strlen(t);
	while (end > t && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ')) end--;
	const char *beg = end;
	while (beg > t && beg[-1] != '\n') beg--;
	if (src && strchr(t, '\n')) beg = t, end = t + strcspn(t, "\n");   /* a cause: its first line */
	size_t n = (size_t)snprintf(buf, len, "%s%s", how, *how && beg < end ? ": " : "");
	size_t cols = 0;
	for (const char *p = beg; p < end && n + 4 < len; p++) {
		unsigned char ch = (unsigned char)*p;
		if ((ch & 0xC0) != 0x80 && ++cols > CAUSE_MAX) {
			memcpy(buf + n, "...", 3);
			n += 3;
			break;
		}
		buf[n++] = ch < 0x20 || ch == 0x7f ? ' ' : (char)ch;
	}
	buf[n] = 0;
	return n ? buf : NULL;
}

static const char *where_text =
	"give -c FILE (a supervisor's config: its tracing, else its supervisor.history.file), --file HISTORY "
	"(one machine's history file) or --pg URL (PostgreSQL with tracing: the whole cluster)";

int ejobctl_history(int argc, char **argv)
{
	const char *cmd = "history", *job = NULL, *file = NULL, *hist = NULL, *pg = NULL, *since_s = NULL;
	const char *zk = NULL, *ign = NULL;
	long long item = -1, since = -1;
	int failed = 0, json = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *eq = !strncmp(a, "--", 2) ? strchr(a, '=') : NULL;
		char name[32] = "";
		if (eq && (size_t)(eq - a) < sizeof name) snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
		const char *o = *name ? name : a;
		/* the connection options every command takes: ZooKeeper has no history, but they are
		 * accepted (ejobctl --zk H --namespace NS history JOB), and said so if nothing else is given */
		const char **val = !strcmp(o, "-c") || !strcmp(o, "--config") ? &file : !strcmp(o, "--file") ? &hist
		                   : !strcmp(o, "--pg") ? &pg : !strcmp(o, "--since") ? &since_s : !strcmp(o, "--zk") ? &zk
		                   : !strcmp(o, "--namespace") || !strcmp(o, "--digest") || !strcmp(o, "--timeout") ? &ign
		                   : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
		} else if (val && *name) {
			*val = eq + 1;
		} else if (val) {
			if (i + 1 >= argc) {
				fprintf(stderr, "ejobctl %s: %s needs a value\n%s", cmd, a, usage_text);
				return 2;
			}
			*val = argv[++i];
		} else if (!strcmp(a, "--item")) {
			char *e;
			if (i + 1 >= argc || (item = strtoll(argv[++i], &e, 10)) < 0 || *e || e == argv[i]) {
				fprintf(stderr, "ejobctl %s: --item needs an item number (0, 1, ...)\n", cmd);
				return 2;
			}
		} else if (!strcmp(a, "--failed")) {
			failed = 1;
		} else if (!strcmp(a, "--json")) {
			json = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ejobctl %s: unknown option %s\n%s", cmd, a, usage_text);
			return 2;
		} else if (!job) {
			job = a;
		} else {
			fprintf(stderr, "%s", usage_text);
			return 2;
		}
	}
	if (!job) {
		fprintf(stderr, "ejobctl %s: which job?\n%s", cmd, usage_text);
		return 2;
	}
	if (since_s && (since = parse_since(since_s)) < 0) {
		fprintf(stderr, "ejobctl %s: --since %s: give a time (2026-11-24, 2026-11-24T07:00:00Z) or how long ago "
		        "(90s, 30m, 12h, 7d)\n", cmd, since_s);
		return 2;
	}
	if (!file && !hist && !pg) file = ctl_default_file();
	conf_t *conf = NULL;
	if (file && !(conf = ctl_load_conf(cmd, file, "its tracing or supervisor.history.file is needed"))) return 2;
	conf_tracing_t tr = { 0 };
	if (pg) tr.url = pg;
	else if (!hist && conf && conf->tracing.url) tr = conf->tracing;
	if (!tr.url && !hist) hist = conf ? conf->supervisor.history_file : NULL;
	if (!tr.url && !hist) {
		if (conf) fprintf(stderr, "ejobctl %s: %s has neither tracing nor supervisor.history.file: no history is kept "
		                  "there; %s\n", cmd, file, where_text);
		else if (zk) fprintf(stderr, "ejobctl %s: ZooKeeper (--zk %s) keeps no execution history; %s\n", cmd, zk,
		                     where_text);
		else fprintf(stderr, "ejobctl %s: where is the history? %s\n", cmd, where_text);
		conf_free(conf);
		return 2;
	}
	struct rows rs = { 0 };
	long bad = 0;
	int r = tr.url ? read_pg(cmd, &tr, job, &rs) : read_file(cmd, hist, &rs, &bad);
	conf_free(conf);
	if (r) return r;
	if (bad > BAD_SAID) fprintf(stderr, "ejobctl %s: and %ld more line%s of %s (and its rotated files) not records: "
		                    "left out\n", cmd, bad - BAD_SAID, bad - BAD_SAID == 1 ? "" : "s", hist);
	if (rs.n) qsort(rs.v, rs.n, sizeof *rs.v, by_start);

	struct jw w;
	struct ctl_table *t = NULL;
	if (json) {
		jw_begin(&w, stdout);
		jw_obj(&w);
		jw_key(&w, "job"), jw_str(&w, job);
		jw_key(&w, "from"), jw_str(&w, tr.url ? "postgresql" : "file");
		jw_key(&w, "file"), jw_str(&w, tr.url ? NULL : hist);
		jw_key(&w, "executions"), jw_arr(&w);
	} else {
		t = ctl_table_new(10, "START", "FIRE", "ITEM", "ATTEMPT", "SOURCE", "OUTCOME", "EXIT", "DURATION", "WHERE",
		                  "CAUSE");
	}
	size_t shown = 0;
	for (size_t i = 0; i < rs.n; i++) {
		struct row *x = &rs.v[i];
		int ok = x->outcome && !strcmp(x->outcome, "ok");
		if (strcmp(x->job, job) || (item >= 0 && x->item != item) || (failed && ok) ||
		    (since >= 0 && x->start_ms < since))
			continue;
		shown++;
		if (json) {
			jw_obj(&w);
			jw_key(&w, "start"), jw_str(&w, x->start);
			jw_key(&w, "end"), jw_str(&w, x->end);
			jw_key(&w, "fireId");
			if (x->fire < 0) jw_null(&w);
			else jw_int(&w, x->fire);
			jw_key(&w, "item"), jw_int(&w, x->item);
			jw_key(&w, "attempt");
			if (x->attempt < 0) jw_null(&w);
			else jw_int(&w, x->attempt);
			jw_key(&w, "source"), jw_str(&w, x->source);
			jw_key(&w, "outcome"), jw_str(&w, x->outcome);
			jw_key(&w, "exitCode");
			if (x->exit_code < 0 || x->signal > 0) jw_null(&w);
			else jw_int(&w, x->exit_code);
			jw_key(&w, "signal");
			if (x->signal > 0) jw_int(&w, x->signal);
			else jw_null(&w);
			jw_key(&w, "durationMs");
			if (x->dur_ms < 0) jw_null(&w);
			else jw_int(&w, x->dur_ms);
			jw_key(&w, "instance"), jw_str(&w, x->instance);
			jw_key(&w, "host"), jw_str(&w, x->host);
			jw_key(&w, "taskId"), jw_str(&w, x->task);
			jw_key(&w, "cause"), jw_str(&w, x->cause);
			jw_key(&w, "output"), jw_str(&w, x->output);
			jw_end(&w);
		} else {
			char fi[24], it[24], at[24], ex[32], du[32], ca[CAUSE_MAX * 4 + 64];
			if (x->signal > 0) snprintf(ex, sizeof ex, "signal %lld", x->signal);
			else if (x->exit_code >= 0) snprintf(ex, sizeof ex, "%lld", x->exit_code);
			else snprintf(ex, sizeof ex, "-");
			if (x->dur_ms >= 0) snprintf(du, sizeof du, "%.3fs", (double)x->dur_ms / 1000);
			else snprintf(du, sizeof du, "-");
			ctl_table_row(t, x->start, num(fi, sizeof fi, x->fire), num(it, sizeof it, x->item),
			              num(at, sizeof at, x->attempt), x->source, x->outcome, ex, du, x->instance,
			              cause_cell(x, ca, sizeof ca));
		}
	}
	if (json) {
		jw_end(&w);
		jw_end(&w);
	} else {
		ctl_table_print(t, stdout);
	}
	if (!shown) {
		char from[600];
		if (tr.url) snprintf(from, sizeof from, "in PostgreSQL's job_execution_log");
		else snprintf(from, sizeof from, "in %s (and its rotated files): the history file of the one machine whose "
		              "supervisor writes it; what ran elsewhere is in those machines' files, or in PostgreSQL for "
		              "the whole cluster (tracing, --pg URL)", hist);
		fprintf(stderr, "ejobctl %s: no execution of %s%s %s\n", cmd, job, rs.n ? " matches" : " recorded", from);
	}
	for (size_t i = 0; i < rs.n; i++) row_free(&rs.v[i]);
	free(rs.v);
	return 0;
}
