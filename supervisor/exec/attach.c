/* supervisor/exec/attach.c: external workers attach over a unix socket (see attach.h). */
#include "supervisor/exec/attach.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "ipc/shm.h"
#include "ipc/wait.h"
#include "supervisor/base/log.h"

#define MAX_CONNS      256
#define HELLO_TIMEOUT  5.0
#define MSG_MAX        8192

enum { C_HELLO, C_ATTACHED };

struct conn {
	att_t *a;
	int fd;
	int state;
	ev_io io;
	ev_timer hello_w;
	ev_timer close_w;
	char close_why[256];
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char name[FRAME_NAME_MAX + 1];
	char label[48];          /* "attach:<pid>" */
	seg_t *seg;
	disp_target_t *target;
	uint32_t njobs;
	char *jobs[FRAME_LIST_MAX];
	struct conn *next;
};

struct att {
	struct ev_loop *loop;
	disp_t *d;
	int fd;
	ev_io io;
	char path[108];
	struct att_policy pol;
	uint32_t *uids, *gids;
	struct conn *conns;
	size_t nconns;
	frame_decoder_t *dec;
	int stopping;           /* att_shutdown: no new attachments */
};

/* ---- paths ---------------------------------------------------------------------------------------- */

int att_default_path(const char *ns, char *buf, size_t len)
{
	const char *rt = getenv("EJOB_RUNTIME_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;
	if (rt && *rt) n = snprintf(buf, len, "%s/%s.sock", rt, ns);
	else if (getuid() == 0) n = snprintf(buf, len, "/run/ejob/%s.sock", ns);
	else if (xdg && *xdg) n = snprintf(buf, len, "%s/ejob/%s.sock", xdg, ns);
	else n = snprintf(buf, len, "/tmp/ejob-%u/%s.sock", (unsigned)getuid(), ns);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* The socket's directory: create it if missing; refuse one that others could tamper with. */
static int prepare_dir(const char *path, char *err, size_t errlen)
{
	char dir[108];
	snprintf(dir, sizeof dir, "%s", path);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir) return 0;
	*slash = '\0';
	struct stat st;
	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT || mkdir(dir, 0711) < 0) {
			int e = errno;
			snprintf(err, errlen, "attach socket directory %s: %s: give a path this user can create with --socket PATH "
			         "or supervisor.attachSocket", dir, strerror(e));
			errno = e;
			return -1;
		}
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "attach socket directory %s is not a directory: give another path with --socket PATH "
		         "or supervisor.attachSocket", dir);
		errno = ENOTDIR;
		return -1;
	}
	/* a directory we created (ours), or a system one (root's) that only its owner can write */
	if ((st.st_uid != getuid() && st.st_uid != 0) || ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
		snprintf(err, errlen, "attach socket directory %s is owned by uid %u or writable by others: remove it, "
		         "or give a path in a directory of your own with --socket PATH or supervisor.attachSocket", dir,
		         (unsigned)st.st_uid);
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* ---- connections --------------------------------------------------------------------------------- */

static void conn_free(struct conn *c)
{
	att_t *a = c->a;
	ev_io_stop(a->loop, &c->io);
	ev_timer_stop(a->loop, &c->hello_w);
	ev_timer_stop(a->loop, &c->close_w);
	if (c->fd >= 0) close(c->fd);
	for (uint32_t i = 0; i < c->njobs; i++) free(c->jobs[i]);
	for (struct conn **p = &a->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	a->nconns--;
	free(c);
}

struct lost_ctx {
	struct conn *c;
	uint32_t worker;
	int n;
};

static void lost_fn(void *arg, uint64_t pos, const void *frame, uint32_t len)
{
	struct lost_ctx *l = arg;
	(void)pos;
	disp_lost(l->c->a->d, l->c->target, l->worker, frame, len);
	l->n++;
}

/* End an attachment now: reclaim what it held, drop its target and segment. */
static void conn_close(struct conn *c, const char *why)
{
	if (c->state == C_ATTACHED) {
		struct lost_ctx l = { c, 0, 0 };
		for (uint32_t i = 0; i < seg_nworkers(c->seg); i++) {
			struct shm_worker *w = seg_worker(c->seg, i);
			l.worker = i;
			ring_reclaim(c->seg, i, atomic_load(&w->gen), lost_fn, &l);
		}
		log_warn("attach: %s \"%s\" (pid %d) detached: %s%s", c->label, c->name, (int)c->pid, why,
		         l.n ? "; its running items are reported crashed" : "");
		disp_remove_target(c->a->d, c->target);
		seg_close(c->seg);
	} else {
		log_info("attach: connection from pid %d closed: %s", (int)c->pid, why);
	}
	conn_free(c);
}

static void close_later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct conn *c = w->data;
	conn_close(c, c->close_why);
}

static void conn_close_later(struct conn *c, const char *why)
{
	if (ev_is_active(&c->close_w)) return;
	snprintf(c->close_why, sizeof c->close_why, "%s", why);
	ev_io_stop(c->a->loop, &c->io);
	ev_timer_set(&c->close_w, 0, 0);
	ev_timer_start(c->a->loop, &c->close_w);
}

static void send_frame(struct conn *c, const void *buf, size_t len, const int *fds, int nfds)
{
	struct iovec iov = { (void *)buf, len };
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(2 * sizeof(int))];
	} ctl;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (nfds) {
		memset(&ctl, 0, sizeof ctl);
		m.msg_control = ctl.b;
		m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		struct cmsghdr *h = CMSG_FIRSTHDR(&m);
		h->cmsg_level = SOL_SOCKET;
		h->cmsg_type = SCM_RIGHTS;
		h->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(h), fds, (size_t)nfds * sizeof(int));
	}
	ssize_t r;
	do r = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0) log_warn("attach: sendmsg to pid %d failed: %s", (int)c->pid, strerror(errno));
}

static void refuse(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(struct conn *c, const char *fmt, ...)
{
	char why[FRAME_ERRTXT_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	unsigned char buf[FRAME_ERRTXT_MAX + 64];
	struct frame_refuse r = { .error = why };
	long n = frame_encode_refuse(&r, buf, sizeof buf);
	if (n > 0) send_frame(c, buf, (size_t)n, NULL, 0);
	log_warn("attach: refused pid %d (uid %u): %s", (int)c->pid, (unsigned)c->uid, why);
	conn_close_later(c, "refused");
}

/* dispatch target operations for an attachment */
static uint32_t t_capacity(void *arg)
{
	struct conn *c = arg;
	uint32_t n = 0;
	for (uint32_t i = 0; i < seg_nworkers(c->seg); i++) {
		uint32_t st = atomic_load(&seg_worker(c->seg, i)->state);
		n += st == WRK_IDLE || st == WRK_BUSY;
	}
	return n;
}

static int t_accepts(void *arg, const char *job, uint32_t kind)
{
	struct conn *c = arg;
	if (kind != FRAME_KIND_EXTERNAL) return 0;
	for (uint32_t i = 0; i < c->njobs; i++)
		if (!strcmp(c->jobs[i], job)) return 1;
	return 0;
}

static void t_kill(void *arg, uint32_t worker, const char *why)
{
	struct conn *c = arg;
	char b[160];
	snprintf(b, sizeof b, "slot %" PRIu32 ": %s", worker, why);
	conn_close_later(c, b);
}

static void t_bad(void *arg, const char *why)
{
	conn_close_later(arg, why);
}

static int allowed(const att_t *a, const struct conn *c)
{
	if (c->uid == getuid()) return 1;
	for (size_t i = 0; i < a->pol.nuids; i++)
		if (a->pol.uids[i] == c->uid) return 1;
	for (size_t i = 0; i < a->pol.ngids; i++)
		if (a->pol.gids[i] == c->gid) return 1;
	/* supplementary groups of the peer, where the kernel tells them */
	gid_t groups[256];
	socklen_t gl = sizeof groups;
	if (a->pol.ngids && getsockopt(c->fd, SOL_SOCKET, SO_PEERGROUPS, groups, &gl) == 0)
		for (size_t k = 0; k < gl / sizeof(gid_t); k++)
			for (size_t i = 0; i < a->pol.ngids; i++)
				if (a->pol.gids[i] == groups[k]) return 1;
	return 0;
}

static void on_hello(struct conn *c, const unsigned char *buf, size_t len)
{
	att_t *a = c->a;
	struct frame_hello h;
	struct frame_err err;
	if (frame_decode_hello(a->dec, buf, len, &h, &err) < 0) {
		refuse(c, "bad hello frame (%s): %s", frame_errc_name(err.code), err.msg);
		return;
	}
	if (a->stopping) {
		refuse(c, "the supervisor is stopping");
		return;
	}
	if (!allowed(a, c)) {
		refuse(c, "uid %u may not attach to this supervisor (uid %u): add it to supervisor.attachAllowUids, "
		       "or its group to supervisor.attachAllowGids", (unsigned)c->uid, (unsigned)getuid());
		return;
	}
	if ((pid_t)h.pid != c->pid) {
		refuse(c, "hello says pid %" PRIu32 " but the peer is pid %d", h.pid, (int)c->pid);
		return;
	}
	char why[256];
	for (uint32_t i = 0; i < h.jobs.n; i++) {
		if (a->pol.job_ok && a->pol.job_ok(a->pol.arg, h.jobs.v[i], why, sizeof why) < 0) {
			refuse(c, "job '%s': %s", h.jobs.v[i], why);
			return;
		}
	}
	snprintf(c->name, sizeof c->name, "%s", h.name);
	snprintf(c->label, sizeof c->label, "attach:%d", (int)c->pid);
	for (uint32_t i = 0; i < h.jobs.n; i++) {
		c->jobs[i] = strdup(h.jobs.v[i]);
		if (!c->jobs[i]) {
			refuse(c, "supervisor out of memory");
			return;
		}
		c->njobs = i + 1;
	}
	char e[256];
	struct seg_params sp = { .nworkers = h.slots, .name = c->label };
	if (seg_create(&sp, &c->seg, e, sizeof e) < 0) {
		refuse(c, "supervisor could not create a segment: %s", e);
		return;
	}
	for (uint32_t i = 0; i < h.slots; i++) atomic_store(&seg_worker(c->seg, i)->gen, 1);
	static const struct disp_target_ops ops = {
		.capacity = t_capacity, .accepts = t_accepts, .worker_pid = NULL, .kill_worker = t_kill, .bad_frame = t_bad,
	};
	c->target = disp_add_target(a->d, c->seg, c->label, &ops, c);
	if (!c->target) {
		seg_close(c->seg);
		c->seg = NULL;
		refuse(c, "supervisor out of memory");
		return;
	}
	c->state = C_ATTACHED;
	ev_timer_stop(a->loop, &c->hello_w);
	unsigned char out[256];
	struct frame_welcome w = { .version = FRAME_ATTACH_VERSION, .slots = h.slots, .supervisor = (uint32_t)getpid(),
	                           .heartbeat_ms = a->pol.heartbeat_timeout_ms / 4 ? a->pol.heartbeat_timeout_ms / 4 : 1 };
	long n = frame_encode_welcome(&w, out, sizeof out);
	int fds[2] = { seg_memfd(c->seg), seg_eventfd(c->seg) };
	send_frame(c, out, (size_t)n, fds, 2);
	char jl[512] = "";
	size_t off = 0;
	for (uint32_t i = 0; i < c->njobs && off < sizeof jl; i++) {
		int k = snprintf(jl + off, sizeof jl - off, "%s%s", i ? ", " : "", c->jobs[i]);
		if (k < 0) break;
		off += (size_t)k;
	}
	log_info("attach: %s \"%s\" (uid %u) attached for %s with %" PRIu32 " slot%s", c->label, c->name, (unsigned)c->uid,
	         jl, h.slots, h.slots == 1 ? "" : "s");
	disp_kick(a->d);
}

static void conn_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	struct conn *c = w->data;
	unsigned char buf[MSG_MAX];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(8 * sizeof(int))];
	} ctl;
	struct iovec iov = { buf, sizeof buf };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b };
	ssize_t n = recvmsg(c->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
	/* nobody sends us fds: close any that came */
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); n >= 0 && h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
			size_t k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int fds[8];
			memcpy(fds, CMSG_DATA(h), k * sizeof(int) < sizeof fds ? k * sizeof(int) : sizeof fds);
			for (size_t i = 0; i < k && i < 8; i++) close(fds[i]);
		}
	if (n <= 0) {
		conn_close_later(c, n == 0 ? "disconnected" : strerror(errno));
		return;
	}
	if (c->state != C_HELLO) {
		conn_close_later(c, "sent a message after its hello (the protocol has none)");
		return;
	}
	if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		refuse(c, "hello longer than %d bytes", MSG_MAX);
		return;
	}
	on_hello(c, buf, (size_t)n);
}

static void hello_timeout_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	struct conn *c = w->data;
	refuse(c, "no hello within %.0f seconds", HELLO_TIMEOUT);
}

static void listen_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)revents;
	att_t *a = w->data;
	for (;;) {
		int fd = accept4(a->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				log_error("accept4 on %s failed: %s", a->path, strerror(errno));
			return;
		}
		struct ucred cr;
		socklen_t cl = sizeof cr;
		if (a->nconns >= MAX_CONNS || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0) {
			log_warn("attach: dropping a connection (%s)", a->nconns >= MAX_CONNS ? "too many" : strerror(errno));
			close(fd);
			continue;
		}
		struct conn *c = calloc(1, sizeof *c);
		if (!c) {
			close(fd);
			continue;
		}
		c->a = a;
		c->fd = fd;
		c->pid = cr.pid;
		c->uid = cr.uid;
		c->gid = cr.gid;
		c->state = C_HELLO;
		ev_io_init(&c->io, conn_cb, fd, EV_READ);
		c->io.data = c;
		ev_io_start(loop, &c->io);
		ev_timer_init(&c->hello_w, hello_timeout_cb, HELLO_TIMEOUT, 0);
		c->hello_w.data = c;
		ev_timer_start(loop, &c->hello_w);
		ev_timer_init(&c->close_w, close_later_cb, 0, 0);
		c->close_w.data = c;
		c->next = a->conns;
		a->conns = c;
		a->nconns++;
	}
}

/* ---- the listener ---------------------------------------------------------------------------------- */

void att_set_policy(att_t *a, const struct att_policy *pol)
{
	uint32_t *u = pol->nuids ? calloc(pol->nuids, sizeof *u) : NULL;
	uint32_t *g = pol->ngids ? calloc(pol->ngids, sizeof *g) : NULL;
	if ((pol->nuids && !u) || (pol->ngids && !g)) {
		free(u);
		free(g);
		log_error("attach: out of memory; keeping the old policy");
		return;
	}
	if (u) memcpy(u, pol->uids, pol->nuids * sizeof *u);
	if (g) memcpy(g, pol->gids, pol->ngids * sizeof *g);
	free(a->uids);
	free(a->gids);
	a->uids = u;
	a->gids = g;
	a->pol = *pol;
	a->pol.uids = u;
	a->pol.gids = g;
	if (!a->pol.heartbeat_timeout_ms) a->pol.heartbeat_timeout_ms = 5000;
}

att_t *att_new(struct ev_loop *loop, disp_t *d, const char *path, const struct att_policy *pol, char *err,
               size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof sa.sun_path) {
		snprintf(err, errlen, "attach socket path %s is longer than %zu bytes: give a shorter one with --socket PATH or "
		         "supervisor.attachSocket", path, sizeof sa.sun_path - 1);
		errno = ENAMETOOLONG;
		return NULL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (prepare_dir(path, err, errlen) < 0) return NULL;

	/* a live socket means another supervisor; a dead one is replaced */
	int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		if (connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0) {
			close(probe);
			snprintf(err, errlen, "attach socket %s: another supervisor is listening on it (the same namespace on this "
			         "machine?): stop it, or give this one a socket of its own with --socket PATH or "
			         "supervisor.attachSocket", path);
			errno = EADDRINUSE;
			return NULL;
		}
		close(probe);
		if (errno == ECONNREFUSED) unlink(path);
	}
	att_t *a = calloc(1, sizeof *a);
	if (!a) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	a->loop = loop;
	a->d = d;
	snprintf(a->path, sizeof a->path, "%s", path);
	a->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	a->dec = frame_decoder_new(MSG_MAX);
	if (a->fd < 0 || !a->dec || bind(a->fd, (struct sockaddr *)&sa, sizeof sa) < 0 || chmod(path, 0666) < 0 ||
	    listen(a->fd, 64) < 0) {
		int e = a->dec ? errno : ENOMEM;
		snprintf(err, errlen, "attach socket %s: %s", path, strerror(e));
		if (a->fd >= 0) close(a->fd);
		frame_decoder_free(a->dec);
		free(a);
		errno = e;
		return NULL;
	}
	att_set_policy(a, pol);
	ev_io_init(&a->io, listen_cb, a->fd, EV_READ);
	a->io.data = a;
	ev_io_start(loop, &a->io);
	log_info("attach: external workers attach on %s", path);
	return a;
}

void att_free(att_t *a)
{
	if (!a) return;
	while (a->conns) conn_close(a->conns, "supervisor stopping");
	ev_io_stop(a->loop, &a->io);
	close(a->fd);
	unlink(a->path);
	frame_decoder_free(a->dec);
	free(a->uids);
	free(a->gids);
	free(a);
}

void att_shutdown(att_t *a)
{
	if (!a) return;
	a->stopping = 1;
	for (struct conn *c = a->conns; c; c = c->next)
		if (c->seg) {
			atomic_store(&seg_header(c->seg)->shutdown, 1);
			ring_wake_all(c->seg);
		}
}

void att_set_lease(att_t *a, uint64_t deadline_ns, uint64_t kill_ns)
{
	for (struct conn *c = a->conns; c; c = c->next)
		if (c->seg) {
			atomic_store(&seg_header(c->seg)->lease_kill_ns, kill_ns);
			atomic_store(&seg_header(c->seg)->lease_deadline_ns, deadline_ns);
		}
}

void att_tick(att_t *a, uint64_t now)
{
	uint64_t limit = (uint64_t)a->pol.heartbeat_timeout_ms * 1000000u;
	for (struct conn *c = a->conns; c; c = c->next) {
		if (c->state != C_ATTACHED || ev_is_active(&c->close_w)) continue;
		for (uint32_t i = 0; i < seg_nworkers(c->seg); i++) {
			struct shm_worker *w = seg_worker(c->seg, i);
			uint32_t st = atomic_load(&w->state);
			if ((st != WRK_IDLE && st != WRK_BUSY) || (atomic_load(&w->flags) & WRKF_IN_NATIVE)) continue;
			uint64_t hb = atomic_load(&w->heartbeat_ns);
			if (hb && now > hb && now - hb > limit) {
				char why[128];
				snprintf(why, sizeof why, "slot %" PRIu32 " stopped heartbeating (%.1fs)", i, (double)(now - hb) / 1e9);
				conn_close_later(c, why);
				break;
			}
		}
	}
}

size_t att_count(const att_t *a)
{
	size_t n = 0;
	for (const struct conn *c = a->conns; c; c = c->next) n += c->state == C_ATTACHED;
	return n;
}

size_t att_serving(const att_t *a, const char *job)
{
	size_t n = 0;
	for (const struct conn *c = a->conns; c; c = c->next) {
		if (c->state != C_ATTACHED) continue;
		for (uint32_t i = 0; i < c->njobs; i++)
			if (!strcmp(c->jobs[i], job)) {
				n++;
				break;
			}
	}
	return n;
}

const char *att_path(const att_t *a) { return a->path; }
