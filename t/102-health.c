/* t/102-health.c: job health from any machine (docs/operations.md, "Job health"). Each item's last
 * execution is kept in ZooKeeper (sharding/{i}/last) by the supervisor that ran it, so that
 * `ejobctl jobs --json` / `status --json`, run with nothing but the ZooKeeper address, say:
 *   - a job whose item fails on every fire: FAILING, its last outcome, where, failures in a row;
 *   - a job that succeeds: OK with its last success; a disabled job: DISABLED;
 *   - after the supervisor that ran them is SIGKILLed: the last results are still there, and the
 *     job that succeeded turns LATE once two periods pass with no fire;
 *   - another supervisor that takes the failing item over counts on from the dead one's record. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tbuild.h"
#include "t/lib/tjson.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static char zkopt[300];

/* ejobctl CMD ARGS... --json --zk HOSTS --namespace t102: its JSON (NULL: not JSON) */
static struct tjson *ctl(const char *a0, ...)
{
	const char *argv[16];
	int n = 0;
	argv[n++] = BUILT("tools/ejobctl");
	va_list ap;
	va_start(ap, a0);
	for (const char *a = a0; a && n < 10; a = va_arg(ap, const char *)) argv[n++] = a;
	va_end(ap);
	argv[n++] = "--json", argv[n++] = "--zk", argv[n++] = zkopt, argv[n++] = "--namespace", argv[n++] = "t102";
	argv[n] = NULL;
	char *out = NULL, *err = NULL;
	tlib_run(argv, &out, &err);
	tjson_keep(out);
	tjson_keep(err);
	return tjson_doc(out);
}

/* until `jobs --json` says job's health is want (or the time is up); the last answer's text of path */
static int wait_jobs(const char *job, const char *key, const char *want, unsigned ms)
{
	char path[128];
	snprintf(path, sizeof path, "jobs.name=%s.%s", job, key);
	uint64_t end = tlib_now_ms() + ms;
	do {
		if (!strcmp(tjson_text(ctl("jobs", NULL), path), want)) return 1;
		usleep(100000);
	} while (tlib_now_ms() < end);
	return 0;
}

int main(void)
{
	tlib_init(90);
	struct tzkup u;
	tzkup_start(&u, 500, "t102", 4000);
	snprintf(zkopt, sizeof zkopt, "%s", u.connect);
	char bad[600], good[600], jobs[4096];
	tlib_script(bad, sizeof bad, "bad.sh", "#!/bin/sh\nexit 3\n");
	tlib_script(good, sizeof good, "good.sh", "#!/bin/sh\nexit 0\n");
	snprintf(jobs, sizeof jobs,
	         "  bad:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  good:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  off:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    disabled: true\n"
	         "    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"%s\"}\n",
	         bad, good, good);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_config(&u, &b, "b", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");

	/* ---- while a runs them ---- */
	ok(wait_jobs("bad", "health", "FAILING", 15000), "bad: health FAILING in `ejobctl jobs --json`");
	struct tjson *j = ctl("jobs", NULL);
	is_str(tjson_text(j, "jobs.name=bad.lastOutcome"), "failed", "  lastOutcome failed");
	is_str(tjson_text(j, "jobs.name=bad.lastSuccessMs"), "null", "  no last success");
	is_str(tjson_text(j, "jobs.name=bad.failingItems"), "2", "  both items failing");
	ok(wait_jobs("good", "health", "OK", 5000), "good: health OK");
	j = ctl("jobs", NULL);
	ok(strcmp(tjson_text(j, "jobs.name=good.lastSuccessMs"), "null") != 0, "  with its last success (%s)",
	   tjson_text(j, "jobs.name=good.lastSuccess"));
	is_str(tjson_text(j, "jobs.name=off.health"), "DISABLED", "off: health DISABLED");

	/* the record itself, where an operator (or another tool) finds it */
	char data[512];
	int len = sizeof data - 1;
	is_int(zoo_get(u.zh, tzkup_path(&u, "bad", "sharding/0/last"), 0, data, &len, NULL), ZOK,
	       "sharding/0/last exists in ZooKeeper");
	data[len > 0 ? len : 0] = 0;
	ok(strstr(data, "\"outcome\":\"failed\"") && strstr(data, a.id), "  and says failed, on %s (%s)", a.id, data);

	/* per item, from status */
	uint64_t end = tlib_now_ms() + 5000;
	while (atoi(tjson_text(ctl("status", "bad", NULL), "items.0.last.consecutiveFailures")) < 2 && tlib_now_ms() < end)
		usleep(100000);
	j = ctl("status", "bad", NULL);
	is_str(tjson_text(j, "health"), "FAILING", "status bad --json: health FAILING");
	is_str(tjson_text(j, "items.0.last.outcome"), "failed", "  item 0's last outcome: failed");
	is_str(tjson_text(j, "items.0.last.instance"), a.id, "  on a");
	is_str(tjson_text(j, "items.0.last.attempt"), "1", "  attempt 1");
	ok(atoi(tjson_text(j, "items.0.last.consecutiveFailures")) >= 2, "  failures in a row counted (%s)",
	   tjson_text(j, "items.0.last.consecutiveFailures"));
	ok(atoll(tjson_text(j, "items.1.last.endMs")) > 0, "  item 1 has its last end too");
	j = ctl("status", "good", NULL);
	is_str(tjson_text(j, "items.0.last.outcome"), "ok", "status good --json: item 0's last outcome ok");
	is_str(tjson_text(j, "items.0.last.consecutiveFailures"), "0", "  no failures");

	/* ---- a is killed: what it ran stays readable ---- */
	int st = tsup_stop(&a, SIGKILL, 5000);
	ok(WIFSIGNALED(st), "a SIGKILLed");
	j = ctl("status", "bad", NULL);
	is_str(tjson_text(j, "items.0.last.outcome"), "failed", "after the kill: bad item 0's last outcome still failed");
	is_str(tjson_text(j, "items.0.last.instance"), a.id, "  on a, the dead supervisor");
	int fails_a = atoi(tjson_text(j, "items.0.last.consecutiveFailures"));
	ok(fails_a >= 2, "  with its count (%d)", fails_a);
	j = ctl("jobs", NULL);
	ok(strcmp(tjson_text(j, "jobs.name=good.lastSuccessMs"), "null") != 0, "  good's last success still there");
	ok(wait_jobs("good", "health", "LATE", 6000), "good: LATE once two periods pass with no fire");
	j = ctl("jobs", NULL);
	ok(tjson_text(j, "jobs.name=good.healthReason")[0] != '(', "  with a reason: %s",
	   tjson_text(j, "jobs.name=good.healthReason"));
	is_str(tjson_text(j, "jobs.name=bad.health"), "FAILING", "bad: still FAILING (its last execution failed)");

	/* ---- a job nobody runs (no supervisor has its label): LATE once its cron has fired twice
	 * since it was made, with no record at all; with monitorExecution: false nothing is known ---- */
	char orphan[600];
	tlib_script(orphan, sizeof orphan, "orphan.yaml",
	            "jobs:\n"
	            "  orphan:\n    type: script\n    cron: \"*/3 * * * * ?\"\n    shardingTotalCount: 1\n    label: nobody\n"
	            "    props: {script.command.line: /bin/true}\n"
	            "  unmonitored:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 1\n    label: nobody\n"
	            "    monitorExecution: false\n    props: {script.command.line: /bin/true}\n");
	j = ctl("apply", "-f", orphan, NULL);
	ok(j != NULL, "apply writes orphan and unmonitored, which no supervisor here runs");
	is_str(tjson_text(ctl("jobs", NULL), "jobs.name=orphan.health"), "OK", "orphan: OK while it is new");
	ok(wait_jobs("orphan", "health", "LATE", 14000), "orphan: LATE once its cron fired twice with nothing recorded");
	j = ctl("jobs", NULL);
	ok(strstr(tjson_text(j, "jobs.name=orphan.healthReason"), "no execution recorded since the job was made"),
	   "  saying so: %s", tjson_text(j, "jobs.name=orphan.healthReason"));
	is_str(tjson_text(j, "jobs.name=unmonitored.health"), "OK", "unmonitored (monitorExecution: false): no record to judge by");

	/* ---- b takes over: the count goes on from a's record ---- */
	tzkup_run(&u, &b, "127.0.0.2");
	end = tlib_now_ms() + 20000;
	while (strcmp(tjson_text(ctl("status", "bad", NULL), "items.0.last.instance"), b.id) && tlib_now_ms() < end)
		usleep(200000);
	j = ctl("status", "bad", NULL);
	is_str(tjson_text(j, "items.0.last.instance"), b.id, "b runs bad's item 0 and writes its record");
	ok(atoi(tjson_text(j, "items.0.last.consecutiveFailures")) > fails_a, "  counting on from a's %d (%s)", fails_a,
	   tjson_text(j, "items.0.last.consecutiveFailures"));
	ok(wait_jobs("good", "health", "OK", 5000), "good: OK again once b runs it");

	st = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "b stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
