/* ipc/lastrun.h: an item's last execution, as the instance that ran it keeps it in ZooKeeper
 * (sharding/{i}/last, written in the fire's completion multi: supervisor/coord/coord_last.c) and
 * as ejobctl and the HTTP API read it (tools/ejobctl_health.c). Pure: no I/O.
 *
 * The node's data is one JSON object, keys in this order (docs/design.md, "ZooKeeper layout"):
 *   {"fireId":1700000000000,"outcome":"failed","endMs":1700000001234,"instance":"10.0.0.1@-@42",
 *    "attempt":1,"consecutiveFailures":3,"lastSuccessMs":1699999000000,"source":"NORMAL_TRIGGER"}
 * outcome: the history file's words (ok, failed, crashed, timeout, cancelled, error);
 * consecutiveFailures: 0 after an ok, +1 after failed/crashed/timeout/error, kept across a
 * cancelled one; lastSuccessMs: the end of the item's last ok run (0: none known). An empty node
 * is "never ran". */
#ifndef EJOB_LASTRUN_H
#define EJOB_LASTRUN_H

#include <stddef.h>
#include <stdint.h>

#define LASTRUN_MAX 384            /* the record's text, with the longest instance id */

struct lastrun {
	uint64_t fire_id;
	char outcome[16];
	uint64_t end_ms;
	char instance[160];
	uint32_t attempt;
	uint32_t failures;          /* consecutive failures, this one included */
	uint64_t ok_ms;             /* the last success's end (0: none known) */
	char source[24];            /* NORMAL_TRIGGER, MISFIRE, FAILOVER */
};

/* The record as the node's data, NUL-terminated: its length, or -1 if it does not fit len (or a
 * string has a character JSON would need to escape: never in an instance id or outcome). */
int lastrun_fmt(const struct lastrun *r, char *buf, size_t len);
/* The node's data read back: 1 a record, 0 empty (never ran), -1 not one (garbage: left out). */
int lastrun_parse(const char *data, size_t len, struct lastrun *r);
/* Does this outcome count as a failure (failed, crashed, timeout, error)? ok and cancelled do not. */
int lastrun_is_failure(const char *outcome);

#endif
