/* t/lib/tclu.h: a cluster of real supervisors on one real ZooKeeper, as the tests of what happens
 * at the sizes users run need it: N supervisors, each "on its own machine" (--ip 127.0.0.2, .3,
 * ...), all with the same jobs; killing several of them (a crashed machine: the supervisor, its
 * workers and their items, SIGKILL), staggered or at once; and waiting for what ZooKeeper shows.
 *
 * Jobs' scripts write run records "FIRE_ID ITEM TASK_ID" (one line per item run, t/lib/tsup.h
 * tsup_fires_exact) to tclu_runs(c, job), with tsup_rec_script(). */
#ifndef EJOB_TCLU_H
#define EJOB_TCLU_H

#include <sys/types.h>
#include <zookeeper/zookeeper.h>

#include "t/lib/tsup.h"

#define TCLU_MAX 24

struct tclu {
	const char *connect;        /* ZooKeeper's connect string */
	char ns[64];
	int n;
	struct tsup sup[TCLU_MAX];
	char ip[TCLU_MAX][32];      /* 127.0.0.{k+2} */
	char id[TCLU_MAX][64];      /* instance id, "{ip}@-@{pid}" */
	int dead[TCLU_MAX];
	char rec[600];              /* the record script */
	zhandle_t *zh;              /* the test's own ZooKeeper session */
};

/* Start n supervisors on namespace ns. `jobs_yaml` is the jobs: section's body (indented by
 * two spaces), in which "@REC@" becomes the record script and "@OUT@" the runs file's stem
 * (tclu_runs(c, job) is "@OUT@.job"), e.g.
 *     "  a:\n    type: script\n    cron: ...\n    props: {script.command.line: \"@REC@ @OUT@.a\"}\n".
 * session_ms: regCenter.sessionTimeoutMilliseconds. Each has `workers` workers. Waits until every
 * supervisor has registered every one of the njobs jobs named in jobs[] (instances/ in
 * ZooKeeper). 0, or -1 (said why). */
int tclu_start(struct tclu *c, const char *connect, const char *ns, int n, int workers, int session_ms,
               const char *jobs_yaml, const char *const *jobs, int njobs);

/* The runs file of a job. */
const char *tclu_runs(const struct tclu *c, const char *job, char *buf, size_t len);

/* What the supervisors' history files (supervisor.history, @DIR@/history.jsonl) say of a job's
 * runs, as a runs file: "FIRE ITEM TASK_ID" for each final attempt and each fire id it stands for
 * (its "fires": a catch-up's are every fire it ran for), written to a file of the test's; its
 * path. A run that names no fires (a failover's) counts for its own fire id. */
const char *tclu_history_runs(const struct tclu *c, const char *job, char *buf, size_t len);

/* SIGKILL supervisor k and every process under it (a crashed machine), and reap it. */
void tclu_kill(struct tclu *c, int k);

/* Index of the supervisor that leads job (leader/election/instance), -1 if none. */
int tclu_leader(struct tclu *c, const char *job);

/* Wait until every one of jobs[] has exactly `want` children in instances/ (the expired sessions'
 * nodes gone). 1 if so within timeout_ms. */
int tclu_wait_instances(struct tclu *c, const char *const *jobs, int njobs, int want, unsigned timeout_ms);

/* SIGTERM every live supervisor and wait; returns how many did not exit 0. */
int tclu_stop(struct tclu *c);

#endif
