/* conf/conf_job_flow.c: dependsOn, the jobs a job runs after (workflows: conf/conf_flow.h), in
 * both forms of a job (conf_job.c):
 *   file:  dependsOn: [extract, load], a list of job names (flow or block);
 *   node:  props ejob.dependsOn: extract load, the names separated by one space, in the order
 *          given (as conf_node_emit writes it); "" is none. A problem is that key's own
 *          (CONF_DIAG_KEY): conf_node_take keeps the value in force.
 * Each name is a job name (conf_job_name_problem), not the job itself, and given once. Whether
 * the names are jobs, and the graph they make, is conf_flow_check's: at load for a file
 * (conf_flow_file, below), with the namespace's jobs for ejobctl. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_flow.h"
#include "conf/conf_job_int.h"

#define FLOW_KEY "props.ejob.dependsOn"
#define NAME_RULE "a job name must be 1-255 bytes without '/', '@-@', whitespace or control characters, and not '.' " \
                  "or '..'"

/* The problem of one name (n bytes at s) given after names[0..k) (NULL: one that had a problem),
 * into why, or NULL. */
static const char *name_problem(const jb_t *b, const char *s, size_t n, char *const *names, size_t k, char *why,
                                size_t whysz)
{
	char q[128];
	conf_quote(q, sizeof q, s, n);
	const char *p = conf_job_name_problem(s, n);
	if (p) {
		conf_fmt(why, whysz, "the name %s %s; %s", q, p, NAME_RULE);
		return why;
	}
	if (b->j->name && strlen(b->j->name) == n && !memcmp(b->j->name, s, n)) {
		conf_fmt(why, whysz, "names the job itself (%s); a job cannot run after itself: take it out", q);
		return why;
	}
	for (size_t i = 0; i < k; i++)
		if (names[i] && strlen(names[i]) == n && !memcmp(names[i], s, n)) {
			conf_fmt(why, whysz, "names %s twice; give each job once", q);
			return why;
		}
	return NULL;
}

void jb_depends(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at)
{
	conf_ctx_t *cx = b->cx;
	char p[512], ip[512], why[512];
	if (!v || conf_is_null(v)) return;
	jb_kpath(b, p, sizeof p, "dependsOn");
	if (v->kind != CONF_TN_SEQ) {
		conf_err(cx, at ? at : v, p, "must be a list of the jobs this one runs after, e.g. [extract, load] (got %s)",
		         conf_kind_name(v));
		b->errors++;
		return;
	}
	/* a name with a problem stays NULL: said once, later names are not compared with it */
	char **names = conf_arena_alloc(cx->out, (v->n + 1) * sizeof *names);
	if (!names) return;
	int errors = 0;
	for (size_t i = 0; i < v->n; i++) {
		const conf_tnode_t *it = v->kids[i];
		const char *s;
		if (!conf_visit(cx, it)) return;
		conf_path_index(ip, sizeof ip, p, i);
		if (it->kind != CONF_TN_SCALAR || conf_is_null(it)) {
			conf_err(cx, it, ip, "must be a job name (got %s)", conf_kind_name(it));
			errors++;
		} else if (conf_get_str(cx, it, NULL, ip, &s) < 0) {
			errors++;
		} else if (!*s) {
			conf_err(cx, it, ip, "an empty name; give the name of a job this one runs after");
			errors++;
		} else if (name_problem(b, s, strlen(s), names, i, why, sizeof why)) {
			conf_err(cx, it, ip, "%s", why);
			errors++;
		} else if (!(names[i] = conf_arena_strdup(cx->out, s))) {
			return;
		}
	}
	b->errors += errors;
	if (errors) return;
	b->j->flow.n = v->n;
	b->j->flow.depends_on = names;
}

void jb_depends_node(jb_t *b, const conf_tnode_t *v, const conf_tnode_t *at)
{
	conf_ctx_t *cx = b->cx;
	char why[512];
	const char *s;
	if (!at) return;
	int before = jb_key_open(b);
	if (v->kind != CONF_TN_SCALAR || conf_is_null(v)) {
		conf_err(cx, at, FLOW_KEY, "must be a string of the jobs this one runs after, their names separated by "
		         "spaces, e.g. 'extract load' (got %s)", conf_kind_name(v));
		b->errors++;
	} else if (conf_get_str(cx, v, at, FLOW_KEY, &s) < 0) {
		b->errors++;
	} else if (*s) {
		size_t len = strlen(s), n = 1, k = 0;
		for (size_t i = 0; i < len; i++) n += s[i] == ' ';
		char **names = conf_arena_alloc(cx->out, (n + 1) * sizeof *names);
		if (!names) goto out;
		for (size_t off = 0; off <= len; off += strcspn(s + off, " ") + 1) {
			size_t l = strcspn(s + off, " ");
			const char *bad = !l ? "an empty name (two spaces together, or one at an end); separate the names with "
			                       "one space"
			                     : name_problem(b, s + off, l, names, k, why, sizeof why);
			if (bad) {
				conf_err_in(cx, v, off, FLOW_KEY, "%s", bad);
				b->errors++;
				goto out;
			}
			if (!(names[k++] = conf_arena_strndup(cx->out, s + off, l))) goto out;
		}
		b->j->flow.n = k;
		b->j->flow.depends_on = names;
	}
out:
	jb_key_close(b, before, FLOW_KEY);
}

void conf_flow_file(conf_ctx_t *cx, const conf_tnode_t *map, const conf_t *c, int *errors)
{
	size_t n = c->n_jobs, links = 0;
	if (cx->opts && cx->opts->flow_open) return;
	for (size_t i = 0; i < n; i++) links += c->jobs[i].flow.n;
	if (!links) return;   /* no workflow */
	const conf_job_t **jobs = malloc(n * sizeof *jobs);
	char err[2048];
	const char *at = NULL;
	if (!jobs) {
		conf_diag_add(cx->diags, cx->file, 0, 0, "jobs", "out of memory checking the workflows");
		(*errors)++;
		return;
	}
	for (size_t i = 0; i < n; i++) jobs[i] = &c->jobs[i];
	int r = conf_flow_check(jobs, n, err, sizeof err, &at);
	int e = errno;
	free(jobs);
	if (r == 0) return;
	(*errors)++;
	if (e == ENOMEM || !at) {
		conf_diag_add(cx->diags, cx->file, 0, 0, "jobs", "out of memory checking the workflows");
		return;
	}
	/* said at the job's name under jobs:, as "jobs.D: dependsOn: ..." (its "job D: " is the key's path) */
	const conf_tnode_t *k = map;
	size_t al = strlen(at);
	for (size_t i = 0; i < map->n; i++)
		if (map->kids[2 * i]->len == al && !memcmp(map->kids[2 * i]->str, at, al)) k = map->kids[2 * i];
	char path[512];
	const char *msg = err;
	conf_path(path, sizeof path, "jobs", at);
	if (!strncmp(err, "job ", 4) && !strncmp(err + 4, at, al) && !strncmp(err + 4 + al, ": ", 2)) msg = err + 4 + al + 2;
	conf_err(cx, k, path, "%s", msg);
}
