/* supervisor/coord/coord_config.c: the config node in force, and its watch.
 *
 * The stored config node is the job's config (unless overwrite: true, the file's replaces it at
 * registration). It is watched: an operator's change (zkCli, ElasticJob's console) takes effect at
 * once, as in ElasticJob: a cron or time zone change reschedules, a shardingTotalCount (or
 * strategy) change reshards at the next fire, failover: false clears the failover nodes, and the
 * rest applies from the next fire. The node is taken key by key as ElasticJob takes it
 * (conf/conf_take.c): a node ElasticJob cannot load (an unknown key, a wrong type) or whose type
 * cannot run here is refused, and the job logs its path and the problem and goes on with the
 * config it had; a key ElasticJob fails on only when it uses it (a cron Quartz refuses, an unknown
 * strategy, malformed item parameters) is logged at ERROR and keeps its value in force while the
 * rest of the node is taken; what ElasticJob ignores is ignored with a WARN. A node written with
 * ejob's old strategy names is written back with ElasticJob's (which fails on the old ones). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord/coord_int.h"

static void full_path(const struct cjob *j, char *buf, size_t sz)
{
	snprintf(buf, sz, "/%s/%s/config", j->c->ns, j->name);
}

/* failover turned off: no item waits for a taker any more (ElasticJob's removeFailoverInfo) */
static void items_listed(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK) return;
	char p[CJ_PATH_MAX];
	for (int k = 0; k < r->nchildren; k++)
		zkc_delete(j->c->z, cj_path(j, p, "/leader/failover/items/%s", r->children[k]), -1, NULL, NULL);
}

static void clear_failover(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	uint32_t total = (uint32_t)cj_conf(j)->sharding_total_count;
	log_info("job %s: failover is off: clearing the failover queue and the items' failover nodes", j->name);
	zkc_children(j->c->z, cj_path(j, p, "/leader/failover/items"), NULL, NULL, items_listed, j);
	for (uint32_t i = 0; i < total; i++) {
		zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failover", i), -1, NULL, NULL);
		zkc_delete(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/failovering", i), -1, NULL, NULL);
	}
}

void cj_root_type(struct cjob *j, const char *data, int len)
{
	size_t n = data && len > 0 ? (size_t)len : 0;
	if (n >= sizeof j->cfg.root_type) n = sizeof j->cfg.root_type - 1;
	memcpy(j->cfg.root_type, data ? data : "", n);
	j->cfg.root_type[n] = '\0';
}

/* The node's problems (each diag: warnings at WARN, the errors of a key at ERROR), once per
 * content; then whether any is an error of a key. */
static void say_diags(struct cjob *j, const conf_diags_t *d, const void *data, size_t len, int taken)
{
	uint64_t h = cj_hash(data, len) ^ (uint64_t)taken;
	if (h == j->cfg.said) return;
	j->cfg.said = h;
	for (size_t k = 0; k < conf_diags_count(d); k++) {
		const conf_diag_t *g = conf_diags_get(d, k);
		if (g->level == CONF_DIAG_WARN) log_warn("job %s: %s", j->name, g->text);
		else if (g->level == CONF_DIAG_KEY && taken)
			log_error("job %s: %s; the rest of the node is taken", j->name, g->text);
	}
}

/* The node holds ejob's old name of a strategy (conf_job_t.strategy.alias), on which
 * ElasticJob fails at every resharding: write it back with ElasticJob's, only over the version
 * read (a change made meanwhile wins, and its own read comes back here). */
static void fixed_back(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) return;
	if (r->rc == ZOK) log_info("job %s: the config node's jobShardingStrategyType is written back as %s", j->name,
	                           conf_strategy_name(cj_conf(j)->strategy.effective));
	else if (r->rc != ZBADVERSION && r->rc != ZNONODE)
		log_warn("job %s: writing the config node's strategy back failed: %s", j->name, zerror(r->rc));
}

static void fix_strategy(struct cjob *j, const void *data, size_t len, int version)
{
	size_t n;
	char *fixed = conf_node_fix_strategy(data, len, &n);
	char p[CJ_PATH_MAX];
	if (!fixed) {
		log_warn("job %s: the config node's jobShardingStrategyType is an old ejob name; write ElasticJob's (ejob "
		         "could not rewrite this node's form itself)", j->name);
		return;
	}
	zkc_set(j->c->z, cj_path(j, p, "/config"), fixed, (int)n, version, fixed_back, j);
	free(fixed);
}

int cj_take_node(struct cjob *j, const void *data, size_t len, int watched, int version)
{
	char path[CJ_PATH_MAX + 64], why[600];
	full_path(j, path, sizeof path);
	const conf_job_t *old = cj_conf(j);
	conf_diags_t *d = NULL;
	/* the checks ejobctl config set|edit apply too (conf/conf_take.c) */
	conf_job_t *cj = conf_node_take(data, len, path, j->name, j->cfg.root_type, old, why, sizeof why, &d);
	say_diags(j, d, data, len, cj != NULL);
	conf_diags_free(d);
	const char *bad = cj ? NULL : why;
	if (bad) {
		log_error("job %s: the config node %s is not valid: %s; going on with the config in force (%s%s%s, %d "
		          "items) until it is fixed", j->name, path, bad, old->cron ? "cron '" : "one-off",
		          old->cron ? old->cron : "", old->cron ? "'" : "", old->sharding_total_count);
		conf_job_free(cj);
		return -1;
	}
	if (cj->strategy.alias && version >= 0) fix_strategy(j, data, len, version);
	if (conf_job_equal(cj, old)) {
		/* what is in force already (the file's, when the node says what the file says: kept once,
		 * not twice; a reload that changes the file pins it first, coord_set_jobs) */
		conf_job_free(cj);
		return 0;
	}
	const char *keys[8];
	size_t nk = conf_job_diff(j->local ? j->local : old, cj, keys, 8);
	char list[300] = "";
	nk = cj_keys_list(keys, nk, list, sizeof list);
	if (!watched && nk && j->local)
		log_warn("job %s: the config node %s is in force; the file's %s %s not (overwrite: false: set overwrite: true "
		         "to publish the file, or change the node)", j->name, path, list, nk == 1 ? "is" : "are");
	else if (j->local && j->local->overwrite && nk)
		log_info("job %s: the config node %s changed (by an operator or another instance); it is in force here, and "
		         "this file's %s (overwrite: true) is published again at the next start or reload that changes it",
		         j->name, path, list);
	else
		log_info("job %s: the config node %s changed", j->name, path);
	int reshard = cj->sharding_total_count != old->sharding_total_count || cj->strategy.effective != old->strategy.effective;
	int fo_off = old->failover && !cj->failover, fo_changed = old->failover != cj->failover;
	if (reshard && watched)
		log_info("job %s: shardingTotalCount %d (was %d), %s: resharding at the next fire", j->name,
		         cj->sharding_total_count, old->sharding_total_count, conf_strategy_name(cj->strategy.effective));
	conf_unacted_t u[CONF_UNACTED_MAX];
	size_t nu = conf_job_unacted(cj, u);
	for (size_t k = 0; k < nu; k++) log_warn("%s: %s: %s", path, u[k].key, u[k].text);
	/* the scheduler takes the new config before the old one goes */
	if (!j->gone) j->c->h.job_conf(j->c->arg, j->name, cj, j);
	j->c->flow_dirty = 1;       /* which jobs are roots: coord_flow.c */
	cj_flow_sync(j);
	int at_fire = cj_disabled_at_fire(j);
	if (j->cfg.node) conf_job_free(j->cfg.node);
	j->cfg.node = cj;
	cj_due(j->c, 0);            /* maxTimeDiffSeconds or reconcileIntervalMinutes may be new (cj_checks) */
	if (j->adopt.on) ca_verdict(j);
	/* monitorExecution, beforeAll or afterAll changed who checks the items' disabled nodes: the
	 * owned items' watches as the new config needs them */
	if (at_fire != cj_disabled_at_fire(j) && cj_registered(j)) cj_arm_later(j, CJ_ARM_ITEMS);
	if (!watched) return 0;
	char p[CJ_PATH_MAX];
	/* any instance may raise the flag, as in ElasticJob */
	if (reshard) zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
	if (fo_off && j->lead.leader) clear_failover(j);
	if (fo_changed) cf_scan(j);     /* the queue is watched while failover is on */
	return 0;
}

/* The keys of conf_job_diff that an operator cares about (overwrite is an instruction to the
 * file's own supervisor, not part of the job), joined with commas into buf: how many. */
size_t cj_keys_list(const char **keys, size_t n, char *buf, size_t sz)
{
	size_t k = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && i < 8; i++) {
		if (!strcmp(keys[i], "overwrite")) continue;
		snprintf(buf + strlen(buf), sz - strlen(buf), "%s%s", k ? ", " : "", keys[i]);
		k++;
	}
	if (n > 8) snprintf(buf + strlen(buf), sz - strlen(buf), ", ...");
	return k + (n > 8 ? n - 8 : 0);
}

/* ---- the watch ------------------------------------------------------------------------------------ */

static void config_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) return;
	if (r->rc == ZOK) {
		size_t len = (size_t)(r->len > 0 ? r->len : 0);
		/* our own write of the file's config, which is in force: nothing new (no parse) */
		if (j->cfg.own && !j->cfg.node && cj_hash(r->data, len) == j->cfg.own) return;
		cj_take_node(j, r->data, len, 1, r->stat.version);
		return;
	}
	if (r->rc != ZNONODE) return;
	/* deleted: the kept watch waits for it to come back */
	char path[CJ_PATH_MAX + 64];
	full_path(j, path, sizeof path);
	log_warn("job %s: the config node %s was deleted; going on with the config in force until it is written again",
	         j->name, path);
}

void cj_watch_config(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	/* an adopted job's node is watched by its candidate (coord_adopt.c), which takes its changes:
	 * a second watch on the same path would read the node twice at each change */
	if (j->adopt.on) return;
	zkc_keep_arm(cj_keep(j, &j->cfg.watch, ZKC_KEEP_DATA, cj_path(j, p, "/config"), ZKC_NO_ITEM, config_known));
}

/* ---- the node in force ----------------------------------------------------------------------------- */

void cj_node_drop(struct cjob *j)
{
	if (j->cfg.node) conf_job_free(j->cfg.node);
	j->cfg.node = NULL;
}

const conf_job_t *cj_node_pin(struct cjob *j)
{
	if (!j->cfg.node && j->local) {
		size_t len;
		char *y = conf_node_emit(j->local, &len);
		j->cfg.node = y ? conf_node_parse(y, len, j->name, NULL) : NULL;
		free(y);
	}
	return j->cfg.node;
}

void cj_config_unwatch(struct cjob *j)
{
	zkc_keep_free(j->cfg.watch);
	j->cfg.watch = NULL;
}

void cj_config_free(struct cjob *j)
{
	cj_config_unwatch(j);
	cj_node_drop(j);
}
