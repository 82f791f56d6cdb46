/* supervisor/main.c: ejob-supervisor: command line, configuration, the event loop, signals. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/shm.h"
#include "ipc/wait.h"
#include "supervisor/sink/events_history.h"
#include "supervisor/sink/events_pg.h"
#include "supervisor/sup.h"

#ifndef EJOB_LIBEXEC
#define EJOB_LIBEXEC "/usr/local/libexec/ejob"
#endif

static const char usage_text[] =
"usage: ejob-supervisor [-c FILE] [--workers N] [--zk HOSTS] [--namespace NS] [--ip IP]\n"
"                       [--log-level LEVEL] [--worker-bin PATH] [--socket PATH] [--metrics ADDR]\n"
"       ejob-supervisor -c FILE [--workers N] --standalone\n"
"       ejob-supervisor -c FILE [--workers N] --run JOB[:ITEM,ITEM...] [--wait SECONDS]\n"
"\n"
"Runs ejob's per-machine supervisor in the foreground, logging to stderr: a pool of pre-forked\n"
"ejob-worker processes fed through shared memory, and the attach socket for external workers.\n"
"\n"
"  -c, --config FILE     the YAML configuration (docs/config.md)\n"
"      --workers N       pool size (default: supervisor.workers, else the number of CPUs)\n"
"      --zk HOSTS        ZooKeeper servers host:port,... (overrides regCenter.serverLists)\n"
"      --namespace NS    ZooKeeper root node (overrides regCenter.namespace)\n"
"      --ip IP           this machine's address in instance ids (default: detected)\n"
"      --log-level L     error, warn, info (default) or debug\n"
"      --worker-bin PATH the ejob-worker binary (default: $EJOB_WORKER_BIN, else next to this one)\n"
"      --socket PATH     the attach socket (default: supervisor.attachSocket, else docs/worker.md)\n"
"      --metrics ADDR    serve /metrics (Prometheus), /healthz and /status on ADDR, e.g. 127.0.0.1:9464\n"
"                        (default: supervisor.metrics, else none)\n"
"      --run JOB[:ITEMS] run one fire of JOB here and now, without ZooKeeper: all its items, or\n"
"                        the listed ones (JOB:0,2,5); exit 0 only if every item succeeded\n"
"      --wait SECONDS    --run of an external job: give up (exit 1) when no worker serving it has\n"
"                        attached on the attach socket for this long (default 30; 0: wait for ever)\n"
"      --standalone      schedule the jobs without ZooKeeper: every item of every fire runs here\n"
"  -h, --help            this text\n"
"  -V, --version         the version\n"
"\n"
"Signals: SIGTERM/SIGINT stop: every job leaves this instance, running items get shutdownGraceSeconds\n"
"to finish, then are stopped (external workers too, and waited for) and, with failover, handed over\n"
"to the other instances; SIGUSR2 drains: the same without exiting (docs/operations.md); SIGHUP\n"
"reloads the configuration (on error the old one stays).\n"
"Exit status: 0 clean stop (or --run: every item succeeded, even if a signal stopped it), 1 runtime\n"
"failure (or --run: an item failed or was stopped before it ended), 2 usage or configuration error.\n";

/* ---- configuration ----------------------------------------------------------------------------- */

/* Keys a job sets that this version does not act on: said at every load, so nobody counts on them. */
static void warn_unacted(const conf_t *c)
{
	for (size_t i = 0; i < c->n_jobs; i++) {
		const conf_job_t *j = &c->jobs[i];
		conf_unacted_t u[CONF_UNACTED_MAX];
		size_t n = conf_job_unacted(j, u);
		for (size_t k = 0; k < n; k++) log_warn("%s:%u: jobs.%s.%s: %s", c->file, j->line, j->name, u[k].key, u[k].text);
	}
}

static conf_t *load_config(struct sup *s, int quiet_ok)
{
	conf_opts_t o;
	memset(&o, 0, sizeof o);
	conf_opts_system(&o);
	o.server_lists = s->opts.zk;
	o.namespace = s->opts.ns;
	o.ip = s->opts.ip;
	o.workers = s->opts.workers;
	o.metrics = s->opts.metrics;
	char *buf = NULL;
	size_t len = 0;
	if (conf_read_file(s->opts.config, &buf, &len) < 0) {
		log_error("config %s: %s", s->opts.config, strerror(errno));
		return NULL;
	}
	conf_diags_t *diags = NULL;
	conf_t *c = conf_parse(buf, len, s->opts.config, &o, &diags);
	free(buf);
	if (!c) {
		size_t n = diags ? conf_diags_count(diags) : 0;
		for (size_t i = 0; i < n; i++) {
			const conf_diag_t *dg = conf_diags_get(diags, i);
			if (quiet_ok) fprintf(stderr, "%s\n", dg->text);
			else log_error("%s", dg->text);
		}
		if (diags && conf_diags_dropped(diags))
			log_error("... and %zu more error%s", conf_diags_dropped(diags), conf_diags_dropped(diags) == 1 ? "" : "s");
		if (!n) log_error("config %s: %s", s->opts.config, strerror(errno ? errno : ENOMEM));
	} else {
		for (size_t i = 0; i < conf_diags_count(diags); i++) log_warn("%s", conf_diags_get(diags, i)->text);
		warn_unacted(c);
	}
	conf_diags_free(diags);
	return c;
}

/* ElasticJob's choice of address: the first public IPv4 of an interface that is up, else the
 * first private one, else 127.0.0.1. */
static void detect_ip(char *buf, size_t len)
{
	struct ifaddrs *ifs, *i;
	char priv[INET_ADDRSTRLEN] = "";
	snprintf(buf, len, "127.0.0.1");
	if (getifaddrs(&ifs) < 0) return;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		uint32_t a = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		char t[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, t, sizeof t);
		int is_priv = (a >> 24) == 10 || (a >> 20) == 0xac1 || (a >> 16) == 0xc0a8 || (a >> 16) == 0xa9fe;
		if (!is_priv) {
			snprintf(buf, len, "%s", t);
			freeifaddrs(ifs);
			return;
		}
		if (!priv[0]) snprintf(priv, sizeof priv, "%s", t);
	}
	freeifaddrs(ifs);
	if (priv[0]) snprintf(buf, len, "%s", priv);
}

static int find_worker_bin(struct sup *s)
{
	const char *env = getenv("EJOB_WORKER_BIN");
	if (s->opts.worker_bin) snprintf(s->worker_bin, sizeof s->worker_bin, "%s", s->opts.worker_bin);
	else if (env && *env) snprintf(s->worker_bin, sizeof s->worker_bin, "%s", env);
	else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		s->worker_bin[0] = '\0';
		if (n > 0) {
			self[n] = '\0';
			char *slash = strrchr(self, '/');
			if (slash) {
				*slash = '\0';
				char cand[PATH_MAX + 32];
				if ((size_t)snprintf(cand, sizeof cand, "%s/../worker/ejob-worker", self) < sizeof cand &&
				    strlen(cand) < sizeof s->worker_bin && access(cand, X_OK) == 0)
					memcpy(s->worker_bin, cand, strlen(cand) + 1);
			}
		}
		if (!s->worker_bin[0]) snprintf(s->worker_bin, sizeof s->worker_bin, "%s/ejob-worker", EJOB_LIBEXEC);
	}
	if (access(s->worker_bin, X_OK) < 0) {
		log_error("worker binary %s: %s: build it (make), or name it with --worker-bin or $EJOB_WORKER_BIN",
		          s->worker_bin, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- hooks -------------------------------------------------------------------------------------- */

static void on_lost(void *arg, uint32_t worker, const void *frame, uint32_t len)
{
	struct sup *s = arg;
	disp_lost(s->disp, s->pool_target, worker, frame, len);
}

static void on_ready(void *arg, uint32_t worker)
{
	struct sup *s = arg;
	(void)worker;
	if (!s->stopping) disp_kick(s->disp);
}

/* Stopping: leave once the pool has stopped and external workers have ended their items too
 * (they finish them as pool workers do; past the grace they are cancelled, then their
 * attachment closed). Leaving earlier would report their items lost while they still run. */
static void maybe_exit(struct sup *s, uint64_t now_ns)
{
	if (!s->pool_stopped) return;
	uint32_t n = disp_running(s->disp);
	if (n && s->stopping && now_ns < s->stop_by_ns) return;
	/* the completions of what stopped here (handed over for failover) are written before the
	 * session closes, or the leader would find nothing to hand out */
	if (!n && s->stopping && coord_busy(s->coord) && now_ns < s->stop_by_ns) return;
	if (n)
		log_warn("shutdown: %" PRIu32 " item%s of external workers still running; leaving them", n, n == 1 ? "" : "s");
	ev_break(s->loop, EVBREAK_ALL);
}

static void on_pool_stopped(void *arg)
{
	struct sup *s = arg;
	disp_abandon(s->disp, s->pool_target, FRAME_ST_CANCELLED, "not started: the supervisor stopped");
	log_info("all workers have stopped");
	s->pool_stopped = 1;
	uint32_t n = disp_running(s->disp);
	if (n) log_info("waiting for %" PRIu32 " item%s of external workers", n, n == 1 ? "" : "s");
	maybe_exit(s, wait_now_ns());
}

/* the dispatcher's hooks: every request is an item of a fire (fire.h) */
static void on_outcome(void *arg, const struct disp_outcome *o)
{
	struct sup *s = arg;
	fires_outcome(s->fires, o);
}

static void on_started(void *arg, const struct disp_started *st)
{
	struct sup *s = arg;
	fires_started(s->fires, st);
}

/* coord's hooks (coord.h): what ZooKeeper asks of the dispatcher, the workers and the scheduler */
static void co_pause(void *arg, int on)
{
	struct sup *s = arg;
	disp_pause(s->disp, on);
}

static void co_lease(void *arg, uint64_t deadline, uint64_t kill_at)
{
	struct sup *s = arg;
	atomic_store(&seg_header(s->seg)->lease_kill_ns, kill_at);
	atomic_store(&seg_header(s->seg)->lease_deadline_ns, deadline);
	att_set_lease(s->att, deadline, kill_at);
	disp_set_lease(s->disp, deadline);
}

static void co_hold(void *arg, uint64_t kill_at)
{
	struct sup *s = arg;
	disp_hold(s->disp, kill_at);
}

static void co_release(void *arg)
{
	struct sup *s = arg;
	disp_release(s->disp);
}

static void co_drop_held(void *arg, const char *why)
{
	struct sup *s = arg;
	disp_drop_held(s->disp, why);
}

static void co_counts(void *arg, uint32_t *running, uint32_t *queued, int *held)
{
	struct sup *s = arg;
	*running = disp_running(s->disp);
	*queued = disp_pending(s->disp);
	*held = disp_held(s->disp);
}

static void co_cancel_job(void *arg, const char *job, const char *why)
{
	struct sup *s = arg;
	disp_cancel_job(s->disp, job, SHM_CANCEL_SHUTDOWN, why);
}

static void co_fire_ended(void *arg, sched_job_t *h, int missed)
{
	struct sup *s = arg;
	if (missed) sched_fire_missed(s->sched, h);
	else sched_fire_ended(s->sched, h);
}

static void co_kick(void *arg, const char *job)
{
	struct sup *s = arg;
	if (s->sched) sched_kick(s->sched, job);
}

static int co_trigger(void *arg, const char *job)
{
	struct sup *s = arg;
	return s->sched ? sched_trigger(s->sched, job) : -1;
}

static void co_job_conf(void *arg, const conf_job_t *c)
{
	struct sup *s = arg;
	if (s->sched) sched_set_job_conf(s->sched, c);
}

static void sup_shutdown(struct sup *s, int exit_code);

/* ZooKeeper was never reached within regCenter.maxRetries: exit 1 with the cause, as ElasticJob's
 * registry center fails its start (a wrong address must not look like a quiet cluster) */
static void co_unreachable(void *arg, const char *why)
{
	struct sup *s = arg;
	log_error("zookeeper: %s; giving up (regCenter.maxRetries %d: check regCenter.serverLists and that ZooKeeper "
	          "runs, or raise maxRetries to wait longer at start)", why, s->conf->reg_center.max_retries);
	sup_shutdown(s, 1);
}

static void co_drain(void *arg);   /* below, with the signals */

static const struct coord_hooks coord_hooks = {
	.pause = co_pause, .lease = co_lease, .hold = co_hold, .release = co_release, .drop_held = co_drop_held,
	.counts = co_counts, .cancel_job = co_cancel_job, .fire_ended = co_fire_ended, .kick = co_kick,
	.trigger = co_trigger, .job_conf = co_job_conf, .unreachable = co_unreachable, .drain = co_drain,
};

/* pool target operations */
static uint32_t pool_capacity(void *arg)
{
	struct sup *s = arg;
	return s->stopping ? 0 : pool_ready_count(s->pool);
}

static int pool_accepts(void *arg, const char *job, uint32_t kind)
{
	(void)arg;
	(void)job;
	return kind == FRAME_KIND_SCRIPT || kind == FRAME_KIND_NATIVE || kind == FRAME_KIND_HTTP;
}

static pid_t pool_worker_pid(void *arg, uint32_t worker)
{
	struct sup *s = arg;
	return pool_pid(s->pool, worker);
}

static void pool_kill_worker(void *arg, uint32_t worker, const char *why)
{
	struct sup *s = arg;
	pool_kill(s->pool, worker, why);
}

static void pool_bad_frame(void *arg, const char *why)
{
	(void)arg;
	/* our own workers: a bug, not an attack; the completion is lost, the item is not: its
	 * worker still holds it and a reclaim will report it if it dies */
	log_error("pool: %s", why);
}

static int job_ok(void *arg, const char *job, char *why, size_t len)
{
	struct sup *s = arg;
	for (size_t i = 0; i < s->conf->n_jobs; i++) {
		const conf_job_t *j = &s->conf->jobs[i];
		if (strcmp(j->name, job)) continue;
		if (fire_kind(j) == FRAME_KIND_EXTERNAL) return 0;   /* external, or dataflow without a library */
		snprintf(why, len, "is a job of type %s, not an external one", conf_job_type_name(j->type));
		return -1;
	}
	snprintf(why, len, "no such job in this supervisor's configuration");
	return -1;
}

static void fill_policy(struct sup *s, struct att_policy *p, uint32_t *uids, uint32_t *gids)
{
	const conf_supervisor_t *c = &s->conf->supervisor;
	memset(p, 0, sizeof *p);
	for (size_t i = 0; i < c->n_attach_allow_uids; i++)
		if (c->attach_allow_uids[i].id != CONF_ID_UNRESOLVED) uids[p->nuids++] = c->attach_allow_uids[i].id;
	for (size_t i = 0; i < c->n_attach_allow_gids; i++)
		if (c->attach_allow_gids[i].id != CONF_ID_UNRESOLVED) gids[p->ngids++] = c->attach_allow_gids[i].id;
	p->uids = uids;
	p->gids = gids;
	p->heartbeat_timeout_ms = 5000;
	p->job_ok = job_ok;
	p->arg = s;
}

/* systemd's view (sdnotify.h): registered (ZooKeeper), or the pool up (without) */
static void sd_state(void *arg, struct sdn_state *st)
{
	struct sup *s = arg;
	st->stopping = s->stopping;
	st->workers = pool_size(s->pool);
	st->workers_ready = pool_ready_count(s->pool);
	st->running = disp_running(s->disp);
	st->queued = disp_pending(s->disp);
	if (!s->coord) return;
	struct coord_status cs;
	coord_status(s->coord, &cs);
	uint64_t now = wait_now_ns();
	st->zk = 1;
	st->connected = cs.connected;
	st->ever_connected = cs.ever_connected;
	st->jobs = cs.jobs;
	st->registered = cs.registered;
	st->lease_left_ns = cs.lease_ns > now ? cs.lease_ns - now : 0;
}

/* the error handlers' view (errh.h): the config in force of a job whose item failed */
static const conf_job_t *eh_job_conf(void *arg, const char *job)
{
	struct sup *s = arg;
	return s->coord ? coord_job_conf(s->coord, job) : conf_find_job(s->conf, job);
}

/* the metrics' view (metrics.h): read on the loop, at the moment of a request */
static void mx_snapshot(void *arg, struct metrics_snapshot *m)
{
	struct sup *s = arg;
	m->instance = s->instance_id;
	m->stopping = s->stopping;
	m->now_ns = wait_now_ns();
	m->wall_ns = wait_realtime_ns();
	m->workers = pool_size(s->pool);
	pool_stats(s->pool, &m->pool);
	m->running = disp_running(s->disp);
	m->queued = disp_pending(s->disp);
	struct shm_header *h = seg_header(s->seg);
	uint64_t sh = atomic_load(&h->sub_head), st = atomic_load(&h->sub_tail);
	uint64_t ch = atomic_load(&h->comp_head), ct = atomic_load(&h->comp_tail);
	m->sub_used = sh > st ? sh - st : 0;
	m->comp_used = ch > ct ? ch - ct : 0;
	m->sub_slots = h->sub_slots;
	m->comp_slots = h->comp_slots;
	const event_sink_t *k;
	for (size_t i = 0; m->nsinks < METRICS_SINKS_MAX && (k = events_sink_at(s->events, i)); i++) {
		m->sinks[m->nsinks].name = events_sink_name(k);
		m->sinks[m->nsinks].dropped = events_dropped(k);
		m->sinks[m->nsinks].failing = events_sink_health(k, &m->sinks[m->nsinks].lost, m->sinks[m->nsinks].why,
		                                                 sizeof m->sinks[m->nsinks].why);
		m->nsinks++;
	}
	errh_counts(s->errh, m->errh);
	if (!s->coord) return;
	m->zk = 1;
	coord_status(s->coord, &m->cs);
	coord_stats(s->coord, &m->st);
}

static int mx_job_at(void *arg, size_t i, struct coord_job *out)
{
	struct sup *s = arg;
	return s->coord ? coord_job_at(s->coord, i, out) : -1;
}

static void mx_foreach_running(void *arg, void (*fn)(void *farg, const struct disp_run_info *r), void *farg)
{
	struct sup *s = arg;
	disp_foreach_running(s->disp, fn, farg);
}

static int mx_page(void *arg, const char *path, char **body, size_t *len, const char **ctype)
{
	struct sup *s = arg;
	return metrics_page(s->mx, path, body, len, ctype);
}

/* The exit status of a start that failed with errno e: 2 when what the configuration names cannot
 * be used (a socket or a port another process holds, a path that cannot be made: starting again
 * does not help, and systemd's RestartPreventExitStatus=2 does not try), else 1. */
static int start_error_code(int e)
{
	switch (e) {
	case EADDRINUSE: case EADDRNOTAVAIL: case EACCES: case EPERM: case ENOENT: case ENOTDIR: case EROFS:
	case ELOOP: case ENAMETOOLONG: case EEXIST: case EISDIR:
		return 2;
	default:
		return 1;
	}
}

/* supervisor.metrics: the counters, counted from the first fire on, and the server, listening
 * before anything reaches ZooKeeper (a port in use ends the start there); it answers from the
 * loop only, once everything it shows exists. 0, or the exit status (logged). Read at the start
 * only, as the history. */
static int start_metrics(struct sup *s)
{
	char err[512];
	const char *addr = s->conf->supervisor.metrics;
	if (!addr) return 0;
	static const struct metrics_hooks mh = {
		.snapshot = mx_snapshot, .job_at = mx_job_at, .foreach_running = mx_foreach_running,
	};
	if (!(s->mx = metrics_new(&mh, s))) {
		log_error("out of memory");
		return 1;
	}
	if (metrics_subscribe(s->mx, s->events) < 0) {
		log_error("out of memory");
		return 1;
	}
	if (!(s->http = httpd_new(s->loop, addr, mx_page, s, err, sizeof err))) {
		int e = errno;
		log_error("%s", err);
		return start_error_code(e);
	}
	return 0;
}

/* ---- signals and the tick ---------------------------------------------------------------------- */

static void shutdown_grace_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sup *s = w->data;
	uint32_t n = disp_running(s->disp);
	const char *what = s->stopping ? "shutdown" : "drain";
	snprintf(s->cancel_why, sizeof s->cancel_why, "stopped by the supervisor's %s: still running after "
	         "shutdownGraceSeconds (%ds)%s", what, s->conf->supervisor.shutdown_grace_seconds,
	         s->coord ? "; handed over for failover if the job fails over" : "");
	if (n)
		log_warn("%s: %" PRIu32 " item%s still running after the grace period; asking %s to stop", what, n,
		         n == 1 ? "" : "s", n == 1 ? "it" : "them");
	disp_cancel_running(s->disp, SHM_CANCEL_SHUTDOWN, s->cancel_why);
}

/* Draining (SIGUSR2, or servers/{ip} DRAINING written by `ejobctl drain`): every job leaves this
 * instance (coord_drain: the others reshard without it and take what it hands over), nothing new
 * starts here, queued items are handed over at once, running ones get shutdownGraceSeconds to end
 * and are then stopped and handed over. The supervisor stays up, holding nothing, until it is
 * stopped or restarted (a restart registers it again). */
static void sup_drain(struct sup *s, const char *why)
{
	if (s->stopping || s->draining) return;
	s->draining = 1;
	uint32_t grace = (uint32_t)s->conf->supervisor.shutdown_grace_seconds;
	log_warn("%s: draining: every job leaves this instance; running items get %" PRIu32 "s to finish, the rest is "
	         "handed over; the supervisor then holds nothing until it restarts", why, grace);
	if (s->coord) {
		coord_drain(s->coord);
	} else {
		if (s->sched) sched_stop(s->sched);
		local_stop(s->local);
	}
	disp_cancel_queued(s->disp, "not started: the supervisor is draining");
	ev_timer_init(&s->shutdown_w, shutdown_grace_cb, grace, 0);
	s->shutdown_w.data = s;
	ev_timer_start(s->loop, &s->shutdown_w);
}

static void co_drain(void *arg)
{
	struct sup *s = arg;
	sup_drain(s, "ejobctl drain (servers/{ip} DRAINING)");
}

/* draining: say once when nothing is left here */
static void drain_tick(struct sup *s)
{
	if (!s->draining || s->drained || s->stopping) return;
	if (disp_running(s->disp) || disp_pending(s->disp) || coord_busy(s->coord)) return;
	s->drained = 1;
	ev_timer_stop(s->loop, &s->shutdown_w);
	log_info("drained: nothing runs or waits here any more; stop or restart the supervisor (a restart joins again)");
}

static void sup_shutdown(struct sup *s, int exit_code)
{
	if (s->stopping) return;
	s->stopping = 1;
	sdn_stopping(s->sdn);
	s->exit_code = exit_code;
	uint32_t grace = (uint32_t)s->conf->supervisor.shutdown_grace_seconds;
	uint32_t kill_grace = (uint32_t)s->conf->supervisor.kill_grace_seconds;
	/* nothing new starts; what is running may finish within the grace, then is asked to stop,
	 * then killed kill_grace later */
	if (s->sched) sched_stop(s->sched);
	local_stop(s->local);
	coord_stop(s->coord);
	disp_cancel_queued(s->disp, "not started: the supervisor is stopping");
	att_shutdown(s->att);
	s->stop_by_ns = wait_now_ns() + (uint64_t)(grace + kill_grace + 2) * 1000000000u;
	ev_timer_stop(s->loop, &s->shutdown_w);     /* a drain's grace: the stop's begins now */
	ev_timer_init(&s->shutdown_w, shutdown_grace_cb, grace, 0);
	s->shutdown_w.data = s;
	ev_timer_start(s->loop, &s->shutdown_w);
	pool_stop(s->pool, (grace + kill_grace) * 1000u);
}

/* A one-off job (no cron) runs on trigger only, and --standalone has no trigger (no ZooKeeper):
 * say so rather than leave the job silently idle. */
static void note_untriggered(const struct sup *s, const conf_t *c)
{
	if (!s->opts.standalone) return;
	for (size_t i = 0; i < c->n_jobs; i++)
		if (!c->jobs[i].cron && !c->jobs[i].disabled)
			log_warn("job %s: one-off (no cron): it runs on trigger only, and --standalone has no trigger (no "
			         "ZooKeeper), so it does not run here; '--run %s' runs it once", c->jobs[i].name, c->jobs[i].name);
}

static void sig_cb(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	struct sup *s = w->data;
	if (w->signum == SIGHUP) {
		log_info("SIGHUP: reloading %s", s->opts.config ? s->opts.config : "(no file)");
		if (!s->opts.config) return;
		sdn_reloading(s->sdn, 0);
		conf_t *c = load_config(s, 0);
		if (!c) {
			log_error("reload failed; keeping the previous configuration");
			sdn_reloading(s->sdn, 1);
			return;
		}
		if (c->supervisor.workers != s->conf->supervisor.workers)
			log_warn("supervisor.workers changed from %d to %d: the pool size changes at the next start",
			         s->conf->supervisor.workers, c->supervisor.workers);
		if (c->supervisor.script_output_max_lines != s->conf->supervisor.script_output_max_lines ||
		    c->supervisor.script_output_max_bytes != s->conf->supervisor.script_output_max_bytes)
			log_warn("supervisor.scriptOutputMaxLines/scriptOutputMaxBytes changed: the workers get them at the "
			         "next start");
		/* the scheduler takes the new jobs before the old config goes */
		if (s->sched) {
			sched_set_jobs(s->sched, c);
			note_untriggered(s, c);
		}
		if (s->coord) coord_set_jobs(s->coord, c);  /* after: a stored config stays in force */
		conf_free(s->conf);
		s->conf = c;
		uint32_t uids[256], gids[256];
		struct att_policy pol;
		fill_policy(s, &pol, uids, gids);
		att_set_policy(s->att, &pol);
		log_info("configuration reloaded: %zu job%s", c->n_jobs, c->n_jobs == 1 ? "" : "s");
		sdn_reloading(s->sdn, 1);
		return;
	}
	if (w->signum == SIGUSR2) {
		sup_drain(s, "SIGUSR2");
		return;
	}
	if (s->stopping) {
		log_warn("%s again: stopping now", strsignal(w->signum));
		pool_stop(s->pool, 0);
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	log_info("%s: stopping (running items get %ds to finish)", strsignal(w->signum),
	         s->conf->supervisor.shutdown_grace_seconds);
	sup_shutdown(s, 0);
}

static void child_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	(void)loop;
	(void)revents;
	struct sup *s = w->data;
	if (!pool_reaped(s->pool, w->rpid, w->rstatus))
		log_debug("reaped unknown child %d", (int)w->rpid);
}

static void tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	struct sup *s = w->data;
	uint64_t now = wait_now_ns();
	atomic_store(&seg_header(s->seg)->sup_heartbeat_ns, now);
	pool_tick(s->pool, now);
	disp_tick(s->disp, now);
	att_tick(s->att, now);
	if (s->coord) coord_tick(s->coord, now);
	/* an attached worker binds its slots after the welcome: capacity can grow without an event */
	if (!s->stopping && disp_pending(s->disp)) disp_kick(s->disp);
	local_tick(s->local, now, s->stopping);
	drain_tick(s);
	maybe_exit(s, now);
	(void)loop;
}

/* ---- main --------------------------------------------------------------------------------------- */

/* --run of an external job: how long it waits for a worker serving it to attach */
#define RUN_WAIT_DEFAULT_S 30

static int parse_args(struct sup *s, int argc, char **argv)
{
	int waited = 0;
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' }, { "workers", required_argument, NULL, 'w' },
		{ "zk", required_argument, NULL, 'z' },     { "namespace", required_argument, NULL, 'n' },
		{ "ip", required_argument, NULL, 'i' },     { "log-level", required_argument, NULL, 'l' },
		{ "worker-bin", required_argument, NULL, 'b' }, { "socket", required_argument, NULL, 's' },
		{ "run", required_argument, NULL, 'r' },    { "standalone", no_argument, NULL, 'S' },
		{ "metrics", required_argument, NULL, 'm' }, { "wait", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	s->opts.wait_s = RUN_WAIT_DEFAULT_S;
	while ((c = getopt_long(argc, argv, ":c:hV", lo, NULL)) != -1) {
		switch (c) {
		case 'c': s->opts.config = optarg; break;
		case 'w': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 1024) {
				fprintf(stderr, "ejob-supervisor: --workers: '%s' is not a number in 1-1024\n", optarg);
				return 2;
			}
			s->opts.workers = (int)v;
			break;
		}
		case 'z': s->opts.zk = optarg; break;
		case 'n': s->opts.ns = optarg; break;
		case 'i': s->opts.ip = optarg; break;
		case 'l': s->opts.log_level = optarg; break;
		case 'b': s->opts.worker_bin = optarg; break;
		case 's': s->opts.socket = optarg; break;
		case 'r': s->opts.run = optarg; break;
		case 'S': s->opts.standalone = 1; break;
		case 'm': s->opts.metrics = optarg; break;
		case 'W': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 0 || v > 86400) {
				fprintf(stderr, "ejob-supervisor: --wait: '%s' is not a number of seconds in 0-86400 (0: for ever)\n",
				        optarg);
				return 2;
			}
			s->opts.wait_s = v;
			waited = 1;
			break;
		}
		case 'h': fputs(usage_text, stdout); exit(0);
		case 'V': printf("ejob %s\n", EJOB_VERSION); exit(0);
		case ':':
			fprintf(stderr, "ejob-supervisor: %s needs a value; see --help\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "ejob-supervisor: unknown option '%s'; see --help\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ejob-supervisor: unexpected argument '%s'; see --help\n", argv[optind]);
		return 2;
	}
	if (!s->opts.config) {
		fprintf(stderr, "ejob-supervisor: no configuration: give -c FILE (docs/config.md)\n");
		return 2;
	}
	if (waited && !s->opts.run) {
		fprintf(stderr, "ejob-supervisor: --wait is for --run (how long it waits for an external worker); see --help\n");
		return 2;
	}
	if (s->opts.log_level) {
		enum log_level l;
		if (log_parse_level(s->opts.log_level, &l) < 0) {
			fprintf(stderr, "ejob-supervisor: --log-level: '%s' is not one of error, warn, info, debug\n",
			        s->opts.log_level);
			return 2;
		}
		log_set_level(l);
	}
	return 0;
}

/* The shared memory, the dispatcher, the pool and the fires. 0, or the exit status (logged). */
static int start_workers(struct sup *s)
{
	char err[512];
	uint32_t nworkers = (uint32_t)s->conf->supervisor.workers;
	struct seg_params sp = { .nworkers = nworkers, .name = "pool" };
	if (seg_create(&sp, &s->seg, err, sizeof err) < 0) {
		log_error("shared memory: %s", err);
		return 1;
	}
	struct disp_hooks dh = { .outcome = on_outcome, .started = on_started };
	s->disp = disp_new(s->loop, &dh, s, (uint32_t)s->conf->supervisor.kill_grace_seconds * 1000u);
	struct pool_params pp = {
		.nworkers = nworkers, .worker_bin = s->worker_bin, .log_level = log_get_level(),
		.heartbeat_timeout_ms = 5000, .backoff_max_ms = 30000,
		.script_output_max_lines = (uint32_t)s->conf->supervisor.script_output_max_lines,
		.script_output_max_bytes = (uint32_t)s->conf->supervisor.script_output_max_bytes,
	};
	struct pool_hooks ph = { .lost_item = on_lost, .ready = on_ready, .stopped = on_pool_stopped };
	s->pool = pool_new(s->loop, s->seg, &pp, &ph, s);
	static const struct disp_target_ops pool_ops = {
		.capacity = pool_capacity, .accepts = pool_accepts, .worker_pid = pool_worker_pid,
		.kill_worker = pool_kill_worker, .bad_frame = pool_bad_frame,
	};
	if (!s->disp || !s->pool || !(s->pool_target = disp_add_target(s->disp, s->seg, "pool", &pool_ops, s)) ||
	    !(s->fires = fires_new(s->disp, s->instance_id))) {
		log_error("out of memory");
		return 1;
	}
	const conf_supervisor_t *cs = &s->conf->supervisor;
	const conf_tracing_t *tr = &s->conf->tracing;
	/* the events: always (the metrics count from them); sinks as configured */
	if (!(s->events = events_new(s->instance_id))) {
		log_error("out of memory");
		return 1;
	}
	fires_set_events(s->fires, s->events);
	/* the error handlers: a tap (their thread starts with their first message) */
	static const struct errh_hooks eh = { .job_conf = eh_job_conf };
	if (!(s->errh = errh_new(&eh, s, s->instance_id)) || errh_subscribe(s->errh, s->events) < 0) {
		log_error("out of memory");
		return 1;
	}
	if (cs->history_file || tr->url) {
		/* read at the start only: a reload does not move the history or the tracing */
		if (cs->history_file &&
		    !history_open(s->events, cs->history_file, cs->history_max_bytes, cs->history_keep, 65536))
			return 1;
		struct pg_params pg = { .url = tr->url, .username = tr->username, .password = tr->password,
		                        .spool_dir = tr->spool_dir, .spool_max_bytes = tr->spool_max_bytes };
		if (tr->url && !pg_open(s->events, &pg, 65536)) return 1;
	}

	return 0;
}

/* The attach socket for external workers. 0, or the exit status (logged). */
static int start_attach(struct sup *s)
{
	char err[512];
	char path[108];
	const char *sock = s->opts.socket ? s->opts.socket : s->conf->supervisor.attach_socket;
	if (!sock) {
		if (att_default_path(s->conf->reg_center.namespace, path, sizeof path) < 0) {
			log_error("attach socket path for namespace %s is too long: set supervisor.attachSocket",
			          s->conf->reg_center.namespace);
			return 2;
		}
		sock = path;
	}
	uint32_t uids[256], gids[256];
	struct att_policy pol;
	fill_policy(s, &pol, uids, gids);
	s->att = att_new(s->loop, s->disp, sock, &pol, err, sizeof err);
	if (!s->att) {
		int e = errno;
		log_error("%s", err);
		return start_error_code(e);
	}

	return 0;
}

static void start_signals(struct sup *s)
{
	ev_signal_init(&s->sig_term, sig_cb, SIGTERM);
	ev_signal_init(&s->sig_int, sig_cb, SIGINT);
	ev_signal_init(&s->sig_hup, sig_cb, SIGHUP);
	ev_signal_init(&s->sig_usr2, sig_cb, SIGUSR2);
	s->sig_term.data = s->sig_int.data = s->sig_hup.data = s->sig_usr2.data = s;
	ev_signal_start(s->loop, &s->sig_term);
	ev_signal_start(s->loop, &s->sig_int);
	ev_signal_start(s->loop, &s->sig_hup);
	ev_signal_start(s->loop, &s->sig_usr2);
	ev_child_init(&s->child_w, child_cb, 0, 0);
	s->child_w.data = s;
	ev_child_start(s->loop, &s->child_w);
	ev_timer_init(&s->tick_w, tick_cb, 0.1, 0.1);
	s->tick_w.data = s;
	ev_timer_start(s->loop, &s->tick_w);
}

/* --run: every item has its final outcome */
static void run_finished(void *arg, int code)
{
	sup_shutdown(arg, code);
}

/* The scheduler, and without --standalone ZooKeeper's coordination, which starts its fires. */
static int start_scheduling(struct sup *s)
{
	static const struct sched_hooks local = { .start = local_fire }, zk = { .start = coord_fire };
	if (!s->opts.standalone) {
		struct coord_params cp = {
			.loop = s->loop, .conf = s->conf, .instance_id = s->instance_id, .ip = s->ip, .fires = s->fires,
		};
		s->coord = coord_new(&cp, &coord_hooks, s);
		if (!s->coord || coord_set_jobs(s->coord, s->conf) < 0) {
			log_error("zookeeper: out of memory");
			return -1;
		}
		coord_start(s->coord);
	}
	s->sched = sched_new(s->loop, s->coord ? &zk : &local, s->coord ? (void *)s->coord : (void *)s->local);
	if (!s->sched) {
		log_error("scheduler: %s", strerror(errno));
		return -1;
	}
	sched_set_events(s->sched, s->events);
	local_set_sched(s->local, s->sched);
	sched_set_jobs(s->sched, s->conf);
	note_untriggered(s, s->conf);
	return 0;
}

int main(int argc, char **argv)
{
	static struct sup sup;
	struct sup *s = &sup;
	log_init("ejob-supervisor");
	int r = parse_args(s, argc, argv);
	if (r) return r;
	s->conf = load_config(s, 1);
	if (!s->conf) return 2;
	if (!s->opts.log_level) log_set_level((enum log_level)s->conf->supervisor.log_level);
	if (s->conf->supervisor.ip) snprintf(s->ip, sizeof s->ip, "%s", s->conf->supervisor.ip);
	else detect_ip(s->ip, sizeof s->ip);
	if ((size_t)snprintf(s->instance_id, sizeof s->instance_id, "%.63s@-@%d", s->ip, (int)getpid()) >=
	    sizeof s->instance_id)
		return 2;
	/* a --run that cannot run says so before anything starts (no worker forked, no socket made) */
	if (s->opts.run && local_run_check(s->conf, s->opts.run, s->opts.config) < 0) return 2;
	/* a history that cannot be written would lose every record while /healthz says ok */
	char why[PATH_MAX + 512];
	if (s->conf->supervisor.history_file && conf_history_problem(s->conf->supervisor.history_file, why, sizeof why) < 0) {
		log_error("%s: supervisor.history.file: %s", s->opts.config, why);
		return 2;
	}
	if (find_worker_bin(s) < 0) return 2;

	signal(SIGPIPE, SIG_IGN);
	s->loop = ev_default_loop(EVFLAG_AUTO | EVFLAG_SIGNALFD);
	if (!s->loop) {
		log_error("cannot start libev's default loop");
		return 1;
	}

	if ((r = start_workers(s)) || (r = start_attach(s)) || (r = start_metrics(s))) return r;
	start_signals(s);

	log_info("ejob-supervisor %s starting: instance %s, %" PRIu32 " worker%s (%s)", EJOB_VERSION, s->instance_id,
	         (uint32_t)s->conf->supervisor.workers, s->conf->supervisor.workers == 1 ? "" : "s", s->worker_bin);
	pool_start(s->pool);

	struct local_params lp = {
		.loop = s->loop, .instance_id = s->instance_id, .fires = s->fires, .pool = s->pool, .att = s->att,
		.config = s->opts.config, .job_conf = eh_job_conf, .finished = run_finished, .arg = s,
		.wait_ns = (uint64_t)s->opts.wait_s * 1000000000u,
	};
	if (!(s->local = local_new(&lp))) {
		log_error("out of memory");
		return 1;
	}
	if (s->opts.run) {
		if (local_run(s->local, s->conf, s->opts.run) < 0) {
			s->exit_code = 2;
			pool_stop(s->pool, 0);
		}
	} else if (start_scheduling(s) < 0) {
		return 1;
	}
	static const struct sdn_hooks sdh = { .state = sd_state };
	if (!(s->sdn = sdn_new(s->loop, &sdh, s))) {
		log_error("out of memory");
		return 1;
	}
	ev_run(s->loop, 0);

	/* --run: its items decide, not what stopped the loop (a signal asks for a clean stop, 0) */
	int code = s->exit_code;
	if (local_is_run(s->local)) {
		int rc = local_run_finish(s->local);
		if (rc > code) code = rc;
	}
	httpd_free(s->http);
	sdn_free(s->sdn);
	coord_free(s->coord);
	sched_free(s->sched);
	local_free(s->local);
	fires_free(s->fires);
	att_free(s->att);
	disp_free(s->disp);
	pool_free(s->pool);
	errh_free(s->errh);         /* the error handlers send what they have queued */
	events_free(s->events);     /* the sinks write what they have queued */
	metrics_free(s->mx);
	seg_close(s->seg);
	conf_free(s->conf);
	log_info("stopped");
	return code;
}
