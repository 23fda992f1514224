// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- message buffers, the completion queue of a
 * connection, and busy polling.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * Each connection has one CQ for sends and receives.  Completions are
 * processed in softirq context (irq_poll, scheduled by the CQ's
 * completion event) or, while a reader waits for data, by the reader
 * itself polling the CQ for a short while before it sleeps (OFED's
 * recv_poll; SO_BUSY_POLL or the net.sdp.recv_poll sysctl), or once it
 * sleeps, by the reader woken with the CQ's event when the device
 * reports it from a thread (sdp_cq_event()).  All go
 * through sdp_cq_process() under sdp_conn::poll_lock, so that
 * completions are handled one at a time and in order: ib_alloc_cq()'s
 * own polling could not be shared that way, hence ib_create_cq() here.
 * Each CQ takes the completion vector that the fewest CQs of its device
 * use (sdp_device_vector_get()), so that connections spread over them.
 */
#include <linux/list.h>
#include <linux/irq_poll.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <net/busy_poll.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_conn.h"
#include "sdp_cq.h"
#include "sdp_dev.h"
#include "sdp_fault.h"
#include "sdp_net.h"
#include "sdp_stats.h"
#include "sdp_timers.h"
#include "sdp_zc.h"

#define SDP_CQ_BUDGET	64
#define SDP_CQ_BATCH	16

/**
 * sdp_ring_alloc() - allocate a ring of message buffer descriptors
 * @n: number of buffers
 * @done: completion handler of the work requests that use them
 *
 * The buffers themselves come with sdp_ring_fill(), when they are needed.
 * Charged to the active memory cgroup (sdp_mem.c).
 *
 * Return: the ring, or NULL.
 */
struct sdp_buf *sdp_ring_alloc(unsigned int n,
			       void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct sdp_buf *ring;
	unsigned int i;

	ring = kcalloc(n, sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return NULL;
	for (i = 0; i < n; i++) {
		ring[i].cqe.done = done;
		INIT_LIST_HEAD(&ring[i].node);
	}
	return ring;
}

/*
 * Map the buffer of @b for @dev, if it has one not mapped yet.
 * Return: 0, or -ENOMEM (@b stays unmapped).
 */
int sdp_buf_map(struct ib_device *dev, struct sdp_buf *b,
		enum dma_data_direction dir)
{
	if (!b->data || b->mapped)
		return 0;
	b->dma = ib_dma_map_single(dev, b->data, b->size, dir);
	if (ib_dma_mapping_error(dev, b->dma))
		return -ENOMEM;
	b->mapped = true;
	return 0;
}

/* Unmap the buffer of @b from @dev, if mapped; its memory stays. */
void sdp_buf_unmap(struct ib_device *dev, struct sdp_buf *b,
		   enum dma_data_direction dir)
{
	if (!b->mapped)
		return;
	ib_dma_unmap_single(dev, b->dma, b->size, dir);
	b->mapped = false;
}

/* Exchange the buffers (memory and mapping) of @a and @b. */
void sdp_buf_swap_mem(struct sdp_buf *a, struct sdp_buf *b)
{
	swap(a->data, b->data);
	swap(a->dma, b->dma);
	swap(a->size, b->size);
	swap(a->mapped, b->mapped);
}

/**
 * sdp_ring_fill() - allocate and DMA-map buffers @from .. @to - 1 of @ring
 * @dev: the device that will access them
 * @ring: the ring (sdp_ring_alloc())
 * @from: first buffer
 * @to: one past the last
 * @size: bytes per buffer
 * @dir: DMA_TO_DEVICE (send) or DMA_FROM_DEVICE (receive)
 *
 * Return: 0, or -ENOMEM with none of them allocated.
 */
int sdp_ring_fill(struct ib_device *dev, struct sdp_buf *ring,
		  unsigned int from, unsigned int to, size_t size,
		  enum dma_data_direction dir)
{
	unsigned int i;

	for (i = from; i < to; i++) {
		struct sdp_buf *b = &ring[i];

		b->data = kmalloc(size, GFP_KERNEL_ACCOUNT);
		if (!b->data)
			goto err;
		b->size = size;
		if (sdp_buf_map(dev, b, dir)) {
			sdp_buf_free(dev, b, dir);
			goto err;
		}
	}
	return 0;
err:
	sdp_ring_drain(dev, ring, from, i, dir);
	return -ENOMEM;
}

/*
 * Unmap (from @dev) and free the buffer of @b, if it has one; an
 * unmapped buffer needs no device.
 */
void sdp_buf_free(struct ib_device *dev, struct sdp_buf *b,
		  enum dma_data_direction dir)
{
	if (!b->data)
		return;
	sdp_buf_unmap(dev, b, dir);
	kfree(b->data);
	b->data = NULL;
	b->size = 0;
}

/* Unmap every mapped buffer of @ring (@n entries) from @dev; they stay. */
void sdp_ring_unmap(struct ib_device *dev, struct sdp_buf *ring,
		    unsigned int n, enum dma_data_direction dir)
{
	unsigned int i;

	if (!ring)
		return;
	for (i = 0; i < n; i++)
		sdp_buf_unmap(dev, &ring[i], dir);
}

/* Unmap and free the buffers @from .. @to - 1 of @ring that have one. */
void sdp_ring_drain(struct ib_device *dev, struct sdp_buf *ring,
		    unsigned int from, unsigned int to,
		    enum dma_data_direction dir)
{
	unsigned int i;

	for (i = from; i < to; i++)
		sdp_buf_free(dev, &ring[i], dir);
}

/* Unmap and free every buffer of @ring that has one, and the ring. */
void sdp_ring_free(struct ib_device *dev, struct sdp_buf *ring,
		   unsigned int n, enum dma_data_direction dir)
{
	if (!ring)
		return;
	sdp_ring_drain(dev, ring, 0, n, dir);
	kfree(ring);
}

/*
 * A completion was flushed: the QP is in the error state.  We put it
 * there ourselves only once the connection is over: an abort
 * (SDP_C_ABORT), a disconnect, ours or the peer's (SDP_C_CM_DISCONNECT),
 * the teardown (sdp_conn_detach() sets both).  A failed RDMA read of
 * ours explains it too (its reader reports the error, sdp_zc_recv()), as
 * does a device going away (sdp_dev.c aborts with ENETDOWN); any other
 * failed completion aborted already.
 */
static bool sdp_cq_flush_explained(struct sdp_sock *ssk)
{
	lockdep_assert_held(&ssk->lock);
	return !test_bit(SDP_C_ESTABLISHED, &ssk->conn.flags) ||
	       test_bit(SDP_C_ABORT, &ssk->conn.flags) ||
	       test_bit(SDP_C_CM_DISCONNECT, &ssk->conn.flags) ||
	       ssk->conn.zc_rx.rd_err || sdp_device_removing(ssk->conn.sdev);
}

/*
 * Otherwise the CM may have put it there, and say so only after: on a
 * REJ, which the passive side sends an established active side when it
 * drops its half of the connection before the RTU reached it (its
 * listener closed), rdma_cm moves our QP to the error state and only
 * then calls our handler, which may wait for lock_sock() while the flush
 * is here already.  So a flush nothing explains yet is left to
 * sdp_work(), which gives the CM SDP_CQ_FLUSH_GRACE to tell why.  The
 * handler of @wc ran before (its wr_cqe names it in the log line).
 * poll_lock held, BHs off.
 */
static void sdp_cq_flushed(struct sdp_sock *ssk, const struct ib_wc *wc)
{
	spin_lock(&ssk->lock);
	if (!sdp_cq_flush_explained(ssk) &&
	    !test_and_set_bit(SDP_C_QP_FLUSHED, &ssk->conn.flags)) {
		ssk->conn.qp_flushed = jiffies;
		ssk->conn.qp_flushed_by = wc->wr_cqe ? wc->wr_cqe->done : NULL;
		sdp_queue_work_within(ssk, SDP_CQ_FLUSH_GRACE);
	}
	spin_unlock(&ssk->lock);
}

/**
 * sdp_cq_flush_verdict() - abort for a flush no CM event explained
 * @ssk: the socket, its QP flushed (SDP_C_QP_FLUSHED)
 *
 * SDP_CQ_FLUSH_GRACE after the flush, with no CM event and nothing else
 * to explain it, the QP went to the error state by itself: the peer's
 * RDMA write or read through a bad key, or any other fatal error, with
 * the peer's CM connection left up.  Nothing will come through the QP
 * again and the data queued for it would wait for credits for ever:
 * abort, as for a reset (counted with the completion errors).
 * lock_sock() held.
 *
 * Return: when to look again (jiffies from now), or 0.
 */
unsigned long sdp_cq_flush_verdict(struct sdp_sock *ssk)
{
	unsigned long due, left = 0;

	sock_owned_by_me(&ssk->sk);
	spin_lock_bh(&ssk->lock);
	if (!test_bit(SDP_C_QP_FLUSHED, &ssk->conn.flags) ||
	    sdp_cq_flush_explained(ssk))
		goto out;
	due = ssk->conn.qp_flushed + SDP_CQ_FLUSH_GRACE;
	if (time_before(jiffies, due)) {
		left = due - jiffies;
		goto out;
	}
	sdp_warn_peer(ssk,
		      "QP went to the error state, no CM event (%ps, state %d, zc %lx/%lx)\n",
		      ssk->conn.qp_flushed_by, ssk->sk.sk_state,
		      ssk->conn.zc_tx.flags, ssk->conn.zc_rx.flags);
	__sdp_abort(ssk, SDP_ABORT_REASON_CQ_ERROR, -ECONNRESET);
out:
	spin_unlock_bh(&ssk->lock);
	return left;
}

/*
 * Does this completion show that the peer is alive (keepalive's
 * last_heard)?  Any that succeeded, except over iWARP with a peer that
 * answers pings (SDP_P_PING): there our sends complete once the local
 * TCP has them, and only a message received or an RDMA Read's response
 * came from the peer.  wc->opcode is valid only with success.
 */
static bool sdp_cq_heard(const struct sdp_sock *ssk, const struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS)
		return false;
	return !test_bit(SDP_P_PING, &ssk->conn.peer) ||
	       (wc->opcode & IB_WC_RECV) || wc->opcode == IB_WC_RDMA_READ;
}

/*
 * Handle up to @budget completions; poll_lock held, BHs off.
 *
 * Every work request we post carries an ib_cqe, except the RDMA reads
 * that rdma_rw_ctx_post() chains in front of the last one of a read
 * (only the last is signalled and carries ours).  An unsignalled request
 * still completes when it fails or is flushed, with wr_cqe NULL: that is
 * the read's completion (sdp_zc_rd_chain_done()).
 */
static int sdp_cq_process(struct sdp_sock *ssk, int budget)
{
	struct ib_wc wcs[SDP_CQ_BATCH];
	int done = 0, n, i;
	bool heard = false;

	lockdep_assert_held(&ssk->conn.poll_lock);
	if (!ssk->conn.cq)
		return 0;	/* gone: sdp_cq_destroy() */
	while (done < budget) {
		n = ib_poll_cq(ssk->conn.cq, min(budget - done, SDP_CQ_BATCH), wcs);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			heard |= sdp_cq_heard(ssk, &wcs[i]);
			if (unlikely(!wcs[i].wr_cqe))
				sdp_zc_rd_chain_done(ssk, &wcs[i]);
			else
				wcs[i].wr_cqe->done(ssk->conn.cq, &wcs[i]);
			if (unlikely(wcs[i].status == IB_WC_WR_FLUSH_ERR))
				sdp_cq_flushed(ssk, &wcs[i]);
		}
		done += n;
	}
	/* The peer answered: keepalive's idle time starts again. */
	if (heard)
		WRITE_ONCE(ssk->ka.last_heard, jiffies);
	return done;
}

/*
 * Let go of poll_lock: if the softirq found it held meanwhile and left the
 * CQ to us (SDP_C_POLL_AGAIN), schedule it again, for what we left and to
 * re-arm the CQ.  The flag's test is a full barrier after the unlock;
 * sdp_cq_poll() pairs with it.  The _bh one for process context.
 */
static void sdp_cq_unlock(struct sdp_sock *ssk)
	__releases(&ssk->conn.poll_lock)
{
	spin_unlock(&ssk->conn.poll_lock);
	if (test_and_clear_bit(SDP_C_POLL_AGAIN, &ssk->conn.flags))
		irq_poll_sched(&ssk->conn.iop);
}

static void sdp_cq_unlock_bh(struct sdp_sock *ssk)
	__releases(&ssk->conn.poll_lock)
{
	sdp_cq_unlock(ssk);
	local_bh_enable();
}

/*
 * irq_poll's handler.  Once it has called irq_poll_complete(), it no
 * longer holds sdp_cq_destroy() off: the CQ may go as soon as poll_lock
 * is free.  So all it does with the CQ after that, the re-arm included,
 * is done under poll_lock, and only if the CQ is still there.
 */
static int sdp_cq_poll(struct irq_poll *iop, int budget)
{
	struct sdp_sock *ssk = container_of(iop, struct sdp_sock, conn.iop);
	bool completed = false;
	int done;

	if (!spin_trylock(&ssk->conn.poll_lock)) {
		/*
		 * A reader busy-polls the CQ (sdp_busy_poll()): rather than
		 * spin on this CPU while it handles a batch, leave the CQ to
		 * it; it schedules us again as it lets go.  Unless it let go
		 * before it could see the flag.
		 */
		irq_poll_complete(iop);
		completed = true;
		sdp_fault_cq_rearm_delay(!test_bit(SDP_C_QP, &ssk->conn.flags));
		set_bit(SDP_C_POLL_AGAIN, &ssk->conn.flags);
		/* Pairs with the test after the unlock, sdp_cq_unlock(). */
		smp_mb__after_atomic();
		if (!spin_trylock(&ssk->conn.poll_lock))
			return 0;
		clear_bit(SDP_C_POLL_AGAIN, &ssk->conn.flags);
	}
	done = sdp_cq_process(ssk, budget);
	if (completed || done < budget) {
		if (!completed) {
			irq_poll_complete(iop);
			sdp_fault_cq_rearm_delay(!test_bit(SDP_C_QP, &ssk->conn.flags));
		}
		if (ssk->conn.cq &&
		    ib_req_notify_cq(ssk->conn.cq, IB_CQ_NEXT_COMP |
				     IB_CQ_REPORT_MISSED_EVENTS) > 0)
			irq_poll_sched(iop);
	}
	/*
	 * The event of a completion that came after the re-arm may have
	 * run us again on another CPU already, which found poll_lock held
	 * and left the CQ to whoever holds it: as any holder, we look.
	 */
	sdp_cq_unlock(ssk);
	return completed ? 0 : done;
}

static void sdp_cq_event(struct ib_cq *cq, void *ctx)
{
	struct sdp_sock *ssk = ctx;

	/*
	 * A device that completes from a thread (Soft-RoCE since Linux
	 * 6.4 calls this from its workqueue, interrupts off) would have
	 * irq_poll wake ksoftirqd, which then wakes the reader: two
	 * wakeups per message.  A reader asleep in recvmsg() takes the
	 * event instead and polls the CQ itself (sdp_cq_wait_end()): one.
	 * Whoever clears CQ_KICK owns the event.
	 */
	if (!in_interrupt() && test_bit(SDP_C_CQ_WAITER, &ssk->conn.flags)) {
		set_bit(SDP_C_CQ_KICK, &ssk->conn.flags);
		/* Pairs with the barrier in sdp_cq_wait_end(). */
		smp_mb__after_atomic();
		if (test_bit(SDP_C_CQ_WAITER, &ssk->conn.flags)) {
			SDP_INC_STATS(sock_net(&ssk->sk), SDP_MIB_CQ_HANDOFFS);
			/* It takes the event as it goes (sdp_cq_wait_end()). */
			sdp_sock_wake(ssk, TASK_INTERRUPTIBLE);
			return;
		}
		if (!test_and_clear_bit(SDP_C_CQ_KICK, &ssk->conn.flags))
			return;		/* the reader took it as it woke */
	}
	irq_poll_sched(&ssk->conn.iop);
}

/*
 * A reader is about to sleep for data, sk_sleep()'s entry added: CQ
 * events may be handed to it until sdp_cq_wait_end().
 */
void sdp_cq_wait_begin(struct sdp_sock *ssk)
{
	set_bit(SDP_C_CQ_WAITER, &ssk->conn.flags);
}

/*
 * The reader woke, before it takes lock_sock() again (whose holder may
 * wait for these completions): if it was handed the CQ's event, it
 * handles the CQ here, in its own context -- irq_poll's softirq runs as
 * BHs are enabled again, and re-arms the CQ.
 */
void sdp_cq_wait_end(struct sdp_sock *ssk)
{
	clear_bit(SDP_C_CQ_WAITER, &ssk->conn.flags);
	/* Pairs with the barrier in sdp_cq_event(). */
	smp_mb__after_atomic();
	if (!test_and_clear_bit(SDP_C_CQ_KICK, &ssk->conn.flags))
		return;
	local_bh_disable();
	irq_poll_sched(&ssk->conn.iop);
	local_bh_enable();
}

/*
 * An asynchronous event of the CQ: IB_EVENT_CQ_ERR (it overran), the only
 * one a CQ has; its completions are lost and the QP goes to the error
 * state.  Any context.
 */
static void sdp_cq_error(struct ib_event *ev, void *ctx)
{
	sdp_conn_fatal(ctx, ib_event_msg(ev->event));
}

int sdp_cq_create(struct sdp_sock *ssk, int ncqe)
{
	struct ib_cq_init_attr attr = {
		.cqe = ncqe,
		.comp_vector = sdp_device_vector_get(ssk->conn.sdev),
	};
	struct ib_cq *cq;

	cq = ib_create_cq(ssk->conn.sdev->ibdev, sdp_cq_event, sdp_cq_error, ssk,
			  &attr);
	if (IS_ERR(cq)) {
		sdp_device_vector_put(ssk->conn.sdev, attr.comp_vector);
		return PTR_ERR(cq);
	}
	ssk->conn.comp_vector = attr.comp_vector;
	ssk->conn.cq = cq;
	spin_lock_init(&ssk->conn.poll_lock);
	irq_poll_init(&ssk->conn.iop, SDP_CQ_BUDGET, sdp_cq_poll);
	ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	return 0;
}

/*
 * Handle at once what the CQ already holds.  For the CM's DISCONNECTED:
 * the peer disconnects only after our adapter acknowledged its DisConn,
 * so that DisConn's completion is in the CQ, but the softirq may not
 * have handled it yet; the close must see it before it decides whether
 * the connection ended in order or was aborted.  Process context, any
 * lock but sdp_sock::lock and poll_lock.
 */
void sdp_cq_process_pending(struct sdp_sock *ssk)
{
	int i;

	if (!ssk->conn.cq)
		return;
	spin_lock_bh(&ssk->conn.poll_lock);
	/* Bounded: completions may keep coming while we are at it. */
	for (i = 0; i < 4; i++)
		if (sdp_cq_process(ssk, SDP_CQ_BUDGET) < SDP_CQ_BUDGET)
			break;
	sdp_cq_unlock_bh(ssk);
}

/*
 * After the QP is destroyed: no completion can come any more.  No poll
 * is scheduled after irq_poll_disable(); one that completed its irq_poll
 * before (sdp_cq_poll()), or a reader polling, may still hold poll_lock,
 * and finds the CQ gone once it is free.
 */
void sdp_cq_destroy(struct sdp_sock *ssk)
{
	struct ib_cq *cq = ssk->conn.cq;

	irq_poll_disable(&ssk->conn.iop);
	spin_lock_bh(&ssk->conn.poll_lock);
	WRITE_ONCE(ssk->conn.cq, NULL);
	spin_unlock_bh(&ssk->conn.poll_lock);
	ib_destroy_cq(cq);
	sdp_device_vector_put(ssk->conn.sdev, ssk->conn.comp_vector);
}

/*
 * Poll the CQ from process context for at most the busy-poll time, until
 * @done(@sk, @arg) holds.  Called with lock_sock() held, before sleeping.
 *
 * Polling also stops as soon as another task is runnable on this CPU, as
 * KVM's halt polling does: that task may be the very peer we wait for
 * (both ends of a connection on one CPU), and every microsecond spent
 * spinning would delay its reply by as much.  The reader then sleeps and
 * is woken by the completion like any other.
 */
void sdp_busy_poll(struct sock *sk, bool (*done)(struct sock *sk, size_t arg),
		   size_t arg)
{
	struct sdp_sock *ssk = sdp_sk(sk);
	struct net *net = sock_net(sk);
	unsigned int usec = READ_ONCE(sk->sk_ll_usec) ?:
			     sdp_sysctl_recv_poll(net);
	u64 end;

	sock_owned_by_me(sk);
	if (!usec || !ssk->conn.cq || !test_bit(SDP_C_QP, &ssk->conn.flags))
		return;
	end = local_clock() + min(usec, 100000U) * NSEC_PER_USEC;
	do {
		if (spin_trylock_bh(&ssk->conn.poll_lock)) {
			sdp_cq_process(ssk, SDP_CQ_BATCH);
			sdp_cq_unlock_bh(ssk);
		}
		if (done(sk, arg)) {
			SDP_INC_STATS(net, SDP_MIB_BUSY_POLL_HITS);
			return;
		}
		if (!single_task_running()) {
			SDP_INC_STATS(net, SDP_MIB_BUSY_POLL_YIELDS);
			return;
		}
		cpu_relax();
	} while (!signal_pending(current) && !need_resched() &&
		 local_clock() < end);
}
