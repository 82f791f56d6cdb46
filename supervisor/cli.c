/* supervisor/cli.c: the command line and the configuration file, as the supervisor takes them
 * (see cli.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ipc/logline.h"
#include "ipc/version.h"
#include "supervisor/base/log.h"
#include "supervisor/cli.h"


static const char usage_text[] =
"usage: ejob-supervisor [-c FILE] [--workers N] [--zk HOSTS] [--namespace NS] [--ip IP]\n"
"                       [--log-level LEVEL] [--log-format FORMAT] [--worker-bin PATH] [--socket PATH]\n"
"                       [--metrics ADDR]\n"
"       ejob-supervisor -c FILE [--workers N] --standalone\n"
"       ejob-supervisor -c FILE --check\n"
"       ejob-supervisor -c FILE [--workers N] --run JOB[:ITEM,ITEM...] [--wait SECONDS]\n"
"\n"
"Runs ejob's per-machine supervisor in the foreground, logging to stderr: a pool of pre-forked\n"
"ejob-worker processes fed through shared memory, and the attach socket for external workers.\n"
"Under systemd (stderr is the journal: $JOURNAL_STREAM), each log line starts with its priority\n"
"(<3> error, <4> warn, <6> info, <7> debug: journalctl -p works) and leaves the time to journald.\n"
"\n"
"  -c, --config FILE     the YAML configuration (docs/config.md)\n"
"      --workers N       pool size (default: supervisor.workers, else the number of CPUs)\n"
"      --zk HOSTS        ZooKeeper servers host:port,... (overrides regCenter.serverLists)\n"
"      --namespace NS    ZooKeeper root node (overrides regCenter.namespace)\n"
"      --ip IP           this machine's address in instance ids (default: detected)\n"
"      --log-level L     error, warn, info (default) or debug\n"
"      --log-format F    text or json (default: supervisor.logFormat, else text); json: one object a\n"
"                        line, keys ts, level, prog, pid, msg (a job's also job, item, attempt, stream)\n"
"      --worker-bin PATH the ejob-worker binary (default: $EJOB_WORKER_BIN, else ../worker/ejob-worker\n"
"                        from this binary's directory (the build tree), else ../libexec/ejob/ejob-worker\n"
"                        (installed: /usr/bin and /usr/libexec/ejob)\n"
"      --socket PATH     the attach socket (default: supervisor.attachSocket, else docs/worker.md)\n"
"      --metrics ADDR    serve /metrics (Prometheus), /healthz and /status on ADDR, e.g. 127.0.0.1:9464\n"
"                        (default: supervisor.metrics, else none)\n"
"      --run JOB[:ITEMS] run one fire of JOB here and now, without ZooKeeper: all its items, or\n"
"                        the listed ones (JOB:0,2,5); exit 0 only if every item succeeded\n"
"      --wait SECONDS    --run of an external job: give up (exit 1) when no worker serving it has\n"
"                        attached on the attach socket for this long (default 30; 0: wait for ever)\n"
"      --standalone      schedule the jobs without ZooKeeper: every item of every fire runs here\n"
"      --check           check FILE as a start would (its errors and warnings, the history file,\n"
"                        the worker binary), print 'FILE: ok (N jobs)' and exit 0, or 2: for\n"
"                        ExecStartPre= and before a reload\n"
"  -h, --help            this text\n"
"  -V, --version         the version\n"
"\n"
"Signals: SIGTERM/SIGINT stop: every job leaves this instance, running items get shutdownGraceSeconds\n"
"to finish, then are stopped (external workers too, and waited for) and, with failover, handed over\n"
"to the other instances; SIGUSR2 drains: the same without exiting (docs/operations.md); SIGHUP\n"
"reloads the configuration (on error the old one stays).\n"
"Exit status: 0 clean stop (or --run: every item succeeded, even if a signal stopped it), 1 runtime\n"
"failure (or --run: an item failed or was stopped before it ended), 2 usage or configuration error.\n";

/* A usage error, before the log is set up: "ejob-supervisor: ..." on stderr, under systemd (stderr
 * is the journal) with the priority of an error first, as the log's lines (ipc/logline.h). */
static void usage_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void usage_err(const char *fmt, ...)
{
	char line[1024];
	int n = snprintf(line, sizeof line, "%sejob-supervisor: ", logline_journal(2) ? "<3>" : "");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m < sizeof line - (size_t)n - 1 ? (size_t)m : sizeof line - (size_t)n - 2);
	line[len++] = '\n';
	fwrite(line, 1, len, stderr);
}

/* ---- configuration ----------------------------------------------------------------------------- */

/* Keys a job sets that this version does not act on: said at every load, so nobody counts on them. */
static void warn_unacted(const conf_t *c)
{
	for (size_t i = 0; i < c->n_jobs; i++) {
		const conf_job_t *j = &c->jobs[i];
		conf_unacted_t u[CONF_UNACTED_MAX];
		size_t n = conf_job_unacted(j, u);
		for (size_t k = 0; k < n; k++) log_warn("%s:%u: jobs.%s.%s: %s", c->file, j->line, j->name, u[k].key, u[k].text);
	}
}

conf_t *cli_load_config(const struct sup_opts *so, int quiet_ok)
{
	conf_opts_t o;
	memset(&o, 0, sizeof o);
	conf_opts_system(&o);
	o.server_lists = so->zk;
	o.namespace = so->ns;
	o.ip = so->ip;
	o.workers = so->workers;
	o.metrics = so->metrics;
	char *buf = NULL;
	size_t len = 0;
	if (conf_read_file(so->config, &buf, &len) < 0) {
		log_error("config %s: %s", so->config, strerror(errno));
		return NULL;
	}
	conf_diags_t *diags = NULL;
	conf_t *c = conf_parse(buf, len, so->config, &o, &diags);
	free(buf);
	if (!c) {
		size_t n = diags ? conf_diags_count(diags) : 0;
		for (size_t i = 0; i < n; i++) {
			const conf_diag_t *dg = conf_diags_get(diags, i);
			if (quiet_ok) log_plain(LL_ERROR, "%s", dg->text);
			else log_error("%s", dg->text);
		}
		if (diags && conf_diags_dropped(diags))
			log_error("... and %zu more error%s", conf_diags_dropped(diags), conf_diags_dropped(diags) == 1 ? "" : "s");
		if (!n) log_error("config %s: %s", so->config, strerror(errno ? errno : ENOMEM));
	} else {
		for (size_t i = 0; i < conf_diags_count(diags); i++) log_warn("%s", conf_diags_get(diags, i)->text);
		warn_unacted(c);
	}
	conf_diags_free(diags);
	return c;
}

/* ElasticJob's choice of address: the first public IPv4 of an interface that is up, else the
 * first private one, else 127.0.0.1. */
void cli_detect_ip(char *buf, size_t len)
{
	struct ifaddrs *ifs, *i;
	char priv[INET_ADDRSTRLEN] = "";
	snprintf(buf, len, "127.0.0.1");
	if (getifaddrs(&ifs) < 0) return;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		uint32_t a = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		char t[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, t, sizeof t);
		int is_priv = (a >> 24) == 10 || (a >> 20) == 0xac1 || (a >> 16) == 0xc0a8 || (a >> 16) == 0xa9fe;
		if (!is_priv) {
			snprintf(buf, len, "%s", t);
			freeifaddrs(ifs);
			return;
		}
		if (!priv[0]) snprintf(priv, sizeof priv, "%s", t);
	}
	freeifaddrs(ifs);
	if (priv[0]) snprintf(buf, len, "%s", priv);
}

/* The worker binary relative to this one's directory (/proc/self/exe, symlinks resolved): from
 * build/supervisor/, the build tree's ../worker/ejob-worker; from an installed bin/, the
 * libexec/ejob/ejob-worker beside it (make install, the .deb). Found by where the supervisor is,
 * not by a path compiled in, so that `make install PREFIX=...` installs what `make` built. */
static const char *const worker_rel[] = { "../worker/ejob-worker", "../libexec/ejob/ejob-worker" };

int cli_worker_bin(const struct sup_opts *o, char *out, size_t len)
{
	const char *env = getenv("EJOB_WORKER_BIN");
	if (o->worker_bin) snprintf(out, len, "%s", o->worker_bin);
	else if (env && *env) snprintf(out, len, "%s", env);
	else {
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
		char *slash = n > 0 ? (self[n] = '\0', strrchr(self, '/')) : NULL;
		if (!slash) {
			log_error("cannot find ejob-worker: readlink /proc/self/exe: %s: name it with --worker-bin or $EJOB_WORKER_BIN",
			          n < 0 ? strerror(errno) : "not a path");
			return -1;
		}
		*slash = '\0';
		for (size_t i = 0; i < sizeof worker_rel / sizeof *worker_rel; i++) {
			char cand[PATH_MAX + 64], real[PATH_MAX];
			if ((size_t)snprintf(cand, sizeof cand, "%s/%s", self, worker_rel[i]) >= sizeof cand ||
			    access(cand, X_OK) < 0)
				continue;
			/* its real path, as logs and ps show it (not /usr/bin/../libexec/...) */
			const char *p = realpath(cand, real) ? real : cand;
			if ((size_t)snprintf(out, len, "%s", p) < len) return 0;
		}
		log_error("cannot find ejob-worker: neither %s/%s nor %s/%s is an executable: build it (make), install it "
		          "(make install), or name it with --worker-bin or $EJOB_WORKER_BIN",
		          self, worker_rel[0], self, worker_rel[1]);
		return -1;
	}
	if (access(out, X_OK) < 0) {
		log_error("worker binary %s: %s: build it (make), or name it with --worker-bin or $EJOB_WORKER_BIN",
		          out, strerror(errno));
		return -1;
	}
	return 0;
}

/* --run of an external job: how long it waits for a worker serving it to attach */
#define RUN_WAIT_DEFAULT_S 30

int cli_parse(struct sup_opts *o, int argc, char **argv)
{
	int waited = 0;
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' }, { "workers", required_argument, NULL, 'w' },
		{ "zk", required_argument, NULL, 'z' },     { "namespace", required_argument, NULL, 'n' },
		{ "ip", required_argument, NULL, 'i' },     { "log-level", required_argument, NULL, 'l' },
		{ "log-format", required_argument, NULL, 'F' },
		{ "worker-bin", required_argument, NULL, 'b' }, { "socket", required_argument, NULL, 's' },
		{ "run", required_argument, NULL, 'r' },    { "standalone", no_argument, NULL, 'S' },
		{ "metrics", required_argument, NULL, 'm' }, { "wait", required_argument, NULL, 'W' },
		{ "check", no_argument, NULL, 'C' },        { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { NULL, 0, NULL, 0 },
	};
	int c;
	opterr = 0;
	o->wait_s = RUN_WAIT_DEFAULT_S;
	while ((c = getopt_long(argc, argv, ":c:hV", lo, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 'w': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 1024) {
				usage_err("--workers: '%s' is not a number in 1-1024", optarg);
				return 2;
			}
			o->workers = (int)v;
			break;
		}
		case 'z': o->zk = optarg; break;
		case 'n': o->ns = optarg; break;
		case 'i': o->ip = optarg; break;
		case 'l': o->log_level = optarg; break;
		case 'F': o->log_format = optarg; break;
		case 'b': o->worker_bin = optarg; break;
		case 's': o->socket = optarg; break;
		case 'r': o->run = optarg; break;
		case 'S': o->standalone = 1; break;
		case 'C': o->check = 1; break;
		case 'm': o->metrics = optarg; break;
		case 'W': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 0 || v > 86400) {
				usage_err("--wait: '%s' is not a number of seconds in 0-86400 (0: for ever)",
				        optarg);
				return 2;
			}
			o->wait_s = v;
			waited = 1;
			break;
		}
		case 'h': fputs(usage_text, stdout); exit(0);
		case 'V': printf("ejob %s\n", EJOB_VERSION); exit(0);
		case ':':
			usage_err("%s needs a value; see --help", argv[optind - 1]);
			return 2;
		default:
			usage_err("unknown option '%s'; see --help", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		usage_err("unexpected argument '%s'; see --help", argv[optind]);
		return 2;
	}
	if (!o->config) {
		usage_err("no configuration: give -c FILE (docs/config.md)");
		return 2;
	}
	if (o->check && (o->run || o->standalone)) {
		usage_err("--check only checks the configuration: drop %s; see --help",
		        o->run ? "--run" : "--standalone");
		return 2;
	}
	if (waited && !o->run) {
		usage_err("--wait is for --run (how long it waits for an external worker); see --help");
		return 2;
	}
	if (o->log_level) {
		enum log_level l;
		if (log_parse_level(o->log_level, &l) < 0) {
			usage_err("--log-level: '%s' is not one of error, warn, info, debug",
			        o->log_level);
			return 2;
		}
		log_set_level(l);
	}
	if (o->log_format) {
		int f = logline_parse_format(o->log_format);
		if (f < 0) {
			usage_err("--log-format: '%s' is not one of text, json", o->log_format);
			return 2;
		}
		log_set_json(f == LOGLINE_JSON);
	}
	return 0;
}

