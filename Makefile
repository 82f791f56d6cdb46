# ejob: build, test, install.
#
#   make                      build everything (WERROR=1: warnings are errors, as CI and developers build)
#   make check                build, check the layers (tools/layers), then prove build/t/
#   make SANITIZE=address,undefined check
#   make fuzz [FUZZ_SECONDS=60]   build the libFuzzer harnesses with clang and run each
#   make bench                build and run the benchmarks (prints the README tables)
#   make demo                 install what is missing, build, show two supervisors sharing jobs (tools/demo)
#   make install PREFIX=/usr/local DESTDIR=   what `make installable` builds (not the tests), below
#   make uninstall PREFIX=/usr/local DESTDIR= removes exactly that
#   make deb                  build/deb/ejob_VERSION-1_ARCH.deb (debhelper), then lintian
#   make clean
#
# Sources are found by folder: ipc/*.c, cron/*.c, conf/*.c and worker/*.c (but worker/worker_main.c and
# worker/http.c, ejob-worker's own) make libejob.a; every t/NN-name.c (NN: two or three digits) is a test build/t/NN-name.t
# (linked with t/lib/*.c), every bench/NAME.c a program build/bench/NAME (linked with bench/lib/*.c
# and t/lib/*.c), every bench/libNAME.c, examples/libNAME.c and t/native/libNAME.c a job library
# build/.../libNAME.so, every t/fuzz/fuzz-NAME.c a fuzzer build/fuzz/fuzz-NAME. What is built goes
# under build/ (B below), nothing next to the sources but the four programs' symlinks. Adding a
# file needs no edit here (t/native/zkc-probe has a rule).

.DELETE_ON_ERROR:
.SUFFIXES:

# Where `make install` puts things. The supervisor finds its worker relative to itself
# (BINDIR/../libexec/ejob/ejob-worker): keep LIBEXEC there, or give --worker-bin. PREFIX=/usr puts
# the configuration in /etc and the units in /lib/systemd/system (Debian 12's), others under PREFIX.
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
LIBEXEC  ?= $(PREFIX)/libexec/ejob
INCDIR   ?= $(PREFIX)/include
LIBDIR   ?= $(PREFIX)/lib
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DATADIR  ?= $(PREFIX)/share
MANDIR   ?= $(DATADIR)/man
DOCDIR   ?= $(DATADIR)/doc/ejob
EXAMPLEDIR ?= $(DATADIR)/ejob/examples
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR  ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
DESTDIR  ?=
VERSION  := $(shell sed -n 's/^\#define EJOB_VERSION "\(.*\)"/\1/p' ipc/version.h)

CC       ?= cc
OPT      ?= -O2 -g
WERROR   ?= 0
SANITIZE ?=
FUZZ_CC  ?= clang
FUZZ_SECONDS ?= 60

WARNINGS := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wwrite-strings \
            -Wshadow -Wformat=2 -fno-common
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
ifneq ($(SANITIZE),)
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

# libpq's header (the tracing sink, supervisor/sink/events_pg.c, and t/76)
PQ_CFLAGS   := $(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -DTHREADED -I. $(PQ_CFLAGS) -pthread -fPIC
ALL_CFLAGS   = $(BASE_CFLAGS) $(OPT) $(WARNINGS) $(SANFLAGS) $(CPPFLAGS) $(CFLAGS)
ALL_LDFLAGS  = -pthread $(SANFLAGS) $(LDFLAGS)
LIBS        := -lzookeeper_mt -lev -lmsgpackc -lyaml -ldl -lm
# the supervisor drives the single-threaded ZooKeeper client from its loop (supervisor/zk/zkc.c);
# tools and tests use the multi-threaded one (synchronous calls). Debian's two -dev packages
# conflict (their headers are the same), so the st library is named by its soname. libsystemd:
# sd_notify for Type=notify services (supervisor/obs/sdnotify.c; ejobctl serve too, for
# ejob-console.service: tools/ejobctl_serve_main.c), libmicrohttpd: supervisor.metrics's
# HTTP server on the loop (supervisor/obs/httpd.c), both the supervisor's only. libpq: the tracing
# sink (supervisor/sink/events_pg.c) in the supervisor; tests and benchmarks link it too
# (supervisor/libsup.a holds the sink, t/76 reads its rows), and ejobctl history reads them.
# libcurl and libcrypto (OpenSSL): the error handlers' messages (supervisor/sink/errh*.c: HTTP, SMTP,
# DingTalk's HmacSHA256), in the supervisor and in what links supervisor/libsup.a (t/79 signs too).
# The supervisor loads libmicrohttpd, libpq and libcurl only when supervisor.metrics, the events sink
# or an error handler is configured (supervisor/base/dlib.h: they and what they pull in cost 3.7 MB of
# RSS); supervisor/base/dl_shims.c, linked into ejob-supervisor alone, calls them through dlib's table.
SUP_LIBS    := -l:libzookeeper_st.so.2 -lev -lmsgpackc -lyaml -ldl -lm -lsystemd -lcrypto
TEST_LIBS   := $(LIBS) -lpq -lcurl -lcrypto

# ---- sources ---------------------------------------------------------------------------
# Everything built goes under $(B), the sources' tree mirrored (nginx's objs/): build/ipc/frame.o,
# build/libejob.a, build/t/35-conf.t, build/tools/ejobctl. Tests and benchmarks name what they run
# by BUILT("tools/ejobctl") (t/lib/tbuild.h, which says "build" too). The four programs users run
# keep their documented paths (supervisor/ejob-supervisor, worker/ejob-worker, tools/ejobctl,
# tools/shmdump) as symlinks into $(B), made here and ignored by git.
B := build

# worker/http.c is ejob-worker's alone: libcurl is linked there, not into libejob.a's users
WORKER_ONLY := worker/worker_main.c worker/http.c
LIB_SRCS   := $(wildcard ipc/*.c cron/*.c conf/*.c) $(filter-out $(WORKER_ONLY),$(wildcard worker/*.c))
LIB_OBJS   := $(LIB_SRCS:%.c=$(B)/%.o)
TLIB_SRCS  := $(wildcard t/lib/*.c)
TLIB_OBJS  := $(TLIB_SRCS:%.c=$(B)/%.o)
SUP_SRCS   := $(wildcard supervisor/*.c supervisor/*/*.c)
SUP_OBJS   := $(SUP_SRCS:%.c=$(B)/%.o)
CTL_SRCS   := $(wildcard tools/ejobctl*.c)
TEST_SRCS  := $(wildcard t/[0-9][0-9]-*.c t/[0-9][0-9][0-9]-*.c)
TESTS      := $(TEST_SRCS:%.c=$(B)/%.t)
BENCH_SRCS := $(filter-out bench/lib%.c,$(wildcard bench/*.c))
BENCHES    := $(BENCH_SRCS:%.c=$(B)/%)
# what the benchmarks share (as t/lib/*.c for the tests): linked into each
BLIB_SRCS  := $(wildcard bench/lib/*.c)
BLIB_OBJS  := $(BLIB_SRCS:%.c=$(B)/%.o)
BENCH_LIB_SRCS := $(wildcard bench/lib*.c)
BENCH_LIBS := $(BENCH_LIB_SRCS:%.c=$(B)/%.so)
# supervisor modules a benchmark may drive directly (they are not in libejob.a)
SUP_MOD_OBJS := $(filter-out $(B)/supervisor/main.o $(B)/supervisor/base/dl_shims.o,$(SUP_OBJS))
FUZZ_SRCS  := $(wildcard t/fuzz/fuzz-*.c)
EX_LIB_SRCS := $(wildcard examples/lib*.c)
EX_LIBS    := $(EX_LIB_SRCS:%.c=$(B)/%.so)
EX_BIN_SRCS := $(filter-out $(EX_LIB_SRCS),$(wildcard examples/*.c))
EX_BINS    := $(EX_BIN_SRCS:%.c=$(B)/%)
T_NATIVE_SRCS := $(wildcard t/native/lib*.c)
T_NATIVE   := $(T_NATIVE_SRCS:%.c=$(B)/%.so)
T_PROBE    := $(if $(wildcard t/native/zkc-probe.c),$(B)/t/native/zkc-probe)

# the programs users run, by their documented paths (each a symlink to $(B)/ of the same path)
PROGRAMS :=
ifneq ($(wildcard tools/shmdump.c),)
PROGRAMS += tools/shmdump
endif
ifneq ($(CTL_SRCS),)
PROGRAMS += tools/ejobctl
endif
ifneq ($(SUP_SRCS),)
PROGRAMS += supervisor/ejob-supervisor
endif
ifneq ($(wildcard worker/worker_main.c),)
PROGRAMS += worker/ejob-worker
endif
BINS := $(addprefix $(B)/,$(PROGRAMS))

SO_SRCS  := $(BENCH_LIB_SRCS) $(EX_LIB_SRCS) $(T_NATIVE_SRCS)
ALL_SRCS := $(LIB_SRCS) $(TLIB_SRCS) $(SUP_SRCS) $(CTL_SRCS) $(TEST_SRCS) $(BENCH_SRCS) $(BLIB_SRCS) $(SO_SRCS) \
            $(EX_BIN_SRCS) $(wildcard tools/shmdump.c $(WORKER_ONLY) t/native/zkc-probe.c)
DEPS := $(ALL_SRCS:%.c=$(B)/%.d)

all: $(PROGRAMS) $(BINS) $(TESTS) $(BENCHES) $(BENCH_LIBS) $(EX_LIBS) $(EX_BINS) $(T_NATIVE) $(T_PROBE)

# Rebuild everything when the flags change (SANITIZE=..., OPT=...): objects depend on this file.
# Not -Werror, which changes no object: `make WERROR=1` then `make install` rebuilds nothing.
$(B)/.build-flags: FORCE
	@mkdir -p $(@D)
	@f='$(CC) $(filter-out -Werror,$(ALL_CFLAGS)) $(ALL_LDFLAGS)'; \
	 if [ ! -f $@ ] || [ "$$(cat $@)" != "$$f" ]; then echo "$$f" > $@; fi

$(B)/%.o: %.c $(B)/.build-flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# the documented paths: a relative symlink each (supervisor/ejob-supervisor -> ../build/supervisor/
# ejob-supervisor); /proc/self/exe is the file in $(B), so the supervisor finds $(B)/worker/ejob-worker
$(PROGRAMS): %: $(B)/% FORCE
	@[ "$$(readlink $@)" = ../$(B)/$@ ] || { echo "ln -sfn ../$(B)/$@ $@"; ln -sfn ../$(B)/$@ $@; }

$(B)/libejob.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(B)/tools/shmdump: $(B)/tools/shmdump.o $(B)/libejob.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(B)/tools/ejobctl: $(CTL_SRCS:%.c=$(B)/%.o) $(B)/tools/ejobctl_console.o $(B)/libejob.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS) -lpq -lmicrohttpd -ljansson -lcrypt -lsystemd

# The web console (console/*: HTML, CSS, JavaScript modules) inside ejobctl: tools/embed writes its
# files as C (bytes, type, ETag, and the gzip'd bytes when smaller), which `ejobctl serve` serves at
# / and /assets/ (tools/ejobctl_serve_assets.c). A console file changed, added or removed rebuilds it.
CONSOLE_SRCS := $(sort $(wildcard console/*.html console/*.css console/*.js console/*.svg console/*.png))
$(B)/console/.files: FORCE
	@mkdir -p $(@D)
	@f='$(CONSOLE_SRCS)'; if [ ! -f $@ ] || [ "$$(cat $@)" != "$$f" ]; then echo "$$f" > $@; fi
$(B)/console/%.gz: console/%
	@mkdir -p $(@D)
	gzip -9nc $< > $@
$(B)/tools/embed: tools/embed.c $(B)/.build-flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $<
$(B)/tools/ejobctl_console.c: $(B)/tools/embed $(B)/console/.files $(CONSOLE_SRCS) $(CONSOLE_SRCS:%=$(B)/%.gz)
	$(B)/tools/embed -z $(B)/console $(CONSOLE_SRCS) > $@
$(B)/tools/ejobctl_console.o: $(B)/tools/ejobctl_console.c $(B)/.build-flags
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/supervisor/ejob-supervisor: $(SUP_OBJS) $(B)/libejob.a
	$(CC) $(ALL_LDFLAGS) -rdynamic -o $@ $^ $(SUP_LIBS)

# zkc*.c are built for the single-threaded client: no THREADED (which declares the sync calls)
ZKC_OBJS := $(filter $(B)/supervisor/zk/%.o,$(SUP_OBJS))
$(ZKC_OBJS) $(B)/t/native/zkc-probe.o: BASE_CFLAGS := $(filter-out -DTHREADED,$(BASE_CFLAGS))

# t/42's probe drives zkc on a libev loop, linked as the supervisor is (the st client: a process
# cannot hold both ZooKeeper libraries, and the tests link the mt one)
$(B)/t/native/zkc-probe: $(B)/t/native/zkc-probe.o $(ZKC_OBJS) $(B)/supervisor/base/log.o $(B)/supervisor/base/nidx.o $(B)/libejob.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(SUP_LIBS)

# libcurl (OpenSSL): http jobs (worker/http.c)
$(B)/worker/ejob-worker: $(WORKER_ONLY:%.c=$(B)/%.o) $(B)/libejob.a
	$(CC) $(ALL_LDFLAGS) -rdynamic -o $@ $^ $(LIBS) -lcurl

# the supervisor's modules, for tests and benchmarks that drive them directly
$(B)/supervisor/libsup.a: $(SUP_MOD_OBJS)
	rm -f $@
	ar rcs $@ $^

# Static pattern rules: a test, a benchmark or an example is only what its folder's wildcard found.
# Objects first, then the archives (t/92 adds objects of its own).
$(TESTS): $(B)/t/%.t: $(B)/t/%.o $(TLIB_OBJS) $(B)/supervisor/libsup.a $(B)/libejob.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(TEST_LIBS)

# t/92 drives ejobctl import's conversion (pure logic in tools/) directly
IMPORT_SRCS := tools/ejobctl_migrate.c tools/ejobctl_migrate_head.c tools/ejobctl_spring.c
$(B)/t/92-ctl-import.t: $(IMPORT_SRCS:%.c=$(B)/%.o)
# t/103 reads the API's JSON with jansson, as serve writes it
$(B)/t/103-serve.t $(B)/t/104-serve-writes.t $(B)/t/106-serve-history.t $(B)/t/107-serve-model.t $(B)/t/108-serve-tls.t $(B)/t/109-serve-new-ns.t \
$(B)/t/110-last-failure.t $(B)/t/111-last-record.t: TEST_LIBS += -ljansson
# t/112 and t/113 too: GET /api/v1/me, /changes, and the history over every job
$(B)/t/112-serve-changes.t $(B)/t/113-serve-history-all.t $(B)/t/119-log-format.t: TEST_LIBS += -ljansson

# benchmarks start real ZooKeeper servers and supervisors with the tests' helpers (t/lib)
$(BENCHES): $(B)/bench/%: $(B)/bench/%.o $(BLIB_OBJS) $(TLIB_OBJS) $(B)/supervisor/libsup.a $(B)/libejob.a
	$(CC) $(ALL_LDFLAGS) -o $@ $(filter %.o,$^) $(filter %.a,$^) $(TEST_LIBS)

# shared objects: job libraries of the benchmarks, the examples and the tests
$(BENCH_LIBS) $(EX_LIBS) $(T_NATIVE): $(B)/%.so: %.c $(B)/.build-flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -shared -MMD -MP -o $@ $<

$(EX_BINS): $(B)/examples/%: $(B)/examples/%.o $(B)/libejob.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# Tests run from the repo root; they find binaries (under build/) and ZooKeeper on their own. Two
# lanes: the tests in CHECK_LANE2 spend most of their time waiting (t/53 a minute for the leader's
# reconcile, t/57 and t/52 for reloads and watches, t/65 for fires between operators' orders,
# t/68 for the bounded wait, t/76 for PostgreSQL, t/82-84 for sessions to end, t/39 on
# timers, the others on a supervisor or two) and run one after another beside the rest, which
# run one after another too. Each starts its own ZooKeeper on free ports. --timer gives each
# test's time: keep the lanes even (2026-11-28, 99 files: about 715 and 690 s; t/91 and t/93 wait for
# ElasticJob's JVMs and for sessions to end, about 45 s each; t/105 about 30 s on three supervisors;
# t/112 about 20 s: a session to expire twice, a failover; the console's browser tests t/114-t/117
# 20-50 s each, two in each lane (t/136's workflow pages, about 20 s, in lane 2); t/118, the console
# in Firefox, about 15 s; t/121 builds the .deb
# with both cores, 30-60 s, unless one newer than the sources is there, installs and purges it, in
# lane 1; t/123 waits 10 s for ejobctl serve's notifications, and t/124 about 50 s for four sessions
# to end, on 2 and on 8 supervisors, both in lane 2; t/134, a workflow on three supervisors with
# three kills, a session to end and a cron's runs, about 60 s in lane 1 (t/138, an outage and a
# leader change, about 15 s there too), and t/137, one with ElasticJob's JVM, about 12 s in lane 2).
CHECK_LANE2 := $(B)/t/{39,47,49,51,52,53,56,57,65,66,68,74,76,82,83,85,86,88,90,91,93,98,102,105,112,115,117,123,124,136,137}-*
# the one-way rule between supervisor/'s folders first (tools/layers; docs/design.md)
check: all
	tools/layers
	prove -j2 --timer --rules='seq=$(CHECK_LANE2)' --rules='seq=**' $(B)/t/

# ---- man pages: ejob-supervisor(8), ejobctl(1) and ejob.yaml(5) are written once in scdoc
# (man/NAME.SECTION.scd) and built here as $(B)/man/NAME.SECTION, which install takes. t/120 checks
# them against the config loader's key table (conf/conf_keys.c) and the programs' --help.
MAN_SCD   := $(wildcard man/*.scd)
MAN_BUILT := $(MAN_SCD:man/%.scd=$(B)/man/%)
SCDOC     ?= scdoc
man: $(MAN_BUILT)
all: man
$(MAN_BUILT): $(B)/man/%: man/%.scd
	@mkdir -p $(@D)
	$(SCDOC) < $< > $@
.PHONY: man

# ---- demo: tools/demo installs the dependencies first, then builds what it needs (so no
# prerequisites here); it gets this make, and with it the jobserver of make -jN
demo:
	MAKE="$(MAKE)" tools/demo

# ---- benchmarks --------------------------------------------------------------------------
bench: all
	@for b in $(BENCHES); do echo "== $${b#$(B)/}"; ./$$b || exit 1; echo; done

# ---- fuzzing (clang + libFuzzer; tools/install-deps --fuzz) ----------------------------
FUZZ_DIR := $(B)/fuzz
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -DTHREADED -I. -g -O1 -pthread \
              -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_DIR)/%.o)
FUZZ_IMPORT_OBJS := $(IMPORT_SRCS:%.c=$(FUZZ_DIR)/%.o)
FUZZ_SERVE_OBJS := $(FUZZ_DIR)/tools/ejobctl_serve_req.o
FUZZERS := $(patsubst t/fuzz/%.c,$(FUZZ_DIR)/%,$(FUZZ_SRCS))

$(FUZZ_LIB_OBJS) $(FUZZ_IMPORT_OBJS) $(FUZZ_SERVE_OBJS): $(FUZZ_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

# the importer's fuzzer takes its files of tools/ too
$(FUZZ_DIR)/fuzz-import: $(FUZZ_IMPORT_OBJS)
# serve's request parsing (tools/ejobctl_serve_req.c, what the server routes through), with jansson
$(FUZZ_DIR)/fuzz-serve: $(FUZZ_SERVE_OBJS)
$(FUZZ_DIR)/fuzz-serve: LIBS += -ljansson

$(FUZZ_DIR)/fuzz-%: t/fuzz/fuzz-%.c $(FUZZ_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS)

.SECONDARY: $(FUZZ_LIB_OBJS) $(FUZZ_IMPORT_OBJS) $(FUZZ_SERVE_OBJS)

fuzz-build: $(FUZZERS)

fuzz: fuzz-build
	@for f in $(FUZZERS); do \
	  n=$$(basename $$f); seed=t/fuzz/corpus/$$n; work=$(FUZZ_DIR)/corpus/$$n; \
	  mkdir -p $$work; [ -d $$seed ] && cp -n $$seed/* $$work/ 2>/dev/null; \
	  echo "== $$n: $(FUZZ_SECONDS)s"; \
	  log=$(FUZZ_DIR)/$$n.log; \
	  if $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/ $$work \
	       $$( [ -f t/fuzz/$$n.dict ] && echo -dict=t/fuzz/$$n.dict ) > $$log 2>&1; then \
	    tail -n 6 $$log; \
	  else \
	    tail -n 40 $$log; echo "== $$n FAILED: the crashing input is in the log above ($$log)"; exit 1; \
	  fi; \
	done

# ---- install ----------------------------------------------------------------------------
# What is installed, as SOURCE:DESTINATION:MODE (one list for install and uninstall). Built files
# are prerequisites, not `all` (which builds tests and benchmarks): after `make`, `make install
# PREFIX=...` copies and builds nothing (t/122). The files of dist/ (units, the packaged config,
# sysusers) name Debian's paths (/usr/bin, /etc/ejob, /usr/share/ejob/examples...): $(B)/dist/ has
# them rewritten for these directories, $(B)/ejob.pc too; both are remade when a directory changes.
MAN_PAGES := $(MAN_BUILT)
DIST_GEN  := $(B)/dist/ejob-supervisor.service $(B)/dist/ejob-console.service $(B)/dist/ejob.yaml \
             $(B)/dist/ejob-console.default $(B)/dist/ejob.sysusers
EX_FILES  := $(sort $(wildcard examples/*.sh examples/*.yaml examples/*.c))
DOC_FILES := $(sort $(wildcard docs/*.md docs/*.png))
INSTALL_LIST := \
  $(B)/supervisor/ejob-supervisor:$(BINDIR)/ejob-supervisor:755 \
  $(B)/tools/ejobctl:$(BINDIR)/ejobctl:755 \
  $(B)/tools/shmdump:$(BINDIR)/ejob-shmdump:755 \
  $(B)/worker/ejob-worker:$(LIBEXEC)/ejob-worker:755 \
  $(B)/libejob.a:$(LIBDIR)/libejob.a:644 \
  worker/ejob.h:$(INCDIR)/ejob.h:644 \
  $(B)/ejob.pc:$(PKGCONFIGDIR)/ejob.pc:644 \
  $(foreach m,$(MAN_PAGES),$(m):$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)):644) \
  README.md:$(DOCDIR)/README.md:644 \
  $(foreach f,$(DOC_FILES),$(f):$(DOCDIR)/$(f):644) \
  $(foreach f,$(EX_FILES),$(f):$(EXAMPLEDIR)/$(notdir $(f)):$(if $(filter %.sh,$(f)),755,644)) \
  $(B)/dist/ejob-supervisor.service:$(UNITDIR)/ejob-supervisor.service:644 \
  $(B)/dist/ejob-console.service:$(UNITDIR)/ejob-console.service:644 \
  $(B)/dist/ejob.sysusers:$(SYSUSERSDIR)/ejob.conf:644
# configuration: installed when absent (an edited one is kept), removed by uninstall when unedited
CONF_LIST := $(B)/dist/ejob.yaml:$(SYSCONFDIR)/ejob/ejob.yaml:644 \
             $(B)/dist/ejob-console.default:$(SYSCONFDIR)/default/ejob-console:644
INSTALL_SRCS := $(foreach e,$(INSTALL_LIST) $(CONF_LIST),$(word 1,$(subst :, ,$(e))))

# what `make install` installs, built (debian/rules builds this, not `all`)
installable: $(PROGRAMS) $(INSTALL_SRCS)

$(B)/.install-paths: FORCE
	@mkdir -p $(@D)
	@f='$(PREFIX) $(BINDIR) $(LIBEXEC) $(INCDIR) $(LIBDIR) $(DATADIR) $(DOCDIR) $(EXAMPLEDIR) $(SYSCONFDIR) $(VERSION)'; \
	 if [ ! -f $@ ] || [ "$$(cat $@)" != "$$f" ]; then echo "$$f" > $@; fi

$(B)/dist/%: dist/% $(B)/.install-paths
	@mkdir -p $(@D)
	sed -e 's|/usr/bin/ejob|$(BINDIR)/ejob|g' -e 's|/etc/ejob/|$(SYSCONFDIR)/ejob/|g' \
	    -e 's|/etc/default/ejob-console|$(SYSCONFDIR)/default/ejob-console|g' \
	    -e 's|/usr/share/doc/ejob|$(DOCDIR)|g' -e 's|/usr/share/ejob/examples|$(EXAMPLEDIR)|g' $< > $@

# pkg-config: an external worker (worker/ejob.h, docs/worker.md) links the static libejob.a and
# what it needs (the examples' link line)
$(B)/ejob.pc: $(B)/.install-paths
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$(LIBDIR)' 'includedir=$(INCDIR)' '' 'Name: ejob' \
	  'Description: ejob external workers: worker/ejob.h and the static libejob.a' 'Version: $(VERSION)' \
	  'URL: file://$(DOCDIR)/docs/worker.md' 'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -lejob $(LIBS) -pthread' > $@

install: installable
	@set -e; for e in $(INSTALL_LIST); do \
	  src=$${e%%:*}; rest=$${e#*:}; dst=$(DESTDIR)$${rest%:*}; mode=$${rest##*:}; \
	  echo "install -D -m $$mode $$src $$dst"; install -D -m $$mode $$src $$dst; \
	done
	@set -e; for e in $(CONF_LIST); do \
	  src=$${e%%:*}; rest=$${e#*:}; dst=$(DESTDIR)$${rest%:*}; mode=$${rest##*:}; \
	  if [ -e $$dst ]; then echo "make install: $$dst is there: kept (the new one is $$src)"; \
	  else echo "install -D -m $$mode $$src $$dst"; install -D -m $$mode $$src $$dst; fi; \
	done
	@[ "$$(realpath -m $(BINDIR)/../libexec/ejob)" = "$$(realpath -m $(LIBEXEC))" ] || \
	  echo "make install: warning: the supervisor looks for its worker in BINDIR/../libexec/ejob, not in LIBEXEC=$(LIBEXEC): run it with --worker-bin $(LIBEXEC)/ejob-worker (or EJOB_WORKER_BIN)" >&2
	@[ -n "$(DESTDIR)" ] || echo "make install: the services run as the ejob user: systemd-sysusers $(SYSUSERSDIR)/ejob.conf creates it"

# the configuration as installed, to tell an edited one (the two files only: nothing is built)
uninstall: $(B)/dist/ejob.yaml $(B)/dist/ejob-console.default
	@for e in $(INSTALL_LIST); do rest=$${e#*:}; dst=$(DESTDIR)$${rest%:*}; \
	  [ ! -e $$dst ] || { echo "rm -f $$dst"; rm -f $$dst; }; done
	@for e in $(CONF_LIST); do src=$${e%%:*}; rest=$${e#*:}; dst=$(DESTDIR)$${rest%:*}; \
	  if [ ! -e $$dst ]; then :; elif cmp -s $$src $$dst; then echo "rm -f $$dst"; rm -f $$dst; \
	  else echo "make uninstall: $$dst was changed: kept"; fi; done
	@for d in $(LIBEXEC) $(DOCDIR)/docs $(DOCDIR) $(EXAMPLEDIR) $(DATADIR)/ejob $(SYSCONFDIR)/ejob; do \
	  [ ! -d $(DESTDIR)$$d ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$$d; done

# ---- deb: the Debian package (debian/), built with debhelper in a copy of the tree (the files git
# knows, tracked or new but not ignored; without git, the tree but build/), so that the source tree
# stays clean; then lintian. dpkg-buildpackage leaves the .deb (and its -dbgsym) beside the copy.
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null)
DEB      := $(B)/deb/ejob_$(VERSION)-1_$(DEB_ARCH).deb
DEB_JOBS ?= 2
deb:
	@command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null || \
	  { echo "make deb: needs dpkg-buildpackage and lintian: tools/install-deps" >&2; exit 1; }
	rm -rf $(B)/deb && mkdir -p $(B)/deb/src
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  git ls-files -z -co --exclude-standard | tar --null -T - --ignore-failed-read -cf - 2>/dev/null; \
	else tar --exclude=./$(B) --exclude=./.git -cf - .; fi | tar -C $(B)/deb/src -xf -
	cd $(B)/deb/src && dpkg-buildpackage -b -us -uc -j$(DEB_JOBS)
	lintian --fail-on error,warning $(DEB)
	@echo "make deb: $(DEB)"

# $(B), the symlinks, and what builds before $(B) left in the source tree (objects, libraries,
# programs, tests and job libraries next to their sources)
OLD_INTREE := libejob.a supervisor/libsup.a .build-flags $(TEST_SRCS:.c=.t) $(BENCH_SRCS:.c=) \
              $(SO_SRCS:.c=.so) $(EX_BIN_SRCS:.c=) t/native/zkc-probe
clean:
	rm -rf $(B)
	rm -f $(PROGRAMS) $(OLD_INTREE)
	find . -path ./.git -prune -o \( -name '*.o' -o -name '*.d' \) -type f -print | xargs rm -f

.PHONY: all check demo bench fuzz fuzz-build installable install uninstall deb clean FORCE
FORCE:

-include $(DEPS)
