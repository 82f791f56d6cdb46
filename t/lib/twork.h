/* t/lib/twork.h: tests that play the supervisor for real ejob-worker processes: a segment, the
 * worker started exactly as docs/worker.md says (fork+exec, fds 3-6, env, argv), items
 * published as real frames, completions drained and decoded. */
#ifndef EJOB_TWORK_H
#define EJOB_TWORK_H

#include <stdint.h>
#include <sys/types.h>

#include "ipc/frame.h"
#include "ipc/seg.h"
#include "t/lib/tbuild.h"

#define TWORK_BIN BUILT("worker/ejob-worker")

struct twork {
	seg_t *s;
	frame_decoder_t *dec;
	pid_t pid;              /* the worker, 0 once reaped */
	uint32_t index;
	int lifeline;           /* write end of the lifeline, -1 once closed */
	int notify;             /* read end of the notify pipe, -1 once EOF was read */
	char ready[32];         /* what the worker wrote to fd 6 before EOF */
	char log[512];          /* file receiving the worker's fds 1 and 2 */
	uint64_t next_xid;
	uint64_t ignore;        /* signals (bit s-1 for signal s) the worker is started with ignored,
	                           as under nohup: its scripts must not inherit that */
};

/* A segment with nworkers entries; the worker's output goes to log (appended). */
void twork_init(struct twork *t, uint32_t nworkers, const char *log);
void twork_fini(struct twork *t);   /* SIGKILLs and reaps a worker still running */

/* Start ejob-worker for entry index as the supervisor does (gen bump, STARTING, fork+exec with
 * fds 3-6, EJOB_SUPERVISOR_PID = this process, EJOB_WORKER_INDEX, `--index I`); extra_env:
 * NULL-terminated "NAME=value" strings added. Does not wait. Returns the pid. */
pid_t twork_start(struct twork *t, uint32_t index, const char *const *extra_env);

/* Wait for the readiness line and the EOF after it (at most timeout_ms): 1 if "ready\n" then
 * EOF arrived, else 0 (t->ready holds what came). */
int twork_wait_ready(struct twork *t, unsigned timeout_ms);

/* twork_start + twork_wait_ready; BAIL_OUT if not ready in 5 s. */
pid_t twork_spawn(struct twork *t, uint32_t index);

/* A submission with every field set to recognisable values (xid = next_xid++). */
struct frame_submit twork_item(struct twork *t, uint32_t kind);
void twork_publish(struct twork *t, const struct frame_submit *f);   /* BAIL_OUT if full */

/* Wait for one completion: 1 with *c decoded (strings valid until the next call), 0 on
 * timeout. A drained frame that does not decode is a test failure (BAIL_OUT). */
int twork_completion(struct twork *t, unsigned timeout_ms, struct frame_complete *c);

/* Wait for pid (a child) to exit, at most timeout_ms: 1 with *status, 0 if still running. */
int twork_wait_exit(pid_t pid, unsigned timeout_ms, int *status);

/* Is pid gone (no such process, or a zombie)? */
int twork_gone(pid_t pid);

/* Read a whole file (malloc'd, NUL-terminated; *len without the NUL); NULL if it is absent. */
char *twork_slurp(const char *path, size_t *len);

/* The worker table entry. */
struct shm_worker *twork_entry(struct twork *t, uint32_t index);

#endif
