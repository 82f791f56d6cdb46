/* conf/conf_int.h: what the conf module's files share (not for other modules).
 *
 *   conf_arena.c   bounded arena allocator: a conf_t and everything it points to
 *   conf_diag.c    the error list, message helpers, "did you mean"
 *   conf_tree.c    libyaml events -> a tree with positions (anchors, aliases, merge keys, limits)
 *   conf_scalar.c  scalar conversions shared by both formats: ints, bools, strings, names
 *   conf_sip.c     shardingItemParameters, parsed as ElasticJob parses it
 *   conf_job.c     one job's keys (file and config-node forms)
 *   conf_load.c    the file: regCenter, supervisor, jobs; conf_parse, conf_load_file
 *   conf_sys.c     the host: CPU count, user, group and zone lookups, reading a file
 *   conf_util.c    lookups, conf_job_equal, names of enums
 *   conf_snake.c   SnakeYAML's emitter rules (scalar analysis, implicit types, scalar writers)
 *   conf_node.c    ElasticJob's config node: emit (with java.util.Properties order) and parse
 *   conf_take.c    whether a config node can be taken as a job's config
 *   conf_http.c    an http job's props
 *   conf_job_flow.c  dependsOn (a job's upstreams) in both forms, and the file's workflows checked
 *   conf_flow.c    the workflows' graph: conf_flow_check (conf_flow.h)
 */
#ifndef EJOB_CONF_INT_H
#define EJOB_CONF_INT_H

#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"

/* ---- arena ------------------------------------------------------------------------------ */

#define CONF_ARENA_LIMIT ((size_t)256 << 20) /* what one load may allocate, aliases included */

typedef struct conf_arena conf_arena_t;

conf_arena_t *conf_arena_new(size_t limit);
/* The least a new chunk holds (16 KB unless set): small for what lives long and small, as a job's
 * config node (one per job: 10,000 jobs held 160 MB in 16 KB chunks). */
void conf_arena_chunk(conf_arena_t *a, size_t chunk);
/* Frees it, or drops one hold (conf_arena_hold): the last to go frees it. */
void conf_arena_free(conf_arena_t *a);
conf_arena_t *conf_arena_hold(conf_arena_t *a);
void *conf_arena_alloc(conf_arena_t *a, size_t n);           /* zeroed; NULL past the limit */
char *conf_arena_strndup(conf_arena_t *a, const char *s, size_t n);
char *conf_arena_strdup(conf_arena_t *a, const char *s);
bool conf_arena_exhausted(const conf_arena_t *a);
/* p goes with the arena: conf_arena_free() calls release(p) (the latest handed first). When
 * the arena is full, release(p) at once, and -1 (the arena counts as exhausted). */
int conf_arena_own(conf_arena_t *a, void (*release)(void *), void *p);

/* ---- diagnostics ------------------------------------------------------------------------ */

conf_diags_t *conf_diags_new(void);
/* Adds one error. line 0: no position. On ENOMEM the error is counted as dropped (as an error). */
void conf_diag_add(conf_diags_t *d, const char *file, unsigned line, unsigned column,
                   const char *key, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void conf_diag_vadd(conf_diags_t *d, const char *file, unsigned line, unsigned column,
                    const char *key, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));
/* The same at a level. */
void conf_diag_add_level(conf_diags_t *d, conf_diag_level_t level, const char *file, unsigned line, unsigned column,
                         const char *key, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
void conf_diag_vadd_level(conf_diags_t *d, conf_diag_level_t level, const char *file, unsigned line,
                          unsigned column, const char *key, const char *fmt, va_list ap)
	__attribute__((format(printf, 7, 0)));
size_t conf_diags_total(const conf_diags_t *d);              /* kept + dropped */
void conf_diags_sort(conf_diags_t *d);

/* snprintf into a buffer sized for the format: truncation would be a bug here, so it aborts
 * (an invariant check, on in every build). */
void conf_fmt(char *out, size_t outsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Writes s (n bytes) into out as a double-quoted, escaped, shortened string for messages:
 * "four", "a\tb", "aaaa..." (at most about 60 characters). */
void conf_quote(char *out, size_t outsz, const char *s, size_t n);

/* What is wrong with an http(s) URL (http.uri, the error handlers' webhooks), or NULL. */
const char *conf_url_problem(const char *u);
/* "a, b or c" into out. */
void conf_join_names(char *out, size_t outsz, const char *const *names, size_t n);

/* ---- the YAML tree ---------------------------------------------------------------------- */

enum { CONF_TN_SCALAR = 1, CONF_TN_SEQ, CONF_TN_MAP };

typedef struct conf_tnode conf_tnode_t;
struct conf_tnode {
	unsigned char kind;    /* CONF_TN_* */
	unsigned char style;   /* scalars: yaml_scalar_style_t */
	bool exact;            /* scalar on one line, value bytes == source bytes at src */
	const char *tag;       /* resolved tag as libyaml reports it, or NULL */
	const char *str;       /* scalar: NUL-terminated value (may hold NULs: see len) */
	size_t len;
	unsigned line, col;    /* 1-based start of the node (of its tag or anchor, if any) */
	unsigned vline, vcol;  /* 1-based start of the value itself (exact scalars) */
	size_t n;              /* seq: items; map: pairs */
	conf_tnode_t **kids;   /* seq: n; map: 2n (key, value) */
	size_t size;           /* nodes in it with aliases expanded (saturates at SIZE_MAX) */
	const void *conv;      /* memo: its conf_value_t, once converted (aliases share it) */
};

#define CONF_MAX_DEPTH  64
#define CONF_MAX_VISITS ((size_t)4 << 20) /* nodes walked, counting alias re-visits */
#define CONF_MAX_VALUE_NODES 100000      /* a job's jobExtraConfigurations, aliases expanded */
#define CONF_MAX_NODE_BYTES ((size_t)1044480) /* a config node: ZooKeeper's 1 MiB less room */

/* SnakeYAML's implicit-type patterns: compiled once per process at their first use and shared
 * (regexec only reads them), where compiling them again for every load or emit was most of the
 * time a start in front of 10,000 new jobs spent writing their config nodes. What a load or an
 * emit holds of them is nothing; the type stays so that each says where it resolves. */
typedef struct conf_resolver {
	int used;                /* resolved something (nothing to free either way) */
} conf_resolver_t;
void conf_resolver_free(conf_resolver_t *r);

typedef struct conf_ctx {
	const char *file;
	const char *buf;
	size_t len;
	conf_arena_t *tmp;      /* the tree */
	conf_arena_t *out;      /* the result */
	conf_diags_t *diags;
	size_t visits;          /* budget against alias bombs */
	bool over_budget;       /* reported once */
	bool node_mode;         /* parsing a config node (conf_node.c) */
	conf_diag_level_t level; /* what conf_err and conf_err_in report: CONF_DIAG_ERROR but while a
	                            config node's key is checked on its own (conf_job.c) */
	const conf_opts_t *opts;
	conf_resolver_t res;
	const cron_t *crons[256]; /* compiled in this parse, by their expression's hash (8 probes): the
	                             jobs of one expression share one (10,000 jobs on one held 4 MB of
	                             copies) */
} conf_ctx_t;

/* Parse buf into a tree; NULL and a diag on a YAML error. *empty set when the stream holds no
 * document (or an empty one). */
conf_tnode_t *conf_tree_parse(conf_ctx_t *cx, bool *empty);

/* ---- scalar helpers (conf_scalar.c) ----------------------------------------------------- */

void conf_err(conf_ctx_t *cx, const conf_tnode_t *at, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A warning at a node: the value is taken (the load does not fail). */
void conf_warn(conf_ctx_t *cx, const conf_tnode_t *at, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Error at a position inside a scalar's value (byte offset off), when it can be mapped. */
void conf_err_in(conf_ctx_t *cx, const conf_tnode_t *at, size_t off, const char *key,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Counts one node against the walk budget; false (and one error) once it is spent. */
bool conf_visit(conf_ctx_t *cx, const conf_tnode_t *at);

bool conf_is_null(const conf_tnode_t *n);
const char *conf_kind_name(const conf_tnode_t *n);           /* "a list", "a mapping", ... */
/* Child path "parent.key" / "parent[i]" into out (shortened when long). */
void conf_path(char *out, size_t outsz, const char *parent, const char *key);
void conf_path_index(char *out, size_t outsz, const char *parent, size_t i);

/* Typed values. Errors point at `at` (the key, for a whole value: "12:5: key: must be ...") or,
 * when at is NULL, at the value itself (list items, overrides).
 * Scalar text of n: a !!binary scalar decoded; NUL bytes are refused (and, in the file, control
 * characters). Sets *s (in cx->out) or reports and returns -1. */
int conf_get_str(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at, const char *key,
                 const char **s);
int conf_get_int(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at, const char *key,
                 int64_t min, int64_t max, const char *allowed, int *v);
int conf_get_bool(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at, const char *key,
                  bool *v);
/* One of names[]: *idx. */
int conf_get_enum(conf_ctx_t *cx, const conf_tnode_t *n, const conf_tnode_t *at, const char *key,
                  const char *const *names, size_t nnames, int *idx);
/* A name that becomes a ZooKeeper path segment (namespace, job name): NULL if fine, else why. */
const char *conf_check_zk_name(const char *s, size_t len);

/* Walks a mapping's keys against a table. Reports unknown keys (with a suggestion, or the list
 * of allowed keys; in cx->node_mode as ElasticJob refuses them); returns in vals[i] the value node of names[i] (NULL
 * when absent) and in keys[i] its key node. Names from index nlisted on are recognized but
 * neither suggested nor listed (keys that exist only to be refused with a better message). */
void conf_map_keys(conf_ctx_t *cx, const conf_tnode_t *map, const char *path,
                   const char *const *names, size_t n, size_t nlisted,
                   const conf_tnode_t **keys, const conf_tnode_t **vals);

/* The loader's key tables (conf_load.c, conf_job.c), for conf_keys.c: the keys of section ("":
 * the top level, "regCenter", "supervisor", "supervisor.history", "tracing"), NULL for another;
 * and the keys of a job in a file. */
const char *const *conf_load_keys(const char *section, size_t *n);
const char *const *conf_job_file_keys(size_t *n);

/* ---- shardingItemParameters (conf_sip.c) ------------------------------------------------ */

/* Parse s as ElasticJob does, against total items. Problems are reported through cb with the
 * byte offset inside s (warn: a warning, the pair is taken as ElasticJob takes it); returns the
 * number of errors. On success *out (allocated in a, sorted by item) and *n are set.
 * loose: as ElasticJob reads it (a config node): an item out of 0..total-1 is never read (a
 * warning, dropped), an item given twice takes the last value (a warning); else (ejob's file)
 * both are errors. */
typedef void conf_sip_err_fn(void *arg, size_t off, bool warn, const char *msg);
/* total < 0: the count is unknown (itself invalid); check only the form and duplicates. */
int conf_sip_parse(conf_arena_t *a, const char *s, int total, bool loose, conf_item_param_t **out,
                   size_t *n, conf_sip_err_fn *cb, void *arg);

/* ---- the host (conf_sys.c) -------------------------------------------------------------- */

/* conf_opts_t.load_zone of conf_opts_system(): tz_load(), its message into why. */
tz_t *conf_sys_load_zone(const char *name, char *why, size_t whysz, void *arg);

/* ---- jobs (conf_job.c) ------------------------------------------------------------------ */

/* Fill j from a job mapping. name_key: the key node (file form) or NULL (config node: the name
 * comes from jobName). Returns 0, or -1 when errors were reported. */
int conf_job_build(conf_ctx_t *cx, conf_job_t *j, const conf_tnode_t *name_key,
                   const conf_tnode_t *map, const char *path);

/* ---- workflows (conf_job_flow.c) --------------------------------------------------------- */

/* The file's jobs' dependsOn checked together (conf_flow_check), unless opts->flow_open: an error
 * is said at the job's name under jobs (map, the jobs: mapping) and counted in *errors. */
void conf_flow_file(conf_ctx_t *cx, const conf_tnode_t *map, const conf_t *c, int *errors);

/* ---- http jobs (conf_http.c) ------------------------------------------------------------ */

/* An http job's props into j->http (ElasticJob's HttpJobProperties and its defaults, ejob's
 * http.ca.file), each checked: for every problem err(arg, key, message) is called (key: the
 * prop, "http.uri"; err may be NULL). Returns how many; 0: the fields are set. Called by the
 * loader for type http, and by conf_node_take for a node its root node types HTTP. */
typedef void conf_http_err_fn(void *arg, const char *key, const char *msg);

/* A job's prop (the first with that key), or NULL: for the checks of a type's or handler's props. */
const char *conf_job_prop(const conf_job_t *j, const char *key);
/* What those checks find: each problem said through fn (the key, the message) and counted in n. */
struct conf_prop_report {
	conf_http_err_fn *fn;
	void *arg;
	int n;
};
void conf_prop_problem(struct conf_prop_report *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A prop that is an integer in [min, max] written in decimal digits (Integer.parseInt's range),
 * into *out; anything else is a problem "must be {what} (got ...)". Not set: *out untouched. */
void conf_prop_int(struct conf_prop_report *r, const conf_job_t *j, const char *key, long long min, long long max,
                   const char *what, int *out);
int conf_job_http(conf_job_t *j, conf_http_err_fn *err, void *arg);
/* A dataflow job's props into j->dataflow and j->native.fetch/.process (conf_dataflow.c):
 * streaming.process (ElasticJob's, false), dataflow.batch.bytes (ejob's, 1 MiB), and for a
 * native one (native.library set) native.fetch and native.process. Same reporting as
 * conf_job_http; returns how many problems. */
int conf_job_dataflow(conf_job_t *j, conf_http_err_fn *err, void *arg);
/* Whether ElasticJob sends http.data with this method (POST, PUT, DELETE). */
int conf_http_sends_data(const char *method);

/* ---- SnakeYAML rules (conf_snake.c) ----------------------------------------------------- */

typedef struct conf_out {
	char *buf;
	size_t len, cap;
	bool oom;
	/* the emitter's state, as SnakeYAML's Emitter keeps it */
	int column;              /* in UTF-16 units, as Java counts */
	int indent;              /* -1: none yet */
	int indents[CONF_MAX_DEPTH * 2 + 8];
	int nindents;
	bool whitespace, indention, open_ended;
	bool root_ctx, mapping_ctx, simple_key_ctx;
	conf_resolver_t res;
} conf_out_t;

void conf_out_init(conf_out_t *o);
void conf_out_fini(conf_out_t *o);                /* frees the resolver, keeps buf */
void conf_out_bytes(conf_out_t *o, const char *s, size_t n);

/* The tag SnakeYAML's Resolver gives a plain scalar with this text ("tag:yaml.org,2002:int",
 * ...; "tag:yaml.org,2002:str" when it is just a string). */
const char *conf_snake_resolve(conf_resolver_t *r, const char *s, size_t n);

/* Emit a string scalar as SnakeYAML represents java.lang.String (plain, quoted, literal, or
 * !!binary when not printable). key: the scalar is a mapping key (simple-key rules apply). */
void conf_snake_string(conf_out_t *o, const char *s, size_t n);
/* A scalar SnakeYAML writes plain with an implicit tag (ints, booleans). */
void conf_snake_plain(conf_out_t *o, const char *s);
/* A generic value (jobExtraConfigurations), keeping tags and plain/quoted-ness. */
void conf_snake_value(conf_out_t *o, const conf_value_t *v);
/* Block mapping with string keys: begin, then for each pair key() and a value, then end. */
void conf_snake_map_begin(conf_out_t *o);
void conf_snake_map_key(conf_out_t *o, const char *key, size_t n);
void conf_snake_map_end(conf_out_t *o);
/* Block sequence (in a mapping value): begin, item() before each value, end. */
void conf_snake_seq_begin(conf_out_t *o);
void conf_snake_seq_item(conf_out_t *o);
void conf_snake_seq_end(conf_out_t *o);
void conf_snake_end(conf_out_t *o);                          /* end of the document */

/* Java's String.hashCode of a UTF-8 string (as UTF-16). */
int32_t conf_java_hash(const char *s);
/* Order in which java.util.Properties (a ConcurrentHashMap since JDK 9) iterates keys put in the
 * order given: writes a permutation of 0..n-1 into order. 0 or -1 (ENOMEM). */
int conf_props_order(const char *const *keys, size_t n, size_t *order);

/* UTF-8 helpers. */
size_t conf_utf8_decode(const char *s, size_t n, uint32_t *cp); /* bytes used (>= 1) */
size_t conf_utf8_encode(uint32_t cp, char *out);               /* bytes written */

/* ---- base64 (!!binary) ------------------------------------------------------------------ */

/* Decoded bytes (YAML: whitespace ignored) into a, or NULL if s is not base64. */
char *conf_base64_decode(conf_arena_t *a, const char *s, size_t n, size_t *outlen);
void conf_base64_encode(conf_out_t *o, const unsigned char *s, size_t n);

#endif
