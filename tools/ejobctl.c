/* tools/ejobctl.c: operate ejob; dispatches to one command per file (tools/ejobctl_*.c). */
#include <stdio.h>
#include <string.h>

#include "tools/ejobctl.h"

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
	{ "trigger", ejobctl_trigger, "trigger JOB", "fire the job once now on every online instance" },
	{ "disable", ejobctl_disable, "disable JOB [--server IP]", "take the job's servers (or one) out of the sharding" },
	{ "enable", ejobctl_enable, "enable JOB [--server IP]", "put them back" },
	{ "disable-item", ejobctl_disable_item, "disable-item JOB ITEM...", "stop running these items" },
	{ "enable-item", ejobctl_enable_item, "enable-item JOB ITEM...", "run them again" },
	{ "shutdown", ejobctl_shutdown, "shutdown JOB [--server IP | --instance ID]", "stop the job on instances until they restart" },
	{ "remove", ejobctl_remove, "remove JOB [--server IP] [--force]", "delete the job (or a server of it) from ZooKeeper" },
	{ "server", ejobctl_server, "server disable|enable|shutdown|remove IP [--force]", "the same on every job of server IP" },
	{ "history", ejobctl_history, "history JOB [-c FILE|--file F|--pg URL] [--item N] [--since T] [--failed]", "what ran: each attempt's outcome, from PostgreSQL or the history file" },
	{ NULL, NULL, NULL, NULL },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ejobctl COMMAND [ARGS...]\n\ncommands:\n");
	for (const struct ejobctl_cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-50s %s\n", c->usage, c->summary);
	fprintf(f, "\n'ejobctl COMMAND --help' tells more.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (const struct ejobctl_cmd *c = cmds; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	fprintf(stderr, "ejobctl: unknown command '%s'; 'ejobctl --help' lists the commands\n", argv[1]);
	return 2;
}
