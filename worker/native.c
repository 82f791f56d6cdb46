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

void native_run(native_cache_t *c, ejob_slot *slot, const ejob_context *ctx, struct outcome *o)
{
	memset(o, 0, sizeof *o);
	o->status = EJOB_ERROR;
	if (!ctx->lib || !ctx->lib[0] || !ctx->sym || !ctx->sym[0]) {
		snprintf(o->err, sizeof o->err, "native item without %s (props native.library and native.symbol)",
		         !ctx->lib || !ctx->lib[0] ? "a library" : "a symbol");
		return;
	}
	const char *why = NULL;
	void *h = open_lib(c, ctx->lib, &why);
	if (!h) {
		snprintf(o->err, sizeof o->err, "%s", why ? why : "dlopen failed");
		return;
	}
	dlerror();
	void *p = dlsym(h, ctx->sym);
	why = dlerror();
	if (why || !p) {
		snprintf(o->err, sizeof o->err, "%s", why ? why : "dlsym returned NULL");
		return;
	}
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
