// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- the close and abort state machine.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * A connection's state is its TCP state (sk_state, as TCP names them)
 * together with the close flags of sdp_conn::flags: DISCONN_WANT, _SENT,
 * _DONE (our DisConn asked for, posted, delivered), DISCONN_RCVD (the
 * peer's), ABORT, ABORT_SENT (our AbortConn posted), CM_DISCONNECT
 * (rdma_disconnect() called or DISCONNECTED seen).  Every change of them
 * happens here, one entry point per event; the data path calls these.
 * The states, the events and what they do are the DOC: block below, which
 * Documentation/networking/sdp.rst shows (scripts/doc-sync copies it).
 *
 * Errors are negative errnos throughout (sdp_abort()'s @err too); only
 * sk_err holds a positive one, as for every socket.
 */

/**
 * DOC: Connection states
 *
 * A socket's state is its TCP state, as ``/proc/net/sdp`` and sock_diag
 * show it, together with what is known of the two DisConns and of an
 * abort.  Every change happens in the module's ``sdp_close.c``, one
 * function per event (named in the table where it is not the call
 * itself):
 *
 * +--------------+-----------------------------+------------------------------+
 * | state        | event                       | next state, action           |
 * +==============+=============================+==============================+
 * | ESTABLISHED  | ``shutdown(SHUT_WR)``,      | FIN_WAIT1; DisConn behind    |
 * |              | ``close``                   | the data                     |
 * |              | (sdp_close_send_disconn)    |                              |
 * +--------------+-----------------------------+------------------------------+
 * | CLOSE_WAIT   | ``shutdown(SHUT_WR)``,      | LAST_ACK; the same           |
 * |              | ``close``                   |                              |
 * +--------------+-----------------------------+------------------------------+
 * | ESTABLISHED, | ``close`` with unread data  | CLOSE; abort                 |
 * | CLOSE_WAIT,  | or ``SO_LINGER`` {1, 0}     | (``AbortOnClose``)           |
 * | FIN_WAIT1/2  |                             |                              |
 * +--------------+-----------------------------+------------------------------+
 * | CLOSING,     | ``close`` with unread data  | CLOSE; abort                 |
 * | LAST_ACK     |                             | (``AbortOnClose``)           |
 * +--------------+-----------------------------+------------------------------+
 * | FIN_WAIT2    | ``close`` with              | CLOSE; abort                 |
 * |              | ``TCP_LINGER2`` < 0         | (``AbortOnClose``)           |
 * +--------------+-----------------------------+------------------------------+
 * | SYN_SENT,    | ``close``                   | CLOSE; abort, not counted    |
 * | SYN_RECV     |                             |                              |
 * +--------------+-----------------------------+------------------------------+
 * | LISTEN       | ``close``                   | CLOSE; connections not yet   |
 * |              |                             | accepted are aborted         |
 * |              |                             | (``AbortOnClose``)           |
 * +--------------+-----------------------------+------------------------------+
 * | ESTABLISHED  | the peer's DisConn          | CLOSE_WAIT; end of stream    |
 * |              | (sdp_close_disconn_rcvd)    |                              |
 * +--------------+-----------------------------+------------------------------+
 * | FIN_WAIT1/2  | the peer's DisConn          | CLOSING                      |
 * +--------------+-----------------------------+------------------------------+
 * | FIN_WAIT1    | our DisConn delivered       | FIN_WAIT2                    |
 * |              | (sdp_close_disconn_done)    |                              |
 * +--------------+-----------------------------+------------------------------+
 * | CLOSING,     | both DisConns through,      | CLOSE; the CM connection is  |
 * | LAST_ACK     | nothing in flight           | disconnected                 |
 * |              | (sdp_close_check_done)      |                              |
 * +--------------+-----------------------------+------------------------------+
 * | any open     | AbortConn from the peer     | CLOSE; ``ECONNRESET``        |
 * |              |                             | (``EPIPE`` after its         |
 * |              |                             | DisConn, and ``recv`` still  |
 * |              |                             | gives end of stream)         |
 * +--------------+-----------------------------+------------------------------+
 * | ESTABLISHED  | a REJ after our RTU: the    | CLOSE; ``ECONNRESET``        |
 * | (active)     | passive side dropped its    | (``AbortOnCmDisconnect``)    |
 * |              | half before the RTU reached |                              |
 * |              | it (its listener closed)    |                              |
 * |              | (sdp_cm_rejected)           |                              |
 * +--------------+-----------------------------+------------------------------+
 * | any open     | protocol error, failed      | CLOSE; ``ECONNRESET``        |
 * |              | completion, device removal  | (device gone: ``ENETDOWN``), |
 * |              | (sdp_abort)                 | AbortConn to the peer where  |
 * |              |                             | it can go                    |
 * +--------------+-----------------------------+------------------------------+
 * | established  | the QP went to the error    | CLOSE; ``ECONNRESET``        |
 * |              | state with no CM event: a   | (``AbortOnCqError``)         |
 * |              | flushed completion we did   |                              |
 * |              | not cause and no CM event   |                              |
 * |              | explained within 1 s, an    |                              |
 * |              | error event of the QP, CQ   |                              |
 * |              | or device (sdp_cq_flushed,  |                              |
 * |              | sdp_conn_fatal)             |                              |
 * +--------------+-----------------------------+------------------------------+
 * | any open     | the peer stops answering:   | CLOSE; ``ETIMEDOUT``         |
 * |              | keepalive, a persist probe  | (``AbortOnTimeout``; a send  |
 * |              | or a send ran out of        | that ran out of retries:     |
 * |              | retries, or                 | ``AbortOnCqError``)          |
 * |              | ``TCP_USER_TIMEOUT`` passed |                              |
 * |              | (sdp_keepalive.c)           |                              |
 * +--------------+-----------------------------+------------------------------+
 * | any open     | the CM's DISCONNECTED       | CLOSE; an abort              |
 * |              | (sdp_close_cm_disconnected) | (``AbortOnCmDisconnect``)    |
 * |              |                             | unless the peer's DisConn    |
 * |              |                             | came and ours was posted     |
 * |              |                             | (the peer's DREQ may         |
 * |              |                             | overtake the acknowledgment  |
 * |              |                             | of ours, whose completion is |
 * |              |                             | then flushed)                |
 * +--------------+-----------------------------+------------------------------+
 * | closed by    | Data or SrcAvail from the   | CLOSE; abort                 |
 * | its owner    | peer, from the moment       | (``AbortOnData``)            |
 * |              | ``close`` looked for unread |                              |
 * |              | data (sdp_close_take_rx)    |                              |
 * +--------------+-----------------------------+------------------------------+
 * | closed by    | ``net.sdp.fin_timeout`` (or | abort (``AbortOnTimeout``)   |
 * | its owner    | the socket's                |                              |
 * |              | ``TCP_LINGER2``) passes     |                              |
 * |              | (sdp_timeout_work)          |                              |
 * +--------------+-----------------------------+------------------------------+
 * | SYN_SENT     | the connection cannot be    | CLOSE; the error to          |
 * |              | made                        | ``connect``                  |
 * +--------------+-----------------------------+------------------------------+
 *
 * sdp_work() acts on the result, in process context: the CM connection is
 * disconnected once the state is CLOSE or the connection was aborted
 * (after our AbortConn went out, or did not within 2 s,
 * SDP_ABORT_DELIVERY), and the QP, CQ, buffers and CM id are released
 * once the owner has closed the socket, its device goes away, or its
 * ``connect`` failed (sdp_conn_detach()).
 */
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_cm.h"
#include "sdp_conn.h"
#include "sdp_cq.h"
#include "sdp_ctrl.h"
#include "sdp_dev.h"
#include "sdp_fallback.h"
#include "sdp_fault.h"
#include "sdp_proto.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_zc.h"

/*
 * Does an abort for @why tell the peer with AbortConn?  Not when the peer
 * aborted, nor when the QP or the CM connection failed (it could not
 * arrive), nor for a connection that was never made (SDP_ABORT_REASON_NONE).
 */
static bool sdp_abort_tells_peer(enum sdp_abort_reason why)
{
	switch (why) {
	case SDP_ABORT_REASON_NONE:
	case SDP_ABORT_REASON_PEER:
	case SDP_ABORT_REASON_CQ_ERROR:
	case SDP_ABORT_REASON_CM_DISCONNECT:
		return false;
	default:
		return true;
	}
}

/**
 * __sdp_abort() - abort the connection
 * @ssk: the socket; ssk->lock held, any context
 * @why: the reason, counted once per connection (SDP_ABORT_REASON_NONE: a
 *	connection that was never made, not counted)
 * @err: the socket's error (negative), or 0 for none (a closed socket)
 *
 * The socket goes to CLOSE with @err; the peer gets an AbortConn if @why
 * calls for it and the QP can still carry it; sdp_work() disconnects.
 */
void __sdp_abort(struct sdp_sock *ssk, enum sdp_abort_reason why, int err)
{
	struct sock *sk = &ssk->sk;

	lockdep_assert_held(&ssk->lock);
	if (test_bit(SDP_C_ABORT, &ssk->conn.flags))
		return;
	sdp_stat_abort(ssk, why);
	sdp_trace_abort(ssk, err, sdp_abort_tells_peer(why));
	if (sdp_abort_tells_peer(why) && sdp_tx_usable(ssk) &&
	    !sdp_post_ctrl(ssk, SDP_MID_ABORT)) {
		set_bit(SDP_C_ABORT_SENT, &ssk->conn.flags);
		ssk->conn.abort_sent = jiffies;
	}
	set_bit(SDP_C_ABORT, &ssk->conn.flags);
	if (err && !sock_flag(sk, SOCK_DEAD))
		WRITE_ONCE(sk->sk_err, -err);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	sdp_set_state(sk, TCP_CLOSE);
	sdp_queue_work(ssk);
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		sk_error_report(sk);
	}
	sdp_sock_wake(ssk, TASK_NORMAL);	/* zero-copy waits are uninterruptible */
}

void sdp_abort(struct sdp_sock *ssk, enum sdp_abort_reason why, int err)
{
	spin_lock_bh(&ssk->lock);
	__sdp_abort(ssk, why, err);
	spin_unlock_bh(&ssk->lock);
}

/*
 * Our AbortConn is posted and not yet completed: the QP must not go to
 * the error state (disconnect, teardown) before it is delivered, or it
 * would be flushed (a device may carry a send out well after it was
 * posted: Soft-RoCE from a work item since Linux 6.4).  Its completion
 * queues sdp_work() again.  A peer that posts no receive buffer can hold
 * it back for ever (the RNR retries of our QP are the peer's to set), so
 * this holds for at most SDP_ABORT_DELIVERY after it was posted, and not
 * at all while the device goes away.  ssk->lock held.
 */
bool sdp_abort_in_flight(const struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	return test_bit(SDP_C_ABORT_SENT, &ssk->conn.flags) &&
	       ssk->conn.ctrl_tail != ssk->conn.ctrl_head &&
	       time_before(jiffies, ssk->conn.abort_sent + SDP_ABORT_DELIVERY) &&
	       !sdp_device_removing(ssk->conn.sdev);
}

/*
 * Can the peer's QP still send to ours?  After our DREQ it can until its
 * CM answers: the peer moves its QP to the error state before it sends
 * its DREP (rdma_disconnect() does both), as before a DREQ of its own.
 * Our QP, in the error state, drops what comes meanwhile; destroyed, it
 * would meet it half gone (on Soft-RoCE a packet that arrives while the
 * QP is destroyed finds it without references: 6.12 warns in
 * rxe_sched_task()).  So the QP stays until DISCONNECTED, or
 * SDP_DREQ_ANSWER after our DREQ for a peer that never answers; a
 * device going away does not wait (sdp_close_work()), and a detached
 * connection has no QP left (sdp_conn_detach() clears the bit).
 * Returns the jiffies left, 0 for none.  Lockless (sdp_conn_busy()):
 * cm_dreq_at is written, under ssk->lock, before SDP_C_CM_DREQ is set.
 */
unsigned long sdp_peer_may_send(const struct sdp_sock *ssk)
{
	unsigned long end, now = jiffies;

	if (!test_bit(SDP_C_CM_DREQ, &ssk->conn.flags) ||
	    test_bit(SDP_C_CM_DISCONNECTED, &ssk->conn.flags))
		return 0;
	smp_rmb();	/* cm_dreq_at, written before the bit */
	end = READ_ONCE(ssk->conn.cm_dreq_at) + SDP_DREQ_ANSWER;
	return time_before(now, end) ? end - now : 0;
}

/*
 * Our rdma_disconnect(): on a connection that was established it sends a
 * DREQ, whose answer our QP waits for (sdp_peer_may_send()).
 * lock_sock() held.
 */
static void sdp_close_disconnect(struct sdp_sock *ssk)
{
	if (rdma_disconnect(ssk->id) ||
	    !test_bit(SDP_C_ESTABLISHED, &ssk->conn.flags))
		return;
	spin_lock_bh(&ssk->lock);
	WRITE_ONCE(ssk->conn.cm_dreq_at, jiffies);
	smp_wmb();	/* before the bit: sdp_peer_may_send() */
	set_bit(SDP_C_CM_DREQ, &ssk->conn.flags);
	spin_unlock_bh(&ssk->lock);
}

/*
 * Both DisConns are through (ours delivered, theirs received) and nothing
 * is in flight: the connection is over.  ssk->lock held.
 */
void sdp_close_check_done(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	if (!test_bit(SDP_C_DISCONN_DONE, &ssk->conn.flags) ||
	    !test_bit(SDP_C_DISCONN_RCVD, &ssk->conn.flags) ||
	    !sdp_tx_idle(ssk))
		return;
	if (ssk->sk.sk_state != TCP_CLOSE) {
		sdp_set_state(&ssk->sk, TCP_CLOSE);
		if (!sock_flag(&ssk->sk, SOCK_DEAD))
			ssk->sk.sk_state_change(&ssk->sk);
	}
	sdp_queue_work(ssk);
}

/* The peer's DisConn arrived: the state moves as on a FIN.  ssk->lock held. */
void sdp_close_disconn_rcvd(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	lockdep_assert_held(&ssk->lock);
	set_bit(SDP_C_DISCONN_RCVD, &ssk->conn.flags);
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | RCV_SHUTDOWN);
	switch (sk->sk_state) {
	case TCP_ESTABLISHED:
		sdp_set_state(sk, TCP_CLOSE_WAIT);
		break;
	case TCP_FIN_WAIT1:
	case TCP_FIN_WAIT2:
		sdp_set_state(sk, TCP_CLOSING);
		break;
	}
	sdp_close_check_done(ssk);
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		sk_wake_async(sk, SOCK_WAKE_WAITD, POLL_HUP);
	}
}

/* Our DisConn was delivered (its send completed).  ssk->lock held. */
void sdp_close_disconn_done(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	set_bit(SDP_C_DISCONN_DONE, &ssk->conn.flags);
	if (ssk->sk.sk_state == TCP_FIN_WAIT1)
		sdp_set_state(&ssk->sk, TCP_FIN_WAIT2);
}

/*
 * The CM's DISCONNECTED (the peer's DREQ, or the reply to ours): answer
 * it, and end the connection: in order once the peer's DisConn came and
 * ours was posted, else as an abort.  lock_sock() held (the CM handler).
 *
 * Ours need not have completed.  The peer disconnects in order only
 * after both DisConns reached it, and its DREQ can overtake the RC
 * acknowledgment of ours: the disconnect then flushes our DisConn's
 * completion although it was delivered (Soft-RoCE on 6.12 does in about
 * one orderly close in ten, tests/counters.c).  A peer that ends the
 * connection otherwise sends AbortConn first, which arrives before its
 * DREQ (sdp_abort_in_flight()).
 */
void sdp_close_cm_disconnected(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sock *sk = &ssk->sk;
	bool disconnect;

	sock_owned_by_me(sk);
	/* The peer's DisConn may still wait in the CQ: see it first. */
	sdp_cq_process_pending(ssk);
	spin_lock_bh(&ssk->lock);
	disconnect = !test_and_set_bit(SDP_C_CM_DISCONNECT, &ssk->conn.flags);
	/*
	 * Ours may go: the peer's CM answered our DREQ (its QP moved to the
	 * error state first), sent its own, or ours timed out (DREQ_ERROR),
	 * and then the peer is presumed gone.
	 */
	set_bit(SDP_C_CM_DISCONNECTED, &ssk->conn.flags);
	spin_unlock_bh(&ssk->lock);
	if (disconnect)
		rdma_disconnect(id);
	spin_lock_bh(&ssk->lock);
	if (test_bit(SDP_C_ABORT, &ssk->conn.flags) ||
	    (test_bit(SDP_C_DISCONN_RCVD, &ssk->conn.flags) &&
	     test_bit(SDP_C_DISCONN_SENT, &ssk->conn.flags))) {
		if (sk->sk_state != TCP_CLOSE)
			sdp_set_state(sk, TCP_CLOSE);
	} else {
		__sdp_abort(ssk, SDP_ABORT_REASON_CM_DISCONNECT, -ECONNRESET);
	}
	spin_unlock_bh(&ssk->lock);
	sdp_queue_work(ssk);
	if (!sock_flag(sk, SOCK_DEAD))
		sk->sk_state_change(sk);
}

/* Queue our DisConn behind the data (shutdown(SHUT_WR) or close()). */
static void sdp_close_send_disconn(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	spin_lock_bh(&ssk->lock);
	if (sk->sk_state == TCP_ESTABLISHED)
		sdp_set_state(sk, TCP_FIN_WAIT1);
	else if (sk->sk_state == TCP_CLOSE_WAIT)
		sdp_set_state(sk, TCP_LAST_ACK);
	set_bit(SDP_C_DISCONN_WANT, &ssk->conn.flags);
	sdp_tx_flush(ssk);
	spin_unlock_bh(&ssk->lock);
}

int sdp_shutdown(struct socket *sock, int how)
{
	struct sock *sk = sock->sk;
	int err = 0;

	how++;	/* SHUT_RD..SHUT_RDWR -> RCV_SHUTDOWN..SHUTDOWN_MASK */
	if ((how & ~SHUTDOWN_MASK) || !how)
		return -EINVAL;

	if (sdp_fb(sdp_sk(sk)))
		return sdp_fb_shutdown(sdp_sk(sk), how - 1);
	lock_sock(sk);
	if (!sdp_connected(sk)) {
		err = -ENOTCONN;
		goto out;
	}
	/* Spliced pages gathered go before our DisConn. */
	if (how & SEND_SHUTDOWN)
		sdp_zc_gather_seal(sdp_sk(sk));
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | how);
	if ((how & SEND_SHUTDOWN) &&
	    (1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT))
		sdp_close_send_disconn(sdp_sk(sk));
	sk->sk_state_change(sk);
out:
	release_sock(sk);
	return err;
}

/* Abort every passive socket still waiting on the listener @lssk. */
static void sdp_listen_stop(struct sdp_sock *lssk)
{
	struct sdp_sock *child;

	for (;;) {
		spin_lock_bh(&lssk->lock);
		child = list_first_entry_or_null(&lssk->accept_queue,
						 struct sdp_sock, child_node);
		if (!child)
			child = list_first_entry_or_null(&lssk->pending,
							 struct sdp_sock,
							 child_node);
		if (child) {
			list_del_init(&child->child_node);
			sk_acceptq_removed(&lssk->sk);
		}
		spin_unlock_bh(&lssk->lock);
		if (!child)
			break;

		lock_sock(&child->sk);
		child->parent = NULL;
		sock_set_flag(&child->sk, SOCK_DEAD);
		sdp_abort(child, SDP_ABORT_REASON_CLOSE, 0);
		/* Even if it was aborted before: it is closed now. */
		sdp_queue_work(child);
		release_sock(&child->sk);
		sock_put(&lssk->sk);	/* the child's listener reference */
		sock_put(&child->sk);	/* the child's own reference */
	}
}

/* SO_LINGER {1, N}: wait up to N for our DisConn to be delivered. */
static void sdp_close_linger(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	long timeo = sk->sk_lingertime;
	DEFINE_WAIT_FUNC(wait, woken_wake_function);

	add_wait_queue(sk_sleep(sk), &wait);
	while (timeo && !signal_pending(current) &&
	       !test_bit(SDP_C_DISCONN_DONE, &ssk->conn.flags) &&
	       !test_bit(SDP_C_ABORT, &ssk->conn.flags) &&
	       sk->sk_state != TCP_CLOSE)
		sk_wait_event(sk, &timeo,
			      test_bit(SDP_C_DISCONN_DONE, &ssk->conn.flags) ||
			      test_bit(SDP_C_ABORT, &ssk->conn.flags) ||
			      READ_ONCE(sk->sk_state) == TCP_CLOSE, &wait);
	remove_wait_queue(sk_sleep(sk), &wait);
}

/*
 * close() takes the receive side from the owner: is anything unread?
 * Data or SrcAvail from now on resets the connection (sdp_rx_closed()),
 * as TCP resets data that reaches a socket close() has shut.  One look,
 * under ssk->lock: every message is either counted here or sees the
 * flag.  What came between a look at rx_bytes alone and sock_orphan()
 * was queued for nobody, never answered, and its receive buffers held
 * the peer's credits until net.sdp.fin_timeout.
 */
static bool sdp_close_take_rx(struct sdp_sock *ssk)
{
	bool unread;

	spin_lock_bh(&ssk->lock);
	set_bit(SDP_C_RX_CLOSED, &ssk->conn.flags);
	unread = ssk->conn.rx_bytes;
	spin_unlock_bh(&ssk->lock);
	return unread;
}

/*
 * Does Data or SrcAvail reset the connection: close() took the receive
 * side, or the socket is orphaned (closed unconnected, or a passive one
 * never accepted)?  ssk->lock held.
 */
bool sdp_rx_closed(const struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	return test_bit(SDP_C_RX_CLOSED, &ssk->conn.flags) ||
	       sock_flag(&ssk->sk, SOCK_DEAD);
}

int sdp_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct rdma_cm_id *id = NULL, *id4;
	struct sdp_sock *ssk;

	if (!sk)
		return 0;
	ssk = sdp_sk(sk);

	/*
	 * A socket that went on over TCP closes that (and is CLOSE then).
	 * A CM event handler may be starting a fallback: it has, or it
	 * will not (SDP_O_CLOSING, under lock_sock()).
	 */
	lock_sock(sk);
	set_bit(SDP_O_CLOSING, &ssk->opts);
	release_sock(sk);
	sdp_fb_release(ssk);
	lock_sock(sk);
	/* Spliced pages gathered go first (or with the connection). */
	sdp_zc_gather_seal(ssk);
	if (sk->sk_state == TCP_LISTEN) {
		spin_lock_bh(&ssk->lock);
		sdp_set_state(sk, TCP_CLOSE);
		spin_unlock_bh(&ssk->lock);
	} else if (sdp_connected(sk)) {
		/*
		 * As tcp_close(): unread data resets the connection, and so
		 * does SO_LINGER {1, 0} while our side is open or its DisConn
		 * may not have been delivered; otherwise the peer gets all
		 * data, then EOF.
		 */
		if (sdp_close_take_rx(ssk) ||
		    (sock_flag(sk, SOCK_LINGER) && !sk->sk_lingertime &&
		     ((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT |
					     TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2)))) {
			sdp_abort(ssk, SDP_ABORT_REASON_CLOSE, 0);
		} else if (sk->sk_state == TCP_FIN_WAIT2 &&
			   ssk->tcp.linger2 < 0) {
			/* As TCP with TCP_LINGER2 < 0: no waiting in FIN_WAIT2. */
			sdp_abort(ssk, SDP_ABORT_REASON_CLOSE, 0);
		} else {
			sdp_close_send_disconn(ssk);
			if (sock_flag(sk, SOCK_LINGER))
				sdp_close_linger(ssk);
		}
	} else if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		sdp_abort(ssk, SDP_ABORT_REASON_NONE, 0);	/* connecting */
	}
	sdp_fault_release_delay();
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	sock_orphan(sk);
	if (sk->sk_state != TCP_CLOSE) {
		/*
		 * The peer has net.sdp.fin_timeout, or the socket's
		 * TCP_LINGER2, to finish its side (sdp_timers.c).
		 */
		sdp_timeout_arm(ssk);
	}
	/*
	 * A socket without a connection (listener, bound, or still
	 * resolving) gives its port back now, as TCP's close does; the
	 * CM handler ignores the id once it is no longer ssk->id.
	 */
	if (ssk->id && !test_bit(SDP_C_QP, &ssk->conn.flags)) {
		id = ssk->id;
		ssk->id = NULL;
		clear_bit(SDP_O_BOUND, &ssk->opts);
	}
	id4 = sdp_cm_take_id4(ssk);
	/* A connection is torn down in the background (sdp_work()). */
	if (ssk->id)
		sdp_queue_work(ssk);
	release_sock(sk);

	sdp_cm_put_id(sk, id4);
	sdp_cm_put_id(sk, id);
	/*
	 * Also when no longer listening: a listener whose device went away
	 * is closed (ENETDOWN) but may still hold passive sockets.
	 */
	sdp_listen_stop(ssk);
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

/*
 * A passive socket aborted before it reached the accept queue will never
 * be accepted: give its backlog slot back and close it.  From sdp_work(),
 * lock_sock() held.
 *
 * Return: its listener, whose reference the caller drops with the
 * socket's own once lock_sock() is released; NULL if it stays.
 */
struct sock *sdp_close_child_unlink(struct sdp_sock *ssk)
{
	struct sock *parent;

	sock_owned_by_me(&ssk->sk);
	if (!ssk->parent || !test_bit(SDP_C_ABORT, &ssk->conn.flags) ||
	    test_bit(SDP_F_QUEUED, &ssk->flags) || !sdp_child_unlink(ssk))
		return NULL;
	parent = ssk->parent;
	ssk->parent = NULL;
	sock_set_flag(&ssk->sk, SOCK_DEAD);
	return parent;
}

/**
 * sdp_close_work() - act on the close state, in process context
 * @ssk: the socket, lock_sock() held (sdp_work())
 * @again: set to how long until it should look again while our AbortConn
 *	is on its way (sdp_abort_in_flight()) or the peer's CM has not
 *	answered our DREQ (sdp_peer_may_send()), else left alone
 *
 * Abort after an error event of the QP, CQ or device (sdp_conn_fatal());
 * call rdma_disconnect() once the connection is over or aborted (and our
 * AbortConn delivered); release everything once the socket is closed,
 * its device goes away, or a connect failed (so that connect() can start
 * anew), and the peer's QP can no longer send to ours.
 *
 * Return: the CM id to destroy once lock_sock() is released (its
 * reference with it), or NULL when the connection stays.
 */
struct rdma_cm_id *sdp_close_work(struct sdp_sock *ssk, unsigned long *again)
{
	struct sock *sk = &ssk->sk;
	bool disconnect, destroy, qp, held, qp_err, removing;

	sock_owned_by_me(sk);
	spin_lock_bh(&ssk->lock);
	qp = test_bit(SDP_C_QP, &ssk->conn.flags);
	if (qp && test_bit(SDP_C_QP_FATAL, &ssk->conn.flags))
		__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
	/*
	 * Whichever comes first, the device removal's scan or this work,
	 * the connection is aborted before it lets go of the device below:
	 * a socket left established without a QP would wait for ever.  One
	 * look decides both: the removal may begin at any moment, and a
	 * second look could see it where the first did not.
	 */
	removing = sdp_device_removing(ssk->conn.sdev);
	if (removing)
		__sdp_abort(ssk, SDP_ABORT_REASON_DEVICE_REMOVAL, -ENETDOWN);
	sdp_fault_close_delay();
	held = sdp_abort_in_flight(ssk);
	if (held)	/* come back when the wait for it is over */
		*again = max_t(long, ssk->conn.abort_sent + SDP_ABORT_DELIVERY -
				     jiffies, 0) + 1;
	/*
	 * Our iWARP request not yet made or answered: the id and the QP are
	 * rdma_connect()'s until it returns, which queues us
	 * (sdp_cm_iw_connect()).  A device going away waits for it too.
	 */
	if (test_bit(SDP_C_IW_CONNECT, &ssk->conn.flags))
		held = true;
	disconnect = qp && !held &&
		     !test_bit(SDP_C_CM_DISCONNECT, &ssk->conn.flags) &&
		     (test_bit(SDP_C_ABORT, &ssk->conn.flags) ||
		      sk->sk_state == TCP_CLOSE);
	if (disconnect)
		set_bit(SDP_C_CM_DISCONNECT, &ssk->conn.flags);
	/*
	 * An abort ends the connection at once.  On InfiniBand and RoCE,
	 * rdma_disconnect() moves the QP to the error state, which flushes
	 * every work request still queued, and a zero-copy transfer waits
	 * for exactly that (sdp_zc_wait_bit()).  On iWARP it only asks for a
	 * graceful close (the QP to SQD), and soft-iWARP keeps the queued
	 * work until the TCP stream under the QP ends, for ever if the peer
	 * does not answer; nor is it called again after the peer's
	 * DISCONNECTED.  So on iWARP an abort moves the QP to the error
	 * state itself, once our AbortConn is delivered, which also ends
	 * the TCP stream (DISCONNECTED follows).  It does not call
	 * rdma_disconnect() then: iw_cm_disconnect() sleeps until a connect
	 * or accept under way has had its CM event delivered, and our CM
	 * handler waits for lock_sock(), which we hold.
	 */
	qp_err = qp && !held && ssk->conn.sdev->iwarp &&
		 test_bit(SDP_C_ABORT, &ssk->conn.flags) &&
		 !test_and_set_bit(SDP_C_QP_ERR, &ssk->conn.flags);
	if (qp_err)
		disconnect = false;
	/*
	 * Release the resources of a closed socket once its connection is
	 * over (closed or aborted), of any socket whose device goes away,
	 * and of a connect that failed (never established; nothing to
	 * read); not while a zero-copy transfer uses them (it queues us
	 * when it ends) or our AbortConn is on its way.
	 */
	destroy = ssk->id && !ssk->conn.zc_busy && !held &&
		  ((sock_flag(sk, SOCK_DEAD) && sk->sk_state == TCP_CLOSE) ||
		   removing ||
		   (test_bit(SDP_C_ABORT, &ssk->conn.flags) &&
		    !test_bit(SDP_C_ESTABLISHED, &ssk->conn.flags) && !ssk->parent));
	/*
	 * Nor while the iWARP CM holds the QP (SDP_C_IW_QP_HELD): siw's
	 * destroy_qp waits for the CM's reference, which goes with the
	 * connect's failure or the connection's close, each reported by
	 * an event of the iWARP CM's one ordered workqueue; with
	 * lock_sock() held here, an event for another socket whose handler
	 * waits for that socket's lock, held by its own teardown waiting
	 * so, would stop them all (and a connect given up for TCP would
	 * hold the socket up to siw's 10 s MPA timeout).  The event that
	 * ends the hold queues us (sdp_cm_qp_freed()).  A device going
	 * away does not wait.
	 */
	if (test_bit(SDP_C_IW_QP_HELD, &ssk->conn.flags) && !removing)
		destroy = false;
	spin_unlock_bh(&ssk->lock);

	if (qp_err) {
		struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

		ib_modify_qp(ssk->conn.qp, &attr, IB_QP_STATE);
	}
	if (disconnect)
		sdp_close_disconnect(ssk);
	/* Nor while the peer's QP may still send to ours. */
	if (destroy && !removing) {
		unsigned long left = sdp_peer_may_send(ssk);

		if (left) {
			*again = left + 1;
			return NULL;
		}
	}
	return destroy ? sdp_conn_detach(ssk) : NULL;
}
