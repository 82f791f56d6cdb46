/* supervisor/coord.c: registration, election, sharding and execution nodes (see coord.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/wait.h"
#include "supervisor/coord.h"
#include "supervisor/coord_int.h"
#include "supervisor/zkc.h"

const char *cj_path(const struct cjob *j, char *buf, const char *fmt, ...)
{
	int k = snprintf(buf, PATH_MAX_, "/%s", j->name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + k, PATH_MAX_ - (size_t)k, fmt, ap);
	va_end(ap);
	return buf;
}

void cj_kick(struct cjob *j)
{
	if (!j->gone) j->c->h.kick(j->c->arg, j->name);
}

struct cjob *cj_find(coord_t *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->jobs[i]->name, name)) return c->jobs[i];
	return NULL;
}

int cj_id_ok(const char *id)
{
	const char *sep = strstr(id, "@-@");
	if (!sep || sep == id || strchr(id, '/')) return 0;
	const char *pid = sep + 3;
	size_t n = strlen(pid);
	if (n == 0 || n > 10) return 0;
	for (size_t k = 0; k < n; k++)
		if (pid[k] < '0' || pid[k] > '9') return 0;
	for (const char *q = id; q < sep; q++)
		if ((unsigned char)*q <= ' ' || (unsigned char)*q >= 0x7f) return 0;
	return 1;
}

const char *cj_show(const char *data, int len, char *buf, size_t sz)
{
	size_t n = 0;
	for (int k = 0; data && k < len && k < 40 && n + 4 < sz; k++)
		buf[n++] = (unsigned char)data[k] >= ' ' && (unsigned char)data[k] < 0x7f ? data[k] : '?';
	if (data && len > 40 && n + 4 < sz) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

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

/* A step of the registration failed: start over a second later (coord_tick). */
static void reg_failed(struct cjob *j)
{
	j->registering = 0;
	j->reg_retry_ns = wait_now_ns() + 1000000000u;
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

static void watch_necessary(struct cjob *j);
static void retire_zk(struct cjob *j);
static void publish_now(struct cjob *j);
static void lease_back(coord_t *c, uint64_t now_ns);

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
	log_info("job %s: registered as %s (%s)", j->name, j->c->id,
	         cj_conf(j)->disabled ? "server DISABLED" : "server ENABLED");
	j->ever_registered = 1;
	if (j->orphan_scan) {
		j->orphan_scan = 0;
		cx_rejoined(j);     /* before the assignment's load: fires wait for it */
	}
	watch_necessary(j);
	cj_load_assignment(j);
	cj_elect(j);
	cf_scan(j);
	cj_watch_trigger(j);
	j->server_off = cj_conf(j)->disabled;
	cj_watch_server(j);
	cj_watch_config(j);
	cj_watch_self(j);
	cj_kick(j);    /* fires that could not run meanwhile: their catch-up */
}

/* servers/{ip}, instances/{id}, and the resharding flag, as ElasticJob's startup writes them */
static void reg_presence(struct cjob *j)
{
	char p[PATH_MAX_], data[256];
	const coord_t *c = j->c;
	struct group *g = group_new(j, "registering", reg_done);
	if (!g) return;
	snprintf(data, sizeof data, "jobInstanceId: %s\nserverIp: %s\n", c->id, c->ip);
	group_create(g, cj_path(j, p, "/instances/%s", c->id), data, ZOO_EPHEMERAL);
	/* lives exactly as long as this session, whatever an operator deletes (coord_failover.c) */
	group_create(g, cj_path(j, p, "/leader/failover/alive/%s", c->id), "", ZOO_EPHEMERAL);
	group_create(g, cj_path(j, p, "/leader/sharding/necessary"), "", 0);
	const char *st = cj_conf(j)->disabled ? "DISABLED" : "ENABLED";
	/* the server node is rewritten at every start (ElasticJob does the same) */
	if (zkc_set(j->c->z, cj_path(j, p, "/servers/%s", c->ip), st, (int)strlen(st), -1, group_cb, g) == ZOK) g->left++;
	group_go(g);
}

/* servers/{ip} may not exist yet: create it, then reg_presence sets it */
static void reg_server(struct cjob *j)
{
	char p[PATH_MAX_];
	struct group *g = group_new(j, "registering", reg_presence);
	if (!g) return;
	group_create(g, cj_path(j, p, "/servers/%s", j->c->ip), "ENABLED", 0);
	group_go(g);
}

static void reg_config(struct cjob *j);

/* The config rule (docs/config.md): the config node is the job's config for the whole cluster.
 * A file with overwrite: true publishes its job's config there when the supervisor starts and
 * when a reload changes it (j->publish); otherwise the node wins, and what the file says
 * differently is logged as not in force. Instances adopt what the node says (its watch) and never
 * write it back, so two files that differ cannot make the node flip between them. */

static void published(struct cjob *j, const struct zkc_res *r)
{
	char p[PATH_MAX_];
	if (r->rc == ZOK) {
		j->publish = 0;
		/* the file is the node now; the watch will bring the same back */
		if (j->node) conf_job_free(j->node);
		j->node = NULL;
		log_info("job %s: the file's config is published to /%s%s (overwrite: true)", j->name,
		         j->c->ns, cj_path(j, p, "/config"));
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
	if (cj_live(j, r->session)) reg_server(j);
}

/* A reload with overwrite: true changed the job: publish the file's config now. */
static void republished(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (r->rc == ZCONNECTIONLOSS || r->rc == ZOPERATIONTIMEOUT) return;     /* j->publish stays: at the reconnect */
	if (cj_live(j, r->session)) published(j, r);
}

static void publish_now(struct cjob *j)
{
	char p[PATH_MAX_];
	size_t len;
	char *y = conf_node_emit(j->local, &len);
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
	char p[PATH_MAX_];
	cj_path(j, p, "/config");
	if (r->rc == ZOK && !(j->local->overwrite && j->publish)) {
		cj_take_node(j, r->data, (size_t)(r->len > 0 ? r->len : 0), 0);
		reg_server(j);
		return;
	}
	if (r->rc != ZOK && r->rc != ZNONODE) {
		say_rc(j, "reading its config", p, r->rc);
		reg_failed(j);
		return;
	}
	size_t len;
	char *y = conf_node_emit(j->local, &len);
	if (!y) {
		reg_failed(j);
		return;
	}
	int rc = r->rc == ZNONODE ? zkc_create(j->c->z, p, y, (int)len, 0, config_written, j)
	                          : zkc_set(j->c->z, p, y, (int)len, -1, config_written, j);
	free(y);
	if (rc != ZOK) reg_failed(j);
}

static void reg_config(struct cjob *j)
{
	char p[PATH_MAX_];
	if (zkc_get(j->c->z, cj_path(j, p, "/config"), NULL, NULL, config_read, j) != ZOK) reg_failed(j);
}

static void reg_start(struct cjob *j)
{
	if (j->registering || j->gone || j->shut) return;
	j->registering = 1;
	j->leader = 0;
	char p[PATH_MAX_];
	struct group *g = group_new(j, "creating its nodes", reg_config);
	if (!g) return;
	static const char *const dirs[] = { "/servers", "/instances", "/sharding", "/leader", "/leader/election",
	                                    "/leader/sharding", "/leader/failover", "/leader/failover/items",
	                                    "/leader/failover/alive", "/trigger" };
	group_create(g, "", "", 0);
	group_create(g, cj_path(j, p, "%s", ""), type_string(j->local), 0);
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) group_create(g, cj_path(j, p, "%s", dirs[i]), "", 0);
	group_go(g);
}

/* ---- election ------------------------------------------------------------------------------------ */

static void leader_watch(void *arg, int type, const char *path);
static void leader_watch_instances(struct cjob *j);

static void elected(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) return;
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
		if (j->fire && j->fire->state == F_WAIT) cx_continue(j);    /* a fire waiting for sharding */
		return;
	}
	/* someone else won (ZNODEEXISTS at the first op): follow, watching their node */
	cj_elect(j);
}

static void leader_exists(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session)) return;
	if (r->rc == ZOK) {
		/* a leader exists (maybe us: our own create fires the creation watch); the watch
		 * tells when it goes */
		if ((int64_t)r->stat.ephemeralOwner != zkc_session_id(j->c->z)) {
			j->leader = 0;
		} else if (!j->leader) {
			/* ours, but we stepped down (a sharding refused): without its fence we cannot
			 * write as leader; give it up and stand again */
			char p[PATH_MAX_];
			zkc_delete(j->c->z, cj_path(j, p, "/leader/election/instance"), r->stat.version, NULL, NULL);
		}
		return;
	}
	if (r->rc != ZNONODE) return;
	if (cj_conf(j)->disabled || j->server_off || j->shut) return;   /* a disabled server does not lead */
	char p[PATH_MAX_], q[PATH_MAX_];
	const char *id = j->c->id;
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, cj_path(j, p, "/leader/election/instance"), id, (int)strlen(id), ZOO_EPHEMERAL);
	zkc_multi_set(m, cj_path(j, q, "/leader/election"), id, (int)strlen(id), -1);
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
	cj_elect(j);
}

void cj_elect(struct cjob *j)
{
	char p[PATH_MAX_];
	if (zkc_state(j->c->z) != ZKC_CONNECTED) return;
	int w = !j->w_leader;
	if (zkc_exists(j->c->z, cj_path(j, p, "/leader/election/instance"), w ? leader_watch : NULL, j, leader_exists, j) == ZOK &&
	    w)
		j->w_leader = 1;
}

/* ---- the leader keeps the resharding flag ------------------------------------------------------- */

struct flag {
	struct cjob *j;
	char why[300];
};

static void necessary_set(void *arg, const struct zkc_res *r)
{
	struct flag *fl = arg;
	struct cjob *j = fl->j;
	if (r->rc == ZOK)
		log_info("job %s: resharding at the next fire: %s", j->name, fl->why);
	else if (r->nops > 1 && r->op_rc[1] == ZNODEEXISTS)
		log_debug("job %s: resharding is already due (%s)", j->name, fl->why);
	else if (cj_live(j, r->session))
		log_warn("job %s: cannot raise the resharding flag (%s): %s%s", j->name, fl->why, zerror(r->rc),
		         r->nops > 0 && r->op_rc[0] == ZBADVERSION ? ": this instance is no longer the leader" : "");
	free(fl);
}

void cj_set_necessary(struct cjob *j, const char *why)
{
	if (!j->leader) return;
	struct flag *fl = calloc(1, sizeof *fl);
	if (!fl) return;
	fl->j = j;
	snprintf(fl->why, sizeof fl->why, "%s", why);
	char p[PATH_MAX_], q[PATH_MAX_];
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_check(m, cj_path(j, q, "/leader/election"), j->fence);
	zkc_multi_create(m, cj_path(j, p, "/leader/sharding/necessary"), "", 0, 0);
	if (zkc_multi_commit(j->c->z, m, necessary_set, fl) != ZOK) free(fl);
}

void cj_check_owners(struct cjob *j)
{
	if (!j->leader || !j->live || !j->have || j->necessary || j->sharding) return;
	for (uint32_t i = 0; i < j->total; i++) {
		int live = 0;
		for (int k = 0; k < j->nlive && !live; k++) live = j->owner[i] && !strcmp(j->owner[i], j->live[k]);
		if (live) continue;
		char why[300];
		snprintf(why, sizeof why, "item %u is assigned to %.200s, which is not online", i,
		         j->owner[i] && j->owner[i][0] ? j->owner[i] : "no instance");
		cj_set_necessary(j, why);
		return;
	}
}

static void instances_changed(void *arg, int type, const char *path)
{
	struct cjob *j = arg;
	(void)type;
	(void)path;
	j->w_instances = 0;
	if (j->gone || !j->leader) return;
	j->inst_gen++;
	cj_set_necessary(j, "the instances changed");
	leader_watch_instances(j);
}

/* the listing r says the same as live[] (descending, instance ids only, as cf_instances keeps it) */
static int same_as_live(const struct cjob *j, const struct zkc_res *r)
{
	int k = 0;
	for (int i = r->nchildren - 1; i >= 0; i--) {
		if (!cj_id_ok(r->children[i])) continue;
		if (k >= j->nlive || strcmp(r->children[i], j->live[k])) return 0;
		k++;
	}
	return k == j->nlive;
}

static void instances_listed(void *arg, const struct zkc_res *r)
{
	struct cjob *j = arg;
	if (!cj_live(j, r->session) || r->rc != ZOK || !j->leader) return;
	/* a change between two watched listings that no event told (the watch is re-armed by the
	 * listing after each event): the leader's sharding in between must not miss it */
	if (j->live && !same_as_live(j, r)) j->inst_gen++;
	cf_instances(j, r);
	/* A new term: instances that went while no one led (the old leader among them) were seen by
	 * no one; an item owned by an instance that is not online now would run nowhere. Checked at
	 * every listing, not only the first: it costs nothing while the assignment is sound. */
	cj_check_owners(j);
}

static void leader_watch_instances(struct cjob *j)
{
	char p[PATH_MAX_];
	if (j->w_instances) return;
	if (zkc_children(j->c->z, cj_path(j, p, "/instances"), instances_changed, j, instances_listed, j) == ZOK)
		j->w_instances = 1;
}

/* ---- the resharding flag, for everyone ------------------------------------------------------------ */


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
	if (!cj_live(j, r->session)) return;
	int was = j->necessary;
	j->necessary = r->rc == ZOK;
	/* gone: the leader's multi that removed it also wrote the new assignment; read it before a
	 * waiting fire goes on with the old one */
	if (was && !j->necessary) cj_load_assignment(j);
	if (j->fire && j->fire->state == F_WAIT) cx_continue(j);
}

static void watch_necessary(struct cjob *j)
{
	char p[PATH_MAX_];
	int w = !j->w_necessary;
	if (zkc_exists(j->c->z, cj_path(j, p, "/leader/sharding/necessary"), w ? necessary_changed : NULL, j, necessary_known,
	               j) == ZOK && w)
		j->w_necessary = 1;
}

/* ---- session -------------------------------------------------------------------------------------- */

static void on_state(void *arg, enum zkc_state st, int new_session)
{
	coord_t *c = arg;
	uint32_t running, queued;
	int held;
	c->h.counts(c->arg, &running, &queued, &held);
	switch (st) {
	case ZKC_CONNECTED:
		log_info("zookeeper: connected to %s (session 0x%" PRIx64 "%s, timeout %d ms)",
		         c->servers, (uint64_t)zkc_session_id(c->z), new_session ? ", new" : "",
		         zkc_timeout_ms(c->z));
		c->connected = 1;
		/* the connection's lease is fresh (zkc): the workers get it before anything is
		 * dispatched, or a catch-up item could start under the old one and be stopped at once */
		if (new_session) c->lease_stopped = 0;
		lease_back(c, wait_now_ns());
		if (new_session && held) c->h.release(c->arg);
		c->h.pause(c->arg, 0);
		/* completions that ended while ZooKeeper was away */
		for (size_t i = 0; i < c->n; i++) {
			if (new_session) cx_session_lost(c->jobs[i]);
			cx_clear_stale(c->jobs[i]);
		}
		ev_idle_start(c->loop, &c->flush_w);
		for (size_t i = 0; i < c->n; i++) {
			struct cjob *j = c->jobs[i];
			if (new_session) {
				j->reg_session = 0;
				j->registering = 0;
				j->leader = 0;
				j->w_sharding = j->w_necessary = j->w_leader = j->w_instances = j->w_failover = j->w_trigger = j->w_server = j->w_config = j->w_self = 0;
				j->loading = j->states_loading = 0;
				if (j->w_disabled) memset(j->w_disabled, 0, j->w_disabled_n);
				if (j->mis_wait) memset(j->mis_wait, 0, j->mis_wait_n);
				j->clock_inflight = j->reconciling = 0;
				j->clock_next_ns = j->reconcile_next_ns = 0;
				j->stale_pending = 0;
				j->orphan_scan = j->ever_registered;
			}
			if (j->gone && j->retire_zk && !new_session) retire_zk(j);
			if (j->gone && new_session) j->retiring = j->retire_zk = 0;   /* its ephemerals went with the session */
			if (!j->gone && j->reg_session != zkc_session(c->z)) reg_start(j);
			else if (!j->gone) {
				if (j->publish) publish_now(j);
				cj_elect(j);
				watch_necessary(j);
				cj_load_assignment(j);
				cj_kick(j);     /* fires missed while the connection was away */
			}
		}
		break;
	case ZKC_CONNECTING:
		log_info("zookeeper: dispatching paused until the connection is back");
		c->connected = 0;
		c->h.pause(c->arg, 1);
		break;
	case ZKC_EXPIRED: {
		log_warn("zookeeper: session expired; starting a new one (jobs register again)");
		c->connected = 0;
		c->h.pause(c->arg, 1);
		/* what was held for the lease will not run here: its running nodes went with the
		 * session (failover off), or are queued for failover once registered again (on) */
		uint32_t q = queued;
		if (q)
			log_warn("zookeeper: %" PRIu32 " item%s stopped or held for the lease will not run here: the session that "
			         "ran them is gone (with failover: true they run again elsewhere, or here, as failover items)",
			         q, q == 1 ? "" : "s");
		c->h.drop_held(c->arg, "stopped for the lease, and the session expired");
		for (size_t i = 0; i < c->n; i++) {
			c->jobs[i]->reg_session = 0;
			c->jobs[i]->leader = 0;
		}
		break;
	}
	case ZKC_AUTH_FAILED:
		c->connected = 0;
		c->h.pause(c->arg, 1);
		break;
	}
}

coord_t *coord_new(const struct coord_params *cp, const struct coord_hooks *h, void *arg)
{
	coord_t *c = calloc(1, sizeof *c);
	if (!c) return NULL;
	const conf_regcenter_t *rc = &cp->conf->reg_center;
	c->loop = cp->loop;
	c->h = *h;
	c->arg = arg;
	c->fires = cp->fires;
	c->digest = rc->digest != NULL;
	c->kill_grace_s = (uint32_t)cp->conf->supervisor.kill_grace_seconds;
	if (!(c->id = strdup(cp->instance_id)) || !(c->ip = strdup(cp->ip)) || !(c->ns = strdup(rc->namespace)) ||
	    !(c->servers = strdup(rc->server_lists)))
		goto fail;
	struct zkc_params p = {
		.hosts = rc->server_lists, .root = rc->namespace, .session_timeout_ms = rc->session_timeout_ms,
		.digest = rc->digest, .base_sleep_ms = rc->base_sleep_ms, .max_sleep_ms = rc->max_sleep_ms,
	};
	static const struct zkc_hooks zh = { .state = on_state };
	if (!(c->z = zkc_new(c->loop, &p, &zh, c))) goto fail;
	ev_idle_init(&c->flush_w, cx_flush_cb);
	c->flush_w.data = c;
	return c;
fail:
	free(c->id);
	free(c->ip);
	free(c->ns);
	free(c->servers);
	free(c);
	return NULL;
}

void coord_start(coord_t *c)
{
	c->h.pause(c->arg, 1);
	log_info("zookeeper: connecting to %s, namespace /%s", c->servers, c->ns);
	zkc_start(c->z);
}

void coord_stop(coord_t *c)
{
	if (c) c->stopping = 1;
}

static void job_free(struct cjob *j)
{
	if (j->node) conf_job_free(j->node);
	cj_free_owner(j->owner, j->total);
	free(j->completed);
	free(j->disabled);
	free(j->stale);
	free(j->taking);
	free(j->w_disabled);
	free(j->mis_wait);
	for (int k = 0; k < j->nlive; k++) free(j->live[k]);
	free(j->live);
	free(j->name);
	free(j);
}

void coord_free(coord_t *c)
{
	if (!c) return;
	c->closing = 1;
	ev_idle_stop(c->loop, &c->flush_w);
	zkc_free(c->z);
	for (size_t i = 0; i < c->n; i++) {
		if (c->jobs[i]->fire) cx_free(c->jobs[i]->fire);
		for (struct cfire *g = c->jobs[i]->ffires, *n; g; g = n) {
			n = g->next;
			cx_free(g);
		}
		job_free(c->jobs[i]);
	}
	free(c->jobs);
	free(c->id);
	free(c->ip);
	free(c->ns);
	free(c->servers);
	free(c);
}

/* A job removed from the file: it fires no more here, and the console sees it gone at once: its
 * instance node goes, and its leadership if it had it. Its alive node (coord_failover.c) stays
 * until the fires it still runs have ended and written their completions, so that nobody fails
 * them over while they run; then it goes too (cx_end calls cj_retired). */
static void retire_zk(struct cjob *j)
{
	char p[PATH_MAX_];
	zkc_t *z = j->c->z;
	j->retire_zk = 0;
	zkc_delete(z, cj_path(j, p, "/instances/%s", j->c->id), -1, NULL, NULL);
	if (j->leader) {
		j->leader = 0;
		zkc_delete(z, cj_path(j, p, "/leader/election/instance"), -1, NULL, NULL);
	}
	if (!j->fire && !j->ffires) cj_retired(j);
}

void cj_retired(struct cjob *j)
{
	char p[PATH_MAX_];
	if (!j->gone || j->fire || j->ffires || !j->retiring) return;
	j->retiring = 0;
	if (zkc_state(j->c->z) == ZKC_CONNECTED)
		zkc_delete(j->c->z, cj_path(j, p, "/leader/failover/alive/%s", j->c->id), -1, NULL, NULL);
	log_info("job %s: removed from the configuration: it has left the cluster here", j->name);
}

static void retire(struct cjob *j)
{
	/* a private copy of the config in force: the file's goes with the old configuration */
	if (!j->node && j->local) {
		size_t len;
		char *y = conf_node_emit(j->local, &len);
		j->node = y ? conf_node_parse(y, len, j->name, NULL) : NULL;
		free(y);
	}
	j->local = j->node;
	j->gone = 1;
	j->publish = 0;
	if (!j->reg_session) return;
	j->reg_session = 0;
	j->retiring = 1;
	if (zkc_state(j->c->z) == ZKC_CONNECTED) retire_zk(j);
	else j->retire_zk = 1;
}

int coord_set_jobs(coord_t *c, const conf_t *conf)
{
	c->kill_grace_s = (uint32_t)conf->supervisor.kill_grace_seconds;
	for (size_t i = 0; i < c->n; i++) c->jobs[i]->seen = 0;
	for (size_t i = 0; i < conf->n_jobs; i++) {
		const conf_job_t *cj = &conf->jobs[i];
		struct cjob *j = cj_find(c, cj->name);
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
			j->gone = 1;
			c->jobs[c->n++] = j;
		}
		j->seen = 1;
		/* the file's config before this load: none for a new job (or one back after a removal) */
		const conf_job_t *prev = j->gone ? NULL : j->local;
		if (j->gone && j->node) {
			conf_job_free(j->node);     /* the retired job's copy: the node is read again */
			j->node = NULL;
		}
		j->gone = 0;
		j->local = cj;
		int changed = prev && !conf_job_equal(cj, prev);
		if (!prev || changed) j->publish = cj->overwrite;
		if (c->connected && !j->reg_session && !j->retiring) {
			reg_start(j);
		} else if (j->reg_session && changed && j->publish) {
			/* the file is in force here from now on, and published for the others */
			if (j->node) conf_job_free(j->node);
			j->node = NULL;
			if (c->connected) publish_now(j);
		} else if (j->reg_session && changed && j->node) {
			const char *keys[8];
			size_t nk = conf_job_diff(cj, j->node, keys, 8);
			char list[300] = "";
			nk = cj_keys_list(keys, nk, list, sizeof list);
			if (nk)
				log_warn("job %s: the file's %s %s not in force: the config node is (overwrite: false: set overwrite: "
				         "true to publish the file, or change the node)", j->name, list, nk == 1 ? "is" : "are");
		}
		/* the stored config stays in force over the file's (the scheduler just took the file's) */
		if (j->node) c->h.job_conf(c->arg, j->node);
	}
	for (size_t i = 0; i < c->n; i++)
		if (!c->jobs[i]->seen && !c->jobs[i]->gone) retire(c->jobs[i]);
	return 0;
}

/* A fire waits for the assignment for at most twice the session timeout (ElasticJob's followers
 * can wait for ever on a leader that never shards). Past it the fire is missed, and the leader is
 * deposed: its election node is deleted, so that everyone elects again. A leader whose loop hangs
 * while its client library keeps the session alive, or that cannot write its sharding, no longer
 * blocks the job; a leader that is merely slow elects itself or another again and goes on (its
 * old fence fails its writes). */
static void wait_bound(struct cjob *j, uint64_t now_ns, uint64_t timeout)
{
	struct cfire *f = j->fire;
	if (!f || f->state != F_WAIT || !timeout || now_ns - f->fire->started_ns < 2 * timeout) return;
	char p[PATH_MAX_];
	if (!j->reg_session || !cj_live(j, j->reg_session)) {
		log_error("job %s: fire %" PRIu64 " missed: the job is still not registered after %.1fs", j->name, f->fire->fire_ms,
		          (double)(now_ns - f->fire->started_ns) / 1e9);
		f->fire->n = 0;
		f->missed = 1;
		cx_end(f);
		return;
	}
	const char *why = j->stale_pending ? "running nodes left by a lost connection are still being cleared"
	                  : j->loading || j->states_loading ? "the assignment is still being read"
	                  : "the leader has not sharded";
	log_error("job %s: fire %" PRIu64 " missed: no assignment after %.1fs (%s); %s", j->name, f->fire->fire_ms,
	          (double)(now_ns - f->fire->started_ns) / 1e9, why,
	          j->leader ? "this instance steps down as leader" : "deposing the leader: everyone elects again");
	/* first step down: the catch-up fire that cx_end may start must not shard with the old fence */
	j->leader = 0;
	zkc_delete(j->c->z, cj_path(j, p, "/leader/election/instance"), -1, NULL, NULL);
	/* a request that never got its answer would hold the flags: read again from scratch */
	j->loading = j->states_loading = 0;
	j->stale_pending = 0;
	cj_load_assignment(j);
	f->fire->n = 0;
	f->missed = 1;
	cx_end(f);
}

/* The session lease: while ZooKeeper answers, the session surely lives until `lease`; items must
 * be gone before then if it stops answering, since at expiry this instance's nodes vanish and
 * another one may take its items. B, the time they get to stop, is the kill grace plus half a
 * second, but at most half the session timeout (a healthy lease is always more than 2/3 of the
 * timeout ahead, so this never stops anything while ZooKeeper answers). SIGTERM at lease - B,
 * SIGKILL at lease - B/4. Both times go into shared memory too: workers stop their items
 * themselves, and kill what is left, even if this process is frozen. */
/* The lease as the workers must see it, written into every segment (and told to the dispatcher,
 * which takes an unasked stop after it for one made for the lease): from the tick, and at once when
 * a connection brings a fresh one, before anything is dispatched under it. */
static void publish_lease(coord_t *c, uint64_t *deadline_out, uint64_t *kill_out)
{
	uint64_t lease = zkc_lease_ns(c->z);
	uint64_t timeout = (uint64_t)zkc_timeout_ms(c->z) * 1000000u;
	uint64_t b = (uint64_t)c->kill_grace_s * 1000000000u + 500000000u;
	if (timeout && b > timeout / 2) b = timeout / 2;
	uint64_t deadline = lease > b ? lease - b : 0;
	uint64_t kill_at = deadline ? lease - b / 4 : 0;
	/* every tick, not only on change: an external worker may have attached since */
	c->h.lease(c->arg, deadline, kill_at);
	if (deadline_out) *deadline_out = deadline;
	if (kill_out) *kill_out = kill_at;
}

/* The lease is healthy again in the same session: what was stopped for it runs again. */
static void lease_back(coord_t *c, uint64_t now_ns)
{
	uint64_t deadline;
	publish_lease(c, &deadline, NULL);
	if (!c->lease_stopped || !deadline || now_ns >= deadline) return;
	c->lease_stopped = 0;
	uint32_t n, q;
	int held;
	c->h.counts(c->arg, &n, &q, &held);
	log_info("zookeeper: the session is safe again: %" PRIu32 " item%s stopped for the lease run again", q,
	         q == 1 ? "" : "s");
	c->h.release(c->arg);
}

void coord_tick(coord_t *c, uint64_t now_ns)
{
	if (c->connected)
		for (size_t i = 0; i < c->n; i++) {
			struct cjob *j = c->jobs[i];
			if (!j->gone && !j->reg_session && !j->registering && j->reg_retry_ns && now_ns >= j->reg_retry_ns) {
				j->reg_retry_ns = 0;
				reg_start(j);
			}
		}
	uint64_t lease = zkc_lease_ns(c->z);
	uint64_t timeout = (uint64_t)zkc_timeout_ms(c->z) * 1000000u;
	if (c->connected) ev_idle_start(c->loop, &c->flush_w);    /* completions held for their fire */
	for (size_t i = 0; c->connected && i < c->n; i++) {
		wait_bound(c->jobs[i], now_ns, timeout);
		cj_checks(c->jobs[i], now_ns);
	}
	uint64_t deadline, kill_at;
	publish_lease(c, &deadline, &kill_at);
	if (!deadline || now_ns < deadline) {
		if (c->connected && deadline) lease_back(c, now_ns);
		return;
	}
	if (c->lease_stopped) return;
	c->lease_stopped = 1;
	uint32_t n, q;
	int held;
	c->h.counts(c->arg, &n, &q, &held);
	char when[64];
	if (lease > now_ns) snprintf(when, sizeof when, "may expire in %.1fs", (double)(lease - now_ns) / 1e9);
	else snprintf(when, sizeof when, "may have expired %.1fs ago", (double)(now_ns - lease) / 1e9);
	log_error("zookeeper: no answer for %.1fs; the session %s: stopping %" PRIu32 " running item%s (%" PRIu32
	          " more not started) so that no other instance runs them at the same time; they run again here if "
	          "the session comes back, else elsewhere (failover)",
	          (double)(now_ns - (lease - timeout)) / 1e9, when, n, n == 1 ? "" : "s", q);
	/* SIGTERM now, SIGKILL with a quarter of B left; they wait in the queue for the verdict */
	c->h.hold(c->arg, kill_at);
}

uint64_t coord_requests(const coord_t *c)
{
	return zkc_requests(c->z);
}
