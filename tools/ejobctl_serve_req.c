/* tools/ejobctl_serve_req.c: see ejobctl_serve_req.h. The routes of docs/api.md. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "conf/conf.h"
#include "tools/ejobctl_serve_req.h"

static const char *value(const struct srv_http *h, enum srv_kind k, const char *key)
{
	return h->value ? h->value(h->cls, k, key) : NULL;
}

static int refuse(struct srv_req *r, unsigned code, const char *hint, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int refuse(struct srv_req *r, unsigned code, const char *hint, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
	r->ep = EP_REFUSED, r->code = code, r->hint = hint;
	return 0;
}

/* refused for the reason already in r->why */
static int refused(struct srv_req *r, unsigned code, const char *hint)
{
	r->ep = EP_REFUSED, r->code = code, r->hint = hint;
	return 0;
}

/* ---- the body ---------------------------------------------------------------------------------- */

/* The body as a JSON object whose keys are among allowed (NULL-terminated), each a non-empty
 * string: r->body (NULL for an empty body). 0, or 400 after r->why. */
static unsigned body_object(const struct srv_http *h, struct srv_req *r, const char *const *allowed)
{
	size_t i = 0;
	while (i < h->len && strchr(" \t\r\n", h->body[i])) i++;
	if (i == h->len) return 0;
	json_error_t e;
	json_t *o = json_loadb(h->body, h->len, 0, &e);
	if (!o) {
		snprintf(r->why, sizeof r->why, "the body is not JSON: line %d, column %d: %s", e.line, e.column, e.text);
		return 400;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		snprintf(r->why, sizeof r->why, "the body is not a JSON object");
		return 400;
	}
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		int ok = 0;
		for (const char *const *a = allowed; *a; a++) ok |= !strcmp(*a, k);
		if (!ok) {
			size_t n = 0, wl = sizeof r->why;
			int m = snprintf(r->why, wl, "unknown key \"%.200s\" in the body (it takes:", k);
			n = m < 0 ? 0 : (size_t)m;
			for (const char *const *a = allowed; *a && n < wl; a++)
				n += (size_t)snprintf(r->why + n, wl - n, " \"%s\"", *a);
			if (n < wl) snprintf(r->why + n, wl - n, "%s)", *allowed ? "" : " none");
			json_decref(o);
			return 400;
		}
		if (!json_is_string(v) || !*json_string_value(v)) {
			snprintf(r->why, sizeof r->why, "\"%.200s\" must be a non-empty string", k);
			json_decref(o);
			return 400;
		}
	}
	r->body = o;
	return 0;
}

static const char *str_of(json_t *o, const char *k)
{
	json_t *v = o ? json_object_get(o, k) : NULL;
	return v ? json_string_value(v) : NULL;
}

/* ---- PUT's body and condition ------------------------------------------------------------------ */

/* JSON is YAML's flow style, so a JSON object is each form key for key */
static enum srv_put_form put_form(const char *b, size_t len)
{
	json_t *o = json_loadb(b, len, 0, NULL);
	if (o) {
		enum srv_put_form f = !json_is_object(o) ? FORM_NODE : json_object_get(o, "jobs") ? FORM_FILE
		                      : json_object_get(o, "type") ? FORM_JOB : FORM_NODE;
		json_decref(o);
		return f;
	}
	for (size_t i = 0; i < len; i++) {
		if (i && b[i - 1] != '\n') continue;
		if (len - i >= 5 && !memcmp(b + i, "jobs:", 5)) return FORM_FILE;
		if (len - i >= 5 && !memcmp(b + i, "type:", 5)) return FORM_JOB;
	}
	return FORM_NODE;
}

#define WRAP_LINES 2            /* "jobs:" and the job's key, above a FORM_JOB body */
#define WRAP_INDENT 4

/* A FORM_JOB body as a file's jobs: {job: body} (each line indented), malloc'd, NUL-terminated */
static char *wrap_job(const char *job, const char *b, size_t len, size_t *outlen)
{
	char *t = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&t, &tl);
	if (!f) return NULL;
	fputs("jobs:\n  \"", f);
	for (const char *p = job; *p; p++) fprintf(f, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
	fputs("\":\n", f);
	for (size_t i = 0; i < len; i++) {
		if (i == 0 || b[i - 1] == '\n') fprintf(f, "%*s", WRAP_INDENT, "");
		fputc(b[i], f);
	}
	fputc('\n', f);
	if (fclose(f)) {
		free(t);
		return NULL;
	}
	*outlen = tl;
	return t;
}

char *srv_unwrap_positions(const char *s)
{
	char *t = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&t, &tl);
	if (!f) return NULL;
	while (*s) {
		unsigned line, col;
		int n = 0;
		if (!strncmp(s, "body:", 5) && sscanf(s + 5, "%u:%u:%n", &line, &col, &n) == 2 && n &&
		    line > WRAP_LINES) {
			fprintf(f, "body:%u:%u:", line - WRAP_LINES, col > WRAP_INDENT ? col - WRAP_INDENT : 1);
			s += 5 + n;
			continue;
		}
		fputc(*s++, f);
	}
	if (fclose(f)) {
		free(t);
		return NULL;
	}
	return t;
}

/* the version a PUT is conditional on: ?version=N, or If-Match: "N" (the ETag PUT answers with;
 * "*": any, the job must exist); If-None-Match: * (create only). 0, or 400 after why. */
static unsigned put_condition(const struct srv_http *h, struct srv_req *r)
{
	char *why = r->why;
	size_t wl = sizeof r->why;
	r->want = -1, r->must_exist = r->must_not_exist = 0;
	const char *v = value(h, SRV_ARG, "version");
	const char *m = value(h, SRV_HEADER, "If-Match");
	const char *nm = value(h, SRV_HEADER, "If-None-Match");
	if (nm) {
		if (strcmp(nm, "*")) {
			snprintf(why, wl, "If-None-Match takes * only (create the job, or nothing)");
			return 400;
		}
		r->must_not_exist = 1;
	}
	long vm = -1;
	if (m) {
		char buf[32];
		size_t n = strlen(m);
		if (!strcmp(m, "*")) {
			r->must_exist = 1;
		} else if (n >= 3 && n < sizeof buf && m[0] == '"' && m[n - 1] == '"') {
			snprintf(buf, sizeof buf, "%.*s", (int)n - 2, m + 1);
			char *e;
			errno = 0;
			vm = strtol(buf, &e, 10);
			if (errno || e == buf || *e || vm < 0 || vm > 0x7fffffff) vm = -2;
		} else {
			vm = -2;
		}
		if (vm == -2) {
			snprintf(why, wl, "If-Match: %.64s: give the ETag a PUT answered with (\"N\", quoted: the config "
			         "node's version) or *", m);
			return 400;
		}
		r->want = vm;
	}
	if (v) {
		char *e;
		errno = 0;
		long x = strtol(v, &e, 10);
		if (errno || e == v || *e || x < 0 || x > 0x7fffffff) {
			snprintf(why, wl, "?version= takes the node's version (configVersion of GET /api/v1/jobs/{job})");
			return 400;
		}
		if (vm >= 0 && vm != x) {
			snprintf(why, wl, "?version=%ld and If-Match: %.64s disagree: give one", x, m);
			return 400;
		}
		r->want = x;
	}
	if ((r->want >= 0 || r->must_exist) && r->must_not_exist) {
		snprintf(why, wl, "If-None-Match: * (create only) with a version to replace: give one");
		return 400;
	}
	return 0;
}

static int put(const struct srv_http *h, struct srv_req *r)
{
	if (!h->len)
		return refuse(r, 400, "docs/api.md: PUT /api/v1/jobs/{job}", "PUT needs the job as the body (YAML or JSON)");
	/* a name the loader refuses: said so here, not as a body that "has no job" after YAML folded it */
	const char *why = conf_job_name_problem(r->job, strlen(r->job));
	if (why)
		return refuse(r, 400, "a job name is 1-255 bytes without '/', '@-@', whitespace or control characters",
		              "the job name in the path %s", why);
	unsigned bad = put_condition(h, r);
	if (bad) return refused(r, bad, NULL);
	r->form = put_form(h->body, h->len);
	if (r->form == FORM_JOB) {
		if (!(r->text = wrap_job(r->job, h->body, h->len, &r->textlen))) return -1;
	} else {
		if (!(r->text = malloc(h->len + 1))) return -1;
		memcpy(r->text, h->body, h->len);
		r->text[h->len] = 0;
		r->textlen = h->len;
	}
	r->ep = EP_JOB_PUT;
	return 0;
}

/* ---- the routes ------------------------------------------------------------------------------- */

static int job_name_ok(const char *s)
{
	return *s && strlen(s) <= CONF_MAX_NAME_BYTES && !strchr(s, '/');
}

/* GET /api/v1/jobs/{job}/history|trace?..., and over every job GET /api/v1/history|trace?job=&... (all) */
static int history(const struct srv_http *h, struct srv_req *r, int trace, int all)
{
	static const char *const known[] = { "item", "outcome", "ip", "since", "until", "limit", "cursor", "state", "task", NULL };
	struct srv_pgq *q = &r->pgq;
	q->job = r->job, q->trace = trace;
	if (all && (q->job = value(h, SRV_ARG, "job")) && !job_name_ok(q->job))
		return refuse(r, 400, "job= filters by one job's name; leave it out for every job",
		              "job=%.64s: not a job name (1-255 bytes without '/')", q->job);
	const char **dst[] = { &q->item, &q->outcome, &q->ip, &q->since, &q->until, &q->limit, &q->cursor, &q->state, &q->task };
	for (int i = 0; known[i]; i++) *dst[i] = value(h, SRV_ARG, known[i]);
	const char *bad = trace ? (q->item ? "item" : q->outcome ? "outcome" : NULL) : (q->state ? "state" : q->task ? "task" : NULL);
	if (bad)
		return refuse(r, 400, trace ? "trace takes state, task, ip, since, until, limit, cursor"
		                            : "history takes item, outcome, ip, since, until, limit, cursor",
		              "%s= is a filter of %s, not of %s", bad, trace ? "history" : "trace", trace ? "trace" : "history");
	r->ep = EP_HISTORY;
	return 0;
}

/* /api/v1/jobs/{job}... (n >= 4) */
static int job_route(const struct srv_http *h, struct srv_req *r, int get, int post, int put_, int del)
{
	char **s = r->seg;
	int n = r->nseg;
	unsigned bad;
	r->job = s[3];
	if (!job_name_ok(r->job)) return refuse(r, 400, NULL, "not a job name");
	if (n == 5 && get && (!strcmp(s[4], "history") || !strcmp(s[4], "trace"))) return history(h, r, s[4][0] == 't', 0);
	if (n == 4 && get) return r->ep = EP_JOB, 0;
	if (n == 4 && (put_ || del)) {
		r->role = ROLE_ADMIN;
		if (put_) return put(h, r);
		const char *f = value(h, SRV_ARG, "force");
		if (h->len) return refuse(r, 400, "?force=true removes a job with items running", "DELETE takes no body");
		r->ep = EP_JOB_OP, r->op = "remove";
		r->force = f && (!strcmp(f, "true") || !strcmp(f, "1"));
		return 0;
	}
	if (!post) return refuse(r, 405, "docs/api.md lists the endpoints", "method not allowed here");
	r->role = ROLE_OPERATOR;
	if (n == 5 && !strcmp(s[4], "trigger")) {
		static const char *const k[] = { "parameter", NULL };
		if ((bad = body_object(h, r, k))) return refused(r, bad, NULL);
		/* body_object took only non-empty strings: that fire's jobParameter */
		r->ep = EP_JOB_OP, r->op = "trigger", r->param = str_of(r->body, "parameter");
		return 0;
	}
	if (n == 5 && (!strcmp(s[4], "disable") || !strcmp(s[4], "enable") || !strcmp(s[4], "shutdown"))) {
		static const char *const k1[] = { "server", NULL }, *const k2[] = { "server", "instance", NULL };
		if ((bad = body_object(h, r, strcmp(s[4], "shutdown") ? k1 : k2))) return refused(r, bad, NULL);
		r->server = str_of(r->body, "server"), r->instance = str_of(r->body, "instance");
		if (r->server && r->instance) return refuse(r, 400, NULL, "give \"server\" or \"instance\", not both");
		r->ep = EP_JOB_OP;
		r->op = s[4][0] == 'd' ? "disable" : s[4][0] == 'e' ? "enable" : "shutdown";
		return 0;
	}
	if (n == 7 && !strcmp(s[4], "items") && (!strcmp(s[6], "disable") || !strcmp(s[6], "enable"))) {
		static const char *const k[] = { NULL };
		if ((bad = body_object(h, r, k))) return refused(r, bad, NULL);
		char *e;
		errno = 0;
		long it = strtol(s[5], &e, 10);
		if (errno || e == s[5] || *e || it < 0 || it >= CONF_MAX_ITEMS)
			return refuse(r, 400, "items are 0 .. shardingTotalCount-1", "not an item number");
		r->ep = EP_JOB_OP, r->op = s[6][0] == 'd' ? "disable-item" : "enable-item", r->item = s[5];
		return 0;
	}
	return refuse(r, 404, "docs/api.md lists the endpoints", "no such path");
}

/* a number from 0 to max in s (all of it): 0, or -1 */
static int number(const char *s, long long max, long long *v)
{
	char *e;
	errno = 0;
	long long x = strtoll(s, &e, 10);
	if (*s < '0' || *s > '9' || errno || *e || x > max) return -1;   /* digits only: no sign, no space */
	*v = x;
	return 0;
}

/* GET /api/v1/changes?since=SEQ&limit=N */
static int changes(const struct srv_http *h, struct srv_req *r)
{
	const char *s = value(h, SRV_ARG, "since"), *l = value(h, SRV_ARG, "limit");
	long long v;
	r->since = -1, r->limit = 100;
	if (s) {
		if (number(s, 0x7fffffffffffffffLL, &v))
			return refuse(r, 400, "pass \"next\" of the answer before as since, or leave since out for the latest",
			              "since=%.32s: give a change's seq (a number, 0 or more)", s);
		r->since = v;
	}
	if (l) {
		if (number(l, SRV_CHANGES_MAX, &v) || v < 1)
			return refuse(r, 400, NULL, "limit=%.32s: give 1 to %d changes (default 100)", l, SRV_CHANGES_MAX);
		r->limit = (int)v;
	}
	r->ep = EP_CHANGES;
	return 0;
}

/* GET /api/v1/workflows, /api/v1/workflows/{root}/runs[?limit=N] */
static int workflows(const struct srv_http *h, struct srv_req *r, int get)
{
	char **s = r->seg;
	int n = r->nseg;
	if (n != 3 && !(n == 5 && !strcmp(s[4], "runs"))) return refuse(r, 404, "docs/api.md lists the endpoints", "no such path");
	if (!get) return refuse(r, 405, "docs/api.md lists the endpoints", "method not allowed here: GET only");
	if (n == 3) return r->ep = EP_WORKFLOWS, 0;
	r->job = s[3];
	if (!job_name_ok(r->job)) return refuse(r, 400, NULL, "not a job name");
	const char *l = value(h, SRV_ARG, "limit");
	long long v;
	r->limit = 10;
	if (l) {
		if (number(l, SRV_RUNS_MAX, &v) || v < 1)
			return refuse(r, 400, NULL, "limit=%.32s: give 1 to %d runs (default 10)", l, SRV_RUNS_MAX);
		r->limit = (int)v;
	}
	r->ep = EP_WF_RUNS;
	return 0;
}

int srv_req_parse(const struct srv_http *h, struct srv_req *r)
{
	memset(r, 0, sizeof *r);
	r->role = ROLE_VIEWER;
	r->want = -1;
	r->since = -1;
	const char *m = h->method, *url = h->url;
	int get = !strcmp(m, "GET") || !strcmp(m, "HEAD"), post = !strcmp(m, "POST");
	int put_ = !strcmp(m, "PUT"), del = !strcmp(m, "DELETE");
	r->write = !get;
	if (!strcmp(url, "/healthz")) return r->ep = EP_HEALTHZ, 0;
	if (!strcmp(url, "/")) return r->ep = EP_ROOT, 0;
	if (h->too_big)
		return refuse(r, 413, "a job's config node is at most about 1 MiB", "the body is larger than %u bytes",
		              SRV_BODY_MAX);
	if (!strcmp(url, "/api/v1/login") && post) {
		static const char *const k[] = { "user", "password", NULL };
		unsigned bad = body_object(h, r, k);
		if (bad) return refused(r, bad, "POST {\"user\": NAME, \"password\": PASSWORD}");
		r->user = str_of(r->body, "user"), r->password = str_of(r->body, "password");
		return r->ep = EP_LOGIN, 0;
	}
	if (!strcmp(url, "/api/v1/logout") && post) return r->ep = EP_LOGOUT, 0;
	if (!strcmp(url, "/metrics") && !strcmp(m, "GET")) return r->ep = EP_METRICS, 0;

	if (strlen(url) >= sizeof r->path) return refuse(r, 404, NULL, "no such path");
	snprintf(r->path, sizeof r->path, "%s", url);
	char **s = r->seg, *save = NULL;
	for (char *p = strtok_r(r->path, "/", &save); p && r->nseg < SRV_SEG_MAX; p = strtok_r(NULL, "/", &save))
		s[r->nseg++] = p;
	int n = r->nseg;
	if (n < 2 || strcmp(s[0], "api") || strcmp(s[1], "v1"))
		return refuse(r, 404, "the API is under /api/v1 (docs/api.md)", "no such path");
	if (n == 3 && !strcmp(s[2], "audit") && get) {
		const char *l = value(h, SRV_ARG, "limit");
		r->limit = 100;
		if (l) {
			char *e;
			errno = 0;
			long x = strtol(l, &e, 10);
			if (errno || e == l || *e || x < 1 || x > 0x7fffffff)
				return refuse(r, 400, NULL, "?limit= takes a number of lines, 1 or more (default 100)");
			r->limit = (int)x;
		}
		return r->ep = EP_AUDIT, 0;
	}
	if (n == 3 && (!strcmp(s[2], "me") || !strcmp(s[2], "changes") || !strcmp(s[2], "history") ||
	               !strcmp(s[2], "trace"))) {
		if (!get) return refuse(r, 405, "docs/api.md lists the endpoints", "method not allowed here: GET only");
		if (!strcmp(s[2], "me")) return r->ep = EP_ME, 0;
		if (!strcmp(s[2], "changes")) return changes(h, r);
		return history(h, r, s[2][0] == 't', 1);
	}
	if (n == 3 && get && !strcmp(s[2], "jobs")) return r->ep = EP_JOBS, 0;
	if (n == 3 && get && !strcmp(s[2], "servers")) return r->ep = EP_SERVERS, 0;
	if (n == 3 && get && !strcmp(s[2], "instances")) return r->ep = EP_INSTANCES, 0;
	if (n >= 4 && !strcmp(s[2], "jobs")) return job_route(h, r, get, post, put_, del);
	if (n >= 3 && !strcmp(s[2], "workflows")) return workflows(h, r, get);
	if (n == 5 && !strcmp(s[2], "servers") && post &&
	    (!strcmp(s[4], "disable") || !strcmp(s[4], "enable") || !strcmp(s[4], "shutdown"))) {
		static const char *const k[] = { NULL };
		r->role = ROLE_OPERATOR;
		unsigned bad = body_object(h, r, k);
		if (bad) return refused(r, bad, NULL);
		r->ep = EP_SERVER_OP, r->server = s[3];
		r->op = s[4][0] == 'd' ? "disable" : s[4][0] == 'e' ? "enable" : "shutdown";
		return 0;
	}
	return refuse(r, 404, "docs/api.md lists the endpoints", "no such path");
}

void srv_req_free(struct srv_req *r)
{
	json_decref(r->body);
	r->body = NULL;
	free(r->text);
	r->text = NULL;
}
