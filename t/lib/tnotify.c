/* t/lib/tnotify.c: systemd's side of sd_notify(3) for the tests (tnotify.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "t/lib/tlib.h"
#include "t/lib/tnotify.h"
#include "t/tap.h"

struct tnotify_msg tnotify_msgs[TNOTIFY_MAX];
size_t tnotify_n;

int tnotify_socket(char *path, size_t len)
{
	snprintf(path, len, "%s/notify", tlib_tmpdir());
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (fd < 0 || strlen(path) >= sizeof a.sun_path) BAIL_OUT("notify socket %s: %s", path, strerror(errno));
	memcpy(a.sun_path, path, strlen(path) + 1);
	int one = 1;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0)
		BAIL_OUT("bind/SO_PASSCRED %s: %s", path, strerror(errno));
	return fd;
}

/* Every datagram that comes within ms (0: what is queued now), appended to tnotify_msgs; how many. */
size_t tnotify_take(int fd, unsigned ms)
{
	size_t before = tnotify_n;
	uint64_t end = tlib_now_ms() + ms;
	for (;;) {
		struct tnotify_msg *m = &tnotify_msgs[tnotify_n < TNOTIFY_MAX - 1 ? tnotify_n : TNOTIFY_MAX - 1];
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(struct ucred))];
		} c;
		struct iovec iov = { .iov_base = m->text, .iov_len = sizeof m->text - 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &c, .msg_controllen = sizeof c };
		ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
		if (n >= 0) {
			m->text[n] = '\0';
			m->ms = tlib_now_ms();
			m->pid = 0;
			for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h))
				if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_CREDENTIALS)
					m->pid = ((struct ucred *)(void *)CMSG_DATA(h))->pid;
			if (tnotify_n < TNOTIFY_MAX - 1) tnotify_n++;
			continue;
		}
		uint64_t now = tlib_now_ms();
		if (now >= end) break;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		poll(&p, 1, (int)(end - now));
	}
	return tnotify_n - before;
}

int tnotify_has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0')) return 1;
	return 0;
}

/* the STATUS= of message i ("" if none), in a static buffer */
const char *tnotify_status(size_t i)
{
	static char buf[256];
	const char *p = strstr(tnotify_msgs[i].text, "STATUS=");
	buf[0] = '\0';
	if (p && (p == tnotify_msgs[i].text || p[-1] == '\n')) {
		snprintf(buf, sizeof buf, "%s", p + 7);
		buf[strcspn(buf, "\n")] = '\0';
	}
	return buf;
}

size_t tnotify_count(const char *line, size_t from, size_t to)
{
	size_t k = 0;
	for (size_t i = from; i < to; i++) k += tnotify_has_line(tnotify_msgs[i].text, line);
	return k;
}

/* Reads until a datagram has the line `line`, at most ms: its index, or -1. */
long tnotify_until(int fd, const char *line, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	size_t seen = tnotify_n;
	for (;;) {
		for (; seen < tnotify_n; seen++)
			if (tnotify_has_line(tnotify_msgs[seen].text, line)) return (long)seen;
		uint64_t now = tlib_now_ms();
		if (now >= end) return -1;
		tnotify_take(fd, (unsigned)(end - now < 50 ? end - now : 50));
	}
}
