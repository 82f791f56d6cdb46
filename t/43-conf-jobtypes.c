/* t/43-conf-jobtypes.c: the http and dataflow job types' props in a configuration file:
 * ElasticJob's keys and defaults, ejob's own, and every way they can be wrong, with the exact
 * message (split from t/35). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "t/lib/tconf.h"
#include "t/tap.h"

#define HEAD "regCenter:\n  serverLists: 127.0.0.1:2181\n  namespace: ns\n"

static conf_t *parse(const char *yaml, conf_diags_t **d)
{
	return tconf_parse(yaml, NULL, d);
}

/* The file gives exactly these errors (full text), in this order. */
static int errors_are(const char *name, const char *yaml, const conf_opts_t *o, ...)
{
	va_list ap;
	va_start(ap, o);
	int good = tconf_verrors(yaml, o, ap);
	va_end(ap);
	return ok(good, "%s", name);
}

#define ERRORS(name, yaml, ...) errors_are(name, yaml, NULL, __VA_ARGS__, (const char *)NULL)

/* type http: ElasticJob's HttpJobProperties, their defaults, and every way they can be wrong */
static void test_http(void)
{
	conf_diags_t *d;
	const char *y = HEAD "jobs:\n"
		"  ping:\n    type: http\n    cron: '0 * * * * ?'\n    shardingTotalCount: 2\n"
		"    props:\n      http.uri: 'http://127.0.0.1:8080/ping?x=1'\n      http.method: GET\n"
		"  push:\n    type: http\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
		"    props:\n      http.uri: 'HTTPS://[::1]:8443/push'\n      http.method: POST\n"
		"      http.data: 'a=1'\n      http.content.type: application/json\n"
		"      http.connect.timeout.milliseconds: '0'\n      http.read.timeout.milliseconds: '250'\n"
		"      http.ca.file: /etc/ejob/ca.pem\n";
	conf_t *c = parse(y, &d);
	if (ok(c != NULL && c->n_jobs == 2, "two http jobs load")) {
		const conf_job_t *g = &c->jobs[0], *p = &c->jobs[1];
		ok(g->type == CONF_JOB_HTTP && !strcmp(conf_job_type_name(g->type), "http"), "  type http");
		is_str(g->http.uri, "http://127.0.0.1:8080/ping?x=1", "  http.uri");
		is_str(g->http.method, "GET", "  http.method");
		ok(!g->http.data && !g->http.content_type && !g->http.ca_file, "  no data, content type or CA file");
		ok(g->http.connect_timeout_ms == 3000 && g->http.read_timeout_ms == 5000,
		   "  ElasticJob's defaults: connect 3000 ms, read 5000 ms");
		ok(!strcmp(p->http.method, "POST") && !strcmp(p->http.data, "a=1") &&
		   !strcmp(p->http.content_type, "application/json") && !strcmp(p->http.ca_file, "/etc/ejob/ca.pem"),
		   "  data, content type, CA file");
		ok(p->http.connect_timeout_ms == 0 && p->http.read_timeout_ms == 250, "  timeouts as written (0: no limit)");
		size_t len;
		char *n = conf_node_emit(p, &len);
		conf_job_t *back = n ? conf_node_parse(n, len, "/ns/push/config", NULL) : NULL;
		ok(back && conf_job_equal(p, back) && back->type == CONF_JOB_HTTP && back->http.read_timeout_ms == 250,
		   "  its config node reads back as the same http job");
		ok(n && strstr(n, "  ejob.type: http\n"), "  with props ejob.type: http");
		conf_job_free(back);
		free(n);
	}
	conf_free(c);
	conf_diags_free(d);

#define HJOB "jobs:\n  h:\n    type: http\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	ERRORS("an http job without props",
	       HEAD HJOB,
	       "t.yaml:5:3: jobs.h.props.http.uri: an http job needs the URL to request, http://HOST[:PORT]/PATH or "
	       "https://...; the key is missing",
	       "t.yaml:5:3: jobs.h.props.http.method: an http job needs its request method, as ElasticJob does: GET, "
	       "POST, PUT, DELETE, HEAD, OPTIONS or TRACE; the key is missing");
	ERRORS("every http prop wrong",
	       HEAD HJOB "    props:\n      http.uri: 'ftp://h/x'\n      http.method: post\n"
	       "      http.content.type: \"a\\nb\"\n      http.connect.timeout.milliseconds: '-1'\n"
	       "      http.read.timeout.milliseconds: 5s\n      http.ca.file: ''\n",
	       "t.yaml:10:7: jobs.h.props.http.uri: must start with http:// or https:// (got \"ftp://h/x\")",
	       "t.yaml:11:7: jobs.h.props.http.method: must be written in upper case, 'POST' (got \"post\"): "
	       "ElasticJob's HttpURLConnection refuses any other spelling",
	       "t.yaml:12:7: jobs.h.props.http.content.type: must be one line without control characters, a header "
	       "value such as application/json (got \"a\\nb\")",
	       "t.yaml:13:7: jobs.h.props.http.connect.timeout.milliseconds: must be an integer 0-2147483647, in "
	       "milliseconds (0: no limit) (got \"-1\")",
	       "t.yaml:14:7: jobs.h.props.http.read.timeout.milliseconds: must be an integer 0-2147483647, in "
	       "milliseconds (0: no limit) (got \"5s\")",
	       "t.yaml:15:7: jobs.h.props.http.ca.file: must be the path of a file of PEM CA certificates for https; "
	       "leave the key out to use the system's");
	ERRORS("uris that make no request",
	       HEAD "jobs:\n"
	       "  a:\n    type: http\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    props: {http.uri: 'http:///x', http.method: GET}\n"
	       "  b:\n    type: http\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    props: {http.uri: 'http://h:70000/', http.method: PATCH}\n"
	       "  c:\n    type: http\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    props: {http.uri: 'http://h/a b', http.method: GET, http.read.timeout.milliseconds: '2147483648'}\n",
	       "t.yaml:9:13: jobs.a.props.http.uri: has no host: write it as http://HOST[:PORT]/PATH (got \"http:///x\")",
	       "t.yaml:14:13: jobs.b.props.http.uri: has a port that is not a number 1-65535 (got \"http://h:70000/\")",
	       "t.yaml:14:42: jobs.b.props.http.method: must be GET, POST, PUT, DELETE, HEAD, OPTIONS or TRACE, the "
	       "methods ElasticJob's HttpURLConnection sends (got \"PATCH\")",
	       "t.yaml:19:13: jobs.c.props.http.uri: must not hold spaces or control characters: percent-encode them "
	       "(a space is %20) (got \"http://h/a b\")",
	       "t.yaml:19:57: jobs.c.props.http.read.timeout.milliseconds: must be an integer 0-2147483647, in "
	       "milliseconds (0: no limit) (got \"2147483648\")");
	char big[4096];
	int bl = snprintf(big, sizeof big, HEAD HJOB "    props:\n      http.uri: 'http://h/'\n      http.method: POST\n"
	                  "      http.data: '");
	memset(big + bl, 'x', 3070);
	snprintf(big + bl + 3070, sizeof big - (size_t)bl - 3070, "'\n");
	ERRORS("a request too big for an item's frame", big,
	       "t.yaml:12:7: jobs.h.props.http.data: is 3070 bytes, and http.uri, http.data, http.content.type and "
	       "http.ca.file together are 3079: at most 3072 fit in an item's frame (a body that large belongs in a file "
	       "the endpoint reads)");
	ERRORS("an empty uri and method",
	       HEAD HJOB "    props: {http.uri: '', http.method: ''}\n",
	       "t.yaml:9:13: jobs.h.props.http.uri: an http job needs the URL to request, http://HOST[:PORT]/PATH or "
	       "https://... (got \"\")",
	       "t.yaml:9:27: jobs.h.props.http.method: an http job needs its request method, as ElasticJob does: GET, "
	       "POST, PUT, DELETE, HEAD, OPTIONS or TRACE (got \"\")");
#undef HJOB

	/* http.data with a method that sends no body: ElasticJob drops it; ejob says so */
	c = parse(HEAD "jobs:\n  g:\n    type: http\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	          "    props: {http.uri: 'http://h/', http.method: GET, http.data: 'x=1'}\n"
	          "  p:\n    type: http\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	          "    props: {http.uri: 'http://h/', http.method: DELETE, http.data: 'x=1'}\n", &d);
	conf_unacted_t u[CONF_UNACTED_MAX];
	if (ok(c && c->n_jobs == 2, "http jobs with data")) {
		size_t n = conf_job_unacted(&c->jobs[0], u);
		ok(n == 1 && !strcmp(u[0].key, "props.http.data"), "GET with http.data: a warning about props.http.data");
		is_str(n ? u[0].text : "", "is not sent: a GET request has no body (ElasticJob sends http.data only with "
		       "POST, PUT and DELETE, and so does ejob); put it in http.uri's query string", "  saying why");
		is_int((int)conf_job_unacted(&c->jobs[1], u), 0, "DELETE sends it: no warning");
	}
	conf_free(c);
	conf_diags_free(d);
}

/* type dataflow: ElasticJob's streaming.process, ejob's dataflow.batch.bytes, native or external */
static void test_dataflow(void)
{
	conf_diags_t *d = NULL;
	const char *y = HEAD "jobs:\n"
		"  nat:\n    type: dataflow\n    cron: '0 * * * * ?'\n    shardingTotalCount: 2\n"
		"    props:\n      native.library: /opt/libd.so\n      native.fetch: d_fetch\n"
		"      native.process: d_process\n      streaming.process: 'TRUE'\n"
		"  ext:\n    type: dataflow\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
		"    props:\n      dataflow.batch.bytes: '4096'\n";
	conf_t *c = parse(y, &d);
	if (ok(c != NULL && c->n_jobs == 2, "two dataflow jobs load")) {
		const conf_job_t *n = &c->jobs[0], *e = &c->jobs[1];
		ok(n->type == CONF_JOB_DATAFLOW && !strcmp(conf_job_type_name(n->type), "dataflow"), "  type dataflow");
		ok(n->dataflow.streaming && n->dataflow.batch_bytes == 1048576u && !strcmp(n->native.fetch, "d_fetch") &&
		   !strcmp(n->native.process, "d_process"), "  native: its functions, streaming (TRUE, as Java reads it), 1 MiB");
		ok(!e->dataflow.streaming && e->dataflow.batch_bytes == 4096 && !e->native.fetch && !e->native.library,
		   "  external: ElasticJob's default streaming.process false, the bound as written");
		size_t len;
		char *txt = conf_node_emit(n, &len);
		conf_job_t *back = txt ? conf_node_parse(txt, len, "/ns/nat/config", NULL) : NULL;
		ok(back && conf_job_equal(n, back) && back->type == CONF_JOB_DATAFLOW && back->dataflow.streaming &&
		   back->native.fetch && !strcmp(back->native.fetch, "d_fetch"), "  its config node reads back as the same job");
		ok(txt && strstr(txt, "  ejob.type: dataflow\n"), "  with props ejob.type: dataflow");
		conf_job_free(back);
		free(txt);
	}
	conf_free(c);
	conf_diags_free(d);
#define DJOB "jobs:\n  d:\n    type: dataflow\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	ERRORS("every dataflow prop wrong",
	       HEAD DJOB "    props:\n      streaming.process: 'yes'\n      dataflow.batch.bytes: '67108865'\n"
	       "      native.symbol: f\n      native.fetch: '1x'\n",
	       "t.yaml:9:5: jobs.d.props.native.library: missing: a native dataflow job needs the path of its shared "
	       "object (or leave out native.fetch and native.process: then external workers serve it)",
	       "t.yaml:9:5: jobs.d.props.native.process: missing: a native dataflow job names its C functions in "
	       "native.fetch and native.process (see docs/worker.md)",
	       "t.yaml:10:7: jobs.d.props.streaming.process: must be true or false (ElasticJob would read anything but "
	       "true as false)",
	       "t.yaml:11:7: jobs.d.props.dataflow.batch.bytes: must be an integer 1-67108864, the biggest batch in bytes "
	       "a fetch may hand back (got '67108865')",
	       "t.yaml:12:7: jobs.d.props.native.symbol: a dataflow job calls native.fetch and native.process, not "
	       "native.symbol: remove it",
	       "t.yaml:13:7: jobs.d.props.native.fetch: must be a C function's name, an identifier (got '1x')");
}

int main(void)
{
	test_http();
	test_dataflow();
	return done_testing();
}
