/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- a zero-copy send that runs without its
 * caller: what sdp_zc_tx.c (MSG_ZEROCOPY, and the work that sees every
 * such send through) and sdp_zc_splice.c (pages spliced to the socket,
 * gathered into one) share.  Nothing else looks inside.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_ZC_ASYNC_H
#define _SDP_ZC_ASYNC_H

#include <linux/bvec.h>
#include <linux/types.h>

#include "sdp_zc.h"

struct ib_mr;
struct sk_buff;
struct sock;
struct sdp_sock;

/*
 * A nonblocking MSG_ZEROCOPY send in progress: it returned once its
 * pages were pinned and mapped, and sdp_work() sees it through.  Phases:
 * REG (on Soft-RoCE, the registration and SrcAvail wait for our sends in
 * flight to be acknowledged, sdp_zc_post_advert(); sdp_zc_sq_progress()
 * queues the work; after SDP_ZC_STALL the bytes go buffered instead),
 * ADVERT (the peer reads; a stall cancels it, as sdp_zc_tx_wait() does
 * for a blocking send), INV (our LOCAL_INV of the key is in flight),
 * FILL (what the peer did not read is copied from the still pinned pages
 * into the send ring as room comes; SDP_ZT_ASYNC_FILL has
 * sdp_tx_try_control() queue the work when it does).  Then the pages go
 * and the notification is queued.
 */
enum sdp_za_phase {
	SDP_ZA_REG,
	SDP_ZA_ADVERT,
	SDP_ZA_INV,
	SDP_ZA_FILL,
};

/**
 * struct sdp_zc_async - a nonblocking MSG_ZEROCOPY send in progress
 * @zp: the caller's pages, pinned and mapped; zp.mm is grabbed
 * @bvec: the pages as a bio_vec array, made for the FILL phase; or
 *	the spliced pages, one per entry, each with a reference we hold
 * @nr_bvec: entries in @bvec
 * @spliced: pages spliced to the socket (sendfile(), splice()): no pins,
 *	no mm, no notification
 * @gather_by: while gathered (sdp_sock::zc_gather), when it is sealed
 *	if no more pages come
 * @sealed: gathered pages that take no more: they go once the send in
 *	progress (sdp_sock::zc_async) ends; written under sdp_sock::lock
 * @note: its notification (sdp_msgzc_start()); NULL for @spliced
 * @id: the notification's id
 * @off: offset of the first byte in the first page
 * @len: bytes advertised (and taken by the send)
 * @acked: of them, read by the peer (once the advertisement is over)
 * @unsent: bytes in neither the advertisement nor the send ring (FILL);
 *	written under sdp_sock::lock too, for SIOCOUTQ
 * @phase: enum sdp_za_phase
 * @cancelled: we sent SrcAvailCancel (or took the SrcAvail back)
 * @seen: @acked as the last stall check saw it
 * @stall: when the advertisement counts as stalled (no progress)
 * @last: when it is cancelled however it goes (SDP_ZC_ADVERT_MAX)
 * @answer_by: when a peer that has not answered SrcAvailCancel, or a
 *	LOCAL_INV that has not completed, is aborted
 *
 * Everything but @unsent is under lock_sock().
 */
struct sdp_zc_async {
	struct sdp_zc_pages zp;
	struct bio_vec *bvec;
	u32 nr_bvec;
	bool spliced;
	unsigned long gather_by;
	bool sealed;
	struct sk_buff *note;
	u32 id;
	u32 off;
	u32 len;
	u32 acked;
	u32 unsent;
	enum sdp_za_phase phase;
	bool cancelled;
	u32 seen;
	unsigned long stall;
	unsigned long last;
	unsigned long answer_by;
};

/* sdp_zc_tx.c */
bool sdp_zc_held(struct sdp_sock *ssk);
int sdp_zc_wait_slot(struct sock *sk, long *timeo);
int sdp_zc_async_post(struct sdp_sock *ssk, struct sdp_zc_async *za,
		      struct ib_mr *mr);

/* sdp_zc_splice.c */
void sdp_zc_gather_start(struct sdp_sock *ssk);

#endif /* _SDP_ZC_ASYNC_H */
