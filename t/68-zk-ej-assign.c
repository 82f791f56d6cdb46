/* t/68-zk-ej-assign.c: an assignment written the way ElasticJob-Lite 3.0's leader writes it is
 * read and run by an ejob follower (issue 13, part 1). ElasticJob's ShardingService never sets the
 * sharding node's data: in one transaction it creates (later: deletes and creates again) every
 * sharding/{i}/instance and deletes leader/sharding/necessary. The test plays that leader with the
 * plain client (its election node and instance node are the test session's ephemerals):
 *   - its first sharding gives items 0 and 1 to the ejob supervisor: those run there, every fire;
 *   - it reshards, all 4 items to the supervisor: all 4 run there from then on, under the epoch
 *     of that transaction (the highest mzxid of the item nodes).
 * Its config node is ElasticJob's too (part 3): no props ejob.type, the type SCRIPT in the job's
 * root node, a command of its own; the supervisor's file (overwrite: false) says another
 * command, and the node's is the one that runs.
 * Then the leader raises the flag and does not shard (part 2): ejob's fires are missed after
 * twice the session timeout, and the leader is deposed only once it is known to be stuck ejob
 * (its leader/failover/alive/{id} exists and no sharding/{i}/running explains the wait). */
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
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define EJ_ID "10.9.9.9@-@77"

int main(void)
{
	tlib_init(90);
	struct tzkup u;
	tzkup_start(&u, 200, "t68", 2000);
	zhandle_t *zh = u.zh;
	char rec[600], out[600], fout[600], jobs[2048], node[2048];
	/* tsup_rec_script's record with the epoch the item ran under: "FIRE_ID ITEM TASK_ID EPOCH" */
	snprintf(rec, sizeof rec, "%s/rec-epoch.sh", tlib_tmpdir());
	FILE *f = fopen(rec, "w");
	if (!f || fputs("#!/bin/sh\necho \"$EJOB_FIRE_ID $EJOB_ITEM $EJOB_TASK_ID $EJOB_EPOCH\" >> \"$1\"\n", f) < 0 ||
	    fclose(f) != 0 || chmod(rec, 0755) != 0)
		BAIL_OUT("cannot write %s", rec);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(fout, sizeof fout, "%s/runs.file", tlib_tmpdir());

	/* ElasticJob's instance got there first and leads */
	tzkup_ej_leader(&u, "mix", "SCRIPT", EJ_ID);   /* ElasticJob: ConfigurationService.replaceJobRootNode */
	/* its config node, as ElasticJob 3.0.4 dumps it (a real one's, but for name, cron and command) */
	int nw = snprintf(node, sizeof node,
	                  "cron: 0/1 * * * * ?\ndescription: ''\ndisabled: false\nfailover: false\njobName: mix\n"
	                  "jobParameter: ''\nmaxTimeDiffSeconds: -1\nmisfire: true\nmonitorExecution: true\n"
	                  "overwrite: false\nprops:\n  script.command.line: %s %s\nreconcileIntervalMinutes: 10\n"
	                  "shardingItemParameters: ''\nshardingTotalCount: 4\nstaticSharding: false\n", rec, out);
	if (nw < 0 || (size_t)nw >= sizeof node) BAIL_OUT("node too long");
	tzkup_mk(&u, "/t68/mix/config", node, 0);

	int w = snprintf(jobs, sizeof jobs,
	                 "  mix:\n"
	                 "    type: script\n"
	                 "    cron: \"0/1 * * * * ?\"\n"
	                 "    shardingTotalCount: 4\n"
	                 "    overwrite: false\n"
	                 "    props: {script.command.line: \"%s %s\"}\n",
	                 rec, fout);
	if (w < 0 || (size_t)w >= sizeof jobs) BAIL_OUT("config too long");
	static struct tsup a;
	tzkup_config(&u, &a, "a", NULL, jobs);
	tzkup_run(&u, &a, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "mix", a.id, 0, 15000), "the ejob supervisor registers and follows ElasticJob's leader");
	ok(tzk_wait_exists(zh, "/t68/mix/leader/sharding/necessary", 1, 5000), "  and raises the resharding flag");

	/* ElasticJob's first sharding: the item nodes made, 0 and 1 to ejob */
	for (int i = 0; i < 4; i++) {
		char p[64];
		snprintf(p, sizeof p, "/t68/mix/sharding/%d", i);
		tzkup_mk(&u, p, "", 0);
	}
	const char *first[4] = { a.id, a.id, EJ_ID, EJ_ID };
	is_int(tzkup_ej_shard(&u, "mix", first, 4, 0, 0), ZOK, "ElasticJob's leader commits its first sharding: items 0 and 1 to ejob");
	long long after = tlib_wall_ns() / 1000000 + 300;
	int exact = 0, nf = 0;
	uint64_t end = tlib_now_ms() + 8000;
	while ((nf = tsup_fires_exact(out, after, 2, a.id, &exact)) < 3 && tlib_now_ms() < end) usleep(100000);
	ok(nf >= 3 && exact, "ejob runs items 0 and 1, each once per fire, and nothing else (%d fires)", nf);

	/* ElasticJob reshards: the flag first, then delete + create of every item node */
	tzkup_mk(&u, "/t68/mix/leader/sharding/necessary", "", 0);
	usleep(300000);
	const char *all[4] = { a.id, a.id, a.id, a.id };
	is_int(tzkup_ej_shard(&u, "mix", all, 4, 1, 0), ZOK, "ElasticJob's leader reshards: all 4 items to ejob");
	struct Stat st;
	uint64_t epoch = 0;
	for (int i = 0; i < 4; i++) {
		char p[64];
		snprintf(p, sizeof p, "/t68/mix/sharding/%d/instance", i);
		if (tzk_exists(zh, p, &st) == ZOK && (uint64_t)st.mzxid > epoch) epoch = (uint64_t)st.mzxid;
	}
	after = tlib_wall_ns() / 1000000 + 300;
	end = tlib_now_ms() + 8000;
	while ((nf = tsup_fires_exact(out, after, 4, a.id, &exact)) < 3 && tlib_now_ms() < end) usleep(100000);
	ok(nf >= 3 && exact, "ejob runs all 4 items, each once per fire (%d fires)", nf);
	/* the epoch each of those items ran under (EJOB_EPOCH, the frame's) */
	char *t = tsup_slurp(out);
	int runs = 0, other = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long fire;
		unsigned long long ep;
		if (sscanf(l, "%lld %*d %*s %llu", &fire, &ep) != 2 || fire <= after) continue;
		runs++;
		if (ep != epoch) other++;
	}
	free(t);
	ok(runs >= 12 && !other, "every one of them ran under the transaction's zxid as epoch (0x%" PRIx64 "): %d runs, %d "
	   "under another", epoch, runs, other);
	char *ran = tsup_slurp(fout);
	ok(!ran || !*ran, "always with the config node's command (ElasticJob's SCRIPT job), never the file's");
	free(ran);
	struct Stat lst;
	is_int(tzk_exists(zh, "/t68/mix/leader/election/instance", &lst), ZOK, "ElasticJob's leader was not deposed");

	/* ---- a leader that waits (part 2) ---- */
	/* ElasticJob's leader raises the flag and waits before it shards (for running items, say):
	 * ejob's fires wait, each at most twice the session timeout, and are missed; the leader stays */
	int missed0 = tsup_log_count(&a, "missed: no assignment after");
	tzkup_mk(&u, "/t68/mix/leader/sharding/necessary", "", 0);
	long long flagged = tlib_wall_ns() / 1000000 + 300;
	ok(tsup_wait_log(&a, "missed: no assignment after", missed0 + 1, 8000), "ejob's fire waits for the sharding, and "
	   "is missed");
	struct Stat now;
	ok(tzk_exists(zh, "/t68/mix/leader/election/instance", &now) == ZOK && now.czxid == lst.czxid,
	   "  ElasticJob's leader (no leader/failover/alive/{id}: not ejob) is not deposed");
	/* the same leader, were it ejob, with an item still running (ElasticJob's running node) */
	tzkup_mk(&u, "/t68/mix/leader/failover", "", 0);
	tzkup_mk(&u, "/t68/mix/leader/failover/alive", "", 0);
	tzkup_mk(&u, "/t68/mix/leader/failover/alive/" EJ_ID, "", ZOO_EPHEMERAL);
	tzkup_mk(&u, "/t68/mix/sharding/3/running", "", ZOO_EPHEMERAL);
	ok(tsup_wait_log(&a, "missed: no assignment after", missed0 + 2, 8000), "the next fire is missed");
	ok(tzk_exists(zh, "/t68/mix/leader/election/instance", &now) == ZOK && now.czxid == lst.czxid,
	   "  an ejob leader is not deposed while sharding/3/running explains its wait");
	is_int(zoo_delete(zh, "/t68/mix/sharding/3/running", -1), ZOK, "the item ends");
	ok(tsup_wait_log(&a, "missed: no assignment after", missed0 + 3, 8000), "the next fire is missed");
	ok(tzkup_wait_leader(&u, "mix", a.id, 3000), "  now the stuck ejob leader is deposed: the supervisor leads");
	ok(tzk_wait_exists(zh, "/t68/mix/leader/sharding/necessary", 0, 5000), "  and shards");
	after = tlib_wall_ns() / 1000000 + 300;
	end = tlib_now_ms() + 8000;
	while ((nf = tsup_fires_exact(out, after, 2, a.id, &exact)) < 2 && tlib_now_ms() < end) usleep(100000);
	ok(nf >= 2 && exact, "  2 of the 4 items (the other 2 to the other instance online) run here, each once (%d fires)",
	   nf);
	t = tsup_slurp(out);
	int between = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long fire;
		if (sscanf(l, "%lld", &fire) == 1 && fire > flagged && fire < after - 1300) between++;
	}
	free(t);
	is_int(between, 0, "no item ran while the sharding was due");

	int s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "the supervisor stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
