#!/bin/sh
# examples/listener.sh: a listener command (props ejob.listener.*; docs/config.md "Listeners").
# It gets its command line's words and one more argument, the fire's context as JSON; ejob sets
# EJOB_LISTENER (before, after, beforeAll, afterAll), EJOB_JOB, EJOB_FIRE_ID, EJOB_EPOCH and
# EJOB_LISTENER_TAKEOVER (1: an earlier run of this once-per-fire command was cut short by a crash,
# so it may have done part of its work: make it safe to run again). What it prints goes to the
# supervisor's log. Exit 0 = ok; a failing before skips the fire on its instance, a failing
# beforeAll skips it everywhere.
for context; do :; done    # the last argument
echo "$EJOB_LISTENER of $EJOB_JOB, fire $EJOB_FIRE_ID (takeover $EJOB_LISTENER_TAKEOVER): $context"
