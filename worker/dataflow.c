/* worker/dataflow.c: ejob_dataflow, ElasticJob's DataflowJobExecutor loop (ejob.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "worker/ejob.h"

/* Stamp the heartbeat and look at the cancel: 0 to go on, else the item's status and *end why. */
static int stop_here(const ejob_context *ctx, const char **end)
{
	if (ctx->priv) ejob_heartbeat((ejob_slot *)(uintptr_t)ctx->priv);
	int why = ejob_cancelled(ctx);
	if (!why) return 0;
	*end = why == EJOB_CANCEL_TIMEOUT ? "cancelled (timeout)" : why == EJOB_CANCEL_LEASE ? "cancelled (lease)" :
	       "cancelled (stop: the supervisor stopping, the job shut down or its server disabled)";
	return why == EJOB_CANCEL_TIMEOUT ? EJOB_TIMEOUT : EJOB_CANCELLED;
}

int ejob_dataflow(const ejob_context *ctx, ejob_fetch_fn *fetch, ejob_process_fn *process, void *arg, int *code,
                  char *err, size_t errlen)
{
	int dummy;
	if (!code) code = &dummy;
	*code = 0;
	char why[160] = "";
	if (!ctx || ctx->size < sizeof *ctx || !ctx->dataflow || ctx->dataflow > EJOB_DATAFLOW_STREAMING ||
	    !ctx->batch_max || ctx->batch_max > EJOB_BATCH_MAX || !fetch || !process) {
		if (err && errlen)
			snprintf(err, errlen, "%s", !ctx || ctx->size < sizeof *ctx || !ctx->dataflow ||
			         ctx->dataflow > EJOB_DATAFLOW_STREAMING ? "not a dataflow item" :
			         !fetch || !process ? "no fetch or process function" : "bad batch bound");
		return EJOB_ERROR;
	}
	void *buf = malloc(ctx->batch_max);
	if (!buf) {
		if (err && errlen) snprintf(err, errlen, "cannot allocate a batch buffer of %" PRIu32 " bytes "
		                            "(dataflow.batch.bytes)", ctx->batch_max);
		return EJOB_ERROR;
	}
	uint64_t batches = 0, bytes = 0;
	int status = EJOB_OK;
	const char *end = "empty fetch";
	for (;;) {
		if ((status = stop_here(ctx, &end))) break;
		long n = fetch(ctx, buf, ctx->batch_max, arg);
		if (n < 0 || (unsigned long)n > ctx->batch_max) {
			status = EJOB_FAILED;
			*code = n < 0 ? (n < INT32_MIN ? INT32_MIN : (int)n) : -1;
			if (n < 0) snprintf(why, sizeof why, "fetch failed (%ld)", n);
			else snprintf(why, sizeof why, "fetch claimed %ld bytes, more than the batch bound %" PRIu32, n,
			              ctx->batch_max);
			end = why;
			break;
		}
		if (n == 0) break;
		int rc = process(ctx, buf, (size_t)n, arg);
		if (rc) {
			status = EJOB_FAILED;
			*code = rc;
			snprintf(why, sizeof why, "process failed (%d) on batch %" PRIu64 " (%ld bytes)", rc, batches + 1, n);
			end = why;
			break;
		}
		batches++;
		bytes += (uint64_t)n;
		if (ctx->dataflow != EJOB_DATAFLOW_STREAMING) {
			end = "one batch (streaming.process false)";
			break;
		}
	}
	free(buf);
	char out[256];
	int l = snprintf(out, sizeof out, "%" PRIu64 " batch%s, %" PRIu64 " byte%s; ended: %s", batches,
	                 batches == 1 ? "" : "es", bytes, bytes == 1 ? "" : "s", end);
	/* fails only with ENOENT: ctx is not a slot's current item (a caller's own context) */
	if (l > 0) (void)ejob_set_output(ctx, out, (size_t)l < sizeof out ? (size_t)l : sizeof out - 1);
	if (err && errlen) snprintf(err, errlen, "%s", status == EJOB_OK ? "" : end);
	return status;
}
