/* ipc/ring.h: the submission ring (supervisor -> workers) and completion ring (back).
 *
 * Submission: the supervisor publishes one frame per shard-item execution; any idle worker
 * claims the next one. A claim is one CAS of the slot's control word that records the worker's
 * index and generation; the worker then copies the frame into its own "held" area, notes the
 * position there, and frees the slot (so a long item never blocks the ring). Killed at any
 * instruction, a worker leaves its item either in a CLAIMED slot or in its held area, both
 * tagged with its identity: ring_reclaim finds it.
 *
 * Completion: a worker reports the result of its held item; the completion names the held
 * position, and draining it records that position in the supervisor's half of the worker
 * entry, so an item is reported by exactly one of: its completion, or ring_reclaim.
 *
 * Waking: workers spin briefly, then sleep on a futex, counting themselves as sleepers; the
 * supervisor makes the wake syscall only when someone sleeps (ring_flush). The supervisor
 * sleeps in its event loop on the segment's eventfd, which a worker writes only when the
 * supervisor said it was about to sleep (ring_comp_idle).
 *
 * Errors: 0/positive on success, -1 with errno. Nothing here blocks but ring_wait and
 * ring_wait_space, which workers call.
 */
#ifndef EJOB_RING_H
#define EJOB_RING_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/seg.h"

/* ---- supervisor side ---------------------------------------------------------------------- */

/* Publish one frame. 0, or -1 with errno EAGAIN (ring full: the caller keeps the frame and
 * tries later; nothing is lost) or EMSGSIZE (len > seg_sub_frame_max). Does not wake anyone:
 * call ring_flush after a batch. */
int ring_publish(seg_t *s, const void *frame, uint32_t len);

/* After publishing a batch: wake as many sleeping workers as frames were published (at most
 * the number sleeping). Makes no syscall when nobody sleeps. Returns wakes requested. */
int ring_flush(seg_t *s);

/* Wake every sleeping worker (shutdown, cancel, lease change). */
void ring_wake_all(seg_t *s);

struct ring_comp {
	uint32_t worker;     /* index of the worker that wrote it (checked < nworkers) */
	uint32_t gen;        /* its generation, low 16 bits */
	uint64_t held_pos;   /* the held position it completes (+1), as the worker wrote it */
};

/* Take the next completion: copies it to buf and returns its length; 0 if none is ready;
 * -1 with errno EBADMSG if the slot held garbage (bad length or owner; the slot is consumed
 * and info->worker says whom to blame when it is in range) or EMSGSIZE if cap is too small
 * (nothing consumed). cap >= seg_comp_frame_max never fails that way. */
long ring_drain(seg_t *s, void *buf, size_t cap, struct ring_comp *info);

/* Call when ring_drain returned 0 and before waiting on the eventfd: wakes workers waiting for
 * completion space, then arms the eventfd wakeup. Returns 1 if completions arrived meanwhile
 * (drain again, do not wait), 0 if it is safe to wait. */
int ring_comp_idle(seg_t *s);

/* Reclaim what a dead worker held. Call only after the worker process is gone (reaped). For
 * each item it had claimed and not completed (at most one held item plus any slot it was
 * claiming), calls fn with the frame bytes (in the segment: copy before decoding). Slots it
 * was filling in the completion ring are skipped; a completion it finished is left to be
 * drained (and is not reported here). Clears its held record. Returns the number reported;
 * -1 with errno EINVAL (no such worker) or ESTALE (gen is not the entry's generation: the entry
 * was already given to another process, and nothing is touched). */
typedef void ring_reclaim_fn(void *arg, uint64_t pos, const void *frame, uint32_t len);
int ring_reclaim(seg_t *s, uint32_t worker, uint32_t gen, ring_reclaim_fn *fn, void *arg);

/* ---- worker side -------------------------------------------------------------------------- */

/* Become worker `index` of the segment (its generation is read from the worker table, where
 * the supervisor wrote it). 0, or -1 with errno EINVAL if index is out of range. */
int ring_bind(seg_t *s, uint32_t index);

/* Claim the next item: copies its frame to buf (cap >= seg_sub_frame_max, else EMSGSIZE) and
 * records it as held. Returns the frame length, 0 if nothing is published, -1 on error
 * (EBUSY: the previous item was not completed; EBADMSG: the slot's length was corrupt). */
long ring_claim(seg_t *s, void *buf, size_t cap);

/* Is there something to claim? (A hint: another worker may take it first.) */
int ring_pending(seg_t *s);

/* Wait until there may be something to claim: spin for the handle's spin time (only if no
 * other worker of the segment is spinning), then sleep on the futex, at most timeout_ns
 * (< 0: no limit). 0 when there may be work (or shutdown), -1 with errno ETIMEDOUT or EINTR. */
int ring_wait(seg_t *s, int64_t timeout_ns);
void ring_set_spin_ns(seg_t *s, uint64_t ns);

/* Report the result of the held item: publishes the completion frame and clears the held
 * record, then wakes the supervisor if it sleeps. -1 with errno EAGAIN (completion ring full:
 * ring_wait_space, then retry), EMSGSIZE, or ENOENT (no held item). */
int ring_complete(seg_t *s, const void *frame, uint32_t len);
int ring_wait_space(seg_t *s, int64_t timeout_ns);

/* The held item (for a worker that restarts its loop, and for tests): its frame and length,
 * or NULL if none. */
const void *ring_held(const seg_t *s, uint32_t *len);

/* Stamp this worker's heartbeat (CLOCK_MONOTONIC) and state (enum shm_worker_state). */
void ring_heartbeat(seg_t *s, uint32_t state);

#endif
