/* conf/conf_flow.c: the workflows' graph checked (conf_flow.h): names resolved, cron and
 * dependsOn not both, no cycle (a depth-first walk down the dependents), one root per workflow
 * (a walk of each workflow, its links taken either way). Memory: O(jobs + links). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_flow.h"

#define NONE SIZE_MAX

/* ---- the message, cut with "..." when it does not fit ---------------------------------------- */

struct msg {
	char *buf;
	size_t cap, len;
	bool cut;
};

static void say(struct msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct msg *m, const char *fmt, ...)
{
	if (m->cut || !m->cap) return;
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(m->buf + m->len, m->cap - m->len, fmt, ap);
	va_end(ap);
	if (r >= 0 && (size_t)r < m->cap - m->len) {
		m->len += (size_t)r;
		return;
	}
	m->cut = true;
	m->len = m->cap - 1;
	if (m->cap < 4) return;
	size_t p = m->cap - 4;
	while (p > 0 && ((unsigned char)m->buf[p] & 0xc0) == 0x80) p--;   /* not inside a UTF-8 character */
	memcpy(m->buf + p, "...", 4);
}

/* ---- the graph -------------------------------------------------------------------------------- */

struct ent {
	const char *name;
	size_t i;
};

struct graph {
	const conf_job_t *const *jobs;
	size_t n;
	struct ent *byname;         /* sorted by name */
	size_t *up_off, *up;        /* job i's upstreams (what it names): up[up_off[i] .. up_off[i + 1]) */
	size_t *dn_off, *dn;        /* its dependents (the jobs that name it), in jobs' order */
};

static int ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ent *)a)->name, ((const struct ent *)b)->name);
}

static size_t find(const struct graph *g, const char *name)
{
	struct ent k = { name, 0 };
	const struct ent *e = bsearch(&k, g->byname, g->n, sizeof *g->byname, ent_cmp);
	return e ? e->i : NONE;
}

static const char *name_of(const struct graph *g, size_t i)
{
	return g->jobs[i]->name;
}

/* Each job's dependsOn resolved into up[]: the first name that is the job itself, unknown or
 * given twice, or a job with a cron too, is said (1); 0 when all resolve; -1 out of memory. */
static int resolve(struct graph *g, struct msg *m, const char **at)
{
	size_t nl = 0;
	for (size_t i = 0; i < g->n; i++) nl += g->jobs[i]->flow.n;
	size_t *stamp = calloc(g->n + 1, sizeof *stamp);
	g->up_off = malloc((g->n + 1) * sizeof *g->up_off);
	g->up = malloc((nl + 1) * sizeof *g->up);
	if (!stamp || !g->up_off || !g->up) {
		free(stamp);
		return -1;
	}
	size_t e = 0;
	int bad = 0;
	for (size_t i = 0; i < g->n && !bad; i++) {
		const conf_job_t *j = g->jobs[i];
		g->up_off[i] = e;
		for (size_t k = 0; k < j->flow.n && !bad; k++) {
			const char *d = j->flow.depends_on[k];
			size_t x = find(g, d);
			bad = 1;
			*at = j->name;
			if (!strcmp(d, j->name)) {
				say(m, "job %s: dependsOn: names %s itself; a job cannot run after itself: take it out", j->name, d);
			} else if (x == NONE) {
				const char **names = malloc((g->n + 1) * sizeof *names);
				const char *s = NULL;
				if (names) {
					for (size_t y = 0; y < g->n; y++) names[y] = name_of(g, y);
					s = conf_suggest(d, names, g->n);
				}
				say(m, "job %s: dependsOn: no job named %s", j->name, d);
				if (s) say(m, " (did you mean '%s'?)", s);
				say(m, "; add a job %s, or take it out of dependsOn", d);
				free(names);
			} else if (stamp[x] == i + 1) {
				say(m, "job %s: dependsOn: names %s twice; give each job once", j->name, d);
			} else {
				bad = 0;
				stamp[x] = i + 1;
				g->up[e++] = x;
			}
		}
		if (!bad && j->cron && j->flow.n) {
			*at = j->name;
			say(m, "job %s: cron and dependsOn: a job with dependsOn fires when the jobs it names end, not on a "
			    "cron; remove one of them", j->name);
			bad = 1;
		}
	}
	g->up_off[g->n] = e;
	free(stamp);
	return bad;
}

/* The dependents of each job, from up[]. 0 or -1 (out of memory). */
static int dependents(struct graph *g)
{
	size_t nl = g->up_off[g->n];
	g->dn_off = calloc(g->n + 1, sizeof *g->dn_off);
	g->dn = malloc((nl + 1) * sizeof *g->dn);
	size_t *fill = malloc((g->n + 1) * sizeof *fill);
	if (!g->dn_off || !g->dn || !fill) {
		free(fill);
		return -1;
	}
	for (size_t e = 0; e < nl; e++) g->dn_off[g->up[e] + 1]++;
	for (size_t i = 0; i < g->n; i++) g->dn_off[i + 1] += g->dn_off[i];
	memcpy(fill, g->dn_off, g->n * sizeof *fill);
	for (size_t i = 0; i < g->n; i++)
		for (size_t e = g->up_off[i]; e < g->up_off[i + 1]; e++) g->dn[fill[g->up[e]]++] = i;
	free(fill);
	return 0;
}

/* A cycle: said (1) from its first job in jobs' order, in run order; 0 none; -1 out of memory. */
static int cycle(const struct graph *g, struct msg *m, const char **at)
{
	unsigned char *color = calloc(g->n + 1, 1);   /* 0 not seen, 1 on the walk's path, 2 done */
	size_t *node = malloc((g->n + 1) * sizeof *node), *next = malloc((g->n + 1) * sizeof *next);
	int r = -1;
	if (!color || !node || !next) goto out;
	r = 0;
	for (size_t s = 0; s < g->n && !r; s++) {
		if (color[s]) continue;
		size_t sp = 0;
		node[sp] = s, next[sp++] = g->dn_off[s], color[s] = 1;
		while (sp && !r) {
			size_t x = node[sp - 1];
			if (next[sp - 1] == g->dn_off[x + 1]) {
				color[x] = 2;
				sp--;
				continue;
			}
			size_t y = g->dn[next[sp - 1]++];
			if (!color[y]) {
				node[sp] = y, next[sp++] = g->dn_off[y], color[y] = 1;
				continue;
			}
			if (color[y] == 2) continue;
			/* node[p .. sp-1] is the cycle, each running after the one before, y = node[p] after the last */
			size_t p = sp - 1;
			while (node[p] != y) p--;
			size_t len = sp - p, first = 0;
			for (size_t k = 1; k < len; k++)
				if (node[p + k] < node[p + first]) first = k;
			*at = name_of(g, node[p + first]);
			say(m, "job %s: dependsOn: a cycle: ", *at);
			for (size_t k = 0; k <= len; k++)
				say(m, "%s%s", k ? " -> " : "", name_of(g, node[p + (first + k) % len]));
			say(m, "; each runs after the one before it, so none of them ever runs: take one out of the next one's "
			    "dependsOn");
			r = 1;
		}
	}
out:
	free(color);
	free(node);
	free(next);
	return r;
}

/* A workflow with two roots: said (1); 0 none; -1 out of memory. A walk of each workflow (links
 * either way) counts its roots; for the first with two, a walk from its first root finds the
 * nearest other one, and the path between them. */
static int roots(const struct graph *g, struct msg *m, const char **at)
{
	size_t *seen = calloc(g->n + 1, sizeof *seen);      /* 1 + the workflow's first job, 0: not seen */
	size_t *queue = malloc((g->n + 1) * sizeof *queue), *from = malloc((g->n + 1) * sizeof *from);
	unsigned char *down = malloc(g->n + 1);             /* reached as a dependent of from[] */
	int r = -1;
	if (!seen || !queue || !from || !down) goto out;
	r = 0;
	for (size_t s = 0; s < g->n && !r; s++) {
		if (seen[s] || (g->up_off[s] == g->up_off[s + 1] && g->dn_off[s] == g->dn_off[s + 1])) continue;
		size_t head = 0, tail = 0, nroots = 0, first = NONE;
		queue[tail++] = s, seen[s] = s + 1;
		while (head < tail) {
			size_t x = queue[head++];
			if (g->up_off[x] == g->up_off[x + 1]) {
				nroots++;
				if (x < first) first = x;
			}
			for (int dir = 0; dir < 2; dir++) {
				const size_t *off = dir ? g->dn_off : g->up_off, *to = dir ? g->dn : g->up;
				for (size_t e = off[x]; e < off[x + 1]; e++)
					if (!seen[to[e]]) seen[to[e]] = s + 1, queue[tail++] = to[e];
			}
		}
		if (nroots < 2) continue;
		/* from the first root to the nearest other one */
		for (size_t k = 0; k < tail; k++) from[queue[k]] = NONE;
		head = tail = 0;
		queue[tail++] = first, from[first] = first;
		size_t other = NONE;
		while (head < tail && other == NONE) {
			size_t x = queue[head++];
			for (int dir = 0; dir < 2 && other == NONE; dir++) {
				const size_t *off = dir ? g->dn_off : g->up_off, *to = dir ? g->dn : g->up;
				for (size_t e = off[x]; e < off[x + 1] && other == NONE; e++) {
					size_t y = to[e];
					if (from[y] != NONE) continue;
					from[y] = x, down[y] = (unsigned char)dir, queue[tail++] = y;
					if (g->up_off[y] == g->up_off[y + 1]) other = y;
				}
			}
		}
		/* the path, first .. other: reversed into queue */
		size_t len = 0;
		for (size_t y = other; y != first; y = from[y]) queue[len++] = y;
		queue[len++] = first;
		*at = name_of(g, other);
		say(m, "job %s: dependsOn: a workflow has one root, and %s and %s both start this one (%s", *at,
		    name_of(g, first), *at, name_of(g, first));
		for (size_t k = len - 1; k > 0; k--) {
			size_t y = queue[k - 1];
			say(m, " %s %s", down[y] ? "->" : "<-", name_of(g, y));
		}
		say(m, "); give %s a dependsOn, or split the workflow", *at);
		r = 1;
	}
out:
	free(seen);
	free(queue);
	free(from);
	free(down);
	return r;
}

int conf_flow_check(const conf_job_t *const *jobs, size_t n, char *err, size_t errlen, const char **at)
{
	struct graph g = { .jobs = jobs, .n = n };
	struct msg m = { err, errlen, 0, false };
	const char *who = NULL;
	int r = -1;
	if (errlen) err[0] = '\0';
	g.byname = malloc((n + 1) * sizeof *g.byname);
	if (!g.byname) goto out;
	for (size_t i = 0; i < n; i++) g.byname[i] = (struct ent){ jobs[i]->name, i };
	qsort(g.byname, n, sizeof *g.byname, ent_cmp);
	r = resolve(&g, &m, &who);
	if (!r) r = dependents(&g);
	if (!r) r = cycle(&g, &m, &who);
	if (!r) r = roots(&g, &m, &who);
out:
	free(g.byname);
	free(g.up_off);
	free(g.up);
	free(g.dn_off);
	free(g.dn);
	if (at) *at = r > 0 ? who : NULL;
	if (r < 0) {
		if (errlen) snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	if (r > 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
