/* cron/tz_iso.c: ISO 8601 text for instants in a zone (part of the tz module, see tz.h). */
#include "cron/tz.h"

#include <errno.h>
#include <stdio.h>

int tz_format_iso(const tz_t *tz, int64_t t, char *buf, size_t len)
{
	int32_t off = tz_offset_at(tz, t);
	int64_t l = t + off, days = l / 86400, secs = l % 86400, y;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	int m, d;
	tz_civil_from_days(days, &y, &m, &d);
	int a = off < 0 ? -off : off;
	char zone[16];
	if (a % 60)
		snprintf(zone, sizeof zone, "%c%02d:%02d:%02d", off < 0 ? '-' : '+', a / 3600,
		         a / 60 % 60, a % 60);
	else
		snprintf(zone, sizeof zone, "%c%02d:%02d", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
	int n = snprintf(buf, len, "%04lld-%02d-%02dT%02d:%02d:%02d%s", (long long)y, m, d,
	                 (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60), zone);
	if (n < 0 || (size_t)n >= len) {
		errno = ERANGE;
		return -1;
	}
	return n;
}

/* Exactly `digits` decimal digits; returns the position after them or NULL. */
static const char *num(const char *p, int digits, int *out)
{
	int v = 0;
	for (int i = 0; i < digits; i++, p++) {
		if (*p < '0' || *p > '9')
			return NULL;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return p;
}

int tz_parse_iso(const tz_t *tz, const char *s, int64_t *t)
{
	int y, mo, d, h = 0, mi = 0, sec = 0;
	const char *p = s;
	if (!(p = num(p, 4, &y)) || *p++ != '-' || !(p = num(p, 2, &mo)) || *p++ != '-' ||
	    !(p = num(p, 2, &d)))
		goto bad;
	if (mo < 1 || mo > 12 || d < 1 || d > tz_month_days(y, mo))
		goto bad;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (!(p = num(p, 2, &h)) || *p++ != ':' || !(p = num(p, 2, &mi)))
			goto bad;
		if (*p == ':' && !(p = num(p + 1, 2, &sec)))
			goto bad;
		if (h > 23 || mi > 59 || sec > 59)
			goto bad;
	}
	int64_t local = tz_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	if (*p == '\0') {
		*t = tz_local_to_utc(tz, local);
		return 0;
	}
	int off = 0;
	if (*p == 'Z' && p[1] == '\0') {
		*t = local;
		return 0;
	}
	if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
		if (!(p = num(p, 2, &oh)))
			goto bad;
		if (*p == ':')
			p++;
		if (*p && !(p = num(p, 2, &om)))
			goto bad;
		if (*p || oh > 23 || om > 59)
			goto bad;
		off = sign * (oh * 3600 + om * 60);
		*t = local - off;
		return 0;
	}
bad:
	errno = EINVAL;
	return -1;
}
