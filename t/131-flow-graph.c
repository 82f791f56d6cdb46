/* t/131-flow-graph.c: conf_flow_check, the workflows' graph (conf/conf_flow.h), on jobs made by
 * hand:
 *   - accepted: no workflow, a chain, fan-out, fan-in (a diamond), several workflows and lone
 *     jobs side by side, a root without cron (triggered by hand), 10,000 jobs in one chain;
 *   - refused, each with its exact message and the job it is about: a name that is no job (with
 *     "did you mean"), the job itself, a name twice, cron and dependsOn both, a cycle (in run
 *     order, from its first job), a workflow without a root (a cycle), two roots (the nearest
 *     pair, and the path that joins them), a cycle of 10,000;
 *   - a message that does not fit is cut with "...". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "conf/conf_flow.h"
#include "t/tap.h"

#define MAXJ 16

/* jobs from a spec: "A*; B: A; C: A B" (a * after the name: a cron; after ':' its dependsOn) */
struct set {
	conf_job_t j[MAXJ];
	const conf_job_t *p[MAXJ];
	char *names[MAXJ][MAXJ];
	size_t n;
	char buf[1024];
};

static void build(struct set *s, const char *spec)
{
	memset(s, 0, sizeof *s);
	snprintf(s->buf, sizeof s->buf, "%s", spec);
	char *save = NULL;
	for (char *part = strtok_r(s->buf, ";", &save); part; part = strtok_r(NULL, ";", &save)) {
		conf_job_t *j = &s->j[s->n];
		char *deps = strchr(part, ':');
		if (deps) *deps++ = '\0';
		char *name = part + strspn(part, " ");
		name[strcspn(name, " ")] = '\0';
		size_t nl = strlen(name);
		if (nl && name[nl - 1] == '*') {
			name[nl - 1] = '\0';
			j->cron = "0 0 0 * * ?";
		}
		j->name = name;
		char *save2 = NULL;
		for (char *d = deps ? strtok_r(deps, " ", &save2) : NULL; d; d = strtok_r(NULL, " ", &save2))
			s->names[s->n][j->flow.n++] = d;
		j->flow.depends_on = s->names[s->n];
		s->p[s->n] = j;
		s->n++;
	}
}

static void accepted(const char *name, const char *spec)
{
	struct set s;
	char err[1024];
	const char *at = "x";
	build(&s, spec);
	int r = conf_flow_check(s.p, s.n, err, sizeof err, &at);
	if (!ok(r == 0 && !*err && !at, "%s: accepted", name)) diag("%s", err);
}

static void refused(const char *name, const char *spec, const char *want, const char *want_at)
{
	struct set s;
	char err[1024];
	const char *at = NULL;
	build(&s, spec);
	errno = 0;
	int r = conf_flow_check(s.p, s.n, err, sizeof err, &at);
	ok(r == -1 && errno == EINVAL, "%s: refused (EINVAL)", name);
	is_str(err, want, "%s: the message", name);
	is_str(at, want_at, "%s: about job %s", name, want_at);
}

/* n jobs j0 .. j(n-1), each after the one before; cyclic: j0 after the last too */
static int chain(size_t n, int cyclic, char *err, size_t errlen, const char **at)
{
	conf_job_t *j = calloc(n, sizeof *j);
	const conf_job_t **p = calloc(n, sizeof *p);
	char (*names)[16] = calloc(n, sizeof *names);
	char **deps = calloc(n, sizeof *deps);
	if (!j || !p || !names || !deps) BAIL_OUT("out of memory");
	for (size_t i = 0; i < n; i++) snprintf(names[i], sizeof names[i], "j%zu", i);
	for (size_t i = 0; i < n; i++) {
		j[i].name = names[i];
		p[i] = &j[i];
		if (i || cyclic) {
			deps[i] = names[i ? i - 1 : n - 1];
			j[i].flow.n = 1;
			j[i].flow.depends_on = &deps[i];
		}
	}
	j[0].cron = cyclic ? NULL : "0 0 0 * * ?";
	int r = conf_flow_check(p, n, err, errlen, at);
	/* the message and *at point into the names: copied out before they go */
	static char at_copy[16];
	if (*at) {
		snprintf(at_copy, sizeof at_copy, "%s", *at);
		*at = at_copy;
	}
	free(j), free(p), free(names), free(deps);
	return r;
}

int main(void)
{
	plan(53);

	/* ---- accepted ---- */
	accepted("no jobs", "");
	accepted("jobs without dependsOn", "a*; b; c*");
	accepted("a chain", "extract*; transform: extract; load: transform");
	accepted("fan-out", "a*; b: a; c: a; d: a");
	accepted("fan-in (a diamond)", "a*; b: a; c: a; d: b c");
	accepted("several workflows and lone jobs in one set", "a*; b: a; lone*; x*; y: x; z: x y; c: b; other");
	accepted("a root without cron (triggered by hand)", "a; b: a; c: b a");
	accepted("upstreams named after their dependents", "d: c; c: b; b: a; a*");

	/* ---- names ---- */
	refused("a name that is no job", "a*; d: a nosuch",
	        "job d: dependsOn: no job named nosuch; add a job nosuch, or take it out of dependsOn", "d");
	refused("a name that is no job, one close to it", "extract*; load: extrct",
	        "job load: dependsOn: no job named extrct (did you mean 'extract'?); add a job extrct, or take it out of "
	        "dependsOn", "load");
	refused("the job itself", "a*; b: a b", "job b: dependsOn: names b itself; a job cannot run after itself: take it out",
	        "b");
	refused("a name twice", "a*; c*; b: a c a", "job b: dependsOn: names a twice; give each job once", "b");
	refused("cron and dependsOn", "a*; b*: a",
	        "job b: cron and dependsOn: a job with dependsOn fires when the jobs it names end, not on a cron; remove one "
	        "of them", "b");

	/* ---- cycles ---- */
	refused("a cycle", "a*; b: d; c: b; d: c",
	        "job b: dependsOn: a cycle: b -> c -> d -> b; each runs after the one before it, so none of them ever "
	        "runs: take one out of the next one's dependsOn", "b");
	refused("a cycle, said from its first job in the given order", "d: c; x*; c: b; b: d",
	        "job d: dependsOn: a cycle: d -> b -> c -> d; each runs after the one before it, so none of them ever "
	        "runs: take one out of the next one's dependsOn", "d");
	refused("a cycle below a root", "a*; b: a e; c: b; e: c",
	        "job b: dependsOn: a cycle: b -> c -> e -> b; each runs after the one before it, so none of them ever "
	        "runs: take one out of the next one's dependsOn", "b");
	refused("a workflow without a root is a cycle", "a: b; b: a",
	        "job a: dependsOn: a cycle: a -> b -> a; each runs after the one before it, so none of them ever runs: take "
	        "one out of the next one's dependsOn", "a");

	/* ---- roots ---- */
	refused("two roots", "a*; b: a; d: b e; e*",
	        "job e: dependsOn: a workflow has one root, and a and e both start this one (a -> b -> d <- e); give e a "
	        "dependsOn, or split the workflow", "e");
	refused("three roots: the first and the one nearest to it", "a*; b: a; y*; c: b x; x*; d: c y",
	        "job x: dependsOn: a workflow has one root, and a and x both start this one (a -> b -> c <- x); give x a "
	        "dependsOn, or split the workflow", "x");
	refused("two roots, the second one without cron", "r1*; m: r1 r2; r2",
	        "job r2: dependsOn: a workflow has one root, and r1 and r2 both start this one (r1 -> m <- r2); give r2 a "
	        "dependsOn, or split the workflow", "r2");
	refused("two roots in the second workflow", "a*; b: a; p*; q: p r; r*",
	        "job r: dependsOn: a workflow has one root, and p and r both start this one (p -> q <- r); give r a "
	        "dependsOn, or split the workflow", "r");

	/* ---- a message cut to fit ---- */
	{
		struct set s;
		char err[32];
		const char *at;
		build(&s, "a*; b: a; d: b e; e*");
		int r = conf_flow_check(s.p, s.n, err, sizeof err, &at);
		is_str(err, "job e: dependsOn: a workflow...", "a message cut to the buffer, with \"...\"");
		ok(r == -1 && !strcmp(at, "e"), "  still refused, about e");
		r = conf_flow_check(s.p, s.n, err, sizeof err, NULL);
		ok(r == -1, "at may be NULL");
	}

	/* ---- many ---- */
	char err[4096];
	const char *at;
	is_int(chain(10000, 0, err, sizeof err, &at), 0, "10,000 jobs in one chain: accepted (the walk needs no stack)");
	is_int(chain(10000, 1, err, sizeof err, &at), -1, "10,000 jobs in one cycle: refused");
	ok(!strncmp(err, "job j0: dependsOn: a cycle: j0 -> j1 -> j2 -> ", 46) && !strcmp(err + strlen(err) - 3, "...") &&
	   strlen(err) == sizeof err - 1 && !strcmp(at, "j0"), "  from j0, cut at the buffer's end");
	return done_testing();
}
