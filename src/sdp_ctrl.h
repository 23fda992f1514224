/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- control messages: credit updates, DisConn,
 * AbortConn and the rest that carry no data (sdp_ctrl.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_CTRL_H
#define _SDP_CTRL_H

#include <linux/types.h>

struct ib_cq;
struct ib_wc;
struct sdp_sock;

int sdp_post_ctrl(struct sdp_sock *ssk, u8 mid);
int sdp_post_rtr(struct sdp_sock *ssk);
int sdp_post_ping(struct sdp_sock *ssk);
int __sdp_post_ctrl(struct sdp_sock *ssk, u8 mid, const void *ext, u32 extlen,
		    const u32 *inv);
void sdp_tx_chrcvbuf_ack(struct sdp_sock *ssk);
void sdp_ctrl_done(struct ib_cq *cq, struct ib_wc *wc);

#endif /* _SDP_CTRL_H */
