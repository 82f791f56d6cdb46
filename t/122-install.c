/* t/122-install.c: `make install` and `make uninstall` (issue 29). After `make`, `make install
 * PREFIX=/usr DESTDIR=...` puts every file of the set where the Debian layout wants it, rebuilds
 * nothing (no object, program or library of build/ changes), and the installed supervisor finds
 * the installed worker (../libexec/ejob/ejob-worker from its own directory, no path compiled in):
 * a --run of a script job runs under it. An external worker compiles and links against the
 * installed ejob.h and ejob.pc. Another PREFIX rewrites the paths of the units and the config.
 * `make uninstall` removes exactly what was installed: no file is left, but a configuration the
 * operator changed. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/version.h"
#include "t/lib/tlib.h"
#include "t/tap.h"

/* ---- what make built: every regular file under build/ but the test's own and the dist files ---- */
struct built { char path[512]; struct timespec mtime; };
static struct built *built;
static size_t n_built, cap_built;

static int note_built(const char *p, const struct stat *st, int type, struct FTW *f)
{
	(void)f;
	/* the package's build (t/121, beside this test in make check) comes and goes there */
	if (type == FTW_D && !strcmp(p, TBUILD_DIR "/deb")) return FTW_SKIP_SUBTREE;
	if (type != FTW_F) return 0;
	size_t l = strlen(p);
	/* what install may make (the files with install paths in them) and what tests write */
	if (strstr(p, "/dist/") || strstr(p, "/deb/") || strstr(p, ".install-paths") || strstr(p, "ejob.pc") ||
	    (l > 2 && !strcmp(p + l - 2, ".t")) || strstr(p, "/t/"))
		return 0;
	if (n_built == cap_built) {
		cap_built = cap_built ? 2 * cap_built : 1024;
		if (!(built = realloc(built, cap_built * sizeof *built))) BAIL_OUT("out of memory");
	}
	snprintf(built[n_built].path, sizeof built[n_built].path, "%s", p);
	built[n_built++].mtime = st->st_mtim;
	return 0;
}

static size_t changed_since(char *first, size_t len)
{
	size_t n = 0;
	first[0] = '\0';
	for (size_t i = 0; i < n_built; i++) {
		struct stat st;
		if (stat(built[i].path, &st) < 0 || st.st_mtim.tv_sec != built[i].mtime.tv_sec ||
		    st.st_mtim.tv_nsec != built[i].mtime.tv_nsec) {
			if (!n++) snprintf(first, len, "%s", built[i].path);
		}
	}
	return n;
}

/* ---- running make ---------------------------------------------------------------------------- */
static int make(const char *target, const char *prefix, const char *destdir, char **out)
{
	char p[600], d[600];
	snprintf(p, sizeof p, "PREFIX=%s", prefix);
	snprintf(d, sizeof d, "DESTDIR=%s", destdir);
	const char *argv[] = { "/usr/bin/make", "--no-print-directory", target, p, d, NULL };
	char *err = NULL;
	int st = tlib_run(argv, out, &err);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) diag("make %s %s %s: status %d\n%s", target, p, d, st, err ? err : "");
	free(err);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int file_mode(const char *dest, const char *path)
{
	char f[1024];
	struct stat st;
	snprintf(f, sizeof f, "%s%s", dest, path);
	if (stat(f, &st) < 0 || !S_ISREG(st.st_mode)) return -1;
	return (int)(st.st_mode & 07777);
}

static char *slurp(const char *dest, const char *path)
{
	char f[1024];
	snprintf(f, sizeof f, "%s%s", dest, path);
	FILE *fp = fopen(f, "r");
	if (!fp) return NULL;
	char *buf = calloc(1, 1 << 20);
	if (buf) buf[fread(buf, 1, (1 << 20) - 1, fp)] = '\0';
	fclose(fp);
	return buf;
}

static size_t files_under(const char *dir, char *first, size_t len)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "find '%s' -type f -o -type l", dir);
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	char line[1024];
	first[0] = '\0';
	while (p && fgets(line, sizeof line, p)) {
		line[strcspn(line, "\n")] = '\0';
		if (!n++) snprintf(first, len, "%s", line);
	}
	if (p) pclose(p);
	return n;
}

/* the set, as the Debian package has it but libejob.a and ejob.pc in PREFIX/lib (no multiarch
 * without the package), and uncompressed man pages */
static const struct { const char *path; int mode; } want[] = {
	{ "/usr/bin/ejob-supervisor", 0755 },       { "/usr/bin/ejobctl", 0755 },
	{ "/usr/bin/ejob-shmdump", 0755 },          { "/usr/libexec/ejob/ejob-worker", 0755 },
	{ "/usr/lib/libejob.a", 0644 },             { "/usr/include/ejob.h", 0644 },
	{ "/usr/lib/pkgconfig/ejob.pc", 0644 },     { "/usr/share/man/man8/ejob-supervisor.8", 0644 },
	{ "/usr/share/man/man1/ejobctl.1", 0644 },  { "/usr/share/man/man5/ejob.yaml.5", 0644 },
	{ "/usr/share/man/man1/ejob-shmdump.1", 0644 },
	{ "/usr/share/doc/ejob/README.md", 0644 },  { "/usr/share/doc/ejob/docs/config.md", 0644 },
	{ "/usr/share/doc/ejob/docs/operations.md", 0644 }, { "/usr/share/doc/ejob/docs/console.md", 0644 },
	{ "/usr/share/ejob/examples/hello.sh", 0755 }, { "/usr/share/ejob/examples/ejob.yaml", 0644 },
	{ "/etc/ejob/ejob.yaml", 0644 },            { "/etc/default/ejob-console", 0644 },
	{ "/lib/systemd/system/ejob-supervisor.service", 0644 }, { "/lib/systemd/system/ejob-console.service", 0644 },
	{ "/usr/lib/sysusers.d/ejob.conf", 0644 },
};
#define N_WANT (sizeof want / sizeof *want)

int main(void)
{
	plan((int)N_WANT + 22);
	tlib_init(180);
	/* The build's variables reach this make (else it would rebuild everything with other flags,
	 * under the feet of the tests running beside it): from the environment as they are, and from
	 * make check's command line (make SANITIZE=address,undefined check) through MAKEFLAGS's part
	 * after "--"; not its options (the jobserver's fds are not this make's). */
	const char *mf = getenv("MAKEFLAGS");
	const char *vars = mf ? strstr(mf, "-- ") : NULL;
	if (vars) {
		char *keep = strdup(vars);
		if (!keep) BAIL_OUT("out of memory");
		setenv("MAKEFLAGS", keep, 1);
		free(keep);
	} else {
		unsetenv("MAKEFLAGS");
	}
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	unsetenv("EJOB_WORKER_BIN");
	const char *tmp = tlib_tmpdir();
	char dest[512], dest2[512];
	snprintf(dest, sizeof dest, "%s/dest", tmp);
	snprintf(dest2, sizeof dest2, "%s/dest2", tmp);

	if (nftw(TBUILD_DIR, note_built, 32, FTW_PHYS | FTW_ACTIONRETVAL) < 0 || n_built < 50)
		BAIL_OUT("build/ holds %zu files: run make first", n_built);

	char *out = NULL;
	is_int(make("install", "/usr", dest, &out), 0, "make install PREFIX=/usr DESTDIR=... succeeds");
	free(out);
	char first[1024];
	size_t nch = changed_since(first, sizeof first);
	is_int((int)nch, 0, "it rebuilt nothing: none of the %zu files make built changed%s%s", n_built,
	       nch ? "; first: " : "", first);

	for (size_t i = 0; i < N_WANT; i++)
		is_int(file_mode(dest, want[i].path), want[i].mode, "%s installed, mode %o", want[i].path, want[i].mode);

	char *pc = slurp(dest, "/usr/lib/pkgconfig/ejob.pc");
	ok(pc && strstr(pc, "prefix=/usr\n") && strstr(pc, "libdir=/usr/lib\n") && strstr(pc, "Version: " EJOB_VERSION "\n") &&
	   strstr(pc, "-lejob"), "ejob.pc names the prefix, the version and -lejob");
	free(pc);
	char *unit = slurp(dest, "/lib/systemd/system/ejob-supervisor.service");
	ok(unit && strstr(unit, "\nExecStart=/usr/bin/ejob-supervisor -c /etc/ejob/ejob.yaml\n") &&
	   strstr(unit, "\nExecStartPre=/usr/bin/ejob-supervisor --check -c /etc/ejob/ejob.yaml\n"),
	   "the supervisor's unit runs /usr/bin/ejob-supervisor on /etc/ejob/ejob.yaml, checked first");
	free(unit);

	/* the installed supervisor, its worker found from its own directory: a --run of a script job
	 * whose item writes which program is its parent (the worker that ran it) */
	char conf[600], script[600], mark[600], sup[600], worker[600];
	snprintf(mark, sizeof mark, "%s/ran", tmp);
	char body[1400];
	snprintf(body, sizeof body, "#!/bin/sh\nreadlink -f /proc/$PPID/exe > %s.$EJOB_ITEM\n", mark);
	tlib_script(script, sizeof script, "item.sh", body);
	snprintf(conf, sizeof conf, "%s/ejob.yaml", tmp);
	char yaml[1400];
	int yl = snprintf(yaml, sizeof yaml,
	                  "regCenter: {serverLists: 127.0.0.1:1, namespace: t122}\n"
	                  "supervisor: {workers: 1}\n"
	                  "jobs:\n  j:\n    type: script\n    cron: \"0 0 0 1 1 ? 2099\"\n    shardingTotalCount: 1\n"
	                  "    props: {script.command.line: \"%s\"}\n", script);
	if (tlib_write_file(conf, yaml, (size_t)yl) < 0) BAIL_OUT("cannot write %s", conf);
	snprintf(sup, sizeof sup, "%s/usr/bin/ejob-supervisor", dest);
	snprintf(worker, sizeof worker, "%s/usr/libexec/ejob/ejob-worker", dest);
	{
		const char *argv[] = { sup, "-c", conf, "--check", NULL };
		char *o = NULL, *e = NULL;
		int st = tlib_run(argv, &o, &e);
		char want_out[700];
		snprintf(want_out, sizeof want_out, "%s: ok (1 job)\n", conf);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && o && !strcmp(o, want_out),
		   "the installed supervisor's --check finds its worker: '%.*s'", o ? (int)strcspn(o, "\n") : 0, o ? o : "");
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) diag("%s", e ? e : "");
		free(o);
		free(e);
	}
	{
		/* a broken configuration: exit 2, its errors, as a start says them */
		char bad[600];
		snprintf(bad, sizeof bad, "%s/bad.yaml", tmp);
		static const char text[] = "regCenter: {serverLists: 127.0.0.1:1, namespace: t122}\njobs:\n  j: {type: bogus, shardingTotalCount: 1}\n";
		if (tlib_write_file(bad, text, sizeof text - 1) < 0) BAIL_OUT("cannot write %s", bad);
		const char *argv[] = { sup, "-c", bad, "--check", NULL };
		char *o = NULL, *e = NULL;
		int st = tlib_run(argv, &o, &e);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && o && !o[0] && e && strstr(e, "bad.yaml:3:") &&
		   strstr(e, "jobs.j.type: must be one of"), "--check of a broken file: exit 2, its error by line and key, "
		   "nothing on stdout (%.*s)", e ? (int)strcspn(e, "\n") : 0, e ? e : "");
		free(o);
		free(e);
		/* the worker gone: exit 2, naming where it was looked for */
		char moved[700];
		snprintf(moved, sizeof moved, "%s.away", worker);
		const char *argv2[] = { sup, "-c", conf, "--check", NULL };
		o = e = NULL;
		st = rename(worker, moved) == 0 ? tlib_run(argv2, &o, &e) : -1;
		if (rename(moved, worker) < 0) BAIL_OUT("cannot put %s back", worker);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && e && strstr(e, "../libexec/ejob/ejob-worker") && strstr(e, "--worker-bin"),
		   "--check without the worker: exit 2, naming where it looked and --worker-bin");
		free(o);
		free(e);
	}
	{
		const char *argv[] = { sup, "-c", conf, "--run", "j", NULL };
		char *o = NULL, *e = NULL;
		int st = tlib_run(argv, &o, &e);
		ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the installed supervisor runs the job (--run j): status %d", st);
		if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) diag("%s", e ? e : "");
		free(o);
		free(e);
		char m0[700];
		snprintf(m0, sizeof m0, "/ran.0");
		char *ran = slurp(tmp, m0);
		char real[700];
		if (!realpath(worker, real)) snprintf(real, sizeof real, "%s", worker);
		ok(ran && !strncmp(ran, real, strlen(real)) && ran[strlen(real)] == '\n',
		   "its item ran under the installed worker %s (got %.*s)", real, ran ? (int)strcspn(ran, "\n") : 7,
		   ran ? ran : "nothing");
		free(ran);
	}

	/* an external worker builds against what was installed: <ejob.h>, pkg-config ejob */
	{
		char src[600], bin[600], cmd[8192];
		snprintf(src, sizeof src, "%s/ext.c", tmp);
		snprintf(bin, sizeof bin, "%s/ext", tmp);
		static const char prog[] = "#include <ejob.h>\n#include <stdio.h>\n"
		                           "int main(void) { char b[256]; return ejob_socket_path(\"ns\", b, sizeof b) < 0; }\n";
		if (tlib_write_file(src, prog, sizeof prog - 1) < 0) BAIL_OUT("cannot write %s", src);
		snprintf(cmd, sizeof cmd,
		         "PKG_CONFIG_SYSROOT_DIR='%s' PKG_CONFIG_LIBDIR='%s/usr/lib/pkgconfig' "
		         "cc -o '%s' '%s' $(PKG_CONFIG_SYSROOT_DIR='%s' PKG_CONFIG_LIBDIR='%s/usr/lib/pkgconfig' "
		         "pkg-config --cflags --libs ejob) && '%s'", dest, dest, bin, src, dest, dest, bin);
		ok(system(cmd) == 0, "a program includes <ejob.h> and links with `pkg-config --cflags --libs ejob`");
	}

	/* uninstall: nothing left */
	out = NULL;
	is_int(make("uninstall", "/usr", dest, &out), 0, "make uninstall PREFIX=/usr DESTDIR=... succeeds");
	free(out);
	is_int((int)files_under(dest, first, sizeof first), 0, "no file is left in DESTDIR%s%s", first[0] ? ": " : "", first);

	/* another prefix: the units, the configuration and the sysusers file follow it */
	out = NULL;
	is_int(make("install", "/opt/ejob", dest2, &out), 0, "make install PREFIX=/opt/ejob succeeds");
	free(out);
	unit = slurp(dest2, "/opt/ejob/lib/systemd/system/ejob-supervisor.service");
	ok(unit && strstr(unit, "\nExecStart=/opt/ejob/bin/ejob-supervisor -c /opt/ejob/etc/ejob/ejob.yaml\n"),
	   "PREFIX=/opt/ejob: the unit runs /opt/ejob/bin/ejob-supervisor on /opt/ejob/etc/ejob/ejob.yaml");
	free(unit);
	char *cf = slurp(dest2, "/opt/ejob/etc/ejob/ejob.yaml");
	ok(cf && strstr(cf, "\"/opt/ejob/share/ejob/examples/hello.sh ") && !strstr(cf, "/usr/share/ejob"),
	   "its configuration runs /opt/ejob/share/ejob/examples/hello.sh");
	free(cf);
	is_int(file_mode(dest2, "/opt/ejob/libexec/ejob/ejob-worker"), 0755, "the worker in /opt/ejob/libexec/ejob");
	nch = changed_since(first, sizeof first);
	is_int((int)nch, 0, "nothing rebuilt for another prefix either%s%s", nch ? "; first: " : "", first);

	/* a configuration the operator edited is kept, the rest goes */
	char edited[700];
	snprintf(edited, sizeof edited, "%s/opt/ejob/etc/ejob/ejob.yaml", dest2);
	FILE *ef = fopen(edited, "a");
	ok(ef && fputs("# edited\n", ef) >= 0 && fclose(ef) == 0, "the operator edits the installed configuration");
	out = NULL;
	is_int(make("install", "/opt/ejob", dest2, &out), 0, "make install again");
	ok(out && strstr(out, "ejob.yaml is there: kept"), "it keeps the edited configuration (and says so)");
	free(out);
	out = NULL;
	is_int(make("uninstall", "/opt/ejob", dest2, &out), 0, "make uninstall PREFIX=/opt/ejob");
	free(out);
	size_t left = files_under(dest2, first, sizeof first);
	ok(left == 1 && !strcmp(first, edited), "only the edited configuration is left (%zu file%s: %s)", left,
	   left == 1 ? "" : "s", first);
	free(built);
	return done_testing();
}
