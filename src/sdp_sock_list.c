// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- the list of every SDP socket, of every
 * namespace: /proc/net/sdp and sock_diag walk it (sdp_diag.c), and the
 * device scans act on the sockets of a device that goes away or failed
 * (sdp_sock_scan(), from sdp_dev.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/spinlock.h>

#include "sdp.h"
#include "sdp_conn.h"

/*
 * sdp_sock_list_lock protects sdp_sock_list.  Sockets are unlinked from
 * their destructor, which can run in softirq context, hence the _bh.
 */
DEFINE_SPINLOCK(sdp_sock_list_lock);
LIST_HEAD(sdp_sock_list);

static atomic64_t sdp_sock_ids = ATOMIC64_INIT(0);

void sdp_sock_link(struct sdp_sock *ssk)
{
	ssk->stats.id = atomic64_inc_return(&sdp_sock_ids);
	spin_lock_bh(&sdp_sock_list_lock);
	list_add_tail(&ssk->node, &sdp_sock_list);
	spin_unlock_bh(&sdp_sock_list_lock);
}

void sdp_sock_unlink(struct sdp_sock *ssk)
{
	spin_lock_bh(&sdp_sock_list_lock);
	list_del(&ssk->node);
	spin_unlock_bh(&sdp_sock_list_lock);
}

/* A socket that connects again may be on a device the scan will remove. */
void sdp_sock_clear_dev_gone(struct sdp_sock *ssk)
{
	spin_lock_bh(&sdp_sock_list_lock);
	clear_bit(SDP_C_DEV_GONE, &ssk->conn.flags);
	spin_unlock_bh(&sdp_sock_list_lock);
}

/**
 * sdp_sock_scan() - act on the sockets that match a condition
 * @match: called under the list lock; true selects the socket (it should
 *	also mark it, so that the next scan does not select it again)
 * @fn: called for each selected socket, without locks, holding a reference
 * @arg: passed to both
 *
 * Selects at most SDP_SCAN_BATCH sockets.  Return: how many it selected;
 * call again while that is SDP_SCAN_BATCH.
 */
int sdp_sock_scan(bool (*match)(struct sdp_sock *ssk, void *arg),
		  void (*fn)(struct sdp_sock *ssk, void *arg), void *arg)
{
	struct sdp_sock *batch[SDP_SCAN_BATCH], *ssk;
	int i, n = 0;

	spin_lock_bh(&sdp_sock_list_lock);
	list_for_each_entry(ssk, &sdp_sock_list, node) {
		/*
		 * The memory stays valid while we hold the lock (the
		 * destructor unlinks under it), but a socket whose last
		 * reference is gone is being freed: skip it.
		 */
		if (!match(ssk, arg) ||
		    !refcount_inc_not_zero(&ssk->sk.sk_refcnt))
			continue;
		batch[n++] = ssk;
		if (n == SDP_SCAN_BATCH)
			break;
	}
	spin_unlock_bh(&sdp_sock_list_lock);

	for (i = 0; i < n; i++) {
		fn(batch[i], arg);
		sock_put(&batch[i]->sk);
	}
	return n;
}
