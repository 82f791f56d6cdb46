/* supervisor/base/dl_shims.c: the functions of libpq, libcurl and libmicrohttpd that the supervisor
 * calls, each a call through the table supervisor/base/dlib.c filled when the feature that needs
 * the library was configured (dlib.h). Linked into ejob-supervisor only: tests and benchmarks that
 * link supervisor/libsup.a link the libraries themselves. The prototypes are the headers' own (a
 * mismatch does not compile). Calling one before dlib_need() succeeded is a bug of its caller. */
#include <stdarg.h>
#include <stdint.h>
#include <sys/socket.h>

#define CURL_DISABLE_TYPECHECK      /* curl_easy_setopt and _getinfo are functions here, not macros */
#include <curl/curl.h>
#include <libpq-fe.h>
#include <microhttpd.h>

#include "supervisor/base/dlib.h"

/* Not exported (the supervisor links with -rdynamic): the libraries' calls of their own functions
 * stay theirs, also while dlopen runs their constructors, before the table is filled. */
#pragma GCC visibility push(hidden)

#define F(lib, name) ((__typeof__(&name))dlib_##lib.fn[DLIB_##name])

/* ---- libpq ------------------------------------------------------------------------------------ */

void PQclear(PGresult *res) { F(pq, PQclear)(res); }
PostgresPollingStatusType PQconnectPoll(PGconn *conn) { return F(pq, PQconnectPoll)(conn); }
PGconn *PQconnectStartParams(const char *const *keywords, const char *const *values, int expand_dbname)
{
	return F(pq, PQconnectStartParams)(keywords, values, expand_dbname);
}
int PQconsumeInput(PGconn *conn) { return F(pq, PQconsumeInput)(conn); }
char *PQerrorMessage(const PGconn *conn) { return F(pq, PQerrorMessage)(conn); }
void PQfinish(PGconn *conn) { F(pq, PQfinish)(conn); }
int PQflush(PGconn *conn) { return F(pq, PQflush)(conn); }
PGresult *PQgetResult(PGconn *conn) { return F(pq, PQgetResult)(conn); }
int PQisBusy(PGconn *conn) { return F(pq, PQisBusy)(conn); }
char *PQresultErrorField(const PGresult *res, int fieldcode) { return F(pq, PQresultErrorField)(res, fieldcode); }
char *PQresultErrorMessage(const PGresult *res) { return F(pq, PQresultErrorMessage)(res); }
ExecStatusType PQresultStatus(const PGresult *res) { return F(pq, PQresultStatus)(res); }
int PQsendQuery(PGconn *conn, const char *query) { return F(pq, PQsendQuery)(conn, query); }
int PQsendQueryParams(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                      const char *const *paramValues, const int *paramLengths, const int *paramFormats, int resultFormat)
{
	return F(pq, PQsendQueryParams)(conn, command, nParams, paramTypes, paramValues, paramLengths, paramFormats,
	                                resultFormat);
}
PQnoticeProcessor PQsetNoticeProcessor(PGconn *conn, PQnoticeProcessor proc, void *arg)
{
	return F(pq, PQsetNoticeProcessor)(conn, proc, arg);
}
int PQsetnonblocking(PGconn *conn, int arg) { return F(pq, PQsetnonblocking)(conn, arg); }
int PQsocket(const PGconn *conn) { return F(pq, PQsocket)(conn); }
ConnStatusType PQstatus(const PGconn *conn) { return F(pq, PQstatus)(conn); }

/* ---- libcurl ---------------------------------------------------------------------------------- */

void curl_easy_cleanup(CURL *curl) { F(curl, curl_easy_cleanup)(curl); }
char *curl_easy_escape(CURL *handle, const char *string, int length)
{
	return F(curl, curl_easy_escape)(handle, string, length);
}
/* every CURLINFO_* takes a pointer */
CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
	va_list ap;
	va_start(ap, info);
	void *p = va_arg(ap, void *);
	va_end(ap);
	return F(curl, curl_easy_getinfo)(curl, info, p);
}
CURL *curl_easy_init(void) { return F(curl, curl_easy_init)(); }
/* the option's number says its argument's type, as libcurl reads it (curl.h's CURLOPTTYPE_*) */
CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
	va_list ap;
	va_start(ap, option);
	CURLcode rc;
	if (option < CURLOPTTYPE_OBJECTPOINT) {
		long v = va_arg(ap, long);
		rc = F(curl, curl_easy_setopt)(curl, option, v);
	} else if (option >= CURLOPTTYPE_OFF_T && option < CURLOPTTYPE_BLOB) {
		curl_off_t v = va_arg(ap, curl_off_t);
		rc = F(curl, curl_easy_setopt)(curl, option, v);
	} else {                    /* object, string, slist, callback and blob pointers */
		void *v = va_arg(ap, void *);
		rc = F(curl, curl_easy_setopt)(curl, option, v);
	}
	va_end(ap);
	return rc;
}
const char *curl_easy_strerror(CURLcode code) { return F(curl, curl_easy_strerror)(code); }
void curl_free(void *p) { F(curl, curl_free)(p); }
void curl_global_cleanup(void) { F(curl, curl_global_cleanup)(); }
CURLcode curl_global_init(long flags) { return F(curl, curl_global_init)(flags); }
CURLMcode curl_multi_add_handle(CURLM *m, CURL *c) { return F(curl, curl_multi_add_handle)(m, c); }
CURLMcode curl_multi_cleanup(CURLM *m) { return F(curl, curl_multi_cleanup)(m); }
CURLMsg *curl_multi_info_read(CURLM *m, int *msgs_in_queue) { return F(curl, curl_multi_info_read)(m, msgs_in_queue); }
CURLM *curl_multi_init(void) { return F(curl, curl_multi_init)(); }
CURLMcode curl_multi_perform(CURLM *m, int *running) { return F(curl, curl_multi_perform)(m, running); }
CURLMcode curl_multi_poll(CURLM *m, struct curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms, int *ret)
{
	return F(curl, curl_multi_poll)(m, extra_fds, extra_nfds, timeout_ms, ret);
}
CURLMcode curl_multi_remove_handle(CURLM *m, CURL *c) { return F(curl, curl_multi_remove_handle)(m, c); }
struct curl_slist *curl_slist_append(struct curl_slist *list, const char *data)
{
	return F(curl, curl_slist_append)(list, data);
}
void curl_slist_free_all(struct curl_slist *list) { F(curl, curl_slist_free_all)(list); }

/* ---- libmicrohttpd ---------------------------------------------------------------------------- */

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content)
{
	return F(mhd, MHD_add_response_header)(response, header, content);
}
struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode)
{
	return F(mhd, MHD_create_response_from_buffer)(size, buffer, mode);
}
void MHD_destroy_response(struct MHD_Response *response) { F(mhd, MHD_destroy_response)(response); }
/* the supervisor asks only for what takes no argument (MHD_DAEMON_INFO_EPOLL_FD) */
const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type, ...)
{
	return F(mhd, MHD_get_daemon_info)(daemon, info_type);
}
enum MHD_Result MHD_get_timeout(struct MHD_Daemon *daemon, MHD_UNSIGNED_LONG_LONG *timeout)
{
	return F(mhd, MHD_get_timeout)(daemon, timeout);
}
enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response)
{
	return F(mhd, MHD_queue_response)(connection, status_code, response);
}
enum MHD_Result MHD_run(struct MHD_Daemon *daemon) { return F(mhd, MHD_run)(daemon); }
struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                    MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	va_list ap;
	va_start(ap, dh_cls);
	struct MHD_Daemon *d = F(mhd, MHD_start_daemon_va)(flags, port, apc, apc_cls, dh, dh_cls, ap);
	va_end(ap);
	return d;
}
void MHD_stop_daemon(struct MHD_Daemon *daemon) { F(mhd, MHD_stop_daemon)(daemon); }

#pragma GCC visibility pop
