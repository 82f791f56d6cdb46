/* tools/ejobctl_status.c: `ejobctl status JOB [ITEM...]`: a job's config summary, leader, epoch
 * of the assignment in force, and one row per item (owner, state, running since): ElasticJob-UI's
 * job detail (ShardingStatisticsAPI.getShardingInfo) with what ejob knows more. docs/operations.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ejobctl.h"
#include "tools/ejobctl_api.h"
#include "tools/ejobctl_health.h"
#include "tools/ejobctl_snap.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ejobctl status JOB [ITEM...] (--zk HOSTS --namespace NS [--digest U:P] | -c FILE)\n"
	        "                      [--json] [--timeout SECONDS]\n"
	        "\n"
	        "The job's config summary, status (as ElasticJob-UI derives it), leader, the epoch of the\n"
	        "assignment in force, its health, and per item: owner instance, state, running since, and\n"
	        "its last execution (outcome, when it ended, on which instance, attempt, failures in a row).\n");
}

/* the item's state for the table: "failover to X", "running, misfire", ... */
static void state_text(const struct snap_item *it, char *buf, size_t len)
{
	const char *s = snap_item_state(it);
	int n;
	if (!strcmp(s, "failover")) n = snprintf(buf, len, "failover to %s", it->failover);
	else if (!strcmp(s, "failover-queued"))
		n = it->failovering ? snprintf(buf, len, "failover queued (to %s)", it->failovering)
		                    : snprintf(buf, len, "failover queued");
	else n = snprintf(buf, len, "%s", s);
	/* the flags that the main word does not say */
	if (it->misfire && strcmp(s, "misfire") && n > 0 && (size_t)n < len) n += snprintf(buf + n, len - (size_t)n, ", misfire");
	if (it->disabled && strcmp(s, "disabled") && n > 0 && (size_t)n < len) snprintf(buf + n, len - (size_t)n, ", disabled");
}

static int want_item(int item, const int *only, int nonly)
{
	if (!nonly) return 1;
	for (int k = 0; k < nonly; k++)
		if (only[k] == item) return 1;
	return 0;
}

static void print_json(const struct ctl *c, const struct snap_job *j, const int *only, int nonly)
{
	struct jw w;
	char why[512], iso[64];
	jw_begin(&w, c->out);
	jw_obj(&w);
	jw_key(&w, "namespace"), jw_str(&w, c->ns);
	jw_key(&w, "job"), jw_str(&w, j->name);
	jw_key(&w, "type"), jw_str(&w, *j->type ? j->type : NULL);
	const conf_job_t *cf = j->conf;
	jw_key(&w, "cron"), jw_str(&w, cf ? cf->cron : NULL);
	jw_key(&w, "timeZone"), jw_str(&w, cf ? cf->time_zone : NULL);
	int64_t next = snap_next_fire(j, iso, sizeof iso);
	jw_key(&w, "nextFire"), jw_str(&w, next >= 0 ? iso : NULL);
	jw_key(&w, "nextFireEpoch");
	if (next >= 0) jw_int(&w, next);
	else jw_null(&w);
	jw_key(&w, "shardingTotalCount");
	if (cf) jw_int(&w, cf->sharding_total_count);
	else jw_null(&w);
	jw_key(&w, "shardingItemParameters"), jw_str(&w, cf ? cf->items.parameters : NULL);
	jw_key(&w, "jobParameter"), jw_str(&w, cf ? cf->job_parameter : NULL);
	jw_key(&w, "jobShardingStrategyType"), jw_str(&w, cf ? conf_strategy_name(cf->strategy.effective) : NULL);
	jw_key(&w, "failover");
	if (cf) jw_bool(&w, cf->failover);
	else jw_null(&w);
	jw_key(&w, "misfire");
	if (cf) jw_bool(&w, cf->misfire);
	else jw_null(&w);
	jw_key(&w, "monitorExecution");
	if (cf) jw_bool(&w, cf->monitor_execution);
	else jw_null(&w);
	jw_key(&w, "disabled");
	if (cf) jw_bool(&w, cf->disabled);
	else jw_null(&w);
	jw_key(&w, "description"), jw_str(&w, cf ? cf->description : NULL);
	jw_key(&w, "configError"), jw_str(&w, j->conf_error);
	const char *st = snap_job_status(j, why, sizeof why);
	jw_key(&w, "status"), jw_str(&w, st);
	jw_key(&w, "statusReason"), jw_str(&w, *why ? why : NULL);
	struct ctl_health h;
	ctl_job_health(j, ctl_now_ms(), &h);
	ctl_health_json(&w, &h);
	jw_key(&w, "leader"), jw_str(&w, j->leader);
	jw_key(&w, "epoch");
	if (j->epoch) {
		char e[32];
		snprintf(e, sizeof e, "0x%" PRIx64, j->epoch);
		jw_str(&w, e);
	} else {
		jw_null(&w);
	}
	jw_key(&w, "reshardingDue"), jw_bool(&w, j->resharding_due);
	jw_key(&w, "instances"), jw_arr(&w);
	for (int i = 0; i < j->ninst; i++) jw_str(&w, j->inst[i].id);
	jw_end(&w);
	jw_key(&w, "failoverQueue"), jw_arr(&w);
	for (int k = 0; k < j->nitems; k++)
		if (j->items[k].queued) jw_int(&w, j->items[k].item);
	jw_end(&w);
	jw_key(&w, "items"), jw_arr(&w);
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		if (!want_item(it->item, only, nonly)) continue;
		jw_obj(&w);
		jw_key(&w, "item"), jw_int(&w, it->item);
		jw_key(&w, "parameter"), jw_str(&w, cf ? conf_job_item_param(cf, it->item) : NULL);
		jw_key(&w, "owner"), jw_str(&w, it->owner);
		const struct snap_inst *in = snap_inst_find(j, it->owner);
		/* an offline owner's ip from its id ({ip}@-@{pid}): ElasticJob-UI reads its instance node
		 * and fails on a missing one */
		const char *sep = it->owner ? strstr(it->owner, "@-@") : NULL;
		jw_key(&w, "serverIp");
		if (in) jw_str(&w, in->ip);
		else if (sep) jw_strn(&w, it->owner, (size_t)(sep - it->owner));
		else jw_null(&w);
		jw_key(&w, "ownerOnline"), jw_bool(&w, it->owner_online);
		jw_key(&w, "state"), jw_str(&w, snap_item_state(it));
		jw_key(&w, "elasticjobStatus"), jw_str(&w, snap_item_ej_status(it));
		jw_key(&w, "running"), jw_bool(&w, it->running);
		jw_key(&w, "runningBy"), jw_str(&w, it->running ? it->running_by : NULL);
		jw_key(&w, "runningSinceMs");
		if (it->running) jw_int(&w, it->running_since_ms);
		else jw_null(&w);
		jw_key(&w, "completed"), jw_bool(&w, it->completed);
		jw_key(&w, "disabled"), jw_bool(&w, it->disabled);
		jw_key(&w, "misfire"), jw_bool(&w, it->misfire);
		jw_key(&w, "failover"), jw_str(&w, it->failover);
		jw_key(&w, "failovering"), jw_str(&w, it->failovering);
		jw_key(&w, "failoverQueued"), jw_bool(&w, it->queued);
		ctl_last_json(&w, it);
		jw_end(&w);
	}
	jw_end(&w);
	jw_key(&w, "warnings"), jw_arr(&w);
	for (int k = 0; k < j->nwarn; k++) jw_str(&w, j->warn[k]);
	jw_end(&w);
	jw_end(&w);
}

/* n bytes of s on one line for a terminal, into buf: at most max bytes (cut at a character,
 * "..." after), a tab or newline as a space, any other control character as '?' (the terminal's
 * to interpret, not the item's) */
static void one_line(const char *s, size_t n, size_t max, char *buf, size_t len)
{
	int cut = 0;
	if (n > max) {
		n = max;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
		cut = 1;
	}
	if (n + 4 > len) n = len > 4 ? len - 4 : 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[i] = c == '\t' || c == '\n' ? ' ' : c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	snprintf(buf + n, len - n, "%s", cut ? "..." : "");
}

/* s's last line that is not empty, as one_line gives it */
static void last_line(const char *s, size_t max, char *buf, size_t len)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r')) n--;
	size_t a = n;
	while (a && s[a - 1] != '\n') a--;
	one_line(s + a, n - a, max, buf, len);
}

/* under the table, one line per item whose last execution failed: its cause, and the last line
 * of what it wrote (the rest: status --json's last.tail) */
static void print_failing(const struct snap_job *j, const int *only, int nonly)
{
	int total = j->conf ? (int)j->conf->sharding_total_count : 0, head = 0;
	char cause[LASTRUN_ERROR_MAX + 8], line[160];
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		const struct lastrun *l = &it->last;
		if (!want_item(it->item, only, nonly) || !it->has_last || it->item >= total || !lastrun_is_failure(l->outcome))
			continue;
		if (!head++) printf("\nfailing\n");
		const char *e = l->error ? l->error : l->outcome;
		one_line(e, strlen(e), LASTRUN_ERROR_MAX, cause, sizeof cause);
		printf("  item %d: %s", it->item, cause);
		if (l->tail) {
			last_line(l->tail, 120, line, sizeof line);
			printf("; output ends: %s", line);
		}
		putchar('\n');
	}
}

static void print_table(const struct snap_job *j, const int *only, int nonly)
{
	const conf_job_t *cf = j->conf;
	char why[512], iso[64], buf[1024];
	printf("job          %s (%s)\n", j->name, *j->type ? j->type : "type unknown");
	if (cf) {
		int64_t next = snap_next_fire(j, iso, sizeof iso);
		if (!cf->cron)
			printf("cron         none: a one-off job; next fire on trigger (ejobctl trigger %s)\n", j->name);
		else
			printf("cron         %s (%s); next fire %s\n", cf->cron, cf->time_zone ? cf->time_zone : "this host's zone",
			       next >= 0 ? iso : "never");
		printf("items        %u, %s, failover %s, misfire %s%s\n", cf->sharding_total_count,
		       conf_strategy_name(cf->strategy.effective), cf->failover ? "on" : "off", cf->misfire ? "on" : "off",
		       cf->disabled ? ", disabled in its config" : "");
		if (cf->description && *cf->description) printf("description  %s\n", cf->description);
	} else {
		printf("config       %s\n", j->conf_error);
	}
	const char *st = snap_job_status(j, why, sizeof why);
	printf("status       %s%s%s\n", st, *why ? ": " : "", why);
	struct ctl_health h;
	ctl_job_health(j, ctl_now_ms(), &h);
	printf("health       %s%s%s\n", h.word, *h.why ? ": " : "", h.why);
	if (h.last_end_ms >= 0) {
		char a[64], b[64];
		snap_time(h.last_end_ms, a, sizeof a);
		if (h.last_success_ms >= 0) snap_time(h.last_success_ms, b, sizeof b);
		printf("last         %s at %s; last success %s\n", h.last_outcome, a, h.last_success_ms >= 0 ? b : "none known");
	}
	const struct snap_inst *li = snap_inst_find(j, j->leader);
	printf("leader       %s%s\n", j->leader ? j->leader : "none", j->leader && !li ? " (not online)" : "");
	if (j->epoch) printf("epoch        0x%" PRIx64 "%s\n", j->epoch, j->resharding_due ? " (resharding due)" : "");
	else printf("epoch        none: never sharded%s\n", j->resharding_due ? " (resharding due)" : "");
	int n = 0;
	buf[0] = 0;
	for (int i = 0; i < j->ninst; i++)
		if (n >= 0 && (size_t)n < sizeof buf) n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s", i ? ", " : "", j->inst[i].id);
	printf("instances    %d online%s%s\n", j->ninst, j->ninst ? ": " : "", buf);
	putchar('\n');
	struct ctl_table *t = ctl_table_new(9, "ITEM", "OWNER", "STATE", "RUNNING SINCE", "LAST", "ENDED", "ON", "ATTEMPT",
	                                    "FAILS");
	for (int k = 0; k < j->nitems; k++) {
		const struct snap_item *it = &j->items[k];
		if (!want_item(it->item, only, nonly)) continue;
		char item[16], owner[300], state[600], since[64];
		snprintf(item, sizeof item, "%d", it->item);
		if (it->owner) snprintf(owner, sizeof owner, "%s%s", it->owner, it->owner_online ? "" : " (offline)");
		state_text(it, state, sizeof state);
		if (it->running) snap_time(it->running_since_ms, since, sizeof since);
		char ended[64] = "", att[16] = "", fails[16] = "";
		const struct lastrun *l = it->has_last ? &it->last : NULL;
		if (l) {
			snap_time((int64_t)l->end_ms, ended, sizeof ended);
			snprintf(att, sizeof att, "%" PRIu32, l->attempt);
			snprintf(fails, sizeof fails, "%" PRIu32, l->failures);
		}
		ctl_table_row(t, item, it->owner ? owner : NULL, state, it->running ? since : NULL, l ? l->outcome : NULL,
		              l ? ended : NULL, l ? l->instance : NULL, l ? att : NULL, l ? fails : NULL);
	}
	ctl_table_print(t, stdout);
	print_failing(j, only, nonly);
}

int ejobctl_status(int argc, char **argv)
{
	struct ctl c;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	int r = ctl_options(&c, "status", &argc, argv);
	if (r) return r;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1]) {
			ctl_msg(&c, 2, "unknown option '%s'", argv[i]);
			usage(stderr);
			return 2;
		}
	const char *job = argv[1];
	int nonly = argc - 2;
	int only[256];
	if (nonly > 256) return ctl_msg(&c, 2, "at most 256 items at once");
	for (int k = 0; k < nonly; k++) {
		const char *a = argv[2 + k];
		char *e;
		errno = 0;
		long v = strtol(a, &e, 10);
		if (errno || e == a || *e || v < 0 || v >= CONF_MAX_ITEMS)
			return ctl_msg(&c, 2, "'%s' is not an item number (0 .. shardingTotalCount-1)", a);
		only[k] = (int)v;
	}
	return ctl_show_status(&c, job, only, nonly);
}

int ctl_show_status(struct ctl *cp, const char *job, const int *only, int nonly)
{
	struct ctl c = *cp;
	int r;
	if ((r = ctl_connect(&c))) return r;
	if ((r = ctl_need_job(&c, job))) {
		ctl_close(&c);
		return r;
	}
	struct snap_job j;
	if (snap_read(&c, job, &j)) {
		snap_free(&j);
		ctl_close(&c);
		return 1;
	}
	for (int k = 0; k < nonly; k++) {
		int found = 0;
		for (int i = 0; i < j.nitems; i++) found |= j.items[i].item == only[k];
		if (!found) {
			if (j.conf)
				r = ctl_msg(&c, 2, "job '%s' has no item %d (its items are 0-%u)", job, only[k],
				            j.conf->sharding_total_count - 1);
			else
				r = ctl_msg(&c, 2, "job '%s' has no item %d", job, only[k]);
			snap_free(&j);
			ctl_close(&c);
			return r;
		}
	}
	for (int k = 0; k < j.nwarn; k++) ctl_msg(&c, 0, "warning: %s", j.warn[k]);
	if (c.json) print_json(&c, &j, only, nonly);
	else print_table(&j, only, nonly);
	snap_free(&j);
	ctl_close(&c);
	if (fflush(c.out) || ferror(c.out)) return ctl_msg(&c, 1, "writing the output failed");
	return 0;
}
