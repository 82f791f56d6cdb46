/* t/tap.h: a small TAP producer for ejob's tests (header only).
 *
 *   plan(N) or plan_no_plan(); ... done_testing();
 *   ok(cond, "name %d", i)          is_int(got, want, "name")     is_str(got, want, "name")
 *   diag("fmt", ...)  note("fmt", ...)  skip(n, "why")  BAIL_OUT("why")
 *
 * Every check returns its result, so a test can stop early: if (!ok(...)) return ...
 * Failures print the file and line and both values. The exit status is the number of
 * failures (capped at 254), 255 after BAIL_OUT, as prove expects.
 */
#ifndef EJOB_TAP_H
#define EJOB_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* a test linked with t/lib/tlib keeps its temp dir when a check fails (weak: tlib is optional) */
extern void tlib_keep_tmp(void) __attribute__((weak));

static int tap_planned = -1;
static int tap_run;
static int tap_failed;

static void tap_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void tap_vline(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096];
	vsnprintf(buf, sizeof buf, fmt, ap);
	/* one "# " per line, so multi-line diagnostics stay TAP */
	char *line = buf;
	for (;;) {
		char *nl = strchr(line, '\n');
		if (nl) *nl = '\0';
		fprintf(f, "%s%s\n", prefix, line);
		if (!nl || nl[1] == '\0') break;
		line = nl + 1;
	}
	fflush(f);
}

__attribute__((format(printf, 1, 2), unused))
static void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fflush(stdout);
	tap_vline(stderr, "# ", fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 1, 2), unused))
static void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vline(stdout, "# ", fmt, ap);
	va_end(ap);
}

__attribute__((unused))
static void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

__attribute__((noreturn, format(printf, 1, 2), unused))
static void BAIL_OUT(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("Bail out! ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	if (tlib_keep_tmp) tlib_keep_tmp();
	exit(255);
}

__attribute__((format(printf, 4, 0)))
static int tap_vok(int pass, const char *file, int line, const char *fmt, va_list ap)
{
	char name[1024];
	vsnprintf(name, sizeof name, fmt, ap);
	tap_run++;
	printf("%sok %d - %s\n", pass ? "" : "not ", tap_run, name);
	fflush(stdout);
	if (!pass) {
		tap_failed++;
		if (tlib_keep_tmp) tlib_keep_tmp();
		diag("  Failed test '%s'\n  at %s line %d.", name, file, line);
	}
	return pass;
}

__attribute__((format(printf, 4, 5), unused))
static int tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = tap_vok(pass, file, line, fmt, ap);
	va_end(ap);
	return r;
}

__attribute__((format(printf, 5, 6), unused))
static int tap_is_int(intmax_t got, intmax_t want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = tap_vok(got == want, file, line, fmt, ap);
	va_end(ap);
	if (!r) diag("         got: %jd\n    expected: %jd", got, want);
	return r;
}

__attribute__((format(printf, 5, 6), unused))
static int tap_is_str(const char *got, const char *want, const char *file, int line, const char *fmt, ...)
{
	int pass = (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0);
	va_list ap;
	va_start(ap, fmt);
	int r = tap_vok(pass, file, line, fmt, ap);
	va_end(ap);
	if (!r) diag("         got: %s%s%s\n    expected: %s%s%s",
	             got ? "'" : "", got ? got : "NULL", got ? "'" : "",
	             want ? "'" : "", want ? want : "NULL", want ? "'" : "");
	return r;
}

__attribute__((unused))
static void skip(int n, const char *why)
{
	for (int i = 0; i < n; i++) {
		tap_run++;
		printf("ok %d # skip %s\n", tap_run, why);
	}
	fflush(stdout);
}

__attribute__((unused))
static int done_testing(void)
{
	if (tap_planned < 0) {
		printf("1..%d\n", tap_run);
	} else if (tap_planned != tap_run) {
		diag("Looks like you planned %d tests but ran %d.", tap_planned, tap_run);
		if (!tap_failed) tap_failed = 1;
	}
	fflush(stdout);
	return tap_failed > 254 ? 254 : tap_failed;
}

#define ok(cond, ...)          tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) tap_is_int((intmax_t)(got), (intmax_t)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define pass(...)              tap_ok(1, __FILE__, __LINE__, __VA_ARGS__)
#define fail(...)              tap_ok(0, __FILE__, __LINE__, __VA_ARGS__)

#endif
