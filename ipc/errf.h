/* ipc/errf.h: the lower layers' error convention (docs/design.md "Errors"): a function that can
 * fail returns -1 (or NULL) and writes why into a caller's buffer, err[errlen]; this fills it. */
#ifndef EJOB_ERRF_H
#define EJOB_ERRF_H

#include <stddef.h>

/* printf into err (errlen bytes, cut if longer: a cut message is still a message); err may be
 * NULL or errlen 0, then nothing is written. */
void ejob_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
