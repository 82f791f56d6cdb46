/* tools/ejobctl_zk.c: connection options, a synchronous ZooKeeper session, reads and job names for
 * ejobctl's cluster commands (tools/ejobctl_zk.h); their tables and JSON: tools/ejobctl_out.c. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf_int.h"
#include "tools/ejobctl_zk.h"

/* ---- options ----------------------------------------------------------------------------- */

/* argv[*i] is --name VALUE or --name=VALUE (or the short form): the value, else NULL */
static const char *opt_value(int argc, char **argv, int *i, const char *lng, const char *shrt, int *bad)
{
	const char *a = argv[*i];
	size_t n = strlen(lng);
	if (!strncmp(a, lng, n) && a[n] == '=') return a + n + 1;
	if (strcmp(a, lng) && (!shrt || strcmp(a, shrt))) return NULL;
	if (*i + 1 >= argc) {
		*bad = 1;
		return NULL;
	}
	return argv[++*i];
}

const char *ctl_default_file(void)
{
	const char *e = getenv("EJOB_CONFIG");
	if (e) return *e ? e : NULL;
	return access(CTL_DEFAULT_FILE, F_OK) == 0 ? CTL_DEFAULT_FILE : NULL;
}

conf_t *ctl_load_conf(const char *cmd, const char *file, const char *why)
{
	conf_diags_t *d = NULL;
	conf_t *conf = conf_load_file(file, NULL, &d);
	if (!conf) {
		for (size_t k = 0; d && k < conf_diags_count(d); k++) fprintf(stderr, "%s\n", conf_diags_get(d, k)->text);
		if (!d || !conf_diags_count(d)) fprintf(stderr, "%s: cannot read: %s\n", file, strerror(errno));
		fprintf(stderr, "ejobctl %s: %s: the configuration does not load (above); %s\n", cmd, file, why);
	}
	conf_diags_free(d);
	return conf;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? v : NULL;
}

int ctl_options(struct ctl *c, const char *cmd, int *argc, char **argv)
{
	memset(c, 0, sizeof *c);
	c->cmd = cmd;
	c->timeout_ms = 5000;
	c->out = stdout;
	c->err = stderr;
	const char *file = NULL, *hosts = NULL, *ns = NULL, *digest = NULL, *tmo = NULL;
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		int bad = 0;
		const char *v;
		const char *a = argv[i];
		if (!strcmp(a, "--")) {             /* the rest is positional */
			while (i < *argc) argv[out++] = argv[i++];
			break;
		}
		if ((v = opt_value(*argc, argv, &i, "--zk", NULL, &bad))) hosts = v;
		else if (!bad && (v = opt_value(*argc, argv, &i, "--namespace", NULL, &bad))) ns = v;
		else if (!bad && (v = opt_value(*argc, argv, &i, "--digest", NULL, &bad))) digest = v;
		else if (!bad && (v = opt_value(*argc, argv, &i, "--config", "-c", &bad))) file = v;
		else if (!bad && (v = opt_value(*argc, argv, &i, "--timeout", NULL, &bad))) tmo = v;
		else if (!bad && !strcmp(a, "--json")) c->json = 1;
		else if (!bad) argv[out++] = argv[i];
		if (bad) return ctl_msg(c, 2, "%s needs a value", a);
	}
	*argc = out;
	argv[out] = NULL;
	if (tmo) {
		char *e;
		errno = 0;
		double s = strtod(tmo, &e);
		if (errno || e == tmo || *e || !(s > 0 && s <= 600))
			return ctl_msg(c, 2, "--timeout %s: give the seconds to wait for ZooKeeper, more than 0 and at most 600", tmo);
		c->timeout_ms = (int)(s * 1000);
	}
	/* where the cluster is, each of the three on its own: a flag, else -c FILE's regCenter, else
	 * the environment, else the default file (read only when something is still missing) */
	if (file && !(c->conf = ctl_load_conf(cmd, file, "its regCenter is needed"))) return 2;
	if (c->conf) {
		if (!hosts) hosts = c->conf->reg_center.server_lists;
		if (!ns) ns = c->conf->reg_center.namespace;
		if (!digest) digest = c->conf->reg_center.digest;
	}
	if (!hosts) hosts = env("EJOB_ZK");
	if (!ns) ns = env("EJOB_NAMESPACE");
	if (!digest) digest = env("EJOB_DIGEST");
	const char *df;
	if (!file && (!hosts || !ns) && (df = ctl_default_file())) {
		if (!(c->conf = ctl_load_conf(cmd, df, "it is read for the regCenter when no --zk/--namespace, -c FILE or "
		                                       "EJOB_ZK/EJOB_NAMESPACE says where the cluster is (EJOB_CONFIG=\"\" reads none)")))
			return 2;
		if (!hosts) hosts = c->conf->reg_center.server_lists;
		if (!ns) ns = c->conf->reg_center.namespace;
		if (!digest) digest = c->conf->reg_center.digest;
	}
	if (!hosts || !*hosts)
		return ctl_msg(c, 2, "which cluster? give --zk HOSTS --namespace NS, or -c FILE (its regCenter), or set EJOB_ZK "
		               "and EJOB_NAMESPACE ('ejobctl --help' tells the order)");
	if (!ns) return ctl_msg(c, 2, "which namespace? give --namespace NS (regCenter.namespace, or EJOB_NAMESPACE)");
	while (*ns == '/') ns++;
	static char nsbuf[CONF_MAX_NAME_BYTES + 1];
	size_t n = strlen(ns);
	while (n && ns[n - 1] == '/') n--;
	if (!n || n > CONF_MAX_NAME_BYTES || memchr(ns, '/', n))
		return ctl_msg(c, 2, "namespace '%s': give one path segment of at most %d bytes, e.g. --namespace prod", ns,
		               CONF_MAX_NAME_BYTES);
	memcpy(nsbuf, ns, n);
	nsbuf[n] = 0;
	c->hosts = hosts;
	c->ns = nsbuf;
	c->digest = digest && *digest ? digest : NULL;
	return 0;
}

/* ---- the session --------------------------------------------------------------------------- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int zstate;
static int auth_rc = 1;     /* 1: no answer yet */

static void watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh, (void)path, (void)ctx;
	if (type != ZOO_SESSION_EVENT) return;
	pthread_mutex_lock(&mu);
	zstate = state;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void auth_done(int rc, const void *data)
{
	(void)data;
	pthread_mutex_lock(&mu);
	auth_rc = rc;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

/* wait until *v != 1 (auth) or zstate is connected/dead, at most until dl */
static int wait_until(const struct timespec *dl, int auth)
{
	int r = 0;
	pthread_mutex_lock(&mu);
	while (r != ETIMEDOUT) {
		if (auth ? auth_rc != 1 : (zstate == ZOO_CONNECTED_STATE || zstate == ZOO_AUTH_FAILED_STATE ||
		                           zstate == ZOO_EXPIRED_SESSION_STATE))
			break;
		r = pthread_cond_timedwait(&cv, &mu, dl);
	}
	int s = auth ? auth_rc : zstate;
	pthread_mutex_unlock(&mu);
	return s;
}

/* Whether any host:port of hosts ("h1:p1,h2:p2/chroot") resolves; the ones that do not, into
 * bad ("" if none), and the first reason into why. The ZooKeeper client resolves them too, but
 * says only "No such file or directory" when none does. */
static int resolves(const char *hosts, char *bad, size_t blen, char *why, size_t wlen)
{
	int any = 0;
	size_t nb = 0;
	bad[0] = why[0] = 0;
	size_t end = strcspn(hosts, "/");
	for (size_t i = 0; i < end;) {
		size_t n = strcspn(hosts + i, ",/");
		if (n > end - i) n = end - i;
		char hp[300];
		snprintf(hp, sizeof hp, "%.*s", (int)n, hosts + i);
		i += n + 1;
		char *host = hp, *port = strrchr(hp, ':');
		if (!*hp) continue;
		if (port) *port++ = 0;
		if (host[0] == '[' && host[strlen(host) - 1] == ']') host++, host[strlen(host) - 1] = 0;
		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res = NULL;
		int rc = getaddrinfo(host, port && *port ? port : "2181", &hints, &res);
		if (res) freeaddrinfo(res);
		if (!rc) {
			any = 1;
			continue;
		}
		if (!*why) snprintf(why, wlen, "%s", rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		if (nb < blen) nb += (size_t)snprintf(bad + nb, blen - nb, "%s%s", nb ? ", " : "", host);
	}
	return any || !*bad;
}

int ctl_connect(struct ctl *c)
{
	if (c->kept) return c->zh ? 0 : ctl_msg(c, 1, "ZooKeeper at %s is unreachable", c->hosts);
	static FILE *devnull;
	if (!devnull) devnull = fopen("/dev/null", "we");
	/* the client's own log (connection refused, retries) is not for the operator: the one
	 * message that matters comes from here */
	if (devnull && !getenv("EJOBCTL_ZK_LOG")) zoo_set_log_stream(devnull);
	zoo_set_debug_level(getenv("EJOBCTL_ZK_LOG") ? ZOO_LOG_LEVEL_DEBUG : ZOO_LOG_LEVEL_ERROR);
	pthread_mutex_lock(&mu);
	zstate = 0;                 /* a session of an earlier ctl_connect in this process says nothing */
	auth_rc = 1;
	pthread_mutex_unlock(&mu);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += c->timeout_ms / 1000;
	dl.tv_nsec += (long)(c->timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) dl.tv_sec++, dl.tv_nsec -= 1000000000L;
	char unresolved[512], why[256];
	if (!resolves(c->hosts, unresolved, sizeof unresolved, why, sizeof why))
		return ctl_msg(c, 1, "cannot resolve %s: %s (is --zk right?)", unresolved, why);
	c->zh = zookeeper_init(c->hosts, watcher, 10000, NULL, NULL, 0);
	if (!c->zh) {
		if (*unresolved) return ctl_msg(c, 1, "cannot resolve %s: %s (is --zk right?)", unresolved, why);
		return ctl_msg(c, 1, "ZooKeeper servers '%s': %s (give host:port,host:port)", c->hosts, strerror(errno));
	}
	int s = wait_until(&dl, 0);
	int r = 0;
	/* the message first: c->hosts may be -c FILE's, which ctl_close frees */
	if (s != ZOO_CONNECTED_STATE) {
		if (*unresolved)
			r = ctl_msg(c, 1, "cannot reach ZooKeeper at %s within %g s (%s does not resolve: %s; is --zk right?)",
			            c->hosts, c->timeout_ms / 1000.0, unresolved, why);
		else
			r = ctl_msg(c, 1, "cannot reach ZooKeeper at %s within %g s (is it running? is --zk right?)", c->hosts,
			            c->timeout_ms / 1000.0);
		ctl_close(c);
		return r;
	}
	if (c->digest) {
		int rc = zoo_add_auth(c->zh, "digest", c->digest, (int)strlen(c->digest), auth_done, NULL);
		if (rc == ZOK) rc = wait_until(&dl, 1);
		if (rc != ZOK) {
			r = ctl_msg(c, 1, "ZooKeeper at %s refused the digest: %s", c->hosts, rc == 1 ? "no answer" : zerror(rc));
			ctl_close(c);
			return r;
		}
	}
	char p[CTL_PATH_MAX];
	int rc = ctl_exists(c, ctl_path(c, p, "%s", ""), NULL);
	c->ns_missing = rc == ZNONODE;
	if (rc == ZNONODE && c->ns_may_be_new)
		r = 0;
	else if (rc == ZNONODE)
		r = ctl_msg(c, 1, "namespace /%s does not exist at %s (no job was ever registered there; is --namespace right?)",
		            c->ns, c->hosts);
	else if (rc != ZOK)
		r = ctl_fail(c, rc, "cannot read", p);
	if (r) ctl_close(c);
	return r;
}

int ctl_ns_create(struct ctl *c)
{
	char p[CTL_PATH_MAX];
	int rc = zoo_create(c->zh, ctl_path(c, p, "%s", ""), "", 0, c->digest ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE,
	                    0, NULL, 0);
	if (rc != ZOK && rc != ZNODEEXISTS) return ctl_fail(c, rc, "cannot create the namespace", p);
	c->ns_missing = 0;
	return 0;
}

void ctl_close(struct ctl *c)
{
	if (c->kept) return;
	if (c->zh) zookeeper_close(c->zh);
	c->zh = NULL;
	conf_free(c->conf);
	c->conf = NULL;
}

const char *ctl_path(const struct ctl *c, char *buf, const char *fmt, ...)
{
	int n = snprintf(buf, CTL_PATH_MAX, "/%s", c->ns);
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, CTL_PATH_MAX - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || n + m >= CTL_PATH_MAX) {
		fprintf(stderr, "ejobctl %s: a path longer than %d bytes\n", c->cmd, CTL_PATH_MAX);
		exit(1);
	}
	return buf;
}

/* ---- reads --------------------------------------------------------------------------------- */

/* A batch in flight: the completions (on the client's thread) fill their own request, then
 * count down here and signal; ctl_read_many reads a request only after it has counted it down
 * under mu, so what the completion wrote is seen. */
struct batch {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int out;                    /* sent, not answered */
	int lost;                   /* an answer said the session is gone (ZCONNECTIONLOSS, ...): its code */
};

struct slot {
	struct batch *b;
	void *req;                  /* a struct ctl_read or a struct ctl_multi */
};

/* The sender waits for the window to drain to half (or, at the end, to empty), and is woken once
 * for that, not for every answer: a wake per answer was a context switch per read, and most of a
 * listing's time. */
#define LOW_WATER (CTL_WINDOW / 2)

static int gone(int rc)
{
	return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE ||
	       rc == ZCLOSING;
}

static void answered(const struct slot *s, int rc)
{
	pthread_mutex_lock(&s->b->mu);
	if (gone(rc) && !s->b->lost) s->b->lost = rc;
	int out = --s->b->out;
	if (out == LOW_WATER || out == 0) pthread_cond_signal(&s->b->cv);
	pthread_mutex_unlock(&s->b->mu);
}

static void got_data(int rc, const char *value, int len, const struct Stat *st, const void *data)
{
	const struct slot *s = data;
	struct ctl_read *r = s->req;
	if (rc == ZOK) {
		size_t n = value && len > 0 ? (size_t)len : 0;
		if ((r->data = malloc(n + 1))) {
			if (n) memcpy(r->data, value, n);
			r->data[n] = 0;
			r->st = *st;
		} else {
			rc = ZSYSTEMERROR;
		}
	}
	r->rc = rc;
	answered(s, rc);
}

static void got_stat(int rc, const struct Stat *st, const void *data)
{
	const struct slot *s = data;
	struct ctl_read *r = s->req;
	if (rc == ZOK) r->st = *st;
	r->rc = rc;
	answered(s, rc);
}

static void got_children(int rc, const struct String_vector *v, const void *data)
{
	const struct slot *s = data;
	struct ctl_read *r = s->req;
	if (rc == ZOK) {
		int n = v ? v->count : 0;
		char **out = calloc((size_t)n + 1, sizeof *out);
		for (int i = 0; out && i < n; i++)
			if (!(out[i] = strdup(v->data[i]))) {
				ctl_strv_free(out, i);
				out = NULL;
			}
		if (out) {
			r->names = out;     /* sorted by ctl_read_many, off this thread */
			r->n = n;
		} else {
			rc = ZSYSTEMERROR;
		}
	}
	r->rc = rc;
	answered(s, rc);
}

static void got_multi(int rc, const void *data)
{
	const struct slot *s = data;
	((struct ctl_multi *)s->req)->rc = rc;
	answered(s, rc);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Send request i (an asynchronous call whose completion gets s); its own rc if it was not sent. */
typedef int send_fn(struct ctl *c, void *reqs, int i, struct slot *s);
/* Request i gets rc without being sent (not sent, or the session is gone). */
typedef void fail_fn(void *reqs, int i, int rc);

/* n requests pipelined, at most CTL_WINDOW unanswered; returns when every one has its answer.
 * 0, or -1 if out of memory (then every request was failed with ZSYSTEMERROR). */
static int pipeline(struct ctl *c, void *reqs, int n, send_fn *send, fail_fn *fail, void *(*req_at)(void *, int))
{
	struct slot *s = n > 0 ? malloc((size_t)n * sizeof *s) : NULL;
	if (!s) {
		for (int i = 0; i < n; i++) fail(reqs, i, ZSYSTEMERROR);
		return n > 0 ? -1 : 0;
	}
	struct batch b = { .out = 0, .lost = 0 };
	pthread_mutex_init(&b.mu, NULL);
	pthread_cond_init(&b.cv, NULL);
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&b.mu);
		if (b.out >= CTL_WINDOW)
			while (b.out > LOW_WATER) pthread_cond_wait(&b.cv, &b.mu);
		int lost = b.lost;
		if (!lost) b.out++;
		pthread_mutex_unlock(&b.mu);
		if (lost) {                 /* the rest would only wait for the reconnect to fail them too */
			fail(reqs, i, lost);
			continue;
		}
		s[i] = (struct slot){ &b, req_at(reqs, i) };
		int rc = send(c, reqs, i, &s[i]);
		if (rc != ZOK) {            /* not sent: no completion will come */
			fail(reqs, i, rc);
			pthread_mutex_lock(&b.mu);
			b.out--;
			if (gone(rc) && !b.lost) b.lost = rc;
			pthread_mutex_unlock(&b.mu);
		}
	}
	pthread_mutex_lock(&b.mu);
	while (b.out > 0) pthread_cond_wait(&b.cv, &b.mu);
	pthread_mutex_unlock(&b.mu);
	pthread_cond_destroy(&b.cv);
	pthread_mutex_destroy(&b.mu);
	free(s);
	return 0;
}

static void *read_at(void *reqs, int i) { return (struct ctl_read *)reqs + i; }
static void read_fail(void *reqs, int i, int rc) { ((struct ctl_read *)reqs)[i].rc = rc; }

static int read_send(struct ctl *c, void *reqs, int i, struct slot *s)
{
	struct ctl_read *r = (struct ctl_read *)reqs + i;
	if (c->watch)
		return r->op == CTL_GET      ? zoo_awget(c->zh, r->path, c->watch, c->watch_ctx, got_data, s)
		       : r->op == CTL_EXISTS ? zoo_awexists(c->zh, r->path, c->watch, c->watch_ctx, got_stat, s)
		                             : zoo_awget_children(c->zh, r->path, c->watch, c->watch_ctx, got_children, s);
	return r->op == CTL_GET      ? zoo_aget(c->zh, r->path, 0, got_data, s)
	       : r->op == CTL_EXISTS ? zoo_aexists(c->zh, r->path, 0, got_stat, s)
	                             : zoo_aget_children(c->zh, r->path, 0, got_children, s);
}

/* With c->watch: the gets and listings of r that found no node, as exists with the watch (armed
 * for the node's creation); one made meanwhile is a creation the caller hears of now. */
static void watch_absent(struct ctl *c, const struct ctl_read *r, int n)
{
	int k = 0;
	for (int i = 0; i < n; i++) k += r[i].op != CTL_EXISTS && r[i].rc == ZNONODE;
	if (!k) return;
	struct ctl_read *e = calloc((size_t)k, sizeof *e);
	CTL_NEED(e);
	k = 0;
	for (int i = 0; i < n; i++)
		if (r[i].op != CTL_EXISTS && r[i].rc == ZNONODE) e[k++] = (struct ctl_read){ .op = CTL_EXISTS, .path = r[i].path };
	pipeline(c, e, k, read_send, read_fail, read_at);
	for (int i = 0; i < k; i++)
		if (e[i].rc == ZOK) c->watch(c->zh, ZOO_CREATED_EVENT, ZOO_CONNECTED_STATE, e[i].path, c->watch_ctx);
	free(e);
}

void ctl_read_many(struct ctl *c, struct ctl_read *r, int n)
{
	for (int i = 0; i < n; i++) {
		r[i].rc = ZOK;
		r[i].data = NULL;
		r[i].names = NULL;
		r[i].n = 0;
	}
	pipeline(c, r, n, read_send, read_fail, read_at);
	if (c->watch) watch_absent(c, r, n);
	for (int i = 0; i < n; i++)
		if (r[i].names) qsort(r[i].names, (size_t)r[i].n, sizeof *r[i].names, cmp_str);
}

static void *multi_at(void *reqs, int i) { return (struct ctl_multi *)reqs + i; }
static void multi_fail(void *reqs, int i, int rc) { ((struct ctl_multi *)reqs)[i].rc = rc; }

static int multi_send(struct ctl *c, void *reqs, int i, struct slot *s)
{
	struct ctl_multi *m = (struct ctl_multi *)reqs + i;
	return zoo_amulti(c->zh, m->n, m->ops, m->res, got_multi, s);
}

void ctl_multi_many(struct ctl *c, struct ctl_multi *m, int n)
{
	for (int i = 0; i < n; i++) m[i].rc = ZOK;
	pipeline(c, m, n, multi_send, multi_fail, multi_at);
}

int ctl_get(struct ctl *c, const char *path, char **data, struct Stat *st)
{
	struct ctl_read r = { .op = CTL_GET, .path = path };
	ctl_read_many(c, &r, 1);
	*data = r.data;
	if (st && r.rc == ZOK) *st = r.st;
	return r.rc;
}

int ctl_exists(struct ctl *c, const char *path, struct Stat *st)
{
	struct ctl_read r = { .op = CTL_EXISTS, .path = path };
	ctl_read_many(c, &r, 1);
	if (st && r.rc == ZOK) *st = r.st;
	return r.rc;
}

int ctl_children(struct ctl *c, const char *path, char ***names, int *n)
{
	struct ctl_read r = { .op = CTL_CHILDREN, .path = path };
	ctl_read_many(c, &r, 1);
	*names = r.names;
	*n = r.n;
	return r.rc;
}

void ctl_strv_free(char **v, int n)
{
	for (int i = 0; v && i < n; i++) free(v[i]);
	free(v);
}

int ctl_msg(const struct ctl *c, int status, const char *fmt, ...)
{
	va_list ap;
	if (c->msg) {
		/* serve: a failure's sentences in msg (the first, then each later one on a line of its
		 * own, as the CLI prints them), a warning (status 0) as a line of c->err */
		if (status) {
			size_t used = strlen(c->msg);
			if (used && used + 2 < c->msgcap) c->msg[used++] = '\n', c->msg[used] = 0;
			if (used + 1 < c->msgcap) {
				va_start(ap, fmt);
				vsnprintf(c->msg + used, c->msgcap - used, fmt, ap);
				va_end(ap);
			}
		} else if (c->err && c->err != stderr) {
			va_start(ap, fmt);
			vfprintf(c->err, fmt, ap);
			va_end(ap);
			fputc('\n', c->err);
		}
		return status;
	}
	fprintf(stderr, "ejobctl %s: ", c->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}

int ctl_fail(const struct ctl *c, int rc, const char *what, const char *path)
{
	const char *hint = rc == ZNOAUTH ? " (the node's ACL refuses this client: give the cluster's --digest USER:PASS)"
	                   : rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ? " (ZooKeeper went away; try again)"
	                   : "";
	return ctl_msg(c, 1, "%s %s: %s%s", what, path, zerror(rc), hint);
}

void ctl_oom(void)
{
	fputs("ejobctl: out of memory\n", stderr);
	exit(1);
}

/* ---- job names ----------------------------------------------------------------------------- */

int ctl_jobs(struct ctl *c, char ***names, int *n)
{
	char p[CTL_PATH_MAX];
	char **kids;
	int nk;
	*names = NULL;
	*n = 0;
	int rc = ctl_children(c, ctl_path(c, p, "%s", ""), &kids, &nk);
	if (rc == ZNONODE && c->ns_may_be_new) return 0;   /* no namespace yet: no job */
	if (rc != ZOK) return ctl_fail(c, rc, "cannot list", p);
	/* a job is what has a config node (ElasticJob's JobStatisticsAPI skips the rest) */
	struct ctl_read *r = calloc((size_t)nk + 1, sizeof *r);
	char **paths = calloc((size_t)nk + 1, sizeof *paths);
	int ok = r && paths;
	for (int i = 0; ok && i < nk; i++) {
		ok = (paths[i] = strdup(ctl_path(c, p, "/%s/config", kids[i]))) != NULL;
		r[i] = (struct ctl_read){ .op = CTL_EXISTS, .path = paths[i] };
	}
	if (ok) ctl_read_many(c, r, nk);
	int k = 0, fail = ok ? 0 : ctl_msg(c, 1, "out of memory");
	for (int i = 0; i < nk; i++) {
		if (!fail && r[i].rc == ZOK) {
			kids[k++] = kids[i];
			continue;
		}
		if (!fail && r[i].rc != ZNONODE) fail = ctl_fail(c, r[i].rc, "cannot read", paths[i]);
		free(kids[i]);
	}
	ctl_strv_free(paths, nk);
	free(r);
	if (fail) {
		ctl_strv_free(kids, k);
		return fail;
	}
	*names = kids;
	*n = k;
	return 0;
}

/* the node's overwrite key, as the supervisor reads it; 0 if it does not parse */
static int overwrites(const char *job, const char *data, size_t len)
{
	if (!data || !len) return 0;
	conf_diags_t *d = NULL;
	conf_job_t *j = conf_node_parse(data, len, job, &d);
	int o = j && j->overwrite;
	conf_job_free(j);
	conf_diags_free(d);
	return o;
}

void ctl_warn_overwrite(const struct ctl *c, const char *job, const char *old, size_t oldlen, const char *new_,
                        size_t newlen)
{
	if (!overwrites(job, old, oldlen) && !overwrites(job, new_, newlen)) return;
	if (new_)
		ctl_msg(c, 0, "warning: job '%s' has overwrite: true: a supervisor with '%s' in its config file publishes "
		        "the file's config when it starts or reloads, and undoes this change; to keep it, set overwrite: "
		        "false for the job in the supervisors' files, or make the change in the files", job, job);
	else
		ctl_msg(c, 0, "warning: job '%s' has overwrite: true: a supervisor with '%s' in its config file registers "
		        "it again, with the file's config, when it starts or reloads; remove the job from the supervisors' "
		        "files too", job, job);
}

const char *ctl_suggest(const char *s, char *const *names, int n)
{
	return conf_suggest(s, (const char *const *)names, (size_t)n);
}

int ctl_need_job(struct ctl *c, const char *job)
{
	char p[CTL_PATH_MAX];
	if (!*job || strchr(job, '/') || strlen(job) > CONF_MAX_NAME_BYTES)
		return ctl_msg(c, 2, "'%s' is not a job name (one path segment)", job);
	int rc = ctl_exists(c, ctl_path(c, p, "/%s/config", job), NULL);
	if (rc == ZOK) return 0;
	if (rc != ZNONODE) return ctl_fail(c, rc, "cannot read", p);
	char **jobs;
	int n;
	if (ctl_jobs(c, &jobs, &n)) return 1;
	const char *near = ctl_suggest(job, jobs, n);
	if (near) ctl_msg(c, 2, "no job '%s' in namespace /%s; did you mean '%s'?", job, c->ns, near);
	else ctl_msg(c, 2, "no job '%s' in namespace /%s (%d job%s there; 'ejobctl jobs' lists them)", job, c->ns, n,
		     n == 1 ? "" : "s");
	ctl_strv_free(jobs, n);
	return 2;
}
