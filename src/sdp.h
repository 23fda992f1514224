/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- declarations shared by the module's files.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_H
#define _SDP_H

#include <linux/kref.h>
#include <linux/list.h>
#include <net/sock.h>
#include <rdma/ib_verbs.h>

/* Family number this instance registered under (module parameter). */
extern int sdp_family;

/*
 * Socket states.  They reuse the TCP state numbers so that diagnostics
 * can print them the way /proc/net/tcp does; only the subset that SDP
 * passes through is listed.
 */
enum sdp_state {
	SDP_CLOSE = TCP_CLOSE,
};

/**
 * struct sdp_sock - an SDP socket
 * @sk: the generic socket; must stay first (sk_alloc() sizes the object
 *	from struct proto::obj_size and sdp_sk() casts back)
 * @node: entry in sdp_sock_list, protected by sdp_sock_list_lock; used
 *	by the diagnostics listing
 */
struct sdp_sock {
	struct sock sk;
	struct list_head node;
};

static inline struct sdp_sock *sdp_sk(const struct sock *sk)
{
	return container_of(sk, struct sdp_sock, sk);
}

/**
 * struct sdp_device - per-RDMA-device state
 * @ibdev: the device; valid until sdp_remove_one() for it returns
 * @pd: protection domain every SDP connection on this device uses
 * @list: entry in sdp_dev_list, protected by sdp_dev_lock
 * @ref: held by sdp_dev_list and by every user that looked the device up
 *	with sdp_device_get(); the last sdp_device_put() frees it
 */
struct sdp_device {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct list_head list;
	struct kref ref;
};

/* sdp_dev.c */
int sdp_dev_init(void);
void sdp_dev_exit(void);
struct sdp_device *sdp_device_get(struct ib_device *ibdev);
void sdp_device_put(struct sdp_device *sdev);

/* sdp_diag.c */
void sdp_sock_link(struct sdp_sock *ssk);
void sdp_sock_unlink(struct sdp_sock *ssk);
int sdp_diag_init(void);
void sdp_diag_exit(void);

#endif /* _SDP_H */
