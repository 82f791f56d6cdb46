/* t/fuzz/fuzz-conf.c: the configuration loader on arbitrary bytes.
 *
 * Whatever the input: no crash, no leak, no undefined behaviour; every error has a text; and
 * every job of an accepted file survives the trip through its config node (emit, parse back,
 * equal). Name lookups are fake and pure, so runs are reproducible. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lookup(const char *name, uint32_t *id, void *arg)
{
	(void)arg;
	if (strcmp(name, "nobody") == 0) return -1;
	*id = (uint32_t)strlen(name);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	conf_opts_t o = { .cpus = 3, .lookup_user = lookup, .lookup_group = lookup };
	conf_diags_t *d;
	conf_t *c = conf_parse(data, size, "fuzz.yaml", &o, &d);
	if (!d) abort();                     /* only ENOMEM may leave it NULL */
	for (size_t i = 0; i < conf_diags_count(d); i++) {
		const conf_diag_t *e = conf_diags_get(d, i);
		if (!e->text || !e->msg || !e->key || !*e->msg) abort();
	}
	if (c && conf_diags_count(d)) abort();
	if (!c && conf_diags_count(d) + conf_diags_dropped(d) == 0) abort();
	for (size_t i = 0; c && i < c->n_jobs; i++) {
		size_t len;
		char *y = conf_node_emit(&c->jobs[i], &len);
		if (!y) abort();
		conf_diags_t *nd;
		conf_job_t *j = conf_node_parse(y, len, "node", &nd);
		if (!j || !conf_job_equal(j, &c->jobs[i])) {
			fprintf(stderr, "job %s does not round-trip:\n%s\n", c->jobs[i].name, y);
			for (size_t k = 0; k < conf_diags_count(nd); k++)
				fprintf(stderr, "%s\n", conf_diags_get(nd, k)->text);
			abort();
		}
		conf_job_free(j);
		conf_diags_free(nd);
		free(y);
	}
	conf_free(c);
	conf_diags_free(d);
	return 0;
}
