/* t/31-cron-quartz.c: ejob's cron against the real Quartz 2.3.2, on the same questions.
 *
 * One JVM (t/quartz/CronOracle.java) answers, for hand-written tricky expressions, the tables
 * of t/30 and a few thousand expressions generated from a fixed seed (valid ones, near misses
 * and mutations, some with non-ASCII text), whether Quartz accepts each and its next fire
 * times from given instants in given zones. ejob must give the same verdicts and the same
 * times. Without Java or the Quartz jar this test fails and says what to install.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron/cron.h"
#include "cron/tz.h"
#include "t/cron_cases.h"
#include "t/lib/oracle.h"
#include "t/tap.h"

#define NRANDOM 4000 /* a soak: EJOB_CRON_RANDOM=n, EJOB_CRON_SEED=s, EJOB_CRON_MUTATE=m */
#define COUNT 5 /* fire times asked per question */

static const char *const zones[] = {
	"UTC", "Europe/London", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
	"Pacific/Chatham", "America/Sao_Paulo", "Pacific/Apia", "America/St_Johns",
	"Europe/Dublin", "Australia/Sydney", "Asia/Kathmandu", "Antarctica/Troll",
	"America/Santiago", "Europe/Moscow", "America/Havana", "America/Caracas", "Africa/Cairo",
	"America/Los_Angeles", "Europe/Berlin",
};
#define NZONES (sizeof zones / sizeof zones[0])

/* Instants where things happen (UTC): DST changes in London and New York, the first pass of
 * New York's repeated hour, leap days, year ends, the end of Java's zone tables (2037), the
 * year limit. */
static const int64_t instants[] = {
	0,           /* 1970-01-01T00:00:00Z */
	951782400,   /* 2000-02-29T00:00:00Z */
	1709121600,  /* 2024-02-28T12:00:00Z */
	1710053999,  /* 2024-03-10T06:59:59Z, New York springs forward at 07:00Z */
	1711846799,  /* 2024-03-31T00:59:59Z, London springs forward at 01:00Z */
	1729989000,  /* 2024-10-27T00:30:00Z, London's repeated hour, first pass */
	1730611800,  /* 2024-11-03T05:30:00Z, New York 01:30 EDT, first pass */
	1730613599,  /* 2024-11-03T05:59:59Z */
	1730613600,  /* 2024-11-03T06:00:00Z, New York 01:00 EST */
	1735689599,  /* 2024-12-31T23:59:59Z */
	2145916799,  /* 2037-12-31T23:59:59Z */
	2214000000,  /* 2040-02-28T... */
	2215063799,  /* 2040-03-11T07:29:59Z */
	4102444799,  /* 2099-12-31T23:59:59Z */
	4107456000,  /* 2100-02-27T00:00:00Z */
	4891363199,  /* 2124-12-31T23:59:59Z */
	-2208988800, /* 1900-01-01T00:00:00Z */
	-631152000,  /* 1950-01-01T00:00:00Z */
};
#define NINSTANTS (sizeof instants / sizeof instants[0])

/* Hand-written: every special character, DST-sensitive times, and Quartz's oddities. */
static const char *const hand[] = {
	"0 30 2 * * ?", "0 30 1 * * ?", "0 0/30 * * * ?", "0 * 1-3 * * ?", "0 0 * * * ?",
	"* * * * * ?", "0 15 1 ? * SUN", "0 0 2 ? * SUN", "0 0 0 * * ?", "0 0 0 L * ?",
	"0 0 0 LW * ?", "0 0 0 L-3 * ?", "0 0 0 L-3W * ?", "0 0 0 L-30 * ?", 
	"0 0 0 15W * ?", "0 0 0 1W * ?", "0 0 0 31W * ?", "0 0 0 30W 2 ?",
	"0 0 12 ? * 6#3", "0 0 12 ? * 2#5", "0 0 12 ? * 5L", "0 0 12 ? * 1L", "0 0 12 ? * SATL",
	"0 0 0 29 2 ?", "0 0 0 30 2 ?", "0 0 0 31 * ?", "0 0 0 ? * MON-FRI", "0 0 0 ? * FRI-MON",
	"0 0 22-2 * * ?", "0 0 0 1 NOV-FEB ?", "0 0 0 1 1 ? 2030", "0 0 0 1 1 ? 2030-2035/2",
	"0 0 0 * * ? 2126", "0 0 0 * * ? 2127", "0 0 0 * * ? 1999", "0 59 23 31 12 ? *",
	"0 0 12 * * ?X", "0 0 12 ? * 1-5L", "99 0 12 * * ?", "*/-5 0 12 * * ?", "0 0 12 ? * 9#1",
	"L 0 0 * * ?", "0 0 0 ? L MON", "0 0 0 * * ? 2200/2", "0 0 0 98 * MON", "0 0 0 ? * ſun",
	"0 0 0 ? * ٣", "*/٥ 0 0 * * ?", "0 0 12 * * ? 2020 junk junk", 
	"0 0 99-30/5 * * ?", "0 0 0 ? * 99-20/5", "0 0 0 99-200/50 * ?", "0 0 0 1 99-30/7 ?",
	"0 0 0 ? * 0#1", "0 0 0 ? * 7#5", "0 0 0 ? * MON#5", "0 0 0 ? * 1,6#3", "1,2,3 * * * * ?",
	"0 0 0 ? * L", "0 0 0 ? * L-3", "0 0 0 ? * LW", "0 0 0 L * L", "0 0 0 ? 2 5L",
	"0 0 12 1/5 * ?", "0 0 12 */5 * ?", "0 0 12 /5 * ?", "0 5/15 * * * ?", "0 55-5 * * * ?",
	"59-1 * * * * ?", "0 0 0 1,15 * ?", "0 0 0 ? * MON,WED,FRI", "0 0 0 ? JAN-MAR,OCT MON",
	"0 0 0 ? * SUN#1", "0 0 6 ? * MON-FRI", "0 0 0 ? 2 MON#5", "0 0 1 ? * SUN 2024-2026",
	"0 30 0 ? * *", "0 0 0 ? * *", "0 0 0 * * ? 2024/100", "0 0 0 ? * MON#1 2025",
	"0 0 12 LW 2 ?", "0 0 0 L 2 ? 2000-2400/100", "0 0 0 29 2 ? 2100", "0 0 0 29 2 ? 2096",
	"0 0 23 L-1 * ?", "0 0 0 1W 8 ?", "0 0 0 2W 6 ?", "0 0 0 31W 8 ?", "0 0 0 30W 9 ?",
	"\t0  0\t12 * *  ? ", "0 0 12 * * ? \x01", "0 0 12 ? * \x01", "0 0 12 , * ?",
	"0 0 0 ? * 1-7/2", "0 0 0 ? * */2", "0 0 0 */7 * ?", "0 0 */5 * * ?", "*/7 */11 * * * ?",
	"0 0 12 ? * MON-FRI#2", "0 0 12 ? * MONL", "0 0 12 ? * MONX", "0 0 12 * JANX ?",
	"0 0 0 L-0 * ?", "0 0 0 L-W * ?", "0 0 0 ? * 3#+2", "*/+5 * * * * ?", "0 0 12 ?x * MON",
	"0 0 0 1-31/10 * ?", "0 0 0 31-1 * ?", "0 0 0 ? 12-1 *", "0 0 0 ? * 7-1",
	"0 30 23 ? * 7L", "0 0 0 5 * ? 2026,2028", "0 0 0 ? * 2 2026/3",
};
#define NHAND (sizeof hand / sizeof hand[0])

/* Expressions on which Quartz's getTimeAfter spins for ever (0W, L-30W: back and forth
 * between two days; the oracle gives up after half a second, ejob sees the cycle), or for
 * long (minute 99 reads as '*' plus a roll-over: an hour per loop turn until year 3000, so
 * it starts late in 2998 here to let Quartz finish). Asked once each. */
static const struct {
	const char *expr, *zone;
	int64_t after;
} hangs[] = {
	{ "0 0 0 0W * ?", "UTC", 0 },
	{ "0 0 0 L-30W * ?", "America/St_Johns", 0 },
	{ "0 99-5/0 * * * ?", "UTC", 32503507200 }, /* 2999-12-30T00:00:00Z */
	{ "0 99-5/0 * * * ?", "Europe/London", 32472144000 }, /* 2999-01-01T00:00:00Z */
};
#define NHANGS (sizeof hangs / sizeof hangs[0])

/* ---- random expressions ------------------------------------------------------------------ */

static uint64_t rng = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int rn(int n)
{
	return (int)(rnd() % (uint64_t)n);
}

struct buf {
	char s[512];
	size_t n;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		b->n = b->n + (size_t)k < sizeof b->s ? b->n + (size_t)k : sizeof b->s - 1;
}

static const int lo_of[7] = { 0, 0, 0, 1, 1, 1, 2020 };
static const int hi_of[7] = { 59, 59, 23, 31, 12, 7, 2140 };
static const char *const months3[] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
	                               "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
static const char *const days3[] = { "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT" };

static int value(int f)
{
	int r = rn(100);
	if (r < 94)
		return lo_of[f] + rn(hi_of[f] - lo_of[f] + 1);
	if (r < 95)
		return hi_of[f] + 1 + rn(3);
	if (r < 95)
		return lo_of[f] > 0 ? 0 : 98 + rn(2);
	if (r < 97)
		return 98 + rn(2);
	return f == 6 ? 1970 + rn(1200) : 60 + rn(200);
}

static void name(struct buf *b, int f, int v)
{
	const char *n = f == 4 ? months3[(v - 1) % 12] : days3[(v - 1) % 7];
	for (int i = 0; i < 3; i++)
		put(b, "%c", rn(5) ? n[i] : n[i] + ('a' - 'A'));
}

static void number_or_name(struct buf *b, int f, int v)
{
	if ((f == 4 || f == 5) && v >= 1 && v <= (f == 4 ? 12 : 7) && rn(3) == 0)
		name(b, f, v);
	else
		put(b, "%d", v);
}

static void element(struct buf *b, int f)
{
	int r = rn(100), step = 1 + rn(f == 6 ? 8 : hi_of[f] > 12 ? 20 : 6);
	if (rn(40) == 0)
		step = 50 + rn(100);
	if (r < 30) {
		number_or_name(b, f, value(f));
	} else if (r < 42) {
		number_or_name(b, f, value(f));
		put(b, "-");
		number_or_name(b, f, value(f));
	} else if (r < 50) {
		put(b, "%d-%d/%d", value(f), value(f), step);
	} else if (r < 57) {
		put(b, "%d/%d", value(f), step);
	} else if (r < 67) {
		put(b, "*");
	} else if (r < 73) {
		put(b, rn(4) ? "*/%d" : "/%d", step);
	} else if (r < 77) {
		if (f == 3 || f == 5 || rn(4) == 0)
			put(b, "?");
		else
			put(b, "%d", value(f));
	} else if (f == 3 && r < 90) { /* day-of-month specials */
		switch (rn(6)) {
		case 0: put(b, "L"); break;
		case 1: put(b, "LW"); break;
		case 2: put(b, "L-%d", rn(32)); break;
		case 3: put(b, "L-%dW", rn(32)); break;
		default: put(b, "%dW", rn(33)); break;
		}
	} else if (f == 5 && r < 90) { /* day-of-week specials */
		switch (rn(5)) {
		case 0: put(b, "L"); break;
		case 1: number_or_name(b, f, 1 + rn(7)); put(b, "L"); break;
		case 2: number_or_name(b, f, 1 + rn(7)); put(b, "#%d", rn(7)); break;
		default: put(b, "%d#%d", 1 + rn(8), 1 + rn(5)); break;
		}
	} else {
		number_or_name(b, f, value(f));
	}
}

static const char *const junk[] = {
	"L", "W", "#", "?", "*", "/", "-", ",", "X", "0", "5", "12", " ", "\t", "ſ", "ß", "٣",
	"３", "é", "ı", "\x01", "+", "LW", "#3", "/0", "-", "99", "MON", "JAN", "ﬀ",
};
#define NJUNK (sizeof junk / sizeof junk[0])

static void mutate(char *s)
{
	size_t n = strlen(s), at = n ? (size_t)rn((int)n + 1) : 0;
	char out[600];
	int how = rn(3);
	const char *j = junk[rn(NJUNK)];
	if (how == 0 && n > 0 && at < n) { /* delete a byte (keeps UTF-8 valid only if ASCII) */
		if ((unsigned char)s[at] >= 0x80)
			return;
		memmove(s + at, s + at + 1, n - at);
		return;
	}
	if (how == 1 && at < n && (unsigned char)s[at] < 0x80) { /* replace */
		snprintf(out, sizeof out, "%.*s%s%s", (int)at, s, j, s + at + 1);
	} else { /* insert */
		while (at > 0 && at < n && ((unsigned char)s[at] & 0xC0) == 0x80)
			at--;
		snprintf(out, sizeof out, "%.*s%s%s", (int)at, s, j, s + at);
	}
	out[500] = '\0';
	memcpy(s, out, strlen(out) + 1);
}

static int extra_mutations; /* EJOB_CRON_MUTATE=n: n more mutations per expression (soaks) */

static void random_expr(char *out)
{
	struct buf b = { .n = 0 };
	int nf = rn(20) == 0 ? 5 + rn(4) : 6 + rn(2);
	int q = rn(10); /* which of day-of-month / day-of-week is '?' */
	for (int f = 0; f < nf; f++) {
		if (f > 0)
			put(&b, rn(15) ? " " : rn(2) ? "\t" : "  ");
		int ff = f < 7 ? f : 6;
		if ((ff == 3 && q < 4) || (ff == 5 && q >= 4 && q < 9)) {
			put(&b, "?");
			continue;
		}
		int k = rn(10) < 8 ? 1 : 2 + rn(2);
		for (int i = 0; i < k; i++) {
			if (i)
				put(&b, ",");
			element(&b, ff);
		}
	}
	b.s[400] = '\0';
	memcpy(out, b.s, strlen(b.s) + 1);
	if (rn(8) == 0)
		mutate(out);
	if (rn(20) == 0)
		mutate(out);
	for (int i = 0; i < extra_mutations; i++)
		mutate(out);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- comparing --------------------------------------------------------------------------- */

struct q {
	const char *expr;
	const char *zone;
	int64_t after;
};

static int mismatches;

static void report(const struct q *q, const char *java, const char *ours)
{
	if (++mismatches <= 25) {
		char *h = oracle_hex(q->expr);
		diag("MISMATCH expr='%s' (hex %s) zone=%s after=%" PRId64 "\n  quartz: %s\n  ejob:   %s",
		     q->expr, h, q->zone, q->after, java, ours);
		free(h);
	}
}

/* ejob's answer in the oracle's language. */
static void ours(const struct q *q, const tz_t *tz, int max_year, char *out, size_t len)
{
	cron_err_t err;
	cron_t *c = cron_parse_max_year(q->expr, max_year, &err);
	if (!c) {
		snprintf(out, len, "ERR column %d: %s", err.column, err.msg);
		return;
	}
	size_t k = (size_t)snprintf(out, len, "OK");
	int64_t t = q->after;
	for (int i = 0; i < COUNT && k < len; i++) {
		if (!cron_after(c, tz, t, &t)) {
			k += (size_t)snprintf(out + k, len - k, " never");
			break;
		}
		k += (size_t)snprintf(out + k, len - k, " %" PRId64, t);
	}
	cron_free(c);
}

/* Quartz throwing from getTimeAfter (an expression it accepts but cannot evaluate, such as
 * seconds "L") is "never" for ejob, and so is a search Quartz does not finish (it spins for
 * ever, or for longer than the oracle waits, on its way to year 3000 and no answer). */
static void normalise(char *java)
{
	char *e = strstr(java, " EXC ");
	if (!e)
		e = strstr(java, " TIMEOUT");
	if (e)
		strcpy(e, " never");
}

static char *question(const struct q *q)
{
	char *h = oracle_hex(q->expr), *s = NULL;
	if (h && asprintf(&s, "N %s %" PRId64 " %d %s", q->zone, q->after, COUNT, h) < 0)
		s = NULL;
	free(h);
	return s;
}

int main(void)
{
	size_t nrandom = getenv("EJOB_CRON_RANDOM") ? strtoul(getenv("EJOB_CRON_RANDOM"), NULL, 10)
	                                            : NRANDOM;
	if (getenv("EJOB_CRON_MUTATE"))
		extra_mutations = atoi(getenv("EJOB_CRON_MUTATE"));
	if (getenv("EJOB_CRON_SEED"))
		rng = strtoull(getenv("EJOB_CRON_SEED"), NULL, 0) | 1;
	char (*rexpr)[512] = calloc(nrandom ? nrandom : 1, sizeof *rexpr);
	size_t ncases = sizeof cron_cases / sizeof cron_cases[0];
	size_t nbad = sizeof cron_bad / sizeof cron_bad[0];
	size_t cap = 1 + NHANGS + NHAND * 8 + ncases + nbad + nrandom * 2, nq = 0;
	struct q *qs = calloc(cap, sizeof *qs);
	char **questions = calloc(cap + 1, sizeof *questions);
	if (!qs || !questions || !rexpr)
		BAIL_OUT("out of memory");

	/* the t/30 tables: Quartz must agree with the expected values written there */
	for (size_t i = 0; i < ncases; i++) {
		tz_t *tz = tz_load(cron_cases[i].zone, NULL);
		int64_t from;
		if (!tz || tz_parse_iso(tz, cron_cases[i].from, &from) < 0)
			BAIL_OUT("case %zu: bad zone or start", i);
		tz_free(tz);
		qs[nq++] = (struct q){ cron_cases[i].expr, cron_cases[i].zone, from };
	}
	for (size_t i = 0; i < nbad; i++)
		qs[nq++] = (struct q){ cron_bad[i].expr, "UTC", 0 };
	size_t first_other = nq;
	for (size_t i = 0; i < NHANGS; i++)
		qs[nq++] = (struct q){ hangs[i].expr, hangs[i].zone, hangs[i].after };
	for (size_t i = 0; i < NHAND; i++)
		for (int k = 0; k < 8; k++) {
			int64_t at = k < 5 ? instants[(i * 5 + (size_t)k) % NINSTANTS]
			                   : -2208988800 + (int64_t)(rnd() % 7100000000u);
			qs[nq++] = (struct q){ hand[i], zones[(i + (size_t)k * 7) % NZONES], at };
		}
	for (size_t i = 0; i < nrandom; i++) {
		random_expr(rexpr[i]);
		for (int k = 0; k < 2; k++) {
			int64_t at = rn(2) ? instants[rn(NINSTANTS)]
			                   : -2208988800 + (int64_t)(rnd() % 7100000000u);
			qs[nq++] = (struct q){ rexpr[i], zones[rn(NZONES)], at };
		}
	}
	questions[0] = strdup("V");
	for (size_t i = 0; i < nq; i++)
		if (!(questions[i + 1] = question(&qs[i])))
			BAIL_OUT("out of memory");

	char why[600];
	double t0 = now_s();
	char **ans = oracle_ask(questions, nq + 1, why, sizeof why);
	double t1 = now_s();
	if (!ans) {
		fail("ask Quartz: %s", why);
		oracle_free(questions, nq + 1);
		free(qs);
		free(rexpr);
		return done_testing();
	}
	int max_year = 0;
	char tzver[32] = "";
	if (sscanf(ans[0], "V %d %31s", &max_year, tzver) != 2)
		BAIL_OUT("oracle version line: %s", ans[0]);
	note("Quartz MAX_YEAR %d, Java tzdata %s", max_year, tzver);

	/* 1. the t/30 tables as Quartz sees them */
	int bad_cases = 0;
	for (size_t i = 0; i < ncases; i++) {
		char want[600];
		size_t k = (size_t)snprintf(want, sizeof want, "OK");
		tz_t *tz = tz_load(cron_cases[i].zone, NULL);
		int n = 0;
		for (; n < COUNT && cron_cases[i].next[n]; n++) {
			int64_t t;
			if (!strcmp(cron_cases[i].next[n], "never")) {
				k += (size_t)snprintf(want + k, sizeof want - k, " never");
				break;
			}
			tz_parse_iso(tz, cron_cases[i].next[n], &t);
			k += (size_t)snprintf(want + k, sizeof want - k, " %" PRId64, t);
		}
		tz_free(tz);
		char java[600];
		snprintf(java, sizeof java, "%s", ans[1 + i]);
		normalise(java);
		/* the table may list fewer than COUNT times: compare that prefix */
		size_t wl = strlen(want);
		if (strncmp(java, want, wl) != 0 || (java[wl] != '\0' && java[wl] != ' ')) {
			bad_cases++;
			diag("t/30 case %zu '%s' in %s from %s:\n  quartz: %s\n  table:  %s", i,
			     cron_cases[i].expr, cron_cases[i].zone, cron_cases[i].from, java, want);
		}
	}
	ok(bad_cases == 0, "Quartz gives the fire times t/30 expects (%zu cases)", ncases);
	int bad_refused = 0;
	for (size_t i = 0; i < nbad; i++)
		if (strncmp(ans[1 + ncases + i], "ERR", 3) != 0) {
			bad_refused++;
			diag("t/30 expects '%s' refused; Quartz: %s", cron_bad[i].expr, ans[1 + ncases + i]);
		}
	ok(bad_refused == 0, "Quartz refuses every expression t/30 refuses (%zu)", nbad);

	/* 2. everything, ejob against Quartz */
	size_t accepted = 0, refused = 0, times = 0, nevers = 0, excs = 0, verdicts = 0, timeouts = 0;
	size_t uncompared = 0;
	int verdict_mismatch = 0;
	mismatches = 0;
	tz_t *tzs[NZONES];
	for (size_t z = 0; z < NZONES; z++)
		if (!(tzs[z] = tz_load(zones[z], NULL)))
			BAIL_OUT("cannot load %s", zones[z]);
	for (size_t i = 0; i < nq; i++) {
		const tz_t *tz = NULL;
		for (size_t z = 0; z < NZONES; z++)
			if (!strcmp(zones[z], qs[i].zone))
				tz = tzs[z];
		char java[600], mine[600];
		snprintf(java, sizeof java, "%s", ans[1 + i]);
		timeouts += strstr(java, "TIMEOUT") != NULL;
		if (!strcmp(java, "TIMEOUT")) { /* Quartz gave no answer at all, e.g. still parsing a
		                                  * year range of millions: nothing to compare */
			uncompared++;
			continue;
		}
		if (oracle_tz_differs(qs[i].zone, qs[i].after)) { /* tzdata versions differ there */
			uncompared++;
			continue;
		}
		if (!strncmp(java, "BAD", 3)) {
			report(&qs[i], java, "(no comparison)");
			continue;
		}
		excs += strstr(java, " EXC ") != NULL;
		normalise(java);
		ours(&qs[i], tz, max_year, mine, sizeof mine);
		bool jok = !strncmp(java, "OK", 2), mok = !strncmp(mine, "OK", 2);
		verdicts++;
		if (jok != mok) {
			verdict_mismatch++;
			report(&qs[i], java, mine);
			continue;
		}
		if (!jok) {
			refused++;
			continue;
		}
		accepted++;
		for (const char *p = java; (p = strchr(p, ' ')); p++)
			times += p[1] != 'n';
		nevers += strstr(java, "never") != NULL;
		if (strcmp(java, mine) != 0)
			report(&qs[i], java, mine);
	}
	for (size_t z = 0; z < NZONES; z++)
		tz_free(tzs[z]);
	note("Quartz answered in %.1f s, ejob in %.1f s", t1 - t0, now_s() - t1);
	note("%zu questions past the tables: %zu accepted, %zu refused; %zu fire times, %zu "
	     "searches ending in never (%zu of them Quartz exceptions); Quartz gave up on %zu; "
	     "%zu not comparable", nq - first_other, accepted, refused, times, nevers, excs, timeouts,
	     uncompared);
	ok(verdict_mismatch == 0, "ejob accepts and refuses exactly what Quartz does (%zu questions)",
	   verdicts);
	ok(mismatches == verdict_mismatch, "ejob's next fire times equal Quartz's (%zu fire times)",
	   times);
	ok(accepted > nq / 3 && refused > nq / 10 && times > 15000 && uncompared < nq / 200,
	   "the generator covers both sides (%zu accepted, %zu refused, %zu times, %zu not "
	   "comparable)", accepted, refused, times, uncompared);
	oracle_free(ans, nq + 1);
	oracle_free(questions, nq + 1);
	free(qs);
	free(rexpr);
	return done_testing();
}
