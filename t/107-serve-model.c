/* t/107-serve-model.c: `ejobctl serve`'s model of the cluster (tools/ejobctl_model.h) stays right
 * as the cluster changes, on a real ZooKeeper with two real supervisors: after each change, GET
 * /api/v1/jobs answered from the model (X-Ejob-From: model) is `ejobctl jobs --json` (read then,
 * on its own session):
 *   - a job added by a writer of its own (its nodes made in ZooKeeper), and a namespace child
 *     without a config node (a warning), then the job removed by `ejobctl remove`;
 *   - a job disabled through the API: the GET right after the POST shows it (read-your-writes);
 *   - an instance gone (a supervisor killed: its session expires);
 *   - a reshard: shardingTotalCount raised through PUT (seen by the GET right after), the job
 *     triggered, the leader's new assignment.
 * And GET /api/v1/servers and /instances from the model are `ejobctl servers --json` and
 * `instances --json` to the byte, at the start and after each change, and follow a write at once:
 * a server disabled and enabled (POST /api/v1/servers/{ip}/...), an instance shut down in a job;
 * with --no-model they come from ZooKeeper, the same documents. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* method path with body (NULL: none): the status; the body in *out (may be NULL), *model: the
 * answer came from the model */
static long http(const char *method, const char *path, const char *body, char **out, int *model)
{
	long code = tserve_http(&sv, method, path, NULL, NULL, body, out);
	if (model) *model = sv.from_model;
	return code;
}

/* GET /api/v1/jobs from the model, parsed (NULL if it failed or did not come from the model) */
static json_t *model_jobs(void)
{
	char *body;
	int model;
	json_t *d = NULL;
	if (http("GET", "/api/v1/jobs", NULL, &body, &model) == 200 && model) d = json_loads(body, 0, NULL);
	free(body);
	return d;
}

static json_t *job_of(json_t *doc, const char *name)
{
	json_t *v = json_object_get(doc, "jobs"), *j;
	size_t i;
	json_array_foreach(v, i, j)
		if (!strcmp(json_string_value(json_object_get(j, "name")), name)) return j;
	return NULL;
}

/* the next fire is judged at the second of each reading: left out of the comparison */
static void no_next(json_t *doc)
{
	json_t *v = json_object_get(doc, "jobs"), *j;
	size_t i;
	json_array_foreach(v, i, j) json_object_del(j, "nextFire"), json_object_del(j, "nextFireEpoch");
}

static char last_diff[8192];

/* the model's document is the CLI's (read after it) */
static int same_as_cli(void *arg)
{
	(void)arg;
	json_t *api = model_jobs();
	char *cli = NULL, *err = NULL;
	tzkup_ctl(&u, &cli, &err, "jobs", "--json", NULL);
	json_t *ref = json_loads(cli ? cli : "", 0, NULL);
	int same = api && ref;
	if (same) {
		no_next(api), no_next(ref);
		same = json_equal(api, ref);
	}
	if (!same) {
		char *a = api ? json_dumps(api, JSON_COMPACT) : NULL;
		snprintf(last_diff, sizeof last_diff, "api: %.3000s\ncli: %.3000s", a ? a : "(none)", cli ? cli : "(none)");
		free(a);
	}
	json_decref(api), json_decref(ref);
	free(cli), free(err);
	return same;
}

static void check_same(const char *what)
{
	int same = tlib_wait_for(same_as_cli, NULL, 15000);
	ok(same, "%s: the model's GET /api/v1/jobs is `ejobctl jobs --json`", what);
	if (!same) diag("%s", last_diff);
}

/* GET path: the body (malloc'd) if the answer is 200 and came from the model (from ZooKeeper:
 * model 0), else NULL */
static char *get_doc(struct tserve *t, const char *path, int model)
{
	char *body = NULL;
	long code = tserve_http(t, "GET", path, NULL, NULL, NULL, &body);
	if (code == 200 && t->from_model == model) return body;
	free(body);
	return NULL;
}

struct view {
	struct tserve *t;
	const char *path, *cmd;
	int model;
};

/* GET path is `ejobctl cmd --json` (read after it), byte for byte */
static int same_view(void *arg)
{
	const struct view *v = arg;
	char *api = get_doc(v->t, v->path, v->model);
	char *cli = NULL, *err = NULL;
	int st = tzkup_ctl(&u, &cli, &err, v->cmd, "--json", NULL);
	int same = api && st == 0 && cli && !strcmp(api, cli);
	if (!same)
		snprintf(last_diff, sizeof last_diff, "api: %.3000s\ncli: %.3000s", api ? api : "(none)", cli ? cli : "(none)");
	free(api), free(cli), free(err);
	return same;
}

/* servers and instances from t (model: from the model) are the CLI's */
static void check_views(struct tserve *t, int model, const char *what)
{
	struct view v[2] = { { t, "/api/v1/servers", "servers", model }, { t, "/api/v1/instances", "instances", model } };
	for (int k = 0; k < 2; k++) {
		int same = tlib_wait_for(same_view, &v[k], 15000);
		ok(same, "%s: GET %s %s is `ejobctl %s --json`", what, v[k].path, model ? "from the model" : "from ZooKeeper",
		   v[k].cmd);
		if (!same) diag("%s", last_diff);
	}
}

/* GET path from the model right now, parsed (NULL if not from the model) */
static json_t *model_view(const char *path)
{
	char *b = get_doc(&sv, path, 1);
	json_t *d = b ? json_loads(b, 0, NULL) : NULL;
	free(b);
	return d;
}

/* the model's servers document right now: server ip's disabledJobsNum, -1 if none */
static long disabled_on(const char *ip)
{
	json_t *d = model_view("/api/v1/servers"), *x;
	long n = -1;
	size_t i;
	json_array_foreach(json_object_get(d, "servers"), i, x)
		if (!strcmp(json_string_value(json_object_get(x, "ip")), ip))
			n = (long)json_integer_value(json_object_get(x, "disabledJobsNum"));
	json_decref(d);
	return n;
}

/* the model's instances document right now: instance id's state in job ("" if not there) */
static const char *state_in(const char *id, const char *job, char *buf, size_t len)
{
	json_t *d = model_view("/api/v1/instances"), *x, *j;
	size_t i, k;
	snprintf(buf, len, "%s", "");
	json_array_foreach(json_object_get(d, "instances"), i, x)
		if (!strcmp(json_string_value(json_object_get(x, "id")), id))
			json_array_foreach(json_object_get(x, "jobs"), k, j)
				if (!strcmp(json_string_value(json_object_get(j, "name")), job))
					snprintf(buf, len, "%s", json_string_value(json_object_get(j, "state")));
	json_decref(d);
	return buf;
}

/* a string field of job name in the model's document right now ("" if none) */
static const char *field_now(const char *name, const char *key, char *buf, size_t len)
{
	json_t *d = model_jobs();
	json_t *v = d ? json_object_get(job_of(d, name), key) : NULL;
	if (json_is_string(v)) snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v)) snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else snprintf(buf, len, "%s", v ? "(other)" : "");
	json_decref(d);
	return buf;
}

static int model_answers(void *arg)
{
	(void)arg;
	json_t *d = model_jobs();
	json_decref(d);
	return d != NULL;
}

int main(void)
{
	tlib_init(120);
	tzkup_start(&u, 200, "t107", 4000);
	const char *sh = tsup_rec_script();
	char jobs[2048];
	snprintf(jobs, sizeof jobs,
	         "  op:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"%s %s/runs-op\"}\n"
	         "  tr:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s/runs-tr\"}\n",
	         sh, tlib_tmpdir(), sh, tlib_tmpdir());
	struct tsup s[2];
	tzkup_run_n(&u, s, 2, "workers: 2", jobs);
	ok(tzkup_wait_registered(&u, "op", s[0].id, 0, 15000) && tzkup_wait_registered(&u, "op", s[1].id, 0, 15000) &&
	   tzkup_wait_registered(&u, "tr", s[1].id, 0, 15000), "two supervisors have both jobs");

	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, NULL };
	tserve_start(&sv, "serve", args);
	ok(tlib_wait_for(model_answers, NULL, 10000), "the model answers GET /api/v1/jobs (X-Ejob-From: model)");
	check_same("at the start");
	check_views(&sv, 1, "at the start");

	/* a job added by a writer of its own, and a child that is no job */
	const char *cfg = "cron: 0 0 0 1 1 ? 2099\njobName: added\nshardingTotalCount: 2\n"
	                  "props:\n  script.command.line: /bin/true\n  ejob.type: script\n";
	char p1[128], p2[128];
	snprintf(p1, sizeof p1, "/%s/added", u.ns);
	snprintf(p2, sizeof p2, "/%s/nocfg", u.ns);
	int rc = zoo_create(u.zh, p1, "SCRIPT", 6, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	rc |= zoo_create(u.zh, tzkup_path(&u, "added", "config"), cfg, (int)strlen(cfg), &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	rc |= zoo_create(u.zh, p2, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	ok(rc == ZOK, "a job 'added' and a child 'nocfg' made in ZooKeeper");
	check_same("a job added, a child without config");
	char buf[256];
	is_str(field_now("added", "name", buf, sizeof buf), "added", "the model lists 'added'");

	/* removed by the CLI (another session) */
	char *o = NULL, *e = NULL;
	int st = tzkup_ctl(&u, &o, &e, "remove", "added", NULL);
	ok(st == 0, "ejobctl remove added");
	free(o), free(e);
	check_same("a job removed");
	is_str(field_now("added", "name", buf, sizeof buf), "", "the model lists 'added' no more");

	/* disabled through the API: the next read sees it, with no wait */
	is_int(http("POST", "/api/v1/jobs/op/disable", NULL, NULL, NULL), 200, "POST /api/v1/jobs/op/disable");
	is_str(field_now("op", "status", buf, sizeof buf), "DISABLED", "the GET right after the write shows op DISABLED");
	check_same("a job disabled");
	is_int(http("POST", "/api/v1/jobs/op/enable", NULL, NULL, NULL), 200, "POST /api/v1/jobs/op/enable");
	ok(strcmp(field_now("op", "status", buf, sizeof buf), "DISABLED"), "the GET right after shows op enabled again (%s)", buf);
	check_same("a job enabled");

	/* a server disabled and enabled through the API: the next GET /api/v1/servers sees it */
	char ip[64], path[160];
	snprintf(ip, sizeof ip, "%.*s", (int)(strstr(s[0].id, "@-@") - s[0].id), s[0].id);
	snprintf(path, sizeof path, "/api/v1/servers/%s/disable", ip);
	is_int(http("POST", path, NULL, NULL, NULL), 200, "POST %s", path);
	is_int(disabled_on(ip), 2, "the GET /api/v1/servers right after shows both jobs disabled on %s", ip);
	check_views(&sv, 1, "a server disabled");
	snprintf(path, sizeof path, "/api/v1/servers/%s/enable", ip);
	is_int(http("POST", path, NULL, NULL, NULL), 200, "POST %s", path);
	is_int(disabled_on(ip), 0, "the GET /api/v1/servers right after shows none disabled");
	check_views(&sv, 1, "a server enabled");

	/* an instance shut down in tr: the next GET /api/v1/instances sees it */
	char body[256];
	snprintf(body, sizeof body, "{\"instance\": \"%s\"}", s[1].id);
	is_str(state_in(s[1].id, "tr", buf, sizeof buf), "online", "%s is online in tr", s[1].id);
	is_int(http("POST", "/api/v1/jobs/tr/shutdown", body, NULL, NULL), 200, "POST /api/v1/jobs/tr/shutdown %s", body);
	is_str(state_in(s[1].id, "tr", buf, sizeof buf), "shutdown",
	       "the GET /api/v1/instances right after shows it shut down in tr");
	check_views(&sv, 1, "an instance shut down");
	check_same("an instance shut down");

	/* an instance gone: s[1] killed, its session expires */
	tsup_stop(&s[1], SIGKILL, 5000);
	for (int i = 0; i < 100 && !tzkup_missing(&u, tzkup_path(&u, "op", "instances/%s", s[1].id)); i++) usleep(100000);
	ok(tzkup_missing(&u, tzkup_path(&u, "op", "instances/%s", s[1].id)), "its instance node is gone");
	check_same("an instance gone");
	check_views(&sv, 1, "an instance gone");
	is_str(field_now("op", "instanceCount", buf, sizeof buf), "1", "the model counts one instance of op");

	/* a reshard: 3 items through PUT, then a fire */
	char *job;
	is_int(http("GET", "/api/v1/jobs/tr", NULL, &job, NULL), 200, "GET /api/v1/jobs/tr");
	json_t *jd = json_loads(job, 0, NULL);
	const char *text = json_string_value(json_object_get(jd, "config"));
	char *newcfg = text ? strdup(text) : strdup("");
	char *at = strstr(newcfg, "shardingTotalCount: 2");
	ok(at != NULL, "its config node has shardingTotalCount: 2");
	if (at) at[strlen("shardingTotalCount: ")] = '3';
	is_int(http("PUT", "/api/v1/jobs/tr", newcfg, NULL, NULL), 200, "PUT /api/v1/jobs/tr with shardingTotalCount: 3");
	is_str(field_now("tr", "shardingTotalCount", buf, sizeof buf), "3", "the GET right after shows 3 items");
	is_int(http("POST", "/api/v1/jobs/tr/trigger", NULL, NULL, NULL), 200, "POST /api/v1/jobs/tr/trigger");
	ok(tzkup_wait_owned(&u, "tr", 3, s[0].id, 3, 15000), "the leader assigned items 0-2 to the one instance left");
	check_same("a reshard");
	check_views(&sv, 1, "a reshard");
	json_decref(jd);
	free(job), free(newcfg);

	/* --no-model: from ZooKeeper, the same documents */
	struct tserve nm;
	const char *nargs[] = { "--zk", u.connect, "--namespace", u.ns, "--no-model", NULL };
	tserve_start(&nm, "serve-nomodel", nargs);
	check_views(&nm, 0, "--no-model");
	tserve_stop(&nm);

	tserve_stop(&sv);
	tsup_stop(&s[0], SIGTERM, 10000);
	tzkup_end(&u);
	done_testing();
}
