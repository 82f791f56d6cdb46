/* cron/tz_int.h: what tz.c and tz_load.c share; private to them. */
#ifndef EJOB_TZ_INT_H
#define EJOB_TZ_INT_H

#include "cron/tz.h"

#define MAX_TZIF_BYTES (1 << 20)   /* a zone file larger than this is refused */

/* why, into err (NULL: nothing), cut with "..." when it does not fit */
void tz_set_err(tz_err_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* s is a whole POSIX TZ rule (as tz_from_posix takes it) */
int tz_posix_valid(const char *s);

#endif
