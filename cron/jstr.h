/* cron/jstr.h: the bits of java.lang.String, Character and Integer that Quartz's cron parser
 * leans on, so that ejob accepts exactly the strings Quartz accepts.
 *
 * Quartz upper-cases the whole expression with String.toUpperCase(Locale.US) (which turns
 * "ß" into "SS" and "ſ" into "S"), walks it by UTF-16 code unit, and reads numbers with
 * Integer.parseInt, which takes a sign and any Unicode decimal digit ("٣" is 3). Pure code,
 * no state.
 */
#ifndef EJOB_JSTR_H
#define EJOB_JSTR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Upper bound of the UTF-16 units jstr_upper() makes from n bytes of UTF-8. */
#define JSTR_UNITS_MAX(n) (2 * (n) + 1)

/* Decode the UTF-8 string s (n bytes) and upper-case it as String.toUpperCase(Locale.US).
 * Writes the UTF-16 units to u[] and, for each, the 1-based code point column of the input
 * character it came from to col[]; both need JSTR_UNITS_MAX(n) slots. Returns the number of
 * units, or -1 with errno = EILSEQ and *bad = the column of the first invalid byte sequence. */
ssize_t jstr_upper(const char *s, size_t n, uint16_t *u, uint32_t *col, size_t *bad);

/* Character.digit(c, 10): the value of a decimal digit (any script), else -1. */
int jstr_digit(uint16_t c);

/* Integer.parseInt of n units: optional '+' or '-', then at least one digit (jstr_digit),
 * no overflow of int32. Returns 0 and *out, or -1. */
int jstr_parse_int(const uint16_t *u, size_t n, int32_t *out);

#endif
