/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Sockets Direct Protocol (SDP) -- socket listing over sock_diag netlink.
 *
 * A program lists the SDP sockets of its network namespace as ss(8)
 * lists TCP ones: it opens socket(AF_NETLINK, SOCK_DGRAM,
 * NETLINK_SOCK_DIAG) and sends a SOCK_DIAG_BY_FAMILY request with
 * NLM_F_REQUEST | NLM_F_DUMP whose payload is a struct sdp_diag_req with
 * sdiag_family = AF_INET_SDP (or the family the module was loaded with).
 * The answer is one SOCK_DIAG_BY_FAMILY message per socket, a struct
 * sdp_diag_msg followed by the netlink attributes asked for in
 * sdiag_ext, then NLMSG_DONE.  tools/sdpstat.c is a complete client.
 *
 * Only dumps are supported; a request without NLM_F_DUMP fails with
 * EOPNOTSUPP.  The request also loads the module if it is not loaded.
 */
#ifndef _UAPI_LINUX_SDP_DIAG_H
#define _UAPI_LINUX_SDP_DIAG_H

#include <linux/types.h>

/**
 * struct sdp_diag_req - SOCK_DIAG_BY_FAMILY request for SDP sockets
 * @sdiag_family: AF_INET_SDP (the family number the module registered)
 * @sdiag_protocol: 0
 * @pad: 0
 * @sdiag_states: bit mask of TCP states to list (1 << TCP_LISTEN, ...);
 *	~0 for all
 * @sdiag_ext: bit mask of attributes wanted, 1 << (SDP_DIAG_* - 1)
 * @sdiag_ino: list only the socket with this inode number (0: all)
 */
struct sdp_diag_req {
	__u8	sdiag_family;
	__u8	sdiag_protocol;
	__u16	pad;
	__u32	sdiag_states;
	__u32	sdiag_ext;
	__u32	sdiag_ino;
};

/**
 * struct sdp_diag_msg - one SDP socket
 * @sdiag_family: the family the socket's owner uses: AF_INET or AF_INET6
 *	(IPv4 addresses of an AF_INET6 socket are given v4-mapped)
 * @sdiag_state: TCP state number (TCP_ESTABLISHED, TCP_LISTEN, ...)
 * @pad: 0
 * @sdiag_sport: local port, network byte order
 * @sdiag_dport: remote port, network byte order
 * @sdiag_src: local address (IPv4 in the first word), network byte order
 * @sdiag_dst: remote address, likewise
 * @sdiag_uid: owner's user id (in the reader's user namespace)
 * @sdiag_inode: inode number of the socket (0 once closed by its owner)
 * @sdiag_rqueue: listener: connections waiting for accept(); others:
 *	bytes received and not read
 * @sdiag_wqueue: listener: the backlog; others: bytes written and not yet
 *	delivered
 * @sdiag_cookie: an id of the socket, unique among the SDP sockets since
 *	the module was loaded, low word first
 */
struct sdp_diag_msg {
	__u8	sdiag_family;
	__u8	sdiag_state;
	__u16	pad;
	__be16	sdiag_sport;
	__be16	sdiag_dport;
	__be32	sdiag_src[4];
	__be32	sdiag_dst[4];
	__u32	sdiag_uid;
	__u32	sdiag_inode;
	__u32	sdiag_rqueue;
	__u32	sdiag_wqueue;
	__u32	sdiag_cookie[2];
};

/* Attributes after struct sdp_diag_msg; ask with 1 << (type - 1). */
enum {
	SDP_DIAG_NONE,
	SDP_DIAG_STATS,		/* struct sdp_diag_stats */
	SDP_DIAG_CONN,		/* struct sdp_diag_conn */
	__SDP_DIAG_MAX,
};

#define SDP_DIAG_MAX (__SDP_DIAG_MAX - 1)

/**
 * struct sdp_diag_stats - counters of one socket (SDP_DIAG_STATS)
 * @bcopy_tx_bytes: payload bytes sent through the buffered-copy path
 * @bcopy_tx_msgs: Data messages with payload sent
 * @bcopy_rx_bytes: payload bytes received through the buffered-copy path
 * @bcopy_rx_msgs: Data messages with payload received
 * @zcopy_tx_bytes: bytes sent zero-copy (read by the peer with RDMA Read)
 * @zcopy_tx_msgs: zero-copy sends completed
 * @zcopy_rx_bytes: bytes received zero-copy (RDMA Read into the buffer)
 * @zcopy_rx_msgs: zero-copy receives completed
 * @rdma_reads: RDMA Read work requests posted
 * @sendsm_tx: SendSM messages sent
 * @sendsm_rx: SendSM messages received
 * @srcavail_cancel_tx: SrcAvailCancel messages sent
 * @srcavail_cancel_rx: SrcAvailCancel messages received
 * @credit_updates_tx: credit updates sent
 * @credit_updates_rx: credit updates received
 * @credit_stalls: times data was ready to go and had to wait for credits
 * @srcavail_tx: SrcAvail messages sent
 * @srcavail_rx: SrcAvail messages received
 * @zcopy_fallbacks: zero-copy sends that went buffered instead because
 *	the pages could not be pinned
 * @rinv_tx: RdmaRdCompls sent with Invalidate of the peer's key
 * @rinv_rx: our advertisements whose key the peer invalidated
 *
 * Fields are only ever appended; a shorter attribute (older module) holds
 * the first fields.
 */
struct sdp_diag_stats {
	__u64	bcopy_tx_bytes;
	__u64	bcopy_tx_msgs;
	__u64	bcopy_rx_bytes;
	__u64	bcopy_rx_msgs;
	__u64	zcopy_tx_bytes;
	__u64	zcopy_tx_msgs;
	__u64	zcopy_rx_bytes;
	__u64	zcopy_rx_msgs;
	__u64	rdma_reads;
	__u64	sendsm_tx;
	__u64	sendsm_rx;
	__u64	srcavail_cancel_tx;
	__u64	srcavail_cancel_rx;
	__u64	credit_updates_tx;
	__u64	credit_updates_rx;
	__u64	credit_stalls;
	__u64	srcavail_tx;
	__u64	srcavail_rx;
	__u64	zcopy_fallbacks;
	__u64	rinv_tx;
	__u64	rinv_rx;
};

/**
 * struct sdp_diag_conn - state of the connection (SDP_DIAG_CONN)
 * @tx_credits: messages the peer can take now (its posted buffers)
 * @peer_credits: messages the peer may still send under our adverts
 * @tx_max: largest message the peer accepts, BSDH included
 * @rx_bufs: receive buffers of the connection (its ring)
 * @tx_bufs: send buffers of the connection
 * @rx_posted: receive buffers posted now
 * @tx_mseq_next: mseq of the next message we send
 * @rx_mseq_last: mseq of the last message received
 * @abort_reason: why the connection was aborted (SDP_ABORT_REASON_*), or 0
 * @pad: 0
 * @comp_vector: completion vector of the connection's CQ (0 without one)
 * @rx_alloc: receive buffers allocated now (@rx_bufs once the ring grew)
 * @tx_alloc: send buffers allocated now: one only when a send needs a
 *	slot and no slot out of use has one, all go after
 *	net.sdp.tx_idle_ms without a send
 * @mem_pages: pages of buffers (and spliced pages) this connection holds,
 *	as counted in net.sdp.mem and /proc/net/sdp_stats' MemPages
 * @transport: what carries the socket's bytes (enum sdp_transport of
 *	<linux/sdp.h>: SDP, or TCP after a fallback)
 * @fallback_reason: why it fell back (enum sdp_fallback_reason), or 0
 * @pad2: 0
 * @pad3: 0
 * @rx_seq: bytes received, as SDP_INFO's @sdpi_rx_seq (<linux/sdp.h>)
 * @snd_una: bytes sent that the peer acknowledged (@sdpi_snd_una)
 * @snd_nxt: bytes sent (@sdpi_snd_nxt)
 *
 * Fields are only ever appended: a reader takes the attribute's length.
 */
struct sdp_diag_conn {
	__s32	tx_credits;
	__u32	peer_credits;
	__u32	tx_max;
	__u32	rx_bufs;
	__u32	tx_bufs;
	__u32	rx_posted;
	__u32	tx_mseq_next;
	__u32	rx_mseq_last;
	__u8	abort_reason;
	__u8	pad;
	__u16	comp_vector;
	__u32	rx_alloc;
	__u32	tx_alloc;
	__u32	mem_pages;
	__u8	transport;
	__u8	fallback_reason;
	__u16	pad2;
	__u32	pad3;
	__u64	rx_seq;
	__u64	snd_una;
	__u64	snd_nxt;
};

/* struct sdp_diag_conn::abort_reason */
enum sdp_abort_reason {
	SDP_ABORT_REASON_NONE,
	SDP_ABORT_REASON_CLOSE,		/* close() with unread data, ... */
	SDP_ABORT_REASON_DATA,		/* data arrived after close() */
	SDP_ABORT_REASON_TIMEOUT,	/* peer never finished the close */
	SDP_ABORT_REASON_PEER,		/* AbortConn received */
	SDP_ABORT_REASON_PROTO,		/* peer broke the protocol */
	SDP_ABORT_REASON_CQ_ERROR,	/* completion error */
	SDP_ABORT_REASON_CM_DISCONNECT,	/* CM disconnect without DisConn */
	SDP_ABORT_REASON_DEVICE_REMOVAL,	/* RDMA device went away */
};

#endif /* _UAPI_LINUX_SDP_DIAG_H */
