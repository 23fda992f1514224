// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- send path: the send rings, credits, and
 * sendmsg().
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Data goes through a ring of tx_count slots.  A slot gets a buffer
 * (allocated and DMA-mapped) when a send needs it and it has none: that
 * of a slot not in use, or a new one (sdp_tx_slot_ready()); tx_alloc
 * slots have one, so a connection holds no more buffers than it ever
 * had messages waiting or in flight.  Indices only grow (slot = index %
 * tx_count), but start over at 0 when a send finds the ring empty:
 *
 *   tx_tail <= tx_post <= tx_head <= tx_tail + tx_count,
 *   slot tx_head is being filled while tx_fill > 0
 *
 * [tx_tail, tx_post) are posted and wait for their completion,
 * [tx_post, tx_head) are full and wait for a credit (slot tx_post, when
 * bigger than the peer's buffers, goes in parts: sdp_tx_push()).
 * sendmsg() copies user data into slot tx_head without ssk->lock (no one
 * else touches that slot) and commits it (tx_head++) when it is full or
 * the message ends without MSG_MORE/TCP_CORK.  Committed slots are posted, from sendmsg()
 * or from the receive completion that brought credits, while at least
 * SDP_DATA_MIN_CREDITS credits are left: the last credit is reserved for
 * control messages, so that a credit update can always be sent.
 *
 * A zero-copy send (sdp_zc_tx.c) puts its SrcAvail into slot tx_head as
 * well (sdp_buf::mid), so it goes out in stream order behind the data.
 *
 * Control messages have a ring of their own (sdp_ctrl.c).
 */
#include <linux/dma-mapping.h>
#include <linux/sched/signal.h>
#include <linux/uio.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_cq.h"
#include "sdp_ctrl.h"
#include "sdp_dev.h"
#include "sdp_ka.h"
#include "sdp_mem.h"
#include "sdp_net.h"
#include "sdp_proto.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_wire.h"
#include "sdp_zc.h"

#define SDP_HDR	sizeof(struct sdp_bsdh)

static void sdp_tx_done(struct ib_cq *cq, struct ib_wc *wc);

/*
 * The ring invariant above, in running indices: tx_tail <= tx_post <=
 * tx_head <= tx_tail + tx_count.  ssk->lock held.
 */
static bool sdp_tx_ring_ok(const struct sdp_conn *c)
{
	return c->tx_post - c->tx_tail <= c->tx_head - c->tx_tail &&
	       c->tx_head - c->tx_tail <= c->tx_count;
}

/*
 * The send rings at connection setup: the control ring with its buffers,
 * and the data ring without any (sdp_tx_ring_ready() gives them at the
 * first send).
 */
int sdp_tx_ring_alloc(struct sdp_sock *ssk)
{
	struct ib_device *dev = ssk->conn.sdev->ibdev;

	ssk->conn.tx_slots = ssk->conn.tx_count;
	ssk->conn.tx_ring = sdp_ring_alloc(ssk->conn.tx_slots, sdp_tx_done);
	ssk->conn.ctrl_ring = sdp_ring_alloc(SDP_CTRL_BUFS, sdp_ctrl_done);
	if (!ssk->conn.tx_ring || !ssk->conn.ctrl_ring ||
	    sdp_ring_fill(dev, ssk->conn.ctrl_ring, 0, SDP_CTRL_BUFS, SDP_CTRL_SIZE,
			  DMA_TO_DEVICE)) {
		sdp_tx_ring_free(ssk);
		return -ENOMEM;
	}
	ssk->conn.tx_alloc = 0;
	return 0;
}

/*
 * Make the data ring ready for a send, the first or the first after
 * sdp_tx_ring_idle() took its buffers: tx_slots slots, or SDP_MIN_BUFS
 * under memory pressure.  No buffer yet: sdp_tx_slot_ready() gives a
 * slot one when a send needs it.  An empty ring starts over
 * at slot 0, so that a connection that only ever has a message or two
 * in flight (requests and answers) keeps using the same few buffers.
 * lock_sock() held.
 */
void sdp_tx_ring_ready(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	sock_owned_by_me(sk);
	WRITE_ONCE(ssk->conn.tx_last, jiffies);
	spin_lock_bh(&ssk->lock);
	if (ssk->conn.tx_tail == ssk->conn.tx_head && !ssk->conn.tx_fill &&
	    !ssk->conn.zc_tx.len && !ssk->zc_async) {
		ssk->conn.tx_head = 0;
		ssk->conn.tx_post = 0;
		ssk->conn.tx_tail = 0;
	}
	if (!ssk->conn.tx_alloc)	/* the ring is empty: no slot moves */
		ssk->conn.tx_count = sdp_mem_under_pressure(sock_net(sk)) ?
				min_t(unsigned int, ssk->conn.tx_slots,
				      SDP_MIN_BUFS) : ssk->conn.tx_slots;
	spin_unlock_bh(&ssk->lock);
}

/*
 * Move the buffer of a slot that is not in use (not in [tx_tail,
 * tx_head]) to slot @i, which has none.  Returns false if no such slot
 * has one.  ssk->lock held.
 */
static bool sdp_tx_slot_borrow(struct sdp_sock *ssk, unsigned int i)
{
	unsigned int used = ssk->conn.tx_head - ssk->conn.tx_tail, k, j;
	struct sdp_buf *d = &ssk->conn.tx_ring[i], *b;

	lockdep_assert_held(&ssk->lock);
	for (k = 1; k < ssk->conn.tx_count; k++) {
		j = (i + k) % ssk->conn.tx_count;
		b = &ssk->conn.tx_ring[j];
		if ((j - ssk->conn.tx_tail % ssk->conn.tx_count + ssk->conn.tx_count) %
		    ssk->conn.tx_count < used || !b->data)
			continue;
		sdp_buf_swap_mem(d, b);
		return true;
	}
	return false;
}

/*
 * Give slot tx_head a buffer if it has none yet: that of a slot not in
 * use, or a new one.  A connection thus holds as many send buffers as
 * it ever had messages waiting or in flight at once, wherever in the
 * ring they were.  An established connection keeps working above
 * net.sdp.mem's limit (the charge is forced); only new connections are
 * refused.  The first buffer starts the quiet-time check
 * (sdp_tx_ring_idle()).  lock_sock() held.
 *
 * Return: 0, -EPIPE when the connection has no QP (any more), -ENOMEM.
 */
int sdp_tx_slot_ready(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct mem_cgroup *old;
	unsigned long idle;
	unsigned int i;
	bool ready;
	int err;

	sock_owned_by_me(sk);
	if (!test_bit(SDP_C_QP, &ssk->conn.flags))
		return -EPIPE;
	spin_lock_bh(&ssk->lock);
	i = ssk->conn.tx_head % ssk->conn.tx_count;
	ready = ssk->conn.tx_ring[i].data || sdp_tx_slot_borrow(ssk, i);
	spin_unlock_bh(&ssk->lock);
	/*
	 * Slot tx_head stays without a buffer meanwhile: a completion
	 * commits only a slot that was filled.
	 */
	if (ready)
		return 0;
	old = sdp_memcg_enter(sk);
	err = sdp_ring_fill(ssk->conn.sdev->ibdev, ssk->conn.tx_ring, i, i + 1,
			    SDP_BUF_SIZE, DMA_TO_DEVICE);
	sdp_memcg_leave(old);
	if (err)
		return err;
	sdp_mem_charge(ssk, 1, SDP_BUF_SIZE, true);
	spin_lock_bh(&ssk->lock);
	ssk->conn.tx_alloc++;
	spin_unlock_bh(&ssk->lock);
	idle = sdp_sysctl_tx_idle(sock_net(sk));
	if (ssk->conn.tx_alloc == 1 && idle)
		sdp_queue_work_delayed(ssk, idle);
	return 0;
}

/* Has slot tx_head its buffer?  ssk->lock held. */
bool sdp_tx_slot_has_buf(const struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	return ssk->conn.tx_ring[ssk->conn.tx_head % ssk->conn.tx_count].data;
}

/**
 * sdp_tx_ring_idle() - give the send buffers back after a quiet time
 * @ssk: the socket, lock_sock() held (sdp_work())
 *
 * After net.sdp.tx_idle_ms without a send, an empty data ring (nothing
 * committed, posted or being filled, no advertisement of ours) frees its
 * buffers: an idle connection keeps only its receive buffers and the
 * small control ring.  The next send allocates them again.  Nothing
 * changes on the wire: send buffers are not announced to the peer.  A
 * sendmsg() in progress (tx_mutex held, maybe waiting without
 * lock_sock()) keeps them.
 *
 * Return: how long until it should look again, or 0 for not until the
 * next allocation.
 */
unsigned long sdp_tx_ring_idle(struct sdp_sock *ssk)
{
	unsigned long idle = sdp_sysctl_tx_idle(sock_net(&ssk->sk));
	unsigned long due;
	unsigned int n = 0;

	sock_owned_by_me(&ssk->sk);
	if (!ssk->conn.tx_alloc || !idle)
		return 0;
	due = READ_ONCE(ssk->conn.tx_last) + idle;
	if (time_before(jiffies, due))
		return due - jiffies;
	if (!mutex_trylock(&ssk->tx_mutex))
		return idle;
	spin_lock_bh(&ssk->lock);
	if (ssk->conn.tx_tail == ssk->conn.tx_head && !ssk->conn.tx_fill &&
	    !ssk->conn.zc_tx.len && !ssk->zc_async) {
		n = ssk->conn.tx_alloc;
		ssk->conn.tx_alloc = 0;
	}
	spin_unlock_bh(&ssk->lock);
	mutex_unlock(&ssk->tx_mutex);
	if (!n)
		return idle;	/* data in flight: not idle */
	/* Any slots may have them (sdp_tx_slot_borrow()). */
	sdp_ring_drain(ssk->conn.sdev->ibdev, ssk->conn.tx_ring, 0, ssk->conn.tx_slots,
		       DMA_TO_DEVICE);
	sdp_mem_uncharge(ssk, n, SDP_BUF_SIZE);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_TX_RING_RELEASES);
	return 0;
}

/* Unmapped first, then freed, as the receive ring (sdp_rx_ring_free()). */
void sdp_tx_ring_free(struct sdp_sock *ssk)
{
	struct ib_device *dev = ssk->conn.sdev->ibdev;

	sdp_ring_unmap(dev, ssk->conn.tx_ring, ssk->conn.tx_slots, DMA_TO_DEVICE);
	sdp_ring_unmap(dev, ssk->conn.ctrl_ring, SDP_CTRL_BUFS, DMA_TO_DEVICE);
	sdp_ring_free(NULL, ssk->conn.tx_ring, ssk->conn.tx_slots, DMA_TO_DEVICE);
	sdp_ring_free(NULL, ssk->conn.ctrl_ring, SDP_CTRL_BUFS, DMA_TO_DEVICE);
	ssk->conn.tx_ring = NULL;
	ssk->conn.ctrl_ring = NULL;
	ssk->conn.tx_alloc = 0;
}

/*
 * Fill in a BSDH.  With @seq the message takes the next mseq and carries
 * our receive state (which also becomes the limit of what the peer may
 * send); Hello and HelloAck go without (mseq 0).  ssk->lock held.
 */
void sdp_fill_bsdh(struct sdp_sock *ssk, struct sdp_bsdh *h, u8 mid, u32 len,
		   bool seq)
{
	u32 mseq = 0, mseq_ack = 0;

	lockdep_assert_held(&ssk->lock);
	if (seq) {
		mseq = ssk->conn.tx_mseq_next++;
		mseq_ack = ssk->conn.rx_mseq_last;
		/*
		 * Our buffers announced (also the one an empty Send took),
		 * and a ping answered.
		 */
		if (unlikely(test_bit(SDP_C_ANSWER, &ssk->conn.flags)))
			clear_bit(SDP_C_ANSWER, &ssk->conn.flags);
	}
	sdp_bsdh_init(h, mid, len, ssk->conn.rx_posted, mseq, mseq_ack);
	ssk->conn.rx_mseq_limit =
		sdp_mseq_limit_update(ssk->conn.rx_mseq_limit,
				      ssk->conn.rx_mseq_last,
				      ssk->conn.rx_posted);
	DEBUG_NET_WARN_ON_ONCE(sdp_mseq_after(ssk->conn.rx_mseq_last,
					      ssk->conn.rx_mseq_limit));
}

/*
 * Credits a message from us would add to what the peer may already use:
 * our posted buffers minus the messages the peer may still send under our
 * last advertisement (it cannot have more than those in flight).
 * ssk->lock held.
 */
u32 sdp_credit_grant(const struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	return sdp_credit_grant_calc(ssk->conn.rx_posted,
				     sdp_peer_credits(ssk->conn.rx_mseq_last,
						      ssk->conn.rx_mseq_limit));
}

/*
 * Post @len bytes of @b from @off on as one SEND; with @inv, a SEND with
 * Invalidate of the peer's key *@inv.
 */
int sdp_post_send(struct sdp_sock *ssk, struct sdp_buf *b, u32 off, u32 len,
		  const u32 *inv)
{
	struct ib_sge sge = {
		.addr = b->dma + off,
		.length = len,
		.lkey = ssk->conn.pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &b->cqe,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};

	if (inv) {
		wr.opcode = IB_WR_SEND_WITH_INV;
		wr.ex.invalidate_rkey = *inv;
	}
	if (WARN_ON_ONCE(!b->mapped))
		return -EIO;
	b->posted = ktime_get_ns();
	ib_dma_sync_single_for_device(ssk->conn.sdev->ibdev, b->dma + off, len,
				      DMA_TO_DEVICE);
	return ib_post_send(ssk->conn.qp, &wr, NULL);
}

/*
 * Commit the slot being filled, if any, as a message with BSDH @flags;
 * a write held back in it (SDP_C_NAGLE) is no longer.  ssk->lock held.
 */
static void sdp_tx_commit(struct sdp_sock *ssk, u8 flags)
{
	lockdep_assert_held(&ssk->lock);
	if (ssk->conn.tx_fill) {
		struct sdp_buf *b = sdp_tx_slot(&ssk->conn, ssk->conn.tx_head);

		b->mid = SDP_MID_DATA;
		b->flags = flags;
		b->len = ssk->conn.tx_fill;
		b->off = 0;
		ssk->conn.tx_head++;
		ssk->conn.tx_unposted += ssk->conn.tx_fill;
		ssk->conn.tx_fill = 0;
		DEBUG_NET_WARN_ON_ONCE(!sdp_tx_ring_ok(&ssk->conn));
	}
	ssk->conn.tx_held = 0;
	clear_bit(SDP_C_NAGLE, &ssk->conn.flags);
}

/*
 * Half the ring or more is in flight (posted, its completion not yet
 * seen).  With TCP_NODELAY a small write is held back then, as TCP's
 * autocorking holds one while earlier segments still sit in the device's
 * queue: otherwise a burst of small writes would take one message (and
 * one ring slot) each and fill the ring with a few bytes, and writes
 * would fail with EAGAIN long before the send buffer holds what TCP's
 * would.  ssk->lock held.
 */
static bool sdp_tx_ring_busy(const struct sdp_sock *ssk)
{
	const struct sdp_conn *c = &ssk->conn;

	return c->tx_post - c->tx_tail >= max(c->tx_count / 2, 1U);
}

/*
 * May a write held back (SDP_C_NAGLE, sdp_tx_hold()) go now?  Once
 * nothing waits to be posted, with TCP_NODELAY; once nothing is in flight
 * either and the peer acknowledged our last small message, without.  Not
 * while a sendmsg() copies into its slot (that one decides when it is
 * done).  ssk->lock held.
 */
static bool sdp_tx_release(const struct sdp_sock *ssk)
{
	return test_bit(SDP_C_NAGLE, &ssk->conn.flags) &&
	       !test_bit(SDP_C_TX_FILLING, &ssk->conn.flags) &&
	       !test_bit(SDP_C_ABORT, &ssk->conn.flags) &&
	       ssk->conn.tx_post == ssk->conn.tx_head &&
	       ((ssk->conn.tx_tail == ssk->conn.tx_head &&
		 !test_bit(SDP_C_TX_SMALL, &ssk->conn.flags)) ||
		(test_bit(SDP_O_NODELAY, &ssk->opts) &&
		 !sdp_tx_ring_busy(ssk)));
}

/*
 * Payload the next message may carry: what the peer's buffers hold,
 * which after its ChRcvBufAck is still the old size for the messages
 * before tx_max_mseq.  ssk->lock held.
 */
static u32 sdp_tx_msg_room(const struct sdp_sock *ssk)
{
	if (test_bit(SDP_C_PEER_RESIZED, &ssk->conn.flags) &&
	    sdp_mseq_after(ssk->conn.tx_max_mseq, ssk->conn.tx_mseq_next))
		return ssk->conn.tx_prev_max - SDP_HDR;
	return ssk->conn.tx_max - SDP_HDR;
}

/*
 * The peer's buffers changed size (its ChRcvBufAck) from tx_max_mseq on,
 * and the messages before that one land in its buffers of the old size.
 * With no data waiting to be posted, they go as empty Data messages
 * (credit updates):
 * - it shrank: it frees its bigger buffers only as they come back, so a
 *   quiet connection's peer gets its memory back;
 * - it grew, and it may shrink again (SDP_HF_SHRINK): it sends its next
 *   ChRcvBufAck only once message tx_max_mseq came, so a stream whose
 *   last messages made it grow would otherwise keep it grown for good.
 *   That costs the few small buffers it still had posted.
 * ssk->lock held.
 */
static void sdp_tx_return_big(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	while (test_bit(SDP_C_PEER_RESIZED, &ssk->conn.flags) &&
	       (ssk->conn.tx_max < ssk->conn.tx_prev_max ||
		test_bit(SDP_P_SHRINK, &ssk->conn.peer)) &&
	       sdp_mseq_after(ssk->conn.tx_max_mseq, ssk->conn.tx_mseq_next) &&
	       ssk->conn.tx_post == ssk->conn.tx_head &&
	       !sdp_post_ctrl(ssk, SDP_MID_DATA))
		;
}

/*
 * After the send path posted what it could: has committed data started,
 * or stopped, waiting for credits?  Dead-peer detection probes while it
 * waits (persist probes, sdp_ka_credit_stall()); each start is counted.
 * ssk->lock held.
 */
static void sdp_tx_credit_stall(struct sdp_sock *ssk)
{
	bool waiting = ssk->conn.tx_post != ssk->conn.tx_head &&
		       !sdp_data_credit_ok(ssk->conn.tx_credits) &&
		       sdp_tx_usable(ssk);

	lockdep_assert_held(&ssk->lock);
	if (waiting == ssk->ka.stalled)
		return;
	if (waiting)
		sdp_stat_credit_stall(ssk);
	sdp_ka_credit_stall(ssk, waiting);
}

/*
 * Post committed data while credits allow.  A Data slot that holds more
 * than the next message may carry (sdp_tx_fill_room() filled it for a
 * peer that will grow, or the peer's small buffers still come first)
 * goes in parts: the first part as it lies, with the BSDH in front; each
 * later part's BSDH overwrites the last bytes of the part before, so it
 * is posted only once that part's send completed (SDP_C_TX_PIECE;
 * sdp_buf::off counts the payload sent).  The slot's BSDH flags (an
 * urgent byte) go with its last part.  ssk->lock held.
 */
static void sdp_tx_push(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
again:
	while (ssk->conn.tx_post != ssk->conn.tx_head &&
	       !test_bit(SDP_C_TX_PIECE, &ssk->conn.flags) &&
	       sdp_data_credit_ok(ssk->conn.tx_credits) && sdp_tx_usable(ssk)) {
		struct sdp_buf *b = sdp_tx_slot(&ssk->conn, ssk->conn.tx_post);
		struct sdp_bsdh *h = b->data + b->off;
		u32 len = b->len - b->off;

		if (b->mid == SDP_MID_SRCAVAIL &&
		    !sdp_srcavail_credit_ok(ssk->conn.tx_credits))
			break;
		/* Data, or the SrcAvail of a zero-copy send (sdp_zc_tx.c). */
		if (b->mid == SDP_MID_DATA && len >= sdp_tx_msg_room(ssk)) {
			len = sdp_tx_msg_room(ssk);
		} else if (b->mid == SDP_MID_DATA) {
			/* Small: Nagle holds the next small write for it. */
			ssk->conn.tx_small_mseq = ssk->conn.tx_mseq_next;
			set_bit(SDP_C_TX_SMALL, &ssk->conn.flags);
		}
		sdp_fill_bsdh(ssk, h, b->mid, SDP_HDR + len, true);
		if (b->mid == SDP_MID_DATA && b->off + len == b->len)
			h->flags = b->flags;
		if (sdp_post_send(ssk, b, b->off, SDP_HDR + len, NULL)) {
			__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
			return;
		}
		ssk->conn.tx_credits--;
		DEBUG_NET_WARN_ON_ONCE(ssk->conn.tx_credits < 0);
		ssk->conn.rx_data_run = 0;	/* our turn to talk (sdp_rx_grow_due()) */
		if (b->mid == SDP_MID_DATA) {
			ssk->conn.tx_unposted -= len;
			ssk->conn.snd_nxt += len;
			sdp_stat_tx_data(ssk, len);
		} else {
			sdp_zc_tx_sent(ssk);
		}
		if (b->off + len < b->len) {
			b->part = len;
			set_bit(SDP_C_TX_PIECE, &ssk->conn.flags);
			break;
		}
		ssk->conn.tx_post++;
		DEBUG_NET_WARN_ON_ONCE(!sdp_tx_ring_ok(&ssk->conn));
	}
	/* All posted: a write held back for that may follow. */
	if (ssk->conn.tx_fill && sdp_tx_release(ssk) &&
	    sdp_data_credit_ok(ssk->conn.tx_credits) && sdp_tx_usable(ssk)) {
		sdp_tx_commit(ssk, 0);
		goto again;
	}
	sdp_tx_credit_stall(ssk);
}

/*
 * Room in the send ring for the rest of a MSG_ZEROCOPY send in progress
 * that waits for it (sdp_zc_tx.c): sdp_work() copies it.  ssk->lock held.
 */
static void sdp_tx_async_kick(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	if (test_bit(SDP_ZT_ASYNC_FILL, &ssk->conn.zc_tx.flags) &&
	    sdp_tx_room(ssk)) {
		clear_bit(SDP_ZT_ASYNC_FILL, &ssk->conn.zc_tx.flags);
		sdp_queue_work(ssk);
	}
}

/*
 * Send what can go now: committed data, then a DisConn that waits
 * behind it.  Called when credits or buffers may have become free.
 * ssk->lock held.
 */
void sdp_tx_try_control(struct sdp_sock *ssk)
{
	u32 grant;

	lockdep_assert_held(&ssk->lock);
	if (!sdp_tx_usable(ssk))
		return;
	sdp_tx_push(ssk);
	sdp_zc_tx_control(ssk);
	sdp_tx_chrcvbuf_ack(ssk);
	sdp_tx_return_big(ssk);
	sdp_tx_async_kick(ssk);
	/*
	 * DisConn waits for an advertisement of ours to end: a SendSM may
	 * still ask for its rest as Data.  And for a MSG_ZEROCOPY send in
	 * progress, whose rest sdp_work() may still copy.
	 */
	if (test_bit(SDP_C_DISCONN_WANT, &ssk->conn.flags) &&
	    !test_bit(SDP_C_DISCONN_SENT, &ssk->conn.flags) &&
	    ssk->conn.tx_post == ssk->conn.tx_head && !ssk->conn.tx_fill &&
	    !ssk->conn.zc_tx.len &&
	    !ssk->zc_async && !ssk->zc_gather &&
	    !sdp_post_ctrl(ssk, SDP_MID_DISCONN))
		set_bit(SDP_C_DISCONN_SENT, &ssk->conn.flags);

	/*
	 * A credit update, when it lets a peer that may be running short
	 * send data again, or when the buffers it announces add up to half
	 * the ring (sdp_credit_update_due()); or when an answer is due
	 * (SDP_C_ANSWER): over iWARP the peer's empty first Send took a
	 * buffer that no message of ours announced again yet
	 * (sdp_rx_rtr()), the peer pinged (SDP_PING), or our ring grew.
	 */
	grant = sdp_credit_grant(ssk);
	if (test_bit(SDP_C_ANSWER, &ssk->conn.flags) ||
	    sdp_credit_update_due(grant,
				  sdp_peer_credits(ssk->conn.rx_mseq_last,
						   ssk->conn.rx_mseq_limit),
				  ssk->conn.rx_alloc))
		sdp_post_ctrl(ssk, SDP_MID_DATA);
}

/*
 * Commit the slot being filled, if any, with BSDH @flags (SDP_OOB_* for
 * urgent data, sdp_sendmsg_locked()), and send.  ssk->lock held.
 */
static void sdp_tx_flush_flags(struct sdp_sock *ssk, u8 flags)
{
	sdp_tx_commit(ssk, flags);
	sdp_tx_try_control(ssk);
}

/* Commit the slot being filled, if any, and send.  ssk->lock held. */
void sdp_tx_flush(struct sdp_sock *ssk)
{
	sdp_tx_flush_flags(ssk, 0);
}

/*
 * Whether a write that leaves a partly filled slot holds it back:
 * - Nagle, as TCP without TCP_NODELAY: while earlier data has not
 *   completed, or the peer has not acknowledged (with the mseq_ack of a
 *   message of its own) our last message that was shorter than its
 *   buffers (SDP_C_TX_SMALL; TCP's Nagle with Minshall's rule), so that
 *   a stream of small writes goes out as few full messages.  A device
 *   that completes a send as it is posted (Soft-RoCE on 6.1 does) would
 *   otherwise leave nothing to wait for.  The peer's next message may be
 *   far off: SDP_TX_NAGLE_MAX bounds that wait (sdp_tx_cork_expire());
 * - with or without TCP_NODELAY, while committed messages wait for the
 *   peer's credits: each message takes a whole receive buffer of the
 *   peer, so small writes to a peer that does not read would fill both
 *   rings after a few KiB, where TCP buffers hundreds (TCP, too, sends
 *   what its window held back as full segments);
 * - with TCP_NODELAY, while half the ring is in flight
 *   (sdp_tx_ring_busy()).
 * sdp_tx_release() says when it goes.  ssk->lock held.
 */
static bool sdp_tx_hold(const struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	if (!ssk->conn.tx_fill)
		return false;
	return ssk->conn.tx_post != ssk->conn.tx_head || sdp_tx_ring_busy(ssk) ||
	       (!test_bit(SDP_O_NODELAY, &ssk->opts) &&
		(ssk->conn.tx_head != ssk->conn.tx_tail ||
		 test_bit(SDP_C_TX_SMALL, &ssk->conn.flags)));
}

/* Nothing posted or waiting to be.  ssk->lock held. */
bool sdp_tx_idle(const struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	return ssk->conn.tx_tail == ssk->conn.tx_head && !ssk->conn.tx_fill &&
	       ssk->conn.ctrl_tail == ssk->conn.ctrl_head;
}

/* Exchange the buffers (and what they hold) of two unposted slots. */
static void sdp_tx_slot_swap(struct sdp_buf *a, struct sdp_buf *b)
{
	sdp_buf_swap_mem(a, b);
	swap(a->len, b->len);
	swap(a->off, b->off);
	swap(a->mid, b->mid);
	swap(a->flags, b->flags);
}

/**
 * sdp_tx_repack() - pack data that waits for credits into bigger messages
 * @ssk: the socket, ssk->lock held
 *
 * The peer's buffers grew (its ChRcvBufAck raised tx_max), but the Data
 * slots committed before were filled to the old size, and the peer's
 * buffers are counted in messages, not bytes: a sender whose reader is
 * slow would hold an eighth of what it could.  Each waiting slot's
 * payload goes onto the end of the one before it where it fits, and the
 * slots emptied are free again.  Only when everything from tx_post to
 * tx_head is plain Data (no urgent byte, no SrcAvail, whose slot the
 * zero-copy code knows by index), and not while sendmsg() copies into
 * the slot being filled, which moves along with tx_head.
 */
void sdp_tx_repack(struct sdp_sock *ssk)
{
	u32 room = READ_ONCE(ssk->conn.tx_max) - SDP_HDR;
	unsigned int i, dst = ssk->conn.tx_post;
	struct sdp_buf *d, *s;

	lockdep_assert_held(&ssk->lock);
	if (ssk->conn.tx_head - ssk->conn.tx_post < 2 ||
	    test_bit(SDP_C_TX_FILLING, &ssk->conn.flags) ||
	    test_bit(SDP_C_TX_PIECE, &ssk->conn.flags))
		return;
	for (i = ssk->conn.tx_post; i != ssk->conn.tx_head; i++) {
		s = sdp_tx_slot(&ssk->conn, i);
		if (s->mid != SDP_MID_DATA || s->flags)
			return;
	}
	for (i = ssk->conn.tx_post + 1; i != ssk->conn.tx_head; i++) {
		d = sdp_tx_slot(&ssk->conn, dst);
		s = sdp_tx_slot(&ssk->conn, i);
		if (d->len + s->len <= room) {
			memcpy(d->data + SDP_HDR + d->len, s->data + SDP_HDR,
			       s->len);
			d->len += s->len;
			s->len = 0;
			continue;
		}
		dst++;
		if (dst != i)
			sdp_tx_slot_swap(sdp_tx_slot(&ssk->conn, dst), s);
	}
	dst++;
	if (dst == ssk->conn.tx_head)
		return;
	/* The slot being filled, if any, is the new tx_head. */
	if (ssk->conn.tx_fill)
		sdp_tx_slot_swap(sdp_tx_slot(&ssk->conn, dst),
				 sdp_tx_slot(&ssk->conn, ssk->conn.tx_head));
	ssk->conn.tx_head = dst;
	DEBUG_NET_WARN_ON_ONCE(!sdp_tx_ring_ok(&ssk->conn));
}

/*
 * Payload the slot being filled may take: as much as one message to the
 * peer carries.  But a peer on small buffers that may grow them (its
 * Hello had SDP_HF_RESIZE; it started on them, or shrank back to them)
 * would leave a writer that runs ahead of it with only tx_count small
 * slots, a fraction of what the ring holds once it grew: once half the
 * ring is committed, slots fill to the size of our buffers, and go in
 * parts of what the peer takes (sdp_tx_push()), one at a time, until its
 * ChRcvBufAck.  A slot that went beyond the peer's size goes on to ours.
 * Read without ssk->lock by poll().
 */
static u32 sdp_tx_fill_room(const struct sdp_sock *ssk)
{
	u32 room = READ_ONCE(ssk->conn.tx_max) - SDP_HDR;

	if (test_bit(SDP_P_RESIZE, &ssk->conn.peer) &&
	    room < SDP_BUF_SIZE - SDP_HDR &&
	    (READ_ONCE(ssk->conn.tx_fill) > room ||
	     READ_ONCE(ssk->conn.tx_head) - READ_ONCE(ssk->conn.tx_tail) >=
	     ssk->conn.tx_count / 2))
		room = SDP_BUF_SIZE - SDP_HDR;
	return room;
}

/*
 * Bytes written but not sent yet: waiting for credits, in the slot being
 * filled, of an advertisement of ours not posted yet, or of a
 * MSG_ZEROCOPY send in progress in neither (SIOCOUTQNSD, TCP_INFO's
 * tcpi_notsent_bytes).  ssk->lock held.
 */
u32 sdp_tx_notsent(const struct sdp_sock *ssk)
{
	const struct sdp_zc_tx *zt = &ssk->conn.zc_tx;
	u32 n;

	lockdep_assert_held(&ssk->lock);
	n = ssk->conn.tx_unposted + ssk->conn.tx_fill + sdp_zc_unsent(ssk);
	if (zt->len && !test_bit(SDP_ZT_SENT, &zt->flags))
		n += zt->len - zt->acked;
	return n;
}

/* Can the send ring take at least one byte now? */
bool sdp_tx_room(const struct sdp_sock *ssk)
{
	u32 lowat = READ_ONCE(ssk->tcp.notsent_lowat);
	u32 room = sdp_tx_fill_room(ssk);

	/*
	 * TCP_NOTSENT_LOWAT: no room while that much waits for credits to
	 * be posted (a slot still being filled does not count: with
	 * TCP_CORK it would wait for this very writer).
	 */
	if (lowat && READ_ONCE(ssk->conn.tx_unposted) >= lowat)
		return false;
	if (ssk->conn.tx_fill && ssk->conn.tx_fill < room)
		return true;
	/*
	 * A slot full to the room it has now (the peer's ChRcvBufAck may
	 * have made that less than it holds) is committed first.
	 */
	return ssk->conn.tx_head - ssk->conn.tx_tail + !!ssk->conn.tx_fill <
	       ssk->conn.tx_count;
}

/*
 * Can sendmsg() take at least one byte without waiting?  Not while a
 * nonblocking MSG_ZEROCOPY send that returned is still in progress: the
 * rest of it may have to follow as Data (sdp_zc_tx.c).
 */
bool sdp_tx_writable(const struct sdp_sock *ssk)
{
	return !READ_ONCE(ssk->zc_async) && sdp_tx_room(ssk);
}

/*
 * A send of ours completed, acknowledged by the peer: a round-trip
 * sample for the estimator TCP uses (RFC 6298).  ssk->lock held.
 */
void sdp_rtt_sample(struct sdp_sock *ssk, const struct sdp_buf *b)
{
	struct sdp_rtt *r = &ssk->conn.rtt;
	u32 us = clamp_t(u64, div_u64(ktime_get_ns() - b->posted,
				      NSEC_PER_USEC), 1, U32_MAX / 8);
	s32 d;

	lockdep_assert_held(&ssk->lock);
	if (!r->srtt8) {
		r->srtt8 = us << 3;
		r->mdev4 = us << 1;	/* a variation of half the sample */
		r->min = us;
		return;
	}
	d = us - (r->srtt8 >> 3);
	r->srtt8 += d;
	r->mdev4 = r->mdev4 - (r->mdev4 >> 2) + abs(d);
	r->min = min(r->min, us);
}

static void sdp_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_sock *ssk = cq->cq_context;
	struct sdp_buf *b = container_of(wc->wr_cqe, struct sdp_buf, cqe);
	bool ok = wc->status == IB_WC_SUCCESS;
	struct sock *sk = &ssk->sk;
	bool part;

	spin_lock(&ssk->lock);
	if (ok)
		sdp_rtt_sample(ssk, b);
	part = ssk->conn.tx_tail == ssk->conn.tx_post &&
	       test_and_clear_bit(SDP_C_TX_PIECE, &ssk->conn.flags);
	if (part) {
		/* A part of slot tx_post: the next may go (sdp_tx_push()). */
		ssk->conn.tx_bytes -= b->part;
		ssk->conn.snd_una += ok ? b->part : 0;
		b->off += b->part;
	} else {
		/* Every send posted completes once, flushed or not. */
		DEBUG_NET_WARN_ON_ONCE(ssk->conn.tx_tail == ssk->conn.tx_post);
		ssk->conn.tx_tail++;
		if (b->mid == SDP_MID_DATA) {
			ssk->conn.tx_bytes -= b->len - b->off;
			ssk->conn.snd_una += ok ? b->len - b->off : 0;
		}
		b->off = 0;
	}
	/* Nothing in flight any more: a write held back goes. */
	if (sdp_tx_release(ssk))
		sdp_tx_flush(ssk);
	/* As on the receive side, only a non-flush error is ours to act on. */
	if (!ok && wc->status != IB_WC_WR_FLUSH_ERR &&
	    !test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		net_warn_ratelimited("send completion error %s\n",
				     ib_wc_status_msg(wc->status));
		__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR,
			    sdp_wc_errno(wc->status));
	}
	if (part)
		sdp_tx_try_control(ssk);
	if (sdp_tx_idle(ssk))
		sdp_close_check_done(ssk);
	sdp_zc_sq_progress(ssk);
	sdp_tx_async_kick(ssk);
	spin_unlock(&ssk->lock);
	sk->sk_write_space(sk);
}

/*
 * Wait for room, or, for a sendmsg() of spliced pages (@spliced), for
 * spliced pages to be gathered again (sdp_zc_gathering()).
 */
static bool sdp_tx_wait_cond(struct sock *sk, bool spliced)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	return sdp_tx_writable(ssk) || (spliced && sdp_zc_gathering(ssk)) ||
	       READ_ONCE(sk->sk_err) ||
	       (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN);
}

static int sdp_tx_wait(struct sock *sk, long *timeo, bool spliced)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	int err = sdp_wait_check(*timeo);

	if (err)
		return err;
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	add_wait_queue(sk_sleep(sk), &wait);
	sk_wait_event(sk, timeo, sdp_tx_wait_cond(sk, spliced), &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

/* Wait for a connection under way to be established (as TCP does). */
static int sdp_wait_connect(struct sock *sk, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	while ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		int err = sock_error(sk) ?: sdp_wait_check(*timeo);

		if (err)
			return err;
		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, timeo,
			      READ_ONCE(sk->sk_err) ||
			      !((1 << READ_ONCE(sk->sk_state)) &
				(TCPF_SYN_SENT | TCPF_SYN_RECV)), &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	}
	return 0;
}

/**
 * sdp_tx_cork_expire() - send a write held back too long
 * @ssk: the socket, lock_sock() held (sdp_work())
 *
 * A partial message held back for MSG_MORE or TCP_CORK goes after
 * SDP_TX_CORK_MAX, as TCP sends a corked partial segment after 200 ms: a
 * program whose last write said more was to come (sendfile() past the
 * end of its file does) is not left with bytes that never go.
 *
 * Return: how long until it should look again, or 0 for nothing held.
 */
unsigned long sdp_tx_cork_expire(struct sdp_sock *ssk)
{
	unsigned long due, again = 0;

	sock_owned_by_me(&ssk->sk);
	spin_lock_bh(&ssk->lock);
	if (ssk->conn.tx_held && ssk->conn.tx_fill &&
	    test_bit(SDP_C_NAGLE, &ssk->conn.flags)) {
		/*
		 * Held by Nagle: no acknowledgment came, go as if it had.
		 * It may still wait for completions or credits, which end
		 * that wait by themselves.
		 */
		due = ssk->conn.tx_held + SDP_TX_NAGLE_MAX;
		if (time_before(jiffies, due)) {
			again = due - jiffies;
		} else {
			ssk->conn.tx_held = 0;
			clear_bit(SDP_C_TX_SMALL, &ssk->conn.flags);
			sdp_tx_try_control(ssk);
		}
	} else if (ssk->conn.tx_held && ssk->conn.tx_fill) {
		due = ssk->conn.tx_held + SDP_TX_CORK_MAX;
		if (time_before(jiffies, due))
			again = due - jiffies;
		else
			sdp_tx_flush(ssk);
	}
	spin_unlock_bh(&ssk->lock);
	return again;
}

/**
 * sdp_tx_fill() - copy the next bytes into the send ring, without waiting
 * @ssk: the socket, lock_sock() held; the one filler (sendmsg() under
 *	tx_mutex, or sdp_work() for a MSG_ZEROCOPY send in progress, which
 *	keeps sendmsg() out)
 * @from: the bytes
 * @max: how many at most
 * @keep: leave the slot open even if the last of the @max bytes fills it
 *	(urgent data commits it with its flags)
 *
 * Return: bytes copied, at most one slot's room; 0 when the ring has no
 * room now (sdp_tx_room()); -EPIPE without a QP, -ENOMEM without a
 * buffer, -EFAULT.
 */
ssize_t sdp_tx_fill(struct sdp_sock *ssk, struct iov_iter *from, size_t max,
		    bool keep)
{
	struct sdp_buf *b;
	u32 off, room;
	size_t n;
	int err;

	for (;;) {
		err = sdp_tx_slot_ready(ssk);
		if (err)
			return err;
		spin_lock_bh(&ssk->lock);
		if (!sdp_tx_room(ssk)) {
			spin_unlock_bh(&ssk->lock);
			return 0;
		}
		/*
		 * A completion may have committed what a write held back
		 * (sdp_tx_release()) since: the next slot may need its
		 * buffer first.
		 */
		if (!sdp_tx_slot_has_buf(ssk)) {
			spin_unlock_bh(&ssk->lock);
			continue;
		}
		room = sdp_tx_fill_room(ssk);
		if (ssk->conn.tx_fill < room)
			break;
		/* Full, and another slot is free (sdp_tx_room()). */
		sdp_tx_flush(ssk);
		spin_unlock_bh(&ssk->lock);
	}
	b = sdp_tx_slot(&ssk->conn, ssk->conn.tx_head);
	off = SDP_HDR + ssk->conn.tx_fill;
	n = min_t(size_t, SDP_HDR + room - off, max);
	/* A completion-time release must wait for this copy. */
	set_bit(SDP_C_TX_FILLING, &ssk->conn.flags);
	spin_unlock_bh(&ssk->lock);

	/* Slot tx_head is ours alone until it is committed. */
	err = copy_from_iter_full(b->data + off, n, from) ? 0 : -EFAULT;

	spin_lock_bh(&ssk->lock);
	clear_bit(SDP_C_TX_FILLING, &ssk->conn.flags);
	if (!err) {
		ssk->conn.tx_fill += n;
		ssk->conn.tx_bytes += n;
		if (ssk->conn.tx_fill >= room && !(keep && n == max))
			sdp_tx_flush(ssk);
	}
	spin_unlock_bh(&ssk->lock);
	return err ?: n;
}

/**
 * sdp_sendmsg_locked() - sendmsg() of a connected socket
 * @sk: the socket, lock_sock() and tx_mutex held
 * @msg: the data
 * @len: its length
 * @zc_note: a MSG_ZEROCOPY send's notification (sdp_msgzc_start()), or
 *	NULL; set to NULL when a nonblocking send in progress took it
 *	(sdp_zc_send_async())
 * @spliced: @msg holds pages spliced to the socket (sendfile(), splice()),
 *	on which a reference may be kept (sdp_zc_splice())
 *
 * Return: bytes taken, or a negative errno.
 */
int sdp_sendmsg_locked(struct sock *sk, struct msghdr *msg, size_t len,
		       struct sk_buff **zc_note, bool spliced)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	bool more = msg->msg_flags & MSG_MORE;
	bool oob = msg->msg_flags & MSG_OOB;
	bool zc_off = oob;	/* urgent data goes in Data messages */
	bool held = false, nagle = false;
	size_t copied = 0;
	long timeo;
	int err = 0;
	u32 gen;

	timeo = sock_sndtimeo(sk, msg->msg_flags & MSG_DONTWAIT);
	if (!((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT))) {
		err = sdp_wait_connect(sk, &timeo);
		if (err)
			goto out_err;
		/* It went on over TCP: the caller asks that. */
		if (sdp_fb(ssk)) {
			err = -ENOTCONN;
			goto out_err;
		}
		if (!((1 << sk->sk_state) & (TCPF_ESTABLISHED |
					     TCPF_CLOSE_WAIT))) {
			err = -EPIPE;
			goto out_err;
		}
	}

	sdp_tx_ring_ready(ssk);
	/*
	 * The send goes on this connection only: one that a connect() again
	 * made while we slept is not it (sdp_sock::conn_gen).
	 */
	gen = ssk->conn_gen;

	while (copied < len) {
		unsigned long base;
		size_t max, seg;
		ssize_t n;

		if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN) ||
		    ssk->conn_gen != gen) {
			err = -EPIPE;
			goto out_err;
		}
		/* Spliced pages gathered go before other data. */
		if (ssk->zc_gather && (zc_off || !spliced))
			sdp_zc_gather_seal(ssk);
		/*
		 * Nothing goes before a zero-copy send in progress, or
		 * spliced pages gathered to follow it; but more spliced
		 * pages may join those.
		 */
		if ((READ_ONCE(ssk->zc_async) || ssk->zc_gather) &&
		    !(spliced && !zc_off && sdp_zc_gathering(ssk))) {
			err = sdp_tx_wait(sk, &timeo, spliced && !zc_off);
			if (err)
				goto out_err;
			continue;
		}
		/* sendfile(), splice(): their pages may go zero-copy. */
		if (!zc_off && spliced) {
			n = sdp_zc_splice(sk, &msg->msg_iter, more);
			if (n) {
				copied += n;
				continue;
			}
			/*
			 * Those gathered were sealed, or the spliced pages
			 * held leave no room: try again once they go.
			 * Otherwise these go buffered, after any send in
			 * progress (which must not be spun on here: its end
			 * needs lock_sock()).
			 */
			if (!ssk->zc_gather && (!READ_ONCE(ssk->zc_async) ||
						sdp_zc_gathering(ssk)))
				spliced = false;
			continue;
		}
		/*
		 * A nonblocking MSG_ZEROCOPY send starting with a large
		 * segment advertises it and returns: the peer reads it after.
		 */
		if (!zc_off && !copied && !timeo) {
			n = sdp_zc_send_async(sk, msg, zc_note);
			if (n) {
				copied = n;
				break;
			}
		}
		if (!zc_off && sdp_zc_eligible(sk, msg, timeo)) {
			copied += sdp_zc_send(sk, msg, &timeo, &zc_off, &err);
			if (err)
				goto out_err;
			continue;
		}
		/*
		 * Stop where a segment that may go zero-copy begins (at the
		 * end of this one: never 0 bytes, empty elements are looked
		 * past).
		 */
		max = len - copied;
		if (!zc_off && ssk->zc_thresh &&
		    sdp_iter_user_seg(&msg->msg_iter, &base, &seg))
			max = min(max, seg);
		/* The slot with an urgent last byte is committed below. */
		n = sdp_tx_fill(ssk, &msg->msg_iter, max,
				oob && max == len - copied);
		if (n < 0) {
			err = n;
			goto out_err;
		}
		if (!n) {
			err = sdp_tx_wait(sk, &timeo, false);
			if (err)
				goto out_err;
			continue;
		}
		copied += n;
	}

out:
	spin_lock_bh(&ssk->lock);
	if (oob && copied) {
		/*
		 * As TCP: the last byte written is urgent, and goes at once,
		 * corked or not; the message carrying it has OOB_PRES.
		 */
		sdp_tx_flush_flags(ssk, SDP_OOB_PRES | SDP_OOB_PEND);
	} else if (more || test_bit(SDP_O_CORK, &ssk->opts)) {
		clear_bit(SDP_C_NAGLE, &ssk->conn.flags);	/* held for MSG_MORE */
		if (ssk->conn.tx_fill && !ssk->conn.tx_held) {
			ssk->conn.tx_held = jiffies | 1;
			held = true;
		}
		sdp_tx_try_control(ssk);
	} else if (sdp_tx_hold(ssk)) {
		set_bit(SDP_C_NAGLE, &ssk->conn.flags);
		if (!ssk->conn.tx_held && test_bit(SDP_C_TX_SMALL, &ssk->conn.flags)) {
			ssk->conn.tx_held = jiffies | 1;
			nagle = true;
		}
		sdp_tx_try_control(ssk);
	} else {
		sdp_tx_flush(ssk);
	}
	spin_unlock_bh(&ssk->lock);
	if (held)
		sdp_queue_work_within(ssk, SDP_TX_CORK_MAX);
	else if (nagle)
		sdp_queue_work_within(ssk, SDP_TX_NAGLE_MAX);
	return copied;

out_err:
	if (copied)
		goto out;
	/*
	 * As TCP's sk_stream_error(): a connection that failed reports its
	 * error (once), then EPIPE, which alone raises SIGPIPE.
	 */
	if (err == -EPIPE)
		err = sock_error(sk) ?: -EPIPE;
	if (err == -EPIPE && !(msg->msg_flags & MSG_NOSIGNAL))
		send_sig(SIGPIPE, current, 0);
	return err;
}
