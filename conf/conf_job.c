/* conf/conf_job.c: one job, from its mapping in the file (jobs.NAME) or from a config node.
 *
 * The two forms share the keys of ElasticJob's JobConfigurationPOJO and every check. They differ
 * where ElasticJob's own YAML differs from ejob's file:
 *   file:  the name is the key under jobs:; ejob's keys type, timeoutSeconds, maxRetries,
 *          concurrency and dependsOn are job keys; props named ejob.* are errors; type is
 *          required; every problem is an error.
 *   node:  the name is jobName; ejob's keys are props ejob.type, ejob.timeoutSeconds,
 *          ejob.maxRetries, ejob.concurrency and ejob.dependsOn; handler types ElasticJob may
 *          load as plugins are taken as written; and each value is taken as ElasticJob takes
 *          it (docs/config.md, "What ElasticJob accepts"): what it cannot load at all (an
 *          unknown key, a wrong type) refuses the node, what it loads and fails on only when it
 *          uses the key (a cron, a strategy, item parameters, a script's command line) is a
 *          CONF_DIAG_KEY of that key alone, and what it ignores (an item parameter out of range)
 *          is a warning.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"
#include "conf/conf_job_int.h"
#include "cron/cron.h"

enum {
	K_CRON, K_TIMEZONE, K_TOTAL, K_SIP, K_JOBPARAM, K_MONITOR, K_FAILOVER, K_MISFIRE,
	K_MAXTIMEDIFF, K_RECONCILE, K_STATIC, K_STRATEGY, K_EXECUTOR, K_EXECUTOR305, K_ERRHANDLER, K_LISTENERS,
	K_EXTRA, K_DISABLED, K_OVERWRITE, K_LABEL, K_DESCRIPTION, K_PROPS,
	K_TYPE, K_TIMEOUT, K_MAXRETRIES, K_CONCURRENCY, K_DEPENDSON,   /* file only */
	K_FJOBNAME,                              /* file: refused with a better message */
	K_NFILE,
	K_JOBNAME = K_TYPE,                      /* node only, in the slot of type */
	K_NNODE = K_TYPE + 1,
};

static const char *const file_keys[K_NFILE] = {
	"cron", "timeZone", "shardingTotalCount", "shardingItemParameters", "jobParameter",
	"monitorExecution", "failover", "misfire", "maxTimeDiffSeconds", "reconcileIntervalMinutes",
	"staticSharding", "jobShardingStrategyType", "jobExecutorServiceHandlerType",
	"jobExecutorThreadPoolSizeProviderType", "jobErrorHandlerType", "jobListenerTypes",
	"jobExtraConfigurations", "disabled", "overwrite", "label", "description", "props", "type",
	"timeoutSeconds", "maxRetries", "concurrency", "dependsOn", "jobName",
};

static const char *const node_keys[K_NNODE] = {
	"cron", "timeZone", "shardingTotalCount", "shardingItemParameters", "jobParameter",
	"monitorExecution", "failover", "misfire", "maxTimeDiffSeconds", "reconcileIntervalMinutes",
	"staticSharding", "jobShardingStrategyType", "jobExecutorServiceHandlerType",
	"jobExecutorThreadPoolSizeProviderType", "jobErrorHandlerType", "jobListenerTypes",
	"jobExtraConfigurations", "disabled", "overwrite", "label", "description", "props", "jobName",
};

static const char *const type_names[] = { "script", "native", "external", "http", "dataflow" };
/* ElasticJob's (its strategies' getType(); SINGLE_SHARDING_BALANCE since 3.0.5), in conf_strategy_t's
 * order, then the names ejob took by mistake before, read as ODEVITY and ROUND_ROBIN */
static const char *const strategy_names[] = { "AVG_ALLOCATION", "ODEVITY", "ROUND_ROBIN", "SINGLE_SHARDING_BALANCE" };
static const struct {
	const char *name;
	conf_strategy_t is;
} strategy_aliases[] = { { "ODEVITY_BY_NAME", CONF_STRATEGY_ODEVITY }, { "ROUND_ROBIN_BY_NAME", CONF_STRATEGY_ROUND_ROBIN } };
/* ElasticJob's built-in handlers (elasticjob-executor, elasticjob-error-handler) */
static const char *const executor_names[] = { "CPU", "SINGLE_THREAD" };
static const char *const error_handler_names[] = { "LOG", "THROW", "IGNORE", "EMAIL", "WECHAT", "DINGTALK",
                                                   "WEBHOOK" /* ejob's */ };

#define INT_RANGE_MIN (-2147483647LL - 1)
#define INT_RANGE_MAX 2147483647LL


void jb_kpath(const jb_t *b, char *out, size_t outsz, const char *key)
{
	conf_path(out, outsz, b->path, key);
}

/* A key checked on its own: in a node, what ElasticJob loads and fails on only when it uses the
 * key. Its problems, reported between key_open and key_close, are CONF_DIAG_KEY (the node is
 * still taken, the key listed in kept.keys); in a file they are errors as any other. */
static int key_open(jb_t *b)
{
	if (b->cx->node_mode) b->cx->level = CONF_DIAG_KEY;
	return b->errors;
}

static void key_close(jb_t *b, int before, const char *key)
{
	b->cx->level = CONF_DIAG_ERROR;
	if (!b->cx->node_mode || b->errors == before) return;
	b->errors = before;
	for (size_t i = 0; i < b->nkept; i++)
		if (!strcmp(b->kept[i], key)) return;
	if (b->nkept < KEPT_MAX) b->kept[b->nkept++] = conf_arena_strdup(b->cx->out, key);
}

int jb_key_open(jb_t *b)
{
	return key_open(b);
}

void jb_key_close(jb_t *b, int before, const char *key)
{
	key_close(b, before, key);
}

/* One problem of a key checked on its own (key_open .. key_close around one message): at path,
 * said at `at`. */
void jb_key_err(jb_t *b, const conf_tnode_t *at, const char *path, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void jb_key_err(jb_t *b, const conf_tnode_t *at, const char *path, const char *key, const char *fmt, ...)
{
	int before = key_open(b);
	va_list ap;
	va_start(ap, fmt);
	conf_diag_vadd_level(b->cx->diags, b->cx->level, b->cx->file, at ? at->line : 1, at ? at->col : 1, path, fmt, ap);
	va_end(ap);
	b->errors++;
	key_close(b, before, key);
}

/* Optional string: null keeps the default. */
static void get_str(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at, const char *key,
                    const char **dst, bool nonempty)
{
	char p[512];
	if (!v || conf_is_null(v)) return;
	jb_kpath(b, p, sizeof p, key);
	const char *s;
	if (conf_get_str(b->cx, v, at, p, &s) < 0) {
		b->errors++;
		return;
	}
	if (nonempty && !*s) {
		conf_err(b->cx, at ? at : v, p, "must not be empty; leave the key out to unset it");
		b->errors++;
		return;
	}
	*dst = s;
}

static void get_bool(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at, const char *key,
                     bool *dst)
{
	char p[512];
	if (!v) return;
	jb_kpath(b, p, sizeof p, key);
	if (conf_get_bool(b->cx, v, at, p, dst) < 0) b->errors++;
}

static void get_int(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at, const char *key,
                    long long min, long long max, const char *allowed, int *dst)
{
	char p[512];
	if (!v) return;
	jb_kpath(b, p, sizeof p, key);
	if (conf_get_int(b->cx, v, at, p, min, max, allowed, dst) < 0) b->errors++;
}

/* A handler type: one of ElasticJob's built-in names in the file; as written in a node. */
static void get_handler(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at, const char *key,
                        const char *const *names, size_t n, const char **dst)
{
	char p[512];
	int idx;
	if (!v || conf_is_null(v)) return;
	if (b->cx->node_mode) {
		get_str(b, v, at, key, dst, false);
		return;
	}
	jb_kpath(b, p, sizeof p, key);
	if (conf_get_enum(b->cx, v, at, p, names, n, &idx) < 0) {
		b->errors++;
		return;
	}
	*dst = names[idx];
}

bool jb_is_identifier(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9')) return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '_'))
			return false;
	return true;
}

static void get_listeners(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at)
{
	char p[512], ip[512];
	conf_job_t *j = b->j;
	if (!v || conf_is_null(v)) return;
	jb_kpath(b, p, sizeof p, "jobListenerTypes");
	if (v->kind != CONF_TN_SEQ) {
		conf_err(b->cx, at, p, "must be a list of listener type names (got %s)", conf_kind_name(v));
		b->errors++;
		return;
	}
	const char **names = conf_arena_alloc(b->cx->out, (v->n + 1) * sizeof *names);
	if (!names) return;
	for (size_t i = 0; i < v->n; i++) {
		const conf_tnode_t *it = v->kids[i];
		if (!conf_visit(b->cx, it)) return;
		conf_path_index(ip, sizeof ip, p, i);
		const char *s;
		if (conf_get_str(b->cx, it, NULL, ip, &s) < 0) {
			b->errors++;
			continue;
		}
		if (!*s && !b->cx->node_mode) {
			conf_err(b->cx, it, ip, "must be a listener type name (got \"\")");
			b->errors++;
			continue;
		}
		names[i] = s;
	}
	j->listener.n_types = v->n;
	j->listener.types = names;
}

/* Characters a tag may keep: libyaml reads these back in a tag as they are. */
static bool tag_ok(const char *t)
{
	for (; *t; t++) {
		unsigned char c = (unsigned char)*t;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      (c && strchr("-;/?:@&=+$,.!~*'()_", c))))
			return false;
	}
	return true;
}

/* A value kept as written: text, and the type of each scalar (conf_value_t). */
static int to_value(jb_t *b, const conf_tnode_t *n, conf_value_t *out, const char *path)
{
	conf_ctx_t *cx = b->cx;
	char p[512];
	if (n->conv) {
		/* an alias: share what was made of its node (values are never changed) */
		*out = *(const conf_value_t *)n->conv;
		return 0;
	}
	if (!conf_visit(cx, n)) return -1;
	const char *tag = n->tag;
	if (tag && !tag_ok(tag)) {
		char q[128];
		conf_quote(q, sizeof q, tag, strlen(tag));
		conf_err(cx, n, path, "the tag %s has characters ejob cannot write back; use letters, "
		         "digits and -;/?:@&=+$,.!~*'()_", q);
		b->errors++;
		return 0;
	}
	if (n->kind == CONF_TN_SCALAR) {
		out->kind = CONF_VALUE_SCALAR;
		if (memchr(n->str, '\0', n->len)) {
			conf_err(cx, n, path, "must not contain NUL characters");
			b->errors++;
			return 0;
		}
		if (!tag || strcmp(tag, "!") == 0)
			tag = n->style == 1 /* plain */ && !tag ? conf_snake_resolve(&cx->res, n->str, n->len)
			                                        : "tag:yaml.org,2002:str";
		out->tag = conf_arena_strdup(cx->out, tag);
		out->str = conf_arena_strndup(cx->out, n->str, n->len);
		((conf_tnode_t *)n)->conv = out;
		return out->str && out->tag ? 0 : -1;
	}
	bool map = n->kind == CONF_TN_MAP;
	if (tag && (strcmp(tag, map ? "tag:yaml.org,2002:map" : "tag:yaml.org,2002:seq") == 0 ||
	            strcmp(tag, "!") == 0))
		tag = NULL;
	if (tag && !(out->tag = conf_arena_strdup(cx->out, tag))) return -1;
	size_t cnt = map ? 2 * n->n : n->n;
	out->kind = map ? CONF_VALUE_MAP : CONF_VALUE_SEQ;
	out->n = n->n;
	conf_value_t *items = conf_arena_alloc(cx->out, (cnt + 1) * sizeof *items);
	if (!items) return -1;
	out->items = items;
	for (size_t i = 0; i < cnt; i++) {
		if (map && i % 2 == 1) conf_path(p, sizeof p, path, n->kids[i - 1]->str);
		else if (!map) conf_path_index(p, sizeof p, path, i);
		else conf_path(p, sizeof p, path, n->kids[i]->str);
		if (to_value(b, n->kids[i], &items[i], p) < 0) return -1;
	}
	((conf_tnode_t *)n)->conv = out;
	return 0;
}

static void get_extra(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at)
{
	char p[512], ip[512];
	conf_job_t *j = b->j;
	if (!v || conf_is_null(v)) return;
	jb_kpath(b, p, sizeof p, "jobExtraConfigurations");
	if (v->kind != CONF_TN_SEQ) {
		conf_err(b->cx, at, p, "must be a list of mappings (got %s)", conf_kind_name(v));
		b->errors++;
		return;
	}
	if (v->size > CONF_MAX_VALUE_NODES) {
		conf_err(b->cx, at, p, "holds more than %d values (with aliases expanded); ejob keeps "
		         "extra configurations for ElasticJob's tools, they should be small",
		         CONF_MAX_VALUE_NODES);
		b->errors++;
		return;
	}
	conf_value_t *items = conf_arena_alloc(b->cx->out, (v->n + 1) * sizeof *items);
	if (!items) return;
	for (size_t i = 0; i < v->n; i++) {
		conf_path_index(ip, sizeof ip, p, i);
		if (v->kids[i]->kind != CONF_TN_MAP) {
			conf_err(b->cx, v->kids[i], ip, "must be a mapping, an ElasticJob extra configuration "
			         "(got %s)", conf_kind_name(v->kids[i]));
			b->errors++;
			continue;
		}
		if (to_value(b, v->kids[i], &items[i], ip) < 0) return;
	}
	j->extra.n = v->n;
	j->extra.configurations = items;
}

struct sip_arg {
	jb_t *b;
	const conf_tnode_t *at;
	const char *path;
};

static void sip_err(void *arg, size_t off, bool warn, const char *msg)
{
	struct sip_arg *a = arg;
	conf_diag_level_t level = a->b->cx->level;
	if (warn) a->b->cx->level = CONF_DIAG_WARN;
	conf_err_in(a->b->cx, a->at, off, a->path, "%s", msg);
	a->b->cx->level = level;
	if (!warn) a->b->errors++;
}

static void release_cron(void *p)
{
	cron_free(p);
}

static void release_tz(void *p)
{
	tz_free(p);
}

/* The cron expression, as Quartz 2.3 (so ElasticJob) reads it, compiled into the job: its
 * error's column, counted in characters of the expression, becomes a column in the file when
 * the value is written there as it is (otherwise the message says where in the expression). */
static void check_cron(jb_t *b, const conf_tnode_t *v, const char *expr)
{
	uint32_t h = 2166136261u;
	for (const char *q = expr; *q; q++) h = (h ^ (unsigned char)*q) * 16777619u;
	const size_t nslot = sizeof b->cx->crons / sizeof b->cx->crons[0];
	const cron_t **slot = NULL;
	for (size_t k = 0; k < 8 && !slot; k++) {
		const cron_t **at = &b->cx->crons[(h + k) % nslot];
		if (*at && !strcmp(cron_expr(*at), expr)) {
			b->j->cron_compiled = *at;
			return;
		}
		if (!*at) slot = at;    /* not compiled yet in this parse: it goes here */
	}
	cron_err_t e;
	errno = 0;
	cron_t *c = cron_parse(expr, &e);
	if (c) {
		if (conf_arena_own(b->cx->out, release_cron, c) == 0) {
			b->j->cron_compiled = c;
			if (slot) *slot = c;
		}
		return;
	}
	char p[512];
	jb_kpath(b, p, sizeof p, "cron");
	b->errors++;
	if (errno == ENOMEM) {
		conf_err(b->cx, v, p, "out of memory parsing the expression");
		return;
	}
	size_t off = 0, len = strlen(expr);
	for (int col = 1; col < e.column && off < len; col++) {
		uint32_t cp;
		off += conf_utf8_decode(expr + off, len - off, &cp);
	}
	if (v->exact) conf_err_in(b->cx, v, off, p, "%s", e.msg);
	else conf_err_in(b->cx, v, off, p, "%s (column %d of the expression)", e.msg, e.column);
}

const char *conf_job_name_problem(const char *name, size_t len)
{
	const char *why = conf_check_zk_name(name, len);
	if (!why && memmem(name, len, "@-@", 3)) why = "contains '@-@', ElasticJob's separator in task ids";
	return why;
}

/* A job name: a ZooKeeper path segment that also survives ElasticJob's task ids. */
static void check_name(jb_t *b, const conf_tnode_t *at, const char *name, size_t len)
{
	const char *why = conf_job_name_problem(name, len);
	char q[128];
	if (!why) return;
	conf_quote(q, sizeof q, name, len);
	conf_err(b->cx, at, b->path, "the name %s %s; a job name must be 1-255 bytes without '/', "
	         "'@-@', whitespace or control characters, and not '.' or '..'", q, why);
	b->errors++;
}

/* jobShardingStrategyType: one of ElasticJob's names. "" is unset in a node, as ElasticJob reads
 * it (JobShardingStrategyFactory: Strings.isNullOrEmpty). An old ejob name is taken as
 * ElasticJob's, with a warning (and published as ElasticJob's). In a node an unknown name is
 * that key's problem alone: ElasticJob loads the node and fails at every resharding. */
static void get_strategy(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at)
{
	conf_ctx_t *cx = b->cx;
	conf_job_t *j = b->j;
	char p[512], list[256], q[128];
	const char *s;
	if (!v || conf_is_null(v)) return;
	jb_kpath(b, p, sizeof p, "jobShardingStrategyType");
	if (conf_get_str(cx, v, at, p, &s) < 0) {
		b->errors++;
		return;
	}
	if (!*s && cx->node_mode) return;
	for (size_t i = 0; i < NELEM(strategy_names); i++)
		if (!strcmp(s, strategy_names[i])) {
			j->strategy.effective = (conf_strategy_t)i;
			j->strategy.type = strategy_names[i];
			return;
		}
	for (size_t i = 0; i < NELEM(strategy_aliases); i++)
		if (!strcmp(s, strategy_aliases[i].name)) {
			const char *real = strategy_names[strategy_aliases[i].is];
			j->strategy.effective = strategy_aliases[i].is;
			j->strategy.type = real;
			j->strategy.alias = true;
			conf_warn(cx, at ? at : v, p, "%s is the name ejob gave %s by mistake before (ElasticJob fails on it: "
			          "\"Cannot find sharding strategy\"); it is taken as %s and %s; write %s", s, real, real,
			          cx->node_mode ? "the node is written back with it" : "published so", real);
			return;
		}
	conf_join_names(list, sizeof list, strategy_names, NELEM(strategy_names));
	conf_quote(q, sizeof q, s, strlen(s));
	const char *sug = conf_suggest(s, strategy_names, NELEM(strategy_names));
	char hint[64] = "";
	if (sug) conf_fmt(hint, sizeof hint, "; did you mean '%s'?", sug);
	if (cx->node_mode)
		jb_key_err(b, at ? at : v, p, "jobShardingStrategyType", "ElasticJob has no sharding strategy %s (its instances fail "
		        "every resharding of this job: \"Cannot find sharding strategy\"); ejob keeps the strategy in force; "
		        "write %s%s", q, list, hint);
	else
		jb_key_err(b, at ? at : v, p, "jobShardingStrategyType", "must be one of %s (got %s)%s", list, q, hint);
}

int conf_job_build(conf_ctx_t *cx, conf_job_t *j, const conf_tnode_t *name_key,
                   const conf_tnode_t *map, const char *path)
{
	jb_t b = { .cx = cx, .j = j, .path = path, .at = name_key ? name_key : map };
	const conf_tnode_t *keys[K_NFILE] = { 0 }, *v[K_NFILE] = { 0 };
	const conf_tnode_t *ejob[5] = { NULL }, *ejobk[5] = { NULL };
	char p[512];
	bool node = cx->node_mode;

	memset(j, 0, sizeof *j);
	j->items.parameters = "";
	j->job_parameter = "";
	j->description = "";
	j->monitor_execution = true;
	j->misfire = true;
	j->listener.timeout_seconds = CONF_LISTENER_TIMEOUT_DEFAULT;
	j->max_time_diff_seconds = -1;
	j->reconcile_interval_minutes = 10;
	j->line = name_key ? name_key->line : 0;

	if (map->kind != CONF_TN_MAP) {
		conf_err(cx, map, path, "a job must be a mapping of its keys (got %s)", conf_kind_name(map));
		return -1;
	}
	if (node) {
		conf_map_keys(cx, map, path, node_keys, K_NNODE, K_NNODE, keys, v);
	} else {
		conf_map_keys(cx, map, path, file_keys, K_NFILE, K_FJOBNAME, keys, v);
		if (keys[K_FJOBNAME]) {
			jb_kpath(&b, p, sizeof p, "jobName");
			conf_err(cx, keys[K_FJOBNAME], p, "not a key here: a job's name is its key under "
			         "jobs:");
			b.errors++;
		}
	}
	if (node) {
		/* the name comes from jobName */
		keys[K_TIMEOUT] = v[K_TIMEOUT] = keys[K_MAXRETRIES] = v[K_MAXRETRIES] = NULL;
		const conf_tnode_t *nv = v[K_JOBNAME];
		if (!nv || conf_is_null(nv)) {
			conf_err(cx, map, "jobName", "missing; a config node names its job");
			b.errors++;
		} else if (conf_get_str(cx, nv, keys[K_JOBNAME], "jobName", &j->name) < 0) {
			b.errors++;
		} else {
			b.path = "jobName";
			check_name(&b, nv, j->name, strlen(j->name));
			b.path = path;
		}
		v[K_TYPE] = keys[K_TYPE] = NULL;
	} else {
		j->name = conf_arena_strndup(cx->out, name_key->str, name_key->len);
		if (!j->name) return -1;
		check_name(&b, name_key, name_key->str, name_key->len);
	}

	/* cron and timeZone: Quartz's syntax; a zone the host can load (when opts can look). No cron,
	 * or an empty one, is a one-off job (cron NULL): ElasticJob's OneOffJobBootstrap takes exactly
	 * those (Strings.isNullOrEmpty), and its RescheduleListenerManager reads a node so
	 * (StringUtils.isEmpty). A blank one is neither: ElasticJob refuses it both ways. */
	get_str(&b, v[K_CRON], keys[K_CRON], "cron", &j->cron, false);
	/* in a node, ElasticJob's reschedule fails on a cron Quartz does not take, and the trigger in
	 * force stays: the key's own problem (the cron stays as written, not compiled) */
	int cron_before = key_open(&b);
	if (j->cron && !*j->cron) {
		j->cron = NULL;
	} else if (j->cron && !j->cron[strspn(j->cron, " \t")]) {
		jb_kpath(&b, p, sizeof p, "cron");
		conf_err(cx, keys[K_CRON] ? keys[K_CRON] : v[K_CRON], p, "blank; give a Quartz cron expression (e.g. "
		         "\"0/5 * * * * ?\"), or leave cron out (or \"\") for a one-off job that runs only when triggered");
		b.errors++;
		if (!node) j->cron = NULL;
	} else if (j->cron) {
		check_cron(&b, v[K_CRON], j->cron);
	}
	key_close(&b, cron_before, "cron");
	/* "" in a node is unset: ElasticJob's JobScheduleController takes the JVM's zone then */
	get_str(&b, v[K_TIMEZONE], keys[K_TIMEZONE], "timeZone", &j->time_zone, !node);
	if (node && j->time_zone && !*j->time_zone) j->time_zone = NULL;
	const conf_opts_t *o = cx->opts;
	if (j->time_zone && o && o->load_zone) {
		char why[512];
		tz_t *tz = o->load_zone(j->time_zone, why, sizeof why, o->lookup_arg);
		if (tz) {
			if (conf_arena_own(cx->out, release_tz, tz) == 0) j->tz = tz;
		} else if (node) {
			/* ElasticJob's TimeZone.getTimeZone gives GMT for an id Java does not know, and its
			 * instances run the job in GMT: so does ejob, saying so (tz_error keeps why) */
			j->tz_error = conf_arena_strdup(cx->out, why);
			jb_kpath(&b, p, sizeof p, "timeZone");
			conf_warn(cx, keys[K_TIMEZONE], p, "%s; the job runs in GMT, as ElasticJob runs a zone id Java does not "
			          "know (TimeZone.getTimeZone)", why);
			tz = tz_fixed("GMT", 0);
			if (tz && conf_arena_own(cx->out, release_tz, tz) == 0) j->tz = tz;
		} else {
			jb_kpath(&b, p, sizeof p, "timeZone");
			conf_err(cx, keys[K_TIMEZONE], p, "%s", why);
			b.errors++;
		}
	}

	jb_kpath(&b, p, sizeof p, "shardingTotalCount");
	if (!v[K_TOTAL]) {
		conf_err(cx, b.at, p, "missing; every job needs the number of shard items, 1-%d",
		         CONF_MAX_ITEMS);
		b.errors++;
	} else {
		int total = 0;                 /* stays 0 when it is not valid */
		get_int(&b, v[K_TOTAL], keys[K_TOTAL], "shardingTotalCount", 1, CONF_MAX_ITEMS, NULL, &total);
		j->sharding_total_count = total;     /* 0-CONF_MAX_ITEMS */
	}
	get_str(&b, v[K_SIP], keys[K_SIP], "shardingItemParameters", &j->items.parameters, false);
	if (*j->items.parameters) {
		jb_kpath(&b, p, sizeof p, "shardingItemParameters");
		conf_item_param_t *ip;
		struct sip_arg a = { &b, v[K_SIP], p };
		/* 1-CONF_MAX_ITEMS when it was valid */
		int total = j->sharding_total_count ? (int)j->sharding_total_count : -1;
		/* in a node, ElasticJob parses them at each fire (and fails it on a malformed pair) */
		int before = key_open(&b);
		int r = conf_sip_parse(cx->out, j->items.parameters, total, node, &ip,
		                       &j->items.n_params, sip_err, &a);
		key_close(&b, before, "shardingItemParameters");
		if (r < 0) return -1;
		j->items.params = ip;
	}
	get_str(&b, v[K_JOBPARAM], keys[K_JOBPARAM], "jobParameter", &j->job_parameter, false);
	get_bool(&b, v[K_MONITOR], keys[K_MONITOR], "monitorExecution", &j->monitor_execution);
	get_bool(&b, v[K_FAILOVER], keys[K_FAILOVER], "failover", &j->failover);
	get_bool(&b, v[K_MISFIRE], keys[K_MISFIRE], "misfire", &j->misfire);
	get_int(&b, v[K_MAXTIMEDIFF], keys[K_MAXTIMEDIFF], "maxTimeDiffSeconds", node ? INT_RANGE_MIN : -1, INT_RANGE_MAX,
	        node ? NULL : "-1 (no check) or an integer 0-2147483647", &j->max_time_diff_seconds);
	get_int(&b, v[K_RECONCILE], keys[K_RECONCILE], "reconcileIntervalMinutes", node ? INT_RANGE_MIN : 0,
	        INT_RANGE_MAX, node ? NULL : "an integer 0-2147483647 (0: off)",
	        &j->reconcile_interval_minutes);
	get_bool(&b, v[K_STATIC], keys[K_STATIC], "staticSharding", &j->static_sharding);
	get_strategy(&b, v[K_STRATEGY], keys[K_STRATEGY]);
	/* 3.0.5 renamed the executor key (jobExecutorThreadPoolSizeProviderType); each version refuses
	 * the other's, so the key written is the key published */
	if (v[K_EXECUTOR] && v[K_EXECUTOR305] && !conf_is_null(v[K_EXECUTOR]) && !conf_is_null(v[K_EXECUTOR305])) {
		jb_kpath(&b, p, sizeof p, "jobExecutorThreadPoolSizeProviderType");
		conf_err(cx, keys[K_EXECUTOR305], p, "ElasticJob 3.0.5's name of jobExecutorServiceHandlerType, which is "
		         "given too; give one of them (3.0.5 and later read only this one, 3.0.4 and before only the other)");
		b.errors++;
	} else if (v[K_EXECUTOR305] && !conf_is_null(v[K_EXECUTOR305])) {
		get_handler(&b, v[K_EXECUTOR305], keys[K_EXECUTOR305], "jobExecutorThreadPoolSizeProviderType",
		            executor_names, NELEM(executor_names), &j->executor.type);
		j->executor.key_3_0_5 = true;
	} else {
		get_handler(&b, v[K_EXECUTOR], keys[K_EXECUTOR], "jobExecutorServiceHandlerType", executor_names,
		            NELEM(executor_names), &j->executor.type);
	}
	get_handler(&b, v[K_ERRHANDLER], keys[K_ERRHANDLER], "jobErrorHandlerType", error_handler_names,
	            NELEM(error_handler_names), &j->error_handler_type);
	get_listeners(&b, v[K_LISTENERS], keys[K_LISTENERS]);
	get_extra(&b, v[K_EXTRA], keys[K_EXTRA]);
	get_bool(&b, v[K_DISABLED], keys[K_DISABLED], "disabled", &j->disabled);
	get_bool(&b, v[K_OVERWRITE], keys[K_OVERWRITE], "overwrite", &j->overwrite);
	get_str(&b, v[K_LABEL], keys[K_LABEL], "label", &j->label, false);
	get_str(&b, v[K_DESCRIPTION], keys[K_DESCRIPTION], "description", &j->description, false);
	jb_props(&b, v[K_PROPS], keys[K_PROPS], ejob, ejobk);

	/* ejob's own keys: job keys in the file, props in a node */
	const conf_tnode_t *tv = node ? ejob[0] : v[K_TYPE], *tk = node ? ejobk[0] : keys[K_TYPE];
	jb_kpath(&b, p, sizeof p, node ? "props.ejob.type" : "type");
	if (!tv || conf_is_null(tv)) {
		if (!node) {
			conf_err(cx, tk ? tk : b.at, p, "missing; every job needs a type: script, native, "
			         "external, http or dataflow");
			b.errors++;
		}
	} else {
		int idx;
		if (conf_get_enum(cx, tv, tk, p, type_names, NELEM(type_names), &idx) < 0) b.errors++;
		else j->type = (conf_job_type_t)(idx + 1);
	}
	int before = key_open(&b);
	get_int(&b, node ? ejob[1] : v[K_TIMEOUT], node ? ejobk[1] : keys[K_TIMEOUT],
	        node ? "props.ejob.timeoutSeconds" : "timeoutSeconds", 0, INT_RANGE_MAX,
	        "an integer 0-2147483647 (0: no limit)", &j->timeout_seconds);
	key_close(&b, before, "props.ejob.timeoutSeconds");
	before = key_open(&b);
	get_int(&b, node ? ejob[2] : v[K_MAXRETRIES], node ? ejobk[2] : keys[K_MAXRETRIES],
	        node ? "props.ejob.maxRetries" : "maxRetries", 0, 100, NULL, &j->max_retries);
	key_close(&b, before, "props.ejob.maxRetries");
	before = key_open(&b);
	get_int(&b, node ? ejob[3] : v[K_CONCURRENCY], node ? ejobk[3] : keys[K_CONCURRENCY],
	        node ? "props.ejob.concurrency" : "concurrency", 0, 1024,
	        "an integer 0-1024 (0: no limit)",
	        &j->concurrency);
	key_close(&b, before, "props.ejob.concurrency");
	if (node) jb_depends_node(&b, ejob[4], ejobk[4]);
	else jb_depends(&b, v[K_DEPENDSON], keys[K_DEPENDSON]);
	/* SINGLE_THREAD (ElasticJob: a pool of one thread per job, so its items on one instance run one
	 * after another) is concurrency 1 */
	if (j->executor.type && !strcmp(j->executor.type, "SINGLE_THREAD") &&
	    j->concurrency > 1) {
		const conf_tnode_t *at = node ? ejobk[3] : keys[K_CONCURRENCY];
		jb_kpath(&b, p, sizeof p, node ? "props.ejob.concurrency" : "concurrency");
		if (node) {
			conf_warn(cx, at, p, "%d with the executor SINGLE_THREAD, which runs one item at a time: one it is",
			          j->concurrency);
		} else {
			conf_err(cx, at, p, "%d with jobExecutorServiceHandlerType SINGLE_THREAD, which runs one item at a "
			         "time; leave one of them out", j->concurrency);
			b.errors++;
		}
	}
	jb_type_props(&b, keys[K_PROPS], v[K_PROPS]);
	/* what the error handler needs in props (a node's too: ejobctl config set refuses what the
	 * supervisor would) */
	conf_errh_t eh;
	struct errh_arg ea = { &b, v[K_PROPS], keys[K_PROPS] ? keys[K_PROPS] : keys[K_ERRHANDLER] };
	if (!ea.at) ea.at = b.at;
	conf_job_errh(j, &eh, jb_errh_err, &ea);

	if (b.nkept) {
		const char **kept = conf_arena_alloc(cx->out, b.nkept * sizeof *kept);
		if (!kept) return -1;
		memcpy(kept, b.kept, b.nkept * sizeof *kept);
		j->kept.keys = kept;
		j->kept.n = b.nkept;
	}
	if (conf_arena_exhausted(cx->out)) return -1;
	return b.errors ? -1 : 0;
}

/* The keys a job takes in a file (not jobName, which the file refuses: the name is the key under
 * jobs), for conf/conf_keys.c. */
const char *const *conf_job_file_keys(size_t *n)
{
	*n = K_FJOBNAME;
	return file_keys;
}
