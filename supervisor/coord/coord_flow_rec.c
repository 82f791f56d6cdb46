/* supervisor/coord/coord_flow_rec.c: workflows, the upstream side (coord_flow.c has the nodes and
 * the downstream side): a fire of a run makes its nodes (the root's run node; on.{instance}), each
 * item's record goes with its completion, a failover take finds the run of the crashed instance's
 * item before it runs, and an item that fails for good makes the run's one message. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_flow.h"

/* ---- the upstream side: a fire's nodes, its items' records --------------------------------------- */

static void root_made(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	/* the instance whose create made the run's node keeps the job's runs to FLOW_KEEP */
	if (r->rc == ZOK && !j->c->closing) fl_prune(j->c, j->name);
}

void cx_flow_begin(struct cfire *f)
{
	struct cjob *j = f->j;
	uint64_t run = fire_run(f->fire);
	const char *root = fire_root(f->fire);
	if (!run || !root || !fire_n(f->fire) || j->c->closing) return;
	char p[CJ_PATH_MAX], rel[200];
	zkc_t *z = j->c->z;
	if (!strcmp(root, j->name) && !f->failover) {
		/* the root: its fire starts the run (every instance of it creates the node; one makes it) */
		char d[300];
		int n = snprintf(d, sizeof d, "fired %" PRIu32 " %s", fire_total(f->fire), root);
		zkc_create(z, cj_path(j, p, "/ejob-flow"), "", 0, 0, NULL, NULL);
		zkc_create(z, cj_path(j, p, "/ejob-flow/runs"), "", 0, 0, NULL, NULL);
		zkc_create(z, cj_path(j, p, "/ejob-flow/runs/%" PRIu64, run), d, n, 0, root_made, j);
	}
	snprintf(rel, sizeof rel, "on.%.180s", j->c->id);
	zkc_create(z, cj_path(j, p, "/ejob-flow/runs/%" PRIu64 "/%s", run, rel), "", 0, 0, NULL, NULL);
}

/* an item's record: its node and data (0: nothing to record) */
static int record_of(struct cjob *j, uint64_t run, uint32_t item, enum fire_end e, const char *why, char *path,
                     char *data, size_t len)
{
	if (!run || (e != FIRE_OK && e != FIRE_FAILED)) return 0;
	cj_path(j, path, "/ejob-flow/runs/%" PRIu64 "/%" PRIu32 ".%s", run, item, e == FIRE_OK ? "ok" : "failed");
	int n = e == FIRE_OK ? snprintf(data, len, "%s", j->c->id)
	                     : snprintf(data, len, "%s: %s", j->c->id, why && *why ? why : "failed");
	return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
}

/* ---- a failover take: the run of the crashed instance's fire --------------------------------------- *
 *
 * The crashed instance's fire made runs/{R}/on.{instance}: the newest run with it is the one its item
 * was part of. Found before the take's item is submitted (a list, a few exists, a get: its running
 * node is written already), so that it runs with EJOB_WORKFLOW_RUN and its record goes with its
 * completion. */
#define FIND_RUNS 8             /* the newest runs looked at */

struct ffind {
	coord_t *c;
	char *job, *crashed;
	struct cfire *f;            /* NULL once the take has ended (then its outcome is here) */
	uint32_t item;
	uint64_t session, best;
	int left;
	int ended;                  /* the item's outcome came before the run was known */
	enum fire_end end;
	char *why;
};

static void find_free(struct ffind *ff)
{
	free(ff->job);
	free(ff->crashed);
	free(ff->why);
	free(ff);
}

static void find_done(struct ffind *ff, uint64_t run, const char *root)
{
	struct cjob *j = ff->session == zkc_session(ff->c->z) ? cj_find(ff->c, ff->job) : NULL;
	struct cfire *f = ff->f;
	if (f) {
		f->ff = NULL;
		if (run && root && fire_set_run(f->fire, run, root) == 0)
			log_info("job %s: failover: item %" PRIu32 " of %s was part of workflow %s, run %" PRIu64 ": it runs in it",
			         ff->job, ff->item, ff->crashed, root, run);
	} else if (j && run && ff->ended) {
		char p[CJ_PATH_MAX], d[600];
		int n = record_of(j, run, ff->item, ff->end, ff->why, p, d, sizeof d);
		if (n) zkc_create(ff->c->z, p, d, n, 0, NULL, NULL);
	}
	if (!run)
		log_warn("job %s: failover: item %" PRIu32 " of %s: no workflow run of %s found for it: it is recorded in none "
		         "(a run waiting on it is given up)", ff->job, ff->item, ff->crashed, ff->crashed);
	find_free(ff);
	if (f) cx_step(f, FX_WRITTEN, NULL);    /* now its item goes (cx_flow_take held it) */
}

static void find_root(void *arg, const struct zkc_res *r)
{
	struct ffind *ff = arg;
	char root[256];
	if (r->rc == ZOK && r->data && sscanf(r->data, "fired %*u %255s", root) == 1) find_done(ff, ff->best, root);
	else find_done(ff, 0, NULL);
}

static void find_on(void *arg, const struct zkc_res *r)
{
	struct ffind *ff = arg;
	if (r->rc == ZOK && r->path) {
		/* .../runs/{R}/on.{instance} */
		const char *q = strstr(r->path, "/ejob-flow/runs/");
		uint64_t id = q ? strtoull(q + 16, NULL, 10) : 0;
		if (id > ff->best) ff->best = id;
	}
	if (--ff->left) return;
	char p[CJ_PATH_MAX];
	struct cjob *j = ff->session == zkc_session(ff->c->z) ? cj_find(ff->c, ff->job) : NULL;
	if (!ff->best || !j || zkc_get(ff->c->z, cj_path(j, p, "/ejob-flow/runs/%" PRIu64, ff->best), NULL, NULL, find_root,
	                               ff) != ZOK)
		find_done(ff, 0, NULL);
}

static void find_listed(void *arg, const struct zkc_res *r)
{
	struct ffind *ff = arg;
	struct flist l = { 0 };
	struct cjob *j = ff->session == zkc_session(ff->c->z) ? cj_find(ff->c, ff->job) : NULL;
	if (r->rc != ZOK || !j) {
		find_done(ff, 0, NULL);
		return;
	}
	fl_list_set(&l, r);
	char p[CJ_PATH_MAX];
	ff->left = 1;
	for (size_t i = l.n > FIND_RUNS ? l.n - FIND_RUNS : 0; i < l.n; i++)
		if (zkc_exists(ff->c->z, cj_path(j, p, "/ejob-flow/runs/%" PRIu64 "/on.%s", l.id[i], ff->crashed), NULL, NULL,
		               find_on, ff) == ZOK)
			ff->left++;
	free(l.id);
	struct zkc_res none = { .rc = ZNONODE };
	find_on(ff, &none);
}

int cx_flow_take(struct cfire *f, const char *from)
{
	struct cjob *j = f->j;
	/* from: the queue entry's instance, else the item's owner in the assignment known here */
	if (!from || f->misfire_run || fire_run(f->fire) || (!cj_conf(j)->flow.n && !cj_flow_root(j))) return 0;
	struct ffind *ff = calloc(1, sizeof *ff);
	if (!ff || !(ff->job = strdup(j->name)) || !(ff->crashed = strdup(from))) {
		if (ff) free(ff->job);
		free(ff);
		return 0;
	}
	ff->c = j->c;
	ff->f = f;
	ff->item = fire_n(f->fire) ? fire_item(f->fire, 0) : 0;
	ff->session = zkc_session(j->c->z);
	char p[CJ_PATH_MAX];
	if (zkc_children(j->c->z, cj_path(j, p, "/ejob-flow/runs"), NULL, NULL, find_listed, ff) != ZOK) {
		find_free(ff);
		return 0;
	}
	f->ff = ff;
	return 1;
}

/* the take ends before its run is known: its outcome waits for it */
static void find_keep(struct cfire *f, uint32_t item)
{
	struct ffind *ff = f->ff;
	enum fire_end e = fire_end_of(f->fire, item);
	if (e != FIRE_OK && e != FIRE_FAILED) return;
	const char *why = e == FIRE_FAILED ? cx_last_why(f, item) : NULL;
	ff->ended = 1;
	ff->end = e;
	free(ff->why);
	ff->why = why ? strdup(why) : NULL;
}

struct fvet {                   /* cx_flow_vet's read (below) */
	struct cfire *f;            /* NULL: the fire went (cx_flow_detach) */
	uint32_t total;
};

void cx_flow_detach(struct cfire *f)
{
	if (f->ff) f->ff->f = NULL;
	f->ff = NULL;
	if (f->fv) f->fv->f = NULL;
	f->fv = NULL;
}

/* ---- a failed item: the run's one message ------------------------------------------------------------ *
 *
 * /{root}/ejob-flow/runs/{R}/message, created by each instance where an item of the run fails for
 * good: the one whose create makes it sends the error handler's message (its job's handler), so a
 * run sends one however many items fail, on however many instances. */
struct fmsg {
	coord_t *c;
	char *job, *root, *cause, *tail;
	uint32_t item;
	uint64_t run;
};

static void msg_free(struct fmsg *m)
{
	free(m->job);
	free(m->root);
	free(m->cause);
	free(m->tail);
	free(m);
}

static void msg_made(void *arg, const struct zkc_res *r)
{
	struct fmsg *m = arg;
	if (r->rc == ZOK && !m->c->closing && m->c->h.flow_failed) {
		log_warn("job %s: workflow %s, run %" PRIu64 " failed: item %" PRIu32 " failed (%s): the run's message goes from here",
		         m->job, m->root, m->run, m->item, m->cause);
		m->c->h.flow_failed(m->c->arg, m->job, m->item, m->run, m->root, m->cause, m->tail);
	}
	msg_free(m);
}

static void message(struct cfire *f, uint32_t item)
{
	struct cjob *j = f->j;
	uint64_t run = fire_run(f->fire);
	const char *root = fire_root(f->fire), *why = cx_last_why(f, item);
	if (!run || !root || fire_end_of(f->fire, item) != FIRE_FAILED || j->c->closing) return;
	struct fmsg *m = calloc(1, sizeof *m);
	if (!m || !(m->job = strdup(j->name)) || !(m->root = strdup(root)) || !(m->cause = strdup(why ? why : "failed")) ||
	    !(m->tail = strdup(why ? why + strlen(why) + 1 : ""))) {
		if (m) msg_free(m);
		return;
	}
	m->c = j->c;
	m->item = item;
	m->run = run;
	char p[CJ_PATH_MAX], d[400];
	int n = snprintf(d, sizeof d, "%s %" PRIu32 " %s", j->name, item, j->c->id);
	if (zkc_create(j->c->z, fl_path(p, root, "/ejob-flow/runs/%" PRIu64 "/message", run), d, n, 0, msg_made, m) != ZOK)
		msg_free(m);
}

/* the item's record into m, or alone (m NULL) */
void cx_flow_record(struct cfire *f, zkc_multi_t *m, uint32_t item)
{
	char p[CJ_PATH_MAX], d[600];
	if (f->ff) {
		find_keep(f, item);
		return;
	}
	enum fire_end e = fire_end_of(f->fire, item);
	int n = record_of(f->j, fire_run(f->fire), item, e, e == FIRE_FAILED ? cx_last_why(f, item) : NULL, p, d, sizeof d);
	if (n && m) zkc_multi_create(m, p, d, n, 0);
	else if (n) zkc_create(f->j->c->z, p, d, n, 0, NULL, NULL);
	message(f, item);
}

/* Items of this instance the fire did not run (disabled): done for the run, as afterAll counts
 * them (coord_once.c), so that nothing waits for them. */
void cx_flow_end(struct cfire *f)
{
	uint64_t run = fire_run(f->fire);
	char p[CJ_PATH_MAX], d[300];
	if (!run || f->failover || f->j->c->closing) return;
	for (uint32_t i = 0; i < f->nunrun; i++) {
		if (f->vetted && f->unrun[i] < fire_total(f->fire) && f->vetted[f->unrun[i]] == 2) continue;   /* recorded */
		int n = snprintf(d, sizeof d, "%s (not run: disabled here)", f->j->c->id);
		zkc_create(f->j->c->z, cj_path(f->j, p, "/ejob-flow/runs/%" PRIu64 "/%" PRIu32 ".ok", run, f->unrun[i]), d, n, 0,
		           NULL, NULL);
	}
}


/* ---- a downstream fire of a run: the items recorded in it already are not run again ------------- *
 *
 * A run's trigger can come twice to an instance: the one a dead instance left is handed to the
 * living ones (cx_flow_gone), and a fire owed while the last one ran fires after it. Each fire of
 * a run of a job with dependsOn reads the run's records first (one read) and runs only the items
 * of its assignment that have none, as a returning instance's catch-up leaves out what ran on
 * takers (coord_vet.c). */
static void vet_listed(void *arg, const struct zkc_res *r)
{
	struct fvet *v = arg;
	struct cfire *f = v->f;
	if (f) {
		uint8_t *ran = calloc(v->total ? v->total : 1, 1);
		uint32_t n = 0;
		for (uint32_t i = 0; ran && i < v->total; i++) ran[i] = 1;
		for (int k = 0; ran && r->rc == ZOK && k < r->nchildren; k++) {
			char *end;
			unsigned long i = strtoul(r->children[k], &end, 10);
			if (end == r->children[k] || (strcmp(end, ".ok") && strcmp(end, ".failed")) || i >= v->total) continue;
			if (ran[i] != 2) n++;
			ran[i] = 2;
		}
		if (n)
			log_info("job %s: workflow %s, run %" PRIu64 ": %" PRIu32 " item%s of it ran already: not again here",
			         f->j->name, fire_root(f->fire), fire_run(f->fire), n, n == 1 ? "" : "s");
		f->fv = NULL;
		f->vetted = ran;        /* out of memory: run them all */
		cx_step(f, FX_READY, NULL);
	}
	free(v);
}

int cx_flow_vet(struct cfire *f)
{
	struct cjob *j = f->j;
	uint64_t run = fire_run(f->fire);
	const char *root = fire_root(f->fire);
	if (!run || !root || !strcmp(root, j->name) || f->failover || f->fv || zkc_state(j->c->z) != ZKC_CONNECTED) return 0;
	struct fvet *v = calloc(1, sizeof *v);
	if (!v) return 0;
	v->f = f;
	v->total = fire_total(f->fire);
	char p[CJ_PATH_MAX];
	if (zkc_children(j->c->z, cj_path(j, p, "/ejob-flow/runs/%" PRIu64, run), NULL, NULL, vet_listed, v) != ZOK) {
		free(v);
		return 0;
	}
	f->fv = v;
	return 1;
}
