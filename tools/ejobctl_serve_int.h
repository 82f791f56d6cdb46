/* tools/ejobctl_serve_int.h: what the parts of `ejobctl serve` share: the server's state (SRV),
 * the responses, a CLI command run on the kept session, and the endpoints of
 * tools/ejobctl_serve_jobs.c. Internal to ejobctl_serve*.c. */
#ifndef EJOB_EJOBCTL_SERVE_INT_H
#define EJOB_EJOBCTL_SERVE_INT_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>
#include <microhttpd.h>

#include "ipc/logline.h"
#include "tools/ejobctl_model.h"
#include "tools/ejobctl_serve.h"
#include "tools/ejobctl_serve_changes.h"
#include "tools/ejobctl_serve_req.h"
#include "tools/ejobctl_zk.h"

struct serve {
	struct ctl c;               /* c.kept: the session is this file's */
	struct srv_users *users;    /* --auth; NULL: none (loopback only) */
	int tls;
	const char *pg;             /* --pg URL: the history's PostgreSQL; NULL: none */
	time_t last_try;            /* the last connect attempt (at most one a second) */
	model_t *model;             /* GET /api/v1/jobs's answers; NULL with --no-model */
	changes_t *changes;         /* GET /api/v1/changes's feed, from the model; NULL with --no-model */
	pthread_mutex_t big;        /* the session and c's buffers: one command at a time */
	pthread_mutex_t auth_mu;    /* users' checks (crypt's buffer) and the sessions' table */
};
extern struct serve SRV;

/* A session that is usable, or 0 with msg saying why (ZooKeeper away). Under SRV.big. */
/* A line of serve's own log on stderr ("ejobctl serve: ..."), with its syslog priority first when
 * stderr is the journal; level: LOGLINE_ERROR, _WARN, _INFO (ipc/logline.h). Any thread. */
void srv_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int srv_session_ok(char *msg, size_t cap);

/* ---- responses (the thread's: a request is served on one thread from start to end) ---------- */

extern _Thread_local char srv_etag[32];          /* the ETag header of the response queued next ("" none) */
extern _Thread_local json_t *srv_audit_result;   /* what a write did, for its audit line (taken by it) */

enum MHD_Result srv_send_text(struct MHD_Connection *con, unsigned code, const char *type, const char *text,
                              const char *cookie);
enum MHD_Result srv_send_json(struct MHD_Connection *con, unsigned code, json_t *doc, const char *cookie);   /* takes doc */
enum MHD_Result srv_send_error(struct MHD_Connection *con, unsigned code, const char *error, const char *hint);
json_t *srv_lines_json(const char *text);   /* text's lines as a JSON array of strings */

/* ---- one command of the CLI on the kept session (under SRV.big) ------------------------------ */

struct run {
	char *out, *err;            /* what it printed (c->out, c->err) */
	size_t outlen, errlen;
	char msg[2048];             /* its failure's message */
	int status;                 /* its exit status */
};
void srv_run_begin(struct run *r);   /* the command's output and messages go into r */
void srv_run_end(struct run *r);
void srv_run_free(struct run *r);
/* The answer to a command that failed: 404, 400, 503 or 409 (by its status and message). */
enum MHD_Result srv_send_failure(struct MHD_Connection *con, struct run *r);
/* what the command printed (a JSON document), or its failure */
enum MHD_Result srv_send_run(struct MHD_Connection *con, struct run *r);

/* ---- the job endpoints (tools/ejobctl_serve_jobs.c), under SRV.big ------------------------- */

enum MHD_Result srv_get_job(struct MHD_Connection *con, const char *job);
enum MHD_Result srv_put_job(struct MHD_Connection *con, struct srv_req *q);
enum MHD_Result srv_server_op(struct MHD_Connection *con, const char *ip, const char *op);
enum MHD_Result srv_op_param(struct MHD_Connection *con, const char *cmd, const char *job, const char *server,
                             const char *instance, char *item, int force, const char *param);

/* ---- libmicrohttpd's callbacks (tools/ejobctl_serve.c) -------------------------------------- */

enum MHD_Result srv_on_request(void *cls, struct MHD_Connection *con, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **ctx);
void srv_on_done(void *cls, struct MHD_Connection *con, void **ctx, enum MHD_RequestTerminationCode toe);

#endif
