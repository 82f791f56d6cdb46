/* t/lib/tflow.h: what the workflow tests (t/134, t/137, t/138) share: one script for every job,
 * which appends "start|end JOB ITEM RUN NS TASK" to a log (the job and item from the sharding
 * context JSON, its last argument, so that ElasticJob's instances write the same lines; RUN is
 * EJOB_WORKFLOW_RUN, 0 when unset; NS its wall clock), and the log read back. The script sleeps
 * 3 s when DIR/slow-JOB-ITEM exists and exits 3 before its end line when DIR/fail-JOB-ITEM does;
 * else it takes 0.2 s. */
#ifndef EJOB_TFLOW_H
#define EJOB_TFLOW_H

#include <stddef.h>

struct tflow_line {
	char kind[8], job[16];
	int item;
	unsigned long long run, ns;
	char task[200];             /* ElasticJob's taskId: its instance id is at its end */
};

#define TFLOW_MAX 4000
extern struct tflow_line tflow_lines[TFLOW_MAX];
extern int tflow_n;

/* tlib_tmpdir()/job.sh, logging to log: its path in path */
const char *tflow_script(char *path, size_t len, const char *log);
/* the log read again into tflow_lines */
void tflow_read(const char *log);
/* lines of kind for job (item -1: any) in run (0: any) */
int tflow_count(const char *kind, const char *job, int item, unsigned long long run);
/* the latest (or the earliest) of kind's lines of job in run (0: any) */
unsigned long long tflow_edge(const char *kind, const char *job, unsigned long long run, int latest);
/* the oldest run of job's lines newer than after, 0 if none */
unsigned long long tflow_run_after(const char *job, unsigned long long after);
/* until job has at least n end lines in run (the log read again each time): 1, or 0 after ms */
int tflow_wait_ends(const char *log, const char *job, unsigned long long run, int n, unsigned ms);
/* A job's part of a run written by hand, as coord_flow.c writes it (its parents made if missing),
 * and a record under it (NAME: "{item}.ok", "{item}.failed", "message") */
struct tzkup;
void tflow_part(const struct tzkup *u, const char *job, const char *run, const char *data);
void tflow_rec(const struct tzkup *u, const char *job, const char *run, const char *name, const char *data);
/* DIR/NAME created or removed: slow-JOB-ITEM, fail-JOB-ITEM */
void tflow_touch(const char *name, int on);

#endif
