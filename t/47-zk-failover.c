/* t/47-zk-failover.c: kill -9 a supervisor in the middle of a fire, failover on: every item it was
 * running runs on the other supervisor exactly once, all of them at once, within the session
 * timeout plus a second; the survivor's own items are not run twice. */
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

static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID\" >> \"$OUT\"\n"
	"sleep 3\n"
	"echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n";

#define MAXR 256

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

	/* one fire, 8 s from now (UTC), so that both supervisors are up and nothing else fires */
	char cron[64];
	tsup_cron_once(cron, sizeof cron, 8);
	struct tsup a, b;
	for (int k = 0; k < 2; k++) {
		snprintf(yaml, sizeof yaml,
		         "regCenter: {serverLists: \"%s\", namespace: t47, sessionTimeoutMilliseconds: 4000}\n"
		         "supervisor: {workers: 4, attachSocket: \"@SOCK@\"}\n"
		         "jobs:\n"
		         "  fo:\n"
		         "    type: script\n"
		         "    cron: \"%s\"\n"
		         "    timeZone: UTC\n"
		         "    failover: true\n"
		         "    shardingTotalCount: 6\n"
		         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
		         zk.connect, cron, out, sh);
		tsup_config(k ? &b : &a, k ? "b" : "a", yaml);
	}
	const char *args_a[] = { "--ip", "127.0.0.1", NULL };
	const char *args_b[] = { "--ip", "127.0.0.2", NULL };
	if (tsup_start(&a, args_a) <= 0) BAIL_OUT("cannot start a");
	ok(tsup_wait_log(&a, "job fo: this instance is the leader", 1, 15000), "a leads");
	if (tsup_start(&b, args_b) <= 0) BAIL_OUT("cannot start b");
	ok(tsup_wait_log(&b, "job fo: registered", 1, 15000), "b registers");

	/* the fire: 6 items, 3 each; kill b while its items run */
	ok(tsup_wait_lines(out, "start", 6, 20000), "the fire started all 6 items");
	usleep(500000);
	int64_t killed = tlib_wall_ns();
	kill(b.pid, SIGKILL);
	pid_t kids[64];
	int nk = tsup_descendants(b.pid, kids, 64);
	for (int i = 0; i < nk; i++) kill(kids[i], SIGKILL);
	waitpid(b.pid, NULL, 0);
	tlib_untrack(b.pid);

	ok(tsup_wait_lines(out, "start", 9, 15000), "b's 3 items started again");
	usleep(4000000);   /* let them finish; nothing more may start */
	static struct tsup_rec r[MAXR];
	int n = tsup_read_recs(out, r, MAXR);
	char idb[64];
	snprintf(idb, sizeof idb, "127.0.0.2@-@%d", (int)b.pid);
	int b_items[6] = { 0 }, starts[6] = { 0 }, late = 0, on_a_after = 0;
	int64_t last_takeover = 0;
	long long fo_fire[6];
	int nfo = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(r[i].kind, "start") || r[i].item < 0 || r[i].item >= 6) continue;
		starts[r[i].item]++;
		if (strstr(r[i].task, idb)) b_items[r[i].item] = 1;
		if (r[i].ns > killed) {
			if (nfo < 6) fo_fire[nfo++] = r[i].extra;
			on_a_after++;
			if (r[i].ns > last_takeover) last_takeover = r[i].ns;
			if (r[i].ns > killed + 5000000000ll) late++;
		}
	}
	int nb = 0, right = 0;
	for (int i = 0; i < 6; i++) {
		nb += b_items[i];
		right += starts[i] == (b_items[i] ? 2 : 1);
	}
	is_int(nb, 3, "b was running 3 items when it was killed");
	is_int(on_a_after, 3, "3 items started after the kill, all on a");
	is_int(right, 6, "each of b's items ran again exactly once; a's own items once");
	is_int(late, 0, "all within the session timeout + 1 s of the kill (last %.2fs after)",
	       (double)(last_takeover - killed) / 1e9);
	int distinct = nfo == 3;
	for (int x = 0; x < nfo; x++)
		for (int y = 0; y < x; y++) distinct &= fo_fire[x] != fo_fire[y];
	for (int x = 0; x < nfo; x++) distinct &= fo_fire[x] % 1000 != 0;
	ok(distinct, "the 3 runs taken over have fire ids of their own (%lld %lld %lld): none twice, none a cron fire's",
	   nfo > 0 ? fo_fire[0] : 0, nfo > 1 ? fo_fire[1] : 0, nfo > 2 ? fo_fire[2] : 0);
	ok(tsup_log_count(&a, "failover: 3 items of a crashed instance handed out") == 1,
	   "the leader handed all 3 out at once, in one step");

	zhandle_t *zh = tzk_connect(zk.connect, 10000, NULL, 10000);
	char *left = tzk_ls(zh, "/t47/fo/leader/failover/items", NULL);
	is_str(left, "", "no failover item is left queued");
	free(left);
	int stale = 0;
	for (int i = 0; i < 6; i++) {
		char p[128];
		snprintf(p, sizeof p, "/t47/fo/sharding/%d", i);
		char *kids_s = tzk_ls(zh, p, NULL);
		if (kids_s && (strstr(kids_s, "running") || strstr(kids_s, "failover"))) stale++;
		free(kids_s);
	}
	is_int(stale, 0, "no running, failover or failovering node is left behind");
	tzk_close(zh);
	int s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "a stops cleanly");
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
