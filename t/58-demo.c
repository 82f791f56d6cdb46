/* t/58-demo.c: `make demo` as a user sees it. tools/demo runs for 9 s (EJOB_DEMO_SECONDS) with
 * the build and tools/install-deps skipped (make check has built everything; no root, no
 * network): it exits 0; while it runs there are its 2 supervisors, their 16 workers, 2 external
 * workers, a ZooKeeper JVM and `ejobctl serve`, whose address it prints: there the web console
 * answers, and the API lists the three jobs; its output has, for each of the three jobs, fires whose items ran
 * on both instances, on the right kind of worker, each item of each fire exactly once; and
 * when it has exited nothing it started is left: no process, no temp dir.
 *
 * The demo's processes are found by their environment: every process it starts inherits
 * EJOB_DEMO_DIR=<its temp dir>, which it makes under $TMPDIR, here this test's own directory. */
#include <ctype.h>
#include <dirent.h>
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
#include "t/tap.h"

#define MAXP 256

static char marker[600];   /* "EJOB_DEMO_DIR=<tmp>/ejob-demo." */

/* pid has marker at the start of one of its environment's entries */
static int is_demos(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) return 0;
	static char buf[1 << 18];
	size_t len = 0;
	ssize_t n;
	while (len < sizeof buf - 1 && ((n = read(fd, buf + len, sizeof buf - 1 - len)) > 0 || (n < 0 && errno == EINTR)))
		if (n > 0) len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	size_t ml = strlen(marker);
	for (size_t off = 0; off < len; off += strlen(buf + off) + 1)
		if (!strncmp(buf + off, marker, ml)) return 1;
	return 0;
}

/* The demo's live processes (zombies do not count): pids and their names (comm). */
static int demo_procs(pid_t *pids, char (*comm)[32], int max)
{
	DIR *d = opendir("/proc");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) && n < max) {
		if (!isdigit((unsigned char)e->d_name[0])) continue;
		pid_t p = (pid_t)atoi(e->d_name);
		if (p == getpid() || !tsup_alive(p) || !is_demos(p)) continue;
		char path[64];
		snprintf(path, sizeof path, "/proc/%d/comm", (int)p);
		char *c = tsup_slurp(path);
		snprintf(comm[n], sizeof comm[n], "%s", c ? c : "?");
		free(c);
		comm[n][strcspn(comm[n], "\n")] = '\0';
		pids[n++] = p;
	}
	if (d) closedir(d);
	return n;
}

static int count_comm(char (*comm)[32], int n, const char *name)
{
	int k = 0;
	for (int i = 0; i < n; i++) k += !strncmp(comm[i], name, 15);
	return k;
}

static int has_demo_dir(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	int found = 0;
	while (d && (e = readdir(d)))
		if (!strncmp(e->d_name, "ejob-demo.", 10)) found = 1;
	if (d) closedir(d);
	return found;
}

/* What the fire lines of the output say, per job. */
struct jobstat {
	const char *name, *worker;   /* the kind of worker its items run on: "pool#" or "ext#" */
	int fires;        /* fire lines */
	int exact;        /* fire lines in which items 0-3 each ran exactly once */
	int both;         /* fire lines with items on both instances */
	int wrong_worker; /* items on another kind of worker */
};

static void parse_line(char *line, struct jobstat *js, int njobs)
{
	char *save, *tok = strtok_r(line, " ", &save);
	int h, m, s;
	char c;
	if (!tok || sscanf(tok, "%d:%d:%d%c", &h, &m, &s, &c) != 3) return;
	tok = strtok_r(NULL, " ", &save);
	struct jobstat *j = NULL;
	for (int i = 0; tok && i < njobs; i++)
		if (!strcmp(tok, js[i].name)) j = &js[i];
	if (!j) return;   /* an event line (" · ...") */
	int runs[4] = { 0 }, other = 0, on[2] = { 0, 0 }, inst = -1;
	while ((tok = strtok_r(NULL, " ", &save))) {
		if (!strcmp(tok, "127.0.0.1")) inst = 0;
		else if (!strcmp(tok, "127.0.0.2")) inst = 1;
		else if (!strcmp(tok, "-")) continue;
		else {
			int item, w, used = 0;
			char kind[8];
			if (inst < 0 || sscanf(tok, "%d:%7[a-z]#%d%n", &item, kind, &w, &used) != 3 || tok[used]) break;   /* the result */
			if (item >= 0 && item < 4) runs[item]++;
			else other++;
			on[inst]++;
			if (strncmp(tok + strcspn(tok, ":") + 1, j->worker, strlen(j->worker))) j->wrong_worker++;
		}
	}
	j->fires++;
	j->exact += runs[0] == 1 && runs[1] == 1 && runs[2] == 1 && runs[3] == 1 && !other;
	j->both += on[0] > 0 && on[1] > 0;
}

int main(void)
{
	tlib_init(90);
	const char *tmp = tlib_tmpdir();
	snprintf(marker, sizeof marker, "EJOB_DEMO_DIR=%s/ejob-demo.", tmp);
	setenv("TMPDIR", tmp, 1);
	setenv("EJOB_DEMO_SECONDS", "9", 1);
	setenv("EJOB_DEMO_DEPS", "0", 1);
	setenv("EJOB_DEMO_BUILD", "0", 1);
	unsetenv("EJOB_DEMO_KEEP");
	char out[600], err[600];
	snprintf(out, sizeof out, "%s/demo.out", tmp);
	snprintf(err, sizeof err, "%s/demo.err", tmp);

	uint64_t t0 = tlib_now_ms();
	pid_t demo = tlib_fork();
	if (demo < 0) BAIL_OUT("fork: %s", strerror(errno));
	if (demo == 0) {
		int in = open("/dev/null", O_RDONLY);
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (in < 0 || o < 0 || e < 0) _exit(126);
		dup2(in, 0);
		dup2(o, 1);
		dup2(e, 2);
		/* SIGPIPE is ignored in the test; the demo gets what a shell would give it */
		signal(SIGPIPE, SIG_DFL);
		execl("tools/demo", "tools/demo", (char *)NULL);
		fprintf(stderr, "exec tools/demo: %s\n", strerror(errno));
		_exit(127);
	}

	/* while it runs: the first fire's line, and its processes */
	int shown = tsup_wait_lines(out, " 4/4 ok", 1, 30000);
	ok(shown, "a fire's line is shown while the demo runs (%.1fs after the start)", (double)(tlib_now_ms() - t0) / 1000);
	static pid_t pids[MAXP];
	static char comm[MAXP][32];
	int n = demo_procs(pids, comm, MAXP);
	int nsup = count_comm(comm, n, "ejob-supervisor"), nwork = count_comm(comm, n, "ejob-worker"),
	    next = count_comm(comm, n, "external-worker"), njava = count_comm(comm, n, "java"), nctl = count_comm(comm, n, "ejobctl");
	ok(nsup == 2 && nwork == 16 && next == 2 && njava == 1 && nctl == 1,
	   "while it runs: 2 supervisors, 16 workers, 2 external workers, 1 ZooKeeper, 1 ejobctl serve (found %d, %d, %d, %d, %d)",
	   nsup, nwork, next, njava, nctl);
	/* the console's address, printed: the console and the API answer there */
	char *shown_out = tsup_slurp(out);
	const char *at = shown_out ? strstr(shown_out, "console    http://127.0.0.1:") : NULL;
	int cport = at ? atoi(at + strlen("console    http://127.0.0.1:")) : 0;
	char *page = NULL, *api = NULL;
	int pc = cport ? tlib_http_get(cport, "/", &page) : -1, ac = cport ? tlib_http_get(cport, "/api/v1/jobs", &api) : -1;
	ok(pc == 200 && page && strstr(page, "/assets/app.js"), "it prints the console's address (port %d), where the console answers (%d)", cport, pc);
	ok(ac == 200 && api && strstr(api, "\"script\"") && strstr(api, "\"native\"") && strstr(api, "\"external\""),
	   "and the API lists the demo's three jobs (%d)", ac);
	free(shown_out), free(page), free(api);

	/* it stops by itself after 9 s (bounds: 30 + 30 + 15 s, under the 90 s watchdog, which
	 * could not reach the processes the demo started) */
	int st = -1, done = 0;
	for (uint64_t end = tlib_now_ms() + 30000; tlib_now_ms() < end;) {
		pid_t r = waitpid(demo, &st, WNOHANG);
		if (r == demo) {
			done = 1;
			break;
		}
		usleep(50000);
	}
	if (!done) {
		diag("the demo did not end within 30 s of its first fire: SIGTERM");
		kill(demo, SIGTERM);
		int i = 0;
		while (i++ < 300 && waitpid(demo, &st, WNOHANG) == 0) usleep(50000);
		if (i > 300) {
			kill(demo, SIGKILL);
			waitpid(demo, &st, 0);
		}
	}
	tlib_untrack(demo);
	double took = (double)(tlib_now_ms() - t0) / 1000;
	char *o = tsup_slurp(out), *e = tsup_slurp(err);
	if (!o) o = calloc(1, 1);
	if (!e) e = calloc(1, 1);
	if (!ok(done && WIFEXITED(st) && WEXITSTATUS(st) == 0, "it stops by itself and exits 0 (%.1fs in all)", took)) {
		diag("wait status %d; its output:\n%s", st, o);
		diag("its stderr:\n%s", e);
	}
	if (!is_str(e, "", "nothing on its stderr")) diag("its stdout:\n%s", o);

	/* the fires */
	struct jobstat js[3] = { { "script", "pool#", 0, 0, 0, 0 }, { "native", "pool#", 0, 0, 0, 0 },
		                 { "external", "ext#", 0, 0, 0, 0 } };
	char *copy = strdup(o), *save;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) parse_line(l, js, 3);
	free(copy);
	int all = 0;
	for (int i = 0; i < 3; i++) {
		struct jobstat *j = &js[i];
		all += j->fires;
		ok(j->fires >= 2, "job %s: %d fires shown", j->name, j->fires);
		is_int(j->exact, j->fires, "job %s: in each fire, items 0-3 each ran exactly once", j->name);
		ok(j->both >= 1, "job %s: items ran on both instances (%d of %d fires)", j->name, j->both, j->fires);
		is_int(j->wrong_worker, 0, "job %s: every item ran on a %s worker", j->name, j->worker);
	}
	ok(!strstr(o, "ran again") && !strstr(o, "more than once"), "no item is reported to have run twice");
	char sum[64];
	snprintf(sum, sizeof sum, "demo: %d fires, ", all);
	const char *sl = strstr(o, sum);
	ok(sl && strstr(sl, "): each ran once\n"), "its summary counts the same %d fires, each item run once", all);
	if (!sl || !strstr(sl, "): each ran once\n") || all < 6) diag("its output:\n%s", o);

	/* nothing left */
	n = demo_procs(pids, comm, MAXP);
	if (!is_int(n, 0, "no process it started is left")) {
		for (int i = 0; i < n; i++) {
			diag("  left: pid %d %s", (int)pids[i], comm[i]);
			kill(pids[i], SIGKILL);
		}
	}
	ok(!has_demo_dir(tmp), "its temp dir is gone");
	free(o);
	free(e);
	return done_testing();
}
