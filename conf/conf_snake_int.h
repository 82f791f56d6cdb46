/* conf/conf_snake_int.h: what the SnakeYAML emitter (conf_snake.c) and its scalar writers
 * (conf_snake_write.c) share; private to them. */
#ifndef EJOB_CONF_SNAKE_INT_H
#define EJOB_CONF_SNAKE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf_int.h"

#define BEST_INDENT 2
#define BEST_WIDTH  80
#define MAX_SIMPLE_KEY 128
#define YAML_PREFIX "tag:yaml.org,2002:"
#define TAG_STR    YAML_PREFIX "str"

enum { ST_PLAIN, ST_SINGLE, ST_DOUBLE, ST_LITERAL };

typedef struct u16 {
	uint16_t *t;
	size_t n;
} u16_t;

/* conf_snake.c: the output and the emitter's primitives (Emitter.writeIndicator, writeIndent, ...) */
void snake_out_str(conf_out_t *o, const char *s);
void snake_out_u16(conf_out_t *o, const u16_t *u, size_t b, size_t e);   /* units [b, e) as UTF-8 */
void snake_line_break(conf_out_t *o, uint16_t br);
void snake_indent(conf_out_t *o);
void snake_indicator(conf_out_t *o, const char *ind, bool need_ws, bool ws, bool indentation);
bool snake_is_linebr(uint32_t c);
bool snake_printable(uint32_t c);

/* conf_snake_write.c: a scalar in each of SnakeYAML's styles (Emitter.writePlain, writeSingleQuoted,
 * writeDoubleQuoted, writeLiteral); split: long lines are folded at BEST_WIDTH */
void snake_write_plain(conf_out_t *o, const u16_t *u, bool split);
void snake_write_single(conf_out_t *o, const u16_t *u, bool split);
void snake_write_double(conf_out_t *o, const u16_t *u, bool split);
void snake_write_literal(conf_out_t *o, const u16_t *u);

#endif
