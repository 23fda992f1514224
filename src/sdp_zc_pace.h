/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- when zero-copy gives way to the buffered
 * path: the reader's rule about slow RDMA reads, as pure functions.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * On a lossy link an RC transport repairs a lost packet of an RDMA Read
 * response by asking again: after its local ACK timeout (0.5 s on 6.12's
 * Soft-RoCE, 2.1 s on 6.1's, tens of milliseconds and more on adapters),
 * or from the gap, resending the rest of the read; a SEND train is
 * repaired at the next packet's NAK instead.  So one lost packet can cost
 * a zero-copy transfer a timeout or most of a read again where it costs
 * the buffered path almost nothing.
 *
 * The reader, which alone sees its reads, times each one from its post
 * to its completion (sdp_zc_recv(), sdp_zc_rd_done()).  A read is slow,
 * as if retried, when it took longer than SDP_ZC_SLOW_BASE_MS plus its
 * length at SDP_ZC_SLOW_BYTES_PER_MS (no link is that slow otherwise: a
 * retry after the ACK timeout), or longer than SDP_ZC_SLOW_FACTOR times
 * what the connection's rate gives for as many bytes, plus
 * SDP_ZC_SLOW_MARGIN_MS (a transport that asks again at the first gap,
 * as 6.12's Soft-RoCE does for read responses, resends the rest of the
 * read from there: one loss multiplies the read's time without a
 * timeout).  The connection's rate is the fastest read of at least
 * SDP_ZC_PACE_MIN_LEN seen, rising by an eighth of the difference with
 * each read that is not slow, so that a host that gets busier step by
 * step is not taken for a lossy link; slow reads do not teach it, and a
 * back-off forgets it, so that a link that stays slower but clean is
 * judged afresh by its next reads.
 *
 * After SDP_ZC_SLOW_RUN slow reads among the last SDP_ZC_SLOW_WINDOW the
 * reader declines advertisements (SendSM, the spec's request for the
 * buffered path) for a back-off SDP_ZC_BACKOFF_COST times as long as those
 * reads took, at least SDP_ZC_BACKOFF_MIN_MS: the time lost to slow reads
 * stays a small share of the time, and reads that waited for a 2 s timeout
 * back off for longer than reads a resend slowed by tens of milliseconds.
 * A read after a slow one reads at most SDP_ZC_PROBE_LEN bytes: on a link
 * still lossy it waits for one retry, not for the several a read of 1 MiB
 * meets, and no read comes near the reader's bound on its wait
 * (SDP_ZC_ANSWER_TIMEOUT), which cuts a read that still progresses, one
 * retry at a time, as surely as one that never completes.  Such a short
 * read that is fast does not hide the slow ones around it: they are
 * counted in the window, not in a row.  The first read after a back-off
 * (the probe) is as short.  A slow probe starts the next back-off at once,
 * twice the last one or its own cost if longer, up to
 * SDP_ZC_BACKOFF_MAX_MS.  A probe that is not slow brings zero-copy back;
 * the last back-off is remembered, halved by each read that is not slow,
 * so that on a link that stays lossy the next back-off is twice it again
 * instead of starting small.  The sender, declined SDP_ZC_HOLD_AFTER times
 * in a row, stops advertising for SDP_ZC_HOLD (sdp_zc_tx.c), so the
 * back-off costs a declined advertisement, one round trip, a second.
 *
 * tests/unit.c checks these without a guest (make unit); the header
 * builds in the kernel and, through tests/unit/kcompat.h, in user space.
 */
#ifndef _SDP_ZC_PACE_H
#define _SDP_ZC_PACE_H

#ifdef __KERNEL__
#include <linux/string.h>
#include <linux/types.h>
#else
#include "kcompat.h"
#endif

#define SDP_ZC_SLOW_BASE_MS		400
#define SDP_ZC_SLOW_BYTES_PER_MS	16000	/* 16 MB/s */
#define SDP_ZC_SLOW_FACTOR		4
#define SDP_ZC_SLOW_MARGIN_MS		50
#define SDP_ZC_PACE_MIN_LEN		65536	/* 1 << 16 */
#define SDP_ZC_SLOW_RUN			2
#define SDP_ZC_SLOW_WINDOW		4
#define SDP_ZC_BACKOFF_MIN_MS		1000
#define SDP_ZC_BACKOFF_MAX_MS		64000
#define SDP_ZC_BACKOFF_COST		8
#define SDP_ZC_PROBE_LEN		65536

/**
 * struct sdp_zc_pace - the reader's record of its recent RDMA reads
 * @slow_ms: the last SDP_ZC_SLOW_WINDOW reads, the latest first: how
 *	long each took in ms if it was slow, else 0 (a slow read takes more
 *	than SDP_ZC_SLOW_MARGIN_MS)
 * @backoff_ms: the last back-off, halved by each read that is not slow
 *	since; 0 when none is remembered
 * @rate: microseconds per SDP_ZC_PACE_MIN_LEN bytes, the connection's
 *	rate (above); 0 before the first read that teaches it
 * @probe: the next read is the first after a back-off
 */
struct sdp_zc_pace {
	u32 slow_ms[SDP_ZC_SLOW_WINDOW];
	u32 backoff_ms;
	u32 rate;
	bool probe;
};

/*
 * Microseconds per SDP_ZC_PACE_MIN_LEN bytes of a read of @len (at least
 * that many) in @us.
 */
static inline u32 sdp_zc_read_rate(u32 len, u32 us)
{
	u32 units = len / SDP_ZC_PACE_MIN_LEN;

	return us / (units ? units : 1);
}

/*
 * Did a read of @len bytes that took @us microseconds wait for a retry,
 * on a connection whose recent reads went at @rate (0: unknown)?
 */
static inline bool sdp_zc_read_slow(u32 len, u32 us, u32 rate)
{
	u64 limit = (SDP_ZC_SLOW_BASE_MS + len / SDP_ZC_SLOW_BYTES_PER_MS) *
		    1000ULL;

	if (us > limit)
		return true;
	if (!rate)
		return false;
	limit = ((u64)rate * len >> 16) * SDP_ZC_SLOW_FACTOR +
		SDP_ZC_SLOW_MARGIN_MS * 1000;
	return us > limit;
}

/* A read that was not slow: the connection's rate follows it. */
static inline void sdp_zc_pace_learn(struct sdp_zc_pace *p, u32 len, u32 us)
{
	u32 r;

	if (len < SDP_ZC_PACE_MIN_LEN)
		return;
	r = sdp_zc_read_rate(len, us);
	if (!p->rate || r < p->rate)
		p->rate = r;
	else
		p->rate += (r - p->rate) / 8;
}

/*
 * How much of @len bytes the next read may take: a probe, or a read
 * after a slow one, takes little.
 */
static inline u32 sdp_zc_pace_read_len(const struct sdp_zc_pace *p, u32 len)
{
	if (!p->probe && !p->slow_ms[0])
		return len;
	return len > SDP_ZC_PROBE_LEN ? SDP_ZC_PROBE_LEN : len;
}

/*
 * Note the read that took @ms (0: it was not slow) as the latest; returns
 * how many of the reads in the window were slow, and their time in *@total.
 */
static inline u32 sdp_zc_pace_note(struct sdp_zc_pace *p, u32 ms, u32 *total)
{
	u32 i, n = 0;

	*total = 0;
	for (i = SDP_ZC_SLOW_WINDOW - 1; i > 0; i--)
		p->slow_ms[i] = p->slow_ms[i - 1];
	p->slow_ms[0] = ms;
	for (i = 0; i < SDP_ZC_SLOW_WINDOW; i++) {
		n += !!p->slow_ms[i];
		*total += p->slow_ms[i];
	}
	return n;
}

/* The back-off that slow reads of @ms in all start now, in ms. */
static inline u32 sdp_zc_pace_backoff(const struct sdp_zc_pace *p, u32 ms)
{
	u64 b = (u64)ms * SDP_ZC_BACKOFF_COST;

	if (b < SDP_ZC_BACKOFF_MIN_MS)
		b = SDP_ZC_BACKOFF_MIN_MS;
	if (b < 2ULL * p->backoff_ms)
		b = 2ULL * p->backoff_ms;
	return b < SDP_ZC_BACKOFF_MAX_MS ? b : SDP_ZC_BACKOFF_MAX_MS;
}

/*
 * Account a read of @len bytes that took @us.  Returns the back-off to
 * start now, in ms, during which advertisements are declined; 0 for none.
 */
static inline u32 sdp_zc_pace_read(struct sdp_zc_pace *p, u32 len, u32 us)
{
	u32 n, ms;

	if (!sdp_zc_read_slow(len, us, p->rate)) {
		sdp_zc_pace_learn(p, len, us);
		sdp_zc_pace_note(p, 0, &ms);
		p->probe = false;
		p->backoff_ms /= 2;
		return 0;
	}
	ms = min_t(u32, us / 1000, SDP_ZC_BACKOFF_MAX_MS);
	n = sdp_zc_pace_note(p, ms ? ms : 1, &ms);
	if (n < SDP_ZC_SLOW_RUN && !p->probe)
		return 0;
	p->backoff_ms = sdp_zc_pace_backoff(p, ms);
	memset(p->slow_ms, 0, sizeof(p->slow_ms));
	p->rate = 0;
	p->probe = true;
	return p->backoff_ms;
}

#endif /* _SDP_ZC_PACE_H */
