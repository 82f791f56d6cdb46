/* tools/ejobctl_serve.c: `ejobctl serve`'s requests: the HTTP API on a cluster (DESIGN.md "HTTP API and web
 * console"; docs/api.md gives every endpoint). One process, its own ZooKeeper session (the
 * multi-threaded client, as every ejobctl command), libmicrohttpd with a thread per connection: a
 * request runs the same functions as the CLI's command (tools/ejobctl_api.h) on the session kept
 * here, one at a time (SRV.big), so a write is the CLI's write, checked and planned the same way. A
 * request refused (401, 403, 400, 413) changes nothing in ZooKeeper.
 * GET /api/v1/jobs, /servers and /instances answer from the model of the cluster
 * (tools/ejobctl_model.h: `ejobctl jobs --json`'s, `servers --json`'s and `instances --json`'s
 * documents, kept from watches on a session of its own) without SRV.big, so readers neither
 * wait on ZooKeeper nor on each other; until the model is built (or while its session is away) it
 * is read from ZooKeeper as the CLI reads it. After a write, the answer waits until the model has
 * seen it (model_sync): a read right after a write sees it.
 * The job endpoints are in tools/ejobctl_serve_jobs.c, the command in tools/ejobctl_serve_main.c. */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <microhttpd.h>

#include "ipc/version.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_api.h"
#include "tools/ejobctl_serve_int.h"
#include "tools/ejobctl_serve_assets.h"

struct serve SRV = { .big = PTHREAD_MUTEX_INITIALIZER, .auth_mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- the session ---------------------------------------------------------------------------- */

/* A session that is usable, or 0 if ZooKeeper is away (a new one is tried at most once a second;
 * the client itself reconnects a session that lost its connection). */
int srv_session_ok(char *msg, size_t cap)
{
	struct ctl *c = &SRV.c;
	if (c->zh) {
		int st = zoo_state(c->zh);
		if (st == ZOO_CONNECTED_STATE) return 1;
		if (st != ZOO_EXPIRED_SESSION_STATE && st != ZOO_AUTH_FAILED_STATE) {
			snprintf(msg, cap, "ZooKeeper at %s does not answer (reconnecting)", c->hosts);
			return 0;
		}
		zookeeper_close(c->zh);
		c->zh = NULL;
	}
	time_t now = time(NULL);
	if (now == SRV.last_try) {
		snprintf(msg, cap, "ZooKeeper at %s is unreachable", c->hosts);
		return 0;
	}
	SRV.last_try = now;
	char *keep = c->msg;
	size_t keepcap = c->msgcap;
	c->msg = msg, c->msgcap = cap, msg[0] = 0;
	c->kept = 0;
	int r = ctl_connect(c);
	c->kept = 1;
	c->msg = keep, c->msgcap = keepcap;
	return !r;
}

/* ---- responses -------------------------------------------------------------------------------- */

struct req {
	char *body;
	size_t len;
	int too_big;
};

/* the status code of the response this thread queued last (libmicrohttpd does not give it back):
 * the audit's; a request is served on one thread (one per connection) from start to end */
static _Thread_local unsigned last_code;
_Thread_local char srv_etag[32];           /* the ETag header of the response queued next ("" none) */
_Thread_local json_t *srv_audit_result;    /* what a write did, for its audit line */

enum MHD_Result srv_send_text(struct MHD_Connection *con, unsigned code, const char *type, const char *text,
                              const char *cookie)
{
	last_code = code;
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!r) return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (cookie) MHD_add_response_header(r, "Set-Cookie", cookie);
	if (srv_etag[0]) MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, srv_etag), srv_etag[0] = 0;
	/* no Basic challenge to a page's script (the console sends X-Requested-With, as Spring's clients):
	 * the browser would open its own login dialog over the console's, and a headless one hangs */
	if (code == MHD_HTTP_UNAUTHORIZED && !MHD_lookup_connection_value(con, MHD_HEADER_KIND, "X-Requested-With"))
		MHD_add_response_header(r, "WWW-Authenticate", "Basic realm=\"ejob\"");
	enum MHD_Result q = MHD_queue_response(con, code, r);
	MHD_destroy_response(r);
	return q;
}

enum MHD_Result srv_send_json(struct MHD_Connection *con, unsigned code, json_t *doc, const char *cookie)
{
	char *s = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!s) return srv_send_text(con, 500, "application/json", "{\"error\":\"out of memory\"}\n", NULL);
	size_t n = strlen(s);
	char *t = realloc(s, n + 2);
	if (t) s = t, s[n] = '\n', s[n + 1] = 0;
	enum MHD_Result q = srv_send_text(con, code, "application/json", s, cookie);
	free(s);
	return q;
}

enum MHD_Result srv_send_error(struct MHD_Connection *con, unsigned code, const char *error, const char *hint)
{
	json_t *o = json_object();
	json_object_set_new(o, "error", json_string(error));
	json_object_set_new(o, "hint", hint ? json_string(hint) : json_null());
	return srv_send_json(con, code, o, NULL);
}

/* ---- one command on the kept session ---------------------------------------------------------- */

void srv_run_begin(struct run *r)
{
	memset(r, 0, sizeof *r);
	SRV.c.out = open_memstream(&r->out, &r->outlen);
	SRV.c.err = open_memstream(&r->err, &r->errlen);
	if (!SRV.c.out || !SRV.c.err) ctl_oom();
	SRV.c.msg = r->msg, SRV.c.msgcap = sizeof r->msg;
	SRV.c.json = 1;
}

void srv_run_end(struct run *r)
{
	(void)r;
	fclose(SRV.c.out);
	fclose(SRV.c.err);
	SRV.c.out = stdout, SRV.c.err = stderr, SRV.c.msg = NULL;
}

void srv_run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* text's lines as a JSON array of strings */
json_t *srv_lines_json(const char *text)
{
	json_t *a = json_array();
	for (const char *l = text, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		json_array_append_new(a, json_stringn_nocheck(l, nl ? (size_t)(nl - l) : strlen(l)));
	}
	return a;
}

/* The answer to a command that failed: 404 (an unknown name, with the did-you-mean), 400 (bad
 * input), 503 (ZooKeeper away), 409 (the cluster was not as the request needs: changed meanwhile,
 * no instance online). The check's lines (config set's) come before the message, as the CLI
 * prints them. */
enum MHD_Result srv_send_failure(struct MHD_Connection *con, struct run *r)
{
	char *text = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&text, &tl);
	if (!f) ctl_oom();
	if (r->errlen) fputs(r->err, f);
	fputs(r->msg[0] ? r->msg : "failed", f);
	fclose(f);
	unsigned code;
	const char *hint;
	if (r->status == 2) {
		int unknown = !strncmp(r->msg, "no job ", 7) || strstr(r->msg, " has no ") || !strncmp(r->msg, "no server ", 10) || strstr(r->msg, "is not an item of") ||
		              !strncmp(r->msg, "no instance ", 12);
		code = unknown ? MHD_HTTP_NOT_FOUND : MHD_HTTP_BAD_REQUEST;
		hint = unknown ? "GET /api/v1/jobs, /servers, /instances list what there is" : "fix the request; nothing was written";
	} else if (!SRV.c.zh || zoo_state(SRV.c.zh) != ZOO_CONNECTED_STATE || strstr(r->msg, "ZooKeeper went away")) {
		code = MHD_HTTP_SERVICE_UNAVAILABLE;
		hint = "ZooKeeper is unreachable; GET /healthz answers 200 when it is back";
	} else {
		code = MHD_HTTP_CONFLICT;
		hint = "the cluster is not as this request needs (or changed meanwhile): read it again, then retry";
	}
	enum MHD_Result q = srv_send_error(con, code, text, hint);
	free(text);
	return q;
}

/* what the command printed (a JSON document), or its failure */
enum MHD_Result srv_send_run(struct MHD_Connection *con, struct run *r)
{
	if (r->status) return srv_send_failure(con, r);
	json_error_t e;
	json_t *doc = json_loadb(r->out, r->outlen, 0, &e);
	if (!doc) return srv_send_error(con, 500, "the command's output is not JSON", e.text);
	/* what the CLI says on stderr beside its --json (a write's warnings) */
	if (r->errlen && json_is_object(doc) && !json_object_get(doc, "warnings"))
		json_object_set_new(doc, "warnings", srv_lines_json(r->err));
	return srv_send_json(con, 200, doc, NULL);
}

/* ---- who asks -------------------------------------------------------------------------------- */

struct who {
	char user[128];
	enum srv_role role;
};

/* Basic or the session cookie; without --auth, everyone (on loopback) is admin "-". 0, or 401. */
static int authenticate(struct MHD_Connection *con, struct who *w)
{
	if (!SRV.users) {
		snprintf(w->user, sizeof w->user, "-");
		w->role = ROLE_ADMIN;
		return 0;
	}
	const char *cookie = MHD_lookup_connection_value(con, MHD_COOKIE_KIND, "ejob_session");
	if (cookie) {
		const char *u = srv_session_find(cookie, &w->role);
		if (u) {
			snprintf(w->user, sizeof w->user, "%s", u);
			return 0;
		}
	}
	char *pass = NULL;
	char *user = MHD_basic_auth_get_username_password(con, &pass);
	int r = MHD_HTTP_UNAUTHORIZED;
	if (user && pass && (w->role = srv_users_check(SRV.users, user, pass)) != ROLE_NONE) {
		snprintf(w->user, sizeof w->user, "%s", user);
		r = 0;
	}
	if (pass) explicit_bzero(pass, strlen(pass));
	MHD_free(user);
	MHD_free(pass);
	return r;
}

/* ---- the audit line ------------------------------------------------------------------------- */

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	(void)kind;
	json_t *v = value ? json_string(value) : json_null();
	json_object_set_new(cls, key, v ? v : json_string("(not UTF-8)"));
	return MHD_YES;
}

static void audit(struct MHD_Connection *con, const struct who *w, const char *method, const char *url,
                  const struct req *q, unsigned code)
{
	char addr[INET6_ADDRSTRLEN + 8] = "?";
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(con, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr) {
		const struct sockaddr *sa = ci->client_addr;
		if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, addr, sizeof addr);
		else if (sa->sa_family == AF_INET6) inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, addr, sizeof addr);
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char when[64];
	snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	         tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
	json_t *o = json_object();
	json_object_set_new(o, "time", json_string(when));
	json_object_set_new(o, "user", json_string(w->user));
	json_object_set_new(o, "role", json_string(srv_role_name(w->role)));
	json_object_set_new(o, "address", json_string(addr));
	json_object_set_new(o, "method", json_string(method));
	json_object_set_new(o, "path", json_string(url));
	json_t *query = json_object();     /* ?force=true, ?version=N: part of what was asked */
	MHD_get_connection_values(con, MHD_GET_ARGUMENT_KIND, query_arg, query);
	json_object_set_new(o, "query", query);
	/* the change: the body as sent (a JSON body as JSON, a config node as its text) */
	json_t *change = json_null();
	if (q->len && !q->too_big) {
		json_t *j = json_loadb(q->body, q->len, 0, NULL);
		change = j ? j : json_stringn_nocheck(q->body, q->len);
		if (!change) change = json_string("(not UTF-8)");
	}
	json_object_set_new(o, "change", change);
	json_object_set_new(o, "status", json_integer(code));
	/* what the write did, where the handler said (PUT: action, version, the keys changed) */
	if (srv_audit_result) json_object_set_new(o, "result", srv_audit_result), srv_audit_result = NULL;
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s) srv_audit_add(s);
	free(s);
}


static enum MHD_Result health(struct MHD_Connection *con)
{
	char why[2048];
	if (!srv_session_ok(why, sizeof why - 1)) return srv_send_text(con, 503, "text/plain", strcat(why, "\n"), NULL);
	char p[CTL_PATH_MAX];
	int rc = ctl_exists(&SRV.c, ctl_path(&SRV.c, p, "%s", ""), NULL);
	if (rc == ZNONODE) {
		/* ZooKeeper answers; the namespace is made by its first job's PUT */
		snprintf(why, sizeof why, "ok: namespace %s does not exist yet (PUT /api/v1/jobs/{job} makes it)\n", p);
		return srv_send_text(con, 200, "text/plain", why, NULL);
	}
	if (rc != ZOK) {
		snprintf(why, sizeof why, "ZooKeeper at %s: %s: %s\n", SRV.c.hosts, p, zerror(rc));
		return srv_send_text(con, 503, "text/plain", why, NULL);
	}
	return srv_send_text(con, 200, "text/plain", "ok\n", NULL);
}

/* GET /metrics: srv_metrics on the kept session */
static enum MHD_Result metrics(struct MHD_Connection *con)
{
	struct run r;
	srv_run_begin(&r);
	srv_metrics(&SRV.c, SRV.c.out);
	srv_run_end(&r);
	enum MHD_Result q = srv_send_text(con, 200, "text/plain; version=0.0.4; charset=utf-8", r.out ? r.out : "", NULL);
	srv_run_free(&r);
	return q;
}

/* GET /api/v1/jobs/{job}/history|trace?...: srv_pg_query */
static enum MHD_Result history(struct MHD_Connection *con, const struct srv_pgq *q)
{
	char err[1024];
	json_t *doc;
	const char *hint;
	unsigned code = srv_pg_query(SRV.pg, q, &doc, err, sizeof err, &hint);
	if (code != 200) return srv_send_error(con, code, err, hint);
	return srv_send_json(con, 200, doc, NULL);
}

static enum MHD_Result login(struct MHD_Connection *con, struct srv_req *q)
{
	if (!SRV.users) return srv_send_error(con, 400, "this server has no users (no --auth): nothing to log in to", NULL);
	const char *u = q->user, *p = q->password;
	enum srv_role role = u && p ? srv_users_check(SRV.users, u, p) : ROLE_NONE;
	if (!role) return srv_send_error(con, 401, "wrong user or password", NULL);
	char tok[SRV_TOKEN_HEX + 1], cookie[256];
	if (srv_session_new(u, role, tok))
		return srv_send_error(con, 500, "getrandom failed", NULL);
	snprintf(cookie, sizeof cookie, "ejob_session=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%d%s", tok,
	         SRV_SESSION_SECONDS, SRV.tls ? "; Secure" : "");
	json_t *o = json_object();
	json_object_set_new(o, "user", json_string(u));
	json_object_set_new(o, "role", json_string(srv_role_name(role)));
	return srv_send_json(con, 200, o, cookie);
}

/* GET /api/v1/me: who asks, and what this serve has (--auth: a logout means something; --pg: the
 * history) */
static enum MHD_Result me(struct MHD_Connection *con, const struct who *w)
{
	json_t *o = json_object();
	json_object_set_new(o, "user", json_string(w->user));
	json_object_set_new(o, "role", json_string(srv_role_name(w->role)));
	json_object_set_new(o, "auth", json_boolean(SRV.users != NULL));
	json_object_set_new(o, "history", json_boolean(SRV.pg != NULL));
	json_object_set_new(o, "namespace", json_string(SRV.c.ns));
	json_object_set_new(o, "zookeeper", json_string(SRV.c.hosts));
	json_object_set_new(o, "version", json_string(EJOB_VERSION));
	return srv_send_json(con, 200, o, NULL);
}

/* the answer to q (srv_req_parse's) from w, under SRV.big: 403 if w's role is short of what q needs, then
 * q's refusal, then the endpoint */
static enum MHD_Result route(struct MHD_Connection *con, const char *method, const char *url, struct srv_req *q,
                             const struct who *w)
{
	char why[1024];
	if (w->role < q->role) {
		snprintf(why, sizeof why, "user '%s' is %s: %s %s needs %s", w->user, srv_role_name(w->role), method, url,
		         q->role == ROLE_ADMIN ? "admin" : "operator or admin");
		return srv_send_error(con, 403, why, "an admin gives roles in serve's --auth file");
	}
	if (q->ep == EP_REFUSED) return srv_send_error(con, q->code, q->why, q->hint);
	if (q->ep == EP_AUDIT) {
		char *a = srv_audit_read(q->limit);
		if (!a) ctl_oom();
		enum MHD_Result r = srv_send_text(con, 200, "application/json", a, NULL);
		free(a);
		return r;
	}
	/* the history is PostgreSQL's: it answers while ZooKeeper is away, for removed jobs too */
	if (q->ep == EP_HISTORY) return history(con, &q->pgq);
	if (!srv_session_ok(why, sizeof why))
		return srv_send_error(con, 503, why, "ZooKeeper is unreachable; GET /healthz answers 200 when it is back");

	struct run r;
	switch (q->ep) {
	case EP_JOBS:
	case EP_SERVERS:
	case EP_INSTANCES: {
		srv_run_begin(&r);
		r.status = q->ep == EP_JOBS ? ctl_show_jobs(&SRV.c) : q->ep == EP_SERVERS ? ctl_show_servers(&SRV.c, NULL, NULL)
		                                                                     : ctl_show_instances(&SRV.c, NULL, NULL);
		srv_run_end(&r);
		enum MHD_Result res = srv_send_run(con, &r);
		srv_run_free(&r);
		return res;
	}
	case EP_WORKFLOWS:
	case EP_WF_RUNS: {
		srv_run_begin(&r);
		r.status = ctl_show_runs(&SRV.c, q->ep == EP_WF_RUNS ? q->job : NULL, q->limit);
		srv_run_end(&r);
		enum MHD_Result res;
		/* a job that is no workflow's root: the request's fault (an unknown one is 404, below) */
		if (r.status == 2 && strncmp(r.msg, "no job ", 7))
			res = srv_send_error(con, 400, r.msg, "GET /api/v1/workflows lists the workflows' roots");
		else
			res = srv_send_run(con, &r);
		srv_run_free(&r);
		return res;
	}
	case EP_JOB:
		return srv_get_job(con, q->job);
	case EP_JOB_PUT:
		return srv_put_job(con, q);
	case EP_JOB_OP:   /* item: a segment of q->path, writable */
		return srv_op_param(con, q->op, q->job, q->server, q->instance, (char *)q->item, q->force, q->param);
	case EP_SERVER_OP:
		return srv_server_op(con, q->server, q->op);
	default:
		return srv_send_error(con, 404, "no such path", "docs/api.md lists the endpoints");
	}
}

/* srv_http's value(): libmicrohttpd's query arguments and headers (MHD_lookup_connection_value
 * finds a header's name case-insensitively) */
static const char *value_of(void *cls, enum srv_kind kind, const char *key)
{
	return MHD_lookup_connection_value(cls, kind == SRV_ARG ? MHD_GET_ARGUMENT_KIND : MHD_HEADER_KIND, key);
}

/* p's answer: what needs no credentials, the credentials, then the route */
static enum MHD_Result request(struct MHD_Connection *con, const char *method, const char *url, struct req *q,
                               struct srv_req *p)
{
	if (p->ep == EP_HEALTHZ) {
		pthread_mutex_lock(&SRV.big);
		enum MHD_Result r = health(con);
		pthread_mutex_unlock(&SRV.big);
		return r;
	}
	/* the web console (tools/ejobctl_serve_assets.c): no credentials (its login form loads), no ZooKeeper */
	if (p->ep == EP_ROOT) return srv_assets_send(con, method, "index.html");
	if (!strncmp(url, "/assets/", 8)) return srv_assets_send(con, method, url + 8);
	if (p->ep == EP_REFUSED && p->code == MHD_HTTP_CONTENT_TOO_LARGE) return srv_send_error(con, p->code, p->why, p->hint);
	if (p->ep == EP_LOGIN || (p->ep == EP_REFUSED && !strcmp(url, "/api/v1/login") && !strcmp(method, "POST"))) {
		if (p->ep == EP_REFUSED) return srv_send_error(con, p->code, p->why, p->hint);
		pthread_mutex_lock(&SRV.auth_mu);
		enum MHD_Result r = login(con, p);
		pthread_mutex_unlock(&SRV.auth_mu);
		return r;
	}
	struct who w;
	pthread_mutex_lock(&SRV.auth_mu);
	int unknown = authenticate(con, &w);
	pthread_mutex_unlock(&SRV.auth_mu);
	if (unknown) return srv_send_error(con, 401, "who are you? give HTTP Basic credentials or log in",
	                                             "POST /api/v1/login {\"user\": NAME, \"password\": PASSWORD}");
	if (p->ep == EP_LOGOUT) {
		pthread_mutex_lock(&SRV.auth_mu);
		srv_session_drop(MHD_lookup_connection_value(con, MHD_COOKIE_KIND, "ejob_session"));
		pthread_mutex_unlock(&SRV.auth_mu);
		return srv_send_text(con, 200, "application/json", "{}\n",
		                 "ejob_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
	}
	/* from memory, under no lock of serve's: neither waits on ZooKeeper */
	if (p->ep == EP_ME) return me(con, &w);
	if (p->ep == EP_CHANGES) {
		json_t *doc = changes_json(SRV.changes, p->since, p->limit);
		if (!doc) ctl_oom();
		return srv_send_json(con, 200, doc, NULL);
	}
	if ((p->ep == EP_JOBS || p->ep == EP_SERVERS || p->ep == EP_INSTANCES) && SRV.model) {
		size_t len;
		char *doc = p->ep == EP_JOBS      ? model_jobs_json(SRV.model, &len)
		            : p->ep == EP_SERVERS ? model_servers_json(SRV.model, &len)
		                                  : model_instances_json(SRV.model, &len);
		if (doc) {
			/* X-Ejob-From: model: the answer came from the model (docs/api.md) */
			enum MHD_Result r = MHD_NO;
			struct MHD_Response *resp = MHD_create_response_from_buffer(len, doc, MHD_RESPMEM_MUST_FREE);
			if (resp) {
				MHD_add_response_header(resp, "Content-Type", "application/json");
				MHD_add_response_header(resp, "Cache-Control", "no-store");
				MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
				MHD_add_response_header(resp, "X-Ejob-From", "model");
				r = MHD_queue_response(con, MHD_HTTP_OK, resp);
				MHD_destroy_response(resp);
			} else {
				free(doc);
			}
			return r;
		}
	}
	pthread_mutex_lock(&SRV.big);
	enum MHD_Result res;
	if (p->ep == EP_METRICS) {
		char why[1024];
		if (!srv_session_ok(why, sizeof why))
			res = srv_send_text(con, 200, "text/plain; version=0.0.4; charset=utf-8",
			                "# HELP ejob_zookeeper_up Whether ZooKeeper answered this scrape's reads.\n"
			                "# TYPE ejob_zookeeper_up gauge\nejob_zookeeper_up 0\n", NULL);
		else res = metrics(con);
		pthread_mutex_unlock(&SRV.big);
		return res;
	}
	last_code = 0;
	json_decref(srv_audit_result);
	srv_audit_result = NULL;
	res = route(con, method, url, p, &w);
	unsigned code = last_code;
	if (p->write) audit(con, &w, method, url, q, code);
	pthread_mutex_unlock(&SRV.big);
	/* read-your-writes: the response goes out after this returns, once the model saw the write */
	if (p->write && SRV.model && model_sync(SRV.model, 10000) < 0)
		srv_log(LOGLINE_WARN, "the model did not catch up with %s %s within 10 s; reads may lag", method, url);
	/* in the feed after what the model saw of it (its pass told it before model_sync returned) */
	if (p->write) changes_audit(SRV.changes, w.user, p->job, p->item, p->instance, method, url, code);
	return res;
}

enum MHD_Result srv_on_request(void *cls, struct MHD_Connection *con, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **ctx)
{
	(void)cls, (void)version;
	struct req *q = *ctx;
	if (!q) {
		if (!(q = calloc(1, sizeof *q))) return MHD_NO;
		*ctx = q;
		return MHD_YES;
	}
	if (*upload_size) {
		if (!q->too_big && q->len + *upload_size > SRV_BODY_MAX) q->too_big = 1;
		if (!q->too_big) {
			char *b = realloc(q->body, q->len + *upload_size + 1);
			if (!b) return MHD_NO;
			memcpy(b + q->len, upload, *upload_size);
			q->body = b;
			q->len += *upload_size;
		}
		*upload_size = 0;
		return MHD_YES;
	}
	/* the body is all here: what the request is */
	const struct srv_http h = { method, url, q->body, q->len, q->too_big, value_of, con };
	struct srv_req p;
	if (srv_req_parse(&h, &p)) {
		srv_req_free(&p);
		return MHD_NO;
	}
	enum MHD_Result res = request(con, method, url, q, &p);
	srv_req_free(&p);
	return res;
}

void srv_on_done(void *cls, struct MHD_Connection *con, void **ctx, enum MHD_RequestTerminationCode toe)
{
	(void)cls, (void)con, (void)toe;
	struct req *q = *ctx;
	if (q) free(q->body);
	free(q);
	*ctx = NULL;
}
