/* ipc/json.h: a small JSON writer into a growing buffer (shmdump's --json, the script job's
 * sharding-context argument). */
#ifndef EJOB_JSON_H
#define EJOB_JSON_H

#include <stddef.h>
#include <stdint.h>

typedef struct json_buf {
	char *p;       /* NUL-terminated while !oom */
	size_t len, cap;
	int oom;       /* set once an allocation failed; the text is then incomplete */
} json_buf_t;

/* String escaping: JSON_PLAIN escapes what JSON requires (", \, control characters) and
 * invalid UTF-8 bytes (as \u00XX, so the output is always valid JSON). JSON_GSON also escapes
 * < > & = ' as \u003c \u003e \u0026 \u003d \u0027, and U+2028/U+2029, exactly as Gson does
 * by default (ElasticJob serialises the sharding context with a default Gson). */
enum json_flags { JSON_PLAIN = 0, JSON_GSON = 1 };

void json_init(json_buf_t *b);
void json_free(json_buf_t *b);
void json_raw(json_buf_t *b, const char *s);                 /* append as is */
void json_str(json_buf_t *b, const char *s, size_t n, unsigned flags);   /* "quoted" */
void json_cstr(json_buf_t *b, const char *s, unsigned flags);            /* NULL -> null */
void json_u64(json_buf_t *b, uint64_t v);
void json_i64(json_buf_t *b, int64_t v);
void json_key(json_buf_t *b, const char *key, int first);   /* [,]"key": */

/* The inside of a JSON string (no quotes), escaped as json_str(JSON_PLAIN) does, into a fixed
 * buffer (for the log, which must not allocate): as many whole characters of s as fit in cap
 * bytes. Returns the bytes written; *used (may be NULL) the bytes of s they hold. */
size_t json_escape(char *out, size_t cap, const char *s, size_t n, size_t *used);

#endif
