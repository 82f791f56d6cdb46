/* supervisor/coord.h: the jobs of this supervisor in ZooKeeper, with ElasticJob-Lite 3.x's layout
 * (docs/design.md): registration, leader election, sharding, and the execution nodes of each fire.
 *
 * Everything runs on the loop through supervisor/zkc. Per job:
 *   registration  /{job} (its type), config (written when absent or overwrite: true; otherwise the
 *                 stored one is used), servers/{ip}, instances/{ip}@-@{pid} (ephemeral); again on
 *                 every new session;
 *   election      leader/election/instance (ephemeral) created in one multi with a write of
 *                 leader/election whose new version is the leader's fence: every leader write is a
 *                 multi that starts by checking it, so a deposed leader cannot write;
 *   sharding      the leader marks leader/sharding/necessary when instances, servers or the item
 *                 count change, and at the next fire shards in one multi (instance nodes, the
 *                 sharding node whose mzxid becomes the epoch, necessary and processing removed);
 *                 the others follow the sharding node's watch;
 *   a fire        the items this instance owns (minus disabled ones) get their running nodes in
 *                 one multi, run with the epoch as fencing token, and their completed nodes in
 *                 batched multis as they end. */
#ifndef EJOB_COORD_H
#define EJOB_COORD_H

#include <stdint.h>

#include "conf/conf.h"
#include "supervisor/dispatch.h"
#include "supervisor/sched.h"

struct sup;
typedef struct coord coord_t;

coord_t *coord_new(struct sup *s);
void coord_start(coord_t *c);                   /* connect; jobs come with coord_set_jobs */
void coord_free(coord_t *c);
int coord_set_jobs(coord_t *c, const conf_t *conf);

/* The scheduler's start hook in ZooKeeper mode (arg: struct sup *). */
int coord_fire(void *arg, const struct sched_fire_info *f);
/* A dispatcher outcome whose cookie is a coord fire. */
void coord_outcome(coord_t *c, const struct disp_outcome *o);
void coord_tick(coord_t *c, uint64_t now_ns);

/* For the benchmark and tests: ZooKeeper requests sent so far. */
uint64_t coord_requests(const coord_t *c);

#endif
