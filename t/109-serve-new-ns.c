/* t/109-serve-new-ns.c: `ejobctl serve` on an empty ZooKeeper (its namespace does not exist yet):
 *   - it starts and answers: /healthz 200 (saying the namespace is not there yet), GET
 *     /api/v1/jobs an empty list, from the model and without it (--no-model), a job's GET 404;
 *   - a PUT of a job with a label creates the namespace and the job (201); GET /api/v1/jobs shows
 *     it at once (the model picked the namespace up), and a PUT refused by the check (no label)
 *     leaves the namespace unmade;
 *   - GET /api/v1/jobs/{job}'s ETag is the config node's version: a PUT with it as If-Match
 *     updates, the same again (stale) is 409;
 *   - a supervisor with that label, started after, adopts the job and runs it. */
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

/* the names of GET /api/v1/jobs's jobs, space-separated, in buf ("?" when it is not 200 and JSON) */
static const char *job_names(struct tserve *sv, char *buf, size_t len)
{
	char *out = NULL;
	long code = tserve_http(sv, "GET", "/api/v1/jobs", NULL, NULL, NULL, &out);
	json_t *o = code == 200 && out ? json_loads(out, 0, NULL) : NULL;
	json_t *jobs = json_object_get(o, "jobs");
	snprintf(buf, len, "%s", json_is_array(jobs) ? "" : "?");
	for (size_t i = 0; i < json_array_size(jobs); i++) {
		size_t n = strlen(buf);
		snprintf(buf + n, len - n, "%s%s", n ? " " : "", json_string_value(json_object_get(json_array_get(jobs, i), "name")));
	}
	if (*buf == '?') diag("GET /api/v1/jobs: %ld %s", code, out ? out : "");
	json_decref(o);
	free(out);
	return buf;
}

static int model_answers(void *arg)
{
	struct tserve *sv = arg;
	char names[256];
	job_names(sv, names, sizeof names);
	return sv->from_model;
}

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 200, "t109", 4000);
	ok(tzkup_missing(&u, "/t109"), "ZooKeeper is empty: no namespace /t109");

	struct tserve sv, nm;
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, NULL };
	const char *nargs[] = { "--zk", u.connect, "--namespace", u.ns, "--no-model", NULL };
	tserve_start(&sv, "serve", args);
	tserve_start(&nm, "serve-nomodel", nargs);

	char *out = NULL, names[256];
	long code = tserve_http(&sv, "GET", "/healthz", NULL, NULL, NULL, &out);
	ok(code == 200 && out && strstr(out, "namespace /t109 does not exist yet"),
	   "/healthz: 200, the namespace not there yet (%ld %s)", code, out ? out : "");
	free(out);
	ok(tlib_wait_for(model_answers, &sv, 10000), "the model answers GET /api/v1/jobs (X-Ejob-From: model)");
	is_str(job_names(&sv, names, sizeof names), "", "  with no job");
	is_str(job_names(&nm, names, sizeof names), "", "GET /api/v1/jobs: no job (--no-model)");
	code = tserve_http(&sv, "GET", "/api/v1/jobs/pj", NULL, NULL, NULL, &out);
	ok(code == 404 && out && strstr(out, "no job 'pj' in namespace /t109"), "GET /api/v1/jobs/pj: 404 (%ld %s)", code,
	   out ? out : "");
	free(out);

	/* a job the check refuses makes nothing, not even the namespace */
	code = tserve_http(&sv, "PUT", "/api/v1/jobs/pj", NULL, NULL,
	                   "{\"type\": \"script\", \"cron\": \"* * * * * ?\", \"shardingTotalCount\": 1, \"props\": {\"script.command.line\": \"/bin/true\"}}",
	                   &out);
	ok(code == 400 && out && strstr(out, "has no label"), "PUT of a job without a label: 400 (%ld)", code);
	free(out);
	ok(tzkup_missing(&u, "/t109"), "  and the namespace is still not there");

	char runs[600], rec[600], sh[900], body[1200];
	snprintf(runs, sizeof runs, "%s/runs", tlib_tmpdir());
	snprintf(sh, sizeof sh, "#!/bin/sh\necho \"run $EJOB_ITEM $EJOB_TASK_ID\" >> %s\n", runs);
	tlib_script(rec, sizeof rec, "rec.sh", sh);
	snprintf(body, sizeof body,
	         "{\"type\": \"script\", \"cron\": \"* * * * * ?\", \"shardingTotalCount\": 2, \"label\": \"etl\",\n"
	         " \"props\": {\"script.command.line\": \"%s\"}}", rec);
	code = tserve_http(&sv, "PUT", "/api/v1/jobs/pj", NULL, NULL, body, &out);
	ok(code == 201 && out && strstr(out, "\"action\":\"create\""), "PUT of a labelled job: 201, created (%ld %s)", code,
	   out ? out : "");
	free(out);
	ok(!tzkup_missing(&u, "/t109") && !tzkup_missing(&u, tzkup_path(&u, "pj", "config")),
	   "  the namespace and the job's config node are there");
	is_str(job_names(&sv, names, sizeof names), "pj", "GET /api/v1/jobs shows it");
	ok(sv.from_model, "  from the model: it picked the namespace up");
	is_str(job_names(&nm, names, sizeof names), "pj", "GET /api/v1/jobs shows it (--no-model)");
	code = tserve_http(&sv, "GET", "/healthz", NULL, NULL, NULL, &out);
	ok(code == 200 && out && !strcmp(out, "ok\n"), "/healthz: 200 ok (%ld %s)", code, out ? out : "");
	free(out);

	/* GET's ETag is the config node's version: a PUT with If-Match of it writes over what was read */
	code = tserve_http(&sv, "GET", "/api/v1/jobs/pj", NULL, NULL, NULL, &out);
	ok(code == 200 && !strcmp(sv.etag, "\"0\"") && out && strstr(out, "\"configVersion\":0"),
	   "GET /api/v1/jobs/pj: 200, ETag \"0\" (%s), configVersion 0", sv.etag);
	free(out);
	char ifm[96], body2[1300];
	snprintf(ifm, sizeof ifm, "If-Match: %s", sv.etag);
	snprintf(body2, sizeof body2,
	         "{\"type\": \"script\", \"cron\": \"* * * * * ?\", \"shardingTotalCount\": 2, \"label\": \"etl\",\n"
	         " \"description\": \"from the GET\", \"props\": {\"script.command.line\": \"%s\"}}", rec);
	code = tserve_http(&sv, "PUT", "/api/v1/jobs/pj", NULL, ifm, body2, &out);
	ok(code == 200 && out && strstr(out, "\"action\":\"update\"") && !strcmp(sv.etag, "\"1\""),
	   "PUT with the GET's ETag as If-Match: 200, updated, ETag \"1\" (%ld %s)", code, out ? out : "");
	free(out);
	code = tserve_http(&sv, "PUT", "/api/v1/jobs/pj", NULL, ifm, body, &out);
	is_int(code, 409, "PUT again with that (now stale) If-Match: 409");
	free(out);
	code = tserve_http(&sv, "GET", "/api/v1/jobs/pj", NULL, NULL, NULL, &out);
	ok(code == 200 && !strcmp(sv.etag, "\"1\""), "GET's ETag follows: \"1\" (%s)", sv.etag);
	free(out);

	/* a supervisor with the label, started after: it adopts pj and runs it */
	struct tsup s;
	char sup[600];
	snprintf(sup, sizeof sup, "workers: 2, labels: [etl], allowedCommands: [\"%s/*.sh\"]", tlib_tmpdir());
	tzkup_config(&u, &s, "s0", sup,
	             "  own:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n    props: {script.command.line: /bin/true}\n");
	tzkup_run(&u, &s, "127.0.0.1");
	ok(tsup_wait_lines(runs, "run 0", 1, 15000) && tsup_wait_lines(runs, "run 1", 1, 5000),
	   "a supervisor labelled etl runs pj's items 0 and 1");
	is_str(job_names(&sv, names, sizeof names), "own pj", "GET /api/v1/jobs: its file's job and pj");

	tsup_stop(&s, SIGTERM, 10000);
	tserve_stop(&nm);
	tserve_stop(&sv);
	tzkup_end(&u);
	return done_testing();
}
