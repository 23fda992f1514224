// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- MSG_ZEROCOPY as TCP offers it: SO_ZEROCOPY,
 * send(MSG_ZEROCOPY) and its completion notifications on the socket's
 * error queue (recvmsg(MSG_ERRQUEUE), EPOLLERR), so that a program
 * written for TCP's MSG_ZEROCOPY runs unchanged.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Every send() with MSG_ZEROCOPY on a socket with SO_ZEROCOPY that takes
 * at least one byte gets the socket's next notification id (sk_zckey,
 * from 0, as on TCP).  Its notification is queued once SDP no longer
 * uses the caller's pages: ee_code SO_EE_CODE_ZEROCOPY_COPIED if any of
 * its bytes were copied, 0 if the peer read them all from the caller's
 * pages.  For most sends that is before send() returns: what went
 * buffered was copied, and a blocking zero-copy send (SrcAvail,
 * sdp_zc_tx.c) returns only once the peer has read.  A nonblocking send
 * whose first segment holds net.sdp.zcopy_thresh bytes or more returns
 * as soon as it is advertised instead (sdp_zc_send_async()): its
 * notification comes when the peer has read the pages, or when their
 * rest has been copied into the send ring.  A notification
 * that follows the last one queued (its id the next, the same code) is
 * merged into it, as TCP merges them: [ee_info, ee_data].  Notifications
 * are charged to the socket's receive buffer (sock_queue_err_skb()); a
 * send whose notification would not fit fails with ENOBUFS before it
 * sends anything, as TCP's does when it cannot allocate one.  The queue
 * is purged when the socket goes.
 */
#include <linux/errqueue.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/skbuff.h>
#include <net/sock.h>

#include "sdp.h"
#include "sdp_msgzc.h"

/**
 * sdp_msgzc_setsockopt() - SOL_SOCKET options of an SDP socket
 * @sock: the socket (SOCK_CUSTOM_SOCKOPT: all of SOL_SOCKET comes here)
 * @optname: the option
 * @optval: its value
 * @optlen: its length
 *
 * SO_ZEROCOPY as on TCP (0 or 1, EINVAL otherwise); everything else as
 * the socket core does it.
 *
 * Return: 0 or a negative errno.
 */
int sdp_msgzc_setsockopt(struct socket *sock, int optname, sockptr_t optval,
			 unsigned int optlen)
{
	struct sock *sk = sock->sk;
	int val;

	if (optname != SO_ZEROCOPY)
		return sock_setsockopt(sock, SOL_SOCKET, optname, optval,
				       optlen);
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	if (val < 0 || val > 1)
		return -EINVAL;
	lock_sock(sk);
	if (val)
		sock_set_flag(sk, SOCK_ZEROCOPY);
	else
		sock_reset_flag(sk, SOCK_ZEROCOPY);
	release_sock(sk);
	return 0;
}

/**
 * sdp_msgzc_start() - before a send: is it a MSG_ZEROCOPY one?
 * @sk: the socket, tx_mutex held
 * @msg: the send
 * @skb: set to the notification to queue when it ends, or NULL
 *
 * Return: 0, or -ENOBUFS when the notification cannot be had or would
 * not fit the receive buffer.
 */
int sdp_msgzc_start(struct sock *sk, struct msghdr *msg, struct sk_buff **skb)
{
	*skb = NULL;
	if (!(msg->msg_flags & MSG_ZEROCOPY) || !sock_flag(sk, SOCK_ZEROCOPY) ||
	    !msg_data_left(msg))
		return 0;
	*skb = alloc_skb(0, GFP_KERNEL);
	if (!*skb)
		return -ENOBUFS;
	if (atomic_read(&sk->sk_rmem_alloc) + (*skb)->truesize >=
	    (unsigned int)READ_ONCE(sk->sk_rcvbuf)) {
		kfree_skb(*skb);
		*skb = NULL;
		return -ENOBUFS;
	}
	return 0;
}

/* Does @tail, the last notification queued, take id @id with @code? */
static bool sdp_msgzc_extend(struct sk_buff *tail, u32 id, u8 code)
{
	struct sock_exterr_skb *serr = SKB_EXT_ERR(tail);

	if (serr->ee.ee_origin != SO_EE_ORIGIN_ZEROCOPY ||
	    serr->ee.ee_code != code || serr->ee.ee_data + 1 != id ||
	    /* a range of at most 2^32 - 1 ids */
	    (u64)(serr->ee.ee_data - serr->ee.ee_info) + 2 >= BIT_ULL(32))
		return false;
	serr->ee.ee_data = id;
	return true;
}

/* The id of the next MSG_ZEROCOPY send that took bytes. */
u32 sdp_msgzc_id(struct sock *sk)
{
	return (u32)atomic_inc_return(&sk->sk_zckey) - 1;
}

/**
 * sdp_msgzc_end() - after a send: queue its notification
 * @sk: the socket, tx_mutex held
 * @skb: from sdp_msgzc_start(), or NULL
 * @sent: what the send returned
 * @copied: whether any of its bytes were copied (not all read by the
 *	peer from the caller's pages)
 *
 * A send that took nothing gets no id (as on TCP).
 */
void sdp_msgzc_end(struct sock *sk, struct sk_buff *skb, int sent,
		   bool copied)
{
	if (!skb)
		return;
	if (sent <= 0) {
		consume_skb(skb);	/* no bytes, no id: not a drop */
		return;
	}
	sdp_msgzc_queue(sk, skb, sdp_msgzc_id(sk), copied);
}

/**
 * sdp_msgzc_queue() - queue the notification of a send
 * @sk: the socket
 * @skb: from sdp_msgzc_start()
 * @id: the send's (sdp_msgzc_id())
 * @copied: whether any of its bytes were copied
 *
 * Merged into the last one queued if it follows it with the same code.
 */
void sdp_msgzc_queue(struct sock *sk, struct sk_buff *skb, u32 id,
		     bool copied)
{
	struct sk_buff_head *q = &sk->sk_error_queue;
	u8 code = copied ? SO_EE_CODE_ZEROCOPY_COPIED : 0;
	struct sock_exterr_skb *serr;
	struct sk_buff *tail;
	unsigned long flags;
	bool merged;

	spin_lock_irqsave(&q->lock, flags);
	tail = skb_peek_tail(q);
	merged = tail && sdp_msgzc_extend(tail, id, code);
	spin_unlock_irqrestore(&q->lock, flags);
	if (merged) {
		consume_skb(skb);
		sk_error_report(sk);
		return;
	}
	serr = SKB_EXT_ERR(skb);
	memset(serr, 0, sizeof(*serr));
	serr->ee.ee_errno = 0;
	serr->ee.ee_origin = SO_EE_ORIGIN_ZEROCOPY;
	serr->ee.ee_code = code;
	serr->ee.ee_info = id;
	serr->ee.ee_data = id;
	/* Checked to fit in sdp_msgzc_start(); only we add to it. */
	if (sock_queue_err_skb(sk, skb))
		kfree_skb(skb);
}

/**
 * sdp_msgzc_recv() - recvmsg(MSG_ERRQUEUE)
 * @sk: the socket
 * @msg: where the notification goes, as a control message
 * @len: the caller's buffer length
 *
 * The control message is the one TCP's carries: SOL_IP/IP_RECVERR, or
 * SOL_IPV6/IPV6_RECVERR on a socket the program addresses with IPv6.
 *
 * Return: as sock_recv_errqueue(): -EAGAIN when the queue is empty.
 */
int sdp_msgzc_recv(struct sock *sk, struct msghdr *msg, size_t len)
{
	if (test_bit(SDP_O_V6, &sdp_sk(sk)->opts))
		return sock_recv_errqueue(sk, msg, len, SOL_IPV6,
					  IPV6_RECVERR);
	return sock_recv_errqueue(sk, msg, len, SOL_IP, IP_RECVERR);
}
