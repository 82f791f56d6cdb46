/* t/21-context-json.c: the sharding-context JSON a script job gets as its last argument,
 * byte for byte as ElasticJob's ScriptJobExecutor writes it with a default Gson (field order,
 * HTML-safe escapes, null shardingParameter left out), and the script's environment. */
#include <stdlib.h>
#include <string.h>

#include "t/tap.h"
#include "worker/script.h"

static ejob_context ctx(const char *job, const char *task, uint32_t total, const char *jparam,
                        uint32_t item, const char *iparam)
{
	ejob_context c = { .size = sizeof c, .kind = EJOB_KIND_SCRIPT, .job = job, .task_id = task,
	                   .total = total, .job_param = jparam, .item = item, .item_param = iparam,
	                   .epoch = 77, .fire_id = 5, .xid = 9, .attempt = 2, .deadline_ms = 1700000000123ull };
	return c;
}

static void check(const ejob_context *c, const char *want, const char *name)
{
	json_buf_t b;
	json_init(&b);
	int r = script_context_json(c, &b);
	ok(r == 0 && !b.oom, "%s: built", name);
	is_str(b.p, want, "%s: exact bytes", name);
	json_free(&b);
}

static const char *env_get(char **env, const char *name)
{
	size_t l = strlen(name);
	const char *found = NULL;
	int count = 0;
	for (char **e = env; *e; e++)
		if (!strncmp(*e, name, l) && (*e)[l] == '=') { found = *e + l + 1; count++; }
	return count == 1 ? found : count ? "(twice)" : NULL;
}

int main(void)
{
	plan(37);

	ejob_context c = ctx("hello", "hello@-@0,1@-@READY@-@127.0.0.1@-@4242", 4, "", 1, "b");
	check(&c, "{\"jobName\":\"hello\",\"taskId\":\"hello@-@0,1@-@READY@-@127.0.0.1@-@4242\","
	          "\"shardingTotalCount\":4,\"jobParameter\":\"\",\"shardingItem\":1,\"shardingParameter\":\"b\"}",
	      "the docs/worker.md example");

	/* Gson's HTML-safe escapes: < > & = ' become \u003c \u003e \u0026 \u003d \u0027 */
	c = ctx("j", "j@-@0@-@READY@-@10.0.0.1@-@42", 3, "a=1&b<2>'x'", 0, "k=v");
	check(&c, "{\"jobName\":\"j\",\"taskId\":\"j@-@0@-@READY@-@10.0.0.1@-@42\",\"shardingTotalCount\":3,"
	          "\"jobParameter\":\"a\\u003d1\\u0026b\\u003c2\\u003e\\u0027x\\u0027\",\"shardingItem\":0,"
	          "\"shardingParameter\":\"k\\u003dv\"}",
	      "HTML-safe escapes");

	/* quotes, backslashes, control characters: \" \\ \n \t \r \b \f, the others as \u00XX
	 * (lower-case hex, as Gson writes them); DEL and '/' stay as they are */
	c = ctx("q", "t", 1, "say \"hi\"\\ \n\t\r\b\f\x01\x1f\x7f/", 0, "");
	check(&c, "{\"jobName\":\"q\",\"taskId\":\"t\",\"shardingTotalCount\":1,"
	          "\"jobParameter\":\"say \\\"hi\\\"\\\\ \\n\\t\\r\\b\\f\\u0001\\u001f\x7f/\",\"shardingItem\":0}",
	      "quotes, backslash, control characters; no parameter: field left out");

	/* non-ASCII as UTF-8 bytes, except U+2028 and U+2029, which Gson escapes */
	c = ctx("caf\xc3\xa9", "caf\xc3\xa9@-@2@-@READY@-@h@-@1", 8, "\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	        2, "a\xe2\x80\xa8" "b\xe2\x80\xa9" "c");
	check(&c, "{\"jobName\":\"caf\xc3\xa9\",\"taskId\":\"caf\xc3\xa9@-@2@-@READY@-@h@-@1\",\"shardingTotalCount\":8,"
	          "\"jobParameter\":\"\xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80\",\"shardingItem\":2,"
	          "\"shardingParameter\":\"a\\u2028b\\u2029c\"}",
	      "non-ASCII kept, U+2028/U+2029 escaped");

	/* numbers at their limits */
	c = ctx("n", "n@-@999999@-@READY@-@h@-@1", 1000000, "", 999999, "z");
	check(&c, "{\"jobName\":\"n\",\"taskId\":\"n@-@999999@-@READY@-@h@-@1\",\"shardingTotalCount\":1000000,"
	          "\"jobParameter\":\"\",\"shardingItem\":999999,\"shardingParameter\":\"z\"}",
	      "largest item and total");

	/* the environment: base kept (but the supervisor-to-worker variables), EJOB_* set once */
	c = ctx("hello", "hello@-@0,1@-@READY@-@127.0.0.1@-@4242", 4, "", 1, "b");
	char *base[] = { (char *)"PATH=/usr/bin:/bin", (char *)"EJOB_SUPERVISOR_PID=42", (char *)"HOME=/root",
	                 (char *)"EJOB_WORKER_INDEX=3", (char *)"EJOB_EPOCH=1", (char *)"EJOB_JOBX=keep",
	                 (char *)"EJOB_ITEM=old", (char *)"EJOB_SHARDING_PARAMETER=old", NULL };
	char **env = NULL;
	ok(script_env(base, &c, &env) == 0 && env, "script_env");
	is_str(env_get(env, "PATH"), "/usr/bin:/bin", "PATH kept");
	is_str(env_get(env, "HOME"), "/root", "HOME kept");
	is_str(env_get(env, "EJOB_JOBX"), "keep", "a longer name that starts like ours is kept");
	ok(!env_get(env, "EJOB_SUPERVISOR_PID"), "EJOB_SUPERVISOR_PID not passed on");
	ok(!env_get(env, "EJOB_WORKER_INDEX"), "EJOB_WORKER_INDEX not passed on");
	is_str(env_get(env, "EJOB_JOB"), "hello", "EJOB_JOB");
	is_str(env_get(env, "EJOB_TASK_ID"), "hello@-@0,1@-@READY@-@127.0.0.1@-@4242", "EJOB_TASK_ID");
	is_str(env_get(env, "EJOB_ITEM"), "1", "EJOB_ITEM (replaces the inherited one)");
	is_str(env_get(env, "EJOB_TOTAL"), "4", "EJOB_TOTAL");
	is_str(env_get(env, "EJOB_EPOCH"), "77", "EJOB_EPOCH (replaces the inherited one)");
	is_str(env_get(env, "EJOB_FIRE_ID"), "5", "EJOB_FIRE_ID");
	is_str(env_get(env, "EJOB_ATTEMPT"), "2", "EJOB_ATTEMPT");
	is_str(env_get(env, "EJOB_DEADLINE_MS"), "1700000000123", "EJOB_DEADLINE_MS");
	is_str(env_get(env, "EJOB_JOB_PARAMETER"), "", "EJOB_JOB_PARAMETER: empty, as ElasticJob's \"\" for none");
	is_str(env_get(env, "EJOB_SHARDING_PARAMETER"), "b", "EJOB_SHARDING_PARAMETER (replaces the inherited one)");
	is_str(env_get(env, "EJOB_WORKFLOW_RUN"), "", "EJOB_WORKFLOW_RUN: empty, no workflow's");
	int n = 0;
	for (char **e = env; *e; e++) n++;
	is_int(n, 3 + 11, "3 inherited + 11 set, nothing else");
	free(env);

	/* the parameters raw, where the JSON has them Gson-escaped */
	c = ctx("j", "j@-@0@-@READY@-@10.0.0.1@-@42", 3, "mode=fast&x<y> 'q' \"z\"\\", 0, "k=v\u00e9");
	ok(script_env(base, &c, &env) == 0, "script_env with parameters that JSON escapes");
	is_str(env_get(env, "EJOB_JOB_PARAMETER"), "mode=fast&x<y> 'q' \"z\"\\", "EJOB_JOB_PARAMETER raw");
	is_str(env_get(env, "EJOB_SHARDING_PARAMETER"), "k=v\u00e9", "EJOB_SHARDING_PARAMETER raw");
	free(env);

	/* no sharding parameter: empty (ElasticJob refuses an empty one, so empty is "none") */
	c = ctx("j", "t", 3, "", 1, "");
	ok(script_env(base, &c, &env) == 0, "script_env, item without a parameter");
	is_str(env_get(env, "EJOB_SHARDING_PARAMETER"), "", "EJOB_SHARDING_PARAMETER empty, the inherited one dropped");
	free(env);

	ok(script_env(NULL, &c, &env) == 0, "script_env with an empty base");
	n = 0;
	for (char **e = env; *e; e++) n++;
	is_int(n, 11, "just the 11");
	free(env);
	c.workflow_run = 1795478400000ull;
	ok(script_env(NULL, &c, &env) == 0, "script_env, an item of a workflow run");
	is_str(env_get(env, "EJOB_WORKFLOW_RUN"), "1795478400000", "EJOB_WORKFLOW_RUN: the run's id");
	free(env);
	return done_testing();
}
