/* tools/ejobctl_config.c: ejobctl config get|set|edit JOB: the job's config node,
 * /{namespace}/{job}/config (ElasticJob's JobConfigurationAPI: getJobConfiguration,
 * updateJobConfiguration).
 *
 * get prints the node's bytes as stored. set and edit check the new node with the supervisor's
 * own check (conf_node_take: the parser's types and ranges, the cron, the zone, the job name, the
 * type from props or the job's root node) before anything is written, and write it with the
 * version read before (zoo_set with that version): a change made meanwhile by anyone is never
 * overwritten; the loser is told, nothing is written, exit 1.
 *
 * What is written is the bytes given, not ejob's canonical form (conf_node_emit): the check ran
 * on exactly those bytes, keys ejob does not know (a newer ElasticJob's, a plugin's) stay, and a
 * node ElasticJob wrote stays ElasticJob's (no ejob.type added). An ejob configuration file (a
 * top-level jobs: key) is taken too: its job JOB, emitted as the supervisor publishes it.
 *
 * The job's workflows (dependsOn) are checked with the namespace's other jobs (ctl_flow_check): a
 * new node that would make a cycle or a second root is refused, exit 2, nothing written.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/conf.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_api.h"
#include "tools/ejobctl_job.h"
#include "tools/ejobctl_zk.h"

/* ZooKeeper's jute.maxbuffer (1 MiB) less room for the request around the data, as
 * docs/config.md's limit of a job's config node */
#define NODE_MAX ((1u << 20) - 4096u)

static void usage(FILE *f)
{
	fprintf(f, "usage: ejobctl config get JOB\n"
	        "       ejobctl config set JOB FILE [--version N]\n"
	        "       ejobctl config edit JOB\n"
	        "  with --zk HOSTS --namespace NS [--digest USER:PASS] or -c FILE; [--timeout SECONDS]\n\n"
	        "get   prints the job's config node (/NS/JOB/config) exactly as stored.\n"
	        "set   writes FILE ('-': stdin) into it: a config node as 'config get' prints it, or an\n"
	        "      ejob configuration file (top-level jobs:), whose job JOB is taken.\n"
	        "edit  opens the node in $EDITOR (else $VISUAL, else vi) and writes what you save.\n"
	        "The new node is checked as a supervisor checks it (types, ranges, cron, zone, jobName)\n"
	        "before anything is written, and written only if the node is still the version read\n"
	        "before (set --version N: only if it is version N): a change made meanwhile is never\n"
	        "overwritten.\n"
	        "Exit status: 0 written (or no change), 1 runtime failure or the node changed meanwhile,\n"
	        "2 usage, an unknown job or a node that does not pass the check.\n");
}

/* ---- the node ------------------------------------------------------------------------------ */

struct node {
	char path[CTL_PATH_MAX];
	char *data;                 /* as stored */
	size_t len;
	struct Stat st;
	char root[256];             /* the job's root node's data (ElasticJob: SCRIPT, HTTP, a class) */
};

static int read_node(struct ctl *c, const char *job, struct node *n)
{
	char p[CTL_PATH_MAX];
	ctl_path(c, n->path, "/%s/config", job);
	int rc = ctl_get(c, n->path, &n->data, &n->st);
	if (rc != ZOK) return ctl_fail(c, rc, "cannot read", n->path);
	n->len = n->st.dataLength > 0 ? (size_t)n->st.dataLength : 0;
	char *root = NULL;
	struct Stat rs;
	rc = ctl_get(c, ctl_path(c, p, "/%s", job), &root, &rs);
	if (rc != ZOK) return ctl_fail(c, rc, "cannot read", p);
	size_t rl = rs.dataLength > 0 ? (size_t)rs.dataLength : 0;
	if (rl >= sizeof n->root) rl = sizeof n->root - 1;
	memcpy(n->root, root, rl);
	n->root[rl] = 0;
	free(root);
	return 0;
}

/* ---- the check --------------------------------------------------------------------------- */

/* An ejob configuration file rather than a node: a top-level jobs: key. */
static int is_conf_file(const char *b, size_t len)
{
	for (size_t i = 0; i + 5 <= len; i++) {
		if ((i == 0 || b[i - 1] == '\n') && !memcmp(b + i, "jobs:", 5)) return 1;
	}
	return 0;
}

/* The node to write for job: buf itself, or (an ejob configuration file) its job JOB as the
 * supervisor publishes it, into *out (malloc'd). 0, or 2 after the file's errors. */
static int from_conf_file(const struct ctl *c, const char *job, const char *label, const char *buf, size_t len,
                          char **out, size_t *outlen)
{
	conf_opts_t o;
	conf_opts_system(&o);
	o.server_lists = c->hosts;      /* a file without regCenter: its jobs go to this cluster anyway (as apply's) */
	o.namespace = c->ns;
	o.flow_open = true;             /* dependsOn names the namespace's jobs: checked with them (prepare) */
	conf_diags_t *d = NULL;
	conf_t *cf = conf_parse(buf, len, label, &o, &d);
	if (!cf) {
		int st = d ? 2 : 1;       /* no diagnostics: out of memory */
		for (size_t k = 0; d && k < conf_diags_count(d); k++) fprintf(c->err, "%s\n", conf_diags_get(d, k)->text);
		conf_diags_free(d);
		return ctl_msg(c, st, "%s: an ejob configuration file (it has jobs:) that does not load; nothing "
		               "written", label);
	}
	conf_diags_free(d);
	const conf_job_t *j = conf_find_job(cf, job);
	if (!j) {
		char list[512] = "";
		for (size_t k = 0; k < cf->n_jobs && strlen(list) < 400; k++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "", cf->jobs[k].name);
		ctl_msg(c, 2, "%s has no job '%s' (its jobs: %s); nothing written", label, job, *list ? list : "none");
		conf_free(cf);
		return 2;
	}
	*out = conf_node_emit(j, outlen);
	conf_free(cf);
	if (!*out) return ctl_msg(c, 1, "out of memory");
	return 0;
}

/* Whether the new node (label names it in messages) passes the supervisor's check for job, and
 * more: what a supervisor takes with an error of one key (ElasticJob fails on it when it uses it:
 * a cron, a strategy, item parameters) or with a zone nobody knows (GMT, as ElasticJob) is refused
 * here, where the person who wrote it can fix it. 0 (warnings said) with the job in *taken (the
 * caller's: conf_job_free), or 2 after saying why on stderr, each problem as
 * "LABEL:LINE:COLUMN: key: what" or "LABEL: what". */
static int check(const struct ctl *c, const char *job, const struct node *n, const char *label, const char *buf,
                 size_t len, int *alias, conf_job_t **taken)
{
	*alias = 0;
	*taken = NULL;
	if (len > NODE_MAX)
		return ctl_msg(c, 2, "%s: %zu bytes; a config node holds at most %u (ZooKeeper's jute.maxbuffer); nothing "
		               "written", label, len, NODE_MAX);
	char why[600];
	conf_diags_t *d = NULL;
	conf_job_t *cj = conf_node_take(buf, len, label, job, n->root, NULL, why, sizeof why, &d);
	size_t bad = 0;
	for (size_t k = 0; d && k < conf_diags_count(d); k++) {
		const conf_diag_t *g = conf_diags_get(d, k);
		fprintf(c->err, "%s\n", g->text);
		if (g->level != CONF_DIAG_WARN) bad++;
	}
	if (d && conf_diags_dropped(d)) fprintf(c->err, "%s: ... and %zu more\n", label, conf_diags_dropped(d));
	if (cj && cj->tz_error) {
		fprintf(c->err, "%s: timeZone: give a zone this host knows (a zone id Java does not know would run the job in "
		        "GMT on ElasticJob's instances and ejob's)\n", label);
		bad++;
	}
	if (!cj && !bad) fprintf(c->err, "%s: %s\n", label, why);
	conf_diags_free(d);
	if (!cj || bad) {
		conf_job_free(cj);
		return ctl_msg(c, 2, "%s is not a config node that job '%s' can take (above); nothing written", label, job);
	}
	conf_unacted_t u[CONF_UNACTED_MAX];
	size_t nu = conf_job_unacted(cj, u);
	for (size_t k = 0; k < nu; k++) fprintf(c->err, "%s: warning: %s: %s\n", label, u[k].key, u[k].text);
	*alias = cj->strategy.alias;
	*taken = cj;
	return 0;
}

/* zoo_set with the version read before: 0 written; 1 after a message (the conflict, or a failed
 * request). *conflict: the node changed (or went) meanwhile. */
static int write_node(struct ctl *c, const char *job, const struct node *n, const char *buf, size_t len, int version,
                      int *conflict, struct ctl_set_res *res)
{
	struct Stat st;
	*conflict = 0;
	int rc = zoo_set2(c->zh, n->path, buf, (int)len, version, &st);
	if (rc == ZOK) {
		fprintf(c->out, "%s: written (version %d)\n", n->path, st.version);
		if (res) {
			res->version = st.version;
			res->changed = 1;
			/* the keys that differ, as ElasticJob reads both nodes (for the API's answer and audit) */
			conf_job_t *a = conf_node_parse(n->data, n->len, n->path, NULL), *b = conf_node_parse(buf, len, n->path, NULL);
			if (a && b) res->nkeys = conf_job_diff(a, b, res->keys, CTL_SET_KEYS_MAX);
			else res->keys[0] = "(a node that does not parse)", res->nkeys = 1;
			if (res->nkeys > CTL_SET_KEYS_MAX) res->nkeys = CTL_SET_KEYS_MAX;
			conf_job_free(a);
			conf_job_free(b);
		}
		ctl_warn_overwrite(c, job, n->data, n->len, buf, len);
		return 0;
	}
	if (rc == ZBADVERSION || rc == ZNONODE) {
		*conflict = 1;
		struct Stat now;
		int e = ctl_exists(c, n->path, &now);
		if (e == ZOK)
			return ctl_msg(c, 1, "%s changed meanwhile (version %d when read, now %d, at %lld ms since the epoch): "
			               "nothing written", n->path, version, now.version, (long long)now.mtime);
		return ctl_msg(c, 1, "%s was deleted meanwhile: nothing written", n->path);
	}
	return ctl_fail(c, rc, "cannot write", n->path);
}

/* ---- get ------------------------------------------------------------------------------------ */

static int cmd_get(struct ctl *c, int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return 2;
	}
	if (c->json) return ctl_msg(c, 2, "get prints the node as stored; 'ejobctl dump JOB --json' gives it with its stat");
	int r;
	if ((r = ctl_connect(c))) return r;
	if ((r = ctl_need_job(c, argv[1]))) return r;
	struct node n;
	memset(&n, 0, sizeof n);
	if ((r = read_node(c, argv[1], &n))) return r;
	if (n.len && fwrite(n.data, 1, n.len, stdout) != n.len) r = 1;
	if (fflush(stdout)) r = ctl_msg(c, 1, "stdout: %s", strerror(errno));
	free(n.data);
	return r;
}

/* ---- set ------------------------------------------------------------------------------------ */

static int read_all(FILE *f, char **buf, size_t *len)
{
	size_t cap = 8192, n = 0;
	char *b = malloc(cap + 1);
	if (!b) return -1;
	for (;;) {
		if (n == cap) {
			if (cap > CONF_MAX_FILE_BYTES) break;
			char *nb = realloc(b, 2 * cap + 1);
			if (!nb) {
				free(b);
				errno = ENOMEM;
				return -1;
			}
			b = nb;
			cap *= 2;
		}
		size_t got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				free(b);
				errno = EIO;
				return -1;
			}
			break;
		}
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

/* The node to write, from buf (label: FILE): checked, its workflows too (with the namespace's
 * other jobs). 0 with *out (malloc'd, or buf itself), or the exit status after a message. */
static int prepare(struct ctl *c, const char *job, const struct node *n, const char *label, char *buf,
                   size_t len, char **out, size_t *outlen)
{
	*out = buf;
	*outlen = len;
	if (is_conf_file(buf, len)) {
		int r = from_conf_file(c, job, label, buf, len, out, outlen);
		if (r) return r;
	}
	int alias;
	conf_job_t *cj;
	int r = check(c, job, n, label, *out, *outlen, &alias, &cj);
	if (!r) {
		const conf_job_t *one = cj;
		r = ctl_flow_check(c, &one, 1, NULL, 0);
	}
	conf_job_free(cj);
	if (!r && alias) {
		/* ejob's old strategy name: written as ElasticJob's, which ElasticJob does not fail on */
		size_t fl;
		char *fixed = conf_node_fix_strategy(*out, *outlen, &fl);
		if (fixed) {
			fprintf(c->err, "%s: jobShardingStrategyType is written as ElasticJob's name\n", label);
			if (*out != buf) free(*out);
			*out = fixed;
			*outlen = fl;
		}
	}
	if (r && *out != buf) {
		free(*out);
		*out = buf;
	}
	return r;
}

static int cmd_set(struct ctl *c, int argc, char **argv)
{
	const char *job = NULL, *file = NULL;
	long want = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--version") || !strncmp(a, "--version=", 10)) {
			const char *v = a[9] == '=' ? a + 10 : i + 1 < argc ? argv[++i] : NULL;
			char *e;
			errno = 0;
			want = v ? strtol(v, &e, 10) : -1;
			if (!v || errno || e == v || *e || want < 0 || want > 0x7fffffff)
				return ctl_msg(c, 2, "--version takes the node's version as 'ejobctl dump JOB' shows it (got '%s')",
				               v ? v : "");
		} else if (a[0] == '-' && a[1]) {
			ctl_msg(c, 2, "unknown option '%s'", a);
			usage(stderr);
			return 2;
		} else if (!job) {
			job = a;
		} else if (!file) {
			file = a;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (!file) {
		usage(stderr);
		return 2;
	}
	if (c->json) return ctl_msg(c, 2, "--json is not an option of config set");
	char *buf;
	size_t len;
	int rr = !strcmp(file, "-") ? read_all(stdin, &buf, &len) : conf_read_file(file, &buf, &len);
	if (rr < 0) return ctl_msg(c, strcmp(file, "-") ? 2 : 1, "%s: cannot read: %s", file, strerror(errno));
	const char *label = strcmp(file, "-") ? file : "(stdin)";
	int conflict;
	int r = ctl_config_set(c, job, label, buf, len, want, &conflict, NULL);
	free(buf);
	return r;
}

int ctl_config_set(struct ctl *c, const char *job, const char *label, char *buf, size_t len, long want, int *conflict,
                   struct ctl_set_res *res)
{
	int r;
	*conflict = 0;
	if (res) memset(res, 0, sizeof *res), res->version = -1;
	struct node n;
	memset(&n, 0, sizeof n);
	char *out = NULL;
	size_t outlen = 0;
	if ((r = ctl_connect(c)) || (r = ctl_need_job(c, job)) || (r = read_node(c, job, &n))) goto done;
	int version = n.st.version;
	if (want >= 0 && want != version) {
		r = ctl_msg(c, 1, "%s is version %d, not %ld: it changed since you read it; nothing written", n.path, version,
		            want);
		*conflict = 1;
		goto done;
	}
	if ((r = prepare(c, job, &n, label, buf, len, &out, &outlen))) goto done;
	if (outlen == n.len && !memcmp(out, n.data, outlen)) {
		fprintf(c->out, "%s: no change (version %d); nothing written\n", n.path, version);
		if (res) res->version = version;
		r = 0;
		goto done;
	}
	r = write_node(c, job, &n, out, outlen, version, conflict, res);
done:
	if (out && out != buf) free(out);
	free(n.data);
	return r;
}

/* ---- edit ----------------------------------------------------------------------------------- */

static const char *editor(void)
{
	const char *e = getenv("EDITOR");
	if (!e || !*e) e = getenv("VISUAL");
	return e && *e ? e : "vi";
}

/* Run the editor on path through the shell (so EDITOR may hold arguments, as git runs it):
 * its exit status, or -1 (a message said why). */
static int run_editor(const struct ctl *c, const char *ed, const char *path)
{
	char cmd[4096];
	if ((size_t)snprintf(cmd, sizeof cmd, "%s \"$@\"", ed) >= sizeof cmd) {
		ctl_msg(c, 1, "the editor command is too long");
		return -1;
	}
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	sigemptyset(&ign.sa_mask);
	/* the editor gets ^C; ejobctl waits for it */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	pid_t pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		execl("/bin/sh", "sh", "-c", cmd, ed, path, (char *)NULL);
		fprintf(stderr, "ejobctl %s: /bin/sh: %s\n", c->cmd, strerror(errno));
		_exit(127);
	}
	int st = -1;
	if (pid < 0) ctl_msg(c, 1, "fork: %s", strerror(errno));
	else
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
		}
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	if (pid < 0) return -1;
	if (WIFEXITED(st)) return WEXITSTATUS(st);
	ctl_msg(c, 1, "the editor '%s' ended by signal %d", ed, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return -1;
}

/* "Edit again? [Y/n]": 1 yes, 0 no (or no answer: end of input). */
static int again(void)
{
	fprintf(stderr, "Edit again? [Y/n] ");
	fflush(stderr);
	char line[64];
	if (!fgets(line, sizeof line, stdin)) {
		fputc('\n', stderr);
		return 0;
	}
	char *s = line;
	while (*s == ' ' || *s == '\t') s++;
	return *s != 'n' && *s != 'N' && *s != 'q' && *s != 'Q';
}

static int cmd_edit(struct ctl *c, int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return 2;
	}
	if (c->json) return ctl_msg(c, 2, "--json is not an option of config edit");
	const char *job = argv[1];
	int r;
	if ((r = ctl_connect(c)) || (r = ctl_need_job(c, job))) return r;
	struct node n;
	memset(&n, 0, sizeof n);
	if ((r = read_node(c, job, &n))) return r;
	const char *td = getenv("TMPDIR");
	char tmp[CTL_PATH_MAX + 64];
	if ((size_t)snprintf(tmp, sizeof tmp, "%s/ejobctl-%s-XXXXXX.yaml", td && *td ? td : "/tmp", job) >= sizeof tmp) {
		free(n.data);
		return ctl_msg(c, 1, "TMPDIR is too long");
	}
	int fd = mkostemps(tmp, 5, O_CLOEXEC);
	if (fd < 0 || write(fd, n.data, n.len) != (ssize_t)n.len || close(fd)) {
		r = ctl_msg(c, 1, "%s: cannot write: %s", tmp, strerror(errno));
		if (fd >= 0) unlink(tmp);
		free(n.data);
		return r;
	}
	const char *ed = editor();
	for (;;) {
		int st = run_editor(c, ed, tmp);
		if (st != 0) {
			if (st > 0) ctl_msg(c, 1, "the editor '%s' exited with status %d", ed, st);
			r = ctl_msg(c, 1, "nothing written; your edit is kept in %s", tmp);
			break;
		}
		char *buf;
		size_t len;
		if (conf_read_file(tmp, &buf, &len) < 0) {
			r = ctl_msg(c, 1, "%s: cannot read: %s; nothing written", tmp, strerror(errno));
			break;
		}
		if (len == n.len && !memcmp(buf, n.data, len)) {
			free(buf);
			printf("%s: no change; nothing written\n", n.path);
			unlink(tmp);
			r = 0;
			break;
		}
		char *out;
		size_t outlen;
		r = prepare(c, job, &n, tmp, buf, len, &out, &outlen);
		if (r == 2) {
			free(buf);
			if (again()) continue;
			r = ctl_msg(c, 2, "your edit is kept in %s ('ejobctl config set %s %s' writes it once it is fixed)", tmp,
			            job, tmp);
			break;
		}
		int conflict = 0;
		if (!r) r = write_node(c, job, &n, out, outlen, n.st.version, &conflict, NULL);
		if (out != buf) free(out);
		free(buf);
		if (!r) unlink(tmp);
		else if (conflict)
			ctl_msg(c, 1, "your edit is kept in %s: 'ejobctl config edit %s' starts again from the node as it is "
			        "now; 'ejobctl config set %s %s' writes your edit over the change", tmp, job, job, tmp);
		else
			ctl_msg(c, 1, "your edit is kept in %s", tmp);
		break;
	}
	free(n.data);
	return r;
}

/* ---- the command ---------------------------------------------------------------------------- */

int ejobctl_config(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	static char name[32];
	const char *sub = argv[1];
	int (*fn)(struct ctl *, int, char **) = !strcmp(sub, "get") ? cmd_get : !strcmp(sub, "set") ? cmd_set
	                                        : !strcmp(sub, "edit") ? cmd_edit : NULL;
	if (!fn) {
		fprintf(stderr, "ejobctl config: unknown subcommand '%s' (get, set or edit)\n", sub);
		usage(stderr);
		return 2;
	}
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	snprintf(name, sizeof name, "config %s", sub);
	struct ctl c;
	int ac = argc - 1;
	int r = ctl_options(&c, name, &ac, argv + 1);
	if (!r) r = fn(&c, ac, argv + 1);
	ctl_close(&c);
	return r;
}
