/* tools/ejobctl_snap.h: one job's state as ZooKeeper holds it, read once, for ejobctl's listings
 * (jobs, status, servers, instances: tools/ejobctl_list.c, tools/ejobctl_status.c), and the
 * derivations ElasticJob's lifecycle API makes from it (JobStatisticsAPIImpl.getJobStatus,
 * ShardingInfo.ShardingStatus), next to ejob's own, finer ones.
 *
 * What is read (under /{ns}/{job}): the job's node (its type), config (parsed with
 * conf_node_parse), instances/{...} (and each one's data), leader/failover/alive/{...} (ejob's own),
 * servers/{...}, leader/election/instance, leader/sharding/necessary, leader/failover/items/{...}, and
 * sharding/{i}/{instance,running,completed,disabled,misfire,failover,failovering,last}.
 * Garbage (a config that does not parse, a sharding child that is no number, an instance name
 * without "@-@") is kept out of the derivations and described in the warnings, never fatal. */
#ifndef EJOB_EJOBCTL_SNAP_H
#define EJOB_EJOBCTL_SNAP_H

#include <stdint.h>

#include "ipc/lastrun.h"
#include "tools/ejobctl_zk.h"

struct snap_inst {
	char *id;                   /* instances/{id} */
	char *ip;                   /* serverIp: of its data, else the id's part before "@-@" */
	long pid;                   /* the id's part after "@-@", -1 if that is no number */
	int ejob;                   /* leader/failover/alive/{id} exists: an ejob instance */
};

struct snap_server {
	char *ip;
	char *status;               /* the node's data: "ENABLED", "DISABLED" (or whatever is there) */
	int disabled;               /* "DISABLED", ignoring case, as ElasticJob compares it */
};

struct snap_item {
	int item;
	int in_zk;                  /* sharding/{i} exists */
	char *owner;                /* sharding/{i}/instance's data, NULL if none (or empty) */
	int owner_online;           /* owner is among instances/ */
	int running;                /* sharding/{i}/running exists */
	char *running_by;           /* its data (may be "") */
	int64_t running_since_ms;   /* its ctime */
	int completed, disabled, misfire;
	char *failover;             /* sharding/{i}/failover's data: the taker, NULL if absent */
	char *failovering;          /* sharding/{i}/failovering's data, NULL if absent */
	int queued;                 /* leader/failover/items/{i} exists */
	int64_t owner_mzxid;        /* sharding/{i}/instance's mzxid */
	int has_last;               /* sharding/{i}/last holds a record: last is it */
	struct lastrun last;        /* the item's last execution, as the instance that ran it wrote it */
};

struct snap_job {
	char *name;
	char *root_type;            /* the job node's data ("SCRIPT"), "" if none */
	conf_job_t *conf;           /* NULL if the config node does not parse */
	char *conf_error;           /* then why (the first error), else NULL */
	int64_t conf_ctime_ms;      /* when its config node was created (ZooKeeper's clock), -1: unknown */
	char type[32];              /* props ejob.type upper-cased, else root_type, else "" */
	int ninst, nserv, nitems, nalive;
	struct snap_inst *inst;     /* sorted by id */
	char **alive;               /* leader/failover/alive's children, sorted: ejob instances whose session
	                               lives, also after their instances/{id} was deleted (shut down) */
	struct snap_server *serv;   /* sorted by ip */
	struct snap_item *items;    /* sorted by item: sharding's numeric children, plus 0 .. total-1 */
	char *leader;               /* leader/election/instance's data, NULL if no leader */
	int resharding_due;         /* leader/sharding/necessary exists */
	uint64_t epoch;             /* highest mzxid of sharding/{i}/instance (0: never sharded) */
	int nwarn;
	char **warn;                /* "/ns/job/sharding/abc: not an item number (left out)", ... */
};

/* Read the job. 0, or 1 after a message (a ZooKeeper failure: no auth, connection lost). */
int snap_read(struct ctl *c, const char *job, struct snap_job *j);
/* Read n jobs at once, pipelined (10,000 jobs of 2 items: 16 reads a job, 5-8 s against a local
 * ZooKeeper on 2 CPUs, where one by one took a minute). 0, or 1 after a message (the first
 * failure, in the order of names); either way every jobs[i] is for snap_free. */
int snap_read_many(struct ctl *c, const char *const *names, int n, struct snap_job *jobs);
void snap_free(struct snap_job *j);

/* "serverIp: X" of an instance node's YAML (flat keys, as ElasticJob's JobInstance dumps it),
 * malloc'd; NULL if there is none. */
char *snap_server_ip(const char *data);

/* The instance id online for this job, or NULL. */
const struct snap_inst *snap_inst_find(const struct snap_job *j, const char *id);
/* id holds leader/failover/alive/{id} in this job: an ejob supervisor's session lives. */
int snap_alive(const struct snap_job *j, const char *id);

/* An instance's state in the job: "online" (instances/{id}), "draining" (gone from instances/, its
 * session alive, its server DRAINING: leaving), "shutdown" (gone from instances/, its ejob
 * supervisor alive: shut down until it restarts), "offline" (neither: crashed or stopped).
 * ip: the instance's server. */
const char *snap_inst_state(const struct snap_job *j, const char *id, const char *ip);
const struct snap_server *snap_server_find(const struct snap_job *j, const char *ip);

/* ElasticJob's JobBriefInfo.JobStatus: "OK", "CRASHED", "DISABLED" or "SHARDING_FLAG", derived
 * exactly as JobStatisticsAPIImpl.getJobStatus does; *why (if not NULL) gets ejob's reason for it
 * into why[0..len). */
const char *snap_job_status(const struct snap_job *j, char *why, size_t len);

/* ElasticJob's ShardingInfo.ShardingStatus of an item: DISABLED, RUNNING, SHARDING_FLAG (its
 * owner is not online), PENDING. */
const char *snap_item_ej_status(const struct snap_item *it);

/* ejob's state of an item, one word: "failover" (taken over: failover names the taker),
 * "failover-queued" (in leader/failover/items, waiting for a taker), "running", "misfire",
 * "disabled", "orphaned" (its owner is not online and it is not queued), "unassigned" (no owner),
 * "completed", "pending". */
const char *snap_item_state(const struct snap_item *it);

/* The next fire time after now (epoch seconds) of the job's cron in its zone (timeZone, else this
 * host's zone); -1 if none (no cron, no config, never again). iso gets it as ISO 8601. */
int64_t snap_next_fire(const struct snap_job *j, char *iso, size_t len);
/* The same, the first fire after `after` (epoch seconds). */
int64_t snap_fire_after(const struct snap_job *j, int64_t after, char *iso, size_t len);

/* Epoch milliseconds as ISO 8601 in this host's zone, to the second. */
void snap_time(int64_t ms, char *buf, size_t len);

#endif
