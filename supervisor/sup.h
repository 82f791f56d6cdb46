/* supervisor/sup.h: the supervisor's one context, main.c's: it creates the modules and wires
 * them together with hooks. No other file includes this one. */
#ifndef EJOB_SUP_H
#define EJOB_SUP_H

#include <ev.h>
#include <stdint.h>

#include "conf/conf.h"
#include "ipc/seg.h"
#include "ipc/version.h"
#include "supervisor/base/log.h"
#include "supervisor/cli.h"
#include "supervisor/coord/coord.h"
#include "supervisor/exec/attach.h"
#include "supervisor/exec/dispatch.h"
#include "supervisor/exec/pool.h"
#include "supervisor/local.h"
#include "supervisor/obs/httpd.h"
#include "supervisor/obs/metrics.h"
#include "supervisor/obs/sdnotify.h"
#include "supervisor/run/fire.h"
#include "supervisor/run/sched.h"
#include "supervisor/sink/errh.h"

struct sup {
	struct ev_loop *loop;
	struct sup_opts opts;
	conf_t *conf;
	char ip[64];
	char instance_id[96];       /* ElasticJob's "{ip}@-@{pid}" */
	char worker_bin[4096];
	seg_t *seg;
	pool_t *pool;
	disp_t *disp;
	disp_target_t *pool_target;
	att_t *att;
	int stopping;               /* SIGTERM/SIGINT seen (or --run finished) */
	int pool_stopped;           /* every pool worker has exited */
	uint64_t stop_by_ns;        /* stopping: leave by then even if external workers' items run */
	int exit_code;
	int draining;               /* SIGUSR2 or servers/{ip} DRAINING: every job left, nothing new runs here */
	int drained;                /* draining, and nothing is left here (said once) */
	char cancel_why[160];       /* the cause of items stopped past the grace (their outcomes point at it) */
	ev_signal sig_term, sig_int, sig_hup, sig_usr2;
	ev_child child_w;
	ev_timer tick_w;
	uint64_t tick_ns;           /* the last tick (a late one says the loop was held) */
	ev_timer shutdown_w;        /* grace before running items are asked to stop (a stop, a drain) */
	fires_t *fires;             /* every fire's items and outcomes (the dispatcher reports here) */
	events_t *events;           /* the execution events' sinks (NULL: none configured) */
	local_t *local;             /* fires without ZooKeeper: --standalone, --run */
	sched_t *sched;             /* the jobs' fire times (not with --run) */
	coord_t *coord;             /* ZooKeeper coordination, or NULL (--standalone, --run) */
	sdn_t *sdn;                 /* systemd's notifications (a no-op without $NOTIFY_SOCKET) */
	metrics_t *mx;              /* the counters behind /metrics (NULL: supervisor.metrics unset) */
	httpd_t *http;              /* serves /metrics, /healthz, /status */
	errh_t *errh;               /* the error handlers' messages (jobErrorHandlerType) */
};

#endif
