/* supervisor/coord_shard.c: the leader shards a job: the enabled instances, the strategy, and one
 * fenced multi that writes every sharding/{i}/instance and the sharding node (its mzxid is the epoch)
 * and removes the resharding flag. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supervisor/coord_int.h"
#include "supervisor/shard.h"
#include "supervisor/sup.h"
#include "supervisor/zkc.h"

/* ---- sharding (the leader) ------------------------------------------------------------------------ */

struct shardop {
	struct cjob *j;
	uint64_t session;
	int left, failed;
	int sleft;                  /* servers/{ip} reads outstanding */
	char **ids;
	int nids;
	char **servers_disabled;
	int ndis;
};

struct commit {
	struct cjob *j;
	uint32_t total;
	char **owner;               /* [total] */
	int sharding_op;            /* index of the set of the sharding node */
	int fence;                  /* the fence it was written under */
};

static void sharded(void *arg, const struct zkc_res *r)
{
	struct commit *cm = arg;
	struct cjob *j = cm->j;
	int fence = cm->fence;
	j->sharding = 0;
	if (r->rc == ZOK && cj_live(j, r->session) && cm->sharding_op < r->nops) {
		j->necessary = 0;
		cj_install(j, cm->owner, cm->total, (uint64_t)r->op_stat[cm->sharding_op].mzxid);
		cm->owner = NULL;
	}
	cj_free_owner(cm->owner, cm->total);
	free(cm);
	if (!cj_live(j, r->session)) return;
	if (r->rc != ZOK) {
		int k = 0;
		while (k < r->nops && r->op_rc[k] == ZOK) k++;
		log_warn("job %s: sharding failed: %s (op %d)%s", j->name, zerror(r->rc), k,
		         k == 0 && r->rc == ZBADVERSION ? ": this instance is no longer the leader" : "");
		/* deposed, unless it was an older term's fence and we lead again since */
		if (k == 0 && r->rc == ZBADVERSION && fence == j->fence) {
			j->leader = 0;
			cj_elect(j);
		} else if (j->leader && j->fire && j->fire->state == F_WAIT) {
			cx_continue(j);     /* still the leader: a waiting fire shards again */
		}
		return;
	}
}

static void shard_commit(struct cjob *j, char **ids, int n)
{
	const conf_job_t *cj = cj_conf(j);
	uint32_t total = (uint32_t)cj->sharding_total_count;
	uint32_t *owner = calloc(total ? total : 1, sizeof *owner);
	if (!owner) {
		j->sharding = 0;
		return;
	}
	if (shard_assign(cj->sharding_strategy, j->name, (const char *const *)ids, (size_t)n, total, owner) < 0) {
		log_error("job %s: cannot shard %" PRIu32 " items over %d instances with %s: %s", j->name, total, n,
		          conf_strategy_name(cj->sharding_strategy),
		          errno == EDOM ? "ElasticJob's ROUND_ROBIN_BY_NAME fails for this job name with this many instances; "
		                          "choose another jobShardingStrategyType" : strerror(errno));
		free(owner);
		j->sharding = 0;
		return;
	}
	char p[PATH_MAX_];
	struct commit *cm = calloc(1, sizeof *cm);
	if (!cm || !(cm->owner = calloc(total ? total : 1, sizeof *cm->owner))) {
		free(cm);
		free(owner);
		j->sharding = 0;
		return;
	}
	cm->j = j;
	cm->total = total;
	zkc_multi_t *m = zkc_multi_new();
	cm->fence = j->fence;
	zkc_multi_check(m, cj_path(j, p, "/leader/election"), j->fence);
	for (uint32_t i = 0; i < total; i++) {
		const char *id = ids[owner[i]];
		cm->owner[i] = strdup(id);
		zkc_multi_set(m, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), id, (int)strlen(id), -1);
	}
	cm->sharding_op = zkc_multi_count(m);
	zkc_multi_set(m, cj_path(j, p, "/sharding"), "", 0, -1);     /* its mzxid is the epoch */
	if (j->necessary) zkc_multi_delete(m, cj_path(j, p, "/leader/sharding/necessary"), -1);
	zkc_multi_delete(m, cj_path(j, p, "/leader/sharding/processing"), -1);
	free(owner);
	if (zkc_multi_commit(j->c->z, m, sharded, cm) != ZOK) {
		cj_free_owner(cm->owner, cm->total);
		free(cm);
		j->sharding = 0;
	}
}

static void shard_nodes_made(void *arg, const struct zkc_res *r)
{
	struct shardop *o = arg;
	if (r->rc != ZOK && r->rc != ZNODEEXISTS) {
		if (!o->failed) log_warn("job %s: sharding: creating %s: %s", o->j->name, r->path, zerror(r->rc));
		o->failed = 1;
	}
	if (--o->left) return;
	struct cjob *j = o->j;
	if (!o->failed && cj_live(j, o->session)) shard_commit(j, o->ids, o->nids);
	else j->sharding = 0;
	for (int i = 0; i < o->nids; i++) free(o->ids[i]);
	free(o->ids);
	free(o);
}

/* instances listed: create processing and any missing sharding/{i}/instance, then commit */
static void shard_make_nodes(struct shardop *o)
{
	struct cjob *j = o->j;
	if (o->nids == 0) {
		log_warn("job %s: no enabled instance to shard over", j->name);
		free(o->ids);
		free(o);
		j->sharding = 0;
		return;
	}
	uint32_t total = (uint32_t)cj_conf(j)->sharding_total_count;
	char p[PATH_MAX_];
	o->left = 1;
	if (zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/processing"), "", 0, ZOO_EPHEMERAL, shard_nodes_made, o) == ZOK)
		o->left++;
	for (uint32_t i = 0; i < total; i++) {
		if (zkc_create(j->c->z, cj_path(j, p, "/sharding/%" PRIu32, i), "", 0, 0, shard_nodes_made, o) == ZOK) o->left++;
		if (zkc_create(j->c->z, cj_path(j, p, "/sharding/%" PRIu32 "/instance", i), "", 0, 0, shard_nodes_made, o) == ZOK)
			o->left++;
	}
	struct zkc_res go = { .rc = ZOK, .path = "" };
	shard_nodes_made(o, &go);
}

/* servers/{ip} of each instance: DISABLED ones are left out of the sharding */
static void shard_server(void *arg, const struct zkc_res *r)
{
	struct shardop *o = arg;
	if (r->rc == ZOK && r->data && !strcmp(r->data, "DISABLED")) {
		const char *ip = strrchr(r->path, '/');
		ip = ip ? ip + 1 : "";
		for (int k = 0; k < o->nids; k++) {
			const char *sep = strstr(o->ids[k], "@-@");
			size_t n = sep ? (size_t)(sep - o->ids[k]) : strlen(o->ids[k]);
			if (strlen(ip) == n && !strncmp(o->ids[k], ip, n)) o->ids[k][0] = '\0';   /* mark */
		}
	}
	if (--o->sleft) return;
	struct cjob *j = o->j;
	int k = 0;
	for (int i = 0; i < o->nids; i++) {
		if (o->ids[i][0]) o->ids[k++] = o->ids[i];
		else free(o->ids[i]);
	}
	o->nids = k;
	if (!cj_live(j, o->session)) {
		for (int i = 0; i < o->nids; i++) free(o->ids[i]);
		free(o->ids);
		free(o);
		j->sharding = 0;
		return;
	}
	shard_make_nodes(o);
}

static void shard_instances(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK) {
		j->sharding = 0;
		return;
	}
	struct shardop *o = calloc(1, sizeof *o);
	if (!o || !(o->ids = calloc((size_t)r->nchildren + 1, sizeof *o->ids))) {
		free(o);
		j->sharding = 0;
		return;
	}
	o->j = j;
	o->session = r->session;
	for (int i = 0; i < r->nchildren; i++) {
		if (cj_id_ok(r->children[i])) {
			o->ids[o->nids++] = strdup(r->children[i]);
			continue;
		}
		char show[64];
		log_warn("job %s: /%s/%s/instances/%s is not an instance id ({ip}@-@{pid}); left out of the sharding", j->name,
		         j->c->s->conf->reg_center.namespace, j->name,
		         cj_show(r->children[i], (int)strlen(r->children[i]), show, sizeof show));
	}
	o->sleft = 1;
	char p[PATH_MAX_];
	for (int i = 0; i < o->nids; i++) {
		const char *sep = strstr(o->ids[i], "@-@");
		int n = sep ? (int)(sep - o->ids[i]) : (int)strlen(o->ids[i]);
		if (zkc_get(j->c->z, cj_path(j, p, "/servers/%.*s", n, o->ids[i]), NULL, NULL, shard_server, o) == ZOK)
			o->sleft++;
	}
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	shard_server(o, &go);
}

void cj_shard_now(struct cjob *j)
{
	if (j->sharding) return;
	char p[PATH_MAX_];
	j->sharding = 1;
	if (zkc_children(j->c->z, cj_path(j, p, "/instances"), NULL, NULL, shard_instances, j) != ZOK) j->sharding = 0;
}
