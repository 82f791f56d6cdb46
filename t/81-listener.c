/* t/81-listener.c: the per-instance listeners (props ejob.listener.before, ejob.listener.after,
 * ejob.listener.timeoutSeconds; docs/config.md "Listeners") on two supervisors and one ZooKeeper,
 * checked by the records the commands and the items write, ZooKeeper's nodes and /metrics:
 *   - each fire runs before and after once on each instance that has items of it, before ahead
 *     of its items and after behind them, with EJOB_LISTENER set and the fire's exact context
 *     JSON as their last argument (taskId, the items' parameters, fire id, epoch, outcomes);
 *   - a failing before (exit 3), and one past its timeout, skip the fire there: no item runs, no
 *     running node is left, and the skip (reason "listener") and the listener's result are
 *     counted in /metrics;
 *   - a failing after changes nothing (the items ran and completed) and is counted;
 *   - an unknown listener prop is refused by ejobctl validate, named, with the known ones. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;

/* a listener: OUT KIND [EXIT] then the context; writes "KIND $EJOB_LISTENER FIRE NS CONTEXT" */
static const char listen_sh[] =
	"#!/bin/sh\n"
	"out=$1; kind=$2; shift 2\n"
	"case $1 in [0-9]*) rc=$1; shift;; *) rc=0;; esac\n"
	"echo \"$kind $EJOB_LISTENER $EJOB_FIRE_ID $(date +%s%N) $1\" >> \"$out\"\n"
	"exit $rc\n";

/* lines of path: listener records ("before|after ...") and run records ("FIRE ITEM TASK") */
#define MAXL 2048
static char *lines[MAXL];
static int nlines;
static void load(const char *path)
{
	for (int i = 0; i < nlines; i++) free(lines[i]);
	nlines = 0;
	char *t = tsup_slurp(path);
	for (char *p = t ? strtok(t, "\n") : NULL; p && nlines < MAXL; p = strtok(NULL, "\n")) lines[nlines++] = strdup(p);
	free(t);
}

/* the index of the only listener line of kind for fire on instance id, -1 if none, -2 if more */
static int listener_line(const char *kind, long long fire, const char *id, char **ctx)
{
	int at = -1;
	char task_tail[128];
	snprintf(task_tail, sizeof task_tail, "@-@READY@-@%s\"", id);
	for (int i = 0; i < nlines; i++) {
		char k[16], env[16];
		long long f, ns;
		int off = 0;
		if (sscanf(lines[i], "%15s %15s %lld %lld %n", k, env, &f, &ns, &off) != 4 || strcmp(k, kind) ||
		    f != fire || !strstr(lines[i] + off, task_tail))
			continue;
		if (at != -1) return -2;
		at = i;
		if (ctx) *ctx = lines[i] + off;
		if (strcmp(env, kind)) return -3;   /* EJOB_LISTENER */
	}
	return at;
}

/* run records of fire on instance id: their line indexes' range and the items (bit mask) */
static int runs_of(long long fire, const char *id, int *first, int *last)
{
	int mask = 0;
	*first = *last = -1;
	for (int i = 0; i < nlines; i++) {
		long long f;
		int item;
		char task[200];
		if (sscanf(lines[i], "%lld %d %199s", &f, &item, task) != 3 || f != fire || !strstr(task, id)) continue;
		mask |= 1 << item;
		if (*first < 0) *first = i;
		*last = i;
	}
	return mask;
}

/* fire ids of run records above `after`, distinct, ascending (at most max) */
static int fires_after(long long after, long long *out, int max)
{
	int n = 0;
	for (int i = 0; i < nlines; i++) {
		long long f;
		int item;
		if (sscanf(lines[i], "%lld %d", &f, &item) != 2 || f <= after) continue;
		int seen = 0;
		for (int k = 0; k < n; k++) seen |= out[k] == f;
		if (!seen && n < max) out[n++] = f;
	}
	for (int a = 0; a < n; a++)
		for (int b = a + 1; b < n; b++)
			if (out[b] < out[a]) {
				long long t = out[a];
				out[a] = out[b];
				out[b] = t;
			}
	return n;
}

static int lines_with(const char *path, const char *needle)
{
	return tsup_count_lines(path, needle);
}

int main(void)
{
	tlib_init(60);
	tzkup_start(&u, 200, "t81", 3000);
	const char *rec = tsup_rec_script();
	char lsh[400], r_ls[400], r_fb[400], r_fa[400], r_to[400], l_fa[400], jobs[8192], sup_a[200], sup_b[200];
	tlib_script(lsh, sizeof lsh, "listen.sh", listen_sh);
	snprintf(r_ls, sizeof r_ls, "%s/runs-ls", tlib_tmpdir());
	snprintf(r_fb, sizeof r_fb, "%s/runs-fb", tlib_tmpdir());
	snprintf(r_fa, sizeof r_fa, "%s/runs-fa", tlib_tmpdir());
	snprintf(l_fa, sizeof l_fa, "%s/listen-fa", tlib_tmpdir());
	snprintf(r_to, sizeof r_to, "%s/runs-to", tlib_tmpdir());
	/* ls: both listeners write to the runs file, so that its order is the order of events */
	snprintf(jobs, sizeof jobs,
	         "  ls:\n    type: script\n    cron: \"0/2 * * * * ?\"\n    shardingTotalCount: 4\n"
	         "    shardingItemParameters: \"0=a,1=b,2=c,3=d\"\n    jobParameter: jp\n"
	         "    props: {script.command.line: \"%s %s\", ejob.listener.before: \"%s %s before\", "
	         "ejob.listener.after: \"%s %s after\"}\n"
	         "  fb:\n    type: script\n    cron: \"1/2 * * * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s\", ejob.listener.before: \"sh -c 'exit 3'\"}\n"
	         "  fa:\n    type: script\n    cron: \"1/2 * * * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s\", ejob.listener.after: \"%s %s after 5\"}\n"
	         "  to:\n    type: script\n    cron: \"1/2 * * * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s\", ejob.listener.before: \"sh -c 'sleep 30'\", "
	         "ejob.listener.timeoutSeconds: \"1\"}\n",
	         rec, r_ls, lsh, r_ls, lsh, r_ls, rec, r_fb, rec, r_fa, lsh, l_fa, rec, r_to);
	int pa = tzk_free_port(), pb = tzk_free_port();
	snprintf(sup_a, sizeof sup_a, "workers: 4, shutdownGraceSeconds: 0, killGraceSeconds: 1, metrics: \"127.0.0.1:%d\"", pa);
	snprintf(sup_b, sizeof sup_b, "workers: 4, shutdownGraceSeconds: 0, killGraceSeconds: 1, metrics: \"127.0.0.1:%d\"", pb);

	/* ---- an unknown listener prop is refused ---- */
	char bad[600];
	snprintf(bad, sizeof bad, "%s/bad.yaml", tlib_tmpdir());
	const char bad_yaml[] = "regCenter: {serverLists: \"127.0.0.1:1\", namespace: x}\njobs:\n  j:\n    type: script\n"
	                        "    cron: \"0 * * * * ?\"\n    shardingTotalCount: 1\n    props: {script.command.line: \"true\", ejob.listener.afterEach: \"true\"}\n";
	tlib_write_file(bad, bad_yaml, strlen(bad_yaml));
	const char *vargv[] = { BUILT("tools/ejobctl"), "validate", bad, NULL };
	char *out = NULL, *err = NULL;
	int st = tlib_run(vargv, &out, &err);
	const char *said = *err ? err : out;
	if (!ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(said, "props.ejob.listener.afterEach") &&
	        strstr(said, "unknown listener prop") && strstr(said, "ejob.listener.beforeAll, ejob.listener.afterAll"),
	        "ejobctl validate refuses an unknown ejob.listener prop (exit 2, named, the known ones listed)"))
		diag("status %d: %s%s", st, out, err);
	free(out);
	free(err);

	struct tsup a, b;
	tzkup_config(&u, &a, "a", sup_a, jobs);
	tzkup_config(&u, &b, "b", sup_b, jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	tzkup_run(&u, &b, "127.0.0.2");
	int reg = 1;
	const char *names[] = { "ls", "fb", "fa", "to" };
	for (int k = 0; k < 4; k++)
		reg &= tzkup_wait_registered(&u, names[k], a.id, 0, 10000) && tzkup_wait_registered(&u, names[k], b.id, 0, 10000);
	ok(reg, "both supervisors register the four jobs");
	ok(tzkup_wait_owned(&u, "ls", 4, a.id, 2, 10000) && tzkup_wait_owned(&u, "ls", 4, b.id, 2, 10000),
	   "ls: two items each");
	uint64_t epoch = tzkup_epoch(&u, "ls");
	long long since = tlib_wall_ns() / 1000000;

	/* ---- ls: two whole fires after the assignment settled ---- */
	long long fires[64];
	int nf = 0;
	for (uint64_t end = tlib_now_ms() + 12000; tlib_now_ms() < end; usleep(200000)) {
		load(r_ls);
		nf = fires_after(since, fires, 64);
		/* the newest may still run: wait for two before it, and their after lines */
		if (nf >= 3 && lines_with(r_ls, "after after") >= 4) break;
	}
	load(r_ls);
	nf = fires_after(since, fires, 64);
	ok(nf >= 3, "ls: %d fires ran since the assignment settled", nf);
	ok(epoch == tzkup_epoch(&u, "ls"), "ls: the assignment did not change meanwhile");
	int exact = 1, ordered = 1, contexts = 1;
	struct tsup *sup[2] = { &b, &a };        /* b (127.0.0.2) has items 0, 1; a has 2, 3 */
	const char *params = "abcd";
	for (int k = 0; k + 1 < nf && k < 2; k++)
		for (int s = 0; s < 2; s++) {
			const char *id = sup[s]->id;
			char *cb = NULL, *ca = NULL;
			int lb = listener_line("before", fires[k], id, &cb), la = listener_line("after", fires[k], id, &ca);
			int first, last, mask = runs_of(fires[k], id, &first, &last);
			int i0 = s == 0 ? 0 : 2;
			if (lb < 0 || la < 0 || mask != (3 << i0)) {
				exact = 0;
				diag("fire %lld on %s: before line %d, after line %d, items 0x%x", fires[k], id, lb, la, mask);
				continue;
			}
			if (!(lb < first && last < la)) {
				ordered = 0;
				diag("fire %lld on %s: before at %d, items %d..%d, after at %d", fires[k], id, lb, first, last, la);
			}
			char want[1024];
			int n = snprintf(want, sizeof want,
			                 "{\"jobName\":\"ls\",\"taskId\":\"ls@-@%d,%d@-@READY@-@%s\",\"shardingTotalCount\":4,"
			                 "\"jobParameter\":\"jp\",\"shardingItemParameters\":{\"%d\":\"%c\",\"%d\":\"%c\"},"
			                 "\"fireId\":%lld,\"epoch\":%llu,\"source\":\"NORMAL_TRIGGER\"",
			                 i0, i0 + 1, id, i0, params[i0], i0 + 1, params[i0 + 1], fires[k], (unsigned long long)epoch);
			char wa[1100];
			snprintf(want + n, sizeof want - (size_t)n, "}");
			snprintf(wa, sizeof wa, "%.*s,\"succeeded\":[%d,%d],\"failed\":[]}", n, want, i0, i0 + 1);
			if (strcmp(cb, want) || strcmp(ca, wa)) {
				contexts = 0;
				diag("before: %s\n  want: %s\nafter:  %s\n  want: %s", cb, want, ca, wa);
			}
		}
	ok(exact, "ls: each of two fires ran before and after exactly once on each instance, with its items");
	ok(ordered, "ls: before ahead of the items there, after behind them");
	ok(contexts, "ls: both got the fire's exact context JSON (after with the outcomes) and EJOB_LISTENER");

	/* ---- fb: before fails, to: before times out: nothing runs ---- */
	struct tlib_metric_min w = { pa, "ejob_fires_skipped_total{job_name=\"fb\",reason=\"listener\"}", 2 };
	ok(tlib_wait_for(tlib_metric_at_least, &w, 8000), "fb: fires skipped for the listener, counted (%ld)",
	   tlib_metric(pa, w.series));
	ok(tlib_metric(pa, "ejob_listener_runs_total{job_name=\"fb\",kind=\"before\",result=\"failed\"}") >= 2,
	   "fb: its failed before runs counted");
	w = (struct tlib_metric_min){ pa, "ejob_listener_runs_total{job_name=\"to\",kind=\"before\",result=\"timeout\"}", 1 };
	ok(tlib_wait_for(tlib_metric_at_least, &w, 8000),
	   "to: its before past ejob.listener.timeoutSeconds counted as timeout");
	ok(tlib_metric(pa, "ejob_fires_skipped_total{job_name=\"to\",reason=\"listener\"}") >= 1, "to: that fire skipped");
	ok(!tsup_slurp(r_fb) && !tsup_slurp(r_to), "fb, to: no item ran");
	int left = 0;
	for (int i = 0; i < 2; i++) {
		left += tzk_exists(u.zh, tzkup_path(&u, "fb", "sharding/%d/running", i), NULL) == ZOK;
		left += tzk_exists(u.zh, tzkup_path(&u, "to", "sharding/%d/running", i), NULL) == ZOK;
	}
	is_int(left, 0, "fb, to: no running node left");
	ok(tsup_log_count(&a, "job fb: fire ") && tsup_log_count(&a, "its before listener failed (exit 3)"),
	   "a's log says why fb's items do not run");

	/* ---- fa: after fails: the items ran and completed; counted ---- */
	w = (struct tlib_metric_min){ pa, "ejob_listener_runs_total{job_name=\"fa\",kind=\"after\",result=\"failed\"}", 1 };
	ok(tlib_wait_for(tlib_metric_at_least, &w, 8000), "fa: its failed after counted");
	ok(tsup_count_lines(r_fa, "") >= 2 && tzkup_wait_ended(&u, "fa", 0, 5000) && tzkup_wait_ended(&u, "fa", 1, 5000),
	   "fa: its items ran and completed");
	ok(tsup_count_lines(l_fa, "after after") >= 1, "fa: its after ran");

	ok(tsup_stop(&a, SIGTERM, 10000) >= 0 && tsup_stop(&b, SIGTERM, 10000) >= 0, "both supervisors stop");
	for (int i = 0; i < nlines; i++) free(lines[i]);
	tzkup_end(&u);
	return done_testing();
}
