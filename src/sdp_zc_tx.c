// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- zero-copy transfers, the send side: our
 * SrcAvail of a blocking send, of a MSG_ZEROCOPY send, or of pages
 * spliced to the socket (their pages and registration: sdp_zc_mr.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Sender (sdp_zc_send(), from sendmsg()): a blocking send whose next
 * user segment holds at least zc_thresh bytes pins up to
 * SDP_ZC_MAX_BYTES of it (charged to RLIMIT_MEMLOCK unless
 * CAP_IPC_LOCK), maps them into the connection's registration MR with a
 * fresh key for remote read of exactly those bytes (IB_WR_REG_MR; on
 * Soft-RoCE only once the send queue is acknowledged,
 * sdp_zc_post_advert()), and
 * queues a SrcAvail in the send ring behind any buffered data, so stream
 * order holds.  It then sleeps until RdmaRdCompls add up to the length,
 * or a SendSM ends the advertisement (the rest goes buffered), or the
 * connection dies.  A signal, the end of SO_SNDTIMEO, or a peer that
 * reads nothing for SDP_ZC_STALL sends SrcAvailCancel; the sender then
 * waits for the peer's answer, without giving up the pages, because the
 * peer may be reading them.  Only after the advertisement is over is the
 * key invalidated and the pages unpinned: by the peer, whose last
 * RdmaRdCompl is a SEND with Invalidate of the key when we allowed that
 * in the Hello (SDP_HF_RINV), or else by us (IB_WR_LOCAL_INV, waited
 * for; the MR is destroyed if that fails).  A peer that declined
 * SDP_ZC_HOLD_AFTER advertisements in a row gets none for SDP_ZC_HOLD:
 * sends go buffered.
 *
 * A nonblocking MSG_ZEROCOPY send (sdp_zc_send_async()) does the same
 * without waiting: it returns once its pages are pinned and mapped, and
 * sdp_work() sees the advertisement through (sdp_zc_async_run(): the
 * stall and cancel rules above, the invalidation, then the unread rest
 * copied from the still pinned pages into the send ring), unpins and
 * queues the send's notification.  Meanwhile sdp_sock::zc_async keeps
 * other data, and our DisConn, behind it.  Pages spliced to the socket
 * (sendfile(), splice()) go the same way, referenced instead of pinned,
 * once the pages of consecutive calls are gathered (sdp_zc_splice.c).
 */
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_dev.h"
#include "sdp_mem.h"
#include "sdp_msgzc.h"
#include "sdp_proto.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_zc.h"
#include "sdp_zc_async.h"

/* A peer that reads nothing of an advertisement for this long: cancel. */
#define SDP_ZC_STALL		(HZ / 2)
/*
 * An advertisement of ours lasts at most this long, however the peer
 * reads it: then it is cancelled (or withdrawn if not yet sent) and the
 * rest goes buffered, so that a peer cannot keep our pages pinned.
 */
#define SDP_ZC_ADVERT_MAX	(4 * HZ)

/*
 * A peer that declined our last advertisements (SendSM) is likely to
 * decline the next one too: its reads were slow (sdp_zc_pace.h), it
 * peeks, or it cannot pin.  Advertising again costs a round trip (and on
 * Soft-RoCE an idle send queue first), so after SDP_ZC_HOLD_AFTER
 * declines in a row, sends go buffered for SDP_ZC_HOLD.  A reader that
 * peeks now and then declines one advertisement here and there and
 * holds nothing (with two, one reader peeking at one read in eight cut
 * the bytes sent zero-copy to a third in tests/zcopy.c's
 * test_mixed_integrity).
 */
#define SDP_ZC_HOLD_AFTER	4
#define SDP_ZC_HOLD		HZ

/*
 * Our advertisement is over: count a decline that was not the answer
 * to our SrcAvailCancel, and hold the next ones after enough in a row.
 * lock_sock() and ssk->lock held.
 */
static void sdp_zc_tx_ended(struct sdp_sock *ssk)
{
	struct sdp_zc_tx *zt = &ssk->conn.zc_tx;

	sock_owned_by_me(&ssk->sk);
	if (test_bit(SDP_ZT_CANCEL_SENT, &zt->flags))
		return;
	if (!test_bit(SDP_ZT_SENDSM, &zt->flags)) {
		zt->declines = 0;
		return;
	}
	/* Until one is read, each decline after the hold renews it. */
	if (zt->declines < SDP_ZC_HOLD_AFTER)
		zt->declines++;
	if (zt->declines < SDP_ZC_HOLD_AFTER)
		return;
	zt->held = true;
	zt->hold_until = get_jiffies_64() + SDP_ZC_HOLD;
}

/*
 * Our SrcAvail is posted: its bytes are sent, as far as the stream
 * position goes (sdp_conn::snd_nxt).  ssk->lock held.
 */
void sdp_zc_tx_sent(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	ssk->conn.snd_nxt += ssk->conn.zc_tx.len;
	set_bit(SDP_ZT_SENT, &ssk->conn.zc_tx.flags);
}

/*
 * Our advertisement is over: what the peer did not read goes again as
 * Data, so it is no longer sent (sdp_conn::snd_nxt).  lock_sock() and
 * ssk->lock held.
 */
static void sdp_zc_tx_clear(struct sdp_sock *ssk)
{
	struct sdp_zc_tx *zt = &ssk->conn.zc_tx;

	sdp_zc_tx_ended(ssk);
	if (test_and_clear_bit(SDP_ZT_SENT, &zt->flags))
		ssk->conn.snd_nxt -= zt->len - zt->acked;
	zt->len = 0;
	zt->acked = 0;
	clear_bit(SDP_ZT_CANCEL_WANT, &zt->flags);
}

/* Are our advertisements held (sdp_zc_tx_ended())?  lock_sock() held. */
bool sdp_zc_held(struct sdp_sock *ssk)
{
	sock_owned_by_me(&ssk->sk);
	if (ssk->conn.zc_tx.held &&
	    time_after_eq64(get_jiffies_64(), ssk->conn.zc_tx.hold_until))
		ssk->conn.zc_tx.held = false;
	return ssk->conn.zc_tx.held;
}

/* Does this send go zero-copy (at least for its next segment)? */
bool sdp_zc_eligible(struct sock *sk, struct msghdr *msg, long timeo)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	unsigned long base;
	size_t len;

	/* A nonblocking send never waits for a peer to read. */
	if (!ssk->zc_thresh || !timeo || sdp_zc_held(ssk))
		return false;
	if (!sdp_iter_user_seg(&msg->msg_iter, &base, &len))
		return false;
	return len >= ssk->zc_thresh;
}

static bool sdp_zc_tx_over(struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->conn.zc_tx.acked) == READ_ONCE(ssk->conn.zc_tx.len) ||
	       test_bit(SDP_ZT_SENDSM, &ssk->conn.zc_tx.flags) ||
	       test_bit(SDP_C_ABORT, &ssk->conn.flags);
}

static bool sdp_zc_tx_woken(struct sdp_sock *ssk, u32 seen)
{
	return sdp_zc_tx_over(ssk) || READ_ONCE(ssk->conn.zc_tx.acked) != seen;
}

/*
 * End our advertisement early.  A SrcAvail still waiting in the send ring
 * for credits has not reached the peer: take it back, and the
 * advertisement is over at once.  One that went out is cancelled: the
 * peer may be reading it, so it is over only with the peer's answer.
 * Returns true if it was taken back.  ssk->lock held.
 */
static bool sdp_zc_tx_cancel(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	/*
	 * Nothing is committed behind the SrcAvail while it is ours: one
	 * sendmsg() at a time (tx_mutex), and this one waits here.
	 */
	if ((s32)(ssk->conn.tx_post - ssk->conn.zc_tx.slot) <= 0 &&
	    ssk->conn.zc_tx.slot + 1 == ssk->conn.tx_head) {
		ssk->conn.tx_head--;
		WRITE_ONCE(ssk->conn.zc_tx.len, ssk->conn.zc_tx.acked);
		return true;
	}
	set_bit(SDP_ZT_CANCEL_WANT, &ssk->conn.zc_tx.flags);
	sdp_tx_try_control(ssk);
	return false;
}

/*
 * Wait for the advertisement to end.  Returns 0, or the error the send
 * gives if nothing was read: -EINTR/-ERESTARTSYS on a signal, -EAGAIN
 * when SO_SNDTIMEO ran out.  *@stalled: ended early because the peer
 * read nothing for SDP_ZC_STALL, or had not read it all after
 * SDP_ZC_ADVERT_MAX (the rest may go buffered).
 *
 * Once cancelled, the wait goes on without a signal or timeout cutting
 * it short (the peer may be reading our pages) until the peer answers;
 * a peer that does not answer within SDP_ZC_ANSWER_TIMEOUT is aborted.
 * (A SrcAvail that had not gone out is taken back instead: the D6 case of
 * a reader asleep with its ring full, where no cancel could go either.)
 */
static int sdp_zc_tx_wait(struct sock *sk, long *timeo, bool *stalled)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	unsigned long deadline = jiffies + SDP_ZC_STALL;
	unsigned long last = jiffies + SDP_ZC_ADVERT_MAX;
	unsigned long end = 0;
	bool cancelled = false;
	u32 seen = 0;
	int err = 0;

	sock_owned_by_me(sk);
	while (!sdp_zc_tx_over(ssk)) {
		u32 acked = READ_ONCE(ssk->conn.zc_tx.acked);
		unsigned long start = jiffies;
		long left;

		if (cancelled) {
			/* The peer may be reading: wait for its answer. */
			if (time_after(jiffies, end)) {
				sdp_warn_peer(ssk, "no answer to SrcAvailCancel in %us; aborting\n",
					      SDP_ZC_ANSWER_TIMEOUT / HZ);
				sdp_abort(ssk, SDP_ABORT_REASON_PROTO, -ETIMEDOUT);
				break;
			}
			release_sock(sk);
			wait_event_timeout(*sk_sleep(sk), sdp_zc_tx_over(ssk),
					   end - jiffies);
			lock_sock(sk);
			continue;
		}
		if (acked != seen) {
			seen = acked;
			deadline = jiffies + SDP_ZC_STALL;
		}
		if (signal_pending(current))
			err = sock_intr_errno(*timeo);
		else if (!*timeo)
			err = -EAGAIN;
		else if (time_after_eq(jiffies, deadline) ||
			 time_after_eq(jiffies, last))
			*stalled = true;
		if (err || *stalled) {
			spin_lock_bh(&ssk->lock);
			cancelled = !sdp_zc_tx_cancel(ssk);
			spin_unlock_bh(&ssk->lock);
			end = jiffies + SDP_ZC_ANSWER_TIMEOUT;
			continue;
		}
		left = min_t(long, *timeo,
			     max_t(long, 1, min(deadline, last) - jiffies));
		release_sock(sk);
		left = wait_event_interruptible_timeout(*sk_sleep(sk),
							sdp_zc_tx_woken(ssk, seen),
							left);
		lock_sock(sk);
		if (*timeo != MAX_SCHEDULE_TIMEOUT && left >= 0)
			*timeo = max_t(long, 0, *timeo - (long)(jiffies - start));
	}
	return err;
}

/*
 * Wait until everything queued before the advertisement is committed
 * and a send slot is free for the SrcAvail, and give that slot its
 * buffer.  Returns 0 with the connection's resources there (they stay
 * while lock_sock() is held), -ENOMEM without a buffer for the slot,
 * or -EPIPE when the connection is over (whose error the caller reports)
 * or the wait's own error.  The connection is checked first: once it is
 * torn down (device removal) its empty ring has room, but no QP, PD or
 * device to advertise with; and a connect() again while we slept may
 * have made another one, which this send must not go on (EPIPE too).
 */
int sdp_zc_wait_slot(struct sock *sk, long *timeo)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	u32 gen = ssk->conn_gen;
	int err;

	sock_owned_by_me(sk);
	for (;;) {
		bool ok = false;

		spin_lock_bh(&ssk->lock);
		err = -EPIPE;
		if (ssk->conn_gen == gen && sdp_tx_usable(ssk) &&
		    !sk->sk_err && !(sk->sk_shutdown & SEND_SHUTDOWN)) {
			err = 0;
			sdp_tx_flush(ssk);
			ok = ssk->conn.tx_head - ssk->conn.tx_tail < ssk->conn.tx_count;
		}
		spin_unlock_bh(&ssk->lock);
		if (err)
			return err;
		if (ok)
			return sdp_tx_slot_ready(ssk);
		err = sdp_wait_check(*timeo);
		if (err)
			return err;
		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, timeo, sdp_tx_writable(ssk) ||
			      READ_ONCE(sk->sk_err) ||
			      (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN),
			      &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	}
}

/* Post the registration and queue the SrcAvail.  ssk->lock held. */
static int sdp_zc_advertise(struct sdp_sock *ssk, struct ib_mr *mr, u32 len)
{
	struct ib_reg_wr reg = {
		.wr = {
			.opcode = IB_WR_REG_MR,
			.wr_cqe = &ssk->conn.zc_tx.reg_cqe,
		},
		.mr = mr,
		.key = mr->rkey,
		.access = IB_ACCESS_REMOTE_READ,
	};
	struct sdp_buf *b;
	struct sdp_srcah *sa;
	int err;

	lockdep_assert_held(&ssk->lock);
	/*
	 * Nothing may follow our DisConn: a shutdown() or close() in
	 * another thread may have queued it while this send waited.
	 */
	if (!sdp_tx_usable(ssk) || ssk->sk.sk_err ||
	    (ssk->sk.sk_shutdown & SEND_SHUTDOWN) ||
	    test_bit(SDP_C_DISCONN_WANT, &ssk->conn.flags))
		return -EPIPE;
	/* sdp_zc_wait_slot() gave it: nothing can commit past it since. */
	if (WARN_ON_ONCE(!sdp_tx_slot_has_buf(ssk)))
		return -EPIPE;
	err = ib_post_send(ssk->conn.qp, &reg.wr, NULL);
	if (err)
		return err;
	b = sdp_tx_slot(&ssk->conn, ssk->conn.tx_head);
	sa = b->data + sizeof(struct sdp_bsdh);
	sa->len = cpu_to_be32(len);
	sa->rkey = cpu_to_be32(mr->rkey);
	sa->vaddr = cpu_to_be64(mr->iova);
	b->mid = SDP_MID_SRCAVAIL;
	b->len = sizeof(*sa);
	b->off = 0;
	ssk->conn.zc_tx.slot = ssk->conn.tx_head;
	ssk->conn.tx_head++;
	ssk->conn.zc_tx.len = len;
	ssk->conn.zc_tx.acked = 0;
	clear_bit(SDP_ZT_SENDSM, &ssk->conn.zc_tx.flags);
	clear_bit(SDP_ZT_CANCEL_WANT, &ssk->conn.zc_tx.flags);
	clear_bit(SDP_ZT_CANCEL_SENT, &ssk->conn.zc_tx.flags);
	clear_bit(SDP_ZT_RINV, &ssk->conn.zc_tx.flags);
	clear_bit(SDP_ZT_SENT, &ssk->conn.zc_tx.flags);
	SDP_SK_INC(ssk, SRCAVAIL_TX);
	sdp_tx_try_control(ssk);
	return 0;
}

/*
 * Advertise, on Soft-RoCE (sdp_device::reg_acked) once the send queue is
 * acknowledged: wait for that up to SDP_ZC_STALL (the time counts against
 * SO_SNDTIMEO).  Returns sdp_zc_advertise()'s result, or -EBUSY when the
 * queue stayed busy or a signal came: the caller sends buffered instead.
 */
static int sdp_zc_post_advert(struct sock *sk, struct ib_mr *mr, u32 len,
			      long *timeo)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	long left = min_t(long, *timeo, SDP_ZC_STALL), start = left;
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	int err;

	for (;;) {
		spin_lock_bh(&ssk->lock);
		if (!ssk->conn.sdev->reg_acked || !sdp_tx_usable(ssk) ||
		    (sk->sk_shutdown & SEND_SHUTDOWN) ||
		    sdp_zc_sq_acked(ssk)) {
			clear_bit(SDP_ZT_SQ_WAIT, &ssk->conn.zc_tx.flags);
			err = sdp_zc_advertise(ssk, mr, len);
			spin_unlock_bh(&ssk->lock);
			break;
		}
		set_bit(SDP_ZT_SQ_WAIT, &ssk->conn.zc_tx.flags);
		spin_unlock_bh(&ssk->lock);
		if (!left || signal_pending(current)) {
			err = -EBUSY;
			break;
		}
		add_wait_queue(sk_sleep(sk), &wait);
		sk_wait_event(sk, &left,
			      !test_bit(SDP_ZT_SQ_WAIT, &ssk->conn.zc_tx.flags) ||
			      READ_ONCE(sk->sk_err) ||
			      (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN),
			      &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	}
	if (*timeo != MAX_SCHEDULE_TIMEOUT)
		*timeo -= start - left;
	return err;
}

/* At most what the MR maps, whatever the offset in the first page. */
static u32 sdp_zc_send_len(const struct sdp_sock *ssk, size_t seg)
{
	size_t len = min_t(size_t, seg, SDP_ZC_MAX_BYTES);

	return min_t(size_t, len, (sdp_zc_mr_pages(ssk) - 1) * PAGE_SIZE);
}

/**
 * sdp_zc_send() - send the next user segment of @msg zero-copy
 * @sk: the socket, lock_sock() and tx_mutex held, connection established
 * @msg: the message; its iterator advances by what the peer read
 * @timeo: the send timeout left
 * @fallback: set when the rest of this send should go buffered (pages
 *	not pinnable, receiver declined with SendSM, or stalled)
 * @err: set when the send must end here: a signal (-EINTR,
 *	-ERESTARTSYS), SO_SNDTIMEO (-EAGAIN), or a dead connection (-EPIPE)
 *
 * Return: bytes the peer read.
 */
size_t sdp_zc_send(struct sock *sk, struct msghdr *msg, long *timeo,
		   bool *fallback, int *err)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_zc_pages zp;
	bool stalled = false, rinv;
	unsigned long base;
	struct ib_mr *mr;
	size_t seg;
	u32 len, acked;
	int n;

	*err = 0;
	if (!sdp_iter_user_seg(&msg->msg_iter, &base, &seg))
		goto fall_back;
	*err = sdp_zc_wait_slot(sk, timeo);
	if (*err)
		return 0;
	/*
	 * Under lock_sock() since: the connection's MR, QP and device stay
	 * from here until sdp_zc_put(), also while sdp_zc_post_advert() and
	 * sdp_zc_tx_wait() sleep without it.
	 */
	spin_lock_bh(&ssk->lock);
	ssk->conn.zc_busy++;
	spin_unlock_bh(&ssk->lock);
	len = sdp_zc_send_len(ssk, seg);

	mr = sdp_zc_mr(ssk);
	if (!mr || sdp_zc_pin(&zp, base, len, DMA_TO_DEVICE))
		goto fall_back_put;
	if (sdp_zc_map(ssk, &zp, mr))
		goto fall_back_unpin;

	n = sdp_zc_post_advert(sk, mr, len, timeo);
	if (n == -EBUSY)
		goto fall_back_unpin;
	if (n) {
		sdp_zc_unpin(&zp);
		sdp_zc_put(ssk);
		*err = -EPIPE;
		return 0;
	}

	*err = sdp_zc_tx_wait(sk, timeo, &stalled);

	spin_lock_bh(&ssk->lock);
	acked = ssk->conn.zc_tx.acked;
	rinv = test_bit(SDP_ZT_RINV, &ssk->conn.zc_tx.flags);
	if (test_bit(SDP_ZT_SENDSM, &ssk->conn.zc_tx.flags) || stalled)
		*fallback = true;
	sdp_zc_tx_clear(ssk);
	if (acked)
		sdp_stat_zcopy_tx(ssk, acked);
	if (acked < len)
		sdp_stat_zcopy_cancel(ssk, len - acked, true);
	/* A DisConn may have waited for the advertisement to end. */
	sdp_tx_try_control(ssk);
	spin_unlock_bh(&ssk->lock);

	/* The peer's last RdmaRdCompl may have invalidated the key already. */
	if (!rinv)
		sdp_zc_invalidate(sk);
	sdp_zc_unpin(&zp);
	sdp_zc_put(ssk);
	iov_iter_advance(&msg->msg_iter, acked);
	if (!*err && acked < len && !*fallback)
		*err = -EPIPE;		/* the connection died */
	return acked;

fall_back_unpin:
	sdp_zc_unpin(&zp);
fall_back_put:
	sdp_zc_put(ssk);
fall_back:
	sdp_zc_count_fallback(ssk);
	*fallback = true;
	return 0;
}

/*
 * Advertise the mapped @za now, or, on Soft-RoCE (sdp_device::reg_acked:
 * its retransmission runs a REG_MR queued behind a lost SEND a second
 * time, which kills the QP), once our sends in flight are acknowledged:
 * sdp_zc_sq_progress() queues the work, which does it (REG).
 * ssk->lock held.
 */
int sdp_zc_async_post(struct sdp_sock *ssk, struct sdp_zc_async *za,
		      struct ib_mr *mr)
{
	lockdep_assert_held(&ssk->lock);
	za->stall = jiffies + SDP_ZC_STALL;
	if (ssk->conn.sdev->reg_acked && !sdp_zc_sq_acked(ssk)) {
		set_bit(SDP_ZT_SQ_WAIT, &ssk->conn.zc_tx.flags);
		za->phase = SDP_ZA_REG;
		za->unsent = za->len;
		return 0;
	}
	za->phase = SDP_ZA_ADVERT;
	WRITE_ONCE(za->unsent, 0);
	za->last = jiffies + SDP_ZC_ADVERT_MAX;
	return sdp_zc_advertise(ssk, mr, za->len);
}

/**
 * sdp_zc_send_async() - advertise a nonblocking MSG_ZEROCOPY send
 * @sk: the socket, lock_sock() and tx_mutex held, connection established,
 *	no MSG_ZEROCOPY send in progress
 * @msg: the send, whose first segment is to go; its iterator advances
 *	by what is taken
 * @note: its notification; taken (set to NULL) with the bytes
 *
 * The send takes the first segment of @msg, up to what one advertisement
 * maps, if it holds at least zc_thresh bytes and a send slot is free
 * now, and returns at once.  The SrcAvail goes now, or once our sends in
 * flight are acknowledged (Soft-RoCE).  The caller's pages stay pinned
 * until the peer has read them, or until their rest is copied into the
 * send ring, and the notification says which; until then no other data
 * goes (sdp_tx_writable()).
 *
 * Return: bytes taken, or 0 for the buffered path.
 */
size_t sdp_zc_send_async(struct sock *sk, struct msghdr *msg,
			 struct sk_buff **note)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_zc_async *za;
	unsigned long base;
	long timeo = 0;
	struct ib_mr *mr;
	size_t seg;
	u32 len;
	int err;

	if (!*note || !ssk->zc_thresh || sdp_zc_held(ssk) ||
	    !sdp_iter_user_seg(&msg->msg_iter, &base, &seg) ||
	    seg < ssk->zc_thresh)
		return 0;
	/* No slot: the buffered path says EAGAIN, or why the send fails. */
	if (sdp_zc_wait_slot(sk, &timeo))
		return 0;
	za = kzalloc(sizeof(*za), GFP_KERNEL);
	if (!za)
		goto fall_back;
	len = sdp_zc_send_len(ssk, seg);
	mr = sdp_zc_mr(ssk);
	if (!mr || sdp_zc_pin(&za->zp, base, len, DMA_TO_DEVICE))
		goto fall_back_free;
	if (sdp_zc_map(ssk, &za->zp, mr))
		goto fall_back_unpin;
	za->note = *note;
	za->off = offset_in_page(base);
	za->len = len;

	spin_lock_bh(&ssk->lock);
	err = sdp_zc_async_post(ssk, za, mr);
	if (!err) {
		WRITE_ONCE(ssk->zc_async, za);
		ssk->conn.zc_busy++;
	}
	spin_unlock_bh(&ssk->lock);
	if (err)
		goto fall_back_unpin;
	mmgrab(za->zp.mm);
	za->id = sdp_msgzc_id(sk);
	*note = NULL;
	iov_iter_advance(&msg->msg_iter, len);
	sdp_queue_work(ssk);	/* it sets its stall check */
	return len;

fall_back_unpin:
	sdp_zc_unpin(&za->zp);
fall_back_free:
	kfree(za);
fall_back:
	sdp_zc_count_fallback(ssk);
	return 0;
}

/*
 * REG, on Soft-RoCE only (sdp_zc_async_post(): the second run of a
 * REG_MR that its retransmission makes would kill the QP): advertise
 * once our sends are acknowledged; if they are not within
 * SDP_ZC_STALL, or the connection no longer takes a SrcAvail (a
 * shutdown() queued our DisConn meanwhile), the bytes go buffered.
 * Sets *@next to when to look again; returns true when this phase is
 * over.
 */
static bool sdp_zc_async_reg(struct sdp_sock *ssk, struct sdp_zc_async *za,
			     unsigned long *next)
{
	/* The SrcAvail's slot kept its buffer: nothing else sends. */
	bool over = true, slot = !sdp_tx_slot_ready(ssk);

	spin_lock_bh(&ssk->lock);
	if (!sdp_zc_sq_acked(ssk) && sdp_tx_usable(ssk) &&
	    time_before(jiffies, za->stall)) {
		set_bit(SDP_ZT_SQ_WAIT, &ssk->conn.zc_tx.flags);
		*next = za->stall;
		over = false;
	} else {
		clear_bit(SDP_ZT_SQ_WAIT, &ssk->conn.zc_tx.flags);
		if (slot && sdp_zc_sq_acked(ssk) &&
		    !sdp_zc_advertise(ssk, ssk->conn.zc_tx.mr, za->len)) {
			za->phase = SDP_ZA_ADVERT;
			za->unsent = 0;
			za->stall = jiffies + SDP_ZC_STALL;
			za->last = jiffies + SDP_ZC_ADVERT_MAX;
			*next = za->stall;
			over = false;
		} else {
			za->phase = SDP_ZA_FILL;	/* all of it buffered */
			sdp_zc_count_fallback_locked(ssk);
		}
	}
	spin_unlock_bh(&ssk->lock);
	return over;
}

/*
 * ADVERT: is the advertisement over?  If not, cancel it when it stalls
 * or runs too long, and abort a peer that does not answer.  Sets *@next
 * to when to look again.
 */
static bool sdp_zc_async_over(struct sdp_sock *ssk, struct sdp_zc_async *za,
			      unsigned long *next)
{
	bool over, abort = false;

	spin_lock_bh(&ssk->lock);
	over = sdp_zc_tx_over(ssk);
	if (!over && !za->cancelled) {
		if (ssk->conn.zc_tx.acked != za->seen) {
			za->seen = ssk->conn.zc_tx.acked;
			za->stall = jiffies + SDP_ZC_STALL;
		}
		if (time_after_eq(jiffies, za->stall) ||
		    time_after_eq(jiffies, za->last)) {
			za->cancelled = true;
			over = sdp_zc_tx_cancel(ssk);
			za->answer_by = jiffies + SDP_ZC_ANSWER_TIMEOUT;
		}
	} else if (!over && time_after(jiffies, za->answer_by)) {
		abort = true;
	}
	if (za->cancelled)
		*next = za->answer_by;
	else
		*next = time_before(za->stall, za->last) ? za->stall : za->last;
	spin_unlock_bh(&ssk->lock);
	if (abort) {
		sdp_warn_peer(ssk, "no answer to SrcAvailCancel in %us; aborting\n",
			      SDP_ZC_ANSWER_TIMEOUT / HZ);
		sdp_abort(ssk, SDP_ABORT_REASON_PROTO, -ETIMEDOUT);
		over = true;
	}
	return over;
}

/*
 * The advertisement is over: account it as sdp_zc_send() does, and
 * invalidate our key unless the peer did.  Returns whether a LOCAL_INV
 * is in flight.
 */
static bool sdp_zc_async_advert_end(struct sdp_sock *ssk,
				    struct sdp_zc_async *za)
{
	bool rinv;
	int err;

	spin_lock_bh(&ssk->lock);
	za->acked = ssk->conn.zc_tx.acked;
	rinv = test_bit(SDP_ZT_RINV, &ssk->conn.zc_tx.flags);
	sdp_zc_tx_clear(ssk);
	if (za->acked)
		sdp_stat_zcopy_tx(ssk, za->acked);
	if (za->acked < za->len)
		sdp_stat_zcopy_cancel(ssk, za->len - za->acked, true);
	WRITE_ONCE(za->unsent, za->len - za->acked);
	spin_unlock_bh(&ssk->lock);
	if (rinv)
		return false;
	err = sdp_zc_inv_post(ssk);
	if (err)
		sdp_zc_inv_check(ssk, err);
	za->answer_by = jiffies + SDP_ZC_ANSWER_TIMEOUT;
	return !err;
}

/* What sdp_zc_async_fill() left to do. */
enum sdp_zf_result {
	SDP_ZF_DONE,		/* nothing: all copied, or no connection */
	SDP_ZF_NO_ROOM,		/* room in the ring queues the work */
	SDP_ZF_RETRY,		/* no memory now: look again later */
};

/*
 * FILL: copy what the peer did not read into the send ring, as much as
 * there is room for.  SDP_ZF_NO_ROOM only when SDP_ZT_ASYNC_FILL was set
 * and the ring had no room after it, under ssk->lock: sdp_tx_async_kick()
 * then sees the room that comes.
 */
static enum sdp_zf_result sdp_zc_async_fill(struct sdp_sock *ssk,
					    struct sdp_zc_async *za)
{
	struct sock *sk = &ssk->sk;
	struct iov_iter from;
	u32 done, i, at;
	ssize_t n;

	if (!za->unsent)
		return SDP_ZF_DONE;
	if (!za->bvec) {
		za->bvec = kvmalloc_array(za->zp.npages, sizeof(*za->bvec),
					  GFP_KERNEL);
		if (!za->bvec)
			return SDP_ZF_RETRY;
		for (i = 0, at = za->off; i < za->zp.npages; i++, at = 0)
			bvec_set_page(&za->bvec[i], za->zp.pages[i],
				      PAGE_SIZE - at, at);
		za->nr_bvec = za->zp.npages;
	}
	sdp_tx_ring_ready(ssk);
	done = za->len - za->unsent;
	iov_iter_bvec(&from, ITER_SOURCE, za->bvec, za->nr_bvec, za->len);
	iov_iter_advance(&from, done);
	for (;;) {
		spin_lock_bh(&ssk->lock);
		if (sk->sk_err || test_bit(SDP_C_ABORT, &ssk->conn.flags) ||
		    !sdp_tx_usable(ssk)) {
			spin_unlock_bh(&ssk->lock);
			return SDP_ZF_DONE;
		}
		spin_unlock_bh(&ssk->lock);
		n = sdp_tx_fill(ssk, &from, za->unsent, false);
		/*
		 * -ENOMEM (or -EFAULT, the pages being pinned: never) may come
		 * after a pass that set SDP_ZT_ASYNC_FILL and found room: no
		 * room event is due, so the work must look again itself.
		 */
		if (n < 0)
			return n == -EPIPE ? SDP_ZF_DONE : SDP_ZF_RETRY;
		spin_lock_bh(&ssk->lock);
		if (!n) {
			/* Room that comes from now on queues us. */
			set_bit(SDP_ZT_ASYNC_FILL, &ssk->conn.zc_tx.flags);
			n = sdp_tx_room(ssk);
			spin_unlock_bh(&ssk->lock);
			if (!n)
				return SDP_ZF_NO_ROOM;
			continue;
		}
		clear_bit(SDP_ZT_ASYNC_FILL, &ssk->conn.zc_tx.flags);
		WRITE_ONCE(za->unsent, za->unsent - n);
		if (!za->unsent) {
			sdp_tx_flush(ssk);
			spin_unlock_bh(&ssk->lock);
			return SDP_ZF_DONE;
		}
		spin_unlock_bh(&ssk->lock);
	}
}

/* The send is over: the pages go, its notification comes, data may follow. */
static void sdp_zc_async_free(struct sdp_zc_async *za)
{
	u32 i;

	sdp_zc_unpin(&za->zp);
	if (za->zp.mm)
		mmdrop(za->zp.mm);
	if (za->spliced)
		for (i = 0; i < za->nr_bvec; i++)
			put_page(za->bvec[i].bv_page);
	kvfree(za->bvec);
}

static void sdp_zc_async_end(struct sdp_sock *ssk, struct sdp_zc_async *za)
{
	struct sock *sk = &ssk->sk;

	sdp_zc_async_free(za);
	if (za->spliced)
		sdp_mem_uncharge(ssk, za->nr_bvec, PAGE_SIZE);
	spin_lock_bh(&ssk->lock);
	WRITE_ONCE(ssk->zc_async, NULL);
	if (za->spliced)
		ssk->zc_spliced -= za->len;
	clear_bit(SDP_ZT_ASYNC_FILL, &ssk->conn.zc_tx.flags);
	/* A DisConn may wait for it. */
	sdp_tx_try_control(ssk);
	spin_unlock_bh(&ssk->lock);
	if (za->spliced)
		SDP_ADD_STATS(sock_net(sk), SDP_MIB_ZCOPY_TX_SPLICED_BYTES,
			      za->acked);
	else if (sock_flag(sk, SOCK_DEAD))
		consume_skb(za->note);	/* nobody can read it */
	else
		sdp_msgzc_queue(sk, za->note, za->id, za->acked < za->len);
	kfree(za);
	sdp_zc_put(ssk);
	sk->sk_write_space(sk);
	sdp_sock_wake(ssk, TASK_NORMAL);
}

/**
 * sdp_zc_async_run() - see a nonblocking MSG_ZEROCOPY send through
 * @ssk: the socket, lock_sock() held (sdp_work()); the lock is not
 *	released
 *
 * Return: how long until it should look again, or 0 for not until an
 * event queues the work (the advertisement's end, the LOCAL_INV's
 * completion, room in the send ring) or when none is in progress.
 */
unsigned long sdp_zc_async_run(struct sdp_sock *ssk)
{
	struct sdp_zc_async *za = ssk->zc_gather;
	unsigned long next = 0;

	sock_owned_by_me(&ssk->sk);
	if (za && !za->sealed) {
		/* Pages no longer coming, or no connection to send them. */
		if (time_before(jiffies, za->gather_by) &&
		    !READ_ONCE(ssk->sk.sk_err) &&
		    !test_bit(SDP_C_ABORT, &ssk->conn.flags))
			next = max_t(long, 1, za->gather_by - jiffies);
		else
			sdp_zc_gather_seal(ssk);
	}
	za = ssk->zc_async;
	if (!za)
		return ssk->zc_gather ? next : 0;
	switch (za->phase) {
	case SDP_ZA_REG:
		if (!sdp_zc_async_reg(ssk, za, &next))
			return max_t(long, 1, next - jiffies);
		if (za->phase == SDP_ZA_FILL)
			break;
		return max_t(long, 1, next - jiffies);
	case SDP_ZA_ADVERT:
		if (!sdp_zc_async_over(ssk, za, &next))
			return max_t(long, 1, next - jiffies);
		za->phase = SDP_ZA_INV;
		if (sdp_zc_async_advert_end(ssk, za))
			return SDP_ZC_ANSWER_TIMEOUT + 1;
		za->phase = SDP_ZA_FILL;
		break;
	case SDP_ZA_INV:
		if (!test_bit(SDP_ZT_INV_DONE, &ssk->conn.zc_tx.flags)) {
			if (time_before(jiffies, za->answer_by))
				return max_t(long, 1, za->answer_by - jiffies);
			net_warn_ratelimited("zero-copy work request not completed in %us; aborting\n",
					     SDP_ZC_ANSWER_TIMEOUT / HZ);
			/* The flush completes it, and queues us. */
			sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ETIMEDOUT);
			return SDP_ZC_ANSWER_TIMEOUT;
		}
		sdp_zc_inv_check(ssk, 0);
		za->phase = SDP_ZA_FILL;
		break;
	case SDP_ZA_FILL:
		break;
	}
	switch (sdp_zc_async_fill(ssk, za)) {
	case SDP_ZF_NO_ROOM:
		return 0;
	case SDP_ZF_RETRY:	/* without a buffer or the bio_vecs */
		return HZ / 10;
	case SDP_ZF_DONE:
		break;
	}
	sdp_zc_async_end(ssk, za);
	/* Spliced pages gathered meanwhile go next. */
	za = ssk->zc_gather;
	if (za && za->sealed)
		sdp_zc_gather_start(ssk);	/* it queues the work */
	else if (za)
		return max_t(long, 1, za->gather_by - jiffies);
	return 0;
}

/* Bytes of a MSG_ZEROCOPY send in progress not yet in the send ring or
 * advertised (SIOCOUTQ).  ssk->lock held.
 */
u32 sdp_zc_unsent(const struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	return (ssk->zc_gather ? READ_ONCE(ssk->zc_gather->unsent) : 0) +
	       (ssk->zc_async ? READ_ONCE(ssk->zc_async->unsent) : 0);
}
