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
 * Without CONFIG_DEBUG_FS there are no files and nothing fails.
 */
#include <linux/debugfs.h>

#include "sdp_fault.h"

bool sdp_fail_rx_alloc;

static struct dentry *sdp_debugfs;

void sdp_fault_init(void)
{
	sdp_debugfs = debugfs_create_dir("sdp", NULL);
	debugfs_create_bool("fail_rx_alloc", 0600, sdp_debugfs,
			    &sdp_fail_rx_alloc);
}

void sdp_fault_exit(void)
{
	debugfs_remove_recursive(sdp_debugfs);
}
