/* tools/ejobctl_cron.c: `ejobctl cron 'EXPR' [--tz ZONE] [--from TIME] [-n COUNT] [--epoch]`
 * prints the next fire times of a Quartz cron expression, as the supervisor will compute them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cron/cron.h"
#include "cron/tz.h"
#include "tools/ejobctl.h"

ejobctl_cmd_fn ejobctl_cron;

#define DEFAULT_COUNT 10
#define MAX_COUNT 100000

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl cron 'EXPR' [--tz ZONE] [--from TIME] [-n COUNT] [--epoch]\n"
	        "\n"
	        "Print the next COUNT (default %d) fire times of the Quartz cron expression EXPR,\n"
	        "one per line, as ISO 8601 with the zone's offset, or as epoch seconds with --epoch.\n"
	        "\n"
	        "  EXPR         SEC MIN HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK [YEAR], e.g. '0 0/5 * * * ?'\n"
	        "  --tz ZONE    time zone of the schedule (default: TZ, else /etc/localtime, else UTC)\n"
	        "  --from TIME  start after TIME: ISO 8601 (2026-03-29T01:30:00+01:00, ...Z, or without\n"
	        "               an offset for a local time in ZONE) or epoch seconds (default: now)\n"
	        "  -n COUNT     how many fire times (1-%d)\n"
	        "  --epoch      print epoch seconds instead of ISO 8601\n"
	        "\n"
	        "A bad expression is shown with a caret under the bad column; exit status 2.\n"
	        "See docs/cron.md for the syntax.\n",
	        DEFAULT_COUNT, MAX_COUNT);
}

/* The expression with a caret under (1-based, in characters) column: tabs are kept so that
 * the caret lines up, other control characters are shown as '?'. */
static void show_caret(const char *expr, int column)
{
	fputs("  ", stderr);
	for (const unsigned char *p = (const unsigned char *)expr; *p; p++)
		fputc(*p < 0x20 && *p != '\t' ? '?' : *p, stderr);
	fputs("\n  ", stderr);
	int col = 1;
	for (const unsigned char *p = (const unsigned char *)expr; *p && col < column; p++) {
		if ((*p & 0xC0) == 0x80)
			continue; /* a UTF-8 continuation byte: same character */
		fputc(*p == '\t' ? '\t' : ' ', stderr);
		col++;
	}
	for (; col < column; col++)
		fputc(' ', stderr);
	fputs("^\n", stderr);
}

static int parse_count(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > MAX_COUNT)
		return -1;
	*out = v;
	return 0;
}

/* TIME: epoch seconds (optionally negative) or ISO 8601. */
static int parse_from(const tz_t *tz, const char *s, int64_t *t)
{
	const char *p = s + (*s == '-');
	if (*p && strspn(p, "0123456789") == strlen(p)) {
		char *end;
		errno = 0;
		long long v = strtoll(s, &end, 10);
		if (errno)
			return -1;
		*t = v;
		return 0;
	}
	return tz_parse_iso(tz, s, t);
}

static int current_year(void)
{
	int64_t y;
	int m, d;
	tz_civil_from_days((int64_t)time(NULL) / 86400, &y, &m, &d);
	return (int)y;
}

int ejobctl_cron(int argc, char **argv)
{
	const char *expr = NULL, *zone = NULL, *from = NULL;
	long count = DEFAULT_COUNT;
	int epoch = 0, opts_done = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (!opts_done && (!strcmp(a, "--help") || !strcmp(a, "-h"))) {
			usage(stdout);
			return 0;
		}
		if (!opts_done && !strcmp(a, "--")) {
			opts_done = 1;
			continue;
		}
		if (!opts_done && (!strcmp(a, "--tz") || !strcmp(a, "--from") || !strcmp(a, "-n"))) {
			if (i + 1 >= argc) {
				fprintf(stderr, "ejobctl cron: %s needs a value\n", a);
				return 2;
			}
			val = argv[++i];
		} else if (!opts_done && !strncmp(a, "--tz=", 5)) {
			val = a + 5, a = "--tz";
		} else if (!opts_done && !strncmp(a, "--from=", 7)) {
			val = a + 7, a = "--from";
		}
		if (val) {
			if (!strcmp(a, "--tz"))
				zone = val;
			else if (!strcmp(a, "--from"))
				from = val;
			else if (parse_count(val, &count) < 0) {
				fprintf(stderr, "ejobctl cron: -n wants a number from 1 to %d, not '%s'\n",
				        MAX_COUNT, val);
				return 2;
			}
		} else if (!opts_done && !strcmp(a, "--epoch")) {
			epoch = 1;
		} else if (!opts_done && a[0] == '-' && a[1]) {
			fprintf(stderr, "ejobctl cron: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		} else if (!expr) {
			expr = a;
		} else {
			fprintf(stderr, "ejobctl cron: one expression only (quote it: 'ejobctl cron "
			        "\"0 0 12 * * ?\"'); extra argument '%s'\n", a);
			return 2;
		}
	}
	if (!expr) {
		usage(stderr);
		return 2;
	}

	tz_err_t terr;
	tz_t *tz = zone ? tz_load(zone, &terr) : tz_load_default(&terr);
	if (!tz) {
		fprintf(stderr, "ejobctl cron: %s\n", terr.msg);
		return errno == ENOMEM ? 1 : 2;
	}
	int64_t t;
	if (!from) {
		t = (int64_t)time(NULL);
	} else if (parse_from(tz, from, &t) < 0) {
		fprintf(stderr, "ejobctl cron: --from '%s': not a time; use ISO 8601 such as "
		        "2026-03-29T01:30:00+01:00, 2026-03-29T00:30:00Z or 2026-03-29T01:30:00 (in "
		        "the --tz zone), or epoch seconds\n", from);
		tz_free(tz);
		return 2;
	}
	cron_err_t cerr;
	cron_t *c = cron_parse_max_year(expr, current_year() + 100, &cerr);
	if (!c) {
		int rc = errno == ENOMEM ? 1 : 2;
		fprintf(stderr, "ejobctl cron: bad expression\n");
		show_caret(expr, cerr.column);
		fprintf(stderr, "column %d: %s\n", cerr.column, cerr.msg);
		tz_free(tz);
		return rc;
	}
	int64_t start = t;
	char buf[64];
	for (long i = 0; i < count; i++) {
		t = cron_next(c, tz, t);
		if (t < 0) {
			tz_format_iso(tz, start, buf, sizeof buf);
			if (i == 0)
				printf("no fire time after %s: the expression never fires again\n", buf);
			else
				printf("no more fire times: the expression never fires again\n");
			break;
		}
		if (epoch)
			printf("%lld\n", (long long)t);
		else if (tz_format_iso(tz, t, buf, sizeof buf) >= 0)
			printf("%s\n", buf);
	}
	cron_free(c);
	tz_free(tz);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ejobctl cron: writing the output failed\n");
		return 1;
	}
	return 0;
}
