/* ipc/shm.h: the layout of a shared-memory segment (one per worker pool, one per external
 * attachment). This is the one public struct family of ejob: every process that maps a
 * segment agrees on it, so any change bumps SHM_VERSION.
 *
 *   +--------------------+ 0
 *   | shm_header         |   one page: geometry (immutable), then one 64-byte line per
 *   |                    |   index or wake word, so no two writers share a line
 *   +--------------------+ workers_off
 *   | shm_worker x N     |   128 bytes each: a line the supervisor writes, a line the worker writes
 *   +--------------------+ held_off
 *   | held frame x N     |   sub_slot_size bytes each: the worker's copy of the item it runs
 *   +--------------------+ sub_off
 *   | shm_slot x S       |   submission ring: supervisor -> workers (single producer, many consumers)
 *   +--------------------+ comp_off
 *   | shm_slot x C       |   completion ring: workers -> supervisor (many producers, one consumer)
 *   +--------------------+ total_size
 *
 * Offsets, never pointers. Writers: "sup" = the supervisor (creator), "wrk" = a worker.
 * Every index read from the segment is bounds-checked before use.
 */
#ifndef EJOB_SHM_H
#define EJOB_SHM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#define SHM_MAGIC    0x004d48534a424f45ULL   /* in memory (little-endian) the bytes "EOBJSHM\0" */
#define SHM_VERSION  2u
#define SHM_LINE     64u
#define SHM_HDR_SIZE 4096u

/* Slot control word (shm_slot.ctl), one 64-bit CAS carries the whole claim:
 *   bits  0..1   state
 *   bits  2..15  owner: worker index (CLAIMED / WRITING / READY), else 0
 *   bits 16..31  owner generation, low 16 bits
 *   bits 32..63  sequence: low 32 bits of the ring position this state belongs to
 * A slot at index i starts FREE with sequence i; a producer may fill position p only when the
 * slot is FREE with sequence p; taking it out (consume, reclaim) makes it FREE with p + slots. */
enum shm_slot_state {
	SLOT_FREE    = 0,  /* empty, waiting for position `seq` */
	SLOT_READY   = 1,  /* holds a frame for position `seq` (sub: published; comp: written by owner) */
	SLOT_CLAIMED = 2,  /* sub: a worker is copying the frame out; comp: the owner is writing it */
	SLOT_SKIP    = 3,  /* comp: the owner died while writing; the consumer skips it */
};

#define SLOT_CTL(state, owner, gen, seq) \
	((uint64_t)(state) | (uint64_t)((owner) & 0x3fffu) << 2 | (uint64_t)((gen) & 0xffffu) << 16 | \
	 (uint64_t)(uint32_t)(seq) << 32)
#define SLOT_STATE(c) ((unsigned)((c) & 3u))
#define SLOT_OWNER(c) ((unsigned)(((c) >> 2) & 0x3fffu))
#define SLOT_GEN(c)   ((unsigned)(((c) >> 16) & 0xffffu))
#define SLOT_SEQ(c)   ((uint32_t)((c) >> 32))
#define SHM_MAX_WORKERS 0x3fffu     /* owner field width */

struct shm_slot {
	_Atomic uint64_t ctl;   /* see above; the release/acquire point for len, ref and data */
	uint64_t ref;           /* comp: held position + 1 of the item this completes (wrk); sub: 0 */
	uint32_t len;           /* frame bytes in data[]; written by the slot's filler before ctl */
	uint32_t reserved[3];
	unsigned char data[];   /* slot_size - SHM_SLOT_HDR bytes */
};
#define SHM_SLOT_HDR 32u

/* Worker states (shm_worker.state). The supervisor writes EMPTY/STARTING/DEAD while no worker
 * process occupies the entry; the worker writes IDLE/BUSY/STOPPING while it lives. */
enum shm_worker_state {
	WRK_EMPTY    = 0,  /* no process */
	WRK_STARTING = 1,  /* sup: forked, not yet ready */
	WRK_IDLE     = 2,  /* wrk: ready, waiting for an item */
	WRK_BUSY     = 3,  /* wrk: running the held item */
	WRK_STOPPING = 4,  /* wrk: leaving on request */
	WRK_DEAD     = 5,  /* sup: reaped, its claims being reclaimed */
};

struct shm_worker {
	/* line 0: the supervisor writes, the worker reads */
	alignas(SHM_LINE) _Atomic int32_t pid;   /* sup: process id (an external worker: its pid) */
	_Atomic uint32_t gen;                    /* sup: bumped each time a new process takes the entry */
	_Atomic uint32_t state;                  /* enum shm_worker_state (see above for who writes) */
	_Atomic uint32_t cancel;                 /* sup: non-zero asks the running item to stop */
	_Atomic uint64_t cancel_xid;             /* sup: the xid the cancel is meant for (cancel holds
	                                            the reason: SHM_CANCEL_*) */
	_Atomic uint64_t drained_pos;            /* sup: held position + 1 of the last completion it
	                                            drained from this worker (reclaim skips that item) */
	/* line 1: the worker writes, the supervisor and shmdump read */
	alignas(SHM_LINE) _Atomic uint64_t heartbeat_ns;  /* wrk: CLOCK_MONOTONIC of its last sign of life */
	_Atomic uint64_t held_pos;               /* wrk: sub ring position + 1 of the held item, 0 = none */
	_Atomic uint32_t held_len;               /* wrk: bytes in this worker's held frame */
	_Atomic uint32_t items;                  /* wrk: items completed by this process */
	_Atomic uint64_t started_ns;             /* wrk: CLOCK_MONOTONIC when it last became BUSY */
	_Atomic int32_t item_pgid;               /* wrk: process group of the running item's processes
	                                            (script jobs), 0 = none: the supervisor kills it
	                                            on timeout or when it must stop the item */
	_Atomic uint32_t flags;                  /* wrk: WRKF_* */
};

/* shm_worker.cancel: why the supervisor asks the running item to stop */
#define SHM_CANCEL_TIMEOUT   1u   /* ran past timeoutSeconds: report FRAME_ST_TIMEOUT */
#define SHM_CANCEL_SHUTDOWN  2u   /* supervisor stopping: report FRAME_ST_CANCELLED */
#define SHM_CANCEL_LEASE     3u   /* ZooKeeper session lease lost: report FRAME_ST_CANCELLED */

/* shm_worker.flags */
#define WRKF_IN_NATIVE  1u   /* running native code: no heartbeat until it returns (the item's
                                deadline, not the heartbeat, bounds it) */

struct shm_header {
	/* line 0-1: geometry, written by the creator before anyone else maps it, then immutable */
	uint64_t magic;            /* SHM_MAGIC */
	uint32_t version;          /* SHM_VERSION */
	uint32_t header_size;      /* SHM_HDR_SIZE */
	uint64_t total_size;       /* bytes in the segment (the memfd's size) */
	uint32_t nworkers;         /* entries in the worker table, 1..SHM_MAX_WORKERS */
	uint32_t worker_size;      /* sizeof(struct shm_worker) */
	uint64_t workers_off;
	uint64_t held_off;         /* nworkers x sub_slot_size */
	uint64_t sub_off;
	uint32_t sub_slots;        /* power of two */
	uint32_t sub_slot_size;    /* power of two, SHM_SLOT_HDR + the largest submission frame */
	uint64_t comp_off;
	uint32_t comp_slots;       /* power of two */
	uint32_t comp_slot_size;   /* power of two */
	int32_t owner_pid;         /* the supervisor */
	uint32_t owner_uid;
	uint64_t created_ns;       /* CLOCK_REALTIME at creation */
	char name[32];             /* "pool" or "attach:<pid>", NUL-terminated */

	/* line 2: sup writes, workers read */
	alignas(SHM_LINE) _Atomic uint64_t generation;       /* sup: bumped on config reload */
	_Atomic uint64_t lease_deadline_ns;  /* sup: CLOCK_MONOTONIC after which workers must stop their
	                                        items (ZooKeeper session lease); 0 = no lease */
	_Atomic uint64_t sup_heartbeat_ns;   /* sup: CLOCK_MONOTONIC of its last loop iteration */
	_Atomic uint64_t lease_kill_ns;      /* sup: CLOCK_MONOTONIC after which whatever is left of an
	                                        item stopped for the lease is killed; a worker does it
	                                        itself if the supervisor cannot (frozen); 0 = no lease */
	_Atomic uint32_t shutdown;           /* sup: non-zero = workers finish and exit */

	/* line 3: submission ring, producer side (sup) */
	alignas(SHM_LINE) _Atomic uint64_t sub_head;   /* sup: next position to publish */
	/* line 4: submission ring, claim hint (any worker advances it) */
	alignas(SHM_LINE) _Atomic uint64_t sub_tail;   /* wrk: lowest position that may be unclaimed */
	/* line 5: submission wakeups */
	alignas(SHM_LINE) _Atomic uint32_t sub_futex;  /* sup: bumped before a wake */
	_Atomic uint32_t sub_sleepers;                 /* wrk: workers in (or entering) futex wait */
	_Atomic uint32_t sub_spinners;                 /* wrk: workers spinning for work (at most one
	                                                  spins: on a small machine N spinners would
	                                                  starve the supervisor that feeds them) */
	_Atomic uint64_t sub_wakes;                    /* sup: wake syscalls made (statistics) */

	/* line 6: completion ring, producer claim hint (workers) */
	alignas(SHM_LINE) _Atomic uint64_t comp_head;  /* wrk: lowest position that may be free */
	/* line 7: completion ring, consumer side (sup) */
	alignas(SHM_LINE) _Atomic uint64_t comp_tail;  /* sup: next position to drain */
	/* line 8: completion wakeups */
	alignas(SHM_LINE) _Atomic uint32_t comp_sleeping;  /* sup: 1 = waiting on the eventfd, write it */
	_Atomic uint32_t comp_space_futex;                 /* sup: bumped when it frees slots for waiters */
	_Atomic uint32_t comp_space_waiters;               /* wrk: workers waiting for a free slot */
	_Atomic uint64_t comp_wakes;                       /* wrk: eventfd writes made (statistics) */
};

_Static_assert(sizeof(struct shm_header) <= SHM_HDR_SIZE, "header fits its page");
_Static_assert(sizeof(struct shm_worker) == 128, "worker entry is two lines");
_Static_assert(sizeof(struct shm_slot) == SHM_SLOT_HDR, "slot header size");
_Static_assert(sizeof(_Atomic uint64_t) == 8 && alignof(_Atomic uint64_t) == 8, "lock-free u64");

#endif
