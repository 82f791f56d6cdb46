/* tools/ejobctl_paths.c: can a job's program or library be found from here (see the header)? */
#include "tools/ejobctl_paths.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker/script.h"

/* What a relative path is relative to, said where it matters: the workers run in the
 * supervisor's working directory, and validate can only look from its own. */
static void relative_note(const char *path, char *buf, size_t len)
{
	char cwd[PATH_MAX];
	buf[0] = '\0';
	if (path[0] == '/') return;
	if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "(unknown: %s)", strerror(errno));
	snprintf(buf, len, " (a relative path is taken from the supervisor's working directory; this one is %s)", cwd);
}

static const char *stat_reason(int e)
{
	return e == ENOENT || e == ENOTDIR ? "not found" : strerror(e);
}

int ejobctl_script_problem(const char *cmd, char *why, size_t len)
{
	char **argv, err[256], path[PATH_MAX], rel[PATH_MAX + 128];
	if (cmd_split(cmd, 0, &argv, err, sizeof err) < 0) {
		snprintf(why, len, "cannot be split into words: %s", err);
		return 1;
	}
	const char *name = argv[0];
	int bad = 1;
	struct stat st;
	if (!strchr(name, '/')) {
		if (cmd_resolve(name, path, sizeof path) == 0) bad = 0;
		else if (errno == EACCES) snprintf(why, len, "%s: found in $PATH, but not executable", name);
		else snprintf(why, len, "%s: not found in $PATH", name);
	} else {
		relative_note(name, rel, sizeof rel);
		if (stat(name, &st) < 0) snprintf(why, len, "%s: %s%s", name, stat_reason(errno), rel);
		else if (S_ISDIR(st.st_mode)) snprintf(why, len, "%s: is a directory", name);
		else if (!S_ISREG(st.st_mode)) snprintf(why, len, "%s: not a regular file", name);
		else if (access(name, X_OK) < 0) snprintf(why, len, "%s: not executable", name);
		else bad = 0;
	}
	free(argv);
	return bad;
}

/* ---- libraries ----------------------------------------------------------------------------- */

/* e_ident, e_type and e_machine of an ELF file (the same offsets for 32 and 64 bits): 0, or -1
 * with errno (ENOEXEC: not ELF). */
static int elf_head(const char *path, unsigned char ident[EI_NIDENT], uint16_t *type, uint16_t *machine)
{
	int fd;
	do fd = open(path, O_RDONLY | O_CLOEXEC); while (fd < 0 && errno == EINTR);
	if (fd < 0) return -1;
	unsigned char h[EI_NIDENT + 4];
	size_t got = 0;
	while (got < sizeof h) {
		ssize_t r = read(fd, h + got, sizeof h - got);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) break;
		got += (size_t)r;
	}
	close(fd);
	if (got < sizeof h || memcmp(h, ELFMAG, SELFMAG) != 0) {
		errno = ENOEXEC;
		return -1;
	}
	memcpy(ident, h, EI_NIDENT);
	memcpy(type, h + EI_NIDENT, 2);        /* in the file's byte order: compared below only */
	memcpy(machine, h + EI_NIDENT + 2, 2); /* when it is this machine's */
	return 0;
}

static int read_at(int fd, void *buf, size_t n, off_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, off + (off_t)got);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) return -1;
		got += (size_t)r;
	}
	return 0;
}

/* An ET_DYN file of this machine's class that is a PIE (DT_FLAGS_1 has DF_1_PIE), as glibc's
 * dlopen tells them from libraries. 0 when it is not, or cannot be read. */
static int is_pie(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), pie = 0;
	ElfW(Ehdr) eh;
	if (fd < 0) return 0;
	if (read_at(fd, &eh, sizeof eh, 0) < 0 || eh.e_phentsize != sizeof(ElfW(Phdr)) || eh.e_phnum > 4096) goto out;
	for (unsigned i = 0; i < eh.e_phnum && !pie; i++) {
		ElfW(Phdr) ph;
		if (read_at(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (ElfW(Off))i * sizeof ph)) < 0) break;
		if (ph.p_type != PT_DYNAMIC) continue;
		for (ElfW(Off) o = 0; o + sizeof(ElfW(Dyn)) <= ph.p_filesz && o < (1u << 20); o += sizeof(ElfW(Dyn))) {
			ElfW(Dyn) d;
			if (read_at(fd, &d, sizeof d, (off_t)(ph.p_offset + o)) < 0 || d.d_tag == DT_NULL) break;
			if (d.d_tag == DT_FLAGS_1 && (d.d_un.d_val & DF_1_PIE)) pie = 1;
		}
	}
out:
	close(fd);
	return pie;
}

/* Why path is not a shared library this process could load (NULL if it is one). */
static const char *elf_problem(const char *path, char *buf, size_t len)
{
	unsigned char id[EI_NIDENT], self_id[EI_NIDENT];
	uint16_t type, machine, self_type, self_machine;
	if (access(path, R_OK) < 0) return errno == EACCES ? "not readable" : stat_reason(errno);
	if (elf_head(path, id, &type, &machine) < 0)
		return errno == ENOEXEC ? "not a shared library (not an ELF file)" : strerror(errno);
	if (elf_head("/proc/self/exe", self_id, &self_type, &self_machine) == 0 &&
	    (id[EI_CLASS] != self_id[EI_CLASS] || id[EI_DATA] != self_id[EI_DATA] || machine != self_machine)) {
		snprintf(buf, len, "not a shared library for this machine (ELF %s-bit, machine %u)",
		         id[EI_CLASS] == ELFCLASS64 ? "64" : "32", (unsigned)machine);
		return buf;
	}
	if (type != ET_DYN) return "not a shared library (an ELF executable or object file)";
	if (is_pie(path)) return "not a shared library (a position-independent executable, which dlopen refuses)";
	return NULL;
}

/* Looking a bare name up where dlopen looks: the first candidate that is a shared library for
 * this machine wins (the dynamic loader skips the others too). */
struct search {
	const char *name;
	int found;             /* a loadable one */
	char first[PATH_MAX];  /* the first candidate, if none was loadable */
	char first_why[128];
};

static void search_dir(struct search *s, const char *dir, size_t dl)
{
	char path[PATH_MAX], buf[128];
	struct stat st;
	if (s->found || !dl) return;
	int n = snprintf(path, sizeof path, "%.*s/%s", (int)dl, dir, s->name);
	if (n < 0 || (size_t)n >= sizeof path || stat(path, &st) < 0 || S_ISDIR(st.st_mode)) return;
	const char *why = elf_problem(path, buf, sizeof buf);
	if (!why) s->found = 1;
	else if (!s->first[0]) {
		snprintf(s->first, sizeof s->first, "%s", path);
		snprintf(s->first_why, sizeof s->first_why, "%s", why);
	}
}

/* The directories of an ld.so.conf file, with its includes (globs, relative to its own
 * directory), as ldconfig reads them. */
static void search_conf(struct search *s, const char *file, int depth)
{
	FILE *f = depth < 8 ? fopen(file, "re") : NULL;
	if (!f) return;
	char line[PATH_MAX + 16];
	while (!s->found && fgets(line, sizeof line, f)) {
		char *p = line, *e;
		if ((e = strchr(p, '#'))) *e = '\0';
		while (*p == ' ' || *p == '\t') p++;
		e = p + strlen(p);
		while (e > p && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
		if (!*p) continue;
		if (!strncmp(p, "include", 7) && (p[7] == ' ' || p[7] == '\t')) {
			p += 8;
			while (*p == ' ' || *p == '\t') p++;
			char pat[PATH_MAX * 2];
			const char *slash = strrchr(file, '/');
			if (*p == '/' || !slash) snprintf(pat, sizeof pat, "%s", p);
			else snprintf(pat, sizeof pat, "%.*s/%s", (int)(slash - file), file, p);
			glob_t g;
			if (glob(pat, 0, NULL, &g) == 0)
				for (size_t i = 0; i < g.gl_pathc && !s->found; i++) search_conf(s, g.gl_pathv[i], depth + 1);
			globfree(&g);
		} else if (*p == '/') {
			search_dir(s, p, strlen(p));
		}
	}
	fclose(f);
}

int ejobctl_library_problem(const char *lib, char *why, size_t len)
{
	char rel[PATH_MAX + 128], buf[128];
	if (strchr(lib, '/')) {
		struct stat st;
		if (stat(lib, &st) < 0) {
			relative_note(lib, rel, sizeof rel);
			snprintf(why, len, "%s: %s%s", lib, stat_reason(errno), rel);
			return 1;
		}
		const char *w = S_ISDIR(st.st_mode) ? "is a directory" : elf_problem(lib, buf, sizeof buf);
		if (!w) return 0;
		snprintf(why, len, "%s: %s", lib, w);
		return 1;
	}
	struct search s = { .name = lib };
	const char *llp = getenv("LD_LIBRARY_PATH");
	for (const char *p = llp; p && *p && !s.found;) {
		size_t dl = strcspn(p, ":;");
		search_dir(&s, p, dl);
		p += dl + (p[dl] != '\0');
	}
	search_conf(&s, "/etc/ld.so.conf", 0);
	static const char *const sys[] = { "/lib64", "/usr/lib64", "/lib", "/usr/lib" };
	for (size_t i = 0; i < sizeof sys / sizeof *sys; i++) search_dir(&s, sys[i], strlen(sys[i]));
	if (s.found) return 0;
	if (s.first[0]) snprintf(why, len, "%s: %s: %s", lib, s.first, s.first_why);
	else snprintf(why, len, "%s: not found in $LD_LIBRARY_PATH, the directories of /etc/ld.so.conf or the system's "
	              "(/lib, /usr/lib), where dlopen looks for a name without '/'", lib);
	return 1;
}

int ejobctl_ca_file_problem(const char *path, char *why, size_t len)
{
	char rel[PATH_MAX + 128];
	struct stat st;
	relative_note(path, rel, sizeof rel);
	if (stat(path, &st) < 0) {
		snprintf(why, len, "%s: %s%s", path, stat_reason(errno), rel);
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, len, "%s: not a regular file", path);
		return 1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "%s: not readable: %s", path, strerror(errno));
		return 1;
	}
	static char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf - 1)) < 0 && errno == EINTR) {}
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (n <= 0 || !memmem(buf, (size_t)(n > 0 ? n : 0), "-----BEGIN CERTIFICATE-----", 27)) {
		snprintf(why, len, "%s: holds no PEM certificate (-----BEGIN CERTIFICATE-----)", path);
		return 1;
	}
	return 0;
}
