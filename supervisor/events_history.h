/* supervisor/events_history.h: the history file sink (supervisor.history). */
#ifndef EJOB_EVENTS_HISTORY_H
#define EJOB_EVENTS_HISTORY_H

#include "supervisor/events.h"

/* Subscribe a sink that appends every ended attempt to path as one JSON line, rotated when the
 * file would grow past max_bytes (keep older files: path.1 ... path.keep). queue: events it may
 * have waiting. A file that cannot be opened now is tried again at each record (logged once). */
event_sink_t *history_open(events_t *e, const char *path, long long max_bytes, int keep, unsigned queue);

#endif
