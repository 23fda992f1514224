// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- receive path: the receive ring, message
 * validation and credit accounting, and recvmsg().
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Receive buffers are allocated and DMA-mapped when the ring needs them
 * and reposted as soon as their payload has been read.  A completion
 * (softirq) validates the message, updates credits and either queues the
 * buffer on rx_queue (data) or reposts it at once (control).  recvmsg()
 * copies out of the queued buffers under lock_sock(); the softirq only
 * ever appends.
 *
 * The ring's size: a few small buffers at first, all of the ring in full
 * ones once the peer sends faster than they come back (sdp_rx_grow()),
 * the few small ones again after net.sdp.rx_idle_ms without data
 * (sdp_rx_ring_idle()).  A buffer of the size the ring no longer posts
 * is not reposted when it comes back but retires (rx_retired), for
 * sdp_work() to free or replace (sdp_rx_replace_retired()).  Each change
 * of size is announced with a ChRcvBufAck (sdp_tx.c) that says from
 * which message on it binds, since posted buffers cannot be taken back.
 * The ring's counts keep to
 *
 *   rx_small_posted <= rx_posted <= rx_alloc <= rx_count <= rx_slots
 *
 * (a posted buffer is one the ring has; the ring has no more than its
 * size, which only comes down to what it has).
 *
 * A peer that breaks the protocol gets its connection aborted with a
 * rate-limited log line:
 *   - a message whose BSDH len differs from the bytes that arrived, or is
 *     shorter than a BSDH;
 *   - a message whose mseq is not the previous one + 1;
 *   - more messages than it had credits for (mseq beyond our adverts);
 *   - an mseq_ack for a message we have not sent;
 *   (these four are sdp_bsdh_check(), sdp_wire.h)
 *   - a message id we do not implement (SinkAvail, ModeChange, ...);
 *   - data or a SrcAvail after it sent DisConn;
 *   - zero-copy messages out of turn (sdp_zc_rx_msg()): a second
 *     SrcAvail while one is outstanding, an RdmaRdCompl for more than
 *     we advertised, a SendSM without a SrcAvail, extra headers of the
 *     wrong size;
 *   - a ChRcvBufAck of the wrong length, or one sdp_crbah_check() refuses
 *     (tiny buffers, smaller ones from a message already sent or too far
 *     ahead, the last one not binding yet).
 * A SrcAvail is queued like data; recvmsg() reads it with sdp_zc_recv().
 */
#include <linux/dma-mapping.h>
#include <linux/uio.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_cq.h"
#include "sdp_dev.h"
#include "sdp_fault.h"
#include "sdp_mem.h"
#include "sdp_net.h"
#include "sdp_proto.h"
#include "sdp_rx.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_wire.h"
#include "sdp_zc.h"

/* The ring's counts above.  ssk->lock held, or lock_sock(). */
static bool sdp_rx_ring_ok(const struct sdp_conn *c)
{
	return c->rx_small_posted <= c->rx_posted &&
	       c->rx_posted <= c->rx_alloc && c->rx_alloc <= c->rx_count &&
	       c->rx_count <= c->rx_slots;
}

static void sdp_rx_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * Is the SrcAvail @b still being read, with bytes left?  A read covers
 * at most zc_rx.rd_pages pages (sdp_zc_recv()): a reader that wants more
 * goes on with the next part.  lock_sock() held.
 */
static bool sdp_zc_rx_unread(struct sdp_sock *ssk, struct sdp_buf *b)
{
	bool left;

	spin_lock_bh(&ssk->lock);
	left = ssk->conn.zc_rx.buf == b && b->off < b->len;
	spin_unlock_bh(&ssk->lock);
	return left;
}

/*
 * The receive ring with its first @n buffers (the rest, up to rx_count,
 * come with sdp_rx_grow()).  lock_sock() held.
 */
int sdp_rx_ring_alloc(struct sdp_sock *ssk, unsigned int n)
{
	ssk->conn.rx_alloc = 0;
	ssk->conn.rx_slots = ssk->conn.rx_count;
	ssk->conn.rx_ring = sdp_ring_alloc(ssk->conn.rx_slots, sdp_rx_done);
	if (!ssk->conn.rx_ring)
		return -ENOMEM;
	if (sdp_ring_fill(ssk->conn.sdev->ibdev, ssk->conn.rx_ring, 0, n,
			  ssk->conn.rx_size, DMA_FROM_DEVICE))
		return -ENOMEM;
	ssk->conn.rx_alloc = n;
	return 0;
}

/*
 * Unmapped first, then freed: the buffers' memory is apart from their
 * mapping (struct sdp_buf).
 */
void sdp_rx_ring_free(struct sdp_sock *ssk)
{
	struct ib_device *dev = ssk->conn.sdev->ibdev;

	/* Retired buffers are ring entries: the list goes with the ring. */
	INIT_LIST_HEAD(&ssk->conn.rx_retired);
	sdp_ring_unmap(dev, ssk->conn.rx_ring, ssk->conn.rx_slots,
		       DMA_FROM_DEVICE);
	sdp_ring_free(NULL, ssk->conn.rx_ring, ssk->conn.rx_slots,
		      DMA_FROM_DEVICE);
	ssk->conn.rx_ring = NULL;
	ssk->conn.rx_alloc = 0;
}

/*
 * Post one receive buffer.  Called with ssk->lock held, or before the
 * connection is visible to anyone else.  A buffer that comes back after
 * the ring changed size (a small one after it grew, a full one once its
 * shrink is announced: sdp_rx_reposts()) is not posted again: it goes to
 * rx_retired, for sdp_rx_replace_retired().
 */
static int sdp_post_recv(struct sdp_sock *ssk, struct sdp_buf *b)
{
	struct ib_sge sge = {
		.addr = b->dma,
		.length = b->size,
		.lkey = ssk->conn.pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe = &b->cqe,
		.sg_list = &sge,
		.num_sge = 1,
	};
	int err;

	lockdep_assert_held(&ssk->lock);
	b->len = 0;
	b->off = 0;
	if (!sdp_rx_reposts(b->size, ssk->conn.rx_want, ssk->conn.rx_size)) {
		list_add_tail(&b->node, &ssk->conn.rx_retired);
		if (!test_and_set_bit(SDP_D_RX_RETIRE, &ssk->conn.deferred))
			sdp_queue_work(ssk);
		return 0;
	}
	if (WARN_ON_ONCE(!b->mapped))
		return -EIO;
	ib_dma_sync_single_for_device(ssk->conn.sdev->ibdev, b->dma, b->size,
				      DMA_FROM_DEVICE);
	err = ib_post_recv(ssk->conn.qp, &wr, NULL);
	if (err) {
		/* The caller ends the connection (AbortOnCqError, or a
		 * failed setup in sdp_rx_post_all()): say why.
		 */
		sdp_warn_peer(ssk, "posting a receive buffer failed: %d\n", err);
		return err;
	}
	ssk->conn.rx_posted++;
	if (b->size < SDP_BUF_SIZE)
		ssk->conn.rx_small_posted++;
	DEBUG_NET_WARN_ON_ONCE(!sdp_rx_ring_ok(&ssk->conn));
	return 0;
}

/* Post the ring's first buffers (sdp_rx_ring_alloc()).  ssk->lock held. */
int sdp_rx_post_all(struct sdp_sock *ssk)
{
	unsigned int i;
	int err;

	lockdep_assert_held(&ssk->lock);
	for (i = 0; i < ssk->conn.rx_alloc; i++) {
		err = sdp_post_recv(ssk, &ssk->conn.rx_ring[i]);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A Data message came that leaves the peer SDP_DATA_MIN_CREDITS or fewer,
 * and it is the second at least since we last sent data (Data or a
 * SrcAvail; credit updates do not count): the peer streams faster than
 * our buffers come back,
 * so a ring that started small (net.sdp.rx_init_bufs, SDP_HALF_OPEN_BUFS)
 * or shrank back should grow; sdp_work() (or, for a passive connection
 * not yet established, its RTU) calls sdp_rx_grow().  From
 * SDP_RX_INIT_BUFS that is the second Data message in a row; a request
 * and its answer, one message each way, never ask for it, also when
 * control messages (credit updates, a shrink's, sdp_tx_return_big())
 * took some of the peer's credits: an idle or conversational connection
 * keeps its few buffers.  ssk->lock held.
 */
static void sdp_rx_grow_due(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	if (++ssk->conn.rx_data_run >= 2 && ssk->conn.rx_alloc < ssk->conn.rx_count &&
	    sdp_peer_credits(ssk->conn.rx_mseq_last, ssk->conn.rx_mseq_limit) <=
	    SDP_DATA_MIN_CREDITS &&
	    !test_and_set_bit(SDP_D_RX_GROW, &ssk->conn.deferred))
		sdp_queue_work(ssk);
}

/*
 * The buffers a ring of @want-byte buffers has: all of it full, or
 * net.sdp.rx_init_bufs small ones.  ssk->lock held.
 */
static unsigned int sdp_rx_target(struct sdp_sock *ssk, u32 want)
{
	if (want == SDP_BUF_SIZE)
		return ssk->conn.rx_count;
	return min(ssk->conn.rx_count,
		   sdp_sysctl_rx_init_bufs(sock_net(&ssk->sk)));
}

/*
 * Allocate and map a @size-byte buffer for @b, charged to the socket's
 * memory cgroup; @b keeps the one it has, if any, until the caller frees
 * it.  lock_sock() held, ssk->lock not.
 * Return: 0 or -ENOMEM.
 */
static int sdp_rx_buf_alloc(struct sdp_sock *ssk, struct sdp_buf *b, u32 size)
{
	struct sdp_buf nb = {};
	struct mem_cgroup *old;
	int err;

	if (sdp_fault_rx_alloc())
		return -ENOMEM;
	old = sdp_memcg_enter(&ssk->sk);
	err = sdp_ring_fill(ssk->conn.sdev->ibdev, &nb, 0, 1, size,
			    DMA_FROM_DEVICE);
	sdp_memcg_leave(old);
	if (err)
		return err;
	sdp_buf_free(ssk->conn.sdev->ibdev, b, DMA_FROM_DEVICE);
	sdp_buf_swap_mem(b, &nb);
	return 0;
}

/*
 * Post entry @b, which has a buffer (new, or a new one in place of one
 * that came back), unless the connection is going.  lock_sock() held,
 * ssk->lock not.
 */
static void sdp_rx_buf_post(struct sdp_sock *ssk, struct sdp_buf *b)
{
	spin_lock_bh(&ssk->lock);
	if (sdp_tx_usable(ssk) && sdp_post_recv(ssk, b))
		__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
	spin_unlock_bh(&ssk->lock);
}

/* Buffers were posted: a credit update may be due.  ssk->lock not held. */
static void sdp_rx_announce(struct sdp_sock *ssk)
{
	spin_lock_bh(&ssk->lock);
	sdp_tx_try_control(ssk);
	spin_unlock_bh(&ssk->lock);
}

/*
 * A buffer that came back could not be replaced (no memory in the
 * socket's memory cgroup): it waits, not posted, at the head of
 * rx_retired, and sdp_work() tries again after SDP_RX_RETRY.
 * A bigger buffer would take the smaller messages a shrink announced,
 * but posted after the message the next ChRcvBufAck counts from, it
 * would put that count off.  lock_sock() held, ssk->lock not.
 */
static void sdp_rx_retire_again(struct sdp_sock *ssk, struct sdp_buf *b)
{
	spin_lock_bh(&ssk->lock);
	list_add(&b->node, &ssk->conn.rx_retired);
	set_bit(SDP_D_RX_RETIRE, &ssk->conn.deferred);
	spin_unlock_bh(&ssk->lock);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_BUF_WAITS);
	sdp_queue_work_within(ssk, SDP_RX_RETRY);
}

/*
 * The buffers that came back with the size the ring no longer posts
 * (rx_retired): small ones after it grew, full ones after it shrank.
 * Each is freed while the ring has more than it should
 * (sdp_rx_target()), else given a new buffer of the size it posts now,
 * allocated before the old one is freed: a ring that runs out of memory
 * keeps its buffers, and one that could not be replaced waits
 * (sdp_rx_retire_again()) instead of leaving its entry empty, which
 * left nothing to receive into once all of them came back.  One that
 * has that size again (the ring changed back) is posted as it is.  A
 * connection that is going gets no new ones.
 * Smaller buffers are posted only once the ChRcvBufAck that announces
 * them is (sdp_tx_chrcvbuf_ack(), which calls us again): a message the
 * peer sends before it read that may be bigger.  lock_sock() held.
 */
void sdp_rx_replace_retired(struct sdp_sock *ssk)
{
	bool keep, posted = false;
	struct sdp_buf *b;
	u32 size, want;

	sock_owned_by_me(&ssk->sk);
	for (;;) {
		spin_lock_bh(&ssk->lock);
		want = ssk->conn.rx_want;
		b = list_first_entry_or_null(&ssk->conn.rx_retired, struct sdp_buf,
					     node);
		if (b && want < ssk->conn.rx_size)
			b = NULL;	/* not announced yet */
		if (b) {
			list_del_init(&b->node);
			keep = b->size == want ||
			       (sdp_tx_usable(ssk) &&
				ssk->conn.rx_alloc <= sdp_rx_target(ssk, want));
			if (!keep)
				ssk->conn.rx_alloc--;
		}
		spin_unlock_bh(&ssk->lock);
		if (!b)
			break;
		size = b->size;
		if (!keep) {
			sdp_buf_free(ssk->conn.sdev->ibdev, b, DMA_FROM_DEVICE);
			sdp_mem_uncharge(ssk, 1, size);
			continue;
		}
		if (size != want) {
			/* Established: charged even above net.sdp.mem's max. */
			sdp_mem_charge(ssk, 1, want, true);
			if (sdp_rx_buf_alloc(ssk, b, want)) {
				sdp_mem_uncharge(ssk, 1, want);
				sdp_rx_retire_again(ssk, b);
				break;
			}
			sdp_mem_uncharge(ssk, 1, size);
		}
		sdp_rx_buf_post(ssk, b);
		posted = true;
	}
	if (posted)
		sdp_rx_announce(ssk);
}

/**
 * sdp_rx_grow() - post more of the receive ring
 * @ssk: the socket, lock_sock() held
 * @to: buffers it should have: rx_count when the peer asked for more
 *	(sdp_rx_grow_due()), net.sdp.rx_init_bufs when a passive connection
 *	is established
 *
 * The new buffers are announced with a credit update.  A ring on small
 * buffers grows with full ones when the peer can be told
 * (SDP_P_RESIZE): a ChRcvBufAck tells it from which message on it
 * may send full ones (sdp_tx_try_control()), and the small ones retire
 * as they come back and are replaced (sdp_rx_replace_retired()).
 * Without that, the ring grows with small buffers.  The new buffers go
 * into the entries that have none.  When memory is short (net.sdp.mem's
 * pressure, the charge refused, no memory) the ring stays as it is, for
 * good: rx_count comes down to it, and nothing asks again.  A ring that
 * grew to full buffers is looked at again after net.sdp.rx_idle_ms
 * (sdp_rx_ring_idle()).
 */
void sdp_rx_grow(struct sdp_sock *ssk, unsigned int to)
{
	unsigned long idle = sdp_sysctl_rx_idle(sock_net(&ssk->sk));
	struct sock *sk = &ssk->sk;
	unsigned int n, i, done = 0;
	struct sdp_buf *b;
	u32 size;

	sock_owned_by_me(sk);
	sdp_rx_replace_retired(ssk);
	size = READ_ONCE(ssk->conn.rx_want) == SDP_BUF_SIZE ||
	       test_bit(SDP_P_RESIZE, &ssk->conn.peer) ?
	       SDP_BUF_SIZE : SDP_BUF_SMALL;
	spin_lock_bh(&ssk->lock);
	to = min(to, ssk->conn.rx_count);
	n = to > ssk->conn.rx_alloc ? to - ssk->conn.rx_alloc : 0;
	spin_unlock_bh(&ssk->lock);
	if (!n)
		return;
	if (sdp_mem_under_pressure(sock_net(sk)) ||
	    sdp_mem_charge(ssk, n, size, false))
		goto small;
	for (i = 0; i < ssk->conn.rx_slots && done < n; i++) {
		b = &ssk->conn.rx_ring[i];
		if (b->data)
			continue;
		if (sdp_rx_buf_alloc(ssk, b, size))
			break;
		spin_lock_bh(&ssk->lock);
		/*
		 * From now on a buffer of the other size that comes back
		 * retires: not before one of this size is there to post.
		 */
		ssk->conn.rx_want = size;
		if (!done++)
			ssk->conn.rx_last = jiffies;
		ssk->conn.rx_alloc++;
		WARN_ON_ONCE(!sdp_rx_ring_ok(&ssk->conn));
		spin_unlock_bh(&ssk->lock);
		sdp_rx_buf_post(ssk, b);
	}
	if (done < n)
		sdp_mem_uncharge(ssk, n - done, size);
	if (done) {
		/*
		 * The peer gets them all at once.  A message of ours may
		 * have gone while they were being posted (over iWARP the
		 * answer to the peer's first Send) and announced some:
		 * the rest would wait for enough of a grant otherwise.
		 * Counted before the peer can see it.
		 */
		set_bit(SDP_C_ANSWER, &ssk->conn.flags);
		SDP_INC_STATS(sock_net(sk), SDP_MIB_RX_RING_GROWS);
		sdp_rx_announce(ssk);
	}
	if (done == n) {
		if (size == SDP_BUF_SIZE && idle)
			sdp_queue_work_delayed(ssk, idle);
		return;
	}

small:
	spin_lock_bh(&ssk->lock);
	WRITE_ONCE(ssk->conn.rx_count, ssk->conn.rx_alloc);
	WARN_ON_ONCE(!sdp_rx_ring_ok(&ssk->conn));
	spin_unlock_bh(&ssk->lock);
}

/**
 * sdp_rx_ring_idle() - shrink a receive ring that grew, after a quiet time
 * @ssk: the socket, lock_sock() held (sdp_work())
 *
 * After net.sdp.rx_idle_ms without Data or a SrcAvail from the peer, with
 * nothing unread and no other size change under way, a ring of full
 * buffers goes back to net.sdp.rx_init_bufs small ones, if the peer
 * understands that (SDP_P_SHRINK): our ChRcvBufAck tells the peer from
 * which message on its messages must fit small buffers (full buffers
 * that come back before it is posted are posted again, sdp_rx_reposts(),
 * and retire after), the peer sends the ones before
 * (empty if it has nothing to send, sdp_tx_return_big()), and
 * sdp_rx_replace_retired() frees the full buffers and posts the small
 * ones.  Data that comes again makes it grow again (sdp_rx_grow_due()).
 *
 * Return: how long until it should look again, or 0 for not until the
 * ring grows again.
 */
unsigned long sdp_rx_ring_idle(struct sdp_sock *ssk)
{
	unsigned long idle = sdp_sysctl_rx_idle(sock_net(&ssk->sk));
	unsigned long again = 0, due;
	bool shrink = false;

	sock_owned_by_me(&ssk->sk);
	if (!idle)
		return 0;
	spin_lock_bh(&ssk->lock);
	if (!test_bit(SDP_P_SHRINK, &ssk->conn.peer) ||
	    ssk->conn.rx_want != SDP_BUF_SIZE ||
	    sdp_rx_target(ssk, SDP_BUF_SMALL) >= ssk->conn.rx_count ||
	    !sdp_tx_usable(ssk) ||
	    test_bit(SDP_C_DISCONN_RCVD, &ssk->conn.flags))
		goto out;
	due = ssk->conn.rx_last + idle;
	if (time_before(jiffies, due)) {
		again = due - jiffies;
		goto out;
	}
	again = idle;
	/* Our last ChRcvBufAck must bind already, and nothing be unread. */
	if (ssk->conn.rx_size != SDP_BUF_SIZE ||
	    (test_bit(SDP_C_RX_ACKED, &ssk->conn.flags) &&
	     sdp_mseq_after(ssk->conn.rx_chg_mseq, ssk->conn.rx_mseq_last + 1)) ||
	    !list_empty(&ssk->conn.rx_queue))
		goto out;
	ssk->conn.rx_want = SDP_BUF_SMALL;
	sdp_tx_try_control(ssk);
	shrink = true;
	again = 0;
out:
	spin_unlock_bh(&ssk->lock);
	if (shrink)
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_RX_RING_SHRINKS);
	return again;
}

/* Drop unread data (the socket is closing or aborted). */
void sdp_rx_purge(struct sdp_sock *ssk)
{
	struct sdp_buf *b, *tmp;

	spin_lock_bh(&ssk->lock);
	list_for_each_entry_safe(b, tmp, &ssk->conn.rx_queue, node)
		list_del_init(&b->node);
	ssk->conn.rx_bytes = 0;
	spin_unlock_bh(&ssk->lock);
}

/*
 * Urgent data, with TCP's semantics, carried as the SDP spec carries it:
 * the last payload byte of a Data message whose BSDH has OOB_PRES is the
 * urgent byte.  Unless SO_OOBINLINE is set it leaves the stream (the
 * buffer loses its last byte) and recv(MSG_OOB) returns it, once.  Either
 * way it sets a mark: reads stop there (SIOCATMARK is then true), poll()
 * reports EPOLLPRI until the byte is read, and the socket's owner gets
 * SIGURG.  A later urgent byte replaces an earlier one, as on TCP.
 * ssk->lock held.
 */
static void sdp_rx_urg(struct sdp_sock *ssk, struct sdp_buf *b)
{
	struct sock *sk = &ssk->sk;
	u8 *data = b->data + sizeof(struct sdp_bsdh);

	ssk->conn.urg_byte = data[b->len - 1];
	ssk->conn.urg_state = SDP_URG_VALID;
	ssk->conn.urg_ahead = ssk->conn.rx_bytes + b->len - 1;
	if (!sock_flag(sk, SOCK_URGINLINE))
		b->len--;
	sk_send_sigurg(sk);
	sk->sk_data_ready(sk);	/* EPOLLPRI, even with no byte queued */
}

/* The reader consumed @n bytes: past the urgent mark, it is gone. */
void sdp_rx_urg_advance(struct sdp_sock *ssk, u32 n)
{
	lockdep_assert_held(&ssk->lock);
	if (ssk->conn.urg_state == SDP_URG_NONE)
		return;
	if (n > ssk->conn.urg_ahead)
		WRITE_ONCE(ssk->conn.urg_state, SDP_URG_NONE);
	else
		ssk->conn.urg_ahead -= n;
}

/*
 * iWARP, passive: the peer's first Send, empty (sdp_post_rtr()), lets us
 * send with the credits its Hello gave, and the buffer it took is
 * announced at once, since the peer counted it (SDP_C_ANSWER).  Any
 * other empty message is one shorter than a BSDH (sdp_bsdh_check()).
 * ssk->lock held.
 */
static bool sdp_rx_rtr(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	if (!test_and_clear_bit(SDP_C_RTR_WAIT, &ssk->conn.flags))
		return false;
	ssk->conn.tx_credits = ssk->conn.rtr_credits;
	set_bit(SDP_C_ANSWER, &ssk->conn.flags);
	return true;
}

/*
 * Handle one received message; ssk->lock is held.  Returns true if the
 * buffer was queued (it holds unread data), false if it may be reposted.
 */
static bool sdp_rx_msg(struct sdp_sock *ssk, struct sdp_buf *b, u32 byte_len)
{
	struct sdp_bsdh *h = b->data;
	struct sock *sk = &ssk->sk;
	u32 len, mseq, payload;

	lockdep_assert_held(&ssk->lock);
	if (!byte_len && sdp_rx_rtr(ssk))
		return false;
	switch (sdp_bsdh_check(h, byte_len, ssk->conn.rx_mseq_last,
			       ssk->conn.rx_mseq_limit, ssk->conn.tx_mseq_next)) {
	case SDP_BSDH_OK:
		break;
	case SDP_BSDH_SHORT:
		sdp_warn_peer(ssk, "message of %u bytes, shorter than a BSDH; aborting\n",
			      byte_len);
		goto abort;
	case SDP_BSDH_LEN:
		sdp_warn_peer(ssk, "BSDH len %u but %u bytes arrived; aborting\n",
			      be32_to_cpu(h->len), byte_len);
		goto abort;
	case SDP_BSDH_MSEQ:
		sdp_warn_peer(ssk, "mseq %u, expected %u; aborting\n",
			      be32_to_cpu(h->mseq), ssk->conn.rx_mseq_last + 1);
		goto abort;
	case SDP_BSDH_CREDITS:
		sdp_warn_peer(ssk, "message %u beyond its credits (limit %u); aborting\n",
			      be32_to_cpu(h->mseq), ssk->conn.rx_mseq_limit);
		goto abort;
	case SDP_BSDH_ACK:
		sdp_warn_peer(ssk, "mseq_ack %u beyond our last message %u; aborting\n",
			      be32_to_cpu(h->mseq_ack), ssk->conn.tx_mseq_next - 1);
		goto abort;
	}
	/* A message without an empty Send before it lets us send too. */
	if (unlikely(test_bit(SDP_C_RTR_WAIT, &ssk->conn.flags)))
		clear_bit(SDP_C_RTR_WAIT, &ssk->conn.flags);
	len = be32_to_cpu(h->len);
	mseq = be32_to_cpu(h->mseq);
	ssk->conn.rx_mseq_last = mseq;
	/* sdp_bsdh_check() refused a message beyond its credits. */
	DEBUG_NET_WARN_ON_ONCE(sdp_mseq_after(mseq, ssk->conn.rx_mseq_limit));

	/*
	 * Credits: the peer had @bufs buffers posted when it sent this, and
	 * our messages after its mseq_ack are still on their way into them.
	 */
	ssk->conn.tx_credits = sdp_bsdh_credits(h, ssk->conn.tx_mseq_next);
	/*
	 * A ping (we offered SDP_HF_PING): our next message answers it,
	 * sent as soon as the credits allow (sdp_tx_try_control() after
	 * this message).  Several before it get one answer.
	 */
	if (h->flags & SDP_PING) {
		SDP_INC_STATS(sock_net(sk), SDP_MIB_PINGS_RX);
		set_bit(SDP_C_ANSWER, &ssk->conn.flags);
	}
	/* Our last small message arrived: Nagle may let the next one go. */
	if (test_bit(SDP_C_TX_SMALL, &ssk->conn.flags) &&
	    !sdp_mseq_after(ssk->conn.tx_small_mseq, be32_to_cpu(h->mseq_ack)))
		clear_bit(SDP_C_TX_SMALL, &ssk->conn.flags);

	payload = len - sizeof(*h);
	sdp_stat_rx_msg(ssk, h->mid, payload);
	switch (h->mid) {
	case SDP_MID_DATA:
		if (!payload)
			return false;	/* a credit update */
		if (test_bit(SDP_C_DISCONN_RCVD, &ssk->conn.flags)) {
			sdp_warn_peer(ssk, "data after DisConn; aborting\n");
			goto abort;
		}
		if (sdp_rx_closed(ssk)) {
			/* Nobody will read it: like TCP, reset. */
			__sdp_abort(ssk, SDP_ABORT_REASON_DATA, -ECONNRESET);
			return false;
		}
		ssk->conn.rx_seq += payload;
		b->mid = SDP_MID_DATA;
		b->len = payload;
		b->off = 0;
		if (h->flags & SDP_OOB_PRES)
			sdp_rx_urg(ssk, b);
		if (!b->len)
			return false;	/* it held only the urgent byte */
		list_add_tail(&b->node, &ssk->conn.rx_queue);
		ssk->conn.rx_bytes += b->len;
		ssk->conn.rx_last = jiffies;
		sdp_rx_grow_due(ssk);
		return true;
	case SDP_MID_DISCONN:
		sdp_close_disconn_rcvd(ssk);
		return false;
	case SDP_MID_ABORT:
		/* As a TCP reset: EPIPE if we had seen the peer's FIN. */
		__sdp_abort(ssk, SDP_ABORT_REASON_PEER,
			    sk->sk_state == TCP_CLOSE_WAIT ? -EPIPE : -ECONNRESET);
		return false;
	case SDP_MID_SRCAVAIL:
		ssk->conn.rx_last = jiffies;
		fallthrough;
	case SDP_MID_RDMA_RD_COMPL:
	case SDP_MID_SENDSM:
	case SDP_MID_SRCAVAIL_CANCEL:
		return sdp_zc_rx_msg(ssk, b, payload);
	case SDP_MID_CHRCVBUF_ACK: {
		const struct sdp_crbah *ca = (const void *)(h + 1);
		u32 size, from;

		if (payload != sizeof(*ca)) {
			sdp_warn_peer(ssk, "ChRcvBufAck with %u bytes after the BSDH; aborting\n",
				      payload);
			goto abort;
		}
		size = be32_to_cpu(ca->size);
		from = be32_to_cpu(ca->mseq);
		switch (sdp_crbah_check(size, from, ssk->conn.tx_max,
					ssk->conn.tx_mseq_next,
					test_bit(SDP_C_PEER_RESIZED, &ssk->conn.flags) &&
					sdp_mseq_after(ssk->conn.tx_max_mseq,
						       ssk->conn.tx_mseq_next))) {
		case SDP_CRBAH_OK:
			break;
		case SDP_CRBAH_SIZE:
			sdp_warn_peer(ssk, "ChRcvBufAck of %u-byte buffers; aborting\n",
				      size);
			goto abort;
		case SDP_CRBAH_EARLY:
			/* The last one binds from that one. */
			sdp_warn_peer(ssk, "ChRcvBufAck before message %u was sent; aborting\n",
				      ssk->conn.tx_max_mseq);
			goto abort;
		case SDP_CRBAH_LATE:
			sdp_warn_peer(ssk, "smaller ChRcvBufAck from sent message %u; aborting\n",
				      from);
			goto abort;
		case SDP_CRBAH_FAR:
			/* Beyond what the peer can have posted. */
			sdp_warn_peer(ssk, "smaller ChRcvBufAck from far message %u; aborting\n",
				      from);
			goto abort;
		}
		/*
		 * Messages from its mseq on may be that big, the ones before
		 * still land in its old buffers (sdp_tx_push()).  A send that
		 * fills a slot may read the old size: a slot bigger than
		 * a message goes in parts.
		 */
		ssk->conn.tx_prev_max = ssk->conn.tx_max;
		ssk->conn.tx_max_mseq = from;
		set_bit(SDP_C_PEER_RESIZED, &ssk->conn.flags);
		WRITE_ONCE(ssk->conn.tx_max, sdp_peer_tx_max(size));
		if (ssk->conn.tx_max > ssk->conn.tx_prev_max)
			sdp_tx_repack(ssk);
		return false;
	}
	default:
		sdp_warn_peer(ssk, "unsupported message id %#x; aborting\n",
			      h->mid);
		goto abort;
	}
abort:
	__sdp_abort(ssk, SDP_ABORT_REASON_PROTO, -ECONNRESET);
	return false;
}

static void sdp_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_sock *ssk = cq->cq_context;
	struct sdp_buf *b = container_of(wc->wr_cqe, struct sdp_buf, cqe);
	struct sock *sk = &ssk->sk;
	bool queued = false, data = false;

	spin_lock(&ssk->lock);
	/* Every receive posted completes once, flushed or not. */
	DEBUG_NET_WARN_ON_ONCE(!ssk->conn.rx_posted ||
			       (b->size < SDP_BUF_SIZE &&
				!ssk->conn.rx_small_posted));
	ssk->conn.rx_posted--;
	if (b->size < SDP_BUF_SIZE)
		ssk->conn.rx_small_posted--;
	if (wc->status != IB_WC_SUCCESS) {
		/*
		 * A flush means the QP went to the error state, which a CM
		 * event (reject, disconnect) or our own teardown explains;
		 * they decide what the socket sees.  Anything else is fatal.
		 */
		if (wc->status != IB_WC_WR_FLUSH_ERR &&
		    !test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
			net_warn_ratelimited("receive completion error %s\n",
					     ib_wc_status_msg(wc->status));
			__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
		}
		goto out;
	}
	if (test_bit(SDP_C_ABORT, &ssk->conn.flags))
		goto out;

	ib_dma_sync_single_for_cpu(ssk->conn.sdev->ibdev, b->dma, b->size,
				   DMA_FROM_DEVICE);
	if ((wc->wc_flags & IB_WC_WITH_INVALIDATE) &&
	    !sdp_zc_rx_inv(ssk, b, wc->byte_len, wc->ex.invalidate_rkey)) {
		__sdp_abort(ssk, SDP_ABORT_REASON_PROTO, -ECONNRESET);
		goto out;
	}
	queued = sdp_rx_msg(ssk, b, wc->byte_len);
	data = queued;
	if (!queued && !test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		if (sdp_post_recv(ssk, b))
			__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
	}
	/* New credits may let queued control messages go. */
	sdp_tx_try_control(ssk);
out:
	spin_unlock(&ssk->lock);

	if (data)
		sk->sk_data_ready(sk);
	if (sdp_data_credit_ok(ssk->conn.tx_credits))
		sk->sk_write_space(sk);
}

/* Repost a fully read buffer; ssk->lock held. */
void sdp_rx_consumed(struct sdp_sock *ssk, struct sdp_buf *b)
{
	lockdep_assert_held(&ssk->lock);
	list_del_init(&b->node);
	if (test_bit(SDP_C_ABORT, &ssk->conn.flags) ||
	    test_bit(SDP_C_CM_DISCONNECT, &ssk->conn.flags))
		return;
	if (sdp_post_recv(ssk, b))
		__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
}

/* Is there data beyond the first @skip unread bytes, or news? */
static bool sdp_rx_ready(struct sock *sk, size_t skip)
{
	return READ_ONCE(sdp_sk(sk)->conn.rx_bytes) > skip ||
	       READ_ONCE(sk->sk_err) || sdp_fb(sdp_sk(sk)) ||
	       (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN);
}

/*
 * Find the queued buffer holding the byte @skip bytes into the unread
 * data, and that byte's offset in its payload.  ssk->lock held.
 */
static struct sdp_buf *sdp_rx_find(struct sdp_sock *ssk, size_t skip,
				   u32 *off)
{
	struct sdp_buf *b;

	lockdep_assert_held(&ssk->lock);
	list_for_each_entry(b, &ssk->conn.rx_queue, node) {
		u32 avail = b->len - b->off;

		if (skip < avail) {
			*off = b->off + skip;
			return b;
		}
		skip -= avail;
	}
	return NULL;
}

/*
 * How much of @want a read @peeked bytes ahead may take before the urgent
 * mark; 0 when it is at the mark.  ssk->lock held.
 */
static size_t sdp_rx_urg_limit(struct sdp_sock *ssk, size_t peeked,
			       size_t want)
{
	if (ssk->conn.urg_state == SDP_URG_NONE || peeked > ssk->conn.urg_ahead)
		return want;
	return min_t(size_t, want, ssk->conn.urg_ahead - peeked);
}

/* recv(MSG_OOB): the urgent byte, as tcp_recv_urg() gives it. */
static int sdp_recv_urg(struct sock *sk, struct msghdr *msg, size_t len,
			int flags)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	int state, ret;
	u8 c;

	spin_lock_bh(&ssk->lock);
	state = ssk->conn.urg_state;
	c = ssk->conn.urg_byte;
	if (state == SDP_URG_VALID && !(flags & MSG_PEEK))
		WRITE_ONCE(ssk->conn.urg_state, SDP_URG_READ);
	spin_unlock_bh(&ssk->lock);

	if (sock_flag(sk, SOCK_URGINLINE) || state == SDP_URG_READ)
		return -EINVAL;
	if (state == SDP_URG_VALID) {
		msg->msg_flags |= MSG_OOB;
		if (!len) {
			msg->msg_flags |= MSG_TRUNC;
			return 0;
		}
		if (!(flags & MSG_TRUNC) && copy_to_iter(&c, 1, &msg->msg_iter) != 1)
			ret = -EFAULT;
		else
			ret = 1;
		return ret;
	}
	if (sk->sk_state == TCP_LISTEN)
		return -ENOTCONN;
	/* No urgent data: EINVAL, as TCP without urgent data pending. */
	return -EINVAL;
}

/*
 * Sleep until data may be there, as sk_wait_event() does, with the CQ's
 * events handed to us meanwhile (sdp_cq_wait_begin()).  Those are
 * handled before lock_sock() is taken again: its holder may be waiting
 * for exactly those completions (ib_drain_qp() in sdp_conn_free()).
 */
static void sdp_rx_wait(struct sock *sk, long *timeo, size_t peeked,
			struct wait_queue_entry *wait)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	add_wait_queue(sk_sleep(sk), wait);
	sdp_cq_wait_begin(ssk);
	release_sock(sk);
	if (!sdp_rx_ready(sk, peeked))
		*timeo = wait_woken(wait, TASK_INTERRUPTIBLE, *timeo);
	sdp_cq_wait_end(ssk);
	lock_sock(sk);
	remove_wait_queue(sk_sleep(sk), wait);
}

int sdp_recvmsg_locked(struct sock *sk, struct msghdr *msg, size_t len,
		       int flags)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sdp_sock *ssk = sdp_sk(sk);
	bool peek = flags & MSG_PEEK;
	size_t copied = 0, peeked = 0, lim;
	int target, err = 0;
	long timeo;

	if (flags & MSG_OOB)
		return sdp_recv_urg(sk, msg, len, flags);
	if (sk->sk_state == TCP_LISTEN)
		return -ENOTCONN;

	timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	target = sock_rcvlowat(sk, flags & MSG_WAITALL, len);
	/* SO_PEEK_OFF: a peek starts that far into the stream. */
	if (peek)
		peeked = max(sk_peek_offset(sk, flags), 0);

	while (copied < len) {
		struct sdp_buf *b;
		size_t n;
		u32 off;

		/*
		 * Queued buffers leave the queue only here, under lock_sock(),
		 * so @b stays valid while we copy from it unlocked.
		 */
		spin_lock_bh(&ssk->lock);
		b = sdp_rx_find(ssk, peeked, &off);
		lim = sdp_rx_urg_limit(ssk, peeked, len - copied);
		spin_unlock_bh(&ssk->lock);
		/* At the urgent mark: stop, unless it is where we started. */
		if (!lim) {
			if (copied)
				break;
			lim = len - copied;
		}

		if (b && b->mid == SDP_MID_SRCAVAIL) {
			/* An abort's error is in sk_err: below. */
			int n = sdp_zc_recv(sk, msg, b, lim, flags);

			copied += n;
			if (n && copied >= target && !sdp_zc_rx_unread(ssk, b))
				break;
			continue;
		}
		if (b) {
			n = min_t(size_t, b->len - off, lim);
			/* As TCP: MSG_TRUNC takes the bytes without copying. */
			if (!(flags & MSG_TRUNC) &&
			    copy_to_iter(b->data + sizeof(struct sdp_bsdh) + off,
					 n, &msg->msg_iter) != n) {
				err = -EFAULT;
				break;
			}
			copied += n;
			if (peek) {
				peeked += n;
			} else {
				spin_lock_bh(&ssk->lock);
				b->off += n;
				ssk->conn.rx_bytes -= n;
				sdp_rx_urg_advance(ssk, n);
				if (b->off == b->len)
					sdp_rx_consumed(ssk, b);
				spin_unlock_bh(&ssk->lock);
			}
			/* As TCP: take what is queued, up to @len or a mark. */
			continue;
		}

		/* Nothing (more) queued: stop, fail or wait. */
		if (copied >= target)
			break;
		if (copied && (sk->sk_err || (sk->sk_shutdown & RCV_SHUTDOWN) ||
			       signal_pending(current)))
			break;
		/*
		 * As TCP's SOCK_DONE: once the peer's DisConn came, the
		 * reader gets end of stream, also when a reset followed,
		 * unless the reset cut off zero-copy data (sdp_zc_rx_lost()).
		 */
		if (test_bit(SDP_C_DISCONN_RCVD, &ssk->conn.flags) &&
		    !test_bit(SDP_ZR_LOST, &ssk->conn.zc_rx.flags))
			break;
		if (sdp_fb(ssk)) {	/* it went on over TCP: ask that */
			err = -ENOTCONN;
			break;
		}
		if (sk->sk_err) {
			err = sock_error(sk);
			break;
		}
		if (sk->sk_shutdown & RCV_SHUTDOWN)
			break;
		if (sk->sk_state == TCP_CLOSE) {
			err = -ENOTCONN;
			break;
		}
		err = sdp_wait_check(timeo);
		if (err)
			break;
		sdp_busy_poll(sk, sdp_rx_ready, peeked);
		if (sdp_rx_ready(sk, peeked))
			continue;
		sdp_rx_wait(sk, &timeo, peeked, &wait);
	}

	/* SO_PEEK_OFF moves on with a peek, back with a read. */
	if (peek)
		sk_peek_offset_fwd(sk, copied);
	else
		sk_peek_offset_bwd(sk, copied);
	if (!peek) {
		/* Freed buffers may be worth a credit update. */
		spin_lock_bh(&ssk->lock);
		if (test_bit(SDP_C_QP, &ssk->conn.flags))
			sdp_tx_try_control(ssk);
		spin_unlock_bh(&ssk->lock);
	}
	return copied ? copied : err;
}
