/* tools/ejobctl_history.c: ejobctl history JOB: what ran, from ElasticJob's JOB_EXECUTION_LOG in
 * PostgreSQL when the config has tracing, else from the supervisors' history file
 * (supervisor.history, rotated files included, oldest first). */
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/ejobctl.h"
#include "tools/ejobctl_zk.h"

static const char usage_text[] =
	"usage: ejobctl history JOB [-c FILE | --file HISTORY | --pg URL] [--item N] [--since T] [--failed] [--json]\n"
	"\n"
	"What ran of JOB, oldest first: each attempt's start, item, attempt, source, outcome, exit code or\n"
	"signal, duration, instance and cause. From PostgreSQL (ElasticJob's JOB_EXECUTION_LOG) when\n"
	"FILE has tracing or --pg is given, else from the history file (FILE's supervisor.history.file,\n"
	"or --file, with its rotated files FILE.1, FILE.2, ...).\n"
	"  --since T   from T on: 2026-11-24, 2026-11-24T07:00:00Z, or ago: 90s, 30m, 12h, 7d\n"
	"  --failed    only attempts that did not succeed\n";

struct row {
	char *start, *end, *job, *source, *outcome, *instance, *host, *task, *cause, *output;
	long long item, attempt, exit_code, signal, dur_ms;   /* -1: unknown / null */
	long long start_ms;
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
	rs->v[rs->n++] = *r;
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

/* the JSON string at *p (after its opening quote), unescaped into a malloc'd string; *p after it */
static char *jstring(const char **p)
{
	const char *s = *p;
	size_t cap = 64, n = 0;
	char *out = malloc(cap);
	CTL_NEED(out);
	for (; *s && *s != '"'; s++) {
		char c = *s;
		char buf[4];
		size_t k = 1;
		if (c == '\\') {
			s++;
			switch (*s) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned u = 0;
				if (sscanf(s + 1, "%4x", &u) != 1) {
					free(out);
					return NULL;
				}
				s += 4;
				/* our writer escapes only control characters and stray bytes this way */
				if (u < 0x80) c = (char)u;
				else if (u < 0x800) buf[0] = (char)(0xC0 | u >> 6), buf[1] = (char)(0x80 | (u & 0x3F)), k = 2;
				else buf[0] = (char)(0xE0 | u >> 12), buf[1] = (char)(0x80 | ((u >> 6) & 0x3F)),
				     buf[2] = (char)(0x80 | (u & 0x3F)), k = 3;
				break;
			}
			case 0: free(out); return NULL;
			default: c = *s;
			}
		}
		if (k == 1) buf[0] = c;
		if (n + k + 1 > cap) {
			cap *= 2;
			char *o = realloc(out, cap);
			CTL_NEED(o);
			out = o;
		}
		memcpy(out + n, buf, k);
		n += k;
	}
	if (*s != '"') {
		free(out);
		return NULL;
	}
	out[n] = 0;
	*p = s + 1;
	return out;
}

/* one line into r; 0 if it is a record, -1 if not (garbage, a cut line) */
static int parse_line(const char *line, struct row *r)
{
	memset(r, 0, sizeof *r);
	r->item = r->attempt = r->exit_code = r->signal = r->dur_ms = -1;
	const char *p = line;
	if (*p++ != '{') return -1;
	while (*p && *p != '}') {
		if (*p == ',') p++;
		if (*p++ != '"') goto bad;
		char *key = jstring(&p);
		if (!key || *p++ != ':') {
			free(key);
			goto bad;
		}
		char *sval = NULL;
		long long num = -1;
		if (*p == '"') {
			p++;
			if (!(sval = jstring(&p))) {
				free(key);
				goto bad;
			}
		} else {
			const char *e = p + strcspn(p, ",}");
			if (e - p >= 1 && (p[0] == '-' || (p[0] >= '0' && p[0] <= '9'))) num = strtoll(p, NULL, 10);
			else if (!strncmp(p, "true", 4)) num = 1;
			else if (!strncmp(p, "false", 5)) num = 0;
			p = e;
		}
		char **dst = !strcmp(key, "start") ? &r->start : !strcmp(key, "end") ? &r->end : !strcmp(key, "job") ? &r->job
		             : !strcmp(key, "source") ? &r->source : !strcmp(key, "outcome") ? &r->outcome
		             : !strcmp(key, "instance") ? &r->instance : !strcmp(key, "host") ? &r->host
		             : !strcmp(key, "taskId") ? &r->task : !strcmp(key, "cause") ? &r->cause
		             : !strcmp(key, "output") ? &r->output : NULL;
		if (dst && !*dst) *dst = sval, sval = NULL;
		if (!strcmp(key, "item")) r->item = num;
		else if (!strcmp(key, "attempt")) r->attempt = num;
		else if (!strcmp(key, "exitCode")) r->exit_code = num;
		else if (!strcmp(key, "signal")) r->signal = num;
		else if (!strcmp(key, "durationMs")) r->dur_ms = num;
		free(key);
		free(sval);
	}
	if (*p != '}' || !r->job || !r->start || r->item < 0) goto bad;
	r->start_ms = parse_time(r->start);
	return 0;
bad:
	row_free(r);
	return -1;
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
		while ((len = getline(&line, &cap, f)) > 0) {
			if (line[len - 1] == '\n') line[--len] = 0;
			if (!len) continue;
			struct row r;
			if (parse_line(line, &r) == 0) rows_add(rs, &r);
			else (*bad)++;
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
		r.attempt = r.exit_code = r.signal = r.dur_ms = -1;
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

int ejobctl_history(int argc, char **argv)
{
	const char *cmd = "history", *job = NULL, *file = NULL, *hist = NULL, *pg = NULL, *since_s = NULL;
	long long item = -1, since = -1;
	int failed = 0, json = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **val = !strcmp(a, "-c") || !strcmp(a, "--config") ? &file : !strcmp(a, "--file") ? &hist
		                   : !strcmp(a, "--pg") ? &pg : !strcmp(a, "--since") ? &since_s : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage_text, stdout);
			return 0;
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
	conf_t *conf = NULL;
	if (file) {
		conf_diags_t *d = NULL;
		conf = conf_load_file(file, NULL, &d);
		if (!conf) {
			for (size_t k = 0; d && k < conf_diags_count(d); k++) fprintf(stderr, "%s\n", conf_diags_get(d, k)->text);
			conf_diags_free(d);
			fprintf(stderr, "ejobctl %s: %s does not load (above)\n", cmd, file);
			return 2;
		}
		conf_diags_free(d);
	}
	conf_tracing_t tr = { 0 };
	if (pg) tr.url = pg;
	else if (!hist && conf && conf->tracing.url) tr = conf->tracing;
	if (!tr.url && !hist) hist = conf ? conf->supervisor.history_file : NULL;
	if (!tr.url && !hist) {
		fprintf(stderr, "ejobctl %s: where is the history? give -c FILE (with tracing or supervisor.history), "
		        "--file HISTORY or --pg URL\n", cmd);
		conf_free(conf);
		return 2;
	}
	struct rows rs = { 0 };
	long bad = 0;
	int r = tr.url ? read_pg(cmd, &tr, job, &rs) : read_file(cmd, hist, &rs, &bad);
	conf_free(conf);
	if (r) return r;
	if (bad) fprintf(stderr, "ejobctl %s: %ld line%s of %s %s not a record (cut or garbage): left out\n", cmd, bad,
		         bad == 1 ? "" : "s", hist, bad == 1 ? "is" : "are");

	struct jw w;
	struct ctl_table *t = NULL;
	if (json) {
		jw_begin(&w, stdout);
		jw_obj(&w);
		jw_key(&w, "job"), jw_str(&w, job);
		jw_key(&w, "from"), jw_str(&w, tr.url ? "postgresql" : "file");
		jw_key(&w, "executions"), jw_arr(&w);
	} else {
		t = ctl_table_new(9, "START", "ITEM", "ATTEMPT", "SOURCE", "OUTCOME", "EXIT", "DURATION", "WHERE", "CAUSE");
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
			char it[24], at[24], ex[32], du[32];
			if (x->signal > 0) snprintf(ex, sizeof ex, "signal %lld", x->signal);
			else if (x->exit_code >= 0) snprintf(ex, sizeof ex, "%lld", x->exit_code);
			else snprintf(ex, sizeof ex, "-");
			if (x->dur_ms >= 0) snprintf(du, sizeof du, "%.3fs", (double)x->dur_ms / 1000);
			else snprintf(du, sizeof du, "-");
			ctl_table_row(t, x->start, num(it, sizeof it, x->item), num(at, sizeof at, x->attempt), x->source,
			              x->outcome, ex, du, x->instance, x->cause);
		}
	}
	if (json) {
		jw_end(&w);
		jw_end(&w);
	} else if (shown) {
		ctl_table_print(t, stdout);
	} else {
		ctl_table_print(t, stdout);
		fprintf(stderr, "ejobctl %s: no execution of %s%s\n", cmd, job, rs.n ? " matches" : " recorded");
	}
	for (size_t i = 0; i < rs.n; i++) row_free(&rs.v[i]);
	free(rs.v);
	return 0;
}
