/* t/41-tzk.c: the test helper t/lib/tzk against a real ZooKeeper 3.8: a standalone server and
 * its client calls, ephemeral nodes, digest ACLs, negotiated session timeouts and a real expiry,
 * restarts that keep data and port, a 3-server ensemble that loses its leader, tools/zk-local;
 * and no server left running at the end. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

#define MAX_PIDS 16
static pid_t servers[MAX_PIDS];   /* every ZooKeeper JVM this test saw */
static int nservers;

static void saw(pid_t p)
{
	for (int i = 0; i < nservers; i++)
		if (servers[i] == p) return;
	if (p > 0 && nservers < MAX_PIDS) servers[nservers++] = p;
}

static unsigned long long ms_since(uint64_t t0)
{
	return (unsigned long long)(tlib_now_ms() - t0);
}

/* --hold HOSTS PATH SESSION_MS TMPDIR: a client in a process of its own that holds an ephemeral
 * node, prints its negotiated timeout and waits to be stopped. */
static int hold(char **argv)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);   /* gone with the test, even a SIGKILLed one */
	if (getppid() == 1) return 1;
	setenv("TMPDIR", argv[5], 1);      /* its client log lands in the test's tmpdir */
	zhandle_t *zh = tzk_connect(argv[2], (unsigned)atoi(argv[4]), NULL, 5000);
	if (!zh || tzk_create(zh, argv[3], "held", ZOO_EPHEMERAL, NULL) != ZOK) return 1;
	printf("%d\n", tzk_session_ms(zh));
	fflush(stdout);
	for (;;) pause();
}

static pid_t start_holder(const char *hosts, const char *path, unsigned session_ms, int *granted)
{
	char ms[16];
	snprintf(ms, sizeof ms, "%u", session_ms);
	const char *argv[] = { "/proc/self/exe", "--hold", hosts, path, ms, tlib_tmpdir(), NULL };
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) return -1;
	pid_t p = tlib_fork();
	if (p == 0) {
		dup2(pfd[1], 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	char buf[32] = "";
	struct pollfd pf = { pfd[0], POLLIN, 0 };
	if (poll(&pf, 1, 10000) == 1) {
		ssize_t r = read(pfd[0], buf, sizeof buf - 1);
		buf[r > 0 ? r : 0] = '\0';
	}
	close(pfd[0]);
	*granted = atoi(buf);
	return p;
}

/* /proc/net/tcp lists the listening socket of the port with address 127.0.0.1, and no other */
static int listens_on_loopback_only(int port)
{
	int loop = 0, other = 0;
	static const char *const files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	for (int f = 0; f < 2; f++) {
		char *s = tsup_slurp(files[f]);
		for (char *line = s ? strchr(s, '\n') : NULL; line && *++line;) {
			char local[64];
			unsigned p, st;
			if (sscanf(line, "%*d: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", local, &p, &st) == 3 &&
			    (int)p == port && st == 0x0a) {
				if (!strcmp(local, "0100007F")) loop++;
				else other++;
			}
			line = strchr(line, '\n');
		}
		free(s);
	}
	return loop == 1 && other == 0;
}

static void test_standalone(struct tzk_server *z)
{
	const struct tzk_opts o = { .tick_ms = 100 };
	uint64_t t0 = tlib_now_ms();
	if (tzk_start(z, "zk", &o, 30000) < 0) BAIL_OUT("cannot start a ZooKeeper server (see above)");
	saw(z->pid);
	note("a standalone server serves %llums after its start (tzk_start: %llums)",
	     (unsigned long long)z->ready_ms, ms_since(t0));
	ok(!strncmp(z->connect, "127.0.0.1:", 10) && atoi(z->connect + 10) == z->client_port,
	   "connect string %s", z->connect);
	char *r = tzk_4lw(z, "ruok", 2000);
	is_str(r, "imok", "ruok: imok");
	free(r);
	is_int(tzk_mode(z), TZK_STANDALONE, "srvr: Mode: standalone");
	r = tzk_4lw(z, "conf", 2000);
	ok(r && strstr(r, "tickTime=100\n"), "conf: tickTime=100");
	free(r);
	ok(listens_on_loopback_only(z->client_port), "it listens on 127.0.0.1 only");
	ok(tzk_alive(z), "its JVM runs");
}

static void test_client(struct tzk_server *z)
{
	zhandle_t *zh = tzk_connect(z->connect, 2000, NULL, 5000);
	if (!ok(zh != NULL, "a client connects")) BAIL_OUT("no client");
	is_int(tzk_create(zh, "/t/a/b", "hello", 0, NULL), ZOK, "create with its parents");
	char *d = NULL;
	struct Stat st;
	is_int(tzk_get(zh, "/t/a/b", &d, &st), ZOK, "get");
	is_str(d, "hello", "  its data");
	is_int(st.version, 0, "  version 0");
	free(d);
	tzk_get(zh, "/t/a", &d, &st);
	ok(d && !*d && st.dataLength == 0, "a parent made on the way has empty data");
	free(d);
	is_int(tzk_create(zh, "/t/a/b", "again", 0, NULL), ZNODEEXISTS, "create of an existing node: ZNODEEXISTS");
	is_int(tzk_set(zh, "/t/a/b", "world"), ZOK, "set");
	tzk_get(zh, "/t/a/b", &d, &st);
	ok(d && !strcmp(d, "world") && st.version == 1, "  new data, version 1");
	free(d);
	tzk_create(zh, "/t/a/c", "line1\nline2\t\\\x01", 0, NULL);
	tzk_create(zh, "/t/a/10", "ten", 0, NULL);
	tzk_create(zh, "/t/a/2", "two", 0, NULL);
	is_int(zoo_create(zh, "/t/null", NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK, "a node with null data");
	d = (char *)"x";
	is_int(tzk_get(zh, "/t/null", &d, &st), ZOK, "  get");
	ok(d == NULL && st.dataLength == 0, "  no data: NULL, not \"\" (dataLength 0 for both)");
	char *ls = tzk_ls(zh, "/t/a", NULL);
	is_str(ls, "10,2,b,c", "children, sorted");
	free(ls);
	struct String_vector v;
	is_int(tzk_children(zh, "/t/a", &v), ZOK, "tzk_children");
	ok(v.count == 4 && !strcmp(v.data[0], "10") && !strcmp(v.data[3], "c"), "  sorted too");
	deallocate_String_vector(&v);
	is_int(tzk_exists(zh, "/t/a/b", &st), ZOK, "exists");
	is_int(tzk_exists(zh, "/t/nope", NULL), ZNONODE, "exists of a missing node: ZNONODE");
	int rc = 0;
	ls = tzk_ls(zh, "/t/nope", &rc);
	ok(!ls && rc == ZNONODE, "children of a missing node: ZNONODE");

	/* an ephemeral node lives as long as its session */
	zhandle_t *z2 = tzk_connect(z->connect, 2000, NULL, 5000);
	is_int(tzk_create(z2, "/t/eph", "e", ZOO_EPHEMERAL, NULL), ZOK, "another session creates an ephemeral node");
	char *dump = tzk_dump(zh, "/t", NULL);
	is_str(dump,
	       "/t = \n"
	       "/t/a = \n"
	       "/t/a/10 = ten\n"
	       "/t/a/2 = two\n"
	       "/t/a/b = world\n"
	       "/t/a/c = line1\\nline2\\t\\\\\\x01\n"
	       "/t/eph [E] = e\n"
	       "/t/null\n",
	       "dump: sorted, ephemeral marked, data escaped, null data without ' = '");
	free(dump);
	uint64_t t0 = tlib_now_ms();
	tzk_close(z2);
	ok(tzk_wait_exists(zh, "/t/eph", 0, 3000), "the ephemeral node is gone when its client closes (%llums)",
	   ms_since(t0));
	dump = tzk_dump(zh, "/", NULL);
	ok(dump && !strstr(dump, "/zookeeper") && strstr(dump, "\n/t/a/b = world\n"), "dump of / leaves out /zookeeper");
	free(dump);
	rc = 0;
	ok(tzk_dump(zh, "/nope", &rc) == NULL && rc == ZNONODE, "dump of a missing node: NULL, ZNONODE");
	is_int(tzk_delete_r(zh, "/t"), ZOK, "delete recursive");
	is_int(tzk_exists(zh, "/t", NULL), ZNONODE, "  the subtree is gone");
	is_int(tzk_delete_r(zh, "/t"), ZOK, "  deleting it again: ZOK");
	tzk_close(zh);
}

static void test_digest(struct tzk_server *z)
{
	zhandle_t *alice = tzk_connect(z->connect, 2000, "alice:secret", 5000);
	zhandle_t *anon = tzk_connect(z->connect, 2000, NULL, 5000);
	zhandle_t *bob = tzk_connect(z->connect, 2000, "bob:secret", 5000);
	ok(alice && anon && bob, "clients with digest auth and without connect");
	if (!alice || !anon || !bob) BAIL_OUT("no client");
	is_int(tzk_create(alice, "/sec/x", "s", 0, &ZOO_CREATOR_ALL_ACL), ZOK, "alice creates CREATOR_ALL nodes");
	char *d = NULL;
	is_int(tzk_get(anon, "/sec/x", &d, NULL), ZNOAUTH, "an unauthenticated client cannot read them: ZNOAUTH");
	is_int(tzk_get(bob, "/sec/x", &d, NULL), ZNOAUTH, "nor can another user");
	is_int(tzk_set(anon, "/sec/x", "y"), ZNOAUTH, "nor write them");
	is_int(tzk_get(alice, "/sec/x", &d, NULL), ZOK, "alice can");
	is_str(d, "s", "  her data");
	free(d);
	is_int(tzk_create(anon, "/nobody", "", 0, &ZOO_CREATOR_ALL_ACL), ZINVALIDACL,
	       "CREATOR_ALL without auth: ZINVALIDACL");
	is_int(tzk_delete_r(alice, "/sec"), ZOK, "alice deletes them");
	tzk_close(alice);
	tzk_close(anon);
	tzk_close(bob);
}

static void test_sessions(struct tzk_server *z)
{
	/* tickTime 100: the server grants a timeout within [2, 20] ticks */
	static const int ask[][2] = { { 1000, 1000 }, { 50, 200 }, { 60000, 2000 } };
	for (size_t i = 0; i < sizeof ask / sizeof ask[0]; i++) {
		zhandle_t *zh = tzk_connect(z->connect, (unsigned)ask[i][0], NULL, 5000);
		is_int(zh ? tzk_session_ms(zh) : -1, ask[i][1], "asked for a %dms session, granted %dms", ask[i][0], ask[i][1]);
		tzk_close(zh);
	}

	/* a real expiry: a client process with a 400ms session holds an ephemeral node; frozen, it
	 * sends no pings and the server expires it */
	zhandle_t *zh = tzk_connect(z->connect, 2000, NULL, 5000);
	int granted = 0;
	pid_t h = start_holder(z->connect, "/held", 400, &granted);
	is_int(granted, 400, "a client process holds an ephemeral node with a 400ms session");
	usleep(1000000);
	is_int(tzk_exists(zh, "/held", NULL), ZOK, "  which outlives 2.5 session timeouts while the client runs");
	uint64_t t0 = tlib_now_ms();
	kill(h, SIGSTOP);
	ok(tzk_wait_exists(zh, "/held", 0, 3000), "the client frozen, its session expires and the node goes");
	unsigned long long took = ms_since(t0);
	ok(took >= 100 && took < 1500, "  %llums after SIGSTOP (timeout 400ms, tick 100ms)", took);
	kill(h, SIGKILL);
	waitpid(h, NULL, 0);
	tlib_untrack(h);
	tzk_close(zh);
}

static void test_restart(struct tzk_server *z)
{
	zhandle_t *zh = tzk_connect(z->connect, 2000, NULL, 5000);
	if (!zh) BAIL_OUT("no client");
	int64_t session = zoo_client_id(zh)->client_id;
	tzk_create(zh, "/keep/me", "data", 0, NULL);
	char connect[32];
	snprintf(connect, sizeof connect, "%s", z->connect);
	pid_t old = z->pid;
	int st = tzk_stop(z, SIGKILL, 5000);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "SIGKILL stops the server");
	ok(!z->pid && !tzk_alive(z) && kill(old, 0) < 0, "  it is reaped");
	is_int(tzk_mode(z), TZK_DOWN, "  and does not answer");
	ok(tzk_wait_state(zh, ZOO_CONNECTING_STATE, 3000) || zoo_state(zh) != ZOO_CONNECTED_STATE,
	   "the client lost its connection");
	uint64_t t0 = tlib_now_ms();
	is_int(tzk_restart(z, 30000), 0, "restart");
	saw(z->pid);
	note("a restart serves after %llums", ms_since(t0));
	is_str(z->connect, connect, "  on the same port");
	ok(tzk_wait_state(zh, ZOO_CONNECTED_STATE, 5000), "the client reconnects (%llums after the restart began)",
	   ms_since(t0));
	ok(zoo_client_id(zh)->client_id == session, "  to the same session: it outlived the crash");
	char *d = NULL;
	is_int(tzk_get(zh, "/keep/me", &d, NULL), ZOK, "persistent data outlives a SIGKILL (forceSync=no)");
	is_str(d, "data", "  unchanged");
	free(d);
	tzk_set(zh, "/keep/me", "after");

	st = tzk_stop(z, SIGTERM, 10000);
	ok((WIFEXITED(st) && WEXITSTATUS(st) == 143) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM),
	   "SIGTERM stops it (status 0x%x)", st);
	is_int(tzk_restart(z, 30000), 0, "restart after SIGTERM");
	saw(z->pid);
	ok(tzk_wait_state(zh, ZOO_CONNECTED_STATE, 5000), "the client reconnects");
	d = NULL;
	tzk_get(zh, "/keep/me", &d, NULL);
	is_str(d, "after", "the last write is there");
	free(d);

	/* a frozen server: no answer, no reset; requests time out */
	is_int(tzk_pause(z), 0, "SIGSTOP the server");
	is_int(tzk_mode(z), TZK_DOWN, "  srvr gets no answer");
	t0 = tlib_now_ms();
	int rc = tzk_exists(zh, "/keep/me", NULL);
	ok(rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT, "  a request fails: %s after %llums (session %dms)",
	   zerror(rc), ms_since(t0), tzk_session_ms(zh));
	is_int(tzk_resume(z), 0, "SIGCONT");
	is_int(tzk_mode(z), TZK_STANDALONE, "  it serves again");
	zhandle_t *z2 = tzk_connect(z->connect, 2000, NULL, 5000);
	ok(z2 != NULL, "  a new client connects");
	tzk_close(z2);
	t0 = tlib_now_ms();
	uint64_t end = t0 + 5000;
	while (zoo_state(zh) != ZOO_CONNECTED_STATE && zoo_state(zh) != ZOO_EXPIRED_SESSION_STATE && tlib_now_ms() < end)
		usleep(2000);
	ok(zoo_state(zh) == ZOO_CONNECTED_STATE || zoo_state(zh) == ZOO_EXPIRED_SESSION_STATE,
	   "  the old client is connected again or told its session expired (%s)",
	   zoo_state(zh) == ZOO_CONNECTED_STATE ? "connected" : "expired");
	tzk_close(zh);
}

static int write_until_ok(zhandle_t *zh, const char *path, const char *data, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	int rc;
	while ((rc = tzk_set(zh, path, data)) != ZOK && tlib_now_ms() < end) usleep(20000);
	return rc;
}

static void test_ensemble(void)
{
	struct tzk_ensemble e;
	const struct tzk_opts o = { .tick_ms = 100 };
	uint64_t t0 = tlib_now_ms();
	if (tzk_ensemble_start(&e, "ens", 3, &o, 30000) < 0) BAIL_OUT("cannot start a 3-server ensemble (see above)");
	for (int i = 0; i < e.n; i++) saw(e.m[i].pid);
	note("a 3-server ensemble has its quorum %llums after its start", ms_since(t0));
	ok(strchr(e.connect, ',') && strstr(e.connect, e.m[2].connect), "connect string %s", e.connect);
	int leader = tzk_ensemble_leader(&e);
	ok(leader >= 0, "one member leads (server.%d)", leader + 1);
	int followers = 0;
	for (int i = 0; i < e.n; i++) followers += tzk_mode(&e.m[i]) == TZK_FOLLOWER;
	is_int(followers, 2, "two follow");
	zhandle_t *zh = tzk_connect(e.connect, 4000, NULL, 5000);
	if (!zh) BAIL_OUT("no client");
	is_int(tzk_create(zh, "/ens", "1", 0, NULL), ZOK, "a write");

	t0 = tlib_now_ms();
	tzk_stop(&e.m[leader], SIGKILL, 5000);
	is_int(tzk_ensemble_wait_quorum(&e, 20000), 0, "the leader killed, the other two form a quorum");
	int now_leader = tzk_ensemble_leader(&e);
	ok(now_leader >= 0 && now_leader != leader, "  with a new leader (server.%d, after %llums)", now_leader + 1,
	   ms_since(t0));
	is_int(write_until_ok(zh, "/ens", "2", 10000), ZOK, "a write succeeds (%llums after the kill)", ms_since(t0));

	t0 = tlib_now_ms();
	is_int(tzk_restart(&e.m[leader], 30000), 0, "the killed member restarts");
	saw(e.m[leader].pid);
	is_int(tzk_mode(&e.m[leader]), TZK_FOLLOWER, "  and follows (after %llums)", ms_since(t0));
	zhandle_t *zm = tzk_connect(e.m[leader].connect, 4000, NULL, 5000);
	char *d = NULL;
	if (zm) tzk_get(zm, "/ens", &d, NULL);
	is_str(d, "2", "  it has the write it missed");
	free(d);
	tzk_close(zm);
	tzk_close(zh);
	is_int(tzk_ensemble_wait_quorum(&e, 5000), 0, "all three in the quorum");
	tzk_ensemble_stop(&e, SIGTERM, 10000);
	int running = 0;
	for (int i = 0; i < e.n; i++) running += e.m[i].pid != 0;
	is_int(running, 0, "the ensemble stops");
}

static pid_t read_pid(const char *path)
{
	char *s = tsup_slurp(path);
	pid_t p = s ? (pid_t)atoi(s) : 0;
	free(s);
	return p;
}

static int run_zk_local(const char *cmd, const char *dir, const char *port, char **out)
{
	const char *argv[] = { "tools/zk-local", cmd, dir, port, NULL };
	char *err = NULL;
	int st = tlib_run(argv, out, &err);
	if (err && *err) note("zk-local %s: %s", cmd, err);
	free(err);
	return st;
}

static void test_zk_local(void)
{
	char dir[600], port[16], want[64], pidf[700];
	snprintf(dir, sizeof dir, "%s/zk-local", tlib_tmpdir());
	snprintf(pidf, sizeof pidf, "%s/zookeeper.pid", dir);
	snprintf(port, sizeof port, "%d", tzk_free_port());
	snprintf(want, sizeof want, "127.0.0.1:%s\n", port);
	char *out = NULL;
	uint64_t t0 = tlib_now_ms();
	int st = run_zk_local("start", dir, port, &out);
	/* not our child (it runs in a session of its own), but killed at exit all the same */
	pid_t p = read_pid(pidf);
	if (p > 0) tlib_track(p);
	saw(p);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "tools/zk-local start: exit 0 (%llums)", ms_since(t0));
	is_str(out, want, "  prints the connect string");
	free(out);
	ok(p > 0 && tsup_alive(p), "  the pid in DIR/zookeeper.pid runs");
	st = run_zk_local("status", dir, NULL, &out);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && out && strstr(out, "mode standalone"), "status: serving, standalone");
	free(out);
	want[strlen(want) - 1] = '\0';
	zhandle_t *zh = tzk_connect(want, 4000, NULL, 5000);
	is_int(zh ? tzk_create(zh, "/demo", "x", 0, NULL) : -1, ZOK, "a client uses it");
	tzk_close(zh);
	st = run_zk_local("stop", dir, NULL, &out);
	free(out);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "stop: exit 0");
	uint64_t end = tlib_now_ms() + 5000;
	while (p > 0 && tsup_alive(p) && tlib_now_ms() < end) usleep(5000);
	ok(p > 0 && !tsup_alive(p), "  the server is gone");
	st = run_zk_local("status", dir, NULL, &out);
	free(out);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 3, "status after stop: exit 3 (not running)");
	if (p > 0) tlib_untrack(p);
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "--hold")) return hold(argv);
	tlib_init(120);
	plan(91);
	uint64_t t0 = tlib_now_ms();
	struct tzk_server z;
	test_standalone(&z);
	test_client(&z);
	test_digest(&z);
	test_sessions(&z);
	test_restart(&z);
	int st = tzk_stop(&z, SIGTERM, 10000);
	ok(st != -1 && !z.pid, "the standalone server stops on SIGTERM");
	test_ensemble();
	test_zk_local();

	/* nothing left: every JVM is reaped (ours) or gone (zk-local's, reaped by init) */
	uint64_t end = tlib_now_ms() + 5000;
	int left;
	for (;;) {
		left = 0;
		for (int i = 0; i < nservers; i++) left += kill(servers[i], 0) == 0 || errno != ESRCH;
		if (!left || tlib_now_ms() >= end) break;
		usleep(10000);
	}
	is_int(left, 0, "none of the %d ZooKeeper JVMs this test started is left", nservers);
	note("the whole test took %llums", ms_since(t0));
	return done_testing();
}
