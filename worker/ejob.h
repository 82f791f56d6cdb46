/* worker/ejob.h: the ejob worker library. Link libejob.a (and -lmsgpackc -pthread).
 *
 * A worker takes shard items from an ejob-supervisor, runs them and reports how each ended.
 * The built-in pool worker (worker/ejob-worker) and external worker binaries use this same
 * library; they differ only in how they reach the supervisor's shared-memory segment:
 *
 *   pool worker      started by the supervisor with the segment at fds 3 and 4:
 *                    ejob_attach_inherited()
 *   external worker  any program; connects to the supervisor's attach socket, sends HELLO with
 *                    the jobs it serves, receives the segment's fds: ejob_attach()
 *
 * An attachment has one or more slots (entries in the segment's worker table); each slot runs
 * one item at a time and is used by one thread. A typical external worker:
 *
 *     const char *jobs[] = { "resize", NULL };
 *     struct ejob_attach_opts o = { .ns = "prod", .jobs = jobs, .slots = 4 };
 *     ejob_worker *w;
 *     char err[512];
 *     if (ejob_attach(&o, &w, err, sizeof err) < 0) { fprintf(stderr, "%s\n", err); exit(1); }
 *     // in each of ejob_slots(w) threads, with its own index i:
 *     ejob_slot *s;
 *     ejob_bind(w, i, &s);
 *     const ejob_context *ctx;
 *     while (ejob_next(s, -1, &ctx) == 1) {
 *         int rc = run_it(ctx);                     // poll ejob_cancelled(ctx) if it runs long
 *         ejob_done(s, rc ? EJOB_FAILED : EJOB_OK, rc, 0, NULL);
 *     }
 *     // ejob_next returned -1: errno ECANCELED (ejob_stop), ESHUTDOWN, ENOTCONN (see there)
 *     // after the threads are joined:
 *     ejob_detach(w);
 *
 * Errors: functions return 0 (or a count) on success and -1 with errno set on failure; the
 * attach functions also write a one-line reason naming the problem and the fix into err.
 * Each slot keeps a text for its last failure (ejob_slot_error).
 *
 * Threads: each ejob_slot belongs to one thread at a time; different slots of one attachment
 * may be used concurrently. ejob_stop and ejob_cancelled may be called from any thread.
 * The library installs no signal handlers and starts no threads.
 */
#ifndef EJOB_EJOB_H
#define EJOB_EJOB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How an item ended (ejob_done's status; the completion frame's "status"). */
enum ejob_status {
	EJOB_OK        = 0,  /* done: exit 0 / returned 0 */
	EJOB_FAILED    = 1,  /* ran and failed: non-zero exit code or return value (in code) */
	EJOB_CRASHED   = 2,  /* killed by a signal (in signal) */
	EJOB_TIMEOUT   = 3,  /* stopped because the supervisor's timeout cancel asked it to */
	EJOB_CANCELLED = 4,  /* stopped on request: supervisor shutdown, ZooKeeper lease lost */
	EJOB_ERROR     = 5,  /* could not be started: bad command line, exec or dlopen failure */
};

/* Why the supervisor asks an item to stop (ejob_cancelled's answer). */
enum ejob_cancel {
	EJOB_CANCEL_NONE     = 0,
	EJOB_CANCEL_TIMEOUT  = 1,  /* ran past timeoutSeconds: report EJOB_TIMEOUT */
	EJOB_CANCEL_SHUTDOWN = 2,  /* the supervisor is stopping: report EJOB_CANCELLED */
	EJOB_CANCEL_LEASE    = 3,  /* the supervisor lost (or is about to lose) its ZooKeeper
	                              session, so the item may be failed over to another machine:
	                              stop at once and report EJOB_CANCELLED */
};

/* How the supervisor wants an item run (ejob_context.kind). */
enum ejob_kind {
	EJOB_KIND_NONE     = 0,
	EJOB_KIND_SCRIPT   = 1,  /* cmd: script.command.line (pool workers run these) */
	EJOB_KIND_NATIVE   = 2,  /* lib, sym: native.library, native.symbol (pool workers); a
	                            dataflow job's: lib, fetch_sym, process_sym */
	EJOB_KIND_EXTERNAL = 3,  /* for the external worker that serves the job */
	EJOB_KIND_HTTP     = 4,  /* http_*: ElasticJob's HTTP job, a request per item (pool workers) */
};

#define EJOB_ERROR_MAX 512u   /* bytes of error text a completion carries (longer is cut) */
#define EJOB_OUTPUT_MAX 1024u /* bytes of output a completion carries (the last ones are kept) */

/* One shard-item execution, as handed to a job. Every string is NUL-terminated UTF-8 and stays
 * valid until ejob_done for this item (or ejob_detach). Native jobs get a pointer to it:
 * `int sym(const ejob_context *ctx)`. New fields are only ever appended; `size` tells a job
 * built against an older header how much of the struct the worker filled in. */
typedef struct ejob_context {
	uint32_t size;             /* sizeof(ejob_context) of the library that filled it */
	uint32_t kind;             /* enum ejob_kind */
	const char *job;           /* job name */
	const char *task_id;       /* ElasticJob taskId: "job@-@items@-@READY@-@ip@-@pid"; the same
	                              for every item of one fire on one instance */
	uint32_t item;             /* shard item, 0 .. total-1 */
	uint32_t total;            /* shardingTotalCount */
	const char *item_param;    /* this item's shardingItemParameters entry, "" if it has none */
	const char *job_param;     /* jobParameter, "" if none */
	uint64_t epoch;            /* fencing token: the ZooKeeper zxid of the sharding this item
	                              belongs to. A job writing to its own storage can store it and
	                              refuse writes carrying a smaller epoch (a stale supervisor) */
	uint64_t fire_id;          /* the fire (one cron trigger of the job) this item belongs to */
	uint64_t xid;              /* dispatch id: unique per execution within a supervisor */
	uint32_t attempt;          /* 1 for the first run, +1 for each retry */
	uint64_t deadline_ms;      /* Unix time in ms by which the item must end; 0 = no limit */
	const char *cmd;           /* kind SCRIPT: the command line; otherwise NULL */
	const char *lib;           /* kind NATIVE: the library path; otherwise NULL */
	const char *sym;           /* kind NATIVE: the symbol; otherwise NULL */
	const void *priv;          /* the library's own: do not touch */
	/* kind HTTP: the request, from ElasticJob's http.* props (docs/config.md); NULL / 0 otherwise */
	const char *http_uri;      /* http.uri: http:// or https:// */
	const char *http_method;   /* http.method: GET, POST, PUT, DELETE, HEAD, OPTIONS, TRACE */
	const char *http_data;     /* http.data: the body of a POST, PUT or DELETE; NULL if none */
	const char *http_content_type; /* http.content.type; NULL if none */
	const char *http_ca_file;  /* http.ca.file (ejob's): CA certificates for https; NULL: the system's */
	uint32_t http_connect_ms;  /* http.connect.timeout.milliseconds; 0: no limit of its own */
	uint32_t http_read_ms;     /* http.read.timeout.milliseconds: longest wait for the next byte
	                              of the answer; 0: no limit */
	/* a dataflow job's item (docs/config.md, type dataflow): run it with ejob_dataflow */
	uint32_t dataflow;         /* enum ejob_dataflow_mode: 0 for any other job */
	uint32_t batch_max;        /* dataflow.batch.bytes: the biggest batch a fetch may hand
	                              back, 1..EJOB_BATCH_MAX bytes (0 when dataflow is 0) */
	const char *fetch_sym;     /* kind NATIVE dataflow: native.fetch (an ejob_fetch_fn); else NULL */
	const char *process_sym;   /* kind NATIVE dataflow: native.process (an ejob_process_fn); else NULL */
	uint64_t workflow_run;     /* the workflow run this fire is part of (its root's fire id, as
	                              fire_id there); 0: none (docs/config.md "Workflows") */
} ejob_context;

/* Has the supervisor asked this item to stop? 0 (EJOB_CANCEL_NONE) while it may go on; else the
 * reason (enum ejob_cancel). True when the supervisor cancelled this item's xid (timeout,
 * shutdown) or when the supervisor's ZooKeeper lease in the segment has run out. A job that
 * runs for long should poll it (a load or two from shared memory, no syscall: cheap) and
 * return soon after it turns true. Callable from any thread while the item runs. */
int ejob_cancelled(const ejob_context *ctx);

/* The current item's output, as its history record shows it ("output"): the last
 * EJOB_OUTPUT_MAX bytes of text[0..len) are kept (from a line start when it had to be cut; bytes
 * that are not UTF-8 text are sent as '?'), and go with ejob_done. Replaces what an earlier call
 * set for this item. Call it from the thread that runs the item (a native job may call it with
 * its ctx). 0, or -1 with errno ENOENT (ctx is not the current item of its slot). */
int ejob_set_output(const ejob_context *ctx, const char *text, size_t len);

/* ---- dataflow jobs --------------------------------------------------------------------------
 *
 * ElasticJob's DataflowJob: fetchData(ctx) hands back a batch, processData(ctx, batch) handles
 * it. In C a batch is an opaque byte buffer of at most ctx->batch_max bytes that ejob_dataflow
 * owns: fetch fills it, process reads it. A native dataflow job exports both functions
 * (props native.fetch and native.process; they are called with arg NULL); an external worker
 * serving a dataflow job calls ejob_dataflow with its own, so both run the same loop. */

enum ejob_dataflow_mode {
	EJOB_DATAFLOW_NONE      = 0,  /* not a dataflow job */
	EJOB_DATAFLOW_ONCE      = 1,  /* streaming.process false: one fetch, one process (if any) */
	EJOB_DATAFLOW_STREAMING = 2,  /* streaming.process true: fetch and process until a fetch
	                                 hands back nothing, a call fails, or the item is cancelled */
};

#define EJOB_BATCH_DEFAULT (1u << 20)   /* dataflow.batch.bytes when unset: 1 MiB */
#define EJOB_BATCH_MAX     (64u << 20)  /* its ceiling: 64 MiB */

/* Fill buf (cap bytes) with the next batch: its length (1..cap), 0 when there is nothing to
 * process, or < 0 on failure (the item fails with that value as its code). */
typedef long ejob_fetch_fn(const ejob_context *ctx, void *buf, size_t cap, void *arg);
/* Handle one batch (len >= 1, never an empty one, as ElasticJob never calls processData with
 * an empty list): 0, or non-zero on failure (the item fails with that value as its code). */
typedef int ejob_process_fn(const ejob_context *ctx, const void *batch, size_t len, void *arg);

/* Run a dataflow item as ElasticJob's DataflowJobExecutor does: fetch; while the batch is not
 * empty, process it, and (ctx->dataflow STREAMING only) fetch again. Before every fetch it
 * stamps the slot's heartbeat and looks at ejob_cancelled(ctx): a cancel (timeout, shutdown,
 * lease) ends the loop there (a running fetch or process is not interrupted: poll
 * ejob_cancelled inside one that may take long). The item's output (ejob_set_output) becomes
 * a summary, e.g. "3 batches, 12345 bytes; ended: empty fetch".
 * Returns the item's status for ejob_done (enum ejob_status): EJOB_OK, EJOB_FAILED (*code: the
 * fetch's negative value or the process's return; a fetch that claims more than cap bytes
 * fails with code -1), EJOB_TIMEOUT or EJOB_CANCELLED (the cancel's reason), EJOB_ERROR (ctx
 * is not a dataflow item, fetch or process is NULL, or the batch buffer cannot be allocated).
 * code may be NULL. If err is not NULL, the reason for a status other than EJOB_OK is written
 * there (errlen bytes, for ejob_done's error text). */
int ejob_dataflow(const ejob_context *ctx, ejob_fetch_fn *fetch, ejob_process_fn *process, void *arg, int *code,
                  char *err, size_t errlen);

typedef struct ejob_worker ejob_worker;   /* one attachment: segment mapping, socket */
typedef struct ejob_slot ejob_slot;       /* one worker-table entry, used by one thread */

/* The supervisor's ZooKeeper lease, as it last wrote it into the segment (CLOCK_MONOTONIC ns,
 * 0 = no lease): from *stop_ns on, ejob_cancelled answers EJOB_CANCEL_LEASE; at *kill_ns
 * whatever is left of an item must be gone, because soon after that the session may expire and
 * another instance may be handed the item. The supervisor kills its workers' items then; but a
 * frozen supervisor (SIGSTOP, swapped out) cannot, so a worker that runs items it can kill
 * should do it itself (ejob-worker SIGKILLs a script's process group, and exits if a native
 * item has not returned). 0, or -1 with errno EINVAL (s or an out pointer is NULL). */
int ejob_lease(const ejob_slot *s, uint64_t *stop_ns, uint64_t *kill_ns);

/* ---- attaching ----------------------------------------------------------------------------- */

struct ejob_attach_opts {
	const char *socket_path;   /* the supervisor's attach socket; NULL: ejob_socket_path(ns) */
	const char *ns;            /* the supervisor's namespace (regCenter.namespace), when
	                              socket_path is NULL */
	const char *name;          /* a label for the supervisor's logs (cut to 64 bytes);
	                              NULL or "": the program's name */
	const char *const *jobs;   /* NULL-terminated list of the job names served, 1..64 */
	unsigned slots;            /* items run at once (threads), 1..64; 0 means 1 */
	int timeout_ms;            /* how long to wait for the supervisor's answer; 0: 5000 */
};

/* The default attach socket of namespace ns, exactly as the supervisor computes it:
 * $EJOB_RUNTIME_DIR/<ns>.sock if EJOB_RUNTIME_DIR is set; else /run/ejob/<ns>.sock for root
 * (effective uid 0); else $XDG_RUNTIME_DIR/ejob/<ns>.sock if XDG_RUNTIME_DIR is set; else
 * /tmp/ejob-<uid>/<ns>.sock. ns must be 1..255 bytes, not "." or "..", without '/'.
 * 0, or -1 with errno EINVAL (bad ns) or ENAMETOOLONG (the path does not fit in len bytes or
 * in a unix socket address). */
int ejob_socket_path(const char *ns, char *buf, size_t len);

/* Attach as an external worker: connect to the attach socket (SOCK_SEQPACKET), check that the
 * peer runs as our uid or root, send HELLO (our pid, name, jobs, slots), and wait for the
 * answer: WELCOME with the segment's memfd and eventfd (mapped and checked here), or REFUSE
 * with the supervisor's reason. The connection stays open until ejob_detach: closing it (or
 * dying) tells the supervisor this attachment is gone, and it reclaims its items.
 * 0, or -1 with errno and a reason in err:
 *   ENOENT/ECONNREFUSED/EACCES...  connect failed ("connect(PATH): ...: is the supervisor running?")
 *   EPERM         the socket's owner is another user
 *   ECONNREFUSED  the supervisor refused: err holds its reason
 *   ECONNRESET    it closed the connection without answering
 *   ETIMEDOUT     no answer within timeout_ms
 *   EPROTO        the answer was not a valid WELCOME/REFUSE, or came without the two fds,
 *                 or the segment failed its checks */
int ejob_attach(const struct ejob_attach_opts *opts, ejob_worker **out, char *err, size_t errlen);

/* Attach to a segment whose memfd and eventfd this process already holds (efd may be -1). Every
 * entry of the segment's worker table may then be bound. The handle takes ownership of both
 * fds (ejob_detach closes them). 0, or -1 with errno and a reason in err. */
int ejob_attach_fds(int memfd, int efd, ejob_worker **out, char *err, size_t errlen);

/* What a pool worker started by the supervisor does (docs/worker.md): take its entry index from
 * `--index I` in argv (argv[0] is skipped; other arguments are left alone) or else from
 * $EJOB_WORKER_INDEX (if both are given they must agree), attach to the segment at fd 3 with
 * its eventfd at fd 4, and bind that entry. Marks fds 3 and 4 close-on-exec.
 * 0, or -1 with errno EINVAL (no or bad index, or fds 3/4 are not a segment) and err. */
int ejob_attach_inherited(int argc, char *const argv[], ejob_worker **w, ejob_slot **slot,
                          char *err, size_t errlen);

/* Slots this attachment may bind (indices 0 .. n-1): the welcome's slot count, or the worker
 * table size for ejob_attach_fds. */
unsigned ejob_slots(const ejob_worker *w);

/* Milliseconds between heartbeats the supervisor expects (500 for pool workers, the welcome's
 * value for attachments). ejob_next stamps them on its own while it waits. */
unsigned ejob_heartbeat_ms(const ejob_worker *w);

/* Bind slot `index` for the calling thread: from now on this handle claims items as that
 * worker-table entry. Sets the entry IDLE. 0, or -1 with errno EINVAL (index out of range),
 * EBUSY (already bound in this process, or the entry still holds an item), ENOMEM. */
int ejob_bind(ejob_worker *w, unsigned index, ejob_slot **out);

/* ---- running items ------------------------------------------------------------------------- */

/* Wait up to timeout_ms (< 0: no limit) for the next item and claim it. Stamps the slot's
 * heartbeat (state IDLE) at least every ejob_heartbeat_ms while it waits; on a claim the state
 * becomes BUSY. Returns 1 with *ctx set (valid until ejob_done), 0 if the time ran out, or -1:
 *   ECANCELED  ejob_stop was called
 *   ESHUTDOWN  the supervisor set the segment's shutdown flag: take no more items, leave
 *   ENOTCONN   the attach socket was closed: the supervisor is gone (attachments only)
 *   EINTR      a signal handler ran (call again, or check your own flag)
 *   EBUSY      the previous item was not finished with ejob_done
 * A frame that fails to decode (a supervisor bug) is reported back at once as EJOB_ERROR with
 * the decoder's message and is never handed out. */
int ejob_next(ejob_slot *s, int timeout_ms, const ejob_context **ctx);

/* Report how the current item ended: status (enum ejob_status), exit code or return value,
 * terminating signal (0 if none), and an error text (NULL or ""; cut to EJOB_ERROR_MAX bytes at
 * a character boundary). The duration is measured from the claim. Never drops a completion: if
 * the completion ring is full it waits for space, heartbeating, for as long as it takes.
 * 0, or -1 with errno ENOENT (no current item), EINVAL (status out of range), ENOTCONN (the
 * attach socket closed while waiting for space: nobody is left to read it). After 0 the slot
 * is IDLE and ctx is no longer valid. */
int ejob_done(ejob_slot *s, int status, int code, int signal, const char *error);

/* Stamp the slot's heartbeat now (state BUSY while an item is held, else IDLE). An item that
 * runs for longer than ejob_heartbeat_ms must call it (or set ejob_set_in_native) or the
 * supervisor will take the worker for hung after 5 s and kill it. Cheap: no syscall. */
void ejob_heartbeat(ejob_slot *s);

/* Mark the slot as running code that cannot heartbeat (on != 0) or as back (0). While marked,
 * the supervisor bounds the item by its deadline, not by the heartbeat. */
void ejob_set_in_native(ejob_slot *s, int on);

/* Publish (pgid > 0) or clear (0) the process group of processes the current item runs, so the
 * supervisor can SIGKILL the whole group if the item must be stopped and does not stop. */
void ejob_set_item_pgid(ejob_slot *s, pid_t pgid);

/* The slot's current item, or NULL. */
const ejob_context *ejob_current(const ejob_slot *s);

/* The reason for the slot's last failed call ("" if none). */
const char *ejob_slot_error(const ejob_slot *s);

/* Make every ejob_next of this attachment return -1/ECANCELED promptly (those waiting are woken).
 * Items being run are not affected: finish them and call ejob_done. Async-signal-safe. */
void ejob_stop(ejob_worker *w);

/* Leave: mark every bound slot STOPPING, unmap the segment, close the socket and fds, free
 * everything (slots included). Items still held are not reported; the supervisor reclaims them
 * when this process exits or the socket closes (and reports them crashed). */
void ejob_detach(ejob_worker *w);

#ifdef __cplusplus
}
#endif

#endif
