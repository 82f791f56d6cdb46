/* t/56-zk-shutdown.c: an operator deletes an instance's node (ElasticJob's console "shutdown")
 * while it runs an item, failover on. Its session lives, so the leader does not hand the item out
 * at once (ElasticJob does, and the item runs twice for as long as it takes to stop): the shut
 * instance stops it (its script takes a second to exit on SIGTERM), queues it, and only then does
 * the other instance run it, exactly once. An execution log of start and end times shows no
 * overlap. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

/* first run of each item: long, and a second to stop on SIGTERM; later runs: quick */
static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n"
	"trap 'sleep 1; echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"; exit 143' TERM\n"
	"if mkdir \"$OUT.$EJOB_ITEM\" 2>/dev/null; then sleep 60 & wait; fi\n"
	"echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n";

#define MAXR 64

int main(void)
{
	tlib_init(120);
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 200 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	char sh[600], out[600], cron[64], yaml[2048];
	snprintf(sh, sizeof sh, "%s/item.sh", tlib_tmpdir());
	tlib_write_file(sh, item_sh, sizeof item_sh - 1);
	chmod(sh, 0755);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	tsup_cron_once(cron, sizeof cron, 6);
	struct tsup a, b;
	for (int k = 0; k < 2; k++) {
		snprintf(yaml, sizeof yaml,
		         "regCenter: {serverLists: \"%s\", namespace: t56, sessionTimeoutMilliseconds: 4000}\n"
		         "supervisor: {workers: 2, attachSocket: \"@SOCK@\", killGraceSeconds: 5}\n"
		         "jobs:\n"
		         "  sd:\n"
		         "    type: script\n"
		         "    cron: \"%s\"\n"
		         "    timeZone: UTC\n"
		         "    failover: true\n"
		         "    shardingTotalCount: 2\n"
		         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
		         zk.connect, cron, out, sh);
		tsup_config(k ? &b : &a, k ? "b" : "a", yaml);
	}
	const char *args_a[] = { "--ip", "127.0.0.1", NULL };
	const char *args_b[] = { "--ip", "127.0.0.2", NULL };
	if (tsup_start(&a, args_a) <= 0) BAIL_OUT("cannot start a");
	ok(tsup_wait_log(&a, "job sd: this instance is the leader", 1, 15000), "a leads");
	if (tsup_start(&b, args_b) <= 0) BAIL_OUT("cannot start b");
	ok(tsup_wait_log(&b, "job sd: registered", 1, 15000), "b registers");
	ok(tsup_wait_lines(out, "start", 2, 20000), "the fire started both items, one on each");
	usleep(300000);
	char idb[64], ida[64], path[128];
	snprintf(idb, sizeof idb, "127.0.0.2@-@%d", (int)b.pid);
	snprintf(ida, sizeof ida, "127.0.0.1@-@%d", (int)a.pid);
	zhandle_t *zh = tzk_connect(zk.connect, 10000, NULL, 10000);
	if (!zh) BAIL_OUT("cannot connect");
	snprintf(path, sizeof path, "/t56/sd/instances/%s", idb);
	is_int(zoo_delete(zh, path, -1), ZOK, "an operator deletes b's instance node");
	ok(tsup_wait_log(&b, "job sd: its instance node instances/", 1, 5000), "b shuts the job down");
	ok(tsup_wait_log(&a, "its session lives (an operator's shutdown): its items are handed out once it has stopped them",
	                 1, 5000),
	   "the leader sees b's session still alive and waits");
	ok(tsup_wait_lines(out, "start", 3, 10000), "b's item started again");
	tsup_wait_lines(out, "end", 2, 5000);
	usleep(1000000);

	static struct tsup_rec r[MAXR];
	int n = tsup_read_recs(out, r, MAXR);
	int item_b = -1, runs_b = 0, runs_a_of_b = 0;
	int64_t b_end = 0, a_start = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].kind, "start") && strstr(r[i].task, idb)) item_b = r[i].item;
	for (int i = 0; i < n; i++) {
		if (r[i].item != item_b) continue;
		if (!strcmp(r[i].kind, "end") && strstr(r[i].task, idb)) b_end = r[i].ns;
		if (!strcmp(r[i].kind, "start") && strstr(r[i].task, idb)) runs_b++;
		if (!strcmp(r[i].kind, "start") && strstr(r[i].task, ida)) {
			runs_a_of_b++;
			if (!a_start) a_start = r[i].ns;
		}
	}
	ok(item_b >= 0 && runs_b == 1, "b was running item %d", item_b);
	ok(b_end > 0, "b stopped it (its script took a second)");
	is_int(runs_a_of_b, 1, "a ran it exactly once");
	ok(b_end > 0 && a_start > b_end, "no overlap: b's run ended %.2fs before a's began",
	   (double)(a_start - (b_end ? b_end : a_start)) / 1e9);
	ok(tsup_log_count(&b, "failover: took item") == 0, "b, shut down, took nothing");
	snprintf(path, sizeof path, "/t56/sd/sharding/%d/running", item_b < 0 ? 0 : item_b);
	ok(tzk_wait_exists(zh, path, 0, 3000), "no running node is left");
	snprintf(path, sizeof path, "/t56/sd/leader/failover/items/%d", item_b < 0 ? 0 : item_b);
	ok(tzk_wait_exists(zh, path, 0, 3000), "nor a queued item");

	zookeeper_close(zh);
	int s1 = tsup_stop(&a, SIGTERM, 15000), s2 = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(s1) && !WEXITSTATUS(s1) && WIFEXITED(s2) && !WEXITSTATUS(s2), "both stop cleanly");
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
