/* t/116-console-users.c: who sees what in the web console, its servers and instances pages, and
 * what it shows when the cluster fails, in a real headless Chromium (t/console/116-users.py)
 * against a real cluster: one ZooKeeper, two supervisors (127.0.0.1, 127.0.0.2) with long (two
 * items that run 20 s when triggered, failover on) and web (every 3 s), and `ejobctl serve --auth`
 * (an admin, an operator, a viewer). The driver:
 *   - as the viewer: no write control on any page (hidden, not disabled); a write forged from the
 *     page's own session (fetch) is refused, 403, nothing written, its audit line says so;
 *   - as the operator: the operations but neither the config's editor nor remove; the servers
 *     and instances pages, a server's jobs disabled and enabled at once (ejobctl servers --json);
 *   - a supervisor killed (asked of this test: "@ kill s1") while both run long's items: the page
 *     shows the item taken over (failover to the other instance), the server with no instance;
 *   - ZooKeeper stopped ("@ zk-stop"): a banner says so, the page keeps what it showed; started
 *     again ("@ zk-start"): the banner goes, the page follows the cluster again;
 *   - serve stopped ("@ serve-stop"): a banner says serve does not answer; started again on the
 *     same port ("@ serve-start"): the banner goes, and the login form (its sessions were in memory). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tsup.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"
#include "t/lib/tbrowser.h"

static struct tzkup u;
static struct tserve sv;
static struct tsup s[2];
static const char *serve_args[16];

/* what the driver asks: kill s1, zk-stop, zk-start, serve-stop, serve-start */
static const char *act(void *arg, const char *cmd)
{
	(void)arg;
	if (!strcmp(cmd, "kill s1")) {
		/* a crashed machine: the supervisor, its workers and their items */
		pid_t kids[64];
		int n = tsup_descendants(s[1].pid, kids, 64);
		kill(s[1].pid, SIGKILL);
		for (int i = 0; i < n; i++) kill(kids[i], SIGKILL);
		waitpid(s[1].pid, NULL, 0);
		tlib_untrack(s[1].pid);
		s[1].pid = 0;
		return "ok";
	}
	if (!strcmp(cmd, "zk-stop")) {
		tzk_stop(&u.zk, SIGKILL, 5000);
		return "ok";
	}
	if (!strcmp(cmd, "zk-start")) return tzk_restart(&u.zk, 30000) ? "failed" : "ok";
	if (!strcmp(cmd, "serve-stop")) {
		tserve_stop(&sv);
		return "ok";
	}
	if (!strcmp(cmd, "serve-start")) {
		/* the same port: the page's address */
		static char listen[64];
		int port = sv.port;
		snprintf(listen, sizeof listen, "127.0.0.1:%d", port);
		const char *args[20];
		int n = 0;
		for (; serve_args[n]; n++) args[n] = serve_args[n];
		args[n++] = "--listen", args[n++] = listen, args[n] = NULL;
		tserve_start(&sv, "serve2", args);
		return sv.port == port ? "ok" : "another port";
	}
	return "unknown command";
}

int main(void)
{
	tlib_init(180);
	tbrowser_require();
	tzkup_start(&u, 200, "t116", 4000);
	char slow[600], jobs[2048];
	tlib_script(slow, sizeof slow, "slow.sh", "#!/bin/sh\nsleep 20\n");
	snprintf(jobs, sizeof jobs,
	         "  long:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n    failover: true\n"
	         "    props: {script.command.line: \"%s\"}\n"
	         "  web:\n    type: script\n    cron: \"0/3 * * * * ?\"\n    shardingTotalCount: 2\n"
	         "    props: {script.command.line: /bin/true}\n", slow);
	tzkup_run_n(&u, s, 2, "workers: 2, killGraceSeconds: 1, shutdownGraceSeconds: 1", jobs);
	const char *names[] = { "long", "web" };
	for (int j = 0; j < 2; j++)
		for (int i = 0; i < 2; i++)
			if (!tzkup_wait_registered(&u, names[j], s[i].id, 0, 20000)) BAIL_OUT("%s did not register %s", s[i].id, names[j]);
	pass("two supervisors run long and web");

	static char auth[600];
	char line[2048];
	snprintf(auth, sizeof auth, "%s/users", tlib_tmpdir());
	char *ha = tserve_hash("adm-pass"), *ho = tserve_hash("oper-pass"), *hv = tserve_hash("view-pass");
	snprintf(line, sizeof line, "adm:%s:admin\noper:%s:operator\nview:%s:viewer\n", ha, ho, hv);
	tlib_write_file(auth, line, strlen(line));
	free(ha), free(ho), free(hv);
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, "--auth", auth, NULL };
	memcpy(serve_args, args, sizeof args);
	tserve_start(&sv, "serve", args);

	char url[128], zk[300], ns[100], ids[300];
	snprintf(url, sizeof url, "EJOB_URL=http://127.0.0.1:%d", sv.port);
	snprintf(zk, sizeof zk, "EJOB_ZK=%s", u.connect);
	snprintf(ns, sizeof ns, "EJOB_NS=%s", u.ns);
	snprintf(ids, sizeof ids, "EJOB_IDS=%s %s", s[0].id, s[1].id);
	const char *env[] = { url, zk, ns, ids, "EJOB_USERS=adm:adm-pass:admin oper:oper-pass:operator view:view-pass:viewer",
		              "EJOB_CTL=" BUILT("tools/ejobctl"), NULL };
	tbrowser_run("t/console/116-users.py", env, act, NULL, 150);

	tserve_stop(&sv);
	tsup_stop(&s[0], SIGTERM, 10000);
	tzkup_end(&u);
	return done_testing();
}
