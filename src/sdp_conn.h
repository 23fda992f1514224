/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- one connection: its buffers, rings, credits,
 * flag words and zero-copy state (struct sdp_conn), and the functions of
 * sdp_conn.c that make and release it.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_CONN_H
#define _SDP_CONN_H

#include <linux/list.h>
#include <linux/irq_poll.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "sdp_wire.h"
#include "sdp_zc_pace.h"

struct rdma_cm_id;
struct sdp_device;
struct sdp_sock;

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

/* RDMA reads in flight per QP we ask for (device limits apply). */
#define SDP_RD_ATOM		16
/* Read work requests the send queue holds at least (sdp_conn.c). */
#define SDP_ZC_RD_WRS_MIN	4
/* Scatter entries per send or RDMA read work request we ask for. */
#define SDP_ZC_SGE		32

/* Timeouts are the net.sdp sysctls: sdp_sysctl_*() in sdp_net.h. */

/**
 * struct sdp_buf - a message buffer and its DMA mapping
 * @cqe: completion entry of the work request that uses the buffer
 * @data: the kernel mapping of @size bytes
 * @dma: its DMA address for the connection's device, while @mapped
 * @node: entry in sdp_conn::rx_queue while it holds unread data, or in
 *	sdp_conn::rx_retired (a small receive buffer no longer posted)
 * @len: rx: payload bytes received, or advertised by a SrcAvail;
 *	tx: bytes after the BSDH
 * @off: rx: bytes of @len already read; tx: payload bytes of a slot sent
 *	in parts already sent (SDP_C_TX_PIECE)
 * @part: tx: payload bytes of the part in flight
 * @mid: rx: SDP_MID_DATA or SDP_MID_SRCAVAIL while queued;
 *	tx: the message id the slot carries; ctrl: the one posted
 * @flags: tx: the BSDH flags of the message (SDP_OOB_*)
 * @mapped: @dma is valid: the buffer is mapped for the connection's
 *	device (sdp_buf_map()).  The memory and its mapping are apart, so
 *	that a buffer can outlive the device that last accessed it.
 * @size: bytes of @data: SDP_BUF_SIZE, SDP_BUF_SMALL (a receive ring that
 *	starts small) or SDP_CTRL_SIZE (control); 0 without a buffer
 * @posted: tx and ctrl: when its send was posted (ktime_get_ns()), for
 *	the round-trip time
 *
 * A buffer is posted only while mapped.  Its memory (@data, @dma, @size,
 * @mapped) moves between entries only as a whole (sdp_buf_swap_mem()).
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
	bool mapped;
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
 * set under sdp_sock_list_lock (sdp_diag.c) by the device scan,
 * QP_FATAL, set in whatever context the device reports an error event,
 * and CQ_WAITER and CQ_KICK, the hand-over of a CQ event to a reader
 * (sdp_cq.c), whose own barriers order them.
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
	SDP_C_CM_DREQ,		/* ... our rdma_disconnect() sent a DREQ
				 * first, at cm_dreq_at: the QP stays
				 * until the peer's CM answers it
				 * (sdp_peer_may_send())
				 */
	SDP_C_CM_DISCONNECTED,	/* the CM reported DISCONNECTED */
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
	SDP_C_QP_ERR,		/* an iWARP QP moved to the error state by
				 * an abort (sdp_close_work())
				 */
	SDP_C_QP_FLUSHED,	/* a completion flushed that nothing of
				 * ours explains: sdp_work() waits for the
				 * CM's event, then aborts
				 * (sdp_cq_flush_verdict())
				 */
	SDP_C_CQ_WAITER,	/* a reader sleeps and will poll the CQ
				 * itself if handed its event
				 * (sdp_cq_wait_begin())
				 */
	SDP_C_CQ_KICK,		/* the CQ's event, handed to that reader
				 * (sdp_cq_event())
				 */
	SDP_C_RTR_WAIT,		/* iWARP, passive: nothing goes before the
				 * peer's first Send (sdp_cm_request())
				 */
	SDP_C_ANSWER,		/* a message of ours is due at once: the
				 * peer's first Send came and took a
				 * buffer (sdp_rx_rtr()), its ping asks
				 * (SDP_PING), or our ring grew
				 * (sdp_rx_grow()); any message with a
				 * BSDH answers (sdp_tx_try_control())
				 */
	SDP_C_IW_QP_HELD,	/* iWARP: the iWARP CM holds the QP, from
				 * rdma_connect() or rdma_accept() until
				 * the connect fails or DISCONNECTED; it
				 * is destroyed only after that
				 * (sdp_close_work())
				 */
	SDP_C_IW_CONNECT,	/* iWARP, active: our Hello's rdma_connect()
				 * is sdp_wq's to make or is under way;
				 * the id and QP stay until it returned
				 * (sdp_cm_iw_connect())
				 */
	SDP_C_RX_CLOSED,	/* close() took the receive side: Data or
				 * SrcAvail from now on resets the
				 * connection (sdp_close_take_rx())
				 */
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
	SDP_P_PING,		/* SDP_HF_PING, and our device is iWARP:
				 * keepalive pings, and only a message
				 * from the peer proves it alive
				 * (sdp_keepalive.c)
				 */
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
	SDP_ZT_SENT,		/* its SrcAvail is posted, its bytes counted
				 * in sdp_conn::snd_nxt
				 */
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
 * @declines: our advertisements in a row the peer declined (SendSM, not
 *	as the answer to our SrcAvailCancel), up to SDP_ZC_HOLD_AFTER;
 *	under lock_sock()
 * @held: after SDP_ZC_HOLD_AFTER of them, nothing is advertised until
 *	@hold_until (SDP_ZC_HOLD, jiffies64); both under lock_sock()
 */
struct sdp_zc_tx {
	unsigned long flags;
	struct ib_mr *mr;
	u32 len;
	u32 acked;
	unsigned int slot;
	struct ib_cqe reg_cqe;
	struct ib_cqe inv_cqe;
	u8 declines;
	bool held;
	u64 hold_until;
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
 * @rd_end: when the RDMA read in flight completed (SDP_ZR_RD_DONE)
 * @pace: how slow our recent reads were (sdp_zc_pace.h); under lock_sock()
 * @slow_until: advertisements are declined until then (jiffies64; 0
 *	before the first back-off); under lock_sock()
 *
 * All under sdp_sock::lock, except @rd_pages, @pace and @slow_until.
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
	ktime_t rd_end;
	struct sdp_zc_pace pace;
	u64 slow_until;
};

/**
 * struct sdp_conn - one connection of a socket: its verbs resources, the
 *	rings, credits and sequence numbers, zero-copy state and round-trip
 *	time; created by sdp_conn_setup(), released by sdp_conn_free(), and
 *	started afresh, for a new connect() or a new socket, by
 *	sdp_conn_reset(), which zeroes all of it
 * @poll_lock: held while completions of @cq are processed or @cq is
 *	re-armed, and while sdp_cq_destroy() sets @cq to NULL; initialised
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
 *	of the other size that comes back retires, except a full one while
 *	the shrink is not announced (sdp_rx_reposts()).  @rx_size follows
 *	once our ChRcvBufAck is posted
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
 * @rtr_credits: iWARP, passive: the credits the peer's Hello gave, ours
 *	once its first Send has come (SDP_C_RTR_WAIT)
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
 * @rx_seq: stream bytes received (Data payload, an urgent byte taken
 *	out of band included, and our RDMA Reads of the peer's
 *	advertisements once read)
 * @snd_una: stream bytes sent that the peer has: Data whose send
 *	completed (over iWARP: that the local TCP took), and advertised
 *	bytes the peer's RdmaRdCompl reported
 * @snd_nxt: stream bytes sent: Data posted, and the bytes of our posted
 *	SrcAvail (SDP_ZT_SENT), less what it left unread when it ended
 *	short (that goes again as Data).  While a SrcAvail is out, nothing
 *	is committed behind it, so its bytes are the end of the stream.
 *	Once both ends are idle, @snd_una == @snd_nxt == the peer's
 *	@rx_seq; a resume compares them (sdp-resume.rst)
 * @abort_sent: when our AbortConn was posted (jiffies)
 * @cm_dreq_at: when our rdma_disconnect() sent a DREQ (SDP_C_CM_DREQ)
 * @qp_flushed: when SDP_C_QP_FLUSHED was set (jiffies)
 * @qp_flushed_by: the handler of that flushed completion (for the log)
 * @zc_tx: our advertisement (send side)
 * @zc_rx: the peer's advertisement (receive side)
 * @zc_busy: zero-copy transfers in progress; the QP, CQ, PD and MR stay
 *	until it drops to 0 (sdp_work(), and a connect() again, wait for
 *	it: sdp_conn_quiesce())
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
	int rtr_credits;
	int tx_credits;
	u32 tx_max;
	u32 tx_prev_max;
	u32 tx_max_mseq;
	u32 tx_bytes;
	u32 tx_unposted;
	u64 rx_seq;
	u64 snd_una;
	u64 snd_nxt;

	unsigned long abort_sent;
	unsigned long cm_dreq_at;
	unsigned long qp_flushed;
	void *qp_flushed_by;
	struct sdp_zc_tx zc_tx;
	struct sdp_zc_rx zc_rx;
	unsigned int zc_busy;
	struct sdp_rtt rtt;
};

/* Send ring slot @i (a running index: tx_head, tx_post, tx_tail). */
static inline struct sdp_buf *sdp_tx_slot(struct sdp_conn *c, unsigned int i)
{
	return &c->tx_ring[i % c->tx_count];
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

/* sdp_conn.c */
void sdp_conn_reset(struct sdp_sock *ssk);
int sdp_conn_setup(struct sdp_sock *ssk, struct rdma_cm_id *id, bool passive,
		   bool small);
void sdp_conn_free(struct sdp_sock *ssk, struct rdma_cm_id *id);
int sdp_conn_quiesce(struct sock *sk, long timeo);
int sdp_conn_renew(struct sdp_sock *ssk);
struct rdma_cm_id *sdp_conn_detach(struct sdp_sock *ssk);
void sdp_conn_fatal(struct sdp_sock *ssk, const char *what);
int sdp_conn_qp_error(struct sdp_sock *ssk, __be16 port);

#endif /* _SDP_CONN_H */
