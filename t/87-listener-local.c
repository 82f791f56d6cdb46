/* t/87-listener-local.c: the listeners (props ejob.listener.before, beforeAll, after, afterAll,
 * timeoutSeconds; docs/config.md "Without ZooKeeper") of fires without ZooKeeper, where the one
 * supervisor is the whole cluster, checked by the records the commands and the items append to
 * one file (its order is the order of events), the exit status, /metrics and /status:
 *   - --run: before, then beforeAll, then each item once, then after (with the exact outcomes) and
 *     afterAll, each exactly once with the fire's exact context JSON and EJOB_LISTENER; exit 1
 *     because an item failed; --run JOB:ITEMS names only those items;
 *   - --run with a failing before (nothing else runs), a failing beforeAll (before ran, no item),
 *     a before past ejob.listener.timeoutSeconds (killed, skipped): exit 1, said in the log;
 *   - a SIGTERM during --run's before kills the command and the supervisor exits 1;
 *   - --standalone, a job firing every second: each fire runs before, beforeAll, its items, then
 *     after and afterAll, once per kind, counted in ejob_listener_runs_total; a slow before holds
 *     the fire (the next fire time is skipped as still running); a before past its timeout skips
 *     the fire, counted and shown in /status. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

/* a listener: OUT KIND [EXIT] [sleep=SECS] then the context; appends (after SECS)
 * "KIND $EJOB_LISTENER FIRE EPOCH TAKEOVER CONTEXT" */
static const char listen_sh[] =
	"#!/bin/sh\n"
	"out=$1; kind=$2; shift 2\n"
	"case $1 in [0-9]*) rc=$1; shift;; *) rc=0;; esac\n"
	"case $1 in sleep=*) sleep \"${1#sleep=}\"; shift;; esac\n"
	"echo \"$kind $EJOB_LISTENER $EJOB_FIRE_ID $EJOB_EPOCH $EJOB_LISTENER_TAKEOVER $1\" >> \"$out\"\n"
	"exit $rc\n";

/* a slow listener: OUT KIND SECS then the context; appends "KIND $EJOB_LISTENER FIRE PID", then
 * becomes sleep (that pid) */
static const char slow_sh[] =
	"#!/bin/sh\n"
	"out=$1; kind=$2; secs=$3\n"
	"echo \"$kind $EJOB_LISTENER $EJOB_FIRE_ID $$\" >> \"$out\"\n"
	"exec sleep \"$secs\"\n";

/* an item: OUT FAIL then the sharding context; appends "item ITEM FIRE"; item FAIL exits 1 */
static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"item $EJOB_ITEM $EJOB_FIRE_ID\" >> \"$1\"\n"
	"[ \"$EJOB_ITEM\" != \"$2\" ]\n";

static char lsh[400], ssh[400], ish[400];
#define CMDLEN 1100             /* a listener command line: script, out file, kind, tail */

/* ---- the record file ---- */

#define MAXL 4096
struct rec {
	char kind[16], env[16];
	long long fire;
	const char *ctx;            /* listeners: the context (NULL for slow_sh's and items) */
	int item;                   /* items */
	char *line;
};
static struct rec recs[MAXL];
static int nrecs;

static void load(const char *path)
{
	for (int i = 0; i < nrecs; i++) free(recs[i].line);
	nrecs = 0;
	char *t = tsup_slurp(path);
	for (char *p = t ? strtok(t, "\n") : NULL; p && nrecs < MAXL; p = strtok(NULL, "\n")) {
		struct rec *r = &recs[nrecs];
		memset(r, 0, sizeof *r);
		r->line = strdup(p);
		r->item = -1;
		int off = 0;
		long long epoch, takeover;
		if (sscanf(r->line, "item %d %lld", &r->item, &r->fire) == 2) {
			snprintf(r->kind, sizeof r->kind, "item");
		} else if (sscanf(r->line, "%15s %15s %lld %lld %lld %n", r->kind, r->env, &r->fire, &epoch, &takeover,
		                  &off) == 5 && off > 0) {
			r->ctx = r->line + off;
			/* EJOB_EPOCH and EJOB_LISTENER_TAKEOVER: 0 without ZooKeeper */
			if (epoch != 0 || takeover != 0) snprintf(r->env, sizeof r->env, "bad-env");
		} else if (sscanf(r->line, "%15s %15s %lld", r->kind, r->env, &r->fire) != 3) {
			snprintf(r->kind, sizeof r->kind, "?");
		}
		nrecs++;
	}
	free(t);
}

/* the index of the only record of kind for fire (-1: none, -2: more than one) */
static int only(const char *kind, long long fire)
{
	int at = -1;
	for (int i = 0; i < nrecs; i++)
		if (!strcmp(recs[i].kind, kind) && recs[i].fire == fire) {
			if (at != -1) return -2;
			at = i;
		}
	return at;
}

static int count_kind(const char *kind)
{
	int n = 0;
	for (int i = 0; i < nrecs; i++) n += !strcmp(recs[i].kind, kind);
	return n;
}

static void dump(const char *why)
{
	diag("%s: %d records", why, nrecs);
	for (int i = 0; i < nrecs; i++) diag("  %s", recs[i].line);
}

/* the contexts: before/after's (items ascending, params "a", "b", then none) and the once-per-fire one */
static void want_ctx(char *buf, size_t len, const char *job, const int *items, int n, int total, const char *id,
                     long long fire, const char *source, const char *outcomes)
{
	int off = snprintf(buf, len, "{\"jobName\":\"%s\",\"taskId\":\"%s@-@", job, job);
	for (int i = 0; i < n; i++) off += snprintf(buf + off, len - (size_t)off, "%s%d", i ? "," : "", items[i]);
	off += snprintf(buf + off, len - (size_t)off, "@-@READY@-@%s\",\"shardingTotalCount\":%d,\"jobParameter\":\"jp\","
	                "\"shardingItemParameters\":{", id, total);
	for (int i = 0; i < n; i++)
		off += snprintf(buf + off, len - (size_t)off, "%s\"%d\":\"%s\"", i ? "," : "", items[i],
		                items[i] == 0 ? "a" : items[i] == 1 ? "b" : "");
	snprintf(buf + off, len - (size_t)off, "},\"fireId\":%lld,\"epoch\":0,\"source\":\"%s\"%s}", fire, source,
	         outcomes ? outcomes : "");
}

static void want_once(char *buf, size_t len, const char *job, int total, long long fire)
{
	snprintf(buf, len, "{\"jobName\":\"%s\",\"shardingTotalCount\":%d,\"jobParameter\":\"jp\",\"fireId\":%lld,"
	         "\"epoch\":0,\"takeover\":false}", job, total, fire);
}

/* ---- metrics ---- */

/* ---- --run ---- */

static const char yaml_head[] =
	"regCenter: {serverLists: \"127.0.0.1:1\", namespace: t87}\n"
	"supervisor: {workers: 2, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 0, killGraceSeconds: 1%s}\n"
	"jobs:\n";

/* a job J of `total` items whose item `fail` fails, writing to out; listeners as given ("" for none);
 * opts: "every" fires every second (else never: --run only), "nomisfire" sets misfire: false */
static int job_yaml(char *buf, size_t len, const char *j, int total, int fail, const char *out, const char *before,
                    const char *before_all, const char *after, const char *after_all, const char *opts)
{
	return snprintf(buf, len,
	                "  %s:\n    type: script\n    cron: \"%s\"\n    shardingTotalCount: %d\n"
	                "%s    jobParameter: jp\n%s"
	                "    props:\n      script.command.line: \"%s %s %d\"\n"
	                "      ejob.listener.before: \"%s\"\n      ejob.listener.beforeAll: \"%s\"\n"
	                "      ejob.listener.after: \"%s\"\n      ejob.listener.afterAll: \"%s\"\n",
	                j, opts && strstr(opts, "every") ? "* * * * * ?" : "0 0 0 1 1 ? 2099", total,
	                total > 1 ? "    shardingItemParameters: \"0=a,1=b\"\n" : "",
	                opts && strstr(opts, "nomisfire") ? "    misfire: false\n" : "", ish, out, fail, before, before_all,
	                after, after_all);
}

static void run_config(struct tsup *t, const char *name, const char *jobs)
{
	char yaml[9000];
	int n = snprintf(yaml, sizeof yaml, yaml_head, "");
	snprintf(yaml + n, sizeof yaml - (size_t)n, "%s", jobs);
	tsup_config(t, name, yaml);
}

static void cmd(char *buf, size_t len, const char *script, const char *out, const char *kind, const char *tail)
{
	snprintf(buf, len, "%s %s %s%s%s", script, out, kind, tail ? " " : "", tail ? tail : "");
}

/* --run three[:ITEMS]: 3 items, item 2 fails, every listener */
static void test_run_order(const char *name, const char *spec, const int *items, int n, const char *outcomes)
{
	char out[600], b[CMDLEN], ba[CMDLEN], a[CMDLEN], aa[CMDLEN], jobs[8192];
	snprintf(out, sizeof out, "%s/%s.rec", tlib_tmpdir(), name);
	cmd(b, sizeof b, lsh, out, "before", NULL);
	cmd(ba, sizeof ba, lsh, out, "beforeAll", NULL);
	cmd(a, sizeof a, lsh, out, "after", NULL);
	/* it takes a while: --run waits for it before it exits (else its record would never come) */
	cmd(aa, sizeof aa, lsh, out, "afterAll", "sleep=0.5");
	job_yaml(jobs, sizeof jobs, "three", 3, 2, out, b, ba, a, aa, NULL);
	struct tsup t;
	run_config(&t, name, jobs);
	const char *args[] = { "--run", spec, "--ip", "127.0.0.7", NULL };
	int st = tsup_run(&t, args, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--run %s: exit 1, item 2 failed (status 0x%x)", spec, st);
	is_int(tsup_log_count(&t, "--run: job three: 1 of "), 1, "--run %s: the log says item 2 failed", spec);

	load(out);
	long long fire = nrecs ? recs[0].fire : -1;
	int okorder = nrecs == 4 + n && !strcmp(recs[0].kind, "before") && !strcmp(recs[1].kind, "beforeAll");
	unsigned mask = 0, want_mask = 0;
	for (int i = 0; i < n; i++) want_mask |= 1u << items[i];
	for (int i = 2; okorder && i < 2 + n; i++) {
		okorder &= !strcmp(recs[i].kind, "item") && !(mask & 1u << recs[i].item);
		mask |= 1u << recs[i].item;
	}
	okorder &= mask == want_mask && only("after", fire) >= 2 + n && only("afterAll", fire) >= 2 + n;
	/* (--run exited after its afterAll, which wrote last) */
	for (int i = 0; i < nrecs; i++) okorder &= recs[i].fire == fire;
	if (!ok(okorder, "--run %s: before, beforeAll, then each item once, then after and afterAll, one fire id", spec))
		dump("records");

	char wb[1024], wa[1100], wo[512];
	want_ctx(wb, sizeof wb, "three", items, n, 3, t.id, fire, "NORMAL_TRIGGER", NULL);
	want_ctx(wa, sizeof wa, "three", items, n, 3, t.id, fire, "NORMAL_TRIGGER", outcomes);
	want_once(wo, sizeof wo, "three", 3, fire);
	const char *kinds[4] = { "before", "beforeAll", "after", "afterAll" }, *want[4] = { wb, wo, wa, wo };
	for (int k = 0; k < 4; k++) {
		int at = only(kinds[k], fire);
		const struct rec *r = at >= 0 ? &recs[at] : NULL;
		if (!ok(r && r->ctx && !strcmp(r->ctx, want[k]) && !strcmp(r->env, kinds[k]),
		        "--run %s: %s got the exact context (EJOB_LISTENER=%s, EJOB_EPOCH=0)", spec, kinds[k], kinds[k]))
			diag("got:  %s\nwant: %s", r ? r->line : "(none)", want[k]);
	}
}

/* --run of a job whose before (or beforeAll) fails: nothing runs after it, exit 1 */
static void test_run_fails(const char *which)
{
	int ba_fails = !strcmp(which, "beforeAll");
	char out[600], b[CMDLEN], ba[CMDLEN], a[CMDLEN], aa[CMDLEN], jobs[8192], said[200];
	snprintf(out, sizeof out, "%s/fail-%s.rec", tlib_tmpdir(), which);
	cmd(b, sizeof b, lsh, out, "before", ba_fails ? NULL : "3");
	cmd(ba, sizeof ba, lsh, out, "beforeAll", ba_fails ? "4" : NULL);
	cmd(a, sizeof a, lsh, out, "after", NULL);
	cmd(aa, sizeof aa, lsh, out, "afterAll", NULL);
	job_yaml(jobs, sizeof jobs, "f", 3, -1, out, b, ba, a, aa, NULL);
	struct tsup t;
	run_config(&t, ba_fails ? "fail-ba" : "fail-b", jobs);
	const char *args[] = { "--run", "f", NULL };
	int st = tsup_run(&t, args, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--run with a failing %s: exit 1 (status 0x%x)", which, st);
	load(out);
	int good = ba_fails ? nrecs == 2 && !strcmp(recs[0].kind, "before") && !strcmp(recs[1].kind, "beforeAll")
	                    : nrecs == 1 && !strcmp(recs[0].kind, "before");
	if (!ok(good, "--run with a failing %s: %s, no item, no after, no afterAll", which,
	        ba_fails ? "only before and beforeAll ran" : "only before ran"))
		dump("records");
	snprintf(said, sizeof said,
	         "--run: job f: its %s listener (ejob.listener.%s) failed (exit %d): none of its 3 items ran",
	         which, which, ba_fails ? 4 : 3);
	is_int(tsup_log_count(&t, said), 1, "--run with a failing %s: the log says so", which);
}

/* --run whose before outlasts ejob.listener.timeoutSeconds: killed, counted as timeout, skipped */
static void test_run_timeout(void)
{
	char out[600], b[CMDLEN], ba[CMDLEN], a[CMDLEN], aa[CMDLEN], jobs[8192];
	snprintf(out, sizeof out, "%s/timeout.rec", tlib_tmpdir());
	cmd(b, sizeof b, ssh, out, "before", "30");
	cmd(ba, sizeof ba, lsh, out, "beforeAll", NULL);
	cmd(a, sizeof a, lsh, out, "after", NULL);
	cmd(aa, sizeof aa, lsh, out, "afterAll", NULL);
	job_yaml(jobs, sizeof jobs, "to", 2, -1, out, b, ba, a, aa, NULL);
	size_t n = strlen(jobs);
	snprintf(jobs + n, sizeof jobs - n, "      ejob.listener.timeoutSeconds: \"1\"\n");
	struct tsup t;
	run_config(&t, "timeout", jobs);
	const char *args[] = { "--run", "to", NULL };
	uint64_t t0 = tlib_now_ms();
	int st = tsup_run(&t, args, 30000);
	uint64_t took = tlib_now_ms() - t0;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1 && took < 10000,
	   "--run, before past its 1 s timeout: exit 1 after %llu ms (status 0x%x)", (unsigned long long)took, st);
	load(out);
	pid_t pid = nrecs ? (pid_t)atoi(strrchr(recs[0].line, ' ') + 1) : 0;
	if (!ok(nrecs == 1 && !strcmp(recs[0].kind, "before"), "--run, before timed out: nothing else ran"))
		dump("records");
	ok(pid > 0 && !tsup_alive(pid), "--run, before timed out: the command was killed");
	ok(tsup_log_count(&t, "--run: job to: its before listener (ejob.listener.before) failed (timed out after ") == 1,
	   "--run, before timed out: the log says it timed out and no item ran");
}

/* SIGTERM while --run's before runs: the command is killed, the supervisor exits 1 */
static void test_run_term(void)
{
	char out[600], b[CMDLEN], ba[CMDLEN], a[CMDLEN], aa[CMDLEN], jobs[8192];
	snprintf(out, sizeof out, "%s/term.rec", tlib_tmpdir());
	cmd(b, sizeof b, ssh, out, "before", "30");
	cmd(ba, sizeof ba, lsh, out, "beforeAll", NULL);
	cmd(a, sizeof a, lsh, out, "after", NULL);
	cmd(aa, sizeof aa, lsh, out, "afterAll", NULL);
	job_yaml(jobs, sizeof jobs, "term", 2, -1, out, b, ba, a, aa, NULL);
	struct tsup t;
	run_config(&t, "term", jobs);
	const char *args[] = { "--run", "term", NULL };
	tsup_start(&t, args);
	int started = tsup_wait_lines(out, "before", 1, 10000) && tsup_wait_handles(&t, SIGTERM, 10000);
	load(out);
	pid_t pid = nrecs ? (pid_t)atoi(strrchr(recs[0].line, ' ') + 1) : 0;
	ok(started && pid > 0 && tsup_alive(pid), "--run: its before runs (pid %d)", (int)pid);
	int st = tsup_stop(&t, SIGTERM, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "SIGTERM during --run's before: exit 1 (status 0x%x)", st);
	int gone = 0;
	for (uint64_t end = tlib_now_ms() + 3000; !gone && tlib_now_ms() < end; usleep(10000)) gone = !tsup_alive(pid);
	ok(gone, "SIGTERM during --run's before: the command is killed");
	load(out);
	if (!ok(nrecs == 1, "SIGTERM during --run's before: nothing else ran")) dump("records");
}

/* ---- --standalone ---- */

static void test_standalone(void)
{
	char ev[600], sl[600], st_[600], b[CMDLEN], ba[CMDLEN], a[CMDLEN], aa[CMDLEN], jobs[16384], yaml[17000];
	snprintf(ev, sizeof ev, "%s/every.rec", tlib_tmpdir());
	snprintf(sl, sizeof sl, "%s/slow.rec", tlib_tmpdir());
	snprintf(st_, sizeof st_, "%s/sto.rec", tlib_tmpdir());
	size_t n = 0;
	cmd(b, sizeof b, lsh, ev, "before", NULL);
	cmd(ba, sizeof ba, lsh, ev, "beforeAll", NULL);
	cmd(a, sizeof a, lsh, ev, "after", NULL);
	cmd(aa, sizeof aa, lsh, ev, "afterAll", NULL);
	n += (size_t)job_yaml(jobs + n, sizeof jobs - n, "every", 2, -1, ev, b, ba, a, aa, "every");
	/* slow: its before takes 2.5 s, and fires come every second */
	cmd(b, sizeof b, ssh, sl, "before", "2.5");
	n += (size_t)job_yaml(jobs + n, sizeof jobs - n, "slow", 1, -1, sl, b, "", "", "", "every nomisfire");
	/* sto: its before outlasts its 1 s timeout */
	cmd(b, sizeof b, ssh, st_, "before", "30");
	n += (size_t)job_yaml(jobs + n, sizeof jobs - n, "sto", 1, -1, st_, b, "", "", "", "every nomisfire");
	snprintf(jobs + n, sizeof jobs - n, "      ejob.listener.timeoutSeconds: \"1\"\n");
	int port = tzk_free_port();
	char sup[64];
	snprintf(sup, sizeof sup, ", metrics: \"127.0.0.1:%d\"", port);
	int k = snprintf(yaml, sizeof yaml, yaml_head, sup);
	snprintf(yaml + k, sizeof yaml - (size_t)k, "%s", jobs);
	struct tsup t;
	tsup_config(&t, "standalone", yaml);
	const char *args[] = { "--standalone", "--ip", "127.0.0.8", NULL };
	if (tsup_start(&t, args) <= 0) BAIL_OUT("cannot start the supervisor");

	/* every: four whole fires (the newest may still run) */
	long long fires[64];
	int nf = 0;
	for (uint64_t end = tlib_now_ms() + 8000; tlib_now_ms() < end; usleep(100000)) {
		load(ev);
		if (count_kind("afterAll") >= 4 && count_kind("after") >= 4) break;
	}
	load(ev);
	for (int i = 0; i < nrecs && nf < 64; i++)
		if (!strcmp(recs[i].kind, "afterAll") || !strcmp(recs[i].kind, "after")) {
			int seen = 0;
			for (int f = 0; f < nf; f++) seen |= fires[f] == recs[i].fire;
			if (!seen && only("afterAll", recs[i].fire) >= 0 && only("after", recs[i].fire) >= 0)
				fires[nf++] = recs[i].fire;
		}
	ok(nf >= 3, "--standalone: %d fires of 'every' ended with their after and afterAll", nf);
	int exact = 1, ordered = 1, contexts = 1;
	const int items[2] = { 0, 1 };
	for (int f = 0; f < nf; f++) {
		int lb = only("before", fires[f]), lba = only("beforeAll", fires[f]), la = only("after", fires[f]),
		    laa = only("afterAll", fires[f]), first = -1, last = -1, mask = 0, twice = 0;
		for (int i = 0; i < nrecs; i++)
			if (!strcmp(recs[i].kind, "item") && recs[i].fire == fires[f]) {
				twice |= mask & 1 << recs[i].item;
				mask |= 1 << recs[i].item;
				if (first < 0) first = i;
				last = i;
			}
		if (lb < 0 || lba < 0 || la < 0 || laa < 0 || mask != 3 || twice) {
			exact = 0;
			diag("fire %lld: before %d, beforeAll %d, after %d, afterAll %d, items 0x%x%s", fires[f], lb, lba, la,
			     laa, mask, twice ? " (one twice)" : "");
			continue;
		}
		if (!(lb < lba && lba < first && last < la && last < laa)) {
			ordered = 0;
			diag("fire %lld: before %d, beforeAll %d, items %d..%d, after %d, afterAll %d", fires[f], lb, lba, first,
			     last, la, laa);
		}
		/* a fire that came while the previous one still ran is its catch-up: MISFIRE */
		const char *src = strstr(recs[lb].ctx, "\"MISFIRE\"") ? "MISFIRE" : "NORMAL_TRIGGER";
		char wb[1024], wa[1100], wo[512];
		want_ctx(wb, sizeof wb, "every", items, 2, 2, t.id, fires[f], src, NULL);
		want_ctx(wa, sizeof wa, "every", items, 2, 2, t.id, fires[f], src, ",\"succeeded\":[0,1],\"failed\":[]");
		want_once(wo, sizeof wo, "every", 2, fires[f]);
		const struct rec *r[4] = { &recs[lb], &recs[lba], &recs[la], &recs[laa] };
		const char *want[4] = { wb, wo, wa, wo };
		for (int q = 0; q < 4; q++)
			if (!r[q]->ctx || strcmp(r[q]->ctx, want[q]) || strcmp(r[q]->env, r[q]->kind)) {
				contexts = 0;
				diag("got:  %s\nwant: %s", r[q]->line, want[q]);
			}
	}
	if (!ok(exact, "--standalone: each fire ran before, beforeAll, after and afterAll once, and each item once"))
		dump("records");
	ok(ordered, "--standalone: before, then beforeAll, then the items, then after and afterAll");
	ok(contexts, "--standalone: each got the fire's exact context (EJOB_LISTENER, epoch 0)");

	struct tlib_metric_min w = { port, "ejob_listener_runs_total{job_name=\"every\",kind=\"beforeAll\",result=\"ok\"}",
	                             nf };
	ok(tlib_wait_for(tlib_metric_at_least, &w, 5000), "--standalone: beforeAll runs counted (%ld for %d fires)",
	   tlib_metric(port, w.series), nf);
	w.series = "ejob_listener_runs_total{job_name=\"every\",kind=\"afterAll\",result=\"ok\"}";
	ok(tlib_wait_for(tlib_metric_at_least, &w, 5000), "--standalone: afterAll runs counted (%ld)",
	   tlib_metric(port, w.series));

	/* slow: the fire counts as running while its before runs */
	w = (struct tlib_metric_min){ port, "ejob_fires_skipped_total{job_name=\"slow\",reason=\"still_running\"}", 1 };
	ok(tlib_wait_for(tlib_metric_at_least, &w, 6000), "--standalone: fire times that come while a slow before runs are "
	   "skipped as still running (%ld)", tlib_metric(port, w.series));
	tsup_wait_lines(sl, "item", 1, 6000);
	load(sl);
	int item_after_before = 0, item_alone = 0;
	for (int i = 0; i < nrecs; i++) {
		if (strcmp(recs[i].kind, "item")) continue;
		int at = only("before", recs[i].fire);
		if (at >= 0 && at < i) item_after_before++;
		else item_alone++;
	}
	if (!ok(item_after_before >= 1 && !item_alone, "--standalone: slow's item runs after its before ended"))
		dump("records");

	/* sto: before past its timeout: the fire is skipped, counted, in /status */
	w = (struct tlib_metric_min){ port, "ejob_listener_runs_total{job_name=\"sto\",kind=\"before\",result=\"timeout\"}",
	                              1 };
	ok(tlib_wait_for(tlib_metric_at_least, &w, 6000), "--standalone: a before past its timeout counts as timeout");
	ok(tlib_metric(port, "ejob_fires_skipped_total{job_name=\"sto\",reason=\"listener\"}") >= 1,
	   "--standalone: that fire is skipped, reason listener");
	char *status = NULL;
	tlib_http_get(port, "/status", &status);
	ok(status &&
	   strstr(status, "\"type\":\"listener\",\"job\":\"sto\",\"reason\":\"before\",\"detail\":\"timed out after ") &&
	   strstr(status, "\"type\":\"fire_skipped\",\"job\":\"sto\",\"reason\":\"listener\",\"detail\":\"the before "
	          "listener (ejob.listener.before) failed: timed out after "),
	   "--standalone: /status shows the timed-out before and the skipped fire");
	free(status);
	load(st_);
	ok(count_kind("before") >= 1 && count_kind("item") == 0, "--standalone: sto's items never ran");

	int code = tsup_stop(&t, SIGTERM, 15000);
	ok(WIFEXITED(code) && WEXITSTATUS(code) == 0, "--standalone: stops cleanly (status 0x%x)", code);
	is_int(tsup_log_count(&t, "do not run without ZooKeeper"), 0, "--standalone: no 'listeners do not run' warning");
}

int main(void)
{
	tlib_init(120);
	tlib_script(lsh, sizeof lsh, "listen.sh", listen_sh);
	tlib_script(ssh, sizeof ssh, "slow.sh", slow_sh);
	tlib_script(ish, sizeof ish, "item.sh", item_sh);

	const int all[3] = { 0, 1, 2 }, some[2] = { 0, 2 };
	test_run_order("run-all", "three", all, 3, ",\"succeeded\":[0,1],\"failed\":[2]");
	test_run_order("run-some", "three:0,2", some, 2, ",\"succeeded\":[0],\"failed\":[2]");
	test_run_fails("before");
	test_run_fails("beforeAll");
	test_run_timeout();
	test_run_term();
	test_standalone();
	for (int i = 0; i < nrecs; i++) free(recs[i].line);
	return done_testing();
}
