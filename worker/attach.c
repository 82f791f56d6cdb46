/* worker/attach.c: the client side of the attach socket (see attach.h). */
#include "ipc/errf.h"
#include "worker/attach.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ipc/wait.h"

#define ANSWER_MAX 8192u     /* a welcome or refuse is far smaller; a longer answer is garbage */
#define HELLO_MAX  (FRAME_LIST_MAX * (FRAME_JOB_MAX + 8) + 1024)
#define MAX_FDS    8         /* room for more fds than expected, so extras are seen and closed */

int attach_socket_path(const char *ns, const char *runtime_dir, const char *xdg_runtime_dir,
                       uid_t euid, char *buf, size_t len)
{
	size_t nl = ns ? strlen(ns) : 0;
	if (nl == 0 || nl > 255 || strchr(ns, '/') || !strcmp(ns, ".") || !strcmp(ns, "..")) {
		errno = EINVAL;
		return -1;
	}
	if (runtime_dir && !*runtime_dir) runtime_dir = NULL;
	if (xdg_runtime_dir && !*xdg_runtime_dir) xdg_runtime_dir = NULL;
	int n;
	if (runtime_dir)
		n = snprintf(buf, len, "%s/%s.sock", runtime_dir, ns);
	else if (euid == 0)
		n = snprintf(buf, len, "/run/ejob/%s.sock", ns);
	else if (xdg_runtime_dir)
		n = snprintf(buf, len, "%s/ejob/%s.sock", xdg_runtime_dir, ns);
	else
		n = snprintf(buf, len, "/tmp/ejob-%u/%s.sock", (unsigned)euid, ns);
	struct sockaddr_un sa;
	if (n < 0 || (size_t)n >= len || (size_t)n >= sizeof sa.sun_path) {
		if (len) buf[0] = '\0';
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int attach_peer_gone(int sock)
{
	struct pollfd pf = { sock, POLLRDHUP, 0 };
	int r = poll(&pf, 1, 0);
	if (r < 0) return errno == EINTR ? 0 : 1;
	return r > 0 && (pf.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
}

static void close_fds(int *fds, int n)
{
	int e = errno;
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0) close(fds[i]);
	errno = e;
}

/* connect(), finishing a connect interrupted by a signal (it goes on in the background). */
static int connect_retry(int sock, const struct sockaddr_un *sa)
{
	if (connect(sock, (const struct sockaddr *)sa, sizeof *sa) == 0) return 0;
	if (errno != EINTR) return -1;
	for (;;) {
		struct pollfd pf = { sock, POLLOUT, 0 };
		int r = poll(&pf, 1, -1);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0) return -1;
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (getsockopt(sock, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) return -1;
		if (soerr) {
			errno = soerr;
			return -1;
		}
		return 0;
	}
}

/* Wait until sock is readable, at most timeout_ms: 1, 0 on timeout, -1 on error. */
static int wait_readable(int sock, int timeout_ms)
{
	uint64_t end = wait_now_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		uint64_t now = wait_now_ns();
		int left = now >= end ? 0 : (int)((end - now + 999999) / 1000000);
		struct pollfd pf = { sock, POLLIN, 0 };
		int r = poll(&pf, 1, left);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) return r;
		return 1;
	}
}

/* The supervisor's words go into our caller's logs: keep control characters out. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

static int answer(const char *path, const unsigned char *buf, size_t len, int *fds, int nfds,
                  struct attach_result *r, char *err, size_t errlen)
{
	frame_decoder_t *d = frame_decoder_new(ANSWER_MAX);
	if (!d) {
		ejob_errf(err, errlen, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	struct frame_err fe;
	int rc = -1;
	unsigned type = frame_peek_type(buf, len);
	if (type == FRAME_REFUSE) {
		struct frame_refuse f;
		if (frame_decode_refuse(d, buf, len, &f, &fe) == 0) {
			char why[FRAME_ERRTXT_MAX + 1];
			snprintf(why, sizeof why, "%s", f.error);
			sanitize(why);
			ejob_errf(err, errlen, "the supervisor at %s refused this worker: %s", path, why);
			errno = ECONNREFUSED;
		} else {
			ejob_errf(err, errlen, "bad answer from the supervisor at %s: refuse frame: %s "
			        "(a supervisor of another ejob version?)", path, fe.msg);
			errno = EPROTO;
		}
	} else if (type == FRAME_WELCOME) {
		if (frame_decode_welcome(d, buf, len, &r->welcome, &fe) < 0) {
			ejob_errf(err, errlen, "bad answer from the supervisor at %s: welcome frame: %s "
			        "(a supervisor of another ejob version?)", path, fe.msg);
			errno = EPROTO;
		} else if (nfds != 2) {
			ejob_errf(err, errlen, "bad answer from the supervisor at %s: the welcome carried %d "
			        "file descriptors, expected 2 (segment memfd, eventfd)", path, nfds);
			errno = EPROTO;
		} else {
			r->memfd = fds[0];
			r->efd = fds[1];
			fds[0] = fds[1] = -1;
			rc = 0;
		}
	} else {
		/* decoding as a welcome names what is wrong with it (length, checksum, type...) */
		if (frame_decode_welcome(d, buf, len, &r->welcome, &fe) == 0)
			snprintf(fe.msg, sizeof fe.msg, "unexpected frame type %u", type);
		ejob_errf(err, errlen, "bad answer from the supervisor at %s (%zu bytes): %s: "
		        "is this an ejob attach socket?", path, len, fe.msg);
		errno = EPROTO;
	}
	frame_decoder_free(d);
	return rc;
}

int attach_handshake(const char *path, const struct frame_hello *hello, int timeout_ms,
                     struct attach_result *r, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path) {
		ejob_errf(err, errlen, "socket path %s is longer than %zu bytes", path, sizeof sa.sun_path - 1);
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	r->sock = r->memfd = r->efd = -1;

	unsigned char *buf = malloc(HELLO_MAX > ANSWER_MAX ? HELLO_MAX : ANSWER_MAX);
	if (!buf) {
		ejob_errf(err, errlen, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	int fds[MAX_FDS];
	int nfds = 0;
	int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		ejob_errf(err, errlen, "socket(AF_UNIX, SOCK_SEQPACKET) failed: %s", strerror(errno));
		goto fail;
	}
	if (connect_retry(sock, &sa) < 0) {
		ejob_errf(err, errlen, "connect(%s) failed: %s: is the supervisor running, with this "
		        "namespace or --socket?", path, strerror(errno));
		goto fail;
	}
	struct ucred cred;
	socklen_t cl = sizeof cred;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
		ejob_errf(err, errlen, "getsockopt(%s, SO_PEERCRED) failed: %s", path, strerror(errno));
		goto fail;
	}
	if (cred.uid != geteuid() && cred.uid != 0) {
		ejob_errf(err, errlen, "%s is served by uid %u, neither us (uid %u) nor root: not attaching "
		        "(check the socket path)", path, (unsigned)cred.uid, (unsigned)geteuid());
		errno = EPERM;
		goto fail;
	}
	long hl = frame_encode_hello(hello, buf, HELLO_MAX);
	if (hl < 0) {
		ejob_errf(err, errlen, "cannot encode the hello: name 1..%u bytes, 1..%u jobs of 1..%u bytes, "
		        "slots 1..%u", FRAME_NAME_MAX, FRAME_LIST_MAX, FRAME_JOB_MAX, FRAME_SLOTS_MAX);
		errno = EINVAL;
		goto fail;
	}
	ssize_t sent;
	while ((sent = send(sock, buf, (size_t)hl, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
	if (sent != hl) {
		if (sent >= 0) errno = EMSGSIZE;
		ejob_errf(err, errlen, "send(%s) of the hello failed: %s", path, strerror(errno));
		goto fail;
	}
	if (timeout_ms <= 0) timeout_ms = 5000;
	int w = wait_readable(sock, timeout_ms);
	if (w <= 0) {
		if (w == 0) {
			errno = ETIMEDOUT;
			ejob_errf(err, errlen, "no answer from the supervisor at %s within %d ms", path, timeout_ms);
		} else {
			ejob_errf(err, errlen, "poll(%s) failed: %s", path, strerror(errno));
		}
		goto fail;
	}
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int) * MAX_FDS)];
	} cm;
	struct iovec iov = { buf, ANSWER_MAX };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.space,
	                     .msg_controllen = sizeof cm.space };
	ssize_t got;
	while ((got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
	if (got < 0) {
		ejob_errf(err, errlen, "recvmsg(%s) failed: %s", path, strerror(errno));
		goto fail;
	}
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
		size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n && nfds < MAX_FDS; i++)
			memcpy(&fds[nfds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	if (got == 0) {
		ejob_errf(err, errlen, "the supervisor at %s closed the connection without answering "
		        "(see its log for why)", path);
		errno = ECONNRESET;
		goto fail;
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		ejob_errf(err, errlen, "bad answer from the supervisor at %s: %s", path,
		        (mh.msg_flags & MSG_TRUNC) ? "longer than any welcome or refuse" : "too many fds");
		errno = EPROTO;
		goto fail;
	}
	if (answer(path, buf, (size_t)got, fds, nfds, r, err, errlen) < 0)
		goto fail;
	r->sock = sock;
	free(buf);
	return 0;
fail:
	close_fds(fds, nfds);
	if (sock >= 0) close_fds(&sock, 1);
	{
		int e = errno;
		free(buf);
		errno = e;
	}
	return -1;
}
