/* supervisor/coord/coord_reg.c: a job's registration in each session, as ElasticJob's startup writes
 * it: its nodes, the config rule (the node or the file's, published), servers/{ip}, the ephemeral
 * instances/{id} and leader/failover/alive/{id}, the resharding flag; then the watches of every
 * concern (reg_done). A step that fails starts over a second later (coord_tick). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/wait.h"
#include "supervisor/coord/coord_int.h"

/* ---- a group of requests sent together ---------------------------------------------------------- */

struct group {
	struct cjob *j;
	uint64_t session;
	int left, failed;
	void (*next)(struct cjob *j);
	const char *what;
};

/* A failed request, said so that an operator knows what to do. */
static void say_rc(const struct cjob *j, const char *what, const char *path, int rc)
{
	if (rc == ZNOAUTH)
		log_error("job %s: %s: ZooKeeper refused access to /%s%s: %s; the nodes were created with other "
		          "credentials: set regCenter.digest to the user:password that created them",
		          j->name, what, j->c->ns, path,
		          j->c->digest ? "the digest credentials are not the right ones" : "no digest credentials given");
	else
		log_warn("job %s: %s: /%s%s: %s", j->name, what, j->c->ns, path, zerror(rc));
}

static void reg_pump(coord_t *c);

/* A registration ended (registered, or failed): its place goes to the next one waiting. */
static void reg_end(struct cjob *j)
{
	j->reg.busy = 0;
	if (j->reg.counted) {
		j->reg.counted = 0;
		if (j->c->reg.inflight) j->c->reg.inflight--;
	}
	reg_pump(j->c);
}

/* A step of the registration failed: start over a second later (coord_tick). */
static void reg_failed(struct cjob *j)
{
	reg_end(j);
	j->reg.retry_ns = wait_now_ns() + 1000000000u;
	cj_due(j->c, j->reg.retry_ns);
}

static void group_cb(void *arg, const struct zkc_res *r)
{
	struct group *g = arg;
	if (r->rc != ZOK && r->rc != ZNODEEXISTS && !g->failed) {
		g->failed = r->rc;
		say_rc(g->j, g->what, r->path, r->rc);
	}
	if (--g->left) return;
	struct cjob *j = g->j;
	if (!g->failed && cj_live(j, g->session)) g->next(j);
	else reg_failed(j);
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

/* instances/{id}'s data, as ElasticJob writes it */
static void instance_data(const coord_t *c, char *buf, size_t len)
{
	snprintf(buf, len, "jobInstanceId: %s\nserverIp: %s\n", c->id, c->ip);
}


static const char *type_string(const conf_job_t *cj)
{
	switch (cj->type) {
	case CONF_JOB_SCRIPT: return "SCRIPT";
	case CONF_JOB_NATIVE: return "NATIVE";
	case CONF_JOB_EXTERNAL: return "EXTERNAL";
	case CONF_JOB_HTTP: return "HTTP";   /* ElasticJob's own type name for its HTTP jobs */
	case CONF_JOB_DATAFLOW: return "DATAFLOW";   /* the name ElasticJob's JobType gives them */
	default: return "";
	}
}

/* Registered. fresh: this session's multi made the job's nodes and elected us (reg_fresh): there
 * is no assignment to read, no failover entry, no item node, and we lead; only the resharding
 * flag is read now (its answer starts the eager sharding, coord_shard.c). The other watches are
 * armed when ZooKeeper has room (cj_arm_later): 10,000 new jobs' some 90,000 watch reads went to
 * ZooKeeper ahead of every eager sharding, and the first fire waited behind them. */
static void reg_finish(struct cjob *j, int fresh)
{
	reg_end(j);
	j->reg.session = zkc_session(j->c->z);
	cj_due(j->c, cj_checks(j, wait_now_ns()));   /* its checks start */
	log_info("job %s: registered as %s (%s%s)", j->name, j->c->id,
	         cj_conf(j)->disabled ? "server DISABLED" : "server ENABLED",
	         cj_conf(j)->cron ? "" : "; one-off: runs on trigger only");
	j->reg.ever = 1;
	if (j->ops.left) {      /* it left while registering (a stop, a drain): it leaves now */
		cj_leave_nodes(j);
		return;
	}
	if (j->adopt.refused) { /* adopted, and refused while registering (allowedCommands): it leaves */
		cj_withdraw(j);
		return;
	}
	if (j->reg.rejoin) {
		j->reg.rejoin = 0;
		cx_rejoined(j);     /* before the assignment's load: fires wait for it */
	}
	cj_ops_registered(j);
	/* What the first fire waits for (the flag's watch, whose answer starts the eager sharding; on a
	 * restart the assignment, the election and the failover queue too) goes once the last
	 * registration is answered: a start in front of thousands of jobs sends every registration
	 * first, then these, pipelined. A fire that comes meanwhile waits for its sharding anyway; with
	 * a few jobs it is the next answer. */
	if (fresh) {
		cj_shard_fresh(j, j->reg.session);
		cj_arm_later(j, CJ_ARM_OPS | CJ_ARM_LEAD | CJ_ARM_FLAG);
	} else {
		cj_arm_later(j, CJ_ARM_OPS | CJ_ARM_JOIN);
	}
	cj_kick(j);    /* fires that could not run meanwhile: their catch-up */
	cj_flow_sync(j);   /* with dependsOn: its upstream jobs' runs watched (coord_flow.c) */
}

static void reg_done(struct cjob *j)
{
	reg_finish(j, 0);
}

/* ---- watches armed when ZooKeeper has room ----------------------------------------------------- *
 *
 * What they are for can wait a moment (an operator's disable, shutdown, trigger or config change;
 * a leader that goes: the election watch; an item disabled: its watch), and what is there when
 * each is armed is what its read answers, so nothing is missed meanwhile, only heard later. They
 * are armed in job order while zkc has nothing waiting and its window is at most half full
 * (its idle hook, and the tick): a start in front of 10,000 jobs sends the registrations, the
 * shardings and the first fire first, and the watches in the gaps. With a few jobs the gap is the
 * next answer: armed as before. */
void cj_arm_later(struct cjob *j, int what)
{
	if (!j->reg.arm) j->c->arm_want++;
	if ((what & CJ_ARM_AFTER) && !(j->reg.arm & CJ_ARM_AFTER)) j->c->join_want++;
	j->reg.arm |= what;
}

void cj_arm_forget(struct cjob *j)
{
	if (j->reg.arm && j->c->arm_want) j->c->arm_want--;
	if ((j->reg.arm & CJ_ARM_AFTER) && j->c->join_want) j->c->join_want--;
	j->reg.arm = 0;
}

/* what of the job's arming is due now (the bits of `what`) */
static void arm_now(struct cjob *j, int what)
{
	int rest = j->reg.arm & ~what;
	what &= j->reg.arm;
	cj_arm_forget(j);
	if (rest) cj_arm_later(j, rest);
	/* a job that left, or whose session ended: its next registration asks again */
	if (j->gone || j->ops.shut || !cj_registered(j)) return;
	if (what & (CJ_ARM_JOIN | CJ_ARM_FLAG)) cj_watch_necessary(j);
	if (what & CJ_ARM_JOIN) cj_load_assignment(j);
	if (what & (CJ_ARM_LEAD | CJ_ARM_JOIN)) {
		cj_elect(j);
		cf_scan(j);
	}
	if (what & CJ_ARM_OPS) {
		cj_watch_ops(j);
		cj_watch_config(j);
	}
	if (what & CJ_ARM_ITEMS) cj_assign_arm(j);
	if (what & CJ_ARM_INST) cj_lead_list(j);
}

void cj_arm_pump(coord_t *c)
{
	if (!c->connected || c->stopping) return;
	/* A restart's joins (the flag, the assignment, the election: what its first fire waits for)
	 * go all at once when the last registration is answered: pipelined behind one another, not
	 * paced by the gaps, and not in front of the registrations. */
	if (c->join_want && cj_reg_settled(c))
		for (size_t k = 0; k < c->n && c->join_want; k++)
			if (c->jobs[k]->reg.arm & CJ_ARM_AFTER) arm_now(c->jobs[k], CJ_ARM_AFTER);
	/* the rest in the gaps, once the registrations are answered: ZooKeeper takes a session's
	 * requests in order, and with 10,000 new jobs it is busy (its CPU) with theirs; each read sent
	 * meanwhile put the registrations behind it (a new namespace's 10,000 took 3.4-4.1 s against
	 * the same requests alone in 2.0-2.7 s on one ZooKeeper) */
	if (!cj_reg_settled(c)) return;
	/* each job's arming sends up to 6 reads (and 1 a item it owns): stop at 3/4 of the window */
	unsigned room = ZKC_WINDOW * 3 / 4;
	for (size_t k = 0; k < c->n && c->arm_want > c->join_want && zkc_backlog(c->z) < room; k++) {
		if (c->arm_cursor >= c->n) c->arm_cursor = 0;
		struct cjob *j = c->jobs[c->arm_cursor++];
		if (j->reg.arm & ~CJ_ARM_AFTER) arm_now(j, ~CJ_ARM_AFTER);
	}
}

/* staticSharding: the flag only while the job has no assignment yet (ElasticJob's
 * hasShardingInfo(): sharding/ has children) */
static void sharding_listed(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	char p[CJ_PATH_MAX];
	if (!cj_live(j, r->session)) return;
	if (r->rc == ZOK && r->nchildren > 0) {
		log_debug("job %s: staticSharding: joining without resharding; the items stay where they are", j->name);
		return;
	}
	zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
}

/* A joining instance raises the resharding flag (ElasticJob's listener does on any instance
 * change), but for a static job that has an assignment: then 1, and the flag is the listing's
 * to raise (sharding_listed); else 0, the caller raises it. */
static int static_join(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	if (!cj_conf(j)->static_sharding) return 0;
	zkc_children(j->c->z, cj_path(j, p, "/sharding"), NULL, NULL, sharding_listed, j);
	return 1;
}

/* servers/{ip}, instances/{id}, and the resharding flag, as ElasticJob's startup writes them */
static void reg_presence(struct cjob *j)
{
	char p[CJ_PATH_MAX], data[256];
	const coord_t *c = j->c;
	struct group *g = group_new(j, "registering", reg_done);
	if (!g) {
		reg_failed(j);      /* out of memory: the tick starts it over */
		return;
	}
	instance_data(c, data, sizeof data);
	group_create(g, cj_path(j, p, "/instances/%s", c->id), data, ZOO_EPHEMERAL);
	/* lives exactly as long as this session, whatever an operator deletes (coord_failover.c) */
	group_create(g, cj_path(j, p, "/leader/failover/alive/%s", c->id), "", ZOO_EPHEMERAL);
	if (!static_join(j)) group_create(g, cj_path(j, p, "/leader/sharding/necessary"), "", 0);
	const char *st = cj_conf(j)->disabled ? "DISABLED" : "ENABLED";
	/* the server node is rewritten at every start (ElasticJob does the same) */
	if (zkc_set(j->c->z, cj_path(j, p, "/servers/%s", c->ip), st, (int)strlen(st), -1, group_cb, g) == ZOK) g->left++;
	group_go(g);
}

/* servers/{ip} may not exist yet: create it, then reg_presence sets it */
static void reg_server(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	struct group *g = group_new(j, "registering", reg_presence);
	if (!g) {
		reg_failed(j);      /* out of memory: the tick starts it over */
		return;
	}
	group_create(g, cj_path(j, p, "/servers/%s", j->c->ip), "ENABLED", 0);
	group_go(g);
}

static void reg_config(struct cjob *j);

static void joined(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) {
		reg_failed(j);
	} else if (r->rc == ZOK) {
		/* the set of servers/{ip} is the multi's last op: its version, for the sharding's check */
		if (r->nops == 3) cj_shard_server(j, r->session, r->op_stat[2].version);
		reg_done(j);
	} else if (r->rc == ZNONODE || r->rc == ZNODEEXISTS) {
		reg_server(j);      /* no servers/{ip} yet, or our nodes are there (a retry): one by one */
	} else {
		say_rc(j, "registering", r->path, r->rc);
		reg_failed(j);
	}
}

/* A job whose nodes are there (a restart): the resharding flag, then instances/{id}, the alive
 * node and servers/{ip} in one multi, shared with the other jobs of this turn (10,000 jobs: some
 * 200 requests, not 50,000). The flag may be raised already, so it is not in the multi; it is sent
 * first, so it is there when the multi is answered (a static job's listing goes first instead). */
static void reg_join(struct cjob *j)
{
	char p[CJ_PATH_MAX], data[256];
	const coord_t *c = j->c;
	if (!static_join(j)) zkc_create(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0, NULL, NULL);
	zkc_multi_t *m = zkc_multi_new();
	instance_data(c, data, sizeof data);
	zkc_multi_create(m, cj_path(j, p, "/instances/%s", c->id), data, (int)strlen(data), ZOO_EPHEMERAL);
	zkc_multi_create(m, cj_path(j, p, "/leader/failover/alive/%s", c->id), "", 0, ZOO_EPHEMERAL);
	const char *st = cj_conf(j)->disabled ? "DISABLED" : "ENABLED";
	zkc_multi_set(m, cj_path(j, p, "/servers/%s", c->ip), st, (int)strlen(st), -1);
	if (zkc_multi_share(j->c->z, m, joined, j) != ZOK) reg_failed(j);
}

/* The config rule (docs/config.md): the config node is the job's config for the whole cluster.
 * A file with overwrite: true publishes its job's config there when the supervisor starts and
 * when a reload changes it (j->reg.publish); otherwise the node wins, and what the file says
 * differently is logged as not in force. Instances adopt what the node says (its watch) and never
 * write it back, so two files that differ cannot make the node flip between them. */

static void published(struct cjob *j, const struct zkc_res *r)
{
	char p[CJ_PATH_MAX];
	if (r->rc == ZOK) {
		j->reg.publish = 0;
		cj_node_drop(j);    /* the file is the node now; the watch will bring the same back */
		log_info("job %s: the file's config is published to /%s%s (%s)", j->name, j->c->ns, cj_path(j, p, "/config"),
		         j->local && j->local->overwrite ? "overwrite: true" : "the job had no config node");
	} else {
		say_rc(j, "publishing its config", r->path, r->rc);
	}
}

static void config_written(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (r->rc == ZNODEEXISTS && cj_live(j, r->session)) {
		reg_config(j);      /* another instance created it first: read it again, then publish */
		return;
	}
	if (r->rc != ZOK) {
		published(j, r);
		reg_failed(j);
		return;
	}
	published(j, r);
	if (cj_live(j, r->session)) reg_join(j);
}

/* A reload with overwrite: true changed the job: publish the file's config now. */
static void republished(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT) return;     /* j->reg.publish stays: at the reconnect */
	if (cj_live(j, r->session)) published(j, r);
}

void cj_publish_now(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	size_t len;
	char *y = conf_node_emit(j->local, &len);
	j->cfg.own = y ? cj_hash(y, len) : 0;
	if (!y) return;
	if (zkc_set(j->c->z, cj_path(j, p, "/config"), y, (int)len, -1, republished, j) != ZOK)
		log_warn("job %s: cannot publish its config now; it will be at the next connection", j->name);
	free(y);
}

static void config_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) {
		reg_failed(j);
		return;
	}
	char p[CJ_PATH_MAX];
	cj_path(j, p, "/config");
	if (r->rc == ZOK && !(j->local && j->local->overwrite && j->reg.publish)) {
		cj_take_node(j, r->data, (size_t)(r->len > 0 ? r->len : 0), 0, r->stat.version);
		reg_join(j);
		return;
	}
	if (r->rc != ZOK && r->rc != ZNONODE) {
		say_rc(j, "reading its config", p, r->rc);
		reg_failed(j);
		return;
	}
	if (!j->local) {
		/* adopted, and its node deleted meanwhile: never written back from here (the
		 * namespace's watch retires the job, coord_adopt.c) */
		reg_failed(j);
		return;
	}
	size_t len;
	char *y = conf_node_emit(j->local, &len);
	j->cfg.own = y ? cj_hash(y, len) : 0;
	if (!y) {
		reg_failed(j);
		return;
	}
	int rc = r->rc == ZNONODE ? zkc_create(j->c->z, p, y, (int)len, 0, config_written, j)
	                          : zkc_set(j->c->z, p, y, (int)len, -1, config_written, j);
	free(y);
	if (rc != ZOK) reg_failed(j);
}

static void root_read(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (r->rc == ZOK && cj_live(j, r->session)) cj_root_type(j, r->data, r->len);
}

/* the job's root node (its type, as ElasticJob writes it), then the config node: answered in
 * that order, so config_read knows the type of a node without props ejob.type */
static void reg_config(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	zkc_get(j->c->z, cj_path(j, p, "%s", ""), NULL, NULL, root_read, j);
	if (zkc_get(j->c->z, cj_path(j, p, "/config"), NULL, NULL, config_read, j) != ZOK) reg_failed(j);
}

static const char *const job_dirs[] = { "/servers", "/instances", "/sharding", "/leader", "/leader/election",
                                        "/leader/sharding", "/leader/failover", "/leader/failover/items",
                                        "/leader/failover/alive", "/trigger" };

/* The job's nodes, as ElasticJob's layout has them (made once per namespace and job). */
static void reg_dirs(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	struct group *g = group_new(j, "creating its nodes", reg_config);
	if (!g) {
		/* out of memory: not registering, so that the tick starts it over */
		log_error("job %s: out of memory registering; trying again in a second", j->name);
		reg_failed(j);
		return;
	}
	group_create(g, "", "", 0);
	/* an adopted job's root is its writer's: a job deleted meanwhile is not made again here */
	if (j->local) group_create(g, cj_path(j, p, "%s", ""), type_string(j->local), 0);
	for (size_t i = 0; i < sizeof job_dirs / sizeof job_dirs[0]; i++) group_create(g, cj_path(j, p, "%s", job_dirs[i]), "", 0);
	group_go(g);
}

static void reg_fresh(struct cjob *j);

static void root_made(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) reg_failed(j);
	else if (r->rc == ZOK || r->rc == ZNODEEXISTS) reg_fresh(j);
	else {
		say_rc(j, "creating the namespace", r->path, r->rc);
		reg_failed(j);
	}
}

static void fresh_made(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) {
		reg_failed(j);
		return;
	}
	if (r->rc == ZNONODE && r->nops > 0 && r->op_rc[0] == ZNONODE) {
		/* the namespace itself is new: make it, then the job's nodes in one multi again */
		if (zkc_create(j->c->z, "", "", 0, 0, root_made, j) != ZOK) reg_failed(j);
		return;
	}
	if (r->rc == ZNODEEXISTS || r->rc == ZNONODE) {
		/* another instance made some of them first: node by node */
		reg_dirs(j);
		return;
	}
	if (r->rc != ZOK) {
		say_rc(j, "creating its nodes", r->path, r->rc);
		reg_failed(j);
		return;
	}
	published(j, r);
	int won = j->reg.elect && r->nops > 0 && !j->ops.left && !j->adopt.refused;
	reg_finish(j, won);
	if (won && j->reg.session == r->session) cj_lead_won(j, r->op_stat[r->nops - 1].version, 1);
}

/* A job new to the namespace: its nodes, the file's config, servers/{ip}, instances/{id}, its alive
 * node and the resharding flag in one multi (10,000 new jobs: 1 request each instead of 17 in 4
 * rounds). A multi fails whole; if any node is there already, reg_dirs makes them one by one. */
static void reg_fresh(struct cjob *j)
{
	char p[CJ_PATH_MAX], data[256];
	const coord_t *c = j->c;
	size_t len;
	char *y = conf_node_emit(j->local, &len);
	j->cfg.own = y ? cj_hash(y, len) : 0;
	if (!y) {
		reg_failed(j);
		return;
	}
	zkc_multi_t *m = zkc_multi_new();
	const char *type = type_string(j->local), *st = cj_conf(j)->disabled ? "DISABLED" : "ENABLED";
	zkc_multi_create(m, cj_path(j, p, "%s", ""), type, (int)strlen(type), 0);
	for (size_t i = 0; i < sizeof job_dirs / sizeof job_dirs[0]; i++)
		zkc_multi_create(m, cj_path(j, p, "%s", job_dirs[i]), "", 0, 0);
	zkc_multi_create(m, cj_path(j, p, "/config"), y, (int)len, 0);
	free(y);
	zkc_multi_create(m, cj_path(j, p, "/servers/%s", c->ip), st, (int)strlen(st), 0);
	instance_data(c, data, sizeof data);
	zkc_multi_create(m, cj_path(j, p, "/instances/%s", c->id), data, (int)strlen(data), ZOO_EPHEMERAL);
	zkc_multi_create(m, cj_path(j, p, "/leader/failover/alive/%s", c->id), "", 0, ZOO_EPHEMERAL);
	zkc_multi_create(m, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0);
	/* and its election, as cj_elect's multi (last, so that the set's stat is the answer's last):
	 * a job whose nodes this multi makes has no leader, and the leader can shard it before its
	 * first fire instead of electing after the watches' reads of every new job (coord_shard.c) */
	j->reg.elect = !cj_conf(j)->disabled;     /* a disabled server does not lead (coord_lead.c) */
	if (j->reg.elect) {
		zkc_multi_create(m, cj_path(j, p, "/leader/election/instance"), c->id, (int)strlen(c->id), ZOO_EPHEMERAL);
		zkc_multi_set(m, cj_path(j, p, "/leader/election"), c->id, (int)strlen(c->id), -1);
	}
	/* shared with the other new jobs of this turn (one of them refused: each alone again) */
	if (zkc_multi_share(j->c->z, m, fresh_made, j) != ZOK) reg_failed(j);
}

static void adopted_made(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) {
		reg_failed(j);
	} else if (r->rc == ZOK) {
		reg_done(j);
	} else if (r->rc == ZNODEEXISTS || r->rc == ZNONODE) {
		reg_dirs(j);        /* some are there, or the job was deleted meanwhile: node by node */
	} else {
		say_rc(j, "creating its nodes", r->path, r->rc);
		reg_failed(j);
	}
}

/* An adopted job new to the namespace: its writer made its root and config nodes; the rest, with
 * servers/{ip}, instances/{id}, its alive node and the resharding flag, in one multi as reg_fresh
 * (shared with the other jobs of this turn: 1,000 jobs adopted at once are some 20 requests, not
 * 16,000). Its config is the one adopted (coord_adopt.c read it, and its watch takes the changes):
 * not read again. */
static void reg_adopted_fresh(struct cjob *j)
{
	char p[CJ_PATH_MAX], data[256];
	const coord_t *c = j->c;
	zkc_multi_t *m = zkc_multi_new();
	const char *st = cj_conf(j)->disabled ? "DISABLED" : "ENABLED";
	for (size_t i = 0; i < sizeof job_dirs / sizeof job_dirs[0]; i++)
		zkc_multi_create(m, cj_path(j, p, "%s", job_dirs[i]), "", 0, 0);
	zkc_multi_create(m, cj_path(j, p, "/servers/%s", c->ip), st, (int)strlen(st), 0);
	instance_data(c, data, sizeof data);
	zkc_multi_create(m, cj_path(j, p, "/instances/%s", c->id), data, (int)strlen(data), ZOO_EPHEMERAL);
	zkc_multi_create(m, cj_path(j, p, "/leader/failover/alive/%s", c->id), "", 0, ZOO_EPHEMERAL);
	zkc_multi_create(m, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0);
	if (zkc_multi_share(j->c->z, m, adopted_made, j) != ZOK) reg_failed(j);
}

/* trigger is the last of them made, in one batch the server takes in order (or in one multi):
 * there, all of them are (a restart's case: 1 request instead of 12). An adopted job's config
 * and root are known (coord_adopt.c): not read again */
static void dirs_go(struct cjob *j, int rc)
{
	if (rc == ZOK && j->adopt.on) reg_join(j);
	else if (rc == ZOK) reg_config(j);
	else if (rc == ZNONODE && j->local) reg_fresh(j);
	else if (rc == ZNONODE && j->adopt.on) reg_adopted_fresh(j);
	else reg_dirs(j);
}

static void dirs_known(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) reg_failed(j);
	else dirs_go(j, r->rc);
}

/* A registration goes on for at most CJ_REG_MAX jobs at once, from its first read to its end; the
 * others wait, busy, in job order. 10,000 new jobs' multis made at once waited in zkc for the
 * window (RSS 140 MB at 10,000 jobs) and went no faster: ZooKeeper takes them in order either way.
 * The first reads of all of them sent at once (as until issue 30) went first: each multi made from
 * their answers waited in zkc's queue behind the rest of them, and ZooKeeper had nothing to write
 * for the first 0.6 s of 10,000 new jobs' registration. Paced with the rest, the reads of the next
 * jobs go between the multis of the ones before, as the floor sends them (bench/lib/floor.c). */
static void reg_read(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	j->reg.counted = 1;
	j->c->reg.inflight++;
	if (zkc_exists(j->c->z, cj_path(j, p, "/trigger"), NULL, NULL, dirs_known, j) != ZOK) reg_failed(j);
}

static void reg_pump(coord_t *c)
{
	if (c->reg.pumping) return;         /* a job that failed at once ends inside the loop below */
	c->reg.pumping = 1;
	for (size_t k = 0; k < c->n && c->reg.queued && c->reg.inflight < CJ_REG_MAX; k++) {
		if (c->reg.cursor >= c->n) c->reg.cursor = 0;
		struct cjob *j = c->jobs[c->reg.cursor++];
		if (!j->reg.queued) continue;
		j->reg.queued = 0;
		c->reg.queued--;
		if (j->gone || j->ops.shut || j->adopt.refused) j->reg.busy = 0;
		else reg_read(j);
	}
	c->reg.pumping = 0;
}

void cj_reg_start(struct cjob *j)
{
	/* an adopted job refused by allowedCommands takes no item here: it does not register */
	if (j->reg.busy || j->gone || j->ops.shut || j->adopt.refused) return;
	j->reg.busy = 1;
	cj_lead_session(j);     /* not the leader until elected in this registration */
	if (j->c->reg.inflight < CJ_REG_MAX) {
		reg_read(j);
		return;
	}
	j->reg.queued = 1;
	j->c->reg.queued++;
}

void cj_reg_session(struct cjob *j)
{
	j->reg.session = 0;
	j->reg.busy = 0;
	if (j->reg.counted && j->c->reg.inflight) j->c->reg.inflight--;
	if (j->reg.queued && j->c->reg.queued) j->c->reg.queued--;
	j->reg.counted = j->reg.queued = 0;
	j->reg.rejoin = j->reg.ever;
}

void cj_reg_forget(struct cjob *j)
{
	cj_reg_session(j);
}

int cj_reg_leave(struct cjob *j)
{
	if (!j->reg.session) return 0;
	j->reg.session = 0;
	return 1;
}

void cj_publish_due(struct cjob *j, int due)
{
	j->reg.publish = due;
}

uint64_t cj_reg_tick(struct cjob *j, uint64_t now_ns)
{
	if (j->gone || j->reg.session || !j->reg.retry_ns) return UINT64_MAX;
	if (now_ns < j->reg.retry_ns) return j->reg.retry_ns;
	if (j->reg.busy) return now_ns;     /* the next tick */
	j->reg.retry_ns = 0;
	cj_reg_start(j);
	return UINT64_MAX;                  /* a failure says when (reg_failed) */
}
