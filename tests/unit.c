// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the wire rules (src/sdp_wire.h): the checks a received
 * BSDH, Hello and HelloAck must pass, the credit arithmetic of both
 * directions and the mseq comparisons, each on good input, at every
 * boundary (lengths off by one, mseq wrapping at 2^32, no and most
 * buffers, grants below, at and above the peer's outstanding credits,
 * the last-credit rule) and on the bad input each check exists for.
 * Then two model peers that use nothing but these functions exchange
 * messages across the mseq wrap: every message must pass the receiver's
 * checks, never find it without a posted buffer, and all data must get
 * through once the readers read (no credit deadlock).
 *
 * The module's own header is compiled here, in user space, through
 * tests/unit/kcompat.h.  A host program (make unit; make check runs it
 * before the guests): no module, no device, a second or less.
 */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sdp_resume_wire.h"
#include "sdp_wire.h"
#include "sdp_zc_pace.h"
#include "tap.h"

/* @got must equal @want exactly. */
#define EQ(got, want)							\
	do {								\
		long long __g = (long long)(got);			\
		long long __w = (long long)(want);			\
		if (__g != __w)						\
			tap_fail(__FILE__, __LINE__,			\
				 "%s = %lld (%#llx), want %s = %lld (%#llx)", \
				 #got, __g, __g, #want, __w, __w);	\
	} while (0)

/* A BSDH as a peer would put it on the wire (fields in host order). */
static struct sdp_bsdh bsdh(u8 mid, u16 bufs, u32 len, u32 mseq, u32 ack)
{
	struct sdp_bsdh h;

	memset(&h, 0xa5, sizeof(h));	/* flags: set, and to be ignored */
	h.mid = mid;
	h.bufs = cpu_to_be16(bufs);
	h.len = cpu_to_be32(len);
	h.mseq = cpu_to_be32(mseq);
	h.mseq_ack = cpu_to_be32(ack);
	return h;
}

#define HDR	((u32)sizeof(struct sdp_bsdh))

static void test_wire_sizes(void)
{
	/* The layouts the checks below read (IBA Annex A4, SDP 3.0). */
	EQ(sizeof(struct sdp_bsdh), 16);
	EQ(sizeof(struct sdp_hello), 32);
	EQ(sizeof(struct sdp_hello_ack), 24);
	EQ(SDP_VERSION, 0x30);
	EQ(SDP_BUF_SIZE, 32768);
	EQ(SDP_MIN_PEER_RCVSZ, 1024);
	EQ(SDP_DATA_MIN_CREDITS, 2);
}

static void test_mseq_after(void)
{
	EQ(sdp_mseq_after(2, 1), true);
	EQ(sdp_mseq_after(1, 2), false);
	EQ(sdp_mseq_after(7, 7), false);
	EQ(sdp_mseq_after(0, 0), false);
	/* Across the wrap at 2^32. */
	EQ(sdp_mseq_after(0, 0xffffffff), true);
	EQ(sdp_mseq_after(0xffffffff, 0), false);
	EQ(sdp_mseq_after(5, 0xfffffffb), true);
	EQ(sdp_mseq_after(0xfffffffb, 5), false);
	EQ(sdp_mseq_after(0x80000000, 0x7fffffff), true);
	/* The edge of serial-number arithmetic: 2^31 - 1 ahead is after... */
	EQ(sdp_mseq_after(0x7fffffff, 0), true);
	EQ(sdp_mseq_after(0x7fffffffu + 10, 10), true);
	/* ... 2^31 ahead is not (it reads as 2^31 behind). */
	EQ(sdp_mseq_after(0x80000000, 0), false);
	EQ(sdp_mseq_after(0x80000000u + 10, 10), false);
	EQ(sdp_mseq_after(0x80000001, 0), false);
	EQ(sdp_mseq_after(0, 0x80000001), true);
}

/* A well-behaved message at a point of a connection. */
static void test_bsdh_check_ok(void)
{
	struct sdp_bsdh h;

	/* A credit update (no payload) and Data, the peer's first. */
	h = bsdh(SDP_MID_DATA, 16, HDR, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0, 16, 1), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 16, HDR + 100, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR + 100, 0, 16, 1), SDP_BSDH_OK);
	/* The largest message: a full buffer. */
	h = bsdh(SDP_MID_DATA, 16, SDP_BUF_SIZE, 1, 0);
	EQ(sdp_bsdh_check(&h, SDP_BUF_SIZE, 0, 16, 1), SDP_BSDH_OK);
	/* Its last credit: mseq == limit. */
	h = bsdh(SDP_MID_DATA, 0, HDR, 16, 9);
	EQ(sdp_bsdh_check(&h, HDR, 15, 16, 10), SDP_BSDH_OK);
	/* An ack of our last message, and an older one. */
	h = bsdh(SDP_MID_DATA, 4, HDR, 5, 9);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 10), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 4, HDR, 5, 1);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 10), SDP_BSDH_OK);
	/* mid and flags are not the BSDH check's business. */
	h = bsdh(0x42, 4, HDR, 5, 1);
	h.flags = 0xff;
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 10), SDP_BSDH_OK);
	/* bufs 0 is allowed: the peer may have no buffer posted. */
	h = bsdh(SDP_MID_DATA, 0, HDR, 5, 9);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 10), SDP_BSDH_OK);
}

static void test_bsdh_check_short(void)
{
	struct sdp_bsdh h = bsdh(SDP_MID_DATA, 16, HDR, 1, 0);

	EQ(sdp_bsdh_check(&h, 0, 0, 16, 1), SDP_BSDH_SHORT);
	EQ(sdp_bsdh_check(&h, 1, 0, 16, 1), SDP_BSDH_SHORT);
	EQ(sdp_bsdh_check(&h, HDR - 1, 0, 16, 1), SDP_BSDH_SHORT);
	EQ(sdp_bsdh_check(&h, HDR, 0, 16, 1), SDP_BSDH_OK);
	/* First: a short message's header is not looked at. */
	h = bsdh(SDP_MID_DATA, 16, 3, 99, 99);
	EQ(sdp_bsdh_check(&h, HDR - 1, 0, 0, 1), SDP_BSDH_SHORT);
	EQ(sdp_bsdh_check(NULL, HDR - 1, 0, 0, 1), SDP_BSDH_SHORT);
}

static void test_bsdh_check_len(void)
{
	struct sdp_bsdh h;

	h = bsdh(SDP_MID_DATA, 16, HDR + 10, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR + 9, 0, 16, 1), SDP_BSDH_LEN);
	EQ(sdp_bsdh_check(&h, HDR + 10, 0, 16, 1), SDP_BSDH_OK);
	EQ(sdp_bsdh_check(&h, HDR + 11, 0, 16, 1), SDP_BSDH_LEN);
	/* len 0, len shorter than a BSDH, len in the wrong byte order. */
	h = bsdh(SDP_MID_DATA, 16, 0, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0, 16, 1), SDP_BSDH_LEN);
	h = bsdh(SDP_MID_DATA, 16, HDR - 1, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0, 16, 1), SDP_BSDH_LEN);
	h = bsdh(SDP_MID_DATA, 16, 0, 1, 0);
	h.len = (__be32)(HDR + 100);	/* not converted */
	EQ(sdp_bsdh_check(&h, HDR + 100, 0, 16, 1), SDP_BSDH_LEN);
	/* Before the mseq checks. */
	h = bsdh(SDP_MID_DATA, 16, HDR + 1, 7, 99);
	EQ(sdp_bsdh_check(&h, HDR, 0, 0, 1), SDP_BSDH_LEN);
}

static void test_bsdh_check_mseq(void)
{
	struct sdp_bsdh h;

	/* Expected 5 (last 4): a repeat, an old one, a gap, zero. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 4, 0);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 1), SDP_BSDH_MSEQ);
	h = bsdh(SDP_MID_DATA, 1, HDR, 3, 0);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 1), SDP_BSDH_MSEQ);
	h = bsdh(SDP_MID_DATA, 1, HDR, 6, 0);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 1), SDP_BSDH_MSEQ);
	h = bsdh(SDP_MID_DATA, 1, HDR, 0, 0);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 1), SDP_BSDH_MSEQ);
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 0);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 1), SDP_BSDH_OK);
	/* Across the wrap: after 0xffffffff comes 0, then 1. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 0, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0xffffffff, 10, 1), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0xffffffff, 10, 1), SDP_BSDH_MSEQ);
	EQ(sdp_bsdh_check(&h, HDR, 0, 10, 1), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 0xffffffff, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0xfffffffe, 10, 1), SDP_BSDH_OK);
	EQ(sdp_bsdh_check(&h, HDR, 0xffffffff, 10, 1), SDP_BSDH_MSEQ);
	/* Before the credit and ack checks. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 6, 99);
	EQ(sdp_bsdh_check(&h, HDR, 4, 0, 1), SDP_BSDH_MSEQ);
}

static void test_bsdh_check_credits(void)
{
	struct sdp_bsdh h;

	/* Limit 10: mseq 10 is its last credit, 11 one too many. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 10, 0);
	EQ(sdp_bsdh_check(&h, HDR, 9, 10, 1), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 11, 0);
	EQ(sdp_bsdh_check(&h, HDR, 10, 10, 1), SDP_BSDH_CREDITS);
	/* No credit at all (we posted nothing, or the limit is behind). */
	h = bsdh(SDP_MID_DATA, 1, HDR, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0, 0, 1), SDP_BSDH_CREDITS);
	h = bsdh(SDP_MID_DATA, 1, HDR, 21, 0);
	EQ(sdp_bsdh_check(&h, HDR, 20, 15, 1), SDP_BSDH_CREDITS);
	/* Across the wrap: limit 1 after last 0xfffffffe (3 credits). */
	h = bsdh(SDP_MID_DATA, 1, HDR, 0xffffffff, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0xfffffffe, 1, 1), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 0, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0xffffffff, 1, 1), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0, 1, 1), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 2, 0);
	EQ(sdp_bsdh_check(&h, HDR, 1, 1, 1), SDP_BSDH_CREDITS);
	/* Limit just before the wrap, message just after it. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 0, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0xffffffff, 0xffffffff, 1),
	   SDP_BSDH_CREDITS);
	/* Before the ack check. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 11, 99);
	EQ(sdp_bsdh_check(&h, HDR, 10, 10, 1), SDP_BSDH_CREDITS);
}

static void test_bsdh_check_ack(void)
{
	struct sdp_bsdh h;

	/* We sent up to 9 (next 10). */
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 9);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 10), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 10);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 10), SDP_BSDH_ACK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 1000);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 10), SDP_BSDH_ACK);
	/* Nothing sent yet (next 1): only ack 0, the Hello's. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 1, 0);
	EQ(sdp_bsdh_check(&h, HDR, 0, 20, 1), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 1, 1);
	EQ(sdp_bsdh_check(&h, HDR, 0, 20, 1), SDP_BSDH_ACK);
	/* Across the wrap: we sent up to 0xffffffff (next 0)... */
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 0xffffffff);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 0), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 0);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 0), SDP_BSDH_ACK);
	/* ... up to 1 (next 2), an ack from before the wrap is old. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 0xfffffff0);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 2), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 1);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 2), SDP_BSDH_OK);
	h = bsdh(SDP_MID_DATA, 1, HDR, 5, 2);
	EQ(sdp_bsdh_check(&h, HDR, 4, 20, 2), SDP_BSDH_ACK);
}

static void test_bsdh_credits(void)
{
	struct sdp_bsdh h;

	/* All our messages acked (next 11, ack 10): bufs. */
	h = bsdh(SDP_MID_DATA, 16, HDR, 1, 10);
	EQ(sdp_bsdh_credits(&h, 11), 16);
	/* Three in flight. */
	h = bsdh(SDP_MID_DATA, 16, HDR, 1, 7);
	EQ(sdp_bsdh_credits(&h, 11), 13);
	/* No buffers posted. */
	h = bsdh(SDP_MID_DATA, 0, HDR, 1, 10);
	EQ(sdp_bsdh_credits(&h, 11), 0);
	/* More in flight than the peer posted: negative. */
	h = bsdh(SDP_MID_DATA, 1, HDR, 1, 8);
	EQ(sdp_bsdh_credits(&h, 11), -1);
	/* The most bufs can say. */
	h = bsdh(SDP_MID_DATA, 0xffff, HDR, 1, 10);
	EQ(sdp_bsdh_credits(&h, 11), 65535);
	h = bsdh(SDP_MID_DATA, 0xffff, HDR, 1, 0);
	EQ(sdp_bsdh_credits(&h, 11), 65525);
	/* Across the wrap: we sent 0xffffffff and 0 after its ack. */
	h = bsdh(SDP_MID_DATA, 5, HDR, 1, 0xfffffffe);
	EQ(sdp_bsdh_credits(&h, 1), 3);
	h = bsdh(SDP_MID_DATA, 5, HDR, 1, 0xffffffff);
	EQ(sdp_bsdh_credits(&h, 0), 5);
	h = bsdh(SDP_MID_DATA, 5, HDR, 1, 0);
	EQ(sdp_bsdh_credits(&h, 1), 5);
}

static void test_bsdh_bufs(void)
{
	EQ(sdp_bsdh_bufs(0), 0);
	EQ(sdp_bsdh_bufs(1), 1);
	EQ(sdp_bsdh_bufs(256), 256);
	EQ(sdp_bsdh_bufs(65534), 65534);
	EQ(sdp_bsdh_bufs(65535), 65535);
	EQ(sdp_bsdh_bufs(65536), 65535);
	EQ(sdp_bsdh_bufs(0xffffffff), 65535);
}

static void test_bsdh_init(void)
{
	static const u8 want[16] = {
		0xff, 0x00, 0x00, 0x10,			/* mid flags bufs */
		0x00, 0x00, 0x01, 0x10,			/* len */
		0x01, 0x02, 0x03, 0x04,			/* mseq */
		0x05, 0x06, 0x07, 0x08,			/* mseq_ack */
	};
	static const u8 clamped[4] = { 0x01, 0x00, 0xff, 0xff };
	struct sdp_bsdh h;

	memset(&h, 0xa5, sizeof(h));
	sdp_bsdh_init(&h, SDP_MID_DATA, 0x110, 16, 0x01020304, 0x05060708);
	CHECK(!memcmp(&h, want, sizeof(h)), "wrong bytes");
	sdp_bsdh_init(&h, SDP_MID_HELLO_ACK, 24, 70000, 0, 0);
	CHECK(!memcmp(&h, clamped, sizeof(clamped)), "bufs not clamped");
	EQ(be32_to_cpu(h.len), 24);
	EQ(h.mseq, 0);
	EQ(h.mseq_ack, 0);
	/* What we send passes the peer's check and gives it our credits. */
	sdp_bsdh_init(&h, SDP_MID_DATA, HDR + 5, 12, 0, 0xffffffff);
	EQ(sdp_bsdh_check(&h, HDR + 5, 0xffffffff, 3, 0), SDP_BSDH_OK);
	EQ(sdp_bsdh_credits(&h, 0), 12);
}

static void test_mseq_limit_update(void)
{
	/* last 5 and 16 posted: up to 21. */
	EQ(sdp_mseq_limit_update(10, 5, 16), 21);
	/* Fewer buffers than before do not take credits back. */
	EQ(sdp_mseq_limit_update(21, 6, 3), 21);
	EQ(sdp_mseq_limit_update(21, 6, 15), 21);
	EQ(sdp_mseq_limit_update(21, 6, 16), 22);
	EQ(sdp_mseq_limit_update(21, 21, 0), 21);
	/* The handshake: nothing received, the Hello's bufs. */
	EQ(sdp_mseq_limit_update(0, 0, 4), 4);
	EQ(sdp_mseq_limit_update(0, 0, 0), 0);
	/* Across the wrap. */
	EQ(sdp_mseq_limit_update(0xfffffff0, 0xfffffff0, 32), 0x10);
	EQ(sdp_mseq_limit_update(0x10, 0xfffffff0, 8), 0x10);
	EQ(sdp_mseq_limit_update(0xffffffff, 0xfffffffe, 2), 0);
	EQ(sdp_mseq_limit_update(0xffffffff, 0xfffffffe, 1), 0xffffffff);
}

static void test_peer_credits(void)
{
	EQ(sdp_peer_credits(5, 21), 16);
	EQ(sdp_peer_credits(7, 7), 0);
	EQ(sdp_peer_credits(0xfffffff0, 0x10), 32);
	EQ(sdp_peer_credits(0xffffffff, 0), 1);
}

static void test_credit_grant(void)
{
	/* The peer may still send 16: posted below, at, above that. */
	EQ(sdp_credit_grant_calc(10, 16), 0);
	EQ(sdp_credit_grant_calc(15, 16), 0);
	EQ(sdp_credit_grant_calc(16, 16), 0);
	EQ(sdp_credit_grant_calc(17, 16), 1);
	EQ(sdp_credit_grant_calc(18, 16), 2);
	EQ(sdp_credit_grant_calc(256, 16), 240);
	/* The peer has used every credit: all posted buffers are new. */
	EQ(sdp_credit_grant_calc(16, 0), 16);
	EQ(sdp_credit_grant_calc(0, 0), 0);
	EQ(sdp_credit_grant_calc(0, 5), 0);
	EQ(sdp_credit_grant_calc(5, 0xffffffff), 0);
	/* With the peer's credits from mseq across the wrap. */
	EQ(sdp_credit_grant_calc(16, sdp_peer_credits(0xfffffffe, 2)), 12);
}

static void test_credit_update_due(void)
{
	/* Less than two credits to grant: never. */
	EQ(sdp_credit_update_due(0, 0, 16), false);
	EQ(sdp_credit_update_due(1, 0, 16), false);
	EQ(sdp_credit_update_due(1, 0, 2), false);
	/* Two to grant and the peer may be short (two or fewer left). */
	EQ(sdp_credit_update_due(2, 0, 16), true);
	EQ(sdp_credit_update_due(2, 2, 16), true);
	EQ(sdp_credit_update_due(2, 3, 16), false);
	/* Not short: only once the grant is half the ring. */
	EQ(sdp_credit_update_due(7, 3, 16), false);
	EQ(sdp_credit_update_due(8, 3, 16), true);
	EQ(sdp_credit_update_due(8, 100, 16), true);
	EQ(sdp_credit_update_due(7, 3, 15), true);
	EQ(sdp_credit_update_due(6, 3, 15), false);
	EQ(sdp_credit_update_due(127, 3, 256), false);
	EQ(sdp_credit_update_due(128, 3, 256), true);
	/* The smallest ring. */
	EQ(sdp_credit_update_due(2, 3, 4), true);
}

static void test_data_credit_ok(void)
{
	EQ(sdp_data_credit_ok(INT_MIN), false);
	EQ(sdp_data_credit_ok(-1), false);
	EQ(sdp_data_credit_ok(0), false);
	EQ(sdp_data_credit_ok(1), false);	/* the last one is kept */
	EQ(sdp_data_credit_ok(2), true);
	EQ(sdp_data_credit_ok(3), true);
	EQ(sdp_data_credit_ok(65535), true);
	EQ(sdp_data_credit_ok(INT_MAX), true);
}

/*
 * A buffer that comes back is posted again when it has the ring's size,
 * or the announced one while a shrink waits for its ChRcvBufAck; a small
 * one after a growth, and a full one once the shrink is announced,
 * retire.
 */
static void test_rx_reposts(void)
{
	const u32 full = SDP_BUF_SIZE, small = 4096;

	EQ(sdp_rx_reposts(full, full, full), true);
	EQ(sdp_rx_reposts(small, small, small), true);
	/* A shrink, not announced yet: full ones stay. */
	EQ(sdp_rx_reposts(full, small, full), true);
	/* ... announced: they retire. */
	EQ(sdp_rx_reposts(full, small, small), false);
	/* A growth, announced or not: small ones retire. */
	EQ(sdp_rx_reposts(small, full, small), false);
	EQ(sdp_rx_reposts(small, full, full), false);
	EQ(sdp_rx_reposts(full, full, small), true);
}

static void test_ctrl_credit_ok(void)
{
	static const u8 mids[] = {
		SDP_MID_DATA, SDP_MID_DISCONN, SDP_MID_SENDSM,
		SDP_MID_RDMA_RD_COMPL, SDP_MID_SRCAVAIL_CANCEL,
	};
	size_t i;

	/* No credit: nothing, not even an abort. */
	EQ(sdp_ctrl_credit_ok(0, SDP_MID_ABORT, 100), false);
	EQ(sdp_ctrl_credit_ok(-1, SDP_MID_ABORT, 100), false);
	EQ(sdp_ctrl_credit_ok(0, SDP_MID_DATA, 100), false);
	for (i = 0; i < sizeof(mids); i++) {
		/* Two or more: any control message. */
		EQ(sdp_ctrl_credit_ok(2, mids[i], 0), true);
		EQ(sdp_ctrl_credit_ok(100, mids[i], 0), true);
		/* The last credit: only with a grant the peer can send on. */
		EQ(sdp_ctrl_credit_ok(1, mids[i], 0), false);
		EQ(sdp_ctrl_credit_ok(1, mids[i], 1), false);
		EQ(sdp_ctrl_credit_ok(1, mids[i], 2), true);
		EQ(sdp_ctrl_credit_ok(1, mids[i], 255), true);
	}
	/* An abort may take the last credit. */
	EQ(sdp_ctrl_credit_ok(1, SDP_MID_ABORT, 0), true);
	EQ(sdp_ctrl_credit_ok(2, SDP_MID_ABORT, 0), true);
}

/* A ping goes only when both it and its answer can. */
static void test_ping_ok(void)
{
	/* We have credits; the peer reads two or more from the ping. */
	EQ(sdp_ping_ok(2, 0, 2), true);
	EQ(sdp_ping_ok(16, 0, 16), true);
	/* ... one: its answer would need its last credit. */
	EQ(sdp_ping_ok(16, 0, 1), false);
	EQ(sdp_ping_ok(16, 16, 1), false);
	/* ... none (our ring is full of unread data). */
	EQ(sdp_ping_ok(16, 0, 0), false);
	/* Our last credit: only with a grant, as any control message. */
	EQ(sdp_ping_ok(1, 0, 16), false);
	EQ(sdp_ping_ok(1, 1, 16), false);
	EQ(sdp_ping_ok(1, 2, 16), true);
	/* No credit at all. */
	EQ(sdp_ping_ok(0, 16, 16), false);
	EQ(sdp_ping_ok(-1, 16, 16), false);
}

static void test_version_ok(void)
{
	EQ(sdp_version_ok(0x30), true);
	EQ(sdp_version_ok(0x31), true);		/* minor versions differ */
	EQ(sdp_version_ok(0x3f), true);
	EQ(sdp_version_ok(0x22), false);	/* OFED's 2.x */
	EQ(sdp_version_ok(0x2f), false);
	EQ(sdp_version_ok(0x40), false);
	EQ(sdp_version_ok(0x00), false);
	EQ(sdp_version_ok(0x03), false);
	EQ(sdp_version_ok(0xff), false);
}

static void test_peer_bufs_ok(void)
{
	EQ(sdp_peer_bufs_ok(1024, 1), true);
	EQ(sdp_peer_bufs_ok(1023, 1), false);
	EQ(sdp_peer_bufs_ok(0, 16), false);
	EQ(sdp_peer_bufs_ok(32768, 16), true);
	EQ(sdp_peer_bufs_ok(0xffffffff, 0xffff), true);
	EQ(sdp_peer_bufs_ok(32768, 0), false);
	EQ(sdp_peer_bufs_ok(1023, 0), false);
}

/* A Hello as the module sends it. */
static struct sdp_hello hello(void)
{
	struct sdp_hello hh;

	memset(&hh, 0, sizeof(hh));
	sdp_bsdh_init(&hh.bsdh, SDP_MID_HELLO, sizeof(hh), 16, 0, 0);
	hh.version = SDP_VERSION;
	hh.ipv = 0x40;
	hh.flags = SDP_HF_RINV;
	hh.max_adverts = 1;
	hh.desremrcvsz = cpu_to_be32(SDP_BUF_SIZE);
	hh.localrcvsz = cpu_to_be32(SDP_BUF_SIZE);
	hh.port = cpu_to_be16(4242);
	return hh;
}

static void test_hello_check(void)
{
	struct sdp_hello hh = hello();
	u8 room[SDP_CM_REQ_PRIVATE_DATA_MAX] = { 0 };

	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_OK);
	/* The whole private data room: the CM hands all of it over. */
	memcpy(room, &hh, sizeof(hh));
	EQ(sdp_hello_check((struct sdp_hello *)room, sizeof(room)),
	   SDP_HELLO_OK);
	/* Missing or one byte short. */
	EQ(sdp_hello_check(NULL, 0), SDP_HELLO_BAD);
	EQ(sdp_hello_check(NULL, sizeof(hh)), SDP_HELLO_BAD);
	EQ(sdp_hello_check(&hh, 0), SDP_HELLO_BAD);
	EQ(sdp_hello_check(&hh, sizeof(hh) - 1), SDP_HELLO_BAD);
	EQ(sdp_hello_check(&hh, 24), SDP_HELLO_BAD);	/* a HelloAck's size */
	/* The wrong message. */
	hh = hello();
	hh.bsdh.mid = SDP_MID_HELLO_ACK;
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_BAD);
	hh.bsdh.mid = SDP_MID_DATA;
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_BAD);
	/* Another major version; a minor one is fine. */
	hh = hello();
	hh.version = 0x22;
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_BAD);
	hh.version = 0x40;
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_BAD);
	hh.version = 0x31;
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_OK);
	/* Buffers: 1 KiB at least, and at least one credit. */
	hh = hello();
	hh.localrcvsz = cpu_to_be32(SDP_MIN_PEER_RCVSZ - 1);
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_BAD_BUFS);
	hh.localrcvsz = cpu_to_be32(SDP_MIN_PEER_RCVSZ);
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_OK);
	hh.localrcvsz = 0;
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_BAD_BUFS);
	hh = hello();
	hh.bsdh.bufs = 0;
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_BAD_BUFS);
	hh.bsdh.bufs = cpu_to_be16(1);
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_OK);
	hh.bsdh.bufs = cpu_to_be16(0xffff);
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_OK);
	/* A bad message is reported as such before its buffers. */
	hh.bsdh.bufs = 0;
	hh.version = 0x20;
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_BAD);
	/* What is not checked: desremrcvsz, ipv, flags, reserved. */
	hh = hello();
	hh.desremrcvsz = 0;
	hh.ipv = 0;
	hh.flags = 0xff;
	hh.max_adverts = 0;
	hh.rsvd2 = 0xffff;
	hh.bsdh.mseq = cpu_to_be32(7);
	EQ(sdp_hello_check(&hh, sizeof(hh)), SDP_HELLO_OK);
}

/* A HelloAck as the module sends it. */
static struct sdp_hello_ack hello_ack(void)
{
	struct sdp_hello_ack ha;

	memset(&ha, 0, sizeof(ha));
	sdp_bsdh_init(&ha.bsdh, SDP_MID_HELLO_ACK, sizeof(ha), 4, 0, 0);
	ha.version = SDP_VERSION;
	ha.ipv = 0x60;
	ha.max_adverts = 1;
	ha.actrcvsz = cpu_to_be32(SDP_BUF_SIZE);
	return ha;
}

static void test_hello_ack_check(void)
{
	struct sdp_hello_ack ha = hello_ack();
	struct sdp_hello hh = hello();
	u8 room[SDP_CM_REP_PRIVATE_DATA_MAX] = { 0 };

	EQ(sdp_hello_ack_check(&ha, sizeof(ha)), SDP_HELLO_OK);
	EQ(sdp_hello_ack_check(&ha, SDP_CM_REP_PRIVATE_DATA_MAX),
	   SDP_HELLO_OK);
	EQ(sdp_hello_ack_check(NULL, 0), SDP_HELLO_BAD);
	EQ(sdp_hello_ack_check(NULL, sizeof(ha)), SDP_HELLO_BAD);
	EQ(sdp_hello_ack_check(&ha, sizeof(ha) - 1), SDP_HELLO_BAD);
	EQ(sdp_hello_ack_check(&ha, 16), SDP_HELLO_BAD);
	/* A Hello in the reply. */
	memcpy(room, &hh, sizeof(hh));
	EQ(sdp_hello_ack_check((struct sdp_hello_ack *)room, sizeof(hh)),
	   SDP_HELLO_BAD);
	ha.bsdh.mid = SDP_MID_HELLO;
	EQ(sdp_hello_ack_check(&ha, sizeof(ha)), SDP_HELLO_BAD);
	ha = hello_ack();
	ha.version = 0x21;
	EQ(sdp_hello_ack_check(&ha, sizeof(ha)), SDP_HELLO_BAD);
	ha.version = 0x3a;
	EQ(sdp_hello_ack_check(&ha, sizeof(ha)), SDP_HELLO_OK);
	ha = hello_ack();
	ha.actrcvsz = cpu_to_be32(SDP_MIN_PEER_RCVSZ - 1);
	EQ(sdp_hello_ack_check(&ha, sizeof(ha)), SDP_HELLO_BAD_BUFS);
	ha.actrcvsz = cpu_to_be32(SDP_MIN_PEER_RCVSZ);
	EQ(sdp_hello_ack_check(&ha, sizeof(ha)), SDP_HELLO_OK);
	ha = hello_ack();
	ha.bsdh.bufs = 0;
	EQ(sdp_hello_ack_check(&ha, sizeof(ha)), SDP_HELLO_BAD_BUFS);
	ha.bsdh.mid = SDP_MID_DATA;
	EQ(sdp_hello_ack_check(&ha, sizeof(ha)), SDP_HELLO_BAD);
}

static void test_peer_tx_max(void)
{
	EQ(sdp_peer_tx_max(SDP_MIN_PEER_RCVSZ), 1024);
	EQ(sdp_peer_tx_max(SDP_BUF_SIZE - 1), 32767);
	EQ(sdp_peer_tx_max(SDP_BUF_SIZE), 32768);
	EQ(sdp_peer_tx_max(SDP_BUF_SIZE + 1), 32768);
	EQ(sdp_peer_tx_max(0xffffffff), 32768);
}

/* A SrcAvail leaves a credit for its cancel besides the kept one. */
static void test_srcavail_credit_ok(void)
{
	EQ(sdp_srcavail_credit_ok(0), false);
	EQ(sdp_srcavail_credit_ok(2), false);
	EQ(sdp_srcavail_credit_ok(3), true);
	EQ(sdp_srcavail_credit_ok(16), true);
}

/*
 * A ChRcvBufAck never announces tiny buffers; bigger ones bind from any
 * message, smaller ones only from one not sent yet and at most 65535
 * ahead; and one comes only once the last one binds.
 */
static void test_crbah_check(void)
{
	EQ(sdp_crbah_check(SDP_BUF_SIZE, 1, SDP_BUF_SMALL, 5, false),
	   SDP_CRBAH_OK);
	EQ(sdp_crbah_check(SDP_BUF_SMALL, 1, SDP_BUF_SMALL, 5, false),
	   SDP_CRBAH_OK);
	EQ(sdp_crbah_check(SDP_BUF_SMALL, 5, SDP_BUF_SIZE, 5, false),
	   SDP_CRBAH_OK);
	EQ(sdp_crbah_check(SDP_BUF_SMALL, 9, SDP_BUF_SIZE, 5, false),
	   SDP_CRBAH_OK);
	EQ(sdp_crbah_check(SDP_BUF_SMALL, 4, SDP_BUF_SIZE, 5, false),
	   SDP_CRBAH_LATE);
	/* Across the wrap of the mseq space. */
	EQ(sdp_crbah_check(SDP_BUF_SMALL, 2, SDP_BUF_SIZE, 0xfffffffeU,
			   false), SDP_CRBAH_OK);
	EQ(sdp_crbah_check(SDP_BUF_SMALL, 0xfffffffdU, SDP_BUF_SIZE, 2,
			   false), SDP_CRBAH_LATE);
	EQ(sdp_crbah_check(SDP_BUF_SMALL, 5 + 0xffff, SDP_BUF_SIZE, 5, false),
	   SDP_CRBAH_OK);
	EQ(sdp_crbah_check(SDP_BUF_SMALL, 6 + 0xffff, SDP_BUF_SIZE, 5, false),
	   SDP_CRBAH_FAR);
	EQ(sdp_crbah_check(SDP_BUF_SIZE, 6 + 0xffff, SDP_BUF_SMALL, 5, false),
	   SDP_CRBAH_OK);
	EQ(sdp_crbah_check(SDP_BUF_SIZE, 9, SDP_BUF_SMALL, 5, true),
	   SDP_CRBAH_EARLY);
	EQ(sdp_crbah_check(SDP_MIN_PEER_RCVSZ - 1, 9, 0, 5, false),
	   SDP_CRBAH_SIZE);
	EQ(sdp_crbah_check(0, 9, 0, 5, true), SDP_CRBAH_SIZE);
	EQ(sdp_crbah_check(SDP_MIN_PEER_RCVSZ, 9, 0, 5, false),
	   SDP_CRBAH_OK);
}

/*
 * Two peers built from nothing but the functions above, as sdp_tx.c and
 * sdp_rx.c use them: sdp_fill_bsdh() (sdp_bsdh_init(),
 * sdp_mseq_limit_update()), sdp_rx_msg() (sdp_bsdh_check(),
 * sdp_bsdh_credits()), sdp_tx_try_control() (sdp_data_credit_ok(), then
 * a credit update when sdp_credit_update_due() and sdp_ctrl_credit_ok()
 * say so).  A received Data message holds its buffer until the reader
 * takes it; a credit update gives it back at once.
 */
#define MODEL_QMAX	1024

struct model_side {
	u32 tx_mseq_next, rx_mseq_last, rx_mseq_limit;
	u32 rx_count, rx_posted, rx_unread;
	int tx_credits;
	u32 tx_pending;			/* Data the writer has queued */
	unsigned long written, received, updates;
	struct sdp_bsdh q[MODEL_QMAX];	/* in flight to the other side */
	unsigned int q_head, q_tail;
};

static void model_send(struct model_side *s, u8 mid, u32 payload)
{
	struct sdp_bsdh *h;

	CHECK(s->q_head - s->q_tail < MODEL_QMAX, "queue overflow");
	CHECK(s->tx_credits >= 1, "sent without a credit");
	h = &s->q[s->q_head++ % MODEL_QMAX];
	sdp_bsdh_init(h, mid, HDR + payload, s->rx_posted, s->tx_mseq_next++,
		      s->rx_mseq_last);
	s->rx_mseq_limit = sdp_mseq_limit_update(s->rx_mseq_limit,
						 s->rx_mseq_last, s->rx_posted);
	s->tx_credits--;
}

static void model_try_control(struct model_side *s)
{
	u32 peer, grant;

	while (s->tx_pending && sdp_data_credit_ok(s->tx_credits)) {
		model_send(s, SDP_MID_DATA, 100);
		s->tx_pending--;
	}
	peer = sdp_peer_credits(s->rx_mseq_last, s->rx_mseq_limit);
	grant = sdp_credit_grant_calc(s->rx_posted, peer);
	if (sdp_credit_update_due(grant, peer, s->rx_count) &&
	    sdp_ctrl_credit_ok(s->tx_credits, SDP_MID_DATA, grant)) {
		model_send(s, SDP_MID_DATA, 0);
		s->updates++;
	}
}

static void model_write(struct model_side *s, u32 n)
{
	s->tx_pending += n;
	s->written += n;
	model_try_control(s);
}

/* Deliver the oldest message from @from to @to. */
static bool model_deliver(struct model_side *from, struct model_side *to)
{
	const struct sdp_bsdh *h;
	u32 byte_len;

	if (from->q_tail == from->q_head)
		return false;
	h = &from->q[from->q_tail++ % MODEL_QMAX];
	byte_len = be32_to_cpu(h->len);
	CHECK(to->rx_posted > 0, "message %u found no receive buffer",
	      be32_to_cpu(h->mseq));
	to->rx_posted--;
	EQ(sdp_bsdh_check(h, byte_len, to->rx_mseq_last, to->rx_mseq_limit,
			  to->tx_mseq_next), SDP_BSDH_OK);
	to->rx_mseq_last = be32_to_cpu(h->mseq);
	to->tx_credits = sdp_bsdh_credits(h, to->tx_mseq_next);
	CHECK(to->tx_credits >= 0, "credits %d", to->tx_credits);
	if (byte_len > HDR) {
		to->rx_unread++;
		to->received++;
	} else {
		to->rx_posted++;
	}
	model_try_control(to);
	return true;
}

static bool model_read(struct model_side *s)
{
	if (!s->rx_unread)
		return false;
	s->rx_unread--;
	s->rx_posted++;
	model_try_control(s);
	return true;
}

/* Both sides @start messages into a connection, after the handshake. */
static void model_init(struct model_side *a, struct model_side *b, u32 start,
		       u32 a_bufs, u32 b_bufs)
{
	struct model_side *s[2] = { a, b };
	struct sdp_bsdh h;
	int i;

	for (i = 0; i < 2; i++) {
		memset(s[i], 0, sizeof(*s[i]));
		s[i]->tx_mseq_next = start + 1;
		s[i]->rx_mseq_last = start;
		s[i]->rx_mseq_limit = start;
		s[i]->rx_count = i ? b_bufs : a_bufs;
		s[i]->rx_posted = s[i]->rx_count;
	}
	/* Hello and HelloAck: no mseq; their bufs are the first credits. */
	for (i = 0; i < 2; i++) {
		sdp_bsdh_init(&h, i ? SDP_MID_HELLO_ACK : SDP_MID_HELLO,
			      i ? 24 : 32, s[i]->rx_posted, 0, 0);
		s[i]->rx_mseq_limit = sdp_mseq_limit_update(s[i]->rx_mseq_limit,
							    s[i]->rx_mseq_last,
							    s[i]->rx_posted);
		s[!i]->tx_credits = be16_to_cpu(h.bufs);
	}
}

static u32 model_rand(u32 *seed)
{
	*seed = *seed * 1103515245 + 12345;
	return *seed >> 16;
}

static void model_run(u32 start, u32 a_bufs, u32 b_bufs, u32 seed)
{
	static struct model_side a, b;
	unsigned long i;

	model_init(&a, &b, start, a_bufs, b_bufs);
	for (i = 0; i < 20000; i++) {
		u32 r = model_rand(&seed);

		switch (r % 8) {
		case 0:
			if (a.tx_pending < 64)
				model_write(&a, 1 + r / 8 % 4);
			break;
		case 1:
			if (b.tx_pending < 64)
				model_write(&b, 1 + r / 8 % 4);
			break;
		case 2:
		case 3:
			model_deliver(&a, &b);
			break;
		case 4:
		case 5:
			model_deliver(&b, &a);
			break;
		case 6:
			model_read(&a);
			break;
		case 7:
			model_read(&b);
			break;
		}
	}
	/* The readers read everything: all data must get through. */
	for (i = 0; i < 1000000; i++) {
		bool busy = model_deliver(&a, &b);

		busy |= model_deliver(&b, &a);
		busy |= model_read(&a);
		busy |= model_read(&b);
		if (!busy)
			break;
	}
	CHECK(i < 1000000, "no quiet after the readers read everything");
	EQ(a.tx_pending, 0);
	EQ(b.tx_pending, 0);
	EQ(b.received, a.written);
	EQ(a.received, b.written);
	EQ(a.rx_posted, a.rx_count);
	EQ(b.rx_posted, b.rx_count);
	/* Both may send data again. */
	EQ(sdp_data_credit_ok(a.tx_credits), true);
	EQ(sdp_data_credit_ok(b.tx_credits), true);
	tap_diag("start %#x, %u and %u buffers: %lu and %lu messages, %lu and %lu updates, mseq now %#x and %#x",
		 start, a_bufs, b_bufs, a.written, b.written, a.updates,
		 b.updates, a.tx_mseq_next, b.tx_mseq_next);
	CHECK(a.written > 1000 && b.written > 1000, "too little traffic");
}

static void test_flow_model(void)
{
	/* Across the wrap, with the smallest, default and largest rings. */
	model_run(0xffffff00, 16, 16, 1);
	model_run(0xffffff00, 4, 4, 2);
	model_run(0xffffff00, 256, 4, 3);
	model_run(0xffffff00, 4, 256, 4);
	model_run(0x7fffff00, 3, 16, 5);
	model_run(0, 16, 4, 6);
}

/* A peer that sends one message more than its credits is caught. */
static void test_flow_overrun(void)
{
	static struct model_side a, b;
	struct sdp_bsdh *h;
	int i;

	model_init(&a, &b, 0xfffffffd, 4, 4);
	EQ(b.tx_credits, 4);
	for (i = 0; i < 5; i++) {
		b.tx_credits = 1;	/* it ignores the rules */
		model_send(&b, SDP_MID_DATA, 10);
	}
	for (i = 0; i < 5; i++) {
		h = &b.q[b.q_tail++ % MODEL_QMAX];
		EQ(sdp_bsdh_check(h, HDR + 10, a.rx_mseq_last,
				  a.rx_mseq_limit, a.tx_mseq_next),
		   i < 4 ? SDP_BSDH_OK : SDP_BSDH_CREDITS);
		if (i < 4)
			a.rx_mseq_last = be32_to_cpu(h->mseq);
	}
	EQ(a.rx_mseq_last, 1);
	EQ(a.rx_mseq_limit, 1);
}

/*
 * A read is slow past 400 ms plus its length at 16 MB/s, whatever the
 * connection's rate; or past four times that rate's time plus 50 ms.
 */
static void test_zc_read_slow(void)
{
	const u32 mib = 1 << 20, half = 512 * 1024;

	EQ(sdp_zc_read_slow(0, 400000, 0), false);
	EQ(sdp_zc_read_slow(0, 400001, 0), true);
	/* 1 MiB: 65 ms more; 0.5 s (one retry on 6.12's Soft-RoCE) is slow. */
	EQ(sdp_zc_read_slow(mib, 465000, 0), false);
	EQ(sdp_zc_read_slow(mib, 465001, 0), true);
	/* A healthy read on the slowest bed measured (a few MB/s) is not. */
	EQ(sdp_zc_read_slow(mib, 250000, 0), false);
	EQ(sdp_zc_read_slow(U32_MAX, U32_MAX, 0), true);
	EQ(sdp_zc_read_slow(U32_MAX, 0, 0), false);
	/*
	 * 1 ms per 64 KiB: 512 KiB in 8 ms; slow past 4 * 8 + 50 ms, well
	 * below the absolute bound, which alone would not call it slow.
	 */
	EQ(sdp_zc_read_slow(half, 82000, 1000), false);
	EQ(sdp_zc_read_slow(half, 82001, 1000), true);
	EQ(sdp_zc_read_slow(half, 82001, 0), false);
	/* Short reads: the margin dominates (4 * 62 us). */
	EQ(sdp_zc_read_slow(4096, 50248, 1000), false);
	EQ(sdp_zc_read_slow(4096, 50249, 1000), true);
	/* The absolute bound holds at any rate. */
	EQ(sdp_zc_read_slow(mib, 465001, U32_MAX), true);
	EQ(sdp_zc_read_slow(U32_MAX, U32_MAX, U32_MAX), true);
	/* The rate of a read shorter than a unit divides by one unit. */
	EQ(sdp_zc_read_rate(4096, 700), 700);
	EQ(sdp_zc_read_rate(half, 8000), 1000);
}

/*
 * Two slow reads in a row start a back-off of 1 s; a slow probe after
 * it doubles it at once, up to 64 s; one read that is not slow ends it.
 * Slow reads do not teach the rate, and a back-off forgets it.
 */
static void test_zc_pace(void)
{
	struct sdp_zc_pace p = { 0 };
	const u32 slow = 1000000, fast = 10000, len = 128 * 1024;
	u32 want;
	int i;

	EQ(sdp_zc_pace_read_len(&p, len), len);
	EQ(sdp_zc_pace_read(&p, len, slow), 0);
	/* After a slow read the next is short: it may be slow again. */
	EQ(sdp_zc_pace_read_len(&p, len), SDP_ZC_PROBE_LEN);
	EQ(sdp_zc_pace_read(&p, len, fast), 0);
	EQ(sdp_zc_pace_read_len(&p, len), len);
	EQ(p.rate, 5000);
	EQ(sdp_zc_pace_read(&p, len, fast), 0);
	EQ(sdp_zc_pace_read(&p, len, fast), 0);
	/* The slow read is four reads back: this one is alone in the window. */
	EQ(sdp_zc_pace_read(&p, len, slow), 0);
	EQ(p.rate, 5000);
	/* A fast short read between two slow ones does not hide them. */
	EQ(sdp_zc_pace_read(&p, SDP_ZC_PROBE_LEN, fast / 2), 0);
	/* Two slow reads of 1 s: a back-off of SDP_ZC_BACKOFF_COST times 2 s. */
	want = SDP_ZC_BACKOFF_COST * 2000;
	EQ(sdp_zc_pace_read(&p, len, slow), want);
	EQ(p.rate, 0);
	EQ(p.probe, true);
	EQ(sdp_zc_pace_read_len(&p, len), SDP_ZC_PROBE_LEN);
	EQ(sdp_zc_pace_read_len(&p, 4096), 4096);
	/* Each slow probe doubles it at once, up to the most. */
	for (i = 0; i < 10; i++) {
		want = want * 2 > SDP_ZC_BACKOFF_MAX_MS ? SDP_ZC_BACKOFF_MAX_MS :
							  want * 2;
		EQ(sdp_zc_pace_read(&p, len, slow), want);
	}
	EQ(want, SDP_ZC_BACKOFF_MAX_MS);
	/* A fast probe: zero-copy is back, the back-off remembered halved. */
	EQ(sdp_zc_pace_read(&p, len, fast), 0);
	EQ(p.probe, false);
	EQ(sdp_zc_pace_read_len(&p, len), len);
	EQ(p.backoff_ms, SDP_ZC_BACKOFF_MAX_MS / 2);
	EQ(p.slow_ms[0], 0);
	EQ(p.rate, 5000);
	/* One slow read alone starts nothing; two start twice the memory. */
	EQ(sdp_zc_pace_read(&p, len, slow), 0);
	EQ(sdp_zc_pace_read(&p, len, slow), SDP_ZC_BACKOFF_MAX_MS);
	/* Fast reads wear the memory away, a halving each. */
	for (i = 0; i < 20; i++)
		EQ(sdp_zc_pace_read(&p, len, fast), 0);
	EQ(p.backoff_ms, 0);
	/* Only the slow reads in the window count towards the cost. */
	EQ(sdp_zc_pace_read(&p, len, 3 * slow), 0);
	for (i = 0; i < SDP_ZC_SLOW_WINDOW - 1; i++)
		EQ(sdp_zc_pace_read(&p, len, fast), 0);
	EQ(sdp_zc_pace_read(&p, len, slow), 0);
	EQ(sdp_zc_pace_read(&p, len, slow), SDP_ZC_BACKOFF_COST * 2000);
}

/*
 * A back-off lasts as much longer than the slow reads that caused it as
 * SDP_ZC_BACKOFF_COST says, at least SDP_ZC_BACKOFF_MIN_MS: reads slowed
 * by a go-back-N resend (tens of ms) back off for the least, reads that
 * waited for a timeout for longer; nothing overflows.
 */
static void test_zc_pace_cost(void)
{
	struct sdp_zc_pace p = { .rate = 1000 };
	const u32 len = 128 * 1024;	/* 10 ms at 5000; slow from 90 */

	/* 1 ms at the rate, slow from 54 ms; 8 x 110 ms is under 1 s. */
	EQ(sdp_zc_pace_read(&p, 65536, 55000), 0);
	EQ(sdp_zc_pace_read(&p, 65536, 55000), SDP_ZC_BACKOFF_MIN_MS);
	p = (struct sdp_zc_pace){ .rate = 5000 };
	EQ(sdp_zc_pace_read(&p, len, 300000), 0);
	EQ(sdp_zc_pace_read(&p, len, 200000), SDP_ZC_BACKOFF_COST * 500);
	/* A probe costs what it took, or twice the last back-off. */
	EQ(sdp_zc_pace_read(&p, len, 1000000),
	   SDP_ZC_BACKOFF_COST * 1000 > 2 * SDP_ZC_BACKOFF_COST * 500 ?
	   SDP_ZC_BACKOFF_COST * 1000 : 2 * SDP_ZC_BACKOFF_COST * 500);
	p = (struct sdp_zc_pace){ 0 };
	EQ(sdp_zc_pace_read(&p, len, U32_MAX), 0);
	EQ(sdp_zc_pace_read(&p, len, U32_MAX), SDP_ZC_BACKOFF_MAX_MS);
	EQ(sdp_zc_pace_read(&p, len, U32_MAX), SDP_ZC_BACKOFF_MAX_MS);
}

/*
 * The rate follows the fastest reads at once and the slower ones that
 * are not slow by an eighth of the difference: a host that gets busier
 * step by step is not taken for a lossy link, where a read suddenly
 * several times slower (a go-back-N retry) is.  Short reads teach nothing.
 * After a back-off, a link that stays slower but clean is judged afresh.
 */
static void test_zc_pace_rate(void)
{
	struct sdp_zc_pace p = { 0 };
	const u32 len = 512 * 1024;	/* 8 units of 64 KiB */
	u32 us;
	int i;

	EQ(sdp_zc_pace_read(&p, 4096, 100), 0);
	EQ(p.rate, 0);
	EQ(sdp_zc_pace_read(&p, len, 16000), 0);
	EQ(p.rate, 2000);
	EQ(sdp_zc_pace_read(&p, len, 8000), 0);
	EQ(p.rate, 1000);
	EQ(sdp_zc_pace_read(&p, len, 24000), 0);
	EQ(p.rate, 1000 + 2000 / 8);
	/* Three times the rate each round, within the factor: never slow. */
	for (i = 0; i < 5; i++) {
		us = p.rate * 8 * 3;
		EQ(sdp_zc_pace_read(&p, len, us), 0);
		EQ(p.slow_ms[0], 0);
	}
	EQ(p.rate > 3 * 1250, true);	/* it followed: 1.25 times a round */
	/* Then reads five times the rate's time: slow, by the rate alone. */
	us = p.rate * 8 * 5 + 50000;
	EQ(sdp_zc_read_slow(len, us, 0), false);
	EQ(sdp_zc_pace_read(&p, len, us), 0);
	EQ(sdp_zc_pace_read(&p, len, us) >= SDP_ZC_BACKOFF_MIN_MS, true);
	/* The link stays that slow, but clean: the probe teaches it anew. */
	EQ(sdp_zc_pace_read(&p, len, us), 0);
	EQ(p.probe, false);
	EQ(p.rate, us / 8);
	EQ(sdp_zc_pace_read(&p, len, us), 0);
}

/* A Resume as the active side would send it. */
static struct sdp_resume resume(u8 mid)
{
	struct sdp_resume r;

	memset(&r, 0, sizeof(r));
	r.bsdh = bsdh(mid, 4, sizeof(r), 0, 0);
	r.version = SDP_VERSION;
	r.conn_id = cpu_to_be32(0x8badf00d);
	r.gen = cpu_to_be32(1);
	r.rcvsz = cpu_to_be32(SDP_BUF_SMALL);
	r.rx_seq = cpu_to_be64(1ULL << 40);
	memset(r.tag, 0xa5, sizeof(r.tag));
	return r;
}

static void test_resume_sizes(void)
{
	/* The layouts of Documentation/networking/sdp-resume.rst. */
	EQ(sizeof(struct sdp_resume), 56);
	EQ(SDP_CM_REQ_PRIVATE_DATA_MAX, 56);
	EQ(offsetof(struct sdp_resume, version), 16);
	EQ(offsetof(struct sdp_resume, flags), 17);
	EQ(offsetof(struct sdp_resume, conn_id), 20);
	EQ(offsetof(struct sdp_resume, gen), 24);
	EQ(offsetof(struct sdp_resume, rcvsz), 28);
	EQ(offsetof(struct sdp_resume, rx_seq), 32);
	EQ(offsetof(struct sdp_resume, tag), 40);
	EQ(sizeof(struct sdp_hello_ack_resume), 24);
	EQ(offsetof(struct sdp_hello_ack_resume, port), 4);
	EQ(offsetof(struct sdp_hello_ack_resume, secret), 8);
	EQ(sizeof(struct sdp_hello_ack) + sizeof(struct sdp_hello_ack_resume),
	   48);
	/* New message ids and flags clash with none of the old ones. */
	EQ(SDP_MID_RESUME, 0x20);
	EQ(SDP_MID_RESUME_ACK, 0x21);
	EQ(SDP_MID_RESUME_REFUSED, 0x22);
	EQ(SDP_MID_ADDRS, 0x23);
	EQ(SDP_HF_RESUME & (SDP_HF_RINV | SDP_HF_RESIZE | SDP_HF_SHRINK |
			    SDP_HF_PING), 0);
}

static void test_resume_msg_check(void)
{
	struct sdp_resume good = resume(SDP_MID_RESUME), r;
	const u32 n = sizeof(good);

	EQ(sdp_resume_msg_check(&good, n, SDP_MID_RESUME), SDP_RESUME_MSG_OK);
	/* A connect request's private data comes padded. */
	EQ(sdp_resume_msg_check(&good, 92, SDP_MID_RESUME), SDP_RESUME_MSG_OK);
	r = good;
	r.flags = SDP_RF_FIN;
	EQ(sdp_resume_msg_check(&r, n, SDP_MID_RESUME), SDP_RESUME_MSG_OK);
	r = resume(SDP_MID_RESUME_ACK);
	EQ(sdp_resume_msg_check(&r, n, SDP_MID_RESUME_ACK), SDP_RESUME_MSG_OK);

	EQ(sdp_resume_msg_check(NULL, 0, SDP_MID_RESUME), SDP_RESUME_MSG_BAD);
	EQ(sdp_resume_msg_check(&good, n - 1, SDP_MID_RESUME),
	   SDP_RESUME_MSG_BAD);
	/* A ResumeAck where a Resume belongs, and a Hello. */
	EQ(sdp_resume_msg_check(&good, n, SDP_MID_RESUME_ACK),
	   SDP_RESUME_MSG_BAD);
	r = good;
	r.bsdh.mid = SDP_MID_HELLO;
	EQ(sdp_resume_msg_check(&r, n, SDP_MID_RESUME), SDP_RESUME_MSG_BAD);
#define BAD_IF(field, value)						\
	do {								\
		r = good;						\
		r.field = value;					\
		EQ(sdp_resume_msg_check(&r, n, SDP_MID_RESUME),		\
		   SDP_RESUME_MSG_BAD);					\
	} while (0)
	BAD_IF(version, 0x20);
	BAD_IF(version, 0x40);
	BAD_IF(conn_id, 0);
	BAD_IF(gen, 0);
#undef BAD_IF
	/* The new QP's buffers must be usable, as a Hello's. */
	r = good;
	r.rcvsz = cpu_to_be32(SDP_MIN_PEER_RCVSZ - 1);
	EQ(sdp_resume_msg_check(&r, n, SDP_MID_RESUME),
	   SDP_RESUME_MSG_BAD_BUFS);
	r = good;
	r.bsdh.bufs = 0;
	EQ(sdp_resume_msg_check(&r, n, SDP_MID_RESUME),
	   SDP_RESUME_MSG_BAD_BUFS);
	/*
	 * Reserved fields and unknown flags are ignored, as everywhere
	 * (the BSDH's flags are 0xa5 already); a minor version may differ.
	 * The tag and rx_seq are not the format's to judge.
	 */
	r = good;
	r.flags = 0xff;
	r.rsvd = cpu_to_be16(0xffff);
	r.version = SDP_VERSION + 1;
	r.bsdh.mseq = cpu_to_be32(7);
	memset(r.tag, 0, sizeof(r.tag));
	r.rx_seq = 0;
	EQ(sdp_resume_msg_check(&r, n, SDP_MID_RESUME), SDP_RESUME_MSG_OK);
}

static void test_hello_ack_resume_ok(void)
{
	struct {
		struct sdp_hello_ack ha;
		struct sdp_hello_ack_resume x;
		u8 pad[196 - 48];	/* a reply's private data on IB */
	} __packed pd;
	const u32 n = sizeof(pd.ha) + sizeof(pd.x);

	memset(&pd, 0, sizeof(pd));
	pd.ha.bsdh = bsdh(SDP_MID_HELLO_ACK, 4, n, 0, 0);
	pd.x.conn_id = cpu_to_be32(7);
	pd.x.port = cpu_to_be16(1019);
	EQ(sizeof(pd), 196);
	EQ(sdp_hello_ack_resume_ok(&pd.ha, n), true);
	EQ(sdp_hello_ack_resume_ok(&pd.ha, 196), true);
	/* Short over iWARP, where the length is what arrived ... */
	EQ(sdp_hello_ack_resume_ok(&pd.ha, n - 1), false);
	EQ(sdp_hello_ack_resume_ok(&pd.ha, sizeof(pd.ha)), false);
	/* ... and on IB, where only the BSDH's len tells. */
	pd.ha.bsdh.len = cpu_to_be32(sizeof(pd.ha));
	EQ(sdp_hello_ack_resume_ok(&pd.ha, 196), false);
	pd.ha.bsdh.len = cpu_to_be32(n - 1);
	EQ(sdp_hello_ack_resume_ok(&pd.ha, 196), false);
	pd.ha.bsdh.len = cpu_to_be32(n);
	pd.x.rsvd = cpu_to_be16(1);	/* reserved: ignored */
	EQ(sdp_hello_ack_resume_ok(&pd.ha, n), true);
	pd.x.port = 0;
	EQ(sdp_hello_ack_resume_ok(&pd.ha, n), false);
	pd.x.port = cpu_to_be16(1019);
	pd.x.conn_id = 0;
	EQ(sdp_hello_ack_resume_ok(&pd.ha, n), false);
}

static void test_resume_gen(void)
{
	EQ(sdp_resume_gen_ok(1, 0), true);
	EQ(sdp_resume_gen_ok(2, 1), true);
	/* A replay of the one that completed, and an older one. */
	EQ(sdp_resume_gen_ok(1, 1), false);
	EQ(sdp_resume_gen_ok(1, 2), false);
	/* One never offered. */
	EQ(sdp_resume_gen_ok(3, 1), false);
	EQ(sdp_resume_gen_ok(0, 0), false);
	EQ(sdp_resume_gen_ok(U32_MAX, U32_MAX - 1), true);
	/* No wrap to 0 after the last. */
	EQ(sdp_resume_gen_ok(0, U32_MAX), false);
}

static void test_resume_refusal(void)
{
	const enum sdp_resume_msg_verdict ok = SDP_RESUME_MSG_OK;

	EQ(sdp_resume_refusal(ok, true, 1, 0, true, true), SDP_RR_NONE);
	/* Each check, with every later one failing too: the first decides. */
	EQ(sdp_resume_refusal(SDP_RESUME_MSG_BAD, false, 9, 0, false, false),
	   SDP_RR_FORMAT);
	EQ(sdp_resume_refusal(SDP_RESUME_MSG_BAD_BUFS, true, 1, 0, true,
			      true), SDP_RR_FORMAT);
	EQ(sdp_resume_refusal(ok, false, 9, 0, false, false), SDP_RR_UNKNOWN);
	EQ(sdp_resume_refusal(ok, true, 1, 1, false, false), SDP_RR_STALE);
	EQ(sdp_resume_refusal(ok, true, 2, 1, false, false), SDP_RR_TAG);
	EQ(sdp_resume_refusal(ok, true, 2, 1, true, false), SDP_RR_ADDR);
	/* A replay with the right tag of its day is stale. */
	EQ(sdp_resume_refusal(ok, true, 1, 1, true, true), SDP_RR_STALE);
}

static void test_resume_seq_check(void)
{
	const u64 una = (1ULL << 32) + 100, nxt = una + 65536;

	EQ(sdp_resume_seq_check(una, una, nxt), SDP_RESUME_SEQ_OK);
	EQ(sdp_resume_seq_check(nxt, una, nxt), SDP_RESUME_SEQ_OK);
	EQ(sdp_resume_seq_check(una + 1, una, nxt), SDP_RESUME_SEQ_OK);
	EQ(sdp_resume_seq_check(una - 1, una, nxt), SDP_RESUME_SEQ_BEHIND);
	EQ(sdp_resume_seq_check(nxt + 1, una, nxt), SDP_RESUME_SEQ_AHEAD);
	/* 64 bits: no wrap at 2^32 makes an old position look new. */
	EQ(sdp_resume_seq_check(100, una, nxt), SDP_RESUME_SEQ_BEHIND);
	EQ(sdp_resume_seq_check(0, 0, 0), SDP_RESUME_SEQ_OK);
	EQ(sdp_resume_seq_check(1, 0, 0), SDP_RESUME_SEQ_AHEAD);
	EQ(sdp_resume_seq_check(UINT64_MAX, 0, UINT64_MAX - 1),
	   SDP_RESUME_SEQ_AHEAD);
}

static void test_resume_take(void)
{
	u64 left;

	/* Kept slots of 100, 200, 300 bytes; the peer has 250 of them. */
	left = 250;
	EQ(sdp_resume_take(&left, 100), 100);
	EQ(sdp_resume_take(&left, 200), 150);
	EQ(sdp_resume_take(&left, 300), 0);
	EQ(left, 0);
	/* ... exactly the first two: the third goes again whole. */
	left = 300;
	EQ(sdp_resume_take(&left, 100), 100);
	EQ(sdp_resume_take(&left, 200), 200);
	EQ(sdp_resume_take(&left, 300), 0);
	/* ... none. */
	left = 0;
	EQ(sdp_resume_take(&left, 100), 0);
	/* More than 4 GiB left does not truncate into a slot's u32. */
	left = (1ULL << 32) + 5;
	EQ(sdp_resume_take(&left, 32768), 32768);
	EQ(left, (1ULL << 32) + 5 - 32768);
	/* An empty slot (a DisConn's) takes nothing. */
	left = 10;
	EQ(sdp_resume_take(&left, 0), 0);
	EQ(left, 10);
}

static void test_resume_backoff(void)
{
	EQ(sdp_resume_backoff_ms(0), 0);
	EQ(sdp_resume_backoff_ms(1), 1000);
	EQ(sdp_resume_backoff_ms(2), 2000);
	EQ(sdp_resume_backoff_ms(3), 4000);
	EQ(sdp_resume_backoff_ms(4), 8000);
	EQ(sdp_resume_backoff_ms(5), 8000);
	EQ(sdp_resume_backoff_ms(U32_MAX), SDP_RESUME_BACKOFF_MAX_MS);
}

static void test_resume_bound(void)
{
	EQ(sdp_resume_bound_ms(0, 900000), 900000);
	EQ(sdp_resume_bound_ms(10000, 900000), 10000);
	/* TCP_USER_TIMEOUT longer than the sysctl wins too, as for TCP. */
	EQ(sdp_resume_bound_ms(1800000, 900000), 1800000);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_wire_sizes),
	TAP_TEST(test_mseq_after),
	TAP_TEST(test_rx_reposts),
	TAP_TEST(test_bsdh_check_ok),
	TAP_TEST(test_bsdh_check_short),
	TAP_TEST(test_bsdh_check_len),
	TAP_TEST(test_bsdh_check_mseq),
	TAP_TEST(test_bsdh_check_credits),
	TAP_TEST(test_bsdh_check_ack),
	TAP_TEST(test_bsdh_credits),
	TAP_TEST(test_bsdh_bufs),
	TAP_TEST(test_bsdh_init),
	TAP_TEST(test_mseq_limit_update),
	TAP_TEST(test_peer_credits),
	TAP_TEST(test_credit_grant),
	TAP_TEST(test_credit_update_due),
	TAP_TEST(test_data_credit_ok),
	TAP_TEST(test_ctrl_credit_ok),
	TAP_TEST(test_ping_ok),
	TAP_TEST(test_version_ok),
	TAP_TEST(test_peer_bufs_ok),
	TAP_TEST(test_hello_check),
	TAP_TEST(test_hello_ack_check),
	TAP_TEST(test_peer_tx_max),
	TAP_TEST(test_crbah_check),
	TAP_TEST(test_srcavail_credit_ok),
	TAP_TEST(test_flow_model),
	TAP_TEST(test_flow_overrun),
	TAP_TEST(test_zc_read_slow),
	TAP_TEST(test_zc_pace),
	TAP_TEST(test_zc_pace_cost),
	TAP_TEST(test_zc_pace_rate),
	TAP_TEST(test_resume_sizes),
	TAP_TEST(test_resume_msg_check),
	TAP_TEST(test_hello_ack_resume_ok),
	TAP_TEST(test_resume_gen),
	TAP_TEST(test_resume_refusal),
	TAP_TEST(test_resume_seq_check),
	TAP_TEST(test_resume_take),
	TAP_TEST(test_resume_backoff),
	TAP_TEST(test_resume_bound),
};

TAP_MAIN(tests)
