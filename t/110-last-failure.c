/* t/110-last-failure.c: an item's last failure, cause and output, from any machine (docs/design.md,
 * "An item's last execution"; docs/operations.md, "Job health"). A script job's item 0 fails
 * (exit 3) printing known lines, 1,600 bytes in all, with a quote, a backslash, a tab and a
 * non-ASCII line among its last ones; item 1 succeeds. Then:
 *   - sharding/0/last, read with the ZooKeeper client, says "error": "failed (exit 3)" and
 *     "tail": the last lines of the output within 1,024 bytes, from a line's start, byte for byte;
 *     sharding/1/last (ok) has the keys it always had and no error or tail;
 *   - `ejobctl jobs --json`: the job's "failing" lists item 0 with its instance, outcome, end,
 *     count, error and tail; a healthy job's is []; `status --json`: items.0.last.error/tail, and
 *     null for item 1; `status` (text): the cause and the output's last line;
 *   - serve's GET /api/v1/jobs (from its model) and GET /api/v1/jobs/{job} say the same;
 *   - once the item succeeds, its record has no error or tail and "failing" is [] everywhere. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* the output of the failing item, and the tail its record must keep */
static char out[4096];
static const char *want_tail;

static void make_output(void)
{
	size_t n = 0;
	for (int i = 0; i < 40; i++)     /* 40 lines of 40 bytes: 1,600 with the last ones */
		n += (size_t)snprintf(out + n, sizeof out - n, "padding line %02d .......................\n", i);
	n += (size_t)snprintf(out + n, sizeof out - n,
	                      "quote \" backslash \\ tab\there\n"
	                      "non-ASCII: \xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82\n"
	                      "ERROR: relation \"bills\" does not exist\n");
	/* the first line that starts within the last 1,024 bytes */
	size_t from = n - 1024;
	while (out[from - 1] != '\n') from++;
	want_tail = out + from;
}

/* a node's data parsed (NULL: no node, or not JSON) */
static json_t *node_json(const char *path)
{
	static char data[65536];
	int len = sizeof data - 1;
	if (zoo_get(u.zh, path, 0, data, &len, NULL) != ZOK || len < 0) return NULL;
	data[len] = 0;
	return json_loads(data, 0, NULL);
}

static const char *str_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return !v ? "(missing)" : json_is_null(v) ? "null" : json_is_string(v) ? json_string_value(v) : "(not a string)";
}

/* ejobctl ARGS... --json, parsed */
static json_t *ctl_json(const char *a, const char *b)
{
	char *o = NULL, *e = NULL;
	tzkup_ctl(&u, &o, &e, a, b ? b : "--json", b ? "--json" : NULL, NULL);
	json_t *d = json_loads(o ? o : "", 0, NULL);
	free(o), free(e);
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

/* the outcome sharding/{item}/last of job f says (for tlib_wait_for) */
struct want { int item; const char *outcome; };
static int last_is(void *arg)
{
	const struct want *w = arg;
	json_t *d = node_json(tzkup_path(&u, "f", "sharding/%d/last", w->item));
	int yes = d && !strcmp(str_of(d, "outcome"), w->outcome);
	json_decref(d);
	if (!yes) usleep(50000);
	return yes;
}

/* the failing entries of job in a jobs document, as "item:outcome" joined */
static const char *failing_of(json_t *doc, const char *job)
{
	static char b[256];
	b[0] = 0;
	json_t *f = json_object_get(job_of(doc, job), "failing"), *e;
	size_t i;
	if (!json_is_array(f)) return "(not an array)";
	json_array_foreach(f, i, e)
		snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld:%s", i ? "," : "", json_integer_value(json_object_get(e, "item")),
		         str_of(e, "outcome"));
	return b;
}

static int api_failing_is(void *arg)
{
	char *body = NULL;
	json_t *d = NULL;
	if (tserve_http(&sv, "GET", "/api/v1/jobs", NULL, NULL, NULL, &body) == 200 && sv.from_model)
		d = json_loads(body, 0, NULL);
	int yes = d && !strcmp(failing_of(d, "f"), arg);
	json_decref(d);
	free(body);
	if (!yes) usleep(50000);
	return yes;
}

int main(void)
{
	tlib_init(120);
	make_output();
	tzkup_start(&u, 500, "t110", 4000);
	char outfile[600], okfile[600], script[600], body[2048], jobs[4096];
	snprintf(outfile, sizeof outfile, "%s/out.txt", tlib_tmpdir());
	snprintf(okfile, sizeof okfile, "%s/ok", tlib_tmpdir());
	tlib_write_file(outfile, out, strlen(out));
	snprintf(body, sizeof body,
	         "#!/bin/sh\n"
	         "[ -e '%s' ] && exit 0\n"
	         "case \"$1\" in *'\"shardingItem\":0'*) cat '%s'; exit 3;; esac\n"
	         "echo item 1 is fine\n",
	         okfile, outfile);
	tlib_script(script, sizeof script, "f.sh", body);
	snprintf(jobs, sizeof jobs,
	         "  f:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  g:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: /bin/true}\n",
	         script);
	struct tsup a;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, NULL };
	tserve_start(&sv, "serve", args);

	/* ---- item 0 failed: its record in ZooKeeper ---- */
	struct want w0 = { 0, "failed" }, w1 = { 1, "ok" };
	ok(tlib_wait_for(last_is, &w0, 20000), "f item 0 failed: sharding/0/last says so");
	ok(tlib_wait_for(last_is, &w1, 5000), "f item 1 ran ok: sharding/1/last says so");
	json_t *n0 = node_json(tzkup_path(&u, "f", "sharding/0/last"));
	is_str(str_of(n0, "error"), "failed (exit 3)", "  sharding/0/last error: the history's cause");
	is_str(str_of(n0, "tail"), want_tail, "  its tail: the output's last lines, within 1,024 bytes, from a line's start");
	ok(strlen(str_of(n0, "tail")) <= 1024 && strlen(str_of(n0, "tail")) > 900, "  (%zu bytes)",
	   strlen(str_of(n0, "tail")));
	json_t *n1 = node_json(tzkup_path(&u, "f", "sharding/1/last"));
	is_int((int)json_object_size(n1), 8, "  sharding/1/last (ok): its 8 keys as before, no error, no tail");
	ok(!json_object_get(n1, "error") && !json_object_get(n1, "tail"), "  (neither key there)");

	/* ---- ejobctl jobs --json: "failing" ---- */
	json_t *d = ctl_json("jobs", NULL);
	json_t *fj = job_of(d, "f"), *fl = json_object_get(fj, "failing");
	is_int((int)json_array_size(fl), 1, "jobs --json: f's failing lists one item");
	json_t *e = json_array_get(fl, 0);
	is_int((int)json_integer_value(json_object_get(e, "item")), 0, "  item 0");
	is_str(str_of(e, "instance"), a.id, "  on a");
	is_str(str_of(e, "outcome"), "failed", "  failed");
	ok(json_integer_value(json_object_get(e, "endMs")) == json_integer_value(json_object_get(n0, "endMs")),
	   "  its endMs the record's");
	ok(json_integer_value(json_object_get(e, "consecutiveFailures")) >= 1, "  consecutiveFailures %lld",
	   json_integer_value(json_object_get(e, "consecutiveFailures")));
	is_str(str_of(e, "error"), "failed (exit 3)", "  error");
	is_str(str_of(e, "tail"), want_tail, "  tail, byte for byte");
	is_int((int)json_object_size(e), 7, "  and nothing else (item, instance, outcome, endMs, consecutiveFailures, error, tail)");
	ok(json_is_array(json_object_get(job_of(d, "g"), "failing")) && !json_array_size(json_object_get(job_of(d, "g"), "failing")),
	   "  a healthy job's failing: []");
	json_decref(d);

	/* ---- status --json and text ---- */
	d = ctl_json("status", "f");
	json_t *it0 = json_object_get(json_array_get(json_object_get(d, "items"), 0), "last");
	json_t *it1 = json_object_get(json_array_get(json_object_get(d, "items"), 1), "last");
	is_str(str_of(it0, "error"), "failed (exit 3)", "status f --json: items.0.last.error");
	is_str(str_of(it0, "tail"), want_tail, "  items.0.last.tail");
	is_str(str_of(it1, "error"), "null", "  items.1.last.error null (ok)");
	is_str(str_of(it1, "tail"), "null", "  items.1.last.tail null");
	json_decref(d);
	char *txt = NULL, *err = NULL;
	tzkup_ctl(&u, &txt, &err, "status", "f", NULL);
	ok(strstr(txt, "\nfailing\n  item 0: failed (exit 3); output ends: ERROR: relation \"bills\" does not exist\n") != NULL,
	   "status f: the cause and the output's last line under the table");
	ok(!strstr(txt, "item 1:"), "  item 1 (ok) not among them");

	/* ---- serve: the model's document and the job's ---- */
	ok(tlib_wait_for(api_failing_is, (void *)"0:failed", 15000), "GET /api/v1/jobs (model): f failing [item 0]");
	char *b = NULL;
	tserve_http(&sv, "GET", "/api/v1/jobs", NULL, NULL, NULL, &b);
	d = json_loads(b ? b : "", 0, NULL);
	e = json_array_get(json_object_get(job_of(d, "f"), "failing"), 0);
	is_str(str_of(e, "tail"), want_tail, "  with the tail");
	is_str(str_of(e, "error"), "failed (exit 3)", "  and the error");
	json_decref(d), free(b), b = NULL;
	is_int((int)tserve_http(&sv, "GET", "/api/v1/jobs/f", NULL, NULL, NULL, &b), 200, "GET /api/v1/jobs/f");
	d = json_loads(b ? b : "", 0, NULL);
	it0 = json_object_get(json_array_get(json_object_get(d, "items"), 0), "last");
	is_str(str_of(it0, "tail"), want_tail, "  items.0.last.tail");
	is_str(str_of(it0, "error"), "failed (exit 3)", "  items.0.last.error");
	json_decref(d), free(b), b = NULL;

	/* ---- it succeeds: the record is an ok one again ---- */
	tlib_write_file(okfile, "", 0);
	struct want w0ok = { 0, "ok" };
	ok(tlib_wait_for(last_is, &w0ok, 10000), "item 0 succeeds: sharding/0/last says ok");
	json_decref(n0);
	n0 = node_json(tzkup_path(&u, "f", "sharding/0/last"));
	is_int((int)json_object_size(n0), 8, "  its 8 keys, no error, no tail");
	is_int((int)json_integer_value(json_object_get(n0, "consecutiveFailures")), 0, "  0 failures in a row");
	d = ctl_json("jobs", NULL);
	is_str(failing_of(d, "f"), "", "jobs --json: f's failing []");
	json_decref(d);
	d = ctl_json("status", "f");
	it0 = json_object_get(json_array_get(json_object_get(d, "items"), 0), "last");
	ok(json_is_null(json_object_get(it0, "error")) && json_is_null(json_object_get(it0, "tail")),
	   "status --json: items.0.last error and tail null");
	json_decref(d);
	tzkup_ctl(&u, &txt, &err, "status", "f", NULL);
	ok(!strstr(txt, "failing"), "status f: nothing failing");
	ok(tlib_wait_for(api_failing_is, (void *)"", 15000), "GET /api/v1/jobs (model): f failing []");
	free(txt), free(err);
	json_decref(n0), json_decref(n1);

	tserve_stop(&sv);
	int st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "a stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
