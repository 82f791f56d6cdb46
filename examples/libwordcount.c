/* examples/libwordcount.c: a native dataflow job (built as build/examples/libwordcount.so): ElasticJob's
 * DataflowJob in C (docs/config.md "dataflow jobs"; examples/dataflow.yaml runs it).
 *
 *   jobs:
 *     wordcount:
 *       type: dataflow
 *       shardingTotalCount: 2
 *       jobParameter: examples/dataflow.yaml     # the text to read
 *       props:
 *         streaming.process: "true"
 *         dataflow.batch.bytes: "256"
 *         native.library: build/examples/libwordcount.so
 *         native.fetch: wc_fetch
 *         native.process: wc_process
 *
 * Item i of n reads the lines of the file whose number (from 0) is i modulo n. wc_fetch fills the
 * batch buffer with as many of them as fit whole (a longer line is cut to the buffer), and
 * returns 0 once the file is read; wc_process counts the lines and words of one batch and writes
 * a line to stderr (the supervisor's log):
 *
 *   wordcount item 1/2 batch 1: 7 lines, 31 words
 *
 * With streaming.process true an item reads its whole share, batch after batch; without it, only
 * its first batch. The position in the file lives in a static, restarted for each new item
 * (ctx->xid): ejob-worker runs one item at a time, so no lock is needed. Before each fetch the
 * loop looks at ejob_cancelled, so a timeout or a shutdown ends the item between batches. */
#include <stdio.h>
#include <string.h>

#include "worker/ejob.h"

long wc_fetch(const ejob_context *ctx, void *buf, size_t cap, void *arg);
int wc_process(const ejob_context *ctx, const void *batch, size_t len, void *arg);

static uint64_t cur_xid;
static long offset;          /* where the next fetch reads */
static unsigned long line;   /* the number of the line at offset */
static unsigned batches;

long wc_fetch(const ejob_context *ctx, void *buf, size_t cap, void *arg)
{
	(void)arg;
	if (ctx->xid != cur_xid) {
		cur_xid = ctx->xid;
		offset = 0;
		line = 0;
		batches = 0;
	}
	FILE *f = fopen(ctx->job_param, "re");
	if (!f) return -1;   /* the item fails with code -1 */
	if (fseek(f, offset, SEEK_SET) < 0) {
		fclose(f);
		return -2;
	}
	char l[4096];
	size_t n = 0;
	for (;;) {
		long at = ftell(f);
		if (!fgets(l, sizeof l, f)) break;
		size_t ll = strlen(l);
		if (line % ctx->total == ctx->item) {
			if (n + ll > cap && n) {   /* does not fit whole: it starts the next batch */
				offset = at;
				fclose(f);
				return (long)n;
			}
			if (ll > cap) ll = cap;
			memcpy((char *)buf + n, l, ll);
			n += ll;
		}
		line++;
	}
	offset = ftell(f);
	fclose(f);
	return (long)n;   /* 0 once the file is read: the item ends */
}

int wc_process(const ejob_context *ctx, const void *batch, size_t len, void *arg)
{
	(void)arg;
	const char *p = batch;
	unsigned lines = 0, words = 0;
	int in = 0;
	for (size_t i = 0; i < len; i++) {
		int space = p[i] == ' ' || p[i] == '\t' || p[i] == '\n';
		if (!space && !in) words++;
		in = !space;
		if (p[i] == '\n') lines++;
	}
	fprintf(stderr, "%s item %u/%u batch %u: %u lines, %u words\n", ctx->job, ctx->item, ctx->total, ++batches,
	        lines, words);
	return 0;
}
