#!/bin/sh
# examples/hello.sh: a script job.
#
#   jobs:
#     hello:
#       type: script
#       cron: "0/5 * * * * ?"
#       shardingTotalCount: 4
#       shardingItemParameters: "0=a,1=b,2=c,3=d"
#       props:
#         script.command.line: "examples/hello.sh --greeting hello"
#
# Like ElasticJob's script jobs, it gets its command line's words (split like a shell splits them,
# but never run through a shell) and one more argument: the sharding context as JSON, e.g.
#   {"jobName":"hello","taskId":"hello@-@0,1@-@READY@-@127.0.0.1@-@4242","shardingTotalCount":4,"jobParameter":"","shardingItem":1,"shardingParameter":"b"}
# ejob also sets EJOB_JOB, EJOB_TASK_ID, EJOB_ITEM, EJOB_TOTAL, EJOB_EPOCH (the fencing token),
# EJOB_FIRE_ID, EJOB_ATTEMPT, EJOB_DEADLINE_MS, and the parameters raw (not JSON-escaped):
# EJOB_SHARDING_PARAMETER ("b" for item 1) and EJOB_JOB_PARAMETER ("" when none). What it prints goes to the supervisor's log,
# one line at a time, tagged "<time> ejob-worker[<pid>] INFO [<taskId> item <n> attempt <a>] stdout:"
# (at most supervisor.scriptOutputMaxLines lines and scriptOutputMaxBytes bytes per run).
# Exit 0 = ok, anything else = failed.
for context; do :; done    # the last argument
greeting=hello
[ "$1" = --greeting ] && greeting=$2
echo "$greeting from item ${EJOB_ITEM} of ${EJOB_JOB} (attempt ${EJOB_ATTEMPT}, epoch ${EJOB_EPOCH})"
echo "context: $context"
