/* t/28-sup-attach.c: external workers attached to a real supervisor: the example worker serves
 * its job; a process of another uid is refused (and admitted once allowed); one that writes
 * garbage into its completion ring is cut off, its item runs elsewhere, the supervisor goes on;
 * a supervisor stopped while an external worker runs an item waits for it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "ipc/shm.h"
#include "ipc/wait.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/tap.h"
#include "worker/ejob.h"

static const char yaml[] =
	"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t28}\n"
	"supervisor: {workers: 1, attachSocket: \"@SOCK@\"%s}\n"
	"jobs:\n"
	"  ext:\n"
	"    type: external\n"
	"    cron: \"0 0 * * * ?\"\n"
	"    shardingTotalCount: %d\n"
	"    maxRetries: 1\n"
	"  local:\n"
	"    type: script\n"
	"    cron: \"0 0 * * * ?\"\n"
	"    shardingTotalCount: 1\n"
	"    props: {script.command.line: \"/bin/true\"}\n";

static pid_t start_example(const char *sock, const char *log)
{
	pid_t p = tlib_fork();
	if (p == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(BUILT("examples/external-worker"), BUILT("examples/external-worker"), "--socket", sock, "ext", (char *)NULL);
		_exit(127);
	}
	return p;
}

static void test_example(void)
{
	struct tsup t;
	char y[2048], wlog[700];
	snprintf(y, sizeof y, yaml, "", 3);
	tsup_config(&t, "example", y);
	snprintf(wlog, sizeof wlog, "%s/worker.log", t.dir);
	const char *args[] = { "--run", "ext", NULL };
	tsup_start(&t, args);
	ok(tsup_wait_listening(&t, 5000), "supervisor listening");
	pid_t w = start_example(t.sock, wlog);
	int st = tsup_stop(&t, 0, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the external job's run ends: exit 0");
	char want[128];
	snprintf(want, sizeof want, "attach:%d \"external-worker\" (uid %u) attached for ext with 1 slot", (int)w,
	         (unsigned)getuid());
	is_int(tsup_log_count(&t, want), 1, "the supervisor logged the attachment");
	snprintf(want, sizeof want, ": ok in ");
	is_int(tsup_log_count(&t, want), 3, "three items ok");
	snprintf(want, sizeof want, "on attach:%d#0", (int)w);
	is_int(tsup_log_count(&t, want), 3, "all on the attachment");
	int wst;
	waitpid(w, &wst, 0);
	tlib_untrack(w);
	is_int(tsup_count_lines(wlog, "external-worker[0]: job=ext item="), 3, "the worker ran the three items");
	ok(tsup_count_lines(wlog, "the supervisor is stopping: detaching") == 1, "and left when the supervisor stopped");
	ok(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "  exit 0 (status 0x%x)", wst);
}

/* connect as uid 65534 and report what ejob_attach said, through a pipe */
static int attach_as_nobody(const char *sock, char *msg, size_t ml)
{
	int pp[2];
	if (pipe(pp) < 0) return -1;
	pid_t p = tlib_fork();
	if (p == 0) {
		close(pp[0]);
		if (setgid(65534) < 0 || setuid(65534) < 0) _exit(3);
		const char *jobs[] = { "ext", NULL };
		struct ejob_attach_opts o = { .socket_path = sock, .jobs = jobs, .slots = 1, .name = "nobody" };
		ejob_worker *w;
		char err[600];
		int r = ejob_attach(&o, &w, err, sizeof err);
		dprintf(pp[1], "%d %s", r == 0 ? 0 : errno, r == 0 ? "attached" : err);
		_exit(0);
	}
	close(pp[1]);
	ssize_t n = read(pp[0], msg, ml - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pp[0]);
	int st;
	waitpid(p, &st, 0);
	tlib_untrack(p);
	return atoi(msg);
}

static void test_other_uid(void)
{
	if (getuid() != 0) {
		skip(5, "needs root to become another uid");
		return;
	}
	struct tsup t;
	char y[2048], msg[700];
	snprintf(y, sizeof y, yaml, "", 1);
	tsup_config(&t, "uid", y);
	chmod(tlib_tmpdir(), 0711);   /* let uid 65534 reach the socket: the supervisor decides */
	chmod(t.dir, 0711);
	tsup_start(&t, (const char *const[]){ "--standalone", NULL });   /* attaching alone: no ZooKeeper */
	ok(tsup_wait_listening(&t, 5000), "supervisor listening");
	int e = attach_as_nobody(t.sock, msg, sizeof msg);
	ok(e == ECONNREFUSED, "uid 65534 is refused (errno %d)", e);
	ok(strstr(msg, "uid 65534 may not attach to this supervisor (uid 0): add it to supervisor.attachAllowUids") != NULL,
	   "with the reason and the fix: %s", msg + 2);
	ok(tsup_wait_log(&t, "attach: refused pid", 1, 2000), "and the supervisor logs it");
	tsup_stop(&t, SIGTERM, 10000);

	snprintf(y, sizeof y, yaml, ", attachAllowUids: [65534]", 1);
	tsup_config(&t, "uid2", y);
	chmod(t.dir, 0711);
	tsup_start(&t, (const char *const[]){ "--standalone", NULL });   /* attaching alone: no ZooKeeper */
	tsup_wait_listening(&t, 5000);
	e = attach_as_nobody(t.sock, msg, sizeof msg);
	ok(e == 0, "once allowed in attachAllowUids, uid 65534 attaches (%s)", msg + 2);
	tsup_stop(&t, SIGTERM, 10000);
}

/* A rogue attachment: a correct handshake, then garbage where its completion should be. */
static void rogue(const char *sock)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(sock) >= sizeof sa.sun_path) _exit(2);
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) _exit(3);
	unsigned char b[4096];
	struct frame_hello h = { .version = 1, .pid = (uint32_t)getpid(), .slots = 1, .name = "rogue",
	                         .jobs = { 1, { "ext" } } };
	long n = frame_encode_hello(&h, b, sizeof b);
	if (send(fd, b, (size_t)n, 0) != n) _exit(4);
	union {
		struct cmsghdr c;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct iovec iov = { b, sizeof b };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf };
	if (recvmsg(fd, &m, MSG_CMSG_CLOEXEC) <= 0) _exit(5);
	int fds[2];
	memcpy(fds, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fds);
	seg_t *s;
	char e[256];
	if (seg_attach(fds[0], fds[1], &s, e, sizeof e) < 0 || ring_bind(s, 0) < 0) _exit(6);
	ring_heartbeat(s, WRK_IDLE);
	long got;
	while ((got = ring_claim(s, b, sizeof b)) == 0) {
		ring_heartbeat(s, WRK_IDLE);
		ring_wait(s, 100000000);
	}
	static const char garbage[] = "this is not a frame, and it says so";
	ring_complete(s, garbage, sizeof garbage);
	for (;;) pause();   /* the supervisor should hang up on us */
}

static void test_garbage(void)
{
	struct tsup t;
	char y[2048], wlog[700];
	snprintf(y, sizeof y, yaml, "", 2);
	tsup_config(&t, "garbage", y);
	snprintf(wlog, sizeof wlog, "%s/worker.log", t.dir);
	const char *args[] = { "--run", "ext", NULL };
	tsup_start(&t, args);
	tsup_wait_listening(&t, 5000);
	pid_t r = tlib_fork();
	if (r == 0) rogue(t.sock);
	char want[160];
	snprintf(want, sizeof want, "attach:%d \"rogue\" (pid %d) detached: worker 0 wrote a bad completion frame", (int)r,
	         (int)r);
	ok(tsup_wait_log(&t, want, 1, 10000), "the rogue is cut off, with the reason");
	ok(tsup_wait_log(&t, "its worker went away", 1, 2000), "the item it held is reported, not lost");
	pid_t w = start_example(t.sock, wlog);
	int st = tsup_stop(&t, 0, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the run still succeeds: the rogue's item ran again elsewhere");
	snprintf(want, sizeof want, "on attach:%d#0", (int)w);
	is_int(tsup_log_count(&t, want), 2, "both items ended on the good worker");
	ok(tsup_log_count(&t, "attempt 2: ok") == 1, "the rogue's item on its second attempt");
	kill(r, SIGKILL);
	waitpid(r, NULL, 0);
	tlib_untrack(r);
	waitpid(w, NULL, 0);
	tlib_untrack(w);

	/* the same supervisor config keeps running pool jobs: run one */
	const char *args2[] = { "--run", "local", NULL };
	st = tsup_run(&t, args2, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "and pool jobs are unaffected");
}

/* An external worker that takes an item and dies with it. */
static void hang_on_first(const char *sock, const char *mark)
{
	const char *jobs[] = { "ext", NULL };
	struct ejob_attach_opts o = { .socket_path = sock, .jobs = jobs, .slots = 1, .name = "doomed" };
	ejob_worker *w;
	ejob_slot *sl;
	const ejob_context *ctx;
	char err[512];
	if (ejob_attach(&o, &w, err, sizeof err) < 0 || ejob_bind(w, 0, &sl) < 0) _exit(3);
	if (ejob_next(sl, 10000, &ctx) == 1) {
		char line[64];
		int n = snprintf(line, sizeof line, "%u\n", ctx->item);
		tlib_write_file(mark, line, (size_t)n);
	}
	for (;;) pause();
}

static void test_dies_mid_item(void)
{
	struct tsup t;
	char y[2048], wlog[700], mark[700];
	snprintf(y, sizeof y, yaml, "", 2);
	tsup_config(&t, "dies", y);
	snprintf(wlog, sizeof wlog, "%s/worker.log", t.dir);
	snprintf(mark, sizeof mark, "%s/held", t.dir);
	const char *args[] = { "--run", "ext", NULL };
	tsup_start(&t, args);
	tsup_wait_listening(&t, 5000);
	pid_t d = tlib_fork();
	if (d == 0) hang_on_first(t.sock, mark);
	uint64_t end = tlib_now_ms() + 10000;
	while (access(mark, F_OK) != 0 && tlib_now_ms() < end) usleep(5000);
	ok(access(mark, F_OK) == 0, "an external worker holds an item");
	kill(d, SIGKILL);
	waitpid(d, NULL, 0);
	tlib_untrack(d);
	char want[160];
	snprintf(want, sizeof want, "attach:%d \"doomed\" (pid %d) detached: disconnected; its running items are reported crashed",
	         (int)d, (int)d);
	ok(tsup_wait_log(&t, want, 1, 5000), "killed mid-item: the supervisor sees the disconnect");
	ok(tsup_wait_log(&t, "attempt 1: crashed", 1, 2000), "the item is reported crashed");
	pid_t w = start_example(t.sock, wlog);
	int st = tsup_stop(&t, 0, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "and runs again (maxRetries 1) on another worker: exit 0");
	ok(tsup_log_count(&t, "attempt 2: ok") == 1, "  as attempt 2");
	waitpid(w, NULL, 0);
	tlib_untrack(w);
}

/* SIGTERM to the supervisor while an external worker runs an item: the worker is told through its
 * segment's shutdown flag, finishes the item, which is reported ok, and detaches with exit 0; the
 * supervisor leaves after that, not before (the item would be reported lost while it ran) */
static void test_stop_mid_item(void)
{
	static const char y[] =
		"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t28}\n"
		"supervisor: {workers: 1, attachSocket: \"@SOCK@\", shutdownGraceSeconds: 10}\n"
		"jobs:\n"
		"  ext:\n"
		"    type: external\n"
		"    cron: \"0 0 * * * ?\"\n"
		"    shardingTotalCount: 1\n"
		"    jobParameter: \"ms=1500\"\n";
	struct tsup t;
	char wlog[700];
	tsup_config(&t, "stop", y);
	snprintf(wlog, sizeof wlog, "%s/worker.log", t.dir);
	const char *args[] = { "--run", "ext", NULL };
	tsup_start(&t, args);
	tsup_wait_listening(&t, 5000);
	pid_t w = start_example(t.sock, wlog);
	ok(tsup_wait_lines(wlog, "external-worker[0]: job=ext item=0", 1, 5000), "an external worker runs a 1.5 s item");
	uint64_t t0 = tlib_now_ms();
	int st = tsup_stop(&t, SIGTERM, 15000);
	uint64_t dt = tlib_now_ms() - t0;
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM: the supervisor exits 0");
	ok(dt >= 1000, "  after the item ended (%llu ms)", (unsigned long long)dt);
	is_int(tsup_log_count(&t, ": ok in "), 1, "  the item is reported ok");
	is_int(tsup_log_count(&t, "crashed"), 0, "  not crashed or lost");
	int wst = 0;
	waitpid(w, &wst, 0);
	tlib_untrack(w);
	ok(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "the external worker exits 0 (status 0x%x)", wst);
	ok(tsup_count_lines(wlog, "the supervisor is stopping: detaching") == 1, "  saying the supervisor is stopping");
}

int main(void)
{
	tlib_init(120);
	plan(31);
	test_example();
	test_stop_mid_item();
	test_other_uid();
	test_garbage();
	test_dies_mid_item();
	return done_testing();
}
