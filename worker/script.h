/* worker/script.h: script jobs (docs/worker.md, "Running an item", script).
 *
 * Pure parts: the ElasticJob sharding-context JSON, the item's environment (the command line
 * is split by ipc/cmdline.h). The runner
 * forks and execs the command in its own process group and forwards its output. */
#ifndef EJOB_SCRIPT_H
#define EJOB_SCRIPT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ipc/cmdline.h"
#include "ipc/json.h"
#include "ipc/logline.h"
#include "worker/ejob.h"
#include "worker/outcome.h"


/* Append ElasticJob's sharding-context JSON for ctx to b, as its ScriptJobExecutor passes it
 * (Gson defaults): {"jobName":...,"taskId":...,"shardingTotalCount":N,"jobParameter":...,
 * "shardingItem":N,"shardingParameter":...}; "shardingParameter" is left out when the item has
 * no parameter (item_param ""), as Gson leaves out null fields. 0, or -1 with errno ENOMEM. */
int script_context_json(const ejob_context *ctx, json_buf_t *b);

/* The item's environment: base (NULL-terminated "NAME=value" list) without EJOB_SUPERVISOR_PID,
 * EJOB_WORKER_INDEX and the names set here, plus EJOB_JOB, EJOB_TASK_ID, EJOB_ITEM, EJOB_TOTAL,
 * EJOB_EPOCH, EJOB_FIRE_ID, EJOB_ATTEMPT, EJOB_DEADLINE_MS, EJOB_JOB_PARAMETER and
 * EJOB_SHARDING_PARAMETER (the parameters raw, "" when none). One malloc'd block (free(*out)).
 * 0, or -1 with errno ENOMEM. */
int script_env(char *const *base, const ejob_context *ctx, char ***out);


#define SCRIPT_LINE_MAX 4096u   /* bytes of one output line; longer lines are cut into pieces */
#define SCRIPT_TICK_MS  500     /* default period of the tick callback */
/* The caps ejob-worker applies without --script-output-max-lines/-bytes (docs/config.md,
 * supervisor.scriptOutputMaxLines/Bytes have the same defaults). */
#define SCRIPT_OUTPUT_MAX_LINES 1000u
#define SCRIPT_OUTPUT_MAX_BYTES 65536u

struct script_spec {
	char *const *argv;          /* argv[0]: a path (with '/') or a name looked up in $PATH */
	char *const *env;           /* the complete environment of the child */
	/* Output lines are written to log_fd in the supervisor's log form (ipc/logline.h), one
	 * write(2) each: "<UTC time> ejob-worker[<pid>] INFO <tag> stdout: <text>\n" (and stderr)
	 * in text, or a JSON object with the job, item, attempt and stream. */
	const struct logline_job *job;   /* the job's name, item, attempt and text tag */
	unsigned log_mode;          /* LOGLINE_JSON, LOGLINE_JOURNAL */
	int log_fd;                 /* where output lines go */
	/* At most this many lines (pieces of long ones count) and bytes of the script's output
	 * (newlines included), stdout and stderr together, are written per run; the rest is read
	 * and dropped, and one WARN line at the end says how many lines and bytes were not
	 * written. 0: no limit. */
	uint64_t max_lines, max_bytes;
	int wake_fd;                /* readable means "call tick now" (an eventfd, drained here); -1 */
	pthread_mutex_t *fork_lock; /* held from before fork until started() returned; may be NULL */
	/* The child's process group (its pid) exists: publish it. Called again with 0 once the
	 * child is reaped. Called with fork_lock held. */
	void (*started)(void *arg, pid_t pgid);
	/* Called at least every *next_ms ms while the child runs (and on wake_fd): stamp a
	 * heartbeat; return 0, or a cancel reason (enum ejob_cancel): the group then gets SIGTERM
	 * (once) and the item ends as timeout / cancelled. May lower *next_ms. */
	int (*tick)(void *arg, int *next_ms);
	void *arg;
};

/* Run the script to its end and say how it ended: exit 0 ok; exit n failed (code n); killed by
 * signal s crashed (sig s); a cancel asked for: timeout (EJOB_CANCEL_TIMEOUT) or cancelled,
 * whatever the exit, with code and signal as they were; not started: error with the reason
 * ("exec examples/hello.sh: No such file or directory"). The child gets its own process group,
 * PR_SET_PDEATHSIG(SIGKILL), stdin /dev/null, stdout and stderr on pipes that are forwarded
 * to log_fd line by line, no other fds, an empty signal mask and default dispositions. */
void script_run(const struct script_spec *sp, struct outcome *out);

#endif
