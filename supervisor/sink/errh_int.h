/* supervisor/sink/errh_int.h: what errh.c (the tap, the queue, the thread) and errh_send.c (the
 * transfers, with libcurl) share. Not for other modules. */
#ifndef EJOB_ERRH_INT_H
#define EJOB_ERRH_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"

/* One message to send: everything the thread needs, in one allocation, owned by the queue, then
 * by the thread (it never looks at the loop's state). */
struct errh_msg {
	conf_errh_type_t type;
	uint32_t item;
	const char *job;
	const char *text;           /* errh_message(): what DINGTALK, WECHAT and EMAIL send */
	const char *json;           /* WEBHOOK: the body, the history record with the text */
	/* the props that type reads (conf_errh_t), copied; NULL when unset */
	const char *url, *keyword, *secret;
	int connect_ms, read_ms;
	const char *host, *username, *password, *ssl_trust, *subject, *from, *to, *cc, *bcc;
	int port;
	bool use_ssl, debug;
};

/* What the sending thread keeps across messages. */
struct errh_sender {
	char hostname[256];         /* EHLO, Message-ID */
	uint64_t mails;             /* Message-IDs and boundaries made so far */
	const atomic_int *stop;     /* set: transfers end once stop_at (CLOCK_MONOTONIC ns) passes */
	const _Atomic uint64_t *stop_at;
};

/* One attempt to send m. 0: sent. -1: not sent; why says what happened (for the log), and
 * *again whether another attempt may do better (the server could not be reached, or answered
 * 5xx or a transient SMTP 4xx). */
int errh_send(struct errh_sender *s, const struct errh_msg *m, char *why, size_t whysz, int *again);

#endif
