// SPDX-License-Identifier: GPL-2.0
/*
 * TAP helper for the SDP test suites; see tap.h.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/*
 * The reason of a skip, which the test's child writes and the runner
 * puts on the test's line ("ok 3 - test_foo # SKIP reason"): shared
 * memory, mapped before the first test.
 */
#define TAP_WHY_MAX	256
static char *tap_why;

void tap_skip(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	if (tap_why) {
		vsnprintf(tap_why, TAP_WHY_MAX, fmt, ap);
		/* One line: the reason ends the test's TAP line. */
		for (p = tap_why; *p; p++)
			if (*p == '\n' || *p == '#')
				*p = ' ';
	} else {
		fputs("# SKIP ", stdout);
		vprintf(fmt, ap);
		fputc('\n', stdout);
	}
	va_end(ap);
	fflush(stdout);
	_exit(TAP_CHILD_SKIP);
}

/*
 * Sysctls a test may change, and the module's fault injection
 * (sdp_fault.c): the runner puts them back after every test, whether it
 * passed, failed or timed out, so that one test's settings do not leak
 * into the next.  Directories stand for every file in them.
 */
static const char *const tap_sysctls[] = {
	"/proc/sys/net/sdp",
	"/sys/kernel/debug/sdp",
	"/proc/sys/net/ipv4/ip_unprivileged_port_start",
	"/proc/sys/net/ipv4/ip_local_port_range",
	"/proc/sys/net/ipv4/tcp_orphan_retries",
	"/proc/sys/net/ipv4/tcp_syn_retries",
	"/proc/sys/net/core/message_burst",
};

#define TAP_MAX_SAVED	32

static struct {
	char path[384];
	char val[256];
	ssize_t len;
} tap_saved[TAP_MAX_SAVED];
static int tap_nsaved;

static void tap_save_one(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || tap_nsaved == TAP_MAX_SAVED) {
		if (fd >= 0)
			close(fd);
		return;
	}
	snprintf(tap_saved[tap_nsaved].path, sizeof(tap_saved[0].path), "%s",
		 path);
	tap_saved[tap_nsaved].len = read(fd, tap_saved[tap_nsaved].val,
					 sizeof(tap_saved[0].val));
	close(fd);
	if (tap_saved[tap_nsaved].len > 0)
		tap_nsaved++;
}

static void tap_save_sysctls(void)
{
	size_t i;

	tap_nsaved = 0;
	for (i = 0; i < sizeof(tap_sysctls) / sizeof(tap_sysctls[0]); i++) {
		DIR *d = opendir(tap_sysctls[i]);
		struct dirent *e;
		char path[384];

		if (!d) {
			tap_save_one(tap_sysctls[i]);
			continue;
		}
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", tap_sysctls[i],
				 e->d_name);
			tap_save_one(path);
		}
		closedir(d);
	}
}

static void tap_restore_sysctls(void)
{
	char now[256];
	int i, fd;

	for (i = 0; i < tap_nsaved; i++) {
		ssize_t n;

		fd = open(tap_saved[i].path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, now, sizeof(now));
		close(fd);
		if (n == tap_saved[i].len && !memcmp(now, tap_saved[i].val, n))
			continue;
		/* A fresh descriptor: debugfs files cannot seek (pwrite). */
		fd = open(tap_saved[i].path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, tap_saved[i].val, tap_saved[i].len) !=
			      tap_saved[i].len)
			tap_diag("could not restore %s", tap_saved[i].path);
		if (fd >= 0)
			close(fd);
	}
}

static const char *tap_running = "";

const char *tap_test_name(void)
{
	return tap_running;
}

/*
 * Name each test in the kernel's log where the module is loaded (a
 * guest, or a host running the suites), as kselftest's runner does: a
 * kernel report there, which fails the run (tests/vm/run), then says
 * which test it came during.  A fresh open each time: the kernel
 * rate-limits what one open of /dev/kmsg writes.
 */
static void tap_mark_kmsg(const char *suite, size_t i, const char *name)
{
	char line[256];
	ssize_t w;
	int fd, n;

	if (access("/sys/module/sdp", F_OK))
		return;
	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "sdp-test: %s %zu %s\n", suite, i,
		     name);
	if (n > 0 && (size_t)n < sizeof(line)) {
		w = write(fd, line, n);
		(void)w;
	}
	close(fd);
}

static int run_one(const struct tap_test *t, unsigned int timeout)
{
	int status;
	pid_t pid;

	fflush(stdout);
	tap_save_sysctls();
	pid = fork();
	if (pid < 0) {
		tap_diag("fork: %s", strerror(errno));
		return TAP_CHILD_FAIL;
	}
	if (pid == 0) {
		/* A new process group, so a test can signal its helpers. */
		setpgid(0, 0);
		tap_running = t->name;
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
	tap_restore_sysctls();
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

/* Test names on the command line select those tests only. */
static bool tap_selected(const char *name, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

int tap_main(const struct tap_test *tests, size_t n, int argc, char **argv)
{
	unsigned int timeout = 60, passed = 0, failed = 0, skipped = 0;
	const char *env = getenv("SDP_TEST_TIMEOUT");
	const char *suite = strrchr(argv[0], '/');
	size_t i;

	if (env && atoi(env) > 0)
		timeout = atoi(env);
	suite = suite ? suite + 1 : argv[0];
	setvbuf(stdout, NULL, _IOLBF, 0);
	tap_why = mmap(NULL, TAP_WHY_MAX, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tap_why == MAP_FAILED)
		tap_why = NULL;
	printf("TAP version 13\n1..%zu\n", n);
	for (i = 0; i < n; i++) {
		int r;

		if (argc > 1 && !tap_selected(tests[i].name, argc, argv)) {
			printf("ok %zu - %s # SKIP not selected\n", i + 1,
			       tests[i].name);
			skipped++;
			continue;
		}
		if (tap_why)
			tap_why[0] = '\0';
		tap_mark_kmsg(suite, i + 1, tests[i].name);
		r = run_one(&tests[i], timeout);
		if (r == TAP_CHILD_PASS) {
			printf("ok %zu - %s\n", i + 1, tests[i].name);
			passed++;
		} else if (r == TAP_CHILD_SKIP) {
			printf("ok %zu - %s # SKIP%s%.*s\n", i + 1, tests[i].name,
			       tap_why && tap_why[0] ? " " : "", TAP_WHY_MAX,
			       tap_why ? tap_why : "");
			skipped++;
		} else {
			printf("not ok %zu - %s\n", i + 1, tests[i].name);
			failed++;
		}
	}
	printf("# %u passed, %u failed, %u skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}

int tap_skip_all(const struct tap_test *tests, size_t n, const char *why)
{
	size_t i;

	printf("TAP version 13\n1..%zu\n", n);
	for (i = 0; i < n; i++)
		printf("ok %zu - %s # SKIP %s\n", i + 1, tests[i].name, why);
	printf("# 0 passed, 0 failed, %zu skipped\n", n);
	return 0;
}
