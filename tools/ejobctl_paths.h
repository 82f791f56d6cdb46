/* tools/ejobctl_paths.h: whether the program of a script job, the library of a native job and
 * the CA file of an http job can be found from here, the way ejob-worker finds them (for ejobctl
 * validate's warnings). */
#ifndef EJOB_EJOBCTL_PATHS_H
#define EJOB_EJOBCTL_PATHS_H

#include <stddef.h>

/* The first word of a script command line (split as the worker splits it): a path with '/'
 * (a relative one from the working directory, as the supervisor's workers take it), or a name
 * looked up in $PATH (worker/script.h cmd_resolve). 0 if it is an executable regular file;
 * else 1 with the reason in why: "examples/x.sh: not found (...)", "x: not found in $PATH",
 * "/etc/passwd: not executable", or that the line cannot be split into words. */
int ejobctl_script_problem(const char *cmd, char *why, size_t len);

/* A native library as dlopen takes it: a path with '/' (a relative one from the working
 * directory), or a name looked up in $LD_LIBRARY_PATH, the directories of /etc/ld.so.conf and
 * the system's (/lib, /usr/lib and their 64-bit twins). 0 if it is a readable ELF shared
 * object for this machine; else 1 with why: "...: not found", "...: not readable",
 * "...: not a shared library (...)". The library is only read, never loaded. */
int ejobctl_library_problem(const char *lib, char *why, size_t len);

/* An http job's http.ca.file, as libcurl in ejob-worker opens it (a relative path from the
 * working directory): 0 if it is a readable regular file holding a PEM certificate ("-----BEGIN
 * CERTIFICATE-----" in its first 64 KiB); else 1 with why: "...: not found", "...: not
 * readable", "...: holds no PEM certificate". */
int ejobctl_ca_file_problem(const char *path, char *why, size_t len);

#endif
