// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- a connection's verbs resources: the
 * protection domain, the completion queue, the queue pair and the message
 * rings; their setup when the CM has a device for the connection
 * (sdp_conn_setup(), from sdp_cm.c), their teardown (sdp_conn_detach(),
 * from sdp_work()), and a new start for a socket that connects again
 * (sdp_conn_renew(), once the last connection's zero-copy transfers are
 * over and an iWARP CM has answered its request: sdp_conn_quiesce()).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Everything here runs in process context with lock_sock() held.  The QP
 * belongs to the CM id (rdma_create_qp()), so the id outlives it; an id
 * is destroyed only without lock_sock(), by the caller (rdma_destroy_id()
 * waits for the id's handler, which takes it).
 */
#include <linux/slab.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_cm.h"
#include "sdp_conn.h"
#include "sdp_cq.h"
#include "sdp_dev.h"
#include "sdp_ka.h"
#include "sdp_mem.h"
#include "sdp_net.h"
#include "sdp_rx.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_wire.h"
#include "sdp_zc.h"

static unsigned int sdp_bufs(int bytes, bool locked)
{
	if (!locked)
		return SDP_DEFAULT_BUFS;
	return clamp_t(int, bytes / SDP_BUF_SIZE, SDP_MIN_BUFS, SDP_MAX_BUFS);
}

/*
 * Drain the QP (every posted work request completes, flushed, before its
 * buffer goes), then free QP, CQ, rings, MR and PD and drop the device.
 */
void sdp_conn_free(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	if (ssk->conn.qp) {
		ib_drain_qp(ssk->conn.qp);
		rdma_destroy_qp(id);
		ssk->conn.qp = NULL;
	}
	if (ssk->conn.cq)
		sdp_cq_destroy(ssk);
	if (ssk->conn.sdev) {
		sdp_rx_ring_free(ssk);
		sdp_tx_ring_free(ssk);
		sdp_mem_uncharge_all(ssk);
		sdp_zc_conn_free(ssk);
		if (!IS_ERR_OR_NULL(ssk->conn.pd))
			ib_dealloc_pd(ssk->conn.pd);
		ssk->conn.pd = NULL;
		sdp_device_put(ssk->conn.sdev);
		WRITE_ONCE(ssk->conn.sdev, NULL);
	}
}

/**
 * sdp_conn_fatal() - an error event of the connection's QP, CQ or device
 * @ssk: the socket
 * @what: the event, for the log
 *
 * The QP is in the error state, or as good as (a CQ that overran lost
 * completions; a device that failed), and no CM event need follow: the
 * peer's CM connection may well stay up.  Counted and logged here, once
 * per connection, but not on a connection aborted already: over iWARP a
 * peer's abort resets the TCP connection under the QP, which then fails
 * a request in flight (soft-iWARP: QP_FATAL).  sdp_work() aborts, as for
 * a reset (sdp_sock::lock is not taken in hard interrupt context, where
 * a device may report it).  Any context.
 */
void sdp_conn_fatal(struct sdp_sock *ssk, const char *what)
{
	if (test_and_set_bit(SDP_C_QP_FATAL, &ssk->conn.flags))
		return;
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ASYNC_ERRORS);
	if (!test_bit(SDP_C_ABORT, &ssk->conn.flags))
		sdp_warn_peer(ssk, "%s; aborting\n", what);
	sdp_queue_work(ssk);
}

/**
 * sdp_conn_qp_error() - fault injection: our QP fails (sdp_fault.c)
 * @ssk: the socket
 * @port: its local port, as the caller matched it without the lock
 *
 * The QP of a live connection (not aborted or disconnected) goes to the
 * error state as if the device had given up on it; what follows is the
 * module's own handling of a failed QP.
 *
 * Return: 0, or -ENOENT if the socket has no live connection (any more)
 * at @port, or the error of ib_modify_qp().
 */
int sdp_conn_qp_error(struct sdp_sock *ssk, __be16 port)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	const struct sockaddr_in *sin = (void *)&ssk->saddr;
	int err = -ENOENT;

	lock_sock(&ssk->sk);
	if (test_bit(SDP_C_QP, &ssk->conn.flags) && ssk->conn.qp &&
	    !test_bit(SDP_C_ABORT, &ssk->conn.flags) &&
	    !test_bit(SDP_C_CM_DISCONNECT, &ssk->conn.flags) &&
	    sin->sin_port == port)
		err = ib_modify_qp(ssk->conn.qp, &attr, IB_QP_STATE);
	release_sock(&ssk->sk);
	return err;
}

/*
 * Asynchronous events of the QP, in whatever context the device reports
 * them (interrupt, softirq).  COMM_EST: the passive side's QP received a
 * packet before the CM had the RTU (lost, or still on its way); the
 * active side sends as soon as it sent the RTU.  The CM is told, as IB
 * requires of the consumer, and completes the connection as if the RTU
 * had come (RDMA_CM_EVENT_ESTABLISHED); otherwise a lost RTU would leave
 * the passive side waiting until its CM gives up and rejects a
 * connection the peer already uses.  rdma_notify() only queues the CM's
 * work.  The errors (the peer's RDMA through a bad key, a request our QP
 * could not carry out, any other fatal one) put the QP in the error
 * state with no CM event: fatal for the connection (sdp_conn_fatal()).
 * SQ_DRAINED only tells that sends were flushed, after one of those or
 * a disconnect (soft-iWARP raises it then): nothing to do or log.  The
 * id outlives the QP, whose events end with its destruction.
 */
static void sdp_qp_event(struct ib_event *ev, void *ctx)
{
	struct sdp_sock *ssk = ctx;

	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(ssk->id, IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		sdp_conn_fatal(ssk, ib_event_msg(ev->event));
		break;
	case IB_EVENT_SQ_DRAINED:
		break;
	default:
		sdp_warn_peer(ssk, "QP event: %s\n", ib_event_msg(ev->event));
		break;
	}
}

/**
 * sdp_conn_reset() - start a socket's connection afresh
 * @ssk: a new socket, or one that connects again once the last
 *	connection's resources are gone (sdp_conn_renew())
 *
 * The one place a connection's state begins: all of struct sdp_conn is
 * zeroed, then the few fields that do not start at 0 are set (the CQ's
 * poll_lock and irq_poll start with the CQ).  lock_sock() held, or the
 * socket not yet visible.
 */
void sdp_conn_reset(struct sdp_sock *ssk)
{
	struct sdp_conn *c = &ssk->conn;

	/* Only the counters of the last connection may be left. */
	WARN_ON_ONCE(c->sdev || c->pd || c->cq || c->qp || c->rx_ring ||
		     c->tx_ring || c->ctrl_ring || c->zc_tx.mr || c->zc_busy);
	spin_lock_bh(&ssk->lock);
	memset(c, 0, sizeof(*c));
	INIT_LIST_HEAD(&c->rx_queue);
	INIT_LIST_HEAD(&c->rx_retired);
	c->rx_last = jiffies;
	c->tx_mseq_next = 1;
	spin_unlock_bh(&ssk->lock);
	/*
	 * The device-removal scan marks a socket under its list lock once
	 * it saw the socket's device; a mark it made for the last
	 * connection goes under that lock too (sdp_diag.c).
	 */
	sdp_sock_clear_dev_gone(ssk);
}

/*
 * Create the PD, the CQ, the QP and the rings on the device @id resolved
 * to, and post the receive buffers.  lock_sock() held (a passive socket:
 * not yet visible to anyone else).
 */
int sdp_conn_setup(struct sdp_sock *ssk, struct rdma_cm_id *id, bool passive,
		   bool small)
{
	const struct ib_device_attr *da = &id->device->attrs;
	struct sock *sk = &ssk->sk;
	struct ib_qp_init_attr attr = {};
	struct sdp_device *sdev;
	struct mem_cgroup *old;
	u32 sge, nsend, rd_wrs;
	unsigned int nrx, rx_init, asked;
	int err, ncqe;

	sock_owned_by_me(sk);
	sdev = sdp_device_get(id->device);
	if (!sdev)
		return -ENETDOWN;
	WRITE_ONCE(ssk->conn.sdev, sdev);
	old = sdp_memcg_enter(sk);
	ssk->conn.pd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(ssk->conn.pd)) {
		err = PTR_ERR(ssk->conn.pd);
		goto err;
	}
	sdp_zc_init(ssk);

	ssk->conn.rx_count = sdp_bufs(sk->sk_rcvbuf,
				      sk->sk_userlocks & SOCK_RCVBUF_LOCK);
	asked = ssk->conn.rx_count;
	ssk->conn.tx_count = sdp_bufs(sk->sk_sndbuf,
				      sk->sk_userlocks & SOCK_SNDBUF_LOCK);
	sdp_mem_ring_bufs(sk, &ssk->conn.rx_count, &ssk->conn.tx_count);
	/*
	 * The active side posts net.sdp.rx_init_bufs receive buffers, a
	 * passive one SDP_HALF_OPEN_BUFS until the handshake completes
	 * (sdp_mem.c); both post the rest of the ring once the peer sends
	 * faster than they come back (sdp_rx_grow_due()).  Those first
	 * buffers are small (SDP_BUF_SMALL) when the peer can be told later
	 * that they grew (@small: the active side does not know yet, a
	 * passive one saw SDP_HF_RESIZE in the Hello), unless
	 * net.sdp.rx_init_bufs asks for the whole ring from the start (the
	 * ring asked for: one cut down to the first buffers by memory
	 * pressure stays small).
	 */
	rx_init = sdp_sysctl_rx_init_bufs(sock_net(sk));
	nrx = min(ssk->conn.rx_count, passive ? SDP_HALF_OPEN_BUFS : rx_init);
	ssk->conn.rx_size = small && rx_init < asked ? SDP_BUF_SMALL : SDP_BUF_SIZE;
	ssk->conn.rx_want = ssk->conn.rx_size;
	err = sdp_mem_charge(ssk, nrx, ssk->conn.rx_size, false);
	if (err)
		goto err;
	/*
	 * The send queue holds the data and control rings, a spare for
	 * ib_drain_qp(), a keepalive or persist probe (sdp_keepalive.c),
	 * and for zero-copy, at most one of each at a time: REG_MR and
	 * LOCAL_INV of our advertisement, the RDMA reads of one of the
	 * peer's (a scatter entry per page, max_sge_rd per read).  Devices
	 * allocate a queue's slots in a power of two (Soft-RoCE: work
	 * requests + 1, rounded up), and with 32 scatter entries a slot is
	 * 1 KiB: the reads get what is left below the power of two that
	 * the rest needs with SDP_ZC_RD_WRS_MIN reads, and a longer read
	 * is done in parts (sdp_zc_recv()).  rdma_create_qp() adds one
	 * more for our rdma_rw context (three where reads need an MR, as
	 * on iWARP: that queue is larger).  For the default rings that is
	 * 31 work requests, 6 of them reads (768 KiB with 32 entries),
	 * where a whole SDP_ZC_MAX_BYTES would take 34: 64 slots.
	 */
	sge = clamp_t(u32, min_t(u32, da->max_send_sge, da->max_sge_rd), 1,
		      SDP_ZC_SGE);
	nsend = ssk->conn.tx_count + SDP_CTRL_BUFS + 2 + 2;
	rd_wrs = roundup_pow_of_two(nsend + SDP_ZC_RD_WRS_MIN + 2) - 2 - nsend;
	rd_wrs = min_t(u32, rd_wrs, DIV_ROUND_UP(SDP_ZC_MAX_PAGES, sge));
	ssk->conn.zc_rx.rd_pages = rd_wrs * sge;
	/*
	 * Every work request of both queues, the receive drain's and the
	 * rdma_rw context's included.
	 */
	ncqe = ssk->conn.rx_count + 1 + nsend + rd_wrs + 1;
	err = sdp_cq_create(ssk, ncqe);
	if (err)
		goto err;

	attr.event_handler = sdp_qp_event;
	attr.qp_context = ssk;
	attr.send_cq = ssk->conn.cq;
	attr.recv_cq = ssk->conn.cq;
	attr.cap.max_send_wr = nsend + rd_wrs;
	/* One spare for ib_drain_qp(). */
	attr.cap.max_recv_wr = ssk->conn.rx_count + 1;
	attr.cap.max_send_sge = sge;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_rdma_ctxs = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	err = rdma_create_qp(id, ssk->conn.pd, &attr);
	if (err)
		goto err;
	ssk->conn.qp = id->qp;

	err = sdp_rx_ring_alloc(ssk, nrx);
	if (err)
		goto err;
	err = sdp_tx_ring_alloc(ssk);
	if (err)
		goto err;
	sdp_memcg_leave(old);

	spin_lock_bh(&ssk->lock);
	err = sdp_rx_post_all(ssk);
	if (!err)
		set_bit(SDP_C_QP, &ssk->conn.flags);
	spin_unlock_bh(&ssk->lock);
	if (err)
		goto err_free;
	return 0;
err:
	sdp_memcg_leave(old);
err_free:
	sdp_conn_free(ssk, id);
	return err;
}

/*
 * Take the connection down: drain the QP, free the QP, CQ, rings and PD,
 * and give the CM id up (the handler ignores an id that is no longer
 * ssk->id).  Returns the id, which the caller destroys once it does not
 * hold lock_sock() any more (rdma_destroy_id() waits for the handler,
 * which takes it), and then drops the id's socket reference.
 * lock_sock() held.
 */
struct rdma_cm_id *sdp_conn_detach(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id = ssk->id;

	sock_owned_by_me(sk);
	spin_lock_bh(&ssk->lock);
	/* sdp_work() and sdp_conn_renew() wait for the transfers. */
	WARN_ON_ONCE(ssk->conn.zc_busy);
	clear_bit(SDP_C_QP, &ssk->conn.flags);
	set_bit(SDP_C_ABORT, &ssk->conn.flags);
	set_bit(SDP_C_CM_DISCONNECT, &ssk->conn.flags);
	clear_bit(SDP_C_CM_DREQ, &ssk->conn.flags);	/* no QP to keep */
	spin_unlock_bh(&ssk->lock);
	/* A call asleep without lock_sock() finds its connection gone. */
	ssk->conn_gen++;
	sdp_ka_stop(ssk);
	ssk->id = NULL;
	clear_bit(SDP_O_ID_USED, &ssk->opts);
	clear_bit(SDP_O_BOUND, &ssk->opts);
	sdp_rx_purge(ssk);
	sdp_conn_free(ssk, id);
	sdp_timeout_cancel(ssk);
	return id;
}

/*
 * Is the last connection still held by what sdp_conn_renew() may not
 * free it under: a zero-copy transfer (sdp_conn::zc_busy), an iWARP
 * CM that holds the QP (SDP_C_IW_QP_HELD: destroying it would wait
 * with lock_sock() held for the CM's event, whose handler takes
 * lock_sock(); sdp_close_work()), an iWARP request not yet made or
 * answered (SDP_C_IW_CONNECT), or a peer's QP that may still send to
 * ours (sdp_peer_may_send(): no event when its bound passes).
 */
static bool sdp_conn_busy(struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->conn.zc_busy) ||
	       test_bit(SDP_C_IW_QP_HELD, &ssk->conn.flags) ||
	       test_bit(SDP_C_IW_CONNECT, &ssk->conn.flags) ||
	       sdp_peer_may_send(ssk);
}

/*
 * A connect() gives up on the last connection after this: twice the
 * zero-copy answer timeout, and twice soft-iWARP's MPA timeout (10 s).
 */
#define SDP_CONN_QUIESCE_TIMEOUT	(2 * SDP_ZC_ANSWER_TIMEOUT)

/**
 * sdp_conn_quiesce() - wait until the last connection can be freed
 * @sk: the socket, lock_sock() held (released while waiting), its
 *	connection over (TCP_CLOSE)
 * @timeo: the connect()'s timeout, for the error a signal gives
 *
 * A connect() again frees the last connection's QP, CQ, PD, MR and rings
 * at once (sdp_conn_renew()); not under a transfer that still uses them
 * (another thread's blocking send() or recv() asleep in one, a
 * nonblocking MSG_ZEROCOPY send or spliced pages still going), nor
 * under an iWARP CM that still holds the QP (a request given up for
 * TCP, not answered yet).  On a connection that is over the transfers
 * end as soon as their work requests complete or are flushed, which
 * sdp_work()'s disconnect does, the last one waking us (sdp_zc_put());
 * the CM answers within its own timeout, its event waking us
 * (sdp_cm_qp_freed(), or DISCONNECTED's state change for the answer to
 * our DREQ, whose bound, sdp_peer_may_send(), ends a sleep too).  The
 * caller looks at the socket's state again: another thread may have
 * changed it meanwhile.
 *
 * Return: 0 with neither (and lock_sock() held, so none starts);
 * -ERESTARTSYS or -EINTR on a signal; -EALREADY, as for a connection still
 * under way, if they have not ended within SDP_CONN_QUIESCE_TIMEOUT.
 */
int sdp_conn_quiesce(struct sock *sk, long timeo)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	long left = SDP_CONN_QUIESCE_TIMEOUT, step, t;

	sock_owned_by_me(sk);
	while (sdp_conn_busy(ssk)) {
		if (signal_pending(current))
			return sock_intr_errno(timeo);
		if (!left)
			return -EALREADY;
		step = sdp_peer_may_send(ssk);
		step = step ? min(left, step) : left;
		release_sock(sk);
		t = wait_event_interruptible_timeout(*sk_sleep(sk),
						     !sdp_conn_busy(ssk), step);
		lock_sock(sk);
		left -= step - max(t, 0L);
	}
	return 0;
}

/* A CM id given up by a socket that goes on: destroyed in the background. */
struct sdp_id_reap {
	struct work_struct work;
	struct rdma_cm_id *id;
	struct sock *sk;	/* the id's reference */
};

static void sdp_id_reap_work(struct work_struct *work)
{
	struct sdp_id_reap *r = container_of(work, struct sdp_id_reap, work);

	rdma_destroy_id(r->id);
	sock_put(r->sk);	/* the id's reference */
	kfree(r);
}

/*
 * connect() on a socket that tried before: release what the last attempt
 * left (if sdp_work() has not done so yet), clear its state, and make a
 * new CM id, bound again to the address the user bound the socket to (and
 * to its port, if the user named one, as TCP keeps it; the port is free
 * in between, so another socket may have taken it: EADDRINUSE).  The old
 * id is destroyed in the background, so that lock_sock() need not be
 * dropped here.  Not while zero-copy transfers of the last connection
 * still use its QP, MR and rings, or its iWARP CM the QP (EALREADY):
 * connect() waits for them first (sdp_conn_quiesce()).  lock_sock()
 * held, TCP_CLOSE.
 */
int sdp_conn_renew(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct sdp_id_reap *r;
	int err;

	sock_owned_by_me(sk);
	if (sdp_conn_busy(ssk))
		return -EALREADY;
	if (ssk->id && test_bit(SDP_O_ID_USED, &ssk->opts)) {
		r = kmalloc(sizeof(*r), GFP_KERNEL);
		if (!r)
			return -ENOMEM;
		INIT_WORK(&r->work, sdp_id_reap_work);
		r->sk = sk;
		r->id = sdp_conn_detach(ssk);
		queue_work(sdp_wq, &r->work);
	}
	/* How the last attempt ended: its connection state goes. */
	sdp_conn_reset(ssk);
	if (!ssk->id) {
		err = sdp_cm_create_id(ssk);
		if (err)
			return err;
	}
	if (test_bit(SDP_O_USER_BOUND, &ssk->opts) &&
	    !test_bit(SDP_O_BOUND, &ssk->opts)) {
		struct sockaddr_storage ss = ssk->saddr;

		if (!test_bit(SDP_O_USER_PORT, &ssk->opts))
			sdp_addr_set_port((struct sockaddr *)&ss, 0);
		err = sdp_cm_bind(ssk, &ss);
		if (err)
			return err;
		set_bit(SDP_O_BOUND, &ssk->opts);
		ssk->saddr = ssk->id->route.addr.src_addr;
	}
	return 0;
}
