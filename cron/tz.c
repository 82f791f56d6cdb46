/* cron/tz.c: IANA time zones from TZif files and POSIX TZ rules (see tz.h).
 *
 * A zone is a table of transitions (instant, offset from then on), built at load time from
 * the file's transitions followed by the footer rule's transitions through TABLE_LAST_YEAR.
 * Lookups before table_end are binary searches in that table; later ones (only far-future
 * dates reach them) evaluate the rule for the few years around the date. Nothing is cached or
 * mutated after load, so queries are thread-safe.
 */
#include "cron/tz.h"
#include "cron/tz_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Rule transitions are tabulated through this year; the table answers for instants and local
 * times before 1 January of TABLE_END_YEAR (UTC) and the rule is evaluated directly after. */
#define TABLE_LAST_YEAR 2201
#define TABLE_END_YEAR  2200
#define MAX_TZIF_TIMES  100000
#define WINDOW_LIMIT    ((int64_t)1 << 55) /* about a billion years */

/* One DST rule date: Jn (1-365, no leap day), n (0-365), or Mm.w.d; time in seconds. */
struct rdate {
	char kind; /* 'J', 'D', 'M' */
	int n, m, w, d;
	int32_t time;
};

struct rule {
	int32_t std_off, dst_off; /* seconds east of UTC */
	bool has_dst;
	struct rdate start, end;
};

struct tz {
	char *name;
	int32_t initial;   /* offset before the first transition */
	size_t n;          /* transitions */
	int64_t *utc;      /* transition instants, strictly ascending */
	int64_t *key;      /* utc[i] + off[i]: the local time at which transition i takes effect */
	int64_t *sufmin;   /* min(key[i..n-1]), for "latest transition with key <= local" */
	int32_t *off;      /* offset from utc[i] on */
	bool has_rule;     /* rule applies at and after table_end */
	struct rule rule;
	int64_t table_end; /* INT64_MAX when the table is complete */
};

/* A transition while building: instant, offset after it, sort order among equal instants. */
struct ev {
	int64_t t;
	int32_t after;
	int order; /* 0 = end of DST, 1 = start of DST: at equal instants the start wins */
};

void tz_set_err(tz_err_t *err, const char *fmt, ...)
{
	if (!err)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof err->msg) /* truncated: mark it rather than fail */
		memcpy(err->msg + sizeof err->msg - 4, "...", 4);
}

/* ---- calendar ---------------------------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int tz_is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int tz_month_days(int64_t y, int m)
{
	static const unsigned char days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	return m == 2 ? 28 + tz_is_leap(y) : days[m - 1];
}

/* Days since 1970-01-01. The year is counted from March so that the leap day ends it; a
 * 400-year era has 146097 days, and 1970-01-01 is day 719468 counted from 0000-03-01. */
int64_t tz_days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = floor_div(y, 400);
	int64_t yoe = y - era * 400;                       /* 0..399 */
	int64_t mar = (m + 9) % 12;                        /* March = 0 */
	int64_t doy = (153 * mar + 2) / 5 + d - 1;         /* day of the March-based year */
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void tz_civil_from_days(int64_t days, int64_t *year, int *month, int *day)
{
	int64_t z = days + 719468;
	int64_t era = floor_div(z, 146097);
	int64_t doe = z - era * 146097;                                    /* 0..146096 */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mar = (5 * doy + 2) / 153;
	int d = (int)(doy - (153 * mar + 2) / 5 + 1);
	int m = (int)(mar < 10 ? mar + 3 : mar - 9);
	*year = yoe + era * 400 + (m <= 2);
	*month = m;
	*day = d;
}

static int weekday(int64_t days) /* 0 = Sunday; 1970-01-01 was a Thursday */
{
	int64_t w = (days + 4) % 7;
	return (int)(w < 0 ? w + 7 : w);
}

/* ---- POSIX TZ rules ---------------------------------------------------------------------- */

static int64_t rdate_local(const struct rdate *r, int64_t year)
{
	int64_t jan1 = tz_days_from_civil(year, 1, 1), day;
	switch (r->kind) {
	case 'J':
		day = jan1 + r->n - 1 + (tz_is_leap(year) && r->n >= 60);
		break;
	case 'D':
		day = jan1 + r->n;
		break;
	default: {
		int64_t first = tz_days_from_civil(year, r->m, 1);
		day = first + (r->d - weekday(first) + 7) % 7 + 7 * (r->w - 1);
		while (day >= first + tz_month_days(year, r->m))
			day -= 7; /* w = 5: the last one */
	}
	}
	return day * 86400 + r->time;
}

static void year_events(const struct rule *r, int64_t year, struct ev out[2])
{
	out[0] = (struct ev){ rdate_local(&r->start, year) - r->std_off, r->dst_off, 1 };
	out[1] = (struct ev){ rdate_local(&r->end, year) - r->dst_off, r->std_off, 0 };
}

static int ev_before(const struct ev *a, const struct ev *b)
{
	return a->t < b->t || (a->t == b->t && a->order < b->order);
}

/* Rule transitions of years [y0, y1], sorted, without empty periods or non-changes.
 * out needs 2 * (y1 - y0 + 1) slots; returns how many it kept. */
static size_t rule_events(const struct rule *r, int64_t y0, int64_t y1, struct ev *out)
{
	size_t n = 0;
	for (int64_t y = y0; y <= y1; y++) {
		year_events(r, y, out + n);
		for (size_t k = n; k < n + 2; k++) /* insertion sort: input is nearly sorted */
			for (size_t j = k; j > 0 && ev_before(&out[j], &out[j - 1]); j--) {
				struct ev tmp = out[j];
				out[j] = out[j - 1];
				out[j - 1] = tmp;
			}
		n += 2;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && out[i + 1].t == out[i].t)
			continue; /* a zero-length period: the later transition wins */
		if (k > 0 && out[k - 1].after == out[i].after)
			continue;
		out[k++] = out[i];
	}
	return k;
}

/* Parsers return the position after what they read, or NULL. */
static const char *parse_name(const char *s)
{
	const char *p = s;
	if (*p == '<') {
		for (p++; *p && *p != '>'; p++)
			if (!(*p == '+' || *p == '-' || (*p >= '0' && *p <= '9') ||
			      (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
				return NULL;
		return (*p == '>' && p - s >= 4) ? p + 1 : NULL;
	}
	while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
		p++;
	return p - s >= 3 ? p : NULL;
}

/* [+-]hh[:mm[:ss]], hours up to max_h; *out in seconds (sign as written). */
static const char *parse_hms(const char *p, int max_h, int32_t *out)
{
	int sign = 1;
	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	int parts[3] = { 0, 0, 0 };
	for (int i = 0; i < 3; i++) {
		if (i > 0) {
			if (*p != ':')
				break;
			p++;
		}
		if (*p < '0' || *p > '9')
			return NULL;
		int v = 0, digits = 0;
		while (*p >= '0' && *p <= '9' && digits < 3) {
			v = v * 10 + (*p++ - '0');
			digits++;
		}
		if ((i == 0 && v > max_h) || (i > 0 && (v > 59 || digits != 2)))
			return NULL;
		parts[i] = v;
	}
	*out = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
	return p;
}

static const char *parse_num(const char *p, int lo, int hi, int *out)
{
	if (*p < '0' || *p > '9')
		return NULL;
	int v = 0;
	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (*p++ - '0');
		if (v > hi)
			return NULL;
	}
	if (v < lo)
		return NULL;
	*out = v;
	return p;
}

static const char *parse_rdate(const char *p, struct rdate *r)
{
	memset(r, 0, sizeof *r);
	if (*p == 'J') {
		r->kind = 'J';
		p = parse_num(p + 1, 1, 365, &r->n);
	} else if (*p == 'M') {
		r->kind = 'M';
		if (!(p = parse_num(p + 1, 1, 12, &r->m)) || *p != '.' ||
		    !(p = parse_num(p + 1, 1, 5, &r->w)) || *p != '.')
			return NULL;
		p = parse_num(p + 1, 0, 6, &r->d);
	} else {
		r->kind = 'D';
		p = parse_num(p, 0, 365, &r->n);
	}
	if (!p)
		return NULL;
	r->time = 2 * 3600;
	if (*p == '/')
		p = parse_hms(p + 1, 167, &r->time);
	return p;
}

/* A whole POSIX TZ string (RFC 8536 section 3.3.1, with its version 3 extensions). */
static int parse_rule(const char *s, struct rule *r)
{
	int32_t v;
	const char *p = parse_name(s);
	if (!p || !(p = parse_hms(p, 24, &v)))
		return -1;
	memset(r, 0, sizeof *r);
	r->std_off = -v; /* POSIX offsets count west */
	if (*p == '\0')
		return 0;
	if (!(p = parse_name(p)))
		return -1;
	r->has_dst = true;
	r->dst_off = r->std_off + 3600;
	if (*p != ',' && *p != '\0') {
		if (!(p = parse_hms(p, 24, &v)))
			return -1;
		r->dst_off = -v;
	}
	if (*p == '\0') { /* no dates: the US rule, as glibc does */
		r->start = (struct rdate){ 'M', 0, 3, 2, 0, 2 * 3600 };
		r->end = (struct rdate){ 'M', 0, 11, 1, 0, 2 * 3600 };
		return 0;
	}
	if (*p != ',' || !(p = parse_rdate(p + 1, &r->start)) || *p != ',' ||
	    !(p = parse_rdate(p + 1, &r->end)) || *p != '\0')
		return -1;
	return 0;
}

int tz_posix_valid(const char *s)
{
	struct rule r;
	return parse_rule(s, &r) == 0;
}

/* ---- building zones ---------------------------------------------------------------------- */

static tz_t *tz_alloc(const char *name, size_t n)
{
	tz_t *tz = calloc(1, sizeof *tz);
	if (!tz)
		return NULL;
	tz->name = strdup(name);
	if (n > 0) {
		tz->utc = malloc(n * (3 * sizeof(int64_t) + sizeof(int32_t)));
		if (tz->utc) {
			tz->key = tz->utc + n;
			tz->sufmin = tz->key + n;
			tz->off = (int32_t *)(tz->sufmin + n);
		}
	}
	if (!tz->name || (n > 0 && !tz->utc)) {
		tz_free(tz);
		errno = ENOMEM;
		return NULL;
	}
	tz->table_end = INT64_MAX;
	return tz;
}

void tz_free(tz_t *tz)
{
	if (!tz)
		return;
	int saved = errno;
	free(tz->utc);
	free(tz->name);
	free(tz);
	errno = saved;
}

static void finish_table(tz_t *tz)
{
	for (size_t i = 0; i < tz->n; i++)
		tz->key[i] = tz->utc[i] + tz->off[i];
	int64_t m = INT64_MAX;
	for (size_t i = tz->n; i-- > 0;) {
		if (tz->key[i] < m)
			m = tz->key[i];
		tz->sufmin[i] = m;
	}
}

tz_t *tz_fixed(const char *name, int32_t offset)
{
	if (offset <= -86400 || offset >= 86400) {
		errno = EINVAL;
		return NULL;
	}
	tz_t *tz = tz_alloc(name, 0);
	if (tz)
		tz->initial = offset;
	return tz;
}

/* A zone from explicit transitions (times strictly ascending) and an optional rule that
 * continues after the last one. */
static tz_t *build(const char *name, int32_t initial, const int64_t *times, const int32_t *offs,
                   size_t n, const struct rule *rule)
{
	bool dst = rule && rule->has_dst;
	int64_t y0 = 0;
	size_t extra = 0;
	if (dst) {
		int64_t yy;
		int mm, dd;
		tz_civil_from_days(floor_div(n ? times[n - 1] : 0, 86400), &yy, &mm, &dd);
		y0 = yy - 1;
		if (y0 < 1800 || n == 0)
			y0 = n == 0 ? TABLE_LAST_YEAR + 1 : 1800; /* rule-only zones: always evaluated */
		if (y0 <= TABLE_LAST_YEAR)
			extra = 2 * (size_t)(TABLE_LAST_YEAR - y0 + 1);
	}
	struct ev *evs = NULL;
	if (extra && !(evs = malloc(extra * sizeof *evs))) {
		errno = ENOMEM;
		return NULL;
	}
	size_t ne = extra ? rule_events(rule, y0, TABLE_LAST_YEAR, evs) : 0;
	tz_t *tz = tz_alloc(name, n + ne);
	if (!tz) {
		free(evs);
		return NULL;
	}
	tz->initial = initial;
	int32_t last = initial;
	for (size_t i = 0; i < n; i++) { /* drop transitions that do not change the offset */
		if (offs[i] == last)
			continue;
		tz->utc[tz->n] = times[i];
		tz->off[tz->n++] = last = offs[i];
	}
	int64_t after = n ? times[n - 1] : INT64_MIN;
	for (size_t i = 0; i < ne; i++) {
		if (evs[i].t <= after || evs[i].after == last)
			continue;
		tz->utc[tz->n] = evs[i].t;
		tz->off[tz->n++] = last = evs[i].after;
	}
	free(evs);
	if (dst) {
		tz->has_rule = true;
		tz->rule = *rule;
		tz->table_end = n == 0 ? INT64_MIN : tz_days_from_civil(TABLE_END_YEAR, 1, 1) * 86400;
	} else if (rule && n == 0) {
		tz->initial = rule->std_off;
	}
	finish_table(tz);
	return tz;
}

tz_t *tz_from_posix(const char *s, tz_err_t *err)
{
	struct rule r;
	if (!s || parse_rule(s, &r) < 0) {
		tz_set_err(err, "'%s' is not a POSIX TZ rule (example: CET-1CEST,M3.5.0,M10.5.0/3)",
		        s ? s : "(null)");
		errno = EINVAL;
		return NULL;
	}
	return build(s, r.std_off, NULL, NULL, 0, &r);
}

/* ---- TZif -------------------------------------------------------------------------------- */

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const unsigned char *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

struct tzif_hdr {
	uint32_t isut, isstd, leap, times, types, chars;
};

static int tzif_header(const unsigned char *p, size_t len, struct tzif_hdr *h, char *version)
{
	if (len < 44 || memcmp(p, "TZif", 4) != 0)
		return -1;
	*version = (char)p[4];
	h->isut = be32(p + 20);
	h->isstd = be32(p + 24);
	h->leap = be32(p + 28);
	h->times = be32(p + 32);
	h->types = be32(p + 36);
	h->chars = be32(p + 40);
	return 0;
}

static uint64_t tzif_block(const struct tzif_hdr *h, unsigned tsize)
{
	return (uint64_t)h->times * tsize + h->times + (uint64_t)h->types * 6 + h->chars +
	       (uint64_t)h->leap * (tsize + 4) + h->isstd + h->isut;
}

tz_t *tz_from_tzif(const char *name, const void *data, size_t len, tz_err_t *err)
{
	const unsigned char *p = data;
	struct tzif_hdr h;
	char version;
	const char *why = NULL;
	if (tzif_header(p, len, &h, &version) < 0) {
		why = "no TZif header";
		goto bad;
	}
	unsigned tsize = 4;
	uint64_t v1 = tzif_block(&h, 4);
	if (version >= '2' && 44 + v1 <= len) { /* use the 64-bit second part */
		const unsigned char *q = p + 44 + v1;
		if (tzif_header(q, len - 44 - v1, &h, &version) < 0) {
			why = "bad second header";
			goto bad;
		}
		p = q;
		len -= 44 + v1;
		tsize = 8;
	} else {
		version = '1';
	}
	uint64_t blen = tzif_block(&h, tsize);
	if (44 + blen > len) {
		why = "truncated";
		goto bad;
	}
	if (h.types == 0 || h.types > 256 || h.times > MAX_TZIF_TIMES ||
	    (h.isstd && h.isstd != h.types) || (h.isut && h.isut != h.types)) {
		why = "bad counts";
		goto bad;
	}
	if (h.leap) {
		why = "leap-second data (right/ zones) is not supported: use the zone without right/";
		goto bad;
	}
	const unsigned char *times = p + 44, *idx = times + (size_t)h.times * tsize;
	const unsigned char *types = idx + h.times;
	int32_t toff[256];
	for (uint32_t i = 0; i < h.types; i++) {
		toff[i] = (int32_t)be32(types + 6 * i);
		if (toff[i] == INT32_MIN || toff[i] <= -7 * 86400 || toff[i] >= 7 * 86400) {
			why = "offset out of range";
			goto bad;
		}
	}
	struct rule rule, *rp = NULL;
	if (tsize == 8) { /* footer: "\n" POSIX-TZ "\n" */
		const char *f = (const char *)p + 44 + blen;
		size_t flen = len - 44 - blen;
		if (flen < 2 || f[0] != '\n') {
			why = "missing footer";
			goto bad;
		}
		const char *nl = memchr(f + 1, '\n', flen - 1);
		if (!nl) {
			why = "unterminated footer";
			goto bad;
		}
		size_t rl = (size_t)(nl - f - 1);
		if (rl > 0) {
			char buf[256];
			if (rl >= sizeof buf) {
				why = "footer too long";
				goto bad;
			}
			memcpy(buf, f + 1, rl);
			buf[rl] = '\0';
			if (parse_rule(buf, &rule) < 0) {
				why = "bad footer rule";
				goto bad;
			}
			rp = &rule;
		}
	}
	int64_t *tt = malloc((h.times ? h.times : 1) * (sizeof(int64_t) + sizeof(int32_t)));
	if (!tt) {
		errno = ENOMEM;
		tz_set_err(err, "time zone '%s': out of memory", name);
		return NULL;
	}
	int32_t *to = (int32_t *)(tt + (h.times ? h.times : 1));
	for (uint32_t i = 0; i < h.times; i++) {
		tt[i] = tsize == 8 ? be64(times + 8 * (size_t)i) : (int32_t)be32(times + 4 * (size_t)i);
		if (idx[i] >= h.types || (i > 0 && tt[i] <= tt[i - 1])) {
			free(tt);
			why = "bad transition";
			goto bad;
		}
		to[i] = toff[idx[i]];
	}
	tz_t *tz = build(name, toff[0], tt, to, h.times, rp);
	free(tt);
	if (!tz)
		tz_set_err(err, "time zone '%s': out of memory", name);
	return tz;
bad:
	tz_set_err(err, "time zone '%s': not valid TZif data (%s)", name, why);
	errno = EINVAL;
	return NULL;
}

/* ---- lookups ----------------------------------------------------------------------------- */

/* Rule transitions of a few years around local-ish time x, for dates past the table. The
 * result is exact for times in [*lo, *hi): a rule date may fall up to 7 days (167 hours) away
 * from its nominal day, so a margin is kept to the years left out. */
static size_t rule_window(const tz_t *tz, int64_t x, struct ev evs[12], int64_t *lo, int64_t *hi)
{
	int64_t y;
	int m, d;
	if (x > WINDOW_LIMIT) /* keep the arithmetic in range; the rule repeats anyway */
		x = WINDOW_LIMIT;
	if (x < -WINDOW_LIMIT)
		x = -WINDOW_LIMIT;
	tz_civil_from_days(floor_div(x, 86400), &y, &m, &d);
	*lo = (tz_days_from_civil(y - 2, 1, 1) + 9) * 86400;
	*hi = (tz_days_from_civil(y + 2, 1, 1) - 9) * 86400;
	return rule_events(&tz->rule, y - 3, y + 2, evs);
}

static void span_from(int64_t lo, int64_t hi, int64_t llo, int64_t lhi, int32_t off,
                      tz_span_t *sp)
{
	sp->utc_lo = lo;
	sp->utc_hi = hi;
	sp->local_lo = llo;
	sp->local_hi = lhi > llo ? lhi : llo;
	sp->offset = off;
}

/* Span of period i (-1 = before the first transition) of a table (utc, off), keys computed
 * on the fly; sufmin(i+1) by scanning (tables here are short). */
static void window_span(const struct ev *e, size_t n, long i, int32_t before, tz_span_t *sp)
{
	int64_t lo = i < 0 ? INT64_MIN : e[i].t;
	int64_t hi = (size_t)(i + 1) < n ? e[i + 1].t : INT64_MAX;
	int64_t llo = i < 0 ? INT64_MIN : e[i].t + e[i].after;
	int64_t lhi = INT64_MAX;
	for (size_t j = (size_t)(i + 1); j < n; j++)
		if (e[j].t + e[j].after < lhi)
			lhi = e[j].t + e[j].after;
	span_from(lo, hi, llo, lhi, i < 0 ? before : e[i].after, sp);
}

static int32_t window_before(const struct ev *e, size_t n, const struct rule *r)
{
	return n && e[0].after == r->dst_off ? r->std_off : r->dst_off;
}

static void clip(tz_span_t *sp, int64_t lo, int64_t hi)
{
	if (sp->utc_lo < lo)
		sp->utc_lo = lo;
	if (sp->utc_hi > hi)
		sp->utc_hi = hi;
	if (sp->local_lo < lo)
		sp->local_lo = lo;
	if (sp->local_hi > hi)
		sp->local_hi = hi;
	if (sp->local_hi < sp->local_lo)
		sp->local_hi = sp->local_lo;
	if (sp->utc_hi < sp->utc_lo)
		sp->utc_hi = sp->utc_lo;
}

static void table_span(const tz_t *tz, long i, tz_span_t *sp)
{
	size_t n = tz->n;
	int64_t lo = i < 0 ? INT64_MIN : tz->utc[i];
	int64_t hi = (size_t)(i + 1) < n ? tz->utc[i + 1] : INT64_MAX;
	int64_t llo = i < 0 ? INT64_MIN : tz->key[i];
	int64_t lhi = (size_t)(i + 1) < n ? tz->sufmin[i + 1] : INT64_MAX;
	span_from(lo, hi, llo, lhi, i < 0 ? tz->initial : tz->off[i], sp);
	clip(sp, INT64_MIN, tz->table_end);
}

void tz_span_at(const tz_t *tz, int64_t t, tz_span_t *sp)
{
	if (t >= tz->table_end) {
		struct ev e[12];
		int64_t wlo, whi;
		size_t n = rule_window(tz, t < WINDOW_LIMIT ? t + tz->rule.std_off : t, e, &wlo, &whi);
		long i = -1;
		while ((size_t)(i + 1) < n && e[i + 1].t <= t)
			i++;
		window_span(e, n, i, window_before(e, n, &tz->rule), sp);
		clip(sp, wlo > tz->table_end ? wlo : tz->table_end, whi);
		return;
	}
	size_t lo = 0, hi = tz->n; /* first index with utc > t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tz->utc[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	table_span(tz, (long)lo - 1, sp);
}

void tz_span_local(const tz_t *tz, int64_t l, tz_span_t *sp)
{
	if (l >= tz->table_end) {
		struct ev e[12];
		int64_t wlo, whi;
		size_t n = rule_window(tz, l, e, &wlo, &whi);
		long i = -1;
		for (size_t j = 0; j < n; j++) /* latest transition whose key is <= l */
			if (e[j].t + e[j].after <= l)
				i = (long)j;
		window_span(e, n, i, window_before(e, n, &tz->rule), sp);
		clip(sp, wlo > tz->table_end ? wlo : tz->table_end, whi);
		return;
	}
	size_t lo = 0, hi = tz->n; /* first index with sufmin > l: sufmin is non-decreasing */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tz->sufmin[mid] <= l)
			lo = mid + 1;
		else
			hi = mid;
	}
	table_span(tz, (long)lo - 1, sp);
}

int32_t tz_offset_at(const tz_t *tz, int64_t t)
{
	tz_span_t sp;
	tz_span_at(tz, t, &sp);
	return sp.offset;
}

int64_t tz_local_to_utc(const tz_t *tz, int64_t l)
{
	tz_span_t sp;
	tz_span_local(tz, l, &sp);
	return l - sp.offset;
}

const char *tz_name(const tz_t *tz)
{
	return tz->name;
}
