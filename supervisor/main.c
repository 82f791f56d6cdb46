/* supervisor/main.c: ejob-supervisor: the modules made and wired, the event loop, signals, the stop and
 * the drain (the command line and the configuration file: cli.c). */
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

static int co_trigger(void *arg, const char *job, const char *param, uint64_t run, const char *root, int64_t at_ms)
{
	struct sup *s = arg;
	return s->sched ? sched_trigger(s->sched, job, param, run, root, at_ms) : -1;
}

static void co_flow_failed(void *arg, const char *job, uint32_t item, uint64_t run, const char *root,
                           const char *cause, const char *tail)
{
	struct sup *s = arg;
	errh_run_failed(s->errh, job, item, run, root, s->instance_id, cause, tail);
}

static void co_job_conf(void *arg, const char *job, const conf_job_t *c, void *handle)
{
	struct sup *s = arg;
	if (!s->sched) return;
	if (c) sched_set_job(s->sched, c, handle);
	else sched_remove_job(s->sched, job);
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
	.trigger = co_trigger, .flow_failed = co_flow_failed, .job_conf = co_job_conf, .unreachable = co_unreachable, .drain = co_drain,
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
		conf_t *c = cli_load_config(&s->opts, 0);
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
		/* the log's settings are the start's (as the pool's): say so when the file's change
		 * would matter (--log-level and --log-format win over it) */
		if ((!s->opts.log_level && c->supervisor.log_level != s->conf->supervisor.log_level) ||
		    (!s->opts.log_format && c->supervisor.log_format != s->conf->supervisor.log_format))
			log_warn("supervisor.logLevel/logFormat changed: the log takes them at the next start");
		/* the scheduler takes the new jobs before the old config goes: from coord, which holds
		 * what is in force (a stored config node stays so), or (--standalone) the file's */
		if (s->coord) coord_set_jobs(s->coord, c);
		else if (s->sched) sched_set_jobs(s->sched, c);
		note_untriggered(s, c);
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
	/* every tenth of a second: two seconds or more between two means something held the loop (and
	 * with it the ZooKeeper session's pings and the workers' heartbeats) */
	if (s->tick_ns && now - s->tick_ns >= 2000000000u)
		log_warn("the event loop was held for %.1fs (the next tick was due after 0.1s): ZooKeeper's pings and "
		         "answers waited as long", (double)(now - s->tick_ns) / 1e9);
	s->tick_ns = now;
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
		.log_json = log_get_json(),
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
		if (!(s->coord = coord_new(&cp, &coord_hooks, s))) {
			log_error("zookeeper: out of memory");
			return -1;
		}
	}
	s->sched = sched_new(s->loop, s->coord ? &zk : &local, s->coord ? (void *)s->coord : (void *)s->local);
	if (!s->sched) {
		log_error("scheduler: %s", strerror(errno));
		return -1;
	}
	sched_set_events(s->sched, s->events);
	local_set_sched(s->local, s->sched);
	/* the jobs: coord tells the scheduler what is in force for each (co_job_conf) */
	if (s->coord) {
		if (coord_set_jobs(s->coord, s->conf) < 0) {
			log_error("zookeeper: out of memory");
			return -1;
		}
		coord_start(s->coord);
	} else {
		sched_set_jobs(s->sched, s->conf);
	}
	note_untriggered(s, s->conf);
	return 0;
}

int main(int argc, char **argv)
{
	static struct sup sup;
	struct sup *s = &sup;
	log_init("ejob-supervisor");
	int r = cli_parse(&s->opts, argc, argv);
	if (r) return r;
	s->conf = cli_load_config(&s->opts, 1);
	if (!s->conf) return 2;
	if (!s->opts.log_level) log_set_level((enum log_level)s->conf->supervisor.log_level);
	if (!s->opts.log_format) log_set_json(s->conf->supervisor.log_format == CONF_LOG_JSON);
	if (s->conf->supervisor.ip) snprintf(s->ip, sizeof s->ip, "%s", s->conf->supervisor.ip);
	else cli_detect_ip(s->ip, sizeof s->ip);
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
	if (cli_worker_bin(&s->opts, s->worker_bin, sizeof s->worker_bin) < 0) return 2;
	/* --check (ExecStartPre=): what a start checks before it starts anything passed */
	if (s->opts.check) {
		printf("%s: ok (%zu job%s)\n", s->opts.config, s->conf->n_jobs, s->conf->n_jobs == 1 ? "" : "s");
		conf_free(s->conf);
		return 0;
	}

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
