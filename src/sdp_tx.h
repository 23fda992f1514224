/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the send side: the send ring, sendmsg(),
 * posting Data messages with their credits (sdp_tx.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_TX_H
#define _SDP_TX_H

#include <linux/jiffies.h>
#include <linux/types.h>

struct iov_iter;
struct msghdr;
struct sk_buff;
struct sock;
struct sdp_bsdh;
struct sdp_buf;
struct sdp_sock;

int sdp_tx_ring_alloc(struct sdp_sock *ssk);
void sdp_tx_ring_ready(struct sdp_sock *ssk);
int sdp_tx_slot_ready(struct sdp_sock *ssk);
bool sdp_tx_slot_has_buf(const struct sdp_sock *ssk);
unsigned long sdp_tx_ring_idle(struct sdp_sock *ssk);
/* A write held back for MSG_MORE or TCP_CORK goes after this (TCP's). */
#define SDP_TX_CORK_MAX		(HZ / 5)
/*
 * ... and one held by Nagle behind a small message the peer has not
 * acknowledged goes after this: the peer acknowledges with its next
 * message, which may not come (TCP's delayed ACK comes after 40 ms).
 */
#define SDP_TX_NAGLE_MAX	msecs_to_jiffies(5)
unsigned long sdp_tx_cork_expire(struct sdp_sock *ssk);
void sdp_tx_ring_free(struct sdp_sock *ssk);
bool sdp_tx_writable(const struct sdp_sock *ssk);
bool sdp_tx_room(const struct sdp_sock *ssk);
u32 sdp_tx_notsent(const struct sdp_sock *ssk);
ssize_t sdp_tx_fill(struct sdp_sock *ssk, struct iov_iter *from, size_t max,
		    bool keep);
int sdp_sendmsg_locked(struct sock *sk, struct msghdr *msg, size_t len,
		       struct sk_buff **zc_note, bool spliced);
void sdp_tx_flush(struct sdp_sock *ssk);
void sdp_tx_try_control(struct sdp_sock *ssk);
void sdp_tx_repack(struct sdp_sock *ssk);
u32 sdp_credit_grant(const struct sdp_sock *ssk);
void sdp_fill_bsdh(struct sdp_sock *ssk, struct sdp_bsdh *h, u8 mid, u32 len,
		   bool seq);
bool sdp_tx_idle(const struct sdp_sock *ssk);
int sdp_post_send(struct sdp_sock *ssk, struct sdp_buf *b, u32 off, u32 len,
		  const u32 *inv);
void sdp_rtt_sample(struct sdp_sock *ssk, const struct sdp_buf *b);

#endif /* _SDP_TX_H */
