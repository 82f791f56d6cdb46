/* supervisor/base/dlib.h: libraries the supervisor loads only when a feature that needs them is
 * configured: libpq (the events sink), libcurl (the error handlers) and libmicrohttpd (the metrics
 * server). Linked at start, they and what they pull in (OpenSSL, GnuTLS, Kerberos, LDAP: 30
 * libraries) cost every supervisor 3.7 MB of RSS, also the ones that use none of them.
 *
 * The supervisor calls their functions by their own names: supervisor/base/dl_shims.c (linked into
 * ejob-supervisor only, not into supervisor/libsup.a) defines each one as a call through the table
 * dlib_need() filled. So the module that uses a library calls dlib_need() before its first call
 * of it (0: loaded, every function found; -1: dlib_error() says what and what to install), and
 * otherwise codes against the library's header as usual; tests, which link the libraries,
 * load what is loaded already. Thread-safe (the error handlers load libcurl in their thread). */
#ifndef EJOB_DLIB_H
#define EJOB_DLIB_H

#include <stddef.h>

struct dlib {
	const char *soname;             /* "libpq.so.5" */
	const char *package;            /* Debian's package that has it: "libpq5" */
	const char *const *names;       /* its functions the supervisor calls */
	size_t n;
	void **fn;                      /* [n], set by dlib_need */
	int state;                      /* 0 not tried, 1 loaded, -1 failed (told by dlib_error) */
	char err[320];
};

extern struct dlib dlib_pq, dlib_curl, dlib_mhd;

int dlib_need(struct dlib *l);
const char *dlib_error(const struct dlib *l);   /* why the load failed, naming the package */

/* The functions each table holds, in its order: X(lib, name) (dl_shims.c defines them). */
#define DLIB_PQ(X) X(pq, PQclear) X(pq, PQconnectPoll) X(pq, PQconnectStartParams) X(pq, PQconsumeInput) \
	X(pq, PQerrorMessage) X(pq, PQfinish) X(pq, PQflush) X(pq, PQgetResult) X(pq, PQisBusy) \
	X(pq, PQresultErrorField) X(pq, PQresultErrorMessage) X(pq, PQresultStatus) X(pq, PQsendQuery) \
	X(pq, PQsendQueryParams) X(pq, PQsetNoticeProcessor) X(pq, PQsetnonblocking) X(pq, PQsocket) X(pq, PQstatus)
#define DLIB_CURL(X) X(curl, curl_easy_cleanup) X(curl, curl_easy_escape) X(curl, curl_easy_getinfo) \
	X(curl, curl_easy_init) X(curl, curl_easy_setopt) X(curl, curl_easy_strerror) X(curl, curl_free) \
	X(curl, curl_global_cleanup) X(curl, curl_global_init) X(curl, curl_multi_add_handle) X(curl, curl_multi_cleanup) \
	X(curl, curl_multi_info_read) X(curl, curl_multi_init) X(curl, curl_multi_perform) X(curl, curl_multi_poll) \
	X(curl, curl_multi_remove_handle) X(curl, curl_slist_append) X(curl, curl_slist_free_all)
#define DLIB_MHD(X) X(mhd, MHD_add_response_header) X(mhd, MHD_create_response_from_buffer) \
	X(mhd, MHD_destroy_response) X(mhd, MHD_get_daemon_info) X(mhd, MHD_get_timeout) X(mhd, MHD_queue_response) \
	X(mhd, MHD_run) X(mhd, MHD_start_daemon_va) X(mhd, MHD_stop_daemon)

#define DLIB_IDX(lib, name) DLIB_##name,
enum { DLIB_PQ(DLIB_IDX) DLIB_PQ_N };
enum { DLIB_CURL(DLIB_IDX) DLIB_CURL_N };
enum { DLIB_MHD(DLIB_IDX) DLIB_MHD_N };
#undef DLIB_IDX

#endif
