/* t/104-serve-writes.c: `ejobctl serve`'s writes over real HTTP on a real cluster: one ZooKeeper,
 * three supervisors (s0 and s1 adopt label etl, s2 label web; each has a file job "own"):
 *   - PUT creates a job that does not exist (201, version 0, an ETag): it runs on s0 and s1 within
 *     a fire of its cron and never on s2; PUT again is "unchanged"; an update at If-Match "0"
 *     answers the keys it changed and the supervisors follow it;
 *   - every refused write (a viewer's or operator's write, bad bodies, a missing label, stale or
 *     conflicting preconditions, DELETE of a job with instances online, unknown servers, instances
 *     and jobs, a trigger with no instance online) leaves ZooKeeper as it was (a dump of the
 *     namespace before and after), and its error carries the CLI's sentence;
 *   - GET /api/v1/instances; POST /servers/{ip}/disable|enable|shutdown; the job's shutdown by
 *     instance and by server; DELETE, and DELETE ?force=true of a job with an instance online
 *     (it stops there);
 *   - logout ends the session; every write is an audit line (PUT's with its result);
 *   - /metrics: valid Prometheus text (promtool), the health series, the last success, and
 *     scrapeable while a supervisor is dead (SIGKILL), its instances going. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;
static struct tserve sv;
static char runs[600];

/* the writes made, for the audit check: method, path, user, status */
static struct wrote {
	char method[8], path[200], user[16];
	long code;
} wrote[128];
static int nwrote;

/* a write as user ("adm", "oper", "view"): its status; the body in *out (may be NULL) */
static long req(const char *method, const char *path, const char *user, const char *hdr, const char *body, char **out)
{
	char up[64];
	if (user) snprintf(up, sizeof up, "%s:%s-pass", user, user);
	long code = tserve_http(&sv, method, path, user ? up : NULL, hdr, body, out);
	if (strcmp(method, "GET") && nwrote < 128 && user) {
		struct wrote *w = &wrote[nwrote++];
		snprintf(w->method, sizeof w->method, "%s", method);
		snprintf(w->path, sizeof w->path, "%.*s", (int)strcspn(path, "?"), path);   /* the query: "query" */
		snprintf(w->user, sizeof w->user, "%s", user);
		w->code = code;
	}
	return code;
}

static const char *jroot(const char *job)
{
	static char b[300];
	snprintf(b, sizeof b, "/%s/%s", u.ns, job);
	return b;
}

static int runs_of(const char *id)
{
	return tsup_count_lines(runs, id ? id : "");
}

static char *dump(void)
{
	char p[128];
	snprintf(p, sizeof p, "/%s", u.ns);
	char *d = tzk_dump(u.zh, p, NULL);
	if (!d) BAIL_OUT("cannot dump %s", p);
	return d;
}

/* the dump as before; if not, the first line that differs */
static int same_dump(const char *before, const char *what)
{
	char *now = dump();
	int same = !strcmp(now, before);
	if (!same) {
		const char *a = before, *b = now;
		while (*a && *a == *b) a++, b++;
		while (a > before && a[-1] != '\n') a--, b--;
		diag("%s changed ZooKeeper: was '%.*s', now '%.*s'", what, (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
	}
	free(now);
	return same;
}

/* instances/ of job is exactly ids (n), within timeout_ms */
static int instances_are(const char *job, const char *const *ids, int n, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	do {
		struct String_vector v = { 0 };
		int good = 0;
		int rc = tzk_children(u.zh, tzkup_path(&u, job, "instances"), &v);
		if (rc == ZOK && v.count == n) {
			good = 1;
			for (int k = 0; k < n; k++) {
				int seen = 0;
				for (int i = 0; i < v.count; i++) seen |= !strcmp(v.data[i], ids[k]);
				good &= seen;
			}
		} else if (n == 0 && rc == ZNONODE) {
			good = 1;
		}
		deallocate_String_vector(&v);
		if (good) return 1;
		usleep(50000);
	} while (tlib_now_ms() < end);
	return 0;
}

static json_t *js(const char *body)
{
	json_t *j = json_loads(body ? body : "", 0, NULL);
	return j ? j : json_object();
}

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* the value of the series line (exactly name{labels}) in text; -1 if absent */
static double series(const char *text, const char *line)
{
	const char *p = text;
	size_t n = strlen(line);
	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && p[n] == ' ') return atof(p + n + 1);
		p += n;
	}
	return -1;
}

static char *scrape(long *code)
{
	char *m = NULL;
	*code = tserve_http(&sv, "GET", "/metrics", "view:view-pass", NULL, NULL, &m);
	return m;
}

static int promtool_ok(const char *text)
{
	char f[700], cmd[1600];
	snprintf(f, sizeof f, "%s/metrics.txt", tlib_tmpdir());
	tlib_write_file(f, text, strlen(text));
	snprintf(cmd, sizeof cmd, "promtool check metrics < %s > %s.check 2>&1", f, f);
	int st = system(cmd);
	if (st != 0) {
		snprintf(f + strlen(f), sizeof f - strlen(f), ".check");
		char *t = tsup_slurp(f);
		diag("promtool: %s", t ? t : "?");
		free(t);
	}
	return st == 0;
}

int main(void)
{
	tlib_init(180);
	tzkup_start(&u, 200, "t104", 4000);
	char rec[600], sh[900], sup[1200];
	snprintf(runs, sizeof runs, "%s/runs", tlib_tmpdir());
	snprintf(sh, sizeof sh, "#!/bin/sh\necho \"run $EJOB_ITEM $EJOB_TASK_ID\" >> %s\n", runs);
	tlib_script(rec, sizeof rec, "rec.sh", sh);
	const char *jobs = "  own:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n"
	                   "    props: {script.command.line: /bin/true}\n";
	struct tsup s[3];
	const char *lab[3] = { "etl", "etl", "web" }, *ip[3] = { "127.0.0.1", "127.0.0.2", "127.0.0.3" };
	for (int i = 0; i < 3; i++) {
		char name[8];
		snprintf(name, sizeof name, "s%d", i);
		snprintf(sup, sizeof sup, "workers: 2, labels: [%s], allowedCommands: [\"%s/*.sh\"]", lab[i], tlib_tmpdir());
		tzkup_config(&u, &s[i], name, sup, jobs);
		tzkup_run(&u, &s[i], ip[i]);
	}
	const char *all[3] = { s[0].id, s[1].id, s[2].id };
	ok(instances_are("own", all, 3, 15000), "three supervisors, each with its file's job");

	char auth[600], audit[600], line[4096];
	snprintf(auth, sizeof auth, "%s/users", tlib_tmpdir());
	snprintf(audit, sizeof audit, "%s/audit.log", tlib_tmpdir());
	char *hv = tserve_hash("view-pass"), *ho = tserve_hash("oper-pass"), *ha = tserve_hash("adm-pass");
	snprintf(line, sizeof line, "view:%s:viewer\noper:%s:operator\nadm:%s:admin\n", hv, ho, ha);
	tlib_write_file(auth, line, strlen(line));
	free(hv), free(ho), free(ha);
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, "--auth", auth, "--audit", audit, NULL };
	tserve_start(&sv, "serve", args);

	/* ---- PUT creates a job; it runs on the labelled supervisors only ---------------------------- */
	char body[2048], *out;
	snprintf(body, sizeof body,
	         "{\"type\": \"script\", \"cron\": \"* * * * * ?\", \"shardingTotalCount\": 2, \"label\": \"etl\",\n"
	         " \"props\": {\"script.command.line\": \"%s\"}}", rec);
	uint64_t t0 = tlib_now_ms();
	is_int(req("PUT", "/api/v1/jobs/pj", "adm", NULL, body, &out), 201, "PUT of a job that does not exist: 201");
	json_t *o = js(out);
	ok(!strcmp(jstr(o, "action"), "create") && json_integer_value(json_object_get(o, "configVersion")) == 0 &&
	   !strcmp(sv.etag, "\"0\""), "action create, configVersion 0, ETag \"0\" (%s)", out);
	json_decref(o), free(out);
	ok(!tzkup_missing(&u, tzkup_path(&u, "pj", "config")) && !strcmp(tzkup_data(&u, jroot("pj")), "SCRIPT"),
	   "its root node (SCRIPT) and config node are there");
	const char *etl[2] = { s[0].id, s[1].id };
	ok(instances_are("pj", etl, 2, 10000), "s0 and s1 (label etl) register it, s2 (web) does not");
	ok(tsup_wait_lines(runs, "run", 1, 5000), "it runs");
	uint64_t first = tlib_now_ms() - t0;
	ok(first < 4000, "its first run within %llu ms of the PUT (cron every second: registration and one fire)",
	   (unsigned long long)first);
	usleep(2500000);
	ok(runs_of(s[0].id) > 0 && runs_of(s[1].id) > 0, "on s0 (%d runs) and s1 (%d)", runs_of(s[0].id), runs_of(s[1].id));
	is_int(runs_of(s[2].id), 0, "never on s2");

	/* the metrics of a job that ran */
	long code;
	char *m = scrape(&code);
	is_int(code, 200, "GET /metrics");
	ok(promtool_ok(m), "promtool check metrics: valid");
	double ls = series(m, "ejob_job_last_success_timestamp_seconds{job=\"pj\"}");
	ok(ls > (double)(time(NULL) - 30) && ls <= (double)time(NULL) + 1, "pj's last success is seconds ago (%.3f)", ls);
	ok(series(m, "ejob_job_health{job=\"pj\",state=\"OK\"}") == 1 && series(m, "ejob_job_health{job=\"pj\",state=\"FAILING\"}") == 0,
	   "ejob_job_health: OK 1, FAILING 0");
	ok(series(m, "ejob_job_instances_online{job=\"pj\"}") == 2 && series(m, "ejob_job_leader{job=\"pj\"}") == 1 &&
	   series(m, "ejob_job_items_unassigned{job=\"pj\"}") == 0 && series(m, "ejob_zookeeper_up") == 1,
	   "instances online 2, a leader, no item unassigned, ZooKeeper up");
	free(m);

	/* again, the same: unchanged; then an update at the version read */
	is_int(req("PUT", "/api/v1/jobs/pj", "adm", NULL, body, &out), 200, "the same PUT again: 200");
	o = js(out);
	ok(!strcmp(jstr(o, "action"), "unchanged") && !strcmp(sv.etag, "\"0\""), "unchanged, still version 0");
	json_decref(o), free(out);
	char body2[2048];
	snprintf(body2, sizeof body2,
	         "type: script\ncron: \"0 0 0 1 1 ? 2099\"\nshardingTotalCount: 2\nlabel: etl\ndescription: quiet now\n"
	         "props: {script.command.line: \"%s\"}\n", rec);
	is_int(req("PUT", "/api/v1/jobs/pj", "adm", "If-Match: \"0\"", body2, &out), 200, "an update (YAML) at If-Match \"0\"");
	o = js(out);
	json_t *keys = json_object_get(o, "keys");
	int kc = 0, kd = 0;
	for (size_t i = 0; i < json_array_size(keys); i++) {
		kc |= !strcmp(json_string_value(json_array_get(keys, i)), "cron");
		kd |= !strcmp(json_string_value(json_array_get(keys, i)), "description");
	}
	ok(!strcmp(jstr(o, "action"), "update") && kc && kd && json_array_size(keys) == 2 && !strcmp(sv.etag, "\"1\""),
	   "action update, keys cron and description, ETag \"1\" (%s)", out);
	json_decref(o), free(out);
	usleep(1500000);
	int n0 = runs_of(NULL);
	usleep(2000000);
	is_int(runs_of(NULL), n0, "the supervisors follow it: no fire any more");

	/* a job nobody adopts (label none): for a trigger with no instance online */
	snprintf(body, sizeof body, "type: script\ncron: \"0 0 0 1 1 ? 2099\"\nshardingTotalCount: 1\nlabel: none\n"
	         "props: {script.command.line: \"%s\"}\n", rec);
	is_int(req("PUT", "/api/v1/jobs/lone", "adm", "If-None-Match: *", body, NULL), 201, "If-None-Match: * creates 'lone'");
	/* a config node as the body (ElasticJob's keys, config set's form) creates one too */
	is_int(req("PUT", "/api/v1/jobs/nd", "adm", NULL, "{\"jobName\": \"nd\", \"shardingTotalCount\": 1, \"label\": \"none\", "
	           "\"props\": {\"ejob.type\": \"script\", \"script.command.line\": \"/bin/true\"}}", NULL), 201,
	       "a config node (JSON, ElasticJob's keys) creates 'nd'");
	ok(strstr(tzkup_data(&u, tzkup_path(&u, "nd", "config")), "jobName: nd") &&
	   !strcmp(tzkup_data(&u, jroot("nd")), "SCRIPT"), "its config node and root node (SCRIPT)");

	/* ---- refused writes: nothing changes ------------------------------------------------------ */
	usleep(500000);
	char *before = dump();
	struct {
		const char *method, *path, *user, *hdr, *body;
		long code;
		const char *says;
	} bad[] = {
		{ "PUT", "/api/v1/jobs/pj", "view", NULL, body2, 403, "viewer" },
		{ "PUT", "/api/v1/jobs/pj", "oper", NULL, body2, 403, "needs admin" },
		{ "DELETE", "/api/v1/jobs/pj", "oper", NULL, NULL, 403, "needs admin" },
		{ "POST", "/api/v1/servers/127.0.0.1/shutdown", "view", NULL, NULL, 403, "viewer" },
		{ "PUT", "/api/v1/jobs/pj", "adm", NULL, "{\"type\": ", 400, "nothing written" },
		{ "PUT", "/api/v1/jobs/nolabel", "adm", NULL, "{\"type\": \"script\", \"shardingTotalCount\": 1, \"props\": "
		  "{\"script.command.line\": \"/bin/true\"}}", 400, "needs one (label: NAME)" },
		{ "PUT", "/api/v1/jobs/badcount", "adm", NULL, "type: script\nshardingTotalCount: 0\nlabel: etl\n", 400,
		  "body:2:" },
		{ "PUT", "/api/v1/jobs/tzbad", "adm", NULL, "{\"jobName\": \"tzbad\", \"shardingTotalCount\": 1, \"label\": \"etl\", "
		  "\"cron\": \"0 0 0 1 1 ? 2099\", \"timeZone\": \"Mars/Olympus\", \"props\": {\"ejob.type\": \"script\", "
		  "\"script.command.line\": \"/bin/true\"}}", 400, "timeZone: give a zone this host knows" },
		{ "PUT", "/api/v1/jobs/pj", "adm", "If-Match: \"0\"", body2, 409, "is version 1, not 0" },
		{ "PUT", "/api/v1/jobs/pj", "adm", "If-None-Match: *", body2, 409, "exists" },
		{ "PUT", "/api/v1/jobs/ghost", "adm", "If-Match: \"0\"", body2, 409, "has no config node" },
		{ "PUT", "/api/v1/jobs/pj?version=1", "adm", "If-Match: \"0\"", body2, 400, "disagree" },
		{ "DELETE", "/api/v1/jobs/pj", "adm", NULL, NULL, 409, "has 2 instances online" },
		{ "DELETE", "/api/v1/jobs/pjj", "adm", NULL, NULL, 404, "did you mean 'pj'" },
		{ "POST", "/api/v1/servers/10.9.9.9/disable", "oper", NULL, NULL, 404, "no job has server '10.9.9.9'" },
		{ "POST", "/api/v1/jobs/pj/shutdown", "oper", NULL, "{\"instance\": \"nope\"}", 404, "has no instance 'nope' online" },
		{ "POST", "/api/v1/jobs/pj/shutdown", "oper", NULL, "{\"server\": \"127.0.0.1\", \"instance\": \"x\"}", 400, "not both" },
		{ "POST", "/api/v1/jobs/lone/trigger", "oper", NULL, NULL, 409, "job 'lone' has no instance online" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char what[300];
		snprintf(what, sizeof what, "%s %s as %s%s%s", bad[i].method, bad[i].path, bad[i].user, bad[i].hdr ? " with " : "",
		         bad[i].hdr ? bad[i].hdr : "");
		long c = req(bad[i].method, bad[i].path, bad[i].user, bad[i].hdr, bad[i].body, &out);
		o = js(out);
		ok(c == bad[i].code && strstr(jstr(o, "error"), bad[i].says) && same_dump(before, what),
		   "refused: %s: %ld, saying '%s'; ZooKeeper unchanged", what, bad[i].code, bad[i].says);
		if (c != bad[i].code || !strstr(jstr(o, "error"), bad[i].says)) diag("%ld %s", c, out);
		json_decref(o), free(out);
	}
	/* the API's error is the CLI's sentence */
	{
		char *cout = NULL, *cerr = NULL;
		tzkup_ctl(&u, &cout, &cerr, "trigger", "lone", NULL);
		req("POST", "/api/v1/jobs/lone/trigger", "oper", NULL, NULL, &out);
		o = js(out);
		ok(*jstr(o, "error") && cerr && strstr(cerr, jstr(o, "error")), "the trigger's error is what `ejobctl trigger` says (%s)",
		   jstr(o, "error"));
		json_decref(o), free(out), free(cout), free(cerr);
	}
	free(before);

	/* ---- GET /api/v1/instances --------------------------------------------------------------- */
	is_int(tserve_http(&sv, "GET", "/api/v1/instances", "view:view-pass", NULL, NULL, &out), 200, "GET /api/v1/instances");
	ok(strstr(out, s[0].id) && strstr(out, s[1].id) && strstr(out, s[2].id), "lists the three instances");
	free(out);

	/* ---- servers: disable, enable ------------------------------------------------------------- */
	is_int(req("POST", "/api/v1/servers/127.0.0.3/disable", "oper", NULL, NULL, &out), 200, "POST /servers/127.0.0.3/disable");
	o = js(out);
	ok(json_array_size(json_object_get(o, "jobs")) == 1 && !strcmp(tzkup_data(&u, tzkup_path(&u, "own", "servers/127.0.0.3")), "DISABLED") &&
	   !strcmp(tzkup_data(&u, tzkup_path(&u, "own", "servers/127.0.0.1")), "ENABLED"),
	   "own's servers/127.0.0.3 DISABLED (its one job), 127.0.0.1 left alone");
	json_decref(o), free(out);
	is_int(req("POST", "/api/v1/servers/127.0.0.3/enable", "oper", NULL, NULL, NULL), 200, "and enable");
	ok(!strcmp(tzkup_data(&u, tzkup_path(&u, "own", "servers/127.0.0.3")), "ENABLED"), "ENABLED again");

	/* ---- shutdown: an instance, a server of a job, a server ----------------------------------- */
	snprintf(line, sizeof line, "{\"instance\": \"%s\"}", s[1].id);
	is_int(req("POST", "/api/v1/jobs/pj/shutdown", "oper", NULL, line, NULL), 200, "shutdown pj's instance on s1");
	const char *only0[1] = { s[0].id };
	ok(instances_are("pj", only0, 1, 3000) && !tzkup_missing(&u, tzkup_path(&u, "own", "instances/%s", s[1].id)),
	   "pj's instance of s1 is gone; s1's instance of own stays");
	is_int(req("POST", "/api/v1/jobs/pj/shutdown", "oper", NULL, "{\"server\": \"127.0.0.1\"}", NULL), 200,
	       "shutdown pj on server 127.0.0.1");
	ok(instances_are("pj", NULL, 0, 3000), "pj has no instance online");
	is_int(req("POST", "/api/v1/servers/127.0.0.3/shutdown", "oper", NULL, NULL, &out), 200, "POST /servers/127.0.0.3/shutdown");
	const char *own01[2] = { s[0].id, s[1].id };
	ok(instances_are("own", own01, 2, 3000), "own's instance on s2 is gone, s0's and s1's stay");
	free(out);

	/* ---- DELETE ------------------------------------------------------------------------------ */
	is_int(req("DELETE", "/api/v1/jobs/pj", "adm", NULL, NULL, &out), 200, "DELETE pj (no instance online now)");
	ok(strstr(out, "\"nodes\":") && tzkup_missing(&u, jroot("pj")), "its nodes are gone (%s)", out);
	free(out);
	snprintf(body, sizeof body, "{\"type\": \"script\", \"cron\": \"0 0 0 1 1 ? 2099\", \"shardingTotalCount\": 1, "
	         "\"label\": \"web\", \"props\": {\"script.command.line\": \"%s\"}}", rec);
	is_int(req("PUT", "/api/v1/jobs/pw", "adm", NULL, body, NULL), 201, "PUT pw (label web)");
	const char *web[1] = { s[2].id };
	ok(instances_are("pw", web, 1, 10000), "s2 adopts it");
	before = dump();
	is_int(req("DELETE", "/api/v1/jobs/pw", "adm", NULL, NULL, NULL), 409, "DELETE pw with its instance online: 409");
	ok(same_dump(before, "DELETE pw"), "nothing removed");
	free(before);
	is_int(req("DELETE", "/api/v1/jobs/pw?force=true", "adm", NULL, NULL, &out), 200, "DELETE ?force=true: 200");
	free(out);
	ok(tzkup_missing(&u, jroot("pw")), "pw's nodes are gone");
	usleep(1500000);
	ok(tzkup_missing(&u, jroot("pw")), "and s2 does not write them again: it stopped the job");

	/* a write's warning is in its answer, as the CLI prints it beside --json */
	snprintf(body, sizeof body, "type: script\ncron: \"0 0 0 1 1 ? 2099\"\nshardingTotalCount: 1\nlabel: none\n"
	         "overwrite: true\nprops: {script.command.line: \"%s\"}\n", rec);
	is_int(req("PUT", "/api/v1/jobs/ow", "adm", NULL, body, NULL), 201, "PUT ow (overwrite: true)");
	is_int(req("DELETE", "/api/v1/jobs/ow", "adm", NULL, NULL, &out), 200, "DELETE ow");
	o = js(out);
	json_t *wa = json_object_get(o, "warnings");
	ok(json_array_size(wa) == 1 && strstr(json_string_value(json_array_get(wa, 0)), "overwrite: true"),
	   "its answer carries the CLI's warning about overwrite: true (%s)", out);
	json_decref(o), free(out);

	/* ---- logout ------------------------------------------------------------------------------ */
	is_int(tserve_http(&sv, "POST", "/api/v1/login", NULL, NULL, "{\"user\": \"view\", \"password\": \"view-pass\"}", NULL), 200,
	       "login");
	is_int(tserve_http(&sv, "GET", "/api/v1/jobs", "cookie", NULL, NULL, NULL), 200, "the cookie reads");
	is_int(req("POST", "/api/v1/logout", NULL, NULL, NULL, NULL), 401, "logout without credentials: 401");
	is_int(tserve_http(&sv, "POST", "/api/v1/logout", "cookie", NULL, NULL, NULL), 200, "logout with the cookie");
	is_int(tserve_http(&sv, "GET", "/api/v1/jobs", "cookie", NULL, NULL, NULL), 401, "the cookie no longer reads: 401");

	/* ---- the audit --------------------------------------------------------------------------- */
	is_int(tserve_http(&sv, "GET", "/api/v1/audit?limit=1000", "view:view-pass", NULL, NULL, &out), 200, "GET /api/v1/audit");
	json_t *au = js(out);
	int missing = 0, create_ok = 0, update_ok = 0, force_ok = 0;
	for (int k = 0; k < nwrote; k++) {
		int seen = 0;
		for (size_t i = 0; i < json_array_size(au) && !seen; i++) {
			json_t *e = json_array_get(au, i);
			seen = !strcmp(jstr(e, "method"), wrote[k].method) && !strcmp(jstr(e, "path"), wrote[k].path) &&
			       !strcmp(jstr(e, "user"), wrote[k].user) && json_integer_value(json_object_get(e, "status")) == wrote[k].code;
		}
		if (!seen && wrote[k].code != 401) {
			missing++;
			diag("no audit line for %s %s by %s (%ld)", wrote[k].method, wrote[k].path, wrote[k].user, wrote[k].code);
		}
	}
	for (size_t i = 0; i < json_array_size(au); i++) {
		json_t *e = json_array_get(au, i), *r = json_object_get(e, "result");
		if (!strcmp(jstr(e, "path"), "/api/v1/jobs/pj") && !strcmp(jstr(e, "method"), "PUT") && r) {
			create_ok |= !strcmp(jstr(r, "action"), "create") && json_integer_value(json_object_get(r, "configVersion")) == 0;
			update_ok |= !strcmp(jstr(r, "action"), "update") && json_array_size(json_object_get(r, "keys")) == 2;
		}
		if (!strcmp(jstr(e, "path"), "/api/v1/jobs/pw") && !strcmp(jstr(e, "method"), "DELETE") &&
		    json_integer_value(json_object_get(e, "status")) == 200)
			force_ok = !strcmp(jstr(json_object_get(e, "query"), "force"), "true");
	}
	ok(nwrote > 30 && !missing, "every write (%d) has its audit line: method, path, user, status", nwrote);
	ok(create_ok && update_ok, "PUT's lines have the result: create at version 0; update with the keys changed");
	ok(force_ok, "the forced DELETE's line has its query (force: true)");
	json_decref(au), free(out);
	char *file = tsup_slurp(audit);
	int lines = 0;
	for (char *q = file; q && *q; q++) lines += *q == '\n';
	ok(lines >= nwrote - 1, "--audit FILE has them too (%d lines)", lines);
	free(file);

	/* ---- /metrics while a supervisor is dead ---------------------------------------------------- */
	tsup_stop(&s[1], SIGKILL, 5000);
	s[1].pid = 0;
	uint64_t end = tlib_now_ms() + 15000;
	int scrapes = 0, all200 = 1, gone = 0;
	while (!gone && tlib_now_ms() < end) {
		m = scrape(&code);
		scrapes++;
		all200 &= code == 200;
		gone = series(m, "ejob_job_instances_online{job=\"own\"}") == 1;
		if (gone) {
			ok(promtool_ok(m), "valid while s1 is dead");
			ok(series(m, "ejob_job_health{job=\"own\",state=\"OK\"}") >= 0 && series(m, "ejob_zookeeper_up") == 1,
			   "with own's health series, ZooKeeper up");
		}
		free(m);
		if (!gone) usleep(200000);
	}
	ok(all200 && gone, "every scrape (%d) answered 200 while s1 was dead, until own's instances online says 1", scrapes);

	tserve_stop(&sv);
	for (int i = 0; i < 3; i++)
		if (s[i].pid > 0) tsup_stop(&s[i], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
