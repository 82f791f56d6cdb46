/* t/47-zk-failover.c: kill -9 a supervisor in the middle of a fire, failover on: every item it was
 * running runs on the other supervisor exactly once, all of them at once, within the session
 * timeout plus a second; the survivor's own items are not run twice. */
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

static const char item_sh[] =
	"#!/bin/sh\n"
	"echo \"start $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID $EJOB_FIRE_ID\" >> \"$OUT\"\n"
	"sleep 3\n"
	"echo \"end $EJOB_ITEM $(date +%s%N) $EJOB_TASK_ID\" >> \"$OUT\"\n";

#define MAXR 256

int main(void)
{
	tlib_init(120);
	struct tzkup u;
	tzkup_start(&u, 500, "t47", 4000);
	char sh[600], out[600], jobs[2048];
	tlib_script(sh, sizeof sh, "item.sh", item_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());

	/* one fire, 8 s from now (UTC), so that both supervisors are up and nothing else fires */
	char cron[64];
	tsup_cron_once(cron, sizeof cron, 8);
	snprintf(jobs, sizeof jobs,
	         "  fo:\n"
	         "    type: script\n"
	         "    cron: \"%s\"\n"
	         "    timeZone: UTC\n"
	         "    failover: true\n"
	         "    shardingTotalCount: 6\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         cron, out, sh);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 4", jobs);
	tzkup_config(&u, &b, "b", "workers: 4", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_leader(&u, "fo", a.id, 15000), "a leads");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "fo", b.id, 0, 15000), "b registers");

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
	/* while they run (3 s), each one's failovering node names its taker: the transaction that
	 * handed them out wrote them all */
	int handed = 0;
	int64_t zxid[6] = { 0 };
	for (int i = 0; i < 6; i++) {
		struct Stat st;
		if (tzk_exists(u.zh, tzkup_path(&u, "fo", "sharding/%d/failovering", i), &st) == ZOK) zxid[handed++] = st.mzxid;
	}
	int one_step = handed == 3;
	for (int k = 1; k < handed; k++) one_step &= zxid[k] == zxid[0];
	usleep(4000000);   /* let them finish; nothing more may start */
	static struct tsup_rec r[MAXR];
	int n = tsup_read_recs(out, r, MAXR);
	const char *idb = b.id;
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
	ok(one_step, "the leader handed all 3 out at once, in one step: their failovering nodes come from one "
	   "transaction (%d of them, zxid 0x%llx)", handed, (unsigned long long)zxid[0]);

	zhandle_t *zh = u.zh;
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
	int s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "a stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
