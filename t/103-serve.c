/* t/103-serve.c: `ejobctl serve`, the HTTP API, on a real cluster (one ZooKeeper, one supervisor)
 * through real HTTP (libcurl):
 *   - reads: GET /api/v1/jobs has `ejobctl jobs --json`'s jobs and fields; an unknown job is 404
 *     with did-you-mean;
 *   - users and roles (--auth, crypt(3) hashes from --hash-password): no credentials 401, a wrong
 *     password 401, a viewer's write 403 and nothing written; an operator triggers, disables and
 *     enables an item, but may not PUT a config (403); an admin PUTs one; a session cookie from
 *     POST /api/v1/login works in place of Basic;
 *   - errors: bad JSON, an unknown key, a "parameter" that is not a string, a config the check
 *     refuses (400 with config set's lines), a stale ?version= (409), a body over the limit (413):
 *     the config node unchanged by each;
 *   - every write is one audit line (user, method, path, the change, the status) in --audit FILE
 *     and in GET /api/v1/audit;
 *   - without --auth, a non-loopback --listen is refused (exit 2, saying the fix);
 *   - /healthz 200 while ZooKeeper answers, 503 once it is gone, 200 again once it is back. */
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

#define EJOBCTL BUILT("tools/ejobctl")

static struct tzkup u;
static struct tserve sv;

/* method path as userpass (NULL: none; "cookie": the session cookie) with body (NULL: none): the
 * status; the body in *out (malloc'd; out may be NULL) */
static long http(const char *method, const char *path, const char *userpass, const char *body, char **out)
{
	return tserve_http(&sv, method, path, userpass, NULL, body, out);
}

static int has_key(json_t *doc, const char *k, const char *v)
{
	json_t *x = json_object_get(doc, k);
	return x && json_is_string(x) && !strcmp(json_string_value(x), v);
}

#define data(path) tzkup_data(&u, path)
#define missing(path) tzkup_missing(&u, path)

int main(void)
{
	tlib_init(90);
	tzkup_start(&u, 200, "t103", 4000);
	const char *sh = tsup_rec_script();
	char jobs[2048];
	snprintf(jobs, sizeof jobs,
	         "  op:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"%s %s/runs-op\"}\n"
	         "  tr:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s/runs-tr\"}\n",
	         sh, tlib_tmpdir(), sh, tlib_tmpdir());
	struct tsup a;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_registered(&u, "op", a.id, 0, 15000) && tzkup_wait_registered(&u, "tr", a.id, 0, 15000),
	   "the supervisor has both jobs");
	/* the leader shards them 0.5-2 s after they register (eager sharding): the reads below compare
	 * the state after it, not a moment on each side of it */
	ok(tzkup_wait_epoch(&u, "op", 0, 15000) && tzkup_wait_epoch(&u, "tr", 0, 15000), "the leader has sharded both");

	/* users */
	char auth[600], audit[600], line[4096];
	snprintf(auth, sizeof auth, "%s/users", tlib_tmpdir());
	snprintf(audit, sizeof audit, "%s/audit.log", tlib_tmpdir());
	char *hv = tserve_hash("v-pass"), *ho = tserve_hash("o-pass"), *ha = tserve_hash("a-pass");
	ok(!strncmp(hv, "$y$", 3) && strcmp(hv, tserve_hash("v-pass")), "--hash-password gives a yescrypt hash, salted");
	snprintf(line, sizeof line, "# users\nview:%s:viewer\noper:%s:operator\nadm:%s:admin\n", hv, ho, ha);
	tlib_write_file(auth, line, strlen(line));

	/* without --auth: loopback only */
	{
		char *out = NULL, *err = NULL;
		const char *argv[] = { EJOBCTL, "serve", "--listen", "0.0.0.0:0", "--zk", u.connect, "--namespace", u.ns, NULL };
		int st = tlib_run(argv, &out, &err);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(err, "loopback only") && strstr(err, "--auth FILE"),
		   "without --auth, --listen 0.0.0.0 is refused, exit 2, naming the fix");
		diag("%s", err);
		free(out), free(err);
	}

	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, "--auth", auth, "--audit", audit, NULL };
	tserve_start(&sv, "serve", args);

	char *body;
	is_int(http("GET", "/healthz", NULL, NULL, NULL), 200, "/healthz: 200 while ZooKeeper answers");
	is_int(http("GET", "/api/v1/jobs", NULL, NULL, NULL), 401, "no credentials: 401");
	is_int(http("GET", "/api/v1/jobs", "view:wrong", NULL, NULL), 401, "a wrong password: 401");

	/* reads match the CLI's --json (serve's model follows ZooKeeper's watches: a change a moment
	 * before is there a moment later, so the two are read again until they agree, 5 s at most) */
	is_int(http("GET", "/api/v1/jobs", "view:v-pass", NULL, &body), 200, "a viewer reads the jobs");
	char *cli = NULL, *cerr = NULL;
	json_t *api = NULL, *ref = NULL;
	int same = 0;
	for (uint64_t end = tlib_now_ms() + 5000; !same; usleep(100000)) {
		if (api) {
			json_decref(api), json_decref(ref);
			free(body), free(cli);
			body = cli = NULL;
			http("GET", "/api/v1/jobs", "view:v-pass", NULL, &body);
		}
		tzkup_ctl(&u, &cli, &cerr, "jobs", "--json", NULL);
		free(cerr);
		cerr = NULL;
		api = json_loads(body ? body : "", 0, NULL), ref = json_loads(cli ? cli : "", 0, NULL);
		same = api && ref && json_array_size(json_object_get(api, "jobs")) == 2;
		for (size_t i = 0; same && i < 2; i++) {
			json_t *x = json_array_get(json_object_get(api, "jobs"), i), *y = json_array_get(json_object_get(ref, "jobs"), i);
			json_object_del(x, "nextFire"), json_object_del(x, "nextFireEpoch");
			json_object_del(y, "nextFire"), json_object_del(y, "nextFireEpoch");
			same = json_equal(x, y) && json_object_size(x) == json_object_size(y) && json_object_size(x) >= 10;
		}
		if (tlib_now_ms() >= end) break;
	}
	ok(same, "GET /api/v1/jobs: the same jobs and fields as `ejobctl jobs --json`");
	if (!same) diag("api: %s\ncli: %s", body, cli);
	json_decref(api), json_decref(ref), free(body), free(cli);

	is_int(http("GET", "/api/v1/jobs/op", "view:v-pass", NULL, &body), 200, "GET /api/v1/jobs/op");
	api = json_loads(body, 0, NULL);
	ok(api && has_key(api, "job", "op") && json_array_size(json_object_get(api, "items")) == 4 &&
	   json_is_string(json_object_get(api, "config")), "status --json's job, its 4 items, and its config node");
	json_decref(api), free(body);
	is_int(http("GET", "/api/v1/jobs/opp", "view:v-pass", NULL, &body), 404, "an unknown job: 404");
	ok(strstr(body, "did you mean 'op'") && strstr(body, "\"hint\""), "with did-you-mean and a hint");
	diag("%s", body);
	free(body);
	is_int(http("GET", "/api/v1/servers", "view:v-pass", NULL, &body), 200, "GET /api/v1/servers");
	ok(strstr(body, "\"127.0.0.1\""), "lists the server");
	free(body);

	/* roles */
	is_int(http("POST", "/api/v1/jobs/tr/trigger", "view:v-pass", NULL, &body), 403, "a viewer's trigger: 403");
	ok(strstr(body, "viewer") && missing(tzkup_path(&u, "tr", "trigger/%s", a.id)), "naming the role; nothing written");
	free(body);
	is_int(http("POST", "/api/v1/jobs/op/items/1/disable", "oper:o-pass", "", &body), 200, "an operator disables item 1");
	ok(!missing(tzkup_path(&u, "op", "sharding/1/disabled")), "sharding/1/disabled is there");
	free(body);
	is_int(http("POST", "/api/v1/jobs/op/items/1/enable", "oper:o-pass", NULL, NULL), 200, "and enables it");
	ok(missing(tzkup_path(&u, "op", "sharding/1/disabled")), "sharding/1/disabled is gone");
	is_int(http("POST", "/api/v1/jobs/op/items/9/disable", "oper:o-pass", NULL, &body), 404, "item 9 of 4: 404");
	free(body);

	is_int(http("POST", "/api/v1/jobs/tr/trigger", "oper:o-pass", "{\"parameter\": 7}", &body), 400,
	       "a trigger's parameter that is not a string: 400");
	ok(strstr(body, "must be a non-empty string") && missing(tzkup_path(&u, "tr", "trigger/%s", a.id)), "saying so; nothing written");
	free(body);
	is_int(http("POST", "/api/v1/jobs/tr/trigger", "oper:o-pass", "{\"parameter\": \"x\"}", &body), 200,
	       "a trigger with a parameter: 200");
	ok(strstr(body, "{\\\"parameter\\\":\\\"x\\\"}"), "its trigger node carries the parameter (%s)", body);
	free(body);
	/* the supervisor takes it (deletes the node) before the next trigger below */
	for (int k = 0; k < 100 && !missing(tzkup_path(&u, "tr", "trigger/%s", a.id)); k++) usleep(50000);
	is_int(http("POST", "/api/v1/jobs/tr/disable", "oper:o-pass", "{\"server\": ", &body), 400, "bad JSON: 400");
	free(body);
	is_int(http("POST", "/api/v1/jobs/tr/disable", "oper:o-pass", "{\"srv\": \"127.0.0.1\"}", &body), 400,
	       "an unknown key: 400");
	ok(strstr(body, "unknown key \\\"srv\\\""), "naming it");
	free(body);
	is_int(http("POST", "/api/v1/jobs/tr/disable", "oper:o-pass", "{\"server\": 7}", &body), 400, "a wrong type: 400");
	free(body);
	ok(!strcmp(data(tzkup_path(&u, "tr", "servers/127.0.0.1")), "ENABLED"), "the refused disables wrote nothing");

	/* config: admin only, checked, version-checked */
	const char *cpath = tzkup_path(&u, "op", "config");
	char before[8192];
	snprintf(before, sizeof before, "%s", data(cpath));
	is_int(http("PUT", "/api/v1/jobs/op", "oper:o-pass", "description: x\n", &body), 403, "an operator's PUT: 403");
	free(body);
	char bad[8192];
	snprintf(bad, sizeof bad, "%s", before);
	char *p = strstr(bad, "shardingTotalCount: 4");
	if (p) memcpy(p, "shardingTotalCount: x", 21);
	is_int(http("PUT", "/api/v1/jobs/op", "adm:a-pass", bad, &body), 400, "a config the check refuses: 400");
	ok(strstr(body, "shardingTotalCount") && strstr(body, "is not a config node that job 'op' can take"),
	   "with config set's lines and message");
	diag("%s", body);
	free(body);
	is_int(http("PUT", "/api/v1/jobs/op?version=999", "adm:a-pass", before, &body), 409, "a stale ?version=: 409");
	free(body);
	char *big = malloc((2u << 20) + 1);
	memset(big, 'a', 2u << 20);
	big[2u << 20] = 0;
	is_int(http("PUT", "/api/v1/jobs/op", "adm:a-pass", big, &body), 413, "a body over the limit: 413");
	free(body), free(big);
	is_str(data(cpath), before, "the config node unchanged by the refused PUTs");
	/* the node with its description replaced */
	char good[8300];
	size_t gl = 0;
	for (const char *l = before; *l;) {
		size_t k = strcspn(l, "\n");
		if (strncmp(l, "description:", 12)) gl += (size_t)snprintf(good + gl, sizeof good - gl, "%.*s\n", (int)k, l);
		l += k + (l[k] == '\n');
	}
	snprintf(good + gl, sizeof good - gl, "description: set through the API\n");
	is_int(http("PUT", "/api/v1/jobs/op", "adm:a-pass", good, &body), 200, "an admin PUTs a config");
	ok(strstr(data(cpath), "set through the API") && strstr(body, "\"changed\":true"), "written");
	free(body);

	/* a session cookie */
	is_int(http("POST", "/api/v1/login", NULL, "{\"user\": \"oper\", \"password\": \"nope\"}", NULL), 401,
	       "login with a wrong password: 401");
	sv.set_cookie[0] = 0;
	is_int(http("POST", "/api/v1/login", NULL, "{\"user\": \"oper\", \"password\": \"o-pass\"}", NULL), 200, "login");
	ok(strstr(sv.set_cookie, "ejob_session=") && strstr(sv.set_cookie, "HttpOnly") && strstr(sv.set_cookie, "SameSite=Strict"),
	   "a session cookie, HttpOnly, SameSite=Strict");
	is_int(http("POST", "/api/v1/jobs/tr/trigger", "cookie", NULL, &body), 200, "the cookie's operator triggers");
	ok(strstr(body, "\"writes\"") && strstr(body, "trigger"), "the writes, as `ejobctl trigger --json` says them");
	free(body);

	/* the audit */
	is_int(http("GET", "/api/v1/audit", "view:v-pass", NULL, &body), 200, "GET /api/v1/audit");
	json_t *au = json_loads(body, 0, NULL);
	size_t n = json_array_size(au);
	json_t *last = json_array_get(au, n - 1);
	ok(last && has_key(last, "user", "oper") && has_key(last, "method", "POST") &&
	   has_key(last, "path", "/api/v1/jobs/tr/trigger") && has_key(last, "address", "127.0.0.1") &&
	   json_integer_value(json_object_get(last, "status")) == 200 && json_is_string(json_object_get(last, "time")),
	   "the trigger's line: user, address, method, path, status, time");
	int put_seen = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(au, i);
		if (has_key(e, "user", "adm") && has_key(e, "method", "PUT") && json_integer_value(json_object_get(e, "status")) == 200)
			put_seen = json_is_string(json_object_get(e, "change")) &&
			           strstr(json_string_value(json_object_get(e, "change")), "set through the API");
	}
	ok(put_seen, "the PUT's line has the change");
	char *file = tsup_slurp(audit);
	int lines = 0;
	for (char *q = file; q && *q; q++) lines += *q == '\n';
	is_int(lines, (int)n, "--audit FILE has one line per write, as GET /api/v1/audit");
	free(file), json_decref(au), free(body);

	/* ZooKeeper gone, then back on the same port: serve's session comes back by itself */
	tzk_stop(&u.zk, SIGKILL, 5000);
	is_int(http("GET", "/healthz", NULL, NULL, NULL), 503, "/healthz: 503 once ZooKeeper is gone");
	is_int(http("GET", "/api/v1/jobs", "view:v-pass", NULL, &body), 503, "a read: 503");
	ok(strstr(body, "ZooKeeper"), "saying why");
	free(body);
	if (tzk_restart(&u.zk, 30000) < 0) BAIL_OUT("cannot restart ZooKeeper");
	long code = 0;
	for (uint64_t end = tlib_now_ms() + 30000; tlib_now_ms() < end && code != 200; usleep(200000))
		code = http("GET", "/healthz", NULL, NULL, NULL);
	is_int(code, 200, "ZooKeeper back: /healthz 200 again, with no restart of serve");
	is_int(http("GET", "/api/v1/jobs", "view:v-pass", NULL, &body), 200, "  and reads answer");
	ok(body && strstr(body, "\"tr\""), "  with the jobs");
	free(body);
	tserve_stop(&sv);
	tzkup_end(&u);
	done_testing();
}
