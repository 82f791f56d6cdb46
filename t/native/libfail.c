/* t/native/libfail.c: a native job whose every item fails at once (returns 3): many failures in
 * no time, for t/79's error handlers' bounded queue. */
#include "worker/ejob.h"

int fail_item(const ejob_context *ctx);

int fail_item(const ejob_context *ctx)
{
	(void)ctx;
	return 3;
}
