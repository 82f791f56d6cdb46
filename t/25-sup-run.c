/* t/25-sup-run.c: ejob-supervisor --run with real workers: a 16-item script job runs each item
 * exactly once with exactly ElasticJob's arguments; a native job from build/examples/libhello.so;
 * retries; the exit status says whether every item succeeded, also when a SIGINT (Ctrl-C) stops
 * the supervisor during --run; a job's concurrency (SINGLE_THREAD: one item at a time, as
 * ElasticJob's single-thread executor; concurrency: N; CPU: the pool's workers). */
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/tap.h"

static const char rec_sh[] =
	"#!/bin/sh\n"
	"# one file per run of an item: its arguments and ejob's environment\n"
	"f=\"$OUT/$EJOB_ITEM.$EJOB_ATTEMPT.$$\"\n"
	"{ printf 'argc=%s\\n' \"$#\"\n"
	"  for a; do printf 'arg=%s\\n' \"$a\"; done\n"
	"  printf 'job=%s task=%s item=%s total=%s epoch=%s attempt=%s\\n' \"$EJOB_JOB\" \"$EJOB_TASK_ID\" \\\n"
	"    \"$EJOB_ITEM\" \"$EJOB_TOTAL\" \"$EJOB_EPOCH\" \"$EJOB_ATTEMPT\"\n"
	"} > \"$f.tmp\" && mv \"$f.tmp\" \"$f\"\n";

static const char *const params[16] = {
	"alpha", "beta", "a<b&c", "delta", "", "zeta", "eta", "theta",
	"iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi",
};

static void test_sixteen(void)
{
	struct tsup t;
	char yaml[4096], out[700], sh[700];
	snprintf(yaml, sizeof yaml,
	         "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t25}\n"
	         "supervisor: {workers: 4, attachSocket: \"@SOCK@\"}\n"
	         "jobs:\n"
	         "  sixteen:\n"
	         "    type: script\n"
	         "    cron: \"0 0 * * * ?\"\n"
	         "    shardingTotalCount: 16\n"
	         "    shardingItemParameters: \"0=alpha,1=beta,2=a<b&c,3=delta,5=zeta,6=eta,7=theta,8=iota,9=kappa,"
	         "10=lambda,11=mu,12=nu,13=xi,14=omicron,15=pi\"\n"
	         "    jobParameter: \"p=1\"\n"
	         "    props:\n"
	         "      script.command.line: \"@DIR@/rec.sh --flag 'two words'\"\n");
	tsup_config(&t, "sixteen", yaml);
	snprintf(sh, sizeof sh, "%s/rec.sh", t.dir);
	tlib_write_file(sh, rec_sh, sizeof rec_sh - 1);
	chmod(sh, 0755);
	snprintf(out, sizeof out, "%s/out", t.dir);
	mkdir(out, 0700);
	setenv("OUT", out, 1);

	const char *args[] = { "--run", "sixteen", "--ip", "127.0.0.5", "--workers", "4", NULL };
	int st = tsup_run(&t, args, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--run of a 16-item script job exits 0 (status 0x%x)", st);
	ok(tsup_log_count(&t, "--run: job sixteen: all 16 items succeeded") == 1, "the log says all 16 succeeded");

	char task[512];
	int off = snprintf(task, sizeof task, "sixteen@-@");
	for (int i = 0; i < 16; i++) off += snprintf(task + off, sizeof task - (size_t)off, "%s%d", i ? "," : "", i);
	snprintf(task + off, sizeof task - (size_t)off, "@-@READY@-@127.0.0.5@-@%d", (int)t.pid);

	int runs = 0, exact = 0, argv_ok = 0, env_ok = 0;
	for (int i = 0; i < 16; i++) {
		char cmd[800];
		snprintf(cmd, sizeof cmd, "%s/%d.1.", out, i);
		/* find the file(s) of item i */
		char *list = NULL;
		const char *ls[] = { "/bin/sh", "-c", "ls \"$0\" | grep \"^$1\"", out, NULL, NULL };
		char pat[32];
		snprintf(pat, sizeof pat, "%d\\.", i);
		ls[4] = pat;
		tlib_run(ls, &list, NULL);
		int files = 0;
		char *name = NULL;
		for (char *p = strtok(list, "\n"); p; p = strtok(NULL, "\n")) {
			files++;
			name = p;
		}
		runs += files;
		if (files != 1) {
			diag("item %d ran %d times", i, files);
			free(list);
			continue;
		}
		char path[900];
		snprintf(path, sizeof path, "%s/%s", out, name);
		char *rec = tsup_slurp(path);
		char want[2048];
		/* the JSON exactly as ElasticJob's default Gson writes it: '=' '<' '&' escaped */
		char p_esc[64] = "";
		for (const char *c = params[i], *e; *c; c++) {
			e = *c == '<' ? "\\u003c" : *c == '&' ? "\\u0026" : NULL;
			size_t l = strlen(p_esc);
			if (e) snprintf(p_esc + l, sizeof p_esc - l, "%s", e);
			else snprintf(p_esc + l, sizeof p_esc - l, "%c", *c);
		}
		/* an item without a parameter has a null shardingParameter, which Gson leaves out */
		char pfield[96] = "";
		if (params[i][0]) snprintf(pfield, sizeof pfield, ",\"shardingParameter\":\"%s\"", p_esc);
		snprintf(want, sizeof want,
		         "argc=3\narg=--flag\narg=two words\narg={\"jobName\":\"sixteen\",\"taskId\":\"%s\","
		         "\"shardingTotalCount\":16,\"jobParameter\":\"p\\u003d1\",\"shardingItem\":%d%s}\n"
		         "job=sixteen task=%s item=%d total=16 epoch=0 attempt=1\n",
		         task, i, pfield, task, i);
		if (rec && !strcmp(rec, want)) exact++;
		else diag("item %d got:\n%s\nwanted:\n%s", i, rec ? rec : "(nothing)", want);
		if (rec && !strncmp(rec, "argc=3\narg=--flag\narg=two words\n", 32)) argv_ok++;
		if (rec && strstr(rec, "epoch=0 attempt=1")) env_ok++;
		free(rec);
		free(list);
	}
	is_int(runs, 16, "16 runs in all");
	is_int(argv_ok, 16, "every item got --flag and 'two words' as separate arguments");
	is_int(exact, 16, "every item got exactly ElasticJob's sharding-context JSON and ejob's environment");
	is_int(env_ok, 16, "EJOB_EPOCH and EJOB_ATTEMPT set for every item");
	unsetenv("OUT");
}

static void test_native_and_retries(void)
{
	struct tsup t;
	const char *yaml =
		"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t25b}\n"
		"supervisor: {workers: 2, attachSocket: \"@SOCK@\"}\n"
		"jobs:\n"
		"  nat:\n"
		"    type: native\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 4\n"
		"    shardingItemParameters: \"0=a,1=b,2=c,3=d\"\n"
		"    jobParameter: \"@DIR@/native.log\"\n"
		"    props: {native.library: " BUILT("examples/libhello.so") ", native.symbol: hello_item}\n"
		"  nosym:\n"
		"    type: native\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 1\n"
		"    props: {native.library: " BUILT("examples/libhello.so") ", native.symbol: no_such_symbol}\n"
		"  flaky:\n"
		"    type: script\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 2\n"
		"    maxRetries: 2\n"
		"    props: {script.command.line: \"/bin/sh -c 'echo $EJOB_ITEM $EJOB_ATTEMPT >> @DIR@/flaky; exit 3'\"}\n";
	tsup_config(&t, "native", yaml);
	const char *args[] = { "--run", "nat", "--ip", "127.0.0.6", NULL };
	int st = tsup_run(&t, args, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--run of a native job exits 0");
	char path[700];
	snprintf(path, sizeof path, "%s/native.log", t.dir);
	char *log = tsup_slurp(path);
	int lines = 0;
	for (int i = 0; i < 4; i++) {
		char want[512];
		snprintf(want, sizeof want, "hello job=nat item=%d/4 param=%c epoch=0 ", i, 'a' + i);
		lines += log && strstr(log, want) != NULL;
	}
	is_int(lines, 4, "the native job wrote one line per item with its context");
	is_int(tsup_count_lines(path, "hello job=nat"), 4, "and no more");
	free(log);

	const char *args2[] = { "--run", "nosym", NULL };
	st = tsup_run(&t, args2, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "a native symbol that does not exist: exit 1");
	ok(tsup_log_count(&t, "job nosym item 0 attempt 1: error") == 1 && tsup_log_count(&t, "no_such_symbol") >= 1,
	   "reported as error naming the symbol");

	const char *args3[] = { "--run", "flaky:1", NULL };
	st = tsup_run(&t, args3, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "a failing item: exit 1");
	snprintf(path, sizeof path, "%s/flaky", t.dir);
	char *runs = tsup_slurp(path);
	is_str(runs, "1 1\n1 2\n1 3\n", "item 1 ran 1 + maxRetries (2) times: attempts 1, 2 and 3");
	int zeros = 0;
	for (char *l = runs ? strtok(runs, "\n") : NULL; l; l = strtok(NULL, "\n")) zeros += l[0] == '0';
	is_int(zeros, 0, "item 0 was not asked for");
	free(runs);
	is_int(tsup_log_count(&t, "it will run again"), 2, "two retries announced");
	ok(tsup_log_count(&t, "ERROR job flaky item 1 attempt 3: failed (exit 3)") == 1, "the last attempt is final");

	const char *bad[] = { "--run", "flaky:2", NULL };
	st = tsup_run(&t, bad, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--run of item 2 of a 2-item job: exit 2");
	ok(tsup_log_count(&t, "--run flaky:2: item 2 is out of range (job flaky has items 0-1: shardingTotalCount 2)") == 1,
	   "saying why");
	const char *none[] = { "--run", "nope", NULL };
	st = tsup_run(&t, none, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--run of an unknown job: exit 2");
	ok(tsup_log_count(&t, "--run nope: no job 'nope' in ") == 1 && tsup_log_count(&t, "(its jobs: nat, nosym, flaky)") == 1,
	   "listing the jobs there are");
}

/* Ctrl-C during --run: the items decide the exit status. An item stopped before it could end ok
 * (here: past shutdownGraceSeconds, or at once by a second Ctrl-C) is not a success, so the exit
 * status is 1; an item that ends
 * ok within the grace leaves a successful --run, exit 0. */
static void test_interrupted(void)
{
	struct tsup t;
	const char *yaml =
		"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t25c}\n"
		"supervisor: {workers: 1, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 3, killGraceSeconds: 1}\n"
		"jobs:\n"
		"  slow:\n"
		"    type: script\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 1\n"
		"    props: {script.command.line: \"/bin/sh -c 'echo started >> @DIR@/started; sleep 30'\"}\n"
		"  short:\n"
		"    type: script\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 1\n"
		"    props: {script.command.line: \"/bin/sh -c 'echo started >> @DIR@/started; sleep 0.5'\"}\n";
	tsup_config(&t, "interrupted", yaml);
	char started[700];
	snprintf(started, sizeof started, "%s/started", t.dir);

	const char *slow[] = { "--run", "slow", NULL };
	tsup_start(&t, slow);
	ok(tsup_wait_lines(started, "started", 1, 10000), "the slow item started");
	int st = tsup_stop(&t, SIGINT, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1,
	   "SIGINT stops --run before its item ended: exit 1 (status 0x%x)", st);
	is_int(tsup_log_count(&t, "--run: job slow: its 1 item failed"), 1, "the log says the item failed");

	/* a second Ctrl-C: the supervisor leaves at once, before the item has an outcome */
	unlink(started);
	tsup_start(&t, slow);
	ok(tsup_wait_lines(started, "started", 1, 10000), "the slow item started again");
	kill(t.pid, SIGINT);
	ok(tsup_wait_taken(&t, SIGINT, 10000), "the first SIGINT is taken");
	st = tsup_stop(&t, SIGINT, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "a second SIGINT leaves before the item ended: exit 1 (status 0x%x)", st);
	is_int(tsup_log_count(&t, "--run: job slow: stopped before its 1 item ended; it did not succeed"), 1, "the log says which did not end");

	unlink(started);
	const char *shrt[] = { "--run", "short", NULL };
	tsup_start(&t, shrt);
	ok(tsup_wait_lines(started, "started", 1, 10000), "the short item started");
	st = tsup_stop(&t, SIGINT, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	   "SIGINT during --run whose item still ends ok within the grace: exit 0 (status 0x%x)", st);
	is_int(tsup_log_count(&t, "--run: job short: its 1 item succeeded"), 1, "the log says it succeeded");
}

/* A chatty script: 5000 short lines, then one line of 1 MiB, all on stdout. */
static const char chatty_sh[] =
	"#!/bin/sh\n"
	"i=0\n"
	"while [ $i -lt 5000 ]; do echo \"line $i\"; i=$((i + 1)); done\n"
	"head -c 1048576 /dev/zero | tr '\\0' x\n"
	"echo\n";

/* The lines of text that contain needle (malloc'd copies, at most max). */
static int lines_with(const char *text, const char *needle, char **out, int max)
{
	int n = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		char *line = strndup(p, l);
		if (strstr(line, needle) && n < max) out[n++] = line;
		else free(line);
		p = nl ? nl + 1 : NULL;
	}
	return n;
}

/* Script output in the log: each line with the log's time, the worker, INFO and the item's run
 * (task id, item, attempt); per run of an item at most supervisor.scriptOutputMaxLines lines
 * and scriptOutputMaxBytes bytes, the rest dropped (the script is never blocked) and counted
 * in one line. */
static void test_output_cap(void)
{
	struct tsup t;
	const char *yaml =
		"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t25d}\n"
		"supervisor: {workers: 2, attachSocket: \"@SOCK@\", scriptOutputMaxLines: 100}\n"
		"jobs:\n"
		"  chatty:\n"
		"    type: script\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 1\n"
		"    props: {script.command.line: \"@DIR@/chatty.sh\"}\n";
	tsup_config(&t, "outcap", yaml);
	char sh[700];
	snprintf(sh, sizeof sh, "%s/chatty.sh", t.dir);
	tlib_write_file(sh, chatty_sh, sizeof chatty_sh - 1);
	chmod(sh, 0755);

	const char *args[] = { "--run", "chatty", "--ip", "127.0.0.7", NULL };
	uint64_t t0 = tlib_now_ms();
	int st = tsup_run(&t, args, 30000);
	uint64_t took = tlib_now_ms() - t0;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a script printing 5000 lines and a 1 MiB line: ok, exit 0 (0x%x)", st);
	ok(took < 10000, "and it ends quickly (%llu ms)", (unsigned long long)took);

	char tag[256], *lines[1000];
	snprintf(tag, sizeof tag, "[chatty@-@0@-@READY@-@127.0.0.7@-@%d item 0 attempt 1] ", (int)t.pid);
	char *log = tsup_log_text(&t);
	char needle[300];
	snprintf(needle, sizeof needle, "%sstdout: ", tag);
	int n = lines_with(log, needle, lines, 1000);
	is_int(n, 100, "scriptOutputMaxLines: 100: exactly 100 lines of its output in the log");
	regex_t re;
	if (regcomp(&re, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z ejob-worker\\[[0-9]+\\] INFO $",
	            REG_EXTENDED | REG_NOSUB))
		BAIL_OUT("regcomp");
	int formed = 0, in_order = 0;
	for (int i = 0; i < n; i++) {
		char *at = strstr(lines[i], needle), want[32];
		char head[128];
		snprintf(head, sizeof head, "%.*s", (int)(at - lines[i]) < 127 ? (int)(at - lines[i]) : 127, lines[i]);
		formed += regexec(&re, head, 0, NULL, 0) == 0;
		snprintf(want, sizeof want, "line %d", i);
		in_order += !strcmp(at + strlen(needle), want);
		free(lines[i]);
	}
	regfree(&re);
	is_int(formed, 100, "each starts '<UTC time> ejob-worker[<pid>] INFO [<taskId> item 0 attempt 1] stdout: '");
	is_int(in_order, 100, "and they are its first 100 lines, in order");
	snprintf(needle, sizeof needle, "%soutput cut: ", tag);
	n = lines_with(log, needle, lines, 1000);
	is_int(n, 1, "one line says what was cut");
	/* 4900 short lines of 9-10 bytes, the 1 MiB line with its newline */
	long long cut_bytes = 0;
	for (int i = 100; i < 5000; i++) cut_bytes += i < 1000 ? 9 : 10;
	cut_bytes += 1048577;
	char want[512];
	snprintf(want, sizeof want, "WARN %soutput cut: 4901 more lines (%lld bytes) not logged; a run of an item logs "
	         "at most 100 lines and 65536 bytes of output", tag, cut_bytes);
	ok(n == 1 && strstr(lines[0], want), "  the lines and bytes not logged, and the caps");
	if (n == 1 && !strstr(lines[0], want)) diag("got: %s", lines[0]);
	for (int i = 0; i < n; i++) free(lines[i]);
	free(log);

	/* a byte cap, per attempt: a script that prints 5000 lines and fails its first attempt */
	const char *yaml2 =
		"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t25d}\n"
		"supervisor: {workers: 2, attachSocket: \"@SOCK@\", scriptOutputMaxLines: 0, scriptOutputMaxBytes: 2000}\n"
		"jobs:\n"
		"  chatty:\n"
		"    type: script\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 1\n"
		"    maxRetries: 1\n"
		"    props: {script.command.line: \"/bin/sh -c '@DIR@/chatty.sh; [ $EJOB_ATTEMPT = 2 ]'\"}\n";
	tsup_rewrite(&t, yaml2);
	st = tsup_run(&t, args, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a script that succeeds at its second attempt: exit 0 (0x%x)", st);
	log = tsup_log_text(&t);
	for (int a = 1; a <= 2; a++) {
		snprintf(tag, sizeof tag, "[chatty@-@0@-@READY@-@127.0.0.7@-@%d item 0 attempt %d] ", (int)t.pid, a);
		snprintf(needle, sizeof needle, "%sstdout: ", tag);
		n = lines_with(log, needle, lines, 1000);
		long long bytes = 0;
		for (int i = 0; i < n; i++) {
			bytes += (long long)strlen(strstr(lines[i], needle) + strlen(needle)) + 1;
			free(lines[i]);
		}
		/* lines of 7-9 bytes with their newlines: 10 + 90 + 900 * 9 ... up to 2000 bytes */
		ok(bytes <= 2000 && bytes > 2000 - 10, "attempt %d: scriptOutputMaxBytes: 2000: %lld bytes of output logged "
		   "(%d lines)", a, bytes, n);
		snprintf(needle, sizeof needle, "%soutput cut: ", tag);
		n = lines_with(log, needle, lines, 1000);
		is_int(n, 1, "  and one line says what was cut");
		for (int i = 0; i < n; i++) free(lines[i]);
	}
	free(log);
}

/* examples/ejob.yaml, the annotated reference that users copy, runs as it is from the repo
 * root: its script job and its native job (build/examples/libhello.so, which make builds). Only the
 * attach socket is placed, by $EJOB_RUNTIME_DIR, so that the test does not use /run/ejob. */
static void test_example(void)
{
	struct tsup t;
	tsup_config(&t, "example", "");
	snprintf(t.conf, sizeof t.conf, "examples/ejob.yaml");
	setenv("EJOB_RUNTIME_DIR", t.dir, 1);
	const char *hello[] = { "--run", "hello", NULL };
	int st = tsup_run(&t, hello, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "-c examples/ejob.yaml --run hello: exit 0 (0x%x)", st);
	int said = 0;
	for (int i = 0; i < 4; i++) {
		char want[64];
		snprintf(want, sizeof want, "] stdout: hi from item %d of hello (attempt 1", i);
		said += tsup_log_count(&t, want) == 1;
	}
	is_int(said, 4, "  each of its 4 items ran examples/hello.sh once");
	const char *native[] = { "--run", "hello-native", NULL };
	st = tsup_run(&t, native, 30000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "-c examples/ejob.yaml --run hello-native: exit 0 (0x%x)", st);
	said = 0;
	for (int i = 0; i < 16; i++) {
		char want[64];
		snprintf(want, sizeof want, "hello job=hello-native item=%d/16 ", i);
		said += tsup_log_count(&t, want) == 1;
	}
	is_int(said, 16, "  each of its 16 items called hello_item in build/examples/libhello.so once");
	is_int(tsup_log_count(&t, " WARN ") + tsup_log_count(&t, " ERROR "), 0, "  no warning, no error");
	unsetenv("EJOB_RUNTIME_DIR");
}

/* The most items of one run that were running at the same instant (from "ITEM START END" lines,
 * nanoseconds), and how many lines. */
static int most_at_once(const char *path, int *lines)
{
	long long st[64], en[64];
	int n = 0, most = 0;
	char *t = tsup_slurp(path);
	for (char *l = t ? strtok(t, "\n") : NULL; l && n < 64; l = strtok(NULL, "\n")) {
		int item;
		if (sscanf(l, "%d %lld %lld", &item, &st[n], &en[n]) == 3) n++;
	}
	free(t);
	for (int i = 0; i < n; i++) {
		int at = 0;
		for (int k = 0; k < n; k++) at += st[k] <= st[i] && en[k] > st[i];
		if (at > most) most = at;
	}
	*lines = n;
	return most;
}

static void test_concurrency(void)
{
	struct tsup t;
	static const char yaml[] =
		"regCenter: {serverLists: \"127.0.0.1:1\", namespace: t25}\n"
		"supervisor: {workers: 4, attachSocket: \"@SOCK@\"}\n"
		"jobs:\n"
		"  one:\n    type: script\n    shardingTotalCount: 4\n    jobExecutorServiceHandlerType: SINGLE_THREAD\n"
		"    props: {script.command.line: \"/bin/sh @DIR@/span.sh @DIR@/one\"}\n"
		"  one305:\n    type: script\n    shardingTotalCount: 4\n    jobExecutorThreadPoolSizeProviderType: SINGLE_THREAD\n"
		"    props: {script.command.line: \"/bin/sh @DIR@/span.sh @DIR@/one305\"}\n"
		"  two:\n    type: script\n    shardingTotalCount: 4\n    concurrency: 2\n"
		"    props: {script.command.line: \"/bin/sh @DIR@/span.sh @DIR@/two\"}\n"
		"  cpu:\n    type: script\n    shardingTotalCount: 4\n    jobExecutorServiceHandlerType: CPU\n"
		"    props: {script.command.line: \"/bin/sh @DIR@/span.sh @DIR@/cpu\"}\n";
	tsup_config(&t, "conc", yaml);
	char span[700];
	snprintf(span, sizeof span, "%s/span.sh", t.dir);
	static const char sh[] = "s=$(date +%s%N); sleep 0.4; echo \"$EJOB_ITEM $s $(date +%s%N)\" >> \"$1\"\n";
	tlib_write_file(span, sh, strlen(sh));
	static const struct {
		const char *job;
		int most;
		const char *what;
	} want[] = { { "one", 1, "SINGLE_THREAD: one item at a time, as ElasticJob's single-thread executor" },
		     { "one305", 1, "the same under 3.0.5's key (jobExecutorThreadPoolSizeProviderType)" },
		     { "two", 2, "concurrency: 2: two at a time" },
		     { "cpu", 4, "CPU: as many as the pool has workers (4)" } };
	for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
		const char *args[] = { "--run", want[i].job, NULL };
		int st = tsup_run(&t, args, 30000);
		char path[800];
		snprintf(path, sizeof path, "%s/%s", t.dir, want[i].job);
		int lines, most = most_at_once(path, &lines);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && lines == 4 && most == want[i].most,
		   "%s (4 items of 0.4 s, 4 workers: at most %d at once; %d runs)", want[i].what, most, lines);
	}
}

int main(void)
{
	tlib_init(180);
	plan(51);
	test_sixteen();
	test_native_and_retries();
	test_interrupted();
	test_output_cap();
	test_example();
	test_concurrency();
	return done_testing();
}
