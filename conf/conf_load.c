/* conf/conf_load.c: the configuration file (regCenter, supervisor, jobs) -> conf_t. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf_int.h"

#define NELEM(a) (sizeof(a) / sizeof *(a))
#define CMDLINE  "(command line)"

enum { T_REGCENTER, T_SUPERVISOR, T_JOBS, T_TRACING, T_N };
static const char *const top_keys[T_N] = { "regCenter", "supervisor", "jobs", "tracing" };

enum { R_SERVERS, R_NAMESPACE, R_BASESLEEP, R_MAXSLEEP, R_MAXRETRIES, R_SESSION, R_CONNECT,
       R_DIGEST, R_ENSEMBLE, R_N };
static const char *const rc_keys[R_N] = {
	"serverLists", "namespace", "baseSleepTimeMilliseconds", "maxSleepTimeMilliseconds",
	"maxRetries", "sessionTimeoutMilliseconds", "connectionTimeoutMilliseconds", "digest",
	"ensembleTracker",
};

enum { S_WORKERS, S_IP, S_LOGLEVEL, S_SOCKET, S_UIDS, S_GIDS, S_SHUTDOWN, S_KILL, S_OUTLINES, S_OUTBYTES,
       S_HISTORY, S_METRICS, S_LABELS, S_ALLOWED, S_LOGFORMAT, S_N };
static const char *const sup_keys[S_N] = {
	"workers", "ip", "logLevel", "attachSocket", "attachAllowUids", "attachAllowGids",
	"shutdownGraceSeconds", "killGraceSeconds", "scriptOutputMaxLines", "scriptOutputMaxBytes",
	"history", "metrics", "labels", "allowedCommands", "logFormat",
};
enum { TR_TYPE, TR_URL, TR_USER, TR_PASSWORD, TR_SPOOLDIR, TR_SPOOLMAX, TR_N };
static const char *const tracing_keys[TR_N] = { "type", "url", "username", "password", "spoolDir", "spoolMaxBytes" };
enum { H_FILE, H_MAXBYTES, H_KEEP, H_N };
static const char *const hist_keys[H_N] = { "file", "maxBytes", "keep" };
static const char *const log_levels[] = { "error", "warn", "info", "debug" };
static const char *const log_formats[] = { "text", "json" };

#define SUN_PATH_MAX 107   /* sizeof(sockaddr_un.sun_path) - 1 */

/* A command-line override as a node: it is checked like the key it replaces; its errors say
 * "(command line)" instead of a position. */
static conf_tnode_t override_node(const char *s)
{
	conf_tnode_t n = { .kind = CONF_TN_SCALAR, .style = 3 /* double-quoted: never null */ };
	n.str = s;
	n.len = strlen(s);
	return n;
}

static const conf_tnode_t *pick(conf_ctx_t *cx, const conf_tnode_t *file_value,
                                const char *override, conf_tnode_t *tmp, const char **saved)
{
	if (!override) return file_value;
	*tmp = override_node(override);
	*saved = cx->file;
	cx->file = CMDLINE;
	return tmp;
}

static void unpick(conf_ctx_t *cx, const char *saved)
{
	if (saved) cx->file = saved;
}

/* "host:port,host:port": what the ZooKeeper C client accepts (it needs the port). */
static int check_servers(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at,
                         const char *key, const char *s)
{
	size_t len = strlen(s), b = 0;
	char q[128];
	if (len == 0) {
		conf_err(cx, at ? at : n, key, "must not be empty; give host:port pairs, e.g. \"zk1:2181,zk2:2181\"");
		return -1;
	}
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != ',') continue;
		const char *e = s + b;
		size_t el = i - b, off = b;
		b = i + 1;
		conf_quote(q, sizeof q, e, el);
		const char *why = NULL;
		const char *colon = NULL;
		for (size_t k = 0; k < el; k++) {
			unsigned char c = (unsigned char)e[k];
			if (c <= 0x20 || c == 0x7f) why = "contains whitespace or a control character";
			if (c == '/') why = "has a chroot path; ejob puts its nodes under namespace instead";
		}
		if (!why && el == 0) why = "is empty";
		if (!why && e[0] == '[') {
			const char *rb = memchr(e, ']', el);
			if (!rb || rb == e + 1) why = "has an unterminated or empty [IPv6] address";
			else if ((size_t)(rb - e) + 1 == el || rb[1] != ':') why = "needs a port, e.g. [::1]:2181";
			else colon = rb + 1;
		} else if (!why) {
			colon = memrchr(e, ':', el);
			if (!colon) why = "needs a port, e.g. 127.0.0.1:2181";
			else if (memchr(e, ':', el) != colon) why = "looks like an IPv6 address; write it as [addr]:port";
			else if (colon == e) why = "has no host";
		}
		if (!why) {
			long port = 0;
			const char *p = colon + 1, *end = e + el;
			if (p == end) why = "needs a port after ':'";
			for (; p < end && !why; p++) {
				if (*p < '0' || *p > '9' || port > 65535) why = "has a port that is not 1-65535";
				else port = port * 10 + (*p - '0');
			}
			if (!why && (port < 1 || port > 65535)) why = "has a port that is not 1-65535";
		}
		if (why) {
			conf_err_in(cx, n, off, key, "server %s %s; serverLists is host:port pairs separated "
			            "by commas", q, why);
			return -1;
		}
	}
	return 0;
}

static void load_regcenter(conf_ctx_t *cx, const conf_tnode_t *k, const conf_tnode_t *map,
                           conf_regcenter_t *rc, int *errors)
{
	const conf_tnode_t *keys[R_N], *v[R_N];
	const conf_opts_t *o = cx->opts;
	char p[512];
	rc->base_sleep_ms = 1000;
	rc->max_sleep_ms = 3000;
	rc->max_retries = 3;
	rc->session_timeout_ms = 6000;
	rc->connection_timeout_ms = 0;
	for (size_t i = 0; i < R_N; i++) keys[i] = v[i] = NULL;
	if (map && map->kind != CONF_TN_MAP && !conf_is_null(map)) {
		conf_err(cx, k, "regCenter", "must be a mapping with serverLists and namespace (got %s)",
		         conf_kind_name(map));
		(*errors)++;
		map = NULL;
	}
	if (map && map->kind == CONF_TN_MAP)
		conf_map_keys(cx, map, "regCenter", rc_keys, R_N, R_N, keys, v);
	const conf_tnode_t *at = k ? k : NULL;

	/* serverLists */
	conf_tnode_t tmp;
	const char *saved = NULL;
	const conf_tnode_t *n = pick(cx, v[R_SERVERS], o ? o->server_lists : NULL, &tmp, &saved);
	if (!n || conf_is_null(n)) {
		conf_err(cx, at, "regCenter.serverLists", "missing; give the ZooKeeper servers as "
		         "host:port pairs, e.g. \"127.0.0.1:2181\"");
		(*errors)++;
	} else if (conf_get_str(cx, n, saved ? NULL : keys[R_SERVERS], "regCenter.serverLists",
	                        &rc->server_lists) < 0 ||
	           check_servers(cx, n, saved ? NULL : keys[R_SERVERS], "regCenter.serverLists",
	                         rc->server_lists) < 0) {
		(*errors)++;
	}
	unpick(cx, saved);

	saved = NULL;
	n = pick(cx, v[R_NAMESPACE], o ? o->namespace : NULL, &tmp, &saved);
	if (!n || conf_is_null(n)) {
		conf_err(cx, at, "regCenter.namespace", "missing; give the root node of the jobs, "
		         "e.g. \"ejob-demo\"");
		(*errors)++;
	} else if (conf_get_str(cx, n, saved ? NULL : keys[R_NAMESPACE], "regCenter.namespace",
	                        &rc->namespace) < 0) {
		(*errors)++;
	} else {
		const char *why = conf_check_zk_name(rc->namespace, strlen(rc->namespace));
		if (!why && strcmp(rc->namespace, "zookeeper") == 0) why = "is ZooKeeper's own node";
		if (why) {
			char q[128];
			conf_quote(q, sizeof q, rc->namespace, strlen(rc->namespace));
			conf_err(cx, saved ? n : keys[R_NAMESPACE], "regCenter.namespace", "the name %s %s; "
			         "a namespace must be 1-255 bytes without '/', whitespace or control "
			         "characters, and not '.', '..' or 'zookeeper'", q, why);
			(*errors)++;
		}
	}
	unpick(cx, saved);

	struct { int k; int min, max; int *dst; const char *allowed; } ints[] = {
		{ R_BASESLEEP, 1, 600000, &rc->base_sleep_ms, NULL },
		{ R_MAXSLEEP, 1, 600000, &rc->max_sleep_ms, NULL },
		{ R_MAXRETRIES, 0, 29, &rc->max_retries, NULL },
		{ R_SESSION, 1000, 600000, &rc->session_timeout_ms, NULL },
		{ R_CONNECT, 0, 600000, &rc->connection_timeout_ms,
		  NULL },
	};
	for (size_t i = 0; i < NELEM(ints); i++) {
		if (!v[ints[i].k]) continue;
		conf_path(p, sizeof p, "regCenter", rc_keys[ints[i].k]);
		if (conf_get_int(cx, v[ints[i].k], keys[ints[i].k], p, ints[i].min, ints[i].max,
		                 ints[i].allowed, ints[i].dst) < 0)
			(*errors)++;
	}
	if (rc->max_sleep_ms < rc->base_sleep_ms) {
		if (keys[R_MAXSLEEP])
			conf_err(cx, keys[R_MAXSLEEP], "regCenter.maxSleepTimeMilliseconds", "must be at least "
			         "baseSleepTimeMilliseconds (%d) (got %d)", rc->base_sleep_ms, rc->max_sleep_ms);
		else
			conf_err(cx, keys[R_BASESLEEP], "regCenter.baseSleepTimeMilliseconds", "must be at most "
			         "maxSleepTimeMilliseconds (%d, its default) (got %d); raise that too",
			         rc->max_sleep_ms, rc->base_sleep_ms);
		(*errors)++;
	}
	/* ZooKeeper's C client ends an attempt that gets no answer itself (after two thirds of the
	 * session timeout); ejob has no other per-attempt limit to give this key */
	if (rc->connection_timeout_ms)
		conf_warn(cx, keys[R_CONNECT], "regCenter.connectionTimeoutMilliseconds", "not acted on: a connection attempt "
		          "without an answer ends after two thirds of sessionTimeoutMilliseconds (ZooKeeper's C client), and at "
		          "start the supervisor gives up after maxRetries rounds of attempts; leave it out");
	/* 3.0.5's: Curator follows the ensemble's dynamic reconfiguration (true, its default) */
	rc->ensemble_tracker = true;
	if (v[R_ENSEMBLE] && !conf_is_null(v[R_ENSEMBLE])) {
		bool b;
		if (conf_get_bool(cx, v[R_ENSEMBLE], keys[R_ENSEMBLE], "regCenter.ensembleTracker", &b) < 0) {
			(*errors)++;
		} else {
			rc->ensemble_tracker = b;
			if (b)
				conf_warn(cx, keys[R_ENSEMBLE], "regCenter.ensembleTracker", "not acted on: ejob does not follow "
				          "ZooKeeper's dynamic reconfiguration (Curator's ensemble tracker); list every server in "
				          "serverLists (false says so without this warning)");
		}
	}
	if (v[R_DIGEST] && !conf_is_null(v[R_DIGEST])) {
		if (conf_get_str(cx, v[R_DIGEST], keys[R_DIGEST], "regCenter.digest", &rc->digest) < 0) {
			(*errors)++;
		} else {
			const char *c = strchr(rc->digest, ':');
			if (!c || c == rc->digest) {
				conf_err(cx, keys[R_DIGEST], "regCenter.digest", "must be \"user:password\"");
				(*errors)++;
			}
		}
	}
}

/* A user or group name as the shadow utilities allow it. */
static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 32 || s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		          c == '_' || c == '-' || c == '.' || (c == '$' && i == n - 1);
		if (!ok) return false;
	}
	return true;
}

static void load_ids(conf_ctx_t *cx, const conf_tnode_t *v, const conf_tnode_t *at, const char *key,
                     bool user,
                     const conf_id_t **out, size_t *nout, int *errors)
{
	char p[512], q[128];
	if (!v || conf_is_null(v)) return;
	const char *what = user ? "user" : "group";
	if (v->kind != CONF_TN_SEQ) {
		conf_err(cx, at, key, "must be a list of %s names or numeric ids (got %s)", what,
		         conf_kind_name(v));
		(*errors)++;
		return;
	}
	conf_id_t *ids = conf_arena_alloc(cx->out, (v->n + 1) * sizeof *ids);
	if (!ids) return;
	const conf_opts_t *o = cx->opts;
	int (*lookup)(const char *, uint32_t *, void *) = o ? (user ? o->lookup_user : o->lookup_group) : NULL;
	for (size_t i = 0; i < v->n; i++) {
		const conf_tnode_t *it = v->kids[i];
		conf_path_index(p, sizeof p, key, i);
		if (!conf_visit(cx, it)) return;
		if (it->kind != CONF_TN_SCALAR || conf_is_null(it)) {
			conf_err(cx, it, p, "must be a %s name or a numeric id (got %s)", what, conf_kind_name(it));
			(*errors)++;
			continue;
		}
		const char *s;
		if (conf_get_str(cx, it, NULL, p, &s) < 0) {
			(*errors)++;
			continue;
		}
		bool digits = *s != '\0';
		unsigned long long id = 0;
		for (const char *c = s; *c; c++) {
			if (*c < '0' || *c > '9') digits = false;
			else if (id <= UINT32_MAX) id = id * 10 + (unsigned)(*c - '0');
		}
		if (digits) {
			if (id >= UINT32_MAX) {
				conf_quote(q, sizeof q, s, strlen(s));
				conf_err(cx, it, p, "must be a %s id 0-4294967294 (got %s)", what, q);
				(*errors)++;
				continue;
			}
			ids[i].id = (uint32_t)id;
			continue;
		}
		conf_quote(q, sizeof q, s, strlen(s));
		if (!valid_name(s)) {
			conf_err(cx, it, p, "must be a %s name (letters, digits, '_', '-', '.', at most 32) "
			         "or a numeric id (got %s)", what, q);
			(*errors)++;
			continue;
		}
		ids[i].name = s;
		ids[i].id = CONF_ID_UNRESOLVED;
		if (lookup && lookup(s, &ids[i].id, o->lookup_arg) < 0) {
			conf_err(cx, it, p, "no %s named %s on this machine", what, q);
			(*errors)++;
		}
	}
	*out = ids;
	*nout = v->n;
}

/* supervisor.history: {file: PATH, maxBytes: N, keep: N} */
static void load_history(conf_ctx_t *cx, const conf_tnode_t *k, const conf_tnode_t *map, conf_supervisor_t *s,
                         int *errors)
{
	const conf_tnode_t *keys[H_N], *v[H_N];
	for (size_t i = 0; i < H_N; i++) keys[i] = v[i] = NULL;
	if (!map || conf_is_null(map)) return;
	if (map->kind != CONF_TN_MAP) {
		conf_err(cx, k, "supervisor.history", "must be a mapping, e.g. {file: /var/lib/ejob/history.jsonl} "
		         "(got %s)", conf_kind_name(map));
		(*errors)++;
		return;
	}
	conf_map_keys(cx, map, "supervisor.history", hist_keys, H_N, H_N, keys, v);
	if (!v[H_FILE] || conf_is_null(v[H_FILE])) {
		conf_err(cx, k, "supervisor.history.file", "missing; give the file that gets one JSON line per item "
		         "execution, e.g. /var/lib/ejob/history.jsonl");
		(*errors)++;
	} else if (conf_get_str(cx, v[H_FILE], keys[H_FILE], "supervisor.history.file", &s->history_file) < 0) {
		(*errors)++;
	} else if (!s->history_file[0] || s->history_file[strlen(s->history_file) - 1] == '/') {
		conf_err(cx, keys[H_FILE], "supervisor.history.file", "must name a file, not a directory");
		(*errors)++;
		s->history_file = NULL;
	}
	if (v[H_MAXBYTES] && conf_get_int(cx, v[H_MAXBYTES], keys[H_MAXBYTES], "supervisor.history.maxBytes", 4096,
	                                  INT32_MAX, "an integer 4096-2147483647 (bytes)", &s->history_max_bytes) < 0)
		(*errors)++;
	if (v[H_KEEP] && conf_get_int(cx, v[H_KEEP], keys[H_KEEP], "supervisor.history.keep", 0, 1000, NULL,
	                              &s->history_keep) < 0)
		(*errors)++;
}

/* supervisor.labels, supervisor.allowedCommands: a list of non-empty strings (an empty list is no
 * list: nothing adopted, nothing allowed) */
static void load_strings(conf_ctx_t *cx, const conf_tnode_t *v, const conf_tnode_t *at, const char *key,
                         const char *example, const char *const **out, size_t *nout, int *errors)
{
	char p[512];
	if (!v || conf_is_null(v)) return;
	if (v->kind != CONF_TN_SEQ) {
		conf_err(cx, at, key, "must be a list of strings, e.g. %s (got %s)", example, conf_kind_name(v));
		(*errors)++;
		return;
	}
	const char **l = conf_arena_alloc(cx->out, (v->n + 1) * sizeof *l);
	if (!l) return;
	size_t n = 0;
	for (size_t i = 0; i < v->n; i++) {
		const conf_tnode_t *it = v->kids[i];
		conf_path_index(p, sizeof p, key, i);
		if (!conf_visit(cx, it)) return;
		const char *s;
		if (it->kind != CONF_TN_SCALAR || conf_is_null(it)) {
			conf_err(cx, it, p, "must be a string, e.g. %s (got %s)", example, conf_kind_name(it));
			(*errors)++;
		} else if (conf_get_str(cx, it, NULL, p, &s) < 0) {
			(*errors)++;
		} else if (!*s) {
			conf_err(cx, it, p, "must not be empty");
			(*errors)++;
		} else {
			l[n++] = s;
		}
	}
	*out = l;
	*nout = n;
}

static void load_supervisor(conf_ctx_t *cx, const conf_tnode_t *k, const conf_tnode_t *map,
                            conf_supervisor_t *s, int *errors)
{
	const conf_tnode_t *keys[S_N], *v[S_N];
	const conf_opts_t *o = cx->opts;
	char p[512];
	s->workers = o && o->cpus > 0 ? (o->cpus > 1024 ? 1024 : o->cpus) : 1;
	s->log_level = CONF_LOG_INFO;
	s->shutdown_grace_seconds = 10;
	s->kill_grace_seconds = 5;
	s->script_output_max_lines = CONF_SCRIPT_OUTPUT_MAX_LINES;
	s->script_output_max_bytes = CONF_SCRIPT_OUTPUT_MAX_BYTES;
	s->history_max_bytes = CONF_HISTORY_MAX_BYTES;
	s->history_keep = CONF_HISTORY_KEEP;
	for (size_t i = 0; i < S_N; i++) keys[i] = v[i] = NULL;
	if (map && map->kind != CONF_TN_MAP && !conf_is_null(map)) {
		conf_err(cx, k, "supervisor", "must be a mapping (got %s)", conf_kind_name(map));
		(*errors)++;
	} else if (map && map->kind == CONF_TN_MAP) {
		conf_map_keys(cx, map, "supervisor", sup_keys, S_N, S_N, keys, v);
	}

	conf_tnode_t tmp;
	const char *saved = NULL;
	char wbuf[32];
	if (o && o->workers) conf_fmt(wbuf, sizeof wbuf, "%d", o->workers);
	const conf_tnode_t *n = pick(cx, v[S_WORKERS], o && o->workers ? wbuf : NULL, &tmp, &saved);
	if (n && conf_get_int(cx, n, saved ? NULL : keys[S_WORKERS], "supervisor.workers", 1, 1024,
	                      NULL, &s->workers) < 0)
		(*errors)++;
	unpick(cx, saved);

	saved = NULL;
	n = pick(cx, v[S_IP], o ? o->ip : NULL, &tmp, &saved);
	if (n && !conf_is_null(n)) {
		unsigned char addr[16];
		if (conf_get_str(cx, n, saved ? NULL : keys[S_IP], "supervisor.ip", &s->ip) < 0) {
			(*errors)++;
		} else if (inet_pton(AF_INET, s->ip, addr) != 1 && inet_pton(AF_INET6, s->ip, addr) != 1) {
			char q[128];
			conf_quote(q, sizeof q, s->ip, strlen(s->ip));
			conf_err(cx, saved ? n : keys[S_IP], "supervisor.ip", "must be an IPv4 or IPv6 "
			         "address, e.g. 10.0.0.1 "
			         "(got %s)", q);
			(*errors)++;
			s->ip = NULL;
		}
	}
	unpick(cx, saved);

	if (v[S_LOGLEVEL]) {
		int idx;
		if (conf_get_enum(cx, v[S_LOGLEVEL], keys[S_LOGLEVEL], "supervisor.logLevel", log_levels,
		                  NELEM(log_levels), &idx) < 0)
			(*errors)++;
		else
			s->log_level = (conf_log_level_t)idx;
	}
	if (v[S_LOGFORMAT]) {
		int idx;
		if (conf_get_enum(cx, v[S_LOGFORMAT], keys[S_LOGFORMAT], "supervisor.logFormat", log_formats,
		                  NELEM(log_formats), &idx) < 0)
			(*errors)++;
		else
			s->log_format = (conf_log_format_t)idx;
	}

	if (v[S_SOCKET] && !conf_is_null(v[S_SOCKET])) {
		if (conf_get_str(cx, v[S_SOCKET], keys[S_SOCKET], "supervisor.attachSocket",
		                 &s->attach_socket) < 0) {
			(*errors)++;
		} else if (s->attach_socket[0] != '/' || strlen(s->attach_socket) > SUN_PATH_MAX) {
			conf_err(cx, keys[S_SOCKET], "supervisor.attachSocket", "must be an absolute path of at "
			         "most %d bytes", SUN_PATH_MAX);
			(*errors)++;
			s->attach_socket = NULL;
		}
	}
	/* unset: the supervisor derives it at start, as ejob_attach() does (docs/worker.md), so a
	 * supervisor that is not root needs no key and no /run/ejob */

	load_ids(cx, v[S_UIDS], keys[S_UIDS], "supervisor.attachAllowUids", true, &s->attach_allow_uids,
	         &s->n_attach_allow_uids, errors);
	load_ids(cx, v[S_GIDS], keys[S_GIDS], "supervisor.attachAllowGids", false, &s->attach_allow_gids,
	         &s->n_attach_allow_gids, errors);

	for (int g = S_SHUTDOWN; g <= S_KILL; g++) {
		if (!v[g]) continue;
		conf_path(p, sizeof p, "supervisor", sup_keys[g]);
		if (conf_get_int(cx, v[g], keys[g], p, 0, 3600, NULL,
		                 g == S_SHUTDOWN ? &s->shutdown_grace_seconds : &s->kill_grace_seconds) < 0)
			(*errors)++;
	}
	for (int g = S_OUTLINES; g <= S_OUTBYTES; g++) {
		if (!v[g]) continue;
		conf_path(p, sizeof p, "supervisor", sup_keys[g]);
		if (conf_get_int(cx, v[g], keys[g], p, 0, INT32_MAX, "an integer 0-2147483647 (0: no limit)",
		                 g == S_OUTLINES ? &s->script_output_max_lines : &s->script_output_max_bytes) < 0)
			(*errors)++;
	}
	load_history(cx, keys[S_HISTORY], v[S_HISTORY], s, errors);
	load_strings(cx, v[S_LABELS], keys[S_LABELS], "supervisor.labels", "[etl, eu-west] (\"*\": any label)",
	             &s->labels, &s->n_labels, errors);
	load_strings(cx, v[S_ALLOWED], keys[S_ALLOWED], "supervisor.allowedCommands", "[\"/opt/jobs/*\"]",
	             &s->allowed_commands, &s->n_allowed_commands, errors);
	for (size_t i = 0; i < s->n_allowed_commands; i++) {
		if (s->allowed_commands[i][0] == '/') continue;
		conf_path_index(p, sizeof p, "supervisor.allowedCommands", i);
		conf_err(cx, v[S_ALLOWED]->kids[i], p, "must be a glob on an absolute path (the program as the worker "
		         "resolves it), e.g. \"/opt/jobs/*\" (got '%s')", s->allowed_commands[i]);
		(*errors)++;
	}

	saved = NULL;
	n = pick(cx, v[S_METRICS], o ? o->metrics : NULL, &tmp, &saved);
	if (n && !conf_is_null(n)) {
		struct sockaddr_storage ss;
		unsigned len;
		if (conf_get_str(cx, n, saved ? NULL : keys[S_METRICS], "supervisor.metrics", &s->metrics) < 0) {
			(*errors)++;
		} else if (conf_listen_addr(s->metrics, &ss, &len) < 0) {
			char q[128];
			conf_quote(q, sizeof q, s->metrics, strlen(s->metrics));
			conf_err(cx, saved ? n : keys[S_METRICS], "supervisor.metrics", "must be IPv4:PORT or [IPv6]:PORT "
			         "with a port 1-65535, e.g. 127.0.0.1:9464 (got %s)", q);
			(*errors)++;
			s->metrics = NULL;
		}
	}
	unpick(cx, saved);
}

/* tracing: {type: RDB, url: "postgresql://...", username, password, spoolDir, spoolMaxBytes} */
static void load_tracing(conf_ctx_t *cx, const conf_tnode_t *k, const conf_tnode_t *map, conf_tracing_t *t,
                         int *errors)
{
	const conf_tnode_t *keys[TR_N], *v[TR_N];
	for (size_t i = 0; i < TR_N; i++) keys[i] = v[i] = NULL;
	t->spool_dir = CONF_TRACING_SPOOL_DIR;
	t->spool_max_bytes = CONF_TRACING_SPOOL_MAX_BYTES;
	if (!map || conf_is_null(map)) return;
	if (map->kind != CONF_TN_MAP) {
		conf_err(cx, k, "tracing", "must be a mapping, e.g. {type: RDB, url: \"postgresql://ejob@db/ejob\"} "
		         "(got %s)", conf_kind_name(map));
		(*errors)++;
		return;
	}
	conf_map_keys(cx, map, "tracing", tracing_keys, TR_N, TR_N, keys, v);
	const char *type = NULL;
	if (!v[TR_TYPE] || conf_is_null(v[TR_TYPE])) {
		conf_err(cx, k, "tracing.type", "missing; RDB is the one type (ElasticJob's elasticjob-tracing-rdb, "
		         "to PostgreSQL)");
		(*errors)++;
	} else if (conf_get_str(cx, v[TR_TYPE], keys[TR_TYPE], "tracing.type", &type) < 0) {
		(*errors)++;
	} else if (strcmp(type, "RDB") != 0) {
		conf_err(cx, v[TR_TYPE], "tracing.type", "must be RDB, the one type ejob writes (got %s)", type);
		(*errors)++;
	}
	if (!v[TR_URL] || conf_is_null(v[TR_URL])) {
		conf_err(cx, k, "tracing.url", "missing; give PostgreSQL's address, e.g. "
		         "\"postgresql://ejob@db.example.com:5432/ejob\"");
		(*errors)++;
	} else if (conf_get_str(cx, v[TR_URL], keys[TR_URL], "tracing.url", &t->url) < 0) {
		(*errors)++;
	} else {
		const char *u = strncmp(t->url, "jdbc:", 5) == 0 ? t->url + 5 : t->url;
		if (strncmp(u, "postgresql://", 13) != 0 && strncmp(u, "postgres://", 11) != 0 && !strchr(u, '=')) {
			conf_err(cx, v[TR_URL], "tracing.url", "must be a PostgreSQL URL (postgresql://HOST:PORT/DB, "
			         "jdbc:postgresql://... too) or a libpq conninfo (\"host=... dbname=...\") (got %s)", t->url);
			(*errors)++;
			t->url = NULL;
		}
	}
	if (v[TR_USER] && conf_get_str(cx, v[TR_USER], keys[TR_USER], "tracing.username", &t->username) < 0)
		(*errors)++;
	if (v[TR_PASSWORD] && conf_get_str(cx, v[TR_PASSWORD], keys[TR_PASSWORD], "tracing.password", &t->password) < 0)
		(*errors)++;
	if (v[TR_SPOOLDIR]) {
		if (conf_get_str(cx, v[TR_SPOOLDIR], keys[TR_SPOOLDIR], "tracing.spoolDir", &t->spool_dir) < 0) {
			(*errors)++;
		} else if (!t->spool_dir[0]) {
			conf_err(cx, v[TR_SPOOLDIR], "tracing.spoolDir", "must name a directory");
			(*errors)++;
		}
	}
	if (v[TR_SPOOLMAX] && conf_get_int(cx, v[TR_SPOOLMAX], keys[TR_SPOOLMAX], "tracing.spoolMaxBytes", 65536,
	                                   INT32_MAX, "an integer 65536-2147483647 (bytes)", &t->spool_max_bytes) < 0)
		(*errors)++;
	if (*errors) t->url = NULL;
}

static size_t value_bytes(const conf_value_t *v, size_t depth)
{
	if (v->kind == CONF_VALUE_SCALAR) return strlen(v->str) + (v->tag ? strlen(v->tag) : 0) + 8;
	size_t sum = (v->tag ? strlen(v->tag) : 0) + 8, cnt = v->kind == CONF_VALUE_MAP ? 2 * v->n : v->n;
	for (size_t i = 0; i < cnt; i++) sum += value_bytes(&v->items[i], depth + 1) + 2 * depth;
	return sum;
}

/* A job whose config node ZooKeeper would refuse (jute.maxbuffer, 1 MiB) is an error now rather
 * than at the first write. Writing the node costs little, but only happens when a bound on its
 * size (every byte escaped, nothing shared) comes near the limit. */
static int check_node_size(conf_ctx_t *cx, const conf_job_t *j, const conf_tnode_t *at,
                           const char *path)
{
	size_t bound = 4096;
	const char *strs[] = { j->cron, j->time_zone, j->items.parameters, j->job_parameter,
	                       j->strategy.type, j->executor.type,
	                       j->error_handler_type, j->description, j->label, j->name };
	for (size_t i = 0; i < NELEM(strs); i++) bound += strs[i] ? 6 * strlen(strs[i]) + 64 : 0;
	for (size_t i = 0; i < j->listener.n_types; i++) bound += 6 * strlen(j->listener.types[i]) + 8;
	for (size_t i = 0; i < j->flow.n; i++) bound += 6 * strlen(j->flow.depends_on[i]) + 8;
	for (size_t i = 0; i < j->n_props; i++)
		bound += 6 * (strlen(j->props[i].key) + strlen(j->props[i].value)) + 16;
	for (size_t i = 0; i < j->extra.n; i++)
		bound += 6 * value_bytes(&j->extra.configurations[i], 1);
	if (bound <= CONF_MAX_NODE_BYTES) return 0;
	size_t len;
	char *y = conf_node_emit(j, &len);
	if (!y) {
		conf_err(cx, at, path, "out of memory writing its config node");
		return -1;
	}
	free(y);
	if (len <= CONF_MAX_NODE_BYTES) return 0;
	conf_err(cx, at, path, "its config node would be %zu bytes, and ZooKeeper refuses nodes "
	         "over 1 MiB (jute.maxbuffer); make props, description or jobExtraConfigurations "
	         "smaller", len);
	return -1;
}

static void load_jobs(conf_ctx_t *cx, const conf_tnode_t *k, const conf_tnode_t *map, conf_t *c,
                      int *errors)
{
	char p[512];
	if (map->kind != CONF_TN_MAP) {
		conf_err(cx, k, "jobs", "must be a mapping of job names to jobs (got %s); "
		         "write jobs: {} for none", conf_kind_name(map));
		(*errors)++;
		return;
	}
	conf_job_t *jobs = conf_arena_alloc(cx->out, (map->n + 1) * sizeof *jobs);
	if (!jobs) return;
	size_t n = 0;
	for (size_t i = 0; i < map->n; i++) {
		const conf_tnode_t *jk = map->kids[2 * i], *jv = map->kids[2 * i + 1];
		if (!conf_visit(cx, jk)) break;
		conf_path(p, sizeof p, "jobs", memchr(jk->str, '\0', jk->len) ? "?" : jk->str);
		if (conf_job_build(cx, &jobs[n], jk, jv, p) < 0) {
			(*errors)++;
			if (conf_arena_exhausted(cx->out)) return;
			continue;
		}
		if (check_node_size(cx, &jobs[n], jk, p) < 0) {
			(*errors)++;
			continue;
		}
		n++;
	}
	c->jobs = jobs;
	c->n_jobs = n;
}

conf_t *conf_parse(const void *buf, size_t len, const char *file, const conf_opts_t *opts,
                   conf_diags_t **diags)
{
	conf_diags_t *d = conf_diags_new();
	conf_arena_t *tmp = conf_arena_new(CONF_ARENA_LIMIT), *out = conf_arena_new(CONF_ARENA_LIMIT);
	conf_t *c = NULL;
	int errors = 0;
	if (diags) *diags = NULL;
	if (!d || !tmp || !out) goto nomem;
	if (!file) file = "(config)";
	conf_ctx_t cx = { .file = file, .buf = buf, .len = len, .tmp = tmp, .out = out, .diags = d,
	                  .opts = opts };
	c = conf_arena_alloc(out, sizeof *c);
	if (!c) goto nomem;
	c->mem_ = out;
	c->file = conf_arena_strdup(out, file);
	if (len > CONF_MAX_FILE_BYTES) {
		conf_diag_add(d, file, 0, 0, "", "is larger than 4 MiB; ejob's configuration file is "
		              "limited to %u bytes", CONF_MAX_FILE_BYTES);
		goto fail;
	}
	bool empty;
	const conf_tnode_t *root = conf_tree_parse(&cx, &empty);
	if (!root) {
		if (empty)
			conf_diag_add(d, file, 1, 1, "", "the file is empty; it needs regCenter (serverLists, "
			              "namespace) and jobs");
		if (conf_diags_total(d) == 0) goto nomem;
		goto fail;
	}
	if (root->kind != CONF_TN_MAP) {
		conf_err(&cx, root, "", "the file must be a mapping with the keys regCenter, supervisor "
		         "and jobs (got %s)", conf_kind_name(root));
		goto fail;
	}
	const conf_tnode_t *keys[T_N], *v[T_N];
	conf_map_keys(&cx, root, "", top_keys, T_N, T_N, keys, v);
	if (!v[T_REGCENTER]) {
		/* overrides may still give both required keys */
		if (!opts || !opts->server_lists || !opts->namespace) {
			conf_err(&cx, root, "regCenter", "missing; the file needs regCenter with serverLists "
			         "and namespace");
			errors++;
		} else {
			load_regcenter(&cx, NULL, NULL, &c->reg_center, &errors);
		}
	} else {
		load_regcenter(&cx, keys[T_REGCENTER], v[T_REGCENTER], &c->reg_center, &errors);
	}
	load_supervisor(&cx, keys[T_SUPERVISOR], v[T_SUPERVISOR], &c->supervisor, &errors);
	load_tracing(&cx, keys[T_TRACING], v[T_TRACING], &c->tracing, &errors);
	if (!v[T_JOBS] || conf_is_null(v[T_JOBS])) {
		conf_err(&cx, keys[T_JOBS] ? keys[T_JOBS] : root, "jobs",
		         "missing; the file needs jobs, a mapping of job names to jobs "
		         "(jobs: {} for none)");
		errors++;
	} else {
		load_jobs(&cx, keys[T_JOBS], v[T_JOBS], c, &errors);
		/* the workflows, once every job loaded (a job that did not would be "no job named" here) */
		if (!errors && !conf_diags_errors(d) && v[T_JOBS]->kind == CONF_TN_MAP)
			conf_flow_file(&cx, v[T_JOBS], c, &errors);
	}
	if (conf_arena_exhausted(out) || conf_arena_exhausted(tmp)) {
		conf_diag_add(d, file, 0, 0, "", "out of memory, or more than %zu MiB after expanding "
		              "aliases", CONF_ARENA_LIMIT >> 20);
		goto fail;
	}
	if (errors || conf_diags_errors(d)) goto fail;
	conf_diags_sort(d);   /* the warnings */
	conf_resolver_free(&cx.res);
	conf_arena_free(tmp);
	if (diags) *diags = d;
	else conf_diags_free(d);
	return c;
fail:
	conf_resolver_free(&cx.res);
	conf_diags_sort(d);
	conf_arena_free(tmp);
	conf_arena_free(out);
	if (diags) *diags = d;
	else conf_diags_free(d);
	errno = EINVAL;
	return NULL;
nomem:
	conf_arena_free(tmp);
	conf_arena_free(out);
	conf_diags_free(d);
	errno = ENOMEM;
	return NULL;
}

void conf_free(conf_t *c)
{
	if (c) conf_arena_free(c->mem_);
}

conf_hold_t *conf_hold(const conf_t *c)
{
	return c ? conf_arena_hold(c->mem_) : NULL;
}

void conf_release(conf_hold_t *h)
{
	conf_arena_free(h);
}

/* The tables above, for conf/conf_keys.c (the key list man/ejob.yaml.5.scd is checked against,
 * t/120): section "" is the top level, else a dotted path ("supervisor.history"). NULL for a
 * section without a table of its own. */
const char *const *conf_load_keys(const char *section, size_t *n)
{
	static const struct {
		const char *name;
		const char *const *keys;
		size_t n;
	} t[] = {
		{ "", top_keys, NELEM(top_keys) },
		{ "regCenter", rc_keys, NELEM(rc_keys) },
		{ "supervisor", sup_keys, NELEM(sup_keys) },
		{ "supervisor.history", hist_keys, NELEM(hist_keys) },
		{ "tracing", tracing_keys, NELEM(tracing_keys) },
	};
	for (size_t i = 0; i < NELEM(t); i++)
		if (strcmp(section, t[i].name) == 0) {
			*n = t[i].n;
			return t[i].keys;
		}
	*n = 0;
	return NULL;
}
