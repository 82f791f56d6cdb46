/* t/lib/tzkup.c: a ZooKeeper, supervisors on it, and waits on what it shows (see tzkup.h). */
#include "t/lib/tzkup.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "t/lib/tlib.h"
#include "t/tap.h"

/* A preamble that fails ends the test: TAP's bail out, and tlib's exit handler kills every
 * process it started. */
__attribute__((noreturn, format(printf, 1, 2)))
static void bail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fflush(stdout);
	printf("Bail out! tzkup: ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	exit(255);
}

static void pause_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };
	nanosleep(&ts, NULL);
}

static void attach(struct tzkup *u, const char *connect, const char *ns, int session_ms)
{
	snprintf(u->connect, sizeof u->connect, "%s", connect);
	snprintf(u->ns, sizeof u->ns, "%s", ns);
	u->session_ms = session_ms;
	u->regcenter = NULL;
	u->zh = tzk_connect(connect, 10000, NULL, 10000);
	if (!u->zh) bail("cannot connect to ZooKeeper at %s", connect);
}

void tzkup_on(struct tzkup *u, const char *connect, const char *ns, int session_ms)
{
	memset(u, 0, sizeof *u);
	attach(u, connect, ns, session_ms);
}

void tzkup_start(struct tzkup *u, unsigned tick_ms, const char *ns, int session_ms)
{
	memset(u, 0, sizeof *u);
	if (tzk_start(&u->zk, "zk", &(struct tzk_opts){ .tick_ms = tick_ms }, 30000) < 0)
		bail("cannot start ZooKeeper (see above)");
	attach(u, u->zk.connect, ns, session_ms);
}

static char *yaml_of(const struct tzkup *u, const char *supervisor, const char *jobs)
{
	size_t len = strlen(jobs) + 1024;
	char *y = malloc(len);
	if (!y) bail("out of memory");
	int n = snprintf(y, len,
	                 "regCenter: {serverLists: \"%s\", namespace: %s, sessionTimeoutMilliseconds: %d%s%s}\n"
	                 "supervisor: {attachSocket: \"@SOCK@\"%s%s}\n"
	                 "jobs:\n%s",
	                 u->connect, u->ns, u->session_ms, u->regcenter ? ", " : "", u->regcenter ? u->regcenter : "",
	                 supervisor ? ", " : "", supervisor ? supervisor : "", jobs);
	if (n < 0 || (size_t)n >= len) bail("a config too long for its buffer");
	return y;
}

void tzkup_config(const struct tzkup *u, struct tsup *t, const char *name, const char *supervisor, const char *jobs)
{
	char *y = yaml_of(u, supervisor, jobs);
	if (tsup_config(t, name, y) < 0) bail("cannot write the config of %s", name);
	free(y);
}

void tzkup_reconfig(const struct tzkup *u, struct tsup *t, const char *supervisor, const char *jobs)
{
	char *y = yaml_of(u, supervisor, jobs);
	if (tsup_rewrite(t, y) < 0) bail("cannot write the config in %s", t->dir);
	free(y);
}

void tzkup_run(struct tzkup *u, struct tsup *t, const char *ip)
{
	(void)u;
	const char *args[] = { "--ip", ip, NULL };
	if (tsup_start(t, args) <= 0) bail("cannot start the supervisor in %s", t->dir);
}

void tzkup_end(struct tzkup *u)
{
	if (u->zh) tzk_close(u->zh);
	u->zh = NULL;
	if (u->zk.pid) tzk_stop(&u->zk, SIGKILL, 5000);
}

const char *tzkup_path(const struct tzkup *u, const char *job, const char *rel, ...)
{
	static char buf[8][512];
	static unsigned next;
	char *b = buf[next++ % 8];
	int n = snprintf(b, sizeof buf[0], "/%s/%s%s", u->ns, job, rel[0] ? "/" : "");
	va_list ap;
	va_start(ap, rel);
	vsnprintf(b + n, sizeof buf[0] - (size_t)n, rel, ap);
	va_end(ap);
	return b;
}

int64_t tzkup_session(const struct tzkup *u, const char *job, const char *id)
{
	struct Stat st;
	if (tzk_exists(u->zh, tzkup_path(u, job, "instances/%s", id), &st) != ZOK) return 0;
	return st.ephemeralOwner;
}

int tzkup_wait_registered(const struct tzkup *u, const char *job, const char *id, int64_t not_session,
                          unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		int64_t s = tzkup_session(u, job, id);
		if (s && s != not_session) return 1;
		if (tlib_now_ms() >= end) return 0;
		pause_ms(10);
	}
}

int tzkup_wait_leader(const struct tzkup *u, const char *job, const char *id, unsigned timeout_ms)
{
	return tzk_wait_data(u->zh, tzkup_path(u, job, "leader/election/instance"), id, timeout_ms);
}

int tzkup_owned(const struct tzkup *u, const char *job, int total, const char *id)
{
	int n = 0;
	for (int i = 0; i < total; i++) {
		char *d = NULL;
		if (tzk_get(u->zh, tzkup_path(u, job, "sharding/%d/instance", i), &d, NULL) == ZOK && d && !strcmp(d, id)) n++;
		free(d);
	}
	return n;
}

static int pending(const struct tzkup *u, const char *job)
{
	return tzk_exists(u->zh, tzkup_path(u, job, "leader/sharding/necessary"), NULL) != ZNONODE;
}

int tzkup_wait_owned(const struct tzkup *u, const char *job, int total, const char *id, int count,
                     unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		if (tzkup_owned(u, job, total, id) == count && !pending(u, job)) return 1;
		if (tlib_now_ms() >= end) return 0;
		pause_ms(10);
	}
}

uint64_t tzkup_epoch(const struct tzkup *u, const char *job)
{
	struct Stat st;
	if (tzk_exists(u->zh, tzkup_path(u, job, "sharding"), &st) != ZOK || st.mzxid == st.czxid) return 0;
	return (uint64_t)st.mzxid;
}

int tzkup_wait_epoch(const struct tzkup *u, const char *job, uint64_t not_epoch, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		uint64_t e = tzkup_epoch(u, job);
		if (e && e != not_epoch && !pending(u, job)) return 1;
		if (tlib_now_ms() >= end) return 0;
		pause_ms(10);
	}
}

int tzkup_wait_ended(const struct tzkup *u, const char *job, int item, unsigned timeout_ms)
{
	uint64_t end = tlib_now_ms() + timeout_ms;
	for (;;) {
		if (tzk_exists(u->zh, tzkup_path(u, job, "sharding/%d/running", item), NULL) == ZNONODE &&
		    tzk_exists(u->zh, tzkup_path(u, job, "sharding/%d/completed", item), NULL) == ZOK)
			return 1;
		if (tlib_now_ms() >= end) return 0;
		pause_ms(10);
	}
}

int tzkup_ctl(const struct tzkup *u, char **out, char **err, const char *first, ...)
{
	const char *argv[32] = { BUILT("tools/ejobctl") };
	int n = 1;
	va_list ap;
	va_start(ap, first);
	for (const char *a = first; a && n < 25; a = va_arg(ap, const char *)) argv[n++] = a;
	va_end(ap);
	argv[n++] = "--zk", argv[n++] = u->connect, argv[n++] = "--namespace", argv[n++] = u->ns;
	argv[n] = NULL;
	free(*out), free(*err);
	*out = *err = NULL;
	int st = tlib_run(argv, out, err);
	if (!*out) *out = strdup("");
	if (!*err) *err = strdup("");
	if (getenv("EJOB_TEST_SHOW")) {
		char cmd[512] = "$ ejobctl";
		for (int i = 1; i < n - 4; i++) snprintf(cmd + strlen(cmd), sizeof cmd - strlen(cmd), " %s", argv[i]);
		fprintf(stderr, "# %s --zk ... --namespace %s   # exit %d\n%s%s", cmd, u->ns,
		        WIFEXITED(st) ? WEXITSTATUS(st) : -1, *out, *err);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

const char *tzkup_data(const struct tzkup *u, const char *path)
{
	static char *d;
	free(d);
	d = NULL;
	if (tzk_get(u->zh, path, &d, NULL) != ZOK) return "(none)";
	return d ? d : "(null)";
}

int tzkup_missing(const struct tzkup *u, const char *path)
{
	return tzk_exists(u->zh, path, NULL) == ZNONODE;
}

void tzkup_run_n(struct tzkup *u, struct tsup *s, int n, const char *supervisor, const char *jobs)
{
	for (int i = 0; i < n; i++) {
		char name[16], ip[32];
		snprintf(name, sizeof name, "s%d", i);
		snprintf(ip, sizeof ip, "127.0.0.%d", i + 1);
		tzkup_config(u, &s[i], name, supervisor, jobs);
		tzkup_run(u, &s[i], ip);
	}
}

/* ---- playing ElasticJob's leader ---- */

void tzkup_mk(const struct tzkup *u, const char *path, const char *data, int flags)
{
	int rc = zoo_create(u->zh, path, data, data ? (int)strlen(data) : -1, &ZOO_OPEN_ACL_UNSAFE, flags, NULL, 0);
	if (rc != ZOK && rc != ZNODEEXISTS) BAIL_OUT("create %s: %s", path, zerror(rc));
}

void tzkup_ej_leader(const struct tzkup *u, const char *job, const char *root_data, const char *id)
{
	char data[256];
	snprintf(data, sizeof data, "/%s", u->ns);
	tzkup_mk(u, data, "", 0);
	snprintf(data, sizeof data, "/%s/%s", u->ns, job);
	tzkup_mk(u, data, root_data, 0);
	tzkup_mk(u, tzkup_path(u, job, "leader"), "", 0);
	tzkup_mk(u, tzkup_path(u, job, "leader/election"), "", 0);
	tzkup_mk(u, tzkup_path(u, job, "leader/election/instance"), id, ZOO_EPHEMERAL);
	tzkup_mk(u, tzkup_path(u, job, "instances"), "", 0);
	snprintf(data, sizeof data, "jobInstanceId: %s\n", id);
	tzkup_mk(u, tzkup_path(u, job, "instances/%s", id), data, ZOO_EPHEMERAL);
}

int tzkup_ej_shard(const struct tzkup *u, const char *job, const char *const *owner, int n, int again, int raise_again)
{
	enum { MAXN = 16 };
	zoo_op_t ops[2 * MAXN + 2];
	zoo_op_result_t res[2 * MAXN + 2];
	char paths[MAXN][256], flag[256];
	int k = 0;
	if (n > MAXN) BAIL_OUT("tzkup_ej_shard: at most %d items", MAXN);
	for (int i = 0; i < n; i++) {
		snprintf(paths[i], sizeof paths[i], "%s", tzkup_path(u, job, "sharding/%d/instance", i));
		if (again) zoo_delete_op_init(&ops[k++], paths[i], -1);
		zoo_create_op_init(&ops[k++], paths[i], owner[i], (int)strlen(owner[i]), &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	}
	snprintf(flag, sizeof flag, "%s", tzkup_path(u, job, "leader/sharding/necessary"));
	zoo_delete_op_init(&ops[k++], flag, -1);
	if (raise_again) zoo_create_op_init(&ops[k++], flag, "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	return zoo_multi(u->zh, k, ops, res);
}
