/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- the RDMA devices (sdp_dev.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_DEV_H
#define _SDP_DEV_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

/**
 * struct sdp_device - per-RDMA-device state
 * @ibdev: the device; valid until sdp_remove_one() for it returns
 * @list: entry in sdp_dev_list, protected by sdp_dev_lock
 * @ref: held by sdp_dev_list and by every connection with a QP on the
 *	device; the last sdp_device_put() frees it
 * @removing: the device is going away; sdp_device_get() fails
 * @reg_acked: register memory only on a send queue with nothing
 *	unacknowledged (Soft-RoCE, sdp_add_one())
 * @iwarp: an iWARP device (sdp.rst, "iWARP"): the connection request
 *	goes out from sdp_wq (soft-iWARP connects synchronously), the
 *	passive side waits for MPA's first Send before it sends, the iWARP
 *	CM holds the QP until it lets go (SDP_C_IW_QP_HELD), an abort
 *	moves the QP to the error state itself, and short RDMA reads end
 *	at page boundaries (soft-iWARP peers, sdp_zc_recv())
 * @event: the device's asynchronous events (IB_EVENT_DEVICE_FATAL)
 * @fatal_work: aborts every connection on a device that failed
 */
struct sdp_device {
	struct ib_device *ibdev;
	struct list_head list;
	struct kref ref;
	bool removing;
	bool reg_acked;
	bool iwarp;
	atomic_t *vec_use;	/* CQs on each completion vector */
	struct ib_event_handler event;
	struct work_struct fatal_work;
};

int sdp_dev_init(void);
void sdp_dev_exit(void);
struct sdp_device *sdp_device_get(struct ib_device *ibdev);
void sdp_device_put(struct sdp_device *sdev);
int sdp_device_vector_get(struct sdp_device *sdev);
void sdp_device_vector_put(struct sdp_device *sdev, int vector);

/* Is @sdev (a connection's device, or NULL) going away? */
static inline bool sdp_device_removing(const struct sdp_device *sdev)
{
	return sdev && READ_ONCE(sdev->removing);
}

#endif /* _SDP_DEV_H */
