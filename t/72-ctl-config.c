/* t/72-ctl-config.c: ejobctl config get|set|edit and dump against a real ZooKeeper and a real
 * supervisor (issue 14):
 *   - config get prints the node's bytes;
 *   - config set with a new cron: the supervisor fires on it at once;
 *   - config set with a bad cron, zone, jobName, shardingTotalCount, garbage YAML, a key
 *     ElasticJob's bean does not have (crn:, with did you mean), a strategy ElasticJob does not
 *     have: refused naming the key and the problem, the node not written (its mzxid unchanged);
 *     unreadable FILE, unknown job, a stale --version; item parameters past the count written with
 *     a warning; ejob's old strategy name written as ElasticJob's, and written back by the
 *     supervisor when it finds it in the node (issue 24);
 *   - config edit whose editor itself runs config set meanwhile: the edit's write fails with the
 *     conflict, the other change stands, the edit is kept in the file named; an invalid edit is
 *     edited again on "y", given up on end of input (kept);
 *   - dump and dump --json: every node of the subtree, kind, owner, mtime, data, compared with
 *     what the test reads from ZooKeeper itself, binary data included. */
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
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

static struct tzkup u;
static char ctl[PATH_MAX];

struct res {
	int st;                     /* exit status, -1 if it did not exit */
	char *out, *err;
};

static void res_free(struct res *r)
{
	free(r->out);
	free(r->err);
	memset(r, 0, sizeof *r);
}

/* ejobctl WORDS... --zk ZK --namespace t72 (words NULL-terminated) */
static struct res run(const char *w0, ...)
{
	const char *argv[32];
	int n = 0;
	argv[n++] = ctl;
	va_list ap;
	va_start(ap, w0);
	for (const char *w = w0; w && n < 26; w = va_arg(ap, const char *)) argv[n++] = w;
	va_end(ap);
	argv[n++] = "--zk";
	argv[n++] = u.connect;
	argv[n++] = "--namespace";
	argv[n++] = "t72";
	argv[n] = NULL;
	struct res r = { -1, NULL, NULL };
	int s = tlib_run(argv, &r.out, &r.err);
	if (s >= 0 && WIFEXITED(s)) r.st = WEXITSTATUS(s);
	return r;
}

/* a shell command line (for stdin), its exit status and outputs */
static struct res sh(const char *cmd)
{
	const char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	struct res r = { -1, NULL, NULL };
	int s = tlib_run(argv, &r.out, &r.err);
	if (s >= 0 && WIFEXITED(s)) r.st = WEXITSTATUS(s);
	return r;
}

static int64_t mzxid(const char *path)
{
	struct Stat st;
	return tzk_exists(u.zh, path, &st) == ZOK ? st.mzxid : -1;
}

/* the node's text with the line starting with `key:` replaced by `line` (added if absent) */
static char *with_line(const char *data, const char *key, const char *line)
{
	size_t cap = strlen(data) + strlen(line) + 16, n = 0, kl = strlen(key);
	char *o = malloc(cap);
	int found = 0;
	for (const char *p = data; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (!strncmp(p, key, kl) && p[kl] == ':') {
			n += (size_t)snprintf(o + n, cap - n, "%s\n", line);
			found = 1;
		} else {
			n += (size_t)snprintf(o + n, cap - n, "%.*s\n", (int)len, p);
		}
		p += len + (e ? 1 : 0);
	}
	if (!found) snprintf(o + n, cap - n, "%s\n", line);
	return o;
}

static const char *file_of(const char *name, const char *text)
{
	static char path[8][600];
	static int k;
	char *p = path[k++ % 8];
	snprintf(p, 600, "%s/%s", tlib_tmpdir(), name);
	if (tlib_write_file(p, text, strlen(text))) BAIL_OUT("cannot write %s", p);
	return p;
}

/* a set of FILE refused: exit 2, the node's mzxid unchanged, stderr naming each of the needles */
static void refused(const char *what, const char *file, const char *n1, const char *n2)
{
	int64_t before = mzxid("/t72/cfg/config");
	struct res r = run("config", "set", "cfg", file, NULL);
	is_int(r.st, 2, "config set with %s: exit 2", what);
	ok(strstr(r.err, n1) && (!n2 || strstr(r.err, n2)), "  the message names '%s'%s%s", n1, n2 ? " and " : "",
	   n2 ? n2 : "");
	if (!strstr(r.err, n1) || (n2 && !strstr(r.err, n2))) diag("stderr: %s", r.err);
	ok(strstr(r.err, "nothing written") != NULL, "  and says nothing was written");
	is_int((int)(mzxid("/t72/cfg/config") - before), 0, "  the node was not written (mzxid unchanged)");
	res_free(&r);
}

/* ---- dump, checked against the test's own reads ---- */

static void json_esc(char *o, const unsigned char *s, size_t n)
{
	*o++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned c = s[i];
		if (c == '"' || c == '\\') *o++ = '\\', *o++ = (char)c;
		else if (c == '\n') *o++ = '\\', *o++ = 'n';
		else if (c == '\t') *o++ = '\\', *o++ = 't';
		else if (c == '\r') *o++ = '\\', *o++ = 'r';
		else if (c < 0x20 || c == 0x7f) o += sprintf(o, "\\u%04x", c);
		else *o++ = (char)c;    /* the test's texts are UTF-8 */
	}
	*o++ = '"';
	*o = 0;
}

struct walked {
	char path[300];
	int eph;
	struct Stat st;
	char *data;                 /* tzk_get's; NULL for null data */
};

static int walk(const char *path, struct walked *w, int n, int max)
{
	if (n >= max) return n;
	struct walked *x = &w[n];
	snprintf(x->path, sizeof x->path, "%s", path);
	x->data = NULL;
	if (tzk_get(u.zh, path, &x->data, &x->st) != ZOK) return n;
	x->eph = x->st.ephemeralOwner != 0;
	n++;
	struct String_vector v;
	if (tzk_children(u.zh, path, &v) != ZOK) return n;
	for (int i = 0; i < v.count; i++) {
		char kp[300];
		snprintf(kp, sizeof kp, "%s/%s", path, v.data[i]);
		n = walk(kp, w, n, max);
	}
	deallocate_String_vector(&v);
	return n;
}

int main(void)
{
	tlib_init(60);
	uint64_t t_start = tlib_now_ms();
	if (!realpath(BUILT("tools/ejobctl"), ctl)) BAIL_OUT(BUILT("tools/ejobctl") ": not built (run make)");
	tzkup_start(&u, 200, "t72", 2000);
	char out[600], jobs[2048];
	snprintf(out, sizeof out, "%s/runs", tlib_tmpdir());
	snprintf(jobs, sizeof jobs,
	         "  cfg:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 2\n"
	         "    props: {script.command.line: \"%s %s\"}\n"
	         "  quiet:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 1 ? 2099\"\n"
	         "    shardingTotalCount: 2\n"
	         "    shardingItemParameters: \"0=a,1=b\"\n"
	         "    props: {script.command.line: \"/bin/true\"}\n",
	         tsup_rec_script(), out);
	static struct tsup a;
	tzkup_config(&u, &a, "a", "workers: 2", jobs);
	tzkup_run(&u, &a, "127.0.0.1");
	ok(tzkup_wait_leader(&u, "cfg", a.id, 10000) && tzkup_wait_leader(&u, "quiet", a.id, 10000),
	   "the supervisor registers and leads both jobs");
	setenv("TMPDIR", tlib_tmpdir(), 1);

	/* ---- get ---- */
	char *node = NULL;
	struct Stat st;
	tzk_get(u.zh, "/t72/cfg/config", &node, &st);
	struct res r = run("config", "get", "cfg", NULL);
	is_int(r.st, 0, "config get: exit 0");
	ok(node && r.out && !strcmp(r.out, node) && strlen(r.out) == (size_t)st.dataLength,
	   "  prints the node's bytes exactly (%d bytes)", st.dataLength);
	res_free(&r);
	r = run("config", "get", "cfgg", NULL);
	is_int(r.st, 2, "config get of an unknown job: exit 2");
	ok(strstr(r.err, "no job 'cfgg'") && strstr(r.err, "did you mean 'cfg'"), "  naming it, with did you mean");
	res_free(&r);
	r = run("dump", "nosuch", NULL);
	is_int(r.st, 2, "dump of an unknown job: exit 2");
	ok(strstr(r.err, "no job 'nosuch'") != NULL, "  naming it");
	res_free(&r);

	/* ---- set: a new cron reschedules at once ---- */
	char *every = with_line(node, "cron", "cron: '* * * * * ?'");
	const char *f_every = file_of("every.yaml", every);
	r = run("config", "set", "cfg", f_every, NULL);
	is_int(r.st, 0, "config set with cron every second: exit 0");
	res_free(&r);
	char *now = NULL;
	tzk_get(u.zh, "/t72/cfg/config", &now, &st);
	ok(now && !strcmp(now, every), "  the node holds the file's bytes");
	free(now);
	ok(tsup_wait_lines(out, " ", 2, 4000), "  the supervisor fires on the new cron at once (both items ran)");
	/* and back: it stops firing (keeps the rest of the test quiet) */
	r = run("config", "set", "cfg", file_of("back.yaml", node), NULL);
	is_int(r.st, 0, "config set back to the old node: exit 0");
	res_free(&r);
	tzk_get(u.zh, "/t72/cfg/config", &now, &st);
	ok(now && !strcmp(now, node), "  the node is the old one again");
	free(now);
	r = run("config", "set", "cfg", file_of("same.yaml", node), NULL);
	int64_t mz = mzxid("/t72/cfg/config");
	ok(r.st == 0 && strstr(r.out, "no change"), "config set with what is there: exit 0, no change");
	is_int((int)(mzxid("/t72/cfg/config") - mz), 0, "  nothing written");
	res_free(&r);

	/* ---- set: refused ---- */
	char *b;
	refused("a bad cron", file_of("badcron.yaml", b = with_line(node, "cron", "cron: 0 0 25 * * ?")), "cron", "hours");
	free(b);
	refused("a bad zone", file_of("badzone.yaml", b = with_line(node, "timeZone", "timeZone: Mars/Olympus_Mons")),
	        "timeZone", "Mars/Olympus_Mons");
	free(b);
	refused("another jobName", file_of("badname.yaml", b = with_line(node, "jobName", "jobName: other")),
	        "jobName is 'other', not 'cfg'", NULL);
	free(b);
	refused("shardingTotalCount 0", file_of("bad0.yaml", b = with_line(node, "shardingTotalCount", "shardingTotalCount: 0")),
	        "shardingTotalCount", "1-10000");
	free(b);
	refused("shardingTotalCount 10001",
	        file_of("bad10001.yaml", b = with_line(node, "shardingTotalCount", "shardingTotalCount: 10001")),
	        "shardingTotalCount", "10001");
	free(b);
	refused("garbage YAML", file_of("garbage.yaml", "cron: [0 * *\n  jobName: : :\n\x01\xff"), "garbage.yaml:", NULL);
	/* issue 24: a typo must not turn the job into a one-off job that never fires (SnakeYAML,
	 * ElasticJob's, refuses a key its bean does not have, and so does ejobctl) */
	refused("an unknown key (crn:)", file_of("crn.yaml", b = with_line(node, "cron", "crn: 0 0 0 1 1 ? 2099")), "crn: unknown key",
	        "did you mean 'cron'?");
	free(b);
	refused("ejob's type as a top-level key", file_of("type.yaml", b = with_line(node, "type", "type: script")),
	        "type: ejob's own key", "props");
	free(b);
	refused("a strategy ElasticJob does not have (it fails every resharding)",
	        file_of("rr.yaml", b = with_line(node, "jobShardingStrategyType", "jobShardingStrategyType: ROUNDROBIN")),
	        "jobShardingStrategyType", "did you mean 'ROUND_ROBIN'?");
	free(b);
	{
		char pipe[3 * PATH_MAX + 1024];
		int64_t before = mzxid("/t72/cfg/config");
		snprintf(pipe, sizeof pipe, "'%s' config get cfg --zk %s --namespace t72 | sed 's/^cron:/crn:/' | "
		         "'%s' config set cfg - --zk %s --namespace t72", ctl, u.connect, ctl, u.connect);
		r = sh(pipe);
		ok(r.st == 2 && strstr(r.err, "(stdin):1:1: crn: unknown key; did you mean 'cron'?"),
		   "config get | sed s/^cron:/crn:/ | config set -: exit 2, did you mean 'cron'");
		is_int((int)(mzxid("/t72/cfg/config") - before), 0, "  the node was not written");
		res_free(&r);
	}
	/* what ElasticJob takes with a warning is written, with the warning: ElasticJob-UI's edit of
	 * shardingTotalCount that keeps parameters of items that no longer exist */
	r = run("config", "set", "quiet", file_of("q1.yaml", b = with_line(node, "jobName", "jobName: quiet")), NULL);
	free(b);
	res_free(&r);
	char *qnode = NULL;
	tzk_get(u.zh, "/t72/quiet/config", &qnode, &st);
	char *q2 = with_line(qnode, "shardingItemParameters", "shardingItemParameters: 0=a,1=b,2=c,3=d");
	r = run("config", "set", "quiet", file_of("q2.yaml", q2), NULL);
	ok(r.st == 0 && strstr(r.err, "warning: shardingItemParameters: item 2 is out of range"),
	   "item parameters past shardingTotalCount: written (exit 0), with a warning for each");
	res_free(&r);
	free(q2);
	/* ejob's old strategy name: written as ElasticJob's */
	q2 = with_line(qnode, "jobShardingStrategyType", "jobShardingStrategyType: ROUND_ROBIN_BY_NAME");
	r = run("config", "set", "quiet", file_of("q3.yaml", q2), NULL);
	char *qnow = NULL;
	tzk_get(u.zh, "/t72/quiet/config", &qnow, &st);
	ok(r.st == 0 && qnow && strstr(qnow, "\njobShardingStrategyType: ROUND_ROBIN\n") && !strstr(qnow, "_BY_NAME"),
	   "ROUND_ROBIN_BY_NAME (ejob's old name): written as ElasticJob's ROUND_ROBIN");
	res_free(&r);
	free(qnow);
	/* and a node an older ejob (or a person) wrote with it: the supervisor writes it back */
	is_int(zoo_set(u.zh, "/t72/quiet/config", q2, (int)strlen(q2), -1), ZOK, "the old name written into the node directly");
	uint64_t until = tlib_now_ms() + 5000;
	int fixed = 0;
	while (!fixed && tlib_now_ms() < until) {
		qnow = NULL;
		tzk_get(u.zh, "/t72/quiet/config", &qnow, &st);
		fixed = qnow && strstr(qnow, "\njobShardingStrategyType: ROUND_ROBIN\n") && !strstr(qnow, "_BY_NAME");
		free(qnow);
		if (!fixed) usleep(50000);
	}
	ok(fixed, "  the supervisor writes it back as ROUND_ROBIN (ElasticJob fails on the old name)");
	free(q2);
	free(qnode);
	char missing[600];
	snprintf(missing, sizeof missing, "%s/no-such-file.yaml", tlib_tmpdir());
	r = run("config", "set", "cfg", missing, NULL);
	ok(r.st == 2 && strstr(r.err, "no-such-file.yaml: cannot read: No such file"), "config set of an unreadable FILE: exit 2 (a configuration problem), named");
	res_free(&r);
	r = run("config", "set", "cfx", f_every, NULL);
	ok(r.st == 2 && strstr(r.err, "did you mean 'cfg'"), "config set of an unknown job: exit 2, did you mean");
	res_free(&r);
	mz = mzxid("/t72/cfg/config");
	r = run("config", "set", "cfg", f_every, "--version", "0", NULL);
	ok(r.st == 1 && strstr(r.err, "changed since you read it"), "config set --version of a stale version: exit 1");
	is_int((int)(mzxid("/t72/cfg/config") - mz), 0, "  nothing written");
	res_free(&r);

	/* ---- edit: a concurrent set wins, the edit is told and kept ---- */
	const char *theirs = file_of("theirs.yaml", b = with_line(node, "description", "description: theirs"));
	free(b);
	char ed[600], cmd[12288];
	snprintf(cmd, sizeof cmd,
	         "#!/bin/sh\n"
	         "# while 'editing', someone else writes the node\n"
	         "\"%s\" config set cfg \"%s\" --zk %s --namespace t72 >/dev/null 2>&1 || exit 9\n"
	         "sed -i 's/^description:.*/description: mine/' \"$1\"\n",
	         ctl, theirs, u.connect);
	tlib_script(ed, sizeof ed, "racing-editor.sh", cmd);
	setenv("EDITOR", ed, 1);
	r = run("config", "edit", "cfg", NULL);
	is_int(r.st, 1, "config edit while another config set writes the node: exit 1");
	ok(strstr(r.err, "changed meanwhile") && strstr(r.err, "nothing written"), "  says the node changed meanwhile");
	tzk_get(u.zh, "/t72/cfg/config", &now, &st);
	char *want = tsup_slurp(theirs);
	ok(now && want && !strcmp(now, want), "  the other change stands (the node is the other set's file)");
	free(now);
	free(want);
	const char *kept = r.err ? strstr(r.err, "kept in ") : NULL;
	char kp[600] = "";
	if (kept) sscanf(kept + 8, "%599[^:\n]", kp);
	char *mine = *kp ? tsup_slurp(kp) : NULL;
	ok(mine && strstr(mine, "description: mine"), "  the edit is kept in the file it names (%s)", kp);
	free(mine);
	res_free(&r);

	/* ---- edit: invalid, edited again, written ---- */
	char *cur = NULL;
	tzk_get(u.zh, "/t72/cfg/config", &cur, &st);
	snprintf(cmd, sizeof cmd,
	         "#!/bin/sh\n"
	         "n=$(cat \"$1.count\" 2>/dev/null || echo 0); n=$((n+1)); echo $n > \"$1.count\"\n"
	         "if [ $n = 1 ]; then sed -i 's/^cron:.*/cron: 0 61 * * * ?/' \"$1\"\n"
	         "else sed -i 's/^cron:.*/cron: 0 0 0 1 2 ? 2099/' \"$1\"; fi\n");
	tlib_script(ed, sizeof ed, "twice-editor.sh", cmd);
	setenv("EDITOR", ed, 1);
	snprintf(cmd, sizeof cmd, "echo y | \"%s\" config edit cfg --zk %s --namespace t72", ctl, u.connect);
	r = sh(cmd);
	is_int(r.st, 0, "config edit: a bad cron, 'y' to edit again, fixed: exit 0");
	ok(strstr(r.err, "minutes") && strstr(r.err, "Edit again?"), "  the bad cron was named and the user asked");
	tzk_get(u.zh, "/t72/cfg/config", &now, &st);
	ok(now && strstr(now, "cron: 0 0 0 1 2 ? 2099\n"), "  the second edit is written");
	free(now);
	res_free(&r);
	/* invalid, and no answer (end of input): given up, kept */
	setenv("EDITOR", "sed -i 's/^jobName:.*/jobName: nope/'", 1);
	mz = mzxid("/t72/cfg/config");
	r = run("config", "edit", "cfg", NULL);
	is_int(r.st, 2, "config edit with a bad jobName and no answer: exit 2 (EDITOR with arguments works)");
	ok(strstr(r.err, "jobName is 'nope', not 'cfg'") && strstr(r.err, "kept in"), "  named, and the edit is kept");
	is_int((int)(mzxid("/t72/cfg/config") - mz), 0, "  nothing written");
	res_free(&r);
	setenv("EDITOR", "true", 1);
	r = run("config", "edit", "cfg", NULL);
	ok(r.st == 0 && strstr(r.out, "no change"), "config edit without a change: exit 0, no change");
	is_int((int)(mzxid("/t72/cfg/config") - mz), 0, "  nothing written");
	res_free(&r);
	free(cur);

	/* ---- set from an ejob configuration file: its job, as the supervisor publishes it ---- */
	char ejf[2048];
	snprintf(ejf, sizeof ejf,
	         "regCenter: {serverLists: \"%s\", namespace: t72}\n"
	         "jobs:\n"
	         "  cfg:\n"
	         "    type: script\n"
	         "    cron: \"0 0 0 1 3 ? 2099\"\n"
	         "    shardingTotalCount: 3\n"
	         "    props: {script.command.line: \"/bin/true\"}\n",
	         u.connect);
	r = run("config", "set", "cfg", file_of("ejob.yaml", ejf), NULL);
	is_int(r.st, 0, "config set with an ejob configuration file: exit 0");
	res_free(&r);
	tzk_get(u.zh, "/t72/cfg/config", &now, &st);
	ok(now && strstr(now, "cron: 0 0 0 1 3 ? 2099\n") && strstr(now, "shardingTotalCount: 3\n") &&
	   strstr(now, "  ejob.type: script\n") && strstr(now, "jobName: cfg\n"),
	   "  the node is the file's job cfg in the node's form (jobName, props ejob.type)");
	free(now);
	int64_t mzq = mzxid("/t72/quiet/config");
	r = run("config", "set", "quiet", file_of("ejob.yaml", ejf), NULL);
	ok(r.st == 2 && strstr(r.err, "has no job 'quiet' (its jobs: cfg)"), "  one without the job: exit 2, its jobs named");
	is_int((int)(mzxid("/t72/quiet/config") - mzq), 0, "  nothing written");
	res_free(&r);

	/* ---- dump ---- */
	static const char bin[] = { 0, (char)0xff, (char)0xfe, ' ', 'a', '\n', '"', '\\', 0x01 };
	is_int(zoo_create(u.zh, "/t72/quiet/bin", bin, sizeof bin, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0), ZOK,
	       "a node with binary data under quiet");
	is_int(tzk_create(u.zh, "/t72/quiet/x/eph", "\xc3\xa9t\xc3\xa9\tok", ZOO_EPHEMERAL, NULL), ZOK,
	       "an ephemeral node of the test's session, UTF-8 data");
	/* settled: the supervisor's writes to quiet are over (its leader reshards as soon as the flag
	 * is up and still for 0.5 s: first the flag gone, then two reads alike) */
	ok(tzk_wait_exists(u.zh, "/t72/quiet/leader/sharding/necessary", 0, 15000), "quiet's leader has sharded it");
	char *s1 = tzk_dump(u.zh, "/t72/quiet", NULL), *s2 = NULL;
	for (int k = 0; k < 20; k++) {
		usleep(200000);
		s2 = tzk_dump(u.zh, "/t72/quiet", NULL);
		if (s1 && s2 && !strcmp(s1, s2)) break;
		free(s1);
		s1 = s2;
		s2 = NULL;
	}
	free(s1);
	free(s2);
	static struct walked w[256];
	int nw = walk("/t72/quiet", w, 0, 256);
	ok(nw >= 8, "the test reads %d nodes under /t72/quiet", nw);

	r = run("dump", "quiet", "--json", NULL);
	is_int(r.st, 0, "dump --json: exit 0");
	int found = 0, in_order = 1, npaths = 0;
	const char *last = r.out;
	for (const char *p = r.out; p && (p = strstr(p, "{\"path\":")); p++) npaths++;
	for (int i = 0; i < nw && r.out; i++) {
		const struct walked *x = &w[i];
		size_t len = (size_t)(x->st.dataLength > 0 ? x->st.dataLength : 0);
		const unsigned char *d = (const unsigned char *)(x->data ? x->data : "");
		char data[4096], owner[40] = "null";
		static char obj[1 << 17];
		int binary = !strcmp(x->path, "/t72/quiet/bin");
		if (binary) snprintf(data, sizeof data, "\"AP/+IGEKIlwB\"");   /* base64 of bin[] */
		else json_esc(data, d, len);
		if (x->eph) snprintf(owner, sizeof owner, "\"0x%llx\"", (unsigned long long)x->st.ephemeralOwner);
		snprintf(obj, sizeof obj,
		         "{\"path\":\"%s\",\"kind\":\"%s\",\"owner\":%s,\"ctime\":%lld,\"mtime\":%lld,\"version\":%d,"
		         "\"czxid\":\"0x%llx\",\"mzxid\":\"0x%llx\",\"numChildren\":%d,\"dataLength\":%zu,\"encoding\":\"%s\","
		         "\"data\":%s}",
		         x->path, x->eph ? "ephemeral" : "persistent", owner, (long long)x->st.ctime, (long long)x->st.mtime,
		         x->st.version, (unsigned long long)x->st.czxid, (unsigned long long)x->st.mzxid, x->st.numChildren,
		         len, binary ? "base64" : "utf-8", data);
		const char *at = strstr(r.out, obj);
		if (at) found++;
		else diag("not in the dump: %s", obj);
		if (at && at < last) in_order = 0;
		if (at) last = at;
	}
	is_int(found, nw, "  every node as the test reads it: path, kind, owner, times, version, zxids, data");
	is_int(npaths, nw, "  and no other node");
	ok(in_order, "  depth first, children in byte order");
	ok(strstr(r.out, "{\"namespace\":\"t72\",\"job\":\"quiet\",\"nodes\":[{\"path\":\"/t72/quiet\",") == r.out,
	   "  one document: namespace, job, nodes from the job's own node");
	res_free(&r);

	r = run("dump", "quiet", NULL);
	is_int(r.st, 0, "dump: exit 0");
	int lines = 0, rows = 0;
	for (char *l = r.out ? strtok(r.out, "\n") : NULL; l; l = strtok(NULL, "\n"), lines++) {
		if (!lines) {
			ok(!strncmp(l, "PATH", 4) && strstr(l, "KIND") && strstr(l, "OWNER") && strstr(l, "MTIME") && strstr(l, "DATA"),
			   "  a table: PATH KIND OWNER MTIME DATA");
			continue;
		}
		char path[300], kind[16], owner[40];
		if (sscanf(l, "%299s %15s %39s", path, kind, owner) != 3) continue;
		for (int i = 0; i < nw; i++) {
			if (strcmp(w[i].path, path)) continue;
			char ow[40] = "-";
			if (w[i].eph) snprintf(ow, sizeof ow, "0x%llx", (unsigned long long)w[i].st.ephemeralOwner);
			if (!strcmp(kind, w[i].eph ? "ephemeral" : "persistent") && !strcmp(owner, ow)) rows++;
			else diag("row %s: %s %s", path, kind, owner);
		}
		if (strstr(path, "/bin"))
			ok(strstr(l, "\\x00\\xff\\xfe a\\n\"\\\\\\x01") != NULL, "  binary data escaped on its one line");
		if (strstr(path, "/eph")) ok(strstr(l, "\xc3\xa9t\xc3\xa9\\tok") != NULL, "  UTF-8 data as is, the tab escaped");
	}
	is_int(rows, nw, "  every node once, with its kind and owner");
	is_int(lines - 1, nw, "  and no other row");
	res_free(&r);
	for (int i = 0; i < nw; i++) free(w[i].data);

	free(every);
	free(node);
	int s = tsup_stop(&a, SIGTERM, 10000);
	ok(WIFEXITED(s) && WEXITSTATUS(s) == 0, "the supervisor stops cleanly");
	tzkup_end(&u);
	diag("%.1f s", (tlib_now_ms() - t_start) / 1000.0);
	return done_testing();
}
