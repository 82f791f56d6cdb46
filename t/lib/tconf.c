/* t/lib/tconf.c: configurations from strings for the config tests (tconf.h). */
#include "t/lib/tconf.h"

#include <stdio.h>
#include <string.h>

conf_t *tconf_parse(const char *yaml, const conf_opts_t *o, conf_diags_t **d)
{
	return conf_parse(yaml, strlen(yaml), "t.yaml", o, d);
}

int tconf_verrors(const char *yaml, const conf_opts_t *o, va_list ap)
{
	conf_diags_t *d;
	conf_t *c = tconf_parse(yaml, o, &d);
	size_t i = 0;
	int good = c == NULL && d != NULL;
	const char *want;
	while ((want = va_arg(ap, const char *))) {
		const conf_diag_t *e = conf_diags_get(d, i++);
		if (!e || strcmp(e->text, want) != 0) {
			good = 0;
			fprintf(stderr, "# error %zu: expected %s\n", i, want);
			fprintf(stderr, "# error %zu:      got %s\n", i, e ? e->text : "(none)");
		}
	}
	if (conf_diags_count(d) != i) {
		good = 0;
		for (; i < conf_diags_count(d); i++) fprintf(stderr, "# unexpected: %s\n", conf_diags_get(d, i)->text);
	}
	conf_free(c);
	conf_diags_free(d);
	return good;
}

int tconf_errors(const char *yaml, const conf_opts_t *o, ...)
{
	va_list ap;
	va_start(ap, o);
	int good = tconf_verrors(yaml, o, ap);
	va_end(ap);
	return good;
}
