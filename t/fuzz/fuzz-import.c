/* t/fuzz/fuzz-import.c: ejobctl import's conversion (tools/ejobctl_migrate.c, reading with
 * tools/ejobctl_spring.c) on arbitrary bytes, as YAML (first byte even) or as .properties (odd).
 *
 * Whatever the input: no crash, no leak, no undefined behaviour; every message has its text; a
 * conversion that succeeds wrote a file that ejob's loader takes, and one that does not wrote
 * nothing. Zones are not looked up (no host state), so runs are reproducible. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "tools/ejobctl_migrate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size) return 0;
	int props = data[0] & 1;
	struct migrate_input in = { props ? "f.properties" : "f.yml", (const char *)data + 1, size - 1, props };
	conf_opts_t o = { .cpus = 1 };
	struct migrate_result r;
	if (migrate_spring(&in, 1, &o, &r) < 0) {
		migrate_result_free(&r);
		return 0;                    /* out of memory only */
	}
	for (size_t i = 0; i < r.msgs.n; i++)
		if (!r.msgs.v[i].text || !*r.msgs.v[i].text) abort();
	if ((r.status == 0) != (r.out != NULL)) abort();
	if (r.status == 1) {
		for (size_t i = 0; i < r.msgs.n; i++) fprintf(stderr, "%s\n", r.msgs.v[i].text);
		abort();                     /* the output did not load: a bug */
	}
	if (r.out) {
		conf_diags_t *d;
		conf_t *c = conf_parse(r.out, r.len, "out", &o, &d);
		if (!c) {
			fprintf(stderr, "%s\n", r.out);
			abort();
		}
		conf_free(c);
		conf_diags_free(d);
	}
	migrate_result_free(&r);
	return 0;
}
