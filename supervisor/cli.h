/* supervisor/cli.h: the command line and the configuration file (main.c's first steps). */
#ifndef EJOB_CLI_H
#define EJOB_CLI_H

#include <stddef.h>

#include "conf/conf.h"

struct sup_opts {
	const char *config;         /* -c FILE */
	int workers;                /* --workers (0 = from config) */
	const char *zk;             /* --zk */
	const char *ns;             /* --namespace */
	const char *ip;             /* --ip */
	const char *log_level;      /* --log-level */
	const char *log_format;     /* --log-format */
	const char *worker_bin;     /* --worker-bin */
	const char *socket;         /* --socket */
	const char *run;            /* --run JOB[:ITEMS] */
	int standalone;             /* --standalone: no ZooKeeper, every item runs here */
	const char *metrics;        /* --metrics ADDR */
	int check;                  /* --check: check the config (and the worker binary) and exit */
	long wait_s;                /* --wait: --run of an external job waits this long for a worker (0: for ever) */
};

/* argv into o (--help and --version print and exit 0; --log-level and --log-format are set at
 * once). 0, or 2 after
 * a message on stderr. */
int cli_parse(struct sup_opts *o, int argc, char **argv);
/* The file o names, with o's flags over it; its warnings logged. NULL after its errors (on stderr
 * when quiet_ok, the start; else logged, a reload). */
conf_t *cli_load_config(const struct sup_opts *o, int quiet_ok);
/* ElasticJob's choice of this machine's address (see cli.c). */
void cli_detect_ip(char *buf, size_t len);
/* The ejob-worker binary: --worker-bin, $EJOB_WORKER_BIN, else found from this binary's directory:
 * ../worker/ejob-worker (the build tree), ../libexec/ejob/ejob-worker (installed). 0, or -1 after
 * an error (logged). */
int cli_worker_bin(const struct sup_opts *o, char *out, size_t len);

#endif
