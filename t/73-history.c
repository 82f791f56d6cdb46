/* t/73-history.c: the history file (supervisor.history), from real supervisors (--standalone,
 * real workers):
 *   - every attempt of every item is one JSON line with the fields docs/config.md lists, and
 *     each agrees with what the item did: ok (exit 0), failed with exit 3 and retried (attempt 1
 *     not final, attempt 2 final), timed out (ended by a signal: no exit code), crashed (SIGKILL);
 *     each carries the last lines of its output (stdout and stderr, at most 1024 bytes, from a
 *     line start), or null;
 *     the fire ids and items are exactly the runs the job's script recorded;
 *   - the file is rotated past maxBytes (FILE.1, FILE.2, ...): no file over it, no line cut, none
 *     lost while keep allows;
 *   - a history that blocks (a FIFO nobody reads) never delays a fire, and the supervisor still
 *     stops cleanly;
 *   - ejobctl history reads the file back (all, --failed, --item), oldest first by start, with
 *     each fire id, a failure's cause from its exit code and output; says which file an empty
 *     answer read; tells --zk what to give instead; reads escapes as JSON does, and leaves out
 *     a cut or garbage line, saying its file, its line and what is wrong in it. */
#include <errno.h>
#include <inttypes.h>
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

static const char job_sh[] =
	"#!/bin/sh\n"
	"echo \"$EJOB_FIRE_ID $EJOB_ITEM\" >> \"$OUT\"\n"
	"case \"$EJOB_ITEM\" in\n"
	"0) i=0; while [ $i -lt 200 ]; do i=$((i+1)); echo \"line $i of 200\"; done; exit 0;;\n"
	"1) echo \"about to fail\"; sleep 0.1; echo \"it broke at attempt $EJOB_ATTEMPT\" >&2; exit 3;;\n"
	"2) exec sleep 5;;\n"
	"3) kill -KILL $$;;\n"
	"esac\n";


static long long iso_ms(const char *q)    /* "2026-11-24T07:31:51.256Z" */
{
	struct tm tm = { 0 };
	int ms = 0;
	if (sscanf(q, "\"%d-%d-%dT%d:%d:%d.%dZ\"", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
	           &tm.tm_sec, &ms) != 7)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (long long)timegm(&tm) * 1000 + ms;
}

struct rec {
	long long fire;
	int item, attempt, final, exit_code, signal;
	long long start, end, dur;
	char outcome[32], source[32], task[256], instance[96], ip[64], host[128];
	char output[1500];   /* as JSON: "..." or null */
};

static int parse(const char *line, struct rec *r)
{
	char v[300];
	memset(r, 0, sizeof *r);
	int ok = line[0] == '{' && line[strlen(line) - 1] == '}';
	ok = ok && tlib_json_field(line, "fireId", v, sizeof v) && sscanf(v, "%lld", &r->fire) == 1;
	ok = ok && tlib_json_field(line, "item", v, sizeof v) && sscanf(v, "%d", &r->item) == 1;
	ok = ok && tlib_json_field(line, "attempt", v, sizeof v) && sscanf(v, "%d", &r->attempt) == 1;
	ok = ok && tlib_json_field(line, "final", v, sizeof v);
	r->final = !strcmp(v, "true");
	ok = ok && tlib_json_field(line, "exitCode", v, sizeof v);
	r->exit_code = !strcmp(v, "null") ? -1000 : atoi(v);
	ok = ok && tlib_json_field(line, "signal", v, sizeof v);
	r->signal = !strcmp(v, "null") ? 0 : atoi(v);
	ok = ok && tlib_json_field(line, "start", v, sizeof v) && (r->start = iso_ms(v)) > 0;
	ok = ok && tlib_json_field(line, "end", v, sizeof v) && (r->end = iso_ms(v)) > 0;
	ok = ok && tlib_json_field(line, "durationMs", v, sizeof v) && sscanf(v, "%lld", &r->dur) == 1;
	ok = ok && tlib_json_field(line, "outcome", r->outcome, sizeof r->outcome);
	ok = ok && tlib_json_field(line, "source", r->source, sizeof r->source);
	ok = ok && tlib_json_field(line, "taskId", r->task, sizeof r->task);
	ok = ok && tlib_json_field(line, "instance", r->instance, sizeof r->instance);
	ok = ok && tlib_json_field(line, "ip", r->ip, sizeof r->ip);
	ok = ok && tlib_json_field(line, "host", r->host, sizeof r->host);
	ok = ok && tlib_json_field(line, "cause", v, sizeof v) && tlib_json_field(line, "where", v, sizeof v) && tlib_json_field(line, "epoch", v, sizeof v);
	ok = ok && tlib_json_field(line, "output", r->output, sizeof r->output);
	return ok;
}

/* the records of FILE, FILE.1 .. FILE.9 (oldest first); bad lines counted */
static int read_all(const char *path, struct rec *r, int max, int *bad, int *files, long long *biggest)
{
	int n = 0;
	*bad = *files = 0;
	*biggest = 0;
	for (int k = 9; k >= 0; k--) {
		char p[720];
		if (k) snprintf(p, sizeof p, "%.700s.%d", path, k);
		else snprintf(p, sizeof p, "%s", path);
		char *t = tsup_slurp(p);
		if (!t) continue;
		(*files)++;
		if ((long long)strlen(t) > *biggest) *biggest = (long long)strlen(t);
		if (*t && t[strlen(t) - 1] != '\n') (*bad)++;
		for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n")) {
			if (n < max && parse(l, &r[n])) n++;
			else (*bad)++;
		}
		free(t);
	}
	return n;
}

static const struct rec *find(const struct rec *r, int n, long long fire, int item, int attempt)
{
	for (int i = 0; i < n; i++)
		if (r[i].fire == fire && r[i].item == item && r[i].attempt == attempt) return &r[i];
	return NULL;
}

int main(void)
{
	tlib_init(60);
	setenv("EJOB_CONFIG", "", 1);     /* no /etc/ejob/ejob.yaml of this machine */
	static struct tsup a, b;
	char yaml[2048], sh[700], runs[700], hist[700], fifo[700], bruns[700];

	/* a: the history of a job whose items end in every way */
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t73}\n"
	         "supervisor: {workers: 4, attachSocket: \"@SOCK@\", killGraceSeconds: 1,\n"
	         "             history: {file: \"@DIR@/hist.jsonl\", maxBytes: 4096, keep: 9}}\n"
	         "jobs:\n"
	         "  h:\n"
	         "    type: script\n"
	         "    cron: \"*/2 * * * * ?\"\n"
	         "    shardingTotalCount: 4\n"
	         "    timeoutSeconds: 1\n"
	         "    maxRetries: 1\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=@DIR@/runs @DIR@/job.sh\"}\n");
	tsup_config(&a, "a", yaml);
	snprintf(sh, sizeof sh, "%s/job.sh", a.dir);
	tlib_write_file(sh, job_sh, sizeof job_sh - 1);
	chmod(sh, 0755);
	snprintf(runs, sizeof runs, "%s/runs", a.dir);
	snprintf(hist, sizeof hist, "%s/hist.jsonl", a.dir);

	/* b: its history is a FIFO nobody reads: the sink's thread blocks in open() for good */
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t73}\n"
	         "supervisor: {workers: 2, attachSocket: \"@SOCK@\", history: {file: \"@DIR@/fifo\"}}\n"
	         "jobs:\n"
	         "  s:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=@DIR@/runs @DIR@/job.sh\"}\n");
	tsup_config(&b, "b", yaml);
	snprintf(sh, sizeof sh, "%s/job.sh", b.dir);
	tlib_write_file(sh, job_sh, sizeof job_sh - 1);
	chmod(sh, 0755);
	snprintf(fifo, sizeof fifo, "%s/fifo", b.dir);
	if (mkfifo(fifo, 0600) != 0) BAIL_OUT("mkfifo %s: %s", fifo, strerror(errno));
	snprintf(bruns, sizeof bruns, "%s/runs", b.dir);

	const char *args[] = { "--standalone", NULL };
	if (tsup_start(&a, args) <= 0 || tsup_start(&b, args) <= 0) BAIL_OUT("cannot start the supervisors");

	/* b: fires go on every second while its history is stuck */
	ok(tsup_wait_lines(bruns, " 0", 4, 8000), "a supervisor whose history blocks keeps firing (4 fires)");
	uint64_t t0 = tlib_now_ms();
	int st = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "  and stops cleanly (status 0x%x)", st);
	ok(tlib_now_ms() - t0 < 8000, "  within the 5 s it gives its history (%.1fs)", (double)(tlib_now_ms() - t0) / 1000);

	/* a: 3 fires (items 0 and 3 end at once, 1 twice, 2 after its 1 s timeout) */
	tsup_wait_lines(runs, " 0", 3, 10000);
	usleep(1800000);
	st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the supervisor stops cleanly (status 0x%x)", st);

	static struct rec r[256];
	int bad, files;
	long long biggest;
	int n = read_all(hist, r, 256, &bad, &files, &biggest);
	is_int(bad, 0, "every line of the history is a whole record (%d records in %d files)", n, files);
	ok(files >= 2 && biggest <= 4096, "  rotated past maxBytes: %d files, the biggest %lld bytes", files, biggest);

	/* each run the script recorded has its record, and each record its run */
	char *t = tsup_slurp(runs);
	int nrun = 0, missing = 0;
	long long fires[64];
	int nfires = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		int item;
		if (sscanf(l, "%lld %d", &f, &item) != 2) continue;
		nrun++;
		int attempt = 1;       /* a retried item records a run per attempt */
		for (char *m = t; m < l; m += strlen(m) + 1) {
			long long f2;
			int i2;
			if (sscanf(m, "%lld %d", &f2, &i2) == 2 && f2 == f && i2 == item) attempt++;
		}
		if (!find(r, n, f, item, attempt)) missing++;
		int seen = 0;
		for (int k = 0; k < nfires; k++) seen |= fires[k] == f;
		if (!seen && nfires < 64) fires[nfires++] = f;
	}
	free(t);
	is_int(missing, 0, "every run of the job (%d) has its record", nrun);
	is_int(n, nrun, "  and there is no other record");

	/* one fire, field by field */
	char host[256] = "";
	gethostname(host, sizeof host);
	char pid[32], task[300], inst[120];
	snprintf(pid, sizeof pid, "@-@%d\"", (int)a.pid);
	long long f = nfires ? fires[0] : -1;
	const struct rec *r0 = find(r, n, f, 0, 1), *r1 = find(r, n, f, 1, 1), *r1b = find(r, n, f, 1, 2),
	                 *r2 = find(r, n, f, 2, 1), *r3 = find(r, n, f, 3, 1);
	ok(r0 && r1 && r1b && r2 && r3, "fire %lld: a record of each attempt", f);
	if (!(r0 && r1 && r1b && r2 && r3)) BAIL_OUT("records missing");
	ok(!strcmp(r0->outcome, "\"ok\"") && r0->exit_code == 0 && !r0->signal && r0->final, "item 0: ok, exit 0, final");
	ok(!strcmp(r1->outcome, "\"failed\"") && r1->exit_code == 3 && !r1->final, "item 1, attempt 1: failed, exit 3, "
	   "not final (it is retried)");
	ok(!strcmp(r1b->outcome, "\"failed\"") && r1b->exit_code == 3 && r1b->final, "item 1, attempt 2: failed, final");
	ok(!strcmp(r2->outcome, "\"timeout\"") && r2->exit_code == -1000 && r2->signal > 0 && !r2->final &&
	   r2->dur >= 1000 && r2->dur < 2600, "item 2: timeout after its 1 s, ended by signal %d, no exit code, retried "
	   "(%lld ms)", r2->signal, r2->dur);
	ok(r3->signal == 9 && r3->exit_code == -1000 && !strcmp(r3->outcome, "\"crashed\""), "item 3: killed by "
	   "signal 9: crashed");
	const struct rec *all[] = { r0, r1, r1b, r2, r3 };
	int fields = 1;
	for (size_t k = 0; k < 5; k++) {
		const struct rec *x = all[k];
		snprintf(inst, sizeof inst, "%.*s", (int)strlen(x->instance), x->instance);
		snprintf(task, sizeof task, "\"h@-@0,1,2,3@-@READY@-@%.*s\"", (int)strlen(x->instance) - 2, x->instance + 1);
		fields &= !strcmp(x->task, task) && strstr(x->instance, pid) != NULL && !strncmp(x->instance + 1, x->ip + 1,
		          strlen(x->ip) - 2) && !strncmp(x->host + 1, host, strlen(host)) &&
		          !strcmp(x->source, "\"NORMAL_TRIGGER\"") && x->start <= x->end &&
		          llabs(x->end - x->start - x->dur) <= 2 && x->start >= f;
	}
	ok(fields, "each names the taskId, instance, ip and host, source NORMAL_TRIGGER, and start + duration = end");

	/* the output: stdout and stderr as they came; of a long one the last 1024 bytes, from a line */
	is_str(r1->output, "\"about to fail\\nit broke at attempt 1\\n\"", "item 1's record has its output, "
	       "stdout and stderr");
	is_str(r1b->output, "\"about to fail\\nit broke at attempt 2\\n\"", "  and its retry's record its own");
	size_t ol = strlen(r0->output), esc = 0;
	for (const char *p = r0->output; (p = strstr(p, "\\n")); p += 2) esc++;
	const char *tail = "line 200 of 200\\n\"";
	ok(!strncmp(r0->output, "\"line ", 6) && ol > strlen(tail) && !strcmp(r0->output + ol - strlen(tail), tail) &&
	   ol - 2 - esc <= 1024 && ol - 2 - esc > 900, "item 0 wrote 200 lines: its record has the last of them, "
	   "from a line start, %zu bytes", ol - 2 - esc);
	is_str(r2->output, "null", "item 2 wrote nothing: output null");

	/* ejobctl history reads them back: every record, the failed ones, one item's */
	int nfail = 0, nitem1 = 0;
	for (int i = 0; i < n; i++) nfail += strcmp(r[i].outcome, "\"ok\"") != 0, nitem1 += r[i].item == 1;
	const struct { const char *opt1, *opt2; int want; const char *what; } hq[] = {
		{ "--json", NULL, n, "every record" },
		{ "--failed", "--json", nfail, "--failed: those that did not succeed" },
		{ "--item", "1", nitem1, "--item 1: item 1's" },
	};
	for (size_t k = 0; k < 3; k++) {
		char *out = NULL, *err = NULL;
		const char *hargv[] = { BUILT("tools/ejobctl"), "history", "h", "--file", hist, hq[k].opt1, hq[k].opt2,
		                        k == 2 ? "--json" : NULL, NULL };
		int hs = tlib_run(hargv, &out, &err);
		int got = 0;
		for (const char *p = out; p && (p = strstr(p, "\"start\":")); p++) got++;
		ok(WIFEXITED(hs) && WEXITSTATUS(hs) == 0 && got == hq[k].want, "ejobctl history h %s: %d records (%d)",
		   hq[k].what, got, hq[k].want);
		if (k == 0)
			ok(out && strstr(out, "\"output\":\"about to fail\\nit broke at attempt 2\\n\"") &&
			   strstr(out, "\"output\":null"), "  with each one's output (null when it wrote nothing)");
		free(out), free(err);
	}

	/* issue 25: oldest first by start (the file is in end order: item 2 ends after item 1's retry
	 * began), the fire id in --json and in a FIRE column, a failure's CAUSE from how it ended */
	char *out = NULL, *err = NULL;
	const char *jargv[] = { BUILT("tools/ejobctl"), "history", "h", "--file", hist, "--json", NULL };
	int hs = tlib_run(jargv, &out, &err);
	int got = 0, sorted = 1, fired = 1;
	long long prev = 0;
	for (const char *p = out; p && (p = strstr(p, "{\"start\":")); p++) {
		char v[64];
		long long ms = iso_ms(tlib_json_field(p, "start", v, sizeof v) ? v : "");
		long long fid = -1;
		if (!tlib_json_field(p, "fireId", v, sizeof v) || sscanf(v, "%lld", &fid) != 1) fired = 0;
		int item = -1;
		if (tlib_json_field(p, "item", v, sizeof v)) item = atoi(v);
		if (!find(r, n, fid, item, 1)) fired = 0;
		if (ms < prev) sorted = 0;
		prev = ms;
		got++;
	}
	ok(WIFEXITED(hs) && WEXITSTATUS(hs) == 0 && got == n && sorted, "ejobctl history: every record, oldest first by "
	   "start (%d of %d)", got, n);
	ok(fired, "  each with the fireId of its record");
	free(out), free(err);
	const char *targv[] = { BUILT("tools/ejobctl"), "history", "h", "--file", hist, "--item", "1", NULL };
	hs = tlib_run(targv, &out, &err);
	char fire_cell[64];
	snprintf(fire_cell, sizeof fire_cell, "  %lld  1  ", r1->fire);
	ok(out && !strncmp(out, "START                     FIRE           ITEM  ATTEMPT  SOURCE", 62) &&
	   strstr(out, fire_cell), "  the table has a FIRE column: %.70s", out ? out : "");
	ok(out && strstr(out, "exit 3: it broke at attempt 1\n") && strstr(out, "exit 3: it broke at attempt 2\n"),
	   "  a failure's CAUSE is its exit code and the last line of its output");
	free(out), free(err);

	/* -c FILE: one machine's file, and an empty answer says which and that it is this machine's */
	const char *cargv[] = { BUILT("tools/ejobctl"), "history", "nojob", "-c", a.conf, NULL };
	hs = tlib_run(cargv, &out, &err);
	ok(WIFEXITED(hs) && WEXITSTATUS(hs) == 0 && err && strstr(err, hist) && strstr(err, "one machine") &&
	   strstr(err, "--pg"), "history -c FILE with nothing to show names the file read, this machine's only: %s", err);
	free(out), free(err);
	/* the connection options are taken, and a history asked of ZooKeeper says what to give */
	const char *zargv[] = { BUILT("tools/ejobctl"), "--zk", "127.0.0.1:2181", "--namespace", "t73", "history", "h", NULL };
	hs = tlib_run(zargv, &out, &err);
	ok(WIFEXITED(hs) && WEXITSTATUS(hs) == 2 && err && strstr(err, "ZooKeeper (--zk 127.0.0.1:2181) keeps no "
	   "execution history") && strstr(err, "-c FILE") && strstr(err, "--file HISTORY") && strstr(err, "--pg URL"),
	   "history --zk: exit 2, saying to give -c FILE, --file or --pg: %s", err);
	free(out), free(err);

	/* a file with a cut line and a line that is no record among two records */
	char bf[600];
	snprintf(bf, sizeof bf, "%s/bad.jsonl", tlib_tmpdir());
	const char *lines =
		"{\"start\":\"2026-11-24T07:00:05.000Z\",\"end\":\"2026-11-24T07:00:06.500Z\",\"job\":\"b\",\"fireId\":8,"
		"\"item\":0,\"attempt\":1,\"source\":\"NORMAL_TRIGGER\",\"outcome\":\"failed\",\"exitCode\":3,\"signal\":null,"
		"\"durationMs\":1500,\"instance\":\"i1\",\"host\":\"h1\",\"taskId\":\"t8\",\"cause\":null,"
		"\"output\":\"a\\u00e9\\tb\\u0001\\nlast \\\"q\\\" \\u00ff\\n\"}\n"
		"{\"start\":\"2026-11-24T07:00:07.000Z\",\"job\":\"b\",\"it\n"
		"{\"start\":\"2026-11-24T07:00:08.000Z\",\"job\":\"b\",\"attempt\":1}\n"
		"\n"
		"{\"start\":\"2026-11-24T07:00:01.000Z\",\"end\":null,\"job\":\"b\",\"fireId\":7,\"item\":1,\"attempt\":1,"
		"\"source\":\"MISFIRE\",\"outcome\":\"ok\",\"exitCode\":0,\"signal\":null,\"durationMs\":20,\"instance\":\"i2\","
		"\"host\":\"h2\",\"taskId\":\"t7\",\"cause\":null,\"output\":null}\n";
	tlib_write_file(bf, lines, strlen(lines));
	const char *bargv[] = { BUILT("tools/ejobctl"), "history", "b", "--file", bf, "--json", NULL };
	hs = tlib_run(bargv, &out, &err);
	char want[2048];
	snprintf(want, sizeof want, "{\"job\":\"b\",\"from\":\"file\",\"file\":\"%s\",\"executions\":["
	       "{\"start\":\"2026-11-24T07:00:01.000Z\",\"end\":null,\"fireId\":7,\"item\":1,\"attempt\":1,"
	       "\"source\":\"MISFIRE\",\"outcome\":\"ok\",\"exitCode\":0,\"signal\":null,\"durationMs\":20,"
	       "\"instance\":\"i2\",\"host\":\"h2\",\"taskId\":\"t7\",\"cause\":null,\"output\":null},"
	       "{\"start\":\"2026-11-24T07:00:05.000Z\",\"end\":\"2026-11-24T07:00:06.500Z\",\"fireId\":8,\"item\":0,"
	       "\"attempt\":1,\"source\":\"NORMAL_TRIGGER\",\"outcome\":\"failed\",\"exitCode\":3,\"signal\":null,"
	       "\"durationMs\":1500,\"instance\":\"i1\",\"host\":\"h1\",\"taskId\":\"t8\",\"cause\":null,"
	       "\"output\":\"a\xc3\xa9\\tb\\u0001\\nlast \\\"q\\\" \xc3\xbf\\n\"}]}\n", bf);
	is_str(out, want, "history --json of a file with bad lines: its two records, oldest first, escapes read as JSON's");
	char w2[700], w3[700];
	snprintf(w2, sizeof w2, "ejobctl history: %s:2: not a record (cut or garbage): column ", bf);
	snprintf(w3, sizeof w3, "ejobctl history: %s:3: not a record (cut or garbage): no \"item\" (a number, 0 or "
	         "more): left out\n", bf);
	ok(WIFEXITED(hs) && WEXITSTATUS(hs) == 0 && err && strstr(err, w2) && strstr(err, w3) && !strstr(err, ":4:") &&
	   !strstr(err, ":5:"), "  the cut line and the line without an item are said, by file and line: %s", err);
	free(out), free(err);
	return done_testing();
}
