/* conf/conf_http.c: an http job's props, as ElasticJob's HttpJobExecutor reads them
 * (elasticjob-http-executor, HttpJobProperties), plus ejob's http.ca.file: what each means, its
 * default, and whether together they make a request. Pure: the CA file is not looked at (it
 * may exist only on the machines that run the job; `ejobctl validate` warns). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "conf/conf_int.h"

/* HttpURLConnection.setRequestMethod takes exactly these (in upper case, as written); ElasticJob
 * sends http.data with the three of them it counts as write methods. */
static const char *const methods[] = { "GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "TRACE" };

#define NELEM(a) (sizeof(a) / sizeof *(a))


int conf_job_http(conf_job_t *j, conf_http_err_fn *fn, void *arg)
{
	struct conf_prop_report r = { fn, arg, 0 };
	char q[128];
	const char *uri = conf_job_prop(j, "http.uri"), *method = conf_job_prop(j, "http.method"), *ctype = conf_job_prop(j, "http.content.type");
	const char *data = conf_job_prop(j, "http.data"), *ca = conf_job_prop(j, "http.ca.file");
	j->http.connect_timeout_ms = CONF_HTTP_CONNECT_TIMEOUT_MS;
	j->http.read_timeout_ms = CONF_HTTP_READ_TIMEOUT_MS;

	if (!uri || !*uri) {
		conf_prop_problem(&r, "http.uri", "an http job needs the URL to request, http://HOST[:PORT]/PATH or https://...%s",
		        uri ? " (got \"\")" : "; the key is missing");
	} else {
		const char *why = conf_url_problem(uri);
		conf_quote(q, sizeof q, uri, strlen(uri));
		if (why) conf_prop_problem(&r, "http.uri", "%s (got %s)", why, q);
	}
	size_t m = NELEM(methods);
	if (!method || !*method) {
		conf_prop_problem(&r, "http.method", "an http job needs its request method, as ElasticJob does: GET, POST, PUT, "
		        "DELETE, HEAD, OPTIONS or TRACE%s", method ? " (got \"\")" : "; the key is missing");
	} else {
		for (m = 0; m < NELEM(methods); m++)
			if (strcmp(method, methods[m]) == 0) break;
		if (m == NELEM(methods)) {
			size_t k;
			for (k = 0; k < NELEM(methods); k++)
				if (strcasecmp(method, methods[k]) == 0) break;
			conf_quote(q, sizeof q, method, strlen(method));
			if (k < NELEM(methods))
				conf_prop_problem(&r, "http.method", "must be written in upper case, '%s' (got %s): ElasticJob's "
				        "HttpURLConnection refuses any other spelling", methods[k], q);
			else
				conf_prop_problem(&r, "http.method", "must be GET, POST, PUT, DELETE, HEAD, OPTIONS or TRACE, the methods "
				        "ElasticJob's HttpURLConnection sends (got %s)", q);
		}
	}
	if (ctype) {
		for (const unsigned char *p = (const unsigned char *)ctype; *p; p++)
			if ((*p < ' ' && *p != '\t') || *p == 0x7f) {
				conf_quote(q, sizeof q, ctype, strlen(ctype));
				conf_prop_problem(&r, "http.content.type", "must be one line without control characters, a header value "
				        "such as application/json (got %s)", q);
				break;
			}
	}
	if (ca && !*ca)
		conf_prop_problem(&r, "http.ca.file", "must be the path of a file of PEM CA certificates for https; leave the key "
		        "out to use the system's");
	/* the timeouts as Integer.parseInt reads them, in ElasticJob's range: 0 (no limit) or more */
	static const char ms[] = "an integer 0-2147483647, in milliseconds (0: no limit)";
	conf_prop_int(&r, j, "http.connect.timeout.milliseconds", 0, 2147483647LL, ms, &j->http.connect_timeout_ms);
	conf_prop_int(&r, j, "http.read.timeout.milliseconds", 0, 2147483647LL, ms, &j->http.read_timeout_ms);
	/* the request travels in each item's frame, a ring slot of 4 KiB with the task id and the
	 * parameters: refuse here what would fail every item at dispatch */
	const char *part[] = { "http.uri", "http.data", "http.content.type", "http.ca.file" };
	size_t len[] = { uri ? strlen(uri) : 0, data ? strlen(data) : 0, ctype ? strlen(ctype) : 0, ca ? strlen(ca) : 0 };
	size_t total = len[0] + len[1] + len[2] + len[3], big = 0;
	for (size_t i = 1; i < NELEM(len); i++)
		if (len[i] > len[big]) big = i;
	if (total > CONF_HTTP_REQUEST_MAX)
		conf_prop_problem(&r, part[big], "is %zu bytes, and http.uri, http.data, http.content.type and http.ca.file together "
		        "are %zu: at most %u fit in an item's frame (a body that large belongs in a file the endpoint reads)",
		        len[big], total, CONF_HTTP_REQUEST_MAX);
	if (r.n) return r.n;
	j->http.uri = uri;
	j->http.method = methods[m];
	j->http.data = data && *data ? data : NULL;
	j->http.content_type = ctype && *ctype ? ctype : NULL;
	j->http.ca_file = ca;
	return 0;
}

int conf_http_sends_data(const char *method)
{
	return method && (!strcmp(method, "POST") || !strcmp(method, "PUT") || !strcmp(method, "DELETE"));
}
