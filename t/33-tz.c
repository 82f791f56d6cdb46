/* t/33-tz.c: time zones: loading, offsets, local times in gaps and overlaps (as Java reads
 * them), POSIX rules, TZif edge cases, ISO 8601; then every zone of zone1970.tab against
 * java.util.Calendar itself (t/quartz/CronOracle.java), 1900 to 2037, and twenty zones with
 * DST rules out to 2300. Fails, saying what to install, without Java.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cron/tz.h"
#include "t/lib/oracle.h"
#include "t/tap.h"

static int64_t utc(int64_t y, int mo, int d, int h, int mi, int s)
{
	return tz_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s;
}

static int64_t at_local(const tz_t *tz, int64_t y, int mo, int d, int h, int mi, int s)
{
	return tz_local_to_utc(tz, utc(y, mo, d, h, mi, s));
}

static void test_calendar(void)
{
	is_int(tz_days_from_civil(1970, 1, 1), 0, "1970-01-01 is day 0");
	is_int(tz_days_from_civil(2000, 3, 1), 11017, "2000-03-01");
	is_int(tz_days_from_civil(1900, 1, 1), -25567, "1900-01-01");
	is_int(tz_days_from_civil(-1, 12, 31), -719529, "1 BC (year 0) ends before 0001-01-01");
	int bad = 0;
	for (int64_t d = -800000; d < 800000; d += 7) { /* round trips, some 4400 years */
		int64_t y;
		int m, dd;
		tz_civil_from_days(d, &y, &m, &dd);
		bad += tz_days_from_civil(y, m, dd) != d || m < 1 || m > 12 || dd < 1 ||
		       dd > tz_month_days(y, m);
	}
	is_int(bad, 0, "civil <-> days round-trips over 4400 years");
	ok(tz_is_leap(2000) && !tz_is_leap(2100) && tz_is_leap(2024) && !tz_is_leap(2023), "leap years");
	is_int(tz_month_days(2024, 2), 29, "Feb 2024");
	is_int(tz_month_days(2100, 2), 28, "Feb 2100");
}

static void test_load(void)
{
	tz_err_t err;
	tz_t *tz;

	tz = tz_load_dir("/nonexistent", "UTC", &err);
	ok(tz && tz_offset_at(tz, 0) == 0, "UTC works without zoneinfo");
	tz_free(tz);

	errno = 0;
	tz = tz_load("Mars/Olympus_Mons", &err);
	ok(!tz && errno == ENOENT, "an unknown zone is ENOENT");
	is_str(err.msg, "unknown time zone 'Mars/Olympus_Mons' (no zone file "
	       "/usr/share/zoneinfo/Mars/Olympus_Mons): use an IANA name such as 'Europe/London' "
	       "or 'America/New_York', or 'UTC', or 'GMT+08:00'; if the name is right, install the "
	       "tzdata package", "... and the message names it and the fix");
	const char *bad_names[] = { "../../etc/passwd", "/etc/localtime", "", "Europe/./London",
		                    "Europe/London ", "-x" };
	for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
		errno = 0;
		ok(!tz_load(bad_names[i], &err) && errno == EINVAL, "'%s' is not a zone name", bad_names[i]);
	}
	tz = tz_load("Europe", &err);
	ok(!tz && errno == ENOENT, "a directory is not a zone");

	struct {
		const char *id, *name;
		int32_t off;
	} java[] = {
		{ "GMT+8", "GMT+08:00", 28800 },    { "GMT-0330", "GMT-03:30", -12600 },
		{ "GMT+5:30", "GMT+05:30", 19800 }, { "GMT+10:00", "GMT+10:00", 36000 },
		{ "GMT-12", "GMT-12:00", -43200 },  { "EST", "EST", -18000 },
		{ "HST", "HST", -36000 },
	};
	for (size_t i = 0; i < sizeof java / sizeof java[0]; i++) {
		tz = tz_load(java[i].id, &err);
		ok(tz && tz_offset_at(tz, utc(2025, 7, 1, 0, 0, 0)) == java[i].off &&
		   !strcmp(tz_name(tz), java[i].name), "Java id %s is %s, %d s", java[i].id,
		   java[i].name, java[i].off);
		tz_free(tz);
	}
	ok(!tz_load("GMT+24", &err), "GMT+24 is not a Java id (hours 0-23)");
	tz = tz_load("PST", &err);
	ok(tz && !strcmp(tz_name(tz), "America/Los_Angeles") &&
	   tz_offset_at(tz, utc(2025, 7, 1, 0, 0, 0)) == -25200, "PST is Java's alias of Los Angeles");
	tz_free(tz);
	tz = tz_load("right/UTC", &err);
	if (access("/usr/share/zoneinfo/right/UTC", R_OK) == 0)
		ok(!tz && strstr(err.msg, "leap-second"), "right/ zones are refused: %s", err.msg);
	else
		pass("no right/ zones here (tzdata without them)");
	tz_free(tz);
}

static void test_offsets(void)
{
	tz_t *lon = tz_load("Europe/London", NULL), *ny = tz_load("America/New_York", NULL);
	tz_t *lh = tz_load("Australia/Lord_Howe", NULL), *ams = tz_load("Europe/Amsterdam", NULL);
	if (!ok(lon && ny && lh && ams, "load four zones"))
		BAIL_OUT("zoneinfo missing: install tzdata");
	is_int(tz_offset_at(lon, utc(2025, 1, 15, 0, 0, 0)), 0, "London winter");
	is_int(tz_offset_at(lon, utc(2025, 7, 15, 0, 0, 0)), 3600, "London summer");
	is_int(tz_offset_at(lon, utc(2025, 3, 30, 0, 59, 59)), 0, "London, a second before BST");
	is_int(tz_offset_at(lon, utc(2025, 3, 30, 1, 0, 0)), 3600, "London, BST begins 01:00Z");
	is_int(tz_offset_at(lon, utc(2300, 7, 1, 0, 0, 0)), 3600, "London summer 2300 (rule)");
	is_int(tz_offset_at(lon, utc(2300, 12, 1, 0, 0, 0)), 0, "London winter 2300 (rule)");
	is_int(tz_offset_at(ny, utc(2025, 11, 2, 5, 59, 59)), -14400, "New York EDT to the end");
	is_int(tz_offset_at(ny, utc(2025, 11, 2, 6, 0, 0)), -18000, "New York EST from 06:00Z");
	is_int(tz_offset_at(lh, utc(2025, 1, 1, 0, 0, 0)), 39600, "Lord Howe summer +11");
	is_int(tz_offset_at(lh, utc(2025, 7, 1, 0, 0, 0)), 37800, "Lord Howe winter +10:30");
	is_int(tz_offset_at(ams, utc(1900, 1, 1, 0, 0, 0)), 1172, "Amsterdam 1900: LMT +00:19:32");

	/* Java's reading of local times: a gap takes the offset before it, an overlap the
	 * second occurrence. */
	is_int(at_local(ny, 2025, 3, 9, 2, 30, 0), utc(2025, 3, 9, 7, 30, 0),
	       "NY 02:30 in the spring gap is 07:30Z (03:30 EDT)");
	is_int(at_local(ny, 2025, 3, 9, 1, 59, 59), utc(2025, 3, 9, 6, 59, 59), "NY 01:59:59 EST");
	is_int(at_local(ny, 2025, 3, 9, 3, 0, 0), utc(2025, 3, 9, 7, 0, 0), "NY 03:00 EDT");
	is_int(at_local(ny, 2025, 11, 2, 1, 30, 0), utc(2025, 11, 2, 6, 30, 0),
	       "NY 01:30 in the autumn overlap is the second one, 06:30Z (EST)");
	is_int(at_local(ny, 2025, 11, 2, 0, 59, 59), utc(2025, 11, 2, 4, 59, 59), "NY 00:59:59 EDT");
	is_int(at_local(lon, 2025, 3, 30, 1, 30, 0), utc(2025, 3, 30, 1, 30, 0),
	       "London 01:30 in the gap is 01:30Z (02:30 BST)");
	is_int(at_local(lon, 2025, 10, 26, 1, 30, 0), utc(2025, 10, 26, 1, 30, 0),
	       "London 01:30 in the overlap is 01:30Z (GMT)");
	is_int(at_local(lon, 2300, 3, 25, 1, 30, 0), utc(2300, 3, 25, 1, 30, 0),
	       "London 2300 gap, past the table");
	is_int(at_local(lon, 2300, 10, 28, 1, 30, 0), utc(2300, 10, 28, 1, 30, 0),
	       "London 2300 overlap, past the table");
	is_int(at_local(lh, 2025, 10, 5, 2, 15, 0), utc(2025, 10, 4, 15, 45, 0),
	       "Lord Howe 02:15 in its half-hour gap reads as +10:30");

	/* spans contain their query and agree with point lookups */
	int bad = 0;
	for (int64_t t = utc(2020, 1, 1, 0, 0, 0); t < utc(2030, 1, 1, 0, 0, 0); t += 86400 * 3 + 1234) {
		tz_span_t sp;
		tz_span_at(ny, t, &sp);
		bad += !(sp.utc_lo <= t && t < sp.utc_hi) || sp.offset != tz_offset_at(ny, sp.utc_lo) ||
		       sp.offset != tz_offset_at(ny, sp.utc_hi - 1);
		int64_t l = t + tz_offset_at(ny, t);
		tz_span_local(ny, l, &sp);
		bad += !(sp.local_lo <= l && l < sp.local_hi) ||
		       tz_local_to_utc(ny, sp.local_lo) != sp.local_lo - sp.offset ||
		       tz_local_to_utc(ny, sp.local_hi - 1) != sp.local_hi - 1 - sp.offset;
	}
	is_int(bad, 0, "spans contain their query and hold their offset to both ends");
	tz_free(lon);
	tz_free(ny);
	tz_free(lh);
	tz_free(ams);
}

static void test_posix(void)
{
	tz_err_t err;
	tz_t *tz = tz_from_posix("EST5EDT,M3.2.0,M11.1.0", &err);
	ok(tz, "EST5EDT,M3.2.0,M11.1.0");
	is_int(tz_offset_at(tz, utc(2025, 7, 1, 0, 0, 0)), -14400, "... summer");
	is_int(tz_offset_at(tz, utc(2025, 3, 9, 7, 0, 0)), -14400, "... DST from 2025-03-09 07:00Z");
	is_int(tz_offset_at(tz, utc(2025, 3, 9, 6, 59, 59)), -18000, "... not before");
	is_int(tz_offset_at(tz, utc(1800, 7, 1, 0, 0, 0)), -14400, "... rule-only zones apply always");
	is_int(at_local(tz, 2025, 11, 2, 1, 30, 0), utc(2025, 11, 2, 6, 30, 0), "... overlap");
	tz_free(tz);
	tz = tz_from_posix("AEST-10AEDT,M10.1.0,M4.1.0/3", &err);
	ok(tz && tz_offset_at(tz, utc(2025, 1, 1, 0, 0, 0)) == 39600 &&
	   tz_offset_at(tz, utc(2025, 7, 1, 0, 0, 0)) == 36000, "southern hemisphere rule");
	tz_free(tz);
	tz = tz_from_posix("<+0330>-3:30", &err);
	ok(tz && tz_offset_at(tz, 0) == 12600, "<+0330>-3:30 is fixed +03:30");
	tz_free(tz);
	tz = tz_from_posix("EST5EDT4,0/0,J365/25", &err);
	ok(tz && tz_offset_at(tz, utc(2025, 1, 1, 2, 0, 0)) == -14400 &&
	   tz_offset_at(tz, utc(2025, 7, 1, 0, 0, 0)) == -14400 &&
	   tz_offset_at(tz, utc(2026, 12, 31, 23, 0, 0)) == -14400, "all-year DST (v3 rule)");
	tz_free(tz);
	const char *bad[] = { "", "E5", "EST", "EST5EDT,M13.1.0,M11.1.0", "EST5EDT,M3.2.0",
		              "EST5EDT,M3.2.0/200,M11.1.0", "EST25" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ok(!tz_from_posix(bad[i], &err), "'%s' is not a POSIX TZ rule", bad[i]);
}

static void test_env(void)
{
	tz_err_t err;
	tz_t *tz = tz_load_env(":Europe/Paris", NULL, &err);
	ok(tz && !strcmp(tz_name(tz), "Europe/Paris"), "TZ=:Europe/Paris");
	tz_free(tz);
	tz = tz_load_env("UTC0", NULL, &err);
	ok(tz && tz_offset_at(tz, 0) == 0, "TZ=UTC0 (a POSIX rule)");
	tz_free(tz);
	tz = tz_load_env("CET-1CEST,M3.5.0,M10.5.0/3", NULL, &err);
	ok(tz && tz_offset_at(tz, utc(2025, 7, 1, 0, 0, 0)) == 7200, "TZ=CET-1CEST,...");
	tz_free(tz);
	tz = tz_load_env("Bogus/Zone", "/etc/localtime", &err);
	ok(!tz && strstr(err.msg, "TZ='Bogus/Zone'"), "a bad TZ is an error, not UTC: %s", err.msg);
	tz = tz_load_env("/usr/share/zoneinfo/Asia/Tokyo", NULL, &err);
	ok(tz && tz_offset_at(tz, 0) == 32400, "TZ=/usr/share/zoneinfo/Asia/Tokyo");
	tz_free(tz);

	char dir[] = "/tmp/ejob-tz-XXXXXX", link[64];
	if (!mkdtemp(dir))
		BAIL_OUT("mkdtemp: %s", strerror(errno));
	snprintf(link, sizeof link, "%s/localtime", dir);
	if (symlink("/usr/share/zoneinfo/America/Sao_Paulo", link) != 0)
		BAIL_OUT("symlink: %s", strerror(errno));
	tz = tz_load_env(NULL, link, &err);
	ok(tz && !strcmp(tz_name(tz), "America/Sao_Paulo"), "no TZ: the /etc/localtime link names it");
	tz_free(tz);
	tz = tz_load_env("", link, &err);
	ok(tz && !strcmp(tz_name(tz), "America/Sao_Paulo"), "empty TZ is no TZ");
	tz_free(tz);
	unlink(link);
	tz = tz_load_env(NULL, link, &err);
	ok(tz && !strcmp(tz_name(tz), "UTC"), "no TZ, no localtime: UTC");
	tz_free(tz);
	rmdir(dir);
}

/* A TZif file: version, one transition from type 0 (+1h) to type 1 (+2h) at t0. */
static size_t make_tzif(unsigned char *b, char version, int64_t t0, const char *footer)
{
	size_t n = 0;
	int v2 = version >= '2';
	for (int part = 0; part < 1 + v2; part++) {
		int big = part == 1;
		memcpy(b + n, "TZif", 4);
		b[n + 4] = (unsigned char)version;
		memset(b + n + 5, 0, 15);
		uint32_t counts[6] = { 0, 0, 0, 1, 2, 4 }; /* isut isstd leap time type char */
		for (int i = 0; i < 6; i++)
			for (int k = 0; k < 4; k++)
				b[n + 20 + 4 * i + k] = (unsigned char)(counts[i] >> (24 - 8 * k));
		n += 44;
		for (int k = big ? 7 : 3; k >= 0; k--)
			b[n++] = (unsigned char)((uint64_t)t0 >> (8 * k));
		b[n++] = 1;
		int32_t offs[2] = { 3600, 7200 };
		for (int i = 0; i < 2; i++) {
			for (int k = 3; k >= 0; k--)
				b[n++] = (unsigned char)((uint32_t)offs[i] >> (8 * k));
			b[n++] = (unsigned char)i;
			b[n++] = 0;
		}
		memcpy(b + n, "AB\0\0", 4);
		n += 4;
	}
	if (v2) {
		b[n++] = '\n';
		memcpy(b + n, footer, strlen(footer));
		n += strlen(footer);
		b[n++] = '\n';
	}
	return n;
}

static void test_tzif(void)
{
	unsigned char b[512];
	tz_err_t err;
	size_t n = make_tzif(b, '\0', 1000, "");
	tz_t *tz = tz_from_tzif("v1", b, n, &err);
	ok(tz && tz_offset_at(tz, 999) == 3600 && tz_offset_at(tz, 1000) == 7200 &&
	   tz_offset_at(tz, INT64_MAX / 4) == 7200, "a version 1 file");
	tz_free(tz);
	n = make_tzif(b, '3', 1000, "<+02>-2");
	tz = tz_from_tzif("v3", b, n, &err);
	ok(tz && tz_offset_at(tz, -5000000000) == 3600 && tz_offset_at(tz, 5000000000) == 7200,
	   "a version 3 file with a fixed footer");
	tz_free(tz);
	n = make_tzif(b, '2', 1000, "XYZ-2XYD,M3.5.0,M10.5.0/3");
	tz = tz_from_tzif("v2", b, n, &err);
	ok(tz && tz_offset_at(tz, utc(2025, 7, 1, 0, 0, 0)) == 10800 &&
	   tz_offset_at(tz, utc(2025, 1, 1, 0, 0, 0)) == 7200, "the footer rule continues the file");
	tz_free(tz);
	size_t full = n;
	int refused = 0;
	for (size_t cut = 0; cut < full; cut++) { /* every truncation is refused, never read past */
		tz = tz_from_tzif("cut", b, cut, &err);
		refused += tz == NULL;
		tz_free(tz);
	}
	is_int(refused, (int)full, "every truncated file is refused");
	b[4] = '2';
	b[0] = 'X';
	ok(!tz_from_tzif("bad", b, full, &err) && strstr(err.msg, "TZif"), "bad magic: %s", err.msg);
}

static void test_iso(void)
{
	tz_t *ny = tz_load("America/New_York", NULL), *ams = tz_load("Europe/Amsterdam", NULL);
	char buf[64];
	int64_t t;
	tz_format_iso(ny, utc(2025, 11, 2, 6, 30, 0), buf, sizeof buf);
	is_str(buf, "2025-11-02T01:30:00-05:00", "format with the offset in force");
	tz_format_iso(ams, utc(1900, 1, 1, 0, 0, 0), buf, sizeof buf);
	is_str(buf, "1900-01-01T00:19:32+00:19:32", "LMT offsets keep their seconds");
	tz_format_iso(ny, -1, buf, sizeof buf);
	is_str(buf, "1969-12-31T18:59:59-05:00", "before 1970");
	ok(tz_format_iso(ny, 0, buf, 10) == -1 && errno == ERANGE, "a short buffer is ERANGE");
	ok(tz_parse_iso(ny, "2025-11-02T01:30:00", &t) == 0 && t == utc(2025, 11, 2, 6, 30, 0),
	   "parse a local time (the overlap's second 01:30)");
	ok(tz_parse_iso(ny, "2025-11-02T01:30:00-04:00", &t) == 0 && t == utc(2025, 11, 2, 5, 30, 0),
	   "parse with an offset (the first 01:30)");
	ok(tz_parse_iso(ny, "2025-11-02 05:30Z", &t) == 0 && t == utc(2025, 11, 2, 5, 30, 0),
	   "parse with Z, a space, no seconds");
	ok(tz_parse_iso(ny, "2025-11-02", &t) == 0 && t == utc(2025, 11, 2, 4, 0, 0), "a date alone");
	ok(tz_parse_iso(ny, "2025-11-02T01:30:00+0530", &t) == 0 && t == utc(2025, 11, 1, 20, 0, 0),
	   "an offset without a colon");
	const char *bad[] = { "2025-02-29T00:00:00", "2025-13-01", "2025-1-1", "2025-01-01T24:00",
		              "2025-01-01T00:00:00+", "2025-01-01T00:00:00Zx", "tomorrow", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ok(tz_parse_iso(ny, bad[i], &t) == -1 && errno == EINVAL, "'%s' is refused", bad[i]);
	tz_free(ny);
	tz_free(ams);
}

/* ---- against java.util.Calendar ---------------------------------------------------------- */

/* Zones with DST rules, checked out to 2300 (the others to 2037, where Java's own tables end:
 * past them its legacy TimeZone has special cases of its own, e.g. for Gaza and Morocco). */
static const char *const deep[] = {
	"Europe/London", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham",
	"America/St_Johns", "Europe/Dublin", "Australia/Sydney", "Antarctica/Troll",
	"America/Santiago", "America/Havana", "America/Los_Angeles", "Europe/Berlin",
	"America/Chicago", "Pacific/Auckland", "Europe/Athens", "America/Asuncion",
	"Asia/Jerusalem", "America/Godthab", "Atlantic/Azores", "America/Denver",
};

static uint64_t rng = 0x2545F4914F6CDD1Du;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct jq {
	int zone;  /* index into names */
	char kind; /* 'O' offset at an instant, 'L' instant of a local time */
	int64_t v;
};

static void add_local(struct jq *q, size_t *n, int z, int64_t l)
{
	q[(*n)++] = (struct jq){ z, 'L', l };
}

static void test_java(void)
{
	char *names[512];
	size_t nz = 0;
	FILE *f = fopen("/usr/share/zoneinfo/zone1970.tab", "r");
	char line[512], sysver[32] = "?";
	if (!f) {
		fail("no /usr/share/zoneinfo/zone1970.tab: install tzdata");
		return;
	}
	while (fgets(line, sizeof line, f) && nz < 480) {
		char cc[64], coord[64], zone[128];
		if (line[0] != '#' && sscanf(line, "%63s %63s %127s", cc, coord, zone) == 3)
			names[nz++] = strdup(zone);
	}
	fclose(f);
	if ((f = fopen("/usr/share/zoneinfo/tzdata.zi", "r"))) {
		if (fgets(line, sizeof line, f))
			sscanf(line, "# version %31s", sysver);
		fclose(f);
	}
	size_t nall = nz;
	for (size_t i = 0; i < sizeof deep / sizeof deep[0]; i++)
		names[nz++] = strdup(deep[i]);

	size_t cap = 800000, nq = 0;
	struct jq *q = malloc(cap * sizeof *q);
	tz_t **tzs = calloc(nz, sizeof *tzs);
	int64_t t1900 = utc(1900, 1, 1, 0, 0, 0), t2037 = utc(2037, 1, 1, 0, 0, 0);
	int64_t t2300 = utc(2300, 12, 31, 0, 0, 0);
	for (size_t z = 0; z < nz; z++) {
		if (!(tzs[z] = tz_load(names[z], NULL)))
			continue; /* listed but not installed */
		int64_t end = z < nall ? t2037 : t2300;
		for (int i = 0; i < 20 && nq + 2 < cap; i++) {
			int64_t t = t1900 + (int64_t)(rnd() % (uint64_t)(end - t1900));
			q[nq++] = (struct jq){ (int)z, 'O', t };
			add_local(q, &nq, (int)z, t + tz_offset_at(tzs[z], t) + (int64_t)(rnd() % 7200) - 3600);
		}
		/* every transition: the instants either side, local times around both walls */
		for (int64_t t = t1900; nq + 8 < cap;) {
			tz_span_t sp;
			tz_span_at(tzs[z], t, &sp);
			if (sp.utc_hi >= end)
				break;
			int64_t tr = sp.utc_hi;
			int32_t before = sp.offset, after = tz_offset_at(tzs[z], tr);
			q[nq++] = (struct jq){ (int)z, 'O', tr - 1 };
			q[nq++] = (struct jq){ (int)z, 'O', tr };
			for (int d = -1; d <= 1; d++) {
				add_local(q, &nq, (int)z, tr + before + d * 1800);
				add_local(q, &nq, (int)z, tr + after + d * 1800);
			}
			t = tr;
		}
	}
	char **qs = malloc(nq * sizeof *qs);
	for (size_t i = 0; i < nq; i++) {
		const char *zn = names[q[i].zone];
		if (q[i].kind == 'O') {
			if (asprintf(&qs[i], "O %s %" PRId64, zn, q[i].v) < 0)
				BAIL_OUT("out of memory");
		} else {
			int64_t days = q[i].v / 86400, s = q[i].v % 86400, y;
			int m, d;
			if (s < 0)
				s += 86400, days--;
			tz_civil_from_days(days, &y, &m, &d);
			if (asprintf(&qs[i], "L %s %" PRId64 " %d %d %d %d %d", zn, y, m, d, (int)(s / 3600),
			             (int)(s / 60 % 60), (int)(s % 60)) < 0)
				BAIL_OUT("out of memory");
		}
	}
	char why[600];
	char **ans = oracle_ask(qs, nq, why, sizeof why);
	if (!ans) {
		fail("ask Java: %s", why);
	} else {
		size_t bad = 0, unknown = 0, zones_bad = 0, known = 0;
		int last_bad_zone = -1; /* zones_bad counts runs of mismatches, roughly zones */
		for (size_t i = 0; i < nq; i++) {
			if (!strncmp(ans[i], "BAD", 3)) { /* a zone this Java does not know (newer tzdata) */
				unknown++;
				continue;
			}
			int64_t want = strtoll(ans[i], NULL, 10);
			const tz_t *tz = tzs[q[i].zone];
			int64_t got = q[i].kind == 'O' ? tz_offset_at(tz, q[i].v) : tz_local_to_utc(tz, q[i].v);
			if (got == want)
				continue;
			if (oracle_tz_differs(names[q[i].zone], q[i].v)) {
				known++;
				continue;
			}
			if (bad++ < 20)
				diag("MISMATCH %s: ejob %" PRId64 ", Java %" PRId64, qs[i], got, want);
			zones_bad += q[i].zone != last_bad_zone;
			last_bad_zone = q[i].zone;
		}
		note("%zu questions in %zu zones; %zu about zones Java does not know; %zu known "
		     "differences of tzdata versions", nq, nz, unknown, known);
		ok(bad == 0 && unknown < nq / 20,
		   "offsets and local times equal Java's (%zu questions; system tzdata %s; if this "
		   "fails in a zone that changed between that and Java's, the versions differ)", nq,
		   sysver);
		if (bad)
			diag("%zu mismatches in about %zu zones", bad, zones_bad);
		oracle_free(ans, nq);
	}
	oracle_free(qs, nq);
	for (size_t z = 0; z < nz; z++) {
		tz_free(tzs[z]);
		free(names[z]);
	}
	free(tzs);
	free(q);
}

int main(void)
{
	test_calendar();
	test_load();
	test_offsets();
	test_posix();
	test_env();
	test_tzif();
	test_iso();
	test_java();
	return done_testing();
}
