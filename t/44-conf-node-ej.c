/* t/44-conf-node-ej.c: what ejob makes of a config node, key by key, against what the real
 * ElasticJob-Lite 3.0.4 makes of it (issue 24: "what ElasticJob accepts, ejob accepts").
 *
 * Generates config nodes from values of each key that matter (good ones, ones ElasticJob cannot
 * load, ones it loads and fails on when it uses them, ones it ignores), and has ElasticJob's own
 * classes (t/java/EjNodeOracle.java on the real elasticjob-lite-3.0.4.jar: YamlEngine,
 * JobConfiguration, CronScheduleBuilder, JobShardingStrategyFactory, ShardingItemParameters,
 * TimeZone) say what they do with each. ejob (conf_node_parse) must agree:
 *   - a node ElasticJob cannot load is refused (an error);
 *   - a key ElasticJob fails on when it uses it (a cron, a strategy, item parameters) is that
 *     key's own error (kept_keys), the rest taken;
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/conf.h"
#include "t/lib/oracle.h"
#include "t/lib/tej.h"
#include "t/tap.h"

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
	for (size_t i = 0; i < j->n_kept_keys; i++)
		if (!strcmp(j->kept_keys[i], key)) return 1;
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
	else o += (size_t)snprintf(out + o, cap - o, " strategy=OK:%s", conf_strategy_name(j->sharding_strategy));
	*warned_alias = j->sharding_strategy_alias;
	if (has_kept(j, "shardingItemParameters")) {
		o += (size_t)snprintf(out + o, cap - o, " sip=BAD");
	} else {
		o += (size_t)snprintf(out + o, cap - o, " sip=");
		if (!j->n_item_params) o += (size_t)snprintf(out + o, cap - o, "-");
		for (size_t i = 0; i < j->n_item_params; i++) {
			char h[256];
			hex(h, sizeof h, j->item_params[i].value);
			o += (size_t)snprintf(out + o, cap - o, "%s%d=%s", i ? ";" : "", j->item_params[i].item, h);
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
