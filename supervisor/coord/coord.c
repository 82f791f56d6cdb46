/* supervisor/coord/coord.c: the jobs of this supervisor in ZooKeeper (coord.h): the session's changes
 * told to every concern, the jobs a config brings and removes, the tick. What each concern owns
 * is in coord_int.h. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/wait.h"
#include "supervisor/coord/coord_int.h"
#include "supervisor/run/listen.h"

const char *cj_vpath(char *buf, const char *job, const char *fmt, va_list ap)
{
	int k = snprintf(buf, CJ_PATH_MAX, "/%s", job);
	EJOB_CHECK(k > 0 && k < CJ_PATH_MAX, "a job's node path fits CJ_PATH_MAX");
	int n = vsnprintf(buf + k, CJ_PATH_MAX - (size_t)k, fmt, ap);
	/* a cut path would name another node: never written to */
	EJOB_CHECK(n >= 0 && n < CJ_PATH_MAX - k, "a job's node path fits CJ_PATH_MAX");
	return buf;
}

const char *cj_path(const struct cjob *j, char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cj_vpath(buf, j->name, fmt, ap);
	va_end(ap);
	return buf;
}

zkc_keep_t *cj_keep(struct cjob *j, zkc_keep_t **slot, enum zkc_keep_kind kind, const char *path, uint32_t item,
                    zkc_cb cb)
{
	if (!*slot && !(*slot = zkc_keep_new(j->c->z, kind, path, item, cb, j)))
		log_error("job %s: out of memory: cannot watch /%s%s", j->name, j->c->ns, path);
	return *slot;
}

zkc_keep_t **cj_keep_at(zkc_keep_t ***v, uint32_t *n, uint32_t i)
{
	if (i >= *n) {
		uint32_t m = i + 1 > 2 * *n ? i + 1 : 2 * *n;
		zkc_keep_t **w = realloc(*v, m * sizeof *w);
		if (!w) return NULL;
		memset(w + *n, 0, (m - *n) * sizeof *w);
		*v = w;
		*n = m;
	}
	return &(*v)[i];
}

void cj_keeps_free(zkc_keep_t **v, uint32_t n)
{
	for (uint32_t i = 0; v && i < n; i++) {
		zkc_keep_free(v[i]);
		v[i] = NULL;
	}
}

void cj_kick(struct cjob *j)
{
	if (!j->gone) j->c->h.kick(j->c->arg, j->name);
}

void cj_event(struct cjob *j, struct event *ev)
{
	ev->job = j->name;
	events_emit(fires_events(j->c->fires), ev);
}

void cj_set_leader(struct cjob *j, int on)
{
	if (!j->lead.leader == !on) return;
	j->lead.leader = on;
	if (!on) cj_shard_eager_off(j);
	struct event ev = { .type = EVT_LEADER, .reason = on ? "gained" : "lost" };
	cj_event(j, &ev);
}

/* the session's changes, as events (no job) */
static void session_event(coord_t *c, const char *state)
{
	char id[24];
	snprintf(id, sizeof id, "0x%" PRIx64, (uint64_t)zkc_session_id(c->z));
	struct event ev = { .type = EVT_SESSION, .reason = state, .detail = id };
	events_emit(fires_events(c->fires), &ev);
}

static const char *job_name(const void *arr, size_t i)
{
	return ((struct cjob *const *)arr)[i]->name;
}

/* jobs are only ever appended (a removed one stays, gone) */
struct cjob *cj_find(coord_t *c, const char *name)
{
	size_t i = nidx_find(&c->ix, c->jobs, c->n, job_name, name);
	return i == (size_t)-1 ? NULL : c->jobs[i];
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

/* ---- session -------------------------------------------------------------------------------------- */

static void retire_zk(struct cjob *j);

/* A new session: what each concern knew of the old one is void, and zkc has unarmed its kept
 * watches; each concern starts over (registration arms the watches again). */
static void session_new(struct cjob *j)
{
	cj_reg_session(j);
	cj_lead_session(j);
	cj_assign_session(j);
	cx_running_session(j);
	cj_check_session(j);
}

static void on_gave_up(void *arg, const char *why)
{
	coord_t *c = arg;
	if (c->h.unreachable) c->h.unreachable(c->arg, why);
}

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
		c->connected = c->ever_connected = 1;
		cj_due(c, 0);           /* waits bounded by the timeout, checks of a new session (coord_tick) */
		session_event(c, new_session ? "connected_new_session" : "connected");
		/* the connection's lease is fresh (zkc): the workers get it before anything is
		 * dispatched, or a catch-up item could start under the old one and be stopped at once */
		if (new_session) c->lease_stopped = 0;
		cl_lease_back(c, wait_now_ns());
		if (new_session && held) c->h.release(c->arg);
		c->h.pause(c->arg, 0);
		/* completions that ended while ZooKeeper was away */
		for (size_t i = 0; i < c->n; i++) {
			if (new_session) cx_session_lost(c->jobs[i]);
			cx_clear_stale(c->jobs[i]);
		}
		cx_flush_held(c);
		/* the namespace, before any job's registration (answered in order): a new namespace would
		 * refuse every new job's multi (coord_reg.c) */
		if (new_session) zkc_create(c->z, "", "", 0, 0, NULL, NULL);
		if (new_session) ca_session(c);
		for (size_t i = 0; i < c->n; i++) {
			struct cjob *j = c->jobs[i];
			if (new_session) session_new(j);
			if (j->retire_zk && !new_session) retire_zk(j);
			if (new_session) j->retiring = j->retire_zk = 0;   /* its ephemerals went with the session */
			cx_once_state(j, 1);
			cx_bar_state(j, 1);
			cj_flow_connected(j);
			if (!j->gone && j->reg.session != zkc_session(c->z)) cj_reg_start(j);
			else if (!j->gone) {
				if (j->reg.publish) cj_publish_now(j);
				cj_elect(j);
				cj_watch_necessary(j);
				cj_load_assignment(j);
				cj_kick(j);     /* fires missed while the connection was away */
			}
		}
		break;
	case ZKC_CONNECTING:
		log_info("zookeeper: dispatching paused until the connection is back");
		if (c->connected) session_event(c, "disconnected");
		c->connected = 0;
		c->h.pause(c->arg, 1);
		for (size_t i = 0; i < c->n; i++) cx_once_state(c->jobs[i], 0), cx_bar_state(c->jobs[i], 0);
		break;
	case ZKC_EXPIRED: {
		log_warn("zookeeper: session expired; starting a new one (jobs register again)");
		session_event(c, "expired");
		c->connected = 0;
		for (size_t i = 0; i < c->n; i++) cx_once_state(c->jobs[i], 0), cx_bar_state(c->jobs[i], 0);
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
			cj_reg_session(c->jobs[i]);
			cj_lead_session(c->jobs[i]);
		}
		break;
	}
	case ZKC_AUTH_FAILED:
		session_event(c, "auth_failed");
		c->connected = 0;
		c->h.pause(c->arg, 1);
		break;
	}
}

/* ZooKeeper has room: the watches that wait for it (coord_reg.c) */
static void on_idle(void *arg)
{
	coord_t *c = arg;
	if (!c->closing) cj_arm_pump(c);
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
		/* ElasticJob's registry center gives up at start after its retries (Curator's
		 * ExponentialBackoffRetry, maxRetries: the first try and maxRetries more) and its wait
		 * (blockUntilConnected, maxSleepTimeMilliseconds x maxRetries) */
		.start_rounds = rc->max_retries + 1, .start_wait_ms = rc->max_sleep_ms * rc->max_retries,
	};
	static const struct zkc_hooks zh = { .state = on_state, .gave_up = on_gave_up, .idle = on_idle };
	tz_err_t tze;
	if (!(c->local = tz_load_default(&tze))) c->local = tz_fixed("UTC", 0);   /* the scheduler says why */
	if (!c->local) goto fail;
	if (!(c->listen = listen_new(c->loop))) goto fail;
	if (!(c->z = zkc_new(c->loop, &p, &zh, c))) goto fail;
	ev_idle_init(&c->due.flush_w, cx_flush_cb);
	c->due.flush_w.data = c;
	return c;
fail:
	listen_free(c->listen);
	tz_free(c->local);
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
	if (!c) return;
	c->stopping = 1;
	/* a fire waiting for beforeAll has run nothing yet: it ends now (a run of it here is killed,
	 * and the others take it over once our claim is gone) */
	for (size_t i = 0; i < c->n; i++) cx_bar_stop(c->jobs[i]);
	for (size_t i = 0; i < c->n; i++) cj_leave(c->jobs[i], CJ_LEFT_STOP);
}

void coord_drain(coord_t *c)
{
	if (!c) return;
	c->drained = 1;
	for (size_t i = 0; i < c->n; i++) cj_leave(c->jobs[i], CJ_LEFT_DRAIN);
}

uint32_t coord_busy(const coord_t *c)
{
	uint32_t n = 0;
	if (!c || zkc_state(c->z) == ZKC_EXPIRED) return 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct cjob *j = c->jobs[i];
		n += j->fx.fire != NULL;
		for (const struct cfire *f = j->fx.side; f; f = f->next) n++;
	}
	return n;
}

/* A removed job watches nothing (registration, if it comes back, arms every watch again). */
static void unwatch(struct cjob *j)
{
	cj_arm_forget(j);
	cj_flow_free(j);
	j->c->flow_dirty = 1;       /* it may have been what made a root one */
	cj_config_unwatch(j);
	cj_lead_unwatch(j);
	cj_assign_unwatch(j);
	cx_running_unwatch(j);
	cf_unwatch(j);
	cj_ops_unwatch(j);
}

static void job_free(struct cjob *j)
{
	cx_once_free(j);
	cj_flow_free(j);
	cj_config_free(j);
	cj_lead_free(j);
	cj_assign_free(j);
	cj_last_free(j);
	cx_running_free(j);
	cj_shard_free(j);
	cf_free(j);
	cj_ops_unwatch(j);
	cj_arm_forget(j);
	cj_reg_forget(j);
	free(j->adopt.why);
	free(j->name);
	free(j);
}

void coord_free(coord_t *c)
{
	if (!c) return;
	c->closing = 1;
	ev_idle_stop(c->loop, &c->due.flush_w);
	ca_free(c);
	zkc_free(c->z);
	for (size_t i = 0; i < c->n; i++) {
		cx_fires_free(c->jobs[i]);
		job_free(c->jobs[i]);
	}
	listen_free(c->listen);   /* after the fires: theirs are cancelled with them */
	free(c->jobs);
	nidx_free(&c->ix);
	free(c->id);
	free(c->ip);
	free(c->ns);
	free(c->servers);
	tz_free(c->local);
	free(c);
}

/* A job removed from the file: it fires no more here, and the console sees it gone at once: its
 * instance node goes, and its leadership if it had it. Its alive node (coord_failover.c) stays
 * until the fires it still runs have ended and written their completions, so that nobody fails
 * them over while they run; then it goes too (cx_end calls cj_retired). */
static void retire_zk(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	zkc_t *z = j->c->z;
	j->retire_zk = 0;
	zkc_delete(z, cj_path(j, p, "/instances/%s", j->c->id), -1, NULL, NULL);
	cj_step_down(j);
	if (!j->fx.fire && !j->fx.side) cj_retired(j);
}

/* Its last fire has ended: its alive node goes. A job that came back meanwhile (the file again,
 * allowed again) registers now, after that delete, so that it is not its new alive node that goes. */
void cj_retired(struct cjob *j)
{
	char p[CJ_PATH_MAX];
	if (j->fx.fire || j->fx.side || !j->retiring) return;
	j->retiring = 0;
	if (zkc_state(j->c->z) == ZKC_CONNECTED)
		zkc_delete(j->c->z, cj_path(j, p, "/leader/failover/alive/%s", j->c->id), -1, NULL, NULL);
	log_info("job %s: %s: it has left the cluster here", j->name,
	         j->adopt.refused ? "refused by supervisor.allowedCommands" : "removed from the configuration");
	if (!j->gone && j->c->connected && !j->reg.session) cj_reg_start(j);
}

/* The job stays (scheduled: its fires are skipped, coord_fire.c) but leaves the cluster here as a
 * removed job does: an adopted job refused by allowedCommands. */
void cj_withdraw(struct cjob *j)
{
	unwatch(j);
	if (!cj_reg_leave(j)) return;
	j->retiring = 1;
	if (zkc_state(j->c->z) == ZKC_CONNECTED) retire_zk(j);
	else j->retire_zk = 1;
}

void cj_retire(struct cjob *j)
{
	/* a private copy of the config in force: the file's goes with the old configuration */
	j->local = cj_node_pin(j);
	j->gone = 1;
	j->c->h.job_conf(j->c->arg, j->name, NULL, NULL);
	unwatch(j);
	cj_publish_due(j, 0);
	if (!cj_reg_leave(j)) return;
	j->retiring = 1;
	if (zkc_state(j->c->z) == ZKC_CONNECTED) retire_zk(j);
	else j->retire_zk = 1;
}

struct cjob *cj_add(coord_t *c, const char *name)
{
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 16;
		struct cjob **v = realloc(c->jobs, nc * sizeof *v);
		if (!v) return NULL;
		c->jobs = v;
		c->cap = nc;
	}
	struct cjob *j = calloc(1, sizeof *j);
	if (!j || !(j->name = strdup(name))) {
		free(j);
		return NULL;
	}
	j->c = c;
	j->gone = 1;
	c->jobs[c->n++] = j;
	nidx_add(&c->ix, c->jobs, c->n, job_name, c->n - 1);
	/* a job a reload (or adoption) brings to a drained supervisor stays out, as the others */
	if (c->drained) {
		j->ops.shut = 1;
		j->ops.left = CJ_LEFT_DRAIN;
	}
	return j;
}

int coord_set_jobs(coord_t *c, const conf_t *conf)
{
	c->kill_grace_s = (uint32_t)conf->supervisor.kill_grace_seconds;
	for (size_t i = 0; i < c->n; i++) c->jobs[i]->seen = 0;
	for (size_t i = 0; i < conf->n_jobs; i++) {
		const conf_job_t *cj = &conf->jobs[i];
		struct cjob *j = cj_find(c, cj->name);
		if (!j && !(j = cj_add(c, cj->name))) return -1;
		if (j->adopt.on) {
			/* adopted, and now in the file: the file's rules from now on (its node stays in force
			 * unless the file says overwrite: true) */
			log_info("job %s: now in the file: no longer adopted by its label", j->name);
			j->adopt.on = j->adopt.refused = 0;
			if (j->reg.session) cj_watch_config(j);   /* its node's watch was its candidate's */
		}
		j->seen = 1;
		/* the file's config before this load: none for a new job (or one back after a removal) */
		const conf_job_t *prev = j->gone ? NULL : j->local;
		if (j->gone) cj_node_drop(j);     /* the retired job's copy: the node is read again */
		int changed = prev && !conf_job_equal(cj, prev);
		/* the node said what the old file says (cfg.node NULL: kept once, as the file's); it stays
		 * in force unless this file publishes itself: keep a copy of it before the file goes */
		if (changed && !cj->overwrite && j->reg.session) cj_node_pin(j);
		j->gone = 0;
		j->local = cj;
		j->file = conf;
		if (!prev || changed) cj_publish_due(j, cj->overwrite);
		if (c->connected && !j->reg.session && !j->retiring) {
			cj_reg_start(j);
		} else if (j->reg.session && changed && j->reg.publish) {
			/* the file is in force here from now on, and published for the others */
			cj_node_drop(j);
			if (c->connected) cj_publish_now(j);
		} else if (j->reg.session && changed && j->cfg.node) {
			const char *keys[8];
			size_t nk = conf_job_diff(cj, j->cfg.node, keys, 8);
			char list[300] = "";
			nk = cj_keys_list(keys, nk, list, sizeof list);
			if (nk)
				log_warn("job %s: the file's %s %s not in force: the config node is (overwrite: false: set overwrite: "
				         "true to publish the file, or change the node)", j->name, list, nk == 1 ? "is" : "are");
		}
		/* what is in force (the stored config over the file's), to the scheduler */
		c->h.job_conf(c->arg, j->name, cj_conf(j), j);
		c->flow_dirty = 1;
	}
	for (size_t i = 0; i < c->n; i++)
		if (!c->jobs[i]->seen && !c->jobs[i]->gone && !c->jobs[i]->adopt.on) cj_retire(c->jobs[i]);
	cj_due(c, 0);               /* the checks of a changed config (cj_checks) */
	/* the labels may have changed, and a job that left the file may be adopted now */
	return ca_set(c, conf);
}

void cj_due(coord_t *c, uint64_t when_ns)
{
	if (when_ns < c->due.scan_ns) c->due.scan_ns = when_ns;
}

static uint64_t earlier(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

void coord_tick(coord_t *c, uint64_t now_ns)
{
	/* completions held for their fire (COMPLETION_HOLD_NS), or for the connection */
	if (c->connected) cx_flush_held(c);
	if (c->connected && now_ns >= c->due.scan_ns) {
		uint64_t timeout = (uint64_t)zkc_timeout_ms(c->z) * 1000000u;
		uint64_t next = now_ns + CJ_SCAN_IDLE_MS * 1000000ull;
		c->due.scan_ns = UINT64_MAX;        /* what the look below makes due lowers it */
		for (size_t i = 0; i < c->n; i++) {
			struct cjob *j = c->jobs[i];
			next = earlier(next, cj_reg_tick(j, now_ns));
			next = earlier(next, cj_wait_bound(j, now_ns, timeout));
			next = earlier(next, cj_checks(j, now_ns));
		}
		cj_due(c, next);
	}
	cj_shard_pump(c, now_ns, c->n);     /* eager shardings now due */
	if (zkc_backlog(c->z) <= ZKC_WINDOW / 2) cj_arm_pump(c);   /* no answer came to call it */
	cl_lease_tick(c, now_ns);
	/* After a burst of fires (10,000 jobs due in the same second) has ended, what its fires and
	 * requests held is free, but glibc keeps the pages: RSS stayed at the burst's peak (154 MB
	 * at 10,000 jobs, 95 MB trimmed). Once per burst, when it is over. */
	if (c->fires_burst >= CJ_TRIM_FIRES && c->fires_live < CJ_TRIM_FIRES / 10 && zkc_backlog(c->z) < ZKC_WINDOW / 4) {
		c->fires_burst = 0;
		malloc_trim(0);
	}
}

/* A loop over the jobs (10,000: some 10 us), looked at a few times a second: counting as
 * registrations come and go would touch every path that ends one. */
void coord_status(const coord_t *c, struct coord_status *st)
{
	uint64_t session = zkc_session(c->z);
	memset(st, 0, sizeof *st);
	st->connected = c->connected;
	st->ever_connected = c->ever_connected;
	st->lease_ns = zkc_lease_ns(c->z);
	for (size_t i = 0; i < c->n; i++) {
		const struct cjob *j = c->jobs[i];
		if (j->gone || j->ops.shut) continue;
		st->jobs++;
		if (session && j->reg.session == session) st->registered++;
	}
}

uint64_t coord_requests(const coord_t *c)
{
	return zkc_requests(c->z);
}

void coord_stats(const coord_t *c, struct coord_stats *st)
{
	memset(st, 0, sizeof *st);
	switch (zkc_state(c->z)) {
	case ZKC_CONNECTED: st->session = COORD_CONNECTED; break;
	case ZKC_EXPIRED: st->session = COORD_EXPIRED; break;
	case ZKC_AUTH_FAILED: st->session = COORD_AUTH_FAILED; break;
	default: st->session = COORD_CONNECTING; break;
	}
	st->session_id = zkc_session_id(c->z);
	st->timeout_ms = zkc_timeout_ms(c->z);
	st->requests = zkc_requests(c->z);
	st->errors = zkc_errors(c->z);
	st->expirations = zkc_expirations(c->z);
	st->failovers = c->failovers;
	st->misfires = c->misfires;
	/* cut off from ZooKeeper, this instance cannot know that it still leads */
	for (size_t i = 0; i < c->n && c->connected; i++) st->leader_of += !c->jobs[i]->gone && c->jobs[i]->lead.leader;
}

/* slot i of the job table: O(1), so that a page over 10,000 jobs costs 10,000 steps */
int coord_job_at(const coord_t *c, size_t i, struct coord_job *out)
{
	if (i >= c->n) return -1;
	const struct cjob *j = c->jobs[i];
	if (j->gone) return 1;
	out->name = j->name;
	out->registered = cj_registered(j);
	out->leader = j->lead.leader && c->connected;
	out->shut = j->ops.shut;
	out->total = (uint32_t)cj_conf(j)->sharding_total_count;
	out->epoch = j->as.have ? j->as.epoch : 0;
	return 0;
}

const conf_job_t *coord_job_conf(coord_t *c, const char *job)
{
	struct cjob *j = cj_find(c, job);
	return j ? cj_conf(j) : NULL;
}
