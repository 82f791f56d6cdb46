/* supervisor/coord/shard.h: ElasticJob-Lite's sharding strategies (3.0.4's three, 3.0.5's fourth), in C.
 *
 * Which instance runs which of a job's items, given the instances (the children of
 * /{namespace}/{job}/instances whose server is enabled), the job's name and its
 * shardingTotalCount. ElasticJob lists those instances sorted in DESCENDING String.compareTo
 * order (ZookeeperRegistryCenter.getChildrenKeys) and hands the list to the strategy:
 *
 *   AVG_ALLOCATION       per = total / n; the k-th instance gets [k*per, (k+1)*per), and the
 *                        item per*n + k when k < total % n.
 *   ODEVITY              when job.hashCode() is even, the list is reversed; then AVG.
 *   ROUND_ROBIN          the list is rotated left by Math.abs(job.hashCode()) % n; then AVG.
 *   SINGLE_SHARDING_BALANCE (3.0.5) the list is rotated left by Math.abs(job.hashCode() +
 *                        (int) System.currentTimeMillis()) % n, the time of the sharding, so
 *                        that each resharding starts the deal at another instance; then AVG.
 *
 * Strings are compared and hashed as Java sees them: as UTF-16, decoded from the UTF-8 bytes
 * as JDK 17's new String(bytes, UTF_8) decodes them (what the ZooKeeper client does with a
 * node name). Invalid UTF-8 is not refused: each ill-formed sequence becomes U+FFFD exactly
 * where Java's decoder puts one (t/40 checks this against Java on random bytes).
 *
 * Pure logic: no I/O, no global state; every function may be called from any thread.
 */
#ifndef EJOB_SHARD_H
#define EJOB_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"

/* Java's String.hashCode of the UTF-8 string s. */
int32_t shard_java_hash(const char *s);

/* The sign of Java's a.compareTo(b): <0, 0 or >0. Strings that differ in bytes compare
 * equal only when both hold invalid UTF-8 that decodes to the same text. */
int shard_java_cmp(const char *a, const char *b);

/* Shard a job's items over instances, as ElasticJob does: instances[0..n) in any order (the
 * result depends only on the set of names, and for SINGLE_SHARDING_BALANCE on now_ms, the
 * milliseconds since the epoch of the sharding; the others ignore it), each a NUL-terminated
 * instance id such as
 * "10.0.0.7@-@4242". On success owner[i] is the index in instances[] of the instance that
 * owns item i, for every i < total, and 0 is returned. On error -1 and errno, owner untouched:
 *   EINVAL  n == 0, n or total above INT32_MAX (ElasticJob's ints), an unknown strategy,
 *           a NULL argument, or two instances with the same name (as Java strings: ZooKeeper
 *           children are unique, so a duplicate is the caller's bug, not something to guess at);
 *   EDOM    ROUND_ROBIN for a job whose hashCode is Integer.MIN_VALUE (e.g.
 *           "polygenelubricants") over n instances, n not a power of two: Math.abs leaves the
 *           hash negative, the rotation indexes the list at a negative offset, and ElasticJob
 *           throws IndexOutOfBoundsException, so that job is never sharded there either (and
 *           SINGLE_SHARDING_BALANCE when the sum with the time is Integer.MIN_VALUE: that
 *           sharding fails, the next one, at another millisecond, does not);
 *   ENOMEM  out of memory.
 * EINVAL comes before EDOM: a duplicate is reported as such whatever the job's name.
 * total == 0 is allowed (no items; owner may be NULL). */
int shard_assign(conf_strategy_t strategy, const char *job, int64_t now_ms, const char *const *instances, size_t n,
                 uint32_t total, uint32_t *owner);

/* The strategy alone, on a list already in ElasticJob's order (as its strategy classes get
 * it, and as their unit tests call them): owner[i] is a position in that list. Same errors as
 * shard_assign(), but names are not looked at, so there is no duplicate check. */
int shard_assign_ordered(conf_strategy_t strategy, const char *job, int64_t now_ms, size_t n, uint32_t total,
                         uint32_t *owner);

/* The items that instance idx owns, ascending, into items[] (room for total entries);
 * returns how many. */
uint32_t shard_items_of(const uint32_t *owner, uint32_t total, size_t idx, uint32_t *items);

#endif
