/* t/119-log-format.c: the supervisor's log as systemd and log shippers read it (ipc/logline.h).
 * Real supervisors (--run of script jobs, real ejob-worker processes), their stderr a Unix stream
 * socket as journald gives a service, read here to the end:
 *   - $JOURNAL_STREAM naming that socket (dev:ino): every line, the supervisor's and the
 *     worker's, starts with the syslog priority of its level (<3> ERROR, <4> WARN, <6> INFO, <7>
 *     DEBUG) and has no time of its own; a newline inside a message stays inside its line;
 *   - $JOURNAL_STREAM naming something else (inherited, stderr redirected): the plain text lines;
 *   - supervisor.logFormat: json: each line one JSON object with exactly the documented keys (ts
 *     RFC 3339 UTC with ms, level, prog, pid, msg; and job, item, attempt on a job's lines, stream on
 *     a script's output), values that are right (the script prints its item and attempt), quotes,
 *     backslash, tab, control bytes, invalid UTF-8 and a newline escaped so that every line stays
 *     valid JSON; under journald the priority, then the object;
 *   - --log-format wins over the file; a bad logFormat is exit 2 naming supervisor.logFormat;
 *   - SIGHUP does not change the log's form (it says so), as logLevel.
 * No ZooKeeper: --run and --standalone do without it. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/logline.h"
#include "t/lib/tlib.h"
#include "t/lib/tsup.h"
#include "t/tap.h"

/* every job prints its item and attempt, so that the keys of its lines can be checked against
 * what it said; item 1 of talk always fails (a WARN for attempt 1, an ERROR for the last) */
static const char talk_sh[] =
	"#!/bin/sh\n"
	"echo \"out $EJOB_ITEM $EJOB_ATTEMPT\"\n"
	"echo \"err $EJOB_ITEM $EJOB_ATTEMPT\" >&2\n"
	"[ \"$EJOB_ITEM\" = 1 ] && exit 3\n"
	"exit 0\n";
/* quotes, backslash, tab, a control byte, an invalid UTF-8 byte, a carriage return */
static const char odd_sh[] = "#!/bin/sh\nprintf 'q\"b\\\\s\\tt\\001c\\377x\\r\\n'\n";
static const char odd_want[] = "q\"b\\s\tt\001c\xc3\xbfx\r";   /* \377 reads back as U+00FF */
static const char many_sh[] = "#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8; do echo \"line $i\"; done\n";

static const char yaml[] =
	"regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t119}\n"
	"supervisor: {workers: 1, attachSocket: \"@SOCK@\", scriptOutputMaxLines: 4%s}\n"
	"jobs:\n"
	"  talk: {type: script, cron: \"0 0 * * * ?\", shardingTotalCount: 2, maxRetries: 1,\n"
	"         props: {script.command.line: \"@DIR@/talk.sh\"}}\n"
	"  odd: {type: script, cron: \"0 0 * * * ?\", shardingTotalCount: 1, props: {script.command.line: \"@DIR@/odd.sh\"}}\n"
	"  many: {type: script, cron: \"0 0 * * * ?\", shardingTotalCount: 1, props: {script.command.line: \"@DIR@/many.sh\"}}\n"
	/* a program that is not there, its name with a newline, a quote, a backslash and a tab: the
	 * supervisor's own line about it carries them */
	"  gone: {type: script, cron: \"0 0 * * * ?\", shardingTotalCount: 1,\n"
	"         props: {script.command.line: \"'/nonexistent/a\\nb\\\"c\\\\d\\te'\"}}\n";
static const char gone_want[] = "/nonexistent/a\nb\"c\\d\te: No such file or directory";

static void config(struct tsup *t, const char *name, const char *extra)
{
	char y[4096], p[700];
	snprintf(y, sizeof y, yaml, extra);
	tsup_config(t, name, y);
	const char *const sh[][2] = { { "talk.sh", talk_sh }, { "odd.sh", odd_sh }, { "many.sh", many_sh } };
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/%s", t->dir, sh[i][0]);
		if (tlib_write_file(p, sh[i][1], strlen(sh[i][1])) < 0 || chmod(p, 0755) < 0)
			BAIL_OUT("writing %s: %s", p, strerror(errno));
	}
}

enum js { JS_NONE, JS_STDERR, JS_OTHER };   /* $JOURNAL_STREAM: unset, stderr's, another file's */

struct run {
	int code;        /* exit status */
	char *out;       /* all it wrote to stderr (and its workers), NUL-terminated */
	int64_t t0, t1;  /* wall clock around it (ns) */
	pid_t pid;
};

/* Run the supervisor -c t->conf ARGS to its end, its stdout and stderr one end of a stream socket
 * (as journald's), $JOURNAL_STREAM as js says. */
static struct run run_sup(struct tsup *t, enum js js, const char *const *args)
{
	struct run r = { .code = -1 };
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) BAIL_OUT("socketpair: %s", strerror(errno));
	char env[64] = "";
	struct stat st;
	if (js != JS_NONE) {
		if ((js == JS_STDERR ? fstat(sv[1], &st) : stat(t->conf, &st)) < 0) BAIL_OUT("stat: %s", strerror(errno));
		snprintf(env, sizeof env, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	}
	const char *argv[32];
	int n = 0;
	argv[n++] = BUILT("supervisor/ejob-supervisor");
	argv[n++] = "-c";
	argv[n++] = t->conf;
	for (int i = 0; args[i] && n < 31; i++) argv[n++] = args[i];
	argv[n] = NULL;
	r.t0 = tlib_wall_ns();
	pid_t p = tlib_fork();
	if (p == 0) {
		if (env[0]) setenv("JOURNAL_STREAM", env, 1);
		else unsetenv("JOURNAL_STREAM");
		int nul = open("/dev/null", O_RDONLY);
		dup2(nul, 0);
		dup2(sv[1], 1);
		dup2(sv[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(sv[1]);
	r.pid = p;
	t->pid = p;
	size_t len = 0, cap = 65536;
	r.out = malloc(cap);
	uint64_t until = tlib_now_ms() + 30000;
	for (;;) {   /* to EOF: the supervisor and every worker have exited (or closed it) */
		struct pollfd pf = { sv[0], POLLIN, 0 };
		uint64_t now = tlib_now_ms();
		if (now >= until) {
			diag("the supervisor did not end within 30s");
			kill(p, SIGKILL);
			break;
		}
		int k = poll(&pf, 1, (int)(until - now));
		if (k < 0 && errno == EINTR) continue;
		if (k <= 0) continue;
		if (len + 4096 + 1 > cap) r.out = realloc(r.out, cap *= 2);
		ssize_t got = read(sv[0], r.out + len, cap - len - 1);
		if (got < 0 && errno == EINTR) continue;
		if (got <= 0) break;
		len += (size_t)got;
	}
	r.out[len] = '\0';
	close(sv[0]);
	int status;
	if (waitpid(p, &status, 0) == p) r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	tlib_untrack(p);
	r.t1 = tlib_wall_ns();
	return r;
}

static int exit_code_of(int st)
{
	return st < 0 ? -1 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
	return n;
}

static int prio_of(const char *level)   /* "ERROR" or "error" ... */
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	static const int prio[] = { 3, 4, 6, 7 };
	for (int i = 0; i < 4; i++)
		if (!strcasecmp(level, names[i])) return prio[i];
	return -1;
}

/* ---- text --------------------------------------------------------------------------------------- */

struct text_stats {
	int lines, bad, per_prio[8], worker, sup;
};

/* Every line of out in the text form: under journald "<P>PROG[PID] LEVEL msg" with P the level's
 * priority and no time; else "TIME PROG[PID] LEVEL msg". The first bad line goes to diag. */
static struct text_stats text_lines(const char *out, int journal)
{
	struct text_stats s = { 0 };
	regex_t re;
	const char *pat = journal ? "^<([0-9])>(ejob-supervisor|ejob-worker)\\[[0-9]+\\] (ERROR|WARN|INFO|DEBUG) "
	                          : "^()[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
	                            "(ejob-supervisor|ejob-worker)\\[[0-9]+\\] (ERROR|WARN|INFO|DEBUG) ";
	if (regcomp(&re, pat, REG_EXTENDED)) BAIL_OUT("regcomp");
	for (const char *p = out; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char line[8192];
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
		regmatch_t m[4];
		s.lines++;
		int good = !regexec(&re, line, 4, m, 0);
		if (good) {
			char lvl[8];
			snprintf(lvl, sizeof lvl, "%.*s", (int)(m[3].rm_eo - m[3].rm_so), line + m[3].rm_so);
			int want = prio_of(lvl);
			if (journal) good = line[1] - '0' == want;
			if (good) s.per_prio[want]++;
			if (strstr(line, "ejob-worker[") == line + m[2].rm_so) s.worker++;
			else s.sup++;
		}
		if (!good && !s.bad++) diag("bad line: %s", line);
		p += n + (e ? 1 : 0);
	}
	regfree(&re);
	return s;
}

static void test_journal_text(void)
{
	struct tsup t;
	config(&t, "jtext", "");
	const char *talk[] = { "--run", "talk", "--log-level", "debug", NULL };
	struct run r = run_sup(&t, JS_STDERR, talk);
	is_int(r.code, 1, "under journald: --run talk (item 1 fails): exit 1");
	struct text_stats s = text_lines(r.out, 1);
	ok(s.lines >= 10 && !s.bad, "  every line (%d) is <P>PROG[PID] LEVEL, P the level's syslog priority", s.lines);
	ok(s.per_prio[3] && s.per_prio[4] && s.per_prio[6] && s.per_prio[7],
	   "  ERROR <3>, WARN <4>, INFO <6> and DEBUG <7> lines are all there (%d %d %d %d)", s.per_prio[3],
	   s.per_prio[4], s.per_prio[6], s.per_prio[7]);
	/* item 0 once, item 1 twice (maxRetries 1): three runs, a stdout and a stderr line each */
	is_int(s.worker, 6, "  the worker's lines too: each run's stdout and stderr line");
	is_int(count(r.out, "] INFO [talk@-@"), 6, "  a script's stdout and stderr lines are INFO, tagged with the task");
	is_int(count(r.out, " item 1 attempt 2] stderr: err 1 2\n"), 1, "  tagged with item and attempt");
	ok(!strstr(r.out, "Z ejob-"), "  and no line has a time of its own (journald stamps it)");
	free(r.out);

	const char *gone[] = { "--run", "gone", NULL };
	r = run_sup(&t, JS_STDERR, gone);
	s = text_lines(r.out, 1);
	ok(r.code == 1 && s.lines >= 3 && !s.bad, "--run gone: every line has its priority (%d lines)", s.lines);
	is_int(count(r.out, "<3>ejob-supervisor["), 2, "  the item's error and the run's failure are <3>");
	ok(strstr(r.out, "exec /nonexistent/a\\nb\"c\\d\te: No such file or directory\n") != NULL,
	   "  a newline inside a message is written \\n: one journal entry, not two");
	free(r.out);

	/* a config error at the start: the first line a unit's journal shows */
	config(&t, "jbad", ", logFormat: yml");
	const char *none[] = { "--standalone", NULL };
	r = run_sup(&t, JS_STDERR, none);
	is_int(r.code, 2, "under journald, a bad config: exit 2");
	ok(!strncmp(r.out, "<3>", 3) && count(r.out, "\n") == 1 && strstr(r.out, "supervisor.logFormat: must be one of text or json"),
	   "  its one line is <3>: %s", r.out);
	free(r.out);
}

static void test_plain_text(void)
{
	struct tsup t;
	config(&t, "ptext", "");
	const char *talk[] = { "--run", "talk", "--log-level", "debug", NULL };
	for (int js = JS_NONE; js <= JS_OTHER; js += JS_OTHER) {
		struct run r = run_sup(&t, (enum js)js, talk);
		struct text_stats s = text_lines(r.out, 0);
		const char *why = js == JS_NONE ? "no $JOURNAL_STREAM" : "$JOURNAL_STREAM names another file";
		ok(r.code == 1 && s.lines >= 10 && !s.bad, "%s: every line (%d) is TIME PROG[PID] LEVEL, as ever", why, s.lines);
		ok(!strchr(r.out, '<') && s.worker == 6, "  no priority; the worker's lines the same (%d)", s.worker);
		free(r.out);
	}
}

/* ---- json --------------------------------------------------------------------------------------- */

struct jline {
	json_t *o;
	const char *level, *prog, *msg, *job, *stream;
	long long pid, item, attempt;
};

/* The keys a line has, as one string in a fixed order: "ts level prog pid job item attempt stream msg" */
static void keys_of(json_t *o, char *out, size_t len)
{
	static const char *const all[] = { "ts", "level", "prog", "pid", "job", "item", "attempt", "stream", "msg" };
	out[0] = '\0';
	size_t known = 0;
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		if (json_object_get(o, all[i])) {
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "", all[i]);
			known++;
		}
	if (known != json_object_size(o)) snprintf(out + strlen(out), len - strlen(out), " +%zu unknown", json_object_size(o) - known);
}

/* ts: RFC 3339 UTC with milliseconds, within the run */
static int ts_ok(const char *ts, const struct run *r)
{
	struct tm tm = { 0 };
	int ms = -1;
	char z = 0;
	if (!ts || strlen(ts) != 24 || sscanf(ts, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
	                                      &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &z) != 8 || z != 'Z')
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	int64_t ns = (int64_t)timegm(&tm) * 1000000000 + (int64_t)ms * 1000000;
	return ns >= r->t0 - 1000000000 && ns <= r->t1 + 1000000000;
}

/* Check every line of r as JSON (after "<P>" under journald); pass each to fn. How many lines were
 * bad (the first is in a diag). */
struct jstats {
	int lines, bad, sup, worker, job_lines;
};
static struct jstats json_lines(const struct run *r, int journal, void (*fn)(const struct jline *, void *), void *arg)
{
	struct jstats s = { 0 };
	for (const char *p = r->out; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char why[300] = "";
		s.lines++;
		const char *body = p;
		size_t bn = n;
		int prio = -1;
		if (journal) {
			if (n > 3 && p[0] == '<' && p[1] >= '0' && p[1] <= '7' && p[2] == '>') {
				prio = p[1] - '0';
				body += 3;
				bn -= 3;
			} else {
				snprintf(why, sizeof why, "no <P> first");
			}
		}
		json_error_t err;
		json_t *o = why[0] ? NULL : json_loadb(body, bn, JSON_REJECT_DUPLICATES, &err);
		if (!why[0] && !json_is_object(o)) snprintf(why, sizeof why, "not a JSON object: %s", o ? "" : err.text);
		struct jline l = { .o = o, .pid = -1, .item = -1, .attempt = -1 };
		if (!why[0]) {
			l.level = json_string_value(json_object_get(o, "level"));
			l.prog = json_string_value(json_object_get(o, "prog"));
			l.msg = json_string_value(json_object_get(o, "msg"));
			l.job = json_string_value(json_object_get(o, "job"));
			l.stream = json_string_value(json_object_get(o, "stream"));
			json_t *v;
			if ((v = json_object_get(o, "pid")) && json_is_integer(v)) l.pid = json_integer_value(v);
			if ((v = json_object_get(o, "item")) && json_is_integer(v)) l.item = json_integer_value(v);
			if ((v = json_object_get(o, "attempt")) && json_is_integer(v)) l.attempt = json_integer_value(v);
			char keys[200];
			keys_of(o, keys, sizeof keys);
			int is_sup = l.prog && !strcmp(l.prog, "ejob-supervisor");
			int is_worker = l.prog && !strcmp(l.prog, "ejob-worker");
			const char *want = !l.job ? "ts level prog pid msg"
			                   : l.stream ? "ts level prog pid job item attempt stream msg"
			                              : "ts level prog pid job item attempt msg";
			if (strcmp(keys, want)) snprintf(why, sizeof why, "keys '%s', not '%s'", keys, want);
			else if (!ts_ok(json_string_value(json_object_get(o, "ts")), r)) snprintf(why, sizeof why, "ts");
			else if (!l.level || prio_of(l.level) < 0 || strcspn(l.level, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(l.level))
				snprintf(why, sizeof why, "level");
			else if (journal && prio != prio_of(l.level)) snprintf(why, sizeof why, "<%d> for %s", prio, l.level);
			else if (!is_sup && !is_worker) snprintf(why, sizeof why, "prog");
			else if (is_sup ? l.pid != r->pid : (l.pid <= 0 || l.pid == r->pid)) snprintf(why, sizeof why, "pid");
			else if (!l.msg) snprintf(why, sizeof why, "msg");
			else if (l.job && (l.item < 0 || l.attempt < 1 || !is_worker)) snprintf(why, sizeof why, "job keys");
			else if (l.stream && strcmp(l.stream, "stdout") && strcmp(l.stream, "stderr")) snprintf(why, sizeof why, "stream");
			s.sup += is_sup;
			s.worker += is_worker;
			s.job_lines += !!l.job;
		}
		if (why[0]) {
			if (!s.bad++) diag("bad line (%s): %.*s", why, (int)n, p);
		} else if (fn) {
			fn(&l, arg);
		}
		json_decref(o);
		p += n + (e ? 1 : 0);
	}
	return s;
}

struct talk_seen {
	int out, err, wrong, warn, error, debug;
};

static void talk_line(const struct jline *l, void *arg)
{
	struct talk_seen *t = arg;
	if (!strcmp(l->level, "warn")) t->warn++;
	if (!strcmp(l->level, "error")) t->error++;
	if (!strcmp(l->level, "debug")) t->debug++;
	if (!l->stream) return;
	char want[64];
	snprintf(want, sizeof want, "%s %lld %lld", !strcmp(l->stream, "stdout") ? "out" : "err", l->item, l->attempt);
	if (strcmp(l->msg, want) || strcmp(l->job, "talk") || strcmp(l->level, "info")) {
		if (!t->wrong++) diag("job line: job %s item %lld attempt %lld stream %s level %s: '%s'", l->job, l->item,
		                      l->attempt, l->stream, l->level, l->msg);
	}
	*(!strcmp(l->stream, "stdout") ? &t->out : &t->err) += 1;
}

struct msg_seen {
	const char *want, *job, *stream;
	int found;
};

static void msg_line(const struct jline *l, void *arg)
{
	struct msg_seen *m = arg;
	if (strcmp(l->msg, m->want) && !(m->stream == NULL && strstr(l->msg, m->want))) return;
	if ((m->job && (!l->job || strcmp(l->job, m->job))) || (m->stream && (!l->stream || strcmp(l->stream, m->stream))))
		return;
	m->found++;
}

static void cut_line(const struct jline *l, void *arg)
{
	int *n = arg;
	if (l->job && !strcmp(l->job, "many") && !l->stream && !strcmp(l->level, "warn") && l->item == 0 &&
	    l->attempt == 1 && !strncmp(l->msg, "output cut: 4 more lines", 24))
		(*n)++;
}

static void test_json(int journal)
{
	struct tsup t;
	const char *how = journal ? "logFormat json under journald" : "logFormat json";
	config(&t, journal ? "jjson" : "json", ", logFormat: json");
	enum js js = journal ? JS_STDERR : JS_NONE;

	const char *talk[] = { "--run", "talk", "--log-level", "debug", NULL };
	struct run r = run_sup(&t, js, talk);
	struct talk_seen ts = { 0 };
	struct jstats s = json_lines(&r, journal, talk_line, &ts);
	is_int(r.code, 1, "%s: --run talk: exit 1", how);
	ok(s.lines >= 10 && !s.bad, "  every line (%d) is %sa JSON object with exactly the documented keys and right values",
	   s.lines, journal ? "<P> (its level's priority) then " : "");
	ok(s.sup >= 5 && s.worker == 6, "  the supervisor's lines (%d) and the worker's (%d)", s.sup, s.worker);
	ok(ts.out == 3 && ts.err == 3 && !ts.wrong,
	   "  each output line: job talk, the item and attempt the script printed, stream stdout/stderr, level info");
	ok(ts.warn >= 1 && ts.error >= 1 && ts.debug >= 1, "  levels warn, error, debug as well (%d %d %d)", ts.warn,
	   ts.error, ts.debug);
	free(r.out);

	const char *odd[] = { "--run", "odd", NULL };
	r = run_sup(&t, js, odd);
	struct msg_seen m = { .want = odd_want, .job = "odd", .stream = "stdout" };
	s = json_lines(&r, journal, msg_line, &m);
	ok(r.code == 0 && !s.bad, "%s: a script's quotes, backslash, tab, control byte, invalid UTF-8, CR: still valid JSON", how);
	is_int(m.found, 1, "  and its line reads back as it was written (the invalid byte as U+00FF)");
	if (!journal) ok(strstr(r.out, "\"msg\":\"q\\\"b\\\\s\\tt\\u0001c\\u00ffx\\r\"}\n") != NULL, "  escaped as \\\" \\\\ \\t \\u0001 \\u00ff \\r");
	free(r.out);

	const char *gone[] = { "--run", "gone", NULL };
	r = run_sup(&t, js, gone);
	m = (struct msg_seen){ .want = gone_want };
	s = json_lines(&r, journal, msg_line, &m);
	ok(r.code == 1 && !s.bad && m.found == 1, "%s: the supervisor's line with a newline, quote, backslash, tab: valid JSON, "
	   "read back whole", how);
	free(r.out);

	const char *many[] = { "--run", "many", NULL };
	r = run_sup(&t, js, many);
	int cut = 0;
	s = json_lines(&r, journal, cut_line, &cut);
	ok(r.code == 0 && !s.bad && s.job_lines == 5 && cut == 1,
	   "%s: past scriptOutputMaxLines, the cut notice: warn, job many item 0 attempt 1, no stream (%d job lines)", how,
	   s.job_lines);
	free(r.out);
}

/* ---- a line that does not fit (ipc/logline.c directly: pure) ------------------------------------ */

static void test_cut(void)
{
	char msg[300], line[200];
	for (size_t i = 0; i < sizeof msg; i++) msg[i] = "\x01\"\xff\n"[i % 4];   /* each escapes to 2-6 bytes */
	struct logline_job lj = { .job = "j", .tag = "[j@-@0 item 0 attempt 1]", .item = 0, .attempt = 1 };
	struct logline l = { .level = LOGLINE_WARN, .prog = "p", .pid = 1, .job = &lj, .stream = "stderr", .msg = msg,
	                     .len = sizeof msg };
	int good = 1;
	for (size_t cap = 140; cap <= sizeof line; cap++) {   /* every cut point, inside an escape or not */
		size_t n = logline_format(line, cap, LOGLINE_JSON | LOGLINE_JOURNAL, &l);
		json_error_t err;
		json_t *o = n > 3 && n <= cap && line[n - 1] == '\n' ? json_loadb(line + 3, n - 4, 0, &err) : NULL;
		const char *m = json_string_value(json_object_get(o, "msg"));
		if (!m || strlen(m) < 3 || strcmp(m + strlen(m) - 3, "...") || strncmp(line, "<4>{", 4)) {
			if (good) diag("cap %zu: %.*s", cap, (int)n, line);
			good = 0;
		}
		json_decref(o);
	}
	ok(good, "a JSON line too long for its buffer: cut inside the message, ends in ..., still one valid object");
	size_t n = logline_format(line, 60, LOGLINE_JOURNAL, &l);
	ok(n == 60 && !strncmp(line, "<4>p[1] WARN [j@-@0 item 0 attempt 1] stderr: ", 46) && !memcmp(line + 56, "...\n", 4),
	   "a text line too: cut, ... and its newline (%zu bytes)", n);
	l.len = 0;
	size_t need = logline_size("p", &lj, sizeof msg);
	l.len = sizeof msg;
	char *big = malloc(need);
	n = logline_format(big, need, LOGLINE_JSON, &l);
	ok(n > 0 && n <= need && !memmem(big, n, "...", 3), "logline_size() bytes hold the worst message whole (%zu of %zu)", n,
	   need);
	free(big);
}

/* ---- the option, a bad value, a reload ---------------------------------------------------------- */

static void test_option(void)
{
	struct tsup t;
	config(&t, "opt", ", logFormat: json");
	const char *text[] = { "--run", "odd", "--log-format", "text", NULL };
	struct run r = run_sup(&t, JS_NONE, text);
	struct text_stats s = text_lines(r.out, 0);
	ok(r.code == 0 && s.lines >= 3 && !s.bad && s.worker == 1, "logFormat json, --log-format text: text lines (the option wins)");
	free(r.out);

	config(&t, "opt2", "");
	const char *json[] = { "--run", "odd", "--log-format", "json", NULL };
	r = run_sup(&t, JS_NONE, json);
	struct jstats js = json_lines(&r, 0, NULL, NULL);
	ok(r.code == 0 && js.lines >= 3 && !js.bad && js.worker == 1, "no logFormat, --log-format json: JSON lines, the worker's too");
	free(r.out);

	const char *bad[] = { "--run", "odd", "--log-format", "yml", NULL };
	r = run_sup(&t, JS_NONE, bad);
	is_int(r.code, 2, "--log-format yml: exit 2");
	is_str(r.out, "ejob-supervisor: --log-format: 'yml' is not one of text, json\n", "  naming the option and its values");
	free(r.out);
	/* a usage error under systemd (before the log is set up): an error's priority too */
	r = run_sup(&t, JS_STDERR, bad);
	is_str(r.out, "<3>ejob-supervisor: --log-format: 'yml' is not one of text, json\n",
	       "  under journald the same line with <3> first");
	free(r.out);

	config(&t, "bad", ", logFormat: yml");
	const char *run[] = { "--run", "odd", NULL };
	r = run_sup(&t, JS_NONE, run);
	is_int(r.code, 2, "logFormat: yml: exit 2");
	char want[800];
	snprintf(want, sizeof want, "%s:2:", t.conf);
	ok(!strncmp(r.out, want, strlen(want)) &&
	   strstr(r.out, ": supervisor.logFormat: must be one of text or json (got \"yml\")\n"),
	   "  naming the file, the line, supervisor.logFormat and its values: %s", r.out);
	free(r.out);
}

/* SIGHUP: the log keeps its form, and says the new one waits for the next start (as logLevel) */
static void test_reload(void)
{
	struct tsup t;
	tsup_config(&t, "reload",
	            "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t119r}\n"
	            "supervisor: {workers: 1, attachSocket: \"@SOCK@\"}\n"
	            "jobs: {}\n");
	const char *args[] = { "--standalone", NULL };
	tsup_start(&t, args);
	ok(tsup_wait_handles(&t, SIGHUP, 10000), "--standalone, text: it takes SIGHUP");
	tsup_rewrite(&t, "regCenter: {serverLists: \"127.0.0.1:2181\", namespace: t119r}\n"
	                 "supervisor: {workers: 1, attachSocket: \"@SOCK@\", logFormat: json}\n"
	                 "jobs: {}\n");
	kill(t.pid, SIGHUP);
	ok(tsup_wait_log(&t, "INFO configuration reloaded", 1, 10000), "logFormat json, SIGHUP: reloaded");
	is_int(tsup_log_count(&t, "WARN supervisor.logLevel/logFormat changed: the log takes them at the next start\n"), 1,
	       "  saying the log's form changes at the next start");
	is_int(exit_code_of(tsup_stop(&t, SIGTERM, 15000)), 0, "  stops clean");
	char *log = tsup_log_text(&t);
	struct text_stats s = text_lines(log, 0);
	ok(s.lines >= 4 && !s.bad, "  and every line, before and after, is text (%d)", s.lines);
	free(log);
}

int main(void)
{
	tlib_init(120);
	plan(50);
	test_journal_text();
	test_plain_text();
	test_json(0);
	test_json(1);
	test_cut();
	test_option();
	test_reload();
	return done_testing();
}
