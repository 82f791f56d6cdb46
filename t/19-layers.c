/* t/19-layers.c: tools/layers, the one-way rule between supervisor/'s folders. The tree as it is
 * passes; a copy of it with an upward include, an include of worker/, or an object that calls a
 * function of a layer above it fails, each breach named with its file and what its layer may use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t/lib/tlib.h"
#include "t/tap.h"

static int sh(const char *cmd)
{
	int st = system(cmd);
	return st == -1 ? -1 : WEXITSTATUS(st);
}

static void put(const char *path, const char *text)
{
	if (tlib_write_file(path, text, strlen(text)) < 0) BAIL_OUT("cannot write %s", path);
}

/* tools/layers --root root: its exit status, stderr in *err */
static int layers(const char *root, char **out, char **err)
{
	const char *argv[] = { "tools/layers", "--root", root, NULL };
	int st = tlib_run(argv, out, err);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	tlib_init(60);
	char *out = NULL, *err = NULL;
	int rc = layers(".", &out, &err);
	is_int(rc, 0, "the tree passes the layer check (%s%s)", out ? out : "", err ? err : "");
	ok(out && strstr(out, "point down"), "  and says what it checked");
	free(out), free(err);

	/* a copy of supervisor/ (sources, and objects under build/) to plant breaches into */
	char root[600], cmd[4000];
	snprintf(root, sizeof root, "%s/tree", tlib_tmpdir());
	snprintf(cmd, sizeof cmd, "mkdir -p %s/%s && cp -r supervisor %s/ && cp -r tools %s/ && cp -r %s %s/%s/", root,
	         TBUILD_DIR, root, root, BUILT("supervisor"), root, TBUILD_DIR);
	if (sh(cmd) != 0) BAIL_OUT("cannot copy the tree");
	rc = layers(root, &out, &err);
	is_int(rc, 0, "the copy passes as well");
	free(out), free(err);
	/* an object left from a file that moved (a build before a pull): not the code any more */
	snprintf(cmd, sizeof cmd, "cp %s %s/%s", BUILT("supervisor/coord/coord.o"), root, BUILT("supervisor/base/gone.o"));
	if (sh(cmd) != 0) BAIL_OUT("cannot copy an object");
	rc = layers(root, &out, &err);
	is_int(rc, 0, "an object without its source (left by an older build) is not taken for code (%s)", err ? err : "");
	free(out), free(err);

	char p[800];
	snprintf(p, sizeof p, "%s/supervisor/base/planted.c", root);
	put(p, "#include \"supervisor/coord/coord.h\"\n");
	rc = layers(root, &out, &err);
	is_int(rc, 1, "an upward include (base/ including coord/): exit 1");
	ok(err && strstr(err, "supervisor/base/planted.c:1 includes supervisor/coord/coord.h: base/ may use nothing else in "
	                      "supervisor/"), "  naming the file, the line and the rule (%s)", err ? err : "");
	free(out), free(err);
	unlink(p);

	snprintf(p, sizeof p, "%s/supervisor/run/planted.c", root);
	put(p, "#include <stdio.h>\n#include \"worker/script.h\"\n");
	rc = layers(root, &out, &err);
	is_int(rc, 1, "an include of worker/ from run/: exit 1");
	ok(err && strstr(err, "supervisor/run/planted.c:2 includes worker/script.h: no supervisor file may use worker/"),
	   "  named (%s)", err ? err : "");
	free(out), free(err);
	unlink(p);

	/* a call: zk/ calling coord_start, declared by hand (no include to see) */
	snprintf(p, sizeof p, "%s/supervisor/zk/planted.c", root);
	put(p, "void coord_start(void *c);\nvoid planted(void);\nvoid planted(void) { coord_start(0); }\n");
	snprintf(cmd, sizeof cmd, "cc -c -o %s/%s %s", root, BUILT("supervisor/zk/planted.o"), p);
	if (sh(cmd) != 0) BAIL_OUT("cannot compile the planted call");
	rc = layers(root, &out, &err);
	is_int(rc, 1, "an upward call (zk/ calling coord_start) with no include: exit 1");
	ok(err && strstr(err, "supervisor/zk/planted.o calls coord_start, which coord/ defines: zk/ may use only base/"),
	   "  named from the object (%s)", err ? err : "");
	free(out), free(err);
	return done_testing();
}
