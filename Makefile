# SPDX-License-Identifier: GPL-2.0
#
# SDP for Linux -- top-level Makefile.  The module itself is described in
# Kbuild; this file drives kbuild, the tests and the test guest.
#
#   make               build sdp.ko (against KDIR) and the test programs
#   make check         install what is missing, lint, run every suite in a
#                      QEMU guest with Soft-RoCE (KERNEL=debug: on a debug
#                      kernel with KASAN, lockdep, kmemleak, UBSAN)
#   make demo          boot the guest and show an echo over SDP
#   make bench         SDP vs TCP vs verbs latency and bandwidth table
#   make lint          W=1 build, sparse and checkpatch, failing on any
#                      warning
#   make checkpatch    checkpatch.pl --strict over the sources

KERNEL ?= debian
# The debug kernel is ~30x slower again: smaller transfers there.
ifeq ($(KERNEL),debug)
SUITE_ENV := SDP_TEST_BYTES=8M SDP_TEST_TIMEOUT=600
endif

ifeq ($(origin KDIR),undefined)
ifeq ($(KERNEL),debug)
KDIR := $(shell scripts/debug-kernel)/linux-source-6.1
else
KDIR := $(shell scripts/find-kdir)
endif
endif

TEST_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE \
	-Iinclude/uapi -Itests/lib
TEST_LIB := $(wildcard tests/lib/*.c)
TEST_SRCS := $(wildcard tests/*.c)
TEST_BINS := $(patsubst tests/%.c,tests/bin/%,$(TEST_SRCS))
# Suites in the order they run: the test bed first, so that a broken
# guest is told apart from a broken module.
SUITES := tests/bin/testbed tests/bin/socket tests/bin/module tests/bin/stream \
	tests/bin/peer tests/bin/rdma tests/bin/sdprules tests/bin/preload \
	tests/preload-tools
KSRCS := $(wildcard src/*.c src/*.h) include/uapi/linux/sdp.h

.PHONY: all module tests examples libsdp install-libsdp check check-vm demo demo-vm bench bench-vm \
	lint checkpatch deps clean

all: module tests examples libsdp

examples: examples/bin/sdp_hello

examples/bin/%: examples/%.c include/uapi/linux/sdp.h
	@mkdir -p examples/bin
	$(CC) $(TEST_CFLAGS) -o $@ $<

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tests: $(TEST_BINS)

tests/bin/%: tests/%.c $(TEST_LIB) $(wildcard tests/lib/*.h) include/uapi/linux/sdp.h
	@mkdir -p tests/bin
	$(CC) $(TEST_CFLAGS) -o $@ $< $(TEST_LIB) $(LDLIBS)

# The misbehaving-peer suite speaks SDP from user space with verbs.
tests/bin/peer: LDLIBS += -lrdmacm -libverbs

# libsdp: the LD_PRELOAD library, sdp_run, their man pages (libsdp/,
# man/); the rules parser is shared with sdp_run and tests/sdprules.c.
PREFIX ?= /usr/local
LIBSDP_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE \
	-Iinclude/uapi -Ilibsdp
LIBSDP_DEPS := libsdp/rules.c libsdp/rules.h include/uapi/linux/sdp.h

libsdp: libsdp/libsdp.so libsdp/sdp_run

libsdp/libsdp.so: libsdp/libsdp.c $(LIBSDP_DEPS)
	$(CC) $(LIBSDP_CFLAGS) -fPIC -fvisibility=hidden -shared \
		-Wl,-z,defs -Wl,-soname,libsdp.so -o $@ libsdp/libsdp.c \
		libsdp/rules.c -ldl -lpthread

libsdp/sdp_run: libsdp/sdp_run.c $(LIBSDP_DEPS)
	$(CC) $(LIBSDP_CFLAGS) -DLIBSDP_LIBDIR='"$(PREFIX)/lib"' -o $@ \
		libsdp/sdp_run.c libsdp/rules.c

tests/bin/sdprules: $(LIBSDP_DEPS)
tests/bin/sdprules: LDLIBS += -Ilibsdp libsdp/rules.c
tests/bin/preload: LDLIBS += -lrdmacm -lpthread

install-libsdp: libsdp
	install -D -m 755 libsdp/libsdp.so $(DESTDIR)$(PREFIX)/lib/libsdp.so
	install -D -m 755 libsdp/sdp_run $(DESTDIR)$(PREFIX)/bin/sdp_run
	install -D -m 644 man/libsdp.7 $(DESTDIR)$(PREFIX)/share/man/man7/libsdp.7
	install -D -m 644 man/sdp_run.8 $(DESTDIR)$(PREFIX)/share/man/man8/sdp_run.8
	install -D -m 644 man/libsdp.conf.5 $(DESTDIR)$(PREFIX)/share/man/man5/libsdp.conf.5
	[ -e $(DESTDIR)/etc/libsdp.conf ] || \
		install -D -m 644 libsdp/libsdp.conf $(DESTDIR)/etc/libsdp.conf

deps:
	scripts/install-deps

lint:
	scripts/lint $(KDIR)

checkpatch:
	scripts/checkpatch $(KSRCS)

# deps runs first and on its own: KDIR can only be found once the kernel
# headers are installed, so the rest runs in a fresh make.
check: deps
	$(MAKE) check-vm

check-vm: lint all
	tests/vm/run --kernel-dir $(KDIR) -- env $(SUITE_ENV) tests/run-suites $(SUITES)

demo: deps
	$(MAKE) demo-vm

demo-vm: all
	tests/vm/run --kernel-dir $(KDIR) -- scripts/demo

# A benchmark, not a test: prints a table (scripts/bench).
bench: deps
	$(MAKE) bench-vm

bench-vm: all
	tests/vm/run --kernel-dir $(KDIR) -- scripts/bench

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf tests/bin examples/bin libsdp/libsdp.so libsdp/sdp_run
