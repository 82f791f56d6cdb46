/* t/92-ctl-import.c: ejobctl import, an ElasticJob Spring Boot configuration as an ejob one.
 * The conversion (tools/ejobctl_migrate.c) is driven directly on inputs in the shape of
 * ElasticJob 3.0.4's own example (examples/elasticjob-example-lite-springboot, application.yml
 * and a profile's application-prod.yml with the DataSource), checking the exact file written and
 * the exact message of every line that has no ejob meaning; the same as .properties with
 * kebab-case keys (Spring's relaxed binding); what SnakeYAML's YAML 1.1 does to plain scalars,
 * merge keys, placeholders, a profile's document; the strategy names ElasticJob has; and
 * garbage. The real binary: what it writes passes `ejobctl validate`, -o, and its exit statuses. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/conf.h"
#include "t/lib/tlib.h"
#include "t/tap.h"
#include "tools/ejobctl_migrate.h"

#define EJOBCTL BUILT("tools/ejobctl")

static conf_opts_t opts;

/* the conversion of inputs (name, text, name, text, ..., NULL); messages joined by newlines */
static int convert(struct migrate_result *r, char **msgs, ...)
{
	struct migrate_input in[8];
	size_t n = 0;
	va_list ap;
	va_start(ap, msgs);
	for (const char *name; n < 8 && (name = va_arg(ap, const char *));) {
		const char *text = va_arg(ap, const char *);
		size_t l = strlen(name);
		in[n++] = (struct migrate_input){ name, text, strlen(text), l > 11 && !strcmp(name + l - 11, ".properties") };
	}
	va_end(ap);
	int rc = migrate_spring(in, n, &opts, r);
	size_t len = 1;
	for (size_t i = 0; i < r->msgs.n; i++) len += strlen(r->msgs.v[i].text) + 1;
	*msgs = calloc(1, len);
	for (size_t i = 0; i < r->msgs.n; i++) strcat(strcat(*msgs, r->msgs.v[i].text), "\n");
	return rc;
}

/* does this ejob's loader take a job with this jobShardingStrategyType / this key? */
static char *run_out, *run_err;
static int run(const char *const *argv)
{
	free(run_out), free(run_err);
	run_out = run_err = NULL;
	int st = tlib_run(argv, &run_out, &run_err);
	if (!run_out) run_out = strdup("");
	if (!run_err) run_err = strdup("");
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char app_yml[] =
	"spring:\n"
	"  profiles:\n"
	"    active: prod\n"
	"  application:\n"
	"    name: orders\n"
	"\n"
	"elasticjob:\n"
	"  tracing:\n"
	"    type: RDB\n"
	"  regCenter:\n"
	"    serverLists: zk1.example.com:2181,zk2.example.com:2181\n"
	"    namespace: elasticjob-lite-springboot\n"
	"    sessionTimeoutMilliseconds: 60000\n"
	"  jobs:\n"
	"    simpleJob:\n"
	"      elasticJobClass: com.example.orders.job.SpringBootSimpleJob\n"
	"      cron: 0/5 * * * * ?\n"
	"      shardingTotalCount: 3\n"
	"      shardingItemParameters: 0=Beijing,1=Shanghai,2=Guangzhou\n"
	"    scriptJob:\n"
	"      elasticJobType: SCRIPT\n"
	"      cron: 0/10 * * * * ?\n"
	"      shardingTotalCount: 3\n"
	"      shardingItemParameters: 0=Beijing,1=Shanghai,2=Guangzhou\n"
	"      failover: true\n"
	"      jobErrorHandlerType: DINGTALK\n"
	"      props:\n"
	"        script.command.line: \"echo SCRIPT Job: \"\n"
	"        dingtalk:\n"
	"          webhook: https://oapi.dingtalk.com/robot/send?access_token=you_token\n"
	"          keyword: you_keyword\n"
	"          connectTimeout: 3000\n"
	"    manualScriptJob:\n"
	"      elasticJobType: SCRIPT\n"
	"      jobBootstrapBeanName: manualScriptJobBean\n"
	"      shardingTotalCount: 9\n"
	"      props:\n"
	"        script.command.line: \"echo Manual SCRIPT Job: \"\n"
	"    httpJob:\n"
	"      elasticJobType: HTTP\n"
	"      cron: 0 0/15 * * * ?\n"
	"      timeZone: GMT+08:00\n"
	"      shardingTotalCount: 1\n"
	"      monitorExecution: true\n"
	"      misfire: true\n"
	"      reconcileIntervalMinutes: 10\n"
	"      jobListenerTypes: [ orderListener ]\n"
	"      props:\n"
	"        http.uri: https://orders.example.com/reindex\n"
	"        http.method: POST\n"
	"        http.data: full=true\n"
	"  dump:\n"
	"    port: 9888\n";

static const char prod_yml[] =
	"spring:\n"
	"  datasource:\n"
	"    url: jdbc:postgresql://db.example.com:5432/elasticjob?currentSchema=trace&ssl=true\n"
	"    driver-class-name: org.postgresql.Driver\n"
	"    username: ejob\n"
	"    password: secret\n"
	"    hikari:\n"
	"      maximum-pool-size: 4\n";

/* what both forms convert to, after the header's first line */
static const char body[] =
	"# (ElasticJob's Spring Boot starter). What has no ejob meaning was left out, and said on\n"
	"# stderr with what to do instead. Keys: docs/config.md; the mapping: docs/migrating.md.\n"
	"regCenter:\n"
	"  serverLists: \"zk1.example.com:2181,zk2.example.com:2181\"\n"
	"  namespace: elasticjob-lite-springboot\n"
	"  sessionTimeoutMilliseconds: 60000\n"
	"tracing:\n"
	"  type: RDB\n"
	"  url: \"postgresql://db.example.com:5432/elasticjob?options=-c%20search_path%3Dtrace&sslmode=verify-full\"\n"
	"  username: ejob\n"
	"  password: secret\n"
	"jobs:\n"
	"  scriptJob:\n"
	"    type: script\n"
	"    cron: \"0/10 * * * * ?\"\n"
	"    shardingTotalCount: 3\n"
	"    shardingItemParameters: \"0=Beijing,1=Shanghai,2=Guangzhou\"\n"
	"    monitorExecution: false\n"
	"    failover: true\n"
	"    misfire: false\n"
	"    reconcileIntervalMinutes: 0\n"
	"    jobErrorHandlerType: DINGTALK\n"
	"    props:\n"
	"      script.command.line: \"echo SCRIPT Job: \"\n"
	"      dingtalk.webhook: \"https://oapi.dingtalk.com/robot/send?access_token=you_token\"\n"
	"      dingtalk.keyword: you_keyword\n"
	"  manualScriptJob:\n"
	"    type: script\n"
	"    shardingTotalCount: 9\n"
	"    monitorExecution: false\n"
	"    misfire: false\n"
	"    reconcileIntervalMinutes: 0\n"
	"    props:\n"
	"      script.command.line: \"echo Manual SCRIPT Job: \"\n"
	"  httpJob:\n"
	"    type: http\n"
	"    cron: \"0 0/15 * * * ?\"\n"
	"    timeZone: \"GMT+08:00\"\n"
	"    shardingTotalCount: 1\n"
	"    monitorExecution: true\n"
	"    misfire: true\n"
	"    reconcileIntervalMinutes: 10\n"
	"    props:\n"
	"      http.uri: https://orders.example.com/reindex\n"
	"      http.method: POST\n"
	"      http.data: \"full=true\"\n";

static const char app_msgs[] =
	"application.yml:5: spring.application: your application's settings, not ElasticJob's: left out\n"
	"application.yml:16: elasticjob.jobs.simpleJob.elasticJobClass: com.example.orders.job.SpringBootSimpleJob is a "
	"Java class: ejob runs no Java, so job 'simpleJob' is not converted; do its work in a script job (type: script, "
	"props.script.command.line), a native one (type: native, a C function) or a dataflow one (type: dataflow, fetch "
	"and process in C): docs/migrating.md\n"
	"application.yml:21: elasticjob.jobs: the starter's defaults are monitorExecution false, misfire false and "
	"reconcileIntervalMinutes 0 (its fields are plain booleans and ints), not ElasticJob's true, true and 10: written "
	"out for each job that does not set them, so that they run as they did\n"
	"application.yml:32: elasticjob.jobs.scriptJob.props.dingtalk.connectTimeout: not a prop of ElasticJob's error "
	"handler, which ignores it (its key is dingtalk.connectTimeoutMilliseconds), and so would ejob: left out\n"
	"application.yml:35: elasticjob.jobs.manualScriptJob.jobBootstrapBeanName: a Spring bean name: ejob has no beans; "
	"left out. The job has no cron, so it is a one-off job: 'ejobctl trigger manualScriptJob' runs it where your code "
	"called the bean's execute()\n"
	"application.yml:47: elasticjob.jobs.httpJob.jobListenerTypes: ElasticJob listener classes (Java SPI): ejob runs "
	"none; left out. ejob's listeners are commands: props ejob.listener.before, after, beforeAll, afterAll "
	"(docs/config.md, Listeners)\n"
	"application.yml:53: elasticjob.dump.port: ElasticJob's dump port (SnapshotService: echo dump@JOB | nc HOST 9888): "
	"ejob has none; 'ejobctl dump JOB' prints a job's nodes from any machine that reaches ZooKeeper; left out\n"
	"application-prod.yml:8: spring.datasource.hikari: the connection pool's settings: ejob's tracing keeps one "
	"PostgreSQL connection of its own (libpq), with no pool to set; left out\n";

/* the same as one .properties file, in kebab case */
static const char app_properties[] =
	"# orders\n"
	"spring.profiles.active=prod\n"
	"spring.datasource.url=jdbc:postgresql://db.example.com:5432/elasticjob?currentSchema=trace&ssl=true\n"
	"spring.datasource.username=ejob\n"
	"spring.datasource.password=secret\n"
	"elasticjob.tracing.type=RDB\n"
	"elasticjob.reg-center.server-lists=zk1.example.com:2181,\\\n"
	"    zk2.example.com:2181\n"
	"elasticjob.reg-center.namespace=elasticjob-lite-springboot\n"
	"elasticjob.reg-center.session-timeout-milliseconds=60000\n"
	"elasticjob.jobs.scriptJob.elastic-job-type=SCRIPT\n"
	"elasticjob.jobs.scriptJob.cron=0/10 * * * * ?\n"
	"elasticjob.jobs.scriptJob.sharding-total-count=3\n"
	"elasticjob.jobs.scriptJob.sharding-item-parameters=0=Beijing,1=Shanghai,2=Guangzhou\n"
	"elasticjob.jobs.scriptJob.failover=true\n"
	"elasticjob.jobs.scriptJob.job-error-handler-type=DINGTALK\n"
	"elasticjob.jobs.scriptJob.props.script.command.line=echo SCRIPT Job:\\u0020\n"
	"elasticjob.jobs.scriptJob.props.dingtalk.webhook=https://oapi.dingtalk.com/robot/send?access_token=you_token\n"
	"elasticjob.jobs.scriptJob.props.dingtalk.keyword=you_keyword\n"
	"elasticjob.jobs.manualScriptJob.elastic-job-type=SCRIPT\n"
	"elasticjob.jobs.manualScriptJob.sharding-total-count=9\n"
	"elasticjob.jobs.manualScriptJob.props.script.command.line=echo Manual SCRIPT Job:\\u0020\n"
	"elasticjob.jobs.httpJob.elastic-job-type=HTTP\n"
	"elasticjob.jobs.httpJob.cron=0 0/15 * * * ?\n"
	"elasticjob.jobs.httpJob.time-zone=GMT+08:00\n"
	"elasticjob.jobs.httpJob.sharding-total-count=1\n"
	"elasticjob.jobs.httpJob.monitor-execution=true\n"
	"elasticjob.jobs.httpJob.misfire=true\n"
	"elasticjob.jobs.httpJob.reconcile-interval-minutes=10\n"
	"elasticjob.jobs.httpJob.props.http.uri=https://orders.example.com/reindex\n"
	"elasticjob.jobs.httpJob.props.http.method=POST\n"
	"elasticjob.jobs.httpJob.props.http.data=full=true\n";

static void write_file(const char *path, const char *text)
{
	if (tlib_write_file(path, text, strlen(text)) < 0) BAIL_OUT("write %s: %s", path, strerror(errno));
}

int main(void)
{
	tlib_init(60);
	conf_opts_system(&opts);
	char *msgs = NULL, want[8192];
	struct migrate_result r;

	/* ---- ElasticJob's example, with a profile ---- */
	is_int(convert(&r, &msgs, "application.yml", app_yml, "application-prod.yml", prod_yml, NULL), 0, "converts");
	is_int(r.status, 0, "  status 0");
	ok(r.jobs == 4 && r.converted == 3, "  3 of 4 jobs (%d of %d)", r.converted, r.jobs);
	snprintf(want, sizeof want, "# An ejob configuration, made by 'ejobctl import' from application.yml and "
	         "application-prod.yml\n%s", body);
	is_str(r.out, want, "  the ejob configuration: regCenter, tracing from the profile's PostgreSQL DataSource, the "
	       "script, one-off and http jobs with the starter's defaults written out");
	is_str(msgs, app_msgs, "  a message per key without ejob meaning: the Java class, the bean, the listener, the "
	       "dump port, the pool, a prop ElasticJob ignores, the application's own, the starter's defaults");
	conf_diags_t *d = NULL;
	conf_t *c = r.out ? conf_parse(r.out, r.len, "out", &opts, &d) : NULL;
	ok(c && c->n_jobs == 3 && c->tracing.url && !strcmp(c->jobs[1].name, "manualScriptJob") && !c->jobs[1].cron &&
	   !c->jobs[0].monitor_execution && !c->jobs[0].misfire && c->jobs[0].reconcile_interval_minutes == 0 &&
	   c->jobs[2].monitor_execution && c->jobs[2].reconcile_interval_minutes == 10 && c->reg_center.session_timeout_ms == 60000,
	   "  ejob's loader takes it: manualScriptJob one-off, the starter's defaults and the file's values in force");
	conf_free(c);
	conf_diags_free(d);
	char *yaml_out = r.out ? strdup(r.out) : NULL;
	migrate_result_free(&r);
	free(msgs);

	/* ---- the same as .properties, kebab case ---- */
	is_int(convert(&r, &msgs, "application.properties", app_properties, NULL), 0, ".properties: converts");
	snprintf(want, sizeof want, "# An ejob configuration, made by 'ejobctl import' from application.properties\n%s", body);
	is_str(r.out, want, "  the same file (relaxed binding: server-lists is serverLists; a continued line; \\u0020)");
	is_str(msgs, "application.properties:2: spring.profiles.active: profile prod: its file (application-prod.yml or "
	             ".properties) is read only if given too: ejobctl import application.properties application-prod.yml\n"
	             "application.properties:11: elasticjob.jobs: the starter's defaults are monitorExecution false, misfire "
	             "false and reconcileIntervalMinutes 0 (its fields are plain booleans and ints), not ElasticJob's true, true "
	             "and 10: written out for each job that does not set them, so that they run as they did\n",
	       "  nothing else to say but that the profile's own file was not given");
	migrate_result_free(&r);
	free(msgs);

	/* ---- YAML 1.1 as SnakeYAML reads it, merge keys, placeholders, a profile's document ---- */
	static const char edge[] =
		"base: &base\n"
		"  elasticJobType: SCRIPT\n"
		"  shardingTotalCount: 2\n"
		"  props: {script.command.line: /bin/true}\n"
		"elasticjob:\n"
		"  reg-center:\n"
		"    server-lists: ${ZK_SERVERS:localhost:2181}\n"
		"    namespace: orders\n"
		"    session-timeout-milliseconds: 0\n"
		"    ensemble-tracker: false\n"
		"  jobs:\n"
		"    a:\n"
		"      <<: *base\n"
		"      cron: 0 0 12 * * ?\n"
		"      job-parameter: 1:30\n"
		"      description: yes\n"
		"      shardingTotalCount: 0x04\n"
		"      misfire: on\n"
		"      label: x\n"
		"---\n"
		"spring.config.activate.on-profile: test\n"
		"elasticjob.reg-center.namespace: test\n";
	is_int(convert(&r, &msgs, "edge.yml", edge, NULL), 0, "YAML 1.1, merge keys, placeholders: converts");
	is_str(r.out, "# An ejob configuration, made by 'ejobctl import' from edge.yml\n"
	              "# (ElasticJob's Spring Boot starter). What has no ejob meaning was left out, and said on\n"
	              "# stderr with what to do instead. Keys: docs/config.md; the mapping: docs/migrating.md.\n"
	              "regCenter:\n"
	              "  serverLists: localhost:2181\n"
	              "  namespace: orders\n"
	              "jobs:\n"
	              "  a:\n"
	              "    type: script\n"
	              "    cron: \"0 0 12 * * ?\"\n"
	              "    shardingTotalCount: 4\n"
	              "    jobParameter: \"90\"\n"
	              "    monitorExecution: false\n"
	              "    misfire: true\n"
	              "    reconcileIntervalMinutes: 0\n"
	              "    description: \"true\"\n"
	              "    props:\n"
	              "      script.command.line: /bin/true\n",
	       "  the merged keys under the job's own, 1:30 as 90, yes as true, 0x04 as 4, the placeholder's default");
	is_str(msgs,
	       "edge.yml:2: base: your application's settings, not ElasticJob's: left out\n"
	       "edge.yml:7: elasticjob.reg-center.server-lists: ${ZK_SERVERS:localhost:2181} is a placeholder Spring resolves "
	       "from the environment; import cannot: its default 'localhost:2181' is written; write the value you run with\n"
	       "edge.yml:9: elasticjob.reg-center.session-timeout-milliseconds: 0 is Curator's default, 60000 ms: ejob's "
	       "default is 6000 ms (failover within 6 s) and is taken; write sessionTimeoutMilliseconds: 60000 to keep "
	       "ElasticJob's\n"
	       "edge.yml:10: elasticjob.reg-center.ensemble-tracker: ElasticJob's starter does not read it (ZookeeperProperties "
	       "has no such key), so its Curator tracked the ensemble whatever this said: left out\n"
	       "edge.yml:14: elasticjob.jobs: the starter's defaults are monitorExecution false, misfire false and "
	       "reconcileIntervalMinutes 0 (its fields are plain booleans and ints), not ElasticJob's true, true and 10: "
	       "written out for each job that does not set them, so that they run as they did\n"
	       "edge.yml:15: elasticjob.jobs.a.job-parameter: SnakeYAML reads 1:30 as an integer (YAML 1.1), so ElasticJob got "
	       "\"90\": written as \"90\"; quote it in the source if you meant 1:30\n"
	       "edge.yml:16: elasticjob.jobs.a.description: SnakeYAML reads yes as a boolean (YAML 1.1), so ElasticJob got "
	       "\"true\": written as \"true\"; quote it in the source if you meant yes\n"
	       "edge.yml:19: elasticjob.jobs.a.label: not a key of ElasticJob's starter (ElasticJobConfigurationProperties): "
	       "Spring Boot ignores it, and so does import\n"
	       "edge.yml:21: spring.config.activate.on-profile: document 2 applies to profile test only: left out; to import "
	       "it, give its keys in a file of their own after this one (ejobctl import edge.yml PROFILE.yml)\n",
	       "  each said where it is written");
	migrate_result_free(&r);
	free(msgs);

	/* ---- ElasticJob's strategy names (3.0.5's SINGLE_SHARDING_BALANCE too) and 3.0.5's pool key ---- */
	static const char *const strategies[] = { "AVG_ALLOCATION", "ODEVITY", "ROUND_ROBIN", "SINGLE_SHARDING_BALANCE" };
	for (size_t i = 0; i < 5; i++) {
		int pool = i == 4;
		const char *key = pool ? "jobExecutorThreadPoolSizeProviderType" : "jobShardingStrategyType";
		const char *v = pool ? "CPU" : strategies[i];
		char in[1024], line[256];
		snprintf(in, sizeof in, "elasticjob:\n  reg-center: {server-lists: \"zk:2181\", namespace: ns}\n  jobs:\n"
		         "    j:\n      elasticJobType: SCRIPT\n      shardingTotalCount: 2\n      %s: %s\n"
		         "      props: {script.command.line: /bin/true}\n", key, v);
		snprintf(line, sizeof line, "\n    %s: %s\n", key, v);
		convert(&r, &msgs, "s.yml", in, NULL);
		ok(r.status == 0 && r.out && strstr(r.out, line), "%s: %s written as ElasticJob names it", key, v);
		if (r.status) diag("%s", msgs);
		migrate_result_free(&r);
		free(msgs);
	}

	/* ---- what is not such a configuration, or has nothing to convert ---- */
	convert(&r, &msgs, "ejob.yaml", "regCenter: {serverLists: \"a:1\", namespace: x}\njobs: {}\n", NULL);
	ok(r.status == 2 && !r.out, "an ejob configuration: status 2, nothing written");
	is_str(msgs, "ejob.yaml: no elasticjob.* keys: not an ElasticJob Spring Boot configuration (it looks like an ejob "
	             "configuration already: ejobctl validate FILE)\n", "  says what it is");
	migrate_result_free(&r), free(msgs);
	convert(&r, &msgs, "java.yml", "elasticjob:\n  reg-center: {server-lists: \"zk:2181\", namespace: ns}\n  jobs:\n"
	        "    j:\n      elasticJobClass: a.B\n      shardingTotalCount: 2\n", NULL);
	ok(r.status == 2 && !r.out && r.jobs == 1 && !r.converted && strstr(msgs, "java.yml:5: elasticjob.jobs.j.elasticJobClass: "),
	   "only Java jobs: status 2, the class named");
	migrate_result_free(&r), free(msgs);
	convert(&r, &msgs, "noreg.yml", "elasticjob:\n  jobs:\n    j: {elasticJobType: SCRIPT, shardingTotalCount: 1}\n", NULL);
	ok(r.status == 2 && !r.out, "no reg-center: status 2");
	is_str(msgs, "noreg.yml: elasticjob.reg-center: not set: ElasticJob cannot start without its ZooKeeper (server-lists, "
	             "namespace), nor can ejob: nothing converted\n", "  says so");
	migrate_result_free(&r), free(msgs);
	convert(&r, &msgs, "bad.yml", "elasticjob:\n  reg-center: {server-lists: \"zk:2181\", namespace: ns}\n  jobs:\n"
	        "    j:\n      elasticJobType: SCRIPT\n      shardingTotalCount: 2\n      cron: 0 0 25 * * ?\n"
	        "      props: {script.command.line: /bin/true}\n    k:\n      elasticJobType: SCRIPT\n      shardingTotalCount: lots\n"
	        "    m:\n      elasticJobType: SCRIPT\n      shardingTotalCount: 1\n      props: {script.command.line: /bin/true}\n", NULL);
	ok(r.status == 0 && r.converted == 1 && r.out && strstr(r.out, "\n  m:\n") && !strstr(r.out, "\n  j:\n"),
	   "a job ejob's loader refuses is left out, the others written");
	if (!ok(strstr(msgs, "bad.yml:7: elasticjob.jobs.j.cron: hours: value 25 out of range 0-23 (jobs.j.cron); job 'j' is "
	                     "not converted\n") &&
	        strstr(msgs, "bad.yml:11: elasticjob.jobs.k.shardingTotalCount: 'lots' is not an integer: Spring Boot would "
	                     "not start; job 'k' is not converted\n"), "  each said at its line with the loader's reason"))
		diag("%s", msgs);
	migrate_result_free(&r), free(msgs);

	/* ---- garbage: said, never a crash ---- */
	static const char *const garbage[] = {
		"elasticjob: [1, 2\n", "- a\n- b\n", "elasticjob:\n  jobs: 5\n", "\x01\x02\xff",
		"a: &a [*a]\nelasticjob: {jobs: {j: *a}}\n",
		"a: &a {b: *a}\nelasticjob:\n  jobs:\n    j:\n      <<: *a\n",
		"x: &x [1,1,1,1,1,1,1,1,1,1]\ny: &y [*x,*x,*x,*x,*x,*x,*x,*x,*x,*x]\nz: &z [*y,*y,*y,*y,*y,*y,*y,*y,*y,*y]\n"
		"w: &w [*z,*z,*z,*z,*z,*z,*z,*z,*z,*z]\nv: &v [*w,*w,*w,*w,*w,*w,*w,*w,*w,*w]\nu: [*v,*v,*v,*v,*v,*v,*v,*v,*v,*v]\n",
		"elasticjob.jobs.j.props=\\\n", "=\n:\n\\u12\n\\",
	};
	int crashed = 0;
	for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
		int prop = i >= 7;
		struct migrate_input in = { prop ? "g.properties" : "g.yml", garbage[i], strlen(garbage[i]), prop };
		pid_t pid = fork();
		if (pid == 0) {
			struct migrate_result gr;
			int rc = migrate_spring(&in, 1, &opts, &gr);
			_exit(rc == 0 && gr.status == 2 && gr.msgs.n > 0 ? 0 : 3);
		}
		int st;
		waitpid(pid, &st, 0);
		if (!ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "garbage %zu: status 2 with a reason, no crash", i)) crashed++;
	}

	/* ---- the binary ---- */
	char a[600], p[600], o[600], props[600];
	snprintf(a, sizeof a, "%s/application.yml", tlib_tmpdir());
	snprintf(p, sizeof p, "%s/application-prod.yml", tlib_tmpdir());
	snprintf(o, sizeof o, "%s/ejob.yaml", tlib_tmpdir());
	snprintf(props, sizeof props, "%s/application.properties", tlib_tmpdir());
	write_file(a, app_yml);
	write_file(p, prod_yml);
	write_file(props, app_properties);
	is_int(run((const char *[]){ EJOBCTL, "import", a, p, NULL }), 0, "ejobctl import application.yml application-prod.yml: exit 0");
	ok(yaml_out && strstr(run_out, "\nregCenter:\n") && !strcmp(strstr(run_out, "\nregCenter:\n"), strstr(yaml_out, "\nregCenter:\n")),
	   "  prints the file on stdout");
	ok(strstr(run_err, "elasticJobClass: com.example.orders.job.SpringBootSimpleJob is a Java class") &&
	   strstr(run_err, "ejobctl import: 3 of 4 jobs converted (the others: above)\n"), "  the messages and a count on stderr");
	is_int(run((const char *[]){ EJOBCTL, "import", props, "-o", o, NULL }), 0, "ejobctl import application.properties -o FILE: exit 0");
	is_str(run_out, "", "  nothing on stdout");
	struct stat st;
	ok(stat(o, &st) == 0 && (st.st_mode & 0777) == 0600, "  FILE written, mode 0600 (it holds the database's password)");
	is_int(run((const char *[]){ EJOBCTL, "validate", "--now", "1795478400", o, NULL }), 0, "ejobctl validate FILE: exit 0");
	ok(!strncmp(run_out, "ok\nscriptJob: script, cron \"0/10 * * * * ?\"", 42) &&
	   strstr(run_out, "\nmanualScriptJob: script, one-off (no cron), next on trigger, 9 items\n") &&
	   strstr(run_out, "\nhttpJob: http, cron \"0 0/15 * * * ?\" (GMT+08:00), next 2026-11-24T08:15:00+08:00, 1 item\n"),
	   "  ok, and every job");
	is_int(run((const char *[]){ EJOBCTL, "import", a, "-o", o, NULL }), 1, "-o FILE that exists: exit 1");
	ok(strstr(run_err, "ejob.yaml: cannot create: File exists (it is not overwritten") != NULL, "  not overwritten");
	is_int(run((const char *[]){ EJOBCTL, "import", o, NULL }), 2, "an ejob configuration: exit 2");
	ok(strstr(run_err, "it looks like an ejob configuration already") && strstr(run_err, "ejobctl import: nothing converted\n"),
	   "  says so");
	is_int(run((const char *[]){ EJOBCTL, "import", "/nonexistent/application.yml", NULL }), 2, "a file that is not there: exit 2 (a configuration problem)");
	is_int(run((const char *[]){ EJOBCTL, "import", NULL }), 2, "no file: exit 2");
	is_int(run((const char *[]){ EJOBCTL, "import", a, "--frobnicate", NULL }), 2, "an unknown option: exit 2");
	is_int(run((const char *[]){ EJOBCTL, "--help", NULL }), 0, "ejobctl --help");
	ok(strstr(run_out, "  import FILE... [-o OUT]") != NULL, "  lists import");
	free(yaml_out), free(run_out), free(run_err);
	return done_testing();
}
