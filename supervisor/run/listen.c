/* supervisor/run/listen.c: listener commands (listen.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/cmdline.h"
#include "ipc/json.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/run/listen.h"

extern char **environ;

#define LINE_MAX_BYTES 1024u        /* one output line in the log; longer lines are cut */
#define LINES_MAX 200u              /* output lines logged per run; the rest are counted */
#define LEASE_FD 3                  /* the keeper's end of the lease socket */
#define KEEPER_NO_PIDFD_MS 100      /* a keeper without pidfd_open looks for the command's end this often */

struct listen {
	struct ev_loop *loop;
	listen_run_t *list;
};

struct listen_run {
	listen_t *ls;
	listen_run_t *prev, *next;
	char *job, *kind;
	pid_t pid;                  /* 0: not started (done comes from the idle watcher) */
	int out;                    /* its stdout and stderr (read end), -1: closed */
	int lease;                  /* our end of the keeper's lease socket, -1: no lease */
	uint32_t lease_ms;
	int timed_out, killed;
	uint64_t start_ns;
	char why[256];              /* not started: why */
	char line[LINE_MAX_BYTES];
	size_t nline;
	unsigned lines, dropped;
	listen_done_fn done;
	void *arg;
	ev_child child_w;
	ev_io out_w;
	ev_timer timer_w;
	ev_timer renew_w;           /* a byte to the keeper every lease_ms / 4 */
	ev_idle fail_w;             /* a command that could not start ends here, on the loop */
};

const char *listen_result_name(enum listen_result r)
{
	static const char *const n[LISTEN__COUNT] = { "ok", "failed", "timeout" };
	return (unsigned)r < LISTEN__COUNT ? n[r] : "failed";
}

listen_t *listen_new(struct ev_loop *loop)
{
	listen_t *ls = calloc(1, sizeof *ls);
	if (ls) ls->loop = loop;
	return ls;
}

static void run_free(listen_run_t *r)
{
	listen_t *ls = r->ls;
	ev_child_stop(ls->loop, &r->child_w);
	ev_io_stop(ls->loop, &r->out_w);
	ev_timer_stop(ls->loop, &r->timer_w);
	ev_timer_stop(ls->loop, &r->renew_w);
	ev_idle_stop(ls->loop, &r->fail_w);
	if (r->out >= 0) close(r->out);
	if (r->lease >= 0) close(r->lease);
	if (r->prev) r->prev->next = r->next;
	else ls->list = r->next;
	if (r->next) r->next->prev = r->prev;
	free(r->job);
	free(r->kind);
	free(r);
}

void listen_cancel(listen_run_t *r)
{
	if (!r) return;
	/* the catch-all ev_child of main.c reaps it */
	if (r->pid > 0 && kill(-r->pid, SIGKILL) < 0 && errno != ESRCH)
		log_warn("kill(%d, SIGKILL) failed: %s", -(int)r->pid, strerror(errno));
	run_free(r);
}

void listen_free(listen_t *ls)
{
	if (!ls) return;
	while (ls->list) listen_cancel(ls->list);
	free(ls);
}

static void line_out(listen_run_t *r)
{
	if (r->lines < LINES_MAX) {
		log_info("job %s: listener %s: %.*s", r->job, r->kind, (int)r->nline, r->line);
		r->lines++;
	} else {
		r->dropped++;
	}
	r->nline = 0;
}

/* read what is there (non-blocking); 1 at EOF or an error */
static int drain(listen_run_t *r)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(r->out, buf, sizeof buf);
		if (n < 0 && errno == EINTR) continue;
		if (n < 0 && errno == EAGAIN) return 0;
		if (n <= 0) {
			if (r->nline) line_out(r);
			return 1;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				line_out(r);
				continue;
			}
			r->line[r->nline++] = buf[i];
			if (r->nline == sizeof r->line) line_out(r);
		}
	}
}

static void out_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)revents;
	listen_run_t *r = w->data;
	if (drain(r)) {
		ev_io_stop(loop, w);
		close(r->out);
		r->out = -1;
	}
}

static void finish(listen_run_t *r, enum listen_result res, const char *why)
{
	uint64_t us = (wait_now_ns() - r->start_ns) / 1000u;
	if (r->dropped)
		log_warn("job %s: listener %s: %u more output line%s not logged (at most %u per run)", r->job, r->kind,
		         r->dropped, r->dropped == 1 ? "" : "s", LINES_MAX);
	listen_done_fn done = r->done;
	void *arg = r->arg;
	run_free(r);
	done(arg, res, why, us);
}

static void child_cb(struct ev_loop *loop, ev_child *w, int revents)
{
	(void)loop;
	(void)revents;
	listen_run_t *r = w->data;
	int st = w->rstatus;
	/* what it wrote before it ended; a descendant that keeps the pipe open is not waited for */
	if (r->out >= 0) drain(r);
	char why[128];
	enum listen_result res;
	/* a keeper that killed the command for want of renewals said so first ("L" and the silence
	 * in ms), then killed its group, itself included */
	unsigned char said[5];
	ssize_t n = r->lease >= 0 ? recv(r->lease, said, sizeof said, MSG_DONTWAIT) : 0;
	if (n == (ssize_t)sizeof said && said[0] == 'L') {
		uint32_t ms;
		memcpy(&ms, said + 1, sizeof ms);
		res = LISTEN_FAILED;
		snprintf(why, sizeof why, LISTEN_LEASE_WHY " for %" PRIu32 " ms", ms);
	} else if (r->timed_out) {
		res = LISTEN_TIMEOUT;
		snprintf(why, sizeof why, "timed out after %.0fs (killed)", (double)(wait_now_ns() - r->start_ns) / 1e9);
	} else if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		res = LISTEN_OK;
		snprintf(why, sizeof why, "exit 0");
	} else if (WIFEXITED(st)) {
		res = LISTEN_FAILED;
		snprintf(why, sizeof why, "exit %d", WEXITSTATUS(st));
	} else {
		res = LISTEN_FAILED;
		snprintf(why, sizeof why, "signal %d%s", WTERMSIG(st), WCOREDUMP(st) ? " (core dumped)" : "");
	}
	finish(r, res, why);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	listen_run_t *r = w->data;
	int sig = r->timed_out ? SIGKILL : SIGTERM;
	if (!r->timed_out)
		log_warn("job %s: listener %s: still running after its timeout (ejob.listener.timeoutSeconds): SIGTERM, "
		         "SIGKILL in %ds", r->job, r->kind, LISTEN_KILL_GRACE_S);
	r->timed_out = 1;
	if (kill(-r->pid, sig) < 0 && errno != ESRCH) log_warn("kill(%d, %d) failed: %s", -(int)r->pid, sig, strerror(errno));
	if (sig == SIGTERM) {
		ev_timer_set(w, LISTEN_KILL_GRACE_S, 0);
		ev_timer_start(loop, w);
	}
}

static void renew_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	listen_run_t *r = w->data;
	/* EAGAIN: the keeper has not read the last ones (it is frozen too, or busy ending): that
	 * says nothing new; EPIPE: it is gone, and its ev_child tells how */
	if (send(r->lease, "r", 1, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno != EAGAIN && errno != EPIPE &&
	    errno != ECONNRESET && errno != EINTR)
		log_warn("job %s: listener %s: send(%d) to its keeper failed: %s", r->job, r->kind, r->lease, strerror(errno));
}

static void fail_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)loop;
	(void)revents;
	listen_run_t *r = w->data;
	char why[300];
	snprintf(why, sizeof why, "cannot run it: %s", r->why);
	finish(r, LISTEN_FAILED, why);
}

/* environ without our names, plus them (one malloc'd array; the strings in vals) */
#define NENV 5
static char **make_env(const struct listen_spec *s, char vals[NENV][128])
{
	static const char *const names[NENV] = { "EJOB_LISTENER=", "EJOB_JOB=", "EJOB_FIRE_ID=", "EJOB_EPOCH=",
	                                         "EJOB_LISTENER_TAKEOVER=" };
	size_t n = 0;
	while (environ && environ[n]) n++;
	char **env = calloc(n + NENV + 1, sizeof *env);
	if (!env) return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		size_t m;
		for (m = 0; m < NENV; m++)
			if (!strncmp(environ[i], names[m], strlen(names[m]))) break;
		if (m == NENV) env[k++] = environ[i];
	}
	snprintf(vals[0], sizeof vals[0], "%s%s", names[0], s->kind);
	if ((size_t)snprintf(vals[1], sizeof vals[1], "%s%s", names[1], s->job) >= sizeof vals[1]) vals[1][0] = 0;
	snprintf(vals[2], sizeof vals[2], "%s%" PRIu64, names[2], s->fire_ms);
	snprintf(vals[3], sizeof vals[3], "%s%" PRIu64, names[3], s->epoch);
	snprintf(vals[4], sizeof vals[4], "%s%u", names[4], s->takeover);
	for (size_t m = 0; m < NENV; m++)
		if (vals[m][0]) env[k++] = vals[m];
	env[k] = NULL;
	return env;
}

/* In the child between fork and exec (and in the keeper, which never execs): async-signal-safe
 * calls only. Its own process group, stdin /dev/null, stdout and stderr to the log pipe. It dies
 * with the supervisor (PR_SET_PDEATHSIG): a cluster-wide listener's run is taken over once this
 * supervisor's session is gone, and must not run on meanwhile. */
static void child_setup(int out, pid_t ppid)
{
	setpgid(0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != ppid) _exit(127);
	int dn = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (dn < 0 || dup2(dn, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(127);
}

static void child(const char *path, char *const *argv, char *const *env, int out, pid_t ppid)
{
	child_setup(out, ppid);
	cmd_child_reset(3);      /* also the ZooKeeper client's fds, which are not CLOEXEC */
	execve(path, argv, env);
	_exit(127);
}

static int64_t keeper_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The keeper ends as the command did, so the supervisor reads its status as the command's. */
static _Noreturn void keeper_relay(int st)
{
	if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
	int sig = WTERMSIG(st);
	/* a core of the keeper would be a copy of the supervisor's memory, not the command's */
	struct rlimit none = { 0, 0 };
	setrlimit(RLIMIT_CORE, &none);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigaction(sig, &dfl, NULL);     /* SIGTERM was ignored here */
	kill(getpid(), sig);
	_exit(128 + sig);               /* a signal whose default is not to end (it ended the command, though) */
}

/* A leased command's parent (listen.h): a fork of the supervisor that never execs, so
 * async-signal-safe calls only. It forks and execs the command in its own process group, then
 * waits for either the command's end (relayed as its own) or lease_ms without a byte from the
 * supervisor, or EOF: then the group gets SIGKILL, itself included, once it has said why. */
static _Noreturn void keeper(const char *path, char *const *argv, char *const *env, int out, int lease, pid_t ppid,
                             uint32_t lease_ms)
{
	child_setup(out, ppid);
	if (lease != LEASE_FD && dup3(lease, LEASE_FD, O_CLOEXEC) < 0) _exit(127);
	cmd_child_reset(LEASE_FD + 1);
	/* the timeout's SIGTERM to the group is for the command: the keeper relays how it ended */
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigaction(SIGTERM, &ign, NULL);
	pid_t me = getpid();
	pid_t cmd = fork();
	if (cmd < 0) _exit(127);
	if (cmd == 0) {
		/* dies with the keeper too; the lease socket goes (cmd_child_reset: also SIGTERM's default) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != me) _exit(127);
		cmd_child_reset(LEASE_FD);
		execve(path, argv, env);
		_exit(127);
	}
	int pfd = (int)syscall(SYS_pidfd_open, cmd, 0);      /* readable once the command has ended */
	int64_t last = keeper_now_ms();
	for (;;) {
		struct pollfd f[2] = { { .fd = LEASE_FD, .events = POLLIN }, { .fd = pfd, .events = POLLIN } };
		int64_t left = last + lease_ms - keeper_now_ms();
		int t = left < 0 ? 0 : (int)left;
		if (pfd < 0 && t > KEEPER_NO_PIDFD_MS) t = KEEPER_NO_PIDFD_MS;
		int n = poll(f, 2, t);
		int st, eof = 0;
		if (waitpid(cmd, &st, WNOHANG) == cmd) keeper_relay(st);
		if (n > 0 && f[0].revents) {
			char b[64];
			ssize_t k = read(LEASE_FD, b, sizeof b);
			if (k > 0) last = keeper_now_ms();
			else eof = k == 0 || (errno != EINTR && errno != EAGAIN);
		}
		int64_t silent = keeper_now_ms() - last;
		if (!eof && silent < lease_ms) continue;
		if (!eof) {
			unsigned char said[5] = { 'L' };
			uint32_t ms = (uint32_t)silent;
			memcpy(said + 1, &ms, sizeof ms);
			send(LEASE_FD, said, sizeof said, MSG_DONTWAIT | MSG_NOSIGNAL);
		}
		kill(-me, SIGKILL);
		_exit(126);
	}
}

/* fork and exec the command (with a lease: fork the keeper, which does): 0 with r->pid and r->out
 * set, or -1 with r->why */
static int spawn(listen_run_t *r, const struct listen_spec *s)
{
	char **argv = NULL, **env = NULL, path[4096], vals[NENV][128];
	int p[2] = { -1, -1 }, l[2] = { -1, -1 }, rc = -1;
	memset(vals, 0, sizeof vals);
	int w = cmd_split(s->cmd, 1, &argv, r->why, sizeof r->why);
	if (w < 0) return -1;
	argv[w] = (char *)s->context;
	if (cmd_resolve(argv[0], path, sizeof path) < 0) {
		snprintf(r->why, sizeof r->why, "%.160s: %s", argv[0], errno == ENOENT ? "not found in $PATH" : strerror(errno));
		free(argv);
		return -1;
	}
	if (!(env = make_env(s, vals))) {
		snprintf(r->why, sizeof r->why, "out of memory");
		free(argv);
		return -1;
	}
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(r->why, sizeof r->why, "pipe2 failed: %s", strerror(errno));
		free(argv);
		free(env);
		return -1;
	}
	if (s->lease_ms && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, l) < 0) {
		snprintf(r->why, sizeof r->why, "socketpair failed: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(argv);
		free(env);
		return -1;
	}
	pid_t ppid = getpid();
	pid_t pid = fork();
	if (pid == 0 && s->lease_ms) keeper(path, argv, env, p[1], l[1], ppid, s->lease_ms);
	if (pid == 0) child(path, argv, env, p[1], ppid);
	if (pid < 0) {
		snprintf(r->why, sizeof r->why, "fork failed: %s", strerror(errno));
		close(p[0]);
		if (l[0] >= 0) close(l[0]);
	} else {
		setpgid(pid, pid);   /* also here: a kill of its group right after finds the group */
		r->pid = pid;
		r->out = p[0];
		r->lease = l[0];
		r->lease_ms = s->lease_ms;
		rc = 0;
	}
	close(p[1]);
	if (l[1] >= 0) close(l[1]);
	free(argv);
	free(env);
	return rc;
}

listen_run_t *listen_start(listen_t *ls, const struct listen_spec *s, listen_done_fn done, void *arg)
{
	listen_run_t *r = calloc(1, sizeof *r);
	if (!r || !(r->job = strdup(s->job)) || !(r->kind = strdup(s->kind))) {
		log_error("job %s: out of memory starting its %s listener", s->job, s->kind);
		if (r) free(r->job);
		free(r);
		return NULL;
	}
	r->ls = ls;
	r->out = -1;
	r->lease = -1;
	r->done = done;
	r->arg = arg;
	r->start_ns = wait_now_ns();
	r->next = ls->list;
	if (ls->list) ls->list->prev = r;
	ls->list = r;
	if (spawn(r, s) < 0) {
		ev_idle_init(&r->fail_w, fail_cb);
		r->fail_w.data = r;
		ev_idle_start(ls->loop, &r->fail_w);
		return r;
	}
	fcntl(r->out, F_SETFL, fcntl(r->out, F_GETFL) | O_NONBLOCK);
	ev_io_init(&r->out_w, out_cb, r->out, EV_READ);
	r->out_w.data = r;
	ev_io_start(ls->loop, &r->out_w);
	ev_child_init(&r->child_w, child_cb, r->pid, 0);
	r->child_w.data = r;
	ev_child_start(ls->loop, &r->child_w);
	ev_timer_init(&r->timer_w, timer_cb, (double)s->timeout_s, 0);
	r->timer_w.data = r;
	ev_timer_start(ls->loop, &r->timer_w);
	if (r->lease >= 0) {
		fcntl(r->lease, F_SETFL, fcntl(r->lease, F_GETFL) | O_NONBLOCK);
		double every = (double)r->lease_ms / 4000.0;
		ev_timer_init(&r->renew_w, renew_cb, every, every);
		r->renew_w.data = r;
		ev_timer_start(ls->loop, &r->renew_w);
	}
	log_debug("job %s: listener %s: started %s (pid %d)", s->job, s->kind, s->cmd, (int)r->pid);
	return r;
}

/* ---- the contexts -------------------------------------------------------------------------------- */

static char *json_done(json_buf_t *b)
{
	if (b->oom) {
		json_free(b);
		return NULL;
	}
	return b->p;
}

char *listen_context_json(const fire_t *t, const conf_job_t *cj, const char *instance_id, uint64_t epoch, int after)
{
	char *task = fire_task_id(cj->name, fire_items(t), fire_n(t), instance_id);
	if (!task) return NULL;
	json_buf_t b;
	json_init(&b);
	json_raw(&b, "{");
	json_key(&b, "jobName", 1);
	json_cstr(&b, cj->name, JSON_GSON);
	json_key(&b, "taskId", 0);
	json_cstr(&b, task, JSON_GSON);
	json_key(&b, "shardingTotalCount", 0);
	json_u64(&b, fire_total(t));
	json_key(&b, "jobParameter", 0);
	json_cstr(&b, cj->job_parameter, JSON_GSON);
	json_key(&b, "shardingItemParameters", 0);
	json_raw(&b, "{");
	for (uint32_t i = 0; i < fire_n(t); i++) {
		char k[16];
		snprintf(k, sizeof k, "%" PRIu32, fire_item(t, i));
		json_key(&b, k, i == 0);
		const char *ip = conf_job_item_param(cj, (int)fire_item(t, i));
		json_cstr(&b, ip ? ip : "", JSON_GSON);
	}
	json_raw(&b, "}");
	json_key(&b, "fireId", 0);
	json_u64(&b, fire_id(t));
	json_key(&b, "epoch", 0);
	json_u64(&b, epoch);
	json_key(&b, "source", 0);
	json_cstr(&b, event_source_name(fire_source(t)), JSON_PLAIN);
	if (after)
		for (int ok = 1; ok >= 0; ok--) {
			json_key(&b, ok ? "succeeded" : "failed", 0);
			json_raw(&b, "[");
			int first = 1;
			for (uint32_t i = 0; i < fire_n(t); i++) {
				if ((fire_end_of(t, fire_item(t, i)) == FIRE_OK) != ok) continue;
				if (!first) json_raw(&b, ",");
				json_u64(&b, fire_item(t, i));
				first = 0;
			}
			json_raw(&b, "]");
		}
	json_raw(&b, "}");
	free(task);
	return json_done(&b);
}

char *listen_once_context_json(const conf_job_t *cj, uint32_t total, uint64_t fire_ms, uint64_t epoch, int takeover)
{
	json_buf_t b;
	json_init(&b);
	json_raw(&b, "{");
	json_key(&b, "jobName", 1);
	json_cstr(&b, cj->name, JSON_GSON);
	json_key(&b, "shardingTotalCount", 0);
	json_u64(&b, total);
	json_key(&b, "jobParameter", 0);
	json_cstr(&b, cj->job_parameter, JSON_GSON);
	json_key(&b, "fireId", 0);
	json_u64(&b, fire_ms);
	json_key(&b, "epoch", 0);
	json_u64(&b, epoch);
	json_key(&b, "takeover", 0);
	json_raw(&b, takeover ? "true" : "false");
	json_raw(&b, "}");
	return json_done(&b);
}
