/* t/48-zk-trigger-auth.c: a manual trigger (trigger/{instanceId}, as ElasticJob's console writes
 * it) fires the job at once and the node is removed; with regCenter.digest every node ejob creates
 * is CREATOR_ALL: unreadable without the credentials, readable with them, and a supervisor with the
 * wrong password says so clearly and keeps running. */
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

static void yaml_for(char *buf, size_t len, const char *zk, const char *ns, const char *digest, const char *out,
                     const char *sh)
{
	char dg[128] = "";
	if (digest) snprintf(dg, sizeof dg, ", digest: \"%s\"", digest);
	snprintf(buf, len,
	         "regCenter: {serverLists: \"%s\", namespace: %s, sessionTimeoutMilliseconds: 4000%s}\n"
	         "supervisor: {workers: 2, attachSocket: \"@SOCK@\"}\n"
	         "jobs:\n"
	         "  manual:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}\n",
	         zk, ns, dg, out, sh);
}

int main(void)
{
	tlib_init(90);
	struct tzk_server zk;
	if (tzk_start(&zk, "zk", &(struct tzk_opts){ .tick_ms = 500 }, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	char sh[600], out[600], yaml[2048];
	snprintf(sh, sizeof sh, "%s/rec.sh", tlib_tmpdir());
	tlib_write_file(sh, rec_sh, sizeof rec_sh - 1);
	chmod(sh, 0755);
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());

	/* ---- trigger ---- */
	struct tsup t;
	yaml_for(yaml, sizeof yaml, zk.connect, "t48", NULL, out, sh);
	tsup_config(&t, "trig", yaml);
	const char *args[] = { "--ip", "127.0.0.1", NULL };
	if (tsup_start(&t, args) <= 0) BAIL_OUT("cannot start");
	ok(tsup_wait_log(&t, "job manual: registered", 1, 15000), "registered");
	zhandle_t *zh = tzk_connect(zk.connect, 10000, NULL, 10000);
	char p[256];
	snprintf(p, sizeof p, "/t48/manual/trigger/127.0.0.1@-@%d", (int)t.pid);
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
	yaml_for(yaml, sizeof yaml, zk.connect, "t48auth", "ejob:secret", out, sh);
	tsup_config(&a, "auth", yaml);
	if (tsup_start(&a, args) <= 0) BAIL_OUT("cannot start");
	ok(tsup_wait_log(&a, "job manual: registered", 1, 15000), "a supervisor with a digest registers");
	char *d = zget(zh, "/t48auth/manual/config", NULL, &rc);
	is_int(rc, ZNOAUTH, "without the credentials its config node cannot be read");
	free(d);
	free(tzk_ls(zh, "/t48auth/manual/instances", NULL));
	zhandle_t *za = tzk_connect(zk.connect, 10000, "ejob:secret", 10000);
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

	yaml_for(yaml, sizeof yaml, zk.connect, "t48auth", "ejob:wrong", out, sh);
	tsup_config(&w, "wrong", yaml);
	const char *args_w[] = { "--ip", "127.0.0.9", NULL };
	if (tsup_start(&w, args_w) <= 0) BAIL_OUT("cannot start");
	ok(tsup_wait_log(&w, "ZooKeeper refused access to /t48auth", 1, 15000),
	   "a supervisor with the wrong password says ZooKeeper refused access");
	ok(tsup_log_count(&w, "set regCenter.digest to the user:password that created them") >= 1,
	   "and what to fix");
	ok(tsup_alive(w.pid), "and keeps running");
	s = tsup_stop(&w, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "stops cleanly");
	s = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "stops cleanly");
	tzk_close(za);
	tzk_close(zh);
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
