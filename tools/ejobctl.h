/* tools/ejobctl.h: the commands of ejobctl, one file each (tools/ejobctl_NAME.c). */
#ifndef EJOB_EJOBCTL_H
#define EJOB_EJOBCTL_H

/* Each command gets argv[0] = its own name; returns the process exit status:
 * 0 ok, 1 runtime failure, 2 usage or invalid input. */
typedef int ejobctl_cmd_fn(int argc, char **argv);

ejobctl_cmd_fn ejobctl_validate;   /* tools/ejobctl_validate.c */
ejobctl_cmd_fn ejobctl_jobs;       /* tools/ejobctl_list.c */
ejobctl_cmd_fn ejobctl_servers;    /* tools/ejobctl_list.c */
ejobctl_cmd_fn ejobctl_instances;  /* tools/ejobctl_list.c */
ejobctl_cmd_fn ejobctl_status;     /* tools/ejobctl_status.c */
ejobctl_cmd_fn ejobctl_config;     /* tools/ejobctl_config.c: config get|set|edit */
ejobctl_cmd_fn ejobctl_dump;       /* tools/ejobctl_dump.c */
/* tools/ejobctl_ops.c, tools/ejobctl_remove.c: operations on a live cluster */
ejobctl_cmd_fn ejobctl_trigger, ejobctl_disable, ejobctl_enable, ejobctl_disable_item, ejobctl_enable_item,
	ejobctl_shutdown, ejobctl_remove;

ejobctl_cmd_fn ejobctl_server;     /* tools/ejobctl_server.c: server disable|enable|shutdown|remove IP */
ejobctl_cmd_fn ejobctl_drain;      /* tools/ejobctl_drain.c: drain --server IP */
ejobctl_cmd_fn ejobctl_history;    /* tools/ejobctl_history.c */
ejobctl_cmd_fn ejobctl_runs;       /* tools/ejobctl_runs.c: a workflow's runs */
ejobctl_cmd_fn ejobctl_serve;      /* tools/ejobctl_serve_main.c: the HTTP API */
ejobctl_cmd_fn ejobctl_apply;      /* tools/ejobctl_apply.c: apply -f FILE */
ejobctl_cmd_fn ejobctl_import;     /* tools/ejobctl_import.c: an ElasticJob Spring Boot configuration as ejob's */

struct ejobctl_cmd {
	const char *name;
	ejobctl_cmd_fn *fn;
	const char *usage;   /* one line: "cron 'EXPR' [--tz ZONE] ..." */
	const char *summary; /* one line: what it does */
};

#endif
