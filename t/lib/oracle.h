/* t/lib/oracle.h: ask real Quartz and java.util.Calendar (t/quartz/CronOracle.java) questions,
 * or any other Java oracle (oracle_java).
 *
 * One JVM per call: the questions go in as lines, one answer line comes back per question
 * (see CronOracle.java for the language). Needs `java` (17+, single-file source launch) on
 * PATH and Quartz 2.3 at ORACLE_JAR; tools/install-deps installs both.
 */
#ifndef EJOB_T_ORACLE_H
#define EJOB_T_ORACLE_H

#include <stddef.h>

#define ORACLE_JAR "/usr/share/java/quartz2.jar"
#define ORACLE_SRC "t/quartz/CronOracle.java"

/* Returns n answers (free with oracle_free), or NULL with the reason in why. */
char **oracle_ask(char *const *questions, size_t n, char *why, size_t whylen);
/* The same with any single-file oracle: `java [-cp classpath] src` (classpath may be NULL),
 * questions on its stdin, one answer line per question on its stdout. NULL with the reason
 * in why, and errno ENOENT when java itself is not on PATH (EINVAL for anything else). */
char **oracle_java(const char *src, const char *classpath, char *const *questions, size_t n, char *why,
                   size_t whylen);
void oracle_free(char **answers, size_t n);

/* Whether zone's offsets around instant t are known to differ between this system's tzdata
 * and the JDK's (a tzdata correction the JDK lacks), so a comparison there proves nothing. */
int oracle_tz_differs(const char *zone, long long t);

/* Hex of a string, for expressions in questions; returns a malloc'd string. */
char *oracle_hex(const char *s);

#endif
