/* t/128-cronshare.c: supervisor/run/cronshare, the compiled crons the scheduler's jobs share (one
 * per expression and year limit; 10,000 jobs on one expression held 10,000 copies of it).
 *   - The same expression under the same limit is one cron, however many jobs hold it; another
 *     limit or another expression is another one; the fire times are cron_with_max_year's.
 *   - A refusal is cron_with_max_year's, message and all, and holds nothing.
 *   - Put by every holder, it is freed: checked against a model of who holds what over 100,000
 *     random gets and puts of 40 expressions x 2 limits (the count, and every get of an
 *     expression already held gives the cron held). Run under make SANITIZE=address for the
 *     frees.
 *   - A config's jobs on one expression share its compiled cron too (conf_parse), and the jobs
 *     on others have their own, with their own fire times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "supervisor/run/cronshare.h"
#include "t/tap.h"

enum { NEXPR = 40, NYEAR = 2, HOLD = 200 };

int main(void)
{
	plan(11);
	cronshare_t *cs = cronshare_new();
	if (!cs) BAIL_OUT("out of memory");
	cron_err_t e;
	cron_t *every = cron_parse("0 * * * * ?", &e), *other = cron_parse("0 0 * * * ?", &e);
	if (!every || !other) BAIL_OUT("parse: %s", e.msg);

	const cron_t *a = NULL, *b = NULL, *c = NULL, *d = NULL;
	struct cronref *ra = cronshare_get(cs, every, 2126, &a, &e);
	struct cronref *rb = cronshare_get(cs, every, 2126, &b, &e);
	ok(ra && ra == rb && a && a == b && cronshare_count(cs) == 1, "the same expression and limit: one cron for both");
	struct cronref *rc = cronshare_get(cs, every, 2127, &c, &e);
	struct cronref *rd = cronshare_get(cs, other, 2126, &d, &e);
	ok(rc && rd && c != a && d != a && c != d && cronshare_count(cs) == 3, "another limit, another expression: "
	   "their own");
	cron_t *want = cron_with_max_year(every, 2126, &e);
	tz_t *utc = tz_fixed("UTC", 0);
	int same = want && utc;
	for (int64_t t = 0, k = 0; same && k < 1000; k++) {
		int64_t x = cron_next(a, utc, t), y = cron_next(want, utc, t);
		same = x == y;
		t = x + 3599;
	}
	ok(same, "its fire times are cron_with_max_year's");
	cron_free(want);
	tz_free(utc);

	cron_t *late = cron_parse("0 0 0 1 1 ? 2150/2", &e);
	if (!late) BAIL_OUT("parse: %s", e.msg);
	cron_err_t e1, e2;
	const cron_t *none = a;
	struct cronref *bad = cronshare_get(cs, late, 2126, &none, &e1);
	cron_t *ref = cron_with_max_year(late, 2126, &e2);
	ok(!bad && !none && !ref && e1.column == e2.column && !strcmp(e1.msg, e2.msg) && cronshare_count(cs) == 3,
	   "refused as cron_with_max_year refuses it (column %d: %s), nothing held", e1.column, e1.msg);

	cronshare_put(cs, ra);
	ok(cronshare_count(cs) == 3, "put by one of its two holders: still held");
	cronshare_put(cs, rb);
	cronshare_put(cs, rc);
	cronshare_put(cs, rd);
	cronshare_put(cs, NULL);
	ok(cronshare_count(cs) == 0, "put by all: none held");

	/* the model: holders of each (expression, limit) */
	cron_t *ex[NEXPR];
	for (int i = 0; i < NEXPR; i++) {
		char s[64];
		snprintf(s, sizeof s, "%d %d * * * ?", i % 60, i);
		if (!(ex[i] = cron_parse(s, &e))) BAIL_OUT("parse %s: %s", s, e.msg);
	}
	struct { struct cronref *r; const cron_t *c; int key; } held[HOLD];
	int nheld = 0, wrong = 0, count_wrong = 0;
	unsigned seed = 4242;
	for (int op = 0; op < 100000; op++) {
		unsigned r = (unsigned)rand_r(&seed);
		if ((r % 2 && nheld < HOLD) || nheld == 0) {
			int key = (int)((unsigned)rand_r(&seed) % (NEXPR * NYEAR));
			const cron_t *got = NULL;
			struct cronref *g = cronshare_get(cs, ex[key / NYEAR], 2126 + key % NYEAR, &got, &e);
			if (!g || !got) BAIL_OUT("get: %s", e.msg);
			for (int i = 0; i < nheld; i++)
				if (held[i].key == key && (held[i].c != got || held[i].r != g)) wrong++;
			held[nheld].r = g;
			held[nheld].c = got;
			held[nheld++].key = key;
		} else {
			int i = (int)((unsigned)rand_r(&seed) % (unsigned)nheld);
			cronshare_put(cs, held[i].r);
			held[i] = held[--nheld];
		}
		int distinct = 0;
		for (int i = 0; i < nheld; i++) {
			int first = 1;
			for (int k = 0; k < i && first; k++) first = held[k].key != held[i].key;
			distinct += first;
		}
		if ((size_t)distinct != cronshare_count(cs)) count_wrong++;
	}
	ok(wrong == 0, "100,000 random gets and puts: every get of a held expression gave the cron held (%d wrong)",
	   wrong);
	ok(count_wrong == 0, "  and the count was the model's distinct held ones after each (%d wrong)", count_wrong);
	while (nheld) cronshare_put(cs, held[--nheld].r);
	ok(cronshare_count(cs) == 0, "  all put: none held");
	cronshare_free(cs);

	/* 300 jobs on 3 expressions, interleaved (more expressions than the parse's memo holds would
	 * only share less) */
	size_t cap = 64 * 1024, len = 0;
	char *y = malloc(cap);
	if (!y) BAIL_OUT("out of memory");
	len += (size_t)snprintf(y + len, cap - len, "regCenter:\n  serverLists: 127.0.0.1:2181\n  namespace: ns\njobs:\n");
	const char *exprs[3] = { "0 * * * * ?", "0 0 * * * ?", "0/5 * * * * ?" };
	for (int i = 0; i < 300; i++)
		len += (size_t)snprintf(y + len, cap - len, "  j%03d:\n    type: script\n    props: {script.command.line: \"true\"}\n    cron: \"%s\"\n    shardingTotalCount: 1\n", i,
		                        exprs[i % 3]);
	conf_diags_t *dg = NULL;
	conf_t *cf = conf_parse(y, len, "t128.yaml", NULL, &dg);
	if (!cf) BAIL_OUT("conf_parse: %s", dg && conf_diags_count(dg) ? conf_diags_get(dg, 0)->text : "out of memory");
	int shared = cf->n_jobs == 300, apart = 1;
	for (size_t i = 0; i < cf->n_jobs; i++) {
		const cron_t *k = cf->jobs[i].cron_compiled;
		shared &= k && k == cf->jobs[i % 3].cron_compiled && !strcmp(cron_expr(k), exprs[i % 3]);
	}
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < i; k++) apart &= cf->jobs[i].cron_compiled != cf->jobs[k].cron_compiled;
	ok(shared, "a config's 300 jobs on 3 expressions: each job has its expression's one compiled cron");
	tz_t *z = tz_fixed("UTC", 0);
	if (!z) BAIL_OUT("out of memory");
	ok(apart && cron_next(cf->jobs[0].cron_compiled, z, 59) == 60 && cron_next(cf->jobs[1].cron_compiled, z, 59) == 3600 &&
	   cron_next(cf->jobs[2].cron_compiled, z, 61) == 65, "  the three are apart, each with its own fire times");
	tz_free(z);
	conf_free(cf);
	conf_diags_free(dg);
	free(y);
	for (int i = 0; i < NEXPR; i++) cron_free(ex[i]);
	cron_free(every);
	cron_free(other);
	cron_free(late);
	return done_testing();
}
