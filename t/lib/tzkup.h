/* t/lib/tzkup.h: the preamble the ZooKeeper tests share, and waits on the state ZooKeeper shows.
 *
 * A test starts one standalone ZooKeeper and opens its own session to it (tzkup_start), writes
 * each supervisor's config from the parts that are the test's own (tzkup_config: the supervisor:
 * keys and the jobs; regCenter points at the server, with the test's namespace and session
 * timeout) and starts each as a host of its own (tzkup_run: --ip, so t->id is its instance id).
 * Every process is tracked by t/lib/tlib: killed at exit, after a BAIL_OUT or a failed check that
 * ends the test, on a fatal signal or when the watchdog fires; the ZooKeeper JVM also dies with
 * the test (PR_SET_PDEATHSIG).
 *
 * The waits read ZooKeeper under /{ns}/{job} (ElasticJob's layout, docs/DESIGN.md): registered,
 * leading, owning items, a new epoch, a fire's item ended. A test waits for these, not for what a
 * supervisor logs; the log is for what only the log says (why a fire does not run, ...). */
#ifndef EJOB_TZKUP_H
#define EJOB_TZKUP_H

#include <stdint.h>
#include <zookeeper/zookeeper.h>

#include "t/lib/tsup.h"
#include "t/lib/tzk.h"

struct tzkup {
	struct tzk_server zk;       /* the server tzkup_start started */
	char connect[256];          /* regCenter.serverLists of the configs written here */
	char ns[64];                /* regCenter.namespace */
	int session_ms;             /* regCenter.sessionTimeoutMilliseconds */
	const char *regcenter;      /* more regCenter keys for the configs written while it is set, e.g.
	                               "digest: \"u:p\"" (NULL: none) */
	zhandle_t *zh;              /* the test's own session */
};

/* Start a standalone ZooKeeper (tickTime tick_ms) in tlib_tmpdir()/zk and open the test's session
 * to it; the configs written here use namespace ns and session_ms. BAIL_OUT if either fails. */
void tzkup_start(struct tzkup *u, unsigned tick_ms, const char *ns, int session_ms);

/* The same on servers the test started itself (an ensemble, a server under libfaketime). */
void tzkup_on(struct tzkup *u, const char *connect, const char *ns, int session_ms);

/* Write t's config (tsup_config, in tlib_tmpdir()/name):
 *     regCenter: {serverLists: "CONNECT", namespace: NS, sessionTimeoutMilliseconds: MS[, REGCENTER]}
 *     supervisor: {attachSocket: "@SOCK@"[, SUPERVISOR]}
 *     jobs:
 *     JOBS
 * supervisor: more supervisor keys, e.g. "workers: 2, killGraceSeconds: 1" (NULL: none); jobs:
 * the jobs: section's body, each job indented by two spaces. */
void tzkup_config(const struct tzkup *u, struct tsup *t, const char *name, const char *supervisor, const char *jobs);

/* The same for a configured (maybe running) supervisor: its config file replaced at once
 * (tsup_rewrite), e.g. before a SIGHUP. */
void tzkup_reconfig(const struct tzkup *u, struct tsup *t, const char *supervisor, const char *jobs);

/* Start t as the host ip (--ip ip): t->id is its instance id "{ip}@-@{pid}". BAIL_OUT if it does
 * not start. */
void tzkup_run(struct tzkup *u, struct tsup *t, const char *ip);

/* n supervisors s[0..n) named s0, s1, ... on hosts 127.0.0.1, 127.0.0.2, ..., one config
 * (tzkup_config), each started (tzkup_run). */
void tzkup_run_n(struct tzkup *u, struct tsup *s, int n, const char *supervisor, const char *jobs);

/* The test's session closed, the server SIGKILLed (at the end of a test; the exit does it too). */
void tzkup_end(struct tzkup *u);

/* "/{ns}/{job}/{rel}" with rel printf-style ("" for the job's node), in one of 8 static buffers
 * used in turn: a path to pass on at once. */
const char *tzkup_path(const struct tzkup *u, const char *job, const char *rel, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- the state of a job, read from ZooKeeper ---- */

/* The session that holds instances/{id} (its ephemeralOwner), 0 if the node is not there. */
int64_t tzkup_session(const struct tzkup *u, const char *job, const char *id);

/* Until instances/{id} exists, held by a session other than not_session (0: any): registered, or
 * registered again in a new session. 1 if so within timeout_ms. */
int tzkup_wait_registered(const struct tzkup *u, const char *job, const char *id, int64_t not_session,
                          unsigned timeout_ms);

/* Until leader/election/instance names id. 1 if so within timeout_ms. */
int tzkup_wait_leader(const struct tzkup *u, const char *job, const char *id, unsigned timeout_ms);

/* How many of items 0 .. total-1 are assigned to id (sharding/{i}/instance). */
int tzkup_owned(const struct tzkup *u, const char *job, int total, const char *id);

/* Until exactly count of items 0 .. total-1 are id's and no reshard is pending
 * (leader/sharding/necessary absent). 1 if so within timeout_ms. */
int tzkup_wait_owned(const struct tzkup *u, const char *job, int total, const char *id, int count,
                     unsigned timeout_ms);

/* The epoch of the assignment in force: the sharding node's mzxid (what a job sees as
 * EJOB_EPOCH), 0 if the job was never sharded (the node only created). */
uint64_t tzkup_epoch(const struct tzkup *u, const char *job);

/* Until the job is sharded under an epoch other than not_epoch (0: any) and no reshard is pending.
 * 1 if so within timeout_ms. */
int tzkup_wait_epoch(const struct tzkup *u, const char *job, uint64_t not_epoch, unsigned timeout_ms);

/* Until item's run has ended as ElasticJob's monitorExecution shows it: sharding/{item}/running
 * gone, sharding/{item}/completed there. 1 if so within timeout_ms. */
int tzkup_wait_ended(const struct tzkup *u, const char *job, int item, unsigned timeout_ms);

/* tools/ejobctl ARGS (up to 24, NULL-terminated) --zk CONNECT --namespace NS: its exit status (-1:
 * killed by a signal); its stdout and stderr in *out and *err (malloc'd, "" when empty; what they
 * held is freed first). With EJOB_TEST_SHOW set, each command and its output go to diag(), as an
 * operator would see them (for the docs). */
int tzkup_ctl(const struct tzkup *u, char **out, char **err, const char *first, ...);

/* A node's data as a string, for comparisons: "(none)" when there is no node, "(null)" when it
 * holds no data. Valid until the next call. */
const char *tzkup_data(const struct tzkup *u, const char *path);
/* The node is not there (ZNONODE). */
int tzkup_missing(const struct tzkup *u, const char *path);

/* ---- playing ElasticJob's leader (t/59, t/68, t/126): its writes, with the plain client ---- */

/* path created (data NULL: no data), or there already; BAIL_OUT otherwise */
void tzkup_mk(const struct tzkup *u, const char *path, const char *data, int flags);

/* /{ns}/{job} (its data root_data: "SCRIPT", as ElasticJob's ConfigurationService writes it),
 * leader/election/instance naming id and instances/{id}, both ephemerals of the test's session:
 * an ElasticJob instance that got there first and leads. */
void tzkup_ej_leader(const struct tzkup *u, const char *job, const char *root_data, const char *id);

/* ElasticJob's sharding transaction on the job's n items: (with again: delete and) create each
 * sharding/{i}/instance with owner[i], delete leader/sharding/necessary, and with raise_again
 * create it again in the same transaction. zoo_multi's result. */
int tzkup_ej_shard(const struct tzkup *u, const char *job, const char *const *owner, int n, int again, int raise_again);

#endif
