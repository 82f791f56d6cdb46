/* supervisor/zk/zkc.c: the single-threaded ZooKeeper client (libzookeeper_st) driven by the libev
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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/wait.h"
#include "supervisor/base/nidx.h"
#include "supervisor/base/log.h"

#include "supervisor/zk/zkc_int.h"

/* ---- paths ------------------------------------------------------------------------------------ */

char *zkc_full_path(const zkc_t *z, const char *rel)
{
	size_t n = strlen(rel);
	char *p = malloc(z->rootlen + n + 2);
	if (!p) return NULL;
	memcpy(p, z->root, z->rootlen);
	memcpy(p + z->rootlen, rel, n + 1);
	return p;
}

const char *zkc_rel_path(const zkc_t *z, const char *full)
{
	if (full && !strncmp(full, z->root, z->rootlen) && (full[z->rootlen] == '/' || !full[z->rootlen]))
		return full + z->rootlen;
	return full ? full : "";
}

/* ---- the queue: the only thing the ZooKeeper threads touch ------------------------------------ */

void zkc_push(zkc_t *z, struct msg *m)
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
	zkc_push(s->z, m);
}

/* ---- watches ---------------------------------------------------------------------------------- */

/* Twice the buckets when there are more registrations than buckets; a failed allocation leaves
 * the chains longer, nothing else. */
static void wtab_grow(struct wtab *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 1024;
	struct watch **b = calloc(cap, sizeof *b);
	if (!b) return;
	for (uint32_t i = 0; i < t->cap; i++)
		for (struct watch *w = t->b[i], *n; w; w = n) {
			n = w->hnext;
			w->hnext = b[w->hash & (cap - 1)];
			b[w->hash & (cap - 1)] = w;
		}
	free(t->b);
	t->b = b;
	t->cap = cap;
}

void zkc_wtab_add(zkc_t *z, struct watch *w, const char *path, int kind)
{
	struct wtab *t = &z->wt;
	if (t->n >= t->cap) wtab_grow(t);
	w->path = path;
	w->kind = (uint8_t)kind;
	w->hash = (uint32_t)nidx_hash(path);
	if (!t->cap) {              /* no table at all: it stays out, and never fires */
		w->hnext = NULL;
		return;
	}
	struct watch **at = &t->b[w->hash & (t->cap - 1)];
	w->hnext = *at;
	*at = w;
	t->n++;
}

static void wtab_unlink(zkc_t *z, struct watch *w)
{
	struct wtab *t = &z->wt;
	if (!t->cap) return;
	for (struct watch **at = &t->b[w->hash & (t->cap - 1)]; *at; at = &(*at)->hnext)
		if (*at == w) {
			*at = w->hnext;
			w->hnext = NULL;
			t->n--;
			return;
		}
}

static void watch_release(struct watch *w)
{
	if (w->keep && w->keep->w == w) w->keep->w = NULL;
	if (!w->emb) {
		free(w);
		return;
	}
	struct zkc_keep *k = (struct zkc_keep *)(void *)((char *)w - offsetof(struct zkc_keep, reg));
	k->reg_used = 0;
	zkc_keep_release(k);
}

void zkc_watch_free(zkc_t *z, struct watch *w)
{
	wtab_unlink(z, w);
	watch_release(w);
}

/* Every registration that `drop` says (armed ones: the handle is closed and they never fire; all:
 * zkc_free), out of the table and freed. */
static void wtab_drop(zkc_t *z, int all)
{
	struct wtab *t = &z->wt;
	for (uint32_t i = 0; i < t->cap; i++)
		for (struct watch **at = &t->b[i]; *at;) {
			struct watch *w = *at;
			if (!all && !w->armed) {
				at = &w->hnext;
				continue;
			}
			*at = w->hnext;
			t->n--;
			watch_release(w);
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
	if (st == ZKC_CONNECTED) zkc_window_pump(z);     /* what waited for the connection, first */
	if (z->hooks.state) z->hooks.state(z->arg, st, new_session);
}

/* ---- connecting: when, to what, and what is said ------------------------------------------------ */

static void pump(zkc_t *z);

static double jitter(zkc_t *z)
{
	return 0.5 + 0.5 * ((double)rand_r(&z->conn.seed) / ((double)RAND_MAX + 1.0));
}

/* The backoff before the next round of attempts (one attempt per server, at once, per round):
 * base x 2^(rounds-1), at most max, jittered down to half so that many supervisors spread out.
 * While this instance may still have a session (it had one, and no expiry was seen), the wait is
 * also at most a third of the session timeout: the server that comes back within the session
 * must be found in time, or the session (and every item here) is lost for a backoff. */
static uint64_t backoff_ns(zkc_t *z)
{
	unsigned rounds = z->conn.fails / (unsigned)(z->conn.nhosts > 0 ? z->conn.nhosts : 1);
	if (z->conn.fails % (unsigned)(z->conn.nhosts > 0 ? z->conn.nhosts : 1)) return 0;   /* the round goes on: next server */
	double ms = z->conn.base_ms;
	for (unsigned k = 1; k < rounds && ms < z->conn.max_ms; k++) ms *= 2;
	if (ms > z->conn.max_ms) ms = z->conn.max_ms;
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

/* Before the first session: n more attempts failed (cause: the last one's); after
 * start_rounds rounds of them, the owner is told (once). */
static void start_failed(zkc_t *z, unsigned n, const char *cause)
{
	if (z->conn.ever || !z->conn.start_rounds || z->conn.gave_up) return;
	z->conn.start_fails += n;
	unsigned hosts = (unsigned)(z->conn.nhosts > 0 ? z->conn.nhosts : 1);
	if (z->conn.start_fails < z->conn.start_rounds * hosts || wait_now_ns() - z->conn.started_ns < z->conn.start_wait_ns) return;
	z->conn.gave_up = 1;
	char why[700];
	snprintf(why, sizeof why, "no session with ZooKeeper at %s after %u round%s of attempts over %.1fs (each server "
	         "once a round); the last: %s", z->hosts, z->conn.start_fails / hosts, z->conn.start_fails / hosts == 1 ? "" : "s",
	         (double)(wait_now_ns() - z->conn.started_ns) / 1e9, cause);
	if (z->hooks.gave_up) z->hooks.gave_up(z->arg, why);
}

/* An attempt ended without a session: say so (once per cause), and wait before the next round. */
static void attempt_failed(zkc_t *z, uint64_t now)
{
	z->conn.fails++;
	z->conn.gate_ns = lease_checkpoint(z, now, now + backoff_ns(z));
	uint64_t wait = z->conn.gate_ns - now;
	char cb[96], key[192];
	const char *cause = cause_text(z->conn.last_errno, cb, sizeof cb);
	snprintf(key, sizeof key, "%s %s", z->conn.server, cause);
	char last[256];
	snprintf(last, sizeof last, "%s: %s", z->conn.server, cause);
	start_failed(z, 1, last);
	if (z->conn.gave_up && !z->conn.ever) return;
	if (log_cause(&z->conn.cause, LL_WARN, key, "zookeeper: cannot connect to %s: %s; retrying %s%.1fs (backoff %u-%u ms, "
	              "jittered)", z->conn.server, cause, wait ? "in " : "another server, then backing off ",
	              (double)wait / 1e9, z->conn.base_ms, z->conn.max_ms))
		return;
	log_debug("zookeeper: attempt %u: cannot connect to %s: %s; next in %.1fs", z->conn.fails, z->conn.server, cause,
	          (double)wait / 1e9);
}

static void io_set(zkc_t *z, int fd, int ev, int fresh)
{
	if (fd == z->conn.io_fd && ev == z->conn.io_ev && !fresh) return;
	ev_io_stop(z->loop, &z->io_w);
	z->conn.io_fd = fd;
	z->conn.io_ev = ev;
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
		if (z->conn.attempting) {
			z->conn.attempting = 0;
			attempt_failed(z, now);
		}
		if (now < z->conn.gate_ns) {
			ev_timer_set(&z->tmo_w, (double)(z->conn.gate_ns - now) / 1e9, 0);
			ev_timer_start(z->loop, &z->tmo_w);
			return;
		}
	}
	int fd = -1, interest = 0;
	struct timeval tv = { 0, 0 };
	errno = 0;
	int rc = zookeeper_interest(z->zh, &fd, &interest, &tv);
	if (rc != ZOK && errno) z->conn.last_errno = errno;
	int fresh = 0;
	if (idle && fd >= 0) {
		/* an attempt began: the server it goes to, and when (the lease of a session it finds
		 * starts no earlier) */
		const char *srv = zoo_get_current_server(z->zh);
		snprintf(z->conn.server, sizeof z->conn.server, "%s", srv ? srv : z->hosts);
		z->conn.attempting = 1;
		z->conn.attempt_ns = now;
		z->conn.last_errno = 0;
		fresh = 1;
	}
	st = zoo_state(z->zh);
	if (st == 0 || st == ZOO_NOTCONNECTED_STATE || fd < 0) {
		/* no socket (the attempt failed at once, or the client waits between servers) */
		io_set(z, -1, 0, 0);
		if (z->conn.attempting && fd < 0) {
			z->conn.attempting = 0;
			attempt_failed(z, now);
		}
		double secs = z->conn.gate_ns > now ? (double)(z->conn.gate_ns - now) / 1e9 : (double)tv.tv_sec + tv.tv_usec / 1e6;
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
		if (rc != ZOK && rc != ZNOTHING && errno) z->conn.last_errno = errno;
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
	zkc_share_due(z);
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
	zkc_window_fail(z);         /* what never went: ZCLOSING too, after the client's */
	wtab_drop(z, 0);            /* no thread of the client runs any more: armed ones never fire */
	free(z->sess);
	z->sess = NULL;
	z->lease_ns = 0;
	z->timeout_ms = 0;
	z->ping_out = 0;
	z->conn.attempting = 0;
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
		zkc_push(r->z, m);
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
		char last[300];
		snprintf(last, sizeof last, "%s does not resolve: %s", z->hosts, why);
		start_failed(z, (unsigned)(z->conn.nhosts > 0 ? z->conn.nhosts : 1), last);
		if (z->conn.gave_up && !z->conn.ever) {
		} else if (!log_cause(&z->conn.cause, LL_ERROR, why, "zookeeper: cannot resolve %s: %s; retrying every %.1fs",
		                      z->hosts, why, z->conn.max_ms / 1000.0))
			log_debug("zookeeper: cannot resolve %s: %s", z->hosts, why);
		free(z->sess);
		z->sess = NULL;
		z->conn.gate_ns = wait_now_ns() + (uint64_t)z->conn.max_ms * 1000000u;
		ev_timer_set(&z->tmo_w, z->conn.max_ms / 1000.0, 0);
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
		zkc_keeps_new_session(z);       /* armed in no session yet: their owners arm them */
		z->sess->z = z;
		z->sess->session = z->session;
		z->last_client_id = 0;
		z->conn.fails = 0;
		z->conn.gate_ns = 0;
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
		/* the client resolves its server list at every zookeeper_interest (each turn of the
		 * loop) by default: a getaddrinfo with a netlink dump of the interfaces, 45% of the
		 * supervisor's time while a restart in front of 10,000 jobs shards them. The list is
		 * resolved already (above, off the loop, again at each new handle); the client still
		 * resolves on a lost connection. */
		zoo_set_servers_resolution_delay(z->zh, -1);
		pump(z);
		return;
	}
	log_error("zookeeper: cannot start a client for %s: %s; retrying in %.1fs", z->hosts,
	          errno ? strerror(errno) : "bad server list", z->conn.max_ms / 1000.0);
	free(z->sess);
	z->sess = NULL;
	z->conn.gate_ns = wait_now_ns() + (uint64_t)z->conn.max_ms * 1000000u;
	ev_timer_set(&z->tmo_w, z->conn.max_ms / 1000.0, 0);
	ev_timer_start(z->loop, &z->tmo_w);
}

void zkc_lease_from(zkc_t *z, uint64_t sent_ns, uint64_t session)
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
	/* past the window: behind at most a window of requests at the server */
	struct read rd = { .op = ZKC_KEEP_EXISTS, .path = "", .item = ZKC_NO_ITEM, .cb = ping_done, .arg = z, .urgent = 1 };
	if (zkc_read(z, &rd) == ZOK) {
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
		z->conn.attempting = 0;
		z->conn.fails = 0;
		z->conn.ever = 1;
		z->conn.gate_ns = 0;
		if (z->conn.down_ns && z->conn.cause.last)
			log_info("zookeeper: connected again after %.1fs without a connection", (double)(now - z->conn.down_ns) / 1e9);
		z->conn.down_ns = 0;
		log_cause_reset(&z->conn.cause);
		/* The server took the session's handshake after this attempt began: the session lives
		 * at least a timeout from then. The lease is fresh the moment the connection is. */
		zkc_lease_from(z, z->conn.attempt_ns, z->session);
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
		zkc_keeps_reconnected(z);       /* reads lost with a connection (of this session), again */
		set_state(z, ZKC_CONNECTED, fresh);
	} else if (m->state == ZOO_CONNECTING_STATE || m->state == ZOO_ASSOCIATING_STATE) {
		if (z->state == ZKC_CONNECTED) {
			char cb[96];
			log_warn("zookeeper: the connection to %s was lost (%s); reconnecting at once, then with backoff", z->conn.server,
			         cause_text(z->conn.last_errno, cb, sizeof cb));
			z->conn.down_ns = now;
			z->conn.fails = 0;
			z->conn.gate_ns = 0;          /* the first attempt at once: it is what keeps the session */
		}
		set_state(z, ZKC_CONNECTING, 0);
	} else if (m->state == ZOO_EXPIRED_SESSION_STATE) {
		close_handle(z);
		z->expirations++;
		set_state(z, ZKC_EXPIRED, 0);
		z->state = ZKC_CONNECTING;
		if (!z->conn.down_ns) z->conn.down_ns = now;
		open_handle(z);
	} else if (m->state == ZOO_AUTH_FAILED_STATE) {
		close_handle(z);
		set_state(z, ZKC_AUTH_FAILED, 0);
		start_failed(z, (unsigned)(z->conn.nhosts > 0 ? z->conn.nhosts : 1),
		             "the digest credentials (regCenter.digest) were refused");
		log_error("zookeeper: the digest credentials (regCenter.digest) were refused; check the user and "
		          "password; retrying in %.1fs", z->conn.max_ms / 1000.0);
		z->conn.gate_ns = now + (uint64_t)z->conn.max_ms * 1000000u;
		ev_timer_set(&z->tmo_w, z->conn.max_ms / 1000.0, 0);
		ev_timer_start(z->loop, &z->tmo_w);
	}
}

/* Does an event of this type fire a registration of this kind? As the client's tables: a data or
 * exists watch fires at a creation, a change and a deletion, a children watch at a child's change
 * and a deletion. */
static int fires(int type, int kind)
{
	if (type == ZOO_DELETED_EVENT) return 1;
	if (type == ZOO_CHILD_EVENT) return kind == ZKC_KEEP_CHILDREN;
	return kind != ZKC_KEEP_CHILDREN;
}

/* A watch fired: every armed registration of its path that it fires (the client held them: their
 * answers, which armed them, came before the event), each to its callback or to its kept watch,
 * which reads again (neither from zkc_free on). One whose answer has not been handled was not the
 * client's yet: it stays. */
static void on_watch(zkc_t *z, struct msg *m)
{
	const char *rel = zkc_rel_path(z, m->wpath);
	struct wtab *t = &z->wt;
	struct watch *hit = NULL, **tail = &hit;
	if (m->session == z->session && m->wpath && t->cap) {
		uint32_t h = (uint32_t)nidx_hash(rel);
		for (struct watch **at = &t->b[h & (t->cap - 1)]; *at;) {
			struct watch *w = *at;
			if (w->hash != h || !w->armed || w->session != m->session || !fires(m->type, w->kind) || strcmp(w->path, rel)) {
				at = &w->hnext;
				continue;
			}
			*at = w->hnext;         /* out of the table, onto the list to tell */
			t->n--;
			w->hnext = NULL;
			*tail = w;
			tail = &w->hnext;
		}
	}
	/* told one by one: what a callback does (a read again, a new registration) does not touch
	 * the list (only the client's answers and events free an armed registration) */
	while (hit) {
		struct watch *wt = hit;
		hit = wt->hnext;
		zkc_watch_cb cb = wt->cb;
		void *arg = wt->arg;
		struct zkc_keep *k = wt->keep;
		if (k) {
			k->w = NULL;        /* fired: the client holds it no more */
			wt->keep = NULL;
		}
		watch_release(wt);
		if (k && !z->closing) zkc_keep_event(k, m->type);
		else if (!k && cb) cb(arg, m->type, rel);
	}
	free(m->wpath);
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
			case M_WATCH: on_watch(z, m); break;
			case M_RESULT: zkc_on_result(z, m); break;
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
	z->conn.base_ms = p->base_sleep_ms > 0 ? (unsigned)p->base_sleep_ms : 1000;
	z->conn.max_ms = p->max_sleep_ms > 0 ? (unsigned)p->max_sleep_ms : 3000;
	if (z->conn.max_ms < z->conn.base_ms) z->conn.max_ms = z->conn.base_ms;
	z->win.window = p->window > 0 ? (unsigned)p->window : ZKC_WINDOW;
	z->conn.start_rounds = p->start_rounds > 0 ? (unsigned)p->start_rounds : 0;
	z->conn.start_wait_ns = p->start_wait_ms > 0 ? (uint64_t)p->start_wait_ms * 1000000u : 0;
	z->conn.nhosts = 1;
	for (const char *c = z->hosts; *c; c++) z->conn.nhosts += *c == ',';
	z->conn.seed = (unsigned)getpid() ^ (unsigned)wait_now_ns();
	z->conn.io_fd = -1;
	z->keeps.next = z->keeps.prev = &z->keeps;
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
	z->conn.started_ns = wait_now_ns();
	open_handle(z);
}

void zkc_free(zkc_t *z)
{
	if (!z) return;
	zkc_share_flush(z);     /* sent, so that closing fails them as it fails every request */
	close_handle(z);
	if (z->resolving) pthread_join(z->resolver, NULL);   /* it queues its answer: before the queue goes */
	ev_timer_stop(z->loop, &z->tmo_w);
	ev_prepare_stop(z->loop, &z->prep_w);
	/* deliver what the close produced (ZCLOSING) so that every request's memory is freed */
	z->closing = 1;
	drain(z);
	zkc_keeps_detach(z);
	ev_async_stop(z->loop, &z->async);
	wtab_drop(z, 1);
	free(z->wt.b);
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
unsigned zkc_inflight_max(const zkc_t *z) { return z->win.inflight_max; }
unsigned zkc_backlog(const zkc_t *z) { return z->win.inflight + z->win.nwait; }
const struct ACL_vector *zkc_acl(const zkc_t *z) { return &z->acl; }
uint64_t zkc_requests(const zkc_t *z) { return z->requests; }
uint64_t zkc_errors(const zkc_t *z) { return z->errors; }
uint64_t zkc_expirations(const zkc_t *z) { return z->expirations; }
