/* t/native/libzkslow.c: a fault for tests, loaded into a supervisor with LD_PRELOAD: ZooKeeper
 * is slow to answer one kind of read. The answer to a listing of a job's instances/ made
 * without a watch (the leader's sharding reads it so) reaches the supervisor EJOB_ZKSLOW_MS
 * later than ZooKeeper sent it, while everything else (watch events, other answers) comes on
 * time, as it does when a loaded server or network holds one answer back. It widens, to a size a
 * test can hit, the window between the leader's listing of the instances and its sharding
 * commit, in which an instance that goes was once lost (t/61).
 *
 * It wraps zoo_awget_children (found with dlsym(RTLD_NEXT)); the late answer is handed to the
 * original completion from a thread of its own, as the client's completion thread would. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zookeeper/zookeeper.h>

typedef int (*awgc_fn)(zhandle_t *, const char *, watcher_fn, void *, strings_completion_t, const void *);

struct late {
	strings_completion_t cb;
	const void *data;
	int rc;
	struct String_vector sv;
	long ms;
};

static void *deliver(void *arg)
{
	struct late *l = arg;
	struct timespec ts = { l->ms / 1000, (l->ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0) {}
	l->cb(l->rc, &l->sv, l->data);
	for (int i = 0; i < l->sv.count; i++) free(l->sv.data[i]);
	free(l->sv.data);
	free(l);
	return NULL;
}

static long delay_ms(void)
{
	const char *e = getenv("EJOB_ZKSLOW_MS");
	return e ? atol(e) : 0;
}

static void held(int rc, const struct String_vector *sv, const void *data)
{
	struct late *l = (struct late *)(uintptr_t)data;
	l->rc = rc;
	if (sv && sv->count > 0 && (l->sv.data = calloc((size_t)sv->count, sizeof(char *)))) {
		for (int i = 0; i < sv->count; i++) l->sv.data[i] = strdup(sv->data[i]);
		l->sv.count = sv->count;
	}
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, deliver, l) != 0) deliver(l);
	pthread_attr_destroy(&a);
}

int zoo_awget_children(zhandle_t *zh, const char *path, watcher_fn watcher, void *wctx, strings_completion_t cb,
                       const void *data);
int zoo_awget_children(zhandle_t *zh, const char *path, watcher_fn watcher, void *wctx, strings_completion_t cb,
                       const void *data)
{
	static awgc_fn real;
	if (!real) real = (awgc_fn)dlsym(RTLD_NEXT, "zoo_awget_children");
	size_t n = path ? strlen(path) : 0;
	long ms = delay_ms();
	if (watcher || !cb || ms <= 0 || n < 10 || strcmp(path + n - 10, "/instances")) return real(zh, path, watcher, wctx, cb, data);
	struct late *l = calloc(1, sizeof *l);
	if (!l) return real(zh, path, watcher, wctx, cb, data);
	l->cb = cb;
	l->data = data;
	l->ms = ms;
	int rc = real(zh, path, watcher, wctx, held, l);
	if (rc != ZOK) free(l);
	return rc;
}
