/* cron/cron_next.c: the next fire time of a parsed expression (see cron.h).
 *
 * Quartz finds it with CronExpression.getTimeAfter, a field-by-field walk over a lenient
 * java.util.GregorianCalendar: it sets fields to the next allowed value (a minute of 60 or a
 * day of 32 rolls over into the next hour or month) and reads them back, and each read turns
 * the wall-clock fields into an instant and back again. The daylight-saving behaviour users
 * see from Quartz (a fire time inside a spring-forward gap is skipped; a repeated hour fires
 * once, in its second occurrence) is a consequence of exactly when those reads happen. So this
 * file keeps the same walk, over a small lenient calendar of its own (struct cal) whose reads
 * and writes behave as GregorianCalendar's, with the field sets as bitmasks: the next allowed
 * value is a count-trailing-zeros, and a typical next-fire time takes a few loop turns.
 */
#include "cron/cron_impl.h"

#include <stdbool.h>

/* Calendar fields, as Java numbers them where it matters: MONTH is 0-11, DAY_OF_WEEK 1-7. */
enum { F_YEAR, F_MONTH, F_DAY, F_HOUR, F_MIN, F_SEC, F_COUNT };
enum { SUNDAY = 1, SATURDAY = 7 };

/* Quartz's loop can run forever: "0 0 0 0W * ?" sends it back and forth between two days.
 * Its whole state at the top of a turn is the calendar's instant, so an instant seen again
 * means it never ends; Brent's method spots that within a few cycle lengths, and the answer
 * is "never". Without a cycle the search ends by year 2999 (the slowest real case found moves
 * an hour per turn: some 9 million turns); MAX_TURNS is only a guard behind that. */
#define MAX_TURNS 30000000

/* A lenient Gregorian calendar in one zone. Like GregorianCalendar it is either "clean" (the
 * fields describe the instant t) or "dirty" (fields were set, possibly out of range; the next
 * read recomputes t from them, reading the wall time with tz_local_to_utc's rules, and then
 * the fields from t).
 *
 * Speed, without changing a result: the last offset spans are kept, so most conversions skip
 * the zone lookup; the last day and month converted are kept, so most skip the calendar
 * arithmetic; and setting a field to the value it has is a no-op when the instant is
 * "canonical" (reading its own fields back gives it again), which is when Java's recompute
 * would change nothing. Every instant a recompute produces is canonical except, possibly, in
 * a zone whose transitions overlap each other; that is checked, not assumed. */
struct cal {
	const tz_t *tz;
	tz_span_t at, loc;
	int64_t f[F_COUNT];
	int64_t t;
	int dow;
	bool dirty;
	bool canonical;
	int64_t day_n, day_y; /* cache: local day number day_n is day_y-day_m-day_d */
	int day_m, day_d;
	int64_t mon_y, mon_days; /* cache: the first day of month mon_m of year mon_y */
	int mon_m;
};

static int64_t fdiv(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Java int arithmetic, which wraps. */
static int64_t jint(int64_t v)
{
	return (int32_t)(uint32_t)(uint64_t)v;
}

static int32_t offset_at(struct cal *c, int64_t t)
{
	if (t < c->at.utc_lo || t >= c->at.utc_hi)
		tz_span_at(c->tz, t, &c->at);
	return c->at.offset;
}

static int64_t local_to_utc(struct cal *c, int64_t l)
{
	if (l < c->loc.local_lo || l >= c->loc.local_hi)
		tz_span_local(c->tz, l, &c->loc);
	return l - c->loc.offset;
}

static void fields_from_time(struct cal *c)
{
	int64_t l = c->t + offset_at(c, c->t);
	int64_t days = fdiv(l, 86400), secs = l - days * 86400;
	if (days != c->day_n) {
		tz_civil_from_days(days, &c->day_y, &c->day_m, &c->day_d);
		c->day_n = days;
	}
	c->f[F_YEAR] = c->day_y;
	c->f[F_MONTH] = c->day_m - 1;
	c->f[F_DAY] = c->day_d;
	c->f[F_HOUR] = secs / 3600;
	c->f[F_MIN] = secs / 60 % 60;
	c->f[F_SEC] = secs % 60;
	int64_t w = (days + 4) % 7; /* 1970-01-01 was a Thursday */
	c->dow = (int)(w < 0 ? w + 7 : w) + 1;
}

static void cal_init(struct cal *c, const tz_t *tz, int64_t t)
{
	*c = (struct cal){ .tz = tz, .t = t, .day_n = INT64_MIN, .mon_m = 0 };
	fields_from_time(c);
}

static void complete(struct cal *c)
{
	if (!c->dirty)
		return;
	int64_t y = c->f[F_YEAR] + fdiv(c->f[F_MONTH], 12);
	int m = (int)(c->f[F_MONTH] - fdiv(c->f[F_MONTH], 12) * 12) + 1;
	if (m != c->mon_m || y != c->mon_y) {
		c->mon_days = tz_days_from_civil(y, m, 1);
		c->mon_y = y;
		c->mon_m = m;
	}
	int64_t days = c->mon_days + c->f[F_DAY] - 1;
	int64_t l = days * 86400 + c->f[F_HOUR] * 3600 + c->f[F_MIN] * 60 + c->f[F_SEC];
	c->t = local_to_utc(c, l);
	int32_t read_with = c->loc.offset;
	c->dirty = false;
	fields_from_time(c);
	/* canonical: the local time read back maps to t again (a gap moves it; check then) */
	c->canonical = c->at.offset == read_with ||
	               local_to_utc(c, c->t + c->at.offset) == c->t;
}

static int64_t get(struct cal *c, int field)
{
	complete(c);
	return c->f[field];
}

/* Calendar.get(YEAR) counts years of the era: 1 BC is 1, 2 BC is 2. */
static int64_t get_year(struct cal *c)
{
	int64_t y = get(c, F_YEAR);
	return y > 0 ? y : 1 - y;
}

static int get_dow(struct cal *c)
{
	complete(c);
	return c->dow;
}

static void set(struct cal *c, int field, int64_t v)
{
	if (!c->dirty && c->canonical && c->f[field] == v)
		return; /* Java would recompute the same instant */
	c->f[field] = v;
	c->dirty = true;
}

/* Calendar.add(YEAR, n): from the current instant, keeping the day unless the month is
 * shorter in the new year. */
static void add_year(struct cal *c, int64_t n)
{
	complete(c);
	c->f[F_YEAR] += n;
	int md = tz_month_days(c->f[F_YEAR], (int)c->f[F_MONTH] + 1);
	if (c->f[F_DAY] > md)
		c->f[F_DAY] = md;
	c->dirty = true;
}

static int64_t get_time(struct cal *c)
{
	complete(c);
	return c->t;
}

/* Quartz's setCalendarHour: set the hour; if the hour read back differs (the wall time did
 * not exist), take the next hour. */
static void set_hour(struct cal *c, int64_t hour)
{
	set(c, F_HOUR, hour);
	if (get(c, F_HOUR) != hour && hour != 24)
		set(c, F_HOUR, jint(hour + 1));
}

static void set_hms0(struct cal *c)
{
	set(c, F_SEC, 0);
	set(c, F_MIN, 0);
	set(c, F_HOUR, 0);
}

static int64_t last_day(int64_t mon, int64_t year)
{
	return tz_month_days(year, (int)mon);
}

static int64_t years_ceil(const cron_t *cr, int64_t y)
{
	int64_t best = CRON_NONE;
	for (size_t i = 0; i < cr->nyears; i++) {
		const struct cron_prog *p = &cr->years[i];
		int64_t v = y <= p->lo ? p->lo : p->lo + (y - p->lo + p->step - 1) / p->step * p->step;
		if (v <= p->hi && v < best)
			best = v;
	}
	return best;
}

/* The 'W' rule for day `day` of month `mon` (1-12) in `year`: the weekday nearest to it,
 * never leaving the month; as Quartz, the weekday is read from a fresh calendar (lenient, so
 * day 0 or 32 mean a neighbouring month). *before tells whether that day at hr:min:sec is
 * before after1 (Quartz's afterTime). */
static int64_t nearest_weekday(const struct cal *cl, int64_t year, int64_t mon, int64_t day,
                               int64_t hr, int64_t min, int64_t sec, int64_t after1, bool *before)
{
	struct cal tc = *cl; /* its zone and caches; every field is set before a read */
	tc.dirty = true;
	set_hms0(&tc);
	set(&tc, F_DAY, day);
	set(&tc, F_MONTH, mon - 1);
	set(&tc, F_YEAR, year);
	int64_t ldom = last_day(mon, year);
	int dow = get_dow(&tc);
	if (dow == SATURDAY && day == 1)
		day += 2;
	else if (dow == SATURDAY)
		day -= 1;
	else if (dow == SUNDAY && day == ldom)
		day -= 2;
	else if (dow == SUNDAY)
		day += 1;
	set(&tc, F_SEC, sec);
	set(&tc, F_MIN, min);
	set(&tc, F_HOUR, hr);
	set(&tc, F_DAY, day);
	set(&tc, F_MONTH, mon - 1);
	*before = get_time(&tc) < after1;
	return day;
}

/* Days from weekday cur to the next weekday want (0 if equal), Quartz's way. */
static int64_t days_to(int64_t cur, int64_t want)
{
	if (cur < want)
		return want - cur;
	if (cur > want)
		return want + (7 - cur);
	return 0;
}

enum step { GO_ON, AGAIN, NEVER };

/* The day-of-month rule. *day and *mon are the current day and month (1-12). */
static enum step by_day_of_month(const cron_t *cr, struct cal *cl, int64_t *dayp, int64_t *monp,
                                 int64_t hr, int64_t min, int64_t sec, int64_t after1)
{
	const struct cron_set *dom = &cr->set[CRON_DOM];
	int64_t day = *dayp, mon = *monp, tmon = mon, t = -1;
	bool before;
	if (cr->last_dom) {
		t = day;
		day = last_day(mon, get_year(cl)) - cr->last_off;
		if (!cr->nearest_wd) {
			if (t > day) { /* past this month's day: the 1st of next month */
				if (++mon > 12) {
					mon = 1;
					tmon = 3333; /* Quartz's marker: the month has changed */
					add_year(cl, 1);
				}
				day = 1;
			}
		} else {
			day = nearest_weekday(cl, get_year(cl), mon, day, hr, min, sec, after1, &before);
			if (before) {
				day = 1;
				mon++;
			}
		}
	} else if (cr->nearest_wd) {
		int64_t first = cron_set_first(dom);
		t = day;
		day = nearest_weekday(cl, get_year(cl), mon, first, hr, min, sec, after1, &before);
		if (before) {
			day = first;
			mon++;
		}
	} else {
		int64_t next = day < 64 ? cron_set_ceil(dom, day) : CRON_NONE;
		int64_t first = cron_set_first(dom);
		if (first == CRON_NONE)
			return NEVER; /* Quartz throws: an empty day-of-month */
		if (next != CRON_NONE) {
			t = day;
			day = next;
			if (day > last_day(mon, get_year(cl))) {
				day = first;
				mon++;
			}
		} else {
			day = first;
			mon++;
		}
	}
	*dayp = day;
	*monp = mon;
	if (day != t || mon != tmon) {
		set_hms0(cl);
		set(cl, F_DAY, day);
		set(cl, F_MONTH, mon - 1);
		return AGAIN;
	}
	return GO_ON;
}

/* Restart from the first day of month mon (0-based, may be 12) or of a given day. */
static enum step restart_at(struct cal *cl, int64_t day, int64_t mon0)
{
	set_hms0(cl);
	set(cl, F_DAY, day);
	set(cl, F_MONTH, mon0);
	return AGAIN;
}

/* The day-of-week rules: "5L" (last Thursday), "6#3" (third Friday), or a set of weekdays. */
static enum step by_day_of_week(const cron_t *cr, struct cal *cl, int64_t day, int64_t mon)
{
	const struct cron_set *dw = &cr->set[CRON_DOW];
	if ((cr->last_dow || cr->nth_dow != 0) && cron_set_first(dw) == CRON_NONE)
		return NEVER;
	if (cr->last_dow) {
		int64_t want = cron_set_first(dw);
		int64_t add = days_to(get_dow(cl), want);
		int64_t ldom = last_day(mon, get_year(cl));
		if (day + add > ldom)
			return restart_at(cl, 1, mon);
		while (day + add + 7 <= ldom)
			add += 7;
		day += add;
		if (add > 0)
			return restart_at(cl, day, mon - 1);
	} else if (cr->nth_dow != 0) {
		int64_t want = cron_set_first(dw);
		int64_t add = days_to(get_dow(cl), want);
		bool shifted = add > 0;
		day = jint(day + add);
		int64_t week = day / 7 + (day % 7 > 0);
		add = jint(jint(cr->nth_dow - week) * 7);
		day = jint(day + add);
		if (add < 0 || day > last_day(mon, get_year(cl)))
			return restart_at(cl, 1, mon);
		if (add > 0 || shifted)
			return restart_at(cl, day, mon - 1);
	} else {
		int64_t cur = get_dow(cl);
		int64_t want = cron_set_first(dw);
		if (want == CRON_NONE)
			return NEVER; /* Quartz throws: an empty day-of-week */
		int64_t next = cron_set_ceil(dw, cur);
		if (next != CRON_NONE)
			want = next;
		int64_t add = jint(days_to(cur, want));
		int64_t ldom = last_day(mon, get_year(cl));
		if (jint(day + add) > ldom)
			return restart_at(cl, 1, mon);
		if (add > 0)
			return restart_at(cl, jint(day + add), mon - 1);
	}
	return GO_ON;
}

/* The search; CRON_NONE for never. */
static int64_t search(const cron_t *cr, const tz_t *tz, int64_t after)
{
	const struct cron_set *secs = &cr->set[CRON_SEC], *mins = &cr->set[CRON_MIN];
	const struct cron_set *hours = &cr->set[CRON_HOUR], *months = &cr->set[CRON_MON];
	if (after >= INT64_MAX / 2 || after <= INT64_MIN / 2)
		return CRON_NONE;
	int64_t after1 = after + 1; /* "move ahead one second" */
	struct cal c;
	cal_init(&c, tz, after1);
	c.dirty = true; /* Calendar.set(MILLISECOND, 0): the next read recomputes from the fields */
	bool dom_rule = !cr->set[CRON_DOM].nospec;
	int64_t seen = INT64_MIN; /* Brent: the instant at the last power-of-two turn */
	long power = 1, lap = 0;
	for (long turn = 0; turn < MAX_TURNS; turn++) {
		if (get_year(&c) > 2999)
			return CRON_NONE;
		if (c.t == seen)
			return CRON_NONE; /* a cycle: Quartz would spin forever */
		if (++lap == power) {
			seen = c.t;
			power *= 2;
			lap = 0;
		}
		/* seconds */
		int64_t sec = get(&c, F_SEC), min = get(&c, F_MIN), v, t;
		if ((v = cron_set_ceil(secs, sec)) != CRON_NONE) {
			sec = v;
		} else {
			if ((sec = cron_set_first(secs)) == CRON_NONE)
				return CRON_NONE; /* Quartz throws: no seconds */
			set(&c, F_MIN, ++min);
		}
		set(&c, F_SEC, sec);
		/* minutes */
		min = get(&c, F_MIN);
		int64_t hr = get(&c, F_HOUR);
		t = -1;
		if ((v = cron_set_ceil(mins, min)) != CRON_NONE) {
			t = min;
			min = v;
		} else {
			if ((min = cron_set_first(mins)) == CRON_NONE)
				return CRON_NONE;
			hr++;
		}
		if (min != t) {
			set(&c, F_SEC, 0);
			set(&c, F_MIN, min);
			set_hour(&c, hr);
			continue;
		}
		set(&c, F_MIN, min);
		/* hours */
		hr = get(&c, F_HOUR);
		int64_t day = get(&c, F_DAY);
		t = -1;
		if ((v = cron_set_ceil(hours, hr)) != CRON_NONE) {
			t = hr;
			hr = v;
		} else {
			if ((hr = cron_set_first(hours)) == CRON_NONE)
				return CRON_NONE;
			day++;
		}
		if (hr != t) {
			set(&c, F_SEC, 0);
			set(&c, F_MIN, 0);
			set(&c, F_DAY, day);
			set_hour(&c, hr);
			continue;
		}
		set(&c, F_HOUR, hr);
		/* day of month or day of week */
		day = get(&c, F_DAY);
		int64_t mon = get(&c, F_MONTH) + 1;
		enum step s = dom_rule ? by_day_of_month(cr, &c, &day, &mon, hr, min, sec, after1)
		                       : by_day_of_week(cr, &c, day, mon);
		if (s == NEVER)
			return CRON_NONE;
		if (s == AGAIN)
			continue;
		set(&c, F_DAY, day);
		/* month */
		mon = get(&c, F_MONTH) + 1;
		int64_t year = get_year(&c);
		if (year > cr->max_year)
			return CRON_NONE;
		t = -1;
		if ((v = cron_set_ceil(months, mon)) != CRON_NONE) {
			t = mon;
			mon = v;
		} else {
			if ((mon = cron_set_first(months)) == CRON_NONE)
				return CRON_NONE;
			year++;
		}
		if (mon != t) {
			set_hms0(&c);
			set(&c, F_DAY, 1);
			set(&c, F_MONTH, mon - 1);
			set(&c, F_YEAR, year);
			continue;
		}
		set(&c, F_MONTH, mon - 1);
		/* year */
		year = get_year(&c);
		if ((v = years_ceil(cr, year)) == CRON_NONE)
			return CRON_NONE;
		if (v != year) {
			set_hms0(&c);
			set(&c, F_DAY, 1);
			set(&c, F_MONTH, 0);
			set(&c, F_YEAR, v);
			continue;
		}
		set(&c, F_YEAR, year);
		return get_time(&c);
	}
	return CRON_NONE;
}

int cron_after(const cron_t *cr, const tz_t *tz, int64_t after, int64_t *next)
{
	int64_t t = search(cr, tz, after);
	if (t == CRON_NONE)
		return 0;
	*next = t;
	return 1;
}

int64_t cron_next(const cron_t *cr, const tz_t *tz, int64_t after)
{
	int64_t t = search(cr, tz, after);
	return t == CRON_NONE ? -1 : t;
}
