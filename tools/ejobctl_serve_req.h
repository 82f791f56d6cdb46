/* tools/ejobctl_serve_req.h: what an HTTP request to `ejobctl serve` is, from its bytes alone: the
 * endpoint, the job, item or server it names, its parsed body and query, or the 4xx it gets and
 * why. No ZooKeeper, no libmicrohttpd, no state: ejobctl_serve.c routes every request through
 * srv_req_parse, and t/fuzz/fuzz-serve.c calls it on arbitrary bytes. */
#ifndef EJOB_EJOBCTL_SERVE_REQ_H
#define EJOB_EJOBCTL_SERVE_REQ_H

#include <stddef.h>

#include "tools/ejobctl_serve.h"

#define SRV_BODY_MAX (1u << 20)     /* a request's body: a config node is at most about this (jute.maxbuffer) */
#define SRV_URL_MAX 2048            /* a longer path is no endpoint (404) */
#define SRV_SEG_MAX 10
#define SRV_CHANGES_MAX 1000        /* GET /api/v1/changes?limit=: the feed keeps as many */
#define SRV_RUNS_MAX 100            /* GET /api/v1/workflows/{root}/runs?limit= (ejobctl runs --limit's) */

enum srv_ep {
	EP_REFUSED,                 /* code, why, hint: the answer */
	EP_ROOT,                    /* GET / */
	EP_HEALTHZ,                 /* /healthz */
	EP_LOGIN,                   /* POST /api/v1/login: body {user, password} */
	EP_LOGOUT,                  /* POST /api/v1/logout */
	EP_METRICS,                 /* GET /metrics */
	EP_AUDIT,                   /* GET /api/v1/audit: limit */
	EP_ME,                      /* GET /api/v1/me */
	EP_CHANGES,                 /* GET /api/v1/changes: since, limit */
	EP_HISTORY,                 /* GET /api/v1/jobs/{job}/history|trace: pgq (job, trace, filters);
	                             * GET /api/v1/history|trace: the same over every job (pgq.job: the
	                             * job= filter, NULL none) */
	EP_JOBS, EP_SERVERS, EP_INSTANCES,   /* GET /api/v1/jobs, /servers, /instances */
	EP_JOB,                     /* GET /api/v1/jobs/{job} */
	EP_JOB_PUT,                 /* PUT /api/v1/jobs/{job}: the put fields */
	EP_JOB_OP,                  /* POST /api/v1/jobs/{job}/OP and DELETE (op "remove"): server, instance,
	                             * param, force; items/{item}/disable|enable (op "disable-item", item) */
	EP_SERVER_OP,               /* POST /api/v1/servers/{server}/disable|enable|shutdown */
	EP_WORKFLOWS,               /* GET /api/v1/workflows */
	EP_WF_RUNS,                 /* GET /api/v1/workflows/{root}/runs: job (the root), limit */
};

/* which of a request's values srv_http's value() gives */
enum srv_kind { SRV_ARG, SRV_HEADER };

/* a request as the HTTP server hands it over */
struct srv_http {
	const char *method;
	const char *url;            /* the path, decoded, without the query */
	const char *body;           /* len bytes (not NUL-terminated); NULL when len is 0 */
	size_t len;
	int too_big;                /* more than SRV_BODY_MAX came (body: a part, not read) */
	/* a query argument or a header by name (headers case-insensitively), NULL if absent; valid
	 * until the request ends */
	const char *(*value)(void *cls, enum srv_kind kind, const char *key);
	void *cls;
};

/* what the body of a PUT is: a config node (ElasticJob's keys, config set's), an ejob
 * configuration file (top-level "jobs"), or one job as under a file's jobs: (top-level "type") */
enum srv_put_form { FORM_NODE, FORM_FILE, FORM_JOB };

struct srv_req {
	enum srv_ep ep;
	int write;                  /* neither GET nor HEAD: audited */
	enum srv_role role;         /* the role it needs: a refusal with role above viewer comes after
	                             * the caller's 403 */
	unsigned code;              /* EP_REFUSED: 400, 404, 405, 413 */
	char why[1024];
	const char *hint;           /* static; NULL none */

	const char *job;            /* the segments of path, a copy of the url */
	const char *server, *instance, *param, *item;
	const char *op;             /* static: "trigger", "disable", "enable", "shutdown", "remove",
	                             * "disable-item", "enable-item" */
	int force;                  /* DELETE ?force=true|1 */
	int limit;                  /* EP_AUDIT: the last lines (?limit=, default 100); EP_CHANGES: at most
	                             * so many changes (1-SRV_CHANGES_MAX, default 100); EP_WF_RUNS: the
	                             * newest runs (1-SRV_RUNS_MAX, default 10) */
	long long since;            /* EP_CHANGES: ?since=SEQ (>= 0), -1 none */
	struct srv_pgq pgq;         /* EP_HISTORY */
	struct json_t *body;        /* a JSON body (login, ops) whose keys were checked; NULL none */
	const char *user, *password;/* EP_LOGIN: in body */

	/* EP_JOB_PUT */
	long want;                  /* ?version=N or If-Match: "N"; -1 none */
	int must_exist;             /* If-Match: * */
	int must_not_exist;         /* If-None-Match: * */
	enum srv_put_form form;
	char *text;                 /* the body, NUL-terminated; FORM_JOB's wrapped as a file's jobs:
	                             * {job: body} (its messages' positions: srv_unwrap_positions) */
	size_t textlen;

	char path[SRV_URL_MAX];
	char *seg[SRV_SEG_MAX];
	int nseg;
};

/* h as *r (srv_req_free it, whatever this returns): 0, or -1 when out of memory. */
int srv_req_parse(const struct srv_http *h, struct srv_req *r);
void srv_req_free(struct srv_req *r);

/* Messages about a FORM_JOB body's wrapped text ("body:LINE:COLUMN: ...") with the line and
 * column of what was sent; malloc'd, NULL when out of memory. */
char *srv_unwrap_positions(const char *s);

#endif
