/* tools/ejobctl_import.c: ejobctl import FILE... [-o OUT]: an ElasticJob Spring Boot
 * configuration (application.yml, application.properties, and the files of its profiles after
 * it) as an ejob configuration file, on stdout or in OUT; on stderr one line per key that has no
 * ejob meaning, with what to do instead. The conversion is tools/ejobctl_migrate.c; this reads
 * and writes. Exit 0 converted (messages may say what was left out), 2 usage, an input that is
 * not such a configuration, an input that cannot be read, or nothing converted, 1 the output
 * cannot be written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/conf.h"
#include "tools/ejobctl.h"
#include "tools/ejobctl_migrate.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ejobctl import FILE... [-o OUT]\n\n"
	        "Turns an ElasticJob Spring Boot configuration (application.yml or .properties: the\n"
	        "starter's elasticjob.reg-center, elasticjob.jobs, elasticjob.tracing with the DataSource)\n"
	        "into an ejob configuration file, on stdout or in OUT (which must not exist). Give a\n"
	        "profile's file after the main one (application.yml application-prod.yml): its keys win.\n"
	        "Every key that has no ejob meaning (Java classes, beans, the dump port, ...) is a line on\n"
	        "stderr, FILE:LINE: KEY: what, and what to do instead. What is written passes\n"
	        "'ejobctl validate'. docs/migrating.md has the mapping.\n"
	        "Exit status: 0 converted, 2 an input that cannot be read or is not such a configuration,\n"
	        "nothing converted, or usage; 1 the output cannot be written.\n");
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

/* write all of buf to OUT, created (not there before); 0, or 1 after a message */
static int write_out(const char *path, const char *buf, size_t len, int secret)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, secret ? 0600 : 0644);
	if (fd < 0) {
		fprintf(stderr, "ejobctl import: %s: cannot create: %s%s\n", path, strerror(errno),
		        errno == EEXIST ? " (it is not overwritten: remove it, or name another file)" : "");
		return 1;
	}
	size_t off = 0;
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) {
			fprintf(stderr, "ejobctl import: %s: write failed: %s\n", path, strerror(errno));
			close(fd);
			unlink(path);
			return 1;
		}
		off += (size_t)w;
	}
	if (close(fd) < 0) {
		fprintf(stderr, "ejobctl import: %s: write failed: %s\n", path, strerror(errno));
		unlink(path);
		return 1;
	}
	return 0;
}

int ejobctl_import(int argc, char **argv)
{
	const char *outpath = NULL;
	struct migrate_input *in = calloc((size_t)argc + 1, sizeof *in);
	char **bufs = calloc((size_t)argc + 1, sizeof *bufs);
	size_t n = 0;
	int status = 0;
	if (!in || !bufs) {
		fprintf(stderr, "ejobctl import: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc && !status; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			goto out;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 == argc) {
				fprintf(stderr, "ejobctl import: %s needs a file name\n", a);
				status = 2;
			} else {
				outpath = argv[++i];
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ejobctl import: unknown option '%s'\n", a);
			usage(stderr);
			status = 2;
		} else {
			size_t len;
			if (conf_read_file(a, &bufs[n], &len) < 0) {
				fprintf(stderr, "ejobctl import: %s: cannot read: %s\n", a, strerror(errno));
				status = 2;         /* a configuration problem, as a file that is not one */
				break;
			}
			in[n] = (struct migrate_input){ a, bufs[n], len, ends_with(a, ".properties") };
			n++;
		}
	}
	if (!status && !n) {
		fprintf(stderr, "ejobctl import: which file? (application.yml or application.properties)\n");
		usage(stderr);
		status = 2;
	}
	if (status) goto out;
	conf_opts_t opts;
	conf_opts_system(&opts);
	struct migrate_result r;
	if (migrate_spring(in, n, &opts, &r) < 0) {
		fprintf(stderr, "ejobctl import: out of memory\n");
		migrate_result_free(&r);
		status = 1;
		goto out;
	}
	for (size_t i = 0; i < r.msgs.n; i++) fprintf(stderr, "%s\n", r.msgs.v[i].text);
	status = r.status;
	if (!status) {
		int secret = strstr(r.out, "\n  digest: ") || strstr(r.out, "\n  password: ");
		if (outpath) {
			status = write_out(outpath, r.out, r.len, secret);
		} else if (fwrite(r.out, 1, r.len, stdout) != r.len || fflush(stdout)) {
			fprintf(stderr, "ejobctl import: writing the output failed: %s\n", strerror(errno));
			status = 1;
		}
		if (!status)
			fprintf(stderr, "ejobctl import: %d of %d job%s converted%s%s%s\n", r.converted, r.jobs, r.jobs == 1 ? "" : "s",
			        r.converted < r.jobs ? " (the others: above)" : "", outpath ? "; written to " : "",
			        outpath ? outpath : "");
	} else if (status == 2) {
		fprintf(stderr, "ejobctl import: nothing converted\n");
	}
	migrate_result_free(&r);
out:
	for (size_t i = 0; i < n; i++) free(bufs[i]);
	free(bufs), free(in);
	return status;
}
