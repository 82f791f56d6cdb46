/* supervisor/run/cronshare.h: compiled crons shared by the jobs that have the same expression
 * under the same year limit. The scheduler runs each job's cron under Quartz's limit of the day
 * (cron_with_max_year), a copy of about 500 bytes; jobs mostly share a few expressions ("every
 * minute", "0 0 * * * ?"), so 10,000 jobs held 10,000 copies of one. A cron_t is immutable, so a
 * shared one is read by all of its jobs. Loop only. */
#ifndef EJOB_CRONSHARE_H
#define EJOB_CRONSHARE_H

#include "cron/cron.h"

typedef struct cronshare cronshare_t;
struct cronref;                 /* one expression under one limit, counted */

cronshare_t *cronshare_new(void);
/* compiled under max_year (a new one, or the one held already): NULL and *err as
 * cron_with_max_year's on failure; *cron is then what the jobs read */
struct cronref *cronshare_get(cronshare_t *cs, const cron_t *compiled, int max_year, const cron_t **cron,
                              cron_err_t *err);
void cronshare_put(cronshare_t *cs, struct cronref *r);     /* NULL: nothing */
size_t cronshare_count(const cronshare_t *cs);             /* expressions held */
void cronshare_free(cronshare_t *cs);                      /* every ref put already */

#endif
