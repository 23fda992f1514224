/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small TAP (Test Anything Protocol) helper for the SDP test suites.
 *
 * A suite is a list of test functions:
 *
 *	static void test_foo(void)
 *	{
 *		int fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
 *
 *		CHECK(fd >= 0, "socket: %s", strerror(errno));
 *		CHECK_ERRNO(bind(fd, NULL, 0), EINVAL);
 *		close(fd);
 *	}
 *
 *	static const struct tap_test tests[] = {
 *		TAP_TEST(test_foo),
 *	};
 *	TAP_MAIN(tests)
 *
 * Each test runs in a forked child with an alarm (TAP_TIMEOUT seconds,
 * default 60, or the SDP_TEST_TIMEOUT environment variable), so a crash,
 * a hang or a failed CHECK ends only that test.  The sysctls a test may
 * change (net.sdp.*, net.ipv4.ip_unprivileged_port_start,
 * ip_local_port_range, tcp_orphan_retries, tcp_syn_retries,
 * net.core.message_burst) are put back after each test, however it ended.  The first failed CHECK
 * prints a diagnostic ("# file:line: ...") and fails the test; tap_skip()
 * skips it with a reason, which ends the test's line.  The output is TAP
 * version 13:
 *
 *	TAP version 13
 *	1..3
 *	ok 1 - test_foo
 *	not ok 2 - test_bar
 *	ok 3 - test_baz # SKIP no IPv6 in this kernel
 *	# 1 passed, 1 failed, 1 skipped
 *
 * and the program exits 0 only if no test failed.
 */
#ifndef SDP_TAP_H
#define SDP_TAP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct tap_test {
	const char *name;
	void (*fn)(void);
};

#define TAP_TEST(f) { #f, f }

/* Fail the running test with a formatted message; does not return. */
void tap_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
/* Skip the running test; does not return. */
void tap_skip(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
/* Print a "# " diagnostic line. */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tap_main(const struct tap_test *tests, size_t n, int argc, char **argv);
/* Report every test skipped, for @why (the suite cannot run here). */
int tap_skip_all(const struct tap_test *tests, size_t n, const char *why);
/* The name of the running test (in its child), "" outside of one. */
const char *tap_test_name(void);

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond))						\
			tap_fail(__FILE__, __LINE__, "CHECK(" #cond ") "	\
				 __VA_ARGS__);				\
	} while (0)

/* expr must fail (return -1) with errno == err. */
#define CHECK_ERRNO(expr, err)						\
	do {								\
		errno = 0;						\
		long __r = (long)(expr);				\
		int __e = errno;					\
		if (__r != -1 || __e != (err))				\
			tap_fail(__FILE__, __LINE__,			\
				 "%s: expected -1/%s, got %ld/%s", #expr,	\
				 strerrorname_np(err), __r,		\
				 __e ? strerrorname_np(__e) : "0");	\
	} while (0)

/* expr must succeed (return >= 0). */
#define CHECK_OK(expr)							\
	({								\
		errno = 0;						\
		long __r = (long)(expr);				\
		if (__r < 0)						\
			tap_fail(__FILE__, __LINE__, "%s: %s", #expr,	\
				 strerror(errno));			\
		__r;							\
	})

#define TAP_MAIN(tests)							\
	int main(int argc, char **argv)					\
	{								\
		return tap_main(tests, sizeof(tests) / sizeof(tests[0]),	\
				argc, argv);				\
	}

#endif /* SDP_TAP_H */
