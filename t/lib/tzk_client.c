/* t/lib/tzk_client.c: the synchronous client of t/lib/tzk.h (connect, read, write, list, dump);
 * the servers are t/lib/tzk.c. */
#include "t/lib/tzk.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t/lib/tlib.h"
#include "t/lib/tzk_int.h"

/* ---- the client ---- */

static void client_log_init(void)
{
	static FILE *f;
	if (f) return;
	char p[600];
	snprintf(p, sizeof p, "%s/zk-client.log", tlib_tmpdir());
	f = fopen(p, "ae");
	if (!f) { tzk_say("fopen %s: %s (the C client logs to stderr)", p, strerror(errno)); return; }
	setvbuf(f, NULL, _IOLBF, 0);
	zoo_set_log_stream(f);
	zoo_set_debug_level(ZOO_LOG_LEVEL_INFO);
}

static void no_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh; (void)type; (void)state; (void)path; (void)ctx;
}

struct auth_wait {
	atomic_int done;
	atomic_int rc;
};

static void auth_done(int rc, const void *data)
{
	struct auth_wait *aw = (struct auth_wait *)data;
	atomic_store(&aw->rc, rc);
	atomic_store(&aw->done, 1);
}

static int auth_answered(void *arg)
{
	return atomic_load(&((struct auth_wait *)arg)->done);
}

int tzk_wait_state(zhandle_t *zh, int state, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		if (zoo_state(zh) == state) return 1;
		if (tlib_now_ms() >= end) return 0;
		tzk_sleep_ms(2);
	}
}

static const char *state_name(int s)
{
	if (s == ZOO_CONNECTED_STATE) return "connected";
	if (s == ZOO_CONNECTING_STATE) return "connecting";
	if (s == ZOO_ASSOCIATING_STATE) return "associating";
	if (s == ZOO_EXPIRED_SESSION_STATE) return "session expired";
	if (s == ZOO_AUTH_FAILED_STATE) return "auth failed";
	if (s == ZOO_NOTCONNECTED_STATE) return "not connected";
	return s == 0 ? "closed" : "?";
}

zhandle_t *tzk_connect(const char *hosts, unsigned session_ms, const char *digest, unsigned timeout_ms)
{
	client_log_init();
	uint64_t t0 = tlib_now_ms();
	zhandle_t *zh = zookeeper_init(hosts, no_watcher, (int)session_ms, NULL, NULL, 0);
	if (!zh) { tzk_say("zookeeper_init(%s) failed: %s", hosts, strerror(errno)); return NULL; }
	struct auth_wait aw = { 0, 0 };
	if (digest) {
		int rc = zoo_add_auth(zh, "digest", digest, (int)strlen(digest), auth_done, &aw);
		if (rc != ZOK) {
			tzk_say("zoo_add_auth(digest) on %s failed: %s", hosts, zerror(rc));
			zookeeper_close(zh);
			return NULL;
		}
	}
	if (!tzk_wait_state(zh, ZOO_CONNECTED_STATE, timeout_ms)) {
		tzk_say("no ZooKeeper session with %s after %ums (state: %s)", hosts, timeout_ms, state_name(zoo_state(zh)));
		zookeeper_close(zh);   /* after it, no completion runs: aw may go */
		return NULL;
	}
	if (digest) {
		uint64_t spent = tlib_now_ms() - t0;
		unsigned left = spent >= timeout_ms ? 1 : timeout_ms - (unsigned)spent;
		if (!tlib_wait_for(auth_answered, &aw, left) || atomic_load(&aw.rc) != ZOK) {
			tzk_say("digest auth on %s: %s", hosts,
			    atomic_load(&aw.done) ? zerror(atomic_load(&aw.rc)) : "no answer");
			zookeeper_close(zh);
			return NULL;
		}
	}
	return zh;
}

void tzk_close(zhandle_t *zh)
{
	if (zh) zookeeper_close(zh);
}

int tzk_session_ms(zhandle_t *zh)
{
	return zoo_recv_timeout(zh);
}

#define MAX_DATA (1 << 20)   /* jute.maxbuffer: no node holds more */

int tzk_get(zhandle_t *zh, const char *path, char **data, struct Stat *st)
{
	struct Stat s;
	char *buf = malloc(MAX_DATA + 1);
	if (!buf) return ZSYSTEMERROR;
	int len = MAX_DATA;
	int rc = zoo_get(zh, path, 0, buf, &len, &s);
	if (rc != ZOK || len < 0 || !data) {
		free(buf);
		buf = NULL;
	} else {
		buf[len] = '\0';
		char *nb = realloc(buf, (size_t)len + 1);
		if (nb) buf = nb;
	}
	if (data) *data = buf;
	if (st && rc == ZOK) *st = s;
	return rc;
}

int tzk_exists(zhandle_t *zh, const char *path, struct Stat *st)
{
	struct Stat s;
	int rc = zoo_exists(zh, path, 0, &s);
	if (st && rc == ZOK) *st = s;
	return rc;
}

int tzk_wait_exists(zhandle_t *zh, const char *path, int want, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		int rc = tzk_exists(zh, path, NULL);
		if ((want && rc == ZOK) || (!want && rc == ZNONODE)) return 1;
		if (tlib_now_ms() >= end) return 0;
		tzk_sleep_ms(5);
	}
}

int tzk_wait_data(zhandle_t *zh, const char *path, const char *want, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		char *d = NULL;
		int rc = tzk_get(zh, path, &d, NULL);
		int yes = rc == ZOK && (!want || !strcmp(d ? d : "", want));
		free(d);
		if (yes) return 1;
		if (tlib_now_ms() >= end) return 0;
		tzk_sleep_ms(5);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int tzk_children(zhandle_t *zh, const char *path, struct String_vector *out)
{
	memset(out, 0, sizeof *out);
	int rc = zoo_get_children(zh, path, 0, out);
	if (rc == ZOK && out->count > 1) qsort(out->data, (size_t)out->count, sizeof out->data[0], cmp_str);
	return rc;
}

char *tzk_ls(zhandle_t *zh, const char *path, int *rcp)
{
	struct String_vector v;
	int rc = tzk_children(zh, path, &v);
	if (rcp) *rcp = rc;
	if (rc != ZOK) return NULL;
	size_t len = 1;
	for (int i = 0; i < v.count; i++) len += strlen(v.data[i]) + 1;
	char *s = malloc(len), *p = s;
	if (s) {
		*p = '\0';
		for (int i = 0; i < v.count; i++) p += sprintf(p, "%s%s", i ? "," : "", v.data[i]);
	}
	deallocate_String_vector(&v);
	return s;
}

int tzk_create(zhandle_t *zh, const char *path, const char *data, int flags, const struct ACL_vector *acl)
{
	const struct ACL_vector *a = acl ? acl : &ZOO_OPEN_ACL_UNSAFE;
	int len = data ? (int)strlen(data) : -1;
	char made[1024];
	int rc = zoo_create(zh, path, data, len, a, flags, made, sizeof made);
	if (rc != ZNONODE) return rc;
	char *p = strdup(path);
	if (!p) return ZSYSTEMERROR;
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		int r = zoo_create(zh, p, "", 0, a, 0, made, sizeof made);
		*s = '/';
		if (r != ZOK && r != ZNODEEXISTS) { free(p); return r; }
	}
	free(p);
	return zoo_create(zh, path, data, len, a, flags, made, sizeof made);
}

int tzk_set(zhandle_t *zh, const char *path, const char *data)
{
	return zoo_set(zh, path, data, data ? (int)strlen(data) : -1, -1);
}

static char *child_path(const char *parent, const char *name)
{
	size_t pl = strlen(parent), nl = strlen(name);
	char *s = malloc(pl + nl + 2);
	if (!s) return NULL;
	memcpy(s, parent, pl);
	size_t o = pl;
	if (!pl || parent[pl - 1] != '/') s[o++] = '/';
	memcpy(s + o, name, nl + 1);
	return s;
}

int tzk_delete_r(zhandle_t *zh, const char *path)
{
	int root = strcmp(path, "/") == 0;
	for (int tries = 0; tries < 10; tries++) {
		struct String_vector v;
		int rc = zoo_get_children(zh, path, 0, &v);
		if (rc == ZNONODE) return ZOK;
		if (rc != ZOK) return rc;
		for (int i = 0; i < v.count && rc == ZOK; i++) {
			if (root && !strcmp(v.data[i], "zookeeper")) continue;
			char *c = child_path(path, v.data[i]);
			rc = c ? tzk_delete_r(zh, c) : ZSYSTEMERROR;
			free(c);
		}
		deallocate_String_vector(&v);
		if (rc != ZOK || root) return rc;
		rc = zoo_delete(zh, path, -1);
		if (rc == ZOK || rc == ZNONODE) return ZOK;
		if (rc != ZNOTEMPTY) return rc;   /* else a child came meanwhile: again */
	}
	return ZNOTEMPTY;
}

struct sbuf {
	char *s;
	size_t len, cap;
	int oom;
};

static void sb_add(struct sbuf *b, const char *p, size_t n)
{
	if (b->oom) return;
	if (b->cap - b->len < n + 1) {
		size_t nc = b->cap ? b->cap : 4096;
		while (nc - b->len < n + 1) nc *= 2;
		char *ns = realloc(b->s, nc);
		if (!ns) { b->oom = 1; return; }
		b->s = ns;
		b->cap = nc;
	}
	memcpy(b->s + b->len, p, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

static void sb_escaped(struct sbuf *b, const char *d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)d[i];
		char e[8];
		if (c == '\\') sb_str(b, "\\\\");
		else if (c == '\n') sb_str(b, "\\n");
		else if (c == '\r') sb_str(b, "\\r");
		else if (c == '\t') sb_str(b, "\\t");
		else if (c < 0x20 || c == 0x7f) { snprintf(e, sizeof e, "\\x%02x", c); sb_str(b, e); }
		else sb_add(b, d + i, 1);
	}
}

static int dump_node(zhandle_t *zh, const char *path, struct sbuf *b)
{
	char *data;
	struct Stat st;
	int rc = tzk_get(zh, path, &data, &st);
	if (rc != ZOK) return rc;
	sb_str(b, path);
	if (st.ephemeralOwner) sb_str(b, " [E]");
	if (data) {
		sb_str(b, " = ");
		sb_escaped(b, data, (size_t)st.dataLength);
	}
	sb_str(b, "\n");
	free(data);
	struct String_vector v;
	rc = tzk_children(zh, path, &v);
	if (rc == ZNONODE) return ZOK;   /* it went meanwhile */
	if (rc != ZOK) return rc;
	int top = strcmp(path, "/") == 0;
	for (int i = 0; i < v.count && rc == ZOK; i++) {
		if (top && !strcmp(v.data[i], "zookeeper")) continue;
		char *c = child_path(path, v.data[i]);
		if (!c) { rc = ZSYSTEMERROR; break; }
		rc = dump_node(zh, c, b);
		if (rc == ZNONODE) rc = ZOK;
		free(c);
	}
	deallocate_String_vector(&v);
	return rc;
}

char *tzk_dump(zhandle_t *zh, const char *path, int *rcp)
{
	struct sbuf b = { NULL, 0, 0, 0 };
	int rc = dump_node(zh, path, &b);
	if (rc == ZOK && b.oom) rc = ZSYSTEMERROR;
	if (rcp) *rcp = rc;
	if (rc != ZOK) { free(b.s); return NULL; }
	return b.s;
}
