/* t/75-metrics.c: supervisor.metrics, as a real Prometheus 2.42 and an operator see it. Two real
 * supervisors on a real ZooKeeper, each serving /metrics, /healthz and /status:
 *   - /healthz is 503 with a reason while ZooKeeper cannot be reached (before the first session,
 *     and when the connection is lost later), 200 once connected and every job registered;
 *   - a Prometheus of the test's own scrapes both every second, and its query API gives, after
 *     known triggered fires, exactly the fires and items by outcome the test caused (summed over
 *     both supervisors), the attempts in the duration histogram, and ejob_leader on the leader
 *     only (ZooKeeper's leader/election/instance);
 *   - promtool check metrics passes on the exposition;
 *   - /status names the running item with its start (as the item's own script saw it), the
 *     jobs this supervisor leads (ZooKeeper's leader/election/instance), and the pool. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

/* ---- Prometheus's HTTP API ---------------------------------------------------------------- */

static void urlenc(const char *s, char *out, size_t len)
{
	size_t n = 0;
	for (; *s && n + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.')
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, len - n, "%%%02X", c);
	}
	out[n] = '\0';
}

/* ---- Prometheus -------------------------------------------------------------------------- */

static int prom_port;

/* an instant query's whole answer (malloc'd), NULL if none */
static char *prom_query(const char *q)
{
	char enc[2048], path[2200];
	urlenc(q, enc, sizeof enc);
	snprintf(path, sizeof path, "/api/v1/query?query=%s", enc);
	char *body;
	int code = tlib_http_get(prom_port, path, &body);
	if (code != 200) {
		free(body);
		return NULL;
	}
	return body;
}

/* the value of a query that gives one sample, -1 if none */
static double prom_value(const char *q)
{
	char *b = prom_query(q);
	double v = -1;
	char *p = b ? strstr(b, "\"value\":[") : NULL;
	if (p && (p = strchr(p + 9, '"'))) v = strtod(p + 1, NULL);
	free(b);
	return v;
}

struct want {
	const char *q;
	double v;
};

static int prom_is(void *arg)
{
	const struct want *w = arg;
	return prom_value(w->q) == w->v;
}

static pid_t prom_start(const char *dir, int port, int pa, int pb)
{
	char cfg[700], data[700], logf[700], listen[64], cfgarg[720], dataarg[720];
	snprintf(cfg, sizeof cfg, "%s/prometheus.yml", dir);
	snprintf(data, sizeof data, "%s/tsdb", dir);
	snprintf(logf, sizeof logf, "%s/prometheus.log", dir);
	char y[1024];
	int n = snprintf(y, sizeof y,
	                 "global: {scrape_interval: 1s, scrape_timeout: 900ms, evaluation_interval: 1s}\n"
	                 "scrape_configs:\n"
	                 "  - job_name: ejob\n"
	                 "    static_configs:\n"
	                 "      - targets: ['127.0.0.1:%d', '127.0.0.1:%d']\n", pa, pb);
	tlib_write_file(cfg, y, (size_t)n);
	snprintf(listen, sizeof listen, "--web.listen-address=127.0.0.1:%d", port);
	snprintf(cfgarg, sizeof cfgarg, "--config.file=%s", cfg);
	snprintf(dataarg, sizeof dataarg, "--storage.tsdb.path=%s", data);
	pid_t p = tlib_fork();
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(logf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("prometheus", "prometheus", cfgarg, dataarg, listen, "--log.level=warn",
		       "--storage.tsdb.retention.time=1h", (char *)NULL);
		_exit(127);
	}
	return p;
}

static int prom_ready(void *arg)
{
	(void)arg;
	char *b;
	int code = tlib_http_get(prom_port, "/-/ready", &b);
	free(b);
	return code == 200;
}

/* ---- the supervisors' pages -------------------------------------------------------------- */

struct hz {
	int port, code;
};

static int health_is(void *arg)
{
	struct hz *h = arg;
	char *b;
	int code = tlib_http_get(h->port, "/healthz", &b);
	free(b);
	return code == h->code;
}

/* a JSON number after "key": in s, -1 if absent */
static long long jnum(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *p = s ? strstr(s, k) : NULL;
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

static int has(const char *s, const char *needle)
{
	return s && strstr(s, needle) != NULL;
}

static const char ok_sh[] = "#!/bin/sh\nexit 0\n";
static const char bad_sh[] = "#!/bin/sh\nexit 3\n";
static const char slow_sh[] = "#!/bin/sh\ndate +%s%N > \"$OUT\"\nexec sleep 30\n";

int main(void)
{
	tlib_init(60);
	char okp[600], badp[600], slowp[600], started[600], jobs[4096], sup[256];
	tlib_script(okp, sizeof okp, "ok.sh", ok_sh);
	tlib_script(badp, sizeof badp, "bad.sh", bad_sh);
	tlib_script(slowp, sizeof slowp, "slow.sh", slow_sh);
	snprintf(started, sizeof started, "%s/slow-started", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  ok: {type: script, cron: \"0 0 0 1 1 ? 2099\", shardingTotalCount: 4, props: {script.command.line: \"%s\"}}\n"
	         "  bad: {type: script, cron: \"0 0 0 1 1 ? 2099\", shardingTotalCount: 2, maxRetries: 0,\n"
	         "        props: {script.command.line: \"%s\"}}\n"
	         "  slow: {type: script, cron: \"0 0 0 1 1 ? 2099\", shardingTotalCount: 1,\n"
	         "         props: {script.command.line: \"/usr/bin/env OUT=%s %s\"}}\n"
	         "  off: {type: script, cron: \"0 0 0 1 1 ? 2099\", shardingTotalCount: 1, disabled: true,\n"
	         "        props: {script.command.line: \"%s\"}}\n",
	         okp, badp, started, slowp, okp);

	/* Prometheus starts while ZooKeeper does */
	int pa = tzk_free_port(), pb = tzk_free_port();
	prom_port = tzk_free_port();
	char pdir[600];
	snprintf(pdir, sizeof pdir, "%s/prom", tlib_tmpdir());
	mkdir(pdir, 0755);
	pid_t prom = prom_start(pdir, prom_port, pa, pb);
	ok(prom > 0, "prometheus started (pid %d)", (int)prom);

	struct tzkup u;
	tzkup_start(&u, 200, "t75", 2000);

	/* ---- before the first session: 503 ---- */
	is_int(tzk_pause(&u.zk), 0, "ZooKeeper paused before the supervisors start");
	struct tsup a, b;
	snprintf(sup, sizeof sup, "workers: 3, shutdownGraceSeconds: 0, killGraceSeconds: 1, metrics: \"127.0.0.1:%d\"", pa);
	tzkup_config(&u, &a, "a", sup, jobs);
	snprintf(sup, sizeof sup, "workers: 3, shutdownGraceSeconds: 0, killGraceSeconds: 1, metrics: \"127.0.0.1:%d\"", pb);
	tzkup_config(&u, &b, "b", sup, jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	tzkup_run(&u, &b, "127.0.0.2");
	struct hz ha = { pa, 503 }, hb = { pb, 503 };
	ok(tlib_wait_for(health_is, &ha, 5000) && tlib_wait_for(health_is, &hb, 5000), "/healthz: 503 on both while "
	   "ZooKeeper has not answered");
	char *body = NULL;
	int code = tlib_http_get(pa, "/healthz", &body);
	ok(code == 503 && has(body, "not connected"), "  with a reason: %s", body ? body : "(none)");
	free(body);
	is_int(tzk_resume(&u.zk), 0, "ZooKeeper resumed");
	ha.code = hb.code = 200;
	ok(tlib_wait_for(health_is, &ha, 10000) && tlib_wait_for(health_is, &hb, 10000), "/healthz: 200 on both once "
	   "connected and registered");
	const char *names[] = { "ok", "bad", "slow", "off" };
	int reg = 1;
	for (int k = 0; k < 4; k++)
		reg &= tzkup_session(&u, names[k], a.id) != 0 && tzkup_session(&u, names[k], b.id) != 0;
	ok(reg, "  and ZooKeeper agrees: every job has both instances");

	/* ---- known fires: each job triggered on both instances ---- */
	for (int k = 0; k < 3; k++) {
		zoo_create(u.zh, tzkup_path(&u, names[k], "trigger/%s", a.id), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
		zoo_create(u.zh, tzkup_path(&u, names[k], "trigger/%s", b.id), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	}
	/* and the disabled job on a alone: a fire that runs nothing, counted with its reason */
	zoo_create(u.zh, tzkup_path(&u, "off", "trigger/%s", a.id), "", 0, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	ok(tlib_wait_for(prom_ready, NULL, 10000), "prometheus is ready on 127.0.0.1:%d", prom_port);
	struct want w[] = {
		{ "sum(ejob_items_total{job_name=\"ok\",outcome=\"ok\"})", 4 },
		{ "sum(ejob_items_total{job_name=\"bad\",outcome=\"failed\"})", 2 },
		{ "sum(ejob_fires_total{job_name=\"ok\"})", 2 },
		{ "sum(ejob_fires_total{job_name=\"bad\"})", 2 },
		{ "sum(ejob_fires_total{job_name=\"slow\"})", 1 },
		{ "sum(ejob_items_running)", 1 },
		{ "sum(ejob_item_duration_seconds_count)", 6 },
		{ "count(up{job=\"ejob\"} == 1)", 2 },
		{ "sum(ejob_zookeeper_session_state{state=\"connected\"})", 2 },
		{ "sum(ejob_jobs_registered)", 8 },
		{ "sum(ejob_fires_skipped_total{job_name=\"off\",reason=\"disabled\"})", 1 },
		{ "count(ejob_fires_skipped_total)", 1 },
		{ "sum(ejob_workers{state=\"ready\"})", 6 },
		{ "count(ejob_leader{job_name=\"ok\"})", 1 },
		{ "sum(ejob_leader_jobs)", 3 },   /* a disabled server does not lead (coord_lead.c) */
	};
	for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
		int got = tlib_wait_for(prom_is, &w[k], k ? 4000 : 12000);
		ok(got, "prometheus: %s == %g%s", w[k].q, w[k].v, got ? "" : " (not so)");
		if (!got) diag("  it says %g", prom_value(w[k].q));
	}
	ok(prom_value("sum(ejob_items_total{job_name=\"bad\",outcome=\"ok\"})") == 0, "  and no item of bad succeeded");
	ok(prom_value("sum(ejob_zookeeper_requests_total)") > 0 && prom_value("sum(ejob_zookeeper_session_expirations_total)") == 0,
	   "  ZooKeeper requests counted, no session expired");

	/* the leader, as ZooKeeper says */
	char *leader = NULL;
	tzk_get(u.zh, tzkup_path(&u, "ok", "leader/election/instance"), &leader, NULL);
	ok(leader && (!strcmp(leader, a.id) || !strcmp(leader, b.id)), "job ok's leader is %s", leader ? leader : "?");
	int lport = leader && !strcmp(leader, a.id) ? pa : pb, oport = lport == pa ? pb : pa;
	char lq[128];
	snprintf(lq, sizeof lq, "ejob_leader{job_name=\"ok\",instance=\"127.0.0.1:%d\"}", lport);
	is_int((int)prom_value(lq), 1, "  prometheus: %s is 1", lq);

	/* ---- the exposition passes promtool ---- */
	code = tlib_http_get(pa, "/metrics", &body);
	is_int(code, 200, "GET /metrics: 200");
	char mfile[700];
	snprintf(mfile, sizeof mfile, "%s/metrics.txt", tlib_tmpdir());
	tlib_write_file(mfile, body ? body : "", body ? strlen(body) : 0);
	free(body);
	char cmd[800];
	snprintf(cmd, sizeof cmd, "exec promtool check metrics < %s", mfile);
	const char *pargv[] = { "/bin/sh", "-c", cmd, NULL };
	char *out = NULL, *err = NULL;
	int st = tlib_run(pargv, &out, &err);
	ok(st == 0 && !*out && !*err, "promtool check metrics passes (status 0x%x)%s%s", st, *err ? ": " : "", err);
	free(out);
	free(err);

	/* ---- /status ---- */
	char *owner = NULL;
	tzk_get(u.zh, tzkup_path(&u, "slow", "sharding/0/instance"), &owner, NULL);
	struct tsup *so = owner && !strcmp(owner, a.id) ? &a : &b;
	int sport = so == &a ? pa : pb, nport = sport == pa ? pb : pa;
	ok(tsup_wait_lines(started, "", 1, 5000), "slow's item 0 started on %s", owner ? owner : "?");
	char *t = tsup_slurp(started);
	long long script_ms = t ? atoll(t) / 1000000 : -1;
	free(t);
	code = tlib_http_get(sport, "/status", &body);
	is_int(code, 200, "GET /status: 200");
	const char *run = body ? strstr(body, "\"running\":[{") : NULL;
	ok(run && has(run, "\"job\":\"slow\"") && jnum(run, "item") == 0 && jnum(run, "attempt") == 1,
	   "  running: slow item 0, attempt 1");
	if (!run) diag("/status: %s", body ? body : "(none)");
	long long start_ms = jnum(run, "startMs");
	ok(start_ms > 0 && script_ms >= start_ms && script_ms - start_ms < 1000, "  its start (%lld) is when the item "
	   "began (the script saw %lld)", start_ms, script_ms);
	ok(has(body, so->id), "  the instance is %s", so->id);
	free(body);
	code = tlib_http_get(nport, "/status", &body);
	ok(code == 200 && has(body, "\"running\":[]"), "  the other supervisor runs nothing");
	free(body);
	code = tlib_http_get(lport, "/status", &body);
	ok(has(body, "\"leaderOf\":[") && has(strstr(body, "\"leaderOf\":["), "\"ok\"") &&
	   has(body, "{\"name\":\"ok\",\"registered\":true,\"leader\":true"), "the leader's /status: leaderOf has ok");
	ok(jnum(body, "workers") == 3 && jnum(body, "ready") == 3, "  pool: 3 workers, 3 ready");
	/* the recent events: this session, the leadership and assignment of ok */
	const char *evs = body ? strstr(body, "\"events\":[") : NULL;
	ok(has(evs, "\"type\":\"session\",\"job\":null,\"reason\":\"connected_new_session\"") &&
	   has(evs, "\"type\":\"leader\",\"job\":\"ok\",\"reason\":\"gained\"") &&
	   has(evs, "\"type\":\"sharded\",\"job\":\"ok\"") && has(evs, "\"type\":\"assignment\",\"job\":\"ok\""),
	   "  its recent events: the session, ok's leadership gained, its sharding and its assignment");
	if (lport == pa)
		ok(has(evs, "\"type\":\"fire_skipped\",\"job\":\"off\",\"reason\":\"disabled\",\"detail\":\"the job is "
		       "disabled (disabled: true)\""), "  and off's fire that ran nothing, with why");
	else
		ok(!has(evs, "\"type\":\"fire_skipped\""), "  and no fire skipped (off was triggered on the other)");
	ok(has(body, "\"state\":\"connected\"") && jnum(body, "leaseHeadroomSeconds") >= 0 && has(body, "\"healthy\":true"),
	   "  zookeeper: connected, a lease headroom, healthy");
	free(body);
	code = tlib_http_get(oport, "/status", &body);
	ok(has(body, "{\"name\":\"ok\",\"registered\":true,\"leader\":false"), "the other's /status: not ok's leader");
	free(body);
	code = tlib_http_get(pa, "/nothing", &body);
	is_int(code, 404, "another path: 404");
	free(body);

	/* ---- ZooKeeper away: 503 with a reason, back: 200 ---- */
	is_int(tzk_pause(&u.zk), 0, "ZooKeeper paused");
	ha.code = 503;
	ok(tlib_wait_for(health_is, &ha, 6000), "/healthz: 503 once the connection is lost");
	code = tlib_http_get(pa, "/healthz", &body);
	ok(code == 503 && has(body, "connection lost"), "  with a reason: %s", body ? body : "(none)");
	free(body);
	code = tlib_http_get(pa, "/metrics", &body);
	ok(has(body, "\nejob_leader_jobs 0\n") && !has(body, "ejob_leader{"), "  cut off, a leads nothing as far as it "
	   "knows (ejob_leader_jobs 0, no ejob_leader series)");
	free(body);
	is_int(tzk_resume(&u.zk), 0, "ZooKeeper resumed");
	ha.code = 200;
	ok(tlib_wait_for(health_is, &ha, 8000), "/healthz: 200 again");

	/* the address: refused at the start, or taken */
	struct tsup c;
	tzkup_config(&u, &c, "c", "workers: 1", jobs);
	const char *bad_args[] = { "--metrics", "localhost:http", NULL };
	st = tsup_run(&c, bad_args, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && tsup_log_count(&c, "supervisor.metrics") >= 1,
	   "--metrics localhost:http: refused, exit 2 (status 0x%x)", st);
	char taken[64];
	snprintf(taken, sizeof taken, "127.0.0.1:%d", pa);
	const char *taken_args[] = { "--metrics", taken, NULL };
	st = tsup_run(&c, taken_args, 10000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "--metrics %s (a's): the start fails, exit 2 (a configuration problem; "
	   "status 0x%x)", taken, st);

	st = tsup_stop(&a, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a stops cleanly (status 0x%x)", st);
	st = tsup_stop(&b, SIGTERM, 15000);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "b stops cleanly (status 0x%x)", st);
	kill(prom, SIGTERM);
	waitpid(prom, NULL, 0);
	tlib_untrack(prom);
	free(leader);
	free(owner);
	tzkup_end(&u);
	return done_testing();
}
