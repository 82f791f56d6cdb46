/* t/95-ctl-ux.c: what a new user meets first with ejobctl (issue 25), on a real ZooKeeper:
 *   - every binary answers --version with "ejob X.Y.Z", one version for all;
 *   - a ZooKeeper host that does not resolve is "cannot resolve HOST", exit 1, within seconds;
 *   - the connection options before the command as well as after it; EJOB_ZK, EJOB_NAMESPACE
 *     and the default file ($EJOB_CONFIG, else /etc/ejob/ejob.yaml) when nothing else names the
 *     cluster; a flag beats the environment, which beats the file;
 *   - a configuration file that is missing is exit 2 (as for the supervisor), an unknown option
 *     before the command exit 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ipc/version.h"
#include "t/lib/tlib.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static char *out, *err;

/* argv[0] a binary, NULL-terminated: its exit status (128 + signal if killed) */
static int run(const char *const *argv)
{
	free(out), free(err);
	out = err = NULL;
	int st = tlib_run(argv, &out, &err);
	if (!out) out = strdup("");
	if (!err) err = strdup("");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define CTL(...) run((const char *[]){ BUILT("tools/ejobctl"), __VA_ARGS__, NULL })

int main(void)
{
	tlib_init(60);
	unsetenv("EJOB_ZK"), unsetenv("EJOB_NAMESPACE"), unsetenv("EJOB_DIGEST");
	setenv("EJOB_CONFIG", "", 1);        /* not this machine's /etc/ejob/ejob.yaml */

	/* ---- --version: the programs make built, and the same at their documented paths (make's
	 * symlinks into build/, what users and docs/design.md name) ---- */
	const char *bins[] = { BUILT("tools/ejobctl"), BUILT("supervisor/ejob-supervisor"), BUILT("tools/shmdump"),
	                       BUILT("worker/ejob-worker"), "tools/ejobctl", "supervisor/ejob-supervisor", "tools/shmdump",
	                       "worker/ejob-worker" };
	for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) {
		int st = run((const char *[]){ bins[i], "--version", NULL });
		ok(st == 0 && !strcmp(out, "ejob " EJOB_VERSION "\n"), "%s --version: 'ejob " EJOB_VERSION "' (%d: %s%s)",
		   bins[i], st, out, err);
	}
	int st = run((const char *[]){ BUILT("supervisor/ejob-supervisor"), "-V", NULL });
	ok(st == 0 && !strcmp(out, "ejob " EJOB_VERSION "\n"), "ejob-supervisor -V too");

	/* ---- a host that does not resolve ---- */
	uint64_t t0 = tlib_now_ms();
	st = CTL("jobs", "--zk", "nosuch.invalid:2181", "--namespace", "t95");
	ok(st == 1 && strstr(err, "cannot resolve nosuch.invalid") && !strstr(err, "No such file"),
	   "an unresolvable --zk: exit 1, 'cannot resolve nosuch.invalid' (%d: %s)", st, err);
	ok(tlib_now_ms() - t0 < 5000, "  within seconds (%.1f s)", (double)(tlib_now_ms() - t0) / 1000);

	/* ---- where the cluster is ---- */
	struct tzkup u;
	tzkup_start(&u, 200, "t95", 4000);
	is_int(tzk_create(u.zh, "/t95", "", 0, NULL), ZOK, "namespace /t95");
	char conf[600], other[600], yaml[1024];
	snprintf(conf, sizeof conf, "%s/ejob.yaml", tlib_tmpdir());
	snprintf(yaml, sizeof yaml, "regCenter: {serverLists: \"%s\", namespace: t95}\njobs: {}\n", u.connect);
	tlib_write_file(conf, yaml, strlen(yaml));
	snprintf(other, sizeof other, "%s/other.yaml", tlib_tmpdir());
	snprintf(yaml, sizeof yaml, "regCenter: {serverLists: \"%s\", namespace: nosuchns}\njobs: {}\n", u.connect);
	tlib_write_file(other, yaml, strlen(yaml));
#define NS_T95 "{\"namespace\":\"t95\""

	st = CTL("--zk", u.connect, "--namespace", "t95", "--json", "jobs");
	ok(st == 0 && !strncmp(out, NS_T95, strlen(NS_T95)), "--zk --namespace --json before the command (%d: %s%s)", st,
	   out, err);
	st = CTL("-c", conf, "jobs", "--json");
	ok(st == 0 && !strncmp(out, NS_T95, strlen(NS_T95)), "-c FILE before the command (%d: %s)", st, err);
	st = CTL("--timeout=3", "jobs", "--zk", u.connect, "--namespace=t95", "--json");
	ok(st == 0 && !strncmp(out, NS_T95, strlen(NS_T95)), "--opt=VALUE before, the rest after (%d: %s)", st, err);

	setenv("EJOB_ZK", u.connect, 1);
	setenv("EJOB_NAMESPACE", "t95", 1);
	st = CTL("jobs", "--json");
	ok(st == 0 && !strncmp(out, NS_T95, strlen(NS_T95)), "EJOB_ZK and EJOB_NAMESPACE name the cluster (%d: %s)", st,
	   err);
	st = CTL("jobs", "--namespace", "nosuchns");
	ok(st == 1 && strstr(err, "namespace /nosuchns does not exist"), "  a flag beats them (%d: %s)", st, err);
	setenv("EJOB_CONFIG", other, 1);
	st = CTL("jobs", "--json");
	ok(st == 0 && !strncmp(out, NS_T95, strlen(NS_T95)), "  and they beat the default file (%d: %s)", st, err);
	unsetenv("EJOB_NAMESPACE");
	st = CTL("jobs");
	ok(st == 1 && strstr(err, "namespace /nosuchns does not exist"), "  the file fills in what they leave out (%d: %s)",
	   st, err);
	unsetenv("EJOB_ZK");
	setenv("EJOB_CONFIG", conf, 1);
	st = CTL("jobs", "--json");
	ok(st == 0 && !strncmp(out, NS_T95, strlen(NS_T95)), "the default file alone names the cluster (%d: %s)", st, err);
	setenv("EJOB_CONFIG", "/nonexistent/ejob.yaml", 1);
	st = CTL("jobs");
	ok(st == 2 && strstr(err, "/nonexistent/ejob.yaml") && strstr(err, "EJOB_CONFIG"),
	   "a default file that does not load: exit 2, named (%d: %s)", st, err);
	setenv("EJOB_CONFIG", "", 1);
	st = CTL("jobs");
	ok(st == 2 && strstr(err, "EJOB_ZK"), "nothing names the cluster: exit 2, saying what to give (%s)", err);

	/* ---- exit codes ---- */
	st = CTL("-c", "/nonexistent/ejob.yaml", "jobs");
	ok(st == 2 && strstr(err, "/nonexistent/ejob.yaml: cannot read"), "-c FILE missing: exit 2 (%d: %s)", st, err);
	st = CTL("validate", "/nonexistent/ejob.yaml");
	is_int(st, 2, "validate of a missing file: exit 2, as the supervisor's");
	st = run((const char *[]){ BUILT("supervisor/ejob-supervisor"), "-c", "/nonexistent/ejob.yaml", NULL });
	is_int(st, 2, "  (the supervisor's: 2)");
	st = CTL("--bogus", "jobs");
	ok(st == 2 && strstr(err, "'--bogus'"), "an unknown option before the command: exit 2 (%s)", err);
	st = CTL("--help");
	ok(st == 0 && strstr(out, "EJOB_ZK") && strstr(out, "/etc/ejob/ejob.yaml") && strstr(out, "before or after"),
	   "--help tells the options and the order");
	tzkup_end(&u);
	free(out), free(err);
	return done_testing();
}
