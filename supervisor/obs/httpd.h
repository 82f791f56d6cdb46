/* supervisor/obs/httpd.h: a small HTTP server on the supervisor's loop (libmicrohttpd, driven by
 * libev on the loop's thread: no thread of its own), for supervisor.metrics: GET of a path
 * answered at once from memory by the page hook. Every fd it makes is CLOEXEC. */
#ifndef EJOB_HTTPD_H
#define EJOB_HTTPD_H

#include <ev.h>
#include <stddef.h>

typedef struct httpd httpd_t;

/* A page: the HTTP status, the body (malloc'd, *len bytes; httpd frees it), its content type.
 * NULL body: answered 500. */
typedef int (*httpd_page_fn)(void *arg, const char *path, char **body, size_t *len, const char **ctype);

/* Listen on addr ("IPv4:PORT" or "[IPv6]:PORT"). NULL on failure, the reason in err (one line,
 * libmicrohttpd's own words inside it, not logged apart) and errno: EADDRINUSE the port is taken,
 * EACCES, EADDRNOTAVAIL as bind(2) says, EINVAL not an address, ENOMEM. */
httpd_t *httpd_new(struct ev_loop *loop, const char *addr, httpd_page_fn page, void *arg, char *err, size_t errlen);
void httpd_free(httpd_t *h);

#endif
