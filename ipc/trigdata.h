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

#endif
