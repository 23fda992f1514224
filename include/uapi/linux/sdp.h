/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Sockets Direct Protocol (SDP) -- user-visible definitions.
 *
 * SDP gives stream sockets whose bytes travel over an RDMA reliable
 * connection instead of TCP/IP.  A program opens one with
 *
 *	fd = socket(AF_INET_SDP, SOCK_STREAM, 0);
 *
 * and then uses the ordinary BSD socket calls on it.  Addresses are plain
 * struct sockaddr_in / struct sockaddr_in6 (AF_INET / AF_INET6); for
 * programs written for the OFED implementation, a struct sockaddr_in whose
 * sin_family is AF_INET_SDP is accepted as AF_INET.
 *
 * The address family number is fixed at 27, the value OFED used.  The
 * module can register under a different number (module parameter
 * "family") on a kernel where 27 is taken; programs then have to be told
 * that number at run time.
 */
#ifndef _UAPI_LINUX_SDP_H
#define _UAPI_LINUX_SDP_H

#include <linux/types.h>

#define AF_INET_SDP	27		/* address family of SDP sockets */
#define PF_INET_SDP	AF_INET_SDP	/* protocol family, same value */

/*
 * Level for SDP-specific socket options, as in
 * setsockopt(fd, SOL_SDP, optname, ...).  Standard SOL_SOCKET options
 * and the TCP options that make sense for a byte stream (SOL_TCP /
 * IPPROTO_TCP level: TCP_NODELAY, TCP_CORK) apply to SDP sockets too.
 */
#define SOL_SDP		1025

/*
 * SOL_SDP option names.  Values up to 15 are reserved for SDP options.
 *
 * SDP_ZCOPY_THRESH (int, read/write): blocking sends of at least this
 *	many bytes from user memory go zero-copy: the pages are pinned
 *	and the peer RDMA-reads them.  0 disables zero-copy on this
 *	socket.  The default comes from the module parameter zcopy_thresh.
 *	Negative values give EINVAL.
 * SDP_INFO (struct sdp_info, read only): counters of this socket.  A
 *	shorter optlen gets the first optlen bytes; fields are only ever
 *	appended.
 */
#define SDP_ZCOPY_THRESH	1
#define SDP_INFO		2
/*
 * SDP_TCP_FALLBACK (int, read/write): 1: a connect() whose SDP connection
 *	cannot be made (no RDMA device or route to the address, no SDP
 *	listener at the peer, no answer) carries on over TCP to the same
 *	address and port, on the same socket, and a listen() listens on
 *	TCP too, so that accept() also returns clients without SDP; 0: it
 *	fails, as without fallback.  Reading gives the policy in force: the socket's own once
 *	set, else the network namespace's net.sdp.tcp_fallback.  Values
 *	other than 0 and 1 give EINVAL.
 */
#define SDP_TCP_FALLBACK	3
/*
 * SDP_TCP_FALLBACK_TIMEOUT (int, milliseconds, read/write): with fallback
 *	on, an SDP attempt that has not connected within this time (from
 *	connect() on: address and route resolution and the peer's answer)
 *	is given up and the connect() carries on over TCP, reason
 *	SDP_FB_UNREACHABLE.  0: no limit of its own (the RDMA CM's
 *	retries, a minute or more).  Reading gives the value in force: the
 *	socket's own once set, else net.sdp.tcp_fallback_timeout_ms.
 *	Values outside 0..600000 give EINVAL.  Without fallback it has no
 *	effect: connect() waits as long as the RDMA CM tries.
 */
#define SDP_TCP_FALLBACK_TIMEOUT	4
/*
 * SDP_NO_IWARP (int, read/write, default 0): 1: connect() makes no SDP
 *	attempt over an iWARP device.  Over iWARP the SDP connection
 *	request travels in a TCP connection to the same port, so towards a
 *	port where an ordinary TCP program listens it is delivered to that
 *	program as data.  A connect() whose route goes over an iWARP
 *	device fails with ENETUNREACH, or, with fallback on, carries on
 *	over TCP at once, reason SDP_FB_IWARP.  libsdp sets it for "both"
 *	clients.  Values other than 0 and 1 give EINVAL.
 */
#define SDP_NO_IWARP	5

/**
 * enum sdp_transport - what carries a socket's bytes (sdpi_transport)
 * @SDP_TRANSPORT_SDP: an SDP connection over RDMA (or none yet)
 * @SDP_TRANSPORT_TCP: a kernel TCP connection: the socket fell back
 */
enum sdp_transport {
	SDP_TRANSPORT_SDP = 0,
	SDP_TRANSPORT_TCP = 1,
};

/**
 * enum sdp_fallback_reason - why a socket uses TCP (sdpi_fallback_reason)
 * @SDP_FB_NONE: it does not
 * @SDP_FB_NO_DEVICE: no RDMA device has an address on the way to the
 *	destination
 * @SDP_FB_ADDR_ERROR: resolving the destination's RDMA address failed
 * @SDP_FB_ROUTE_ERROR: resolving the RDMA route failed
 * @SDP_FB_UNREACHABLE: the peer did not answer the connection request
 *	(or not within SDP_TCP_FALLBACK_TIMEOUT)
 * @SDP_FB_REJECTED: the peer rejected it: no SDP listener on the port
 * @SDP_FB_TCP_CLIENT: accepted from a client that came over TCP (a
 *	listener with fallback on listens on TCP too)
 * @SDP_FB_CACHED: a recent connect() to the same address and port fell
 *	back: TCP at once (net.sdp.tcp_fallback_cache_s)
 * @SDP_FB_IWARP: the route goes over an iWARP device and the socket has
 *	SDP_NO_IWARP set: TCP at once
 */
enum sdp_fallback_reason {
	SDP_FB_NONE = 0,
	SDP_FB_NO_DEVICE = 1,
	SDP_FB_ADDR_ERROR = 2,
	SDP_FB_ROUTE_ERROR = 3,
	SDP_FB_UNREACHABLE = 4,
	SDP_FB_REJECTED = 5,
	SDP_FB_TCP_CLIENT = 6,
	SDP_FB_CACHED = 7,
	SDP_FB_IWARP = 8,
};

/**
 * struct sdp_info - per-socket counters (getsockopt SOL_SDP, SDP_INFO)
 * @sdpi_bcopy_tx_bytes: payload bytes sent in Data messages
 * @sdpi_bcopy_rx_bytes: payload bytes received in Data messages
 * @sdpi_zcopy_tx_bytes: bytes the peer RDMA-read from our pages
 * @sdpi_zcopy_rx_bytes: bytes we RDMA-read from the peer's pages
 * @sdpi_srcavail_tx: SrcAvail advertisements sent
 * @sdpi_srcavail_rx: SrcAvail advertisements received
 * @sdpi_rdma_reads: RDMA reads we posted (each reported by RdmaRdCompl)
 * @sdpi_sendsm_tx: SendSM sent (we declined to read an advertisement)
 * @sdpi_sendsm_rx: SendSM received (the rest went as Data)
 * @sdpi_cancel_tx: SrcAvailCancel sent
 * @sdpi_cancel_rx: SrcAvailCancel received
 * @sdpi_zcopy_fallbacks: zero-copy sends that went buffered instead
 *	because the pages could not be pinned (RLIMIT_MEMLOCK, bad memory),
 *	or on Soft-RoCE the send queue stayed unacknowledged for 0.5 s
 * @sdpi_rinv_tx: RdmaRdCompls sent with Invalidate of the peer's key
 *	(the peer then needs no invalidation of its own)
 * @sdpi_rinv_rx: our advertisements whose key the peer's last
 *	RdmaRdCompl invalidated
 * @sdpi_bcopy_tx_msgs: Data messages with payload sent
 * @sdpi_bcopy_rx_msgs: Data messages with payload received
 * @sdpi_zcopy_tx_msgs: zero-copy sends completed (SrcAvail ... RdmaRdCompl)
 * @sdpi_zcopy_rx_msgs: zero-copy receives completed (SrcAvails consumed)
 * @sdpi_credit_updates_tx: credit updates (Data messages without payload)
 *	sent
 * @sdpi_credit_updates_rx: credit updates received
 * @sdpi_credit_stalls: times data was ready to go and had to wait for the
 *	peer's credits
 * @sdpi_transport: enum sdp_transport
 * @sdpi_fallback_reason: enum sdp_fallback_reason
 * @sdpi_rx_seq: stream bytes received from the peer on this connection
 *	(Data payload and bytes we RDMA-read), an urgent byte taken out of
 *	band included
 * @sdpi_snd_una: stream bytes sent that the peer has (Data whose send
 *	completed, advertised bytes the peer reported read).  Over iWARP a
 *	send completes once the local TCP took it, so there it may run
 *	ahead of what the peer received
 * @sdpi_snd_nxt: stream bytes sent (Data posted, and the bytes of an
 *	outstanding advertisement; an advertisement that ended short counts
 *	only what was read, the rest is sent again as Data)
 *
 * The counters are the same as sock_diag's struct sdp_diag_stats.  The
 * three stream positions start at 0 with each connection; when both ends
 * are idle, the sender's @sdpi_snd_una and @sdpi_snd_nxt equal the
 * receiver's @sdpi_rx_seq (Documentation/networking/sdp-resume.rst).
 */
struct sdp_info {
	__u64 sdpi_bcopy_tx_bytes;
	__u64 sdpi_bcopy_rx_bytes;
	__u64 sdpi_zcopy_tx_bytes;
	__u64 sdpi_zcopy_rx_bytes;
	__u64 sdpi_srcavail_tx;
	__u64 sdpi_srcavail_rx;
	__u64 sdpi_rdma_reads;
	__u64 sdpi_sendsm_tx;
	__u64 sdpi_sendsm_rx;
	__u64 sdpi_cancel_tx;
	__u64 sdpi_cancel_rx;
	__u64 sdpi_zcopy_fallbacks;
	__u64 sdpi_rinv_tx;
	__u64 sdpi_rinv_rx;
	__u64 sdpi_bcopy_tx_msgs;
	__u64 sdpi_bcopy_rx_msgs;
	__u64 sdpi_zcopy_tx_msgs;
	__u64 sdpi_zcopy_rx_msgs;
	__u64 sdpi_credit_updates_tx;
	__u64 sdpi_credit_updates_rx;
	__u64 sdpi_credit_stalls;
	__u32 sdpi_transport;
	__u32 sdpi_fallback_reason;
	__u64 sdpi_rx_seq;
	__u64 sdpi_snd_una;
	__u64 sdpi_snd_nxt;
};

#endif /* _UAPI_LINUX_SDP_H */
