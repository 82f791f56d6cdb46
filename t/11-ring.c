/* t/11-ring.c: segments and rings in one process: geometry, attach checks, publish/claim/
 * complete/drain, full rings, and each reclaim window simulated step by step. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "ipc/shm.h"
#include "t/lib/tlib.h"
#include "t/tap.h"

static char err[256];

/* frames here are small opaque byte strings: "frame-<n>" */
static uint32_t mk(char *buf, unsigned n) { return (uint32_t)sprintf(buf, "frame-%u", n); }

static int publish_n(seg_t *s, unsigned from, unsigned n)
{
	char b[64];
	for (unsigned i = 0; i < n; i++)
		if (ring_publish(s, b, mk(b, from + i)) < 0) return (int)i;
	return (int)n;
}

static void test_geometry_and_attach(void)
{
	seg_t *s;
	struct seg_params p = { .nworkers = 3, .sub_slots = 10, .sub_slot_size = 512, .name = "pool" };
	if (!ok(seg_create(&p, &s, err, sizeof err) == 0, "create a 3-worker segment")) diag("%s", err);
	struct shm_header *h = seg_header(s);
	is_int(h->nworkers, 3, "nworkers");
	is_int(h->sub_slots, 16, "sub slots rounded up to a power of two");
	is_int(h->comp_slots, 64, "completion slots default to 64");
	is_int(h->comp_slot_size, 512, "completion slot size defaults to the submission's");
	is_int(seg_sub_frame_max(s), 512 - SHM_SLOT_HDR, "frame capacity of a slot");
	is_int(h->owner_pid, getpid(), "owner pid");
	is_str(h->name, "pool", "name");
	ok(seg_check(h, seg_size(s), err, sizeof err) == 0, "its own geometry checks out");
	int seals = fcntl(seg_memfd(s), F_GET_SEALS);
	ok((seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) == (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
	   "memfd sealed against shrink, grow and further sealing");
	ok(ftruncate(seg_memfd(s), 4096) < 0 && errno == EPERM, "shrinking the segment is refused (EPERM)");
	ok(fcntl(seg_memfd(s), F_GETFD) & FD_CLOEXEC, "memfd is CLOEXEC");
	ok(fcntl(seg_eventfd(s), F_GETFD) & FD_CLOEXEC, "eventfd is CLOEXEC");
	char link[64], target[256] = "";
	snprintf(link, sizeof link, "/proc/self/fd/%d", seg_memfd(s));
	ssize_t tl = readlink(link, target, sizeof target - 1);
	if (tl > 0) target[tl] = '\0';
	ok(!strncmp(target, "/memfd:ejob:pool", 16), "memfd is named for shmdump (%s)", target);

	seg_t *a;
	if (!ok(seg_attach(seg_memfd(s), seg_eventfd(s), &a, err, sizeof err) == 0, "attach to it")) diag("%s", err);
	ok(seg_header(a)->sub_slots == 16 && seg_nworkers(a) == 3, "attached handle sees the geometry");
	seg_close(a);

	/* a plain file is refused */
	char path[300];
	snprintf(path, sizeof path, "%s/plain", tlib_tmpdir());
	tlib_write_file(path, h, 4096);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	ok(seg_attach(fd, -1, &a, err, sizeof err) == -1, "a plain file is refused");
	char want[200];
	snprintf(want, sizeof want, "segment fd %d is not a memfd sealed against shrinking: attach only to segments a supervisor created", fd);
	is_str(err, want, "  with the reason");
	close(fd);

	/* a sealed memfd with another version: refused, naming the fix */
	int m = memfd_create("ejob:fake", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t sz = seg_size(s);
	ok(ftruncate(m, (off_t)sz) == 0, "fake segment sized");
	unsigned char *copy = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	memcpy(copy, h, sz);
	((struct shm_header *)copy)->version = 9;
	fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	ok(seg_attach(m, -1, &a, err, sizeof err) == -1, "version 9 refused");
	snprintf(want, sizeof want, "segment fd %d: segment layout version 9, this build reads version 2: "
	         "use binaries from the same ejob release as the supervisor", m);
	is_str(err, want, "  with the reason and the fix");
	((struct shm_header *)copy)->version = SHM_VERSION;
	((struct shm_header *)copy)->magic = 0x1234;
	ok(seg_attach(m, -1, &a, err, sizeof err) == -1 && strstr(err, "not an ejob segment (magic 0x0000000000001234)"),
	   "foreign magic refused: %s", err);
	((struct shm_header *)copy)->magic = SHM_MAGIC;
	((struct shm_header *)copy)->sub_off = 8;
	ok(seg_attach(m, -1, &a, err, sizeof err) == -1 && strstr(err, "corrupt geometry"),
	   "overlapping regions refused: %s", err);
	munmap(copy, sz);
	close(m);

	struct seg_params bad = { .nworkers = 0 };
	ok(seg_create(&bad, &a, err, sizeof err) == -1, "0 workers refused");
	is_str(err, "workers: 0 out of range 1..16383", "  with the range");
	bad = (struct seg_params){ .nworkers = 1, .sub_slot_size = 1000 };
	ok(seg_create(&bad, &a, err, sizeof err) == -1 && strstr(err, "power of two"), "slot size 1000 refused: %s", err);
	seg_close(s);
}

static void test_basic_flow(void)
{
	seg_t *s, *w;
	struct seg_params p = { .nworkers = 2, .sub_slots = 8, .sub_slot_size = 256, .comp_slots = 4 };
	seg_create(&p, &s, err, sizeof err);
	seg_attach(seg_memfd(s), seg_eventfd(s), &w, err, sizeof err);
	ok(ring_bind(w, 2) == -1 && errno == EINVAL, "bind to entry 2 of 2 refused");
	ring_bind(w, 1);
	char buf[256], b2[64];

	ok(ring_claim(w, buf, 10) == -1 && errno == EMSGSIZE, "claim with a buffer smaller than a slot: EMSGSIZE");
	is_int(ring_claim(w, buf, sizeof buf), 0, "nothing to claim in an empty ring");
	ok(!ring_pending(w), "nothing pending");
	is_int(publish_n(s, 0, 3), 3, "publish 3");
	is_int(ring_flush(s), 0, "flush wakes nobody when nobody sleeps");
	is_int(seg_header(s)->sub_wakes, 0, "no wake syscall made");
	ok(ring_pending(w), "pending");
	long n = ring_claim(w, buf, sizeof buf);
	ok(n == 7 && !memcmp(buf, "frame-0", 7), "first claim gets frame-0");
	struct shm_worker *me = seg_worker(s, 1);
	is_int(me->held_pos, 1, "held position recorded (pos + 1)");
	uint32_t hl;
	const void *held = ring_held(w, &hl);
	ok(held && hl == 7 && !memcmp(held, "frame-0", 7), "held copy in the worker's area");
	ok(ring_claim(w, buf, sizeof buf) == -1 && errno == EBUSY, "second claim while holding: EBUSY");

	struct ring_comp ci;
	is_int(ring_drain(s, buf, sizeof buf, &ci), 0, "nothing to drain yet");
	ok(ring_complete(w, "done-0", 6) == 0, "complete frame-0");
	is_int(me->held_pos, 0, "held record cleared by the worker");
	n = ring_drain(s, buf, sizeof buf, &ci);
	ok(n == 6 && !memcmp(buf, "done-0", 6), "drain gets the completion");
	ok(ci.worker == 1 && ci.held_pos == 1, "from worker 1, for held position 1");
	ok(ring_complete(w, "x", 1) == -1 && errno == ENOENT, "complete without a held item: ENOENT");

	/* eventfd wakeups only when the supervisor said it sleeps */
	n = ring_claim(w, buf, sizeof buf);
	ring_complete(w, "done-1", 6);
	struct pollfd pf = { seg_eventfd(s), POLLIN, 0 };
	is_int(poll(&pf, 1, 0), 0, "no eventfd write while the supervisor is not idle");
	is_int(ring_comp_idle(s), 1, "idle: a completion is already there, drain again");
	ring_drain(s, buf, sizeof buf, &ci);
	is_int(ring_comp_idle(s), 0, "idle: nothing there, safe to wait");
	ring_claim(w, buf, sizeof buf);
	ring_complete(w, "done-2", 6);
	is_int(poll(&pf, 1, 0), 1, "eventfd readable after a completion while idle");
	uint64_t v = 0;
	ok(read(seg_eventfd(s), &v, 8) == 8 && v == 1, "one eventfd write");
	ring_drain(s, buf, sizeof buf, &ci);
	is_int(seg_header(s)->comp_wakes, 1, "one wake in all");

	/* full submission ring: exactly `slots` frames fit, the next one is kept by the caller */
	is_int(publish_n(s, 100, 9), 8, "8 of 9 fit in an 8-slot ring");
	ok(ring_publish(s, "x", 1) == -1 && errno == EAGAIN, "full ring: EAGAIN, nothing blocks");
	n = ring_claim(w, buf, sizeof buf);
	ok(n > 0 && !memcmp(buf, "frame-100", 9), "claim the oldest (frame-100)");
	ok(ring_publish(s, b2, mk(b2, 108)) == 0, "one slot freed: publish again");
	ring_complete(w, "d", 1);
	ring_drain(s, buf, sizeof buf, &ci);
	unsigned got = 0, inorder = 1;
	while ((n = ring_claim(w, buf, sizeof buf)) > 0) {
		buf[n] = '\0';
		inorder &= (unsigned)atoi(buf + 6) == 101 + got;
		got++;
		ring_complete(w, "d", 1);
		ring_drain(s, buf, sizeof buf, &ci);
	}
	ok(got == 8 && inorder, "the remaining 8 come out in order (%u)", got);

	/* full completion ring: the worker waits, nothing lost */
	for (int i = 0; i < 4; i++) {
		publish_n(s, 200 + (unsigned)i, 1);
		ring_claim(w, buf, sizeof buf);
		ring_complete(w, "c", 1);
	}
	publish_n(s, 204, 1);
	ring_claim(w, buf, sizeof buf);
	ok(ring_complete(w, "c", 1) == -1 && errno == EAGAIN, "full completion ring: EAGAIN");
	ok(me->held_pos != 0, "the item is still held after a refused completion");
	ring_drain(s, buf, sizeof buf, &ci);
	ok(ring_complete(w, "c", 1) == 0, "room again after one drain");
	int drained = 0;
	while (ring_drain(s, buf, sizeof buf, &ci) > 0) drained++;
	is_int(drained, 4, "4 more completions drained");

	ok(ring_publish(s, buf, seg_sub_frame_max(s) + 1) == -1 && errno == EMSGSIZE, "oversize frame: EMSGSIZE");
	ok(ring_publish(s, buf, seg_sub_frame_max(s)) == 0, "a frame of exactly slot capacity fits");
	seg_close(w);
	seg_close(s);
}

struct rec { int n; char frames[8][64]; };

static void rec_fn(void *arg, uint64_t pos, const void *frame, uint32_t len)
{
	struct rec *r = arg;
	(void)pos;
	if (r->n < 8) {
		memcpy(r->frames[r->n], frame, len < 63 ? len : 63);
		r->frames[r->n][len < 63 ? len : 63] = '\0';
	}
	r->n++;
}

/* Each window in which a worker can die, reproduced by stopping its protocol half-way. */
static void test_reclaim_windows(void)
{
	seg_t *s, *w;
	struct seg_params p = { .nworkers = 2, .sub_slots = 8, .sub_slot_size = 256, .comp_slots = 8 };
	seg_create(&p, &s, err, sizeof err);
	seg_attach(seg_memfd(s), seg_eventfd(s), &w, err, sizeof err);
	struct shm_worker *ent = seg_worker(s, 0);
	atomic_store(&ent->gen, 7);
	ring_bind(w, 0);
	char buf[256];
	struct ring_comp ci;
	struct rec r;

	/* 1: held, running, no completion */
	publish_n(s, 0, 1);
	ring_claim(w, buf, sizeof buf);
	r.n = 0;
	is_int(ring_reclaim(s, 0, 7, rec_fn, &r), 1, "died while running: 1 item reclaimed");
	is_str(r.frames[0], "frame-0", "  it is frame-0");
	is_int(ent->held_pos, 0, "  held record cleared");
	r.n = 0;
	is_int(ring_reclaim(s, 0, 7, rec_fn, &r), 0, "reclaiming twice reports nothing more");

	/* 2: completed, completion not yet drained: the completion reports it, reclaim does not */
	publish_n(s, 1, 1);
	ring_claim(w, buf, sizeof buf);
	uint64_t held = ent->held_pos;
	ring_complete(w, "done-1", 6);
	atomic_store(&ent->held_pos, held);   /* died before clearing its held record */
	r.n = 0;
	is_int(ring_reclaim(s, 0, 7, rec_fn, &r), 0, "died after its completion was written: nothing reclaimed");
	ok(ring_drain(s, buf, sizeof buf, &ci) == 6 && !memcmp(buf, "done-1", 6), "  the completion drains");

	/* 3: completion drained, held record not yet cleared by the worker */
	publish_n(s, 2, 1);
	ring_claim(w, buf, sizeof buf);
	held = ent->held_pos;
	ring_complete(w, "done-2", 6);
	atomic_store(&ent->held_pos, held);
	ring_drain(s, buf, sizeof buf, &ci);
	is_int(ent->drained_pos, held, "draining notes the drained position in the supervisor's half of the entry");
	r.n = 0;
	is_int(ring_reclaim(s, 0, 7, rec_fn, &r), 0, "died after its completion was drained: nothing reclaimed");

	/* 4: claimed the slot (CAS done), died before copying it out */
	publish_n(s, 3, 1);
	struct shm_slot *sl = (struct shm_slot *)seg_slot_at(seg_header(s), 0, 3);
	uint64_t c = atomic_load(&sl->ctl);
	ok(SLOT_STATE(c) == SLOT_READY && SLOT_SEQ(c) == 3, "frame-3 published in slot 3");
	atomic_store(&sl->ctl, SLOT_CTL(SLOT_CLAIMED, 0, 7, 3));
	r.n = 0;
	is_int(ring_reclaim(s, 0, 7, rec_fn, &r), 1, "died holding a claimed slot: 1 reclaimed");
	is_str(r.frames[0], "frame-3", "  it is frame-3");
	c = atomic_load(&sl->ctl);
	ok(SLOT_STATE(c) == SLOT_FREE && SLOT_SEQ(c) == 3 + 8, "  slot freed for the next lap");
	is_int(ring_claim(w, buf, sizeof buf), 0, "  and the tail moves past it (ring empty)");

	/* 5: copied to the held area, died before freeing the slot: reported once */
	publish_n(s, 4, 1);
	sl = (struct shm_slot *)seg_slot_at(seg_header(s), 0, 4);
	ring_claim(w, buf, sizeof buf);
	atomic_store(&sl->ctl, SLOT_CTL(SLOT_CLAIMED, 0, 7, 4));   /* as if the free never happened */
	r.n = 0;
	is_int(ring_reclaim(s, 0, 7, rec_fn, &r), 1, "died between held copy and slot free: reported once");
	is_str(r.frames[0], "frame-4", "  it is frame-4");

	/* 6: died while writing its completion: slot skipped, item reclaimed, ring not wedged */
	seg_t *w2;
	seg_attach(seg_memfd(s), seg_eventfd(s), &w2, err, sizeof err);
	atomic_store(&seg_worker(s, 1)->gen, 3);
	ring_bind(w2, 1);
	publish_n(s, 5, 2);
	ring_claim(w, buf, sizeof buf);    /* worker 0: frame-5 */
	ring_claim(w2, buf, sizeof buf);   /* worker 1: frame-6 */
	struct shm_header *h = seg_header(s);
	uint64_t cpos = h->comp_head;
	struct shm_slot *cs = (struct shm_slot *)seg_slot_at(h, 1, (uint32_t)cpos);
	atomic_store(&cs->ctl, SLOT_CTL(SLOT_CLAIMED, 0, 7, cpos));   /* worker 0 mid-write */
	atomic_store(&h->comp_head, cpos + 1);
	ring_complete(w2, "done-6", 6);                                 /* worker 1 behind it */
	is_int(ring_drain(s, buf, sizeof buf, &ci), 0, "a half-written completion holds the drain");
	r.n = 0;
	is_int(ring_reclaim(s, 0, 7, rec_fn, &r), 1, "died writing its completion: item reclaimed");
	is_str(r.frames[0], "frame-5", "  it is frame-5");
	ok(ring_drain(s, buf, sizeof buf, &ci) == 6 && !memcmp(buf, "done-6", 6) && ci.worker == 1,
	   "  the drain skips the dead slot and reaches worker 1's completion");

	/* a reclaim for another generation touches nothing */
	publish_n(s, 7, 1);
	ring_claim(w2, buf, sizeof buf);
	r.n = 0;
	ok(ring_reclaim(s, 1, 2, rec_fn, &r) == -1 && errno == ESTALE && r.n == 0, "reclaim for a stale generation: ESTALE");
	ok(seg_worker(s, 1)->held_pos != 0, "  the live worker's item untouched");
	is_int(ring_reclaim(s, 1, 3, rec_fn, &r), 1, "reclaim for the right generation reports its item");
	seg_close(w2);
	seg_close(w);
	seg_close(s);
}

int main(void)
{
	tlib_init(60);
	plan(83);
	test_geometry_and_attach();
	test_basic_flow();
	test_reclaim_windows();
	return done_testing();
}
