/* supervisor/sink/events_history.h: the history file sink (supervisor.history). */
#ifndef EJOB_EVENTS_HISTORY_H
#define EJOB_EVENTS_HISTORY_H

#include <time.h>

#include "ipc/json.h"
#include "supervisor/run/events.h"

/* Subscribe a sink that appends every ended attempt to path as one JSON line, rotated when the
 * file would grow past max_bytes (keep older files: path.1 ... path.keep). queue: events it may
 * have waiting. A file that cannot be opened now is tried again at each record (logged once). */
event_sink_t *history_open(events_t *e, const char *path, long long max_bytes, int keep, unsigned queue);

/* Who writes records (the instance, this host's name and the instance's ip), and the date of the
 * last second one was written in, formatted once for all of that second's records. */
struct history_src {
	const char *instance;       /* "{ip}@-@{pid}": lives as long as this */
	char host[256];
	char ip[64];
	time_t iso_s;               /* the second iso[] holds ("2026-11-24T07:31:52"), -1: none */
	char iso[32];
	json_buf_t fixed;           /* ,"instance":..,"host":..,"ip":.. as every record has it */
};
void history_src_init(struct history_src *h, const char *instance);
void history_src_free(struct history_src *h);
/* The record of an ended attempt (EVT_ITEM_ENDED), docs/config.md's "The history file": its
 * fields, "job":... to "output":..., appended to b without the braces (ejob's WEBHOOK error
 * handler sends the same record). */
void history_fields(json_buf_t *b, const struct event *ev, struct history_src *h);

#endif
