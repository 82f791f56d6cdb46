/* t/native/libfail.c: native jobs whose every item fails at once (returns 3): many failures in
 * no time.
 *   fail_item         for t/79's error handlers' bounded queue
 *   fail_quotes_item  with an output of 1,020 quotes and backslashes and a newline, which JSON
 *                     doubles: t/111's fire whose failed items' records outgrow one request */
#include <string.h>

#include "worker/ejob.h"

int fail_item(const ejob_context *ctx);
int fail_quotes_item(const ejob_context *ctx);

int fail_item(const ejob_context *ctx)
{
	(void)ctx;
	return 3;
}

int fail_quotes_item(const ejob_context *ctx)
{
	char out[1021];
	for (int i = 0; i < 1020; i++) out[i] = i % 2 ? '\\' : '"';
	out[1020] = '\n';
	if (ejob_set_output(ctx, out, sizeof out) < 0) return 4;
	return 3;
}
