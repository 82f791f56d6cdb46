/* t/105-adopt-apply.c: jobs made by `ejobctl apply -f FILE` run on the supervisors whose
 * supervisor.labels match, end to end, with real supervisors on a real ZooKeeper:
 *   - a job applied with label etl registers on s0 and s1 (labels etl) and runs there within a
 *     fire, never on s2 (label web); applied again with label web it moves to s2;
 *   - `ejobctl trigger JOB --parameter P` on an adopted one-off job reaches its script;
 *   - an adopted item that fails on every fire is FAILING in `ejobctl jobs --json`;
 *   - a job in s0's file and applied under the same name is the file's on s0: it stays there
 *     when its label stops matching, while s1 lets it go;
 *   - allowed, refused, allowed: a running adopted job whose command leaves allowedCommands
 *     leaves the cluster cleanly (instances/{id} and leader/failover/alive/{id} both go), and
 *     comes back when it is allowed again;
 *   - labels changed by a reload (SIGHUP): s2 adopts etl's jobs and lets web's go;
 *   - a session expiry (s0 stopped past its timeout): s0 registers its adopted jobs again, and
 *     still follows their labels;
 *   - `ejobctl remove JOB --force` and `apply --prune --force` stop them everywhere;
 *   - a mixed cluster: an ElasticJob 3.0.4 instance of an adopted job joins the supervisors that
 *     adopted it, gets an item of one assignment and runs it; each item runs once per fire. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "t/lib/tej.h"
#include "t/lib/tjson.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;
static char *out, *err;
static char rec[600], dir[600];

#define ctl(...) tzkup_ctl(&u, &out, &err, __VA_ARGS__)

/* the children of job's rel ("instances", "leader/failover/alive") are exactly ids[0..n), within ms */
static int kids_are(const char *job, const char *rel, const char *const *ids, int n, unsigned ms)
{
	uint64_t end = tlib_now_ms() + ms;
	do {
		struct String_vector v = { 0 };
		int rc = tzk_children(u.zh, tzkup_path(&u, job, "%s", rel), &v), good = 0;
		if (rc == ZOK && v.count == n) {
			good = 1;
			for (int k = 0; k < n; k++) {
				int seen = 0;
				for (int i = 0; i < v.count; i++) seen |= !strcmp(v.data[i], ids[k]);
				good &= seen;
			}
		} else if (n == 0 && rc == ZNONODE) {
			good = 1;
		}
		deallocate_String_vector(&v);
		if (good) return 1;
		usleep(50000);
	} while (tlib_now_ms() < end);
	return 0;
}

static int insts(const char *job, const char *const *ids, int n, unsigned ms)
{
	return kids_are(job, "instances", ids, n, ms);
}

static char *file(const char *name, const char *text)
{
	static char path[8][600];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 600, "%s/%s", tlib_tmpdir(), name);
	tlib_write_file(p, text, strlen(text));
	return p;
}

/* a jobs file: each job "NAME LABEL CRON ITEMS COMMAND" ("-" cron: one-off) */
static const char *jobs_file(const char *name, const char *const *jobs, int n)
{
	static char y[8192];
	size_t o = (size_t)snprintf(y, sizeof y, "jobs:\n");
	for (int i = 0; i < n; i++) {
		char job[64], label[64], cron[64];
		int items, used = 0;
		sscanf(jobs[i], "%63s %63s %63s %d %n", job, label, cron, &items, &used);
		for (char *p = cron; *p; p++)
			if (*p == '_') *p = ' ';
		o += (size_t)snprintf(y + o, sizeof y - o, "  %s:\n    type: script\n    label: %s\n%s%s%s"
		                      "    shardingTotalCount: %d\n    props: {script.command.line: \"%s\"}\n",
		                      job, label, strcmp(cron, "-") ? "    cron: \"" : "", strcmp(cron, "-") ? cron : "",
		                      strcmp(cron, "-") ? "\"\n" : "", items, jobs[i] + used);
	}
	return file(name, y);
}

static int apply(const char *path, const char *extra)
{
	int rc = extra ? ctl("apply", "-f", path, extra, NULL) : ctl("apply", "-f", path, NULL);
	if (rc) diag("apply: %d: %s%s", rc, out, err);
	return rc;
}

static int lines_of(const char *path, const char *needle)
{
	return tsup_count_lines(path, needle);
}

/* jobs --json's health of job, within ms */
static int health_is(const char *job, const char *want, unsigned ms)
{
	char key[100];
	snprintf(key, sizeof key, "jobs.name=%s.health", job);
	uint64_t end = tlib_now_ms() + ms;
	do {
		if (ctl("jobs", "--json", NULL) == 0) {
			struct tjson *j = tjson_doc(out);
			if (j && !strcmp(tjson_text(j, key), want)) return 1;
		}
		usleep(300000);
	} while (tlib_now_ms() < end);
	return 0;
}

int main(void)
{
	tlib_init(240);
	tzkup_start(&u, 200, "t105", 3000);
	snprintf(dir, sizeof dir, "%s", tlib_tmpdir());
	snprintf(rec, sizeof rec, "%s", tsup_rec_script());
	char pbody[2000], fail[600], psh[600];
	snprintf(pbody, sizeof pbody, "#!/bin/sh\necho \"$EJOB_JOB_PARAMETER $EJOB_TASK_ID\" >> %s/runs-tj\n", dir);
	tlib_script(psh, sizeof psh, "param.sh", pbody);
	tlib_script(fail, sizeof fail, "fail.sh", "#!/bin/sh\nexit 1\n");
	char r_aj[700], r_dup[700], r_rj[700], r_tj[700], r_file[700];
	snprintf(r_aj, sizeof r_aj, "%s/runs-aj", dir);
	snprintf(r_dup, sizeof r_dup, "%s/runs-dup", dir);
	snprintf(r_rj, sizeof r_rj, "%s/runs-rj", dir);
	snprintf(r_tj, sizeof r_tj, "%s/runs-tj", dir);
	snprintf(r_file, sizeof r_file, "%s/runs-file", dir);

	/* s0 has dup in its file; s0 and s1 adopt etl, s2 web; all allow the test's scripts */
	char sup[3][1000], s0jobs[2000];
	snprintf(sup[0], sizeof sup[0], "workers: 2, labels: [etl], allowedCommands: [\"%s/*\"]", dir);
	snprintf(sup[1], sizeof sup[1], "workers: 2, labels: [etl, other], allowedCommands: [\"%s/*\"]", dir);
	snprintf(sup[2], sizeof sup[2], "workers: 2, labels: [web], allowedCommands: [\"%s/*\"]", dir);
	snprintf(s0jobs, sizeof s0jobs, "  dup:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 1\n"
	         "    props: {script.command.line: \"%s %s\"}\n", rec, r_file);
	const char *none = "  own:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n"
	                   "    props: {script.command.line: /bin/true}\n";
	struct tsup s[3];
	tzkup_config(&u, &s[0], "s0", sup[0], s0jobs);
	tzkup_config(&u, &s[1], "s1", sup[1], none);
	tzkup_config(&u, &s[2], "s2", sup[2], none);
	tzkup_run(&u, &s[0], "127.0.0.1");
	tzkup_run(&u, &s[1], "127.0.0.2");
	tzkup_run(&u, &s[2], "127.0.0.3");
	const char *s01[2] = { s[0].id, s[1].id }, *s0[1] = { s[0].id }, *s1[1] = { s[1].id }, *s2[1] = { s[2].id };
	const char *s02[2] = { s[0].id, s[2].id }, *s012[3] = { s[0].id, s[1].id, s[2].id };
	ok(insts("dup", s0, 1, 15000), "s0 registers dup, the job of its file");
	ok(tzkup_wait_registered(&u, "own", s[2].id, 0, 15000), "s1 and s2 are up");

	/* ---- apply: the labelled supervisors run it within a fire, nobody else ---- */
	char j_aj[2000], j_fj[2000], j_tj[2000], j_dup[2000];
	snprintf(j_aj, sizeof j_aj, "aj etl *_*_*_*_*_? 2 %s %s", rec, r_aj);
	snprintf(j_fj, sizeof j_fj, "fj etl *_*_*_*_*_? 1 %s", fail);
	snprintf(j_tj, sizeof j_tj, "tj web - 1 %s", psh);
	snprintf(j_dup, sizeof j_dup, "dup etl *_*_*_*_*_? 1 %s %s", rec, r_dup);
	const char *set1[] = { j_aj, j_fj, j_tj, j_dup };
	uint64_t t0 = tlib_now_ms();
	is_int(apply(jobs_file("jobs1.yaml", set1, 4), NULL), 0, "ejobctl apply -f jobs1.yaml: aj, fj (label etl), tj (web), dup");
	ok(insts("aj", s01, 2, 10000), "aj registers on s0 and s1 (label etl), not on s2");
	ok(tsup_wait_lines(r_aj, s[0].id, 1, 5000) && tsup_wait_lines(r_aj, s[1].id, 1, 3000),
	   "and runs on both within a fire (%llu ms after apply)", (unsigned long long)(tlib_now_ms() - t0));
	usleep(1500000);
	is_int(lines_of(r_aj, s[2].id), 0, "never on s2");
	ok(insts("dup", s01, 2, 10000), "dup: s0 (its file) and s1 (adopted)");

	/* ---- trigger --parameter on an adopted one-off job ---- */
	ok(insts("tj", s2, 1, 10000), "tj (one-off, label web) registers on s2");
	is_int(ctl("trigger", "tj", "--parameter", "P-105", NULL), 0, "ejobctl trigger tj --parameter P-105");
	ok(tsup_wait_lines(r_tj, "P-105", 1, 5000), "its script gets EJOB_JOB_PARAMETER=P-105");
	ok(lines_of(r_tj, s[2].id) == lines_of(r_tj, ""), "on s2 only");

	/* ---- a failing adopted item, seen from another process ---- */
	ok(health_is("fj", "FAILING", 15000), "fj (exits 1): FAILING in `ejobctl jobs --json`");
	if (ctl("status", "fj", "--json", NULL) == 0) {
		is_str(tjson_text(tjson_doc(out), "items.0.last.outcome"), "failed", "  its item's last outcome: failed");
	} else {
		fail("ejobctl status fj --json: %s", err);
	}

	/* ---- its label changed by apply: it moves; a file's job stays the file's ---- */
	memcpy(j_aj + 3, "web", 3);
	memcpy(j_dup + 4, "web", 3);
	const char *set2[] = { j_aj, j_fj, j_tj, j_dup };
	is_int(apply(jobs_file("jobs2.yaml", set2, 4), NULL), 0, "apply again: aj and dup with label web");
	ok(insts("aj", s2, 1, 10000), "aj leaves s0 and s1, registers on s2");
	ok(tsup_wait_lines(r_aj, s[2].id, 1, 5000), "and runs there");
	usleep(1500000);
	int a0 = lines_of(r_aj, s[0].id), a1 = lines_of(r_aj, s[1].id);
	usleep(2000000);
	ok(lines_of(r_aj, s[0].id) == a0 && lines_of(r_aj, s[1].id) == a1, "no run on s0 or s1 any more");
	ok(insts("dup", s02, 2, 10000), "dup: s1 lets it go, s2 adopts it, s0 keeps it (its file's)");

	/* ---- allowed, refused, allowed: a running job leaves cleanly and comes back ---- */
	char j_rj[2000], j_bad[2000];
	snprintf(j_rj, sizeof j_rj, "rj etl *_*_*_*_*_? 3 %s %s 0.8", rec, r_rj);   /* items of 0.8 s */
	snprintf(j_bad, sizeof j_bad, "rj etl *_*_*_*_*_? 3 /bin/sleep 0");
	const char *set3[] = { j_rj }, *set4[] = { j_bad };
	is_int(apply(jobs_file("rj1.yaml", set3, 1), NULL), 0, "rj applied (label etl, inside allowedCommands)");
	ok(insts("rj", s01, 2, 10000) && kids_are("rj", "leader/failover/alive", s01, 2, 3000),
	   "rj registers on s0 and s1 (instances and alive nodes)");
	ok(tsup_wait_lines(r_rj, s[0].id, 2, 5000) && tsup_wait_lines(r_rj, s[1].id, 2, 5000), "and runs on both");
	is_int(apply(jobs_file("rj2.yaml", set4, 1), NULL), 0, "rj applied with /bin/sleep: outside allowedCommands");
	ok(insts("rj", NULL, 0, 5000), "rj leaves s0 and s1: no instance node");
	ok(kids_are("rj", "leader/failover/alive", NULL, 0, 5000), "nor alive node, once its running fire has ended");
	usleep(1500000);
	int rn = lines_of(r_rj, "");
	usleep(1500000);
	is_int(lines_of(r_rj, ""), rn, "no run of it anywhere");
	is_int(apply(jobs_file("rj3.yaml", set3, 1), NULL), 0, "rj applied inside allowedCommands again");
	ok(insts("rj", s01, 2, 10000) && kids_are("rj", "leader/failover/alive", s01, 2, 3000),
	   "it registers on s0 and s1 again (instances and alive nodes)");
	ok(tsup_wait_lines(r_rj, s[0].id, lines_of(r_rj, s[0].id) + 1, 5000) &&
	   tsup_wait_lines(r_rj, s[1].id, lines_of(r_rj, s[1].id) + 1, 5000), "and runs on both again");

	/* ---- labels changed by a reload ---- */
	char s2sup[1000];
	snprintf(s2sup, sizeof s2sup, "workers: 2, labels: [etl], allowedCommands: [\"%s/*\"]", dir);
	tzkup_reconfig(&u, &s[2], s2sup, none);
	kill(s[2].pid, SIGHUP);
	ok(insts("rj", s012, 3, 10000), "s2 reloaded with labels [etl]: it adopts rj");
	ok(insts("aj", NULL, 0, 10000), "and lets aj (web) go: aj runs nowhere");
	ok(insts("dup", s0, 1, 10000), "dup (web) stays on s0 only, its file's");
	/* s0's file without dup: a job the file no longer has is looked at as any job of the namespace */
	tzkup_reconfig(&u, &s[0], sup[0], none);
	kill(s[0].pid, SIGHUP);
	ok(insts("dup", NULL, 0, 10000), "s0 reloaded without dup in its file: dup (web) leaves it too");
	memcpy(j_dup + 4, "etl", 3);
	const char *set2b[] = { j_aj, j_fj, j_tj, j_dup };
	is_int(apply(jobs_file("jobs2b.yaml", set2b, 4), NULL), 0, "dup applied with label etl again");
	ok(insts("dup", s012, 3, 10000), "s0 adopts it now, as s1 and s2 do");

	/* ---- a session expiry ---- */
	int64_t old = tzkup_session(&u, "rj", s[0].id);
	kill(s[0].pid, SIGSTOP);
	usleep(4500000);
	kill(s[0].pid, SIGCONT);
	ok(tzkup_wait_registered(&u, "rj", s[0].id, old, 15000), "s0 stopped past its session: rj registered again, new session");
	ok(kids_are("rj", "leader/failover/alive", s012, 3, 5000), "  its alive node too");
	ok(tsup_wait_lines(r_rj, s[0].id, lines_of(r_rj, s[0].id) + 1, 8000), "  and runs there again");
	char j_rj2[2000];
	snprintf(j_rj2, sizeof j_rj2, "rj other *_*_*_*_*_? 3 %s %s 0.8", rec, r_rj);
	const char *set5[] = { j_rj2 };
	is_int(apply(jobs_file("rj4.yaml", set5, 1), NULL), 0, "rj applied with label other");
	ok(insts("rj", s1, 1, 10000), "s0 (new session) and s2 let it go; s1 (labels etl, other) keeps it");

	/* ---- remove, prune ---- */
	int rc = ctl("remove", "rj", "--force", NULL);
	ok(rc == 0, "ejobctl remove rj --force (%d)", rc);
	if (rc) diag("%s%s", out, err);
	usleep(1500000);
	rn = lines_of(r_rj, "");
	usleep(2000000);
	is_int(lines_of(r_rj, ""), rn, "rj runs nowhere any more");
	ok(tzkup_missing(&u, "/t105/rj"), "and its nodes are gone (nobody wrote them again)");
	/* without fj, with another job of label etl (prune removes the jobs of the file's labels) */
	char j_ej[2000];
	snprintf(j_ej, sizeof j_ej, "ej etl - 1 %s", fail);
	const char *set6[] = { j_aj, j_tj, j_dup, j_ej };
	/* its instances are online (adopted): a removal while they are needs --force, as remove's */
	is_int(ctl("apply", "-f", jobs_file("jobs3.yaml", set6, 4), "--prune", "--force", NULL), 0,
	       "apply --prune --force without fj");
	ok(strstr(out, "fj") && strstr(out, "removed"), "  fj removed");
	if (!strstr(out, "removed")) diag("%s%s", out, err);
	ok(insts("fj", NULL, 0, 10000) && tzkup_missing(&u, "/t105/fj"), "fj registers nowhere, its nodes gone");

	/* ---- a mixed cluster: ElasticJob 3.0.4 runs the same job, an ordinary job to it ---- */
	char mbody[800], msh[600], r_mx[700], j_mx[2000];
	snprintf(r_mx, sizeof r_mx, "%s/runs-mx", dir);
	snprintf(mbody, sizeof mbody, "#!/bin/sh\necho \"$(date +%%s%%N) $*\" >> %s\n", r_mx);
	tlib_script(msh, sizeof msh, "ctx.sh", mbody);
	snprintf(j_mx, sizeof j_mx, "mx etl 0/2_*_*_*_*_? 4 %s", msh);
	const char *set7[] = { j_mx };
	is_int(apply(jobs_file("mx.yaml", set7, 1), NULL), 0, "mx applied (label etl, 4 items, every 2 s)");
	ok(insts("mx", s012, 3, 10000), "s0, s1, s2 (all etl now) adopt it");
	struct tej e;
	const char *const ej_opt[] = { "ip=127.0.0.5", NULL };
	if (tej_start(&e, "e", u.connect, "t105", "mx", "0/2 * * * * ?", 4, 0, msh, 3000, NULL, ej_opt) < 0)
		BAIL_OUT("cannot start ElasticJob 3.0.4 (see above)");
	const char *four[4] = { s[0].id, s[1].id, s[2].id, e.id };
	ok(insts("mx", four, 4, 15000), "an ElasticJob 3.0.4 instance of mx joins them");
	int each1 = 0;
	uint64_t end = tlib_now_ms() + 15000;
	while (!each1 && tlib_now_ms() < end) {
		each1 = 1;
		for (int k = 0; k < 4; k++) each1 &= tzkup_owned(&u, "mx", 4, four[k]) == 1;
		each1 &= tzkup_missing(&u, tzkup_path(&u, "mx", "leader/sharding/necessary"));   /* none pending */
		if (!each1) usleep(100000);
	}
	ok(each1, "one assignment: an item each, ejob's and ElasticJob's instances alike");
	char *owner[4];
	for (int i = 0; i < 4; i++) {
		char *d = NULL;
		tzk_get(u.zh, tzkup_path(&u, "mx", "sharding/%d/instance", i), &d, NULL);
		owner[i] = d ? d : strdup("");
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	long long from = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec + 500000000LL;
	usleep(6500000);
	int cnt[4] = { 0 }, wrong = 0, by_ej = 0;
	char *text = tsup_slurp(r_mx);
	for (char *l = text ? strtok(text, "\n") : NULL; l; l = strtok(NULL, "\n")) {
		long long ns = atoll(l);
		const char *task = strstr(l, "\"taskId\":\""), *item = strstr(l, "\"shardingItem\":");
		const char *ready = task ? strstr(task, "@-@READY@-@") : NULL;
		if (ns < from || !item || !ready) continue;
		int it = atoi(item + 15);
		ready += 11;
		if (it < 0 || it > 3) continue;
		cnt[it]++;
		if (strncmp(ready, owner[it], strlen(owner[it])) || ready[strlen(owner[it])] != '"') wrong++;
		if (!strncmp(ready, e.id, strlen(e.id))) by_ej++;
	}
	free(text);
	int fair = 1;
	for (int i = 0; i < 4; i++) fair &= cnt[i] >= 2 && cnt[i] <= 4;
	ok(fair && !wrong, "every item runs once per fire, on its owner only (runs %d %d %d %d, %d elsewhere)", cnt[0],
	   cnt[1], cnt[2], cnt[3], wrong);
	ok(by_ej > 0, "ElasticJob runs its item of the adopted job (%d runs)", by_ej);
	for (int i = 0; i < 4; i++) free(owner[i]);
	tej_stop(&e, 15000);

	for (int i = 0; i < 3; i++) tsup_stop(&s[i], SIGTERM, 15000);
	tzkup_end(&u);
	return done_testing();
}
