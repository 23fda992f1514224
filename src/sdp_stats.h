/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- statistics, per-network-namespace state and
 * the hooks the data path calls to count and trace what it does.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Two kinds of counters:
 *
 *  - per network namespace: enum sdp_mib_field, per-CPU u64 counters
 *    summed when /proc/net/sdp_stats is read (SDP_INC_STATS() and
 *    SDP_ADD_STATS() work in any context, no lock needed);
 *  - per socket: struct sdp_sock_stats in struct sdp_sock, changed only
 *    under sdp_sock::lock (SDP_SK_INC() / SDP_SK_ADD()) and read without
 *    it by /proc/net/sdp and the sock_diag dump.
 *
 * The data path does not use the macros directly for data messages: it
 * calls sdp_stat_tx_msg(), sdp_stat_rx_msg() and friends, which keep the
 * per-socket and the per-namespace counters in step.  The zero-copy path
 * reports each event with one call (sdp_stat_zcopy_*()), which also
 * fires its tracepoint.  Documentation/networking/sdp.rst describes each
 * counter.
 */
#ifndef _SDP_STATS_H
#define _SDP_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

struct sdp_sock;
struct sock;

/* Per-namespace counters, in the order /proc/net/sdp_stats lists them. */
enum sdp_mib_field {
	/* connections */
	SDP_MIB_ACTIVE_OPENS,		/* connect() started (-> SYN_SENT) */
	SDP_MIB_ACTIVE_ESTAB,		/* ... and was established */
	SDP_MIB_ACTIVE_REFUSED,		/* ... and failed with ECONNREFUSED */
	SDP_MIB_ACTIVE_FAILS,		/* ... and failed otherwise */
	SDP_MIB_PASSIVE_OPENS,		/* request taken by a listener */
	SDP_MIB_PASSIVE_ESTAB,		/* ... and established (accepted) */
	SDP_MIB_PASSIVE_FAILS,		/* ... and failed before that */
	SDP_MIB_PASSIVE_REFUSED,	/* request refused by a listener */
	SDP_MIB_LISTEN_OVERFLOWS,	/* ... of which: backlog was full */
	SDP_MIB_CURR_ESTAB,		/* gauge: ESTABLISHED + CLOSE_WAIT */
	/* memory and half-open connections (sdp_mem.c) */
	SDP_MIB_MEM_PAGES,		/* gauge: pages of buffers held */
	SDP_MIB_MEM_REFUSED,		/* buffers refused above mem max */
	SDP_MIB_MEM_PRESSURE_CONNS,	/* connections made small: pressure */
	SDP_MIB_HALF_OPEN,		/* gauge: requests not yet established */
	SDP_MIB_HALF_OPEN_REFUSED,	/* requests refused: max_half_open */
	/* aborts, by reason (enum sdp_abort_reason) */
	SDP_MIB_ABORT_ON_CLOSE,
	SDP_MIB_ABORT_ON_DATA,
	SDP_MIB_ABORT_ON_TIMEOUT,
	SDP_MIB_ABORT_BY_PEER,
	SDP_MIB_ABORT_ON_PROTO,
	SDP_MIB_ABORT_ON_CQ_ERROR,
	SDP_MIB_ABORT_ON_CM_DISCONNECT,
	SDP_MIB_ABORT_ON_DEVICE_REMOVAL,
	/* buffered-copy path */
	SDP_MIB_BCOPY_TX_BYTES,
	SDP_MIB_BCOPY_TX_MSGS,
	SDP_MIB_BCOPY_RX_BYTES,
	SDP_MIB_BCOPY_RX_MSGS,
	/* zero-copy path */
	SDP_MIB_ZCOPY_TX_BYTES,
	SDP_MIB_ZCOPY_TX_MSGS,
	SDP_MIB_ZCOPY_RX_BYTES,
	SDP_MIB_ZCOPY_RX_MSGS,
	SDP_MIB_ZCOPY_RDMA_READS,
	SDP_MIB_ZCOPY_RDMA_READ_BYTES,
	SDP_MIB_SENDSM_TX,
	SDP_MIB_SENDSM_RX,
	SDP_MIB_SRCAVAIL_CANCEL_TX,
	SDP_MIB_SRCAVAIL_CANCEL_RX,
	SDP_MIB_ZCOPY_FALLBACKS,	/* pages not pinnable: went buffered */
	SDP_MIB_ZCOPY_RINV_TX,		/* RdmaRdCompl with Invalidate sent */
	SDP_MIB_ZCOPY_RINV_RX,		/* our key invalidated by the peer */
	/* control messages and flow control */
	SDP_MIB_CREDIT_UPDATES_TX,
	SDP_MIB_CREDIT_UPDATES_RX,
	SDP_MIB_CREDIT_STALLS,
	SDP_MIB_DISCONN_TX,
	SDP_MIB_DISCONN_RX,
	SDP_MIB_ABORTCONN_TX,
	SDP_MIB_ABORTCONN_RX,
	/* busy polling (sdp_busy_poll()) */
	SDP_MIB_BUSY_POLL_HITS,		/* the poll found what it waited for */
	SDP_MIB_BUSY_POLL_YIELDS,	/* stopped: another task was runnable */

	SDP_MIB_MAX
};

struct sdp_mib {
	u64 mibs[SDP_MIB_MAX];
};

/**
 * struct sdp_net - SDP's state in one network namespace
 * @mib: per-CPU counters
 * @sysctl_hdr: the registered /proc/sys/net/sdp table
 * @sysctl_table: its copy for this namespace
 * @recv_poll: net.sdp.recv_poll, microseconds
 * @fin_timeout: net.sdp.fin_timeout, seconds
 * @resolve_timeout_ms: net.sdp.resolve_timeout_ms
 * @zcopy_thresh: net.sdp.zcopy_thresh, bytes (0: no zero-copy)
 * @mem: net.sdp.mem, pages: min, pressure, max (sdp_mem.c)
 * @max_half_open: net.sdp.max_half_open
 * @mem_pages: pages of connection buffers held in the namespace
 * @half_open: passive connections not yet established
 * @mem_pressure: under memory pressure (between @mem[1] and @mem[0])
 *
 * The sysctl values are written by proc_do*vec_minmax(); readers use
 * READ_ONCE() (through the sdp_sysctl_*() accessors).
 */
struct sdp_net {
	struct sdp_mib __percpu *mib;
	struct ctl_table_header *sysctl_hdr;
	struct ctl_table *sysctl_table;
	int recv_poll;
	int fin_timeout;
	int resolve_timeout_ms;
	int zcopy_thresh;
	unsigned long mem[3];
	int max_half_open;
	atomic_long_t mem_pages;
	atomic_t half_open;
	bool mem_pressure;
};

extern unsigned int sdp_net_id;

static inline struct sdp_net *sdp_net(const struct net *net)
{
	return net_generic(net, sdp_net_id);
}

#define SDP_ADD_STATS(net, field, val) \
	this_cpu_add(sdp_net(net)->mib->mibs[field], (u64)(val))
#define SDP_INC_STATS(net, field)	SDP_ADD_STATS(net, field, 1)
#define SDP_DEC_STATS(net, field)	SDP_ADD_STATS(net, field, -1)

/* Why a connection was aborted: the first reason recorded counts. */
enum sdp_abort_reason {
	SDP_ABORT_NONE,
	SDP_ABORT_ON_CLOSE,	/* close() with unread data, SO_LINGER 0,
				 * or the listener closed before accept()
				 */
	SDP_ABORT_ON_DATA,	/* data arrived for a closed socket */
	SDP_ABORT_ON_TIMEOUT,	/* orphan: peer never finished its close */
	SDP_ABORT_BY_PEER,	/* AbortConn received */
	SDP_ABORT_ON_PROTO,	/* the peer broke the protocol */
	SDP_ABORT_ON_CQ_ERROR,	/* a send or receive completed in error */
	SDP_ABORT_ON_CM_DISCONNECT, /* CM disconnect without DisConn */
	SDP_ABORT_ON_DEVICE_REMOVAL,
};

/**
 * struct sdp_sock_stats - per-socket counters (see /proc/net/sdp)
 * @bcopy_tx_bytes: payload bytes sent in Data messages
 * @bcopy_tx_msgs: Data messages with payload sent
 * @bcopy_rx_bytes: payload bytes received in Data messages
 * @bcopy_rx_msgs: Data messages with payload received
 * @zcopy_tx_bytes: bytes the peer fetched by RDMA Read (completed sends)
 * @zcopy_tx_msgs: zero-copy sends completed (SrcAvail ... RdmaRdCompl)
 * @zcopy_rx_bytes: bytes received by RDMA Read
 * @zcopy_rx_msgs: zero-copy receives completed (SrcAvails consumed)
 * @rdma_reads: RDMA Read work requests posted
 * @sendsm_tx: SendSM messages sent
 * @sendsm_rx: SendSM messages received
 * @srcavail_cancel_tx: SrcAvailCancel messages sent
 * @srcavail_cancel_rx: SrcAvailCancel messages received
 * @srcavail_tx: SrcAvail messages sent
 * @srcavail_rx: SrcAvail messages received
 * @zcopy_fallbacks: zero-copy transfers that went buffered (no pinning)
 * @rinv_tx: RdmaRdCompls we sent with Invalidate of the peer's key
 * @rinv_rx: advertisements of ours whose key the peer invalidated
 * @credit_updates_tx: credit updates (empty Data messages) sent
 * @credit_updates_rx: credit updates received
 * @credit_stalls: times data was ready but had to wait for credits
 * @stalled: data is waiting for credits now
 * @abort_reason: enum sdp_abort_reason of the abort, if any; set once,
 *	with cmpxchg(), by the first sdp_stat_abort()
 * @id: unique among the module's sockets since it was loaded (the
 *	sock_diag cookie); set once when the socket is created
 *
 * Written under sdp_sock::lock with WRITE_ONCE(), read locklessly.
 */
struct sdp_sock_stats {
	u64 bcopy_tx_bytes;
	u64 bcopy_tx_msgs;
	u64 bcopy_rx_bytes;
	u64 bcopy_rx_msgs;
	u64 zcopy_tx_bytes;
	u64 zcopy_tx_msgs;
	u64 zcopy_rx_bytes;
	u64 zcopy_rx_msgs;
	u64 rdma_reads;
	u64 sendsm_tx;
	u64 sendsm_rx;
	u64 srcavail_cancel_tx;
	u64 srcavail_cancel_rx;
	u64 srcavail_tx;
	u64 srcavail_rx;
	u64 zcopy_fallbacks;
	u64 rinv_tx;
	u64 rinv_rx;
	u64 credit_updates_tx;
	u64 credit_updates_rx;
	u64 credit_stalls;
	bool stalled;
	u32 abort_reason;
	u64 id;
};

/* Per-socket counter update; sdp_sock::lock held. */
#define SDP_SK_ADD(ssk, field, val)				\
	do {							\
		__auto_type __p = &(ssk)->stats.field;		\
								\
		WRITE_ONCE(*__p, *__p + (val));			\
	} while (0)
#define SDP_SK_INC(ssk, field)	SDP_SK_ADD(ssk, field, 1)

/* sdp_stats.c: module init/exit (called from sdp_diag_init/exit) */
int sdp_stats_init(void);
void sdp_stats_exit(void);
void sdp_stats_fold(const struct net *net, u64 *vals);
extern const char *const sdp_mib_names[SDP_MIB_MAX];

/*
 * Hooks of the connection and data paths.  Those taking a struct
 * sdp_sock and marked "lock" are called with sdp_sock::lock held.
 */
void sdp_stat_state(struct sock *sk, int oldstate, int newstate);
void sdp_stat_abort(struct sdp_sock *ssk, enum sdp_abort_reason why);
void sdp_trace_abort(struct sdp_sock *ssk, int err, bool send_abort);
void sdp_stat_tx_data(struct sdp_sock *ssk, u32 payload);	/* lock */
void sdp_stat_tx_ctrl(struct sdp_sock *ssk, u8 mid);		/* lock */
void sdp_stat_rx_msg(struct sdp_sock *ssk, u8 mid, u32 payload); /* lock */
void sdp_stat_tx_credits(struct sdp_sock *ssk);		/* lock */

/*
 * Zero-copy events (lock): each updates the socket's and the
 * namespace's counters and fires the matching tracepoint.
 *   sdp_stat_zcopy_tx()      a zero-copy send finished: the peer read
 *                            @bytes (RdmaRdCompl received);
 *   sdp_stat_zcopy_rx()      a SrcAvail was consumed: @bytes arrived
 *                            by RDMA Read in the user's buffer;
 *   sdp_stat_rdma_read()     one RDMA Read work request of @bytes posted;
 *   sdp_stat_zcopy_cancel()  a SrcAvailCancel was sent (@tx) or
 *                            received, for a send of @bytes.
 * SendSM and SrcAvailCancel sent through sdp_post_ctrl() and received
 * through sdp_rx_msg() are counted there already (sdp_stat_tx_ctrl(),
 * sdp_stat_rx_msg()); call sdp_stat_zcopy_cancel() only for the trace.
 */
void sdp_stat_zcopy_tx(struct sdp_sock *ssk, u32 bytes);
void sdp_stat_zcopy_rx(struct sdp_sock *ssk, u32 bytes);
void sdp_stat_rdma_read(struct sdp_sock *ssk, u32 bytes);
void sdp_stat_zcopy_cancel(struct sdp_sock *ssk, u32 bytes, bool tx);

/* sdp_sysctl.c: /proc/sys/net/sdp and the defaults it starts from */
int sdp_sysctl_net_init(struct net *net, struct sdp_net *sn);
void sdp_sysctl_net_exit(struct sdp_net *sn);

static inline unsigned int sdp_sysctl_recv_poll(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->recv_poll);
}

static inline unsigned long sdp_sysctl_fin_timeout(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->fin_timeout) * HZ;
}

static inline int sdp_sysctl_resolve_timeout_ms(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->resolve_timeout_ms);
}

/* Smallest send that goes zero-copy; 0: zero-copy is off. */
static inline unsigned int sdp_sysctl_zcopy_thresh(const struct net *net)
{
	return READ_ONCE(sdp_net(net)->zcopy_thresh);
}

#endif /* _SDP_STATS_H */
