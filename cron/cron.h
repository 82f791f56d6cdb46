/* cron/cron.h: Quartz 2.3 CronExpression, in C.
 *
 * "SEC MIN HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK [YEAR]", e.g. "0 0/5 8-18 ? * MON-FRI".
 * ejob accepts exactly the expressions org.quartz.CronExpression 2.3.2 accepts (its quirks
 * included: extra fields after the year are ignored, "1-5L" in day-of-week is "1-5", ...)
 * and gives the same fire times as its getTimeAfter(), which the tests check against Quartz
 * itself. docs/cron.md has the syntax, the semantics and the known edges.
 *
 * Pure logic: no I/O, no clock, no global state. A cron_t is immutable after parsing and may
 * be shared by threads.
 */
#ifndef EJOB_CRON_H
#define EJOB_CRON_H

#include <stdint.h>

#include "cron/tz.h"

typedef struct cron cron_t;

/* Why an expression was refused: column is the 1-based column (in characters) of the
 * offending part; msg names the field and the problem, e.g. column 7 and
 * "hours: value 24 out of range 0-23". Shown as "column 7: hours: ...". */
typedef struct cron_err {
	int column;
	char msg[256];
} cron_err_t;

/* Quartz's CronExpression.MAX_YEAR is the JVM's current year + 100, taken when the class
 * loads; it bounds '*' and open-ended steps in the year field, refuses year steps that start
 * after it, and ends the search for a fire time. cron_parse() uses this fixed value so that
 * results do not depend on the clock; callers that want Quartz's exact behaviour on a given
 * day pass (current year + 100) to cron_parse_max_year(). */
#define CRON_MAX_YEAR_DEFAULT 2199

/* Parse a Quartz cron expression (UTF-8). Returns NULL with *err filled in (err may be NULL)
 * and errno = EINVAL on a bad expression, ENOMEM when out of memory. */
cron_t *cron_parse(const char *expr, cron_err_t *err);
cron_t *cron_parse_max_year(const char *expr, int max_year, cron_err_t *err);

/* A parsed expression under another year limit, without reading its text again: the same
 * result (the cron, or NULL with the same *err and errno) as
 * cron_parse_max_year(cron_expr(c), max_year, err). For a configuration checked once with
 * the fixed limit and run with Quartz's limit of the day. Free it with cron_free(). */
cron_t *cron_with_max_year(const cron_t *c, int max_year, cron_err_t *err);

/* The first fire time strictly after `after` (epoch seconds), in zone tz, as Quartz's
 * getTimeAfter() gives it; -1 when there is none: never again ("0 0 0 30 2 ?"), nothing
 * before the year limit, or an expression Quartz accepts but cannot evaluate (an empty field,
 * such as seconds "L"; a search Quartz would never finish, such as "0 0 0 0W * ?").
 * For after >= -1 every fire time is >= 0, so -1 is unambiguous; before 1970 use cron_after().
 * Parity with Quartz holds for instants from 1900 to 2999; see docs/cron.md. */
int64_t cron_next(const cron_t *c, const tz_t *tz, int64_t after);

/* As cron_next(), for any instant: returns 1 and the fire time in *next, or 0 for never. */
int cron_after(const cron_t *c, const tz_t *tz, int64_t after, int64_t *next);

/* The expression as given. */
const char *cron_expr(const cron_t *c);

void cron_free(cron_t *c);

#endif
