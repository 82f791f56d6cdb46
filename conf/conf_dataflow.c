/* conf/conf_dataflow.c: a dataflow job's props: ElasticJob's DataflowJobProperties
 * (elasticjob-dataflow-executor: streaming.process, default false) and ejob's own (who runs
 * the job's fetch and process, and the batch bound). Pure: the library is not looked at
 * (`ejobctl validate` does). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf/conf_int.h"

static int identifier(const char *s)
{
	if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* A native.fetch or native.process prop: a C function's name. */
static int symbol(conf_job_t *j, const char *key, const char **out, conf_http_err_fn *err, void *arg)
{
	const char *s = conf_job_prop(j, key);
	if (identifier(s)) {
		*out = s;
		return 0;
	}
	char msg[200];
	if (!s) snprintf(msg, sizeof msg, "missing: a native dataflow job names its C functions in native.fetch and "
	                 "native.process (see docs/worker.md)");
	else snprintf(msg, sizeof msg, "must be a C function's name, an identifier (got '%.100s')", s);
	if (err) err(arg, key, msg);
	return 1;
}

int conf_job_dataflow(conf_job_t *j, conf_http_err_fn *err, void *arg)
{
	int n = 0;
	j->dataflow.streaming = false;
	j->dataflow.batch_bytes = CONF_DATAFLOW_BATCH_BYTES;
	const char *s = conf_job_prop(j, "streaming.process");
	if (s) {
		/* Java's Boolean.parseBoolean takes "true" in any case and calls everything else false;
		 * ejob refuses what is neither, so that "yes" does not silently mean one batch */
		if (!strcasecmp(s, "true")) j->dataflow.streaming = true;
		else if (strcasecmp(s, "false")) {
			if (err) err(arg, "streaming.process", "must be true or false (ElasticJob would read anything but "
			             "true as false)");
			n++;
		}
	}
	s = conf_job_prop(j, "dataflow.batch.bytes");
	if (s) {
		char *end;
		errno = 0;
		long long v = *s >= '0' && *s <= '9' ? strtoll(s, &end, 10) : -1;
		if (v < 1 || v > CONF_DATAFLOW_BATCH_MAX || errno || *end) {
			char msg[200];
			snprintf(msg, sizeof msg, "must be an integer 1-%u, the biggest batch in bytes a fetch may hand back "
			         "(got '%.60s')", CONF_DATAFLOW_BATCH_MAX, s);
			if (err) err(arg, "dataflow.batch.bytes", msg);
			n++;
		} else {
			j->dataflow.batch_bytes = (unsigned)v;
		}
	}
	int native = j->native.library || conf_job_prop(j, "native.fetch") || conf_job_prop(j, "native.process");
	if (!native) return n;   /* external: the workers that attach for it run the loop */
	if (!j->native.library || !*j->native.library) {
		if (err) err(arg, "native.library", "missing: a native dataflow job needs the path of its shared object "
		             "(or leave out native.fetch and native.process: then external workers serve it)");
		n++;
	}
	if (j->native.symbol) {
		if (err) err(arg, "native.symbol", "a dataflow job calls native.fetch and native.process, not "
		             "native.symbol: remove it");
		n++;
	}
	n += symbol(j, "native.fetch", &j->native.fetch, err, arg);
	n += symbol(j, "native.process", &j->native.process, err, arg);
	return n;
}
