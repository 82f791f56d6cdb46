/* t/70-ctl-list.c: ejobctl's listings (jobs, status, servers, instances) against a live cluster of
 * three real supervisors in known states, every field compared with what the test reads from
 * ZooKeeper itself, in the table and in --json (issue 14):
 *   - job busy (A, B; failover on; items sleep): fired (a second fire finds them running); B is
 *     SIGKILLed and its items fail over to A (failover to A, running), its owner offline;
 *   - job quiet (A, C; server C disabled): its items completed, then item 3 disabled;
 *   - job parked (C only, its server disabled): DISABLED;
 *   - job orphan (written by the test as ElasticJob would leave it): no instance, item 0's owner
 *     gone and the item queued for failover, item 1 never assigned, item 2 with a misfire flag;
 * and bad input: unknown job, item, server, instance (exit 2, did you mean), ZooKeeper down
 * (exit 1 within --timeout), a wrong digest on CREATOR_ALL nodes (exit 1 naming it), a namespace
 * of garbage (a child without config, bad YAML, non-numeric sharding children, an instance name
 * without @-@): messages, no crash. */
#include <ctype.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cron/cron.h"
#include "cron/tz.h"
#include "t/lib/tjson.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

#define EJOBCTL BUILT("tools/ejobctl")

/* a member as text (t/lib/tjson), the test's many comparisons */
static const char *js(const struct tjson *root, const char *path) { return tjson_text(root, path); }

/* ---- running ejobctl --------------------------------------------------------------------- */

struct run {
	int status;                 /* exit status, or -1 if it did not exit */
	char *out, *err;
	struct tjson *json;
	uint64_t ms;
};

static struct tzkup u;
static char zkopt[300];

/* ejobctl ARGS... --zk Z --namespace NS (ns NULL: no connection options added) */
static struct run ctl(const char *ns, const char *a0, ...)
{
	const char *argv[32];
	int n = 0;
	argv[n++] = EJOBCTL;
	va_list ap;
	va_start(ap, a0);
	for (const char *a = a0; a && n < 26; a = va_arg(ap, const char *)) argv[n++] = a;
	va_end(ap);
	if (ns) {
		argv[n++] = "--zk", argv[n++] = zkopt;
		argv[n++] = "--namespace", argv[n++] = ns;
	}
	argv[n] = NULL;
	struct run r = { 0 };
	uint64_t t0 = tlib_now_ms();
	int s = tlib_run(argv, &r.out, &r.err);
	tjson_keep(r.out);
	tjson_keep(r.err);
	r.ms = tlib_now_ms() - t0;
	r.status = s >= 0 && WIFEXITED(s) ? WEXITSTATUS(s) : -1;
	r.json = tjson_doc(r.out);
	for (char *e = r.err ? r.err + strlen(r.err) : NULL; e && e > r.err && e[-1] == '\n';) *--e = 0;
	return r;
}

/* ---- ZooKeeper as the test reads it ------------------------------------------------------ */

static char *zget(const char *path, struct Stat *st)
{
	char *d = NULL;
	if (tzk_get(u.zh, path, &d, st) != ZOK) return NULL;
	if (!d) d = strdup("");
	return d;
}

static int zhas(const char *path) { return tzk_exists(u.zh, path, NULL) == ZOK; }

static const char *jsonish(const char *s) { return s ? s : "null"; }

static void mk(zhandle_t *zh, const char *path, const char *data, int flags, const struct ACL_vector *acl)
{
	int rc = zoo_create(zh, path, data, data ? (int)strlen(data) : -1, acl ? acl : &ZOO_OPEN_ACL_UNSAFE, flags, NULL, 0);
	if (rc != ZOK && rc != ZNODEEXISTS) BAIL_OUT("create %s: %s", path, zerror(rc));
}

/* the table's rows split into cells (columns are two or more spaces apart); checks that every
 * cell starts under its header. Returns rows (header first), cells in cell[r][c]. */
#define MAXR 32
#define MAXC 12
static char cell[MAXR][MAXC][512];
static int table(const char *text, int *aligned)
{
	int r = 0, starts[MAXC] = { 0 }, ncol = 0;
	*aligned = 1;
	memset(cell, 0, sizeof cell);
	for (const char *l = text; l && *l && r < MAXR;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		int c = 0;
		for (size_t i = 0; i < len && c < MAXC;) {
			size_t j = i;
			while (j < len && !(l[j] == ' ' && j + 1 < len && l[j + 1] == ' ')) j++;
			snprintf(cell[r][c], sizeof cell[r][c], "%.*s", (int)(j - i), l + i);
			if (r == 0) starts[c] = (int)i;
			else if (c < ncol && starts[c] != (int)i) *aligned = 0;
			c++;
			while (j < len && l[j] == ' ') j++;
			i = j;
		}
		if (r == 0) ncol = c;
		else if (c != ncol) *aligned = 0;
		r++;
		l = e ? e + 1 : NULL;
	}
	return r;
}

static int row_of(int rows, const char *first)
{
	for (int r = 1; r < rows; r++)
		if (!strcmp(cell[r][0], first)) return r;
	return -1;
}

/* ---- the cluster ------------------------------------------------------------------------- */

static struct tsup A, B, C;

/* a Quartz cron (UTC, with the year) that fires at t and t + 2, in the same minute */
static time_t cron_twice(char *buf, size_t len, int seconds)
{
	time_t t = time(NULL) + seconds;
	struct tm tm;
	gmtime_r(&t, &tm);
	if (tm.tm_sec > 57) t += 60 - tm.tm_sec, gmtime_r(&t, &tm);
	snprintf(buf, len, "%d,%d %d %d %d %d ? %d", tm.tm_sec, tm.tm_sec + 2, tm.tm_min, tm.tm_hour, tm.tm_mday,
	         tm.tm_mon + 1, tm.tm_year + 1900);
	return t;
}

static uint64_t epoch_of(const char *job, int total)
{
	uint64_t e = 0;
	for (int i = 0; i < total; i++) {
		struct Stat st;
		if (tzk_exists(u.zh, tzkup_path(&u, job, "sharding/%d/instance", i), &st) == ZOK && (uint64_t)st.mzxid > e)
			e = (uint64_t)st.mzxid;
	}
	return e;
}

/* status JOB --json: every item field against the nodes */
static void check_items(const struct tjson *j, const char *job, int total)
{
	for (int i = 0; i < total; i++) {
		char k[64], *owner, *run, *fo, *fog;
		struct Stat rst;
		snprintf(k, sizeof k, "items.%d.", i);
#define F(name) js(j, (snprintf(path, sizeof path, "items.%d.%s", i, name), path))
		char path[64];
		owner = zget(tzkup_path(&u, job, "sharding/%d/instance", i), NULL);
		run = zget(tzkup_path(&u, job, "sharding/%d/running", i), &rst);
		fo = zget(tzkup_path(&u, job, "sharding/%d/failover", i), NULL);
		fog = zget(tzkup_path(&u, job, "sharding/%d/failovering", i), NULL);
		char since[32];
		snprintf(since, sizeof since, "%lld", (long long)rst.ctime);
		is_str(F("item"), (snprintf(k, sizeof k, "%d", i), k), "%s item %d: item", job, i);
		is_str(F("owner"), jsonish(owner && *owner ? owner : NULL), "%s item %d: owner = sharding/%d/instance", job, i, i);
		is_str(F("running"), run ? "true" : "false", "%s item %d: running = sharding/%d/running exists", job, i, i);
		is_str(F("runningSinceMs"), run ? since : "null", "%s item %d: runningSinceMs = its ctime", job, i);
		is_str(F("failover"), jsonish(fo), "%s item %d: failover = sharding/%d/failover", job, i, i);
		is_str(F("failovering"), jsonish(fog), "%s item %d: failovering", job, i);
		is_str(F("completed"), zhas(tzkup_path(&u, job, "sharding/%d/completed", i)) ? "true" : "false",
		       "%s item %d: completed", job, i);
		is_str(F("disabled"), zhas(tzkup_path(&u, job, "sharding/%d/disabled", i)) ? "true" : "false",
		       "%s item %d: disabled", job, i);
		is_str(F("misfire"), zhas(tzkup_path(&u, job, "sharding/%d/misfire", i)) ? "true" : "false",
		       "%s item %d: misfire", job, i);
		is_str(F("failoverQueued"), zhas(tzkup_path(&u, job, "leader/failover/items/%d", i)) ? "true" : "false",
		       "%s item %d: failoverQueued", job, i);
		int online = owner && *owner && zhas(tzkup_path(&u, job, "instances/%s", owner));
		is_str(F("ownerOnline"), online ? "true" : "false", "%s item %d: ownerOnline = instances/{owner} exists", job, i);
#undef F
		free(owner), free(run), free(fo), free(fog);
	}
}

int main(void)
{
	tlib_init(60);
	setenv("EJOB_CONFIG", "", 1);     /* not this machine's /etc/ejob/ejob.yaml */
	unsetenv("EJOB_ZK"), unsetenv("EJOB_NAMESPACE");
	uint64_t t_start = tlib_now_ms();
	tzkup_start(&u, 200, "t70", 2000);
	snprintf(zkopt, sizeof zkopt, "%s", u.connect);
	char busy_cron[64], quiet_cron[64], jobs[4096], out[600];
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	time_t t1 = cron_twice(busy_cron, sizeof busy_cron, 5);
	struct tm tm;
	gmtime_r(&t1, &tm);
	snprintf(quiet_cron, sizeof quiet_cron, "%d %d %d %d %d ? %d", tm.tm_sec, tm.tm_min, tm.tm_hour, tm.tm_mday,
	         tm.tm_mon + 1, tm.tm_year + 1900);
	const char *rec = tsup_rec_script();
#define BUSY_FMT \
		"  busy:\n" \
		"    type: script\n" \
		"    cron: \"%s\"\n" \
		"    timeZone: UTC\n" \
		"    shardingTotalCount: 3\n" \
		"    failover: true\n" \
		"    description: three sleepy items\n" \
		"    props: {script.command.line: \"%s %s.busy 20\"}\n"
#define QUIET_FMT \
		"  quiet:\n" \
		"    type: script\n" \
		"    cron: \"%s\"\n" \
		"    timeZone: UTC\n" \
		"    shardingTotalCount: 4\n" \
		"    shardingItemParameters: \"0=a,1=b,2=c,3=d\"\n" \
		"    props: {script.command.line: \"%s %s.quiet\"}\n"
	char busy[1024], quiet[1024];
	snprintf(busy, sizeof busy, BUSY_FMT, busy_cron, rec, out);
	snprintf(quiet, sizeof quiet, QUIET_FMT, quiet_cron, rec, out);
	snprintf(jobs, sizeof jobs, "%s%s", busy, quiet);
	tzkup_config(&u, &A, "a", "workers: 4, shutdownGraceSeconds: 1", jobs);
	tzkup_config(&u, &B, "b", "workers: 4, shutdownGraceSeconds: 1", busy);
	char cjobs[2048];
	snprintf(cjobs, sizeof cjobs, "%s  parked:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 1\n    props: {script.command.line: /bin/true}\n", quiet);
	tzkup_config(&u, &C, "c", "workers: 2, shutdownGraceSeconds: 1", cjobs);
	tzkup_run(&u, &A, "127.0.0.1");
	tzkup_run(&u, &B, "127.0.0.2");
	tzkup_run(&u, &C, "127.0.0.3");
	ok(tzkup_wait_registered(&u, "busy", A.id, 0, 8000) && tzkup_wait_registered(&u, "busy", B.id, 0, 8000) &&
	   tzkup_wait_registered(&u, "quiet", C.id, 0, 8000), "three supervisors registered");
	/* ElasticJob-UI's disable of server C for job quiet, before its fire */
	is_int(tzk_set(u.zh, "/t70/quiet/servers/127.0.0.3", "DISABLED"), ZOK, "server 127.0.0.3 disabled for quiet");
	ok(tzkup_wait_registered(&u, "parked", C.id, 0, 8000), "C registered parked");
	is_int(tzk_set(u.zh, "/t70/parked/servers/127.0.0.3", "DISABLED"), ZOK, "  and its only server disabled");

	/* orphan: what an ElasticJob cluster leaves when its last instance died with item 0 queued */
	zhandle_t *zh = u.zh;
	mk(zh, "/t70/orphan", "SCRIPT", 0, NULL);
	mk(zh, "/t70/orphan/config",
	   "cron: 0 0 12 * * ?\ndescription: nobody runs me\ndisabled: false\nfailover: true\njobName: orphan\n"
	   "shardingTotalCount: 3\ntimeZone: Asia/Tokyo\nprops:\n  script.command.line: /bin/true\n", 0, NULL);
	mk(zh, "/t70/orphan/servers", "", 0, NULL);
	mk(zh, "/t70/orphan/servers/10.9.9.9", "ENABLED", 0, NULL);
	mk(zh, "/t70/orphan/instances", "", 0, NULL);
	mk(zh, "/t70/orphan/sharding", "", 0, NULL);
	mk(zh, "/t70/orphan/sharding/0", "", 0, NULL);
	mk(zh, "/t70/orphan/sharding/0/instance", "10.9.9.9@-@1", 0, NULL);
	mk(zh, "/t70/orphan/sharding/1", "", 0, NULL);
	/* ejob's own scheduler keeps a local overlap to itself (no node); ElasticJob's leaves this */
	mk(zh, "/t70/orphan/sharding/2", "", 0, NULL);
	mk(zh, "/t70/orphan/sharding/2/instance", "10.9.9.9@-@1", 0, NULL);
	mk(zh, "/t70/orphan/sharding/2/misfire", "", 0, NULL);
	/* item 0's owner written last: the epoch is the highest mzxid, not the last item's */
	is_int(tzk_set(zh, "/t70/orphan/sharding/0/instance", "10.9.9.9@-@1"), ZOK, "orphan written");
	mk(zh, "/t70/orphan/leader", "", 0, NULL);
	mk(zh, "/t70/orphan/leader/failover", "", 0, NULL);
	mk(zh, "/t70/orphan/leader/failover/items", "", 0, NULL);
	mk(zh, "/t70/orphan/leader/failover/items/0", "", 0, NULL);

	/* the fires: quiet's items complete; busy's run (ejob keeps a local overlap to itself: no misfire node) */
	int ended = 1;
	for (int i = 0; i < 4; i++) ended &= tzkup_wait_ended(&u, "quiet", i, 12000);
	ok(ended, "quiet's 4 items ran and completed");
	is_int(tzk_create(zh, "/t70/quiet/sharding/3/disabled", "", 0, NULL), ZOK, "item 3 of quiet disabled");
	int b_items[3], nb = 0;
	for (int i = 0; i < 3; i++) {
		char *o = zget(tzkup_path(&u, "busy", "sharding/%d/instance", i), NULL);
		if (o && !strcmp(o, B.id)) b_items[nb++] = i;
		free(o);
	}
	ok(nb > 0, "B owns %d of busy's items", nb);
	kill(B.pid, SIGKILL);
	int taken = 1;
	for (int k = 0; k < nb; k++)
		taken &= tzk_wait_data(zh, tzkup_path(&u, "busy", "sharding/%d/failover", b_items[k]), A.id, 8000);
	ok(taken, "B killed: its items fail over to A");
	diag("cluster ready after %.1f s", (tlib_now_ms() - t_start) / 1000.0);

	/* T70_SHOW=1: every listing's output on stderr, for docs/operations.md's examples */
	if (getenv("T70_SHOW")) {
		const char *show[][4] = { { "jobs", NULL }, { "jobs", "--json", NULL }, { "status", "busy", NULL },
			                  { "status", "busy", "--json", NULL }, { "status", "orphan", NULL },
			                  { "servers", NULL }, { "servers", "--json", NULL }, { "servers", "quiet", NULL },
			                  { "instances", NULL }, { "instances", "--json", NULL }, { "instances", "busy", NULL } };
		for (size_t k = 0; k < sizeof show / sizeof show[0]; k++) {
			struct run x = ctl("t70", show[k][0], show[k][1], show[k][2], NULL);
			fprintf(stderr, "$ ejobctl %s %s %s\n%s%s\n", show[k][0], show[k][1] ? show[k][1] : "",
			        show[k][1] && show[k][2] ? show[k][2] : "", x.out ? x.out : "", x.err ? x.err : "");
		}
	}

	/* ---- jobs ---- */
	struct run r = ctl("t70", "jobs", "--json", NULL);
	is_int(r.status, 0, "jobs --json: exit 0");
	ok(r.json, "  one JSON document");
	is_str(js(r.json, "namespace"), "t70", "  namespace");
	is_str(js(r.json, "jobs.0.name"), "busy", "  jobs sorted: busy");
	is_str(js(r.json, "jobs.1.name"), "orphan", "  orphan");
	is_str(js(r.json, "jobs.2.name"), "parked", "  parked");
	is_str(js(r.json, "jobs.3.name"), "quiet", "  quiet");
	is_str(js(r.json, "jobs.4"), "(missing)", "  and no more");
	is_str(js(r.json, "jobs.name=parked.status"), "DISABLED", "  parked: DISABLED (every server disabled)");
	is_str(js(r.json, "jobs.name=parked.nextFireEpoch"), "4070908800", "  parked: nextFireEpoch 2099-01-01 (UTC)");
	char *lead_busy = zget("/t70/busy/leader/election/instance", NULL);
	char *lead_quiet = zget("/t70/quiet/leader/election/instance", NULL);
	is_str(js(r.json, "jobs.name=busy.type"), "SCRIPT", "  busy: type");
	is_str(js(r.json, "jobs.name=busy.cron"), busy_cron, "  busy: cron");
	is_str(js(r.json, "jobs.name=busy.timeZone"), "UTC", "  busy: timeZone");
	is_str(js(r.json, "jobs.name=busy.shardingTotalCount"), "3", "  busy: shardingTotalCount");
	is_str(js(r.json, "jobs.name=busy.instanceCount"), "1", "  busy: instanceCount (A; B was killed)");
	is_str(js(r.json, "jobs.name=busy.status"), "SHARDING_FLAG", "  busy: SHARDING_FLAG (items owned by B, offline)");
	is_str(js(r.json, "jobs.name=busy.leader"), jsonish(lead_busy), "  busy: leader = leader/election/instance");
	is_str(js(r.json, "jobs.name=busy.reshardingDue"), zhas("/t70/busy/leader/sharding/necessary") ? "true" : "false",
	       "  busy: reshardingDue = leader/sharding/necessary exists");
	is_str(js(r.json, "jobs.name=busy.nextFire"), "null", "  busy: nextFire null (its cron's fires are past)");
	is_str(js(r.json, "jobs.name=busy.description"), "three sleepy items", "  busy: description");
	is_str(js(r.json, "jobs.name=busy.configError"), "null", "  busy: configError null");
	is_str(js(r.json, "jobs.name=quiet.instanceCount"), "2", "  quiet: 2 instances (A, C)");
	is_str(js(r.json, "jobs.name=quiet.status"), "OK", "  quiet: OK");
	is_str(js(r.json, "jobs.name=quiet.leader"), jsonish(lead_quiet), "  quiet: leader");
	is_str(js(r.json, "jobs.name=orphan.status"), "CRASHED", "  orphan: CRASHED (no instance)");
	is_str(js(r.json, "jobs.name=orphan.type"), "SCRIPT", "  orphan: type from the job's node (ElasticJob's config)");
	is_str(js(r.json, "jobs.name=orphan.timeZone"), "Asia/Tokyo", "  orphan: timeZone");
	is_str(js(r.json, "jobs.name=orphan.leader"), "null", "  orphan: no leader");
	{
		tz_err_t te;
		cron_err_t ce;
		tz_t *tk = tz_load("Asia/Tokyo", &te);
		cron_t *cr = cron_parse("0 0 12 * * ?", &ce);
		int64_t want = tk && cr ? cron_next(cr, tk, (int64_t)time(NULL)) : -2;
		char want_s[32], iso[64] = "";
		snprintf(want_s, sizeof want_s, "%lld", (long long)want);
		if (tk) tz_format_iso(tk, want, iso, sizeof iso);
		is_str(js(r.json, "jobs.name=orphan.nextFireEpoch"), want_s, "  orphan: nextFireEpoch (noon in Tokyo)");
		is_str(js(r.json, "jobs.name=orphan.nextFire"), iso, "  orphan: nextFire in its zone");
		cron_free(cr);
		tz_free(tk);
	}
	is_str(js(r.json, "warnings"), "[]", "  no warnings");

	r = ctl("t70", "jobs", NULL);
	int aligned, rows = table(r.out, &aligned);
	is_int(r.status, 0, "jobs: exit 0");
	ok(aligned && rows == 5, "  an aligned table, a header and 4 rows");
	is_str(cell[0][0], "JOB", "  header JOB");
	int rb = row_of(rows, "busy"), ro = row_of(rows, "orphan"), rq = row_of(rows, "quiet");
	ok(rb > 0 && ro > 0 && rq > 0, "  a row per job");
	if (rb > 0 && ro > 0 && rq > 0) {
		is_str(cell[rb][1], "SCRIPT", "  busy TYPE");
		is_str(cell[rb][2], busy_cron, "  busy CRON");
		is_str(cell[rb][3], "UTC", "  busy TZ");
		is_str(cell[rb][4], "3", "  busy ITEMS");
		is_str(cell[rb][5], "1", "  busy INSTANCES");
		is_str(cell[rb][6], "SHARDING_FLAG", "  busy STATUS");
		is_str(cell[rb][7], "SHARDING_FLAG", "  busy HEALTH (resharding due)");
		is_str(cell[rb][9], "-", "  busy NEXT FIRE");
		is_str(cell[rb][10], "three sleepy items", "  busy DESCRIPTION");
		is_str(cell[rq][5], "2", "  quiet INSTANCES");
		is_str(cell[rq][6], "OK", "  quiet STATUS");
		is_str(cell[ro][6], "CRASHED", "  orphan STATUS");
		is_str(cell[ro][9], js(tjson_doc(ctl("t70", "jobs", "--json", NULL).out), "jobs.name=orphan.nextFire"),
		       "  orphan NEXT FIRE");
	}

	/* ---- status ---- */
	r = ctl("t70", "status", "busy", "--json", NULL);
	is_int(r.status, 0, "status busy --json: exit 0");
	char ep[32];
	snprintf(ep, sizeof ep, "0x%" PRIx64, epoch_of("busy", 3));
	is_str(js(r.json, "epoch"), ep, "  epoch = highest mzxid of sharding/{i}/instance (%s)", ep);
	is_str(js(r.json, "leader"), jsonish(lead_busy), "  leader");
	is_str(js(r.json, "status"), "SHARDING_FLAG", "  status");
	is_str(js(r.json, "failover"), "true", "  failover");
	is_str(js(r.json, "instances"), (snprintf(jobs, sizeof jobs, "[%s]", A.id), jobs), "  instances: A only");
	check_items(r.json, "busy", 3);
	for (int k = 0; k < nb; k++) {
		char p[64];
		snprintf(p, sizeof p, "items.%d.state", b_items[k]);
		is_str(js(r.json, p), "failover", "  B's item %d: failover", b_items[k]);
		snprintf(p, sizeof p, "items.%d.failover", b_items[k]);
		is_str(js(r.json, p), A.id, "  B's item %d: taken by A", b_items[k]);
		snprintf(p, sizeof p, "items.%d.serverIp", b_items[k]);
		is_str(js(r.json, p), "127.0.0.2", "  B's item %d: serverIp from the offline owner's id", b_items[k]);
		snprintf(p, sizeof p, "items.%d.elasticjobStatus", b_items[k]);
		is_str(js(r.json, p), "RUNNING", "  B's item %d: ElasticJob says RUNNING", b_items[k]);
	}
	for (int i = 0; i < 3; i++) {
		char *o = zget(tzkup_path(&u, "busy", "sharding/%d/instance", i), NULL);
		if (o && !strcmp(o, A.id)) {
			char p[64];
			snprintf(p, sizeof p, "items.%d.state", i);
			is_str(js(r.json, p), "running", "  A's item %d: running", i);
		}
		free(o);
	}
	/* the table */
	r = ctl("t70", "status", "busy", NULL);
	is_int(r.status, 0, "status busy: exit 0");
	const char *tb = r.out ? strstr(r.out, "\nITEM") : NULL;
	ok(r.out && strstr(r.out, "leader       ") && strstr(r.out, ep), "  the summary names the leader and the epoch");
	rows = table(tb ? tb + 1 : "", &aligned);
	ok(aligned && rows == 4, "  an aligned item table, 3 rows");
	for (int i = 0; i < 3 && rows == 4; i++) {
		char *o = zget(tzkup_path(&u, "busy", "sharding/%d/instance", i), NULL);
		char *fo = zget(tzkup_path(&u, "busy", "sharding/%d/failover", i), NULL);
		char want[300];
		snprintf(want, sizeof want, "%s%s", o ? o : "-", o && !strcmp(o, B.id) ? " (offline)" : "");
		is_str(cell[i + 1][1], want, "  item %d OWNER", i);
		int m = zhas(tzkup_path(&u, "busy", "sharding/%d/misfire", i));
		if (fo) snprintf(want, sizeof want, "failover to %s%s", fo, m ? ", misfire" : "");
		else snprintf(want, sizeof want, "running%s", m ? ", misfire" : "");
		is_str(cell[i + 1][2], want, "  item %d STATE", i);
		ok(strcmp(cell[i + 1][3], "-"), "  item %d RUNNING SINCE given (%s)", i, cell[i + 1][3]);
		free(o), free(fo);
	}

	r = ctl("t70", "status", "quiet", "--json", NULL);
	is_int(r.status, 0, "status quiet --json: exit 0");
	check_items(r.json, "quiet", 4);
	is_str(js(r.json, "items.0.state"), "completed", "  item 0 completed");
	is_str(js(r.json, "items.0.parameter"), "a", "  item 0's parameter");
	is_str(js(r.json, "items.3.state"), "disabled", "  item 3 disabled");
	is_str(js(r.json, "items.3.elasticjobStatus"), "DISABLED", "  ElasticJob: DISABLED");
	is_str(js(r.json, "items.0.elasticjobStatus"), "PENDING", "  ElasticJob: a completed item is PENDING");
	snprintf(ep, sizeof ep, "0x%" PRIx64, epoch_of("quiet", 4));
	is_str(js(r.json, "epoch"), ep, "  epoch");
	int c_items = 0;
	for (int i = 0; i < 4; i++) {
		char *o = zget(tzkup_path(&u, "quiet", "sharding/%d/instance", i), NULL);
		c_items += o && !strcmp(o, C.id);
		free(o);
	}
	is_int(c_items, 0, "  (the disabled server got no item)");

	r = ctl("t70", "status", "orphan", "--json", NULL);
	is_int(r.status, 0, "status orphan --json: exit 0");
	check_items(r.json, "orphan", 3);
	is_str(js(r.json, "items.2.state"), "misfire", "  item 2: misfire");
	snprintf(ep, sizeof ep, "0x%" PRIx64, epoch_of("orphan", 3));
	is_str(js(r.json, "epoch"), ep, "  epoch: item 0's mzxid, the highest");
	is_str(js(r.json, "items.0.state"), "failover-queued", "  item 0: failover queued");
	is_str(js(r.json, "items.0.elasticjobStatus"), "SHARDING_FLAG", "  ElasticJob: SHARDING_FLAG");
	is_str(js(r.json, "items.1.state"), "unassigned", "  item 1: unassigned");
	is_str(js(r.json, "failoverQueue"), "[0]", "  failoverQueue");
	is_str(js(r.json, "statusReason"), "no instance online", "  statusReason");
	r = ctl("t70", "status", "orphan", "1", NULL);
	rows = table(strstr(r.out ? r.out : "", "\nITEM") ? strstr(r.out, "\nITEM") + 1 : "", &aligned);
	ok(r.status == 0 && rows == 2 && !strcmp(cell[1][0], "1") && !strcmp(cell[1][2], "unassigned"),
	   "status orphan 1: only item 1, unassigned");

	/* ---- servers ---- */
	r = ctl("t70", "servers", "--json", NULL);
	is_int(r.status, 0, "servers --json: exit 0");
	is_str(js(r.json, "servers.0.ip"), "10.9.9.9", "  servers sorted: 10.9.9.9 (orphan's)");
	is_str(js(r.json, "servers.1.ip"), "127.0.0.1", "  127.0.0.1");
	is_str(js(r.json, "servers.ip=127.0.0.1.instances"), (snprintf(jobs, sizeof jobs, "[%s]", A.id), jobs),
	       "  127.0.0.1: A");
	is_str(js(r.json, "servers.ip=127.0.0.1.jobsNum"), "2", "  127.0.0.1: 2 jobs");
	is_str(js(r.json, "servers.ip=127.0.0.2.instancesNum"), "0", "  127.0.0.2: no instance (B killed)");
	is_str(js(r.json, "servers.ip=127.0.0.2.jobsNum"), "1", "  127.0.0.2: 1 job");
	is_str(js(r.json, "servers.ip=127.0.0.3.disabledJobsNum"), "2", "  127.0.0.3: 2 disabled");
	is_str(js(r.json, "servers.ip=127.0.0.3.jobs.name=quiet.status"), "DISABLED", "  127.0.0.3: quiet DISABLED");
	is_str(js(r.json, "servers.ip=10.9.9.9.instancesNum"), "0", "  10.9.9.9: none");
	r = ctl("t70", "servers", NULL);
	rows = table(r.out, &aligned);
	int r3 = row_of(rows, "127.0.0.3");
	ok(r.status == 0 && aligned && rows == 5 && r3 > 0, "servers: an aligned table, 4 servers");
	if (r3 > 0) {
		is_str(cell[r3][1], "1", "  127.0.0.3 INSTANCES");
		is_str(cell[r3][2], "2", "  127.0.0.3 JOBS");
		is_str(cell[r3][3], "2", "  127.0.0.3 DISABLED");
		is_str(cell[r3][4], "parked(disabled) quiet(disabled)", "  127.0.0.3 JOB NAMES");
	}
	r = ctl("t70", "servers", "quiet", "--json", NULL);
	is_int(r.status, 0, "servers quiet --json: exit 0");
	for (int k = 0; k < 2; k++) {
		const char *ip = k == 0 ? "127.0.0.1" : "127.0.0.3";
		struct tsup *t = k == 0 ? &A : &C;
		char p[96], want[256], *st = zget(tzkup_path(&u, "quiet", "servers/%s", ip), NULL);
		snprintf(p, sizeof p, "servers.ip=%s.jobs.0.status", ip);
		is_str(js(r.json, p), jsonish(st), "  %s: status = servers/%s", ip, ip);
		size_t n = (size_t)snprintf(want, sizeof want, "[");
		for (int i = 0; i < 4; i++) {
			char *o = zget(tzkup_path(&u, "quiet", "sharding/%d/instance", i), NULL);
			if (o && !strcmp(o, t->id) && zhas(tzkup_path(&u, "quiet", "instances/%s", o)))
				n += (size_t)snprintf(want + n, sizeof want - n, "%s%d", n > 1 ? "," : "", i);
			free(o);
		}
		snprintf(want + n, sizeof want - n, "]");
		snprintf(p, sizeof p, "servers.ip=%s.jobs.0.items", ip);
		is_str(js(r.json, p), want, "  %s: items owned by its online instances", ip);
		free(st);
	}
	r = ctl("t70", "servers", "quiet", NULL);
	rows = table(r.out, &aligned);
	r3 = row_of(rows, "127.0.0.3");
	ok(r.status == 0 && aligned && rows == 3 && r3 > 0 && !strcmp(cell[r3][1], "DISABLED") &&
	   !strcmp(cell[r3][2], C.id) && !strcmp(cell[r3][3], "-"), "servers quiet: 127.0.0.3 DISABLED, C, no item");

	/* ---- instances ---- */
	r = ctl("t70", "instances", "--json", NULL);
	is_int(r.status, 0, "instances --json: exit 0");
	snprintf(jobs, sizeof jobs, "instances.id=%s.", A.id);
	char p[4400];
#define IP(path) (snprintf(p, sizeof p, "%s%s", jobs, path), p)
	is_str(js(r.json, IP("online")), "true", "  A online");
	is_str(js(r.json, IP("kind")), "ejob", "  A is ejob (leader/failover/alive/{id})");
	is_str(js(r.json, IP("ip")), "127.0.0.1", "  A's ip");
	is_str(js(r.json, IP("pid")), (snprintf(ep, sizeof ep, "%d", (int)A.pid), ep), "  A's pid");
	is_str(js(r.json, IP("jobs.name=busy.leader")), lead_busy && !strcmp(lead_busy, A.id) ? "true" : "false",
	       "  A leads busy as leader/election/instance says");
	snprintf(jobs, sizeof jobs, "instances.id=%s.", B.id);
	is_str(js(r.json, IP("online")), "false", "  B listed, offline (it still owns items)");
	is_str(js(r.json, IP("kind")), "null", "  B: kind unknown");
	char want[160];
	size_t wn = (size_t)snprintf(want, sizeof want, "[");
	for (int k = 0; k < nb; k++) wn += (size_t)snprintf(want + wn, sizeof want - wn, "%s%d", k ? "," : "", b_items[k]);
	snprintf(want + wn, sizeof want - wn, "]");
	is_str(js(r.json, IP("jobs.name=busy.items")), want, "  B owns its busy items still");
	is_str(js(r.json, IP("jobs.name=busy.running")), "[]", "  B runs none");
	snprintf(jobs, sizeof jobs, "instances.id=%s.", A.id);
	is_str(js(r.json, IP("jobs.name=busy.failover")), want, "  A took them over");
	is_str(js(r.json, "instances.id=10.9.9.9@-@1.online"), "false", "  orphan's dead owner listed, offline");
	r = ctl("t70", "instances", "busy", NULL);
	rows = table(r.out, &aligned);
	int ra = row_of(rows, A.id), rbb = row_of(rows, B.id);
	ok(r.status == 0 && aligned && rows == 3 && ra > 0 && rbb > 0, "instances busy: an aligned table, A and B");
	if (ra > 0 && rbb > 0) {
		is_str(cell[ra][2], "ejob", "  A KIND");
		is_str(cell[ra][3], "yes", "  A ONLINE");
		is_str(cell[ra][5], lead_busy && !strcmp(lead_busy, A.id) ? "yes" : "no", "  A LEADER");
		is_str(cell[rbb][3], "no", "  B ONLINE");
		want[strlen(want) - 1] = 0;   /* "[0,2]" -> "0,2" */
		is_str(cell[rbb][6], want + 1, "  B ITEMS");
	}
#undef IP

	/* ---- bad input ---- */
	r = ctl("t70", "status", "busz", NULL);
	ok(r.status == 2 && r.err && strstr(r.err, "no job 'busz'") && strstr(r.err, "did you mean 'busy'"),
	   "status busz: exit 2, names it, did you mean 'busy' (%s)", r.err ? r.err : "");
	r = ctl("t70", "status", "zzzzzzzzz", NULL);
	ok(r.status == 2 && r.err && strstr(r.err, "no job 'zzzzzzzzz'"), "status of an unknown job: exit 2 (%s)",
	   r.err ? r.err : "");
	r = ctl("t70", "status", "busy", "7", NULL);
	ok(r.status == 2 && r.err && strstr(r.err, "no item 7"), "status busy 7: exit 2, names the item (%s)",
	   r.err ? r.err : "");
	r = ctl("t70", "servers", "--server", "127.0.0.9", NULL);
	ok(r.status == 2 && r.err && strstr(r.err, "no server '127.0.0.9'") && strstr(r.err, "did you mean"),
	   "servers --server 127.0.0.9: exit 2, did you mean (%s)", r.err ? r.err : "");
	char bad_id[100];
	snprintf(bad_id, sizeof bad_id, "%sx", A.id);
	r = ctl("t70", "instances", "--instance", bad_id, NULL);
	snprintf(want, sizeof want, "did you mean '%s'", A.id);
	ok(r.status == 2 && r.err && strstr(r.err, bad_id) && strstr(r.err, want),
	   "instances --instance %s: exit 2, did you mean A (%s)", bad_id, r.err ? r.err : "");
	r = ctl("t70", "servers", "nojob", NULL);
	ok(r.status == 2 && r.err && strstr(r.err, "no job 'nojob'"), "servers nojob: exit 2");
	/* -c FILE: the connection from a supervisor's config (regCenter) */
	r = ctl(NULL, "jobs", "-c", A.conf, "--json", NULL);
	ok(r.status == 0 && !strcmp(js(r.json, "namespace"), "t70") && !strcmp(js(r.json, "jobs.0.name"), "busy") &&
	   !strcmp(js(r.json, "jobs.4"), "(missing)"), "jobs -c FILE: regCenter's cluster and namespace");
	r = ctl(NULL, "jobs", NULL);
	ok(r.status == 2 && r.err && strstr(r.err, "--zk"), "jobs without a cluster: exit 2, says what to give");

	/* ZooKeeper down: a port with nothing listening */
	char down[64];
	snprintf(down, sizeof down, "127.0.0.1:%d", tzk_free_port());
	r = ctl(NULL, "jobs", "--zk", down, "--namespace", "t70", "--timeout", "1", NULL);
	ok(r.status == 1 && r.err && strstr(r.err, "cannot reach ZooKeeper") && strstr(r.err, down),
	   "ZooKeeper down: exit 1, a clear message (%s)", r.err ? r.err : "");
	ok(r.ms < 2500, "  within the 1 s timeout (%" PRIu64 " ms)", r.ms);
	r = ctl(NULL, "status", "busy", "--zk", down, "--namespace", "t70", "--timeout", "1", NULL);
	ok(r.status == 1 && r.ms < 2500, "  status too (%" PRIu64 " ms)", r.ms);
	r = ctl("nons", "jobs", NULL);
	ok(r.status == 1 && r.err && strstr(r.err, "namespace /nons does not exist"), "an unknown namespace: exit 1");

	/* a wrong digest: nodes created CREATOR_ALL by a session with u:right */
	zhandle_t *sec = tzk_connect(u.connect, 10000, "u:right", 10000);
	if (!sec) BAIL_OUT("cannot connect with a digest");
	mk(sec, "/t70sec", "", 0, &ZOO_CREATOR_ALL_ACL);
	mk(sec, "/t70sec/j", "SCRIPT", 0, &ZOO_CREATOR_ALL_ACL);
	mk(sec, "/t70sec/j/config", "cron: 0 0 12 * * ?\njobName: j\nshardingTotalCount: 1\n", 0, &ZOO_CREATOR_ALL_ACL);
	r = ctl("t70sec", "jobs", "--digest", "u:wrong", NULL);
	ok(r.status == 1 && r.err && strstr(r.err, "/t70sec") && strstr(r.err, "not authenticated") && strstr(r.err, "--digest"),
	   "a wrong digest: exit 1, names the node and the digest (%s)", r.err ? r.err : "");
	r = ctl("t70sec", "status", "j", NULL);
	ok(r.status == 1 && r.err && strstr(r.err, "not authenticated"), "no digest: status exits 1 (%s)", r.err ? r.err : "");
	r = ctl("t70sec", "jobs", "--digest", "u:right", "--json", NULL);
	ok(r.status == 0 && !strcmp(js(r.json, "jobs.0.name"), "j"), "the right digest: jobs lists j");
	tzk_close(sec);

	/* a namespace of garbage */
	mk(zh, "/t70junk", "", 0, NULL);
	mk(zh, "/t70junk/nocfg", "", 0, NULL);
	mk(zh, "/t70junk/badyaml", "", 0, NULL);
	mk(zh, "/t70junk/badyaml/config", "jobName: badyaml\ncron: [unclosed\n", 0, NULL);
	mk(zh, "/t70junk/weird", "SCRIPT", 0, NULL);
	mk(zh, "/t70junk/weird/config", "cron: 0 0 12 * * ?\njobName: weird\nshardingTotalCount: 2\n", 0, NULL);
	mk(zh, "/t70junk/weird/sharding", "", 0, NULL);
	mk(zh, "/t70junk/weird/sharding/abc", "", 0, NULL);
	mk(zh, "/t70junk/weird/sharding/0", "", 0, NULL);
	mk(zh, "/t70junk/weird/sharding/0/instance", "not-an-instance", 0, NULL);
	mk(zh, "/t70junk/weird/instances", "", 0, NULL);
	mk(zh, "/t70junk/weird/instances/not-an-instance", "\x01garbage", ZOO_EPHEMERAL, NULL);
	mk(zh, "/t70junk/weird/servers", "", 0, NULL);
	mk(zh, "/t70junk/weird/servers/10.1.1.1", "\xf8\x80\x80", 0, NULL);   /* no UTF-8 */
	r = ctl("t70junk", "jobs", NULL);
	ok(r.status == 0 && r.err && strstr(r.err, "/t70junk/nocfg: no config node") &&
	   strstr(r.err, "/t70junk/badyaml/config") && strstr(r.err, "/t70junk/weird/sharding/abc: not an item number") &&
	   strstr(r.err, "without '@-@'"), "garbage: jobs exits 0, a warning names each bad node");
	rows = table(r.out, &aligned);
	ok(rows == 3 && row_of(rows, "badyaml") > 0 && row_of(rows, "weird") > 0, "  and lists badyaml and weird");
	r = ctl("t70junk", "jobs", "--json", NULL);
	ok(r.status == 0 && r.json && strcmp(js(r.json, "jobs.name=badyaml.configError"), "null") &&
	   tjson_get(r.json, "warnings") && tjson_get(r.json, "warnings")->n >= 4, "  --json: configError set, the warnings listed");
	r = ctl("t70junk", "status", "badyaml", NULL);
	ok(r.status == 0 && r.out && strstr(r.out, "config       "), "status of a job with bad YAML: its error, no crash");
	r = ctl("t70junk", "status", "weird", "--json", NULL);
	ok(r.status == 0 && !strcmp(js(r.json, "items.0.owner"), "not-an-instance") &&
	   !strcmp(js(r.json, "items.0.ownerOnline"), "true") && !strcmp(js(r.json, "items.2"), "(missing)"),
	   "status weird --json: item 0 and 1, sharding/abc left out");
	const char *cmds[][2] = { { "servers", NULL }, { "instances", NULL }, { "servers", "weird" }, { "instances", "weird" } };
	int clean = 1;
	for (int k = 0; k < 4; k++) {
		r = ctl("t70junk", cmds[k][0], "--json", cmds[k][1], NULL);
		if (r.status != 0 || !r.json) clean = 0, diag("%s %s: %d %s", cmds[k][0], cmds[k][1] ? cmds[k][1] : "", r.status, r.err);
	}
	ok(clean, "servers and instances on garbage: exit 0, valid JSON");
	r = ctl("t70junk", "servers", "weird", "--json", NULL);
	ok(r.out && strstr(r.out, "\"status\":\"\\u00f8\\u0080\\u0080\""), "  bytes that are not UTF-8 come out as \\u00XX");

	free(lead_busy), free(lead_quiet);
	tsup_stop(&A, SIGTERM, 5000);
	tsup_stop(&C, SIGTERM, 5000);
	tzkup_end(&u);
	diag("t/70 took %.1f s", (tlib_now_ms() - t_start) / 1000.0);
	return done_testing();
}
