/* t/129-dlib.c: the libraries a feature needs are loaded when it is configured, and only then
 * (supervisor/base/dlib.h): libmicrohttpd for supervisor.metrics, libcurl for an error handler,
 * libpq for tracing. Linked at start, they and what they pull in cost every supervisor 3.7 MB.
 *   - dlib_need on a library that is not there, or that lacks a function: -1, and the error names
 *     the file and the Debian package to install;
 *   - a real supervisor (--standalone) with none of the three configured has none of them (nor
 *     GnuTLS, OpenSSL's libssl, Kerberos) mapped, and runs its job;
 *   - with metrics, an error handler whose receiver is away and tracing to a PostgreSQL that is
 *     away, each is mapped (read from /proc/PID/maps) and works: /metrics answers, and counts the
 *     handler's failed messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervisor/base/dlib.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"
#include <signal.h>

static int mapped(pid_t pid, const char *lib)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%d/maps", (int)pid);
	char *m = tsup_slurp(p);
	int yes = m && strstr(m, lib) != NULL;
	free(m);
	return yes;
}

struct lib_wait { pid_t pid; const char *lib; };

static int is_mapped(void *arg)
{
	const struct lib_wait *w = arg;
	return mapped(w->pid, w->lib);
}

static void test_unit(void)
{
	static const char *const names[] = { "strlen" };
	static const char *const bad[] = { "strlen", "ejob_no_such_function" };
	void *fn[2];
	struct dlib none = { "libejob-t129-absent.so.0", "libejob-t129", names, 1, fn, 0, "" };
	int r = dlib_need(&none);
	ok(r == -1 && strstr(dlib_error(&none), "cannot load libejob-t129-absent.so.0") &&
	   strstr(dlib_error(&none), "install Debian's libejob-t129"), "a library that is not there: %s", dlib_error(&none));
	ok(dlib_need(&none) == -1, "  and again (tried once)");
	struct dlib lacks = { "libc.so.6", "libc6", bad, 2, fn, 0, "" };
	r = dlib_need(&lacks);
	ok(r == -1 && strstr(dlib_error(&lacks), "libc.so.6 has no ejob_no_such_function"),
	   "a library without a function: %s", dlib_error(&lacks));
	struct dlib has = { "libc.so.6", "libc6", names, 1, fn, 0, "" };
	ok(dlib_need(&has) == 0 && fn[0] != NULL, "a library with its functions: loaded, each found");
}

int main(void)
{
	tlib_init(90);             /* its supervisors are killed at exit, also when it fails */
	plan(10);
	test_unit();

	char sh[800], runs[600];
	snprintf(runs, sizeof runs, "%s/runs", tlib_tmpdir());
	snprintf(sh, sizeof sh, "%s/fail.sh", tlib_tmpdir());
	FILE *f = fopen(sh, "w");
	if (!f) BAIL_OUT("%s: cannot write", sh);
	fprintf(f, "#!/bin/sh\necho 0 >> %s\nexit 1\n", runs);
	fclose(f);
	chmod(sh, 0755);
	char yaml[2048];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t129}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 0, killGraceSeconds: 1}\n"
	         "jobs:\n"
	         "  a: {type: script, cron: \"* * * * * ?\", shardingTotalCount: 1, props: {script.command.line: \"%s\"}}\n",
	         sh);
	struct tsup t;
	tsup_config(&t, "plain", yaml);
	const char *args[] = { "--standalone", NULL };
	if (tsup_start(&t, args) < 0) BAIL_OUT("cannot start the supervisor");
	if (tsup_wait_lines(runs, "0", 1, 10000) < 1) tsup_die("plain", &t, "its job did not run");
	const char *libs[] = { "libmicrohttpd", "libcurl", "libpq", "libgnutls", "libssl", "libkrb5" };
	char said[256] = "";
	for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++)
		if (mapped(t.pid, libs[i])) snprintf(said + strlen(said), sizeof said - strlen(said), " %s", libs[i]);
	ok(!said[0], "nothing configured that needs them: none of them mapped, and the job runs (mapped:%s)",
	   said[0] ? said : " none");
	tsup_stop(&t, SIGTERM, 10000);

	int port = tzk_free_port(), away = tzk_free_port(), pg = tzk_free_port();
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t129}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 0, killGraceSeconds: 1, metrics: \"127.0.0.1:%d\"}\n"
	         "tracing: {type: RDB, url: \"jdbc:postgresql://127.0.0.1:%d/postgres\", username: postgres, "
	         "spoolDir: \"@DIR@/spool\"}\n"
	         "jobs:\n"
	         "  a: {type: script, cron: \"* * * * * ?\", shardingTotalCount: 1, jobErrorHandlerType: WEBHOOK,\n"
	         "      props: {script.command.line: \"%s\", webhook.url: \"http://127.0.0.1:%d/x\"}}\n",
	         port, pg, sh, away);
	struct tsup u;
	tsup_config(&u, "all", yaml);
	if (tsup_start(&u, args) < 0) BAIL_OUT("cannot start the supervisor");
	struct lib_wait w = { u.pid, "libmicrohttpd" };
	ok(tlib_wait_for(is_mapped, &w, 10000), "metrics configured: libmicrohttpd mapped");
	char *body = NULL;
	int code = -1;
	for (int k = 0; k < 50 && code != 200; k++) {
		free(body);
		body = NULL;
		code = tlib_http_get(port, "/metrics", &body);
		if (code != 200) usleep(100000);
	}
	ok(code == 200 && body && strstr(body, "ejob_"), "  and /metrics answers (%d)", code);
	free(body);
	w.lib = "libcurl";
	ok(tlib_wait_for(is_mapped, &w, 10000), "an error handler whose job fails: libcurl mapped");
	struct tlib_metric_min mm = { port, "ejob_error_handler_messages_total{type=\"WEBHOOK\",result=\"failed\"}", 1 };
	int counted = tlib_wait_for(tlib_metric_at_least, &mm, 20000);
	ok(counted, "  and its messages to a receiver that is away are counted failed (%ld)", tlib_metric(port, mm.series));
	w.lib = "libpq";
	ok(tlib_wait_for(is_mapped, &w, 10000), "tracing configured: libpq mapped (its PostgreSQL away: the rows spooled)");
	tsup_stop(&u, SIGTERM, 10000);
	return done_testing();
}
