/* t/48-zk-trigger-auth.c: a manual trigger (trigger/{instanceId}, as ElasticJob's console writes
 * it) fires the job at once and the node is removed; with regCenter.digest every node ejob creates
 * is CREATOR_ALL: unreadable without the credentials, readable with them, and a supervisor with the
 * wrong password says so clearly and keeps running. */
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

/* data of a node (malloc'd; NULL if none), its stat and the return code */
static char *zget(zhandle_t *zh, const char *path, struct Stat *st, int *rc)
{
	char *d = NULL;
	struct Stat s;
	int r = tzk_get(zh, path, &d, &s);
	if (rc) *rc = r;
	if (st && r == ZOK) *st = s;
	if (r == ZOK && !d) d = strdup("");
	return d;
}

static const char rec_sh[] = "#!/bin/sh\necho \"$EJOB_ITEM $EJOB_TASK_ID\" >> \"$OUT\"\n";

static void jobs_for(char *buf, size_t len, const char *out, const char *sh)
{
	snprintf(buf, len,
	         "  manual:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         out, sh);
}

int main(void)
{
	tlib_init(90);
	struct tzkup u;
	tzkup_start(&u, 500, "t48", 4000);
	char sh[600], out[600], jobs[2048];
	tlib_script(sh, sizeof sh, "rec.sh", rec_sh);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	jobs_for(jobs, sizeof jobs, out, sh);

	/* ---- trigger ---- */
	struct tsup t;
	tzkup_config(&u, &t, "trig", "workers: 2", jobs);
	tzkup_run(&u, &t, "127.0.0.1");
	ok(tzkup_wait_registered(&u, "manual", t.id, 0, 15000), "registered");
	zhandle_t *zh = u.zh;
	char p[256];
	snprintf(p, sizeof p, "/t48/manual/trigger/%s", t.id);
	is_int(zoo_create(zh, p, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK, "an operator creates %s", p);
	ok(tsup_wait_lines(out, "", 2, 10000), "the job fires at once: both items ran");
	usleep(300000);
	is_int(tsup_count_lines(out, ""), 2, "exactly once");
	int rc = 0;
	free(zget(zh, p, NULL, &rc));
	is_int(rc, ZNONODE, "the trigger node is gone");
	ok(tsup_log_count(&t, "job manual: triggered") == 1, "the log says it was triggered");
	int s = tsup_stop(&t, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "stops cleanly");

	/* ---- digest ---- */
	struct tsup a, w;
	snprintf(u.ns, sizeof u.ns, "t48auth");
	u.regcenter = "digest: \"ejob:secret\"";
	tzkup_config(&u, &a, "auth", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_registered(&u, "manual", a.id, 0, 15000), "a supervisor with a digest registers");
	char *d = zget(zh, "/t48auth/manual/config", NULL, &rc);
	is_int(rc, ZNOAUTH, "without the credentials its config node cannot be read");
	free(d);
	free(tzk_ls(zh, "/t48auth/manual/instances", NULL));
	zhandle_t *za = tzk_connect(u.connect, 10000, "ejob:secret", 10000);
	d = zget(za, "/t48auth/manual/config", NULL, &rc);
	is_int(rc, ZOK, "with them it can");
	ok(d && strstr(d, "jobName: manual"), "and holds the job's config");
	free(d);
	struct ACL_vector acl;
	struct Stat st;
	is_int(zoo_get_acl(za, "/t48auth/manual/sharding", &acl, &st), ZOK, "the ACL of a node ejob made");
	ok(acl.count == 1 && !strcmp(acl.data[0].id.scheme, "digest") && acl.data[0].perms == ZOO_PERM_ALL,
	   "is CREATOR_ALL for the digest user");
	deallocate_ACL_vector(&acl);

	u.regcenter = "digest: \"ejob:wrong\"";
	tzkup_config(&u, &w, "wrong", "workers: 2", jobs);
	tzkup_run(&u, &w, "127.0.0.9");
	ok(tsup_wait_log(&w, "ZooKeeper refused access to /t48auth", 1, 15000),
	   "a supervisor with the wrong password says ZooKeeper refused access");
	ok(tsup_log_count(&w, "set regCenter.digest") >= 1, "and what to fix");
	ok(tsup_alive(w.pid), "and keeps running");
	s = tsup_stop(&w, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "stops cleanly");
	s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "stops cleanly");
	tzk_close(za);
	tzkup_end(&u);
	return done_testing();
}
