/* worker/ejob_worker.c: the worker library (see ejob.h): attach, bind, claim, report.
 *
 * Each slot maps the segment on its own (seg_attach of the same memfd): a seg_t handle carries
 * one worker binding, and a mapping per slot keeps the slots of one attachment independent of
 * each other (no shared mutable state between their threads but the stop flag). */
#include "ipc/errf.h"
#include "ejob.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "ipc/wait.h"
#include "worker/attach.h"

_Static_assert((int)EJOB_OK == (int)FRAME_ST_OK && (int)EJOB_FAILED == (int)FRAME_ST_FAILED &&
               (int)EJOB_CRASHED == (int)FRAME_ST_CRASHED && (int)EJOB_TIMEOUT == (int)FRAME_ST_TIMEOUT &&
               (int)EJOB_CANCELLED == (int)FRAME_ST_CANCELLED && (int)EJOB_ERROR == (int)FRAME_ST_ERROR,
               "ejob_status mirrors frame_status");
_Static_assert(EJOB_CANCEL_TIMEOUT == SHM_CANCEL_TIMEOUT && EJOB_CANCEL_SHUTDOWN == SHM_CANCEL_SHUTDOWN &&
               EJOB_CANCEL_LEASE == SHM_CANCEL_LEASE, "ejob_cancel mirrors SHM_CANCEL_*");
_Static_assert((int)EJOB_KIND_SCRIPT == (int)FRAME_KIND_SCRIPT && (int)EJOB_KIND_NATIVE == (int)FRAME_KIND_NATIVE &&
               (int)EJOB_KIND_EXTERNAL == (int)FRAME_KIND_EXTERNAL && (int)EJOB_KIND_HTTP == (int)FRAME_KIND_HTTP,
               "ejob_kind mirrors frame_kind");
_Static_assert(EJOB_ERROR_MAX == FRAME_ERRTXT_MAX, "error text limit");
_Static_assert(EJOB_DATAFLOW_STREAMING == FRAME_FLOW_MAX && EJOB_BATCH_MAX == FRAME_BATCH_MAX,
               "dataflow mode and batch bound mirror the frame's");

#define POOL_HEARTBEAT_MS 500u
#define MAX_SLOTS FRAME_SLOTS_MAX

struct ejob_worker {
	int memfd, efd;          /* owned: closed by ejob_detach */
	int sock;                /* attach socket, -1 for inherited/fds attachments */
	seg_t *seg;              /* a mapping for the header (shutdown flag, stop wakeups) */
	unsigned nslots;
	unsigned hb_ms;
	_Atomic int stop;
	struct ejob_slot *slot[MAX_SLOTS];   /* bound slots (pool: only the one used) */
	unsigned nbound;
};

struct ejob_slot {
	ejob_worker *w;
	seg_t *seg;              /* this slot's own mapping, bound to entry `index` */
	unsigned index;
	struct shm_worker *me;
	frame_decoder_t *dec;
	unsigned char *in;       /* claimed frame (seg_sub_frame_max bytes) */
	unsigned char *out;      /* completion frame (seg_comp_frame_max bytes) */
	uint32_t in_cap, out_cap;
	int busy;
	uint64_t claimed_ns;
	ejob_context ctx;
	char err[256];
	int has_out;             /* ejob_set_output was called for the current item */
	char out_text[EJOB_OUTPUT_MAX + 1];
};

static void slot_err(ejob_slot *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void slot_err(ejob_slot *s, const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof s->err, fmt, ap);
	va_end(ap);
	errno = e;
}

/* Cut text to at most max bytes without splitting a UTF-8 sequence. */
static size_t utf8_cut(const char *t, size_t max)
{
	size_t n = strlen(t);
	if (n <= max) return n;
	n = max;
	while (n > 0 && ((unsigned char)t[n] & 0xc0) == 0x80) n--;
	return n;
}

/* ---- attach ---------------------------------------------------------------------------------- */

static ejob_worker *worker_new(int memfd, int efd, int sock, char *err, size_t errlen)
{
	ejob_worker *w = calloc(1, sizeof *w);
	if (!w) {
		ejob_errf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	w->memfd = memfd;
	w->efd = efd;
	w->sock = sock;
	char why[256];
	if (seg_attach(memfd, efd, &w->seg, why, sizeof why) < 0) {
		int e = errno;
		ejob_errf(err, errlen, "%s", why);
		free(w);
		errno = e;
		return NULL;
	}
	w->nslots = seg_nworkers(w->seg);
	w->hb_ms = POOL_HEARTBEAT_MS;
	return w;
}

int ejob_attach_fds(int memfd, int efd, ejob_worker **out, char *err, size_t errlen)
{
	ejob_worker *w = worker_new(memfd, efd, -1, err, errlen);
	if (!w) return -1;
	*out = w;
	return 0;
}

int ejob_socket_path(const char *ns, char *buf, size_t len)
{
	return attach_socket_path(ns, getenv("EJOB_RUNTIME_DIR"), getenv("XDG_RUNTIME_DIR"), geteuid(), buf, len);
}

int ejob_attach(const struct ejob_attach_opts *o, ejob_worker **out, char *err, size_t errlen)
{
	char path[256];
	if (o->socket_path) {
		int n = snprintf(path, sizeof path, "%s", o->socket_path);
		if (n < 0 || (size_t)n >= sizeof path) {
			ejob_errf(err, errlen, "socket path %.64s... is too long", o->socket_path);
			errno = ENAMETOOLONG;
			return -1;
		}
	} else if (ejob_socket_path(o->ns, path, sizeof path) < 0) {
		if (errno == EINVAL)
			ejob_errf(err, errlen, "namespace '%s': must be 1..255 bytes without '/' (or give a socket path)",
			        o->ns ? o->ns : "");
		else
			ejob_errf(err, errlen, "the socket path for namespace '%s' is too long: set EJOB_RUNTIME_DIR "
			        "to a shorter directory, or give a socket path", o->ns);
		return -1;
	}
	struct frame_hello h = { .version = FRAME_ATTACH_VERSION, .pid = (uint32_t)getpid(),
	                         .slots = o->slots ? o->slots : 1 };
	/* a label: a longer one is cut (at a character boundary), an empty one replaced */
	const char *label = o->name && o->name[0] ? o->name : program_invocation_short_name;
	if (!label || !label[0]) label = "worker";
	char name[FRAME_NAME_MAX + 1];
	size_t nl = utf8_cut(label, FRAME_NAME_MAX);
	memcpy(name, label, nl);
	name[nl] = '\0';
	h.name = name;
	if (h.slots > FRAME_SLOTS_MAX) {
		ejob_errf(err, errlen, "slots: %u is more than %u", h.slots, FRAME_SLOTS_MAX);
		errno = EINVAL;
		return -1;
	}
	for (const char *const *j = o->jobs; j && *j; j++) {
		size_t l = strlen(*j);
		if (h.jobs.n == FRAME_LIST_MAX || l == 0 || l > FRAME_JOB_MAX) {
			ejob_errf(err, errlen, h.jobs.n == FRAME_LIST_MAX ? "more than %u jobs" : "job name %u: must be 1..255 bytes",
			        h.jobs.n == FRAME_LIST_MAX ? FRAME_LIST_MAX : h.jobs.n + 1);
			errno = EINVAL;
			return -1;
		}
		h.jobs.v[h.jobs.n++] = *j;
	}
	if (!h.jobs.n) {
		ejob_errf(err, errlen, "no job names: an external worker serves 1..%u jobs", FRAME_LIST_MAX);
		errno = EINVAL;
		return -1;
	}
	struct attach_result r;
	if (attach_handshake(path, &h, o->timeout_ms, &r, err, errlen) < 0)
		return -1;
	char why[256];
	ejob_worker *w = worker_new(r.memfd, r.efd, r.sock, why, sizeof why);
	if (!w) {
		ejob_errf(err, errlen, "the segment the supervisor at %s sent is unusable: %s", path, why);
		close(r.memfd);
		close(r.efd);
		close(r.sock);
		errno = EPROTO;
		return -1;
	}
	if (r.welcome.slots > w->nslots) {
		ejob_errf(err, errlen, "the supervisor at %s welcomed %u slots into a segment of %u entries",
		        path, r.welcome.slots, w->nslots);
		ejob_detach(w);
		errno = EPROTO;
		return -1;
	}
	w->nslots = r.welcome.slots;
	w->hb_ms = r.welcome.heartbeat_ms < POOL_HEARTBEAT_MS ? r.welcome.heartbeat_ms : POOL_HEARTBEAT_MS;
	*out = w;
	return 0;
}

static int parse_index(const char *s, unsigned *out)
{
	if (!s || *s < '0' || *s > '9') return -1;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v >= SHM_MAX_WORKERS) return -1;
	*out = (unsigned)v;
	return 0;
}

int ejob_attach_inherited(int argc, char *const argv[], ejob_worker **wout, ejob_slot **sout,
                          char *err, size_t errlen)
{
	const char *arg = NULL, *env = getenv("EJOB_WORKER_INDEX");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--index") && i + 1 < argc) arg = argv[++i];
		else if (!strncmp(argv[i], "--index=", 8)) arg = argv[i] + 8;
	}
	unsigned idx, eidx;
	if (!arg && (!env || !*env)) {
		ejob_errf(err, errlen, "no worker index: give --index I (the supervisor does)");
		errno = EINVAL;
		return -1;
	}
	if ((arg && parse_index(arg, &idx) < 0) || (env && *env && parse_index(env, &eidx) < 0)) {
		ejob_errf(err, errlen, "bad worker index '%s': a number below %u", arg ? arg : env, SHM_MAX_WORKERS);
		errno = EINVAL;
		return -1;
	}
	if (!arg) idx = eidx;
	else if (env && *env && eidx != idx) {
		ejob_errf(err, errlen, "--index %u disagrees with EJOB_WORKER_INDEX=%u", idx, eidx);
		errno = EINVAL;
		return -1;
	}
	if (fcntl(4, F_GETFD) < 0) {
		ejob_errf(err, errlen, "fd 4 (the segment's eventfd) is not open: ejob-worker is started by "
		        "ejob-supervisor, with the segment at fds 3 and 4");
		errno = EINVAL;
		return -1;
	}
	char why[256];
	ejob_worker *w = worker_new(3, 4, -1, why, sizeof why);
	if (!w) {
		ejob_errf(err, errlen, "%s (ejob-worker is started by ejob-supervisor, with the segment at fd 3)", why);
		errno = EINVAL;
		return -1;
	}
	fcntl(3, F_SETFD, FD_CLOEXEC);
	fcntl(4, F_SETFD, FD_CLOEXEC);
	if (ejob_bind(w, idx, sout) < 0) {
		int e = errno;
		ejob_errf(err, errlen, "worker index %u: %s", idx,
		        e == EINVAL ? "out of range for this segment's worker table" : strerror(e));
		ejob_detach(w);
		errno = EINVAL;
		return -1;
	}
	*wout = w;
	return 0;
}

unsigned ejob_slots(const ejob_worker *w) { return w->nslots; }
unsigned ejob_heartbeat_ms(const ejob_worker *w) { return w->hb_ms; }

void ejob_stop(ejob_worker *w)
{
	atomic_store(&w->stop, 1);
	/* wake our sleepers without touching the futex word (the supervisor owns it): a waiter that
	 * wakes for nothing re-checks the ring and sleeps again, so others sharing the segment only
	 * lose a moment */
	wait_wake(&seg_header(w->seg)->sub_futex, INT_MAX);
}

static void slot_free(ejob_slot *s)
{
	if (!s) return;
	int e = errno;
	frame_decoder_free(s->dec);
	free(s->in);
	free(s->out);
	seg_close(s->seg);
	free(s);
	errno = e;
}

int ejob_bind(ejob_worker *w, unsigned index, ejob_slot **out)
{
	if (index >= w->nslots) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned i = 0; i < w->nbound; i++) {
		if (w->slot[i]->index == index) {
			errno = EBUSY;
			return -1;
		}
	}
	if (w->nbound == MAX_SLOTS) {
		errno = EBUSY;
		return -1;
	}
	ejob_slot *s = calloc(1, sizeof *s);
	if (!s) return -1;
	s->w = w;
	s->index = index;
	char why[256];
	if (seg_attach(w->memfd, w->efd, &s->seg, why, sizeof why) < 0) {
		free(s);
		return -1;
	}
	s->in_cap = seg_sub_frame_max(s->seg);
	s->out_cap = seg_comp_frame_max(s->seg);
	s->in = malloc(s->in_cap);
	s->out = malloc(s->out_cap);
	s->dec = frame_decoder_new(s->in_cap);
	if (!s->in || !s->out || !s->dec) {
		slot_free(s);
		errno = ENOMEM;
		return -1;
	}
	if (ring_bind(s->seg, index) < 0) {
		slot_free(s);
		return -1;
	}
	uint32_t hl;
	if (ring_held(s->seg, &hl)) {
		/* the supervisor reclaims an entry before giving it to a new process */
		slot_free(s);
		errno = EBUSY;
		return -1;
	}
	s->me = seg_worker(s->seg, index);
	ring_heartbeat(s->seg, WRK_IDLE);
	w->slot[w->nbound++] = s;
	*out = s;
	return 0;
}

/* ---- items ----------------------------------------------------------------------------------- */

/* A frame we cannot decode is a supervisor bug: report it, so the supervisor logs and accounts
 * for it, with the best identity we have. */
static void report_bad_frame(ejob_slot *s, const struct frame_err *fe)
{
	struct frame_complete c = {
		.xid = 0, .attempt = 1, .status = FRAME_ST_ERROR, .job = "?", .task_id = "?",
	};
	char msg[FRAME_ERRTXT_MAX + 1];
	snprintf(msg, sizeof msg, "undecodable submission frame: %s", fe->msg);
	c.error = msg;
	long n = frame_encode_complete(&c, s->out, s->out_cap);
	if (n < 0) return;
	while (ring_complete(s->seg, s->out, (uint32_t)n) < 0 && errno == EAGAIN) {
		if (s->w->sock >= 0 && attach_peer_gone(s->w->sock)) return;
		ring_wait_space(s->seg, (int64_t)s->w->hb_ms * 1000000);
		ring_heartbeat(s->seg, WRK_BUSY);
	}
}

/* The item's fields into the public context: ipc/item_fields.h names each one's member. */
static void fill_context(ejob_slot *s, const struct frame_submit *f)
{
	ejob_context *c = &s->ctx;
	memset(c, 0, sizeof *c);
	c->size = sizeof *c;
	c->priv = s;
#define TO_CONTEXT(type, name, key, req, min, max, ctx) c->ctx = f->name;
	FRAME_ITEM_FIELDS(TO_CONTEXT)
#undef TO_CONTEXT
	c->batch_max = f->flow ? (f->batch_max ? f->batch_max : EJOB_BATCH_DEFAULT) : 0;
}

int ejob_next(ejob_slot *s, int timeout_ms, const ejob_context **ctx)
{
	ejob_worker *w = s->w;
	struct shm_header *h = seg_header(s->seg);
	if (s->busy) {
		slot_err(s, "the previous item (xid %llu) was not finished with ejob_done",
		         (unsigned long long)s->ctx.xid);
		errno = EBUSY;
		return -1;
	}
	uint64_t now = wait_now_ns();
	uint64_t end = timeout_ms < 0 ? UINT64_MAX : now + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		if (atomic_load(&w->stop)) {
			errno = ECANCELED;
			return -1;
		}
		if (atomic_load_explicit(&h->shutdown, memory_order_acquire)) {
			slot_err(s, "the supervisor is shutting down");
			errno = ESHUTDOWN;
			return -1;
		}
		long n = ring_claim(s->seg, s->in, s->in_cap);
		if (n > 0) {
			struct frame_submit f;
			struct frame_err fe;
			if (frame_decode_submit(s->dec, s->in, (size_t)n, &f, &fe) < 0) {
				slot_err(s, "undecodable submission frame: %s", fe.msg);
				report_bad_frame(s, &fe);
				continue;
			}
			fill_context(s, &f);
			s->busy = 1;
			s->has_out = 0;
			s->claimed_ns = wait_now_ns();
			/* Published under a lease that has passed (the supervisor was held up): it must not
			 * start, or it would run while the session may be gone. Refused, not run and then
			 * killed: the supervisor takes it back and runs it again when it is safe. */
			uint64_t lease = atomic_load_explicit(&h->lease_deadline_ns, memory_order_acquire);
			if (lease && s->claimed_ns >= lease) {
				if (ejob_done(s, EJOB_CANCELLED, 0, 0, "not started: the ZooKeeper lease it was given had passed") < 0)
					return -1;
				continue;
			}
			ring_heartbeat(s->seg, WRK_BUSY);
			*ctx = &s->ctx;
			return 1;
		}
		if (n < 0 && errno != EBADMSG) {
			slot_err(s, "ring_claim failed: %s", strerror(errno));
			return -1;
		}
		if (n < 0) continue;   /* a corrupt slot was dropped by ring_claim: look again */
		ring_heartbeat(s->seg, WRK_IDLE);
		if (w->sock >= 0 && attach_peer_gone(w->sock)) {
			slot_err(s, "the supervisor closed the attach socket");
			errno = ENOTCONN;
			return -1;
		}
		now = wait_now_ns();
		if (now >= end) return 0;
		uint64_t wait = (uint64_t)w->hb_ms * 1000000u;
		if (end - now < wait) wait = end - now;
		if (ring_wait(s->seg, (int64_t)wait) < 0 && errno == EINTR) {
			slot_err(s, "interrupted by a signal");
			return -1;
		}
	}
}

int ejob_done(ejob_slot *s, int status, int code, int signal, const char *error)
{
	if (!s->busy) {
		slot_err(s, "ejob_done without a current item");
		errno = ENOENT;
		return -1;
	}
	if (status < 0 || status >= FRAME_ST__COUNT || signal < 0 || signal > 128) {
		slot_err(s, "ejob_done: status %d or signal %d out of range", status, signal);
		errno = EINVAL;
		return -1;
	}
	char etxt[EJOB_ERROR_MAX + 1];
	size_t el = error ? utf8_cut(error, EJOB_ERROR_MAX) : 0;
	if (el) memcpy(etxt, error, el);
	etxt[el] = '\0';
	const ejob_context *x = &s->ctx;
	struct frame_complete c = {
		.xid = x->xid, .fire_id = x->fire_id, .epoch = x->epoch,
		.duration_us = (wait_now_ns() - s->claimed_ns) / 1000u,
		.item = x->item, .attempt = x->attempt, .status = (uint32_t)status, .exit_code = code,
		.signal = signal, .job = x->job, .task_id = x->task_id, .error = etxt,
		.output = s->has_out ? s->out_text : NULL,
	};
	long n = frame_encode_complete(&c, s->out, s->out_cap);
	if (n < 0 && errno == EMSGSIZE && c.output) {
		/* small completion slots: the outcome goes without the output */
		c.output = NULL;
		n = frame_encode_complete(&c, s->out, s->out_cap);
	}
	if (n < 0) {
		slot_err(s, "cannot encode the completion of xid %llu: %s", (unsigned long long)x->xid, strerror(errno));
		return -1;
	}
	for (;;) {
		if (ring_complete(s->seg, s->out, (uint32_t)n) == 0) break;
		if (errno != EAGAIN) {
			slot_err(s, "ring_complete failed: %s", strerror(errno));
			return -1;
		}
		/* the ring is full: the supervisor drains it and wakes us; keep heartbeating meanwhile */
		if (s->w->sock >= 0 && attach_peer_gone(s->w->sock)) {
			slot_err(s, "the supervisor closed the attach socket: the completion of xid %llu cannot be delivered",
			         (unsigned long long)x->xid);
			errno = ENOTCONN;
			return -1;
		}
		ring_heartbeat(s->seg, WRK_BUSY);
		ring_wait_space(s->seg, (int64_t)s->w->hb_ms * 1000000);
	}
	s->busy = 0;
	ejob_set_item_pgid(s, 0);
	ejob_set_in_native(s, 0);
	ring_heartbeat(s->seg, WRK_IDLE);
	return 0;
}

/* Keep the last EJOB_OUTPUT_MAX bytes of text as valid UTF-8 without NUL or control characters
 * other than newline and tab (bytes that are not are sent as '?'), starting at a line if the
 * text had to be cut and a line starts in what is kept. */
int ejob_set_output(const ejob_context *ctx, const char *text, size_t len)
{
	ejob_slot *s = ctx ? (ejob_slot *)(uintptr_t)ctx->priv : NULL;
	if (!s || !s->busy || &s->ctx != ctx) {
		errno = ENOENT;
		return -1;
	}
	if (!text) len = 0;
	const unsigned char *p = (const unsigned char *)text, *e = p + len;
	if (len > EJOB_OUTPUT_MAX) {
		p = e - EJOB_OUTPUT_MAX;
		const unsigned char *nl = memchr(p, '\n', (size_t)(e - p));
		if (nl && nl + 1 < e) p = nl + 1;
		else
			while (p < e && (*p & 0xc0) == 0x80) p++;
	}
	size_t n = 0;
	while (p < e) {
		unsigned c = *p, k = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		int good = k && (size_t)(e - p) >= k && (k > 1 || c >= 0x20 || c == '\n' || c == '\t') && c != 0x7f;
		for (unsigned j = 1; good && j < k; j++) good = (p[j] & 0xc0) == 0x80;
		/* no overlong forms, surrogates or code points past U+10FFFF (PostgreSQL refuses them) */
		if (good && k == 2) good = c >= 0xc2;
		if (good && k == 3) good = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
		if (good && k == 4) good = c <= 0xf4 && !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
		if (!good) k = 1;
		if (good) memcpy(s->out_text + n, p, k);
		else s->out_text[n] = '?';
		n += good ? k : 1;
		p += k;
	}
	s->out_text[n] = '\0';
	s->has_out = 1;
	return 0;
}

int ejob_cancelled(const ejob_context *ctx)
{
	const ejob_slot *s = ctx->priv;
	if (!s) return EJOB_CANCEL_NONE;
	uint32_t why = atomic_load_explicit(&s->me->cancel, memory_order_acquire);
	if (why && atomic_load_explicit(&s->me->cancel_xid, memory_order_relaxed) == ctx->xid)
		return why <= EJOB_CANCEL_LEASE ? (int)why : EJOB_CANCEL_SHUTDOWN;
	uint64_t lease = atomic_load_explicit(&seg_header(s->seg)->lease_deadline_ns, memory_order_relaxed);
	if (lease && wait_now_ns() >= lease)
		return EJOB_CANCEL_LEASE;
	return EJOB_CANCEL_NONE;
}

int ejob_lease(const ejob_slot *s, uint64_t *stop_ns, uint64_t *kill_ns)
{
	if (!s || !stop_ns || !kill_ns) {
		errno = EINVAL;
		return -1;
	}
	const struct shm_header *h = seg_header(s->seg);
	*kill_ns = atomic_load_explicit(&h->lease_kill_ns, memory_order_relaxed);
	*stop_ns = atomic_load_explicit(&h->lease_deadline_ns, memory_order_relaxed);
	return 0;
}

void ejob_heartbeat(ejob_slot *s)
{
	ring_heartbeat(s->seg, s->busy ? WRK_BUSY : WRK_IDLE);
}

void ejob_set_in_native(ejob_slot *s, int on)
{
	if (on) atomic_fetch_or_explicit(&s->me->flags, WRKF_IN_NATIVE, memory_order_release);
	else atomic_fetch_and_explicit(&s->me->flags, ~WRKF_IN_NATIVE, memory_order_release);
}

void ejob_set_item_pgid(ejob_slot *s, pid_t pgid)
{
	atomic_store_explicit(&s->me->item_pgid, (int32_t)pgid, memory_order_release);
}

const ejob_context *ejob_current(const ejob_slot *s) { return s->busy ? &s->ctx : NULL; }
const char *ejob_slot_error(const ejob_slot *s) { return s->err; }

void ejob_detach(ejob_worker *w)
{
	if (!w) return;
	int e = errno;
	for (unsigned i = 0; i < w->nbound; i++) {
		ring_heartbeat(w->slot[i]->seg, WRK_STOPPING);
		slot_free(w->slot[i]);
	}
	seg_close(w->seg);
	if (w->memfd >= 0) close(w->memfd);
	if (w->efd >= 0) close(w->efd);
	if (w->sock >= 0) close(w->sock);
	free(w);
	errno = e;
}
