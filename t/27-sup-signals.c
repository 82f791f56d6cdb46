/* t/27-sup-signals.c: time limits and signals on a real supervisor: an item past its timeout is
 * stopped with its whole process group; one that ignores SIGTERM is killed after the grace;
 * SIGTERM drains (running items finish, queued ones are cancelled; these tests stop a --run,
 * whose items decide its exit status: 1, as not all of them ran); SIGKILL of the supervisor
 * leaves no worker and no item process behind. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/tap.h"

static void script(struct tsup *t, const char *name, const char *body)
{
	char p[700], b[4096];
	snprintf(p, sizeof p, "%s/%s", t->dir, name);
	snprintf(b, sizeof b, "#!/bin/sh\nd=%s\n%s", t->dir, body);
	tlib_write_file(p, b, strlen(b));
	chmod(p, 0755);
}

static int wait_lines(const char *path, int n, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	for (;;) {
		char *s = tsup_slurp(path);
		int k = 0;
		for (char *c = s; c && *c; c++) k += *c == '\n';
		free(s);
		if (k >= n) return 1;
		if (tlib_now_ms() > end) return 0;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
}

/* pids listed one per line in a file */
static int pids_in(const char *path, pid_t *out, int max)
{
	char *s = tsup_slurp(path);
	int n = 0;
	for (char *p = s ? strtok(s, "\n") : NULL; p && n < max; p = strtok(NULL, "\n")) out[n++] = (pid_t)atoi(p);
	free(s);
	return n;
}

static int any_alive(const pid_t *p, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++) k += tsup_alive(p[i]);
	return k;
}

static const char base[] =
	"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t27}\n"
	"supervisor: {workers: 2, attachSocket: \"@SOCK@\", shutdownGraceSeconds: %d, killGraceSeconds: 1}\n"
	"jobs:\n"
	"  slow:\n"
	"    type: script\n"
	"    cron: \"0 0 * * * ?\"\n"
	"    shardingTotalCount: %d\n"
	"    timeoutSeconds: %d\n"
	"    props: {script.command.line: \"@DIR@/%s\"}\n";

static void test_timeout(void)
{
	struct tsup t;
	char y[1024];
	snprintf(y, sizeof y, base, 10, 1, 1, "tree.sh");
	tsup_config(&t, "timeout", y);
	/* a script with a grandchild: both must go when the item times out */
	script(&t, "tree.sh", "sleep 60 & echo $! >> $d/pids\necho $$ >> $d/pids\nsleep 60\n");
	uint64_t t0 = tlib_now_ms();
	const char *args[] = { "--run", "slow", NULL };
	int st = tsup_run(&t, args, 20000);
	uint64_t took = tlib_now_ms() - t0;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "an item past timeoutSeconds fails the run (exit 1)");
	ok(took >= 1000 && took < 4000, "stopped after its 1s timeout (run took %llums)", (unsigned long long)took);
	ok(tsup_log_count(&t, "ran past its 1s timeout; stopping it") == 1, "the log says it timed out");
	ok(tsup_log_count(&t, "job slow item 0 attempt 1: timeout") == 1, "reported as timeout");
	char pf[700];
	snprintf(pf, sizeof pf, "%s/pids", t.dir);
	pid_t pids[8];
	int n = pids_in(pf, pids, 8);
	is_int(n, 2, "the script and its grandchild were started");
	usleep(100000);
	is_int(any_alive(pids, n), 0, "neither outlived the timeout");
}

static void test_kill_grace(void)
{
	struct tsup t;
	char y[1024];
	snprintf(y, sizeof y, base, 10, 1, 1, "stubborn.sh");
	tsup_config(&t, "grace", y);
	script(&t, "stubborn.sh", "trap '' TERM\necho $$ >> $d/pids\nwhile :; do sleep 0.1; done\n");
	uint64_t t0 = tlib_now_ms();
	const char *args[] = { "--run", "slow", NULL };
	int st = tsup_run(&t, args, 20000);
	uint64_t took = tlib_now_ms() - t0;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "an item that ignores SIGTERM: exit 1");
	ok(took >= 2000 && took < 5000, "killed after timeout + killGraceSeconds (run took %llums)", (unsigned long long)took);
	ok(tsup_log_count(&t, "killed (its item did not stop within the grace period): signal 9 (Killed)") == 1,
	   "its worker was killed for it, and said so");
	ok(tsup_log_count(&t, "job slow item 0 attempt 1: timeout") == 1, "reported as timeout, not crashed");
	char pf[700];
	snprintf(pf, sizeof pf, "%s/pids", t.dir);
	pid_t pids[4];
	int n = pids_in(pf, pids, 4);
	usleep(100000);
	ok(n == 1 && !any_alive(pids, n), "the stubborn script is gone");
}

static void test_sigterm_drain(void)
{
	struct tsup t;
	char y[1024];
	/* 6 items, 2 workers: 2 run (0.6s each), 4 wait when SIGTERM comes */
	snprintf(y, sizeof y, base, 10, 6, 0, "work.sh");
	tsup_config(&t, "drain", y);
	script(&t, "work.sh", "echo $EJOB_ITEM >> $d/started\nsleep 0.6\necho $EJOB_ITEM >> $d/finished\n");
	const char *args[] = { "--run", "slow", NULL };
	tsup_start(&t, args);
	char sf[700], ff[700];
	snprintf(sf, sizeof sf, "%s/started", t.dir);
	snprintf(ff, sizeof ff, "%s/finished", t.dir);
	ok(wait_lines(sf, 2, 10000), "two items running");
	kill(t.pid, SIGTERM);
	int st = tsup_stop(&t, 0, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "SIGTERM during --run: exit 1, as 4 of its items never ran (status 0x%x)",
	   st);
	char *s = tsup_slurp(sf), *f = tsup_slurp(ff);
	int same = s && f && strlen(s) == strlen(f);
	for (char *l = s ? strtok(s, "\n") : NULL; same && l; l = strtok(NULL, "\n")) {
		char want[16];
		snprintf(want, sizeof want, "%s\n", l);
		same = strstr(f, want) != NULL;
	}
	ok(same, "the items that were running finished (the same set)");
	free(s);
	free(f);
	is_int(tsup_log_count(&t, ": ok in"), 2, "two items ok");
	is_int(tsup_log_count(&t, ": cancelled in"), 4, "four queued items reported cancelled, not lost");
	is_int(tsup_log_count(&t, "not started: the supervisor is stopping"), 4, "  saying they never started");
	pid_t left[32];
	is_int(tsup_descendants(t.pid, left, 32), 0, "no process left behind");
}

static void test_sigterm_grace(void)
{
	struct tsup t;
	char y[1024];
	snprintf(y, sizeof y, base, 1, 1, 0, "long.sh");
	tsup_config(&t, "sgrace", y);
	script(&t, "long.sh", "echo $$ >> $d/pids\nsleep 60\n");
	const char *args[] = { "--run", "slow", NULL };
	tsup_start(&t, args);
	char pf[700];
	snprintf(pf, sizeof pf, "%s/pids", t.dir);
	ok(wait_lines(pf, 1, 10000), "a long item is running");
	uint64_t t0 = tlib_now_ms();
	kill(t.pid, SIGINT);
	int st = tsup_stop(&t, 0, 10000);
	uint64_t took = tlib_now_ms() - t0;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "SIGINT during --run with an item longer than the grace: exit 1, the "
	   "item did not end ok (status 0x%x)", st);
	ok(took >= 900 && took < 4000, "after the 1s grace (%llums)", (unsigned long long)took);
	ok(tsup_log_count(&t, "1 item still running after the grace period; asking it to stop") == 1, "it was asked to stop");
	ok(tsup_log_count(&t, "job slow item 0 attempt 1: cancelled") == 1, "and reported cancelled");
	pid_t pids[2];
	int n = pids_in(pf, pids, 2);
	ok(n == 1 && !any_alive(pids, n), "the item's process is gone");
}

static void test_sigkill_supervisor(void)
{
	struct tsup t;
	char y[1024];
	snprintf(y, sizeof y, base, 10, 2, 0, "tree.sh");
	tsup_config(&t, "sigkill", y);
	script(&t, "tree.sh", "sleep 60 & echo $! >> $d/pids\necho $$ >> $d/pids\nsleep 60\n");
	const char *args[] = { "--run", "slow", NULL };
	tsup_start(&t, args);
	char pf[700];
	snprintf(pf, sizeof pf, "%s/pids", t.dir);
	ok(wait_lines(pf, 4, 10000), "two items running, each with a grandchild");
	pid_t all[32];
	int n = tsup_descendants(t.pid, all, 32);
	ok(n >= 6, "%d processes under the supervisor (2 workers, 2 scripts, 2 grandchildren at least)", n);
	kill(t.pid, SIGKILL);
	tsup_stop(&t, 0, 5000);
	uint64_t end = tlib_now_ms() + 1000;
	while (any_alive(all, n) && tlib_now_ms() < end) usleep(10000);
	is_int(any_alive(all, n), 0, "within a second of SIGKILL to the supervisor, every one of them is gone");
	pid_t pids[8];
	int k = pids_in(pf, pids, 8);
	ok(k == 4 && !any_alive(pids, k), "including the scripts' own children");
}

/* Workers that finish their items and exit while the supervisor is not looking: when it looks,
 * their completions and their exits arrive together. The completions must win: those items
 * ran and are ok, not "never started" (and, for attachments, not run again). */
static void test_completions_before_exits(void)
{
	struct tsup t;
	char y[1024];
	snprintf(y, sizeof y, base, 10, 2, 0, "work.sh");
	tsup_config(&t, "order", y);
	script(&t, "work.sh", "echo $EJOB_ITEM >> $d/started\nsleep 0.3\necho $EJOB_ITEM >> $d/finished\n");
	const char *args[] = { "--run", "slow", NULL };
	tsup_start(&t, args);
	char sf[700], ff[700];
	snprintf(sf, sizeof sf, "%s/started", t.dir);
	snprintf(ff, sizeof ff, "%s/finished", t.dir);
	ok(wait_lines(sf, 2, 10000), "both items running");
	pid_t w[4];
	int n = tsup_children(t.pid, w, 4);
	kill(t.pid, SIGSTOP);
	for (int i = 0; i < n; i++) kill(w[i], SIGTERM);   /* finish the item, then leave */
	ok(wait_lines(ff, 2, 5000), "both items finished while the supervisor was stopped");
	uint64_t end = tlib_now_ms() + 5000;
	while ((tsup_alive(w[0]) || (n > 1 && tsup_alive(w[1]))) && tlib_now_ms() < end) usleep(5000);
	kill(t.pid, SIGTERM);
	kill(t.pid, SIGCONT);
	int st = tsup_stop(&t, 0, 10000);
	ok(WIFEXITED(st), "the supervisor exits (status 0x%x)", st);
	is_int(tsup_log_count(&t, ": ok in"), 2, "both finished items are reported ok");
	is_int(tsup_log_count(&t, "which it was not running"), 0, "no completion arrives for an item already given up");
}

/* A retried item gets its full timeout each attempt: the cancel of attempt 1 (its timeout) named
 * the item's xid in the worker's entry, and attempt 2, with the same xid, was cut at once (issue
 * 10: 1.1 s, then 0.5 s, once 1.2 ms). One worker, so both attempts run on the same one. */
static void test_retry_full_timeout(void)
{
	struct tsup t;
	char y[1024];
	snprintf(y, sizeof y,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t27}\n"
	         "supervisor: {workers: 1, attachSocket: \"@SOCK@\", killGraceSeconds: 1}\n"
	         "jobs:\n"
	         "  retried:\n"
	         "    type: script\n"
	         "    cron: \"0 0 * * * ?\"\n"
	         "    shardingTotalCount: 1\n"
	         "    timeoutSeconds: 1\n"
	         "    maxRetries: 1\n"
	         "    props: {script.command.line: \"@DIR@/slow.sh\"}\n");
	tsup_config(&t, "retry", y);
	/* each attempt records when it started and when it was stopped */
	script(&t, "slow.sh", "echo \"start $EJOB_ATTEMPT $(date +%s%N)\" >> $d/recs\n"
	       "trap 'echo \"end $EJOB_ATTEMPT $(date +%s%N)\" >> $d/recs; exit 143' TERM\n"
	       "sleep 5 & wait $!\n");
	const char *args[] = { "--run", "retried", NULL };
	int st = tsup_run(&t, args, 20000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "two timed-out attempts fail the run (exit 1)");
	char pf[700];
	snprintf(pf, sizeof pf, "%s/recs", t.dir);
	char *text = tsup_slurp(pf);
	long long start[3] = { 0 }, end[3] = { 0 };
	for (char *p = text ? strtok(text, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		char kind[8];
		int a;
		long long ns;
		if (sscanf(p, "%7s %d %lld", kind, &a, &ns) != 3 || a < 1 || a > 2) continue;
		if (!strcmp(kind, "start")) start[a] = ns;
		else end[a] = ns;
	}
	free(text);
	ok(start[1] && end[1] && start[2] && end[2], "attempts 1 and 2 both started and were stopped");
	double took1 = (double)(end[1] - start[1]) / 1e6, took2 = (double)(end[2] - start[2]) / 1e6;
	ok(took1 >= 950 && took1 < 2500, "attempt 1 ran for its full 1 s timeout (%.1f ms)", took1);
	ok(took2 >= 950 && took2 < 2500, "attempt 2 ran for its full 1 s timeout too (%.1f ms)", took2);
}

/* A supervisor stopped (SIGSTOP) for 2.5 s says at WARN when it runs again that its loop was held
 * (the ZooKeeper session's pings waited as long): once, with the time. */
static void test_loop_held(void)
{
	struct tsup t;
	char y[1024];
	snprintf(y, sizeof y, base, 10, 1, 1, "work.sh");
	tsup_config(&t, "held", y);
	const char *args[] = { "--standalone", NULL };
	tsup_start(&t, args);
	ok(tsup_wait_handles(&t, SIGTERM, 10000), "a standalone supervisor runs its loop");
	usleep(300000);
	is_int(tsup_log_count(&t, "the event loop was held"), 0, "  and says nothing of a held loop");
	kill(t.pid, SIGSTOP);
	usleep(2500000);
	kill(t.pid, SIGCONT);
	ok(tsup_wait_log(&t, "WARN the event loop was held for 2.", 1, 5000), "stopped for 2.5 s: said at WARN, with the time");
	usleep(500000);
	is_int(tsup_log_count(&t, "the event loop was held"), 1, "  once");
	int st = tsup_stop(&t, SIGTERM, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "it stops cleanly (status 0x%x)", st);
}

int main(void)
{
	tlib_init(120);
	plan(42);
	test_timeout();
	test_kill_grace();
	test_sigterm_drain();
	test_sigterm_grace();
	test_sigkill_supervisor();
	test_completions_before_exits();
	test_retry_full_timeout();
	test_loop_held();
	return done_testing();
}
