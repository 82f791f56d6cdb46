/* t/35-conf.c: the configuration file: every value of the reference config, defaults, every
 * kind of error with its exact message (t/14, with all errors of a file at once), overrides,
 * anchors (the http and dataflow types' props: t/43). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "t/lib/tbuild.h"
#include "t/lib/tconf.h"
#include "t/tap.h"

#define HEAD TCONF_HEAD
#define ERRORS TCONF_ERRORS
/* ERRORS with conf_opts_t (the list NULL-terminated by the caller) */
#define errors_are(name, yaml, o, ...) ok(tconf_errors(yaml, o, __VA_ARGS__), "%s", name)

static conf_t *parse_opts(const char *yaml, const conf_opts_t *o, conf_diags_t **d)
{
	return tconf_parse(yaml, o, d);
}

static conf_t *parse(const char *yaml, conf_diags_t **d)
{
	return tconf_parse(yaml, NULL, d);
}

static int fake_user(const char *name, uint32_t *id, void *arg)
{
	(void)arg;
	if (strcmp(name, "alice") == 0) {
		*id = 1001;
		return 0;
	}
	return -1;
}

static int fake_group(const char *name, uint32_t *id, void *arg)
{
	(void)arg;
	if (strcmp(name, "staff") == 0) {
		*id = 50;
		return 0;
	}
	return -1;
}

static void test_reference(void)
{
	conf_diags_t *d;
	conf_t *c = conf_load_file("examples/ejob.yaml", NULL, &d);
	if (!ok(c != NULL, "examples/ejob.yaml loads")) {
		for (size_t i = 0; i < conf_diags_count(d); i++) diag("%s", conf_diags_get(d, i)->text);
		conf_diags_free(d);
		BAIL_OUT("the reference config does not load");
	}
	is_int(conf_diags_count(d), 0, "no errors");
	const conf_regcenter_t *r = &c->reg_center;
	is_str(c->file, "examples/ejob.yaml", "file");
	is_str(r->server_lists, "127.0.0.1:2181", "serverLists: tools/zk-local's one server");
	is_str(r->namespace, "ejob-demo", "namespace");
	is_int(r->base_sleep_ms, 1000, "baseSleepTimeMilliseconds");
	is_int(r->max_sleep_ms, 3000, "maxSleepTimeMilliseconds");
	is_int(r->max_retries, 3, "maxRetries");
	is_int(r->session_timeout_ms, 6000, "sessionTimeoutMilliseconds");
	is_int(r->connection_timeout_ms, 0, "connectionTimeoutMilliseconds: not in the example (it is not acted on)");
	ok(r->digest == NULL, "digest only in a comment: the user's zkCli can read the nodes");
	const conf_supervisor_t *s = &c->supervisor;
	is_int(s->workers, 4, "workers");
	ok(s->ip == NULL, "ip only in a comment: detected");
	is_int(s->log_level, CONF_LOG_INFO, "logLevel");
	ok(s->attach_socket == NULL, "attachSocket only in a comment: derived, without root too");
	is_int(s->n_attach_allow_uids, 0, "attachAllowUids: []");
	is_int(s->n_attach_allow_gids, 0, "attachAllowGids: []");
	is_int(s->shutdown_grace_seconds, 10, "shutdownGraceSeconds");
	is_int(s->kill_grace_seconds, 5, "killGraceSeconds");
	is_int(s->script_output_max_lines, 1000, "scriptOutputMaxLines");
	is_int(s->script_output_max_bytes, 65536, "scriptOutputMaxBytes");

	is_int(c->n_jobs, 3, "three jobs");
	const conf_job_t *j = &c->jobs[0];
	is_str(j->name, "hello", "job 0 is hello");
	unsigned hello_line = 0, ln = 1;
	char *text;
	size_t tl;
	if (conf_read_file("examples/ejob.yaml", &text, &tl) == 0) {
		for (const char *p = text; *p && !hello_line; p++) {
			if (!strncmp(p, "  hello:", 8) && (p == text || p[-1] == '\n')) hello_line = ln;
			ln += *p == '\n';
		}
		free(text);
	}
	is_int(j->line, hello_line, "hello starts at its line in the file (%u)", hello_line);
	is_int(j->type, CONF_JOB_SCRIPT, "type");
	is_str(j->cron, "0/5 * * * * ?", "cron");
	is_str(j->time_zone, "UTC", "timeZone");
	is_int(j->sharding_total_count, 4, "shardingTotalCount");
	is_str(j->items.parameters, "0=a,1=b,2=c,3=d", "shardingItemParameters");
	is_int(j->items.n_params, 4, "four item parameters");
	is_str(conf_job_item_param(j, 0), "a", "item 0");
	is_str(conf_job_item_param(j, 3), "d", "item 3");
	ok(conf_job_item_param(j, 4) == NULL, "no item 4");
	is_str(j->job_parameter, "greeting=hi", "jobParameter");
	ok(j->monitor_execution && j->failover && j->misfire, "monitorExecution, failover, misfire");
	is_int(j->max_time_diff_seconds, 60, "maxTimeDiffSeconds");
	is_int(j->reconcile_interval_minutes, 10, "reconcileIntervalMinutes");
	ok(!j->static_sharding, "staticSharding");
	is_int(j->strategy.effective, CONF_STRATEGY_AVG_ALLOCATION, "strategy");
	is_str(j->strategy.type, "AVG_ALLOCATION", "jobShardingStrategyType as written");
	is_str(j->executor.type, "CPU", "jobExecutorServiceHandlerType");
	is_str(j->error_handler_type, "LOG", "jobErrorHandlerType");
	is_int(j->listener.n_types, 0, "jobListenerTypes: []");
	is_int(j->extra.n, 0, "no jobExtraConfigurations");
	is_str(j->description, "Says hello from every item", "description");
	ok(!j->disabled && j->overwrite, "disabled, overwrite");
	ok(j->label == NULL, "label: only in a comment (it is not acted on)");
	is_int(j->timeout_seconds, 30, "timeoutSeconds");
	is_int(j->max_retries, 2, "maxRetries");
	is_int(j->n_props, 1, "one prop");
	is_str(j->props[0].key, "script.command.line", "prop key");
	is_str(j->props[0].value, "examples/hello.sh --greeting hi", "prop value");
	is_str(j->script_command_line, "examples/hello.sh --greeting hi", "script_command_line");

	j = conf_find_job(c, "hello-native");
	ok(j == &c->jobs[1], "hello-native is job 1");
	is_int(j->type, CONF_JOB_NATIVE, "native");
	is_int(j->sharding_total_count, 16, "16 items");
	is_int(j->strategy.effective, CONF_STRATEGY_ROUND_ROBIN, "ROUND_ROBIN");
	is_str(j->native.library, BUILT("examples/libhello.so"), "native.library");
	is_str(j->native.symbol, "hello_item", "native.symbol");
	/* ElasticJob's defaults */
	is_str(j->items.parameters, "", "default shardingItemParameters");
	is_str(j->job_parameter, "", "default jobParameter");
	is_str(j->description, "", "default description");
	ok(j->time_zone == NULL && j->label == NULL && j->executor.type == NULL &&
	   j->error_handler_type == NULL, "unset strings are NULL");
	ok(j->monitor_execution && !j->failover && j->misfire && !j->disabled && !j->overwrite &&
	   !j->static_sharding, "default booleans");
	is_int(j->max_time_diff_seconds, -1, "default maxTimeDiffSeconds");
	is_int(j->reconcile_interval_minutes, 10, "default reconcileIntervalMinutes");
	is_int(j->timeout_seconds, 0, "default timeoutSeconds");
	is_int(j->max_retries, 0, "default maxRetries");
	j = &c->jobs[2];
	is_str(j->name, "ingest", "job 2 is ingest");
	is_int(j->type, CONF_JOB_EXTERNAL, "external");
	is_str(j->time_zone, "Europe/Berlin", "its zone");
	ok(conf_find_job(c, "nope") == NULL, "no job nope");
	ok(conf_job_equal(&c->jobs[0], &c->jobs[0]), "a job equals itself");
	ok(!conf_job_equal(&c->jobs[0], &c->jobs[1]), "hello is not resize");
	conf_free(c);
	conf_diags_free(d);
}

static void test_defaults(void)
{
	const char *y = HEAD "jobs:\n  j:\n    type: external\n    cron: '* * * * * ?'\n"
	                "    shardingTotalCount: 1\n";
	conf_opts_t o = { .cpus = 6 };
	conf_diags_t *d;
	conf_t *c = parse_opts(y, &o, &d);
	if (!ok(c != NULL, "a minimal file loads")) return;
	is_int(c->reg_center.base_sleep_ms, 1000, "baseSleepTimeMilliseconds 1000");
	is_int(c->reg_center.max_sleep_ms, 3000, "maxSleepTimeMilliseconds 3000");
	is_int(c->reg_center.max_retries, 3, "maxRetries 3");
	is_int(c->reg_center.session_timeout_ms, 6000, "sessionTimeoutMilliseconds 6000 (ejob)");
	is_int(c->reg_center.connection_timeout_ms, 0, "connectionTimeoutMilliseconds 0");
	ok(c->reg_center.digest == NULL, "no digest");
	is_int(c->supervisor.workers, 6, "workers = CPUs");
	ok(c->supervisor.ip == NULL, "ip detected");
	is_int(c->supervisor.log_level, CONF_LOG_INFO, "logLevel info");
	ok(c->supervisor.attach_socket == NULL, "attachSocket unset: the supervisor derives it (docs/worker.md)");
	is_int(c->supervisor.n_attach_allow_uids + c->supervisor.n_attach_allow_gids, 0, "no allow-lists");
	is_int(c->supervisor.shutdown_grace_seconds, 10, "shutdownGraceSeconds 10");
	is_int(c->supervisor.kill_grace_seconds, 5, "killGraceSeconds 5");
	is_int(c->supervisor.script_output_max_lines, 1000, "scriptOutputMaxLines 1000");
	is_int(c->supervisor.script_output_max_bytes, 65536, "scriptOutputMaxBytes 65536");
	conf_free(c);
	conf_diags_free(d);

	c = parse(HEAD "jobs: {}\n", &d);
	ok(c && c->n_jobs == 0 && c->supervisor.workers == 1, "jobs: {} is no jobs; no opts: 1 worker");
	conf_free(c);
	conf_diags_free(d);
}

static void test_values(void)
{
	conf_diags_t *d;
	/* YAML 1.1 booleans as SnakeYAML reads them, quoted numbers, block scalars, anchors */
	const char *y = HEAD
		"defaults: &d\n"
		"  type: script\n"
		"  shardingTotalCount: 2\n"
		"  props: {script.command.line: run}\n"
		"jobs:\n"
		"  a:\n"
		"    <<: *d\n"
		"    cron: \"0 * * * * ?\"\n"
		"    failover: yes\n"
		"    misfire: Off\n"
		"    monitorExecution: 'TRUE'\n"
		"    maxTimeDiffSeconds: '-1'\n"
		"    description: |\n"
		"      two\n"
		"      lines\n"
		"    jobListenerTypes: [LOG, my.listener]\n"
		"    shardingItemParameters: ' 1 = b , 0=  a c ,'\n"
		"  b:\n"
		"    <<: *d\n"
		"    shardingTotalCount: 3\n"
		"    cron: \"0 * * * * ?\"\n"
		"    jobExtraConfigurations:\n"
		"    - !!org.example.Tracing\n"
		"      type: RDB\n"
		"      n: 5\n"
		"      nested: {x: [1, 'two']}\n";
	/* 'defaults' is not a known top-level key: the anchor must be declared somewhere else */
	conf_t *c = parse(y, &d);
	ok(c == NULL && conf_diags_count(d) == 1 &&
	   strcmp(conf_diags_get(d, 0)->text, "t.yaml:4:1: defaults: unknown key; allowed here: "
	          "regCenter, supervisor, jobs or tracing") == 0, "an unknown top-level key is an error");
	conf_free(c);
	conf_diags_free(d);

	/* anchors live in the jobs themselves */
	const char *y2 = HEAD
		"jobs:\n"
		"  a: &d\n"
		"    type: script\n"
		"    shardingTotalCount: 2\n"
		"    props: {script.command.line: run}\n"
		"    cron: \"0 * * * * ?\"\n"
		"    failover: yes\n"
		"    misfire: Off\n"
		"    monitorExecution: 'TRUE'\n"
		"    maxTimeDiffSeconds: '-1'\n"
		"    description: |\n"
		"      two\n"
		"      lines\n"
		"    jobListenerTypes: [LOG, my.listener]\n"
		"    shardingItemParameters: ' 1 = b , 0=  a c ,'\n"
		"  b:\n"
		"    <<: *d\n"
		"    shardingTotalCount: 3\n"
		"    jobListenerTypes: []\n"
		"    jobExtraConfigurations:\n"
		"    - !!org.example.Tracing\n"
		"      type: RDB\n"
		"      n: 5\n"
		"      nested: {x: [1, 'two']}\n";
	c = parse(y2, &d);
	if (!ok(c != NULL, "anchors, merge keys, YAML 1.1 booleans, quoted numbers")) {
		for (size_t i = 0; i < conf_diags_count(d); i++) diag("%s", conf_diags_get(d, i)->text);
		conf_diags_free(d);
		return;
	}
	const conf_job_t *a = &c->jobs[0], *b = &c->jobs[1];
	ok(a->failover && !a->misfire && a->monitor_execution, "yes, Off, 'TRUE'");
	is_int(a->max_time_diff_seconds, -1, "'-1'");
	is_str(a->description, "two\nlines\n", "literal block");
	is_int(a->listener.n_types, 2, "two listeners");
	is_str(a->listener.types[1], "my.listener", "second listener");
	is_int(a->items.n_params, 2, "two item parameters");
	is_int(a->items.params[0].item, 0, "sorted: item 0 first");
	is_str(a->items.params[0].value, "a c", "trimmed as ElasticJob trims");
	is_str(conf_job_item_param(a, 1), "b", "item 1");
	is_int(b->sharding_total_count, 3, "b overrides the merged count");
	is_str(b->cron, "0 * * * * ?", "b merges cron");
	is_str(b->script_command_line, "run", "b merges props");
	ok(b->failover && !b->misfire, "b merges booleans");
	is_int(b->listener.n_types, 0, "b overrides the listeners");
	is_int(b->extra.n, 1, "one extra configuration");
	const conf_value_t *x = &b->extra.configurations[0];
	ok(x->kind == CONF_VALUE_MAP && x->n == 3, "a mapping of 3");
	is_str(x->tag, "tag:yaml.org,2002:org.example.Tracing", "its tag");
	is_str(x->items[0].str, "type", "first key");
	is_str(x->items[1].str, "RDB", "first value");
	is_str(x->items[3].tag, "tag:yaml.org,2002:int", "a plain 5 is an int");
	const conf_value_t *nx = &x->items[5].items[1];
	ok(nx->kind == CONF_VALUE_SEQ && nx->n == 2, "nested list");
	is_str(nx->items[1].tag, "tag:yaml.org,2002:str", "a quoted 'two' is a string");
	ok(!conf_job_equal(a, b), "a and b differ");
	conf_free(c);
	conf_diags_free(d);
}

static void test_cron(void)
{
	ERRORS("a cron error at its column in the file",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: 0 0/5 24 * * ?\n    shardingTotalCount: 1\n",
	       "t.yaml:7:17: jobs.j.cron: hours: value 24 out of range 0-23");
	ERRORS("in a quoted value",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: \"0 0 0 * * *\"\n    shardingTotalCount: 1\n",
	       "t.yaml:7:22: jobs.j.cron: day-of-month and day-of-week both have values: make one of them "
	       "'?' (e.g. '0 0 12 ? * MON' or '0 0 12 1 * ?')");
	ERRORS("past the end when fields are missing",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: '0 0 0 * *'\n    shardingTotalCount: 1\n",
	       "t.yaml:7:21: jobs.j.cron: 5 fields, need at least 6: seconds minutes hours day-of-month "
	       "month day-of-week [year]");
	/* columns count characters: the two bytes of 'é' earlier on the line are one column */
	ERRORS("after a multi-byte character on the line",
	       HEAD "jobs:\n  j: {description: \xc3\xa9, type: external, cron: '0 0 0 ? * FOO', "
	       "shardingTotalCount: 1}\n",
	       "t.yaml:5:56: jobs.j.cron: day-of-week: 'FOO' is not a day name (SUN-SAT)");
	ERRORS("when the value has escapes the message says where",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: \"*/60 * * * * \\x3f\"\n"
	       "    shardingTotalCount: 1\n",
	       "t.yaml:7:11: jobs.j.cron: seconds: step 60 too large (at most 59) (column 3 of the "
	       "expression)");
	ERRORS("a block scalar too",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: >-\n      0 0 0 ? * 6#6\n"
	       "    shardingTotalCount: 1\n",
	       "t.yaml:7:11: jobs.j.cron: day-of-week: '#' must be followed by a number 1-5 (got '6') "
	       "(column 13 of the expression)");

	/* zones: checked when the options can load them */
	conf_opts_t sys;
	conf_opts_system(&sys);
	errors_are("an unknown zone",
	           HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n"
	           "    timeZone: Mars/Olympus\n    shardingTotalCount: 1\n", &sys,
	           "t.yaml:8:5: jobs.j.timeZone: unknown time zone 'Mars/Olympus' (no zone file "
	           "/usr/share/zoneinfo/Mars/Olympus): use an IANA name such as 'Europe/London' or "
	           "'America/New_York', or 'UTC', or 'GMT+08:00'; if the name is right, install the "
	           "tzdata package", (const char *)NULL);
	conf_diags_t *d;
	const char *zones = HEAD "jobs:\n"
		"  a: {type: external, cron: '0 * * * * ?', shardingTotalCount: 1, timeZone: Asia/Shanghai}\n"
		"  b: {type: external, cron: '0 * * * * ?', shardingTotalCount: 1, timeZone: GMT+8}\n"
		"  c: {type: external, cron: '0 * * * * ?', shardingTotalCount: 1, timeZone: CTT}\n"
		"  d: {type: external, cron: '0 * * * * ?', shardingTotalCount: 1, timeZone: UTC}\n";
	conf_t *c = parse_opts(zones, &sys, &d);
	ok(c != NULL, "IANA names, Java's custom ids and legacy ids load");
	if (!c) for (size_t i = 0; i < conf_diags_count(d); i++) diag("%s", conf_diags_get(d, i)->text);
	if (c) {
		/* validation keeps what it made: each job's cron compiled and zone loaded */
		int all = c->n_jobs == 4;
		for (size_t i = 0; all && i < c->n_jobs; i++)
			all = c->jobs[i].cron_compiled && !strcmp(cron_expr(c->jobs[i].cron_compiled), c->jobs[i].cron) &&
			      c->jobs[i].tz && !c->jobs[i].tz_error;
		ok(all, "each job keeps its compiled cron and its loaded zone");
		is_str(tz_name(c->jobs[2].tz), "Asia/Shanghai", "CTT loaded as Java's alias");
		is_int(tz_offset_at(c->jobs[1].tz, 0), 8 * 3600, "GMT+8 loaded as +08:00");
	}
	conf_free(c);
	conf_diags_free(d);
	c = parse(HEAD "jobs:\n  a: {type: external, cron: '0 * * * * ?', shardingTotalCount: 1, "
	          "timeZone: Mars/Olympus}\n", &d);
	ok(c != NULL, "without a zone lookup in the options, zones are not checked");
	ok(c && c->jobs[0].cron_compiled && !c->jobs[0].tz && !c->jobs[0].tz_error,
	   "... nor loaded; the cron is compiled all the same");
	conf_free(c);
	conf_diags_free(d);

	/* a one-off job: no cron, or an empty one (ElasticJob's OneOffJobBootstrap takes both) */
	c = parse(HEAD "jobs:\n  a: {type: external, shardingTotalCount: 1}\n"
	          "  b: {type: external, cron: ~, shardingTotalCount: 1}\n"
	          "  c: {type: external, cron: '', shardingTotalCount: 1}\n"
	          "  d:\n    type: external\n    cron:\n    shardingTotalCount: 1\n", &d);
	ok(c && c->n_jobs == 4, "a job without cron, with cron ~, '' or nothing is valid");
	int oneoff = c != NULL;
	for (size_t i = 0; c && i < c->n_jobs; i++) oneoff &= !c->jobs[i].cron && !c->jobs[i].cron_compiled;
	ok(oneoff, "... a one-off job each: no cron, nothing compiled");
	conf_free(c);
	conf_diags_free(d);
	/* a blank one is not empty: ElasticJob refuses it as a cron (Quartz) and as a one-off job */
	ERRORS("a blank cron",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: '  '\n    shardingTotalCount: 1\n"
	       "  k: {type: external, cron: \"\\t\", shardingTotalCount: 1}\n",
	       "t.yaml:7:5: jobs.j.cron: blank; give a Quartz cron expression (e.g. \"0/5 * * * * ?\"), or leave cron "
	       "out (or \"\") for a one-off job that runs only when triggered",
	       "t.yaml:9:23: jobs.k.cron: blank; give a Quartz cron expression (e.g. \"0/5 * * * * ?\"), or leave "
	       "cron out (or \"\") for a one-off job that runs only when triggered");
}

static void test_sip(void)
{
	const char *base = HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 4\n"
	                   "    shardingItemParameters: ";
	char y[1024];
	struct { const char *sip; const char *err; } cases[] = {
		/* ElasticJob's own test cases */
		{ "xxx-xxx", "t.yaml:9:29: jobs.j.shardingItemParameters: must be ITEM=PARAMETER pairs "
		             "separated by commas, e.g. \"0=a,1=b\" (got \"xxx-xxx\")" },
		{ "xxx=xxx", "t.yaml:9:29: jobs.j.shardingItemParameters: the item before '=' must be an "
		             "integer 0-3 (got \"xxx\")" },
		/* what Java's split makes of empty pieces */
		{ "'0=a,,1=b'", "t.yaml:9:34: jobs.j.shardingItemParameters: must be ITEM=PARAMETER pairs "
		                "separated by commas, e.g. \"0=a,1=b\" (got \"\")" },
		{ "'0='", "t.yaml:9:30: jobs.j.shardingItemParameters: must be ITEM=PARAMETER pairs "
		          "separated by commas, e.g. \"0=a,1=b\" (got \"0=\")" },
		{ "'0=a=b'", "t.yaml:9:30: jobs.j.shardingItemParameters: must be ITEM=PARAMETER pairs "
		             "separated by commas, e.g. \"0=a,1=b\" (got \"0=a=b\")" },
		{ "'=a'", "t.yaml:9:30: jobs.j.shardingItemParameters: the item before '=' must be an "
		          "integer 0-3 (got \"\")" },
		/* ejob's stricter checks */
		{ "'0=a, 4=b'", "t.yaml:9:35: jobs.j.shardingItemParameters: item 4 is out of range: "
		                "shardingTotalCount is 4, so items are 0-3" },
		{ "'-1=a'", "t.yaml:9:30: jobs.j.shardingItemParameters: item -1 is out of range: "
		            "shardingTotalCount is 4, so items are 0-3" },
		{ "'1=a,1=b'", "t.yaml:9:34: jobs.j.shardingItemParameters: item 1 is given twice; each "
		               "item may have one parameter" },
		/* with an escape in the value its columns are not the file's: the value's start */
		{ "\"0=\\ta,x\"", "t.yaml:9:29: jobs.j.shardingItemParameters: must be ITEM=PARAMETER "
		                  "pairs separated by commas, e.g. \"0=a,1=b\" (got \"x\")" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		snprintf(y, sizeof y, "%s%s\n", base, cases[i].sip);
		errors_are(cases[i].sip, y, NULL, cases[i].err, (const char *)NULL);
	}
	/* accepted as ElasticJob accepts them */
	struct { const char *sip; int n; int item; const char *val; } good[] = {
		{ "'0=A,1=B,2=C'", 3, 2, "C" },
		{ "'0=a,1=b,'", 2, 1, "b" },           /* a trailing empty piece is dropped */
		{ "'0=a=,1=b'", 2, 0, "a" },           /* so is a trailing empty part */
		{ "' 3 =  x y  '", 1, 3, "x y" },
		{ "'+2=p'", 1, 2, "p" },
		{ "',,,'", 0, 0, NULL },               /* nothing but empty pieces */
	};
	conf_diags_t *d;
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		snprintf(y, sizeof y, "%s%s\n", base, good[i].sip);
		conf_t *c = parse(y, &d);
		ok(c && c->jobs[0].items.n_params == (size_t)good[i].n &&
		   (good[i].n == 0 || strcmp(conf_job_item_param(&c->jobs[0], good[i].item), good[i].val) == 0),
		   "accepted: %s", good[i].sip);
		conf_free(c);
		conf_diags_free(d);
	}
}

static void test_limits(void)
{
	conf_diags_t *d;
	/* too big */
	size_t n = CONF_MAX_FILE_BYTES + 1;
	char *big = malloc(n);
	memset(big, '#', n);
	conf_t *c = conf_parse(big, n, "big.yaml", NULL, &d);
	ok(!c && conf_diags_count(d) == 1 &&
	   strcmp(conf_diags_get(d, 0)->text, "big.yaml: is larger than 4 MiB; ejob's configuration "
	          "file is limited to 4194304 bytes") == 0, "a file over 4 MiB is refused");
	conf_diags_free(d);
	free(big);

	/* an alias bomb: 9 levels of 10 aliases would be 10^9 nodes */
	char y[4096];
	size_t o = (size_t)snprintf(y, sizeof y, HEAD "x0: &a0 [a]\n");
	for (int i = 1; i < 10; i++) {
		o += (size_t)snprintf(y + o, sizeof y - o, "x%d: &a%d [", i, i);
		for (int k = 0; k < 10; k++) o += (size_t)snprintf(y + o, sizeof y - o, "%s*a%d", k ? "," : "", i - 1);
		o += (size_t)snprintf(y + o, sizeof y - o, "]\n");
	}
	o += (size_t)snprintf(y + o, sizeof y - o, "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n"
	                      "    shardingTotalCount: 1\n    jobExtraConfigurations: [{a: *a9}]\n");
	c = conf_parse(y, o, "t.yaml", NULL, &d);
	ok(!c, "an alias bomb is refused");
	const conf_diag_t *last = conf_diags_get(d, conf_diags_count(d) - 1);
	is_str(last ? last->text : NULL, "t.yaml:19:5: jobs.j.jobExtraConfigurations: holds more than "
	       "100000 values (with aliases expanded); ejob keeps extra configurations for ElasticJob's "
	       "tools, they should be small", "with its own message");
	conf_diags_free(d);

	/* deep nesting */
	o = (size_t)snprintf(y, sizeof y, HEAD "jobs: ");
	for (int i = 0; i < 70; i++) y[o++] = '[';
	for (int i = 0; i < 70; i++) y[o++] = ']';
	y[o++] = '\n';
	c = conf_parse(y, o, "t.yaml", NULL, &d);
	/* the root mapping and 63 lists make 64 levels: the 64th '[' (column 70) is one too many */
	char want[1024];
	size_t w = (size_t)snprintf(want, sizeof want, "t.yaml:4:70: jobs");
	for (int i = 0; i < 63; i++) w += (size_t)snprintf(want + w, sizeof want - w, "[0]");
	snprintf(want + w, sizeof want - w, ": nested more than 64 levels deep; ejob's configuration "
	         "needs far fewer");
	ok(!c && conf_diags_count(d) == 1, "nesting over 64 levels is refused");
	is_str(conf_diags_count(d) ? conf_diags_get(d, 0)->text : NULL, want, "with the path to it");
	conf_diags_free(d);

	/* a config node ZooKeeper would refuse */
	size_t dl = 1100000;
	char *yy = malloc(dl + 512);
	o = (size_t)snprintf(yy, 512, HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n"
	                     "    shardingTotalCount: 1\n    description: ");
	memset(yy + o, 'd', dl);
	o += dl;
	o += (size_t)snprintf(yy + o, 16, "\n");
	c = conf_parse(yy, o, "t.yaml", NULL, &d);
	ok(!c && conf_diags_count(d) == 1, "a job whose node is over 1 MiB is refused");
	is_str(conf_diags_count(d) ? conf_diags_get(d, 0)->text : NULL,
	       "t.yaml:5:3: jobs.j: its config node would be 1100348 bytes, and ZooKeeper refuses nodes "
	       "over 1 MiB (jute.maxbuffer); make props, description or jobExtraConfigurations smaller",
	       "with its size");
	conf_diags_free(d);
	/* just under the limit is fine */
	o -= dl + 1;
	memset(yy + o, 'd', 1000000);
	o += 1000000;
	yy[o++] = '\n';
	c = conf_parse(yy, o, "t.yaml", NULL, &d);
	ok(c != NULL, "a node of about 1 MB is fine");
	conf_free(c);
	conf_diags_free(d);
	free(yy);

	/* a self-referencing alias cannot be built */
	ERRORS("an anchor is usable only after its node", HEAD "jobs: &j {a: *j}\n",
	       "t.yaml:4:14: alias *\"j\" refers to no anchor defined before it");
}

static void test_overrides(void)
{
	conf_opts_t o = { .cpus = 2, .server_lists = "zk9:2181", .namespace = "cli", .ip = "::1",
	                  .workers = 3, .lookup_user = fake_user, .lookup_group = fake_group };
	conf_diags_t *d;
	conf_t *c = parse_opts("supervisor:\n  attachAllowUids: [alice, 7]\n  attachAllowGids: [staff]\n"
	                       "jobs: {}\n", &o, &d);
	if (ok(c != NULL, "overrides stand in for the missing regCenter")) {
		is_str(c->reg_center.server_lists, "zk9:2181", "--zk");
		is_str(c->reg_center.namespace, "cli", "--namespace");
		is_str(c->supervisor.ip, "::1", "--ip");
		is_int(c->supervisor.workers, 3, "--workers");
		is_int(c->supervisor.attach_allow_uids[0].id, 1001, "alice is 1001");
		is_str(c->supervisor.attach_allow_uids[0].name, "alice", "and keeps her name");
		is_int(c->supervisor.attach_allow_uids[1].id, 7, "7");
		ok(c->supervisor.attach_allow_uids[1].name == NULL, "a numeric id has no name");
		is_int(c->supervisor.attach_allow_gids[0].id, 50, "staff is 50");
	}
	conf_free(c);
	conf_diags_free(d);

	conf_opts_t bad = { .namespace = "a b", .workers = 2000, .lookup_user = fake_user };
	errors_are("overrides are checked like the keys they replace",
	           HEAD "supervisor:\n  attachAllowUids: [bob]\njobs: {}\n", &bad,
	           "(command line): regCenter.namespace: the name \"a b\" contains whitespace or a control "
	           "character; a namespace must be 1-255 bytes without '/', whitespace or control "
	           "characters, and not '.', '..' or 'zookeeper'",
	           "(command line): supervisor.workers: must be an integer 1-1024 (got \"2000\")",
	           "t.yaml:5:21: supervisor.attachAllowUids[0]: no user named \"bob\" on this machine",
	           (const char *)NULL);

	/* without lookups, names are kept for later */
	c = parse(HEAD "supervisor:\n  attachAllowUids: [bob]\njobs: {}\n", &d);
	ok(c && c->supervisor.attach_allow_uids[0].id == CONF_ID_UNRESOLVED &&
	   strcmp(c->supervisor.attach_allow_uids[0].name, "bob") == 0, "no lookup: unresolved name");
	conf_free(c);
	conf_diags_free(d);

	/* the host's lookups know root */
	conf_opts_t sys;
	conf_opts_system(&sys);
	ok(sys.cpus >= 1, "conf_opts_system counts CPUs (%d)", sys.cpus);
	c = parse_opts(HEAD "supervisor:\n  attachAllowUids: [root]\n  attachAllowGids: [root]\njobs: {}\n",
	               &sys, &d);
	ok(c && c->supervisor.attach_allow_uids[0].id == 0 && c->supervisor.attach_allow_gids[0].id == 0,
	   "root is uid 0 and gid 0");
	conf_free(c);
	conf_diags_free(d);
}

static void test_load_file(void)
{
	conf_diags_t *d;
	errno = 0;
	conf_t *c = conf_load_file("t/no-such-file.yaml", NULL, &d);
	ok(!c && errno == ENOENT, "a missing file: NULL, ENOENT");
	is_str(conf_diags_count(d) ? conf_diags_get(d, 0)->text : NULL,
	       "t/no-such-file.yaml: cannot read: No such file or directory", "its message");
	conf_diags_free(d);
	c = conf_load_file("t", NULL, &d);
	ok(!c && errno == EISDIR, "a directory: EISDIR");
	conf_diags_free(d);
	c = conf_load_file("examples/ejob.yaml", NULL, NULL);
	ok(c != NULL, "diags may be NULL");
	conf_free(c);
	c = parse("jobs: [", NULL);
	ok(c == NULL, "and errors are then only counted in the result");
}

static void test_equal(void)
{
	conf_diags_t *d;
	const char *y = HEAD "jobs:\n"
		"  a: &a\n    type: script\n    cron: '0 * * * * ?'\n    shardingTotalCount: 2\n"
		"    props: {script.command.line: r, p: '1', q: '2'}\n"
		"  b:\n    <<: *a\n"
		"  c:\n    <<: *a\n    props: {q: '2', script.command.line: r, p: '1'}\n"
		"  d:\n    <<: *a\n    props: {q: '2', script.command.line: r, p: '3'}\n"
		"  e:\n    <<: *a\n    timeoutSeconds: 1\n"
		"  f:\n    <<: *a\n    shardingItemParameters: 0=x\n"
		"  g:\n    <<: *a\n    jobListenerTypes: [x]\n"
		"  h:\n    <<: *a\n    label: ''\n";
	conf_t *c = parse(y, &d);
	if (!ok(c != NULL, "jobs to compare")) return;
	/* equality ignores the name only by comparing two jobs of the same name: rename */
	conf_job_t j[8];
	for (int i = 0; i < 8; i++) {
		j[i] = c->jobs[i];
		j[i].name = "same";
	}
	ok(conf_job_equal(&j[0], &j[1]), "merged copy is equal");
	ok(conf_job_equal(&j[0], &j[2]), "props in another order are equal");
	ok(!conf_job_equal(&j[0], &j[3]), "a changed prop value is not");
	ok(!conf_job_equal(&j[0], &j[4]), "timeoutSeconds counts");
	ok(!conf_job_equal(&j[0], &j[5]), "shardingItemParameters counts");
	ok(!conf_job_equal(&j[0], &j[6]), "listener types count");
	ok(!conf_job_equal(&j[0], &j[7]), "an empty label is not an unset one");
	ok(!conf_job_equal(&c->jobs[0], &c->jobs[1]), "the name counts");
	conf_free(c);
	conf_diags_free(d);
}

int main(void)
{
	test_reference();
	test_defaults();
	test_values();
	test_cron();
	test_sip();
	test_limits();
	test_overrides();
	test_load_file();
	test_equal();
	return done_testing();
}
