/* tools/ejobctl_wf.c: see ejobctl_wf.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ejobctl_wf.h"

/* ---- the graph ------------------------------------------------------------------------------- */

static int names(const struct wf_node *x, const char *name)
{
	for (size_t k = 0; k < x->nup; k++)
		if (!strcmp(x->up[k], name)) return 1;
	return 0;
}

int wf_is_root(const struct wf_node *nodes, int n, int i)
{
	if (nodes[i].nup) return 0;
	for (int k = 0; k < n; k++)
		if (k != i && names(&nodes[k], nodes[i].name)) return 1;
	return 0;
}

static int find(const struct wf_node *nodes, int n, const char *name)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(nodes[k].name, name)) return k;
	return -1;
}

const char *wf_root_of(const struct wf_node *nodes, int n, int i)
{
	for (int step = 0; step <= n; step++) {
		if (!nodes[i].nup) return nodes[i].name;
		if ((i = find(nodes, n, nodes[i].up[0])) < 0) return NULL;
	}
	return NULL;   /* a loop: hand-written nodes */
}

/* the nodes by name, for wf_build's lookups (10,000 jobs: a scan per dependsOn name adds up) */
struct byname {
	const struct wf_node *nodes;
	int *ord;                   /* indices of nodes, sorted by name */
	int n;
};

static int by_name(const void *a, const void *b, void *nodes)
{
	const struct wf_node *v = nodes;
	return strcmp(v[*(const int *)a].name, v[*(const int *)b].name);
}

static int lookup(const struct byname *x, const char *name)
{
	int lo = 0, hi = x->n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2, c = strcmp(x->nodes[x->ord[mid]].name, name);
		if (!c) return x->ord[mid];
		if (c < 0) lo = mid + 1;
		else hi = mid - 1;
	}
	return -1;
}

static int by_depth(const void *a, const void *b)
{
	const struct wf_job *x = a, *y = b;
	if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
	return strcmp(x->name, y->name);
}

int wf_build(const struct wf_node *nodes, int n, int root, struct wf *w)
{
	memset(w, 0, sizeof *w);
	w->root = nodes[root].name;
	int *in = calloc((size_t)n + 1, sizeof *in), *down = calloc((size_t)n + 1, sizeof *down);
	struct byname x = { nodes, calloc((size_t)n + 1, sizeof *x.ord), n };
	if (!in || !down || !x.ord) goto oom;
	for (int k = 0; k < n; k++) x.ord[k] = k;
	qsort_r(x.ord, (size_t)n, sizeof *x.ord, by_name, (void *)nodes);
	/* the jobs with a dependsOn (few, in most namespaces), added while one names a job in it */
	int nd = 0, m = 1;
	for (int k = 0; k < n; k++)
		if (nodes[k].nup && k != root) down[nd++] = k;
	in[root] = 1;
	for (int more = 1; more;) {
		more = 0;
		for (int d = 0; d < nd; d++) {
			int k = down[d];
			for (size_t u = 0; u < nodes[k].nup && !in[k]; u++) {
				int up = lookup(&x, nodes[k].up[u]);
				if (up >= 0 && in[up]) in[k] = 1, m++, more = 1;
			}
		}
	}
	if (!(w->j = calloc((size_t)m, sizeof *w->j))) goto oom;
	/* in[k]: from here 1 + k's index in w->j, to find an upstream's depth */
	w->j[0] = (struct wf_job){ nodes[root].name, nodes[root].up, nodes[root].nup, 0 };
	w->n = 1;
	for (int d = 0; d < nd; d++) {
		int k = down[d];
		if (!in[k]) continue;
		w->j[w->n] = (struct wf_job){ nodes[k].name, nodes[k].up, nodes[k].nup, 1 };
		in[k] = ++w->n;
	}
	/* the longest path from the root: relaxed until it holds (at most m rounds: a DAG; hand-written
	 * nodes with a cycle stop there) */
	for (int round = 0, more = 1; more && round < m; round++) {
		more = 0;
		for (int a = 1; a < w->n; a++) {
			struct wf_job *j = &w->j[a];
			for (size_t u = 0; u < j->nup; u++) {
				int up = lookup(&x, j->up[u]);
				if (up < 0 || !in[up]) continue;
				int dd = w->j[in[up] - 1].depth + 1;
				if (dd > j->depth) j->depth = dd, more = 1;
			}
		}
	}
	free(in);
	free(down);
	free(x.ord);
	qsort(w->j + 1, (size_t)w->n - 1, sizeof *w->j, by_depth);
	return 0;
oom:
	free(in);
	free(down);
	free(x.ord);
	return -1;
}

int wf_roots(const struct wf_node *nodes, int n, int *roots)
{
	struct byname x = { nodes, calloc((size_t)n + 1, sizeof *x.ord), n };
	char *named = calloc((size_t)n + 1, 1);
	if (!x.ord || !named) {
		free(x.ord);
		free(named);
		return -1;
	}
	for (int k = 0; k < n; k++) x.ord[k] = k;
	qsort_r(x.ord, (size_t)n, sizeof *x.ord, by_name, (void *)nodes);
	for (int k = 0; k < n; k++)
		for (size_t u = 0; u < nodes[k].nup; u++) {
			int up = lookup(&x, nodes[k].up[u]);
			if (up >= 0 && up != k) named[up] = 1;
		}
	int r = 0;
	for (int k = 0; k < n; k++)
		if (named[k] && !nodes[k].nup) roots[r++] = k;
	free(x.ord);
	free(named);
	return r;
}

void wf_free(struct wf *w)
{
	free(w->j);
	w->j = NULL;
	w->n = 0;
}

/* ---- a run ---------------------------------------------------------------------------------- */

const char *wf_state_name(enum wf_state s)
{
	static const char *const v[] = { "waiting", "running", "ok", "failed", "skipped" };
	return v[s];
}

const char *wf_run_state_name(enum wf_run_state s)
{
	static const char *const v[] = { "running", "ok", "failed", "given-up" };
	return v[s];
}

static int by_item(const void *a, const void *b)
{
	const struct wf_rec *x = *(const struct wf_rec *const *)a, *y = *(const struct wf_rec *const *)b;
	if (x->item != y->item) return x->item < y->item ? -1 : 1;
	return y->failed - x->failed;   /* an item with both: its failure first */
}

/* "INSTANCE: CAUSE" into f */
static int fail_of(const struct wf_rec *r, struct wf_fail *f)
{
	const char *d = r->data ? r->data : "", *sep = strstr(d, ": ");
	f->item = r->item;
	f->ctime = r->ctime;
	f->instance = sep ? strndup(d, (size_t)(sep - d)) : strdup(d);
	f->cause = strdup(sep && sep[2] ? sep + 2 : "failed");
	return f->instance && f->cause ? 0 : -1;
}

/* the records of a part that fired: done, failed, ended */
static int records(const struct wf_part *p, struct wf_jstate *s)
{
	if (!p->nrec) return 0;
	const struct wf_rec **v = calloc((size_t)p->nrec, sizeof *v);
	if (!v) return -1;
	for (int i = 0; i < p->nrec; i++) v[i] = &p->rec[i];
	qsort(v, (size_t)p->nrec, sizeof *v, by_item);
	int nf = 0;
	for (int i = 0; i < p->nrec; i++) nf += v[i]->failed && (!i || v[i - 1]->item != v[i]->item);
	s->failed = nf ? calloc((size_t)nf, sizeof *s->failed) : NULL;
	if (nf && !s->failed) {
		free(v);
		return -1;
	}
	int r = 0;
	for (int i = 0; i < p->nrec; i++) {
		if (v[i]->ctime > s->ended) s->ended = v[i]->ctime;
		if (i && v[i - 1]->item == v[i]->item) continue;   /* one item, two records: counted once */
		s->done++;
		if (v[i]->failed && fail_of(v[i], &s->failed[s->nfailed++])) r = -1;
	}
	free(v);
	return r;
}

/* J's state from its part; 0, or -1 out of memory */
static int part_state(const struct wf_part *p, struct wf_jstate *s)
{
	unsigned n;
	char root[256];
	int off = 0;
	const char *d = p->data;
	s->started = p->ctime;
	s->state = WF_RUNNING;   /* data ejob does not write (or none): it is there, and says nothing more */
	if (!d) return 0;
	if (sscanf(d, "fired %u %255s%n", &n, root, &off) == 2 && off) {
		s->items = (int)n;
		if (records(p, s)) return -1;
		s->state = s->nfailed ? WF_FAILED : s->done >= s->items ? WF_OK : WF_RUNNING;
		if (s->done < s->items) s->ended = -1;
		return 0;
	}
	int given = !strncmp(d, "given-up ", 9);
	if (given || !strncmp(d, "skipped ", 8)) {
		const char *why = strchr(d + (given ? 9 : 8), ' ');
		why = why ? why + 1 : "";
		s->state = WF_SKIPPED;
		s->given_up = given;
		s->started = -1;
		s->ended = p->ctime;
		size_t len = strlen(why) + 16;
		if (!(s->why = malloc(len))) return -1;
		snprintf(s->why, len, "%s%s", given ? "given up: " : "", *why ? why : "(no reason given)");
		return 0;
	}
	return 0;
}

/* "I did not fire in the run" / "I item 1 failed" for a job without a part whose upstream cannot
 * end ok, as the supervisor words it; NULL when every upstream may still */
static char *blocked(const struct wf *w, const struct wf_run *r, int k)
{
	const struct wf_job *j = &w->j[k];
	char b[600];
	for (size_t u = 0; u < j->nup; u++) {
		for (int x = 0; x < k; x++) {
			if (strcmp(w->j[x].name, j->up[u])) continue;
			const struct wf_jstate *s = &r->js[x];
			if (s->state == WF_SKIPPED) snprintf(b, sizeof b, "%.255s did not fire in the run", j->up[u]);
			else if (s->state == WF_FAILED) snprintf(b, sizeof b, "%.255s item %d failed", j->up[u], s->failed[0].item);
			else continue;
			return strdup(b);
		}
	}
	return NULL;
}

static char *fail_why(const char *job, const struct wf_fail *f)
{
	size_t len = strlen(job) + strlen(f->instance) + strlen(f->cause) + 40;
	char *s = malloc(len);
	if (s) snprintf(s, len, "%s item %d on %s: %s", job, f->item, f->instance, f->cause);
	return s;
}

/* the failed run's why: the failure msg names, else the earliest */
static char *run_failure(const struct wf *w, const struct wf_run *r, const char *msg)
{
	char mj[256];
	int mi;
	if (msg && sscanf(msg, "%255s %d", mj, &mi) == 2) {
		for (int k = 0; k < w->n; k++)
			for (int f = 0; !strcmp(w->j[k].name, mj) && f < r->js[k].nfailed; f++)
				if (r->js[k].failed[f].item == mi) return fail_why(mj, &r->js[k].failed[f]);
	}
	int bk = -1, bf = 0;
	for (int k = 0; k < w->n; k++)
		for (int f = 0; f < r->js[k].nfailed; f++)
			if (bk < 0 || r->js[k].failed[f].ctime < r->js[bk].failed[bf].ctime) bk = k, bf = f;
	return fail_why(w->j[bk].name, &r->js[bk].failed[bf]);
}

int wf_judge(const struct wf *w, const struct wf_part *parts, const char *msg, struct wf_run *r)
{
	memset(r, 0, sizeof *r);
	if (!(r->js = calloc((size_t)w->n + 1, sizeof *r->js))) return -1;
	int failed = 0, given = -1, busy = 0, skipped = -1, nok = 0;
	for (int k = 0; k < w->n; k++) {
		struct wf_jstate *s = &r->js[k];
		*s = (struct wf_jstate){ .state = WF_WAITING, .items = -1, .started = -1, .ended = -1 };
		if (parts[k].present) {
			if (part_state(&parts[k], s)) goto oom;
		} else if ((s->why = blocked(w, r, k))) {
			s->state = WF_SKIPPED;
		}
		failed |= s->state == WF_FAILED;
		busy |= s->state == WF_RUNNING || s->state == WF_WAITING;
		nok += s->state == WF_OK;
		if (s->given_up && given < 0) given = k;
		if (s->state == WF_SKIPPED && skipped < 0) skipped = k;
	}
	if (failed) {
		r->state = WF_RUN_FAILED;
		if (!(r->why = run_failure(w, r, msg))) goto oom;
		return 0;
	}
	/* given up; or, with nothing left to run and not every job ok, the first skipped one says why */
	int k = given >= 0 ? given : !busy && nok < w->n ? skipped : -1;
	if (k >= 0) {
		r->state = given >= 0 ? WF_RUN_GIVEN_UP : WF_RUN_FAILED;
		const char *why = r->js[k].why ? r->js[k].why : "";
		if (given >= 0 && !strncmp(why, "given up: ", 10)) why += 10;
		size_t len = strlen(w->j[k].name) + strlen(why) + 16;
		if (!(r->why = malloc(len))) goto oom;
		snprintf(r->why, len, "%s %s: %s", w->j[k].name, given >= 0 ? "given up" : "skipped", why);
		return 0;
	}
	r->state = busy ? WF_RUN_RUNNING : WF_RUN_OK;
	return 0;
oom:
	wf_run_free(w, r);
	return -1;
}

void wf_run_free(const struct wf *w, struct wf_run *r)
{
	for (int k = 0; r->js && k < w->n; k++) {
		for (int f = 0; f < r->js[k].nfailed; f++) {
			free(r->js[k].failed[f].instance);
			free(r->js[k].failed[f].cause);
		}
		free(r->js[k].failed);
		free(r->js[k].why);
	}
	free(r->js);
	free(r->why);
	r->js = NULL;
	r->why = NULL;
}
