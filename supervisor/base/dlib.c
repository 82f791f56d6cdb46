/* supervisor/base/dlib.c: see dlib.h. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "supervisor/base/dlib.h"

#define DLIB_NAME(lib, name) #name,
static const char *const pq_names[] = { DLIB_PQ(DLIB_NAME) };
static const char *const curl_names[] = { DLIB_CURL(DLIB_NAME) };
static const char *const mhd_names[] = { DLIB_MHD(DLIB_NAME) };
static void *pq_fn[DLIB_PQ_N], *curl_fn[DLIB_CURL_N], *mhd_fn[DLIB_MHD_N];

struct dlib dlib_pq = { "libpq.so.5", "libpq5", pq_names, DLIB_PQ_N, pq_fn, 0, "" };
struct dlib dlib_curl = { "libcurl.so.4", "libcurl4", curl_names, DLIB_CURL_N, curl_fn, 0, "" };
struct dlib dlib_mhd = { "libmicrohttpd.so.12", "libmicrohttpd12", mhd_names, DLIB_MHD_N, mhd_fn, 0, "" };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static int load(struct dlib *l)
{
	/* RTLD_LOCAL: nothing else resolves against it; the shims call through l->fn */
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(l->err, sizeof l->err, "cannot load %s (%s); install Debian's %s", l->soname, e ? e : "?", l->package);
		return -1;
	}
	for (size_t i = 0; i < l->n; i++) {
		dlerror();
		if (!(l->fn[i] = dlsym(h, l->names[i]))) {
			snprintf(l->err, sizeof l->err, "%s has no %s (too old?); install Debian 12's %s", l->soname, l->names[i],
			         l->package);
			return -1;          /* h stays loaded: its other users may hold it */
		}
	}
	return 0;
}

int dlib_need(struct dlib *l)
{
	pthread_mutex_lock(&mu);
	if (!l->state) l->state = load(l) == 0 ? 1 : -1;
	int st = l->state;
	pthread_mutex_unlock(&mu);
	return st > 0 ? 0 : -1;
}

const char *dlib_error(const struct dlib *l)
{
	return l->err[0] ? l->err : "not loaded";
}
