/* t/lib/tsup.h: running a real ejob-supervisor in a test: a config file in the test's tmpdir,
 * the process started with its stderr in a log file, bounded waits on what it logs, and the
 * processes it started. Every supervisor started here is tracked by t/lib/tlib (killed at exit). */
#ifndef EJOB_TSUP_H
#define EJOB_TSUP_H

#include <stddef.h>
#include <sys/types.h>

struct tsup {
	pid_t pid;
	char dir[512];       /* its own directory under tlib_tmpdir() */
	char conf[600];      /* DIR/ejob.yaml */
	char log[600];       /* DIR/supervisor.log */
	char sock[600];      /* DIR/attach.sock */
	int status;          /* wait status once reaped */
	int reaped;
	char ip[32];         /* its --ip, when started with one ("" if not) */
	char id[80];         /* then its instance id, "{ip}@-@{pid}" (ElasticJob's) */
};

/* Write `yaml` to DIR/ejob.yaml. In it, "@DIR@" becomes the directory and "@SOCK@" the socket
 * path, so configs can name files of their own. */
int tsup_config(struct tsup *t, const char *name, const char *yaml);

/* Replace the config file of a configured (maybe running) supervisor, atomically, with the
 * same substitutions; nothing else in t changes. */
int tsup_rewrite(struct tsup *t, const char *yaml);

/* Start tools' build of supervisor/ejob-supervisor -c CONF with extra arguments (NULL-terminated).
 * With "--ip IP" among them, t->ip and t->id say who it is in ZooKeeper. */
pid_t tsup_start(struct tsup *t, const char *const *args);

/* Run it to the end (e.g. --run): waits at most timeout_ms; returns the wait status (-1 if it
 * had to be killed). */
int tsup_run(struct tsup *t, const char *const *args, unsigned timeout_ms);

/* Wait until it takes signal sig: blocked (libev reads it from a signalfd, so one sent now waits
 * for the loop) or caught, per /proc/PID/status; before that, sig's default action applies (a
 * SIGHUP would end it). 1 if so within timeout_ms. */
int tsup_wait_handles(struct tsup *t, int sig, unsigned timeout_ms);

/* Wait until a sig sent to it has been taken: no longer pending (/proc/PID/status ShdPnd, SigPnd),
 * so that the next one sent is a signal of its own, not merged into this one. 1 if so within
 * timeout_ms. */
int tsup_wait_taken(struct tsup *t, int sig, unsigned timeout_ms);

/* Wait until its attach socket (t->sock) is listening, per the kernel's table (/proc/net/unix):
 * external workers can attach. 1 if so within timeout_ms. */
int tsup_wait_listening(struct tsup *t, unsigned timeout_ms);

/* Its log, for what only the log says: the reasons and reports a user reads there (a fire that
 * does not run says why; an item's outcome in a --run). Wait for a state elsewhere (ZooKeeper,
 * records the job writes, /proc), never for a sentence.
 * Wait until the log contains `needle` (at least `count` times); 1 if it did within timeout_ms. */
int tsup_wait_log(struct tsup *t, const char *needle, int count, unsigned timeout_ms);
int tsup_log_count(struct tsup *t, const char *needle);
char *tsup_log_text(struct tsup *t);   /* malloc'd, NUL-terminated */

/* Signal it and wait for its exit, at most timeout_ms: the wait status, or -1 (then SIGKILLed). */
int tsup_stop(struct tsup *t, int sig, unsigned timeout_ms);

/* For benchmarks: the last `lines` lines of t's log on stderr, headed "WHO: last lines of LOG:"; and
 * giving up: "WHO: message" on stderr, then t's log tail (t may be NULL), exit 1 (tlib kills what
 * was started). */
void tsup_log_tail(const struct tsup *t, int lines, const char *who);
/* The session timeout t logged when it connected ("timeout N ms"), -1 if none. */
int tsup_session_ms(const struct tsup *t);
__attribute__((noreturn, format(printf, 3, 4)))
void tsup_die(const char *who, const struct tsup *t, const char *fmt, ...);

/* Its direct children (the workers); returns how many (<= max). */
int tsup_children(pid_t parent, pid_t *pids, int max);
/* Every process descended from it (children, grandchildren, ...). */
int tsup_descendants(pid_t root, pid_t *pids, int max);
int tsup_alive(pid_t pid);
/* From /proc: a process's VmRSS, VmHWM (kB) and threads (-1 each if gone); its utime + stime in
 * clock ticks (-1 if gone); the same summed over every process under root (its workers). */
struct tsup_mem { long rss_kb, hwm_kb, threads; };
struct tsup_mem tsup_mem(pid_t pid);
long long tsup_cpu_ticks(pid_t pid);
long long tsup_tree_ticks(pid_t root);   /* exists and is not a zombie */

/* Read a whole file (malloc'd, NUL-terminated), NULL if missing. */
char *tsup_slurp(const char *path);
/* The last line of a history file (supervisor.history) for job's item (-1: any) and attempt;
 * NULL if none. malloc'd. */
char *tsup_history_line(const char *path, const char *job, int item, int attempt);
/* Count the lines of a file that contain needle. */
int tsup_count_lines(const char *path, const char *needle);
/* Wait until at least count lines of path contain needle ("" for any line); 1 if they did
 * within timeout_ms. */
int tsup_wait_lines(const char *path, const char *needle, int count, unsigned timeout_ms);

/* Execution records "KIND ITEM NS TASK_ID [N]", one line each ("start 3 <date +%s%N> <task id>"
 * when an item starts, "end ..." when it ends): the tests that look for overlaps write them. */
struct tsup_rec {
	char kind[8];
	int item;
	long long ns;               /* wall clock */
	char task[200];             /* EJOB_TASK_ID: names the instance */
	long long extra;            /* a fifth number, if the line has one (else 0) */
};
/* Read up to max records of path into r; how many. */
int tsup_read_recs(const char *path, struct tsup_rec *r, int max);

/* Run records "FIRE_ID ITEM [TASK_ID]", one line per item run (what the tests' scripts write from
 * EJOB_FIRE_ID, EJOB_ITEM and EJOB_TASK_ID). Of the fires with an id above `after`, all but the
 * newest (it may still be running): how many there are; *exact is 1 if each of them ran items
 * 0 .. total-1 exactly once and no other item (total <= 64), and, when host is not NULL, only on
 * task ids that contain host. */
int tsup_fires_exact(const char *path, long long after, int total, const char *host, int *exact);

/* A job script that records its runs, written once into the test's tmpdir; its path. Arguments:
 * OUT [SLEEP] (then the sharding context): one run record "FIRE_ID ITEM TASK_ID" per item run,
 * at its start, in OUT (tsup_fires_exact reads them); with SLEEP the item takes that long, and
 * "start/end ITEM NS TASK_ID FIRE_ID" records (tsup_read_recs) go to OUT.se. */
const char *tsup_rec_script(void);

/* A Quartz cron expression (UTC, with the year) that fires exactly once, `seconds` from now:
 * a fire the test can place, with no other fire of the job in the test's lifetime. */
void tsup_cron_once(char *buf, size_t len, int seconds);

#endif
