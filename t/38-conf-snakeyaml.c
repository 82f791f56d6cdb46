/* t/38-conf-snakeyaml.c: ejob's config nodes against ElasticJob's YAML engine itself.
 *
 * Generates jobs full of the strings that decide SnakeYAML's output (implicit types that must
 * be quoted, indicators, quotes, long text split at 80 columns, multi-line and unprintable
 * strings, keys too long to be simple, props whose Java hashes collide so that the
 * ConcurrentHashMap behind java.util.Properties resizes and treeifies), writes each with
 * conf_node_emit, and has SnakeYAML (t/java/ConfNodeCheck.java, as ElasticJob's YamlEngine)
 * load and dump it again, with props put into java.util.Properties in the order ejob puts them
 * (docs/config.md): the bytes must be the same, and ElasticJob must be able to load the node.
 * Every node must also parse back to an equal job. Needs java and libyaml-snake-java
 * (tools/install-deps).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/conf.h"
#include "t/tap.h"

#define SNAKEYAML "/usr/share/java/snakeyaml.jar"
#define NJOBS 400

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* an arena of generated strings, freed at exit */
static char *strs[200000];
static size_t nstrs;

static char *keep(char *s)
{
	if (nstrs < sizeof strs / sizeof *strs) strs[nstrs++] = s;
	return s;
}

static const char *const pieces[] = {
	"a", "word", "ejob", "hello world", " ", "  ", "#", " #x", ":", ": ", "-", "- ", "?", "? ",
	"'", "\"", "\\", "[", "]", "{", "}", ",", "&", "*", "!", "|", ">", "%", "@", "`", "\t",
	"\n", "\n\n", "\r", "\x01", "\x7f", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
	"\xe2\x80\xa8", "\xe2\x80\xa9", "\xc2\xa0", "\xef\xbb\xbf", "---", "...", "=", "0=a,1=b",
	"true", "yes", "No", "on", "OFF", "123", "-7", "0x1F", "0o17", "017", "0123", "1_000",
	"1.5", "1e5", ".5", ".inf", "-.Inf", ".NaN", "1:20", "2020-01-01", "2001-12-14 21:59:43.10 -5",
	"~", "null", "NULL", "<<", "", "0", "0b101", "+12", "script.command.line",
	"Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor",
	"incididunt ut labore et dolore magna aliqua", "x y", "a  b", " lead", "trail ",
};

static char *gen_str(int maxpieces)
{
	char buf[4096];
	size_t o = 0;
	int n = (int)rnd((uint32_t)maxpieces + 1);
	for (int i = 0; i < n; i++) {
		const char *p = pieces[rnd(sizeof pieces / sizeof *pieces)];
		size_t l = strlen(p);
		if (o + l >= sizeof buf) break;
		memcpy(buf + o, p, l);
		o += l;
	}
	buf[o] = '\0';
	return keep(strdup(buf));
}

/* 2^k strings with the same Java hash: each block is "Aa" or "BB" */
static char *collider(unsigned bits, int k, const char *prefix)
{
	char buf[256];
	int o = snprintf(buf, sizeof buf, "%s", prefix);
	for (int i = 0; i < k; i++) o += snprintf(buf + o, sizeof buf - (size_t)o, "%s", (bits >> i) & 1 ? "BB" : "Aa");
	return keep(strdup(buf));
}

static const char *const crons[] = { "0/5 * * * * ?", "0 0 2 * * ?", "0 0/10 * * * ?",
                                     "0 15 10 ? * MON-FRI", "0 0 12 1/5 * ? 2030" };
static const char *const zones[] = { "UTC", "Asia/Shanghai", "Europe/Berlin", "America/New_York" };
static const char *const strategies[] = { "AVG_ALLOCATION", "ODEVITY", "ROUND_ROBIN", "SINGLE_SHARDING_BALANCE" };

static void gen_job(conf_job_t *j, int idx)
{
	memset(j, 0, sizeof *j);
	char name[64];
	snprintf(name, sizeof name, "%s%d", idx % 3 == 0 ? "job" : idx % 3 == 1 ? "\xc3\xa9t\xc3\xa9-" : "J_", idx);
	j->name = keep(strdup(name));
	j->type = (conf_job_type_t)(idx % 4);            /* NONE too: a node ElasticJob wrote */
	j->cron = crons[rnd(5)];
	if (idx % 8 == 5) j->cron = NULL;               /* a one-off job: no cron in the node */
	j->time_zone = rnd(2) ? zones[rnd(4)] : NULL;
	j->sharding_total_count = 1 + rnd(20);
	j->items.parameters = "";
	if (rnd(2)) {
		char sip[512];
		size_t o = 0;
		for (uint32_t i = 0; i < j->sharding_total_count && o < 400; i++)
			if (rnd(2)) o += (size_t)snprintf(sip + o, sizeof sip - o, "%s%" PRIu32 "=%s", o ? "," : "", i,
			                                  rnd(2) ? "p" : "x y");
		sip[o] = '\0';
		j->items.parameters = keep(strdup(sip));
	}
	j->job_parameter = gen_str(idx % 10 == 0 ? 12 : 4);
	j->description = gen_str(idx % 7 == 0 ? 20 : 5);
	j->label = rnd(2) ? gen_str(3) : NULL;
	j->monitor_execution = rnd(2);
	j->failover = rnd(2);
	j->misfire = rnd(2);
	j->static_sharding = rnd(2);
	j->disabled = rnd(2);
	j->overwrite = rnd(2);
	j->max_time_diff_seconds = rnd(3) ? -1 : (int)rnd(100000) - 50000;
	j->reconcile_interval_minutes = (int)rnd(30) - 5;
	if (rnd(2)) {
		j->strategy.effective = (conf_strategy_t)rnd(4);
		j->strategy.type = strategies[j->strategy.effective];
	}
	j->executor.type = rnd(2) ? gen_str(2) : NULL;
	j->error_handler_type = rnd(2) ? "LOG" : NULL;
	size_t nl = rnd(4);
	const char **lt = calloc(nl + 1, sizeof *lt);
	for (size_t i = 0; i < nl; i++) lt[i] = gen_str(3);
	j->listener.types = (const char *const *)keep((char *)lt);
	j->listener.n_types = nl;
	j->timeout_seconds = (int)rnd(1000);
	j->max_retries = (int)rnd(5);
	/* props: plain random, or families of colliding keys */
	size_t np;
	int kind = (int)rnd(8);
	if (idx == 1) kind = 100;                           /* see below */
	np = kind < 5 ? rnd(12) : kind < 7 ? 9 + rnd(30) : 40 + rnd(80);
	if (kind == 100) np = 150;
	conf_kv_t *kv = calloc(np + 1, sizeof *kv);
	size_t n = 0;
	for (size_t i = 0; i < np; i++) {
		char *k;
		if (kind >= 5) k = collider((unsigned)i * 2654435761u % 4096, 12, i % 3 ? "" : "k");
		else if (rnd(10) == 0) k = gen_str(30);         /* long, multi-line, empty keys */
		else k = gen_str(3);
		if (kind == 100) k = collider((unsigned)i, 8, "");
		if (strncmp(k, "ejob.", 5) == 0) continue;
		bool dup = false;
		for (size_t m = 0; m < n; m++)
			if (strcmp(kv[m].key, k) == 0) dup = true;
		if (dup) continue;
		kv[n].key = k;
		kv[n].value = gen_str(4);
		n++;
	}
	j->props = (conf_kv_t *)keep((char *)kv);
	j->n_props = n;
	if (j->type == CONF_JOB_SCRIPT) {
		/* a script job needs its command; put it in props too */
		conf_kv_t *k2 = calloc(n + 2, sizeof *k2);
		memcpy(k2, kv, n * sizeof *kv);
		k2[n].key = "script.command.line";
		k2[n].value = "bin/run --fast";
		j->props = (conf_kv_t *)keep((char *)k2);
		j->n_props = n + 1;
		j->script_command_line = "bin/run --fast";
	} else if (j->type == CONF_JOB_NATIVE) {
		conf_kv_t *k2 = calloc(n + 3, sizeof *k2);
		memcpy(k2, kv, n * sizeof *kv);
		k2[n].key = "native.library";
		k2[n].value = "lib/x.so";
		k2[n + 1].key = "native.symbol";
		k2[n + 1].value = "run_item";
		j->props = (conf_kv_t *)keep((char *)k2);
		j->n_props = n + 2;
	}
	if (j->type == CONF_JOB_NONE) j->timeout_seconds = j->max_retries = 0;
}

static char *slurp(const char *path, size_t *len)
{
	char *b;
	size_t l;
	if (conf_read_file(path, &b, &l) < 0) return NULL;
	if (len) *len = l;
	return b;
}

/* NAME.keys: the job's props keys in the order ejob puts them into java.util.Properties (props
 * in order, then ejob's own), as a YAML list of double-quoted strings. */
static void write_keys(const char *dir, int i, const conf_job_t *j)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%03d.keys", dir, i);
	FILE *f = fopen(path, "w");
	if (!f) BAIL_OUT("write %s", path);
	size_t n = j->n_props + (j->type != CONF_JOB_NONE ? 3 : 0);
	for (size_t k = 0; k < n; k++) {
		static const char *const own[] = { "ejob.type", "ejob.timeoutSeconds", "ejob.maxRetries" };
		const unsigned char *c = (const unsigned char *)(k < j->n_props ? j->props[k].key
		                                                                 : own[k - j->n_props]);
		fputs("- \"", f);
		while (*c) {
			uint32_t cp = *c;
			int w = cp < 0x80 ? 1 : cp >= 0xf0 ? 4 : cp >= 0xe0 ? 3 : 2;
			if (w > 1) cp &= 0x3f >> (w - 1);
			for (int m = 1; m < w; m++) cp = (cp << 6) | (c[m] & 0x3f);
			c += w;
			if (cp >= 0x20 && cp < 0x7f && cp != '"' && cp != '\\') fputc((int)cp, f);
			else if (cp < 0x10000) fprintf(f, "\\u%04x", (unsigned)cp);
			else fprintf(f, "\\U%08x", (unsigned)cp);
		}
		fputs("\"\n", f);
	}
	if (n == 0) fputs("[]\n", f);
	if (fclose(f) != 0) BAIL_OUT("write %s", path);
}

static bool binary_key(const conf_job_t *j)
{
	for (size_t i = 0; i < j->n_props; i++)
		for (const unsigned char *c = (const unsigned char *)j->props[i].key; *c; c++)
			if ((*c < 0x20 && *c != '\t' && *c != '\n' && *c != '\r') || *c == 0x7f) return true;
	return false;
}

static void show_diff(const char *a, const char *b)
{
	size_t line = 1, i = 0;
	while (a[i] && a[i] == b[i]) {
		if (a[i] == '\n') line++;
		i++;
	}
	diag("first difference at line %zu:\n  ejob:      %.120s\n  snakeyaml: %.120s", line,
	     a + i - (i > 20 ? 20 : i), b + i - (i > 20 ? 20 : i));
}

int main(void)
{
	char dir[] = "/tmp/ejob-t38-XXXXXX";
	if (!mkdtemp(dir)) BAIL_OUT("mkdtemp: %s", strerror(errno));
	static conf_job_t jobs[NJOBS];
	char path[512];

	/* a round trip through conf_node_parse for every generated job */
	int rt_ok = 0;
	for (int i = 0; i < NJOBS; i++) {
		gen_job(&jobs[i], i);
		size_t len;
		char *y = conf_node_emit(&jobs[i], &len);
		if (!y) BAIL_OUT("conf_node_emit: %s", strerror(errno));
		snprintf(path, sizeof path, "%s/%03d.yaml", dir, i);
		FILE *f = fopen(path, "w");
		if (!f || fwrite(y, 1, len, f) != len || fclose(f) != 0) BAIL_OUT("write %s", path);
		conf_diags_t *d;
		conf_job_t *back = conf_node_parse(y, len, path, &d);
		if (back && conf_job_equal(back, &jobs[i])) {
			rt_ok++;
			if (!binary_key(&jobs[i])) write_keys(dir, i, &jobs[i]);
		} else {
			diag("job %d does not round-trip:\n%s", i, y);
			for (size_t k = 0; k < conf_diags_count(d); k++) diag("%s", conf_diags_get(d, k)->text);
		}
		conf_job_free(back);
		conf_diags_free(d);
		free(y);
	}
	is_int(rt_ok, NJOBS, "all %d generated jobs: emit, parse back, equal", NJOBS);

	if (access(SNAKEYAML, R_OK) != 0 || system("command -v java >/dev/null 2>&1") != 0) {
		fail("java and " SNAKEYAML " are needed (tools/install-deps installs them)");
		return done_testing();
	}
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "java -cp " SNAKEYAML " t/java/ConfNodeCheck.java %s", dir);
	int st = system(cmd);
	if (!ok(st == 0, "SnakeYAML checker ran")) BAIL_OUT("%s failed", cmd);

	int same = 0, loaded = 0, compared = 0;
	for (int i = 0; i < NJOBS; i++) {
		snprintf(path, sizeof path, "%s/%03d.err", dir, i);
		char *err = slurp(path, NULL);
		if (err) {
			diag("ElasticJob cannot load job %d: %s", i, err);
			free(err);
			continue;
		}
		loaded++;
		/* SnakeYAML reads a !!binary key as a byte[], whose identity hash makes the order of
		 * its Properties differ from run to run: no order to compare with */
		if (binary_key(&jobs[i])) continue;
		compared++;
		snprintf(path, sizeof path, "%s/%03d.yaml", dir, i);
		char *ours = slurp(path, NULL);
		snprintf(path, sizeof path, "%s/%03d.java", dir, i);
		char *theirs = slurp(path, NULL);
		if (ours && theirs && strcmp(ours, theirs) == 0) {
			same++;
		} else if (ours && theirs) {
			diag("job %d differs", i);
			show_diff(ours, theirs);
		}
		free(ours);
		free(theirs);
	}
	is_int(loaded, NJOBS, "SnakeYAML loads every node as a JobConfigurationPOJO");
	ok(compared > NJOBS / 2, "%d nodes without unprintable props keys to compare", compared);
	is_int(same, compared, "SnakeYAML dumps each of them back byte for byte");

	/* clean up */
	DIR *dd = opendir(dir);
	struct dirent *e;
	while (dd && (e = readdir(dd))) {
		if (e->d_name[0] == '.') continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (dd) closedir(dd);
	rmdir(dir);
	for (size_t i = 0; i < nstrs; i++) free(strs[i]);
	return done_testing();
}
