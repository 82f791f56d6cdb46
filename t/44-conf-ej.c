/* t/44-conf-ej.c: ElasticJob's keys as ejob reads them (issue 24: "what ElasticJob accepts, ejob
 * accepts").
 *
 * First in the file: ElasticJob's strategy names (and ejob's old ones, taken with a warning and
 * published as ElasticJob's), 3.0.5's executor key, the regCenter keys and job keys ejob takes
 * and does not act on (a warning each), ejob's concurrency.
 *
 * Then in the config node, against the real ElasticJob-Lite 3.0.4:
 * Generates config nodes from values of each key that matter (good ones, ones ElasticJob cannot
 * load, ones it loads and fails on when it uses them, ones it ignores), and has ElasticJob's own
 * classes (t/java/EjNodeOracle.java on the real elasticjob-lite-3.0.4.jar: YamlEngine,
 * JobConfiguration, CronScheduleBuilder, JobShardingStrategyFactory, ShardingItemParameters,
 * TimeZone) say what they do with each. ejob (conf_node_parse) must agree:
 *   - a node ElasticJob cannot load is refused (an error);
 *   - a key ElasticJob fails on when it uses it (a cron, a strategy, item parameters) is that
 *     key's own error (kept.keys), the rest taken;
 *   - the item parameters and the zone ElasticJob would use are the ones ejob uses (offsets at
 *     four instants: an id Java does not know is GMT on both sides);
 * and where ejob differs on purpose, exactly that: 3.0.5's executor key (3.0.4 cannot load it),
 * 3.0.5's SINGLE_SHARDING_BALANCE (3.0.4 has no such strategy), ejob's own old strategy names
 * (taken as ElasticJob's, with a warning).
 *
 * Needs java and the ElasticJob build (found as t/lib/tej finds its launcher): without them the
 * test fails saying so. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/conf.h"
#include "t/lib/oracle.h"
#include "t/lib/tconf.h"
#include "t/lib/tej.h"
#include "t/tap.h"

#define HEAD "regCenter:\n  serverLists: 127.0.0.1:2181\n  namespace: ns\n"

static conf_t *parse(const char *yaml, conf_diags_t **d)
{
	return tconf_parse(yaml, NULL, d);
}

/* The file gives exactly these errors (full text), in this order. */
static int errors_are(const char *name, const char *yaml, ...)
{
	va_list ap;
	va_start(ap, yaml);
	int good = tconf_verrors(yaml, NULL, ap);
	va_end(ap);
	return ok(good, "%s", name);
}

#define ERRORS(name, yaml, ...) errors_are(name, yaml, __VA_ARGS__, (const char *)NULL)

/* conf_job_unacted: the keys a job sets that this version does not act on, for loaders to warn */
static void test_unacted(void)
{
	conf_diags_t *d;
	const char *y = HEAD "jobs:\n"
		"  none:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
		"  log:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
		"    jobErrorHandlerType: LOG\n    jobListenerTypes: []\n"
		"  throw:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
		"    jobErrorHandlerType: THROW\n"
		"  both:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
		"    jobListenerTypes: [audit]\n    jobErrorHandlerType: IGNORE\n";
	conf_t *c = parse(y, &d);
	if (!ok(c != NULL && c->n_jobs == 4, "jobs with and without handler types and listeners")) return;
	conf_unacted_t u[CONF_UNACTED_MAX];
	is_int((int)conf_job_unacted(&c->jobs[0], u), 0, "neither key set: nothing");
	is_int((int)conf_job_unacted(&c->jobs[1], u), 0, "LOG (ElasticJob's default, what ejob does) and no listeners: nothing");
	size_t n = conf_job_unacted(&c->jobs[2], u);
	is_int((int)n, 1, "THROW: one key");
	is_str(n ? u[0].key : "", "jobErrorHandlerType", "  jobErrorHandlerType");
	is_str(n ? u[0].text : "", "THROW has no meaning outside Java (ElasticJob rethrows the exception to its caller): "
	       "ejob treats it as LOG, a failed item is logged", "  saying so and what ejob does");
	n = conf_job_unacted(&c->jobs[3], u);
	is_int((int)n, 1, "IGNORE (acted on) and a listener: one key");
	ok(n == 1 && !strcmp(u[0].key, "jobListenerTypes"), "  the listeners");
	is_str(n == 1 ? u[0].text : "", "[audit] is not acted on by this version of ejob (only published for ElasticJob's "
	       "tools): ElasticJob's listener classes do not run here; ejob's listeners are the ejob.listener.* props", "  named");
	conf_free(c);
	conf_diags_free(d);

	/* a config node (ElasticJob's console may write any name; a long list is cut, and says so) */
	char node[4096];
	int k = snprintf(node, sizeof node, "cron: 0 * * * * ?\njobName: n\nshardingTotalCount: 1\n"
	                 "jobErrorHandlerType: log\njobListenerTypes:\n");
	for (int i = 0; i < 60; i++) k += snprintf(node + k, sizeof node - (size_t)k, "- listener%02d\n", i);
	conf_job_t *j = conf_node_parse(node, (size_t)k, "/ns/n/config", &d);
	if (ok(j != NULL, "a config node with 60 listeners and handler 'log'")) {
		n = conf_job_unacted(j, u);
		is_int((int)n, 2, "  'log' is not LOG (ElasticJob's names are exact): two keys");
		is_str(n == 2 ? u[0].text : "", "log is not an error handler ejob has (LOG, IGNORE, THROW, DINGTALK, WECHAT, "
		       "EMAIL, WEBHOOK; ElasticJob would load it as a plugin): a failed item is logged, as LOG does",
		       "  the handler: taken as LOG");
		ok(n == 2 && strstr(u[1].text, "[listener00, listener01, ") && strstr(u[1].text, "...] are not acted on"),
		   "  the list is cut with '...' (%s)", n == 2 ? u[1].text : "");
		conf_job_free(j);
	}
	conf_diags_free(d);

	/* issue 24: a plugin's executor and per-job extras (ElasticJob's tracing) are said too; label is
	 * acted on since issue 27 (supervisor.labels adopts by it): not said */
	static const char extra[] = "cron: 0 * * * * ?\njobName: n\nshardingTotalCount: 1\njobExecutorServiceHandlerType: "
	                            "MY_POOL\nlabel: etl\njobExtraConfigurations:\n- !!org.apache.shardingsphere.elasticjob."
	                            "tracing.yaml.YamlTracingConfiguration\n  type: RDB\n";
	j = conf_node_parse(extra, strlen(extra), "/ns/n/config", &d);
	if (ok(j != NULL, "a node with a plugin's executor, extras and a label")) {
		n = conf_job_unacted(j, u);
		ok(n == 2 && !strcmp(u[0].key, "jobExecutorServiceHandlerType") && !strcmp(u[1].key, "jobExtraConfigurations"),
		   "  two keys said not acted on, in that order (label is acted on)");
		is_str(n == 2 ? u[0].text : "", "MY_POOL is not an executor ejob has (CPU, SINGLE_THREAD; ElasticJob would load it "
		       "as a plugin): the job's items run as with CPU, as many at once as the pool has workers (concurrency "
		       "limits them)", "  the executor, run as CPU");
		ok(n == 2 && strstr(u[1].text, "ejob's tracing is the file's tracing: section"), "  the extras");
		is_int(conf_job_concurrency(j), 0, "  no limit (CPU)");
		conf_job_free(j);
	}
	conf_diags_free(d);

	/* concurrency: ejob's key; SINGLE_THREAD is 1 */
	c = parse(HEAD "jobs:\n  a:\n    type: external\n    shardingTotalCount: 4\n    concurrency: 3\n"
	          "  b:\n    type: external\n    shardingTotalCount: 4\n    jobExecutorServiceHandlerType: SINGLE_THREAD\n", &d);
	if (ok(c != NULL, "concurrency 3; SINGLE_THREAD")) {
		ok(conf_job_concurrency(&c->jobs[0]) == 3 && conf_job_concurrency(&c->jobs[1]) == 1, "  3 and 1 at once");
		char *y2 = conf_node_emit(&c->jobs[0], NULL);
		conf_job_t *back = y2 ? conf_node_parse(y2, strlen(y2), "/ns/a/config", NULL) : NULL;
		ok(y2 && strstr(y2, "  ejob.concurrency: '3'\n") && back && back->concurrency == 3 && conf_job_equal(back, &c->jobs[0]),
		   "  published as props ejob.concurrency, and read back");
		conf_job_free(back);
		free(y2);
		y2 = conf_node_emit(&c->jobs[1], NULL);
		ok(y2 && !strstr(y2, "ejob.concurrency"), "  not published when unset");
		free(y2);
	}
	conf_free(c);
	conf_diags_free(d);
	ERRORS("concurrency with SINGLE_THREAD",
	       HEAD "jobs:\n  a:\n    type: external\n    shardingTotalCount: 4\n    concurrency: 3\n"
	       "    jobExecutorServiceHandlerType: SINGLE_THREAD\n",
	       "t.yaml:8:5: jobs.a.concurrency: 3 with jobExecutorServiceHandlerType SINGLE_THREAD, which runs one item at a "
	       "time; leave one of them out");
	ERRORS("concurrency out of range", HEAD "jobs:\n  a:\n    type: external\n    shardingTotalCount: 4\n    concurrency: 1025\n",
	       "t.yaml:8:5: jobs.a.concurrency: must be an integer 0-1024 (0: no limit) (got \"1025\")");
}

/* jobShardingStrategyType: ElasticJob's four names (its strategies' getType()), published as
 * they are; ejob's old wrong names taken as ElasticJob's with a warning and published as
 * ElasticJob's, on which ElasticJob does not fail (issue 24). And 3.0.5's executor key. */
static void test_strategy_names(void)
{
	static const struct {
		const char *name;
		conf_strategy_t is;
	} names[] = { { "AVG_ALLOCATION", CONF_STRATEGY_AVG_ALLOCATION }, { "ODEVITY", CONF_STRATEGY_ODEVITY },
		      { "ROUND_ROBIN", CONF_STRATEGY_ROUND_ROBIN },
		      { "SINGLE_SHARDING_BALANCE", CONF_STRATEGY_SINGLE_SHARDING_BALANCE } };
	char y[512], line[128];
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		snprintf(y, sizeof y, HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n"
		         "    shardingTotalCount: 2\n    jobShardingStrategyType: %s\n", names[i].name);
		conf_diags_t *d;
		conf_t *c = parse(y, &d);
		if (ok(c && conf_diags_count(d) == 0, "%s: taken, no warning", names[i].name)) {
			size_t len;
			char *node = conf_node_emit(&c->jobs[0], &len);
			snprintf(line, sizeof line, "\njobShardingStrategyType: %s\n", names[i].name);
			ok(c->jobs[0].strategy.effective == names[i].is && !c->jobs[0].strategy.alias && node &&
			   strstr(node, line), "  and published as %s", names[i].name);
			free(node);
		}
		conf_free(c);
		conf_diags_free(d);
	}
	static const struct {
		const char *old, *real;
	} aliases[] = { { "ODEVITY_BY_NAME", "ODEVITY" }, { "ROUND_ROBIN_BY_NAME", "ROUND_ROBIN" } };
	for (size_t i = 0; i < sizeof aliases / sizeof *aliases; i++) {
		snprintf(y, sizeof y, HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n"
		         "    shardingTotalCount: 2\n    jobShardingStrategyType: %s\n", aliases[i].old);
		conf_diags_t *d;
		conf_t *c = parse(y, &d);
		char want[600];
		snprintf(want, sizeof want, "t.yaml:9:5: warning: jobs.j.jobShardingStrategyType: %s is the name ejob gave %s "
		         "by mistake before (ElasticJob fails on it: \"Cannot find sharding strategy\"); it is taken as %s and "
		         "published so; write %s", aliases[i].old, aliases[i].real, aliases[i].real, aliases[i].real);
		if (ok(c != NULL, "%s (ejob's old name): taken", aliases[i].old)) {
			is_int(conf_diags_count(d), 1, "  with one diagnostic");
			const conf_diag_t *g = conf_diags_get(d, 0);
			is_str(g ? g->text : "", want, "  a warning that says what to write");
			ok(g && g->level == CONF_DIAG_WARN, "  at warning level");
			size_t len;
			char *node = conf_node_emit(&c->jobs[0], &len);
			snprintf(line, sizeof line, "\njobShardingStrategyType: %s\n", aliases[i].real);
			ok(c->jobs[0].strategy.alias && node && strstr(node, line) && !strstr(node, "_BY_NAME"),
			   "  published as ElasticJob's %s", aliases[i].real);
			free(node);
		}
		conf_free(c);
		conf_diags_free(d);
	}

	/* 3.0.5 renamed jobExecutorServiceHandlerType to jobExecutorThreadPoolSizeProviderType, and
	 * each version refuses the other's key: the key written is the key published */
	const char *k305 = HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 2\n"
	                   "    jobExecutorThreadPoolSizeProviderType: SINGLE_THREAD\n";
	conf_diags_t *d;
	conf_t *c = parse(k305, &d);
	if (ok(c != NULL, "jobExecutorThreadPoolSizeProviderType (ElasticJob 3.0.5): taken")) {
		size_t len;
		char *node = conf_node_emit(&c->jobs[0], &len);
		ok(!strcmp(c->jobs[0].executor.type, "SINGLE_THREAD") && node &&
		   strstr(node, "\njobExecutorThreadPoolSizeProviderType: SINGLE_THREAD\n") &&
		   !strstr(node, "jobExecutorServiceHandlerType"), "  and published under that key, not the 3.0.4 one");
		free(node);
	}
	conf_free(c);
	conf_diags_free(d);
	ERRORS("both executor keys",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 2\n"
	       "    jobExecutorServiceHandlerType: CPU\n    jobExecutorThreadPoolSizeProviderType: CPU\n",
	       "t.yaml:10:5: jobs.j.jobExecutorThreadPoolSizeProviderType: ElasticJob 3.0.5's name of "
	       "jobExecutorServiceHandlerType, which is given too; give one of them (3.0.5 and later read only this one, "
	       "3.0.4 and before only the other)");
	ERRORS("3.0.5's key, a wrong value",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 2\n"
	       "    jobExecutorThreadPoolSizeProviderType: SINGLE\n",
	       "t.yaml:9:5: jobs.j.jobExecutorThreadPoolSizeProviderType: must be one of CPU or SINGLE_THREAD (got \"SINGLE\")");
}

/* regCenter's keys that ejob checks and does not act on: a warning each (issue 24) */
static void test_regcenter_unacted(void)
{
	conf_diags_t *d;
	conf_t *c = parse("regCenter:\n  serverLists: a:1\n  namespace: n\n  connectionTimeoutMilliseconds: 15000\n"
	                  "  ensembleTracker: true\njobs: {}\n", &d);
	if (ok(c && conf_diags_count(d) == 2, "connectionTimeoutMilliseconds and ensembleTracker: taken, two warnings")) {
		is_str(conf_diags_get(d, 0)->text, "t.yaml:4:3: warning: regCenter.connectionTimeoutMilliseconds: not acted "
		       "on: a connection attempt without an answer ends after two thirds of sessionTimeoutMilliseconds "
		       "(ZooKeeper's C client), and at start the supervisor gives up after maxRetries rounds of attempts; "
		       "leave it out", "  connectionTimeoutMilliseconds");
		is_str(conf_diags_get(d, 1)->text, "t.yaml:5:3: warning: regCenter.ensembleTracker: not acted on: ejob does "
		       "not follow ZooKeeper's dynamic reconfiguration (Curator's ensemble tracker); list every server in "
		       "serverLists (false says so without this warning)", "  ensembleTracker");
	}
	conf_free(c);
	conf_diags_free(d);
	c = parse("regCenter:\n  serverLists: a:1\n  namespace: n\n  ensembleTracker: false\njobs: {}\n", &d);
	ok(c && conf_diags_count(d) == 0 && !c->reg_center.ensemble_tracker, "ensembleTracker: false, without a word");
	conf_free(c);
	conf_diags_free(d);
	ERRORS("ensembleTracker not a boolean", "regCenter:\n  serverLists: a:1\n  namespace: n\n  ensembleTracker: "
	       "maybe\njobs: {}\n", "t.yaml:4:3: regCenter.ensembleTracker: must be true or false (got \"maybe\")");
}

#define ORACLE "t/java/EjNodeOracle.java"
#define NRANDOM 600

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rn(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Each key's values (NULL: the key left out). */
static const char *const crons[] = { NULL, "0 * * * * ?", "0/7 * * * * ?", "''", "' '", "0 0 25 * * ?",
                                     "0 * * * * FOO", "'* * * * *'", "0 0 0 1 1 ? 2099", "0 0 12 ? * MON-FRI" };
static const char *const totals[] = { NULL, "1", "3", "10", "'4'", "0", "-1", "abc", "2" };
static const char *const sips[] = { NULL, "''", "0=a,1=b", "0=a,1=b,2=c,3=d", "0=a,0=b", "a", "0=", "0=a,,1=b",
                                    "0=a=b", "-1=x", "' 1 = y ,0=z'", "'0=a,1=b,'", "9=x" };
static const char *const strategies[] = { NULL, "AVG_ALLOCATION", "ODEVITY", "ROUND_ROBIN", "SINGLE_SHARDING_BALANCE",
                                         "ODEVITY_BY_NAME", "ROUND_ROBIN_BY_NAME", "FOO", "''", "round_robin" };
static const char *const zones[] = { NULL, "UTC", "Asia/Shanghai", "Asia/Shangai", "GMT+8", "GMT+08:00", "PST",
                                     "''", "Mars/Olympus_Mons", "America/New_York", "GMT-3:30" };
static const char *const bools[] = { NULL, "true", "false", "yes", "'true'", "1", "maybe" };
static const char *const extras[] = { NULL, NULL, NULL, NULL, "crn: x", "type: script", "someFutureKey: 1",
                                      "jobExecutorServiceHandlerType: CPU",
                                      "jobExecutorThreadPoolSizeProviderType: CPU", "misfire: false",
                                      "description: ''", "jobParameter: p" };

#define PICK(a) a[rn(sizeof a / sizeof *a)]

struct node {
	char yaml[1024];
	const char *strategy, *extra;
};

static void gen(struct node *n, const char *cron, const char *total, const char *sip, const char *strategy,
                const char *zone, const char *failover, const char *extra)
{
	size_t o = 0;
	o += (size_t)snprintf(n->yaml + o, sizeof n->yaml - o, "jobName: j\n");
#define KV(k, v) if (v) o += (size_t)snprintf(n->yaml + o, sizeof n->yaml - o, "%s: %s\n", k, v)
	KV("cron", cron);
	KV("shardingTotalCount", total);
	KV("shardingItemParameters", sip);
	KV("jobShardingStrategyType", strategy);
	KV("timeZone", zone);
	KV("failover", failover);
#undef KV
	if (extra) o += (size_t)snprintf(n->yaml + o, sizeof n->yaml - o, "%s\n", extra);
	n->strategy = strategy;
	n->extra = extra;
}

static int has_kept(const conf_job_t *j, const char *key)
{
	for (size_t i = 0; i < j->kept.n; i++)
		if (!strcmp(j->kept.keys[i], key)) return 1;
	return 0;
}

static void hex(char *out, size_t cap, const char *s)
{
	size_t o = 0;
	if (!*s) snprintf(out, cap, "-");
	for (; *s && o + 3 < cap; s++) o += (size_t)snprintf(out + o, cap - o, "%02x", (unsigned char)*s);
}

/* What ElasticJob would say, computed from ejob's reading of the node (see EjNodeOracle.java). */
static void ours(const struct node *n, char *out, size_t cap, int *warned_alias)
{
	conf_diags_t *d = NULL;
	conf_job_t *j = conf_node_parse(n->yaml, strlen(n->yaml), "/ns/j/config", &d);
	*warned_alias = 0;
	if (!j) {
		snprintf(out, cap, "LOAD");
		conf_diags_free(d);
		return;
	}
	size_t o = (size_t)snprintf(out, cap, "OK total=%u cron=%s", (unsigned)j->sharding_total_count,
	                            has_kept(j, "cron") ? "BAD" : j->cron ? "OK" : "NONE");
	if (has_kept(j, "jobShardingStrategyType")) o += (size_t)snprintf(out + o, cap - o, " strategy=BAD");
	else o += (size_t)snprintf(out + o, cap - o, " strategy=OK:%s", conf_strategy_name(j->strategy.effective));
	*warned_alias = j->strategy.alias;
	if (has_kept(j, "shardingItemParameters")) {
		o += (size_t)snprintf(out + o, cap - o, " sip=BAD");
	} else {
		o += (size_t)snprintf(out + o, cap - o, " sip=");
		if (!j->items.n_params) o += (size_t)snprintf(out + o, cap - o, "-");
		for (size_t i = 0; i < j->items.n_params; i++) {
			char h[256];
			hex(h, sizeof h, j->items.params[i].value);
			o += (size_t)snprintf(out + o, cap - o, "%s%d=%s", i ? ";" : "", j->items.params[i].item, h);
		}
	}
	if (!j->time_zone) {
		o += (size_t)snprintf(out + o, cap - o, " tz=D");
	} else {
		static const int64_t at[] = { 1736899200, 1752537600, 631152000, 2224972800 };
		o += (size_t)snprintf(out + o, cap - o, " tz=");
		for (int i = 0; i < 4; i++)
			o += (size_t)snprintf(out + o, cap - o, "%s%d", i ? "," : "", j->tz ? (int)tz_offset_at(j->tz, at[i]) : -1);
	}
	conf_job_free(j);
	conf_diags_free(d);
}

/* Where ejob differs from 3.0.4 on purpose: what ElasticJob's answer becomes in ejob's terms. */
static void expected(const struct node *n, const char *java, char *want, size_t cap)
{
	snprintf(want, cap, "%s", java);
	/* 3.0.5's key: 3.0.4 cannot load a node with it, ejob (and 3.0.5) can; compare the rest
	 * against the same node without it (asked too, as the question after this one) */
	if (n->extra && !strncmp(n->extra, "jobExecutorThreadPoolSizeProviderType", 37)) return;
	char *s = strstr(want, " strategy=BAD");
	if (!s || !n->strategy) return;
	/* 3.0.5's strategy, and ejob's old names (taken as ElasticJob's, with a warning) */
	const char *real = !strcmp(n->strategy, "SINGLE_SHARDING_BALANCE") ? "SINGLE_SHARDING_BALANCE"
	                   : !strcmp(n->strategy, "ODEVITY_BY_NAME") ? "ODEVITY"
	                   : !strcmp(n->strategy, "ROUND_ROBIN_BY_NAME") ? "ROUND_ROBIN" : NULL;
	if (!real) return;
	char tail[800];
	snprintf(tail, sizeof tail, "%s", s + strlen(" strategy=BAD"));
	snprintf(s, cap - (size_t)(s - want), " strategy=OK:%s%s", real, tail);
}

/* The ElasticJob build's directory: its launcher's (t/lib/tej: $EJOB_ELASTICJOB, else
 * ../shared/elasticjob/run.sh, else /work/shared/elasticjob/run.sh); 0, or -1 and why. */
static int ej_dir(char *dir, size_t cap, char *why, size_t whycap)
{
	const char *run = tej_launcher();
	if (run) {
		snprintf(dir, cap, "%s", run);
		char *sl = strrchr(dir, '/');
		if (sl) *sl = '\0';
		else snprintf(dir, cap, ".");
		char jar[PATH_MAX + 64];
		snprintf(jar, sizeof jar, "%s/elasticjob-lite-3.0.4.jar", dir);
		if (access(jar, R_OK) == 0) return 0;
	}
	snprintf(why, whycap, "no elasticjob-lite-3.0.4.jar beside ElasticJob's launcher (%s): set EJOB_ELASTICJOB to "
	         "shared/elasticjob/run.sh (its build.sh makes the jar)", run ? run : "not found: $EJOB_ELASTICJOB, "
	         "../shared/elasticjob/run.sh, /work/shared/elasticjob/run.sh");
	return -1;
}

int main(void)
{
	test_regcenter_unacted();
	test_strategy_names();
	test_unacted();
	char dir[PATH_MAX], why[600], cp[8 * PATH_MAX];
	if (ej_dir(dir, sizeof dir, why, sizeof why) < 0) {
		fail("the real ElasticJob: %s", why);
		return done_testing();
	}
	snprintf(cp, sizeof cp, "%s/elasticjob-lite-3.0.4.jar", dir);
	static const char *const jars[] = { "quartz2", "snakeyaml", "guava", "commons-lang3", "gson", "slf4j-api" };
	for (size_t i = 0; i < sizeof jars / sizeof *jars; i++)
		snprintf(cp + strlen(cp), sizeof cp - strlen(cp), ":/usr/share/java/%s.jar", jars[i]);

	/* every value of each key alone in a good node, then random mixes */
	size_t cap = 512 + 2 * NRANDOM, nn = 0;
	struct node *nodes = calloc(cap, sizeof *nodes);
	if (!nodes) BAIL_OUT("out of memory");
	const char *bc = "0 * * * * ?", *bt = "3", *bs = "0=a,1=b", *bst = "ROUND_ROBIN", *bz = "UTC", *bf = "true";
	for (size_t i = 0; i < sizeof crons / sizeof *crons; i++) gen(&nodes[nn++], crons[i], bt, bs, bst, bz, bf, NULL);
	for (size_t i = 0; i < sizeof totals / sizeof *totals; i++) gen(&nodes[nn++], bc, totals[i], bs, bst, bz, bf, NULL);
	for (size_t i = 0; i < sizeof sips / sizeof *sips; i++) gen(&nodes[nn++], bc, bt, sips[i], bst, bz, bf, NULL);
	for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++)
		gen(&nodes[nn++], bc, bt, bs, strategies[i], bz, bf, NULL);
	for (size_t i = 0; i < sizeof zones / sizeof *zones; i++) gen(&nodes[nn++], bc, bt, bs, bst, zones[i], bf, NULL);
	for (size_t i = 0; i < sizeof bools / sizeof *bools; i++) gen(&nodes[nn++], bc, bt, bs, bst, bz, bools[i], NULL);
	for (size_t i = 0; i < sizeof extras / sizeof *extras; i++) gen(&nodes[nn++], bc, bt, bs, bst, bz, bf, extras[i]);
	for (int i = 0; i < NRANDOM; i++)
		gen(&nodes[nn++], PICK(crons), rn(6) ? PICK(totals) : "2", PICK(sips), PICK(strategies), PICK(zones),
		    PICK(bools), PICK(extras));
	/* each node with 3.0.5's key, asked again without it (the comparison of the rest) */
	size_t n0 = nn;
	for (size_t i = 0; i < n0; i++) {
		if (!nodes[i].extra || strncmp(nodes[i].extra, "jobExecutorThreadPoolSizeProviderType", 37)) continue;
		nodes[nn] = nodes[i];
		char *k = strstr(nodes[nn].yaml, "jobExecutorThreadPoolSizeProviderType");
		memcpy(k, "jobExecutorServiceHandlerType", 29);
		memmove(k + 29, k + 37, strlen(k + 37) + 1);
		nodes[nn].extra = "jobExecutorServiceHandlerType: CPU";
		nn++;
	}

	char **q = calloc(nn, sizeof *q);
	for (size_t i = 0; i < nn; i++) {
		char *h = oracle_hex(nodes[i].yaml);
		if (!h || asprintf(&q[i], "N %s", h) < 0) BAIL_OUT("out of memory");
		free(h);
	}
	char **ans = oracle_java(ORACLE, cp, q, nn, why, sizeof why);
	if (!ans) {
		fail("ask the real ElasticJob (%s): %s", ORACLE, why);
		return done_testing();
	}
	size_t loads = 0, refused = 0, kept[3] = { 0 }, wrong = 0, shown = 0, aliases = 0, gmt = 0, k305 = 0;
	size_t k305_ok = 0;
	for (size_t i = 0; i < nn; i++) {
		char got[1024], want[1024];
		int alias;
		ours(&nodes[i], got, sizeof got, &alias);
		expected(&nodes[i], ans[i], want, sizeof want);
		if (nodes[i].extra && !strncmp(nodes[i].extra, "jobExecutorThreadPoolSizeProviderType", 37)) {
			/* 3.0.4 cannot load it; ejob takes what it takes without that key */
			k305++;
			char other[1024];
			int a2;
			struct node without = nodes[i];
			char *k = strstr(without.yaml, "jobExecutorThreadPoolSizeProviderType");
			memcpy(k, "jobExecutorServiceHandlerType", 29);
			memmove(k + 29, k + 37, strlen(k + 37) + 1);
			ours(&without, other, sizeof other, &a2);
			if (!strncmp(ans[i], "LOAD", 4) && !strcmp(got, other)) k305_ok++;
			else if (shown++ < 8) diag("3.0.5's key differs:\n%s  java: %s\n  ejob: %s / %s", nodes[i].yaml, ans[i], got, other);
			continue;
		}
		if (!strncmp(want, "LOAD", 4)) {
			loads++;
			refused += !strcmp(got, "LOAD");
			if (!strcmp(got, "LOAD")) continue;
		} else {
			kept[0] += strstr(want, "cron=BAD") != NULL;
			kept[1] += strstr(want, "strategy=BAD") != NULL;
			kept[2] += strstr(want, "sip=BAD") != NULL;
			aliases += alias;
			gmt += strstr(nodes[i].yaml, "Shangai") || strstr(nodes[i].yaml, "Mars");
			if (!strcmp(got, want)) continue;
		}
		wrong++;
		if (shown++ < 8) diag("differs:\n%s  java: %s\n  ejob: %s", nodes[i].yaml, want, got);
	}
	is_int(wrong, 0, "%zu config nodes: ejob reads each key as the real ElasticJob 3.0.4 does (%zu differ)", nn, wrong);
	ok(loads > 50 && refused == loads, "  %zu that ElasticJob cannot load: refused by ejob (%zu)", loads, refused);
	ok(kept[0] > 20 && kept[1] > 20 && kept[2] > 20,
	   "  keys ElasticJob fails on when it uses them, each ejob's error of that key alone: cron %zu, strategy %zu, "
	   "item parameters %zu", kept[0], kept[1], kept[2]);
	ok(aliases > 10 && gmt > 10, "  ejob's old strategy names taken as ElasticJob's (%zu), zones Java does not know "
	   "in GMT as ElasticJob runs them (%zu)", aliases, gmt);
	ok(k305 > 5 && k305_ok == k305, "  3.0.5's jobExecutorThreadPoolSizeProviderType: 3.0.4 cannot load the node, ejob "
	   "takes it as with 3.0.4's key (%zu of %zu)", k305_ok, k305);
	oracle_free(ans, nn);
	for (size_t i = 0; i < nn; i++) free(q[i]);
	free(q);
	free(nodes);
	return done_testing();
}
