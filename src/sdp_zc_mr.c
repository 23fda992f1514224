// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- zero-copy transfers: SrcAvail and RDMA Read
 * between user buffers.  Here: the pages of a transfer, the registration
 * MR and its invalidation, their completion handlers, and the lifetime of
 * the transfers; the send side is in sdp_zc_tx.c, the receive side in
 * sdp_zc_rx.c.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Lifetime: ssk->conn.zc_busy counts transfers in progress; sdp_work() does
 * not destroy the QP, CQ, PD and MR while it is non-zero, and the last
 * transfer to end on an aborted socket queues the work again.  So a
 * nonblocking send in progress also keeps its closed socket (through the
 * CM id's reference) until it is over.  A connect() again on a socket
 * whose connection is over, which frees them at once (sdp_conn_renew()),
 * first waits for them too (sdp_conn_quiesce()): they end soon, their work
 * requests flushed by the disconnect.  A blocking send counts from the
 * moment it has its send slot, before it maps its pages into the MR, so
 * every sleep of it without lock_sock() from then on finds the same
 * connection; the wait for that slot, before, checks that its connection
 * was not replaced meanwhile (sdp_sock::conn_gen).  A receiver counts
 * while its RDMA read is posted.  Every
 * connection has its own PD, so an advertised rkey is usable only
 * through that connection's QP, and only until the advertisement ends.
 */
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_conn.h"
#include "sdp_dev.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_zc.h"

/* Charge @npages to RLIMIT_MEMLOCK of the caller, as verbs users are. */
static int sdp_zc_account(unsigned long npages)
{
	struct mm_struct *mm = current->mm;
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (!mm)
		return -EFAULT;
	if (atomic64_add_return(npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Unmap and unpin @zp.  Pages spliced to the socket (sdp_zc_splice())
 * have no @zp->pages: their references are put by the caller.
 */
void sdp_zc_unpin(struct sdp_zc_pages *zp)
{
	if (zp->dev)
		ib_dma_unmap_sg(zp->dev, zp->sgt.sgl, zp->sgt.orig_nents,
				zp->dir);
	sg_free_table(&zp->sgt);
	if (!zp->pages)
		return;
	if (zp->dir == DMA_FROM_DEVICE)
		unpin_user_pages_dirty_lock(zp->pages, zp->npages, true);
	else
		unpin_user_pages(zp->pages, zp->npages);
	atomic64_sub(zp->npages, &zp->mm->pinned_vm);
	kvfree(zp->pages);
}

/*
 * Pin the @len bytes of user memory at @base and describe exactly them
 * in a scatterlist.  @dir DMA_FROM_DEVICE: the device will write them.
 */
int sdp_zc_pin(struct sdp_zc_pages *zp, unsigned long base, size_t len,
	       enum dma_data_direction dir)
{
	unsigned int off = offset_in_page(base);
	unsigned long npages = DIV_ROUND_UP(off + len, PAGE_SIZE);
	unsigned int gup;
	int n, err;

	memset(zp, 0, sizeof(*zp));
	if (!len)
		return -EINVAL;
	zp->dir = dir;
	/*
	 * The reader's pages are pinned for its own RDMA read only, as for
	 * O_DIRECT I/O.  The sender's stay pinned for as long as the peer
	 * takes to read them (up to SDP_ZC_ADVERT_MAX): a long-term pin,
	 * which keeps them out of movable and CMA memory.
	 */
	gup = dir == DMA_FROM_DEVICE ? FOLL_WRITE : FOLL_LONGTERM;
	err = sdp_zc_account(npages);
	if (err)
		return err;
	zp->pages = kvmalloc_array(npages, sizeof(*zp->pages), GFP_KERNEL);
	if (!zp->pages) {
		err = -ENOMEM;
		goto err_unaccount;
	}
	n = pin_user_pages_fast(base - off, npages, gup, zp->pages);
	if (n != npages) {
		if (n > 0)
			unpin_user_pages(zp->pages, n);
		err = n < 0 ? n : -EFAULT;
		goto err_free;
	}
	zp->npages = npages;
	zp->mm = current->mm;
	err = sg_alloc_table_from_pages(&zp->sgt, zp->pages, npages, off, len,
					GFP_KERNEL);
	if (err)
		goto err_unpin;
	return 0;

err_unpin:
	unpin_user_pages(zp->pages, npages);
err_free:
	kvfree(zp->pages);
err_unaccount:
	atomic64_sub(npages, &current->mm->pinned_vm);
	return err;
}

/* A transfer went buffered: its pages could not be pinned or mapped. */
void sdp_zc_count_fallback_locked(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	SDP_SK_INC(ssk, ZCOPY_FALLBACKS);
	SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_ZCOPY_FALLBACKS);
}

void sdp_zc_count_fallback(struct sdp_sock *ssk)
{
	spin_lock_bh(&ssk->lock);
	sdp_zc_count_fallback_locked(ssk);
	spin_unlock_bh(&ssk->lock);
}

static void sdp_zc_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_sock *ssk = cq->cq_context;

	/* Only a failed REG_MR completes (it is not signalled). */
	spin_lock(&ssk->lock);
	if (wc->status != IB_WC_WR_FLUSH_ERR &&
	    !test_bit(SDP_C_ABORT, &ssk->conn.flags)) {
		net_warn_ratelimited("memory registration failed: %s\n",
				     ib_wc_status_msg(wc->status));
		__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
	}
	spin_unlock(&ssk->lock);
}

static void sdp_zc_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct sdp_sock *ssk = cq->cq_context;

	spin_lock(&ssk->lock);
	if (wc->status != IB_WC_SUCCESS)
		set_bit(SDP_ZT_INV_ERR, &ssk->conn.zc_tx.flags);
	set_bit(SDP_ZT_INV_DONE, &ssk->conn.zc_tx.flags);
	if (ssk->zc_async)
		sdp_queue_work(ssk);
	spin_unlock(&ssk->lock);
	sdp_sock_wake(ssk, TASK_NORMAL);
}

/*
 * Sleep without lock_sock(), not interruptible, until @bit is set in
 * ssk->conn.flags.  For work requests that the QP completes or flushes in
 * bounded time; a QP that does neither is aborted (which flushes it).
 */
void sdp_zc_wait_bit(struct sock *sk, int bit, unsigned long *word)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	unsigned long end = jiffies + SDP_ZC_ANSWER_TIMEOUT;

	release_sock(sk);
	while (!wait_event_timeout(*sk_sleep(sk),
				   test_bit(bit, word), HZ)) {
		if (time_after(jiffies, end)) {
			net_warn_ratelimited("zero-copy work request not completed in %us; aborting\n",
					     SDP_ZC_ANSWER_TIMEOUT / HZ);
			sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ETIMEDOUT);
			end = jiffies + SDP_ZC_ANSWER_TIMEOUT;
		}
	}
	lock_sock(sk);
}

/*
 * One transfer fewer; the last one on a dead connection lets it go, and
 * wakes a connect() that waits to start anew (sdp_conn_quiesce()).
 */
void sdp_zc_put(struct sdp_sock *ssk)
{
	bool last;

	spin_lock_bh(&ssk->lock);
	last = !--ssk->conn.zc_busy;
	if (last && test_bit(SDP_C_ABORT, &ssk->conn.flags))
		sdp_queue_work(ssk);
	spin_unlock_bh(&ssk->lock);
	if (last)
		sdp_sock_wake(ssk, TASK_NORMAL);
}

/* Post the LOCAL_INV of our advertised key: 0 or a negative errno. */
int sdp_zc_inv_post(struct sdp_sock *ssk)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.wr_cqe = &ssk->conn.zc_tx.inv_cqe,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = ssk->conn.zc_tx.mr->rkey,
	};
	int err;

	spin_lock_bh(&ssk->lock);
	clear_bit(SDP_ZT_INV_DONE, &ssk->conn.zc_tx.flags);
	clear_bit(SDP_ZT_INV_ERR, &ssk->conn.zc_tx.flags);
	err = ib_post_send(ssk->conn.qp, &wr, NULL);
	spin_unlock_bh(&ssk->lock);
	return err;
}

/*
 * The LOCAL_INV is over (or could not be posted, @err): the MR is
 * destroyed instead of reused if the invalidation did not run.
 */
void sdp_zc_inv_check(struct sdp_sock *ssk, int err)
{
	if (err || test_bit(SDP_ZT_INV_ERR, &ssk->conn.zc_tx.flags)) {
		ib_dereg_mr(ssk->conn.zc_tx.mr);
		ssk->conn.zc_tx.mr = NULL;
	}
}

/* The advertisement is over: make its key useless before the pages go. */
void sdp_zc_invalidate(struct sock *sk)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	int err = sdp_zc_inv_post(ssk);

	if (!err)
		sdp_zc_wait_bit(sk, SDP_ZT_INV_DONE, &ssk->conn.zc_tx.flags);
	sdp_zc_inv_check(ssk, err);
}

/* Pages the registration MR maps at most. */
u32 sdp_zc_mr_pages(const struct sdp_sock *ssk)
{
	return clamp_t(u32, ssk->conn.sdev->ibdev->attrs.max_fast_reg_page_list_len,
		       2, SDP_ZC_MAX_PAGES);
}

struct ib_mr *sdp_zc_mr(struct sdp_sock *ssk)
{
	struct ib_mr *mr;

	if (ssk->conn.zc_tx.mr)
		return ssk->conn.zc_tx.mr;
	mr = ib_alloc_mr(ssk->conn.pd, IB_MR_TYPE_MEM_REG, sdp_zc_mr_pages(ssk));
	if (IS_ERR(mr))
		return NULL;
	ssk->conn.zc_tx.mr = mr;
	return mr;
}

/*
 * Is everything we posted acknowledged (sdp_device::reg_acked)?  No send
 * of ours in flight, no probe.  A LOCAL_INV of ours is waited for where
 * it is posted, and an earlier REG_MR is retired before the SrcAvail
 * behind it completes.  ssk->lock held.
 */
bool sdp_zc_sq_acked(const struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	return !sdp_sends_in_flight(ssk) && !ssk->ka.busy;
}

/*
 * A send-queue completion: wake a registration that waits for the queue
 * to be acknowledged (sdp_zc_post_advert()).  ssk->lock held.
 */
void sdp_zc_sq_progress(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	if (test_bit(SDP_ZT_SQ_WAIT, &ssk->conn.zc_tx.flags) &&
	    sdp_zc_sq_acked(ssk)) {
		clear_bit(SDP_ZT_SQ_WAIT, &ssk->conn.zc_tx.flags);
		if (ssk->zc_async)
			sdp_queue_work(ssk);
		sdp_sock_wake(ssk, TASK_NORMAL);
	}
}

/*
 * DMA-map the pinned pages @zp for the device and map them into @mr
 * under a new key.  The connection is there (its device, QP and PD stay
 * while lock_sock() is held).  Returns 0 or a negative errno.
 */
int sdp_zc_map(struct sdp_sock *ssk, struct sdp_zc_pages *zp,
	       struct ib_mr *mr)
{
	struct ib_device *dev = ssk->conn.sdev->ibdev;
	int n;

	n = ib_dma_map_sg(dev, zp->sgt.sgl, zp->sgt.orig_nents, DMA_TO_DEVICE);
	if (!n)
		return -ENOMEM;
	zp->dev = dev;
	zp->nents = n;
	/* A new key for every advertisement: an old one never matches. */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	if (ib_map_mr_sg(mr, zp->sgt.sgl, n, NULL, PAGE_SIZE) != n)
		return -EINVAL;
	/*
	 * Advertise addresses that start at the offset in the first page:
	 * the peer learns no kernel or bus address of ours.
	 */
	mr->iova = offset_in_page(mr->iova);
	return 0;
}

/* Connection setup: completion handlers and defaults. */
void sdp_zc_init(struct sdp_sock *ssk)
{
	ssk->conn.zc_tx.reg_cqe.done = sdp_zc_reg_done;
	ssk->conn.zc_tx.inv_cqe.done = sdp_zc_inv_done;
	ssk->conn.zc_rx.rd_cqe.done = sdp_zc_rd_done;
}

/* Connection teardown, the QP destroyed: the MR goes with its PD. */
void sdp_zc_conn_free(struct sdp_sock *ssk)
{
	/* sdp_work() waits for it: it holds sdp_conn::zc_busy. */
	WARN_ON_ONCE(ssk->zc_async || ssk->zc_gather || ssk->zc_spliced);
	/*
	 * The pacing, the declines and the hold go with the rest of
	 * struct sdp_conn when a connection is made again (sdp_conn_reset()).
	 */
	if (ssk->conn.zc_tx.mr) {
		ib_dereg_mr(ssk->conn.zc_tx.mr);
		ssk->conn.zc_tx.mr = NULL;
	}
	ssk->conn.zc_rx.buf = NULL;
	ssk->conn.zc_rx.compl = 0;
}
