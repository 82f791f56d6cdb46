/* conf/conf_job_props.c: a job's props (see conf_job.c): ejob's own keys taken out of a node's,
 * the listeners' commands, what each job type needs, an error handler's props' problems. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_job_int.h"

struct keyidx {
	const char *key;
	size_t i;
};

static int keyidx_cmp(const void *a, const void *b)
{
	const struct keyidx *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* props: a mapping of strings. In a node, ejob's own keys come out of it (see the top). */
/* props ejob.listener.{name} (docs/config.md "Listeners"): the per-instance commands, the
 * once-per-fire beforeAll and afterAll, and their timeout. */
static void get_listener_prop(jb_t *b, const conf_tnode_t *k, const char *ip, const char *name, const char *s)
{
	conf_job_t *j = b->j;
	if (!strcmp(name, "before")) j->listener.before = *s ? s : NULL;
	else if (!strcmp(name, "after")) j->listener.after = *s ? s : NULL;
	else if (!strcmp(name, "timeoutSeconds")) {
		char *end;
		errno = 0;
		long v = strtol(s, &end, 10);
		if (!*s || *end || errno || v < 1 || v > 86400) {
			jb_key_err(b, k, ip, "props.ejob.listener.timeoutSeconds",
			        "must be an integer 1-86400 (seconds a listener command may run; got \"%.40s\")", s);
		} else {
			j->listener.timeout_seconds = (int)v;
		}
	} else if (!strcmp(name, "afterAll")) {
		j->listener.after_all = *s ? s : NULL;
	} else if (!strcmp(name, "beforeAll")) {
		j->listener.before_all = *s ? s : NULL;
	} else if (b->cx->node_mode) {
		/* a prop like any other to ElasticJob */
		conf_warn(b->cx, k, ip, "not one of ejob's listener props (ejob.listener.before, ejob.listener.after, "
		          "ejob.listener.beforeAll, ejob.listener.afterAll, ejob.listener.timeoutSeconds): ignored");
	} else {
		conf_err(b->cx, k, ip, "unknown listener prop; ejob's are ejob.listener.before, ejob.listener.after, "
		         "ejob.listener.beforeAll, ejob.listener.afterAll and ejob.listener.timeoutSeconds");
		b->errors++;
	}
}

void jb_props(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at, const conf_tnode_t **ejob,
              const conf_tnode_t **ejobk)
{
	conf_ctx_t *cx = b->cx;
	conf_job_t *j = b->j;
	char p[512], ip[512];
	if (!v || conf_is_null(v)) return;
	jb_kpath(b, p, sizeof p, "props");
	if (v->kind != CONF_TN_MAP) {
		conf_err(cx, at, p, "must be a mapping of names to strings (got %s)", conf_kind_name(v));
		b->errors++;
		return;
	}
	conf_kv_t *kv = conf_arena_alloc(cx->out, (v->n + 1) * sizeof *kv);
	if (!kv) return;
	size_t n = 0;
	static const char *const ejob_keys[] = { "ejob.type", "ejob.timeoutSeconds", "ejob.maxRetries", "ejob.concurrency",
	                                         "ejob.dependsOn" };
	/* Keys first (decoded: a !!binary key is a string too). A node is ejob's when it has
	 * ejob.type; without it (a job ElasticJob wrote, or a person) ejob.* entries are ordinary
	 * props, kept as written. */
	const char **keys = conf_arena_alloc(cx->out, (v->n + 1) * sizeof *keys);
	if (!keys) return;
	bool ejobs = false;
	for (size_t i = 0; i < v->n; i++) {
		if (!conf_visit(cx, v->kids[2 * i])) return;
		if (conf_get_str(cx, v->kids[2 * i], NULL, p, &keys[i]) < 0) {
			b->errors++;
			keys[i] = NULL;
		} else if (strcmp(keys[i], "ejob.type") == 0) {
			ejobs = true;
		}
	}
	/* two keys may be written differently and decode to the same string ("a", !!binary YQ==):
	 * sort the decoded keys and compare neighbours (the tree saw only the written ones) */
	struct keyidx *idx = malloc((v->n + 1) * sizeof *idx);
	size_t m = 0;
	if (!idx) return;
	for (size_t i = 0; i < v->n; i++)
		if (keys[i]) idx[m++] = (struct keyidx){ keys[i], i };
	qsort(idx, m, sizeof *idx, keyidx_cmp);
	for (size_t i = 1; i < m; i++) {
		const conf_tnode_t *x = v->kids[2 * idx[i - 1].i], *y = v->kids[2 * idx[i].i];
		if (strcmp(idx[i - 1].key, idx[i].key) != 0 || (!x->tag && !y->tag)) continue;
		conf_path(ip, sizeof ip, p, idx[i].key);
		conf_err(cx, y, ip, "duplicate key (also at line %u, column %u); each key may appear once",
		         x->line, x->col);
		b->errors++;
	}
	free(idx);
	for (size_t i = 0; i < v->n; i++) {
		const conf_tnode_t *k = v->kids[2 * i], *val = v->kids[2 * i + 1];
		const char *key = keys[i];
		if (!key) continue;
		conf_path(ip, sizeof ip, p, key);
		if (strncmp(key, "ejob.listener.", 14) == 0) {
			/* kept in props as written (they travel in the config node), and read below */
		} else if (strncmp(key, "ejob.", 5) == 0) {
			size_t e;
			for (e = 0; e < NELEM(ejob_keys); e++)
				if (strcmp(key, ejob_keys[e]) == 0) break;
			if (cx->node_mode && ejobs && e < NELEM(ejob_keys)) {
				ejob[e] = val;
				ejobk[e] = k;
				continue;
			}
			if (!cx->node_mode) {
				conf_err(cx, k, ip, "props named ejob.* are ejob's own; set the job keys type, "
				         "timeoutSeconds, maxRetries, concurrency and dependsOn instead");
				b->errors++;
				continue;
			}
		}
		const char *s;
		if (conf_is_null(val)) {
			conf_err(cx, k, ip, "must be a string (got nothing); quote it, e.g. \"\"");
			b->errors++;
			continue;
		}
		if (conf_get_str(cx, val, k, ip, &s) < 0) {
			b->errors++;
			continue;
		}
		kv[n].key = key;
		kv[n].value = s;
		n++;
		if (strcmp(key, "script.command.line") == 0) j->script_command_line = s;
		else if (strcmp(key, "native.library") == 0) j->native.library = s;
		else if (strcmp(key, "native.symbol") == 0) j->native.symbol = s;
		else if (strncmp(key, "ejob.listener.", 14) == 0) get_listener_prop(b, k, ip, key + 14, s);
	}
	j->n_props = n;
	j->props = kv;
}

/* An http or dataflow prop's problem, at the prop's key when it is written (else at props, or the job). */
struct prop_arg {
	jb_t *b;
	const conf_tnode_t *props, *at;
	const char *path;
};

static void prop_err(void *arg, const char *key, const char *msg)
{
	struct prop_arg *a = arg;
	const conf_tnode_t *at = a->at;
	for (size_t i = 0; a->props && a->props->kind == CONF_TN_MAP && i < a->props->n; i++) {
		const conf_tnode_t *k = a->props->kids[2 * i];
		if (k->kind == CONF_TN_SCALAR && k->len == strlen(key) && memcmp(k->str, key, k->len) == 0) at = k;
	}
	char p[512], kept[256];
	conf_path(p, sizeof p, a->path, key);
	conf_fmt(kept, sizeof kept, "props.%.200s", key);
	/* in a node, ElasticJob fails the fire that reads the prop */
	jb_key_err(a->b, at, p, kept, "%s", msg);
}

/* What each type needs in props. */
void jb_type_props(jb_t *b, const conf_tnode_t *pk, const conf_tnode_t *pv)
{
	conf_job_t *j = b->j;
	char p[512];
	const conf_tnode_t *at = pk ? pk : b->at;
	jb_kpath(b, p, sizeof p, "props");
	if (j->type == CONF_JOB_SCRIPT) {
		const char *c = j->script_command_line;
		bool blank = true;
		for (const char *s = c; s && *s; s++)
			if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') blank = false;
		if (!c || blank) {
			/* ElasticJob's ScriptJobExecutor fails each fire without it */
			jb_key_err(b, at, p, "props.script.command.line", "a script job needs props 'script.command.line', the "
			        "command to run (split into arguments, no shell)");
		}
	} else if (j->type == CONF_JOB_NATIVE) {
		if (!j->native.library || !*j->native.library) {
			jb_key_err(b, at, p, "props.native.library", "a native job needs props 'native.library', the path of "
			        "the shared object");
		}
		if (!j->native.symbol || !jb_is_identifier(j->native.symbol)) {
			char q[128];
			if (j->native.symbol) conf_quote(q, sizeof q, j->native.symbol, strlen(j->native.symbol));
			jb_key_err(b, at, p, "props.native.symbol", "a native job needs props 'native.symbol', the C function "
			        "to call (an identifier%s%s)", j->native.symbol ? "; got " : "", j->native.symbol ? q : "");
		}
	} else if (j->type == CONF_JOB_HTTP) {
		struct prop_arg a = { b, pv, at, p };
		conf_job_http(j, prop_err, &a);
	} else if (j->type == CONF_JOB_DATAFLOW) {
		struct prop_arg a = { b, pv, at, p };
		conf_job_dataflow(j, prop_err, &a);
	}
}

/* An error handler's prop (conf_errh.c), at the prop's key when it is written (else at props,
 * or the job). */

void jb_errh_err(void *arg, const char *key, const char *msg)
{
	struct errh_arg *a = arg;
	const conf_tnode_t *at = a->at;
	for (size_t i = 0; a->props && a->props->kind == CONF_TN_MAP && i < a->props->n; i++) {
		const conf_tnode_t *k = a->props->kids[2 * i];
		if (k->kind == CONF_TN_SCALAR && k->len == strlen(key) && memcmp(k->str, key, k->len) == 0) at = k;
	}
	char p[512], q[512];
	jb_kpath(a->b, q, sizeof q, "props");
	conf_path(p, sizeof p, q, key);
	/* in a node, ElasticJob loads the handler and fails only when it sends: failed items are
	 * logged (LOG) until the node is fixed */
	jb_key_err(a->b, at, p, "jobErrorHandlerType", "%s%s", msg,
	        a->b->cx->node_mode ? "; until the node is fixed, failed items are only logged (LOG)" : "");
}
