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
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

/* first run of each item: long, and a second to stop on SIGTERM; later runs: quick */
static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n"
	"trap 'sleep 1; echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"; exit 143' TERM\n"
	"if mkdir \"$OUT.$EJOB_ITEM\" 2>/dev/null; then sleep 60 & wait; fi\n"
	"echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n";

#define MAXR 64

/* the runs file has an end record of item on the instance id */
static int ended_on(const char *path, int item, const char *id)
{
	static struct tsup_rec r[MAXR];
	int n = tsup_read_recs(path, r, MAXR), yes = 0;
	for (int i = 0; i < n; i++) yes |= !strcmp(r[i].kind, "end") && r[i].item == item && strstr(r[i].task, id);
	return yes;
}

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 200, "t56", 4000);
	char sh[600], out[600], cron[64], jobs[2048];
	tlib_script(sh, sizeof sh, "item.sh", item_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	tsup_cron_once(cron, sizeof cron, 6);
	snprintf(jobs, sizeof jobs,
	         "  sd:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    timeZone: UTC\n"
	         "    failover: true\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         cron, out, sh);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 2, killGraceSeconds: 5", jobs);
	tzkup_config(&u, &b, "b", "workers: 2, killGraceSeconds: 5", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_leader(&u, "sd", a.id, 15000), "a leads");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "sd", b.id, 0, 15000), "b registers");
	ok(tsup_wait_lines(out, "start", 2, 20000), "the fire started both items, one on each");
	usleep(300000);
	const char *idb = b.id, *ida = a.id;
	zhandle_t *zh = u.zh;
	int running_b = -1;
	for (int i = 0; i < 2; i++) {
		char *d = NULL;
		if (tzk_get(zh, tzkup_path(&u, "sd", "sharding/%d/running", i), &d, NULL) == ZOK && d && !strcmp(d, idb))
			running_b = i;
		free(d);
	}
	ok(running_b >= 0, "b's running node is sharding/%d/running", running_b);
	is_int(zoo_delete(zh, tzkup_path(&u, "sd", "instances/%s", idb), -1), ZOK, "an operator deletes b's instance node");
	ok(tsup_wait_log(&b, "job sd: its instance node", 1, 5000), "b shuts the job down, saying why");
	/* b's session lives: until b has stopped the item, the leader hands nothing of it out (no
	 * failovering node, no queue entry); ZooKeeper is read before the runs file, so a hand-out
	 * seen before b's end record is one that came before it */
	int early = 0;
	uint64_t end = tlib_now_ms() + 10000;
	while (tsup_count_lines(out, "start") < 3 && tlib_now_ms() < end) {
		int handed = tzk_exists(zh, tzkup_path(&u, "sd", "sharding/%d/failovering", running_b), NULL) == ZOK ||
		             tzk_exists(zh, tzkup_path(&u, "sd", "leader/failover/items/%d", running_b), NULL) == ZOK;
		if (handed && !ended_on(out, running_b, idb)) early = 1;
		usleep(5000);
	}
	is_int(early, 0, "the leader sees b's session still alive and waits: nothing is handed out before b's run ended");
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
	int b_starts = 0;
	for (int i = 0; i < n; i++) b_starts += !strcmp(r[i].kind, "start") && strstr(r[i].task, idb);
	is_int(b_starts, 1, "b, shut down, took nothing: its only run is the one it stopped");
	ok(tzkup_wait_ended(&u, "sd", item_b < 0 ? 0 : item_b, 3000), "a's run of it ended: completed, no running node left");
	ok(tzk_wait_exists(zh, tzkup_path(&u, "sd", "leader/failover/items/%d", item_b < 0 ? 0 : item_b), 0, 3000),
	   "nor a queued item");

	int s1 = tsup_stop(&a, SIGTERM, 15000), s2 = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(s1) && !WEXITSTATUS(s1) && WIFEXITED(s2) && !WEXITSTATUS(s2), "both stop cleanly");
	tzkup_end(&u);
	return done_testing();
}
