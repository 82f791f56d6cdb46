/* conf/conf_util.c: looking things up in a loaded config, comparing jobs, the keys ejob does
 * not act on, naming enums, a listen address. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/conf_int.h"

const conf_job_t *conf_find_job(const conf_t *c, const char *name)
{
	for (size_t i = 0; i < c->n_jobs; i++)
		if (strcmp(c->jobs[i].name, name) == 0) return &c->jobs[i];
	return NULL;
}

const char *conf_job_item_param(const conf_job_t *j, int item)
{
	size_t lo = 0, hi = j->items.n_params;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (j->items.params[mid].item == item) return j->items.params[mid].value;
		if (j->items.params[mid].item < item) lo = mid + 1;
		else hi = mid;
	}
	return NULL;
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b) return a == b;
	return strcmp(a, b) == 0;
}

static bool value_eq(const conf_value_t *a, const conf_value_t *b)
{
	if (a->kind != b->kind || !str_eq(a->tag, b->tag)) return false;
	if (a->kind == CONF_VALUE_SCALAR) return str_eq(a->str, b->str);
	if (a->n != b->n) return false;
	size_t cnt = a->kind == CONF_VALUE_MAP ? 2 * a->n : a->n;
	for (size_t i = 0; i < cnt; i++)
		if (!value_eq(&a->items[i], &b->items[i])) return false;
	return true;
}

static int kv_cmp(const void *a, const void *b)
{
	const conf_kv_t *x = *(const conf_kv_t *const *)a, *y = *(const conf_kv_t *const *)b;
	return strcmp(x->key, y->key);
}

/* props as a set: the same keys with the same values, in any order (a config node keeps them
 * in java.util.Properties order, not the file's). Keys are unique within a job. */
static bool props_eq(const conf_job_t *a, const conf_job_t *b)
{
	size_t n = a->n_props;
	if (n != b->n_props) return false;
	const conf_kv_t **x = malloc((2 * n + 1) * sizeof *x);
	if (!x) {
		/* no memory to sort: compare the slow way */
		for (size_t i = 0; i < n; i++) {
			size_t k;
			for (k = 0; k < n; k++)
				if (strcmp(a->props[i].key, b->props[k].key) == 0) break;
			if (k == n || strcmp(a->props[i].value, b->props[k].value) != 0) return false;
		}
		return true;
	}
	const conf_kv_t **y = x + n;
	for (size_t i = 0; i < n; i++) {
		x[i] = &a->props[i];
		y[i] = &b->props[i];
	}
	qsort(x, n, sizeof *x, kv_cmp);
	qsort(y, n, sizeof *y, kv_cmp);
	bool eq = true;
	for (size_t i = 0; i < n && eq; i++)
		eq = strcmp(x[i]->key, y[i]->key) == 0 && strcmp(x[i]->value, y[i]->value) == 0;
	free(x);
	return eq;
}

static bool listeners_eq(const conf_job_t *a, const conf_job_t *b)
{
	if (a->listener.n_types != b->listener.n_types) return false;
	for (size_t i = 0; i < a->listener.n_types; i++)
		if (!str_eq(a->listener.types[i], b->listener.types[i])) return false;
	return true;
}

static bool extras_eq(const conf_job_t *a, const conf_job_t *b)
{
	if (a->extra.n != b->extra.n) return false;
	for (size_t i = 0; i < a->extra.n; i++)
		if (!value_eq(&a->extra.configurations[i], &b->extra.configurations[i])) return false;
	return true;
}

/* dependsOn in its order (as the node keeps it) */
static bool flow_eq(const conf_job_t *a, const conf_job_t *b)
{
	if (a->flow.n != b->flow.n) return false;
	for (size_t i = 0; i < a->flow.n; i++)
		if (strcmp(a->flow.depends_on[i], b->flow.depends_on[i])) return false;
	return true;
}

size_t conf_job_diff(const conf_job_t *a, const conf_job_t *b, const char **keys, size_t max)
{
	/* in ElasticJob's key order (JobConfigurationPOJO, alphabetical), ejob's keys after */
	const struct { const char *key; bool same; } d[] = {
		{ "cron", str_eq(a->cron, b->cron) },
		{ "description", str_eq(a->description, b->description) },
		{ "disabled", a->disabled == b->disabled },
		{ "failover", a->failover == b->failover },
		{ "jobErrorHandlerType", str_eq(a->error_handler_type, b->error_handler_type) },
		{ "jobExecutorServiceHandlerType", str_eq(a->executor.type, b->executor.type) &&
		                                   a->executor.key_3_0_5 == b->executor.key_3_0_5 },
		{ "jobExtraConfigurations", extras_eq(a, b) },
		{ "jobListenerTypes", listeners_eq(a, b) },
		{ "jobName", str_eq(a->name, b->name) },
		{ "jobParameter", str_eq(a->job_parameter, b->job_parameter) },
		{ "jobShardingStrategyType", a->strategy.effective == b->strategy.effective &&
		                             str_eq(a->strategy.type, b->strategy.type) },
		{ "label", str_eq(a->label, b->label) },
		{ "maxTimeDiffSeconds", a->max_time_diff_seconds == b->max_time_diff_seconds },
		{ "misfire", a->misfire == b->misfire },
		{ "monitorExecution", a->monitor_execution == b->monitor_execution },
		{ "overwrite", a->overwrite == b->overwrite },
		{ "props", props_eq(a, b) },
		{ "reconcileIntervalMinutes", a->reconcile_interval_minutes == b->reconcile_interval_minutes },
		{ "shardingItemParameters", str_eq(a->items.parameters, b->items.parameters) },
		{ "shardingTotalCount", a->sharding_total_count == b->sharding_total_count },
		{ "staticSharding", a->static_sharding == b->static_sharding },
		{ "timeZone", str_eq(a->time_zone, b->time_zone) },
		{ "type", a->type == b->type },
		{ "timeoutSeconds", a->timeout_seconds == b->timeout_seconds },
		{ "maxRetries", a->max_retries == b->max_retries },
		{ "concurrency", a->concurrency == b->concurrency },
		{ "dependsOn", flow_eq(a, b) },
	};
	size_t n = 0;
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
		if (d[i].same) continue;
		if (n < max && keys) keys[n] = d[i].key;
		n++;
	}
	return n;
}

bool conf_job_equal(const conf_job_t *a, const conf_job_t *b)
{
	/* items.params follow from items.parameters; the props pointers from props */
	return conf_job_diff(a, b, NULL, 0) == 0;
}

const char *conf_job_type_name(conf_job_type_t t)
{
	switch (t) {
	case CONF_JOB_SCRIPT: return "script";
	case CONF_JOB_NATIVE: return "native";
	case CONF_JOB_EXTERNAL: return "external";
	case CONF_JOB_HTTP: return "http";
	case CONF_JOB_DATAFLOW: return "dataflow";
	default: return "";
	}
}

const char *conf_strategy_name(conf_strategy_t s)
{
	switch (s) {
	case CONF_STRATEGY_ODEVITY: return "ODEVITY";
	case CONF_STRATEGY_ROUND_ROBIN: return "ROUND_ROBIN";
	case CONF_STRATEGY_SINGLE_SHARDING_BALANCE: return "SINGLE_SHARDING_BALANCE";
	default: return "AVG_ALLOCATION";
	}
}

int conf_job_concurrency(const conf_job_t *j)
{
	if (j->executor.type && !strcmp(j->executor.type, "SINGLE_THREAD")) return 1;
	return j->concurrency;
}

size_t conf_job_unacted(const conf_job_t *j, conf_unacted_t out[CONF_UNACTED_MAX])
{
	size_t n = 0;
	const char *t = j->error_handler_type;
	conf_errh_t e;
	conf_job_errh(j, &e, NULL, NULL);
	if (t && !strcmp(t, "THROW")) {
		out[n].key = "jobErrorHandlerType";
		snprintf(out[n].text, sizeof out[n].text,
		         "THROW has no meaning outside Java (ElasticJob rethrows the exception to its caller): ejob "
		         "treats it as LOG, a failed item is logged");
		n++;
	} else if (t && *t && strcmp(t, "LOG") != 0 && e.type == CONF_ERRH_LOG) {
		out[n].key = "jobErrorHandlerType";
		snprintf(out[n].text, sizeof out[n].text,
		         "%.200s is not an error handler ejob has (LOG, IGNORE, THROW, DINGTALK, WECHAT, EMAIL, WEBHOOK; "
		         "ElasticJob would load it as a plugin): a failed item is logged, as LOG does", t);
		n++;
	}
	const char *x = j->executor.type;
	if (x && strcmp(x, "CPU") && strcmp(x, "SINGLE_THREAD")) {
		out[n].key = j->executor.key_3_0_5 ? "jobExecutorThreadPoolSizeProviderType" : "jobExecutorServiceHandlerType";
		snprintf(out[n].text, sizeof out[n].text,
		         "%.200s is not an executor ejob has (CPU, SINGLE_THREAD; ElasticJob would load it as a plugin): the "
		         "job's items run as with CPU, as many at once as the pool has workers (concurrency limits them)", x);
		n++;
	}
	if (j->listener.n_types) {
		char list[256];
		size_t o = 0;
		for (size_t i = 0; i < j->listener.n_types && o < sizeof list; i++) {
			int k = snprintf(list + o, sizeof list - o, "%s%s", i ? ", " : "", j->listener.types[i]);
			if (k < 0) break;
			o += (size_t)k;
		}
		if (o >= sizeof list) memcpy(list + sizeof list - 4, "...", 4);   /* cut: say so */
		out[n].key = "jobListenerTypes";
		snprintf(out[n].text, sizeof out[n].text,
		         "[%s] %s not acted on by this version of ejob (only published for ElasticJob's tools): "
		         "ElasticJob's listener classes do not run here; ejob's listeners are the ejob.listener.* props",
		         list, j->listener.n_types == 1 ? "is" : "are");
		n++;
	}
	if (j->extra.n) {
		out[n].key = "jobExtraConfigurations";
		snprintf(out[n].text, sizeof out[n].text,
		         "not acted on by this version of ejob (only published for ElasticJob's tools): ElasticJob's per-job "
		         "extras (its tracing data source) are Java's; ejob's tracing is the file's tracing: section, for every "
		         "job of the supervisor");
		n++;
	}
	if (j->type == CONF_JOB_HTTP && j->http.data && !conf_http_sends_data(j->http.method)) {
		out[n].key = "props.http.data";
		snprintf(out[n].text, sizeof out[n].text,
		         "is not sent: a %s request has no body (ElasticJob sends http.data only with POST, PUT and "
		         "DELETE, and so does ejob); put it in http.uri's query string", j->http.method);
		n++;
	}
	return n;
}

const char *conf_log_level_name(conf_log_level_t l)
{
	switch (l) {
	case CONF_LOG_ERROR: return "error";
	case CONF_LOG_WARN: return "warn";
	case CONF_LOG_DEBUG: return "debug";
	default: return "info";
	}
}

/* What is wrong with an http(s) URL (http.uri, the error handlers' webhooks), or NULL: the scheme,
 * a host, a port, no blanks. */
const char *conf_url_problem(const char *u)
{
	size_t sl = !strncasecmp(u, "http://", 7) ? 7 : !strncasecmp(u, "https://", 8) ? 8 : 0;
	if (!sl) return "must start with http:// or https://";
	for (const unsigned char *p = (const unsigned char *)u; *p; p++)
		if (*p <= ' ' || *p == 0x7f) return "must not hold spaces or control characters: percent-encode them (a space is %20)";
	const char *auth = u + sl;
	size_t al = strcspn(auth, "/?#");
	const char *host = memrchr(auth, '@', al);   /* after any user:password@ */
	host = host ? host + 1 : auth;
	size_t hl = al - (size_t)(host - auth);
	const char *port = NULL;
	if (hl && host[0] == '[') {
		const char *close = memchr(host, ']', hl);
		if (!close || close == host + 1) return "has a bracketed IPv6 host that is empty or not closed";
		if ((size_t)(close + 1 - host) < hl) {
			if (close[1] != ':') return "has text after its IPv6 host's ']' that is not a :PORT";
			port = close + 2;
		}
	} else {
		const char *colon = memrchr(host, ':', hl);
		if (colon) port = colon + 1;
		if ((colon ? (size_t)(colon - host) : hl) == 0)
			return sl == 7 ? "has no host: write it as http://HOST[:PORT]/PATH"
			               : "has no host: write it as https://HOST[:PORT]/PATH";
	}
	if (port) {
		size_t pl = (size_t)(host + hl - port);
		unsigned long v = 0;
		int digits = pl > 0 && pl <= 5;
		for (size_t i = 0; digits && i < pl; i++) {
			if (port[i] < '0' || port[i] > '9') digits = 0;
			else v = v * 10 + (unsigned long)(port[i] - '0');
		}
		if (!digits || v < 1 || v > 65535) return "has a port that is not a number 1-65535";
	}
	return NULL;
}

const char *conf_job_prop(const conf_job_t *j, const char *key)
{
	for (size_t i = 0; i < j->n_props; i++)
		if (strcmp(j->props[i].key, key) == 0) return j->props[i].value;
	return NULL;
}

void conf_prop_problem(struct conf_prop_report *r, const char *key, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	r->n++;
	if (r->fn) r->fn(r->arg, key, msg);
}

void conf_prop_int(struct conf_prop_report *r, const conf_job_t *j, const char *key, long long min, long long max,
                   const char *what, int *out)
{
	const char *s = conf_job_prop(j, key);
	if (!s) return;
	long long v = 0;
	size_t n = strlen(s);
	int ok = n > 0 && n <= 10;
	for (size_t i = 0; ok && i < n; i++) {
		if (s[i] < '0' || s[i] > '9') ok = 0;
		else v = v * 10 + (s[i] - '0');
	}
	if (!ok || v < min || v > max) {
		char q[128];
		conf_quote(q, sizeof q, s, n);
		conf_prop_problem(r, key, "must be %s (got %s)", what, q);
		return;
	}
	*out = (int)v;
}

/* "IPv4:PORT" or "[IPv6]:PORT" (supervisor.metrics, ejobctl serve --listen) -> ss, len; -1 if not */
int conf_listen_addr(const char *s, struct sockaddr_storage *ss, unsigned *len)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s) return -1;
	size_t hl = (size_t)(colon - s);
	const char *h = s;
	int v6 = s[0] == '[';
	if (v6) {
		if (hl < 3 || s[hl - 1] != ']') return -1;
		h = s + 1;
		hl -= 2;
	}
	if (hl >= sizeof host) return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	char *end;
	errno = 0;
	long port = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || colon[1] == '+' || colon[1] == '-' || port < 1 || port > 65535) return -1;
	memset(ss, 0, sizeof *ss);
	if (v6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) return -1;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof *a;
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1) return -1;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*len = sizeof *a;
	}
	return 0;
}
