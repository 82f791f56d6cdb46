/* tools/ejobctl_serve_auth.c: `ejobctl serve`'s users (--auth FILE, crypt(3) hashes), its
 * login sessions, and its audit log (--audit FILE). */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "tools/ejobctl_serve.h"
#include "tools/ejobctl_serve_int.h"

/* ---- users ----------------------------------------------------------------------------------- */

struct srv_user {
	char *name, *hash;
	enum srv_role role;
};

struct srv_users {
	struct srv_user *v;
	int n;
};

const char *srv_role_name(enum srv_role r)
{
	return r == ROLE_ADMIN ? "admin" : r == ROLE_OPERATOR ? "operator" : r == ROLE_VIEWER ? "viewer" : "none";
}

static enum srv_role role_of(const char *s)
{
	return !strcmp(s, "viewer") ? ROLE_VIEWER : !strcmp(s, "operator") ? ROLE_OPERATOR : !strcmp(s, "admin") ? ROLE_ADMIN
	                                                                                                        : ROLE_NONE;
}

void srv_users_free(struct srv_users *u)
{
	if (!u) return;
	for (int i = 0; i < u->n; i++) free(u->v[i].name), free(u->v[i].hash);
	free(u->v);
	free(u);
}

struct srv_users *srv_users_load(const char *file)
{
	FILE *f = fopen(file, "re");
	if (!f) {
		srv_log(LOGLINE_ERROR, "--auth %s: cannot open: %s", file, strerror(errno));
		return NULL;
	}
	struct srv_users *u = calloc(1, sizeof *u);
	char *line = NULL;
	size_t cap = 0;
	int ln = 0, cap_v = 0, bad = 0;
	ssize_t len;
	while (u && (len = getline(&line, &cap, f)) >= 0) {
		ln++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
		if (!len || line[0] == '#') continue;
		/* name:HASH:role; a hash has no ':' (crypt(3)'s alphabet is [./0-9A-Za-z$]) */
		char *c1 = strchr(line, ':'), *c2 = strrchr(line, ':');
		if (!c1 || c1 == c2 || c1 == line) {
			srv_log(LOGLINE_ERROR, "%s:%d: want name:HASH:role (HASH from 'ejobctl serve --hash-password')",
			        file, ln);
			bad = 1;
			continue;
		}
		*c1 = *c2 = 0;
		enum srv_role r = role_of(c2 + 1);
		if (!r) {
			srv_log(LOGLINE_ERROR, "%s:%d: role '%s': give viewer, operator or admin", file, ln, c2 + 1);
			bad = 1;
			continue;
		}
		if (c1[1] != '$') {
			srv_log(LOGLINE_ERROR, "%s:%d: user '%s': the hash is not crypt(3)'s ($y$..., $6$...): make one "
			        "with 'ejobctl serve --hash-password'", file, ln, line);
			bad = 1;
			continue;
		}
		for (int i = 0; i < u->n; i++)
			if (!strcmp(u->v[i].name, line)) {
				srv_log(LOGLINE_ERROR, "%s:%d: user '%s' twice", file, ln, line);
				bad = 1;
			}
		if (u->n == cap_v) {
			cap_v = cap_v ? 2 * cap_v : 8;
			struct srv_user *nv = realloc(u->v, (size_t)cap_v * sizeof *nv);
			if (!nv) break;
			u->v = nv;
		}
		u->v[u->n++] = (struct srv_user){ strdup(line), strdup(c1 + 1), r };
	}
	free(line);
	fclose(f);
	if (u && !bad && !u->n) {
		srv_log(LOGLINE_ERROR, "--auth %s: no user in it (lines name:HASH:role)", file);
		bad = 1;
	}
	if (!u || bad) {
		if (!u) srv_log(LOGLINE_ERROR, "out of memory");
		srv_users_free(u);
		return NULL;
	}
	return u;
}

enum srv_role srv_users_check(const struct srv_users *u, const char *name, const char *password)
{
	static struct crypt_data cd;   /* large; one request at a time */
	for (int i = 0; i < u->n; i++) {
		if (strcmp(u->v[i].name, name)) continue;
		memset(&cd, 0, sizeof cd);
		const char *h = crypt_r(password, u->v[i].hash, &cd);
		if (h && h[0] != '*' && !strcmp(h, u->v[i].hash)) return u->v[i].role;
		return ROLE_NONE;
	}
	return ROLE_NONE;
}

int srv_hash_password(void)
{
	char *pw = NULL;
	size_t cap = 0;
	ssize_t n = getline(&pw, &cap, stdin);
	if (n < 0) {
		fprintf(stderr, "ejobctl serve --hash-password: give the password on stdin (one line)\n");
		free(pw);
		return 2;
	}
	while (n > 0 && (pw[n - 1] == '\n' || pw[n - 1] == '\r')) pw[--n] = 0;
	if (!n) {
		fprintf(stderr, "ejobctl serve --hash-password: the password is empty\n");
		free(pw);
		return 2;
	}
	char *salt = crypt_gensalt_ra("$y$", 0, NULL, 0);
	struct crypt_data *cd = calloc(1, sizeof *cd);
	const char *h = salt && cd ? crypt_r(pw, salt, cd) : NULL;
	int r = 0;
	if (!h || h[0] == '*') {
		fprintf(stderr, "ejobctl serve --hash-password: crypt(3) failed: %s\n", strerror(errno));
		r = 1;
	} else {
		printf("%s\n", h);
	}
	explicit_bzero(pw, cap);
	free(pw);
	free(salt);
	free(cd);
	return r;
}

/* ---- sessions ---------------------------------------------------------------------------------- */

#define SESSIONS 256

static struct session {
	char token[SRV_TOKEN_HEX + 1];
	char user[128];
	enum srv_role role;
	time_t until;
} sessions[SESSIONS];

int srv_session_new(const char *user, enum srv_role role, char token[SRV_TOKEN_HEX + 1])
{
	unsigned char raw[SRV_TOKEN_HEX / 2];
	size_t got = 0;
	while (got < sizeof raw) {
		ssize_t k = getrandom(raw + got, sizeof raw - got, 0);
		if (k < 0 && errno == EINTR) continue;
		if (k < 0) return -1;
		got += (size_t)k;
	}
	for (size_t i = 0; i < sizeof raw; i++) snprintf(token + 2 * i, 3, "%02x", raw[i]);
	time_t now = time(NULL);
	struct session *slot = &sessions[0];
	for (int i = 0; i < SESSIONS; i++) {             /* a free or expired slot, else the oldest */
		if (sessions[i].until <= now) {
			slot = &sessions[i];
			break;
		}
		if (sessions[i].until < slot->until) slot = &sessions[i];
	}
	snprintf(slot->token, sizeof slot->token, "%s", token);
	snprintf(slot->user, sizeof slot->user, "%s", user);
	slot->role = role;
	slot->until = now + SRV_SESSION_SECONDS;
	return 0;
}

static struct session *session_at(const char *token)
{
	if (!token || strlen(token) != SRV_TOKEN_HEX) return NULL;
	time_t now = time(NULL);
	for (int i = 0; i < SESSIONS; i++)
		if (sessions[i].until > now && !strcmp(sessions[i].token, token)) return &sessions[i];
	return NULL;
}

const char *srv_session_find(const char *token, enum srv_role *role)
{
	struct session *s = session_at(token);
	if (!s) return NULL;
	*role = s->role;
	return s->user;
}

void srv_session_drop(const char *token)
{
	struct session *s = session_at(token);
	if (s) memset(s, 0, sizeof *s);
}

/* ---- audit ---------------------------------------------------------------------------------- */

static int audit_fd = -1;
static const char *audit_path;
static char *ring[SRV_AUDIT_KEEP];
static int ring_next, ring_n;

int srv_audit_open(const char *file)
{
	audit_fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
	if (audit_fd < 0) {
		srv_log(LOGLINE_ERROR, "--audit %s: cannot open for appending: %s", file, strerror(errno));
		return -1;
	}
	audit_path = file;
	return 0;
}

void srv_audit_add(const char *line)
{
	free(ring[ring_next]);
	ring[ring_next] = strdup(line);
	ring_next = (ring_next + 1) % SRV_AUDIT_KEEP;
	if (ring_n < SRV_AUDIT_KEEP) ring_n++;
	if (audit_fd < 0) return;
	size_t n = strlen(line);
	char *b = malloc(n + 1);
	if (!b) return;
	memcpy(b, line, n);
	b[n] = '\n';
	/* one write(2) per line with O_APPEND: lines of two writers never interleave */
	ssize_t w;
	do w = write(audit_fd, b, n + 1);
	while (w < 0 && errno == EINTR);
	if (w != (ssize_t)(n + 1))
		srv_log(LOGLINE_ERROR, "--audit %s: write failed: %s", audit_path, w < 0 ? strerror(errno) : "short");
	free(b);
}

char *srv_audit_read(int limit)
{
	json_t *a = json_array();
	if (!a) return NULL;
	FILE *f = audit_path ? fopen(audit_path, "re") : NULL;
	if (f) {
		char *line = NULL;
		size_t cap = 0;
		while (getline(&line, &cap, f) >= 0) {
			json_t *o = json_loads(line, 0, NULL);
			if (o) json_array_append_new(a, o);
		}
		free(line);
		fclose(f);
	} else {
		for (int i = 0; i < ring_n; i++) {
			int k = (ring_next - ring_n + i + SRV_AUDIT_KEEP) % SRV_AUDIT_KEEP;
			json_t *o = ring[k] ? json_loads(ring[k], 0, NULL) : NULL;
			if (o) json_array_append_new(a, o);
		}
	}
	while (limit > 0 && json_array_size(a) > (size_t)limit) json_array_remove(a, 0);
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}
