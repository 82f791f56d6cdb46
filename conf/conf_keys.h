/* conf/conf_keys.h: every key of the configuration file, by its dotted path, from the loader's
 * own tables (so that a list made from it, and man/ejob.yaml.5.scd checked against it by t/120,
 * cannot drift from what the loader takes). */
#ifndef EJOB_CONF_KEYS_H
#define EJOB_CONF_KEYS_H

#include <stddef.h>

#define CONF_KEY_PATH_MAX 96
/* How a job's keys are written: jobs.<name>.cron */
#define CONF_KEYS_JOB "jobs.<name>"

/* Writes the keys' paths into keys[0 .. max-1], in the loader's order: "regCenter.serverLists",
 * ..., "supervisor.history.file", ..., "jobs.<name>.cron", ..., "tracing.type", .... A key whose
 * value is a mapping of keys the loader checks (supervisor.history) is given by those; one
 * whose value is free-form (jobs.<name>.props, supervisor.labels) is given itself. Returns how
 * many keys there are (more than max: only max were written), or 0 if a path would not fit
 * CONF_KEY_PATH_MAX (a bug). */
size_t conf_keys(char (*keys)[CONF_KEY_PATH_MAX], size_t max);

#endif
