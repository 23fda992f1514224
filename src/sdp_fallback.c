// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- in-kernel fallback to TCP.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * When the SDP connection of a connect() cannot be made (no RDMA device
 * or route to the address, no SDP listener at the peer, no answer) and
 * the policy allows it (SDP_TCP_FALLBACK, else net.sdp.tcp_fallback), the
 * socket carries on over a TCP socket to the same address and port:
 * sdp_fb::sock, made by connect() as its caller's own (sdp_fb_ready(),
 * sdp_fb_sock_new()).  From then on every call of the socket goes to that
 * TCP socket (af_sdp.c, sdp_sockopt.c ask sdp_fb()), and the SDP attempt's
 * CM id and QP go as a failed connect's do (SDP_C_ABORT, sdp_work()),
 * but without the socket seeing an error or a state change.  A listener
 * with fallback on also listens on TCP (sdp_fb::lsn), at a port TCP
 * had free too if the kernel picked it (sdp_fb_bind_any()), and accept()
 * returns its clients as fallen-back sockets (sdp_fb_accept()); a
 * destination that fell back sends the next connect()s to TCP at once
 * for a while (the negative cache, sdp_fb_cache.c).  An SDP attempt that
 * gets no answer is given up after the fallback timeout
 * (sdp_fb_timeout_arm() at connect(), sdp_fb_timeout_check() from
 * sdp_work()).
 *
 * Waiting: callers wait on the SDP socket's own wait queue (poll, epoll,
 * connect() in progress, SIGIO owners), registered before the fallback
 * as after it.  The TCP socket's callbacks copy its state, shutdown and
 * error into the SDP socket and wake that queue, then do what TCP's own
 * do (wake the TCP socket's queue, on which the calls handed to TCP
 * block).  They find the SDP socket through sk_user_data under
 * sk_callback_lock, which sdp_fb_release() clears before the TCP socket
 * is released: a TCP socket lingering after close() (FIN_WAIT, TIME_WAIT)
 * no longer knows the SDP socket.  poll() does not wait for them: it
 * copies what TCP's mask saw itself (sdp_fb_poll()).  The calls go to
 * TCP (sdp_fb(), sdp_fb::on) only once TCP's connect has started, and no
 * fallback starts once close() began (SDP_O_CLOSING).
 *
 * Socket-level options (SOL_SOCKET) stay on the SDP socket, which the
 * socket core reads them from; those that TCP reads at each call
 * (timeouts, SO_RCVLOWAT, SO_LINGER, SO_ZEROCOPY) are copied to the TCP
 * socket before each call handed over (sdp_fb_sync()), the others when
 * set.  An error the TCP socket reports is copied to sk_err, so that
 * SO_ERROR sees it; the TCP socket keeps its own for the calls it
 * answers.
 *
 * Lock order: the SDP socket's lock_sock() may be held while a TCP call
 * takes the TCP socket's; the TCP callbacks (TCP's socket lock or
 * bh_lock_sock held) take sk_callback_lock, then sdp_sock::lock.
 */
#include <linux/cred.h>
#include <linux/net.h>
#include <linux/tcp.h>
#include <net/inet_connection_sock.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "sdp.h"
#include "sdp_cm.h"
#include "sdp_conn.h"
#include "sdp_fallback.h"
#include "sdp_net.h"
#include "sdp_stats.h"
#include "sdp_timers.h"

/*
 * The policy in force: the socket's SDP_TCP_FALLBACK, else the sysctl;
 * off once close() began.
 */
bool sdp_fb_enabled(const struct sdp_sock *ssk)
{
	if (test_bit(SDP_O_CLOSING, &ssk->opts))
		return false;
	if (test_bit(SDP_O_FB_SET, &ssk->opts))
		return test_bit(SDP_O_FB_ON, &ssk->opts);
	return sdp_sysctl_tcp_fallback(sock_net(&ssk->sk));
}

/* How long the SDP attempt of a connect() with fallback on may take. */
unsigned int sdp_fb_timeout_ms(const struct sdp_sock *ssk)
{
	if (test_bit(SDP_O_FB_TMO_SET, &ssk->opts))
		return ssk->fb.timeout_ms;
	return sdp_sysctl_tcp_fallback_timeout_ms(sock_net(&ssk->sk));
}

/* SDP_TCP_FALLBACK_TIMEOUT: the socket's own bound.  lock_sock() held. */
void sdp_fb_timeout_set(struct sdp_sock *ssk, unsigned int ms)
{
	sock_owned_by_me(&ssk->sk);
	ssk->fb.timeout_ms = ms;
	set_bit(SDP_O_FB_TMO_SET, &ssk->opts);
}

/*
 * connect() started an SDP attempt: with fallback on, bound it, so that
 * a peer that never answers (its RDMA CM silent, RoCE packets lost on
 * the way while TCP's get through) costs the fallback timeout, not the
 * CM's retries.  sdp_work() looks at the deadline (sdp_fb_timeout_check())
 * when it runs, queued here for then.  lock_sock() held.
 */
void sdp_fb_timeout_arm(struct sdp_sock *ssk)
{
	unsigned long t = msecs_to_jiffies(sdp_fb_timeout_ms(ssk));

	sock_owned_by_me(&ssk->sk);
	ssk->fb.deadline = 0;
	if (!t || !sdp_fb_enabled(ssk))
		return;
	ssk->fb.deadline = (jiffies + t) | 1;	/* 0 means none */
	sdp_queue_work_within(ssk, t);
}

/*
 * From sdp_work(), lock_sock() held: if the SDP attempt of a connect()
 * outlived its deadline, give it up as unanswered (TCP goes on).
 *
 * Return: how long until the deadline, or 0 for none (any more).
 */
unsigned long sdp_fb_timeout_check(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	unsigned long deadline = ssk->fb.deadline;

	sock_owned_by_me(sk);
	if (!deadline)
		return 0;
	/* The attempt ended on its own, or fallback was turned off since. */
	if (sk->sk_state != TCP_SYN_SENT || sdp_fb(ssk) ||
	    test_bit(SDP_C_ESTABLISHED, &ssk->conn.flags) ||
	    test_bit(SDP_C_ABORT, &ssk->conn.flags) || !sdp_fb_enabled(ssk)) {
		ssk->fb.deadline = 0;
		return 0;
	}
	if (time_before(jiffies, deadline))
		return deadline - jiffies;
	ssk->fb.deadline = 0;
	net_dbg_ratelimited("SDP attempt given up after %u ms: TCP\n",
			    sdp_fb_timeout_ms(ssk));
	sdp_connect_failed_fb(ssk, -ETIMEDOUT, SDP_FB_UNREACHABLE);
	return 0;
}

/*
 * The TCP connection's local address becomes the socket's, for the
 * listings (/proc/net/sdp, sock_diag).  sdp_sock::lock held.
 */
static void sdp_fb_local_addr(struct sdp_sock *ssk, struct sock *tsk)
{
	if (tsk->sk_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ssk->saddr;

		memset(&ssk->saddr, 0, sizeof(ssk->saddr));
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = inet_sk(tsk)->inet_saddr;
		sin->sin_port = inet_sk(tsk)->inet_sport;
#if IS_ENABLED(CONFIG_IPV6)
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ssk->saddr;

		memset(&ssk->saddr, 0, sizeof(ssk->saddr));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = tsk->sk_v6_rcv_saddr;
		sin6->sin6_port = inet_sk(tsk)->inet_sport;
#endif
	}
}

/*
 * Copy the TCP socket's state, shutdown and a new error into the SDP
 * socket, unless its calls no longer go to TCP (a new connect() tries
 * SDP).  Returns true if anything changed.  From the callbacks, and from
 * poll(), which may run before them (sdp_fb_poll()).
 */
static bool sdp_fb_mirror(struct sdp_sock *ssk, struct sock *tsk)
{
	struct sock *sk = &ssk->sk;
	bool changed = false, failed;
	int state, err;

	spin_lock_bh(&ssk->lock);
	if (!ssk->fb.on) {
		spin_unlock_bh(&ssk->lock);
		return false;
	}
	/* Read under the lock: a later caller sees no older values. */
	state = READ_ONCE(tsk->sk_state);
	/*
	 * TCP writes an error before the CLOSE it causes, with smp_wmb()
	 * between (tcp_poll() pairs with it too): CLOSE comes with its error.
	 */
	smp_rmb();
	err = READ_ONCE(tsk->sk_err);
	failed = sk->sk_state == TCP_SYN_SENT && state == TCP_CLOSE &&
		 ssk->fb.reason == SDP_FB_CACHED;
	if (sk->sk_state != state) {
		if (state == TCP_ESTABLISHED && sk->sk_state == TCP_SYN_SENT)
			sdp_fb_local_addr(ssk, tsk);
		sdp_stat_fb_state(ssk, sk->sk_state, state);
		WRITE_ONCE(sk->sk_state, state);
		changed = true;
	}
	if (sk->sk_shutdown != READ_ONCE(tsk->sk_shutdown)) {
		WRITE_ONCE(sk->sk_shutdown, READ_ONCE(tsk->sk_shutdown));
		changed = true;
	}
	if (err && err != ssk->fb.err) {
		WRITE_ONCE(sk->sk_err, err);
		ssk->fb.err_copied = err;
		changed = true;
	}
	ssk->fb.err = err;
	spin_unlock_bh(&ssk->lock);
	/* The cache sent it to TCP, which failed: SDP next time. */
	if (failed)
		sdp_fb_cache_forget(sock_net(sk), &ssk->daddr);
	return changed;
}

/*
 * sk_user_data of a TCP socket of ours: the SDP socket, flagged
 * SK_USER_DATA_NOCOPY so that the connections a TCP listener of ours
 * accepts do not inherit it (they start with none, sdp_fb_accept()).
 */
static void sdp_fb_set_user(struct sock *tsk, struct sdp_sock *ssk)
{
	tsk->sk_user_data = ssk ? (void *)((uintptr_t)ssk |
					   SK_USER_DATA_NOCOPY) : NULL;
}

static struct sdp_sock *sdp_fb_user(const struct sock *tsk)
{
	return (struct sdp_sock *)((uintptr_t)tsk->sk_user_data &
				   SK_USER_DATA_PTRMASK);
}

/*
 * Urgent data came: TCP signals the owner of its socket's file, which
 * our TCP socket has not (no file); ours has (F_SETOWN): SIGURG to it, once
 * per urgent byte.  From @tsk's data_ready, under its socket lock.
 */
static void sdp_fb_urg(struct sdp_sock *ssk, struct sock *tsk)
{
	const struct tcp_sock *tp = tcp_sk(tsk);

	if (!(READ_ONCE(tp->urg_data) & TCP_URG_VALID) ||
	    (ssk->fb.urg_sent && ssk->fb.urg_seq == READ_ONCE(tp->urg_seq)))
		return;
	ssk->fb.urg_seq = READ_ONCE(tp->urg_seq);
	ssk->fb.urg_sent = true;
	sk_send_sigurg(&ssk->sk);
}

/*
 * An event of the TCP socket (enum sdp_fb_ev): when the socket's calls go
 * to it (sdp_fb()), its state goes to the SDP socket and the SDP
 * socket's waiters are woken; then TCP's own callback runs.  Nothing but
 * that once the SDP socket let go (sk_user_data NULL).
 */
static void sdp_fb_event(struct sock *tsk, enum sdp_fb_ev ev)
{
	void (*orig)(struct sock *sk) = NULL;
	struct sdp_sock *ssk;
	struct sock *sk;

	read_lock_bh(&tsk->sk_callback_lock);
	ssk = sdp_fb_user(tsk);
	if (!ssk)
		goto out;
	orig = ssk->fb.ops[ev].fn;
	if (!READ_ONCE(ssk->fb.on))
		goto out;
	sk = &ssk->sk;
	switch (ev) {
	case SDP_FB_EV_STATE:
		sdp_fb_mirror(ssk, tsk);
		sk->sk_state_change(sk);
		break;
	case SDP_FB_EV_DATA:
		sdp_fb_mirror(ssk, tsk);
		sdp_fb_urg(ssk, tsk);
		sk->sk_data_ready(sk);
		break;
	case SDP_FB_EV_SPACE:
		/*
		 * TCP's own (sk_stream_write_space()) wakes writers once a
		 * third of the send buffer is free; the SDP socket's wait
		 * queue hears about it when TCP's does.
		 */
		if (sk_stream_is_writeable(tsk))
			sk->sk_write_space(sk);
		break;
	case SDP_FB_EV_ERROR:
		sdp_fb_mirror(ssk, tsk);
		sk_error_report(sk);
		break;
	default:
		break;
	}
out:
	read_unlock_bh(&tsk->sk_callback_lock);
	if (orig)
		orig(tsk);
}

static void sdp_fb_state_change(struct sock *tsk)
{
	sdp_fb_event(tsk, SDP_FB_EV_STATE);
}

static void sdp_fb_data_ready(struct sock *tsk)
{
	sdp_fb_event(tsk, SDP_FB_EV_DATA);
}

static void sdp_fb_write_space(struct sock *tsk)
{
	sdp_fb_event(tsk, SDP_FB_EV_SPACE);
}

static void sdp_fb_error_report(struct sock *tsk)
{
	sdp_fb_event(tsk, SDP_FB_EV_ERROR);
}

/* Take over the TCP socket's callbacks (sdp_fb_unhook() gives them back). */
static void sdp_fb_hook(struct sdp_sock *ssk, struct sock *tsk)
{
	write_lock_bh(&tsk->sk_callback_lock);
	ssk->fb.ops[SDP_FB_EV_STATE].fn = tsk->sk_state_change;
	ssk->fb.ops[SDP_FB_EV_DATA].fn = tsk->sk_data_ready;
	ssk->fb.ops[SDP_FB_EV_SPACE].fn = tsk->sk_write_space;
	ssk->fb.ops[SDP_FB_EV_ERROR].fn = tsk->sk_error_report;
	sdp_fb_set_user(tsk, ssk);
	tsk->sk_state_change = sdp_fb_state_change;
	tsk->sk_data_ready = sdp_fb_data_ready;
	tsk->sk_write_space = sdp_fb_write_space;
	tsk->sk_error_report = sdp_fb_error_report;
	write_unlock_bh(&tsk->sk_callback_lock);
}

static void sdp_fb_unhook(struct sdp_sock *ssk, struct sock *tsk)
{
	write_lock_bh(&tsk->sk_callback_lock);
	sdp_fb_set_user(tsk, NULL);
	tsk->sk_state_change = ssk->fb.ops[SDP_FB_EV_STATE].fn;
	tsk->sk_data_ready = ssk->fb.ops[SDP_FB_EV_DATA].fn;
	tsk->sk_write_space = ssk->fb.ops[SDP_FB_EV_SPACE].fn;
	tsk->sk_error_report = ssk->fb.ops[SDP_FB_EV_ERROR].fn;
	write_unlock_bh(&tsk->sk_callback_lock);
}

/*
 * The socket-level options that TCP reads at each call: copied before
 * every call handed to the TCP socket.
 */
static struct socket *sdp_fb_sync(struct sdp_sock *ssk)
{
	struct socket *fb = READ_ONCE(ssk->fb.sock);
	struct sock *sk = &ssk->sk, *tsk = fb->sk;

	WRITE_ONCE(tsk->sk_rcvtimeo, READ_ONCE(sk->sk_rcvtimeo));
	WRITE_ONCE(tsk->sk_sndtimeo, READ_ONCE(sk->sk_sndtimeo));
	WRITE_ONCE(tsk->sk_rcvlowat, READ_ONCE(sk->sk_rcvlowat));
	WRITE_ONCE(tsk->sk_lingertime, READ_ONCE(sk->sk_lingertime));
	if (sock_flag(sk, SOCK_LINGER) != sock_flag(tsk, SOCK_LINGER))
		sock_valbool_flag(tsk, SOCK_LINGER, sock_flag(sk, SOCK_LINGER));
	if (sock_flag(sk, SOCK_ZEROCOPY) != sock_flag(tsk, SOCK_ZEROCOPY))
		sock_valbool_flag(tsk, SOCK_ZEROCOPY,
				  sock_flag(sk, SOCK_ZEROCOPY));
	/*
	 * Before 6.2 no SOL_SOCKET option reaches sdp_setsockopt() (no
	 * SOCK_CUSTOM_SOCKOPT): those TCP reads are copied here too.
	 */
	if (sk->sk_userlocks & SOCK_SNDBUF_LOCK) {
		if (!(tsk->sk_userlocks & SOCK_SNDBUF_LOCK))
			tsk->sk_userlocks |= SOCK_SNDBUF_LOCK;
		WRITE_ONCE(tsk->sk_sndbuf, READ_ONCE(sk->sk_sndbuf));
	}
	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK) {
		if (!(tsk->sk_userlocks & SOCK_RCVBUF_LOCK))
			tsk->sk_userlocks |= SOCK_RCVBUF_LOCK;
		WRITE_ONCE(tsk->sk_rcvbuf, READ_ONCE(sk->sk_rcvbuf));
	}
	WRITE_ONCE(tsk->sk_priority, READ_ONCE(sk->sk_priority));
	WRITE_ONCE(tsk->sk_mark, READ_ONCE(sk->sk_mark));
	return fb;
}

/*
 * SO_KEEPALIVE on a fallen-back socket: TCP's keepalive timer.  From
 * sdp_ka_set(), the socket's lock_sock() held (then the TCP socket's).
 */
void sdp_fb_keepalive(struct sdp_sock *ssk, int on)
{
	struct socket *fb = sdp_fb(ssk);
	struct sock *tsk;

	if (!fb)
		return;
	tsk = fb->sk;
	lock_sock(tsk);
	if (tsk->sk_prot->keepalive)
		tsk->sk_prot->keepalive(tsk, on);
	sock_valbool_flag(tsk, SOCK_KEEPOPEN, on);
	release_sock(tsk);
}

/* An int option of the TCP socket, as its user would set it. */
static void sdp_fb_opt(struct socket *fb, int level, int name, int val)
{
	sockptr_t v = KERNEL_SOCKPTR(&val);
	int err = level == SOL_SOCKET ?
		  sock_setsockopt(fb, level, name, v, sizeof(val)) :
		  fb->ops->setsockopt(fb, level, name, v, sizeof(val));

	if (err)
		net_dbg_ratelimited("TCP fallback: option %d:%d not taken: %d\n",
				    level, name, err);
}

/*
 * TCP_CONGESTION as set on the SDP socket, if it was, with the rights of
 * the socket's opener: TCP lets only CAP_NET_ADMIN choose an algorithm
 * outside net.ipv4.tcp_allowed_congestion_control, and a fallback may run
 * in a kernel worker, which has every capability.
 */
static void sdp_fb_congestion(struct sdp_sock *ssk, struct socket *fb)
{
	struct socket *sock = ssk->sk.sk_socket;
	char name[SDP_CA_NAME_MAX];
	const struct cred *old;
	int err;

	memcpy(name, ssk->tcp.congestion, sizeof(name));
	if (!name[0] || !sock || !sock->file)
		return;
	old = override_creds(sock->file->f_cred);
	err = fb->ops->setsockopt(fb, SOL_TCP, TCP_CONGESTION,
				  KERNEL_SOCKPTR(name), strlen(name));
	revert_creds(old);
	if (err)
		net_dbg_ratelimited("TCP fallback: congestion control %s not taken: %d\n",
				    name, err);
}

/* What the SDP socket was told before it fell back, for the TCP socket. */
static void sdp_fb_copy_opts(struct sdp_sock *ssk, struct socket *fb)
{
	const struct sdp_tcp_opts *t = &ssk->tcp;
	struct sock *sk = &ssk->sk, *tsk = fb->sk;

	if (sk->sk_userlocks & SOCK_SNDBUF_LOCK)
		sdp_fb_opt(fb, SOL_SOCKET, SO_SNDBUF, sk->sk_sndbuf / 2);
	if (sk->sk_userlocks & SOCK_RCVBUF_LOCK)
		sdp_fb_opt(fb, SOL_SOCKET, SO_RCVBUF, sk->sk_rcvbuf / 2);
	tsk->sk_mark = sk->sk_mark;
	tsk->sk_priority = sk->sk_priority;
	tsk->sk_bound_dev_if = sk->sk_bound_dev_if;
	if (sock_flag(sk, SOCK_KEEPOPEN))
		sock_set_keepalive(tsk);
	sdp_fb_opt(fb, SOL_TCP, TCP_NODELAY,
		   test_bit(SDP_O_NODELAY, &ssk->opts));
	sdp_fb_opt(fb, SOL_TCP, TCP_CORK, test_bit(SDP_O_CORK, &ssk->opts));
	/* Those set to other than the default (0 for all of them here). */
	if (t->keepidle)
		sdp_fb_opt(fb, SOL_TCP, TCP_KEEPIDLE, t->keepidle);
	if (t->keepintvl)
		sdp_fb_opt(fb, SOL_TCP, TCP_KEEPINTVL, t->keepintvl);
	if (t->keepcnt)
		sdp_fb_opt(fb, SOL_TCP, TCP_KEEPCNT, t->keepcnt);
	if (t->user_timeout)
		sdp_fb_opt(fb, SOL_TCP, TCP_USER_TIMEOUT, t->user_timeout);
	if (t->syncnt)
		sdp_fb_opt(fb, SOL_TCP, TCP_SYNCNT, t->syncnt);
	if (t->maxseg)
		sdp_fb_opt(fb, SOL_TCP, TCP_MAXSEG, t->maxseg);
	if (t->notsent_lowat)
		sdp_fb_opt(fb, SOL_TCP, TCP_NOTSENT_LOWAT, t->notsent_lowat);
	if (t->linger2)
		sdp_fb_opt(fb, SOL_TCP, TCP_LINGER2,
			   t->linger2 < 0 ? -1 : t->linger2 / HZ);
	if (t->inq)
		sdp_fb_opt(fb, SOL_TCP, TCP_INQ, 1);
	if (t->quickack_off)
		sdp_fb_opt(fb, SOL_TCP, TCP_QUICKACK, 0);
	sdp_fb_congestion(ssk, fb);
	if (tsk->sk_family == AF_INET && t->tos)
		sdp_fb_opt(fb, SOL_IP, IP_TOS, t->tos);
	if (tsk->sk_family == AF_INET6 && t->tclass)
		sdp_fb_opt(fb, SOL_IPV6, IPV6_TCLASS, t->tclass);
}

/*
 * A TCP socket for @sk's TCP side, made as socket(2) makes the calling
 * task's own (a user socket, not a kernel one): it holds its network
 * namespace, so that its timers go on after close() as any TCP socket's
 * do (those of a kernel socket stop at close, and it does not keep its
 * namespace alive); and it carries the task's credentials (sk_uid), its
 * cgroup (cgroup-BPF programs, the memory cgroup) and its LSM label, and
 * the LSM may refuse it.  So it is made only in a call of the socket's
 * user (bind(), listen(), connect()), never in a kernel worker: the
 * fallback of an attempt that fails later, in the CM's worker or in
 * sdp_work(), takes the one that its connect() made (sdp_fb_ready()).
 */
static int sdp_fb_sock_new(struct sock *sk, int family, struct socket **fbp)
{
	if (WARN_ON_ONCE(!in_task() || (current->flags & PF_KTHREAD)))
		return -EINVAL;
	return __sock_create(sock_net(sk), family, SOCK_STREAM, IPPROTO_TCP,
			     fbp, 0);
}

/* The length of a sockaddr of @family (AF_INET or AF_INET6). */
static int sdp_fb_addrlen(int family)
{
	return family == AF_INET ? sizeof(struct sockaddr_in) :
				   sizeof(struct sockaddr_in6);
}

/* The bound address of the SDP socket, for the TCP socket to bind. */
static int sdp_fb_bind(struct sdp_sock *ssk, struct socket *fb)
{
	struct sockaddr_storage ss = ssk->saddr;

	if (!test_bit(SDP_O_USER_BOUND, &ssk->opts) ||
	    ss.ss_family != ssk->daddr.ss_family)
		return 0;
	if (!test_bit(SDP_O_USER_PORT, &ssk->opts))
		sdp_addr_set_port((struct sockaddr *)&ss, 0);
	return kernel_bind(fb, (struct sockaddr *)&ss,
			   sdp_fb_addrlen(ss.ss_family));
}

/**
 * sdp_fb_ready() - the TCP socket for a fallback, made at connect()
 * @ssk: the socket, lock_sock() held, in connect() (the user's task),
 *	ssk->daddr set
 *
 * With fallback on, a connect() makes the TCP socket that a fallback of
 * its attempt will connect (sdp_fb_sock_new(): the fallback itself may
 * run in a kernel worker), with what the socket was told and bound to its
 * bound address: the one that sdp_fb_bind_any() kept for its port, or a
 * new one.  That of an earlier attempt stays (sdp_fb_prepare() readies it
 * again).  It stays until close().  If it cannot be made, connect() goes
 * on without fallback.
 */
void sdp_fb_ready(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct socket *fb = ssk->fb.port;
	int err;

	sock_owned_by_me(sk);
	if (ssk->fb.sock || !sdp_fb_enabled(ssk))
		return;
	if (fb && fb->sk->sk_family == ssk->daddr.ss_family) {
		/* Bound to the socket's port already (sdp_fb_bind_any()). */
		ssk->fb.port = NULL;
		sdp_fb_copy_opts(ssk, fb);
	} else {
		err = sdp_fb_sock_new(sk, ssk->daddr.ss_family, &fb);
		if (err)
			goto fail;
		sdp_fb_copy_opts(ssk, fb);
		err = sdp_fb_bind(ssk, fb);
		if (err) {
			sock_release(fb);
			goto fail;
		}
	}
	sdp_fb_hook(ssk, fb->sk);
	spin_lock_bh(&ssk->lock);
	WRITE_ONCE(ssk->fb.sock, fb);
	spin_unlock_bh(&ssk->lock);
	return;

fail:
	net_dbg_ratelimited("no TCP socket for a fallback: error %d\n", err);
}

/*
 * The TCP socket for a fallback (made at connect(), sdp_fb_ready()),
 * ready to connect, with what the socket was told since.
 */
static int sdp_fb_prepare(struct sdp_sock *ssk, struct socket **fbp)
{
	struct socket *fb = ssk->fb.sock;

	if (!fb)
		return -EOPNOTSUPP;	/* sdp_fb_ready() could not make it */
	if (fb->state != SS_UNCONNECTED) {
		/*
		 * Its last connect failed (CLOSE) and was reported: made
		 * ready for another, as inet_stream_connect() does.
		 */
		lock_sock(fb->sk);
		fb->state = SS_UNCONNECTED;
		if (fb->sk->sk_prot->disconnect(fb->sk, 0))
			fb->state = SS_DISCONNECTING;
		WRITE_ONCE(fb->sk->sk_err, 0);
		release_sock(fb->sk);
		spin_lock_bh(&ssk->lock);
		ssk->fb.err = 0;
		ssk->fb.err_copied = 0;
		spin_unlock_bh(&ssk->lock);
	}
	sdp_fb_copy_opts(ssk, fb);
	*fbp = fb;
	return 0;
}

/**
 * sdp_fb_connect() - carry a connect() on over TCP
 * @ssk: the socket, lock_sock() held, connecting to ssk->daddr (SYN_SENT)
 * @why: why the SDP connection cannot be made
 *
 * Gets the TCP socket (sdp_fb_prepare()), starts its connect
 * without waiting, and ends the SDP attempt.  The socket stays in
 * SYN_SENT until TCP's connect ends (sdp_fb_mirror()): connect() and
 * poll() see TCP's outcome.
 *
 * Return: 0, or a negative errno if no TCP connect could be started (the
 * caller then fails the connect as without fallback).
 */
int sdp_fb_connect(struct sdp_sock *ssk, enum sdp_fallback_reason why)
{
	struct sock *sk = &ssk->sk;
	struct socket *fb;
	int err, len;

	sock_owned_by_me(sk);
	if (sdp_fb(ssk) || !sdp_fb_enabled(ssk) ||
	    ssk->daddr.ss_family != (ssk->fb.sock ? ssk->fb.sock->sk->sk_family :
					       ssk->daddr.ss_family))
		return -EOPNOTSUPP;
	len = sdp_fb_addrlen(ssk->daddr.ss_family);
	err = sdp_fb_prepare(ssk, &fb);
	if (err) {
		net_dbg_ratelimited("no TCP fallback: error %d\n", err);
		return err;
	}

	/* The SDP attempt ends quietly. */
	spin_lock_bh(&ssk->lock);
	ssk->fb.reason = why;
	if (!test_and_set_bit(SDP_C_ABORT, &ssk->conn.flags))
		sdp_queue_work(ssk);
	spin_unlock_bh(&ssk->lock);
	sdp_stat_fallback(ssk, why);
	if (sdp_fb_cacheable(ssk, why))
		sdp_fb_cache_add(sock_net(sk), &ssk->daddr, why);

	err = kernel_connect(fb, (struct sockaddr *)&ssk->daddr, len,
			     O_NONBLOCK);
	/*
	 * From here on the socket is TCP's.  Not before TCP's connect
	 * started: poll() would have seen a TCP socket that is not
	 * connecting (CLOSE: POLLHUP, and no error).  What TCP's callbacks
	 * said meanwhile, sdp_fb_mirror() below picks up.
	 */
	spin_lock_bh(&ssk->lock);
	WRITE_ONCE(ssk->fb.on, true);
	spin_unlock_bh(&ssk->lock);
	if (err && err != -EINPROGRESS) {
		/* As TCP's connect() would have failed: the socket closes. */
		spin_lock_bh(&ssk->lock);
		WRITE_ONCE(sk->sk_err, -err);
		sdp_stat_fb_state(ssk, sk->sk_state, TCP_CLOSE);
		WRITE_ONCE(sk->sk_state, TCP_CLOSE);
		spin_unlock_bh(&ssk->lock);
		if (why == SDP_FB_CACHED)
			sdp_fb_cache_forget(sock_net(sk), &ssk->daddr);
		sk->sk_state_change(sk);
		sk_error_report(sk);
		return 0;
	}
	if (sdp_fb_mirror(ssk, fb->sk))
		sk->sk_state_change(sk);
	return 0;
}

/*
 * connect() again after a fallen-back connect failed: SDP is tried first
 * again.  The TCP socket stays (a call may still be using it) for a
 * fallback of the new attempt, or until close().  lock_sock() held.
 */
void sdp_fb_reset(struct sdp_sock *ssk)
{
	sock_owned_by_me(&ssk->sk);
	spin_lock_bh(&ssk->lock);
	WRITE_ONCE(ssk->fb.on, false);
	ssk->fb.reason = SDP_FB_NONE;
	spin_unlock_bh(&ssk->lock);
}

/* The local (@peer 0) or remote address of @fb into @ss. */
static void sdp_fb_addr(struct socket *fb, struct sockaddr_storage *ss,
			int peer)
{
	memset(ss, 0, sizeof(*ss));
	if (fb->ops->getname(fb, (struct sockaddr *)ss, peer) < 0)
		memset(ss, 0, sizeof(*ss));
}

/*
 * A TCP socket of @family for a listener's TCP side (sdp_fb_listen()) or
 * for the port of sdp_fb_bind_any(): what a bind() to it depends on.
 */
static int sdp_fb_sock(struct sdp_sock *ssk, int family, struct socket **fbp)
{
	struct sock *sk = &ssk->sk;
	struct socket *fb;
	int err;

	err = sdp_fb_sock_new(sk, family, &fb);
	if (err)
		return err;
	if (sk->sk_reuse != SK_NO_REUSE)
		sdp_fb_opt(fb, SOL_SOCKET, SO_REUSEADDR, 1);
	if (family == AF_INET6)
		sdp_fb_opt(fb, SOL_IPV6, IPV6_V6ONLY, ssk->tcp.v6only);
	fb->sk->sk_bound_dev_if = sk->sk_bound_dev_if;
	*fbp = fb;
	return 0;
}

/* Ports sdp_fb_bind_any() takes from TCP before it lets the CM pick. */
#define SDP_FB_PORT_TRIES	8

/**
 * sdp_fb_bind_any() - bind to a port that TCP has free too
 * @ssk: the socket, lock_sock() held, its CM id not bound
 * @ss: the address to bind
 *
 * The RDMA CM picks a port for a bind to port 0 without looking at TCP's
 * (where a connection in TIME_WAIT, say, keeps a listener off a port), so
 * with fallback on TCP picks it: a TCP socket binds to port 0 and
 * the CM id to the port that socket got.  The TCP socket keeps the port
 * (sdp_fb::port) until listen() makes it the TCP listener, a
 * fallback its connection (sdp_fb_prepare()), or close() releases it.  A
 * port the CM has taken is given up for TCP's next one; if TCP has none
 * the CM picks, as with fallback off (the socket's TCP side may then not
 * get the port: FallbackListenFails).  A port named is bound as named.
 *
 * Return: 0 or a negative errno, as sdp_cm_bind().
 */
int sdp_fb_bind_any(struct sdp_sock *ssk, const struct sockaddr_storage *ss)
{
	struct socket *tried[SDP_FB_PORT_TRIES], *fb;
	int len = sdp_fb_addrlen(ss->ss_family);
	struct sockaddr_storage got;
	int err = -EADDRINUSE, n = 0;

	sock_owned_by_me(&ssk->sk);
	if (sdp_addr_port((const struct sockaddr *)ss) || ssk->fb.port ||
	    !sdp_fb_enabled(ssk))
		return sdp_cm_bind(ssk, ss);
	while (n < SDP_FB_PORT_TRIES) {
		if (sdp_fb_sock(ssk, ss->ss_family, &fb))
			break;
		if (kernel_bind(fb, (struct sockaddr *)ss, len)) {
			sock_release(fb);	/* no port free in TCP */
			break;
		}
		sdp_fb_addr(fb, &got, 0);
		err = sdp_cm_bind(ssk, &got);
		if (!err) {
			ssk->fb.port = fb;
			break;
		}
		/* Held while TCP picks the next: another port. */
		tried[n++] = fb;
		if (err != -EADDRINUSE && err != -EACCES)
			break;
	}
	while (n)
		sock_release(tried[--n]);
	if (err == -EADDRINUSE || err == -EACCES)
		err = sdp_cm_bind(ssk, ss);
	return err;
}

/* A connection waits at a listener's TCP socket: wake accept(), poll(). */
static void sdp_fb_listen_ready(struct sock *tsk)
{
	void (*orig)(struct sock *sk) = NULL;
	struct sdp_sock *lssk;

	read_lock_bh(&tsk->sk_callback_lock);
	lssk = sdp_fb_user(tsk);
	if (lssk) {
		orig = lssk->fb.ops[SDP_FB_EV_DATA].fn;
		lssk->sk.sk_data_ready(&lssk->sk);
	}
	read_unlock_bh(&tsk->sk_callback_lock);
	if (orig)
		orig(tsk);
}

/**
 * sdp_fb_listen() - listen on TCP too
 * @lssk: the socket, lock_sock() held, listening over SDP (its port bound)
 * @backlog: listen()'s
 *
 * With fallback on, a listener also listens on TCP at its address and
 * port, so that a client without SDP reaches it (sdp_fb_accept()).  A
 * second listen() sets the TCP listener's backlog too.  If the TCP port
 * is taken the listener listens over SDP only (FallbackListenFails).
 */
void sdp_fb_listen(struct sdp_sock *lssk, int backlog)
{
	struct sock *sk = &lssk->sk;
	struct sockaddr_storage ss = lssk->saddr;
	struct socket *fb = lssk->fb.lsn;
	int err;

	sock_owned_by_me(sk);
	if (fb) {
		fb->ops->listen(fb, backlog);
		return;
	}
	if (!sdp_fb_enabled(lssk))
		return;
	fb = lssk->fb.port;
	if (fb && fb->sk->sk_family == ss.ss_family) {
		/* The port sdp_fb_bind_any() kept for it. */
		lssk->fb.port = NULL;
		if (sk->sk_reuse != SK_NO_REUSE)
			sdp_fb_opt(fb, SOL_SOCKET, SO_REUSEADDR, 1);
		fb->sk->sk_bound_dev_if = sk->sk_bound_dev_if;
		err = 0;
	} else {
		err = sdp_fb_sock(lssk, ss.ss_family, &fb);
		if (err)
			goto fail;
		err = kernel_bind(fb, (struct sockaddr *)&ss,
				  sdp_fb_addrlen(ss.ss_family));
	}
	if (!err)
		err = kernel_listen(fb, backlog);
	if (err) {
		sock_release(fb);
		goto fail;
	}
	write_lock_bh(&fb->sk->sk_callback_lock);
	lssk->fb.ops[SDP_FB_EV_DATA].fn = fb->sk->sk_data_ready;
	sdp_fb_set_user(fb->sk, lssk);
	fb->sk->sk_data_ready = sdp_fb_listen_ready;
	write_unlock_bh(&fb->sk->sk_callback_lock);
	spin_lock_bh(&lssk->lock);
	WRITE_ONCE(lssk->fb.lsn, fb);
	spin_unlock_bh(&lssk->lock);
	return;

fail:
	SDP_INC_STATS(sock_net(sk), SDP_MIB_FB_LISTEN_FAILS);
	net_info_ratelimited("listener on port %u takes no TCP clients: error %d\n",
			     sdp_addr_port((struct sockaddr *)&ss) ?
			     ntohs(sdp_addr_port((struct sockaddr *)&ss)) : 0,
			     err);
}

/* A TCP client waits at the listener's TCP socket.  Lockless (poll()). */
bool sdp_fb_listen_pending(const struct sdp_sock *lssk)
{
	struct socket *fb = READ_ONCE(lssk->fb.lsn);

	return fb && inet_csk_listen_poll(fb->sk);
}

/* The listener closes: so does its TCP listener.  Without lock_sock(). */
static void sdp_fb_listen_stop(struct sdp_sock *lssk)
{
	struct socket *fb = READ_ONCE(lssk->fb.lsn);

	if (!fb)
		return;
	write_lock_bh(&fb->sk->sk_callback_lock);
	sdp_fb_set_user(fb->sk, NULL);
	fb->sk->sk_data_ready = lssk->fb.ops[SDP_FB_EV_DATA].fn;
	write_unlock_bh(&fb->sk->sk_callback_lock);
	lock_sock(&lssk->sk);
	spin_lock_bh(&lssk->lock);
	WRITE_ONCE(lssk->fb.lsn, NULL);
	spin_unlock_bh(&lssk->lock);
	release_sock(&lssk->sk);
	sock_release(fb);
}

/**
 * sdp_fb_accept() - a client that came over TCP, as a new socket
 * @lssk: the listener, lock_sock() held
 *
 * Return: the new socket, connected over TCP (reason SDP_FB_TCP_CLIENT),
 * with the listener's options, not yet grafted; NULL if no TCP client
 * waits; an ERR_PTR() if one could not be taken.
 */
struct sock *sdp_fb_accept(struct sdp_sock *lssk)
{
	struct socket *lfb = lssk->fb.lsn, *fb;
	struct sdp_sock *ssk;
	struct sock *sk;
	int err;

	sock_owned_by_me(&lssk->sk);
	if (!lfb || !inet_csk_listen_poll(lfb->sk))
		return NULL;
	err = kernel_accept(lfb, &fb, O_NONBLOCK);
	if (err == -EAGAIN)
		return NULL;
	if (err)
		return ERR_PTR(err);
	/*
	 * It inherited the listener's callback, without the listener
	 * (SK_USER_DATA_NOCOPY): TCP's own goes back first, before the
	 * socket can leave our hands (a pointer into this module must not
	 * outlive it in a lingering TCP socket).
	 */
	write_lock_bh(&fb->sk->sk_callback_lock);
	fb->sk->sk_data_ready = lssk->fb.ops[SDP_FB_EV_DATA].fn;
	sdp_fb_set_user(fb->sk, NULL);
	write_unlock_bh(&fb->sk->sk_callback_lock);
	sk = sdp_sock_alloc(sock_net(&lssk->sk), &lssk->sk, 0);
	if (!sk) {
		sock_release(fb);
		return ERR_PTR(-ENOBUFS);
	}
	ssk = sdp_sk(sk);
	sdp_fb_addr(fb, &ssk->saddr, 0);
	sdp_fb_addr(fb, &ssk->daddr, 1);
	sdp_fb_copy_opts(ssk, fb);
	sdp_fb_hook(ssk, fb->sk);
	spin_lock_bh(&ssk->lock);
	ssk->fb.reason = SDP_FB_TCP_CLIENT;
	WRITE_ONCE(ssk->fb.sock, fb);
	WRITE_ONCE(ssk->fb.on, true);
	spin_unlock_bh(&ssk->lock);
	sdp_fb_mirror(ssk, fb->sk);
	sdp_stat_fallback(ssk, SDP_FB_TCP_CLIENT);
	return sk;
}

/*
 * close(): the TCP socket is closed as TCP's close() does (SO_LINGER
 * included), after the SDP socket let go of it.  Without lock_sock().
 */
void sdp_fb_release(struct sdp_sock *ssk)
{
	struct sock *sk = &ssk->sk;
	struct socket *fb = READ_ONCE(ssk->fb.sock), *port;
	bool on = sdp_fb(ssk);

	sdp_fb_listen_stop(ssk);
	lock_sock(sk);
	port = ssk->fb.port;
	ssk->fb.port = NULL;
	release_sock(sk);
	if (port)
		sock_release(port);
	if (!fb)
		return;
	sdp_fb_sync(ssk);
	sdp_fb_unhook(ssk, fb->sk);
	lock_sock(sk);
	spin_lock_bh(&ssk->lock);
	WRITE_ONCE(ssk->fb.on, false);
	WRITE_ONCE(ssk->fb.sock, NULL);
	if (on)
		WRITE_ONCE(sk->sk_state, TCP_CLOSE);
	spin_unlock_bh(&ssk->lock);
	release_sock(sk);
	sock_release(fb);
}

/*
 * An error of the TCP socket is reported once, as TCP reports it: it is
 * in both sk_errs (SO_ERROR reads the SDP socket's, the calls handed
 * over TCP's), and read from one, it goes from the other.  Before and
 * after each call handed to TCP.
 */
static void sdp_fb_err_sync(struct sdp_sock *ssk, struct socket *fb)
{
	struct sock *sk = &ssk->sk, *tsk = fb->sk;
	int err;

	spin_lock_bh(&ssk->lock);
	err = ssk->fb.err_copied;
	if (err && !READ_ONCE(sk->sk_err)) {
		/* SO_ERROR read it: TCP no longer reports it. */
		cmpxchg(&tsk->sk_err, err, 0);
		ssk->fb.err_copied = 0;
	} else if (err && READ_ONCE(tsk->sk_err) != err) {
		/* A call TCP answered reported it. */
		cmpxchg(&sk->sk_err, err, 0);
		ssk->fb.err_copied = 0;
	}
	spin_unlock_bh(&ssk->lock);
}

int sdp_fb_sendmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len)
{
	struct socket *fb = sdp_fb_sync(ssk);
	int ret;

	sdp_fb_err_sync(ssk, fb);
	ret = fb->ops->sendmsg(fb, msg, len);
	sdp_fb_err_sync(ssk, fb);
	return ret;
}

int sdp_fb_recvmsg(struct sdp_sock *ssk, struct msghdr *msg, size_t len,
		   int flags)
{
	struct socket *fb = sdp_fb_sync(ssk);
	int ret;

	sdp_fb_err_sync(ssk, fb);
	ret = fb->ops->recvmsg(fb, msg, len, flags);
	sdp_fb_err_sync(ssk, fb);
	return ret;
}

/*
 * TCP's readiness; the caller registered on the SDP socket's wait queue,
 * which the callbacks wake.  TCP may have changed on another CPU and not
 * yet called them: what its mask saw is copied to the SDP socket first,
 * so that SO_ERROR, getpeername() and SDP_INFO agree with what poll()
 * says.  POLLERR is the SDP socket's error (the one SO_ERROR reads, not
 * yet read) or TCP's error queue (MSG_ERRQUEUE), but that one not while
 * the socket is connecting: an ICMP error that ends TCP's connect is
 * queued there first (and wakes us) and set as its error a moment later,
 * when SO_ERROR would still have read 0.  The socket leaves SYN_SENT
 * with that error (sdp_fb_mirror()).
 */
__poll_t sdp_fb_poll(struct sdp_sock *ssk, struct file *file)
{
	struct socket *fb = READ_ONCE(ssk->fb.sock);
	struct sock *sk = &ssk->sk;
	__poll_t mask;

	sdp_fb_err_sync(ssk, fb);
	mask = fb->ops->poll(file, fb, NULL) & ~EPOLLERR;
	sdp_fb_mirror(ssk, fb->sk);
	if (READ_ONCE(sk->sk_err) ||
	    (READ_ONCE(sk->sk_state) != TCP_SYN_SENT &&
	     !skb_queue_empty_lockless(&fb->sk->sk_error_queue)))
		mask |= EPOLLERR;
	return mask;
}

int sdp_fb_shutdown(struct sdp_sock *ssk, int how)
{
	struct socket *fb = sdp_fb_sync(ssk);

	return fb->ops->shutdown(fb, how);
}

int sdp_fb_getname(struct sdp_sock *ssk, struct sockaddr *uaddr, int peer)
{
	struct socket *fb = READ_ONCE(ssk->fb.sock);

	return fb->ops->getname(fb, uaddr, peer);
}

int sdp_fb_ioctl(struct sdp_sock *ssk, unsigned int cmd, unsigned long arg)
{
	struct socket *fb = READ_ONCE(ssk->fb.sock);

	return fb->ops->ioctl(fb, cmd, arg);
}

/*
 * Options: SOL_SOCKET ones were set on the SDP socket already (the
 * socket core reads them there); those TCP does not read through
 * sdp_fb_sync() go to the TCP socket too.  Other levels are TCP's.
 */
int sdp_fb_setsockopt(struct sdp_sock *ssk, int level, int optname,
		      sockptr_t optval, unsigned int optlen)
{
	struct socket *fb = READ_ONCE(ssk->fb.sock);

	if (level == SOL_SOCKET)
		return sock_setsockopt(fb, level, optname, optval, optlen);
	/*
	 * No upper layer protocol (kTLS, ...): it would keep our callbacks
	 * as TCP's and call them after this module let go of the socket,
	 * or is gone.
	 */
	if (level == SOL_TCP && optname == TCP_ULP)
		return -EOPNOTSUPP;
	return fb->ops->setsockopt(fb, level, optname, optval, optlen);
}

int sdp_fb_getsockopt(struct sdp_sock *ssk, int level, int optname,
		      char __user *optval, int __user *optlen)
{
	struct socket *fb = READ_ONCE(ssk->fb.sock);

	return fb->ops->getsockopt(fb, level, optname, optval, optlen);
}
