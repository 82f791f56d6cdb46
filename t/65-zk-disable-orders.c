/* t/65-zk-disable-orders.c: an operator disables and enables items, servers and the job, in every
 * order, and the job is never stopped by it (issue 10, 5).
 *
 * Two supervisors share a 3-item job; b owns items 0 and 2, a only item 1. An operator (zkCli,
 * ElasticJob-UI) disables item 1 (sharding/1/disabled): a's fires have nothing to run and end at
 * once, saying so; enabled again, item 1 runs at the next fire (it used to wedge a's job: every
 * later fire was taken for a misfire, for good). Then, in each of the six orders, the item, a's
 * server (servers/{ip} DISABLED) and the job (disabled: true in its config node) are disabled one
 * after another and enabled again: after each round every fire runs every item exactly once. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static char runs[600];
static zhandle_t *zh;
static char *config_on, *config_off;   /* the config node, enabled and disabled */

static long long now_ms(void) { return tlib_wall_ns() / 1000000; }

/* fires after `after` all exact, at least `want` of them, within ms */
static int wait_exact(long long after, int want, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	int exact = 0, n = 0;
	while ((n = tsup_fires_exact(runs, after, 3, NULL, &exact)) < want && tlib_now_ms() < end) usleep(100000);
	return n >= want && exact;
}

enum op { ITEM, SERVER, JOB };
static const char *op_name[] = { "item 1", "a's server", "the job" };

static void set(enum op o, int off)
{
	switch (o) {
	case ITEM:
		if (off) tzk_create(zh, "/t65/dj/sharding/1/disabled", "", 0, NULL);
		else zoo_delete(zh, "/t65/dj/sharding/1/disabled", -1);
		break;
	case SERVER:
		tzk_set(zh, "/t65/dj/servers/127.0.0.2", off ? "DISABLED" : "ENABLED");
		break;
	case JOB:
		tzk_set(zh, "/t65/dj/config", off ? config_off : config_on);
		break;
	}
}

int main(void)
{
	tlib_init(240);
	struct tzkup u;
	tzkup_start(&u, 200, "t65", 4000);
	char rec[600], jobs[2048];
	snprintf(rec, sizeof rec, "%s", tsup_rec_script());
	snprintf(runs, sizeof runs, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  dj:\n"
	         "    type: script\n"
	         "    cron: \"* * * * * ?\"\n"
	         "    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"%s %s\"}\n",
	         rec, runs);
	static struct tsup a, b;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_config(&u, &b, "b", "workers: 2", jobs);
	zh = u.zh;
	tzkup_run(&u, &a, "127.0.0.2");
	tzkup_run(&u, &b, "127.0.0.3");
	ok(tzkup_wait_registered(&u, "dj", a.id, 0, 15000) && tzkup_wait_registered(&u, "dj", b.id, 0, 15000),
	   "a and b register");
	ok(wait_exact(now_ms() + 1500, 2, 15000), "every fire runs items 0-2 exactly once");
	const char *ida = a.id;
	char *owner = NULL;
	tzk_get(zh, "/t65/dj/sharding/1/instance", &owner, NULL);
	is_str(owner, ida, "item 1 is a's, its only one");
	free(owner);
	char *cfg = NULL;
	tzk_get(zh, "/t65/dj/config", &cfg, NULL);
	config_on = cfg;
	size_t cl = strlen(cfg) + 32;
	config_off = malloc(cl);
	/* the node's keys are in alphabetical order: disabled goes after description */
	const char *at = strstr(cfg, "failover:");
	if (!at) BAIL_OUT("unexpected config node: %s", cfg);
	snprintf(config_off, cl, "%.*sdisabled: true\n%s", (int)(at - cfg), cfg, at);

	/* the case: item 1 disabled, a's fires have nothing to run */
	set(ITEM, 1);
	long long t = now_ms();
	ok(tsup_wait_log(&a, "nothing runs here: item 1, this instance's only one, is disabled", 1, 5000),
	   "a's fire with its only item disabled ends at once and says why");
	usleep(1500000);
	int exact = 0;
	char *text = tsup_slurp(runs);
	int ones = 0;
	for (char *l = text ? strtok(text, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long f;
		int item;
		if (sscanf(l, "%lld %d", &f, &item) == 2 && f > t && item == 1) ones++;
	}
	free(text);
	is_int(ones, 0, "item 1 does not run while it is disabled");
	set(ITEM, 0);
	t = now_ms() + 500;
	ok(wait_exact(t, 2, 10000), "enabled again, it runs at the next fires: every fire runs items 0-2 once");

	/* every order of disabling the item, a's server and the job, enabled again in reverse */
	static const enum op orders[6][3] = {
		{ ITEM, SERVER, JOB }, { ITEM, JOB, SERVER }, { SERVER, ITEM, JOB },
		{ SERVER, JOB, ITEM }, { JOB, ITEM, SERVER }, { JOB, SERVER, ITEM },
	};
	for (int k = 0; k < 6; k++) {
		for (int i = 0; i < 3; i++) {
			set(orders[k][i], 1);
			usleep(400000);
		}
		for (int i = 2; i >= 0; i--) {
			set(orders[k][i], 0);
			usleep(400000);
		}
		t = now_ms() + 500;
		exact = wait_exact(t, 2, 12000);
		ok(exact, "%s, %s, %s disabled and enabled again in reverse: every fire runs items 0-2 once",
		   op_name[orders[k][0]], op_name[orders[k][1]], op_name[orders[k][2]]);
	}
	/* and a becomes the leader of a job it had stopped running nothing in */
	int st = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "b stops");
	t = now_ms() + 500;
	int n = 0;
	uint64_t end = tlib_now_ms() + 15000;
	while ((n = tsup_fires_exact(runs, t, 3, ida, &exact)) < 2 && tlib_now_ms() < end) usleep(100000);
	ok(n >= 2 && exact, "a, alone, leads, reshards and runs every item");
	st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a stops");
	free(config_on);
	free(config_off);
	tzkup_end(&u);
	return done_testing();
}
