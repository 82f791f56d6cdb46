/* supervisor/coord.c: registration, election, sharding and execution nodes (see coord.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/frame.h"
#include "ipc/shm.h"
#include "ipc/wait.h"
#include "supervisor/coord.h"
#include "supervisor/fire.h"
#include "supervisor/shard.h"
#include "supervisor/sup.h"
#include "supervisor/zkc.h"

#define PATH_MAX_ 600

struct cfire;

struct cjob {
	coord_t *c;
	char *name;
	const conf_job_t *local;    /* from the file (valid until the next coord_set_jobs) */
	conf_job_t *node;           /* the stored config node in force, or NULL: local */
	int gone;                   /* removed from the config */
	uint64_t reg_session;       /* registered in this session (0: not) */
	int registering;
	int leader;
	int fence;                  /* leader: version of leader/election after our write */
	int necessary;              /* leader/sharding/necessary exists */
	int sharding;               /* the leader is sharding */
	/* the assignment in force */
	uint64_t epoch;             /* mzxid of the sharding node */
	uint32_t total;
	char **owner;               /* [total] instance ids */
	int have;                   /* owner[] loaded for epoch */
	int loading;
	uint8_t *completed;         /* [total]: sharding/i/completed exists (items we own) */
	uint8_t *disabled;          /* [total]: sharding/i/disabled exists (items we own) */
	int states_loading;         /* reading the nodes under our items */
	int w_sharding, w_necessary, w_leader, w_instances;   /* watch armed (this session) */
	struct cfire *fire;         /* the fire in progress, or NULL */
	struct cfire *ffires;       /* failover runs in progress (list) */
	char **live;                /* leader: the instances at the last listing, sorted */
	int nlive;
	uint8_t *taking;            /* [total]: a failover item being taken here */
	uint32_t taking_total;
	int w_failover;             /* watch on leader/failover/items armed */
};

struct cfire {
	struct cjob *j;
	sched_job_t *handle;
	uint64_t fire_ms;
	int catch_up;
	int state;                  /* F_WAIT (for sharding), F_START (running nodes), F_RUN */
	int monitor;                /* monitorExecution when it started */
	uint32_t n, ended, flushed, ok;
	uint32_t *items;
	uint8_t *done;              /* [total]: 1 ended ok, 2 ended otherwise */
	uint32_t *pending;          /* ended items whose completion is not written yet */
	uint32_t npending;
	int flushing;
	uint64_t started_ns, wait_until_ns;
	int failover;               /* a run of items taken over from a crashed instance */
	struct cfire *next;         /* failover runs: the job's list */
};

enum { F_WAIT = 1, F_START, F_RUN };

struct coord {
	struct sup *s;
	zkc_t *z;
	struct cjob **jobs;
	size_t n, cap;
	int connected;
	int closing;                /* coord_free: answers still come (ZCLOSING); tell no one */
	uint64_t shm_deadline;      /* the lease deadline last written to shared memory */
	int lease_stopped;          /* running items were stopped for the lease */
	ev_idle flush_w;
	struct log_cause cause;
};

static const conf_job_t *eff(const struct cjob *j)
{
	return j->node ? j->node : j->local;
}

static const char *jp(const struct cjob *j, char *buf, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static const char *jp(const struct cjob *j, char *buf, const char *fmt, ...)
{
	int k = snprintf(buf, PATH_MAX_, "/%s", j->name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + k, PATH_MAX_ - (size_t)k, fmt, ap);
	va_end(ap);
	return buf;
}

static struct cjob *find_job(coord_t *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->jobs[i]->name, name)) return c->jobs[i];
	return NULL;
}

static int live(const struct cjob *j, uint64_t session)
{
	return !j->gone && session == zkc_session(j->c->z) && zkc_state(j->c->z) == ZKC_CONNECTED;
}

/* ---- a group of requests sent together ---------------------------------------------------------- */

struct group {
	struct cjob *j;
	uint64_t session;
	int left, failed;
	void (*next)(struct cjob *j);
	const char *what;
};

static void group_cb(void *arg, const struct zkc_res *r)
{
	struct group *g = arg;
	if (r->rc != ZOK && r->rc != ZNODEEXISTS && !g->failed) {
		g->failed = r->rc;
		log_warn("job %s: %s: %s: %s", g->j->name, g->what, r->path, zerror(r->rc));
	}
	if (--g->left) return;
	struct cjob *j = g->j;
	if (!g->failed && live(j, g->session)) g->next(j);
	else j->registering = 0;            /* the next CONNECTED starts over */
	free(g);
}

static struct group *group_new(struct cjob *j, const char *what, void (*next)(struct cjob *))
{
	struct group *g = calloc(1, sizeof *g);
	if (!g) return NULL;
	g->j = j;
	g->session = zkc_session(j->c->z);
	g->next = next;
	g->what = what;
	g->left = 1;                        /* held until group_go */
	return g;
}

static void group_create(struct group *g, const char *path, const char *data, int flags)
{
	if (zkc_create(g->j->c->z, path, data, data ? (int)strlen(data) : 0, flags, group_cb, g) == ZOK) g->left++;
	else g->failed = ZCONNECTIONLOSS;
}

static void group_go(struct group *g)
{
	struct zkc_res r = { .rc = ZOK, .path = "" };
	group_cb(g, &r);
}

/* ---- registration ------------------------------------------------------------------------------- */

static void elect(struct cjob *j);
static void load_assignment(struct cjob *j);
static void watch_necessary(struct cjob *j);
static void failover_scan(struct cjob *j);

static const char *type_string(const conf_job_t *cj)
{
	switch (cj->type) {
	case CONF_JOB_SCRIPT: return "SCRIPT";
	case CONF_JOB_NATIVE: return "NATIVE";
	case CONF_JOB_EXTERNAL: return "EXTERNAL";
	default: return "";
	}
}

static void reg_done(struct cjob *j)
{
	j->registering = 0;
	j->reg_session = zkc_session(j->c->z);
	log_info("job %s: registered as %s (%s)", j->name, j->c->s->instance_id,
	         eff(j)->disabled ? "server DISABLED" : "server ENABLED");
	watch_necessary(j);
	load_assignment(j);
	elect(j);
	failover_scan(j);
}

/* servers/{ip}, instances/{id}, and the resharding flag, as ElasticJob's startup writes them */
static void reg_presence(struct cjob *j)
{
	char p[PATH_MAX_], data[256];
	struct sup *s = j->c->s;
	struct group *g = group_new(j, "registering", reg_done);
	if (!g) return;
	snprintf(data, sizeof data, "jobInstanceId: %s\nserverIp: %s\n", s->instance_id, s->ip);
	group_create(g, jp(j, p, "/instances/%s", s->instance_id), data, ZOO_EPHEMERAL);
	group_create(g, jp(j, p, "/leader/sharding/necessary"), "", 0);
	const char *st = eff(j)->disabled ? "DISABLED" : "ENABLED";
	/* the server node is rewritten at every start (ElasticJob does the same) */
	if (zkc_set(j->c->z, jp(j, p, "/servers/%s", s->ip), st, (int)strlen(st), -1, group_cb, g) == ZOK) g->left++;
	group_go(g);
}

/* servers/{ip} may not exist yet: create it, then reg_presence sets it */
static void reg_server(struct cjob *j)
{
	char p[PATH_MAX_];
	struct group *g = group_new(j, "registering", reg_presence);
	if (!g) return;
	group_create(g, jp(j, p, "/servers/%s", j->c->s->ip), "ENABLED", 0);
	group_go(g);
}

static void config_written(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (r->rc != ZOK) {
		log_warn("job %s: writing %s: %s", j->name, r->path, zerror(r->rc));
		j->registering = 0;
		return;
	}
	if (live(j, r->session)) reg_server(j);
}

static void config_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!live(j, r->session)) {
		j->registering = 0;
		return;
	}
	char p[PATH_MAX_];
	jp(j, p, "/config");
	if (r->rc == ZOK && !j->local->overwrite) {
		conf_diags_t *d = NULL;
		conf_job_t *cj = conf_node_parse(r->data ? r->data : "", (size_t)r->len, p, &d);
		if (!cj) {
			const conf_diag_t *dg = d && conf_diags_count(d) ? conf_diags_get(d, 0) : NULL;
			log_error("job %s: the stored config %s is not valid (%s); using the config file's until it is fixed",
			          j->name, p, dg ? dg->text : "unreadable");
		} else {
			if (j->node) conf_job_free(j->node);
			j->node = cj;
			if (!conf_job_equal(cj, j->local))
				log_info("job %s: using the config stored in %s (it differs from the file; overwrite: true "
				         "would replace it)", j->name, p);
		}
		conf_diags_free(d);
		reg_server(j);
		return;
	}
	if (r->rc != ZOK && r->rc != ZNONODE) {
		log_warn("job %s: reading %s: %s", j->name, p, zerror(r->rc));
		j->registering = 0;
		return;
	}
	size_t len;
	char *y = conf_node_emit(j->local, &len);
	if (!y) {
		j->registering = 0;
		return;
	}
	if (j->node) conf_job_free(j->node);
	j->node = NULL;
	int rc = r->rc == ZNONODE ? zkc_create(j->c->z, p, y, (int)len, 0, config_written, j)
	                          : zkc_set(j->c->z, p, y, (int)len, -1, config_written, j);
	free(y);
	if (rc != ZOK) j->registering = 0;
}

static void reg_config(struct cjob *j)
{
	char p[PATH_MAX_];
	if (zkc_get(j->c->z, jp(j, p, "/config"), NULL, NULL, config_read, j) != ZOK) j->registering = 0;
}

static void reg_start(struct cjob *j)
{
	if (j->registering || j->gone) return;
	j->registering = 1;
	j->leader = 0;
	char p[PATH_MAX_];
	struct group *g = group_new(j, "creating its nodes", reg_config);
	if (!g) return;
	static const char *const dirs[] = { "/servers", "/instances", "/sharding", "/leader", "/leader/election",
	                                    "/leader/sharding", "/leader/failover", "/leader/failover/items" };
	group_create(g, "", "", 0);
	group_create(g, jp(j, p, "%s", ""), type_string(j->local), 0);
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) group_create(g, jp(j, p, "%s", dirs[i]), "", 0);
	group_go(g);
}

/* ---- election ------------------------------------------------------------------------------------ */

static void leader_watch(void *arg, int type, const char *path);
static void leader_watch_instances(struct cjob *j);

static void elected(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!live(j, r->session)) return;
	if (r->rc == ZOK) {
		j->leader = 1;
		j->fence = r->nops > 1 ? r->op_stat[1].version : -1;
		/* a new term: the first listing of instances looks for items orphaned before it */
		for (int k = 0; k < j->nlive; k++) free(j->live[k]);
		free(j->live);
		j->live = NULL;
		j->nlive = 0;
		j->w_instances = 0;
		log_info("job %s: this instance is the leader", j->name);
		leader_watch_instances(j);
		return;
	}
	/* someone else won (ZNODEEXISTS at the first op): follow, watching their node */
	elect(j);
}

static void leader_exists(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!live(j, r->session)) return;
	if (r->rc == ZOK) {
		/* a leader exists (maybe us: our own create fires the creation watch); the watch
		 * tells when it goes */
		if ((int64_t)r->stat.ephemeralOwner != zkc_session_id(j->c->z)) j->leader = 0;
		return;
	}
	if (r->rc != ZNONODE) return;
	if (eff(j)->disabled) return;       /* a disabled server does not lead */
	char p[PATH_MAX_], q[PATH_MAX_];
	const char *id = j->c->s->instance_id;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, jp(j, p, "/leader/election/instance"), id, (int)strlen(id), ZOO_EPHEMERAL);
	zkc_multi_set(m, jp(j, q, "/leader/election"), id, (int)strlen(id), -1);
	zkc_multi_commit(j->c->z, m, elected, j);
}

static void leader_watch(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)path;
	j->w_leader = 0;
	if (j->gone) return;
	if (type == ZOO_DELETED_EVENT) {
		if (j->leader) log_warn("job %s: this instance's leader node went away; electing again", j->name);
		j->leader = 0;
	}
	elect(j);
}

static void elect(struct cjob *j)
{
	char p[PATH_MAX_];
	if (zkc_state(j->c->z) != ZKC_CONNECTED) return;
	int w = !j->w_leader;
	if (zkc_exists(j->c->z, jp(j, p, "/leader/election/instance"), w ? leader_watch : NULL, j, leader_exists, j) == ZOK &&
	    w)
		j->w_leader = 1;
}

/* ---- the leader keeps the resharding flag ------------------------------------------------------- */

static void set_necessary(struct cjob *j, const char *why)
{
	if (!j->leader) return;
	char p[PATH_MAX_], q[PATH_MAX_];
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_check(m, jp(j, q, "/leader/election"), j->fence);
	zkc_multi_create(m, jp(j, p, "/leader/sharding/necessary"), "", 0, 0);
	if (zkc_multi_commit(j->c->z, m, NULL, NULL) == ZOK) log_info("job %s: resharding at the next fire: %s", j->name, why);
}

static void instances_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	(void)path;
	j->w_instances = 0;
	if (j->gone || !j->leader) return;
	set_necessary(j, "the instances changed");
	leader_watch_instances(j);
}

static void leader_instances(struct cjob *j, const struct zkc_res *r);

static void instances_listed(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!live(j, r->session) || r->rc != ZOK || !j->leader) return;
	leader_instances(j, r);
}

static void leader_watch_instances(struct cjob *j)
{
	char p[PATH_MAX_];
	if (j->w_instances) return;
	if (zkc_children(j->c->z, jp(j, p, "/instances"), instances_changed, j, instances_listed, j) == ZOK)
		j->w_instances = 1;
}

/* ---- the resharding flag, for everyone ------------------------------------------------------------ */

static void fire_continue(struct cjob *j);
static void install(struct cjob *j, char **owner, uint32_t total, uint64_t epoch);

static void necessary_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	(void)path;
	j->w_necessary = 0;
	if (!j->gone) watch_necessary(j);
}

static void necessary_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!live(j, r->session)) return;
	int was = j->necessary;
	j->necessary = r->rc == ZOK;
	/* gone: the leader's multi that removed it also wrote the new assignment; read it before a
	 * waiting fire goes on with the old one */
	if (was && !j->necessary) load_assignment(j);
	if (j->fire && j->fire->state == F_WAIT) fire_continue(j);
}

static void watch_necessary(struct cjob *j)
{
	char p[PATH_MAX_];
	int w = !j->w_necessary;
	if (zkc_exists(j->c->z, jp(j, p, "/leader/sharding/necessary"), w ? necessary_changed : NULL, j, necessary_known,
	               j) == ZOK && w)
		j->w_necessary = 1;
}

/* ---- the assignment: sharding/{i}/instance under the sharding node's epoch ----------------------- */

struct load {
	struct cjob *j;
	uint64_t session, epoch;
	uint32_t total, left;
	char **owner;
	int failed;
};

static void free_owner(char **o, uint32_t n)
{
	if (!o) return;
	for (uint32_t i = 0; i < n; i++) free(o[i]);
	free(o);
}

static void owner_read(void *arg, const struct zkc_res *r)
{
	struct load *l = arg;
	unsigned i = 0;
	const char *q = strstr(r->path, "/sharding/");
	if (q) i = (unsigned)strtoul(q + 10, NULL, 10);
	if (r->rc == ZOK && i < l->total) l->owner[i] = strdup(r->data ? r->data : "");
	else if (r->rc != ZNONODE) l->failed = 1;
	if (--l->left) return;
	struct cjob *j = l->j;
	if (j->loading > 0) j->loading--;
	if (!l->failed && live(j, l->session)) {
		install(j, l->owner, l->total, l->epoch);
		l->owner = NULL;
	} else if (j->fire && j->fire->state == F_WAIT) {
		fire_continue(j);
	}
	free_owner(l->owner, l->total);
	free(l);
}

/* What is under sharding/{i} of each item we own: completed (so a start deletes it), disabled. */
struct states {
	struct cjob *j;
	uint64_t session, epoch;
	uint32_t left;
};

static void item_state(void *arg, const struct zkc_res *r)
{
	struct states *st = arg;
	struct cjob *j = st->j;
	const char *q = strstr(r->path, "/sharding/");
	unsigned i = q ? (unsigned)strtoul(q + 10, NULL, 10) : 0;
	if (q && r->rc == ZOK && st->epoch == j->epoch && i < j->total) {
		j->completed[i] = 0;
		j->disabled[i] = 0;
		for (int k = 0; k < r->nchildren; k++) {
			if (!strcmp(r->children[k], "completed")) j->completed[i] = 1;
			if (!strcmp(r->children[k], "disabled")) j->disabled[i] = 1;
		}
	}
	if (--st->left) return;
	if (st->epoch == j->epoch) j->states_loading = 0;
	free(st);
	if (j->fire && j->fire->state == F_WAIT) fire_continue(j);
}

static void install(struct cjob *j, char **owner, uint32_t total, uint64_t epoch)
{
	free_owner(j->owner, j->total);
	free(j->completed);
	free(j->disabled);
	j->owner = owner;
	j->total = total;
	j->epoch = epoch;
	j->completed = calloc(total ? total : 1, 1);
	j->disabled = calloc(total ? total : 1, 1);
	j->have = j->completed && j->disabled;
	const char *me = j->c->s->instance_id;
	uint32_t mine = 0;
	for (uint32_t k = 0; k < total; k++) mine += owner[k] && !strcmp(owner[k], me);
	log_info("job %s: assignment of epoch 0x%" PRIx64 ": %" PRIu32 " of %" PRIu32 " items here", j->name, epoch, mine,
	         total);
	struct states *st = calloc(1, sizeof *st);
	if (!st || !j->have) {
		free(st);
		j->have = 0;
		return;
	}
	st->j = j;
	st->epoch = epoch;
	st->left = 1;
	j->states_loading = 1;
	char p[PATH_MAX_];
	for (uint32_t k = 0; k < total; k++)
		if (owner[k] && !strcmp(owner[k], me) &&
		    zkc_children(j->c->z, jp(j, p, "/sharding/%" PRIu32, k), NULL, NULL, item_state, st) == ZOK)
			st->left++;
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	item_state(st, &go);
}

static void sharding_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	(void)path;
	j->w_sharding = 0;
	if (!j->gone) load_assignment(j);
}

static void sharding_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!live(j, r->session)) {
		if (j->loading > 0) j->loading--;
		return;
	}
	uint32_t total = (uint32_t)eff(j)->sharding_total_count;
	if (r->rc != ZOK || r->stat.mzxid == r->stat.czxid || total == 0) {
		/* never sharded (the node only created): nothing assigned yet */
		if (j->loading > 0) j->loading--;
		j->have = 0;
		if (j->fire && j->fire->state == F_WAIT) fire_continue(j);
		return;
	}
	if (j->have && (uint64_t)r->stat.mzxid == j->epoch) {
		if (j->loading > 0) j->loading--;
		if (j->fire && j->fire->state == F_WAIT) fire_continue(j);
		return;
	}
	struct load *l = calloc(1, sizeof *l);
	if (!l || !(l->owner = calloc(total, sizeof *l->owner))) {
		free(l);
		if (j->loading > 0) j->loading--;
		return;
	}
	l->j = j;
	l->session = r->session;
	l->epoch = (uint64_t)r->stat.mzxid;
	l->total = total;
	l->left = total + 1;
	char p[PATH_MAX_];
	for (uint32_t i = 0; i < total; i++)
		if (zkc_get(j->c->z, jp(j, p, "/sharding/%" PRIu32 "/instance", i), NULL, NULL, owner_read, l) != ZOK) {
			l->failed = 1;
			l->left--;
		}
	struct zkc_res done = { .rc = ZNONODE, .path = "" };
	owner_read(l, &done);
}

static void load_assignment(struct cjob *j)
{
	char p[PATH_MAX_];
	int w = !j->w_sharding;
	if (zkc_get(j->c->z, jp(j, p, "/sharding"), w ? sharding_changed : NULL, j, sharding_read, j) == ZOK) {
		j->loading++;
		if (w) j->w_sharding = 1;
	}
}

/* ---- sharding (the leader) ------------------------------------------------------------------------ */

struct shardop {
	struct cjob *j;
	uint64_t session;
	int left, failed;
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
};

static void sharded(void *arg, const struct zkc_res *r)
{
	struct commit *cm = arg;
	struct cjob *j = cm->j;
	j->sharding = 0;
	if (r->rc == ZOK && live(j, r->session) && cm->sharding_op < r->nops) {
		j->necessary = 0;
		install(j, cm->owner, cm->total, (uint64_t)r->op_stat[cm->sharding_op].mzxid);
		cm->owner = NULL;
	}
	free_owner(cm->owner, cm->total);
	free(cm);
	if (!live(j, r->session)) return;
	if (r->rc != ZOK) {
		int k = 0;
		while (k < r->nops && r->op_rc[k] == ZOK) k++;
		log_warn("job %s: sharding failed: %s (op %d)%s", j->name, zerror(r->rc), k,
		         k == 0 && r->rc == ZBADVERSION ? ": this instance is no longer the leader" : "");
		if (k == 0) {
			j->leader = 0;
			elect(j);
		}
		return;
	}
}

static void shard_commit(struct cjob *j, char **ids, int n)
{
	const conf_job_t *cj = eff(j);
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
	zkc_multi_check(m, jp(j, p, "/leader/election"), j->fence);
	for (uint32_t i = 0; i < total; i++) {
		const char *id = ids[owner[i]];
		cm->owner[i] = strdup(id);
		zkc_multi_set(m, jp(j, p, "/sharding/%" PRIu32 "/instance", i), id, (int)strlen(id), -1);
	}
	cm->sharding_op = zkc_multi_count(m);
	zkc_multi_set(m, jp(j, p, "/sharding"), "", 0, -1);     /* its mzxid is the epoch */
	if (j->necessary) zkc_multi_delete(m, jp(j, p, "/leader/sharding/necessary"), -1);
	zkc_multi_delete(m, jp(j, p, "/leader/sharding/processing"), -1);
	free(owner);
	if (zkc_multi_commit(j->c->z, m, sharded, cm) != ZOK) {
		free_owner(cm->owner, cm->total);
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
	if (!o->failed && live(j, o->session)) shard_commit(j, o->ids, o->nids);
	else j->sharding = 0;
	for (int i = 0; i < o->nids; i++) free(o->ids[i]);
	free(o->ids);
	free(o);
}

/* instances listed: create processing and any missing sharding/{i}/instance, then commit */
static void shard_instances(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!live(j, r->session) || r->rc != ZOK) {
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
	/* servers DISABLED are left out (their instances are known by the ip before "@-@") */
	for (int i = 0; i < r->nchildren; i++) o->ids[o->nids++] = strdup(r->children[i]);
	if (o->nids == 0) {
		log_warn("job %s: no instance to shard over", j->name);
		free(o->ids);
		free(o);
		j->sharding = 0;
		return;
	}
	uint32_t total = (uint32_t)eff(j)->sharding_total_count;
	char p[PATH_MAX_];
	o->left = 1;
	if (zkc_create(j->c->z, jp(j, p, "/leader/sharding/processing"), "", 0, ZOO_EPHEMERAL, shard_nodes_made, o) == ZOK)
		o->left++;
	for (uint32_t i = 0; i < total; i++) {
		if (zkc_create(j->c->z, jp(j, p, "/sharding/%" PRIu32, i), "", 0, 0, shard_nodes_made, o) == ZOK) o->left++;
		if (zkc_create(j->c->z, jp(j, p, "/sharding/%" PRIu32 "/instance", i), "", 0, 0, shard_nodes_made, o) == ZOK)
			o->left++;
	}
	struct zkc_res go = { .rc = ZOK, .path = "" };
	shard_nodes_made(o, &go);
}

static void shard_now(struct cjob *j)
{
	if (j->sharding) return;
	char p[PATH_MAX_];
	j->sharding = 1;
	if (zkc_children(j->c->z, jp(j, p, "/instances"), NULL, NULL, shard_instances, j) != ZOK) j->sharding = 0;
}

/* ---- fires ----------------------------------------------------------------------------------------- */

static void fire_end(struct cfire *f)
{
	struct cjob *j = f->j;
	struct sup *s = j->c->s;
	sched_job_t *h = f->handle;
	if (f->n) {
		double secs = (double)(wait_now_ns() - f->started_ns) / 1e9;
		if (f->ok == f->n)
			log_info("job %s: fire %" PRIu64 ": all %" PRIu32 " item%s here succeeded in %.2fs (epoch 0x%" PRIx64 ")",
			         j->name, f->fire_ms, f->n, f->n == 1 ? "" : "s", secs, j->epoch);
		else
			log_warn("job %s: fire %" PRIu64 ": %" PRIu32 " of %" PRIu32 " items here failed (%.2fs)", j->name,
			         f->fire_ms, f->n - f->ok, f->n, secs);
	}
	if (f->failover) {
		for (struct cfire **pp = &j->ffires; *pp; pp = &(*pp)->next)
			if (*pp == f) {
				*pp = f->next;
				break;
			}
	} else {
		j->fire = NULL;
	}
	int fo = f->failover;
	free(f->items);
	free(f->done);
	free(f->pending);
	free(f);
	if (!fo && !j->c->closing) sched_fire_ended(s->sched, h);
}

static void submit_items(struct cfire *f)
{
	struct cjob *j = f->j;
	struct sup *s = j->c->s;
	const conf_job_t *cj = eff(j);
	char *task = fire_task_id(j->name, f->items, f->n, s->instance_id);
	uint32_t kind = fire_kind(cj);
	uint32_t queued = 0;
	for (uint32_t i = 0; task && i < f->n; i++) {
		struct disp_req q = {
			.job = j->name, .kind = kind, .cmd = cj->script_command_line, .lib = cj->native_library,
			.sym = cj->native_symbol, .job_param = cj->job_parameter,
			.item_param = conf_job_item_param(cj, (int)f->items[i]), .task_id = task, .item = f->items[i],
			.total = j->total, .fire_id = f->fire_ms, .epoch = j->epoch, .timeout_s = (uint32_t)cj->timeout_seconds,
			.max_retries = (uint32_t)cj->max_retries, .cookie = (uint64_t)(uintptr_t)f,
		};
		if (!disp_submit(s->disp, &q)) {
			log_error("job %s item %" PRIu32 ": cannot queue it: %s", j->name, f->items[i], strerror(errno));
			break;
		}
		queued++;
	}
	free(task);
	f->n = queued;
	f->state = F_RUN;
	if (!f->n) {
		fire_end(f);
		return;
	}
	log_info("job %s: fire %" PRIu64 ": %" PRIu32 " item%s here, epoch 0x%" PRIx64, j->name, f->fire_ms, f->n,
	         f->n == 1 ? "" : "s", j->epoch);
	disp_kick(s->disp);
}

static void running_written(void *arg, const struct zkc_res *r);

/* one multi: the running node of each item (and away with our old completed nodes) */
static void write_running(struct cfire *f)
{
	struct cjob *j = f->j;
	if (j->gone) {
		f->n = 0;
		fire_end(f);
		return;
	}
	const conf_job_t *cj = eff(j);
	f->monitor = cj->monitor_execution;
	if (!f->monitor) {
		submit_items(f);
		return;
	}
	char p[PATH_MAX_];
	const char *id = j->c->s->instance_id;
	zkc_multi_t *m = zkc_multi_new();
	for (uint32_t i = 0; i < f->n; i++) {
		uint32_t it = f->items[i];
		zkc_multi_create(m, jp(j, p, "/sharding/%" PRIu32 "/running", it), id, (int)strlen(id),
		                 cj->failover ? 0 : ZOO_EPHEMERAL);
		if (j->completed && it < j->total && j->completed[it])
			zkc_multi_delete(m, jp(j, p, "/sharding/%" PRIu32 "/completed", it), -1);
	}
	if (zkc_multi_commit(j->c->z, m, running_written, f) != ZOK) {
		log_warn("job %s: fire %" PRIu64 ": cannot write its running nodes; the fire is missed", j->name, f->fire_ms);
		f->n = 0;
		fire_end(f);
	}
}

static void running_written(void *arg, const struct zkc_res *r)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	if (r->rc == ZOK) {
		for (uint32_t i = 0; i < f->n; i++)
			if (f->items[i] < j->total && j->completed) j->completed[f->items[i]] = 0;
		submit_items(f);
		return;
	}
	if (!live(j, r->session)) {
		f->n = 0;
		fire_end(f);
		return;
	}
	/* the first op that failed names the item: still running somewhere (misfire), or a completed
	 * node that is not there; drop that and try again */
	int k = 0;
	while (k < r->nops && r->op_rc[k] == ZOK) k++;
	char p[PATH_MAX_];
	unsigned item = 0;
	const char *q = NULL;
	/* map op k back to its item: ops are (running[, completed]) per item in order */
	int op = 0;
	for (uint32_t i = 0; i < f->n && !q; i++) {
		uint32_t it = f->items[i];
		if (op == k) {
			q = "running";
			item = it;
			break;
		}
		op++;
		if (j->completed && it < j->total && j->completed[it]) {
			if (op == k) {
				q = "completed";
				item = it;
				break;
			}
			op++;
		}
	}
	if (!q) {
		log_warn("job %s: fire %" PRIu64 ": writing running nodes: %s", j->name, f->fire_ms, zerror(r->rc));
		f->n = 0;
		fire_end(f);
		return;
	}
	if (!strcmp(q, "completed")) {
		j->completed[item] = 0;
	} else {
		log_info("job %s: item %u is still running from an earlier fire: misfire", j->name, item);
		zkc_create(j->c->z, jp(j, p, "/sharding/%u/misfire", item), "", 0, 0, NULL, NULL);
		uint32_t w = 0;
		for (uint32_t i = 0; i < f->n; i++)
			if (f->items[i] != item) f->items[w++] = f->items[i];
		f->n = w;
	}
	if (!f->n) {
		fire_end(f);
		return;
	}
	write_running(f);
}

static void fire_continue(struct cjob *j)
{
	struct cfire *f = j->fire;
	if (!f || f->state != F_WAIT) return;
	if (j->gone) {
		f->n = 0;
		fire_end(f);
		return;
	}
	if (j->states_loading || j->loading) return;     /* their answers call again */
	if (j->necessary || !j->have || j->total != (uint32_t)eff(j)->sharding_total_count) {
		log_debug("job %s: fire %" PRIu64 " waits for sharding (necessary %d, assignment %s, %s)", j->name, f->fire_ms,
		          j->necessary, j->have ? "loaded" : "none", j->leader ? "sharding it now" : "the leader shards");
		if (j->leader) shard_now(j);
		return;             /* the sharding node's watch (or necessary's) calls again */
	}
	const char *me = j->c->s->instance_id;
	f->n = 0;
	for (uint32_t i = 0; i < j->total; i++)
		if (j->owner[i] && !strcmp(j->owner[i], me) && !j->disabled[i]) f->items[f->n++] = i;
	if (!f->n) {
		fire_end(f);
		return;
	}
	f->state = F_START;
	write_running(f);
}

int coord_fire(void *arg, const struct sched_fire_info *fi)
{
	struct sup *s = arg;
	coord_t *c = s->coord;
	struct cjob *j = find_job(c, fi->job);
	if (s->stopping || !j) return -1;
	if (!live(j, j->reg_session) || !j->reg_session) {
		log_warn("job %s: fire %" PRId64 " cannot run: %s", j->name, fi->fire_s,
		         zkc_state(c->z) != ZKC_CONNECTED ? "not connected to ZooKeeper" : "not registered yet");
		return -1;
	}
	if (eff(j)->disabled) return 1;
	uint32_t total = (uint32_t)eff(j)->sharding_total_count;
	struct cfire *f = calloc(1, sizeof *f);
	if (!f || !(f->items = calloc(total ? total : 1, sizeof *f->items)) ||
	    !(f->done = calloc(total ? total : 1, 1)) || !(f->pending = calloc(total ? total : 1, sizeof *f->pending))) {
		if (f) {
			free(f->items);
			free(f->done);
		}
		free(f);
		return -1;
	}
	f->j = j;
	f->handle = fi->handle;
	f->fire_ms = (uint64_t)fi->fire_s * 1000u;
	f->catch_up = fi->catch_up;
	f->state = F_WAIT;
	f->started_ns = wait_now_ns();
	f->wait_until_ns = f->started_ns + (uint64_t)(zkc_timeout_ms(c->z) ? zkc_timeout_ms(c->z) : 6000) * 2000000u;
	j->fire = f;
	fire_continue(j);
	return 0;
}

/* ---- completions: batched into multis ------------------------------------------------------------- */

static void completed_written(void *arg, const struct zkc_res *r);

static void flush_fire(struct cfire *f)
{
	struct cjob *j = f->j;
	if (f->flushing || !f->npending) return;
	if (!f->monitor || !live(j, j->reg_session)) {
		f->flushed += f->npending;
		f->npending = 0;
		if (f->flushed == f->n) fire_end(f);
		return;
	}
	char p[PATH_MAX_];
	const char *id = j->c->s->instance_id;
	zkc_multi_t *m = zkc_multi_new();
	for (uint32_t i = 0; i < f->npending; i++) {
		uint32_t it = f->pending[i];
		zkc_multi_delete(m, jp(j, p, "/sharding/%" PRIu32 "/running", it), -1);
		if (f->failover) {
			zkc_multi_delete(m, jp(j, p, "/sharding/%" PRIu32 "/failover", it), -1);
			zkc_multi_delete(m, jp(j, p, "/sharding/%" PRIu32 "/failovering", it), -1);
		}
		/* completed says it ran to its end; a failed or stopped item is only no longer running */
		if (f->done[it] == 1)
			zkc_multi_create(m, jp(j, p, "/sharding/%" PRIu32 "/completed", it), id, (int)strlen(id), 0);
	}
	f->flushing = (int)f->npending;
	if (zkc_multi_commit(j->c->z, m, completed_written, f) != ZOK) {
		f->flushing = 0;
		f->flushed += f->npending;
		f->npending = 0;
		if (f->flushed == f->n) fire_end(f);
	}
}

static void completed_written(void *arg, const struct zkc_res *r)
{
	struct cfire *f = arg;
	struct cjob *j = f->j;
	uint32_t n = (uint32_t)f->flushing;
	if (r->rc != ZOK && live(j, r->session)) {
		/* someone else touched those nodes: write them one by one, each as far as it goes */
		log_info("job %s: fire %" PRIu64 ": completed nodes in one multi: %s; writing them one by one", j->name,
		         f->fire_ms, zerror(r->rc));
		char p[PATH_MAX_];
		const char *id = j->c->s->instance_id;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t it = f->pending[i];
			zkc_delete(j->c->z, jp(j, p, "/sharding/%" PRIu32 "/running", it), -1, NULL, NULL);
			if (f->failover) {
				zkc_delete(j->c->z, jp(j, p, "/sharding/%" PRIu32 "/failover", it), -1, NULL, NULL);
				zkc_delete(j->c->z, jp(j, p, "/sharding/%" PRIu32 "/failovering", it), -1, NULL, NULL);
			}
			if (f->done[it] != 1) continue;
			zkc_delete(j->c->z, jp(j, p, "/sharding/%" PRIu32 "/completed", it), -1, NULL, NULL);
			zkc_create(j->c->z, p, id, (int)strlen(id), 0, NULL, NULL);
			if (j->completed && it < j->total) j->completed[it] = 1;
		}
	} else if (r->rc == ZOK && j->completed)
		for (uint32_t i = 0; i < n; i++)
			if (f->pending[i] < j->total && f->done[f->pending[i]] == 1) j->completed[f->pending[i]] = 1;
	memmove(f->pending, f->pending + n, (f->npending - n) * sizeof *f->pending);
	f->npending -= n;
	f->flushed += n;
	f->flushing = 0;
	if (f->flushed == f->n) {
		fire_end(f);
		return;
	}
	flush_fire(f);
}

static void flush_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)revents;
	coord_t *c = w->data;
	ev_idle_stop(loop, w);
	for (size_t i = 0; i < c->n; i++) {
		if (c->jobs[i]->fire && c->jobs[i]->fire->state == F_RUN) flush_fire(c->jobs[i]->fire);
		for (struct cfire *f = c->jobs[i]->ffires, *n; f; f = n) {
			n = f->next;        /* flush_fire may end (free) f */
			flush_fire(f);
		}
	}
}

void coord_outcome(coord_t *c, const struct disp_outcome *o)
{
	struct cfire *f = (struct cfire *)(uintptr_t)o->cookie;
	if (!o->final || !f || o->item >= f->j->total || f->done[o->item]) return;
	f->done[o->item] = o->status == FRAME_ST_OK ? 1 : 2;
	f->ended++;
	f->ok += o->status == FRAME_ST_OK;
	f->pending[f->npending++] = o->item;
	/* completions that end close together go in one multi: write when the loop is idle */
	ev_idle_start(c->s->loop, &c->flush_w);
}

/* ---- failover ---------------------------------------------------------------------------------------
 *
 * With failover on, running nodes are persistent, so they outlive a crashed instance. The leader
 * sees an instance go (its instances/ watch), reads the running nodes of the items that instance
 * owned, and hands every one of them out at once, round robin over the instances still there, in
 * one fenced multi: leader/failover/items/{i} queued and sharding/{i}/failovering naming the taker,
 * the stale running node removed. Every instance watches leader/failover/items: an item whose
 * failovering names it is taken in one multi (failover and running created, the queue entry
 * removed) and run at once. A taker that dies before taking leaves its items queued; the leader
 * hands them out again at the next change of instances. */

struct crash {
	struct cjob *j;
	uint64_t session;
	char *gone;                 /* the instance that went */
	uint32_t left, n;
	uint32_t *items;
};

static void hand_out(struct cjob *j, const uint32_t *items, uint32_t n)
{
	if (!j->leader || !j->nlive || !n) return;
	char p[PATH_MAX_];
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_check(m, jp(j, p, "/leader/election"), j->fence);
	for (uint32_t k = 0; k < n; k++) {
		const char *to = j->live[k % (uint32_t)j->nlive];
		zkc_multi_create(m, jp(j, p, "/leader/failover/items/%" PRIu32, items[k]), "", 0, 0);
		zkc_multi_create(m, jp(j, p, "/sharding/%" PRIu32 "/failovering", items[k]), to, (int)strlen(to), 0);
		zkc_multi_delete(m, jp(j, p, "/sharding/%" PRIu32 "/running", items[k]), -1);
	}
	if (zkc_multi_commit(j->c->z, m, NULL, NULL) == ZOK)
		log_info("job %s: failover: %" PRIu32 " item%s of a crashed instance handed out to %d instance%s at once", j->name,
		         n, n == 1 ? "" : "s", j->nlive, j->nlive == 1 ? "" : "s");
}

static void crashed_running(void *arg, const struct zkc_res *r)
{
	struct crash *cr = arg;
	const char *q = strstr(r->path, "/sharding/");
	int hit = 0;
	if (q && r->rc == ZOK && r->data) {
		if (cr->gone) {
			hit = !strcmp(r->data, cr->gone);
		} else {            /* a new leader: any running node of an instance that is not there */
			hit = 1;
			for (int k = 0; k < cr->j->nlive && hit; k++) hit = strcmp(r->data, cr->j->live[k]) != 0;
		}
	}
	if (hit) cr->items[cr->n++] = (uint32_t)strtoul(q + 10, NULL, 10);
	if (--cr->left) return;
	struct cjob *j = cr->j;
	if (live(j, cr->session) && cr->n) hand_out(j, cr->items, cr->n);
	free(cr->gone);
	free(cr->items);
	free(cr);
}

/* the leader: instance `gone` left; which of its items were running? */
static void failover_crashed(struct cjob *j, const char *gone)
{
	if (!eff(j)->failover || !j->have) return;
	struct crash *cr = calloc(1, sizeof *cr);
	if (!cr || (gone && !(cr->gone = strdup(gone))) || !(cr->items = calloc(j->total ? j->total : 1, sizeof *cr->items))) {
		if (cr) free(cr->gone);
		free(cr);
		return;
	}
	cr->j = j;
	cr->session = zkc_session(j->c->z);
	cr->left = 1;
	char p[PATH_MAX_];
	/* every item: the crashed instance may run an item it owned, or one it had taken over */
	for (uint32_t i = 0; i < j->total; i++)
		if (zkc_get(j->c->z, jp(j, p, "/sharding/%" PRIu32 "/running", i), NULL, NULL, crashed_running, cr) == ZOK)
			cr->left++;
	struct zkc_res go = { .rc = ZNONODE, .path = "" };
	crashed_running(cr, &go);
}

static void leader_instances(struct cjob *j, const struct zkc_res *r)
{
	int first = j->live == NULL;
	/* who went since the last listing */
	for (int k = 0; k < j->nlive; k++) {
		int still = 0;
		for (int i = 0; i < r->nchildren && !still; i++) still = !strcmp(j->live[k], r->children[i]);
		if (!still) {
			log_info("job %s: instance %s went away", j->name, j->live[k]);
			/* live[] must be the new list when items are handed out: copy the name */
			char *gone = strdup(j->live[k]);
			if (gone) {
				char **old = j->live;
				int nold = j->nlive;
				j->live = NULL;
				j->nlive = 0;
				char **nl = calloc((size_t)r->nchildren + 1, sizeof *nl);
				if (nl) {
					/* descending, as ElasticJob orders instances */
					for (int i = r->nchildren - 1; i >= 0; i--) nl[j->nlive++] = strdup(r->children[i]);
					j->live = nl;
				}
				failover_crashed(j, gone);
				free(gone);
				j->live = old;
				j->nlive = nold;
				if (nl) {
					for (int i = 0; i < r->nchildren; i++) free(nl[i]);
					free(nl);
				}
			}
		}
	}
	for (int k = 0; k < j->nlive; k++) free(j->live[k]);
	free(j->live);
	j->live = calloc((size_t)r->nchildren + 1, sizeof *j->live);
	j->nlive = 0;
	for (int i = r->nchildren - 1; j->live && i >= 0; i--) j->live[j->nlive++] = strdup(r->children[i]);
	/* a new leader does not know who was there before: items running for an instance that is
	 * not there now crashed with it (it may have been the old leader) */
	if (first) failover_crashed(j, NULL);
	/* queued items whose taker is gone: hand them out again */
	if (eff(j)->failover) failover_scan(j);
}

/* ---- taking over ---- */

static void taken(void *arg, const struct zkc_res *r);

struct take {
	struct cjob *j;
	uint32_t item;
};

static void failovering_read(void *arg, const struct zkc_res *r)
{
	struct take *t = arg;
	struct cjob *j = t->j;
	uint32_t i = t->item;
	if (!live(j, r->session) || r->rc != ZOK || !r->data) {
		free(t);
		return;
	}
	const char *me = j->c->s->instance_id;
	if (strcmp(r->data, me)) {
		/* the leader: queued for an instance that is gone? hand it out again */
		int there = 0;
		for (int k = 0; k < j->nlive && !there; k++) there = !strcmp(j->live[k], r->data);
		if (j->leader && j->nlive && !there) {
			char p[PATH_MAX_];
			const char *to = j->live[i % (uint32_t)j->nlive];
			zkc_multi_t *m = zkc_multi_new();
			zkc_multi_check(m, jp(j, p, "/leader/election"), j->fence);
			zkc_multi_set(m, jp(j, p, "/sharding/%" PRIu32 "/failovering", i), to, (int)strlen(to), r->stat.version);
			zkc_multi_commit(j->c->z, m, NULL, NULL);
		}
		free(t);
		return;
	}
	if (i >= j->taking_total || j->taking[i]) {
		free(t);
		return;
	}
	j->taking[i] = 1;
	char p[PATH_MAX_];
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, jp(j, p, "/sharding/%" PRIu32 "/failover", i), me, (int)strlen(me), ZOO_EPHEMERAL);
	zkc_multi_create(m, jp(j, p, "/sharding/%" PRIu32 "/running", i), me, (int)strlen(me), 0);
	zkc_multi_delete(m, jp(j, p, "/leader/failover/items/%" PRIu32, i), -1);
	if (zkc_multi_commit(j->c->z, m, taken, t) != ZOK) {
		j->taking[i] = 0;
		free(t);
	}
}

static void taken(void *arg, const struct zkc_res *r)
{
	struct take *t = arg;
	struct cjob *j = t->j;
	uint32_t i = t->item;
	free(t);
	if (i < j->taking_total) j->taking[i] = 0;
	if (r->rc != ZOK || !live(j, r->session)) {
		if (r->rc != ZOK) log_warn("job %s: failover: taking item %" PRIu32 ": %s", j->name, i, zerror(r->rc));
		return;
	}
	uint32_t total = j->total;
	struct cfire *f = calloc(1, sizeof *f);
	if (!f || !(f->items = calloc(1, sizeof *f->items)) || !(f->done = calloc(total, 1)) ||
	    !(f->pending = calloc(1, sizeof *f->pending))) {
		if (f) {
			free(f->items);
			free(f->done);
		}
		free(f);
		return;
	}
	f->j = j;
	f->failover = 1;
	f->monitor = 1;
	f->items[0] = i;
	f->n = 1;
	f->fire_ms = (uint64_t)(wait_realtime_ns() / 1000000u);
	f->started_ns = wait_now_ns();
	f->next = j->ffires;
	j->ffires = f;
	log_info("job %s: failover: took item %" PRIu32 " of a crashed instance; running it now", j->name, i);
	submit_items(f);
}

static void failover_listed(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!live(j, r->session) || r->rc != ZOK || !j->have) return;
	if (j->taking_total != j->total) {
		free(j->taking);
		j->taking = calloc(j->total ? j->total : 1, 1);
		j->taking_total = j->taking ? j->total : 0;
	}
	char p[PATH_MAX_];
	for (int k = 0; k < r->nchildren; k++) {
		struct take *t = calloc(1, sizeof *t);
		if (!t) return;
		t->j = j;
		t->item = (uint32_t)strtoul(r->children[k], NULL, 10);
		if (zkc_get(j->c->z, jp(j, p, "/sharding/%" PRIu32 "/failovering", t->item), NULL, NULL, failovering_read, t) != ZOK)
			free(t);
	}
}

static void failover_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	(void)path;
	j->w_failover = 0;
	if (!j->gone) failover_scan(j);
}

static void failover_scan(struct cjob *j)
{
	char p[PATH_MAX_];
	int w = !j->w_failover;
	if (zkc_children(j->c->z, jp(j, p, "/leader/failover/items"), w ? failover_changed : NULL, j, failover_listed, j) ==
	        ZOK && w)
		j->w_failover = 1;
}

/* ---- session -------------------------------------------------------------------------------------- */

static void on_state(void *arg, enum zkc_state st, int new_session)
{
	coord_t *c = arg;
	struct sup *s = c->s;
	switch (st) {
	case ZKC_CONNECTED:
		log_info("zookeeper: connected to %s (session 0x%" PRIx64 "%s, timeout %d ms)",
		         s->conf->reg_center.server_lists, (uint64_t)zkc_session_id(c->z), new_session ? ", new" : "",
		         zkc_timeout_ms(c->z));
		c->connected = 1;
		disp_pause(s->disp, 0);
		for (size_t i = 0; i < c->n; i++) {
			struct cjob *j = c->jobs[i];
			if (new_session) {
				j->reg_session = 0;
				j->registering = 0;
				j->leader = 0;
				j->w_sharding = j->w_necessary = j->w_leader = j->w_instances = j->w_failover = 0;
				j->loading = j->states_loading = 0;
			}
			if (!j->gone && j->reg_session != zkc_session(c->z)) reg_start(j);
			else if (!j->gone) {
				elect(j);
				watch_necessary(j);
				load_assignment(j);
			}
		}
		break;
	case ZKC_CONNECTING:
		log_warn("zookeeper: connection lost; dispatching paused until it is back");
		c->connected = 0;
		disp_pause(s->disp, 1);
		break;
	case ZKC_EXPIRED:
		log_warn("zookeeper: session expired; starting a new one (jobs register again)");
		c->connected = 0;
		disp_pause(s->disp, 1);
		for (size_t i = 0; i < c->n; i++) {
			c->jobs[i]->reg_session = 0;
			c->jobs[i]->leader = 0;
		}
		break;
	case ZKC_AUTH_FAILED:
		c->connected = 0;
		disp_pause(s->disp, 1);
		break;
	}
}

coord_t *coord_new(struct sup *s)
{
	coord_t *c = calloc(1, sizeof *c);
	if (!c) return NULL;
	c->s = s;
	const conf_regcenter_t *rc = &s->conf->reg_center;
	struct zkc_params p = {
		.hosts = rc->server_lists, .root = rc->namespace, .session_timeout_ms = rc->session_timeout_ms,
		.digest = rc->digest,
	};
	static const struct zkc_hooks h = { .state = on_state };
	c->z = zkc_new(s->loop, &p, &h, c);
	if (!c->z) {
		free(c);
		return NULL;
	}
	ev_idle_init(&c->flush_w, flush_cb);
	c->flush_w.data = c;
	return c;
}

void coord_start(coord_t *c)
{
	disp_pause(c->s->disp, 1);
	log_info("zookeeper: connecting to %s, namespace /%s", c->s->conf->reg_center.server_lists,
	         c->s->conf->reg_center.namespace);
	zkc_start(c->z);
}

static void job_free(struct cjob *j)
{
	if (j->node) conf_job_free(j->node);
	free_owner(j->owner, j->total);
	free(j->completed);
	free(j->disabled);
	free(j->taking);
	for (int k = 0; k < j->nlive; k++) free(j->live[k]);
	free(j->live);
	free(j->name);
	free(j);
}

void coord_free(coord_t *c)
{
	if (!c) return;
	c->closing = 1;
	ev_idle_stop(c->s->loop, &c->flush_w);
	zkc_free(c->z);
	for (size_t i = 0; i < c->n; i++) {
		struct cfire *f = c->jobs[i]->fire;
		if (f) {
			free(f->items);
			free(f->done);
			free(f->pending);
			free(f);
		}
		for (struct cfire *g = c->jobs[i]->ffires, *n; g; g = n) {
			n = g->next;
			free(g->items);
			free(g->done);
			free(g->pending);
			free(g);
		}
		job_free(c->jobs[i]);
	}
	free(c->jobs);
	free(c);
}

int coord_set_jobs(coord_t *c, const conf_t *conf)
{
	for (size_t i = 0; i < c->n; i++) c->jobs[i]->gone = 1;
	for (size_t i = 0; i < conf->n_jobs; i++) {
		const conf_job_t *cj = &conf->jobs[i];
		struct cjob *j = find_job(c, cj->name);
		if (!j) {
			if (c->n == c->cap) {
				size_t nc = c->cap ? c->cap * 2 : 16;
				struct cjob **v = realloc(c->jobs, nc * sizeof *v);
				if (!v) return -1;
				c->jobs = v;
				c->cap = nc;
			}
			j = calloc(1, sizeof *j);
			if (!j || !(j->name = strdup(cj->name))) {
				free(j);
				return -1;
			}
			j->c = c;
			c->jobs[c->n++] = j;
		}
		j->gone = 0;
		j->local = cj;
		if (c->connected && !j->reg_session) reg_start(j);
	}
	/* jobs no longer configured: their callbacks see `gone`; a running fire ends on its own.
	 * (Their ephemeral instance node stays until the session ends.) */
	for (size_t i = 0; i < c->n; i++)
		if (c->jobs[i]->gone) c->jobs[i]->local = c->jobs[i]->node ? c->jobs[i]->node : NULL;
	return 0;
}

/* The session lease: while ZooKeeper answers, the session surely lives until `lease`; items must
 * be gone before then if it stops answering, since at expiry this instance's nodes vanish and
 * another one may take its items. B, the time they get to stop, is the kill grace plus half a
 * second, but at most half the session timeout (a healthy lease is always more than 2/3 of the
 * timeout ahead, so this never stops anything while ZooKeeper answers). The deadline goes into
 * shared memory too: workers stop their items themselves when it passes, even if this process is
 * frozen. */
void coord_tick(coord_t *c, uint64_t now_ns)
{
	struct sup *s = c->s;
	uint64_t lease = zkc_lease_ns(c->z);
	uint64_t timeout = (uint64_t)zkc_timeout_ms(c->z) * 1000000u;
	uint64_t b = (uint64_t)s->conf->supervisor.kill_grace_seconds * 1000000000u + 500000000u;
	if (timeout && b > timeout / 2) b = timeout / 2;
	uint64_t deadline = lease > b ? lease - b : 0;
	if (deadline != c->shm_deadline) {
		c->shm_deadline = deadline;
		atomic_store(&seg_header(s->seg)->lease_deadline_ns, deadline);
	}
	if (!deadline || now_ns < deadline) {
		c->lease_stopped = 0;
		return;
	}
	if (c->lease_stopped) return;
	c->lease_stopped = 1;
	uint32_t n = disp_running(s->disp), q = disp_pending(s->disp);
	log_error("zookeeper: no answer for %.1fs; the session may expire in %.1fs: stopping %" PRIu32
	          " running item%s (and %" PRIu32 " not started) so that no other instance runs them at the same time",
	          (double)(now_ns - (lease - timeout)) / 1e9, (double)(lease - now_ns) / 1e9, n, n == 1 ? "" : "s", q);
	disp_cancel_queued(s->disp, "not started: the ZooKeeper session may have expired");
	/* SIGTERM now, SIGKILL with a quarter of B left */
	disp_cancel_running_by(s->disp, SHM_CANCEL_LEASE, lease - b / 4);
}

uint64_t coord_requests(const coord_t *c)
{
	return zkc_requests(c->z);
}
