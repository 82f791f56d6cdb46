/* ipc/cmdline.h: command lines, for whoever starts programs without a shell: the script
 * worker (worker/script.c), the supervisor's listener commands (supervisor/run/listen.c) and
 * ejobctl's checks of a job's program (tools/). Below every one of them, so that none borrows
 * from another's folder. */
#ifndef EJOB_CMDLINE_H
#define EJOB_CMDLINE_H

#include <stddef.h>

/* Split cmd into words: blanks (space, tab, newline) separate words; 'single quotes' keep
 * everything literally; "double quotes" keep everything but \" \\ \$ \` (the backslash goes)
 * and backslash-newline (both go); an unquoted backslash keeps the next character literally
 * (backslash-newline is removed). Adjacent quoted and unquoted parts form one word; '' and ""
 * make empty words. Nothing else is special: no variables, globs, ~, comments, redirections,
 * pipes or semicolons. Returns the number of words (>= 1) with *argv_out a NULL-terminated
 * array in one malloc'd block (free(*argv_out)) that has `reserve` more NULL entries before
 * its terminator, for the caller to append arguments; or -1 with errno EINVAL and the reason
 * in err ("unterminated single quote starting at column 5"), or ENOMEM. */
int cmd_split(const char *cmd, size_t reserve, char ***argv_out, char *err, size_t errlen);

/* The program a command's first word names, as the runner finds it: a word with '/' is a path
 * (a relative one from the working directory), copied as it is; a name is looked up in $PATH
 * like execvp does (an empty entry is the current directory; a regular file that is
 * executable), without ever falling back to a shell. 0 with the path in out; -1 with errno
 * ENOENT (not in $PATH), EACCES (found, but not executable) or ENAMETOOLONG. */
int cmd_resolve(const char *name, char *out, size_t len);

/* In a child between fork and exec (async-signal-safe): every fd from first_fd up closed, an
 * empty signal mask, every disposition back to default. */
void cmd_child_reset(int first_fd);

#endif
