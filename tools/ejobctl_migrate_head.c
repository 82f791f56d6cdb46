/* tools/ejobctl_migrate_head.c: the regCenter and tracing sections of ejobctl import
 * (tools/ejobctl_migrate_int.h): ElasticJob's starter's ZookeeperProperties (elasticjob.reg-center)
 * and TracingProperties (elasticjob.tracing) with the DataSource it takes. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools/ejobctl_migrate_int.h"

/* ---- regCenter -------------------------------------------------------------------------------- */

/* ZookeeperProperties; kind: 's' string, 'i' int */
static const struct { const char *name; char kind; } zk_keys[] = {
	{ "serverLists", 's' }, { "namespace", 's' }, { "baseSleepTimeMilliseconds", 'i' },
	{ "maxSleepTimeMilliseconds", 'i' }, { "maxRetries", 'i' }, { "sessionTimeoutMilliseconds", 'i' },
	{ "connectionTimeoutMilliseconds", 'i' }, { "digest", 's' },
};


void mig_head_set(struct head *h, const char *section, const char *key, const char *value, int quote,
                     const struct spring_prop *from)
{
	if (h->n == (int)NELEM(h->v)) return;
	h->v[h->n].section = section, h->v[h->n].key = key, h->v[h->n].quote = quote, h->v[h->n].from = from;
	h->v[h->n].value = strdup(value);
	h->n++;
}

void mig_head_drop(struct head *h, const char *section, const char *key)
{
	for (int i = 0; i < h->n; i++)
		if (!strcmp(h->v[i].section, section) && (!key || !strcmp(h->v[i].key, key))) {
			free(h->v[i].value);
			memmove(&h->v[i], &h->v[i + 1], (size_t)(h->n - i - 1) * sizeof h->v[0]);
			h->n--, i--;
		}
}

void mig_head_emit(const struct head *h, struct out *o)
{
	const char *section = NULL;
	for (int i = 0; i < h->n; i++) {
		if (!section || strcmp(section, h->v[i].section)) {
			section = h->v[i].section;
			mig_out_add(o, h->v[i].from, "%s:\n", section);
		}
		if (h->v[i].quote) mig_out_kv(o, h->v[i].from, 2, h->v[i].key, h->v[i].value);
		else mig_out_add(o, h->v[i].from, "  %s: %s\n", h->v[i].key, h->v[i].value);
	}
}

/* hosts without a port get ZooKeeper's 2181, as the Java client gives them (ejob's client needs it) */
static char *with_ports(const char *lists, int *added)
{
	size_t n = strlen(lists);
	char *o = malloc(n * 2 + 64), *w = o;
	if (!o) return NULL;
	*added = 0;
	for (const char *s = lists; *s;) {
		const char *e = strchr(s, ',');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		while (l && isspace((unsigned char)*s)) s++, l--;
		while (l && isspace((unsigned char)s[l - 1])) l--;
		if (l) {
			if (w > o) *w++ = ',';
			memcpy(w, s, l);
			w += l;
			const char *close = memchr(s, ']', l), *colon = close ? memchr(close, ':', l - (size_t)(close - s)) : memchr(s, ':', l);
			int bare_v6 = !close && colon && memchr(colon + 1, ':', l - (size_t)(colon + 1 - s));
			if (!colon && !bare_v6 && (size_t)(w - o) + 6 < n * 2 + 64) w += sprintf(w, ":2181"), (*added)++;
		}
		if (!e) break;
		s = e + 1;
	}
	*w = 0;
	return o;
}

void mig_reg_center(struct mx *x, struct head *h, int *fatal)
{
	static const char *const pre[] = { "elasticjob", "reg-center" };
	const struct spring_prop *first = NULL;
	const struct spring_prop *got[NELEM(zk_keys)] = { 0 };
	const char *names[NELEM(zk_keys)];
	for (size_t k = 0; k < NELEM(zk_keys); k++) names[k] = zk_keys[k].name;
	for (size_t i = 0; i < x->ps.n; i++) {
		struct spring_prop *p = &x->ps.v[i];
		if (!mig_under(p, pre, 2)) continue;
		if (!first) first = p;
		p->used = 1;
		if (p->nseg < 3) {
			if (p->value) MSG(x, p, "reg-center is a mapping of keys (server-lists, namespace, ...): left out");
			continue;
		}
		size_t k = 0;
		while (p->nseg == 3 && k < NELEM(zk_keys) && !spring_name_eq(p->seg[2], zk_keys[k].name)) k++;
		if (p->nseg == 3 && k < NELEM(zk_keys)) {
			got[k] = p;
			continue;
		}
		if (p->nseg == 3 && spring_name_eq(p->seg[2], "ensembleTracker")) {
			MSG(x, p, "ElasticJob's starter does not read it (ZookeeperProperties has no such key), so its Curator "
			    "tracked the ensemble whatever this said: left out");
			continue;
		}
		const char *near = mig_suggest(p->seg[2], names, NELEM(names));
		char hint[128] = "";
		if (near) snprintf(hint, sizeof hint, "; did you mean %s?", near);
		MSG(x, p, "not a key of ElasticJob's starter (ZookeeperProperties): Spring Boot ignores it, and so does "
		    "import%s", hint);
	}
	const struct spring_prop *anchor = first;
	for (size_t k = 0; k < NELEM(zk_keys); k++) {
		const struct spring_prop *p = got[k];
		const char *v = mig_val(x, p, zk_keys[k].kind == 's');
		if (k < 2 && !v) {     /* serverLists, namespace: required */
			const struct spring_prop *at = p ? p : anchor;
			if (at)
				spring_msg(x->m, at->file, at->name, at->line, p ? mig_key(x, p) : "elasticjob.reg-center",
				           "%s is not set: ElasticJob cannot start without it, nor can ejob: nothing converted; set "
				           "elasticjob.reg-center.%s", names[k], k ? "namespace" : "server-lists (HOST:PORT,...)");
			else
				spring_msg(x->m, 0, x->in[0].name, 0, "elasticjob.reg-center", "not set: ElasticJob cannot start "
				           "without its ZooKeeper (server-lists, namespace), nor can ejob: nothing converted");
			*fatal = 1;
			return;
		}
		if (!v) continue;
		if (zk_keys[k].kind == 'i') {
			long n;
			if (mig_int(v, &n)) {
				MSG(x, p, "'%s' is not an integer: Spring Boot would not start; left out", v);
				continue;
			}
			if (k == 5 && n == 0) {    /* sessionTimeoutMilliseconds 0: Curator's default */
				MSG(x, p, "0 is Curator's default, 60000 ms: ejob's default is 6000 ms (failover within 6 s) and is "
				    "taken; write sessionTimeoutMilliseconds: 60000 to keep ElasticJob's");
				continue;
			}
			char num[32];
			snprintf(num, sizeof num, "%ld", n);
			mig_head_set(h, "regCenter", names[k], num, 0, p);
			continue;
		}
		if (k == 0) {
			int added = 0;
			char *lists = with_ports(v, &added);
			if (!lists) {
				x->oom = 1;
				return;
			}
			if (added)
				MSG(x, p, "%d host%s without a port: ZooKeeper's Java client takes 2181; ejob's needs the port: "
				    "written as %s", added, added == 1 ? "" : "s", lists);
			mig_head_set(h, "regCenter", names[k], lists, 1, p);
			free(lists);
			continue;
		}
		mig_head_set(h, "regCenter", names[k], v, 1, p);
	}
	if (anchor && !got[5])
		spring_msg(x->m, anchor->file, anchor->name, anchor->line, "elasticjob.reg-center.session-timeout-milliseconds",
		           "not set: ElasticJob's session timeout is Curator's 60000 ms; ejob's default is 6000 ms (failover "
		           "within 6 s) and is taken; write regCenter.sessionTimeoutMilliseconds: 60000 to keep ElasticJob's");
}

/* ---- tracing ---------------------------------------------------------------------------------- */

/* pgjdbc's URL parameters that libpq has under another name (or the same) */
static const struct { const char *jdbc, *pq; } pg_params[] = {
	{ "connectTimeout", "connect_timeout" }, { "user", "user" },
	{ "password", "password" }, { "sslmode", "sslmode" }, { "sslcert", "sslcert" }, { "sslkey", "sslkey" },
	{ "sslrootcert", "sslrootcert" }, { "sslpassword", "sslpassword" }, { "options", "options" },
	{ "gssEncMode", "gssencmode" }, { "channelBinding", "channel_binding" },
};

/* percent-encode what a libpq URI parameter value cannot hold as it is */
static void pct(char *o, size_t *w, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (isalnum(c) || strchr("-._~", c)) o[(*w)++] = (char)c;
		else *w += (size_t)sprintf(o + *w, "%%%02X", c);
	}
}

/* A JDBC URL of PostgreSQL (jdbc:postgresql://hosts/db?params, jdbc:postgresql:db) as a libpq
 * URI: its parameters renamed where libpq has them, currentSchema as options=-c search_path=...,
 * ssl=true as sslmode=verify-full (pgjdbc's meaning), the others left out and said. */
static char *pg_url(struct mx *x, const struct spring_prop *p, const char *url)
{
	const char *r = url + strlen("jdbc:postgresql:");
	size_t n = strlen(url);
	char *o = malloc(n * 4 + 64);
	if (!o) return NULL;
	size_t w = 0;
	const char *q = strchr(r, '?');
	size_t base = q ? (size_t)(q - r) : strlen(r);
	if (!strncmp(r, "//", 2)) w += (size_t)sprintf(o, "postgresql:%.*s", (int)base, r);
	else w += (size_t)sprintf(o, "postgresql://localhost/%.*s", (int)base, r);   /* pgjdbc: localhost:5432 */
	int first = 1, sslmode = 0;
	const char *ssl_on = NULL;
	for (const char *s = q ? q + 1 : NULL; s && *s;) {
		const char *e = strchr(s, '&');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		const char *eq = memchr(s, '=', l);
		char k[128], v[512];
		snprintf(k, sizeof k, "%.*s", (int)(eq ? (size_t)(eq - s) : l), s);
		snprintf(v, sizeof v, "%.*s", eq ? (int)(l - (size_t)(eq + 1 - s)) : 0, eq ? eq + 1 : "");
		const char *pq = NULL;
		for (size_t i = 0; i < NELEM(pg_params) && !pq; i++)
			if (!strcasecmp(k, pg_params[i].jdbc)) pq = pg_params[i].pq;
		if (pq) {
			sslmode |= !strcmp(pq, "sslmode");
			w += (size_t)sprintf(o + w, "%c%s=%s", first ? '?' : '&', pq, v), first = 0;
		} else if (!strcasecmp(k, "currentSchema") && *v) {
			w += (size_t)sprintf(o + w, "%coptions=", first ? '?' : '&'), first = 0;
			char opt[600];
			snprintf(opt, sizeof opt, "-c search_path=%s", v);
			pct(o, &w, opt);
		} else if (!strcasecmp(k, "ApplicationName")) {
			MSG(x, p, "ejob's tracing names its connection ejob-supervisor (application_name): ApplicationName left "
			    "out of the URL");
		} else if (!strcasecmp(k, "ssl")) {
			ssl_on = strcasecmp(v, "false") ? "1" : NULL;
		} else if (*k) {
			MSG(x, p, "the JDBC driver's parameter %s has no libpq equivalent: left out of the URL", k);
		}
		if (!e) break;
		s = e + 1;
	}
	if (ssl_on && !sslmode) w += (size_t)sprintf(o + w, "%csslmode=verify-full", first ? '?' : '&');
	o[w] = 0;
	return o;
}

void mig_tracing(struct mx *x, struct head *h)
{
	static const char *const tr[] = { "elasticjob", "tracing" };
	static const char *const tr_type[] = { "elasticjob", "tracing", "type" };
	struct spring_prop *type = mig_take(x, tr_type, 3);
	/* elasticjob.tracing.data-source.* (its own DataSource) or else the application's */
	static const char *const own_url[] = { "elasticjob", "tracing", "data-source", "url" };
	static const char *const app_url[] = { "spring", "datasource", "url" };
	const struct spring_prop *url = NULL, *user = NULL, *pass = NULL;
	const char *const *dsp = NULL;
	int dsn = 0;
	for (size_t i = 0; i < x->ps.n; i++) {
		struct spring_prop *p = &x->ps.v[i];
		if (mig_under(p, own_url, 4) && p->nseg == 4 && p->value) dsp = own_url, dsn = 3;
	}
	if (!dsp) dsp = app_url, dsn = 2;
	for (size_t i = 0; i < x->ps.n; i++) {
		struct spring_prop *p = &x->ps.v[i];
		if (mig_under(p, tr, 2) && p->nseg >= 3 && !spring_name_eq(p->seg[2], "type")) {
			p->used = 1;
			if (spring_name_eq(p->seg[2], "include-job-names") || spring_name_eq(p->seg[2], "exclude-job-names")) {
				int said = 0;   /* a list: once */
				for (size_t k = 0; k < i && !said; k++)
					said = x->ps.v[k].nseg >= 3 && mig_under(&x->ps.v[k], tr, 2) && !strcmp(x->ps.v[k].seg[2], p->seg[2]);
				struct spring_prop g = *p;
				g.nseg = 3;
				if (!said)
					spring_msg(x->m, p->file, p->name, p->line, mig_key(x, &g), "ejob's tracing is the supervisor's, "
					           "for every job it runs: no per-job choice; left out");
			}
			else if (!spring_name_eq(p->seg[2], "data-source"))
				MSG(x, p, "not a key of ElasticJob's starter (TracingProperties): Spring Boot ignores it; left out");
		}
		if (p->nseg == dsn + 1 && mig_under(p, dsp, dsn)) {
			if (spring_name_eq(p->seg[dsn], "url")) url = p;
			else if (spring_name_eq(p->seg[dsn], "username")) user = p;
			else if (spring_name_eq(p->seg[dsn], "password")) pass = p;
		}
	}
	if (!type) return;
	const char *t = mig_val(x, type, 0);
	if (!t) return;
	if (strcmp(t, "RDB")) {
		MSG(x, type, "'%s': ElasticJob's starter sets up tracing for RDB only, and ignores anything else: left out", t);
		return;
	}
	/* the DataSource's keys are used here: those of it that have no meaning are said */
	for (size_t i = 0; i < x->ps.n; i++) {
		struct spring_prop *p = &x->ps.v[i];
		if (!mig_under(p, dsp, dsn) || p->nseg <= dsn) continue;
		p->used = 1;
		if (p != url && p != user && p != pass && (p->nseg != dsn + 1 || !spring_name_eq(p->seg[dsn], "driver-class-name"))) {
			/* one message per group (spring.datasource.hikari: ...) */
			int said = 0;
			for (size_t k = 0; k < i && !said; k++)
				said = x->ps.v[k].nseg > dsn && mig_under(&x->ps.v[k], dsp, dsn) &&
				       !strcmp(x->ps.v[k].seg[dsn], p->seg[dsn]) && x->ps.v[k].nseg > dsn + 1 && p->nseg > dsn + 1;
			struct spring_prop g = *p;
			g.nseg = dsn + 1;
			if (!said)
				spring_msg(x->m, p->file, p->name, p->line, mig_key(x, &g), "%s: ejob's tracing keeps one PostgreSQL "
				           "connection of its own (libpq), with no pool to set; left out",
				           p->nseg > dsn + 1 ? "the connection pool's settings" : "no meaning to ejob");
		}
	}
	const char *u = mig_val(x, url, 1);
	if (!u) {
		MSG(x, type, "RDB without a DataSource (neither %s.url nor elasticjob.tracing.data-source.url): ElasticJob "
		    "traced nothing; left out", "spring.datasource");
		return;
	}
	if (strncmp(u, "jdbc:postgresql:", 16)) {
		char db[32] = "";
		if (!strncmp(u, "jdbc:", 5)) snprintf(db, sizeof db, " (%.*s)", (int)strcspn(u + 5, ":"), u + 5);
		MSG(x, url, "ejob's tracing writes ElasticJob's tables to PostgreSQL only, and this DataSource is not one%s: "
		    "tracing left out; give a PostgreSQL URL as tracing.url, or keep every execution in "
		    "supervisor.history.file (JSON lines); docs/config.md", db);
		return;
	}
	char *pg = pg_url(x, url, u);
	if (!pg) {
		x->oom = 1;
		return;
	}
	mig_head_set(h, "tracing", "type", "RDB", 0, type);
	mig_head_set(h, "tracing", "url", pg, 1, url);
	free(pg);
	const char *us = mig_val(x, user, 1), *pw = mig_val(x, pass, 1);
	if (us) mig_head_set(h, "tracing", "username", us, 1, user);
	if (pw) mig_head_set(h, "tracing", "password", pw, 1, pass);
}

