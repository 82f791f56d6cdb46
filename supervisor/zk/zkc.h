/* supervisor/zk/zkc.h: the supervisor's one ZooKeeper session, on its libev loop.
 *
 * The single-threaded client (libzookeeper_st) is driven by the loop: its socket is an ev_io, its
 * deadlines an ev_timer, and it is asked what it wants before the loop sleeps. Completions and
 * watch events are queued and delivered on the loop; every callback below runs on the loop thread.
 * A loop that hangs therefore stops the session's pings, and the session expires as the instance
 * it stands for is gone: failover runs its items elsewhere while its workers stop them (the lease
 * in shared memory). Names in the server list are resolved off the loop, by a thread of zkc's.
 *
 * Paths given here are relative to the namespace root ("/job/config" is /{namespace}/job/config);
 * "" is the root itself. Results and watch events give paths the same way.
 *
 * Session: zkc opens a handle and keeps one: on expiry it closes it (on the loop), opens a new one,
 * re-authenticates and tells the owner (state ZKC_EXPIRED, then ZKC_CONNECTED with new_session),
 * who re-registers and arms its kept watches again (below: they are unarmed by a new session). A lost connection is tried again at once on each server, then
 * with a jittered backoff from base_sleep_ms doubling to max_sleep_ms (at most a third of the
 * session timeout while the session may live, and always an attempt just before the lease's
 * deadlines); each failure to connect is logged once per cause. Each change of state is told once.
 *
 * Lease: the server renews the session whenever it hears from the client, so after a request sent
 * at time T is answered, the session cannot expire before T + the negotiated timeout. zkc keeps
 * that bound (CLOCK_MONOTONIC) over every answered request, pings every sixth of the timeout, and
 * starts it afresh from the connection attempt's start when a connection is made (the server took
 * the handshake after that), so the owner knows until when this instance surely still owns its
 * ephemeral nodes, and has a fresh lease the moment it is connected again. */
#ifndef EJOB_ZKC_H
#define EJOB_ZKC_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>
#include <zookeeper/zookeeper.h>

typedef struct zkc zkc_t;

enum zkc_state {
	ZKC_CONNECTING,     /* no session yet, or the connection is lost (the session may live on) */
	ZKC_CONNECTED,      /* session usable */
	ZKC_EXPIRED,        /* the session is gone: its ephemeral nodes and watches too */
	ZKC_AUTH_FAILED,    /* the digest was refused; retried with backoff */
};

struct zkc_params {
	const char *hosts;              /* "host:port,host:port" */
	const char *root;               /* namespace, without '/' */
	int session_timeout_ms;
	const char *digest;             /* "user:password" or NULL */
	int base_sleep_ms, max_sleep_ms;   /* connection retries: the backoff's first and longest wait */
	FILE *client_log;               /* where libzookeeper logs (NULL: nowhere) */
	int window;                     /* requests at the server at once (0: ZKC_WINDOW) */
	/* Rounds of attempts (each server once; a server list that does not resolve counts as a
	 * round) after which, and no sooner than start_wait_ms after zkc_start, a first session is
	 * given up: hooks.gave_up. 0: never. Only before the first session: one lost later is sought
	 * for ever. */
	int start_rounds;
	int start_wait_ms;
};

/* The window: ZooKeeper answers a session's requests in order, its pings included, so a burst of
 * thousands would hold the ping's answer (and the lease, which counts from when an answered
 * request was sent) for as long as the server takes to answer them all. At most this many are at
 * the server at once; the rest wait in zkc, in order, and go as answers come, each counting for
 * the lease from when it really went. The ping goes past the window. */
#define ZKC_WINDOW 256
/* ...and at most this many ops, a multi counting its ops: shared multis hold up to 1,000 each,
 * and 256 of them (50,000 jobs' running nodes at a fire) were 4 s of the server's work ahead of
 * the ping: the lease ran out on a server that answered all along. A multi larger than this goes
 * alone. */
#define ZKC_WINDOW_OPS 8192
#define ZKC_BURST 4096          /* requests waiting at once that make a burst (zkc_req.c: trimmed after) */

struct zkc_hooks {
	/* new_session: CONNECTED with a session other than the last one (first connect, after expiry) */
	void (*state)(void *arg, enum zkc_state st, int new_session);
	/* No first session after start_rounds rounds: why, naming the servers and the last cause.
	 * Called once; zkc goes on trying unless it is freed. May be NULL. */
	void (*gave_up)(void *arg, const char *why);
	/* An answer came, nothing waits for the window and it is at most half full: the time for
	 * requests that can wait (arming watches: coord_arm.c), so that they never queue in front of
	 * the ones that cannot. May be NULL. */
	void (*idle)(void *arg);
};

/* No item: what r->item says for a request sent without one. */
#define ZKC_NO_ITEM UINT32_MAX

/* The answer to one request. Strings are valid during the callback only. */
struct zkc_res {
	int rc;                     /* ZOK, ZNONODE, ZNODEEXISTS, ZBADVERSION, ZCONNECTIONLOSS, ... */
	uint64_t session;           /* the session generation the request was sent on */
	const char *path;           /* the request's path (relative) */
	uint32_t item;              /* the item it was sent with (zkc_*_item, zkc_multi_item, a kept
	                               watch's), else ZKC_NO_ITEM */
	int event;                  /* a kept watch's answer: the event that made zkc read again
	                               (ZOO_CREATED_EVENT, ...); 0: the owner's read (arm, read) */
	const char *data;           /* get: the data (NUL-terminated copy), len bytes; NULL if none */
	int len;
	struct Stat stat;           /* get, exists, set */
	int nchildren;              /* children: names, sorted (strcmp) */
	char **children;
	const char *created;        /* create: the path made (relative) */
	int nops;                   /* multi: each op's rc, and the stat of each set op */
	const int *op_rc;
	const struct Stat *op_stat;
};
typedef void (*zkc_cb)(void *arg, const struct zkc_res *r);

/* A watch: fires once, with ZOO_CREATED_EVENT, ZOO_DELETED_EVENT, ZOO_CHANGED_EVENT or
 * ZOO_CHILD_EVENT (never a session event: those go to hooks.state). A watch set on a session
 * that then expired never fires. */
typedef void (*zkc_watch_cb)(void *arg, int type, const char *path);

zkc_t *zkc_new(struct ev_loop *loop, const struct zkc_params *p, const struct zkc_hooks *h, void *arg);
void zkc_start(zkc_t *z);
void zkc_free(zkc_t *z);       /* closes the session: its ephemeral nodes go at once */

enum zkc_state zkc_state(const zkc_t *z);
uint64_t zkc_session(const zkc_t *z);          /* generation of the current session, from 1 */
int64_t zkc_session_id(const zkc_t *z);        /* the server's id of the session, 0 if none */
int zkc_timeout_ms(const zkc_t *z);            /* negotiated session timeout (0 before) */
uint64_t zkc_lease_ns(const zkc_t *z);         /* CLOCK_MONOTONIC until which the session surely lives; 0 = none */
unsigned zkc_inflight_max(const zkc_t *z);    /* the most requests ever at the server at once */
unsigned zkc_backlog(const zkc_t *z);         /* requests made and not answered yet (at the server or waiting) */
const struct ACL_vector *zkc_acl(const zkc_t *z);   /* for nodes ejob creates: CREATOR_ALL with a digest */

/* Requests: ZOK when sent or waiting for the window (cb follows exactly once, also for a closed
 * session, with rc ZCLOSING/ZSESSIONEXPIRED/ZCONNECTIONLOSS), else a ZooKeeper error code (cb not
 * called). Requests go to the server in the order they were made; one made while not connected
 * waits for the connection (its session's end fails it with ZCLOSING). A watch
 * callback may be NULL (no watch). cb may be NULL (fire and forget). Each watched read registers
 * a watch of its own: two watched reads of one path fire twice (a kept watch, below, keeps one).
 * r->item is ZKC_NO_ITEM. */
int zkc_get(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg);
int zkc_exists(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg);
int zkc_children(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg);
int zkc_create(zkc_t *z, const char *path, const char *data, int len, int flags, zkc_cb cb, void *arg);
int zkc_set(zkc_t *z, const char *path, const char *data, int len, int version, zkc_cb cb, void *arg);
int zkc_delete(zkc_t *z, const char *path, int version, zkc_cb cb, void *arg);

/* The same reads with an item of the caller's (a shard item, say) that comes back in r->item:
 * a callback shared by many requests knows which one answered without parsing r->path. */
int zkc_get_item(zkc_t *z, const char *path, uint32_t item, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg);
int zkc_exists_item(zkc_t *z, const char *path, uint32_t item, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg);
int zkc_children_item(zkc_t *z, const char *path, uint32_t item, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg);

/* A multi: build, then commit (which takes it, sent or not). zkc_multi_item sets the r->item of
 * its answer (ZKC_NO_ITEM if not set). */
typedef struct zkc_multi zkc_multi_t;
zkc_multi_t *zkc_multi_new(void);
void zkc_multi_check(zkc_multi_t *m, const char *path, int version);
void zkc_multi_create(zkc_multi_t *m, const char *path, const char *data, int len, int flags);
void zkc_multi_set(zkc_multi_t *m, const char *path, const char *data, int len, int version);
void zkc_multi_delete(zkc_multi_t *m, const char *path, int version);
void zkc_multi_item(zkc_multi_t *m, uint32_t item);
int zkc_multi_count(const zkc_multi_t *m);
/* Its size as a request, near enough: paths, data and 32 bytes an op. ZooKeeper refuses a
 * request over jute.maxbuffer (1 MB by default, and drops the connection): a multi that may grow
 * with its data keeps to ZKC_MULTI_BYTES and sends the rest in another. */
size_t zkc_multi_bytes(const zkc_multi_t *m);
#define ZKC_MULTI_BYTES ((size_t)256 << 10)
int zkc_multi_commit(zkc_t *z, zkc_multi_t *m, zkc_cb cb, void *arg);
/* The same, sent with the other multis of this turn of the loop as one request before the loop
 * sleeps (so after any request made later in this turn: only for multis whose order against the
 * caller's other requests does not matter). The answer is the part's own, as from
 * zkc_multi_commit: when the shared one is refused, each part is sent again alone. */
int zkc_multi_share(zkc_t *z, zkc_multi_t *m, zkc_cb cb, void *arg);

/* A kept watch: "watch armed in this session" kept by zkc for its owner, on one path.
 *
 *   zkc_keep_new    a kept watch of a kind, on path, not armed: nothing is sent (NULL: out of
 *                   memory). Each answer of its reads goes to cb with r->item = item (any
 *                   number of the owner's) and r->path = path.
 *   zkc_keep_arm    arm it in this session: its watched read goes out (r->event 0). Armed
 *                   already: nothing is sent. ZOK, or the error that kept the read from going
 *                   out (ZINVALIDSTATE with no handle: arm it again at ZKC_CONNECTED).
 *   zkc_keep_read   an answer now (r->event 0): while armed, a read without a watch (the one
 *                   registration stays); not armed, the same as zkc_keep_arm. ZOK or an error.
 *   zkc_keep_armed  1 if armed in this session.
 *   zkc_keep_free   cb is never called after it; safe from inside cb and with reads in flight
 *                   (they hold it until answered), before or after zkc_free. NULL: nothing.
 * arm, read and armed take NULL (a keep that could not be made): ZBADARGUMENTS, 0.
 *
 * Armed, it re-arms itself: after each event zkc reads again and the answer comes with r->event
 * = the event's type (ZOO_CREATED_EVENT, ZOO_DELETED_EVENT, ZOO_CHANGED_EVENT, ZOO_CHILD_EVENT).
 * It holds one registration at a time in the client, whatever is read in between, so every
 * change is told once. A DATA or CHILDREN read of a missing node (ZNONODE, told) sets no watch:
 * zkc waits for the node with an exists watch and reads it when it comes (r->event
 * ZOO_CREATED_EVENT). A read lost with a connection (ZCONNECTIONLOSS, ZOPERATIONTIMEOUT,
 * ZSESSIONMOVED; also one made before the session's first connection) is sent again when the
 * session is connected; a registration the server had survives a lost connection (the client
 * sets it again and the server fires what changed meanwhile).
 *
 * cb gets definite answers only: ZOK, ZNONODE and the server's other errors (one that leaves no
 * watch, as ZNOAUTH on a get, unarms the keep; an error that unarms one is logged). Never a lost
 * read, never ZCLOSING, ZSESSIONEXPIRED, ZAUTHFAILED or ZINVALIDSTATE, never an answer of an
 * earlier session (also one that comes after the new session began), nothing from zkc_free on.
 *
 * A new session (the first, after an expiry, after refused credentials) unarms every kept watch
 * and sends nothing: its owner registers again what it must, then arms them (on ZKC_CONNECTED
 * with new_session). */
typedef struct zkc_keep zkc_keep_t;
enum zkc_keep_kind {
	ZKC_KEEP_EXISTS,            /* exists: ZOK with r->stat, or ZNONODE */
	ZKC_KEEP_DATA,              /* get: r->data, r->len, r->stat */
	ZKC_KEEP_CHILDREN,          /* children: r->children; told too when the node itself goes or comes */
};
zkc_keep_t *zkc_keep_new(zkc_t *z, enum zkc_keep_kind kind, const char *path, uint32_t item, zkc_cb cb, void *arg);
int zkc_keep_arm(zkc_keep_t *k);
int zkc_keep_read(zkc_keep_t *k);
int zkc_keep_armed(const zkc_keep_t *k);
void zkc_keep_free(zkc_keep_t *k);

/* Requests sent since start, pings not counted (round trips, for the benchmark). */
uint64_t zkc_requests(const zkc_t *z);
/* Requests whose answer was the client's own failure, not the server's (a lost connection, an
 * expired session, closing: the ones that renew no lease); sessions found expired. */
uint64_t zkc_errors(const zkc_t *z);
uint64_t zkc_expirations(const zkc_t *z);

const char *zkc_state_name(enum zkc_state st);

#endif
