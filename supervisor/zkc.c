/* supervisor/zkc.c: the single-threaded ZooKeeper client (libzookeeper_st) driven by the libev
 * loop: its socket is an ev_io, its deadlines an ev_timer, and what it wants is asked again before
 * the loop sleeps (ev_prepare). Completions and watch events are queued and delivered by the loop
 * (a fault injector in a test may deliver from a thread of its own: the queue has a mutex). Being
 * on the loop, the client decides when a connection is attempted: a lost connection is retried
 * at once on each server, then with a jittered, bounded backoff (regCenter's base and max sleep),
 * instead of the C client's own ten attempts a second. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/wait.h"
#include "supervisor/log.h"
#include "supervisor/zkc.h"

enum msg_kind { M_SESSION, M_WATCH, M_RESULT, M_RESOLVED };

struct sess {                   /* the global watcher's context: one per handle */
	zkc_t *z;
	uint64_t session;
};

struct watch {                  /* one watch registration; owned by zkc, on its list */
	struct watch *prev, *next;
	zkc_t *z;
	zkc_watch_cb cb;
	void *arg;
	uint64_t session;
	atomic_int fired;           /* set by the ZooKeeper thread before it queues the event */
	int pending;                /* loop: the request that sets it has not been answered yet */
	int armed;                  /* loop: the server set it; it fires or dies with the session */
	int delivered;              /* loop: its event was handled while the request was pending */
};

struct req {                    /* one request in flight; freed after its callback */
	zkc_t *z;
	zkc_cb cb;
	void *arg;
	uint64_t session, sent_ns;
	char *path;                 /* full path */
	struct watch *w;            /* watch set with it, or NULL */
	int exists;                 /* an exists request: its watch is set on ZNONODE too */
};

struct zkc_multi {
	int n, cap, bad;
	zoo_op_t *ops;
	char **paths;               /* relative, until commit makes them full */
	char **datas;
	int *lens;
	char **created;             /* create ops: buffer for the created path */
	struct Stat *stats;         /* set ops */
	zoo_op_result_t *results;
};

struct mreq {                   /* a multi in flight */
	struct req r;
	zkc_multi_t *m;
};

struct msg {
	struct msg *next;
	enum msg_kind kind;
	int type, state;
	uint64_t session;
	struct watch *w;            /* M_WATCH */
	char *wpath;
	struct req *req;            /* M_RESULT */
	int multi;
	int rc;
	char *data;
	int len;
	struct Stat stat;
	struct String_vector kids;
	char *created;
	char *resolved;             /* M_RESOLVED: the server list with addresses (NULL: failed) */
	int err;                    /* M_RESOLVED: getaddrinfo's error */
};

struct zkc {
	struct ev_loop *loop;
	ev_async async;
	ev_io io_w;                 /* the client's socket, for what it wants (read, write) */
	ev_timer tmo_w;             /* its next deadline (pings, timeouts), or the backoff's end */
	ev_prepare prep_w;          /* before the loop sleeps: ask the client what it wants now */
	ev_timer ping_w;
	pthread_mutex_t mu;
	struct msg *head, *tail;    /* under mu */
	zhandle_t *zh;
	struct sess *sess;
	uint64_t session;           /* generation of zh */
	int64_t last_client_id;
	enum zkc_state state;
	int timeout_ms;
	uint64_t lease_ns;
	uint64_t requests;
	int ping_out;
	char *hosts, *root, *digest;
	char *addrs;                /* hosts with names resolved (off the loop), as given to the client */
	int resolving;
	pthread_t resolver;
	int closing;                /* zkc_free: nothing is reopened */
	size_t rootlen;
	int want_timeout;
	FILE *client_log;
	struct ACL_vector acl;
	struct ACL acl_one;
	struct zkc_hooks hooks;
	void *arg;
	struct watch watches;       /* list head */
	/* connecting */
	int nhosts;
	unsigned base_ms, max_ms;   /* backoff between rounds of attempts */
	unsigned fails;             /* attempts that failed since the last connection */
	uint64_t gate_ns;           /* no new attempt before this (CLOCK_MONOTONIC) */
	uint64_t attempt_ns;        /* when the current (or last) attempt began */
	int attempting;             /* an attempt's socket is open, no session on it yet */
	int io_fd, io_ev;           /* what io_w watches (-1: nothing) */
	int last_errno;             /* why the last attempt or connection ended */
	char server[64];            /* the server of the current attempt */
	uint64_t down_ns;           /* since when there has been no connection (0: connected) */
	struct log_cause cause;     /* the last failure to connect that was logged */
	unsigned seed;
};

/* ---- paths ------------------------------------------------------------------------------------ */

static char *full_path(const zkc_t *z, const char *rel)
{
	size_t n = strlen(rel);
	char *p = malloc(z->rootlen + n + 2);
	if (!p) return NULL;
	memcpy(p, z->root, z->rootlen);
	memcpy(p + z->rootlen, rel, n + 1);
	return p;
}

static const char *rel_path(const zkc_t *z, const char *full)
{
	if (full && !strncmp(full, z->root, z->rootlen) && (full[z->rootlen] == '/' || !full[z->rootlen]))
		return full + z->rootlen;
	return full ? full : "";
}

/* ---- the queue: the only thing the ZooKeeper threads touch ------------------------------------ */

static void push(zkc_t *z, struct msg *m)
{
	m->next = NULL;
	pthread_mutex_lock(&z->mu);
	if (z->tail) z->tail->next = m;
	else z->head = m;
	z->tail = m;
	pthread_mutex_unlock(&z->mu);
	ev_async_send(z->loop, &z->async);
}

static void global_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)path;
	struct sess *s = ctx;
	if (type != ZOO_SESSION_EVENT) return;
	struct msg *m = calloc(1, sizeof *m);
	if (!m) return;             /* the ping notices a dead session */
	m->kind = M_SESSION;
	m->state = state;
	m->session = s->session;
	push(s->z, m);
}

static void path_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)state;
	struct watch *w = ctx;
	if (type == ZOO_SESSION_EVENT) return;     /* the global watcher has it */
	struct msg *m = calloc(1, sizeof *m);
	if (!m) return;
	m->kind = M_WATCH;
	m->type = type;
	m->w = w;
	m->wpath = path ? strdup(path) : NULL;
	atomic_store(&w->fired, 1);
	push(w->z, m);
}

static struct msg *result_msg(const void *data, int rc)
{
	struct msg *m = calloc(1, sizeof *m);
	if (!m) return NULL;        /* cannot report: the request leaks its callback; logged below */
	m->kind = M_RESULT;
	m->req = (struct req *)(uintptr_t)data;
	m->rc = rc;
	return m;
}

static void oom_in_thread(void)
{
	static const char msg[] = "ejob-supervisor: out of memory in a ZooKeeper completion\n";
	if (write(2, msg, sizeof msg - 1) < 0) {}
}

static void c_stat(int rc, const struct Stat *st, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	if (st) m->stat = *st;
	push(m->req->z, m);
}

static void c_data(int rc, const char *v, int len, const struct Stat *st, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	if (st) m->stat = *st;
	if (v && len >= 0) {
		m->data = malloc((size_t)len + 1);
		if (m->data) {
			memcpy(m->data, v, (size_t)len);
			m->data[len] = '\0';
			m->len = len;
		}
	}
	push(m->req->z, m);
}

static void c_kids(int rc, const struct String_vector *sv, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	if (sv && sv->count > 0) {
		m->kids.data = calloc((size_t)sv->count, sizeof(char *));
		if (m->kids.data) {
			for (int i = 0; i < sv->count; i++) {
				m->kids.data[i] = strdup(sv->data[i]);
				if (!m->kids.data[i]) break;
				m->kids.count = i + 1;
			}
		}
	}
	push(m->req->z, m);
}

static void c_string(int rc, const char *v, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	if (v) m->created = strdup(v);
	push(m->req->z, m);
}

static void c_void(int rc, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	push(m->req->z, m);
}

static void c_multi(int rc, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	m->multi = 1;
	push(m->req->z, m);
}

/* ---- watches ---------------------------------------------------------------------------------- */

static struct watch *watch_new(zkc_t *z, zkc_watch_cb cb, void *arg)
{
	struct watch *w = calloc(1, sizeof *w);
	if (!w) return NULL;
	w->z = z;
	w->cb = cb;
	w->arg = arg;
	w->session = z->session;
	w->pending = 1;
	w->next = z->watches.next;
	w->prev = &z->watches;
	z->watches.next->prev = w;
	z->watches.next = w;
	return w;
}

static void watch_free(struct watch *w)
{
	w->prev->next = w->next;
	w->next->prev = w->prev;
	free(w);
}

/* After zookeeper_close no ZooKeeper thread runs: an armed watch that has not fired never will.
 * (A fired one is freed when its queued event is handled; one whose request is unanswered, when
 * the answer, ZCLOSING, is handled.) */
static void watches_drop_unfired(zkc_t *z)
{
	for (struct watch *w = z->watches.next, *n; w != &z->watches; w = n) {
		n = w->next;
		if (w->armed && !atomic_load(&w->fired)) watch_free(w);
	}
}

/* ---- the session -------------------------------------------------------------------------------- */

const char *zkc_state_name(enum zkc_state st)
{
	switch (st) {
	case ZKC_CONNECTING: return "connecting";
	case ZKC_CONNECTED: return "connected";
	case ZKC_EXPIRED: return "expired";
	case ZKC_AUTH_FAILED: return "authentication failed";
	}
	return "?";
}

static void set_state(zkc_t *z, enum zkc_state st, int new_session)
{
	if (st == z->state && !new_session) return;
	z->state = st;
	if (z->hooks.state) z->hooks.state(z->arg, st, new_session);
}

/* ---- connecting: when, to what, and what is said ------------------------------------------------ */

static void pump(zkc_t *z);

static double jitter(zkc_t *z)
{
	return 0.5 + 0.5 * ((double)rand_r(&z->seed) / ((double)RAND_MAX + 1.0));
}

/* The backoff before the next round of attempts (one attempt per server, at once, per round):
 * base x 2^(rounds-1), at most max, jittered down to half so that many supervisors spread out.
 * While this instance may still have a session (it had one, and no expiry was seen), the wait is
 * also at most a third of the session timeout: the server that comes back within the session
 * must be found in time, or the session (and every item here) is lost for a backoff. */
static uint64_t backoff_ns(zkc_t *z)
{
	unsigned rounds = z->fails / (unsigned)(z->nhosts > 0 ? z->nhosts : 1);
	if (z->fails % (unsigned)(z->nhosts > 0 ? z->nhosts : 1)) return 0;   /* the round goes on: next server */
	double ms = z->base_ms;
	for (unsigned k = 1; k < rounds && ms < z->max_ms; k++) ms *= 2;
	if (ms > z->max_ms) ms = z->max_ms;
	if (z->last_client_id && z->timeout_ms && ms > z->timeout_ms / 3.0) ms = z->timeout_ms / 3.0;
	return (uint64_t)(ms * jitter(z) * 1e6);
}

static const char *cause_text(int e, char *buf, size_t sz)
{
	switch (e) {
	case 0: return "no answer";
	case EHOSTDOWN: return "the server closed the connection";
	case ETIMEDOUT: return "no answer within the session's read timeout";
	default: snprintf(buf, sz, "%s", strerror(e)); return buf;
	}
}

/* While the session may live, two attempts are timed to its lease whatever the backoff says: one
 * just before the items here would be stopped for it (lease - T/2, the longest they are given),
 * one just before the session could expire (lease - T/8). A server back by then is found in
 * time; the backoff only spaces out the attempts in between. */
static uint64_t lease_checkpoint(const zkc_t *z, uint64_t now, uint64_t gate)
{
	if (!z->last_client_id || !z->lease_ns || !z->timeout_ms) return gate;
	uint64_t t = (uint64_t)z->timeout_ms * 1000000u;
	uint64_t marks[2] = { z->lease_ns > t / 2 + 150000000u ? z->lease_ns - t / 2 - 150000000u : 0,
	                      z->lease_ns > t / 8 ? z->lease_ns - t / 8 : 0 };
	for (int k = 0; k < 2; k++)
		if (marks[k] > now && marks[k] < gate) gate = marks[k];
	return gate;
}

/* An attempt ended without a session: say so (once per cause), and wait before the next round. */
static void attempt_failed(zkc_t *z, uint64_t now)
{
	z->fails++;
	z->gate_ns = lease_checkpoint(z, now, now + backoff_ns(z));
	uint64_t wait = z->gate_ns - now;
	char cb[96], key[192];
	const char *cause = cause_text(z->last_errno, cb, sizeof cb);
	snprintf(key, sizeof key, "%s %s", z->server, cause);
	if (log_cause(&z->cause, LL_WARN, key, "zookeeper: cannot connect to %s: %s; retrying %s%.1fs (backoff %u-%u ms, "
	              "jittered)", z->server, cause, wait ? "in " : "another server, then backing off ",
	              (double)wait / 1e9, z->base_ms, z->max_ms))
		return;
	log_debug("zookeeper: attempt %u: cannot connect to %s: %s; next in %.1fs", z->fails, z->server, cause,
	          (double)wait / 1e9);
}

static void io_set(zkc_t *z, int fd, int ev, int fresh)
{
	if (fd == z->io_fd && ev == z->io_ev && !fresh) return;
	ev_io_stop(z->loop, &z->io_w);
	z->io_fd = fd;
	z->io_ev = ev;
	if (fd < 0 || !ev) return;
	ev_io_set(&z->io_w, fd, ev);
	ev_io_start(z->loop, &z->io_w);
}

/* Ask the client what it wants now (its socket's events, its next deadline) and watch for that.
 * With no connection, calling it starts an attempt: that waits for the backoff's gate. */
static void pump(zkc_t *z)
{
	if (!z->zh) {
		/* no client (resolving, or waiting to start one again): tmo_w is that wait's timer */
		io_set(z, -1, 0, 0);
		return;
	}
	ev_timer_stop(z->loop, &z->tmo_w);
	uint64_t now = wait_now_ns();
	int st = zoo_state(z->zh);
	int idle = st == 0 || st == ZOO_NOTCONNECTED_STATE;
	if (idle) {
		io_set(z, -1, 0, 0);    /* the client has closed its socket: never watch a closed fd */
		if (z->attempting) {
			z->attempting = 0;
			attempt_failed(z, now);
		}
		if (now < z->gate_ns) {
			ev_timer_set(&z->tmo_w, (double)(z->gate_ns - now) / 1e9, 0);
			ev_timer_start(z->loop, &z->tmo_w);
			return;
		}
	}
	int fd = -1, interest = 0;
	struct timeval tv = { 0, 0 };
	errno = 0;
	int rc = zookeeper_interest(z->zh, &fd, &interest, &tv);
	if (rc != ZOK && errno) z->last_errno = errno;
	int fresh = 0;
	if (idle && fd >= 0) {
		/* an attempt began: the server it goes to, and when (the lease of a session it finds
		 * starts no earlier) */
		const char *srv = zoo_get_current_server(z->zh);
		snprintf(z->server, sizeof z->server, "%s", srv ? srv : z->hosts);
		z->attempting = 1;
		z->attempt_ns = now;
		z->last_errno = 0;
		fresh = 1;
	}
	st = zoo_state(z->zh);
	if (st == 0 || st == ZOO_NOTCONNECTED_STATE || fd < 0) {
		/* no socket (the attempt failed at once, or the client waits between servers) */
		io_set(z, -1, 0, 0);
		if (z->attempting && fd < 0) {
			z->attempting = 0;
			attempt_failed(z, now);
		}
		double secs = z->gate_ns > now ? (double)(z->gate_ns - now) / 1e9 : (double)tv.tv_sec + tv.tv_usec / 1e6;
		ev_timer_set(&z->tmo_w, secs > 0 ? secs : 0.001, 0);
		ev_timer_start(z->loop, &z->tmo_w);
		return;
	}
	io_set(z, fd, (interest & ZOOKEEPER_READ ? EV_READ : 0) | (interest & ZOOKEEPER_WRITE ? EV_WRITE : 0), fresh);
	double secs = (double)tv.tv_sec + tv.tv_usec / 1e6;
	ev_timer_set(&z->tmo_w, secs > 0 ? secs : 0.001, 0);
	ev_timer_start(z->loop, &z->tmo_w);
}

static void drain(zkc_t *z);

/* The client's socket is ready, or its deadline came: let it work, deliver what it produced. */
static void process(zkc_t *z, int events)
{
	if (z->zh && events) {
		errno = 0;
		int rc = zookeeper_process(z->zh, events);
		if (rc != ZOK && rc != ZNOTHING && errno) z->last_errno = errno;
	}
	drain(z);
	pump(z);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	zkc_t *z = w->data;
	process(z, (revents & EV_READ ? ZOOKEEPER_READ : 0) | (revents & EV_WRITE ? ZOOKEEPER_WRITE : 0));
}

static void open_handle(zkc_t *z);

static void tmo_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	zkc_t *z = w->data;
	if (!z->zh) {
		/* no client: the last start failed (resolving, init, refused credentials); again now */
		if (!z->resolving && !z->closing) open_handle(z);
		return;
	}
	process(z, 0);
}

static void prep_cb(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)revents;
	zkc_t *z = w->data;
	/* requests sent since the last look may have left data for the socket to write */
	pump(z);
}

/* ---- the handle --------------------------------------------------------------------------------- */

static void close_handle(zkc_t *z)
{
	if (!z->zh) return;
	zhandle_t *zh = z->zh;
	z->zh = NULL;
	io_set(z, -1, 0, 0);
	ev_timer_stop(z->loop, &z->tmo_w);
	/* completions of the old handle come back with ZCLOSING, from inside this call */
	zookeeper_close(zh);
	watches_drop_unfired(z);
	free(z->sess);
	z->sess = NULL;
	z->lease_ns = 0;
	z->timeout_ms = 0;
	z->ping_out = 0;
	z->attempting = 0;
	ev_timer_stop(z->loop, &z->ping_w);
}

/* Names in the server list are resolved off the loop (getaddrinfo may wait for DNS); the client
 * gets addresses, so that it never resolves anything on the loop itself. */
struct resolve {
	zkc_t *z;
	char *hosts;
	uint64_t session;
};

static int numeric(const char *hosts)
{
	for (const char *p = hosts; *p; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) return 0;
	return 1;
}

static void *resolver(void *arg)
{
	struct resolve *r = arg;
	size_t cap = strlen(r->hosts) * 4 + 256, o = 0;
	char *out = malloc(cap);
	int err = 0;
	char *save = NULL, *list = strdup(r->hosts);
	for (char *h = list ? strtok_r(list, ",", &save) : NULL; h && out; h = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(h, ':');
		if (!colon) continue;
		*colon = '\0';
		struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
		int rc = getaddrinfo(h, colon + 1, &hints, &ai);
		if (rc) {
			err = rc;
			continue;
		}
		for (struct addrinfo *a = ai; a && o + 64 < cap; a = a->ai_next) {
			char ip[INET_ADDRSTRLEN];
			inet_ntop(AF_INET, &((struct sockaddr_in *)a->ai_addr)->sin_addr, ip, sizeof ip);
			o += (size_t)snprintf(out + o, cap - o, "%s%s:%s", o ? "," : "", ip, colon + 1);
		}
		freeaddrinfo(ai);
	}
	free(list);
	struct msg *m = calloc(1, sizeof *m);
	if (m) {
		m->kind = M_RESOLVED;
		m->session = r->session;
		m->resolved = out && o ? out : NULL;
		if (!m->resolved) free(out);
		m->err = err;
		push(r->z, m);
	} else {
		free(out);
	}
	free(r->hosts);
	free(r);
	return NULL;
}

static void start_resolve(zkc_t *z)
{
	struct resolve *r = calloc(1, sizeof *r);
	if (r && (r->hosts = strdup(z->hosts))) {
		r->z = z;
		r->session = z->session;
		int rc = pthread_create(&z->resolver, NULL, resolver, r);
		if (rc == 0) {
			z->resolving = 1;
			return;
		}
		free(r->hosts);
	}
	free(r);
	log_error("zookeeper: cannot start resolving %s; the ZooKeeper client resolves it itself", z->hosts);
	free(z->addrs);
	z->addrs = strdup(z->hosts);
	open_handle(z);
}

static void on_resolved(zkc_t *z, struct msg *m)
{
	if (z->resolving) pthread_join(z->resolver, NULL);    /* it has queued this: it is ending */
	z->resolving = 0;
	if (z->zh || !z->sess || z->closing) {
		free(m->resolved);
		return;
	}
	if (!m->resolved) {
		const char *why = m->err ? gai_strerror(m->err) : "no address";
		if (!log_cause(&z->cause, LL_ERROR, why, "zookeeper: cannot resolve %s: %s; retrying every %.1fs", z->hosts, why,
		               z->max_ms / 1000.0))
			log_debug("zookeeper: cannot resolve %s: %s", z->hosts, why);
		free(z->sess);
		z->sess = NULL;
		z->gate_ns = wait_now_ns() + (uint64_t)z->max_ms * 1000000u;
		ev_timer_set(&z->tmo_w, z->max_ms / 1000.0, 0);
		ev_timer_start(z->loop, &z->tmo_w);
		return;
	}
	if (m->err) log_warn("zookeeper: some of %s do not resolve (%s); using %s", z->hosts, gai_strerror(m->err), m->resolved);
	free(z->addrs);
	z->addrs = m->resolved;
	open_handle(z);
}

/* A new handle: its session is a new one (ZKC_CONNECTED with new_session follows). */
static void open_handle(zkc_t *z)
{
	if (!z->sess) {
		z->sess = calloc(1, sizeof *z->sess);
		if (!z->sess) {
			log_error("zookeeper: out of memory");
			return;
		}
		z->session++;
		z->sess->z = z;
		z->sess->session = z->session;
		z->last_client_id = 0;
		z->fails = 0;
		z->gate_ns = 0;
		if (!numeric(z->hosts)) {
			start_resolve(z);
			return;
		}
		free(z->addrs);
		z->addrs = strdup(z->hosts);
	}
	errno = 0;
	z->zh = zookeeper_init(z->addrs ? z->addrs : z->hosts, global_watcher, z->want_timeout, NULL, z->sess, 0);
	if (z->zh) {
		pump(z);
		return;
	}
	log_error("zookeeper: cannot start a client for %s: %s; retrying in %.1fs", z->hosts,
	          errno ? strerror(errno) : "bad server list", z->max_ms / 1000.0);
	free(z->sess);
	z->sess = NULL;
	z->gate_ns = wait_now_ns() + (uint64_t)z->max_ms * 1000000u;
	ev_timer_set(&z->tmo_w, z->max_ms / 1000.0, 0);
	ev_timer_start(z->loop, &z->tmo_w);
}

static void lease_from(zkc_t *z, uint64_t sent_ns, uint64_t session)
{
	if (session != z->session || !z->timeout_ms) return;
	uint64_t until = sent_ns + (uint64_t)z->timeout_ms * 1000000u;
	if (until > z->lease_ns) z->lease_ns = until;
}

static void ping_done(void *arg, const struct zkc_res *r)
{
	zkc_t *z = arg;
	(void)r;
	z->ping_out = 0;
}

static void ping_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	zkc_t *z = w->data;
	if (z->state != ZKC_CONNECTED || z->ping_out) return;
	/* any answered request renews the lease; this one makes sure there is one every period */
	if (zkc_exists(z, "", NULL, NULL, ping_done, z) == ZOK) {
		z->ping_out = 1;
		z->requests--;          /* a ping is not work: zkc_requests counts the rest */
	}
}

static void auth_done(int rc, const void *data)
{
	/* the session watcher reports ZOO_AUTH_FAILED_STATE; nothing to do here */
	(void)rc;
	(void)data;
}

static void on_session(zkc_t *z, struct msg *m)
{
	if (m->session != z->session || !z->zh) return;       /* an older handle's news */
	uint64_t now = wait_now_ns();
	if (m->state == ZOO_CONNECTED_STATE) {
		const clientid_t *id = zoo_client_id(z->zh);
		int64_t cid = id ? id->client_id : 0;
		int fresh = cid != z->last_client_id;
		z->last_client_id = cid;
		z->timeout_ms = zoo_recv_timeout(z->zh);
		z->attempting = 0;
		z->fails = 0;
		z->gate_ns = 0;
		if (z->down_ns && z->cause.last[0])
			log_info("zookeeper: connected again after %.1fs without a connection", (double)(now - z->down_ns) / 1e9);
		z->down_ns = 0;
		log_cause_reset(&z->cause);
		/* The server took the session's handshake after this attempt began: the session lives
		 * at least a timeout from then. The lease is fresh the moment the connection is. */
		lease_from(z, z->attempt_ns, z->session);
		if (fresh && z->digest &&
		    zoo_add_auth(z->zh, "digest", z->digest, (int)strlen(z->digest), auth_done, NULL) != ZOK)
			log_error("zookeeper: cannot send the digest credentials");
		/* then every sixth of the timeout */
		double period = z->timeout_ms / 6000.0;
		z->state = ZKC_CONNECTED;
		z->ping_out = 0;
		ping_cb(z->loop, &z->ping_w, 0);
		ev_timer_set(&z->ping_w, period, period);
		ev_timer_again(z->loop, &z->ping_w);
		z->state = ZKC_CONNECTING;
		set_state(z, ZKC_CONNECTED, fresh);
	} else if (m->state == ZOO_CONNECTING_STATE || m->state == ZOO_ASSOCIATING_STATE) {
		if (z->state == ZKC_CONNECTED) {
			char cb[96];
			log_warn("zookeeper: the connection to %s was lost (%s); reconnecting at once, then with backoff", z->server,
			         cause_text(z->last_errno, cb, sizeof cb));
			z->down_ns = now;
			z->fails = 0;
			z->gate_ns = 0;          /* the first attempt at once: it is what keeps the session */
		}
		set_state(z, ZKC_CONNECTING, 0);
	} else if (m->state == ZOO_EXPIRED_SESSION_STATE) {
		close_handle(z);
		set_state(z, ZKC_EXPIRED, 0);
		z->state = ZKC_CONNECTING;
		if (!z->down_ns) z->down_ns = now;
		open_handle(z);
	} else if (m->state == ZOO_AUTH_FAILED_STATE) {
		close_handle(z);
		set_state(z, ZKC_AUTH_FAILED, 0);
		log_error("zookeeper: the digest credentials (regCenter.digest) were refused; check the user and "
		          "password; retrying in %.1fs", z->max_ms / 1000.0);
		z->gate_ns = now + (uint64_t)z->max_ms * 1000000u;
		ev_timer_set(&z->tmo_w, z->max_ms / 1000.0, 0);
		ev_timer_start(z->loop, &z->tmo_w);
	}
}

static void free_kids(struct String_vector *sv)
{
	for (int i = 0; i < sv->count; i++) free(sv->data[i]);
	free(sv->data);
	sv->data = NULL;
	sv->count = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void multi_free(zkc_multi_t *m)
{
	if (!m) return;
	for (int i = 0; i < m->n; i++) {
		free(m->paths[i]);
		free(m->datas[i]);
		free(m->created[i]);
	}
	free(m->ops);
	free(m->paths);
	free(m->datas);
	free(m->lens);
	free(m->created);
	free(m->stats);
	free(m->results);
	free(m);
}

static void on_result(zkc_t *z, struct msg *m)
{
	struct req *q = m->req;
	/* an answer from the server renews the lease: ZOK and the API errors it sends (ZNONODE, ...);
	 * the client's own failures (the system errors, closing, an expired session) do not */
	if (m->rc == ZOK || (m->rc < ZAPIERROR && m->rc != ZCLOSING && m->rc != ZSESSIONEXPIRED && m->rc != ZSESSIONMOVED &&
	                     m->rc != ZINVALIDCALLBACK))
		lease_from(z, q->sent_ns, q->session);
	/* the watch sent with it: the server set it (it will fire, or die with the session), or not */
	if (q->w) {
		struct watch *w = q->w;
		int set = m->rc == ZOK || (q->exists && m->rc == ZNONODE);
		w->pending = 0;
		if (w->delivered) watch_free(w);
		else if (set && q->session == z->session && z->zh) w->armed = 1;
		else if (!atomic_load(&w->fired)) watch_free(w);
	}
	if (q->cb) {
		struct zkc_res r;
		memset(&r, 0, sizeof r);
		r.rc = m->rc;
		r.session = q->session;
		r.path = rel_path(z, q->path);
		r.data = m->data;
		r.len = m->len;
		r.stat = m->stat;
		if (m->kids.count > 1) qsort(m->kids.data, (size_t)m->kids.count, sizeof(char *), cmp_str);
		r.nchildren = m->kids.count;
		r.children = m->kids.data;
		r.created = m->created ? rel_path(z, m->created) : NULL;
		int op_rc[1];
		int *rcs = op_rc;
		if (m->multi) {
			zkc_multi_t *mm = ((struct mreq *)q)->m;
			rcs = calloc((size_t)mm->n + 1, sizeof *rcs);
			if (rcs) for (int i = 0; i < mm->n; i++) rcs[i] = mm->results[i].err;
			r.nops = rcs ? mm->n : 0;
			r.op_rc = rcs;
			r.op_stat = mm->stats;
		}
		q->cb(q->arg, &r);
		if (rcs != op_rc) free(rcs);
	}
	if (m->multi) multi_free(((struct mreq *)q)->m);
	free(q->path);
	free(q);
	free(m->data);
	free(m->created);
	free_kids(&m->kids);
}

/* Deliver what the client (or a thread) queued: session changes, watch events, answers. */
static void drain(zkc_t *z)
{
	for (;;) {
		pthread_mutex_lock(&z->mu);
		struct msg *m = z->head;
		z->head = z->tail = NULL;
		pthread_mutex_unlock(&z->mu);
		if (!m) return;
		while (m) {
			struct msg *n = m->next;
			switch (m->kind) {
			case M_SESSION: on_session(z, m); break;
			case M_WATCH: {
				struct watch *wt = m->w;
				zkc_watch_cb cb = wt->cb;
				void *arg = wt->arg;
				uint64_t sess = wt->session;
				if (wt->pending) wt->delivered = 1;     /* its request's answer frees it */
				else watch_free(wt);
				if (cb && sess == z->session) cb(arg, m->type, rel_path(z, m->wpath));
				free(m->wpath);
				break;
			}
			case M_RESULT: on_result(z, m); break;
			case M_RESOLVED: on_resolved(z, m); break;
			}
			free(m);
			m = n;
		}
	}
}

static void async_cb(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)loop;
	(void)revents;
	zkc_t *z = w->data;
	drain(z);
	pump(z);
}

zkc_t *zkc_new(struct ev_loop *loop, const struct zkc_params *p, const struct zkc_hooks *h, void *arg)
{
	zkc_t *z = calloc(1, sizeof *z);
	if (!z) return NULL;
	z->loop = loop;
	z->hosts = strdup(p->hosts);
	size_t rl = strlen(p->root);
	z->root = malloc(rl + 2);
	z->digest = p->digest ? strdup(p->digest) : NULL;
	if (!z->hosts || !z->root || (p->digest && !z->digest)) {
		free(z->hosts);
		free(z->root);
		free(z->digest);
		free(z);
		return NULL;
	}
	z->root[0] = '/';
	memcpy(z->root + 1, p->root, rl + 1);
	z->rootlen = rl + 1;
	z->want_timeout = p->session_timeout_ms;
	z->client_log = p->client_log;
	z->hooks = *h;
	z->arg = arg;
	z->state = ZKC_CONNECTING;
	z->base_ms = p->base_sleep_ms > 0 ? (unsigned)p->base_sleep_ms : 1000;
	z->max_ms = p->max_sleep_ms > 0 ? (unsigned)p->max_sleep_ms : 3000;
	if (z->max_ms < z->base_ms) z->max_ms = z->base_ms;
	z->nhosts = 1;
	for (const char *c = z->hosts; *c; c++) z->nhosts += *c == ',';
	z->seed = (unsigned)getpid() ^ (unsigned)wait_now_ns();
	z->io_fd = -1;
	z->watches.next = z->watches.prev = &z->watches;
	if (z->digest) {
		z->acl_one = ZOO_CREATOR_ALL_ACL.data[0];
		z->acl.count = 1;
		z->acl.data = &z->acl_one;
	} else {
		z->acl = ZOO_OPEN_ACL_UNSAFE;
	}
	pthread_mutex_init(&z->mu, NULL);
	ev_async_init(&z->async, async_cb);
	z->async.data = z;
	ev_async_start(loop, &z->async);
	ev_timer_init(&z->ping_w, ping_cb, 1, 1);
	z->ping_w.data = z;
	ev_io_init(&z->io_w, io_cb, 0, EV_READ);
	z->io_w.data = z;
	ev_timer_init(&z->tmo_w, tmo_cb, 1, 0);
	z->tmo_w.data = z;
	ev_prepare_init(&z->prep_w, prep_cb);
	z->prep_w.data = z;
	ev_prepare_start(loop, &z->prep_w);
	return z;
}

void zkc_start(zkc_t *z)
{
	zoo_set_debug_level(z->client_log ? ZOO_LOG_LEVEL_WARN : (ZooLogLevel)0);
	if (z->client_log) zoo_set_log_stream(z->client_log);
	open_handle(z);
}

void zkc_free(zkc_t *z)
{
	if (!z) return;
	close_handle(z);
	if (z->resolving) pthread_join(z->resolver, NULL);   /* it queues its answer: before the queue goes */
	ev_timer_stop(z->loop, &z->tmo_w);
	ev_prepare_stop(z->loop, &z->prep_w);
	/* deliver what the close produced (ZCLOSING) so that every request's memory is freed */
	z->closing = 1;
	drain(z);
	ev_async_stop(z->loop, &z->async);
	while (z->watches.next != &z->watches) watch_free(z->watches.next);
	pthread_mutex_destroy(&z->mu);
	free(z->hosts);
	free(z->addrs);
	free(z->root);
	free(z->digest);
	free(z);
}

enum zkc_state zkc_state(const zkc_t *z) { return z->state; }
uint64_t zkc_session(const zkc_t *z) { return z->session; }
int64_t zkc_session_id(const zkc_t *z) { return z->state == ZKC_CONNECTED ? z->last_client_id : 0; }
int zkc_timeout_ms(const zkc_t *z) { return z->timeout_ms; }
uint64_t zkc_lease_ns(const zkc_t *z) { return z->lease_ns; }
const struct ACL_vector *zkc_acl(const zkc_t *z) { return &z->acl; }
uint64_t zkc_requests(const zkc_t *z) { return z->requests; }

/* ---- requests ---------------------------------------------------------------------------------- */

static struct req *req_new(zkc_t *z, const char *path, zkc_cb cb, void *arg, size_t size)
{
	if (!z->zh) return NULL;
	struct req *q = calloc(1, size);
	if (!q) return NULL;
	q->z = z;
	q->cb = cb;
	q->arg = arg;
	q->session = z->session;
	q->sent_ns = wait_now_ns();
	if (path && !(q->path = full_path(z, path))) {
		free(q);
		return NULL;
	}
	return q;
}

static int sent(zkc_t *z, struct req *q, int rc)
{
	if (rc != ZOK) {
		if (q->w) watch_free(q->w);
		free(q->path);
		free(q);
		return rc;
	}
	z->requests++;
	return ZOK;
}

static int no_handle(const zkc_t *z)
{
	return z->zh ? ZSYSTEMERROR : ZINVALIDSTATE;
}

/* A read with an optional watch. A watch the server does not set (an error, or a get/children
 * of a missing node) would never fire: those are freed when the answer comes (see on_result). */
int zkc_get(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	struct req *q = req_new(z, path, cb, arg, sizeof *q);
	if (!q) return no_handle(z);
	if (w && !(q->w = watch_new(z, w, warg))) return sent(z, q, ZSYSTEMERROR);
	return sent(z, q, zoo_awget(z->zh, q->path, w ? path_watcher : NULL, q->w, c_data, q));
}

int zkc_exists(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	struct req *q = req_new(z, path, cb, arg, sizeof *q);
	if (!q) return no_handle(z);
	q->exists = 1;
	if (w && !(q->w = watch_new(z, w, warg))) return sent(z, q, ZSYSTEMERROR);
	return sent(z, q, zoo_awexists(z->zh, q->path, w ? path_watcher : NULL, q->w, c_stat, q));
}

int zkc_children(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	struct req *q = req_new(z, path, cb, arg, sizeof *q);
	if (!q) return no_handle(z);
	if (w && !(q->w = watch_new(z, w, warg))) return sent(z, q, ZSYSTEMERROR);
	return sent(z, q, zoo_awget_children(z->zh, q->path, w ? path_watcher : NULL, q->w, c_kids, q));
}

int zkc_create(zkc_t *z, const char *path, const char *data, int len, int flags, zkc_cb cb, void *arg)
{
	struct req *q = req_new(z, path, cb, arg, sizeof *q);
	if (!q) return no_handle(z);
	/* "" is the root itself: full_path gives "/ns" */
	return sent(z, q, zoo_acreate(z->zh, q->path, data, data ? len : -1, &z->acl, flags, c_string, q));
}

int zkc_set(zkc_t *z, const char *path, const char *data, int len, int version, zkc_cb cb, void *arg)
{
	struct req *q = req_new(z, path, cb, arg, sizeof *q);
	if (!q) return no_handle(z);
	return sent(z, q, zoo_aset(z->zh, q->path, data, data ? len : -1, version, c_stat, q));
}

int zkc_delete(zkc_t *z, const char *path, int version, zkc_cb cb, void *arg)
{
	struct req *q = req_new(z, path, cb, arg, sizeof *q);
	if (!q) return no_handle(z);
	return sent(z, q, zoo_adelete(z->zh, q->path, version, c_void, q));
}

/* ---- multi ------------------------------------------------------------------------------------- */

zkc_multi_t *zkc_multi_new(void)
{
	return calloc(1, sizeof(zkc_multi_t));
}

static int multi_add(zkc_multi_t *m, const char *path, const char *data, int len)
{
	if (m->bad) return -1;
	if (m->n == m->cap) {
		int nc = m->cap ? m->cap * 2 : 8;
		zoo_op_t *ops = realloc(m->ops, (size_t)nc * sizeof *ops);
		if (ops) m->ops = ops;
		char **p = realloc(m->paths, (size_t)nc * sizeof *p);
		if (p) m->paths = p;
		char **d = realloc(m->datas, (size_t)nc * sizeof *d);
		if (d) m->datas = d;
		int *l = realloc(m->lens, (size_t)nc * sizeof *l);
		if (l) m->lens = l;
		char **c = realloc(m->created, (size_t)nc * sizeof *c);
		if (c) m->created = c;
		struct Stat *s = realloc(m->stats, (size_t)nc * sizeof *s);
		if (s) m->stats = s;
		if (!ops || !p || !d || !l || !c || !s) {
			m->bad = 1;
			return -1;
		}
		m->cap = nc;
	}
	int i = m->n;
	m->paths[i] = strdup(path);
	m->datas[i] = NULL;
	m->lens[i] = data ? len : -1;
	m->created[i] = NULL;
	memset(&m->stats[i], 0, sizeof m->stats[i]);
	memset(&m->ops[i], 0, sizeof m->ops[i]);
	if (!m->paths[i] || (data && !(m->datas[i] = malloc(len > 0 ? (size_t)len : 1)))) {
		free(m->paths[i]);
		m->bad = 1;
		return -1;
	}
	if (data && len > 0) memcpy(m->datas[i], data, (size_t)len);
	m->n++;
	return i;
}

/* Ops are filled at commit, when the full paths and the ACL are known; type is kept in the op. */
void zkc_multi_check(zkc_multi_t *m, const char *path, int version)
{
	int i = multi_add(m, path, NULL, 0);
	if (i < 0) return;
	m->ops[i].type = ZOO_CHECK_OP;
	m->ops[i].check_op.version = version;
}

void zkc_multi_create(zkc_multi_t *m, const char *path, const char *data, int len, int flags)
{
	int i = multi_add(m, path, data ? data : "", data ? len : 0);
	if (i < 0) return;
	m->ops[i].type = ZOO_CREATE_OP;
	m->ops[i].create_op.flags = flags;
}

void zkc_multi_set(zkc_multi_t *m, const char *path, const char *data, int len, int version)
{
	int i = multi_add(m, path, data ? data : "", data ? len : 0);
	if (i < 0) return;
	m->ops[i].type = ZOO_SETDATA_OP;
	m->ops[i].set_op.version = version;
}

void zkc_multi_delete(zkc_multi_t *m, const char *path, int version)
{
	int i = multi_add(m, path, NULL, 0);
	if (i < 0) return;
	m->ops[i].type = ZOO_DELETE_OP;
	m->ops[i].delete_op.version = version;
}

int zkc_multi_count(const zkc_multi_t *m)
{
	return m->n;
}

int zkc_multi_commit(zkc_t *z, zkc_multi_t *m, zkc_cb cb, void *arg)
{
	if (m->bad || !m->n) {
		int rc = m->bad ? ZSYSTEMERROR : ZBADARGUMENTS;
		multi_free(m);
		return rc;
	}
	struct mreq *q = (struct mreq *)req_new(z, NULL, cb, arg, sizeof *q);
	if (!q) {
		multi_free(m);
		return no_handle(z);
	}
	q->m = m;
	m->results = calloc((size_t)m->n, sizeof *m->results);
	int ok = m->results != NULL;
	for (int i = 0; ok && i < m->n; i++) {
		char *full = full_path(z, m->paths[i]);
		if (!full) {
			ok = 0;
			break;
		}
		free(m->paths[i]);
		m->paths[i] = full;
		zoo_op_t *o = &m->ops[i];
		int type = o->type;
		switch (type) {
		case ZOO_CHECK_OP: {
			int v = o->check_op.version;
			zoo_check_op_init(o, full, v);
			break;
		}
		case ZOO_CREATE_OP: {
			int fl = o->create_op.flags;
			size_t cap = strlen(full) + 16;
			m->created[i] = malloc(cap);
			if (!m->created[i]) {
				ok = 0;
				break;
			}
			zoo_create_op_init(o, full, m->datas[i], m->lens[i], &z->acl, fl, m->created[i], (int)cap);
			break;
		}
		case ZOO_SETDATA_OP: {
			int v = o->set_op.version;
			zoo_set_op_init(o, full, m->datas[i], m->lens[i], v, &m->stats[i]);
			break;
		}
		case ZOO_DELETE_OP: {
			int v = o->delete_op.version;
			zoo_delete_op_init(o, full, v);
			break;
		}
		}
	}
	if (!ok) {
		multi_free(m);
		free(q);
		return ZSYSTEMERROR;
	}
	int rc = zoo_amulti(z->zh, m->n, m->ops, m->results, c_multi, q);
	if (rc != ZOK) {
		multi_free(m);
		free(q);
		return rc;
	}
	z->requests++;
	return ZOK;
}
