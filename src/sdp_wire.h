/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the wire rules as pure functions.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * The checks an incoming BSDH, Hello or HelloAck must pass, the credit
 * arithmetic of both directions and the mseq comparisons, each a
 * function of plain integers or a wire struct (sdp_proto.h) with no
 * lock, socket or device behind it.  The module calls them from
 * sdp_rx.c, sdp_tx.c and sdp_cm.c, which keep the state, the locking
 * and the log messages; the host program tests/unit.c checks them
 * without a guest (make unit), through the user-space shim
 * tests/unit/kcompat.h.  So this header includes nothing but
 * sdp_proto.h and what it needs from the kernel, and what it defines
 * must build in both places.
 *
 * mseq arithmetic is modulo 2^32 (serial-number arithmetic): "a after b"
 * means a - b, taken as signed, is positive.
 */
#ifndef _SDP_WIRE_H
#define _SDP_WIRE_H

#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/types.h>
#include <asm/byteorder.h>
#else
#include "kcompat.h"
#endif

#include "sdp_proto.h"

/*
 * Our receive buffers: every message, in either direction, fits one of
 * SDP_BUF_SIZE bytes (BSDH included); the Hello and HelloAck advertise
 * it, and it bounds what we send to a peer with larger ones.
 */
#define SDP_BUF_SIZE		(32 * 1024)
/*
 * The receive buffers a connection starts on while its ring is small
 * (net.sdp.rx_init_bufs of them), when the peer can be told later that
 * they are SDP_BUF_SIZE (SDP_HF_RESIZE, ChRcvBufAck): a request or an
 * answer of up to 4 KiB less the BSDH fits one.
 */
#define SDP_BUF_SMALL		4096
/* The smallest receive buffers a peer may announce in Hello(Ack). */
#define SDP_MIN_PEER_RCVSZ	1024
/* Data needs two credits: the last one is kept for a control message. */
#define SDP_DATA_MIN_CREDITS	2

/**
 * sdp_mseq_after() - is @a after @b in mseq space?
 * @a: an mseq
 * @b: another
 *
 * Serial-number comparison: correct across the wrap at 2^32 as long as
 * the two are less than 2^31 apart.
 *
 * Return: true if @a comes after @b (not if they are equal).
 */
static inline bool sdp_mseq_after(u32 a, u32 b)
{
	return (s32)(a - b) > 0;
}

/**
 * enum sdp_bsdh_verdict - what sdp_bsdh_check() found in a received BSDH
 * @SDP_BSDH_OK: the message may be handled
 * @SDP_BSDH_SHORT: fewer bytes arrived than a BSDH holds
 * @SDP_BSDH_LEN: its len differs from the bytes that arrived
 * @SDP_BSDH_MSEQ: its mseq is not the previous one + 1
 * @SDP_BSDH_CREDITS: its mseq is beyond what our advertisements allowed
 *	(the peer sent more messages than it had credits for)
 * @SDP_BSDH_ACK: its mseq_ack is for a message we have not sent
 */
enum sdp_bsdh_verdict {
	SDP_BSDH_OK,
	SDP_BSDH_SHORT,
	SDP_BSDH_LEN,
	SDP_BSDH_MSEQ,
	SDP_BSDH_CREDITS,
	SDP_BSDH_ACK,
};

/**
 * sdp_bsdh_check() - may a received message be handled?
 * @h: its BSDH (read only if @byte_len covers it)
 * @byte_len: the bytes that arrived
 * @rx_mseq_last: mseq of the last message received before it
 * @rx_mseq_limit: the highest mseq our advertisements let the peer send
 * @tx_mseq_next: mseq of the next message we will send
 *
 * The checks go in this order, and the first that fails decides: a BSDH
 * must have arrived whole, its len must be the bytes that arrived, its
 * mseq the previous one + 1 and not after @rx_mseq_limit, and its
 * mseq_ack not after the last mseq we sent.  The message id and what
 * follows the BSDH are the caller's to check.
 *
 * Return: %SDP_BSDH_OK, or the first rule broken.
 */
static inline enum sdp_bsdh_verdict
sdp_bsdh_check(const struct sdp_bsdh *h, u32 byte_len, u32 rx_mseq_last,
	       u32 rx_mseq_limit, u32 tx_mseq_next)
{
	u32 mseq;

	if (byte_len < sizeof(*h))
		return SDP_BSDH_SHORT;
	if (be32_to_cpu(h->len) != byte_len)
		return SDP_BSDH_LEN;
	mseq = be32_to_cpu(h->mseq);
	if (mseq != rx_mseq_last + 1)
		return SDP_BSDH_MSEQ;
	if (sdp_mseq_after(mseq, rx_mseq_limit))
		return SDP_BSDH_CREDITS;
	if (sdp_mseq_after(be32_to_cpu(h->mseq_ack), tx_mseq_next - 1))
		return SDP_BSDH_ACK;
	return SDP_BSDH_OK;
}

/**
 * sdp_bsdh_credits() - our credits, from a BSDH the peer sent
 * @h: the BSDH, accepted by sdp_bsdh_check()
 * @tx_mseq_next: mseq of the next message we will send
 *
 * The peer had @h->bufs buffers posted when it sent @h, and our messages
 * after its mseq_ack are still on their way into them.
 *
 * Return: the messages we may send now: bufs - (tx_mseq_next - 1 -
 * mseq_ack); negative if more are in flight than bufs.
 */
static inline int sdp_bsdh_credits(const struct sdp_bsdh *h, u32 tx_mseq_next)
{
	return (s32)(be32_to_cpu(h->mseq_ack) - tx_mseq_next + 1) +
	       be16_to_cpu(h->bufs);
}

/**
 * sdp_bsdh_bufs() - the bufs field for @rx_posted posted buffers
 * @rx_posted: receive buffers we have posted
 *
 * Return: @rx_posted, at most U16_MAX (the field's width).
 */
static inline u16 sdp_bsdh_bufs(u32 rx_posted)
{
	return min_t(u32, rx_posted, U16_MAX);
}

/**
 * sdp_bsdh_init() - fill in a BSDH to send
 * @h: the header
 * @mid: message id, enum sdp_mid
 * @len: length of the whole message, BSDH included
 * @rx_posted: receive buffers we have posted (our credits to the peer)
 * @mseq: mseq of this message; 0 for Hello and HelloAck
 * @mseq_ack: mseq of the last message received; 0 for Hello and HelloAck
 *
 * flags are zero; the caller sets urgent data's.
 */
static inline void sdp_bsdh_init(struct sdp_bsdh *h, u8 mid, u32 len,
				 u32 rx_posted, u32 mseq, u32 mseq_ack)
{
	h->mid = mid;
	h->flags = 0;
	h->bufs = cpu_to_be16(sdp_bsdh_bufs(rx_posted));
	h->len = cpu_to_be32(len);
	h->mseq = cpu_to_be32(mseq);
	h->mseq_ack = cpu_to_be32(mseq_ack);
}

/**
 * sdp_mseq_limit_update() - the peer's limit after an advertisement
 * @limit: the highest mseq the peer could send so far
 * @rx_mseq_last: mseq of the last message received (the advertisement's
 *	mseq_ack)
 * @rx_posted: receive buffers we have posted (the advertisement's bufs)
 *
 * An advertisement lets the peer send up to mseq @rx_mseq_last +
 * @rx_posted; one that announces fewer buffers than an earlier one does
 * not take back what that one allowed.
 *
 * Return: the later, in mseq space, of @limit and @rx_mseq_last +
 * @rx_posted.
 */
static inline u32 sdp_mseq_limit_update(u32 limit, u32 rx_mseq_last,
					u32 rx_posted)
{
	u32 adv = rx_mseq_last + rx_posted;

	return sdp_mseq_after(adv, limit) ? adv : limit;
}

/**
 * sdp_peer_credits() - messages the peer may still send us
 * @rx_mseq_last: mseq of the last message received
 * @rx_mseq_limit: the highest mseq our advertisements let the peer send
 *
 * Return: @rx_mseq_limit - @rx_mseq_last (mod 2^32).
 */
static inline u32 sdp_peer_credits(u32 rx_mseq_last, u32 rx_mseq_limit)
{
	return rx_mseq_limit - rx_mseq_last;
}

/**
 * sdp_credit_grant_calc() - credits a message from us would add
 * @rx_posted: receive buffers we have posted
 * @peer_credits: messages the peer may still send under our last
 *	advertisement (sdp_peer_credits()); it cannot have more than those
 *	in flight
 *
 * Return: @rx_posted - @peer_credits, or 0 if that is not positive.
 */
static inline u32 sdp_credit_grant_calc(u32 rx_posted, u32 peer_credits)
{
	return rx_posted > peer_credits ? rx_posted - peer_credits : 0;
}

/**
 * sdp_credit_update_due() - should a credit update go now?
 * @grant: credits it would grant (sdp_credit_grant_calc())
 * @peer_credits: messages the peer may still send (sdp_peer_credits())
 * @rx_count: our receive ring's size
 *
 * When it grants at least SDP_DATA_MIN_CREDITS and either the peer may
 * be running short (SDP_DATA_MIN_CREDITS or fewer left) or the grant
 * adds up to half the ring.  An update only answers another one if it
 * grants at least two credits, so updates do not bounce back and forth.
 *
 * Return: true if it should.
 */
static inline bool sdp_credit_update_due(u32 grant, u32 peer_credits,
					 u32 rx_count)
{
	return grant >= SDP_DATA_MIN_CREDITS &&
	       (peer_credits <= SDP_DATA_MIN_CREDITS || grant >= rx_count / 2);
}

/**
 * sdp_data_credit_ok() - may a Data message (or SrcAvail) be posted?
 * @tx_credits: our credits
 *
 * Return: true with at least SDP_DATA_MIN_CREDITS: the last credit is
 * kept for a control message.
 */
static inline bool sdp_data_credit_ok(int tx_credits)
{
	return tx_credits >= SDP_DATA_MIN_CREDITS;
}

/**
 * sdp_srcavail_credit_ok() - may a SrcAvail be posted?
 * @tx_credits: our credits
 *
 * A SrcAvail may have to be followed by its SrcAvailCancel before the
 * peer sends anything (it is not reading, or not even established), and
 * that needs a credit besides the one kept for control messages, as
 * Data does: otherwise the cancel cannot go, the peer cannot answer it,
 * and the send waits out its bound.  A SrcAvail that cannot go is taken
 * back after a while, and the bytes go as Data.
 *
 * Return: true with at least SDP_DATA_MIN_CREDITS + 1.
 */
static inline bool sdp_srcavail_credit_ok(int tx_credits)
{
	return tx_credits > SDP_DATA_MIN_CREDITS;
}

/**
 * sdp_rx_reposts() - is a receive buffer that came back posted again?
 * @size: its size
 * @want: the size our ring posts now (rx_want)
 * @announced: the size the peer was last told of (rx_size)
 *
 * One of the size the ring posts, yes.  Until a shrink is announced
 * (@want below @announced), one of the announced size too: the small
 * buffers wait for the ChRcvBufAck, which may have to go on our last
 * credit and then must grant the peer buffers (sdp_ctrl_credit_ok());
 * retired instead, every buffer could be gone before it goes, and then
 * neither side could ever send again.  A bigger buffer takes a smaller
 * message, so this is safe.  A smaller one after a growth retires: the
 * peer may send full messages into any buffer after the ones it was told
 * of.
 *
 * Return: true to post it again, false to retire it.
 */
static inline bool sdp_rx_reposts(u32 size, u32 want, u32 announced)
{
	return size == want || (want < announced && size == announced);
}

/**
 * sdp_ctrl_credit_ok() - may a control message be posted?
 * @tx_credits: our credits
 * @mid: its message id
 * @grant: credits it would grant the peer (sdp_credit_grant_calc())
 *
 * A control message needs one credit.  The last credit goes only to a
 * message that grants the peer enough new credits to send data (which
 * carries credits back), so the two sides never both wait with no
 * credit to tell each other about freed buffers.  An abort ends the
 * connection and may take it anyway.
 *
 * Return: true if it may.
 */
static inline bool sdp_ctrl_credit_ok(int tx_credits, u8 mid, u32 grant)
{
	if (tx_credits < 1)
		return false;
	return tx_credits > 1 || mid == SDP_MID_ABORT ||
	       grant >= SDP_DATA_MIN_CREDITS;
}

/**
 * sdp_ping_ok() - may a keepalive ping (SDP_PING) go now?
 * @tx_credits: our credits
 * @grant: credits it would grant the peer (sdp_credit_grant_calc())
 * @rx_posted: receive buffers we have posted, which the ping announces
 *
 * The ping is a control message (sdp_ctrl_credit_ok()), and its answer
 * is one too: the peer reads its credits from the ping's BSDH, so it
 * can answer at once only with at least SDP_DATA_MIN_CREDITS of them,
 * the last one being kept for a message that grants us enough.  A ping
 * the peer could not answer would make a live peer look dead.
 *
 * Return: true if it may.
 */
static inline bool sdp_ping_ok(int tx_credits, u32 grant, u32 rx_posted)
{
	return sdp_ctrl_credit_ok(tx_credits, SDP_MID_DATA, grant) &&
	       rx_posted >= SDP_DATA_MIN_CREDITS;
}

/**
 * sdp_version_ok() - do we speak the peer's protocol version?
 * @version: the version byte of its Hello or HelloAck
 *
 * Return: true if its major version is ours (the minor may differ).
 */
static inline bool sdp_version_ok(u8 version)
{
	return SDP_VERSION_MAJOR(version) == SDP_VERSION_MAJOR(SDP_VERSION);
}

/**
 * enum sdp_hello_verdict - what a Hello or HelloAck check found
 * @SDP_HELLO_OK: the connection may go on
 * @SDP_HELLO_BAD: no private data, too little of it, the wrong message
 *	id or another major version
 * @SDP_HELLO_BAD_BUFS: receive buffers smaller than SDP_MIN_PEER_RCVSZ,
 *	or no credits
 */
enum sdp_hello_verdict {
	SDP_HELLO_OK,
	SDP_HELLO_BAD,
	SDP_HELLO_BAD_BUFS,
};

/**
 * sdp_peer_bufs_ok() - are the peer's announced buffers usable?
 * @rcvsz: the size of each of its receive buffers
 * @bufs: how many it posted (its initial credits to us)
 *
 * Return: true if @rcvsz is at least SDP_MIN_PEER_RCVSZ and @bufs not 0.
 */
static inline bool sdp_peer_bufs_ok(u32 rcvsz, u16 bufs)
{
	return rcvsz >= SDP_MIN_PEER_RCVSZ && bufs;
}

/**
 * sdp_hello_check() - may a connect request's Hello be accepted?
 * @hh: the request's private data, or NULL if it had none
 * @len: its length
 *
 * Return: %SDP_HELLO_OK, %SDP_HELLO_BAD or %SDP_HELLO_BAD_BUFS (for
 * localrcvsz and the BSDH's bufs).
 */
static inline enum sdp_hello_verdict
sdp_hello_check(const struct sdp_hello *hh, u32 len)
{
	if (!hh || len < sizeof(*hh) || hh->bsdh.mid != SDP_MID_HELLO ||
	    !sdp_version_ok(hh->version))
		return SDP_HELLO_BAD;
	if (!sdp_peer_bufs_ok(be32_to_cpu(hh->localrcvsz),
			      be16_to_cpu(hh->bsdh.bufs)))
		return SDP_HELLO_BAD_BUFS;
	return SDP_HELLO_OK;
}

/**
 * sdp_hello_ack_check() - may a connect reply's HelloAck be accepted?
 * @ha: the reply's private data, or NULL if it had none
 * @len: its length
 *
 * Return: as sdp_hello_check(), for actrcvsz and the BSDH's bufs.
 */
static inline enum sdp_hello_verdict
sdp_hello_ack_check(const struct sdp_hello_ack *ha, u32 len)
{
	if (!ha || len < sizeof(*ha) || ha->bsdh.mid != SDP_MID_HELLO_ACK ||
	    !sdp_version_ok(ha->version))
		return SDP_HELLO_BAD;
	if (!sdp_peer_bufs_ok(be32_to_cpu(ha->actrcvsz),
			      be16_to_cpu(ha->bsdh.bufs)))
		return SDP_HELLO_BAD_BUFS;
	return SDP_HELLO_OK;
}

/**
 * sdp_peer_tx_max() - the largest message we send to a peer
 * @rcvsz: the size of its receive buffers (accepted by sdp_peer_bufs_ok())
 *
 * Return: @rcvsz, at most SDP_BUF_SIZE (our messages never exceed our
 * own buffers).
 */
static inline u32 sdp_peer_tx_max(u32 rcvsz)
{
	return min_t(u32, rcvsz, SDP_BUF_SIZE);
}

/**
 * enum sdp_crbah_verdict - what sdp_crbah_check() found in a ChRcvBufAck
 * @SDP_CRBAH_OK: take it
 * @SDP_CRBAH_SIZE: buffers smaller than SDP_MIN_PEER_RCVSZ
 * @SDP_CRBAH_EARLY: the peer's last ChRcvBufAck does not bind yet (we
 *	have not sent the message it starts from), and one is pending at
 *	most
 * @SDP_CRBAH_LATE: smaller buffers from a message we sent already, which
 *	may have been bigger
 * @SDP_CRBAH_FAR: smaller buffers from a message more than a BSDH's
 *	bufs (65535) after our next: the peer cannot have that many bigger
 *	buffers posted, and we would send it empty messages up to there
 */
enum sdp_crbah_verdict {
	SDP_CRBAH_OK,
	SDP_CRBAH_SIZE,
	SDP_CRBAH_EARLY,
	SDP_CRBAH_LATE,
	SDP_CRBAH_FAR,
};

/**
 * sdp_crbah_check() - may a peer's ChRcvBufAck announce @size from @mseq on?
 * @size: its struct sdp_crbah size
 * @mseq: its struct sdp_crbah mseq
 * @tx_max: the largest message we send it now (sdp_peer_tx_max())
 * @tx_mseq_next: mseq of the next message we send
 * @pending: its last ChRcvBufAck's mseq is after @tx_mseq_next
 *
 * Buffers may grow from any message on (the ones before fit the old
 * ones), and shrink (we sent SDP_HF_SHRINK) from one we have not sent
 * yet, at most as far ahead as the peer can have buffers posted: it
 * announces smaller buffers before it posts any.
 *
 * Return: an enum sdp_crbah_verdict.
 */
static inline enum sdp_crbah_verdict
sdp_crbah_check(u32 size, u32 mseq, u32 tx_max, u32 tx_mseq_next,
		bool pending)
{
	if (size < SDP_MIN_PEER_RCVSZ)
		return SDP_CRBAH_SIZE;
	if (pending)
		return SDP_CRBAH_EARLY;
	if (size < tx_max && sdp_mseq_after(tx_mseq_next, mseq))
		return SDP_CRBAH_LATE;
	if (size < tx_max && sdp_mseq_after(mseq, tx_mseq_next + U16_MAX))
		return SDP_CRBAH_FAR;
	return SDP_CRBAH_OK;
}

#endif /* _SDP_WIRE_H */
