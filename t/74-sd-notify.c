/* t/74-sd-notify.c: the supervisor as a systemd Type=notify service (supervisor/obs/sdnotify.h), seen
 * from the notify socket's side: the test binds its own datagram socket, as systemd does, and
 * starts the supervisor with $NOTIFY_SOCKET and $WATCHDOG_USEC pointing at it.
 *
 * READY=1 comes only once every job is registered (instances/{id} in ZooKeeper): one job cannot
 * register until the test lets it (its node is read-only), and READY waits for it. WATCHDOG=1
 * comes at half the interval, stops while the supervisor is frozen and comes back after; the
 * session lost meanwhile is registered again without a second READY=1. STOPPING=1 comes at
 * SIGTERM, before the exit. Every datagram carries the supervisor's pid (SO_PASSCRED), as
 * NotifyAccess=main wants. (systemd-run --user is not used: a container's root has no user
 * manager; the socket is the protocol itself.) */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tnotify.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define NJOBS 100                   /* and "blocked", the one the test holds back */
#define WATCHDOG_US 500000          /* pings every 250 ms */

/* jobs registered in ZooKeeper under id's session: instances/{id} there */
static int registered(const struct tzkup *u, const char *id, int with_blocked)
{
	char job[32];
	int n = 0;
	for (int i = 0; i < NJOBS; i++) {
		snprintf(job, sizeof job, "j%03d", i);
		n += tzkup_session(u, job, id) != 0;
	}
	if (with_blocked) n += tzkup_session(u, "blocked", id) != 0;
	return n;
}

/* /proc/PID/stat's state letter */
static char proc_state(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	char *s = tsup_slurp(path);
	char st = '?';
	const char *p = s ? strrchr(s, ')') : NULL;
	if (p && p[1] == ' ') st = p[2];
	free(s);
	return st;
}

int main(void)
{
	tlib_init(40);
	uint64_t t0 = tlib_now_ms();
	struct tzkup u;
	tzkup_start(&u, 500, "t74", 2000);

	/* "blocked" cannot register while its node is read-only: the supervisor retries each second */
	is_int(tzk_create(u.zh, "/t74", "", 0, NULL), ZOK, "the namespace");
	is_int(tzk_create(u.zh, "/t74/blocked", "", 0, &ZOO_READ_ACL_UNSAFE), ZOK, "a job node nobody may write under");

	static char jobs[NJOBS * 160 + 512];
	size_t n = 0;
	for (int i = 0; i <= NJOBS; i++) {
		char name[32];
		if (i < NJOBS) snprintf(name, sizeof name, "j%03d", i);
		else snprintf(name, sizeof name, "blocked");
		n += (size_t)snprintf(jobs + n, sizeof jobs - n,
		                      "  %s:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n"
		                      "    props: {script.command.line: \"/bin/true\"}\n", name);
	}
	struct tsup t;
	tzkup_config(&u, &t, "sd", "workers: 1", jobs);
	char path[600], us[32];
	int fd = tnotify_socket(path, sizeof path);
	snprintf(us, sizeof us, "%d", WATCHDOG_US);
	setenv("NOTIFY_SOCKET", path, 1);
	setenv("WATCHDOG_USEC", us, 1);
	unsetenv("WATCHDOG_PID");           /* sd_watchdog_enabled: unset means "whoever reads it" */
	tzkup_run(&u, &t, "127.0.0.1");
	unsetenv("NOTIFY_SOCKET");
	unsetenv("WATCHDOG_USEC");

	/* ---- READY=1 only when every job is registered ---- */
	uint64_t end = tlib_now_ms() + 10000;
	while (registered(&u, t.id, 0) < NJOBS && tlib_now_ms() < end) tnotify_take(fd, 100);
	if (!tsup_alive(t.pid)) BAIL_OUT("the supervisor has exited: see %s", t.log);
	is_int(registered(&u, t.id, 0), NJOBS, "the %d jobs it can register are registered", NJOBS);
	tnotify_take(fd, 1300);
	is_int(tnotify_count("READY=1", 0, tnotify_n), 0, "no READY=1 while one job is not registered");
	ok(tnotify_n && !strcmp(tnotify_status(0), "connecting to ZooKeeper"), "the first STATUS= is 'connecting to ZooKeeper' (%s)",
	   tnotify_n ? tnotify_status(0) : "none");
	char want[64];
	snprintf(want, sizeof want, "registering %d jobs (%d done)", NJOBS + 1, NJOBS);
	int saw = 0;
	for (size_t i = 0; i < tnotify_n; i++) saw |= !strcmp(tnotify_status(i), want);
	ok(saw, "a STATUS= says '%s'", want);

	is_int(zoo_delete(u.zh, "/t74/blocked", -1), ZOK, "the test lets the last job register");
	long r = tnotify_until(fd, "READY=1", 5000);
	ok(r >= 0, "READY=1 comes");
	is_int(registered(&u, t.id, 1), NJOBS + 1, "then every job is registered in ZooKeeper");
	snprintf(want, sizeof want, "connected; %d jobs, 0 items running", NJOBS + 1);
	is_str(r >= 0 ? tnotify_status((size_t)r) : "", want, "with its STATUS=");

	/* ---- WATCHDOG=1 at half the interval, none while frozen ---- */
	size_t from = tnotify_n;
	tnotify_take(fd, 2000);
	size_t pings = tnotify_count("WATCHDOG=1", from, tnotify_n);
	ok(pings >= 6 && pings <= 10, "WATCHDOG=1 every %d ms: %zu in 2 s (6-10)", WATCHDOG_US / 2000, pings);

	kill(t.pid, SIGSTOP);
	end = tlib_now_ms() + 2000;
	while (proc_state(t.pid) != 'T' && tlib_now_ms() < end) usleep(2000);
	tnotify_take(fd, 0);                        /* sent before it stopped */
	from = tnotify_n;
	tnotify_take(fd, 3000);                     /* the 2 s session expires meanwhile */
	is_int(tnotify_n - from, 0, "frozen (SIGSTOP) for 3 s: no WATCHDOG=1, nothing at all");
	end = tlib_now_ms() + 5000;
	while (tzkup_session(&u, "j000", t.id) && tlib_now_ms() < end) usleep(20000);
	is_int(tzkup_session(&u, "j000", t.id), 0, "meanwhile its session expired (instances/{id} gone)");
	/* the test holds "blocked" back again: the new session's registration cannot complete */
	is_int(tzk_delete_r(u.zh, "/t74/blocked"), ZOK, "the last job's nodes removed");
	is_int(tzk_create(u.zh, "/t74/blocked", "", 0, &ZOO_READ_ACL_UNSAFE), ZOK, "and its node read-only again");
	tnotify_take(fd, 0);
	from = tnotify_n;
	kill(t.pid, SIGCONT);
	ok(tnotify_until(fd, "WATCHDOG=1", 1000) >= 0, "after SIGCONT WATCHDOG=1 comes again within 1 s");

	/* ---- a new session: registered again, no second READY=1 ---- */
	end = tlib_now_ms() + 10000;
	while (registered(&u, t.id, 0) < NJOBS && tlib_now_ms() < end) tnotify_take(fd, 100);
	is_int(registered(&u, t.id, 0), NJOBS, "it registers the %d jobs again in a new session", NJOBS);
	tnotify_take(fd, 1300);
	snprintf(want, sizeof want, "registering %d jobs (%d done)", NJOBS + 1, NJOBS);
	saw = 0;
	for (size_t i = from; i < tnotify_n; i++) saw |= !strcmp(tnotify_status(i), want);
	ok(saw, "STATUS= says '%s' again", want);
	is_int(zoo_delete(u.zh, "/t74/blocked", -1), ZOK, "the test lets the last job register");
	end = tlib_now_ms() + 5000;
	while (registered(&u, t.id, 1) < NJOBS + 1 && tlib_now_ms() < end) tnotify_take(fd, 100);
	is_int(registered(&u, t.id, 1), NJOBS + 1, "every job is registered again");
	tnotify_take(fd, 1200);
	char last[256] = "";
	for (size_t i = 0; i < tnotify_n; i++)
		if (tnotify_status(i)[0]) snprintf(last, sizeof last, "%s", tnotify_status(i));
	snprintf(want, sizeof want, "connected; %d jobs, 0 items running", NJOBS + 1);
	is_str(last, want, "the last STATUS= says so");
	is_int(tnotify_count("READY=1", 0, tnotify_n), 1, "READY=1 was sent exactly once");

	/* ---- STOPPING=1 at SIGTERM ---- */
	pid_t pid = t.pid;
	kill(t.pid, SIGTERM);
	from = tnotify_n;
	r = tnotify_until(fd, "STOPPING=1", 3000);
	ok(r >= 0, "SIGTERM: STOPPING=1");
	ok(r >= 0 && !strncmp(tnotify_status((size_t)r), "stopping", 8), "with STATUS=stopping (%s)",
	   r >= 0 ? tnotify_status((size_t)r) : "");
	int s = tsup_stop(&t, 0, 10000);    /* a second SIGTERM would stop it at once */
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "then it exits cleanly");
	tnotify_take(fd, 0);
	is_int(tnotify_count("STOPPING=1", 0, from), 0, "no STOPPING=1 before the SIGTERM");

	size_t bad = 0;
	for (size_t i = 0; i < tnotify_n; i++) bad += tnotify_msgs[i].pid != pid;
	is_int(bad, 0, "all %zu datagrams came from the supervisor's own pid (NotifyAccess=main)", tnotify_n);
	size_t mainpid = 0;
	for (size_t i = 0; i < tnotify_n; i++) mainpid += strstr(tnotify_msgs[i].text, "MAINPID=") != NULL;
	is_int(mainpid, 0, "no MAINPID= (systemd started it: it is the main pid)");
	close(fd);
	tzkup_end(&u);
	diag("took %.1f s", (double)(tlib_now_ms() - t0) / 1000.);
	return done_testing();
}
