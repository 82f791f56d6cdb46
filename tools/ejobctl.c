/* tools/ejobctl.c: operate ejob; dispatches to one command per file (tools/ejobctl_*.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/version.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_zk.h"

/* Commands: add one line here and a file tools/ejobctl_NAME.c. */
ejobctl_cmd_fn ejobctl_cron;

static const struct ejobctl_cmd cmds[] = {
	{ "validate", ejobctl_validate, "validate [--now EPOCH] FILE", "check a configuration file" },
	{ "import", ejobctl_import, "import FILE... [-o OUT]", "an ElasticJob Spring Boot application.yml as an ejob configuration" },
	{ "cron", ejobctl_cron, "cron 'EXPR' [--tz Z] [--from T] [-n N] [--epoch]", "next fire times of a Quartz cron expression" },
	{ "jobs", ejobctl_jobs, "jobs", "every job of the namespace: type, cron, items, instances, status, next fire" },
	{ "status", ejobctl_status, "status JOB [ITEM...]", "a job's config, leader, epoch, and each item's owner and state" },
	{ "servers", ejobctl_servers, "servers [JOB] [--server IP]", "per server: instances online, jobs, enabled or disabled" },
	{ "instances", ejobctl_instances, "instances [JOB] [--instance ID]", "per instance: ejob or ElasticJob, jobs led, items owned and running" },
	{ "config", ejobctl_config, "config get|set|edit JOB [FILE]", "a job's config node: print, write or edit it (checked, version-checked)" },
	{ "dump", ejobctl_dump, "dump JOB [--json]", "every node of a job's subtree: kind, owner, mtime, data" },
	{ "apply", ejobctl_apply, "apply -f FILE [--dry-run] [--prune [--force]]", "create or update the file's jobs in ZooKeeper (each with a label)" },
	{ "trigger", ejobctl_trigger, "trigger JOB [--parameter P]", "fire the job once now on every online instance (P: that fire's jobParameter)" },
	{ "disable", ejobctl_disable, "disable JOB [--server IP]", "take the job's servers (or one) out of the sharding" },
	{ "enable", ejobctl_enable, "enable JOB [--server IP]", "put them back" },
	{ "disable-item", ejobctl_disable_item, "disable-item JOB ITEM...", "stop running these items" },
	{ "enable-item", ejobctl_enable_item, "enable-item JOB ITEM...", "run them again" },
	{ "shutdown", ejobctl_shutdown, "shutdown JOB [--server IP | --instance ID]", "stop the job on instances until they restart" },
	{ "remove", ejobctl_remove, "remove JOB [--server IP] [--force]", "delete the job (or a server of it) from ZooKeeper" },
	{ "server", ejobctl_server, "server disable|enable|shutdown|remove IP [--force]", "the same on every job of server IP" },
	{ "drain", ejobctl_drain, "drain --server IP [--wait S|--no-wait]", "empty a machine: its supervisor hands everything over; returns when it holds nothing" },
	{ "serve", ejobctl_serve, "serve --listen ADDR:PORT [--auth FILE] [--tls-cert F --tls-key F] [--audit F]", "the HTTP API on the cluster (docs/api.md)" },
	{ "runs", ejobctl_runs, "runs [ROOT] [--limit N]", "a workflow's latest runs: each job's state in each; without ROOT, the workflows" },
	{ "history", ejobctl_history, "history JOB [-c FILE|--file F|--pg URL] [--item N] [--since T] [--failed]", "what ran: each attempt's outcome, from PostgreSQL or the history file" },
	{ NULL, NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ejobctl [OPTIONS] COMMAND [ARGS...] [OPTIONS]\n\ncommands:\n");
	for (const struct ejobctl_cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-50s %s\n", c->usage, c->summary);
	fprintf(f,
	        "\n"
	        "options (before or after the command):\n"
	        "  --zk HOSTS --namespace NS [--digest USER:PASS]   the cluster (ZooKeeper's host:port,host:port)\n"
	        "  -c FILE                a supervisor's config file: its regCenter (history: its tracing or history file)\n"
	        "  --timeout SECONDS      how long to wait for ZooKeeper (default 5)\n"
	        "  --json                 one JSON document on stdout\n"
	        "  --version              print \"ejob " EJOB_VERSION "\"\n"
	        "\n"
	        "Where the cluster is, each of ZooKeeper's hosts, the namespace and the digest on its own, the\n"
	        "first that has it: the flag (--zk, --namespace, --digest); -c FILE's regCenter; the environment\n"
	        "(EJOB_ZK, EJOB_NAMESPACE, EJOB_DIGEST); the regCenter of $EJOB_CONFIG, else of " CTL_DEFAULT_FILE "\n"
	        "(read only when there is no -c and the hosts or the namespace is still unknown).\n"
	        "\n"
	        "Exit status: 0 ok, 1 runtime failure (ZooKeeper unreachable, a request refused), 2 usage, a\n"
	        "configuration file that is missing or invalid, or an unknown name (job, item, server, instance).\n"
	        "'ejobctl COMMAND --help' tells more.\n");
}

/* ejobctl's own options, taken before the command: how many argv words option i is (1 or 2),
 * 0 if it is none of them. */
static int global_opt(int argc, char **argv, int i)
{
	static const char *const with_value[] = { "--zk", "--namespace", "--digest", "--config", "-c", "--timeout", NULL };
	const char *a = argv[i];
	if (!strcmp(a, "--json")) return 1;
	for (const char *const *o = with_value; *o; o++) {
		size_t n = strlen(*o);
		if (!strncmp(a, *o, n) && a[n] == '=' && (*o)[1] == '-') return 1;
		if (!strcmp(a, *o)) return i + 1 < argc ? 2 : -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	/* options before the command go to it, right after its name: every command takes them
	 * wherever they are (a "--" among its own arguments stays after them) */
	int first = 1;
	while (first < argc && argv[first][0] == '-') {
		const char *a = argv[first];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--version")) {
			printf("ejob %s\n", EJOB_VERSION);
			return 0;
		}
		int k = global_opt(argc, argv, first);
		if (k < 0) {
			fprintf(stderr, "ejobctl: %s needs a value; 'ejobctl --help' lists the options\n", a);
			return 2;
		}
		if (!k) {
			fprintf(stderr, "ejobctl: unknown option '%s' before the command; 'ejobctl --help' lists the options\n", a);
			return 2;
		}
		first += k;
	}
	if (first >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[first], "help")) {
		usage(stdout);
		return 0;
	}
	const struct ejobctl_cmd *c = cmds;
	while (c->name && strcmp(argv[first], c->name)) c++;
	if (!c->name) {
		fprintf(stderr, "ejobctl: unknown command '%s'; 'ejobctl --help' lists the commands\n", argv[first]);
		return 2;
	}
	/* argv as the command wants it: its name, the options given before it, its own arguments */
	char **av = calloc((size_t)argc + 1, sizeof *av);
	if (!av) {
		fputs("ejobctl: out of memory\n", stderr);
		return 1;
	}
	int n = 0;
	av[n++] = argv[first];
	for (int i = 1; i < first; i++) av[n++] = argv[i];
	for (int i = first + 1; i < argc; i++) av[n++] = argv[i];
	av[n] = NULL;
	int r = c->fn(n, av);
	free(av);
	return r;
}
