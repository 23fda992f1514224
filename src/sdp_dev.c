// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- RDMA device tracking.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * An ib_client learns about every RDMA device as it appears and goes
 * away.  For each one that can carry RDMA CM connections we keep a struct
 * sdp_device.  Connections find it with sdp_device_get() and hold a
 * reference for as long as they have resources on the device (each
 * connection has a protection domain of its own, so that the keys it
 * advertises for zero-copy are usable through its own QP only).
 */
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_close.h"
#include "sdp_conn.h"
#include "sdp_dev.h"
#include "sdp_timers.h"
#include "sdp_fault.h"

/*
 * sdp_dev_lock protects sdp_dev_list and sdp_device::removing.
 * sdp_dev_wait is woken whenever a device reference is dropped.
 */
static DEFINE_SPINLOCK(sdp_dev_lock);
static LIST_HEAD(sdp_dev_list);
static DECLARE_WAIT_QUEUE_HEAD(sdp_dev_wait);

static struct ib_client sdp_ib_client;

static void sdp_device_free(struct kref *ref)
{
	struct sdp_device *sdev = container_of(ref, struct sdp_device, ref);

	kfree(sdev->vec_use);
	kfree(sdev);
}

/**
 * sdp_device_get() - find the SDP state of an RDMA device
 * @ibdev: the device
 *
 * Return: the device's state with a reference the caller drops with
 * sdp_device_put(), or NULL if SDP does not use @ibdev (not an RDMA CM
 * capable device) or it is being removed.
 */
struct sdp_device *sdp_device_get(struct ib_device *ibdev)
{
	struct sdp_device *sdev, *found = NULL;

	spin_lock(&sdp_dev_lock);
	list_for_each_entry(sdev, &sdp_dev_list, list) {
		if (sdev->ibdev == ibdev && !sdev->removing) {
			kref_get(&sdev->ref);
			found = sdev;
			break;
		}
	}
	spin_unlock(&sdp_dev_lock);
	return found;
}

void sdp_device_put(struct sdp_device *sdev)
{
	kref_put(&sdev->ref, sdp_device_free);
	wake_up(&sdp_dev_wait);
}

/* Under the socket list lock: a socket on the device not yet handled. */
static bool sdp_sock_on_device(struct sdp_sock *ssk, void *sdev)
{
	return READ_ONCE(ssk->conn.sdev) == sdev &&
	       !test_and_set_bit(SDP_C_DEV_GONE, &ssk->conn.flags);
}

static void sdp_sock_device_gone(struct sdp_sock *ssk, void *sdev)
{
	sdp_abort(ssk, SDP_ABORT_REASON_DEVICE_REMOVAL, -ENETDOWN);
	sdp_queue_work(ssk);	/* releases the QP even if the socket is open */
}

/* Under the socket list lock: a socket on the device not yet told. */
static bool sdp_sock_on_failed_device(struct sdp_sock *ssk, void *sdev)
{
	return READ_ONCE(ssk->conn.sdev) == sdev &&
	       !test_bit(SDP_C_QP_FATAL, &ssk->conn.flags);
}

static void sdp_sock_device_fatal(struct sdp_sock *ssk, void *sdev)
{
	sdp_conn_fatal(ssk, "device fatal error");
}

/*
 * The device failed (IB_EVENT_DEVICE_FATAL): every QP on it is dead, and
 * the CM reports nothing until the device is removed, if ever.  Each
 * connection on it is aborted as its QP's own fatal event would
 * (sdp_conn_fatal() marks it, so that the scan ends).
 */
static void sdp_device_fatal_work(struct work_struct *work)
{
	struct sdp_device *sdev = container_of(work, struct sdp_device,
					       fatal_work);

	while (sdp_sock_scan(sdp_sock_on_failed_device, sdp_sock_device_fatal,
			     sdev) == SDP_SCAN_BATCH)
		;
}

/* The device's asynchronous events, in whatever context it reports them. */
static void sdp_device_event(struct ib_event_handler *h, struct ib_event *ev)
{
	struct sdp_device *sdev = container_of(h, struct sdp_device, event);

	if (ev->event != IB_EVENT_DEVICE_FATAL)
		return;
	pr_warn_ratelimited("%s: %s\n", dev_name(&sdev->ibdev->dev),
			    ib_event_msg(ev->event));
	queue_work(sdp_wq, &sdev->fatal_work);
}

static bool sdp_device_usable(struct ib_device *ibdev)
{
	u32 port;

	rdma_for_each_port(ibdev, port)
		if (rdma_cap_ib_cm(ibdev, port) || rdma_cap_iw_cm(ibdev, port))
			return true;
	return false;
}

/**
 * sdp_device_vector_get() - a completion vector for a new connection's CQ
 * @sdev: the device
 *
 * The vector fewest of our CQs use now, the lowest of those if several
 * are, so that completion work spreads over the device's vectors (and,
 * where they have interrupts of their own, over the CPUs those are bound
 * to) instead of all landing on vector 0.  Concurrent callers may pick
 * the same one: the balance is approximate.
 *
 * Return: the vector, to be given back with sdp_device_vector_put().
 */
int sdp_device_vector_get(struct sdp_device *sdev)
{
	int i, best = 0, n = max(sdev->ibdev->num_comp_vectors, 1);

	for (i = 1; i < n; i++)
		if (atomic_read(&sdev->vec_use[i]) <
		    atomic_read(&sdev->vec_use[best]))
			best = i;
	atomic_inc(&sdev->vec_use[best]);
	return best;
}

void sdp_device_vector_put(struct sdp_device *sdev, int vector)
{
	atomic_dec(&sdev->vec_use[vector]);
}

static int sdp_add_one(struct ib_device *ibdev)
{
	struct sdp_device *sdev;

	if (!sdp_device_usable(ibdev))
		return -EOPNOTSUPP;

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	sdev->vec_use = kcalloc(max(ibdev->num_comp_vectors, 1),
				sizeof(*sdev->vec_use), GFP_KERNEL);
	if (!sdev->vec_use) {
		kfree(sdev);
		return -ENOMEM;
	}

	sdev->ibdev = ibdev;
	/*
	 * Soft-RoCE retransmits by running its send queue again from the
	 * oldest unacknowledged request, and runs local operations found
	 * there again too: a REG_MR queued behind a SEND whose packet was
	 * lost is executed a second time, fails (the MR is valid already:
	 * "rxe_reg_fast_mr: mr->lkey ... not free") and kills the QP.
	 * Zero-copy registers only once everything before is acknowledged
	 * (sdp_zc_sq_acked()); REG_MR is then at the head of the queue, and
	 * rxe retires it before any retransmission of what follows.
	 */
	sdev->reg_acked = ibdev->ops.driver_id == RDMA_DRIVER_RXE;
	sdev->iwarp = rdma_protocol_iwarp(ibdev, rdma_start_port(ibdev));
	kref_init(&sdev->ref);
	INIT_WORK(&sdev->fatal_work, sdp_device_fatal_work);
	INIT_IB_EVENT_HANDLER(&sdev->event, ibdev, sdp_device_event);
	ib_register_event_handler(&sdev->event);

	spin_lock(&sdp_dev_lock);
	list_add_tail(&sdev->list, &sdp_dev_list);
	spin_unlock(&sdp_dev_lock);
	ib_set_client_data(ibdev, &sdp_ib_client, sdev);
	pr_debug("%s: added\n", dev_name(&ibdev->dev));
	return 0;
}

/*
 * Called when @ibdev goes away (or the module unloads).  The device stays
 * usable until we return, so every connection on it is aborted (its
 * sockets get ENETDOWN) and we wait until each has destroyed its QP and
 * dropped its device reference.  The scan repeats while waiting, which
 * also catches a connection that took its reference just before
 * @removing was set.
 */
static void sdp_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct sdp_device *sdev = client_data;

	ib_unregister_event_handler(&sdev->event);
	cancel_work_sync(&sdev->fatal_work);
	sdp_fault_removal_wait();
	spin_lock(&sdp_dev_lock);
	sdev->removing = true;
	spin_unlock(&sdp_dev_lock);

	for (;;) {
		while (sdp_sock_scan(sdp_sock_on_device, sdp_sock_device_gone,
				     sdev) == SDP_SCAN_BATCH)
			;
		if (wait_event_timeout(sdp_dev_wait, kref_read(&sdev->ref) == 1,
				       HZ))
			break;
	}

	spin_lock(&sdp_dev_lock);
	list_del(&sdev->list);
	spin_unlock(&sdp_dev_lock);
	sdp_device_put(sdev);
	pr_debug("%s: removed\n", dev_name(&ibdev->dev));
}

static struct ib_client sdp_ib_client = {
	.name = "sdp",
	.add = sdp_add_one,
	.remove = sdp_remove_one,
};

int sdp_dev_init(void)
{
	return ib_register_client(&sdp_ib_client);
}

void sdp_dev_exit(void)
{
	ib_unregister_client(&sdp_ib_client);
}
