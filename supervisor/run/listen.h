/* supervisor/run/listen.h: listener commands (props ejob.listener.*, docs/config.md
 * "Listeners"), run by the supervisor itself on its loop, never blocking it: the command line is
 * split like a script job's (worker/script.h cmd_split), the fire's context JSON is its last
 * argument, and it runs in its own process group with stdin /dev/null (fork and exec, with
 * PR_SET_PDEATHSIG: it dies with the supervisor); its output lines go to the log. An ev_child
 * watcher reaps it; past its timeout its group gets SIGTERM, then SIGKILL LISTEN_KILL_GRACE_S
 * later, and it counts as timed out.
 *
 * The lease (lease_ms > 0): for a command that must not outlive this supervisor's say-so (afterAll:
 * another instance runs it once this one's ZooKeeper session has expired), which PR_SET_PDEATHSIG
 * does not give when the supervisor is frozen (SIGSTOP, a stuck VM, a loop blocked too long): it
 * neither dies nor kills. Then the supervisor's child is a keeper (a fork that never execs, in the
 * group, with PR_SET_PDEATHSIG) that forks and execs the command in its group and waits for its end
 * or for the supervisor: the loop sends it a byte every lease_ms / 4; lease_ms without one (or EOF,
 * the supervisor gone) and the keeper SIGKILLs the group, itself included. So the command never
 * runs more than lease_ms past the supervisor's last loop turn: lease_ms below the session timeout
 * means it is dead before the session can expire. The keeper ends as the command did (its exit
 * code, or the same signal; "(core dumped)" is not relayed), so done gets the same why as without a
 * lease; a run killed for its lease ends failed, its why LISTEN_LEASE_WHY " for N ms". The
 * command's parent ($PPID) is the keeper, not the supervisor. */
#ifndef EJOB_LISTEN_H
#define EJOB_LISTEN_H

#include <ev.h>
#include <stdint.h>
#include <string.h>

#include "conf/conf.h"
#include "supervisor/run/fire.h"

typedef struct listen listen_t;          /* the runs of one supervisor */
typedef struct listen_run listen_run_t;   /* one command running */

enum listen_result { LISTEN_OK = 0, LISTEN_FAILED, LISTEN_TIMEOUT, LISTEN__COUNT };
const char *listen_result_name(enum listen_result r);   /* "ok", "failed", "timeout" */

#define LISTEN_KILL_GRACE_S 2
/* how the why of a run killed for its lease begins: the run was cut short by this supervisor's own
 * stall, not ended by the command (a caller that hands the run over on a stall runs it again) */
#define LISTEN_LEASE_WHY "killed: the supervisor did not renew its lease"
/* A run that ended so: cut short by this supervisor's own stall, not ended (run it again). */
static inline int listen_lease_lost(enum listen_result r, const char *why)
{
	return r == LISTEN_FAILED && why && !strncmp(why, LISTEN_LEASE_WHY, sizeof LISTEN_LEASE_WHY - 1);
}

struct listen_spec {
	const char *job;
	const char *kind;           /* "before", "after", "beforeAll", "afterAll": EJOB_LISTENER, and the log's name */
	const char *cmd;            /* the command line, as script.command.line */
	const char *context;        /* the context JSON: its last argument */
	uint64_t fire_ms;           /* EJOB_FIRE_ID */
	uint64_t epoch;             /* EJOB_EPOCH */
	uint32_t timeout_s;         /* > 0 */
	unsigned takeover;          /* EJOB_LISTENER_TAKEOVER: an earlier run of it may have been cut short */
	uint32_t lease_ms;          /* > 0: run it under a lease of that many ms (above); 0: none */
};

/* done(arg, result, why, duration_us) once the command has ended (why: "exit 3", "signal 9",
 * "timed out after 60s", "cannot run it: ..."), on the loop, never inside listen_start. */
typedef void (*listen_done_fn)(void *arg, enum listen_result r, const char *why, uint64_t duration_us);

listen_t *listen_new(struct ev_loop *loop);
/* Kills (SIGKILL to its group) every command still running, without telling anyone. */
void listen_free(listen_t *ls);
/* Start the command. A command that cannot start (a bad command line, not found, no memory)
 * still ends through done, failed, from the loop. NULL only when out of memory (logged). */
listen_run_t *listen_start(listen_t *ls, const struct listen_spec *s, listen_done_fn done, void *arg);
/* Forget it: its group gets SIGKILL, done is never called. */
void listen_cancel(listen_run_t *r);

/* The context of a fire's before and after, the command's last argument (malloc'd; NULL: no
 * memory): {"jobName","taskId","shardingTotalCount","jobParameter","shardingItemParameters":
 * {"0":"a",...} ("" for an item without one),"fireId","epoch","source"} for the fire's items here
 * (t->items[0..n), instance_id in the taskId) and, with after, "succeeded":[items] and
 * "failed":[items] from t->done. Strings escaped as Gson does (script jobs' context). */
char *listen_context_json(const fire_t *t, const conf_job_t *cj, const char *instance_id, uint64_t epoch, int after);
/* The context of a once-per-fire listener (beforeAll, afterAll), which stands for no instance's
 * items: {"jobName","shardingTotalCount","jobParameter","fireId","epoch","takeover"} (malloc'd;
 * NULL: no memory). */
char *listen_once_context_json(const conf_job_t *cj, uint32_t total, uint64_t fire_ms, uint64_t epoch, int takeover);

#endif
