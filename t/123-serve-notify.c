/* t/123-serve-notify.c: `ejobctl serve` as ejob-console.service runs it (Type=notify, WatchdogSec),
 * seen from the notify socket's side as t/74 sees the supervisor: the test binds its own datagram
 * socket, as systemd does, and starts serve with $NOTIFY_SOCKET and $WATCHDOG_USEC pointing at it.
 * READY=1 comes once serve listens (a GET / answers when it has come), from serve's own pid (as
 * NotifyAccess=main wants); WATCHDOG=1 at half the interval, each after serve answered a request of
 * its own, none while it is frozen and again after; a SIGHUP does not end it; STOPPING=1 at
 * SIGTERM, then a clean exit. Its stderr is the journal ($JOURNAL_STREAM): every line of its own
 * log starts with its syslog priority.
 * ZooKeeper is not needed: serve serves without it (503 on what needs it), after 5 s of trying. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tnotify.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

#define WATCHDOG_US 500000          /* pings every 250 ms */

int main(void)
{
	plan(13);
	tlib_init(60);
	char path[600], us[32], listen[64], portarg[16];
	int fd = tnotify_socket(path, sizeof path);
	int port = tzk_free_port();
	snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
	snprintf(us, sizeof us, "%d", WATCHDOG_US);
	snprintf(portarg, sizeof portarg, "%d", tzk_free_port());
	char zk[64];
	snprintf(zk, sizeof zk, "127.0.0.1:%s", portarg);     /* nobody listens there */
	char logf[600];
	snprintf(logf, sizeof logf, "%s/serve.log", tlib_tmpdir());
	pid_t pid = tlib_fork();
	if (pid == 0) {
		if (!freopen(logf, "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(127);
		/* stderr is the journal, as systemd says it with $JOURNAL_STREAM: its device and inode */
		struct stat es;
		char js[64];
		if (fstat(2, &es) != 0) _exit(127);
		snprintf(js, sizeof js, "%llu:%llu", (unsigned long long)es.st_dev, (unsigned long long)es.st_ino);
		setenv("JOURNAL_STREAM", js, 1);
		setenv("NOTIFY_SOCKET", path, 1);
		setenv("WATCHDOG_USEC", us, 1);
		unsetenv("WATCHDOG_PID");
		execl(BUILT("tools/ejobctl"), "ejobctl", "serve", "--listen", listen, "--zk", zk, "--namespace", "t123",
		      (char *)NULL);
		_exit(127);
	}
	long r = tnotify_until(fd, "READY=1", 20000);
	ok(r >= 0, "READY=1 comes");
	if (r < 0) BAIL_OUT("no READY=1");
	char *body = NULL;
	int code = tlib_http_get(port, "/", &body);
	free(body);
	is_int(code, 200, "when it has come, serve answers GET / on %s", listen);
	is_int((int)tnotify_msgs[r].pid, (int)pid, "it comes from serve's own pid (NotifyAccess=main)");
	ok(strstr(tnotify_status((size_t)r), listen) != NULL, "its STATUS= names the address: %s", tnotify_status((size_t)r));

	/* ---- WATCHDOG=1 at half the interval, none while frozen ---- */
	size_t from = tnotify_n;
	tnotify_take(fd, 2000);
	size_t pings = tnotify_count("WATCHDOG=1", from, tnotify_n);
	ok(pings >= 6 && pings <= 10, "WATCHDOG=1 every %d ms: %zu in 2 s (6-10)", WATCHDOG_US / 2000, pings);
	kill(pid, SIGSTOP);
	tnotify_take(fd, 100);             /* what was on its way */
	from = tnotify_n;
	tnotify_take(fd, 1500);
	is_int((int)(tnotify_n - from), 0, "frozen (SIGSTOP) for 1.5 s: no WATCHDOG=1");
	kill(pid, SIGCONT);
	ok(tnotify_until(fd, "WATCHDOG=1", 1000) >= 0, "after SIGCONT WATCHDOG=1 comes again within 1 s");

	/* ---- SIGHUP (a reload by habit) does not end it ---- */
	kill(pid, SIGHUP);
	ok(tnotify_until(fd, "WATCHDOG=1", 1000) >= 0 && kill(pid, 0) == 0, "SIGHUP: still serving (ignored)");

	/* ---- STOPPING=1 at SIGTERM, then the exit ---- */
	kill(pid, SIGTERM);
	ok(tnotify_until(fd, "STOPPING=1", 5000) >= 0, "SIGTERM: STOPPING=1");
	int st = -1;
	uint64_t dl = tlib_now_ms() + 10000;
	pid_t w;
	while ((w = waitpid(pid, &st, WNOHANG)) == 0 && tlib_now_ms() < dl) usleep(10000);
	if (w == pid) tlib_untrack(pid);
	ok(w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, "serve exits 0 (status %d)", st);
	tnotify_take(fd, 100);
	is_int((int)tnotify_count("READY=1", 0, tnotify_n), 1, "READY=1 came once");

	/* ---- its own log, under journald: each line with its priority ---- */
	char *log = tsup_slurp(logf);
	int lines = 0, bad = 0, hup = 0;
	for (char *l = log ? strtok(log, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		lines++;
		if (!(l[0] == '<' && strchr("3467", l[1]) && l[2] == '>' && !strncmp(l + 3, "ejobctl serve: ", 15))) {
			diag("no priority: %s", l);
			bad++;
		}
		if (!strncmp(l, "<4>ejobctl serve: SIGHUP ignored", 32)) hup++;
	}
	free(log);
	ok(lines >= 2 && !bad, "every line of serve's own log starts with its syslog priority (%d lines, %d without)", lines,
	   bad);
	is_int(hup, 1, "the SIGHUP's line is a warning: <4>");
	return done_testing();
}
