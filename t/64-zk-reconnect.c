/* t/64-zk-reconnect.c: how a supervisor reconnects (issue 10, 4 and 6). Its supervisors start
 * without a server to reach, so they are given maxRetries 29 (the start's limit, t/51, is not
 * what this test is about).
 *
 *   - A server that takes each connection and closes it at once: the supervisor retries with a
 *     jittered backoff of regCenter.baseSleepTimeMilliseconds doubling to maxSleepTimeMilliseconds
 *     (1000 and 3000 here), not ten and more times a second as the C client does on its own: a
 *     thousand supervisors must not hammer an ensemble that is starting again.
 *   - Nothing listening: "connection refused" is logged, once, with the server and the next try;
 *     not once per attempt.
 *   - A real ZooKeeper that stops for 0.8 of the session timeout and starts again: the backoff does
 *     not cost the session (its instance nodes stay those of the same session). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

/* accept and close every connection on port for secs seconds; the accept times (ms from start) */
static int count_accepts(int port, double secs, double *at, int max)
{
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 64) < 0) {
		diag("cannot listen on %d: %s", port, strerror(errno));
		close(l);
		return -1;
	}
	uint64_t t0 = tlib_now_ms(), end = t0 + (uint64_t)(secs * 1000);
	int n = 0;
	for (;;) {
		uint64_t now = tlib_now_ms();
		if (now >= end) break;
		struct pollfd pf = { l, POLLIN, 0 };
		if (poll(&pf, 1, (int)(end - now)) <= 0) continue;
		int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) continue;
		if (n < max) at[n] = (double)(tlib_now_ms() - t0);
		n++;
		close(c);
	}
	close(l);
	return n;
}

int main(void)
{
	tlib_init(120);
	char yaml[2048];
	static const char jobs[] =
		"jobs:\n"
		"  r:\n"
		"    type: script\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 1\n"
		"    props: {script.command.line: /bin/true}\n";

	/* a server that closes every connection */
	int port = tzk_free_port();
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:%d\", namespace: t64, sessionTimeoutMilliseconds: 3000,\n"
	         "            baseSleepTimeMilliseconds: 1000, maxSleepTimeMilliseconds: 3000,\n"
	         "            maxRetries: 29}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n%s",
	         port, jobs);
	static struct tsup a;
	tsup_config(&a, "a", yaml);
	const char *args[] = { "--ip", "127.0.0.2", NULL };
	if (tsup_start(&a, args) <= 0) BAIL_OUT("cannot start a");
	double at[256];
	int n = count_accepts(port, 10.0, at, 256);
	char gaps[512] = "";
	for (int i = 1; i < n && i < 256; i++) snprintf(gaps + strlen(gaps), sizeof gaps - strlen(gaps), " %.0f", at[i] - at[i - 1]);
	diag("%d connections in 10 s, ms between them:%s", n, gaps);
	ok(n >= 3 && n <= 10, "a server that closes every connection gets %d attempts in 10 s, not 100 (backoff 1-3 s)", n);
	int spaced = 1;
	for (int i = 3; i < n && i < 256; i++) spaced &= at[i] - at[i - 1] >= 1000;
	ok(spaced, "from the third on, a second or more apart");
	ok(tsup_log_count(&a, "cannot connect to 127.0.0.1:") >= 1, "the log says it cannot connect, and why");
	int st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "it stops cleanly while not connected");

	/* nothing listening: refused, said once (a ZooKeeper's port, while it is stopped) */
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	tzk_stop(&zk, SIGKILL, 5000);
	int port2 = zk.client_port;
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:%d\", namespace: t64, sessionTimeoutMilliseconds: 3000,\n"
	         "            baseSleepTimeMilliseconds: 200, maxSleepTimeMilliseconds: 400, maxRetries: 29}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n%s",
	         port2, jobs);
	static struct tsup b;
	tsup_config(&b, "b", yaml);
	if (tsup_start(&b, args) <= 0) BAIL_OUT("cannot start b");
	char needle[128];
	snprintf(needle, sizeof needle, "cannot connect to 127.0.0.1:%d: Connection refused; retrying in", port2);
	ok(tsup_wait_log(&b, needle, 1, 5000), "a refused connection is logged with the server and the next try");
	usleep(3000000);
	is_int(tsup_log_count(&b, "Connection refused"), 1, "once, not once per attempt (a dozen in 3 s)");

	/* ZooKeeper starts on that port: b connects within the backoff's longest wait */
	if (tzk_restart(&zk, 30000) < 0) BAIL_OUT("cannot start ZooKeeper again");
	zhandle_t *zh = tzk_connect(zk.connect, 10000, NULL, 10000);
	char path[128];
	snprintf(path, sizeof path, "/t64/r/instances/127.0.0.2@-@%d", (int)b.pid);
	ok(tzk_wait_exists(zh, path, 1, 10000), "b connects once the server is there, and registers");
	tzk_close(zh);
	is_int(tsup_log_count(&b, "Connection refused"), 1, "and said nothing more meanwhile");
	st = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "b stops cleanly");

	/* an outage of 0.8 of the session timeout: the session survives the backoff */
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"%s\", namespace: t64, sessionTimeoutMilliseconds: 3000,\n"
	         "            baseSleepTimeMilliseconds: 1000, maxSleepTimeMilliseconds: 3000}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n%s",
	         zk.connect, jobs);
	static struct tsup c;
	tsup_config(&c, "c", yaml);
	const char *args_c[] = { "--ip", "127.0.0.3", NULL };
	if (tsup_start(&c, args_c) <= 0) BAIL_OUT("cannot start c");
	zh = tzk_connect(zk.connect, 10000, NULL, 10000);
	snprintf(path, sizeof path, "/t64/r/instances/127.0.0.3@-@%d", (int)c.pid);
	ok(tzk_wait_exists(zh, path, 1, 15000), "c registers");
	struct Stat s0, s1;
	tzk_exists(zh, path, &s0);
	tzk_close(zh);
	for (int round = 0; round < 2; round++) {
		uint64_t t0 = tlib_now_ms();
		tzk_stop(&zk, SIGKILL, 5000);
		uint64_t left = 2400 - (tlib_now_ms() - t0);
		usleep((useconds_t)(left > 2400 ? 0 : left) * 1000u);
		if (tzk_restart(&zk, 20000) < 0) BAIL_OUT("ZooKeeper does not start again");
		diag("outage %d: %.2f s", round + 1, (double)(tlib_now_ms() - t0) / 1000.0);
		usleep(3500000);
	}
	zh = tzk_connect(zk.connect, 10000, NULL, 10000);
	int rc = tzk_exists(zh, path, &s1);
	ok(rc == ZOK && s1.ephemeralOwner == s0.ephemeralOwner,
	   "after two outages of 0.8 of the session timeout c's instance node is the same session's");
	tzk_close(zh);
	st = tsup_stop(&c, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "c stops cleanly");
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
