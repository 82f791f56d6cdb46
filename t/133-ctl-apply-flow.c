/* t/133-ctl-apply-flow.c: workflows (dependsOn) written by ejobctl on a real ZooKeeper, each write
 * checked with the namespace's other jobs before anything is written:
 *   - apply of a file with a workflow (a fan-out and a fan-in) writes each job's config node with
 *     props ejob.dependsOn, byte for byte as expected; again: unchanged; ejobctl validate says what
 *     each job runs after, and a file's cycle at its job;
 *   - apply of a file that would close a cycle through jobs already in the namespace is refused
 *     (exit 2) with the cycle's path in run order, and writes nothing (the namespace's dump is the
 *     same); so are a name that is no job of the namespace, a cron beside dependsOn, a second root
 *     in a workflow, and --prune of an upstream a kept job runs after;
 *   - config set of a node that closes a cycle: refused, nothing written; a sound one is written;
 *   - the HTTP API (ejobctl serve): a PUT that updates a job into a cycle, and a PUT that creates a
 *     job closing a cycle, each answer 400 with the message, and write nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "t/lib/tlib.h"
#include "t/lib/tserve.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;
static char *out, *err;

#define ctl(...) tzkup_ctl(&u, &out, &err, __VA_ARGS__)
#define JOB(name, extra) "  " name ":\n    type: script\n    shardingTotalCount: 1\n    label: etl\n" \
                         "    props: {script.command.line: /bin/true}\n" extra
#define CYCLE_FIX "each runs after the one before it, so none of them ever runs: take one out of the next one's dependsOn"

static const char *file(const char *name, const char *text)
{
	static char path[8][600];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 600, "%s/%s", tlib_tmpdir(), name);
	if (tlib_write_file(p, text, strlen(text)) < 0) BAIL_OUT("cannot write %s", p);
	return p;
}

static char *dump(void)
{
	char *d = tzk_dump(u.zh, "/t133", NULL);
	if (!d) BAIL_OUT("cannot dump /t133");
	return d;
}

/* the namespace as it was (before): 1; else 0 and the first line that differs */
static int unchanged(const char *before)
{
	char *now = dump();
	int same = !strcmp(now, before);
	if (!same) {
		const char *a = before, *b = now;
		while (*a && *a == *b) a++, b++;
		while (a > before && a[-1] != '\n') a--, b--;
		diag("was '%.*s', now '%.*s'", (int)strcspn(a, "\n"), a, (int)strcspn(b, "\n"), b);
	}
	free(now);
	return same;
}

/* a script job's config node as ejob writes it (label etl, one item), cron and props given */
static const char *node(const char *name, const char *cron, const char *props)
{
	static char b[4][2048];
	static int k;
	char *p = b[k++ % 4];
	snprintf(p, 2048,
	         "%s%s%sdescription: ''\ndisabled: false\nfailover: false\njobName: %s\njobParameter: ''\nlabel: etl\n"
	         "maxTimeDiffSeconds: -1\nmisfire: true\nmonitorExecution: true\noverwrite: false\nprops:\n%s"
	         "reconcileIntervalMinutes: 10\nshardingItemParameters: ''\nshardingTotalCount: 1\nstaticSharding: false\n",
	         cron ? "cron: " : "", cron ? cron : "", cron ? "\n" : "", name, props);
	return p;
}

#define PROPS "  script.command.line: /bin/true\n  ejob.timeoutSeconds: '0'\n  ejob.maxRetries: '0'\n  ejob.type: script\n"

int main(void)
{
	tlib_init(90);
	tzkup_start(&u, 200, "t133", 4000);

	/* ---- a workflow: extract, then transform, then load and report, then publish after both ---- */
	const char *wf = file("wf.yaml", "jobs:\n" JOB("extract", "    cron: '0 0 1 * * ?'\n")
	                                 JOB("transform", "    dependsOn: [extract]\n")
	                                 JOB("load", "    dependsOn: [transform]\n")
	                                 JOB("report", "    dependsOn:\n      - transform\n")
	                                 JOB("publish", "    dependsOn: [report, load]\n")
	                                 JOB("lone", "    cron: '0 0 2 * * ?'\n"));
	if (!is_int(ctl("apply", "-f", wf, NULL), 0, "apply of a file with a workflow: exit 0")) diag("%s%s", out, err);
	is_str(tzkup_data(&u, "/t133/extract/config"), node("extract", "0 0 1 * * ?", PROPS),
	       "  extract's node: its cron, no ejob.dependsOn");
	is_str(tzkup_data(&u, "/t133/transform/config"), node("transform", NULL, PROPS "  ejob.dependsOn: extract\n"),
	       "  transform's node: ejob.dependsOn extract");
	is_str(tzkup_data(&u, "/t133/load/config"), node("load", NULL, PROPS "  ejob.dependsOn: transform\n"),
	       "  load's node: ejob.dependsOn transform");
	is_str(tzkup_data(&u, "/t133/publish/config"), node("publish", NULL, PROPS "  ejob.dependsOn: report load\n"),
	       "  publish's node: ejob.dependsOn 'report load', in the given order");
	is_int(ctl("apply", "-f", wf, NULL), 0, "apply again: exit 0");
	ok(strstr(out, "\npublish    unchanged") && strstr(out, "\ntransform  unchanged"), "  every job unchanged");

	/* ejobctl validate says what each job runs after, and refuses a file's cycle where it is */
	char text[4096], *vo = NULL, *ve = NULL;
	snprintf(text, sizeof text, "regCenter: {serverLists: \"%s\", namespace: t133}\njobs:\n"
	         JOB("a", "    cron: '0 0 1 * * ?'\n") JOB("b", "    dependsOn: [a]\n") JOB("c", "    dependsOn: [b, a]\n"),
	         u.connect);
	const char *va[] = { BUILT("tools/ejobctl"), "validate", file("v.yaml", text), NULL };
	int st = tlib_run(va, &vo, &ve);
	if (!ok(st == 0 && strstr(vo, "\nb: script, after a (dependsOn), 1 item\nc: script, after b, a (dependsOn), 1 item\n"),
	        "validate: each job in a workflow 'after b, a (dependsOn)'"))
		diag("%s%s", vo, ve);
	free(vo), free(ve);
	snprintf(text, sizeof text, "regCenter: {serverLists: \"%s\", namespace: t133}\njobs:\n" JOB("a", "    dependsOn: [b]\n")
	         JOB("b", "    dependsOn: [a]\n"), u.connect);
	va[2] = file("vc.yaml", text);
	st = tlib_run(va, &vo, &ve);
	is_int(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 2, "validate of a file with a cycle: exit 2");
	char want[1024];
	snprintf(want, sizeof want, "%s:3:3: jobs.a: dependsOn: a cycle: a -> b -> a; " CYCLE_FIX "\n", va[2]);
	is_str(ve, want, "  said at the job, with the cycle's path");
	free(vo), free(ve);

	/* ---- refused applies: nothing written ---- */
	char *before = dump();
	const char *cyc = file("cycle.yaml", "jobs:\n" JOB("extract", "    dependsOn: [load]\n"));
	is_int(ctl("apply", "-f", cyc, NULL), 2, "apply closing a cycle through the namespace's jobs: exit 2");
	is_str(err, "ejobctl apply: job extract: dependsOn: a cycle: extract -> transform -> load -> extract; " CYCLE_FIX
	       "; nothing written\n", "  the cycle's path in run order");
	ok(unchanged(before), "  nothing written");
	is_int(ctl("apply", "-f", cyc, "--dry-run", NULL), 2, "  --dry-run: the same, exit 2");

	const char *unknown = file("unknown.yaml", "jobs:\n" JOB("audit", "    dependsOn: [lod]\n"));
	is_int(ctl("apply", "-f", unknown, NULL), 2, "apply of a job after one the namespace does not have: exit 2");
	is_str(err, "ejobctl apply: job audit: dependsOn: no job named lod (did you mean 'load'?); add a job lod, or take "
	       "it out of dependsOn; nothing written\n", "  names it, with the job meant");
	const char *cron = file("cron.yaml", "jobs:\n" JOB("audit", "    cron: '0 0 3 * * ?'\n    dependsOn: [load]\n"));
	is_int(ctl("apply", "-f", cron, NULL), 2, "apply of a job with a cron and dependsOn: exit 2");
	is_str(err, "ejobctl apply: job audit: cron and dependsOn: a job with dependsOn fires when the jobs it names end, "
	       "not on a cron; remove one of them; nothing written\n", "  says to remove one");
	const char *roots = file("roots.yaml", "jobs:\n" JOB("audit", "    dependsOn: [publish, lone]\n"));
	is_int(ctl("apply", "-f", roots, NULL), 2, "apply joining two workflows' roots: exit 2");
	is_str(err, "ejobctl apply: job lone: dependsOn: a workflow has one root, and extract and lone both start this one "
	       "(extract -> transform -> load -> publish -> audit <- lone); give lone a dependsOn, or split the workflow; "
	       "nothing written\n", "  names both roots and the path between them");
	const char *pruned = file("pruned.yaml", "jobs:\n" JOB("extract", "    cron: '0 0 1 * * ?'\n")
	                                         JOB("transform", "    dependsOn: [extract]\n")
	                                         JOB("load", "    dependsOn: [transform]\n")
	                                         JOB("publish", "    dependsOn: [report, load]\n")
	                                         JOB("lone", "    cron: '0 0 2 * * ?'\n"));
	is_int(ctl("apply", "-f", pruned, "--prune", NULL), 2, "apply --prune of report, which publish runs after: exit 2");
	is_str(err, "ejobctl apply: job publish: dependsOn: no job named report; add a job report, or take it out of "
	       "dependsOn; nothing written\n", "  names what publish would lose");
	ok(unchanged(before), "  nothing written by any of them");
	free(before);

	/* ---- config set ---- */
	before = dump();
	char cfg[2048];
	snprintf(cfg, sizeof cfg, "%s", node("extract", NULL, PROPS "  ejob.dependsOn: publish\n"));
	const char *cn = file("extract-node.yaml", cfg);
	is_int(ctl("config", "set", "extract", cn, NULL), 2, "config set of a node closing a cycle: exit 2");
	is_str(err, "ejobctl config set: job extract: dependsOn: a cycle: extract -> transform -> load -> publish -> "
	       "extract; " CYCLE_FIX "; nothing written\n", "  the cycle's path");
	ok(unchanged(before), "  nothing written");
	free(before);
	snprintf(cfg, sizeof cfg, "%s", node("report", NULL, PROPS "  ejob.dependsOn: load\n"));
	const char *rn = file("report-node.yaml", cfg);
	is_int(ctl("config", "set", "report", rn, NULL), 0, "config set of a sound one (report after load): exit 0");
	is_str(tzkup_data(&u, "/t133/report/config"), cfg, "  written as given");

	/* ---- the HTTP API ---- */
	struct tserve sv;
	const char *args[] = { "--zk", u.connect, "--namespace", u.ns, NULL };
	tserve_start(&sv, "serve", args);
	before = dump();
	char *body = NULL;
	const char *upd = "{\"type\": \"script\", \"shardingTotalCount\": 1, \"label\": \"etl\", \"dependsOn\": [\"load\"],"
	                  " \"props\": {\"script.command.line\": \"/bin/true\"}}";
	is_int(tserve_http(&sv, "PUT", "/api/v1/jobs/extract", NULL, NULL, upd, &body), 400,
	       "PUT of extract after load (a cycle): 400");
	is_str(body, "{\"error\":\"job extract: dependsOn: a cycle: extract -> transform -> load -> extract; " CYCLE_FIX
	       "; nothing written\",\"hint\":\"fix the request; nothing was written\"}\n", "  the message");
	ok(unchanged(before), "  nothing written");
	free(body), free(before);
	/* a job written behind ejobctl's back, after one that does not exist yet: creating that one closes a cycle */
	if (tzk_create(u.zh, "/t133/behind/config", node("behind", NULL, PROPS "  ejob.dependsOn: newjob\n"), 0, NULL) != ZOK)
		BAIL_OUT("cannot create /t133/behind/config");
	before = dump();
	const char *create = "{\"type\": \"script\", \"shardingTotalCount\": 1, \"label\": \"etl\", \"dependsOn\": "
	                     "[\"behind\"], \"props\": {\"script.command.line\": \"/bin/true\"}}";
	body = NULL;
	is_int(tserve_http(&sv, "PUT", "/api/v1/jobs/newjob", NULL, NULL, create, &body), 400,
	       "PUT creating newjob after behind, which runs after newjob: 400");
	is_str(body, "{\"error\":\"job newjob: dependsOn: a cycle: newjob -> behind -> newjob; " CYCLE_FIX
	       "; nothing written\",\"hint\":\"fix the request; nothing was written\"}\n", "  the message");
	ok(unchanged(before) && tzkup_missing(&u, "/t133/newjob"), "  nothing written: no /t133/newjob");
	free(body), free(before);
	tserve_stop(&sv);

	free(out), free(err);
	tzkup_end(&u);
	return done_testing();
}
