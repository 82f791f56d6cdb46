/* t/lib/tlib.h: what integration tests share: child tracking and cleanup, a watchdog,
 * temp dirs, running a command and capturing its output, bounded polling. */
#ifndef EJOB_TLIB_H
#define EJOB_TLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "t/lib/tbuild.h"   /* BUILT("tools/ejobctl"): what make built */

/* Every process a test starts is tracked: at exit, on a fatal signal, or when the watchdog
 * fires, each one still alive gets SIGKILL and is reaped. */
void tlib_init(unsigned timeout_seconds);   /* watchdog: BAIL_OUT after this long */
pid_t tlib_fork(void);                      /* fork and track the child */
void tlib_track(pid_t pid);
void tlib_untrack(pid_t pid);               /* after the test reaped it itself */
/* pid leads a process group of its own (setpgid(0, 0)): the whole group gets SIGKILL (a server
 * whose children the test may have stopped) */
void tlib_track_group(pid_t pid);
void tlib_kill_all(void);
void tlib_keep_tmp(void);   /* keep the temp dir at exit (a check failed: tap.h calls it) */

/* A fresh directory under $TMPDIR, removed with its contents at exit unless a check failed, the
 * test bailed out or was killed (then its path is printed), or EJOB_KEEP_TMP is set. */
const char *tlib_tmpdir(void);

/* Run argv (argv[0] a path), with stdin from /dev/null; capture stdout and stderr (each
 * NUL-terminated, malloc'd, caller frees; up to 4 MiB). Returns the wait status, -1 if it
 * could not start. */
int tlib_run(const char *const argv[], char **out, char **err);

/* Wait for cond(arg) to become true, polling every 2 ms, at most timeout_ms: 1 if it did. */
int tlib_wait_for(int (*cond)(void *), void *arg, unsigned timeout_ms);

uint64_t tlib_now_ms(void);          /* CLOCK_MONOTONIC */
int64_t tlib_wall_ns(void);          /* CLOCK_REALTIME, as job scripts' `date +%s%N` */

/* Write a file (mode 0644). 0 or -1. */
int tlib_write_file(const char *path, const void *data, size_t len);
/* An executable script tlib_tmpdir()/name holding text; its path in path. Ends the test (TAP's
 * bail out, exit 255) if it cannot be written. */
const char *tlib_script(char *path, size_t len, const char *name, const char *text);

/* The raw text of a flat JSON object's key in line ("..." with its quotes for a string, else up to
 * the next , or }) into out: 1, or 0 when the key is not there. */
int tlib_json_field(const char *line, const char *key, char *out, size_t len);

/* GET http://127.0.0.1:port/path (Connection: close, 3 s to answer): the status code, -1 when no
 * answer; the body in *body (malloc'd, NULL without an answer). */
int tlib_http_get(int port, const char *path, char **body);

/* The value of one series of a supervisor's /metrics on port, the whole series as the page writes
 * it ("ejob_fires_total{job_name=\"a\"}"): -1 when there is no such line or no answer. */
long tlib_metric(int port, const char *series);
/* For tlib_wait_for: the series has reached min. */
struct tlib_metric_min { int port; const char *series; long min; };
int tlib_metric_at_least(void *arg);

#endif
