/* t/native/zkc-probe.c: supervisor/zk/zkc* on a libev loop, driven line by line, for t/42-zkc-keep.
 * It is linked as the supervisor is (libzookeeper_st), which a test cannot be (tests link the mt
 * library, and one process cannot hold both).
 *
 *   zkc-probe HOSTS ROOT SESSION_MS [CLIENT_LOG]
 *
 * Commands on stdin, one per line (EOF: as quit); what happens on stdout, one line each:
 *   keep ID KIND PATH ITEM    a kept watch (KIND exists|data|children, ID 0-15)  "keep id=ID"
 *   arm ID | read ID          zkc_keep_arm | zkc_keep_read                        "arm id=ID rc=RC"
 *   armed ID                  zkc_keep_armed                                      "armed id=ID v=V"
 *   inflight ID               its reads not answered yet (a look inside)          "inflight id=ID n=N"
 *   free ID                   zkc_keep_free                                       "free id=ID"
 *   freecb ID                 zkc_keep_free from inside its next callback         "freed id=ID" then
 *   readfree ID               zkc_keep_read, zkc_keep_free at once (read in flight) "readfree id=ID rc=RC"
 *   get|exists|children PATH ITEM   zkc_*_item (ITEM "-": the plain call)          "sent req=OP rc=RC"
 *   multi ITEM PATH           a multi creating PATH, with zkc_multi_item          "sent req=multi rc=RC"
 *   holdexists                hold the next exists with a watch (zkc waiting for a missing node)
 *                             until "release": the test changes the node in between
 *                                                             "held exists path=P", "released"
 *   burst N PATH              N exists of PATH at once (items 0..N-1): once all are answered
 *                             "burst n=N failed=F inorder=0|1 inflight_max=M lease_min_ms=L ms=T"
 *                             (inorder: answered in the order sent; lease_min_ms: the least
 *                             lease left at an answer). ZKC_PROBE_WINDOW=W sets zkc's window.
 *   share N PATH BAD          N multis shared in one turn of the loop (zkc_multi_share), part i
 *                             creating PATH/i; part BAD (-1: none) creates PATH itself, which is
 *                             there: "share part=I rc=RC nops=K" each, then
 *                             "share done n=N requests=R" (R: requests zkc sent for them)
 *   trickle N PATH            N multis shared one per turn of the loop (an ev_idle), part i
 *                             creating PATH/i: "trickle sent n=N", then as share
 *   watchmany N PATH          N plain exists with a watch of PATH/i (i 0..N-1), answered:
 *                             "watchmany n=N answered=A ctxs=C" (C: the watcher contexts the
 *                             client was given for them, counted by the zoo_awexists below)
 *   watchcount                "watchcount fired=F twice=T": of those, told once, more than once
 *   bigmulti N OPS PATH       N multis of OPS creates each (PATH/i-k), sent at once: when all are
 *                             answered "bigmulti n=N ok=K ops_max=M" (M: the most ops zkc ever had
 *                             at the server at once, a look inside)
 *   sync                      four round trips one after the other                "sync"
 *   session                   the session's id and password, to take it over      "session id=X passwd=X"
 *   quit                      zkc_free, then zkc_keep_free of every keep left     "bye"
 * Answers:
 *   answer keep=ID item=I event=E rc=RC[ ver=V][ data=D][ kids=A,B]
 *   answer req=OP item=I event=E rc=RC[ ...]
 * and the session's changes: "state connected new=N", "state connecting", "state expired", ... */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "ipc/wait.h"
#include "supervisor/base/log.h"
#include "supervisor/zk/zkc_int.h"

#define NKEEPS 16

struct slot {
	zkc_keep_t *k;
	int id;
	enum zkc_keep_kind kind;
	int free_in_cb;
};

static struct ev_loop *loop;
static zkc_t *z;
static struct slot slots[NKEEPS];
static char inbuf[8192];
static size_t inlen;
static ev_io in_w;

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* holdexists: zkc is linked into this program, so this definition takes the client's place for it;
 * the real one is found with dlsym(RTLD_NEXT). A held request is sent at "release" (zkc thinks it
 * sent: its path and context live until the answer). */
typedef int (*awexists_fn)(zhandle_t *, const char *, watcher_fn, void *, stat_completion_t, const void *);
static struct {
	int armed, held;
	zhandle_t *zh;
	const char *path;
	watcher_fn w;
	void *wctx;
	stat_completion_t cb;
	const void *data;
} hold;

/* the watcher contexts the client was given (watchmany), up to 64 told apart */
static struct {
	void *seen[64];
	int nseen, over;
} ctxs;

static void ctx_seen(void *c)
{
	for (int i = 0; i < ctxs.nseen; i++)
		if (ctxs.seen[i] == c) return;
	if (ctxs.nseen < 64) ctxs.seen[ctxs.nseen++] = c;
	else ctxs.over = 1;
}

static awexists_fn real_awexists(void)
{
	static awexists_fn real;
	if (!real) real = (awexists_fn)dlsym(RTLD_NEXT, "zoo_awexists");
	return real;
}

int zoo_awexists(zhandle_t *zh, const char *path, watcher_fn watcher, void *wctx, stat_completion_t cb,
                 const void *data)
{
	if (watcher) ctx_seen(wctx);
	if (!hold.armed || !watcher) return real_awexists()(zh, path, watcher, wctx, cb, data);
	hold.armed = 0;
	hold.held = 1;
	hold.zh = zh;
	hold.path = path;
	hold.w = watcher;
	hold.wctx = wctx;
	hold.cb = cb;
	hold.data = data;
	out("held exists path=%s", path);
	return ZOK;
}

static void release(void)
{
	if (!hold.held) {
		out("error nothing held");
		return;
	}
	hold.held = 0;
	int rc = real_awexists()(hold.zh, hold.path, hold.w, hold.wctx, hold.cb, hold.data);
	out("released rc=%d", rc);
}
static void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void print_answer(const char *who, const struct zkc_res *r, int kind)
{
	char line[2048];
	int n = snprintf(line, sizeof line, "answer %s item=%" PRIu32 " event=%d rc=%d", who, r->item, r->event, r->rc);
	if (r->rc == ZOK && (kind == ZKC_KEEP_EXISTS || kind == ZKC_KEEP_DATA)) n += snprintf(line + n, sizeof line - (size_t)n, " ver=%d", r->stat.version);
	if (r->rc == ZOK && kind == ZKC_KEEP_DATA)
		n += snprintf(line + n, sizeof line - (size_t)n, " data=%.*s", r->data ? r->len : 0, r->data ? r->data : "");
	if (r->rc == ZOK && kind == ZKC_KEEP_CHILDREN) {
		n += snprintf(line + n, sizeof line - (size_t)n, " kids=");
		for (int i = 0; i < r->nchildren && n < (int)sizeof line - 64; i++)
			n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", i ? "," : "", r->children[i]);
	}
	out("%s", line);
}

static void keep_cb(void *arg, const struct zkc_res *r)
{
	struct slot *s = arg;
	char who[32];
	snprintf(who, sizeof who, "keep=%d", s->id);
	print_answer(who, r, (int)s->kind);
	if (s->free_in_cb) {
		zkc_keep_free(s->k);
		s->k = NULL;
		s->free_in_cb = 0;
		out("freed id=%d", s->id);
	}
}

static const char *const ops[] = { "exists", "get", "children", "multi" };

static void req_cb(void *arg, const struct zkc_res *r)
{
	int op = (int)(intptr_t)arg;
	char who[32];
	snprintf(who, sizeof who, "req=%s", ops[op]);
	print_answer(who, r, op == 3 ? -1 : op);
}

static void sync_cb(void *arg, const struct zkc_res *r)
{
	int left = (int)(intptr_t)arg;
	if (r->rc == ZOK && left > 1 && zkc_exists(z, "", NULL, NULL, sync_cb, (void *)(intptr_t)(left - 1)) == ZOK) return;
	if (r->rc == ZOK) out("sync");
	else out("sync rc=%d", r->rc);
}

/* burst: N requests at once, each answer checked for its place and the lease it leaves */
static struct {
	uint32_t n, got, next;
	int inorder, failed;
	int64_t lease_min_ms;
	uint64_t t0;
} burst;

static void burst_cb(void *arg, const struct zkc_res *r)
{
	(void)arg;
	if (r->item != burst.next++) burst.inorder = 0;
	if (r->rc != ZOK && r->rc != ZNONODE) burst.failed++;
	int64_t margin = (int64_t)(zkc_lease_ns(z) - wait_now_ns()) / 1000000;
	if (burst.got == 0 || margin < burst.lease_min_ms) burst.lease_min_ms = margin;
	if (++burst.got < burst.n) return;
	out("burst n=%" PRIu32 " failed=%d inorder=%d inflight_max=%u lease_min_ms=%" PRId64 " ms=%" PRIu64, burst.n,
	    burst.failed, burst.inorder, zkc_inflight_max(z), burst.lease_min_ms, (wait_now_ns() - burst.t0) / 1000000);
}

static struct {
	int n, answered;
	uint64_t req0;
} sh;

static void share_cb(void *arg, const struct zkc_res *r)
{
	out("share part=%d rc=%d nops=%d", (int)(intptr_t)arg, r->rc, r->nops);
	if (++sh.answered == sh.n) out("share done n=%d requests=%" PRIu64, sh.n, zkc_requests(z) - sh.req0);
}

static void cmd_share(int n, const char *path, int bad)
{
	sh.n = n;
	sh.answered = 0;
	sh.req0 = zkc_requests(z);
	char p[512];
	for (int i = 0; i < n; i++) {
		zkc_multi_t *m = zkc_multi_new();
		if (i == bad) snprintf(p, sizeof p, "%s", path);
		else snprintf(p, sizeof p, "%s/%d", path, i);
		zkc_multi_create(m, p, "s", 1, 0);
		int rc = zkc_multi_share(z, m, share_cb, (void *)(intptr_t)i);
		if (rc != ZOK) out("share part=%d rc=%d nops=0", i, rc);
	}
	out("share sent n=%d", n);
}

static struct {
	ev_idle w;
	int next;
	char path[256];
} tr;

static void trickle_cb(struct ev_loop *l, ev_idle *w, int revents)
{
	(void)revents;
	char p[300];
	snprintf(p, sizeof p, "%s/%d", tr.path, tr.next);
	zkc_multi_t *m = zkc_multi_new();
	zkc_multi_create(m, p, "t", 1, 0);
	int i = tr.next++;
	int rc = zkc_multi_share(z, m, share_cb, (void *)(intptr_t)i);
	if (rc != ZOK) out("share part=%d rc=%d nops=0", i, rc);
	if (tr.next == sh.n) {
		ev_idle_stop(l, w);
		out("trickle sent n=%d", sh.n);
	}
}

static void cmd_trickle(int n, const char *path)
{
	sh.n = n;
	sh.answered = 0;
	sh.req0 = zkc_requests(z);
	tr.next = 0;
	snprintf(tr.path, sizeof tr.path, "%s", path);
	ev_idle_init(&tr.w, trickle_cb);
	ev_idle_start(loop, &tr.w);
}

static void cmd_burst(uint32_t n, const char *path)
{
	burst.n = n;
	burst.got = burst.next = 0;
	burst.inorder = 1;
	burst.failed = 0;
	burst.t0 = wait_now_ns();
	for (uint32_t i = 0; i < n; i++)
		if (zkc_exists_item(z, path, i, NULL, NULL, burst_cb, NULL) != ZOK) {
			out("burst rc=error at %" PRIu32, i);
			return;
		}
	out("burst sent n=%" PRIu32 " (%" PRIu64 " ms)", n, (wait_now_ns() - burst.t0) / 1000000);
}

static struct {
	int n, answered;
	uint8_t *fired;
} many;

static void many_cb(void *arg, const struct zkc_res *r)
{
	(void)arg;
	(void)r;
	if (++many.answered < many.n) return;
	out("watchmany n=%d answered=%d ctxs=%d%s", many.n, many.answered, ctxs.nseen, ctxs.over ? "+" : "");
}

static void many_watch(void *arg, int type, const char *path)
{
	(void)type;
	(void)path;
	uint8_t *f = &many.fired[(intptr_t)arg];
	if (*f < 255) (*f)++;
}

static void cmd_watchmany(int n, const char *path)
{
	free(many.fired);
	many.fired = calloc((size_t)n, 1);
	many.n = n;
	many.answered = 0;
	ctxs.nseen = ctxs.over = 0;
	char p[512];
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof p, "%s/%d", path, i);
		if (zkc_exists(z, p, many_watch, (void *)(intptr_t)i, many_cb, NULL) != ZOK) {
			out("watchmany rc=error at %d", i);
			return;
		}
	}
}

static void cmd_watchcount(void)
{
	int fired = 0, twice = 0;
	for (int i = 0; i < many.n; i++) fired += many.fired[i] > 0, twice += many.fired[i] > 1;
	out("watchcount fired=%d twice=%d", fired, twice);
}

static struct {
	int n, answered, ok;
} big;

static void big_cb(void *arg, const struct zkc_res *r)
{
	(void)arg;
	big.ok += r->rc == ZOK;
	if (++big.answered < big.n) return;
	out("bigmulti n=%d ok=%d ops_max=%u", big.n, big.ok, z->win.inflight_ops_max);
}

static void cmd_bigmulti(int n, int nops, const char *path)
{
	big.n = n;
	big.answered = big.ok = 0;
	z->win.inflight_ops_max = 0;
	char p[512];
	for (int i = 0; i < n; i++) {
		zkc_multi_t *m = zkc_multi_new();
		for (int k = 0; k < nops; k++) {
			snprintf(p, sizeof p, "%s/%d-%d", path, i, k);
			zkc_multi_create(m, p, "", 0, 0);
		}
		if (zkc_multi_commit(z, m, big_cb, NULL) != ZOK) {
			out("bigmulti rc=error at %d", i);
			return;
		}
	}
}

static void on_state(void *arg, enum zkc_state st, int new_session)
{
	(void)arg;
	switch (st) {
	case ZKC_CONNECTED: out("state connected new=%d", new_session); break;
	case ZKC_CONNECTING: out("state connecting"); break;
	case ZKC_EXPIRED: out("state expired"); break;
	case ZKC_AUTH_FAILED: out("state auth-failed"); break;
	}
}

static struct slot *slot_of(const char *id)
{
	int i = atoi(id);
	if (i < 0 || i >= NKEEPS || !slots[i].k) {
		out("error no keep %s", id);
		return NULL;
	}
	return &slots[i];
}

static void quit(void)
{
	free(many.fired);
	zkc_free(z);
	z = NULL;
	for (int i = 0; i < NKEEPS; i++) {
		zkc_keep_free(slots[i].k);      /* after zkc_free: allowed */
		slots[i].k = NULL;
	}
	ev_io_stop(loop, &in_w);
	out("bye");
}

static void cmd_keep(char **a, int n)
{
	static const char *const kinds[] = { "exists", "data", "children" };
	int id = n == 5 ? atoi(a[1]) : -1, kind = -1;
	for (int i = 0; i < 3 && n == 5; i++)
		if (!strcmp(a[2], kinds[i])) kind = i;
	if (id < 0 || id >= NKEEPS || kind < 0 || slots[id].k) {
		out("error bad keep");
		return;
	}
	slots[id].id = id;
	slots[id].kind = (enum zkc_keep_kind)kind;
	slots[id].k = zkc_keep_new(z, (enum zkc_keep_kind)kind, a[3], (uint32_t)strtoul(a[4], NULL, 10), keep_cb, &slots[id]);
	out("keep id=%d", id);
}

static void cmd_keep_op(char **a)
{
	struct slot *s = slot_of(a[1]);
	if (!s) return;
	if (!strcmp(a[0], "arm")) {
		out("arm id=%d rc=%d", s->id, zkc_keep_arm(s->k));
	} else if (!strcmp(a[0], "read")) {
		out("read id=%d rc=%d", s->id, zkc_keep_read(s->k));
	} else if (!strcmp(a[0], "armed")) {
		out("armed id=%d v=%d", s->id, zkc_keep_armed(s->k));
	} else if (!strcmp(a[0], "inflight")) {
		out("inflight id=%d n=%d", s->id, s->k->inflight);
	} else if (!strcmp(a[0], "free")) {
		zkc_keep_free(s->k);
		s->k = NULL;
		out("free id=%d", s->id);
	} else if (!strcmp(a[0], "freecb")) {
		s->free_in_cb = 1;
	} else if (!strcmp(a[0], "readfree")) {
		int rc = zkc_keep_read(s->k);
		zkc_keep_free(s->k);
		s->k = NULL;
		out("readfree id=%d rc=%d", s->id, rc);
	}
}

static void cmd_req(char **a, int n)
{
	int op = 0;
	while (op < 4 && strcmp(a[0], ops[op])) op++;
	if (op == 4 || n != 3) {
		out("error bad request");
		return;
	}
	int rc;
	if (op == 3) {
		zkc_multi_t *m = zkc_multi_new();
		zkc_multi_create(m, a[2], "m", 1, 0);
		zkc_multi_item(m, (uint32_t)strtoul(a[1], NULL, 10));
		rc = zkc_multi_commit(z, m, req_cb, (void *)(intptr_t)op);
	} else {
		void *arg = (void *)(intptr_t)op;
		int plain = !strcmp(a[2], "-");
		uint32_t item = (uint32_t)strtoul(a[2], NULL, 10);
		if (op == 0) rc = plain ? zkc_exists(z, a[1], NULL, NULL, req_cb, arg) : zkc_exists_item(z, a[1], item, NULL, NULL, req_cb, arg);
		else if (op == 1) rc = plain ? zkc_get(z, a[1], NULL, NULL, req_cb, arg) : zkc_get_item(z, a[1], item, NULL, NULL, req_cb, arg);
		else rc = plain ? zkc_children(z, a[1], NULL, NULL, req_cb, arg) : zkc_children_item(z, a[1], item, NULL, NULL, req_cb, arg);
	}
	out("sent req=%s rc=%d", ops[op], rc);
}

static void command(char *line)
{
	char *a[8], *save = NULL;
	int n = 0;
	for (char *t = strtok_r(line, " ", &save); t && n < 8; t = strtok_r(NULL, " ", &save)) a[n++] = t;
	if (!n) return;
	if (!z) {
		out("error closed");
	} else if (!strcmp(a[0], "keep")) {
		cmd_keep(a, n);
	} else if (n == 2 && (!strcmp(a[0], "arm") || !strcmp(a[0], "read") || !strcmp(a[0], "armed") ||
	                      !strcmp(a[0], "inflight") || !strcmp(a[0], "free") || !strcmp(a[0], "freecb") ||
	                      !strcmp(a[0], "readfree"))) {
		cmd_keep_op(a);
	} else if (!strcmp(a[0], "holdexists")) {
		hold.armed = 1;
	} else if (!strcmp(a[0], "release")) {
		release();
	} else if (!strcmp(a[0], "burst") && n == 3) {
		cmd_burst((uint32_t)strtoul(a[1], NULL, 10), a[2]);
	} else if (!strcmp(a[0], "share") && n == 4) {
		cmd_share(atoi(a[1]), a[2], atoi(a[3]));
	} else if (!strcmp(a[0], "trickle") && n == 3 && atoi(a[1]) > 0) {
		cmd_trickle(atoi(a[1]), a[2]);
	} else if (!strcmp(a[0], "watchmany") && n == 3 && atoi(a[1]) > 0) {
		cmd_watchmany(atoi(a[1]), a[2]);
	} else if (!strcmp(a[0], "bigmulti") && n == 4 && atoi(a[1]) > 0 && atoi(a[2]) > 0) {
		cmd_bigmulti(atoi(a[1]), atoi(a[2]), a[3]);
	} else if (!strcmp(a[0], "watchcount")) {
		cmd_watchcount();
	} else if (!strcmp(a[0], "sync")) {
		int rc = zkc_exists(z, "", NULL, NULL, sync_cb, (void *)(intptr_t)4);
		if (rc != ZOK) out("sync rc=%d", rc);
	} else if (!strcmp(a[0], "session")) {
		const clientid_t *id = z->zh ? zoo_client_id(z->zh) : NULL;
		char pw[33] = "";
		for (int i = 0; id && i < 16; i++) snprintf(pw + 2 * i, 3, "%02x", (unsigned char)id->passwd[i]);
		out("session id=%" PRIx64 " passwd=%s", id ? (uint64_t)id->client_id : 0, pw);
	} else if (!strcmp(a[0], "quit")) {
		quit();
	} else {
		cmd_req(a, n);
	}
}

static void in_cb(struct ev_loop *l, ev_io *w, int revents)
{
	(void)l;
	(void)revents;
	ssize_t r = read(w->fd, inbuf + inlen, sizeof inbuf - 1 - inlen);
	if (r < 0 && (errno == EINTR || errno == EAGAIN)) return;
	if (r <= 0) {
		if (z) quit();
		return;
	}
	inlen += (size_t)r;
	char *nl;
	while (z && (nl = memchr(inbuf, '\n', inlen))) {
		*nl = '\0';
		command(inbuf);
		size_t used = (size_t)(nl + 1 - inbuf);
		memmove(inbuf, nl + 1, inlen - used);
		inlen -= used;
	}
	if (inlen == sizeof inbuf - 1) inlen = 0;      /* a line too long: dropped */
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: zkc-probe HOSTS ROOT SESSION_MS [CLIENT_LOG]\n");
		return 2;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);      /* gone with the test */
	if (getppid() == 1) return 1;
	signal(SIGPIPE, SIG_IGN);
	log_init("zkc-probe");
	FILE *clog = argc > 4 ? fopen(argv[4], "ae") : NULL;
	loop = ev_default_loop(0);
	struct zkc_params p = { .hosts = argv[1], .root = argv[2], .session_timeout_ms = atoi(argv[3]),
	                        .base_sleep_ms = 100, .max_sleep_ms = 500, .client_log = clog,
	                        .window = getenv("ZKC_PROBE_WINDOW") ? atoi(getenv("ZKC_PROBE_WINDOW")) : 0 };
	static const struct zkc_hooks h = { .state = on_state };
	z = zkc_new(loop, &p, &h, NULL);
	if (!z) return 1;
	ev_io_init(&in_w, in_cb, 0, EV_READ);
	ev_io_start(loop, &in_w);
	zkc_start(z);
	ev_run(loop, 0);
	if (clog) fclose(clog);
	return 0;
}
