/* conf/conf_node.c: ElasticJob's job config node, /{namespace}/{job}/config.
 *
 * ElasticJob writes it with YamlEngine.marshal(JobConfigurationPOJO): SnakeYAML's dumpAsMap in
 * block style, the bean's properties in Java's String order (alphabetical, upper case first),
 * null values and empty collections left out (ElasticJobYamlRepresenter). It reads it with
 * YamlEngine.unmarshal, a SnakeYAML loadAs that fails on a key the bean does not have. So ejob's
 * own keys cannot be top-level keys; they go into props, which every ElasticJob tool keeps:
 *
 *   props:
 *     ejob.type: script          (script, native, external, http, dataflow)
 *     ejob.timeoutSeconds: '0'
 *     ejob.maxRetries: '0'
 *     ejob.concurrency: '2'      (when set)
 *     ejob.dependsOn: a c        (when set: the jobs it runs after, separated by one space)
 *
 * props is a java.util.Properties, which SnakeYAML writes in its iteration order: since JDK 9 the
 * order of a ConcurrentHashMap. conf_props_order() computes that order (docs/config.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"

/* ---- Java's String.hashCode and ConcurrentHashMap's iteration order ----------------------- */

int32_t conf_java_hash(const char *s)
{
	uint32_t h = 0;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		i += conf_utf8_decode(s + i, n - i, &cp);
		if (cp >= 0x10000) {
			cp -= 0x10000;
			h = 31 * h + (0xd800 + (cp >> 10));
			h = 31 * h + (0xdc00 + (cp & 0x3ff));
		} else {
			h = 31 * h + cp;
		}
	}
	return (int32_t)h;
}

/* The facts of java.util.concurrent.ConcurrentHashMap (JDK 9-25) that decide its order, for
 * keys put once each by one thread into new Properties() (capacity 8 -> a table of 16):
 *   hash = (h ^ (h >>> 16)) & 0x7fffffff; bin = hash & (n - 1); a new key goes to the end of
 *   its bin's list, or to the front of a tree bin's list;
 *   after the put that brings the size to 3/4 of n, the table doubles; a bin that had 8 keys
 *   before a put becomes a tree bin when n >= 64, else the table is presized to fit 2n
 *   (doubling until 3/4 of n >= tableSizeFor(3n + 1));
 *   doubling splits each list bin in two: the longest tail of nodes that go to the same half
 *   keeps its order, the nodes before it are pushed in front, so they come out reversed; a tree
 *   bin's halves keep their order (and stop being trees at 6 keys or fewer);
 *   iteration walks bins 0..n-1, each bin's list from its head. */
struct chm_node {
	uint32_t hash;
	size_t idx;
	struct chm_node *next;
};

struct chm {
	struct chm_node **bins;
	bool *tree;
	size_t n, size, ctl;
	struct chm_node *pool;
};

static int chm_transfer(struct chm *m)
{
	size_t n = m->n, nn = 2 * n;
	struct chm_node **bins = calloc(nn, sizeof *bins);
	bool *tree = calloc(nn, sizeof *tree);
	if (!bins || !tree) {
		free(bins);
		free(tree);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct chm_node *f = m->bins[i];
		if (!f) continue;
		struct chm_node *lo = NULL, *hi = NULL;
		if (m->tree[i]) {
			struct chm_node **lt = &lo, **ht = &hi;
			size_t lc = 0, hc = 0;
			for (struct chm_node *e = f, *next; e; e = next) {
				next = e->next;
				e->next = NULL;
				if (e->hash & n) {
					*ht = e;
					ht = &e->next;
					hc++;
				} else {
					*lt = e;
					lt = &e->next;
					lc++;
				}
			}
			tree[i] = lc > 6;
			tree[i + n] = hc > 6;
		} else {
			uint32_t run = f->hash & n;
			struct chm_node *last = f;
			for (struct chm_node *p = f->next; p; p = p->next) {
				if ((p->hash & n) != run) {
					run = p->hash & n;
					last = p;
				}
			}
			if (run) hi = last;
			else lo = last;
			for (struct chm_node *p = f, *next; p != last; p = next) {
				next = p->next;
				if (p->hash & n) {
					p->next = hi;
					hi = p;
				} else {
					p->next = lo;
					lo = p;
				}
			}
		}
		bins[i] = lo;
		bins[i + n] = hi;
	}
	free(m->bins);
	free(m->tree);
	m->bins = bins;
	m->tree = tree;
	m->n = nn;
	m->ctl = (n << 1) - (n >> 1);
	return 0;
}

static size_t table_size_for(size_t c)
{
	size_t n = 1;
	while (n < c) n <<= 1;
	return n;
}

int conf_props_order(const char *const *keys, size_t nkeys, size_t *order)
{
	struct chm m = { .n = 16, .ctl = 12 };
	m.bins = calloc(m.n, sizeof *m.bins);
	m.tree = calloc(m.n, sizeof *m.tree);
	m.pool = calloc(nkeys + 1, sizeof *m.pool);
	int r = -1;
	if (!m.bins || !m.tree || !m.pool) goto out;
	for (size_t k = 0; k < nkeys; k++) {
		uint32_t h = (uint32_t)conf_java_hash(keys[k]);
		h = (h ^ (h >> 16)) & 0x7fffffff;
		struct chm_node *e = &m.pool[k];
		e->hash = h;
		e->idx = k;
		size_t b = h & (m.n - 1), count = 0;
		if (!m.bins[b]) {
			m.bins[b] = e;
		} else if (m.tree[b]) {
			e->next = m.bins[b];
			m.bins[b] = e;
		} else {
			struct chm_node *p = m.bins[b];
			count = 1;
			while (p->next) {
				p = p->next;
				count++;
			}
			p->next = e;
			if (count >= 8) {
				if (m.n < 64) {
					size_t c = table_size_for(2 * m.n + m.n + 1);
					while (c > m.ctl)
						if (chm_transfer(&m) < 0) goto out;
				} else {
					m.tree[b] = true;
				}
			}
		}
		m.size++;
		while (m.size >= m.ctl)
			if (chm_transfer(&m) < 0) goto out;
	}
	size_t o = 0;
	for (size_t i = 0; i < m.n; i++)
		for (struct chm_node *p = m.bins[i]; p; p = p->next) order[o++] = p->idx;
	r = o == nkeys ? 0 : -1;
out:
	free(m.bins);
	free(m.tree);
	free(m.pool);
	if (r < 0) errno = ENOMEM;
	return r;
}

/* ---- emit -------------------------------------------------------------------------------- */

static void key(conf_out_t *o, const char *k)
{
	conf_snake_map_key(o, k, strlen(k));
}

static void kv_str(conf_out_t *o, const char *k, const char *v)
{
	if (!v) return;
	key(o, k);
	conf_snake_string(o, v, strlen(v));
}

static void kv_bool(conf_out_t *o, const char *k, bool v)
{
	key(o, k);
	conf_snake_plain(o, v ? "true" : "false");
}

static void kv_int(conf_out_t *o, const char *k, int v)
{
	char b[16];
	conf_fmt(b, sizeof b, "%d", v);
	key(o, k);
	conf_snake_plain(o, b);
}

static void kv_u32(conf_out_t *o, const char *k, uint32_t v)
{
	char b[16];
	conf_fmt(b, sizeof b, "%" PRIu32, v);
	key(o, k);
	conf_snake_plain(o, b);
}

/* dependsOn as the prop ejob.dependsOn: the names separated by one space, malloc'd */
static char *depends_on(const conf_job_t *j)
{
	size_t len = 0;
	for (size_t i = 0; i < j->flow.n; i++) len += strlen(j->flow.depends_on[i]) + 1;
	char *s = malloc(len + 1), *p = s;
	if (!s) return NULL;
	*s = '\0';
	for (size_t i = 0; i < j->flow.n; i++) {
		size_t l = strlen(j->flow.depends_on[i]);
		if (i) *p++ = ' ';
		memcpy(p, j->flow.depends_on[i], l + 1);
		p += l;
	}
	return s;
}

static int emit_props(conf_out_t *o, const conf_job_t *j)
{
	/* ejob's own: type, timeoutSeconds and maxRetries with the type, concurrency and dependsOn
	 * when set */
	int conc = j->type != CONF_JOB_NONE && j->concurrency, flow = j->type != CONF_JOB_NONE && j->flow.n;
	size_t n = j->n_props + (j->type != CONF_JOB_NONE ? 3 : 0) + (conc ? 1 : 0) + (flow ? 1 : 0);
	if (n == 0) return 0;
	const char **keys = calloc(n, sizeof *keys), **vals = calloc(n, sizeof *vals);
	size_t *order = calloc(n, sizeof *order);
	char tmo[16], retries[16], cc[16], *deps = flow ? depends_on(j) : NULL;
	int r = -1;
	if (!keys || !vals || !order || (flow && !deps)) goto out;
	for (size_t i = 0; i < j->n_props; i++) {
		keys[i] = j->props[i].key;
		vals[i] = j->props[i].value;
	}
	if (j->type != CONF_JOB_NONE) {
		size_t i = j->n_props;
		conf_fmt(tmo, sizeof tmo, "%d", j->timeout_seconds);
		conf_fmt(retries, sizeof retries, "%d", j->max_retries);
		keys[i] = "ejob.type";
		vals[i++] = conf_job_type_name(j->type);
		keys[i] = "ejob.timeoutSeconds";
		vals[i++] = tmo;
		keys[i] = "ejob.maxRetries";
		vals[i++] = retries;
		if (conc) {
			conf_fmt(cc, sizeof cc, "%d", j->concurrency);
			keys[i] = "ejob.concurrency";
			vals[i++] = cc;
		}
		if (flow) {
			keys[i] = "ejob.dependsOn";
			vals[i] = deps;
		}
	}
	if (conf_props_order(keys, n, order) < 0) goto out;
	key(o, "props");
	conf_snake_map_begin(o);
	for (size_t i = 0; i < n; i++) {
		conf_snake_map_key(o, keys[order[i]], strlen(keys[order[i]]));
		conf_snake_string(o, vals[order[i]], strlen(vals[order[i]]));
	}
	conf_snake_map_end(o);
	r = 0;
out:
	free(keys);
	free(vals);
	free(order);
	free(deps);
	return r;
}

char *conf_node_emit(const conf_job_t *j, size_t *len)
{
	conf_out_t o;
	conf_out_init(&o);
	conf_snake_map_begin(&o);
	/* JobConfigurationPOJO's properties in String.compareTo order */
	kv_str(&o, "cron", j->cron);
	kv_str(&o, "description", j->description);
	kv_bool(&o, "disabled", j->disabled);
	kv_bool(&o, "failover", j->failover);
	kv_str(&o, "jobErrorHandlerType", j->error_handler_type);
	/* 3.0.5's name sorts where 3.0.4's does; the one it was written under */
	kv_str(&o, j->executor.key_3_0_5 ? "jobExecutorThreadPoolSizeProviderType" : "jobExecutorServiceHandlerType",
	       j->executor.type);
	if (j->extra.n) {
		key(&o, "jobExtraConfigurations");
		conf_snake_seq_begin(&o);
		for (size_t i = 0; i < j->extra.n; i++) {
			conf_snake_seq_item(&o);
			conf_snake_value(&o, &j->extra.configurations[i]);
		}
		conf_snake_seq_end(&o);
	}
	if (j->listener.n_types) {
		key(&o, "jobListenerTypes");
		conf_snake_seq_begin(&o);
		for (size_t i = 0; i < j->listener.n_types; i++) {
			conf_snake_seq_item(&o);
			conf_snake_string(&o, j->listener.types[i], strlen(j->listener.types[i]));
		}
		conf_snake_seq_end(&o);
	}
	kv_str(&o, "jobName", j->name);
	kv_str(&o, "jobParameter", j->job_parameter);
	kv_str(&o, "jobShardingStrategyType", j->strategy.type);
	kv_str(&o, "label", j->label);
	kv_int(&o, "maxTimeDiffSeconds", j->max_time_diff_seconds);
	kv_bool(&o, "misfire", j->misfire);
	kv_bool(&o, "monitorExecution", j->monitor_execution);
	kv_bool(&o, "overwrite", j->overwrite);
	if (emit_props(&o, j) < 0) o.oom = true;
	kv_int(&o, "reconcileIntervalMinutes", j->reconcile_interval_minutes);
	kv_str(&o, "shardingItemParameters", j->items.parameters);
	kv_u32(&o, "shardingTotalCount", j->sharding_total_count);
	kv_bool(&o, "staticSharding", j->static_sharding);
	kv_str(&o, "timeZone", j->time_zone);
	conf_snake_map_end(&o);
	conf_snake_end(&o);
	conf_out_fini(&o);
	if (o.oom || !o.buf) {
		free(o.buf);
		errno = ENOMEM;
		return NULL;
	}
	if (len) *len = o.len;
	return o.buf;
}

/* ---- an old strategy name, written back -------------------------------------------------- */

char *conf_node_fix_strategy(const void *buf, size_t len, size_t *outlen)
{
	static const char key[] = "jobShardingStrategyType:";
	const char *b = buf, *end = b + len;
	for (const char *l = b; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		const char *le = nl ? nl : end;
		if ((size_t)(le - l) > sizeof key - 1 && !memcmp(l, key, sizeof key - 1)) {
			const char *v = l + sizeof key - 1, *ve = le;
			while (v < ve && *v == ' ') v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\r')) ve--;
			size_t q = ve - v >= 2 && (*v == '\'' || *v == '"') && ve[-1] == *v ? 1 : 0;
			const char *name = v + q;
			size_t nlen = (size_t)(ve - v) - 2 * q;
			const char *real = nlen == 15 && !memcmp(name, "ODEVITY_BY_NAME", 15) ? "ODEVITY"
			                   : nlen == 19 && !memcmp(name, "ROUND_ROBIN_BY_NAME", 19) ? "ROUND_ROBIN" : NULL;
			if (!real) return NULL;
			size_t rl = strlen(real), n = len - nlen + rl;
			char *out = malloc(n + 1);
			if (!out) return NULL;
			size_t off = (size_t)(name - b);
			memcpy(out, b, off);
			memcpy(out + off, real, rl);
			memcpy(out + off + rl, name + nlen, len - off - nlen);
			out[n] = '\0';
			*outlen = n;
			return out;
		}
		l = nl ? nl + 1 : end;
	}
	return NULL;
}

/* ---- parse ------------------------------------------------------------------------------- */

/* A node's zone loads from this host's zoneinfo; a node has no other host lookups. */
static const conf_opts_t node_opts = { .load_zone = conf_sys_load_zone };

conf_job_t *conf_node_parse(const void *buf, size_t len, const char *name, conf_diags_t **diags)
{
	conf_diags_t *d = conf_diags_new();
	conf_arena_t *tmp = conf_arena_new(CONF_ARENA_LIMIT), *out = conf_arena_new(CONF_ARENA_LIMIT);
	conf_job_t *j = NULL;
	if (diags) *diags = NULL;
	if (!d || !tmp || !out) goto nomem;
	conf_arena_chunk(out, 1024);    /* it is kept, one per job: a node takes about 1 KB */
	if (!name) name = "(config node)";
	conf_ctx_t cx = { .file = name, .buf = buf, .len = len, .tmp = tmp, .out = out, .diags = d,
	                  .node_mode = true, .opts = &node_opts };
	j = conf_arena_alloc(out, sizeof *j);
	if (!j) goto nomem;
	if (len > CONF_MAX_FILE_BYTES) {
		conf_diag_add(d, name, 0, 0, "", "is larger than 4 MiB (%u bytes at most)",
		              CONF_MAX_FILE_BYTES);
		goto fail;
	}
	bool empty;
	const conf_tnode_t *root = conf_tree_parse(&cx, &empty);
	if (!root) {
		if (empty) conf_diag_add(d, name, 1, 1, "", "the config node is empty");
		if (conf_diags_total(d) == 0) goto nomem;
		goto fail;
	}
	if (root->kind != CONF_TN_MAP) {
		conf_err(&cx, root, "", "a config node must be a mapping of JobConfigurationPOJO's keys "
		         "(got %s)", conf_kind_name(root));
		goto fail;
	}
	int r = conf_job_build(&cx, j, NULL, root, "");
	if (conf_arena_exhausted(out) || conf_arena_exhausted(tmp)) {
		conf_diag_add(d, name, 0, 0, "", "out of memory, or more than %zu MiB after expanding "
		              "aliases", CONF_ARENA_LIMIT >> 20);
		goto fail;
	}
	if (r < 0 || conf_diags_errors(d)) goto fail;
	conf_diags_sort(d);
	j->mem_ = out;
	conf_resolver_free(&cx.res);
	conf_arena_free(tmp);
	if (diags) *diags = d;
	else conf_diags_free(d);
	return j;
fail:
	conf_resolver_free(&cx.res);
	conf_diags_sort(d);
	conf_arena_free(tmp);
	conf_arena_free(out);
	if (diags) *diags = d;
	else conf_diags_free(d);
	errno = EINVAL;
	return NULL;
nomem:
	conf_arena_free(tmp);
	conf_arena_free(out);
	conf_diags_free(d);
	errno = ENOMEM;
	return NULL;
}

void conf_job_free(conf_job_t *j)
{
	if (j) conf_arena_free(j->mem_);
}

conf_hold_t *conf_job_hold(const conf_job_t *j)
{
	return j ? conf_arena_hold(j->mem_) : NULL;
}
