/* t/26-sup-pool.c: the worker pool of a real supervisor: visible in shmdump; a worker killed
 * with SIGKILL mid-item (the item runs again elsewhere, what its script started is killed too,
 * the pool is back to N); a worker binary
 * that keeps dying (backoff, one log line per cause); a worker that stops heartbeating. */
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

static int file_exists(const char *p) { return access(p, F_OK) == 0; }

static int wait_file(const char *p, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	while (!file_exists(p)) {
		if (tlib_now_ms() > end) return 0;
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	return 1;
}

static char *shmdump(pid_t pid)
{
	char p[32];
	snprintf(p, sizeof p, "%d", (int)pid);
	const char *argv[] = { BUILT("tools/shmdump"), p, NULL };
	char *out = NULL;
	tlib_run(argv, &out, NULL);
	return out;
}

/* workers in shmdump's table whose state is one of idle/busy and whose pid is a live child */
static int live_workers(const char *dump, pid_t sup)
{
	pid_t kids[64];
	int nk = tsup_children(sup, kids, 64);
	int n = 0;
	const char *p = strstr(dump, "\nworkers: ");
	for (const char *l = p ? strchr(p + 1, '\n') : NULL; l && (l = strchr(l + 1, '\n')) && !strncmp(l, "\n  ", 3);) {
		int idx, pid, gen;
		char state[16];
		if (sscanf(l + 1, " %d %d %d %15s", &idx, &pid, &gen, state) == 4 &&
		    (!strcmp(state, "idle") || !strcmp(state, "busy")))
			for (int k = 0; k < nk; k++) n += kids[k] == pid;
	}
	return n;
}

static void test_kill_mid_item(void)
{
	struct tsup t;
	const char *yaml =
		"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t26}\n"
		"supervisor: {workers: 3, attachSocket: \"@SOCK@\"}\n"
		"jobs:\n"
		"  victim:\n"
		"    type: script\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 2\n"
		"    maxRetries: 1\n"
		"    props: {script.command.line: \"@DIR@/job.sh\"}\n";
	tsup_config(&t, "kill", yaml);
	char sh[700], buf[2048];
	snprintf(sh, sizeof sh, "%s/job.sh", t.dir);
	/* item 0, attempt 1: mark its start and its pid, then hang (it will lose its worker);
	 * item 1: hold the run open until the test releases it */
	snprintf(buf, sizeof buf,
	         "#!/bin/sh\n"
	         "d=%s\n"
	         "if [ \"$EJOB_ITEM\" = 0 ] && [ \"$EJOB_ATTEMPT\" = 1 ]; then\n"
	         "  sleep 61 & echo $! > $d/gc.pid; echo $$ > $d/item0.pid; sleep 60\n"
	         "fi\n"
	         "if [ \"$EJOB_ITEM\" = 1 ]; then while [ ! -e $d/release ]; do sleep 0.05; done; fi\n"
	         "echo \"$EJOB_ITEM $EJOB_ATTEMPT\" >> $d/done\n", t.dir);
	tlib_write_file(sh, buf, strlen(buf));
	chmod(sh, 0755);

	const char *args[] = { "--run", "victim", NULL };
	tsup_start(&t, args);
	char p0[700], rel[700], done[700];
	snprintf(p0, sizeof p0, "%s/item0.pid", t.dir);
	snprintf(rel, sizeof rel, "%s/release", t.dir);
	snprintf(done, sizeof done, "%s/done", t.dir);
	ok(wait_file(p0, 10000), "item 0 started");
	usleep(50000);
	char *s = tsup_slurp(p0);
	pid_t script = s ? (pid_t)atoi(s) : 0;
	free(s);
	char stat[64];
	snprintf(stat, sizeof stat, "/proc/%d/stat", (int)script);
	char *st = tsup_slurp(stat);
	pid_t worker = 0;
	char *rp = st ? strrchr(st, ')') : NULL;
	if (rp) sscanf(rp + 1, " %*c %d", &worker);
	free(st);
	pid_t kids[64];
	int nk = tsup_children(t.pid, kids, 64), is_kid = 0;
	for (int i = 0; i < nk; i++) is_kid |= kids[i] == worker;
	ok(worker > 0 && is_kid, "its worker (pid %d) is one of the supervisor's children", (int)worker);

	char *dump = shmdump(t.pid);
	is_int(live_workers(dump, t.pid), 3, "shmdump shows a pool of 3 live workers");
	ok(dump && strstr(dump, "busy") && strstr(dump, "submit xid="), "and the item each busy one holds");
	free(dump);

	kill(worker, SIGKILL);
	ok(tsup_wait_log(&t, "died: signal 9 (Killed) while running an item; replacing it", 1, 5000),
	   "the supervisor reports the worker's death");
	ok(tsup_wait_log(&t, "job victim item 0 attempt 1: crashed", 1, 5000), "the item is reported crashed");
	ok(tsup_wait_lines(done, "0 2", 1, 10000), "and runs again (attempt 2) elsewhere");
	usleep(100000);
	ok(!tsup_alive(script), "the dead worker's script did not outlive it");
	char gcp[700];
	snprintf(gcp, sizeof gcp, "%s/gc.pid", t.dir);
	s = tsup_slurp(gcp);
	pid_t gc = s ? (pid_t)atoi(s) : 0;
	free(s);
	ok(gc > 0 && !tsup_alive(gc), "nor did its child (pid %d), killed with the item's process group", (int)gc);
	dump = shmdump(t.pid);
	is_int(live_workers(dump, t.pid), 3, "the pool is back to 3 live workers");
	free(dump);

	tlib_write_file(rel, "", 0);
	int w = tsup_stop(&t, 0, 15000);
	ok(WIFEXITED(w) && WEXITSTATUS(w) == 0, "the run ends with every item done: exit 0");
	char *d = tsup_slurp(done);
	ok(d && strstr(d, "0 2\n") && strstr(d, "1 1\n") && !strstr(d, "0 1\n"), "item 0 finished only on attempt 2");
	free(d);
}

static void test_crash_loop(void)
{
	struct tsup t;
	const char *yaml =
		"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t26b}\n"
		"supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
		"jobs: {}\n";
	tsup_config(&t, "loop", yaml);
	char bin[700], starts[700], buf[1024];
	snprintf(bin, sizeof bin, "%s/bad-worker", t.dir);
	snprintf(starts, sizeof starts, "%s/starts", t.dir);
	snprintf(buf, sizeof buf, "#!/bin/sh\ndate +%%s.%%N >> %s\necho 'bad-worker: cannot start' >&2\nexit 3\n", starts);
	tlib_write_file(bin, buf, strlen(buf));
	chmod(bin, 0755);
	const char *args[] = { "--worker-bin", bin, "--standalone", NULL };   /* the pool alone: no ZooKeeper */
	tsup_start(&t, args);
	usleep(3200000);
	int w = tsup_stop(&t, SIGTERM, 10000);
	ok(WIFEXITED(w) && WEXITSTATUS(w) == 0, "a supervisor whose worker cannot start still stops cleanly");
	char *s = tsup_slurp(starts);
	double ts[64];
	int n = 0;
	for (char *p = s ? strtok(s, "\n") : NULL; p && n < 64; p = strtok(NULL, "\n")) ts[n++] = atof(p);
	free(s);
	ok(n >= 4 && n <= 10, "in 3.2s the worker was started %d times, not in a storm", n);
	int growing = n >= 4;
	for (int i = 3; i < n; i++) growing &= ts[i] - ts[i - 1] >= 1.5 * (ts[i - 1] - ts[i - 2]) - 0.02;
	ok(growing, "and the delay between starts keeps growing (backoff)");
	ok(n >= 2 && ts[1] - ts[0] < 0.1, "the first restart is immediate (%.3fs)", n >= 2 ? ts[1] - ts[0] : -1);
	is_int(tsup_log_count(&t, "died before it was ready: exit 3"), 1, "the cause is logged once, not per death");
	ok(tsup_log_count(&t, "(this is logged once per cause while it keeps failing)") == 1, "saying so");
}

static void test_heartbeat(void)
{
	struct tsup t;
	const char *yaml =
		"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t26c}\n"
		"supervisor: {workers: 2, attachSocket: \"@SOCK@\"}\n"
		"jobs: {}\n";
	tsup_config(&t, "hb", yaml);
	const char *alone[] = { "--standalone", NULL };   /* the pool alone: no ZooKeeper to give up on */
	tsup_start(&t, alone);
	pid_t kids[8];
	uint64_t end = tlib_now_ms() + 5000;
	int n;
	while ((n = tsup_children(t.pid, kids, 8)) < 2 && tlib_now_ms() < end) usleep(10000);
	is_int(n, 2, "two workers");
	usleep(300000);
	kill(kids[0], SIGSTOP);
	pid_t stopped = kids[0];
	end = tlib_now_ms() + 9000;
	while (tsup_alive(stopped) && tlib_now_ms() < end) usleep(10000);
	ok(!tsup_alive(stopped), "a stopped worker is noticed by its heartbeat and killed");
	ok(tsup_log_count(&t, "no heartbeat for") >= 1, "saying why");
	end = tlib_now_ms() + 3000;
	int replaced = 0;
	while (!replaced && tlib_now_ms() < end) {
		n = tsup_children(t.pid, kids, 8);
		replaced = n == 2 && kids[0] != stopped && kids[1] != stopped;
		if (!replaced) usleep(10000);
	}
	ok(replaced, "and replaced: the pool is back to two");
	is_int(n, 2, "two workers again");
	int w = tsup_stop(&t, SIGTERM, 10000);
	ok(WIFEXITED(w) && WEXITSTATUS(w) == 0, "SIGTERM: exit 0");
}

int main(void)
{
	tlib_init(120);
	plan(24);
	test_kill_mid_item();
	test_crash_loop();
	test_heartbeat();
	return done_testing();
}
