/* t/20-argv.c: script.command.line split into argv (cmd_split), a table of cases with the
 * exact words expected (or the exact error), as a POSIX shell would split them (no expansion). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "t/tap.h"
#include "worker/script.h"

#define MAXW 8

struct ok_case {
	const char *cmd;
	int n;
	const char *w[MAXW];
};

static const struct ok_case oks[] = {
	{ "examples/hello.sh", 1, { "examples/hello.sh" } },
	{ "  a   b\tc\nd  ", 4, { "a", "b", "c", "d" } },
	{ "echo 'a b'  \"c d\"", 3, { "echo", "a b", "c d" } },
	{ "x '' \"\" y", 4, { "x", "", "", "y" } },
	{ "x ''", 2, { "x", "" } },
	{ "a'b'\"c\"d", 1, { "abcd" } },
	{ "'it'\\''s'", 1, { "it's" } },
	{ "a\\ b c", 2, { "a b", "c" } },
	{ "\\'x\\\" \\\\", 2, { "'x\"", "\\" } },
	{ "\"a\\\"b\\\\c\\$d\\`e\"", 1, { "a\"b\\c$d`e" } },
	{ "\"a\\nb\\'c\"", 1, { "a\\nb\\'c" } },          /* other backslashes stay in "..." */
	{ "'a\\nb\"c'", 1, { "a\\nb\"c" } },              /* nothing is special in '...' */
	{ "a\\\nb c", 2, { "ab", "c" } },                  /* backslash-newline joins */
	{ "\"a\\\nb\"", 1, { "ab" } },
	{ "x \\\n y", 2, { "x", "y" } },
	{ "$HOME ~ *.c #x a;b a|b >f", 7, { "$HOME", "~", "*.c", "#x", "a;b", "a|b", ">f" } },
	{ "\"$(id)\" `id`", 2, { "$(id)", "`id`" } },
	{ "caf\xc3\xa9 '\xe2\x80\xa8'", 2, { "caf\xc3\xa9", "\xe2\x80\xa8" } },
	{ "a \"b 'c' d\" e", 3, { "a", "b 'c' d", "e" } },
	{ "a 'b \"c\" d' e", 3, { "a", "b \"c\" d", "e" } },
	{ "\\a\\b", 1, { "ab" } },
};

struct err_case {
	const char *cmd;
	const char *err;
};

static const struct err_case errs[] = {
	{ "", "empty command line" },
	{ " \t\n ", "empty command line" },
	{ "\\\n", "empty command line" },
	{ "echo 'abc", "unterminated single quote starting at column 6" },
	{ "echo \"abc", "unterminated double quote starting at column 6" },
	{ "a \"b\\\"", "unterminated double quote starting at column 3" },
	{ "'", "unterminated single quote starting at column 1" },
	{ "echo abc\\", "trailing backslash at column 9: nothing to escape" },
	{ "\"'\" '", "unterminated single quote starting at column 5" },
};

int main(void)
{
	plan((int)(sizeof oks / sizeof oks[0]) * 2 + (int)(sizeof errs / sizeof errs[0]) * 2 + 4);

	for (size_t i = 0; i < sizeof oks / sizeof oks[0]; i++) {
		const struct ok_case *c = &oks[i];
		char **argv = NULL;
		char err[128] = "";
		int n = cmd_split(c->cmd, 0, &argv, err, sizeof err);
		if (!is_int(n, c->n, "case %zu: word count", i)) {
			diag("error: %s", err);
			skip(1, "no words");
			free(argv);
			continue;
		}
		int same = argv[n] == NULL;
		for (int k = 0; k < n; k++) {
			if (strcmp(argv[k], c->w[k]) != 0) {
				diag("word %d: got '%s', expected '%s'", k, argv[k], c->w[k]);
				same = 0;
			}
		}
		ok(same, "case %zu: words exactly as a shell splits them", i);
		free(argv);
	}

	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		char **argv = NULL;
		char err[128] = "";
		errno = 0;
		int n = cmd_split(errs[i].cmd, 0, &argv, err, sizeof err);
		ok(n == -1 && errno == EINVAL && argv == NULL, "error case %zu: refused with EINVAL", i);
		is_str(err, errs[i].err, "error case %zu: message", i);
	}

	/* reserve: room to append arguments, the array stays NULL-terminated */
	char **argv = NULL;
	char err[128];
	int n = cmd_split("run  it", 2, &argv, err, sizeof err);
	ok(n == 2 && argv[2] == NULL && argv[3] == NULL && argv[4] == NULL, "reserve 2: two more NULL slots");
	argv[2] = (char *)"{json}";
	ok(!strcmp(argv[0], "run") && !strcmp(argv[1], "it") && !strcmp(argv[2], "{json}") && argv[3] == NULL,
	   "an appended argument follows the words");
	free(argv);

	/* a long command line: many words, each exact */
	char big[4000];
	size_t l = 0;
	for (int i = 0; i < 500; i++) l += (size_t)snprintf(big + l, sizeof big - l, "'w%d' ", i);
	n = cmd_split(big, 0, &argv, err, sizeof err);
	is_int(n, 500, "500 quoted words");
	int all = n == 500;
	for (int i = 0; all && i < 500; i++) {
		char w[16];
		snprintf(w, sizeof w, "w%d", i);
		all = !strcmp(argv[i], w);
	}
	ok(all, "each of the 500 words exact");
	free(argv);
	return done_testing();
}
