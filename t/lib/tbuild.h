/* t/lib/tbuild.h: where make puts what it builds. Every object, library and program goes under
 * build/, the sources' tree mirrored (the Makefile's B): BUILT(BUILT("tools/ejobctl")) is
 * "build/tools/ejobctl", BUILT(BUILT("t/native/libzkslow.so")) "build/t/native/libzkslow.so". Tests
 * and benchmarks run from the top of the tree, as make check runs them. */
#ifndef EJOB_TBUILD_H
#define EJOB_TBUILD_H

#define TBUILD_DIR "build"
#define BUILT(path) TBUILD_DIR "/" path

#endif
