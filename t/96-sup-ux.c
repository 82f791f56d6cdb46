/* t/96-sup-ux.c: what a new user meets at the supervisor's start and on its command line: a --run of
 * a job or items that are not there is one clear line before anything starts (exit 2); a --run of
 * an external job with no worker attached gives up after --wait with the command that attaches
 * one (exit 1); --metrics logs nothing of libmicrohttpd's, and a port in use is ejob's one line
 * (exit 2); a history directory that is missing is refused at the start (exit 2) and warned about
 * by ejobctl validate, and one that goes away later shows in /healthz (503) and a metric; an attach
 * socket another supervisor listens on is exit 2 naming --socket. No ZooKeeper: everything here
 * happens before it or without it (--run, --standalone). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

static int exit_code(int st)
{
	return st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A run of t from an empty log (the log file is appended to by every run in its directory). */
static int run(struct tsup *t, const char *const *args, unsigned timeout_ms)
{
	if (truncate(t->log, 0) < 0 && errno != ENOENT) BAIL_OUT("truncate %s: %s", t->log, strerror(errno));
	return exit_code(tsup_run(t, args, timeout_ms));
}

/* lines of the supervisor's log (its stderr) */
static int log_lines(struct tsup *t)
{
	char *s = tsup_log_text(t);
	int n = 0;
	for (char *c = s; c && *c; c++) n += *c == '\n';
	free(s);
	return n;
}

static void test_run_unknown(void)
{
	struct tsup t;
	tsup_config(&t, "unknown",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t96a}\n"
	            "supervisor: {workers: 2, attachSocket: \"@SOCK@\"}\n"
	            "jobs:\n"
	            "  hello: {type: script, cron: \"0 0 * * * ?\", shardingTotalCount: 2, props: {script.command.line: /bin/true}}\n"
	            "  ext: {type: external, cron: \"0 0 * * * ?\", shardingTotalCount: 2}\n");
	char want[1200];
	const char *helo[] = { "--run", "helo", NULL };
	is_int(run(&t, helo, 10000), 2, "--run helo (no such job): exit 2");
	snprintf(want, sizeof want, "ERROR --run helo: no job 'helo' in %s; did you mean 'hello'? (its jobs: hello, ext)\n",
	         t.conf);
	is_int(tsup_log_count(&t, want), 1, "  naming the job, the closest one and the jobs there are");
	is_int(log_lines(&t), 1, "  and nothing else: no pool started, then killed with a WARN per worker");
	struct stat st;
	ok(stat(t.sock, &st) < 0, "  no attach socket was made");

	const char *seven[] = { "--run", "hello:7", NULL };
	is_int(run(&t, seven, 10000), 2, "--run hello:7 of a job of 2 items: exit 2");
	is_int(tsup_log_count(&t, "ERROR --run hello:7: item 7 is out of range (job hello has items 0-1: "
	                          "shardingTotalCount 2)\n"), 1, "  naming the job's items");
	is_int(log_lines(&t), 1, "  and nothing else");
}

static void test_run_wait(void)
{
	struct tsup t;
	tsup_config(&t, "wait",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t96b}\n"
	            "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	            "jobs:\n"
	            "  ext: {type: external, cron: \"0 0 * * * ?\", shardingTotalCount: 2}\n");
	const char *args[] = { "--run", "ext", "--wait", "1", NULL };
	uint64_t t0 = tlib_now_ms();
	int code = run(&t, args, 15000);
	uint64_t took = tlib_now_ms() - t0;
	is_int(code, 1, "--run of an external job with no worker attached, --wait 1: exit 1 (not a hang)");
	ok(took < 6000, "  within seconds of the wait (%llu ms)", (unsigned long long)took);
	char want[1600];
	snprintf(want, sizeof want, "--run: job ext is external and no worker serving it attached on %s within 1s "
	         "(--wait): start one there, a program of yours calling ejob_attach() (docs/worker.md), e.g. "
	         "'" BUILT("examples/external-worker") " --socket %s ext'", t.sock, t.sock);
	is_int(tsup_log_count(&t, want), 1, "  naming the socket and the command that attaches a worker");

	/* a worker that attaches within the wait runs the items */
	const char *run10[] = { "--run", "ext", "--wait", "10", NULL };
	tsup_start(&t, run10);
	ok(tsup_wait_listening(&t, 10000), "--run ext --wait 10: the socket listens");
	pid_t w = tlib_fork();
	if (w == 0) {
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);   /* its lines are not TAP */
		if (nul >= 0) dup2(nul, 1), dup2(nul, 2);
		execl(BUILT("examples/external-worker"), BUILT("examples/external-worker"), "--socket", t.sock, "ext", (char *)NULL);
		_exit(127);
	}
	/* (signal 0: only wait for its exit) */
	is_int(exit_code(tsup_stop(&t, 0, 15000)), 0, "  a worker attached within it: its items ran, exit 0");
	kill(w, SIGTERM);
	waitpid(w, NULL, 0);
	tlib_untrack(w);

	tsup_config(&t, "wait2",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t96b}\n"
	            "jobs: {}\n");
	const char *bare[] = { "--wait", "3", NULL };
	is_int(run(&t, bare, 10000), 2, "--wait without --run: exit 2");
	const char *bad[] = { "--run", "x", "--wait", "soon", NULL };
	is_int(run(&t, bad, 10000), 2, "--wait soon: exit 2");
	is_int(tsup_log_count(&t, "ejob-supervisor: --wait: 'soon' is not a number of seconds in 0-86400 (0: for ever)\n"),
	       1, "  saying what it takes");
}

static int health_is(void *arg)
{
	const int *want = arg;   /* {port, code} */
	char *body = NULL;
	int code = tlib_http_get(want[0], "/healthz", &body);
	free(body);
	return code == want[1];
}

static void test_metrics(void)
{
	struct tsup t;
	int port = tzk_free_port();
	char yaml[1200], addr[64];
	snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
	tsup_config(&t, "metrics",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t96c}\n"
	            "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	            "jobs:\n"
	            "  a: {type: script, cron: \"0 0 0 1 1 ? 2099\", shardingTotalCount: 1, props: {script.command.line: /bin/true}}\n");
	/* at debug, where libmicrohttpd's start-up lines go */
	const char *dbg[] = { "--standalone", "--metrics", addr, "--log-level", "debug", NULL };
	const char *args[] = { "--standalone", "--metrics", addr, NULL };
	tsup_start(&t, dbg);
	int want[2] = { port, 200 };
	ok(tlib_wait_for(health_is, want, 10000), "--metrics: /healthz answers 200");
	int st = tsup_stop(&t, SIGTERM, 10000);
	is_int(exit_code(st), 0, "  and it stops cleanly");
	is_int(tsup_log_count(&t, "MHD_OPTION_EXTERNAL_LOGGER"), 0,
	       "  libmicrohttpd's complaint about its options is gone, at debug too");
	is_int(tsup_log_count(&t, " WARN "), 0, "  a start with --metrics logs no WARN");

	/* the port taken by another process */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	ok(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 1) == 0, "another process holds %s",
	   addr);
	snprintf(yaml, sizeof yaml, "ERROR metrics: cannot listen on %s: Address already in use: another process holds the "
	         "port; stop it, or give this supervisor another address with --metrics ADDR or supervisor.metrics\n", addr);
	is_int(run(&t, args, 10000), 2, "a port in use: exit 2 (a configuration problem)");
	is_int(tsup_log_count(&t, yaml), 1, "  ejob's line, naming the address and the fix");
	is_int(tsup_log_count(&t, " ERROR ") + tsup_log_count(&t, " WARN "), 1,
	       "  and no other (libmicrohttpd's is not logged)");
	is_int(tsup_log_count(&t, "Failed to bind"), 0, "  not even as it said it");
	close(fd);
}

static void test_history(void)
{
	struct tsup t;
	int port = tzk_free_port();
	char addr[64], hdir[700], hfile[760], want[4096];
	snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
	tsup_config(&t, "history",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t96d}\n"
	            "supervisor: {workers: 2, attachSocket: \"@SOCK@\", history: {file: \"@DIR@/h/history.jsonl\", maxBytes: 4096}}\n"
	            "jobs:\n"
	            "  a: {type: script, cron: \"* * * * * ?\", shardingTotalCount: 4, props: {script.command.line: /bin/true}}\n");
	snprintf(hdir, sizeof hdir, "%s/h", t.dir);
	snprintf(hfile, sizeof hfile, "%s/history.jsonl", hdir);

	/* missing: refused at the start, warned by validate */
	const char *args[] = { "--standalone", "--metrics", addr, NULL };
	is_int(run(&t, args, 10000), 2, "a history directory that does not exist: the start is refused, exit 2");
	snprintf(want, sizeof want, "ERROR %s: supervisor.history.file: %s: directory %s does not exist: create it (mkdir -p "
	         "%s), writable by the supervisor's user, or name a file in a directory that is\n", t.conf, hfile, hdir, hdir);
	is_int(tsup_log_count(&t, want), 1, "  naming the key, the path and the fix");
	is_int(log_lines(&t), 1, "  before anything starts");
	const char *v[] = { BUILT("tools/ejobctl"), "validate", t.conf, NULL };
	char *out = NULL, *err = NULL;
	int st = tlib_run(v, &out, &err);
	is_int(exit_code(st), 0, "ejobctl validate: still valid (the supervisor's machine may differ)");
	snprintf(want, sizeof want, "%s: warning: supervisor.history.file: %s: directory %s does not exist", t.conf, hfile,
	         hdir);
	ok(err && strstr(err, want), "  with a warning naming the key and the directory");
	free(out);
	free(err);

	/* there at the start, gone later: /healthz says so, the metric counts the records lost */
	mkdir(hdir, 0755);
	tsup_start(&t, args);
	int h200[2] = { port, 200 }, h503[2] = { port, 503 };
	ok(tlib_wait_for(health_is, h200, 10000) && tsup_wait_lines(hfile, "\"job\":\"a\"", 4, 10000),
	   "the history is written, /healthz 200");
	char rm[800];
	snprintf(rm, sizeof rm, "rm -rf '%s'", hdir);
	ok(system(rm) == 0, "its directory is removed");
	/* the open file takes records until it turns (maxBytes 4096), then cannot be opened again */
	ok(tlib_wait_for(health_is, h503, 15000), "/healthz turns 503");
	char *body = NULL;
	tlib_http_get(port, "/healthz", &body);
	snprintf(want, sizeof want, "history: cannot open %s: No such file or directory; ", hfile);
	ok(body && strstr(body, want) && (strstr(body, " record lost") || strstr(body, " records lost")),
	   "  saying why and how many records were lost (%s)", body ? body : "no answer");
	free(body);
	ok(tlib_metric(port, "ejob_events_lost_total{sink=\"history\"}") > 0,
	   "ejob_events_lost_total{sink=\"history\"} counts them");
	mkdir(hdir, 0755);
	ok(tlib_wait_for(health_is, h200, 15000) && tsup_wait_lines(hfile, "\"job\":\"a\"", 1, 10000),
	   "the directory back: written again, /healthz 200");
	is_int(exit_code(tsup_stop(&t, SIGTERM, 10000)), 0, "it stops cleanly");
}

static void test_busy_socket(void)
{
	struct tsup a, b;
	const char *yaml = "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t96e}\n"
	                   "supervisor: {workers: 1}\n"
	                   "jobs:\n"
	                   "  a: {type: script, cron: \"0 0 0 1 1 ? 2099\", shardingTotalCount: 1, props: {script.command.line: /bin/true}}\n";
	tsup_config(&a, "sock-a", yaml);
	tsup_config(&b, "sock-b", yaml);
	const char *args[] = { "--standalone", "--socket", a.sock, NULL };
	tsup_start(&a, args);
	ok(tsup_wait_listening(&a, 10000), "a supervisor listens on its attach socket");
	is_int(run(&b, args, 10000), 2, "a second one on the same socket: exit 2 (a configuration problem)");
	char want[1600];
	snprintf(want, sizeof want, "ERROR attach socket %s: another supervisor is listening on it (the same namespace on "
	         "this machine?): stop it, or give this one a socket of its own with --socket PATH or "
	         "supervisor.attachSocket\n", a.sock);
	is_int(tsup_log_count(&b, want), 1, "  naming --socket and supervisor.attachSocket");
	ok(tsup_alive(a.pid), "  the first one goes on");
	is_int(exit_code(tsup_stop(&a, SIGTERM, 10000)), 0, "  and stops cleanly");

	/* a path that cannot be made: a directory that is a file */
	char file[700], sock[760];
	snprintf(file, sizeof file, "%s/plain", b.dir);
	tlib_write_file(file, "x", 1);
	snprintf(sock, sizeof sock, "%s/x.sock", file);
	const char *bad[] = { "--standalone", "--socket", sock, NULL };
	is_int(run(&b, bad, 10000), 2, "an attach socket in a directory that is a file: exit 2");
	ok(tsup_log_count(&b, "--socket PATH or supervisor.attachSocket") == 1, "  naming --socket");
}

int main(void)
{
	tlib_init(120);
	plan(43);
	test_run_unknown();
	test_run_wait();
	test_metrics();
	test_history();
	test_busy_socket();
	return done_testing();
}
