/* t/15-conf-node-take.c: ElasticJob's config node taken with the config in force
 * (conf_node_take): ElasticJob's HTTP job as its console writes it, a value ElasticJob fails on
 * kept key by key from the config in force, ElasticJob's DATAFLOW node refused with the way out
 * and ejob's own taken. The node's parse and writer: t/36. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "conf/conf_int.h"   /* conf_job_prop */
#include "t/tap.h"

/* ElasticJob's HTTP job, as its console writes the node (no ejob.type; the job's root node says
 * HTTP): taken as ejob's http job with its props, ejob's own keys at their defaults. */
static const char HTTP_YAML[] =
	"cron: 0/5 * * * * ?\n"
	"description: ''\n"
	"disabled: false\n"
	"failover: false\n"
	"jobName: http_job\n"
	"jobParameter: ''\n"
	"maxTimeDiffSeconds: -1\n"
	"misfire: true\n"
	"monitorExecution: true\n"
	"overwrite: false\n"
	"props:\n"
	"  http.method: POST\n"
	"  http.data: source=ejob\n"
	"  http.uri: http://127.0.0.1:8080/run\n"
	"  http.read.timeout.milliseconds: '9000'\n"
	"reconcileIntervalMinutes: 10\n"
	"shardingItemParameters: ''\n"
	"shardingTotalCount: 3\n"
	"staticSharding: false\n";

static void test_http_take(void)
{
	char why[512];
	conf_job_t *j = conf_node_take(HTTP_YAML, strlen(HTTP_YAML), "/ns/http_job/config", "http_job", "HTTP", NULL, why,
	                               sizeof why, NULL);
	if (ok(j != NULL, "ElasticJob's HTTP job node (root node HTTP) is taken")) {
		ok(j->type == CONF_JOB_HTTP, "  as an http job");
		ok(!strcmp(j->http.uri, "http://127.0.0.1:8080/run") && !strcmp(j->http.method, "POST") &&
		   !strcmp(j->http.data, "source=ejob") && !j->http.content_type,
		   "  with its uri, method and data");
		ok(j->http.connect_timeout_ms == 3000 && j->http.read_timeout_ms == 9000,
		   "  its read timeout, and ElasticJob's default connect timeout");
		ok(j->timeout_seconds == 0 && j->max_retries == 0, "  ejob's own keys at their defaults");
		conf_job_free(j);
	} else {
		diag("%s", why);
	}
	j = conf_node_take(HTTP_YAML, strlen(HTTP_YAML), "/ns/http_job/config", "http_job", "", NULL, why, sizeof why, NULL);
	ok(!j, "the same node without a root type is not taken");
	is_str(why, "props has no ejob.type (script, native, external, http or dataflow), and the job's root node names no type",
	       "  why");
	conf_job_free(j);

	char bad[sizeof HTTP_YAML];
	snprintf(bad, sizeof bad, "%s", HTTP_YAML);
	char *u = strstr(bad, "  http.uri:");
	memcpy(u, "  xttp", 6);
	j = conf_node_take(bad, strlen(bad), "/ns/http_job/config", "http_job", "HTTP", NULL, why, sizeof why, NULL);
	ok(!j, "an HTTP job node without http.uri is refused");
	is_str(why, "it is ElasticJob's HTTP job (the job's root node), and props http.uri: an http job needs the URL "
	       "to request, http://HOST[:PORT]/PATH or https://...; the key is missing", "  why");
	conf_job_free(j);

	static const char typed[] = "cron: 0 * * * * ?\njobName: h\nshardingTotalCount: 1\nprops:\n"
	                            "  ejob.type: http\n  http.uri: http://h/\n  http.method: Get\n";
	j = conf_node_take(typed, strlen(typed), "/ns/h/config", "h", "HTTP", NULL, why, sizeof why, NULL);
	ok(!j, "an ejob http node with a bad method is refused");
	is_str(why, "/ns/h/config:7:3: props.http.method: must be written in upper case, 'GET' (got \"Get\"): "
	       "ElasticJob's HttpURLConnection refuses any other spelling; and no config in force has a value of "
	       "props.http.method to keep", "  with the parser's message, when no config is in force");
	conf_job_free(j);
	/* with an http job in force, the method in force is kept and the rest taken */
	static const char was[] = "cron: 0 * * * * ?\njobName: h\nshardingTotalCount: 1\nprops:\n"
	                          "  ejob.type: http\n  http.uri: http://h/\n  http.method: POST\n";
	conf_job_t *f = conf_node_take(was, strlen(was), "/ns/h/config", "h", "HTTP", NULL, why, sizeof why, NULL);
	j = f ? conf_node_take(typed, strlen(typed), "/ns/h/config", "h", "HTTP", f, why, sizeof why, NULL) : NULL;
	ok(j && !strcmp(j->http.method, "POST") && !strcmp(conf_job_prop(j, "http.method"), "POST") &&
	   !strcmp(j->http.uri, "http://h/"), "with an http job in force: its method is kept");
	conf_job_free(j);
	conf_job_free(f);
}

/* A node taken key by key, as ElasticJob takes it (issue 24): what ElasticJob fails on only when it
 * uses a key keeps that key's value in force; the rest of the node is taken. */
static void test_take_key_by_key(void)
{
	char why[600];
	static const char in_force[] = "cron: 0/3 * * * * ?\njobName: k\nshardingTotalCount: 4\n"
	                               "shardingItemParameters: 0=a,1=b,2=c,3=d\njobShardingStrategyType: ROUND_ROBIN\n"
	                               "props:\n  ejob.type: script\n  script.command.line: /bin/true\n";
	conf_job_t *f = conf_node_take(in_force, strlen(in_force), "/ns/k/config", "k", "", NULL, why, sizeof why, NULL);
	if (!ok(f != NULL, "the config in force")) {
		diag("%s", why);
		return;
	}
	/* an operator changes the cron in a node whose strategy ejob did not know (issue 24: one job,
	 * two schedules) */
	static const char a[] = "cron: 0/7 * * * * ?\njobName: k\nshardingTotalCount: 4\njobShardingStrategyType: "
	                        "RR\nprops:\n  ejob.type: script\n  script.command.line: /bin/true\n";
	conf_diags_t *d = NULL;
	conf_job_t *j = conf_node_take(a, strlen(a), "/ns/k/config", "k", "", f, why, sizeof why, &d);
	ok(j && !strcmp(j->cron, "0/7 * * * * ?") && j->cron_compiled && j->strategy.effective == CONF_STRATEGY_ROUND_ROBIN &&
	   !strcmp(j->strategy.type, "ROUND_ROBIN"),
	   "an unknown strategy: the strategy in force is kept, the new cron taken");
	ok(d && conf_diags_count(d) == 1 && conf_diags_get(d, 0)->level == CONF_DIAG_KEY, "  one error, of that key");
	conf_job_free(j);
	conf_diags_free(d);

	static const char b[] = "cron: 0/5 * * * * FOO\njobName: k\nshardingTotalCount: 2\nprops:\n  ejob.type: script\n"
	                        "  script.command.line: /bin/true\n";
	j = conf_node_take(b, strlen(b), "/ns/k/config", "k", "", f, why, sizeof why, NULL);
	ok(j && !strcmp(j->cron, "0/3 * * * * ?") && j->cron_compiled && j->sharding_total_count == 2 &&
	   j->strategy.effective == CONF_STRATEGY_AVG_ALLOCATION,
	   "a cron Quartz refuses: the cron in force is kept (ElasticJob's trigger stays), the item count taken");
	conf_job_free(j);

	/* ElasticJob-UI's edit of shardingTotalCount 4 -> 2 keeps the old parameters */
	static const char c[] = "cron: 0/3 * * * * ?\njobName: k\nshardingTotalCount: 2\n"
	                        "shardingItemParameters: 0=a,1=b,2=c,3=d\nprops:\n  ejob.type: script\n"
	                        "  script.command.line: /bin/true\n";
	j = conf_node_take(c, strlen(c), "/ns/k/config", "k", "", f, why, sizeof why, &d);
	ok(j && j->sharding_total_count == 2 && j->items.n_params == 2 && !strcmp(conf_job_item_param(j, 1), "b"),
	   "4 -> 2 items with the old parameters: taken, items 2 and 3's never read (as ElasticJob)");
	ok(d && conf_diags_count(d) == 2 && conf_diags_get(d, 0)->level == CONF_DIAG_WARN &&
	   conf_diags_get(d, 1)->level == CONF_DIAG_WARN, "  two warnings");
	conf_job_free(j);
	conf_diags_free(d);

	static const char e[] = "cron: 0/3 * * * * ?\njobName: k\nshardingTotalCount: 4\nshardingItemParameters: a\n"
	                        "props:\n  ejob.type: script\n";
	j = conf_node_take(e, strlen(e), "/ns/k/config", "k", "", f, why, sizeof why, NULL);
	ok(j && !strcmp(j->items.parameters, "0=a,1=b,2=c,3=d") && j->items.n_params == 4 &&
	   !strcmp(j->script_command_line, "/bin/true") && !strcmp(conf_job_prop(j, "script.command.line"), "/bin/true"),
	   "malformed parameters and no command line: both kept from the config in force");
	conf_job_free(j);

	/* ElasticJob's own SCRIPT node (no ejob.type) without its command line */
	static const char g[] = "cron: 0/9 * * * * ?\njobName: k\nshardingTotalCount: 4\n";
	j = conf_node_take(g, strlen(g), "/ns/k/config", "k", "SCRIPT", f, why, sizeof why, &d);
	ok(j && j->type == CONF_JOB_SCRIPT && !strcmp(j->script_command_line, "/bin/true") && !strcmp(j->cron, "0/9 * * * * ?"),
	   "ElasticJob's SCRIPT node without its command line: the command line in force kept, the cron taken");
	ok(d && conf_diags_count(d) == 1 && conf_diags_get(d, 0)->level == CONF_DIAG_KEY, "  with an error of it");
	conf_job_free(j);
	conf_diags_free(d);

	static const char h[] = "cron: 0/3 * * * * ?\njobName: k\nshardingTotalCount: 4\njobErrorHandlerType: DINGTALK\n"
	                        "props:\n  ejob.type: script\n  script.command.line: /bin/true\n";
	j = conf_node_take(h, strlen(h), "/ns/k/config", "k", "", f, why, sizeof why, NULL);
	conf_errh_t eh;
	ok(j && conf_job_errh(j, &eh, NULL, NULL) == 0 && eh.type == CONF_ERRH_LOG,
	   "DINGTALK without its webhook (ElasticJob fails only when it sends): taken, failed items logged");
	conf_job_free(j);

	/* nothing in force: a cron that cannot run refuses the node */
	j = conf_node_take(b, strlen(b), "/ns/k/config", "k", "", NULL, why, sizeof why, NULL);
	ok(!j, "a cron Quartz refuses, with no config in force: refused");
	is_str(why, "/ns/k/config:1:19: cron: day-of-week: 'FOO' is not a day name (SUN-SAT); and no config in force has "
	       "a value of cron to keep", "  saying why");
	conf_job_free(f);
}

/* ElasticJob's DATAFLOW node is a Java class's: refused with the way out; ejob's own is taken */
static void test_dataflow_take(void)
{
	static const char ej[] = "cron: 0/1 * * * * ?\njobName: df\nshardingTotalCount: 3\nprops:\n"
	                         "  streaming.process: 'true'\n";
	static const char ours[] = "cron: 0/1 * * * * ?\njobName: df\nshardingTotalCount: 3\nprops:\n"
	                           "  streaming.process: 'true'\n  ejob.type: dataflow\n";
	char why[600];
	conf_job_t *j = conf_node_take(ej, strlen(ej), "/ns/df/config", "df", "DATAFLOW", NULL, why, sizeof why, NULL);
	ok(!j, "ElasticJob's DATAFLOW job node (root node DATAFLOW, no ejob.type) is refused");
	is_str(why, "it is ElasticJob's DATAFLOW job (the job's root node): a Java class's fetchData and processData, "
	       "which ejob cannot run; run it with ElasticJob, or give the node props ejob.type: dataflow with "
	       "native.library, native.fetch and native.process (or none of them, for external workers)", "  why");
	conf_job_free(j);
	j = conf_node_take(ours, strlen(ours), "/ns/df/config", "df", "DATAFLOW", NULL, why, sizeof why, NULL);
	if (ok(j != NULL, "the same node with props ejob.type: dataflow is taken"))
		ok(j->type == CONF_JOB_DATAFLOW && j->dataflow.streaming && !j->native.library,
		   "  as an external dataflow job, streaming");
	else
		diag("%s", why);
	conf_job_free(j);
}

int main(void)
{
	test_http_take();
	test_take_key_by_key();
	test_dataflow_take();
	return done_testing();
}
