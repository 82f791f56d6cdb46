/* t/14-conf-errors.c: the configuration file's errors: every kind of error with its exact
 * message, and all errors of a file at once, in file order. The values the file gives: t/35. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "t/lib/tconf.h"
#include "t/tap.h"

#define HEAD TCONF_HEAD
#define ERRORS TCONF_ERRORS

static conf_t *parse(const char *yaml, conf_diags_t **d)
{
	return tconf_parse(yaml, NULL, d);
}

static void test_errors(void)
{
	ERRORS("the brief's example",
	       HEAD "jobs:\n  hello:\n    type: script\n    cron: '* * * * * ?'\n"
	       "    shardingTotalCount: four\n    props: {script.command.line: x}\n",
	       "t.yaml:8:5: jobs.hello.shardingTotalCount: must be an integer 1-10000 (got \"four\")");
	ERRORS("unknown key with a suggestion",
	       HEAD "jobs:\n  j:\n    type: external\n    crn: '* * * * * ?'\n    shardingTotalCount: 1\n",
	       "t.yaml:7:5: jobs.j.crn: unknown key; did you mean 'cron'?");
	ERRORS("unknown key without a close one lists the allowed keys",
	       "regCenter:\n  serverLists: a:1\n  namespace: n\n  colour: blue\njobs: {}\n",
	       "t.yaml:4:3: regCenter.colour: unknown key; allowed here: serverLists, namespace, "
	       "baseSleepTimeMilliseconds, maxSleepTimeMilliseconds, maxRetries, "
	       "sessionTimeoutMilliseconds, connectionTimeoutMilliseconds, digest or ensembleTracker");
	ERRORS("case is a typo too",
	       HEAD "supervisor:\n  LogLevel: info\njobs: {}\n",
	       "t.yaml:5:3: supervisor.LogLevel: unknown key; did you mean 'logLevel'?");
	ERRORS("jobName is not a key in the file",
	       HEAD "jobs:\n  j:\n    jobName: j\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n",
	       "t.yaml:6:5: jobs.j.jobName: not a key here: a job's name is its key under jobs:");
	ERRORS("duplicate keys",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    cron: '1 * * * * ?'\n  j:\n    type: native\n",
	       "t.yaml:9:5: jobs.j.cron: duplicate key (first at line 7, column 5); each key may "
	       "appear once",
	       "t.yaml:10:3: jobs.j: duplicate key (first at line 5, column 3); each key may appear once",
	       "t.yaml:10:3: jobs.j.shardingTotalCount: missing; every job needs the number of shard "
	       "items, 1-10000",
	       "t.yaml:10:3: jobs.j.props: a native job needs props 'native.library', the path of the "
	       "shared object",
	       "t.yaml:10:3: jobs.j.props: a native job needs props 'native.symbol', the C function "
	       "to call (an identifier)");
	ERRORS("wrong types",
	       HEAD "supervisor:\n  workers: [1]\n  attachAllowUids: 5\njobs:\n  j:\n    type: {}\n"
	       "    cron: [a]\n    shardingTotalCount: 1\n    failover: 1\n    props: [a]\n",
	       "t.yaml:5:3: supervisor.workers: must be an integer 1-1024 (got a list)",
	       "t.yaml:6:3: supervisor.attachAllowUids: must be a list of user names or numeric ids "
	       "(got a scalar)",
	       "t.yaml:9:5: jobs.j.type: must be one of script, native, external, http or dataflow (got a mapping)",
	       "t.yaml:10:5: jobs.j.cron: must be a string (got a list)",
	       "t.yaml:12:5: jobs.j.failover: must be true or false (got \"1\")",
	       "t.yaml:13:5: jobs.j.props: must be a mapping of names to strings (got a list)");
	ERRORS("out of range",
	       "regCenter:\n  serverLists: a:1\n  namespace: n\n  sessionTimeoutMilliseconds: 999\n"
	       "  baseSleepTimeMilliseconds: 0\n  connectionTimeoutMilliseconds: -1\n"
	       "supervisor:\n  workers: 1025\n  killGraceSeconds: 3601\n  scriptOutputMaxLines: -1\n"
	       "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 10001\n"
	       "    maxTimeDiffSeconds: -2\n    reconcileIntervalMinutes: -1\n    timeoutSeconds: -1\n"
	       "    maxRetries: 101\n",
	       "t.yaml:4:3: regCenter.sessionTimeoutMilliseconds: must be an integer 1000-600000 (got \"999\")",
	       "t.yaml:5:3: regCenter.baseSleepTimeMilliseconds: must be an integer 1-600000 (got \"0\")",
	       "t.yaml:6:3: regCenter.connectionTimeoutMilliseconds: must be an integer 0-600000 (got \"-1\")",
	       "t.yaml:8:3: supervisor.workers: must be an integer 1-1024 (got \"1025\")",
	       "t.yaml:9:3: supervisor.killGraceSeconds: must be an integer 0-3600 (got \"3601\")",
	       "t.yaml:10:3: supervisor.scriptOutputMaxLines: must be an integer 0-2147483647 (0: no limit) "
	       "(got \"-1\")",
	       "t.yaml:15:5: jobs.j.shardingTotalCount: must be an integer 1-10000 (got \"10001\")",
	       "t.yaml:16:5: jobs.j.maxTimeDiffSeconds: must be -1 (no check) or an integer "
	       "0-2147483647 (got \"-2\")",
	       "t.yaml:17:5: jobs.j.reconcileIntervalMinutes: must be an integer 0-2147483647 (0: off) "
	       "(got \"-1\")",
	       "t.yaml:18:5: jobs.j.timeoutSeconds: must be an integer 0-2147483647 (0: no limit) "
	       "(got \"-1\")",
	       "t.yaml:19:5: jobs.j.maxRetries: must be an integer 0-100 (got \"101\")");
	ERRORS("maxSleep below baseSleep",
	       "regCenter:\n  serverLists: a:1\n  namespace: n\n  baseSleepTimeMilliseconds: 5000\n"
	       "jobs: {}\n",
	       "t.yaml:4:3: regCenter.baseSleepTimeMilliseconds: must be at most "
	       "maxSleepTimeMilliseconds (3000, its default) (got 5000); raise that too");
	ERRORS("maxSleep below baseSleep, both given",
	       "regCenter:\n  serverLists: a:1\n  namespace: n\n  baseSleepTimeMilliseconds: 500\n"
	       "  maxSleepTimeMilliseconds: 400\njobs: {}\n",
	       "t.yaml:5:3: regCenter.maxSleepTimeMilliseconds: must be at least "
	       "baseSleepTimeMilliseconds (500) (got 400)");
	ERRORS("an integer too big for any type",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 99999999999999999999\n",
	       "t.yaml:8:5: jobs.j.shardingTotalCount: must be an integer 1-10000 (got \"99999999999999999999\")");
	ERRORS("empty and missing required keys",
	       "regCenter:\n  serverLists: ''\nsupervisor:\njobs:\n  j:\n    type: external\n"
	       "    cron: ''\n    timeZone: ''\n    shardingTotalCount: ~\n",
	       "t.yaml:1:1: regCenter.namespace: missing; give the root node of the jobs, e.g. \"ejob-demo\"",
	       "t.yaml:2:3: regCenter.serverLists: must not be empty; give host:port pairs, e.g. "
	       "\"zk1:2181,zk2:2181\"",
	       "t.yaml:8:5: jobs.j.timeZone: must not be empty; leave the key out to unset it",
	       "t.yaml:9:5: jobs.j.shardingTotalCount: must be an integer 1-10000 (got nothing)");
	ERRORS("missing sections", "supervisor: {}\n",
	       "t.yaml:1:1: regCenter: missing; the file needs regCenter with serverLists and namespace",
	       "t.yaml:1:1: jobs: missing; the file needs jobs, a mapping of job names to jobs "
	       "(jobs: {} for none)");
	ERRORS("missing type", HEAD "jobs:\n  j:\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n",
	       "t.yaml:5:3: jobs.j.type: missing; every job needs a type: script, native, external, http or dataflow");
	ERRORS("what each type needs",
	       HEAD "jobs:\n  s:\n    type: script\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    props: {script.command.line: ' '}\n"
	       "  n:\n    type: native\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    props: {native.library: lib.so, native.symbol: 'a-b'}\n"
	       "  e:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n",
	       "t.yaml:9:5: jobs.s.props: a script job needs props 'script.command.line', the command "
	       "to run (split into arguments, no shell)",
	       "t.yaml:14:5: jobs.n.props: a native job needs props 'native.symbol', the C function to "
	       "call (an identifier; got \"a-b\")");
	ERRORS("a script job without props",
	       HEAD "jobs:\n  s:\n    type: script\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n",
	       "t.yaml:5:3: jobs.s.props: a script job needs props 'script.command.line', the command "
	       "to run (split into arguments, no shell)");
	ERRORS("enumerations",
	       HEAD "supervisor:\n  logLevel: DEBUG\njobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n"
	       "    shardingTotalCount: 1\n    jobShardingStrategyType: ROUNDROBIN\n"
	       "    jobExecutorServiceHandlerType: SINGLE\n    jobErrorHandlerType: mail\n",
	       "t.yaml:5:3: supervisor.logLevel: must be one of error, warn, info or debug (got \"DEBUG\"); "
	       "did you mean 'debug'?",
	       "t.yaml:11:5: jobs.j.jobShardingStrategyType: must be one of AVG_ALLOCATION, "
	       "ODEVITY, ROUND_ROBIN or SINGLE_SHARDING_BALANCE (got \"ROUNDROBIN\"); did you mean 'ROUND_ROBIN'?",
	       "t.yaml:12:5: jobs.j.jobExecutorServiceHandlerType: must be one of CPU or SINGLE_THREAD "
	       "(got \"SINGLE\")",
	       "t.yaml:13:5: jobs.j.jobErrorHandlerType: must be one of LOG, THROW, IGNORE, EMAIL, "
	       "WECHAT, DINGTALK or WEBHOOK (got \"mail\"); did you mean 'EMAIL'?");
	ERRORS("names that become ZooKeeper nodes",
	       "regCenter:\n  serverLists: a:1\n  namespace: zookeeper\njobs:\n"
	       "  'a b':\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "  '..':\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "  'x@-@y':\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "  '':\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "  \"t\\tab\":\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n",
	       "t.yaml:3:3: regCenter.namespace: the name \"zookeeper\" is ZooKeeper's own node; a "
	       "namespace must be 1-255 bytes without '/', whitespace or control characters, and not "
	       "'.', '..' or 'zookeeper'",
	       "t.yaml:5:3: jobs.a b: the name \"a b\" contains whitespace or a control character; a "
	       "job name must be 1-255 bytes without '/', '@-@', whitespace or control characters, "
	       "and not '.' or '..'",
	       "t.yaml:9:3: jobs...: the name \"..\" is '.' or '..', which ZooKeeper does not allow; a "
	       "job name must be 1-255 bytes without '/', '@-@', whitespace or control characters, "
	       "and not '.' or '..'",
	       "t.yaml:13:3: jobs.x@-@y: the name \"x@-@y\" contains '@-@', ElasticJob's separator in "
	       "task ids; a job name must be 1-255 bytes without '/', '@-@', whitespace or control "
	       "characters, and not '.' or '..'",
	       "t.yaml:17:3: jobs.: the name \"\" is empty; a job name must be 1-255 bytes without '/', "
	       "'@-@', whitespace or control characters, and not '.' or '..'",
	       "t.yaml:21:3: jobs.t\\x09ab: the name \"t\\tab\" contains whitespace or a control "
	       "character; a job name must be 1-255 bytes without '/', '@-@', whitespace or control "
	       "characters, and not '.' or '..'");
	char longname[400];
	memset(longname, 'x', 256);
	snprintf(longname + 256, sizeof longname - 256, ":\n    type: external\n");
	char y[1024];
	snprintf(y, sizeof y, HEAD "jobs:\n  %s    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n", longname);
	conf_diags_t *d;
	conf_t *c = parse(y, &d);
	ok(!c && conf_diags_count(d) == 1 && strstr(conf_diags_get(d, 0)->msg, "is longer than 255 bytes"),
	   "a 256-byte job name is refused");
	conf_free(c);
	conf_diags_free(d);

	ERRORS("serverLists",
	       "regCenter:\n  serverLists: 'zk1:2181,zk2'\n  namespace: n\njobs: {}\n",
	       "t.yaml:2:26: regCenter.serverLists: server \"zk2\" needs a port, e.g. 127.0.0.1:2181; "
	       "serverLists is host:port pairs separated by commas");
	ERRORS("serverLists port",
	       "regCenter:\n  serverLists: zk1:2181,zk2:65536\n  namespace: n\njobs: {}\n",
	       "t.yaml:2:25: regCenter.serverLists: server \"zk2:65536\" has a port that is not 1-65535; "
	       "serverLists is host:port pairs separated by commas");
	ERRORS("serverLists chroot",
	       "regCenter:\n  serverLists: zk1:2181/ejob\n  namespace: n\njobs: {}\n",
	       "t.yaml:2:16: regCenter.serverLists: server \"zk1:2181/ejob\" has a chroot path; ejob puts "
	       "its nodes under namespace instead; serverLists is host:port pairs separated by commas");
	c = parse("regCenter:\n  serverLists: '[::1]:2181,zk.example:2181'\n  namespace: n\njobs: {}\n", &d);
	ok(c != NULL, "IPv6 in brackets and host names");
	conf_free(c);
	conf_diags_free(d);
	ERRORS("digest",
	       "regCenter:\n  serverLists: a:1\n  namespace: n\n  digest: secret\njobs: {}\n",
	       "t.yaml:4:3: regCenter.digest: must be \"user:password\"");
	ERRORS("ip and attachSocket",
	       HEAD "supervisor:\n  ip: host.example\n  attachSocket: run/x.sock\njobs: {}\n",
	       "t.yaml:5:3: supervisor.ip: must be an IPv4 or IPv6 address, e.g. 10.0.0.1 (got \"host.example\")",
	       "t.yaml:6:3: supervisor.attachSocket: must be an absolute path of at most 107 bytes");
	ERRORS("metrics",
	       HEAD "supervisor:\n  metrics: localhost:9464\njobs: {}\n",
	       "t.yaml:5:3: supervisor.metrics: must be IPv4:PORT or [IPv6]:PORT with a port 1-65535, e.g. "
	       "127.0.0.1:9464 (got \"localhost:9464\")");
	ERRORS("metrics port",
	       HEAD "supervisor:\n  metrics: 127.0.0.1:0\njobs: {}\n",
	       "t.yaml:5:3: supervisor.metrics: must be IPv4:PORT or [IPv6]:PORT with a port 1-65535, e.g. "
	       "127.0.0.1:9464 (got \"127.0.0.1:0\")");
	c = parse(HEAD "supervisor:\n  metrics: '[::1]:9464'\njobs: {}\n", &d);
	ok(c && c->supervisor.metrics && !strcmp(c->supervisor.metrics, "[::1]:9464"), "metrics: [::1]:9464");
	conf_free(c);
	conf_diags_free(d);
	ERRORS("props",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    props:\n      a:\n      b: [1]\n      ejob.type: native\n",
	       "t.yaml:10:7: jobs.j.props.a: must be a string (got nothing); quote it, e.g. \"\"",
	       "t.yaml:11:7: jobs.j.props.b: must be a string (got a list)",
	       "t.yaml:12:7: jobs.j.props.ejob.type: props named ejob.* are ejob's own; set the job keys "
	       "type, timeoutSeconds, maxRetries, concurrency and dependsOn instead");
	ERRORS("control characters",
	       HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    description: \"bell\\a\"\n    label: \"nul\\0\"\n",
	       "t.yaml:9:5: jobs.j.description: must not contain control characters other than tab and "
	       "newline (got \"bell\\x07\")",
	       "t.yaml:10:5: jobs.j.label: must not contain NUL characters");
	ERRORS("lists",
	       HEAD "supervisor:\n  attachAllowGids: [staff, 4294967295, -1, ~]\njobs:\n  j:\n"
	       "    type: external\n    cron: '0 * * * * ?'\n    shardingTotalCount: 1\n"
	       "    jobListenerTypes: a\n    jobExtraConfigurations: [1]\n",
	       "t.yaml:5:28: supervisor.attachAllowGids[1]: must be a group id 0-4294967294 (got \"4294967295\")",
	       "t.yaml:5:40: supervisor.attachAllowGids[2]: must be a group name (letters, digits, '_', "
	       "'-', '.', at most 32) or a numeric id (got \"-1\")",
	       "t.yaml:5:44: supervisor.attachAllowGids[3]: must be a group name or a numeric id (got nothing)",
	       "t.yaml:11:5: jobs.j.jobListenerTypes: must be a list of listener type names (got a scalar)",
	       "t.yaml:12:30: jobs.j.jobExtraConfigurations[0]: must be a mapping, an ElasticJob extra "
	       "configuration (got a scalar)");
	ERRORS("structure", HEAD "supervisor: 5\njobs: [a]\n",
	       "t.yaml:4:1: supervisor: must be a mapping (got a scalar)",
	       "t.yaml:5:1: jobs: must be a mapping of job names to jobs (got a list); write jobs: {} "
	       "for none");
	ERRORS("a job that is not a mapping", HEAD "jobs:\n  j: 5\n",
	       "t.yaml:5:6: jobs.j: a job must be a mapping of its keys (got a scalar)");
	ERRORS("not a mapping at the top", "- a\n- b\n",
	       "t.yaml:1:1: the file must be a mapping with the keys regCenter, supervisor and jobs "
	       "(got a list)");
	ERRORS("empty file", "# nothing\n",
	       "t.yaml:1:1: the file is empty; it needs regCenter (serverLists, namespace) and jobs");
	ERRORS("YAML syntax error", HEAD "jobs:\n  j:\n    type: external\n   cron: '0 * * * * ?'\n",
	       "t.yaml:7:4: YAML syntax error: did not find expected key (while parsing a block mapping "
	       "at line 5, column 3)");
	ERRORS("tabs", HEAD "jobs:\n\tj: {}\n",
	       "t.yaml:5:1: YAML syntax error: found character that cannot start any token (while "
	       "scanning for the next token at line 5, column 1)");
	ERRORS("two documents", HEAD "jobs: {}\n---\na: 1\n",
	       "t.yaml:5:1: a second YAML document; the file must hold exactly one");
	ERRORS("invalid UTF-8", HEAD "jobs: {}\n# caf\xe9\n",
	       "t.yaml:5:6: YAML syntax error: incomplete UTF-8 octet sequence; the file must be UTF-8 text");
	ERRORS("a byte that starts no UTF-8 character", HEAD "jobs: {}\n# \xff\n",
	       "t.yaml:5:3: YAML syntax error: invalid leading UTF-8 octet (byte 0xff); the file must be "
	       "UTF-8 text");
	ERRORS("an alias to nothing", HEAD "jobs: *nope\n",
	       "t.yaml:4:7: alias *\"nope\" refers to no anchor defined before it");
	ERRORS("a key that is a list", HEAD "jobs:\n  [a]: 1\n",
	       "t.yaml:5:3: jobs: a key must be a scalar (got a list)");
	ERRORS("a merge of a scalar", HEAD "jobs:\n  j:\n    <<: 5\n",
	       "t.yaml:5:3: jobs.j.shardingTotalCount: missing; every job needs the number of shard "
	       "items, 1-10000",
	       "t.yaml:5:3: jobs.j.type: missing; every job needs a type: script, native, external, http or dataflow",
	       "t.yaml:6:9: jobs.j.<<: a merge key takes a mapping or a list of mappings (got a scalar)");
}

static void test_many_errors(void)
{
	/* one file, nine mistakes in three sections: all of them, in file order */
	const char *y =
		"regCenter:\n"
		"  serverLists: 127.0.0.1\n"
		"  namespace: a/b\n"
		"supervisor:\n"
		"  workers: 0\n"
		"  logLevel: verbose\n"
		"jobs:\n"
		"  one:\n"
		"    type: scrip\n"
		"    cron: '* * * * * ?'\n"
		"    shardingTotalCount: 2\n"
		"    shardingItemParameters: 0=a,2=b\n"
		"  two:\n"
		"    type: external\n"
		"    crn: '* * * * * ?'\n"
		"    shardingTotalCount: 1\n"
		"    failover: sometimes\n";
	ERRORS("every error of the file is reported", y,
	       "t.yaml:2:16: regCenter.serverLists: server \"127.0.0.1\" needs a port, e.g. "
	       "127.0.0.1:2181; serverLists is host:port pairs separated by commas",
	       "t.yaml:3:3: regCenter.namespace: the name \"a/b\" contains '/'; a namespace must be "
	       "1-255 bytes without '/', whitespace or control characters, and not '.', '..' or "
	       "'zookeeper'",
	       "t.yaml:5:3: supervisor.workers: must be an integer 1-1024 (got \"0\")",
	       "t.yaml:6:3: supervisor.logLevel: must be one of error, warn, info or debug (got \"verbose\")",
	       "t.yaml:9:5: jobs.one.type: must be one of script, native, external, http or dataflow (got \"scrip\"); "
	       "did you mean 'script'?",
	       "t.yaml:12:33: jobs.one.shardingItemParameters: item 2 is out of range: "
	       "shardingTotalCount is 2, so items are 0-1",
	       "t.yaml:15:5: jobs.two.crn: unknown key; did you mean 'cron'?",
	       "t.yaml:17:5: jobs.two.failover: must be true or false (got \"sometimes\")");

	/* more errors than kept: counted, not lost */
	size_t cap = 1 << 16, o = 0;
	char *big = malloc(cap);
	o += (size_t)snprintf(big + o, cap - o, HEAD "jobs:\n  j:\n    type: external\n    cron: '0 * * * * ?'\n"
	                      "    shardingTotalCount: 1\n");
	for (int i = 0; i < 1200; i++) o += (size_t)snprintf(big + o, cap - o, "    k%d: 1\n", i);
	conf_diags_t *d;
	conf_t *c = conf_parse(big, o, "t.yaml", NULL, &d);
	ok(!c, "1200 unknown keys fail");
	is_int(conf_diags_count(d), CONF_MAX_DIAGS, "the first 1000 are kept");
	is_int(conf_diags_dropped(d), 200, "the other 200 are counted");
	conf_diags_free(d);
	free(big);
}

int main(void)
{
	test_errors();
	test_many_errors();
	return done_testing();
}
