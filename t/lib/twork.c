/* t/lib/twork.c: the test plays the supervisor for ejob-worker (see twork.h). */
#include "t/lib/twork.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ring.h"
#include "t/lib/tlib.h"
#include "t/tap.h"

void twork_init(struct twork *t, uint32_t nworkers, const char *log)
{
	memset(t, 0, sizeof *t);
	t->lifeline = t->notify = -1;
	char e[256];
	struct seg_params p = { .nworkers = nworkers, .name = "pool" };
	if (seg_create(&p, &t->s, e, sizeof e) < 0) BAIL_OUT("seg_create: %s", e);
	t->dec = frame_decoder_new(FRAME_MAX_LEN);
	if (!t->dec) BAIL_OUT("frame_decoder_new");
	snprintf(t->log, sizeof t->log, "%s", log);
	t->next_xid = 100;
	if (access(TWORK_BIN, X_OK) < 0) BAIL_OUT("%s: %s (run from the top of the tree, after make)", TWORK_BIN, strerror(errno));
}

void twork_fini(struct twork *t)
{
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		while (waitpid(t->pid, NULL, 0) < 0 && errno == EINTR) {}
		tlib_untrack(t->pid);
	}
	if (t->lifeline >= 0) close(t->lifeline);
	if (t->notify >= 0) close(t->notify);
	frame_decoder_free(t->dec);
	seg_close(t->s);
	memset(t, 0, sizeof *t);
}

struct shm_worker *twork_entry(struct twork *t, uint32_t index) { return seg_worker(t->s, index); }

/* move fd out of the way of 0..6 (without CLOEXEC: it is dup2'd before exec) */
static int high(int fd)
{
	int n = fcntl(fd, F_DUPFD, 20);
	if (n < 0) _exit(120);
	return n;
}

pid_t twork_start(struct twork *t, uint32_t index, const char *const *extra_env)
{
	int life[2], note[2];
	if (pipe2(life, O_CLOEXEC) < 0 || pipe2(note, O_CLOEXEC) < 0) BAIL_OUT("pipe2: %s", strerror(errno));
	int logfd = open(t->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (logfd < 0) BAIL_OUT("open %s: %s", t->log, strerror(errno));
	struct shm_worker *w = seg_worker(t->s, index);
	if (w) {
		atomic_fetch_add(&w->gen, 1);
		atomic_store(&w->state, WRK_STARTING);
	}
	pid_t sup = getpid();
	pid_t p = tlib_fork();
	if (p < 0) BAIL_OUT("fork: %s", strerror(errno));
	if (p == 0) {
		int src[5] = { high(seg_memfd(t->s)), high(seg_eventfd(t->s)), high(life[0]), high(note[1]), high(logfd) };
		int nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(src[4], 1) < 0 || dup2(src[4], 2) < 0) _exit(121);
		for (int i = 0; i < 4; i++)
			if (dup2(src[i], 3 + i) < 0) _exit(122);
		close_range(7, ~0U, 0);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP) signal(sig, sig <= 64 && (t->ignore >> (sig - 1) & 1) ? SIG_IGN : SIG_DFL);
		char v[32];
		snprintf(v, sizeof v, "%d", (int)sup);
		setenv("EJOB_SUPERVISOR_PID", v, 1);
		snprintf(v, sizeof v, "%u", index);
		setenv("EJOB_WORKER_INDEX", v, 1);
		for (const char *const *e = extra_env; e && *e; e++) putenv((char *)*e);
		char *argv[] = { (char *)"ejob-worker", (char *)"--index", v, NULL };
		execv(TWORK_BIN, argv);
		_exit(127);
	}
	if (w) atomic_store(&w->pid, p);
	close(life[0]);
	close(note[1]);
	close(logfd);
	if (t->lifeline >= 0) close(t->lifeline);
	if (t->notify >= 0) close(t->notify);
	t->lifeline = life[1];
	t->notify = note[0];
	t->pid = p;
	t->index = index;
	t->ready[0] = '\0';
	return p;
}

int twork_wait_ready(struct twork *t, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	size_t len = strlen(t->ready);
	while (t->notify >= 0) {
		uint64_t now = tlib_now_ms();
		if (now >= end) return 0;
		struct pollfd pf = { t->notify, POLLIN, 0 };
		int r = poll(&pf, 1, (int)(end - now));
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) return 0;
		ssize_t n = read(t->notify, t->ready + len, sizeof t->ready - 1 - len);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) {
			close(t->notify);
			t->notify = -1;
			break;
		}
		len += (size_t)n;
		t->ready[len] = '\0';
		if (len == sizeof t->ready - 1) break;
	}
	return t->notify < 0 && strcmp(t->ready, "ready\n") == 0;
}

pid_t twork_spawn(struct twork *t, uint32_t index)
{
	pid_t p = twork_start(t, index, NULL);
	if (!twork_wait_ready(t, 5000)) {
		char *log = twork_slurp(t->log, NULL);
		diag("worker log:\n%s", log ? log : "(none)");
		free(log);
		BAIL_OUT("ejob-worker %u did not say ready (got '%s')", index, t->ready);
	}
	return p;
}

struct frame_submit twork_item(struct twork *t, uint32_t kind)
{
	struct frame_submit f = {
		.xid = t->next_xid++, .fire_id = 5, .epoch = 77, .deadline_ms = 0, .item = 1, .total = 4,
		.attempt = 1, .kind = kind, .job = "hello", .task_id = "hello@-@0,1@-@READY@-@127.0.0.1@-@4242",
		.item_param = "b", .job_param = "",
	};
	return f;
}

void twork_publish(struct twork *t, const struct frame_submit *f)
{
	static unsigned char buf[FRAME_MAX_LEN];
	long n = frame_encode_submit(f, buf, sizeof buf);
	if (n < 0) BAIL_OUT("frame_encode_submit: %s", strerror(errno));
	if (ring_publish(t->s, buf, (uint32_t)n) < 0) BAIL_OUT("ring_publish: %s", strerror(errno));
	ring_flush(t->s);
}

int twork_completion(struct twork *t, unsigned timeout_ms, struct frame_complete *c)
{
	static unsigned char buf[FRAME_MAX_LEN];
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		struct ring_comp ci;
		long n = ring_drain(t->s, buf, sizeof buf, &ci);
		if (n > 0) {
			struct frame_err fe;
			if (frame_decode_complete(t->dec, buf, (size_t)n, c, &fe) < 0)
				BAIL_OUT("a completion that does not decode: %s", fe.msg);
			return 1;
		}
		if (n < 0) BAIL_OUT("ring_drain: %s", strerror(errno));
		if (ring_comp_idle(t->s)) continue;
		uint64_t now = tlib_now_ms();
		if (now >= end) return 0;
		struct pollfd pf = { seg_eventfd(t->s), POLLIN, 0 };
		if (poll(&pf, 1, (int)(end - now)) == 1) {
			uint64_t v;
			if (read(seg_eventfd(t->s), &v, sizeof v) < 0) { /* EAGAIN: already read */ }
		}
	}
}

int twork_wait_exit(pid_t pid, unsigned timeout_ms, int *status)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid) {
			tlib_untrack(pid);
			return 1;
		}
		if (r < 0 && errno != EINTR) return 0;
		if (tlib_now_ms() >= end) return 0;
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
}

int twork_gone(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	size_t len;
	char *s = twork_slurp(path, &len);
	if (!s) return 1;
	const char *rp = strrchr(s, ')');
	int zombie = rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
	free(s);
	return zombie;
}

char *twork_slurp(const char *path, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return NULL;
	size_t cap = 4096, len = 0;
	char *b = malloc(cap);
	for (;;) {
		if (cap - len < 1024) {
			cap *= 2;
			b = realloc(b, cap);
		}
		ssize_t n = read(fd, b + len, cap - len - 1);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) break;
		len += (size_t)n;
	}
	close(fd);
	b[len] = '\0';
	if (lenp) *lenp = len;
	return b;
}
