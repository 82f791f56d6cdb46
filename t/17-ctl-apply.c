/* t/17-ctl-apply.c: ejobctl apply -f FILE against a real ZooKeeper and a real supervisor:
 *   - a new namespace: apply creates it, each job's root node (its type) and config node (the
 *     form config set writes: jobName, label, the file's keys); again: every job "unchanged", no
 *     node written (versions stay);
 *   - --dry-run writes nothing (the namespace's dump and the node's version are the same after)
 *     and says update with the changed keys and their old and new values; apply then updates
 *     (version + 1);
 *   - a file that does not pass the supervisor's check (file:line:column messages), or a job
 *     without a label: exit 2, nothing written;
 *   - a change made between apply's read and its write: that job fails (exit 1, "changed
 *     meanwhile"), the change stays, the other jobs are done;
 *   - --prune removes the jobs of the file's labels that it does not have, and no other label's;
 *     --dry-run --prune says "remove" and removes nothing;
 *   - a supervisor whose file has the job with overwrite: false runs it as apply made it (the
 *     node wins), and runs the next apply's change without a restart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/lib/tzk.h"
#include "t/lib/tzkup.h"
#include "t/tap.h"

static struct tzkup u;
static char *out, *err;

#define ctl(...) tzkup_ctl(&u, &out, &err, __VA_ARGS__)

static char *file(const char *name, const char *text)
{
	static char path[8][600];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 600, "%s/%s", tlib_tmpdir(), name);
	tlib_write_file(p, text, strlen(text));
	return p;
}

static char *dump(void)
{
	int rc;
	char *d = tzk_dump(u.zh, "/t17", &rc);
	return d ? d : strdup("(none)");
}

static int version(const char *job)
{
	struct Stat st;
	return tzk_exists(u.zh, tzkup_path(&u, job, "config"), &st) == ZOK ? st.version : -1;
}

int main(void)
{
	tlib_init(60);
	tzkup_start(&u, 200, "t17", 4000);
	const char *sh = tsup_rec_script();
	char r_old[600], r_new[600], r_file[600], jobs[4096];
	snprintf(r_old, sizeof r_old, "%s/runs-old", tlib_tmpdir());
	snprintf(r_new, sizeof r_new, "%s/runs-new", tlib_tmpdir());
	snprintf(r_file, sizeof r_file, "%s/runs-file", tlib_tmpdir());

	/* ---- create ---- */
	snprintf(jobs, sizeof jobs,
	         "jobs:\n"
	         "  a:\n    type: script\n    cron: \"0 0 0 * * ?\"\n    shardingTotalCount: 2\n    label: etl\n"
	         "    props: {script.command.line: /bin/true}\n"
	         "  b:\n    type: script\n    cron: \"0 0 1 * * ?\"\n    shardingTotalCount: 1\n    label: etl\n"
	         "    props: {script.command.line: /bin/true}\n"
	         "  r:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 2\n    label: etl\n"
	         "    props: {script.command.line: \"%s %s\"}\n", sh, r_old);
	const char *f1 = file("jobs1.yaml", jobs);
	ok(tzkup_missing(&u, "/t17"), "no namespace /t17 yet");
	is_int(ctl("apply", "-f", f1, "--json", NULL), 0, "apply: exit 0");
	ok(strstr(out, "{\"job\":\"a\",\"action\":\"created\",\"keys\":[],\"version\":0}") &&
	   strstr(out, "{\"job\":\"b\",\"action\":\"created\"") && strstr(out, "{\"job\":\"r\",\"action\":\"created\""),
	   "  --json: each job created, version 0");
	is_str(tzkup_data(&u, "/t17/a"), "SCRIPT", "  a's root node holds its type, as a supervisor writes it");
	const char *cfg = tzkup_data(&u, "/t17/a/config");
	ok(strstr(cfg, "jobName: a\n") && strstr(cfg, "label: etl\n") && strstr(cfg, "shardingTotalCount: 2\n") &&
	   strstr(cfg, "cron: 0 0 0 * * ?\n") && strstr(cfg, "  ejob.type: script\n"),
	   "  a's config node: jobName, label, the file's keys, ejob.type");
	is_int(ctl("jobs", "--json", NULL), 0, "  ejobctl jobs sees them");
	ok(strstr(out, "\"name\":\"a\"") && strstr(out, "\"name\":\"b\"") && strstr(out, "\"name\":\"r\""), "  a, b and r");

	is_int(ctl("apply", "-f", f1, NULL), 0, "apply again: exit 0");
	ok(strstr(out, "\na    unchanged") && strstr(out, "\nb    unchanged") && strstr(out, "\nr    unchanged"),
	   "  every job unchanged (table)");
	ok(version("a") == 0 && version("b") == 0 && version("r") == 0, "  no node written (versions 0)");

	/* ---- dry run, update ---- */
	char *j2 = strdup(jobs);
	char *p = strstr(j2, "shardingTotalCount: 2");
	p[20] = '3';                                        /* a: 2 -> 3 items */
	p = strstr(j2, "\"0 0 0 * * ?\"");
	p[5] = '5';                                         /* a: at 05:00 */
	const char *f2 = file("jobs2.yaml", j2);
	char *before = dump();
	is_int(ctl("apply", "-f", f2, "--dry-run", "--json", NULL), 0, "apply --dry-run --json: exit 0");
	ok(strstr(out, "{\"job\":\"a\",\"action\":\"update\",\"keys\":[\"cron\",\"shardingTotalCount\"]") &&
	   strstr(out, "{\"job\":\"b\",\"action\":\"unchanged\""), "  a: update, keys cron and shardingTotalCount; b unchanged");
	is_int(ctl("apply", "-f", f2, "--dry-run", NULL), 0, "apply --dry-run: exit 0");
	if (!ok(strstr(out, "    - cron: 0 0 0 * * ?\n    + cron: 0 0 5 * * ?\n") &&
	        strstr(out, "    - shardingTotalCount: 2\n    + shardingTotalCount: 3\n") && strstr(out, "nothing written"),
	        "  the old and new values of each changed key"))
		diag("%s", out);
	char *after = dump();
	is_str(after, before, "  nothing written: the namespace's dump is the same");
	ok(version("a") == 0, "  a's node still version 0");
	free(after);
	is_int(ctl("apply", "-f", f2, NULL), 0, "apply: exit 0");
	ok(strstr(out, "\na    updated    cron,shardingTotalCount") != NULL, "  a updated (cron, shardingTotalCount)");
	ok(version("a") == 1 && strstr(tzkup_data(&u, "/t17/a/config"), "shardingTotalCount: 3\n"), "  a's node: version 1, 3 items");

	/* ---- refused files: nothing written ---- */
	free(before);
	before = dump();
	const char *bad = file("bad.yaml", "jobs:\n  c:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 1\n"
	                                   "    label: etl\n    props: {script.command.line: /bin/true}\n"
	                                   "  d:\n    type: script\n    cron: \"0/5 * * * *\"\n    shardingTotalCount: 1\n"
	                                   "    label: etl\n    props: {script.command.line: /bin/true}\n");
	is_int(ctl("apply", "-f", bad, NULL), 2, "a bad cron: exit 2");
	ok(strstr(err, "bad.yaml:10:23: jobs.d.cron:") && strstr(err, "nothing written"), "  file:line:column: jobs.d.cron, nothing written");
	const char *nolabel = file("nolabel.yaml", "jobs:\n  c:\n    type: script\n    cron: \"* * * * * ?\"\n    shardingTotalCount: 1\n"
	                                           "    props: {script.command.line: /bin/true}\n");
	is_int(ctl("apply", "-f", nolabel, NULL), 2, "a job without a label: exit 2");
	ok(strstr(err, "nolabel.yaml:2: jobs.c: no label;") && strstr(err, "label: NAME"), "  names the job and the fix");
	after = dump();
	is_str(after, before, "  nothing written (dump)");
	free(after);

	/* ---- a change between the read and the write ---- */
	char *j3 = strdup(j2);
	p = strstr(j3, "\"0 0 1 * * ?\"");
	p[5] = '2';                                         /* b: at 02:00 */
	p = strstr(j3, "\"0 0 5 * * ?\"");
	p[5] = '6';                                         /* a: at 06:00 */
	const char *f3 = file("jobs3.yaml", j3);
	char other[4096], hook[8192];
	/* config set takes a whole configuration file: a regCenter (any) ahead of the jobs */
	snprintf(other, sizeof other, "regCenter: {serverLists: \"%s\", namespace: t17}\n%s", u.connect, j2);
	p = strstr(other, "\"0 0 5 * * ?\"");
	p[5] = '9';                                         /* a at 09:00, by someone else */
	const char *fo = file("other.yaml", other);
	char once[600];
	snprintf(once, sizeof once, "%s/hook-once", tlib_tmpdir());
	/* the first write only: someone sets a's node between apply's read and its write */
	snprintf(hook, sizeof hook, "[ -e %s ] || { touch %s; %s config set a %s --zk %s --namespace t17 >/dev/null; }", once,
	         once, BUILT("tools/ejobctl"), fo, u.connect);
	setenv("EJOBCTL_AFTER_READ", hook, 1);
	int rc = ctl("apply", "-f", f3, NULL);
	unsetenv("EJOBCTL_AFTER_READ");
	is_int(rc, 1, "a change made between the read and the write: exit 1");
	if (!ok(strstr(err, "job 'a': /t17/a/config changed meanwhile (version 1 when read, now 2): nothing written"),
	        "  says a's node changed meanwhile"))
		diag("%s", err);
	ok(strstr(out, "\na    conflict") && strstr(out, "\nb    updated"), "  a: conflict; b is updated all the same");
	ok(strstr(tzkup_data(&u, "/t17/a/config"), "cron: 0 0 9 * * ?\n") && version("a") == 2,
	   "  a's node is the other writer's (cron 09:00, version 2)");

	/* ---- prune ---- */
	const char *fx = file("x.yaml", "jobs:\n  x:\n    type: script\n    cron: \"0 0 3 * * ?\"\n    shardingTotalCount: 1\n"
	                                "    label: other\n    props: {script.command.line: /bin/true}\n");
	is_int(ctl("apply", "-f", fx, NULL), 0, "x, of label other, applied");
	/* the file without b */
	char *j4 = strdup(j3);
	char *bs = strstr(j4, "  b:\n"), *rs = strstr(j4, "  r:\n");
	memmove(bs, rs, strlen(rs) + 1);
	const char *f4 = file("jobs4.yaml", j4);
	before = dump();
	is_int(ctl("apply", "-f", f4, "--prune", "--dry-run", NULL), 0, "apply --prune --dry-run: exit 0");
	ok(strstr(out, "\nb    remove") && !strstr(out, "\nx "), "  b: remove; x (label other) not named");
	after = dump();
	is_str(after, before, "  nothing written (dump)");
	free(after);
	free(before);
	is_int(ctl("apply", "-f", f4, "--prune", "--json", NULL), 0, "apply --prune: exit 0");
	ok(strstr(out, "{\"job\":\"b\",\"action\":\"removed\"") != NULL, "  b removed");
	ok(tzkup_missing(&u, "/t17/b") && !tzkup_missing(&u, "/t17/x/config") && !tzkup_missing(&u, "/t17/a/config"),
	   "  /t17/b gone; x and a stay");

	/* ---- a supervisor runs the node as apply made it ---- */
	struct tsup s;
	char sj[2048];
	snprintf(sj, sizeof sj, "  r:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n"
	         "    overwrite: false\n    props: {script.command.line: \"%s %s\"}\n", sh, r_file);
	tzkup_config(&u, &s, "s", "workers: 2", sj);
	tzkup_run(&u, &s, "127.0.0.1");
	ok(tzkup_wait_registered(&u, "r", s.id, 0, 10000), "a supervisor with r in its file (overwrite: false) registers it");
	ok(tsup_wait_lines(r_old, "", 4, 8000), "  it runs r as apply made it: every second, 2 items, the node's command");
	ok(!tsup_slurp(r_file) || !*tsup_slurp(r_file), "  never its file's command");
	/* the next apply: r's command changes; the supervisor takes it without a restart */
	char *j5 = strdup(j4);
	p = strstr(j5, r_old);
	memcpy(p + strlen(p) - strlen("runs-old\"}\n"), "runs-new", 8);
	const char *f5 = file("jobs5.yaml", j5);
	is_int(ctl("apply", "-f", f5, NULL), 0, "apply changes r's command");
	ok(strstr(out, "\nr    updated    props") != NULL, "  r updated (props)");
	ok(tsup_wait_lines(r_new, "", 2, 8000), "  the supervisor runs the new command");
	tsup_stop(&s, SIGTERM, 5000);
	free(j2), free(j3), free(j4), free(j5);
	tzkup_end(&u);
	return done_testing();
}
