/* t/12-ring-procs.c: the rings across processes. Forked consumers attach to the segment on
 * their own, decode real frames and report real completions; every frame must be completed
 * exactly once: with busy consumers, with sleeping ones, with one killed while it holds an
 * item, and with consumers SIGKILLed at random instructions and replaced all along. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "t/lib/tlib.h"
#include "t/tap.h"

#define NW 4
#define NO_HOLD UINT64_MAX

struct run {
	seg_t *s;
	frame_decoder_t *dec;
	unsigned total;          /* frames in this run, xid 0..total-1 */
	uint8_t *done;           /* completions per xid */
	unsigned ndone, dups, bad;
	uint64_t *again;         /* reclaimed xids to publish again */
	unsigned nagain;
	unsigned next;           /* next new xid */
	pid_t pid[NW];
	uint64_t spin_ns;
	unsigned reclaimed, kills;
};

static unsigned char fbuf[4096];

static long encode_item(uint64_t xid, uint32_t attempt)
{
	struct frame_submit f = {
		.xid = xid, .fire_id = xid / 8, .epoch = 99, .item = (uint32_t)(xid % 8), .total = 8,
		.attempt = attempt, .job = "ringtest", .task_id = "ringtest@-@0,1,2,3,4,5,6,7@-@READY@-@127.0.0.1@-@1",
		.item_param = "p", .job_param = "",
	};
	return frame_encode_submit(&f, fbuf, sizeof fbuf);
}

/* ---- consumer ------------------------------------------------------------------------------- */

static void consumer(int memfd, int efd, uint32_t idx, uint64_t spin_ns, uint64_t hold_xid)
{
	char e[256];
	seg_t *s;
	if (seg_attach(memfd, efd, &s, e, sizeof e) < 0 || ring_bind(s, idx) < 0) {
		fprintf(stderr, "consumer %u: %s\n", idx, e);
		_exit(3);
	}
	ring_set_spin_ns(s, spin_ns);
	frame_decoder_t *d = frame_decoder_new(seg_sub_frame_max(s));
	static unsigned char in[4096], out[4096];
	ring_heartbeat(s, WRK_IDLE);
	for (;;) {
		long n = ring_claim(s, in, sizeof in);
		if (n < 0) _exit(4);
		if (n == 0) {
			if (atomic_load(&seg_header(s)->shutdown)) _exit(0);
			ring_wait(s, 100000000);
			continue;
		}
		struct frame_submit f;
		struct frame_err fe;
		if (frame_decode_submit(d, in, (size_t)n, &f, &fe) < 0) {
			fprintf(stderr, "consumer %u: bad frame: %s\n", idx, fe.msg);
			_exit(5);
		}
		if (f.xid == hold_xid) {
			ring_heartbeat(s, WRK_BUSY);
			for (;;) pause();   /* the parent kills us here */
		}
		struct frame_complete c = {
			.xid = f.xid, .fire_id = f.fire_id, .epoch = f.epoch, .item = f.item, .attempt = f.attempt,
			.status = FRAME_ST_OK, .job = f.job, .task_id = f.task_id, .error = "",
		};
		long cn = frame_encode_complete(&c, out, sizeof out);
		while (ring_complete(s, out, (uint32_t)cn) < 0) {
			if (errno != EAGAIN) _exit(6);
			ring_wait_space(s, 10000000);
		}
	}
}

static void spawn(struct run *r, uint32_t idx, uint64_t hold_xid)
{
	struct shm_worker *w = seg_worker(r->s, idx);
	atomic_fetch_add(&w->gen, 1);
	atomic_store(&w->state, WRK_STARTING);
	pid_t p = tlib_fork();
	if (p == 0)
		consumer(seg_memfd(r->s), seg_eventfd(r->s), idx, r->spin_ns, hold_xid);
	if (p < 0) BAIL_OUT("fork: %s", strerror(errno));
	atomic_store(&w->pid, p);
	r->pid[idx] = p;
}

/* ---- supervisor side ------------------------------------------------------------------------- */

static void on_reclaim(void *arg, uint64_t pos, const void *frame, uint32_t len)
{
	struct run *r = arg;
	(void)pos;
	static unsigned char copy[4096];
	memcpy(copy, frame, len);   /* out of shared memory before decoding */
	struct frame_submit f;
	struct frame_err fe;
	if (frame_decode_submit(r->dec, copy, len, &f, &fe) < 0) {
		diag("reclaimed garbage: %s", fe.msg);
		r->bad++;
		return;
	}
	r->again[r->nagain++] = f.xid;
	r->reclaimed++;
}

static void kill_and_replace(struct run *r, uint32_t idx, uint64_t hold_xid)
{
	pid_t p = r->pid[idx];
	kill(p, SIGKILL);
	int st;
	while (waitpid(p, &st, 0) < 0 && errno == EINTR) {}
	tlib_untrack(p);
	struct shm_worker *w = seg_worker(r->s, idx);
	atomic_store(&w->state, WRK_DEAD);
	if (ring_reclaim(r->s, idx, atomic_load(&w->gen), on_reclaim, r) < 0)
		BAIL_OUT("ring_reclaim: %s", strerror(errno));
	r->kills++;
	spawn(r, idx, hold_xid);
}

static void check_children(void)
{
	int st;
	pid_t p = waitpid(-1, &st, WNOHANG);
	if (p > 0) {
		tlib_untrack(p);
		BAIL_OUT("consumer %d died on its own (status 0x%x)", (int)p, st);
	}
}

static void drain(struct run *r)
{
	static unsigned char buf[4096];
	struct ring_comp ci;
	long n;
	while ((n = ring_drain(r->s, buf, sizeof buf, &ci)) != 0) {
		struct frame_complete c;
		struct frame_err fe;
		if (n < 0 || frame_decode_complete(r->dec, buf, (size_t)n, &c, &fe) < 0 || c.xid >= r->total) {
			r->bad++;
			continue;
		}
		if (r->done[c.xid]++) r->dups++;
		else r->ndone++;
	}
}

static void publish_some(struct run *r)
{
	while (r->nagain) {
		long n = encode_item(r->again[r->nagain - 1], 2);
		if (ring_publish(r->s, fbuf, (uint32_t)n) < 0) break;
		r->nagain--;
	}
	while (!r->nagain && r->next < r->total) {
		long n = encode_item(r->next, 1);
		if (ring_publish(r->s, fbuf, (uint32_t)n) < 0) break;
		r->next++;
	}
	ring_flush(r->s);
}

static void wait_completion(struct run *r)
{
	if (ring_comp_idle(r->s)) return;
	struct pollfd pf = { seg_eventfd(r->s), POLLIN, 0 };
	if (poll(&pf, 1, 20) == 1) {
		uint64_t v;
		if (read(seg_eventfd(r->s), &v, sizeof v) < 0) { /* EAGAIN: already read */ }
	}
}

static void run_init(struct run *r, unsigned total, uint64_t spin_ns, uint32_t sub_slots)
{
	memset(r, 0, sizeof *r);
	char e[256];
	struct seg_params p = { .nworkers = NW, .sub_slots = sub_slots, .sub_slot_size = 512, .comp_slots = 16 };
	if (seg_create(&p, &r->s, e, sizeof e) < 0) BAIL_OUT("seg_create: %s", e);
	r->dec = frame_decoder_new(FRAME_MAX_LEN);
	r->total = total;
	r->done = calloc(total, 1);
	r->again = calloc(total, sizeof *r->again);
	r->spin_ns = spin_ns;
}

static void run_finish(struct run *r)
{
	atomic_store(&seg_header(r->s)->shutdown, 1);
	ring_wake_all(r->s);
	for (int i = 0; i < NW; i++) {
		int st;
		while (waitpid(r->pid[i], &st, 0) < 0 && errno == EINTR) {}
		tlib_untrack(r->pid[i]);
	}
	free(r->done);
	free(r->again);
	frame_decoder_free(r->dec);
	seg_close(r->s);
}

static unsigned missing(const struct run *r)
{
	unsigned m = 0;
	for (unsigned i = 0; i < r->total; i++) m += r->done[i] == 0;
	return m;
}

/* ---- the cases ------------------------------------------------------------------------------ */

static void test_busy(void)
{
	struct run r;
	run_init(&r, 200000, 20000, 256);
	for (uint32_t i = 0; i < NW; i++) spawn(&r, i, NO_HOLD);
	while (r.ndone < r.total) {
		publish_some(&r);
		drain(&r);
		if (r.ndone < r.total) wait_completion(&r);
		check_children();
	}
	is_int(r.ndone, 200000, "busy: 200000 frames completed by %d consumers", NW);
	is_int(r.dups + r.bad + missing(&r), 0, "busy: each exactly once (dups %u, bad %u)", r.dups, r.bad);
	uint64_t wakes = atomic_load(&seg_header(r.s)->sub_wakes);
	ok(wakes < r.total / 20, "busy: %llu wake syscalls for %u frames (no wake per frame)",
	   (unsigned long long)wakes, r.total);
	unsigned per[NW], used = 0;
	for (int i = 0; i < NW; i++) {
		per[i] = atomic_load(&seg_worker(r.s, (uint32_t)i)->items);
		used += per[i] > 0;
	}
	note("items per consumer: %u %u %u %u", per[0], per[1], per[2], per[3]);
	ok(used >= 2, "busy: work spread over consumers (%u used)", used);
	run_finish(&r);
}

static void test_sleeping(void)
{
	struct run r;
	run_init(&r, 3000, 0, 64);   /* consumers never spin: every wait is a futex sleep */
	for (uint32_t i = 0; i < NW; i++) spawn(&r, i, NO_HOLD);
	unsigned bursts = 0;
	while (r.ndone < r.total) {
		/* bursts of 10 with a pause, so the consumers go to sleep between them */
		unsigned target = r.next + 10 < r.total ? r.next + 10 : r.total;
		while (r.next < target) {
			long n = encode_item(r.next, 1);
			if (ring_publish(r.s, fbuf, (uint32_t)n) < 0) break;
			r.next++;
		}
		ring_flush(r.s);
		bursts++;
		uint64_t end = tlib_now_ms() + 50;
		while (r.ndone < r.next && tlib_now_ms() < end) {
			drain(&r);
			wait_completion(&r);
		}
		struct timespec ts = { 0, 300000 };
		nanosleep(&ts, NULL);
		check_children();
	}
	is_int(r.dups + r.bad + missing(&r), 0, "sleeping: 3000 frames each exactly once");
	uint64_t wakes = atomic_load(&seg_header(r.s)->sub_wakes);
	ok(wakes > 0 && wakes <= bursts, "sleeping: consumers slept and were woken (%llu wakes, %u bursts)",
	   (unsigned long long)wakes, bursts);
	run_finish(&r);
}

static int is_busy_holding(void *arg)
{
	struct shm_worker *w = arg;
	return atomic_load(&w->state) == WRK_BUSY && atomic_load(&w->held_pos) != 0;
}

static void test_kill_holder(void)
{
	struct run r;
	run_init(&r, 2000, 20000, 64);
	spawn(&r, 0, 500);   /* consumer 0 stops dead on xid 500 */
	for (uint32_t i = 1; i < NW; i++) spawn(&r, i, NO_HOLD);
	/* route xid 500 to consumer 0: only it runs until it holds it */
	for (uint32_t i = 1; i < NW; i++) kill(r.pid[i], SIGSTOP);
	uint64_t end = tlib_now_ms() + 10000;
	while (!is_busy_holding(seg_worker(r.s, 0)) && tlib_now_ms() < end) {
		publish_some(&r);
		drain(&r);
		wait_completion(&r);
	}
	ok(is_busy_holding(seg_worker(r.s, 0)), "consumer 0 holds xid 500");
	for (uint32_t i = 1; i < NW; i++) kill(r.pid[i], SIGCONT);
	unsigned before = r.reclaimed;
	kill_and_replace(&r, 0, NO_HOLD);
	is_int(r.reclaimed - before, 1, "SIGKILL while holding: exactly one item reclaimed");
	ok(r.nagain == 1 && r.again[0] == 500, "  and it is xid 500");
	while (r.ndone < r.total) {
		publish_some(&r);
		drain(&r);
		if (r.ndone < r.total) wait_completion(&r);
		check_children();
	}
	is_int(r.dups + r.bad + missing(&r), 0, "after reclaim every frame completed exactly once");
	is_int(r.done[500], 1, "xid 500 completed once, by another consumer");
	run_finish(&r);
}

static void test_random_kills(void)
{
	struct run r;
	run_init(&r, 60000, 20000, 64);
	for (uint32_t i = 0; i < NW; i++) spawn(&r, i, NO_HOLD);
	srand(12345);
	unsigned next_kill = 500;
	while (r.ndone < r.total) {
		publish_some(&r);
		drain(&r);
		if (r.ndone >= next_kill && r.kills < 60) {
			/* let the victim run a random few microseconds past this point */
			struct timespec ts = { 0, (long)(rand() % 50) * 1000 };
			nanosleep(&ts, NULL);
			kill_and_replace(&r, (uint32_t)(rand() % NW), NO_HOLD);
			next_kill += 800 + (unsigned)(rand() % 400);
		}
		if (r.ndone < r.total) wait_completion(&r);
		check_children();
	}
	note("%u kills, %u items reclaimed and run again", r.kills, r.reclaimed);
	ok(r.kills >= 50, "random: %u consumers SIGKILLed mid-stream", r.kills);
	is_int(r.dups, 0, "random: no frame completed twice");
	is_int(missing(&r), 0, "random: no frame lost");
	is_int(r.bad, 0, "random: no garbage drained or reclaimed");
	run_finish(&r);
}

int main(void)
{
	tlib_init(120);
	plan(15);
	test_busy();
	test_sleeping();
	test_kill_holder();
	test_random_kills();
	return done_testing();
}
