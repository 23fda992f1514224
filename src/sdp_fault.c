// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- fault injection for the test suites.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Failures the suites cannot cause otherwise without the kernel's own
 * fault injection (CONFIG_FAILSLAB and friends, which distribution
 * kernels leave out) or an out-of-memory report in the kernel log, in
 * debugfs, root only:
 *
 *   /sys/kernel/debug/sdp/fail_rx_alloc (Y/N, initially N)
 *	every receive buffer a ring grows with or takes in place of one
 *	of its old size (sdp_rx.c) fails to be allocated, as when the
 *	socket's memory cgroup is at its limit.  A connection's first
 *	buffers are not affected.
 *
 *   /sys/kernel/debug/sdp/close_delay_us (0..1000, initially 0)
 *	sdp_close_work() spins this long between looking at the state of
 *	the connection's device and deciding what to release, and a
 *	device that goes away begins to do so while one of them spins
 *	(it waits for that up to a second): the connection must still be
 *	aborted (tests/rdma.c, test_device_removal_under_traffic).
 *
 *   /sys/kernel/debug/sdp/cq_rearm_delay_us (0..20000, initially 0)
 *	the CQ's softirq handler (sdp_cq_poll()) of a connection being
 *	taken down spins this long after it let irq_poll go and before it
 *	re-arms the CQ, the moment at which the teardown, woken by the
 *	drain completion that handler just processed, may destroy the CQ:
 *	the CQ must not go from under it (tests/rdma.c,
 *	test_teardown_races_cq_poll).
 *
 *   /sys/kernel/debug/sdp/release_delay_ms (0..5000, initially 0)
 *	close() (sdp_release()) sleeps this long after it has decided how
 *	to end the connection (unread data or not: our DisConn or an
 *	abort) and before it orphans the socket; data the peer sends
 *	meanwhile will never be read and must reset the connection as data
 *	after close() does (tests/peer.c, test_data_during_close;
 *	tests/stream.c, test_send_into_closing_socket).
 *
 *   /sys/kernel/debug/sdp/zc_read_delay_ms (0..3000, initially 0)
 *	a reader that RDMA-reads a peer's advertisement counts each read
 *	as this much slower than it was, as long as one the transport had
 *	to retry on a lossy link takes: the reader must stop reading
 *	advertisements for a while (tests/zcopy.c,
 *	test_slow_reads_go_buffered).  The read itself is not delayed.
 *
 *   /sys/kernel/debug/sdp/qp_error (write only: a local port, 1..65535)
 *	the QP of each live SDP connection (not aborted or disconnected) of
 *	the writer's network namespace whose local port is that one, up to
 *	SDP_SCAN_BATCH of them, goes to the error state, as when the device
 *	gives up on it: its work requests complete flushed, it takes no more
 *	traffic, and the peer's sends to it go unanswered.  Over InfiniBand
 *	and RoCE the connection's CM path still works; over iWARP the QP's
 *	TCP stream closes with it.  A port with no such connection fails
 *	the write with ENOENT (tests/resume.c, test_qp_error_not_resumable).
 *
 * Without CONFIG_DEBUG_FS there are no files and nothing fails.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/jiffies.h>

#include "sdp.h"
#include "sdp_conn.h"
#include "sdp_fault.h"

bool sdp_fail_rx_alloc;
u32 sdp_close_delay_us;
u32 sdp_cq_rearm_delay_us;
u32 sdp_release_delay_ms;
u32 sdp_zc_read_delay_ms;
atomic_t sdp_close_pausing = ATOMIC_INIT(0);

/* Before a device removal begins: see close_delay_us above. */
void sdp_fault_removal_wait(void)
{
	unsigned long end = jiffies + HZ;

	if (!READ_ONCE(sdp_close_delay_us))
		return;
	while (!atomic_read(&sdp_close_pausing) && time_before(jiffies, end))
		usleep_range(20, 50);
}

struct sdp_fault_qp {
	const struct net *net;
	__be16 port;
	int err;
};

/* Under the socket list lock: a connection with a QP at that port. */
static bool sdp_fault_qp_match(struct sdp_sock *ssk, void *arg)
{
	const struct sdp_fault_qp *q = arg;
	const struct sockaddr_in *sin = (void *)&ssk->saddr;

	return net_eq(sock_net(&ssk->sk), q->net) &&
	       test_bit(SDP_C_QP, &ssk->conn.flags) &&
	       /*
		* sin_port is sin6_port, written under lock_sock(): a hint
		* here, checked again under it (sdp_conn_qp_error()).
		*/
	       data_race(sin->sin_port) == q->port;
}

/* q->err: 0 once one failed, else the first error other than ENOENT. */
static void sdp_fault_qp_fail(struct sdp_sock *ssk, void *arg)
{
	struct sdp_fault_qp *q = arg;
	int err = sdp_conn_qp_error(ssk, q->port);

	if (!err || q->err == -ENOENT)
		q->err = err;
}

static int sdp_fault_qp_error_set(void *data, u64 val)
{
	struct sdp_fault_qp q = { .net = current->nsproxy->net_ns,
				  .err = -ENOENT };

	if (!val || val > U16_MAX)
		return -EINVAL;
	q.port = htons(val);
	sdp_sock_scan(sdp_fault_qp_match, sdp_fault_qp_fail, &q);
	return q.err;
}

DEFINE_DEBUGFS_ATTRIBUTE(sdp_fault_qp_error_fops, NULL,
			 sdp_fault_qp_error_set, "%llu\n");

static struct dentry *sdp_debugfs;

void sdp_fault_init(void)
{
	sdp_debugfs = debugfs_create_dir("sdp", NULL);
	debugfs_create_bool("fail_rx_alloc", 0600, sdp_debugfs,
			    &sdp_fail_rx_alloc);
	debugfs_create_u32("close_delay_us", 0600, sdp_debugfs,
			   &sdp_close_delay_us);
	debugfs_create_u32("cq_rearm_delay_us", 0600, sdp_debugfs,
			   &sdp_cq_rearm_delay_us);
	debugfs_create_u32("release_delay_ms", 0600, sdp_debugfs,
			   &sdp_release_delay_ms);
	debugfs_create_u32("zc_read_delay_ms", 0600, sdp_debugfs,
			   &sdp_zc_read_delay_ms);
	debugfs_create_file_unsafe("qp_error", 0200, sdp_debugfs, NULL,
				   &sdp_fault_qp_error_fops);
}

void sdp_fault_exit(void)
{
	debugfs_remove_recursive(sdp_debugfs);
}
