// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- deferred and timed work: sdp_work(), the
 * orphan timeout, and the list of everything the module does by time.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Every time-driven behaviour of the module, where it runs, what arms it
 * and its deadline.  A socket has two work items and one timer
 * (and, connecting over iWARP, a request of its own):
 *
 *   sdp_sock::work (sdp_work(), below): the connection's process-context
 *   work; queued now by sdp_queue_work(), by a deadline by
 *   sdp_queue_work_within().  Each job looks at its own deadline and
 *   says when it wants to look again; sdp_work() queues itself once, for
 *   the earliest of those (sdp_work_next()).
 *   - Fallback timeout: connect() with fallback on (sdp_fb_timeout_arm());
 *     SDP_TCP_FALLBACK_TIMEOUT or net.sdp.tcp_fallback_timeout_ms after
 *     it, an SDP attempt not yet established goes on over TCP
 *     (sdp_fb_timeout_check(), sdp_fallback.c).
 *   - Zero-copy progress of a nonblocking MSG_ZEROCOPY send or of spliced
 *     pages (sdp_zc_async_run(), sdp_zc_tx.c): pages gathered are sealed
 *     after SDP_ZC_GATHER_IDLE without a call; an advertisement the peer
 *     reads nothing of for SDP_ZC_STALL, or still reads after
 *     SDP_ZC_ADVERT_MAX, is cancelled; a peer that does not answer the
 *     cancel, or a LOCAL_INV not completed, within SDP_ZC_ANSWER_TIMEOUT
 *     is aborted; a copy short of buffers is tried again after HZ / 10.
 *   - AbortConn delivery: __sdp_abort() posted ours; the QP is taken down
 *     once it completed or SDP_ABORT_DELIVERY after it was posted
 *     (sdp_abort_in_flight(), sdp_close.c).
 *   - The answer to our DREQ: the QP of a connection that is over is
 *     destroyed once the peer's CM answered it (DISCONNECTED), its QP
 *     stopped, or SDP_DREQ_ANSWER after it was sent
 *     (sdp_peer_may_send(), sdp_close.c).
 *   - Send ring idle: the first send buffer allocated
 *     (sdp_tx_slot_ready()); net.sdp.tx_idle_ms after the last send that
 *     had them, an empty ring frees its buffers (sdp_tx_ring_idle()).
 *   - Receive ring idle: the ring grew to full buffers (sdp_rx_grow());
 *     net.sdp.rx_idle_ms after the last Data or SrcAvail, it shrinks
 *     back to small ones (sdp_rx_ring_idle()).
 *   - Receive buffer replacement: a buffer that came back after the ring
 *     changed size could not be given one of the new size (no memory in
 *     the socket's memory cgroup, sdp_rx_retire_again()); SDP_RX_RETRY
 *     after, it is tried again (sdp_rx_replace_retired(), sdp_rx.c).
 *   - Unexplained flush: a completion flushed that nothing of ours
 *     explains (sdp_cq_flushed()); SDP_CQ_FLUSH_GRACE after it, with no
 *     CM event to explain it either, the connection is aborted
 *     (sdp_cq_flush_verdict(), sdp_cq.c).
 *   - Cork and Nagle expiry: sendmsg() held a partial message back for
 *     MSG_MORE or TCP_CORK (SDP_TX_CORK_MAX after, it goes) or behind an
 *     unacknowledged small one (SDP_TX_NAGLE_MAX) (sdp_tx_cork_expire()).
 *   The rest of its work has no deadline: a job another context asks for
 *   with a bit of sdp_conn::deferred (SDP_D_*), dispatched here, and the
 *   close state machine's disconnect and teardown (sdp_close_work()).
 *
 *   sdp_sock::timeout_work (sdp_timeout_work(), below): orphan timeout.
 *   close() left the connection open (sdp_timeout_arm()); TCP_LINGER2 or
 *   net.sdp.fin_timeout after, it is aborted (ETIMEDOUT).  Cancelled when
 *   the connection's resources go (sdp_conn_detach()).
 *
 *   sdp_iw_connect::work (sdp_cm_iw_connect_work(), sdp_cm.c): over
 *   iWARP, the Hello's rdma_connect(), queued by ROUTE_RESOLVED; no
 *   deadline of its own: the iWARP CM's (soft-iWARP's, TCP's SYN
 *   retries, net.ipv4.tcp_syn_retries).
 *
 *   sk->sk_timer (sdp_keepalive.c): dead-peer detection.
 *   - Keepalive: established, or an option changed, with SO_KEEPALIVE; a
 *     probe after TCP_KEEPIDLE without a completion, then every
 *     TCP_KEEPINTVL; an abort (ETIMEDOUT) after TCP_KEEPCNT unanswered,
 *     or TCP_USER_TIMEOUT.
 *   - Persist probes: committed data starts waiting for credits
 *     (sdp_tx_credit_stall(), sdp_tx.c); a probe after SDP_PERSIST_MIN,
 *     doubling up to SDP_PERSIST_MAX; an abort once data waited
 *     TCP_USER_TIMEOUT.
 *
 * Deadlines a caller waits for itself, without a timer:
 *   - connect(): SO_SNDTIMEO; the RDMA CM resolves address and route
 *     within net.sdp.resolve_timeout_ms each and retries the connection
 *     request as it does (the CM's timeouts); the QP's retry budget
 *     (retry count 6 times the ACK timeout, sdp_cm.c) ends a send to a
 *     peer that stopped acknowledging.
 *   - accept(), recvmsg(), sendmsg(): SO_RCVTIMEO, SO_SNDTIMEO; a blocking
 *     receive first polls the CQ for net.sdp.recv_poll or SO_BUSY_POLL
 *     microseconds (sdp_busy_poll()).
 *   - close() with SO_LINGER: sk_lingertime for our DisConn
 *     (sdp_close_linger()).
 *   - A blocking zero-copy send: the SDP_ZC_STALL, SDP_ZC_ADVERT_MAX and
 *     SDP_ZC_ANSWER_TIMEOUT rules above (sdp_zc_tx_wait()); a work
 *     request waited for uninterruptibly, SDP_ZC_ANSWER_TIMEOUT before
 *     the connection is aborted (sdp_zc_wait_bit()); connect() again,
 *     SDP_CONN_QUIESCE_TIMEOUT for the last connection's transfers and
 *     an iWARP CM's answer (sdp_conn_quiesce()).
 *   - Device removal rescans its connections every second until they
 *     let go of it (sdp_remove_one()).
 *   - The fallback's negative cache: an entry lasts
 *     net.sdp.tcp_fallback_cache_s, looked at when used (sdp_fb_cache.c).
 */
#include <linux/workqueue.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_conn.h"
#include "sdp_cq.h"
#include "sdp_fallback.h"
#include "sdp_net.h"
#include "sdp_rx.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_zc.h"

/* Run sdp_work() soon, or now if it waits for a later time. */
void sdp_queue_work(struct sdp_sock *ssk)
{
	sock_hold(&ssk->sk);
	if (mod_delayed_work(sdp_wq, &ssk->work, 0))
		sock_put(&ssk->sk);	/* it was queued: that one runs now */
}

/*
 * Run sdp_work() within @delay: queue it, or bring it forward if it is
 * queued for later.
 */
void sdp_queue_work_within(struct sdp_sock *ssk, unsigned long delay)
{
	sock_hold(&ssk->sk);
	if (timer_pending(&ssk->work.timer) &&
	    time_before(jiffies + delay, READ_ONCE(ssk->work.timer.expires))) {
		/* Pending already: it holds its reference. */
		if (mod_delayed_work(sdp_wq, &ssk->work, delay))
			sock_put(&ssk->sk);
		return;
	}
	if (!queue_delayed_work(sdp_wq, &ssk->work, delay))
		sock_put(&ssk->sk);
}

/* Run sdp_work() after @delay, unless it is queued already. */
void sdp_queue_work_delayed(struct sdp_sock *ssk, unsigned long delay)
{
	sock_hold(&ssk->sk);
	if (!queue_delayed_work(sdp_wq, &ssk->work, delay))
		sock_put(&ssk->sk);
}

/*
 * A job wants sdp_work() again within @delay jiffies (0: no deadline):
 * keep the earliest in *@next.
 */
static void sdp_work_next(unsigned long *next, unsigned long delay)
{
	if (delay && (!*next || delay < *next))
		*next = delay;
}

/* SDP_D_RX_RETIRE: buffers of the size no longer posted came back. */
static void sdp_work_rx_retire(struct sdp_sock *ssk)
{
	if (test_and_clear_bit(SDP_D_RX_RETIRE, &ssk->conn.deferred))
		sdp_rx_replace_retired(ssk);
}

/*
 * SDP_D_RX_GROW: the peer runs short of credits.  Before the RTU,
 * sdp_cm_child_established() grows the ring (and clears the bit).
 */
static void sdp_work_rx_grow(struct sdp_sock *ssk)
{
	if (test_bit(SDP_C_ESTABLISHED, &ssk->conn.flags) &&
	    test_and_clear_bit(SDP_D_RX_GROW, &ssk->conn.deferred))
		sdp_rx_grow(ssk, ssk->conn.rx_count);
}

/*
 * The jobs of a connection that keeps its QP, in this order; the timed
 * ones tell when they want to look again.  lock_sock() held.
 */
static void sdp_work_conn(struct sdp_sock *ssk, unsigned long *next)
{
	sdp_work_next(next, sdp_tx_ring_idle(ssk));
	sdp_work_rx_retire(ssk);
	sdp_work_rx_grow(ssk);
	sdp_work_next(next, sdp_rx_ring_idle(ssk));
	sdp_work_next(next, sdp_tx_cork_expire(ssk));
}

/*
 * Process-context work of a socket (sdp_sock::work): each job of the
 * list above, then itself queued again for the earliest deadline any of
 * them has.
 */
void sdp_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, work);
	struct sock *sk = &ssk->sk;
	unsigned long next = 0, abort_wait = 0;
	struct rdma_cm_id *id;
	struct sock *parent;
	bool qp;

	lock_sock(sk);
	sdp_work_next(&next, sdp_fb_timeout_check(ssk));
	sdp_work_next(&next, sdp_zc_async_run(ssk));
	parent = sdp_close_child_unlink(ssk);
	qp = test_bit(SDP_C_QP, &ssk->conn.flags);
	if (qp)
		sdp_work_next(&next, sdp_cq_flush_verdict(ssk));
	id = sdp_close_work(ssk, &abort_wait);
	sdp_work_next(&next, abort_wait);
	if (qp && !id)
		sdp_work_conn(ssk, &next);
	if (next)
		sdp_queue_work_within(ssk, next);
	release_sock(sk);

	if (id) {
		rdma_destroy_id(id);
		sock_put(sk);	/* the id's reference */
	}
	if (parent) {
		sock_put(parent);	/* the child's listener reference */
		sock_put(sk);		/* its own, which the queue held */
	}
	sock_put(sk);		/* the work's reference */
}

/*
 * close() left the connection open: the peer has TCP_LINGER2, or
 * net.sdp.fin_timeout, to finish its side.  lock_sock() held.
 */
void sdp_timeout_arm(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;

	sock_owned_by_me(sk);
	sock_hold(sk);
	if (!queue_delayed_work(sdp_wq, &ssk->timeout_work,
				ssk->tcp.linger2 > 0 ? ssk->tcp.linger2 :
				sdp_sysctl_fin_timeout(sock_net(sk))))
		sock_put(sk);
}

/* The connection's resources go: no orphan timeout stays behind. */
void sdp_timeout_cancel(struct sdp_sock *ssk)
{
	if (cancel_delayed_work(&ssk->timeout_work))
		sock_put(&ssk->sk);	/* the timeout's reference */
}

/* An orphaned socket whose peer never finished the close: abort it. */
void sdp_timeout_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, timeout_work);

	sdp_abort(ssk, SDP_ABORT_REASON_TIMEOUT, -ETIMEDOUT);
	sock_put(&ssk->sk);
}
