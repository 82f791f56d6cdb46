/* t/59-zk-flag-again.c: the resharding flag gone and raised again between two reads of an
 * instance that has no assignment yet.
 *
 * An instance that joins reads the item nodes; if its read comes before the leader's first commit
 * it has no assignment, and a fire whose time comes then waits for the sharding. When the leader's
 * commit removes the flag and the flag is raised again at once (another instance joined while it
 * sharded), the waiting instance's re-read after the deletion event finds the flag there again. It
 * must still read the assignment that commit wrote: the flag now there came after the fire's time,
 * so the fire runs under that assignment (the one the others ran it with), here nothing. Without
 * the read it waited for the next commit and ran the fire under it: items of a fire the others had
 * ended, under an assignment made after its time (t/86 once, in CI: its beforeAll barrier for that
 * fire then held every later fire of the job).
 *
 * The test plays the leader with the plain client, as t/68 does (ElasticJob's writes): the commit
 * that removes the flag raises it again in the same transaction, so the supervisor's re-read after
 * the deletion event always finds it there. */
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

#define EJ_ID "10.9.9.9@-@77"

/* runs recorded for fire id `fire` */
static int runs_of(const char *path, long long fire)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *l = t ? strtok(t, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		if (sscanf(l, "%lld", &f) == 1 && f == fire) n++;
	}
	free(t);
	return n;
}

int main(void)
{
	tlib_init(60);
	struct tzkup u;
	tzkup_start(&u, 200, "t59", 4000);
	zhandle_t *zh = u.zh;
	char out[600], jobs[2048];
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());

	/* the leader (the test) is there first; the job was never sharded: no item nodes */
	tzkup_ej_leader(&u, "fl", "", EJ_ID);

	int w = snprintf(jobs, sizeof jobs,
	                 "  fl:\n"
	                 "    type: script\n"
	                 "    cron: \"0/3 * * * * ?\"\n"
	                 "    shardingTotalCount: 4\n"
	                 "    overwrite: true\n"
	                 "    props: {script.command.line: \"%s %s\"}\n",
	                 tsup_rec_script(), out);
	if (w < 0 || (size_t)w >= sizeof jobs) BAIL_OUT("config too long");
	static struct tsup a;
	tzkup_config(&u, &a, "a", NULL, jobs);
	tzkup_run(&u, &a, "127.0.0.2");
	ok(tzkup_wait_registered(&u, "fl", a.id, 0, 15000), "the supervisor registers and follows the test's leader");
	ok(tzk_wait_exists(zh, "/t59/fl/leader/sharding/necessary", 1, 5000), "  and raises the resharding flag");
	for (int i = 0; i < 4; i++) tzkup_mk(&u, tzkup_path(&u, "fl", "sharding/%d", i), "", 0);

	const char *const others[4] = { EJ_ID, EJ_ID, EJ_ID, EJ_ID }, *const mine[4] = { a.id, a.id, a.id, a.id };
	/* a fire time T passes with no assignment: the supervisor's fire T waits for the sharding */
	long long now = tlib_wall_ns() / 1000000;
	long long fire = (now / 3000 + 1) * 3000;
	if (fire - now < 800) fire += 3000;
	usleep((useconds_t)((fire - now + 400) * 1000));
	/* the commit gives every item to the other instance and the flag is up again at once: its
	 * ctime is after T */
	is_int(tzkup_ej_shard(&u, "fl", others, 4, 0, 1), ZOK, "the leader commits (all 4 items to another instance) and the flag is "
	       "raised again in the same transaction, 400 ms after the fire's time");
	usleep(600000);
	/* the commit that gives the items to the supervisor, before the next fire's time */
	is_int(tzkup_ej_shard(&u, "fl", mine, 4, 1, 0), ZOK, "the leader reshards: all 4 items to the supervisor, 1 s after the fire's time");
	long long next = fire + 3000;
	uint64_t end = tlib_now_ms() + 9000;
	while (runs_of(out, next) < 4 && tlib_now_ms() < end) usleep(100000);
	is_int(runs_of(out, next), 4, "the next fire runs all 4 items here");
	is_int(runs_of(out, fire), 0, "the fire whose time came before the flag ran nothing here: under the assignment "
	       "of that time its items were the other instance's, and it did not wait for the next one");

	int s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "the supervisor stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
