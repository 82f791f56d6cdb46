/* supervisor/exec/pool.c: the pre-forked worker pool (see pool.h and docs/worker.md). */
#include "supervisor/exec/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/ring.h"
#include "ipc/shm.h"
#include "ipc/wait.h"

extern char **environ;

enum slot_phase { PH_IDLE, PH_STARTING, PH_READY, PH_WAITING };   /* WAITING = respawn timer armed */

struct slot {
	pool_t *pool;
	uint32_t index;
	pid_t pid;
	uint32_t gen;
	enum slot_phase phase;
	uint32_t fails;            /* consecutive deaths before becoming ready */
	int notify_fd;             /* read end of the readiness pipe, -1 */
	ev_io notify_w;
	ev_timer respawn_w;
	struct log_cause cause;    /* crash-loop logging, once per cause */
	char kill_reason[96];      /* why the supervisor killed it, "" if it did not */
};

struct pool {
	struct ev_loop *loop;
	seg_t *seg;
	struct pool_params p;
	struct pool_hooks h;
	void *arg;
	int memfd, efd;            /* the segment's fds, duplicated to >= 10 for spawning */
	int life_r, life_w;        /* lifeline: workers get life_r; we keep life_w until we exit */
	int stopping;
	ev_timer stop_w;
	uint32_t alive;
	uint64_t respawns;          /* workers started again after one died (pool_stats) */
	struct slot *slots;
	char index_env[32];
};

#define HIGH_FD 10

static int dup_high(int fd)
{
	int d = fcntl(fd, F_DUPFD_CLOEXEC, HIGH_FD);
	if (d < 0) log_error("fcntl(%d, F_DUPFD_CLOEXEC) failed: %s", fd, strerror(errno));
	return d;
}

static void spawn(struct slot *s);

static void respawn_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct slot *s = w->data;
	if (s->pool->stopping || s->phase != PH_WAITING) return;
	s->pool->respawns++;
	spawn(s);
}

/* Schedule the next start of a slot whose process is gone. */
static void schedule_respawn(struct slot *s)
{
	pool_t *p = s->pool;
	if (p->stopping) {
		s->phase = PH_IDLE;
		return;
	}
	double delay = 0;
	if (s->fails > 1) {
		uint64_t ms = 100;
		for (uint32_t i = 2; i < s->fails && ms < p->p.backoff_max_ms; i++) ms *= 2;
		if (ms > p->p.backoff_max_ms) ms = p->p.backoff_max_ms;
		delay = (double)ms / 1000.0;
	}
	s->phase = PH_WAITING;
	ev_timer_set(&s->respawn_w, delay, 0);
	ev_timer_start(p->loop, &s->respawn_w);
}

static void close_notify(struct slot *s)
{
	if (s->notify_fd < 0) return;
	ev_io_stop(s->pool->loop, &s->notify_w);
	close(s->notify_fd);
	s->notify_fd = -1;
}

static void notify_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	struct slot *s = w->data;
	char buf[16];
	ssize_t n = read(s->notify_fd, buf, sizeof buf);
	if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
	if (n >= 6 && !memcmp(buf, "ready\n", 6) && s->phase == PH_STARTING) {
		s->phase = PH_READY;
		s->fails = 0;
		if (s->cause.last) log_info("pool: worker %" PRIu32 " (pid %d) is ready again", s->index, (int)s->pid);
		else log_debug("pool: worker %" PRIu32 " (pid %d) ready", s->index, (int)s->pid);
		log_cause_reset(&s->cause);
		close_notify(s);
		s->pool->h.ready(s->pool->arg, s->index);
		return;
	}
	close_notify(s);   /* EOF or garbage: its exit will tell the rest */
}

/* A worker's environment: ours, minus any stale EJOB_ worker variables, plus the two of this
 * worker (malloc'd array; the strings are not copied). NULL: out of memory. */
static char **worker_env(char *index_env, char *pid_env)
{
	size_t ne = 0;
	while (environ[ne]) ne++;
	char **env = calloc(ne + 3, sizeof *env);
	if (!env) return NULL;
	size_t k = 0;
	for (size_t i = 0; i < ne; i++)
		if (strncmp(environ[i], "EJOB_WORKER_INDEX=", 18) && strncmp(environ[i], "EJOB_SUPERVISOR_PID=", 20))
			env[k++] = environ[i];
	env[k++] = index_env;
	env[k++] = pid_env;
	env[k] = NULL;
	return env;
}

/* posix_spawn the worker binary with its fds in place (3 memfd, 4 eventfd, 5 the life pipe, 6
 * its notify pipe), default signals, an empty mask, its own process group. 0 or an errno. */
static int spawn_worker(pool_t *p, char **argv, char **env, int notify_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t all, none;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	posix_spawn_file_actions_adddup2(&fa, p->memfd, 3);
	posix_spawn_file_actions_adddup2(&fa, p->efd, 4);
	posix_spawn_file_actions_adddup2(&fa, p->life_r, 5);
	posix_spawn_file_actions_adddup2(&fa, notify_fd, 6);
	posix_spawn_file_actions_addclosefrom_np(&fa, 7);
	posix_spawnattr_init(&at);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setpgroup(&at, 0);   /* terminal signals reach the supervisor only */
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
	int r = posix_spawn(pid, p->p.worker_bin, &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return r;
}

static void spawn(struct slot *s)
{
	pool_t *p = s->pool;
	struct shm_worker *w = seg_worker(p->seg, s->index);
	int np[2] = { -1, -1 };
	char idx[16], lvl[16], maxl[16], maxb[16], cause[128];
	pid_t pid = 0;
	int r;

	if (pipe2(np, O_CLOEXEC) < 0) {
		snprintf(cause, sizeof cause, "pipe: %s", strerror(errno));
		goto failed;
	}
	int nw = dup_high(np[1]);
	close(np[1]);
	np[1] = nw;
	if (nw < 0) {
		snprintf(cause, sizeof cause, "fcntl: %s", strerror(errno));
		goto failed;
	}

	s->gen = atomic_load(&w->gen) + 1;
	atomic_store(&w->gen, s->gen);
	atomic_store(&w->pid, 0);
	atomic_store(&w->state, WRK_STARTING);
	atomic_store(&w->cancel, 0);
	atomic_store(&w->item_pgid, 0);
	atomic_store(&w->flags, 0);
	atomic_store(&w->heartbeat_ns, wait_now_ns());

	snprintf(idx, sizeof idx, "%" PRIu32, s->index);
	snprintf(lvl, sizeof lvl, "%s", log_level_name(p->p.log_level));
	snprintf(maxl, sizeof maxl, "%" PRIu32, p->p.script_output_max_lines);
	snprintf(maxb, sizeof maxb, "%" PRIu32, p->p.script_output_max_bytes);
	for (char *c = lvl; *c; c++) *c = (char)(*c | 0x20);
	snprintf(p->index_env, sizeof p->index_env, "EJOB_WORKER_INDEX=%" PRIu32, s->index);
	char pidenv[40];
	snprintf(pidenv, sizeof pidenv, "EJOB_SUPERVISOR_PID=%d", (int)getpid());

	char **env = worker_env(p->index_env, pidenv);
	if (!env) {
		snprintf(cause, sizeof cause, "out of memory");
		goto failed;
	}
	char *argv[] = { (char *)p->p.worker_bin, (char *)"--index", idx, (char *)"--log-level", lvl,
	                 (char *)"--log-format", (char *)(p->p.log_json ? "json" : "text"),
	                 (char *)"--script-output-max-lines", maxl, (char *)"--script-output-max-bytes", maxb, NULL };
	r = spawn_worker(p, argv, env, np[1], &pid);
	free(env);
	close(np[1]);
	np[1] = -1;
	if (r != 0) {
		snprintf(cause, sizeof cause, "exec %s: %s", p->p.worker_bin, strerror(r));
		goto failed;
	}
	s->pid = pid;
	atomic_store(&w->pid, pid);
	s->phase = PH_STARTING;
	s->kill_reason[0] = '\0';
	s->notify_fd = np[0];
	ev_io_set(&s->notify_w, np[0], EV_READ);
	ev_io_start(p->loop, &s->notify_w);
	p->alive++;
	log_debug("pool: worker %" PRIu32 " started (pid %d, gen %" PRIu32 ")", s->index, (int)pid, s->gen);
	return;

failed:
	if (np[0] >= 0) close(np[0]);
	if (np[1] >= 0) close(np[1]);
	atomic_store(&w->state, WRK_EMPTY);
	s->fails++;
	s->pid = 0;
	schedule_respawn(s);
	log_cause(&s->cause, LL_ERROR, cause, "pool: cannot start worker %" PRIu32 ": %s; retrying in %.1fs", s->index,
	          cause, ev_timer_remaining(p->loop, &s->respawn_w));
}

pool_t *pool_new(struct ev_loop *loop, seg_t *seg, const struct pool_params *pp, const struct pool_hooks *h,
                 void *arg)
{
	pool_t *p = calloc(1, sizeof *p);
	if (!p) return NULL;
	p->loop = loop;
	p->seg = seg;
	p->p = *pp;
	if (!p->p.heartbeat_timeout_ms) p->p.heartbeat_timeout_ms = 5000;
	if (!p->p.backoff_max_ms) p->p.backoff_max_ms = 30000;
	p->h = *h;
	p->arg = arg;
	p->memfd = p->efd = p->life_r = p->life_w = -1;
	int lp[2];
	if (pipe2(lp, O_CLOEXEC) < 0) {
		log_error("pipe2 failed: %s", strerror(errno));
		free(p);
		return NULL;
	}
	p->life_r = dup_high(lp[0]);
	p->life_w = dup_high(lp[1]);
	close(lp[0]);
	close(lp[1]);
	p->memfd = dup_high(seg_memfd(seg));
	p->efd = dup_high(seg_eventfd(seg));
	p->slots = calloc(pp->nworkers, sizeof *p->slots);
	if (p->life_r < 0 || p->life_w < 0 || p->memfd < 0 || p->efd < 0 || !p->slots) {
		pool_free(p);
		return NULL;
	}
	for (uint32_t i = 0; i < pp->nworkers; i++) {
		struct slot *s = &p->slots[i];
		s->pool = p;
		s->index = i;
		s->notify_fd = -1;
		ev_io_init(&s->notify_w, notify_cb, -1, EV_READ);
		s->notify_w.data = s;
		ev_timer_init(&s->respawn_w, respawn_cb, 0, 0);
		s->respawn_w.data = s;
	}
	return p;
}

void pool_start(pool_t *p)
{
	for (uint32_t i = 0; i < p->p.nworkers; i++) spawn(&p->slots[i]);
}

static void lost_item(void *arg, uint64_t pos, const void *frame, uint32_t len)
{
	struct slot *s = arg;
	(void)pos;
	s->pool->h.lost_item(s->pool->arg, s->index, frame, len);
}

static void describe(int status, char *buf, size_t n)
{
	if (WIFEXITED(status)) snprintf(buf, n, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, n, "signal %d (%s)%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
		         WCOREDUMP(status) ? ", core dumped" : "");
	else snprintf(buf, n, "status 0x%x", status);
}

int pool_reaped(pool_t *p, pid_t pid, int status)
{
	struct slot *s = NULL;
	for (uint32_t i = 0; i < p->p.nworkers; i++)
		if (p->slots[i].pid == pid && pid > 0) s = &p->slots[i];
	if (!s) return 0;

	struct shm_worker *w = seg_worker(p->seg, s->index);
	int was_ready = s->phase == PH_READY;
	int stopping = p->stopping;   /* as it was: reclaiming can end a run and start a stop */
	char how[96];
	describe(status, how, sizeof how);
	close_notify(s);
	s->pid = 0;
	p->alive--;
	atomic_store(&w->state, WRK_DEAD);
	atomic_store(&w->pid, 0);
	/* A script it ran got SIGKILL with it (PR_SET_PDEATHSIG), but what that script started did
	 * not: the rest of the item's process group must not run on unobserved (and, with ZooKeeper,
	 * next to the item's run elsewhere). The group number cannot have been reused yet: a pid
	 * comes round again only after pid_max others. */
	int32_t pg = atomic_load(&w->item_pgid);
	if (pg > 1 && kill(-pg, SIGKILL) == 0)
		log_warn("pool: worker %" PRIu32 " (pid %d) left processes of its item behind (group %d): killed them",
		         s->index, (int)pid, (int)pg);

	/* its items: reclaimed now that it is gone (before anyone else can take the entry) */
	int n = ring_reclaim(p->seg, s->index, s->gen, lost_item, s);
	if (n < 0) log_error("pool: reclaim of worker %" PRIu32 " failed: %s", s->index, strerror(errno));
	atomic_store(&w->item_pgid, 0);
	atomic_store(&w->flags, 0);

	if (s->kill_reason[0] && (stopping || p->stopping))
		log_warn("pool: worker %" PRIu32 " (pid %d) killed (%s): %s", s->index, (int)pid, s->kill_reason, how);
	if (stopping || p->stopping) {
		log_debug("pool: worker %" PRIu32 " (pid %d) left: %s", s->index, (int)pid, how);
		s->phase = PH_IDLE;
		atomic_store(&w->state, WRK_EMPTY);
		if (p->alive == 0) {
			ev_timer_stop(p->loop, &p->stop_w);
			p->h.stopped(p->arg);
		}
		return 1;
	}
	if (was_ready) {
		/* it was working: replace it at once, and say why it went */
		s->fails = 1;
		if (s->kill_reason[0])
			log_warn("pool: worker %" PRIu32 " (pid %d) killed (%s): %s; replacing it", s->index, (int)pid,
			         s->kill_reason, how);
		else
			log_warn("pool: worker %" PRIu32 " (pid %d) died: %s%s; replacing it", s->index, (int)pid, how,
			         n > 0 ? " while running an item" : "");
		log_cause_reset(&s->cause);
		schedule_respawn(s);
	} else {
		s->fails++;
		schedule_respawn(s);
		char cause[128];
		snprintf(cause, sizeof cause, "%s", how);
		log_cause(&s->cause, LL_ERROR, cause,
		          "pool: worker %" PRIu32 " (pid %d) died before it was ready: %s; retrying in %.1fs "
		          "(this is logged once per cause while it keeps failing)",
		          s->index, (int)pid, how, ev_timer_remaining(p->loop, &s->respawn_w));
	}
	return 1;
}

static void kill_slot(pool_t *p, struct slot *s)
{
	if (!s->pid) return;
	struct shm_worker *w = seg_worker(p->seg, s->index);
	int32_t pg = atomic_load(&w->item_pgid);
	if (pg > 1) kill(-pg, SIGKILL);
	if (kill(s->pid, SIGKILL) < 0 && errno != ESRCH)
		log_error("kill(%d, SIGKILL) failed: %s", (int)s->pid, strerror(errno));
}

void pool_kill(pool_t *p, uint32_t worker, const char *why)
{
	if (worker >= p->p.nworkers) return;
	struct slot *s = &p->slots[worker];
	snprintf(s->kill_reason, sizeof s->kill_reason, "%s", why);
	kill_slot(p, s);
}

static void stop_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	pool_t *p = w->data;
	for (uint32_t i = 0; i < p->p.nworkers; i++) {
		struct slot *s = &p->slots[i];
		if (!s->pid) continue;
		log_warn("pool: worker %" PRIu32 " (pid %d) still running after the grace period; killing it", i, (int)s->pid);
		kill_slot(p, s);
	}
}

void pool_stop(pool_t *p, uint32_t grace_ms)
{
	if (p->stopping) return;
	p->stopping = 1;
	atomic_store(&seg_header(p->seg)->shutdown, 1);
	ring_wake_all(p->seg);
	for (uint32_t i = 0; i < p->p.nworkers; i++) {
		struct slot *s = &p->slots[i];
		ev_timer_stop(p->loop, &s->respawn_w);
		if (s->pid) {
			if (kill(s->pid, SIGTERM) < 0 && errno != ESRCH)
				log_error("kill(%d, SIGTERM) failed: %s", (int)s->pid, strerror(errno));
		} else {
			s->phase = PH_IDLE;
		}
	}
	if (p->alive == 0) {
		p->h.stopped(p->arg);
		return;
	}
	ev_timer_init(&p->stop_w, stop_timeout_cb, (double)grace_ms / 1000.0, 0);
	p->stop_w.data = p;
	ev_timer_start(p->loop, &p->stop_w);
}

void pool_tick(pool_t *p, uint64_t now_ns)
{
	uint64_t limit = (uint64_t)p->p.heartbeat_timeout_ms * 1000000u;
	for (uint32_t i = 0; i < p->p.nworkers; i++) {
		struct slot *s = &p->slots[i];
		if (!s->pid || s->kill_reason[0]) continue;
		struct shm_worker *w = seg_worker(p->seg, i);
		if (atomic_load(&w->flags) & WRKF_IN_NATIVE) continue;
		uint64_t hb = atomic_load(&w->heartbeat_ns);
		if (hb && now_ns > hb && now_ns - hb > limit) {
			char why[96];
			snprintf(why, sizeof why, "no heartbeat for %.1fs", (double)(now_ns - hb) / 1e9);
			log_warn("pool: worker %" PRIu32 " (pid %d): %s; killing it", i, (int)s->pid, why);
			pool_kill(p, i, why);
		}
	}
}

void pool_free(pool_t *p)
{
	if (!p) return;
	if (p->slots) {
		for (uint32_t i = 0; i < p->p.nworkers; i++) {
			close_notify(&p->slots[i]);
			ev_timer_stop(p->loop, &p->slots[i].respawn_w);
		}
	}
	ev_timer_stop(p->loop, &p->stop_w);
	int fds[] = { p->memfd, p->efd, p->life_r, p->life_w };
	for (size_t i = 0; i < 4; i++)
		if (fds[i] >= 0) close(fds[i]);
	free(p->slots);
	free(p);
}

uint32_t pool_size(const pool_t *p) { return p->p.nworkers; }

int pool_is_ready(const pool_t *p, uint32_t worker)
{
	return worker < p->p.nworkers && p->slots[worker].phase == PH_READY;
}

void pool_stats(const pool_t *p, struct pool_stats *st)
{
	memset(st, 0, sizeof *st);
	for (uint32_t i = 0; i < p->p.nworkers; i++) {
		switch (p->slots[i].phase) {
		case PH_IDLE: st->idle++; break;
		case PH_STARTING: st->starting++; break;
		case PH_READY: st->ready++; break;
		case PH_WAITING: st->waiting++; break;
		}
	}
	st->respawns = p->respawns;
}

uint32_t pool_ready_count(const pool_t *p)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->p.nworkers; i++) n += p->slots[i].phase == PH_READY;
	return n;
}

pid_t pool_pid(const pool_t *p, uint32_t worker)
{
	return worker < p->p.nworkers ? p->slots[worker].pid : 0;
}
