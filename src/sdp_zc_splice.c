// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- zero-copy transfers of pages spliced to the
 * socket: gathered across calls, then sent as a nonblocking zero-copy
 * send (sdp_zc_async.h; sdp_zc_tx.c sees it through).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#include <linux/bvec.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "sdp.h"
#include "sdp_mem.h"
#include "sdp_timers.h"
#include "sdp_tx.h"
#include "sdp_wire.h"
#include "sdp_zc.h"
#include "sdp_zc_async.h"

/*
 * Pages spliced to the socket (sendfile(), splice(): sendmsg() with
 * MSG_SPLICE_PAGES from Linux 6.5, ->sendpage() before) go zero-copy
 * too, as TCP sends them without copying: we take a reference on each
 * page, as TCP's skb does, and return.  A pipe's worth of pages per call
 * (64 KiB; one page per ->sendpage()) is too little to advertise alone,
 * so the pages of consecutive calls that say more is to come are gathered
 * (sdp_sock::zc_gather) until SDP_ZC_MAX_BYTES, a call without MSG_MORE,
 * pages that cannot follow in one MR mapping, other data, shutdown() or
 * close(), or SDP_ZC_GATHER_IDLE without a call seal them.  Sealed, they
 * go as a nonblocking MSG_ZEROCOPY send does (struct sdp_zc_async: the
 * peer reads them, or the rest is copied), with no notification; fewer
 * than SDP_ZC_SPLICE_MIN bytes are copied at once.  As with TCP, a file
 * written after sendfile() returned may send the new bytes.
 *
 * The spliced pages a socket holds, gathered and in progress
 * (sdp_sock::zc_spliced), stay within its send buffer
 * (sdp_zc_splice_limit()), as TCP's spliced data stays within sk_sndbuf,
 * and are charged to net.sdp.mem (sdp_mem_charge(), a page each, given
 * back when they go: sdp_zc_async_end()).  A gathering takes at most
 * half of that, so that one gathers while the other goes.  When the
 * pages held leave no room, the caller waits for the send in progress to
 * end (a nonblocking one says EAGAIN); when net.sdp.mem's max refuses
 * them, they go buffered.  Their memory cgroup is the one that allocated
 * them (the pipe's writer, the page cache's reader), whose charge our
 * reference keeps.
 */
#define SDP_ZC_SPLICE_MIN	(256 * 1024)
#define SDP_ZC_GATHER_IDLE	DIV_ROUND_UP(HZ, 100)

/*
 * The page of the spliced bytes @bv from byte @skip on, as a bio_vec of
 * one page in @pv; false when they are not in one page we may keep
 * (sendpage_ok(): not slab memory, referenced).
 */
static bool sdp_zc_splice_page(const struct bio_vec *bv, size_t skip,
			       size_t len, struct bio_vec *pv)
{
	size_t at = bv->bv_offset + skip;
	struct page *page = nth_page(bv->bv_page, at >> PAGE_SHIFT);

	bvec_set_page(pv, page, len, offset_in_page(at));
	return pv->bv_offset + len <= PAGE_SIZE && sendpage_ok(page);
}

/* May @pv follow @prev in one MR mapping (whole pages in between)? */
static bool sdp_zc_splice_follows(const struct bio_vec *prev,
				  const struct bio_vec *pv)
{
	return prev->bv_offset + prev->bv_len == PAGE_SIZE && !pv->bv_offset;
}

/*
 * The pages of @from, one bio_vec each, the first of them to follow
 * @prev (or NULL); the first @max go into @pv.  Returns how many there
 * are, or 0 when they cannot be gathered (a page we may not keep, or not
 * all contiguous in one mapping).
 */
static u32 sdp_zc_splice_pages(const struct iov_iter *from,
			       const struct bio_vec *prev,
			       struct bio_vec *pv, u32 max)
{
	const struct bio_vec *bv = from->bvec;
	unsigned long nsegs = from->nr_segs;
	size_t skip = from->iov_offset, left = iov_iter_count(from);
	struct bio_vec page, last;
	u32 n = 0;

	if (prev)
		last = *prev;
	for (; nsegs && left; bv++, nsegs--, skip = 0) {
		size_t len = min_t(size_t, bv->bv_len - skip, left);

		if (!len)
			continue;
		if (!sdp_zc_splice_page(bv, skip, len, &page) ||
		    ((prev || n) && !sdp_zc_splice_follows(&last, &page)))
			return 0;
		if (n < max)
			pv[n] = page;
		last = page;
		left -= len;
		n++;
	}
	return left ? 0 : n;
}

/*
 * The spliced bytes a socket may hold: what its send ring holds
 * (SO_SNDBUF when set, else SDP_DEFAULT_BUFS buffers; fewer under memory
 * pressure), as much again as the ring's buffered bytes.
 */
static u32 sdp_zc_splice_limit(const struct sdp_sock *ssk)
{
	return READ_ONCE(ssk->conn.tx_count) * SDP_BUF_SIZE;
}

/* Is there room for a page more of spliced bytes?  lock_sock() or @lock. */
static bool sdp_zc_splice_room(const struct sdp_sock *ssk)
{
	return ssk->zc_spliced + PAGE_SIZE <= sdp_zc_splice_limit(ssk);
}

/*
 * May spliced pages be gathered now: none are, or those that are take
 * more, and the pages held leave room?  Also while a zero-copy send is
 * in progress: they follow it.
 */
bool sdp_zc_gathering(struct sdp_sock *ssk)
{
	bool ok;

	spin_lock_bh(&ssk->lock);
	ok = (!ssk->zc_gather || !ssk->zc_gather->sealed) &&
	     sdp_zc_splice_room(ssk);
	spin_unlock_bh(&ssk->lock);
	return ok;
}

/**
 * sdp_zc_splice() - gather spliced pages for a zero-copy send
 * @sk: the socket, lock_sock() and tx_mutex held, connection established,
 *	gathering (sdp_zc_gathering())
 * @from: the pages (a bvec iterator); it advances by what is taken
 * @more: more is to come (MSG_MORE)
 *
 * Return: bytes taken, with a reference on each of their pages; or 0,
 * when any gathered pages are sealed first, or the pages held leave no
 * room (sdp_zc_gathering() is false: the caller waits for them to go,
 * then tries again), or, with none, @from is to go buffered (also when
 * net.sdp.mem refuses the pages).
 */
size_t sdp_zc_splice(struct sock *sk, struct iov_iter *from, bool more)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_zc_async *za = ssk->zc_gather;
	u32 limit = sdp_zc_splice_limit(ssk);
	u32 cap = min_t(u32, limit / 2, SDP_ZC_MAX_BYTES);
	const struct bio_vec *prev = NULL;
	u32 n, i, k, max_pages, room;
	size_t taken = 0;

	sock_owned_by_me(sk);
	if (za)
		prev = &za->bvec[za->nr_bvec - 1];
	if (!ssk->zc_thresh || sdp_zc_held(ssk) || !iov_iter_is_bvec(from) ||
	    !sdp_zc_splice_pages(from, prev, NULL, 0) ||
	    !sdp_zc_splice_room(ssk))
		goto seal;
	if (!za) {
		za = kzalloc(sizeof(*za), GFP_KERNEL);
		if (!za)
			return 0;
		za->bvec = kvmalloc_array(SDP_ZC_MAX_PAGES, sizeof(*za->bvec),
					  GFP_KERNEL);
		if (!za->bvec) {
			kfree(za);
			return 0;
		}
		za->spliced = true;
	}
	max_pages = min_t(u32, sdp_zc_mr_pages(ssk), SDP_ZC_MAX_PAGES);
	room = max_pages - za->nr_bvec;
	n = sdp_zc_splice_pages(from, prev, &za->bvec[za->nr_bvec], room);
	/* Within a gathering's share of the send buffer, and the rest's. */
	for (k = 0; k < min(n, room); k++) {
		u32 len = za->bvec[za->nr_bvec + k].bv_len;

		if (za->len + taken + len > cap ||
		    ssk->zc_spliced + taken + len > limit)
			break;
		taken += len;
	}
	/* A page each, as net.sdp.mem counts them; above its max, buffered. */
	if (k && sdp_mem_charge(ssk, k, PAGE_SIZE, false)) {
		k = 0;
		taken = 0;
	}
	if (!ssk->zc_gather) {
		if (!k) {
			kvfree(za->bvec);
			kfree(za);
			return 0;
		}
		spin_lock_bh(&ssk->lock);
		ssk->zc_gather = za;
		ssk->conn.zc_busy++;		/* its pages go before the QP */
		spin_unlock_bh(&ssk->lock);
		sdp_queue_work_within(ssk, SDP_ZC_GATHER_IDLE + 1);
	}
	for (i = 0; i < k; i++)
		get_page(za->bvec[za->nr_bvec + i].bv_page);
	za->nr_bvec += k;
	za->len += taken;
	spin_lock_bh(&ssk->lock);
	WRITE_ONCE(za->unsent, za->len);
	ssk->zc_spliced += taken;
	spin_unlock_bh(&ssk->lock);
	za->gather_by = jiffies + SDP_ZC_GATHER_IDLE;
	iov_iter_advance(from, taken);
	if (more && !iov_iter_count(from) && za->nr_bvec < max_pages &&
	    za->len + PAGE_SIZE <= cap && sdp_zc_splice_room(ssk))
		return taken;
seal:
	sdp_zc_gather_seal(ssk);
	return taken;
}

/* A scatterlist of the gathered pages, for sdp_zc_map(). */
static int sdp_zc_splice_sgt(struct sdp_zc_async *za)
{
	struct scatterlist *sg;
	u32 i;
	int err;

	err = sg_alloc_table(&za->zp.sgt, za->nr_bvec, GFP_KERNEL);
	if (err)
		return err;
	for_each_sg(za->zp.sgt.sgl, sg, za->nr_bvec, i)
		sg_set_page(sg, za->bvec[i].bv_page, za->bvec[i].bv_len,
			    za->bvec[i].bv_offset);
	za->zp.dir = DMA_TO_DEVICE;
	return 0;
}

/*
 * The sealed spliced pages become the zero-copy send in progress
 * (sdp_sock::zc_async): an advertisement, or, if they are few or cannot
 * be mapped or advertised now, bytes the work copies into the send ring
 * (FILL).  lock_sock() held, no send in progress.
 */
void sdp_zc_gather_start(struct sdp_sock *ssk)
{
	struct sdp_zc_async *za = ssk->zc_gather;
	struct sock *sk = &ssk->sk;
	struct ib_mr *mr = NULL;
	bool tried = false;
	long timeo = 0;
	int err = -EINVAL;

	if (za->len >= max_t(u32, ssk->zc_thresh, SDP_ZC_SPLICE_MIN)) {
		tried = true;
		sdp_tx_ring_ready(ssk);
		if (!sdp_zc_wait_slot(sk, &timeo))
			mr = sdp_zc_mr(ssk);
		if (mr && !sdp_zc_splice_sgt(za) &&
		    !sdp_zc_map(ssk, &za->zp, mr))
			err = 0;
	}
	spin_lock_bh(&ssk->lock);
	if (!err)
		err = sdp_zc_async_post(ssk, za, mr);
	if (err) {
		za->phase = SDP_ZA_FILL;
		WRITE_ONCE(za->unsent, za->len);
		if (tried)
			sdp_zc_count_fallback_locked(ssk);
	}
	ssk->zc_gather = NULL;
	WRITE_ONCE(ssk->zc_async, za);
	spin_unlock_bh(&ssk->lock);
	sdp_queue_work(ssk);
}

/**
 * sdp_zc_gather_seal() - send the spliced pages gathered so far
 * @ssk: the socket, lock_sock() held
 *
 * They take no more pages, and go now, or as soon as the zero-copy send
 * in progress ends (sdp_zc_async_run()).
 */
void sdp_zc_gather_seal(struct sdp_sock *ssk)
{
	sock_owned_by_me(&ssk->sk);
	if (!ssk->zc_gather)
		return;
	spin_lock_bh(&ssk->lock);
	ssk->zc_gather->sealed = true;
	spin_unlock_bh(&ssk->lock);
	if (!ssk->zc_async)
		sdp_zc_gather_start(ssk);
}
