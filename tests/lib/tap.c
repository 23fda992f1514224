// SPDX-License-Identifier: GPL-2.0
/*
 * TAP helper for the SDP test suites; see tap.h.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

/* Exit codes of a test's child process. */
enum { TAP_CHILD_PASS = 0, TAP_CHILD_FAIL = 1, TAP_CHILD_SKIP = 77 };

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
}

void tap_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# %s:%d: ", file, line);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
	_exit(TAP_CHILD_FAIL);
}

void tap_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("# SKIP ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
	fflush(stdout);
	_exit(TAP_CHILD_SKIP);
}

static int run_one(const struct tap_test *t, unsigned int timeout)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		tap_diag("fork: %s", strerror(errno));
		return TAP_CHILD_FAIL;
	}
	if (pid == 0) {
		/* A new process group, so a test can signal its helpers. */
		setpgid(0, 0);
		alarm(timeout);
		t->fn();
		fflush(stdout);
		_exit(TAP_CHILD_PASS);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			tap_diag("waitpid: %s", strerror(errno));
			return TAP_CHILD_FAIL;
		}
	}
	/* Reap helpers the test may have left in its process group. */
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(status)) {
		if (WTERMSIG(status) == SIGALRM)
			tap_diag("%s: timed out after %u s", t->name, timeout);
		else
			tap_diag("%s: killed by signal %d", t->name,
				 WTERMSIG(status));
		return TAP_CHILD_FAIL;
	}
	return WEXITSTATUS(status);
}

int tap_main(const struct tap_test *tests, size_t n, int argc, char **argv)
{
	unsigned int timeout = 60, passed = 0, failed = 0, skipped = 0;
	const char *env = getenv("SDP_TEST_TIMEOUT");
	const char *only = argc > 1 ? argv[1] : NULL;
	size_t i;

	if (env && atoi(env) > 0)
		timeout = atoi(env);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..%zu\n", n);
	for (i = 0; i < n; i++) {
		int r;

		if (only && strcmp(only, tests[i].name)) {
			printf("ok %zu - %s # SKIP not selected\n", i + 1,
			       tests[i].name);
			skipped++;
			continue;
		}
		r = run_one(&tests[i], timeout);
		if (r == TAP_CHILD_PASS) {
			printf("ok %zu - %s\n", i + 1, tests[i].name);
			passed++;
		} else if (r == TAP_CHILD_SKIP) {
			printf("ok %zu - %s # SKIP\n", i + 1, tests[i].name);
			skipped++;
		} else {
			printf("not ok %zu - %s\n", i + 1, tests[i].name);
			failed++;
		}
	}
	printf("# %u passed, %u failed, %u skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
