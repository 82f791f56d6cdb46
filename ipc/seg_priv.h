/* ipc/seg_priv.h: the per-process segment handle, shared by seg.c and ring.c only. */
#ifndef EJOB_SEG_PRIV_H
#define EJOB_SEG_PRIV_H

#include <stdint.h>

#include "ipc/seg.h"

struct seg {
	int fd, efd;
	int owns_fds;
	unsigned char *base;
	size_t size;
	struct shm_header *hdr;
	struct shm_worker *workers;
	unsigned char *held, *sub, *comp;
	uint32_t nworkers;
	uint32_t sub_slots, sub_mask, sub_slot_size, sub_data;    /* data = slot size - slot header */
	uint32_t comp_slots, comp_mask, comp_slot_size, comp_data;

	/* supervisor side (private copies of indices only it advances) */
	uint64_t sub_head;
	uint64_t comp_tail;
	uint32_t pending;         /* published since the last ring_flush */

	/* worker side */
	int bound;
	uint32_t wid, wgen;       /* worker index and its generation at bind time */
	uint64_t spin_ns;         /* how long ring_wait spins before it sleeps */
};

static inline struct shm_slot *seg_sub_slot(const struct seg *s, uint64_t pos)
{
	return (struct shm_slot *)(s->sub + (size_t)(pos & s->sub_mask) * s->sub_slot_size);
}

static inline struct shm_slot *seg_comp_slot(const struct seg *s, uint64_t pos)
{
	return (struct shm_slot *)(s->comp + (size_t)(pos & s->comp_mask) * s->comp_slot_size);
}

static inline unsigned char *seg_held(const struct seg *s, uint32_t wid)
{
	return s->held + (size_t)wid * s->sub_slot_size;
}

#endif
