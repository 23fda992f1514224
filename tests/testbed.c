// SPDX-License-Identifier: GPL-2.0
/*
 * Test-bed sanity: the RDMA device (Soft-RoCE's rxe0, or soft-iWARP's
 * siw0) works in this guest without SDP, so that a broken test bed is
 * told apart from a broken module.  Uses rping (from rdmacm-utils), which
 * connects through the RDMA CM and moves data with RDMA reads, writes and
 * sends, and the packets the provider sent: rxe's port counters; siw has
 * none, and its packets are the kernel's own TCP segments (iWARP runs over
 * TCP), counted in /proc/net/snmp.  On a real host (host mode,
 * tests/run_tests) the port's MTU is the host's, and an adapter's
 * packets are not counted here: rping's success is the check.
 */
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The "Tcp:" counter @name of /proc/net/snmp, -1 if absent. */
static long long tcp_counter(const char *name)
{
	char names[1024], values[1024], *n, *v, *sn, *sv;
	long long ret = -1;
	FILE *f = fopen("/proc/net/snmp", "r");

	if (!f)
		return -1;
	while (fgets(names, sizeof(names), f) &&
	       fgets(values, sizeof(values), f)) {
		if (strncmp(names, "Tcp:", 4))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(values, " \n", &sv);
		while (n && v) {
			if (!strcmp(n, name))
				ret = atoll(v);
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
	}
	fclose(f);
	return ret;
}

/*
 * The packets the device sent (@sent) or received: rxe's port counters;
 * for siw, whose port has no counters, the TCP segments of the whole
 * guest, of which siw's are all while rping runs.  -1 for another
 * provider (a real host's adapter, in host mode): none is known here.
 */
static long long dev_packets(bool sent)
{
	if (test_provider_siw())
		return tcp_counter(sent ? "OutSegs" : "InSegs");
	if (test_provider_rxe())
		return port_hw_counter(sent ? "sent_pkts" : "rcvd_pkts");
	return -1;
}

static void test_port_active(void)
{
	char path[256], buf[64];

	port_file(path, sizeof(path), "state");
	CHECK(read_file(path, buf, sizeof(buf)) == 0, "%s missing", path);
	CHECK(strstr(buf, "ACTIVE"), "port state %s", buf);
	/*
	 * MTU 4200 on the netdev gives an active MTU of 4096 (rxe, siw).
	 * A real host's netdev has the MTU its admin gave it.
	 */
	port_file(path, sizeof(path), "active_mtu");
	if (read_file(path, buf, sizeof(buf)))
		return;
	if (test_host_mode())
		tap_diag("%s: active_mtu %s", TEST_IBDEV(), buf);
	else
		CHECK(strstr(buf, "4096"), "active_mtu %s", buf);
}

/* rping server and client over rdma_cm; the port counters must move. */
static void test_rping_over_rdma_cm(void)
{
	const char *server[] = { "rping", "-s", "-a", TEST_ADDR(), "-C", "20",
				 "-S", "4096", NULL };
	const char *client[] = { "rping", "-c", "-a", TEST_ADDR(), "-C", "20",
				 "-S", "4096", NULL };
	long long sent0 = dev_packets(true);
	long long rcvd0 = dev_packets(false);
	bool counted = test_provider_rxe() || test_provider_siw();
	int status = -1, i, ret = -1;
	pid_t srv;

	if (counted)
		CHECK(sent0 >= 0 && rcvd0 >= 0, "no packet counters for %s",
		      TEST_IBDEV());
	else
		tap_diag("%s (%s): no packet counters known here; rping alone",
			 TEST_IBDEV(), TEST_PROVIDER());
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
	if (!counted)
		return;
	CHECK(dev_packets(true) > sent0 + 20, "sent packets did not move");
	CHECK(dev_packets(false) > rcvd0 + 20, "received packets did not move");
}

static const struct tap_test tests[] = {
	TAP_TEST(test_port_active),
	TAP_TEST(test_rping_over_rdma_cm),
};

TAP_MAIN(tests)
