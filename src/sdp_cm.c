// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- connection management over the RDMA CM:
 * Hello/HelloAck, queue pair setup, aborts, orderly close and teardown.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Active side:  connect() -> rdma_resolve_addr -> ADDR_RESOLVED ->
 *   rdma_resolve_route -> ROUTE_RESOLVED -> QP + rings, Hello in
 *   rdma_connect_locked -> ESTABLISHED (HelloAck in the reply).
 * Passive side: CONNECT_REQUEST on the listener (Hello) -> child socket,
 *   QP + rings, rdma_accept (HelloAck) -> ESTABLISHED on the child, which
 *   then moves to the listener's accept queue.
 * Close: each side sends DisConn after its data; once ours is delivered
 *   (send completion) and theirs received, rdma_disconnect() and, when
 *   the socket is closed, the resources go (sdp_work()).
 *
 * The CM calls sdp_cm_handler() in process context, one event at a time
 * per id; it takes lock_sock().  Nothing here calls rdma_destroy_id()
 * with lock_sock() held or from the id's own handler, since that waits
 * for the handler.
 */
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <rdma/ib_cm.h>

#include "sdp.h"

int sdp_cm_create_id(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id;

	id = rdma_create_id(sock_net(&ssk->sk), sdp_cm_handler, ssk,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	sock_hold(&ssk->sk);	/* the id's reference, put after destroy */
	ssk->id = id;
	return 0;
}

static unsigned int sdp_bufs(int bytes, bool locked)
{
	if (!locked)
		return SDP_DEFAULT_BUFS;
	return clamp_t(int, bytes / SDP_BUF_SIZE, SDP_MIN_BUFS, SDP_MAX_BUFS);
}

/* Free QP, CQ and rings; process context, the QP already drained. */
static void sdp_conn_free(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	if (ssk->qp) {
		rdma_destroy_qp(id);
		ssk->qp = NULL;
	}
	if (ssk->cq)
		sdp_cq_destroy(ssk);
	if (ssk->sdev) {
		sdp_rx_ring_free(ssk);
		sdp_tx_ring_free(ssk);
		sdp_zc_conn_free(ssk);
		if (!IS_ERR_OR_NULL(ssk->pd))
			ib_dealloc_pd(ssk->pd);
		ssk->pd = NULL;
		sdp_device_put(ssk->sdev);
		WRITE_ONCE(ssk->sdev, NULL);
	}
}

/*
 * Create the PD, the CQ, the QP and the rings on the device @id resolved
 * to, and post the receive buffers.  lock_sock() held (or the socket is
 * new).
 */
static int sdp_conn_setup(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	const struct ib_device_attr *da = &id->device->attrs;
	struct sock *sk = &ssk->sk;
	struct ib_qp_init_attr attr = {};
	struct sdp_device *sdev;
	u32 sge, zc_wrs;
	int err, ncqe;

	sdev = sdp_device_get(id->device);
	if (!sdev)
		return -ENETDOWN;
	WRITE_ONCE(ssk->sdev, sdev);
	ssk->pd = ib_alloc_pd(id->device, 0);
	if (IS_ERR(ssk->pd)) {
		err = PTR_ERR(ssk->pd);
		goto err;
	}
	sdp_zc_init(ssk);

	ssk->rx_count = sdp_bufs(sk->sk_rcvbuf,
				 sk->sk_userlocks & SOCK_RCVBUF_LOCK);
	ssk->tx_count = sdp_bufs(sk->sk_sndbuf,
				 sk->sk_userlocks & SOCK_SNDBUF_LOCK);
	/*
	 * Zero-copy adds, at most one of each at a time: REG_MR and
	 * LOCAL_INV of our advertisement, the RDMA reads of one of the
	 * peer's (a scatter entry per page, max_sge_rd per read).
	 */
	sge = clamp_t(u32, min_t(u32, da->max_send_sge, da->max_sge_rd), 1,
		      SDP_ZC_SGE);
	zc_wrs = 2 + DIV_ROUND_UP(SDP_ZC_MAX_PAGES, sge);
	ncqe = ssk->rx_count + ssk->tx_count + SDP_CTRL_BUFS + 2 + zc_wrs;
	err = sdp_cq_create(ssk, id->device, ncqe);
	if (err)
		goto err;

	attr.qp_context = ssk;
	attr.send_cq = ssk->cq;
	attr.recv_cq = ssk->cq;
	/* One spare each for ib_drain_qp(). */
	attr.cap.max_send_wr = ssk->tx_count + SDP_CTRL_BUFS + 1 + zc_wrs;
	attr.cap.max_recv_wr = ssk->rx_count + 1;
	attr.cap.max_send_sge = sge;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_rdma_ctxs = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	err = rdma_create_qp(id, ssk->pd, &attr);
	if (err)
		goto err;
	ssk->qp = id->qp;

	err = sdp_rx_ring_alloc(ssk);
	if (err)
		goto err;
	err = sdp_tx_ring_alloc(ssk);
	if (err)
		goto err;

	ssk->rx_mseq_last = 0;
	ssk->rx_mseq_limit = 0;
	ssk->tx_mseq_next = 1;
	spin_lock_bh(&ssk->lock);
	err = sdp_rx_post_all(ssk);
	if (!err)
		set_bit(SDP_F_QP, &ssk->flags);
	spin_unlock_bh(&ssk->lock);
	if (err)
		goto err;
	return 0;
err:
	if (ssk->qp)
		ib_drain_qp(ssk->qp);
	sdp_conn_free(ssk, id);
	return err;
}

static __be16 sdp_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return ((const struct sockaddr_in *)sa)->sin_port;
}

static u8 sdp_ipv(struct rdma_cm_id *id)
{
	return id->route.addr.dst_addr.ss_family == AF_INET6 ? 0x60 : 0x40;
}

/*
 * Connection parameters: the private data, and RDMA read depths (for
 * zero-copy) within what the device and, when accepting, the peer's
 * request @req allow.
 */
static void sdp_conn_param(struct rdma_conn_param *p, const void *pd, u8 len,
			   struct ib_device *dev,
			   const struct rdma_conn_param *req)
{
	memset(p, 0, sizeof(*p));
	p->private_data = pd;
	p->private_data_len = len;
	p->responder_resources = min(dev->attrs.max_qp_rd_atom, SDP_RD_ATOM);
	p->initiator_depth = min(dev->attrs.max_qp_init_rd_atom, SDP_RD_ATOM);
	if (req) {
		p->responder_resources = min(p->responder_resources,
					     req->initiator_depth);
		p->initiator_depth = min(p->initiator_depth,
					 req->responder_resources);
	}
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/*
 * Hello/HelloAck capabilities: remote invalidation needs the memory
 * management extensions (fast registration, SEND with Invalidate).
 */
static bool sdp_dev_rinv(const struct ib_device *dev)
{
	return dev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS;
}

static u8 sdp_hello_flags(const struct ib_device *dev)
{
	return sdp_dev_rinv(dev) ? SDP_HF_RINV : 0;
}

/* The peer's Hello(Ack) @flags: what we may do to its advertisements. */
static void sdp_peer_flags(struct sdp_sock *ssk, const struct ib_device *dev,
			   u8 flags)
{
	if ((flags & SDP_HF_RINV) && sdp_dev_rinv(dev))
		set_bit(SDP_F_PEER_RINV, &ssk->flags);
}

/* Active side, ROUTE_RESOLVED: set up and send the Hello. */
static int sdp_cm_connect(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct sdp_hello hh = {};
	int err;

	err = sdp_conn_setup(ssk, id);
	if (err)
		return err;

	spin_lock_bh(&ssk->lock);
	sdp_fill_bsdh(ssk, &hh.bsdh, SDP_MID_HELLO, sizeof(hh), false);
	spin_unlock_bh(&ssk->lock);
	hh.version = SDP_VERSION;
	hh.ipv = sdp_ipv(id);
	hh.flags = sdp_hello_flags(id->device);
	hh.max_adverts = 1;
	hh.desremrcvsz = cpu_to_be32(SDP_BUF_SIZE);
	hh.localrcvsz = cpu_to_be32(SDP_BUF_SIZE);
	hh.port = sdp_addr_port((struct sockaddr *)&id->route.addr.src_addr);

	sdp_conn_param(&param, &hh, sizeof(hh), id->device, NULL);
	return rdma_connect_locked(id, &param);
}

/* The connection could not be made (@err < 0); tell connect(), poll(). */
static void sdp_connect_failed(struct sdp_sock *ssk, int err)
{
	sdp_conn_abort(ssk, -err);
}

/* The error connect() reports for a failed address or route lookup. */
static int sdp_resolve_error(int status)
{
	switch (status) {
	case -ENETUNREACH:
	case -ENODEV:
	case -EADDRNOTAVAIL:
		return -ENETUNREACH;
	case -ENOMEM:
	case -ENOBUFS:
		return status;
	default:	/* -ETIMEDOUT, -ENODATA, -EHOSTUNREACH, ... */
		return -EHOSTUNREACH;
	}
}

static bool sdp_hello_ack_ok(struct sdp_sock *ssk, struct rdma_cm_event *ev)
{
	const struct sdp_hello_ack *ha = ev->param.conn.private_data;
	u32 rcvsz;

	if (!ha || ev->param.conn.private_data_len < sizeof(*ha) ||
	    ha->bsdh.mid != SDP_MID_HELLO_ACK ||
	    SDP_VERSION_MAJOR(ha->version) != SDP_VERSION_MAJOR(SDP_VERSION)) {
		sdp_warn_peer(ssk, "bad HelloAck; aborting\n");
		return false;
	}
	rcvsz = be32_to_cpu(ha->actrcvsz);
	if (rcvsz < SDP_MIN_PEER_RCVSZ || !be16_to_cpu(ha->bsdh.bufs)) {
		sdp_warn_peer(ssk, "HelloAck with %u-byte buffers, %u credits; aborting\n",
			      rcvsz, be16_to_cpu(ha->bsdh.bufs));
		return false;
	}
	ssk->tx_max = min_t(u32, rcvsz, SDP_BUF_SIZE);
	ssk->tx_credits = be16_to_cpu(ha->bsdh.bufs);
	sdp_peer_flags(ssk, ssk->id->device, ha->flags);
	return true;
}

/*
 * A passive socket left its listener before accept(): take it off the
 * listener's lists if it is still there.  Returns true if it was, in
 * which case the caller owns the socket's first reference and the
 * listener reference.  lock_sock(child) held.
 */
static bool sdp_child_unlink(struct sdp_sock *child)
{
	struct sdp_sock *lssk;
	bool owned = false;

	if (!child->parent)
		return false;
	lssk = sdp_sk(child->parent);
	spin_lock_bh(&lssk->lock);
	if (!list_empty(&child->child_node)) {
		list_del_init(&child->child_node);
		sk_acceptq_removed(&lssk->sk);
		owned = true;
	}
	spin_unlock_bh(&lssk->lock);
	return owned;
}

/* Passive side, ESTABLISHED on the child: hand it to accept(). */
static void sdp_child_established(struct sdp_sock *child)
{
	struct sdp_sock *lssk = sdp_sk(child->parent);
	bool queued = false;

	spin_lock_bh(&lssk->lock);
	if (lssk->sk.sk_state == TCP_LISTEN &&
	    !list_empty(&child->child_node)) {
		list_move_tail(&child->child_node, &lssk->accept_queue);
		set_bit(SDP_F_QUEUED, &child->flags);
		queued = true;
	}
	spin_unlock_bh(&lssk->lock);
	if (queued)
		lssk->sk.sk_data_ready(&lssk->sk);
}

/*
 * CONNECT_REQUEST on a listener.  Returns non-zero to have the CM reject
 * the request and destroy @id.
 */
static int sdp_cm_request(struct sdp_sock *lssk, struct rdma_cm_id *id,
			  struct rdma_cm_event *ev)
{
	const struct sdp_hello *hh = ev->param.conn.private_data;
	struct sock *lsk = &lssk->sk;
	struct rdma_conn_param param;
	struct sdp_hello_ack ha = {};
	struct sdp_sock *child;
	struct sock *csk;
	u32 rcvsz;
	int err;

	lock_sock(lsk);
	if (lsk->sk_state != TCP_LISTEN)
		goto reject;
	if (sk_acceptq_is_full(lsk)) {
		SDP_INC_STATS(sock_net(lsk), SDP_MIB_LISTEN_OVERFLOWS);
		net_dbg_ratelimited("accept queue full, refusing %pISpc\n",
				    &id->route.addr.dst_addr);
		goto reject;
	}
	if (!hh || ev->param.conn.private_data_len < sizeof(*hh) ||
	    hh->bsdh.mid != SDP_MID_HELLO ||
	    SDP_VERSION_MAJOR(hh->version) != SDP_VERSION_MAJOR(SDP_VERSION)) {
		net_warn_ratelimited("%pISpc: bad Hello, refusing\n",
				     &id->route.addr.dst_addr);
		goto reject;
	}
	rcvsz = be32_to_cpu(hh->localrcvsz);
	if (rcvsz < SDP_MIN_PEER_RCVSZ || !be16_to_cpu(hh->bsdh.bufs)) {
		net_warn_ratelimited("%pISpc: Hello with %u-byte buffers, %u credits; refusing\n",
				     &id->route.addr.dst_addr, rcvsz,
				     be16_to_cpu(hh->bsdh.bufs));
		goto reject;
	}

	csk = sdp_sock_alloc(sock_net(lsk), lsk, 0);
	if (!csk)
		goto reject;
	child = sdp_sk(csk);
	child->id = id;
	child->saddr = id->route.addr.src_addr;
	child->daddr = id->route.addr.dst_addr;
	set_bit(SDP_F_BOUND, &child->flags);
	id->context = child;
	sock_hold(csk);		/* the id's reference */

	err = sdp_conn_setup(child, id);
	if (err)
		goto err_child;
	child->tx_max = min_t(u32, rcvsz, SDP_BUF_SIZE);
	child->tx_credits = be16_to_cpu(hh->bsdh.bufs);
	sdp_peer_flags(child, id->device, hh->flags);

	spin_lock_bh(&child->lock);
	sdp_fill_bsdh(child, &ha.bsdh, SDP_MID_HELLO_ACK, sizeof(ha), false);
	spin_unlock_bh(&child->lock);
	ha.version = SDP_VERSION;
	ha.ipv = sdp_ipv(id);
	ha.flags = sdp_hello_flags(id->device);
	ha.max_adverts = 1;
	ha.actrcvsz = cpu_to_be32(SDP_BUF_SIZE);
	sdp_conn_param(&param, &ha, sizeof(ha), id->device, &ev->param.conn);
	err = rdma_accept(id, &param);
	if (err)
		goto err_conn;

	sdp_set_state(csk, TCP_SYN_RECV);
	sock_hold(lsk);
	child->parent = lsk;
	spin_lock_bh(&lssk->lock);
	list_add_tail(&child->child_node, &lssk->pending);
	sk_acceptq_added(lsk);
	spin_unlock_bh(&lssk->lock);
	release_sock(lsk);
	return 0;

err_conn:
	ib_drain_qp(child->qp);
	sdp_conn_free(child, id);
err_child:
	child->id = NULL;
	sock_set_flag(csk, SOCK_DEAD);
	sock_put(csk);		/* the id's reference */
	sock_put(csk);		/* the socket's own */
reject:
	SDP_INC_STATS(sock_net(lsk), SDP_MIB_PASSIVE_REFUSED);
	release_sock(lsk);
	rdma_reject(id, NULL, 0, IB_CM_REJ_CONSUMER_DEFINED);
	return 1;
}

int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sdp_sock *ssk = id->context;
	struct sock *sk = &ssk->sk;
	bool put_id_ref = false, put_child = false;
	struct sock *parent = NULL;
	int ret = 0, err;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sdp_cm_request(ssk, id, ev);

	sock_hold(sk);
	lock_sock(sk);
	if (ssk->id != id)	/* an id we already gave up */
		goto out;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(id, sdp_sysctl_resolve_timeout_ms(sock_net(sk)));
		if (err)
			sdp_connect_failed(ssk, sdp_resolve_error(err));
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		/* The local address and port are known from here on. */
		ssk->saddr = id->route.addr.src_addr;
		set_bit(SDP_F_BOUND, &ssk->flags);
		err = sdp_cm_connect(ssk, id);
		if (err)
			sdp_connect_failed(ssk, err);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		sdp_connect_failed(ssk, sdp_resolve_error(ev->status));
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		sdp_connect_failed(ssk, -ETIMEDOUT);
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (ssk->parent && sdp_child_unlink(ssk)) {
			parent = ssk->parent;
			ssk->parent = NULL;
			sock_set_flag(sk, SOCK_DEAD);
			put_child = true;
		}
		sdp_connect_failed(ssk, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (test_bit(SDP_F_ABORT, &ssk->flags)) {
			/*
			 * Aborted while the CM was still waiting for the
			 * peer's RTU: the DREQ could not go then, now it can.
			 */
			rdma_disconnect(id);
			break;
		}
		if (sk->sk_state == TCP_SYN_RECV) {
			spin_lock_bh(&ssk->lock);
			sdp_set_state(sk, TCP_ESTABLISHED);
			spin_unlock_bh(&ssk->lock);
			if (ssk->parent)
				sdp_child_established(ssk);
			break;
		}
		if (sk->sk_state != TCP_SYN_SENT)
			break;
		if (!sdp_hello_ack_ok(ssk, ev)) {
			sdp_conn_abort(ssk, ECONNREFUSED);
			break;
		}
		spin_lock_bh(&ssk->lock);
		sdp_set_state(sk, TCP_ESTABLISHED);
		spin_unlock_bh(&ssk->lock);
		sk->sk_state_change(sk);
		sk->sk_write_space(sk);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* The peer's DREQ: answer it now (our own DREQ's reply too). */
		if (!test_and_set_bit(SDP_F_CM_DISCONNECT, &ssk->flags))
			rdma_disconnect(id);
		spin_lock_bh(&ssk->lock);
		if (!test_bit(SDP_F_ABORT, &ssk->flags) &&
		    !(test_bit(SDP_F_DISCONN_RCVD, &ssk->flags) &&
		      test_bit(SDP_F_DISCONN_DONE, &ssk->flags))) {
			sdp_stat_abort(ssk, SDP_ABORT_ON_CM_DISCONNECT);
			__sdp_conn_abort(ssk, ECONNRESET, false);
		} else if (sk->sk_state != TCP_CLOSE) {
			sdp_set_state(sk, TCP_CLOSE);
		}
		spin_unlock_bh(&ssk->lock);
		sdp_queue_work(ssk);
		if (!sock_flag(sk, SOCK_DEAD))
			sk->sk_state_change(sk);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		sdp_stat_abort(ssk, SDP_ABORT_ON_DEVICE_REMOVAL);
		sdp_conn_abort(ssk, ENETDOWN);
		if (!ssk->qp) {
			/* Let the CM destroy the id now; nothing else uses it. */
			ssk->id = NULL;
			put_id_ref = true;
			ret = 1;
		}
		break;
	default:
		break;
	}
out:
	release_sock(sk);
	if (parent)
		sock_put(parent);
	if (put_child)
		sock_put(sk);
	if (put_id_ref)
		sock_put(sk);
	sock_put(sk);
	return ret;
}

/*
 * Abort the connection: the socket gets @err, the peer an AbortConn if
 * @send_abort and the QP can still carry it, and sdp_work() disconnects.
 * ssk->lock held; any context.
 */
void __sdp_conn_abort(struct sdp_sock *ssk, int err, bool send_abort)
{
	struct sock *sk = &ssk->sk;

	if (test_bit(SDP_F_ABORT, &ssk->flags))
		return;
	sdp_trace_abort(ssk, err, send_abort);
	if (send_abort && test_bit(SDP_F_QP, &ssk->flags) &&
	    !test_bit(SDP_F_CM_DISCONNECT, &ssk->flags))
		sdp_post_ctrl(ssk, SDP_MID_ABORT);
	set_bit(SDP_F_ABORT, &ssk->flags);
	if (err && !sock_flag(sk, SOCK_DEAD))
		WRITE_ONCE(sk->sk_err, err);
	WRITE_ONCE(sk->sk_shutdown, SHUTDOWN_MASK);
	sdp_set_state(sk, TCP_CLOSE);
	sdp_queue_work(ssk);
	if (!sock_flag(sk, SOCK_DEAD)) {
		sk->sk_state_change(sk);
		sk_error_report(sk);
	}
	sdp_zc_wake(ssk);	/* zero-copy waits are uninterruptible */
}

void sdp_conn_abort(struct sdp_sock *ssk, int err)
{
	spin_lock_bh(&ssk->lock);
	__sdp_conn_abort(ssk, err, true);
	spin_unlock_bh(&ssk->lock);
}

/*
 * Both DisConns are through (ours delivered, theirs received): the
 * connection is over.  ssk->lock held.
 */
void sdp_check_close_done(struct sdp_sock *ssk)
{
	if (!test_bit(SDP_F_DISCONN_DONE, &ssk->flags) ||
	    !test_bit(SDP_F_DISCONN_RCVD, &ssk->flags) ||
	    !sdp_tx_idle(ssk))
		return;
	if (ssk->sk.sk_state != TCP_CLOSE) {
		sdp_set_state(&ssk->sk, TCP_CLOSE);
		if (!sock_flag(&ssk->sk, SOCK_DEAD))
			ssk->sk.sk_state_change(&ssk->sk);
	}
	sdp_queue_work(ssk);
}

/*
 * Process-context work of a socket: call rdma_disconnect() once the
 * connection is over or aborted, and release everything once the socket
 * is closed (or its device goes away, or a connect failed).
 */
void sdp_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(work, struct sdp_sock, work);
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id = NULL;
	struct sock *parent = NULL;
	bool disconnect, destroy, qp;

	lock_sock(sk);
	/*
	 * A passive socket aborted before it reached the accept queue will
	 * never be accepted: give its backlog slot back and close it.
	 */
	if (ssk->parent && test_bit(SDP_F_ABORT, &ssk->flags) &&
	    !test_bit(SDP_F_QUEUED, &ssk->flags) && sdp_child_unlink(ssk)) {
		parent = ssk->parent;
		ssk->parent = NULL;
		sock_set_flag(sk, SOCK_DEAD);
	}
	spin_lock_bh(&ssk->lock);
	qp = test_bit(SDP_F_QP, &ssk->flags);
	disconnect = qp && !test_bit(SDP_F_CM_DISCONNECT, &ssk->flags) &&
		     (test_bit(SDP_F_ABORT, &ssk->flags) ||
		      sk->sk_state == TCP_CLOSE);
	if (disconnect)
		set_bit(SDP_F_CM_DISCONNECT, &ssk->flags);
	/*
	 * Release the resources of a closed socket once its connection is
	 * over (closed or aborted), of any socket whose device goes away,
	 * and of a failed connect (so that connect() can start anew); not
	 * while a zero-copy transfer uses them (it queues us when it ends).
	 */
	destroy = ssk->id && !ssk->zc_busy &&
		  ((sock_flag(sk, SOCK_DEAD) && sk->sk_state == TCP_CLOSE) ||
		   (ssk->sdev && READ_ONCE(ssk->sdev->removing)) ||
		   (!qp && test_bit(SDP_F_ABORT, &ssk->flags)));
	if (destroy) {
		clear_bit(SDP_F_QP, &ssk->flags);
		set_bit(SDP_F_ABORT, &ssk->flags);
		set_bit(SDP_F_CM_DISCONNECT, &ssk->flags);
	}
	spin_unlock_bh(&ssk->lock);

	if (disconnect)
		rdma_disconnect(ssk->id);
	if (destroy) {
		/*
		 * The CM handler ignores events of an id that is no longer
		 * ssk->id; the QP is drained before its buffers go.
		 */
		id = ssk->id;
		ssk->id = NULL;
		clear_bit(SDP_F_BOUND, &ssk->flags);
		sdp_rx_purge(ssk);
		if (ssk->qp)
			ib_drain_qp(ssk->qp);
		sdp_conn_free(ssk, id);
		if (cancel_delayed_work(&ssk->timeout_work))
			sock_put(sk);	/* the timeout's reference */
	}
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

/* An orphaned socket whose peer never finished the close: abort it. */
void sdp_timeout_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, timeout_work);

	sdp_stat_abort(ssk, SDP_ABORT_ON_TIMEOUT);
	sdp_conn_abort(ssk, ETIMEDOUT);
	sock_put(&ssk->sk);
}
