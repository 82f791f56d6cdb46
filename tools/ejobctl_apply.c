/* tools/ejobctl_apply.c: ejobctl apply -f FILE [--dry-run] [--prune [--force]]: the jobs of a file
 * made the jobs of the namespace, each as its config node (/{ns}/{job}/config), without touching
 * any machine's file.
 *
 * FILE is a configuration file's jobs: map (a whole ejob configuration file may be given: only
 * its jobs are taken; without a regCenter, the cluster's). It is checked exactly as a supervisor
 * checks its file (conf_parse: the same messages and lines); any error and nothing is written,
 * exit 2. Each job needs a label: supervisors adopt jobs by label, and --prune finds the file's
 * jobs by theirs. Its workflows (dependsOn) are checked with the namespace's other jobs, less what
 * --prune removes (ctl_flow_check): a cycle or a second root they would make is refused, exit 2.
 *
 * Each job is created (its root node and config node in one multi), updated (the node set at the
 * version read: a change made meanwhile is never overwritten; that job fails, exit 1, the others
 * go on) or left alone when its node says the same ("unchanged"). --prune removes the jobs whose
 * config node's label is one of the file's labels and that the file does not have, as `ejobctl
 * remove JOB` does (refused while an instance of the job is online, unless --force). --dry-run
 * reads and says what would be done, per job, with the keys that change and their old and new
 * values, and writes nothing.
 *
 * ctl_job_put is the one write of a job's config node, shared with the HTTP API
 * (tools/ejobctl_job.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_job.h"
#include "tools/ejobctl_zk.h"

/* ZooKeeper's jute.maxbuffer (1 MiB) less room for the request around the data (config set's) */
#define NODE_MAX ((1u << 20) - 4096u)

/* ---- ctl_job_put ------------------------------------------------------------------------------ */

const char *ctl_put_action_name(enum ctl_put_action a)
{
	switch (a) {
	case CTL_PUT_CREATE: return "create";
	case CTL_PUT_UPDATE: return "update";
	case CTL_PUT_UNCHANGED: return "unchanged";
	case CTL_PUT_CONFLICT: return "conflict";
	}
	return "?";
}

void ctl_put_free(struct ctl_put *p)
{
	free(p->old_node);
	free(p->new_node);
	memset(p, 0, sizeof *p);
}

/* The root node's data, as the supervisor writes it at registration (coord_reg.c) */
static const char *root_type(const conf_job_t *j)
{
	switch (j->type) {
	case CONF_JOB_SCRIPT: return "SCRIPT";
	case CONF_JOB_NATIVE: return "NATIVE";
	case CONF_JOB_EXTERNAL: return "EXTERNAL";
	case CONF_JOB_HTTP: return "HTTP";
	case CONF_JOB_DATAFLOW: return "DATAFLOW";
	default: return "";
	}
}

/* err: the message for a node that changed between the read and the write */
static int conflict(struct ctl *c, const char *path, int version, struct ctl_put *out, char *err, size_t errsz)
{
	struct Stat now;
	out->action = CTL_PUT_CONFLICT;
	int e = ctl_exists(c, path, &now);
	if (e == ZOK && version < 0)
		snprintf(err, errsz, "%s was created meanwhile (now version %d): nothing written", path, now.version);
	else if (e == ZOK)
		snprintf(err, errsz, "%s changed meanwhile (version %d when read, now %d): nothing written", path, version,
		         now.version);
	else
		snprintf(err, errsz, "%s was deleted meanwhile: nothing written", path);
	return 1;
}

int ctl_job_put(struct ctl *c, const conf_job_t *j, int expected_version, int dry_run, struct ctl_put *out,
                char *err, size_t errsz)
{
	char path[CTL_PATH_MAX], root[CTL_PATH_MAX];
	size_t nlen;
	memset(out, 0, sizeof *out);
	out->version = -1;
	*err = 0;
	out->new_node = conf_node_emit(j, &nlen);
	if (!out->new_node) return snprintf(err, errsz, "out of memory"), 1;
	if (nlen > NODE_MAX) {
		snprintf(err, errsz, "job '%s': its config node would be %zu bytes; a node holds at most %u (ZooKeeper's "
		         "jute.maxbuffer)", j->name, nlen, NODE_MAX);
		return 2;
	}
	ctl_path(c, path, "/%s/config", j->name);
	ctl_path(c, root, "/%s", j->name);
	struct Stat st;
	char *old = NULL;
	int rc = c->ns_missing ? ZNONODE : ctl_get(c, path, &old, &st);
	if (rc != ZOK && rc != ZNONODE) {
		snprintf(err, errsz, "cannot read %s: %s", path, zerror(rc));
		return 1;
	}
	if (rc == ZNONODE) {
		if (expected_version >= 0) {
			snprintf(err, errsz, "job '%s' has no config node (%s), so no version %d", j->name, path, expected_version);
			return 2;
		}
		out->action = CTL_PUT_CREATE;
		if (dry_run) return 0;
		int has_root = !c->ns_missing && ctl_exists(c, root, NULL) == ZOK;
		zoo_op_t ops[2];
		zoo_op_result_t res[2];
		const struct ACL_vector *acl = c->digest ? &ZOO_CREATOR_ALL_ACL : &ZOO_OPEN_ACL_UNSAFE;
		const char *type = root_type(j);
		int n = 0;
		if (!has_root) zoo_create_op_init(&ops[n++], root, type, (int)strlen(type), acl, 0, NULL, 0);
		zoo_create_op_init(&ops[n++], path, out->new_node, (int)nlen, acl, 0, NULL, 0);
		rc = zoo_multi(c->zh, n, ops, res);
		if (rc == ZNODEEXISTS || (rc == ZNONODE && has_root)) return conflict(c, path, -1, out, err, errsz);
		if (rc != ZOK) {
			snprintf(err, errsz, "cannot create %s: %s: nothing written", path, zerror(rc));
			return 1;
		}
		out->version = 0;
		return 0;
	}
	out->old_node = old;
	out->version = st.version;
	if (expected_version == CTL_VERSION_NONE) {
		out->action = CTL_PUT_CONFLICT;
		snprintf(err, errsz, "%s exists (version %d): created meanwhile? nothing written", path, st.version);
		return 1;
	}
	if (expected_version >= 0 && expected_version != st.version) {
		out->action = CTL_PUT_CONFLICT;
		snprintf(err, errsz, "%s is version %d, not %d: it changed since it was read; nothing written", path,
		         st.version, expected_version);
		return 1;
	}
	size_t olen = st.dataLength > 0 ? (size_t)st.dataLength : 0;
	int same = olen == nlen && !memcmp(old, out->new_node, nlen);
	conf_job_t *oj = NULL;
	if (!same) {
		/* parsed as ElasticJob takes it: a node another tool wrote in its own form may say the same */
		oj = conf_node_parse(old, olen, path, NULL);
		if (oj) {
			same = conf_job_equal(oj, j);
			out->nkeys = conf_job_diff(oj, j, out->keys, CTL_PUT_KEYS_MAX);
		} else {
			out->keys[0] = "(the node does not parse)";
			out->nkeys = 1;
		}
	}
	conf_job_free(oj);
	if (same) {
		out->action = CTL_PUT_UNCHANGED;
		out->nkeys = 0;
		return 0;
	}
	out->action = CTL_PUT_UPDATE;
	if (dry_run) return 0;
	/* $EJOBCTL_AFTER_READ: a shell command run between the read and the write (tests: a change
	 * made meanwhile) */
	const char *hook = getenv("EJOBCTL_AFTER_READ");
	if (hook && *hook && system(hook) != 0) fprintf(stderr, "ejobctl: EJOBCTL_AFTER_READ failed\n");
	struct Stat nst;
	rc = zoo_set2(c->zh, path, out->new_node, (int)nlen, st.version, &nst);
	if (rc == ZBADVERSION || rc == ZNONODE) return conflict(c, path, st.version, out, err, errsz);
	if (rc != ZOK) {
		snprintf(err, errsz, "cannot write %s: %s: nothing written", path, zerror(rc));
		return 1;
	}
	out->version = nst.version;
	ctl_warn_overwrite(c, j->name, old, olen, out->new_node, nlen);
	return 0;
}

/* ---- the file ----------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "usage: ejobctl apply -f FILE [--dry-run] [--prune [--force]] [--json]\n"
	        "  with --zk HOSTS --namespace NS [--digest USER:PASS] or -c FILE; [--timeout SECONDS]\n\n"
	        "Makes the jobs of FILE ('-': stdin) the namespace's: each job's config node is created, or\n"
	        "updated where it differs (at the version read: a change made meanwhile is never overwritten),\n"
	        "or left alone. FILE is a configuration file's jobs: map (of a whole configuration file, only\n"
	        "its jobs are taken), checked as a supervisor checks its file; each job needs a label.\n"
	        "  --dry-run  say what would be done (the keys that change, old and new), write nothing\n"
	        "  --prune    also remove the jobs whose label is one of the file's and that it does not have\n"
	        "             (as 'ejobctl remove JOB'; --force: also while an instance of it is online)\n"
	        "Exit status: 0 done, 1 runtime failure or a job changed meanwhile (the others are written),\n"
	        "2 usage or a file that does not pass the check (nothing written).\n");
}

static int read_stdin(char **buf, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *b = malloc(cap + 1);
	if (!b) return -1;
	for (;;) {
		if (n == cap) {
			if (cap > CONF_MAX_FILE_BYTES) break;
			char *nb = realloc(b, 2 * cap + 1);
			if (!nb) return free(b), -1;
			b = nb, cap *= 2;
		}
		size_t got = fread(b + n, 1, cap - n, stdin);
		n += got;
		if (!got) {
			if (ferror(stdin)) return free(b), errno = EIO, -1;
			break;
		}
	}
	b[n] = 0;
	*buf = b, *len = n;
	return 0;
}

/* FILE checked as a supervisor checks its file, with the cluster's regCenter where it has none:
 * the config, or NULL (exit 2) after the file's messages */
static conf_t *load(struct ctl *c, const char *file)
{
	char *buf;
	size_t len;
	int stdin_ = !strcmp(file, "-");
	if ((stdin_ ? read_stdin(&buf, &len) : conf_read_file(file, &buf, &len)) < 0) {
		ctl_msg(c, 2, "%s: cannot read: %s", file, strerror(errno));
		return NULL;
	}
	const char *label = stdin_ ? "(stdin)" : file;
	conf_opts_t o;
	conf_opts_system(&o);
	o.server_lists = c->hosts;      /* FILE's regCenter is not where its jobs go: the cluster's is */
	o.namespace = c->ns;
	o.flow_open = true;             /* dependsOn may name the namespace's jobs: checked with them (ctl_flow_check) */
	conf_diags_t *d = NULL;
	conf_t *cf = conf_parse(buf, len, label, &o, &d);
	free(buf);
	for (size_t k = 0; d && k < conf_diags_count(d); k++) fprintf(stderr, "%s\n", conf_diags_get(d, k)->text);
	if (d && conf_diags_dropped(d)) fprintf(stderr, "%s: ... and %zu more\n", label, conf_diags_dropped(d));
	conf_diags_free(d);
	if (!cf) {
		ctl_msg(c, 2, "%s does not pass the check (above): nothing written", label);
		return NULL;
	}
	size_t bad = 0;
	for (size_t k = 0; k < cf->n_jobs; k++) {
		const conf_job_t *j = &cf->jobs[k];
		if (j->label && *j->label) continue;
		fprintf(stderr, "%s:%u: jobs.%s: no label; a job made by apply needs one (label: NAME under jobs.%s): "
		        "supervisors adopt jobs by label (supervisor.labels), and --prune finds the file's jobs by it\n",
		        label, j->line, j->name, j->name);
		bad++;
	}
	if (!cf->n_jobs) {
		ctl_msg(c, 2, "%s has no jobs: nothing to apply", label);
		conf_free(cf);
		return NULL;
	}
	if (bad) {
		ctl_msg(c, 2, "%s: %zu job%s without a label (above): nothing written", label, bad, bad == 1 ? "" : "s");
		conf_free(cf);
		return NULL;
	}
	return cf;
}

/* ---- old and new values: the node's top-level keys, each with its lines -------------------------- */

struct block {
	const char *key;            /* at the start of a line, up to ':' */
	size_t klen;
	const char *text;           /* the whole block, lines under it included */
	size_t len;
};

static size_t blocks(const char *y, struct block *b, size_t max)
{
	size_t n = 0;
	for (const char *s = y; s && *s && n < max;) {
		const char *e = s;
		do {
			e = strchr(e, '\n');
			e = e ? e + 1 : s + strlen(s);
		} while (*e && (*e == ' ' || *e == '-'));
		const char *colon = memchr(s, ':', (size_t)(e - s));
		b[n++] = (struct block){ s, colon ? (size_t)(colon - s) : (size_t)(e - s), s, (size_t)(e - s) };
		s = *e ? e : NULL;
	}
	return n;
}

static const struct block *find_block(const struct block *b, size_t n, const struct block *k)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].klen == k->klen && !memcmp(b[i].key, k->key, k->klen)) return &b[i];
	return NULL;
}

/* each line of a block, prefixed ("- " old, "+ " new) and indented */
static void print_block(FILE *f, const struct block *b, const char *sign)
{
	for (const char *s = b->text, *end = b->text + b->len; s < end;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		size_t l = e ? (size_t)(e - s) : (size_t)(end - s);
		fprintf(f, "    %s%.*s\n", sign, (int)l, s);
		s += l + 1;
	}
}

#define BLOCKS_MAX 64

/* The old and new value of every top-level key that differs (both nodes sorted by key) */
static void print_change(FILE *f, const char *old, const char *new_)
{
	struct block ob[BLOCKS_MAX], nb[BLOCKS_MAX];
	size_t no = blocks(old, ob, BLOCKS_MAX), nn = blocks(new_, nb, BLOCKS_MAX);
	for (size_t i = 0; i < no; i++) {
		const struct block *m = find_block(nb, nn, &ob[i]);
		if (m && m->len == ob[i].len && !memcmp(m->text, ob[i].text, m->len)) continue;
		print_block(f, &ob[i], "- ");
		if (m) print_block(f, m, "+ ");
	}
	for (size_t i = 0; i < nn; i++)
		if (!find_block(ob, no, &nb[i])) print_block(f, &nb[i], "+ ");
}

/* ---- --prune: the namespace's jobs with one of the file's labels that the file does not have ---- */

static int has_label(const conf_t *cf, const char *label)
{
	for (size_t k = 0; label && k < cf->n_jobs; k++)
		if (!strcmp(cf->jobs[k].label, label)) return 1;
	return 0;
}

/* names of the jobs to remove into *out (n of them; ctl_strv_free). 0, or 1 after a message. */
static int prune_list(struct ctl *c, const conf_t *cf, char ***out, int *nout)
{
	char **jobs;
	int n;
	*out = NULL, *nout = 0;
	if (c->ns_missing) return 0;
	int r = ctl_jobs(c, &jobs, &n);
	if (r) return r;
	struct ctl_read *rd = calloc((size_t)n + 1, sizeof *rd);
	char **paths = calloc((size_t)n + 1, sizeof *paths);
	if (!rd || !paths) ctl_oom();
	for (int i = 0; i < n; i++) {
		char p[CTL_PATH_MAX];
		CTL_NEED(paths[i] = strdup(ctl_path(c, p, "/%s/config", jobs[i])));
		rd[i] = (struct ctl_read){ .op = CTL_GET, .path = paths[i] };
	}
	ctl_read_many(c, rd, n);
	int k = 0;
	for (int i = 0; i < n; i++) {
		int drop = 0;
		if (rd[i].rc == ZOK && !conf_find_job(cf, jobs[i])) {
			conf_job_t *j = conf_node_parse(rd[i].data, strlen(rd[i].data), paths[i], NULL);
			drop = j && has_label(cf, j->label);
			conf_job_free(j);
		} else if (rd[i].rc != ZOK && rd[i].rc != ZNONODE && !r) {
			r = ctl_fail(c, rd[i].rc, "cannot read", paths[i]);
		}
		free(rd[i].data);
		if (drop) jobs[k++] = jobs[i];
		else free(jobs[i]);
	}
	ctl_strv_free(paths, n);
	free(rd);
	if (r) {
		ctl_strv_free(jobs, k);
		return r;
	}
	*out = jobs, *nout = k;
	return 0;
}

/* ---- the command -------------------------------------------------------------------------------- */

struct row {
	const char *job;
	const char *action;         /* create, update, unchanged, conflict, failed, remove, removed */
	struct ctl_put put;
	char note[600];             /* why it failed */
};

static void keys_text(const struct row *w, char *buf, size_t len)
{
	*buf = 0;
	size_t l = 0;
	for (size_t k = 0; k < w->put.nkeys && k < CTL_PUT_KEYS_MAX && l < len; k++)
		l += (size_t)snprintf(buf + l, len - l, "%s%s", k ? "," : "", w->put.keys[k]);
}

static void print_rows(const struct ctl *c, struct row *rows, int n, int dry)
{
	if (c->json) {
		struct jw w;
		jw_begin(&w, stdout);
		jw_arr(&w);
		for (int i = 0; i < n; i++) {
			jw_obj(&w);
			jw_key(&w, "job"), jw_str(&w, rows[i].job);
			jw_key(&w, "action"), jw_str(&w, rows[i].action);
			jw_key(&w, "keys"), jw_arr(&w);
			for (size_t k = 0; k < rows[i].put.nkeys && k < CTL_PUT_KEYS_MAX; k++) jw_str(&w, rows[i].put.keys[k]);
			jw_end(&w);
			if (rows[i].put.version >= 0) jw_key(&w, "version"), jw_int(&w, rows[i].put.version);
			if (dry && rows[i].put.action == CTL_PUT_UPDATE) {
				jw_key(&w, "old"), jw_str(&w, rows[i].put.old_node);
				jw_key(&w, "new"), jw_str(&w, rows[i].put.new_node);
			}
			if (*rows[i].note) jw_key(&w, "error"), jw_str(&w, rows[i].note);
			jw_end(&w);
		}
		jw_end(&w);
		return;
	}
	struct ctl_table *t = ctl_table_new(3, "job", "action", "keys");
	for (int i = 0; i < n; i++) {
		char keys[1024];
		keys_text(&rows[i], keys, sizeof keys);
		ctl_table_row(t, rows[i].job, rows[i].action, *keys ? keys : NULL);
	}
	ctl_table_print(t, stdout);
	for (int i = 0; dry && i < n; i++) {
		if (rows[i].put.action != CTL_PUT_UPDATE || !rows[i].put.old_node) continue;
		printf("\n%s:\n", rows[i].job);
		print_change(stdout, rows[i].put.old_node, rows[i].put.new_node);
	}
	if (dry) printf("(dry run: nothing written)\n");
}

int ejobctl_apply(int argc, char **argv)
{
	const char *file = NULL;
	int dry = 0, prune = 0, force = 0;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	struct ctl c;
	int r = ctl_options(&c, "apply", &argc, argv);
	if (r) {
		ctl_close(&c);
		return r;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-f") || !strcmp(a, "--file")) {
			if (i + 1 >= argc) {
				ctl_close(&c);
				return ctl_msg(&c, 2, "%s needs a file ('-': stdin)", a);
			}
			file = argv[++i];
		} else if (!strncmp(a, "--file=", 7)) {
			file = a + 7;
		} else if (!strcmp(a, "--dry-run")) {
			dry = 1;
		} else if (!strcmp(a, "--prune")) {
			prune = 1;
		} else if (!strcmp(a, "--force")) {
			force = 1;
		} else {
			ctl_msg(&c, 2, "unexpected argument '%s'", a);
			usage(stderr);
			ctl_close(&c);
			return 2;
		}
	}
	if (!file) {
		ctl_msg(&c, 2, "which file? apply -f FILE ('-': stdin)");
		usage(stderr);
		ctl_close(&c);
		return 2;
	}
	if (force && !prune) {
		ctl_close(&c);
		return ctl_msg(&c, 2, "--force is for --prune's removals; without --prune nothing is removed");
	}
	conf_t *cf = load(&c, file);
	if (!cf) {
		ctl_close(&c);
		return 2;
	}
	c.ns_may_be_new = 1;
	if ((r = ctl_connect(&c))) {
		conf_free(cf);
		return r;
	}
	char **gone = NULL;
	int ngone = 0;
	if (prune && (r = prune_list(&c, cf, &gone, &ngone))) {
		conf_free(cf);
		ctl_close(&c);
		return r;
	}
	/* the workflows as the namespace would hold them: refused before anything is written */
	const conf_job_t **mine = calloc(cf->n_jobs + 1, sizeof *mine);
	CTL_NEED(mine);
	for (size_t k = 0; k < cf->n_jobs; k++) mine[k] = &cf->jobs[k];
	r = ctl_flow_check(&c, mine, cf->n_jobs, gone, ngone);
	free(mine);
	if (!r && c.ns_missing && !dry) r = ctl_ns_create(&c);   /* a cluster's first job: its namespace */
	if (r) {
		ctl_strv_free(gone, ngone);
		conf_free(cf);
		ctl_close(&c);
		return r;
	}
	struct row *rows = calloc(cf->n_jobs + (size_t)ngone + 1, sizeof *rows);
	CTL_NEED(rows);
	int n = 0, status = 0;
	for (size_t k = 0; k < cf->n_jobs; k++) {
		struct row *w = &rows[n++];
		w->job = cf->jobs[k].name;
		int s = ctl_job_put(&c, &cf->jobs[k], CTL_VERSION_ANY, dry, &w->put, w->note, sizeof w->note);
		w->action = s && w->put.action != CTL_PUT_CONFLICT ? "failed" : ctl_put_action_name(w->put.action);
		if (s) {
			ctl_msg(&c, s, "job '%s': %s", w->job, w->note);
			if (s > status) status = s;
		} else if (!dry && w->put.action == CTL_PUT_CREATE) {
			w->action = "created";
		} else if (!dry && w->put.action == CTL_PUT_UPDATE) {
			w->action = "updated";
		}
	}
	for (int i = 0; i < ngone; i++) {
		struct row *w = &rows[n++];
		w->job = gone[i];
		w->put.version = -1;
		if (dry) {
			w->action = "remove";
			continue;
		}
		int s = ctl_job_remove(&c, gone[i], force, NULL);
		w->action = s ? "failed" : "removed";
		if (s) {
			snprintf(w->note, sizeof w->note, "not removed (above)");
			if (s > status) status = s;
		}
	}
	print_rows(&c, rows, n, dry);
	for (int i = 0; i < n; i++) ctl_put_free(&rows[i].put);
	free(rows);
	ctl_strv_free(gone, ngone);
	conf_free(cf);
	ctl_close(&c);
	return status;
}
