/* ipc/trigdata.h: what a trigger node carries (/{ns}/{job}/trigger/{instanceId}).
 *
 * ElasticJob writes its trigger nodes empty, and an instance that finds one deletes it and fires
 * once. ejob keeps that contract and adds one thing: a trigger for one fire with its own job
 * parameter (`ejobctl trigger JOB --parameter P`, the HTTP API's POST .../trigger) carries it as
 * JSON, {"parameter":"P"}. Empty data (ElasticJob's, or a trigger without a parameter) is a fire
 * with the job's own jobParameter; {"parameter":""} is a fire whose parameter is empty. An
 * ElasticJob instance only checks that the node exists, so it fires as before.
 *
 * Pure: no I/O. The writer (tools/) and the reader (the supervisor's trigger watch) share it. */
#ifndef EJOB_TRIGDATA_H
#define EJOB_TRIGDATA_H

#include <stddef.h>
#include <stdint.h>

/* The longest parameter a trigger carries (bytes): a frame holds it with the rest of an item. */
#define TRIGDATA_PARAM_MAX 4096

/* The node's data for parameter p (NUL-terminated, any bytes but NUL): malloc'd JSON, NULL when
 * out of memory. */
char *trigdata_make(const char *p);

/* What a trigger node's data says. 0: *param is NULL (no parameter: empty or blank data, or a
 * JSON object without "parameter") or malloc'd (the parameter); -1: it is not a trigger's data
 * (not a JSON object, "parameter" not a string, a NUL in it, longer than TRIGDATA_PARAM_MAX),
 * why says so. Keys other than "parameter" with string, number, true, false or null values are
 * ignored (for later additions). */
int trigdata_parse(const char *data, size_t len, char **param, char *why, size_t whysz);

/* A workflow's trigger (docs/config.md "Workflows"): the downstream job's fire of run `run` (the
 * root's fire id) of the workflow whose root is `root`, with the job's own jobParameter:
 * {"workflowRun":"R","workflowRoot":"A"} (the run as a decimal string: JSON numbers lose digits
 * in some readers). p: a parameter as trigdata_make's, NULL for none. */
char *trigdata_make_run(const char *p, uint64_t run, const char *root);

/* Everything a trigger node's data says: param (NULL: none) and root malloc'd, run 0 and root
 * NULL when it is no workflow's. 0, or -1 with why (and *t empty): trigdata_parse's refusals,
 * and workflowRun not a decimal id, workflowRoot not a job name, one of them without the other. */
struct trigdata {
	char *param;
	uint64_t run;
	char *root;
};
int trigdata_parse_all(const char *data, size_t len, struct trigdata *t, char *why, size_t whysz);
void trigdata_free(struct trigdata *t);

#endif
