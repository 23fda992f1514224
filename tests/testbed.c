// SPDX-License-Identifier: GPL-2.0
/*
 * Test-bed sanity: Soft-RoCE works in this guest without SDP, so that a
 * broken test bed is told apart from a broken module.  Uses rping (from
 * rdmacm-utils), which connects through the RDMA CM and moves data with
 * RDMA reads, writes and sends, and the rxe port counters.
 */
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "util.h"

extern char **environ;

static void port_file(char *buf, size_t size, const char *rel)
{
	snprintf(buf, size, "/sys/class/infiniband/%s/ports/1/%s", TEST_IBDEV(),
		 rel);
}

static long long port_counter(const char *name)
{
	char path[256], rel[128];

	snprintf(rel, sizeof(rel), "hw_counters/%s", name);
	port_file(path, sizeof(path), rel);
	return read_ull(path);
}

static void test_rxe_port_active(void)
{
	char path[256], buf[64];

	port_file(path, sizeof(path), "state");
	CHECK(read_file(path, buf, sizeof(buf)) == 0, "%s missing", path);
	CHECK(strstr(buf, "ACTIVE"), "port state %s", buf);
	/* MTU 4200 on the netdev gives the 4096-byte RoCE MTU. */
	port_file(path, sizeof(path), "active_mtu");
	if (read_file(path, buf, sizeof(buf)) == 0)
		CHECK(strstr(buf, "4096"), "active_mtu %s", buf);
}

/* rping server and client over rdma_cm; the port counters must move. */
static void test_rping_over_rdma_cm(void)
{
	const char *server[] = { "rping", "-s", "-a", TEST_ADDR(), "-C", "20",
				 "-S", "4096", NULL };
	const char *client[] = { "rping", "-c", "-a", TEST_ADDR(), "-C", "20",
				 "-S", "4096", NULL };
	long long sent0 = port_counter("sent_pkts");
	long long rcvd0 = port_counter("rcvd_pkts");
	int status = -1, i, ret = -1;
	pid_t srv;

	CHECK(sent0 >= 0 && rcvd0 >= 0, "no hw_counters on %s", TEST_IBDEV());
	CHECK(posix_spawnp(&srv, "rping", NULL, NULL, (char *const *)server,
			   environ) == 0, "cannot start rping");
	/* The server needs a moment to listen; retry a refused connect. */
	for (i = 0; i < 50; i++) {
		ret = run(client);
		if (ret == 0)
			break;
		usleep(100000);
	}
	CHECK(ret == 0, "rping client failed (status %d)", ret);
	CHECK(waitpid(srv, &status, 0) == srv, "waitpid");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "rping server status %#x", status);
	CHECK(port_counter("sent_pkts") > sent0 + 20, "sent_pkts did not move");
	CHECK(port_counter("rcvd_pkts") > rcvd0 + 20, "rcvd_pkts did not move");
}

static const struct tap_test tests[] = {
	TAP_TEST(test_rxe_port_active),
	TAP_TEST(test_rping_over_rdma_cm),
};

TAP_MAIN(tests)
