/* tools/ejobctl_serve.h: `ejobctl serve`'s parts: the HTTP API (ejobctl_serve.c) and its users,
 * sessions and audit log (ejobctl_serve_auth.c). Requests run on threads of their own; these
 * have no locks: ejobctl_serve.c calls the users' and sessions' functions under its auth_mu and
 * the audit's under its big lock. */
#ifndef EJOB_EJOBCTL_SERVE_H
#define EJOB_EJOBCTL_SERVE_H

#include <stddef.h>

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

#endif
