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
#include <linux/cred.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <net/ip.h>
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

/*
 * rdma_bind_addr() with TCP's rule for privileged ports: a port below
 * net.ipv4.ip_unprivileged_port_start of the socket's namespace needs
 * CAP_NET_BIND_SERVICE in the namespace's user namespace.  The CM itself
 * asks for the capability in the initial user namespace below 1024
 * whatever that sysctl says, so where our rule allows the bind and the
 * CM's would not, the CM is called with credentials that hold
 * CAP_NET_BIND_SERVICE and nothing else.  lock_sock() held.
 */
int sdp_cm_bind(struct sdp_sock *ssk, const struct sockaddr_storage *ss)
{
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);
	u16 port = ntohs(sdp_addr_port((const struct sockaddr *)ss));
	const struct cred *old;
	struct cred *cred;
	int err;

	sock_owned_by_me(sk);
	if (port && inet_port_requires_bind_service(net, port) &&
	    !ns_capable(net->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;
	rdma_set_reuseaddr(ssk->id, sk->sk_reuse != SK_NO_REUSE);
	if (ss->ss_family == AF_INET6)
		rdma_set_afonly(ssk->id, 0);
	if (!port || port >= PROT_SOCK || capable(CAP_NET_BIND_SERVICE)) {
		err = rdma_bind_addr(ssk->id, (struct sockaddr *)ss);
	} else {
		cred = prepare_kernel_cred(&init_task);
		if (!cred)
			return -ENOMEM;
		cap_clear(cred->cap_inheritable);
		cap_clear(cred->cap_permitted);
		cap_clear(cred->cap_effective);
		cap_clear(cred->cap_bset);
		cap_clear(cred->cap_ambient);
		cap_raise(cred->cap_effective, CAP_NET_BIND_SERVICE);
		old = override_creds(cred);
		err = rdma_bind_addr(ssk->id, (struct sockaddr *)ss);
		revert_creds(old);
		put_cred(cred);
	}
	return err == -ENODEV ? -EADDRNOTAVAIL : err;
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
		sdp_mem_uncharge_all(ssk);
		sdp_zc_conn_free(ssk);
		if (!IS_ERR_OR_NULL(ssk->pd))
			ib_dealloc_pd(ssk->pd);
		ssk->pd = NULL;
		sdp_device_put(ssk->sdev);
		WRITE_ONCE(ssk->sdev, NULL);
	}
}

/* The counters of a connection's rings, messages and transfers. */
static void sdp_conn_state_init(struct sdp_sock *ssk)
{
	ssk->rx_posted = 0;
	ssk->rx_bytes = 0;
	ssk->rx_mseq_last = 0;
	ssk->rx_mseq_limit = 0;
	ssk->tx_head = 0;
	ssk->tx_post = 0;
	ssk->tx_tail = 0;
	ssk->tx_fill = 0;
	ssk->tx_bytes = 0;
	ssk->tx_credits = 0;
	ssk->tx_mseq_next = 1;
	ssk->ctrl_head = 0;
	ssk->ctrl_tail = 0;
	ssk->zc_tx_len = 0;
	ssk->zc_tx_acked = 0;
	ssk->zc_rx = NULL;
	ssk->zc_rx_compl = 0;
}

/*
 * Create the PD, the CQ, the QP and the rings on the device @id resolved
 * to, and post the receive buffers.  lock_sock() held (a passive socket:
 * not yet visible to anyone else).
 */
static int sdp_conn_setup(struct sdp_sock *ssk, struct rdma_cm_id *id,
			  bool passive)
{
	const struct ib_device_attr *da = &id->device->attrs;
	struct sock *sk = &ssk->sk;
	struct ib_qp_init_attr attr = {};
	struct sdp_device *sdev;
	struct mem_cgroup *old;
	unsigned int nrx;
	u32 sge, zc_wrs;
	int err, ncqe;

	sock_owned_by_me(sk);
	sdev = sdp_device_get(id->device);
	if (!sdev)
		return -ENETDOWN;
	/* A socket may connect again after a failed attempt: start afresh. */
	sdp_conn_state_init(ssk);
	WRITE_ONCE(ssk->sdev, sdev);
	old = sdp_memcg_enter(sk);
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
	sdp_mem_ring_bufs(sk, &ssk->rx_count, &ssk->tx_count);
	/* Half open, a passive connection holds only a few (sdp_mem.c). */
	nrx = passive ? min_t(unsigned int, ssk->rx_count, SDP_HALF_OPEN_BUFS) :
			ssk->rx_count;
	err = sdp_mem_charge(ssk, nrx, false);
	if (err)
		goto err;
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
		set_bit(SDP_F_QP, &ssk->flags);
	spin_unlock_bh(&ssk->lock);
	if (err)
		goto err_free;
	return 0;
err:
	sdp_memcg_leave(old);
err_free:
	if (ssk->qp)
		ib_drain_qp(ssk->qp);
	sdp_conn_free(ssk, id);
	return err;
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
	spin_lock_bh(&ssk->lock);
	assign_bit(SDP_F_PEER_RINV, &ssk->flags,
		   (flags & SDP_HF_RINV) && sdp_dev_rinv(dev));
	spin_unlock_bh(&ssk->lock);
}

/* Active side, ROUTE_RESOLVED: set up and send the Hello. */
static int sdp_cm_connect(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct sdp_hello hh = {};
	int err;

	err = sdp_conn_setup(ssk, id, false);
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

	sock_owned_by_me(&child->sk);
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

	/* The child is not visible yet; lockdep wants its lock_sock(). */
	lock_sock_nested(csk, SINGLE_DEPTH_NESTING);
	if (!sdp_half_open_start(child)) {
		net_dbg_ratelimited("%d half-open connections, refusing %pISpc\n",
				    READ_ONCE(sdp_net(sock_net(lsk))->max_half_open),
				    &id->route.addr.dst_addr);
		err = -ENOBUFS;
	} else {
		err = sdp_conn_setup(child, id, true);
	}
	release_sock(csk);
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

	spin_lock_bh(&child->lock);
	sdp_set_state(csk, TCP_SYN_RECV);
	spin_unlock_bh(&child->lock);
	sock_hold(lsk);
	child->parent = lsk;
	spin_lock_bh(&lssk->lock);
	list_add_tail(&child->child_node, &lssk->pending);
	sk_acceptq_added(lsk);
	spin_unlock_bh(&lssk->lock);
	release_sock(lsk);
	return 0;

err_conn:
	lock_sock_nested(csk, SINGLE_DEPTH_NESTING);
	ib_drain_qp(child->qp);
	sdp_conn_free(child, id);
	release_sock(csk);
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
	bool put_id_ref = false, put_child = false, disconnect;
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
			set_bit(SDP_F_ESTABLISHED, &ssk->flags);
			sdp_set_state(sk, TCP_ESTABLISHED);
			spin_unlock_bh(&ssk->lock);
			sdp_half_open_done(ssk);
			sdp_rx_grow(ssk);
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
		set_bit(SDP_F_ESTABLISHED, &ssk->flags);
		sdp_set_state(sk, TCP_ESTABLISHED);
		spin_unlock_bh(&ssk->lock);
		sk->sk_state_change(sk);
		sk->sk_write_space(sk);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* The peer's DREQ: answer it now (our own DREQ's reply too). */
		spin_lock_bh(&ssk->lock);
		disconnect = !test_and_set_bit(SDP_F_CM_DISCONNECT, &ssk->flags);
		spin_unlock_bh(&ssk->lock);
		if (disconnect)
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
 * @send_abort and the QP can still carry it, and sdp_work() disconnects
 * (once the AbortConn is delivered).  ssk->lock held; any context.
 */
void __sdp_conn_abort(struct sdp_sock *ssk, int err, bool send_abort)
{
	struct sock *sk = &ssk->sk;

	lockdep_assert_held(&ssk->lock);
	if (test_bit(SDP_F_ABORT, &ssk->flags))
		return;
	sdp_trace_abort(ssk, err, send_abort);
	if (send_abort && test_bit(SDP_F_QP, &ssk->flags) &&
	    !test_bit(SDP_F_CM_DISCONNECT, &ssk->flags) &&
	    !sdp_post_ctrl(ssk, SDP_MID_ABORT)) {
		set_bit(SDP_F_ABORT_SENT, &ssk->flags);
		ssk->abort_sent = jiffies;
	}
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
	return test_bit(SDP_F_ABORT_SENT, &ssk->flags) &&
	       ssk->ctrl_tail != ssk->ctrl_head &&
	       time_before(jiffies, ssk->abort_sent + SDP_ABORT_DELIVERY) &&
	       !(ssk->sdev && READ_ONCE(ssk->sdev->removing));
}

/*
 * Both DisConns are through (ours delivered, theirs received): the
 * connection is over.  ssk->lock held.
 */
void sdp_check_close_done(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
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
 * Take the connection down: drain the QP, free the QP, CQ, rings and PD,
 * and give the CM id up (the handler ignores an id that is no longer
 * ssk->id).  Returns the id, which the caller destroys once it does not
 * hold lock_sock() any more (rdma_destroy_id() waits for the handler,
 * which takes it), and then drops the id's socket reference.
 * lock_sock() held.
 */
static struct rdma_cm_id *sdp_conn_detach(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id = ssk->id;

	sock_owned_by_me(sk);
	spin_lock_bh(&ssk->lock);
	clear_bit(SDP_F_QP, &ssk->flags);
	set_bit(SDP_F_ABORT, &ssk->flags);
	set_bit(SDP_F_CM_DISCONNECT, &ssk->flags);
	spin_unlock_bh(&ssk->lock);
	ssk->id = NULL;
	clear_bit(SDP_F_ID_USED, &ssk->flags);
	clear_bit(SDP_F_BOUND, &ssk->flags);
	sdp_rx_purge(ssk);
	if (ssk->qp)
		ib_drain_qp(ssk->qp);
	sdp_conn_free(ssk, id);
	if (cancel_delayed_work(&ssk->timeout_work))
		sock_put(sk);	/* the timeout's reference */
	return id;
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
 * dropped here.  lock_sock() held, TCP_CLOSE.
 */
int sdp_conn_renew(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct sdp_id_reap *r;
	int err;

	sock_owned_by_me(sk);
	if (ssk->id && test_bit(SDP_F_ID_USED, &ssk->flags)) {
		r = kmalloc(sizeof(*r), GFP_KERNEL);
		if (!r)
			return -ENOMEM;
		INIT_WORK(&r->work, sdp_id_reap_work);
		r->sk = sk;
		r->id = sdp_conn_detach(ssk);
		queue_work(sdp_wq, &r->work);
	}
	/* How the last attempt ended: its connection state goes. */
	spin_lock_bh(&ssk->lock);
	sdp_flags_clear_conn(ssk);
	spin_unlock_bh(&ssk->lock);
	sdp_sock_clear_dev_gone(ssk);
	if (!ssk->id) {
		err = sdp_cm_create_id(ssk);
		if (err)
			return err;
	}
	if (test_bit(SDP_F_USER_BOUND, &ssk->flags) &&
	    !test_bit(SDP_F_BOUND, &ssk->flags)) {
		struct sockaddr_storage ss = ssk->saddr;

		if (!test_bit(SDP_F_USER_PORT, &ssk->flags))
			sdp_addr_set_port((struct sockaddr *)&ss, 0);
		err = sdp_cm_bind(ssk, &ss);
		if (err)
			return err;
		set_bit(SDP_F_BOUND, &ssk->flags);
		ssk->saddr = ssk->id->route.addr.src_addr;
	}
	return 0;
}

/*
 * Process-context work of a socket: call rdma_disconnect() once the
 * connection is over or aborted (and our AbortConn delivered), and
 * release everything once the socket is closed, its device goes away,
 * or a connect failed (so that connect() can start anew).
 */
void sdp_work(struct work_struct *work)
{
	struct sdp_sock *ssk = container_of(to_delayed_work(work),
					    struct sdp_sock, work);
	struct sock *sk = &ssk->sk;
	struct rdma_cm_id *id = NULL;
	struct sock *parent = NULL;
	bool disconnect, destroy, qp, held;

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
	held = sdp_abort_in_flight(ssk);
	if (held)	/* come back when the wait for it is over */
		sdp_queue_work_delayed(ssk, ssk->abort_sent +
				       SDP_ABORT_DELIVERY - jiffies + 1);
	disconnect = qp && !held &&
		     !test_bit(SDP_F_CM_DISCONNECT, &ssk->flags) &&
		     (test_bit(SDP_F_ABORT, &ssk->flags) ||
		      sk->sk_state == TCP_CLOSE);
	if (disconnect)
		set_bit(SDP_F_CM_DISCONNECT, &ssk->flags);
	/*
	 * Release the resources of a closed socket once its connection is
	 * over (closed or aborted), of any socket whose device goes away,
	 * and of a connect that failed (never established; nothing to
	 * read); not while a zero-copy transfer uses them (it queues us
	 * when it ends) or our AbortConn is on its way.
	 */
	destroy = ssk->id && !ssk->zc_busy && !held &&
		  ((sock_flag(sk, SOCK_DEAD) && sk->sk_state == TCP_CLOSE) ||
		   (ssk->sdev && READ_ONCE(ssk->sdev->removing)) ||
		   (test_bit(SDP_F_ABORT, &ssk->flags) &&
		    !test_bit(SDP_F_ESTABLISHED, &ssk->flags) && !ssk->parent));
	spin_unlock_bh(&ssk->lock);

	if (disconnect)
		rdma_disconnect(ssk->id);
	if (destroy)
		id = sdp_conn_detach(ssk);
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
