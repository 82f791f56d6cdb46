/* supervisor/zk/zkc_share.c: shared multis (zkc_multi_share): the multis of many callers sent as one
 * request, each part answered as if it had been sent alone. */
#include <stdlib.h>
#include <string.h>

#include "supervisor/zk/zkc_int.h"

/* ---- shared multis ------------------------------------------------------------------------------ */

/* Multis made while a shared one is at the server go to ZooKeeper as one when it is answered (at
 * the end of that turn of the loop, zkc_share_due), and the first of a quiet time at the end of its
 * turn: 10,000 jobs due in the same second write their running nodes in some twenty requests instead
 * of 10,000, and a trickle (items that end one by one) in one request per round trip, however fast
 * a turn of the loop is (batching by turn made fewer, larger batches on a loop slowed by anything).
 * A multi is all or nothing, and one part's refusal (an item still running, a node someone
 * touched) must not refuse the others: then each part is sent again on its own and gets its own
 * answer, as if it had never been shared. ZOK gives each part its own ops' results. ZooKeeper
 * refuses a request over jute.maxbuffer (1 MB by default): a shared multi holds at most
 * ZKC_SHARE_OPS ops and ZKC_SHARE_BYTES of paths and data; a full one goes at once. */
#define ZKC_SHARE_OPS 1000
#define ZKC_SHARE_BYTES ZKC_MULTI_BYTES

struct share_part {
	zkc_multi_t *m;
	zkc_cb cb;
	void *arg;
};

struct zkc_share {
	int n, cap, ops;
	size_t bytes;
	struct share_part *parts;
};

/* the part's own answer: its slice of the shared one's, or the shared one's error */
static void part_answer(struct share_part *p, const struct zkc_res *r, int off, int slice)
{
	struct zkc_res pr = *r;
	pr.item = p->m->item;
	pr.nops = slice ? p->m->n : 0;
	pr.op_rc = slice ? r->op_rc + off : NULL;
	pr.op_stat = slice ? r->op_stat + off : NULL;
	p->cb(p->arg, &pr);
}

static void part_commit(zkc_t *z, struct share_part *p)
{
	int rc = zkc_multi_commit(z, p->m, p->cb, p->arg);     /* takes m */
	if (rc != ZOK) {
		struct zkc_res r = { .rc = rc, .session = z->session, .path = "", .item = ZKC_NO_ITEM };
		p->cb(p->arg, &r);
	}
}

struct share_req {
	zkc_t *z;
	struct zkc_share *s;
	uint64_t session;           /* the window's share_session when it was sent */
};

/* one shared multi fewer at the server (those of an earlier session are not counted any more) */
static void share_done(zkc_t *z, uint64_t session)
{
	if (session == z->win.share_session && z->win.share_inflight > 0) z->win.share_inflight--;
}

/* one more at the server: the session it counts in */
static uint64_t share_sent(zkc_t *z)
{
	if (z->win.share_session != z->session) {
		z->win.share_session = z->session;
		z->win.share_inflight = 0;
	}
	z->win.share_inflight++;
	return z->session;
}

/* a part that went alone: counted as a shared one while it is at the server */
struct share_one {
	zkc_t *z;
	uint64_t session;
	zkc_cb cb;
	void *arg;
};

static void one_answered(void *arg, const struct zkc_res *r)
{
	struct share_one o = *(struct share_one *)arg;
	free(arg);
	share_done(o.z, o.session);
	o.cb(o.arg, r);
}

static void one_commit(zkc_t *z, struct share_part *p)
{
	struct share_one *o = malloc(sizeof *o);
	if (!o) {
		part_commit(z, p);
		return;
	}
	*o = (struct share_one){ z, share_sent(z), p->cb, p->arg };
	int rc = zkc_multi_commit(z, p->m, one_answered, o);     /* takes m */
	if (rc != ZOK) {
		struct zkc_res r = { .rc = rc, .session = z->session, .path = "", .item = ZKC_NO_ITEM };
		one_answered(o, &r);
	}
}

static void share_answered(void *arg, const struct zkc_res *r)
{
	struct share_req *sr = arg;
	zkc_t *z = sr->z;
	struct zkc_share *s = sr->s;
	share_done(z, sr->session);
	free(sr);
	int whole = r->rc == ZOK && r->nops == s->ops;
	/* refused by the server for one part's sake: the parts again, each on its own */
	int again = !whole && r->nops == s->ops && r->session == z->session && !z->closing && r->rc != ZCLOSING &&
	            r->rc != ZCONNECTIONLOSS && r->rc != ZOPERATIONTIMEOUT && r->rc != ZSESSIONEXPIRED;
	int off = 0;
	for (int i = 0; i < s->n; i++) {
		struct share_part *p = &s->parts[i];
		if (again) {
			part_commit(z, p);
			continue;
		}
		part_answer(p, r, off, whole);
		off += p->m->n;
		zkc_multi_free(p->m);
	}
	free(s->parts);
	free(s);
}

void zkc_share_flush(zkc_t *z)
{
	struct zkc_share *s = z->win.share;
	if (!s) return;
	z->win.share = NULL;
	if (s->n == 1) {
		one_commit(z, &s->parts[0]);
		free(s->parts);
		free(s);
		return;
	}
	zkc_multi_t *all = zkc_multi_new();
	for (int i = 0; all && i < s->n; i++) {
		const zkc_multi_t *m = s->parts[i].m;
		for (int k = 0; k < m->n; k++) {
			int at = zkc_multi_add(all, m->paths[k], m->datas[k], m->lens[k] < 0 ? 0 : m->lens[k]);
			if (at < 0) break;
			all->ops[at] = m->ops[k];      /* the type and its version or flags: set at commit */
		}
	}
	struct share_req *sr = calloc(1, sizeof *sr);
	if (!all || all->bad || !sr) {
		/* no memory to share them: each on its own */
		zkc_multi_free(all);
		free(sr);
		for (int i = 0; i < s->n; i++) part_commit(z, &s->parts[i]);
		free(s->parts);
		free(s);
		return;
	}
	sr->z = z;
	sr->s = s;
	sr->session = share_sent(z);
	int rc = zkc_multi_commit(z, all, share_answered, sr);
	if (rc != ZOK) {
		struct zkc_res r = { .rc = rc, .session = z->session, .path = "", .item = ZKC_NO_ITEM };
		share_answered(sr, &r);
	}
}

void zkc_share_due(zkc_t *z)
{
	if (!z->win.share) return;
	if (z->win.share_session == z->session && z->win.share_inflight > 0) return;   /* its answer sends them */
	zkc_share_flush(z);
}

int zkc_multi_share(zkc_t *z, zkc_multi_t *m, zkc_cb cb, void *arg)
{
	if (m->bad || !m->n) return zkc_multi_commit(z, m, cb, arg);
	size_t b = zkc_multi_bytes(m);
	struct zkc_share *s = z->win.share;
	if (s && (s->ops + m->n > ZKC_SHARE_OPS || s->bytes + b > ZKC_SHARE_BYTES)) {
		zkc_share_flush(z);
		s = NULL;
	}
	if (!s) {
		if (!(s = calloc(1, sizeof *s))) return zkc_multi_commit(z, m, cb, arg);
		z->win.share = s;
	}
	if (s->n == s->cap) {
		int nc = s->cap ? s->cap * 2 : 16;
		struct share_part *v = realloc(s->parts, (size_t)nc * sizeof *v);
		if (!v) return zkc_multi_commit(z, m, cb, arg);
		s->parts = v;
		s->cap = nc;
	}
	s->parts[s->n++] = (struct share_part){ m, cb, arg };
	s->ops += m->n;
	s->bytes += b;
	return ZOK;
}
