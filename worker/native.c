/* worker/native.c: native jobs (see native.h). */
#include "worker/native.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lib {
	struct lib *next;
	void *handle;
	char path[];
};

struct native_cache {
	struct lib *libs;
};

typedef int native_fn(const ejob_context *ctx);

native_cache_t *native_cache_new(void)
{
	return calloc(1, sizeof(native_cache_t));
}

void native_cache_free(native_cache_t *c)
{
	if (!c) return;
	while (c->libs) {
		struct lib *l = c->libs;
		c->libs = l->next;
		dlclose(l->handle);
		free(l);
	}
	free(c);
}

static void *open_lib(native_cache_t *c, const char *path, const char **why)
{
	for (struct lib *l = c->libs; l; l = l->next)
		if (!strcmp(l->path, path)) return l->handle;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		*why = dlerror();
		return NULL;
	}
	size_t n = strlen(path);
	struct lib *l = malloc(sizeof *l + n + 1);
	if (!l) {
		dlclose(h);
		*why = "out of memory";
		return NULL;
	}
	memcpy(l->path, path, n + 1);
	l->handle = h;
	l->next = c->libs;
	c->libs = l;
	return h;
}

/* dlsym one symbol of h as a function pointer, or NULL with the reason in o->err. */
static void *find_sym(void *h, const char *sym, struct outcome *o)
{
	dlerror();
	void *p = dlsym(h, sym);
	const char *why = dlerror();
	if (why || !p) {
		snprintf(o->err, sizeof o->err, "%s", why ? why : "dlsym returned NULL");
		return NULL;
	}
	return p;
}

static int has(const char *s)
{
	return s && s[0];
}

/* A dataflow item: ejob_dataflow with the library's fetch and process functions. */
static void run_dataflow(void *h, ejob_slot *slot, const ejob_context *ctx, struct outcome *o)
{
	void *pf = find_sym(h, ctx->fetch_sym, o), *pp = pf ? find_sym(h, ctx->process_sym, o) : NULL;
	if (!pp) return;
	ejob_fetch_fn *fetch;
	ejob_process_fn *process;
	memcpy(&fetch, &pf, sizeof fetch);   /* object pointer to function pointer, as POSIX allows */
	memcpy(&process, &pp, sizeof process);
	ejob_set_in_native(slot, 1);
	int code = 0;
	o->status = ejob_dataflow(ctx, fetch, process, NULL, &code, o->err, sizeof o->err);
	ejob_set_in_native(slot, 0);
	ejob_heartbeat(slot);
	o->code = code;
	if (o->status == EJOB_OK || o->status == EJOB_TIMEOUT || o->status == EJOB_CANCELLED) o->err[0] = '\0';
}

void native_run(native_cache_t *c, ejob_slot *slot, const ejob_context *ctx, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	o->status = EJOB_ERROR;
	int flow = ctx->size >= sizeof *ctx && ctx->dataflow;
	if (!has(ctx->lib) || (!flow && !has(ctx->sym)) || (flow && (!has(ctx->fetch_sym) || !has(ctx->process_sym)))) {
		snprintf(o->err, sizeof o->err, "native item without %s (props native.library and native.%s)",
		         !has(ctx->lib) ? "a library" : flow ? "its functions" : "a symbol",
		         flow ? "fetch, native.process" : "symbol");
		return;
	}
	const char *why = NULL;
	void *h = open_lib(c, ctx->lib, &why);
	if (!h) {
		snprintf(o->err, sizeof o->err, "%s", why ? why : "dlopen failed");
		return;
	}
	if (flow) {
		run_dataflow(h, slot, ctx, o);
		return;
	}
	void *p = find_sym(h, ctx->sym, o);
	if (!p) return;
	native_fn *fn;
	memcpy(&fn, &p, sizeof fn);   /* object pointer to function pointer, as POSIX allows */
	ejob_set_in_native(slot, 1);
	int rc = fn(ctx);
	ejob_set_in_native(slot, 0);
	ejob_heartbeat(slot);
	int cancel = ejob_cancelled(ctx);
	o->code = rc;
	if (cancel)
		o->status = cancel == EJOB_CANCEL_TIMEOUT ? EJOB_TIMEOUT : EJOB_CANCELLED;
	else
		o->status = rc ? EJOB_FAILED : EJOB_OK;
}
