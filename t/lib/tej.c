/* t/lib/tej.c: a real ElasticJob-Lite 3.0.4 instance for tests (tej.h). */
#include "t/lib/tej.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"

const char *tej_launcher(void)
{
	static const char *const where[] = { "../shared/elasticjob/run.sh", "/work/shared/elasticjob/run.sh" };
	const char *env = getenv("EJOB_ELASTICJOB");
	if (env && *env) return access(env, X_OK) == 0 ? env : NULL;
	for (size_t i = 0; i < sizeof where / sizeof where[0]; i++)
		if (access(where[i], X_OK) == 0) return where[i];
	return NULL;
}

int tej_start(struct tej *e, const char *name, const char *zk, const char *ns, const char *job, const char *cron,
              int items, int failover, const char *cmdline, int session_ms, const char *strategy,
              const char *const *extra)
{
	memset(e, 0, sizeof *e);
	const char *run = tej_launcher();
	if (!run) {
		const char *env = getenv("EJOB_ELASTICJOB");
		printf("# ElasticJob's launcher is not there: %s%s%s; ../shared/elasticjob/run.sh (from the repository) and "
		       "/work/shared/elasticjob/run.sh are missing too. Set EJOB_ELASTICJOB to ElasticJob-Lite 3.0.4's "
		       "run.sh (shared/elasticjob)\n", env && *env ? "EJOB_ELASTICJOB=" : "EJOB_ELASTICJOB is unset",
		       env && *env ? env : "", env && *env ? " is not executable" : "");
		return -1;
	}
	snprintf(e->ip, sizeof e->ip, "127.0.0.1");
	const char *argv[64];
	char nitems[16], fo[8], sess[16], ipopt[48] = "";
	snprintf(nitems, sizeof nitems, "%d", items);
	snprintf(fo, sizeof fo, "%s", failover ? "true" : "false");
	snprintf(sess, sizeof sess, "%d", session_ms);
	int n = 0;
	argv[n++] = run;
	argv[n++] = zk;
	argv[n++] = ns;
	argv[n++] = job;
	argv[n++] = cron;
	argv[n++] = nitems;
	argv[n++] = fo;
	argv[n++] = cmdline;
	argv[n++] = sess;
	argv[n++] = strategy && *strategy ? strategy : "-";
	for (int i = 0; extra && extra[i] && n < 60; i++) {
		if (!strncmp(extra[i], "ip=", 3)) snprintf(e->ip, sizeof e->ip, "%s", extra[i] + 3);
		argv[n++] = extra[i];
	}
	int has_ip = 0;
	for (int i = 0; extra && extra[i]; i++) has_ip |= !strncmp(extra[i], "ip=", 3);
	if (!has_ip) {              /* ElasticJob would take a non-loopback address of the machine */
		snprintf(ipopt, sizeof ipopt, "ip=%s", e->ip);
		argv[n++] = ipopt;
	}
	argv[n] = NULL;
	snprintf(e->log, sizeof e->log, "%s/ej-%s.log", tlib_tmpdir(), name);
	int fd = open(e->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		printf("# tej: %s: %s\n", e->log, strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		printf("# tej: fork: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);          /* the JVM and anything it starts: one group, killed as one */
		int in = open("/dev/null", O_RDONLY);
		if (in >= 0) dup2(in, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv(run, (char *const *)argv);
		fprintf(stderr, "tej: exec %s: %s\n", run, strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	tlib_track_group(pid);
	close(fd);
	e->pid = pid;
	snprintf(e->id, sizeof e->id, "%s@-@%d", e->ip, (int)pid);   /* run.sh execs java: the same pid */
	uint64_t end = tlib_now_ms() + 60000;
	while (tlib_now_ms() < end) {
		char *t = tsup_slurp(e->log);
		int ready = t && strstr(t, "EJRUN ready");
		free(t);
		if (ready) return 0;
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			tlib_untrack(pid);
			e->pid = 0;
			printf("# tej: ElasticJob instance %s (%s) ended before it was ready (status 0x%x); its log: %s\n", name, run, st,
			       e->log);
			return -1;
		}
		usleep(100000);
	}
	printf("# tej: ElasticJob instance %s not ready in 60 s; its log: %s\n", name, e->log);
	tej_kill(e);
	return -1;
}

static int reap(struct tej *e, unsigned timeout_ms)
{
	int st = -1;
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		pid_t r = waitpid(e->pid, &st, WNOHANG);
		if (r == e->pid || (r < 0 && errno == ECHILD)) break;
		if (tlib_now_ms() >= end) {
			kill(-e->pid, SIGKILL);
			waitpid(e->pid, &st, 0);
			break;
		}
		usleep(20000);
	}
	kill(-e->pid, SIGKILL);     /* whatever it started */
	tlib_untrack(e->pid);
	e->pid = 0;
	return st;
}

int tej_stop(struct tej *e, unsigned timeout_ms)
{
	if (e->pid <= 0) return -1;
	kill(e->pid, SIGTERM);
	return reap(e, timeout_ms);
}

void tej_kill(struct tej *e)
{
	if (e->pid <= 0) return;
	kill(-e->pid, SIGKILL);
	reap(e, 5000);
}
