/* t/37-ejobctl-validate.c: tools/ejobctl validate, the real binary on files in a temp dir:
 * its output (stdout and stderr, exactly) and its exit status. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/conf.h"
#include "t/lib/tlib.h"
#include "t/tap.h"

#define EJOBCTL BUILT("tools/ejobctl")

static const char *dir;      /* tlib_tmpdir(): removed with what is in it at exit, kept if a check failed */
static char out[1 << 16], err[1 << 20];

static void write_file(const char *name, const char *text, size_t len)
{
	char path[256];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) BAIL_OUT("write %s: %s", path, strerror(errno));
}

static void slurp(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	size_t o = 0;
	ssize_t r;
	while (fd >= 0 && o + 1 < n && (r = read(fd, buf + o, n - 1 - o)) > 0) o += (size_t)r;
	buf[o] = '\0';
	if (fd >= 0) close(fd);
}

/* Runs ejobctl with args (NULL-terminated), in the test dir's parent's view: file names are
 * given relative to the repo root. Returns the exit status; fills out and err. */
static int run(const char *const *args)
{
	char o[256], e[256];
	snprintf(o, sizeof o, "%s/stdout", dir);
	snprintf(e, sizeof e, "%s/stderr", dir);
	pid_t pid = fork();
	if (pid < 0) BAIL_OUT("fork: %s", strerror(errno));
	if (pid == 0) {
		int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(127);
		char *argv[16];
		int n = 0;
		argv[n++] = (char *)EJOBCTL;
		for (; args[n - 1] && n < 15; n++) argv[n] = (char *)args[n - 1];
		argv[n] = NULL;
		execv(EJOBCTL, argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) BAIL_OUT("waitpid: %s", strerror(errno));
	slurp(o, out, sizeof out);
	slurp(e, err, sizeof err);
	if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

static char *path_of(const char *name)
{
	static char p[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

int main(void)
{
	if (access(EJOBCTL, X_OK) != 0) BAIL_OUT(EJOBCTL " is not built (run make)");
	tlib_init(60);
	dir = tlib_tmpdir();
	setenv("TZ", "UTC", 1);   /* the machine's zone, for jobs without timeZone */
	char want[4096];

	/* a valid file */
	const char *good =
		"regCenter: {serverLists: 'zk:2181', namespace: demo}\n"
		"supervisor: {attachAllowUids: [root]}\n"
		"jobs:\n"
		"  a:\n    type: script\n    cron: '0/5 * * * * ?'\n    timeZone: UTC\n"
		"    shardingTotalCount: 4\n    props: {script.command.line: true}\n"
		"  b:\n    type: external\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
		"    disabled: true\n"
		"  c:\n    type: external\n    cron: '0 0 2 * * ?'\n    timeZone: Asia/Shanghai\n"
		"    shardingTotalCount: 2\n"
		"  d:\n    type: external\n    cron: '0 0 0 30 2 ?'\n    timeZone: America/New_York\n"
		"    shardingTotalCount: 2\n"
		"  e:\n    type: external\n    shardingTotalCount: 3\n";
	write_file("good.yaml", good, strlen(good));
	int st = run((const char *[]){ "validate", "--now", "1700000000", path_of("good.yaml"), NULL });
	is_int(st, 0, "a valid file: exit 0");
	/* --now 1700000000 is 2023-11-14T22:13:20Z; the machine's zone is TZ (set to UTC here) */
	is_str(out, "ok\n"
	       "a: script, cron \"0/5 * * * * ?\" (UTC), next 2023-11-14T22:13:25+00:00, 4 items\n"
	       "b: external, cron \"0 0 2 * * ?\" (local time, UTC), next 2023-11-15T02:00:00+00:00, "
	       "1 item, disabled\n"
	       "c: external, cron \"0 0 2 * * ?\" (Asia/Shanghai), next 2023-11-16T02:00:00+08:00, "
	       "2 items\n"
	       "d: external, cron \"0 0 0 30 2 ?\" (America/New_York), next never, 2 items\n"
	       "e: external, one-off (no cron), next on trigger, 3 items\n",
	       "ok and one line per job, next fire time in the job's zone (a one-off job: on trigger)");
	is_str(err, "", "nothing on stderr");

	st = run((const char *[]){ "validate", "examples/oneoff.yaml", NULL });
	is_int(st, 0, "examples/oneoff.yaml is valid");
	is_str(out, "ok\nreindex: script, one-off (no cron), next on trigger, 4 items\n", "  a one-off job");
	is_str(err, "", "  no warning");
	st = run((const char *[]){ "validate", "examples/workflow.yaml", NULL });
	ok(st == 0 && !strcmp(err, "") && strstr(out, "\nload: script, after transform, audit (dependsOn), 2 items\n"),
	   "examples/workflow.yaml is valid, load after transform and audit (%d: %s)", st, err);
	st = run((const char *[]){ "validate", "examples/listeners.yaml", NULL });
	ok(st == 0 && !strcmp(err, "") && !strncmp(out, "ok\nnightly: script,", 19),
	   "examples/listeners.yaml is valid, its four listener commands found (%d: %s)", st, err);

	setenv("TZ", "America/New_York", 1);
	st = run((const char *[]){ "validate", "--now", "1700000000", path_of("good.yaml"), NULL });
	ok(strstr(out, "b: external, cron \"0 0 2 * * ?\" (local time, America/New_York), next "
	       "2023-11-15T02:00:00-05:00, 1 item, disabled\n") != NULL, "TZ is the machine's zone");
	setenv("TZ", "UTC", 1);

	st = run((const char *[]){ "validate", "examples/ejob.yaml", NULL });
	is_int(st, 0, "examples/ejob.yaml is valid");
	ok(!strncmp(out, "ok\nhello: script,", 17), "  ok, and its jobs");
	is_str(err, "", "  without a warning: its program and library are there, every key it sets is acted on");
	st = run((const char *[]){ "validate", "examples/demo.yaml", NULL });
	ok(st == 0 && !strcmp(err, ""), "examples/demo.yaml too (%d: %s)", st, err);
	st = run((const char *[]){ "validate", "examples/http.yaml", NULL });
	ok(st == 0 && !strcmp(err, "") && !strncmp(out, "ok\nping: http,", 14), "examples/http.yaml too (%d: %s)", st, err);
	st = run((const char *[]){ "validate", "examples/dataflow.yaml", NULL });
	ok(st == 0 && !strcmp(err, "") && !strncmp(out, "ok\nwordcount: dataflow,", 23),
	   "examples/dataflow.yaml too, its library there (%d: %s)", st, err);
	st = run((const char *[]){ "validate", "examples/error-handlers.yaml", NULL });
	ok(st == 0 && !strcmp(err, ""), "and examples/error-handlers.yaml, a job of each error handler (%d: %s)", st, err);

	/* keys this version does not act on: a warning each on stderr, still valid (exit 0) */
	const char *unacted =
		"regCenter: {serverLists: 'zk:2181', namespace: demo}\n"
		"jobs:\n"
		"  a:\n    type: external\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
		"    jobErrorHandlerType: THROW\n    jobListenerTypes: [audit, metrics]\n"
		"  b:\n    type: external\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
		"    jobErrorHandlerType: LOG\n";
	write_file("unacted.yaml", unacted, strlen(unacted));
	st = run((const char *[]){ "validate", "--now", "1700000000", path_of("unacted.yaml"), NULL });
	is_int(st, 0, "jobErrorHandlerType THROW and jobListenerTypes: still valid, exit 0");
	ok(!strncmp(out, "ok\na: external", 14), "ok and the jobs on stdout");
	snprintf(want, sizeof want,
	         "%1$s:3: warning: jobs.a.jobErrorHandlerType: THROW has no meaning outside Java (ElasticJob rethrows the "
	         "exception to its caller): ejob treats it as LOG, a failed item is logged\n"
	         "%1$s:3: warning: jobs.a.jobListenerTypes: [audit, metrics] are not acted on by this version of ejob "
	         "(only published for ElasticJob's tools): ElasticJob's listener classes do not run here; ejob's listeners are the ejob.listener.* props\n",
	         path_of("unacted.yaml"));
	is_str(err, want, "a warning naming each key, on stderr; none for LOG");

	/* programs and libraries that cannot be found from here: a warning each (they may exist
	 * only on the machines that run the job), found the way ejob-worker finds them */
	char cwd[1024];
	if (!getcwd(cwd, sizeof cwd)) BAIL_OUT("getcwd: %s", strerror(errno));
	write_file("noexec.sh", "#!/bin/sh\n", 10);
	write_file("notelf.so", "not a library\n", 14);
	char *paths = malloc(1 << 14);
	snprintf(paths, 1 << 14,
	         "regCenter: {serverLists: 'zk:2181', namespace: demo}\n"
	         "jobs:\n"
	         "  inpath:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"sh -c 'exit 0'\"}\n"
	         "  good:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: examples/hello.sh --greeting hi}\n"
	         "  nopath:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: no-such-program-ejob --flag}\n"
	         "  norel:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: examples/no-such.sh}\n"
	         "  noexec:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: %1$s/noexec.sh}\n"
	         "  isdir:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: %1$s}\n"
	         "  quote:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"run 'x\"}\n"
	         "  lib:\n    type: native\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {native.library: " BUILT("examples/libhello.so") ", native.symbol: hello_item}\n"
	         "  syslib:\n    type: native\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {native.library: libc.so.6, native.symbol: puts}\n"
	         "  nolib:\n    type: native\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {native.library: examples/libresize.so, native.symbol: resize_item}\n"
	         "  nosyslib:\n    type: native\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {native.library: libno-such-ejob.so, native.symbol: f}\n"
	         "  notelf:\n    type: native\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {native.library: %1$s/notelf.so, native.symbol: f}\n"
	         "  exe:\n    type: native\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {native.library: %2$s, native.symbol: main}\n"
	         "  lst:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"sh -c 'exit 0'\", ejob.listener.before: no-such-listener-ejob,\n"
	         "            ejob.listener.after: \"sh -c 'exit 0'\", ejob.listener.afterAll: \"run 'x\"}\n",
	         dir, EJOBCTL);
	write_file("paths.yaml", paths, strlen(paths));
	st = run((const char *[]){ "validate", path_of("paths.yaml"), NULL });
	is_int(st, 0, "programs and libraries that are not here: still valid, exit 0");
	ok(!strncmp(out, "ok\ninpath: script", 17), "ok and the jobs on stdout");
	snprintf(paths, 1 << 14,
	         "%1$s:13: warning: jobs.nopath.props.script.command.line: no-such-program-ejob: not found in $PATH\n"
	         "%1$s:18: warning: jobs.norel.props.script.command.line: examples/no-such.sh: not found (a relative path "
	         "is taken from the supervisor's working directory; this one is %2$s)\n"
	         "%1$s:23: warning: jobs.noexec.props.script.command.line: %3$s/noexec.sh: not executable\n"
	         "%1$s:28: warning: jobs.isdir.props.script.command.line: %3$s: is a directory\n"
	         "%1$s:33: warning: jobs.quote.props.script.command.line: cannot be split into words: unterminated "
	         "single quote starting at column 5\n"
	         "%1$s:48: warning: jobs.nolib.props.native.library: examples/libresize.so: not found (a relative path "
	         "is taken from the supervisor's working directory; this one is %2$s)\n"
	         "%1$s:53: warning: jobs.nosyslib.props.native.library: libno-such-ejob.so: not found in "
	         "$LD_LIBRARY_PATH, the directories of /etc/ld.so.conf or the system's (/lib, /usr/lib), where dlopen "
	         "looks for a name without '/'\n"
	         "%1$s:58: warning: jobs.notelf.props.native.library: %3$s/notelf.so: not a shared library (not an ELF "
	         "file)\n"
	         "%1$s:63: warning: jobs.exe.props.native.library: %4$s: not a shared library (a position-independent "
	         "executable, which dlopen refuses)\n"
	         "%1$s:68: warning: jobs.lst.props.ejob.listener.before: no-such-listener-ejob: not found in $PATH\n"
	         "%1$s:68: warning: jobs.lst.props.ejob.listener.afterAll: cannot be split into words: unterminated "
	         "single quote starting at column 5\n",
	         path_of("paths.yaml"), cwd, dir, EJOBCTL);
	is_str(err, paths, "a warning for each: job, key, path and why, the listeners' commands too; none for what "
	       "is there (in $PATH, relative to here, a system library by name)");
	/* a name in $PATH that is not executable: found, but not run (as the worker looks it up) */
	const char *noexec_path =
		"regCenter: {serverLists: 'zk:2181', namespace: demo}\n"
		"jobs:\n  a:\n    type: script\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
		"    props: {script.command.line: noexec.sh}\n";
	write_file("noexecpath.yaml", noexec_path, strlen(noexec_path));
	char *old_path = strdup(getenv("PATH") ? getenv("PATH") : "");
	setenv("PATH", dir, 1);
	st = run((const char *[]){ "validate", path_of("noexecpath.yaml"), NULL });
	setenv("PATH", old_path, 1);
	free(old_path);
	snprintf(paths, 1 << 14, "%s:3: warning: jobs.a.props.script.command.line: noexec.sh: found in $PATH, but not "
	         "executable\n", path_of("noexecpath.yaml"));
	ok(st == 0 && !strcmp(err, paths), "a name found in $PATH but not executable: said so, exit 0 (%d: %s)", st, err);
	free(paths);

	/* an http job: its http.data that a GET does not send, and CA files that cannot serve here */
	write_file("ca.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", 57);
	char *http = malloc(1 << 13);
	snprintf(http, 1 << 13,
	         "regCenter: {serverLists: 'zk:2181', namespace: demo}\n"
	         "jobs:\n"
	         "  get:\n    type: http\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {http.uri: 'http://h/', http.method: GET, http.data: 'x=1'}\n"
	         "  ca:\n    type: http\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {http.uri: 'https://h/', http.method: POST, http.data: 'x=1', http.ca.file: %1$s/ca.pem}\n"
	         "  noca:\n    type: http\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {http.uri: 'https://h/', http.method: GET, http.ca.file: %1$s/no.pem}\n"
	         "  notca:\n    type: http\n    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"
	         "    props: {http.uri: 'https://h/', http.method: GET, http.ca.file: %1$s/noexec.sh}\n",
	         dir);
	write_file("http.yaml", http, strlen(http));
	st = run((const char *[]){ "validate", path_of("http.yaml"), NULL });
	ok(st == 0 && !strncmp(out, "ok\nget: http,", 13), "http jobs: valid, exit 0 (%d)", st);
	snprintf(http, 1 << 13,
	         "%1$s:3: warning: jobs.get.props.http.data: is not sent: a GET request has no body (ElasticJob sends "
	         "http.data only with POST, PUT and DELETE, and so does ejob); put it in http.uri's query string\n"
	         "%1$s:13: warning: jobs.noca.props.http.ca.file: %2$s/no.pem: not found\n"
	         "%1$s:18: warning: jobs.notca.props.http.ca.file: %2$s/noexec.sh: holds no PEM certificate "
	         "(-----BEGIN CERTIFICATE-----)\n",
	         path_of("http.yaml"), dir);
	is_str(err, http, "  a warning for data a GET does not send, and for each CA file that is absent or holds no "
	       "certificate; none for a POST's data and a PEM file");
	free(http);

	/* cron and timeZone errors */
	const char *bad_cron =
		"regCenter: {serverLists: 'zk:2181', namespace: demo}\n"
		"jobs:\n"
		"  a:\n    type: external\n    cron: '0 0/5 24 * * ?'\n    timeZone: Asia/Pekin\n"
		"    shardingTotalCount: 1\n";
	write_file("cron.yaml", bad_cron, strlen(bad_cron));
	st = run((const char *[]){ "validate", path_of("cron.yaml"), NULL });
	is_int(st, 2, "a bad cron and a bad zone: exit 2");
	snprintf(want, sizeof want,
	         "%1$s:5:18: jobs.a.cron: hours: value 24 out of range 0-23\n"
	         "%1$s:6:5: jobs.a.timeZone: unknown time zone 'Asia/Pekin' (no zone file "
	         "/usr/share/zoneinfo/Asia/Pekin): use an IANA name such as 'Europe/London' or "
	         "'America/New_York', or 'UTC', or 'GMT+08:00'; if the name is right, install the tzdata "
	         "package\n", path_of("cron.yaml"));
	is_str(err, want, "the cron error at its column in the file; the zone's reason");

	/* an invalid file: every error, on stderr */
	const char *bad =
		"regCenter: {serverLists: 'zk', namespace: demo}\n"
		"jobs:\n"
		"  a:\n    type: shell\n    cron: '0/5 * * * * ?'\n    shardingTotalCount: 0\n"
		"  b:\n    type: external\n    shardingTotalCount: 1\n    misfire: maybe\n";
	write_file("bad.yaml", bad, strlen(bad));
	st = run((const char *[]){ "validate", path_of("bad.yaml"), NULL });
	is_int(st, 2, "an invalid file: exit 2");
	snprintf(want, sizeof want,
	         "%1$s:1:27: regCenter.serverLists: server \"zk\" needs a port, e.g. 127.0.0.1:2181; "
	         "serverLists is host:port pairs separated by commas\n"
	         "%1$s:4:5: jobs.a.type: must be one of script, native, external, http or dataflow (got \"shell\")\n"
	         "%1$s:6:5: jobs.a.shardingTotalCount: must be an integer 1-10000 (got \"0\")\n"
	         "%1$s:10:5: jobs.b.misfire: must be true or false (got \"maybe\")\n",
	         path_of("bad.yaml"));
	is_str(err, want, "every error, file:line:column: key: message");
	is_str(out, "", "nothing on stdout");

	/* a user that does not exist on this machine */
	const char *nouser = "regCenter: {serverLists: 'zk:1', namespace: d}\n"
	                     "supervisor: {attachAllowUids: [no-such-user-ejob]}\njobs: {}\n";
	write_file("nouser.yaml", nouser, strlen(nouser));
	st = run((const char *[]){ "validate", path_of("nouser.yaml"), NULL });
	is_int(st, 2, "an unknown user: exit 2");
	snprintf(want, sizeof want, "%s:2:32: supervisor.attachAllowUids[0]: no user named "
	         "\"no-such-user-ejob\" on this machine\n", path_of("nouser.yaml"));
	is_str(err, want, "names are looked up on this machine");

	/* a file that cannot be read */
	st = run((const char *[]){ "validate", path_of("missing.yaml"), NULL });
	is_int(st, 2, "a missing file: exit 2 (a configuration problem, as for the supervisor)");
	snprintf(want, sizeof want, "ejobctl validate: %s: cannot read: No such file or directory\n",
	         path_of("missing.yaml"));
	is_str(err, want, "with the reason");
	st = run((const char *[]){ "validate", dir, NULL });
	is_int(st, 2, "a directory: exit 2");
	snprintf(want, sizeof want, "ejobctl validate: %s: cannot read: Is a directory\n", dir);
	is_str(err, want, "with the reason");

	/* too big: a config error, not a read error */
	size_t n = CONF_MAX_FILE_BYTES + 10;
	char *big = malloc(n);
	memset(big, '#', n);
	big[n - 1] = '\n';
	write_file("big.yaml", big, n);
	free(big);
	st = run((const char *[]){ "validate", path_of("big.yaml"), NULL });
	is_int(st, 2, "a file over 4 MiB: exit 2");
	snprintf(want, sizeof want, "%s: is larger than 4 MiB; ejob's configuration file is limited to "
	         "4194304 bytes\n", path_of("big.yaml"));
	is_str(err, want, "and why");

	/* more errors than kept */
	size_t cap = 1 << 16, o = 0;
	char *many = malloc(cap);
	o += (size_t)snprintf(many, cap, "regCenter: {serverLists: 'zk:1', namespace: d}\njobs:\n"
	                      "  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n");
	for (int i = 0; i < 1005; i++) o += (size_t)snprintf(many + o, cap - o, "    k%d: 1\n", i);
	write_file("many.yaml", many, o);
	free(many);
	st = run((const char *[]){ "validate", path_of("many.yaml"), NULL });
	is_int(st, 2, "1005 errors: exit 2");
	size_t lines = 0;
	for (const char *c = err; *c; c++) lines += *c == '\n';
	is_int(lines, 1001, "1000 errors and one line for the rest");
	snprintf(want, sizeof want, "%s: ... and 5 more errors\n", path_of("many.yaml"));
	ok(lines && strlen(err) >= strlen(want) && !strcmp(err + strlen(err) - strlen(want), want),
	   "the last line counts the rest");

	/* usage */
	st = run((const char *[]){ "validate", NULL });
	is_int(st, 2, "no file: exit 2");
	ok(!strncmp(err, "usage: ejobctl validate", 23), "and the usage");
	st = run((const char *[]){ "validate", "--bogus", "x", NULL });
	is_int(st, 2, "an unknown option: exit 2");
	is_str(strtok(err, "\n"), "ejobctl validate: unknown option '--bogus'", "named");
	st = run((const char *[]){ "validate", "--now", "soon", "x", NULL });
	is_int(st, 2, "a bad --now: exit 2");
	is_str(err, "ejobctl validate: --now takes a Unix time in seconds (got 'soon')\n", "named");
	st = run((const char *[]){ "validate", "--help", NULL });
	is_int(st, 0, "--help: exit 0");
	ok(!strncmp(out, "usage: ejobctl validate", 23), "usage on stdout");
	st = run((const char *[]){ "--help", NULL });
	ok(st == 0 && strstr(out, "validate [--now EPOCH] FILE"), "ejobctl --help lists validate");

	return done_testing();
}
