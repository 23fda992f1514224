/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- declarations shared by the module's files.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_H
#define _SDP_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/irq_poll.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/workqueue.h>
#include <net/sock.h>
#include <net/tcp_states.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include <uapi/linux/sdp.h>

#include "sdp_fallback.h"
#include "sdp_proto.h"
#include "sdp_stats.h"
#include "sdp_wire.h"

/* Family number this instance registered under (module parameter). */
extern int sdp_family;
extern struct workqueue_struct *sdp_wq;

/*
 * Buffers.  Every message, in either direction, fits one buffer of
 * SDP_BUF_SIZE bytes (BSDH included; sdp_wire.h); each side posts between
 * SDP_MIN_BUFS and SDP_MAX_BUFS receive buffers (SO_RCVBUF / SDP_BUF_SIZE)
 * and keeps as many send buffers (SO_SNDBUF / SDP_BUF_SIZE).  Control
 * messages (credit updates, DisConn, AbortConn) have a small ring of
 * their own, so that they never wait behind a half-filled data buffer.
 */
#define SDP_MIN_BUFS		4
#define SDP_DEFAULT_BUFS	16
#define SDP_MAX_BUFS		256
/*
 * The fewest receive buffers a connection posts (net.sdp.rx_init_bufs'
 * default and minimum): with four, the peer can send a Data message and
 * then a SrcAvail (which needs three credits, sdp_srcavail_credit_ok())
 * without waiting for a credit update; its second Data message leaves it
 * SDP_DATA_MIN_CREDITS, which makes the ring grow (sdp_rx_grow_due()),
 * and even where it cannot grow, the two buffers those took, reposted,
 * grant SDP_DATA_MIN_CREDITS, so a credit update is due
 * (sdp_credit_update_due()).
 */
#define SDP_RX_INIT_BUFS	4
/* Receive buffers of a passive connection until it is established. */
#define SDP_HALF_OPEN_BUFS	SDP_RX_INIT_BUFS
#define SDP_CTRL_BUFS		4
/* A control message: BSDH and the largest extra header we send there. */
#define SDP_CTRL_SIZE		(sizeof(struct sdp_bsdh) + sizeof(struct sdp_crbah))
static_assert(sizeof(struct sdp_rrch) <= sizeof(struct sdp_crbah));
/* A small receive buffer holds any control message and a SrcAvail. */
static_assert(SDP_CTRL_SIZE <= SDP_BUF_SMALL);
static_assert(sizeof(struct sdp_bsdh) + sizeof(struct sdp_srcah) <=
	      SDP_BUF_SMALL);
static_assert(SDP_MIN_PEER_RCVSZ <= SDP_BUF_SMALL);
static_assert(SDP_BUF_SMALL < SDP_BUF_SIZE);
/*
 * How long sdp_work() lets our AbortConn go out before it takes the QP
 * down anyway (a peer without receive buffers can hold it for ever).
 */
#define SDP_ABORT_DELIVERY	(2 * HZ)

/* RDMA reads in flight per QP we ask for (device limits apply). */
#define SDP_RD_ATOM		16
/* Read work requests the send queue holds at least (sdp_conn.c). */
#define SDP_ZC_RD_WRS_MIN	4
/* Scatter entries per send or RDMA read work request we ask for. */
#define SDP_ZC_SGE		32

/* Timeouts are the net.sdp sysctls: sdp_sysctl_*() in sdp_net.h. */

/**
 * struct sdp_buf - a message buffer, DMA-mapped once for its lifetime
 * @cqe: completion entry of the work request that uses the buffer
 * @data: the kernel mapping of @size bytes
 * @dma: its DMA address
 * @node: entry in sdp_conn::rx_queue while it holds unread data, or in
 *	sdp_conn::rx_retired (a small receive buffer no longer posted)
 * @len: rx: payload bytes received, or advertised by a SrcAvail;
 *	tx: bytes after the BSDH
 * @off: rx: bytes of @len already read
 * @mid: rx: SDP_MID_DATA or SDP_MID_SRCAVAIL while queued;
 *	tx: the message id the slot carries; ctrl: the one posted
 * @flags: tx: the BSDH flags of the message (SDP_OOB_*)
 * @size: bytes of @data: SDP_BUF_SIZE, SDP_BUF_SMALL (a receive ring that
 *	starts small) or SDP_CTRL_SIZE (control); 0 without a buffer
 * @posted: tx and ctrl: when its send was posted (ktime_get_ns()), for
 *	the round-trip time
 */
struct sdp_buf {
	struct ib_cqe cqe;
	void *data;
	u64 dma;
	struct list_head node;
	u32 size;
	u32 len;
	u32 off;
	u32 part;
	u8 mid;
	u8 flags;
	u64 posted;
};

/**
 * struct sdp_rtt - round-trip time of our sends, from posting to the
 *	peer's acknowledgment, estimated as TCP does (RFC 6298); TCP_INFO
 * @srtt8: smoothed, in microseconds times 8 (0: no sample yet)
 * @mdev4: mean deviation, in microseconds times 4
 * @min: the smallest sample, in microseconds
 *
 * Under sdp_sock::lock.
 */
struct sdp_rtt {
	u32 srtt8;
	u32 mdev4;
	u32 min;
};

/* sdp_conn::urg_state: urgent data, as TCP's urg_data (sdp_rx.c) */
enum {
	SDP_URG_NONE,		/* no urgent mark ahead of the reader */
	SDP_URG_VALID,		/* urgent byte received, not read yet */
	SDP_URG_READ,		/* ... read with MSG_OOB; the mark stays */
};

/*
 * The state bits of a socket, in five words by who owns them; all are
 * changed with atomic bitops.  Those of the connection (sdp_conn::flags,
 * ::peer, ::deferred) start at 0 with each connection (sdp_conn_reset());
 * the socket's (sdp_sock::flags, ::opts) last as long as it.
 *
 * sdp_conn::flags (SDP_C_*): the connection's state, under sdp_sock::lock,
 * so that whoever holds it sees them agree with the rings, credits and
 * sk_state (the completion handlers test them under it); except DEV_GONE,
 * set under sdp_sock_list_lock (sdp_diag.c) by the device scan, and
 * QP_FATAL, set in whatever context the device reports an error event.
 */
enum {
	SDP_C_QP,		/* QP, CQ and rings exist */
	SDP_C_ESTABLISHED,	/* the connection was established */
	SDP_C_DISCONN_WANT,	/* send DisConn once data and credits allow */
	SDP_C_DISCONN_SENT,	/* DisConn posted */
	SDP_C_DISCONN_DONE,	/* ... and its send completed */
	SDP_C_DISCONN_RCVD,	/* peer's DisConn received */
	SDP_C_ABORT,		/* aborted (AbortConn sent or received, error) */
	SDP_C_ABORT_SENT,	/* our AbortConn is posted */
	SDP_C_CM_DISCONNECT,	/* rdma_disconnect() called or DISCONNECTED */
	SDP_C_NAGLE,		/* a small write waits in the slot being
				 * filled for the data in flight (Nagle)
				 */
	SDP_C_POLL_AGAIN,	/* the CQ's softirq found poll_lock held
				 * and left the CQ to its holder, which
				 * schedules it again (sdp_cq_unlock_bh())
				 */
	SDP_C_TX_SMALL,		/* Data message tx_small_mseq, shorter than
				 * the peer's buffer, is not acknowledged
				 * yet (Nagle, sdp_tx_hold())
				 */
	SDP_C_RX_ACKED,		/* a ChRcvBufAck of ours is posted: its
				 * size binds from rx_chg_mseq on
				 */
	SDP_C_PEER_RESIZED,	/* the peer's ChRcvBufAck came: messages
				 * from tx_max_mseq on may be tx_max, the
				 * ones before tx_prev_max
				 */
	SDP_C_TX_PIECE,		/* a part of slot tx_post is posted, the
				 * rest waits for its completion
				 * (sdp_tx_push())
				 */
	SDP_C_QP_FATAL,		/* an error event of the QP, the CQ or the
				 * device: sdp_work() aborts
				 * (sdp_conn_fatal())
				 */
	SDP_C_TX_FILLING,	/* sendmsg() is copying into slot tx_head
				 * without the lock: only it may commit it
				 */
	SDP_C_DEV_GONE,		/* seen by the device-removal scan */
};

/*
 * sdp_conn::peer (SDP_P_*): what the peer's Hello or HelloAck offered,
 * set once before the connection carries data (sdp_cm.c), under
 * sdp_sock::lock.
 */
enum {
	SDP_P_RINV,		/* SDP_HF_RINV, and our device can use it */
	SDP_P_RESIZE,		/* SDP_HF_RESIZE */
	SDP_P_SHRINK,		/* ... and SDP_HF_SHRINK */
};

/*
 * sdp_conn::deferred (SDP_D_*): work the completion handlers leave to
 * sdp_work() in process context, which clears the bit and does it (one
 * handler per bit, sdp_timers.c).
 */
enum {
	SDP_D_RX_GROW,		/* the peer runs short of credits: post
				 * the rest of the receive ring
				 */
	SDP_D_RX_RETIRE,	/* buffers of the size we no longer post
				 * came back (rx_retired): replace or free
				 * them
				 */
};

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
	SDP_O_CLOSING,		/* close() began: no fallback from then on */
};

/* struct sdp_zc_tx::flags (SDP_ZT_*): our advertisement; sdp_sock::lock */
enum {
	SDP_ZT_SENDSM,		/* SendSM ended our advertisement */
	SDP_ZT_CANCEL_WANT,	/* send SrcAvailCancel when possible */
	SDP_ZT_CANCEL_SENT,	/* ... it is posted */
	SDP_ZT_INV_DONE,	/* LOCAL_INV completed */
	SDP_ZT_INV_ERR,		/* ... but failed or was flushed */
	SDP_ZT_RINV,		/* the peer invalidated our advertised key */
	SDP_ZT_SQ_WAIT,		/* a registration waits for sdp_zc_sq_acked() */
	SDP_ZT_ASYNC_FILL,	/* sdp_sock::zc_async waits for send ring room */
};

/* struct sdp_zc_rx::flags (SDP_ZR_*): the peer's; sdp_sock::lock */
enum {
	SDP_ZR_SENDSM_WANT,	/* send SendSM when possible */
	SDP_ZR_READING,		/* an RDMA read is in flight */
	SDP_ZR_RD_DONE,		/* ... and completed */
	SDP_ZR_RD_ERR,		/* ... with an error */
	SDP_ZR_RX_CANCEL,	/* the peer cancelled during the read */
	SDP_ZR_RX_INV,		/* send the RdmaRdCompl due with Invalidate */
	SDP_ZR_LOST,		/* advertised bytes an abort left unread: the
				 * reader gets ECONNRESET, not end of stream
				 */
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

/**
 * struct sdp_zc_tx - our zero-copy advertisement (sdp_zc_tx.c)
 * @flags: SDP_ZT_* bits
 * @mr: registration MR for our advertisements, allocated at the first
 *	zero-copy send and reused; under lock_sock() and sdp_sock::tx_mutex
 * @len: bytes of our outstanding SrcAvail (0: none); under sdp_sock::lock
 * @acked: bytes of it the peer reported read; under sdp_sock::lock
 * @slot: send ring index of its SrcAvail; under sdp_sock::lock
 * @reg_cqe: completion of the REG_MR (only errors complete)
 * @inv_cqe: completion of the LOCAL_INV
 */
struct sdp_zc_tx {
	unsigned long flags;
	struct ib_mr *mr;
	u32 len;
	u32 acked;
	unsigned int slot;
	struct ib_cqe reg_cqe;
	struct ib_cqe inv_cqe;
};

/**
 * struct sdp_zc_rx - the peer's advertisement we read (receive side)
 * @flags: SDP_ZR_* bits
 * @buf: the peer's SrcAvail being consumed (queued on sdp_conn::rx_queue)
 * @gen: SrcAvails received, so that a reader can tell the advertisement it
 *	pinned for from a later one
 * @compl: bytes read from it not yet reported in RdmaRdCompl
 * @inv: rkey the RdmaRdCompl due invalidates (SDP_ZR_RX_INV)
 * @rd_len: bytes of the RDMA read in flight (SDP_ZR_READING)
 * @rd_err: why it failed (SDP_ZR_RD_ERR), as sdp_wc_errno() of its first
 *	error other than a flush; 0 if only flushed
 * @rd_cqe: completion of our RDMA read
 * @rd_pages: pages one RDMA read may cover: as many read work requests
 *	as the send queue holds besides the rest (sdp_conn_setup());
 *	set before the connection is used, read-only after
 *
 * All under sdp_sock::lock, except @rd_pages.
 */
struct sdp_zc_rx {
	unsigned long flags;
	struct sdp_buf *buf;
	u32 gen;
	u32 compl;
	u32 inv;
	u32 rd_len;
	int rd_err;
	struct ib_cqe rd_cqe;
	u32 rd_pages;
};

/* A nonblocking MSG_ZEROCOPY send still in progress (sdp_zc_tx.c). */
struct sdp_zc_async;

/**
 * struct sdp_ka - dead-peer detection (sdp_keepalive.c)
 * @last_heard: jiffies of the last completion of ours that succeeded
 *	(a message received or a send acknowledged); written by the CQ
 *	poller under sdp_conn::poll_lock, read with READ_ONCE()
 * @stalled: committed data waits for credits (sdp_tx_credit_stall())
 * @stall_since: when it started waiting
 * @persist_at: when the next persist probe is due
 * @persist_ivl: the interval before that one
 * @probes_out: keepalive probes without an answer
 * @busy: a probe is posted and not completed
 * @cqe: the probe's completion
 *
 * All but @last_heard under sdp_sock::lock.
 */
struct sdp_ka {
	unsigned long last_heard;
	bool stalled;
	unsigned long stall_since;
	unsigned long persist_at;
	unsigned long persist_ivl;
	int probes_out;
	bool busy;
	struct ib_cqe cqe;
};

/**
 * struct sdp_conn - one connection of a socket: its verbs resources, the
 *	rings, credits and sequence numbers, zero-copy state and round-trip
 *	time; created by sdp_conn_setup(), released by sdp_conn_free(), and
 *	started afresh, for a new connect() or a new socket, by
 *	sdp_conn_reset(), which zeroes all of it
 * @poll_lock: held while completions of @cq are processed; initialised
 *	with @cq (sdp_cq_create())
 * @iop: softirq polling of @cq; initialised with it
 * @flags: SDP_C_* bits (the connection's state)
 * @peer: SDP_P_* bits (what the peer offered)
 * @deferred: SDP_D_* bits (work for sdp_work())
 * @sdev: device state, referenced while the QP exists
 * @pd: protection domain of this connection alone, so that an rkey we
 *	advertise works only through this connection's QP
 * @cq: send and receive completion queue (sdp_cq.c)
 * @comp_vector: @cq's completion vector (sdp_device_vector_get())
 * @qp: the RC queue pair (owned by sdp_sock::id)
 * @rx_ring: @rx_slots receive buffer descriptors
 * @rx_slots: descriptors in @rx_ring (the ring size at setup)
 * @rx_count: receive ring size: at most @rx_slots buffers; only comes
 *	down, to @rx_alloc, when it cannot grow (sdp_rx_grow()); written
 *	under sdp_sock::lock and lock_sock()
 * @rx_alloc: ... of which @rx_alloc have a buffer (posted, holding data
 *	or retired), wherever they are in @rx_ring: SDP_HALF_OPEN_BUFS or
 *	net.sdp.rx_init_bufs, all once the peer sent faster than they came
 *	back (sdp_rx_grow_due()), net.sdp.rx_init_bufs again after
 *	net.sdp.rx_idle_ms without data (sdp_rx_ring_idle()); written under
 *	sdp_sock::lock and lock_sock()
 * @rx_queue: received buffers with unread payload, in order
 * @rx_posted: receive buffers posted and not yet completed
 * @rx_size: the largest message the peer may send us, BSDH included: the
 *	size of our receive buffers as we announced it last, in the Hello
 *	or a ChRcvBufAck (sdp_rx.c)
 * @rx_want: the size of the buffers we post from now on: SDP_BUF_SIZE
 *	once the ring grew, SDP_BUF_SMALL again once it shrinks; a buffer
 *	of the other size that comes back retires.  @rx_size follows once
 *	our ChRcvBufAck is posted
 * @rx_small_posted: ... of which SDP_BUF_SMALL buffers
 * @rx_retired: buffers that came back with a size other than @rx_want,
 *	to be replaced or freed (sdp_rx_replace_retired())
 * @rx_chg_mseq: the first message our last ChRcvBufAck applies to; no
 *	other goes before that one came (SDP_C_RX_ACKED)
 * @rx_last: jiffies of the last Data or SrcAvail received
 * @rx_data_run: Data messages received since we last sent data
 *	(sdp_rx_grow_due())
 * @rx_mseq_last: mseq of the last message received
 * @rx_mseq_limit: highest mseq the peer may send given our adverts;
 *	never before @rx_mseq_last (sdp_bsdh_check() refuses a message
 *	beyond it, and an advert never takes back what one allowed)
 * @rx_bytes: unread payload bytes in @rx_queue
 * @urg_ahead: unread bytes before the urgent mark
 * @urg_state: SDP_URG_*; read locklessly by poll()
 * @urg_byte: the urgent byte (SDP_URG_VALID)
 * @tx_ring: @tx_slots send buffer descriptors for data
 * @tx_slots: descriptors in @tx_ring (the ring size asked for)
 * @tx_count: ring size in use, @tx_slots or fewer under memory
 *	pressure; changes only while the ring is empty
 * @tx_alloc: slots of @tx_ring that have a buffer: one more each time
 *	a send needs one and no slot out of use has one to give
 *	(sdp_tx_slot_ready()), up to @tx_count, 0 again after
 *	net.sdp.tx_idle_ms without a send (sdp_tx_ring_idle()); changed
 *	under lock_sock() and sdp_sock::lock
 * @tx_last: jiffies of the last sendmsg() that had the buffers
 * @tx_held: jiffies (never 0) since the slot being filled is held back
 *	for MSG_MORE or TCP_CORK, or for Nagle behind a small message
 *	(SDP_C_TX_SMALL), or 0; it goes after SDP_TX_CORK_MAX (as TCP's),
 *	or SDP_TX_NAGLE_MAX
 * @tx_small_mseq: mseq of our last Data message shorter than the peer's
 *	buffer (SDP_C_TX_SMALL)
 * @tx_head: data slots committed (the next one is being filled)
 * @tx_post: data slots posted (a slot bigger than the peer's buffers
 *	goes in parts, one at a time: SDP_C_TX_PIECE, sdp_buf::off)
 * @tx_tail: data slots whose send completed
 * @tx_fill: payload bytes in slot @tx_head that is being filled
 * @ctrl_ring: SDP_CTRL_BUFS buffers for control messages
 * @ctrl_head: control slots posted
 * @ctrl_tail: control slots completed
 * @tx_mseq_next: mseq of the next message we send
 * @tx_credits: messages we may send (peer's posted buffers); below 0
 *	only when the peer's BSDH says so (more of ours in flight than it
 *	has buffers), never by our sending: a message goes only with a
 *	credit to take (sdp_data_credit_ok(), sdp_ctrl_credit_ok())
 * @tx_max: largest message the peer accepts (BSDH included)
 * @tx_prev_max: ... before its last ChRcvBufAck (SDP_C_PEER_RESIZED),
 *	which still binds the messages before @tx_max_mseq (sdp_tx_push())
 * @tx_max_mseq: the first mseq that @tx_max binds
 * @tx_bytes: payload bytes posted and not yet completed, plus @tx_fill
 *	and @tx_unposted
 * @tx_unposted: payload bytes in committed slots not yet posted
 * @abort_sent: when our AbortConn was posted (jiffies)
 * @zc_tx: our advertisement (send side)
 * @zc_rx: the peer's advertisement (receive side)
 * @zc_busy: zero-copy transfers in progress; the QP, CQ, PD and MR stay
 *	until it drops to 0 (sdp_work(), and a connect() again, wait for
 *	it: sdp_zc_quiesce())
 * @rtt: round-trip time of our sends (sdp_tx.c)
 *
 * Written under sdp_sock::lock, the verbs resources also under
 * lock_sock(), unless said otherwise.
 */
struct sdp_conn {
	spinlock_t poll_lock;	/* see above */
	struct irq_poll iop;

	unsigned long flags;
	unsigned long peer;
	unsigned long deferred;

	struct sdp_device *sdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	int comp_vector;
	struct ib_qp *qp;

	struct sdp_buf *rx_ring;
	unsigned int rx_slots;
	unsigned int rx_count;
	unsigned int rx_alloc;
	struct list_head rx_queue;
	unsigned int rx_posted;
	u32 rx_size;
	u32 rx_want;
	unsigned int rx_small_posted;
	struct list_head rx_retired;
	u32 rx_chg_mseq;
	unsigned long rx_last;
	unsigned int rx_data_run;
	u32 rx_mseq_last;
	u32 rx_mseq_limit;
	u32 rx_bytes;
	u32 urg_ahead;
	u8 urg_state;
	u8 urg_byte;

	struct sdp_buf *tx_ring;
	unsigned int tx_slots;
	unsigned int tx_count;
	unsigned int tx_alloc;
	unsigned long tx_last;
	unsigned long tx_held;
	u32 tx_small_mseq;
	unsigned int tx_head;
	unsigned int tx_post;
	unsigned int tx_tail;
	u32 tx_fill;
	struct sdp_buf *ctrl_ring;
	unsigned int ctrl_head;
	unsigned int ctrl_tail;
	u32 tx_mseq_next;
	int tx_credits;
	u32 tx_max;
	u32 tx_prev_max;
	u32 tx_max_mseq;
	u32 tx_bytes;
	u32 tx_unposted;

	unsigned long abort_sent;
	struct sdp_zc_tx zc_tx;
	struct sdp_zc_rx zc_rx;
	unsigned int zc_busy;
	struct sdp_rtt rtt;
};

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
 *	advertisement ended (sdp_zcopy.c), or NULL; no other data goes
 *	while it is there.  Set and cleared under lock_sock() and @lock;
 *	its contents under lock_sock() (sdp_work())
 * @zc_gather: pages spliced to the socket (sendfile(), splice()) being
 *	gathered for one advertisement, or NULL (sdp_zcopy.c); while
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
 * @stats: per-socket counters (sdp_stats.h), under @lock
 */
struct sdp_sock {
	struct sock sk;
	struct list_head node;
	spinlock_t lock;	/* see above */
	unsigned long flags;
	unsigned long opts;

	struct rdma_cm_id *id;
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

/**
 * struct sdp_device - per-RDMA-device state
 * @ibdev: the device; valid until sdp_remove_one() for it returns
 * @list: entry in sdp_dev_list, protected by sdp_dev_lock
 * @ref: held by sdp_dev_list and by every connection with a QP on the
 *	device; the last sdp_device_put() frees it
 * @removing: the device is going away; sdp_device_get() fails
 * @reg_acked: register memory only on a send queue with nothing
 *	unacknowledged (Soft-RoCE, sdp_add_one())
 * @event: the device's asynchronous events (IB_EVENT_DEVICE_FATAL)
 * @fatal_work: aborts every connection on a device that failed
 */
struct sdp_device {
	struct ib_device *ibdev;
	struct list_head list;
	struct kref ref;
	bool removing;
	bool reg_acked;
	atomic_t *vec_use;	/* CQs on each completion vector */
	struct ib_event_handler event;
	struct work_struct fatal_work;
};

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

/* Send ring slot @i (a running index: tx_head, tx_post, tx_tail). */
static inline struct sdp_buf *sdp_tx_slot(struct sdp_conn *c, unsigned int i)
{
	return &c->tx_ring[i % c->tx_count];
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

/* sdp_close.c: the close and abort state machine */
void __sdp_abort(struct sdp_sock *ssk, enum sdp_abort_reason why, int err);
void sdp_abort(struct sdp_sock *ssk, enum sdp_abort_reason why, int err);
bool sdp_abort_in_flight(const struct sdp_sock *ssk);
void sdp_close_check_done(struct sdp_sock *ssk);
void sdp_close_disconn_rcvd(struct sdp_sock *ssk);
void sdp_close_disconn_done(struct sdp_sock *ssk);
void sdp_close_cm_disconnected(struct sdp_sock *ssk, struct rdma_cm_id *id);
int sdp_shutdown(struct socket *sock, int how);
int sdp_release(struct socket *sock);
struct sock *sdp_close_child_unlink(struct sdp_sock *ssk);
struct rdma_cm_id *sdp_close_work(struct sdp_sock *ssk, unsigned long *again);

/* sdp_timers.c: deferred and timed work */
void sdp_queue_work(struct sdp_sock *ssk);
void sdp_queue_work_delayed(struct sdp_sock *ssk, unsigned long delay);
void sdp_queue_work_within(struct sdp_sock *ssk, unsigned long delay);
void sdp_work(struct work_struct *work);
void sdp_timeout_arm(struct sdp_sock *ssk);
void sdp_timeout_cancel(struct sdp_sock *ssk);
void sdp_timeout_work(struct work_struct *work);

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

/*
 * The error a failed completion of ours gives the socket: a peer that
 * stopped acknowledging (the QP's retries ran out) timed out, as TCP
 * reports it; anything else reset the connection.
 */
static inline int sdp_wc_errno(enum ib_wc_status status)
{
	return status == IB_WC_RETRY_EXC_ERR ? -ETIMEDOUT : -ECONNRESET;
}

/* sdp_keepalive.c */
void sdp_ka_init(struct sdp_sock *ssk);
void sdp_ka_established(struct sdp_sock *ssk);
void sdp_ka_credit_stall(struct sdp_sock *ssk, bool stalled);
void sdp_ka_changed(struct sock *sk);
void sdp_ka_set(struct sock *sk, int on);
void sdp_ka_stop(struct sdp_sock *ssk);

/* sdp_cm.c */
int sdp_cm_create_id(struct sdp_sock *ssk);
int sdp_cm_bind(struct sdp_sock *ssk, const struct sockaddr_storage *ss);
bool sdp_child_unlink(struct sdp_sock *child);
void sdp_connect_failed_fb(struct sdp_sock *ssk, int err,
			   enum sdp_fallback_reason why);

/* sdp_conn.c: a connection's verbs resources */
void sdp_conn_reset(struct sdp_sock *ssk);
int sdp_conn_setup(struct sdp_sock *ssk, struct rdma_cm_id *id, bool passive,
		   bool small);
void sdp_conn_free(struct sdp_sock *ssk, struct rdma_cm_id *id);
int sdp_conn_renew(struct sdp_sock *ssk);
struct rdma_cm_id *sdp_conn_detach(struct sdp_sock *ssk);
void sdp_conn_fatal(struct sdp_sock *ssk, const char *what);
int sdp_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/* Before waiting: -EAGAIN when the timeout is over, -EINTR etc. on a signal */
static inline int sdp_wait_check(long timeo)
{
	if (!timeo)
		return -EAGAIN;
	if (signal_pending(current))
		return sock_intr_errno(timeo);
	return 0;
}

/* sdp_cq.c */
struct sdp_buf *sdp_ring_alloc(unsigned int n,
			       void (*done)(struct ib_cq *cq, struct ib_wc *wc));
int sdp_ring_fill(struct ib_device *dev, struct sdp_buf *ring,
		  unsigned int from, unsigned int to, size_t size,
		  enum dma_data_direction dir);
void sdp_buf_free(struct ib_device *dev, struct sdp_buf *b,
		  enum dma_data_direction dir);
void sdp_ring_drain(struct ib_device *dev, struct sdp_buf *ring,
		    unsigned int from, unsigned int to,
		    enum dma_data_direction dir);
void sdp_ring_free(struct ib_device *dev, struct sdp_buf *ring,
		   unsigned int n, enum dma_data_direction dir);
int sdp_cq_create(struct sdp_sock *ssk, int ncqe);
void sdp_cq_process_pending(struct sdp_sock *ssk);
void sdp_cq_destroy(struct sdp_sock *ssk);
void sdp_busy_poll(struct sock *sk, bool (*done)(struct sock *sk, size_t arg),
		   size_t arg);

/* sdp_tx.c */
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

int sdp_tx_ring_alloc(struct sdp_sock *ssk);
void sdp_tx_ring_ready(struct sdp_sock *ssk);
int sdp_tx_slot_ready(struct sdp_sock *ssk);
bool sdp_tx_slot_has_buf(const struct sdp_sock *ssk);
unsigned long sdp_tx_ring_idle(struct sdp_sock *ssk);
/* A write held back for MSG_MORE or TCP_CORK goes after this (TCP's). */
#define SDP_TX_CORK_MAX		(HZ / 5)
/*
 * ... and one held by Nagle behind a small message the peer has not
 * acknowledged goes after this: the peer acknowledges with its next
 * message, which may not come (TCP's delayed ACK comes after 40 ms).
 */
#define SDP_TX_NAGLE_MAX	msecs_to_jiffies(5)
unsigned long sdp_tx_cork_expire(struct sdp_sock *ssk);
void sdp_tx_ring_free(struct sdp_sock *ssk);
bool sdp_tx_writable(const struct sdp_sock *ssk);
bool sdp_tx_room(const struct sdp_sock *ssk);
u32 sdp_tx_notsent(const struct sdp_sock *ssk);
ssize_t sdp_tx_fill(struct sdp_sock *ssk, struct iov_iter *from, size_t max,
		    bool keep);
void sdp_rx_urg_advance(struct sdp_sock *ssk, u32 n);

/* sdp_sockopt.c */
int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen);
int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen);
int sdp_sendmsg_locked(struct sock *sk, struct msghdr *msg, size_t len,
		       struct sk_buff **zc_note, bool spliced);
void sdp_tx_flush(struct sdp_sock *ssk);
void sdp_tx_try_control(struct sdp_sock *ssk);
void sdp_tx_repack(struct sdp_sock *ssk);
u32 sdp_credit_grant(const struct sdp_sock *ssk);
void sdp_fill_bsdh(struct sdp_sock *ssk, struct sdp_bsdh *h, u8 mid, u32 len,
		   bool seq);
bool sdp_tx_idle(const struct sdp_sock *ssk);
int sdp_post_send(struct sdp_sock *ssk, struct sdp_buf *b, u32 off, u32 len,
		  const u32 *inv);
void sdp_rtt_sample(struct sdp_sock *ssk, const struct sdp_buf *b);

/* sdp_ctrl.c */
int sdp_post_ctrl(struct sdp_sock *ssk, u8 mid);
int __sdp_post_ctrl(struct sdp_sock *ssk, u8 mid, const void *ext, u32 extlen,
		    const u32 *inv);
void sdp_tx_chrcvbuf_ack(struct sdp_sock *ssk);
void sdp_ctrl_done(struct ib_cq *cq, struct ib_wc *wc);

/* sdp_rx.c */
int sdp_rx_ring_alloc(struct sdp_sock *ssk, unsigned int n);
void sdp_rx_ring_free(struct sdp_sock *ssk);
int sdp_rx_post_all(struct sdp_sock *ssk);
void sdp_rx_grow(struct sdp_sock *ssk, unsigned int to);
void sdp_rx_replace_retired(struct sdp_sock *ssk);
unsigned long sdp_rx_ring_idle(struct sdp_sock *ssk);
int sdp_recvmsg_locked(struct sock *sk, struct msghdr *msg, size_t len,
		       int flags);
void sdp_rx_purge(struct sdp_sock *ssk);
void sdp_rx_consumed(struct sdp_sock *ssk, struct sdp_buf *b);

/* sdp_msgzc.c: MSG_ZEROCOPY's notifications */
int sdp_msgzc_setsockopt(struct socket *sock, int optname, sockptr_t optval,
			 unsigned int optlen);
int sdp_msgzc_start(struct sock *sk, struct msghdr *msg, struct sk_buff **skb);
void sdp_msgzc_end(struct sock *sk, struct sk_buff *skb, int sent,
		   bool copied);
u32 sdp_msgzc_id(struct sock *sk);
void sdp_msgzc_queue(struct sock *sk, struct sk_buff *skb, u32 id,
		     bool copied);
int sdp_msgzc_recv(struct sock *sk, struct msghdr *msg, size_t len);

/* sdp_mem.c */
void sdp_mem_net_init(struct sdp_net *sn);
bool sdp_mem_under_pressure(const struct net *net);
int sdp_mem_charge(struct sdp_sock *ssk, unsigned int bufs, u32 size,
		   bool force);
void sdp_mem_uncharge(struct sdp_sock *ssk, unsigned int bufs, u32 size);
void sdp_mem_uncharge_all(struct sdp_sock *ssk);
void sdp_mem_ring_bufs(const struct sock *sk, unsigned int *rx,
		       unsigned int *tx);
bool sdp_half_open_start(struct sdp_sock *child);
void sdp_half_open_done(struct sdp_sock *ssk);
void sdp_memcg_inherit(struct sock *sk, const struct sock *parent);

/* Allocations from here on are charged to @sk's memory cgroup. */
static inline struct mem_cgroup *sdp_memcg_enter(struct sock *sk)
{
	return set_active_memcg(sk->sk_memcg);
}

static inline void sdp_memcg_leave(struct mem_cgroup *old)
{
	set_active_memcg(old);
}

/* sdp_dev.c */
int sdp_dev_init(void);
void sdp_dev_exit(void);
struct sdp_device *sdp_device_get(struct ib_device *ibdev);
void sdp_device_put(struct sdp_device *sdev);
int sdp_device_vector_get(struct sdp_device *sdev);
void sdp_device_vector_put(struct sdp_device *sdev, int vector);

/* sdp_diag.c */
void sdp_sock_link(struct sdp_sock *ssk);
void sdp_sock_unlink(struct sdp_sock *ssk);
void sdp_sock_clear_dev_gone(struct sdp_sock *ssk);
#define SDP_SCAN_BATCH	64
int sdp_sock_scan(bool (*match)(struct sdp_sock *ssk, void *arg),
		  void (*fn)(struct sdp_sock *ssk, void *arg), void *arg);
int sdp_diag_init(void);
void sdp_diag_exit(void);
int sdp_proc_init(void);
void sdp_proc_exit(void);

#endif /* _SDP_H */
