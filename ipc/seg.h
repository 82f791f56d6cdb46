/* ipc/seg.h: shared-memory segments (layout in ipc/shm.h, rings in ipc/ring.h).
 *
 * The supervisor creates one segment per worker pool (and one per external attachment): an
 * anonymous memfd, mode 0600, sealed against shrinking and growing (so no mapping can ever
 * SIGBUS), with an eventfd that workers write to wake the supervisor. Workers receive both fds
 * (at fixed numbers, or by SCM_RIGHTS) and attach. Only the owning uid (or root) can open the
 * memfd through /proc/PID/fd, which is how tools/shmdump finds it by supervisor pid.
 */
#ifndef EJOB_SEG_H
#define EJOB_SEG_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/shm.h"

typedef struct seg seg_t;

struct seg_params {
	uint32_t nworkers;        /* worker table entries, 1..SHM_MAX_WORKERS */
	uint32_t sub_slots;       /* 0 = default (max(64, 8 x nworkers)); rounded up to a power of two */
	uint32_t sub_slot_size;   /* 0 = SEG_DEFAULT_SLOT; power of two, SEG_MIN_SLOT..SEG_MAX_SLOT */
	uint32_t comp_slots;      /* 0 = default (max(64, 4 x nworkers)) */
	uint32_t comp_slot_size;  /* 0 = same as sub_slot_size */
	const char *name;         /* "pool", "attach:1234" (shown by shmdump; at most 31 bytes) */
};

#define SEG_DEFAULT_SLOT 4096u
#define SEG_MIN_SLOT     256u
#define SEG_MAX_SLOT     (1u << 20)
#define SEG_MAX_SLOTS    (1u << 16)
#define SEG_MAX_SIZE     (1ull << 30)
#define SEG_MEMFD_PREFIX "ejob:"    /* memfd names are "ejob:<name>" */

/* Create a segment and its eventfd (both CLOEXEC). The caller is its owner (the supervisor).
 * Returns 0, or -1 with errno and a message in err. */
int seg_create(const struct seg_params *p, seg_t **out, char *err, size_t errlen);

/* Attach to a segment created by seg_create: checks that memfd is a sealed memfd whose size,
 * magic, version and geometry are right; a mismatch fails with a message naming it and the
 * fix. efd may be -1 (then completions never wake the supervisor). The handle does not own
 * the fds (seg_close leaves them open) unless seg_own_fds() is called. */
int seg_attach(int memfd, int efd, seg_t **out, char *err, size_t errlen);

void seg_close(seg_t *s);            /* unmap; close the fds if the handle owns them */
void seg_own_fds(seg_t *s);          /* make seg_close close memfd and eventfd */

int seg_memfd(const seg_t *s);
int seg_eventfd(const seg_t *s);
size_t seg_size(const seg_t *s);
struct shm_header *seg_header(const seg_t *s);
uint32_t seg_nworkers(const seg_t *s);
struct shm_worker *seg_worker(const seg_t *s, uint32_t i);   /* NULL if i is out of range */
uint32_t seg_sub_frame_max(const seg_t *s);    /* largest submission frame a slot holds */
uint32_t seg_comp_frame_max(const seg_t *s);   /* largest completion frame a slot holds */

/* Pure: check that buf[0..len) starts with a header whose geometry is consistent and fits in
 * len bytes (len = the file's size). 0 if so; -1 with a one-line reason in err. */
int seg_check(const void *buf, size_t len, char *err, size_t errlen);

/* Geometry helpers for tools reading a copy of a segment (after seg_check succeeded). */
const struct shm_slot *seg_slot_at(const void *base, int comp, uint32_t index);

#endif
