/* bench/lib/jobs.c: a namespace of many jobs made directly in ZooKeeper (see jobs.h). */
#include "bench/lib/jobs.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "bench/lib/bench.h"

/* the completions run on the client's thread: what is unanswered and what failed, under mu */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int out, failed;

static void created(int rc, const char *value, const void *data)
{
	(void)value, (void)data;
	pthread_mutex_lock(&mu);
	if (rc != ZOK) failed++;
	out--;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&mu);
}

static void create(zhandle_t *zh, const char *path, const char *data, int flags)
{
	pthread_mutex_lock(&mu);
	while (out >= 2000) pthread_cond_wait(&cv, &mu);
	out++;
	pthread_mutex_unlock(&mu);
	if (zoo_acreate(zh, path, data, (int)strlen(data), &ZOO_OPEN_ACL_UNSAFE, flags, created, NULL) != ZOK)
		fail(NULL, "zoo_acreate %s failed", path);
}

static void setdone(int rc, const struct Stat *st, const void *data)
{
	(void)st;
	created(rc, NULL, data);
}

static void set(zhandle_t *zh, const char *path, const char *data)
{
	pthread_mutex_lock(&mu);
	while (out >= 2000) pthread_cond_wait(&cv, &mu);
	out++;
	pthread_mutex_unlock(&mu);
	if (zoo_aset(zh, path, data, (int)strlen(data), -1, setdone, NULL) != ZOK)
		fail(NULL, "zoo_aset %s failed", path);
}

static void drain(void)
{
	pthread_mutex_lock(&mu);
	while (out > 0) pthread_cond_wait(&cv, &mu);
	int f = failed;
	pthread_mutex_unlock(&mu);
	if (f) fail(NULL, "%d creates or sets failed", f);
}

void jobs_make(zhandle_t *zh, const char *ns, int n)
{
	char p[256], d[512];
	snprintf(p, sizeof p, "/%s", ns);
	create(zh, p, "", 0);
	drain();
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof p, "/%s/j%05d", ns, i);
		create(zh, p, "SCRIPT", 0);
		static const char *const kids[] = { "servers", "instances", "sharding", "sharding/0", "sharding/1", "leader",
			                            "leader/election", NULL };
		snprintf(d, sizeof d, "cron: 0 0 0 1 1 ? 2099\njobName: j%05d\nmisfire: true\nprops:\n  script.command.line: /bin/true\n"
		         "  ejob.type: script\nshardingTotalCount: 2\n", i);
		snprintf(p, sizeof p, "/%s/j%05d/config", ns, i);
		create(zh, p, d, 0);
		for (int k = 0; kids[k]; k++) {
			snprintf(p, sizeof p, "/%s/j%05d/%s", ns, i, kids[k]);
			create(zh, p, "", 0);
		}
		for (int s = 1; s <= 2; s++) {
			snprintf(p, sizeof p, "/%s/j%05d/servers/10.0.0.%d", ns, i, s);
			create(zh, p, "ENABLED", 0);
			snprintf(p, sizeof p, "/%s/j%05d/instances/10.0.0.%d@-@%d", ns, i, s, s);
			snprintf(d, sizeof d, "jobInstanceId: 10.0.0.%d@-@%d\nserverIp: 10.0.0.%d\n", s, s, s);
			create(zh, p, d, ZOO_EPHEMERAL);
			snprintf(p, sizeof p, "/%s/j%05d/sharding/%d/instance", ns, i, s - 1);
			snprintf(d, sizeof d, "10.0.0.%d@-@%d", s, s);
			create(zh, p, d, 0);
		}
		snprintf(p, sizeof p, "/%s/j%05d/leader/election/instance", ns, i);
		create(zh, p, "10.0.0.1@-@1", ZOO_EPHEMERAL);
	}
	drain();
}

void jobs_servers_set(zhandle_t *zh, const char *ns, int n, const char *status)
{
	char p[256];
	for (int i = 0; i < n; i++)
		for (int s = 1; s <= 2; s++) {
			snprintf(p, sizeof p, "/%s/j%05d/servers/10.0.0.%d", ns, i, s);
			set(zh, p, status);
		}
	drain();
}
