/* t/42-zkc-keep.c: zkc's kept watches and request items (supervisor/zk/zkc.h) against a real
 * ZooKeeper. The supervisor's client is the single-threaded library, which a test (linked with
 * the mt one) cannot load, so t/native/zkc-probe drives zkc on a libev loop and prints what it is
 * told; this test changes nodes with its own client and reads the probe's lines, in order.
 *
 *   - get / exists / children / multi sent with an item answer with it in r->item; the plain
 *     calls answer ZKC_NO_ITEM.
 *   - A kept exists, data and children watch delivers every change, re-armed by zkc alone, with
 *     its item and the event that caused the read; a data or children watch on a node that goes
 *     waits for it and reads it when it comes back, also when it comes back before the wait is
 *     set (the probe holds zkc's exists back). Arming an armed watch sends nothing.
 *   - zkc_keep_read while armed answers, and the next change is still told once (one
 *     registration).
 *   - zkc_keep_free from inside its own callback, and right after a read (in flight): nothing
 *     more is delivered (and nothing touches freed memory: run under make SANITIZE=address).
 *   - A read made before the first connection waits in zkc (the window's queue) and goes when the
 *     session is there.
 *   - A read lost when the server dies is sent again when it is back (same session), a lost wait
 *     for a missing node is sent again as a wait (nothing told twice), and the watches still
 *     deliver.
 *   - A session taken over and closed (expired for the probe): every kept watch is unarmed, a
 *     change is not told, an answer of the old session that arrives late (t/native/libzkslow
 *     holds it back) is not delivered; arming again works.
 *   - The window: a burst of 20000 has at most ZKC_WINDOW requests at the server at once, all are
 *     answered in the order made, and the lease never falls under half the session timeout; a
 *     connection lost with the window full loses at most the window's requests, the rest wait and
 *     go after the reconnect, in order.
 *
 * "sync" in the probe is four round trips one after the other: every read sent before it, and the
 * read an event caused, is answered before it, so "sync" as the next line means nothing else came. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/zk/zkc.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/tap.h"

#define HELD_MS 2500            /* libzkslow: how long the answer to a watchless instances/ listing is held */

static pid_t probe;
static int to_probe = -1, from_probe = -1;
static char buf[65536];
static size_t have;
static char line[4096];

static void start_probe(const char *hosts)
{
	char slow[PATH_MAX], exe[PATH_MAX], err[600], clog[600];
	if (!realpath(BUILT("t/native/libzkslow.so"), slow)) BAIL_OUT(BUILT("t/native/libzkslow.so") ": %s (run make)", strerror(errno));
	if (!realpath(BUILT("t/native/zkc-probe"), exe)) BAIL_OUT(BUILT("t/native/zkc-probe") ": %s (run make)", strerror(errno));
	snprintf(err, sizeof err, "%s/probe.err", tlib_tmpdir());
	snprintf(clog, sizeof clog, "%s/probe-client.log", tlib_tmpdir());
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) BAIL_OUT("pipe2: %s", strerror(errno));
	probe = tlib_fork();
	if (probe < 0) BAIL_OUT("fork: %s", strerror(errno));
	if (probe == 0) {
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (e >= 0) dup2(e, 2);
		char ms[16], asan[512];
		snprintf(ms, sizeof ms, "%d", HELD_MS);
		setenv("EJOB_ZKSLOW_MS", ms, 1);
		setenv("LD_PRELOAD", slow, 1);
		/* a sanitizer build wants its runtime first; the fault library only wraps one call */
		const char *o = getenv("ASAN_OPTIONS");
		snprintf(asan, sizeof asan, "%s%sverify_asan_link_order=0", o ? o : "", o && *o ? ":" : "");
		setenv("ASAN_OPTIONS", asan, 1);
		execl(exe, exe, hosts, "t42", "8000", clog, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_probe = in[1];
	from_probe = out[0];
}

/* The probe ended (a crash, a sanitizer report): show why. */
static void probe_gone(void)
{
	char p[600];
	snprintf(p, sizeof p, "%s/probe.err", tlib_tmpdir());
	char *s = tsup_slurp(p);
	size_t n = s ? strlen(s) : 0;
	diag("the probe ended; the end of its stderr:\n%s", s ? s + (n > 6000 ? n - 6000 : 0) : "(none)");
	free(s);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof cmd - 1, fmt, ap);
	va_end(ap);
	cmd[n++] = '\n';
	if (write(to_probe, cmd, (size_t)n) != n) {
		probe_gone();
		BAIL_OUT("the probe is gone (write: %s)", strerror(errno));
	}
}

/* The probe's next line, waiting at most timeout_ms: NULL if none came. */
static const char *next_line(unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		char *nl = memchr(buf, '\n', have);
		if (nl) {
			size_t n = (size_t)(nl - buf);
			snprintf(line, sizeof line, "%.*s", (int)n, buf);
			memmove(buf, nl + 1, have - n - 1);
			have -= n + 1;
			return line;
		}
		uint64_t now = tlib_now_ms();
		if (now >= end || have == sizeof buf) return NULL;
		struct pollfd pf = { from_probe, POLLIN, 0 };
		if (poll(&pf, 1, (int)(end - now)) <= 0) continue;
		ssize_t r = read(from_probe, buf + have, sizeof buf - have);
		if (r <= 0) {
			probe_gone();
			BAIL_OUT("the probe is gone (its stdout closed)");
		}
		have += (size_t)r;
	}
}

/* The next line is want (within 5 s). */
static int expect(const char *want, const char *name)
{
	return is_str(next_line(5000), want, "%s", name);
}

/* The same after a server (re)start: a loaded machine's JVM may take its time to answer, and the
 * client's attempt that reached it too early waits out its read timeout before the next one (CI
 * saw 5.9 s). The line must still be the next one. */
static int expect_reconnect(const char *want, const char *name)
{
	return is_str(next_line(30000), want, "%s", name);
}

/* Nothing came before the end of a sync. */
static int quiet(const char *name)
{
	say("sync");
	return expect("sync", name);
}

static void zset(zhandle_t *zh, const char *path, const char *data)
{
	if (tzk_set(zh, path, data) != ZOK) BAIL_OUT("set %s failed", path);
}

static void zcreate(zhandle_t *zh, const char *path, const char *data)
{
	if (tzk_create(zh, path, data, 0, NULL) != ZOK) BAIL_OUT("create %s failed", path);
}

static void zdelete(zhandle_t *zh, const char *path)
{
	if (tzk_delete_r(zh, path) != ZOK) BAIL_OUT("delete %s failed", path);
}

/* Armed before the first connection: its read waits for the connection, and goes when the session
 * is there. */
static void test_first_connect(struct tzk_server *zk, zhandle_t *zh)
{
	say("keep 0 data /d 0");
	say("arm 0");
	expect("keep id=0", "a kept watch made before the first connection (the server is down)");
	expect("arm id=0 rc=0", "  armed: its read waits for the connection");
	usleep(1500000);
	say("inflight 0");
	expect("inflight id=0 n=1", "  in zkc (the window's queue), not failed with the attempts to connect");
	if (tzk_restart(zk, 30000) < 0) BAIL_OUT("cannot start the server again");
	if (!expect_reconnect("state connected new=1", "the server up: the probe connects")) BAIL_OUT("the probe did not connect");
	expect("answer keep=0 item=0 event=0 rc=0 ver=0 data=v0", "  the read goes and is answered");
	say("free 0");
	expect("free id=0", "  (freed)");
	if (!tzk_wait_state(zh, ZOO_CONNECTED_STATE, 10000)) BAIL_OUT("the test's own client did not reconnect");
}

static void test_items(void)
{
	say("get /d 41");
	expect("sent req=get rc=0", "zkc_get_item is sent");
	expect("answer req=get item=41 event=0 rc=0 ver=0 data=v0", "  its answer carries item 41");
	say("exists /none 42");
	expect("sent req=exists rc=0", "zkc_exists_item is sent");
	expect("answer req=exists item=42 event=0 rc=-101", "  its answer (ZNONODE) carries item 42");
	say("children /c 43");
	expect("sent req=children rc=0", "zkc_children_item is sent");
	expect("answer req=children item=43 event=0 rc=0 kids=", "  its answer carries item 43");
	say("multi 44 /m");
	expect("sent req=multi rc=0", "a multi with zkc_multi_item is committed");
	expect("answer req=multi item=44 event=0 rc=0", "  its answer carries item 44");
	say("get /d -");
	expect("sent req=get rc=0", "the plain zkc_get is sent");
	expect("answer req=get item=4294967295 event=0 rc=0 ver=0 data=v0", "  its answer carries ZKC_NO_ITEM");
}

static void test_exists(zhandle_t *zh)
{
	say("keep 1 exists /e 7");
	expect("keep id=1", "a kept exists watch on a missing node");
	say("armed 1");
	expect("armed id=1 v=0", "  is not armed when made");
	say("arm 1");
	expect("arm id=1 rc=0", "  zkc_keep_arm sends its read");
	expect("answer keep=1 item=7 event=0 rc=-101", "  answered ZNONODE with its item, event 0");
	say("armed 1");
	expect("armed id=1 v=1", "  armed now");
	say("arm 1");
	expect("arm id=1 rc=0", "  arming it again says ZOK");
	quiet("  and sends nothing");
	zcreate(zh, "/t42/e", "x");
	expect("answer keep=1 item=7 event=1 rc=0 ver=0", "created: told (CREATED), re-armed by itself");
	zset(zh, "/t42/e", "y");
	expect("answer keep=1 item=7 event=3 rc=0 ver=1", "changed: told (CHANGED)");
	zdelete(zh, "/t42/e");
	expect("answer keep=1 item=7 event=2 rc=-101", "deleted: told (DELETED)");
	zcreate(zh, "/t42/e", "z");
	expect("answer keep=1 item=7 event=1 rc=0 ver=0", "created again: told");
	quiet("  each change once");
}

static void test_data(zhandle_t *zh)
{
	say("keep 2 data /d 8");
	expect("keep id=2", "a kept data watch");
	say("arm 2");
	expect("arm id=2 rc=0", "  armed");
	expect("answer keep=2 item=8 event=0 rc=0 ver=0 data=v0", "  its first answer: the data");
	zset(zh, "/t42/d", "v1");
	expect("answer keep=2 item=8 event=3 rc=0 ver=1 data=v1", "a change: the new data (CHANGED)");
	say("read 2");
	expect("read id=2 rc=0", "zkc_keep_read while armed");
	expect("answer keep=2 item=8 event=0 rc=0 ver=1 data=v1", "  answers now (event 0)");
	say("read 2");
	expect("read id=2 rc=0", "  and again");
	expect("answer keep=2 item=8 event=0 rc=0 ver=1 data=v1", "  answers again");
	zset(zh, "/t42/d", "v2");
	expect("answer keep=2 item=8 event=3 rc=0 ver=2 data=v2", "the next change is told");
	quiet("  once: the reads registered no second watch");
	zdelete(zh, "/t42/d");
	expect("answer keep=2 item=8 event=2 rc=-101", "the node deleted: told (DELETED, ZNONODE)");
	say("read 2");
	expect("read id=2 rc=0", "  a read while it waits for the node");
	expect("answer keep=2 item=8 event=0 rc=-101", "  answers ZNONODE");
	zcreate(zh, "/t42/d", "v3");
	expect("answer keep=2 item=8 event=1 rc=0 ver=0 data=v3", "created again: its data (CREATED)");
	quiet("  once");
	zset(zh, "/t42/d", "v4");
	expect("answer keep=2 item=8 event=3 rc=0 ver=1 data=v4", "and its changes still");
	quiet("  once");
	/* the node comes back between the read that missed it and zkc's exists that waits for it */
	say("holdexists");
	zdelete(zh, "/t42/d");
	expect("answer keep=2 item=8 event=2 rc=-101", "deleted again: told");
	expect("held exists path=/t42/d", "  zkc's wait for the node is held back");
	zcreate(zh, "/t42/d", "v5");
	say("release");
	expect("released rc=0", "  created, and the wait let go");
	expect("answer keep=2 item=8 event=1 rc=0 ver=0 data=v5", "  it finds the node and reads it (CREATED)");
	zset(zh, "/t42/d", "v6");
	expect("answer keep=2 item=8 event=3 rc=0 ver=1 data=v6", "  its changes are told");
	quiet("  once: the wait's watch is the one registration");
}

static void test_children(zhandle_t *zh)
{
	say("keep 3 children /c 9");
	expect("keep id=3", "a kept children watch");
	say("arm 3");
	expect("arm id=3 rc=0", "  armed");
	expect("answer keep=3 item=9 event=0 rc=0 kids=", "  its first answer: no children");
	zcreate(zh, "/t42/c/a", "");
	expect("answer keep=3 item=9 event=4 rc=0 kids=a", "a child comes: told (CHILD)");
	zcreate(zh, "/t42/c/b", "");
	expect("answer keep=3 item=9 event=4 rc=0 kids=a,b", "another");
	zdelete(zh, "/t42/c/a");
	expect("answer keep=3 item=9 event=4 rc=0 kids=b", "one goes");
	zdelete(zh, "/t42/c/b");
	expect("answer keep=3 item=9 event=4 rc=0 kids=", "the other goes");
	zset(zh, "/t42/c", "data");
	quiet("its data changes: not a children watch's business");
	zdelete(zh, "/t42/c");
	expect("answer keep=3 item=9 event=2 rc=-101", "the node itself goes: told (DELETED)");
	zcreate(zh, "/t42/c", "");
	expect("answer keep=3 item=9 event=1 rc=0 kids=", "it comes back: its children (CREATED)");
	/* the node comes back between the listing that missed it and zkc's exists that waits for it */
	say("holdexists");
	zdelete(zh, "/t42/c");
	expect("answer keep=3 item=9 event=2 rc=-101", "it goes again: told");
	expect("held exists path=/t42/c", "  zkc's wait for the node is held back");
	zcreate(zh, "/t42/c", "");
	say("release");
	expect("released rc=0", "  created, and the wait let go");
	expect("answer keep=3 item=9 event=1 rc=0 kids=", "  it finds the node and lists it (CREATED)");
	zcreate(zh, "/t42/c/q", "");
	expect("answer keep=3 item=9 event=4 rc=0 kids=q", "  children are told (a children watch, not the wait's)");
	zdelete(zh, "/t42/c/q");
	expect("answer keep=3 item=9 event=4 rc=0 kids=", "  a child goes");
	zdelete(zh, "/t42/c");
	expect("answer keep=3 item=9 event=2 rc=-101", "  the node goes: told");
	quiet("  once (the wait's exists watch fires too, unheard)");
	zcreate(zh, "/t42/c", "");
	expect("answer keep=3 item=9 event=1 rc=0 kids=", "  and comes back");
	zcreate(zh, "/t42/c/x", "");
	expect("answer keep=3 item=9 event=4 rc=0 kids=x", "and children come to it");
	quiet("  each change once");
}

static void test_free(zhandle_t *zh)
{
	say("keep 4 data /f 10");
	expect("keep id=4", "a kept watch that frees itself in its callback");
	say("arm 4");
	expect("arm id=4 rc=0", "  armed");
	expect("answer keep=4 item=10 event=0 rc=0 ver=0 data=f0", "  answered");
	say("freecb 4");
	zset(zh, "/t42/f", "f1");
	expect("answer keep=4 item=10 event=3 rc=0 ver=1 data=f1", "  a change is told");
	expect("freed id=4", "  and it frees itself in that callback");
	zset(zh, "/t42/f", "f2");
	quiet("  the next change is told to no one");
	say("keep 5 data /f 11");
	say("arm 5");
	expect("keep id=5", "a kept watch freed with a read in flight");
	expect("arm id=5 rc=0", "  armed");
	expect("answer keep=5 item=11 event=0 rc=0 ver=2 data=f2", "  answered");
	say("readfree 5");
	expect("readfree id=5 rc=0", "  zkc_keep_read, then zkc_keep_free at once");
	quiet("  the read's answer is not delivered");
	zset(zh, "/t42/f", "f3");
	quiet("  nor its watch's event");
}

static void test_lost_read(struct tzk_server *zk, zhandle_t *zh)
{
	say("holdexists");
	say("keep 7 data /g 13");
	say("arm 7");
	expect("keep id=7", "a kept data watch on a missing node");
	expect("arm id=7 rc=0", "  armed");
	expect("answer keep=7 item=13 event=0 rc=-101", "  answered ZNONODE");
	expect("held exists path=/t42/g", "  its wait for the node held back");
	if (tzk_pause(zk) < 0) BAIL_OUT("cannot pause the server");
	say("release");
	expect("released rc=0", "the server frozen, the wait goes out");
	say("read 2");
	expect("read id=2 rc=0", "  and a read of the data watch");
	uint64_t t0 = tlib_now_ms();
	tzk_stop(zk, SIGKILL, 5000);
	expect("state connecting", "the server killed: the connection is lost");
	if (tzk_restart(zk, 30000) < 0) BAIL_OUT("cannot restart the server");
	expect_reconnect("state connected new=0", "it restarts: connected again, same session");
	expect("answer keep=2 item=8 event=0 rc=0 ver=1 data=v6", "  the lost read was sent again and answered");
	note("server down and back in %llums", (unsigned long long)(tlib_now_ms() - t0));
	if (!tzk_wait_state(zh, ZOO_CONNECTED_STATE, 10000)) BAIL_OUT("the test's own client did not reconnect");
	zset(zh, "/t42/d", "v7");
	expect("answer keep=2 item=8 event=3 rc=0 ver=2 data=v7", "the data watch still delivers");
	zcreate(zh, "/t42/g", "g0");
	expect("answer keep=7 item=13 event=1 rc=0 ver=0 data=g0",
	       "the lost wait went again, untold (no second ZNONODE): the node comes, told (CREATED)");
	zset(zh, "/t42/e", "w");
	expect("answer keep=1 item=7 event=3 rc=0 ver=1", "the exists watch still delivers");
	zcreate(zh, "/t42/c/y", "");
	expect("answer keep=3 item=9 event=4 rc=0 kids=x,y", "the children watch still delivers");
	quiet("  each once");
}

/* The next line that starts with prefix, within timeout_ms (others are skipped); NULL if none. */
static const char *line_with(const char *prefix, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	const char *l;
	while (tlib_now_ms() < end && (l = next_line((unsigned)(end - tlib_now_ms()))))
		if (!strncmp(l, prefix, strlen(prefix))) return l;
	return NULL;
}

struct burst {
	unsigned n, inflight_max;
	int failed, inorder;
	long lease_min_ms, ms;
};

static int burst_done(struct burst *b, unsigned timeout_ms)
{
	const char *l = line_with("burst n=", timeout_ms);
	return l && sscanf(l, "burst n=%u failed=%d inorder=%d inflight_max=%u lease_min_ms=%ld ms=%ld", &b->n, &b->failed,
	                   &b->inorder, &b->inflight_max, &b->lease_min_ms, &b->ms) == 6;
}

/* The window: a burst never has more than ZKC_WINDOW requests at the server, so the ping's
 * answer (and the lease) is never held behind thousands; they are answered in the order made. */
static void test_window(struct tzk_server *zk, zhandle_t *zh)
{
	struct burst b;
	say("burst 20000 /w");
	ok(line_with("burst sent n=20000", 5000) != NULL, "20000 requests made at once");
	int done = burst_done(&b, 60000);
	ok(done, "all answered (in %ld ms)", done ? b.ms : -1L);
	is_int(b.failed, 0, "  each with the server's answer");
	ok(b.inorder, "  in the order they were made");
	ok(b.inflight_max <= ZKC_WINDOW + 1, "  never more than the window (%d, and the ping) at the server at once: %u",
	   ZKC_WINDOW, b.inflight_max);
	ok(b.lease_min_ms >= 4000, "  the lease never fell under half the 8 s session timeout: %ld ms left at the worst answer",
	   b.lease_min_ms);

	/* the connection lost with a window of them at the server and the rest waiting */
	if (tzk_pause(zk) < 0) BAIL_OUT("cannot pause the server");
	say("burst 1000 /w");
	ok(line_with("burst sent n=1000", 5000) != NULL, "the server frozen, 1000 more made");
	tzk_stop(zk, SIGKILL, 5000);
	ok(line_with("state connecting", 10000) != NULL, "the server killed: the connection is lost");
	if (tzk_restart(zk, 30000) < 0) BAIL_OUT("cannot restart the server");
	ok(line_with("state connected new=0", 20000) != NULL, "it restarts: connected again, same session");
	ok(burst_done(&b, 20000), "all 1000 answered");
	ok(b.failed >= 1 && b.failed <= ZKC_WINDOW,
	   "  those at the server when it went are lost (ZCONNECTIONLOSS: %d, at most the window), the rest waited in zkc "
	   "and went after the reconnect", b.failed);
	ok(b.inorder, "  in the order they were made");
	if (!tzk_wait_state(zh, ZOO_CONNECTED_STATE, 10000)) BAIL_OUT("the test's own client did not reconnect");
	quiet("  nothing else");
}

/* The answers of a share: each part's rc (-99: none) and nops; the requests it took (-1: no end). */
static long share_answers(int n, int *rc, int *nops)
{
	for (int i = 0; i < n; i++) rc[i] = -99, nops[i] = -1;
	const char *l;
	while ((l = line_with("share ", 20000))) {
		int i, r, k;
		unsigned long req;
		if (sscanf(l, "share part=%d rc=%d nops=%d", &i, &r, &k) == 3 && i >= 0 && i < n) {
			rc[i] = r;
			nops[i] = k;
		} else if (sscanf(l, "share done n=%*d requests=%lu", &req) == 1) {
			return (long)req;
		}
	}
	return -1;
}

/* Multis of one turn of the loop go as one request; when that one is refused for one part's sake,
 * each part goes again alone and gets its own answer (the other parts are not lost with it). */
static void test_share(zhandle_t *zh)
{
	enum { N = 50, BAD = 7 };
	int rc[N], nops[N], all = 1;
	zcreate(zh, "/t42/s1", "");
	zcreate(zh, "/t42/s2", "");
	say("share 50 /s1 -1");
	long req = share_answers(N, rc, nops);
	for (int i = 0; i < N; i++) all &= rc[i] == ZOK && nops[i] == 1;
	ok(all, "50 multis of one turn: each answered ZOK with its own op's result");
	ok(req == 1, "  in 1 request (zkc sent %ld)", req);
	struct String_vector v = { 0, NULL };
	is_int(tzk_children(zh, "/t42/s1", &v), ZOK, "  listed");
	is_int(v.count, N, "  all 50 nodes are there");
	deallocate_String_vector(&v);

	say("share 50 /s2 7");
	req = share_answers(N, rc, nops);
	all = 1;
	for (int i = 0; i < N; i++)
		if (i != BAD) all &= rc[i] == ZOK && nops[i] == 1;
	ok(all, "one part refused: the 49 others each answered ZOK, alone");
	is_int(rc[BAD], ZNODEEXISTS, "  the refused one gets its own refusal");
	is_int(nops[BAD], 1, "  with its own op's result");
	ok(req == 1 + N, "  1 shared request, then each of the 50 alone (zkc sent %ld)", req);
	v = (struct String_vector){ 0, NULL };
	tzk_children(zh, "/t42/s2", &v);
	is_int(v.count, N - 1, "  49 nodes are there");
	deallocate_String_vector(&v);

	say("share 1 /s1 0");
	req = share_answers(1, rc, nops);
	ok(rc[0] == ZNODEEXISTS && req == 1, "a turn with one multi sends it as it is (rc %d, %ld request)", rc[0], req);
}

/* Multis made one per turn of the loop while a shared one is at the server wait for its answer and
 * go as one: the batches follow the round trip, not how long a turn takes. The server is stopped
 * (SIGSTOP) while 20 are made, so that the first is unanswered through all of them. */
static void test_share_trickle(struct tzk_server *zk, zhandle_t *zh)
{
	enum { N = 20 };
	int rc[N], nops[N], all = 1;
	zcreate(zh, "/t42/s3", "");
	say("sync");
	expect("sync", "the probe is idle");
	if (tzk_pause(zk) != 0) BAIL_OUT("cannot stop the server");
	say("trickle 20 /s3");
	const char *l = line_with("trickle sent", 5000);
	if (tzk_resume(zk) != 0) BAIL_OUT("cannot resume the server");
	ok(l != NULL, "20 multis, one per turn of the loop, while the server is stopped");
	long req = share_answers(N, rc, nops);
	for (int i = 0; i < N; i++) all &= rc[i] == ZOK && nops[i] == 1;
	ok(all, "  each answered ZOK with its own op's result");
	ok(req == 2, "  in 2 requests: the first alone, the 19 made while it was out as one (zkc sent %ld)", req);
}

static void no_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh, (void)type, (void)state, (void)path, (void)ctx;
}

/* Connect with the probe's session (the server closes the probe's connection), then close it:
 * the session is over, as an expiry; the probe is told so when it reconnects. */
static int end_session(const char *hosts, const char *sess)
{
	clientid_t id;
	memset(&id, 0, sizeof id);
	unsigned long long cid = 0;
	char pw[64] = "";
	if (sscanf(sess, "session id=%llx passwd=%32s", &cid, pw) != 2 || strlen(pw) != 32) return -1;
	id.client_id = (int64_t)cid;
	for (int i = 0; i < 16; i++) {
		unsigned b;
		sscanf(pw + 2 * i, "%2x", &b);
		id.passwd[i] = (char)b;
	}
	zhandle_t *zh = zookeeper_init(hosts, no_watcher, 8000, &id, NULL, 0);
	if (!zh) return -1;
	int ok = tzk_wait_state(zh, ZOO_CONNECTED_STATE, 5000) && zoo_client_id(zh)->client_id == id.client_id;
	zookeeper_close(zh);
	return ok ? 0 : -1;
}

static void test_expiry(struct tzk_server *zk, zhandle_t *zh)
{
	say("keep 6 children /instances 12");
	say("arm 6");
	expect("keep id=6", "a kept children watch on instances/");
	expect("arm id=6 rc=0", "  armed");
	expect("answer keep=6 item=12 event=0 rc=0 kids=a", "  answered");
	uint64_t t0 = tlib_now_ms();
	say("read 6");
	expect("read id=6 rc=0", "a read without a watch, whose answer libzkslow holds back");
	quiet("  the server has answered it (held)");
	say("session");
	const char *s = next_line(5000);
	char sess[128];
	snprintf(sess, sizeof sess, "%s", s ? s : "");
	ok(!strncmp(sess, "session id=", 11), "the probe's session: %s", sess);
	kill(probe, SIGSTOP);
	int ended = end_session(zk->connect, sess);
	zset(zh, "/t42/d", "v8");
	kill(probe, SIGCONT);
	is_int(ended, 0, "its session taken over and closed while the probe was stopped");
	expect("state connecting", "  the probe loses its connection");
	expect("state expired", "  is told its session expired");
	expect_reconnect("state connected new=1", "  and has a new one");
	uint64_t back = tlib_now_ms() - t0;
	ok(back < HELD_MS - 500, "  %llums after the held read was sent: before its answer comes (%dms)",
	   (unsigned long long)back, HELD_MS);
	for (int id = 1; id <= 7; id++) {
		if (id == 4 || id == 5) continue;
		char want[32];
		say("armed %d", id);
		snprintf(want, sizeof want, "armed id=%d v=0", id);
		expect(want, "  a new session: kept watch unarmed");
	}
	/* the held answer comes (from libzkslow's thread) and is not delivered */
	int n = 1;
	uint64_t end = tlib_now_ms() + HELD_MS + 5000;
	while (n && tlib_now_ms() < end) {
		say("inflight 6");
		const char *l = next_line(5000);
		if (!l || sscanf(l, "inflight id=6 n=%d", &n) != 1) {
			is_str(l, "inflight id=6 n=...", "only the answers to 'inflight' while the held answer comes");
			break;
		}
		if (n) usleep(50000);
	}
	is_int(n, 0, "the old session's held answer came %llums after its read",
	       (unsigned long long)(tlib_now_ms() - t0));
	zset(zh, "/t42/d", "v9");
	zcreate(zh, "/t42/c/z", "");
	zcreate(zh, "/t42/instances/b", "");
	quiet("  it was not delivered; changes are told to no unarmed watch");
	say("arm 2");
	expect("arm id=2 rc=0", "the data watch armed again");
	expect("answer keep=2 item=8 event=0 rc=0 ver=4 data=v9", "  answers with the data now");
	zset(zh, "/t42/d", "v10");
	expect("answer keep=2 item=8 event=3 rc=0 ver=5 data=v10", "  and tells the next change");
	say("read 6");
	expect("read id=6 rc=0", "zkc_keep_read of an unarmed watch arms it");
	expect("answer keep=6 item=12 event=0 rc=0 kids=a,b", "  answered");
	zcreate(zh, "/t42/instances/c", "");
	expect("answer keep=6 item=12 event=4 rc=0 kids=a,b,c", "  and tells the next change");
	quiet("  once");
}

/* Many watches through a lost connection. The client gathers every watcher it holds into one list
 * at each change of the connection, searching the list for a duplicate at each: watchers with
 * contexts of their own took minutes of a core at 300,000 (50,000 jobs), at each connection
 * loss. zkc gives the client one context for all of them; each is still told once. */
static void test_many_watches(struct tzk_server *zk, zhandle_t *zh)
{
	enum { N = 3000 };
	say("watchmany %d /many", N);
	char want[96];
	snprintf(want, sizeof want, "watchmany n=%d answered=%d ctxs=1", N, N);
	expect(want, "3,000 plain watches on missing nodes go to the client with one watcher context");
	uint64_t t0 = tlib_now_ms();
	tzk_stop(zk, SIGKILL, 5000);
	expect("state connecting", "the server killed: the connection is lost");
	if (tzk_restart(zk, 30000) < 0) BAIL_OUT("cannot restart the server");
	expect_reconnect("state connected new=0", "it restarts: connected again, same session");
	note("with %d watches: the server down and back in %llums", N, (unsigned long long)(tlib_now_ms() - t0));
	if (!tzk_wait_state(zh, ZOO_CONNECTED_STATE, 10000)) BAIL_OUT("the test's own client did not reconnect");
	zcreate(zh, "/t42/many", "");
	char p[64];
	for (int i = 0; i < N; i++) {
		snprintf(p, sizeof p, "/t42/many/%d", i);
		zcreate(zh, p, "");
	}
	say("sync");
	expect("sync", "  (the probe has read everything up to the last creation)");
	say("watchcount");
	snprintf(want, sizeof want, "watchcount fired=%d twice=0", N);
	expect(want, "  every node created after the reconnect is told to its watch, once");
}

/* The window counts ops: 12 multis of 1,000 ops sent at once are never more than ZKC_WINDOW_OPS
 * (8,192) ops at the server (a shared multi holds up to 1,000; 256 of them were seconds of the
 * server's work ahead of the ping); a multi larger than the window goes, alone. */
static void test_window_ops(zhandle_t *zh)
{
	zcreate(zh, "/t42/big", "");
	say("bigmulti 12 1000 /big");
	const char *l = line_with("bigmulti ", 60000);
	int n = 0, okn = 0;
	unsigned mx = 0;
	ok(l && sscanf(l, "bigmulti n=%d ok=%d ops_max=%u", &n, &okn, &mx) == 3 && n == 12 && okn == 12,
	   "12 multis of 1,000 creates, sent at once, all made: %s", l ? l : "(nothing)");
	ok(mx > 0 && mx <= 8192, "  never more than 8,192 ops at the server at once (%u)", mx);
	zcreate(zh, "/t42/big2", "");
	say("bigmulti 2 9000 /big2");
	l = line_with("bigmulti ", 60000);
	ok(l && sscanf(l, "bigmulti n=%d ok=%d ops_max=%u", &n, &okn, &mx) == 3 && n == 2 && okn == 2 && mx >= 9000 && mx < 18000,
	   "two of 9,000 ops each (over the window): each goes alone (with a ping at most), both made: %s", l ? l : "(nothing)");
}

/* A sanitizer report or an error from zkc in the probe's stderr fails the test. */
static void check_stderr(void)
{
	char p[600];
	snprintf(p, sizeof p, "%s/probe.err", tlib_tmpdir());
	char *s = tsup_slurp(p);
	int bad = s && (strstr(s, "Sanitizer") || strstr(s, "runtime error") || strstr(s, " ERROR "));
	ok(!bad, "the probe's stderr has no sanitizer report and no zkc error");
	if (bad) diag("%s", s);
	free(s);
}

int main(void)
{
	tlib_init(180);
	struct tzk_server zk;
	const struct tzk_opts o = { .tick_ms = 200, .max_session_ms = 20000 };
	if (tzk_start(&zk, "zk", &o, 30000) < 0) BAIL_OUT("cannot start ZooKeeper");
	zhandle_t *zh = tzk_connect(zk.connect, 8000, NULL, 5000);
	if (!zh) BAIL_OUT("no client");
	zcreate(zh, "/t42/d", "v0");
	zcreate(zh, "/t42/c", "");
	zcreate(zh, "/t42/f", "f0");
	zcreate(zh, "/t42/instances/a", "");

	tzk_stop(&zk, SIGKILL, 5000);
	start_probe(zk.connect);
	test_first_connect(&zk, zh);
	test_items();
	test_exists(zh);
	test_data(zh);
	test_children(zh);
	test_free(zh);
	test_lost_read(&zk, zh);
	test_expiry(&zk, zh);
	test_window(&zk, zh);
	test_share(zh);
	test_share_trickle(&zk, zh);
	test_many_watches(&zk, zh);
	test_window_ops(zh);

	say("read 2");
	say("read 3");
	say("quit");
	expect("read id=2 rc=0", "reads in flight");
	expect("read id=3 rc=0", "  two");
	expect("bye", "zkc_free with them in flight (their answers are not delivered), then zkc_keep_free of the "
	              "kept watches left");
	int st = 0;
	pid_t r;
	while ((r = waitpid(probe, &st, 0)) < 0 && errno == EINTR) {}
	if (r == probe) tlib_untrack(probe);
	ok(r == probe && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the probe exits 0 (status 0x%x)", st);
	check_stderr();
	tzk_close(zh);
	tzk_stop(&zk, SIGKILL, 5000);
	return done_testing();
}
