/* tools/ejobctl_flow.c: the workflows (conf/conf_flow.h) a write would leave in the namespace,
 * checked before it is made: by `ejobctl apply` (its file's jobs, less what --prune removes),
 * `config set` and `edit` (one job's new node; the HTTP API's job update is config set) and the
 * HTTP API's job create. A file's graph alone is checked at load; these check the given jobs
 * with the namespace's other jobs, read from their config nodes.
 *
 * A change that touches no workflow reads no more than the given jobs' own nodes: with no
 * dependsOn in the given jobs, none in the nodes they replace and nothing removed, the graph is
 * the namespace's as it is. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "conf/conf_flow.h"
#include "tools/ejobctl_job.h"
#include "tools/ejobctl_zk.h"

static int named(const char *name, const conf_job_t *const *jobs, size_t n, char *const *gone, int ngone)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(jobs[i]->name, name)) return 1;
	for (int i = 0; i < ngone; i++)
		if (!strcmp(gone[i], name)) return 1;
	return 0;
}

/* The config nodes at paths[0..n) read into rd (the caller frees each data). 0, or 1 after a
 * message (a read that failed but for ZNONODE). */
static int read_nodes(struct ctl *c, char **paths, struct ctl_read *rd, int n)
{
	for (int i = 0; i < n; i++) rd[i] = (struct ctl_read){ .op = CTL_GET, .path = paths[i] };
	ctl_read_many(c, rd, n);
	int r = 0;
	for (int i = 0; i < n && !r; i++)
		if (rd[i].rc != ZOK && rd[i].rc != ZNONODE) r = ctl_fail(c, rd[i].rc, "cannot read", paths[i]);
	return r;
}

/* Whether the nodes the given jobs replace have dependsOn: 0 no, 1 yes, -1 after a message. */
static int replaced_flow(struct ctl *c, const conf_job_t *const *jobs, size_t n)
{
	if (c->ns_missing || !n) return 0;
	char **paths = calloc(n + 1, sizeof *paths);
	struct ctl_read *rd = calloc(n + 1, sizeof *rd);
	char p[CTL_PATH_MAX];
	CTL_NEED(paths && rd);
	for (size_t i = 0; i < n; i++) CTL_NEED(paths[i] = strdup(ctl_path(c, p, "/%s/config", jobs[i]->name)));
	int r = read_nodes(c, paths, rd, (int)n) ? -1 : 0;
	for (size_t i = 0; i < n; i++) {
		if (!r && rd[i].rc == ZOK) {
			conf_job_t *j = conf_node_parse(rd[i].data, strlen(rd[i].data), paths[i], NULL);
			r = j && j->flow.n;
			conf_job_free(j);
		}
		free(rd[i].data);
	}
	ctl_strv_free(paths, (int)n);
	free(rd);
	return r;
}

int ctl_flow_check(struct ctl *c, const conf_job_t *const *jobs, size_t n, char *const *gone, int ngone)
{
	int touched = ngone > 0;
	for (size_t i = 0; i < n && !touched; i++) touched = jobs[i]->flow.n > 0;
	if (!touched) {
		int r = replaced_flow(c, jobs, n);
		if (r <= 0) return r < 0 ? 1 : 0;
	}
	/* the namespace's other jobs: each child's config node (a child without one is no job) */
	char p[CTL_PATH_MAX], **kids = NULL;
	int nk = 0;
	if (!c->ns_missing) {
		int rc = ctl_children(c, ctl_path(c, p, "%s", ""), &kids, &nk);
		if (rc == ZNONODE && c->ns_may_be_new) rc = ZOK, nk = 0;   /* no namespace yet: no job */
		if (rc != ZOK) return ctl_fail(c, rc, "cannot list", p);
	}
	int no = 0;
	for (int i = 0; i < nk; i++)
		if (!named(kids[i], jobs, n, gone, ngone)) kids[no++] = kids[i];
		else free(kids[i]);
	char **paths = calloc((size_t)no + 1, sizeof *paths);
	struct ctl_read *rd = calloc((size_t)no + 1, sizeof *rd);
	/* a node that does not parse is a job all the same (a name dependsOn may give), in no workflow */
	conf_job_t **parsed = calloc((size_t)no + 1, sizeof *parsed), *blank = calloc((size_t)no + 1, sizeof *blank);
	const conf_job_t **all = calloc(n + (size_t)no + 1, sizeof *all);
	CTL_NEED(paths && rd && parsed && blank && all);
	for (int i = 0; i < no; i++) CTL_NEED(paths[i] = strdup(ctl_path(c, p, "/%s/config", kids[i])));
	int r = read_nodes(c, paths, rd, no);
	size_t na = 0;
	for (size_t i = 0; i < n; i++) all[na++] = jobs[i];
	for (int i = 0; i < no && !r; i++) {
		if (rd[i].rc != ZOK) continue;   /* gone meanwhile */
		parsed[i] = conf_node_parse(rd[i].data, strlen(rd[i].data), paths[i], NULL);
		blank[i].name = kids[i];
		all[na++] = parsed[i] && parsed[i]->name && !strcmp(parsed[i]->name, kids[i]) ? parsed[i] : &blank[i];
	}
	if (!r) {
		char err[2048];
		if (conf_flow_check(all, na, err, sizeof err, NULL) < 0) {
			if (errno == ENOMEM) ctl_oom();
			r = ctl_msg(c, 2, "%s; nothing written", err);
		}
	}
	for (int i = 0; i < no; i++) {
		free(rd[i].data);
		conf_job_free(parsed[i]);
	}
	ctl_strv_free(paths, no);
	ctl_strv_free(kids, no);
	free(rd), free(parsed), free(blank), free(all);
	return r;
}
