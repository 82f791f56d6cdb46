/* bench/lib/floor.c: the registration floor of bench/scale and ZooKeeper's warm-up (floor.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>

#include "bench/lib/bench.h"
#include "bench/lib/floor.h"
#include "t/lib/tlib.h"
#include "t/lib/tzk.h"

/* The requests of supervisor/coord/coord_reg.c as it is on this branch, sent by the ZooKeeper C
 * library alone (no ejob code) as fast as the server takes them: pipelined, at most FL_WINDOW at
 * the server (zkc's ZKC_WINDOW), the jobs' multis packed as zkc_multi_share packs the multis of
 * one turn of its loop (consecutive jobs' ops in one multi request of at most FL_OPS ops and
 * FL_BYTES, counted as zkc_multi_bytes counts them: path + data + 32 an op), assuming every
 * turn holds as many as fit. */

static const char *const fl_dirs[] = { "/servers", "/instances", "/sharding", "/leader", "/leader/election",
                                       "/leader/sharding", "/leader/failover", "/leader/failover/items",
                                       "/leader/failover/alive", "/trigger" };  /* coord_reg.c's job_dirs */

/* the requests at the server, and what came back unexpected */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int out;
	long bad;
	int bad_rc;
	char bad_what[64];
} fl = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, "" };

struct fl_multi {
	int n;
	size_t bytes;                    /* as zkc_multi_bytes */
	zoo_op_t ops[FL_OPS];
	zoo_op_result_t res[FL_OPS];
	struct Stat stats[FL_OPS];
	char *arena;                     /* the paths and the created paths' buffers */
	size_t used, cap;
};

/* one answer: rc is expected if it is one of want (ZOK, or also ZNONODE / ZNODEEXISTS) */
static void fl_answer(int rc, int want1, int want2, const char *what)
{
	pthread_mutex_lock(&fl.mu);
	if (rc != want1 && rc != want2 && !fl.bad++) {
		fl.bad_rc = rc;
		snprintf(fl.bad_what, sizeof fl.bad_what, "%s", what);
	}
	fl.out--;
	pthread_cond_signal(&fl.cv);
	pthread_mutex_unlock(&fl.mu);
}

static void fl_exists_done(int rc, const struct Stat *st, const void *data)
{
	(void)st;
	/* a new namespace: no trigger yet; a restart: there */
	fl_answer(rc, data ? ZNONODE : ZOK, ZOK, "exists(trigger)");
}

static void fl_get_done(int rc, const char *v, int len, const struct Stat *st, const void *data)
{
	(void)v;
	(void)len;
	(void)st;
	(void)data;
	fl_answer(rc, ZOK, ZOK, "get");
}

static void fl_create_done(int rc, const char *name, const void *data)
{
	(void)name;
	(void)data;
	fl_answer(rc, ZOK, ZNODEEXISTS, "create");    /* the resharding flag may be up (reg_join) */
}

static void fl_multi_done(int rc, const void *data)
{
	free(((struct fl_multi *)data)->arena);
	free((void *)data);
	fl_answer(rc, ZOK, ZOK, "multi");
}

/* Wait for room at the server (FL_WINDOW), or (all) for every answer. */
static void fl_room(int all)
{
	pthread_mutex_lock(&fl.mu);
	while (all ? fl.out > 0 : fl.out >= FL_WINDOW) pthread_cond_wait(&fl.cv, &fl.mu);
	if (!all) fl.out++;
	pthread_mutex_unlock(&fl.mu);
}

/* A request could not be sent: the client's own refusal counts as a bad answer. */
static void fl_sent(int rc, const char *what)
{
	if (rc != ZOK) fl_answer(rc, ZOK, ZOK, what);
}

static char *fl_str(struct fl_multi *m, const char *s, size_t extra)
{
	size_t len = strlen(s) + 1 + extra;
	if (m->used + len > m->cap) fail(NULL, "floor: a multi's arena is full (%zu bytes)", m->cap);
	char *p = m->arena + m->used;
	memcpy(p, s, strlen(s) + 1);
	m->used += len;
	return p;
}

static struct fl_multi *fl_multi_new(void)
{
	struct fl_multi *m = calloc(1, sizeof *m);
	if (!m || !(m->arena = malloc(m->cap = 2 * FL_BYTES))) fail(NULL, "out of memory");
	return m;
}

/* an op of a job's multi, staged: its size is known before it is packed */
struct fl_op {
	char path[256];
	const char *data;
	int len, flags, set;             /* 0: create; 1: set (version -1); FL_DELETE */
};
#define FL_DELETE 2

static void fl_op(struct fl_op *o, const char *ns, const char *job, const char *sub, const char *data, int len, int flags,
                  int set)
{
	snprintf(o->path, sizeof o->path, "/%s/%s%s", ns, job, sub);
	o->data = data;
	o->len = len;
	o->flags = flags;
	o->set = set;
}

/* into the multi: its path and data copied (the config is rewritten for the next job) */
static void fl_add(struct fl_multi *m, const struct fl_op *o)
{
	const char *p = fl_str(m, o->path, 0), *d = o->len ? fl_str(m, o->data, 0) : "";
	if (o->set == FL_DELETE) {
		zoo_delete_op_init(&m->ops[m->n], p, -1);
	} else if (o->set) {
		zoo_set_op_init(&m->ops[m->n], p, d, o->len, -1, &m->stats[m->n]);
	} else {
		size_t cap = strlen(o->path) + 16;
		char *created = fl_str(m, "", cap);
		zoo_create_op_init(&m->ops[m->n], p, d, o->len, &ZOO_OPEN_ACL_UNSAFE, o->flags, created, (int)cap);
	}
	m->n++;
}

static void fl_send_multi(zhandle_t *zh, struct fl_multi **mp, long *req, long *ops)
{
	struct fl_multi *m = *mp;
	*mp = NULL;
	if (!m) return;
	fl_room(0);
	(*req)++;
	*ops += m->n;
	/* the client serializes the ops now; the arena holds the created paths until the answer */
	int n = m->n, rc = zoo_amulti(zh, n, m->ops, m->res, fl_multi_done, m);
	if (rc != ZOK) {
		free(m->arena);
		free(m);
		fl_answer(rc, ZOK, ZOK, "multi");
	}
}

/* A job's ops go in the multi being packed unless they would make it too big (zkc_multi_share). */
static struct fl_multi *fl_pack(zhandle_t *zh, struct fl_multi **mp, int nops, size_t bytes, long *req, long *ops)
{
	if (*mp && ((*mp)->n + nops > FL_OPS || (*mp)->bytes + bytes > FL_BYTES)) fl_send_multi(zh, mp, req, ops);
	if (!*mp) *mp = fl_multi_new();
	return *mp;
}

/* One pass: fresh (the namespace new: reg_fresh's path) or not (a restart on the nodes: reg_join's).
 * Its time (s) from zookeeper_init to the last answer; the session is left open in *zhp. */
static double fl_pass(const struct tzk_server *zk, const char *ns, int n, int fresh, const char *cfg, int cfg_len,
                      const char *type, zhandle_t **zhp, long *req, long *ops)
{
	char id[64], inst[160], p[256], sub[96], job[16];
	snprintf(id, sizeof id, "127.0.0.1@-@%d", (int)getpid());                  /* ejob's {ip}@-@{pid} */
	snprintf(inst, sizeof inst, "jobInstanceId: %s\nserverIp: 127.0.0.1\n", id); /* instance_data */
	char *conf = malloc((size_t)cfg_len + 1);
	if (!conf) fail(NULL, "out of memory");
	conf[cfg_len] = 0;
	*req = *ops = 0;
	pthread_mutex_lock(&fl.mu);
	fl.out = 0;
	fl.bad = 0;
	pthread_mutex_unlock(&fl.mu);

	uint64_t t0 = tlib_now_ms();
	/* the longest session ZooKeeper gives (20 ticks): its JVM's full collections with 50,000 jobs'
	 * nodes stall it for seconds, and a floor that gives up then measures nothing (a 6 s session
	 * did: "operation timeout"); the timeout changes no request's cost */
	zhandle_t *zh = tzk_connect(zk->connect, 20 * zk->tick_ms, NULL, 10000);
	if (!zh) fail(NULL, "floor: cannot connect to ZooKeeper");
	struct fl_multi *m = NULL;
	if (fresh) {
		snprintf(p, sizeof p, "/%s", ns);
		fl_room(0);
		(*req)++;
		fl_sent(zoo_acreate(zh, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, fl_create_done, NULL), "create(namespace)");
	}
	for (int j = 0; j < n; j++) {
		snprintf(job, sizeof job, "j%05d", j);
		/* the config as ejob wrote j00000's, with this job's name (the same length) */
		memcpy(conf, cfg, (size_t)cfg_len);
		for (char *c = conf; (c = strstr(c, "j00000")); c += 6) memcpy(c, job, 6);
		/* cj_reg_start: exists(trigger), no watch */
		snprintf(p, sizeof p, "/%s/%s/trigger", ns, job);
		fl_room(0);
		(*req)++;
		fl_sent(zoo_aexists(zh, p, 0, fl_exists_done, fresh ? "fresh" : NULL), "exists(trigger)");
		struct fl_op o[FL_JOB_OPS];
		int k = 0;
		if (fresh) {
			/* reg_fresh: the job's nodes, config, presence, flag and election in one multi */
			fl_op(&o[k++], ns, job, "", type, (int)strlen(type), 0, 0);
			for (size_t i = 0; i < sizeof fl_dirs / sizeof fl_dirs[0]; i++) fl_op(&o[k++], ns, job, fl_dirs[i], "", 0, 0, 0);
			fl_op(&o[k++], ns, job, "/config", conf, cfg_len, 0, 0);
			fl_op(&o[k++], ns, job, "/servers/127.0.0.1", "ENABLED", 7, 0, 0);
			snprintf(sub, sizeof sub, "/instances/%s", id);
			fl_op(&o[k++], ns, job, sub, inst, (int)strlen(inst), ZOO_EPHEMERAL, 0);
			snprintf(sub, sizeof sub, "/leader/failover/alive/%s", id);
			fl_op(&o[k++], ns, job, sub, "", 0, ZOO_EPHEMERAL, 0);
			fl_op(&o[k++], ns, job, "/leader/sharding/necessary", "", 0, 0, 0);
			fl_op(&o[k++], ns, job, "/leader/election/instance", id, (int)strlen(id), ZOO_EPHEMERAL, 0);
			fl_op(&o[k++], ns, job, "/leader/election", id, (int)strlen(id), 0, 1);
		} else {
			/* reg_config: get(root), get(config); reg_join: create the flag (no multi), then the
			 * shared multi of instances/{id}, the alive node and servers/{ip} */
			snprintf(p, sizeof p, "/%s/%s", ns, job);
			fl_room(0);
			(*req)++;
			fl_sent(zoo_aget(zh, p, 0, fl_get_done, NULL), "get(root)");
			snprintf(p, sizeof p, "/%s/%s/config", ns, job);
			fl_room(0);
			(*req)++;
			fl_sent(zoo_aget(zh, p, 0, fl_get_done, NULL), "get(config)");
			snprintf(p, sizeof p, "/%s/%s/leader/sharding/necessary", ns, job);
			fl_room(0);
			(*req)++;
			fl_sent(zoo_acreate(zh, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, fl_create_done, NULL), "create(necessary)");
			snprintf(sub, sizeof sub, "/instances/%s", id);
			fl_op(&o[k++], ns, job, sub, inst, (int)strlen(inst), ZOO_EPHEMERAL, 0);
			snprintf(sub, sizeof sub, "/leader/failover/alive/%s", id);
			fl_op(&o[k++], ns, job, sub, "", 0, ZOO_EPHEMERAL, 0);
			fl_op(&o[k++], ns, job, "/servers/127.0.0.1", "ENABLED", 7, 0, 1);
		}
		/* zkc_multi_bytes counts the path inside the namespace, its data and 32 an op */
		size_t bytes = 0;
		for (int i = 0; i < k; i++) bytes += strlen(o[i].path) - strlen(ns) - 1 + (size_t)o[i].len + 32;
		fl_pack(zh, &m, k, bytes, req, ops);
		for (int i = 0; i < k; i++) fl_add(m, &o[i]);
		m->bytes += bytes;
	}
	fl_send_multi(zh, &m, req, ops);
	fl_room(1);
	double s = (double)(tlib_now_ms() - t0) / 1e3;
	free(conf);
	if (fl.bad)
		fail(NULL, "floor (%s, %d jobs): %ld requests answered unexpectedly, the first: %s: %s",
		     fresh ? "new namespace" : "restart",
		     n, fl.bad, fl.bad_what, zerror(fl.bad_rc));
	*zhp = zh;
	return s;
}

void run_floor(const struct tzk_server *zk, const char *ejob_ns, int n, struct floor_run *f)
{
	memset(f, 0, sizeof *f);
	f->fresh_s = f->restart_s = -1;
	char p[256], cfg[65536], type[64];
	int cfg_len = sizeof cfg, type_len = sizeof type - 1;
	zhandle_t *zh = tzk_connect(zk->connect, 10000, NULL, 10000);
	if (!zh) fail(NULL, "floor: cannot connect to ZooKeeper");
	snprintf(p, sizeof p, "/%s/j00000/config", ejob_ns);
	int rc = zoo_get(zh, p, 0, cfg, &cfg_len, NULL);
	if (rc != ZOK || cfg_len <= 0) fail(NULL, "floor: cannot read ejob's %s: %s", p, zerror(rc));
	snprintf(p, sizeof p, "/%s/j00000", ejob_ns);
	rc = zoo_get(zh, p, 0, type, &type_len, NULL);
	if (rc != ZOK || type_len < 0) fail(NULL, "floor: cannot read ejob's %s: %s", p, zerror(rc));
	type[type_len] = 0;
	tzk_close(zh);
	f->cfg_len = cfg_len;

	char ns[32];
	snprintf(ns, sizeof ns, "fl%d", n);
	long long z0 = zk_num(zk, "mntr", "zk_znode_count");
	f->fresh_s = fl_pass(zk, ns, n, 1, cfg, cfg_len, type, &zh, &f->fresh_req, &f->fresh_ops);
	f->znodes = zk_num(zk, "mntr", "zk_znode_count") - z0;
	tzk_close(zh);       /* its ephemerals go with it */
	f->restart_s = fl_pass(zk, ns, n, 0, cfg, cfg_len, type, &zh, &f->restart_req, &f->restart_ops);
	tzk_close(zh);
}

/* The warm-up's namespace gone (its session closed, so its ephemerals are): each job's nodes in
 * multis, children first (the namespace's own last), as fast as the server takes them. */
static void fl_delete(const struct tzk_server *zk, const char *ns, int n)
{
	static const char *const leaves[] = { "/servers/127.0.0.1", "/leader/sharding/necessary", "/config" };
	char job[16], p[256];
	long req = 0, ops = 0;
	pthread_mutex_lock(&fl.mu);
	fl.out = 0;
	fl.bad = 0;
	pthread_mutex_unlock(&fl.mu);
	zhandle_t *zh = tzk_connect(zk->connect, 20 * zk->tick_ms, NULL, 10000);
	if (!zh) fail(NULL, "floor: cannot connect to ZooKeeper");
	struct fl_multi *m = NULL;
	for (int j = 0; j < n; j++) {
		struct fl_op o[FL_JOB_OPS];
		int k = 0;
		snprintf(job, sizeof job, "j%05d", j);
		for (size_t i = 0; i < sizeof leaves / sizeof leaves[0]; i++) fl_op(&o[k++], ns, job, leaves[i], "", 0, 0, FL_DELETE);
		for (size_t i = sizeof fl_dirs / sizeof fl_dirs[0]; i-- > 0;) fl_op(&o[k++], ns, job, fl_dirs[i], "", 0, 0, FL_DELETE);
		fl_op(&o[k++], ns, job, "", "", 0, 0, FL_DELETE);
		size_t bytes = 0;
		for (int i = 0; i < k; i++) bytes += strlen(o[i].path) + 32;
		fl_pack(zh, &m, k, bytes, &req, &ops);
		for (int i = 0; i < k; i++) fl_add(m, &o[i]);
		m->bytes += bytes;
	}
	fl_send_multi(zh, &m, &req, &ops);
	fl_room(1);
	snprintf(p, sizeof p, "/%s", ns);
	int rc = zoo_delete(zh, p, -1);
	if (fl.bad || rc != ZOK)
		fail(NULL, "ZooKeeper's warm-up: cannot delete namespace %s: %s (%s)", ns, zerror(fl.bad ? fl.bad_rc : rc),
		     fl.bad ? fl.bad_what : "its node");
	tzk_close(zh);
}

/* ZooKeeper's JVM at its steady speed before part A: a fresh JVM compiles its hot paths (C2) and
 * sizes its heap's generations as it goes, and the same floor pass of 10,000 jobs took 4.46, then
 * 2.96, then 2.28 s in three rounds. Warmed by one round of 1,000 jobs only, the first thing
 * measured (ejob's registration) paid for that and the floor, measured after it on a warm JVM,
 * did not. A production ZooKeeper has been running for days. Rounds of the floor's requests for
 * WARM_JOBS jobs (a new namespace, a restart, the namespace deleted: ZooKeeper's data as it was)
 * until the best of the last 3 rounds is within 10% of the best before them: the JVM got no
 * faster. */
void floor_warm_up(const struct tzk_server *zk, struct warm *w)
{
	char cfg[481];
	memset(cfg, 'x', sizeof cfg - 1);
	cfg[sizeof cfg - 1] = 0;
	memcpy(cfg, "jobName: j00000\n", 16);
	memset(w, 0, sizeof *w);
	while (w->rounds < WARM_MAX) {
		zhandle_t *zh;
		long req, ops;
		double s = fl_pass(zk, "warm", WARM_JOBS, 1, cfg, (int)sizeof cfg - 1, "NATIVE", &zh, &req, &ops);
		tzk_close(zh);
		fl_pass(zk, "warm", WARM_JOBS, 0, cfg, (int)sizeof cfg - 1, "NATIVE", &zh, &req, &ops);
		tzk_close(zh);
		fl_delete(zk, "warm", WARM_JOBS);
		w->fresh_s[w->rounds++] = s;
		if (w->rounds < WARM_MIN) continue;
		double last = s, before = w->fresh_s[0];
		for (int i = w->rounds - 3; i < w->rounds; i++) last = w->fresh_s[i] < last ? w->fresh_s[i] : last;
		for (int i = 0; i < w->rounds - 3; i++) before = w->fresh_s[i] < before ? w->fresh_s[i] : before;
		if (last >= 0.9 * before) break;
	}
}
