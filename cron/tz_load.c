/* cron/tz_load.c: a time zone found by name, as the JVM finds it (see tz.h): the zone files, Java's
 * legacy ids and custom GMT offsets, $TZ and /etc/localtime for the default. The zones
 * themselves are built in tz.c. */
#include "cron/tz.h"
#include "cron/tz_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- loading by name --------------------------------------------------------------------- */

/* Java's legacy three-letter ids (sun.util.calendar.ZoneInfoFile); EST, MST and HST are fixed
 * offsets there, not links. */
static const char *const java_aliases[][2] = {
	{ "ACT", "Australia/Darwin" },      { "AET", "Australia/Sydney" },
	{ "AGT", "America/Argentina/Buenos_Aires" },
	{ "ART", "Africa/Cairo" },          { "AST", "America/Anchorage" },
	{ "BET", "America/Sao_Paulo" },     { "BST", "Asia/Dhaka" },
	{ "CAT", "Africa/Harare" },         { "CNT", "America/St_Johns" },
	{ "CST", "America/Chicago" },       { "CTT", "Asia/Shanghai" },
	{ "EAT", "Africa/Addis_Ababa" },    { "ECT", "Europe/Paris" },
	{ "IET", "America/Indiana/Indianapolis" },
	{ "IST", "Asia/Kolkata" },          { "JST", "Asia/Tokyo" },
	{ "MIT", "Pacific/Apia" },          { "NET", "Asia/Yerevan" },
	{ "NST", "Pacific/Auckland" },      { "PLT", "Asia/Karachi" },
	{ "PNT", "America/Phoenix" },       { "PRT", "America/Puerto_Rico" },
	{ "PST", "America/Los_Angeles" },   { "SST", "Pacific/Guadalcanal" },
	{ "VST", "Asia/Ho_Chi_Minh" },
};

static const struct {
	const char *name;
	int32_t offset;
} java_fixed[] = { { "EST", -5 * 3600 }, { "MST", -7 * 3600 }, { "HST", -10 * 3600 } };

/* Java's custom ids: GMT+h, GMT+hh, GMT+hmm, GMT+hhmm, GMT+h:mm, GMT+hh:mm (and '-').
 * Returns 0 and the offset, or -1 when name is not one. */
static int java_custom(const char *name, int32_t *offset)
{
	if (strncmp(name, "GMT", 3) != 0 || (name[3] != '+' && name[3] != '-'))
		return -1;
	int sign = name[3] == '-' ? -1 : 1;
	const char *p = name + 4;
	int h = 0, m = 0, n = 0;
	while (p[n] >= '0' && p[n] <= '9')
		n++;
	if (n == 0 || n > 4)
		return -1;
	int v = atoi(p);
	if (p[n] == ':') {
		const char *q = p + n + 1;
		if (n > 2 || !(q[0] >= '0' && q[0] <= '9' && q[1] >= '0' && q[1] <= '9') || q[2])
			return -1;
		h = v;
		m = (q[0] - '0') * 10 + (q[1] - '0');
	} else if (p[n] == '\0') {
		h = n <= 2 ? v : v / 100;
		m = n <= 2 ? 0 : v % 100;
	} else {
		return -1;
	}
	if (h > 23 || m > 59)
		return -1;
	*offset = sign * (h * 3600 + m * 60);
	return 0;
}

static bool valid_zone_name(const char *name)
{
	size_t len = strlen(name);
	if (len == 0 || len > 255 || name[0] == '/' || name[0] == '-')
		return false;
	for (const char *p = name; *p; p++) {
		char c = *p;
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '/' || c == '_' || c == '-' || c == '+' || c == '.'))
			return false;
		if (c == '.' && (p == name || p[-1] == '/') && (p[1] == '.' || p[1] == '/' || !p[1]))
			return false; /* no "." or ".." components */
	}
	return true;
}

/* Read a whole file; returns the byte count or -1 with errno set. */
static ssize_t read_file(const char *path, unsigned char **out)
{
	int fd;
	do
		fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -1;
	struct stat st;
	int e = 0;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (S_ISDIR(st.st_mode))
		e = EISDIR;
	else if (!S_ISREG(st.st_mode) || st.st_size > MAX_TZIF_BYTES)
		e = EFBIG;
	if (e) {
		close(fd);
		errno = e;
		return -1;
	}
	unsigned char *buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		errno = ENOMEM;
		return -1;
	}
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			e = r < 0 ? errno : EIO;
			free(buf);
			close(fd);
			errno = e;
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	*out = buf;
	return (ssize_t)got;
}

static tz_t *load_path(const char *name, const char *path, tz_err_t *err)
{
	unsigned char *buf;
	ssize_t n = read_file(path, &buf);
	if (n < 0) {
		int e = errno;
		if (e == ENOENT || e == ENOTDIR || e == EISDIR)
			tz_set_err(err, "unknown time zone '%s' (no zone file %s): use an IANA name such as "
			        "'Europe/London' or 'America/New_York', or 'UTC', or 'GMT+08:00'; if the "
			        "name is right, install the tzdata package", name, path);
		else
			tz_set_err(err, "time zone '%s': cannot read %s: %s", name, path, strerror(e));
		errno = e == EISDIR ? ENOENT : e;
		return NULL;
	}
	tz_t *tz = tz_from_tzif(name, buf, (size_t)n, err);
	free(buf);
	return tz;
}

tz_t *tz_load_dir(const char *dir, const char *name, tz_err_t *err)
{
	int32_t off;
	if (!name) {
		tz_set_err(err, "no time zone name given");
		errno = EINVAL;
		return NULL;
	}
	if (!strcmp(name, "UTC") || !strcmp(name, "GMT"))
		return tz_fixed(name, 0);
	if (java_custom(name, &off) == 0) {
		char id[16];
		int a = off < 0 ? -off : off;
		snprintf(id, sizeof id, "GMT%c%02d:%02d", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
		return tz_fixed(id, off);
	}
	for (size_t i = 0; i < sizeof java_fixed / sizeof java_fixed[0]; i++)
		if (!strcmp(name, java_fixed[i].name))
			return tz_fixed(name, java_fixed[i].offset);
	for (size_t i = 0; i < sizeof java_aliases / sizeof java_aliases[0]; i++)
		if (!strcmp(name, java_aliases[i][0]))
			name = java_aliases[i][1];
	if (!valid_zone_name(name)) {
		tz_set_err(err, "'%s' is not a time zone name: use an IANA name such as 'Europe/London' "
		        "or 'America/New_York', or 'UTC', or 'GMT+08:00'", name);
		errno = EINVAL;
		return NULL;
	}
	char path[4096];
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) {
		tz_set_err(err, "time zone '%s': path too long", name);
		errno = ENAMETOOLONG;
		return NULL;
	}
	return load_path(name, path, err);
}

tz_t *tz_load(const char *name, tz_err_t *err)
{
	return tz_load_dir(TZ_DIR, name, err);
}

tz_t *tz_load_env(const char *tzenv, const char *localtime, tz_err_t *err)
{
	if (tzenv && *tzenv) {
		const char *v = tzenv[0] == ':' ? tzenv + 1 : tzenv;
		if (v[0] == '/')
			return load_path(v, v, err);
		tz_err_t e1;
		tz_t *tz = tz_load(v, &e1);
		if (tz || (errno != ENOENT && errno != EINVAL)) {
			if (!tz && err)
				*err = e1;
			return tz;
		}
		if (tzenv[0] != ':' && tz_posix_valid(v))
			return tz_from_posix(v, err);
		tz_set_err(err, "TZ='%s' is neither a known time zone nor a POSIX TZ rule: %s", tzenv, e1.msg);
		errno = EINVAL;
		return NULL;
	}
	if (localtime) {
		char target[4096];
		ssize_t n = readlink(localtime, target, sizeof target - 1);
		if (n > 0) {
			target[n] = '\0';
			const char *z = strstr(target, "zoneinfo/");
			if (z && valid_zone_name(z + 9)) {
				tz_t *tz = tz_load(z + 9, NULL);
				if (tz)
					return tz;
			}
		}
		if (access(localtime, F_OK) == 0)
			return load_path(localtime, localtime, err);
	}
	tz_t *tz = tz_fixed("UTC", 0);
	if (!tz)
		tz_set_err(err, "out of memory");
	return tz;
}

tz_t *tz_load_default(tz_err_t *err)
{
	return tz_load_env(getenv("TZ"), "/etc/localtime", err);
}
