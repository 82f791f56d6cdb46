/* conf/conf.h: ejob's YAML configuration (one file: regCenter, supervisor, jobs) and
 * ElasticJob's job config node (the YAML under /{namespace}/{job}/config).
 *
 * The loader is pure logic: conf_parse() reads a buffer (the file name only labels messages), so
 * tests and fuzzers call it directly; conf_load_file() is the thin wrapper that reads a path.
 * Every error in the input is reported, each as "FILE:LINE:COLUMN: key: what is wrong, and what
 * is allowed" (docs/config.md).
 *
 * What a load returns is a read-only struct family: conf_t owns every string and array it points
 * to, and each job's compiled cron and loaded zone, all freed by conf_free(). Nothing in it
 * changes after the load; a reload builds a new conf_t and the supervisor compares jobs with
 * conf_job_equal().
 */
#ifndef EJOB_CONF_H
#define EJOB_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cron/cron.h"
#include "cron/tz.h"

/* Limits (docs/config.md). */
#define CONF_MAX_FILE_BYTES   (4u << 20) /* a bigger file is refused with a clear error */
#define CONF_MAX_NAME_BYTES   255        /* namespace and job names (ZooKeeper path segments) */
#define CONF_MAX_ITEMS        10000      /* shardingTotalCount */
#define CONF_MAX_DIAGS        1000       /* errors kept; more are only counted */

/* ---- diagnostics ------------------------------------------------------------------------ */

/* How bad a diagnostic is. A file is refused on any CONF_DIAG_ERROR. A config node is refused
 * whole on a CONF_DIAG_ERROR (ElasticJob cannot load it either); a CONF_DIAG_KEY is a value
 * ElasticJob loads and fails on only when it uses that key (at a fire, a resharding, a
 * reschedule): the rest of the node is taken and the key keeps the value in force
 * (conf_node_take); a CONF_DIAG_WARN is a value ElasticJob ignores or reads its own way, and ejob
 * takes it the same way. */
typedef enum conf_diag_level {
	CONF_DIAG_ERROR = 0,
	CONF_DIAG_KEY,
	CONF_DIAG_WARN,
} conf_diag_level_t;

typedef struct conf_diag {
	const char *file;   /* as given to conf_parse(), or "(command line)" for an override */
	unsigned line;      /* 1-based; 0 when the error has no position (override, I/O) */
	unsigned column;    /* 1-based, in characters */
	const char *key;    /* dotted path, e.g. "jobs.hello.cron"; "" for file-level errors */
	const char *msg;    /* what is wrong and what is allowed */
	const char *text;   /* the whole line: "FILE:LINE:COLUMN: key: msg", for a warning
	                       "FILE:LINE:COLUMN: warning: key: msg" */
	conf_diag_level_t level;
} conf_diag_t;

typedef struct conf_diags conf_diags_t;

size_t conf_diags_count(const conf_diags_t *d);              /* kept errors (<= CONF_MAX_DIAGS) */
size_t conf_diags_dropped(const conf_diags_t *d);            /* errors past the limit */
size_t conf_diags_errors(const conf_diags_t *d);             /* CONF_DIAG_ERROR ones, dropped included */
const conf_diag_t *conf_diags_get(const conf_diags_t *d, size_t i); /* sorted by line, column */
void conf_diags_free(conf_diags_t *d);                       /* NULL is fine */

/* ---- the configuration ------------------------------------------------------------------ */

typedef enum conf_job_type {
	CONF_JOB_NONE = 0,   /* a config node without ejob.type (written by ElasticJob itself) */
	CONF_JOB_SCRIPT,
	CONF_JOB_NATIVE,
	CONF_JOB_EXTERNAL,
	CONF_JOB_HTTP,       /* ElasticJob's HTTP job: one request per item (conf_http.c) */
	CONF_JOB_DATAFLOW,   /* ElasticJob's DataflowJob: fetch and process (conf_dataflow.c); native
	                        when native.library is set, else external */
} conf_job_type_t;

/* jobShardingStrategyType: ElasticJob's names (its strategies' getType()). ODEVITY_BY_NAME and
 * ROUND_ROBIN_BY_NAME, names ejob took by mistake before, are read as ODEVITY and ROUND_ROBIN
 * with a warning, and written back as those. */
typedef enum conf_strategy {
	CONF_STRATEGY_AVG_ALLOCATION = 0,
	CONF_STRATEGY_ODEVITY,                 /* OdevitySortByNameJobShardingStrategy */
	CONF_STRATEGY_ROUND_ROBIN,             /* RoundRobinByNameJobShardingStrategy */
	CONF_STRATEGY_SINGLE_SHARDING_BALANCE, /* ElasticJob 3.0.5's SingleShardingBalanceJobShardingStrategy */
} conf_strategy_t;

typedef enum conf_log_level {
	CONF_LOG_ERROR = 0,
	CONF_LOG_WARN,
	CONF_LOG_INFO,
	CONF_LOG_DEBUG,
} conf_log_level_t;

typedef enum conf_log_format {
	CONF_LOG_TEXT = 0,
	CONF_LOG_JSON,
} conf_log_format_t;

typedef struct conf_kv {
	const char *key;
	const char *value;
} conf_kv_t;

typedef struct conf_item_param {
	int item;            /* 0 .. sharding_total_count-1 */
	const char *value;   /* trimmed as ElasticJob trims it; may be "" only if written so */
} conf_item_param_t;

/* A YAML value kept as it was written (jobExtraConfigurations: ejob does not interpret them, but
 * publishes them unchanged so ElasticJob's tools keep working). */
typedef enum conf_value_kind { CONF_VALUE_SCALAR, CONF_VALUE_SEQ, CONF_VALUE_MAP } conf_value_kind_t;

typedef struct conf_value {
	conf_value_kind_t kind;
	/* SCALAR: its type as a full tag, always set: the explicit tag, else what YAML 1.1 makes of
	 * a plain scalar ("tag:yaml.org,2002:int" for 5), else "tag:yaml.org,2002:str".
	 * SEQ, MAP: an explicit tag ("tag:yaml.org,2002:org.apache...YamlTracingConfiguration"),
	 * or NULL. */
	const char *tag;
	const char *str;                 /* SCALAR: the text */
	size_t n;                        /* SEQ: items; MAP: pairs */
	const struct conf_value *items;  /* SEQ: n values; MAP: 2n values, key then value */
} conf_value_t;

#define CONF_ID_UNRESOLVED UINT32_MAX

typedef struct conf_id {
	uint32_t id;         /* CONF_ID_UNRESOLVED when a name was given and no lookup was set */
	const char *name;    /* the name as written, or NULL when a number was written */
} conf_id_t;

/* regCenter: ElasticJob's ZookeeperConfiguration keys. */
typedef struct conf_regcenter {
	const char *server_lists;        /* "host:port,host:port"; required */
	const char *namespace;           /* the root node; required */
	int base_sleep_ms;               /* baseSleepTimeMilliseconds, 1000 */
	int max_sleep_ms;                /* maxSleepTimeMilliseconds, 3000 */
	int max_retries;                 /* maxRetries, 3: at start, the supervisor gives up (exit 1)
	                                    after 1 + maxRetries rounds of attempts without a session
	                                    and max_sleep_ms x maxRetries, as ElasticJob's registry
	                                    center fails its start */
	int session_timeout_ms;          /* sessionTimeoutMilliseconds, 6000 (ElasticJob: 60000) */
	int connection_timeout_ms;       /* connectionTimeoutMilliseconds: checked, not acted on (a
	                                    warning when set) */
	const char *digest;              /* "user:password" or NULL */
	bool ensemble_tracker;           /* ensembleTracker (3.0.5), true: not acted on (a warning
	                                    when written true) */
} conf_regcenter_t;

typedef struct conf_supervisor {
	int workers;                     /* 1-1024; default: CPUs (conf_opts_t.cpus) */
	const char *ip;                  /* override of the detected address, or NULL */
	conf_log_level_t log_level;      /* info */
	conf_log_format_t log_format;    /* logFormat: text (ipc/logline.h has both forms) */
	const char *attach_socket;       /* NULL: derived at start (docs/worker.md: $EJOB_RUNTIME_DIR,
	                                    /run/ejob for root, $XDG_RUNTIME_DIR/ejob, /tmp/ejob-UID) */
	size_t n_attach_allow_uids;      /* besides the supervisor's own uid, always allowed */
	const conf_id_t *attach_allow_uids;
	size_t n_attach_allow_gids;
	const conf_id_t *attach_allow_gids;
	int shutdown_grace_seconds;      /* 10: SIGTERM to SIGKILL on shutdown */
	int kill_grace_seconds;          /* 5: SIGTERM to SIGKILL for a timed-out item */
	/* What a script item's output may put in the log, per run of an item (stdout and stderr
	 * together): lines and bytes; the rest is read and dropped, and one line says how much.
	 * 0: no limit. */
	int script_output_max_lines;     /* CONF_SCRIPT_OUTPUT_MAX_LINES */
	int script_output_max_bytes;     /* CONF_SCRIPT_OUTPUT_MAX_BYTES */
	/* history: every item execution as one JSON line (supervisor/sink/events_history.c) */
	const char *history_file;        /* history.file; NULL: none */
	int history_max_bytes;           /* history.maxBytes: rotated past it, CONF_HISTORY_MAX_BYTES */
	int history_keep;                /* history.keep: rotated files kept (FILE.1 ..), CONF_HISTORY_KEEP */
	/* metrics: the HTTP endpoint's address, "IPv4:PORT" or "[IPv6]:PORT" (/metrics, /healthz,
	 * /status: supervisor/obs/metrics.c); NULL: none */
	const char *metrics;
	/* labels: the jobs of the namespace this supervisor adopts (a config node's label is one of
	 * them; "*": any), besides its file's; none: it runs its file's jobs only (coord_adopt.c) */
	size_t n_labels;
	const char *const *labels;
	/* allowedCommands: fnmatch(3) globs (FNM_PATHNAME) on the resolved path of the program an
	 * adopted job runs (script.command.line's first word, listener commands, a native library);
	 * none: an adopted job that runs a program of this machine is refused */
	size_t n_allowed_commands;
	const char *const *allowed_commands;
} conf_supervisor_t;

/* An address to listen on, "IPv4:PORT" or "[IPv6]:PORT" (port 1-65535), as supervisor.metrics
 * takes it: 0 and *ss filled (len: its size), or -1. Pure. */
struct sockaddr_storage;
int conf_listen_addr(const char *s, struct sockaddr_storage *ss, unsigned *len);

#define CONF_HISTORY_MAX_BYTES (64 << 20)
#define CONF_HISTORY_KEEP 5

/* ElasticJob's HttpJobExecutor defaults */
#define CONF_HTTP_CONNECT_TIMEOUT_MS 3000
#define CONF_HTTP_READ_TIMEOUT_MS 5000
/* ejob: bytes of http.uri, http.data, http.content.type and http.ca.file together (they travel
 * in each item's frame, a 4 KiB ring slot) */
#define CONF_HTTP_REQUEST_MAX 3072u
/* ejob: dataflow.batch.bytes, the bound of a dataflow job's batch (worker/ejob.h's
 * EJOB_BATCH_DEFAULT and EJOB_BATCH_MAX) */
#define CONF_DATAFLOW_BATCH_BYTES (1u << 20)
#define CONF_DATAFLOW_BATCH_MAX   (64u << 20)

/* ejob: seconds a listener command may run before it is killed and counts as failed */
#define CONF_LISTENER_TIMEOUT_DEFAULT 60

#define CONF_SCRIPT_OUTPUT_MAX_LINES 1000
#define CONF_SCRIPT_OUTPUT_MAX_BYTES 65536

/* A job's groups of keys (conf_job_t below). */

/* shardingItemParameters */
struct conf_job_items {
	const char *parameters;                /* as written; "" when none (ElasticJob's default) */
	size_t n_params;                       /* parsed, sorted by item; see conf_job_item_param() */
	const conf_item_param_t *params;
};

/* jobShardingStrategyType */
struct conf_job_strategy {
	conf_strategy_t effective;             /* AVG_ALLOCATION when unset */
	const char *type;                      /* ElasticJob's name of the strategy (an old alias
	                                          written is replaced), or NULL */
	bool alias;                            /* it was written as ODEVITY_BY_NAME or ROUND_ROBIN_BY_NAME */
};

/* jobExecutorServiceHandlerType */
struct conf_job_executor {
	const char *type;                      /* jobExecutorServiceHandlerType, or 3.0.5's
	                                          jobExecutorThreadPoolSizeProviderType: CPU,
	                                          SINGLE_THREAD, or (a node) any name; NULL when unset */
	bool key_3_0_5;                        /* it was written under 3.0.5's key (and is published
	                                          under it again: 3.0.4 refuses that key, 3.0.5 the old) */
};

/* jobListenerTypes (ElasticJob's), and ejob's listeners (docs/config.md "Listeners"): commands
 * run on this instance around its items of each fire, split and run like a script job's command
 * line; NULL: none */
struct conf_job_listener {
	size_t n_types;
	const char *const *types;              /* jobListenerTypes */
	const char *before;                    /* "ejob.listener.before" */
	const char *after;                     /* "ejob.listener.after" */
	const char *before_all;                /* "ejob.listener.beforeAll": once per fire, cluster-wide,
	                                          before any item of it runs anywhere */
	const char *after_all;                 /* "ejob.listener.afterAll": once per fire, cluster-wide */
	int timeout_seconds;                   /* "ejob.listener.timeoutSeconds", CONF_LISTENER_TIMEOUT_DEFAULT */
};

/* jobExtraConfigurations */
struct conf_job_extra {
	size_t n;
	const conf_value_t *configurations;    /* each a (usually tagged) mapping */
};

/* props "native.*": a native job's library and its functions */
struct conf_job_native {
	const char *library;                   /* "native.library", or NULL */
	const char *symbol;                    /* "native.symbol", or NULL */
	const char *fetch;                     /* "native.fetch": a native dataflow job's functions; */
	const char *process;                   /* "native.process": NULL for an external one */
};

/* type http: ElasticJob's HttpJobProperties, read from props with its defaults (set only for a
 * job of type http; docs/config.md) */
struct conf_job_http {
	const char *uri;                       /* "http.uri": http:// or https:// */
	const char *method;                    /* "http.method": GET POST PUT DELETE HEAD OPTIONS TRACE */
	const char *data;                      /* "http.data", NULL when unset or "" (the body of a
	                                          POST, PUT or DELETE; other methods send none) */
	const char *content_type;              /* "http.content.type", NULL when unset or "" */
	const char *ca_file;                   /* "http.ca.file" (ejob): PEM CA certificates for
	                                          https; NULL: the system's */
	int connect_timeout_ms;                /* "http.connect.timeout.milliseconds", 3000; 0 none */
	int read_timeout_ms;                   /* "http.read.timeout.milliseconds", 5000; 0 none */
};

/* type dataflow: ElasticJob's DataflowJobProperties and ejob's (set only for a job of type
 * dataflow; docs/config.md); a native one's functions are in native */
struct conf_job_dataflow {
	bool streaming;                        /* "streaming.process": true or false, false */
	unsigned batch_bytes;                  /* "dataflow.batch.bytes" (ejob): 1..CONF_DATAFLOW_BATCH_MAX,
	                                          CONF_DATAFLOW_BATCH_BYTES */
};

/* config node only: the keys whose value ElasticJob loads but fails on when it uses it (each a
 * CONF_DIAG_KEY): conf_node_parse leaves their defaults, conf_node_take the values in force
 * ("cron", "jobShardingStrategyType", "shardingItemParameters", "jobErrorHandlerType",
 * "props.KEY") */
struct conf_job_kept {
	size_t n;
	const char *const *keys;
};

/* One job: every key of ElasticJob-Lite 3.x's JobConfigurationPOJO plus ejob's own. */
typedef struct conf_job {
	const char *name;                      /* jobName (the key under jobs:) */
	conf_job_type_t type;                  /* ejob: type */
	const char *cron;                      /* Quartz; NULL: a one-off job (no cron, or ""), which
	                                          fires only when triggered */
	const char *time_zone;                 /* NULL: the machine's zone */
	/* What validation made of cron and time_zone, owned by the job's config (conf_free,
	 * conf_job_free); conf_job_equal compares the text. */
	const cron_t *cron_compiled;           /* cron parsed (year limit CRON_MAX_YEAR_DEFAULT; run it
	                                          with Quartz's of the day: cron_with_max_year);
	                                          NULL exactly when cron is NULL (but from
	                                          conf_node_parse when "cron" is in kept.keys) */
	const tz_t *tz;                        /* time_zone loaded; NULL when time_zone is NULL or when
	                                          zones were not looked up (conf_opts_t.load_zone
	                                          NULL); GMT for a node whose zone does not load here */
	const char *tz_error;                  /* config node only: why time_zone does not load on this
	                                          host (a warning of the node: it runs in GMT), else NULL */
	uint32_t sharding_total_count;         /* 1-10000 */
	struct conf_job_items items;           /* shardingItemParameters */
	const char *job_parameter;             /* "" default */
	bool monitor_execution;                /* true */
	bool failover;                         /* false */
	bool misfire;                          /* true */
	int max_time_diff_seconds;             /* -1 = no check */
	int reconcile_interval_minutes;        /* 10; 0 = off */
	bool static_sharding;                  /* false */
	struct conf_job_strategy strategy;     /* jobShardingStrategyType */
	struct conf_job_executor executor;     /* jobExecutorServiceHandlerType */
	const char *error_handler_type;        /* NULL when unset */
	struct conf_job_listener listener;     /* jobListenerTypes, ejob.listener.* */
	struct conf_job_extra extra;           /* jobExtraConfigurations */
	const char *description;               /* "" default */
	bool disabled;                         /* false */
	bool overwrite;                        /* false */
	const char *label;                     /* NULL when unset */
	size_t n_props;                        /* props in file order, without the ejob.* keys */
	const conf_kv_t *props;
	int timeout_seconds;                   /* ejob: 0 = no limit */
	int max_retries;                       /* ejob: 0 */
	int concurrency;                       /* ejob: items of this job running at once on one
	                                          instance, 0-1024; 0: no limit but the pool's
	                                          workers (ElasticJob's CPU). conf_job_concurrency()
	                                          is what is in force */
	struct conf_job_flow { size_t n; char **depends_on; } flow;   /* dependsOn: the jobs this one runs after (workflows) */
	const char *script_command_line;       /* props "script.command.line", or NULL */
	struct conf_job_native native;         /* props "native.*" */
	struct conf_job_http http;             /* type http */
	struct conf_job_dataflow dataflow;     /* type dataflow */
	unsigned line;                         /* where the job starts in its file; 0 from a node */
	struct conf_job_kept kept;             /* config node only: keys kept */
	struct conf_arena *mem_;               /* private: set on jobs from conf_node_parse() */
} conf_job_t;

/* A hold on a config's memory: what it holds stays valid until conf_release, whoever frees the
 * config meanwhile (conf_free and conf_job_free then only drop their own part). For a fire that
 * runs by a config that a reload or a changed node replaces while it runs. NULL: nothing held. */
typedef struct conf_arena conf_hold_t;
struct conf;
conf_hold_t *conf_hold(const struct conf *c);           /* a file's config: its jobs */
conf_hold_t *conf_job_hold(const conf_job_t *j);        /* a config node's (conf_node_parse); NULL for a file's job */
void conf_release(conf_hold_t *h);

/* tracing: ElasticJob's RDB tracing (elasticjob-tracing-rdb), to PostgreSQL
 * (supervisor/sink/events_pg.c). Read at the start only. */
typedef struct conf_tracing {
	const char *url;                 /* NULL: no tracing; a libpq URI or conninfo ("jdbc:" dropped) */
	const char *username;            /* NULL: the URL's (or libpq's default) */
	const char *password;            /* NULL: the URL's, PGPASSWORD or ~/.pgpass */
	const char *spool_dir;           /* where rows wait while PostgreSQL is away, CONF_TRACING_SPOOL_DIR */
	int spool_max_bytes;             /* the spool's bound, CONF_TRACING_SPOOL_MAX_BYTES */
} conf_tracing_t;

#define CONF_TRACING_SPOOL_DIR "/var/lib/ejob/tracing-spool"
#define CONF_TRACING_SPOOL_MAX_BYTES (64 << 20)

typedef struct conf {
	const char *file;
	conf_regcenter_t reg_center;
	conf_supervisor_t supervisor;
	conf_tracing_t tracing;
	size_t n_jobs;
	const conf_job_t *jobs;                /* in file order */
	struct conf_arena *mem_;               /* private */
} conf_t;

/* How to load. All fields optional (zero = unset); conf_opts_system() fills the host's values. */
typedef struct conf_opts {
	int cpus;                              /* default of supervisor.workers; <= 0 means 1 */
	/* Name lookups for attachAllowUids/Gids: return 0 and set *id, or -1 if there is no such
	 * name. NULL: names are kept unresolved (CONF_ID_UNRESOLVED). */
	int (*lookup_user)(const char *name, uint32_t *id, void *arg);
	int (*lookup_group)(const char *name, uint32_t *id, void *arg);
	void *lookup_arg;
	/* Time zones for timeZone: return the loaded zone (the job owns it), else NULL and the
	 * reason in why. NULL: zone names are not checked (they depend on the host's tzdata) and
	 * jobs have no tz. */
	tz_t *(*load_zone)(const char *name, char *why, size_t whysz, void *arg);
	/* Command-line overrides, checked like the keys they replace (NULL/0: not given). */
	const char *server_lists;              /* --zk */
	const char *namespace;                 /* --namespace */
	const char *ip;                        /* --ip */
	int workers;                           /* --workers */
	const char *metrics;                   /* --metrics */
	/* dependsOn may name jobs that are not in the file, and the file's workflows are not checked
	 * (conf_flow_check): `ejobctl apply` checks them with the namespace's other jobs instead */
	bool flow_open;
} conf_opts_t;

/* The host's CPU count, getpwnam_r/getgrnam_r lookups, and tz_load() for time zones. */
void conf_opts_system(conf_opts_t *o);

/* Parse a whole file held in buf. Returns the config, or NULL when the input has errors (then
 * *diags lists them all) or memory ran out (errno ENOMEM, *diags may be NULL). diags may be NULL;
 * otherwise the caller frees *diags (also set on success, with no entries). opts may be NULL. */
conf_t *conf_parse(const void *buf, size_t len, const char *file, const conf_opts_t *opts,
                   conf_diags_t **diags);

/* Read a file (at most CONF_MAX_FILE_BYTES + 1 bytes, so that conf_parse reports a file that is
 * too big). 0, or -1 with errno; *buf is malloc'd and NUL-terminated. */
int conf_read_file(const char *path, char **buf, size_t *len);

/* The closest of names[0..n-1] to s (case-insensitive edit distance), or NULL if none is close:
 * a "did you mean" for a name the user typed. */
const char *conf_suggest(const char *s, const char *const *names, size_t n);

/* What stops the supervisor from writing its history file (supervisor.history.file) from this
 * machine: its directory is missing, not a directory or not writable, or the file is there and
 * not writable. 0 when it can; -1 with the reason and the fix in why ("directory /x does not exist:
 * create it ..."). Reads the file system (stat, access(2) as this user), never opens the file. */
int conf_history_problem(const char *path, char *why, size_t len);

/* conf_read_file + conf_parse; opts NULL means conf_opts_system(). A file that cannot be read:
 * NULL, errno set, and *diags holds one entry "PATH: cannot read: REASON". */
conf_t *conf_load_file(const char *path, const conf_opts_t *opts, conf_diags_t **diags);

void conf_free(conf_t *c);                                   /* NULL is fine */

const conf_job_t *conf_find_job(const conf_t *c, const char *name);

/* Why name (len bytes) is not a job name ejob takes ("contains whitespace or a control
 * character", "contains '@-@', ...": a ZooKeeper path segment that ElasticJob's task ids
 * survive), NULL if it is one. */
const char *conf_job_name_problem(const char *name, size_t len);

/* The parameter of a shard item ("0=a,1=b": item 1 -> "b"), or NULL when it has none. */
const char *conf_job_item_param(const conf_job_t *j, int item);

/* Whether two jobs have the same configuration: every key above (props compared as a set, the
 * order of listener types and extra configurations matters; line is not compared). */
bool conf_job_equal(const conf_job_t *a, const conf_job_t *b);
/* The keys (ElasticJob's names, then ejob's type, timeoutSeconds, maxRetries, concurrency,
 * dependsOn) whose values differ between a and b: how many; the first max of them into keys (may
 * be NULL). */
size_t conf_job_diff(const conf_job_t *a, const conf_job_t *b, const char **keys, size_t max);

/* Items of j that may run at once on one instance: concurrency, or 1 for the executor
 * SINGLE_THREAD (jobExecutorServiceHandlerType / jobExecutorThreadPoolSizeProviderType); 0: no
 * limit but the pool's workers (CPU, ElasticJob's default). */
int conf_job_concurrency(const conf_job_t *j);

/* Keys of a job that this version of ejob accepts and publishes in the config node (for
 * ElasticJob's tools) but does not act on as written, so that whoever loads a job can warn:
 * - jobErrorHandlerType THROW (a rethrow has no meaning outside Java) or, in a config node, a
 *   name ejob has no handler for (ElasticJob would load it as a plugin): a failed item is
 *   logged, as LOG does;
 * - in a config node, an executor name other than CPU and SINGLE_THREAD (a plugin's): items run
 *   as with CPU;
 * - a non-empty jobListenerTypes: ElasticJob's listener classes do not run (ejob's listeners are
 *   the ejob.listener.* props);
 * - a non-empty jobExtraConfigurations: ElasticJob's per-job extras (its tracing) are published
 *   for its tools; ejob's tracing is the file's tracing: section;
 * - an http job's http.data with a method that sends no body (GET, HEAD, OPTIONS, TRACE): it
 *   is not sent, as ElasticJob does not send it.
 * Fills out[] in that order and returns how many (0-CONF_UNACTED_MAX). Pure: no I/O. The caller
 * says where: "FILE:LINE: jobs.NAME.KEY: TEXT" for a file, "NODE: KEY: TEXT" for a config node. */
#define CONF_UNACTED_MAX 6
typedef struct conf_unacted {
	const char *key;      /* "jobErrorHandlerType", "jobListenerTypes", ... or "props.http.data" */
	char text[512];       /* "THROW has no meaning outside Java: ..." */
} conf_unacted_t;
size_t conf_job_unacted(const conf_job_t *j, conf_unacted_t out[CONF_UNACTED_MAX]);

/* ---- error handlers (jobErrorHandlerType and the props it reads; conf_errh.c) -------------- */

/* What ejob does with a job's failed item (its final outcome, after maxRetries): docs/config.md. */
typedef enum conf_errh_type {
	CONF_ERRH_LOG = 0,     /* unset, LOG, THROW, or a name ejob has no handler for: the log line */
	CONF_ERRH_IGNORE,      /* nothing more than the log line */
	CONF_ERRH_DINGTALK,    /* a DingTalk robot message */
	CONF_ERRH_WECHAT,      /* a WeChat Work group robot message */
	CONF_ERRH_EMAIL,       /* a mail */
	CONF_ERRH_WEBHOOK,     /* ejob's: the failure as JSON, POSTed to a URL */
	CONF_ERRH__COUNT
} conf_errh_type_t;

#define CONF_ERRH_CONNECT_TIMEOUT_MS 3000            /* ElasticJob's DINGTALK and WECHAT defaults */
#define CONF_ERRH_READ_TIMEOUT_MS 5000
#define CONF_ERRH_SUBJECT "ElasticJob error message" /* EmailPropertiesConstants.DEFAULT_SUBJECT */

/* The handler and its props, read with ElasticJob's keys and defaults. Strings point into the
 * job's props (NULL: unset or ""), and live as long as the job's config. */
typedef struct conf_errh {
	conf_errh_type_t type;
	/* DINGTALK dingtalk.webhook, WECHAT wechat.webhook, WEBHOOK webhook.url */
	const char *url;
	const char *keyword;         /* DINGTALK dingtalk.keyword: put before the message */
	const char *secret;          /* DINGTALK dingtalk.secret: the URL is signed (HmacSHA256) */
	int connect_timeout_ms;      /* PREFIX.connectTimeoutMilliseconds, CONF_ERRH_CONNECT_TIMEOUT_MS */
	int read_timeout_ms;         /* PREFIX.readTimeoutMilliseconds, CONF_ERRH_READ_TIMEOUT_MS */
	/* EMAIL: email.* */
	const char *host;
	int port;
	const char *username, *password;  /* both or neither (none: no login) */
	bool use_ssl;                /* true: SMTPS, TLS from the first byte */
	const char *ssl_trust;       /* "*" or hosts (blank-separated) whose certificate is trusted */
	const char *subject;         /* CONF_ERRH_SUBJECT; may be "" when written so */
	const char *from;            /* one address */
	const char *to;              /* addresses separated by commas */
	const char *cc, *bcc;        /* one address each */
	bool debug;                  /* the SMTP conversation in the log */
} conf_errh_t;

/* The handler of j and its props, with their defaults, into *e; each problem (a sending type
 * without its required props, a number, boolean, URL or address that is not one) goes to fn (may
 * be NULL) with the prop's key ("dingtalk.webhook") and what is wrong. Returns how many. Pure:
 * the loader calls it to refuse a job, the supervisor to send. */
typedef void conf_errh_err_fn(void *arg, const char *key, const char *msg);
int conf_job_errh(const conf_job_t *j, conf_errh_t *e, conf_errh_err_fn *fn, void *arg);
const char *conf_errh_type_name(conf_errh_type_t t);         /* "LOG", "DINGTALK", ... */
/* One mail address as email.* takes it, "user@host" or "Name <user@host>" (blanks around it
 * ignored): 0 and where in s[0..n) the user@host is, or -1 when it is not an address. */
int conf_mail_addr(const char *s, size_t n, size_t *off, size_t *len);

const char *conf_job_type_name(conf_job_type_t t);           /* "script" ... ; "" for NONE */
const char *conf_strategy_name(conf_strategy_t s);           /* "AVG_ALLOCATION" ... */
const char *conf_log_level_name(conf_log_level_t l);         /* "error" ... */

/* ---- ElasticJob's config node ----------------------------------------------------------- */

/* The job as ElasticJob 3.x writes /{namespace}/{job}/config (SnakeYAML dumpAsMap of
 * JobConfigurationPOJO): keys in alphabetical order, unset ones left out, SnakeYAML's scalar
 * styles; ejob's keys go into props as ejob.type, ejob.timeoutSeconds, ejob.maxRetries (and, when
 * set, ejob.concurrency and ejob.dependsOn).
 * Returns a malloc'd NUL-terminated string (*len without the NUL), or NULL with errno ENOMEM. */
char *conf_node_emit(const conf_job_t *j, size_t *len);

/* A config node whose jobShardingStrategyType is one of ejob's old names (strategy.alias),
 * with ElasticJob's name in its place and every other byte as it was: malloc'd (*len set), or
 * NULL when the key is not written in the one form ElasticJob and ejob write (a top-level line
 * "jobShardingStrategyType: NAME", plain or quoted). Pure. */
char *conf_node_fix_strategy(const void *buf, size_t len, size_t *outlen);

/* Parse a config node, each key as ElasticJob takes it (conf_diag_level_t): an unknown key or a
 * wrong type is an error (the parse fails); a value ElasticJob loads and fails on only when it
 * uses it is a CONF_DIAG_KEY, listed in kept.keys, its field left at the default (a cron that does
 * not parse stays as written, cron_compiled NULL); a value ElasticJob ignores or reads its own way
 * is a warning (an item parameter out of range is dropped; a timeZone this host cannot load is
 * GMT, as Java's TimeZone.getTimeZone makes it, and tz_error says why). Messages are labelled as
 * by conf_parse (name, e.g. "/ns/job/config"); *diags gets them all (also on success). Free the
 * job with conf_job_free(). */
conf_job_t *conf_node_parse(const void *buf, size_t len, const char *name, conf_diags_t **diags);
void conf_job_free(conf_job_t *j);                           /* only for conf_node_parse jobs */

/* A config node as a job's config is taken, by the supervisor that watches it and by `ejobctl
 * config set|edit` before they write one: conf_node_parse (name labels the messages), then, for
 * a node without props ejob.type, the type of the job's root node (root_type: its data, "" if
 * none; ElasticJob's SCRIPT with a script.command.line is a script job), then usable: jobName is
 * job, a type ejob runs (a node without cron is a one-off job, as ElasticJob's OneOffJobBootstrap
 * writes it). Each kept key takes its value from in_force, the config in force (may be NULL):
 * cron (none in force: refused), jobShardingStrategyType (none: AVG_ALLOCATION),
 * shardingItemParameters (none: no parameters), jobErrorHandlerType (LOG), props.ejob.* (the
 * defaults), a type's props (none in force, or a job of another type: refused). Returns the job
 * (free with conf_job_free), or NULL and why it cannot be taken in why: the parser's first error
 * ("NAME:LINE:COLUMN: key: ..."), "unreadable" (out of memory), "jobName is 'x', not 'y'", the
 * type's reasons, or a kept key without a value to keep. diags (may be NULL): every diagnostic of
 * the parse, as conf_node_parse gives them; the caller frees it. */
conf_job_t *conf_node_take(const void *buf, size_t len, const char *name, const char *job, const char *root_type,
                           const conf_job_t *in_force, char *why, size_t whysz, conf_diags_t **diags);

#endif
