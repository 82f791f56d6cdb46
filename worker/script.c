/* worker/script.c: script jobs (see script.h). */
#include "ipc/errf.h"
#include "worker/script.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/wait.h"

/* ---- context JSON and environment (pure) ---------------------------------------------------- */

int script_context_json(const ejob_context *c, json_buf_t *b)
{
	json_raw(b, "{");
	json_key(b, "jobName", 1);
	json_cstr(b, c->job, JSON_GSON);
	json_key(b, "taskId", 0);
	json_cstr(b, c->task_id, JSON_GSON);
	json_key(b, "shardingTotalCount", 0);
	json_u64(b, c->total);
	json_key(b, "jobParameter", 0);
	json_cstr(b, c->job_param ? c->job_param : "", JSON_GSON);
	json_key(b, "shardingItem", 0);
	json_u64(b, c->item);
	if (c->item_param && c->item_param[0]) {
		json_key(b, "shardingParameter", 0);
		json_cstr(b, c->item_param, JSON_GSON);
	}
	json_raw(b, "}");
	if (b->oom) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static const char *const env_dropped[] = { "EJOB_SUPERVISOR_PID", "EJOB_WORKER_INDEX" };
#define NSET 11

static int env_named(const char *entry, const char *name)
{
	size_t l = strlen(name);
	return !strncmp(entry, name, l) && entry[l] == '=';
}

int script_env(char *const *base, const ejob_context *c, char ***out)
{
	char num[7][24];
	snprintf(num[0], sizeof num[0], "%" PRIu32, c->item);
	snprintf(num[1], sizeof num[1], "%" PRIu32, c->total);
	snprintf(num[2], sizeof num[2], "%" PRIu64, c->epoch);
	snprintf(num[3], sizeof num[3], "%" PRIu64, c->fire_id);
	snprintf(num[4], sizeof num[4], "%" PRIu32, c->attempt);
	snprintf(num[5], sizeof num[5], "%" PRIu64, c->deadline_ms);
	if (c->workflow_run) snprintf(num[6], sizeof num[6], "%" PRIu64, c->workflow_run);
	else num[6][0] = 0;
	/* The parameters raw, as the JSON carries them escaped; empty when there is none: ElasticJob
	 * passes "" for no job parameter and refuses an empty sharding parameter, so empty says
	 * "none" without doubt (docs/worker.md). */
	const char *name[NSET] = { "EJOB_JOB", "EJOB_TASK_ID", "EJOB_ITEM", "EJOB_TOTAL", "EJOB_EPOCH",
	                           "EJOB_FIRE_ID", "EJOB_ATTEMPT", "EJOB_DEADLINE_MS", "EJOB_JOB_PARAMETER",
	                           "EJOB_SHARDING_PARAMETER", "EJOB_WORKFLOW_RUN" };
	const char *val[NSET] = { c->job, c->task_id, num[0], num[1], num[2], num[3], num[4], num[5],
	                          c->job_param ? c->job_param : "", c->item_param ? c->item_param : "", num[6] };

	size_t nbase = 0, bytes = 0;
	while (base && base[nbase]) nbase++;
	for (int i = 0; i < NSET; i++) bytes += strlen(name[i]) + 1 + strlen(val[i]) + 1;
	char **env = malloc((nbase + NSET + 1) * sizeof(char *) + bytes);
	if (!env) {
		errno = ENOMEM;
		return -1;
	}
	size_t n = 0;
	for (size_t i = 0; i < nbase; i++) {
		int drop = 0;
		for (size_t k = 0; k < sizeof env_dropped / sizeof env_dropped[0]; k++) drop |= env_named(base[i], env_dropped[k]);
		for (int k = 0; k < NSET; k++) drop |= env_named(base[i], name[k]);
		if (!drop) env[n++] = base[i];
	}
	char *p = (char *)(env + nbase + NSET + 1);
	for (int i = 0; i < NSET; i++) {
		env[n++] = p;
		size_t l = strlen(name[i]);
		memcpy(p, name[i], l);
		p[l] = '=';
		size_t vl = strlen(val[i]);
		memcpy(p + l + 1, val[i], vl + 1);
		p += l + 1 + vl + 1;
	}
	env[n] = NULL;
	*out = env;
	return 0;
}

/* ---- output forwarding ----------------------------------------------------------------------- */

struct stream {
	int fd;                 /* -1 once at EOF */
	const char *name;       /* "stdout" / "stderr" */
	size_t len;
	int cont;               /* the line in buf continues one already written in pieces */
	int mid;                /* dropping: the dropped bytes ended inside a line */
	char buf[SCRIPT_LINE_MAX + 1];
};

struct fwd {
	const struct logline_job *job;
	unsigned log_mode;
	int pid;                /* ours, ejob-worker's */
	int log_fd;
	char *msg;              /* "..." + a piece of SCRIPT_LINE_MAX + "..." */
	char *line;             /* the log line: logline_size() of it */
	size_t cap;
	uint64_t max_lines, max_bytes;   /* 0: no limit */
	uint64_t lines, bytes;           /* logged: log lines, and the script's bytes they hold */
	int cut;                         /* over the cap: the rest is read and dropped */
	uint64_t cut_lines, cut_bytes;   /* dropped: lines (their ends), bytes */
	struct outcome *o;               /* its out[]: the last bytes of output, logged or dropped */
};

/* The output's tail for the item's history: every byte the script wrote, as it came. */
static void tail_add(struct fwd *f, const char *p, size_t n)
{
	char *t = f->o->out;
	size_t cap = sizeof f->o->out, *len = &f->o->out_len;
	if (n >= cap) {
		p += n - cap;
		n = cap;
		*len = 0;
	} else if (*len + n > cap) {
		size_t keep = cap - n;
		memmove(t, t + *len - keep, keep);
		*len = keep;
	}
	memcpy(t + *len, p, n);
	*len += n;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) return;   /* the log is gone: nothing better to do with the line */
		p += w;
		n -= (size_t)w;
	}
}

/* One line of the item's in the supervisor's log form (ipc/logline.h), so that a script's lines
 * sort and filter with the rest: stream "stdout"/"stderr" for its output, NULL for our own. */
static void fwd_log(struct fwd *f, int level, const char *stream, const char *msg, size_t n)
{
	struct logline l = { .level = level, .prog = "ejob-worker", .pid = f->pid, .job = f->job, .stream = stream,
	                     .msg = msg, .len = n };
	write_all(f->log_fd, f->line, logline_format(f->line, f->cap, f->log_mode, &l));
}

/* Count dropped output: its bytes, and a line for each line end in it. */
static void drop(struct fwd *f, struct stream *s, const char *p, size_t n)
{
	if (!n) return;
	tail_add(f, p, n);
	const char *e = p + n;
	f->cut_bytes += n;
	for (const char *nl; p < e && (nl = memchr(p, '\n', (size_t)(e - p))); p = nl + 1) f->cut_lines++;
	s->mid = e[-1] != '\n';
}

/* n bytes of s->buf as one log line: a whole line (used = n + 1 with its newline, or n for a
 * last line without one) or a piece of a long one (more). Over the cap, dropped instead. */
static void emit(struct fwd *f, struct stream *s, size_t n, size_t used, int more)
{
	if (!f->cut && ((f->max_lines && f->lines + 1 > f->max_lines) || (f->max_bytes && f->bytes + used > f->max_bytes)))
		f->cut = 1;
	if (f->cut) {
		drop(f, s, s->buf, used);
		return;
	}
	size_t l = 0;
	if (s->cont) {
		memcpy(f->msg, "...", 3);
		l = 3;
	}
	memcpy(f->msg + l, s->buf, n);
	l += n;
	if (more) {
		memcpy(f->msg + l, "...", 3);
		l += 3;
	}
	/* stdout and stderr both at INFO: what a script writes to stderr is often not a warning
	 * (progress, set -x); the item's outcome says whether it failed (docs/operations.md) */
	fwd_log(f, LOGLINE_INFO, s->name, f->msg, l);
	tail_add(f, s->buf, used);
	s->cont = more;
	f->lines++;
	f->bytes += used;
}

static void consume(struct stream *s, size_t n)
{
	memmove(s->buf, s->buf + n, s->len - n);
	s->len -= n;
}

/* Write every complete line (and pieces of overlong ones) in s->buf; at EOF the rest too. */
static void flush_lines(struct fwd *f, struct stream *s, int eof)
{
	for (;;) {
		if (f->cut) {   /* no more lines: count what is held and let it go */
			drop(f, s, s->buf, s->len);
			s->len = 0;
			break;
		}
		char *nl = memchr(s->buf, '\n', s->len);
		if (nl) {
			size_t n = (size_t)(nl - s->buf);
			emit(f, s, n, n + 1, 0);
			consume(s, n + 1);
		} else if (s->len == sizeof s->buf) {
			emit(f, s, SCRIPT_LINE_MAX, SCRIPT_LINE_MAX, 1);
			consume(s, SCRIPT_LINE_MAX);
		} else {
			break;
		}
	}
	if (eof && s->len) {
		emit(f, s, s->len, s->len, 0);
		s->len = 0;
	}
	if (eof && f->cut && s->mid) {   /* the stream ended inside a dropped line */
		f->cut_lines++;
		s->mid = 0;
	}
}

static void read_stream(struct fwd *f, struct stream *s)
{
	ssize_t r;
	if (f->cut) {   /* past the cap: read on (the script must never block on a full pipe), drop */
		if (s->len) flush_lines(f, s, 0);
		r = read(s->fd, s->buf, sizeof s->buf);
		if (r > 0) {
			drop(f, s, s->buf, (size_t)r);
			return;
		}
	} else {
		r = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
	}
	if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
	if (r <= 0) {
		flush_lines(f, s, 1);
		close(s->fd);
		s->fd = -1;
		return;
	}
	s->len += (size_t)r;
	flush_lines(f, s, 0);
}

/* Once per run, if output was dropped: how much, and which cap. */
static void cut_notice(struct fwd *f)
{
	if (!f->cut) return;
	char msg[512];
	int m = snprintf(msg, sizeof msg,
	                 "output cut: %" PRIu64 " more line%s (%" PRIu64 " byte%s) not logged; a run of an item logs at "
	                 "most %" PRIu64 " line%s and %" PRIu64 " byte%s of output (supervisor.scriptOutputMaxLines, "
	                 "supervisor.scriptOutputMaxBytes; 0: no limit)",
	                 f->cut_lines, f->cut_lines == 1 ? "" : "s", f->cut_bytes, f->cut_bytes == 1 ? "" : "s",
	                 f->max_lines, f->max_lines == 1 ? "" : "s", f->max_bytes, f->max_bytes == 1 ? "" : "s");
	if (m < 0 || (size_t)m >= sizeof msg) return;   /* sized for this: cannot happen */
	fwd_log(f, LOGLINE_WARN, NULL, msg, (size_t)m);
}

/* ---- fork and exec ----------------------------------------------------------------------------- */

enum { STAGE_SETUP = 1, STAGE_EXEC = 2 };

/* Move fd to 3 or above (so the child's dup2 onto 0-2 cannot clobber it), keeping CLOEXEC. */
static int fd_high(int fd)
{
	if (fd < 0 || fd > 2) return fd;
	int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int e = errno;
	close(fd);
	errno = e;
	return n;
}

static void child_fail(int xw, int stage)
{
	int msg[2] = { stage, errno };
	if (write(xw, msg, sizeof msg) < 0) { /* the parent sees EOF and a dead child */ }
	_exit(127);
}


/* In the child between fork and exec: async-signal-safe calls only. */
static void child(const struct script_spec *sp, const char *path, pid_t ppid, int devnull, int ow, int ew, int xw,
                  int go, int go_w)
{
	close(go_w);   /* so that the parent giving up reads as EOF here */
	setpgid(0, 0);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != ppid)
		_exit(127);   /* the worker is already gone: so is whoever wanted this run */
	/* Run nothing before the parent has published our process group: whoever must stop the
	 * item (the supervisor, the worker's control thread) then always finds the whole group. */
	char c;
	ssize_t r;
	while ((r = read(go, &c, 1)) < 0 && errno == EINTR) {}
	if (r != 1)
		_exit(127);   /* EOF: the parent gave up on us */
	if (dup2(devnull, 0) < 0 || dup2(ow, 1) < 0 || dup2(ew, 2) < 0)
		child_fail(xw, STAGE_SETUP);
	if (xw != 3) {
		if (dup3(xw, 3, O_CLOEXEC) < 0) child_fail(xw, STAGE_SETUP);
		xw = 3;
	}
	cmd_child_reset(4);
	execve(path, sp->argv, sp->env);
	child_fail(xw, STAGE_EXEC);
}

static void lock(pthread_mutex_t *m) { if (m) pthread_mutex_lock(m); }
static void unlock(pthread_mutex_t *m) { if (m) pthread_mutex_unlock(m); }

static void set_error(struct outcome *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(struct outcome *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(o->err, sizeof o->err, fmt, ap);
	va_end(ap);
	o->status = EJOB_ERROR;
	o->code = 0;
	o->sig = 0;
}

static int reap(pid_t pid, int *status)
{
	pid_t r;
	while ((r = waitpid(pid, status, 0)) < 0 && errno == EINTR) {}
	return r == pid ? 0 : -1;
}

/* After the script exited, forward what it left in the pipes. Processes it left behind may
 * hold them open: give them a moment, not forever. */
static void drain_after_exit(struct fwd *f, struct stream *st)
{
	uint64_t end = wait_now_ns() + 100 * 1000000ull;
	for (;;) {
		struct pollfd pf[2] = { { st[0].fd, POLLIN, 0 }, { st[1].fd, POLLIN, 0 } };
		if (st[0].fd < 0 && st[1].fd < 0) return;
		uint64_t now = wait_now_ns();
		if (now >= end) break;
		int r = poll(pf, 2, (int)((end - now) / 1000000u) + 1);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		for (int i = 0; i < 2; i++)
			if (st[i].fd >= 0 && pf[i].revents) read_stream(f, &st[i]);
	}
	for (int i = 0; i < 2; i++) {
		if (st[i].fd < 0) continue;
		flush_lines(f, &st[i], 1);
		close(st[i].fd);
		st[i].fd = -1;
	}
}

void script_run(const struct script_spec *sp, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	char path[PATH_MAX];
	if (cmd_resolve(sp->argv[0], path, sizeof path) < 0) {
		set_error(o, "exec %s: %s", sp->argv[0], strerror(errno));
		return;
	}
	struct fwd f = { .job = sp->job, .log_mode = sp->log_mode, .pid = (int)getpid(), .log_fd = sp->log_fd,
	                 .max_lines = sp->max_lines, .max_bytes = sp->max_bytes, .o = o };
	/* a line's head, the stream's name and marks, a piece; or the cut notice */
	f.cap = logline_size("ejob-worker", sp->job, SCRIPT_LINE_MAX + 6);
	f.line = malloc(f.cap);
	f.msg = malloc(SCRIPT_LINE_MAX + 6);
	struct stream *st = malloc(2 * sizeof *st);
	int devnull = -1, po[2] = { -1, -1 }, pe[2] = { -1, -1 }, px[2] = { -1, -1 }, pg[2] = { -1, -1 };
	if (!f.line || !f.msg || !st) {
		set_error(o, "out of memory");
		goto out;
	}
	devnull = fd_high(open("/dev/null", O_RDONLY | O_CLOEXEC));
	if (devnull < 0 || pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 || pipe2(px, O_CLOEXEC) < 0 ||
	    pipe2(pg, O_CLOEXEC) < 0) {
		set_error(o, "starting %s: open or pipe2 failed: %s", sp->argv[0], strerror(errno));
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		po[i] = fd_high(po[i]);
		pe[i] = fd_high(pe[i]);
		px[i] = fd_high(px[i]);
		pg[i] = fd_high(pg[i]);
	}
	if (po[0] < 0 || po[1] < 0 || pe[0] < 0 || pe[1] < 0 || px[0] < 0 || px[1] < 0 || pg[0] < 0 || pg[1] < 0) {
		set_error(o, "starting %s: fcntl(F_DUPFD_CLOEXEC) failed: %s", sp->argv[0], strerror(errno));
		goto out;
	}

	pid_t ppid = getpid();
	lock(sp->fork_lock);
	pid_t pid = fork();
	if (pid == 0) child(sp, path, ppid, devnull, po[1], pe[1], px[1], pg[0], pg[1]);
	if (pid < 0) {
		int e = errno;
		unlock(sp->fork_lock);
		set_error(o, "starting %s: fork failed: %s", sp->argv[0], strerror(e));
		goto out;
	}
	/* the child does the same; whichever runs first makes the group exist before anyone
	 * (the control thread, the supervisor) may signal it */
	setpgid(pid, pid);
	if (sp->started) sp->started(sp->arg, pid);
	unlock(sp->fork_lock);
	static const char go = 'g';
	while (write(pg[1], &go, 1) < 0 && errno == EINTR) {}   /* cannot fill: one byte, fresh pipe */
	close(pg[0]);
	close(pg[1]);
	pg[0] = pg[1] = -1;
	close(po[1]);
	close(pe[1]);
	close(px[1]);
	po[1] = pe[1] = px[1] = -1;

	int msg[2];
	ssize_t got;
	while ((got = read(px[0], msg, sizeof msg)) < 0 && errno == EINTR) {}
	if (got != 0) {
		int status;
		reap(pid, &status);
		lock(sp->fork_lock);
		if (sp->started) sp->started(sp->arg, 0);
		unlock(sp->fork_lock);
		if (got == (ssize_t)sizeof msg && msg[0] == STAGE_EXEC)
			set_error(o, "exec %s: %s", sp->argv[0], strerror(msg[1]));
		else if (got == (ssize_t)sizeof msg)
			set_error(o, "starting %s: redirecting its stdin, stdout or stderr failed: %s", sp->argv[0], strerror(msg[1]));
		else
			set_error(o, "starting %s: the child died before exec", sp->argv[0]);
		goto out;
	}

	st[0] = (struct stream){ .fd = po[0], .name = "stdout" };
	st[1] = (struct stream){ .fd = pe[0], .name = "stderr" };
	po[0] = pe[0] = -1;
	int pidfd = pidfd_open(pid, 0);   /* always CLOEXEC */
	int cancel = 0, next_ms = SCRIPT_TICK_MS, exited = 0;
	while (!exited) {
		struct pollfd pf[4] = {
			{ pidfd, POLLIN, 0 }, { st[0].fd, POLLIN, 0 }, { st[1].fd, POLLIN, 0 }, { sp->wake_fd, POLLIN, 0 },
		};
		/* without a pidfd (EMFILE, an old kernel) look every 50 ms */
		int r = poll(pf, 4, pidfd < 0 && next_ms > 50 ? 50 : next_ms);
		if (r < 0 && errno != EINTR) {
			set_error(o, "poll failed: %s", strerror(errno));
			break;
		}
		if (r > 0) {
			for (int i = 0; i < 2; i++)
				if (st[i].fd >= 0 && pf[1 + i].revents) read_stream(&f, &st[i]);
			if (sp->wake_fd >= 0 && (pf[3].revents & POLLIN)) {
				uint64_t v;
				if (read(sp->wake_fd, &v, sizeof v) < 0) { /* EAGAIN: someone else drained it */ }
			}
		}
		if (pidfd >= 0) {
			exited = r > 0 && (pf[0].revents & POLLIN);
		} else {
			siginfo_t si = { 0 };
			exited = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
		}
		if (exited) break;
		next_ms = SCRIPT_TICK_MS;
		int why = sp->tick ? sp->tick(sp->arg, &next_ms) : 0;
		if (why && !cancel) {
			cancel = why;
			if (kill(-pid, SIGTERM) < 0 && errno != ESRCH) {
				char m[160];
				int k = snprintf(m, sizeof m, "kill(%d, SIGTERM) failed: %s", -pid, strerror(errno));
				if (k > 0) fwd_log(&f, LOGLINE_ERROR, NULL, m, (size_t)k < sizeof m ? (size_t)k : sizeof m - 1);
			}
		}
	}
	if (!exited) {   /* poll broke: do not leave the item's processes running unobserved */
		kill(-pid, SIGKILL);
	}
	if (pidfd >= 0) close(pidfd);
	drain_after_exit(&f, st);
	cut_notice(&f);
	int status = 0;
	int reaped = reap(pid, &status);
	int e = errno;
	lock(sp->fork_lock);
	if (sp->started) sp->started(sp->arg, 0);
	unlock(sp->fork_lock);
	if (o->status == EJOB_ERROR) goto out;
	if (reaped < 0) {
		set_error(o, "waitpid(%d) failed: %s (is SIGCHLD ignored?)", (int)pid, strerror(e));
		goto out;
	}
	if (WIFSIGNALED(status)) {
		o->status = EJOB_CRASHED;
		o->sig = WTERMSIG(status);
	} else {
		o->code = WEXITSTATUS(status);
		o->status = o->code ? EJOB_FAILED : EJOB_OK;
	}
	if (cancel)
		o->status = cancel == EJOB_CANCEL_TIMEOUT ? EJOB_TIMEOUT : EJOB_CANCELLED;
out:
	{
		int fds[] = { devnull, po[0], po[1], pe[0], pe[1], px[0], px[1], pg[0], pg[1] };
		for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
			if (fds[i] >= 0) close(fds[i]);
	}
	free(st);
	free(f.line);
	free(f.msg);
}
