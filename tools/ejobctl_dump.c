/* tools/ejobctl_dump.c: ejobctl dump JOB: every node of the job's subtree, /{namespace}/{job}
 * and all under it, with its kind, owner session, mtime and data (ElasticJob's snapshot "dump"
 * command, which prints "PATH | DATA" per node below the job's node, read through the instance's
 * cache; this reads ZooKeeper itself and needs no instance).
 *
 * Depth first, each node before its children, children in byte order (strcmp). ZooKeeper has no
 * snapshot read: the nodes are read one by one, and a node deleted between its parent's listing
 * and its own read is left out. --json gives the schema documented in docs/operations.md:
 *   {"namespace":NS,"job":JOB,"nodes":[{"path","kind","owner","ctime","mtime","version",
 *    "czxid","mzxid","numChildren","dataLength","encoding","data"}...]}
 * Data that is not UTF-8 goes as base64 in JSON ("encoding":"base64") and escaped (\xHH) in the
 * table, so no byte breaks either output. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/ejobctl.h"
#include "tools/ejobctl_zk.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ejobctl dump JOB [--json]\n"
	        "  with --zk HOSTS --namespace NS [--digest USER:PASS] or -c FILE; [--timeout SECONDS]\n\n"
	        "Every node of /NS/JOB and below, depth first: path, kind (persistent or ephemeral), owner\n"
	        "session of an ephemeral node, modification time (UTC) and data (one line: \\n, \\t, \\\\,\n"
	        "and \\xHH for control bytes and bytes that are not UTF-8). --json: one document, the\n"
	        "data exact (UTF-8 text, else base64).\n"
	        "Exit status: 0 ok, 1 runtime failure, 2 usage or an unknown job.\n");
}

struct dnode {
	char *path;
	char *data;
	size_t len;
	struct Stat st;
};

struct dump {
	struct dnode *v;
	int n, cap;
};

/* path and its subtree into d; 0, or 1 after a message. A node gone meanwhile is left out. */
static int walk(struct ctl *c, struct dump *d, const char *path, int depth)
{
	char *data;
	struct Stat st;
	int rc = ctl_get(c, path, &data, &st);
	if (rc == ZNONODE) return 0;
	if (rc != ZOK) return ctl_fail(c, rc, "cannot read", path);
	if (d->n == d->cap) {
		int cap = d->cap ? 2 * d->cap : 64;
		struct dnode *v = realloc(d->v, (size_t)cap * sizeof *v);
		if (!v) {
			free(data);
			return ctl_msg(c, 1, "out of memory");
		}
		d->v = v;
		d->cap = cap;
	}
	char *p = strdup(path);
	if (!p) {
		free(data);
		return ctl_msg(c, 1, "out of memory");
	}
	d->v[d->n++] = (struct dnode){ p, data, st.dataLength > 0 ? (size_t)st.dataLength : 0, st };
	if (st.numChildren == 0 || st.ephemeralOwner) return 0;
	if (depth > 64) return ctl_msg(c, 1, "%s: deeper than 64 levels; not a job's subtree", path);
	char **kids;
	int nk;
	rc = ctl_children(c, path, &kids, &nk);
	if (rc == ZNONODE) return 0;
	if (rc != ZOK) return ctl_fail(c, rc, "cannot list", path);
	int r = 0;
	for (int i = 0; i < nk && !r; i++) {
		char kp[CTL_PATH_MAX];
		if ((size_t)snprintf(kp, sizeof kp, "%s/%s", path, kids[i]) >= sizeof kp) {
			r = ctl_msg(c, 1, "%s/%s: a path longer than %d bytes", path, kids[i], CTL_PATH_MAX);
			break;
		}
		r = walk(c, d, kp, depth + 1);
	}
	ctl_strv_free(kids, nk);
	return r;
}

/* The length of the well-formed UTF-8 sequence at s (at most n bytes), 0 if there is none:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	if (c < 0x80) return 1;
	size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
	if (!len || len > n) return 0;
	for (size_t k = 1; k < len; k++)
		if ((s[k] & 0xC0) != 0x80) return 0;
	if (c == 0xE0 && s[1] < 0xA0) return 0;   /* overlong */
	if (c == 0xED && s[1] > 0x9F) return 0;   /* surrogate */
	if (c == 0xF0 && s[1] < 0x90) return 0;   /* overlong */
	if (c == 0xF4 && s[1] > 0x8F) return 0;   /* above U+10FFFF */
	return len;
}

static int is_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq((const unsigned char *)s + i, n - i);
		if (!k) return 0;
		i += k;
	}
	return 1;
}

/* data on one line: printable text and UTF-8 as is, \\ \n \r \t, other bytes \xHH (malloc'd) */
static char *one_line(const char *s, size_t n)
{
	char *o = malloc(4 * n + 1), *w = o;
	if (!o) {
		fputs("ejobctl dump: out of memory\n", stderr);
		exit(1);
	}
	for (size_t i = 0; i < n;) {
		unsigned char ch = (unsigned char)s[i];
		size_t k = utf8_seq((const unsigned char *)s + i, n - i);
		if (ch == '\\') w += sprintf(w, "\\\\");
		else if (ch == '\n') w += sprintf(w, "\\n");
		else if (ch == '\r') w += sprintf(w, "\\r");
		else if (ch == '\t') w += sprintf(w, "\\t");
		else if (ch < 0x20 || ch == 0x7f || !k) w += sprintf(w, "\\x%02x", ch);
		else {
			memcpy(w, s + i, k);
			w += k;
			i += k;
			continue;
		}
		i++;
	}
	*w = 0;
	return o;
}

static void b64(struct jw *w, const char *s, size_t n)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *o = malloc(4 * (n / 3 + 1) + 1), *p = o;
	if (!o) {
		fputs("ejobctl dump: out of memory\n", stderr);
		exit(1);
	}
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	for (; i + 2 < n; i += 3) {
		*p++ = t[u[i] >> 2];
		*p++ = t[((u[i] & 3) << 4) | (u[i + 1] >> 4)];
		*p++ = t[((u[i + 1] & 15) << 2) | (u[i + 2] >> 6)];
		*p++ = t[u[i + 2] & 63];
	}
	if (i < n) {
		*p++ = t[u[i] >> 2];
		*p++ = t[((u[i] & 3) << 4) | (i + 1 < n ? u[i + 1] >> 4 : 0)];
		*p++ = i + 1 < n ? t[(u[i + 1] & 15) << 2] : '=';
		*p++ = '=';
	}
	*p = 0;
	jw_str(w, o);
	free(o);
}

static void hex64(char *buf, size_t sz, int64_t v)
{
	snprintf(buf, sz, "0x%" PRIx64, (uint64_t)v);
}

static void utc_ms(char *buf, size_t sz, int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	char b[40];
	strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, sz, "%s.%03dZ", b, (int)(ms % 1000));
}

static void print_json(const struct ctl *c, const char *job, const struct dump *d)
{
	struct jw w;
	char h[32];
	jw_begin(&w, stdout);
	jw_obj(&w);
	jw_key(&w, "namespace");
	jw_str(&w, c->ns);
	jw_key(&w, "job");
	jw_str(&w, job);
	jw_key(&w, "nodes");
	jw_arr(&w);
	for (int i = 0; i < d->n; i++) {
		const struct dnode *x = &d->v[i];
		jw_obj(&w);
		jw_key(&w, "path");
		jw_str(&w, x->path);
		jw_key(&w, "kind");
		jw_str(&w, x->st.ephemeralOwner ? "ephemeral" : "persistent");
		jw_key(&w, "owner");
		if (x->st.ephemeralOwner) {
			hex64(h, sizeof h, x->st.ephemeralOwner);
			jw_str(&w, h);
		} else {
			jw_null(&w);
		}
		jw_key(&w, "ctime");
		jw_int(&w, x->st.ctime);
		jw_key(&w, "mtime");
		jw_int(&w, x->st.mtime);
		jw_key(&w, "version");
		jw_int(&w, x->st.version);
		jw_key(&w, "czxid");
		hex64(h, sizeof h, x->st.czxid);
		jw_str(&w, h);
		jw_key(&w, "mzxid");
		hex64(h, sizeof h, x->st.mzxid);
		jw_str(&w, h);
		jw_key(&w, "numChildren");
		jw_int(&w, x->st.numChildren);
		jw_key(&w, "dataLength");
		jw_int(&w, (long long)x->len);
		int text = is_utf8(x->data, x->len);
		jw_key(&w, "encoding");
		jw_str(&w, text ? "utf-8" : "base64");
		jw_key(&w, "data");
		if (text) jw_strn(&w, x->data, x->len);
		else b64(&w, x->data, x->len);
		jw_end(&w);
	}
	jw_end(&w);
	jw_end(&w);
}

static void print_table(const struct dump *d)
{
	struct ctl_table *t = ctl_table_new(5, "PATH", "KIND", "OWNER", "MTIME", "DATA");
	for (int i = 0; i < d->n; i++) {
		const struct dnode *x = &d->v[i];
		char owner[32], mt[64];
		if (x->st.ephemeralOwner) hex64(owner, sizeof owner, x->st.ephemeralOwner);
		else snprintf(owner, sizeof owner, "-");
		utc_ms(mt, sizeof mt, x->st.mtime);
		char *data = one_line(x->data, x->len);
		ctl_table_row(t, x->path, x->st.ephemeralOwner ? "ephemeral" : "persistent", owner, mt, data);
		free(data);
	}
	ctl_table_print(t, stdout);
}

int ejobctl_dump(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	struct ctl c;
	int r = ctl_options(&c, "dump", &argc, argv);
	if (r) goto out;
	if (argc != 2 || argv[1][0] == '-') {
		if (argc > 1 && argv[1][0] == '-') ctl_msg(&c, 2, "unknown option '%s'", argv[1]);
		usage(stderr);
		r = 2;
		goto out;
	}
	const char *job = argv[1];
	if ((r = ctl_connect(&c)) || (r = ctl_need_job(&c, job))) goto out;
	struct dump d = { NULL, 0, 0 };
	char p[CTL_PATH_MAX];
	r = walk(&c, &d, ctl_path(&c, p, "/%s", job), 0);
	if (!r) {
		if (c.json) print_json(&c, job, &d);
		else print_table(&d);
		if (fflush(stdout)) r = ctl_msg(&c, 1, "stdout: %s", strerror(errno));
	}
	for (int i = 0; i < d.n; i++) {
		free(d.v[i].path);
		free(d.v[i].data);
	}
	free(d.v);
out:
	ctl_close(&c);
	return r;
}
