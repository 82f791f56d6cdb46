/* t/50-zk-frozen.c: a frozen supervisor (SIGSTOP past its session timeout) with failover on. Its
 * workers stop its items themselves from the lease deadline in shared memory, before the session
 * can expire; only then does the other supervisor take them over. An execution log of start and
 * end times shows no overlap. After SIGCONT the frozen one rejoins cleanly. */
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
#include "t/lib/tzk.h"
#include "t/tap.h"

/* first run of each item: long (stopped by SIGTERM); later runs: quick */
static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n"
	"trap 'echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"; exit 143' TERM\n"
	"if mkdir \"$OUT.$EJOB_ITEM\" 2>/dev/null; then sleep 60 & wait; fi\n"
	"echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n";

#define MAXR 256
struct rec { char kind[8]; int item; int64_t ns; char task[200]; };

static int read_recs(const char *path, struct rec *r)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p && n < MAXR; p = strtok(NULL, "\n"))
		if (sscanf(p, "%7s %d %" SCNd64 " %199s", r[n].kind, &r[n].item, &r[n].ns, r[n].task) == 4) n++;
	free(t);
	return n;
}

int main(void)
{
	tlib_init(120);
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 500 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	char sh[600], out[600], yaml[2048];
	snprintf(sh, sizeof sh, "%s/item.sh", tlib_tmpdir());
	tlib_write_file(sh, item_sh, sizeof item_sh - 1);
	chmod(sh, 0755);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	char cron[64];
	tsup_cron_once(cron, sizeof cron, 7);
	struct tsup a, b;
	for (int k = 0; k < 2; k++) {
		snprintf(yaml, sizeof yaml,
		         "regCenter: {serverLists: \"%s\", namespace: t50, sessionTimeoutMilliseconds: 4000}\n"
		         "supervisor: {workers: 2, attachSocket: \"@SOCK@\", killGraceSeconds: 1}\n"
		         "jobs:\n"
		         "  frz:\n"
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
	ok(tsup_wait_log(&a, "job frz: this instance is the leader", 1, 15000), "a leads");
	if (tsup_start(&b, args_b) <= 0) BAIL_OUT("cannot start b");
	ok(tsup_wait_log(&b, "job frz: registered", 1, 15000), "b registers");
	ok(tsup_wait_lines(out, "start", 2, 20000), "the fire started both items, one on each");
	usleep(300000);

	kill(b.pid, SIGSTOP);     /* b's supervisor only: its workers keep running */
	ok(tsup_wait_lines(out, "start", 3, 15000), "b's item started again on a");
	tsup_wait_lines(out, "end", 3, 5000);

	static struct rec r[MAXR];
	int n = read_recs(out, r);
	char idb[64], ida[64];
	snprintf(idb, sizeof idb, "127.0.0.2@-@%d", (int)b.pid);
	snprintf(ida, sizeof ida, "127.0.0.1@-@%d", (int)a.pid);
	int item_b = -1;
	int64_t b_end = 0, a_start = 0;
	for (int i = 0; i < n; i++)
		if (!strcmp(r[i].kind, "start") && strstr(r[i].task, idb)) item_b = r[i].item;
	for (int i = 0; i < n; i++) {
		if (r[i].item != item_b) continue;
		if (!strcmp(r[i].kind, "end") && strstr(r[i].task, idb)) b_end = r[i].ns;
		if (!strcmp(r[i].kind, "start") && strstr(r[i].task, ida) && !a_start) a_start = r[i].ns;
	}
	ok(item_b >= 0, "b was running item %d", item_b);
	ok(b_end > 0, "b's workers stopped it on their own while b was frozen");
	ok(a_start > 0, "a ran it after taking it over");
	ok(b_end > 0 && a_start > b_end, "no overlap: b's run ended %.2fs before a's began", (double)(a_start - b_end) / 1e9);

	kill(b.pid, SIGCONT);
	ok(tsup_wait_log(&b, "job frz: registered", 2, 15000), "after SIGCONT b registers again in a new session");
	ok(tsup_alive(b.pid) && tsup_alive(a.pid), "both are running");
	int s1 = tsup_stop(&a, SIGTERM, 15000), s2 = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(s1) && !WEXITSTATUS(s1) && WIFEXITED(s2) && !WEXITSTATUS(s2), "both stop cleanly");
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
