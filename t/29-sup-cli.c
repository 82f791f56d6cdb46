/* t/29-sup-cli.c: ejob-supervisor's command line: help, version, usage errors, configuration
 * errors (every one, file:line:column, exit 2), a missing worker binary; the keys this version
 * does not act on are warned about at start and at reload. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ipc/version.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/tap.h"

static char *out, *err;

static int sup(const char *a, const char *b, const char *c, const char *d)
{
	const char *argv[] = { BUILT("supervisor/ejob-supervisor"), a, b, c, d, NULL };
	free(out);
	free(err);
	int st = tlib_run(argv, &out, &err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(void)
{
	tlib_init(60);
	plan(29);
	is_int(sup("--help", NULL, NULL, NULL), 0, "--help exits 0");
	ok(strstr(out, "usage: ejob-supervisor [-c FILE] [--workers N]") && strstr(out, "--run JOB[:ITEM,ITEM...]"),
	   "and shows the usage, --run included");
	is_int(sup("--version", NULL, NULL, NULL), 0, "--version exits 0");
	is_str(out, "ejob " EJOB_VERSION "\n", "and prints 'ejob X.Y.Z', as every ejob binary");
	is_int(sup(NULL, NULL, NULL, NULL), 2, "no -c: exit 2");
	is_str(err, "ejob-supervisor: no configuration: give -c FILE (docs/config.md)\n", "  saying what is missing");
	is_int(sup("--bogus", NULL, NULL, NULL), 2, "unknown option: exit 2");
	is_str(err, "ejob-supervisor: unknown option '--bogus'; see --help\n", "  naming it");
	is_int(sup("-c", "x", "--workers", "0"), 2, "--workers 0: exit 2");
	is_str(err, "ejob-supervisor: --workers: '0' is not a number in 1-1024\n", "  with the range");
	is_int(sup("-c", "x", "--log-level", "loud"), 2, "bad --log-level: exit 2");

	struct tsup t;
	tsup_config(&t, "bad",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t29}\n"
	            "jobs:\n"
	            "  a:\n"
	            "    type: script\n"
	            "    cron: \"0 0 25 * * ?\"\n"
	            "    shardingTotalCount: 2\n"
	            "    props: {script.command.line: x}\n"
	            "  b:\n"
	            "    type: nativ\n"
	            "    cron: \"0 0 * * * ?\"\n"
	            "    shardingTotalCount: 2\n");
	is_int(sup("-c", t.conf, NULL, NULL), 2, "a configuration with errors: exit 2");
	int lines = 0;
	for (char *c = err; *c; c++) lines += *c == '\n';
	ok(lines >= 2, "every error is reported (%d lines)", lines);
	char want[1400];
	snprintf(want, sizeof want, "%s:5:", t.conf);
	ok(strstr(err, want) && strstr(err, "jobs.a.cron:"), "the bad hour, by file:line and key");
	snprintf(want, sizeof want, "%s:9:", t.conf);
	ok(strstr(err, want) && strstr(err, "jobs.b.type:"), "the bad type, by file:line and key");
	is_int(sup("-c", "/nonexistent/ejob.yaml", NULL, NULL), 2, "a missing file: exit 2");

	tsup_config(&t, "nobin",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t29b}\n"
	            "jobs: {}\n");
	is_int(sup("-c", t.conf, "--worker-bin", "/nonexistent/ejob-worker"), 2, "a missing worker binary: exit 2");
	ok(strstr(err, "worker binary /nonexistent/ejob-worker: No such file or directory: build it (make), or name it "
	               "with --worker-bin or $EJOB_WORKER_BIN"),
	   "saying what to do");
	/* keys accepted but not acted on: a WARN naming each, at start; LOG (what ejob does) is fine */
	tsup_config(&t, "unacted",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t29d}\n"
	            "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	            "jobs:\n"
	            "  a:\n"
	            "    type: script\n"
	            "    cron: \"0 0 * * * ?\"\n"
	            "    shardingTotalCount: 1\n"
	            "    jobErrorHandlerType: THROW\n"
	            "    jobListenerTypes: [audit, metrics]\n"
	            "    props: {script.command.line: /bin/true}\n"
	            "  b:\n"
	            "    type: script\n"
	            "    cron: \"0 0 * * * ?\"\n"
	            "    shardingTotalCount: 1\n"
	            "    jobErrorHandlerType: LOG\n"
	            "    jobListenerTypes: []\n"
	            "    props: {script.command.line: /bin/true}\n");
	const char *run_a[] = { "--run", "a", NULL };
	int st = tsup_run(&t, run_a, 20000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a job with keys not acted on still runs (exit 0)");
	snprintf(want, sizeof want, " WARN %s:4: jobs.a.jobErrorHandlerType: THROW has no meaning outside Java (ElasticJob "
	         "rethrows the exception to its caller): ejob treats it as LOG, a failed item is logged\n", t.conf);
	is_int(tsup_log_count(&t, want), 1, "the start logs a WARN naming jobErrorHandlerType THROW and what ejob does");
	snprintf(want, sizeof want, " WARN %s:4: jobs.a.jobListenerTypes: [audit, metrics] are not acted on by this "
	         "version of ejob (only published for ElasticJob's tools): ElasticJob's listener classes do not run here; ejob's listeners are the ejob.listener.* props\n", t.conf);
	is_int(tsup_log_count(&t, want), 1, "  and one naming jobListenerTypes");
	is_int(tsup_log_count(&t, " WARN "), 2, "  and no other (LOG and an empty list are what ejob does)");

	/* no attachSocket: the path ejob_attach() computes (docs/worker.md), not /run/ejob/... (which
	 * only root may create); here $EJOB_RUNTIME_DIR */
	tsup_config(&t, "defsock",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t29e}\n"
	            "supervisor: {workers: 1}\n"
	            "jobs:\n  a: {type: script, cron: \"0 0 * * * ?\", shardingTotalCount: 1, props: {script.command.line: /bin/true}}\n");
	setenv("EJOB_RUNTIME_DIR", t.dir, 1);
	st = tsup_run(&t, run_a, 20000);
	unsetenv("EJOB_RUNTIME_DIR");
	snprintf(want, sizeof want, "attach: external workers attach on %s/t29e.sock\n", t.dir);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && tsup_log_count(&t, want) == 1,
	   "no attachSocket: the socket is $EJOB_RUNTIME_DIR/NAMESPACE.sock, as external workers look for it");

	/* SIGHUP: a broken file leaves the running configuration alone; a good one replaces it */
	tsup_config(&t, "hup",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t29c}\n"
	            "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	            "jobs: {}\n");
	tsup_start(&t, NULL);
	ok(tsup_wait_listening(&t, 5000) && tsup_wait_handles(&t, SIGHUP, 5000), "a supervisor running, taking SIGHUP");
	tlib_write_file(t.conf, "jobs: [not, a, map\n", 19);
	kill(t.pid, SIGHUP);
	ok(tsup_wait_log(&t, "reload failed; keeping the previous configuration", 1, 5000), "SIGHUP with a broken file: kept");
	ok(tsup_log_count(&t, "ejob.yaml:") >= 1, "  and the log names the file and the problem");
	char good[600];
	int gl = snprintf(good, sizeof good,
	                  "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t29c}\n"
	                  "supervisor: {workers: 1, attachSocket: \"%s\"}\n"
	                  "jobs:\n  j: {type: external, cron: \"0 0 * * * ?\", shardingTotalCount: 1,\n"
	                  "      jobErrorHandlerType: THROW}\n", t.sock);
	tlib_write_file(t.conf, good, (size_t)gl);
	kill(t.pid, SIGHUP);
	ok(tsup_wait_log(&t, "configuration reloaded: 1 job", 1, 5000), "SIGHUP with a good file: reloaded");
	snprintf(want, sizeof want, " WARN %s:4: jobs.j.jobErrorHandlerType: THROW has no meaning outside Java",
	         t.conf);
	is_int(tsup_log_count(&t, want), 1, "  with a WARN for a key it does not act on");
	st = tsup_stop(&t, SIGTERM, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "and it still stops cleanly");
	free(out);
	free(err);
	return done_testing();
}
