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
	tests/bin/peer tests/bin/rdma
KSRCS := $(wildcard src/*.c src/*.h include/uapi/linux/*.h)

.PHONY: all module tests examples check check-vm demo demo-vm bench bench-vm \
	lint checkpatch deps clean

all: module tests examples

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
	rm -rf tests/bin examples/bin
