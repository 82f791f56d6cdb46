/* bench/lib/jobs.h: a namespace of many jobs made directly in ZooKeeper, for the benchmarks that
 * operate on one (bench/ctl, bench/serve) without running the supervisors that would make it. */
#ifndef EJOB_BENCH_JOBS_H
#define EJOB_BENCH_JOBS_H

#include <zookeeper/zookeeper.h>

/* /ns and its jobs j00000 .. j{n-1}, each as two supervisors on 10.0.0.1 and 10.0.0.2 leave it
 * (16 nodes: the job's node, config (a script job, cron in 2099, 2 items), servers/{ip} ENABLED
 * for both, instances/{ip}@-@{1,2} for both with ElasticJob's JobInstance YAML, ephemeral, the
 * two items' sharding/{i}/instance, leader/election/instance, ephemeral). The ephemeral nodes
 * live as long as zh's session. Created pipelined on zh (at most 2,000 unanswered: one session's
 * requests are done in order, so a job's node is there before its children); returns when every
 * one is answered, fail()s if any create failed (a node already there too: the namespace must
 * be new). */
void jobs_make(zhandle_t *zh, const char *ns, int n);
/* Both servers of every job jobs_make made set to status (DISABLED, ENABLED), pipelined on zh as
 * jobs_make's creates; returns when every set is answered, fail()s if any failed. */
void jobs_servers_set(zhandle_t *zh, const char *ns, int n, const char *status);

#endif
