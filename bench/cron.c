/* bench/cron.c: how long one next-fire computation takes, ejob against its alternatives.
 *
 * For a set of common and hard Quartz expressions in America/New_York, from the same 20,000
 * start instants (2024-2026, fixed seed), each call is timed alone and the median and 99th
 * percentile printed, for:
 *   - ejob's cron_next();
 *   - Quartz 2.3.2's own CronExpression.getTimeAfter, in a JVM, after JIT warm-up
 *     (t/quartz/CronBench.java; shown as n/a if java or the jar is missing);
 *   - the naive C way: step through the calendar with libc localtime_r()/mktime() (second,
 *     minute, hour, day and month at a time, as classic cron daemons do), with the process TZ.
 * It also checks the answers: Quartz's must equal ejob's (a checksum per expression); the
 * naive search agrees except where DST or Quartz's own rules differ from plain libc.
 * Prints one markdown table (docs/cron.md has a copy).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cron/cron.h"
#include "cron/tz.h"

#define ZONE "America/New_York"
#define NSTART 20000
#define JAR "/usr/share/java/quartz2.jar"
#define BENCH_JAVA "t/quartz/CronBench.java"

/* What the naive search understands: the same schedule, written out by hand. */
enum day_rule { D_DOM, D_DOW, D_LAST, D_LASTWD, D_NEARWD, D_NTH, D_LASTDOW };

struct naive {
	uint64_t sec, min;
	uint32_t hour, dom; /* dom: bits 1-31 */
	uint16_t mon;       /* bits 1-12 */
	uint8_t dow;        /* bits 0-6, Sunday = 0 */
	enum day_rule day;
	int arg, arg2;
};

struct bench {
	const char *name, *expr;
	int n; /* start instants */
	struct naive nv;
};

#define ALL60 ((1ULL << 60) - 1)
#define ALL24 ((1U << 24) - 1)
#define ALLDOM 0xFFFFFFFEU
#define ALLMON 0x1FFEU
#define ALLDOW 0x7FU

static uint64_t every(int step, int max)
{
	uint64_t m = 0;
	for (int i = 0; i < max; i += step)
		m |= 1ULL << i;
	return m;
}

static struct bench benches[] = {
	{ "every 5 minutes", "0 0/5 * * * ?", NSTART, { 1, 0 /* main */, ALL24, ALLDOM, ALLMON, ALLDOW, D_DOM, 0, 0 } },
	{ "daily at noon", "0 0 12 * * ?", NSTART, { 1, 1, 1U << 12, ALLDOM, ALLMON, ALLDOW, D_DOM, 0, 0 } },
	{ "weekdays 10:15", "0 15 10 ? * MON-FRI", NSTART,
	  { 1, 1ULL << 15, 1U << 10, ALLDOM, ALLMON, 0x3E, D_DOW, 0, 0 } },
	{ "every 10 seconds", "*/10 * * * * ?", NSTART, { 0 /* main */, ALL60, ALL24, ALLDOM, ALLMON, ALLDOW, D_DOM, 0, 0 } },
	{ "monthly, 1st 00:00", "0 0 0 1 * ?", NSTART, { 1, 1, 1, 1U << 1, ALLMON, ALLDOW, D_DOM, 0, 0 } },
	{ "third Friday (6#3)", "0 0 12 ? * 6#3", NSTART, { 1, 1, 1U << 12, ALLDOM, ALLMON, ALLDOW, D_NTH, 5, 3 } },
	{ "last weekday (LW)", "0 0 12 LW * ?", NSTART, { 1, 1, 1U << 12, ALLDOM, ALLMON, ALLDOW, D_LASTWD, 0, 0 } },
	{ "last Thursday (5L)", "0 0 12 ? * 5L", NSTART, { 1, 1, 1U << 12, ALLDOM, ALLMON, ALLDOW, D_LASTDOW, 4, 0 } },
	{ "nearest weekday (15W)", "0 0 12 15W * ?", NSTART, { 1, 1, 1U << 12, ALLDOM, ALLMON, ALLDOW, D_NEARWD, 15, 0 } },
	{ "02:30, skipped on DST day", "0 30 2 * * ?", NSTART, { 1, 1ULL << 30, 1U << 2, ALLDOM, ALLMON, ALLDOW, D_DOM, 0, 0 } },
	{ "29 February", "0 0 0 29 2 ?", NSTART, { 1, 1, 1, 1U << 29, 1U << 2, ALLDOW, D_DOM, 0, 0 } },
	{ "never (30 February)", "0 0 0 30 2 ?", 200, { 1, 1, 1, 1U << 30, 1U << 2, ALLDOW, D_DOM, 0, 0 } },
};
#define NBENCH (sizeof benches / sizeof benches[0])

/* ---- the naive search ---------------------------------------------------------------------- */

static int mdays(const struct tm *tm)
{
	return tz_month_days(tm->tm_year + 1900, tm->tm_mon + 1);
}

static int wday_of(const struct tm *tm, int mday) /* weekday of another day of tm's month */
{
	return ((tm->tm_wday + mday - tm->tm_mday) % 7 + 7) % 7;
}

static int nearest_weekday(const struct tm *tm, int d)
{
	int last = mdays(tm), w = wday_of(tm, d);
	if (w == 6)
		return d == 1 ? 3 : d - 1;
	if (w == 0)
		return d == last ? d - 2 : d + 1;
	return d;
}

static int day_ok(const struct naive *n, const struct tm *tm)
{
	int d = tm->tm_mday, last = mdays(tm);
	switch (n->day) {
	case D_DOM:
		return n->dom >> d & 1;
	case D_DOW:
		return n->dow >> tm->tm_wday & 1;
	case D_LAST:
		return d == last - n->arg;
	case D_LASTWD:
		return d == nearest_weekday(tm, last);
	case D_NEARWD:
		return d == nearest_weekday(tm, n->arg);
	case D_NTH:
		return tm->tm_wday == n->arg && (d - 1) / 7 + 1 == n->arg2;
	case D_LASTDOW:
		return tm->tm_wday == n->arg && d + 7 > last;
	}
	return 0;
}

static int64_t naive_next(const struct naive *n, int64_t after)
{
	time_t t = (time_t)after + 1;
	struct tm tm;
	for (;;) {
		localtime_r(&t, &tm);
		if (tm.tm_year + 1900 > 2126)
			return -1;
		if (!(n->mon >> (tm.tm_mon + 1) & 1)) {
			tm.tm_mon++;
			tm.tm_mday = 1;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		} else if (!day_ok(n, &tm)) {
			tm.tm_mday++;
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		} else if (!(n->hour >> tm.tm_hour & 1)) {
			tm.tm_hour++;
			tm.tm_min = tm.tm_sec = 0;
		} else if (!(n->min >> tm.tm_min & 1)) {
			tm.tm_min++;
			tm.tm_sec = 0;
		} else if (!(n->sec >> tm.tm_sec & 1)) {
			t++;
			continue;
		} else {
			return t;
		}
		tm.tm_isdst = -1;
		time_t next = mktime(&tm);
		t = next > t ? next : t + 1; /* never backwards across a DST change */
	}
}

/* ---- timing ---------------------------------------------------------------------------------- */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

struct stats {
	double median, p99;
	int64_t sum;
	int ok;
};

static void finish(int64_t *ns, int n, int64_t overhead, struct stats *st)
{
	for (int i = 0; i < n; i++)
		ns[i] = ns[i] > overhead ? ns[i] - overhead : 0;
	qsort(ns, (size_t)n, sizeof *ns, cmp64);
	st->median = (double)ns[n / 2];
	st->p99 = (double)ns[(int)((int64_t)n * 99 / 100)];
	st->ok = 1;
}

static int64_t timer_overhead(void)
{
	static int64_t d[100001];
	for (int i = 0; i < 100001; i++) {
		int64_t a = now_ns();
		d[i] = now_ns() - a;
	}
	qsort(d, 100001, sizeof *d, cmp64);
	return d[50000];
}

/* Quartz in a JVM: one run for every expression. */
static int run_quartz(int64_t (*starts)[NSTART], struct stats *q)
{
	char dir[] = "/tmp/ejob-bench-XXXXXX", in[64], out[64];
	if (access(JAR, R_OK) != 0 || !mkdtemp(dir))
		return -1;
	snprintf(in, sizeof in, "%s/in", dir);
	snprintf(out, sizeof out, "%s/out", dir);
	FILE *f = fopen(in, "w");
	if (!f)
		return -1;
	fprintf(f, "Z %s\n", ZONE);
	for (size_t b = 0; b < NBENCH; b++) {
		fprintf(f, "E ");
		for (const char *p = benches[b].expr; *p; p++)
			fprintf(f, "%02x", (unsigned char)*p);
		fprintf(f, " %d\n", benches[b].n);
		for (int i = 0; i < benches[b].n; i++)
			fprintf(f, "%" PRId64 "\n", starts[b][i]);
	}
	fclose(f);
	pid_t pid = fork();
	if (pid == 0) {
		int i = open(in, O_RDONLY), o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int nul = open("/dev/null", O_WRONLY);
		if (i < 0 || o < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || (nul >= 0 && dup2(nul, 2) < 0))
			_exit(126);
		execlp("java", "java", "-cp", JAR, BENCH_JAVA, (char *)NULL);
		_exit(127);
	}
	int st = -1, rc = -1;
	if (pid > 0)
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	if (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && (f = fopen(out, "r"))) {
		rc = 0;
		for (size_t b = 0; b < NBENCH; b++) {
			long long sum;
			if (fscanf(f, "%lf %lf %lld", &q[b].median, &q[b].p99, &sum) != 3) {
				rc = -1;
				break;
			}
			q[b].sum = sum;
			q[b].ok = 1;
		}
		fclose(f);
	}
	unlink(in);
	unlink(out);
	rmdir(dir);
	return rc;
}

static void cell(char *buf, size_t len, const struct stats *s, int p99)
{
	if (!s->ok)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.0f", p99 ? s->p99 : s->median);
}

int main(void)
{
	static int64_t starts[NBENCH][NSTART], ns[NSTART], got[NSTART];
	struct stats e[NBENCH] = { { 0 } }, q[NBENCH] = { { 0 } }, nv[NBENCH] = { { 0 } };
	int agree[NBENCH] = { 0 };
	tz_err_t terr;
	tz_t *tz = tz_load(ZONE, &terr);
	if (!tz) {
		fprintf(stderr, "bench/cron: %s\n", terr.msg);
		return 1;
	}
	benches[0].nv.min = every(5, 60);
	benches[3].nv.sec = every(10, 60);
	setenv("TZ", ZONE, 1); /* for the naive search's localtime_r/mktime */
	tzset();
	uint64_t rng = 0x853C49E6748FEA9Bu;
	int64_t from = tz_days_from_civil(2024, 1, 1) * 86400, span = 3 * 365 * 86400;
	for (size_t b = 0; b < NBENCH; b++)
		for (int i = 0; i < benches[b].n; i++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			starts[b][i] = from + (int64_t)(rng % (uint64_t)span);
		}
	int64_t overhead = timer_overhead();

	for (size_t b = 0; b < NBENCH; b++) {
		cron_err_t err;
		cron_t *c = cron_parse(benches[b].expr, &err);
		if (!c) {
			fprintf(stderr, "bench/cron: '%s': %s\n", benches[b].expr, err.msg);
			return 1;
		}
		int n = benches[b].n;
		for (int i = 0; i < n; i++) /* warm-up */
			got[i] = cron_next(c, tz, starts[b][i]);
		e[b].sum = 0;
		for (int i = 0; i < n; i++) {
			int64_t a = now_ns();
			int64_t t = cron_next(c, tz, starts[b][i]);
			ns[i] = now_ns() - a;
			got[i] = t;
			e[b].sum += t;
		}
		finish(ns, n, overhead, &e[b]);
		for (int i = 0; i < n; i++) {
			int64_t a = now_ns();
			int64_t t = naive_next(&benches[b].nv, starts[b][i]);
			ns[i] = now_ns() - a;
			agree[b] += t == got[i];
		}
		finish(ns, n, overhead, &nv[b]);
		cron_free(c);
	}
	int java = run_quartz(starts, q) == 0;

	printf("Next fire time after a random instant in 2024-2026, %s, %d starts per expression "
	       "(200 for never); nanoseconds per call, median and 99th percentile.\n\n", ZONE, NSTART);
	printf("| expression | | ejob median | ejob p99 | Quartz median | Quartz p99 | libc naive "
	       "median | libc naive p99 | Quartz / ejob | naive / ejob |\n");
	printf("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
	int mismatch = 0;
	for (size_t b = 0; b < NBENCH; b++) {
		char qm[32], qp[32], rq[32];
		cell(qm, sizeof qm, &q[b], 0);
		cell(qp, sizeof qp, &q[b], 1);
		if (q[b].ok)
			snprintf(rq, sizeof rq, "%.0fx", q[b].median / (e[b].median > 0 ? e[b].median : 1));
		else
			snprintf(rq, sizeof rq, "n/a");
		printf("| %s | `%s` | %.0f | %.0f | %s | %s | %.0f | %.0f | %s | %.0fx |\n",
		       benches[b].name, benches[b].expr, e[b].median, e[b].p99, qm, qp, nv[b].median,
		       nv[b].p99, rq, nv[b].median / (e[b].median > 0 ? e[b].median : 1));
		mismatch += q[b].ok && q[b].sum != e[b].sum;
	}
	printf("\n");
	if (!java)
		printf("Quartz: n/a (needs java and %s: tools/install-deps).\n", JAR);
	else if (mismatch)
		printf("WARNING: Quartz's answers differ from ejob's for %d expressions.\n", mismatch);
	else
		printf("Quartz's answers equal ejob's for every expression and start.\n");
	printf("libc naive answers equal ejob's:");
	for (size_t b = 0; b < NBENCH; b++)
		printf(" %s %d/%d%s", benches[b].name, agree[b], benches[b].n,
		       b + 1 < NBENCH ? ";" : ".\n");
	tz_free(tz);
	return mismatch ? 1 : 0;
}
