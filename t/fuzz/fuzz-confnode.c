/* t/fuzz/fuzz-confnode.c: the config-node parser on arbitrary bytes.
 *
 * No crash, leak or undefined behaviour; and an accepted node, written back with
 * conf_node_emit, parses to an equal job. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "conf/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	conf_diags_t *d;
	conf_job_t *j = conf_node_parse(data, size, "node", &d);
	if (!d) abort();
	if (!j && conf_diags_count(d) + conf_diags_dropped(d) == 0) abort();
	if (j) {
		size_t len;
		char *y = conf_node_emit(j, &len);
		if (!y) abort();
		conf_diags_t *d2;
		conf_job_t *k = conf_node_parse(y, len, "again", &d2);
		if (!k || !conf_job_equal(j, k)) {
			fprintf(stderr, "does not round-trip:\n%s\n", y);
			for (size_t i = 0; i < conf_diags_count(d2); i++)
				fprintf(stderr, "%s\n", conf_diags_get(d2, i)->text);
			abort();
		}
		conf_job_free(k);
		conf_diags_free(d2);
		free(y);
	}
	conf_job_free(j);
	conf_diags_free(d);
	return 0;
}
