/* worker/native.h: native jobs (docs/worker.md, "Running an item", native): a function in a
 * shared library, `int sym(const ejob_context *ctx)`, called on the worker's main thread. */
#ifndef EJOB_NATIVE_H
#define EJOB_NATIVE_H

#include "worker/ejob.h"
#include "worker/outcome.h"

typedef struct native_cache native_cache_t;   /* libraries opened so far, by path */

native_cache_t *native_cache_new(void);
void native_cache_free(native_cache_t *c);    /* dlcloses them all */

/* Run ctx->sym from ctx->lib: dlopen(lib, RTLD_NOW | RTLD_LOCAL) the first time the path is
 * seen (a failed dlopen is not cached: the library may appear later), dlsym, then call it
 * with the slot marked as in native code (no heartbeat expected meanwhile). 0: ok; anything
 * else: failed with that code; a cancel asked for while it ran: timeout / cancelled with that
 * code; dlopen or dlsym failure, or no lib/sym: error with dlerror()'s text. A dataflow item
 * (ctx->dataflow) runs ejob_dataflow with ctx->fetch_sym and ctx->process_sym from lib instead. */
void native_run(native_cache_t *c, ejob_slot *slot, const ejob_context *ctx, struct outcome *out);

#endif
