/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- MSG_ZEROCOPY's completion notifications
 * (sdp_msgzc.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_MSGZC_H
#define _SDP_MSGZC_H

#include <linux/sockptr.h>
#include <linux/types.h>

struct msghdr;
struct sk_buff;
struct sock;
struct socket;

int sdp_msgzc_setsockopt(struct socket *sock, int optname, sockptr_t optval,
			 unsigned int optlen);
int sdp_msgzc_start(struct sock *sk, struct msghdr *msg, struct sk_buff **skb);
void sdp_msgzc_end(struct sock *sk, struct sk_buff *skb, int sent,
		   bool copied);
u32 sdp_msgzc_id(struct sock *sk);
void sdp_msgzc_queue(struct sock *sk, struct sk_buff *skb, u32 id,
		     bool copied);
int sdp_msgzc_recv(struct sock *sk, struct msghdr *msg, size_t len);

#endif /* _SDP_MSGZC_H */
