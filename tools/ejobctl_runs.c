/* tools/ejobctl_runs.c: ejobctl runs [ROOT] [--limit N]: a workflow's latest runs, each job's state
 * in each (tools/ejobctl_wf.h judges them), or without ROOT the namespace's workflows; the HTTP
 * API's GET /api/v1/workflows[/{root}/runs] are these --json documents (ctl_show_runs).
 *
 * What is read, each step one pipelined batch (ctl_read_many), never one round trip per run or job:
 *   1. the namespace's children, then every child's config node (the graph: ejob.dependsOn);
 *   2. the root's ejob-flow/runs (its children: the runs, the newest 32 kept);
 *   3. for each of the newest --limit runs and each job of the workflow, the job's part of it
 *      (data and stat) and its children, and the root's message node;
 *   4. every {item}.ok and {item}.failed record found (data and ctime).
 * Five round trips whatever the number of runs and jobs (ZooKeeper has no snapshot read: a run
 * that moves meanwhile may show a record newer than its part's state, never a state it did not
 * have). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/conf.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_api.h"
#include "tools/ejobctl_wf.h"
#include "tools/ejobctl_zk.h"

#define RUNS_DEFAULT 10
#define RUNS_MAX 100            /* each job keeps 32 */

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl runs [ROOT] [--limit N] (--zk HOSTS --namespace NS [--digest U:P] | -c FILE)\n"
	        "                    [--json] [--timeout SECONDS]\n"
	        "\n"
	        "A workflow's latest runs (dependsOn: docs/config.md \"Workflows\"), newest first: each run's id\n"
	        "(the root's fire id), start (UTC) and state (running, ok, failed, given-up, with why), and per\n"
	        "job, root first: its state in the run (waiting, running, ok, failed, skipped), items ended of\n"
	        "its total, when it fired and ended, and why (a failed item and its cause, why it was skipped).\n"
	        "Without ROOT: the namespace's workflows, each root with its jobs.\n"
	        "  --limit N   the newest N runs (1-%d; default %d; each job keeps its 32 newest)\n"
	        "Exit status: 0 ok, 1 runtime failure, 2 usage, an unknown job, or a job that is not a\n"
	        "workflow's root.\n",
	        RUNS_MAX, RUNS_DEFAULT);
}

/* ---- the graph -------------------------------------------------------------------------------- */

struct graph {
	struct wf_node *node;       /* the namespace's jobs, sorted by name */
	conf_job_t **conf;          /* each one's parsed config node (its dependsOn), NULL if none */
	char **names;
	int n;
};

static void graph_free(struct graph *g)
{
	for (int i = 0; i < g->n; i++) conf_job_free(g->conf[i]);
	ctl_strv_free(g->names, g->n);
	free(g->conf);
	free(g->node);
	memset(g, 0, sizeof *g);
}

/* every job's config node, one pipelined read: 0, or 1 after a message */
static int graph_read(struct ctl *c, struct graph *g)
{
	memset(g, 0, sizeof *g);
	char p[CTL_PATH_MAX], **kids;
	int nk, rc = ctl_children(c, ctl_path(c, p, "%s", ""), &kids, &nk);
	if (rc == ZNONODE && c->ns_may_be_new) rc = ZOK, kids = NULL, nk = 0;   /* serve on a new namespace: no job */
	if (rc != ZOK) return ctl_fail(c, rc, "cannot list", p);
	struct ctl_read *rd = calloc((size_t)nk + 1, sizeof *rd);
	char **paths = calloc((size_t)nk + 1, sizeof *paths);
	g->node = calloc((size_t)nk + 1, sizeof *g->node);
	g->conf = calloc((size_t)nk + 1, sizeof *g->conf);
	g->names = calloc((size_t)nk + 1, sizeof *g->names);
	CTL_NEED(rd && paths && g->node && g->conf && g->names);
	for (int i = 0; i < nk; i++) {
		CTL_NEED(paths[i] = strdup(ctl_path(c, p, "/%s/config", kids[i])));
		rd[i] = (struct ctl_read){ .op = CTL_GET, .path = paths[i] };
	}
	ctl_read_many(c, rd, nk);
	int r = 0;
	for (int i = 0; i < nk; i++) {
		if (!r && rd[i].rc != ZOK && rd[i].rc != ZNONODE) r = ctl_fail(c, rd[i].rc, "cannot read", paths[i]);
		if (!r && rd[i].rc == ZOK) {
			/* a node without the word has no dependsOn: parsed only when it may (10,000 jobs, few in workflows) */
			conf_job_t *j = strstr(rd[i].data, "dependsOn") ? conf_node_parse(rd[i].data, strlen(rd[i].data), paths[i], NULL)
			                                                : NULL;
			g->names[g->n] = kids[i], kids[i] = NULL;
			g->conf[g->n] = j;
			g->node[g->n] = (struct wf_node){ g->names[g->n], j ? j->flow.depends_on : NULL, j ? j->flow.n : 0 };
			g->n++;
		}
		free(rd[i].data);
	}
	ctl_strv_free(kids, nk);
	ctl_strv_free(paths, nk);
	free(rd);
	if (r) graph_free(g);
	return r;
}

static int node_of(const struct graph *g, const char *name)
{
	for (int i = 0; i < g->n; i++)
		if (!strcmp(g->names[i], name)) return i;
	return -1;
}

/* ---- a run's nodes ------------------------------------------------------------------------------ */

struct runs {
	int n;                      /* runs shown */
	unsigned long long *id;     /* newest first */
	struct wf_part *part;       /* [run * w.n + job] */
	struct wf_rec *rec;         /* every record, parts point into it */
	char **keep;                /* the reads' data, freed at the end */
	int nkeep;
	char **msg;                 /* per run: the root's message node's data, NULL none */
	int kept;                   /* runs the root has (kept) */
};

static int newest_first(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* a record's name: "{item}.ok" or "{item}.failed"; the item, or -1 */
static int rec_name(const char *s, int *failed)
{
	char *e;
	errno = 0;
	long v = strtol(s, &e, 10);
	if (e == s || *s < '0' || *s > '9' || errno || v > 0x7fffffff) return -1;
	if (!strcmp(e, ".ok")) *failed = 0;
	else if (!strcmp(e, ".failed")) *failed = 1;
	else return -1;
	return (int)v;
}

/* /NS/{job}/ejob-flow/runs/{id}{tail}, malloc'd */
static char *dup_path(struct ctl *c, const char *job, unsigned long long id, const char *tail)
{
	char p[CTL_PATH_MAX];
	char *s = strdup(ctl_path(c, p, "/%s/ejob-flow/runs/%llu%s", job, id, tail));
	CTL_NEED(s);
	return s;
}

/* runs: the newest limit of w's root, every part and record. 0, or 1 after a message. */
static int runs_read(struct ctl *c, const struct wf *w, int limit, struct runs *rs)
{
	memset(rs, 0, sizeof *rs);
	char p[CTL_PATH_MAX], **kids;
	int nk, rc = ctl_children(c, ctl_path(c, p, "/%s/ejob-flow/runs", w->root), &kids, &nk);
	if (rc == ZNONODE) return 0;   /* it never fired in a run */
	if (rc != ZOK) return ctl_fail(c, rc, "cannot list", p);
	CTL_NEED(rs->id = calloc((size_t)nk + 1, sizeof *rs->id));
	for (int i = 0; i < nk; i++) {
		char *e;
		errno = 0;
		unsigned long long v = strtoull(kids[i], &e, 10);
		if (!errno && e != kids[i] && !*e && kids[i][0] >= '0' && kids[i][0] <= '9') rs->id[rs->kept++] = v;
	}
	ctl_strv_free(kids, nk);
	qsort(rs->id, (size_t)rs->kept, sizeof *rs->id, newest_first);
	rs->n = rs->kept < limit ? rs->kept : limit;
	int np = rs->n * w->n;
	CTL_NEED(rs->part = calloc((size_t)np + 1, sizeof *rs->part));
	CTL_NEED(rs->msg = calloc((size_t)rs->n + 1, sizeof *rs->msg));
	/* each part: its data and its children; each run: the root's message */
	int nr = 2 * np + rs->n;
	struct ctl_read *rd = calloc((size_t)nr + 1, sizeof *rd);
	CTL_NEED(rd);
	for (int r = 0; r < rs->n; r++) {
		for (int k = 0; k < w->n; k++) {
			char *path = dup_path(c, w->j[k].name, rs->id[r], "");
			rd[2 * (r * w->n + k)] = (struct ctl_read){ .op = CTL_GET, .path = path };
			rd[2 * (r * w->n + k) + 1] = (struct ctl_read){ .op = CTL_CHILDREN, .path = path };
		}
		rd[2 * np + r] = (struct ctl_read){ .op = CTL_GET,
		                                    .path = dup_path(c, w->root, rs->id[r], "/message") };
	}
	ctl_read_many(c, rd, nr);
	int fail = 0, nrec = 0;
	for (int i = 0; i < nr && !fail; i++)
		if (rd[i].rc != ZOK && rd[i].rc != ZNONODE) fail = ctl_fail(c, rd[i].rc, "cannot read", rd[i].path);
	for (int i = 0; i < np && !fail; i++) {
		const struct ctl_read *ch = &rd[2 * i + 1];
		for (int k = 0; ch->rc == ZOK && k < ch->n; k++) {
			int f;
			nrec += rec_name(ch->names[k], &f) >= 0;
		}
	}
	/* the records: one more batch */
	struct ctl_read *rr = calloc((size_t)nrec + 1, sizeof *rr);
	CTL_NEED(rs->rec = calloc((size_t)nrec + 1, sizeof *rs->rec));
	CTL_NEED(rs->keep = calloc((size_t)np + (size_t)nrec + (size_t)rs->n + 1, sizeof *rs->keep));
	CTL_NEED(rr);
	int m = 0;
	for (int i = 0; i < np && !fail; i++) {
		const struct ctl_read *ch = &rd[2 * i + 1];
		for (int k = 0; ch->rc == ZOK && k < ch->n; k++) {
			int f, item = rec_name(ch->names[k], &f);
			if (item < 0) continue;
			char q[CTL_PATH_MAX];
			if ((size_t)snprintf(q, sizeof q, "%s/%s", ch->path, ch->names[k]) >= sizeof q) continue;
			CTL_NEED(rr[m].path = strdup(q));
			rr[m].op = CTL_GET;
			rs->rec[m] = (struct wf_rec){ .item = item, .failed = f };
			m++;
		}
	}
	if (!fail) ctl_read_many(c, rr, m);
	/* into parts: part i's records are the next ones in rr, in the order its children came */
	int at = 0;
	for (int i = 0; i < np && !fail; i++) {
		struct wf_part *pt = &rs->part[i];
		const struct ctl_read *d = &rd[2 * i], *ch = &rd[2 * i + 1];
		pt->present = d->rc == ZOK;
		pt->data = d->rc == ZOK ? d->data : NULL;
		pt->ctime = d->rc == ZOK ? d->st.ctime : -1;
		pt->rec = rs->rec + at;
		for (int k = 0; ch->rc == ZOK && k < ch->n; k++) {
			int f;
			if (rec_name(ch->names[k], &f) < 0) continue;
			struct ctl_read *x = &rr[at];
			if (x->rc == ZOK) {
				rs->rec[at].data = x->data;
				rs->rec[at].ctime = x->st.ctime;
				rs->rec[pt->nrec++ + (pt->rec - rs->rec)] = rs->rec[at];   /* gone meanwhile: left out */
			} else if (x->rc != ZNONODE) {
				fail = ctl_fail(c, x->rc, "cannot read", x->path);
			}
			at++;
		}
	}
	for (int r = 0; r < rs->n && !fail; r++) rs->msg[r] = rd[2 * np + r].rc == ZOK ? rd[2 * np + r].data : NULL;
	/* what the parts point into stays until runs_free */
	for (int i = 0; i < nr; i++) {
		if (rd[i].data) rs->keep[rs->nkeep++] = rd[i].data;   /* a get's: a part's data, a message */
		if (rd[i].op == CTL_CHILDREN && rd[i].rc == ZOK) ctl_strv_free(rd[i].names, rd[i].n);
		if (i % 2 == 0 || i >= 2 * np) free((char *)rd[i].path);
	}
	for (int i = 0; i < m; i++) {
		if (rr[i].data) rs->keep[rs->nkeep++] = rr[i].data;
		free((char *)rr[i].path);
	}
	free(rd);
	free(rr);
	return fail;
}

static void runs_free(struct runs *rs)
{
	for (int i = 0; i < rs->nkeep; i++) free(rs->keep[i]);
	free(rs->keep);
	free(rs->id);
	free(rs->part);
	free(rs->rec);
	free(rs->msg);
	memset(rs, 0, sizeof *rs);
}

/* ---- output ------------------------------------------------------------------------------------- */

static const char *iso(char *buf, size_t sz, long long ms)
{
	if (ms < 0) return NULL;
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	char b[40];
	strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, sz, "%s.%03dZ", b, (int)(ms % 1000));
	return buf;
}

static void json_time(struct jw *jw, long long ms)
{
	char b[64];
	jw_str(jw, iso(b, sizeof b, ms));
}

static void print_json(const struct ctl *c, const struct wf *w, const struct runs *rs, const struct wf_run *v)
{
	struct jw jw;
	char b[64];
	jw_begin(&jw, c->out);
	jw_obj(&jw);
	jw_key(&jw, "root");
	jw_str(&jw, w->root);
	jw_key(&jw, "jobs");
	jw_arr(&jw);
	for (int k = 0; k < w->n; k++) {
		jw_obj(&jw);
		jw_key(&jw, "name");
		jw_str(&jw, w->j[k].name);
		jw_key(&jw, "dependsOn");
		jw_arr(&jw);
		for (size_t u = 0; u < w->j[k].nup; u++) jw_str(&jw, w->j[k].up[u]);
		jw_end(&jw);
		jw_end(&jw);
	}
	jw_end(&jw);
	jw_key(&jw, "runs");
	jw_arr(&jw);
	for (int r = 0; r < rs->n; r++) {
		jw_obj(&jw);
		snprintf(b, sizeof b, "%llu", rs->id[r]);
		jw_key(&jw, "run");
		jw_str(&jw, b);
		jw_key(&jw, "started");
		json_time(&jw, (long long)rs->id[r]);
		jw_key(&jw, "state");
		jw_str(&jw, wf_run_state_name(v[r].state));
		jw_key(&jw, "why");
		jw_str(&jw, v[r].why);
		jw_key(&jw, "jobs");
		jw_obj(&jw);
		for (int k = 0; k < w->n; k++) {
			const struct wf_jstate *s = &v[r].js[k];
			jw_key(&jw, w->j[k].name);
			jw_obj(&jw);
			jw_key(&jw, "state");
			jw_str(&jw, wf_state_name(s->state));
			jw_key(&jw, "items");
			if (s->items >= 0) jw_int(&jw, s->items);
			else jw_null(&jw);
			jw_key(&jw, "done");
			jw_int(&jw, s->done);
			jw_key(&jw, "failed");
			jw_arr(&jw);
			for (int f = 0; f < s->nfailed; f++) {
				jw_obj(&jw);
				jw_key(&jw, "item");
				jw_int(&jw, s->failed[f].item);
				jw_key(&jw, "instance");
				jw_str(&jw, s->failed[f].instance);
				jw_key(&jw, "cause");
				jw_str(&jw, s->failed[f].cause);
				jw_key(&jw, "at");
				json_time(&jw, s->failed[f].ctime);
				jw_end(&jw);
			}
			jw_end(&jw);
			jw_key(&jw, "why");
			jw_str(&jw, s->why);
			jw_key(&jw, "started");
			json_time(&jw, s->started);
			jw_key(&jw, "ended");
			json_time(&jw, s->ended);
			jw_end(&jw);
		}
		jw_end(&jw);
		jw_end(&jw);
	}
	jw_end(&jw);
	jw_end(&jw);
}

/* the line without its trailing blanks */
static void line_out(FILE *f, const char *s)
{
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ') n--;
	fprintf(f, "%.*s\n", (int)n, s);
}

static void print_text(const struct ctl *c, const struct wf *w, const struct runs *rs, const struct wf_run *v)
{
	FILE *f = c->out;
	fprintf(f, "workflow %s:", w->root);
	for (int k = 0; k < w->n; k++) {
		fprintf(f, "%s %s", k ? ";" : "", w->j[k].name);
		for (size_t u = 0; u < w->j[k].nup; u++) fprintf(f, "%s%s", u ? ", " : " after ", w->j[k].up[u]);
	}
	fputc('\n', f);
	if (!rs->n) {
		fprintf(f, "no runs: none under /%s/%s/ejob-flow/runs (%s starts one at each fire: its cron, or 'ejobctl "
		        "trigger %s')\n", c->ns, w->root, w->root, w->root);
		return;
	}
	fprintf(f, "%d of %d run%s kept, newest first\n", rs->n, rs->kept, rs->kept == 1 ? "" : "s");
	int wj = 3, wi = 5;   /* "JOB", "ITEMS" */
	for (int k = 0; k < w->n; k++) wj = (int)strlen(w->j[k].name) > wj ? (int)strlen(w->j[k].name) : wj;
	char items[32], t1[64], t2[64], line[4096];
	for (int r = 0; r < rs->n; r++)
		for (int k = 0; k < w->n; k++) {
			const struct wf_jstate *s = &v[r].js[k];
			int n = s->items >= 0 ? snprintf(items, sizeof items, "%d/%d", s->done, s->items) : 1;
			wi = n > wi ? n : wi;
		}
	for (int r = 0; r < rs->n; r++) {
		fprintf(f, "\nrun %llu  %s  %s%s%s\n", rs->id[r], iso(t1, sizeof t1, (long long)rs->id[r]),
		        wf_run_state_name(v[r].state), v[r].why ? ": " : "", v[r].why ? v[r].why : "");
		snprintf(line, sizeof line, "  %-*s  %-7s  %-*s  %-24s  %-24s  %s", wj, "JOB", "STATE", wi, "ITEMS", "STARTED",
		         "ENDED", "WHY");
		line_out(f, line);
		for (int k = 0; k < w->n; k++) {
			const struct wf_jstate *s = &v[r].js[k];
			char why[1200] = "";
			if (s->nfailed)
				snprintf(why, sizeof why, "item %d on %s: %s%s", s->failed[0].item, s->failed[0].instance,
				         s->failed[0].cause, s->nfailed > 1 ? " (and more: --json lists them)" : "");
			else if (s->why)
				snprintf(why, sizeof why, "%s", s->why);
			if (s->items >= 0) snprintf(items, sizeof items, "%d/%d", s->done, s->items);
			else snprintf(items, sizeof items, "-");
			const char *a = iso(t1, sizeof t1, s->started), *b = iso(t2, sizeof t2, s->ended);
			snprintf(line, sizeof line, "  %-*s  %-7s  %-*s  %-24s  %-24s  %s", wj, w->j[k].name,
			         wf_state_name(s->state), wi, items, a ? a : "-", b ? b : "-", why);
			line_out(f, line);
		}
	}
}

/* ---- the workflows ---------------------------------------------------------------------------- */

static int show_workflows(struct ctl *c, const struct graph *g)
{
	struct jw jw;
	struct ctl_table *t = NULL;
	if (c->json) {
		jw_begin(&jw, c->out);
		jw_obj(&jw);
		jw_key(&jw, "workflows");
		jw_arr(&jw);
	} else {
		t = ctl_table_new(2, "ROOT", "JOBS");
	}
	int *roots = calloc((size_t)g->n + 1, sizeof *roots), nr;
	CTL_NEED(roots && (nr = wf_roots(g->node, g->n, roots)) >= 0);
	for (int r = 0; r < nr; r++) {
		struct wf w;
		CTL_NEED(!wf_build(g->node, g->n, roots[r], &w));
		if (c->json) {
			jw_obj(&jw);
			jw_key(&jw, "root");
			jw_str(&jw, w.root);
			jw_key(&jw, "jobs");
			jw_arr(&jw);
			for (int k = 0; k < w.n; k++) jw_str(&jw, w.j[k].name);
			jw_end(&jw);
			jw_end(&jw);
		} else {
			char *list = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&list, &len);
			CTL_NEED(m);
			for (int k = 0; k < w.n; k++) fprintf(m, "%s%s", k ? ", " : "", w.j[k].name);
			CTL_NEED(!fclose(m));
			ctl_table_row(t, w.root, list);
			free(list);
		}
		wf_free(&w);
	}
	free(roots);
	if (c->json) {
		jw_end(&jw);
		jw_end(&jw);
	} else {
		ctl_table_print(t, c->out);
	}
	return 0;
}

/* ---- the command ---------------------------------------------------------------------------- */

/* root a job of g and a workflow's root: its index; else -1 after the message (*st: the status) */
static int need_root(struct ctl *c, const struct graph *g, const char *root, int *st)
{
	int i = node_of(g, root);
	if (i < 0) {
		*st = ctl_need_job(c, root);   /* the did-you-mean (or it came meanwhile: read again) */
		if (!*st) *st = ctl_msg(c, 1, "job '%s' appeared while it was read: try again", root);
		return -1;
	}
	if (wf_is_root(g->node, g->n, i)) return i;
	if (g->node[i].nup) {
		char after[600] = "";
		size_t n = 0;
		for (size_t u = 0; u < g->node[i].nup && n < sizeof after; u++)
			n += (size_t)snprintf(after + n, sizeof after - n, "%s%s", u ? ", " : "", g->node[i].up[u]);
		const char *top = wf_root_of(g->node, g->n, i);
		if (top)
			*st = ctl_msg(c, 2, "job '%s' is not a workflow's root: it runs after %s (dependsOn); give its workflow's "
			              "root: ejobctl runs %s", root, after, top);
		else
			*st = ctl_msg(c, 2, "job '%s' is not a workflow's root: it runs after %s (dependsOn); give its workflow's "
			              "root ('ejobctl runs' lists them)", root, after);
		return -1;
	}
	*st = ctl_msg(c, 2, "job '%s' is in no workflow: it runs after no job and no job runs after it (dependsOn); "
	              "give a workflow's root ('ejobctl runs' lists them)", root);
	return -1;
}

int ctl_show_runs(struct ctl *cp, const char *root, int limit)
{
	struct ctl c = *cp;
	int r;
	if ((r = ctl_connect(&c))) return r;
	struct graph g;
	if ((r = graph_read(&c, &g))) {
		ctl_close(&c);
		return r;
	}
	if (!root) {
		r = show_workflows(&c, &g);
		goto out;
	}
	int i = need_root(&c, &g, root, &r);
	if (i < 0) goto out;
	struct wf w;
	CTL_NEED(!wf_build(g.node, g.n, i, &w));
	struct runs rs;
	if ((r = runs_read(&c, &w, limit, &rs))) {
		wf_free(&w);
		goto out;
	}
	struct wf_run *v = calloc((size_t)rs.n + 1, sizeof *v);
	CTL_NEED(v);
	for (int k = 0; k < rs.n; k++) CTL_NEED(!wf_judge(&w, rs.part + (size_t)k * (size_t)w.n, rs.msg[k], &v[k]));
	if (c.json) print_json(&c, &w, &rs, v);
	else print_text(&c, &w, &rs, v);
	for (int k = 0; k < rs.n; k++) wf_run_free(&w, &v[k]);
	free(v);
	runs_free(&rs);
	wf_free(&w);
out:
	graph_free(&g);
	ctl_close(&c);
	if (!r && (fflush(c.out) || ferror(c.out))) return ctl_msg(&c, 1, "writing the output failed");
	return r;
}

int ejobctl_runs(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	struct ctl c;
	int r = ctl_options(&c, "runs", &argc, argv);
	if (r) return r;
	const char *root = NULL;
	int limit = RUNS_DEFAULT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		if (!strncmp(a, "--limit=", 8)) val = a + 8;
		else if (!strcmp(a, "--limit") && i + 1 < argc) val = argv[++i];
		else if (!strcmp(a, "--limit")) r = ctl_msg(&c, 2, "--limit needs a number of runs (1-%d)", RUNS_MAX);
		else if (a[0] == '-' && a[1]) r = ctl_msg(&c, 2, "unknown option '%s'", a);
		else if (root) r = ctl_msg(&c, 2, "one workflow at a time: '%s' and '%s'", root, a);
		else root = a;
		if (val) {
			char *e;
			errno = 0;
			long v = strtol(val, &e, 10);
			if (errno || e == val || *e || v < 1 || v > RUNS_MAX)
				r = ctl_msg(&c, 2, "--limit %s: give a number of runs, 1 to %d", val, RUNS_MAX);
			else limit = (int)v;
		}
		if (r) break;
	}
	if (r) {
		usage(stderr);
		ctl_close(&c);
		return r;
	}
	return ctl_show_runs(&c, root, limit);
}
