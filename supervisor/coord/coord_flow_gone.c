/* supervisor/coord/coord_flow_gone.c: workflows, an instance that went without taking its run's
 * trigger (coord_flow.c has the rest).
 *
 * The multi that fires a run triggers every instance of D that is registered, and one that has
 * died but whose session has not ended yet is one of them: it never takes its trigger, and its
 * items of the run run nowhere. When its session ends the leader sees it go (cf_instances): a
 * trigger node of a run still there is taken here (deleted at its version, so only once) and given
 * to every ejob instance of D there now. The resharding its going raised moves its items to them,
 * and each fire of the run runs only the items of it that have no record (cx_flow_vet): the ones
 * that were the dead instance's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/trigdata.h"
#include "supervisor/coord/coord_flow.h"

struct fgone {
	coord_t *c;
	char *job, *gone, *root, *data;
	uint64_t session, run;
	char **alive;
	int nalive;
};

static void gone_free(struct fgone *g)
{
	for (int i = 0; i < g->nalive; i++) free(g->alive[i]);
	free(g->alive);
	free(g->job);
	free(g->gone);
	free(g->root);
	free(g->data);
	free(g);
}

/* its job, if still here in the same session and this instance still leads it */
static struct cjob *gone_job(struct fgone *g, const struct zkc_res *r)
{
	struct cjob *j = cj_find(g->c, g->job);
	return j && cj_live(j, r->session) && g->session == r->session && j->lead.leader ? j : NULL;
}

static void gone_triggered(void *arg, const struct zkc_res *r)
{
	struct fgone *g = arg;
	if (r->rc == ZOK)
		log_info("job %s: workflow %s, run %" PRIu64 ": %s went without taking its trigger: the run is triggered again on "
		         "the %d ejob instance%s there, which run what of it has not run", g->job, g->root, g->run, g->gone,
		         g->nalive, g->nalive == 1 ? "" : "s");
	else
		log_warn("job %s: workflow %s, run %" PRIu64 ": %s went without taking its trigger, and triggering the run again "
		         "failed (%s): its items of the run do not run; the run is given up", g->job, g->root, g->run, g->gone,
		         zerror(r->rc));
	gone_free(g);
}

static void gone_triggers(void *arg, const struct zkc_res *r)
{
	struct fgone *g = arg;
	struct cjob *j = gone_job(g, r);
	if (!j || (r->rc != ZOK && r->rc != ZNONODE) || !g->nalive) {
		if (j && !g->nalive) log_warn("job %s: workflow %s, run %" PRIu64 ": %s went without taking its trigger, and no "
		                             "ejob instance of it is there to run its items", g->job, g->root, g->run, g->gone);
		gone_free(g);
		return;
	}
	char p[CJ_PATH_MAX];
	zkc_multi_t *m = zkc_multi_new();
	for (int i = 0; i < g->nalive; i++) {
		cj_path(j, p, "/trigger/%s", g->alive[i]);
		if (r->rc == ZOK && fl_has(r->children, r->nchildren, g->alive[i])) zkc_multi_set(m, p, g->data, (int)strlen(g->data), -1);
		else zkc_multi_create(m, p, g->data, (int)strlen(g->data), 0);
	}
	if (zkc_multi_commit(j->c->z, m, gone_triggered, g) != ZOK) gone_free(g);
}

/* the ejob instances there now (leader/failover/alive), less the one that went */
static void gone_alive(void *arg, const struct zkc_res *r)
{
	struct fgone *g = arg;
	struct cjob *j = gone_job(g, r);
	char p[CJ_PATH_MAX];
	if (!j || r->rc != ZOK || !(g->alive = calloc((size_t)r->nchildren + 1, sizeof *g->alive))) {
		gone_free(g);
		return;
	}
	for (int i = 0; i < r->nchildren; i++)
		if (strcmp(r->children[i], g->gone) && (g->alive[g->nalive] = strdup(r->children[i]))) g->nalive++;
	if (zkc_children(j->c->z, cj_path(j, p, "/trigger"), NULL, NULL, gone_triggers, g) != ZOK) gone_free(g);
}

static void gone_deleted(void *arg, const struct zkc_res *r)
{
	struct fgone *g = arg;
	struct cjob *j = r->rc == ZOK ? gone_job(g, r) : NULL;
	char p[CJ_PATH_MAX];
	if (!j || !(g->data = trigdata_make_run(NULL, g->run, g->root)) ||
	    zkc_children(j->c->z, cj_path(j, p, "/leader/failover/alive"), NULL, NULL, gone_alive, g) != ZOK)
		gone_free(g);
}

static void gone_read(void *arg, const struct zkc_res *r)
{
	struct fgone *g = arg;
	struct cjob *j = gone_job(g, r);
	struct trigdata t;
	char why[160];
	if (!j || r->rc != ZOK || !r->data ||
	    trigdata_parse_all(r->data, (size_t)r->len, &t, why, sizeof why) < 0) {
		gone_free(g);
		return;
	}
	if (!t.run) {               /* a manual trigger: ElasticJob's contract, it is the instance's */
		trigdata_free(&t);
		gone_free(g);
		return;
	}
	g->run = t.run;
	g->root = t.root;
	t.root = NULL;
	trigdata_free(&t);
	if (zkc_delete(j->c->z, r->path, r->stat.version, gone_deleted, g) != ZOK) gone_free(g);
}

void cx_flow_gone(struct cjob *j, const char *gone)
{
	if (!gone || !cj_conf(j)->flow.n || !j->lead.leader || j->c->closing) return;
	struct fgone *g = calloc(1, sizeof *g);
	if (!g || !(g->job = strdup(j->name)) || !(g->gone = strdup(gone))) {
		if (g) free(g->job);
		free(g);
		return;
	}
	g->c = j->c;
	g->session = zkc_session(j->c->z);
	char p[CJ_PATH_MAX];
	if (zkc_get(j->c->z, cj_path(j, p, "/trigger/%s", gone), NULL, NULL, gone_read, g) != ZOK) gone_free(g);
}

/* A new leader does not know who went before it: a run's trigger node of an instance not there now */
static void orphans_listed(void *arg, const struct zkc_res *r)
{
	struct fgone *g = arg;
	struct cjob *j = gone_job(g, r);
	for (int i = 0; j && r->rc == ZOK && i < r->nchildren; i++) {
		int live = 0;
		for (int k = 0; k < j->lead.nlive && !live; k++) live = !strcmp(j->lead.live[k], r->children[i]);
		if (!live) cx_flow_gone(j, r->children[i]);
	}
	gone_free(g);
}

void cx_flow_orphans(struct cjob *j)
{
	if (!cj_conf(j)->flow.n || !j->lead.leader || !j->lead.live || j->c->closing) return;
	struct fgone *g = calloc(1, sizeof *g);
	if (!g || !(g->job = strdup(j->name))) {
		free(g);
		return;
	}
	g->c = j->c;
	g->session = zkc_session(j->c->z);
	char p[CJ_PATH_MAX];
	if (zkc_children(j->c->z, cj_path(j, p, "/trigger"), NULL, NULL, orphans_listed, g) != ZOK) gone_free(g);
}
