/* ipc/frame.c: frame codec. One field table per frame type drives both the encoder and the
 * decoder, so what we write and what we accept cannot drift apart. */
#include "ipc/frame.h"

#include <errno.h>
#include <inttypes.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/crc32c.h"

/* ---- field tables ---------------------------------------------------------------------- */

enum fkind { FK_U64, FK_U32, FK_I32, FK_STR, FK_STRLIST };

struct fdesc {
	const char *key;
	uint8_t klen;
	uint8_t kind;       /* enum fkind */
	uint8_t required;
	uint16_t off;       /* offsetof in the frame struct */
	int64_t min, max;   /* integers: value range; strings: length range (max 0 = frame bound);
	                       lists: each string's length range (count: 1..FRAME_LIST_MAX) */
};

#define F(k, kind, req, st, mem, lo, hi) \
	{ k, sizeof(k) - 1, kind, req, (uint16_t)offsetof(st, mem), lo, hi }

/* the item's fields: ipc/item_fields.h */
#define SUBMIT_FIELD(type, name, key, req, lo, hi, ctx) F(key, FK_##type, req, struct frame_submit, name, lo, hi),
static const struct fdesc submit_fields[] = {
	FRAME_ITEM_FIELDS(SUBMIT_FIELD)
};
#undef SUBMIT_FIELD

static const struct fdesc complete_fields[] = {
	F("xid",      FK_U64, 1, struct frame_complete, xid,         0, 0),
	F("fire",     FK_U64, 1, struct frame_complete, fire_id,     0, 0),
	F("epoch",    FK_U64, 1, struct frame_complete, epoch,       0, 0),
	F("dur",      FK_U64, 1, struct frame_complete, duration_us, 0, 0),
	F("item",     FK_U32, 1, struct frame_complete, item,        0, FRAME_ITEMS_MAX - 1),
	F("attempt",  FK_U32, 1, struct frame_complete, attempt,     1, UINT32_MAX),
	F("status",   FK_U32, 1, struct frame_complete, status,      0, FRAME_ST__COUNT - 1),
	F("code",     FK_I32, 1, struct frame_complete, exit_code,   INT32_MIN, INT32_MAX),
	F("signal",   FK_I32, 1, struct frame_complete, signal,      0, 128),
	F("job",      FK_STR, 1, struct frame_complete, job,         1, FRAME_JOB_MAX),
	F("task",     FK_STR, 1, struct frame_complete, task_id,     1, 0),
	F("err",      FK_STR, 1, struct frame_complete, error,       0, FRAME_ERRTXT_MAX),
	F("out",      FK_STR, 0, struct frame_complete, output,      0, FRAME_OUT_MAX),
};

static const struct fdesc hello_fields[] = {
	F("version",  FK_U32,     1, struct frame_hello, version, 1, FRAME_ATTACH_VERSION),
	F("pid",      FK_U32,     1, struct frame_hello, pid,     1, INT32_MAX),
	F("slots",    FK_U32,     1, struct frame_hello, slots,   1, FRAME_SLOTS_MAX),
	F("name",     FK_STR,     1, struct frame_hello, name,    1, FRAME_NAME_MAX),
	F("jobs",     FK_STRLIST, 1, struct frame_hello, jobs,    1, FRAME_JOB_MAX),
};

static const struct fdesc welcome_fields[] = {
	F("version",  FK_U32, 1, struct frame_welcome, version,      1, FRAME_ATTACH_VERSION),
	F("slots",    FK_U32, 1, struct frame_welcome, slots,        1, FRAME_SLOTS_MAX),
	F("sup",      FK_U32, 1, struct frame_welcome, supervisor,   1, INT32_MAX),
	F("hb",       FK_U32, 1, struct frame_welcome, heartbeat_ms, 1, 3600000),
};

static const struct fdesc refuse_fields[] = {
	F("err",      FK_STR, 1, struct frame_refuse, error, 1, FRAME_ERRTXT_MAX),
};

#undef F

#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))
_Static_assert(NFIELDS(submit_fields) <= 32 && NFIELDS(complete_fields) <= 32,
               "decode tracks seen fields in a 32-bit mask");

struct ftable {
	const struct fdesc *f;
	unsigned n;
	const char *name;
};

static const struct ftable tables[] = {
	[FRAME_SUBMIT]   = { submit_fields,   NFIELDS(submit_fields),   "submit" },
	[FRAME_COMPLETE] = { complete_fields, NFIELDS(complete_fields), "complete" },
	[FRAME_HELLO]    = { hello_fields,    NFIELDS(hello_fields),    "hello" },
	[FRAME_WELCOME]  = { welcome_fields,  NFIELDS(welcome_fields),  "welcome" },
	[FRAME_REFUSE]   = { refuse_fields,   NFIELDS(refuse_fields),   "refuse" },
};
#define FRAME_TYPE_MAX FRAME_REFUSE

/* ---- names ----------------------------------------------------------------------------- */

const char *frame_errc_name(enum frame_errc code)
{
	static const char *const names[FRAME_E__COUNT] = {
		[FRAME_OK] = "ok", [FRAME_E_SHORT] = "short", [FRAME_E_LENGTH] = "length",
		[FRAME_E_VERSION] = "version", [FRAME_E_TYPE] = "type", [FRAME_E_CRC] = "crc",
		[FRAME_E_MSGPACK] = "msgpack", [FRAME_E_LIMIT] = "limit",
		[FRAME_E_TRAILING] = "trailing", [FRAME_E_NOTMAP] = "notmap",
		[FRAME_E_FIELDTYPE] = "fieldtype", [FRAME_E_MISSING] = "missing",
		[FRAME_E_DUP] = "dup", [FRAME_E_RANGE] = "range",
	};
	return (unsigned)code < FRAME_E__COUNT ? names[code] : "?";
}

const char *frame_status_name(uint32_t status)
{
	static const char *const names[FRAME_ST__COUNT] = {
		"ok", "failed", "crashed", "timeout", "cancelled", "error",
	};
	return status < FRAME_ST__COUNT ? names[status] : "?";
}

const char *frame_kind_name(uint32_t kind)
{
	static const char *const names[FRAME_KIND_MAX + 1] = { "none", "script", "native", "external", "http" };
	return kind <= FRAME_KIND_MAX ? names[kind] : "?";
}

/* ---- a submission's strings in one allocation -------------------------------------------------- */

size_t frame_submit_strings(const struct frame_submit *f)
{
	size_t n = 0;
	for (unsigned i = 0; i < NFIELDS(submit_fields); i++) {
		const struct fdesc *d = &submit_fields[i];
		const char *s = d->kind == FK_STR ? *(const char *const *)((const unsigned char *)f + d->off) : NULL;
		if (s) n += strlen(s) + 1;
	}
	return n;
}

void frame_submit_copy(struct frame_submit *dst, const struct frame_submit *f, char *at)
{
	*dst = *f;
	for (unsigned i = 0; i < NFIELDS(submit_fields); i++) {
		const struct fdesc *d = &submit_fields[i];
		if (d->kind != FK_STR) continue;
		const char **to = (const char **)((unsigned char *)dst + d->off);
		if (!*to) continue;
		size_t n = strlen(*to) + 1;
		memcpy(at, *to, n);
		*to = at;
		at += n;
	}
}

/* ---- little-endian header ---------------------------------------------------------------- */

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t frame_crc(const unsigned char *frame, size_t len)
{
	uint32_t c = crc32c_extend(0, frame, 8);
	return crc32c_extend(c, frame + FRAME_HDR_LEN, len - FRAME_HDR_LEN);
}

unsigned frame_peek_type(const void *buf, size_t len)
{
	return len < FRAME_HDR_LEN ? 0 : ((const unsigned char *)buf)[4];
}

/* ---- value checks shared by encoder and decoder -------------------------------------------- */

static void seterr(struct frame_err *err, enum frame_errc code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void seterr(struct frame_err *err, enum frame_errc code, const char *fmt, ...)
{
	if (!err) return;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
}

static int check_int(const struct fdesc *f, int64_t v, struct frame_err *err)
{
	if (v < f->min || v > f->max) {
		seterr(err, FRAME_E_RANGE, "field '%s': %" PRId64 " is out of range %" PRId64 "..%" PRId64,
		       f->key, v, f->min, f->max);
		return -1;
	}
	return 0;
}

static int check_str(const struct fdesc *f, const char *s, size_t len, struct frame_err *err)
{
	if ((int64_t)len < f->min || (f->max && (int64_t)len > f->max)) {
		seterr(err, FRAME_E_RANGE, "field '%s': length %zu is out of range %" PRId64 "..%" PRId64,
		       f->key, len, f->min, f->max ? f->max : (int64_t)FRAME_MAX_LEN);
		return -1;
	}
	if (memchr(s, '\0', len)) {
		seterr(err, FRAME_E_RANGE, "field '%s': contains a NUL byte", f->key);
		return -1;
	}
	return 0;
}

/* Cross-field rules. */
static int check_frame(unsigned type, const void *st, struct frame_err *err)
{
	if (type == FRAME_SUBMIT) {
		const struct frame_submit *s = st;
		if (s->item >= s->total) {
			seterr(err, FRAME_E_RANGE, "field 'item': %" PRIu32 " is not below 'total' %" PRIu32,
			       s->item, s->total);
			return -1;
		}
	}
	return 0;
}

/* ---- encoder ----------------------------------------------------------------------------- */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
};

static int wbuf_write(void *data, const char *buf, size_t len)
{
	struct wbuf *w = data;
	if (len > w->cap - w->len)
		return -1;
	memcpy(w->p + w->len, buf, len);
	w->len += len;
	return 0;
}

static bool field_present(const struct fdesc *f, const unsigned char *st)
{
	if (f->required) return true;
	switch (f->kind) {
	case FK_STR: return *(const char *const *)(st + f->off) != NULL;
	case FK_STRLIST: return ((const struct frame_strlist *)(st + f->off))->n != 0;
	case FK_U32: return *(const uint32_t *)(st + f->off) != 0;
	case FK_U64: return *(const uint64_t *)(st + f->off) != 0;
	default:     return *(const int32_t *)(st + f->off) != 0;
	}
}

static long encode(unsigned type, const void *st, void *buf, size_t cap)
{
	const struct ftable *t = &tables[type];
	const unsigned char *s = st;
	struct frame_err err;
	unsigned present = 0;

	for (unsigned i = 0; i < t->n; i++) {
		const struct fdesc *f = &t->f[i];
		if (!field_present(f, s)) continue;
		present++;
		int r = 0;
		switch (f->kind) {
		case FK_U64: break;   /* every u64 value is valid */
		case FK_U32: r = check_int(f, *(const uint32_t *)(s + f->off), &err); break;
		case FK_I32: r = check_int(f, *(const int32_t *)(s + f->off), &err); break;
		case FK_STR: {
			const char *v = *(const char *const *)(s + f->off);
			if (!v) { errno = EINVAL; return -1; }
			r = check_str(f, v, strlen(v), &err);
			break;
		}
		case FK_STRLIST: {
			const struct frame_strlist *l = (const void *)(s + f->off);
			if (l->n < 1 || l->n > FRAME_LIST_MAX) { errno = EINVAL; return -1; }
			for (uint32_t k = 0; k < l->n && !r; k++) {
				if (!l->v[k]) { errno = EINVAL; return -1; }
				r = check_str(f, l->v[k], strlen(l->v[k]), &err);
			}
			break;
		}
		}
		if (r) { errno = EINVAL; return -1; }
	}
	if (check_frame(type, st, &err)) { errno = EINVAL; return -1; }
	if (cap < FRAME_HDR_LEN) { errno = EMSGSIZE; return -1; }

	size_t lim = cap < FRAME_MAX_LEN ? cap : FRAME_MAX_LEN;
	struct wbuf w = { buf, FRAME_HDR_LEN, lim };
	msgpack_packer pk;
	msgpack_packer_init(&pk, &w, wbuf_write);
	int r = msgpack_pack_map(&pk, present);
	for (unsigned i = 0; i < t->n && r == 0; i++) {
		const struct fdesc *f = &t->f[i];
		if (!field_present(f, s)) continue;
		r = msgpack_pack_str_with_body(&pk, f->key, f->klen);
		if (r) break;
		switch (f->kind) {
		case FK_U64: r = msgpack_pack_uint64(&pk, *(const uint64_t *)(s + f->off)); break;
		case FK_U32: r = msgpack_pack_uint32(&pk, *(const uint32_t *)(s + f->off)); break;
		case FK_I32: r = msgpack_pack_int32(&pk, *(const int32_t *)(s + f->off)); break;
		case FK_STR: {
			const char *v = *(const char *const *)(s + f->off);
			r = msgpack_pack_str_with_body(&pk, v, strlen(v));
			break;
		}
		case FK_STRLIST: {
			const struct frame_strlist *l = (const void *)(s + f->off);
			r = msgpack_pack_array(&pk, l->n);
			for (uint32_t k = 0; k < l->n && !r; k++)
				r = msgpack_pack_str_with_body(&pk, l->v[k], strlen(l->v[k]));
			break;
		}
		}
	}
	if (r) { errno = EMSGSIZE; return -1; }

	unsigned char *h = buf;
	put_le32(h, (uint32_t)w.len);
	h[4] = (unsigned char)type;
	h[5] = FRAME_VERSION;
	h[6] = h[7] = 0;
	put_le32(h + 8, frame_crc(h, w.len));
	return (long)w.len;
}

long frame_encode_submit(const struct frame_submit *f, void *buf, size_t cap)
{
	return encode(FRAME_SUBMIT, f, buf, cap);
}

long frame_encode_complete(const struct frame_complete *f, void *buf, size_t cap)
{
	return encode(FRAME_COMPLETE, f, buf, cap);
}

long frame_encode_hello(const struct frame_hello *f, void *buf, size_t cap)
{
	return encode(FRAME_HELLO, f, buf, cap);
}

long frame_encode_welcome(const struct frame_welcome *f, void *buf, size_t cap)
{
	return encode(FRAME_WELCOME, f, buf, cap);
}

long frame_encode_refuse(const struct frame_refuse *f, void *buf, size_t cap)
{
	return encode(FRAME_REFUSE, f, buf, cap);
}

/* ---- bounded msgpack walk: the limits, checked before msgpack-c allocates ------------------ */

/* Walks exactly one msgpack object tree at p[0..n). Rejects: truncation, a container count or
 * string length larger than the bytes left (so msgpack-c's allocations stay bounded by the
 * frame, never by a header's claim), depth > FRAME_MAX_DEPTH, more than FRAME_MAX_OBJECTS
 * objects, a top-level map of more than FRAME_MAX_KEYS entries, the reserved byte 0xc1, and
 * trailing bytes. */
static int mp_walk(const unsigned char *p, size_t n, struct frame_err *err)
{
	uint64_t stack[FRAME_MAX_DEPTH];   /* objects left in each enclosing container */
	unsigned depth = 0;
	uint64_t left = 1;                 /* objects left at the current level */
	unsigned objects = 0;
	size_t pos = 0;

	while (left > 0) {
		if (pos >= n) {
			seterr(err, FRAME_E_MSGPACK, "msgpack truncated at byte %zu", pos);
			return -1;
		}
		if (++objects > FRAME_MAX_OBJECTS) {
			seterr(err, FRAME_E_LIMIT, "more than %u msgpack objects", FRAME_MAX_OBJECTS);
			return -1;
		}
		left--;
		unsigned char b = p[pos++];
		uint64_t skip = 0;       /* payload bytes after the header */
		uint64_t children = 0;   /* objects inside, for containers */
		bool container = false, is_map = false;
		unsigned lenbytes = 0;   /* size of a length field that follows */

		if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
			/* fixint, nil, bool */
		} else if (b <= 0x8f) {
			children = (uint64_t)(b & 0x0f) * 2; container = is_map = true;
		} else if (b <= 0x9f) {
			children = b & 0x0f; container = true;
		} else if (b <= 0xbf) {
			skip = b & 0x1f;
		} else {
			switch (b) {
			case 0xc4: case 0xd9: lenbytes = 1; break;            /* bin8, str8 */
			case 0xc5: case 0xda: lenbytes = 2; break;            /* bin16, str16 */
			case 0xc6: case 0xdb: lenbytes = 4; break;            /* bin32, str32 */
			case 0xc7: lenbytes = 1; skip = 1; break;             /* ext8: len, type */
			case 0xc8: lenbytes = 2; skip = 1; break;             /* ext16 */
			case 0xc9: lenbytes = 4; skip = 1; break;             /* ext32 */
			case 0xca: skip = 4; break;                           /* float32 */
			case 0xcb: skip = 8; break;                           /* float64 */
			case 0xcc: case 0xd0: skip = 1; break;
			case 0xcd: case 0xd1: skip = 2; break;
			case 0xce: case 0xd2: skip = 4; break;
			case 0xcf: case 0xd3: skip = 8; break;
			case 0xd4: skip = 2; break;                           /* fixext1 */
			case 0xd5: skip = 3; break;
			case 0xd6: skip = 5; break;
			case 0xd7: skip = 9; break;
			case 0xd8: skip = 17; break;
			case 0xdc: lenbytes = 2; container = true; break;     /* array16 */
			case 0xdd: lenbytes = 4; container = true; break;     /* array32 */
			case 0xde: lenbytes = 2; container = is_map = true; break;
			case 0xdf: lenbytes = 4; container = is_map = true; break;
			default:
				seterr(err, FRAME_E_MSGPACK, "reserved msgpack byte 0x%02x at byte %zu", b, pos - 1);
				return -1;
			}
			if (lenbytes) {
				if (n - pos < lenbytes) {
					seterr(err, FRAME_E_MSGPACK, "msgpack truncated at byte %zu", pos);
					return -1;
				}
				uint64_t v = 0;
				for (unsigned i = 0; i < lenbytes; i++)
					v = v << 8 | p[pos + i];
				pos += lenbytes;
				if (container)
					children = is_map ? v * 2 : v;
				else
					skip += v;
			}
		}
		if (skip > n - pos) {
			seterr(err, FRAME_E_MSGPACK, "msgpack value of %" PRIu64 " bytes at byte %zu overruns the frame",
			       skip, pos);
			return -1;
		}
		pos += skip;
		if (container && children > 0) {
			/* every object takes at least one byte: a count beyond the bytes left is a lie */
			if (children > n - pos) {
				seterr(err, FRAME_E_MSGPACK, "msgpack container of %" PRIu64 " objects at byte %zu overruns the frame",
				       children, pos);
				return -1;
			}
			if (depth == 0 && objects == 1 && is_map && children / 2 > FRAME_MAX_KEYS) {
				seterr(err, FRAME_E_LIMIT, "map of %" PRIu64 " keys (limit %u)", children / 2, FRAME_MAX_KEYS);
				return -1;
			}
			if (depth >= FRAME_MAX_DEPTH) {
				seterr(err, FRAME_E_LIMIT, "msgpack nested deeper than %u", FRAME_MAX_DEPTH);
				return -1;
			}
			stack[depth++] = left;
			left = children;
		}
		while (left == 0 && depth > 0)
			left = stack[--depth];
	}
	if (pos != n) {
		seterr(err, FRAME_E_TRAILING, "%zu trailing bytes after the msgpack map", n - pos);
		return -1;
	}
	return 0;
}

/* ---- decoder ----------------------------------------------------------------------------- */

struct frame_decoder {
	size_t max_len;
	msgpack_zone zone;
	char *arena;        /* strings, NUL-terminated; max_len bytes bound their total */
	size_t arena_used;
};

frame_decoder_t *frame_decoder_new(size_t max_len)
{
	if (max_len < FRAME_HDR_LEN || max_len > FRAME_MAX_LEN) {
		errno = EINVAL;
		return NULL;
	}
	frame_decoder_t *d = calloc(1, sizeof *d);
	if (!d) return NULL;
	d->max_len = max_len;
	d->arena = malloc(max_len);
	if (!d->arena || !msgpack_zone_init(&d->zone, MSGPACK_ZONE_CHUNK_SIZE)) {
		free(d->arena);
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void frame_decoder_free(frame_decoder_t *d)
{
	if (!d) return;
	msgpack_zone_destroy(&d->zone);
	free(d->arena);
	free(d);
}

static const char *mp_type_name(msgpack_object_type t)
{
	switch (t) {
	case MSGPACK_OBJECT_NIL: return "nil";
	case MSGPACK_OBJECT_BOOLEAN: return "bool";
	case MSGPACK_OBJECT_POSITIVE_INTEGER: return "uint";
	case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "int";
	case MSGPACK_OBJECT_FLOAT32: case MSGPACK_OBJECT_FLOAT64: return "float";
	case MSGPACK_OBJECT_STR: return "str";
	case MSGPACK_OBJECT_ARRAY: return "array";
	case MSGPACK_OBJECT_MAP: return "map";
	case MSGPACK_OBJECT_BIN: return "bin";
	case MSGPACK_OBJECT_EXT: return "ext";
	}
	return "?";
}

/* Copy a checked msgpack string into the decoder's arena, NUL-terminated. */
static const char *arena_str(frame_decoder_t *d, const struct fdesc *f, const msgpack_object *v,
                             struct frame_err *err)
{
	size_t len = v->via.str.size;
	if (check_str(f, v->via.str.ptr, len, err)) return NULL;
	if (len + 1 > d->max_len - d->arena_used) {   /* cannot happen for frames <= max_len */
		seterr(err, FRAME_E_LIMIT, "field '%s': strings exceed the decoder's %zu bytes", f->key, d->max_len);
		return NULL;
	}
	char *dst = d->arena + d->arena_used;
	memcpy(dst, v->via.str.ptr, len);
	dst[len] = '\0';
	d->arena_used += len + 1;
	return dst;
}

static int set_field(frame_decoder_t *d, const struct fdesc *f, const msgpack_object *v,
                     unsigned char *st, struct frame_err *err)
{
	static const char *const want[] = { "uint", "uint", "int", "str", "array of str" };
	int64_t iv;

	switch (f->kind) {
	case FK_U64:
	case FK_U32:
		if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER) goto badtype;
		if (f->kind == FK_U64) {
			*(uint64_t *)(st + f->off) = v->via.u64;
			return 0;
		}
		if (v->via.u64 > (uint64_t)f->max || (int64_t)v->via.u64 < f->min) {
			seterr(err, FRAME_E_RANGE, "field '%s': %" PRIu64 " is out of range %" PRId64 "..%" PRId64,
			       f->key, v->via.u64, f->min, f->max);
			return -1;
		}
		*(uint32_t *)(st + f->off) = (uint32_t)v->via.u64;
		return 0;
	case FK_I32:
		if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
			if (v->via.u64 > INT32_MAX) {
				seterr(err, FRAME_E_RANGE, "field '%s': %" PRIu64 " does not fit in int32", f->key, v->via.u64);
				return -1;
			}
			iv = (int64_t)v->via.u64;
		} else if (v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
			iv = v->via.i64;
		} else {
			goto badtype;
		}
		if (check_int(f, iv, err)) return -1;
		*(int32_t *)(st + f->off) = (int32_t)iv;
		return 0;
	case FK_STR: {
		if (v->type != MSGPACK_OBJECT_STR) goto badtype;
		const char *p = arena_str(d, f, v, err);
		if (!p) return -1;
		*(const char **)(st + f->off) = p;
		return 0;
	}
	case FK_STRLIST: {
		if (v->type != MSGPACK_OBJECT_ARRAY) goto badtype;
		struct frame_strlist *l = (void *)(st + f->off);
		uint32_t n = v->via.array.size;
		if (n < 1 || n > FRAME_LIST_MAX) {
			seterr(err, FRAME_E_RANGE, "field '%s': %" PRIu32 " entries, allowed 1..%u", f->key, n, FRAME_LIST_MAX);
			return -1;
		}
		for (uint32_t k = 0; k < n; k++) {
			const msgpack_object *e = &v->via.array.ptr[k];
			if (e->type != MSGPACK_OBJECT_STR) {
				seterr(err, FRAME_E_FIELDTYPE, "field '%s': entry %" PRIu32 " is a %s, not a str", f->key, k,
				       mp_type_name(e->type));
				return -1;
			}
			if (!(l->v[k] = arena_str(d, f, e, err))) return -1;
		}
		l->n = n;
		return 0;
	}
	}
badtype:
	seterr(err, FRAME_E_FIELDTYPE, "field '%s': expected %s, got %s", f->key, want[f->kind],
	       mp_type_name(v->type));
	return -1;
}

static int decode(frame_decoder_t *d, unsigned type, const void *buf, size_t len, void *st,
                  size_t st_size, struct frame_err *err)
{
	const unsigned char *p = buf;

	if (len < FRAME_HDR_LEN) {
		seterr(err, FRAME_E_SHORT, "%zu bytes is shorter than a frame header (%u)", len, FRAME_HDR_LEN);
		return -1;
	}
	uint32_t flen = get_le32(p);
	if (flen != len || flen > d->max_len) {
		seterr(err, flen > len ? FRAME_E_SHORT : FRAME_E_LENGTH,
		       "length field says %" PRIu32 " bytes, got %zu (limit %zu)", flen, len, d->max_len);
		return -1;
	}
	if (p[5] != FRAME_VERSION || p[6] || p[7]) {
		seterr(err, FRAME_E_VERSION, "frame version %u flags 0x%02x%02x, this build reads version %u flags 0",
		       p[5], p[7], p[6], FRAME_VERSION);
		return -1;
	}
	if (p[4] != type) {
		seterr(err, FRAME_E_TYPE, "frame type %u, expected %u (%s)", p[4], type, tables[type].name);
		return -1;
	}
	uint32_t crc = frame_crc(p, len);
	if (crc != get_le32(p + 8)) {
		seterr(err, FRAME_E_CRC, "checksum 0x%08" PRIx32 " does not match the frame's 0x%08" PRIx32,
		       crc, get_le32(p + 8));
		return -1;
	}
	const unsigned char *body = p + FRAME_HDR_LEN;
	size_t blen = len - FRAME_HDR_LEN;
	if (mp_walk(body, blen, err))
		return -1;

	msgpack_zone_clear(&d->zone);
	d->arena_used = 0;
	msgpack_object root;
	size_t off = 0;
	msgpack_unpack_return ur = msgpack_unpack((const char *)body, blen, &off, &d->zone, &root);
	if (ur != MSGPACK_UNPACK_SUCCESS) {
		/* the walk accepted it, so this is msgpack-c disagreeing: report, never trust */
		seterr(err, ur == MSGPACK_UNPACK_EXTRA_BYTES ? FRAME_E_TRAILING : FRAME_E_MSGPACK,
		       "msgpack-c unpack failed (%d)", (int)ur);
		return -1;
	}
	if (root.type != MSGPACK_OBJECT_MAP) {
		seterr(err, FRAME_E_NOTMAP, "payload is a msgpack %s, not a map", mp_type_name(root.type));
		return -1;
	}

	const struct ftable *t = &tables[type];
	memset(st, 0, st_size);
	uint32_t seen = 0;
	for (uint32_t i = 0; i < root.via.map.size; i++) {
		const msgpack_object_kv *kv = &root.via.map.ptr[i];
		if (kv->key.type != MSGPACK_OBJECT_STR) {
			seterr(err, FRAME_E_NOTMAP, "map key %" PRIu32 " is a %s, not a string", i, mp_type_name(kv->key.type));
			return -1;
		}
		const char *k = kv->key.via.str.ptr;
		uint32_t kl = kv->key.via.str.size;
		for (unsigned j = 0; j < t->n; j++) {
			const struct fdesc *f = &t->f[j];
			if (f->klen != kl || memcmp(f->key, k, kl)) continue;
			if (seen & (1u << j)) {
				seterr(err, FRAME_E_DUP, "field '%s' appears twice", f->key);
				return -1;
			}
			seen |= 1u << j;
			if (set_field(d, f, &kv->val, st, err)) return -1;
			break;
		}
		/* an unknown key is skipped: newer writers may add fields */
	}
	for (unsigned j = 0; j < t->n; j++) {
		if (t->f[j].required && !(seen & (1u << j))) {
			seterr(err, FRAME_E_MISSING, "required field '%s' is missing", t->f[j].key);
			return -1;
		}
	}
	if (check_frame(type, st, err)) return -1;
	if (err) { err->code = FRAME_OK; err->msg[0] = '\0'; }
	return 0;
}

int frame_decode_submit(frame_decoder_t *d, const void *buf, size_t len,
                        struct frame_submit *out, struct frame_err *err)
{
	return decode(d, FRAME_SUBMIT, buf, len, out, sizeof *out, err);
}

int frame_decode_complete(frame_decoder_t *d, const void *buf, size_t len,
                          struct frame_complete *out, struct frame_err *err)
{
	return decode(d, FRAME_COMPLETE, buf, len, out, sizeof *out, err);
}

int frame_decode_hello(frame_decoder_t *d, const void *buf, size_t len,
                       struct frame_hello *out, struct frame_err *err)
{
	return decode(d, FRAME_HELLO, buf, len, out, sizeof *out, err);
}

int frame_decode_welcome(frame_decoder_t *d, const void *buf, size_t len,
                         struct frame_welcome *out, struct frame_err *err)
{
	return decode(d, FRAME_WELCOME, buf, len, out, sizeof *out, err);
}

int frame_decode_refuse(frame_decoder_t *d, const void *buf, size_t len,
                        struct frame_refuse *out, struct frame_err *err)
{
	return decode(d, FRAME_REFUSE, buf, len, out, sizeof *out, err);
}
