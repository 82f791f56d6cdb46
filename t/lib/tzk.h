/* t/lib/tzk.h: a real ZooKeeper 3.8 server (Debian's package) for tests, and a small synchronous
 * client to look at it.
 *
 * Servers: a standalone server or an ensemble of up to TZK_MAX_MEMBERS, each member a JVM in its
 * own directory under tlib_tmpdir() (zoo.cfg, data/, zookeeper.log), listening on 127.0.0.1 only,
 * on ports below the kernel's ephemeral range (so no outgoing connection can take one between
 * choosing it and the JVM's bind). Every JVM is tracked by t/lib/tlib (SIGKILLed at exit, on a
 * fatal signal or when the watchdog fires) and gets PR_SET_PDEATHSIG=SIGKILL, so not even a
 * SIGKILLed test leaves one behind. Fork them from the main thread (PDEATHSIG follows the
 * thread that forked).
 *
 * A server is ready when its `srvr` four-letter word reports a Mode (standalone, leader or
 * follower): `ruok` says imok as soon as the port is open, before the data is loaded and, in an
 * ensemble, before there is a quorum. (ZooKeeper 3.8.0 also leaves a four-letter word that
 * comes before its database is loaded without an end: the connection stays open. The wait asks
 * with a short timeout, again and again.)
 *
 * Client: sync zoo_* calls, fine in a test (never in the supervisor's loop). Calls return
 * ZooKeeper's codes (ZOK, ZNONODE, ZNOAUTH, ...). The C client's log goes to
 * tlib_tmpdir()/zk-client.log, not to the test's stderr.
 *
 * Failures (a server that does not start, a client that does not connect) are explained on
 * stderr as TAP comments, with the tail of the server's log.
 *
 * Java is /usr/bin/java (else the first in $PATH), the class path /usr/share/java/zookeeper.jar
 * plus slf4j-simple.jar for a log; $EJOB_JAVA and $EJOB_ZK_CLASSPATH override them. */
#ifndef EJOB_TZK_H
#define EJOB_TZK_H

#include <stdint.h>
#include <sys/types.h>
#include <zookeeper/zookeeper.h>

#define TZK_MAX_MEMBERS 5

/* Everything optional: zero means the default shown. */
struct tzk_opts {
	unsigned tick_ms;          /* tickTime: 200. Sessions are negotiated into [min, max]: */
	unsigned min_session_ms;   /* minSessionTimeout: ZooKeeper's 2 x tick */
	unsigned max_session_ms;   /* maxSessionTimeout: ZooKeeper's 20 x tick */
	unsigned init_limit;       /* ensemble initLimit, in ticks: 10 s worth (at least 10) */
	unsigned sync_limit;       /* ensemble syncLimit, in ticks: 2 s worth (at least 5); a paused
	                              leader is given up after sync_limit x tick */
	const char *extra_cfg;     /* more zoo.cfg lines, appended verbatim ("key=value\n...") */
	unsigned heap_mb;          /* the JVM's -Xmx: 128 (10,000 jobs' nodes need more: bench/scale) */
	int server_jvm;            /* the JVM as zkServer.sh starts it (C2, the default G1 collector,
	                              the whole heap from the start), not one that starts fast and stays
	                              small: at a million nodes (bench/scale, 50,000 jobs) the serial
	                              collector's full collections stopped the server for 3 s */
};

enum tzk_mode { TZK_DOWN = 0, TZK_NOT_SERVING, TZK_STANDALONE, TZK_LEADER, TZK_FOLLOWER };

struct tzk_server {
	int id;                    /* myid in an ensemble, 0 for a standalone server */
	pid_t pid;                 /* the JVM; 0 when stopped (reaped) */
	int client_port;
	int quorum_port, election_port;   /* ensemble members only */
	unsigned tick_ms;
	unsigned heap_mb;          /* the JVM's -Xmx, in MB */
	int server_jvm;            /* tzk_opts' */
	char connect[32];          /* "127.0.0.1:PORT", the same across restarts */
	char dir[512];             /* its own directory */
	char cfg[600];             /* DIR/zoo.cfg */
	char log[600];             /* DIR/zookeeper.log: the JVM's stdout and stderr, slf4j-simple INFO */
	int status;                /* wait status of the last JVM that ended */
	uint64_t spawned_ms;       /* tlib_now_ms() at the last spawn */
	uint64_t ready_ms;         /* how long the last start took to be ready (0 if it was not) */
	int quorum;                /* member of an ensemble: readiness needs leader or follower */
};

struct tzk_ensemble {
	int n;
	struct tzk_server m[TZK_MAX_MEMBERS];   /* m[i].id == i + 1 */
	char connect[256];         /* "127.0.0.1:P1,127.0.0.1:P2,..." */
};

/* ---- one standalone server ---- */

/* Write DIR=tlib_tmpdir()/name with zoo.cfg and start ZooKeeperServerMain; wait until it serves
 * (at most timeout_ms after the start). 0, or -1 with the reason (and its log's tail) on
 * stderr. If the port was taken in the meantime, starts again on another. */
int tzk_start(struct tzk_server *z, const char *name, const struct tzk_opts *o, unsigned timeout_ms);

/* The same in two halves, so that a test can do other setup while the JVM starts; the wait's
 * timeout counts from the spawn. A JVM that ends before it serves fails the wait at once. */
int tzk_spawn(struct tzk_server *z, const char *name, const struct tzk_opts *o);
int tzk_wait_ready(struct tzk_server *z, unsigned timeout_ms);

/* Send sig (SIGKILL: a crash; SIGTERM: a clean shutdown) and reap it, waiting at most
 * timeout_ms before SIGKILL. A paused server is continued after sig so that it can act on it.
 * Returns its wait status, -1 if it had to be SIGKILLed; 0 if it was not running. */
int tzk_stop(struct tzk_server *z, int sig, unsigned timeout_ms);

/* Start a stopped server again: same directory, data and port(s), so the same connect string.
 * Waits until it serves (for a member: until it has joined a quorum). 0 or -1. */
int tzk_restart(struct tzk_server *z, unsigned timeout_ms);

/* SIGSTOP / SIGCONT the JVM: a frozen server (clients see no answer, no connection reset). */
int tzk_pause(struct tzk_server *z);
int tzk_resume(struct tzk_server *z);

/* Its JVM exists and is not a zombie (it may be paused). */
int tzk_alive(const struct tzk_server *z);

/* A four-letter word (ruok, srvr, stat, mntr, cons, dump, ...): its reply, malloc'd and
 * NUL-terminated, or NULL (errno set) if there is none within timeout_ms. */
char *tzk_4lw(const struct tzk_server *z, const char *cmd, unsigned timeout_ms);
char *tzk_4lw_port(int port, const char *cmd, unsigned timeout_ms);

/* What `srvr` says now: TZK_DOWN if there is no answer. */
enum tzk_mode tzk_mode(const struct tzk_server *z);
const char *tzk_mode_name(enum tzk_mode m);

/* A loopback TCP port that is free now, below the ephemeral range, not handed out before by this
 * process. -1 if none was found. */
int tzk_free_port(void);

/* ---- an ensemble ---- */

/* n (1..TZK_MAX_MEMBERS) QuorumPeerMain members in tlib_tmpdir()/name/zkN; waits until every one
 * is leader or follower. 0 or -1. */
int tzk_ensemble_start(struct tzk_ensemble *e, const char *name, int n, const struct tzk_opts *o,
                       unsigned timeout_ms);

/* Wait until every running member serves as leader or follower, with exactly one leader, and at
 * least a majority of the n is running. 0 or -1. */
int tzk_ensemble_wait_quorum(struct tzk_ensemble *e, unsigned timeout_ms);

/* Index in m[] of the member that says it is the leader, -1 if none does. */
int tzk_ensemble_leader(const struct tzk_ensemble *e);

/* tzk_stop on every running member. */
void tzk_ensemble_stop(struct tzk_ensemble *e, int sig, unsigned timeout_ms);

/* ---- a synchronous client ---- */

/* Connect (session timeout requested: session_ms), add digest auth ("user:password") if given,
 * and wait until connected (and the auth answered), at most timeout_ms. NULL on failure. */
zhandle_t *tzk_connect(const char *hosts, unsigned session_ms, const char *digest, unsigned timeout_ms);
void tzk_close(zhandle_t *zh);

/* Wait until zoo_state() is state (ZOO_CONNECTED_STATE, ZOO_EXPIRED_SESSION_STATE, ...). 1 if so. */
int tzk_wait_state(zhandle_t *zh, int state, unsigned timeout_ms);

/* The session timeout the server granted (ms). */
int tzk_session_ms(zhandle_t *zh);

/* Data of a node: *data malloc'd and NUL-terminated, NULL for a node with null data (then
 * st->dataLength is 0, as for empty data). data and st may be NULL. */
int tzk_get(zhandle_t *zh, const char *path, char **data, struct Stat *st);

/* ZOK if it exists, ZNONODE if not. st may be NULL. */
int tzk_exists(zhandle_t *zh, const char *path, struct Stat *st);

/* Wait until the node exists (want=1) or not (want=0). 1 if it did within timeout_ms. */
int tzk_wait_exists(zhandle_t *zh, const char *path, int want, unsigned timeout_ms);

/* Wait until the node's data is want (NULL: until it exists, with any data). 1 if so within
 * timeout_ms. */
int tzk_wait_data(zhandle_t *zh, const char *path, const char *want, unsigned timeout_ms);

/* Children, sorted (strcmp). Free with deallocate_String_vector(). */
int tzk_children(zhandle_t *zh, const char *path, struct String_vector *out);
/* The same joined with commas ("0,1,10,2"), malloc'd; NULL on error (and *rc set if rc). */
char *tzk_ls(zhandle_t *zh, const char *path, int *rc);

/* Create path with data (a C string; NULL: null data), creating missing parents (persistent,
 * empty data, the same acl). flags: 0, ZOO_EPHEMERAL, ZOO_SEQUENCE, ... acl NULL: open. */
int tzk_create(zhandle_t *zh, const char *path, const char *data, int flags, const struct ACL_vector *acl);

/* Set data (any version). */
int tzk_set(zhandle_t *zh, const char *path, const char *data);

/* Delete path and everything under it; ZOK if it is gone (or was never there). "/": everything
 * but /zookeeper. */
int tzk_delete_r(zhandle_t *zh, const char *path);

/* The subtree at path as text, malloc'd: one line per node, depth first, children sorted:
 *     /job/config = DATA          a persistent node
 *     /job/instances/x [E] = DATA an ephemeral one
 *     /job/leader                 a node with null data (no " = "; empty data is "PATH = ")
 * DATA is escaped to one line: \\ \n \r \t, other bytes below 0x20 and 0x7f as \xHH.
 * Dumping "/" leaves out /zookeeper. NULL if path does not exist (or on error: *rc if rc). */
char *tzk_dump(zhandle_t *zh, const char *path, int *rc);

#endif
