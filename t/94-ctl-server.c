/* t/94-ctl-server.c: ejobctl server disable|enable|shutdown|remove IP, the operations on every job
 * of a server (ElasticJob-UI's server dimension), on a namespace that two ejob supervisors
 * (127.0.0.1 with j1, j2, j3; 127.0.0.2 with j1, j2) share with a real ElasticJob-Lite 3.0.4
 * instance (on 127.0.0.2, job ej), each checked by the exact output, the nodes it leaves and what
 * the supervisors then run:
 * j1 fires every second; j2 is a one-off job, triggered once, whose items run 60 s.
 *   - bad input: an ip no job has (exit 2, did you mean), no ip, an unknown operation, an option
 *     the operation does not take, and `disable --server IP` without a job (exit 2, pointing here);
 *   - disable: servers/127.0.0.2 DISABLED in j1, j2 and ElasticJob's ej, not in j3 (not there);
 *     a job whose node refuses the write (its ACL) fails alone, named, exit 1; 127.0.0.2 stops its
 *     running item of j2 (60 s long: j2 is not resharded while 127.0.0.1's item runs, as in
 *     ElasticJob, so only the stop is checked) and runs nothing of j1 (127.0.0.1 owns and runs
 *     every item once per fire); again: every job unchanged, --json;
 *   - a job that changes between the read and the write (EJOBCTL_PAUSE_MS holds ejobctl there):
 *     read and planned again, the others written;
 *   - enable, --json: back, and 127.0.0.2 owns and runs items again;
 *   - remove while instances are online there: refused, nothing deleted;
 *   - shutdown: the instances on 127.0.0.2 deleted in every job, ElasticJob's too (it does not
 *     register again), 127.0.0.1's kept; 127.0.0.1 owns every item;
 *   - remove: servers/127.0.0.2 deleted in every job; remove --force on 127.0.0.1: its instances
 *     and servers nodes in one multi per job. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tej.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;
static char *out, *err;

#define ctl(...) tzkup_ctl(&u, &out, &err, __VA_ARGS__)

static long long now_ms(void) { return tlib_wall_ns() / 1000000; }

#define data(path) tzkup_data(&u, path)
#define missing(path) tzkup_missing(&u, path)

/* runs recorded (tsup_rec_script) after `after` (ms, by fire id) on tasks containing host */
static int runs(const char *path, long long after, const char *host)
{
	char *t = tsup_slurp(path);
	int n = 0;
	for (char *p = t ? strtok(t, "\n") : NULL; p; p = strtok(NULL, "\n")) {
		long long f;
		int i;
		char task[200];
		if (sscanf(p, "%lld %d %199s", &f, &i, task) == 3 && f > after && strstr(task, host)) n++;
	}
	free(t);
	return n;
}

/* j2's item i is running on id (its running node names it) */
struct running { const char *id; int item; };
static int runs_on(void *arg)
{
	const struct running *r = arg;
	return !strcmp(data(tzkup_path(&u, "j2", "sharding/%d/running", r->item)), r->id);
}
static int not_on(void *arg)
{
	const struct running *r = arg;
	return strcmp(data(tzkup_path(&u, "j2", "sharding/%d/running", r->item)), r->id) != 0;
}

/* j2's item that id owns, -1 if none */
static int owned_by(const char *id)
{
	for (int i = 0; i < 2; i++)
		if (!strcmp(data(tzkup_path(&u, "j2", "sharding/%d/instance", i)), id)) return i;
	return -1;
}

/* A real ElasticJob-Lite 3.0.4 instance (t/lib/tej) on ip, running job `job` of 2 items every
 * second; its instance id into id. */
static struct tej ej;

static pid_t elasticjob(const char *job, const char *ip, char *id, size_t idlen)
{
	char ipopt[64];
	snprintf(ipopt, sizeof ipopt, "ip=%s", ip);
	const char *const extra[] = { ipopt, NULL };
	if (tej_start(&ej, "ej", u.connect, u.ns, job, "0/1 * * * * ?", 2, 0, "/bin/true", u.session_ms, NULL, extra) < 0)
		BAIL_OUT("cannot start the real ElasticJob (above)");
	snprintf(id, idlen, "%s", ej.id);
	return ej.pid;
}

int main(void)
{
	tlib_init(120);
	uint64_t start = tlib_now_ms();
	tzkup_start(&u, 200, "t91", 2000);   /* its namespace from when it was t/91 */
	char ejid[64];
	elasticjob("ej", "127.0.0.2", ejid, sizeof ejid);
	char runs_j1[600], jobs[4096];
	snprintf(runs_j1, sizeof runs_j1, "%s/runs-j1", tlib_tmpdir());
	const char *sh = tsup_rec_script();
	static const char *j3 = "  j3:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 2\n"
	                        "    props: {script.command.line: /bin/true}\n";
	snprintf(jobs, sizeof jobs,
	         "  j1:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 4\n"
	         "    props: {script.command.line: \"%s %s\"}\n"
	         "  j2:\n    type: script\n    shardingTotalCount: 2\n    misfire: false\n"
	         "    props: {script.command.line: \"%s %s/runs-j2 60\"}\n",
	         sh, runs_j1, sh, tlib_tmpdir());
	char jobs_a[4400];
	snprintf(jobs_a, sizeof jobs_a, "%s%s", jobs, j3);
	struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 4, killGraceSeconds: 1", jobs_a);
	tzkup_config(&u, &b, "b", "workers: 4, killGraceSeconds: 1", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	tzkup_run(&u, &b, "127.0.0.2");
	ok(tzkup_wait_owned(&u, "j1", 4, a.id, 2, 15000) && tzkup_wait_owned(&u, "j1", 4, b.id, 2, 15000),
	   "two supervisors share j1's 4 items");
	/* j2 (one-off) fires once both are there: each runs one of its items, for 60 s */
	ok(tzkup_wait_registered(&u, "j2", a.id, 0, 5000) && tzkup_wait_registered(&u, "j2", b.id, 0, 5000) &&
	   ctl("trigger", "j2", NULL) == 0 && tzkup_wait_owned(&u, "j2", 2, b.id, 1, 5000), "j2 triggered: b owns 1 of its 2 items");
	ok(tzkup_wait_registered(&u, "j3", a.id, 0, 5000), "a runs j3 as well");
	ok(tzk_wait_exists(u.zh, tzkup_path(&u, "ej", "instances/%s", ejid), 1, 30000) &&
	   !strcmp(data(tzkup_path(&u, "ej", "servers/127.0.0.2")), "ENABLED"),
	   "a real ElasticJob instance runs job ej on 127.0.0.2 in the same namespace (%s)", ejid);
	int b2 = owned_by(b.id);
	struct running rb = { b.id, b2 };
	ok(b2 >= 0 && tlib_wait_for(runs_on, &rb, 5000), "b runs its item %d of j2 (60 s long)", b2);

	/* ---- bad input: exit 2, named, nothing written ---- */
	is_int(ctl("server", "disable", "127.0.0.9", NULL), 2, "server disable 127.0.0.9 (no job has it): exit 2");
	ok(strstr(err, "no server '127.0.0.9' in namespace /t91; did you mean '127.0.0.") != NULL, "  did you mean: %s", err);
	is_int(ctl("server", "shutdown", "10.200.30.4", NULL), 2, "server shutdown 10.200.30.4: exit 2");
	is_str(err, "ejobctl server shutdown: no server '10.200.30.4' in namespace /t91 (2 servers there: 127.0.0.1, "
	            "127.0.0.2; 'ejobctl servers' lists them)\n", "  lists the servers there");
	is_int(ctl("server", "disable", NULL), 2, "server disable without an ip: exit 2");
	is_str(err, "ejobctl server disable: which server? usage: ejobctl server disable IP\n", "  says so");
	is_int(ctl("server", "pause", "127.0.0.2", NULL), 2, "server pause: exit 2");
	is_int(ctl("server", "shutdown", "127.0.0.2", "--force", NULL), 2, "server shutdown --force: exit 2 (remove's only)");
	is_int(ctl("disable", "--server", "127.0.0.2", NULL), 2, "disable --server 127.0.0.2 without a job: exit 2");
	is_str(err, "ejobctl disable: which job? 'ejobctl disable JOB --server 127.0.0.2' is one job there; for every job "
	            "on server 127.0.0.2: ejobctl server disable 127.0.0.2\n", "  points at ejobctl server");
	ok(!strcmp(data("/t91/j1/servers/127.0.0.2"), "ENABLED") && !strcmp(data("/t91/ej/servers/127.0.0.2"), "ENABLED"),
	   "  nothing was written");

	/* ---- disable, with one job whose node refuses the write ---- */
	struct ACL ro_acl[] = { { ZOO_PERM_READ, ZOO_ANYONE_ID_UNSAFE } };
	struct ACL_vector ro = { 1, ro_acl };
	ok(tzk_create(u.zh, "/t91/acl/config", "jobName: acl\nshardingTotalCount: 1\n", 0, NULL) == ZOK &&
	   tzk_create(u.zh, "/t91/acl/servers", "", 0, NULL) == ZOK &&
	   zoo_create(u.zh, "/t91/acl/servers/127.0.0.2", "ENABLED", 7, &ro, 0, NULL, 0) == ZOK,
	   "job 'acl' whose servers/127.0.0.2 is read-only for everyone");
	long long t0 = now_ms();
	is_int(ctl("server", "disable", "127.0.0.2", NULL), 1, "server disable 127.0.0.2: exit 1 (one job failed)");
	char want[4096];
	snprintf(want, sizeof want,
	         "JOB  RESULT  DETAIL\n"
	         "acl  failed  nothing written: set /t91/acl/servers/127.0.0.2: not authenticated (the node's ACL refuses this "
	         "client: give the cluster's --digest USER:PASS)\n"
	         "ej   done    set /t91/ej/servers/127.0.0.2 = DISABLED\n"
	         "j1   done    set /t91/j1/servers/127.0.0.2 = DISABLED\n"
	         "j2   done    set /t91/j2/servers/127.0.0.2 = DISABLED\n"
	         "server 127.0.0.2: 4 jobs: 3 done, 0 unchanged, 1 failed\n");
	is_str(out, want, "  one line per job on 127.0.0.2 (not j3), what was done, the failure named");
	ok(strstr(err, "job 'acl': nothing written: set /t91/acl/servers/127.0.0.2: not authenticated") != NULL,
	   "  the failure on stderr too: %s", err);
	ok(!strcmp(data("/t91/j1/servers/127.0.0.2"), "DISABLED") && !strcmp(data("/t91/j2/servers/127.0.0.2"), "DISABLED") &&
	   !strcmp(data("/t91/ej/servers/127.0.0.2"), "DISABLED") && !strcmp(data("/t91/acl/servers/127.0.0.2"), "ENABLED"),
	   "  servers/127.0.0.2 DISABLED in j1, j2 and ej; acl's unchanged");
	ok(!strcmp(data("/t91/j1/servers/127.0.0.1"), "ENABLED") && !strcmp(data("/t91/j2/servers/127.0.0.1"), "ENABLED") &&
	   !strcmp(data("/t91/j3/servers/127.0.0.1"), "ENABLED") && missing("/t91/j3/servers/127.0.0.2"),
	   "  127.0.0.1's nodes untouched, j3 has no 127.0.0.2");
	ok(tlib_wait_for(not_on, &rb, 5000), "  b stopped its running item %d of j2 (it had 60 s to go)", b2);
	ok(tzkup_wait_owned(&u, "j1", 4, a.id, 4, 5000), "  a owns every item of j1");
	t0 = now_ms() + 500;
	usleep(2500000);
	int exact = 0;
	ok(tsup_fires_exact(runs_j1, t0, 4, a.ip, &exact) >= 1 && exact, "  j1: every item of each fire ran once, on a");
	is_int(runs(runs_j1, t0 - 500, b.ip), 0, "  j1: none on b");
	ok(tzk_delete_r(u.zh, "/t91/acl") == ZOK, "job 'acl' deleted");

	is_int(ctl("server", "disable", "127.0.0.2", "--json", NULL), 0, "server disable 127.0.0.2 again, --json: exit 0");
	is_str(out, "{\"command\":\"server disable\",\"server\":\"127.0.0.2\",\"jobs\":["
	            "{\"job\":\"ej\",\"result\":\"unchanged\",\"writes\":[],\"reason\":\"already DISABLED\"},"
	            "{\"job\":\"j1\",\"result\":\"unchanged\",\"writes\":[],\"reason\":\"already DISABLED\"},"
	            "{\"job\":\"j2\",\"result\":\"unchanged\",\"writes\":[],\"reason\":\"already DISABLED\"}],"
	            "\"done\":0,\"unchanged\":3,\"failed\":0}\n", "  every job unchanged");

	/* ---- a job that changes between the read and the write: read and planned again ---- */
	ok(tzk_create(u.zh, "/t91/r1/config", "jobName: r1\nshardingTotalCount: 1\n", 0, NULL) == ZOK &&
	   tzk_create(u.zh, "/t91/r1/servers/10.0.0.5", "ENABLED", 0, NULL) == ZOK &&
	   tzk_create(u.zh, "/t91/r2/config", "jobName: r2\nshardingTotalCount: 1\n", 0, NULL) == ZOK &&
	   tzk_create(u.zh, "/t91/r2/servers/10.0.0.5", "ENABLED", 0, NULL) == ZOK, "jobs r1 and r2 on server 10.0.0.5");
	char rerr[600], rout[600];
	snprintf(rerr, sizeof rerr, "%s/race.err", tlib_tmpdir());
	snprintf(rout, sizeof rout, "%s/race.out", tlib_tmpdir());
	pid_t race = tlib_fork();
	if (race == 0) {
		int fo = open(rout, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), fe = open(rerr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(127);
		setenv("EJOBCTL_PAUSE_MS", "2000", 1);
		execl(BUILT("tools/ejobctl"), BUILT("tools/ejobctl"), "server", "disable", "10.0.0.5", "--zk", u.connect, "--namespace", u.ns,
		      (char *)NULL);
		_exit(127);
	}
	ok(tsup_wait_lines(rerr, "pausing 2000 ms", 1, 10000), "server disable 10.0.0.5 has read and planned (paused 2 s)");
	ok(tzk_delete_r(u.zh, "/t91/r1/servers/10.0.0.5") == ZOK, "  meanwhile r1's servers/10.0.0.5 is deleted");
	int rst = -1;
	uint64_t rt0 = tlib_now_ms();
	while (waitpid(race, &rst, WNOHANG) == 0 && tlib_now_ms() - rt0 < 10000) usleep(20000);
	tlib_untrack(race);
	ok(WIFEXITED(rst) && WEXITSTATUS(rst) == 0, "  exit 0");
	char *rtext = tsup_slurp(rout);
	is_str(rtext, "JOB  RESULT     DETAIL\n"
	           "r1   unchanged  no longer on 10.0.0.5 (changed meanwhile)\n"
	           "r2   done       set /t91/r2/servers/10.0.0.5 = DISABLED\n"
	           "server 10.0.0.5: 2 jobs: 1 done, 1 unchanged, 0 failed\n",
	       "  r1's multi failed as it changed: read again, it is no longer there; r2 written");
	free(rtext);
	ok(missing("/t91/r1/servers/10.0.0.5") && !strcmp(data("/t91/r2/servers/10.0.0.5"), "DISABLED"), "  the nodes say so");
	ok(tzk_delete_r(u.zh, "/t91/r1") == ZOK && tzk_delete_r(u.zh, "/t91/r2") == ZOK, "r1 and r2 deleted");

	/* ---- enable ---- */
	is_int(ctl("server", "enable", "127.0.0.2", "--json", NULL), 0, "server enable 127.0.0.2 --json: exit 0");
	is_str(out, "{\"command\":\"server enable\",\"server\":\"127.0.0.2\",\"jobs\":["
	            "{\"job\":\"ej\",\"result\":\"done\",\"writes\":[{\"op\":\"set\",\"path\":\"/t91/ej/servers/127.0.0.2\",\"data\":\"ENABLED\"}],\"reason\":null},"
	            "{\"job\":\"j1\",\"result\":\"done\",\"writes\":[{\"op\":\"set\",\"path\":\"/t91/j1/servers/127.0.0.2\",\"data\":\"ENABLED\"}],\"reason\":null},"
	            "{\"job\":\"j2\",\"result\":\"done\",\"writes\":[{\"op\":\"set\",\"path\":\"/t91/j2/servers/127.0.0.2\",\"data\":\"ENABLED\"}],\"reason\":null}],"
	            "\"done\":3,\"unchanged\":0,\"failed\":0}\n", "  the writes of each job");
	ok(!strcmp(data("/t91/j1/servers/127.0.0.2"), "ENABLED") && !strcmp(data("/t91/j2/servers/127.0.0.2"), "ENABLED") &&
	   !strcmp(data("/t91/ej/servers/127.0.0.2"), "ENABLED"), "  servers/127.0.0.2 ENABLED in j1, j2 and ej");
	ok(tzkup_wait_owned(&u, "j1", 4, b.id, 2, 5000), "  b owns 2 items of j1 again");
	ok(tsup_wait_lines(runs_j1, b.ip, runs(runs_j1, 0, b.ip) + 2, 5000), "  and runs j1's items again");

	/* ---- remove while instances are online there ---- */
	is_int(ctl("server", "remove", "127.0.0.2", NULL), 1, "server remove 127.0.0.2 with instances online: exit 1");
	snprintf(want, sizeof want, "ejobctl server remove: server 127.0.0.2 has instances online in 3 jobs (ej: %s, j1: %s, "
	         "j2: %s): nothing removed; shut them down first (ejobctl server shutdown 127.0.0.2) or give --force\n",
	         ejid, b.id, b.id);
	is_str(err, want, "  says where and what to do");
	is_str(out, "", "  prints no table");
	ok(!missing("/t91/j1/servers/127.0.0.2") && !missing("/t91/ej/servers/127.0.0.2") &&
	   !missing(tzkup_path(&u, "j1", "instances/%s", b.id)), "  nothing deleted");

	/* ---- shutdown ---- */
	is_int(ctl("server", "shutdown", "127.0.0.2", NULL), 0, "server shutdown 127.0.0.2: exit 0");
	snprintf(want, sizeof want,
	         "JOB  RESULT  DETAIL\n"
	         "ej   done    deleted /t91/ej/instances/%s\n"
	         "j1   done    deleted /t91/j1/instances/%s\n"
	         "j2   done    deleted /t91/j2/instances/%s\n"
	         "server 127.0.0.2: 3 jobs: 3 done, 0 unchanged, 0 failed\n"
	         "the jobs stay stopped on 127.0.0.2 until its supervisor restarts (on 127.0.0.2: e.g. systemctl restart "
	         "ejob-supervisor); 'ejobctl instances' shows them as shut down\n", ejid, b.id, b.id);
	is_str(out, want, "  each job's instance on 127.0.0.2, ElasticJob's too; and how to undo it");
	ok(missing(tzkup_path(&u, "j1", "instances/%s", b.id)) && missing(tzkup_path(&u, "j2", "instances/%s", b.id)) &&
	   missing(tzkup_path(&u, "ej", "instances/%s", ejid)), "  gone");
	ok(!missing(tzkup_path(&u, "j1", "instances/%s", a.id)) && !missing(tzkup_path(&u, "j2", "instances/%s", a.id)) &&
	   !missing(tzkup_path(&u, "j3", "instances/%s", a.id)), "  a's instances stay");
	ok(tzkup_wait_owned(&u, "j1", 4, a.id, 4, 5000), "  a owns every item of j1");
	usleep(1500000);
	ok(missing(tzkup_path(&u, "j1", "instances/%s", b.id)) && missing(tzkup_path(&u, "ej", "instances/%s", ejid)),
	   "  neither b nor ElasticJob registered again");

	/* ---- remove ---- */
	is_int(ctl("server", "remove", "127.0.0.2", NULL), 0, "server remove 127.0.0.2: exit 0");
	is_str(out, "JOB  RESULT  DETAIL\n"
	            "ej   done    deleted /t91/ej/servers/127.0.0.2\n"
	            "j1   done    deleted /t91/j1/servers/127.0.0.2\n"
	            "j2   done    deleted /t91/j2/servers/127.0.0.2\n"
	            "server 127.0.0.2: 3 jobs: 3 done, 0 unchanged, 0 failed\n", "  servers/127.0.0.2 of each job");
	ok(missing("/t91/j1/servers/127.0.0.2") && missing("/t91/j2/servers/127.0.0.2") && missing("/t91/ej/servers/127.0.0.2") &&
	   !missing("/t91/j1/servers/127.0.0.1"), "  gone; 127.0.0.1's stay");
	is_int(ctl("server", "enable", "127.0.0.2", NULL), 2, "server enable 127.0.0.2 now: exit 2 (no job has it)");

	is_int(ctl("server", "remove", "127.0.0.1", "--force", NULL), 0, "server remove 127.0.0.1 --force: exit 0");
	snprintf(want, sizeof want,
	         "JOB  RESULT  DETAIL\n"
	         "j1   done    deleted /t91/j1/instances/%s; deleted /t91/j1/servers/127.0.0.1\n"
	         "j2   done    deleted /t91/j2/instances/%s; deleted /t91/j2/servers/127.0.0.1\n"
	         "j3   done    deleted /t91/j3/instances/%s; deleted /t91/j3/servers/127.0.0.1\n"
	         "server 127.0.0.1: 3 jobs: 3 done, 0 unchanged, 0 failed\n", a.id, a.id, a.id);
	is_str(out, want, "  its instance and its server node in each job");
	ok(missing("/t91/j1/servers/127.0.0.1") && missing("/t91/j3/servers/127.0.0.1") &&
	   missing(tzkup_path(&u, "j3", "instances/%s", a.id)) && !missing("/t91/j3/config"), "  gone; the jobs stay");

	diag("t/94 took %.1f s", (tlib_now_ms() - start) / 1000.0);
	tzkup_end(&u);
	free(out), free(err);
	return done_testing();
}
