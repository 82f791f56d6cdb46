/* tools/ejobctl_out.c: what ejobctl's cluster commands print: aligned tables (ctl_table_*) and
 * streamed JSON (jw_*), declared in tools/ejobctl_zk.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/json.h"
#include "tools/ejobctl_zk.h"

/* ---- tables -------------------------------------------------------------------------------- */

struct ctl_table {
	int ncols, nrows, cap;
	char **cells;               /* (nrows + 1) x ncols, the header first */
};

static char *dup_or_dash(const char *s)
{
	return strdup(s ? s : "-");
}

static void table_add(struct ctl_table *t, va_list ap)
{
	if (t->nrows + 1 >= t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		char **v = realloc(t->cells, (size_t)cap * (size_t)t->ncols * sizeof *v);
		if (!v) {
			ctl_oom();
		}
		t->cells = v;
		t->cap = cap;
	}
	for (int i = 0; i < t->ncols; i++) {
		char *s = dup_or_dash(va_arg(ap, const char *));
		if (!s) {
			ctl_oom();
		}
		t->cells[t->nrows * t->ncols + i] = s;
	}
	t->nrows++;
}

struct ctl_table *ctl_table_new(int ncols, ...)
{
	struct ctl_table *t = calloc(1, sizeof *t);
	if (!t) {
		ctl_oom();
	}
	t->ncols = ncols;
	va_list ap;
	va_start(ap, ncols);
	table_add(t, ap);
	va_end(ap);
	return t;
}

void ctl_table_row(struct ctl_table *t, ...)
{
	va_list ap;
	va_start(ap, t);
	table_add(t, ap);
	va_end(ap);
}

/* columns on a terminal: UTF-8 continuation bytes take none */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80) w++;
	return w;
}

void ctl_table_print(struct ctl_table *t, FILE *f)
{
	size_t *w = calloc((size_t)t->ncols, sizeof *w);
	if (!w) exit(1);
	for (int r = 0; r < t->nrows; r++)
		for (int i = 0; i < t->ncols; i++) {
			size_t x = width(t->cells[r * t->ncols + i]);
			if (x > w[i]) w[i] = x;
		}
	for (int r = 0; r < t->nrows; r++) {
		for (int i = 0; i < t->ncols; i++) {
			const char *s = t->cells[r * t->ncols + i];
			if (i == t->ncols - 1) {
				fputs(s, f);
			} else {
				fputs(s, f);
				for (size_t k = width(s); k < w[i] + 2; k++) fputc(' ', f);
			}
		}
		fputc('\n', f);
	}
	for (int k = 0; k < t->nrows * t->ncols; k++) free(t->cells[k]);
	free(t->cells);
	free(w);
	free(t);
}

/* ---- JSON ---------------------------------------------------------------------------------- */

void jw_begin(struct jw *w, FILE *f)
{
	memset(w, 0, sizeof *w);
	w->f = f;
	w->first[0] = 1;
}

static void sep(struct jw *w)
{
	if (w->key) {
		w->key = 0;
		return;
	}
	if (!w->first[w->depth]) fputc(',', w->f);
	w->first[w->depth] = 0;
}

static void open_(struct jw *w, int ch)
{
	sep(w);
	fputc(ch, w->f);
	if (w->depth < 63) w->depth++;
	w->first[w->depth] = 1;
	w->close[w->depth] = ch == '{' ? '}' : ']';
}

void jw_obj(struct jw *w) { open_(w, '{'); }
void jw_arr(struct jw *w) { open_(w, '['); }

void jw_end(struct jw *w)
{
	if (w->depth == 0) return;
	fputc(w->close[w->depth], w->f);
	w->depth--;
	if (w->depth == 0) fputc('\n', w->f);
}

/* escaped as everywhere else in ejob (ipc/json.c): invalid UTF-8 as \u00XX, always valid JSON */
static void esc(FILE *f, const char *s, size_t n)
{
	json_buf_t b;
	json_init(&b);
	json_str(&b, s, n, JSON_PLAIN);
	if (b.oom) {
		ctl_oom();
	}
	fwrite(b.p, 1, b.len, f);
	json_free(&b);
}

void jw_key(struct jw *w, const char *k)
{
	sep(w);
	esc(w->f, k, strlen(k));
	fputc(':', w->f);
	w->key = 1;
}

void jw_strn(struct jw *w, const char *s, size_t n)
{
	sep(w);
	esc(w->f, s, n);
}

void jw_str(struct jw *w, const char *s)
{
	if (!s) {
		jw_null(w);
		return;
	}
	jw_strn(w, s, strlen(s));
}

void jw_int(struct jw *w, long long v)
{
	sep(w);
	fprintf(w->f, "%lld", v);
}

void jw_bool(struct jw *w, int v)
{
	sep(w);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w)
{
	sep(w);
	fputs("null", w->f);
}
