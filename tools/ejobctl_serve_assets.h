/* tools/ejobctl_serve_assets.h: the web console's files, built into ejobctl (tools/embed writes
 * build/tools/ejobctl_console.c from the files of console/ at build time) and served by `ejobctl serve` at
 * GET / (index.html) and GET /assets/NAME, with no credentials (the login form must load) and no
 * ZooKeeper: revalidated by ETag (Cache-Control: no-cache: fresh after an upgrade), gzip'd when the
 * client takes it, and with a Content-Security-Policy that allows the console's own files only. */
#ifndef EJOB_EJOBCTL_SERVE_ASSETS_H
#define EJOB_EJOBCTL_SERVE_ASSETS_H

#include <stddef.h>

#include <microhttpd.h>

struct srv_asset {
	const char *name;               /* its name under /assets/ (index.html is also /) */
	const char *type;               /* Content-Type */
	const unsigned char *data;
	size_t len;
	const unsigned char *gz;        /* gzip -9n of data; NULL when that is not smaller */
	size_t gzlen;
	const char *etag, *gzetag;      /* "\"HASH\"" (FNV-1a 64 of data), "\"HASH-gz\"" */
};
extern const struct srv_asset srv_assets[];
extern const size_t srv_nassets;

/* The Content-Security-Policy of every answer of the console's files */
#define SRV_CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " \
                "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* The asset name (GET or HEAD; another method: 405), or 404; 304 when If-None-Match has its ETag. */
enum MHD_Result srv_assets_send(struct MHD_Connection *con, const char *method, const char *name);

#endif
