/* t/36-conf-node.c: ElasticJob's config node (/{namespace}/{job}/config): what ejob writes,
 * byte for byte; what ElasticJob writes (samples from its tests and a SnakeYAML dump), read
 * back; round trips; tolerance of unknown keys; errors for wrong types (what conf_node_take
 * makes of a node with the config in force: t/15). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "conf/conf_int.h"   /* conf_java_hash, conf_props_order */
#include "t/tap.h"

static conf_job_t *node(const char *yaml, conf_diags_t **d)
{
	return conf_node_parse(yaml, strlen(yaml), "/ns/job/config", d);
}

static void dump_diags(const conf_diags_t *d)
{
	for (size_t i = 0; i < conf_diags_count(d); i++) diag("%s", conf_diags_get(d, i)->text);
}

/* Parsing yaml and writing it again gives it back unchanged. */
static void same_after_round_trip(const char *name, const char *yaml)
{
	conf_diags_t *d;
	conf_job_t *j = node(yaml, &d);
	if (!ok(j != NULL, "%s: parses", name)) {
		dump_diags(d);
		conf_diags_free(d);
		return;
	}
	char *y = conf_node_emit(j, NULL);
	is_str(y, yaml, "%s: written back byte for byte", name);
	free(y);
	conf_job_free(j);
	conf_diags_free(d);
}

static void node_errors(const char *name, const char *yaml, const char *want)
{
	conf_diags_t *d;
	conf_job_t *j = node(yaml, &d);
	ok(j == NULL && conf_diags_count(d) == 1, "%s: one error", name);
	is_str(conf_diags_count(d) ? conf_diags_get(d, 0)->text : NULL, want, "%s: its text", name);
	if (conf_diags_count(d) != 1) dump_diags(d);
	conf_job_free(j);
	conf_diags_free(d);
}

/* A node ElasticJob loads and fails on only when it uses one key: taken, with one error of that
 * key (CONF_DIAG_KEY) and the key in kept.keys. */
static void node_kept(const char *name, const char *yaml, const char *key, const char *want)
{
	conf_diags_t *d;
	conf_job_t *j = node(yaml, &d);
	const conf_diag_t *g = conf_diags_count(d) == 1 ? conf_diags_get(d, 0) : NULL;
	ok(j && g && g->level == CONF_DIAG_KEY && j->kept.n == 1 && !strcmp(j->kept.keys[0], key),
	   "%s: taken, one error of %s alone", name, key);
	is_str(g ? g->text : NULL, want, "%s: its text", name);
	if (!g) dump_diags(d);
	conf_job_free(j);
	conf_diags_free(d);
}

/* A node with a value ElasticJob ignores or reads its own way: taken, with one warning. */
static conf_job_t *node_warns(const char *name, const char *yaml, const char *want)
{
	conf_diags_t *d;
	conf_job_t *j = node(yaml, &d);
	const conf_diag_t *g = conf_diags_count(d) == 1 ? conf_diags_get(d, 0) : NULL;
	ok(j && g && g->level == CONF_DIAG_WARN && j->kept.n == 0, "%s: taken, one warning", name);
	is_str(g ? g->text : NULL, want, "%s: its text", name);
	if (!g) dump_diags(d);
	conf_diags_free(d);
	return j;
}

/* ElasticJob 3.0.4, JobConfigurationPOJOTest.YAML: what YamlEngine.marshal writes */
static const char POJO_YAML[] =
	"cron: 0/1 * * * * ?\n"
	"description: Job description\n"
	"disabled: false\n"
	"failover: false\n"
	"jobErrorHandlerType: IGNORE\n"
	"jobExecutorServiceHandlerType: CPU\n"
	"jobName: test_job\n"
	"jobParameter: param\n"
	"jobShardingStrategyType: AVG_ALLOCATION\n"
	"maxTimeDiffSeconds: -1\n"
	"misfire: false\n"
	"monitorExecution: false\n"
	"overwrite: false\n"
	"props:\n"
	"  key: value\n"
	"reconcileIntervalMinutes: 0\n"
	"shardingItemParameters: 0=A,1=B,2=C\n"
	"shardingTotalCount: 3\n"
	"staticSharding: false\n";

/* JobConfigurationPOJOTest.YAML_WITH_NULL */
static const char POJO_NULL_YAML[] =
	"cron: 0/1 * * * * ?\n"
	"disabled: false\n"
	"failover: false\n"
	"jobName: test_job\n"
	"maxTimeDiffSeconds: -1\n"
	"misfire: false\n"
	"monitorExecution: false\n"
	"overwrite: false\n"
	"reconcileIntervalMinutes: 0\n"
	"shardingTotalCount: 3\n"
	"staticSharding: false\n";

/* elasticjob-lite-core LiteYamlConstants.JOB_YAML (hand-written, keys in any order, quoted) */
static const char LITE_YAML[] =
	"jobName: test_job\n"
	"cron: 0/1 * * * * ?\n"
	"shardingTotalCount: 3\n"
	"jobParameter: 'param'\n"
	"failover: true\n"
	"monitorExecution: true\n"
	"misfire: false\n"
	"maxTimeDiffSeconds: 1000\n"
	"reconcileIntervalMinutes: 15\n"
	"description: 'desc'\n"
	"disabled: true\n"
	"overwrite: true";

/* elasticjob-lite-lifecycle LifecycleYamlConstants: DATAFLOW_JOB_YAML and SCRIPT_JOB_YAML */
static const char DATAFLOW_YAML[] =
	"cron: 0/1 * * * * ?\n"
	"description: ''\n"
	"disabled: false\n"
	"failover: false\n"
	"jobName: test_job\n"
	"jobParameter: param\n"
	"maxTimeDiffSeconds: -1\n"
	"misfire: true\n"
	"monitorExecution: true\n"
	"overwrite: false\n"
	"props:\n"
	"  streaming.process: 'true'\n"
	"reconcileIntervalMinutes: 10\n"
	"shardingTotalCount: 3\n"
	"staticSharding: false\n";

static const char SCRIPT_YAML[] =
	"jobName: test_job\n"
	"cron: 0/1 * * * * ?\n"
	"shardingTotalCount: 3\n"
	"jobParameter: param\n"
	"monitorExecution: true\n"
	"failover: false\n"
	"misfire: true\n"
	"maxTimeDiffSeconds: -1\n"
	"reconcileIntervalMinutes: 10\n"
	"description: ''\n"
	"props:\n"
	"  script.command.line: echo\n"
	"disabled: false\n"
	"overwrite: false\n";

/* SnakeYAML's dump of a JobConfigurationPOJO with a tracing configuration, the way
 * ElasticJob's spring boot starter adds one (classes and fields as in elasticjob-tracing) */
static const char TRACING_YAML[] =
	"cron: 0/30 * * * * ?\n"
	"description: ''\n"
	"disabled: false\n"
	"failover: true\n"
	"jobExtraConfigurations:\n"
	"- !!org.apache.shardingsphere.elasticjob.tracing.yaml.YamlTracingConfiguration\n"
	"  tracingStorageConfiguration: !!org.apache.shardingsphere.elasticjob.tracing.rdb.yaml.YamlDataSourceConfiguration\n"
	"    dataSourceClassName: com.zaxxer.hikari.HikariDataSource\n"
	"    props:\n"
	"      driverClassName: org.h2.Driver\n"
	"      jdbcUrl: jdbc:h2:mem:job_event_storage\n"
	"      username: sa\n"
	"      password: ''\n"
	"      maximumPoolSize: 10\n"
	"  type: RDB\n"
	"jobName: traced\n"
	"jobParameter: ''\n"
	"maxTimeDiffSeconds: -1\n"
	"misfire: true\n"
	"monitorExecution: true\n"
	"overwrite: false\n"
	"props:\n"
	"  script.command.line: echo\n"
	"reconcileIntervalMinutes: 10\n"
	"shardingItemParameters: ''\n"
	"shardingTotalCount: 2\n"
	"staticSharding: false\n";

static void test_elasticjob_samples(void)
{
	conf_diags_t *d;
	conf_job_t *j = node(POJO_YAML, &d);
	if (ok(j != NULL, "JobConfigurationPOJOTest.YAML parses")) {
		is_str(j->name, "test_job", "jobName");
		is_int(j->type, CONF_JOB_NONE, "no ejob.type: a job ElasticJob wrote");
		is_str(j->cron, "0/1 * * * * ?", "cron");
		is_int(j->sharding_total_count, 3, "shardingTotalCount");
		is_str(conf_job_item_param(j, 2), "C", "item 2 is C");
		is_str(j->job_parameter, "param", "jobParameter");
		ok(!j->monitor_execution && !j->failover && !j->misfire, "the three booleans");
		is_int(j->reconcile_interval_minutes, 0, "reconcileIntervalMinutes 0");
		is_str(j->executor.type, "CPU", "executor");
		is_str(j->error_handler_type, "IGNORE", "error handler");
		is_str(j->description, "Job description", "description");
		ok(j->n_props == 1 && !strcmp(j->props[0].key, "key") && !strcmp(j->props[0].value, "value"),
		   "props key: value");
	}
	conf_job_free(j);
	conf_diags_free(d);
	same_after_round_trip("JobConfigurationPOJOTest.YAML (assertMarshal's expected output)", POJO_YAML);

	j = node(POJO_NULL_YAML, &d);
	if (ok(j != NULL, "YAML_WITH_NULL parses")) {
		is_str(j->items.parameters, "", "absent shardingItemParameters: ElasticJob's \"\"");
		is_str(j->job_parameter, "", "absent jobParameter: \"\"");
		is_str(j->description, "", "absent description: \"\"");
		ok(j->strategy.type == NULL && j->executor.type == NULL &&
		   j->error_handler_type == NULL && j->label == NULL && j->time_zone == NULL,
		   "absent optional strings are NULL");
		is_int(j->n_props, 0, "no props");
	}
	conf_job_free(j);
	conf_diags_free(d);

	j = node(LITE_YAML, &d);
	if (ok(j != NULL, "LiteYamlConstants.JOB_YAML parses")) {
		is_str(j->job_parameter, "param", "quoted 'param'");
		ok(j->failover && j->monitor_execution && !j->misfire && j->disabled && j->overwrite,
		   "booleans");
		is_int(j->max_time_diff_seconds, 1000, "maxTimeDiffSeconds");
		is_int(j->reconcile_interval_minutes, 15, "reconcileIntervalMinutes");
		is_str(j->description, "desc", "description");
	}
	conf_job_free(j);
	conf_diags_free(d);

	j = node(DATAFLOW_YAML, &d);
	ok(j && j->n_props == 1 && !strcmp(j->props[0].value, "true"),
	   "DATAFLOW_JOB_YAML: 'true' in props is the string true");
	conf_job_free(j);
	conf_diags_free(d);
	j = node(SCRIPT_YAML, &d);
	ok(j && j->script_command_line && !strcmp(j->script_command_line, "echo") &&
	   j->type == CONF_JOB_NONE, "SCRIPT_JOB_YAML: script.command.line, but no ejob.type");
	conf_job_free(j);
	conf_diags_free(d);

	j = node(TRACING_YAML, &d);
	if (ok(j != NULL, "a node with a tracing configuration parses")) {
		is_int(j->extra.n, 1, "one extra configuration");
		const conf_value_t *t = &j->extra.configurations[0];
		is_str(t->tag, "tag:yaml.org,2002:org.apache.shardingsphere.elasticjob.tracing.yaml."
		       "YamlTracingConfiguration", "its class");
		is_str(t->items[2].str, "type", "second key");
		is_str(t->items[3].str, "RDB", "type RDB");
		const conf_value_t *ds = &t->items[1];
		is_str(ds->items[3].items[9].str, "10", "maximumPoolSize 10");
		is_str(ds->items[3].items[9].tag, "tag:yaml.org,2002:int", "an int");
		is_str(ds->items[3].items[7].str, "", "password ''");
		is_str(ds->items[3].items[7].tag, "tag:yaml.org,2002:str", "a string");
	}
	conf_job_free(j);
	conf_diags_free(d);
	same_after_round_trip("a tracing configuration", TRACING_YAML);
}

/* hello from examples/ejob.yaml, as its config node */
static const char HELLO_NODE[] =
	"cron: 0/5 * * * * ?\n"
	"description: Says hello from every item\n"
	"disabled: false\n"
	"failover: true\n"
	"jobErrorHandlerType: LOG\n"
	"jobExecutorServiceHandlerType: CPU\n"
	"jobName: hello\n"
	"jobParameter: greeting=hi\n"
	"jobShardingStrategyType: AVG_ALLOCATION\n"
	"maxTimeDiffSeconds: 60\n"
	"misfire: true\n"
	"monitorExecution: true\n"
	"overwrite: true\n"
	"props:\n"
	"  script.command.line: examples/hello.sh --greeting hi\n"
	"  ejob.timeoutSeconds: '30'\n"
	"  ejob.maxRetries: '2'\n"
	"  ejob.type: script\n"
	"reconcileIntervalMinutes: 10\n"
	"shardingItemParameters: 0=a,1=b,2=c,3=d\n"
	"shardingTotalCount: 4\n"
	"staticSharding: false\n"
	"timeZone: UTC\n";

static void test_ejob_jobs(void)
{
	conf_diags_t *d;
	conf_t *c = conf_load_file("examples/ejob.yaml", NULL, &d);
	if (!ok(c != NULL, "examples/ejob.yaml loads")) BAIL_OUT("the reference config does not load");
	conf_diags_free(d);
	size_t len;
	char *y = conf_node_emit(&c->jobs[0], &len);
	is_str(y, HELLO_NODE, "hello's config node");
	is_int(len, strlen(HELLO_NODE), "and its length");
	free(y);
	for (size_t i = 0; i < c->n_jobs; i++) {
		y = conf_node_emit(&c->jobs[i], &len);
		conf_job_t *j = conf_node_parse(y, len, "n", &d);
		ok(j && conf_job_equal(j, &c->jobs[i]), "%s: file -> node -> job is equal", c->jobs[i].name);
		ok(j && j->line == 0 && j->type == c->jobs[i].type, "%s: type %s survives",
		   c->jobs[i].name, conf_job_type_name(c->jobs[i].type));
		conf_job_free(j);
		conf_diags_free(d);
		free(y);
	}
	conf_free(c);

	/* a job with every optional key set, and strings SnakeYAML has to quote */
	const char *file =
		"regCenter: {serverLists: 'a:1', namespace: n}\n"
		"jobs:\n"
		"  full:\n"
		"    type: native\n"
		"    cron: '0 0 * * * ?'\n"
		"    timeZone: Asia/Shanghai\n"
		"    shardingTotalCount: 3\n"
		"    shardingItemParameters: '0=yes,2=#two'\n"
		"    jobParameter: 'true'\n"
		"    description: \"first line\\nsecond line\\n\"\n"
		"    label: '- x'\n"
		"    jobShardingStrategyType: ODEVITY\n"
		"    jobListenerTypes: [LOG, 'on']\n"
		"    jobExtraConfigurations:\n"
		"    - !!com.example.Extra {b: 1, a: [x, '2']}\n"
		"    maxRetries: 3\n"
		"    props:\n"
		"      native.library: lib/x.so\n"
		"      native.symbol: run\n"
		"      note: 'it''s: fine'\n";
	const char *want =
		"cron: 0 0 * * * ?\n"
		"description: |\n"
		"  first line\n"
		"  second line\n"
		"disabled: false\n"
		"failover: false\n"
		"jobExtraConfigurations:\n"
		"- !!com.example.Extra\n"
		"  b: 1\n"
		"  a:\n"
		"  - x\n"
		"  - '2'\n"
		"jobListenerTypes:\n"
		"- LOG\n"
		"- 'on'\n"
		"jobName: full\n"
		"jobParameter: 'true'\n"
		"jobShardingStrategyType: ODEVITY\n"
		"label: '- x'\n"
		"maxTimeDiffSeconds: -1\n"
		"misfire: true\n"
		"monitorExecution: true\n"
		"overwrite: false\n"
		"props:\n"
		"  note: 'it''s: fine'\n"
		"  native.library: lib/x.so\n"
		"  ejob.timeoutSeconds: '0'\n"
		"  ejob.maxRetries: '3'\n"
		"  native.symbol: run\n"
		"  ejob.type: native\n"
		"reconcileIntervalMinutes: 10\n"
		"shardingItemParameters: 0=yes,2=#two\n"
		"shardingTotalCount: 3\n"
		"staticSharding: false\n"
		"timeZone: Asia/Shanghai\n";
	c = conf_parse(file, strlen(file), "full.yaml", NULL, &d);
	if (!ok(c != NULL, "a job with every key")) {
		dump_diags(d);
	} else {
		y = conf_node_emit(&c->jobs[0], &len);
		is_str(y, want, "its config node: quoting, literal blocks, lists, tags, props order");
		conf_job_t *j = conf_node_parse(y, len, "n", NULL);
		ok(j && conf_job_equal(j, &c->jobs[0]), "and back");
		conf_job_free(j);
		free(y);
	}
	conf_free(c);
	conf_diags_free(d);
}

static void test_strings(void)
{
	/* jobs built by hand: what the emitter does with hard strings */
	conf_job_t j = { .name = "s", .cron = "0 * * * * ?", .sharding_total_count = 1,
	                 .items.parameters = "", .job_parameter = "", .description = "" };
	struct { const char *desc; const char *line; } cases[] = {
		{ "", "description: ''\n" },
		{ "plain words", "description: plain words\n" },
		{ "123", "description: '123'\n" },
		{ "0x1F", "description: '0x1F'\n" },
		{ "1_000", "description: '1_000'\n" },
		{ "2020-01-01", "description: '2020-01-01'\n" },
		{ "~", "description: '~'\n" },
		{ "No", "description: 'No'\n" },
		{ "0o17", "description: 0o17\n" },             /* not YAML 1.1 octal: a string */
		{ "089", "description: '089'\n" },              /* a leading zero is never plain */
		{ "0123", "description: '0123'\n" },
		{ "a: b", "description: 'a: b'\n" },
		{ "a:b", "description: a:b\n" },
		{ "#x", "description: '#x'\n" },
		{ "x #y", "description: 'x #y'\n" },
		{ "x# y", "description: x# y\n" },
		{ " lead", "description: ' lead'\n" },
		{ "it's", "description: it's\n" },
		{ "'q'", "description: '''q'''\n" },
		{ "tab\there", "description: \"tab\\there\"\n" },
		{ "cr\r", "description: \"cr\\r\"\n" },
		{ "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80", "description: caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\n" },
		{ "nbsp\xc2\xa0", "description: nbsp\xc2\xa0\n" },
		{ "a\n", "description: |\n  a\n" },
		{ "a\n\n", "description: |+\n  a\n\n" },
		{ " indented\nx", "description: |2-\n   indented\n  x\n" },
		{ "trailing \nx", "description: \"trailing \\nx\"\n" },
		{ "bell\x07", "description: !!binary |-\n  YmVsbAc=\n" },
		{ "nel\xc2\x85x", "description: \"nel\\Nx\"\n" },   /* ejob's one deviation */
		{ "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore",
		  "description: Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\n"
		  "  tempor incididunt ut labore\n" },
		{ "'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt",
		  "description: '''Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\n"
		  "  tempor incididunt'\n" },
		{ "\tLorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt",
		  "description: \"\\tLorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod\\\n"
		  "  \\ tempor incididunt\"\n" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		j.description = cases[i].desc;
		char *y = conf_node_emit(&j, NULL);
		const char *line = y ? strstr(y, "description:") : NULL;
		const char *end = line ? strstr(line, "\ndisabled:") : NULL;
		char got[512] = "";
		if (line && end) snprintf(got, sizeof got, "%.*s", (int)(end - line + 1), line);
		is_str(got, cases[i].line, "description %zu written as SnakeYAML writes it", i);
		conf_job_t *back = y ? conf_node_parse(y, strlen(y), "n", NULL) : NULL;
		is_str(back ? back->description : NULL, cases[i].desc, "description %zu reads back", i);
		conf_job_free(back);
		free(y);
	}
}

static void test_tolerance_and_errors(void)
{
	conf_diags_t *d;
	const char *y =
		"cron: 0 * * * * ?\n"
		"jobName: j\n"
		"shardingTotalCount: '2'\n"
		"maxTimeDiffSeconds: -7\n"
		"reconcileIntervalMinutes: -1\n"
		"jobExecutorServiceHandlerType: MY_POOL\n"
		"jobListenerTypes: ['']\n"
		"description: !!binary aGk=\n"
		"label: \"bell\\a\"\n"
		"timeZone: ''\n"
		"jobShardingStrategyType: ''\n"
		"props:\n"
		"  ejob.type: external\n"
		"  ejob.future: kept\n";
	conf_job_t *j = node(y, &d);
	if (ok(j != NULL && conf_diags_count(d) == 0, "ElasticJob's loose values are taken, without a word")) {
		is_int(j->sharding_total_count, 2, "a quoted number");
		is_int(j->max_time_diff_seconds, -7, "any int for maxTimeDiffSeconds");
		is_int(j->reconcile_interval_minutes, -1, "and reconcileIntervalMinutes");
		is_str(j->executor.type, "MY_POOL", "a plugin's executor name");
		is_str(j->description, "hi", "!!binary decoded");
		is_str(j->label, "bell\a", "control characters kept");
		ok(!j->time_zone && !j->tz, "timeZone '': unset (ElasticJob: the JVM's zone)");
		ok(j->strategy.effective == CONF_STRATEGY_AVG_ALLOCATION, "jobShardingStrategyType '': AVG_ALLOCATION, "
		   "as ElasticJob's factory takes it");
		is_int(j->type, CONF_JOB_EXTERNAL, "ejob.type");
		ok(j->n_props == 1 && !strcmp(j->props[0].key, "ejob.future"), "other ejob.* props kept");
	} else {
		dump_diags(d);
	}
	conf_job_free(j);
	conf_diags_free(d);

	/* ElasticJob's YamlEngine (SnakeYAML loadAs) cannot load a node with a key its
	 * JobConfigurationPOJO does not have: neither does ejob (a typo would otherwise turn a job
	 * into a one-off job that never fires) */
	node_errors("a key ElasticJob does not have", "crn: 0 * * * * ?\njobName: j\nshardingTotalCount: 1\n",
	            "/ns/job/config:1:1: crn: unknown key; did you mean 'cron'? (ElasticJob cannot load a node with a key "
	            "its JobConfigurationPOJO does not have, and neither does ejob)");
	node_errors("a key nothing is like", "jobName: j\nshardingTotalCount: 1\nsomeFutureKey: {a: [1]}\n",
	            "/ns/job/config:3:1: someFutureKey: unknown key (ElasticJob cannot load a node with a key its "
	            "JobConfigurationPOJO does not have, and neither does ejob); the keys are cron, timeZone, "
	            "shardingTotalCount, shardingItemParameters, jobParameter, monitorExecution, failover, misfire, "
	            "maxTimeDiffSeconds, reconcileIntervalMinutes, staticSharding, jobShardingStrategyType, "
	            "jobExecutorServiceHandlerType, jobExecutorThreadPoolSizeProviderType, jobErrorHandlerType, "
	            "jobListenerTypes, jobExtraConfigurations, disabled, overwrite, label, description, props or jobName");
	node_errors("ejob's own key at the top", "jobName: j\nshardingTotalCount: 1\ntype: script\n",
	            "/ns/job/config:3:1: type: ejob's own key; in a config node it is the prop ejob.type (props: "
	            "{ejob.type: ...}): ElasticJob cannot load a node with a key its JobConfigurationPOJO does not have");
	/* 3.0.5's name of the executor key, published back under it */
	j = node("jobName: j\nshardingTotalCount: 1\njobExecutorThreadPoolSizeProviderType: SINGLE_THREAD\n", &d);
	char *k305 = j ? conf_node_emit(j, NULL) : NULL;
	ok(j && j->executor.key_3_0_5 && !strcmp(j->executor.type, "SINGLE_THREAD") && k305 &&
	   strstr(k305, "\njobExecutorThreadPoolSizeProviderType: SINGLE_THREAD\n"),
	   "jobExecutorThreadPoolSizeProviderType (3.0.5): taken, and written back under its name");
	free(k305);
	conf_job_free(j);
	conf_diags_free(d);

	/* without ejob.type, ejob.* entries are just props, and stay so */
	j = node("jobName: j\nshardingTotalCount: 1\nprops:\n  ejob.timeoutSeconds: '5'\n", &d);
	ok(j && j->type == CONF_JOB_NONE && j->timeout_seconds == 0 && j->n_props == 1 &&
	   !strcmp(j->props[0].key, "ejob.timeoutSeconds"), "ejob.timeoutSeconds without ejob.type is a prop");
	char *again = j ? conf_node_emit(j, NULL) : NULL;
	ok(again && strstr(again, "props:\n  ejob.timeoutSeconds: '5'\n"), "and is written back");
	free(again);
	conf_job_free(j);
	conf_diags_free(d);

	node_errors("a key written twice, once as !!binary", "jobName: j\nshardingTotalCount: 1\n"
	            "props:\n  a: x\n  !!binary YQ==: y\n",
	            "/ns/job/config:5:3: props.a: duplicate key (also at line 4, column 3); each key "
	            "may appear once");
	node_errors("no jobName", "cron: '0 * * * * ?'\nshardingTotalCount: 1\n",
	            "/ns/job/config:1:1: jobName: missing; a config node names its job");
	node_errors("no shardingTotalCount", "jobName: j\n",
	            "/ns/job/config:1:1: shardingTotalCount: missing; every job needs the number of "
	            "shard items, 1-10000");
	node_errors("shardingTotalCount 0", "jobName: j\nshardingTotalCount: 0\n",
	            "/ns/job/config:2:1: shardingTotalCount: must be an integer 1-10000 (got \"0\")");
	node_errors("a word for a number", "jobName: j\nshardingTotalCount: three\n",
	            "/ns/job/config:2:1: shardingTotalCount: must be an integer 1-10000 (got \"three\")");
	node_errors("a number out of Java's int", "jobName: j\nshardingTotalCount: 1\n"
	            "maxTimeDiffSeconds: 2147483648\n",
	            "/ns/job/config:3:1: maxTimeDiffSeconds: must be an integer -2147483648-2147483647 "
	            "(got \"2147483648\")");
	node_errors("a bad boolean", "jobName: j\nshardingTotalCount: 1\nfailover: 1\n",
	            "/ns/job/config:3:1: failover: must be true or false (got \"1\")");
	node_errors("props not a mapping", "jobName: j\nshardingTotalCount: 1\nprops: [a]\n",
	            "/ns/job/config:3:1: props: must be a mapping of names to strings (got a list)");
	node_errors("a list for a string", "jobName: j\nshardingTotalCount: 1\ncron: [a]\n",
	            "/ns/job/config:3:1: cron: must be a string (got a list)");
	node_kept("an unknown strategy", "jobName: j\nshardingTotalCount: 1\njobShardingStrategyType: ROUNDROBIN\n",
	          "jobShardingStrategyType",
	          "/ns/job/config:3:1: jobShardingStrategyType: ElasticJob has no sharding strategy \"ROUNDROBIN\" (its "
	          "instances fail every resharding of this job: \"Cannot find sharding strategy\"); ejob keeps the strategy "
	          "in force; write AVG_ALLOCATION, ODEVITY, ROUND_ROBIN or SINGLE_SHARDING_BALANCE; did you mean "
	          "'ROUND_ROBIN'?");
	j = node_warns("ejob's old strategy name", "jobName: j\nshardingTotalCount: 1\njobShardingStrategyType: "
	               "ODEVITY_BY_NAME\n",
	               "/ns/job/config:3:1: warning: jobShardingStrategyType: ODEVITY_BY_NAME is the name ejob gave ODEVITY "
	               "by mistake before (ElasticJob fails on it: \"Cannot find sharding strategy\"); it is taken as ODEVITY "
	               "and the node is written back with it; write ODEVITY");
	ok(j && j->strategy.effective == CONF_STRATEGY_ODEVITY && j->strategy.alias, "  as ODEVITY");
	conf_job_free(j);
	node_errors("a bad ejob.type", "jobName: j\nshardingTotalCount: 1\nprops:\n  ejob.type: SCRIPT\n",
	            "/ns/job/config:4:3: props.ejob.type: must be one of script, native, external, http or "
	            "dataflow (got \"SCRIPT\"); did you mean 'script'?");
	node_kept("a bad ejob.timeoutSeconds", "jobName: j\nshardingTotalCount: 1\nprops:\n"
	          "  ejob.type: external\n  ejob.timeoutSeconds: soon\n", "props.ejob.timeoutSeconds",
	          "/ns/job/config:5:3: props.ejob.timeoutSeconds: must be an integer 0-2147483647 "
	          "(0: no limit) (got \"soon\")");
	node_kept("a script job without its command", "jobName: j\nshardingTotalCount: 1\nprops:\n"
	          "  ejob.type: script\n", "props.script.command.line",
	          "/ns/job/config:3:1: props: a script job needs props 'script.command.line', the "
	          "command to run (split into arguments, no shell)");
	/* ElasticJob's ShardingItemParameters: never reads an item out of range, the last of two wins */
	j = node_warns("an item parameter out of range", "jobName: j\nshardingTotalCount: 2\n"
	               "shardingItemParameters: 0=a,2=b\n",
	               "/ns/job/config:3:29: warning: shardingItemParameters: item 2 is out of range (shardingTotalCount "
	               "is 2, so items are 0-1): never read, as ElasticJob never reads it; remove it");
	ok(j && j->items.n_params == 1 && !strcmp(conf_job_item_param(j, 0), "a") && !conf_job_item_param(j, 1),
	   "  item 0's parameter taken, item 2's left out");
	conf_job_free(j);
	j = node_warns("an item given twice", "jobName: j\nshardingTotalCount: 2\nshardingItemParameters: 0=a,1=b,0=c\n",
	               "/ns/job/config:3:33: warning: shardingItemParameters: item 0 is given twice; the last one is "
	               "taken, as ElasticJob takes it; give each item one parameter");
	ok(j && j->items.n_params == 2 && !strcmp(conf_job_item_param(j, 0), "c") && !strcmp(conf_job_item_param(j, 1), "b"),
	   "  the last one taken");
	conf_job_free(j);
	node_kept("malformed item parameters", "jobName: j\nshardingTotalCount: 2\nshardingItemParameters: 0=a,1\n",
	          "shardingItemParameters",
	          "/ns/job/config:3:29: shardingItemParameters: must be ITEM=PARAMETER pairs separated by commas, "
	          "e.g. \"0=a,1=b\" (got \"1\")");
	node_kept("a bad cron", "jobName: j\nshardingTotalCount: 1\ncron: 0 0 0 ? * FOO\n", "cron",
	          "/ns/job/config:3:17: cron: day-of-week: 'FOO' is not a day name (SUN-SAT)");
	node_errors("a bad job name", "jobName: a/b\nshardingTotalCount: 1\n",
	            "/ns/job/config:1:10: jobName: the name \"a/b\" contains '/'; a job name must be "
	            "1-255 bytes without '/', '@-@', whitespace or control characters, and not '.' or '..'");
	node_errors("bad base64", "jobName: j\nshardingTotalCount: 1\ndescription: !!binary '@@'\n",
	            "/ns/job/config:3:1: description: a !!binary value must be base64");
	node_errors("not a mapping", "- a\n",
	            "/ns/job/config:1:1: a config node must be a mapping of JobConfigurationPOJO's keys "
	            "(got a list)");
	node_errors("empty", "", "/ns/job/config:1:1: the config node is empty");
	node_errors("YAML syntax", "jobName: [\n",
	            "/ns/job/config:2:1: YAML syntax error: did not find expected node content (while "
	            "parsing a flow node at line 2, column 1)");
}

/* A node comes with its cron compiled and its zone loaded: the same fire times as the text
 * parsed and the zone loaded by hand. A zone this host cannot load is no error of the node. */
static void test_compiled(void)
{
	static const char y[] =
		"cron: 0 30 2 * * ?\n"
		"jobName: tz\n"
		"props:\n"
		"  ejob.type: script\n"
		"  script.command.line: /bin/true\n"
		"shardingTotalCount: 1\n"
		"timeZone: America/New_York\n";
	conf_diags_t *d;
	conf_job_t *j = node(y, &d);
	if (ok(j != NULL && j->cron_compiled && j->tz, "a node has its cron compiled and its zone loaded")) {
		cron_t *c = cron_parse(j->cron, NULL);
		tz_t *tz = tz_load(j->time_zone, NULL);
		int64_t t = 1741400000;          /* 2025-03-08: New York springs forward the next night */
		int same = c && tz;
		for (int i = 0; same && i < 4; i++) {
			int64_t a = cron_next(j->cron_compiled, j->tz, t), b = cron_next(c, tz, t);
			same = a == b && a > t;
			t = a;
		}
		ok(same, "its compiled cron, in its zone, fires as the text parsed and the zone loaded by hand");
		is_str(tz_name(j->tz), "America/New_York", "the zone is the node's");
		ok(j->tz_error == NULL, "no zone error");
		cron_free(c);
		tz_free(tz);
	}
	conf_job_free(j);
	conf_diags_free(d);

	static const char bad_zone[] =
		"cron: 0 * * * * ?\n"
		"jobName: tz\n"
		"shardingTotalCount: 1\n"
		"timeZone: Mars/Olympus_Mons\n";
	j = node(bad_zone, &d);
	if (ok(j != NULL, "a node whose zone does not load here still parses")) {
		/* ElasticJob: TimeZone.getTimeZone("Mars/Olympus_Mons") is GMT */
		ok(j->tz && !strcmp(tz_name(j->tz), "GMT") && tz_offset_at(j->tz, 1741400000) == 0 && j->tz_error &&
		   strstr(j->tz_error, "Mars/Olympus_Mons"), "it runs in GMT, as ElasticJob's, and tz_error says why (%s)",
		   j->tz_error ? j->tz_error : "NULL");
		ok(conf_diags_count(d) == 1 && conf_diags_get(d, 0)->level == CONF_DIAG_WARN &&
		   strstr(conf_diags_get(d, 0)->text, "/ns/job/config:4:1: warning: timeZone: ") &&
		   strstr(conf_diags_get(d, 0)->text, "; the job runs in GMT, as ElasticJob runs a zone id Java does not know "
		          "(TimeZone.getTimeZone)"), "  with a warning that says so");
	}
	conf_job_free(j);
	conf_diags_free(d);

	j = node("jobName: nocron\nshardingTotalCount: 1\n", &d);
	ok(j != NULL && !j->cron && !j->cron_compiled && !j->tz && !j->tz_error,
	   "a node without cron or zone has neither compiled");
	conf_job_free(j);
	conf_diags_free(d);
}

/* A one-off job (ElasticJob's OneOffJobBootstrap: no cron). JobConfiguration.newBuilder("oo", 3)
 * without .cron(...) leaves cron null, which JobConfigurationPOJO's dump leaves out; its Spring
 * namespace passes the missing attribute as "" instead, dumped as cron: ''. Both are one-off jobs
 * to ElasticJob (Strings.isNullOrEmpty) and to ejob; a blank cron is neither. */
static const char ONEOFF_YAML[] =
	"description: ''\n"
	"disabled: false\n"
	"failover: true\n"
	"jobName: oo\n"
	"jobParameter: ''\n"
	"maxTimeDiffSeconds: -1\n"
	"misfire: true\n"
	"monitorExecution: true\n"
	"overwrite: false\n"
	"props:\n"
	"  script.command.line: echo\n"
	"reconcileIntervalMinutes: 10\n"
	"shardingItemParameters: ''\n"
	"shardingTotalCount: 3\n"
	"staticSharding: false\n";

static void test_one_off(void)
{
	same_after_round_trip("ElasticJob's one-off job", ONEOFF_YAML);
	char why[600];
	conf_diags_t *d = NULL;
	conf_job_t *j = conf_node_take(ONEOFF_YAML, strlen(ONEOFF_YAML), "/ns/oo/config", "oo", "SCRIPT", NULL, why, sizeof why, &d);
	if (!ok(j != NULL, "taken as the config of job oo (root node SCRIPT)")) diag("why: %s", why);
	ok(j && !j->cron && !j->cron_compiled && j->type == CONF_JOB_SCRIPT, "a one-off script job");
	conf_job_free(j);
	conf_diags_free(d);

	char spring[sizeof ONEOFF_YAML + 16];
	snprintf(spring, sizeof spring, "cron: ''\n%s", ONEOFF_YAML);
	j = conf_node_take(spring, strlen(spring), "/ns/oo/config", "oo", "SCRIPT", NULL, why, sizeof why, NULL);
	ok(j && !j->cron && !j->cron_compiled, "cron: '' (ElasticJob's Spring namespace) is a one-off job too");
	char *y = j ? conf_node_emit(j, NULL) : NULL;
	ok(y && !strstr(y, "cron"), "written back without cron, as the builder's null");
	free(y);
	conf_job_free(j);
	node_kept("a blank cron", "jobName: j\nshardingTotalCount: 1\ncron: ' '\n", "cron",
	          "/ns/job/config:3:1: cron: blank; give a Quartz cron expression (e.g. \"0/5 * * * * ?\"), or leave "
	          "cron out (or \"\") for a one-off job that runs only when triggered");

	/* the file's one-off job: its node has no cron, and reads back equal */
	static const char file[] = "regCenter: {serverLists: 'a:1', namespace: n}\n"
	                           "jobs:\n  oo: {type: script, shardingTotalCount: 3, failover: true, "
	                           "props: {script.command.line: echo}}\n";
	conf_t *c = conf_parse(file, sizeof file - 1, "f.yaml", NULL, &d);
	conf_diags_free(d);
	y = c ? conf_node_emit(&c->jobs[0], NULL) : NULL;
	ok(y && !strstr(y, "cron"), "a file's one-off job: no cron in its node");
	j = y ? node(y, &d) : NULL;
	ok(j && c && conf_job_equal(j, &c->jobs[0]), "file -> node -> job is equal");
	conf_job_free(j);
	conf_diags_free(d);
	free(y);
	conf_free(c);
}

static void test_java_facts(void)
{
	/* ELASTICJOB.md: "job1" hashes to 3267604; "Aa" and "BB" collide (2112) */
	is_int(conf_java_hash("job1"), 3267604, "String.hashCode(\"job1\")");
	is_int(conf_java_hash("Aa"), 2112, "\"Aa\"");
	is_int(conf_java_hash("BB"), 2112, "\"BB\"");
	is_int(conf_java_hash("\xf0\x9f\x98\x80"), 1772899, "an astral character hashes as two UTF-16 units");
	is_int(conf_java_hash("polygenelubricants"), (int32_t)0x80000000, "overflow wraps as in Java");
	/* Properties order: bins by spread hash, 16 bins; "b"(98) and "r"(114) share bin 2 */
	const char *keys[] = { "r", "a", "b" };
	size_t order[3];
	ok(conf_props_order(keys, 3, order) == 0, "an order");
	ok(order[0] == 1 && order[1] == 0 && order[2] == 2, "a (bin 1), then r, b (bin 2, put order)");
}

int main(void)
{
	test_elasticjob_samples();
	test_ejob_jobs();
	test_strings();
	test_tolerance_and_errors();
	test_compiled();
	test_one_off();
	test_java_facts();
	return done_testing();
}
