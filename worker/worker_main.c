/* worker/worker_main.c: ejob-worker, the pool worker (docs/worker.md).
 *
 * Started by ejob-supervisor with fork+exec: fd 3 the segment, 4 its eventfd, 5 the lifeline
 * (EOF = the supervisor is gone), 6 the readiness pipe; `--index I`, the log's form, `--log-format
 * text|json` (supervisor.logFormat; its lines go to stderr, the supervisor's, in ipc/logline.h's
 * form), and the caps on what a script item's output may put in the log,
 * `--script-output-max-lines N --script-output-max-bytes N` (default 1000 and 65536, 0: no
 * limit); `ejob-worker --version` prints "ejob X.Y.Z". Two threads: the main
 * thread claims and runs items; a control thread watches the lifeline and a signalfd (every
 * signal is blocked in both), so no work happens in a signal handler:
 *   lifeline EOF, or SIGTERM with the supervisor gone: SIGKILL the item's process group, _exit
 *   SIGTERM with the supervisor alive: finish the current item, exit 0
 *   SIGUSR1: the supervisor set a cancel in our entry; wake the script runner to look at it
 *   the lease's kill time passed with an item still running (the supervisor is frozen, or it
 *   would have killed it): SIGKILL a script's process group; a native item (or an http one
 *   stuck in libcurl) cannot be stopped but by exiting, so _exit(1) (the supervisor reclaims
 *   the item from our held frame)
 * Exit codes: 0 asked to stop; 1 runtime failure; 2 bad invocation or segment. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "ipc/logline.h"
#include "ipc/version.h"
#include "ipc/wait.h"
#include "worker/ejob.h"
#include "worker/http.h"
#include "worker/native.h"
#include "worker/script.h"

#define FD_LIFELINE 5
#define FD_NOTIFY   6

struct wmain {
	ejob_worker *w;
	ejob_slot *slot;
	pid_t sup_pid;
	int sigfd;                 /* SIGTERM, SIGUSR1 */
	int wake;                  /* eventfd: control thread -> script runner ("look at the cancel") */
	int quit;                  /* eventfd: main thread -> control thread ("return") */
	pthread_t control;
	pthread_mutex_t item_lock; /* guards item_pgid; held from fork until the pgid is published */
	pid_t item_pgid;
	const ejob_context *ctx;   /* the running item (main thread) */
	_Atomic int kind;          /* its kind (EJOB_KIND_*) while it runs, else 0 (read by control) */
	pid_t lease_killed;        /* control: the process group last SIGKILLed for the lease */
	native_cache_t *natives;
	_Atomic int stop;
	uint64_t out_lines, out_bytes;   /* --script-output-max-lines/-bytes (0: no limit) */
	unsigned log_mode;               /* ipc/logline.h: LOGLINE_JSON (--log-format json), LOGLINE_JOURNAL */
};

/* A line of the worker's own, in the supervisor's log form (ipc/logline.h). */
static void logmsg(const struct wmain *m, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void logmsg(const struct wmain *m, int level, const char *fmt, ...)
{
	char msg[1024], line[6 * sizeof msg + 256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	size_t len = n < 0 ? 0 : (size_t)n;
	if (len >= sizeof msg) {   /* cut: say so */
		len = sizeof msg - 1;
		memcpy(msg + len - 3, "...", 3);
	}
	struct logline l = { .level = level, .prog = "ejob-worker", .pid = (int)getpid(), .msg = msg, .len = len };
	size_t k = logline_format(line, sizeof line, m->log_mode, &l);
	for (size_t off = 0; off < k;) {
		ssize_t w = write(2, line + off, k - off);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) break;
		off += (size_t)w;
	}
}

/* ---- control thread ---------------------------------------------------------------------------- */

/* The supervisor is gone: nobody will ever read our results, and the item must not outlive it
 * (another machine may be given it). Take the lock so a script being forked right now has its
 * group published before we look. */
static _Noreturn void die_with_item(struct wmain *m, const char *why)
{
	pthread_mutex_lock(&m->item_lock);
	pid_t pg = m->item_pgid;
	if (pg > 0 && kill(-pg, SIGKILL) < 0 && errno != ESRCH)
		logmsg(m, LOGLINE_ERROR, "kill(%d, SIGKILL) failed: %s", -pg, strerror(errno));
	if (pg > 0) logmsg(m, LOGLINE_WARN, "%s: killed the running item's process group %d, exiting", why, (int)pg);
	else logmsg(m, LOGLINE_WARN, "%s: exiting", why);
	_exit(1);
}

/* The lease's kill time has passed and an item still runs: the supervisor kills it then, unless
 * it is frozen; either way it must not outlive the session. Returns the poll timeout until the
 * next look: at the kill time, at most a second away (the supervisor renews the lease; a new
 * session may bring it closer). */
static int lease_check(struct wmain *m)
{
	uint64_t stop_ns, kill_ns;
	if (ejob_lease(m->slot, &stop_ns, &kill_ns) < 0 || !kill_ns) return 1000;
	uint64_t now = wait_now_ns();
	if (now < kill_ns) {
		uint64_t ms = (kill_ns - now) / 1000000u + 1;
		return ms < 1000 ? (int)ms : 1000;
	}
	int kind = atomic_load(&m->kind);
	if (!kind) return 1000;
	char why[160];
	snprintf(why, sizeof why, "the ZooKeeper lease ran out %.1fs ago and the supervisor did not stop the item",
	         (double)(now - kill_ns) / 1e9);
	if (kind == EJOB_KIND_NATIVE || kind == EJOB_KIND_HTTP)
		die_with_item(m, why);   /* it runs on our main thread (a request stops at the lease's stop time;
		                            this is for one stuck inside libcurl) */
	pthread_mutex_lock(&m->item_lock);
	pid_t pg = m->item_pgid;
	if (pg > 0 && pg != m->lease_killed) {
		m->lease_killed = pg;
		if (kill(-pg, SIGKILL) < 0 && errno != ESRCH)
			logmsg(m, LOGLINE_ERROR, "kill(%d, SIGKILL) failed: %s", -pg, strerror(errno));
		else
			logmsg(m, LOGLINE_WARN, "%s: killed its process group %d", why, (int)pg);
	}
	pthread_mutex_unlock(&m->item_lock);
	return 1000;
}

static void *control_main(void *arg)
{
	struct wmain *m = arg;
	int timeout = 1000;
	for (;;) {
		struct pollfd pf[3] = { { FD_LIFELINE, POLLIN, 0 }, { m->sigfd, POLLIN, 0 }, { m->quit, POLLIN, 0 } };
		int n = poll(pf, 3, timeout);
		timeout = lease_check(m);
		if (n == 0) continue;
		if (n < 0) {
			if (errno == EINTR) continue;
			logmsg(m, LOGLINE_ERROR, "poll (control) failed: %s", strerror(errno));
			die_with_item(m, "cannot watch the lifeline");
		}
		if (pf[0].revents) {
			char b[64];
			ssize_t r = read(FD_LIFELINE, b, sizeof b);
			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN))
				die_with_item(m, "the supervisor is gone (lifeline closed)");
		}
		if (pf[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			ssize_t r = read(m->sigfd, &si, sizeof si);
			if (r == (ssize_t)sizeof si && si.ssi_signo == SIGTERM) {
				if (getppid() != m->sup_pid)
					die_with_item(m, "SIGTERM and the supervisor is gone");
				atomic_store(&m->stop, 1);
				ejob_stop(m->w);
			} else if (r == (ssize_t)sizeof si && si.ssi_signo == SIGUSR1) {
				uint64_t one = 1;
				if (write(m->wake, &one, sizeof one) < 0) { /* EAGAIN: a wake is already pending */ }
			}
		}
		if (pf[2].revents & POLLIN) return NULL;
	}
}

/* ---- items --------------------------------------------------------------------------------------- */

static void on_started(void *arg, pid_t pgid)
{
	struct wmain *m = arg;   /* item_lock is held by the runner */
	m->item_pgid = pgid;
	ejob_set_item_pgid(m->slot, pgid);
}

static int on_tick(void *arg, int *next_ms)
{
	struct wmain *m = arg;
	ejob_heartbeat(m->slot);
	int why = ejob_cancelled(m->ctx);
	/* look again right when the lease runs out, not up to a tick later */
	uint64_t stop_ns, kill_ns, now = wait_now_ns();
	if (!why && ejob_lease(m->slot, &stop_ns, &kill_ns) == 0 && stop_ns > now) {
		uint64_t ms = (stop_ns - now) / 1000000u + 1;
		if (ms < (uint64_t)*next_ms) *next_ms = (int)ms;
	}
	return why;
}

static void error_outcome(struct outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void error_outcome(struct outcome *o, const char *fmt, ...)
{
	memset(o, 0, sizeof *o);
	o->status = EJOB_ERROR;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->err, sizeof o->err, fmt, ap);
	va_end(ap);
}

static void run_script(struct wmain *m, const ejob_context *c, struct outcome *o)
{
	if (!c->cmd || !c->cmd[0]) {
		error_outcome(o, "script item without a command line (props script.command.line)");
		return;
	}
	char why[256];
	char **argv = NULL, **env = NULL, *tag = NULL;
	json_buf_t js;
	json_init(&js);
	int argc = cmd_split(c->cmd, 1, &argv, why, sizeof why);
	if (argc < 0) {
		error_outcome(o, "bad script.command.line: %s", why);
		goto out;
	}
	size_t tl = strlen(c->task_id) + 48;
	tag = malloc(tl);
	if (script_context_json(c, &js) < 0 || script_env(environ, c, &env) < 0 || !tag) {
		error_outcome(o, "out of memory");
		goto out;
	}
	snprintf(tag, tl, "[%s item %u attempt %u]", c->task_id, (unsigned)c->item, (unsigned)c->attempt);   /* sized for it */
	argv[argc] = js.p;
	struct logline_job lj = { .job = c->job, .tag = tag, .item = c->item, .attempt = c->attempt };
	struct script_spec sp = {
		.argv = argv, .env = env, .job = &lj, .log_mode = m->log_mode, .log_fd = 2,
		.max_lines = m->out_lines, .max_bytes = m->out_bytes, .wake_fd = m->wake,
		.fork_lock = &m->item_lock, .started = on_started, .tick = on_tick, .arg = m,
	};
	script_run(&sp, o);
out:
	free(argv);
	free(env);
	free(tag);
	json_free(&js);
}

static void run_http(struct wmain *m, const ejob_context *c, struct outcome *o)
{
	size_t tl = strlen(c->task_id) + 48;
	char *tag = malloc(tl);
	if (!tag) {
		error_outcome(o, "out of memory");
		return;
	}
	snprintf(tag, tl, "[%s item %u attempt %u]", c->task_id, (unsigned)c->item, (unsigned)c->attempt);   /* sized for it */
	struct logline_job lj = { .job = c->job, .tag = tag, .item = c->item, .attempt = c->attempt };
	struct http_spec sp = {
		.ctx = c, .job = &lj, .log_mode = m->log_mode, .log_fd = 2, .wake_fd = m->wake, .tick = on_tick, .arg = m,
	};
	http_run(&sp, o);
	free(tag);
}

static void run_item(struct wmain *m, const ejob_context *c, struct outcome *o)
{
	m->ctx = c;
	atomic_store(&m->kind, (int)c->kind);
	switch (c->kind) {
	case EJOB_KIND_SCRIPT:
		run_script(m, c, o);
		break;
	case EJOB_KIND_NATIVE:
		native_run(m->natives, m->slot, c, o);
		break;
	case EJOB_KIND_HTTP:
		run_http(m, c, o);
		break;
	case EJOB_KIND_EXTERNAL:
		error_outcome(o, "job '%s' is external: its items go to the workers that attach for it, "
		              "not to pool workers", c->job);
		break;
	default:
		error_outcome(o, "item of job '%s' has no kind (script, native or http)", c->job);
		break;
	}
	atomic_store(&m->kind, 0);
	m->ctx = NULL;
}

/* ---- start --------------------------------------------------------------------------------------- */

static int setup(struct wmain *m, int argc, char **argv)
{
	const char *sp = getenv("EJOB_SUPERVISOR_PID");
	char *end;
	long v = sp ? strtol(sp, &end, 10) : 0;
	if (!sp || *end || v < 1) {
		logmsg(m, LOGLINE_ERROR, "EJOB_SUPERVISOR_PID is not set to a pid: ejob-worker is started by ejob-supervisor");
		return 2;
	}
	m->sup_pid = (pid_t)v;
	m->out_lines = SCRIPT_OUTPUT_MAX_LINES;
	m->out_bytes = SCRIPT_OUTPUT_MAX_BYTES;
	for (int i = 1; i < argc; i++) {
		int lines = !strcmp(argv[i], "--script-output-max-lines");
		if (!lines && strcmp(argv[i], "--script-output-max-bytes")) continue;
		unsigned long long n = 0;
		const char *a = i + 1 < argc ? argv[++i] : "";
		errno = 0;
		if (*a >= '0' && *a <= '9') n = strtoull(a, &end, 10);
		if (!(*a >= '0' && *a <= '9') || *end || errno || n > UINT32_MAX) {
			logmsg(m, LOGLINE_ERROR, "%s: '%s' is not a number 0-4294967295 (0: no limit)", argv[i - 1], a);
			return 2;
		}
		*(lines ? &m->out_lines : &m->out_bytes) = n;
	}
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0) {
		logmsg(m, LOGLINE_ERROR, "prctl(PR_SET_PDEATHSIG) failed: %s", strerror(errno));
		return 1;
	}
	if (getppid() != m->sup_pid) {
		logmsg(m, LOGLINE_ERROR, "the supervisor (pid %d) is already gone", (int)m->sup_pid);
		return 1;
	}
	if (fcntl(FD_LIFELINE, F_SETFD, FD_CLOEXEC) < 0 || fcntl(FD_NOTIFY, F_SETFD, FD_CLOEXEC) < 0) {
		logmsg(m, LOGLINE_ERROR, "fds 5 (lifeline) and 6 (notify) must be open: ejob-worker is started by ejob-supervisor");
		return 2;
	}
	char err[512];
	if (ejob_attach_inherited(argc, argv, &m->w, &m->slot, err, sizeof err) < 0) {
		logmsg(m, LOGLINE_ERROR, "%s", err);
		return 2;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	m->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	m->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	m->quit = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	m->natives = native_cache_new();
	if (m->sigfd < 0 || m->wake < 0 || m->quit < 0 || !m->natives) {
		logmsg(m, LOGLINE_ERROR, "signalfd, eventfd or malloc failed: %s", strerror(errno));
		return 1;
	}
	int e = pthread_create(&m->control, NULL, control_main, m);
	if (e) {
		logmsg(m, LOGLINE_ERROR, "pthread_create failed: %s", strerror(e));
		return 1;
	}
	static const char ready[] = "ready\n";
	ssize_t w;
	while ((w = write(FD_NOTIFY, ready, sizeof ready - 1)) < 0 && errno == EINTR) {}
	if (w != (ssize_t)sizeof ready - 1) {
		logmsg(m, LOGLINE_ERROR, "writing 'ready' to fd 6 failed: %s", w < 0 ? strerror(errno) : "short write");
		return 1;
	}
	close(FD_NOTIFY);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--version")) {   /* the one thing it does outside a pool */
		printf("ejob %s\n", EJOB_VERSION);
		return 0;
	}
	/* every thread inherits this mask: signals arrive only through the signalfd */
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);

	struct wmain m = { .sigfd = -1, .wake = -1, .quit = -1 };
	/* the log's form first, so that every line is in it (stderr is the supervisor's: the same
	 * journal check gives the same answer) */
	m.log_mode = logline_journal(2) ? LOGLINE_JOURNAL : 0;
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--log-format")) {
			int f = logline_parse_format(argv[i + 1]);
			if (f < 0) {
				logmsg(&m, LOGLINE_ERROR, "--log-format: '%s' is not one of text, json", argv[i + 1]);
				return 2;
			}
			m.log_mode |= (unsigned)f;
		}
	}
	pthread_mutex_init(&m.item_lock, NULL);

	int rc = setup(&m, argc, argv);
	if (rc) return rc;   /* nothing of ours runs yet: exit's cleanup is fine */

	rc = 0;
	for (;;) {
		const ejob_context *c;
		int r = ejob_next(m.slot, -1, &c);
		if (r < 0) {
			if (errno == ECANCELED || errno == ESHUTDOWN) break;
			logmsg(&m, LOGLINE_ERROR, "waiting for items failed: %s", ejob_slot_error(m.slot));
			rc = 1;
			break;
		}
		if (r == 0) continue;
		struct outcome o;
		run_item(&m, c, &o);
		if (o.out_len && ejob_set_output(c, o.out, o.out_len) < 0)
			logmsg(&m, LOGLINE_WARN, "the output of an item is not reported: %s", strerror(errno));
		if (ejob_done(m.slot, o.status, o.code, o.sig, o.err) < 0) {
			logmsg(&m, LOGLINE_ERROR, "reporting an item failed: %s", ejob_slot_error(m.slot));
			rc = 1;
			break;
		}
		if (atomic_load(&m.stop)) break;
	}

	uint64_t one = 1;
	if (write(m.quit, &one, sizeof one) == sizeof one) pthread_join(m.control, NULL);
	ejob_detach(m.w);   /* marks the entry STOPPING */
	native_cache_free(m.natives);
	close(m.sigfd);
	close(m.wake);
	close(m.quit);
	return rc;
}
