/* tools/ejobctl_migrate_int.h: what the files of ejobctl import's conversion share (not for
 * other modules):
 *
 *   ejobctl_migrate.c       the output, the values as Spring binds them, the jobs, the driver
 *   ejobctl_migrate_head.c  the regCenter and tracing sections (ZookeeperProperties, TracingProperties
 *                           with the DataSource, JDBC URLs as libpq's)
 */
#ifndef EJOB_EJOBCTL_MIGRATE_INT_H
#define EJOB_EJOBCTL_MIGRATE_INT_H

#include <stddef.h>

#include "conf/conf.h"
#include "tools/ejobctl_migrate.h"
#include "tools/ejobctl_spring.h"

#define NELEM(a) (sizeof(a) / sizeof *(a))

/* The output, line by line, each line with the property it came from (so that what ejob's loader
 * says about a line is said at the input's line). */
struct out {
	char *buf;
	size_t len, cap;
	const struct spring_prop **origin;   /* per line */
	int nlines, capl;
	int oom;
};

void mig_out_add(struct out *o, const struct spring_prop *origin, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "KEY: VALUE" at indent, both as YAML scalars ejob's loader reads back as they are */
void mig_out_kv(struct out *o, const struct spring_prop *origin, int indent, const char *key, const char *value);
void mig_out_free(struct out *o);

/* One conversion. */
struct mx {
	struct spring_props ps;
	struct spring_msgs *m;
	const struct migrate_input *in;
	size_t nin;
	const conf_opts_t *opts;
	int oom;
	char *keys[8];              /* key_of's, used in turn */
	int nkey;
};

/* A message about property p: "FILE:LINE: KEY-as-written: ..." */
#define MSG(x, p, ...) spring_msg((x)->m, (p)->file, (p)->name, (p)->line, mig_key(x, p), __VA_ARGS__)

const char *mig_key(struct mx *x, const struct spring_prop *p);   /* p's key as written, for a message at once */
/* p's path starts with these names (relaxed; NULL matches any name) */
int mig_under(const struct spring_prop *p, const char *const *names, int n);
/* the last property at exactly this path, every one there marked used; NULL if none */
struct spring_prop *mig_take(struct mx *x, const char *const *names, int n);
/* the value Spring binds, placeholders resolved as far as import can, YAML 1.1's readings said
 * (text: a string key); NULL: not set */
const char *mig_val(struct mx *x, const struct spring_prop *p, int text);
int mig_int(const char *s, long *v);       /* Spring's int: 0, or -1 */
int mig_bool(const char *s);               /* Spring's boolean: 1, 0, or -1 */
const char *mig_suggest(const char *s, const char *const *names, size_t n);

/* ---- the regCenter and tracing sections (ejobctl_migrate_head.c) ---- */

struct head {                   /* the regCenter and tracing sections, key by key */
	int n;
	struct { const char *section, *key; char *value; int quote; const struct spring_prop *from; } v[16];
};

void mig_head_set(struct head *h, const char *section, const char *key, const char *value, int quote,
                  const struct spring_prop *from);
void mig_head_drop(struct head *h, const char *section, const char *key);   /* key NULL: the whole section */
void mig_head_emit(const struct head *h, struct out *o);
/* elasticjob.reg-center into h; *fatal when it cannot be converted (said) */
void mig_reg_center(struct mx *x, struct head *h, int *fatal);
/* elasticjob.tracing with its DataSource into h, or said why not */
void mig_tracing(struct mx *x, struct head *h);

#endif
