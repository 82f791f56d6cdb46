/* bench/lib/bench.c: what the benchmarks share (bench/lib/bench.h): small helpers, ZooKeeper's
 * four-letter words, the supervisor's log, and the stamp files their jobs write. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/lib/bench.h"
#include "t/lib/tlib.h"

const char *bench_name = "bench";

/* ---- small things --------------------------------------------------------------------------------- */

void sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* p-th quantile of n sorted values, nearest rank */
int64_t pct(const int64_t *sorted, int n, double p)
{
	return sorted[(int)(p * (n - 1) + 0.5)];
}

void add(struct text *b, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int w = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (w < 0) fail(NULL, "vsnprintf: %s", strerror(errno));
		if (b->p && (size_t)w < b->cap - b->len) {
			b->len += (size_t)w;
			return;
		}
		size_t cap = b->cap ? b->cap : 65536;
		while (cap - b->len <= (size_t)w) cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np) fail(NULL, "out of memory for a config of %zu bytes", cap);
		b->p = np;
		b->cap = cap;
	}
}

/* ---- ZooKeeper's four-letter words -------------------------------------------------------------- */

/* a number of a four-letter word's reply: "KEY\tVALUE" (mntr) or "KEY:VALUE" (wchs); -1 if none */
long long zk_num(const struct tzk_server *zk, const char *cmd, const char *key)
{
	char *s = tzk_4lw(zk, cmd, 5000);
	long long v = -1;
	size_t kl = strlen(key);
	for (char *p = s; p && (p = strstr(p, key)); p += kl)
		if ((p == s || p[-1] == '\n') && (p[kl] == '\t' || p[kl] == ':')) {
			v = strtoll(p + kl + 1, NULL, 10);
			break;
		}
	free(s);
	return v;
}

long long zk_packets(const struct tzk_server *zk)
{
	long long r = zk_num(zk, "mntr", "zk_packets_received"), s = zk_num(zk, "mntr", "zk_packets_sent");
	if (r < 0 || s < 0) fail(NULL, "ZooKeeper's mntr has no packet counts");
	return r + s;
}

/* The requests each session has sent: ZooKeeper's `cons` gives every connection's last cxid, the
 * client's counter of requests (a ping has an xid of its own and does not count). Up to max
 * sessions: ids in sid[], counters in cxid[]; how many. */
int sessions_cxid(const struct tzk_server *zk, int64_t *sid, int64_t *cxid, int max)
{
	char *s = tzk_4lw(zk, "cons", 5000);
	int n = 0;
	char *save = NULL;
	for (char *l = s ? strtok_r(s, "\n", &save) : NULL; l && n < max; l = strtok_r(NULL, "\n", &save)) {
		char *a = strstr(l, "sid=0x"), *b = strstr(l, "lcxid=0x");
		if (!a || !b) continue;
		sid[n] = strtoll(a + 6, NULL, 16);
		cxid[n] = strtoll(b + 8, NULL, 16);
		n++;
	}
	free(s);
	return n;
}

/* Requests sent between two snapshots by the sessions in both, but for `except` (the bench's own). */
long long requests_between(const int64_t *sid0, const int64_t *cx0, int n0, const int64_t *sid1,
                                  const int64_t *cx1, int n1, int64_t except, int *sessions)
{
	long long sum = 0;
	*sessions = 0;
	for (int i = 0; i < n1; i++)
		for (int k = 0; k < n0; k++)
			if (sid1[i] == sid0[k] && sid1[i] != except) {
				sum += cx1[i] - cx0[k];
				(*sessions)++;
			}
	return sum;
}

/* ---- the log ------------------------------------------------------------------------------------- */

/* Wall time (ns) of the log line "2026-11-21T10:00:00.123Z ..." */
int64_t line_time(const char *line)
{
	struct tm tm = { 0 };
	int ms;
	if (sscanf(line, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
	           &tm.tm_sec, &ms) != 7)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm) * 1000000000 + (int64_t)ms * 1000000;
}

/* The time of the nth line of the log that contains needle, -1 if there are fewer. */
int64_t nth_line_time(const struct tsup *t, const char *needle, int nth)
{
	char *s = tsup_slurp(t->log);
	int64_t at = -1;
	int n = 0;
	char *save = NULL;
	for (char *l = s ? strtok_r(s, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
		if (strstr(l, needle) && ++n == nth) {
			at = line_time(l);
			break;
		}
	free(s);
	return at;
}

/* needle's occurrences in the whole lines of buf[0..*len) (as tsup_log_count counts them); the
 * part line left is moved to the front and *len set to its length */
static int count_lines(char *buf, size_t *len, const char *needle)
{
	char *last = memrchr(buf, '\n', *len);
	if (!last) return 0;
	*last = 0;
	int n = 0;
	size_t nl = strlen(needle);
	for (const char *p = buf; (p = strstr(p, needle)); p += nl) n++;
	size_t rest = *len - (size_t)(last + 1 - buf);
	memmove(buf, last + 1, rest);
	*len = rest;
	return n;
}

/* Wait (polling every 100 ms) until the log has count lines with needle; fails if the supervisor
 * dies or the time runs out. Only what was appended since the last poll is read: the log of
 * 10,000 jobs is 15 MB after a few fires, and reading it whole ten times a second took a share of
 * the 2 cores the supervisor being measured runs on. */
void wait_log(struct tsup *t, const char *needle, int count, unsigned timeout_ms, const char *what)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	int fd = -1, n = 0;
	size_t len = 0, cap = (size_t)1 << 20;
	char *buf = malloc(cap + 1);
	if (!buf) fail(t, "%s: out of memory", what);
	for (;;) {
		if (fd < 0) fd = open(t->log, O_RDONLY | O_CLOEXEC);
		ssize_t r = 0;
		while (fd >= 0 && (r = read(fd, buf + len, cap - len)) > 0) {
			len += (size_t)r;
			buf[len] = 0;
			n += count_lines(buf, &len, needle);
			if (len == cap) {           /* a line of a megabyte: grow */
				char *b = realloc(buf, 2 * cap + 1);
				if (!b) fail(t, "%s: out of memory", what);
				buf = b;
				cap *= 2;
			}
		}
		if (n >= count) break;
		if (!tsup_alive(t->pid)) fail(t, "%s: the supervisor died", what);
		if (tlib_now_ms() > end)
			fail(t, "%s: %d of %d \"%s\" lines after %u ms", what, tsup_log_count(t, needle), count, needle, timeout_ms);
		sleep_ms(100);
	}
	if (fd >= 0) close(fd);
	free(buf);
}

/* ---- stamps: "REALTIME_NS JOB ITEM FIRE_ID TASK_ID", read as the file grows --------------------- */

void stamps_init(struct stamps *st, const char *name)
{
	memset(st, 0, sizeof *st);
	snprintf(st->path, sizeof st->path, "%s/%s.stamps", tlib_tmpdir(), name);
	int fd = open(st->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) fail(NULL, "cannot create %s: %s", st->path, strerror(errno));
	close(fd);
}

/* Read what was appended since the last call; the number of stamps now. */
size_t stamps_read(struct stamps *st)
{
	int fd = open(st->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) fail(NULL, "cannot open %s: %s", st->path, strerror(errno));
	off_t end = lseek(fd, 0, SEEK_END);
	if (end <= st->off) {
		close(fd);
		return st->n;
	}
	size_t len = (size_t)(end - st->off), got = 0;
	char *b = malloc(len + 1);
	if (!b) fail(NULL, "out of memory reading %s", st->path);
	while (got < len) {
		ssize_t r = pread(fd, b + got, len - got, st->off + (off_t)got);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		got += (size_t)r;
	}
	close(fd);
	b[got] = '\0';
	char *last = strrchr(b, '\n');   /* a line being written is read next time */
	if (!last) {
		free(b);
		return st->n;
	}
	st->off += last + 1 - b;
	*last = '\0';
	char *save = NULL;
	for (char *l = strtok_r(b, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		struct stamp s;
		char job[64];
		if (sscanf(l, "%" SCNd64 " %63s %d %" SCNd64, &s.ns, job, &s.item, &s.fire) != 4 || job[0] != 'j') continue;
		s.job = atoi(job + 1);
		if (st->n == st->cap) {
			st->cap = st->cap ? st->cap * 2 : 65536;
			st->s = realloc(st->s, st->cap * sizeof *st->s);
			if (!st->s) fail(NULL, "out of memory for %zu stamps", st->cap);
		}
		st->s[st->n++] = s;
	}
	free(b);
	return st->n;
}

size_t count_fire(const struct stamps *st, int64_t fire)
{
	size_t n = 0;
	for (size_t i = 0; i < st->n; i++) n += st->s[i].fire == fire;
	return n;
}

/* The next time (s) after `after` of the cron "S/P * * * * ?" (P divides 60). */
int64_t next_fire(int64_t after, int s, int p)
{
	int64_t t = after + 1;
	while (t % p != s) t++;
	return t;
}
