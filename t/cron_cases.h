/* t/cron_cases.h: expressions with their expected fire times, and expressions Quartz refuses
 * with ejob's error column and message. t/30 checks ejob against these tables; t/31 checks
 * that Quartz 2.3.2 itself gives these fire times and refuses these expressions, so the
 * tables are Quartz's behaviour, not ours. Times are ISO 8601 in the case's zone; a start
 * without an offset is a local time there. The fire times stay below Quartz's year limit
 * (the JVM's year + 100) for decades. */
#ifndef EJOB_T_CRON_CASES_H
#define EJOB_T_CRON_CASES_H

struct cron_case {
	const char *expr;
	const char *zone;
	const char *from;    /* start strictly after this */
	const char *next[6]; /* the fire times, each after the one before; "never" ends the list */
};

struct cron_bad_case {
	const char *expr;
	int column;
	const char *msg;
};

static const struct cron_case cron_cases[] = {
	/* London springs forward 2025-03-30 01:00 GMT: 01:30 does not exist that day, Quartz skips it */
	{ "0 30 1 * * ?", "Europe/London", "2025-03-28T12:00:00",
	  { "2025-03-29T01:30:00+00:00", "2025-03-31T01:30:00+01:00", "2025-04-01T01:30:00+01:00",
	    "2025-04-02T01:30:00+01:00" } },
	/* hourly across the gap: no 01:00 */
	{ "0 0 * * * ?", "Europe/London", "2025-03-29T23:30:00",
	  { "2025-03-30T00:00:00+00:00", "2025-03-30T02:00:00+01:00", "2025-03-30T03:00:00+01:00",
	    "2025-03-30T04:00:00+01:00" } },
	/* London falls back 2025-10-26 02:00 BST: the first 01:xx (BST) is skipped, the second fires */
	{ "0 0/30 * * * ?", "Europe/London", "2025-10-26T00:10:00+01:00",
	  { "2025-10-26T00:30:00+01:00", "2025-10-26T01:00:00+00:00", "2025-10-26T01:30:00+00:00",
	    "2025-10-26T02:00:00+00:00", "2025-10-26T02:30:00+00:00" } },
	/* the repeated 01:30 fires once, in GMT */
	{ "0 30 1 * * ?", "Europe/London", "2025-10-25T12:00:00",
	  { "2025-10-26T01:30:00+00:00", "2025-10-27T01:30:00+00:00", "2025-10-28T01:30:00+00:00" } },
	/* New York springs forward 2025-03-09 02:00 EST: no 02:30 that day */
	{ "0 30 2 * * ?", "America/New_York", "2025-03-08T00:00:00",
	  { "2025-03-08T02:30:00-05:00", "2025-03-10T02:30:00-04:00", "2025-03-11T02:30:00-04:00" } },
	/* 01:45 EST, then straight to 03:00 EDT */
	{ "0 0/15 1-3 * * ?", "America/New_York", "2025-03-09T01:40:00",
	  { "2025-03-09T01:45:00-05:00", "2025-03-09T03:00:00-04:00", "2025-03-09T03:15:00-04:00",
	    "2025-03-09T03:30:00-04:00" } },
	/* New York falls back 2025-11-02 02:00 EDT: 01:30 once, in EST */
	{ "0 30 1 * * ?", "America/New_York", "2025-11-01T12:00:00",
	  { "2025-11-02T01:30:00-05:00", "2025-11-03T01:30:00-05:00", "2025-11-04T01:30:00-05:00" } },
	/* the EDT pass of 01:xx is skipped */
	{ "0 0/20 1 * * ?", "America/New_York", "2025-11-02T00:50:00-04:00",
	  { "2025-11-02T01:00:00-05:00", "2025-11-02T01:20:00-05:00", "2025-11-02T01:40:00-05:00",
	    "2025-11-03T01:00:00-05:00" } },
	/* hourly across the overlap: 01:00 EST, not 01:00 EDT */
	{ "0 0 * * * ?", "America/New_York", "2025-11-02T00:30:00-04:00",
	  { "2025-11-02T01:00:00-05:00", "2025-11-02T02:00:00-05:00", "2025-11-02T03:00:00-05:00" } },
	/* starting inside the first 01:xx: Quartz jumps to the second pass */
	{ "0 0/15 * * * ?", "America/New_York", "2025-11-02T01:10:00-04:00",
	  { "2025-11-02T01:15:00-05:00", "2025-11-02T01:30:00-05:00", "2025-11-02T01:45:00-05:00" } },
	/* February 29th: leap years only */
	{ "0 0 0 29 2 ?", "UTC", "2025-01-01T00:00:00Z",
	  { "2028-02-29T00:00:00+00:00", "2032-02-29T00:00:00+00:00", "2036-02-29T00:00:00+00:00" } },
	/* 2100 is not a leap year */
	{ "0 0 0 29 2 ? 2100-2104", "UTC", "2025-01-01T00:00:00Z",
	  { "2104-02-29T00:00:00+00:00", "never" } },
	/* last day of February */
	{ "0 0 12 L 2 ?", "UTC", "2027-01-01T00:00:00Z",
	  { "2027-02-28T12:00:00+00:00", "2028-02-29T12:00:00+00:00", "2029-02-28T12:00:00+00:00" } },
	/* last day of the month */
	{ "0 0 12 L * ?", "Europe/London", "2026-01-15T00:00:00",
	  { "2026-01-31T12:00:00+00:00", "2026-02-28T12:00:00+00:00", "2026-03-31T12:00:00+01:00",
	    "2026-04-30T12:00:00+01:00" } },
	/* third-to-last day */
	{ "0 0 12 L-3 * ?", "UTC", "2026-01-01T00:00:00Z",
	  { "2026-01-28T12:00:00+00:00", "2026-02-25T12:00:00+00:00", "2026-03-28T12:00:00+00:00" } },
	/* last weekday: 2026-01-31 is a Saturday, so Friday 30th */
	{ "0 0 12 LW * ?", "UTC", "2026-01-01T00:00:00Z",
	  { "2026-01-30T12:00:00+00:00", "2026-02-27T12:00:00+00:00", "2026-03-31T12:00:00+00:00",
	    "2026-04-30T12:00:00+00:00" } },
	/* weekday nearest the 15th: Sunday 2026-02-15 gives Monday 16th */
	{ "0 0 12 15W * ?", "UTC", "2026-01-01T00:00:00Z",
	  { "2026-01-15T12:00:00+00:00", "2026-02-16T12:00:00+00:00", "2026-03-16T12:00:00+00:00",
	    "2026-04-15T12:00:00+00:00" } },
	/* 1W never leaves the month: Sunday 2026-02-01 gives Monday 2nd */
	{ "0 0 12 1W * ?", "UTC", "2026-01-01T00:00:00Z",
	  { "2026-01-01T12:00:00+00:00", "2026-02-02T12:00:00+00:00", "2026-03-02T12:00:00+00:00",
	    "2026-04-01T12:00:00+00:00" } },
	/* 31W: Sunday 2026-05-31 gives Friday 29th; 30-day months have no 31st */
	{ "0 0 12 31W * ?", "UTC", "2026-05-01T00:00:00Z",
	  { "2026-05-29T12:00:00+00:00", "2026-07-31T12:00:00+00:00", "2026-08-31T12:00:00+00:00" } },
	/* third Friday */
	{ "0 0 12 ? * 6#3", "America/New_York", "2026-01-01T00:00:00",
	  { "2026-01-16T12:00:00-05:00", "2026-02-20T12:00:00-05:00", "2026-03-20T12:00:00-04:00" } },
	/* fifth Monday: only in months that have one */
	{ "0 0 12 ? * MON#5", "UTC", "2026-01-01T00:00:00Z",
	  { "2026-03-30T12:00:00+00:00", "2026-06-29T12:00:00+00:00", "2026-08-31T12:00:00+00:00" } },
	/* last Thursday */
	{ "0 0 12 ? * 5L", "UTC", "2026-01-01T00:00:00Z",
	  { "2026-01-29T12:00:00+00:00", "2026-02-26T12:00:00+00:00", "2026-03-26T12:00:00+00:00" } },
	/* last Friday, by name */
	{ "0 0 12 ? * FRIL", "Asia/Kolkata", "2026-01-01T00:00:00",
	  { "2026-01-30T12:00:00+05:30", "2026-02-27T12:00:00+05:30", "2026-03-27T12:00:00+05:30" } },
	/* years with a step, then never */
	{ "0 0 0 1 1 ? 2030-2040/5", "UTC", "2025-06-01T00:00:00Z",
	  { "2030-01-01T00:00:00+00:00", "2035-01-01T00:00:00+00:00", "2040-01-01T00:00:00+00:00",
	    "never" } },
	/* a single year */
	{ "0 15 10 ? * MON-FRI 2026", "Europe/London", "2026-12-30T00:00:00",
	  { "2026-12-30T10:15:00+00:00", "2026-12-31T10:15:00+00:00", "never" } },
	/* steps: 0/15 */
	{ "0/15 * * * * ?", "UTC", "2026-01-01T00:00:50Z",
	  { "2026-01-01T00:01:00+00:00", "2026-01-01T00:01:15+00:00", "2026-01-01T00:01:30+00:00",
	    "2026-01-01T00:01:45+00:00" } },
	/* a range with a step */
	{ "0 10-40/10 * * * ?", "UTC", "2026-01-01T00:35:00Z",
	  { "2026-01-01T00:40:00+00:00", "2026-01-01T01:10:00+00:00", "2026-01-01T01:20:00+00:00",
	    "2026-01-01T01:30:00+00:00" } },
	/* every 20 seconds (*\/20) across midnight */
	{ "*/20 * * * * ?", "UTC", "2026-01-01T23:59:30Z",
	  { "2026-01-01T23:59:40+00:00", "2026-01-02T00:00:00+00:00", "2026-01-02T00:00:20+00:00" } },
	/* a range that wraps past midnight */
	{ "0 0 22-2 * * ?", "UTC", "2026-01-01T20:00:00Z",
	  { "2026-01-01T22:00:00+00:00", "2026-01-01T23:00:00+00:00", "2026-01-02T00:00:00+00:00",
	    "2026-01-02T01:00:00+00:00", "2026-01-02T02:00:00+00:00", "2026-01-02T22:00:00+00:00" } },
	/* 1/10 in day-of-month: 1, 11, 21, 31 */
	{ "0 0 12 1/10 * ?", "UTC", "2026-01-25T00:00:00Z",
	  { "2026-01-31T12:00:00+00:00", "2026-02-01T12:00:00+00:00", "2026-02-11T12:00:00+00:00",
	    "2026-02-21T12:00:00+00:00" } },
	/* month and day names */
	{ "0 0 9 ? JAN,JUL MON-FRI", "UTC", "2026-01-29T00:00:00Z",
	  { "2026-01-29T09:00:00+00:00", "2026-01-30T09:00:00+00:00", "2026-07-01T09:00:00+00:00",
	    "2026-07-02T09:00:00+00:00" } },
	/* lower-case names, a month range that wraps */
	{ "0 0 0 ? nov-feb sun", "UTC", "2026-02-20T00:00:00Z",
	  { "2026-02-22T00:00:00+00:00", "2026-11-01T00:00:00+00:00", "2026-11-08T00:00:00+00:00" } },
	/* Lord Howe springs forward half an hour at 02:00: 02:00 is skipped */
	{ "0 0 2 * * ?", "Australia/Lord_Howe", "2025-10-04T00:00:00",
	  { "2025-10-04T02:00:00+10:30", "2025-10-06T02:00:00+11:00", "2025-10-07T02:00:00+11:00" } },
	/* never */
	{ "0 0 0 30 2 ?", "UTC", "2026-01-01T00:00:00Z",
	  { "never" } },
	/* only in the past */
	{ "0 0 0 1 1 ? 2020", "UTC", "2026-01-01T00:00:00Z",
	  { "never" } },
	/* Quartz ignores the L after a range: SUN-THU */
	{ "0 0 12 ? * 1-5L", "UTC", "2026-01-01T00:00:00Z",
	  { "2026-01-01T12:00:00+00:00", "2026-01-04T12:00:00+00:00", "2026-01-05T12:00:00+00:00" } },
	/* Quartz ignores fields after the year */
	{ "0 0 12 * * ? 2030 extra fields", "UTC", "2026-01-01T00:00:00Z",
	  { "2030-01-01T12:00:00+00:00", "2030-01-02T12:00:00+00:00" } },
};

static const struct cron_bad_case cron_bad[] = {
	{ "0 0 24 * * ?", 5, "hours: value 24 out of range 0-23" },
	{ "0 0/5 24 * * ?", 7, "hours: value 24 out of range 0-23" },
	{ "60 * * * * ?", 1, "seconds: value 60 out of range 0-59" },
	{ "0 60 * * * ?", 3, "minutes: value 60 out of range 0-59" },
	{ "0 0 0 32 * ?", 7, "day-of-month: value 32 out of range 1-31" },
	{ "0 0 0 0 * ?", 7, "day-of-month: value 0 out of range 1-31" },
	{ "0 0 0 1 13 ?", 9, "month: value 13 out of range 1-12" },
	{ "0 0 0 ? * 8", 11, "day-of-week: value 8 out of range 1-7" },
	{ "0 0 0 ? * 0", 11, "day-of-week: value 0 out of range 1-7" },
	{ "0 0 0 * * *", 11,
	  "day-of-month and day-of-week both have values: make one of them '?' (e.g. '0 0 "
	  "12 ? * MON' or '0 0 12 1 * ?')" },
	{ "0 0 0 ? * ?", 11,
	  "day-of-week: '?' cannot be in both day-of-month and day-of-week; give one of "
	  "them a value" },
	{ "0 0 0 * *", 10,
	  "5 fields, need at least 6: seconds minutes hours day-of-month month day-of-week "
	  "[year]" },
	{ "", 1,
	  "0 fields, need at least 6: seconds minutes hours day-of-month month day-of-week "
	  "[year]" },
	{ "0 0 0 L,5 * ?", 7, "day-of-month: 'L' cannot be combined with other values in a list" },
	{ "0 0 0 ? * 1#2,3#4", 11, "day-of-week: only one '#' value is allowed" },
	{ "0 0 0 ? * 6#6", 13, "day-of-week: '#' must be followed by a number 1-5 (got '6')" },
	{ "0 0 0 ? * FOO", 11, "day-of-week: 'FOO' is not a day name (SUN-SAT)" },
	{ "0 0 0 ? FOO *", 9, "month: 'FOO' is not a month name (JAN-DEC)" },
	{ "0 0 ABC * * ?", 5, "hours: names are not allowed here ('ABC')" },
	{ "0 0 0 L-31 * ?", 7,
	  "day-of-month: offset from the last day must be at most 30 (got 31)" },
	{ "0 0 0 5L * ?", 8, "day-of-month: 'L' after a number is only allowed in day-of-week" },
	{ "0 0 5W * * ?", 6, "hours: 'W' is only allowed in day-of-month" },
	{ "0 0 0 ? * 5W", 12, "day-of-week: 'W' is only allowed in day-of-month" },
	{ "0 0 0 32W * ?", 7, "day-of-month: value 32 out of range 1-31" },
	{ "*/60 * * * * ?", 3, "seconds: step 60 too large (at most 59)" },
	{ "0 0 12 * * ? 2030-2020", 14, "year: range 2030-2020 runs backwards" },
	{ "0 0 12 * * ? 2200/5", 14, "year: 2200 is after the last year Quartz schedules (2199)" },
	{ "0 0 12 # * ?", 8, "day-of-month: unexpected '#'" },
	{ "0 0 12 ? * MON-", 15, "day-of-week: a day name (SUN-SAT) must follow '-'" },
	{ "0 0 12 1- * ?", 10, "day-of-month: number expected after '1-'" },
	{ "0 0 12 ? * MON ?", 16, "year: '?' is only allowed in day-of-month or day-of-week" },
	{ "0 0 12 ??? * MON", 9, "day-of-month: '?' must stand alone" },
	{ "0 0 5/x * * ?", 7, "hours: number expected at 'X'" },
	{ "0 0 5/1x * * ?", 8, "hours: unexpected 'X' after the step" },
	{ "0 0 0 1-5/ * ?", 11, "day-of-month: number expected after '1-5/'" },
	{ "0 0 1-2 * * ? 99999999999", 16, "year: number too large" },
	{ "0 0 0 ? * 9L", 11, "day-of-week: value 9 out of range 1-7" },
	{ "0 0 12 * JA ?", 10, "month: 'JA' is not a valid value" },
	{ "0 0 12 1,,L * ?", 8,
	  "day-of-month: 'L' cannot be combined with other values in a list" },
	{ "0 0 12 * * ? \xff", 14, "invalid UTF-8" },
	{ "0 0 12 \xc3\x9f * ?", 8, "day-of-month: 'SS' is not a valid value" },
};

#endif
