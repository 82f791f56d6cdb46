/* tools/ejobctl_spring.h: a Spring Boot configuration (application.yml or application.properties)
 * read the way Spring Boot reads it, into flat properties: each a path of names
 * (elasticjob / reg-center / server-lists) and a text value, with the file and line it came
 * from. Pure: it reads a buffer (the name only labels messages), for `ejobctl import`
 * (tools/ejobctl_migrate.c), its tests and its fuzzer.
 *
 * As Spring Boot:
 *   - YAML (SnakeYAML's YAML 1.1, as YamlPropertySourceLoader reads it): nested mappings and
 *     dotted keys are the same path ("props: {script.command.line: x}" is props / script /
 *     command / line), a key in brackets is one name ("[a.b]"), list items are names "[0]",
 *     "[1]", merge keys (<<) add the keys a mapping does not set itself; a plain scalar is read
 *     with YAML 1.1's types and given as Java prints it (yes -> "true", 010 -> "8", 1:30 -> "90"),
 *     null and empty values are not set. Every document of the file, in order (a later one
 *     wins), except one that applies to a profile only (spring.config.activate.on-profile,
 *     spring.profiles): left out, with a message.
 *   - .properties (java.util.Properties.load): "key=value", "key: value" or "key value", # and !
 *     comments, a backslash at the end of a line continues it, \t \n \r \f \uXXXX escapes.
 * Names are matched as Spring's relaxed binding matches them: spring_name_eq ignores case, '-'
 * and '_' (serverLists, server-lists and server_lists are one key). Map keys (job names, props)
 * keep their spelling. */
#ifndef EJOB_EJOBCTL_SPRING_H
#define EJOB_EJOBCTL_SPRING_H

#include <stddef.h>

/* Messages: "FILE:LINE: KEY: what, and what to do instead", sorted by file and line. */
struct spring_msgs {
	size_t n, cap;
	struct spring_msg {
		int file;                /* index of the input, for sorting */
		unsigned line;           /* 0: none */
		size_t seq;              /* order added, for sorting */
		char *text;              /* the whole line, without a newline */
	} *v;
};

void spring_msg(struct spring_msgs *m, int file, const char *name, unsigned line, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void spring_msgs_sort(struct spring_msgs *m);
void spring_msgs_free(struct spring_msgs *m);

struct spring_prop {
	char **seg;                  /* the path: names as written, brackets taken off */
	int nseg;
	char *value;                 /* the text Spring binds; NULL: not set (null, empty) */
	char *written;               /* a YAML plain scalar that YAML 1.1 read as another text
	                                (010 -> "8"): what was written; else NULL */
	int yaml_float;              /* a YAML plain scalar SnakeYAML reads as a Double (1.5, 09):
	                                Spring gets Java's text of the number, which may differ */
	int file;                    /* index of the input */
	const char *name;            /* its name (the caller's string) */
	unsigned line;               /* 1-based */
	int used;                    /* the converter took it (or said why not) */
};

struct spring_props {
	size_t n, cap;
	struct spring_prop *v;       /* in the order read: a later one overrides an earlier one */
	size_t max_nodes;            /* YAML: nodes walked, aliases counted again (a bound against
	                                alias bombs); 0: 1,000,000 */
};

/* Read one input (file: its index, name: for messages) and append its properties. Problems go to
 * m. 0; 1 when the input is not a configuration (a YAML error, a document that is not a mapping,
 * too big, too deep: said in m); -1 out of memory. properties: the .properties form, else YAML. */
int spring_read(struct spring_props *p, struct spring_msgs *m, int file, const char *name, const char *buf,
                size_t len, int properties);
void spring_props_free(struct spring_props *p);

/* Spring's relaxed match of one name: case, '-' and '_' ignored. */
int spring_name_eq(const char *a, const char *b);
/* The path as written, joined by '.' (a list index as "[0]"), from name from on; malloc'd. */
char *spring_path(const struct spring_prop *p, int from);

#endif
