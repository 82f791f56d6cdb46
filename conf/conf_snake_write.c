/* conf/conf_snake_write.c: SnakeYAML's scalar writers (see conf_snake.c): plain, single quoted,
 * double quoted with its escapes, and literal, each folding long lines where SnakeYAML does. */
#include <stdlib.h>
#include <string.h>

#include "conf/conf_snake_int.h"

/* ---- the scalar writers -------------------------------------------------------------------- */

void snake_write_plain(conf_out_t *o, const u16_t *u, bool split)
{
	if (o->root_ctx) o->open_ended = true;
	if (u->n == 0) return;
	if (!o->whitespace) {
		o->column++;
		snake_out_str(o, " ");
	}
	o->whitespace = o->indention = false;
	bool spaces = false, breaks = false;
	size_t start = 0, end = 0;
	while (end <= u->n) {
		uint16_t ch = end < u->n ? u->t[end] : 0;
		if (spaces) {
			if (ch != ' ') {
				if (start + 1 == end && o->column > BEST_WIDTH && split) {
					snake_indent(o);
					o->whitespace = o->indention = false;
				} else {
					snake_out_u16(o, u, start, end);
					o->column += (int)(end - start);
				}
				start = end;
			}
		} else if (breaks) {
			if (!snake_is_linebr(ch)) {
				if (u->t[start] == '\n') snake_line_break(o, 0);
				for (size_t i = start; i < end; i++) snake_line_break(o, u->t[i] == '\n' ? 0 : u->t[i]);
				snake_indent(o);
				o->whitespace = o->indention = false;
				start = end;
			}
		} else if (snake_is_linebr(ch) || ch == 0 || ch == ' ') {
			snake_out_u16(o, u, start, end);
			o->column += (int)(end - start);
			start = end;
		}
		if (ch != 0) {
			spaces = ch == ' ';
			breaks = snake_is_linebr(ch);
		}
		end++;
	}
}

void snake_write_single(conf_out_t *o, const u16_t *u, bool split)
{
	snake_indicator(o, "'", true, false, false);
	bool spaces = false, breaks = false;
	size_t start = 0, end = 0;
	while (end <= u->n) {
		uint16_t ch = end < u->n ? u->t[end] : 0;
		if (spaces) {
			if (ch == 0 || ch != ' ') {
				if (start + 1 == end && o->column > BEST_WIDTH && split && start != 0 && end != u->n) {
					snake_indent(o);
				} else {
					snake_out_u16(o, u, start, end);
					o->column += (int)(end - start);
				}
				start = end;
			}
		} else if (breaks) {
			if (ch == 0 || !snake_is_linebr(ch)) {
				if (u->t[start] == '\n') snake_line_break(o, 0);
				for (size_t i = start; i < end; i++) snake_line_break(o, u->t[i] == '\n' ? 0 : u->t[i]);
				snake_indent(o);
				start = end;
			}
		} else if (snake_is_linebr(ch) || ch == 0 || ch == ' ' || ch == '\'') {
			if (start < end) {
				snake_out_u16(o, u, start, end);
				o->column += (int)(end - start);
				start = end;
			}
		}
		if (ch == '\'') {
			o->column += 2;
			snake_out_str(o, "''");
			start = end + 1;
		}
		if (ch != 0) {
			spaces = ch == ' ';
			breaks = snake_is_linebr(ch);
		}
		end++;
	}
	snake_indicator(o, "'", false, false, false);
}

static const char *escape_of(uint32_t c)
{
	switch (c) {
	case 0: return "0";
	case 7: return "a";
	case 8: return "b";
	case 9: return "t";
	case 10: return "n";
	case 11: return "v";
	case 12: return "f";
	case 13: return "r";
	case 27: return "e";
	case '"': return "\"";
	case '\\': return "\\";
	case 0x85: return "N";
	case 0xa0: return "_";
	case 0x2028: return "L";
	case 0x2029: return "P";
	default: return NULL;
	}
}

void snake_write_double(conf_out_t *o, const u16_t *u, bool split)
{
	static const char hex[] = "0123456789abcdef";
	snake_indicator(o, "\"", true, false, false);
	size_t start = 0, end = 0, n = u->n;
	while (end <= n) {
		bool none = end >= n;
		uint16_t ch = none ? 0 : u->t[end];
		if (none || ch == '"' || ch == '\\' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 ||
		    ch == 0xfeff || !(ch >= 0x20 && ch <= 0x7e)) {
			if (start < end) {
				snake_out_u16(o, u, start, end);
				o->column += (int)(end - start);
				start = end;
			}
			if (!none) {
				char data[16];
				int cols;
				const char *esc = escape_of(ch);
				if (esc) {
					data[0] = '\\';
					strcpy(data + 1, esc);
					snake_out_str(o, data);
					cols = (int)strlen(data);
				} else {
					uint32_t cp = ch;
					if (ch >= 0xd800 && ch <= 0xdbff && end + 1 < n) {
						uint16_t c2 = u->t[end + 1];
						cp = 0x10000 + (((uint32_t)ch - 0xd800) << 10) + ((uint32_t)c2 - 0xdc00);
						if (c2 < 0xdc00 || c2 > 0xdfff) cp = ch;
					}
					if (snake_printable(cp)) {
						size_t w = cp >= 0x10000 ? 2 : 1;
						snake_out_u16(o, u, end, end + w);
						cols = (int)w;
						if (w == 2) end++;
					} else if (ch <= 0xff) {
						data[0] = '\\';
						data[1] = 'x';
						data[2] = hex[ch >> 4];
						data[3] = hex[ch & 15];
						data[4] = '\0';
						snake_out_str(o, data);
						cols = 4;
					} else if (cp >= 0x10000) {
						end++;
						data[0] = '\\';
						data[1] = 'U';
						for (int i = 0; i < 8; i++) data[2 + i] = hex[(cp >> (28 - 4 * i)) & 15];
						data[10] = '\0';
						snake_out_str(o, data);
						cols = 10;
					} else {
						data[0] = '\\';
						data[1] = 'u';
						for (int i = 0; i < 4; i++) data[2 + i] = hex[(ch >> (12 - 4 * i)) & 15];
						data[6] = '\0';
						snake_out_str(o, data);
						cols = 6;
					}
				}
				o->column += cols;
				start = end + 1;
			}
		}
		if (end > 0 && end + 1 < n && (ch == ' ' || start >= end) &&
		    o->column + (int)(end - start) > BEST_WIDTH && split) {
			if (start < end) {
				snake_out_u16(o, u, start, end);
				o->column += (int)(end - start);
				start = end;
			}
			snake_out_str(o, "\\");
			o->column++;
			snake_indent(o);
			o->whitespace = o->indention = false;
			if (u->t[start] == ' ') {
				snake_out_str(o, "\\");
				o->column++;
			}
		}
		end++;
	}
	snake_indicator(o, "\"", false, false, false);
}

void snake_write_literal(conf_out_t *o, const u16_t *u)
{
	char hints[4];
	size_t h = 0, n = u->n;
	if (snake_is_linebr(u->t[0]) || u->t[0] == ' ') hints[h++] = '0' + BEST_INDENT;
	if (!snake_is_linebr(u->t[n - 1])) hints[h++] = '-';
	else if (n == 1 || snake_is_linebr(u->t[n - 2])) hints[h++] = '+';
	hints[h] = '\0';
	char ind[8] = "|";
	strcat(ind, hints);
	snake_indicator(o, ind, true, false, false);
	if (h && hints[h - 1] == '+') o->open_ended = true;
	snake_line_break(o, 0);
	bool breaks = true;
	size_t start = 0, end = 0;
	while (end <= n) {
		uint16_t ch = end < n ? u->t[end] : 0;
		if (breaks) {
			if (ch == 0 || !snake_is_linebr(ch)) {
				for (size_t i = start; i < end; i++) snake_line_break(o, u->t[i] == '\n' ? 0 : u->t[i]);
				if (ch != 0) snake_indent(o);
				start = end;
			}
		} else if (ch == 0 || snake_is_linebr(ch)) {
			snake_out_u16(o, u, start, end);   /* SnakeYAML does not count these columns */
			if (ch == 0) snake_line_break(o, 0);
			start = end;
		}
		if (ch != 0) breaks = snake_is_linebr(ch);
		end++;
	}
}
