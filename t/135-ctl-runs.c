/* t/135-ctl-runs.c: a workflow's runs as `ejobctl runs` and the HTTP API show them, on a real
 * ZooKeeper. The workflow A -> B, C -> D (fan-out, fan-in) and a job in none (L) are written by
 * `ejobctl apply`; three runs are written by hand as the supervisors leave them (docs/config.md
 * "Workflows"):
 *   - run 1 (2026-11-24T00:00): every item of every job ok;
 *   - run 2 (00:01): C's item 1 failed for good, D skipped, the root's message node naming it;
 *   - run 3 (00:02): A ok, B one item of 2 ended, C and D not decided yet.
 * Checked: `ejobctl runs A` to the byte (the nodes' own times masked: they are now), --limit,
 * --json to the byte (masked the same) and those times within the test's window; without ROOT the
 * workflows; B, D (not roots), L (in no workflow) and an unknown job: exit 2 with the fix; and
 * through `ejobctl serve`: GET /api/v1/workflows/A/runs is `runs A --json`, ?limit=, 404, 400, and
 * GET /api/v1/workflows is `runs --json`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "t/lib/tjson.h"
#include "t/lib/tflow.h"
#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;
static char *out, *err;

#define ctl(...) tzkup_ctl(&u, &out, &err, __VA_ARGS__)
#define JOB(name, extra) "  " name ":\n    type: script\n    label: etl\n" \
                         "    props: {script.command.line: /bin/true}\n" extra
#define R_GIVEN "1795478280000"
#define R_ROOT "1795478340000"
#define R1 "1795478400000"
#define R2 "1795478460000"
#define R3 "1795478520000"
#define I1 "127.0.0.1@-@101"
#define I2 "127.0.0.2@-@202"
#define MASK "YYYY-MM-DDThh:mm:ss.sssZ"

static long long now_ms(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* "2026-11-24T00:00:00.000Z" at s as ms, -1 if s does not start with one */
static long long iso_ms(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.dddZ";
	for (int i = 0; i < 24; i++)
		if (shape[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != shape[i]) return -1;
	struct tm tm = { 0 };
	int ms;
	sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
	       &ms);
	tm.tm_year -= 1900, tm.tm_mon -= 1;
	return (long long)timegm(&tm) * 1000 + ms;
}

/* t with each time of the nodes (not a run's start, 2026-11-24T00:02 or before) as MASK; every one of them
 * in [lo, hi] ms (a second's slack), else *bad counts it */
static char *mask(const char *t, long long lo, long long hi, int *bad)
{
	char *m = strdup(t);
	if (!m) BAIL_OUT("out of memory");
	for (char *s = m; *s; s++) {
		long long v = iso_ms(s);
		if (v <= 1795478520000LL) continue;
		if (v < lo - 1000 || v > hi + 1000) {
			diag("%.24s is not within the test's run", s);
			++*bad;
		}
		memcpy(s, MASK, 24);
		s += 23;
	}
	tjson_keep(m);
	return m;
}

static void part(const char *job, const char *run, const char *data)
{
	tflow_part(&u, job, run, data);
}

static void rec(const char *job, const char *run, const char *name, const char *data)
{
	tflow_rec(&u, job, run, name, data);
}

static const char *file(const char *name, const char *text)
{
	static char path[600];
	snprintf(path, sizeof path, "%s/%s", tlib_tmpdir(), name);
	if (tlib_write_file(path, text, strlen(text)) < 0) BAIL_OUT("cannot write %s", path);
	return path;
}

#define HEAD "  JOB  STATE    ITEMS  STARTED                   ENDED                     WHY\n"
#define T MASK
static const char run3[] =
	"\nrun " R3 "  2026-11-24T00:02:00.000Z  running\n" HEAD
	"  A    ok       2/2    " T "  " T "\n"
	"  B    running  1/2    " T "  -\n"
	"  C    waiting  -      -                         -\n"
	"  D    waiting  -      -                         -\n";
static const char run2[] =
	"\nrun " R2 "  2026-11-24T00:01:00.000Z  failed: C item 1 on " I2 ": failed (exit 3)\n" HEAD
	"  A    ok       2/2    " T "  " T "\n"
	"  B    ok       2/2    " T "  " T "\n"
	"  C    failed   2/2    " T "  " T "  item 1 on " I2 ": failed (exit 3)\n"
	"  D    skipped  -      -                         " T "  C item 1 failed\n";
static const char run1[] =
	"\nrun " R1 "  2026-11-24T00:00:00.000Z  ok\n" HEAD
	"  A    ok       2/2    " T "  " T "\n"
	"  B    ok       2/2    " T "  " T "\n"
	"  C    ok       2/2    " T "  " T "\n"
	"  D    ok       1/1    " T "  " T "\n";
static const char run_root[] =
	"\nrun " R_ROOT "  2026-11-23T23:59:00.000Z  failed: A item 1 on " I1 ": timeout (signal 15): ran past 1 s\n" HEAD
	"  A    failed   2/2    " T "  " T "  item 1 on " I1 ": timeout (signal 15): ran past 1 s\n"
	"  B    skipped  -      -                         -                         A item 1 failed\n"
	"  C    skipped  -      -                         -                         A item 1 failed\n"
	"  D    skipped  -      -                         -                         B did not fire in the run\n";
static const char run_given[] =
	"\nrun " R_GIVEN "  2026-11-23T23:58:00.000Z  given-up: C given up: 16 newer runs started before every upstream "
	"job of it had ended\n" HEAD
	"  A    ok       2/2    " T "  " T "\n"
	"  B    ok       2/2    " T "  " T "\n"
	"  C    skipped  -      -                         " T "  given up: 16 newer runs started before every upstream "
	"job of it had ended\n"
	"  D    skipped  -      -                         -                         C did not fire in the run\n";
#define GRAPH "workflow A: A; B after A; C after A; D after B, C\n"

#define OKJ(n, i) "\"" n "\":{\"state\":\"ok\",\"items\":" #i ",\"done\":" #i ",\"failed\":[],\"why\":null," \
                  "\"started\":\"" T "\",\"ended\":\"" T "\"}"
static const char json_want[] =
	"{\"root\":\"A\",\"jobs\":[{\"name\":\"A\",\"dependsOn\":[]},{\"name\":\"B\",\"dependsOn\":[\"A\"]},"
	"{\"name\":\"C\",\"dependsOn\":[\"A\"]},{\"name\":\"D\",\"dependsOn\":[\"B\",\"C\"]}],\"runs\":["
	"{\"run\":\"" R3 "\",\"started\":\"2026-11-24T00:02:00.000Z\",\"state\":\"running\",\"why\":null,\"jobs\":{"
	OKJ("A", 2) ","
	"\"B\":{\"state\":\"running\",\"items\":2,\"done\":1,\"failed\":[],\"why\":null,\"started\":\"" T "\",\"ended\":null},"
	"\"C\":{\"state\":\"waiting\",\"items\":null,\"done\":0,\"failed\":[],\"why\":null,\"started\":null,\"ended\":null},"
	"\"D\":{\"state\":\"waiting\",\"items\":null,\"done\":0,\"failed\":[],\"why\":null,\"started\":null,\"ended\":null}}},"
	"{\"run\":\"" R2 "\",\"started\":\"2026-11-24T00:01:00.000Z\",\"state\":\"failed\","
	"\"why\":\"C item 1 on " I2 ": failed (exit 3)\",\"jobs\":{"
	OKJ("A", 2) "," OKJ("B", 2) ","
	"\"C\":{\"state\":\"failed\",\"items\":2,\"done\":2,\"failed\":[{\"item\":1,\"instance\":\"" I2 "\","
	"\"cause\":\"failed (exit 3)\",\"at\":\"" T "\"}],\"why\":null,\"started\":\"" T "\",\"ended\":\"" T "\"},"
	"\"D\":{\"state\":\"skipped\",\"items\":null,\"done\":0,\"failed\":[],\"why\":\"C item 1 failed\",\"started\":null,"
	"\"ended\":\"" T "\"}}},"
	"{\"run\":\"" R1 "\",\"started\":\"2026-11-24T00:00:00.000Z\",\"state\":\"ok\",\"why\":null,\"jobs\":{"
	OKJ("A", 2) "," OKJ("B", 2) "," OKJ("C", 2) "," OKJ("D", 1) "}}]}\n";

int main(void)
{
	tlib_init(60);
	tzkup_start(&u, 200, "t135", 4000);
	const char *wf = file("wf.yaml", "jobs:\n" JOB("A", "    cron: '0 0 1 * * ?'\n    shardingTotalCount: 2\n")
	                                 JOB("B", "    dependsOn: [A]\n    shardingTotalCount: 2\n")
	                                 JOB("C", "    dependsOn: [A]\n    shardingTotalCount: 2\n")
	                                 JOB("D", "    dependsOn: [B, C]\n    shardingTotalCount: 1\n")
	                                 JOB("L", "    cron: '0 0 2 * * ?'\n    shardingTotalCount: 1\n"));
	if (!is_int(ctl("apply", "-f", wf, NULL), 0, "apply of the workflow A -> B, C -> D and a lone job L")) diag("%s", err);
	is_int(ctl("runs", "A", NULL), 0, "runs A before any run: exit 0");
	is_str(out, GRAPH "no runs: none under /t135/A/ejob-flow/runs (A starts one at each fire: its cron, or 'ejobctl "
	       "trigger A')\n", "  the graph, and no runs");

	/* ---- three runs, as the supervisors leave them ---- */
	long long t0 = now_ms();
	const char *jobs[] = { "A", "B", "C", "D" };
	for (int k = 0; k < 4; k++) {
		part(jobs[k], R1, k == 3 ? "fired 1 A" : "fired 2 A");
		rec(jobs[k], R1, "on." I1, NULL);
		rec(jobs[k], R1, "0.ok", I1);
		if (k < 3) rec(jobs[k], R1, "1.ok", I2);
	}
	part("A", R2, "fired 2 A");
	rec("A", R2, "0.ok", I1);
	rec("A", R2, "1.ok", I2);
	part("B", R2, "fired 2 A");
	rec("B", R2, "0.ok", I1);
	rec("B", R2, "1.ok", I1);
	part("C", R2, "fired 2 A");
	rec("C", R2, "0.ok", I1);
	rec("C", R2, "1.failed", I2 ": failed (exit 3)");
	rec("A", R2, "message", "C 1 " I2);
	part("D", R2, "skipped A C item 1 failed");
	part("A", R3, "fired 2 A");
	rec("A", R3, "0.ok", I1);
	rec("A", R3, "1.ok", I2);
	part("B", R3, "fired 2 A");
	rec("B", R3, "on." I2, NULL);
	rec("B", R3, "1.ok", I2);
	/* two older runs: the root's own item failed (nothing after it has a part), and C given up */
	part("A", R_ROOT, "fired 2 A");
	rec("A", R_ROOT, "0.ok", I1);
	rec("A", R_ROOT, "1.failed", I1 ": timeout (signal 15): ran past 1 s");
	for (int k = 0; k < 2; k++) {
		part(jobs[k], R_GIVEN, "fired 2 A");
		rec(jobs[k], R_GIVEN, "0.ok", I1);
		rec(jobs[k], R_GIVEN, "1.ok", I2);
	}
	part("C", R_GIVEN, "given-up - 16 newer runs started before every upstream job of it had ended");
	long long t1 = now_ms();

	int bad = 0;
	char want[8192];
	is_int(ctl("runs", "A", NULL), 0, "runs A: exit 0");
	snprintf(want, sizeof want, GRAPH "5 of 5 runs kept, newest first\n%s%s%s%s%s", run3, run2, run1, run_root, run_given);
	if (!is_str(mask(out, t0, t1, &bad), want, "  each run, newest first: its state and why, each job's")) diag("%s", out);
	is_int(bad, 0, "  the jobs' times are the nodes' (now)");
	is_int(ctl("runs", "A", "--limit", "1", NULL), 0, "runs A --limit 1: exit 0");
	snprintf(want, sizeof want, GRAPH "1 of 5 runs kept, newest first\n%s", run3);
	is_str(mask(out, t0, t1, &bad), want, "  the newest run alone");
	is_int(ctl("runs", "A", "--json", "--limit", "3", NULL), 0, "runs A --json --limit 3: exit 0");
	char *json = strdup(out);
	tjson_keep(json);
	if (!is_str(mask(json, t0, t1, &bad), json_want, "  the document, to the byte")) diag("%s", out);
	is_int(bad, 0, "  its times within the test's run");
	struct tjson *d = tjson_doc(json);
	ok(d && iso_ms(tjson_text(d, "runs.1.jobs.C.failed.0.at")) >= iso_ms(tjson_text(d, "runs.1.jobs.C.started")),
	   "  C's failure came after it fired");

	is_int(ctl("runs", "A", "--json", NULL), 0, "runs A --json: exit 0");
	json = strdup(out);
	tjson_keep(json);
	d = tjson_doc(json);
	is_str(tjson_text(d, "runs.3.state"), "failed", "  the root's failed run: failed");
	is_str(tjson_text(d, "runs.3.jobs.D.why"), "B did not fire in the run", "  D skipped: B did not fire");
	is_str(tjson_text(d, "runs.4.state"), "given-up", "  the run C gave up: given-up");
	is_str(tjson_text(d, "runs.4.why"), "C given up: 16 newer runs started before every upstream job of it had ended",
	       "  its why");
	is_str(tjson_text(d, "runs.4.jobs.C.state"), "skipped", "  C: skipped");

	/* ---- the workflows ---- */
	is_int(ctl("runs", NULL), 0, "runs without ROOT: exit 0");
	is_str(out, "ROOT  JOBS\nA     A, B, C, D\n", "  each workflow: its root and jobs");
	is_int(ctl("runs", "--json", NULL), 0, "runs --json: exit 0");
	char *wfs = strdup(out);
	tjson_keep(wfs);
	is_str(wfs, "{\"workflows\":[{\"root\":\"A\",\"jobs\":[\"A\",\"B\",\"C\",\"D\"]}]}\n", "  as JSON");

	/* ---- not a root ---- */
	is_int(ctl("runs", "B", NULL), 2, "runs B (runs after A): exit 2");
	is_str(err, "ejobctl runs: job 'B' is not a workflow's root: it runs after A (dependsOn); give its workflow's root: "
	       "ejobctl runs A\n", "  names the root to give");
	is_int(ctl("runs", "D", NULL), 2, "runs D: exit 2");
	is_str(err, "ejobctl runs: job 'D' is not a workflow's root: it runs after B, C (dependsOn); give its workflow's "
	       "root: ejobctl runs A\n", "  names the root, through B");
	is_int(ctl("runs", "L", NULL), 2, "runs L (in no workflow): exit 2");
	is_str(err, "ejobctl runs: job 'L' is in no workflow: it runs after no job and no job runs after it (dependsOn); "
	       "give a workflow's root ('ejobctl runs' lists them)\n", "  says so");
	is_int(ctl("runs", "nosuchjob", NULL), 2, "runs of an unknown job: exit 2");
	is_str(err, "ejobctl runs: no job 'nosuchjob' in namespace /t135 (5 jobs there; 'ejobctl jobs' lists them)\n",
	       "  says so");
	is_int(ctl("runs", "A", "--limit", "0", NULL), 2, "--limit 0: exit 2");
	ok(!strncmp(err, "ejobctl runs: --limit 0: give a number of runs, 1 to 100\n", 57), "  says what it takes");

	/* ---- the HTTP API ---- */
	struct tserve sv;
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, NULL };
	tserve_start(&sv, "serve", args);
	char *body = NULL;
	is_int(tserve_http(&sv, "GET", "/api/v1/workflows/A/runs", NULL, NULL, NULL, &body), 200,
	       "GET /api/v1/workflows/A/runs: 200");
	is_str(body, json, "  runs A --json, to the byte");
	free(body);
	is_int(tserve_http(&sv, "GET", "/api/v1/workflows/A/runs?limit=1", NULL, NULL, NULL, &body), 200, "?limit=1: 200");
	struct tjson *l = tjson_doc(body);
	ok(l && !strcmp(tjson_text(l, "runs.0.run"), R3) && !strcmp(tjson_text(l, "runs.1"), "(missing)"),
	   "  the newest run alone");
	tjson_keep(body);
	is_int(tserve_http(&sv, "GET", "/api/v1/workflows", NULL, NULL, NULL, &body), 200, "GET /api/v1/workflows: 200");
	is_str(body, wfs, "  runs --json, to the byte");
	free(body);
	is_int(tserve_http(&sv, "GET", "/api/v1/workflows/nosuchjob/runs", NULL, NULL, NULL, &body), 404,
	       "an unknown job: 404");
	is_str(body, "{\"error\":\"no job 'nosuchjob' in namespace /t135 (5 jobs there; 'ejobctl jobs' lists them)\","
	       "\"hint\":\"GET /api/v1/jobs, /servers, /instances list what there is\"}\n", "  says so");
	free(body);
	is_int(tserve_http(&sv, "GET", "/api/v1/workflows/B/runs", NULL, NULL, NULL, &body), 400, "B, not a root: 400");
	is_str(body, "{\"error\":\"job 'B' is not a workflow's root: it runs after A (dependsOn); give its workflow's root: "
	       "ejobctl runs A\",\"hint\":\"GET /api/v1/workflows lists the workflows' roots\"}\n", "  names the root");
	free(body);
	is_int(tserve_http(&sv, "GET", "/api/v1/workflows/A/runs?limit=x", NULL, NULL, NULL, &body), 400, "?limit=x: 400");
	free(body);
	is_int(tserve_http(&sv, "POST", "/api/v1/workflows/A/runs", NULL, NULL, NULL, &body), 405, "POST: 405");
	free(body);
	tserve_stop(&sv);
	tzkup_end(&u);
	done_testing();
}
