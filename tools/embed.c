/* tools/embed.c: the web console's files (console/) as C, for ejobctl to serve from its own bytes
 * (tools/ejobctl_serve_assets.c). Run by the Makefile at build time:
 *
 *     build/tools/embed -z build/console console/index.html console/app.js ... > build/tools/ejobctl_console.c
 *
 * For each file: its bytes, its Content-Type (by its extension: a file of another kind is refused,
 * exit 2, so that nothing is served as the wrong type under nosniff), its ETag (FNV-1a 64 of the
 * bytes, quoted) and, when DIR/NAME.gz exists and is smaller, its gzip'd bytes (gzip -9n, made by
 * the Makefile) with the ETag's gzip variant. Writes nothing but stdout; exit 1 when a file cannot
 * be read. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *ext, *type; } types[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".png", "image/png" },
};

static unsigned char *slurp(const char *path, size_t *len, int must)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (must || errno != ENOENT) {
			fprintf(stderr, "embed: %s: %s\n", path, strerror(errno));
			exit(1);
		}
		return NULL;
	}
	unsigned char *b = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			unsigned char *nb = realloc(b, cap);
			if (!nb) {
				fprintf(stderr, "embed: out of memory reading %s\n", path);
				exit(1);
			}
			b = nb;
		}
		size_t k = fread(b + n, 1, cap - n, f);
		n += k;
		if (k == 0) break;
	}
	if (ferror(f)) {
		fprintf(stderr, "embed: %s: read failed\n", path);
		exit(1);
	}
	fclose(f);
	*len = n;
	return b;
}

static void bytes(const char *name, const unsigned char *b, size_t n)
{
	printf("static const unsigned char %s[%zu] = {", name, n ? n : 1);
	for (size_t i = 0; i < n; i++) printf("%s%u,", i % 24 ? "" : "\n\t", b[i]);
	printf("%s\n};\n", n ? "" : "0");
}

static uint64_t fnv1a(const unsigned char *b, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

int main(int argc, char **argv)
{
	const char *gzdir = NULL;
	int first = 1;
	if (argc > 2 && !strcmp(argv[1], "-z")) gzdir = argv[2], first = 3;
	if (first >= argc) {
		fprintf(stderr, "usage: embed [-z GZDIR] FILE...\n");
		return 2;
	}
	printf("/* made by tools/embed from console/ at build time: do not edit */\n"
	       "#include \"tools/ejobctl_serve_assets.h\"\n\n");
	int n = argc - first;
	for (int i = 0; i < n; i++) {
		const char *path = argv[first + i];
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		const char *dot = strrchr(base, '.'), *type = NULL;
		for (size_t t = 0; dot && t < sizeof types / sizeof *types; t++)
			if (!strcmp(dot, types[t].ext)) type = types[t].type;
		if (!type) {
			fprintf(stderr, "embed: %s: not a kind the console serves (.html, .js, .css, .svg, .png): rename it or "
			        "add its type to tools/embed.c\n", path);
			return 2;
		}
		for (const char *c = base; *c; c++)
			if (!(*c == '.' || *c == '-' || *c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9'))) {
				fprintf(stderr, "embed: %s: a console file's name is [a-z0-9._-] (it is a URL and a C string)\n", path);
				return 2;
			}
		size_t len, gzlen = 0;
		unsigned char *b = slurp(path, &len, 1), *gz = NULL;
		char name[32];
		snprintf(name, sizeof name, "a%d", i);
		bytes(name, b, len);
		if (gzdir) {
			char gp[4096];
			if ((size_t)snprintf(gp, sizeof gp, "%s/%s.gz", gzdir, base) >= sizeof gp) {
				fprintf(stderr, "embed: %s/%s.gz: path too long\n", gzdir, base);
				return 1;
			}
			gz = slurp(gp, &gzlen, 0);
			if (gz && gzlen < len) {
				snprintf(name, sizeof name, "a%dz", i);
				bytes(name, gz, gzlen);
			} else {
				free(gz);
				gz = NULL;
			}
		}
		printf("#define A%d { \"%s\", \"%s\", a%d, %zu, ", i, base, type, i, len);
		if (gz) printf("a%dz, %zu, ", i, gzlen);
		else printf("0, 0, ");
		uint64_t h = fnv1a(b, len);
		printf("\"\\\"%016llx\\\"\", \"\\\"%016llx-gz\\\"\" }\n\n", (unsigned long long)h, (unsigned long long)h);
		free(b);
		free(gz);
	}
	printf("const struct srv_asset srv_assets[] = {");
	for (int i = 0; i < n; i++) printf("%sA%d", i ? ", " : " ", i);
	printf(" };\nconst size_t srv_nassets = %d;\n", n);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "embed: writing the C file failed\n");
		return 1;
	}
	return 0;
}
