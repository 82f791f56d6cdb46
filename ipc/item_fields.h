/* ipc/item_fields.h: an item's fields, declared once.
 *
 * FRAME_ITEM_FIELDS(X) calls X(type, name, key, required, min, max, ctx) for every field of one
 * shard-item execution as it travels from the supervisor to a worker, in the order the frame
 * carries them:
 *
 *   type      U64, U32 or STR (uint64_t, uint32_t, const char *)
 *   name      the member of struct frame_submit (ipc/frame.h), which embeds the item in the
 *             dispatcher's request and entry (supervisor/exec/dispatch.*)
 *   key       the msgpack key in the frame (docs/ipc.md)
 *   required  1: every frame carries it; 0: left out when 0 or NULL
 *   min, max  integers: the value's range; strings: the length's (max 0: the frame's bound)
 *   ctx       the member of the public ejob_context (worker/ejob.h) the worker copies it into
 *
 * What is generated from it: struct frame_submit's members, the codec's field table (both the
 * encoder and the decoder, ipc/frame.c), the string copy that packs a request into the
 * dispatcher's one allocation (frame_submit_copy), and the worker's copy into ejob_context
 * (worker/ejob_worker.c). A new per-item field is one line here, a member appended to
 * ejob_context (public: only ever appended), and its use: where the supervisor fills it from the
 * job's config (supervisor/run/fire.c) and where a worker reads it. */
#ifndef EJOB_ITEM_FIELDS_H
#define EJOB_ITEM_FIELDS_H

#define FRAME_ITEM_FIELDS(X)                                                                                                  \
	/* the execution (xid, attempt, deadline_ms: the dispatcher's, set as it publishes) */                                \
	X(U64, xid,         "xid",      1, 0, 0,                   xid)               /* dispatch id, unique per execution */ \
	X(U64, fire_id,     "fire",     1, 0, 0,                   fire_id)           /* the fire it belongs to */            \
	X(U64, epoch,       "epoch",    1, 0, 0,                   epoch)             /* fencing token: sharding zxid */      \
	X(U64, deadline_ms, "deadline", 1, 0, 0,                   deadline_ms)       /* Unix ms; 0: none */                  \
	X(U64, wrun,        "wrun",     0, 0, 0,                   workflow_run)      /* workflow run; 0: none */             \
	X(U32, item,        "item",     1, 0, FRAME_ITEMS_MAX - 1, item)              /* shard item, < total */               \
	X(U32, total,       "total",    1, 1, FRAME_ITEMS_MAX,     total)             /* shardingTotalCount */                \
	X(U32, attempt,     "attempt",  1, 1, UINT32_MAX,          attempt)           /* 1, +1 per retry */                   \
	X(U32, kind,        "kind",     0, 1, FRAME_KIND_MAX,      kind)              /* enum frame_kind */                   \
	/* the job's and the item's */                                                                                        \
	X(STR, job,         "job",      1, 1, FRAME_JOB_MAX,       job)               /* job name */                          \
	X(STR, task_id,     "task",     1, 1, 0,                   task_id)           /* ElasticJob taskId */                 \
	X(STR, item_param,  "iparam",   1, 0, 0,                   item_param)        /* "" if none */                        \
	X(STR, job_param,   "jparam",   1, 0, 0,                   job_param)         /* "" if none */                        \
	X(STR, cmd,         "cmd",      0, 0, 0,                   cmd)               /* script.command.line */               \
	X(STR, lib,         "lib",      0, 0, 0,                   lib)               /* native.library */                    \
	X(STR, sym,         "sym",      0, 0, 0,                   sym)               /* native.symbol */                     \
	/* kind HTTP: ElasticJob's http.* props (docs/config.md) */                                                           \
	X(STR, uri,         "uri",      0, 0, 0,                   http_uri)          /* http.uri */                          \
	X(STR, method,      "method",   0, 1, FRAME_METHOD_MAX,    http_method)       /* http.method */                       \
	X(STR, data,        "data",     0, 0, 0,                   http_data)         /* http.data */                         \
	X(STR, ctype,       "ctype",    0, 0, 0,                   http_content_type) /* http.content.type */                 \
	X(STR, ca_file,     "cafile",   0, 0, 0,                   http_ca_file)      /* http.ca.file */                      \
	X(U32, connect_ms,  "cto",      0, 0, INT32_MAX,           http_connect_ms)   /* 0: no limit */                       \
	X(U32, read_ms,     "rto",      0, 0, INT32_MAX,           http_read_ms)      /* 0: no limit */                       \
	/* a dataflow job's item (kind NATIVE or EXTERNAL) */                                                                 \
	X(U32, flow,        "flow",     0, 1, FRAME_FLOW_MAX,      dataflow)          /* ejob_dataflow_mode */                \
	X(U32, batch_max,   "bmax",     0, 1, FRAME_BATCH_MAX,     batch_max)         /* dataflow.batch.bytes */              \
	X(STR, fetch,       "fetch",    0, 1, 0,                   fetch_sym)         /* native.fetch */                      \
	X(STR, process,     "proc",     0, 1, 0,                   process_sym)       /* native.process */

/* The C type of each field type. */
#define FRAME_ITEM_CTYPE_U64 uint64_t
#define FRAME_ITEM_CTYPE_U32 uint32_t
#define FRAME_ITEM_CTYPE_STR const char *

#endif
