/* t/120-man.c: the man pages say what the programs do, and cannot drift from them.
 *
 * - ejob.yaml(5): every key of the config loader's tables (conf_keys(), conf/conf_keys.c) is a
 *   term of man/ejob.yaml.5.scd, and every term there is a key of those tables or one of the
 *   props ejob reads (listed below: they are read by each job type's and handler's own code,
 *   not from one table). A term is a line that starts with the key in bold, "*KEY* (type;
 *   default)", or with several, "*KEY*, *KEY*".
 * - ejobctl(1): every command `ejobctl --help` lists has a section "## NAME" under "# COMMANDS"
 *   of man/ejobctl.1.scd and every section is a command; every option of `ejobctl NAME --help`
 *   is in the command's section.
 * - ejob-supervisor(8) and ejob-shmdump(1): every long option of the program's --help is an
 *   option term of its page (man/ejob-supervisor.8.scd, man/ejob-shmdump.1.scd), and every
 *   option term there is in --help.
 * - the pages make builds (build/man/, make man) exist, are not older than their sources, and
 *   man(1) renders each at 80 columns with no warning from groff (all of them: --warnings=w).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "conf/conf_keys.h"
#include "t/lib/tlib.h"
#include "t/tap.h"

#define SUP     BUILT("supervisor/ejob-supervisor")
#define EJOBCTL BUILT("tools/ejobctl")
#define SHMDUMP BUILT("tools/shmdump")
#define MAN     "/usr/bin/man"

/* The props ejob reads (docs/config.md: each job type's, each error handler's, the listeners',
 * and ejob's own job keys as the config node keeps them), documented as "*props.KEY*". */
static const char *const props_keys[] = {
	"script.command.line",
	"native.library", "native.symbol", "native.fetch", "native.process",
	"streaming.process", "dataflow.batch.bytes",
	"http.uri", "http.method", "http.data", "http.content.type", "http.connect.timeout.milliseconds",
	"http.read.timeout.milliseconds", "http.ca.file",
	"dingtalk.webhook", "dingtalk.keyword", "dingtalk.secret", "dingtalk.connectTimeoutMilliseconds",
	"dingtalk.readTimeoutMilliseconds",
	"wechat.webhook", "wechat.connectTimeoutMilliseconds", "wechat.readTimeoutMilliseconds",
	"email.host", "email.port", "email.username", "email.password", "email.useSsl", "email.ssl.trust",
	"email.subject", "email.from", "email.to", "email.cc", "email.bcc", "email.debug",
	"webhook.url", "webhook.connectTimeoutMilliseconds", "webhook.readTimeoutMilliseconds",
	"ejob.listener.before", "ejob.listener.after", "ejob.listener.beforeAll", "ejob.listener.afterAll",
	"ejob.listener.timeoutSeconds",
	"ejob.type", "ejob.timeoutSeconds", "ejob.maxRetries", "ejob.concurrency", "ejob.dependsOn",
};

#define NELEM(a) (sizeof(a) / sizeof *(a))

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) BAIL_OUT("%s: %s", path, strerror(errno));
	size_t cap = 1 << 16, len = 0;
	char *b = malloc(cap);
	size_t n;
	while (b && (n = fread(b + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap && !(b = realloc(b, cap *= 2))) break;
	}
	fclose(f);
	if (!b) BAIL_OUT("out of memory");
	b[len] = '\0';
	return b;
}

/* a list of strings */
struct strs {
	char **v;
	size_t n;
};

static void push(struct strs *s, const char *p, size_t len)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == len && !strncmp(s->v[i], p, len)) return;
	s->v = realloc(s->v, (s->n + 1) * sizeof *s->v);
	if (!s->v || !(s->v[s->n] = strndup(p, len))) BAIL_OUT("out of memory");
	s->n++;
}

static int has(const struct strs *s, const char *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], p)) return 1;
	return 0;
}

static int in(const char *const *v, size_t n, const char *p)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], p)) return 1;
	return 0;
}

/* The bold words at the start of a term line, before its " (": "*a*, *b* (int)" -> a, b. */
static void term_words(const char *line, size_t len, struct strs *out)
{
	const char *end = line + len, *paren = strstr(line, " (");
	if (paren && paren < end) end = paren;
	for (const char *p = line; p < end && (p = memchr(p, '*', (size_t)(end - p)));) {
		const char *q = memchr(p + 1, '*', (size_t)(end - p - 1));
		if (!q) break;
		push(out, p + 1, (size_t)(q - p - 1));
		p = q + 1;
		while (p < end && (*p == ',' || *p == ' ')) p++;
		if (p < end && *p != '*') break;
	}
}

/* Lines of text, each with its length, from *pos on. */
static int next_line(const char *text, size_t *pos, const char **line, size_t *len)
{
	if (!text[*pos]) return 0;
	*line = text + *pos;
	const char *nl = strchr(*line, '\n');
	*len = nl ? (size_t)(nl - *line) : strlen(*line);
	*pos += *len + (nl ? 1 : 0);
	return 1;
}

/* The words of a page's terms: a line that starts with start ("*": bold) and is followed by a
 * line indented with a tab (scdoc's indented block: the term's text). */
static void terms(const char *scd, const char *start, struct strs *out)
{
	size_t pos = 0, len, plen = 0;
	const char *line, *prev = NULL;
	while (next_line(scd, &pos, &line, &len)) {
		if (prev && line[0] == '\t' && plen > strlen(start) && !strncmp(prev, start, strlen(start)))
			term_words(prev, plen, out);
		prev = line;
		plen = len;
	}
}

/* opt ("--wait", "-n") appears in text as a word of its own */
static int mentions(const char *text, size_t tlen, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = text; p + n <= text + tlen && (p = memmem(p, (size_t)(text + tlen - p), opt, n)); p++) {
		char before = p > text ? p[-1] : ' ', after = p + n < text + tlen ? p[n] : ' ';
		if (!isalnum((unsigned char)before) && before != '-' && !isalnum((unsigned char)after) && after != '-')
			return 1;
	}
	return 0;
}

/* Options in a --help text: "--word" and "-x" tokens after a blank, "[", "(" or "|". */
static void help_opts(const char *help, struct strs *out, int shorts)
{
	for (const char *p = help; *p; p++) {
		if (*p != '-' || (p > help && !strchr(" \t\n[(|", p[-1]))) continue;
		const char *q = p + 1;
		if (*q == '-') {
			q++;
			if (!islower((unsigned char)*q)) continue;
			while (islower((unsigned char)*q) || *q == '-') q++;
		} else {
			if (!shorts || !isalpha((unsigned char)*q) || isalnum((unsigned char)q[1]) || q[1] == '-') continue;
			q++;
		}
		push(out, p, (size_t)(q - p));
		p = q - 1;
	}
}

static char *run_help(const char *const argv[])
{
	char *out = NULL, *err = NULL;
	int st = tlib_run(argv, &out, &err);
	if (!ok(st == 0 && out && *out, "%s%s%s --help: exit 0 and a usage (exit %d)", argv[0],
	        strcmp(argv[1], "--help") ? " " : "", strcmp(argv[1], "--help") ? argv[1] : "",
	        WIFEXITED(st) ? WEXITSTATUS(st) : -1))
		diag("stderr: %s", err ? err : "");
	free(err);
	return out;
}

static void check_yaml_keys(void)
{
	char (*keys)[CONF_KEY_PATH_MAX] = calloc(512, sizeof *keys);
	if (!keys) BAIL_OUT("out of memory");
	size_t n = conf_keys(keys, 512);
	ok(n > 50 && n <= 512, "conf_keys: the loader's tables give %zu keys", n);
	if (n > 512) n = 512;
	struct strs table = { 0 };
	for (size_t i = 0; i < n; i++) push(&table, keys[i], strlen(keys[i]));
	ok(has(&table, "regCenter.serverLists") && has(&table, "supervisor.history.file") &&
	   has(&table, CONF_KEYS_JOB ".cron") && has(&table, "tracing.spoolDir") && !has(&table, "supervisor.history") &&
	   !has(&table, CONF_KEYS_JOB ".jobName"),
	   "the table's paths are dotted, walk supervisor.history, and leave out a job's jobName");

	char *scd = slurp("man/ejob.yaml.5.scd");
	struct strs doc = { 0 };
	terms(scd, "*", &doc);

	for (size_t i = 0; i < table.n; i++)
		ok(has(&doc, table.v[i]), "ejob.yaml(5) documents %s", table.v[i]);
	for (size_t i = 0; i < NELEM(props_keys); i++) {
		char k[128];
		snprintf(k, sizeof k, "props.%s", props_keys[i]);
		ok(has(&doc, k), "ejob.yaml(5) documents the prop %s", props_keys[i]);
	}
	int extra = 0;
	for (size_t i = 0; i < doc.n; i++) {
		const char *d = doc.v[i];
		if (has(&table, d)) continue;
		if (!strncmp(d, "props.", 6) && in(props_keys, NELEM(props_keys), d + 6)) continue;
		diag("ejob.yaml(5) documents '%s', which the loader's tables do not have", d);
		extra++;
	}
	ok(!extra, "every key ejob.yaml(5) documents is the loader's (or a prop ejob reads): %d not", extra);
	for (size_t i = 0; i < doc.n; i++) free(doc.v[i]);
	for (size_t i = 0; i < table.n; i++) free(table.v[i]);
	free(doc.v);
	free(table.v);
	free(scd);
	free(keys);
}

/* ejobctl.1.scd's command sections: "## NAME" under "# COMMANDS", each with its text */
struct section {
	char name[64];
	const char *text;
	size_t len;
};

static void check_ejobctl(void)
{
	const char *argv[] = { EJOBCTL, "--help", NULL };
	char *help = run_help(argv);
	if (!help) return;
	struct strs cmds = { 0 };
	const char *c = strstr(help, "\ncommands:\n");
	size_t pos = 0, len;
	const char *line;
	if (ok(c != NULL, "ejobctl --help has a commands: list")) {
		pos = (size_t)(c - help) + strlen("\ncommands:\n");
		while (next_line(help, &pos, &line, &len) && len > 2 && line[0] == ' ') {
			const char *w = line + strspn(line, " ");
			push(&cmds, w, strcspn(w, " \n"));
		}
	}
	ok(cmds.n >= 20, "ejobctl --help lists %zu commands", cmds.n);

	char *scd = slurp("man/ejobctl.1.scd");
	/* ejobctl's own options (--zk, -c, --timeout, ...) and every other --help names */
	struct strs gopts = { 0 };
	help_opts(help, &gopts, 1);
	int gmissing = 0;
	for (size_t o = 0; o < gopts.n; o++) {
		if (!mentions(scd, strlen(scd), gopts.v[o])) {
			diag("ejobctl --help has %s; ejobctl(1) does not", gopts.v[o]);
			gmissing++;
		}
		free(gopts.v[o]);
	}
	ok(gopts.n >= 8 && !gmissing, "ejobctl(1) has every option of ejobctl --help (%zu)", gopts.n);
	free(gopts.v);
	struct section sec[64];
	size_t nsec = 0;
	int in_cmds = 0;
	pos = 0;
	while (next_line(scd, &pos, &line, &len)) {
		if (len >= 2 && line[0] == '#' && line[1] == ' ') {
			in_cmds = len == 10 && !strncmp(line, "# COMMANDS", 10);
			if (nsec) sec[nsec - 1].len = (size_t)(line - sec[nsec - 1].text);
		} else if (in_cmds && len > 3 && !strncmp(line, "## ", 3) && nsec < NELEM(sec)) {
			if (nsec) sec[nsec - 1].len = (size_t)(line - sec[nsec - 1].text);
			snprintf(sec[nsec].name, sizeof sec[nsec].name, "%.*s", (int)(len - 3), line + 3);
			sec[nsec].text = scd + pos;
			sec[nsec].len = strlen(scd + pos);
			nsec++;
		}
	}
	for (size_t i = 0; i < cmds.n; i++) {
		size_t s = 0;
		while (s < nsec && strcmp(sec[s].name, cmds.v[i])) s++;
		if (!ok(s < nsec, "ejobctl(1) has a section for 'ejobctl %s'", cmds.v[i])) continue;
		/* the command's own options, as its --help says them */
		/* with no cluster named: --help needs none (drain once said "which cluster?", exit 2) */
		const char *cargv[] = { EJOBCTL, cmds.v[i], "--help", NULL };
		char *ch = run_help(cargv);
		if (!ch) continue;
		static const char *const global[] = { "--zk", "--namespace", "--digest", "--json", "--timeout",
		                                      "-c", "--config", "--help", "-h" };
		struct strs opts = { 0 };
		help_opts(ch, &opts, 1);
		int missing = 0;
		for (size_t o = 0; o < opts.n; o++) {
			if (in(global, NELEM(global), opts.v[o])) continue;
			if (!mentions(sec[s].text, sec[s].len, opts.v[o])) {
				diag("ejobctl %s --help has %s; its section does not", cmds.v[i], opts.v[o]);
				missing++;
			}
			free(opts.v[o]);
		}
		ok(!missing, "ejobctl(1)'s section '%s' has every option of 'ejobctl %s --help'", cmds.v[i], cmds.v[i]);
		free(opts.v);
		free(ch);
	}
	int extra = 0;
	for (size_t s = 0; s < nsec; s++)
		if (!has(&cmds, sec[s].name)) {
			diag("ejobctl(1) has a section '%s', which ejobctl --help does not list", sec[s].name);
			extra++;
		}
	ok(!extra && nsec > 0, "every command section of ejobctl(1) is a command of ejobctl --help (%zu sections)", nsec);
	for (size_t i = 0; i < cmds.n; i++) free(cmds.v[i]);
	free(cmds.v);
	free(scd);
	free(help);
}

/* Every long option of PROG --help is an option term of its page, and every long option term
 * there is in --help (at least min of them, so that a --help that says nothing fails). */
static void check_options(const char *prog, const char *name, const char *page, size_t min)
{
	const char *argv[] = { prog, "--help", NULL };
	char *help = run_help(argv);
	if (!help) return;
	struct strs opts = { 0 };
	help_opts(help, &opts, 0);
	ok(opts.n >= min, "%s --help names %zu long options", name, opts.n);

	/* the page's option terms: "*-c*, *--config* _FILE_" */
	char src[128];
	snprintf(src, sizeof src, "man/%s.scd", page);
	char *scd = slurp(src);
	struct strs doc = { 0 };
	terms(scd, "*-", &doc);
	for (size_t i = 0; i < opts.n; i++)
		ok(has(&doc, opts.v[i]), "%s documents %s", page, opts.v[i]);
	int extra = 0;
	for (size_t i = 0; i < doc.n; i++) {
		const char *d = doc.v[i];
		if (d[1] != '-' || has(&opts, d)) continue;
		diag("%s documents %s, which --help does not have", page, d);
		extra++;
	}
	ok(!extra, "every long option %s documents is in %s --help: %d not", page, name, extra);
	for (size_t i = 0; i < doc.n; i++) free(doc.v[i]);
	for (size_t i = 0; i < opts.n; i++) free(opts.v[i]);
	free(doc.v);
	free(opts.v);
	free(scd);
	free(help);
}

static void check_rendered(const char *page, const char *name_line)
{
	char built[128], src[128];
	snprintf(built, sizeof built, BUILT("man/%s"), page);
	snprintf(src, sizeof src, "man/%s.scd", page);
	struct stat b, s;
	if (!ok(stat(built, &b) == 0, "%s is built (make man)", built)) return;
	ok(stat(src, &s) == 0 && (b.st_mtim.tv_sec > s.st_mtim.tv_sec ||
	                          (b.st_mtim.tv_sec == s.st_mtim.tv_sec && b.st_mtim.tv_nsec >= s.st_mtim.tv_nsec)),
	   "%s is not older than %s", built, src);
	const char *argv[] = { MAN, "--warnings=w", "-l", built, NULL };
	char *out = NULL, *err = NULL;
	int st = tlib_run(argv, &out, &err);
	ok(st == 0, "man -l %s: exit 0 (exit %d)", built, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	if (!ok(err && !*err, "man --warnings=w -l %s: no warning from groff", built)) diag("%s", err ? err : "");
	if (!ok(out && strstr(out, name_line), "%s renders its NAME line", built)) diag("%.400s", out ? out : "");
	free(out);
	free(err);
}

int main(void)
{
	tlib_init(60);
	/* man(1) as a script runs it: no pager (stdout is a pipe), 80 columns, the C locale's
	 * hyphens and quotes, no MANOPT from whoever runs the test */
	setenv("MANWIDTH", "80", 1);
	setenv("LC_ALL", "C.UTF-8", 1);
	unsetenv("MANOPT");
	setenv("EJOB_CONFIG", "", 1);   /* ejobctl reads no default file */
	unsetenv("MANPAGER");
	unsetenv("PAGER");
	struct stat st;
	if (stat(MAN, &st) != 0) BAIL_OUT("%s is missing: tools/install-deps installs man-db and groff-base", MAN);

	check_yaml_keys();
	check_ejobctl();
	check_options(SUP, "ejob-supervisor", "ejob-supervisor.8", 14);
	check_options(SHMDUMP, "ejob-shmdump", "ejob-shmdump.1", 2);
	check_rendered("ejob-supervisor.8", "ejob-supervisor - run ejob's jobs on this machine");
	check_rendered("ejobctl.1", "ejobctl - see and operate an ejob cluster");
	check_rendered("ejob.yaml.5", "ejob.yaml - the configuration file of ejob-supervisor");
	check_rendered("ejob-shmdump.1", "ejob-shmdump - show an ejob supervisor's shared-memory segment");
	return done_testing();
}
