/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the socket (struct sdp_sock) and what every
 * part of the module asks of it.  Each subsystem declares its own
 * functions in its own header: sdp_conn.h (a connection), sdp_cm.h,
 * sdp_tx.h, sdp_ctrl.h, sdp_rx.h, sdp_cq.h, sdp_zc.h, sdp_close.h,
 * sdp_ka.h, sdp_fallback.h, sdp_mem.h, sdp_dev.h, sdp_diag.h, sdp_net.h,
 * sdp_stats.h.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_H
#define _SDP_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp_states.h>

#include <uapi/linux/sdp.h>

#include "sdp_conn.h"
#include "sdp_fallback.h"
#include "sdp_ka.h"
#include "sdp_resume.h"
#include "sdp_stats.h"

/* Family number this instance registered under (module parameter). */
extern int sdp_family;
extern struct workqueue_struct *sdp_wq;

/*
 * sdp_sock::flags (SDP_F_*): a passive socket's place with its listener;
 * QUEUED under the listener's sdp_sock::lock with the accept queue.
 */
enum {
	SDP_F_QUEUED,		/* moved to the accept queue */
	SDP_F_HALF_OPEN,	/* counted as half open (sdp_mem.c); set
				 * before the socket is visible, cleared
				 * once with test_and_clear_bit()
				 */
};

/*
 * sdp_sock::opts (SDP_O_*): addressing and options, under lock_sock().
 * An accepted socket inherits V6, NODELAY and CORK from its listener.
 */
enum {
	SDP_O_V6,		/* user addresses are AF_INET6 */
	SDP_O_BOUND,		/* bind()/listen()/connect() gave a port */
	SDP_O_USER_BOUND,	/* ... bind() did: the address is kept across
				 * connect attempts
				 */
	SDP_O_USER_PORT,	/* ... to a port it named: kept too */
	SDP_O_ID_USED,		/* the CM id was used to connect */
	SDP_O_NODELAY,		/* TCP_NODELAY */
	SDP_O_CORK,		/* TCP_CORK */
	SDP_O_FB_SET,		/* SDP_TCP_FALLBACK set on the socket: */
	SDP_O_FB_ON,		/* ... its value (else net.sdp.tcp_fallback) */
	SDP_O_FB_TMO_SET,	/* SDP_TCP_FALLBACK_TIMEOUT set: sdp_fb::timeout_ms */
	SDP_O_NO_IWARP,		/* SDP_NO_IWARP: no SDP attempt over iWARP */
	SDP_O_CLOSING,		/* close() began: no fallback from then on */
};

/* TCP_CA_NAME_MAX: a TCP_CONGESTION name with its NUL (sdp_sockopt.c) */
#define SDP_CA_NAME_MAX	16

/**
 * struct sdp_tcp_opts - TCP options a program set (sdp_sockopt.c)
 * @maxseg: TCP_MAXSEG (0: not set)
 * @keepidle: TCP_KEEPIDLE, seconds (0: the namespace's TCP default)
 * @keepintvl: TCP_KEEPINTVL, seconds (0: default)
 * @keepcnt: TCP_KEEPCNT (0: default)
 * @user_timeout: TCP_USER_TIMEOUT, ms
 * @syncnt: TCP_SYNCNT (0: default)
 * @fastopen: TCP_FASTOPEN queue length
 * @notsent_lowat: TCP_NOTSENT_LOWAT: sendmsg() and poll() see no room
 *	while this many bytes of committed messages wait to be posted (0:
 *	no bound); read locklessly by sdp_tx_writable()
 * @defer_accept: TCP_DEFER_ACCEPT, kept as TCP keeps it (retransmits)
 * @quickack_off: TCP_QUICKACK was set to 0
 * @fastopen_connect: TCP_FASTOPEN_CONNECT
 * @inq: TCP_INQ: each receive gives the bytes left to read (TCP_CM_INQ)
 * @linger2: TCP_LINGER2, jiffies: how long the socket, closed, waits for
 *	its peer before it is aborted (0: net.sdp.fin_timeout; -1: closed
 *	in FIN_WAIT2, at once)
 * @tos: IP_TOS, the type of service of a connection to an IPv4 address
 * @tclass: IPV6_TCLASS, the same to an IPv6 one
 * @v6only: IPV6_V6ONLY (from net.ipv6.bindv6only)
 * @congestion: TCP_CONGESTION's name as set ("" if not): no effect on
 *	SDP, given to the TCP socket of a fallback
 *
 * Under lock_sock().  @notsent_lowat and the keepalive values and
 * @user_timeout change what SDP does (the timer of sdp_keepalive.c reads
 * them locklessly).
 */
struct sdp_tcp_opts {
	int maxseg;
	int keepidle;
	int keepintvl;
	int keepcnt;
	int user_timeout;
	int syncnt;
	int fastopen;
	u32 notsent_lowat;
	int linger2;
	u8 defer_accept;
	bool quickack_off;
	bool fastopen_connect;
	bool inq;
	u8 tos;
	u8 tclass;
	bool v6only;
	char congestion[SDP_CA_NAME_MAX];
};

/* A nonblocking MSG_ZEROCOPY send still in progress (sdp_zc_tx.c). */
struct sdp_zc_async;

/**
 * struct sdp_sock - an SDP socket
 * @sk: the generic socket; must stay first
 * @node: entry in the diagnostics list (sdp_diag.c)
 * @lock: protects sk_state changes, the bits of @conn, its ring indices,
 *	credits and sequence numbers, its rx_queue and the listener's
 *	@accept_queue / @pending lists.  Taken from the CQ's softirq
 *	context: process context takes it with _bh, inside lock_sock().
 * @flags: SDP_F_* bits (a passive socket and its listener)
 * @opts: SDP_O_* bits (addressing and options)
 * @id: the RDMA CM id; changed only under lock_sock()
 * @id4: a dual-stack listener's CM id for its IPv4 clients, or NULL
 *	(sdp_cm_listen_v4()); changed only under lock_sock()
 * @conn: the connection (sdp_conn.c)
 * @saddr: local address (AF_UNSPEC until bound); under lock_sock()
 * @daddr: peer address (AF_UNSPEC until connected); under lock_sock()
 * @parent: listener, for a passive socket not yet accepted (referenced)
 * @accept_queue: listener: established children waiting for accept()
 * @pending: listener: children whose connection is not yet established
 * @child_node: child: entry in the parent's @accept_queue or @pending
 * @work: deferred and timed process-context work (sdp_work(),
 *	sdp_timers.c)
 * @timeout_work: abort an orphaned socket the peer never closes
 * @tx_mutex: held across sendmsg(), so that a zero-copy send and its
 *	buffered remainder are not interleaved with another thread's data
 * @zc_thresh: SDP_ZCOPY_THRESH; under lock_sock()
 * @tcp: TCP options set (sdp_sockopt.c); under lock_sock()
 * @fb: the in-kernel fallback to TCP (sdp_fallback.c)
 * @conn_gen: bumped whenever a connection's resources go
 *	(sdp_conn_detach()), so that a call that slept without lock_sock()
 *	sees whether the connection it started on is still there, and not
 *	another one made by a connect() again meanwhile; under lock_sock()
 * @zc_async: a nonblocking MSG_ZEROCOPY send that returned before its
 *	advertisement ended (sdp_zc_tx.c), or NULL; no other data goes
 *	while it is there.  Set and cleared under lock_sock() and @lock;
 *	its contents under lock_sock() (sdp_work())
 * @zc_gather: pages spliced to the socket (sendfile(), splice()) being
 *	gathered for one advertisement, or NULL (sdp_zc_tx.c); while
 *	@zc_async is in progress they are the next to go: once sealed,
 *	they become @zc_async when it ends.  Set and cleared under
 *	lock_sock() and @lock
 * @zc_spliced: bytes of the spliced pages @zc_gather and @zc_async hold,
 *	within the send buffer (sdp_zc_splice()); their pages are in
 *	@mem_pages.  Written under lock_sock() and @lock
 * @mem_pages: pages of buffers, and of spliced pages held, charged to the
 *	namespace (sdp_mem.c); under lock_sock()
 * @ka: keepalive and persist probes (sdp_keepalive.c); its timer is
 *	sk->sk_timer
 * @rsm: what resuming the connection needs (sdp_resume.c)
 * @stats: per-socket counters (sdp_stats.h), under @lock
 */
struct sdp_sock {
	struct sock sk;
	struct list_head node;
	spinlock_t lock;	/* see above */
	unsigned long flags;
	unsigned long opts;

	struct rdma_cm_id *id;
	struct rdma_cm_id *id4;
	struct sdp_conn conn;

	struct sockaddr_storage saddr;
	struct sockaddr_storage daddr;

	struct sock *parent;
	struct list_head accept_queue;
	struct list_head pending;
	struct list_head child_node;

	struct delayed_work work;
	struct delayed_work timeout_work;

	struct mutex tx_mutex;	/* see above */
	int zc_thresh;
	struct sdp_tcp_opts tcp;
	struct sdp_fb fb;
	u32 conn_gen;
	struct sdp_zc_async *zc_async;
	struct sdp_zc_async *zc_gather;
	u32 zc_spliced;
	long mem_pages;
	struct sdp_ka ka;
	struct sdp_rsm rsm;
	struct sdp_sock_stats stats;
};

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return container_of(sk, struct sdp_sock, sk);
}

/*
 * Rate-limited warning about what a peer did, naming it by the cached
 * peer address (valid whatever state the CM id is in).
 */
#define sdp_warn_peer(ssk, fmt, ...)					\
	net_warn_ratelimited("%pISpc: " fmt, &(ssk)->daddr, ##__VA_ARGS__)

/*
 * Is a send of ours in flight (data, control message or RDMA read)?
 * sdp_sock::lock held.
 */
static inline bool sdp_sends_in_flight(const struct sdp_sock *ssk)
{
	return ssk->conn.tx_post != ssk->conn.tx_tail ||
	       test_bit(SDP_C_TX_PIECE, &ssk->conn.flags) ||
	       ssk->conn.ctrl_head != ssk->conn.ctrl_tail ||
	       (test_bit(SDP_ZR_READING, &ssk->conn.zc_rx.flags) &&
		!test_bit(SDP_ZR_RD_DONE, &ssk->conn.zc_rx.flags));
}

/* Is the socket connected (established or closing)? */
static inline bool sdp_connected(const struct sock *sk)
{
	return (1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT |
				      TCPF_FIN_WAIT1 | TCPF_FIN_WAIT2 |
				      TCPF_CLOSING | TCPF_LAST_ACK);
}

/* af_sdp.c */
struct sock *sdp_sock_alloc(struct net *net, struct sock *parent, int kern);
void sdp_set_state(struct sock *sk, int state);

/* sdp_sock_list.c: sdp_sock_list, under sdp_sock_list_lock (_bh) */
extern spinlock_t sdp_sock_list_lock;
extern struct list_head sdp_sock_list;
void sdp_sock_link(struct sdp_sock *ssk);
void sdp_sock_unlink(struct sdp_sock *ssk);
void sdp_sock_clear_dev_gone(struct sdp_sock *ssk);
#define SDP_SCAN_BATCH	64
int sdp_sock_scan(bool (*match)(struct sdp_sock *ssk, void *arg),
		  void (*fn)(struct sdp_sock *ssk, void *arg), void *arg);

/* The port of a sockaddr_in or sockaddr_in6. */
static inline __be16 sdp_addr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return ((const struct sockaddr_in *)sa)->sin_port;
}

static inline void sdp_addr_set_port(struct sockaddr *sa, u16 port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

/* Before waiting: -EAGAIN when the timeout is over, -EINTR etc. on a signal */
static inline int sdp_wait_check(long timeo)
{
	if (!timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(timeo);
	return 0;
}

/*
 * Wake the socket's sleepers in @mode: TASK_INTERRUPTIBLE, the socket
 * calls' waits; TASK_NORMAL, the uninterruptible zero-copy waits too.
 * From any context: the socket may be an orphan by now, without a wait
 * queue.
 */
static inline void sdp_sock_wake(struct sdp_sock *ssk, unsigned int mode)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(ssk->sk.sk_wq);
	if (wq)
		__wake_up(&wq->wait, mode, 0, NULL);
	rcu_read_unlock();
}

/* Can the QP carry our messages: it exists, no abort, no disconnect? */
static inline bool sdp_tx_usable(const struct sdp_sock *ssk)
{
	return test_bit(SDP_C_QP, &ssk->conn.flags) &&
	       !test_bit(SDP_C_ABORT, &ssk->conn.flags) &&
	       !test_bit(SDP_C_CM_DISCONNECT, &ssk->conn.flags);
}

/* The TCP socket a fallen-back socket uses, or NULL. */
static inline struct socket *sdp_fb(const struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->fb.on) ? READ_ONCE(ssk->fb.sock) : NULL;
}

/* Why a fallen-back socket uses TCP (enum sdp_fallback_reason), else 0. */
static inline u8 sdp_fb_reason(const struct sdp_sock *ssk)
{
	return sdp_fb(ssk) ? READ_ONCE(ssk->fb.reason) : SDP_FB_NONE;
}

#endif /* _SDP_H */
