/* tools/ejobctl_serve.h: `ejobctl serve`'s parts: the HTTP API (ejobctl_serve*.c) and its users,
 * sessions and audit log (ejobctl_serve_auth.c). Requests run on threads of their own; these
 * have no locks: ejobctl_serve.c calls the users' and sessions' functions under its auth_mu and
 * the audit's under its big lock. */
#ifndef EJOB_EJOBCTL_SERVE_H
#define EJOB_EJOBCTL_SERVE_H

#include <stddef.h>
#include <stdio.h>

enum srv_role { ROLE_NONE = 0, ROLE_VIEWER, ROLE_OPERATOR, ROLE_ADMIN };

struct srv_users;

/* --auth FILE: lines "name:HASH:role" ('#' comments, blank lines). NULL after a message on stderr
 * naming the file, the line and the fix. */
struct srv_users *srv_users_load(const char *file);
void srv_users_free(struct srv_users *u);
/* The role of name with password (crypt(3) against the user's hash), ROLE_NONE if either is wrong. */
enum srv_role srv_users_check(const struct srv_users *u, const char *name, const char *password);
const char *srv_role_name(enum srv_role r);

/* Sessions from POST /api/v1/login: a random token (getrandom, 32 bytes as hex) for a user and
 * role, kept in memory for SRV_SESSION_SECONDS. */
#define SRV_SESSION_SECONDS (12 * 3600)
#define SRV_TOKEN_HEX 64
int srv_session_new(const char *user, enum srv_role role, char token[SRV_TOKEN_HEX + 1]);   /* 0 or -1 */
/* The session's user (valid until the session goes) and role; NULL if token is none. */
const char *srv_session_find(const char *token, enum srv_role *role);
void srv_session_drop(const char *token);

/* `ejobctl serve --hash-password`: a password from stdin (one line), its yescrypt hash on stdout. */
int srv_hash_password(void);

/* The audit log: one JSON line per write, appended to --audit FILE (if given) and kept in memory
 * (the last SRV_AUDIT_KEEP). srv_audit_open: 0, or -1 after a message. */
#define SRV_AUDIT_KEEP 1000
int srv_audit_open(const char *file);
void srv_audit_add(const char *line);   /* one JSON object, no newline */
/* The last limit lines (the file's, else memory's) as a JSON array; malloc'd, NULL if out of memory. */
char *srv_audit_read(int limit);

/* GET /metrics (ejobctl_serve_metrics.c): the series of every job of c's namespace on f. 0, or 1
 * when ZooKeeper failed (ejob_zookeeper_up 0 written, the message in c->msg). */
struct ctl;
int srv_metrics(struct ctl *c, FILE *f);

/* GET /api/v1/jobs/{job}/history and /trace, and GET /api/v1/history and /trace over every job
 * (ejobctl_serve_pg.c): a page of JOB_EXECUTION_LOG or JOB_STATUS_TRACE_LOG from the PostgreSQL at
 * url (--pg; NULL: none), newest first. The query's
 * parameters as given (NULL: not given); they are checked here. 200 with *doc (json_decref it), or
 * the HTTP status (400 a bad parameter, 503 no --pg or PostgreSQL away, 500 a failed query) with
 * err and *hint (may be NULL). */
struct srv_pgq {
	const char *job;            /* NULL: every job */
	int trace;                  /* JOB_STATUS_TRACE_LOG, else JOB_EXECUTION_LOG */
	const char *item, *outcome; /* history: sharding_item; ok, failed, running */
	const char *state, *task;   /* trace: state (TASK_STAGING, ...); task_id */
	const char *ip;             /* history: ip; trace: slave_id */
	const char *since, *until;  /* ISO 8601 or epoch ms: start_time (creation_time) in [since, until) */
	const char *limit, *cursor; /* rows a page (1-500, 50); "next" of the page before */
};
struct json_t;
unsigned srv_pg_query(const char *url, const struct srv_pgq *q, struct json_t **doc, char *err, size_t el,
                      const char **hint);

#endif
