/* t/22-worker.c: ejob-worker started exactly as the supervisor starts it, against a segment this
 * test creates: readiness, a script's exact argv, environment, fds, process group and stdin;
 * exit codes and signals mapped to outcomes; exec failures; output forwarded tagged and cut;
 * native jobs from examples/libhello.so; bad items; heartbeat while idle; bad invocations.
 *
 * The test binary doubles as the script (`--record FILE ARGS...` writes what it was given;
 * `--emit` prints a known mix of output), so every check is exact. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/ring.h"
#include "ipc/wait.h"
#include "t/lib/tlib.h"
#include "t/lib/twork.h"
#include "t/tap.h"

static char self[4096];     /* absolute path of this test binary */
static char dir[512];
static char logpath[600];

/* ---- the script side: modes of this binary ------------------------------------------------------ */

static void add(FILE *f, const char *key, const char *val)
{
	fprintf(f, "%s=%s", key, val);
	fputc('\0', f);
}

static int record(const char *file, int argc, char **argv)
{
	FILE *f = fopen(file, "w");
	if (!f) return 90;
	for (int i = 3; i < argc; i++) add(f, "arg", argv[i]);
	for (char **e = environ; *e; e++) add(f, "env", *e);
	char v[64];
	snprintf(v, sizeof v, "%d", (int)getpid());
	add(f, "pid", v);
	snprintf(v, sizeof v, "%d", (int)getpgid(0));
	add(f, "pgid", v);
	char link[256] = "";
	ssize_t n = readlink("/proc/self/fd/0", link, sizeof link - 1);
	if (n > 0) link[n] = '\0';
	add(f, "stdin", link);
	/* open fds, but the one this listing uses and the FILE we write */
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char fds[256] = "";
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.') continue;
		int fd = atoi(de->d_name);
		if (fd == dirfd(d) || fd == fileno(f)) continue;
		size_t l = strlen(fds);
		snprintf(fds + l, sizeof fds - l, "%s%d", l ? "," : "", fd);
	}
	if (d) closedir(d);
	add(f, "fds", fds);
	sigset_t mask;
	sigprocmask(SIG_SETMASK, NULL, &mask);
	int blocked = 0;
	for (int s = 1; s < 32; s++) blocked += sigismember(&mask, s) == 1;
	snprintf(v, sizeof v, "%d", blocked);
	add(f, "blocked", v);
	/* only ignored dispositions survive exec (handlers do not: and a sanitizer runtime installs
	 * its own in this process, so look at what was ignored, as the kernel reports it) */
	char *st = twork_slurp("/proc/self/status", NULL), *ign = st ? strstr(st, "SigIgn:\t") : NULL;
	if (ign) {
		char *nl = strchr(ign, '\n');
		if (nl) *nl = '\0';
		add(f, "sigign", ign + 8);
	}
	free(st);
	return fclose(f) == 0 ? 0 : 91;
}

static int emit(void)
{
	static char big[10000];
	memset(big, 'x', sizeof big);
	printf("hello\n");
	fflush(stdout);
	fprintf(stderr, "oops\n");
	fwrite(big, 1, sizeof big, stdout);
	putchar('\n');
	memset(big, 'y', 4096);
	fwrite(big, 1, 4096, stdout);
	putchar('\n');
	for (int i = 0; i < 300; i++) printf("line%d\n", i);
	fflush(stdout);
	fprintf(stderr, "tail without newline");
	return 0;
}

/* ---- helpers ------------------------------------------------------------------------------------ */

/* value of key in a record file (the n-th occurrence), NULL if absent */
static const char *rec_get(const char *buf, size_t len, const char *key, int nth)
{
	size_t kl = strlen(key);
	for (const char *p = buf; p < buf + len; p += strlen(p) + 1)
		if (!strncmp(p, key, kl) && p[kl] == '=' && nth-- == 0) return p + kl + 1;
	return NULL;
}

static int rec_count(const char *buf, size_t len, const char *key)
{
	int n = 0;
	while (rec_get(buf, len, key, n)) n++;
	return n;
}

static int run_item(struct twork *t, struct frame_submit *f, struct frame_complete *c)
{
	twork_publish(t, f);
	if (!twork_completion(t, 10000, c)) {
		diag("no completion for xid %llu in 10 s", (unsigned long long)f->xid);
		return 0;
	}
	return 1;
}

static int same_identity(const struct frame_submit *f, const struct frame_complete *c)
{
	return c->xid == f->xid && c->fire_id == f->fire_id && c->epoch == f->epoch && c->item == f->item &&
	       c->attempt == f->attempt && !strcmp(c->job, f->job) && !strcmp(c->task_id, f->task_id);
}

/* run a script command line; returns the completion (status, code, signal, error) */
static void script(struct twork *t, const char *cmd, struct frame_complete *c)
{
	struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
	f.cmd = cmd;
	memset(c, 0, sizeof *c);
	if (!run_item(t, &f, c)) BAIL_OUT("ejob-worker stopped answering");
	if (!same_identity(&f, c)) BAIL_OUT("completion of xid %llu carries another identity", (unsigned long long)f.xid);
}

/* ---- cases ---------------------------------------------------------------------------------------- */

static void test_ready(struct twork *t)
{
	t->ignore = 1ull << (SIGHUP - 1) | 1ull << (SIGPIPE - 1);
	pid_t p = twork_start(t, 1, NULL);
	ok(twork_wait_ready(t, 5000), "readiness: exactly 'ready\\n' on fd 6, then the pipe is closed");
	struct shm_worker *w = twork_entry(t, 1);
	is_int(atomic_load(&w->state), WRK_IDLE, "state IDLE once ready");
	is_int(atomic_load(&w->pid), p, "entry pid is the worker");
	ok(atomic_load(&w->heartbeat_ns) > 0, "heartbeat stamped");
}

static int entry_idle(void *arg)
{
	return atomic_load(&((struct shm_worker *)arg)->state) == WRK_IDLE;
}

static void test_argv_env(struct twork *t)
{
	char rec[700], cmd[6000];
	snprintf(rec, sizeof rec, "%s/rec", dir);
	snprintf(cmd, sizeof cmd, "%s --record %s 'a b' \"c\\\"d\" '' e\\ f 'x=<&>'", self, rec);
	struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
	f.cmd = cmd;
	f.item = 2;
	f.item_param = "p=q";
	f.job_param = "jp 'v'";
	f.attempt = 3;
	f.epoch = 123456789012ull;
	f.fire_id = 42;
	f.deadline_ms = 1800000000000ull;
	struct frame_complete c;
	if (!run_item(t, &f, &c)) BAIL_OUT("no completion");
	ok(same_identity(&f, &c), "completion names the item (xid, job, task, fire, epoch, item, attempt)");
	ok(c.status == FRAME_ST_OK && c.exit_code == 0 && c.signal == 0, "recorder exited 0: status ok");
	size_t len;
	char *r = twork_slurp(rec, &len);
	if (!ok(r != NULL, "the script ran and recorded its arguments")) BAIL_OUT("no record");
	is_int(rec_count(r, len, "arg"), 6, "6 arguments: 5 words and the context");
	is_str(rec_get(r, len, "arg", 0), "a b", "arg 1: 'a b'");
	is_str(rec_get(r, len, "arg", 1), "c\"d", "arg 2: \"c\\\"d\"");
	is_str(rec_get(r, len, "arg", 2), "", "arg 3: '' (empty)");
	is_str(rec_get(r, len, "arg", 3), "e f", "arg 4: e\\ f");
	is_str(rec_get(r, len, "arg", 4), "x=<&>", "arg 5: quoted specials reach the script as they are");
	is_str(rec_get(r, len, "arg", 5),
	       "{\"jobName\":\"hello\",\"taskId\":\"hello@-@0,1@-@READY@-@127.0.0.1@-@4242\",\"shardingTotalCount\":4,"
	       "\"jobParameter\":\"jp \\u0027v\\u0027\",\"shardingItem\":2,\"shardingParameter\":\"p\\u003dq\"}",
	       "last arg: the sharding-context JSON");
	is_str(rec_get(r, len, "env", 0) ? "present" : NULL, "present", "environment passed");
	int found = 0, sup = 0, idx = 0, path = 0;
	const char *want[] = { "EJOB_JOB=hello", "EJOB_TASK_ID=hello@-@0,1@-@READY@-@127.0.0.1@-@4242", "EJOB_ITEM=2",
	                       "EJOB_TOTAL=4", "EJOB_EPOCH=123456789012", "EJOB_FIRE_ID=42", "EJOB_ATTEMPT=3",
	                       "EJOB_DEADLINE_MS=1800000000000", "EJOB_JOB_PARAMETER=jp 'v'",
	                       "EJOB_SHARDING_PARAMETER=p=q" };
	for (int i = 0; rec_get(r, len, "env", i); i++) {
		const char *e = rec_get(r, len, "env", i);
		for (int k = 0; k < 10; k++) found += !strcmp(e, want[k]);
		sup += !strncmp(e, "EJOB_SUPERVISOR_PID=", 20);
		idx += !strncmp(e, "EJOB_WORKER_INDEX=", 18);
		path += !strncmp(e, "PATH=", 5);
	}
	is_int(found, 10, "env: EJOB_JOB, TASK_ID, ITEM, TOTAL, EPOCH, FIRE_ID, ATTEMPT, DEADLINE_MS, "
	                  "JOB_PARAMETER, SHARDING_PARAMETER exact (the parameters raw)");
	ok(sup == 0 && idx == 0, "env: the supervisor-to-worker variables are not passed on");
	ok(path == 1, "env: the supervisor's environment (PATH) is passed on");
	const char *pid = rec_get(r, len, "pid", 0), *pgid = rec_get(r, len, "pgid", 0);
	ok(pid && pgid && !strcmp(pid, pgid), "own process group (pgid %s == pid %s)", pgid, pid);
	is_str(rec_get(r, len, "stdin", 0), "/dev/null", "stdin is /dev/null");
	is_str(rec_get(r, len, "fds", 0), "0,1,2", "no fds but 0, 1, 2 (none of the worker's)");
	is_str(rec_get(r, len, "blocked", 0), "0", "empty signal mask");
	is_str(rec_get(r, len, "sigign", 0), "0000000000000000", "no signal ignored (the worker was started with SIGHUP, SIGPIPE ignored)");
	free(r);
	is_int(atomic_load(&twork_entry(t, t->index)->item_pgid), 0, "item_pgid cleared after the item");
	/* the worker marks itself IDLE just after publishing the completion */
	ok(tlib_wait_for(entry_idle, twork_entry(t, t->index), 1000), "back to IDLE");
}

static void test_exits(struct twork *t)
{
	struct frame_complete c;
	script(t, "/bin/true", &c);
	ok(c.status == FRAME_ST_OK && c.exit_code == 0 && c.signal == 0 && !c.error[0], "exit 0: ok");
	script(t, "/bin/sh -c 'exit 3'", &c);
	ok(c.status == FRAME_ST_FAILED && c.exit_code == 3 && c.signal == 0, "exit 3: failed, code 3 (got %s %d)",
	   frame_status_name(c.status), c.exit_code);
	script(t, "/bin/sh -c 'kill -USR2 $$'", &c);
	ok(c.status == FRAME_ST_CRASHED && c.signal == SIGUSR2, "killed by SIGUSR2: crashed, signal %d (got %s %d)",
	   SIGUSR2, frame_status_name(c.status), c.signal);
	script(t, "sh -c 'exit 0'", &c);
	ok(c.status == FRAME_ST_OK, "a bare name is looked up in PATH");
}

static void test_errors(struct twork *t)
{
	struct frame_complete c;
	char path[700], msg[800];
	script(t, "/nonexistent/prog a", &c);
	ok(c.status == FRAME_ST_ERROR, "missing program: error");
	is_str(c.error, "exec /nonexistent/prog: No such file or directory", "  with the reason");
	script(t, "no-such-command-ejob", &c);
	is_str(c.error, "exec no-such-command-ejob: No such file or directory", "not in PATH: error with the reason");
	snprintf(path, sizeof path, "%s/noexec.sh", dir);
	tlib_write_file(path, "#!/bin/sh\nexit 0\n", 17);
	script(t, path, &c);
	snprintf(msg, sizeof msg, "exec %s: Permission denied", path);
	ok(c.status == FRAME_ST_ERROR, "not executable: error");
	is_str(c.error, msg, "  Permission denied");
	snprintf(path, sizeof path, "%s/noshebang", dir);
	tlib_write_file(path, "exit 0\n", 7);
	chmod(path, 0755);
	script(t, path, &c);
	snprintf(msg, sizeof msg, "exec %s: Exec format error", path);
	is_str(c.error, msg, "no #! line: Exec format error (never run through a shell)");
	script(t, "/bin/echo 'open", &c);
	ok(c.status == FRAME_ST_ERROR, "unterminated quote: error");
	is_str(c.error, "bad script.command.line: unterminated single quote starting at column 11", "  with the column");
	script(t, "", &c);
	is_str(c.error, "script item without a command line (props script.command.line)", "empty command line: error");

	struct frame_submit f = twork_item(t, FRAME_KIND_EXTERNAL);
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_ERROR && strstr(c.error, "external"), "an external item sent to a pool worker: error (%s)", c.error);
	f = twork_item(t, FRAME_KIND_NONE);
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_ERROR && strstr(c.error, "no kind"), "an item without a kind: error (%s)", c.error);
}

/* A forwarded output line is "<UTC time> <prefix><text>": the time as the supervisor's log
 * writes it (2026-11-21T10:00:00.123Z), then prefix. Where the prefix starts, else NULL. */
static const char *after_stamp(const char *p, size_t l, const char *prefix)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ ";
	size_t sl = sizeof shape - 1, pl = strlen(prefix);
	if (l < sl + pl) return NULL;
	for (size_t i = 0; i < sl; i++)
		if (shape[i] == 'd' ? !(p[i] >= '0' && p[i] <= '9') : p[i] != shape[i]) return NULL;
	return strncmp(p + sl, prefix, pl) ? NULL : p + sl;
}

static int count_lines(const char *log, const char *prefix)
{
	int n = 0;
	for (const char *p = log; *p; ) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (after_stamp(p, l, prefix)) n++;
		if (!nl) break;
		p = nl + 1;
	}
	return n;
}

/* the n-th line of log that is "<time> <prefix>...", without time, prefix and newline (static buffer) */
static const char *nth_line(const char *log, const char *prefix, int nth)
{
	static char out[16384];
	size_t pl = strlen(prefix);
	for (const char *p = log; *p; ) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		const char *at = after_stamp(p, l, prefix);
		if (at && nth-- == 0) {
			snprintf(out, sizeof out, "%.*s", (int)(l - (size_t)(at - p) - pl), at + pl);
			return out;
		}
		if (!nl) break;
		p = nl + 1;
	}
	return NULL;
}

static void test_output(struct twork *t)
{
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "%s --emit", self);
	struct frame_submit f = twork_item(t, FRAME_KIND_SCRIPT);
	f.cmd = cmd;
	f.item = 3;
	f.task_id = "out@-@3@-@READY@-@10.0.0.9@-@7";
	f.attempt = 2;
	struct frame_complete c;
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_OK, "emitter ran");
	char *log = twork_slurp(logpath, NULL);
	char so[200], se[200];
	snprintf(so, sizeof so, "ejob-worker[%d] INFO [out@-@3@-@READY@-@10.0.0.9@-@7 item 3 attempt 2] stdout: ", (int)t->pid);
	snprintf(se, sizeof se, "ejob-worker[%d] INFO [out@-@3@-@READY@-@10.0.0.9@-@7 item 3 attempt 2] stderr: ", (int)t->pid);
	is_int(count_lines(log, so), 1 + 3 + 1 + 300, "stdout: 305 lines forwarded (the 10000-byte line in 3 pieces)");
	is_int(count_lines(log, se), 2, "stderr: 2 lines forwarded");
	is_str(nth_line(log, so, 0), "hello", "a line, with the log's time, the worker, INFO, task id, item, attempt and stream");
	is_str(nth_line(log, se, 0), "oops", "stderr tagged as such");
	static char want[4200];
	memset(want, 'x', 4096);
	strcpy(want + 4096, "...");
	is_str(nth_line(log, so, 1), want, "a long line: first piece 4096 bytes, marked ... at its end");
	memmove(want + 3, want, 4099);
	memcpy(want, "...", 3);
	is_str(nth_line(log, so, 2), want, "  middle piece: ... at both ends");
	memset(want, 'x', sizeof want);
	memcpy(want, "...", 3);
	want[3 + 10000 - 8192] = '\0';
	is_str(nth_line(log, so, 3), want, "  last piece: the remaining 1808 bytes after ...");
	memset(want, 'y', 4096);
	want[4096] = '\0';
	is_str(nth_line(log, so, 4), want, "a line of exactly 4096 bytes is not cut");
	is_str(nth_line(log, so, 5), "line0", "many lines: first");
	is_str(nth_line(log, so, 304), "line299", "many lines: last, in order");
	is_str(nth_line(log, se, 1), "tail without newline", "a last line without newline is forwarded at EOF");
	free(log);
}

static void test_native(struct twork *t)
{
	char lib[4096], out[700], want[6000];
	if (!realpath(BUILT("examples/libhello.so"), lib)) BAIL_OUT(BUILT("examples/libhello.so") ": %s", strerror(errno));
	snprintf(out, sizeof out, "%s/hello.out", dir);
	struct frame_submit f = twork_item(t, FRAME_KIND_NATIVE);
	f.lib = lib;
	f.sym = "hello_item";
	f.job_param = out;
	f.item = 2;
	f.item_param = "c";
	struct frame_complete c;
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_OK && c.exit_code == 0, "native hello_item: ok (%s)", c.error);
	f.item = 3;
	f.item_param = "d";
	f.attempt = 2;
	f.xid = t->next_xid++;
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_OK, "a second item from the same library (cached handle)");
	char *got = twork_slurp(out, NULL);
	snprintf(want, sizeof want,
	         "hello job=hello item=2/4 param=c epoch=77 fire=5 attempt=1 task=hello@-@0,1@-@READY@-@127.0.0.1@-@4242\n"
	         "hello job=hello item=3/4 param=d epoch=77 fire=5 attempt=2 task=hello@-@0,1@-@READY@-@127.0.0.1@-@4242\n");
	is_str(got, want, "the job saw its context: one line per item");
	free(got);
	is_int(atomic_load(&twork_entry(t, t->index)->flags) & WRKF_IN_NATIVE, 0, "WRKF_IN_NATIVE cleared after the call");

	f.job_param = "/nonexistent/dir/hello.out";
	f.xid = t->next_xid++;
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_FAILED && c.exit_code == 1, "native returns 1: failed with code 1 (got %s %d)",
	   frame_status_name(c.status), c.exit_code);

	f.sym = "no_such_symbol";
	f.xid = t->next_xid++;
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_ERROR, "dlsym failure: error");
	snprintf(want, sizeof want, "%s: undefined symbol: no_such_symbol", lib);
	is_str(c.error, want, "  with dlerror()'s text");

	f.lib = "/nonexistent/libnope.so";
	f.sym = "hello_item";
	f.xid = t->next_xid++;
	run_item(t, &f, &c);
	ok(c.status == FRAME_ST_ERROR, "dlopen failure: error");
	is_str(c.error, "/nonexistent/libnope.so: cannot open shared object file: No such file or directory",
	       "  with dlerror()'s text");

	f.lib = NULL;
	f.xid = t->next_xid++;
	run_item(t, &f, &c);
	is_str(c.error, "native item without a library (props native.library and native.symbol)", "no library: error");
}

static void test_heartbeat_idle(struct twork *t)
{
	struct shm_worker *w = twork_entry(t, t->index);
	uint64_t h0 = atomic_load(&w->heartbeat_ns);
	struct timespec ts = { 1, 100 * 1000000 };
	nanosleep(&ts, NULL);
	uint64_t h1 = atomic_load(&w->heartbeat_ns), now = wait_now_ns();
	ok(h1 > h0 && h1 - h0 >= 400 * 1000000ull, "idle: heartbeat advanced %.3f s in 1.1 s", (double)(h1 - h0) / 1e9);
	ok(now - h1 < 700 * 1000000ull, "idle: heartbeat never older than 500 ms + slack (%.3f s)", (double)(now - h1) / 1e9);
	is_int(atomic_load(&w->state), WRK_IDLE, "idle: state IDLE");
}

static void test_bad_invocation(void)
{
	const char *argv[] = { TWORK_BIN, "--index", "0", NULL };
	char *out = NULL, *err = NULL;
	unsetenv("EJOB_SUPERVISOR_PID");
	int st = tlib_run(argv, &out, &err);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "no EJOB_SUPERVISOR_PID: exit 2");
	ok(strstr(err, "EJOB_SUPERVISOR_PID is not set") != NULL, "  saying so: %s", err);
	free(out);
	free(err);
	char v[32];
	snprintf(v, sizeof v, "%d", (int)getpid());
	setenv("EJOB_SUPERVISOR_PID", v, 1);
	st = tlib_run(argv, &out, &err);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "no fds 3-6: exit 2");
	ok(strstr(err, "fds 5 (lifeline) and 6 (notify) must be open") != NULL, "  saying so: %s", err);
	free(out);
	free(err);
	setenv("EJOB_SUPERVISOR_PID", "1", 1);
	st = tlib_run(argv, &out, &err);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 1, "EJOB_SUPERVISOR_PID is not the parent: exit 1");
	ok(strstr(err, "the supervisor (pid 1) is already gone") != NULL, "  saying so: %s", err);
	free(out);
	free(err);
	unsetenv("EJOB_SUPERVISOR_PID");

	struct twork t;
	twork_init(&t, 2, logpath);
	pid_t p = twork_start(&t, 7, NULL);
	int status = 0;
	ok(twork_wait_exit(p, 5000, &status) && WIFEXITED(status) && WEXITSTATUS(status) == 2,
	   "--index 7 in a 2-entry segment: exit 2");
	t.pid = 0;
	char *log = twork_slurp(logpath, NULL);
	ok(log && strstr(log, " ERROR worker index 7: out of range"), "  saying so: %s", log ? log : "(no log)");
	free(log);
	twork_fini(&t);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "--record")) return record(argv[2], argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "--emit")) return emit();

	tlib_init(60);
	if (!realpath(argv[0], self)) BAIL_OUT("realpath %s: %s", argv[0], strerror(errno));
	snprintf(dir, sizeof dir, "%s", tlib_tmpdir());
	snprintf(logpath, sizeof logpath, "%s/worker.log", dir);
	plan(75);

	struct twork t;
	twork_init(&t, 2, logpath);
	test_ready(&t);
	test_argv_env(&t);
	test_exits(&t);
	test_errors(&t);
	test_output(&t);
	test_native(&t);
	test_heartbeat_idle(&t);
	ok(kill(t.pid, 0) == 0, "the worker is still running after all that");
	twork_fini(&t);
	test_bad_invocation();

	char *log = twork_slurp(logpath, NULL);
	ok(log && !strstr(log, "Sanitizer") && !strstr(log, "runtime error:"), "no sanitizer report in the worker log");
	if (log && (strstr(log, "Sanitizer") || strstr(log, "runtime error:"))) diag("%s", log);
	free(log);
	return done_testing();
}
