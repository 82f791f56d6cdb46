/* cron/cron.c: parse a Quartz 2.3 cron expression (see cron.h).
 *
 * Acceptance must be exactly Quartz's, so this parser walks the upper-cased UTF-16 text the
 * way org.quartz.CronExpression.buildExpression does and reaches the same verdict on every
 * input: what Quartz refuses (a ParseException, or any exception its parser trips on, which
 * it reports as "Illegal cron expression format") is refused here with a message of our own
 * and the column; what Quartz accepts, however odd, is accepted with the same meaning. The
 * comments name the Quartz behaviour each branch reproduces. t/31-cron-quartz.c checks the
 * verdicts against Quartz on thousands of generated expressions.
 */
#include "cron/cron_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cron/jstr.h"

static const char *const field_name[CRON_FIELDS] = {
	"seconds", "minutes", "hours", "day-of-month", "month", "day-of-week", "year",
};
static const int field_lo[CRON_FIELDS] = { 0, 0, 0, 1, 1, 1, 1970 };
static const int field_hi[CRON_FIELDS] = { 59, 59, 23, 31, 12, 7, 0 /* max_year */ };
static const int field_wrap[CRON_FIELDS] = { 60, 60, 24, 31, 12, 7, 0 };

static const char month_names[12][4] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
	                                   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
static const char day_names[7][4] = { "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT" };

struct parser {
	const uint16_t *u;   /* the upper-cased expression */
	const uint32_t *col; /* column of each unit */
	size_t n;
	cron_t *c;
	cron_err_t *err;
	int field;           /* the field being parsed */
	size_t cap_years, cap_open;
	bool nomem;
};

/* One list element: units u[b .. b+len). */
struct elem {
	const uint16_t *s;
	size_t b, len;
};

/* Messages that the year limit decides, shared by the parser and cron_with_max_year(). */
#define MSG_AFTER_MAX_YEAR "%lld is after the last year Quartz schedules (%lld)"
#define MSG_RANGE_END      "range end %lld too large"

/* The 1-based column of unit (just past the end for unit >= n). */
static int column_of(const struct parser *p, size_t unit)
{
	return (int)(unit < p->n ? p->col[unit] : (p->n ? p->col[p->n - 1] + 1 : 1));
}

static void err_vset(cron_err_t *err, int field, int column, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static void err_vset(cron_err_t *err, int field, int column, const char *fmt, va_list ap)
{
	err->column = column;
	int k = 0;
	if (field >= 0)
		k = snprintf(err->msg, sizeof err->msg, "%s: ", field_name[field]);
	int r = vsnprintf(err->msg + k, sizeof err->msg - (size_t)k, fmt, ap);
	if (k + r >= (int)sizeof err->msg)
		memcpy(err->msg + sizeof err->msg - 4, "...", 4);
}

static int fail(struct parser *p, size_t unit, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct parser *p, size_t unit, const char *fmt, ...)
{
	if (!p->err)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	err_vset(p->err, p->field, column_of(p, unit), fmt, ap);
	va_end(ap);
	return -1;
}

/* The element's text (from unit i on) for messages: ASCII as is, anything else as '?'. */
static const char *show(const struct elem *e, size_t i, char buf[24])
{
	size_t k = 0;
	for (; i < e->len && k < 20; i++)
		buf[k++] = e->s[i] >= 0x20 && e->s[i] < 0x7f ? (char)e->s[i] : '?';
	if (i < e->len)
		buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
	buf[k] = '\0';
	return buf;
}

static bool is_digit(uint16_t c)
{
	return c >= '0' && c <= '9';
}

static bool unit_eq(const struct elem *e, size_t i, const char *lit)
{
	size_t n = strlen(lit);
	if (i + n > e->len)
		return false;
	for (size_t k = 0; k < n; k++)
		if (e->s[i + k] != (uint16_t)lit[k])
			return false;
	return true;
}

static int name_index(const struct elem *e, size_t i, const char (*names)[4], int count)
{
	for (int k = 0; k < count; k++)
		if (unit_eq(e, i, names[k]))
			return k;
	return -1;
}

/* ---- the sets ---------------------------------------------------------------------------- */

static void set_add(struct cron_set *s, int64_t v)
{
	if (v >= 0 && v < 64)
		s->mask |= (uint64_t)1 << v;
	else if (v >= 64 && v < s->big)
		s->big = v;
	if (v > s->max)
		s->max = v;
	if (v == CRON_NOSPEC)
		s->nospec = true;
}

/* start, start+step, ... <= stop, as Quartz's loop adds them one by one. */
static void set_add_prog(struct cron_set *s, int64_t start, int64_t stop, int64_t step)
{
	if (start > stop)
		return;
	int64_t last = start + (stop - start) / step * step;
	for (int64_t i = start; i <= last && i < 64; i += step)
		set_add(s, i);
	int64_t b = start >= 64 ? start : start + (64 - start + step - 1) / step * step;
	if (b <= last)
		set_add(s, b);
	set_add(s, last);
	if (start <= CRON_NOSPEC && CRON_NOSPEC <= last && (CRON_NOSPEC - start) % step == 0)
		s->nospec = true;
}

static int years_add(struct parser *p, int64_t lo, int64_t hi, int64_t step)
{
	cron_t *c = p->c;
	if (lo > hi)
		return 0;
	if (c->nyears == p->cap_years) {
		size_t cap = p->cap_years ? 2 * p->cap_years : 4;
		struct cron_prog *y = realloc(c->years, cap * sizeof *y);
		if (!y) {
			p->nomem = true;
			return fail(p, 0, "out of memory");
		}
		c->years = y;
		p->cap_years = cap;
	}
	c->years[c->nyears++] = (struct cron_prog){ lo, lo + (hi - lo) / step * step, step };
	return 0;
}

/* The year element at unit `at` had no end: its progression (the last one added) ends at
 * max_year, which cron_with_max_year() may change. */
static int open_add(struct parser *p, size_t at, int64_t start, int64_t step)
{
	cron_t *c = p->c;
	if (c->nopen == p->cap_open) {
		size_t cap = p->cap_open ? 2 * p->cap_open : 2;
		struct cron_open *o = realloc(c->open, cap * sizeof *o);
		if (!o) {
			p->nomem = true;
			return fail(p, 0, "out of memory");
		}
		c->open = o;
		p->cap_open = cap;
	}
	c->open[c->nopen++] = (struct cron_open){ c->nyears - 1, start, step, column_of(p, at) };
	return 0;
}

static int add_one(struct parser *p, int64_t v)
{
	if (p->field == CRON_YEAR)
		return years_add(p, v, v, 1);
	set_add(&p->c->set[p->field], v);
	return 0;
}

/* Quartz's addToSet(val, end, incr): range checks, then one value (incr 0 or -1) or the
 * values val, val+incr, ... end, wrapping past the field's maximum when end < val. */
static int add_to_set(struct parser *p, size_t at, int64_t val, int64_t end, int64_t incr)
{
	int f = p->field;
	bool bad = false;
	switch (f) {
	case CRON_SEC:
	case CRON_MIN:
	case CRON_HOUR:
		bad = (val < 0 || val > field_hi[f] || end > field_hi[f]) && val != CRON_ALL;
		break;
	case CRON_DOM:
		bad = (val < 1 || val > 31 || end > 31) && val != CRON_ALL && val != CRON_NOSPEC;
		break;
	case CRON_MON:
		bad = (val < 1 || val > 12 || end > 12) && val != CRON_ALL;
		break;
	case CRON_DOW:
		bad = (val == 0 || val > 7 || end > 7) && val != CRON_ALL && val != CRON_NOSPEC;
		break;
	default:
		break;
	}
	if (bad) {
		int64_t v = val < field_lo[f] || val > field_hi[f] ? val : end;
		return fail(p, at, "value %lld out of range %d-%d", (long long)v, field_lo[f],
		            field_hi[f]);
	}
	if ((incr == 0 || incr == -1) && val != CRON_ALL)
		return add_one(p, val);
	int64_t start = val, stop = end;
	if (val == CRON_ALL && incr <= 0) {
		incr = 1;
		if (add_one(p, CRON_ALL) < 0) /* Quartz keeps the '*' marker next to the values */
			return -1;
	}
	int64_t hi = f == CRON_YEAR ? p->c->max_year : field_hi[f];
	if (stop == -1)
		stop = hi;
	if (start == -1 || start == CRON_ALL)
		start = field_lo[f];
	if (stop < start) {
		if (f == CRON_YEAR && end == -1)
			return fail(p, at, MSG_AFTER_MAX_YEAR, (long long)start, (long long)p->c->max_year);
		if (f == CRON_YEAR)
			return fail(p, at, "range %lld-%lld runs backwards", (long long)start,
			            (long long)stop);
		int max = field_wrap[f]; /* e.g. 22-2 in hours: 22, 23, 0, 1, 2 */
		for (int64_t i = start; i <= stop + max; i += incr) {
			int64_t v = i % max;
			if (v == 0 && (f == CRON_MON || f == CRON_DOW || f == CRON_DOM))
				v = max;
			set_add(&p->c->set[f], v);
		}
		return 0;
	}
	/* Quartz counts with a Java int: past INT32_MAX its loop never ends. */
	if (start + (stop - start) / incr * incr + incr > INT32_MAX)
		return fail(p, at, MSG_RANGE_END, (long long)stop);
	if (f == CRON_YEAR) {
		if (years_add(p, start, stop, incr) < 0)
			return -1;
		return end == -1 ? open_add(p, at, start, incr) : 0;
	}
	set_add_prog(&p->c->set[f], start, stop, incr);
	return 0;
}

/* Quartz's checkIncrementRange. */
static int check_step(struct parser *p, size_t at, int64_t incr)
{
	static const int max[CRON_FIELDS] = { 59, 59, 23, 31, 12, 7, INT32_MAX };
	if (incr > max[p->field])
		return fail(p, at, "step %lld too large (at most %d)", (long long)incr, max[p->field]);
	return 0;
}

/* Quartz's getValue(v, s, i): the number v followed by the ASCII digits from i; *pos is the
 * first unit after them, or len + 1 when they run to the end (Quartz's own convention). */
static int get_value(struct parser *p, const struct elem *e, int64_t v, size_t i, int64_t *val,
                     size_t *pos)
{
	if (i >= e->len)
		return fail(p, e->b + i, "number expected");
	size_t j = i;
	while (j < e->len && is_digit(e->s[j])) {
		v = v * 10 + (e->s[j] - '0');
		if (v > INT32_MAX)
			return fail(p, e->b + i, "number too large");
		j++;
	}
	*val = v;
	*pos = j < e->len ? j : e->len + 1;
	return 0;
}

/* Integer.parseInt of one unit: any decimal digit. */
static int one_digit(struct parser *p, const struct elem *e, size_t i, int64_t *out)
{
	char b[24];
	if (i >= e->len)
		return fail(p, e->b + e->len, "number expected after '%s'", show(e, 0, b));
	int d = jstr_digit(e->s[i]);
	if (d < 0)
		return fail(p, e->b + i, "number expected at '%s'", show(e, i, b));
	*out = d;
	return 0;
}

/* Integer.parseInt of the rest of the element from i. */
static int parse_rest(struct parser *p, const struct elem *e, size_t i, int32_t *out)
{
	char b[24];
	if (i > e->len || jstr_parse_int(e->s + i, e->len - i, out) < 0)
		return fail(p, e->b + (i < e->len ? i : e->len), "bad number '%s'", show(e, i, b));
	return 0;
}

static int nth_value(struct parser *p, const struct elem *e, size_t i)
{
	int32_t nth;
	char b[24];
	if (jstr_parse_int(e->s + i, i <= e->len ? e->len - i : 0, &nth) < 0 || nth < 1 || nth > 5)
		return fail(p, e->b + (i < e->len ? i : e->len),
		            "'#' must be followed by a number 1-5 (got '%s')", show(e, i, b));
	p->c->nth_dow = nth;
	return 0;
}

/* ---- one list element (Quartz's storeExpressionVals and checkNext) ------------------------ */

/* A name: JAN-DEC in month, SUN-SAT in day-of-week, with "-NAME", "#n" or "L" after it. */
static int elem_name(struct parser *p, const struct elem *e)
{
	int f = p->field;
	char b[24];
	if (f != CRON_MON && f != CRON_DOW)
		return fail(p, e->b, "names are not allowed here ('%s')", show(e, 0, b));
	const char (*names)[4] = f == CRON_MON ? month_names : day_names;
	int count = f == CRON_MON ? 12 : 7;
	const char *what = f == CRON_MON ? "month name (JAN-DEC)" : "day name (SUN-SAT)";
	int sv = name_index(e, 0, names, count), ev = -1;
	if (sv < 0)
		return fail(p, e->b, "'%s' is not a %s", show(e, 0, b), what);
	if (e->len > 3) {
		uint16_t c = e->s[3];
		if (c == '-') {
			if (e->len < 7)
				return fail(p, e->b + 3, "a %s must follow '-'", what);
			if ((ev = name_index(e, 4, names, count)) < 0)
				return fail(p, e->b + 4, "'%s' is not a %s", show(e, 4, b), what);
		} else if (c == '#' && f == CRON_DOW) {
			if (nth_value(p, e, 4) < 0)
				return -1;
		} else if (c == 'L' && f == CRON_DOW) {
			p->c->last_dow = true;
		} /* Quartz ignores anything else after the name */
	}
	return add_to_set(p, e->b, sv + 1, ev < 0 ? -1 : ev + 1, ev < 0 ? 0 : 1);
}

/* "L", "LW", "L-3", "L-3W" (day-of-month); "L" alone is 7 (Saturday) in day-of-week. */
static int elem_last(struct parser *p, const struct elem *e)
{
	cron_t *c = p->c;
	if (p->field == CRON_DOW)
		return add_to_set(p, e->b, 7, 7, 0);
	if (p->field != CRON_DOM)
		return 0; /* Quartz accepts it and stores nothing: the field stays empty */
	c->last_dom = true;
	size_t i = 1;
	if (e->len > 1 && e->s[1] == '-') {
		int64_t off;
		if (get_value(p, e, 0, 2, &off, &i) < 0)
			return -1;
		if (off > 30)
			return fail(p, e->b, "offset from the last day must be at most 30 (got %lld)",
			            (long long)off);
		c->last_off = off;
	}
	if (e->len > i && e->s[i] == 'W')
		c->nearest_wd = true;
	return 0;
}

/* '*' or '/': "*", "*\/5", "/5" (a step from the field's first value). */
static int elem_all(struct parser *p, const struct elem *e)
{
	if (e->s[0] == '*' && e->len == 1)
		return add_to_set(p, e->b, CRON_ALL, -1, 0);
	if (e->s[0] == '/' && e->len == 1)
		return fail(p, e->b, "'/' must be followed by a number");
	size_t i = e->s[0] == '*' ? 1 : 0;
	int64_t incr = 1;
	if (e->s[i] == '/') {
		int32_t v;
		if (i + 1 >= e->len)
			return fail(p, e->b + i, "'/' must be followed by a number");
		if (parse_rest(p, e, i + 1, &v) < 0 || check_step(p, e->b + i + 1, v) < 0)
			return -1;
		incr = v;
	} /* else: "*X" is '*' for Quartz */
	return add_to_set(p, e->b, CRON_ALL, -1, incr);
}

/* What follows a number: L, W, #n, -end[/step], /step, or anything (ignored). */
static int elem_after_number(struct parser *p, const struct elem *e, size_t i, int64_t val)
{
	int f = p->field;
	cron_t *c = p->c;
	if (i >= e->len)
		return add_to_set(p, e->b, val, -1, -1);
	int64_t end, step;
	switch (e->s[i]) {
	case 'L':
		if (f != CRON_DOW)
			return fail(p, e->b + i, "'L' after a number is only allowed in day-of-week");
		if (val < 1 || val > 7)
			return fail(p, e->b, "value %lld out of range 1-7", (long long)val);
		c->last_dow = true;
		set_add(&c->set[f], val);
		return 0;
	case 'W':
		if (f != CRON_DOM)
			return fail(p, e->b + i, "'W' is only allowed in day-of-month");
		if (val > 31)
			return fail(p, e->b, "value %lld out of range 1-31", (long long)val);
		c->nearest_wd = true;
		set_add(&c->set[f], val);
		return 0;
	case '#':
		if (f != CRON_DOW)
			return fail(p, e->b + i, "'#' is only allowed in day-of-week");
		if (nth_value(p, e, i + 1) < 0)
			return -1;
		set_add(&c->set[f], val);
		return 0;
	case '-':
		if (one_digit(p, e, ++i, &end) < 0)
			return -1;
		if (++i >= e->len)
			return add_to_set(p, e->b, val, end, 1);
		if (is_digit(e->s[i]) && get_value(p, e, end, i, &end, &i) < 0)
			return -1;
		if (i < e->len && e->s[i] == '/') {
			if (one_digit(p, e, ++i, &step) < 0)
				return -1;
			if (++i < e->len && is_digit(e->s[i]) && get_value(p, e, step, i, &step, &i) < 0)
				return -1;
			return add_to_set(p, e->b, val, end, step); /* no step check on this path */
		}
		return add_to_set(p, e->b, val, end, 1);
	case '/':
		if (i + 1 >= e->len)
			return fail(p, e->b + i, "'/' must be followed by a number");
		if (one_digit(p, e, ++i, &step) < 0)
			return -1;
		if (++i < e->len) {
			char b[24];
			if (!is_digit(e->s[i]))
				return fail(p, e->b + i, "unexpected '%s' after the step", show(e, i, b));
			if (get_value(p, e, step, i, &step, &i) < 0)
				return -1;
		}
		if (check_step(p, e->b, step) < 0)
			return -1;
		return add_to_set(p, e->b, val, -1, step);
	default: /* "5X": Quartz takes the 5 and ignores the rest */
		return add_to_set(p, e->b, val, -1, 0);
	}
}

static bool is_last_form(const struct elem *e) /* "L", "LW", or ^L-[0-9]*W?$ */
{
	if (e->s[0] != 'L')
		return false;
	if (e->len == 1 || (e->len == 2 && e->s[1] == 'W'))
		return true;
	if (e->len < 2 || e->s[1] != '-')
		return false;
	size_t i = 2;
	while (i < e->len && is_digit(e->s[i]))
		i++;
	if (i < e->len && e->s[i] == 'W')
		i++;
	return i == e->len;
}

static int elem(struct parser *p, const struct elem *e)
{
	uint16_t c = e->s[0];
	char b[24];
	if (c >= 'A' && c <= 'Z' && !is_last_form(e)) {
		if (e->len < 3)
			return fail(p, e->b, "'%s' is not a valid value", show(e, 0, b));
		return elem_name(p, e);
	}
	if (c == '?') {
		if (e->len > 2)
			return fail(p, e->b + 1, "'?' must stand alone");
		if (p->field != CRON_DOM && p->field != CRON_DOW)
			return fail(p, e->b, "'?' is only allowed in day-of-month or day-of-week");
		if (p->field == CRON_DOW && !p->c->last_dom) {
			const struct cron_set *dom = &p->c->set[CRON_DOM];
			if (dom->max < 0)
				return fail(p, e->b, "day-of-month has no value");
			if (dom->max == CRON_NOSPEC)
				return fail(p, e->b, "'?' cannot be in both day-of-month and day-of-week; "
				            "give one of them a value");
		}
		return add_to_set(p, e->b, CRON_NOSPEC, -1, 0);
	}
	if (c == '*' || c == '/')
		return elem_all(p, e);
	if (c == 'L')
		return elem_last(p, e);
	if (is_digit(c)) {
		int64_t val = c - '0';
		size_t i = 1;
		if (e->len == 1)
			return add_to_set(p, e->b, val, -1, -1);
		if (is_digit(e->s[1]) && get_value(p, e, val, 1, &val, &i) < 0)
			return -1;
		return elem_after_number(p, e, i, val);
	}
	return fail(p, e->b, "unexpected '%s'", show(e, 0, b));
}

/* ---- the expression ---------------------------------------------------------------------- */

static bool blank(uint16_t c)
{
	return c == ' ' || c == '\t';
}

/* One field: Quartz trims it (String.trim: every unit <= ' '), checks the list-wide rules,
 * and feeds each non-empty comma-separated element to the element parser. */
static int field(struct parser *p, size_t b, size_t e)
{
	while (b < e && p->u[b] <= ' ')
		b++;
	while (e > b && p->u[e - 1] <= ' ')
		e--;
	bool has_l = false, has_comma = false;
	int hashes = 0;
	for (size_t i = b; i < e; i++) {
		has_l |= p->u[i] == 'L';
		has_comma |= p->u[i] == ',';
		hashes += p->u[i] == '#';
	}
	if ((p->field == CRON_DOM || p->field == CRON_DOW) && has_l && has_comma && e - b > 1)
		return fail(p, b, "'L' cannot be combined with other values in a list");
	if (p->field == CRON_DOW && hashes > 1)
		return fail(p, b, "only one '#' value is allowed");
	for (size_t i = b; i < e;) {
		size_t j = i;
		while (j < e && p->u[j] != ',')
			j++;
		if (j > i) {
			struct elem el = { p->u + i, i, j - i };
			if (elem(p, &el) < 0)
				return -1;
		}
		i = j + 1;
	}
	return 0;
}

static cron_t *parse(const char *expr, int max_year, cron_err_t *err)
{
	struct parser p = { .err = err, .field = -1 };
	uint16_t *u = NULL;
	uint32_t *col = NULL;
	cron_t *c = NULL;
	size_t len = expr ? strlen(expr) : 0, bad;
	if (err)
		memset(err, 0, sizeof *err);
	if (!expr) {
		fail(&p, 0, "no expression");
		errno = EINVAL;
		return NULL;
	}
	u = malloc(JSTR_UNITS_MAX(len) * sizeof *u);
	col = malloc(JSTR_UNITS_MAX(len) * sizeof *col);
	c = calloc(1, sizeof *c);
	if (!u || !col || !c || !(c->expr = strdup(expr)))
		goto nomem;
	for (int f = 0; f <= CRON_DOW; f++)
		c->set[f] = (struct cron_set){ 0, CRON_NONE, -1, false };
	c->max_year = max_year;
	ssize_t n = jstr_upper(expr, len, u, col, &bad);
	if (n < 0) {
		if (err) {
			err->column = (int)bad;
			snprintf(err->msg, sizeof err->msg, "invalid UTF-8");
		}
		goto inval;
	}
	p.u = u, p.col = col, p.n = (size_t)n, p.c = c;
	size_t i = 0;
	int f = 0;
	for (; f < CRON_FIELDS; f++) { /* fields past the year are ignored, as Quartz does */
		while (i < p.n && blank(u[i]))
			i++;
		if (i == p.n)
			break;
		size_t b = i;
		while (i < p.n && !blank(u[i]))
			i++;
		p.field = f;
		if (field(&p, b, i) < 0)
			goto inval;
	}
	p.field = -1;
	if (f <= CRON_DOW) {
		fail(&p, p.n, "%d field%s, need at least 6: seconds minutes hours day-of-month month "
		     "day-of-week [year]", f, f == 1 ? "" : "s");
		goto inval;
	}
	if (f == CRON_YEAR) {
		p.field = CRON_YEAR;
		if (add_to_set(&p, p.n, CRON_ALL, -1, 0) < 0)
			goto inval;
	}
	if (c->set[CRON_DOM].nospec == c->set[CRON_DOW].nospec) {
		size_t at = 0; /* point at the day-of-week field */
		for (int k = 0; k < CRON_DOW; k++) {
			while (at < p.n && blank(u[at]))
				at++;
			while (at < p.n && !blank(u[at]))
				at++;
		}
		while (at < p.n && blank(u[at]))
			at++;
		p.field = -1;
		fail(&p, at, c->set[CRON_DOM].nospec
		     ? "day-of-month and day-of-week are both '?': give one of them a value"
		     : "day-of-month and day-of-week both have values: make one of them '?' "
		       "(e.g. '0 0 12 ? * MON' or '0 0 12 1 * ?')");
		goto inval;
	}
	free(u);
	free(col);
	return c;
nomem:
	if (err) {
		err->column = 1;
		snprintf(err->msg, sizeof err->msg, "out of memory");
	}
	free(u);
	free(col);
	cron_free(c);
	errno = ENOMEM;
	return NULL;
inval:
	free(u);
	free(col);
	cron_free(c);
	errno = p.nomem ? ENOMEM : EINVAL;
	return NULL;
}

cron_t *cron_parse_max_year(const char *expr, int max_year, cron_err_t *err)
{
	return parse(expr, max_year, err);
}

cron_t *cron_parse(const char *expr, cron_err_t *err)
{
	return parse(expr, CRON_MAX_YEAR_DEFAULT, err);
}

/* A year element refused under another limit: as fail() in the year field. */
static cron_t *refuse_year(cron_err_t *err, int column, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static cron_t *refuse_year(cron_err_t *err, int column, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err_vset(err, CRON_YEAR, column, fmt, ap);
		va_end(ap);
	}
	errno = EINVAL;
	return NULL;
}

/* Parsing with another limit changes only what depends on it (the "stop = hi" of an element
 * without an end, in add_to_set): the years those elements reach, and whether such an element
 * starts after the limit or runs past INT32_MAX (the parser's checks, in the order written).
 * Everything else is the same, so this copy is what cron_parse_max_year() would make. */
cron_t *cron_with_max_year(const cron_t *c, int max_year, cron_err_t *err)
{
	if (err)
		memset(err, 0, sizeof *err);
	for (size_t i = 0; i < c->nopen; i++) {
		const struct cron_open *o = &c->open[i];
		if (o->start > max_year)
			return refuse_year(err, o->column, MSG_AFTER_MAX_YEAR, (long long)o->start,
			                   (long long)max_year);
		if (o->start + (max_year - o->start) / o->step * o->step + o->step > INT32_MAX)
			return refuse_year(err, o->column, MSG_RANGE_END, (long long)max_year);
	}
	cron_t *d = malloc(sizeof *d);
	if (!d)
		goto nomem;
	*d = *c;
	d->years = NULL;
	d->open = NULL;
	d->expr = strdup(c->expr);
	if (c->nyears)
		d->years = malloc(c->nyears * sizeof *d->years);
	if (c->nopen)
		d->open = malloc(c->nopen * sizeof *d->open);
	if (!d->expr || (c->nyears && !d->years) || (c->nopen && !d->open)) {
		cron_free(d);
		goto nomem;
	}
	if (c->nyears)
		memcpy(d->years, c->years, c->nyears * sizeof *d->years);
	if (c->nopen)
		memcpy(d->open, c->open, c->nopen * sizeof *d->open);
	d->max_year = max_year;
	for (size_t i = 0; i < d->nopen; i++) {
		const struct cron_open *o = &d->open[i];
		d->years[o->prog].hi = o->start + (max_year - o->start) / o->step * o->step;
	}
	return d;
nomem:
	if (err) {
		err->column = 1;
		snprintf(err->msg, sizeof err->msg, "out of memory");
	}
	errno = ENOMEM;
	return NULL;
}

const char *cron_expr(const cron_t *c)
{
	return c->expr;
}

void cron_free(cron_t *c)
{
	if (!c)
		return;
	int saved = errno;
	free(c->years);
	free(c->open);
	free(c->expr);
	free(c);
	errno = saved;
}
