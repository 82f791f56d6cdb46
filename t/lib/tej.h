/* t/lib/tej.h: a real ElasticJob-Lite 3.0.4 instance for tests of mixed clusters.
 *
 * It runs ElasticJob's launcher (/work/shared/elasticjob/run.sh, README there): one genuine
 * Lite instance of a SCRIPT job on a ZooKeeper and namespace. The launcher is found as
 * $EJOB_ELASTICJOB, else ../shared/elasticjob/run.sh from the repository (the tests' working
 * directory), else /work/shared/elasticjob/run.sh; when none is there, tej_start fails and says
 * so (a test that needs it fails: it never skips). run.sh execs the JVM, so the process started
 * is the JVM itself, in a process group of its own that tlib kills at every exit (a failed check,
 * a bail out, the watchdog). Its log (ElasticJob's, stderr) is tlib_tmpdir()/ej-{name}.log. */
#ifndef EJOB_TEJ_H
#define EJOB_TEJ_H

#include <sys/types.h>

struct tej {
	pid_t pid;                  /* the JVM (0: not running) */
	char ip[32];                /* the ip it registers with (ip=) */
	char id[64];                /* its instance id, "{ip}@-@{pid}" */
	char log[512];              /* its log */
};

/* Start an instance `name` of job on zk/ns, with ElasticJob's own arguments: cron, items
 * (shardingTotalCount), failover, cmdline (script.command.line: the sharding context JSON is
 * its last argument), session_ms, strategy (NULL: AVG_ALLOCATION), and more "key=value" options
 * of its launcher (NULL-terminated; "ip=127.0.0.N" sets the ip, else 127.0.0.1). Waits until it
 * has scheduled the job ("EJRUN ready", at most 60 s). 0, or -1 (said why on stdout as a TAP
 * comment; the instance is killed). */
int tej_start(struct tej *e, const char *name, const char *zk, const char *ns, const char *job, const char *cron,
              int items, int failover, const char *cmdline, int session_ms, const char *strategy,
              const char *const *extra);

/* SIGTERM: ElasticJob's graceful shutdown (its instance and leader nodes removed); waits at most
 * timeout_ms, then SIGKILL. Returns the wait status. */
int tej_stop(struct tej *e, unsigned timeout_ms);

/* SIGKILL: a crash (its ephemeral nodes stay until its session expires); reaped. */
void tej_kill(struct tej *e);

/* The launcher the tests use (see above), or NULL: none is there. */
const char *tej_launcher(void);

#endif
