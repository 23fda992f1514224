/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sockets Direct Protocol -- resuming a connection after an outage: the
 * capability, each connection's name and secret, and the namespace's
 * resume listener (sdp_resume.c; Documentation/networking/sdp-resume.rst
 * has the design, and which of its steps are built).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#ifndef _SDP_RESUME_H
#define _SDP_RESUME_H

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "sdp_proto.h"

struct rdma_cm_id;
struct sdp_sock;

/**
 * struct sdp_rsm - what a socket keeps to resume its connection
 * @conn_id: the passive side's name of the connection (0: the
 *	connection is not resumable)
 * @done: resumes completed (the next Resume's generation is one more)
 * @port: the peer's resume listener (active side), network order
 * @offered: our Hello offered the capability (active side)
 * @passive: we named the connection (our resume listener knows it)
 * @secret: the tags' key, from the HelloAck
 *
 * Set once, before the connection is established (sdp_cm.c), and read
 * by the resume listener under sdp_sock::lock.
 */
struct sdp_rsm {
	u32 conn_id;
	u32 done;
	__be16 port;
	bool offered;
	bool passive;
	u8 secret[SDP_RESUME_SECRET_LEN];
};

/**
 * struct sdp_rsm_net - a namespace's resume listener
 * @lock: serialises making and destroying @lid
 * @lid: the listening CM ids at net.sdp.resume_port, IPv4's and IPv6's
 *	(each family-only: an iWARP device's listener is a TCP socket, and
 *	an IPv4 client of an IPv6 one comes with v4-mapped addresses that
 *	the CM refuses, as for sdp_cm_listen_v4()), or NULL; they exist
 *	while @users does not drop to 0; IPv6's not if IPv6 is disabled
 * @port: the port @lid listen at (net.sdp.resume_port when made)
 * @users: resumable connections we named (in @conns)
 * @conns: those connections by conn_id (struct sdp_sock *), locked
 *	with the _bh calls: sockets leave it from their destructor
 * @put_work: destroys @lid once @users is 0 (the CM id sleeps to go)
 */
struct sdp_rsm_net {
	struct mutex lock;	/* see above */
	struct rdma_cm_id *lid[2];
	u16 port;
	unsigned int users;
	struct xarray conns;
	struct work_struct put_work;
};

void sdp_rsm_net_init(struct sdp_rsm_net *rn);
void sdp_rsm_net_exit(struct sdp_rsm_net *rn);
u8 sdp_rsm_hello_flag(struct sdp_sock *ssk);
bool sdp_rsm_offer(struct sdp_sock *child, u8 hello_flags,
		   struct sdp_hello_ack_resume *x);
bool sdp_rsm_hello_ack(struct sdp_sock *ssk, const struct sdp_hello_ack *ha,
		       u32 len);
void sdp_rsm_forget(struct sdp_sock *ssk);

#endif /* _SDP_RESUME_H */
