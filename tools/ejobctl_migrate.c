/* tools/ejobctl_migrate.c: an ElasticJob Spring Boot configuration into an ejob configuration
 * (tools/ejobctl_migrate.h). The keys and defaults are those of ElasticJob 3.0.4's and 3.0.5's
 * elasticjob-lite-spring-boot-starter: ZookeeperProperties (elasticjob.reg-center),
 * ElasticJobConfigurationProperties (elasticjob.jobs.NAME), TracingProperties
 * (elasticjob.tracing, with spring.datasource or its own data-source), SnapshotServiceProperties
 * (elasticjob.dump). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"
#include "tools/ejobctl_migrate_int.h"

/* ---- the output -------------------------------------------------------------------------------- */

void mig_out_add(struct out *o, const struct spring_prop *origin, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		o->oom = 1;
		return;
	}
	if (o->len + (size_t)n + 2 > o->cap) {
		size_t cap = o->cap ? o->cap : 1024;
		while (cap < o->len + (size_t)n + 2) cap *= 2;
		char *b = realloc(o->buf, cap);
		if (!b) {
			free(s);
			o->oom = 1;
			return;
		}
		o->buf = b, o->cap = cap;
	}
	memcpy(o->buf + o->len, s, (size_t)n);
	o->len += (size_t)n;
	o->buf[o->len] = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] != '\n') continue;
		if (o->nlines == o->capl) {
			int capl = o->capl ? 2 * o->capl : 64;
			const struct spring_prop **v = realloc(o->origin, (size_t)capl * sizeof *v);
			if (!v) {
				o->oom = 1;
				break;
			}
			o->origin = v, o->capl = capl;
		}
		o->origin[o->nlines++] = origin;
	}
	free(s);
}

void mig_out_free(struct out *o)
{
	free(o->buf), free(o->origin);
	memset(o, 0, sizeof *o);
}

/* s as a YAML scalar ejob's loader reads back as the same string: plain when nothing in it could
 * be read otherwise, else double-quoted with escapes. malloc'd (NULL: out of memory). */
static char *yq(const char *s)
{
	static const char *const words[] = { "yes", "no", "on", "off", "true", "false", "null", "y", "n" };
	int plain = isalpha((unsigned char)s[0]) || s[0] == '/' || s[0] == '_';
	for (const char *p = s; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || strchr("_./@-", *p) || (*p == ':' && p[1] && p[1] != ' ');
	for (size_t i = 0; i < NELEM(words) && plain; i++) plain = strcasecmp(s, words[i]) != 0;
	if (plain) return strdup(s);
	size_t n = strlen(s);
	char *q = malloc(4 * n + 3), *o = q;
	if (!q) return NULL;
	*o++ = '"';
	for (const char *p = s; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\') *o++ = '\\', *o++ = (char)c;
		else if (c == '\n') *o++ = '\\', *o++ = 'n';
		else if (c == '\t') *o++ = '\\', *o++ = 't';
		else if (c < 0x20 || c == 0x7f) o += sprintf(o, "\\x%02x", c);
		else *o++ = (char)c;
	}
	*o++ = '"';
	*o = 0;
	return q;
}

void mig_out_kv(struct out *o, const struct spring_prop *origin, int indent, const char *key, const char *value)
{
	char *k = yq(key), *v = yq(value);
	if (!k || !v) o->oom = 1;
	else mig_out_add(o, origin, "%*s%s: %s\n", indent, "", k, v);
	free(k), free(v);
}

/* ---- values as Spring binds them ------------------------------------------------------------- */

/* the key as written (in one of 8 buffers used in turn: for a message at once) */
const char *mig_key(struct mx *x, const struct spring_prop *p)
{
	int k = x->nkey = (x->nkey + 1) % 8;
	free(x->keys[k]);
	x->keys[k] = spring_path(p, 0);
	if (!x->keys[k]) x->oom = 1;
	return x->keys[k] ? x->keys[k] : "";
}

/* p's path starts with these names (relaxed; NULL matches any name) */
int mig_under(const struct spring_prop *p, const char *const *names, int n)
{
	if (p->nseg < n) return 0;
	for (int i = 0; i < n; i++)
		if (names[i] && !spring_name_eq(p->seg[i], names[i])) return 0;
	return 1;
}

/* the last property at exactly this path (relaxed), marking every one there as used; NULL if none */
struct spring_prop *mig_take(struct mx *x, const char *const *names, int n)
{
	struct spring_prop *last = NULL;
	for (size_t i = 0; i < x->ps.n; i++)
		if (x->ps.v[i].nseg == n && mig_under(&x->ps.v[i], names, n)) {
			last = &x->ps.v[i];
			last->used = 1;
		}
	return last;
}

/* The value Spring binds, placeholders resolved as far as import can: "${NAME:default}" is its
 * default, said; "${NAME}" alone is not set, said; text around a placeholder is kept, said. Also
 * says when YAML 1.1 read the text as another one. NULL: not set. */
const char *mig_val(struct mx *x, const struct spring_prop *p, int text)
{
	if (!p || !p->value) return NULL;
	const char *v = p->value;
	if (text && p->written)
		MSG(x, p, "SnakeYAML reads %s as %s (YAML 1.1), so ElasticJob got \"%s\": written as \"%s\"; quote it in "
		    "the source if you meant %s", p->written, !strcmp(v, "true") || !strcmp(v, "false") ? "a boolean" : "an integer",
		    v, v, p->written);
	if (text && p->yaml_float)
		MSG(x, p, "SnakeYAML reads %s as a number (a Java Double), and ElasticJob got Java's text of it, which may "
		    "differ (09 is 9.0): written as written; quote it in the source", v);
	const char *ph = strstr(v, "${");
	if (!ph) return v;
	size_t n = strlen(v);
	if (ph == v && v[n - 1] == '}' && !strchr(v + 2, '{')) {
		const char *colon = strchr(v, ':');
		if (colon && colon < v + n - 1) {
			MSG(x, p, "%s is a placeholder Spring resolves from the environment; import cannot: its default '%.*s' "
			    "is written; write the value you run with", v, (int)(v + n - 1 - colon - 1), colon + 1);
			/* the default, in place: the property is this conversion's own */
			memmove((char *)p->value, colon + 1, (size_t)(v + n - 1 - colon - 1));
			((char *)p->value)[v + n - 1 - colon - 1] = 0;
			return p->value;
		}
		MSG(x, p, "%s is a placeholder Spring resolves from the environment; import cannot, and it has no default: "
		    "left out; write the value you run with", v);
		return NULL;
	}
	MSG(x, p, "holds a placeholder (${...}) that Spring resolves; ejob takes the text as written: write the value");
	return v;
}

/* Spring's int: decimal, or hex (0x, #), in Java's int range */
int mig_int(const char *s, long *v)
{
	while (isspace((unsigned char)*s)) s++;
	int neg = *s == '-';
	if (*s == '-' || *s == '+') s++;
	int base = 10;
	if ((s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) || s[0] == '#') base = 16, s += s[0] == '#' ? 1 : 2;
	char *e;
	errno = 0;
	long long n = strtoll(s, &e, base);
	if (e == s || errno || n > (long long)INT_MAX + neg) return -1;
	while (isspace((unsigned char)*e)) e++;
	if (*e || *s == '-' || *s == '+') return -1;
	*v = neg ? -(long)n : (long)n;
	return 0;
}

/* Spring's StringToBooleanConverter: true on yes 1 / false off no 0, any case */
int mig_bool(const char *s)
{
	static const char *const t[] = { "true", "on", "yes", "1" }, *const f[] = { "false", "off", "no", "0" };
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, t[i])) return 1;
		if (!strcasecmp(s, f[i])) return 0;
	}
	return -1;
}

const char *mig_suggest(const char *s, const char *const *names, size_t n)
{
	return conf_suggest(s, names, n);
}

/* ---- jobs ------------------------------------------------------------------------------------ */

/* ElasticJobConfigurationProperties (3.0.4; 3.0.5 renamed jobExecutorServiceHandlerType to
 * jobExecutorThreadPoolSizeProviderType) */
enum {
	J_CLASS, J_TYPE, J_CRON, J_TZ, J_BEAN, J_TOTAL, J_SIP, J_PARAM, J_MONITOR, J_FAILOVER, J_MISFIRE, J_MAXDIFF,
	J_RECONCILE, J_STRATEGY, J_EXECUTOR, J_POOLSIZE, J_ERRH, J_LISTENERS, J_DESCRIPTION, J_PROPS, J_DISABLED,
	J_OVERWRITE, J_N
};
static const char *const job_keys[J_N] = {
	"elasticJobClass", "elasticJobType", "cron", "timeZone", "jobBootstrapBeanName", "shardingTotalCount",
	"shardingItemParameters", "jobParameter", "monitorExecution", "failover", "misfire", "maxTimeDiffSeconds",
	"reconcileIntervalMinutes", "jobShardingStrategyType", "jobExecutorServiceHandlerType",
	"jobExecutorThreadPoolSizeProviderType", "jobErrorHandlerType", "jobListenerTypes", "description", "props",
	"disabled", "overwrite",
};

/* the error handlers' props as ElasticJob 3.0.x reads them (its *PropertiesConstants) */
static const char *const errh_props[] = {
	"dingtalk.webhook", "dingtalk.keyword", "dingtalk.secret", "dingtalk.connectTimeoutMilliseconds",
	"dingtalk.readTimeoutMilliseconds", "wechat.webhook", "wechat.connectTimeoutMilliseconds",
	"wechat.readTimeoutMilliseconds", "email.host", "email.port", "email.username", "email.password", "email.useSsl",
	"email.ssl.trust", "email.subject", "email.from", "email.to", "email.cc", "email.bcc", "email.debug",
};

struct job {
	const char *name;
	const struct spring_prop *first;          /* its first property: where messages about it point */
	const struct spring_prop *k[J_N];
	int nprops;
	const struct spring_prop *props[256];     /* props.*, by key, the last of each */
	char *prop_key[256];
	int refused;                              /* a reason it cannot be converted was said */
};

#define REFUSE(x, j, p, ...)                                                                       \
	do {                                                                                       \
		MSG(x, p, __VA_ARGS__);                                                            \
		(j)->refused = 1;                                                                  \
	} while (0)

/* the job's keys: its properties idx[0..n), in the order read */
static void job_collect(struct mx *x, struct job *j, const size_t *idx, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct spring_prop *p = &x->ps.v[idx[i]];
		p->used = 1;
		if (!j->first) j->first = p;
		if (p->nseg < 4) {
			MSG(x, p, "a job is a mapping of keys (cron, shardingTotalCount, ...): left out");
			continue;
		}
		int k = 0;
		while (k < J_N && !spring_name_eq(p->seg[3], job_keys[k])) k++;
		if (k == J_N) {
			const char *near = mig_suggest(p->seg[3], job_keys, J_N);
			char hint[128] = "";
			if (near) snprintf(hint, sizeof hint, "; did you mean %s?", near);
			MSG(x, p, "not a key of ElasticJob's starter (ElasticJobConfigurationProperties): Spring Boot ignores it, "
			    "and so does import%s", hint);
			continue;
		}
		if (k == J_PROPS) {
			if (p->nseg < 5) {
				if (p->value) MSG(x, p, "props is a mapping of names to values: left out");
				continue;
			}
			char *pk = spring_path(p, 4);
			if (!pk) {
				x->oom = 1;
				return;
			}
			if (strchr(pk, '[')) {
				MSG(x, p, "a list in props: java.util.Properties holds strings only; left out");
				free(pk);
				continue;
			}
			int at = 0;
			while (at < j->nprops && strcmp(j->prop_key[at], pk)) at++;
			if (at == j->nprops) {
				if (j->nprops == (int)NELEM(j->props)) {
					MSG(x, p, "more than %zu props: left out", NELEM(j->props));
					free(pk);
					continue;
				}
				j->prop_key[j->nprops++] = pk;
			} else {
				free(pk);
			}
			j->props[at] = p;
			continue;
		}
		if (k == J_LISTENERS) {          /* a list, or one text: said once, at its first */
			if (!j->k[k]) j->k[k] = p;
			continue;
		}
		if (p->nseg > 4) {
			MSG(x, p, "%s is one value, not a mapping or a list: left out", job_keys[k]);
			continue;
		}
		j->k[k] = p;
	}
}

static void emit_bool(struct mx *x, struct out *o, struct job *j, int k, const char *starter_default)
{
	const struct spring_prop *p = j->k[k];
	const char *v = mig_val(x, p, 0);
	if (!v) {
		if (starter_default) mig_out_add(o, j->first, "    %s: %s\n", job_keys[k], starter_default);
		return;
	}
	int b = mig_bool(v);
	if (b < 0) REFUSE(x, j, p, "'%s' is not a boolean: Spring Boot would not start; job '%s' is not converted", v, j->name);
	else mig_out_add(o, p, "    %s: %s\n", job_keys[k], b ? "true" : "false");
}

static void emit_int(struct mx *x, struct out *o, struct job *j, int k, const char *starter_default)
{
	const struct spring_prop *p = j->k[k];
	const char *v = mig_val(x, p, 0);
	long n;
	if (!v) {
		if (starter_default) mig_out_add(o, j->first, "    %s: %s\n", job_keys[k], starter_default);
		return;
	}
	if (mig_int(v, &n)) REFUSE(x, j, p, "'%s' is not an integer: Spring Boot would not start; job '%s' is not converted", v, j->name);
	else mig_out_add(o, p, "    %s: %ld\n", job_keys[k], n);
}

static void emit_str(struct mx *x, struct out *o, struct job *j, int k)
{
	const char *v = mig_val(x, j->k[k], 1);
	if (v) mig_out_kv(o, j->k[k], 4, job_keys[k], v);
}

/* The job's block (at o's end); 0, or -1 when it cannot be converted (said). */
static int job_block(struct mx *x, struct job *j, struct out *o, const struct spring_prop **defaults)
{
	const char *name = j->name;
	const struct spring_prop **k = j->k;
	if (k[J_CLASS]) {
		const char *cls = mig_val(x, k[J_CLASS], 0);
		REFUSE(x, j, k[J_CLASS], "%s is a Java class: ejob runs no Java, so job '%s' is not converted; do its work "
		       "in a script job (type: script, props.script.command.line), a native one (type: native, a C function) "
		       "or a dataflow one (type: dataflow, fetch and process in C): docs/migrating.md", cls ? cls : "(not set)",
		       name);
		if (k[J_TYPE]) MSG(x, k[J_TYPE], "elasticJobClass and elasticJobType are mutually exclusive (ElasticJob refuses the job)");
	}
	const char *type = NULL;
	if (!k[J_CLASS]) {
		const char *t = mig_val(x, k[J_TYPE], 0);
		if (!t) {
			REFUSE(x, j, j->first, "neither elasticJobClass nor elasticJobType: ElasticJob refuses the job, and job '%s' "
			       "is not converted; a command is elasticJobType: SCRIPT with props.script.command.line", name);
		} else if (!strcasecmp(t, "SCRIPT")) {
			type = "script";
		} else if (!strcasecmp(t, "HTTP")) {
			type = "http";
		} else {
			REFUSE(x, j, k[J_TYPE], "'%s' is not a job type ElasticJob runs without a class (SCRIPT, HTTP): job '%s' is "
			       "not converted", t, name);
		}
	}
	if (j->refused) return -1;   /* said; the rest of it would only be noise */
	if (k[J_BEAN]) {
		const char *cron = k[J_CRON] ? k[J_CRON]->value : NULL;
		if (!cron || !*cron)
			MSG(x, k[J_BEAN], "a Spring bean name: ejob has no beans; left out. The job has no cron, so it is a one-off "
			    "job: 'ejobctl trigger %s' runs it where your code called the bean's execute()", name);
		else
			MSG(x, k[J_BEAN], "the name of ElasticJob's ScheduleJobBootstrap bean: ejob has no beans; left out");
	}
	if (k[J_LISTENERS]) {
		struct spring_prop g = *k[J_LISTENERS];
		g.nseg = 4;                 /* the key, not its list's first item */
		spring_msg(x->m, g.file, g.name, g.line, mig_key(x, &g), "ElasticJob listener classes (Java SPI): ejob runs none; "
		           "left out. ejob's listeners are commands: props ejob.listener.before, after, beforeAll, afterAll "
		           "(docs/config.md, Listeners)");
	}
	if (!k[J_TOTAL] || !k[J_TOTAL]->value)
		REFUSE(x, j, k[J_TOTAL] ? k[J_TOTAL] : j->first, "shardingTotalCount is not set: the starter's default 0 makes "
		       "ElasticJob refuse the job (shardingTotalCount should larger than zero); job '%s' is not converted", name);
	if (j->refused) return -1;

	char *n = yq(name);
	if (!n) return x->oom = 1, -1;
	mig_out_add(o, j->first, "  %s:\n", n);
	free(n);
	mig_out_add(o, k[J_TYPE], "    type: %s\n", type);
	emit_str(x, o, j, J_CRON);
	emit_str(x, o, j, J_TZ);
	emit_int(x, o, j, J_TOTAL, NULL);
	emit_str(x, o, j, J_SIP);
	emit_str(x, o, j, J_PARAM);
	/* the starter's own defaults, not JobConfiguration's: its fields are plain booleans and ints */
	if (!*defaults && (!k[J_MONITOR] || !k[J_MISFIRE] || !k[J_RECONCILE])) *defaults = j->first;
	emit_bool(x, o, j, J_MONITOR, "false");
	emit_bool(x, o, j, J_FAILOVER, NULL);
	emit_bool(x, o, j, J_MISFIRE, "false");
	emit_int(x, o, j, J_MAXDIFF, NULL);
	emit_int(x, o, j, J_RECONCILE, "0");
	emit_str(x, o, j, J_STRATEGY);
	emit_str(x, o, j, J_EXECUTOR);
	emit_str(x, o, j, J_POOLSIZE);
	emit_str(x, o, j, J_ERRH);
	emit_str(x, o, j, J_DESCRIPTION);
	emit_bool(x, o, j, J_DISABLED, NULL);
	emit_bool(x, o, j, J_OVERWRITE, NULL);
	int header = 0;
	for (int i = 0; i < j->nprops; i++) {
		const struct spring_prop *p = j->props[i];
		const char *pk = j->prop_key[i];
		if (!strncmp(pk, "dingtalk.", 9) || !strncmp(pk, "wechat.", 7) || !strncmp(pk, "email.", 6)) {
			int known = 0;
			for (size_t e = 0; e < NELEM(errh_props) && !known; e++) known = !strcmp(pk, errh_props[e]);
			if (!known) {
				/* dingtalk.connectTimeout, as ElasticJob's own docs write it: the key it shortens */
				const char *near = NULL;
				for (size_t e = 0; e < NELEM(errh_props) && !near; e++)
					if (!strncmp(errh_props[e], pk, strlen(pk))) near = errh_props[e];
				if (!near) near = mig_suggest(pk, errh_props, NELEM(errh_props));
				char hint[160] = "";
				if (near) snprintf(hint, sizeof hint, " (its key is %s)", near);
				MSG(x, p, "not a prop of ElasticJob's error handler, which ignores it%s, and so would ejob: left out",
				    hint);
				continue;
			}
		}
		const char *v = mig_val(x, p, 1);
		if (!v) continue;
		if (!header) mig_out_add(o, j->first, "    props:\n"), header = 1;
		mig_out_kv(o, p, 6, pk, v);
	}
	return j->refused ? -1 : 0;
}

/* The job's block loaded by ejob's loader, alone (under a regCenter of its own): 0 when it loads;
 * else every error said, pointing at the property of its line, and -1. */
static int job_check(struct mx *x, struct job *j, const char *block, const struct spring_prop *const *origin, int nlines)
{
	static const char head[] = "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: import}\njobs:\n";
	size_t bl = strlen(block);
	char *doc = malloc(sizeof head + bl);
	if (!doc) return x->oom = 1, -1;
	memcpy(doc, head, sizeof head - 1);
	memcpy(doc + sizeof head - 1, block, bl + 1);
	conf_diags_t *d = NULL;
	conf_t *c = conf_parse(doc, sizeof head - 1 + bl, "import", x->opts, &d);
	free(doc);
	if (!c && !d) return x->oom = 1, -1;
	for (size_t i = 0; !c && i < conf_diags_count(d); i++) {
		const conf_diag_t *e = conf_diags_get(d, i);
		int l = (int)e->line - 3;       /* the block's lines start at the file's third */
		const struct spring_prop *p = l >= 0 && l < nlines && origin[l] ? origin[l] : j->first;
		MSG(x, p, "%s (%s); job '%s' is not converted", e->msg, e->key, j->name);
	}
	if (c && c->n_jobs == 1) {
		conf_unacted_t u[CONF_UNACTED_MAX];
		size_t n = conf_job_unacted(&c->jobs[0], u);
		for (size_t k = 0; k < n; k++) {
			const struct spring_prop *p = !strcmp(u[k].key, "jobErrorHandlerType") && j->k[J_ERRH] ? j->k[J_ERRH] : j->first;
			MSG(x, p, "%s", u[k].text);
		}
	}
	conf_diags_free(d);
	int ok = c != NULL;
	conf_free(c);
	return ok ? 0 : -1;
}

/* Every profile of the list (spring.profiles.active: dev,prod) has its file among the inputs:
 * application-PROFILE.* or, beside STEM.yml, STEM-PROFILE.* */
static int profile_given(struct mx *x, const char *list)
{
	for (const char *s = list; *s;) {
		size_t l = strcspn(s, ", ");
		int found = !l;
		for (size_t i = 0; i < x->nin && !found; i++) {
			const char *b = strrchr(x->in[i].name, '/') ? strrchr(x->in[i].name, '/') + 1 : x->in[i].name;
			const char *dash = strrchr(b, '-');
			found = dash && !strncmp(dash + 1, s, l) && dash[1 + l] == '.';
		}
		if (!found) return 0;
		s += l;
		while (*s == ',' || *s == ' ') s++;
	}
	return 1;
}

/* One job, its properties idx[0..n): converted into jobs (its block, checked), or said why not. */
static void migrate_job(struct mx *x, struct migrate_result *r, struct out *jobs, const struct spring_prop **defaults,
                        const size_t *idx, size_t n)
{
	r->jobs++;
	struct job j = { .name = x->ps.v[idx[0]].seg[2] };
	job_collect(x, &j, idx, n);
	struct out b = { 0 };
	const struct spring_prop *d0 = *defaults;
	if (!x->oom && job_block(x, &j, &b, defaults) == 0 && !b.oom && job_check(x, &j, b.buf, b.origin, b.nlines) == 0) {
		mig_out_add(jobs, NULL, "%s", b.buf);
		r->converted++;
	} else {
		*defaults = d0;
	}
	x->oom |= b.oom;
	mig_out_free(&b);
	for (int k = 0; k < j.nprops; k++) free(j.prop_key[k]);
}

/* qsort_r's comparisons: property indexes by job name, then read order; groups by their first */
static int by_job(const void *a, const void *b, void *arg)
{
	const struct spring_prop *v = arg;
	size_t i = *(const size_t *)a, k = *(const size_t *)b;
	int c = strcmp(v[i].seg[2], v[k].seg[2]);
	return c ? c : (i > k) - (i < k);
}

struct groups {
	const size_t *idx, *start;
};

static int by_first(const void *a, const void *b, void *arg)
{
	const struct groups *g = arg;
	size_t x = g->idx[g->start[*(const size_t *)a]], y = g->idx[g->start[*(const size_t *)b]];
	return (x > y) - (x < y);
}

/* ---- what is left: keys no step took ---------------------------------------------------------- */

static void leftovers(struct mx *x)
{
	static const char *const ej[] = { "elasticjob" }, *const dump[] = { "elasticjob", "dump" };
	static const char *const sp[] = { "spring" }, *const prof[] = { "spring", "profiles" };
	static const char *const top[] = { "reg-center", "jobs", "tracing", "dump" };
	for (size_t i = 0; i < x->ps.n; i++) {
		struct spring_prop *p = &x->ps.v[i];
		if (p->used) continue;
		p->used = 1;
		if (mig_under(p, dump, 2)) {
			if (p->nseg == 3 && spring_name_eq(p->seg[2], "port"))
				MSG(x, p, "ElasticJob's dump port (SnapshotService: echo dump@JOB | nc HOST %s): ejob has none; "
				    "'ejobctl dump JOB' prints a job's nodes from any machine that reaches ZooKeeper; left out",
				    p->value ? p->value : "PORT");
			else
				MSG(x, p, "ElasticJob's dump service: ejob has none ('ejobctl dump JOB' instead); left out");
			continue;
		}
		if (mig_under(p, ej, 1)) {
			const char *near = p->nseg > 1 ? mig_suggest(p->seg[1], top, NELEM(top)) : NULL;
			char hint[96] = "";
			if (near) snprintf(hint, sizeof hint, "; did you mean elasticjob.%s?", near);
			MSG(x, p, "not a key of ElasticJob's starter: Spring Boot ignores it; left out%s", hint);
			continue;
		}
		if (mig_under(p, prof, 2) && p->nseg >= 3 && (spring_name_eq(p->seg[2], "active") || spring_name_eq(p->seg[2], "include"))) {
			if (p->value && !profile_given(x, p->value))
				MSG(x, p, "profile %s: its file (application-%s.yml or .properties) is read only if given too: "
				    "ejobctl import %s application-%s.yml", p->value, p->value, p->name, p->value);
			continue;
		}
		/* the application's own settings: one message per group, spring.X or the top name */
		int depth = mig_under(p, sp, 1) && p->nseg > 1 ? 2 : 1;
		for (size_t k = i + 1; k < x->ps.n; k++) {
			struct spring_prop *q = &x->ps.v[k];
			int same = q->nseg >= depth && q->file == p->file;
			for (int s = 0; s < depth && same; s++) same = spring_name_eq(q->seg[s], p->seg[s]);
			if (same && !(mig_under(q, prof, 2) && q->nseg >= 3)) q->used = 1;
		}
		struct spring_prop g = *p;
		g.nseg = depth;
		spring_msg(x->m, p->file, p->name, p->line, mig_key(x, &g), "your application's settings, not ElasticJob's: "
		           "left out");
	}
}

/* ---- the whole ---------------------------------------------------------------------------------- */

static void header(struct out *o, const struct migrate_input *in, size_t n)
{
	mig_out_add(o, NULL, "# An ejob configuration, made by 'ejobctl import' from");
	for (size_t i = 0; i < n; i++) mig_out_add(o, NULL, "%s %s", i ? (i + 1 == n ? " and" : ",") : "", in[i].name);
	mig_out_add(o, NULL, "\n# (ElasticJob's Spring Boot starter). What has no ejob meaning was left out, and said on\n"
	        "# stderr with what to do instead. Keys: docs/config.md; the mapping: docs/migrating.md.\n");
}

int migrate_spring(const struct migrate_input *in, size_t n, const conf_opts_t *opts, struct migrate_result *r)
{
	memset(r, 0, sizeof *r);
	struct mx x = { .m = &r->msgs, .in = in, .nin = n, .opts = opts };
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		int rr = spring_read(&x.ps, x.m, (int)i, in[i].name, in[i].buf, in[i].len, in[i].properties);
		if (rr < 0) x.oom = 1;
		bad |= rr > 0;
	}
	static const char *const ej[] = { "elasticjob" };
	int any = 0;
	for (size_t i = 0; i < x.ps.n && !any; i++) any = mig_under(&x.ps.v[i], ej, 1);
	if (!bad && !any && n) {
		static const char *const ejob[] = { "jobs" }, *const rc[] = { "regCenter" };
		int ejob_file = 0;
		for (size_t i = 0; i < x.ps.n && !ejob_file; i++)
			ejob_file = mig_under(&x.ps.v[i], ejob, 1) || mig_under(&x.ps.v[i], rc, 1);
		spring_msg(x.m, 0, in[0].name, 0, "", "no elasticjob.* keys: not an ElasticJob Spring Boot configuration%s",
		           ejob_file ? " (it looks like an ejob configuration already: ejobctl validate FILE)" : "");
	}
	struct head h = { 0 };
	struct out o = { 0 };
	int fatal = bad || !any;
	if (!fatal) mig_reg_center(&x, &h, &fatal);
	if (!fatal) mig_tracing(&x, &h);
	/* the head alone through ejob's loader: a key it refuses is said and left out (a required one
	 * ends the conversion) */
	for (int round = 0; !fatal && !x.oom && round < 16; round++) {
		struct out t = { 0 };
		mig_head_emit(&h, &t);
		mig_out_add(&t, NULL, "jobs: {}\n");
		conf_diags_t *d = NULL;
		conf_t *c = t.oom ? NULL : conf_parse(t.buf, t.len, "import", opts, &d);
		int again = 0;
		if (!c && !d) x.oom = 1;
		for (size_t i = 0; !c && d && i < conf_diags_count(d) && !again; i++) {
			const conf_diag_t *e = conf_diags_get(d, i);
			const struct spring_prop *p = e->line >= 1 && (int)e->line <= t.nlines ? t.origin[e->line - 1] : NULL;
			int is_tracing = !strncmp(e->key, "tracing", 7);
			const char *sec = is_tracing ? "tracing" : "regCenter";
			const char *key = strchr(e->key, '.') ? strchr(e->key, '.') + 1 : "";
			char k[64];
			snprintf(k, sizeof k, "%.*s", (int)strcspn(key, ".["), key);
			if (p) MSG(&x, p, "%s (ejob's %s)%s", e->msg, e->key, is_tracing ? "; tracing left out" : "");
			else spring_msg(x.m, 0, in[0].name, 0, "", "%s: %s", e->key, e->msg);
			if (!is_tracing && (!strcmp(k, "serverLists") || !strcmp(k, "namespace") || !*k)) {
				fatal = 1;
				spring_msg(x.m, p ? p->file : 0, p ? p->name : in[0].name, p ? p->line : 0, "", "ejob cannot use this "
				           "ZooKeeper setting: nothing converted");
			}
			mig_head_drop(&h, sec, is_tracing ? NULL : k);
			again = 1;
		}
		conf_diags_free(d);
		int done = c != NULL;
		conf_free(c);
		mig_out_free(&t);
		if (done || !again) break;
	}
	/* the jobs, in the order of their first key: their properties grouped by name (sorted, so
	 * that thousands of jobs take no quadratic time), then the groups by their first property */
	static const char *const jobs_pre[] = { "elasticjob", "jobs" };
	struct out jobs = { 0 };
	const struct spring_prop *defaults = NULL;   /* the first job converted with the starter's defaults */
	size_t nj = 0, ng = 0;
	size_t *jidx = calloc(x.ps.n + 1, sizeof *jidx), *gstart = calloc(x.ps.n + 1, sizeof *gstart);
	if (!jidx || !gstart) x.oom = 1;
	for (size_t i = 0; jidx && i < x.ps.n; i++)
		if (x.ps.v[i].nseg >= 3 && mig_under(&x.ps.v[i], jobs_pre, 2)) jidx[nj++] = i;
	if (nj) {
		qsort_r(jidx, nj, sizeof *jidx, by_job, x.ps.v);
		for (size_t i = 0; i < nj; i++)
			if (!i || strcmp(x.ps.v[jidx[i]].seg[2], x.ps.v[jidx[i - 1]].seg[2])) gstart[ng++] = i;
		gstart[ng] = nj;
		/* groups in the order of their first property (jidx within a group is in read order) */
		size_t *order = calloc(ng + 1, sizeof *order);
		if (!order) x.oom = 1;
		for (size_t g = 0; order && g < ng; g++) order[g] = g;
		if (order) qsort_r(order, ng, sizeof *order, by_first, &(struct groups){ jidx, gstart });
		for (size_t g = 0; order && !fatal && !x.oom && g < ng; g++)
			migrate_job(&x, r, &jobs, &defaults, jidx + gstart[order[g]], gstart[order[g] + 1] - gstart[order[g]]);
		free(order);
	}
	free(jidx), free(gstart);
	static const char *const jobs_key[] = { "elasticjob", "jobs" };
	struct spring_prop *jobs_scalar = mig_take(&x, jobs_key, 2);
	if (jobs_scalar && jobs_scalar->value) MSG(&x, jobs_scalar, "jobs is a mapping of job names to jobs: left out");
	if (defaults)
		spring_msg(x.m, defaults->file, defaults->name, defaults->line, "elasticjob.jobs", "the starter's defaults are "
		           "monitorExecution false, misfire false and reconcileIntervalMinutes 0 (its fields are plain "
		           "booleans and ints), not ElasticJob's true, true and 10: written out for each job that does not "
		           "set them, so that they run as they did");
	if (!fatal) leftovers(&x);
	if (!fatal && r->jobs && !r->converted) fatal = 1;   /* each job said why */
	if (!fatal && !x.oom) {
		header(&o, in, n);
		mig_head_emit(&h, &o);
		if (jobs.len) mig_out_add(&o, NULL, "jobs:\n%s", jobs.buf);
		else mig_out_add(&o, NULL, "jobs: {}\n");
		x.oom |= o.oom;
		/* the whole file loads: it must, each part did */
		conf_diags_t *d = NULL;
		conf_t *c = x.oom ? NULL : conf_parse(o.buf, o.len, "import", opts, &d);
		if (!c && d) {
			for (size_t i = 0; i < conf_diags_count(d); i++)
				spring_msg(x.m, 0, in[0].name, 0, "", "internal: the converted file does not load (a bug of ejobctl "
				           "import, please report it): %s", conf_diags_get(d, i)->text);
			r->status = 1;
		} else if (!c) {
			x.oom = 1;
		} else {
			r->out = o.buf, r->len = o.len;
			o.buf = NULL;
		}
		conf_free(c);
		conf_diags_free(d);
	} else if (!x.oom) {
		r->status = 2;
	}
	for (int i = 0; i < h.n; i++) free(h.v[i].value);
	mig_out_free(&o);
	mig_out_free(&jobs);
	for (int i = 0; i < 8; i++) free(x.keys[i]);
	spring_props_free(&x.ps);
	spring_msgs_sort(x.m);
	if (x.oom) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void migrate_result_free(struct migrate_result *r)
{
	free(r->out);
	spring_msgs_free(&r->msgs);
	memset(r, 0, sizeof *r);
}
