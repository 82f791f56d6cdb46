/* ipc/logline.h: one line of ejob's log, the supervisor's and ejob-worker's (both write it to
 * their stderr, one write(2) a line), in the form its reader wants:
 *
 *   text (the default):
 *     2026-11-21T10:00:00.123Z ejob-supervisor[4242] INFO pool: worker 3 ready (pid 4250)
 *     2026-11-21T10:00:00.180Z ejob-worker[4250] INFO [hello@-@0,1@-@READY@-@10.0.0.7@-@4242 item 1 attempt 1] stdout: hi
 *   json (supervisor.logFormat: json), one object a line, always these keys:
 *     {"ts":"2026-11-21T10:00:00.123Z","level":"info","prog":"ejob-supervisor","pid":4242,"msg":"pool: ..."}
 *   and a job's lines (a script's output, an http request, its cut notice) also "job" (the job's
 *   name), "item", "attempt", and on a script's output "stream" ("stdout" or "stderr"):
 *     {"ts":"...","level":"info","prog":"ejob-worker","pid":4250,"job":"hello","item":1,"attempt":1,"stream":"stdout","msg":"hi"}
 *
 * Under systemd, when stderr is the journal ($JOURNAL_STREAM names its device and inode,
 * systemd.exec(5)), every line starts with its syslog priority as sd-daemon(3) prefixes it: <3>
 * error, <4> warn, <6> info, <7> debug. journald takes the prefix off and keeps it as the entry's
 * PRIORITY (journalctl -p), and stamps the entry: a text line then has no time of its own
 * ("<6>ejob-supervisor[4242] INFO pool: ..."); a json line keeps "ts" (its keys do not change).
 *
 * JSON strings are escaped as ipc/json.h does: ", \ and control characters, and each byte that is
 * not valid UTF-8 as \u00XX (so that a line is always valid JSON; the history file writes a
 * script's output the same way). A text line is written as it comes, but under journald a
 * newline inside a message is written \n (journald would end the entry there, and the rest would
 * be an entry of its own without the priority).
 *
 * Pure: it formats into the caller's buffer; logline_journal() is its one system call (fstat). */
#ifndef EJOB_LOGLINE_H
#define EJOB_LOGLINE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum logline_level { LOGLINE_ERROR = 0, LOGLINE_WARN, LOGLINE_INFO, LOGLINE_DEBUG };

/* the mode: flags */
#define LOGLINE_JSON    1u   /* one JSON object a line (else text) */
#define LOGLINE_JOURNAL 2u   /* stderr is the journal: the priority first; text without its time */

struct logline_job {
	const char *job;       /* the job's name (json "job") */
	const char *tag;       /* the text's "[<taskId> item <n> attempt <a>]" */
	uint32_t item, attempt;
};

struct logline {
	int level;                     /* enum logline_level */
	const char *prog;              /* "ejob-supervisor", "ejob-worker" */
	int pid;
	const struct logline_job *job; /* a job's line; NULL: the process's own */
	const char *stream;            /* a script's output: "stdout" or "stderr"; else NULL */
	const char *msg;               /* len bytes, any bytes */
	size_t len;
	const struct timespec *ts;     /* the line's time (CLOCK_REALTIME); NULL: now */
};

/* The line, ending in '\n', into out (cap bytes); its length. A message that does not fit is cut
 * and ends in "..." (the line stays whole and valid); a buffer of logline_size() bytes never cuts.
 * 0 only if cap cannot hold even the line's head. */
size_t logline_format(char *out, size_t cap, unsigned mode, const struct logline *l);

/* The bytes a line of prog (and job, may be NULL) with a message of at most msg_max bytes can take. */
size_t logline_size(const char *prog, const struct logline_job *job, size_t msg_max);

/* 1 if $JOURNAL_STREAM ("DEV:INO", decimal) names fd's device and inode: fd is the journal. */
int logline_journal(int fd);

/* "text" -> 0, "json" -> LOGLINE_JSON; -1 for anything else. */
int logline_parse_format(const char *s);
const char *logline_format_name(unsigned mode);   /* "text" or "json" */
const char *logline_level_name(int level);        /* "ERROR", "WARN", "INFO", "DEBUG" */

#endif
