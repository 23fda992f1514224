// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- zero-copy transfers, the receive side: RDMA
 * Read of the peer's SrcAvail into the reader's pages, RdmaRdCompl, and
 * the zero-copy messages from the peer.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Receiver: the SrcAvail is queued on rx_queue like data, holding its
 * receive buffer until the advertisement is consumed.  recvmsg() that
 * reaches it pins the reader's own pages and RDMA-reads into them
 * (rdma_rw).  The read's completion handler reports the bytes with
 * RdmaRdCompl at once (invalidating the peer's key with the last one if
 * the peer allowed it), and the reader, woken after, accounts them in
 * the stream and unpins.  A reader that peeks, drops (MSG_TRUNC), reads
 * into kernel memory, or cannot pin answers SendSM instead, and the
 * sender's remainder arrives as Data.  So does one whose recent reads
 * took as long as retried ones, for a back-off (sdp_zc_pace.h: a lossy
 * link costs zero-copy a timeout per lost packet).
 */
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/uio.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_ctrl.h"
#include "sdp_dev.h"
#include "sdp_fault.h"
#include "sdp_proto.h"
#include "sdp_rx.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_zc.h"

/*
 * Our RDMA read of the peer's advertisement ssk->conn.zc_rx.buf completed:
 * report it to the peer at once with RdmaRdCompl, before the reader even wakes,
 * so that the peer can reuse its buffer while we unpin ours.  A read
 * that reaches the end of the advertisement ends it (another SrcAvail
 * may come), and its RdmaRdCompl invalidates the peer's key if the peer
 * allowed that.  The reader accounts the bytes in the stream.
 * ssk->lock held.
 */
static void sdp_zc_rd_report(struct sdp_sock *ssk)
{
	struct sdp_buf *b = ssk->conn.zc_rx.buf;
	struct sdp_srcah *sa;

	lockdep_assert_held(&ssk->lock);
	/* A read is in flight only on the advertisement being consumed. */
	if (WARN_ON_ONCE(!b))
		return;
	sa = b->data + sizeof(struct sdp_bsdh);
	/* Counted before the RdmaRdCompl that lets the peer count it. */
	ssk->conn.rx_seq += ssk->conn.zc_rx.rd_len;
	ssk->conn.zc_rx.compl += ssk->conn.zc_rx.rd_len;
	if (b->off + ssk->conn.zc_rx.rd_len == b->len) {
		ssk->conn.zc_rx.buf = NULL;
		clear_bit(SDP_ZR_RX_CANCEL, &ssk->conn.zc_rx.flags);
		if (test_bit(SDP_P_RINV, &ssk->conn.peer)) {
			ssk->conn.zc_rx.inv = be32_to_cpu(sa->rkey);
			set_bit(SDP_ZR_RX_INV, &ssk->conn.zc_rx.flags);
		}
	}
	sdp_tx_try_control(ssk);
}

/* A work request of our RDMA read failed (@wc).  ssk->lock held. */
static void sdp_zc_rd_failed(struct sdp_sock *ssk, const struct ib_wc *wc)
{
	lockdep_assert_held(&ssk->lock);
	set_bit(SDP_ZR_RD_ERR, &ssk->conn.zc_rx.flags);
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		return;
	if (!ssk->conn.zc_rx.rd_err)
		ssk->conn.zc_rx.rd_err = sdp_wc_errno(wc->status);
	if (!test_bit(SDP_C_ABORT, &ssk->conn.flags))
		sdp_warn_peer(ssk, "RDMA read of its SrcAvail failed: %s; aborting\n",
			      ib_wc_status_msg(wc->status));
}

/*
 * One of the unsignalled work requests that rdma_rw_ctx_post() chained in
 * front of the last one of our RDMA read failed or was flushed (it has no
 * cqe of ours).  The read has failed; its last request, which carries
 * ssk->conn.zc_rx.rd_cqe, completes (flushed) after it and wakes the reader.
 */
void sdp_zc_rd_chain_done(struct sdp_sock *ssk, struct ib_wc *wc)
{
	spin_lock(&ssk->lock);
	if (wc->status != IB_WC_SUCCESS)
		sdp_zc_rd_failed(ssk, wc);
	spin_unlock(&ssk->lock);
}

void sdp_zc_rd_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_sock *ssk = cq->cq_context;

	spin_lock(&ssk->lock);
	ssk->conn.zc_rx.rd_end = ktime_get();
	if (wc->status != IB_WC_SUCCESS)
		sdp_zc_rd_failed(ssk, wc);
	else if (!test_bit(SDP_C_ABORT, &ssk->conn.flags))
		sdp_zc_rd_report(ssk);
	set_bit(SDP_ZR_RD_DONE, &ssk->conn.zc_rx.flags);
	sdp_zc_sq_progress(ssk);
	spin_unlock(&ssk->lock);
	sdp_sock_wake(ssk, TASK_NORMAL);
}

/*
 * soft-iWARP (siw, in 6.1 and 6.12 at least) answers an RDMA Read of at
 * most SDP_IW_SHORT_READ bytes (its MAX_HDR_INLINE) whose source crosses
 * a page boundary with the wrong bytes: siw_try_1seg() copies the second
 * page's share from past the end of the first page.  Any iWARP peer may
 * be siw, so on iWARP such a short read ends at the boundary (of the
 * smallest page size, as the peer's may be smaller than ours), and the
 * reader reads the rest next (sdp_zc_rx_unread()).  Other transports'
 * reads are not cut.  Returns the bytes to read.
 */
#define SDP_IW_SHORT_READ	32

static size_t sdp_zc_short_read(const struct sdp_sock *ssk, u64 vaddr,
				size_t len)
{
	size_t edge = SZ_4K - (vaddr & (SZ_4K - 1));

	if (!ssk->conn.sdev->iwarp || len > SDP_IW_SHORT_READ)
		return len;
	return min(len, edge);
}

/*
 * Stop consuming the peer's advertisement: it sends the rest as Data.
 * ssk->lock held.
 */
static void sdp_zc_rx_decline(struct sdp_sock *ssk)
{
	struct sdp_buf *b = ssk->conn.zc_rx.buf;

	lockdep_assert_held(&ssk->lock);
	ssk->conn.zc_rx.buf = NULL;
	clear_bit(SDP_ZR_RX_CANCEL, &ssk->conn.zc_rx.flags);
	ssk->conn.rx_bytes -= b->len - b->off;
	set_bit(SDP_ZR_SENDSM_WANT, &ssk->conn.zc_rx.flags);
	sdp_rx_consumed(ssk, b);
	sdp_tx_try_control(ssk);
}

/*
 * Our reads were slow (sdp_zc_pace.h): advertisements are declined until
 * the back-off ends.  lock_sock() held.
 */
static bool sdp_zc_rx_paced(const struct sdp_sock *ssk)
{
	return time_before64(get_jiffies_64(), ssk->conn.zc_rx.slow_until);
}

/*
 * Account our read of @len bytes posted at @start, which completed at
 * zc_rx.rd_end.  Returns true when it starts a back-off.  lock_sock() and
 * ssk->lock held.
 */
static bool sdp_zc_rx_timed(struct sdp_sock *ssk, u32 len, ktime_t start)
{
	s64 delta = ktime_us_delta(ssk->conn.zc_rx.rd_end, start) +
		    sdp_fault_zc_read_delay_us();
	u32 us = clamp_t(s64, delta, 0, U32_MAX);
	struct sdp_zc_pace *pace = &ssk->conn.zc_rx.pace;
	struct net *net = sock_net(&ssk->sk);
	u32 backoff;

	sock_owned_by_me(&ssk->sk);
	if (sdp_zc_read_slow(len, us, pace->rate))
		SDP_INC_STATS(net, SDP_MIB_ZCOPY_SLOW_READS);
	backoff = sdp_zc_pace_read(pace, len, us);
	if (!backoff)
		return false;
	ssk->conn.zc_rx.slow_until = get_jiffies_64() + msecs_to_jiffies(backoff);
	SDP_INC_STATS(net, SDP_MIB_ZCOPY_BACKOFFS);
	return true;
}

/* The reader cannot take the advertisement @b: SendSM. */
static int sdp_zc_recv_decline(struct sdp_sock *ssk, struct sdp_buf *b)
{
	spin_lock_bh(&ssk->lock);
	if (ssk->conn.zc_rx.buf == b)
		sdp_zc_rx_decline(ssk);
	spin_unlock_bh(&ssk->lock);
	return 0;
}

/*
 * An abort leaves advertised bytes unread: the stream is cut, which the
 * reader must learn from an error, also where the peer's DisConn came
 * first (recv() gives end of stream then, and a reset after it shows as
 * EPIPE on send() alone).  Once: an error reported already is not
 * raised again for the next advertisement dropped.  ssk->lock held.
 */
static void sdp_zc_rx_lost(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	lockdep_assert_held(&ssk->lock);
	if (test_and_set_bit(SDP_ZR_LOST, &ssk->conn.zc_rx.flags))
		return;
	/* A reset after the DisConn said EPIPE; other errors stand. */
	if (!sock_flag(sk, SOCK_DEAD) &&
	    (!sk->sk_err || sk->sk_err == EPIPE))
		WRITE_ONCE(sk->sk_err, ECONNRESET);
}

/**
 * sdp_zc_recv() - read from the peer's advertisement into @msg
 * @sk: the socket, lock_sock() held
 * @msg: the reader's message; its iterator advances by what was read
 * @b: the queued SrcAvail, ssk->conn.zc_rx.buf, first in the queue
 * @len: bytes the reader still wants
 * @flags: the recvmsg() flags
 *
 * Return: bytes read straight into the reader's pages; 0 if nothing was
 * read (the reader declined: SendSM sent, the bytes will come as Data;
 * another reader was reading it; or the connection is aborted, its error
 * in sk_err): look at the queue again.  The caller reports sk_err as
 * TCP's recvmsg() does: now if it copied nothing, else with the next
 * call, once.
 */
int sdp_zc_recv(struct sock *sk, struct msghdr *msg, struct sdp_buf *b,
		size_t len, int flags)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_srcah *sa = b->data + sizeof(struct sdp_bsdh);
	struct rdma_rw_ctx ctx;
	struct sdp_zc_pages zp;
	ktime_t start = 0;
	unsigned long base;
	bool backoff;
	u64 vaddr;
	u32 port, rkey, gen;
	size_t seg;
	int ret;

	sock_owned_by_me(sk);
	/*
	 * The connection is gone: the advertised bytes cannot be read any
	 * more.  Drop them, and whatever the peer sent after them, which
	 * would follow a gap in the stream; the reader gets the error, then
	 * EOF.
	 */
	if (test_bit(SDP_C_ABORT, &ssk->conn.flags) &&
	    !test_bit(SDP_ZR_READING, &ssk->conn.zc_rx.flags)) {
		struct sdp_buf *next;

		spin_lock_bh(&ssk->lock);
		sdp_zc_rx_lost(ssk);
		if (ssk->conn.zc_rx.buf == b)
			ssk->conn.zc_rx.buf = NULL;
		/* Still queued, unless sdp_rx_purge() came first. */
		if (!list_empty(&b->node)) {
			list_for_each_entry_safe_from(b, next,
						      &ssk->conn.rx_queue, node) {
				ssk->conn.rx_bytes -= b->len - b->off;
				list_del_init(&b->node);
			}
		}
		spin_unlock_bh(&ssk->lock);
		return 0;
	}
	/* Another reader's RDMA read of it is in flight: wait for that. */
	if (test_bit(SDP_ZR_READING, &ssk->conn.zc_rx.flags)) {
		release_sock(sk);
		wait_event_timeout(*sk_sleep(sk),
				   !test_bit(SDP_ZR_READING, &ssk->conn.zc_rx.flags), HZ);
		lock_sock(sk);
		return 0;
	}
	if ((flags & (MSG_PEEK | MSG_TRUNC)) || sdp_zc_rx_paced(ssk) ||
	    !sdp_iter_user_seg(&msg->msg_iter, &base, &seg))
		return sdp_zc_recv_decline(ssk, b);

	/*
	 * What we read is the advertisement as it is now; the peer may
	 * cancel it (and we decline it) from the completion handler at any
	 * time until our read is posted, so that is checked again then.
	 */
	spin_lock_bh(&ssk->lock);
	if (ssk->conn.zc_rx.buf != b) {
		spin_unlock_bh(&ssk->lock);
		return 0;	/* ended meanwhile: look at the queue again */
	}
	gen = ssk->conn.zc_rx.gen;
	rkey = be32_to_cpu(sa->rkey);
	vaddr = be64_to_cpu(sa->vaddr) + b->off;
	len = min3(len, seg, (size_t)(b->len - b->off));
	/* As many pages as the send queue has reads for; the rest next. */
	len = min_t(size_t, len, (size_t)ssk->conn.zc_rx.rd_pages * PAGE_SIZE -
				 offset_in_page(base));
	len = sdp_zc_short_read(ssk, vaddr, len);
	len = sdp_zc_pace_read_len(&ssk->conn.zc_rx.pace, len);
	spin_unlock_bh(&ssk->lock);

	/* Not aborted: the connection (QP, CM id) is still there. */
	port = ssk->id->port_num;
	if (sdp_zc_pin(&zp, base, len, DMA_FROM_DEVICE)) {
		sdp_zc_count_fallback(ssk);
		return sdp_zc_recv_decline(ssk, b);
	}
	ret = rdma_rw_ctx_init(&ctx, ssk->conn.qp, port, zp.sgt.sgl,
			       zp.sgt.orig_nents, 0, vaddr, rkey,
			       DMA_FROM_DEVICE);
	if (ret < 0) {
		sdp_zc_unpin(&zp);
		return sdp_zc_recv_decline(ssk, b);
	}

	spin_lock_bh(&ssk->lock);
	if (test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		/*
		 * Aborted while we pinned: look again, and the check above
		 * drops the advertisement; the reader gets the abort's own
		 * error (ETIMEDOUT for a peer that died), not ours.
		 */
		ret = -EAGAIN;
	} else if (ssk->conn.zc_rx.buf != b || ssk->conn.zc_rx.gen != gen) {
		/* Cancelled (and declined) while we pinned: not ours any more. */
		ret = -EAGAIN;
	} else {
		clear_bit(SDP_ZR_RD_DONE, &ssk->conn.zc_rx.flags);
		clear_bit(SDP_ZR_RD_ERR, &ssk->conn.zc_rx.flags);
		ssk->conn.zc_rx.rd_err = 0;
		ssk->conn.zc_rx.rd_len = len;
		start = ktime_get();
		ret = rdma_rw_ctx_post(&ctx, ssk->conn.qp, port, &ssk->conn.zc_rx.rd_cqe,
				       NULL);
		if (!ret) {
			set_bit(SDP_ZR_READING, &ssk->conn.zc_rx.flags);
			ssk->conn.zc_busy++;
		}
	}
	spin_unlock_bh(&ssk->lock);
	if (!ret)
		sdp_zc_wait_bit(sk, SDP_ZR_RD_DONE, &ssk->conn.zc_rx.flags);
	rdma_rw_ctx_destroy(&ctx, ssk->conn.qp, port, zp.sgt.sgl, zp.sgt.orig_nents,
			    DMA_FROM_DEVICE);
	sdp_zc_unpin(&zp);
	if (ret == -EAGAIN)
		return 0;
	if (ret) {
		/* The post failed: the connection is broken. */
		sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
		return 0;
	}

	spin_lock_bh(&ssk->lock);
	clear_bit(SDP_ZR_READING, &ssk->conn.zc_rx.flags);
	if (test_bit(SDP_ZR_RD_ERR, &ssk->conn.zc_rx.flags) &&
	    !test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		/*
		 * The read itself failed: the peer stopped answering (its
		 * retries ran out: ETIMEDOUT, as TCP says of a dead peer) or
		 * its key did not let us read (a protocol error).  A read
		 * flushed by an abort (the peer's, or our wait's bound in
		 * sdp_zc_wait_bit()) gives that abort's error, below.
		 */
		ret = ssk->conn.zc_rx.rd_err ?: -ECONNRESET;
		__sdp_abort(ssk, ret == -ETIMEDOUT ? SDP_ABORT_REASON_TIMEOUT :
				 SDP_ABORT_REASON_PROTO, ret);
		ret = 0;
	} else if (!test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		/* sdp_zc_rd_report() has told the peer already. */
		backoff = sdp_zc_rx_timed(ssk, len, start);
		b->off += len;
		ssk->conn.rx_bytes -= len;
		sdp_rx_urg_advance(ssk, len);
		sdp_stat_rdma_read(ssk, len);
		sdp_stat_zcopy_rx(ssk, len);
		/* A back-off begins: the rest goes buffered too. */
		if (b->off == b->len)
			sdp_rx_consumed(ssk, b);
		else if (backoff ||
			 test_bit(SDP_ZR_RX_CANCEL, &ssk->conn.zc_rx.flags))
			sdp_zc_rx_decline(ssk);
		sdp_tx_try_control(ssk);
		ret = len;
	} else {
		sdp_zc_rx_lost(ssk);
		ret = 0;
	}
	spin_unlock_bh(&ssk->lock);
	sdp_zc_put(ssk);
	sdp_sock_wake(ssk, TASK_NORMAL);	/* readers waiting for this read */
	if (ret > 0)
		iov_iter_advance(&msg->msg_iter, ret);
	return ret;
}

/*
 * Handle a zero-copy message from the peer; ssk->lock held.  Returns
 * true if @b was queued (a SrcAvail), false if it may be reposted.
 */
bool sdp_zc_rx_msg(struct sdp_sock *ssk, struct sdp_buf *b, u32 payload)
{
	struct sdp_bsdh *h = b->data;
	u32 n;

	lockdep_assert_held(&ssk->lock);
	switch (h->mid) {
	case SDP_MID_SRCAVAIL: {
		struct sdp_srcah *sa = (void *)(h + 1);

		if (payload != sizeof(*sa)) {
			sdp_warn_peer(ssk, "SrcAvail with %u bytes after the BSDH; aborting\n",
				      payload);
			break;
		}
		n = be32_to_cpu(sa->len);
		if (!n || n > SDP_ZC_MAX_BYTES || ssk->conn.zc_rx.buf ||
		    test_bit(SDP_C_DISCONN_RCVD, &ssk->conn.flags)) {
			sdp_warn_peer(ssk, "SrcAvail of %u bytes %s; aborting\n",
				      n, !n ? "is empty" :
				      n > SDP_ZC_MAX_BYTES ? "is too long" :
				      ssk->conn.zc_rx.buf ? "while one is outstanding" :
				      "after DisConn");
			break;
		}
		SDP_SK_INC(ssk, SRCAVAIL_RX);
		if (sdp_rx_closed(ssk)) {
			__sdp_abort(ssk, SDP_ABORT_REASON_DATA, -ECONNRESET);
			return false;
		}
		b->mid = SDP_MID_SRCAVAIL;
		b->len = n;
		b->off = 0;
		list_add_tail(&b->node, &ssk->conn.rx_queue);
		ssk->conn.rx_bytes += n;
		ssk->conn.zc_rx.buf = b;
		ssk->conn.zc_rx.gen++;
		return true;
	}
	case SDP_MID_RDMA_RD_COMPL: {
		struct sdp_rrch *rr = (void *)(h + 1);

		if (payload != sizeof(*rr)) {
			sdp_warn_peer(ssk, "RdmaRdCompl of %u bytes; aborting\n",
				      payload);
			break;
		}
		n = be32_to_cpu(rr->len);
		if (!ssk->conn.zc_tx.len || test_bit(SDP_ZT_SENDSM, &ssk->conn.zc_tx.flags) ||
		    !n || n > ssk->conn.zc_tx.len - ssk->conn.zc_tx.acked) {
			sdp_warn_peer(ssk, "RdmaRdCompl for %u bytes, %u advertised; aborting\n",
				      n, ssk->conn.zc_tx.len - ssk->conn.zc_tx.acked);
			break;
		}
		WRITE_ONCE(ssk->conn.zc_tx.acked, ssk->conn.zc_tx.acked + n);
		ssk->conn.snd_una += n;
		if (ssk->zc_async && ssk->conn.zc_tx.acked == ssk->conn.zc_tx.len)
			sdp_queue_work(ssk);
		sdp_sock_wake(ssk, TASK_NORMAL);
		return false;
	}
	case SDP_MID_SENDSM:
		if (payload || !ssk->conn.zc_tx.len ||
		    test_bit(SDP_ZT_SENDSM, &ssk->conn.zc_tx.flags)) {
			sdp_warn_peer(ssk, "SendSM %s; aborting\n", payload ?
				      "with a payload" : "without a SrcAvail");
			break;
		}
		set_bit(SDP_ZT_SENDSM, &ssk->conn.zc_tx.flags);
		if (ssk->zc_async)
			sdp_queue_work(ssk);
		sdp_sock_wake(ssk, TASK_NORMAL);
		return false;
	case SDP_MID_SRCAVAIL_CANCEL:
		if (payload) {
			sdp_warn_peer(ssk, "SrcAvailCancel with a payload; aborting\n");
			break;
		}
		/* None outstanding: it crossed our last RdmaRdCompl/SendSM. */
		if (!ssk->conn.zc_rx.buf)
			return false;
		if (test_bit(SDP_ZR_READING, &ssk->conn.zc_rx.flags))
			set_bit(SDP_ZR_RX_CANCEL, &ssk->conn.zc_rx.flags);
		else
			sdp_zc_rx_decline(ssk);
		return false;
	}
	__sdp_abort(ssk, SDP_ABORT_REASON_PROTO, -ECONNRESET);
	return false;
}

/**
 * sdp_zc_rx_inv() - the peer sent @b with Invalidate of our key @rkey
 * @ssk: the socket; ssk->lock held
 * @b: the received message, not yet parsed
 * @byte_len: bytes received
 * @rkey: the key the peer's SEND invalidated
 *
 * Only the RdmaRdCompl that reports the last bytes of our advertisement
 * may do that, and only with the advertised key; the device has already
 * made the key useless, so the sender skips its own LOCAL_INV.
 *
 * Return: false for anything else (the connection is to be aborted).
 */
bool sdp_zc_rx_inv(struct sdp_sock *ssk, struct sdp_buf *b, u32 byte_len,
		   u32 rkey)
{
	struct sdp_bsdh *h = b->data;
	struct sdp_rrch *rr = (void *)(h + 1);

	lockdep_assert_held(&ssk->lock);
	if (byte_len != sizeof(*h) + sizeof(*rr) ||
	    h->mid != SDP_MID_RDMA_RD_COMPL || !ssk->conn.zc_tx.len ||
	    !ssk->conn.zc_tx.mr || rkey != ssk->conn.zc_tx.mr->rkey ||
	    be32_to_cpu(rr->len) != ssk->conn.zc_tx.len - ssk->conn.zc_tx.acked) {
		sdp_warn_peer(ssk, "message %#x invalidated key %#x unexpectedly; aborting\n",
			      h->mid, rkey);
		return false;
	}
	set_bit(SDP_ZT_RINV, &ssk->conn.zc_tx.flags);
	SDP_SK_INC(ssk, RINV_RX);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ZCOPY_RINV_RX);
	return true;
}

/*
 * Send the zero-copy control messages that are due, in order: the bytes
 * read (RdmaRdCompl) before a SendSM that ends the advertisement; our
 * SrcAvailCancel only once the SrcAvail itself is posted.  ssk->lock
 * held.
 */
void sdp_zc_tx_control(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	if (ssk->conn.zc_rx.compl) {
		struct sdp_rrch rr = { .len = cpu_to_be32(ssk->conn.zc_rx.compl) };
		bool inv = test_bit(SDP_ZR_RX_INV, &ssk->conn.zc_rx.flags);

		if (__sdp_post_ctrl(ssk, SDP_MID_RDMA_RD_COMPL, &rr, sizeof(rr),
				    inv ? &ssk->conn.zc_rx.inv : NULL))
			return;
		ssk->conn.zc_rx.compl = 0;
		if (inv) {
			clear_bit(SDP_ZR_RX_INV, &ssk->conn.zc_rx.flags);
			SDP_SK_INC(ssk, RINV_TX);
			SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ZCOPY_RINV_TX);
		}
	}
	if (test_bit(SDP_ZR_SENDSM_WANT, &ssk->conn.zc_rx.flags)) {
		if (__sdp_post_ctrl(ssk, SDP_MID_SENDSM, NULL, 0, NULL))
			return;
		clear_bit(SDP_ZR_SENDSM_WANT, &ssk->conn.zc_rx.flags);
	}
	if (test_bit(SDP_ZT_CANCEL_WANT, &ssk->conn.zc_tx.flags) &&
	    !test_bit(SDP_ZT_CANCEL_SENT, &ssk->conn.zc_tx.flags) &&
	    ssk->conn.tx_post == ssk->conn.tx_head &&
	    !__sdp_post_ctrl(ssk, SDP_MID_SRCAVAIL_CANCEL, NULL, 0, NULL)) {
		set_bit(SDP_ZT_CANCEL_SENT, &ssk->conn.zc_tx.flags);
	}
}
