// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- dead-peer detection: SO_KEEPALIVE, probes
 * while data waits for credits, TCP_USER_TIMEOUT.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * An RC queue pair finds a dead peer only when it has something to send:
 * a work request the peer's adapter does not acknowledge fails after the
 * QP's retry budget (retry count x ACK timeout) with RETRY_EXC_ERR, which
 * the completion handlers turn into ETIMEDOUT, as TCP reports a peer that
 * stopped answering.  Two states have nothing to send and would wait for
 * ever on a host that died: an idle connection, and one whose data waits
 * for credits.  For both we post a probe: a zero-length RDMA Write.  It
 * needs no credit, consumes no receive buffer, no rkey is checked for it
 * (IBA C9-88) and the peer's software never sees it; its acknowledgment
 * proves that the peer's adapter still serves the QP.
 *
 * Keepalive, with SO_KEEPALIVE, follows tcp_keepalive_timer(): once
 * nothing was heard from the peer (no completion of ours succeeded) for
 * TCP_KEEPIDLE, a probe every TCP_KEEPINTVL; after TCP_KEEPCNT probes
 * without an answer (or, with TCP_USER_TIMEOUT, once that long passed
 * without one) the connection is aborted with ETIMEDOUT (AbortOnTimeout).
 * Nothing is probed while our sends are in flight: they are the probes.
 * A probe still unanswered is retransmitted by the QP, not posted again,
 * and its retry budget may end it before TCP_KEEPCNT intervals: the
 * abort then comes earlier, with the same error.
 *
 * Over iWARP a send, the probe too, completes once the local TCP has
 * taken it: nothing of ours proves the peer alive, only what it sends
 * us.  With a peer that answers pings (SDP_HF_PING; SDP_P_PING) the
 * keepalive probe is a ping, an empty Data message it answers at once,
 * and only our receives count as hearing from it (sdp_cq_heard()).  One
 * ping is outstanding at most: the connection's TCP delivers it, so the
 * later intervals only count (sdp_ka_probe()).  Only our Data in flight
 * holds the probes back (sdp_ka_held()).  A ping needs credits for
 * itself and its answer (sdp_ping_ok()); while they lack (our reader
 * leaves our ring full), the probe is the write, whose completion only
 * shows that the local TCP still takes data: it neither counts as
 * unanswered nor answers anything.  A dead peer is then found by that
 * TCP's retransmissions, as are persist probes over iWARP: for those
 * the connection's TCP does what TCP's own persist timer would.
 *
 * Persist probes, always on, follow TCP's zero-window probes: while
 * committed data waits for credits, a probe after SDP_PERSIST_MIN,
 * doubling up to SDP_PERSIST_MAX; with TCP_USER_TIMEOUT the connection
 * is aborted once data waited that long (as TCP aborts a zero window
 * that lasts longer, even to a live peer).
 *
 * Everything here runs in one timer, sk->sk_timer (the timer TCP uses
 * for keepalive), under sdp_sock::lock; a pending timer holds a socket
 * reference (sk_reset_timer()).  It is re-armed under that lock and only
 * while SDP_C_QP is set, so that sdp_conn_detach(), which clears the flag
 * under the lock and then stops the timer, leaves none behind.
 */
#include <linux/jiffies.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_conn.h"
#include "sdp_ctrl.h"
#include "sdp_fallback.h"
#include "sdp_ka.h"
#include "sdp_stats.h"
#include "sdp_zc.h"

/* The first persist probe, and the longest interval between two. */
#define SDP_PERSIST_MIN		HZ
#define SDP_PERSIST_MAX		(60 * HZ)

static unsigned long sdp_keepidle(const struct sdp_sock *ssk)
{
	int v = READ_ONCE(ssk->tcp.keepidle);

	return v ? v * HZ :
	       READ_ONCE(sock_net(&ssk->sk)->ipv4.sysctl_tcp_keepalive_time);
}

static unsigned long sdp_keepintvl(const struct sdp_sock *ssk)
{
	int v = READ_ONCE(ssk->tcp.keepintvl);

	return v ? v * HZ :
	       READ_ONCE(sock_net(&ssk->sk)->ipv4.sysctl_tcp_keepalive_intvl);
}

static int sdp_keepcnt(const struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->tcp.keepcnt) ? :
	       READ_ONCE(sock_net(&ssk->sk)->ipv4.sysctl_tcp_keepalive_probes);
}

/* Post the zero-length RDMA Write, unless one is in flight.  ssk->lock held. */
static void sdp_ka_write(struct sdp_sock *ssk)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe = &ssk->ka.cqe,
			.opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED,
		},
	};

	lockdep_assert_held(&ssk->lock);
	if (ssk->ka.busy)
		return;		/* the QP retransmits the one in flight */
	if (ib_post_send(ssk->conn.qp, &wr.wr, NULL)) {
		__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
		return;
	}
	ssk->ka.busy = true;
}

/*
 * A probe: the write, or a ping where the peer must answer one (@ping,
 * SDP_P_PING).  A ping still unanswered is not sent again: the
 * connection's TCP delivers it, and each would cost a credit that a dead
 * peer never gives back.  One the peer could not answer (sdp_post_ping())
 * is the write instead, which proves nothing there.  Returns whether the
 * probe awaits an answer: counts towards TCP_KEEPCNT.  ssk->lock held.
 */
static bool sdp_ka_probe(struct sdp_sock *ssk, enum sdp_mib_field mib,
			 bool ping)
{
	lockdep_assert_held(&ssk->lock);
	SDP_INC_STATS(sock_net(&ssk->sk), mib);
	if (ping && test_bit(SDP_P_PING, &ssk->conn.peer)) {
		if (ssk->ka.probes_out || !sdp_post_ping(ssk))
			return true;
		sdp_ka_write(ssk);
		return false;
	}
	sdp_ka_write(ssk);
	return true;
}

/* The probe's completion.  Flushed: the QP is going away anyway. */
static void sdp_ka_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_sock *ssk = cq->cq_context;

	spin_lock(&ssk->lock);
	ssk->ka.busy = false;
	if (wc->status == IB_WC_SUCCESS) {
		/* Over iWARP the local TCP took it: that answers nothing. */
		if (!test_bit(SDP_P_PING, &ssk->conn.peer))
			ssk->ka.probes_out = 0;
	} else if (wc->status != IB_WC_WR_FLUSH_ERR &&
		   !test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		sdp_warn_peer(ssk, "probe failed: %s\n",
			      ib_wc_status_msg(wc->status));
		__sdp_abort(ssk, wc->status == IB_WC_RETRY_EXC_ERR ?
				 SDP_ABORT_REASON_TIMEOUT :
				 SDP_ABORT_REASON_CQ_ERROR,
			    sdp_wc_errno(wc->status));
	}
	sdp_zc_sq_progress(ssk);
	spin_unlock(&ssk->lock);
}

/* Keepalive probes went unanswered: the peer is gone. */
static void sdp_ka_timeout(struct sdp_sock *ssk)
{
	sdp_warn_peer(ssk, "peer not answering, connection timed out\n");
	__sdp_abort(ssk, SDP_ABORT_REASON_TIMEOUT, -ETIMEDOUT);
}

/*
 * Data waited for credits longer than TCP_USER_TIMEOUT.  The peer may
 * well be alive, its reader just slower than the timeout the application
 * chose: a note, not a warning (TCP says nothing at all).
 */
static void sdp_ka_user_timeout(struct sdp_sock *ssk, unsigned long ut)
{
	net_info_ratelimited("%pISpc: data waited for credits longer than TCP_USER_TIMEOUT (%u ms), connection timed out\n",
			     &ssk->daddr, jiffies_to_msecs(ut));
	__sdp_abort(ssk, SDP_ABORT_REASON_TIMEOUT, -ETIMEDOUT);
}

/*
 * Persist probes while data waits for credits; jiffies to the next
 * check, 0 for none.  ssk->lock held.
 */
static unsigned long sdp_ka_persist(struct sdp_sock *ssk, unsigned long now)
{
	unsigned long ut = msecs_to_jiffies(READ_ONCE(ssk->tcp.user_timeout));
	unsigned long next;

	if (!ssk->ka.stalled)
		return 0;
	if (ut && time_after_eq(now, ssk->ka.stall_since + ut)) {
		sdp_ka_user_timeout(ssk, ut);
		return 0;
	}
	if (time_after_eq(now, ssk->ka.persist_at)) {
		sdp_ka_write(ssk);
		SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_PERSIST_PROBES);
		ssk->ka.persist_ivl = min_t(unsigned long,
					    2 * ssk->ka.persist_ivl,
					    SDP_PERSIST_MAX);
		ssk->ka.persist_at = now + ssk->ka.persist_ivl;
	}
	next = ssk->ka.persist_at - now;
	if (ut)
		next = min(next, ssk->ka.stall_since + ut - now);
	return next;
}

/*
 * Nothing is probed while our sends are in flight: they are the probes,
 * as TCP sends no keepalive while it has data unacknowledged.  Over
 * iWARP (SDP_P_PING) only our Data counts: a send completes there once
 * the local TCP has it, so Data still in flight is data that TCP holds
 * unacknowledged; our control messages and RDMA Reads may wait behind a
 * Read that a dead peer never answers, and a reader waiting for data is
 * what TCP's keepalive probes for.  ssk->lock held.
 */
static bool sdp_ka_held(const struct sdp_sock *ssk)
{
	if (test_bit(SDP_P_PING, &ssk->conn.peer))
		return ssk->conn.tx_post != ssk->conn.tx_tail ||
		       test_bit(SDP_C_TX_PIECE, &ssk->conn.flags);
	return sdp_sends_in_flight(ssk);
}

/*
 * SO_KEEPALIVE, as tcp_keepalive_timer(); jiffies to the next check, 0
 * for none.  ssk->lock held.
 */
static unsigned long sdp_ka_keepalive(struct sdp_sock *ssk, unsigned long now)
{
	unsigned long ut = msecs_to_jiffies(READ_ONCE(ssk->tcp.user_timeout));
	unsigned long idle = sdp_keepidle(ssk), last, elapsed;

	if (!sock_flag(&ssk->sk, SOCK_KEEPOPEN))
		return 0;
	if (sdp_ka_held(ssk))
		return idle;
	last = READ_ONCE(ssk->ka.last_heard);
	/*
	 * Heard from since the last probe: it was answered, however late
	 * this timer fires (a ping's answer may come well within it).
	 */
	if (ssk->ka.probes_out && !time_before(last, ssk->ka.probe_at))
		ssk->ka.probes_out = 0;
	elapsed = now - last;
	if (elapsed < idle) {
		ssk->ka.probes_out = 0;
		return idle - elapsed;
	}
	if ((ut && elapsed >= ut && ssk->ka.probes_out) ||
	    (!ut && ssk->ka.probes_out >= sdp_keepcnt(ssk))) {
		sdp_ka_timeout(ssk);
		return 0;
	}
	if (sdp_ka_probe(ssk, SDP_MIB_KEEPALIVE_PROBES, true)) {
		ssk->ka.probes_out++;
		ssk->ka.probe_at = now;
	}
	return sdp_keepintvl(ssk);
}

/* Re-arm for @delay jiffies from now; 0: disarm.  ssk->lock held. */
static void sdp_ka_arm(struct sdp_sock *ssk, unsigned long delay)
{
	struct sock *sk = &ssk->sk;

	lockdep_assert_held(&ssk->lock);
	if (delay && sdp_tx_usable(ssk) && sdp_connected(sk))
		sk_reset_timer(sk, &sk->sk_timer, jiffies + delay);
}

static void sdp_ka_timer(struct timer_list *t)
{
	struct sock *sk = from_timer(sk, t, sk_timer);
	struct sdp_sock *ssk = sdp_sk(sk);
	unsigned long now = jiffies, a, b;

	spin_lock_bh(&ssk->lock);
	if (sdp_tx_usable(ssk) && sdp_connected(sk)) {
		a = sdp_ka_persist(ssk, now);
		b = test_bit(SDP_C_ABORT, &ssk->conn.flags) ? 0 :
		    sdp_ka_keepalive(ssk, now);
		sdp_ka_arm(ssk, a && b ? min(a, b) : a | b);
	}
	spin_unlock_bh(&ssk->lock);
	sock_put(sk);	/* the pending timer's reference */
}

/* Check now what is due: after an option or the state changed. */
static void sdp_ka_kick(struct sdp_sock *ssk)
{
	sdp_ka_arm(ssk, 1);
}

void sdp_ka_init(struct sdp_sock *ssk)
{
	timer_setup(&ssk->sk.sk_timer, sdp_ka_timer, 0);
	ssk->ka.cqe.done = sdp_ka_done;
}

/* The connection is established.  ssk->lock held. */
void sdp_ka_established(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	WRITE_ONCE(ssk->ka.last_heard, jiffies);
	ssk->ka.probes_out = 0;
	ssk->ka.busy = false;
	if (sock_flag(&ssk->sk, SOCK_KEEPOPEN))
		sdp_ka_kick(ssk);
}

/*
 * Committed data started (@stalled) or stopped waiting for credits
 * (sdp_tx_credit_stall()): persist probes start, or stop at the next
 * look.
 */
void sdp_ka_credit_stall(struct sdp_sock *ssk, bool stalled)
{
	lockdep_assert_held(&ssk->lock);
	ssk->ka.stalled = stalled;
	if (!stalled)
		return;
	ssk->ka.stall_since = jiffies;
	ssk->ka.persist_ivl = SDP_PERSIST_MIN;
	ssk->ka.persist_at = jiffies + SDP_PERSIST_MIN;
	sdp_ka_kick(ssk);
}

/*
 * SO_KEEPALIVE (struct proto::keepalive), TCP_KEEPIDLE, TCP_KEEPINTVL,
 * TCP_KEEPCNT or TCP_USER_TIMEOUT changed: look again (the timer finds
 * the flag off and stops by itself).  lock_sock() held.
 */
void sdp_ka_changed(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);

	spin_lock_bh(&ssk->lock);
	sdp_ka_kick(ssk);
	spin_unlock_bh(&ssk->lock);
}

void sdp_ka_set(struct sock *sk, int on)
{
	/* sk_setsockopt() sets SOCK_KEEPOPEN after this returns. */
	sock_valbool_flag(sk, SOCK_KEEPOPEN, on);
	sdp_ka_changed(sk);
	sdp_fb_keepalive(sdp_sk(sk), on);
}

/* The QP is going: no timer may stay behind.  After SDP_C_QP cleared. */
void sdp_ka_stop(struct sdp_sock *ssk)
{
	sk_stop_timer(&ssk->sk, &ssk->sk.sk_timer);
}
