/* t/lib/tsup.c: a real ejob-supervisor under test (see tsup.h). */
#include "t/lib/tsup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"

int tsup_read_recs(const char *path, struct tsup_rec *r, int max)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p && n < max; p = strtok(NULL, "\n")) {
		r[n].extra = 0;
		if (sscanf(p, "%7s %d %lld %199s %lld", r[n].kind, &r[n].item, &r[n].ns, r[n].task, &r[n].extra) >= 4) n++;
	}
	free(t);
	return n;
}

int tsup_fires_exact(const char *path, long long after, int total, const char *host, int *exact)
{
	enum { MAXF = 256, MAXI = 64 };
	static long long fire[MAXF];
	static unsigned char cnt[MAXF][MAXI];
	int nf = 0, bad = total > MAXI;
	memset(cnt, 0, sizeof cnt);
	char *t = tsup_slurp(path);
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long f;
		int item;
		char task[200] = "";
		if (sscanf(p, "%lld %d %199s", &f, &item, task) < 2 || f <= after) continue;
		if ((host && !strstr(task, host)) || item < 0 || item >= MAXI) {
			bad = 1;
			continue;
		}
		int k = 0;
		while (k < nf && fire[k] != f) k++;
		if (k == nf) {
			if (nf == MAXF) continue;
			fire[nf++] = f;
		}
		if (cnt[k][item] < 255) cnt[k][item]++;
	}
	free(t);
	long long newest = 0;
	for (int k = 0; k < nf; k++)
		if (fire[k] > newest) newest = fire[k];
	int full = 0;
	for (int k = 0; k < nf; k++) {
		if (fire[k] == newest) continue;
		for (int i = 0; i < MAXI; i++)
			if (cnt[k][i] != (i < total)) bad = 1;
		full++;
	}
	if (exact) *exact = !bad;
	return full;
}

char *tsup_slurp(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return NULL;
	size_t cap = 8192, len = 0;
	char *b = malloc(cap);
	for (;;) {
		if (cap - len < 4096) b = realloc(b, cap *= 2);
		ssize_t r = read(fd, b + len, cap - len - 1);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		len += (size_t)r;
	}
	close(fd);
	b[len] = '\0';
	return b;
}

static char *subst(const char *in, const char *a, const char *av, const char *b, const char *bv)
{
	size_t cap = strlen(in) * 2 + 4096, o = 0;
	char *out = malloc(cap);
	for (const char *p = in; *p;) {
		if (cap - o < 1024) out = realloc(out, cap *= 2);
		if (!strncmp(p, a, strlen(a))) { o += (size_t)sprintf(out + o, "%s", av); p += strlen(a); }
		else if (!strncmp(p, b, strlen(b))) { o += (size_t)sprintf(out + o, "%s", bv); p += strlen(b); }
		else out[o++] = *p++;
	}
	out[o] = '\0';
	return out;
}

int tsup_config(struct tsup *t, const char *name, const char *yaml)
{
	memset(t, 0, sizeof *t);
	snprintf(t->dir, sizeof t->dir, "%s/%s", tlib_tmpdir(), name);
	mkdir(t->dir, 0700);
	snprintf(t->conf, sizeof t->conf, "%s/ejob.yaml", t->dir);
	snprintf(t->log, sizeof t->log, "%s/supervisor.log", t->dir);
	snprintf(t->sock, sizeof t->sock, "%s/attach.sock", t->dir);
	char *y = subst(yaml, "@DIR@", t->dir, "@SOCK@", t->sock);
	int r = tlib_write_file(t->conf, y, strlen(y));
	free(y);
	return r;
}

int tsup_rewrite(struct tsup *t, const char *yaml)
{
	char *y = subst(yaml, "@DIR@", t->dir, "@SOCK@", t->sock);
	char tmp[700];
	snprintf(tmp, sizeof tmp, "%s.new", t->conf);
	int r = tlib_write_file(tmp, y, strlen(y));
	free(y);
	return r < 0 ? r : rename(tmp, t->conf);
}

pid_t tsup_start(struct tsup *t, const char *const *args)
{
	const char *argv[32];
	int n = 0;
	argv[n++] = BUILT("supervisor/ejob-supervisor");
	argv[n++] = "-c";
	argv[n++] = t->conf;
	for (int i = 0; args && args[i] && n < 30; i++) argv[n++] = args[i];
	argv[n] = NULL;
	t->reaped = 0;
	t->ip[0] = t->id[0] = '\0';
	for (int i = 0; args && args[i] && args[i + 1]; i++)
		if (!strcmp(args[i], "--ip")) snprintf(t->ip, sizeof t->ip, "%s", args[i + 1]);
	pid_t p = tlib_fork();
	if (p == 0) {
		int fd = open(t->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	t->pid = p;
	if (p > 0 && t->ip[0]) snprintf(t->id, sizeof t->id, "%s@-@%d", t->ip, (int)p);
	return p;
}

/* the hex mask of a "Name:\tHEX" line of /proc/PID/status */
static unsigned long long status_mask(const char *status, const char *name)
{
	const char *p = strstr(status, name);
	return p ? strtoull(p + strlen(name), NULL, 16) : 0;
}

struct handles_want {
	pid_t pid;
	int sig;
};

static int handles(void *arg)
{
	const struct handles_want *w = arg;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)w->pid);
	char *s = tsup_slurp(path);
	unsigned long long bit = 1ull << (w->sig - 1);
	/* the supervisor itself, not the test's fork before its exec (which has the test's handlers) */
	int yes = s && !strncmp(s, "Name:\tejob-supervisor\n", 22) &&
	          ((status_mask(s, "\nSigBlk:") | status_mask(s, "\nSigCgt:")) & bit);
	free(s);
	if (!yes) usleep(5000);
	return yes;
}

int tsup_wait_handles(struct tsup *t, int sig, unsigned timeout_ms)
{
	struct handles_want w = { t->pid, sig };
	return sig > 0 && sig <= 64 && tlib_wait_for(handles, &w, timeout_ms);
}

static int taken(void *arg)
{
	const struct handles_want *w = arg;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)w->pid);
	char *s = tsup_slurp(path);
	unsigned long long bit = 1ull << (w->sig - 1);
	int yes = s && !((status_mask(s, "\nShdPnd:") | status_mask(s, "\nSigPnd:")) & bit);
	free(s);
	if (!yes) usleep(5000);
	return yes;
}

int tsup_wait_taken(struct tsup *t, int sig, unsigned timeout_ms)
{
	struct handles_want w = { t->pid, sig };
	return sig > 0 && sig <= 64 && tlib_wait_for(taken, &w, timeout_ms);
}

/* /proc/net/unix: "Num RefCount Protocol Flags Type St Inode Path"; a listening socket has
 * __SO_ACCEPTCON (1 << 16) in its flags */
static int listening(void *arg)
{
	const char *path = arg;
	char *s = tsup_slurp("/proc/net/unix");
	int yes = 0;
	size_t pl = strlen(path);
	for (char *l = s ? strtok(s, "\n") : NULL; l && !yes; l = strtok(NULL, "\n")) {
		size_t ll = strlen(l);
		unsigned long flags;
		if (ll > pl && !strcmp(l + ll - pl, path) && l[ll - pl - 1] == ' ' &&
		    sscanf(l, "%*s %*s %*s %lx", &flags) == 1 && (flags & 0x10000))
			yes = 1;
	}
	free(s);
	if (!yes) usleep(5000);
	return yes;
}

int tsup_wait_listening(struct tsup *t, unsigned timeout_ms)
{
	return tlib_wait_for(listening, t->sock, timeout_ms);
}

/* A sanitizer report from the supervisor or any worker (they share its stderr) fails the test. */
static void check_sanitizers(struct tsup *t)
{
	static const char *const marks[] = { "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
	                                     "runtime error:" };
	char *s = tsup_slurp(t->log);
	for (size_t i = 0; s && i < sizeof marks / sizeof marks[0]; i++)
		if (strstr(s, marks[i])) {
			fflush(stdout);
			fprintf(stderr, "# sanitizer report in %s:\n%s\n", t->log, strstr(s, marks[i]));
			printf("Bail out! sanitizer report in %s\n", t->log);
			fflush(stdout);
			exit(255);   /* tlib's exit handler kills every process the test started */
		}
	free(s);
}

static int reap(struct tsup *t, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		int st;
		pid_t r = waitpid(t->pid, &st, WNOHANG);
		if (r == t->pid) {
			t->status = st;
			t->reaped = 1;
			tlib_untrack(t->pid);
			check_sanitizers(t);
			return st;
		}
		if (tlib_now_ms() >= end) return -1;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
}

int tsup_run(struct tsup *t, const char *const *args, unsigned timeout_ms)
{
	tsup_start(t, args);
	int st = reap(t, timeout_ms);
	if (st == -1) {
		kill(t->pid, SIGKILL);
		reap(t, 5000);
	}
	return st;
}

int tsup_stop(struct tsup *t, int sig, unsigned timeout_ms)
{
	if (t->reaped) return t->status;
	kill(t->pid, sig);
	int st = reap(t, timeout_ms);
	if (st == -1) {
		kill(t->pid, SIGKILL);
		reap(t, 5000);
	}
	return st;
}

static int count_in(const char *hay, const char *needle)
{
	int n = 0;
	size_t nl = strlen(needle);
	for (const char *p = hay; (p = strstr(p, needle)); p += nl) n++;
	return n;
}

int tsup_log_count(struct tsup *t, const char *needle)
{
	char *s = tsup_slurp(t->log);
	int n = s ? count_in(s, needle) : 0;
	free(s);
	return n;
}

char *tsup_log_text(struct tsup *t)
{
	char *s = tsup_slurp(t->log);
	return s ? s : calloc(1, 1);
}

int tsup_wait_log(struct tsup *t, const char *needle, int count, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		if (tsup_log_count(t, needle) >= count) return 1;
		if (tlib_now_ms() >= end) return 0;
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
}

/* /proc/PID/stat: pid (comm) state ppid ... ; comm may hold spaces and parentheses */
static int stat_of(pid_t pid, char *state, pid_t *ppid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	char *s = tsup_slurp(path);
	if (!s) return -1;
	char *rp = strrchr(s, ')');
	int ok = rp && sscanf(rp + 1, " %c %d", state, ppid) == 2;
	free(s);
	return ok ? 0 : -1;
}

int tsup_alive(pid_t pid)
{
	char st;
	pid_t pp;
	return stat_of(pid, &st, &pp) == 0 && st != 'Z' && st != 'X';
}

int tsup_children(pid_t parent, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) && n < max) {
		pid_t p = (pid_t)atoi(e->d_name);
		char st;
		pid_t pp;
		if (p > 0 && stat_of(p, &st, &pp) == 0 && pp == parent && st != 'Z') pids[n++] = p;
	}
	if (d) closedir(d);
	return n;
}

int tsup_descendants(pid_t root, pid_t *pids, int max)
{
	int n = tsup_children(root, pids, max);
	for (int i = 0; i < n && n < max; i++) n += tsup_children(pids[i], pids + n, max - n);
	return n;
}

int tsup_count_lines(const char *path, const char *needle)
{
	char *s = tsup_slurp(path);
	if (!s) return 0;
	int n = 0;
	for (char *line = s; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl) *nl = '\0';
		n += strstr(line, needle) != NULL;
		line = nl ? nl + 1 : NULL;
	}
	free(s);
	return n;
}

struct lines_want {
	const char *path, *needle;
	int count;
};

static int lines_there(void *arg)
{
	const struct lines_want *w = arg;
	if (tsup_count_lines(w->path, w->needle) >= w->count) return 1;
	usleep(20000);
	return 0;
}

int tsup_wait_lines(const char *path, const char *needle, int count, unsigned timeout_ms)
{
	struct lines_want w = { path, needle, count };
	return tlib_wait_for(lines_there, &w, timeout_ms);
}

void tsup_cron_once(char *buf, size_t len, int seconds)
{
	time_t at = time(NULL) + seconds;
	struct tm tm;
	gmtime_r(&at, &tm);
	snprintf(buf, len, "%d %d %d %d %d ? %d", tm.tm_sec, tm.tm_min, tm.tm_hour, tm.tm_mday, tm.tm_mon + 1,
	         tm.tm_year + 1900);
}

const char *tsup_rec_script(void)
{
	static const char rec_sh[] =
		"#!/bin/sh\n"
		"out=$1; shift\n"
		"echo \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_TASK_ID\" >> \"$out\"\n"
		"if [ $# -gt 1 ]; then\n"
		"  echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID\" >> \"$out.se\"\n"
		"  sleep \"$1\"\n"
		"  echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID\" >> \"$out.se\"\n"
		"fi\n";
	static char path[600];
	if (!path[0]) {
		snprintf(path, sizeof path, "%s/rec.sh", tlib_tmpdir());
		tlib_write_file(path, rec_sh, sizeof rec_sh - 1);
		chmod(path, 0755);
	}
	return path;
}

void tsup_log_tail(const struct tsup *t, int lines, const char *who)
{
	char *s = tsup_slurp(t->log);
	if (!s) return;
	char *p = s + strlen(s);
	for (int n = 0; p > s; p--)
		if (p[-1] == '\n' && ++n == lines + 1) break;
	fprintf(stderr, "%s: last lines of %s:\n%s", who, t->log, p);
	free(s);
}

void tsup_die(const char *who, const struct tsup *t, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fflush(stdout);
	fprintf(stderr, "%s: %s\n", who, buf);
	if (t) tsup_log_tail(t, 30, who);
	exit(1);
}

int tsup_session_ms(const struct tsup *t)
{
	char *s = tsup_slurp(t->log);
	const char *p = s ? strstr(s, ", timeout ") : NULL;
	int ms = p ? atoi(p + 10) : -1;
	free(s);
	return ms;
}

/* ---- /proc ---- */

static long status_field(const char *s, const char *name)
{
	const char *p = s ? strstr(s, name) : NULL;
	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

struct tsup_mem tsup_mem(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	char *s = tsup_slurp(path);
	struct tsup_mem m = { status_field(s, "\nVmRSS:"), status_field(s, "\nVmHWM:"), status_field(s, "\nThreads:") };
	free(s);
	return m;
}

/* utime + stime in clock ticks; -1 if gone */
long long tsup_cpu_ticks(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	char *s = tsup_slurp(path);
	char *rp = s ? strrchr(s, ')') : NULL;
	unsigned long long ut, st;
	/* after "(comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	int ok = rp && sscanf(rp + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2;
	free(s);
	return ok ? (long long)(ut + st) : -1;
}

/* the workers' ticks: every process under the supervisor */
long long tsup_tree_ticks(pid_t root)
{
	pid_t kids[256];
	int n = tsup_descendants(root, kids, 256);
	long long sum = 0;
	for (int i = 0; i < n; i++) {
		long long t = tsup_cpu_ticks(kids[i]);
		if (t > 0) sum += t;
	}
	return sum;
}

char *tsup_history_line(const char *path, const char *job, int item, int attempt)
{
	char *all = tsup_slurp(path), *found = NULL, want[300], v[32];
	snprintf(want, sizeof want, "{\"job\":\"%s\",", job);
	for (char *l = all ? strtok(all, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		if (strncmp(l, want, strlen(want)) || !tlib_json_field(l, "attempt", v, sizeof v) || atoi(v) != attempt)
			continue;
		if (item >= 0 && (!tlib_json_field(l, "item", v, sizeof v) || atoi(v) != item)) continue;
		free(found);
		found = strdup(l);
	}
	free(all);
	return found;
}
