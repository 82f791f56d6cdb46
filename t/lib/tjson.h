/* t/lib/tjson.h: a small JSON reader for tests: enough for ejobctl's --json and the supervisor's
 * answers (numbers are integers; \u escapes keep their low byte). */
#ifndef EJOB_TJSON_H
#define EJOB_TJSON_H

enum tjson_type { TJSON_NULL, TJSON_BOOL, TJSON_NUM, TJSON_STR, TJSON_ARR, TJSON_OBJ };
struct tjson {
	enum tjson_type t;
	long long num;
	int b;
	char *s;
	int n;                      /* members of an object or array */
	char **keys;                /* an object's (NULL in an array) */
	struct tjson **v;
};

/* The whole text is one JSON document (and a newline): the tree, else NULL. */
struct tjson *tjson_doc(const char *text);

/* A member by path: "items.2.state", "jobs.name=busy.status" (the element whose name is busy;
 * the value may hold dots: "servers.ip=127.0.0.1.jobsNum", the longest that matches wins);
 * NULL if it is not there. */
const struct tjson *tjson_get(const struct tjson *v, const char *path);

/* A member as text for comparisons: strings as they are, null as "null", numbers, true/false,
 * arrays of scalars as "[a,b]", objects "{...}"; "(missing)" if the path is not there. In one of
 * 8 static buffers, reused in turn. */
const char *tjson_text(const struct tjson *root, const char *path);

/* The trees (every node, also of a text that is not JSON) and whatever else the test hands here
 * live until the test exits: kept, reachable, so that LeakSanitizer (make SANITIZE=address
 * check) does not count them. */
void tjson_keep(void *p);

#endif
