/* t/111-last-record.c: the last execution record itself (ipc/lastrun.h), and what it does to a
 * cluster when it is large or garbage.
 *   - units: a failed record with a quote, a backslash, a tab, a newline, a control character
 *     and non-ASCII in its error and tail reads back byte for byte; an ok record is the text it
 *     always was; error is cut at 256 bytes and tail at 1,024 (from a line's start, else a
 *     character's), valid UTF-8 kept valid; the worst record fits LASTRUN_MAX; garbage is refused
 *     (the old reader took a key found inside another key's text);
 *   - an operator's garbage sharding/0/last: ejobctl jobs/status and serve leave it out with a
 *     warning, exit 0, no crash; the supervisor then writes its record over it;
 *   - a fire of 600 native items that fail at once, each with 1 KB of output that JSON doubles:
 *     1.5 MB of records, over ZooKeeper's 1 MB jute.maxbuffer in one multi; all are written (the
 *     completion goes in several multis) and the supervisor keeps its session. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "ipc/lastrun.h"
#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define BIG 600          /* its task id lists them all, in a ring slot of 4 KB (SEG_DEFAULT_SLOT) */

static struct tzkup u;

static int valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		int n = *p < 0x80 ? 1 : (*p & 0xe0) == 0xc0 ? 2 : (*p & 0xf0) == 0xe0 ? 3 : (*p & 0xf8) == 0xf0 ? 4 : 0;
		if (!n) return 0;
		for (int i = 1; i < n; i++)
			if ((p[i] & 0xc0) != 0x80) return 0;
		p += n;
	}
	return 1;
}

static void units(void)
{
	char buf[LASTRUN_MAX];
	struct lastrun r = { .fire_id = 1700000000000, .end_ms = 1700000001234, .attempt = 2, .failures = 3,
	                     .ok_ms = 1699999000000 };
	snprintf(r.outcome, sizeof r.outcome, "failed");
	snprintf(r.instance, sizeof r.instance, "10.0.0.1@-@42");
	snprintf(r.source, sizeof r.source, "NORMAL_TRIGGER");
	char error[] = "failed (exit 3): \"bad\" \\ path";
	char tail[] = "quote \" backslash \\ tab\there\nctl \x01 del \x7f\n\xc3\xa9t\xc3\xa9 \xf0\x9f\x99\x82\n"
	              "\",\"fireId\":9,\"outcome\":\"ok\"\n";
	r.error = error, r.tail = tail;
	int n = lastrun_fmt(&r, buf, sizeof buf);
	ok(n > 0 && (size_t)n == strlen(buf), "fmt: a failed record with error and tail (%d bytes)", n);
	ok(strstr(buf, "\"tail\":\"quote \\\" backslash \\\\ tab\\there\\nctl \\u0001") != NULL, "  escaped as JSON: %.120s",
	   strstr(buf, "\"tail\"") ? strstr(buf, "\"tail\"") : buf);
	json_t *j = json_loads(buf, 0, NULL);
	ok(j && !strcmp(json_string_value(json_object_get(j, "tail")), tail), "  jansson reads the tail back byte for byte");
	json_decref(j);
	struct lastrun b;
	is_int(lastrun_parse(buf, (size_t)n, &b), 1, "parse: it reads back");
	is_str(b.error, error, "  error byte for byte");
	is_str(b.tail, tail, "  tail byte for byte");
	ok(b.fire_id == r.fire_id && b.end_ms == r.end_ms && b.ok_ms == r.ok_ms && b.attempt == 2 && b.failures == 3 &&
	   !strcmp(b.outcome, "failed") && !strcmp(b.instance, r.instance) && !strcmp(b.source, r.source),
	   "  every other field too (fireId 9 in the tail's text is not the record's)");
	lastrun_clear(&b);

	r.error = r.tail = NULL;
	snprintf(r.outcome, sizeof r.outcome, "ok");
	r.failures = 0;
	lastrun_fmt(&r, buf, sizeof buf);
	is_str(buf,
	       "{\"fireId\":1700000000000,\"outcome\":\"ok\",\"endMs\":1700000001234,\"instance\":\"10.0.0.1@-@42\","
	       "\"attempt\":2,\"consecutiveFailures\":0,\"lastSuccessMs\":1699999000000,\"source\":\"NORMAL_TRIGGER\"}",
	       "an ok record: the text it always was");
	is_int(lastrun_parse(buf, strlen(buf), &b), 1, "  it reads back");
	ok(!b.error && !b.tail, "  with no error and no tail");
	const char *old = "{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h@-@1\",\"attempt\":1,\"consecutiveFailures\":4}";
	is_int(lastrun_parse(old, strlen(old), &b), 1, "a record of the first version (no lastSuccessMs, source) reads");

	/* the cuts */
	char cause[LASTRUN_ERROR_MAX + 1], err[600];
	is_int((int)lastrun_cause(cause, sizeof cause, "failed", 3, 0, ""), 15, "cause: failed (exit 3)");
	is_str(cause, "failed (exit 3)", "  as the history says it");
	lastrun_cause(cause, sizeof cause, "timeout", 0, 15, "ran past 1 s");
	is_str(cause, "timeout (signal 15): ran past 1 s", "  timeout (signal 15): ran past 1 s");
	lastrun_cause(cause, sizeof cause, "crashed", 0, 9, NULL);
	is_str(cause, "crashed (signal 9)", "  crashed (signal 9)");
	err[0] = 'a';
	for (int i = 0; i < 150; i++) memcpy(err + 1 + 2 * i, "\xc3\xa9", 2);
	err[301] = 0;
	size_t cn = lastrun_cause(cause, sizeof cause, "error", 0, 0, err);
	ok(cn <= LASTRUN_ERROR_MAX && cn >= LASTRUN_ERROR_MAX - 1 && valid_utf8(cause), "  a long one cut to %zu bytes, at a character", cn);
	is_int((int)lastrun_error_len(err, 301), 255, "error_len: 301 bytes of 'a' and e-acute cut to 255, not inside one");

	char out[4096];
	for (int i = 0; i < 20; i++) snprintf(out + 100 * i, 101, "%099d\n", i);
	is_int((int)lastrun_tail_start(out, 2000), 1000, "tail of 20 lines of 100 bytes: from the first line within 1,024");
	for (int i = 0; i < 32; i++) snprintf(out + 64 * i, 65, "%063d\n", i);
	is_int((int)lastrun_tail_start(out, 2048), 1024, "  a line that starts exactly 1,024 bytes before the end: kept");
	out[0] = 'x';
	for (int i = 0; i < 1000; i++) memcpy(out + 1 + 2 * i, "\xc3\xa9", 2);
	out[2001] = 'z', out[2002] = 0;
	size_t from = lastrun_tail_start(out, 2002);
	ok(from == 979 && valid_utf8(out + from), "  one long line: from a character (%zu), valid UTF-8", from);
	memset(out, 'x', 2000), out[2000] = '\n', out[2001] = 0;
	is_int((int)lastrun_tail_start(out, 2001), 2001 - 1024, "  a line ending at the end: its last 1,024 bytes");
	is_int((int)lastrun_tail_start(out, 1024), 0, "  1,024 bytes or fewer: all of it");

	/* the worst record: the longest fields, every byte of error and tail escaped as \u00XX */
	char e6[LASTRUN_ERROR_MAX + 1], t6[LASTRUN_TAIL_MAX + 1];
	memset(e6, 1, LASTRUN_ERROR_MAX), e6[LASTRUN_ERROR_MAX] = 0;
	memset(t6, 2, LASTRUN_TAIL_MAX), t6[LASTRUN_TAIL_MAX] = 0;
	memset(r.instance, '9', sizeof r.instance - 1), r.instance[sizeof r.instance - 1] = 0;
	memset(r.source, 'S', sizeof r.source - 1), r.source[sizeof r.source - 1] = 0;
	snprintf(r.outcome, sizeof r.outcome, "cancelled");
	r.fire_id = r.end_ms = r.ok_ms = UINT64_MAX, r.attempt = r.failures = UINT32_MAX;
	r.error = e6, r.tail = t6;
	n = lastrun_fmt(&r, buf, sizeof buf);
	ok(n > 0, "the worst record fits LASTRUN_MAX (%d of %u bytes)", n, LASTRUN_MAX);
	is_int(lastrun_parse(buf, (size_t)n, &b), 1, "  and reads back");
	ok(b.error && b.tail && !strcmp(b.error, e6) && !strcmp(b.tail, t6) && b.fire_id == UINT64_MAX, "  the same");
	lastrun_clear(&b);

	/* garbage */
	static const char *const bad[] = {
		"{", "}", "{}", "null", "[]", "\"x\"",
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1}",   /* no count */
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1",
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}x",
		"{\"fireId\":-1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}",
		"{\"fireId\":18446744073709551616,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}",
		"{\"fireId\":1.5,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}",
		"{\"fireId\":1,\"outcome\":3,\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}",
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1,\"tail\":\"\\ud800\"}",
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1,\"tail\":\"a\\u0000b\"}",
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1,\"tail\":\"a\nb\"}",
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1,\"tail\":\"\xc3\"}",
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1,\"tail\":\"\\x\"}",
		"{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1,\"error\":7}",
		"{\"fireId\":1,\"outcome\":\"a very long outcome\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}",
		"{\"fireId\":1 \"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}",
		"{\"x\": {\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}}",
	};
	int refused = 0;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int got = lastrun_parse(bad[i], strlen(bad[i]), &b);
		if (got != -1) diag("taken: %s", bad[i]);
		refused += got == -1 && !b.error && !b.tail;
	}
	is_int(refused, (int)(sizeof bad / sizeof bad[0]), "garbage: all %zu refused", sizeof bad / sizeof bad[0]);
	const char nul[] = "{\"fireId\":1,\"outcome\":\"failed\",\"endMs\":2,\"instance\":\"h\",\"attempt\":1,\"consecutiveFailures\":1}\0x";
	is_int(lastrun_parse(nul, sizeof nul - 1, &b), -1, "  a NUL and more after the record: refused");
	char *huge = malloc(LASTRUN_MAX + 2);
	memset(huge, ' ', LASTRUN_MAX + 1);
	memcpy(huge, old, strlen(old));
	is_int(lastrun_parse(huge, LASTRUN_MAX + 1, &b), -1, "  more than LASTRUN_MAX bytes: refused");
	free(huge);
	is_int(lastrun_parse("", 0, &b), 0, "  an empty node: never ran");
	const char *later = "{\"source\":\"FAILOVER\",\"future\":{\"a\":[1,-2.5e3,true,null,{}]},\"consecutiveFailures\":2,"
	                    "\"attempt\":1,\"instance\":\"h\\u0040-@1\",\"endMs\":2,\"outcome\":\"failed\",\"fireId\":1,"
	                    "\"error\":null,\"tail\":\"\\ud83d\\ude42\"}";
	is_int(lastrun_parse(later, strlen(later), &b), 1, "keys in any order, a later version's key skipped: read");
	ok(!strcmp(b.instance, "h@-@1") && !b.error && b.tail && !strcmp(b.tail, "\xf0\x9f\x99\x82") && b.failures == 2,
	   "  escapes decoded (\\u0040, a surrogate pair as UTF-8), error null");
	lastrun_clear(&b);
}

/* ejobctl ARGS... as JSON (exit status in *rc) */
static json_t *ctl_json(int *rc, const char *a, const char *b)
{
	char *o = NULL, *e = NULL;
	*rc = tzkup_ctl(&u, &o, &e, a, b ? b : "--json", b ? "--json" : NULL, NULL);
	json_t *d = json_loads(o ? o : "", 0, NULL);
	free(o), free(e), o = e = NULL;
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

static int has_warning(json_t *doc, const char *want)
{
	json_t *v = json_object_get(doc, "warnings"), *w;
	size_t i;
	json_array_foreach(v, i, w)
		if (strstr(json_string_value(w), want)) return 1;
	return 0;
}

static int node_has(const char *path, const char *needle)
{
	static char data[65536];
	int len = sizeof data - 1;
	if (zoo_get(u.zh, path, 0, data, &len, NULL) != ZOK || len < 0) return 0;
	data[len] = 0;
	return strstr(data, needle) != NULL;
}

struct has { const char *path, *needle; };
static int node_has_cb(void *arg)
{
	const struct has *h = arg;
	int yes = node_has(h->path, h->needle);
	if (!yes) usleep(50000);
	return yes;
}

/* job's instances/ holds only id (a stopped instance's node may outlive it until its session
 * expires: a fire sharded then gives it items that never run) */
struct only { const char *job, *id; };
static int only_instance(void *arg)
{
	const struct only *o = arg;
	struct String_vector v;
	int yes = 0;
	if (zoo_get_children(u.zh, tzkup_path(&u, o->job, "instances"), 0, &v) == ZOK) {
		yes = v.count == 1 && !strcmp(v.data[0], o->id);
		deallocate_String_vector(&v);
	}
	if (!yes) usleep(50000);
	return yes;
}

/* jobs --json says every item of big failing, each with the quotes as its tail */
static int big_all_failing(void *arg)
{
	const char *want = arg;
	int rc;
	json_t *d = ctl_json(&rc, "jobs", NULL);
	json_t *f = json_object_get(job_of(d, "big"), "failing"), *e;
	size_t i, good = 0;
	json_array_foreach(f, i, e) {
		const char *t = json_string_value(json_object_get(e, "tail"));
		good += t && !strcmp(t, want);
	}
	json_decref(d);
	if (good != BIG) usleep(200000);
	return good == BIG;
}

int main(void)
{
	tlib_init(120);
	units();

	tzkup_start(&u, 500, "t111", 4000);
	char jobs[2048];
	snprintf(jobs, sizeof jobs,
	         "  j:\n    type: script\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"/bin/sh -c 'echo done; exit 5'\"}\n"
	         "  big:\n    type: native\n    shardingTotalCount: %d\n"
	         "    props: {native.library: %s, native.symbol: fail_quotes_item}\n",
	         BIG, BUILT("t/native/libfail.so"));
	struct tsup a;
	tzkup_config(&u, &a, "a", "workers: 4", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	int rc;
	char *o = NULL, *e = NULL;
	char lp[256];               /* tzkup_path's buffers are reused in turn */
	snprintf(lp, sizeof lp, "%s", tzkup_path(&u, "j", "sharding/0/last"));
	ok(tzkup_wait_registered(&u, "j", a.id, 0, 15000), "a runs j (one-off, no cron)");
	is_int(tzkup_ctl(&u, &o, &e, "trigger", "j", NULL), 0, "ejobctl trigger j");
	struct has h = { lp, "\"consecutiveFailures\":1," };
	ok(tlib_wait_for(node_has_cb, &h, 15000), "  its item fails: a record");

	/* ---- an operator's garbage in sharding/0/last ---- */
	const char *garbage = "{\"fireId\":1,\"outcome\":\"failed\",\"tail\":\"\xff\xfe\",\"consecutiveFailures\":7,\"endMs\":";
	is_int(zoo_set(u.zh, lp, garbage, (int)strlen(garbage), -1), ZOK, "garbage written over it");
	char warn[256];
	snprintf(warn, sizeof warn, "/t111/j/sharding/0/last: not a last-execution record (left out)");
	json_t *d = ctl_json(&rc, "jobs", NULL);
	is_int(rc, 0, "ejobctl jobs --json: exit 0");
	ok(has_warning(d, warn), "  a warning names the node");
	json_t *jj = job_of(d, "j");
	ok(json_is_array(json_object_get(jj, "failing")) && !json_array_size(json_object_get(jj, "failing")),
	   "  j's failing [] (the garbage left out)");
	is_str(json_string_value(json_object_get(jj, "health")), "OK", "  health OK");
	json_decref(d);
	d = ctl_json(&rc, "status", "j");
	is_int(rc, 0, "ejobctl status j --json: exit 0");
	ok(json_is_null(json_object_get(json_array_get(json_object_get(d, "items"), 0), "last")), "  items.0.last null");
	ok(has_warning(d, warn), "  the warning");
	json_decref(d);
	rc = tzkup_ctl(&u, &o, &e, "status", "j", NULL);
	ok(rc == 0 && strstr(e, warn) && !strstr(o, "failing"), "ejobctl status j: exit 0, the warning on stderr");

	struct tserve sv;
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, NULL };
	tserve_start(&sv, "serve", args);
	char *body = NULL;
	is_int((int)tserve_http(&sv, "GET", "/api/v1/jobs", NULL, NULL, NULL, &body), 200, "serve: GET /api/v1/jobs 200");
	d = json_loads(body ? body : "", 0, NULL);
	ok(d && has_warning(d, warn), "  the warning there too");
	json_decref(d), free(body), body = NULL;
	is_int((int)tserve_http(&sv, "GET", "/api/v1/jobs/j", NULL, NULL, NULL, &body), 200, "  GET /api/v1/jobs/j 200");
	free(body), body = NULL;

	/* a supervisor that reads it (a new instance: the item's record is read when it becomes
	 * ours) counts from 0, and writes its record over it */
	int st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "a stops");
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_registered(&u, "j", a.id, 0, 15000), "a again, a new instance");
	struct only oj = { "j", a.id }, ob = { "big", a.id };
	ok(tlib_wait_for(only_instance, &oj, 15000) && tlib_wait_for(only_instance, &ob, 15000),
	   "  the only instance of j and big");
	is_int(tzkup_ctl(&u, &o, &e, "trigger", "j", NULL), 0, "ejobctl trigger j");
	if (!ok(tlib_wait_for(node_has_cb, &h, 15000), "its record replaces the garbage: 1 failure in a row (not 8)"))
		diag("%s", tzkup_data(&u, lp));
	ok(node_has(lp, "\"error\":\"failed (exit 5)\",\"tail\":\"done\\n\"}"), "  with its error and tail");
	ok(tsup_alive(a.pid), "  a is alive");
	d = ctl_json(&rc, "jobs", NULL);
	ok(!has_warning(d, warn), "  no warning now");
	is_int((int)json_array_size(json_object_get(job_of(d, "j"), "failing")), 1, "  j failing [item 0]");
	json_decref(d);

	/* ---- 600 items failing at once, 1.5 MB of records ---- */
	int64_t session = tzkup_session(&u, "big", a.id);
	rc = tzkup_ctl(&u, &o, &e, "trigger", "big", NULL);
	is_int(rc, 0, "ejobctl trigger big (%d native items failing at once, 1 KB of output each)", BIG);
	char quotes[1022];
	for (int i = 0; i < 1020; i++) quotes[i] = i % 2 ? '\\' : '"';
	quotes[1020] = '\n', quotes[1021] = 0;
	if (!ok(tlib_wait_for(big_all_failing, quotes, 30000), "every one of their records written, each with its tail")) {
		diag("item 0 owner %s, item %d owner %s", tzkup_data(&u, tzkup_path(&u, "big", "sharding/0/instance")), BIG - 1,
		     tzkup_data(&u, tzkup_path(&u, "big", "sharding/%d/instance", BIG - 1)));
		struct String_vector v;
		if (zoo_get_children(u.zh, tzkup_path(&u, "big", "instances"), 0, &v) == ZOK)
			for (int i = 0; i < v.count; i++) diag("instance %s", v.data[i]);
	}
	is_int((int)(tzkup_session(&u, "big", a.id) == session), 1, "  a kept its session");
	ok(node_has(tzkup_path(&u, "big", "sharding/%d/last", BIG - 1), "\"error\":\"failed (exit 3)\""), "  (item %d's node)",
	   BIG - 1);
	is_int((int)tserve_http(&sv, "GET", "/api/v1/jobs", NULL, NULL, NULL, &body), 200, "serve: GET /api/v1/jobs 200");
	free(body);

	free(o), free(e);
	tserve_stop(&sv);
	st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "a stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
