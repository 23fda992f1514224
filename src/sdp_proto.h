/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- wire formats.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Every SDP message starts with the Base Sockets Direct Header (BSDH) of
 * IBA Annex A4.  All multi-byte fields are big-endian.  Reserved fields
 * are sent as zero and ignored on receipt.
 *
 * Hello and HelloAck travel in the RDMA CM private data of the connect
 * request and reply.  We use port space RDMA_PS_TCP: the CMA prepends its
 * own 36-byte header (addresses and ports) to the request, which leaves
 * 92 - 36 = 56 bytes for us (IB; iWARP's MPA limit is larger), and the
 * reply keeps its full 196 bytes.  The OFED layout (RDMA_PS_SDP, a
 * 92-byte Hello that carried the addresses itself) does not fit and is
 * not used: this is protocol version 3.0 (SDP_VERSION), which OFED peers
 * (2.x) do not speak.  Documentation/networking/sdp.rst has the same
 * layout with a message-sequence diagram.
 */
#ifndef _SDP_PROTO_H
#define _SDP_PROTO_H

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/types.h>
#else
#include "kcompat.h"	/* user space: tests/unit/ (sdp_wire.h) */
#endif

/* Major version in the high nibble, minor in the low nibble. */
#define SDP_VERSION		0x30
#define SDP_VERSION_MAJOR(v)	((v) >> 4)

/* Private data room of an RDMA_PS_TCP connect request on IB/RoCE. */
#define SDP_CM_REQ_PRIVATE_DATA_MAX	56
/* ... and of a connect reply. */
#define SDP_CM_REP_PRIVATE_DATA_MAX	196

/* BSDH message ids (mid). */
enum sdp_mid {
	SDP_MID_HELLO		= 0x00,
	SDP_MID_HELLO_ACK	= 0x01,
	SDP_MID_DISCONN		= 0x02,	/* orderly release (FIN) */
	SDP_MID_ABORT		= 0x03,	/* abortive release (RST) */
	SDP_MID_SENDSM		= 0x04,
	SDP_MID_RDMA_WR_COMPL	= 0x05,
	SDP_MID_RDMA_RD_COMPL	= 0x06,
	SDP_MID_MODE_CHANGE	= 0x07,
	SDP_MID_SRCAVAIL_CANCEL	= 0x08,
	SDP_MID_SINKAVAIL_CANCEL = 0x09,
	SDP_MID_SINKCANCEL_ACK	= 0x0a,
	SDP_MID_CHRCVBUF	= 0x0b,
	SDP_MID_CHRCVBUF_ACK	= 0x0c,
	SDP_MID_SUSPCOMM	= 0x0d,
	SDP_MID_SUSPCOMM_ACK	= 0x0e,
	/* Resuming a connection (this protocol's, SDP_HF_RESUME): */
	SDP_MID_RESUME		= 0x20,	/* a new connect request's */
	SDP_MID_RESUME_ACK	= 0x21,	/* ... its reply's */
	SDP_MID_RESUME_REFUSED	= 0x22,	/* ... its reject's */
	SDP_MID_ADDRS		= 0x23,	/* the sender's other addresses */
	SDP_MID_SINKAVAIL	= 0xfd,
	SDP_MID_SRCAVAIL	= 0xfe,
	SDP_MID_DATA		= 0xff,
};

/* BSDH flags. */
#define SDP_OOB_PRES	0x01	/* this message carries urgent data */
#define SDP_OOB_PEND	0x02	/* urgent data is pending */
/*
 * SDP_PING: send a message at once (to a sender whose Hello(Ack) had
 * SDP_HF_PING).  Sent on an empty Data message; whatever the receiver
 * sends next answers it.
 */
#define SDP_PING	0x04

/**
 * struct sdp_bsdh - Base Sockets Direct Header, in front of every message
 * @mid: message id, enum sdp_mid
 * @flags: SDP_OOB_PRES, SDP_OOB_PEND, SDP_PING
 * @bufs: receive buffers the sender has posted now (credits it grants)
 * @len: length of the whole message: BSDH, extra header and payload
 * @mseq: sequence number of this message; 1 for the first, +1 each
 * @mseq_ack: mseq of the last message the sender received from the peer
 */
struct sdp_bsdh {
	u8 mid;
	u8 flags;
	__be16 bufs;
	__be32 len;
	__be32 mseq;
	__be32 mseq_ack;
} __packed;
static_assert(sizeof(struct sdp_bsdh) == 16);

/*
 * Hello/HelloAck flags (capabilities of the side that sends them).
 * SDP_HF_RINV: the sender's advertised keys may be invalidated by the
 * peer: the RdmaRdCompl that reports the last byte of a SrcAvail may be
 * an IB SEND with Invalidate of the advertised rkey, which saves the
 * sender its own LOCAL_INV.  A peer that did not set it never gets one.
 */
#define SDP_HF_RINV	0x01
/*
 * SDP_HF_RESIZE: the sender understands ChRcvBufAck (struct sdp_crbah):
 * its peer may start on small receive buffers (SDP_BUF_SMALL) and tell
 * it later that they are bigger.
 */
#define SDP_HF_RESIZE	0x02
/*
 * SDP_HF_SHRINK: with SDP_HF_RESIZE, the sender also takes a ChRcvBufAck
 * that makes its peer's buffers smaller, and more than one: its peer
 * may shrink a ring that grew back to small buffers after a quiet time.
 * On such a ChRcvBufAck it sends the messages that still land in the
 * bigger buffers, as empty Data messages if it has nothing else to
 * send, so that they come back to its peer.  And it may shrink its own
 * ring: its peer sends the messages before a growth's mseq at once too
 * (empty when idle), since the shrink waits for that one to come.
 */
#define SDP_HF_SHRINK	0x04
/*
 * SDP_HF_PING: the sender answers a message whose BSDH has SDP_PING with
 * a message of its own at once (a credit update if it has nothing else
 * to send), whenever its credits allow a control message.  Keepalive
 * over iWARP needs it: there a send completes once the local TCP has
 * taken it, so only a message from the peer proves the peer alive.
 */
#define SDP_HF_PING	0x08
/*
 * SDP_HF_RESUME: the sender can resume the connection over a new QP
 * after its QP failed (Documentation/networking/sdp-resume.rst).  In a
 * HelloAck, struct sdp_hello_ack_resume follows the HelloAck.  Sent
 * with net.sdp.resume on (sdp_resume.c): the resume is being built.
 */
#define SDP_HF_RESUME	0x10

/**
 * struct sdp_hello - Hello, the private data of the connect request
 * @bsdh: mid SDP_MID_HELLO, bufs = initial credits, mseq 0, mseq_ack 0
 * @version: SDP_VERSION of the sender
 * @ipv: IP version of the connection in the high nibble (4 or 6)
 * @flags: SDP_HF_* capabilities of the sender; zero from peers that
 *	predate them (this byte was reserved)
 * @max_adverts: zero-copy advertisements the sender can have outstanding
 *	(at least 1)
 * @desremrcvsz: receive buffer size (bytes per message, including the
 *	BSDH) the sender would like the peer to use
 * @localrcvsz: size of each receive buffer the sender posted
 * @port: the sender's port (informational; the CMA header carries it)
 * @rsvd2: zero
 * @rsvd3: zero, to the 32-byte size
 */
struct sdp_hello {
	struct sdp_bsdh bsdh;
	u8 version;
	u8 ipv;
	u8 flags;
	u8 max_adverts;
	__be32 desremrcvsz;
	__be32 localrcvsz;
	__be16 port;
	__be16 rsvd2;
} __packed;
static_assert(sizeof(struct sdp_hello) == 32);
static_assert(sizeof(struct sdp_hello) <= SDP_CM_REQ_PRIVATE_DATA_MAX);

/**
 * struct sdp_hello_ack - HelloAck, the private data of the connect reply
 * @bsdh: mid SDP_MID_HELLO_ACK, bufs = initial credits, mseq 0, mseq_ack 0
 * @version: SDP_VERSION of the sender
 * @ipv: IP version in the high nibble (4 or 6)
 * @flags: as in struct sdp_hello
 * @max_adverts: as in struct sdp_hello
 * @actrcvsz: size of each receive buffer the sender posted
 */
struct sdp_hello_ack {
	struct sdp_bsdh bsdh;
	u8 version;
	u8 ipv;
	u8 flags;
	u8 max_adverts;
	__be32 actrcvsz;
} __packed;
static_assert(sizeof(struct sdp_hello_ack) == 24);
static_assert(sizeof(struct sdp_hello_ack) <= SDP_CM_REP_PRIVATE_DATA_MAX);

/* The secret a resumable connection's tags are made with (128 bits). */
#define SDP_RESUME_SECRET_LEN	16
/* A tag: two SipHash-2-4 outputs (128 bits). */
#define SDP_RESUME_TAG_LEN	16

/**
 * struct sdp_hello_ack_resume - after a HelloAck with SDP_HF_RESUME
 * @conn_id: the passive side's name of the connection: random, not 0,
 *	unique in its network namespace
 * @port: the port of the passive side's resume listener
 * @rsvd: zero
 * @secret: random; the tags of both sides' Resume messages are keyed
 *	with it
 */
struct sdp_hello_ack_resume {
	__be32 conn_id;
	__be16 port;
	__be16 rsvd;
	u8 secret[SDP_RESUME_SECRET_LEN];
} __packed;
static_assert(sizeof(struct sdp_hello_ack_resume) == 24);
static_assert(sizeof(struct sdp_hello_ack) +
	      sizeof(struct sdp_hello_ack_resume) <=
	      SDP_CM_REP_PRIVATE_DATA_MAX);

/* struct sdp_resume::flags */
#define SDP_RF_FIN	0x01	/* the sender has received the peer's DisConn */

/**
 * struct sdp_resume - Resume and ResumeAck: the private data of the
 *	connect request and reply that resume a connection
 * @bsdh: mid SDP_MID_RESUME or SDP_MID_RESUME_ACK, bufs = the receive
 *	buffers posted on the new QP, len = the size of this struct, mseq
 *	0, mseq_ack 0
 * @version: SDP_VERSION of the sender
 * @flags: SDP_RF_*
 * @rsvd: zero
 * @conn_id: from the HelloAck's struct sdp_hello_ack_resume
 * @gen: the resume's generation: 1 for the connection's first, one
 *	more after each that completed
 * @rcvsz: size of each receive buffer the sender posted
 * @rx_seq: payload bytes of the stream the sender has received
 * @tag: the sender's proof that it knows the secret, for @gen
 *
 * A Resume fills the 56 bytes a connect request leaves us exactly.
 */
struct sdp_resume {
	struct sdp_bsdh bsdh;
	u8 version;
	u8 flags;
	__be16 rsvd;
	__be32 conn_id;
	__be32 gen;
	__be32 rcvsz;
	__be64 rx_seq;
	u8 tag[SDP_RESUME_TAG_LEN];
} __packed;
static_assert(sizeof(struct sdp_resume) == SDP_CM_REQ_PRIVATE_DATA_MAX);

/*
 * Zero-copy (SrcAvail) messages.  This implementation keeps one
 * advertisement outstanding per direction (max_adverts 1 in Hello and
 * HelloAck), never puts payload inline in a SrcAvail, and has the
 * receiver read the advertised bytes in order:
 *
 *   sender                                receiver
 *   REG_MR (remote read, exact range)
 *   SrcAvail(len, rkey, vaddr) ------->   queued in stream order
 *                                         RDMA Read(s) into the reader's
 *                     <-------            RdmaRdCompl(bytes read), ...
 *   once the RdmaRdCompls add up to len, or SendSM arrives:
 *   LOCAL_INV (unless the last RdmaRdCompl invalidated the key), unpin
 *
 * The receiver reports a read from its completion handler, before it
 * wakes the reader.  If the advertiser set SDP_HF_RINV, the RdmaRdCompl
 * that completes an advertisement is sent with Invalidate of its rkey.
 *
 * SendSM: the receiver will not read the rest (MSG_PEEK, a kernel
 * buffer, no pinnable memory); the sender sends the unread remainder as
 * Data.  SrcAvailCancel: the sender withdraws the advertisement (signal,
 * send timeout, or a receiver that does not start reading); the receiver
 * finishes a read in progress, reports it with RdmaRdCompl and answers
 * with SendSM.  A SrcAvailCancel that finds no advertisement (it crossed
 * the last RdmaRdCompl or a SendSM) is ignored.
 */

/**
 * struct sdp_srcah - SrcAvail header, after the BSDH of a SrcAvail
 * @len: bytes advertised (at least 1)
 * @rkey: remote key of the registration; valid for remote read only,
 *	for exactly [@vaddr, @vaddr + @len), until the advertisement ends
 * @vaddr: address of the first advertised byte in the key's space
 */
struct sdp_srcah {
	__be32 len;
	__be32 rkey;
	__be64 vaddr;
} __packed;
static_assert(sizeof(struct sdp_srcah) == 16);

/**
 * struct sdp_rrch - RdmaRdCompl header, after the BSDH
 * @len: bytes of the current advertisement read since the last
 *	RdmaRdCompl (at least 1)
 */
struct sdp_rrch {
	__be32 len;
} __packed;
static_assert(sizeof(struct sdp_rrch) == 4);

/**
 * struct sdp_crbah - ChRcvBufAck header, after the BSDH
 * @size: the size of the receive buffers the sender posts from now on,
 *	BSDH included: the largest message the peer may send ...
 * @mseq: ... from the message with this mseq on; the ones before land in
 *	the smaller buffers still posted, and must fit them
 *
 * Sent, to a peer that set SDP_HF_RESIZE, by a side that started on
 * SDP_BUF_SMALL buffers, when its ring grows to full ones: receive
 * buffers are consumed in the order they were posted, so it knows which
 * message lands in the first full one (its last mseq received plus the
 * small buffers still posted, plus one).  Unsolicited (no ChRcvBuf asks
 * for it).  To a peer without SDP_HF_SHRINK, once, and the size only
 * grows.  To one with it, also when the ring shrinks back to small
 * buffers after a quiet time: @mseq is then its last mseq received plus
 * the full buffers still posted, plus one, and no small buffer is posted
 * (so none is announced in a BSDH) before this message is, so the peer
 * has no credit for a message at or after @mseq before it reads this.
 * A side sends the next ChRcvBufAck only once the message @mseq of the
 * last one came, so a peer never has two pending.  OFED's ChRcvBufAck
 * had the size alone: @mseq is this protocol's (version 3.0,
 * SDP_HF_RESIZE).
 */
struct sdp_crbah {
	__be32 size;
	__be32 mseq;
} __packed;
static_assert(sizeof(struct sdp_crbah) == 8);

#endif /* _SDP_PROTO_H */
