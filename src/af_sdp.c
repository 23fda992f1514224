// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- socket layer and module entry points.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Implementation notes
 * ====================
 *
 * Files: af_sdp.c (this file) is the socket family: socket(), the
 * proto_ops, module init/exit.  sdp_cm.c runs connections through the
 * RDMA CM (binding, Hello/HelloAck, the CM's events); sdp_conn.c sets up
 * and tears down a connection's PD, CQ, QP and rings; sdp_close.c is the
 * close and abort state machine (shutdown, close, DisConn, AbortConn, the
 * teardown work); sdp_tx.c and sdp_rx.c are the data path; sdp_cq.c has
 * the message buffers, the completion queue and busy polling; sdp_dev.c
 * tracks RDMA devices;
 * sdp_diag.c lists sockets in /proc/net/sdp and over sock_diag;
 * sdp_sockopt.c has the socket options (SOL_SDP, and the TCP options
 * programs set, each with its meaning on SDP);
 * sdp_stats.c has the counters (listed once each: sdp_mibs.h for the
 * namespace's, sdp_sock_counters.h for a socket's) and tracepoints,
 * sdp_net.h a namespace's state, sdp_sysctl.c the /proc/sys/net/sdp
 * tunables; sdp_zc_*.c send large writes zero-copy
 * (SrcAvail, RDMA Read); sdp_mem.c accounts and bounds the memory that
 * connections hold; sdp_keepalive.c finds dead peers (keepalive and
 * persist probes, TCP_USER_TIMEOUT); sdp_msgzc.c has SO_ZEROCOPY and
 * MSG_ZEROCOPY's notifications on the error queue (sk_error_queue, under
 * its own lock; only sendmsg() adds to it, under tx_mutex);
 * sdp_fallback.c carries a connect() that SDP cannot make on over a
 * TCP socket (sdp_fb::sock), to which every call then goes.  Wire
 * formats are in sdp_proto.h, the wire rules
 * (message checks, credits, mseq) as pure functions in sdp_wire.h, kernel
 * interface differences in sdp_compat.h.
 *
 * Lifecycle and references of a struct sock:
 *   - the socket's own reference (sk_alloc()), owned by the struct socket;
 *     for a passive socket before accept() by the listener's queue;
 *     dropped by sdp_release() (or by whoever takes it off the queue);
 *   - one reference per RDMA CM id (sdp_cm_create_id(), or taken for a
 *     passive id), dropped after rdma_destroy_id(): in sdp_work(), in
 *     sdp_release(), or by the background destroy of an id a socket gave
 *     up to connect again (sdp_conn_renew());
 *   - one per queued sdp_work (a delayed work: it may wait for an
 *     AbortConn to go out) / timeout work, dropped when it runs;
 *   - one while the probe timer (sk->sk_timer, sdp_keepalive.c) is
 *     pending, dropped when it runs or sdp_conn_detach() stops it;
 *   - a passive socket holds one on its listener until accept() or abort.
 *   The socket leaves the diagnostics list in its destructor.
 *
 * Module references: proto_ops::owner pins the module while any struct
 * socket exists, struct proto::owner while any struct sock does (so also
 * while closed sockets finish their teardown).
 *
 * Locks, outermost first:
 *   sdp_sock::tx_mutex  one sendmsg() at a time, held across its waits,
 *                so that a zero-copy send is not interleaved with
 *                another thread's data (sdp_zc_tx.c);
 *   lock_sock()  serialises user calls, the CM handler and sdp_work();
 *   sdp_conn::poll_lock (spinlock, _bh)  held while CQ completions are
 *                handled (softirq, or a busy-polling reader) and the CQ
 *                re-armed, and while sdp_cq_destroy() lets the CQ go;
 *   sdp_sock::lock (spinlock, _bh)  state, flags, rings, credits, queues:
 *                shared with the completion handlers;
 *   a listener's sdp_sock::lock nests inside a child's lock_sock();
 *   sdp_sock_list_lock -> sdp_sock::lock (device removal scan);
 *   sdp_dev_lock is a leaf;
 *   a fallen-back socket's lock_sock() -> its TCP socket's lock_sock();
 *   the TCP socket's callbacks: its sk_callback_lock -> sdp_sock::lock.
 * The TCP socket of a fallback (sdp_fb::sock) lives until sdp_release():
 * a call that read it may use it without a reference.
 * rdma_destroy_id() waits for the id's handler, which takes lock_sock(),
 * so it is only called without lock_sock() held.
 */
#include <linux/in.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/poll.h>
#include <asm/ioctls.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/sock.h>
#include <uapi/linux/sdp.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_cm.h"
#include "sdp_compat.h"
#include "sdp_conn.h"
#include "sdp_dev.h"
#include "sdp_diag.h"
#include "sdp_fallback.h"
#include "sdp_ka.h"
#include "sdp_mem.h"
#include "sdp_msgzc.h"
#include "sdp_net.h"
#include "sdp_resume.h"
#include "sdp_rx.h"
#include "sdp_sockopt.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_zc.h"
#include "sdp_fault.h"

int sdp_family = AF_INET_SDP;
module_param_named(family, sdp_family, int, 0444);
MODULE_PARM_DESC(family,
		 "address family number to register (default 27, range 1..AF_MAX-1; must be free)");

struct workqueue_struct *sdp_wq;

static struct proto sdp_proto = {
	.name = "SDP",
	.owner = THIS_MODULE,
	.obj_size = sizeof(struct sdp_sock),
	.keepalive = sdp_ka_set,
};

static const struct proto_ops sdp_stream_ops;

/* sk_state changes under sdp_sock::lock (readers use READ_ONCE()). */
void sdp_set_state(struct sock *sk, int state)
{
	lockdep_assert_held(&sdp_sk(sk)->lock);
	sdp_stat_state(sk, sk->sk_state, state);
	WRITE_ONCE(sk->sk_state, state);
	if (state == TCP_ESTABLISHED)
		sdp_ka_established(sdp_sk(sk));
}

static void sdp_sock_destruct(struct sock *sk)
{
	/* MSG_ZEROCOPY notifications nobody read (sdp_msgzc.c). */
	skb_queue_purge(&sk->sk_error_queue);
	sdp_half_open_done(sdp_sk(sk));
	sdp_rsm_forget(sdp_sk(sk));
	sdp_sock_unlink(sdp_sk(sk));
	mutex_destroy(&sdp_sk(sk)->tx_mutex);
}

/* Allocate a socket; a passive one (@parent set) inherits its options. */
struct sock *sdp_sock_alloc(struct net *net, struct sock *parent, int kern)
{
	struct sdp_sock *ssk;
	struct sock *sk;

	sk = sk_alloc(net, sdp_family, GFP_KERNEL, &sdp_proto, kern);
	if (!sk)
		return NULL;
	sock_init_data(NULL, sk);
	sk->sk_type = SOCK_STREAM;
	sk->sk_protocol = IPPROTO_TCP;
	sk->sk_state = TCP_CLOSE;
	sk->sk_destruct = sdp_sock_destruct;
	ssk = sdp_sk(sk);
	spin_lock_init(&ssk->lock);
	sdp_conn_reset(ssk);
	INIT_LIST_HEAD(&ssk->accept_queue);
	INIT_LIST_HEAD(&ssk->pending);
	INIT_LIST_HEAD(&ssk->child_node);
	INIT_DELAYED_WORK(&ssk->work, sdp_work);
	INIT_DELAYED_WORK(&ssk->timeout_work, sdp_timeout_work);
	mutex_init(&ssk->tx_mutex);
	sdp_ka_init(ssk);
	ssk->zc_thresh = sdp_sysctl_zcopy_thresh(net);
#if IS_ENABLED(CONFIG_IPV6)
	ssk->tcp.v6only = net->ipv6.sysctl.bindv6only;
#endif
	if (parent) {
		struct sdp_sock *pssk = sdp_sk(parent);

		sk->sk_rcvbuf = parent->sk_rcvbuf;
		sk->sk_sndbuf = parent->sk_sndbuf;
		sk->sk_userlocks = parent->sk_userlocks;
		sk->sk_rcvtimeo = parent->sk_rcvtimeo;
		sk->sk_sndtimeo = parent->sk_sndtimeo;
		sk->sk_lingertime = parent->sk_lingertime;
		ssk->zc_thresh = pssk->zc_thresh;
		sock_copy_flags(sk, parent);
		sock_reset_flag(sk, SOCK_DEAD);
		sdp_memcg_inherit(sk, parent);
		ssk->opts = pssk->opts & (BIT(SDP_O_V6) | BIT(SDP_O_NODELAY) |
					  BIT(SDP_O_CORK));
		ssk->tcp = pssk->tcp;
		sk->sk_uid = parent->sk_uid;
	}
	sdp_sock_link(ssk);
	return sk;
}

/*
 * Addresses: sockaddr_in, sockaddr_in6 (v4-mapped ones are used as IPv4)
 * and, for OFED-era programs, sockaddr_in with sin_family AF_INET_SDP.
 * Returns 0 and sets *@v6 if the caller used AF_INET6.
 */
static int sdp_addr_in(const struct sockaddr *uaddr, int len,
		       struct sockaddr_storage *ss, bool *v6)
{
	if (len < (int)sizeof(uaddr->sa_family))
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	switch (uaddr->sa_family) {
	case AF_INET:
	case AF_INET_SDP: {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		if (len < (int)sizeof(struct sockaddr_in))
			return -EINVAL;
		memcpy(sin, uaddr, sizeof(*sin));
		sin->sin_family = AF_INET;
		*v6 = false;
		return 0;
	}
	case AF_INET6: {
		const struct sockaddr_in6 *u6 = (const struct sockaddr_in6 *)uaddr;
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		if (len < SIN6_LEN_RFC2133)
			return -EINVAL;
		*v6 = true;
		if (ipv6_addr_v4mapped(&u6->sin6_addr)) {
			struct sockaddr_in *sin = (struct sockaddr_in *)ss;

			sin->sin_family = AF_INET;
			sin->sin_port = u6->sin6_port;
			sin->sin_addr.s_addr = u6->sin6_addr.s6_addr32[3];
			return 0;
		}
		memcpy(sin6, u6, min_t(int, len, sizeof(*sin6)));
		return 0;
	}
	default:
		return -EAFNOSUPPORT;
	}
}

/*
 * A loopback address (127.0.0.0/8, ::1): no RDMA device carries it.  The
 * RDMA CM takes one to a device of its choosing, and a connection request
 * made from there fails in ways that differ by provider and kernel (the
 * route found or not; EINVAL from the CM when it was).  Not the CM's to
 * decide, then: connect() treats it as an address without a device.
 */
static bool sdp_addr_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET6)
		return ipv6_addr_loopback(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return ipv4_is_loopback(((const struct sockaddr_in *)ss)->sin_addr.s_addr);
}

/*
 * A socket bound to an address of one family reaches no address of the
 * other, as TCP's: bound to IPv4 (a v4-mapped address, the IPv4 wildcard),
 * an IPv6 destination is EAFNOSUPPORT (ip6_dst_lookup_tail()); bound to a
 * specific IPv6 address, an IPv4 one is ENETUNREACH.  Bound to ::, both
 * are reached.  The RDMA CM would say EINVAL of either.
 */
static int sdp_connect_family(const struct sdp_sock *ssk,
			      const struct sockaddr_storage *dst)
{
	const struct sockaddr_storage *src = &ssk->saddr;

	if (!test_bit(SDP_O_USER_BOUND, &ssk->opts) ||
	    src->ss_family == dst->ss_family)
		return 0;
	if (src->ss_family == AF_INET)
		return -EAFNOSUPPORT;
	if (ipv6_addr_any(&((const struct sockaddr_in6 *)src)->sin6_addr))
		return 0;
	return -ENETUNREACH;
}

static int sdp_ensure_id(struct sdp_sock *ssk)
{
	return ssk->id ? 0 : sdp_cm_create_id(ssk);
}

static int sdp_bind(struct socket *sock, struct sockaddr *uaddr, int len)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sockaddr_storage ss;
	bool v6;
	int err;

	err = sdp_addr_in(uaddr, len, &ss, &v6);
	if (err)
		return err;

	lock_sock(sk);
	err = -EINVAL;
	if (sk->sk_state != TCP_CLOSE || test_bit(SDP_O_USER_PORT, &ssk->opts))
		goto out;
	/* As TCP: an IPv6-only socket has no IPv4 (v4-mapped) address. */
	if (v6 && ss.ss_family == AF_INET && ssk->tcp.v6only)
		goto out;
	/*
	 * Bound, unless only by a connect that failed: TCP gives that port
	 * back when connect() returns, ours goes with the old CM id, which
	 * sdp_work() may not have released yet (sdp_conn_renew() does).  A
	 * connection that was made keeps its port, and what recv() reports
	 * of its end, until connect() starts anew.
	 */
	if (test_bit(SDP_O_BOUND, &ssk->opts) &&
	    !(test_bit(SDP_O_ID_USED, &ssk->opts) &&
	      !test_bit(SDP_O_USER_BOUND, &ssk->opts) &&
	      !test_bit(SDP_C_ESTABLISHED, &ssk->conn.flags)))
		goto out;
	/* After a failed connect: a fresh CM id (the old one is spent). */
	err = test_bit(SDP_O_ID_USED, &ssk->opts) ? sdp_conn_renew(ssk) :
						     sdp_ensure_id(ssk);
	if (err)
		goto out;
	/* Port 0 with fallback on: one TCP has free too. */
	err = sdp_fb_bind_any(ssk, &ss);
	if (!err) {
		assign_bit(SDP_O_V6, &ssk->opts, v6);
		set_bit(SDP_O_BOUND, &ssk->opts);
		set_bit(SDP_O_USER_BOUND, &ssk->opts);
		/* As TCP's SOCK_BINDPORT_LOCK: a port named is the socket's. */
		assign_bit(SDP_O_USER_PORT, &ssk->opts,
			   sdp_addr_port((struct sockaddr *)&ss));
		ssk->saddr = ssk->id->route.addr.src_addr;
	}
out:
	release_sock(sk);
	return err;
}

static int sdp_connect(struct socket *sock, struct sockaddr *uaddr, int len,
		       int flags)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sockaddr_storage ss;
	long timeo;
	bool v6;
	int err;

	err = sdp_addr_in(uaddr, len, &ss, &v6);
	if (err)
		return err;

	lock_sock(sk);
	/*
	 * A new attempt frees the last connection (sdp_conn_renew()): its
	 * zero-copy transfers still ending (another thread's send() or
	 * recv(), a MSG_ZEROCOPY send), and an iWARP CM's answer to its
	 * request, come first.  The state is looked at after that wait,
	 * which releases the socket.
	 */
	if (sock->state == SS_UNCONNECTED && sk->sk_state == TCP_CLOSE) {
		err = sdp_conn_quiesce(sk, sock_sndtimeo(sk, flags & O_NONBLOCK));
		if (err)
			goto out;
	}
	switch (sock->state) {
	case SS_CONNECTED:
		err = -EISCONN;
		goto out;
	case SS_CONNECTING:
		err = -EALREADY;
		break;
	case SS_UNCONNECTED:
		err = -EISCONN;
		if (sk->sk_state != TCP_CLOSE)
			goto out;
		/* As TCP: an IPv6-only socket reaches no IPv4 address. */
		err = -ENETUNREACH;
		if (v6 && ss.ss_family == AF_INET && ssk->tcp.v6only)
			goto out;
		err = sdp_connect_family(ssk, &ss);
		if (err)
			goto out;
		/*
		 * A new attempt (as TCP allows after a failed one): the last
		 * attempt's connection and CM id go first, a port the socket
		 * was bound to stays.
		 */
		/* SDP first again, also after a fallen-back attempt. */
		sdp_fb_reset(ssk);
		err = sdp_conn_renew(ssk);
		if (err == -EADDRINUSE) {
			/*
			 * The last attempt's CM id, destroyed in the
			 * background, may still hold the port the socket
			 * named (a fallen-back attempt ends sooner than its
			 * id): wait for it, once.
			 */
			release_sock(sk);
			flush_workqueue(sdp_wq);
			lock_sock(sk);
			err = -EALREADY;
			if (sock->state != SS_UNCONNECTED ||
			    sk->sk_state != TCP_CLOSE)
				goto out;
			err = sdp_conn_renew(ssk);
		}
		if (err)
			goto out;
		sk->sk_err = 0;
		sk->sk_shutdown = 0;
		if (v6)
			set_bit(SDP_O_V6, &ssk->opts);
		ssk->daddr = ss;
		set_bit(SDP_O_ID_USED, &ssk->opts);
		spin_lock_bh(&ssk->lock);
		sdp_set_state(sk, TCP_SYN_SENT);
		spin_unlock_bh(&ssk->lock);
		/* IP_TOS or IPV6_TCLASS: the route's traffic class. */
		rdma_set_service_type(ssk->id, ss.ss_family == AF_INET6 ?
					       ssk->tcp.tclass : ssk->tcp.tos);
		/* The TCP socket of a fallback is the caller's: made now. */
		sdp_fb_ready(ssk);
		/* A destination that just had no SDP: TCP at once. */
		if (sdp_fb_enabled(ssk) && sdp_fb_cached(sock_net(sk), &ss) &&
		    !sdp_fb_connect(ssk, SDP_FB_CACHED)) {
			sock->state = SS_CONNECTING;
			err = -EINPROGRESS;
			break;
		}
		err = sdp_addr_loopback(&ss) ? -ENODEV :
		      rdma_resolve_addr(ssk->id, NULL, (struct sockaddr *)&ss,
					sdp_sysctl_resolve_timeout_ms(sock_net(sk)));
		if (!err)
			sdp_fb_timeout_arm(ssk);
		/* No RDMA device reaches the address: TCP may. */
		if ((err == -ENODEV || err == -EADDRNOTAVAIL) &&
		    sdp_fb_enabled(ssk) &&
		    !sdp_fb_connect(ssk, SDP_FB_NO_DEVICE))
			err = 0;
		if (err) {
			spin_lock_bh(&ssk->lock);
			sdp_set_state(sk, TCP_CLOSE);
			spin_unlock_bh(&ssk->lock);
			if (err == -ENODEV || err == -EADDRNOTAVAIL)
				err = -ENETUNREACH;
			goto out;
		}
		sock->state = SS_CONNECTING;
		err = -EINPROGRESS;
		break;
	default:
		err = -EINVAL;
		goto out;
	}

	timeo = sock_sndtimeo(sk, flags & O_NONBLOCK);
	/*
	 * As TCP: a nonblocking connect() that started the attempt returns
	 * EINPROGRESS, also when the outcome is known already (a fallback
	 * to TCP whose peer refused at once): poll() and SO_ERROR tell it.
	 */
	if (!timeo && err == -EINPROGRESS)
		goto out;
	if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
		if (!timeo)
			goto out;
		add_wait_queue(sk_sleep(sk), &wait);
		while ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV)) {
			if (signal_pending(current)) {
				err = sock_intr_errno(timeo);
				break;
			}
			if (!timeo)
				break;
			sk_wait_event(sk, &timeo,
				      !((1 << READ_ONCE(sk->sk_state)) &
					(TCPF_SYN_SENT | TCPF_SYN_RECV)),
				      &wait);
		}
		remove_wait_queue(sk_sleep(sk), &wait);
		if ((1 << sk->sk_state) & (TCPF_SYN_SENT | TCPF_SYN_RECV))
			goto out;	/* -EINPROGRESS, -EINTR, -ERESTARTSYS */
	}

	if (sk->sk_state == TCP_CLOSE) {
		err = sock_error(sk) ? : -ECONNABORTED;
		sock->state = SS_UNCONNECTED;
		goto out;
	}
	sock->state = SS_CONNECTED;
	err = 0;
out:
	release_sock(sk);
	return err;
}

static int sdp_listen(struct socket *sock, int backlog)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct rdma_cm_id *spent = NULL;
	struct sockaddr_storage ss;
	int err;

	lock_sock(sk);
	err = -EINVAL;
	if (sock->state != SS_UNCONNECTED)
		goto out;
	if (sk->sk_state == TCP_LISTEN) {
		WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
		sdp_fb_listen(ssk, backlog);
		err = 0;
		goto out;
	}
	if (sk->sk_state != TCP_CLOSE)
		goto out;
	err = sdp_ensure_id(ssk);
	if (err)
		goto out;
	/*
	 * Not bound: the CM would bind to the IPv4 wildcard at a port it
	 * picks; with fallback on, at a port TCP has free too.
	 */
	if (!test_bit(SDP_O_BOUND, &ssk->opts) &&
	    !test_bit(SDP_O_ID_USED, &ssk->opts) && sdp_fb_enabled(ssk)) {
		memset(&ss, 0, sizeof(ss));
		ss.ss_family = AF_INET;
		err = sdp_fb_bind_any(ssk, &ss);
		if (err)
			goto out;
	}
	rdma_set_reuseaddr(ssk->id, sk->sk_reuse != SK_NO_REUSE);
	/* Bound to :: for IPv4 clients too: a second id takes those. */
	err = sdp_cm_listen_v4(ssk, backlog, &spent);
	if (err)
		goto out;
	err = sdp_cm_listen(ssk, ssk->id, backlog);
	if (err) {
		spent = sdp_cm_take_id4(ssk);
		goto out;
	}
	set_bit(SDP_O_BOUND, &ssk->opts);
	ssk->saddr = ssk->id->route.addr.src_addr;
	WRITE_ONCE(sk->sk_max_ack_backlog, backlog);
	sk->sk_ack_backlog = 0;
	spin_lock_bh(&ssk->lock);
	sdp_set_state(sk, TCP_LISTEN);
	spin_unlock_bh(&ssk->lock);
	/* With fallback on, clients without SDP reach it over TCP. */
	sdp_fb_listen(ssk, backlog);
out:
	release_sock(sk);
	sdp_cm_put_id(sk, spent);
	return err;
}

static struct sdp_sock *sdp_accept_dequeue(struct sdp_sock *lssk)
{
	struct sdp_sock *child = NULL;

	spin_lock_bh(&lssk->lock);
	if (!list_empty(&lssk->accept_queue)) {
		child = list_first_entry(&lssk->accept_queue, struct sdp_sock,
					 child_node);
		list_del_init(&child->child_node);
		sk_acceptq_removed(&lssk->sk);
	}
	spin_unlock_bh(&lssk->lock);
	return child;
}

static int sdp_accept(struct socket *sock, struct socket *newsock,
		      SDP_ACCEPT_ARGS)
{
	int flags = SDP_ACCEPT_FLAGS;
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = sock->sk;
	struct sdp_sock *lssk = sdp_sk(sk);
	struct sdp_sock *child;
	struct sock *csk = NULL;
	long timeo;
	int err = 0;

	lock_sock(sk);
	timeo = sock_rcvtimeo(sk, flags & O_NONBLOCK);
	for (;;) {
		if (sk->sk_state != TCP_LISTEN) {
			err = -EINVAL;
			break;
		}
		child = sdp_accept_dequeue(lssk);
		if (child)
			break;
		/* A client that came over TCP (fallback on). */
		csk = sdp_fb_accept(lssk);
		if (IS_ERR(csk)) {
			err = PTR_ERR(csk);
			break;
		}
		if (csk)
			break;
		err = sdp_wait_check(timeo);
		if (err)
			break;
		add_wait_queue_exclusive(sk_sleep(sk), &wait);
		sk_wait_event(sk, &timeo,
			      !list_empty(&lssk->accept_queue) ||
			      sdp_fb_listen_pending(lssk) ||
			      READ_ONCE(sk->sk_state) != TCP_LISTEN, &wait);
		remove_wait_queue(sk_sleep(sk), &wait);
	}
	release_sock(sk);
	if (err)
		return err;
	if (csk) {
		lock_sock(csk);
		sock_graft(csk, newsock);
		newsock->state = SS_CONNECTED;
		sdp_sock_custom_sockopt(newsock);
		release_sock(csk);
		return 0;
	}

	csk = &child->sk;
	lock_sock(csk);
	child->parent = NULL;
	sock_graft(csk, newsock);
	newsock->state = SS_CONNECTED;
	sdp_sock_custom_sockopt(newsock);	/* SO_ZEROCOPY */
	release_sock(csk);
	sock_put(sk);		/* the child's reference on its listener */
	return 0;
}

/* Present @sa the way the user addresses the socket (v4-mapped for v6). */
static int sdp_addr_out(const struct sdp_sock *ssk,
			const struct sockaddr_storage *sa,
			struct sockaddr *uaddr)
{
	if (sa->ss_family == AF_INET6) {
		memcpy(uaddr, sa, sizeof(struct sockaddr_in6));
		return sizeof(struct sockaddr_in6);
	}
	if (test_bit(SDP_O_V6, &ssk->opts)) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;

		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = sin->sin_port;
		if (sa->ss_family == AF_INET)
			ipv6_addr_set_v4mapped(sin->sin_addr.s_addr,
					       &sin6->sin6_addr);
		return sizeof(*sin6);
	}
	memset(uaddr, 0, sizeof(struct sockaddr_in));
	if (sa->ss_family == AF_INET)
		memcpy(uaddr, sa, sizeof(struct sockaddr_in));
	uaddr->sa_family = AF_INET;
	return sizeof(struct sockaddr_in);
}

static int sdp_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int len;

	/*
	 * As inet_getname(): the peer of a connection that is closed or not
	 * yet made is unknown, except to accept() (@peer 2), which wants
	 * it for a connection reset before it was accepted (it fails with
	 * ECONNABORTED otherwise).
	 */
	if (sdp_fb(ssk)) {
		struct sockaddr_storage ss;

		len = sdp_fb_getname(ssk, (struct sockaddr *)&ss, peer);
		return len < 0 ? len : sdp_addr_out(ssk, &ss, uaddr);
	}
	lock_sock(sk);
	if (peer && (!ssk->daddr.ss_family ||
		     (peer == 1 && !sdp_connected(sk)))) {
		release_sock(sk);
		return -ENOTCONN;
	}
	len = sdp_addr_out(ssk, peer ? &ssk->daddr : &ssk->saddr, uaddr);
	release_sock(sk);
	return len;
}

static __poll_t sdp_poll(struct file *file, struct socket *sock,
			 poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	__poll_t mask = 0;
	int state, shutdown, err;

	sock_poll_wait(file, sock, wait);
	if (sdp_fb(ssk))
		return sdp_fb_poll(ssk, file);
	err = READ_ONCE(sk->sk_err);
	state = READ_ONCE(sk->sk_state);
	if (state == TCP_LISTEN)
		return list_empty(&ssk->accept_queue) &&
		       !sdp_fb_listen_pending(ssk) ? 0 : EPOLLIN | EPOLLRDNORM;

	shutdown = READ_ONCE(sk->sk_shutdown);
	/*
	 * An error comes with the abort that sets it, all under
	 * sdp_sock::lock (__sdp_abort()): one seen before its CLOSE is
	 * looked at again under the lock, so that POLLERR never comes
	 * without the POLLHUP of the same abort.
	 */
	if (err && state != TCP_CLOSE) {
		spin_lock_bh(&ssk->lock);
		state = sk->sk_state;
		shutdown = sk->sk_shutdown;
		spin_unlock_bh(&ssk->lock);
	}
	if (shutdown == SHUTDOWN_MASK || state == TCP_CLOSE)
		mask |= EPOLLHUP;
	if (shutdown & RCV_SHUTDOWN)
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP;
	if (state != TCP_SYN_SENT && state != TCP_SYN_RECV) {
		/* Readable from SO_RCVLOWAT bytes on, as TCP. */
		if (READ_ONCE(ssk->conn.rx_bytes) >=
		    max_t(int, READ_ONCE(sk->sk_rcvlowat), 1))
			mask |= EPOLLIN | EPOLLRDNORM;
		if (shutdown & SEND_SHUTDOWN || state == TCP_CLOSE) {
			mask |= EPOLLOUT | EPOLLWRNORM;
		} else if (sdp_tx_writable(ssk)) {
			mask |= EPOLLOUT | EPOLLWRNORM;
		} else {
			sk_set_bit(SOCKWQ_ASYNC_NOSPACE, sk);
			set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
			/* Race with a completion that just freed room. */
			smp_mb__after_atomic();
			if (sdp_tx_writable(ssk))
				mask |= EPOLLOUT | EPOLLWRNORM;
		}
	}
	/* Urgent data not read yet (sdp_rx.c). */
	if (READ_ONCE(ssk->conn.urg_state) == SDP_URG_VALID)
		mask |= EPOLLPRI;
	if (err || !skb_queue_empty_lockless(&sk->sk_error_queue))
		mask |= EPOLLERR;
	return mask;
}

static int sdp_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int answ;

	if (sdp_fb(ssk))
		return sdp_fb_ioctl(ssk, cmd, arg);
	switch (cmd) {
	case SIOCINQ:
		if (sk->sk_state == TCP_LISTEN)
			return -EINVAL;
		answ = READ_ONCE(ssk->conn.rx_bytes);
		break;
	case SIOCOUTQ:
		if (sk->sk_state == TCP_LISTEN)
			return -EINVAL;
		/*
		 * Buffered bytes, those of our advertisement not yet read,
		 * and those of a MSG_ZEROCOPY send not yet in either
		 */
		spin_lock_bh(&ssk->lock);
		answ = ssk->conn.tx_bytes + ssk->conn.zc_tx.len - ssk->conn.zc_tx.acked +
		       sdp_zc_unsent(ssk);
		spin_unlock_bh(&ssk->lock);
		break;
	case SIOCOUTQNSD:
		if (sk->sk_state == TCP_LISTEN)
			return -EINVAL;
		spin_lock_bh(&ssk->lock);
		answ = sdp_tx_notsent(ssk);
		spin_unlock_bh(&ssk->lock);
		break;
	case SIOCATMARK:
		spin_lock_bh(&ssk->lock);
		answ = ssk->conn.urg_state != SDP_URG_NONE && !ssk->conn.urg_ahead;
		spin_unlock_bh(&ssk->lock);
		break;
	default:
		return -ENOIOCTLCMD;
	}
	return put_user(answ, (int __user *)arg);
}

/* Payload bytes the peer has read zero-copy from our senders' pages. */
static u64 sdp_zcopy_tx_bytes(struct sdp_sock *ssk)
{
	return sdp_sk_counter(&ssk->stats, ZCOPY_TX_BYTES);
}

static int sdp_sendmsg_spliced(struct socket *sock, struct msghdr *msg,
			       size_t len, bool spliced)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sk_buff *zc_note;
	u64 zc_bytes;
	int ret;

	if (sdp_fb(ssk))
		return sdp_fb_sendmsg(ssk, msg, len);
	/* One sender at a time (sdp_sock::tx_mutex); never wait if told not to. */
	if (msg->msg_flags & MSG_DONTWAIT) {
		if (!mutex_trylock(&ssk->tx_mutex))
			return -EAGAIN;
	} else if (mutex_lock_interruptible(&ssk->tx_mutex)) {
		return sock_intr_errno(sock_sndtimeo(sk, false));
	}
	ret = sdp_msgzc_start(sk, msg, &zc_note);
	if (ret)
		goto out;
	lock_sock(sk);
	zc_bytes = sdp_zcopy_tx_bytes(ssk);
	ret = sdp_sendmsg_locked(sk, msg, len, &zc_note, spliced);
	zc_bytes = sdp_zcopy_tx_bytes(ssk) - zc_bytes;
	release_sock(sk);
	sdp_msgzc_end(sk, zc_note, ret, ret > 0 && zc_bytes < (u64)ret);
out:
	mutex_unlock(&ssk->tx_mutex);
	/* It fell back to TCP while it waited for the connection. */
	if (ret == -ENOTCONN && sdp_fb(ssk))
		return sdp_fb_sendmsg(ssk, msg, len);
	return ret;
}

static int sdp_sendmsg(struct socket *sock, struct msghdr *msg, size_t len)
{
	return sdp_sendmsg_spliced(sock, msg, len, sdp_msg_spliced(msg));
}

#ifdef SDP_HAVE_SENDPAGE
/*
 * Before Linux 6.5, sendfile() and splice() hand the socket one page at
 * a time, flagged MSG_SENDPAGE_NOTLAST while more of the pipe follows;
 * from 6.5 on, sendmsg() with MSG_SPLICE_PAGES does.
 */
static ssize_t sdp_sendpage(struct socket *sock, struct page *page,
			    int offset, size_t size, int flags)
{
	struct msghdr msg = {};
	struct bio_vec bvec;

	if (flags & MSG_SENDPAGE_NOTLAST)
		flags |= MSG_MORE;
	msg.msg_flags = flags & ~MSG_SENDPAGE_NOTLAST;
	bvec_set_page(&bvec, page, size, offset);
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, &bvec, 1, size);
	return sdp_sendmsg_spliced(sock, &msg, size, true);
}
#endif

static int sdp_recvmsg(struct socket *sock, struct msghdr *msg, size_t len,
		       int flags)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	int ret;

	if (sdp_fb(ssk))
		return sdp_fb_recvmsg(ssk, msg, len, flags);
	if (flags & MSG_ERRQUEUE)
		return sdp_msgzc_recv(sk, msg, len);
	lock_sock(sk);
	ret = sdp_recvmsg_locked(sk, msg, len, flags);
	/* It fell back to TCP while it waited for the connection. */
	if (ret == -ENOTCONN && sdp_fb(ssk)) {
		release_sock(sk);
		return sdp_fb_recvmsg(ssk, msg, len, flags);
	}
	if (ret >= 0 && ssk->tcp.inq) {
		/*
		 * TCP_INQ, as TCP's: the bytes left to read, 1 once none
		 * are and the peer's end of stream came (read on).
		 */
		int inq = READ_ONCE(ssk->conn.rx_bytes);

		if (!inq && test_bit(SDP_C_DISCONN_RCVD, &ssk->conn.flags))
			inq = 1;
		put_cmsg(msg, SOL_TCP, TCP_CM_INQ, sizeof(inq), &inq);
	}
	release_sock(sk);
	return ret;
}

/*
 * proto_ops::family is informational (the socket core dispatches on
 * net_proto_family and sk_family, which follow the module parameter).
 */
static const struct proto_ops sdp_stream_ops = {
	.family = PF_INET_SDP,
	.owner = THIS_MODULE,
	.release = sdp_release,
	.bind = sdp_bind,
	.connect = sdp_connect,
	.socketpair = sock_no_socketpair,
	.accept = sdp_accept,
	.getname = sdp_getname,
	.poll = sdp_poll,
	.ioctl = sdp_ioctl,
	.listen = sdp_listen,
	.shutdown = sdp_shutdown,
	.setsockopt = sdp_setsockopt,
	.getsockopt = sdp_getsockopt,
	.sendmsg = sdp_sendmsg,
#ifdef SDP_HAVE_SENDPAGE
	.sendpage = sdp_sendpage,
#endif
	.recvmsg = sdp_recvmsg,
	.set_peek_off = sk_set_peek_off,	/* SO_PEEK_OFF, as TCP's */
	.mmap = sock_no_mmap,
};

/*
 * socket(AF_INET_SDP, type, protocol): only byte streams, and only the
 * protocol numbers a TCP program would pass.  The error codes are the
 * ones inet_create() gives for a type it has no protocol for, and for a
 * protocol that does not match the type.
 */
static int sdp_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct sock *sk;

	if (sock->type != SOCK_STREAM)
		return -ESOCKTNOSUPPORT;
	if (protocol != 0 && protocol != IPPROTO_TCP)
		return -EPROTONOSUPPORT;

	sk = sdp_sock_alloc(net, NULL, kern);
	if (!sk)
		return -ENOBUFS;
	sock->state = SS_UNCONNECTED;
	sock->ops = &sdp_stream_ops;
	/* SOL_SOCKET options come to sdp_setsockopt(): SO_ZEROCOPY. */
	sdp_sock_custom_sockopt(sock);
	sock_graft(sk, sock);
	sk->sk_kern_sock = kern;
	return 0;
}

static struct net_proto_family sdp_family_ops __ro_after_init = {
	.create = sdp_create,
	.owner = THIS_MODULE,
};

/* @sdp_family belongs to another protocol (its sockets or sock_diag). */
static int __init sdp_family_taken(void)
{
	pr_err("address family %d is already registered by another protocol; load with family=N to use a free one\n",
	       sdp_family);
	return -EEXIST;
}

static int __init sdp_init(void)
{
	int err;

	if (sdp_family <= 0 || sdp_family >= NPROTO) {
		pr_err("family=%d is out of range 1..%d\n", sdp_family,
		       NPROTO - 1);
		return -EINVAL;
	}
	sdp_family_ops.family = sdp_family;

	sdp_wq = alloc_workqueue("sdp", WQ_MEM_RECLAIM, 0);
	if (!sdp_wq)
		return -ENOMEM;

	/*
	 * The order: what a socket needs exists before the family is
	 * registered, which makes sockets possible; exit is the reverse.
	 * What every namespace has (pernet, sdp_net.c), the proto,
	 * sock_diag, the RDMA device client, and last the address family.
	 */
	err = sdp_net_register();
	if (err)
		goto err_wq;
	err = proto_register(&sdp_proto, 1);
	if (err)
		goto err_net;
	err = sdp_diag_init();
	if (err) {
		/* A handler for the family: inet_diag's for 2, say. */
		if (err == -EBUSY)
			err = sdp_family_taken();
		goto err_proto;
	}
	err = sdp_dev_init();
	if (err)
		goto err_diag;
	err = sock_register(&sdp_family_ops);
	if (err) {
		if (err == -EEXIST)
			err = sdp_family_taken();
		goto err_dev;
	}

	sdp_fault_init();
	pr_info("registered address family %d\n", sdp_family);
	return 0;

err_dev:
	sdp_dev_exit();
err_diag:
	sdp_diag_exit();
err_proto:
	proto_unregister(&sdp_proto);
err_net:
	sdp_net_unregister();
err_wq:
	destroy_workqueue(sdp_wq);
	return err;
}

static void __exit sdp_exit(void)
{
	sdp_fault_exit();
	sock_unregister(sdp_family);
	sdp_dev_exit();
	sdp_diag_exit();
	proto_unregister(&sdp_proto);
	sdp_net_unregister();
	destroy_workqueue(sdp_wq);
}

module_init(sdp_init);
module_exit(sdp_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Sockets Direct Protocol: stream sockets over RDMA");
MODULE_AUTHOR("The SDP for Linux authors");
MODULE_VERSION(SDP_RELEASE);
MODULE_ALIAS_NETPROTO(AF_INET_SDP);
