/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the receive side: the receive ring, the
 * messages received, recvmsg() (sdp_rx.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_RX_H
#define _SDP_RX_H

#include <linux/jiffies.h>
#include <linux/types.h>

/*
 * A receive buffer that came back and could not be replaced (no memory)
 * is tried again this long after (sdp_rx_replace_retired()).
 */
#define SDP_RX_RETRY	(HZ / 10)

struct msghdr;
struct sock;
struct sdp_buf;
struct sdp_sock;

int sdp_rx_ring_alloc(struct sdp_sock *ssk, unsigned int n);
void sdp_rx_ring_free(struct sdp_sock *ssk);
int sdp_rx_post_all(struct sdp_sock *ssk);
void sdp_rx_grow(struct sdp_sock *ssk, unsigned int to);
void sdp_rx_replace_retired(struct sdp_sock *ssk);
unsigned long sdp_rx_ring_idle(struct sdp_sock *ssk);
int sdp_recvmsg_locked(struct sock *sk, struct msghdr *msg, size_t len,
		       int flags);
void sdp_rx_purge(struct sdp_sock *ssk);
void sdp_rx_consumed(struct sdp_sock *ssk, struct sdp_buf *b);
void sdp_rx_urg_advance(struct sdp_sock *ssk, u32 n);

#endif /* _SDP_RX_H */
