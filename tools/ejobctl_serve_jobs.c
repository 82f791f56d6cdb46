/* tools/ejobctl_serve_jobs.c: `ejobctl serve`'s job endpoints: GET and PUT /api/v1/jobs/{job} (a
 * job's status and config; a config replaced or a job created, checked as `ejobctl config set`
 * and `apply` check), the operations POST /api/v1/jobs/{job}/... and the server-wide ones. Each
 * runs the CLI's function on the kept session, under SRV.big (tools/ejobctl_serve_int.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <microhttpd.h>

#include "conf/conf.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_api.h"
#include "tools/ejobctl_job.h"
#include "tools/ejobctl_serve_int.h"

/* ---- the routes ------------------------------------------------------------------------------- */

/* GET /api/v1/jobs/{job}: status --json plus "config", the node's text */
enum MHD_Result srv_get_job(struct MHD_Connection *con, const char *job)
{
	struct run r;
	srv_run_begin(&r);
	r.status = ctl_show_status(&SRV.c, job, NULL, 0);
	srv_run_end(&r);
	if (r.status) {
		enum MHD_Result q = srv_send_failure(con, &r);
		srv_run_free(&r);
		return q;
	}
	json_t *doc = json_loadb(r.out, r.outlen, 0, NULL);
	srv_run_free(&r);
	if (!doc) return srv_send_error(con, 500, "status's output is not JSON", NULL);
	char p[CTL_PATH_MAX], *data = NULL;
	struct Stat st;
	int rc = ctl_get(&SRV.c, ctl_path(&SRV.c, p, "/%s/config", job), &data, &st);
	if (rc == ZOK) {
		json_t *cfg = data ? json_string(data) : NULL;   /* NULL too when it is not UTF-8 */
		json_object_set_new(doc, "config", cfg ? cfg : json_null());
		json_object_set_new(doc, "configVersion", json_integer(st.version));
		/* the version as PUT's ETag: a PUT with If-Match of it writes only over what was read */
		snprintf(srv_etag, sizeof srv_etag, "\"%d\"", st.version);
	}
	free(data);
	return srv_send_json(con, 200, doc, NULL);
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
	json_object_set_new(o, "warnings", srv_lines_json(warnings));
	srv_audit_result = json_pack("{s:s,s:i,s:O}", "action", action, "configVersion", version, "keys", keys);
	snprintf(srv_etag, sizeof srv_etag, "\"%d\"", version);
	return srv_send_json(con, strcmp(action, "create") ? 200 : MHD_HTTP_CREATED, o, NULL);
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
		o.server_lists = SRV.c.hosts;     /* a file's regCenter is not where its jobs go: this cluster is */
		o.namespace = SRV.c.ns;
		o.flow_open = true;               /* dependsOn names the namespace's jobs: checked with them below */
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
		res = srv_send_error(con, code, msg,
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
	/* its workflows with the namespace's other jobs (a cycle, a second root: 400, nothing written);
	 * then a cluster's first job makes its namespace (as apply does) */
	struct run nr;
	srv_run_begin(&nr);
	nr.status = ctl_flow_check(&SRV.c, &j, 1, NULL, 0);
	if (!nr.status) nr.status = ctl_ns_create(&SRV.c);
	srv_run_end(&nr);
	if (nr.status) {
		free(lines);
		conf_job_free(nj);
		conf_free(cf);
		res = srv_send_failure(con, &nr);
		srv_run_free(&nr);
		return res;
	}
	srv_run_free(&nr);
	/* create only: a node made by someone else since the read above is theirs (409) */
	struct ctl_put out;
	int r = ctl_job_put(&SRV.c, j, CTL_VERSION_NONE, 0, &out, err, sizeof err);
	conf_job_free(nj);
	conf_free(cf);
	if (r == 0) {
		res = put_answer(con, job, ctl_put_action_name(out.action), out.version,
		                 keys_json(out.keys, out.action == CTL_PUT_UPDATE ? out.nkeys : 0), lines);
	} else if (out.action == CTL_PUT_CONFLICT) {
		res = srv_send_error(con, MHD_HTTP_CONFLICT, err, "read the job again (GET /api/v1/jobs/{job}), then PUT");
	} else {
		int away = !SRV.c.zh || zoo_state(SRV.c.zh) != ZOO_CONNECTED_STATE;
		res = srv_send_error(con, r == 2 ? 400 : away ? 503 : 409, err, NULL);
	}
	ctl_put_free(&out);
	free(lines);
	return res;
}

enum MHD_Result srv_put_job(struct MHD_Connection *con, struct srv_req *q)
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
	int rc = ctl_exists(&SRV.c, ctl_path(&SRV.c, p, "/%s/config", job), NULL);
	enum MHD_Result res;
	if (rc == ZNONODE) {
		if (want >= 0 || must_exist) {
			snprintf(why, sizeof why, "job '%s' has no config node (%s)%s: nothing written", job, p,
			         want >= 0 ? ", so no version to replace (removed meanwhile?)" : " (If-Match: *)");
			res = srv_send_error(con, MHD_HTTP_CONFLICT, why, "PUT without ?version= or If-Match creates it");
		} else {
			res = put_create(con, job, form, text, len, form == FORM_JOB);
		}
		free(text);
		return res;
	}
	if (rc != ZOK) {
		free(text);
		snprintf(why, sizeof why, "cannot read %s: %s", p, zerror(rc));
		return srv_send_error(con, 503, why, "ZooKeeper is unreachable; GET /healthz answers 200 when it is back");
	}
	if (must_not_exist) {
		free(text);
		snprintf(why, sizeof why, "job '%s' exists (%s): nothing written (If-None-Match: *)", job, p);
		return srv_send_error(con, MHD_HTTP_CONFLICT, why, "PUT without If-None-Match replaces its config");
	}
	struct run r;
	srv_run_begin(&r);
	int conflict = 0;
	struct ctl_set_res sr;
	r.status = ctl_config_set(&SRV.c, job, "body", text, len, want, &conflict, &sr);
	srv_run_end(&r);
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
		res = srv_send_error(con, MHD_HTTP_CONFLICT, r.msg, "read the job again (GET /api/v1/jobs/{job}), then PUT");
	} else if (r.status) {
		res = srv_send_failure(con, &r);
	} else {
		res = put_answer(con, job, sr.changed ? "update" : "unchanged", sr.version, keys_json(sr.keys, sr.nkeys),
		                 r.err);
	}
	srv_run_free(&r);
	return res;
}

/* POST /api/v1/servers/{ip}/disable|enable|shutdown: the job operation on every job with that
 * server, one multi each (as `ejobctl server`) */
enum MHD_Result srv_server_op(struct MHD_Connection *con, const char *ip, const char *op)
{
	char **jobs;
	int n;
	struct run r;
	srv_run_begin(&r);
	int rr = ctl_jobs(&SRV.c, &jobs, &n);
	srv_run_end(&r);
	if (rr) {
		r.status = 1;
		enum MHD_Result q = srv_send_failure(con, &r);
		srv_run_free(&r);
		return q;
	}
	srv_run_free(&r);
	json_t *res = json_array();
	int found = 0, failed = 0;
	for (int i = 0; i < n; i++) {
		char p[CTL_PATH_MAX];
		if (ctl_exists(&SRV.c, ctl_path(&SRV.c, p, "/%s/servers/%s", jobs[i], ip), NULL) != ZOK) continue;
		found++;
		srv_run_begin(&r);
		r.status = ctl_operate(&SRV.c, op, jobs[i], ip, NULL, NULL, 0, 0, NULL);
		srv_run_end(&r);
		json_t *o = r.status ? json_object() : json_loadb(r.out, r.outlen, 0, NULL);
		if (!o) o = json_object();
		json_object_set_new(o, "job", json_string(jobs[i]));
		if (r.status) json_object_set_new(o, "error", json_string(r.msg)), failed++;
		json_array_append_new(res, o);
		srv_run_free(&r);
	}
	ctl_strv_free(jobs, n);
	if (!found) {
		json_decref(res);
		char m[400];
		snprintf(m, sizeof m, "no job has server '%s' in namespace /%s", ip, SRV.c.ns);
		return srv_send_error(con, 404, m, "GET /api/v1/servers lists the servers");
	}
	json_t *o = json_object();
	json_object_set_new(o, "server", json_string(ip));
	json_object_set_new(o, "command", json_string(op));
	json_object_set_new(o, "jobs", res);
	return srv_send_json(con, failed ? MHD_HTTP_CONFLICT : 200, o, NULL);
}

enum MHD_Result srv_op_param(struct MHD_Connection *con, const char *cmd, const char *job, const char *server,
                             const char *instance, char *item, int force, const char *param)
{
	struct run r;
	srv_run_begin(&r);
	char *items[1] = { item };
	r.status = ctl_operate(&SRV.c, cmd, job, server, instance, items, item ? 1 : 0, force, param);
	srv_run_end(&r);
	enum MHD_Result q = srv_send_run(con, &r);
	srv_run_free(&r);
	return q;
}
