// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- connections through the RDMA CM: binding,
 * the Hello/HelloAck handshake, and the CM's events (sdp_cm_handler()).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Active side:  connect() -> rdma_resolve_addr -> ADDR_RESOLVED ->
 *   rdma_resolve_route -> ROUTE_RESOLVED -> QP + rings, Hello in
 *   rdma_connect_locked (over iWARP rdma_connect, from sdp_wq:
 *   sdp_cm_iw_connect()) -> ESTABLISHED (HelloAck in the reply).
 * Passive side: CONNECT_REQUEST on the listener (Hello) -> child socket,
 *   QP + rings, rdma_accept (HelloAck) -> ESTABLISHED on the child, which
 *   then moves to the listener's accept queue.
 * The QP and rings come from sdp_conn.c; the close and aborts, including
 * the CM's DISCONNECTED, are sdp_close.c's.
 *
 * The CM calls sdp_cm_handler() in process context, one event at a time
 * per id; it takes lock_sock().  Nothing here calls rdma_destroy_id()
 * with lock_sock() held or from the id's own handler, since that waits
 * for the handler.
 */
#include <linux/cred.h>
#include <linux/string.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/route.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_cm.h"
#include "sdp_conn.h"
#include "sdp_ctrl.h"
#include "sdp_dev.h"
#include "sdp_fallback.h"
#include "sdp_filter.h"
#include "sdp_mem.h"
#include "sdp_net.h"
#include "sdp_proto.h"
#include "sdp_resume.h"
#include "sdp_rx.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_wire.h"

static struct rdma_cm_id *sdp_cm_new_id(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id;

	id = rdma_create_id(sock_net(&ssk->sk), sdp_cm_handler, ssk,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (!IS_ERR(id))
		sock_hold(&ssk->sk);	/* the id's reference, put after destroy */
	return id;
}

int sdp_cm_create_id(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id = sdp_cm_new_id(ssk);

	if (IS_ERR(id))
		return PTR_ERR(id);
	ssk->id = id;
	return 0;
}

/* Is @ss the wildcard or an address of this namespace? */
static bool sdp_addr_local(struct net *net, const struct sockaddr_storage *ss)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	__be32 v4;

	if (ss->ss_family == AF_INET) {
		v4 = sin->sin_addr.s_addr;
	} else if (ipv6_addr_v4mapped(&sin6->sin6_addr)) {
		v4 = sin6->sin6_addr.s6_addr32[3];
	} else {
		return ipv6_addr_any(&sin6->sin6_addr) ||
		       (IS_ENABLED(CONFIG_IPV6) &&
			ipv6_chk_addr(net, &sin6->sin6_addr, NULL, 0));
	}
	return v4 == htonl(INADDR_ANY) || inet_addr_type(net, v4) == RTN_LOCAL;
}

/* Would the CM refuse @port to the caller, whatever our rule says? */
static bool sdp_cm_needs_bind_service(u16 port)
{
	return port && port < PROT_SOCK && !capable(CAP_NET_BIND_SERVICE);
}

/**
 * sdp_cm_listen() - rdma_listen() on an id bound to the socket's port
 * @ssk: the socket
 * @id: ssk->id or its IPv4 id
 * @backlog: listen()'s
 *
 * The port is the socket's since bind(), which asked for the capability
 * a privileged one needs; TCP's listen() asks for none, so a server may
 * bind as root and listen after giving root up.  Over iWARP, though,
 * rdma_listen() binds a TCP socket of the device's to the port, with the
 * caller's credentials (siw_create_listen()), which would refuse such a
 * server (EACCES).  So below 1024 it is called with the caller's
 * credentials plus CAP_NET_BIND_SERVICE.  lock_sock() held.
 *
 * Return: rdma_listen()'s.
 */
int sdp_cm_listen(struct sdp_sock *ssk, struct rdma_cm_id *id, int backlog)
{
	struct sockaddr *sa = (struct sockaddr *)&id->route.addr.src_addr;
	const struct cred *old;
	struct cred *cred;
	int err;

	sock_owned_by_me(&ssk->sk);
	if (!sdp_cm_needs_bind_service(ntohs(sdp_addr_port(sa))))
		return rdma_listen(id, backlog);
	cred = prepare_creds();
	if (!cred)
		return -ENOMEM;
	cap_raise(cred->cap_effective, CAP_NET_BIND_SERVICE);
	old = override_creds(cred);
	err = rdma_listen(id, backlog);
	revert_creds(old);
	put_cred(cred);
	return err;
}

/*
 * rdma_bind_addr() with TCP's rule for privileged ports: a port below
 * net.ipv4.ip_unprivileged_port_start of the socket's namespace needs
 * CAP_NET_BIND_SERVICE in the namespace's user namespace.  The CM itself
 * asks for the capability in the initial user namespace below 1024
 * whatever that sysctl says, so where our rule allows the bind and the
 * CM's would not, the CM is called with credentials that hold
 * CAP_NET_BIND_SERVICE and nothing else.  With @owned the socket holds
 * the port already (the IPv4 id of a listener, sdp_cm_listen_v4()): no
 * capability is asked for again, as TCP's listen() asks for none.
 * lock_sock() held.
 */
static int sdp_cm_bind_id(struct sdp_sock *ssk, struct rdma_cm_id *id,
			  const struct sockaddr_storage *ss, bool owned)
{
	struct sock *sk = &ssk->sk;
	struct net *net = sock_net(sk);
	u16 port = ntohs(sdp_addr_port((const struct sockaddr *)ss));
	const struct cred *old;
	struct cred *cred;
	int err;

	sock_owned_by_me(sk);
	if (!owned && port && inet_port_requires_bind_service(net, port) &&
	    !ns_capable(net->user_ns, CAP_NET_BIND_SERVICE))
		return -EACCES;
	rdma_set_reuseaddr(id, sk->sk_reuse != SK_NO_REUSE);
	if (ss->ss_family == AF_INET6)
		rdma_set_afonly(id, ssk->tcp.v6only);
	if (!sdp_cm_needs_bind_service(port)) {
		err = rdma_bind_addr(id, (struct sockaddr *)ss);
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
		err = rdma_bind_addr(id, (struct sockaddr *)ss);
		revert_creds(old);
		put_cred(cred);
	}
	/*
	 * The CM says EADDRNOTAVAIL both for an address no device has and
	 * for a port another id holds when either address is the wildcard
	 * (cma_check_port()); TCP says EADDRINUSE for the second.  An
	 * address of a netdev without an RDMA device gives ENODEV.
	 */
	if (err == -EADDRNOTAVAIL && sdp_addr_local(net, ss))
		return -EADDRINUSE;
	return err == -ENODEV ? -EADDRNOTAVAIL : err;
}

int sdp_cm_bind(struct sdp_sock *ssk, const struct sockaddr_storage *ss)
{
	return sdp_cm_bind_id(ssk, ssk->id, ss, false);
}

/* A listener on the IPv6 wildcard that takes IPv4 clients too? */
static bool sdp_cm_dual_stack(const struct sdp_sock *ssk)
{
	const struct sockaddr_in6 *sin6 =
		(const struct sockaddr_in6 *)&ssk->id->route.addr.src_addr;

	return sin6->sin6_family == AF_INET6 && !ssk->tcp.v6only &&
	       ipv6_addr_any(&sin6->sin6_addr);
}

/*
 * listen() on a socket bound to the IPv6 wildcard without IPV6_V6ONLY:
 * its IPv4 clients come to a second CM id, @id4, listening on the IPv4
 * wildcard at the same port, and @id takes IPv6 clients only.  One
 * dual-stack id would do on InfiniBand and RoCE, where the CM hands an
 * IPv4 request to an IPv6 listener, but not on iWARP: there each listener
 * is a TCP socket of the device's, and an IPv4 client reaching an IPv6
 * one comes with v4-mapped addresses that the CM finds on no device and
 * refuses.  The port stays the socket's in both families throughout
 * (@id held it for IPv4 since bind(); cma_check_port() lets two
 * family-only ids share it).  Before rdma_listen() on @id, so that a
 * failure leaves the socket as it was; the caller destroys *@spent, the
 * id that failed, once lock_sock() is released.  lock_sock() held.
 */
int sdp_cm_listen_v4(struct sdp_sock *ssk, int backlog,
		     struct rdma_cm_id **spent)
{
	struct sockaddr *sa = (struct sockaddr *)&ssk->id->route.addr.src_addr;
	struct sockaddr_storage ss = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct rdma_cm_id *id4;
	int err;

	sock_owned_by_me(&ssk->sk);
	*spent = NULL;
	if (ssk->id4 || !sdp_cm_dual_stack(ssk))
		return 0;
	id4 = sdp_cm_new_id(ssk);
	if (IS_ERR(id4))
		return PTR_ERR(id4);
	err = rdma_set_afonly(ssk->id, 1);
	if (err)
		goto err_id;
	sin->sin_family = AF_INET;
	sin->sin_port = sdp_addr_port(sa);
	err = sdp_cm_bind_id(ssk, id4, &ss, true);
	if (!err)
		err = sdp_cm_listen(ssk, id4, backlog);
	if (err)
		goto err_afonly;
	ssk->id4 = id4;
	return 0;

err_afonly:
	rdma_set_afonly(ssk->id, 0);
err_id:
	*spent = id4;
	return err;
}

/*
 * A listener's IPv4 id, given up when @id goes or fails to listen (@id
 * takes IPv4 again then): the caller destroys it once lock_sock() is
 * released (sdp_cm_put_id()).  lock_sock() held.
 */
struct rdma_cm_id *sdp_cm_take_id4(struct sdp_sock *ssk)
{
	struct rdma_cm_id *id4 = ssk->id4;

	sock_owned_by_me(&ssk->sk);
	if (id4 && ssk->id)
		rdma_set_afonly(ssk->id, 0);
	ssk->id4 = NULL;
	return id4;
}

/* Destroy an id of @sk's (or none) and drop its reference; no lock_sock(). */
void sdp_cm_put_id(struct sock *sk, struct rdma_cm_id *id)
{
	if (!id)
		return;
	rdma_destroy_id(id);
	sock_put(sk);	/* the id's reference */
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
	/*
	 * 6 retries of the ACK timeout before a send to a peer that stopped
	 * answering fails (ETIMEDOUT): 7 is the most the field holds, but
	 * Soft-RoCE takes 7 to mean for ever, and a dead peer would then
	 * never be found (sdp_keepalive.c).  The passive side's QP uses the
	 * count of the REQ.  RNR retries: 7, for ever, as the spec defines
	 * it: a peer that has not reposted a buffer yet is alive.
	 */
	p->retry_count = 6;
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
	return (sdp_dev_rinv(dev) ? SDP_HF_RINV : 0) | SDP_HF_RESIZE |
	       SDP_HF_SHRINK | SDP_HF_PING;
}

/* The peer's Hello(Ack) @flags: what we may do to its advertisements. */
static void sdp_peer_flags(struct sdp_sock *ssk, const struct ib_device *dev,
			   u8 flags)
{
	spin_lock_bh(&ssk->lock);
	assign_bit(SDP_P_RINV, &ssk->conn.peer,
		   (flags & SDP_HF_RINV) && sdp_dev_rinv(dev));
	assign_bit(SDP_P_RESIZE, &ssk->conn.peer, flags & SDP_HF_RESIZE);
	assign_bit(SDP_P_SHRINK, &ssk->conn.peer,
		   (flags & (SDP_HF_RESIZE | SDP_HF_SHRINK)) ==
		   (SDP_HF_RESIZE | SDP_HF_SHRINK));
	/* Only iWARP needs pings: elsewhere the probe's ACK proves enough. */
	assign_bit(SDP_P_PING, &ssk->conn.peer,
		   (flags & SDP_HF_PING) && ssk->conn.sdev->iwarp);
	spin_unlock_bh(&ssk->lock);
}

/* Active side, the connection set up: our Hello in @hh. */
static void sdp_cm_hello(struct sdp_sock *ssk, struct rdma_cm_id *id,
			 struct sdp_hello *hh)
{
	memset(hh, 0, sizeof(*hh));
	spin_lock_bh(&ssk->lock);
	sdp_fill_bsdh(ssk, &hh->bsdh, SDP_MID_HELLO, sizeof(*hh), false);
	spin_unlock_bh(&ssk->lock);
	hh->version = SDP_VERSION;
	hh->ipv = sdp_ipv(id);
	hh->flags = sdp_hello_flags(id->device) | sdp_rsm_hello_flag(ssk);
	hh->max_adverts = 1;
	hh->desremrcvsz = cpu_to_be32(SDP_BUF_SIZE);
	hh->localrcvsz = cpu_to_be32(ssk->conn.rx_size);
	hh->port = sdp_addr_port((struct sockaddr *)&id->route.addr.src_addr);
}

/* Active side, ROUTE_RESOLVED, the connection set up: send the Hello. */
static int sdp_cm_connect(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct rdma_conn_param param;
	struct sdp_hello hh;

	sdp_cm_hello(ssk, id, &hh);
	sdp_conn_param(&param, &hh, sizeof(hh), id->device, NULL);
	return rdma_connect_locked(id, &param);
}

/* The connection could not be made (@err < 0); tell connect(), poll(). */
static void sdp_connect_failed(struct sdp_sock *ssk, int err)
{
	sdp_abort(ssk, SDP_ABORT_REASON_NONE, err);
}

/*
 * ... for @why, which TCP may get past: a connect() goes on over TCP if
 * the policy allows (sdp_fallback.c).  lock_sock() held.
 */
void sdp_connect_failed_fb(struct sdp_sock *ssk, int err,
			   enum sdp_fallback_reason why)
{
	if (!ssk->parent && ssk->sk.sk_state == TCP_SYN_SENT &&
	    sdp_fb_enabled(ssk) && !sdp_fb_connect(ssk, why))
		return;
	sdp_connect_failed(ssk, err);
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

	switch (sdp_hello_ack_check(ha, ev->param.conn.private_data_len)) {
	case SDP_HELLO_OK:
		break;
	case SDP_HELLO_BAD:
		sdp_warn_peer(ssk, "bad HelloAck; aborting\n");
		return false;
	case SDP_HELLO_BAD_BUFS:
		sdp_warn_peer(ssk, "HelloAck with %u-byte buffers, %u credits; aborting\n",
			      be32_to_cpu(ha->actrcvsz),
			      be16_to_cpu(ha->bsdh.bufs));
		return false;
	}
	if (!sdp_rsm_hello_ack(ssk, ha, ev->param.conn.private_data_len)) {
		sdp_warn_peer(ssk, "HelloAck with a bad resume extension; aborting\n");
		return false;
	}
	ssk->conn.tx_max = sdp_peer_tx_max(be32_to_cpu(ha->actrcvsz));
	ssk->conn.tx_credits = be16_to_cpu(ha->bsdh.bufs);
	sdp_peer_flags(ssk, ssk->id->device, ha->flags);
	return true;
}

/*
 * A passive socket left its listener before accept(): take it off the
 * listener's lists if it is still there.  Returns true if it was, in
 * which case the caller owns the socket's first reference and the
 * listener reference.  lock_sock(child) held.
 */
bool sdp_child_unlink(struct sdp_sock *child)
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
	struct {
		struct sdp_hello_ack ha;
		struct sdp_hello_ack_resume x;
	} __packed pd = {};
	struct sdp_hello_ack *ha = &pd.ha;
	u8 len = sizeof(*ha);
	struct sdp_sock *child;
	struct sock *csk;
	int err;

	lock_sock(lsk);
	if (lsk->sk_state != TCP_LISTEN)
		goto reject;
	/* What the host's firewall would not let in as TCP, stays out. */
	if (!sdp_filter_request(sock_net(lsk), id))
		goto reject;
	if (sk_acceptq_is_full(lsk)) {
		SDP_INC_STATS(sock_net(lsk), SDP_MIB_LISTEN_OVERFLOWS);
		net_dbg_ratelimited("accept queue full, refusing %pISpc\n",
				    &id->route.addr.dst_addr);
		goto reject;
	}
	switch (sdp_hello_check(hh, ev->param.conn.private_data_len)) {
	case SDP_HELLO_OK:
		break;
	case SDP_HELLO_BAD:
		net_warn_ratelimited("%pISpc: bad Hello, refusing\n",
				     &id->route.addr.dst_addr);
		goto reject;
	case SDP_HELLO_BAD_BUFS:
		net_warn_ratelimited("%pISpc: Hello with %u-byte buffers, %u credits; refusing\n",
				     &id->route.addr.dst_addr,
				     be32_to_cpu(hh->localrcvsz),
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
	set_bit(SDP_O_BOUND, &child->opts);
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
		err = sdp_conn_setup(child, id, true,
				     hh->flags & SDP_HF_RESIZE);
	}
	release_sock(csk);
	if (err)
		goto err_child;
	child->conn.tx_max = sdp_peer_tx_max(be32_to_cpu(hh->localrcvsz));
	child->conn.tx_credits = be16_to_cpu(hh->bsdh.bufs);
	/*
	 * iWARP: MPA lets the responder send only once the initiator's
	 * first message has arrived (RFC 5044, 7.1.2).  Until then the
	 * initiator may still be taking in the MPA reply, and a message of
	 * ours right behind it makes it fail the connection (siw: a
	 * CONNECT_ERROR).  So no credits until that first Send, which the
	 * initiator posts at once (sdp_cm_speak_first(), sdp_rx_rtr()).
	 */
	if (child->conn.sdev->iwarp) {
		child->conn.rtr_credits = child->conn.tx_credits;
		child->conn.tx_credits = 0;
		set_bit(SDP_C_RTR_WAIT, &child->conn.flags);
	}
	sdp_peer_flags(child, id->device, hh->flags);

	ha->flags = sdp_hello_flags(id->device);
	if (sdp_rsm_offer(child, hh->flags, &pd.x)) {
		ha->flags |= SDP_HF_RESUME;
		len = sizeof(pd);
	}
	spin_lock_bh(&child->lock);
	sdp_fill_bsdh(child, &ha->bsdh, SDP_MID_HELLO_ACK, len, false);
	spin_unlock_bh(&child->lock);
	ha->version = SDP_VERSION;
	ha->ipv = sdp_ipv(id);
	ha->max_adverts = 1;
	ha->actrcvsz = cpu_to_be32(child->conn.rx_size);
	sdp_conn_param(&param, &pd, len, id->device, &ev->param.conn);
	err = rdma_accept(id, &param);
	memzero_explicit(&pd, sizeof(pd));	/* the secret */
	if (err)
		goto err_conn;

	spin_lock_bh(&child->lock);
	sdp_set_state(csk, TCP_SYN_RECV);
	/*
	 * The iWARP CM holds the QP from the accept on, and soft-iWARP's
	 * destroy_qp waits for it to let go (sdp_close_work()).
	 */
	if (child->conn.sdev->iwarp)
		set_bit(SDP_C_IW_QP_HELD, &child->conn.flags);
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

/*
 * ADDR_ERROR: the address has no RDMA device (the device found for it
 * has none, -ENODEV: a plain Ethernet port, say) or could not be
 * resolved (no ARP answer within net.sdp.resolve_timeout_ms, ...).
 */
static void sdp_cm_addr_error(struct sdp_sock *ssk, int status)
{
	sdp_connect_failed_fb(ssk, sdp_resolve_error(status),
			      status == -ENODEV || status == -EADDRNOTAVAIL ?
			      SDP_FB_NO_DEVICE : SDP_FB_ADDR_ERROR);
}

/*
 * ADDR_RESOLVED: on to the route.  RoCE resolves it at once, and fails
 * at once too (no usable MTU, the device gone, ...): a route error.  A
 * socket with SDP_NO_IWARP makes no request over an iWARP device: the
 * iWARP CM's TCP connection would hand it to whatever TCP program
 * listens on the port, as data.
 */
static void sdp_cm_addr_resolved(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	int err;

	if (test_bit(SDP_O_NO_IWARP, &ssk->opts) &&
	    rdma_protocol_iwarp(id->device, id->port_num)) {
		sdp_connect_failed_fb(ssk, -ENETUNREACH, SDP_FB_IWARP);
		return;
	}
	err = rdma_resolve_route(id,
				 sdp_sysctl_resolve_timeout_ms(sock_net(&ssk->sk)));
	if (err)
		sdp_connect_failed_fb(ssk, sdp_resolve_error(err),
				      SDP_FB_ROUTE_ERROR);
}

/*
 * rdma_connect_locked() failed with @err.  Over iWARP the CM opens the
 * TCP connection that carries the request there and then (soft-iWARP's
 * siw_connect() connects synchronously): its refusal is the peer's
 * answer, as a REJ would be, its timeout an unanswered request.  Any
 * other failure is the CM's own, unable to make a request of the route
 * it resolved (the path's port or address handle unusable): a route
 * error, whose errno the CM's (EINVAL, often) is not.
 */
static void sdp_cm_request_failed(struct sdp_sock *ssk, int err)
{
	switch (err) {
	case -ECONNREFUSED:
		sdp_connect_failed_fb(ssk, err, SDP_FB_REJECTED);
		break;
	case -ETIMEDOUT:
		sdp_connect_failed_fb(ssk, err, SDP_FB_UNREACHABLE);
		break;
	default:
		sdp_connect_failed_fb(ssk, sdp_resolve_error(err),
				      SDP_FB_ROUTE_ERROR);
	}
}

/*
 * Over iWARP the Hello goes from sdp_wq, not from the CM's handler.  The
 * iWARP CM opens the TCP connection that carries the request within
 * rdma_connect(), and soft-iWARP's siw_connect() does so synchronously:
 * towards an address that does not answer, until TCP's SYN retries run
 * out (two minutes by default).  In the handler that would hold
 * lock_sock(), so every call on the socket, close() too, and the RDMA
 * CM's one ordered workqueue, which delivers every iWARP id's
 * ROUTE_RESOLVED, so every other connect of the host.  Here only this
 * request waits.  SDP_C_IW_CONNECT, from the handler until the request
 * is answered or given up, keeps the id and the QP (sdp_close_work(),
 * sdp_conn_busy()); SDP_C_IW_QP_HELD is set before rdma_connect(), as
 * the iWARP CM's events for the id may come as soon as it returns.
 */
struct sdp_iw_connect {
	struct work_struct work;
	struct sdp_sock *ssk;
	struct rdma_cm_id *id;
	struct sdp_hello hh;
};

/* Is the Hello of @req still wanted?  lock_sock() held. */
static bool sdp_cm_iw_connect_wanted(struct sdp_iw_connect *req)
{
	struct sdp_sock *ssk = req->ssk;

	sock_owned_by_me(&ssk->sk);
	return ssk->id == req->id && ssk->sk.sk_state == TCP_SYN_SENT &&
	       !test_bit(SDP_C_ABORT, &ssk->conn.flags);
}

/* rdma_connect() answered @err (or was not made, @made false). */
static void sdp_cm_iw_connect_done(struct sdp_iw_connect *req, bool made,
				   int err)
{
	struct sdp_sock *ssk = req->ssk;

	lock_sock(&ssk->sk);
	spin_lock_bh(&ssk->lock);
	clear_bit(SDP_C_IW_CONNECT, &ssk->conn.flags);
	/* A failed rdma_connect() gave the QP back; no event will say so. */
	if (made && err)
		clear_bit(SDP_C_IW_QP_HELD, &ssk->conn.flags);
	spin_unlock_bh(&ssk->lock);
	if (made && err && sdp_cm_iw_connect_wanted(req))
		sdp_cm_request_failed(ssk, err);
	/* A teardown, or a connect() again, waited for the request. */
	sdp_queue_work(ssk);
	sdp_sock_wake(ssk, TASK_NORMAL);
	release_sock(&ssk->sk);
}

static void sdp_cm_iw_connect_work(struct work_struct *work)
{
	struct sdp_iw_connect *req = container_of(work, struct sdp_iw_connect,
						  work);
	struct sdp_sock *ssk = req->ssk;
	struct rdma_conn_param param;
	bool made;
	int err = 0;

	lock_sock(&ssk->sk);
	made = sdp_cm_iw_connect_wanted(req);
	if (made) {
		spin_lock_bh(&ssk->lock);
		set_bit(SDP_C_IW_QP_HELD, &ssk->conn.flags);
		spin_unlock_bh(&ssk->lock);
	}
	release_sock(&ssk->sk);
	if (made) {
		sdp_conn_param(&param, &req->hh, sizeof(req->hh),
			       req->id->device, NULL);
		err = rdma_connect(req->id, &param);
	}
	sdp_cm_iw_connect_done(req, made, err);
	sock_put(&ssk->sk);	/* the request's reference */
	kfree(req);
}

/* Over iWARP: the Hello, sent from sdp_wq.  lock_sock() held. */
static int sdp_cm_iw_connect(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	struct sdp_iw_connect *req;

	req = kmalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	INIT_WORK(&req->work, sdp_cm_iw_connect_work);
	req->ssk = ssk;
	req->id = id;
	sdp_cm_hello(ssk, id, &req->hh);
	spin_lock_bh(&ssk->lock);
	set_bit(SDP_C_IW_CONNECT, &ssk->conn.flags);
	spin_unlock_bh(&ssk->lock);
	sock_hold(&ssk->sk);	/* the request's reference */
	queue_work(sdp_wq, &req->work);
	return 0;
}

/* ROUTE_RESOLVED: the device and the local address are known; Hello. */
static void sdp_cm_route_resolved(struct sdp_sock *ssk, struct rdma_cm_id *id)
{
	int err;

	ssk->saddr = id->route.addr.src_addr;
	set_bit(SDP_O_BOUND, &ssk->opts);
	err = sdp_conn_setup(ssk, id, false, true);
	if (err) {
		sdp_connect_failed(ssk, err);
		return;
	}
	if (ssk->conn.sdev->iwarp) {
		err = sdp_cm_iw_connect(ssk, id);
		if (err)
			sdp_connect_failed(ssk, err);
		return;
	}
	err = sdp_cm_connect(ssk, id);
	if (err)
		sdp_cm_request_failed(ssk, err);
}

/*
 * Does the CM's @event end the iWARP CM's hold on the QP
 * (SDP_C_IW_QP_HELD)?  iw_cm lets go of it before it reports a failed
 * connect (cm_conn_rep_handler()) or the connection's close
 * (cm_close_handler()); the device's removal ends it too.  Not
 * ESTABLISHED: the CM keeps the QP for the connection's life.
 */
static bool sdp_cm_event_frees_qp(enum rdma_cm_event_type event)
{
	switch (event) {
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return true;
	default:
		return false;
	}
}

/*
 * The iWARP CM has let go of the QP: a teardown that waited for that
 * (sdp_close_work()) may go on.  lock_sock() held.
 */
static void sdp_cm_qp_freed(struct sdp_sock *ssk)
{
	bool was;

	spin_lock_bh(&ssk->lock);
	was = test_and_clear_bit(SDP_C_IW_QP_HELD, &ssk->conn.flags);
	spin_unlock_bh(&ssk->lock);
	if (!was)
		return;
	sdp_queue_work(ssk);
	/* A connect() again may wait for it (sdp_conn_quiesce()). */
	sdp_sock_wake(ssk, TASK_NORMAL);
}

/*
 * REJECTED, CONNECT_ERROR: the connection cannot be made (or, after our
 * RTU, is reset).  A passive socket still on its listener's lists leaves
 * them; the listener's and its own reference are then the caller's to
 * drop (*@parent).
 */
static void sdp_cm_rejected(struct sdp_sock *ssk, struct sock **parent)
{
	if (test_bit(SDP_C_ESTABLISHED, &ssk->conn.flags)) {
		/*
		 * A REJ after our RTU: the passive side dropped its half
		 * of the connection before the RTU reached it (its
		 * listener closed).  What TCP's RST is to an established
		 * socket: a reset.
		 */
		sdp_abort(ssk, SDP_ABORT_REASON_CM_DISCONNECT, -ECONNRESET);
		return;
	}
	if (ssk->parent && sdp_child_unlink(ssk)) {
		*parent = ssk->parent;
		ssk->parent = NULL;
		sock_set_flag(&ssk->sk, SOCK_DEAD);
	}
	sdp_connect_failed_fb(ssk, -ECONNREFUSED, SDP_FB_REJECTED);
}

/* Passive: the peer's RTU came.  Hand it to accept(). */
static void sdp_cm_child_established(struct sdp_sock *ssk)
{
	spin_lock_bh(&ssk->lock);
	set_bit(SDP_C_ESTABLISHED, &ssk->conn.flags);
	sdp_set_state(&ssk->sk, TCP_ESTABLISHED);
	spin_unlock_bh(&ssk->lock);
	sdp_half_open_done(ssk);
	/* Early data may have asked for all of it before the RTU. */
	sdp_rx_grow(ssk, test_and_clear_bit(SDP_D_RX_GROW, &ssk->conn.deferred) ?
			 ssk->conn.rx_count :
			 sdp_sysctl_rx_init_bufs(sock_net(&ssk->sk)));
	if (ssk->parent)
		sdp_child_established(ssk);
}

/*
 * The active side of an iWARP connection sends at once, since the
 * passive side may not send before it (sdp_cm_request()): an empty Send,
 * MPA's "ready to receive" (sdp_post_rtr()).  ssk->lock held.
 */
static void sdp_cm_speak_first(struct sdp_sock *ssk)
{
	int err;

	lockdep_assert_held(&ssk->lock);
	if (!ssk->conn.sdev->iwarp)
		return;
	err = sdp_post_rtr(ssk);
	if (!err)
		return;
	/* Without it the peer never sends: no connection. */
	sdp_warn_peer(ssk, "cannot send the iWARP peer its first Send (%d, %d credits); aborting\n",
		      err, ssk->conn.tx_credits);
	__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
}

/* ESTABLISHED, either side. */
static void sdp_cm_established(struct sdp_sock *ssk, struct rdma_cm_id *id,
			       struct rdma_cm_event *ev)
{
	struct sock *sk = &ssk->sk;

	if (test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		/*
		 * Aborted while the CM was still waiting for the peer's
		 * RTU: the DREQ could not go then, now it can.
		 */
		rdma_disconnect(id);
		return;
	}
	if (sk->sk_state == TCP_SYN_RECV) {
		sdp_cm_child_established(ssk);
		return;
	}
	if (sk->sk_state != TCP_SYN_SENT)
		return;
	if (!sdp_hello_ack_ok(ssk, ev)) {
		sdp_connect_failed(ssk, -ECONNREFUSED);
		return;
	}
	spin_lock_bh(&ssk->lock);
	set_bit(SDP_C_ESTABLISHED, &ssk->conn.flags);
	sdp_set_state(sk, TCP_ESTABLISHED);
	sdp_cm_speak_first(ssk);
	spin_unlock_bh(&ssk->lock);
	sk->sk_state_change(sk);
	sk->sk_write_space(sk);
}

/*
 * DEVICE_REMOVAL: abort.  Without a QP nothing else uses the id: the CM
 * destroys it when we return 1, and the id's reference is the caller's
 * to drop (*@put_id).
 */
static int sdp_cm_device_removal(struct sdp_sock *ssk, bool *put_id)
{
	sdp_abort(ssk, SDP_ABORT_REASON_DEVICE_REMOVAL, -ENETDOWN);
	if (ssk->conn.qp)
		return 0;
	ssk->id = NULL;
	*put_id = true;
	return 1;
}

/*
 * The CM's events for every id of ours, one at a time per id, in process
 * context: one function per event.  A returned 1 makes the CM destroy
 * @id.
 */
int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct sdp_sock *ssk = id->context;
	struct sock *sk = &ssk->sk;
	struct sock *parent = NULL;
	bool put_id = false;
	int ret = 0;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return sdp_cm_request(ssk, id, ev);

	sock_hold(sk);
	lock_sock(sk);
	if (ssk->id != id)	/* an id we already gave up */
		goto out;
	if (sdp_cm_event_frees_qp(ev->event))
		sdp_cm_qp_freed(ssk);

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		sdp_cm_addr_resolved(ssk, id);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		sdp_cm_route_resolved(ssk, id);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
		sdp_cm_addr_error(ssk, ev->status);
		break;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		sdp_connect_failed_fb(ssk, sdp_resolve_error(ev->status),
				      SDP_FB_ROUTE_ERROR);
		break;
	case RDMA_CM_EVENT_UNREACHABLE:
		sdp_connect_failed_fb(ssk, -ETIMEDOUT, SDP_FB_UNREACHABLE);
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		sdp_cm_rejected(ssk, &parent);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		sdp_cm_established(ssk, id, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		sdp_close_cm_disconnected(ssk, id);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		ret = sdp_cm_device_removal(ssk, &put_id);
		break;
	default:
		break;
	}
out:
	release_sock(sk);
	if (parent) {
		sock_put(parent);	/* the child's listener reference */
		sock_put(sk);		/* its own, which the queue held */
	}
	if (put_id)
		sock_put(sk);	/* the id's reference */
	sock_put(sk);
	return ret;
}
