/* t/67-zk-config-kept.c: a job registered by an overwrite: false file whose config node says what
 * that file says (the supervisor then keeps the config once, as the file's, not twice): a reload
 * that changes the file leaves the node in force, as docs/config.md's rule says. Without the copy
 * the reload pins first (supervisor/coord/coord.c), the new file would take over here unpublished. */
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

static char rec[600], out[600];

static void jobs_of(char *buf, size_t len, const char *cron)
{
	int n = snprintf(buf, len,
	                 "  kept:\n"
	                 "    type: script\n"
	                 "    cron: \"%s\"\n"
	                 "    overwrite: false\n"
	                 "    shardingTotalCount: 2\n"
	                 "    props: {script.command.line: \"%s %s\"}\n",
	                 cron, rec, out);
	if (n < 0 || (size_t)n >= len) BAIL_OUT("config too long");
}

int main(void)
{
	tlib_init(60);
	struct tzkup u;
	tzkup_start(&u, 200, "t67", 4000);
	snprintf(rec, sizeof rec, "%s", tsup_rec_script());
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	char jobs[2048];
	static struct tsup a;
	jobs_of(jobs, sizeof jobs, "0/1 * * * * ?");
	tzkup_config(&u, &a, "a", NULL, jobs);
	tzkup_run(&u, &a, "127.0.0.2");
	ok(tzkup_wait_leader(&u, "kept", a.id, 15000), "a registers the new job and leads it");
	char *node = NULL;
	struct Stat st0, st1;
	is_int(tzk_get(u.zh, "/t67/kept/config", &node, &st0), ZOK, "its config node is there");
	ok(node && strstr(node, "0/1 * * * * ?"), "  with the file's cron (a new job's node is the file's)");
	free(node);
	int exact = 0;
	uint64_t end = tlib_now_ms() + 10000;
	while (tsup_fires_exact(out, 0, 2, NULL, &exact) < 2 && tlib_now_ms() < end) usleep(100000);
	ok(exact, "it fires every second");

	/* the file changes to a cron that never fires in this test, overwrite: false */
	jobs_of(jobs, sizeof jobs, "0 0 0 1 1 ? 2099");
	tzkup_reconfig(&u, &a, NULL, jobs);
	kill(a.pid, SIGHUP);
	ok(tsup_wait_log(&a, "the file's cron is not in force", 1, 5000), "the reload says the file's cron is not in force");
	long long after = tlib_wall_ns() / 1000000 + 500;
	usleep(3600000);
	node = NULL;
	is_int(tzk_get(u.zh, "/t67/kept/config", &node, &st1), ZOK, "the node is still there");
	ok(node && strstr(node, "0/1 * * * * ?") && st1.version == st0.version, "  unchanged (version %d)", st1.version);
	free(node);
	int n = tsup_fires_exact(out, after, 2, NULL, &exact);
	ok(n >= 2 && exact, "the job goes on firing on the node's cron, every second (%d fires after the reload)", n);

	int s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "a stops cleanly");
	tzkup_end(&u);
	return done_testing();
}
