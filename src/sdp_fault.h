/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- fault injection for the test suites
 * (sdp_fault.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_FAULT_H
#define _SDP_FAULT_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/delay.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include <linux/types.h>

extern bool sdp_fail_rx_alloc;
extern u32 sdp_close_delay_us;
extern u32 sdp_cq_rearm_delay_us;
extern u32 sdp_release_delay_ms;
extern u32 sdp_zc_read_delay_ms;

#define SDP_FAULT_DELAY_MAX_US	1000
#define SDP_FAULT_REARM_MAX_MS	20
#define SDP_FAULT_READ_DELAY_MAX_MS	3000
#define SDP_FAULT_RELEASE_MAX_MS	5000

/* Is a receive buffer the ring grows or changes size with to fail? */
static inline bool sdp_fault_rx_alloc(void)
{
	return unlikely(READ_ONCE(sdp_fail_rx_alloc));
}

extern atomic_t sdp_close_pausing;

/*
 * close_delay_us: sdp_close_work() pauses between its look at the
 * connection's device and its decision, and a device removal begins
 * while one does (sdp_fault_removal_wait()).
 */
static inline void sdp_fault_close_delay(void)
{
	u32 us = READ_ONCE(sdp_close_delay_us);

	if (likely(!us))
		return;
	atomic_inc(&sdp_close_pausing);
	udelay(min_t(u32, us, SDP_FAULT_DELAY_MAX_US));
	atomic_dec(&sdp_close_pausing);
}

/*
 * cq_rearm_delay_us: irq_poll's handler of a connection being taken down
 * (@down) pauses after it let irq_poll go, before it re-arms the CQ.
 */
static inline void sdp_fault_cq_rearm_delay(bool down)
{
	u32 us = READ_ONCE(sdp_cq_rearm_delay_us);

	if (likely(!us) || !down)
		return;
	us = min_t(u32, us, SDP_FAULT_REARM_MAX_MS * USEC_PER_MSEC);
	mdelay(us / USEC_PER_MSEC);
	udelay(us % USEC_PER_MSEC);
}

/*
 * release_delay_ms: close() sleeps, lock_sock() held, between deciding
 * how the connection ends and orphaning the socket.
 */
static inline void sdp_fault_release_delay(void)
{
	u32 ms = READ_ONCE(sdp_release_delay_ms);

	if (likely(!ms))
		return;
	msleep(min_t(u32, ms, SDP_FAULT_RELEASE_MAX_MS));
}

/*
 * zc_read_delay_ms: the microseconds a reader adds to the time each of
 * its RDMA reads took, as if the transport had retried it.
 */
static inline u32 sdp_fault_zc_read_delay_us(void)
{
	u32 ms = READ_ONCE(sdp_zc_read_delay_ms);

	return min_t(u32, ms, SDP_FAULT_READ_DELAY_MAX_MS) * USEC_PER_MSEC;
}

void sdp_fault_removal_wait(void);
void sdp_fault_init(void);
void sdp_fault_exit(void);

#endif /* _SDP_FAULT_H */
