/* t/lib/tzk_int.h: what t/lib/tzk.c (the servers) and t/lib/tzk_client.c (the client) share. */
#ifndef EJOB_TZK_INT_H
#define EJOB_TZK_INT_H

void tzk_sleep_ms(unsigned ms);

/* Print a message as TAP comments on stderr ("# tzk: ..." a line). */
__attribute__((format(printf, 1, 2)))
void tzk_say(const char *fmt, ...);

#endif
