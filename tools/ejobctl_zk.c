/* tools/ejobctl_zk.c: connection options, a synchronous ZooKeeper session, reads, job names,
 * tables and JSON for ejobctl's cluster commands (tools/ejobctl_zk.h). */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

int ctl_options(struct ctl *c, const char *cmd, int *argc, char **argv)
{
	memset(c, 0, sizeof *c);
	c->cmd = cmd;
	c->timeout_ms = 5000;
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
	if (file) {
		conf_diags_t *d = NULL;
		c->conf = conf_load_file(file, NULL, &d);
		if (!c->conf) {
			for (size_t k = 0; d && k < conf_diags_count(d); k++) fprintf(stderr, "%s\n", conf_diags_get(d, k)->text);
			conf_diags_free(d);
			return ctl_msg(c, 2, "%s: the configuration does not load (above); its regCenter is needed", file);
		}
		conf_diags_free(d);
		if (!hosts) hosts = c->conf->reg_center.server_lists;
		if (!ns) ns = c->conf->reg_center.namespace;
		if (!digest) digest = c->conf->reg_center.digest;
	}
	if (!hosts || !*hosts) return ctl_msg(c, 2, "which cluster? give --zk HOSTS --namespace NS, or -c FILE (its regCenter)");
	if (!ns) return ctl_msg(c, 2, "which namespace? give --namespace NS (regCenter.namespace)");
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

int ctl_connect(struct ctl *c)
{
	static FILE *devnull;
	if (!devnull) devnull = fopen("/dev/null", "we");
	/* the client's own log (connection refused, retries) is not for the operator: the one
	 * message that matters comes from here */
	if (devnull && !getenv("EJOBCTL_ZK_LOG")) zoo_set_log_stream(devnull);
	zoo_set_debug_level(getenv("EJOBCTL_ZK_LOG") ? ZOO_LOG_LEVEL_DEBUG : ZOO_LOG_LEVEL_ERROR);
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += c->timeout_ms / 1000;
	dl.tv_nsec += (long)(c->timeout_ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) dl.tv_sec++, dl.tv_nsec -= 1000000000L;
	c->zh = zookeeper_init(c->hosts, watcher, 10000, NULL, NULL, 0);
	if (!c->zh) return ctl_msg(c, 1, "ZooKeeper servers '%s': %s (give host:port,host:port)", c->hosts, strerror(errno));
	int s = wait_until(&dl, 0);
	if (s != ZOO_CONNECTED_STATE) {
		ctl_close(c);
		return ctl_msg(c, 1, "cannot reach ZooKeeper at %s within %g s (is it running? is --zk right?)", c->hosts,
		               c->timeout_ms / 1000.0);
	}
	if (c->digest) {
		int rc = zoo_add_auth(c->zh, "digest", c->digest, (int)strlen(c->digest), auth_done, NULL);
		if (rc == ZOK) rc = wait_until(&dl, 1);
		if (rc != ZOK) {
			ctl_close(c);
			return ctl_msg(c, 1, "ZooKeeper at %s refused the digest: %s", c->hosts, rc == 1 ? "no answer" : zerror(rc));
		}
	}
	char p[CTL_PATH_MAX];
	int rc = ctl_exists(c, ctl_path(c, p, "%s", ""), NULL);
	if (rc == ZNONODE) {
		ctl_close(c);
		return ctl_msg(c, 1, "namespace /%s does not exist at %s (no job was ever registered there; is --namespace right?)",
		               c->ns, c->hosts);
	}
	if (rc != ZOK) {
		int r = ctl_fail(c, rc, "cannot read", p);
		ctl_close(c);
		return r;
	}
	return 0;
}

void ctl_close(struct ctl *c)
{
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

int ctl_get(struct ctl *c, const char *path, char **data, struct Stat *st)
{
	struct Stat s;
	*data = NULL;
	for (int tries = 0; tries < 5; tries++) {
		int rc = zoo_exists(c->zh, path, 0, &s);
		if (rc != ZOK) return rc;
		int len = s.dataLength > 0 ? s.dataLength : 0;
		char *b = malloc((size_t)len + 1);
		if (!b) return ZSYSTEMERROR;
		int got = len;
		rc = zoo_get(c->zh, path, 0, b, &got, &s);
		if (rc != ZOK) {
			free(b);
			return rc;
		}
		if (got > len) {            /* grew between the two reads */
			free(b);
			continue;
		}
		if (got < 0) got = 0;
		b[got] = 0;
		*data = b;
		if (st) *st = s;
		return ZOK;
	}
	return ZBADVERSION;
}

int ctl_exists(struct ctl *c, const char *path, struct Stat *st)
{
	struct Stat s;
	return zoo_exists(c->zh, path, 0, st ? st : &s);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ctl_children(struct ctl *c, const char *path, char ***names, int *n)
{
	struct String_vector v = { 0, NULL };
	*names = NULL;
	*n = 0;
	int rc = zoo_get_children(c->zh, path, 0, &v);
	if (rc != ZOK) return rc;
	char **out = calloc((size_t)v.count + 1, sizeof *out);
	if (!out) {
		deallocate_String_vector(&v);
		return ZSYSTEMERROR;
	}
	for (int i = 0; i < v.count; i++) {
		out[i] = strdup(v.data[i]);
		if (!out[i]) {
			ctl_strv_free(out, i);
			deallocate_String_vector(&v);
			return ZSYSTEMERROR;
		}
	}
	qsort(out, (size_t)v.count, sizeof *out, cmp_str);
	*names = out;
	*n = v.count;
	deallocate_String_vector(&v);
	return ZOK;
}

void ctl_strv_free(char **v, int n)
{
	for (int i = 0; v && i < n; i++) free(v[i]);
	free(v);
}

int ctl_msg(const struct ctl *c, int status, const char *fmt, ...)
{
	va_list ap;
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

/* ---- job names ----------------------------------------------------------------------------- */

int ctl_jobs(struct ctl *c, char ***names, int *n)
{
	char p[CTL_PATH_MAX];
	char **kids;
	int nk;
	*names = NULL;
	*n = 0;
	int rc = ctl_children(c, ctl_path(c, p, "%s", ""), &kids, &nk);
	if (rc != ZOK) return ctl_fail(c, rc, "cannot list", p);
	int k = 0;
	for (int i = 0; i < nk; i++) {
		/* a job is what has a config node (ElasticJob's JobStatisticsAPI skips the rest) */
		rc = ctl_exists(c, ctl_path(c, p, "/%s/config", kids[i]), NULL);
		if (rc == ZOK) kids[k++] = kids[i];
		else free(kids[i]);
		if (rc != ZOK && rc != ZNONODE) {
			for (int j = i + 1; j < nk; j++) free(kids[j]);
			ctl_strv_free(kids, k);
			return ctl_fail(c, rc, "cannot read", p);
		}
	}
	*names = kids;
	*n = k;
	return 0;
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

/* ---- tables -------------------------------------------------------------------------------- */

struct ctl_table {
	int ncols, nrows, cap;
	char **cells;               /* (nrows + 1) x ncols, the header first */
};

static char *dup_or_dash(const char *s)
{
	return strdup(s ? s : "-");
}

static void table_add(struct ctl_table *t, va_list ap)
{
	if (t->nrows + 1 >= t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		char **v = realloc(t->cells, (size_t)cap * (size_t)t->ncols * sizeof *v);
		if (!v) {
			fputs("ejobctl: out of memory\n", stderr);
			exit(1);
		}
		t->cells = v;
		t->cap = cap;
	}
	for (int i = 0; i < t->ncols; i++) {
		char *s = dup_or_dash(va_arg(ap, const char *));
		if (!s) {
			fputs("ejobctl: out of memory\n", stderr);
			exit(1);
		}
		t->cells[t->nrows * t->ncols + i] = s;
	}
	t->nrows++;
}

struct ctl_table *ctl_table_new(int ncols, ...)
{
	struct ctl_table *t = calloc(1, sizeof *t);
	if (!t) {
		fputs("ejobctl: out of memory\n", stderr);
		exit(1);
	}
	t->ncols = ncols;
	va_list ap;
	va_start(ap, ncols);
	table_add(t, ap);
	va_end(ap);
	return t;
}

void ctl_table_row(struct ctl_table *t, ...)
{
	va_list ap;
	va_start(ap, t);
	table_add(t, ap);
	va_end(ap);
}

/* columns on a terminal: UTF-8 continuation bytes take none */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80) w++;
	return w;
}

void ctl_table_print(struct ctl_table *t, FILE *f)
{
	size_t *w = calloc((size_t)t->ncols, sizeof *w);
	if (!w) exit(1);
	for (int r = 0; r < t->nrows; r++)
		for (int i = 0; i < t->ncols; i++) {
			size_t x = width(t->cells[r * t->ncols + i]);
			if (x > w[i]) w[i] = x;
		}
	for (int r = 0; r < t->nrows; r++) {
		for (int i = 0; i < t->ncols; i++) {
			const char *s = t->cells[r * t->ncols + i];
			if (i == t->ncols - 1) {
				fputs(s, f);
			} else {
				fputs(s, f);
				for (size_t k = width(s); k < w[i] + 2; k++) fputc(' ', f);
			}
		}
		fputc('\n', f);
	}
	for (int k = 0; k < t->nrows * t->ncols; k++) free(t->cells[k]);
	free(t->cells);
	free(w);
	free(t);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

void jw_begin(struct jw *w, FILE *f)
{
	memset(w, 0, sizeof *w);
	w->f = f;
	w->first[0] = 1;
}

static void sep(struct jw *w)
{
	if (w->key) {
		w->key = 0;
		return;
	}
	if (!w->first[w->depth]) fputc(',', w->f);
	w->first[w->depth] = 0;
}

static void open_(struct jw *w, int ch)
{
	sep(w);
	fputc(ch, w->f);
	if (w->depth < 63) w->depth++;
	w->first[w->depth] = 1;
	w->close[w->depth] = ch == '{' ? '}' : ']';
}

void jw_obj(struct jw *w) { open_(w, '{'); }
void jw_arr(struct jw *w) { open_(w, '['); }

void jw_end(struct jw *w)
{
	if (w->depth == 0) return;
	fputc(w->close[w->depth], w->f);
	w->depth--;
	if (w->depth == 0) fputc('\n', w->f);
}

static void esc(FILE *f, const unsigned char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned c = s[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc((int)c, f);
		} else if (c == '\n') fputs("\\n", f);
		else if (c == '\t') fputs("\\t", f);
		else if (c == '\r') fputs("\\r", f);
		else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
		else if (c < 0x80) fputc((int)c, f);
		else {
			/* a well-formed UTF-8 sequence goes as is; a stray byte as \u00XX */
			size_t len = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
			size_t k = 1;
			while (len && k < len && i + k < n && (s[i + k] & 0xC0) == 0x80) k++;
			if (len && k == len) {
				fwrite(s + i, 1, len, f);
				i += len - 1;
			} else {
				fprintf(f, "\\u%04x", c);
			}
		}
	}
	fputc('"', f);
}

void jw_key(struct jw *w, const char *k)
{
	sep(w);
	esc(w->f, (const unsigned char *)k, strlen(k));
	fputc(':', w->f);
	w->key = 1;
}

void jw_strn(struct jw *w, const char *s, size_t n)
{
	sep(w);
	esc(w->f, (const unsigned char *)s, n);
}

void jw_str(struct jw *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_strn(w, s, strlen(s));
}

void jw_int(struct jw *w, long long v)
{
	sep(w);
	fprintf(w->f, "%lld", v);
}

void jw_bool(struct jw *w, int v)
{
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w)
{
	sep(w);
	fputs("null", w->f);
}
