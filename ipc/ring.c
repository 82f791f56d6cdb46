/* ipc/ring.c: submission and completion rings over a segment (see ring.h for the protocol).
 *
 * Ordering pairs (labels used in the comments below):
 *  R1/A1  publisher stores data, then ctl=READY (release); claimer loads ctl (acquire), reads data.
 *  R2/A2  claimer frees the slot, ctl=FREE(p+slots) (release) after reading data; the publisher
 *         loads ctl (acquire) before overwriting data.
 *  R3/A3  completion writer stores data, then ctl=READY (release); the drainer loads (acquire).
 *  R4/A4  drainer frees the completion slot (release); a writer's CAS (acquire) precedes writing.
 *  F1/F2  sleep/wake (Dekker): a sleeper increments its counter (seq_cst) then re-checks the ring;
 *         a waker publishes, fences (seq_cst), then reads the counter. One of them sees the other.
 */
#include "ipc/ring.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ipc/seg_priv.h"
#include "ipc/wait.h"

#define ACQ memory_order_acquire
#define REL memory_order_release
#define RLX memory_order_relaxed
#define SC  memory_order_seq_cst

/* Fetch a line for writing ahead of use: the claim CAS then finds the line exclusive instead
 * of loading it shared and upgrading it (two cross-core trips). PREFETCHW is a NOP on CPUs
 * without it. */
static inline void prefetch_w(const void *p)
{
#if defined(__x86_64__)
	__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

/* Prefetch a slot's control line for writing and `bytes` of it: for reading (frames we will
 * copy out) or for writing (frames we will write; the fence after a completion waits for those
 * stores, so their lines should already be ours). */
static inline void prefetch_slot(const void *slot, uint32_t bytes, int write)
{
	const char *p = slot;
	prefetch_w(p);
	for (uint32_t off = 64; off < bytes; off += 64) {
		if (write) prefetch_w(p + off);
		else __builtin_prefetch(p + off, 0, 3);
	}
}

static void advance(_Atomic uint64_t *idx, uint64_t from)
{
	uint64_t expect = from;
	atomic_compare_exchange_strong_explicit(idx, &expect, from + 1, RLX, RLX);
}

/* ---- submission: supervisor ---------------------------------------------------------------- */

int ring_publish(seg_t *s, const void *frame, uint32_t len)
{
	if (len > s->sub_data) {
		errno = EMSGSIZE;
		return -1;
	}
	uint64_t pos = s->sub_head;
	struct shm_slot *sl = seg_sub_slot(s, pos);
	if (atomic_load_explicit(&sl->ctl, ACQ) != SLOT_CTL(SLOT_FREE, 0, 0, pos)) {   /* A2 */
		errno = EAGAIN;
		return -1;
	}
	struct shm_slot *ahead = seg_sub_slot(s, pos + 4);
	prefetch_w(ahead);
	for (uint32_t off = 64; off < SHM_SLOT_HDR + len && off < s->sub_slot_size; off += 64)
		prefetch_w((char *)ahead + off);
	memcpy(sl->data, frame, len);
	sl->len = len;
	sl->ref = 0;
	atomic_store_explicit(&sl->ctl, SLOT_CTL(SLOT_READY, 0, 0, pos), REL);           /* R1 */
	s->sub_head = pos + 1;
	atomic_store_explicit(&s->hdr->sub_head, pos + 1, RLX);
	s->pending++;
	return 0;
}

int ring_flush(seg_t *s)
{
	uint32_t n = s->pending;
	if (!n) return 0;
	s->pending = 0;
	atomic_thread_fence(SC);                                                           /* F2 */
	uint32_t sleepers = atomic_load_explicit(&s->hdr->sub_sleepers, RLX);
	if (!sleepers) return 0;
	atomic_fetch_add_explicit(&s->hdr->sub_futex, 1, REL);
	int k = (int)(n < sleepers ? n : sleepers);
	wait_wake(&s->hdr->sub_futex, k);
	atomic_fetch_add_explicit(&s->hdr->sub_wakes, 1, RLX);
	return k;
}

void ring_wake_all(seg_t *s)
{
	atomic_fetch_add_explicit(&s->hdr->sub_futex, 1, SC);
	wait_wake(&s->hdr->sub_futex, -1);
	atomic_fetch_add_explicit(&s->hdr->comp_space_futex, 1, SC);
	wait_wake(&s->hdr->comp_space_futex, -1);
}

/* ---- submission: worker ------------------------------------------------------------------- */

int ring_bind(seg_t *s, uint32_t index)
{
	if (index >= s->nworkers) {
		errno = EINVAL;
		return -1;
	}
	s->wid = index;
	s->wgen = atomic_load_explicit(&s->workers[index].gen, ACQ);
	s->bound = 1;
	return 0;
}

void ring_set_spin_ns(seg_t *s, uint64_t ns) { s->spin_ns = ns; }

/* Find the position of the next published, unclaimed slot at or after the tail hint.
 * Returns 1 with *pos and *ctl set, 0 if nothing is published. Helps the hint along past
 * positions already claimed (a claimer may have died before advancing it). */
static int sub_find(seg_t *s, uint64_t *pos_out, uint64_t *ctl_out)
{
	uint64_t pos = atomic_load_explicit(&s->hdr->sub_tail, RLX);
	for (uint32_t guard = 0; guard <= s->sub_slots; guard++) {
		struct shm_slot *sl = seg_sub_slot(s, pos);
		uint64_t c = atomic_load_explicit(&sl->ctl, ACQ);                            /* A1 */
		int32_t d = (int32_t)(SLOT_SEQ(c) - (uint32_t)pos);
		if (d < 0)
			return 0;   /* still the previous lap: the publisher has not reached pos */
		if (d == 0) {
			unsigned st = SLOT_STATE(c);
			if (st == SLOT_READY) {
				*pos_out = pos;
				*ctl_out = c;
				return 1;
			}
			if (st == SLOT_FREE)
				return 0;   /* nothing published at pos yet */
		}
		/* pos is claimed (CLAIMED now, or freed and reused since): move on */
		advance(&s->hdr->sub_tail, pos);
		pos++;
	}
	return 0;
}

int ring_pending(seg_t *s)
{
	uint64_t pos, c;
	return sub_find(s, &pos, &c);
}

long ring_claim(seg_t *s, void *buf, size_t cap)
{
	if (!s->bound) {
		errno = EINVAL;
		return -1;
	}
	if (cap < s->sub_data) {
		errno = EMSGSIZE;
		return -1;
	}
	struct shm_worker *me = &s->workers[s->wid];
	if (atomic_load_explicit(&me->held_pos, RLX) != 0) {
		errno = EBUSY;
		return -1;
	}
	uint64_t pos, c;
	while (sub_find(s, &pos, &c)) {
		struct shm_slot *sl = seg_sub_slot(s, pos);
		uint64_t mine = SLOT_CTL(SLOT_CLAIMED, s->wid, s->wgen, pos);
		if (!atomic_compare_exchange_strong_explicit(&sl->ctl, &c, mine, ACQ, RLX))
			continue;   /* another worker won it: look again */
		advance(&s->hdr->sub_tail, pos);
		prefetch_slot(seg_sub_slot(s, pos + 1), SHM_SLOT_HDR + 256, 0);
		uint32_t len = sl->len;
		if (len > s->sub_data) {
			/* only a broken supervisor writes this; drop the slot rather than overrun */
			atomic_store_explicit(&sl->ctl, SLOT_CTL(SLOT_FREE, 0, 0, pos + s->sub_slots), REL);
			errno = EBADMSG;
			return -1;
		}
		memcpy(buf, sl->data, len);
		memcpy(seg_held(s, s->wid), buf, len);
		atomic_store_explicit(&me->held_len, len, RLX);
		atomic_store_explicit(&me->held_pos, pos + 1, REL);
		atomic_store_explicit(&sl->ctl, SLOT_CTL(SLOT_FREE, 0, 0, pos + s->sub_slots), REL);   /* R2 */
		return (long)len;
	}
	return 0;
}

int ring_wait(seg_t *s, int64_t timeout_ns)
{
	struct shm_header *h = s->hdr;
	/* One spinner at a time keeps the hand-off hot without burning a core per idle worker. */
	if (s->spin_ns && atomic_fetch_add_explicit(&h->sub_spinners, 1, RLX) == 0) {
		uint64_t end = wait_now_ns() + s->spin_ns;
		int found = 0;
		for (unsigned i = 0;; i++) {
			if (ring_pending(s) || atomic_load_explicit(&h->shutdown, RLX)) {
				found = 1;
				break;
			}
			wait_cpu_relax();
			if ((i & 63) == 63 && wait_now_ns() >= end)
				break;
		}
		atomic_fetch_sub_explicit(&h->sub_spinners, 1, RLX);
		if (found)
			return 0;
	} else if (s->spin_ns) {
		atomic_fetch_sub_explicit(&h->sub_spinners, 1, RLX);
	}
	uint32_t v = atomic_load_explicit(&h->sub_futex, ACQ);
	atomic_fetch_add_explicit(&h->sub_sleepers, 1, SC);
	atomic_thread_fence(SC);                                                           /* F1 */
	int r = 0;
	if (!ring_pending(s) && !atomic_load_explicit(&h->shutdown, RLX))
		r = wait_futex(&h->sub_futex, v, timeout_ns);
	int e = errno;
	atomic_fetch_sub_explicit(&h->sub_sleepers, 1, RLX);
	errno = e;
	return r;
}

const void *ring_held(const seg_t *s, uint32_t *len)
{
	if (!s->bound)
		return NULL;
	const struct shm_worker *me = &s->workers[s->wid];
	if (!atomic_load_explicit(&me->held_pos, ACQ))
		return NULL;
	uint32_t l = atomic_load_explicit(&me->held_len, RLX);
	*len = l <= s->sub_data ? l : s->sub_data;
	return seg_held(s, s->wid);
}

void ring_heartbeat(seg_t *s, uint32_t state)
{
	struct shm_worker *me = &s->workers[s->wid];
	uint64_t now = wait_now_ns();
	atomic_store_explicit(&me->heartbeat_ns, now, RLX);
	if (state == WRK_BUSY && atomic_load_explicit(&me->state, RLX) != WRK_BUSY)
		atomic_store_explicit(&me->started_ns, now, RLX);
	atomic_store_explicit(&me->state, state, RLX);
}

/* ---- completion: worker ------------------------------------------------------------------- */

static int comp_has_space(seg_t *s)
{
	uint64_t pos = atomic_load_explicit(&s->hdr->comp_head, RLX);
	for (uint32_t guard = 0; guard <= s->comp_slots; guard++, pos++) {
		uint64_t c = atomic_load_explicit(&seg_comp_slot(s, pos)->ctl, ACQ);
		int32_t d = (int32_t)(SLOT_SEQ(c) - (uint32_t)pos);
		if (d < 0) return 0;
		if (d == 0 && SLOT_STATE(c) == SLOT_FREE) return 1;
	}
	return 0;
}

int ring_complete(seg_t *s, const void *frame, uint32_t len)
{
	if (!s->bound) {
		errno = EINVAL;
		return -1;
	}
	if (len > s->comp_data) {
		errno = EMSGSIZE;
		return -1;
	}
	struct shm_worker *me = &s->workers[s->wid];
	uint64_t held = atomic_load_explicit(&me->held_pos, RLX);
	if (!held) {
		errno = ENOENT;
		return -1;
	}
	struct shm_header *h = s->hdr;
	uint64_t pos = atomic_load_explicit(&h->comp_head, RLX);
	for (uint32_t guard = 0;; guard++) {
		if (guard > 2 * s->comp_slots) {
			errno = EAGAIN;
			return -1;
		}
		struct shm_slot *sl = seg_comp_slot(s, pos);
		uint64_t c = atomic_load_explicit(&sl->ctl, ACQ);                            /* A4 */
		int32_t d = (int32_t)(SLOT_SEQ(c) - (uint32_t)pos);
		if (d < 0) {
			errno = EAGAIN;   /* the supervisor has not drained this slot's previous lap */
			return -1;
		}
		if (d == 0 && SLOT_STATE(c) == SLOT_FREE) {
			uint64_t mine = SLOT_CTL(SLOT_CLAIMED, s->wid, s->wgen, pos);
			if (!atomic_compare_exchange_strong_explicit(&sl->ctl, &c, mine, ACQ, RLX))
				continue;
			advance(&h->comp_head, pos);
			prefetch_slot(seg_comp_slot(s, pos + 1), SHM_SLOT_HDR + len, 1);
			memcpy(sl->data, frame, len);
			sl->len = len;
			sl->ref = held;
			atomic_store_explicit(&sl->ctl, SLOT_CTL(SLOT_READY, s->wid, s->wgen, pos), REL);   /* R3 */
			break;
		}
		advance(&h->comp_head, pos);
		pos++;
	}
	atomic_store_explicit(&me->held_pos, 0, REL);
	/* only this worker writes its counter: no locked increment needed */
	atomic_store_explicit(&me->items, atomic_load_explicit(&me->items, RLX) + 1, RLX);
	atomic_thread_fence(SC);                                                           /* F2 */
	if (atomic_load_explicit(&h->comp_sleeping, RLX) &&
	    atomic_exchange_explicit(&h->comp_sleeping, 0, RLX)) {
		uint64_t one = 1;
		if (s->efd >= 0 && write(s->efd, &one, sizeof one) == sizeof one)
			atomic_fetch_add_explicit(&h->comp_wakes, 1, RLX);
	}
	return 0;
}

int ring_wait_space(seg_t *s, int64_t timeout_ns)
{
	struct shm_header *h = s->hdr;
	uint32_t v = atomic_load_explicit(&h->comp_space_futex, ACQ);
	atomic_fetch_add_explicit(&h->comp_space_waiters, 1, SC);
	atomic_thread_fence(SC);                                                           /* F1 */
	int r = 0;
	if (!comp_has_space(s))
		r = wait_futex(&h->comp_space_futex, v, timeout_ns);
	int e = errno;
	atomic_fetch_sub_explicit(&h->comp_space_waiters, 1, RLX);
	errno = e;
	return r;
}

/* ---- completion: supervisor ---------------------------------------------------------------- */

long ring_drain(seg_t *s, void *buf, size_t cap, struct ring_comp *info)
{
	/* bounded: an attached process that keeps writing SKIP ahead of us cannot hold us here */
	for (uint32_t guard = 0; guard < s->comp_slots; guard++) {
		uint64_t pos = s->comp_tail;
		struct shm_slot *sl = seg_comp_slot(s, pos);
		uint64_t c = atomic_load_explicit(&sl->ctl, ACQ);                            /* A3 */
		if (SLOT_SEQ(c) != (uint32_t)pos)
			return 0;
		unsigned st = SLOT_STATE(c);
		if (st == SLOT_FREE || st == SLOT_CLAIMED)
			return 0;   /* empty, or a worker is writing it */
		uint64_t freed = SLOT_CTL(SLOT_FREE, 0, 0, pos + s->comp_slots);
		if (st == SLOT_SKIP) {
			atomic_store_explicit(&sl->ctl, freed, REL);                             /* R4 */
			s->comp_tail = pos + 1;
			atomic_store_explicit(&s->hdr->comp_tail, pos + 1, RLX);
			continue;
		}
		prefetch_slot(seg_comp_slot(s, pos + 1), SHM_SLOT_HDR + 128, 0);
		uint32_t len = sl->len;
		uint32_t owner = SLOT_OWNER(c);
		if (len <= s->comp_data && len > cap) {
			errno = EMSGSIZE;
			return -1;
		}
		info->worker = owner;
		info->gen = SLOT_GEN(c);
		info->held_pos = sl->ref;
		int bad = len > s->comp_data || owner >= s->nworkers;
		if (!bad)
			memcpy(buf, sl->data, len);
		atomic_store_explicit(&sl->ctl, freed, REL);                                 /* R4 */
		s->comp_tail = pos + 1;
		atomic_store_explicit(&s->hdr->comp_tail, pos + 1, RLX);
		if (bad) {
			errno = EBADMSG;
			return -1;
		}
		/* The item is accounted for by this completion: note it in the supervisor's own line of
		 * the worker entry (not the worker's line, which would bounce between cores per item),
		 * so that ring_reclaim does not report it again if the worker dies before it clears
		 * its held record. */
		if (info->held_pos)
			atomic_store_explicit(&s->workers[owner].drained_pos, info->held_pos, RLX);
		return (long)len;
	}
	return 0;
}

static int comp_ready(seg_t *s)
{
	uint64_t c = atomic_load_explicit(&seg_comp_slot(s, s->comp_tail)->ctl, ACQ);
	return SLOT_SEQ(c) == (uint32_t)s->comp_tail && (SLOT_STATE(c) == SLOT_READY || SLOT_STATE(c) == SLOT_SKIP);
}

int ring_comp_idle(seg_t *s)
{
	struct shm_header *h = s->hdr;
	atomic_store_explicit(&h->comp_sleeping, 1, RLX);
	atomic_thread_fence(SC);                                                           /* F1, F2 */
	if (atomic_load_explicit(&h->comp_space_waiters, RLX)) {
		atomic_fetch_add_explicit(&h->comp_space_futex, 1, REL);
		wait_wake(&h->comp_space_futex, -1);
	}
	if (comp_ready(s)) {
		atomic_store_explicit(&h->comp_sleeping, 0, RLX);
		return 1;
	}
	return 0;
}

/* ---- reclaim -------------------------------------------------------------------------------- */

int ring_reclaim(seg_t *s, uint32_t worker, uint32_t gen, ring_reclaim_fn *fn, void *arg)
{
	if (worker >= s->nworkers) {
		errno = EINVAL;
		return -1;
	}
	struct shm_worker *w = &s->workers[worker];
	if (atomic_load_explicit(&w->gen, RLX) != gen) {
		errno = ESTALE;   /* the entry belongs to another process now: its items are not ours */
		return -1;
	}
	gen &= 0xffff;
	uint64_t held = atomic_load_explicit(&w->held_pos, ACQ);
	int held_done = 0;
	int reported = 0;

	/* completion slots: finish what it was writing as SKIP; note a completion it finished */
	for (uint32_t i = 0; i < s->comp_slots; i++) {
		struct shm_slot *sl = seg_comp_slot(s, i);
		uint64_t c = atomic_load_explicit(&sl->ctl, ACQ);
		if (SLOT_OWNER(c) != worker || SLOT_GEN(c) != gen)
			continue;
		if (SLOT_STATE(c) == SLOT_CLAIMED)
			atomic_store_explicit(&sl->ctl, SLOT_CTL(SLOT_SKIP, 0, 0, SLOT_SEQ(c)), REL);
		else if (SLOT_STATE(c) == SLOT_READY && held && sl->ref == held)
			held_done = 1;   /* its completion is in the ring: ring_drain reports it */
	}

	/* submission slots it was claiming (claimed, not yet copied to its held area) */
	for (uint32_t i = 0; i < s->sub_slots; i++) {
		struct shm_slot *sl = seg_sub_slot(s, i);
		uint64_t c = atomic_load_explicit(&sl->ctl, ACQ);
		if (SLOT_STATE(c) != SLOT_CLAIMED || SLOT_OWNER(c) != worker || SLOT_GEN(c) != gen)
			continue;
		uint32_t seq = SLOT_SEQ(c);
		uint64_t pos = s->sub_head - (uint32_t)((uint32_t)s->sub_head - seq);
		uint32_t len = sl->len <= s->sub_data ? sl->len : s->sub_data;
		if (fn) fn(arg, pos, sl->data, len);
		reported++;
		if (held && (uint32_t)(held - 1) == seq)
			held_done = 1;   /* the same item, already in its held area: report once */
		atomic_store_explicit(&sl->ctl, SLOT_CTL(SLOT_FREE, 0, 0, seq + s->sub_slots), REL);
	}

	/* the held item, unless its completion is in the ring, was drained, or was just reported */
	if (held && atomic_load_explicit(&w->drained_pos, RLX) == held)
		held_done = 1;
	if (held && !held_done) {
		uint32_t len = atomic_load_explicit(&w->held_len, RLX);
		if (len > s->sub_data) len = s->sub_data;
		if (fn) fn(arg, held - 1, seg_held(s, worker), len);
		reported++;
	}
	atomic_store_explicit(&w->held_pos, 0, REL);
	return reported;
}
