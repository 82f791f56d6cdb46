/* t/lib/tlib.c: test support (see tlib.h). */
#include "t/lib/tlib.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TRACKED 1024

static pid_t tracked[MAX_TRACKED];
static int group[MAX_TRACKED];       /* kill the whole process group */
static pid_t owner_pid;
static char tmpdir[256];

void tlib_track(pid_t pid)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (!tracked[i]) { tracked[i] = pid; return; }
}

void tlib_untrack(pid_t pid)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (tracked[i] == pid) tracked[i] = group[i] = 0;
}

void tlib_track_group(pid_t pid)
{
	for (int i = 0; i < MAX_TRACKED; i++)
		if (!tracked[i]) {
			tracked[i] = pid;
			group[i] = 1;
			return;
		}
}

void tlib_kill_all(void)
{
	if (getpid() != owner_pid) return;   /* a forked child never kills its siblings */
	for (int i = 0; i < MAX_TRACKED; i++) {
		if (!tracked[i]) continue;
		if (group[i]) kill(-tracked[i], SIGKILL);
		group[i] = 0;
		kill(tracked[i], SIGKILL);
		waitpid(tracked[i], NULL, 0);
		tracked[i] = 0;
	}
}

static void rm_rf(const char *path)
{
	if (!path[0]) return;
	pid_t p = fork();
	if (p == 0) {
		execlp("rm", "rm", "-rf", "--", path, (char *)NULL);
		_exit(127);
	}
	if (p > 0) waitpid(p, NULL, 0);
}

/* a failed check or a bail out keeps the temp dir (logs, records) for the post-mortem */
static int keep_tmp;

void tlib_keep_tmp(void) { keep_tmp = 1; }

static void drop_tmp(void)
{
	if (!tmpdir[0]) return;
	if (keep_tmp || getenv("EJOB_KEEP_TMP")) {
		if (keep_tmp) fprintf(stderr, "# the test's files are kept in %s\n", tmpdir);
		return;
	}
	rm_rf(tmpdir);
}

static void at_exit(void)
{
	if (getpid() != owner_pid) return;
	tlib_kill_all();
	drop_tmp();
}

static void on_fatal(int sig)
{
	static const char msg[] = "Bail out! test timed out or was killed; children killed\n";
	if (sig == SIGALRM && write(1, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
	tlib_kill_all();
	keep_tmp = 1;
	drop_tmp();
	signal(sig, SIG_DFL);
	if (sig == SIGALRM) _exit(255);
	raise(sig);
}

void tlib_init(unsigned timeout_seconds)
{
	owner_pid = getpid();
	atexit(at_exit);
	signal(SIGALRM, on_fatal);
	signal(SIGTERM, on_fatal);
	signal(SIGINT, on_fatal);
	signal(SIGHUP, on_fatal);
	signal(SIGPIPE, SIG_IGN);
	alarm(timeout_seconds);
}

pid_t tlib_fork(void)
{
	fflush(stdout);
	fflush(stderr);
	pid_t p = fork();
	if (p > 0) tlib_track(p);
	if (p == 0) {
		/* the child must not run the parent's cleanup */
		alarm(0);
		signal(SIGALRM, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
	}
	return p;
}

const char *tlib_tmpdir(void)
{
	if (tmpdir[0]) return tmpdir;
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/ejob-test.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(255);
	}
	return tmpdir;
}

static void slurp(int fd, char **buf, size_t *len, size_t *cap, int *open_)
{
	if (*cap - *len < 4096) {
		size_t ncap = *cap ? *cap * 2 : 8192;
		if (ncap > (4u << 20) + 8192) { *open_ = 0; return; }
		*buf = realloc(*buf, ncap);
		*cap = ncap;
	}
	ssize_t r = read(fd, *buf + *len, *cap - *len - 1);
	if (r > 0) *len += (size_t)r;
	else if (r == 0 || (errno != EINTR && errno != EAGAIN)) *open_ = 0;
}

int tlib_run(const char *const argv[], char **out, char **err)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0) return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) { close(po[0]); close(po[1]); return -1; }
	pid_t p = tlib_fork();
	if (p < 0) return -1;
	if (p == 0) {
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		execv(argv[0], (char *const *)argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	char *b[2] = { NULL, NULL };
	size_t len[2] = { 0, 0 }, cap[2] = { 0, 0 };
	int open_[2] = { 1, 1 };
	int fds[2] = { po[0], pe[0] };
	while (open_[0] || open_[1]) {
		struct pollfd pf[2] = { { open_[0] ? fds[0] : -1, POLLIN, 0 }, { open_[1] ? fds[1] : -1, POLLIN, 0 } };
		if (poll(pf, 2, -1) < 0 && errno != EINTR) break;
		for (int i = 0; i < 2; i++)
			if (open_[i] && pf[i].revents) slurp(fds[i], &b[i], &len[i], &cap[i], &open_[i]);
	}
	close(fds[0]);
	close(fds[1]);
	int st = -1;
	while (waitpid(p, &st, 0) < 0 && errno == EINTR) {}
	tlib_untrack(p);
	for (int i = 0; i < 2; i++) {
		if (!b[i]) b[i] = calloc(1, 1);
		else b[i][len[i]] = '\0';
	}
	if (out) *out = b[0]; else free(b[0]);
	if (err) *err = b[1]; else free(b[1]);
	return st;
}

uint64_t tlib_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int tlib_wait_for(int (*cond)(void *), void *arg, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		if (cond(arg)) return 1;
		if (tlib_now_ms() >= end) return 0;
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
}

int tlib_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) return -1;
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) { if (errno == EINTR) continue; close(fd); return -1; }
		p += w;
		len -= (size_t)w;
	}
	return close(fd);
}

const char *tlib_script(char *path, size_t len, const char *name, const char *text)
{
	snprintf(path, len, "%s/%s", tlib_tmpdir(), name);
	if (tlib_write_file(path, text, strlen(text)) < 0 || chmod(path, 0755) < 0) {
		printf("Bail out!  cannot write the script %s: %s\n", path, strerror(errno));
		fflush(stdout);
		exit(255);
	}
	return path;
}

int64_t tlib_wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- JSON and HTTP for the tests that read what a supervisor serves or writes ---------------- */

int tlib_json_field(const char *line, const char *key, char *out, size_t len)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = strstr(line, k);
	if (!p) return 0;
	p += strlen(k);
	const char *e = p;
	if (*e == '"') {
		for (e++; *e && *e != '"'; e++)
			if (*e == '\\' && e[1]) e++;
		if (*e) e++;
	} else {
		while (*e && *e != ',' && *e != '}') e++;
	}
	snprintf(out, len, "%.*s", (int)(e - p), p);
	return 1;
}

int tlib_http_get(int port, const char *path, char **body)
{
	*body = NULL;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) return -1;
	struct timeval tv = { .tv_sec = 3 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	char req[4096];
	int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", path, port);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);
	for (;;) {
		if (cap - len < 4096) buf = realloc(buf, cap *= 2);
		ssize_t r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	int code = -1;
	char *sep = strstr(buf, "\r\n\r\n");
	if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1 || !sep) {
		free(buf);
		return -1;
	}
	*body = strdup(sep + 4);
	free(buf);
	return code;
}

long tlib_metric(int port, const char *series)
{
	char *m = NULL;
	long v = -1;
	size_t n = strlen(series);
	if (tlib_http_get(port, "/metrics", &m) == 200)
		for (char *p = m; p && (p = strstr(p, series)); p++)
			if ((p == m || p[-1] == '\n') && p[n] == ' ') {
				v = strtol(p + n + 1, NULL, 10);
				break;
			}
	free(m);
	return v;
}

int tlib_metric_at_least(void *arg)
{
	const struct tlib_metric_min *w = arg;
	return tlib_metric(w->port, w->series) >= w->min;
}
