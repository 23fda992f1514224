// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- RDMA device tracking.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * An ib_client learns about every RDMA device as it appears and goes
 * away.  For each one that can carry RDMA CM connections we keep a struct
 * sdp_device with the protection domain that the device's connections
 * share.  Connections find it with sdp_device_get() and hold a reference
 * for as long as they use its resources.
 */
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "sdp.h"

/* sdp_dev_lock protects sdp_dev_list (membership, not the entries). */
static DEFINE_SPINLOCK(sdp_dev_lock);
static LIST_HEAD(sdp_dev_list);

static struct ib_client sdp_ib_client;

static void sdp_device_free(struct kref *ref)
{
	struct sdp_device *sdev = container_of(ref, struct sdp_device, ref);

	ib_dealloc_pd(sdev->pd);
	kfree(sdev);
}

/**
 * sdp_device_get() - find the SDP state of an RDMA device
 * @ibdev: the device
 *
 * Return: the device's state with a reference the caller drops with
 * sdp_device_put(), or NULL if SDP does not use @ibdev (not an RDMA CM
 * capable device, or being removed).
 */
struct sdp_device *sdp_device_get(struct ib_device *ibdev)
{
	struct sdp_device *sdev, *found = NULL;

	spin_lock(&sdp_dev_lock);
	list_for_each_entry(sdev, &sdp_dev_list, list) {
		if (sdev->ibdev == ibdev) {
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
}

static bool sdp_device_usable(struct ib_device *ibdev)
{
	u32 port;

	rdma_for_each_port(ibdev, port)
		if (rdma_cap_ib_cm(ibdev, port) || rdma_cap_iw_cm(ibdev, port))
			return true;
	return false;
}

static int sdp_add_one(struct ib_device *ibdev)
{
	struct sdp_device *sdev;
	int err;

	if (!sdp_device_usable(ibdev))
		return -EOPNOTSUPP;

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;

	sdev->ibdev = ibdev;
	kref_init(&sdev->ref);
	sdev->pd = ib_alloc_pd(ibdev, 0);
	if (IS_ERR(sdev->pd)) {
		err = PTR_ERR(sdev->pd);
		pr_warn("%s: cannot allocate a protection domain: %d\n",
			dev_name(&ibdev->dev), err);
		goto err_free;
	}

	spin_lock(&sdp_dev_lock);
	list_add_tail(&sdev->list, &sdp_dev_list);
	spin_unlock(&sdp_dev_lock);
	ib_set_client_data(ibdev, &sdp_ib_client, sdev);
	pr_debug("%s: added\n", dev_name(&ibdev->dev));
	return 0;

err_free:
	kfree(sdev);
	return err;
}

/*
 * Called when @ibdev goes away (or the module unloads).  The device stays
 * usable until we return, so the last reference must be gone by then:
 * later issues make connections on the device drop theirs here.
 */
static void sdp_remove_one(struct ib_device *ibdev, void *client_data)
{
	struct sdp_device *sdev = client_data;

	spin_lock(&sdp_dev_lock);
	list_del(&sdev->list);
	spin_unlock(&sdp_dev_lock);
	WARN_ON(kref_read(&sdev->ref) != 1);
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
