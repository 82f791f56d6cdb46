/* conf/conf_take.c: whether a config node can be taken as a job's config: the one check that the
 * supervisor applies to the node it watches (supervisor/coord_config.c) and that `ejobctl config
 * set|edit` applies before it writes one, so that what ejobctl accepts a supervisor takes, and the
 * other way round. Pure: no I/O but the zone lookup conf_node_parse does. */
#include <stdio.h>
#include <string.h>

#include "conf/conf_int.h"

/* A node without props ejob.type, as ElasticJob writes it: its type is the job's root node's
 * (ConfigurationService writes SCRIPT there for a script job); ejob's own keys at their defaults. */
static void root_typed(conf_job_t *cj, const char *root_type)
{
	const char *c = cj->script_command_line;
	int blank = 1;
	for (const char *s = c; s && *s; s++)
		if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') blank = 0;
	if (cj->type == CONF_JOB_NONE && !strcmp(root_type, "SCRIPT") && !blank) cj->type = CONF_JOB_SCRIPT;
	if (cj->type == CONF_JOB_NONE && !strcmp(root_type, "HTTP")) cj->type = CONF_JOB_HTTP;
}

/* The first problem of an http job's props (a node typed HTTP by its root node: the parse did
 * not check them). */
struct http_why {
	char *why;
	size_t sz;
	int n;
};

static void http_why(void *arg, const char *key, const char *msg)
{
	struct http_why *w = arg;
	if (!w->n++) snprintf(w->why, w->sz, "it is ElasticJob's HTTP job (the job's root node), and props %s: %s", key, msg);
}

/* Why a parsed node cannot be taken, or NULL. */
static const char *unusable(const conf_job_t *cj, const char *job, const char *t, char *why, size_t sz)
{
	if (!cj->name || strcmp(cj->name, job)) {
		snprintf(why, sz, "jobName is '%s', not '%s'", cj->name ? cj->name : "", job);
		return why;
	}
	if (cj->type == CONF_JOB_NONE) {
		if (!*t)
			snprintf(why, sz, "props has no ejob.type (script, native, external, http or dataflow), and the job's root node "
			         "names no type");
		else if (!strcmp(t, "SCRIPT"))
			snprintf(why, sz, "it is ElasticJob's SCRIPT job (the job's root node) without props "
			         "script.command.line");
		else if (!strcmp(t, "DATAFLOW"))
			snprintf(why, sz, "it is ElasticJob's DATAFLOW job (the job's root node): a Java class's fetchData and "
			         "processData, which ejob cannot run; run it with ElasticJob, or give the node props "
			         "ejob.type: dataflow with native.library, native.fetch and native.process (or none of them, "
			         "for external workers)");
		else
			snprintf(why, sz, "its type is %s (the job's root node): a Java job (SIMPLE or a class), "
			         "which ejob cannot run; run it with ElasticJob, or give the node props ejob.type (script, "
			         "native, external, http or dataflow)", t);
		return why;
	}
	/* conf_node_parse compiled the cron (refusing one that does not parse; none is a one-off job)
	 * and loaded the zone */
	if (cj->time_zone && !cj->tz) {
		snprintf(why, sz, "timeZone: %.200s", cj->tz_error ? cj->tz_error : "not loaded");
		return why;
	}
	return NULL;
}

conf_job_t *conf_node_take(const void *buf, size_t len, const char *name, const char *job, const char *root_type,
                           char *why, size_t whysz, conf_diags_t **diags)
{
	conf_diags_t *d = NULL;
	conf_job_t *cj = conf_node_parse(buf ? buf : "", len, name, &d);
	if (!cj) {
		const conf_diag_t *dg = d && conf_diags_count(d) ? conf_diags_get(d, 0) : NULL;
		snprintf(why, whysz, "%s", dg ? dg->text : "unreadable");
	} else {
		int typed = cj->type != CONF_JOB_NONE;
		root_typed(cj, root_type ? root_type : "");
		struct http_why hw = { why, whysz, 0 };
		if (unusable(cj, job, root_type ? root_type : "", why, whysz) ||
		    (!typed && cj->type == CONF_JOB_HTTP && conf_job_http(cj, http_why, &hw))) {
			conf_job_free(cj);
			cj = NULL;
		}
	}
	if (diags) *diags = d;
	else conf_diags_free(d);
	return cj;
}
