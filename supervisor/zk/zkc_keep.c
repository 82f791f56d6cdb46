/* supervisor/zk/zkc_keep.c: kept watches (see zkc.h). A kept watch holds at most one registration
 * (k->w: a watch the server holds, or one whose read is in flight); a read is sent with a watch
 * exactly when it has none, so the client never holds two for it, however often its owner reads.
 * Its reads point to it (k->inflight counts them), so a freed keep stays allocated, silent, until
 * the last of them is answered. */
#include <stdlib.h>
#include <string.h>

#include "supervisor/base/log.h"
#include "supervisor/zk/zkc_int.h"

/* lost with the connection: the session may live, and the read can be sent again in it */
static int lost(int rc)
{
	return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONMOVED;
}

/* the session (or the handle) is over: a new session unarms the keep anyway */
static int ended(int rc)
{
	return rc == ZCLOSING || rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE || rc == ZAUTHFAILED;
}

void zkc_keep_release(struct zkc_keep *k)
{
	if (!k->dead || k->inflight || k->busy || k->reg_used) return;
	free(k);
}

static void unlink_keep(struct zkc_keep *k)
{
	if (!k->prev) return;
	k->prev->next = k->next;
	k->next->prev = k->prev;
	k->prev = k->next = NULL;
}

/* Let go of its registration: the watch stays with the client (or its read), its event is dropped. */
static void let_go(struct zkc_keep *k)
{
	if (!k->w) return;
	k->w->keep = NULL;
	k->w = NULL;
}

/* The keep's read (or, probe, an exists that waits for its missing node), with a watch exactly
 * when it holds none. A read of its own kind answers a lost one too. */
static int send_read(struct zkc_keep *k, int event, int probe)
{
	if (!probe && !event && k->want) event = k->want_event;
	struct read rd = { .op = probe ? ZKC_KEEP_EXISTS : k->kind, .path = k->path, .item = k->item, .watch = !k->w,
	                   .keep = k, .event = event, .probe = probe };
	int rc = zkc_read(k->z, &rd);
	if (rc == ZOK && !probe) k->want = k->want_probe = k->want_event = 0;
	return rc;
}

/* It holds no registration and will not get one by itself: no longer armed. */
static void unarm(struct zkc_keep *k, int rc, const char *what)
{
	k->on = 0;
	k->want = k->want_probe = k->want_event = 0;
	/* the session or the handle is over (a stop, an expiry): the next session arms it again, or
	 * nothing is watched any more; no one's business */
	if (ended(rc) && rc != ZAUTHFAILED) {
		log_debug("zookeeper: the watch on %s is off (%s: %s)", k->path, what, zerror(rc));
		return;
	}
	log_error("zookeeper: the watch on %s is off (%s: %s); it is armed again when its owner arms it", k->path, what,
	          zerror(rc));
}

zkc_keep_t *zkc_keep_new(zkc_t *z, enum zkc_keep_kind kind, const char *path, uint32_t item, zkc_cb cb, void *arg)
{
	size_t len = strlen(path) + 1;
	struct zkc_keep *k = calloc(1, sizeof *k + len);
	if (!k) return NULL;
	k->path = memcpy((char *)(k + 1), path, len);
	k->z = z;
	k->kind = kind;
	k->item = item;
	k->cb = cb;
	k->arg = arg;
	k->next = z->keeps.next;
	k->prev = &z->keeps;
	z->keeps.next->prev = k;
	z->keeps.next = k;
	return k;
}

static int arm(struct zkc_keep *k)
{
	int rc = send_read(k, 0, 0);
	if (rc == ZOK) k->on = 1;
	return rc;
}

int zkc_keep_arm(zkc_keep_t *k)
{
	if (!k) return ZBADARGUMENTS;
	if (!k->z || k->dead) return ZINVALIDSTATE;
	return k->on ? ZOK : arm(k);
}

int zkc_keep_read(zkc_keep_t *k)
{
	if (!k) return ZBADARGUMENTS;
	if (!k->z || k->dead) return ZINVALIDSTATE;
	if (!k->on) return arm(k);
	int rc = send_read(k, 0, 0);
	if (rc != ZOK && !k->w && !k->want) unarm(k, rc, "a read could not be sent");
	return rc;
}

int zkc_keep_armed(const zkc_keep_t *k)
{
	return k && k->z && !k->dead && k->on;
}

void zkc_keep_free(zkc_keep_t *k)
{
	if (!k || k->dead) return;
	k->dead = 1;
	k->on = 0;
	k->cb = NULL;
	let_go(k);
	unlink_keep(k);
	zkc_keep_release(k);
}

/* To cb, which may free it: 1 if it is still there. */
static int deliver(struct zkc_keep *k, const struct zkc_res *r)
{
	k->busy++;
	if (k->cb) k->cb(k->arg, r);
	k->busy--;
	if (!k->dead) return 1;
	zkc_keep_release(k);
	return 0;
}

/* The exists that waits for a missing node answered: still missing (its watch waits), or there
 * already (it came in between: read it, as its CREATED event would have; a CHILDREN keep lets
 * the exists watch go, a data watch sees no children). */
static void probe_answer(struct zkc_keep *k, const struct zkc_res *r)
{
	if (r->rc == ZNONODE && k->w) return;
	if (r->rc == ZOK) {
		if (k->kind == ZKC_KEEP_CHILDREN) let_go(k);
		int rc = send_read(k, ZOO_CREATED_EVENT, 0);
		if (rc != ZOK && !k->w) unarm(k, rc, "the read of a node that came could not be sent");
		return;
	}
	if (deliver(k, r) && !k->w) unarm(k, r->rc, "waiting for the node");
}

/* An answer to one of its reads (zkc_on_result, which has done the watch's bookkeeping). */
void zkc_keep_answer(struct req *q, const struct zkc_res *r)
{
	struct zkc_keep *k = q->keep;
	zkc_t *z = q->z;
	k->inflight--;
	if (k->dead) {
		zkc_keep_release(k);
		return;
	}
	if (q->session != z->session || z->closing || ended(r->rc)) return;   /* nothing of another session */
	if (lost(r->rc)) {
		if (!k->on) return;
		/* zkc_keeps_reconnected sends it: the wait for a missing node alone if that is all that
		 * was lost (its ZNONODE was told already), else a read */
		k->want_probe = q->probe && (!k->want || k->want_probe);
		k->want = 1;
		if (r->event) k->want_event = r->event;
		return;
	}
	if (!k->on) {               /* unarmed in this session (an error): answers still go to the owner */
		if (!q->probe) deliver(k, r);
		return;
	}
	if (q->probe) {
		probe_answer(k, r);
		return;
	}
	if (!deliver(k, r) || !k->on || k->w || k->want) return;
	/* no registration left: a get or children of a missing node waits for it; else it is off */
	if (r->rc == ZNONODE && k->kind != ZKC_KEEP_EXISTS) {
		int rc = send_read(k, r->event, 1);
		if (rc != ZOK) unarm(k, rc, "the wait for the node could not be sent");
	} else {
		unarm(k, r->rc, "the read set no watch");
	}
}

/* Its registration fired (on_watch let go of it): read again, with a new one. */
void zkc_keep_event(struct zkc_keep *k, int type)
{
	if (!k->on) return;
	int rc = send_read(k, type, 0);
	if (rc != ZOK && !k->w) unarm(k, rc, "the read after an event could not be sent");
}

void zkc_keeps_new_session(zkc_t *z)
{
	for (struct zkc_keep *k = z->keeps.next; k != &z->keeps; k = k->next) {
		k->on = 0;
		k->want = k->want_probe = k->want_event = 0;
		let_go(k);
	}
}

/* Connected: the reads lost since they were armed go out again (a new session has unarmed every
 * keep armed before it, so these were armed in this one, as its first connection was tried). */
void zkc_keeps_reconnected(zkc_t *z)
{
	for (struct zkc_keep *k = z->keeps.next; k != &z->keeps; k = k->next) {
		if (!k->on || !k->want) continue;
		int probe = k->want_probe;
		int rc = send_read(k, 0, probe);
		if (rc == ZOK) k->want = k->want_probe = k->want_event = 0;
		else if (!k->w) unarm(k, rc, "a lost read could not be sent again");
	}
}

/* zkc_free: every answer has been delivered (ZCLOSING, dropped); the keeps left are their owners'
 * to free, and never called. */
void zkc_keeps_detach(zkc_t *z)
{
	while (z->keeps.next != &z->keeps) {
		struct zkc_keep *k = z->keeps.next;
		let_go(k);
		unlink_keep(k);
		k->on = 0;
		k->z = NULL;
	}
}
