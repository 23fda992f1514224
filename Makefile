# SPDX-License-Identifier: GPL-2.0
#
# SDP for Linux -- top-level Makefile.  The module itself is described in
# Kbuild; this file drives kbuild, the tests and the test guest.
#
#   make               build what an admin needs: sdp.ko (against KDIR),
#                      sdpstat, libsdp.so, sdp_run (make test-progs: the
#                      test programs)
#   make check         install what is missing, run the unit tests on the
#                      host, lint, run every suite in a QEMU guest with
#                      Soft-RoCE, on Debian 12's 6.1 and on 6.12, then
#                      make check-packages
#                      (KERNEL=6.1, KERNEL=6.12 or KDIR=...: that kernel
#                      only; KERNEL=debug: on a debug kernel with KASAN,
#                      lockdep, kmemleak, UBSAN; PROVIDER=siw: over
#                      soft-iWARP instead of Soft-RoCE)
#   make check-host SDP_TEST_DEVICE=mlx5_0 SDP_TEST_ADDR=192.0.2.5
#                      [SDP_TEST_PEER=192.0.2.6] [SDP_TEST_LOAD=tree]
#                      the suites on this machine, no guest: against
#                      its own RDMA device, leaving the host unchanged
#                      (tests/run_tests; what skips there and why:
#                      TESTING.md, "On a real host"); with SDP_TEST_PEER
#                      the wire suite too, against the other host
#   make check-host-vm the same in the test guest, against its rxe0 (or
#                      siw0 with PROVIDER=siw, rxe not loaded);
#                      check-host-wire-vm: the wire suite so, between
#                      the two guests of check-wire
#   make unit          the wire rules' unit tests (tests/unit.c), on the
#                      host: no guest, no module
#   make check-wire    two guests on a virtual wire (tests/vm/wire): SDP
#                      between hosts, qperf and iperf3 across it, packet
#                      loss, a cut wire, a device removed, a peer host
#                      that dies (PROVIDER=siw: over soft-iWARP)
#   make stress        the stress suite and the hostile-peer fuzzer
#                      (tests/peerfuzz.c) for STRESS_SECONDS (default 300)
#                      each on one kernel (KERNEL=6.12, KERNEL=debug as
#                      for check)
#   make demo          install what is missing, build, boot the guest and
#                      show an SDP echo, sdpstat, and SDP vs TCP numbers
#   make bench         SDP vs TCP vs verbs latency and bandwidth table
#   make bench-wire    SDP vs TCP between the two guests of check-wire,
#                      and throughput against packet loss
#   make bench-pairs   the verbs-relative ratios as back-to-back pairs
#   make bench-latency latency percentiles of SDP, TCP and verbs, and
#                      what one socket call costs in the guest (drawn in
#                      bench-results/)
#   make bench-sweep   bandwidth and latency at every message size, SDP,
#                      TCP, rsockets and verbs, drawn as PNG pictures in
#                      bench-results/
#   make trace-pingpong where one round trip's time goes: each hop and
#                      the thread that runs it (kprobes, sched events)
#   make bench-scale   many connections: idle memory per connection,
#                      connection rate (also rsockets), 64 streams
#   make lint          W=1 build, sparse and checkpatch, failing on any
#                      warning
#   make checkpatch    checkpatch.pl --strict over the sources
#   make dkms-test     dkms add/build/install for each tested kernel, check
#                      the vermagic, remove again (root)
#   make check-packages  build the .debs and RPMs, install the .debs here
#                      (DKMS for each kernel), a guest on them, purge
#                      (root; part of make check; scripts/check-packages)
#   make dist          the release tarball (dist/sdp-VERSION.tar.gz);
#                      make debs, make rpm: the packages from it
#   make install       install the module (modules_install + depmod), the
#                      uapi headers, sdpstat, the preload library, sdp_run,
#                      the man pages, the udev rule, the sysctl.d example;
#                      DESTDIR and PREFIX (default /usr/local) honoured;
#                      install-files: the same without sdp.ko (INSTALL.md)
#   make uninstall     remove what make install installed

# KERNEL: debian (Debian's default kernel; make check: 6.1 and 6.12),
# 6.1 or 6.12 (that Debian kernel), debug (scripts/debug-kernel).
KERNEL ?= debian
# PROVIDER: the test guest's RDMA provider, rxe (Soft-RoCE) or siw
# (soft-iWARP, built by scripts/siw-module from Debian's kernel source).
PROVIDER ?= rxe
# The debug kernel is ~30x slower again: smaller transfers there.
# VM_TIMEOUT bounds a guest's whole run (tests/vm/run --timeout).
VM_TIMEOUT := 1500
ifeq ($(KERNEL),debug)
SUITE_ENV := SDP_TEST_BYTES=8M SDP_TEST_TIMEOUT=600 SDP_STRESS_SECONDS=180
# All suites took 1480 s of the guest's run on 2026-12-01, and the next
# round ran out of the default 1500 s.
VM_TIMEOUT := 3600
endif

KDIR_ORIGIN := $(origin KDIR)
ifeq ($(KDIR_ORIGIN),undefined)
ifeq ($(KERNEL),debug)
KDIR := $(shell scripts/debug-kernel)/linux-source-6.1
else ifeq ($(KERNEL),debian)
KDIR := $(shell scripts/find-kdir)
else
KDIR := $(shell scripts/find-kdir --kernel $(KERNEL))
endif
endif

# The release, from one place: the file VERSION (MODULE_VERSION through
# Kbuild, dkms.conf's #MODULE_VERSION# when packaged, sdpstat --version).
SDP_VERSION := $(strip $(file <VERSION))

TEST_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE \
	-Iinclude/uapi -Itests/lib -Itools
# What an admin installs (sdpstat, libsdp, sdp_run) is built with the
# caller's CFLAGS, CPPFLAGS and LDFLAGS (a distribution's hardening flags);
# warnings are errors only with WERROR=1, as make check builds them.
CFLAGS ?= -O2 -g
USER_CFLAGS = $(CPPFLAGS) $(CFLAGS) -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror) \
	-std=gnu11 -D_GNU_SOURCE -DSDP_RELEASE='"$(SDP_VERSION)"'
# The sock_diag dump and parser: sdpstat's, and the tests' (TEST_LIB).
DIAG_PARSE := tools/sdp_diag_parse.c
# tests/lib/peer.c, the user-space SDP peer, needs verbs: only the suites
# that use it link it (PEER_LIB), the rest get TEST_LIB.
PEER_LIB := tests/lib/peer.c
TEST_LIB := $(filter-out $(PEER_LIB),$(wildcard tests/lib/*.c)) $(DIAG_PARSE)
TEST_SRCS := $(wildcard tests/*.c)
TEST_BINS := $(patsubst tests/%.c,tests/bin/%,$(TEST_SRCS))
# Suites in the order they run: the test bed first, so that a broken
# guest is told apart from a broken module.
SUITES := tests/bin/testbed tests/bin/socket tests/bin/module tests/bin/stream \
	tests/bin/zcopy tests/bin/fallback tests/stream-fallback \
	tests/bin/peer tests/bin/peerfuzz tests/bin/resume tests/bin/filter \
	tests/bin/rdma \
	tests/bin/diag \
	tests/bin/counters tests/bin/scale tests/bin/tunables tests/bin/install \
	tests/bin/sdprules tests/bin/preload tests/preload-tools tests/programs \
	tests/bin/stress
KSRCS := $(wildcard src/*.c src/*.h include/uapi/linux/*.h)

.PHONY: all module tests examples tools bench-tools libsdp \
	check check-kernels check-vm check-host check-host-vm check-host-wire-vm print-suites check-wire check-wire-vm bench-wire bench-wire-vm unit stress stress-vm demo demo-vm bench bench-vm bench-pairs bench-pairs-vm \
	bench-latency bench-latency-vm bench-sweep bench-sweep-vm \
	trace-pingpong trace-pingpong-vm \
	bench-scale bench-scale-vm \
	lint checkpatch doc-sync dkms-test deps clean install install-files uninstall \
	install-module install-headers dkms-src test-progs dist rpm deb debs check-packages \
	check-packages-run

# What an admin needs: the module, sdpstat, libsdp and sdp_run (no test
# dependencies).  The test programs are TEST_PROGS (make test-progs).
all: module tools libsdp

TEST_PROGS := tests examples bench-tools
test-progs: $(TEST_PROGS)

tools: tools/bin/sdpstat

tools/bin/%: tools/%.c $(wildcard include/uapi/linux/*.h)
	@mkdir -p tools/bin
	$(CC) $(USER_CFLAGS) -Iinclude/uapi -Itools $(LDFLAGS) -o $@ $< $(LDLIBS)

tools/bin/sdpstat: $(DIAG_PARSE) tools/sdp_diag_parse.h tools/sdp_names.h
tools/bin/sdpstat: LDLIBS += $(DIAG_PARSE)
tools/bin/sdpstat: VERSION

examples: examples/bin/sdp_hello examples/bin/sdp_fallback

examples/bin/%: examples/%.c include/uapi/linux/sdp.h
	@mkdir -p examples/bin
	$(CC) $(TEST_CFLAGS) -o $@ $<

# Programs scripts/bench runs in the guest.
bench-tools: bench/bin/sdp_stream bench/bin/sdp_pingpong bench/bin/sdp_scale

bench/bin/%: bench/%.c bench/bench.h include/uapi/linux/sdp.h
	@mkdir -p bench/bin
	$(CC) $(TEST_CFLAGS) -o $@ $< $(LDLIBS)

# rsockets' calls (librdmacm) for the connection rate of scripts/bench-scale.
bench/bin/sdp_scale: LDLIBS += -lrdmacm -lpthread

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tests: $(TEST_BINS) tests/bin/nodelay.so

# Preloaded into the QEMUs of tests/vm/wire, on the host (tests/vm/nodelay.c).
tests/bin/nodelay.so: tests/vm/nodelay.c
	@mkdir -p tests/bin
	$(CC) -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -shared -fPIC -o $@ $< -ldl

tests/bin/%: tests/%.c $(TEST_LIB) $(wildcard tests/lib/*.h) tools/sdp_diag_parse.h \
		include/uapi/linux/sdp.h
	@mkdir -p tests/bin
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LIB) $(LDLIBS)

# The misbehaving-peer suite speaks SDP from user space with verbs.
tests/bin/peer: $(PEER_LIB)
tests/bin/peer: LDLIBS += $(PEER_LIB) -lrdmacm -libverbs
# The hostile-peer fuzzer (tests/peerfuzz.c) is built on the same peer.
tests/bin/peerfuzz: $(PEER_LIB)
tests/bin/peerfuzz: LDLIBS += $(PEER_LIB) -lrdmacm -libverbs -lpthread
# Resuming a connection: the suite plays the peer and the attacker.
tests/bin/resume: $(PEER_LIB)
tests/bin/resume: LDLIBS += $(PEER_LIB) -lrdmacm -libverbs

# The unit tests of the wire rules run on the host, not in the guest:
# the module's own src/sdp_wire.h, built in user space through
# tests/unit/kcompat.h.  make check runs them before the guest suites.
tests/bin/unit: tests/unit.c tests/lib/tap.c tests/lib/tap.h \
		src/sdp_wire.h src/sdp_proto.h src/sdp_zc_pace.h \
		src/sdp_resume_wire.h tests/unit/kcompat.h
	@mkdir -p tests/bin
	$(CC) $(TEST_CFLAGS) -Isrc -Itests/unit -o $@ tests/unit.c \
		tests/lib/tap.c

unit: tests/bin/unit
	tests/bin/unit

# libsdp: the LD_PRELOAD library, sdp_run, their man pages (libsdp/,
# man/); the rules parser is shared with sdp_run and tests/sdprules.c.
# make install installs them with the rest.
PREFIX ?= /usr/local
LIBSDP_CFLAGS = $(USER_CFLAGS) -Iinclude/uapi -Ilibsdp -Itools
LIBSDP_DEPS := libsdp/rules.c libsdp/rules.h include/uapi/linux/sdp.h \
	tools/sdp_names.h

libsdp: libsdp/libsdp.so libsdp/sdp_run

# The library's parts (libsdp/libsdp_int.h says which owns what); only
# the interposed calls are exported (EXPORT), the rest is hidden.
LIBSDP_SRCS := libsdp/libsdp.c libsdp/table.c libsdp/options.c \
	libsdp/listen.c libsdp/connect.c libsdp/dup.c libsdp/wait.c

libsdp/libsdp.so: $(LIBSDP_SRCS) libsdp/libsdp_int.h $(LIBSDP_DEPS)
	$(CC) $(LIBSDP_CFLAGS) -fPIC -fvisibility=hidden -shared \
		$(LDFLAGS) -Wl,-z,defs -Wl,-soname,libsdp.so -o $@ $(LIBSDP_SRCS) \
		libsdp/rules.c -ldl -lpthread

# sdp_run looks for libsdp.so beside itself, then relative to itself
# (../lib/<multiarch>, ../lib64, ../lib: wherever PREFIX put both), then
# in LIBDIR as it was when sdp_run was built.
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
libsdp/sdp_run: libsdp/sdp_run.c $(LIBSDP_DEPS)
	$(CC) $(LIBSDP_CFLAGS) -DLIBSDP_LIBDIR='"$(LIBDIR)"' \
		-DLIBSDP_MULTIARCH='"$(MULTIARCH)"' $(LDFLAGS) -o $@ \
		libsdp/sdp_run.c libsdp/rules.c

tests/bin/sdprules: $(LIBSDP_DEPS)
tests/bin/sdprules: LDLIBS += -Ilibsdp libsdp/rules.c
tests/bin/preload: LDLIBS += -lrdmacm -lpthread
tests/bin/fallback: LDLIBS += -lrdmacm -lpthread
# The sysctls' bounds and defaults come from the module's own list.
tests/bin/tunables: src/sdp_sysctls.h

deps:
	scripts/install-deps

lint:
	scripts/lint $(KDIR)

# Copy the DOC: blocks that Documentation/ pulls with kernel-doc into it
# again, and check the sysctls' documentation (make lint checks both).
doc-sync:
	scripts/doc-sync

dkms-test:
	scripts/dkms-test

checkpatch:
	scripts/checkpatch $(KSRCS)

# deps runs first and on its own: KDIR can only be found once the kernel
# headers are installed, so the rest runs in a fresh make.  Without KDIR
# and KERNEL, every kernel scripts/find-kdir --all names is checked in
# turn (Debian 12's 6.1, then 6.12); all are run, and check fails if any
# one failed.  Before that, scripts/dkms-test builds and installs the
# module through Debian's dkms for each of them (and removes it again).
#
# Then scripts/check-packages: the .debs built, lintian, the RPMs, the
# .debs installed on this machine (DKMS for each kernel), a guest on them,
# and apt-get purge leaving nothing (INSTALL.md, "What make check changes").
# It runs even when a kernel failed; check fails if either did.  The
# project's own checks build user space with WERROR=1.
check: deps
ifeq ($(KERNEL)$(KDIR_ORIGIN),debianundefined)
	scripts/dkms-test
	$(MAKE) check-kernels WERROR=1; k=$$?; \
		$(MAKE) check-packages-run; p=$$?; \
		exit $$((k || p))
else
	$(MAKE) check-vm WERROR=1
endif

# The packages alone (root): scripts/check-packages.
check-packages: deps
	$(MAKE) check-packages-run

check-packages-run:
	scripts/check-packages

check-kernels:
	scripts/check-kernels $(MAKE) $$(scripts/find-kdir --all)

check-vm: unit lint all test-progs
	tests/vm/run --kernel-dir $(KDIR) --provider $(PROVIDER) --timeout $(VM_TIMEOUT) -- env $(SUITE_ENV) tests/run-suites $(SUITES)

# The suites on this machine, against its own RDMA device (host mode,
# tests/run_tests; TESTING.md, "On a real host"): SDP_TEST_DEVICE and
# SDP_TEST_ADDR name the device and this host's address on it,
# SDP_TEST_PEER the other host's for the wire suite (which that host
# runs at the same time).  sdp must be loaded, or SDP_TEST_LOAD=tree
# loads the tree's sdp.ko (built here) for the run, SDP_TEST_LOAD=installed
# the installed one.  Nothing boots; nothing installs packages.
check-host: tools libsdp test-progs $(if $(filter tree,$(SDP_TEST_LOAD)),module)
	SDP_TEST_DEVICE='$(SDP_TEST_DEVICE)' SDP_TEST_ADDR='$(SDP_TEST_ADDR)' \
		SDP_TEST_PEER='$(SDP_TEST_PEER)' SDP_TEST_LOAD='$(SDP_TEST_LOAD)' \
		tests/run_tests $(if $(SDP_TEST_PEER),tests/bin/wire) $(SUITES)

# make check-host inside the test guest, against its device (rxe0, or
# siw0 with PROVIDER=siw, where rdma_rxe is not loaded): what the guest
# set up for the suites is forgotten (env -u) and run_tests finds the
# device's netdev and provider itself.  The guest loads sdp as for
# check-vm; SDP_TEST_LOAD=tree boots with --no-load instead, and
# run_tests loads and unloads it (the tests that unload sdp run then).
check-host-vm: all test-progs
	tests/vm/run --kernel-dir $(KDIR) --provider $(PROVIDER) --timeout $(VM_TIMEOUT) \
		$(if $(filter tree,$(SDP_TEST_LOAD)),--no-load) -- \
		env -u SDP_TEST_IBDEV -u SDP_TEST_NETDEV -u SDP_TEST_PROVIDER $(SUITE_ENV) \
		SDP_TEST_DEVICE=$(PROVIDER)0 SDP_TEST_ADDR=10.55.0.1 \
		$(if $(filter tree,$(SDP_TEST_LOAD)),SDP_TEST_LOAD=tree) \
		tests/run_tests $(SUITES)

# The suites as make check runs them, for tests/run_tests.
print-suites:
	@echo $(SUITES)

# Two guests on a virtual wire (tests/vm/wire): the suite of tests/wire.c
# runs in both, guest a the client side, guest b the server side.
check-wire: deps
	$(MAKE) check-wire-vm

# Each guest of check-wire, and the suite in it, is bounded by
# WIRE_TIMEOUT seconds.
WIRE_TIMEOUT := 2400
check-wire-vm: all test-progs
	tests/vm/wire --kernel-dir $(KDIR) --provider $(PROVIDER) --timeout $(WIRE_TIMEOUT) -- \
		env $(SUITE_ENV) SDP_TEST_TIMEOUT=600 SUITE_TIMEOUT=$(WIRE_TIMEOUT) \
		tests/run-suites tests/bin/wire

# The wire suite as between two real hosts (tests/run_tests with
# SDP_TEST_PEER in each guest of check-wire): no shared directory (the
# guests meet on b's board), the roles found from the two addresses.
check-host-wire-vm: all test-progs
	tests/vm/wire --kernel-dir $(KDIR) --provider $(PROVIDER) --timeout $(WIRE_TIMEOUT) -- \
		env -u SDP_WIRE_SHARE -u SDP_WIRE_ROLE -u SDP_TEST_IBDEV \
		-u SDP_TEST_NETDEV -u SDP_TEST_PROVIDER $(SUITE_ENV) \
		SDP_TEST_DEVICE=$(PROVIDER)0 tests/run_tests tests/bin/wire

# The stress suite and the hostile-peer fuzzer alone and longer
# (tests/stress.c, tests/peerfuzz.c; check runs them short).
# STRESS_SECONDS bounds the storm and the fuzzer's sessions each;
# SDP_STRESS_SEED replays a storm, SDP_FUZZ_SEED the fuzzer's sessions.
STRESS_SECONDS ?= 300
stress: deps
	$(MAKE) stress-vm

stress-vm: all test-progs
	tests/vm/run --kernel-dir $(KDIR) --provider $(PROVIDER) --timeout $(VM_TIMEOUT) -- env $(SUITE_ENV) \
		SDP_STRESS_SECONDS=$(STRESS_SECONDS) SDP_FUZZ_SECONDS=$(STRESS_SECONDS) \
		$(if $(SDP_STRESS_SEED),SDP_STRESS_SEED=$(SDP_STRESS_SEED)) \
		$(if $(SDP_FUZZ_SEED),SDP_FUZZ_SEED=$(SDP_FUZZ_SEED)) \
		tests/run-suites tests/bin/stress tests/bin/peerfuzz

demo: deps
	$(MAKE) demo-vm

demo-vm: all test-progs
	tests/vm/run --kernel-dir $(KDIR) -- scripts/demo

# The benchmarks' guest runs its two vCPUs in parallel, each on a host
# thread of its own (QEMU's MTTCG), as every figure in
# sdp-performance.rst was measured; the suites' guest runs them in turn
# on one thread, which QEMU's MTTCG bug with code the kernel rewrites
# (tests/vm/run --tcg-thread) cannot reach.
BENCH_VM := tests/vm/run --tcg-thread multi

# A benchmark, not a test: prints a table (scripts/bench).
bench: deps
	$(MAKE) bench-vm

bench-vm: all test-progs
	$(BENCH_VM) --kernel-dir $(KDIR) -- scripts/bench

# Every message size, 1 B to 4 MiB: SDP's two paths, TCP, rsockets and
# the verbs under them (scripts/bench-sweep in the guest), then drawn as
# PNG pictures beside the tables in bench-results/ (scripts/bench-plot).
bench-sweep: deps
	$(MAKE) bench-sweep-vm

bench-sweep-vm: all test-progs
	$(call bench_plotted,bench-sweep,sweep)

# Run scripts/$(1) in the guest into bench-results/$(2).out, print it,
# and draw it there (scripts/bench-plot).
# A sweep's round takes about 23 minutes in this guest (6.12): three need
# more than a suite run's bound.
BENCH_TIMEOUT := 7200
define bench_plotted
	@mkdir -p bench-results
	$(BENCH_VM) --kernel-dir $(KDIR) --timeout $(BENCH_TIMEOUT) -- scripts/$(1) > bench-results/$(2).out || \
		{ cat bench-results/$(2).out; exit 1; }
	cat bench-results/$(2).out
	scripts/bench-plot bench-results/$(2).out bench-results
endef

# Many connections: idle memory, connection rate, 64 streams
# (scripts/bench-scale).
bench-scale: deps
	$(MAKE) bench-scale-vm

bench-scale-vm: all test-progs
	$(BENCH_VM) --kernel-dir $(KDIR) -- scripts/bench-scale

# SDP vs TCP between the two guests of check-wire (scripts/bench-wire).
bench-wire: deps
	$(MAKE) bench-wire-vm

bench-wire-vm: all test-progs
	tests/vm/wire --kernel-dir $(KDIR) -- scripts/bench-wire

# The verbs-relative targets as back-to-back pairs (scripts/bench-pairs).
bench-pairs: deps
	$(MAKE) bench-pairs-vm

bench-pairs-vm: all test-progs
	$(BENCH_VM) --kernel-dir $(KDIR) -- scripts/bench-pairs

# Latency distributions and the socket-call floor (scripts/bench-latency).
bench-latency: deps
	$(MAKE) bench-latency-vm

bench-latency-vm: all test-progs
	$(call bench_plotted,bench-latency,latency)

# One round trip's timeline: the threads it crosses and each hop's cost
# (scripts/trace-pingpong in the guest, scripts/trace-timeline here).
trace-pingpong: deps
	$(MAKE) trace-pingpong-vm

trace-pingpong-vm: all test-progs
	$(BENCH_VM) --kernel-dir $(KDIR) -- scripts/trace-pingpong > trace-pingpong.out
	scripts/trace-timeline trace-pingpong.out

# Installation.
#   install         install-module + install-files (+ depmod)
#   install-module  sdp.ko through kbuild's modules_install, into
#                   /lib/modules/<release>/extra (INSTALL_MOD_DIR): so
#                   compression (CONFIG_MODULE_COMPRESS_*) and, on a kernel
#                   built with CONFIG_MODULE_SIG_ALL, signing work as for
#                   every module; DESTDIR becomes INSTALL_MOD_PATH.  With
#                   SIGN_KEY=key.pem SIGN_CERT=cert.der (a MOK, INSTALL.md)
#                   the installed sdp.ko is signed with them (the kernel's
#                   scripts/sign-file).
#   install-files   user space only, no sdp.ko (beside a DKMS-built one):
#                   sdpstat, libsdp.so, sdp_run, the uapi headers, man
#                   pages, /etc/libsdp.conf and /etc/sysctl.d/60-sdp.conf
#                   (unless they exist), the udev rule, the docs
#   install-headers the uapi headers alone (the sdp-dev package)
#   dkms-src        the module's source as DKMS wants it, in
#                   /usr/src/sdp-<version> (then: dkms install sdp/<version>)
# DESTDIR, PREFIX (default /usr/local), LIBDIR, UDEVDIR, SYSCONFDIR are
# honoured; with DESTDIR, depmod is left to whoever installs the staged tree.
KREL = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"$$/\1/p' \
	$(KDIR)/include/generated/utsrelease.h)
MODDIR = /lib/modules/$(KREL)/extra
SBINDIR = $(PREFIX)/sbin
BINDIR = $(PREFIX)/bin
LIBDIR = $(PREFIX)/lib
INCDIR = $(PREFIX)/include
MANDIR = $(PREFIX)/share/man
DOCDIR = $(PREFIX)/share/doc/sdp
SYSCONFDIR = /etc
# udev's own directory for PREFIX=/usr (/lib/udev on Debian 12), else
# PREFIX's (udev reads /usr/local/lib/udev/rules.d too).
UDEVDIR = $(if $(filter /usr,$(PREFIX)),$(or $(shell pkg-config --variable=udevdir udev 2>/dev/null),/lib/udev),$(PREFIX)/lib/udev)
UAPI_HEADERS := $(wildcard include/uapi/linux/*.h)
MANPAGES := $(wildcard man/*.[1-8])
PRELOAD_LIBS = $(wildcard libsdp/libsdp.so libsdp/libsdp.so.*)
PRELOAD_BINS = $(wildcard libsdp/sdp_run tools/sdp_run)
DOCS := Documentation/networking/sdp.rst etc/modprobe.d/sdp.conf
# What DKMS builds from: Kbuild and its sources, nothing else.
DKMS_FILES = Kbuild VERSION dkms.conf scripts/dkms-check scripts/ofed-dir \
	$(wildcard src/*.c src/*.h) $(wildcard include/uapi/linux/*.h include/*/*.h)
DKMS_DIR = /usr/src/sdp-$(SDP_VERSION)

install: module tools libsdp
	$(MAKE) install-module install-files

install-module:
	@test -f sdp.ko || { echo "install: build first (make)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install INSTALL_MOD_DIR=extra \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR) DEPMOD=true)
	@if [ -n "$(SIGN_KEY)" ]; then \
		ko=$$(ls $(DESTDIR)$(MODDIR)/sdp.ko* | head -n 1); \
		case $$ko in *.ko) ;; *) echo "install: $$ko is compressed; sign before compressing" >&2; exit 1 ;; esac; \
		echo "  SIGN    $$ko"; \
		$(KDIR)/scripts/sign-file sha256 "$(SIGN_KEY)" "$(SIGN_CERT)" "$$ko" || exit 1; \
		if [ -z "$(DESTDIR)" ]; then depmod -a $(KREL); fi; \
	fi
	@if [ -n "$(DESTDIR)" ]; then echo "install: DESTDIR set, depmod $(KREL) left to the target system"; fi

install-headers:
	for h in $(UAPI_HEADERS); do \
		install -D -m 644 $$h $(DESTDIR)$(INCDIR)/linux/$${h##*/} || exit 1; \
	done

install-files: install-headers
	@test -f tools/bin/sdpstat || { echo "install: build first (make)" >&2; exit 1; }
	install -D -m 755 tools/bin/sdpstat $(DESTDIR)$(SBINDIR)/sdpstat
	for f in $(PRELOAD_LIBS); do \
		install -D -m 644 $$f $(DESTDIR)$(LIBDIR)/$${f##*/} || exit 1; \
	done
	for f in $(PRELOAD_BINS); do \
		install -D -m 755 $$f $(DESTDIR)$(BINDIR)/$${f##*/} || exit 1; \
	done
	for m in $(MANPAGES); do \
		install -D -m 644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/} || exit 1; \
	done
	install -D -m 644 etc/udev/60-sdp.rules $(DESTDIR)$(UDEVDIR)/rules.d/60-sdp.rules
	install -D -m 644 Documentation/networking/sdp.rst $(DESTDIR)$(DOCDIR)/sdp.rst
	install -D -m 644 etc/modprobe.d/sdp.conf $(DESTDIR)$(DOCDIR)/examples/modprobe.d/sdp.conf
	install -d $(DESTDIR)$(DOCDIR)/examples/systemd
	sed 's|@LIBDIR@|$(LIBDIR)|' etc/systemd/sdp-service.conf \
		> $(DESTDIR)$(DOCDIR)/examples/systemd/sdp-service.conf
	if [ ! -e $(DESTDIR)$(SYSCONFDIR)/sysctl.d/60-sdp.conf ]; then \
		install -D -m 644 etc/sysctl.d/60-sdp.conf $(DESTDIR)$(SYSCONFDIR)/sysctl.d/60-sdp.conf; fi
	if [ -n "$(PRELOAD_LIBS)" ] && [ ! -e $(DESTDIR)$(SYSCONFDIR)/libsdp.conf ]; then \
		install -D -m 644 libsdp/libsdp.conf $(DESTDIR)$(SYSCONFDIR)/libsdp.conf; fi

dkms-src:
	for f in $(DKMS_FILES); do \
		install -D -m 644 $$f $(DESTDIR)$(DKMS_DIR)/$$f || exit 1; \
	done
	chmod 755 $(DESTDIR)$(DKMS_DIR)/scripts/*
	sed -i 's/#MODULE_VERSION#/$(SDP_VERSION)/' $(DESTDIR)$(DKMS_DIR)/dkms.conf

# Release tarball: the files git tracks (as in the work tree), under
# sdp-<version>/, with sdp.spec made from sdp.spec.in; the .debs and the
# RPMs start from it (make debs, make rpm; scripts/check-packages).
DIST := sdp-$(SDP_VERSION)
DIST_TAR := dist/$(DIST).tar.gz

dist:
	@git rev-parse --git-dir >/dev/null 2>&1 || { echo "dist: needs the git tree" >&2; exit 1; }
	rm -rf dist/$(DIST) $(DIST_TAR)
	mkdir -p dist/$(DIST)
	git ls-files -z | xargs -0 cp -a --parents -t dist/$(DIST)
	sed 's/@VERSION@/$(SDP_VERSION)/' sdp.spec.in > dist/$(DIST)/sdp.spec
	tar -C dist --sort=name --owner=0 --group=0 --numeric-owner \
		--mtime=@$$(git log -1 --format=%ct) -czf $(DIST_TAR) $(DIST)
	rm -rf dist/$(DIST)
	@echo "dist: $(DIST_TAR)"

# The .debs (source and binary, unsigned) from the tarball, in dist/deb
# (make deb is the same).
deb: debs
debs: dist
	rm -rf dist/deb && mkdir -p dist/deb
	cp $(DIST_TAR) dist/deb/sdp_$(SDP_VERSION).orig.tar.gz
	tar -C dist/deb -xzf $(DIST_TAR)
	cd dist/deb/$(DIST) && dpkg-buildpackage -us -uc
	@ls dist/deb/*.deb

# The RPMs, in dist/rpm.  Debian's rpm has no database of the build
# dependencies (gcc, make): --nodeps there.
RPMBUILD_FLAGS := $(if $(wildcard /etc/debian_version),--nodeps --define 'debug_package %{nil}')
rpm: dist
	rm -rf dist/rpm && mkdir -p dist/rpm/SOURCES
	cp $(DIST_TAR) dist/rpm/SOURCES/
	tar -xzOf $(DIST_TAR) $(DIST)/sdp.spec > dist/rpm/sdp.spec
	rpmbuild -ba $(RPMBUILD_FLAGS) --define "_topdir $(CURDIR)/dist/rpm" dist/rpm/sdp.spec
	@find dist/rpm/RPMS dist/rpm/SRPMS -name '*.rpm'

uninstall:
	rm -f $(DESTDIR)$(MODDIR)/sdp.ko $(DESTDIR)$(MODDIR)/sdp.ko.*
	rm -f $(addprefix $(DESTDIR)$(INCDIR)/linux/,$(notdir $(UAPI_HEADERS)))
	rm -f $(DESTDIR)$(SBINDIR)/sdpstat
	rm -f $(DESTDIR)$(LIBDIR)/libsdp.so $(DESTDIR)$(LIBDIR)/libsdp.so.*
	rm -f $(DESTDIR)$(BINDIR)/sdp_run
	for m in $(MANPAGES) $(wildcard man/libsdp*); do \
		rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}; \
	done
	rm -f $(DESTDIR)$(UDEVDIR)/rules.d/60-sdp.rules
	rm -f $(DESTDIR)$(DOCDIR)/sdp.rst $(DESTDIR)$(DOCDIR)/examples/modprobe.d/sdp.conf \
		$(DESTDIR)$(DOCDIR)/examples/systemd/sdp-service.conf
	if cmp -s libsdp/libsdp.conf $(DESTDIR)$(SYSCONFDIR)/libsdp.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/libsdp.conf; fi
	if cmp -s etc/sysctl.d/60-sdp.conf $(DESTDIR)$(SYSCONFDIR)/sysctl.d/60-sdp.conf; then \
		rm -f $(DESTDIR)$(SYSCONFDIR)/sysctl.d/60-sdp.conf; fi
	-rmdir $(DESTDIR)$(DOCDIR)/examples/modprobe.d $(DESTDIR)$(DOCDIR)/examples/systemd \
		$(DESTDIR)$(DOCDIR)/examples $(DESTDIR)$(DOCDIR) $(DESTDIR)$(MODDIR) 2>/dev/null
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KREL); fi

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf tests/bin examples/bin tools/bin bench/bin libsdp/libsdp.so \
		libsdp/sdp_run dist
