/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the rules of resuming a connection, as pure
 * functions (Documentation/networking/sdp-resume.rst).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * What a Resume or ResumeAck must look like, the order in which the
 * passive side checks a Resume and the refusal each check gives, the
 * generation rule, what the peer's rx_seq may be and what of our send
 * ring it leaves to send again, the active side's back-off and the bound
 * on a suspension.  Like sdp_wire.h, plain integers and wire structs
 * only, so that tests/unit.c checks them on the host; the tags
 * themselves (SipHash, crypto_memneq()) are the module's.
 *
 * The resume is being built in steps (the design page lists them): so
 * far sdp_resume.c uses the format checks and the refusal order.
 */
#ifndef _SDP_RESUME_WIRE_H
#define _SDP_RESUME_WIRE_H

#include "sdp_wire.h"

/* The active side's first attempt goes at once, the next after ... */
#define SDP_RESUME_BACKOFF_MIN_MS	1000
/* ... doubling up to this. */
#define SDP_RESUME_BACKOFF_MAX_MS	8000

/**
 * enum sdp_resume_msg_verdict - what sdp_resume_msg_check() found
 * @SDP_RESUME_MSG_OK: well formed
 * @SDP_RESUME_MSG_BAD: none or short, another mid, a major version we do
 *	not speak, or conn_id or gen 0
 * @SDP_RESUME_MSG_BAD_BUFS: rcvsz and bufs are not usable
 *	(sdp_peer_bufs_ok())
 */
enum sdp_resume_msg_verdict {
	SDP_RESUME_MSG_OK,
	SDP_RESUME_MSG_BAD,
	SDP_RESUME_MSG_BAD_BUFS,
};

/**
 * sdp_resume_msg_check() - is a Resume or ResumeAck well formed?
 * @r: the private data, or NULL if there was none
 * @len: its length (a connect request's may be padded: at least the
 *	struct's)
 * @mid: SDP_MID_RESUME or SDP_MID_RESUME_ACK, the one expected
 *
 * Only the format, as sdp_hello_check() judges a Hello's: reserved
 * fields and flags we do not know are ignored (sdp_proto.h), so that a
 * later version may use them.  Whether the connection it names exists,
 * and the tag, are the caller's (sdp_resume_refusal()).
 *
 * Return: an enum sdp_resume_msg_verdict.
 */
static inline enum sdp_resume_msg_verdict
sdp_resume_msg_check(const struct sdp_resume *r, u32 len, u8 mid)
{
	if (!r || len < sizeof(*r) || r->bsdh.mid != mid ||
	    !sdp_version_ok(r->version) || !r->conn_id || !r->gen)
		return SDP_RESUME_MSG_BAD;
	if (!sdp_peer_bufs_ok(be32_to_cpu(r->rcvsz),
			      be16_to_cpu(r->bsdh.bufs)))
		return SDP_RESUME_MSG_BAD_BUFS;
	return SDP_RESUME_MSG_OK;
}

/**
 * sdp_hello_ack_resume_ok() - may a HelloAck's resume extension be used?
 * @ha: the HelloAck, accepted by sdp_hello_ack_check(); its extension
 *	(struct sdp_hello_ack_resume) follows it
 * @len: the private data's length: what arrived over iWARP, always the
 *	reply's 196 bytes on IB and RoCE, so the BSDH's len is checked too
 *
 * Checked when the HelloAck has SDP_HF_RESUME and our Hello had it too;
 * a HelloAck that fails it is malformed.
 *
 * Return: true if the extension arrived whole and the BSDH's len covers
 * it, with conn_id and port not 0 (the reserved field is ignored).
 */
static inline bool sdp_hello_ack_resume_ok(const struct sdp_hello_ack *ha,
					   u32 len)
{
	const struct sdp_hello_ack_resume *x = (const void *)(ha + 1);
	const u32 need = sizeof(*ha) + sizeof(*x);

	return len >= need && be32_to_cpu(ha->bsdh.len) >= need &&
	       x->conn_id && x->port;
}

/**
 * sdp_resume_gen_ok() - is @gen the generation a Resume may have now?
 * @gen: the Resume's
 * @done: the connection's resumes completed so far
 *
 * One more than those completed: an earlier generation is stale (a
 * replay, accepted or not), a later one was never offered.  A second
 * Resume of the same generation while one is being made is fine (the
 * first one's reply may have been lost); the caller decides whether it
 * replaces that one.  After 2^32 - 1 resumes a connection cannot resume
 * again (gen 0 is never valid).
 *
 * Return: true if @gen is @done + 1.
 */
static inline bool sdp_resume_gen_ok(u32 gen, u32 done)
{
	return gen && gen == done + 1;
}

/**
 * enum sdp_resume_refusal - why the passive side refuses a Resume
 * @SDP_RR_NONE: it does not: the Resume may go ahead
 * @SDP_RR_FORMAT: malformed (sdp_resume_msg_check())
 * @SDP_RR_UNKNOWN: no resumable connection of the namespace has its
 *	conn_id (never had, or aborted, or closed)
 * @SDP_RR_STALE: its generation is not the one due (sdp_resume_gen_ok())
 * @SDP_RR_TAG: its tag is wrong
 * @SDP_RR_ADDR: it came from an address the peer did not announce
 *
 * The peer learns none of these: every refusal is the same reject.
 */
enum sdp_resume_refusal {
	SDP_RR_NONE,
	SDP_RR_FORMAT,
	SDP_RR_UNKNOWN,
	SDP_RR_STALE,
	SDP_RR_TAG,
	SDP_RR_ADDR,
};

/**
 * sdp_resume_refusal() - the passive side's checks of a Resume, in order
 * @msg: sdp_resume_msg_check() of it
 * @found: a resumable connection has its conn_id
 * @gen: its generation
 * @done: that connection's resumes completed so far
 * @tag_ok: its tag is that connection's for @gen (compared in constant
 *	time by the caller)
 * @addr_ok: its source address is one the peer announced
 *
 * The first check that fails decides, so the cheap ones go first and
 * the tag is looked at only for a connection that exists and a
 * generation that is due.
 *
 * Return: %SDP_RR_NONE, or the first refusal.
 */
static inline enum sdp_resume_refusal
sdp_resume_refusal(enum sdp_resume_msg_verdict msg, bool found, u32 gen,
		   u32 done, bool tag_ok, bool addr_ok)
{
	if (msg != SDP_RESUME_MSG_OK)
		return SDP_RR_FORMAT;
	if (!found)
		return SDP_RR_UNKNOWN;
	if (!sdp_resume_gen_ok(gen, done))
		return SDP_RR_STALE;
	if (!tag_ok)
		return SDP_RR_TAG;
	if (!addr_ok)
		return SDP_RR_ADDR;
	return SDP_RR_NONE;
}

/**
 * enum sdp_resume_seq_verdict - what sdp_resume_seq_check() found
 * @SDP_RESUME_SEQ_OK: the peer's rx_seq is possible
 * @SDP_RESUME_SEQ_BEHIND: the peer claims less than it acknowledged
 * @SDP_RESUME_SEQ_AHEAD: ... or more than we sent
 */
enum sdp_resume_seq_verdict {
	SDP_RESUME_SEQ_OK,
	SDP_RESUME_SEQ_BEHIND,
	SDP_RESUME_SEQ_AHEAD,
};

/**
 * sdp_resume_seq_check() - may the peer have received @rx_seq bytes?
 * @rx_seq: the peer's, from its Resume or ResumeAck
 * @una: our payload bytes known to have arrived (sends completed, and
 *	SrcAvail bytes the peer reported read)
 * @nxt: our payload bytes sent (Data posted, SrcAvails advertised)
 *
 * Stream positions are 64 bits and never wrap.  Anything but
 * %SDP_RESUME_SEQ_OK is a protocol error: the new connection is reset.
 *
 * Return: an enum sdp_resume_seq_verdict.
 */
static inline enum sdp_resume_seq_verdict
sdp_resume_seq_check(u64 rx_seq, u64 una, u64 nxt)
{
	if (rx_seq < una)
		return SDP_RESUME_SEQ_BEHIND;
	if (rx_seq > nxt)
		return SDP_RESUME_SEQ_AHEAD;
	return SDP_RESUME_SEQ_OK;
}

/**
 * sdp_resume_take() - how much of a kept send slot the peer has
 * @left: bytes the peer has of the kept slots not yet walked (its
 *	rx_seq less our una at the first); reduced by the result
 * @len: payload bytes of the next kept slot, in stream order
 *
 * The caller walks the slots kept since the QP failed, oldest first: a
 * slot whose whole payload is taken is retired (its acknowledgment was
 * lost, not its data), one taken in part is sent again from there (RC
 * delivers a message whole or not at all, so that happens only to a
 * slot sent in parts to a peer with smaller buffers), one not taken at
 * all is sent again whole, and so are all after it.
 *
 * Return: the bytes of this slot the peer has: @len, fewer, or 0.
 */
static inline u32 sdp_resume_take(u64 *left, u32 len)
{
	u32 took = *left < len ? (u32)*left : len;

	*left -= took;
	return took;
}

/**
 * sdp_resume_backoff_ms() - the wait before the active side's attempt
 * @attempt: attempts made since the connection suspended
 *
 * The first at once (another announced address may work), then
 * SDP_RESUME_BACKOFF_MIN_MS, doubling up to SDP_RESUME_BACKOFF_MAX_MS.
 *
 * Return: milliseconds to wait before attempt @attempt + 1.
 */
static inline u32 sdp_resume_backoff_ms(u32 attempt)
{
	u32 ms = SDP_RESUME_BACKOFF_MIN_MS;

	if (!attempt)
		return 0;
	while (--attempt && ms < SDP_RESUME_BACKOFF_MAX_MS)
		ms *= 2;
	return min_t(u32, ms, SDP_RESUME_BACKOFF_MAX_MS);
}

/**
 * sdp_resume_bound_ms() - how long a connection may stay suspended
 * @user_timeout_ms: the socket's TCP_USER_TIMEOUT (0: not set)
 * @resume_timeout_ms: net.sdp.resume_timeout_ms
 *
 * Return: @user_timeout_ms if set, as it bounds TCP's retransmissions,
 * else @resume_timeout_ms.
 */
static inline u32 sdp_resume_bound_ms(u32 user_timeout_ms,
				      u32 resume_timeout_ms)
{
	return user_timeout_ms ? user_timeout_ms : resume_timeout_ms;
}

#endif /* _SDP_RESUME_WIRE_H */
