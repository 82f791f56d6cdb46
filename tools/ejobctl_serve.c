/* tools/ejobctl_serve.c: `ejobctl serve`: the HTTP API on a cluster (DESIGN.md "HTTP API and web
 * console"; docs/api.md gives every endpoint). One process, its own ZooKeeper session (the
 * multi-threaded client, as every ejobctl command), libmicrohttpd with a thread per connection: a
 * request runs the same functions as the CLI's command (tools/ejobctl_api.h) on the session kept
 * here, one at a time (S.big), so a write is the CLI's write, checked and planned the same way. A
 * request refused (401, 403, 400, 413) changes nothing in ZooKeeper.
 * GET /api/v1/jobs answers from the model of the cluster (tools/ejobctl_model.h: `ejobctl jobs
 * --json`'s document, kept from watches on a session of its own) without S.big, so readers neither
 * wait on ZooKeeper nor on each other; until the model is built (or while its session is away) it
 * is read from ZooKeeper as the CLI reads it. After a write, the answer waits until the model has
 * seen it (model_sync): a read right after a write sees it. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <microhttpd.h>

#include "conf/conf.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_api.h"
#include "tools/ejobctl_model.h"
#include "tools/ejobctl_job.h"
#include "tools/ejobctl_serve.h"
#include "tools/ejobctl_serve_req.h"
#include "tools/ejobctl_zk.h"

static struct serve {
	struct ctl c;               /* c.kept: the session is this file's */
	struct srv_users *users;    /* --auth; NULL: none (loopback only) */
	int tls;
	const char *pg;             /* --pg URL: the history's PostgreSQL; NULL: none */
	time_t last_try;            /* the last connect attempt (at most one a second) */
	model_t *model;             /* GET /api/v1/jobs's answers; NULL with --no-model */
	pthread_mutex_t big;        /* the session and c's buffers: one command at a time */
	pthread_mutex_t auth_mu;    /* users' checks (crypt's buffer) and the sessions' table */
} S = { .big = PTHREAD_MUTEX_INITIALIZER, .auth_mu = PTHREAD_MUTEX_INITIALIZER };

/* ---- the session ---------------------------------------------------------------------------- */

/* A session that is usable, or 0 if ZooKeeper is away (a new one is tried at most once a second;
 * the client itself reconnects a session that lost its connection). */
static int session_ok(char *msg, size_t cap)
{
	struct ctl *c = &S.c;
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
	if (now == S.last_try) {
		snprintf(msg, cap, "ZooKeeper at %s is unreachable", c->hosts);
		return 0;
	}
	S.last_try = now;
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
static _Thread_local char etag[32];           /* the ETag header of the response queued next ("" none) */
static _Thread_local json_t *audit_result;    /* what a write did, for its audit line */

static enum MHD_Result send_text(struct MHD_Connection *con, unsigned code, const char *type, const char *text,
                                 const char *cookie)
{
	last_code = code;
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	if (!r) return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (cookie) MHD_add_response_header(r, "Set-Cookie", cookie);
	if (etag[0]) MHD_add_response_header(r, MHD_HTTP_HEADER_ETAG, etag), etag[0] = 0;
	if (code == MHD_HTTP_UNAUTHORIZED) MHD_add_response_header(r, "WWW-Authenticate", "Basic realm=\"ejob\"");
	enum MHD_Result q = MHD_queue_response(con, code, r);
	MHD_destroy_response(r);
	return q;
}

static enum MHD_Result send_json(struct MHD_Connection *con, unsigned code, json_t *doc, const char *cookie)
{
	char *s = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!s) return send_text(con, 500, "application/json", "{\"error\":\"out of memory\"}\n", NULL);
	size_t n = strlen(s);
	char *t = realloc(s, n + 2);
	if (t) s = t, s[n] = '\n', s[n + 1] = 0;
	enum MHD_Result q = send_text(con, code, "application/json", s, cookie);
	free(s);
	return q;
}

static enum MHD_Result send_error(struct MHD_Connection *con, unsigned code, const char *error, const char *hint)
{
	json_t *o = json_object();
	json_object_set_new(o, "error", json_string(error));
	json_object_set_new(o, "hint", hint ? json_string(hint) : json_null());
	return send_json(con, code, o, NULL);
}

/* ---- one command on the kept session ---------------------------------------------------------- */

struct run {
	char *out, *err;            /* what it printed (c->out, c->err) */
	size_t outlen, errlen;
	char msg[2048];             /* its failure's message */
	int status;                 /* its exit status */
};

static void run_begin(struct run *r)
{
	memset(r, 0, sizeof *r);
	S.c.out = open_memstream(&r->out, &r->outlen);
	S.c.err = open_memstream(&r->err, &r->errlen);
	if (!S.c.out || !S.c.err) ctl_oom();
	S.c.msg = r->msg, S.c.msgcap = sizeof r->msg;
	S.c.json = 1;
}

static void run_end(struct run *r)
{
	(void)r;
	fclose(S.c.out);
	fclose(S.c.err);
	S.c.out = stdout, S.c.err = stderr, S.c.msg = NULL;
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* text's lines as a JSON array of strings */
static json_t *lines_json(const char *text)
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
static enum MHD_Result send_failure(struct MHD_Connection *con, struct run *r)
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
	} else if (!S.c.zh || zoo_state(S.c.zh) != ZOO_CONNECTED_STATE || strstr(r->msg, "ZooKeeper went away")) {
		code = MHD_HTTP_SERVICE_UNAVAILABLE;
		hint = "ZooKeeper is unreachable; GET /healthz answers 200 when it is back";
	} else {
		code = MHD_HTTP_CONFLICT;
		hint = "the cluster is not as this request needs (or changed meanwhile): read it again, then retry";
	}
	enum MHD_Result q = send_error(con, code, text, hint);
	free(text);
	return q;
}

/* what the command printed (a JSON document), or its failure */
static enum MHD_Result send_run(struct MHD_Connection *con, struct run *r)
{
	if (r->status) return send_failure(con, r);
	json_error_t e;
	json_t *doc = json_loadb(r->out, r->outlen, 0, &e);
	if (!doc) return send_error(con, 500, "the command's output is not JSON", e.text);
	/* what the CLI says on stderr beside its --json (a write's warnings) */
	if (r->errlen && json_is_object(doc) && !json_object_get(doc, "warnings"))
		json_object_set_new(doc, "warnings", lines_json(r->err));
	return send_json(con, 200, doc, NULL);
}

/* ---- who asks -------------------------------------------------------------------------------- */

struct who {
	char user[128];
	enum srv_role role;
};

/* Basic or the session cookie; without --auth, everyone (on loopback) is admin "-". 0, or 401. */
static int authenticate(struct MHD_Connection *con, struct who *w)
{
	if (!S.users) {
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
	if (user && pass && (w->role = srv_users_check(S.users, user, pass)) != ROLE_NONE) {
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
	if (audit_result) json_object_set_new(o, "result", audit_result), audit_result = NULL;
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (s) srv_audit_add(s);
	free(s);
}

/* ---- the routes ------------------------------------------------------------------------------- */

/* GET /api/v1/jobs/{job}: status --json plus "config", the node's text */
static enum MHD_Result get_job(struct MHD_Connection *con, const char *job)
{
	struct run r;
	run_begin(&r);
	r.status = ctl_show_status(&S.c, job, NULL, 0);
	run_end(&r);
	if (r.status) {
		enum MHD_Result q = send_failure(con, &r);
		run_free(&r);
		return q;
	}
	json_t *doc = json_loadb(r.out, r.outlen, 0, NULL);
	run_free(&r);
	if (!doc) return send_error(con, 500, "status's output is not JSON", NULL);
	char p[CTL_PATH_MAX], *data = NULL;
	struct Stat st;
	int rc = ctl_get(&S.c, ctl_path(&S.c, p, "/%s/config", job), &data, &st);
	if (rc == ZOK) {
		json_t *cfg = data ? json_string(data) : NULL;   /* NULL too when it is not UTF-8 */
		json_object_set_new(doc, "config", cfg ? cfg : json_null());
		json_object_set_new(doc, "configVersion", json_integer(st.version));
		/* the version as PUT's ETag: a PUT with If-Match of it writes only over what was read */
		snprintf(etag, sizeof etag, "\"%d\"", st.version);
	}
	free(data);
	return send_json(con, 200, doc, NULL);
}

/* ---- PUT /api/v1/jobs/{job} --------------------------------------------------------------------- */

static json_t *keys_json(const char *const *keys, size_t n)
{
	json_t *a = json_array();
	for (size_t i = 0; i < n; i++) json_array_append_new(a, json_string(keys[i]));
	return a;
}

static enum MHD_Result put_answer(struct MHD_Connection *con, const char *job, const char *action, int version,
                                  json_t *keys, const char *warnings)
{
	json_t *o = json_object();
	json_object_set_new(o, "job", json_string(job));
	json_object_set_new(o, "action", json_string(action));
	json_object_set_new(o, "configVersion", json_integer(version));
	json_object_set_new(o, "changed", json_boolean(strcmp(action, "unchanged")));
	json_object_set_new(o, "keys", keys);
	json_object_set_new(o, "warnings", lines_json(warnings));
	audit_result = json_pack("{s:s,s:i,s:O}", "action", action, "configVersion", version, "keys", keys);
	snprintf(etag, sizeof etag, "\"%d\"", version);
	return send_json(con, strcmp(action, "create") ? 200 : MHD_HTTP_CREATED, o, NULL);
}

/* a job that has no config node yet: made from the body (apply's check for a file's job, config
 * set's for a node; a label required, as apply requires one) by ctl_job_put, root and config in
 * one multi */
static enum MHD_Result put_create(struct MHD_Connection *con, const char *job, enum srv_put_form form, const char *text,
                                  size_t len, int wrapped)
{
	char *lines = NULL, why[1024], err[1024];
	size_t ll = 0;
	FILE *f = open_memstream(&lines, &ll);
	if (!f) ctl_oom();
	conf_diags_t *d = NULL;
	conf_t *cf = NULL;
	conf_job_t *nj = NULL;
	const conf_job_t *j = NULL;
	why[0] = 0;
	if (form == FORM_NODE) {
		nj = conf_node_take(text, len, "body", job, "", NULL, why, sizeof why, &d);
		j = nj;
	} else {
		conf_opts_t o;
		conf_opts_system(&o);
		o.server_lists = S.c.hosts;     /* a file's regCenter is not where its jobs go: this cluster is */
		o.namespace = S.c.ns;
		if ((cf = conf_parse(text, len, "body", &o, &d)) && !(j = conf_find_job(cf, job))) {
			size_t n = 0;
			n += (size_t)snprintf(why, sizeof why, "body has no job '%s' (its jobs:", job);
			for (size_t k = 0; k < cf->n_jobs && n < sizeof why; k++)
				n += (size_t)snprintf(why + n, sizeof why - n, " %s", cf->jobs[k].name);
			if (n < sizeof why) snprintf(why + n, sizeof why - n, ")");
		}
	}
	size_t bad = 0;
	for (size_t k = 0; d && k < conf_diags_count(d); k++) {
		const conf_diag_t *g = conf_diags_get(d, k);
		fprintf(f, "%s\n", g->text);
		bad += g->level != CONF_DIAG_WARN;
	}
	if (d && conf_diags_dropped(d)) fprintf(f, "body: ... and %zu more\n", conf_diags_dropped(d));
	conf_diags_free(d);
	if (j && !bad && j->tz_error) {
		/* config set's rule: a zone this host does not know would run the job in GMT */
		fprintf(f, "body: timeZone: give a zone this host knows (a zone id Java does not know would run the job in "
		        "GMT on ElasticJob's instances and ejob's)\n");
		bad++;
	}
	if (j && !bad) {
		conf_unacted_t un[CONF_UNACTED_MAX];
		size_t nu = conf_job_unacted(j, un);
		for (size_t k = 0; k < nu; k++) fprintf(f, "body: warning: %s: %s\n", un[k].key, un[k].text);
	}
	enum MHD_Result res;
	int code = 0;
	if (!j || bad) {
		if (why[0] && !bad) fprintf(f, "%s\n", why);   /* not said above already */
		fprintf(f, "job '%s' does not exist and the body is not a job that can be made (above): nothing written", job);
		code = 400;
	} else if (!j->label || !*j->label) {
		fprintf(f, "body: job '%s' has no label; a job created through the API needs one (label: NAME), as "
		        "'ejobctl apply' requires: supervisors adopt jobs by label (supervisor.labels): nothing written", job);
		code = 400;
	}
	if (code) {
		fclose(f);
		char *msg = wrapped ? srv_unwrap_positions(lines) : strdup(lines);
		if (!msg) ctl_oom();
		res = send_error(con, code, msg,
		                 form == FORM_NODE ? "a new job's body: one job's keys as under apply's jobs: (with type: and "
		                                     "label:), a file with jobs:, or a config node (with jobName, label and "
		                                     "props ejob.type)"
		                                   : "fix the body; nothing was written");
		free(msg);
		free(lines);
		conf_job_free(nj);
		conf_free(cf);
		return res;
	}
	fclose(f);
	if (wrapped) {
		char *u2 = srv_unwrap_positions(lines);
		if (!u2) ctl_oom();
		free(lines);
		lines = u2;
	}
	/* a cluster's first job makes its namespace (as apply does) */
	struct run nr;
	run_begin(&nr);
	nr.status = ctl_ns_create(&S.c);
	run_end(&nr);
	if (nr.status) {
		free(lines);
		conf_job_free(nj);
		conf_free(cf);
		res = send_failure(con, &nr);
		run_free(&nr);
		return res;
	}
	run_free(&nr);
	/* create only: a node made by someone else since the read above is theirs (409) */
	struct ctl_put out;
	int r = ctl_job_put(&S.c, j, CTL_VERSION_NONE, 0, &out, err, sizeof err);
	conf_job_free(nj);
	conf_free(cf);
	if (r == 0) {
		res = put_answer(con, job, ctl_put_action_name(out.action), out.version,
		                 keys_json(out.keys, out.action == CTL_PUT_UPDATE ? out.nkeys : 0), lines);
	} else if (out.action == CTL_PUT_CONFLICT) {
		res = send_error(con, MHD_HTTP_CONFLICT, err, "read the job again (GET /api/v1/jobs/{job}), then PUT");
	} else {
		int away = !S.c.zh || zoo_state(S.c.zh) != ZOO_CONNECTED_STATE;
		res = send_error(con, r == 2 ? 400 : away ? 503 : 409, err, NULL);
	}
	ctl_put_free(&out);
	free(lines);
	return res;
}

static enum MHD_Result put_job(struct MHD_Connection *con, struct srv_req *q)
{
	const char *job = q->job;
	char why[CTL_PATH_MAX + 1024];
	long want = q->want;
	int must_exist = q->must_exist, must_not_exist = q->must_not_exist;
	enum srv_put_form form = q->form;
	char *text = q->text;
	size_t len = q->textlen;
	q->text = NULL;
	char p[CTL_PATH_MAX];
	int rc = ctl_exists(&S.c, ctl_path(&S.c, p, "/%s/config", job), NULL);
	enum MHD_Result res;
	if (rc == ZNONODE) {
		if (want >= 0 || must_exist) {
			snprintf(why, sizeof why, "job '%s' has no config node (%s)%s: nothing written", job, p,
			         want >= 0 ? ", so no version to replace (removed meanwhile?)" : " (If-Match: *)");
			res = send_error(con, MHD_HTTP_CONFLICT, why, "PUT without ?version= or If-Match creates it");
		} else {
			res = put_create(con, job, form, text, len, form == FORM_JOB);
		}
		free(text);
		return res;
	}
	if (rc != ZOK) {
		free(text);
		snprintf(why, sizeof why, "cannot read %s: %s", p, zerror(rc));
		return send_error(con, 503, why, "ZooKeeper is unreachable; GET /healthz answers 200 when it is back");
	}
	if (must_not_exist) {
		free(text);
		snprintf(why, sizeof why, "job '%s' exists (%s): nothing written (If-None-Match: *)", job, p);
		return send_error(con, MHD_HTTP_CONFLICT, why, "PUT without If-None-Match replaces its config");
	}
	struct run r;
	run_begin(&r);
	int conflict = 0;
	struct ctl_set_res sr;
	r.status = ctl_config_set(&S.c, job, "body", text, len, want, &conflict, &sr);
	run_end(&r);
	free(text);
	if (form == FORM_JOB) {
		char *m = srv_unwrap_positions(r.msg), *e = srv_unwrap_positions(r.err ? r.err : "");
		if (!m || !e) ctl_oom();
		snprintf(r.msg, sizeof r.msg, "%s", m);
		free(r.err);
		r.err = e, r.errlen = strlen(e);
		free(m);
	}
	if (r.status && conflict) {
		res = send_error(con, MHD_HTTP_CONFLICT, r.msg, "read the job again (GET /api/v1/jobs/{job}), then PUT");
	} else if (r.status) {
		res = send_failure(con, &r);
	} else {
		res = put_answer(con, job, sr.changed ? "update" : "unchanged", sr.version, keys_json(sr.keys, sr.nkeys),
		                 r.err);
	}
	run_free(&r);
	return res;
}

/* POST /api/v1/servers/{ip}/disable|enable|shutdown: the job operation on every job with that
 * server, one multi each (as `ejobctl server`) */
static enum MHD_Result server_op(struct MHD_Connection *con, const char *ip, const char *op)
{
	char **jobs;
	int n;
	struct run r;
	run_begin(&r);
	int rr = ctl_jobs(&S.c, &jobs, &n);
	run_end(&r);
	if (rr) {
		r.status = 1;
		enum MHD_Result q = send_failure(con, &r);
		run_free(&r);
		return q;
	}
	run_free(&r);
	json_t *res = json_array();
	int found = 0, failed = 0;
	for (int i = 0; i < n; i++) {
		char p[CTL_PATH_MAX];
		if (ctl_exists(&S.c, ctl_path(&S.c, p, "/%s/servers/%s", jobs[i], ip), NULL) != ZOK) continue;
		found++;
		run_begin(&r);
		r.status = ctl_operate(&S.c, op, jobs[i], ip, NULL, NULL, 0, 0, NULL);
		run_end(&r);
		json_t *o = r.status ? json_object() : json_loadb(r.out, r.outlen, 0, NULL);
		if (!o) o = json_object();
		json_object_set_new(o, "job", json_string(jobs[i]));
		if (r.status) json_object_set_new(o, "error", json_string(r.msg)), failed++;
		json_array_append_new(res, o);
		run_free(&r);
	}
	ctl_strv_free(jobs, n);
	if (!found) {
		json_decref(res);
		char m[400];
		snprintf(m, sizeof m, "no job has server '%s' in namespace /%s", ip, S.c.ns);
		return send_error(con, 404, m, "GET /api/v1/servers lists the servers");
	}
	json_t *o = json_object();
	json_object_set_new(o, "server", json_string(ip));
	json_object_set_new(o, "command", json_string(op));
	json_object_set_new(o, "jobs", res);
	return send_json(con, failed ? MHD_HTTP_CONFLICT : 200, o, NULL);
}

static enum MHD_Result op_param(struct MHD_Connection *con, const char *cmd, const char *job, const char *server,
                                const char *instance, char *item, int force, const char *param)
{
	struct run r;
	run_begin(&r);
	char *items[1] = { item };
	r.status = ctl_operate(&S.c, cmd, job, server, instance, items, item ? 1 : 0, force, param);
	run_end(&r);
	enum MHD_Result q = send_run(con, &r);
	run_free(&r);
	return q;
}

static enum MHD_Result health(struct MHD_Connection *con)
{
	char why[2048];
	if (!session_ok(why, sizeof why - 1)) return send_text(con, 503, "text/plain", strcat(why, "\n"), NULL);
	char p[CTL_PATH_MAX];
	int rc = ctl_exists(&S.c, ctl_path(&S.c, p, "%s", ""), NULL);
	if (rc == ZNONODE) {
		/* ZooKeeper answers; the namespace is made by its first job's PUT */
		snprintf(why, sizeof why, "ok: namespace %s does not exist yet (PUT /api/v1/jobs/{job} makes it)\n", p);
		return send_text(con, 200, "text/plain", why, NULL);
	}
	if (rc != ZOK) {
		snprintf(why, sizeof why, "ZooKeeper at %s: %s: %s\n", S.c.hosts, p, zerror(rc));
		return send_text(con, 503, "text/plain", why, NULL);
	}
	return send_text(con, 200, "text/plain", "ok\n", NULL);
}

/* GET /metrics: srv_metrics on the kept session */
static enum MHD_Result metrics(struct MHD_Connection *con)
{
	struct run r;
	run_begin(&r);
	srv_metrics(&S.c, S.c.out);
	run_end(&r);
	enum MHD_Result q = send_text(con, 200, "text/plain; version=0.0.4; charset=utf-8", r.out ? r.out : "", NULL);
	run_free(&r);
	return q;
}

/* GET /api/v1/jobs/{job}/history|trace?...: srv_pg_query */
static enum MHD_Result history(struct MHD_Connection *con, const struct srv_pgq *q)
{
	char err[1024];
	json_t *doc;
	const char *hint;
	unsigned code = srv_pg_query(S.pg, q, &doc, err, sizeof err, &hint);
	if (code != 200) return send_error(con, code, err, hint);
	return send_json(con, 200, doc, NULL);
}

static enum MHD_Result login(struct MHD_Connection *con, struct srv_req *q)
{
	if (!S.users) return send_error(con, 400, "this server has no users (no --auth): nothing to log in to", NULL);
	const char *u = q->user, *p = q->password;
	enum srv_role role = u && p ? srv_users_check(S.users, u, p) : ROLE_NONE;
	if (!role) return send_error(con, 401, "wrong user or password", NULL);
	char tok[SRV_TOKEN_HEX + 1], cookie[256];
	if (srv_session_new(u, role, tok))
		return send_error(con, 500, "getrandom failed", NULL);
	snprintf(cookie, sizeof cookie, "ejob_session=%s; Path=/; HttpOnly; SameSite=Strict; Max-Age=%d%s", tok,
	         SRV_SESSION_SECONDS, S.tls ? "; Secure" : "");
	json_t *o = json_object();
	json_object_set_new(o, "user", json_string(u));
	json_object_set_new(o, "role", json_string(srv_role_name(role)));
	return send_json(con, 200, o, cookie);
}

/* the answer to q (srv_req_parse's) from w, under S.big: 403 if w's role is short of what q needs, then
 * q's refusal, then the endpoint */
static enum MHD_Result route(struct MHD_Connection *con, const char *method, const char *url, struct srv_req *q,
                             const struct who *w)
{
	char why[1024];
	if (w->role < q->role) {
		snprintf(why, sizeof why, "user '%s' is %s: %s %s needs %s", w->user, srv_role_name(w->role), method, url,
		         q->role == ROLE_ADMIN ? "admin" : "operator or admin");
		return send_error(con, 403, why, "an admin gives roles in serve's --auth file");
	}
	if (q->ep == EP_REFUSED) return send_error(con, q->code, q->why, q->hint);
	if (q->ep == EP_AUDIT) {
		char *a = srv_audit_read(q->limit);
		if (!a) ctl_oom();
		enum MHD_Result r = send_text(con, 200, "application/json", a, NULL);
		free(a);
		return r;
	}
	/* the history is PostgreSQL's: it answers while ZooKeeper is away, for removed jobs too */
	if (q->ep == EP_HISTORY) return history(con, &q->pgq);
	if (!session_ok(why, sizeof why))
		return send_error(con, 503, why, "ZooKeeper is unreachable; GET /healthz answers 200 when it is back");

	struct run r;
	switch (q->ep) {
	case EP_JOBS:
	case EP_SERVERS:
	case EP_INSTANCES: {
		run_begin(&r);
		r.status = q->ep == EP_JOBS ? ctl_show_jobs(&S.c) : q->ep == EP_SERVERS ? ctl_show_servers(&S.c, NULL, NULL)
		                                                                     : ctl_show_instances(&S.c, NULL, NULL);
		run_end(&r);
		enum MHD_Result res = send_run(con, &r);
		run_free(&r);
		return res;
	}
	case EP_JOB:
		return get_job(con, q->job);
	case EP_JOB_PUT:
		return put_job(con, q);
	case EP_JOB_OP:   /* item: a segment of q->path, writable */
		return op_param(con, q->op, q->job, q->server, q->instance, (char *)q->item, q->force, q->param);
	case EP_SERVER_OP:
		return server_op(con, q->server, q->op);
	default:
		return send_error(con, 404, "no such path", "docs/api.md lists the endpoints");
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
		pthread_mutex_lock(&S.big);
		enum MHD_Result r = health(con);
		pthread_mutex_unlock(&S.big);
		return r;
	}
	if (p->ep == EP_ROOT) return send_text(con, 200, "text/html; charset=utf-8",
	                                       "<!doctype html><title>ejob</title><p>ejob's console comes here; the API is "
	                                       "under <code>/api/v1</code> (docs/api.md).\n", NULL);
	if (p->ep == EP_REFUSED && p->code == MHD_HTTP_CONTENT_TOO_LARGE) return send_error(con, p->code, p->why, p->hint);
	if (p->ep == EP_LOGIN || (p->ep == EP_REFUSED && !strcmp(url, "/api/v1/login") && !strcmp(method, "POST"))) {
		if (p->ep == EP_REFUSED) return send_error(con, p->code, p->why, p->hint);
		pthread_mutex_lock(&S.auth_mu);
		enum MHD_Result r = login(con, p);
		pthread_mutex_unlock(&S.auth_mu);
		return r;
	}
	struct who w;
	pthread_mutex_lock(&S.auth_mu);
	int unknown = authenticate(con, &w);
	pthread_mutex_unlock(&S.auth_mu);
	if (unknown) return send_error(con, 401, "who are you? give HTTP Basic credentials or log in",
	                                             "POST /api/v1/login {\"user\": NAME, \"password\": PASSWORD}");
	if (p->ep == EP_LOGOUT) {
		pthread_mutex_lock(&S.auth_mu);
		srv_session_drop(MHD_lookup_connection_value(con, MHD_COOKIE_KIND, "ejob_session"));
		pthread_mutex_unlock(&S.auth_mu);
		return send_text(con, 200, "application/json", "{}\n",
		                 "ejob_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0");
	}
	if (p->ep == EP_JOBS && S.model) {
		size_t len;
		char *doc = model_jobs_json(S.model, &len);
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
	pthread_mutex_lock(&S.big);
	enum MHD_Result res;
	if (p->ep == EP_METRICS) {
		char why[1024];
		if (!session_ok(why, sizeof why))
			res = send_text(con, 200, "text/plain; version=0.0.4; charset=utf-8",
			                "# HELP ejob_zookeeper_up Whether ZooKeeper answered this scrape's reads.\n"
			                "# TYPE ejob_zookeeper_up gauge\nejob_zookeeper_up 0\n", NULL);
		else res = metrics(con);
		pthread_mutex_unlock(&S.big);
		return res;
	}
	last_code = 0;
	json_decref(audit_result);
	audit_result = NULL;
	res = route(con, method, url, p, &w);
	if (p->write) audit(con, &w, method, url, q, last_code);
	pthread_mutex_unlock(&S.big);
	/* read-your-writes: the response goes out after this returns, once the model saw the write */
	if (p->write && S.model && model_sync(S.model, 10000) < 0)
		fprintf(stderr, "ejobctl serve: the model did not catch up with %s %s within 10 s; reads may lag\n", method, url);
	return res;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *con, const char *url, const char *method,
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

static void on_done(void *cls, struct MHD_Connection *con, void **ctx, enum MHD_RequestTerminationCode toe)
{
	(void)cls, (void)con, (void)toe;
	struct req *q = *ctx;
	if (q) free(q->body);
	free(q);
	*ctx = NULL;
}

/* ---- the command ----------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl serve --listen ADDR:PORT (--zk HOSTS --namespace NS [--digest U:P] | -c FILE)\n"
	        "                     [--auth FILE] [--tls-cert FILE --tls-key FILE] [--audit FILE] [--pg URL] [--no-model]\n"
	        "       ejobctl serve --hash-password   (a password on stdin; its crypt(3) hash on stdout)\n"
	        "\n"
	        "The HTTP API (docs/api.md) on the cluster: /api/v1/..., /metrics, /healthz. Without --auth\n"
	        "it listens on loopback only; --auth FILE has lines name:HASH:role (viewer, operator, admin).\n"
	        "GET /api/v1/jobs answers from a model of the cluster kept from watches; --no-model reads\n"
	        "ZooKeeper for each request instead (as `ejobctl jobs --json`).\n");
}

static char *read_file(const char *what, const char *file)
{
	char *buf;
	size_t len;
	if (conf_read_file(file, &buf, &len) < 0) {
		fprintf(stderr, "ejobctl serve: %s %s: cannot read: %s\n", what, file, strerror(errno));
		return NULL;
	}
	return buf;
}

static int loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return 0;
}

int ejobctl_serve(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--hash-password")) return srv_hash_password();
	}
	struct ctl *c = &S.c;
	int r = ctl_options(c, "serve", &argc, argv);
	if (r) return r;
	const char *listen = NULL, *authf = NULL, *cert = NULL, *key = NULL, *auditf = NULL, *pg = NULL;
	int no_model = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-model")) {
			no_model = 1;
			continue;
		}
		const char **dst = !strcmp(argv[i], "--listen") ? &listen : !strcmp(argv[i], "--auth") ? &authf
		                   : !strcmp(argv[i], "--tls-cert") ? &cert : !strcmp(argv[i], "--tls-key") ? &key
		                   : !strcmp(argv[i], "--audit") ? &auditf : !strcmp(argv[i], "--pg") ? &pg : NULL;
		if (!dst) {
			fprintf(stderr, "ejobctl serve: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "ejobctl serve: %s needs a value\n", argv[i]);
			return 2;
		}
		*dst = argv[++i];
	}
	S.pg = pg;
	if (!listen) {
		fprintf(stderr, "ejobctl serve: give --listen ADDR:PORT (e.g. --listen 127.0.0.1:8080)\n");
		return 2;
	}
	if (!cert != !key) {
		fprintf(stderr, "ejobctl serve: give --tls-cert FILE and --tls-key FILE together\n");
		return 2;
	}
	/* ADDR:PORT, [v6]:PORT */
	char host[256], port[16];
	const char *colon = strrchr(listen, ':');
	if (!colon || !colon[1] || (size_t)(colon - listen) >= sizeof host || strlen(colon + 1) >= sizeof port) {
		fprintf(stderr, "ejobctl serve: --listen %s: give ADDR:PORT (127.0.0.1:8080, [::1]:8080)\n", listen);
		return 2;
	}
	snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
	snprintf(port, sizeof port, "%s", colon + 1);
	if (host[0] == '[' && host[strlen(host) - 1] == ']') memmove(host, host + 1, strlen(host)), host[strlen(host) - 1] = 0;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE }, *ai;
	int g = getaddrinfo(host, port, &hints, &ai);
	if (g) {
		fprintf(stderr, "ejobctl serve: --listen %s: %s (give a numeric address and port: 127.0.0.1:8080)\n", listen,
		        gai_strerror(g));
		return 2;
	}
	if (!authf && !loopback(ai->ai_addr)) {
		fprintf(stderr, "ejobctl serve: --listen %s: without --auth, serve listens on loopback only (127.0.0.1, ::1): "
		        "give --auth FILE (lines name:HASH:role; 'ejobctl serve --hash-password' makes a HASH), or listen on "
		        "127.0.0.1:%s\n", listen, port);
		freeaddrinfo(ai);
		return 2;
	}
	if (authf && !(S.users = srv_users_load(authf))) {
		freeaddrinfo(ai);
		return 2;
	}
	if (auditf && srv_audit_open(auditf)) {
		freeaddrinfo(ai);
		return 2;
	}
	char *certpem = NULL, *keypem = NULL;
	if (cert) {
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			fprintf(stderr, "ejobctl serve: this libmicrohttpd was built without TLS: --tls-cert cannot be served\n");
			return 2;
		}
		if (!(certpem = read_file("--tls-cert", cert)) || !(keypem = read_file("--tls-key", key))) return 2;
		/* what libmicrohttpd would refuse with only "cannot listen": said here, naming the file */
		if (!strstr(certpem, "-----BEGIN CERTIFICATE-----")) {
			fprintf(stderr, "ejobctl serve: --tls-cert %s: no PEM certificate in it (-----BEGIN CERTIFICATE-----): "
			        "give the server's certificate (chain) in PEM\n", cert);
			return 2;
		}
		if (!strstr(keypem, "-----BEGIN ") || !strstr(keypem, "PRIVATE KEY-----")) {
			fprintf(stderr, "ejobctl serve: --tls-key %s: no PEM private key in it (-----BEGIN ... PRIVATE KEY-----, "
			        "unencrypted): give the key of --tls-cert's certificate\n", key);
			return 2;
		}
		S.tls = 1;
	}
	/* the strings of -c FILE outlive a session that ctl_connect closes */
	CTL_NEED(c->hosts = strdup(c->hosts));
	CTL_NEED(c->ns = strdup(c->ns));
	if (c->digest) CTL_NEED(c->digest = strdup(c->digest));
	conf_free(c->conf);
	c->conf = NULL;
	c->kept = 1;
	c->ns_may_be_new = 1;       /* serve answers on an empty cluster; the first job's PUT makes it */
	char why[1024];
	if (!session_ok(why, sizeof why))
		fprintf(stderr, "ejobctl serve: %s; serving anyway (503 until it answers)\n", why);
	if (!no_model && !(S.model = model_start(c))) {
		fprintf(stderr, "ejobctl serve: cannot start the model's thread: %s\n", strerror(errno));
		return 1;
	}

	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);   /* before MHD's thread: it inherits the mask */
	signal(SIGPIPE, SIG_IGN);
	/* a thread per connection: a read from the model never waits behind a command on ZooKeeper */
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0) |
	                 (S.tls ? MHD_USE_TLS : 0);
	struct MHD_Daemon *d;
	errno = 0;                  /* what the session's calls left is not the daemon's reason */
	if (S.tls)
		d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
		                     MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
		                     MHD_OPTION_HTTPS_MEM_CERT, certpem, MHD_OPTION_HTTPS_MEM_KEY, keypem, MHD_OPTION_END);
	else
		d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
		                     MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_CONNECTION_TIMEOUT, 30u,
		                     MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!d) {
		/* libmicrohttpd printed its reason (a TLS setup's, GnuTLS's) above; errno may say nothing */
		const char *reason = errno ? strerror(errno) : "libmicrohttpd's reason above";
		if (S.tls)
			fprintf(stderr, "ejobctl serve: cannot listen on %s with --tls-cert %s --tls-key %s: %s (is the key the "
			        "certificate's?)\n", listen, cert, key, reason);
		else
			fprintf(stderr, "ejobctl serve: cannot listen on %s: %s\n", listen, reason);
		return 1;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	printf("ejobctl serve: listening on %s://%s%s%s:%u (namespace /%s at %s)\n", S.tls ? "https" : "http",
	       strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", di ? di->port : 0, c->ns, c->hosts);
	fflush(stdout);
	int sig;
	while (sigwait(&sigs, &sig)) {}
	MHD_stop_daemon(d);
	model_stop(S.model);
	if (c->zh) zookeeper_close(c->zh);
	srv_users_free(S.users);
	free(certpem);
	free(keypem);
	return 0;
}
