/* t/lib/tbrowser.c: see tbrowser.h */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tbuild.h"
#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"
#include "t/lib/tbrowser.h"

#define PYTHON "/usr/bin/python3"

void tbrowser_require(void)
{
	const char *miss = access("/usr/bin/chromium", X_OK) ? "/usr/bin/chromium (package chromium)"
	                   : access("/usr/bin/chromedriver", X_OK) ? "/usr/bin/chromedriver (package chromium-driver)"
	                   : access(PYTHON, X_OK) ? PYTHON " (package python3)" : NULL;
	if (!miss) {
		const char *argv[] = { PYTHON, "-c", "import selenium.webdriver", NULL };
		char *out = NULL, *err = NULL;
		int st = tlib_run(argv, &out, &err);
		if (st != 0) miss = "selenium for " PYTHON " (package python3-selenium)";
		free(out), free(err);
	}
	if (miss) BAIL_OUT("the console's tests run a real headless Chromium: %s is missing; tools/install-deps installs it", miss);
}

/* a line of the driver's TAP: relayed through check() */
static int relay(const char *l, tbrowser_check check, int *failed, int *bailed)
{
	const char *name;
	if (!strncmp(l, "Bail out!", 9)) {
		char why[1200];
		snprintf(why, sizeof why, "the driver bailed out:%s", l + 9);
		check(0, why, NULL);
		(*failed)++;
		*bailed = 1;
		return 1;
	}
	int pass = !strncmp(l, "ok", 2);
	if (!pass && strncmp(l, "not ok", 6)) return 0;
	name = l + (pass ? 2 : 6);
	while (*name == ' ' || (*name >= '0' && *name <= '9')) name++;
	if (*name == '-') name++;
	while (*name == ' ') name++;
	const char *sk = strstr(name, " # SKIP ");
	if (pass && sk) {
		check(1, NULL, sk + 8);
		return 1;
	}
	check(pass, name, NULL);
	if (!pass) (*failed)++;
	return 1;
}

int tbrowser_run_(const char *driver, const char *const *env, tbrowser_act act, void *arg, unsigned timeout_s,
                  tbrowser_check check)
{
	int to[2], from[2];
	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) BAIL_OUT("pipe2: %s", strerror(errno));
	mkdir("build/screenshots", 0755);
	char shots[1200], tmp[700], cwd[512];
	snprintf(shots, sizeof shots, "EJOB_SHOTS=%s/build/screenshots", getcwd(cwd, sizeof cwd) ? cwd : ".");
	snprintf(tmp, sizeof tmp, "EJOB_TMP=%s", tlib_tmpdir());
	pid_t pid = fork();
	if (pid < 0) BAIL_OUT("fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		dup2(to[0], 0);
		dup2(from[1], 1);
		putenv(shots);
		putenv(tmp);
		for (int i = 0; env && env[i]; i++) putenv((char *)env[i]);
		setenv("PYTHONUNBUFFERED", "1", 1);
		setenv("PYTHONDONTWRITEBYTECODE", "1", 1);   /* no __pycache__ in the source tree */
		execl(PYTHON, PYTHON, driver, (char *)NULL);
		fprintf(stderr, "exec %s %s: %s\n", PYTHON, driver, strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	tlib_track_group(pid);
	close(to[0]);
	close(from[1]);
	FILE *in = fdopen(to[1], "w");
	if (!in) BAIL_OUT("fdopen failed");

	int failed = 0, bailed = 0, timedout = 0;
	char buf[65536];
	size_t have = 0;
	uint64_t end = tlib_now_ms() + (uint64_t)timeout_s * 1000;
	for (;;) {
		uint64_t now = tlib_now_ms();
		if (now >= end) {
			timedout = 1;
			break;
		}
		struct pollfd p = { from[0], POLLIN, 0 };
		int n = poll(&p, 1, (int)(end - now < 1000 ? end - now : 1000));
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) continue;
		ssize_t k = read(from[0], buf + have, sizeof buf - 1 - have);
		if (k < 0 && errno == EINTR) continue;
		if (k <= 0) break;
		have += (size_t)k;
		buf[have] = 0;
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = 0;
			if (!strncmp(line, "@ ", 2)) {
				const char *answer = act ? act(arg, line + 2) : "no actions here";
				fprintf(in, "%s\n", answer ? answer : "");
				fflush(in);
			} else if (!relay(line, check, &failed, &bailed) && line[0]) {
				printf("# %s\n", line);   /* what it printed that is no check */
			}
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof buf - 1) have = 0;   /* a line longer than the buffer: dropped */
		if (bailed) break;
	}
	fclose(in);
	close(from[0]);
	int st = 0;
	if (timedout || bailed) {
		kill(-pid, SIGKILL);
		waitpid(pid, &st, 0);
		if (timedout) {
			char why[300];
			snprintf(why, sizeof why, "the driver %s ended within %u s (it was killed, and its browser)", driver, timeout_s);
			check(0, why, NULL);
			failed++;
		}
	} else {
		waitpid(pid, &st, 0);
		/* chromium's children that outlived chromedriver (none should) */
		kill(-pid, SIGKILL);
		if ((!WIFEXITED(st) || WEXITSTATUS(st)) && !failed) {
			char why[300];
			snprintf(why, sizeof why, "the driver %s ended well (it ended with %s %d)", driver,
			         WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
			check(0, why, NULL);
			failed++;
		}
	}
	tlib_untrack(pid);
	fflush(stdout);
	return failed;
}

/* ---- the console tests' cluster: serve with three users, the drivers' environment ----------- */

#define TB_USERS "adm:adm-pass:admin oper:oper-pass:operator view:view-pass:viewer"

void tbrowser_serve(struct tserve *sv, const struct tzkup *u)
{
	char auth[600], line[2048];
	snprintf(auth, sizeof auth, "%s/users", tlib_tmpdir());
	char *ha = tserve_hash("adm-pass"), *ho = tserve_hash("oper-pass"), *hv = tserve_hash("view-pass");
	snprintf(line, sizeof line, "adm:%s:admin\noper:%s:operator\nview:%s:viewer\n", ha, ho, hv);
	tlib_write_file(auth, line, strlen(line));
	free(ha), free(ho), free(hv);
	const char *args[] = { "--zk", u->connect, "--namespace", u->ns, "--auth", auth, NULL };
	tserve_start(sv, "serve", args);
}

const char *const *tbrowser_env(struct tbrowser_env *e, const struct tserve *sv, const struct tzkup *u)
{
	snprintf(e->url, sizeof e->url, "EJOB_URL=http://127.0.0.1:%d", sv->port);
	snprintf(e->zk, sizeof e->zk, "EJOB_ZK=%s", u->connect);
	snprintf(e->ns, sizeof e->ns, "EJOB_NS=%s", u->ns);
	e->v[0] = e->url, e->v[1] = e->zk, e->v[2] = e->ns;
	e->v[3] = "EJOB_USERS=" TB_USERS, e->v[4] = "EJOB_CTL=" BUILT("tools/ejobctl"), e->v[5] = NULL;
	return e->v;
}
