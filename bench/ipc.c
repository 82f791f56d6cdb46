/* bench/ipc.c: the shared-memory rings against their alternatives, in one run, one machine.
 *
 * One-way hand-off latency is measured the same way for every transport: the sender stamps
 * t0 (CLOCK_MONOTONIC) and sends; the receiver stamps t1 as soon as it holds the frame;
 * the sample is t1 - t0. The receiver replies through a raw channel of the same kind (a
 * spinning cache line, or a futex), so only the path under test differs between rows.
 *
 *   raw cache line    a 64-bit word in shared memory, spun on     (the floor for spinning)
 *   raw futex         a word + FUTEX_WAKE / FUTEX_WAIT            (the floor for sleeping)
 *   ring, spinning    ring_publish  -> ring_claim in a spin loop
 *   ring, sleeping    ring_publish + ring_flush -> ring_wait (no spin) + ring_claim
 *   pipe / unix socket   write() of the frame -> blocking read()
 *
 * Throughput: one producer, one consumer on the other core, 200-byte frames. For the ring
 * every frame makes the whole item trip (publish, claim, complete, drain), as in production.
 */
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/frame.h"
#include "ipc/json.h"
#include "ipc/ring.h"
#include "ipc/seg.h"
#include "ipc/wait.h"

#define FRAME_BYTES 200

struct shared {
	_Alignas(64) _Atomic uint64_t ping;     /* sender -> receiver (raw line / futex word) */
	_Alignas(64) _Atomic uint64_t pong;     /* receiver -> sender */
	_Alignas(64) _Atomic uint32_t ping_f;   /* futex words */
	_Alignas(64) _Atomic uint32_t pong_f;
	_Alignas(64) _Atomic uint64_t t0;       /* sender's stamp */
	_Alignas(64) _Atomic int ready;
	uint64_t samples[];                      /* receiver writes t1 - t0 here */
};

static struct shared *sh;
static int ncpu;

/* Spin until cond; if the other side seems descheduled (a busy machine), yield now and then so
 * the run ends instead of livelocking. On a quiet machine the yield never triggers. */
#define SPIN_UNTIL(cond) do { \
	unsigned spin_k_ = 0; \
	while (!(cond)) { wait_cpu_relax(); if (++spin_k_ > 200000) { sched_yield(); spin_k_ = 0; } } \
} while (0)

static void pin(int cpu)
{
	if (ncpu < 2) return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu % ncpu, &set);
	sched_setaffinity(0, sizeof set, &set);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct pct { double p50, p99; };

static struct pct percentiles(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	struct pct p = { (double)v[n / 2], (double)v[n * 99 / 100] };
	return p;
}

static pid_t child(void (*fn)(void *), void *arg)
{
	pid_t p = fork();
	if (p == 0) {
		pin(1);
		fn(arg);
		_exit(0);
	}
	return p;
}

static void reap(pid_t p)
{
	int st;
	while (waitpid(p, &st, 0) < 0 && errno == EINTR) {}
}

/* A realistic submission frame of exactly FRAME_BYTES bytes. */
static size_t make_frame(unsigned char *buf, uint64_t xid)
{
	struct frame_submit f = {
		.xid = xid, .fire_id = 1234, .epoch = 0x100000abcULL, .deadline_ms = 0, .item = 3, .total = 8,
		.attempt = 1, .kind = FRAME_KIND_NATIVE, .job = "resize", .task_id = "resize@-@3@-@READY@-@10.0.0.7@-@4242",
		.item_param = "bucket-3", .job_param = "", .lib = "libresize.so", .sym = "resize_item",
	};
	/* pad the job parameter so the frame is FRAME_BYTES long whatever the xid */
	char pad[128];
	for (size_t want = 0; want < sizeof pad - 1; want++) {
		memset(pad, 'x', want);
		pad[want] = '\0';
		f.job_param = pad;
		f.xid = UINT64_MAX;   /* widest encoding, so the length does not depend on xid */
		long n = frame_encode_submit(&f, buf, 4096);
		if (n == FRAME_BYTES) {
			f.xid = xid | 1ULL << 63;   /* still the widest encoding */
			unsigned char tmp[4096];
			n = frame_encode_submit(&f, tmp, sizeof tmp);
			memcpy(buf, tmp, (size_t)n);
			return (size_t)n;
		}
	}
	return 0;
}

/* ---- spinning one-way ------------------------------------------------------------------------ */

static size_t N_SPIN = 200000;

static void raw_line_rx(void *arg)
{
	(void)arg;
	atomic_store(&sh->ready, 1);
	for (uint64_t i = 1; i <= N_SPIN; i++) {
		SPIN_UNTIL(atomic_load_explicit(&sh->ping, memory_order_acquire) == i);
		uint64_t t1 = wait_now_ns();
		sh->samples[i - 1] = t1 - atomic_load_explicit(&sh->t0, memory_order_relaxed);
		atomic_store_explicit(&sh->pong, i, memory_order_release);
	}
}

static struct pct raw_line(void)
{
	atomic_store(&sh->ping, 0);
	atomic_store(&sh->pong, 0);
	atomic_store(&sh->ready, 0);
	pid_t p = child(raw_line_rx, NULL);
	SPIN_UNTIL(atomic_load(&sh->ready));
	for (uint64_t i = 1; i <= N_SPIN; i++) {
		atomic_store_explicit(&sh->t0, wait_now_ns(), memory_order_relaxed);
		atomic_store_explicit(&sh->ping, i, memory_order_release);
		SPIN_UNTIL(atomic_load_explicit(&sh->pong, memory_order_acquire) == i);
	}
	reap(p);
	return percentiles(sh->samples, N_SPIN);
}

/* round trip on raw lines, halved: the classic ping-pong figure */
static void raw_rtt_rx(void *arg)
{
	(void)arg;
	atomic_store(&sh->ready, 1);
	for (uint64_t i = 1; i <= N_SPIN; i++) {
		SPIN_UNTIL(atomic_load_explicit(&sh->ping, memory_order_acquire) == i);
		atomic_store_explicit(&sh->pong, i, memory_order_release);
	}
}

static struct pct raw_rtt(void)
{
	atomic_store(&sh->ping, 0);
	atomic_store(&sh->pong, 0);
	atomic_store(&sh->ready, 0);
	pid_t p = child(raw_rtt_rx, NULL);
	SPIN_UNTIL(atomic_load(&sh->ready));
	for (uint64_t i = 1; i <= N_SPIN; i++) {
		uint64_t t0 = wait_now_ns();
		atomic_store_explicit(&sh->ping, i, memory_order_release);
		SPIN_UNTIL(atomic_load_explicit(&sh->pong, memory_order_acquire) == i);
		sh->samples[i - 1] = (wait_now_ns() - t0) / 2;
	}
	reap(p);
	return percentiles(sh->samples, N_SPIN);
}

static seg_t *seg;

static void ring_spin_rx(void *arg)
{
	(void)arg;
	char e[200];
	seg_t *s;
	if (seg_attach(seg_memfd(seg), seg_eventfd(seg), &s, e, sizeof e) < 0 || ring_bind(s, 0) < 0) _exit(3);
	static unsigned char buf[4096];
	unsigned char done[256];
	struct frame_complete c = { .attempt = 1, .job = "resize", .task_id = "t", .error = "" };
	long cn = frame_encode_complete(&c, done, sizeof done);
	if (cn < 0) { perror("encode completion"); _exit(3); }
	atomic_store(&sh->ready, 1);
	for (uint64_t i = 1; i <= N_SPIN; i++) {
		SPIN_UNTIL(ring_claim(s, buf, sizeof buf) > 0);
		uint64_t t1 = wait_now_ns();
		sh->samples[i - 1] = t1 - atomic_load_explicit(&sh->t0, memory_order_relaxed);
		ring_complete(s, done, (uint32_t)cn);
		atomic_store_explicit(&sh->pong, i, memory_order_release);
	}
	seg_close(s);
}

static struct pct ring_spin(void)
{
	unsigned char f[4096], out[4096];
	size_t fl = make_frame(f, 1);
	struct ring_comp ci;
	atomic_store(&sh->pong, 0);
	atomic_store(&sh->ready, 0);
	pid_t p = child(ring_spin_rx, NULL);
	SPIN_UNTIL(atomic_load(&sh->ready));
	for (uint64_t i = 1; i <= N_SPIN; i++) {
		atomic_store_explicit(&sh->t0, wait_now_ns(), memory_order_relaxed);
		ring_publish(seg, f, (uint32_t)fl);
		ring_flush(seg);
		SPIN_UNTIL(atomic_load_explicit(&sh->pong, memory_order_acquire) == i);
		while (ring_drain(seg, out, sizeof out, &ci) > 0) {}
	}
	reap(p);
	while (ring_drain(seg, out, sizeof out, &ci) > 0) {}
	return percentiles(sh->samples, N_SPIN);
}

/* ---- sleeping one-way ------------------------------------------------------------------------ */

static size_t N_SLEEP = 20000;

/* the reply path of every sleeping test: a futex the sender sleeps on */
static void reply_futex(uint64_t i)
{
	atomic_store_explicit(&sh->pong, i, memory_order_release);
	atomic_fetch_add(&sh->pong_f, 1);
	wait_wake(&sh->pong_f, 1);
}

static void wait_reply(uint64_t i)
{
	for (;;) {
		uint32_t v = atomic_load(&sh->pong_f);
		if (atomic_load_explicit(&sh->pong, memory_order_acquire) == i) return;
		wait_futex(&sh->pong_f, v, -1);
	}
}

static void raw_futex_rx(void *arg)
{
	(void)arg;
	atomic_store(&sh->ready, 1);
	for (uint64_t i = 1; i <= N_SLEEP; i++) {
		for (;;) {
			uint32_t v = atomic_load(&sh->ping_f);
			if (atomic_load_explicit(&sh->ping, memory_order_acquire) == i) break;
			wait_futex(&sh->ping_f, v, -1);
		}
		sh->samples[i - 1] = wait_now_ns() - atomic_load_explicit(&sh->t0, memory_order_relaxed);
		reply_futex(i);
	}
}

static struct pct raw_futex(void)
{
	atomic_store(&sh->ping, 0);
	atomic_store(&sh->pong, 0);
	atomic_store(&sh->ready, 0);
	pid_t p = child(raw_futex_rx, NULL);
	SPIN_UNTIL(atomic_load(&sh->ready));
	usleep(1000);
	for (uint64_t i = 1; i <= N_SLEEP; i++) {
		atomic_store_explicit(&sh->t0, wait_now_ns(), memory_order_relaxed);
		atomic_store_explicit(&sh->ping, i, memory_order_release);
		atomic_fetch_add(&sh->ping_f, 1);
		wait_wake(&sh->ping_f, 1);
		wait_reply(i);
	}
	reap(p);
	return percentiles(sh->samples, N_SLEEP);
}

static void ring_sleep_rx(void *arg)
{
	(void)arg;
	char e[200];
	seg_t *s;
	if (seg_attach(seg_memfd(seg), seg_eventfd(seg), &s, e, sizeof e) < 0 || ring_bind(s, 0) < 0) _exit(3);
	ring_set_spin_ns(s, 0);
	static unsigned char buf[4096];
	unsigned char done[256];
	struct frame_complete c = { .attempt = 1, .job = "resize", .task_id = "t", .error = "" };
	long cn = frame_encode_complete(&c, done, sizeof done);
	if (cn < 0) { perror("encode completion"); _exit(3); }
	atomic_store(&sh->ready, 1);
	for (uint64_t i = 1; i <= N_SLEEP; i++) {
		while (ring_claim(s, buf, sizeof buf) <= 0) ring_wait(s, -1);
		sh->samples[i - 1] = wait_now_ns() - atomic_load_explicit(&sh->t0, memory_order_relaxed);
		ring_complete(s, done, (uint32_t)cn);
		reply_futex(i);
	}
	seg_close(s);
}

static struct pct ring_sleep(uint64_t *wakes)
{
	unsigned char f[4096], out[4096];
	size_t fl = make_frame(f, 1);
	struct ring_comp ci;
	atomic_store(&sh->pong, 0);
	atomic_store(&sh->ready, 0);
	uint64_t w0 = atomic_load(&seg_header(seg)->sub_wakes);
	pid_t p = child(ring_sleep_rx, NULL);
	SPIN_UNTIL(atomic_load(&sh->ready));
	usleep(1000);
	for (uint64_t i = 1; i <= N_SLEEP; i++) {
		atomic_store_explicit(&sh->t0, wait_now_ns(), memory_order_relaxed);
		ring_publish(seg, f, (uint32_t)fl);
		ring_flush(seg);
		wait_reply(i);
		while (ring_drain(seg, out, sizeof out, &ci) > 0) {}
	}
	reap(p);
	*wakes = atomic_load(&seg_header(seg)->sub_wakes) - w0;
	return percentiles(sh->samples, N_SLEEP);
}

/* pipe or unix socket: blocking read in the receiver */
static int chan[2];

static void fd_rx(void *arg)
{
	(void)arg;
	unsigned char buf[FRAME_BYTES];
	close(chan[1]);
	atomic_store(&sh->ready, 1);
	for (uint64_t i = 1; i <= N_SLEEP; i++) {
		size_t got = 0;
		while (got < FRAME_BYTES) {
			ssize_t r = read(chan[0], buf + got, FRAME_BYTES - got);
			if (r <= 0) _exit(3);
			got += (size_t)r;
		}
		sh->samples[i - 1] = wait_now_ns() - atomic_load_explicit(&sh->t0, memory_order_relaxed);
		reply_futex(i);
	}
}

static struct pct fd_sleep(int sock)
{
	if (sock ? socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) : pipe2(chan, O_CLOEXEC)) {
		perror("channel");
		exit(1);
	}
	unsigned char f[4096];
	make_frame(f, 1);
	atomic_store(&sh->pong, 0);
	atomic_store(&sh->ready, 0);
	pid_t p = child(fd_rx, NULL);
	close(chan[0]);
	SPIN_UNTIL(atomic_load(&sh->ready));
	usleep(1000);
	for (uint64_t i = 1; i <= N_SLEEP; i++) {
		atomic_store_explicit(&sh->t0, wait_now_ns(), memory_order_relaxed);
		if (write(chan[1], f, FRAME_BYTES) != FRAME_BYTES) exit(1);
		wait_reply(i);
	}
	close(chan[1]);
	reap(p);
	return percentiles(sh->samples, N_SLEEP);
}

/* ---- throughput ------------------------------------------------------------------------------ */

static uint64_t N_TPUT = 4000000;

static void ring_tput_rx(void *arg)
{
	(void)arg;
	char e[200];
	seg_t *s;
	if (seg_attach(seg_memfd(seg), seg_eventfd(seg), &s, e, sizeof e) < 0 || ring_bind(s, 0) < 0) _exit(3);
	static unsigned char buf[4096];
	unsigned char done[256];
	struct frame_complete c = { .attempt = 1, .job = "resize", .task_id = "t", .error = "" };
	long cn = frame_encode_complete(&c, done, sizeof done);
	if (cn < 0) { perror("encode completion"); _exit(3); }
	atomic_store(&sh->ready, 1);
	for (uint64_t i = 0; i < N_TPUT; i++) {
		while (ring_claim(s, buf, sizeof buf) <= 0) ring_wait(s, -1);
		SPIN_UNTIL(ring_complete(s, done, (uint32_t)cn) == 0);
	}
	seg_close(s);
}

static double ring_tput(uint64_t *sub_wakes, uint64_t *comp_wakes)
{
	unsigned char f[4096], out[4096];
	size_t fl = make_frame(f, 1);
	struct ring_comp ci;
	atomic_store(&sh->ready, 0);
	struct shm_header *h = seg_header(seg);
	uint64_t sw = atomic_load(&h->sub_wakes), cw = atomic_load(&h->comp_wakes);
	pid_t p = child(ring_tput_rx, NULL);
	SPIN_UNTIL(atomic_load(&sh->ready));
	uint64_t sent = 0, got = 0, t0 = wait_now_ns();
	while (got < N_TPUT) {
		unsigned batch = 0;
		while (sent < N_TPUT && batch < 64 && ring_publish(seg, f, (uint32_t)fl) == 0) { sent++; batch++; }
		ring_flush(seg);
		while (ring_drain(seg, out, sizeof out, &ci) > 0) got++;
	}
	uint64_t t1 = wait_now_ns();
	reap(p);
	*sub_wakes = atomic_load(&h->sub_wakes) - sw;
	*comp_wakes = atomic_load(&h->comp_wakes) - cw;
	return (double)N_TPUT / ((double)(t1 - t0) / 1e9);
}

/* The simplest ring there is: one producer, one consumer, head and tail on their own lines,
 * frames copied in and out, nothing else (no claim owner, no completion). The floor for moving
 * 200-byte frames between two cores on this machine. */
#define SPSC_SLOTS 1024
struct spsc {
	_Alignas(64) _Atomic uint64_t head;
	_Alignas(64) _Atomic uint64_t tail;
	_Alignas(64) unsigned char slot[SPSC_SLOTS][256];
};
static struct spsc *sp;

static void spsc_rx(void *arg)
{
	(void)arg;
	unsigned char buf[256];
	uint64_t tail = 0;
	atomic_store(&sh->ready, 1);
	while (tail < N_TPUT) {
		uint64_t head = atomic_load_explicit(&sp->head, memory_order_acquire);
		if (head == tail) { wait_cpu_relax(); continue; }
		while (tail < head) {
			memcpy(buf, sp->slot[tail % SPSC_SLOTS], FRAME_BYTES);
			tail++;
		}
		atomic_store_explicit(&sp->tail, tail, memory_order_release);
	}
}

static double spsc_tput(void)
{
	sp = mmap(NULL, sizeof *sp, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unsigned char f[4096];
	make_frame(f, 1);
	atomic_store(&sh->ready, 0);
	pid_t p = child(spsc_rx, NULL);
	SPIN_UNTIL(atomic_load(&sh->ready));
	uint64_t head = 0, t0 = wait_now_ns();
	while (head < N_TPUT) {
		uint64_t tail = atomic_load_explicit(&sp->tail, memory_order_acquire);
		uint64_t n = 0;
		while (head < N_TPUT && head - tail < SPSC_SLOTS && n < 64) {
			memcpy(sp->slot[head % SPSC_SLOTS], f, FRAME_BYTES);
			head++;
			n++;
		}
		if (n) atomic_store_explicit(&sp->head, head, memory_order_release);
		else wait_cpu_relax();
	}
	reap(p);
	double r = (double)N_TPUT / ((double)(wait_now_ns() - t0) / 1e9);
	munmap(sp, sizeof *sp);
	return r;
}

static uint64_t N_FD_TPUT = 400000;

static void fd_tput_rx(void *arg)
{
	(void)arg;
	unsigned char buf[FRAME_BYTES];
	close(chan[1]);
	atomic_store(&sh->ready, 1);
	for (uint64_t i = 0; i < N_FD_TPUT; i++) {
		size_t got = 0;
		while (got < FRAME_BYTES) {
			ssize_t r = read(chan[0], buf + got, FRAME_BYTES - got);
			if (r <= 0) _exit(3);
			got += (size_t)r;
		}
	}
}

static double fd_tput(int sock)
{
	if (sock ? socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) : pipe2(chan, O_CLOEXEC)) exit(1);
	unsigned char f[4096];
	make_frame(f, 1);
	atomic_store(&sh->ready, 0);
	pid_t p = child(fd_tput_rx, NULL);
	close(chan[0]);
	SPIN_UNTIL(atomic_load(&sh->ready));
	uint64_t t0 = wait_now_ns();
	for (uint64_t i = 0; i < N_FD_TPUT; i++)
		if (write(chan[1], f, FRAME_BYTES) != FRAME_BYTES) exit(1);
	close(chan[1]);
	reap(p);
	return (double)N_FD_TPUT / ((double)(wait_now_ns() - t0) / 1e9);
}

/* ---- codec ------------------------------------------------------------------------------------- */

static void codec(double *enc_ns, double *dec_ns, double *json_ns)
{
	unsigned char f[4096], out[4096];
	size_t fl = make_frame(f, 1);
	frame_decoder_t *d = frame_decoder_new(4096);
	struct frame_submit s;
	struct frame_err err;
	frame_decode_submit(d, f, fl, &s, &err);
	/* copy the strings: decoding again reuses the decoder's memory */
	char job[64], task[128], ip[64], jp[256], lib[64], sym[64];
	snprintf(job, sizeof job, "%s", s.job); snprintf(task, sizeof task, "%s", s.task_id);
	snprintf(ip, sizeof ip, "%s", s.item_param); snprintf(jp, sizeof jp, "%s", s.job_param);
	snprintf(lib, sizeof lib, "%s", s.lib); snprintf(sym, sizeof sym, "%s", s.sym);
	struct frame_submit src = s;
	src.job = job; src.task_id = task; src.item_param = ip; src.job_param = jp; src.lib = lib; src.sym = sym;
	const int N = 1000000;
	volatile long sink = 0;
	uint64_t t0 = wait_now_ns();
	for (int i = 0; i < N; i++) { src.xid = (uint64_t)i; sink += frame_encode_submit(&src, out, sizeof out); }
	uint64_t t1 = wait_now_ns();
	for (int i = 0; i < N; i++) sink += frame_decode_submit(d, f, fl, &s, &err);
	uint64_t t2 = wait_now_ns();
	/* the alternative: the sharding-context JSON ElasticJob builds for the same item */
	json_buf_t jb;
	json_init(&jb);
	for (int i = 0; i < N; i++) {
		jb.len = 0;
		json_raw(&jb, "{\"jobName\":"); json_cstr(&jb, job, JSON_GSON);
		json_raw(&jb, ",\"taskId\":"); json_cstr(&jb, task, JSON_GSON);
		json_raw(&jb, ",\"shardingTotalCount\":"); json_u64(&jb, 8);
		json_raw(&jb, ",\"jobParameter\":"); json_cstr(&jb, jp, JSON_GSON);
		json_raw(&jb, ",\"shardingItem\":"); json_u64(&jb, 3);
		json_raw(&jb, ",\"shardingParameter\":"); json_cstr(&jb, ip, JSON_GSON);
		json_raw(&jb, "}");
		sink += (long)jb.len;
	}
	uint64_t t3 = wait_now_ns();
	json_free(&jb);
	(void)sink;
	*enc_ns = (double)(t1 - t0) / N;
	*dec_ns = (double)(t2 - t1) / N;
	*json_ns = (double)(t3 - t2) / N;
	frame_decoder_free(d);
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--quick")) {
		N_SPIN = 20000; N_SLEEP = 2000; N_TPUT = 200000; N_FD_TPUT = 20000;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	size_t nsamp = N_SPIN > N_SLEEP ? N_SPIN : N_SLEEP;
	sh = mmap(NULL, sizeof *sh + nsamp * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) { perror("mmap"); return 1; }
	char e[200];
	struct seg_params p = { .nworkers = 1, .sub_slots = 1024, .sub_slot_size = 512, .comp_slots = 1024, .comp_slot_size = 256 };
	if (seg_create(&p, &seg, e, sizeof e) < 0) { fprintf(stderr, "%s\n", e); return 1; }
	atomic_store(&seg_worker(seg, 0)->gen, 1);
	pin(0);
	unsigned char f[4096];
	if (make_frame(f, 1) != FRAME_BYTES) { fprintf(stderr, "cannot build a %d-byte frame\n", FRAME_BYTES); return 1; }

	fprintf(stderr, "bench/ipc: %d CPUs; spinning...\n", ncpu);
	struct pct rtt = raw_rtt();
	struct pct rl = raw_line();
	struct pct rs = ring_spin();
	fprintf(stderr, "bench/ipc: sleeping...\n");
	struct pct rf = raw_futex();
	uint64_t sleep_wakes;
	struct pct rz = ring_sleep(&sleep_wakes);
	struct pct pp = fd_sleep(0);
	struct pct us = fd_sleep(1);
	fprintf(stderr, "bench/ipc: throughput...\n");
	uint64_t sw, cw;
	double rt = ring_tput(&sw, &cw);
	double pt = fd_tput(0), st = fd_tput(1);
	double spt = spsc_tput();
	double enc, dec, js;
	codec(&enc, &dec, &js);

	printf("| measure (%d-byte frames, 2 processes on 2 cores) | ejob | alternative | ratio | target |\n", FRAME_BYTES);
	printf("|---|---|---|---|---|\n");
	printf("| one-way hand-off, spinning, p50 / p99 | ring: %.0f / %.0f ns | raw cache line: %.0f / %.0f ns | %.2fx | <= 3x |\n",
	       rs.p50, rs.p99, rl.p50, rl.p99, rs.p50 / rl.p50);
	printf("| (raw cache-line ping-pong, RTT/2, p50 / p99) | | %.0f / %.0f ns | | |\n", rtt.p50, rtt.p99);
	printf("| one-way hand-off, sleeping, p50 / p99 | ring: %.1f / %.1f us | raw futex: %.1f / %.1f us | %.2fx | <= 1.25x |\n",
	       rz.p50 / 1e3, rz.p99 / 1e3, rf.p50 / 1e3, rf.p99 / 1e3, rz.p50 / rf.p50);
	printf("| one-way hand-off, sleeping, p50 / p99 | ring: %.1f / %.1f us | pipe: %.1f / %.1f us | %.2fx | |\n",
	       rz.p50 / 1e3, rz.p99 / 1e3, pp.p50 / 1e3, pp.p99 / 1e3, rz.p50 / pp.p50);
	printf("| one-way hand-off, sleeping, p50 / p99 | ring: %.1f / %.1f us | unix socket: %.1f / %.1f us | %.2fx | |\n",
	       rz.p50 / 1e3, rz.p99 / 1e3, us.p50 / 1e3, us.p99 / 1e3, rz.p50 / us.p50);
	printf("| throughput, frames/s (ring: whole item trip) | ring: %.2f M/s | pipe: %.2f M/s | %.1fx | >= 10 M/s |\n",
	       rt / 1e6, pt / 1e6, rt / pt);
	printf("| throughput, frames/s | ring: %.2f M/s | unix socket: %.2f M/s | %.1fx | |\n", rt / 1e6, st / 1e6, rt / st);
	printf("| throughput, frames/s | ring: %.2f M/s | bare SPSC ring, frames only (no claim, no completion): %.2f M/s | %.2fx | |\n",
	       rt / 1e6, spt / 1e6, rt / spt);
	printf("| wake syscalls per frame, busy consumer | %.5f (sub) + %.5f (comp) | pipe/socket: 2 (write + read) | | 0 |\n",
	       (double)sw / (double)N_TPUT, (double)cw / (double)N_TPUT);
	printf("| wake syscalls per frame, sleeping consumer | %.2f | raw futex: 1 | | |\n",
	       (double)sleep_wakes / (double)N_SLEEP);
	printf("| encode + decode one frame | %.0f + %.0f ns | sharding-context JSON, encode only: %.0f ns | %.2fx | |\n",
	       enc, dec, js, (enc + dec) / js);
	seg_close(seg);
	return 0;
}
