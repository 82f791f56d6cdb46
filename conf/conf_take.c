/* conf/conf_take.c: whether a config node can be taken as a job's config: the one check that the
 * supervisor applies to the node it watches (supervisor/coord/coord_config.c) and that `ejobctl config
 * set|edit` applies before it writes one, so that what ejobctl accepts a supervisor takes, and the
 * other way round. Pure: no I/O but the zone lookup conf_node_parse does.
 *
 * Key by key, as ElasticJob takes a node (docs/config.md, "What ElasticJob accepts"): a key whose
 * value ElasticJob loads and fails on only when it uses it (conf_job_t.kept.keys) keeps the value
 * in force, and the rest of the node is taken. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"

/* A node without props ejob.type, as ElasticJob writes it: its type is the job's root node's
 * (ConfigurationService writes SCRIPT there for a script job); ejob's own keys at their defaults. */
static void root_typed(conf_job_t *cj, const char *root_type)
{
	const char *c = cj->script_command_line;
	int blank = 1;
	for (const char *s = c; s && *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') blank = 0;
	if (cj->type == CONF_JOB_NONE && !strcmp(root_type, "SCRIPT") && !blank) cj->type = CONF_JOB_SCRIPT;
	if (cj->type == CONF_JOB_NONE && !strcmp(root_type, "HTTP")) cj->type = CONF_JOB_HTTP;
}

/* The first problem of a type's props (checked again here: a node typed HTTP by its root node,
 * or props taken from the config in force) into why, after prefix. */
struct first_why {
	char *why;
	size_t sz;
	const char *prefix;
	int n;
};

static void first_why(void *arg, const char *key, const char *msg)
{
	struct first_why *w = arg;
	if (!w->n++) snprintf(w->why, w->sz, "%sprops %s: %s", w->prefix, key, msg);
}

/* Why a parsed node cannot be taken, or NULL. */
static const char *unusable(const conf_job_t *cj, const char *job, const char *t, char *why, size_t sz)
{
	if (!cj->name || strcmp(cj->name, job)) {
		snprintf(why, sz, "jobName is '%s', not '%s'", cj->name ? cj->name : "", job);
		return why;
	}
	if (cj->type == CONF_JOB_NONE) {
		if (!*t)
			snprintf(why, sz, "props has no ejob.type (script, native, external, http or dataflow), and the job's root node "
			         "names no type");
		else if (!strcmp(t, "SCRIPT"))
			snprintf(why, sz, "it is ElasticJob's SCRIPT job (the job's root node) without props "
			         "script.command.line");
		else if (!strcmp(t, "DATAFLOW"))
			snprintf(why, sz, "it is ElasticJob's DATAFLOW job (the job's root node): a Java class's fetchData and "
			         "processData, which ejob cannot run; run it with ElasticJob, or give the node props "
			         "ejob.type: dataflow with native.library, native.fetch and native.process (or none of them, "
			         "for external workers)");
		else
			snprintf(why, sz, "its type is %s (the job's root node): a Java job (SIMPLE or a class), "
			         "which ejob cannot run; run it with ElasticJob, or give the node props ejob.type (script, "
			         "native, external, http or dataflow)", t);
		return why;
	}
	/* conf_node_parse compiled the cron (a cron that does not parse is a kept key; none is a
	 * one-off job) and loaded the zone (GMT, with a warning, when it does not load here) */
	return NULL;
}

/* ---- a kept key: the value in force in the node's place ------------------------------------ */

static void drop_cron(void *p)
{
	cron_free(p);
}

static void sip_quiet(void *arg, size_t off, bool warn, const char *msg)
{
	(void)arg, (void)off, (void)warn, (void)msg;
}

/* props[key] = value (NULL: no such prop), in the job's own memory. */
static int set_prop(conf_job_t *j, const char *key, const char *value)
{
	conf_kv_t *kv = conf_arena_alloc(j->mem_, (j->n_props + 1) * sizeof *kv);
	if (!kv) return -1;
	size_t n = 0;
	bool set = false;
	for (size_t i = 0; i < j->n_props; i++) {
		if (strcmp(j->props[i].key, key)) {
			kv[n++] = j->props[i];
		} else if (value && !set) {
			kv[n].key = j->props[i].key;
			if (!(kv[n++].value = conf_arena_strdup(j->mem_, value))) return -1;
			set = true;
		}
	}
	if (value && !set) {
		kv[n].key = conf_arena_strdup(j->mem_, key);
		kv[n].value = conf_arena_strdup(j->mem_, value);
		if (!kv[n].key || !kv[n++].value) return -1;
	}
	j->props = kv;
	j->n_props = n;
	return 0;
}

/* keep(): no config in force has a value of the key to keep */
#define KEEP_NONE (-2)

/* The value in force of key in cj's place: 0; KEEP_NONE; or -1 and why (it does not fit the rest
 * of the node either, or out of memory). in_force may be NULL (no config in force). */
static int keep(conf_job_t *cj, const conf_job_t *in_force, const char *key, char *why, size_t sz)
{
	const conf_job_t *f = in_force;
	if (!strcmp(key, "cron")) {
		cj->cron = NULL;
		cj->cron_compiled = NULL;
		if (!f) goto none;
		if (f->cron) {
			cron_err_t e;
			cron_t *c = cron_parse(f->cron, &e);
			if (!c || conf_arena_own(cj->mem_, drop_cron, c) < 0) goto nomem;
			cj->cron = conf_arena_strdup(cj->mem_, f->cron);
			cj->cron_compiled = c;
			if (!cj->cron) goto nomem;
		}
	} else if (!strcmp(key, "jobShardingStrategyType")) {
		/* ElasticJob's default when nothing is in force */
		cj->strategy.effective = f ? f->strategy.effective : CONF_STRATEGY_AVG_ALLOCATION;
		cj->strategy.type = f && f->strategy.type ? conf_strategy_name(f->strategy.effective) : NULL;
	} else if (!strcmp(key, "shardingItemParameters")) {
		cj->items.parameters = "";
		cj->items.n_params = 0;
		cj->items.params = NULL;
		if (f && *f->items.parameters) {
			conf_item_param_t *ip;
			size_t n;
			const char *t = conf_arena_strdup(cj->mem_, f->items.parameters);
			if (!t || conf_sip_parse(cj->mem_, t, (int)cj->sharding_total_count, true, &ip, &n, sip_quiet, NULL) != 0)
				goto nomem;
			cj->items.parameters = t;
			cj->items.params = ip;
			cj->items.n_params = n;
		}
	} else if (!strcmp(key, "jobErrorHandlerType")) {
		cj->error_handler_type = "LOG";
	} else if (!strcmp(key, "props.ejob.timeoutSeconds")) {
		cj->timeout_seconds = f ? f->timeout_seconds : 0;
	} else if (!strcmp(key, "props.ejob.maxRetries")) {
		cj->max_retries = f ? f->max_retries : 0;
	} else if (!strcmp(key, "props.ejob.dependsOn")) {
		/* the jobs it runs after in force (none in force: none), copied into the job's memory */
		cj->flow.n = 0;
		cj->flow.depends_on = NULL;
		if (f && f->flow.n) {
			char **names = conf_arena_alloc(cj->mem_, f->flow.n * sizeof *names);
			if (!names) goto nomem;
			for (size_t i = 0; i < f->flow.n; i++)
				if (!(names[i] = conf_arena_strdup(cj->mem_, f->flow.depends_on[i]))) goto nomem;
			cj->flow.depends_on = names;
			cj->flow.n = f->flow.n;
		}
	} else if (!strcmp(key, "props.ejob.listener.timeoutSeconds")) {
		cj->listener.timeout_seconds = f ? f->listener.timeout_seconds : CONF_LISTENER_TIMEOUT_DEFAULT;
		if (set_prop(cj, key + 6, f ? conf_job_prop(f, key + 6) : NULL) < 0) goto nomem;
	} else if (!strncmp(key, "props.", 6)) {
		/* a prop of the job's type: as in force (unset if unset there), if the job in force is
		 * of that type; the type's props are checked again */
		const char *k = key + 6;
		if (!f || f->type != cj->type) goto none;
		if (set_prop(cj, k, conf_job_prop(f, k)) < 0) goto nomem;
		cj->script_command_line = conf_job_prop(cj, "script.command.line");
		cj->native.library = conf_job_prop(cj, "native.library");
		cj->native.symbol = conf_job_prop(cj, "native.symbol");
		struct first_why w = { why, sz, "", 0 };
		if ((cj->type == CONF_JOB_HTTP && conf_job_http(cj, first_why, &w)) ||
		    (cj->type == CONF_JOB_DATAFLOW && conf_job_dataflow(cj, first_why, &w)))
			return -1;
		if ((cj->type == CONF_JOB_SCRIPT && !cj->script_command_line) ||
		    (cj->type == CONF_JOB_NATIVE && (!cj->native.library || !cj->native.symbol)))
			goto none;
	}
	return 0;
none:
	return KEEP_NONE;
nomem:
	snprintf(why, sz, "out of memory");
	errno = ENOMEM;
	return -1;
}

/* keep(), and when nothing is in force to keep, why: the key's own message (diags d), then that. */
static int keep_said(conf_job_t *cj, const conf_job_t *in_force, const char *key, const conf_diags_t *d, char *why,
                     size_t sz)
{
	int r = keep(cj, in_force, key, why, sz);
	if (r != KEEP_NONE) return r;
	const conf_diag_t *g = NULL;
	for (size_t x = 0; x < conf_diags_count(d); x++) {
		const conf_diag_t *e = conf_diags_get(d, x);
		if (e->level == CONF_DIAG_KEY && (!g || !strcmp(e->key, key))) g = e;
	}
	snprintf(why, sz, "%s; and no config in force has a value of %s to keep", g ? g->text : key, key);
	return -1;
}

conf_job_t *conf_node_take(const void *buf, size_t len, const char *name, const char *job, const char *root_type,
                           const conf_job_t *in_force, char *why, size_t whysz, conf_diags_t **diags)
{
	conf_diags_t *d = NULL;
	conf_job_t *cj = conf_node_parse(buf ? buf : "", len, name, &d);
	if (!cj) {
		const conf_diag_t *dg = NULL;
		for (size_t k = 0; d && k < conf_diags_count(d) && !dg; k++)
			if (conf_diags_get(d, k)->level == CONF_DIAG_ERROR) dg = conf_diags_get(d, k);
		snprintf(why, whysz, "%s", dg ? dg->text : "unreadable");
	} else {
		int typed = cj->type != CONF_JOB_NONE;
		root_typed(cj, root_type ? root_type : "");
		int blank_script = 0;
		if (cj->type == CONF_JOB_NONE && root_type && !strcmp(root_type, "SCRIPT") && in_force &&
		    in_force->type == CONF_JOB_SCRIPT) {
			/* ElasticJob's SCRIPT job without its command line: ElasticJob fails each fire; the
			 * command line in force is kept, as for an ejob script job */
			cj->type = CONF_JOB_SCRIPT;
			blank_script = 1;
			conf_diag_add_level(d, CONF_DIAG_KEY, name ? name : "(config node)", 0, 0, "props.script.command.line",
			                    "ElasticJob's SCRIPT job (the job's root node) needs the command to run; ElasticJob "
			                    "fails each fire without it, and ejob keeps the command line in force");
		}
		struct first_why hw = { why, whysz, "it is ElasticJob's HTTP job (the job's root node), and ", 0 };
		int bad = unusable(cj, job, root_type ? root_type : "", why, whysz) ||
		          (blank_script && keep_said(cj, in_force, "props.script.command.line", d, why, whysz) < 0) ||
		          (!typed && cj->type == CONF_JOB_HTTP && conf_job_http(cj, first_why, &hw));
		for (size_t k = 0; !bad && k < cj->kept.n; k++)
			bad = keep_said(cj, in_force, cj->kept.keys[k], d, why, whysz) < 0;
		if (bad) {
			conf_job_free(cj);
			cj = NULL;
		}
	}
	if (diags) *diags = d;
	else conf_diags_free(d);
	return cj;
}
