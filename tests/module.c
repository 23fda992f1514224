// SPDX-License-Identifier: GPL-2.0
/*
 * The module's lifecycle: autoloading through socket(), unloading refused
 * while sockets exist and allowed after, and the "family" parameter.
 *
 * Runs as root in the test guest, where sdp.ko is installed under
 * /lib/modules/<release>/extra and $SDP_KO names it.  Every test leaves
 * the module loaded with default parameters.  Every test unloads sdp: on
 * a real host (host mode) they run only when tests/run_tests loaded it
 * for the run (test_need_own_module()).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "tap.h"
#include "util.h"

#define UNLOAD_WAIT_MS 5000

static void restore(void)
{
	CHECK_OK(sdp_ensure_loaded());
}

/*
 * Is the sdp.ko that modprobe finds (and so an autoload loads) $SDP_KO,
 * the module under test?  On a real host it may be another one, or none.
 */
static bool modprobe_finds_sdp_ko(void)
{
	char found[PATH_MAX] = "", a[PATH_MAX], b[PATH_MAX];
	FILE *f = popen("modinfo -n sdp 2>/dev/null", "re");

	if (!f)
		return false;
	if (!fgets(found, sizeof(found), f))
		found[0] = '\0';
	pclose(f);
	found[strcspn(found, "\n")] = '\0';
	return realpath(found, a) && realpath(env_or("SDP_KO", "sdp.ko"), b) &&
	       !strcmp(a, b);
}

/* socket(AF_INET_SDP, ...) loads the module through its net-pf-27 alias. */
static void test_autoload_on_socket(void)
{
	int fd;

	test_need_own_module();
	if (test_host_mode() && !modprobe_finds_sdp_ko())
		tap_skip("host mode: modprobe would load another sdp.ko than %s",
			 env_or("SDP_KO", "sdp.ko"));
	CHECK_OK(sdp_unload(UNLOAD_WAIT_MS));
	CHECK(!sdp_loaded(), "still loaded after unload");
	fd = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK(sdp_loaded(), "socket() did not load the module");
	close(fd);
	restore();
}

static void test_unload_refused_while_socket_open(void)
{
	int fd, ret;

	test_need_own_module();
	restore();
	fd = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK(sdp_refcnt() >= 1, "refcnt %d with a socket open", sdp_refcnt());
	ret = sdp_unload(0);
	CHECK(ret == -EWOULDBLOCK, "unload with an open socket: %s",
	      ret ? strerror(-ret) : "succeeded");
	CHECK(sdp_loaded(), "module gone while a socket is open");
	/* The socket still works after the refused unload. */
	CHECK(fcntl(fd, F_GETFD) >= 0, "fd");
	close(fd);
	CHECK_OK(sdp_unload(UNLOAD_WAIT_MS));
	CHECK(!sdp_loaded(), "module still loaded after the last close");
	restore();
}

/* A dup()ed descriptor keeps the socket, and so the module, alive. */
static void test_unload_refused_while_dup_open(void)
{
	int fd, fd2;

	test_need_own_module();
	restore();
	fd = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	fd2 = CHECK_OK(dup(fd));
	close(fd);
	CHECK(sdp_unload(0) == -EWOULDBLOCK, "unload with a dup open");
	close(fd2);
	CHECK_OK(sdp_unload(UNLOAD_WAIT_MS));
	restore();
}

/* A socket inherited by a child process counts until both close it. */
static void test_unload_refused_while_child_holds_socket(void)
{
	int fd, pipefd[2], status;
	char c;
	pid_t pid;

	test_need_own_module();
	restore();
	fd = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK_OK(pipe(pipefd));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		close(pipefd[1]);
		/* Hold the socket until the parent closes the pipe. */
		(void)!read(pipefd[0], &c, 1);
		_exit(0);
	}
	close(pipefd[0]);
	close(fd);
	CHECK(sdp_unload(0) == -EWOULDBLOCK, "unload while the child holds it");
	close(pipefd[1]);
	CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
	CHECK_OK(sdp_unload(UNLOAD_WAIT_MS));
	restore();
}

/*
 * Loading under a family that another protocol owns fails clearly, also
 * when that protocol's sock_diag handler is there (inet_diag, which ss(8)
 * loads, has family 2's).
 */
static void test_family_taken_refused(void)
{
	int kmsg, ret;

	test_need_own_module();
	CHECK(system("modprobe -q inet_diag") == 0, "cannot load inet_diag");
	CHECK_OK(sdp_unload(UNLOAD_WAIT_MS));
	kmsg = kmsg_open();
	CHECK(kmsg >= 0, "/dev/kmsg: %s", strerror(errno));
	ret = sdp_load("family=2");	/* AF_INET */
	CHECK(ret == -EEXIST, "load with family=2: %s",
	      ret ? strerror(-ret) : "succeeded");
	CHECK(!sdp_loaded(), "loaded although the family is taken");
	CHECK(kmsg_find(kmsg, "address family 2 is already registered"),
	      "no clear message in the kernel log");
	close(kmsg);
	restore();
}

static void test_family_out_of_range_refused(void)
{
	static const char *const bad[] = { "family=0", "family=-1",
					   "family=46", "family=1000" };
	size_t i;

	test_need_own_module();
	CHECK_OK(sdp_unload(UNLOAD_WAIT_MS));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = sdp_load(bad[i]);

		CHECK(ret == -EINVAL, "%s: %s", bad[i],
		      ret ? strerror(-ret) : "succeeded");
	}
	restore();
}

/*
 * Another free family works: the socket family follows the parameter, and
 * 27 is then not SDP.  Family 25 (AF_WANPIPE) has no implementation in
 * Linux; the test checks that it is free first.
 */
static void test_family_parameter(void)
{
	const int fam = 25;
	socklen_t len = sizeof(int);
	int fd, dom = -1;

	test_need_own_module();
	CHECK_OK(sdp_unload(UNLOAD_WAIT_MS));
	if (socket(fam, SOCK_STREAM, 0) >= 0 || errno != EAFNOSUPPORT)
		tap_skip("family %d is in use on this kernel", fam);
	CHECK_OK(sdp_load("family=25"));
	fd = CHECK_OK(socket(fam, SOCK_STREAM, 0));
	CHECK_OK(getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len));
	CHECK(dom == fam, "SO_DOMAIN %d", dom);
	CHECK_ERRNO(socket(AF_INET_SDP, SOCK_STREAM, 0), EAFNOSUPPORT);
	close(fd);
	CHECK_OK(sdp_unload(UNLOAD_WAIT_MS));
	restore();
	fd = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	close(fd);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_autoload_on_socket),
	TAP_TEST(test_unload_refused_while_socket_open),
	TAP_TEST(test_unload_refused_while_dup_open),
	TAP_TEST(test_unload_refused_while_child_holds_socket),
	TAP_TEST(test_family_taken_refused),
	TAP_TEST(test_family_out_of_range_refused),
	TAP_TEST(test_family_parameter),
};

TAP_MAIN(tests)
