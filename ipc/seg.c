/* ipc/seg.c: create, check and attach shared-memory segments. */
#include "ipc/errf.h"
#include "ipc/seg.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc/seg_priv.h"
#include "ipc/wait.h"

static int is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

static uint32_t round_pow2(uint32_t v)
{
	uint32_t r = 1;
	while (r < v && r < (1u << 31)) r <<= 1;
	return r;
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) & ~(a - 1); }

/* ---- geometry check (pure) ------------------------------------------------------------- */

int seg_check(const void *buf, size_t len, char *err, size_t errlen)
{
	const struct shm_header *h = buf;

	if (len < SHM_HDR_SIZE) {
		ejob_errf(err, errlen, "truncated: %zu bytes is smaller than a segment header (%u)", len, SHM_HDR_SIZE);
		return -1;
	}
	if (h->magic != SHM_MAGIC) {
		ejob_errf(err, errlen, "not an ejob segment (magic 0x%016" PRIx64 ")", h->magic);
		return -1;
	}
	if (h->version != SHM_VERSION) {
		ejob_errf(err, errlen, "segment layout version %" PRIu32 ", this build reads version %u: "
		        "use binaries from the same ejob release as the supervisor", h->version, SHM_VERSION);
		return -1;
	}
	if (h->header_size != SHM_HDR_SIZE || h->worker_size != sizeof(struct shm_worker)) {
		ejob_errf(err, errlen, "header size %" PRIu32 " / worker size %" PRIu32 ", expected %u / %zu",
		        h->header_size, h->worker_size, SHM_HDR_SIZE, sizeof(struct shm_worker));
		return -1;
	}
	if (h->total_size != len) {
		ejob_errf(err, errlen, "%s: header says %" PRIu64 " bytes, the segment has %zu",
		        h->total_size > len ? "truncated" : "size mismatch", h->total_size, len);
		return -1;
	}
	if (h->nworkers < 1 || h->nworkers > SHM_MAX_WORKERS) {
		ejob_errf(err, errlen, "worker count %" PRIu32 " out of range 1..%u", h->nworkers, SHM_MAX_WORKERS);
		return -1;
	}
	if (!is_pow2(h->sub_slots) || h->sub_slots > SEG_MAX_SLOTS || !is_pow2(h->comp_slots) ||
	    h->comp_slots > SEG_MAX_SLOTS) {
		ejob_errf(err, errlen, "ring slot counts %" PRIu32 "/%" PRIu32 " must be powers of two up to %u",
		        h->sub_slots, h->comp_slots, SEG_MAX_SLOTS);
		return -1;
	}
	if (!is_pow2(h->sub_slot_size) || h->sub_slot_size < SEG_MIN_SLOT || h->sub_slot_size > SEG_MAX_SLOT ||
	    !is_pow2(h->comp_slot_size) || h->comp_slot_size < SEG_MIN_SLOT || h->comp_slot_size > SEG_MAX_SLOT) {
		ejob_errf(err, errlen, "slot sizes %" PRIu32 "/%" PRIu32 " must be powers of two in %u..%u",
		        h->sub_slot_size, h->comp_slot_size, SEG_MIN_SLOT, SEG_MAX_SLOT);
		return -1;
	}
	/* regions in order, aligned, not overlapping, inside the segment (all products < 2^52) */
	uint64_t workers_end = h->workers_off + (uint64_t)h->nworkers * sizeof(struct shm_worker);
	uint64_t held_end = h->held_off + (uint64_t)h->nworkers * h->sub_slot_size;
	uint64_t sub_end = h->sub_off + (uint64_t)h->sub_slots * h->sub_slot_size;
	uint64_t comp_end = h->comp_off + (uint64_t)h->comp_slots * h->comp_slot_size;
	if (h->workers_off < SHM_HDR_SIZE || h->workers_off % SHM_LINE || h->held_off % SHM_LINE ||
	    h->sub_off % SHM_LINE || h->comp_off % SHM_LINE || h->held_off < workers_end ||
	    h->sub_off < held_end || h->comp_off < sub_end || comp_end > h->total_size ||
	    h->workers_off > SEG_MAX_SIZE || h->held_off > SEG_MAX_SIZE || h->sub_off > SEG_MAX_SIZE ||
	    h->comp_off > SEG_MAX_SIZE) {
		ejob_errf(err, errlen, "corrupt geometry: regions at %" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64
		        " do not fit in order in %" PRIu64 " bytes",
		        h->workers_off, h->held_off, h->sub_off, h->comp_off, h->total_size);
		return -1;
	}
	return 0;
}

const struct shm_slot *seg_slot_at(const void *base, int comp, uint32_t index)
{
	const struct shm_header *h = base;
	uint64_t off = comp ? h->comp_off + (uint64_t)(index & (h->comp_slots - 1)) * h->comp_slot_size
	                    : h->sub_off + (uint64_t)(index & (h->sub_slots - 1)) * h->sub_slot_size;
	return (const struct shm_slot *)((const unsigned char *)base + off);
}

/* ---- handles ------------------------------------------------------------------------------ */

static void fill_handle(struct seg *s)
{
	struct shm_header *h = s->hdr;
	s->workers = (struct shm_worker *)(s->base + h->workers_off);
	s->held = s->base + h->held_off;
	s->sub = s->base + h->sub_off;
	s->comp = s->base + h->comp_off;
	s->nworkers = h->nworkers;
	s->sub_slots = h->sub_slots;
	s->sub_mask = h->sub_slots - 1;
	s->sub_slot_size = h->sub_slot_size;
	s->sub_data = h->sub_slot_size - SHM_SLOT_HDR;
	s->comp_slots = h->comp_slots;
	s->comp_mask = h->comp_slots - 1;
	s->comp_slot_size = h->comp_slot_size;
	s->comp_data = h->comp_slot_size - SHM_SLOT_HDR;
	s->spin_ns = 20000;
}

int seg_create(const struct seg_params *p, seg_t **out, char *err, size_t errlen)
{
	uint32_t n = p->nworkers;
	if (n < 1 || n > SHM_MAX_WORKERS) {
		ejob_errf(err, errlen, "workers: %" PRIu32 " out of range 1..%u", n, SHM_MAX_WORKERS);
		errno = EINVAL;
		return -1;
	}
	uint32_t sub_slots = round_pow2(p->sub_slots ? p->sub_slots : (n * 8 > 64 ? n * 8 : 64));
	uint32_t comp_slots = round_pow2(p->comp_slots ? p->comp_slots : (n * 4 > 64 ? n * 4 : 64));
	uint32_t sub_size = p->sub_slot_size ? p->sub_slot_size : SEG_DEFAULT_SLOT;
	uint32_t comp_size = p->comp_slot_size ? p->comp_slot_size : sub_size;
	if (sub_slots < 2 || sub_slots > SEG_MAX_SLOTS || comp_slots < 2 || comp_slots > SEG_MAX_SLOTS) {
		ejob_errf(err, errlen, "ring slots: %" PRIu32 "/%" PRIu32 " out of range 2..%u", sub_slots, comp_slots,
		        SEG_MAX_SLOTS);
		errno = EINVAL;
		return -1;
	}
	if (!is_pow2(sub_size) || sub_size < SEG_MIN_SLOT || sub_size > SEG_MAX_SLOT || !is_pow2(comp_size) ||
	    comp_size < SEG_MIN_SLOT || comp_size > SEG_MAX_SLOT) {
		ejob_errf(err, errlen, "slot size: %" PRIu32 "/%" PRIu32 " must be a power of two in %u..%u", sub_size,
		        comp_size, SEG_MIN_SLOT, SEG_MAX_SLOT);
		errno = EINVAL;
		return -1;
	}
	uint64_t workers_off = SHM_HDR_SIZE;
	uint64_t held_off = align_up(workers_off + (uint64_t)n * sizeof(struct shm_worker), 4096);
	uint64_t sub_off = align_up(held_off + (uint64_t)n * sub_size, 4096);
	uint64_t comp_off = align_up(sub_off + (uint64_t)sub_slots * sub_size, 4096);
	uint64_t total = align_up(comp_off + (uint64_t)comp_slots * comp_size, 4096);
	if (total > SEG_MAX_SIZE) {
		ejob_errf(err, errlen, "segment of %" PRIu64 " bytes exceeds %llu: fewer workers, slots or smaller slots",
		        total, SEG_MAX_SIZE);
		errno = EINVAL;
		return -1;
	}

	char name[64];
	snprintf(name, sizeof name, SEG_MEMFD_PREFIX "%.31s", p->name ? p->name : "pool");
	struct seg *s = calloc(1, sizeof *s);
	if (!s) {
		ejob_errf(err, errlen, "out of memory");
		return -1;
	}
	s->fd = s->efd = -1;
	s->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->fd < 0) {
		ejob_errf(err, errlen, "memfd_create(%s) failed: %s", name, strerror(errno));
		goto fail;
	}
	if (fchmod(s->fd, 0600) < 0 || ftruncate(s->fd, (off_t)total) < 0) {
		ejob_errf(err, errlen, "sizing segment to %" PRIu64 " bytes failed: %s", total, strerror(errno));
		goto fail;
	}
	if (fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		ejob_errf(err, errlen, "sealing segment failed: %s", strerror(errno));
		goto fail;
	}
	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->efd < 0) {
		ejob_errf(err, errlen, "eventfd failed: %s", strerror(errno));
		goto fail;
	}
	s->base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		ejob_errf(err, errlen, "mmap of %" PRIu64 " bytes failed: %s", total, strerror(errno));
		goto fail;
	}
	s->size = total;
	s->owns_fds = 1;

	/* The memfd is zero-filled: only non-zero fields need writing. */
	struct shm_header *h = s->hdr = (struct shm_header *)s->base;
	h->version = SHM_VERSION;
	h->header_size = SHM_HDR_SIZE;
	h->total_size = total;
	h->nworkers = n;
	h->worker_size = sizeof(struct shm_worker);
	h->workers_off = workers_off;
	h->held_off = held_off;
	h->sub_off = sub_off;
	h->sub_slots = sub_slots;
	h->sub_slot_size = sub_size;
	h->comp_off = comp_off;
	h->comp_slots = comp_slots;
	h->comp_slot_size = comp_size;
	h->owner_pid = getpid();
	h->owner_uid = getuid();
	h->created_ns = wait_realtime_ns();
	snprintf(h->name, sizeof h->name, "%s", p->name ? p->name : "pool");
	fill_handle(s);
	for (uint32_t i = 0; i < sub_slots; i++)
		atomic_store_explicit(&seg_sub_slot(s, i)->ctl, SLOT_CTL(SLOT_FREE, 0, 0, i), memory_order_relaxed);
	for (uint32_t i = 0; i < comp_slots; i++)
		atomic_store_explicit(&seg_comp_slot(s, i)->ctl, SLOT_CTL(SLOT_FREE, 0, 0, i), memory_order_relaxed);
	/* magic last: a reader that sees it sees a complete header */
	atomic_thread_fence(memory_order_release);
	h->magic = SHM_MAGIC;
	*out = s;
	return 0;
fail:
	{
		int e = errno;
		seg_close(s);
		errno = e;
	}
	return -1;
}

int seg_attach(int memfd, int efd, seg_t **out, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(memfd, &st) < 0) {
		ejob_errf(err, errlen, "segment fd %d: %s", memfd, strerror(errno));
		return -1;
	}
	int seals = fcntl(memfd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
		ejob_errf(err, errlen, "segment fd %d is not a memfd sealed against shrinking: "
		        "attach only to segments a supervisor created", memfd);
		errno = EINVAL;
		return -1;
	}
	if (st.st_size < (off_t)SHM_HDR_SIZE || (uint64_t)st.st_size > SEG_MAX_SIZE) {
		ejob_errf(err, errlen, "segment fd %d: size %lld is not a segment's", memfd, (long long)st.st_size);
		errno = EINVAL;
		return -1;
	}
	struct seg *s = calloc(1, sizeof *s);
	if (!s) {
		ejob_errf(err, errlen, "out of memory");
		return -1;
	}
	s->fd = memfd;
	s->efd = efd;
	s->size = (size_t)st.st_size;
	s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (s->base == MAP_FAILED) {
		int e = errno;
		ejob_errf(err, errlen, "mmap of segment fd %d failed: %s", memfd, strerror(e));
		free(s);
		errno = e;
		return -1;
	}
	s->hdr = (struct shm_header *)s->base;
	char why[200];
	if (seg_check(s->base, s->size, why, sizeof why) < 0) {
		ejob_errf(err, errlen, "segment fd %d: %s", memfd, why);
		munmap(s->base, s->size);
		free(s);
		errno = EINVAL;
		return -1;
	}
	atomic_thread_fence(memory_order_acquire);
	fill_handle(s);
	s->sub_head = atomic_load_explicit(&s->hdr->sub_head, memory_order_relaxed);
	s->comp_tail = atomic_load_explicit(&s->hdr->comp_tail, memory_order_relaxed);
	*out = s;
	return 0;
}

void seg_close(seg_t *s)
{
	if (!s) return;
	int e = errno;
	if (s->base) munmap(s->base, s->size);
	if (s->owns_fds) {
		if (s->fd >= 0) close(s->fd);
		if (s->efd >= 0) close(s->efd);
	}
	free(s);
	errno = e;
}

void seg_own_fds(seg_t *s) { s->owns_fds = 1; }
int seg_memfd(const seg_t *s) { return s->fd; }
int seg_eventfd(const seg_t *s) { return s->efd; }
size_t seg_size(const seg_t *s) { return s->size; }
struct shm_header *seg_header(const seg_t *s) { return s->hdr; }
uint32_t seg_nworkers(const seg_t *s) { return s->nworkers; }
uint32_t seg_sub_frame_max(const seg_t *s) { return s->sub_data; }
uint32_t seg_comp_frame_max(const seg_t *s) { return s->comp_data; }

struct shm_worker *seg_worker(const seg_t *s, uint32_t i)
{
	return i < s->nworkers ? &s->workers[i] : NULL;
}
