/* cron/cron_impl.h: what a parsed expression holds; shared by cron.c (parser) and
 * cron_next.c (evaluator) only. Not part of the API.
 *
 * Each field is the set of integers Quartz's parser would put in that field's TreeSet,
 * markers included: Quartz stores '*' as 99 (next to the values it stands for) and '?' as 98,
 * and a few of its paths store values outside the field's range (a literal 99 reads as '*',
 * "0W" stores 0, "9#2" stores 9). The evaluator only ever asks for the least member >= x
 * with x below 64 (a calendar field) and for the least member, so a set is a 64-bit mask of
 * its members below 64 plus its least member from 64 up.
 */
#ifndef EJOB_CRON_IMPL_H
#define EJOB_CRON_IMPL_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "cron/cron.h"

#define CRON_ALL    99         /* Quartz's ALL_SPEC_INT, '*' */
#define CRON_NOSPEC 98         /* Quartz's NO_SPEC_INT, '?' */
#define CRON_NONE   INT64_MAX  /* no such member */

enum { CRON_SEC, CRON_MIN, CRON_HOUR, CRON_DOM, CRON_MON, CRON_DOW, CRON_YEAR, CRON_FIELDS };

struct cron_set {
	uint64_t mask;  /* members 0..63 */
	int64_t big;    /* least member >= 64, CRON_NONE if none */
	int64_t max;    /* greatest member, -1 if empty */
	bool nospec;    /* contains CRON_NOSPEC */
};

/* Years are arithmetic progressions lo, lo+step, ... <= hi (a value is lo = hi, step 1):
 * they can be large numbers and Quartz stores them one by one. */
struct cron_prog {
	int64_t lo, hi, step;
};

/* A year element written without an end ('*', "2030/5", a missing year field): its
 * progression runs to max_year, so cron_with_max_year() recomputes it. */
struct cron_open {
	size_t prog;       /* its entry in years */
	int64_t start, step;
	int column;        /* where the parser points an error about it */
};

struct cron {
	struct cron_set set[CRON_DOW + 1]; /* seconds .. day-of-week */
	struct cron_prog *years;
	size_t nyears;
	struct cron_open *open;            /* in the order written */
	size_t nopen;
	bool last_dom;     /* 'L' in day-of-month (Quartz lastdayOfMonth) */
	bool nearest_wd;   /* 'W' (nearestWeekday) */
	int64_t last_off;  /* "L-3": 3 (lastdayOffset) */
	bool last_dow;     /* "5L" (lastdayOfWeek) */
	int64_t nth_dow;   /* "6#3": 3 (nthdayOfWeek), 0 if none */
	int64_t max_year;  /* Quartz's MAX_YEAR */
	char *expr;
};

/* Least member >= x (0 <= x < 64), or CRON_NONE. */
static inline int64_t cron_set_ceil(const struct cron_set *s, int64_t x)
{
	assert(x >= 0 && x < 64);
	uint64_t m = s->mask >> x;
	return m ? x + __builtin_ctzll(m) : s->big;
}

/* Least member (TreeSet.first()), or CRON_NONE when empty. */
static inline int64_t cron_set_first(const struct cron_set *s)
{
	return s->mask ? __builtin_ctzll(s->mask) : s->big;
}

#endif
