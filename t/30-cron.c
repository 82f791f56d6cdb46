/* t/30-cron.c: cron expressions against expected fire times and error reports.
 *
 * The tables live in t/cron_cases.h (t/31 checks them against Quartz itself). This file also
 * covers the API's edges: the year limit, instants before 1970, loops Quartz never leaves,
 * and sharing one expression and zone between threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cron/cron.h"
#include "cron/tz.h"
#include "t/cron_cases.h"
#include "t/tap.h"

static void run_case(const struct cron_case *k)
{
	tz_err_t terr;
	cron_err_t err;
	tz_t *tz = tz_load(k->zone, &terr);
	int64_t t;
	if (!ok(tz != NULL, "load %s", k->zone) || !ok(tz_parse_iso(tz, k->from, &t) == 0, "parse %s",
	                                                k->from)) {
		tz_free(tz);
		return;
	}
	cron_t *c = cron_parse(k->expr, &err);
	if (!ok(c != NULL, "'%s' parses", k->expr)) {
		diag("column %d: %s", err.column, err.msg);
		tz_free(tz);
		return;
	}
	is_str(cron_expr(c), k->expr, "cron_expr gives the expression back");
	for (int i = 0; i < 6 && k->next[i]; i++) {
		int64_t n = cron_next(c, tz, t);
		if (!strcmp(k->next[i], "never")) {
			is_int(n, -1, "'%s' in %s: never after fire %d", k->expr, k->zone, i);
			break;
		}
		char got[64] = "never";
		if (n >= 0)
			tz_format_iso(tz, n, got, sizeof got);
		is_str(got, k->next[i], "'%s' in %s from %s: fire %d", k->expr, k->zone, k->from, i + 1);
		if (n <= t) {
			fail("fire time %" PRId64 " not after %" PRId64, n, t);
			break;
		}
		t = n;
	}
	cron_free(c);
	tz_free(tz);
}

static void run_bad(const struct cron_bad_case *k)
{
	cron_err_t err;
	errno = 0;
	cron_t *c = cron_parse(k->expr, &err);
	ok(c == NULL && errno == EINVAL, "'%s' is refused with EINVAL", k->expr);
	cron_free(c);
	is_int(err.column, k->column, "'%s': column", k->expr);
	is_str(err.msg, k->msg, "'%s': message", k->expr);
}

/* Epoch seconds of a UTC time. */
static int64_t utc(int y, int mo, int d, int h, int mi, int s)
{
	return tz_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

static void test_api_edges(void)
{
	cron_err_t err;
	tz_t *u = tz_load("UTC", NULL);

	errno = 0;
	ok(cron_parse(NULL, &err) == NULL && errno == EINVAL, "NULL is refused");
	ok(cron_parse("0 0 25 * * ?", NULL) == NULL, "err may be NULL");
	cron_free(NULL);
	pass("cron_free(NULL) is a no-op");

	/* The year limit: Quartz's MAX_YEAR bounds '*' and ends the search. */
	cron_t *c = cron_parse_max_year("0 0 0 1 1 ? *", 2030, &err);
	is_int(cron_next(c, u, utc(2029, 6, 1, 0, 0, 0)), utc(2030, 1, 1, 0, 0, 0), "year 2030 allowed");
	is_int(cron_next(c, u, utc(2030, 6, 1, 0, 0, 0)), -1, "nothing after the year limit");
	cron_free(c);
	c = cron_parse("0 0 0 1 1 ? *", &err);
	is_int(cron_next(c, u, utc(2030, 6, 1, 0, 0, 0)), utc(2031, 1, 1, 0, 0, 0),
	       "default limit %d", CRON_MAX_YEAR_DEFAULT);
	is_int(cron_next(c, u, utc(CRON_MAX_YEAR_DEFAULT, 6, 1, 0, 0, 0)), -1, "... and past it, never");
	cron_free(c);
	ok(cron_parse_max_year("0 0 0 * * ? 2200/5", 2126, NULL) == NULL,
	   "a year step starting after the limit is refused (Quartz in 2026)");
	c = cron_parse_max_year("0 0 0 * * ? 2200/5", 2300, NULL);
	ok(c != NULL, "... and accepted with a later limit");
	cron_free(c);

	/* Before 1970: cron_after() has no -1 ambiguity. */
	c = cron_parse("59 59 23 31 12 ? 1969", &err);
	int64_t t = 0;
	ok(cron_after(c, u, utc(1969, 1, 1, 0, 0, 0), &t) == 1 && t == -1,
	   "cron_after finds 1969-12-31T23:59:59Z, which is -1");
	ok(cron_after(c, u, -1, &t) == 0, "cron_after: then never");
	cron_free(c);

	/* Where Quartz spins for ever, ejob answers never. */
	c = cron_parse("0 0 0 0W * ?", &err);
	is_int(cron_next(c, u, 0), -1, "0W: Quartz loops between two days for ever; never");
	cron_free(c);
	c = cron_parse("0 0 0 L-30W * ?", &err);
	tz_t *sj = tz_load("America/St_Johns", NULL);
	is_int(cron_next(c, sj, 12600), -1, "L-30W from 1970-01-01 in St John's: never");
	tz_free(sj);
	cron_free(c);

	/* Accepted but not evaluable by Quartz (it throws): an empty field never fires. */
	c = cron_parse("L 0 0 * * ?", &err);
	ok(c != NULL, "seconds 'L' is accepted, as Quartz accepts it");
	is_int(cron_next(c, u, 0), -1, "... and never fires");
	cron_free(c);

	/* Out-of-range instants do not overflow. */
	c = cron_parse("* * * * * ?", &err);
	is_int(cron_next(c, u, INT64_MAX), -1, "after INT64_MAX: never");
	is_int(cron_next(c, u, INT64_MIN), -1, "after INT64_MIN: never (year 292 billion BC)");
	cron_free(c);
	c = cron_parse_max_year("* * * * * ?", 3000, &err);
	is_int(cron_next(c, u, utc(2999, 12, 31, 23, 59, 58)), utc(2999, 12, 31, 23, 59, 59),
	       "the last second of 2999");
	is_int(cron_next(c, u, utc(2999, 12, 31, 23, 59, 59)), -1, "then Quartz stops, whatever the limit");
	cron_free(c);
	tz_free(u);
}

/* cron_with_max_year(cron_parse(e), y) is cron_parse_max_year(e, y): the same verdict, error
 * and fire times, for every table expression and year-field forms under limits around each. */
static const char *const year_exprs[] = {
	"0 0 0 1 1 ? *", "0 0 0 1 1 ? 2030/5", "0 0 12 * * ? 2100/7", "0 0 0 1 1 ? 2150/5",
	"0 0 0 1 1 ? 2126", "0 0 0 1 1 ? 2127/1", "0 0 0 1 1 ? */10", "0 0 0 1 1 ? 2020-2025,2190/3",
	"0 0 0 1 1 ? 2024/1,2150/5,2199/2", "0 0 0 1 1 ? 2000/2147483000", "0 0 0 1 1 ? 1970/2147483647",
	"0 0 0 ? * MON 2030-2040/3", "0 0 0 ? * MON 2199", "0 0 12 * * ? 2200/5",
};

static int same_cron(const char *e, int y, const tz_t *u)
{
	cron_err_t ea, eb;
	cron_t *base = cron_parse(e, NULL);
	if (!base)
		return 1;                    /* nothing to derive from */
	errno = 0;
	cron_t *a = cron_parse_max_year(e, y, &ea);
	int errno_a = errno;
	errno = 0;
	cron_t *b = cron_with_max_year(base, y, &eb);
	int errno_b = errno;
	int same = !a == !b;
	if (same && !a)
		same = errno_a == errno_b && ea.column == eb.column && !strcmp(ea.msg, eb.msg);
	if (same && a) {
		same = !strcmp(cron_expr(a), cron_expr(b));
		static const int64_t from[] = { -2208988800, 0, 1735689600, 4102444799, 7258118400 };
		for (size_t i = 0; same && i < sizeof from / sizeof from[0]; i++) {
			int64_t ta = from[i], tb = from[i];
			for (int k = 0; same && k < 8 && ta >= 0; k++) {
				ta = cron_next(a, u, ta);
				tb = cron_next(b, u, tb);
				same = ta == tb;
			}
		}
		int64_t na, nb;                 /* the last fire before the limit, and what follows */
		int fa = cron_after(a, u, utc(y < 1971 ? 1970 : y - 1, 12, 31, 0, 0, 0), &na);
		int fb = cron_after(b, u, utc(y < 1971 ? 1970 : y - 1, 12, 31, 0, 0, 0), &nb);
		same = same && fa == fb && (!fa || na == nb);
	}
	if (!same)
		diag("'%s' with limit %d: cron_parse_max_year %s (%d: %s), cron_with_max_year %s (%d: %s)", e, y,
		     a ? "accepts" : "refuses", a ? 0 : ea.column, a ? "" : ea.msg, b ? "accepts" : "refuses",
		     b ? 0 : eb.column, b ? "" : eb.msg);
	cron_free(a);
	cron_free(b);
	cron_free(base);
	return same;
}

static void test_with_max_year(void)
{
	static const int limits[] = { 1969, 1970, 2030, 2125, 2126, 2127, 2150, 2199, 2200, 2300, 3000 };
	tz_t *u = tz_load("UTC", NULL);
	int all = 1;
	size_t n = 0;
	for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
		for (size_t i = 0; i < sizeof year_exprs / sizeof year_exprs[0]; i++, n++)
			all &= same_cron(year_exprs[i], limits[l], u);
		for (size_t i = 0; i < sizeof cron_cases / sizeof cron_cases[0]; i++, n++)
			all &= same_cron(cron_cases[i].expr, limits[l], u);
	}
	ok(all, "cron_with_max_year gives what cron_parse_max_year gives (%zu expressions and limits)", n);

	cron_err_t err;
	cron_t *c = cron_parse("0 0 0 1 1 ? 2024/1,2150/5", NULL);
	errno = 0;
	cron_t *d = cron_with_max_year(c, 2126, &err);
	ok(d == NULL && errno == EINVAL, "a year step starting after the new limit is refused");
	is_int(err.column, 20, "... at its column");
	is_str(err.msg, "year: 2150 is after the last year Quartz schedules (2126)", "... with the parser's message");
	d = cron_with_max_year(c, 2300, &err);
	is_int(cron_next(d, u, utc(2299, 6, 1, 0, 0, 0)), utc(2300, 1, 1, 0, 0, 0), "a later limit reaches further");
	cron_free(d);
	cron_free(c);
	tz_free(u);
}

/* One expression and one zone, many threads: the same answers as one thread. */
struct job {
	const cron_t *c;
	const tz_t *tz;
	int64_t sum;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	int64_t t = utc(2024, 1, 1, 0, 0, 0);
	for (int i = 0; i < 20000; i++) {
		t = cron_next(j->c, j->tz, t);
		j->sum += t;
	}
	return NULL;
}

static void test_threads(void)
{
	tz_t *tz = tz_load("America/New_York", NULL);
	cron_t *c = cron_parse("0 0/15 1-3 ? * MON-FRI", NULL);
	struct job one = { c, tz, 0 }, many[4];
	pthread_t th[4];
	worker(&one);
	for (int i = 0; i < 4; i++) {
		many[i] = one;
		many[i].sum = 0;
		pthread_create(&th[i], NULL, worker, &many[i]);
	}
	int same = 1;
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		same &= many[i].sum == one.sum;
	}
	ok(same, "4 threads sharing one cron_t and tz_t get one thread's answers");
	cron_free(c);
	tz_free(tz);
}

int main(void)
{
	for (size_t i = 0; i < sizeof cron_cases / sizeof cron_cases[0]; i++)
		run_case(&cron_cases[i]);
	for (size_t i = 0; i < sizeof cron_bad / sizeof cron_bad[0]; i++)
		run_bad(&cron_bad[i]);
	test_api_edges();
	test_with_max_year();
	test_threads();
	return done_testing();
}
