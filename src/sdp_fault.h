/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- fault injection for the test suites
 * (sdp_fault.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_FAULT_H
#define _SDP_FAULT_H

#include <linux/compiler.h>
#include <linux/types.h>

extern bool sdp_fail_rx_alloc;

/* Is a receive buffer the ring grows or changes size with to fail? */
static inline bool sdp_fault_rx_alloc(void)
{
	return unlikely(READ_ONCE(sdp_fail_rx_alloc));
}

void sdp_fault_init(void);
void sdp_fault_exit(void);

#endif /* _SDP_FAULT_H */
