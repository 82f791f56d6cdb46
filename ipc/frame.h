/* ipc/frame.h: the frames that travel through the rings.
 *
 * A frame is a 12-byte header and a msgpack map:
 *
 *   offset 0  u32 LE  length of the whole frame, header included (12 .. FRAME_MAX_LEN)
 *   offset 4  u8      type: FRAME_SUBMIT (supervisor -> worker) or FRAME_COMPLETE (back)
 *   offset 5  u8      version: FRAME_VERSION
 *   offset 6  u16     flags: 0
 *   offset 8  u32 LE  CRC-32C of bytes 0..7 followed by the payload
 *   offset 12 ...     payload: one msgpack map, string keys (see docs/ipc.md for the fields)
 *
 * Frames read from shared memory were written by another process and are untrusted: copy them
 * out first, then decode. The decoder checks length, version, flags and checksum, walks the
 * msgpack with fixed limits (depth, object count, every count and length within the bytes
 * present) before msgpack-c allocates anything, and then checks every field: required fields
 * present, no duplicates, right types, values in range, no trailing bytes. Unknown keys are
 * ignored (newer writers may add fields), within the same limits. Nothing is allocated with a
 * size taken from the frame: the decoder's memory is sized once, by its creator.
 */
#ifndef EJOB_FRAME_H
#define EJOB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "ipc/item_fields.h"

#define FRAME_HDR_LEN     12u
#define FRAME_VERSION     1u
#define FRAME_MAX_LEN     (1u << 20)  /* absolute ceiling; a segment's slot size is smaller */

/* Value limits (the encoder refuses and the decoder rejects anything beyond them). */
#define FRAME_JOB_MAX     255u        /* bytes in a job name */
#define FRAME_ERRTXT_MAX  512u        /* bytes in a completion's error text */
#define FRAME_OUT_MAX     1024u       /* bytes in a completion's output tail */
#define FRAME_METHOD_MAX  16u         /* bytes in an HTTP method */
#define FRAME_ITEMS_MAX   1000000u    /* shardingTotalCount ceiling */
#define FRAME_FLOW_MAX    2u          /* "flow": 0 none, 1 once, 2 streaming (ejob_dataflow_mode) */
#define FRAME_BATCH_MAX   (64u << 20) /* "bmax": a dataflow batch's bound in bytes (EJOB_BATCH_MAX) */
#define FRAME_MAX_KEYS    64u         /* entries in the top-level map, unknown keys included */
#define FRAME_MAX_DEPTH   8u          /* nesting (inside unknown keys) */
#define FRAME_MAX_OBJECTS 512u        /* msgpack objects in one frame */

enum frame_type {
	FRAME_SUBMIT   = 1,   /* supervisor -> worker, in the submission ring */
	FRAME_COMPLETE = 2,   /* worker -> supervisor, in the completion ring */
	FRAME_HELLO    = 3,   /* external worker -> supervisor, on the attach socket */
	FRAME_WELCOME  = 4,   /* supervisor -> external worker (with the segment's fds) */
	FRAME_REFUSE   = 5,   /* supervisor -> external worker: why it may not attach */
};

#define FRAME_LIST_MAX    64u         /* strings in a list field */
#define FRAME_NAME_MAX    64u         /* bytes in a worker name */
#define FRAME_SLOTS_MAX   64u         /* concurrent items one attachment may hold */
#define FRAME_ATTACH_VERSION 1u

struct frame_strlist {
	uint32_t n;
	const char *v[FRAME_LIST_MAX];
};

/* How an item is run (submission field "kind"); 0 = not set. */
enum frame_kind {
	FRAME_KIND_NONE     = 0,
	FRAME_KIND_SCRIPT   = 1,
	FRAME_KIND_NATIVE   = 2,
	FRAME_KIND_EXTERNAL = 3,
	FRAME_KIND_HTTP     = 4,
};
#define FRAME_KIND_MAX FRAME_KIND_HTTP

/* Outcome of an item (completion field "status"). */
enum frame_status {
	FRAME_ST_OK        = 0,  /* exit 0 / returned 0 */
	FRAME_ST_FAILED    = 1,  /* non-zero exit or return value */
	FRAME_ST_CRASHED   = 2,  /* killed by a signal, or its worker died */
	FRAME_ST_TIMEOUT   = 3,  /* ran past timeoutSeconds and was stopped */
	FRAME_ST_CANCELLED = 4,  /* stopped on request (shutdown, lease lost) */
	FRAME_ST_ERROR     = 5,  /* could not be started (exec, dlopen, bad frame) */
	FRAME_ST__COUNT
};

/* One shard-item execution, supervisor -> worker: the fields of ipc/item_fields.h, each named,
 * typed, keyed and bounded there (docs/ipc.md). Strings are NUL-terminated; after a decode they
 * point into the decoder and stay valid until its next decode. */
#define FRAME_ITEM_MEMBER(type, name, key, req, min, max, ctx) FRAME_ITEM_CTYPE_##type name;
struct frame_submit {
	FRAME_ITEM_FIELDS(FRAME_ITEM_MEMBER)
};
#undef FRAME_ITEM_MEMBER

/* The bytes f's strings take with their NULs, and a copy of f into *dst whose strings are copied
 * to at (that many bytes): the dispatcher keeps a request and its strings in one allocation. */
size_t frame_submit_strings(const struct frame_submit *f);
void frame_submit_copy(struct frame_submit *dst, const struct frame_submit *f, char *at);

/* The outcome of one execution, worker -> supervisor: the same identity plus the result. */
struct frame_complete {
	uint64_t xid;          /* "xid" */
	uint64_t fire_id;      /* "fire" */
	uint64_t epoch;        /* "epoch" */
	uint64_t duration_us;  /* "dur": wall time the item ran */
	uint32_t item;         /* "item" */
	uint32_t attempt;      /* "attempt" */
	uint32_t status;       /* "status": enum frame_status */
	int32_t exit_code;     /* "code": exit status or return value (0 if none) */
	int32_t signal;        /* "signal": terminating signal (0 if none) */
	const char *job;       /* "job" */
	const char *task_id;   /* "task" */
	const char *error;     /* "err": short error text, 0..FRAME_ERRTXT_MAX bytes ("" if none) */
	const char *output;    /* "out": the last lines of the item's output, 0..FRAME_OUT_MAX bytes
	                          (optional, NULL = absent; readers older than it skip it) */
};

/* First frame on the attach socket: who is attaching and for which jobs. */
struct frame_hello {
	uint32_t version;      /* "version": FRAME_ATTACH_VERSION */
	uint32_t pid;          /* "pid": the attaching process */
	uint32_t slots;        /* "slots": items it runs at once, 1..FRAME_SLOTS_MAX */
	const char *name;      /* "name": a label for logs, 1..FRAME_NAME_MAX bytes */
	struct frame_strlist jobs;   /* "jobs": job names it serves, 1..FRAME_LIST_MAX of 1..255 bytes */
};

/* The answer: sent with SCM_RIGHTS carrying the segment memfd and its eventfd. */
struct frame_welcome {
	uint32_t version;      /* "version" */
	uint32_t slots;        /* "slots": worker entries in the segment (0..slots-1 are its own) */
	uint32_t supervisor;   /* "sup": the supervisor's pid */
	uint32_t heartbeat_ms; /* "hb": stamp each entry's heartbeat at least this often */
};

struct frame_refuse {
	const char *error;     /* "err": why, and what to do, 1..FRAME_ERRTXT_MAX bytes */
};

enum frame_errc {
	FRAME_OK = 0,
	FRAME_E_SHORT,     /* fewer bytes than a header, or than the length field says */
	FRAME_E_LENGTH,    /* length field out of range or disagreeing with the bytes given */
	FRAME_E_VERSION,   /* unknown version or non-zero flags */
	FRAME_E_TYPE,      /* unknown frame type, or not the type asked for */
	FRAME_E_CRC,       /* checksum mismatch */
	FRAME_E_MSGPACK,   /* not valid msgpack */
	FRAME_E_LIMIT,     /* msgpack too deep, too many objects or keys */
	FRAME_E_TRAILING,  /* bytes after the map */
	FRAME_E_NOTMAP,    /* payload is not a map, or a key is not a string */
	FRAME_E_FIELDTYPE, /* a field has the wrong msgpack type */
	FRAME_E_MISSING,   /* a required field is absent */
	FRAME_E_DUP,       /* a field appears twice */
	FRAME_E_RANGE,     /* a value out of range, too long, or containing NUL */
	FRAME_E__COUNT
};

struct frame_err {
	enum frame_errc code;
	char msg[192];        /* e.g. "field 'item': 7 is not below 'total' 4" */
};

const char *frame_errc_name(enum frame_errc code);   /* "crc", "trailing", ... */
const char *frame_status_name(uint32_t status);      /* "ok", "failed", ... ; "?" if unknown */
const char *frame_kind_name(uint32_t kind);          /* "script", ... ; "?" if unknown */

/* Encode into buf (cap bytes). Returns the frame length, or -1 with errno EMSGSIZE (does not
 * fit in cap) or EINVAL (a value the decoder would reject: empty job, item >= total, ...). */
long frame_encode_submit(const struct frame_submit *f, void *buf, size_t cap);
long frame_encode_complete(const struct frame_complete *f, void *buf, size_t cap);
long frame_encode_hello(const struct frame_hello *f, void *buf, size_t cap);
long frame_encode_welcome(const struct frame_welcome *f, void *buf, size_t cap);
long frame_encode_refuse(const struct frame_refuse *f, void *buf, size_t cap);

/* Peek at a header without checking the payload: returns the type (0 if fewer than
 * FRAME_HDR_LEN bytes). */
unsigned frame_peek_type(const void *buf, size_t len);

/* A decoder owns all the memory decoding needs, sized at creation for frames of at most
 * max_len bytes (<= FRAME_MAX_LEN). One per thread. */
typedef struct frame_decoder frame_decoder_t;

frame_decoder_t *frame_decoder_new(size_t max_len);
void frame_decoder_free(frame_decoder_t *d);

/* Decode exactly len bytes. 0 on success; -1 with err filled (and *out unspecified). */
int frame_decode_submit(frame_decoder_t *d, const void *buf, size_t len,
                        struct frame_submit *out, struct frame_err *err);
int frame_decode_complete(frame_decoder_t *d, const void *buf, size_t len,
                          struct frame_complete *out, struct frame_err *err);
int frame_decode_hello(frame_decoder_t *d, const void *buf, size_t len,
                       struct frame_hello *out, struct frame_err *err);
int frame_decode_welcome(frame_decoder_t *d, const void *buf, size_t len,
                         struct frame_welcome *out, struct frame_err *err);
int frame_decode_refuse(frame_decoder_t *d, const void *buf, size_t len,
                        struct frame_refuse *out, struct frame_err *err);

#endif
