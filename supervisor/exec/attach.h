/* supervisor/exec/attach.h: the attach socket for external workers (docs/worker.md).
 *
 * Listens on a SOCK_SEQPACKET unix socket; checks each peer with SO_PEERCRED and its HELLO,
 * gives it a segment of its own (so a buggy or hostile process can damage nothing but its own
 * rings) and registers that segment as a dispatch target for the jobs it serves. A bad frame, a
 * stale heartbeat or a disconnect ends the attachment: its held items are reclaimed and handed
 * back to the dispatcher as lost. */
#ifndef EJOB_ATTACH_H
#define EJOB_ATTACH_H

#include <ev.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "supervisor/exec/dispatch.h"

typedef struct att att_t;

struct att_policy {
	const uint32_t *uids;      /* allowed besides our own uid */
	size_t nuids;
	const uint32_t *gids;      /* allowed primary gids of the peer */
	size_t ngids;
	uint32_t heartbeat_timeout_ms;
	/* Is `job` one that external workers may serve? 0 yes; -1 no, with the reason in why. */
	int (*job_ok)(void *arg, const char *job, char *why, size_t whylen);
	void *arg;
};

/* The default socket path for a namespace (docs/worker.md); 0, or -1 if it does not fit. */
int att_default_path(const char *ns, char *buf, size_t len);

/* Listen on path (its directory is created 0700 if missing; a stale socket is replaced, a live
 * one is an error). NULL with the reason in err and errno: EADDRINUSE another supervisor listens
 * there; ENAMETOOLONG, ENOTDIR, EPERM (a directory others can write), EACCES, ENOENT, EROFS, ...
 * the path cannot be used (configuration problems); ENOMEM, EMFILE, ... a runtime failure. */
att_t *att_new(struct ev_loop *loop, disp_t *d, const char *path, const struct att_policy *pol, char *err,
               size_t errlen);
void att_set_policy(att_t *a, const struct att_policy *pol);   /* after a reload */
void att_free(att_t *a);        /* close every attachment (their items are lost) and the socket */
/* The supervisor is stopping: set every attachment's shutdown flag and wake its workers (they
 * take no more items, finish the running ones, detach); refuse new attachments. */
void att_shutdown(att_t *a);
void att_tick(att_t *a, uint64_t now_ns);   /* heartbeat checks */
size_t att_count(const att_t *a);
size_t att_serving(const att_t *a, const char *job);   /* attachments that serve job */
const char *att_path(const att_t *a);

/* The ZooKeeper lease's stop and kill times (CLOCK_MONOTONIC, 0 = none) in every attachment's
 * segment, so external workers stop their items on them as pool workers do. */
void att_set_lease(att_t *a, uint64_t deadline_ns, uint64_t kill_ns);

#endif
