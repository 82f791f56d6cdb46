/* ipc/lastrun.h: an item's last execution, as the instance that ran it keeps it in ZooKeeper
 * (sharding/{i}/last, written in the fire's completion multi: supervisor/coord/coord_last.c) and
 * as ejobctl and the HTTP API read it (tools/ejobctl_health.c). Pure: no I/O.
 *
 * The node's data is one JSON object, keys in this order (docs/design.md, "ZooKeeper layout"):
 *   {"fireId":1700000000000,"outcome":"failed","endMs":1700000001234,"instance":"10.0.0.1@-@42",
 *    "attempt":1,"consecutiveFailures":3,"lastSuccessMs":1699999000000,"source":"NORMAL_TRIGGER",
 *    "error":"failed (exit 3)","tail":"connecting to db1\nERROR: no such table\n"}
 * outcome: the history file's words (ok, failed, crashed, timeout, cancelled, error);
 * consecutiveFailures: 0 after an ok, +1 after failed/crashed/timeout/error, kept across a
 * cancelled one; lastSuccessMs: the end of the item's last ok run (0: none known). error and tail
 * only for an execution that did not end ok (an ok record has neither): error its cause as the
 * history says it (lastrun_cause), tail the last lines of its output (absent: it wrote none). An
 * empty node is "never ran". */
#ifndef EJOB_LASTRUN_H
#define EJOB_LASTRUN_H

#include <stddef.h>
#include <stdint.h>

#define LASTRUN_ERROR_MAX 256u     /* bytes of error, at most (cut at a character) */
#define LASTRUN_TAIL_MAX 1024u     /* bytes of tail, at most (cut at a line from the front) */
/* the record's text: the fixed keys with the longest instance id (384), error and tail escaped
 * at worst (6 bytes a byte: \u00XX) */
#define LASTRUN_MAX 8192u

struct lastrun {
	uint64_t fire_id;
	char outcome[16];
	uint64_t end_ms;
	char instance[160];
	uint32_t attempt;
	uint32_t failures;          /* consecutive failures, this one included */
	uint64_t ok_ms;             /* the last success's end (0: none known) */
	char source[24];            /* NORMAL_TRIGGER, MISFIRE, FAILOVER */
	char *error;                /* the cause (NULL: none, as for an ok one) */
	char *tail;                 /* the output's last lines (NULL: none) */
};

/* The record as the node's data, NUL-terminated: its length, or -1 if it does not fit len (or a
 * fixed string has a character JSON would need to escape: never in an instance id or outcome).
 * error and tail (NULL or "": left out) are escaped, and cut as lastrun_error_len and
 * lastrun_tail_start say. */
int lastrun_fmt(const struct lastrun *r, char *buf, size_t len);
/* The node's data read back: 1 a record, 0 empty (never ran), -1 not one (garbage: left out).
 * r is overwritten; with 1, r->error and r->tail are malloc'd (or NULL): lastrun_clear frees
 * them. Keys in any order, unknown ones (a later version's) skipped; error and tail are cut to
 * their limits as lastrun_fmt cuts them. */
int lastrun_parse(const char *data, size_t len, struct lastrun *r);
void lastrun_clear(struct lastrun *r);
/* Does this outcome count as a failure (failed, crashed, timeout, error)? ok and cancelled do not. */
int lastrun_is_failure(const char *outcome);

/* An execution's cause as the history says it (PostgreSQL's failure_cause before its output):
 * "failed (exit 3)", "crashed (signal 9)", "timeout (signal 15): ran past 1 s", "error: exec: ...":
 * the outcome, its exit code or signal if any, then ": err" if err is not empty. Into buf (len
 * bytes, NUL-terminated), cut at a character if it does not fit; its length. */
size_t lastrun_cause(char *buf, size_t len, const char *outcome, int exit_code, int signal, const char *err);
/* How many of the n bytes of s an error keeps: n, or LASTRUN_ERROR_MAX at most, at a character. */
size_t lastrun_error_len(const char *s, size_t n);
/* Where in the n bytes of output s its tail starts: 0, or within the last LASTRUN_TAIL_MAX bytes,
 * at the first line that starts there (else at a character), so valid UTF-8 stays valid. */
size_t lastrun_tail_start(const char *s, size_t n);

#endif
