/* cron/tz.h: IANA time zones from the system zoneinfo, without the process-global TZ state.
 *
 * A tz_t is immutable once loaded: every query is a pure function of (zone, instant), so one
 * zone may be shared by any number of threads. Nothing here calls tzset(), localtime() or reads
 * TZ, except tz_load_default(), which is documented to.
 *
 * Times are int64 seconds. An "instant" counts seconds since 1970-01-01T00:00:00Z; a "local"
 * time counts seconds since 1970-01-01T00:00:00 on the zone's wall clock, so for any instant
 * t, local = t + tz_offset_at(tz, t).
 *
 * Where the wall clock jumps, local -> instant follows java.util.GregorianCalendar (lenient),
 * because Quartz computes its fire times with it:
 *   - a local time in a gap (clocks go forward) is read with the offset in force BEFORE the
 *     gap: 02:30 on the day New York springs forward is 07:30Z, which is 03:30 EDT;
 *   - a local time that happens twice (clocks go back) is the SECOND one, the offset AFTER the
 *     change: 01:30 on the day New York falls back is 06:30Z, which is 01:30 EST.
 * Precisely: a local time maps with the offset of the latest transition whose own start, in
 * the new offset's wall time (instant + new offset), is <= the local time.
 *
 * Data: TZif version 1 to 4 files (RFC 8536); 64-bit data is used when present, and the POSIX
 * TZ footer rule extends the zone past its last transition, for any year.
 */
#ifndef EJOB_TZ_H
#define EJOB_TZ_H

#include <stddef.h>
#include <stdint.h>

typedef struct tz tz_t;

typedef struct tz_err {
	char msg[512];
} tz_err_t;

/* The zoneinfo directory tz_load() reads. */
#define TZ_DIR "/usr/share/zoneinfo"

/* Load a zone by name: an IANA name ("Europe/London"), "UTC"/"GMT" (always available, even
 * without zoneinfo files), a Java custom id "GMT+8", "GMT-03:30", "GMT+0530", or one of Java's
 * legacy three-letter ids (EST, MST and HST are fixed offsets; PST, CTT, IST, ... are aliases)
 * so that an ElasticJob timeZone value loads here as it did in the JVM.
 * Returns NULL with errno set and err->msg naming the zone and the fix (err may be NULL). */
tz_t *tz_load(const char *name, tz_err_t *err);

/* As tz_load(), from another zoneinfo directory (tests). */
tz_t *tz_load_dir(const char *dir, const char *name, tz_err_t *err);

/* The supervisor's default zone: the TZ environment variable if set and not empty (a zone
 * name, ":name", an absolute TZif path, or a POSIX TZ rule such as "CET-1CEST,M3.5.0,M10.5.0/3"),
 * else /etc/localtime, else UTC. Never fails for lack of /etc/localtime; fails (NULL) when TZ
 * names something that cannot be loaded, so that a typo does not silently become UTC. */
tz_t *tz_load_default(tz_err_t *err);

/* tz_load_default() with its inputs given: tzenv as the TZ value (NULL = unset), localtime as
 * the path of the system zone link (NULL = none). */
tz_t *tz_load_env(const char *tzenv, const char *localtime, tz_err_t *err);

/* Build a zone from TZif bytes in memory (pure). name is copied. */
tz_t *tz_from_tzif(const char *name, const void *data, size_t len, tz_err_t *err);

/* Build a zone from a POSIX TZ rule ("EST5EDT,M3.2.0,M11.1.0", "<+0330>-3:30"); pure. */
tz_t *tz_from_posix(const char *rule, tz_err_t *err);

/* A zone at a fixed offset (seconds east of UTC, |offset| < 24h). name is copied. */
tz_t *tz_fixed(const char *name, int32_t offset);

void tz_free(tz_t *tz);

/* The name the zone was loaded by (alias resolved: "PST" gives "America/Los_Angeles"). */
const char *tz_name(const tz_t *tz);

/* Seconds east of UTC in force at instant t. */
int32_t tz_offset_at(const tz_t *tz, int64_t t);

/* The instant of a local time, with java.util.GregorianCalendar's rules for gaps and overlaps
 * (see the top of this file). */
int64_t tz_local_to_utc(const tz_t *tz, int64_t local);

/* A stretch of time with one offset, for callers that convert many nearby times (cron keeps
 * the last span and skips the lookup while it still applies). Every instant in
 * [utc_lo, utc_hi) has `offset`, and every local time in [local_lo, local_hi) maps to an
 * instant with `offset` (tz_local_to_utc). Either range may be smaller than the true one, never
 * larger, and may be empty; INT64_MIN/INT64_MAX stand for unbounded. tz_span_at() returns the
 * span of instant t (so utc_lo <= t < utc_hi), tz_span_local() that of local time l (so
 * local_lo <= l < local_hi). */
typedef struct tz_span {
	int64_t utc_lo, utc_hi;
	int64_t local_lo, local_hi;
	int32_t offset;
} tz_span_t;

void tz_span_at(const tz_t *tz, int64_t t, tz_span_t *sp);
void tz_span_local(const tz_t *tz, int64_t local, tz_span_t *sp);

/* ISO 8601 with the offset in force, "2026-03-29T03:00:00+01:00" (seconds in the offset only
 * when it has them, as LMT does). Returns the length, or -1 (errno = ERANGE) when buf is too
 * small; 40 bytes always suffice for years -99999..99999. */
int tz_format_iso(const tz_t *tz, int64_t t, char *buf, size_t len);

/* Parse "YYYY-MM-DD[(T| )HH:MM[:SS]][Z|(+|-)HH[[:]MM]]" into an instant. Without an offset the
 * time is local to tz (gaps and overlaps as tz_local_to_utc). Returns 0, or -1 (errno =
 * EINVAL) when s is not such a time. */
int tz_parse_iso(const tz_t *tz, const char *s, int64_t *t);

/* Proleptic Gregorian calendar helpers. Months 1-12; any int64 day count. */
int64_t tz_days_from_civil(int64_t year, int month, int day);
void tz_civil_from_days(int64_t days, int64_t *year, int *month, int *day);
int tz_is_leap(int64_t year);
int tz_month_days(int64_t year, int month);

#endif
