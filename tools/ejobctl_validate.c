/* tools/ejobctl_validate.c: ejobctl validate FILE: check a configuration file.
 *
 * Prints every error (stderr), or "ok" and one line per job (stdout): its name, type, cron,
 * next fire time in the job's zone (ISO-8601 with the offset; a one-off job: "one-off (no
 * cron), next on trigger"; a job in a workflow: "after a, b (dependsOn)") and its shard items;
 * and, on stderr, a warning for what a valid file holds that will not act as written (keys this version
 * does not act on; a script's program or a native library that cannot be found from here).
 * Exit 0 valid, 2 invalid, missing or unreadable (or usage), 1 out of memory or stdout failing.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/conf.h"
#include "cron/cron.h"
#include "cron/tz.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_paths.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ejobctl validate [--now EPOCH] FILE   (or -c FILE)\n\n"
	        "Checks an ejob configuration file. Prints every error, or 'ok' and one line per\n"
	        "job: name, type, cron, next fire time in the job's zone, shard items.\n"
	        "--now EPOCH: compute the next fire time after this Unix time instead of now.\n"
	        "Warnings (stderr) name what a valid file holds that will not act as written; they\n"
	        "do not change the exit status.\n"
	        "Exit status: 0 valid, 2 invalid or the file cannot be read (a configuration problem,\n"
	        "as for the supervisor).\n");
}

/* "2026-11-21T09:30:00+08:00" for t seconds with the zone's offset (seconds east of UTC). */
static void iso8601(char *out, size_t n, int64_t t, int32_t offset)
{
	time_t local = (time_t)(t + offset);
	struct tm tm;
	gmtime_r(&local, &tm);
	int off = offset < 0 ? -offset : offset;
	/* out is sized for any year time_t holds; the seconds of the offset are dropped, as in
	 * ISO 8601's +hh:mm (no zone in use today has any) */
	int r = snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", tm.tm_year + 1900,
	                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	                 offset < 0 ? '-' : '+', off / 3600, off / 60 % 60);
	if (r < 0 || (size_t)r >= n) snprintf(out, n, "?");
}

/* The next fire time of a job after now, in its zone, as text; the zone's name into zone.
 * The cron and zone are what validation made (conf_opts_system loads zones); the year limit
 * is Quartz's: the current year + 100 (docs/cron.md). */
static void next_fire(const conf_job_t *j, int64_t now, char *out, size_t n, char *zone, size_t zn)
{
	tz_err_t terr;
	cron_err_t cerr;
	tz_t *local = NULL;
	const tz_t *tz = j->time_zone ? j->tz : (local = tz_load_default(&terr));
	if (!tz) {
		snprintf(out, n, "unknown (%s)", j->time_zone ? "the zone was not loaded" : terr.msg);
		snprintf(zone, zn, "%s", j->time_zone ? j->time_zone : "local time");
		return;
	}
	if (j->time_zone) snprintf(zone, zn, "%s", j->time_zone);
	else snprintf(zone, zn, "local time, %s", tz_name(tz));
	time_t t = (time_t)now;
	struct tm tm;
	gmtime_r(&t, &tm);
	cron_t *c = cron_with_max_year(j->cron_compiled, tm.tm_year + 1900 + 100, &cerr);
	int64_t next = c ? cron_next(c, tz, now) : -1;
	if (!c) snprintf(out, n, "unknown (%s)", cerr.msg);
	else if (next < 0) snprintf(out, n, "never");
	else iso8601(out, n, next, tz_offset_at(tz, next));
	cron_free(c);
	tz_free(local);
}

/* What a valid file may still hold that will not work as its author expects: warnings on
 * stderr, "FILE:LINE: warning: KEY: why" (LINE: the job's); the exit status stays 0. A program
 * or library that is not here may well be on the machines that run the job: a warning, not an
 * error. */
static void warn_job(const char *file, const conf_job_t *j)
{
	conf_unacted_t u[CONF_UNACTED_MAX];
	size_t n = conf_job_unacted(j, u);
	for (size_t k = 0; k < n; k++)
		fprintf(stderr, "%s:%u: warning: jobs.%s.%s: %s\n", file, j->line, j->name, u[k].key, u[k].text);
	char why[PATH_MAX * 2 + 512];
	if (j->type == CONF_JOB_SCRIPT && j->script_command_line &&
	    ejobctl_script_problem(j->script_command_line, why, sizeof why))
		fprintf(stderr, "%s:%u: warning: jobs.%s.props.script.command.line: %s\n", file, j->line, j->name, why);
	if ((j->type == CONF_JOB_NATIVE || j->type == CONF_JOB_DATAFLOW) && j->native.library &&
	    ejobctl_library_problem(j->native.library, why, sizeof why))
		fprintf(stderr, "%s:%u: warning: jobs.%s.props.native.library: %s\n", file, j->line, j->name, why);
	if (j->type == CONF_JOB_HTTP && j->http.ca_file && ejobctl_ca_file_problem(j->http.ca_file, why, sizeof why))
		fprintf(stderr, "%s:%u: warning: jobs.%s.props.http.ca.file: %s\n", file, j->line, j->name, why);
	/* the listeners' commands are split and found as a script job's */
	const struct { const char *key, *cmd; } ls[] = {
		{ "ejob.listener.before", j->listener.before },
		{ "ejob.listener.after", j->listener.after },
		{ "ejob.listener.beforeAll", j->listener.before_all },
		{ "ejob.listener.afterAll", j->listener.after_all },
	};
	for (size_t k = 0; k < sizeof ls / sizeof ls[0]; k++)
		if (ls[k].cmd && ejobctl_script_problem(ls[k].cmd, why, sizeof why))
			fprintf(stderr, "%s:%u: warning: jobs.%s.props.%s: %s\n", file, j->line, j->name, ls[k].key, why);
}

int ejobctl_validate(int argc, char **argv)
{
	const char *file = NULL;
	int64_t now = (int64_t)time(NULL);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--now") && i + 1 < argc) {
			char *end;
			errno = 0;
			long long v = strtoll(argv[++i], &end, 10);
			if (errno || *end || end == argv[i]) {
				fprintf(stderr, "ejobctl validate: --now takes a Unix time in seconds (got '%s')\n",
				        argv[i]);
				return 2;
			}
			now = v;
		} else if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--config")) && i + 1 < argc && !file) {
			file = argv[++i];           /* as the other commands name the file: ejobctl -c FILE validate */
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "ejobctl validate: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		} else if (!file) {
			file = argv[i];
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!file) {
		usage(stderr);
		return 2;
	}

	char *buf;
	size_t len;
	if (conf_read_file(file, &buf, &len) < 0) {
		fprintf(stderr, "ejobctl validate: %s: cannot read: %s\n", file, strerror(errno));
		return 2;
	}
	conf_opts_t opts;
	conf_opts_system(&opts);
	conf_diags_t *d;
	conf_t *c = conf_parse(buf, len, file, &opts, &d);
	free(buf);
	if (!c) {
		if (!d) {
			fprintf(stderr, "ejobctl validate: %s: %s\n", file, strerror(errno));
			return 1;
		}
		for (size_t i = 0; i < conf_diags_count(d); i++)
			fprintf(stderr, "%s\n", conf_diags_get(d, i)->text);
		if (conf_diags_dropped(d))
			fprintf(stderr, "%s: ... and %zu more errors\n", file, conf_diags_dropped(d));
		conf_diags_free(d);
		return 2;
	}
	for (size_t i = 0; i < conf_diags_count(d); i++)   /* the warnings */
		fprintf(stderr, "%s\n", conf_diags_get(d, i)->text);
	conf_diags_free(d);
	for (size_t i = 0; i < c->n_jobs; i++) warn_job(file, &c->jobs[i]);
	char hwhy[PATH_MAX + 512];     /* a warning: the supervisor's machine and user may differ from ours */
	if (c->supervisor.history_file && conf_history_problem(c->supervisor.history_file, hwhy, sizeof hwhy) < 0)
		fprintf(stderr, "%s: warning: supervisor.history.file: %s (a supervisor started with it here refuses to "
		        "start)\n", file, hwhy);
	printf("ok\n");
	for (size_t i = 0; i < c->n_jobs; i++) {
		const conf_job_t *j = &c->jobs[i];
		char next[640], zone[300];
		printf("%s: %s, ", j->name, conf_job_type_name(j->type));
		if (j->cron) {
			next_fire(j, now, next, sizeof next, zone, sizeof zone);
			printf("cron \"%s\" (%s), next %s", j->cron, zone, next);
		} else if (j->flow.n) {
			printf("after");
			for (size_t k = 0; k < j->flow.n; k++) printf("%s %s", k ? "," : "", j->flow.depends_on[k]);
			printf(" (dependsOn)");
		} else {
			printf("one-off (no cron), next on trigger");
		}
		printf(", %" PRIu32 " item%s%s\n", j->sharding_total_count, j->sharding_total_count == 1 ? "" : "s",
		       j->disabled ? ", disabled" : "");
	}
	conf_free(c);
	if (fflush(stdout) != 0) return 1;
	return 0;
}
