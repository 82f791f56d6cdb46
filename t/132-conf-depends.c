/* t/132-conf-depends.c: dependsOn, the jobs a job runs after (workflows), as the file and the
 * config node hold it:
 *   - the file: a flow or block list of job names, in the given order; none, [] and ~ are none;
 *     listed among the job keys (conf_keys, what man/ejob.yaml.5.scd is checked against);
 *   - the node: props ejob.dependsOn, the names separated by one space, written after ejob's
 *     other props; read back and taken out of props; node -> job -> node byte for byte; a node
 *     without ejob.type keeps it as an ordinary prop; a top-level dependsOn is refused, naming
 *     the prop;
 *   - equality: the same names in the same order are equal, another name or order is a change
 *     of key dependsOn;
 *   - each bad form with its exact message, in the file (an error) and in a node (that key's
 *     own, kept: conf_node_take keeps the value in force);
 *   - a file's workflows are checked at load (a cycle, an unknown job, cron and dependsOn, two
 *     roots: said at the job), but not with conf_opts_t.flow_open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "conf/conf_keys.h"
#include "t/lib/tconf.h"
#include "t/tap.h"

#define HEAD TCONF_HEAD
#define ERRORS TCONF_ERRORS
#define SCRIPT "    type: script\n    shardingTotalCount: 1\n    props: {script.command.line: /bin/true}\n"

static void dump_diags(const conf_diags_t *d)
{
	for (size_t i = 0; d && i < conf_diags_count(d); i++) diag("%s", conf_diags_get(d, i)->text);
}

/* a job's dependsOn as "a c" ("-" for none) */
static const char *deps(const conf_job_t *j)
{
	static char b[256];
	if (!j) return "(no job)";
	if (!j->flow.n) return "-";
	b[0] = '\0';
	for (size_t i = 0; i < j->flow.n; i++)
		snprintf(b + strlen(b), sizeof b - strlen(b), "%s%s", i ? " " : "", j->flow.depends_on[i]);
	return b;
}

static conf_job_t *node(const char *yaml, conf_diags_t **d)
{
	return conf_node_parse(yaml, strlen(yaml), "/ns/d/config", d);
}

/* a node whose dependsOn is bad: taken, one error of props.ejob.dependsOn alone, dependsOn none */
static void node_kept(const char *name, const char *deps_yaml, const char *want)
{
	char y[1024];
	snprintf(y, sizeof y, "jobName: d\nprops:\n  ejob.type: script\n  script.command.line: /bin/true\n  ejob.dependsOn: %s\n"
	         "shardingTotalCount: 1\n", deps_yaml);
	conf_diags_t *d;
	conf_job_t *j = node(y, &d);
	const conf_diag_t *g = conf_diags_count(d) == 1 ? conf_diags_get(d, 0) : NULL;
	ok(j && g && g->level == CONF_DIAG_KEY && j->kept.n == 1 && !strcmp(j->kept.keys[0], "props.ejob.dependsOn") &&
	   !j->flow.n, "node, %s: taken, one error of props.ejob.dependsOn alone", name);
	is_str(g ? g->text : NULL, want, "node, %s: its text", name);
	if (!g) dump_diags(d);
	conf_job_free(j);
	conf_diags_free(d);
}

static void file_form(void)
{
	conf_diags_t *d;
	conf_t *c = tconf_parse(HEAD "jobs:\n  a:\n" SCRIPT "    cron: '0 0 1 * * ?'\n"
	                        "  c:\n" SCRIPT "    dependsOn: [a]\n"
	                        "  b:\n" SCRIPT "    dependsOn:\n      - c\n      - a\n"
	                        "  e:\n" SCRIPT "    dependsOn: []\n"
	                        "  f:\n" SCRIPT "    dependsOn: ~\n", NULL, &d);
	if (!ok(c != NULL, "a file with dependsOn (flow and block lists) loads")) dump_diags(d);
	conf_diags_free(d);
	if (!c) BAIL_OUT("cannot go on");
	is_str(deps(conf_find_job(c, "a")), "-", "  a: none");
	is_str(deps(conf_find_job(c, "c")), "a", "  c: [a]");
	is_str(deps(conf_find_job(c, "b")), "c a", "  b: c, a, in the given order");
	is_str(deps(conf_find_job(c, "e")), "-", "  e: [] is none");
	is_str(deps(conf_find_job(c, "f")), "-", "  f: ~ is none");

	/* the node */
	const conf_job_t *b = conf_find_job(c, "b");
	char *y = conf_node_emit(b, NULL);
	is_str(y, "description: ''\ndisabled: false\nfailover: false\njobName: b\njobParameter: ''\nmaxTimeDiffSeconds: -1\n"
	          "misfire: true\nmonitorExecution: true\noverwrite: false\nprops:\n  script.command.line: /bin/true\n"
	          "  ejob.timeoutSeconds: '0'\n  ejob.maxRetries: '0'\n  ejob.type: script\n  ejob.dependsOn: c a\n"
	          "reconcileIntervalMinutes: 10\nshardingItemParameters: ''\nshardingTotalCount: 1\nstaticSharding: false\n",
	       "b's config node: props ejob.dependsOn 'c a'");
	char *ya = conf_node_emit(conf_find_job(c, "a"), NULL), *ye = conf_node_emit(conf_find_job(c, "e"), NULL);
	ok(ya && ye && !strstr(ya, "dependsOn") && !strstr(ye, "dependsOn"), "  none: no ejob.dependsOn (a, e)");
	free(ya), free(ye);

	/* node -> job -> node */
	conf_job_t *n = node(y, &d);
	if (!ok(n != NULL, "the node parses")) dump_diags(d);
	conf_diags_free(d);
	is_str(deps(n), "c a", "  dependsOn c a, in order");
	ok(n && n->n_props == 1 && !strcmp(n->props[0].key, "script.command.line"), "  taken out of props");
	ok(n && conf_job_equal(n, b), "  equal to the file's job");
	char *y2 = n ? conf_node_emit(n, NULL) : NULL;
	is_str(y2, y, "  written back byte for byte");
	free(y2);

	/* equality */
	const char *keys[4];
	const conf_job_t *cj = conf_find_job(c, "c");
	size_t nk = conf_job_diff(cj, b, keys, 4);
	ok(nk == 2 && !strcmp(keys[0], "jobName") && !strcmp(keys[1], "dependsOn"), "c and b differ in jobName and dependsOn");
	conf_job_t *m = node("jobName: b\nprops:\n  ejob.type: script\n  script.command.line: /bin/true\n"
	                     "  ejob.dependsOn: a c\nshardingTotalCount: 1\n", &d);
	conf_diags_free(d);
	nk = m ? conf_job_diff(m, b, keys, 4) : 0;
	ok(nk == 1 && !strcmp(keys[0], "dependsOn") && !conf_job_equal(m, b), "another order is a change of dependsOn");
	conf_job_free(m);
	m = node("jobName: b\nprops:\n  ejob.type: script\n  script.command.line: /bin/true\n"
	         "shardingTotalCount: 1\n", &d);
	conf_diags_free(d);
	nk = m ? conf_job_diff(m, b, keys, 4) : 0;
	ok(nk == 1 && !strcmp(keys[0], "dependsOn"), "none is a change of dependsOn");
	conf_job_free(m);

	/* conf_node_take keeps the value in force for a bad one */
	char why[512];
	const char *bad = "jobName: b\nprops:\n  ejob.type: script\n  script.command.line: /bin/true\n"
	                  "  ejob.dependsOn: c  a\nshardingTotalCount: 1\n";
	conf_job_t *t = conf_node_take(bad, strlen(bad), "/ns/b/config", "b", "SCRIPT", n, why, sizeof why, NULL);
	is_str(deps(t), "c a", "conf_node_take of a bad ejob.dependsOn: the value in force kept");
	conf_job_free(t);
	t = conf_node_take(bad, strlen(bad), "/ns/b/config", "b", "SCRIPT", NULL, why, sizeof why, NULL);
	is_str(deps(t), "-", "  with nothing in force: none");
	conf_job_free(t);
	conf_job_free(n);
	free(y);
	conf_free(c);

	/* the key list (man/ejob.yaml.5.scd is checked against it: t/120) */
	char k[128][CONF_KEY_PATH_MAX];
	size_t nkeys = conf_keys(k, 128), found = 0;
	for (size_t i = 0; i < nkeys && i < 128; i++) found += !strcmp(k[i], "jobs.<name>.dependsOn");
	is_int((int)found, 1, "conf_keys lists jobs.<name>.dependsOn");
}

static void node_form(void)
{
	conf_diags_t *d;
	/* without ejob.type: an ordinary prop, kept as written */
	conf_job_t *j = node("jobName: d\nprops:\n  ejob.dependsOn: a b\nshardingTotalCount: 1\n", &d);
	ok(j && !j->flow.n && j->n_props == 1 && !strcmp(j->props[0].value, "a b"),
	   "a node without ejob.type: ejob.dependsOn is an ordinary prop");
	char *y = j ? conf_node_emit(j, NULL) : NULL;
	ok(y && strstr(y, "props:\n  ejob.dependsOn: a b\n"), "  written back as it was");
	free(y);
	conf_job_free(j);
	conf_diags_free(d);
	j = node("jobName: d\nprops:\n  ejob.type: script\n  script.command.line: x\n  ejob.dependsOn: ''\n"
	         "shardingTotalCount: 1\n", &d);
	ok(j && !j->flow.n && conf_diags_count(d) == 0, "ejob.dependsOn '' is none");
	conf_job_free(j);
	conf_diags_free(d);
	/* a top-level dependsOn: ElasticJob cannot load the node */
	j = node("dependsOn: a\njobName: d\nshardingTotalCount: 1\n", &d);
	ok(!j && conf_diags_count(d) == 1, "a top-level dependsOn: refused");
	is_str(conf_diags_count(d) ? conf_diags_get(d, 0)->text : NULL,
	       "/ns/d/config:1:1: dependsOn: ejob's own key; in a config node it is the prop ejob.dependsOn (props: "
	       "{ejob.dependsOn: ...}): ElasticJob cannot load a node with a key its JobConfigurationPOJO does not have",
	       "  naming the prop");
	conf_diags_free(d);

	node_kept("a list", "[a, b]",
	          "/ns/d/config:5:3: props.ejob.dependsOn: must be a string of the jobs this one runs after, their names "
	          "separated by spaces, e.g. 'extract load' (got a list)");
	node_kept("nothing", "",
	          "/ns/d/config:5:3: props.ejob.dependsOn: must be a string of the jobs this one runs after, their names "
	          "separated by spaces, e.g. 'extract load' (got nothing)");
	node_kept("two spaces", "a  b",
	          "/ns/d/config:5:21: props.ejob.dependsOn: an empty name (two spaces together, or one at an end); "
	          "separate the names with one space");
	node_kept("a space at the end", "'a '",
	          "/ns/d/config:5:22: props.ejob.dependsOn: an empty name (two spaces together, or one at an end); "
	          "separate the names with one space");
	node_kept("a name with '/'", "a b/c",
	          "/ns/d/config:5:21: props.ejob.dependsOn: the name \"b/c\" contains '/'; a job name must be 1-255 bytes "
	          "without '/', '@-@', whitespace or control characters, and not '.' or '..'");
	node_kept("a tab", "\"a\\tb\"",
	          "/ns/d/config:5:19: props.ejob.dependsOn: the name \"a\\tb\" contains whitespace or a control character; "
	          "a job name must be 1-255 bytes without '/', '@-@', whitespace or control characters, and not '.' or "
	          "'..'");
	node_kept("the job itself", "a d",
	          "/ns/d/config:5:21: props.ejob.dependsOn: names the job itself (\"d\"); a job cannot run after itself: "
	          "take it out");
	node_kept("a name twice", "a b a",
	          "/ns/d/config:5:23: props.ejob.dependsOn: names \"a\" twice; give each job once");
}

static void file_errors(void)
{
	ERRORS("dependsOn: a scalar", HEAD "jobs:\n  d:\n" SCRIPT "    dependsOn: a\n",
	       "t.yaml:9:5: jobs.d.dependsOn: must be a list of the jobs this one runs after, e.g. [extract, load] (got a "
	       "scalar)");
	ERRORS("dependsOn: a mapping", HEAD "jobs:\n  d:\n" SCRIPT "    dependsOn: {a: 1}\n",
	       "t.yaml:9:5: jobs.d.dependsOn: must be a list of the jobs this one runs after, e.g. [extract, load] (got a "
	       "mapping)");
	ERRORS("elements that are no names", HEAD "jobs:\n  d:\n" SCRIPT "    dependsOn: [[a], {b: c}, ~]\n",
	       "t.yaml:9:17: jobs.d.dependsOn[0]: must be a job name (got a list)",
	       "t.yaml:9:22: jobs.d.dependsOn[1]: must be a job name (got a mapping)",
	       "t.yaml:9:30: jobs.d.dependsOn[2]: must be a job name (got nothing)");
	ERRORS("an empty name", HEAD "jobs:\n  d:\n" SCRIPT "    dependsOn: [a, '']\n",
	       "t.yaml:9:20: jobs.d.dependsOn[1]: an empty name; give the name of a job this one runs after");
	ERRORS("a name with a space, one with '/'", HEAD "jobs:\n  d:\n" SCRIPT "    dependsOn: [a b, c/d]\n",
	       "t.yaml:9:17: jobs.d.dependsOn[0]: the name \"a b\" contains whitespace or a control character; a job name "
	       "must be 1-255 bytes without '/', '@-@', whitespace or control characters, and not '.' or '..'",
	       "t.yaml:9:22: jobs.d.dependsOn[1]: the name \"c/d\" contains '/'; a job name must be 1-255 bytes without "
	       "'/', '@-@', whitespace or control characters, and not '.' or '..'");
	ERRORS("the job itself, a name twice", HEAD "jobs:\n  d:\n" SCRIPT "    dependsOn: [a, d, a]\n",
	       "t.yaml:9:20: jobs.d.dependsOn[1]: names the job itself (\"d\"); a job cannot run after itself: take it out",
	       "t.yaml:9:23: jobs.d.dependsOn[2]: names \"a\" twice; give each job once");
	ERRORS("props ejob.dependsOn", HEAD "jobs:\n  d:\n    type: external\n    shardingTotalCount: 1\n"
	       "    props: {ejob.dependsOn: a}\n",
	       "t.yaml:8:13: jobs.d.props.ejob.dependsOn: props named ejob.* are ejob's own; set the job keys type, "
	       "timeoutSeconds, maxRetries, concurrency and dependsOn instead");

	/* the workflows, checked at load */
	ERRORS("a cycle", HEAD "jobs:\n  a:\n" SCRIPT "    cron: '0 0 1 * * ?'\n  b:\n" SCRIPT "    dependsOn: [a, c]\n"
	       "  c:\n" SCRIPT "    dependsOn: [b]\n",
	       "t.yaml:10:3: jobs.b: dependsOn: a cycle: b -> c -> b; each runs after the one before it, so none of them "
	       "ever runs: take one out of the next one's dependsOn");
	ERRORS("no such job", HEAD "jobs:\n  extract:\n" SCRIPT "  load:\n" SCRIPT "    dependsOn: [extrakt]\n",
	       "t.yaml:9:3: jobs.load: dependsOn: no job named extrakt (did you mean 'extract'?); add a job extrakt, or "
	       "take it out of dependsOn");
	ERRORS("cron and dependsOn", HEAD "jobs:\n  a:\n" SCRIPT "  b:\n" SCRIPT "    cron: '0 0 1 * * ?'\n"
	       "    dependsOn: [a]\n",
	       "t.yaml:9:3: jobs.b: cron and dependsOn: a job with dependsOn fires when the jobs it names end, not on a "
	       "cron; remove one of them");
	ERRORS("two roots", HEAD "jobs:\n  a:\n" SCRIPT "  e:\n" SCRIPT "  d:\n" SCRIPT "    dependsOn: [a, e]\n",
	       "t.yaml:9:3: jobs.e: dependsOn: a workflow has one root, and a and e both start this one (a -> d <- e); "
	       "give e a dependsOn, or split the workflow");
	ERRORS("a job that does not load is no error of its dependents", HEAD "jobs:\n  a:\n    type: script\n"
	       "  b:\n" SCRIPT "    dependsOn: [a]\n",
	       "t.yaml:5:3: jobs.a.shardingTotalCount: missing; every job needs the number of shard items, 1-10000",
	       "t.yaml:5:3: jobs.a.props: a script job needs props 'script.command.line', the command to run (split into "
	       "arguments, no shell)");

	/* flow_open: names of jobs elsewhere (the namespace's), not checked here */
	conf_opts_t o = { .flow_open = true };
	conf_diags_t *d;
	conf_t *c = tconf_parse(HEAD "jobs:\n  load:\n" SCRIPT "    dependsOn: [extract]\n", &o, &d);
	ok(c && !strcmp(deps(&c->jobs[0]), "extract"), "with flow_open, dependsOn may name a job the file does not have");
	dump_diags(c ? NULL : d);
	conf_free(c);
	conf_diags_free(d);
	c = tconf_parse(HEAD "jobs:\n  load:\n" SCRIPT "    dependsOn: [extract]\n", NULL, &d);
	ok(!c, "  without it, no");
	conf_free(c);
	conf_diags_free(d);
}

int main(void)
{
	plan(54);
	file_form();
	node_form();
	file_errors();
	return done_testing();
}
