/* t/50-zk-frozen.c: a frozen supervisor (SIGSTOP past its session timeout) with failover on. Its
 * workers stop its items themselves from the lease deadline in shared memory, before the session
 * can expire; only then does the other supervisor take them over. An execution log of start and
 * end times shows no overlap. A second job's script ignores SIGTERM: the frozen supervisor's
 * worker SIGKILLs it at the lease's kill time, and it is dead before the other supervisor starts
 * it. After SIGCONT the frozen one rejoins cleanly. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

/* first run of each item: long (stopped by SIGTERM); later runs: quick */
static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n"
	"trap 'echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"; exit 143' TERM\n"
	"if mkdir \"$OUT.$EJOB_ITEM\" 2>/dev/null; then sleep 60 & wait; fi\n"
	"echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n";

/* the same, deaf to SIGTERM (so is its sleep): only SIGKILL ends the first run; records its pid */
static const char deaf_sh[] =
	"#!/bin/sh\n"
	"trap '' TERM\n"
	"echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $$\" >> \"$OUT\"\n"
	"if mkdir \"$OUT.$EJOB_ITEM\" 2>/dev/null; then sleep 60; fi\n";

#define MAXR 256

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 500, "t50", 4000);
	char sh[600], out[600], dsh[600], dout[600], jobs[4096];
	tlib_script(sh, sizeof sh, "item.sh", item_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	tlib_script(dsh, sizeof dsh, "deaf.sh", deaf_sh);
	snprintf(dout, sizeof dout, "%s/deaf", tlib_tmpdir());
	char cron[64];
	tsup_cron_once(cron, sizeof cron, 7);
	snprintf(jobs, sizeof jobs,
	         "  frz:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    timeZone: UTC\n"
	         "    failover: true\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n"
	         "  deaf:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    timeZone: UTC\n"
	         "    failover: true\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         cron, out, sh, cron, dout, dsh);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 4, killGraceSeconds: 1", jobs);
	tzkup_config(&u, &b, "b", "workers: 4, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_leader(&u, "frz", a.id, 15000), "a leads");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "frz", b.id, 0, 15000), "b registers");
	ok(tsup_wait_lines(out, "start", 2, 20000), "the fire started both items, one on each");
	ok(tsup_wait_lines(dout, "start", 2, 5000), "and both of the deaf job's");
	usleep(300000);
	const char *idb = b.id, *ida = a.id;
	int deaf_pid = 0;
	{
		char *t = tsup_slurp(dout);
		for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
			char task[200];
			int it, pid;
			long long ns;
			if (sscanf(p, "start %d %lld %199s %d", &it, &ns, task, &pid) == 4 && strstr(task, idb)) deaf_pid = pid;
		}
		free(t);
	}
	ok(deaf_pid > 0, "b runs one of the deaf job's items (pid %d)", deaf_pid);

	int64_t b_session = tzkup_session(&u, "frz", idb);
	kill(b.pid, SIGSTOP);     /* b's supervisor only: its workers keep running */
	/* watch the deaf script die while b is frozen (its worker reaps it: it vanishes at once) */
	int64_t deaf_dead = 0;
	for (int k = 0; k < 3000 && (!deaf_dead || tsup_count_lines(out, "start") < 3 || tsup_count_lines(dout, "start") < 3); k++) {
		if (!deaf_dead && deaf_pid > 0 && kill(deaf_pid, 0) < 0) deaf_dead = tlib_wall_ns();
		usleep(5000);
	}
	ok(tsup_count_lines(out, "start") >= 3, "b's item started again on a");
	tsup_wait_lines(out, "end", 3, 5000);

	static struct tsup_rec r[MAXR];
	int n = tsup_read_recs(out, r, MAXR);
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

	n = tsup_read_recs(dout, r, MAXR);
	int deaf_item = -1;
	int64_t deaf_a = 0;
	for (int i = 0; i < n; i++)
		if (strstr(r[i].task, idb)) deaf_item = r[i].item;
	for (int i = 0; i < n; i++)
		if (r[i].item == deaf_item && strstr(r[i].task, ida) && !deaf_a) deaf_a = r[i].ns;
	ok(deaf_dead > 0, "the deaf script was killed while b was frozen (its worker did it at the lease's kill time)");
	ok(deaf_a > 0, "a ran the deaf job's item %d after taking it over", deaf_item);
	ok(deaf_dead > 0 && deaf_a > deaf_dead, "no overlap: it was dead %.2fs before a began it", (double)(deaf_a - (deaf_dead ? deaf_dead : deaf_a)) / 1e9);
	char *blog = tsup_log_text(&b);
	ok(blog && strstr(blog, "the ZooKeeper lease ran out") && strstr(blog, "killed its process group"),
	   "b's worker logged the kill");
	free(blog);

	kill(b.pid, SIGCONT);
	ok(tzkup_wait_registered(&u, "frz", idb, b_session, 15000), "after SIGCONT b registers again in a new session");
	ok(tsup_alive(b.pid) && tsup_alive(a.pid), "both are running");
	int s1 = tsup_stop(&a, SIGTERM, 15000), s2 = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(s1) && !WEXITSTATUS(s1) && WIFEXITED(s2) && !WEXITSTATUS(s2), "both stop cleanly");
	tzkup_end(&u);
	return done_testing();
}
