/* tools/ejobctl_migrate.h: an ElasticJob Spring Boot configuration (its starter's
 * elasticjob.reg-center, elasticjob.jobs, elasticjob.tracing with the application's DataSource,
 * elasticjob.dump) turned into an ejob configuration file, with a message for every key that
 * has no ejob meaning and what to do instead: `ejobctl import` (tools/ejobctl_import.c; the conversion
 * is tools/ejobctl_migrate.c and tools/ejobctl_migrate_head.c).
 *
 * Pure: the inputs are buffers (read with tools/ejobctl_spring.c), the output is text. Every job
 * written out, and the regCenter and tracing sections, have been through ejob's own loader
 * (conf_parse, with the opts given): what cannot be loaded is left out and said, so the file
 * written passes `ejobctl validate`. docs/migrating.md has the mapping. */
#ifndef EJOB_EJOBCTL_MIGRATE_H
#define EJOB_EJOBCTL_MIGRATE_H

#include <stddef.h>

#include "conf/conf.h"
#include "tools/ejobctl_spring.h"

struct migrate_input {
	const char *name;            /* labels messages: "application.yml" */
	const char *buf;
	size_t len;
	int properties;              /* the .properties form; else YAML */
};

struct migrate_result {
	char *out;                   /* the ejob configuration file, NUL-terminated; NULL unless status 0 */
	size_t len;
	struct spring_msgs msgs;     /* "FILE:LINE: KEY: ..." lines, by input, line and order said */
	int jobs;                    /* jobs in the input (elasticjob.jobs.*) */
	int converted;               /* of them, in the output */
	int status;                  /* 0 converted (messages may say what was left out); 2 the inputs are
	                                not such a configuration, or no job could be converted; 1 the
	                                output did not load (a bug: said in msgs) */
};

/* Later inputs override earlier ones key by key, as Spring Boot's application-{profile}.yml does
 * application.yml's. 0, or -1 when memory ran out (r is still for migrate_result_free). */
int migrate_spring(const struct migrate_input *in, size_t n, const conf_opts_t *opts, struct migrate_result *r);
void migrate_result_free(struct migrate_result *r);

#endif
