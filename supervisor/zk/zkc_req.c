/* supervisor/zk/zkc_req.c: requests and multis of the session (see zkc.h): each request carries its
 * callback, its item and the watch set with it; the client's completions copy what they got into
 * a message for the loop, and the loop hands the answer to the callback or to its kept watch. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/wait.h"
#include "supervisor/zk/zkc_int.h"

/* Every registration's watcher, with the handle's struct sess (struct watch says why): the event
 * goes to the loop with its path and session, where on_watch finds what it fires. */
static void path_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)state;
	const struct sess *ss = ctx;
	if (type == ZOO_SESSION_EVENT) return;     /* the global watcher has it */
	struct msg *m = calloc(1, sizeof *m);
	if (!m) return;
	m->kind = M_WATCH;
	m->type = type;
	m->session = ss->session;
	m->wpath = path ? strdup(path) : NULL;
	zkc_push(ss->z, m);
}

static struct msg *result_msg(const void *data, int rc)
{
	struct msg *m = calloc(1, sizeof *m);
	if (!m) return NULL;        /* cannot report: the request leaks its callback; logged below */
	m->kind = M_RESULT;
	m->req = (struct req *)(uintptr_t)data;
	m->rc = rc;
	return m;
}

static void oom_in_thread(void)
{
	static const char msg[] = "ejob-supervisor: out of memory in a ZooKeeper completion\n";
	if (write(2, msg, sizeof msg - 1) < 0) {}
}

static void c_stat(int rc, const struct Stat *st, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	if (st) m->stat = *st;
	zkc_push(m->req->z, m);
}

static void c_data(int rc, const char *v, int len, const struct Stat *st, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	if (st) m->stat = *st;
	if (v && len >= 0) {
		m->data = malloc((size_t)len + 1);
		if (m->data) {
			memcpy(m->data, v, (size_t)len);
			m->data[len] = '\0';
			m->len = len;
		}
	}
	zkc_push(m->req->z, m);
}

static void c_kids(int rc, const struct String_vector *sv, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	if (sv && sv->count > 0) {
		m->kids.data = calloc((size_t)sv->count, sizeof(char *));
		if (m->kids.data) {
			for (int i = 0; i < sv->count; i++) {
				m->kids.data[i] = strdup(sv->data[i]);
				if (!m->kids.data[i]) break;
				m->kids.count = i + 1;
			}
		}
	}
	zkc_push(m->req->z, m);
}

static void c_string(int rc, const char *v, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	if (v) m->created = strdup(v);
	zkc_push(m->req->z, m);
}

static void c_void(int rc, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	zkc_push(m->req->z, m);
}

static void c_multi(int rc, const void *data)
{
	struct msg *m = result_msg(data, rc);
	if (!m) return oom_in_thread();
	m->multi = 1;
	zkc_push(m->req->z, m);
}

/* ---- watches ---------------------------------------------------------------------------------- */

static void watch_init(struct watch *w, zkc_t *z, const char *path, int kind, zkc_watch_cb cb, void *arg)
{
	w->cb = cb;
	w->arg = arg;
	w->session = z->session;
	w->pending = 1;
	zkc_wtab_add(z, w, path, kind);
}

/* A plain registration, its path held after it */
static struct watch *watch_new(zkc_t *z, const char *path, int kind, zkc_watch_cb cb, void *arg)
{
	size_t n = strlen(path) + 1;
	struct watch *w = calloc(1, sizeof *w + n);
	if (!w) return NULL;
	char *p = (char *)(w + 1);
	memcpy(p, path, n);
	watch_init(w, z, p, kind, cb, arg);
	return w;
}

/* A kept watch's registration: its own (reg) unless the client still holds that one (one it let
 * go that has not fired yet). */
static struct watch *keep_watch(zkc_t *z, struct zkc_keep *k, int kind)
{
	if (k->reg_used) return watch_new(z, k->path, kind, NULL, NULL);
	memset(&k->reg, 0, sizeof k->reg);
	k->reg.emb = 1;
	k->reg_used = 1;
	watch_init(&k->reg, z, k->path, kind, NULL, NULL);
	return &k->reg;
}

void zkc_multi_free(zkc_multi_t *m)
{
	if (!m) return;
	for (int i = 0; i < m->n; i++) {
		free(m->paths[i]);
		free(m->datas[i]);
		free(m->created[i]);
	}
	free(m->ops);
	free(m->paths);
	free(m->datas);
	free(m->lens);
	free(m->created);
	free(m->stats);
	free(m->results);
	free(m);
}

/* ---- requests ---------------------------------------------------------------------------------- */

static struct req *req_new(zkc_t *z, const char *path, zkc_cb cb, void *arg, size_t size)
{
	if (!z->zh) return NULL;
	struct req *q = calloc(1, size);
	if (!q) return NULL;
	q->z = z;
	q->cb = cb;
	q->arg = arg;
	q->session = z->session;
	q->sent_ns = wait_now_ns();
	q->item = ZKC_NO_ITEM;
	if (path && !(q->path = zkc_full_path(z, path))) {
		free(q);
		return NULL;
	}
	return q;
}

static void req_drop(struct req *q)
{
	if (q->w) zkc_watch_free(q->z, q->w);
	free(q->data);
	free(q->path);
	free(q);
}

static unsigned req_ops(const struct req *q)
{
	return q->op == R_MULTI ? (unsigned)((const struct mreq *)q)->m->n : 1u;
}

/* The window has room for q: fewer than `window` requests and ZKC_WINDOW_OPS ops at the server
 * (one alone always goes) */
static int room(const zkc_t *z, const struct req *q)
{
	return z->win.inflight < z->win.window &&
	       (!z->win.inflight_ops || z->win.inflight_ops + req_ops(q) <= ZKC_WINDOW_OPS);
}

/* Hand q to the client now. */
static int send_now(zkc_t *z, struct req *q)
{
	watcher_fn wf = q->w ? path_watcher : NULL;
	void *wctx = q->w ? z->sess : NULL;
	zkc_multi_t *m;
	int rc;
	q->sent_ns = wait_now_ns();
	switch (q->op) {
	case R_EXISTS: rc = zoo_awexists(z->zh, q->path, wf, wctx, c_stat, q); break;
	case R_GET: rc = zoo_awget(z->zh, q->path, wf, wctx, c_data, q); break;
	case R_CHILDREN: rc = zoo_awget_children(z->zh, q->path, wf, wctx, c_kids, q); break;
	/* "" is the root itself: full_path gives "/ns" */
	case R_CREATE: rc = zoo_acreate(z->zh, q->path, q->data, q->data ? q->len : -1, &z->acl, q->flags, c_string, q); break;
	case R_SET: rc = zoo_aset(z->zh, q->path, q->data, q->data ? q->len : -1, q->version, c_stat, q); break;
	case R_DELETE: rc = zoo_adelete(z->zh, q->path, q->version, c_void, q); break;
	default:
		m = ((struct mreq *)q)->m;
		rc = zoo_amulti(z->zh, m->n, m->ops, m->results, c_multi, q);
		break;
	}
	if (rc != ZOK) return rc;
	free(q->data);              /* the client has its own copy */
	q->data = NULL;
	q->sent = 1;
	q->ops = req_ops(q);
	z->win.inflight_ops += q->ops;
	if (z->win.inflight_ops > z->win.inflight_ops_max) z->win.inflight_ops_max = z->win.inflight_ops;
	z->requests++;
	if (++z->win.inflight > z->win.inflight_max) z->win.inflight_max = z->win.inflight;
	return ZOK;
}

/* q goes now if nothing waits and the window has room (or it is urgent), else it waits its turn:
 * ZOK either way (its callback follows exactly once). Not sent: the error, q freed. */
static int submit(zkc_t *z, struct req *q, int urgent)
{
	if (urgent || (!z->win.wait_head && room(z, q) && z->state == ZKC_CONNECTED)) {
		int rc = send_now(z, q);
		if (rc != ZOK) {
			if (q->op == R_MULTI) zkc_multi_free(((struct mreq *)q)->m);
			req_drop(q);
		}
		return rc;
	}
	q->wnext = NULL;
	if (z->win.wait_tail) z->win.wait_tail->wnext = q;
	else z->win.wait_head = q;
	z->win.wait_tail = q;
	if (++z->win.nwait >= ZKC_BURST) z->win.burst = 1;
	return ZOK;
}

/* An answer for q that the client never gave: delivered on the loop like the client's. */
static void fail_waiting(zkc_t *z, struct req *q, int rc)
{
	struct msg *m = calloc(1, sizeof *m);
	if (!m) {
		log_error("zookeeper: out of memory failing a request; its callback is lost");
		return;
	}
	m->kind = M_RESULT;
	m->req = q;
	m->rc = rc;
	m->multi = q->op == R_MULTI;
	zkc_push(z, m);
}

void zkc_window_pump(zkc_t *z)
{
	while (z->win.wait_head && room(z, z->win.wait_head) && z->state == ZKC_CONNECTED && z->zh) {
		struct req *q = z->win.wait_head;
		z->win.wait_head = q->wnext;
		if (!z->win.wait_head) z->win.wait_tail = NULL;
		z->win.nwait--;
		int rc = send_now(z, q);
		if (rc != ZOK) fail_waiting(z, q, rc);
	}
}

void zkc_window_fail(zkc_t *z)
{
	while (z->win.wait_head) {
		struct req *q = z->win.wait_head;
		z->win.wait_head = q->wnext;
		fail_waiting(z, q, ZCLOSING);
	}
	z->win.wait_tail = NULL;
	z->win.nwait = 0;
	z->win.inflight = 0;
	z->win.inflight_ops = 0;
}

static int no_handle(const zkc_t *z)
{
	return z->zh ? ZSYSTEMERROR : ZINVALIDSTATE;
}

/* A read with an optional watch. A watch the server does not set (an error, or a get/children
 * of a missing node) would never fire: those are freed when the answer comes (zkc_on_result).
 * A kept watch's watch is its registration from now on (freed, it lets go of it). */
int zkc_read(zkc_t *z, const struct read *rd)
{
	struct req *q = req_new(z, rd->path, rd->cb, rd->arg, sizeof *q);
	if (!q) return no_handle(z);
	q->item = rd->item;
	q->keep = rd->keep;
	q->event = rd->event;
	q->probe = rd->probe;
	q->exists = rd->op == ZKC_KEEP_EXISTS;
	q->op = rd->op == ZKC_KEEP_EXISTS ? R_EXISTS : rd->op == ZKC_KEEP_DATA ? R_GET : R_CHILDREN;
	if (rd->watch) {
		if (!(q->w = rd->keep ? keep_watch(z, rd->keep, (int)rd->op)
		                      : watch_new(z, rd->path, (int)rd->op, rd->wcb, rd->warg))) {
			req_drop(q);
			return ZSYSTEMERROR;
		}
		if (rd->keep) {
			q->w->keep = rd->keep;
			rd->keep->w = q->w;
		}
	}
	int rc = submit(z, q, rd->urgent);
	if (rc == ZOK && rd->keep) rd->keep->inflight++;
	return rc;
}

static int read_item(zkc_t *z, enum zkc_keep_kind op, const char *path, uint32_t item, zkc_watch_cb w, void *warg,
                     zkc_cb cb, void *arg)
{
	struct read rd = { .op = op, .path = path, .item = item, .watch = w != NULL, .wcb = w, .warg = warg, .cb = cb,
	                   .arg = arg };
	return zkc_read(z, &rd);
}

int zkc_get_item(zkc_t *z, const char *path, uint32_t item, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	return read_item(z, ZKC_KEEP_DATA, path, item, w, warg, cb, arg);
}

int zkc_exists_item(zkc_t *z, const char *path, uint32_t item, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	return read_item(z, ZKC_KEEP_EXISTS, path, item, w, warg, cb, arg);
}

int zkc_children_item(zkc_t *z, const char *path, uint32_t item, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	return read_item(z, ZKC_KEEP_CHILDREN, path, item, w, warg, cb, arg);
}

int zkc_get(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	return read_item(z, ZKC_KEEP_DATA, path, ZKC_NO_ITEM, w, warg, cb, arg);
}

int zkc_exists(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	return read_item(z, ZKC_KEEP_EXISTS, path, ZKC_NO_ITEM, w, warg, cb, arg);
}

int zkc_children(zkc_t *z, const char *path, zkc_watch_cb w, void *warg, zkc_cb cb, void *arg)
{
	return read_item(z, ZKC_KEEP_CHILDREN, path, ZKC_NO_ITEM, w, warg, cb, arg);
}

static int write_req(zkc_t *z, enum req_op op, const char *path, const char *data, int len, int flags, int version,
                     zkc_cb cb, void *arg)
{
	struct req *q = req_new(z, path, cb, arg, sizeof *q);
	if (!q) return no_handle(z);
	q->op = op;
	q->flags = flags;
	q->version = version;
	if (data) {
		q->len = len > 0 ? len : 0;
		if (!(q->data = malloc(q->len ? (size_t)q->len : 1))) {
			req_drop(q);
			return ZSYSTEMERROR;
		}
		memcpy(q->data, data, (size_t)q->len);
	}
	return submit(z, q, 0);
}

int zkc_create(zkc_t *z, const char *path, const char *data, int len, int flags, zkc_cb cb, void *arg)
{
	return write_req(z, R_CREATE, path, data, len, flags, 0, cb, arg);
}

int zkc_set(zkc_t *z, const char *path, const char *data, int len, int version, zkc_cb cb, void *arg)
{
	return write_req(z, R_SET, path, data, len, 0, version, cb, arg);
}

int zkc_delete(zkc_t *z, const char *path, int version, zkc_cb cb, void *arg)
{
	return write_req(z, R_DELETE, path, NULL, 0, 0, version, cb, arg);
}

/* ---- answers ---------------------------------------------------------------------------------- */

static void free_kids(struct String_vector *sv)
{
	for (int i = 0; i < sv->count; i++) free(sv->data[i]);
	free(sv->data);
	sv->data = NULL;
	sv->count = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An answer, on the loop: the lease it renews, the watch it set (or not), then its callback or its
 * kept watch. */
void zkc_on_result(zkc_t *z, struct msg *m)
{
	struct req *q = m->req;
	if (q->sent && q->session == z->session && z->win.inflight > 0) {
		z->win.inflight--;
		z->win.inflight_ops -= q->ops <= z->win.inflight_ops ? q->ops : z->win.inflight_ops;
	}
	/* an answer from the server renews the lease: ZOK and the API errors it sends (ZNONODE, ...);
	 * the client's own failures (the system errors, closing, an expired session) do not */
	if (m->rc == ZOK || (m->rc < ZAPIERROR && m->rc != ZCLOSING && m->rc != ZSESSIONEXPIRED && m->rc != ZSESSIONMOVED &&
	                     m->rc != ZINVALIDCALLBACK))
		zkc_lease_from(z, q->sent_ns, q->session);
	else
		z->errors++;
	/* the watch sent with it: the server set it (it will fire, or die with the session), or not */
	if (q->w) {
		struct watch *w = q->w;
		int set = m->rc == ZOK || (q->exists && m->rc == ZNONODE);
		w->pending = 0;
		if (set && q->session == z->session && z->zh) w->armed = 1;
		else zkc_watch_free(z, w);
	}
	if (q->cb || q->keep) {
		struct zkc_res r;
		memset(&r, 0, sizeof r);
		r.rc = m->rc;
		r.session = q->session;
		r.path = zkc_rel_path(z, q->path);
		r.item = q->item;
		r.event = q->event;
		r.data = m->data;
		r.len = m->len;
		r.stat = m->stat;
		if (m->kids.count > 1) qsort(m->kids.data, (size_t)m->kids.count, sizeof(char *), cmp_str);
		r.nchildren = m->kids.count;
		r.children = m->kids.data;
		r.created = m->created ? zkc_rel_path(z, m->created) : NULL;
		int op_rc[1];
		int *rcs = op_rc;
		if (m->multi) {
			zkc_multi_t *mm = ((struct mreq *)q)->m;
			rcs = calloc((size_t)mm->n + 1, sizeof *rcs);
			if (rcs) for (int i = 0; i < mm->n; i++) rcs[i] = mm->results[i].err;
			r.nops = rcs ? mm->n : 0;
			r.op_rc = rcs;
			r.op_stat = mm->stats;
		}
		if (q->keep) zkc_keep_answer(q, &r);
		else q->cb(q->arg, &r);
		if (rcs != op_rc) free(rcs);
	}
	if (m->multi) zkc_multi_free(((struct mreq *)q)->m);
	free(q->data);
	free(q->path);
	free(q);
	free(m->data);
	free(m->created);
	free_kids(&m->kids);
	zkc_window_pump(z);         /* its place in the window is free */
	if (z->hooks.idle && !z->win.nwait && z->win.inflight <= z->win.window / 2 && z->state == ZKC_CONNECTED)
		z->hooks.idle(z->arg);
	/* The end of a burst (10,000 jobs registering, or their first fire): what its requests held is
	 * free, but glibc keeps the heap's top unless asked (a few MB at 10,000 jobs; the rest is
	 * fragments between what stays). Once per burst, never while requests wait. */
	if (z->win.burst && !z->win.inflight && !z->win.nwait) {
		z->win.burst = 0;
		malloc_trim(0);
	}
}

/* ---- multi ------------------------------------------------------------------------------------- */

zkc_multi_t *zkc_multi_new(void)
{
	zkc_multi_t *m = calloc(1, sizeof(zkc_multi_t));
	if (m) m->item = ZKC_NO_ITEM;
	return m;
}

void zkc_multi_item(zkc_multi_t *m, uint32_t item)
{
	m->item = item;
}

int zkc_multi_add(zkc_multi_t *m, const char *path, const char *data, int len)
{
	if (m->bad) return -1;
	if (m->n == m->cap) {
		int nc = m->cap ? m->cap * 2 : 8;
		zoo_op_t *ops = realloc(m->ops, (size_t)nc * sizeof *ops);
		if (ops) m->ops = ops;
		char **p = realloc(m->paths, (size_t)nc * sizeof *p);
		if (p) m->paths = p;
		char **d = realloc(m->datas, (size_t)nc * sizeof *d);
		if (d) m->datas = d;
		int *l = realloc(m->lens, (size_t)nc * sizeof *l);
		if (l) m->lens = l;
		char **c = realloc(m->created, (size_t)nc * sizeof *c);
		if (c) m->created = c;
		struct Stat *s = realloc(m->stats, (size_t)nc * sizeof *s);
		if (s) m->stats = s;
		if (!ops || !p || !d || !l || !c || !s) {
			m->bad = 1;
			return -1;
		}
		m->cap = nc;
	}
	int i = m->n;
	m->paths[i] = strdup(path);
	m->datas[i] = NULL;
	m->lens[i] = data ? len : -1;
	m->created[i] = NULL;
	memset(&m->stats[i], 0, sizeof m->stats[i]);
	memset(&m->ops[i], 0, sizeof m->ops[i]);
	if (!m->paths[i] || (data && !(m->datas[i] = malloc(len > 0 ? (size_t)len : 1)))) {
		free(m->paths[i]);
		m->bad = 1;
		return -1;
	}
	if (data && len > 0) memcpy(m->datas[i], data, (size_t)len);
	m->bytes += strlen(path) + (data && len > 0 ? (size_t)len : 0) + 32;
	m->n++;
	return i;
}

/* Ops are filled at commit, when the full paths and the ACL are known; type is kept in the op. */
void zkc_multi_check(zkc_multi_t *m, const char *path, int version)
{
	int i = zkc_multi_add(m, path, NULL, 0);
	if (i < 0) return;
	m->ops[i].type = ZOO_CHECK_OP;
	m->ops[i].check_op.version = version;
}

void zkc_multi_create(zkc_multi_t *m, const char *path, const char *data, int len, int flags)
{
	int i = zkc_multi_add(m, path, data ? data : "", data ? len : 0);
	if (i < 0) return;
	m->ops[i].type = ZOO_CREATE_OP;
	m->ops[i].create_op.flags = flags;
}

void zkc_multi_set(zkc_multi_t *m, const char *path, const char *data, int len, int version)
{
	int i = zkc_multi_add(m, path, data ? data : "", data ? len : 0);
	if (i < 0) return;
	m->ops[i].type = ZOO_SETDATA_OP;
	m->ops[i].set_op.version = version;
}

void zkc_multi_delete(zkc_multi_t *m, const char *path, int version)
{
	int i = zkc_multi_add(m, path, NULL, 0);
	if (i < 0) return;
	m->ops[i].type = ZOO_DELETE_OP;
	m->ops[i].delete_op.version = version;
}

int zkc_multi_count(const zkc_multi_t *m)
{
	return m->n;
}

size_t zkc_multi_bytes(const zkc_multi_t *m)
{
	return m ? m->bytes : 0;
}

int zkc_multi_commit(zkc_t *z, zkc_multi_t *m, zkc_cb cb, void *arg)
{
	if (m->bad || !m->n) {
		int rc = m->bad ? ZSYSTEMERROR : ZBADARGUMENTS;
		zkc_multi_free(m);
		return rc;
	}
	struct mreq *q = (struct mreq *)req_new(z, NULL, cb, arg, sizeof *q);
	if (!q) {
		zkc_multi_free(m);
		return no_handle(z);
	}
	q->m = m;
	q->r.item = m->item;
	m->results = calloc((size_t)m->n, sizeof *m->results);
	int ok = m->results != NULL;
	for (int i = 0; ok && i < m->n; i++) {
		char *full = zkc_full_path(z, m->paths[i]);
		if (!full) {
			ok = 0;
			break;
		}
		free(m->paths[i]);
		m->paths[i] = full;
		zoo_op_t *o = &m->ops[i];
		int type = o->type;
		switch (type) {
		case ZOO_CHECK_OP: {
			int v = o->check_op.version;
			zoo_check_op_init(o, full, v);
			break;
		}
		case ZOO_CREATE_OP: {
			int fl = o->create_op.flags;
			size_t cap = strlen(full) + 16;
			m->created[i] = malloc(cap);
			if (!m->created[i]) {
				ok = 0;
				break;
			}
			zoo_create_op_init(o, full, m->datas[i], m->lens[i], &z->acl, fl, m->created[i], (int)cap);
			break;
		}
		case ZOO_SETDATA_OP: {
			int v = o->set_op.version;
			zoo_set_op_init(o, full, m->datas[i], m->lens[i], v, &m->stats[i]);
			break;
		}
		case ZOO_DELETE_OP: {
			int v = o->delete_op.version;
			zoo_delete_op_init(o, full, v);
			break;
		}
		}
	}
	if (!ok) {
		zkc_multi_free(m);
		free(q);
		return ZSYSTEMERROR;
	}
	q->r.op = R_MULTI;
	return submit(z, &q->r, 0);
}
