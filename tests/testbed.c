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
 * packets are not counted here: rping's success is the check.  And the
 * guest survives the kernel rewriting its own code while both CPUs run
 * it, which QEMU's multi-threaded TCG does not guarantee.
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net.h"
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

/* One of two processes that wake each other through pipes, forever. */
static pid_t waker(int in, int out, bool first, unsigned long *count)
{
	pid_t pid = fork();
	char b = 0;

	if (pid)
		return pid;
	if (first && write(out, &b, 1) != 1)
		_exit(1);
	for (;;) {
		if (read(in, &b, 1) != 1)
			_exit(1);
		__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
		if (write(out, &b, 1) != 1)
			_exit(1);
	}
}

#define PATCH_MS		30000
#define PATCH_MIN_ROUNDS	10

/*
 * The kernel rewrites its own code whenever a tracepoint or a static key
 * changes (text_poke_bp(): an int3 over the site, an IPI to every CPU,
 * the new bytes, IPIs again), and the suites change both: diag's
 * tracepoints, and the static keys that a cgroup BPF program, a
 * timestamping socket or a netfilter rule switch on.  QEMU's
 * multi-threaded TCG can go on running one vCPU's old translation of
 * code that another vCPU rewrote (QEMU issue 4669): the vCPU meets an
 * int3 that the kernel no longer claims, and the guest dies with
 * "Oops: int3" in whatever it was doing.  So the bed runs its vCPUs on
 * one QEMU thread (tests/vm/run --tcg-thread), and this test keeps it
 * that way: for PATCH_MS it switches the scheduler's two tracepoints on
 * and off, whose sites (try_to_wake_up(), __schedule()) both CPUs run
 * all the time, while two processes wake each other through pipes.
 * With MTTCG the guest died within 2 s of this; with one thread, a
 * round of four switches takes about 0.5 s (each waits for the other
 * vCPU's turn, and for an RCU grace period).
 */
static void test_kernel_text_patching(void)
{
	static const char *const events[] = { "sched_wakeup", "sched_switch" };
	unsigned long *wakeups;
	char root[64], path[2][160];
	int a[2], b[2], i = 0, e, st;
	long long end = now_ms() + PATCH_MS;
	pid_t pid[2];

	TAP_SKIP_IF_HOST("it switches the host's scheduler tracepoints");
	if (!tracefs_root(root, sizeof(root)))
		tap_skip("no tracefs");
	for (e = 0; e < 2; e++)
		snprintf(path[e], sizeof(path[e]), "%s/events/sched/%s/enable",
			 root, events[e]);
	wakeups = mmap(NULL, sizeof(*wakeups), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	CHECK(wakeups != MAP_FAILED, "mmap: %s", strerror(errno));
	CHECK_OK(pipe(a));
	CHECK_OK(pipe(b));
	pid[0] = waker(a[0], b[1], true, wakeups);
	pid[1] = waker(b[0], a[1], false, wakeups);
	CHECK(pid[0] > 0 && pid[1] > 0, "fork: %s", strerror(errno));

	for (; now_ms() < end; i++)
		for (e = 0; e < 2; e++)
			CHECK(!write_file(path[e], "1") &&
			      !write_file(path[e], "0"),
			      "switching %s: %s", path[e], strerror(errno));
	for (e = 0; e < 2; e++) {
		kill(pid[e], SIGKILL);
		CHECK(waitpid(pid[e], &st, 0) == pid[e] && WIFSIGNALED(st),
		      "waker %d ended by itself (status %#x)", e, st);
	}
	tap_diag("%d rounds, %d tracepoint switches, %lu wakeups", i, 4 * i,
		 __atomic_load_n(wakeups, __ATOMIC_RELAXED));
	CHECK(i >= PATCH_MIN_ROUNDS, "%d rounds in %d ms, fewer than %d", i,
	      PATCH_MS, PATCH_MIN_ROUNDS);
	CHECK(*wakeups >= PATCH_MIN_ROUNDS,
	      "%lu wakeups: the wakers did not run beside the patching",
	      *wakeups);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	munmap(wakeups, sizeof(*wakeups));
}

static const struct tap_test tests[] = {
	TAP_TEST(test_port_active),
	TAP_TEST(test_rping_over_rdma_cm),
	TAP_TEST(test_kernel_text_patching),
};

TAP_MAIN(tests)
