/* t/23-worker-attach.c: external workers. The default socket path; ejob_attach against a real
 * peer on a real unix socket (a forked server that reads the HELLO and answers WELCOME with a
 * segment's fds, REFUSE, garbage, nothing, or the wrong fds); items flowing through an
 * attachment's slots; and examples/external-worker run end to end with this test as its
 * supervisor (items, a failure, a cancel, SIGTERM, the supervisor going away, a refusal). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "ipc/wait.h"
#include "t/lib/tlib.h"
#include "t/lib/twork.h"
#include "t/tap.h"
#include "worker/attach.h"
#include "worker/ejob.h"

static char sockpath[108];
static char logpath[600];
static int lsock = -1;
static unsigned char fbuf[65536];

/* ---- the server side --------------------------------------------------------------------------- */

static int listen_at(const char *path)
{
	unlink(path);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 8) < 0)
		BAIL_OUT("listen on %s: %s", path, strerror(errno));
	return s;
}

/* Accept one connection and read its hello: the connection, or -1 on timeout / bad hello. */
static int accept_hello(int timeout_ms, frame_decoder_t *d, struct frame_hello *h)
{
	struct pollfd pf = { lsock, POLLIN, 0 };
	if (poll(&pf, 1, timeout_ms) != 1) return -1;
	int c = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0) return -1;
	pf.fd = c;
	if (poll(&pf, 1, timeout_ms) != 1) { close(c); return -1; }
	ssize_t n = recv(c, fbuf, sizeof fbuf, 0);
	struct frame_err fe;
	if (n <= 0 || frame_decode_hello(d, fbuf, (size_t)n, h, &fe) < 0) {
		diag("bad hello: %s", n > 0 ? fe.msg : "no data");
		close(c);
		return -1;
	}
	return c;
}

static void send_frame(int c, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * 4)];
	} cm;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		mh.msg_control = cm.space;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		struct cmsghdr *ch = CMSG_FIRSTHDR(&mh);
		ch->cmsg_level = SOL_SOCKET;
		ch->cmsg_type = SCM_RIGHTS;
		ch->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(ch), fds, sizeof(int) * (size_t)nfds);
	}
	if (sendmsg(c, &mh, MSG_NOSIGNAL) < 0) BAIL_OUT("sendmsg: %s", strerror(errno));
}

static void send_welcome(int c, seg_t *s, uint32_t slots, uint32_t hb, int nfds)
{
	struct frame_welcome w = { .version = 1, .slots = slots, .supervisor = (uint32_t)getpid(), .heartbeat_ms = hb };
	long n = frame_encode_welcome(&w, fbuf, sizeof fbuf);
	int fds[2] = { seg_memfd(s), seg_eventfd(s) };
	send_frame(c, fbuf, (size_t)n, fds, nfds);
}

static void send_refuse(int c, const char *why)
{
	struct frame_refuse r = { .error = why };
	long n = frame_encode_refuse(&r, fbuf, sizeof fbuf);
	send_frame(c, fbuf, (size_t)n, NULL, 0);
}

/* An attachment's segment as the supervisor makes it: `slots` entries, each given to the pid. */
static seg_t *attach_segment(uint32_t slots, pid_t pid)
{
	char name[32], e[256];
	snprintf(name, sizeof name, "attach:%d", (int)pid);
	struct seg_params p = { .nworkers = slots, .name = name };
	seg_t *s;
	if (seg_create(&p, &s, e, sizeof e) < 0) BAIL_OUT("seg_create: %s", e);
	for (uint32_t i = 0; i < slots; i++) {
		atomic_fetch_add(&seg_worker(s, i)->gen, 1);
		atomic_store(&seg_worker(s, i)->pid, pid);
		atomic_store(&seg_worker(s, i)->state, WRK_STARTING);
	}
	return s;
}

/* "t23" + 32 x U+00E9 (67 bytes): 64 bytes would split the 31st character, so the hello
 * carries "t23" + 30 of them (63 bytes) */
#define E8 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
#define LONGNAME "t23" E8 E8 E8 E8
#define LONGNAME_CUT "t23" E8 E8 E8 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"

enum mode { M_WELCOME, M_LONGNAME, M_REFUSE, M_REFUSE_CTL, M_GARBAGE, M_CLOSE, M_SILENT, M_NOFDS, M_SUBMIT, M_BADFDS, M_TOOMANY };

/* A forked server for one connection. It checks the hello (exit 10 if it is not what this test
 * sends), answers as mode says, then waits for the client to close (exit 0). */
static pid_t server(enum mode m, seg_t *s)
{
	pid_t client = getpid();
	pid_t p = tlib_fork();
	if (p != 0) return p;
	frame_decoder_t *d = frame_decoder_new(sizeof fbuf);
	struct frame_hello h;
	int c = accept_hello(5000, d, &h);
	if (c < 0) _exit(11);
	const char *want_name = m == M_LONGNAME ? LONGNAME_CUT : "t23";
	int good = h.version == 1 && h.pid == (uint32_t)client && h.slots == 2 && !strcmp(h.name, want_name) &&
	           h.jobs.n == 2 && !strcmp(h.jobs.v[0], "alpha") && !strcmp(h.jobs.v[1], "beta");
	switch (m) {
	case M_WELCOME: case M_LONGNAME: send_welcome(c, s, 2, 200, 2); break;
	case M_TOOMANY: send_welcome(c, s, 4, 200, 2); break;
	case M_NOFDS: send_welcome(c, s, 2, 200, 0); break;
	case M_REFUSE: send_refuse(c, "job 'beta' is not an external job (type: script)"); break;
	case M_REFUSE_CTL: send_refuse(c, "two\nlines\x1b[31m"); break;
	case M_GARBAGE: send_frame(c, "\x10\x00\x00\x00garbage!garbage!", 20, NULL, 0); break;
	case M_CLOSE: close(c); _exit(good ? 0 : 10);
	case M_SILENT: break;
	case M_SUBMIT: {
		struct frame_submit f = { .xid = 1, .job = "j", .task_id = "t", .total = 1, .attempt = 1, .item_param = "",
		                          .job_param = "" };
		long n = frame_encode_submit(&f, fbuf, sizeof fbuf);
		send_frame(c, fbuf, (size_t)n, NULL, 0);
		break;
	}
	case M_BADFDS: {
		int pp[2];
		if (pipe(pp) < 0) _exit(12);
		struct frame_welcome w = { .version = 1, .slots = 2, .supervisor = (uint32_t)getpid(), .heartbeat_ms = 200 };
		long n = frame_encode_welcome(&w, fbuf, sizeof fbuf);
		send_frame(c, fbuf, (size_t)n, pp, 2);
		break;
	}
	}
	/* wait for the client to go (EOF), at most 10 s */
	struct pollfd pf = { c, POLLIN, 0 };
	while (poll(&pf, 1, 10000) == 1 && recv(c, fbuf, sizeof fbuf, 0) > 0) {}
	_exit(good ? 0 : 10);
}

static int server_done(pid_t p, int *code)
{
	int st;
	if (!twork_wait_exit(p, 5000, &st)) {
		kill(p, SIGKILL);
		twork_wait_exit(p, 1000, &st);
		return 0;
	}
	*code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 1;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	struct dirent *de;
	while (d && (de = readdir(d))) n += de->d_name[0] != '.';
	if (d) closedir(d);
	return n - 1;
}

/* ---- socket path ------------------------------------------------------------------------------- */

static void test_paths(void)
{
	char b[120];
	ok(attach_socket_path("prod", "/srv/rt", "/run/user/5", 1000, b, sizeof b) == 0 && !strcmp(b, "/srv/rt/prod.sock"),
	   "EJOB_RUNTIME_DIR first: %s", b);
	ok(attach_socket_path("prod", NULL, "/run/user/5", 0, b, sizeof b) == 0 && !strcmp(b, "/run/ejob/prod.sock"),
	   "root: /run/ejob: %s", b);
	ok(attach_socket_path("prod", NULL, "/run/user/5", 1000, b, sizeof b) == 0 &&
	   !strcmp(b, "/run/user/5/ejob/prod.sock"), "not root: $XDG_RUNTIME_DIR/ejob: %s", b);
	ok(attach_socket_path("prod", NULL, NULL, 1000, b, sizeof b) == 0 && !strcmp(b, "/tmp/ejob-1000/prod.sock"),
	   "not root, no XDG_RUNTIME_DIR: /tmp/ejob-<uid>: %s", b);
	ok(attach_socket_path("prod", "", "", 1000, b, sizeof b) == 0 && !strcmp(b, "/tmp/ejob-1000/prod.sock"),
	   "empty variables count as unset");
	const char *bad[] = { "", "a/b", ".", "..", NULL };
	int refused = 0;
	for (int i = 0; bad[i]; i++)
		refused += attach_socket_path(bad[i], NULL, NULL, 0, b, sizeof b) == -1 && errno == EINVAL;
	ok(attach_socket_path(NULL, NULL, NULL, 0, b, sizeof b) == -1 && errno == EINVAL, "no namespace: EINVAL");
	is_int(refused, 4, "namespaces '', 'a/b', '.', '..': EINVAL");
	char longdir[200];
	memset(longdir, 'd', sizeof longdir);
	longdir[0] = '/';
	longdir[100] = '\0';
	ok(attach_socket_path("prod", longdir, NULL, 0, b, sizeof b) == -1 && errno == ENAMETOOLONG,
	   "longer than a unix socket address: ENAMETOOLONG");
	setenv("EJOB_RUNTIME_DIR", "/srv/x", 1);
	ok(ejob_socket_path("ns1", b, sizeof b) == 0 && !strcmp(b, "/srv/x/ns1.sock"), "ejob_socket_path reads the environment");
	unsetenv("EJOB_RUNTIME_DIR");
}

/* ---- the handshake ------------------------------------------------------------------------------- */

static const char *jobs2[] = { "alpha", "beta", NULL };

static int try_attach(enum mode m, int timeout_ms, ejob_worker **w, char *err, size_t errlen, int *code)
{
	seg_t *s = attach_segment(2, getpid());
	pid_t p = server(m, s);
	const char *longname = LONGNAME;
	struct ejob_attach_opts o = { .socket_path = sockpath, .name = m == M_LONGNAME ? longname : "t23",
	                              .jobs = jobs2, .slots = 2, .timeout_ms = timeout_ms };
	err[0] = '\0';
	errno = 0;
	int r = ejob_attach(&o, w, err, errlen);
	int e = errno;
	if (r == 0) ejob_detach(*w);   /* the server sees EOF and exits */
	if (!server_done(p, code)) *code = -1;
	seg_close(s);
	errno = e;
	return r;
}

static void test_handshake_failures(void)
{
	char err[700], want[700];
	ejob_worker *w;
	int code;
	int fds0 = count_fds();

	struct ejob_attach_opts o = { .socket_path = "/nonexistent/ejob.sock", .name = "t23", .jobs = jobs2, .slots = 2 };
	ok(ejob_attach(&o, &w, err, sizeof err) == -1 && errno == ENOENT, "no socket: ENOENT");
	is_str(err, "connect(/nonexistent/ejob.sock) failed: No such file or directory: is the supervisor running, "
	       "with this namespace or --socket?", "  saying what to check");

	ok(try_attach(M_REFUSE, 0, &w, err, sizeof err, &code) == -1 && errno == ECONNREFUSED, "refused: ECONNREFUSED");
	snprintf(want, sizeof want, "the supervisor at %s refused this worker: job 'beta' is not an external job (type: script)", sockpath);
	is_str(err, want, "  with the supervisor's reason");
	is_int(code, 0, "  the server got the hello we meant (version, pid, name, jobs, slots)");

	ok(try_attach(M_REFUSE_CTL, 0, &w, err, sizeof err, &code) == -1 && strstr(err, "refused this worker: two?lines?[31m"),
	   "control characters in a refusal are not passed to the terminal: %s", err);

	ok(try_attach(M_GARBAGE, 0, &w, err, sizeof err, &code) == -1 && errno == EPROTO, "garbage answer: EPROTO");
	snprintf(want, sizeof want, "bad answer from the supervisor at %s (20 bytes): ", sockpath);
	ok(!strncmp(err, want, strlen(want)) && strstr(err, "is this an ejob attach socket?"), "  clear error: %s", err);

	ok(try_attach(M_SUBMIT, 0, &w, err, sizeof err, &code) == -1 && errno == EPROTO && strstr(err, "frame type 1, expected 4 (welcome)"),
	   "a valid frame of the wrong type: EPROTO (%s)", err);

	ok(try_attach(M_CLOSE, 0, &w, err, sizeof err, &code) == -1 && errno == ECONNRESET, "closed without answer: ECONNRESET");
	snprintf(want, sizeof want, "the supervisor at %s closed the connection without answering (see its log for why)", sockpath);
	is_str(err, want, "  saying so");

	uint64_t t0 = tlib_now_ms();
	ok(try_attach(M_SILENT, 200, &w, err, sizeof err, &code) == -1 && errno == ETIMEDOUT, "no answer: ETIMEDOUT");
	uint64_t dt = tlib_now_ms() - t0;
	snprintf(want, sizeof want, "no answer from the supervisor at %s within 200 ms", sockpath);
	is_str(err, want, "  saying so");
	ok(dt >= 190 && dt < 1500, "  after the timeout (%llu ms)", (unsigned long long)dt);

	ok(try_attach(M_NOFDS, 0, &w, err, sizeof err, &code) == -1 && errno == EPROTO, "welcome without fds: EPROTO");
	snprintf(want, sizeof want, "bad answer from the supervisor at %s: the welcome carried 0 file descriptors, "
	         "expected 2 (segment memfd, eventfd)", sockpath);
	is_str(err, want, "  saying so");

	ok(try_attach(M_BADFDS, 0, &w, err, sizeof err, &code) == -1 && errno == EPROTO &&
	   strstr(err, "is unusable: segment fd") && strstr(err, "is not a memfd sealed against shrinking"),
	   "welcome with fds that are not a segment: EPROTO (%s)", err);

	ok(try_attach(M_TOOMANY, 0, &w, err, sizeof err, &code) == -1 && errno == EPROTO &&
	   strstr(err, "welcomed 4 slots into a segment of 2 entries"), "welcome with more slots than entries: EPROTO (%s)", err);

	ok(try_attach(M_LONGNAME, 0, &w, err, sizeof err, &code) == 0 && code == 0,
	   "a 67-byte name is cut to 63 bytes, at a character boundary (%s)", err);

	const char *none[] = { NULL };
	o = (struct ejob_attach_opts){ .socket_path = sockpath, .jobs = none };
	ok(ejob_attach(&o, &w, err, sizeof err) == -1 && errno == EINVAL && strstr(err, "no job names"), "no jobs: EINVAL (%s)", err);
	o = (struct ejob_attach_opts){ .socket_path = sockpath, .jobs = jobs2, .slots = 65 };
	ok(ejob_attach(&o, &w, err, sizeof err) == -1 && errno == EINVAL, "65 slots: EINVAL (%s)", err);
	o = (struct ejob_attach_opts){ .ns = "a/b", .jobs = jobs2 };
	ok(ejob_attach(&o, &w, err, sizeof err) == -1 && errno == EINVAL && strstr(err, "namespace 'a/b'"), "bad namespace: EINVAL (%s)", err);

	is_int(count_fds(), fds0, "no fd left open by the failed attaches");
}

struct waiter {
	ejob_slot *s;
	int r, e;
	uint64_t ms;
};

static void *wait_next(void *arg)
{
	struct waiter *x = arg;
	uint64_t t0 = tlib_now_ms();
	const ejob_context *c;
	x->r = ejob_next(x->s, -1, &c);
	x->e = errno;
	x->ms = tlib_now_ms() - t0;
	return NULL;
}

static struct frame_submit ext_item(uint64_t xid, uint32_t item)
{
	struct frame_submit f = {
		.xid = xid, .fire_id = 31, .epoch = 0x200000007ull, .deadline_ms = 1900000000000ull, .item = item, .total = 3,
		.attempt = 1, .kind = FRAME_KIND_EXTERNAL, .job = "alpha", .task_id = "alpha@-@0,1,2@-@READY@-@10.1.1.1@-@77",
		.item_param = "x=1", .job_param = "jp",
	};
	return f;
}

static void publish(seg_t *s, const struct frame_submit *f)
{
	long n = frame_encode_submit(f, fbuf, sizeof fbuf);
	if (n < 0 || ring_publish(s, fbuf, (uint32_t)n) < 0) BAIL_OUT("publish: %s", strerror(errno));
	ring_flush(s);
}

static int drain_one(seg_t *s, frame_decoder_t *d, struct frame_complete *c)
{
	struct ring_comp ci;
	long n = ring_drain(s, fbuf, sizeof fbuf, &ci);
	struct frame_err fe;
	return n > 0 && frame_decode_complete(d, fbuf, (size_t)n, c, &fe) == 0;
}

static void test_welcome(void)
{
	seg_t *s = attach_segment(2, getpid());
	frame_decoder_t *d = frame_decoder_new(sizeof fbuf);
	pid_t p = server(M_WELCOME, s);
	char err[600];
	ejob_worker *w;
	struct ejob_attach_opts o = { .socket_path = sockpath, .name = "t23", .jobs = jobs2, .slots = 2 };
	if (!ok(ejob_attach(&o, &w, err, sizeof err) == 0, "welcome: attached")) BAIL_OUT("%s", err);
	is_int(ejob_slots(w), 2, "  2 slots");
	is_int(ejob_heartbeat_ms(w), 200, "  heartbeat period from the welcome");
	ejob_slot *s0 = NULL, *s1 = NULL, *sx;
	if (!ok(ejob_bind(w, 0, &s0) == 0 && ejob_bind(w, 1, &s1) == 0, "bind slots 0 and 1")) BAIL_OUT("bind");
	ok(ejob_bind(w, 0, &sx) == -1 && errno == EBUSY, "bind 0 again: EBUSY");
	ok(ejob_bind(w, 2, &sx) == -1 && errno == EINVAL, "bind 2: EINVAL");
	is_int(atomic_load(&seg_worker(s, 1)->state), WRK_IDLE, "a bound slot is IDLE");

	struct frame_submit f0 = ext_item(501, 0), f1 = ext_item(502, 1);
	f1.item_param = "";
	publish(s, &f0);
	publish(s, &f1);
	const ejob_context *c = NULL, *c1 = NULL;
	ok(ejob_next(s0, 1000, &c) == 1, "slot 0 gets an item");
	ok(c->size == sizeof *c && c->kind == EJOB_KIND_EXTERNAL && !strcmp(c->job, "alpha") &&
	   !strcmp(c->task_id, f0.task_id) && c->item == 0 && c->total == 3 && !strcmp(c->item_param, "x=1") &&
	   !strcmp(c->job_param, "jp") && c->epoch == f0.epoch && c->fire_id == 31 && c->xid == 501 && c->attempt == 1 &&
	   c->deadline_ms == f0.deadline_ms && !c->cmd && !c->lib && !c->sym, "  every context field as published");
	is_int(atomic_load(&seg_worker(s, 0)->state), WRK_BUSY, "  slot 0 BUSY");
	ok(ejob_current(s0) == c, "  ejob_current");
	ok(ejob_next(s0, 0, &c1) == -1 && errno == EBUSY, "next before done: EBUSY");
	is_int(ejob_cancelled(c), 0, "not cancelled");
	atomic_store(&seg_worker(s, 0)->cancel_xid, 999);
	atomic_store(&seg_worker(s, 0)->cancel, SHM_CANCEL_TIMEOUT);
	is_int(ejob_cancelled(c), 0, "a cancel for another xid: not cancelled");
	atomic_store(&seg_worker(s, 0)->cancel_xid, 501);
	is_int(ejob_cancelled(c), EJOB_CANCEL_TIMEOUT, "a cancel for this xid: EJOB_CANCEL_TIMEOUT");
	atomic_store(&seg_worker(s, 0)->cancel, 0);
	atomic_store(&seg_header(s)->lease_deadline_ns, wait_now_ns() - 1);
	is_int(ejob_cancelled(c), EJOB_CANCEL_LEASE, "the lease ran out: EJOB_CANCEL_LEASE");
	atomic_store(&seg_header(s)->lease_deadline_ns, wait_now_ns() + 60000000000ull);
	is_int(ejob_cancelled(c), 0, "a lease in the future: not cancelled");

	ok(ejob_next(s1, 1000, &c1) == 1 && c1->xid == 502 && !strcmp(c1->item_param, ""), "slot 1 gets the other item");
	/* a long error text is cut at a character boundary */
	char big[700];
	for (int i = 0; i < 233; i++) memcpy(big + 3 * i, "\xe2\x82\xac", 3);   /* 699 bytes of euro signs */
	big[699] = '\0';
	/* the output tail: the last 1024 bytes from a line start, what is not UTF-8 text as '?' */
	char lot[3000];
	size_t lotn = 0;
	for (int i = 0; i < 300; i++) lotn += (size_t)snprintf(lot + lotn, sizeof lot - lotn, "l%03d\n", i);
	ok(ejob_set_output(c1, lot, lotn) == 0, "ejob_set_output of 1500 bytes for slot 1's item");
	ok(ejob_set_output(c, "x", 1) == 0, "ejob_set_output for slot 0's");
	const char *odd = "ok\n\xff\x01\xc3\xa9\xed\xa0\x80\tend";
	ok(ejob_set_output(c, odd, strlen(odd)) == 0, "  then of bytes that are not all text");
	ok(ejob_done(s0, EJOB_FAILED, 7, 0, "boom") == 0, "done(failed, 7, \"boom\")");
	ok(ejob_set_output(c, "x", 1) == -1 && errno == ENOENT, "ejob_set_output after done: ENOENT");
	ok(ejob_done(s1, EJOB_ERROR, 0, 0, big) == 0, "done with a 699-byte error");
	ok(ejob_done(s1, EJOB_OK, 0, 0, NULL) == -1 && errno == ENOENT, "done again: ENOENT");
	struct frame_complete cc;
	ok(drain_one(s, d, &cc) && cc.xid == 501 && cc.status == FRAME_ST_FAILED && cc.exit_code == 7 &&
	   !strcmp(cc.error, "boom") && cc.item == 0 && !strcmp(cc.job, "alpha") && cc.epoch == f0.epoch && cc.fire_id == 31,
	   "the supervisor drains: xid 501 failed 7 \"boom\"");
	is_str(cc.output, "ok\n??\xc3\xa9???\tend", "  its output as last set, bytes that are not UTF-8 text as '?'");
	ok(drain_one(s, d, &cc) && cc.xid == 502 && cc.status == FRAME_ST_ERROR && strlen(cc.error) == 510 &&
	   !memcmp(cc.error, big, 510), "xid 502: error text cut to 510 bytes (170 whole characters)");
	ok(cc.output && strlen(cc.output) == 1020 && !strncmp(cc.output, "l096\n", 5) &&
	   !strcmp(cc.output + 1015, "l299\n"), "  its output: the last 1020 bytes, from the first whole line in "
	   "the last 1024");
	is_int(atomic_load(&seg_worker(s, 0)->state), WRK_IDLE, "  slot 0 IDLE again");
	is_int(atomic_load(&seg_worker(s, 0)->items), 1, "  one item counted");

	/* garbage in the ring (a supervisor bug): reported back as an error, never handed out */
	static const unsigned char junk[40] = "\x28\x00\x00\x00\x01\x01\x00\x00not a frame at all";
	if (ring_publish(s, junk, sizeof junk) < 0) BAIL_OUT("ring_publish");
	ring_flush(s);
	ok(ejob_next(s0, 100, &c) == 0, "an undecodable frame is not handed out");
	ok(drain_one(s, d, &cc) && cc.status == FRAME_ST_ERROR && cc.xid == 0 && !strcmp(cc.job, "?") &&
	   !strncmp(cc.error, "undecodable submission frame: ", 30), "  it is completed as an error: %s", cc.error);
	ok(!strncmp(ejob_slot_error(s0), "undecodable submission frame: ", 30), "  ejob_slot_error says so");

	uint64_t t0 = tlib_now_ms();
	ok(ejob_next(s0, 50, &c) == 0, "nothing to claim: 0 after the timeout");
	ok(tlib_now_ms() - t0 >= 45, "  (%llu ms)", (unsigned long long)(tlib_now_ms() - t0));

	atomic_store(&seg_header(s)->shutdown, 1);
	ok(ejob_next(s0, 1000, &c) == -1 && errno == ESHUTDOWN, "shutdown flag: ESHUTDOWN");
	atomic_store(&seg_header(s)->shutdown, 0);

	struct waiter x = { .s = s1 };
	pthread_t th;
	pthread_create(&th, NULL, wait_next, &x);
	struct timespec ts = { 0, 100 * 1000000 };
	nanosleep(&ts, NULL);
	ejob_stop(w);
	pthread_join(th, NULL);
	ok(x.r == -1 && x.e == ECANCELED, "ejob_stop from another thread: ECANCELED");
	ok(x.ms >= 90 && x.ms < 400, "  promptly (waited %llu ms)", (unsigned long long)x.ms);

	ejob_detach(w);
	is_int(atomic_load(&seg_worker(s, 0)->state), WRK_STOPPING, "detach: slots STOPPING");
	int code;
	ok(server_done(p, &code) && code == 0, "  the supervisor saw the connection close");
	frame_decoder_free(d);
	seg_close(s);
}

static void test_disconnect(void)
{
	seg_t *s = attach_segment(2, getpid());
	pid_t p = server(M_WELCOME, s);
	char err[600];
	ejob_worker *w;
	struct ejob_attach_opts o = { .socket_path = sockpath, .name = "t23", .jobs = jobs2, .slots = 2 };
	if (ejob_attach(&o, &w, err, sizeof err) < 0) BAIL_OUT("%s", err);
	ejob_slot *s0;
	ejob_bind(w, 0, &s0);
	kill(p, SIGKILL);   /* the supervisor dies: the socket closes */
	int code;
	server_done(p, &code);
	uint64_t t0 = tlib_now_ms();
	const ejob_context *c;
	ok(ejob_next(s0, 5000, &c) == -1 && errno == ENOTCONN, "the supervisor went away: ENOTCONN");
	ok(tlib_now_ms() - t0 < 500, "  within a heartbeat period (%llu ms)", (unsigned long long)(tlib_now_ms() - t0));
	ejob_detach(w);
	seg_close(s);
}

/* ---- examples/external-worker, end to end ---------------------------------------------------- */

static pid_t start_external(const char *slots)
{
	pid_t p = tlib_fork();
	if (p == 0) {
		int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		signal(SIGPIPE, SIG_DFL);
		execl(BUILT("examples/external-worker"), "external-worker", "--socket", sockpath, "--slots", slots,
		      "--name", "ext", "alpha", (char *)NULL);
		_exit(127);
	}
	return p;
}

static int log_count(const char *needle)
{
	char *log = twork_slurp(logpath, NULL);
	int n = 0;
	for (const char *p = log; p && (p = strstr(p, needle)); p++) n++;
	free(log);
	return n;
}

static int busy_entry(void *arg)
{
	seg_t *s = arg;
	return atomic_load(&seg_worker(s, 0)->state) == WRK_BUSY || atomic_load(&seg_worker(s, 1)->state) == WRK_BUSY;
}

static int entry0_idle(void *arg)
{
	return atomic_load(&seg_worker(arg, 0)->state) == WRK_IDLE;
}

static void test_external_worker(void)
{
	if (access(BUILT("examples/external-worker"), X_OK) < 0) BAIL_OUT(BUILT("examples/external-worker") ": %s (run make)", strerror(errno));
	frame_decoder_t *d = frame_decoder_new(sizeof fbuf);
	pid_t ext = start_external("2");
	struct frame_hello h;
	int c = accept_hello(5000, d, &h);
	ok(c >= 0 && h.slots == 2 && h.pid == (uint32_t)ext && h.jobs.n == 1 && !strcmp(h.jobs.v[0], "alpha") &&
	   !strcmp(h.name, "ext"), "external-worker says hello: its pid, 2 slots, job alpha");
	if (c < 0) BAIL_OUT("no hello");
	seg_t *s = attach_segment(2, ext);
	send_welcome(c, s, 2, 200, 2);
	for (uint32_t i = 0; i < 6; i++) {
		struct frame_submit f = ext_item(700 + i, i % 3);
		f.job_param = "ms=20";
		f.item_param = i == 4 ? "fail" : "x";
		publish(s, &f);
	}
	int got = 0, okc = 0, failed = 0;
	uint64_t end = tlib_now_ms() + 5000;
	unsigned seen = 0;
	while (got < 6 && tlib_now_ms() < end) {
		struct frame_complete cc;
		if (drain_one(s, d, &cc)) {
			got++;
			if (cc.xid >= 700 && cc.xid < 706) seen |= 1u << (cc.xid - 700);
			okc += cc.status == FRAME_ST_OK;
			failed += cc.status == FRAME_ST_FAILED && cc.exit_code == 1 && cc.xid == 704 &&
			          !strcmp(cc.error, "the item parameter says fail");
		} else {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
		}
	}
	ok(got == 6 && seen == 0x3f, "6 items published, each completed once");
	ok(okc == 5 && failed == 1, "  5 ok, xid 704 failed with code 1 and the job's reason");
	is_int(log_count("external-worker["), 6, "  each item logged by the worker");
	is_int(atomic_load(&seg_worker(s, 0)->items) + atomic_load(&seg_worker(s, 1)->items), 6, "  the entries count 6 items");

	struct frame_submit f = ext_item(800, 0);
	f.job_param = "ms=10000";
	publish(s, &f);
	tlib_wait_for(busy_entry, s, 3000);
	uint32_t e = atomic_load(&seg_worker(s, 0)->state) == WRK_BUSY ? 0 : 1;
	atomic_store(&seg_worker(s, e)->cancel_xid, 800);
	atomic_store(&seg_worker(s, e)->cancel, SHM_CANCEL_TIMEOUT);
	uint64_t t0 = tlib_now_ms();
	struct frame_complete cc = { 0 };
	while (!drain_one(s, d, &cc) && tlib_now_ms() - t0 < 3000) {
		struct timespec ts = { 0, 2000000 };
		nanosleep(&ts, NULL);
	}
	ok(cc.xid == 800 && cc.status == FRAME_ST_TIMEOUT, "a 10 s item cancelled for timeout: reported timeout (%s)",
	   frame_status_name(cc.status));
	ok(tlib_now_ms() - t0 < 500, "  within %llu ms", (unsigned long long)(tlib_now_ms() - t0));

	kill(ext, SIGTERM);
	int st = 0;
	ok(twork_wait_exit(ext, 3000, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM: external-worker exits 0");
	struct pollfd pf = { c, POLLIN, 0 };
	ok(poll(&pf, 1, 1000) == 1 && recv(c, fbuf, sizeof fbuf, 0) == 0, "  its socket closed: the supervisor sees EOF");
	ok(atomic_load(&seg_worker(s, 0)->state) == WRK_STOPPING && atomic_load(&seg_worker(s, 1)->state) == WRK_STOPPING,
	   "  both entries STOPPING");
	close(c);
	seg_close(s);

	/* the supervisor goes away */
	ext = start_external("1");
	c = accept_hello(5000, d, &h);
	if (c < 0) BAIL_OUT("no hello");
	s = attach_segment(1, ext);
	send_welcome(c, s, 1, 200, 2);
	ok(tlib_wait_for(entry0_idle, s, 3000), "attached again, slot bound");
	close(c);
	t0 = tlib_now_ms();
	ok(twork_wait_exit(ext, 3000, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 1, "supervisor gone: external-worker exits 1");
	ok(tlib_now_ms() - t0 < 1000, "  within %llu ms", (unsigned long long)(tlib_now_ms() - t0));
	ok(log_count("external-worker: the supervisor went away") == 1, "  saying so");
	seg_close(s);

	/* refused */
	ext = start_external("1");
	c = accept_hello(5000, d, &h);
	if (c < 0) BAIL_OUT("no hello");
	send_refuse(c, "job 'alpha' is not an external job");
	ok(twork_wait_exit(ext, 3000, &st) && WIFEXITED(st) && WEXITSTATUS(st) == 2, "refused: external-worker exits 2");
	ok(log_count("refused this worker: job 'alpha' is not an external job") == 1, "  with the supervisor's reason");
	close(c);
	frame_decoder_free(d);
}

int main(void)
{
	tlib_init(60);
	const char *dir = tlib_tmpdir();
	int n = snprintf(sockpath, sizeof sockpath, "%s/ns.sock", dir);
	if (n < 0 || (size_t)n >= sizeof sockpath) BAIL_OUT("tmpdir path too long for a socket");
	snprintf(logpath, sizeof logpath, "%s/external.log", dir);
	lsock = listen_at(sockpath);
	plan(92);
	test_paths();
	test_handshake_failures();
	test_welcome();
	test_disconnect();
	test_external_worker();
	char *log = twork_slurp(logpath, NULL);
	ok(log && !strstr(log, "Sanitizer") && !strstr(log, "runtime error:"), "no sanitizer report in the external worker's log");
	free(log);
	close(lsock);
	return done_testing();
}
