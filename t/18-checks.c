/* t/18-checks.c: the invariants checked in release builds too (EJOB_CHECK). A dispatcher outcome
 * whose cookie names a fire that is no longer alive, and a job node path that would be cut, stop
 * the process with a line that says where and what, instead of touching freed memory or writing
 * another node; the normal cases go through. Each case runs in a child, as a crash would. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/base/log.h"
#include "supervisor/coord/coord_int.h"
#include "supervisor/run/fire.h"
#include "t/lib/tlib.h"
#include "t/tap.h"

/* run fn in a child with stderr in a pipe: its wait status, its stderr in buf */
static int in_child(void (*fn)(void), char *buf, size_t len)
{
	int p[2];
	if (pipe(p) < 0) BAIL_OUT("pipe");
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) BAIL_OUT("fork");
	if (!pid) {
		dup2(p[1], 2);
		close(p[0]);
		signal(SIGABRT, SIG_DFL);
		log_init("t18");
		fn();
		_exit(0);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < len && (r = read(p[0], buf + n, len - 1 - n)) > 0) n += (size_t)r;
	buf[n] = '\0';
	close(p[0]);
	int st;
	waitpid(pid, &st, 0);
	return st;
}

static void name(const fire_t *f, char *buf, size_t len) { snprintf(buf, len, "job %s", fire_job(f)); }
static const struct fire_ops ops = { .name = name, .fail_level = LL_WARN };

static void outcome_of(fire_t *f)
{
	fires_t *fs = fires_new(NULL, "127.0.0.1@-@1");
	struct disp_outcome o = {
		.cookie = (uint64_t)(uintptr_t)f, .job = "j", .item = 0, .attempt = 1, .status = FRAME_ST_OK,
		.error = "", .where = "pool#0", .final = 0,
	};
	fires_outcome(fs, &o);
}

static void live_fire(void)
{
	fires_t *fs = fires_new(NULL, "127.0.0.1@-@1");
	fire_t *f = fire_new(fs, &ops, NULL, "j", 1, 0);
	outcome_of(f);
}

static void freed_fire(void)
{
	fires_t *fs = fires_new(NULL, "127.0.0.1@-@1");
	/* a fire's memory as it is once fire_free has run (fire_t is opaque here: zeroed memory of its
	 * size and more, whose magic is cleared as a freed fire's is) */
	fire_t *f = fire_new(fs, &ops, NULL, "j", 1, 0);
	fire_free(f);
	static uint64_t freed[64];
	outcome_of((fire_t *)(void *)freed);
}

static void path_ok(void)
{
	struct cjob j = { .name = (char *)"billing" };
	char p[CJ_PATH_MAX];
	cj_path(&j, p, "/sharding/%d/running", 3);
	fprintf(stderr, "path %s\n", p);
}

static void path_too_long(void)
{
	static char longname[CJ_PATH_MAX];
	memset(longname, 'x', sizeof longname - 40);
	struct cjob j = { .name = longname };
	char p[CJ_PATH_MAX];
	cj_path(&j, p, "/sharding/%d/failovering/and/more/%s", 12345, "0123456789012345678901234567890123456789");
	fprintf(stderr, "path written: %s\n", p);
}

int main(void)
{
	tlib_init(30);
	char err[4096];
	int st = in_child(live_fire, err, sizeof err);
	ok(WIFEXITED(st) && !WEXITSTATUS(st), "an outcome of a live fire goes through (status 0x%x)", st);
	st = in_child(freed_fire, err, sizeof err);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "an outcome naming a freed fire aborts (status 0x%x)", st);
	ok(strstr(err, "internal check failed at supervisor/run/fire.c:") &&
	   strstr(err, "a dispatcher request names a fire that is not alive"), "  saying where and what (%s)", err);
	st = in_child(path_ok, err, sizeof err);
	ok(WIFEXITED(st) && !WEXITSTATUS(st) && strstr(err, "path /billing/sharding/3/running"),
	   "a job node path that fits is written (%s)", err);
	st = in_child(path_too_long, err, sizeof err);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && !strstr(err, "path written"),
	   "a path that would be cut aborts before anyone uses it (status 0x%x)", st);
	ok(strstr(err, "a job's node path fits CJ_PATH_MAX") != NULL, "  saying so");
	return done_testing();
}
