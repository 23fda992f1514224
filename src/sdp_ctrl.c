// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- control messages: their ring, posting and
 * completion.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Control messages (credit update, DisConn, AbortConn, and the zero-copy
 * RdmaRdCompl, SendSM, SrcAvailCancel) are a BSDH and at most a small
 * extra header, and use a ring of their own; they need one credit, and
 * the last credit only goes to one that grants the peer a new credit
 * (__sdp_post_ctrl()).
 *
 * The ring (SDP_CTRL_BUFS buffers of SDP_CTRL_SIZE bytes) comes and goes
 * with the data ring (sdp_tx_ring_alloc(), sdp_tx_ring_free()), and
 * sdp_tx_try_control() sends the control messages that are due.  Its
 * indices only grow (slot = index % SDP_CTRL_BUFS):
 *
 *   ctrl_tail <= ctrl_head <= ctrl_tail + SDP_CTRL_BUFS
 *
 * [ctrl_tail, ctrl_head) are posted and wait for their completion.
 */
#include "sdp.h"
#include "sdp_close.h"
#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_ctrl.h"
#include "sdp_proto.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_wire.h"
#include "sdp_zc.h"

#define SDP_HDR	sizeof(struct sdp_bsdh)

/*
 * Send a control message now: a BSDH with @flags and @extlen bytes of
 * extra header (at most SDP_CTRL_SIZE in all), with Invalidate of the
 * peer's key *@inv unless @inv is NULL.  ssk->lock held.  Returns -EAGAIN
 * when there is no credit or no free control buffer.
 */
static int sdp_post_ctrl_flags(struct sdp_sock *ssk, u8 mid, u8 flags,
			       const void *ext, u32 extlen, const u32 *inv)
{
	struct sdp_buf *b;
	int err;

	lockdep_assert_held(&ssk->lock);
	if (!sdp_tx_usable(ssk) && mid != SDP_MID_ABORT)
		return -ENOTCONN;
	/*
	 * One credit, and the last one only for a message that grants the
	 * peer enough to send data, or an abort (sdp_ctrl_credit_ok()).
	 */
	if (!sdp_ctrl_credit_ok(ssk->conn.tx_credits, mid, sdp_credit_grant(ssk)) ||
	    ssk->conn.ctrl_head - ssk->conn.ctrl_tail >= SDP_CTRL_BUFS)
		return -EAGAIN;
	b = &ssk->conn.ctrl_ring[ssk->conn.ctrl_head % SDP_CTRL_BUFS];
	sdp_fill_bsdh(ssk, b->data, mid, SDP_HDR + extlen, true);
	((struct sdp_bsdh *)b->data)->flags = flags;
	if (extlen)
		memcpy(b->data + SDP_HDR, ext, extlen);
	b->mid = mid;	/* remembered for the completion */
	err = sdp_post_send(ssk, b, 0, SDP_HDR + extlen, inv);
	if (err)
		return err;
	ssk->conn.ctrl_head++;
	ssk->conn.tx_credits--;
	DEBUG_NET_WARN_ON_ONCE(ssk->conn.ctrl_head - ssk->conn.ctrl_tail >
			       SDP_CTRL_BUFS);
	DEBUG_NET_WARN_ON_ONCE(ssk->conn.tx_credits < 0);
	sdp_stat_tx_ctrl(ssk, mid);
	return 0;
}

int __sdp_post_ctrl(struct sdp_sock *ssk, u8 mid, const void *ext, u32 extlen,
		    const u32 *inv)
{
	return sdp_post_ctrl_flags(ssk, mid, 0, ext, extlen, inv);
}

/*
 * A keepalive ping: an empty Data message with SDP_PING, which a peer
 * that set SDP_HF_PING answers at once (sdp_keepalive.c).  Only when
 * the peer can answer it (sdp_ping_ok()): -EAGAIN if not.  ssk->lock
 * held.
 */
int sdp_post_ping(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	if (!sdp_ping_ok(ssk->conn.tx_credits, sdp_credit_grant(ssk),
			 ssk->conn.rx_posted))
		return -EAGAIN;
	return sdp_post_ctrl_flags(ssk, SDP_MID_DATA, SDP_PING, NULL, 0, NULL);
}

/*
 * The active side's first Send over iWARP: empty, no BSDH and no mseq
 * (the zero-length Send of MPA's "ready to receive", RFC 6581); the
 * passive side sends nothing before it (sdp_cm_request()) and only
 * reposts the buffer it took (sdp_rx_rtr()).  It takes a credit, which
 * the passive side's first BSDH gives back.  Posted from a control
 * buffer, whose mid (Hello: the handshake's last word) nothing reads.
 * ssk->lock held.
 */
int sdp_post_rtr(struct sdp_sock *ssk)
{
	struct sdp_buf *b;
	int err;

	lockdep_assert_held(&ssk->lock);
	if (ssk->conn.tx_credits < 1 ||
	    ssk->conn.ctrl_head - ssk->conn.ctrl_tail >= SDP_CTRL_BUFS)
		return -EAGAIN;
	b = &ssk->conn.ctrl_ring[ssk->conn.ctrl_head % SDP_CTRL_BUFS];
	b->mid = SDP_MID_HELLO;
	err = sdp_post_send(ssk, b, 0, 0, NULL);
	if (err)
		return err;
	ssk->conn.ctrl_head++;
	ssk->conn.tx_credits--;
	return 0;
}

int sdp_post_ctrl(struct sdp_sock *ssk, u8 mid)
{
	return __sdp_post_ctrl(ssk, mid, NULL, 0, NULL);
}

/*
 * Our receive ring changed size (rx_want: it grew to full buffers,
 * sdp_rx_grow(), or shrank back to small ones, sdp_rx_ring_idle()): tell
 * the peer from which message on the new size binds.  Buffers are
 * consumed in the order they were posted, and none of the old size is
 * posted any more: the ones still posted take the next messages, the one
 * after lands in a buffer of the new size.  Not before the message our
 * last ChRcvBufAck binds from came: until then older buffers may be
 * ahead of those.  Once a shrink is announced, the small buffers may be
 * posted (sdp_rx_replace_retired()).  ssk->lock held.
 */
void sdp_tx_chrcvbuf_ack(struct sdp_sock *ssk)
{
	unsigned int old = ssk->conn.rx_want == SDP_BUF_SIZE ?
			   ssk->conn.rx_small_posted :
			   ssk->conn.rx_posted - ssk->conn.rx_small_posted;
	struct sdp_crbah ca = {
		.size = cpu_to_be32(ssk->conn.rx_want),
		.mseq = cpu_to_be32(ssk->conn.rx_mseq_last + old + 1),
	};

	lockdep_assert_held(&ssk->lock);
	if (ssk->conn.rx_want == ssk->conn.rx_size ||
	    (test_bit(SDP_C_RX_ACKED, &ssk->conn.flags) &&
	     sdp_mseq_after(ssk->conn.rx_chg_mseq, ssk->conn.rx_mseq_last + 1)) ||
	    __sdp_post_ctrl(ssk, SDP_MID_CHRCVBUF_ACK, &ca, sizeof(ca), NULL))
		return;
	set_bit(SDP_C_RX_ACKED, &ssk->conn.flags);
	ssk->conn.rx_chg_mseq = be32_to_cpu(ca.mseq);
	WRITE_ONCE(ssk->conn.rx_size, ssk->conn.rx_want);
	if (!list_empty(&ssk->conn.rx_retired) &&
	    !test_and_set_bit(SDP_D_RX_RETIRE, &ssk->conn.deferred))
		sdp_queue_work(ssk);
}

void sdp_ctrl_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_sock *ssk = cq->cq_context;
	struct sdp_buf *b = container_of(wc->wr_cqe, struct sdp_buf, cqe);

	spin_lock(&ssk->lock);
	DEBUG_NET_WARN_ON_ONCE(ssk->conn.ctrl_tail == ssk->conn.ctrl_head);
	ssk->conn.ctrl_tail++;
	if (wc->status == IB_WC_SUCCESS) {
		sdp_rtt_sample(ssk, b);
		if (b->mid == SDP_MID_DISCONN)
			sdp_close_disconn_done(ssk);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR &&
		   !test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		net_warn_ratelimited("send completion error %s\n",
				     ib_wc_status_msg(wc->status));
		__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR,
			    sdp_wc_errno(wc->status));
	}
	/* A free control buffer may let a waiting DisConn go. */
	sdp_tx_try_control(ssk);
	if (sdp_tx_idle(ssk))
		sdp_close_check_done(ssk);
	sdp_zc_sq_progress(ssk);
	/* Our AbortConn is delivered (or failed): disconnect now. */
	if (test_bit(SDP_C_ABORT_SENT, &ssk->conn.flags) &&
	    !sdp_abort_in_flight(ssk))
		sdp_queue_work(ssk);
	spin_unlock(&ssk->lock);
}
