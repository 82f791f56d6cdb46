/* t/134-flow-run.c: workflows at run time (dependsOn; docs/config.md "Workflows"), on a real
 * ZooKeeper and three real supervisors with the same jobs:
 *   A (4 items, the root) -> B (2), C (2) -> D (3, fan-in: after both).
 * Every script appends a start and an end line (job, item, EJOB_WORKFLOW_RUN, its time) to one log.
 *   - a run (A triggered): A's items once, then B and C once each, then D once, every item once,
 *     each after every item of what it depends on ended; EJOB_WORKFLOW_RUN is A's fire id in
 *     every one; ZooKeeper keeps each job's part of the run ("fired N A", an ok record per item);
 *   - an item of B and one of C failing for good: D does not run and its part says why; one
 *     error handler message (a webhook) for the run;
 *   - the supervisor running A's last item killed -9 while it runs: the item is taken over and
 *     runs in the run, and B, C, D still run once;
 *   - a supervisor killed -9 while B runs (one of those that would start D): D once;
 *   - one that owns an item of D and none of B or C killed while they run, so that D fires while
 *     it is still registered: when its session ends its item of D runs elsewhere, once;
 *   - 17 runs that never end: the oldest given up once 16 newer started, what comes after skipped;
 *   - A on a cron (every 4 s, set with ejobctl config set): each fire a whole run, each item once. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tflow.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define NSUP 3

static struct tzkup u;
static struct tsup s[NSUP];
static char dir[400], logp[500];

/* which supervisor's worker ran a line's item: its task id names its instance */
static int sup_of(const struct tflow_line *l)
{
	for (int i = 0; i < NSUP; i++)
		if (s[i].pid && strstr(l->task, s[i].id)) return i;
	return -1;
}

struct want {
	unsigned long long run;
	int n;
};

static int ends_at_least(void *arg)
{
	struct want *w = arg;
	tflow_read(logp);
	return tflow_count("end", "D", -1, w->run) >= w->n;
}

struct runwait {
	unsigned long long after;
};

static int a_started(void *arg)
{
	struct runwait *w = arg;
	tflow_read(logp);
	return tflow_run_after("A", w->after) != 0;
}

/* Every job of run once per item, in order: A, then B and C, then D. */
static void check_run(const char *what, unsigned long long run, int d_runs)
{
	const char *job[] = { "A", "B", "C", "D" };
	int items[] = { 4, 2, 2, 3 };
	char bad[400] = "";
	for (int k = 0; k < 4; k++) {
		if (k == 3 && !d_runs) continue;
		for (int i = 0; i < items[k]; i++) {
			int st = tflow_count("start", job[k], i, run), en = tflow_count("end", job[k], i, run);
			if ((st != 1 || en != 1) && !bad[0])
				snprintf(bad, sizeof bad, "%s item %d: %d starts, %d ends", job[k], i, st, en);
		}
	}
	ok(!bad[0], "%s: every item of A, B, C%s ran once in run %llu%s%s", what, d_runs ? ", D" : "", run, bad[0] ? ": " : "",
	   bad);
	unsigned long long a_end = tflow_edge("end", "A", run, 1), b_st = tflow_edge("start", "B", run, 0), c_st = tflow_edge("start", "C", run, 0);
	ok(b_st > a_end && c_st > a_end, "%s: B and C start after A's last item ended (+%.3f s, +%.3f s)", what,
	   (double)(b_st - a_end) / 1e9, (double)(c_st - a_end) / 1e9);
	if (d_runs) {
		unsigned long long bc_end = tflow_edge("end", "B", run, 1) > tflow_edge("end", "C", run, 1) ? tflow_edge("end", "B", run, 1)
		                                                                                : tflow_edge("end", "C", run, 1);
		ok(tflow_edge("start", "D", run, 0) > bc_end, "%s: D starts after B's and C's last items ended (+%.3f s)", what,
		   (double)(tflow_edge("start", "D", run, 0) - bc_end) / 1e9);
	}
}

/* the webhook receiver: each POST's body as DIR/hook-N.json */
static const char http_py[] =
	"import os, sys, threading\n"
	"from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler\n"
	"d = sys.argv[1]\n"
	"n = [0]\n"
	"lock = threading.Lock()\n"
	"class H(BaseHTTPRequestHandler):\n"
	"    protocol_version = 'HTTP/1.1'\n"
	"    def log_message(self, *a): pass\n"
	"    def do_POST(self):\n"
	"        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))\n"
	"        with lock:\n"
	"            n[0] += 1\n"
	"            k = n[0]\n"
	"        open(os.path.join(d, 'hook-%d.tmp' % k), 'wb').write(body)\n"
	"        os.rename(os.path.join(d, 'hook-%d.tmp' % k), os.path.join(d, 'hook-%d.json' % k))\n"
	"        self.send_response(200)\n"
	"        self.send_header('Content-Length', '0')\n"
	"        self.end_headers()\n"
	"s = ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
	"s.daemon_threads = True\n"
	"open(os.path.join(d, 'port.tmp'), 'w').write(str(s.server_address[1]))\n"
	"os.rename(os.path.join(d, 'port.tmp'), os.path.join(d, 'port'))\n"
	"s.serve_forever()\n";

static int hook_port;

static int port_there(void *arg)
{
	(void)arg;
	char p[600];
	snprintf(p, sizeof p, "%s/port", dir);
	FILE *f = fopen(p, "re");
	if (!f) return 0;
	int ok_ = fscanf(f, "%d", &hook_port) == 1;
	fclose(f);
	return ok_;
}

static void start_receiver(void)
{
	char py[600];
	snprintf(py, sizeof py, "%s/rx.py", dir);
	tlib_write_file(py, http_py, strlen(http_py));
	pid_t p = tlib_fork();
	if (p == 0) {
		execl("/usr/bin/python3", "python3", py, dir, (char *)NULL);
		_exit(127);
	}
	if (!tlib_wait_for(port_there, NULL, 15000)) BAIL_OUT("the webhook receiver did not start");
}

static int hooks(char *first, size_t len)
{
	int n = 0;
	for (int k = 1; k < 100; k++) {
		char p[600];
		snprintf(p, sizeof p, "%s/hook-%d.json", dir, k);
		FILE *f = fopen(p, "re");
		if (!f) break;
		if (k == 1 && first) {
			size_t got = fread(first, 1, len - 1, f);
			first[got] = 0;
		}
		fclose(f);
		n++;
	}
	return n;
}

static const char *jobs_yaml(const char *a_cron)
{
	static char y[4096];
	char sh[600];
	tflow_script(sh, sizeof sh, logp);
	snprintf(y, sizeof y,
	         "  A:\n    type: script\n    cron: \"%s\"\n    shardingTotalCount: 4\n    failover: true\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  B:\n    type: script\n    dependsOn: [A]\n    shardingTotalCount: 2\n    failover: true\n    overwrite: true\n"
	         "    jobErrorHandlerType: WEBHOOK\n"
	         "    props: {script.command.line: \"%s\", webhook.url: \"http://127.0.0.1:%d/b\"}\n"
	         "  C:\n    type: script\n    dependsOn: [A]\n    shardingTotalCount: 2\n    failover: true\n    overwrite: true\n"
	         "    jobErrorHandlerType: WEBHOOK\n"
	         "    props: {script.command.line: \"%s\", webhook.url: \"http://127.0.0.1:%d/c\"}\n"
	         "  D:\n    type: script\n    dependsOn: [B, C]\n    shardingTotalCount: 3\n    failover: true\n    overwrite: true\n"
	         "    props: {script.command.line: \"%s\"}\n",
	         a_cron, sh, sh, hook_port, sh, hook_port, sh);
	return y;
}

static void touch(const char *name)
{
	tflow_touch(name, 1);
}

static void untouch(const char *name)
{
	tflow_touch(name, 0);
}

/* A triggered by hand: the run it starts, once A's first item has logged */
static unsigned long long trigger_a(unsigned long long after)
{
	char *o = NULL, *e = NULL;
	is_int(tzkup_ctl(&u, &o, &e, "trigger", "A", NULL), 0, "ejobctl trigger A");
	free(o), free(e);
	struct runwait w = { after };
	if (!tlib_wait_for(a_started, &w, 15000)) return 0;
	return tflow_run_after("A", after);
}

static unsigned long long last_run;

struct dwait {
	const char *job, *want;
	unsigned long long run;
};

static int data_is(void *arg)
{
	struct dwait *d = arg;
	return !strcmp(tzkup_data(&u, tzkup_path(&u, d->job, "ejob-flow/runs/%llu", d->run)), d->want);
}

static int tlib_wait_for_data(struct tzkup *uu, const char *job, unsigned long long run, const char *want, unsigned ms)
{
	(void)uu;
	struct dwait d = { job, want, run };
	return tlib_wait_for(data_is, &d, ms);
}

static int run_node_is(const char *job, unsigned long long run, const char *want)
{
	return !strcmp(tzkup_data(&u, tzkup_path(&u, job, "ejob-flow/runs/%llu", run)), want);
}

static void kill9(int i)
{
	pid_t kids[64];
	int nk = tsup_descendants(s[i].pid, kids, 64);
	kill(s[i].pid, SIGKILL);
	for (int k = 0; k < nk; k++) kill(kids[k], SIGKILL);
	waitpid(s[i].pid, NULL, 0);
	tlib_untrack(s[i].pid);
	s[i].pid = 0;
}

/* s[i], killed, started again on its host; registered once more */
static void restart(int i)
{
	char ip[32];
	snprintf(ip, sizeof ip, "127.0.0.%d", i + 1);
	tzkup_run(&u, &s[i], ip);
	ok(tzkup_wait_registered(&u, "D", s[i].id, 0, 20000), "s%d back", i);
}

static int sup_of_running(const char *job, int item)
{
	char id[200];
	snprintf(id, sizeof id, "%s", tzkup_data(&u, tzkup_path(&u, job, "sharding/%d/instance", item)));
	for (int i = 0; i < NSUP; i++)
		if (s[i].pid && !strcmp(s[i].id, id)) return i;
	return -1;
}

int main(void)
{
	tlib_init(240);
	tzkup_start(&u, 200, "t134", 4000);
	snprintf(dir, sizeof dir, "%s", tlib_tmpdir());
	snprintf(logp, sizeof logp, "%s/runs.log", dir);
	start_receiver();
	const char *jobs = jobs_yaml("0 0 0 1 1 ? 2099");
	tzkup_run_n(&u, s, NSUP, "workers: 4, shutdownGraceSeconds: 0, killGraceSeconds: 1", jobs);
	for (int i = 0; i < NSUP; i++)
		ok(tzkup_wait_registered(&u, "D", s[i].id, 0, 20000), "s%d registered D", i);
	ok(tzkup_wait_epoch(&u, "A", 0, 15000) && tzkup_wait_epoch(&u, "D", 0, 15000), "A and D sharded");

	/* ---- one run --------------------------------------------------------------------------------- */
	unsigned long long r1 = trigger_a(0);
	ok(r1 > 0, "A's fire started run %llu (EJOB_WORKFLOW_RUN in A's items)", r1);
	struct want w = { r1, 3 };
	ok(tlib_wait_for(ends_at_least, &w, 20000), "D's 3 items ended in run %llu", r1);
	usleep(1500000);            /* a second fire of anything would be in the log by now */
	tflow_read(logp);
	check_run("run 1", r1, 1);
	is_int(tflow_n, 2 * (4 + 2 + 2 + 3), "  and nothing else ran (%d lines)", tflow_n);
	ok(run_node_is("D", r1, "fired 3 A") && run_node_is("B", r1, "fired 2 A") && run_node_is("A", r1, "fired 4 A"),
	   "ZooKeeper: D's, B's and A's parts of the run (%s)", tzkup_data(&u, tzkup_path(&u, "D", "ejob-flow/runs/%llu", r1)));
	ok(!tzkup_missing(&u, tzkup_path(&u, "D", "ejob-flow/runs/%llu/0.ok", r1)) &&
	   !tzkup_missing(&u, tzkup_path(&u, "D", "ejob-flow/runs/%llu/1.ok", r1)) &&
	   !tzkup_missing(&u, tzkup_path(&u, "A", "ejob-flow/runs/%llu/3.ok", r1)), "  each item's ok record");
	last_run = r1;

	/* ---- an item of B and one of C fail for good: D is skipped, one message ------------------------ */
	touch("fail-C-1");
	touch("fail-B-0");
	unsigned long long r2 = trigger_a(last_run);
	ok(r2 > r1, "run 2: %llu", r2);
	/* the first failure D saw: either */
	ok(tlib_wait_for_data(&u, "D", r2, "skipped A B item 0 failed", 20000) ||
	   tlib_wait_for_data(&u, "D", r2, "skipped A C item 1 failed", 1), "D's part of run 2: %s",
	   tzkup_data(&u, tzkup_path(&u, "D", "ejob-flow/runs/%llu", r2)));
	usleep(1500000);
	tflow_read(logp);
	is_int(tflow_count("start", "D", -1, r2), 0, "  D did not run");
	ok(tflow_count("start", "B", 0, r2) == 1 && tflow_count("end", "B", 0, r2) == 0 && tflow_count("end", "B", 1, r2) == 1,
	   "  B: item 0 failed, item 1 ended");
	ok(tflow_count("end", "C", 0, r2) == 1 && tflow_count("start", "C", 1, r2) == 1 && tflow_count("end", "C", 1, r2) == 0,
	   "  C: item 0 ended, item 1 failed");
	const char *rec = tzkup_data(&u, tzkup_path(&u, "C", "ejob-flow/runs/%llu/1.failed", r2));
	ok(strstr(rec, "@-@") && strstr(rec, "exit 3"), "  C's record of item 1 names where and why: %s", rec);
	untouch("fail-C-1");
	untouch("fail-B-0");
	usleep(1000000);            /* a second message would be there by now */
	char body[4096] = "", want_run[80];
	int nh = hooks(body, sizeof body);
	is_int(nh, 1, "one error handler message for the run (two items failed, on two jobs)");
	snprintf(want_run, sizeof want_run, "\"workflow\":\"A\",\"workflowRun\":%llu,", r2);
	ok(strstr(body, want_run) && strstr(body, "Workflow 'A' run ") && strstr(body, "exit 3"),
	   "  it names the workflow, the run, the item and why: %s", body);
	const char *msg = tzkup_data(&u, tzkup_path(&u, "A", "ejob-flow/runs/%llu/message", r2));
	ok(strncmp(msg, "B 0 ", 4) == 0 || strncmp(msg, "C 1 ", 4) == 0, "  the run's message node says whose: %s", msg);
	last_run = r2;

	/* ---- the supervisor running A's last item killed -9 while it runs ---------------------------- */
	touch("slow-A-3");
	unsigned long long r3 = trigger_a(last_run);
	ok(r3 > r2, "run 3: %llu", r3);
	int victim = sup_of_running("A", 3);
	ok(victim >= 0, "A's item 3 runs on s%d", victim);
	usleep(1000000);
	if (victim >= 0) kill9(victim);
	untouch("slow-A-3");
	w.run = r3;
	ok(tlib_wait_for(ends_at_least, &w, 30000), "D's 3 items ended in run 3");
	usleep(1500000);
	tflow_read(logp);
	is_int(tflow_count("start", "A", 3, r3), 2, "  A's item 3 ran twice: cut by the kill, then taken over");
	ok(!tzkup_missing(&u, tzkup_path(&u, "A", "ejob-flow/runs/%llu/3.ok", r3)), "  the take recorded item 3 in run 3");
	for (int k = 0; k < 3; k++) {
		const char *j = k == 0 ? "B" : k == 1 ? "C" : "D";
		int nit = k == 2 ? 3 : 2, once = 1;
		for (int i = 0; i < nit; i++) once &= tflow_count("start", j, i, r3) == 1 && tflow_count("end", j, i, r3) == 1;
		ok(once, "  %s ran once, each item once", j);
	}
	if (victim >= 0) restart(victim);
	last_run = r3;

	/* ---- a supervisor killed -9 while B and C run --------------------------------------------------- */
	touch("slow-B-0");
	touch("slow-B-1");
	unsigned long long r4 = trigger_a(last_run);
	ok(r4 > r3, "run 4: %llu", r4);
	struct want bw = { r4, 0 };
	(void)bw;
	int v2 = -1;
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end && v2 < 0; usleep(50000)) {
		tflow_read(logp);
		for (int i = 0; i < tflow_n; i++)
			if (!strcmp(tflow_lines[i].kind, "start") && !strcmp(tflow_lines[i].job, "B") && tflow_lines[i].run == r4) v2 = sup_of(&tflow_lines[i]);
	}
	ok(v2 >= 0, "B runs (an item on s%d)", v2);
	if (v2 >= 0) kill9(v2);
	untouch("slow-B-0");
	untouch("slow-B-1");
	w.run = r4;
	ok(tlib_wait_for(ends_at_least, &w, 30000), "D's 3 items ended in run 4");
	usleep(1500000);
	tflow_read(logp);
	ok(tflow_count("start", "D", 0, r4) == 1 && tflow_count("start", "D", 1, r4) == 1 && tflow_count("start", "D", 2, r4) == 1 &&
	   tflow_count("end", "D", -1, r4) == 3, "  D ran once, each item once");
	ok(tflow_count("end", "B", 0, r4) == 1 && tflow_count("end", "B", 1, r4) == 1, "  B's items each ended once (one taken over)");
	if (v2 >= 0) restart(v2);
	last_run = r4;

	/* ---- one that owns an item of D and none of B or C killed while they run: it is still
	 * registered when D fires, and never takes its trigger; when its session ends, the leader gives
	 * the run to the others, and its item of D runs there, once --------------------------------- */
	for (int i = 0; i < NSUP; i++) ok(tzkup_wait_owned(&u, "D", 3, s[i].id, 1, 20000), "s%d owns one item of D", i);
	int idle = -1;
	for (int i = 0; i < NSUP && idle < 0; i++)
		if (!tzkup_owned(&u, "B", 2, s[i].id) && !tzkup_owned(&u, "C", 2, s[i].id)) idle = i;
	ok(idle >= 0, "s%d has no item of B or C", idle);
	touch("slow-B-0");
	touch("slow-B-1");
	unsigned long long r5 = trigger_a(last_run);
	ok(r5 > r4, "run 5: %llu", r5);
	int b_runs = 0;
	for (uint64_t end = tlib_now_ms() + 15000; tlib_now_ms() < end && !b_runs; usleep(20000)) {
		tflow_read(logp);
		b_runs = tflow_count("start", "B", -1, r5) > 0;
	}
	ok(b_runs, "B runs");
	char idle_id[128];
	snprintf(idle_id, sizeof idle_id, "%s", idle >= 0 ? s[idle].id : "-");
	if (idle >= 0) kill9(idle);
	untouch("slow-B-0");
	untouch("slow-B-1");
	ok(tlib_wait_for_data(&u, "D", r5, "fired 3 A", 15000), "D fired in run 5");
	ok(!tzkup_missing(&u, tzkup_path(&u, "D", "instances/%s", idle_id)), "  while the killed one was still registered");
	w.run = r5;
	ok(tlib_wait_for(ends_at_least, &w, 30000), "D's 3 items ended in run 5");
	usleep(1500000);
	tflow_read(logp);
	int once = 1;
	for (int i = 0; i < 3; i++) once &= tflow_count("start", "D", i, r5) == 1 && tflow_count("end", "D", i, r5) == 1;
	ok(once, "  each item of D once (the killed one's on another)");
	ok(tzkup_missing(&u, tzkup_path(&u, "D", "trigger/%s", idle_id)), "  its trigger node taken by the leader");

	/* ---- runs that never end: given up once 16 newer ones have started --------------------------- */
	/* 17 runs of A written by hand, older than every real one, none of whose items ever ends: the
	 * oldest has 16 + 5 newer runs, B and C give it up, and D, after them, skips it */
	for (int k = 1; k <= 17; k++) tzkup_mk(&u, tzkup_path(&u, "A", "ejob-flow/runs/%d", k), "fired 4 A", 0);
	ok(tlib_wait_for_data(&u, "B", 1, "given-up - 16 newer runs started before every upstream job of it had ended", 15000),
	   "B gives the oldest unfinished run up: %s", tzkup_data(&u, tzkup_path(&u, "B", "ejob-flow/runs/1")));
	ok(tlib_wait_for_data(&u, "D", 1, "skipped - B did not fire in the run", 15000) ||
	   tlib_wait_for_data(&u, "D", 1, "skipped - C did not fire in the run", 1),
	   "  and D skips it: %s", tzkup_data(&u, tzkup_path(&u, "D", "ejob-flow/runs/1")));
	ok(tzkup_missing(&u, tzkup_path(&u, "B", "ejob-flow/runs/17")), "  the newest of them is still waited on");

	/* ---- A on a cron: each of its fires is a run ---------------------------------------------------- */
	char cfg[4096], path[600];
	snprintf(cfg, sizeof cfg, "%s", tzkup_data(&u, tzkup_path(&u, "A", "config")));
	char *c = strstr(cfg, "cron: 0 0 0 1 1 ? 2099\n");
	ok(c != NULL, "A's config node has its cron");
	if (c) {
		char rest[4096];
		snprintf(rest, sizeof rest, "%s", c + strlen("cron: 0 0 0 1 1 ? 2099\n"));
		snprintf(c, sizeof cfg - (size_t)(c - cfg), "cron: 0/4 * * * * ?\n%s", rest);
	}
	snprintf(path, sizeof path, "%s/a-cron.yaml", dir);
	tlib_write_file(path, cfg, strlen(cfg));
	char *out = NULL, *err = NULL;
	int rc = tzkup_ctl(&u, &out, &err, "config", "set", "A", path, NULL);
	is_int(rc, 0, "ejobctl config set A: every 4 seconds (%s)", err ? err : "");
	free(out), free(err);
	unsigned long long cron_runs[2] = { 0, 0 };
	for (uint64_t end = tlib_now_ms() + 30000; tlib_now_ms() < end && !cron_runs[1]; usleep(100000)) {
		tflow_read(logp);
		int n = 0;
		for (int i = 0; i < tflow_n && n < 2; i++) {
			unsigned long long r = tflow_lines[i].run;
			if (strcmp(tflow_lines[i].job, "A") || r <= r5 || r % 4000 || (n && r == cron_runs[0])) continue;
			w.run = r;
			w.n = 3;
			if (tflow_count("end", "D", -1, r) >= 3) cron_runs[n++] = r;
		}
	}
	ok(cron_runs[1] != 0, "two of A's cron fires, each a run to its end: %llu, %llu", cron_runs[0], cron_runs[1]);
	usleep(1000000);
	tflow_read(logp);
	for (int k = 0; k < 2 && cron_runs[k]; k++) check_run(k ? "cron run 2" : "cron run 1", cron_runs[k], 1);
	return done_testing();
}
