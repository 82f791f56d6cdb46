/* supervisor/zk/zkc_int.h: what zkc.c (the session, the connection, delivery on the loop),
 * zkc_req.c (requests, multis, their completions) and zkc_keep.c (kept watches) share. Private
 * to them (and to t/native/zkc-probe, which looks inside for t/42). */
#ifndef EJOB_ZKC_INT_H
#define EJOB_ZKC_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "supervisor/base/log.h"
#include "supervisor/zk/zkc.h"

enum msg_kind { M_SESSION, M_WATCH, M_RESULT, M_RESOLVED };

struct sess {                   /* the global watcher's context: one per handle */
	zkc_t *z;
	uint64_t session;
};

/* One watch registration; owned by zkc, in its table (struct wtab). Every registration goes to
 * the client with the same watcher and context (path_watcher, the handle's struct sess): the
 * client keeps its watchers in lists that it searches for a duplicate at each insertion, and at
 * each session event it gathers every one of them into one such list. With a context of their own,
 * 300,000 registrations (50,000 jobs) took it minutes at 100% of a core per connection loss (a
 * search of the growing list for each). Alike, the client holds one per path and kind, and says
 * an event once; zkc finds its registrations by the event's path (on_watch). */
struct watch {
	struct watch *hnext;        /* the table's chain */
	const char *path;           /* relative: its kept watch's, or held after it (a plain one) */
	zkc_watch_cb cb;
	void *arg;
	uint64_t session;
	uint32_t hash;              /* of path (the table's key) */
	uint8_t kind;               /* enum zkc_keep_kind: the read that sets it (what fires it) */
	uint8_t pending;            /* loop: the request that sets it has not been answered yet */
	uint8_t armed;              /* loop: the server set it; it fires or dies with the session */
	uint8_t emb;                /* the registration embedded in its kept watch (reg): not freed alone */
	struct zkc_keep *keep;      /* loop: the kept watch whose registration it is (its event goes
	                               there), NULL for a plain one or one its keep let go */
};

struct wtab {                   /* the registrations by path (zkc.c) */
	struct watch **b;           /* [cap], a power of two */
	uint32_t cap, n;
};
void zkc_wtab_add(zkc_t *z, struct watch *w, const char *path, int kind);

enum req_op { R_EXISTS, R_GET, R_CHILDREN, R_CREATE, R_SET, R_DELETE, R_MULTI };

struct req {                    /* one request, waiting for the window or in flight; freed after its callback */
	zkc_t *z;
	zkc_cb cb;
	void *arg;
	uint64_t session, sent_ns;  /* sent_ns: when it went to the client (the lease counts from it) */
	enum req_op op;             /* what to send */
	char *data;                 /* create, set: a copy until sent */
	int len, flags, version;    /* create (len, flags), set (len, version), delete (version) */
	int sent;                   /* handed to the client: counted in zkc's inflight */
	unsigned ops;               /* its ops in the window's inflight_ops (a multi's count, else 1) */
	struct req *wnext;          /* zkc's window queue */
	char *path;                 /* full path */
	struct watch *w;            /* watch set with it, or NULL */
	int exists;                 /* an exists request: its watch is set on ZNONODE too */
	uint32_t item;              /* r->item of its answer */
	struct zkc_keep *keep;      /* a kept watch's read: the answer goes there, not to cb */
	int event;                  /* keep: r->event of its answer */
	int probe;                  /* keep: an exists that waits for a missing node */
};

/* A read to send (zkc_read): exists, get or children, as the kinds of kept watch. */
struct read {
	enum zkc_keep_kind op;
	const char *path;           /* relative */
	uint32_t item;
	int watch;                  /* set a watch with it: wcb's, or keep's registration */
	zkc_watch_cb wcb;
	void *warg;
	zkc_cb cb;                  /* the answer (not called for a keep's read) */
	void *arg;
	struct zkc_keep *keep;      /* a kept watch's read (req's keep, event and probe) */
	int event, probe;
	int urgent;                 /* past the window (the ping) */
};

/* A kept watch (zkc.h); on its zkc's list until freed. 10,000 jobs hold 90,000 of them: one
 * allocation each with its path and its usual registration (reg), which the client may hold after
 * the keep is freed (then the keep stays allocated, silent, until it fires or the session ends). */
struct zkc_keep {
	struct zkc_keep *prev, *next;
	zkc_t *z;                   /* NULL after zkc_free */
	zkc_cb cb;
	void *arg;
	struct watch *w;            /* its one registration, set or with its read in flight; NULL: none */
	char *path;                 /* relative: held after the struct */
	uint32_t item;
	int inflight;               /* its requests not answered yet (each holds a pointer to it) */
	uint16_t busy;              /* inside cb */
	uint8_t kind;               /* enum zkc_keep_kind */
	int8_t want_event;          /* the event of the read that was lost */
	unsigned on : 1;            /* armed in this session (a new session clears it) */
	unsigned want : 1;          /* a read was lost with the connection: send it when it is back */
	unsigned want_probe : 1;    /* what was lost is the wait for a missing node (an exists) */
	unsigned dead : 1;          /* zkc_keep_free: freed when nothing holds it any more */
	unsigned reg_used : 1;      /* reg is a registration (on zkc's list) */
	struct watch reg;
};

struct zkc_multi {
	int n, cap, bad;
	size_t bytes;               /* its paths and data, and 32 a op (zkc_multi_bytes) */
	uint32_t item;              /* r->item of its answer */
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
	char *wpath;                /* M_WATCH: the path of the event (full; its session in session) */
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

/* The window: at most `window` requests at the server at once; the rest wait here, in order,
 * and go as answers come (or fail with ZCLOSING with the handle). zkc_req.c's. */
struct zkc_window {
	unsigned window;
	unsigned inflight;          /* sent on this handle, not answered */
	unsigned inflight_max;      /* the most there ever were (zkc_inflight_max) */
	unsigned inflight_ops;      /* their ops (a multi's count; ZKC_WINDOW_OPS) */
	unsigned inflight_ops_max;  /* the most there ever were (t/42 looks) */
	struct req *wait_head, *wait_tail;
	unsigned nwait;
	struct zkc_share *share;    /* multis waiting to go as one (zkc_share_due) */
	int share_inflight;         /* shared multis sent in session share_session and not answered */
	uint64_t share_session;
	int burst;                  /* ZKC_BURST requests waited at once: trim the heap when all are answered */
};

/* Connecting: the attempts, their backoff and what the log said of them; at the start, when to
 * give up. zkc.c's. */
struct zkc_conn {
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
	int ever;                   /* a session was connected once */
	unsigned start_rounds;      /* zkc_params.start_rounds */
	uint64_t start_wait_ns;     /* zkc_params.start_wait_ms */
	unsigned start_fails;       /* attempts failed before the first session (a failed resolve
	                               counts nhosts) */
	int gave_up;                /* hooks.gave_up was called */
	uint64_t started_ns;        /* zkc_start */
	unsigned seed;
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
	uint64_t errors;            /* answers that are the client's own failure (zkc_errors) */
	uint64_t expirations;       /* sessions found expired */
	struct zkc_window win;
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
	struct wtab wt;             /* the watch registrations */
	struct zkc_keep keeps;      /* list head */
	struct zkc_conn conn;
};

/* zkc.c */
char *zkc_full_path(const zkc_t *z, const char *rel);      /* malloc'd: root + rel */
const char *zkc_rel_path(const zkc_t *z, const char *full);
void zkc_push(zkc_t *z, struct msg *m);                    /* queue for the loop (any thread) */
void zkc_watch_free(zkc_t *z, struct watch *w);           /* out of the table; its keep lets go of it */
void zkc_keep_release(struct zkc_keep *k);                 /* freed if dead and nothing holds it */
void zkc_lease_from(zkc_t *z, uint64_t sent_ns, uint64_t session);

/* zkc_req.c */
int zkc_read(zkc_t *z, const struct read *rd);             /* ZOK when sent */
void zkc_on_result(zkc_t *z, struct msg *m);               /* an answer: bookkeeping, then cb or keep */
void zkc_multi_free(zkc_multi_t *m);
void zkc_window_pump(zkc_t *z);                            /* send what waits, as far as the window allows */
void zkc_share_flush(zkc_t *z);                           /* send the shared multis that wait */
int zkc_multi_add(zkc_multi_t *m, const char *path, const char *data, int len);   /* an op's index, or -1 */
void zkc_share_due(zkc_t *z);                             /* the same, unless one is in flight */
void zkc_window_fail(zkc_t *z);                            /* the handle closed: what waits ends with ZCLOSING */

/* zkc_keep.c */
void zkc_keep_answer(struct req *q, const struct zkc_res *r);
void zkc_keep_event(struct zkc_keep *k, int type);         /* its registration fired (let go already) */
void zkc_keeps_new_session(zkc_t *z);                      /* unarm every one */
void zkc_keeps_reconnected(zkc_t *z);                      /* connected: send what was lost */
void zkc_keeps_detach(zkc_t *z);                           /* zkc_free */

#endif
