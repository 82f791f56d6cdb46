/* supervisor/coord/coord_adopt.c: jobs that live in ZooKeeper, adopted by their label
 * (docs/config.md "Jobs adopted by label").
 *
 * With supervisor.labels set, one kept children watch on the namespace's root lists the jobs, and
 * each job's config node gets a kept data watch (a candidate): read once when the job appears,
 * again only when it changes. A job of the file has none: its own watch is on that node (one
 * watch and one read per change, not two); an adopted job has no watch of its own: the
 * candidate's takes its changes. A job not in the file whose node's label is one of ours ("*": any
 * label; a node without one: none, as ElasticJob's JobInstanceRegistry) is adopted: a cjob whose
 * local is NULL and whose cfg.node is the node taken (coord_config.c owns it, as it owns any node
 * in force; fires hold it with conf_job_hold). It registers and runs as a file job; when the label
 * stops matching, the config node or the job goes, it is retired as a job removed from the file
 * (cj_retire). A job of the file keeps its own rules.
 *
 * supervisor.allowedCommands bounds what a ZooKeeper writer can make this machine run: the
 * programs of an adopted job (script.command.line's first word and the listener commands'
 * resolved as the worker resolves them, a native library's path) must each match a glob;
 * otherwise the job is refused here: it does not register (takes no item, so the instances that
 * may run it do), and each fire is skipped with reason not_allowed. Decided when its config is
 * taken, not at each fire. http and external jobs start no program here: allowed. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/cmdline.h"
#include "supervisor/coord/coord_int.h"

struct cand {                   /* a child of the namespace's root: a job, maybe ours */
	struct adopt *a;
	char *name;
	zkc_keep_t *w;              /* /{name}/config (data) */
	char root_type[32];         /* /{name}'s data, read once when it appeared */
	int inflight;               /* the root's read: the candidate is freed when it is answered */
	int dead;                   /* gone from the namespace (freed once nothing is in flight) */
	uint64_t said;              /* a hash of the last node whose refusal was logged */
};

struct adopt {
	coord_t *c;
	char **labels;
	size_t nlabels;
	char **allowed;
	size_t nallowed;
	zkc_keep_t *w_root;         /* the namespace's children */
	struct cand **v;            /* sorted by name (strcmp), as zkc gives children */
	size_t n;
};

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++) free(v[i]);
	free(v);
}

static int strv_copy(char ***out, size_t *nout, const char *const *src, size_t n)
{
	char **v = calloc(n ? n : 1, sizeof *v);
	if (!v) return -1;
	for (size_t i = 0; i < n; i++)
		if (!(v[i] = strdup(src[i]))) {
			strv_free(v, i);
			return -1;
		}
	*out = v;
	*nout = n;
	return 0;
}

static int label_ours(const struct adopt *a, const char *label)
{
	if (!label || !*label) return 0;
	for (size_t i = 0; i < a->nlabels; i++)
		if (!strcmp(a->labels[i], "*") || !strcmp(a->labels[i], label)) return 1;
	return 0;
}

/* ---- allowedCommands -------------------------------------------------------------------------------- */

/* 0: cmd's program matches a glob; -1: why (in why) */
static int cmd_allowed(const struct adopt *a, const char *key, const char *cmd, char *why, size_t sz)
{
	char **argv = NULL, err[128], path[4096];
	if (cmd_split(cmd, 0, &argv, err, sizeof err) < 0) {
		snprintf(why, sz, "%s cannot be split (%s)", key, err);
		return -1;
	}
	int rc = cmd_resolve(argv[0], path, sizeof path);
	if (rc < 0) snprintf(path, sizeof path, "%s", argv[0]);   /* not found: judged as written */
	free(argv);
	for (size_t i = 0; i < a->nallowed; i++)
		if (fnmatch(a->allowed[i], path, FNM_PATHNAME) == 0) return 0;
	if (!a->nallowed)
		snprintf(why, sz, "%s runs %.200s and supervisor.allowedCommands is not set: an adopted job runs no program "
		         "of this machine until a glob there allows it", key, path);
	else
		snprintf(why, sz, "%s runs %.200s, outside every glob of supervisor.allowedCommands (add one that matches "
		         "it to this machine's file to let it run here)", key, path);
	return -1;
}

void ca_verdict(struct cjob *j)
{
	struct adopt *a = j->c->adopt;
	const conf_job_t *cj = cj_conf(j);
	int was = j->adopt.refused;
	char why[400];
	int bad = 0;
	const char *keys[] = { "script.command.line", "ejob.listener.before", "ejob.listener.after",
	                       "ejob.listener.beforeAll", "ejob.listener.afterAll" };
	const char *cmds[] = { cj->type == CONF_JOB_SCRIPT ? cj->script_command_line : NULL, cj->listener.before,
	                       cj->listener.after, cj->listener.before_all, cj->listener.after_all };
	for (size_t k = 0; k < sizeof keys / sizeof *keys && !bad; k++)
		if (cmds[k] && a) bad = cmd_allowed(a, keys[k], cmds[k], why, sizeof why) < 0;
	/* a native job's library is loaded into a worker of this machine: a program as well */
	if (!bad && a && (cj->type == CONF_JOB_NATIVE || cj->type == CONF_JOB_DATAFLOW) && cj->native.library) {
		int ok = 0;
		for (size_t i = 0; i < a->nallowed && !ok; i++) ok = fnmatch(a->allowed[i], cj->native.library, FNM_PATHNAME) == 0;
		if (!ok) {
			bad = 1;
			snprintf(why, sizeof why, "native.library %.200s is outside every glob of supervisor.allowedCommands%s",
			         cj->native.library, a->nallowed ? "" : " (not set: nothing is allowed)");
		}
	}
	j->adopt.refused = bad;
	free(j->adopt.why);
	j->adopt.why = bad ? strdup(why) : NULL;
	if (bad && !was) log_warn("job %s: refused on this machine, it never runs here: %s", j->name, why);
	if (!bad && was) {
		log_info("job %s: allowed on this machine now (supervisor.allowedCommands)", j->name);
		log_cause_reset(&j->fx.fire_cause);
		/* still leaving (a fire of before its refusal runs): it registers once that has ended
		 * and its alive node is gone (cj_retired) */
		if (j->c->connected && !j->gone && !j->retiring) cj_reg_start(j);
	}
	/* registered (or registering: reg_done finds it refused and it leaves then): it leaves the
	 * cluster here as a removed job does (its instance node now, its alive node once a running
	 * fire has ended), and stays adopted, refused, its fires skipped */
	if (bad && !was) cj_withdraw(j);
}

/* ---- adopting, and letting go ------------------------------------------------------------------------ */

static void adopt(coord_t *c, struct cjob *j, conf_job_t *node, const char *root_type)
{
	j->local = NULL;            /* a retired job's pinned copy is cfg.node's: dropped below */
	j->file = NULL;
	cj_node_drop(j);
	j->cfg.node = node;
	snprintf(j->cfg.root_type, sizeof j->cfg.root_type, "%s", root_type);
	j->adopt.on = 1;
	j->adopt.refused = 0;
	j->gone = 0;
	cj_publish_due(j, 0);       /* never written from here: its node is its writer's */
	log_info("job %s: adopted: its label '%s' is one of supervisor.labels", j->name, node->label);
	ca_verdict(j);
	c->h.job_conf(c->arg, j->name, node, j);
	c->flow_dirty = 1;          /* which jobs are roots: coord_flow.c */
	cj_flow_sync(j);
	if (c->connected && !j->reg.session && !j->retiring) cj_reg_start(j);
}

static void let_go(struct cjob *j, const char *why)
{
	log_info("job %s: no longer adopted here: %s", j->name, why);
	j->adopt.on = j->adopt.refused = 0;
	cj_retire(j);
}

static void cand_free(struct cand *k)
{
	zkc_keep_free(k->w);
	k->w = NULL;
	k->dead = 1;
	if (k->inflight) return;
	free(k->name);
	free(k);
}

static void node_read(void *arg, const struct zkc_res *r)
{
	struct cand *k = arg;
	struct adopt *a = k->a;
	coord_t *c = a->c;
	struct cjob *j = cj_find(c, k->name);
	int ours = j && !j->gone && j->adopt.on;
	if (j && !j->gone && !j->adopt.on) {
		/* a job of the file: its own rules, and its own watch on the node */
		zkc_keep_free(k->w);
		k->w = NULL;
		return;
	}
	if (r->rc == ZNONODE) {
		if (ours) let_go(j, "its config node was deleted");
		return;
	}
	if (r->rc != ZOK) return;
	size_t len = (size_t)(r->len > 0 ? r->len : 0);
	char path[CJ_PATH_MAX + 64], why[600];
	snprintf(path, sizeof path, "/%s/%s/config", c->ns, k->name);
	conf_job_t *peek = conf_node_parse(r->data, len, path, NULL);
	if (!peek) {
		/* not a config ElasticJob loads: an adopted job says why and keeps the config in force */
		if (ours) cj_take_node(j, r->data, len, cj_registered(j), r->stat.version);
		return;
	}
	int match = label_ours(a, peek->label);
	char label[64];
	snprintf(label, sizeof label, "%s", peek->label ? peek->label : "");
	conf_job_free(peek);
	if (ours && !match) {
		char w[160];
		snprintf(w, sizeof w, "its label is now '%s'", label);
		let_go(j, w);
		return;
	}
	if (ours) {
		/* this is the job's one watch on its node (cj_watch_config arms none for an adopted
		 * job): the change taken as a file job's watch takes it (registered), or looked at */
		cj_take_node(j, r->data, len, cj_registered(j), r->stat.version);
		return;
	}
	if (!match) return;
	conf_job_t *cj = conf_node_take(r->data, len, path, k->name, k->root_type, NULL, why, sizeof why, NULL);
	if (!cj) {
		uint64_t h = cj_hash(r->data, len);
		if (h != k->said)
			log_error("job %s: its label '%s' is ours but its config node cannot be taken: %s; not adopted until "
			          "it is fixed", k->name, label, why);
		k->said = h;
		return;
	}
	if (!j && !(j = cj_add(c, k->name))) {
		log_error("job %s: out of memory: not adopted", k->name);
		conf_job_free(cj);
		return;
	}
	adopt(c, j, cj, k->root_type);
}

static void root_read(void *arg, const struct zkc_res *r)
{
	struct cand *k = arg;
	k->inflight--;
	if (k->dead) {
		cand_free(k);
		return;
	}
	if (r->rc == ZOK && r->data) snprintf(k->root_type, sizeof k->root_type, "%.*s", r->len, r->data);
	zkc_keep_arm(k->w);         /* after the root's type is known: answered in order anyway */
}

/* The candidate's watch on the job's config node: none while the job is the file's (that job's own
 * watch is on the node; a second one would read it again at each change); else made and armed, or
 * (read) read again: a reload may have changed the labels or the file. */
static void cand_look(struct cand *k, int read)
{
	coord_t *c = k->a->c;
	struct cjob *j = cj_find(c, k->name);
	char p[CJ_PATH_MAX];
	if (j && !j->gone && !j->adopt.on) {
		zkc_keep_free(k->w);
		k->w = NULL;
		return;
	}
	if (k->w) {
		if (read) zkc_keep_read(k->w);
		else zkc_keep_arm(k->w);
		return;
	}
	snprintf(p, sizeof p, "/%s/config", k->name);     /* its length checked by cand_new */
	if (!(k->w = zkc_keep_new(c->z, ZKC_KEEP_DATA, p, ZKC_NO_ITEM, node_read, k))) {
		log_error("job %s: out of memory: not watched for supervisor.labels", k->name);
		return;
	}
	/* the root's type first (answered in order): a node without ejob.type needs it */
	snprintf(p, sizeof p, "/%s", k->name);
	if (zkc_get(c->z, p, NULL, NULL, root_read, k) == ZOK) k->inflight++;
	else zkc_keep_arm(k->w);
}

static struct cand *cand_new(struct adopt *a, const char *name)
{
	struct cand *k = calloc(1, sizeof *k);
	if (!k || strlen(name) + sizeof "//config" > CJ_PATH_MAX || !(k->name = strdup(name))) {
		free(k);
		return NULL;
	}
	k->a = a;
	return k;
}

/* the namespace's children: merged with the candidates (both sorted) */
static void root_listed(void *arg, const struct zkc_res *r)
{
	struct adopt *a = arg;
	if (r->rc != ZOK && r->rc != ZNONODE) return;
	int nc = r->rc == ZOK ? r->nchildren : 0;
	struct cand **v = calloc((size_t)nc + 1, sizeof *v);
	if (!v) {
		log_error("zookeeper: out of memory listing the namespace's jobs for supervisor.labels");
		return;
	}
	size_t i = 0, n = 0;
	struct cand **old = a->v;
	size_t nold = a->n;
	for (int k = 0; k < nc; k++) {
		const char *name = r->children[k];
		while (i < nold && strcmp(old[i]->name, name) < 0) {
			struct cjob *j = cj_find(a->c, old[i]->name);
			if (j && !j->gone && j->adopt.on) let_go(j, "the job was deleted");
			cand_free(old[i++]);
		}
		if (i < nold && !strcmp(old[i]->name, name)) {
			v[n++] = old[i++];
			continue;
		}
		struct cand *c = cand_new(a, name);
		if (!c) {
			log_error("job %s: out of memory: not watched for supervisor.labels", name);
			continue;
		}
		v[n++] = c;
		cand_look(c, 0);
	}
	while (i < nold) {
		struct cjob *j = cj_find(a->c, old[i]->name);
		if (j && !j->gone && j->adopt.on) let_go(j, "the job was deleted");
		cand_free(old[i++]);
	}
	free(old);
	a->v = v;
	a->n = n;
}

void ca_session(coord_t *c)
{
	struct adopt *a = c->adopt;
	if (!a) return;
	zkc_keep_arm(a->w_root);
	for (size_t i = 0; i < a->n; i++) cand_look(a->v[i], 0);
}

static void adopt_free(struct adopt *a)
{
	if (!a) return;
	zkc_keep_free(a->w_root);
	for (size_t i = 0; i < a->n; i++) cand_free(a->v[i]);
	free(a->v);
	strv_free(a->labels, a->nlabels);
	strv_free(a->allowed, a->nallowed);
	free(a);
}

int ca_set(coord_t *c, const conf_t *conf)
{
	const conf_supervisor_t *s = &conf->supervisor;
	struct adopt *a = c->adopt;
	if (!s->n_labels) {
		if (!a) return 0;
		for (size_t i = 0; i < c->n; i++)
			if (!c->jobs[i]->gone && c->jobs[i]->adopt.on) let_go(c->jobs[i], "supervisor.labels is not set any more");
		adopt_free(a);
		c->adopt = NULL;
		return 0;
	}
	char **labels, **allowed;
	size_t nl, na;
	if (strv_copy(&labels, &nl, s->labels, s->n_labels) < 0) return -1;
	if (strv_copy(&allowed, &na, s->allowed_commands, s->n_allowed_commands) < 0) {
		strv_free(labels, nl);
		return -1;
	}
	if (!a) {
		if (!(a = calloc(1, sizeof *a)) || !(a->w_root = zkc_keep_new(c->z, ZKC_KEEP_CHILDREN, "", ZKC_NO_ITEM,
		                                                               root_listed, a))) {
			free(a);
			strv_free(labels, nl);
			strv_free(allowed, na);
			return -1;
		}
		a->c = c;
		c->adopt = a;
		if (c->connected) zkc_keep_arm(a->w_root);
	}
	strv_free(a->labels, a->nlabels);
	strv_free(a->allowed, a->nallowed);
	a->labels = labels;
	a->nlabels = nl;
	a->allowed = allowed;
	a->nallowed = na;
	/* a reload: the verdicts again, and every candidate looked at again (labels may differ) */
	for (size_t i = 0; i < c->n; i++)
		if (!c->jobs[i]->gone && c->jobs[i]->adopt.on) ca_verdict(c->jobs[i]);
	for (size_t i = 0; c->connected && i < a->n; i++) cand_look(a->v[i], 1);
	return 0;
}

void ca_free(coord_t *c)
{
	adopt_free(c->adopt);
	c->adopt = NULL;
}
