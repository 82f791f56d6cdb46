/* t/lib/tconf.h: parse a configuration from a string as the config tests do (t/14, t/35, t/43). */
#ifndef EJOB_TCONF_H
#define EJOB_TCONF_H

#include <stdarg.h>

#include "conf/conf.h"

/* yaml as the file "t.yaml" (o may be NULL). */
conf_t *tconf_parse(const char *yaml, const conf_opts_t *o, conf_diags_t **d);
/* The file gives exactly the errors in ap (full texts, a NULL-terminated list of const char *),
 * in this order, and no config: 1; else 0, each difference said on stderr as a TAP comment. */
int tconf_verrors(const char *yaml, const conf_opts_t *o, va_list ap);
/* The same, the errors as arguments (NULL-terminated). */
int tconf_errors(const char *yaml, const conf_opts_t *o, ...);

/* A check (t/tap.h's ok) that the file gives exactly these errors (full text), in this order. */
#define TCONF_ERRORS(name, yaml, ...) ok(tconf_errors(yaml, NULL, __VA_ARGS__, (const char *)NULL), "%s", name)

/* The regCenter every test file starts with. */
#define TCONF_HEAD "regCenter:\n  serverLists: 127.0.0.1:2181\n  namespace: ns\n"

#endif
