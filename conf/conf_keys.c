/* conf/conf_keys.c: the configuration file's keys by dotted path (conf_keys.h), walked from the
 * loader's tables. */
#include <stdio.h>
#include <string.h>

#include "conf/conf_int.h"
#include "conf/conf_keys.h"

struct walk {
	char (*keys)[CONF_KEY_PATH_MAX];
	size_t max, n;
	int bad;
};

static void add(struct walk *w, const char *prefix, const char *key)
{
	if (w->n < w->max) {
		int r = snprintf(w->keys[w->n], CONF_KEY_PATH_MAX, "%s%s%s", prefix, *prefix ? "." : "", key);
		if (r < 0 || r >= CONF_KEY_PATH_MAX) w->bad = 1;
	}
	w->n++;
}

/* section's keys; a key with a table of its own is walked instead of listed */
static void walk(struct walk *w, const char *section)
{
	size_t n;
	const char *const *k = conf_load_keys(section, &n);
	for (size_t i = 0; i < n; i++) {
		char sub[CONF_KEY_PATH_MAX];
		size_t m;
		int r = snprintf(sub, sizeof sub, "%s%s%s", section, *section ? "." : "", k[i]);
		if (r < 0 || (size_t)r >= sizeof sub) {
			w->bad = 1;
			continue;
		}
		if (strcmp(sub, "jobs") == 0) {
			const char *const *jk = conf_job_file_keys(&m);
			for (size_t j = 0; j < m; j++) add(w, CONF_KEYS_JOB, jk[j]);
		} else if (conf_load_keys(sub, &m)) {
			walk(w, sub);
		} else {
			add(w, section, k[i]);
		}
	}
}

size_t conf_keys(char (*keys)[CONF_KEY_PATH_MAX], size_t max)
{
	struct walk w = { keys, max, 0, 0 };
	walk(&w, "");
	return w.bad ? 0 : w.n;
}
