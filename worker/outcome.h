/* worker/outcome.h: how one item ended, as the runners (script.c, native.c) report it to
 * ejob-worker's loop, which hands it to ejob_done. */
#ifndef EJOB_OUTCOME_H
#define EJOB_OUTCOME_H

#include <stdint.h>

#include "worker/ejob.h"

struct outcome {
	int status;                    /* enum ejob_status */
	int code;                      /* exit code or return value */
	int sig;                       /* terminating signal, 0 if none */
	char err[EJOB_ERROR_MAX + 1];  /* "" unless status is EJOB_ERROR (or a runner note) */
	/* the tail of a script's output, stdout and stderr as they came (ejob_set_output keeps the
	 * last EJOB_OUTPUT_MAX bytes of it); out_len 0: none */
	size_t out_len;
	char out[2 * EJOB_OUTPUT_MAX];
};

#endif
