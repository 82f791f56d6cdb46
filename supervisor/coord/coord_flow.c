/* supervisor/coord/coord_flow.c: workflows, jobs that run after other jobs (dependsOn; docs/config.md
 * "Workflows", docs/design.md "Workflows"); the upstream side (a fire's nodes, its items' records) is
 * coord_flow_rec.c.
 *
 * A run is a fire of the workflow's root; its id R is that fire's id. Under each job J of the
 * workflow, /{J}/ejob-flow/runs/{R} (P) is J's part of run R:
 *   data "fired {total} {root}"    J fired in the run (the root's instances at its fire; for a
 *                                  downstream job, the one multi that triggered it)
 *        "skipped {root} {why}"    J does not fire in the run: an upstream failed or was skipped
 *        "given-up {root} {why}"   J waited until FLOW_WINDOW newer runs had started
 *   children "{item}.ok"           data: the instance that ran it
 *            "{item}.failed"       data: "{instance}: {why}" (its final outcome, after maxRetries)
 *            "on.{instance}"       an instance whose fire of J is part of the run (a failover
 *                                  take finds the run of a crashed instance's item by it)
 * An item's record goes in the same multi as its completion (running deleted): an item is either
 * still running (and failed over if its instance dies) or recorded, never neither.
 *
 * The downstream side decides. Every instance of a job D with dependsOn watches each upstream U's
 * runs/ (children) and its own; for a run every upstream has started and D has not decided, the
 * upstreams' runs/{R} (children, data once). When every item of every upstream is ok, it lists
 * D's instances and commits one multi: create /{D}/ejob-flow/runs/{R} ("fired ..."), and create
 * (or overwrite) /{D}/trigger/{instance} for each with {"workflowRun":R,"workflowRoot":root}. The
 * create is the precondition: one multi of all the instances racing succeeds, and it starts the
 * fire everywhere at once, through the trigger nodes ElasticJob's instances also take. Nothing
 * is left half done by a crash: the decision and the triggers are one transaction, and any other
 * instance of D that lives makes it if the first died before. An upstream item failed for good,
 * or an upstream skipped: D is skipped (its node says why), and so on downstream. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/trigdata.h"
#include "supervisor/coord/coord_flow.h"

#define FLOW_TRIES 3            /* a trigger multi refused for a trigger node that came or went */

struct fwait {                  /* a run's upstream: its runs/{R} */
	zkc_keep_t *w;              /* children */
	int known, data_known, reading;
	int skipped;                /* not "fired": skipped or given up */
	uint32_t total, nok, nfailed;
	char *root;
	char *failed;               /* the first failed item's node name and data, for the skip's why */
};

struct frun {                   /* a run this downstream job waits on */
	struct cflow *fl;
	uint64_t id;
	struct fwait *up;           /* [fl->nup] */
	int deciding, tries;
	struct frun *next;
};


/* an answer to one of its requests: 0 when the flow is gone (and freed with its last request) */
static int flow_back(struct cflow *fl)
{
	fl->refs--;
	if (!fl->dead) return 1;
	if (!fl->refs) free(fl);
	return 0;
}

/* ---- paths, lists -------------------------------------------------------------------------------- */

const char *fl_path(char *buf, const char *job, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cj_vpath(buf, job, fmt, ap);
	va_end(ap);
	return buf;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void fl_list_set(struct flist *l, const struct zkc_res *r)
{
	free(l->id);
	l->id = NULL;
	l->n = 0;
	l->known = 1;
	if (r->rc != ZOK || !r->nchildren || !(l->id = calloc((size_t)r->nchildren, sizeof *l->id))) return;
	for (int i = 0; i < r->nchildren; i++) {
		char *end;
		uint64_t x = strtoull(r->children[i], &end, 10);
		if (!*end && x) l->id[l->n++] = x;
	}
	qsort(l->id, l->n, sizeof *l->id, cmp_u64);
}

int fl_list_has(const struct flist *l, uint64_t id)
{
	return l->known && bsearch(&id, l->id, l->n, sizeof *l->id, cmp_u64) != NULL;
}

/* ---- the runs one job keeps ------------------------------------------------------------------------ */

static void pruned_listed(void *arg, const struct zkc_res *r)
{
	coord_t *c = arg;
	char p[CJ_PATH_MAX];
	if (r->rc != ZOK || c->closing) return;
	for (int i = 0; i < r->nchildren; i++) {
		snprintf(p, sizeof p, "%s/%s", r->path, r->children[i]);
		zkc_delete(c->z, p, -1, NULL, NULL);
	}
	zkc_delete(c->z, r->path, -1, NULL, NULL);
}

static void runs_for_prune(void *arg, const struct zkc_res *r)
{
	coord_t *c = arg;
	struct flist l = { 0 };
	char p[CJ_PATH_MAX];
	if (r->rc != ZOK || c->closing) return;
	fl_list_set(&l, r);
	for (size_t i = 0; i + FLOW_KEEP < l.n; i++) {
		snprintf(p, sizeof p, "%s/%" PRIu64, r->path, l.id[i]);
		zkc_children(c->z, p, NULL, NULL, pruned_listed, c);
	}
	free(l.id);
}

void fl_prune(coord_t *c, const char *job)
{
	char p[CJ_PATH_MAX];
	zkc_children(c->z, fl_path(p, job, "/ejob-flow/runs"), NULL, NULL, runs_for_prune, c);
}

/* ---- roots --------------------------------------------------------------------------------------- */

/* Which of this instance's jobs are a workflow's root: another of its jobs depends on it, and it
 * depends on none. Worked out again after a job's config changed, or a job came or went
 * (c->flow_dirty): not at each registration, which changes neither. */
static void roots(coord_t *c)
{
	c->flow_dirty = 0;
	for (size_t i = 0; i < c->n; i++) c->jobs[i]->flow_root = 0;
	for (size_t i = 0; i < c->n; i++) {
		const conf_job_t *cj = c->jobs[i]->gone ? NULL : cj_conf(c->jobs[i]);
		for (size_t k = 0; cj && k < cj->flow.n; k++) {
			struct cjob *u = cj_find(c, cj->flow.depends_on[k]);
			if (u && !u->gone && !cj_conf(u)->flow.n) u->flow_root = 1;
		}
	}
}

int cj_flow_root(struct cjob *j)
{
	if (j->c->flow_dirty) roots(j->c);
	return j->flow_root;
}

/* ---- the downstream side: waiting, deciding ---------------------------------------------------- */

static void evaluate(struct cflow *fl);

static void run_free(struct frun *r)
{
	for (size_t k = 0; r->up && k < r->fl->nup; k++) {
		zkc_keep_free(r->up[k].w);
		free(r->up[k].root);
		free(r->up[k].failed);
	}
	free(r->up);
	free(r);
}

static struct frun *run_find(struct cflow *fl, uint64_t id)
{
	for (struct frun *r = fl->runs; r; r = r->next)
		if (r->id == id) return r;
	return NULL;
}

static void up_counted(void *arg, const struct zkc_res *r)
{
	struct frun *run = arg;
	if (r->item >= run->fl->nup) return;
	struct fwait *w = &run->up[r->item];
	w->known = 1;
	w->nok = w->nfailed = 0;
	for (int i = 0; r->rc == ZOK && i < r->nchildren; i++) {
		const char *dot = strchr(r->children[i], '.');
		if (!dot || !strncmp(r->children[i], "on.", 3)) continue;
		if (!strcmp(dot, ".ok")) w->nok++;
		else if (!strcmp(dot, ".failed")) {
			if (!w->nfailed++ && !w->failed) w->failed = strdup(r->children[i]);
		}
	}
	evaluate(run->fl);
}

static void up_read(void *arg, const struct zkc_res *r)
{
	struct cflow *fl = arg;
	if (!flow_back(fl)) return;
	const char *q = r->path ? strrchr(r->path, '/') : NULL;
	struct frun *run = q ? run_find(fl, strtoull(q + 1, NULL, 10)) : NULL;
	if (!run || r->item >= fl->nup || !cj_live(fl->j, r->session) || fl->session != r->session) return;
	struct fwait *w = &run->up[r->item];
	w->reading = 0;
	if (cj_unanswered(r->rc)) {
		evaluate(fl);           /* read again (sent when connected) */
		return;
	}
	if (r->rc != ZOK) return;   /* gone (pruned): the run leaves the lists */
	char root[256] = "-";
	unsigned total = 0;
	w->data_known = 1;
	if (r->data && sscanf(r->data, "fired %u %255s", &total, root) == 2) {
		w->total = total;
	} else {
		w->skipped = 1;
		if (r->data) sscanf(r->data, "%*s %255s", root);
	}
	free(w->root);
	w->root = strdup(root);
	evaluate(fl);
}

/* a run every upstream has started: watch its upstreams' parts */
static struct frun *run_new(struct cflow *fl, uint64_t id)
{
	struct frun *r = calloc(1, sizeof *r);
	if (!r || !(r->up = calloc(fl->nup, sizeof *r->up))) {
		free(r);
		log_error("job %s: out of memory: workflow run %" PRIu64 " is not waited on here", fl->j->name, id);
		return NULL;
	}
	r->fl = fl;
	r->id = id;
	r->next = fl->runs;
	fl->runs = r;
	char p[CJ_PATH_MAX];
	for (size_t k = 0; k < fl->nup; k++) {
		fl_path(p, fl->up[k], "/ejob-flow/runs/%" PRIu64, id);
		r->up[k].w = zkc_keep_new(fl->j->c->z, ZKC_KEEP_CHILDREN, p, (uint32_t)k, up_counted, r);
		zkc_keep_arm(r->up[k].w);
	}
	return r;
}

static void decide_skip(struct frun *r, const char *root, const char *why)
{
	struct cflow *fl = r->fl;
	char p[CJ_PATH_MAX], d[700];
	int n = snprintf(d, sizeof d, "skipped %s %s", root, why);
	log_info("job %s: workflow %s, run %" PRIu64 ": skipped: %s", fl->j->name, root, r->id, why);
	r->deciding = 1;
	zkc_create(fl->j->c->z, cj_path(fl->j, p, "/ejob-flow/runs/%" PRIu64, r->id), d, n < (int)sizeof d ? n : (int)sizeof d - 1,
	           0, NULL, NULL);
}

struct fire_op {                /* a trigger multi in flight */
	struct cflow *fl;
	uint64_t id, session;
	char *root;
	char **inst;                /* D's instances */
	int ninst;
	char **ej;                  /* of them, ElasticJob's (no leader/failover/alive node) */
	int nej;
	struct fproxy *proxy;       /* their items watched */
	char **alive, **trig;       /* leader/failover/alive, trigger: their children */
	int nalive, ntrig;
	int left, bad;              /* the three lists' answers due; one of them failed */
};

static void strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++) free(v[i]);
	free(v);
}

static void fop_free(struct fire_op *o)
{
	flow_back(o->fl);
	strv_free(o->inst, o->ninst);
	strv_free(o->ej, o->nej);
	strv_free(o->alive, o->nalive);
	strv_free(o->trig, o->ntrig);
	free(o->root);
	free(o);
}

/* the run o is for, if it is still waited on in this session */
static struct frun *fop_run(struct fire_op *o, const struct zkc_res *r)
{
	struct cflow *fl = o->fl;
	if (fl->dead) return NULL;
	return cj_live(fl->j, r->session) && fl->session == o->session ? run_find(fl, o->id) : NULL;
}

static void fire_done(void *arg, const struct zkc_res *r)
{
	struct fire_op *o = arg;
	struct cflow *fl = o->fl;
	struct frun *run = fop_run(o, r);
	if (!run) {
		if (o->proxy && !fl->dead && r->rc != ZOK) fl_proxy_drop(fl, o->proxy);
		fop_free(o);
		return;
	}
	run->deciding = 0;
	int first = r->nops > 0 ? r->op_rc[0] : r->rc;
	if (r->rc != ZOK && o->proxy) fl_proxy_drop(fl, o->proxy);
	if (r->rc == ZOK) {
		log_info("job %s: workflow %s, run %" PRIu64 ": every upstream job ended ok: it fires on its %d instance%s",
		         fl->j->name, o->root, o->id, o->ninst, o->ninst == 1 ? "" : "s");
		run->deciding = 1;      /* until the own list has it */
		fl_prune(fl->j->c, fl->j->name);
	} else if (first == ZNODEEXISTS) {
		run->deciding = 1;      /* decided by another instance: the own list tells */
	} else if (cj_unanswered(r->rc)) {
		evaluate(fl);           /* made again when connected (a multi applied meanwhile fails on its node) */
	} else if (++run->tries < FLOW_TRIES) {
		/* a trigger node came or went between the list and the multi: list again */
		log_info("job %s: workflow %s, run %" PRIu64 ": triggering it: %s; trying again", fl->j->name, o->root, o->id,
		         zerror(r->rc));
		evaluate(fl);
	} else {
		log_error("job %s: workflow %s, run %" PRIu64 ": triggering it failed %d times (%s): it does not fire; the run "
		          "is given up when %d newer ones have started", fl->j->name, o->root, o->id, FLOW_TRIES, zerror(r->rc),
		          FLOW_WINDOW);
		run->deciding = 1;      /* not again */
	}
	fop_free(o);
}

int fl_has(char *const *v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i], s)) return 1;
	return 0;
}





/* The three lists known (D's instances, which of them are ejob's, D's trigger nodes): the one
 * multi. A trigger node there already (a manual trigger not taken yet) is set to the run's: that
 * instance fires once, in the run. */
static void lists_known(struct fire_op *o, struct frun *run)
{
	struct cflow *fl = o->fl;
	if (o->bad || !o->ninst) {
		run->deciding = 0;
		if (o->bad == 2) evaluate(fl);      /* unanswered: again when connected */
		fop_free(o);
		return;
	}
	for (int i = 0; i < o->ninst; i++) {
		if (fl_has(o->alive, o->nalive, o->inst[i])) continue;
		char **v = realloc(o->ej, (size_t)(o->nej + 1) * sizeof *v);
		if (!v) continue;
		o->ej = v;
		if ((v[o->nej] = strdup(o->inst[i]))) o->nej++;
	}
	char p[CJ_PATH_MAX], d[300];
	char *data = trigdata_make_run(NULL, o->id, o->root);
	if (!data) {
		run->deciding = 0;
		log_error("job %s: out of memory triggering workflow run %" PRIu64, fl->j->name, o->id);
		fop_free(o);
		return;
	}
	if (o->nej) {
		/* ElasticJob's instances: their items watched from before the trigger (coord_flow_ej.c) */
		if ((o->proxy = fl_proxy_new(fl, o->id, o->ej, o->nej))) o->ej = NULL, o->nej = 0;
	}
	zkc_multi_t *m = zkc_multi_new();
	int n = snprintf(d, sizeof d, "fired %d %s", cj_conf(fl->j)->sharding_total_count, o->root);
	zkc_multi_create(m, cj_path(fl->j, p, "/ejob-flow/runs/%" PRIu64, o->id), d, n, 0);
	for (int i = 0; i < o->ninst; i++) {
		cj_path(fl->j, p, "/trigger/%s", o->inst[i]);
		if (fl_has(o->trig, o->ntrig, o->inst[i])) zkc_multi_set(m, p, data, (int)strlen(data), -1);
		else zkc_multi_create(m, p, data, (int)strlen(data), 0);
	}
	free(data);
	if (zkc_multi_commit(fl->j->c->z, m, fire_done, o) != ZOK) {
		run->deciding = 0;
		fop_free(o);
	}
}

/* one of the three lists (r->item: 0 instances, 1 alive, 2 trigger); they are answered in order */
static void listed(void *arg, const struct zkc_res *r)
{
	struct fire_op *o = arg;
	struct frun *run = fop_run(o, r);
	if (!run) o->bad = 1;
	else if (cj_unanswered(r->rc)) o->bad = 2;
	else if (r->rc != ZOK && !(r->rc == ZNONODE && r->item > 0)) o->bad = 1;
	char ***v = r->item == 0 ? &o->inst : r->item == 1 ? &o->alive : &o->trig;
	int *n = r->item == 0 ? &o->ninst : r->item == 1 ? &o->nalive : &o->ntrig;
	if (!o->bad && r->rc == ZOK && r->nchildren && (*v = calloc((size_t)r->nchildren, sizeof **v)))
		for (int i = 0; i < r->nchildren; i++)
			if (((*v)[*n] = strdup(r->children[i]))) (*n)++;
	if (--o->left) return;
	if (!run) {
		fop_free(o);
		return;
	}
	lists_known(o, run);
}

static void decide_fire(struct frun *r, const char *root)
{
	struct cflow *fl = r->fl;
	char p[CJ_PATH_MAX];
	struct fire_op *o = calloc(1, sizeof *o);
	if (!o || !(o->root = strdup(root))) {
		free(o);
		return;
	}
	o->fl = fl;
	fl->refs++;
	o->id = r->id;
	o->session = fl->session;
	r->deciding = 1;
	zkc_t *z = fl->j->c->z;
	/* the three lists at once (pipelined: one round trip, not three) */
	zkc_create(z, cj_path(fl->j, p, "/trigger"), "", 0, 0, NULL, NULL);
	static const char *const rel[] = { "/instances", "/leader/failover/alive", "/trigger" };
	for (uint32_t k = 0; k < 3; k++)
		if (zkc_children_item(z, cj_path(fl->j, p, "%s", rel[k]), k, NULL, NULL, listed, o) == ZOK) o->left++;
	if (o->left < 3) {
		/* not sent (no handle): the ones sent answer, and their last frees it */
		o->bad = 1;
		if (!o->left) {
			r->deciding = 0;
			fop_free(o);
		}
	}
}

static void give_up(struct cflow *fl, uint64_t id)
{
	char p[CJ_PATH_MAX], d[200];
	int n = snprintf(d, sizeof d, "given-up - %d newer runs started before every upstream job of it had ended",
	                 FLOW_WINDOW);
	log_warn("job %s: workflow run %" PRIu64 ": given up: %d newer runs started before every upstream job of it had "
	         "ended ok", fl->j->name, id, FLOW_WINDOW);
	zkc_create(fl->j->c->z, cj_path(fl->j, p, "/ejob-flow/runs/%" PRIu64, id), d, n, 0, NULL, NULL);
}

/* the runs every upstream has started that this job has not decided: wait, skip or fire */
static void evaluate(struct cflow *fl)
{
	if (!fl->own.known || !cj_registered(fl->j) || fl->j->gone || fl->j->ops.shut) return;
	for (size_t k = 0; k < fl->nup; k++)
		if (!fl->ul[k].known) return;
	/* the runs waited on that are decided, or left every list: done here */
	for (struct frun **pp = &fl->runs; *pp;) {
		struct frun *r = *pp;
		int listed = 1;
		for (size_t k = 0; k < fl->nup; k++) listed &= fl_list_has(&fl->ul[k], r->id);
		if (fl_list_has(&fl->own, r->id) || (!listed && !r->deciding)) {
			*pp = r->next;
			run_free(r);
			continue;
		}
		pp = &r->next;
	}
	/* the candidates: in every upstream's list (the first one's, checked against the others) */
	const struct flist *l0 = &fl->ul[0];
	for (size_t i = 0; i < l0->n; i++) {
		uint64_t id = l0->id[i];
		if (fl_list_has(&fl->own, id)) continue;
		/* newer runs started (in the first upstream's list): too many, and it is given up */
		if (l0->n - 1 - i >= FLOW_WINDOW) {
			struct frun *r = run_find(fl, id);
			if (!r || !r->deciding) {
				give_up(fl, id);
				if (r) r->deciding = 1;
			}
			continue;
		}
		int all = 1;
		for (size_t k = 1; k < fl->nup; k++) all &= fl_list_has(&fl->ul[k], id);
		if (!all) continue;
		struct frun *r = run_find(fl, id);
		if (!r && !(r = run_new(fl, id))) continue;
		if (r->deciding) continue;
		int ready = 1;
		const char *root = NULL;
		for (size_t k = 0; k < fl->nup; k++) {
			struct fwait *w = &r->up[k];
			if (!w->data_known && !w->reading) {
				char p[CJ_PATH_MAX];
				w->reading = zkc_get_item(fl->j->c->z, fl_path(p, fl->up[k], "/ejob-flow/runs/%" PRIu64, id), (uint32_t)k,
				                          NULL, NULL, up_read, fl) == ZOK;
				fl->refs += w->reading;
			}
			if (!w->known || !w->data_known) {
				ready = 0;
				continue;
			}
			if (!root && w->root && strcmp(w->root, "-")) root = w->root;
		}
		if (!ready) continue;
		if (!root) root = "-";
		char why[400];
		why[0] = 0;
		int done = 1;
		for (size_t k = 0; k < fl->nup && !why[0]; k++) {
			struct fwait *w = &r->up[k];
			if (w->skipped) snprintf(why, sizeof why, "%s did not fire in the run", fl->up[k]);
			else if (w->nfailed)
				snprintf(why, sizeof why, "%s item %.*s failed", fl->up[k],
				         w->failed ? (int)strcspn(w->failed, ".") : 1, w->failed ? w->failed : "?");
			else if (w->nok < w->total) done = 0;
		}
		if (why[0]) decide_skip(r, root, why);
		else if (done) decide_fire(r, root);
	}
}

static void up_listed(void *arg, const struct zkc_res *r)
{
	struct cflow *fl = arg;
	if (r->item >= fl->nup) return;
	fl_list_set(&fl->ul[r->item], r);
	evaluate(fl);
}

static void own_listed(void *arg, const struct zkc_res *r)
{
	struct cflow *fl = arg;
	fl_list_set(&fl->own, r);
	evaluate(fl);
}

static void flow_free(struct cflow *fl)
{
	if (!fl || fl->dead) return;
	int refs = fl->refs;
	while (fl->runs) {
		struct frun *r = fl->runs;
		fl->runs = r->next;
		run_free(r);
	}
	fl_proxies_free(fl);
	for (size_t k = 0; k < fl->nup; k++) {
		zkc_keep_free(fl->w_up ? fl->w_up[k] : NULL);
		free(fl->ul ? fl->ul[k].id : NULL);
		free(fl->up[k]);
	}
	free(fl->w_up);
	free(fl->ul);
	free(fl->up);
	zkc_keep_free(fl->w_own);
	free(fl->own.id);
	memset(fl, 0, sizeof *fl);
	fl->dead = 1;
	fl->refs = refs;
	if (!refs) free(fl);
}

void cj_flow_free(struct cjob *j)
{
	flow_free(j->flow);
	j->flow = NULL;
}

/* the same upstream jobs as the config in force */
static int same_ups(const struct cflow *fl, const conf_job_t *cj)
{
	if (fl->nup != cj->flow.n) return 0;
	for (size_t k = 0; k < fl->nup; k++)
		if (strcmp(fl->up[k], cj->flow.depends_on[k])) return 0;
	return 1;
}

void cj_flow_sync(struct cjob *j)
{
	coord_t *c = j->c;
	const conf_job_t *cj = j->gone ? NULL : cj_conf(j);
	if (!cj || !cj->flow.n || !cj_registered(j)) {
		cj_flow_free(j);
		return;
	}
	if (j->flow && same_ups(j->flow, cj) && j->flow->session == zkc_session(c->z)) return;
	cj_flow_free(j);
	struct cflow *fl = calloc(1, sizeof *fl);
	if (!fl || !(fl->up = calloc(cj->flow.n, sizeof *fl->up)) || !(fl->w_up = calloc(cj->flow.n, sizeof *fl->w_up)) ||
	    !(fl->ul = calloc(cj->flow.n, sizeof *fl->ul))) {
		if (fl) free(fl->up), free(fl->w_up), free(fl->ul);
		free(fl);
		log_error("job %s: out of memory: its upstream jobs (dependsOn) are not watched: it does not fire", j->name);
		return;
	}
	fl->j = j;
	fl->session = zkc_session(c->z);
	j->flow = fl;
	for (size_t k = 0; k < cj->flow.n; k++) {
		if (!(fl->up[k] = strdup(cj->flow.depends_on[k]))) {
			cj_flow_free(j);
			return;
		}
		fl->nup++;
	}
	char p[CJ_PATH_MAX];
	zkc_t *z = c->z;
	/* the nodes watched, made if missing (an upstream job's nodes come with it: NONODE until then,
	 * and the kept watch waits for them) */
	zkc_create(z, cj_path(j, p, "/ejob-flow"), "", 0, 0, NULL, NULL);
	zkc_create(z, cj_path(j, p, "/ejob-flow/runs"), "", 0, 0, NULL, NULL);
	fl->w_own = zkc_keep_new(z, ZKC_KEEP_CHILDREN, p, 0, own_listed, fl);
	zkc_keep_arm(fl->w_own);
	for (size_t k = 0; k < fl->nup; k++) {
		zkc_create(z, fl_path(p, fl->up[k], "/ejob-flow"), "", 0, 0, NULL, NULL);
		fl_path(p, fl->up[k], "/ejob-flow/runs");
		zkc_create(z, p, "", 0, 0, NULL, NULL);
		fl->w_up[k] = zkc_keep_new(z, ZKC_KEEP_CHILDREN, p, (uint32_t)k, up_listed, fl);
		zkc_keep_arm(fl->w_up[k]);
	}
}

void cj_flow_connected(struct cjob *j)
{
	if (j->flow && j->flow->session == zkc_session(j->c->z)) evaluate(j->flow);
}
