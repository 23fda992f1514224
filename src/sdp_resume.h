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

/* struct sdp_rsm_net::state: its listener's */
enum sdp_rsm_state {
	SDP_RSM_DOWN,		/* none: listen_work makes it for @users */
	SDP_RSM_MAKING,		/* listen_work is making it at @port */
	SDP_RSM_UP,		/* listening at @port */
	SDP_RSM_FAILED,		/* could not be made at failed_at */
};

/**
 * struct sdp_rsm_net - a namespace's resume listener
 * @conns: resumable connections we named (struct sdp_sock *) by
 *	conn_id; its lock, taken with bottom halves off (sockets leave
 *	from their destructor, in any context), guards the fields below
 *	but @lid
 * @users: entries of @conns
 * @state: enum sdp_rsm_state
 * @port: the port the listener takes or listens at: net.sdp.resume_port
 *	when a user came to none (DOWN, or FAILED for SDP_RSM_RETRY), and
 *	what the HelloAck announces
 * @failed_at: when it could not be made (jiffies), for the retry
 * @lid: the listening CM ids, IPv4's and IPv6's (each family-only: an
 *	iWARP device's listener is a TCP socket, and an IPv4 client of an
 *	IPv6 one comes with v4-mapped addresses that the CM refuses, as for
 *	sdp_cm_listen_v4()); IPv6's not if IPv6 is disabled.  listen_work's
 *	alone
 * @listen_work: makes the listener while @users is not 0, destroys it
 *	once it is 0 (its CM ids hold a reference to the namespace)
 * @net: the namespace (no reference: this is part of it)
 */
struct sdp_rsm_net {
	struct xarray conns;
	unsigned int users;
	enum sdp_rsm_state state;
	u16 port;
	unsigned long failed_at;
	struct rdma_cm_id *lid[2];
	struct work_struct listen_work;
	struct net *net;
};

void sdp_rsm_net_init(struct net *net, struct sdp_rsm_net *rn);
void sdp_rsm_net_exit(struct sdp_rsm_net *rn);
u8 sdp_rsm_hello_flag(struct sdp_sock *ssk);
bool sdp_rsm_offer(struct sdp_sock *child, u8 hello_flags,
		   struct sdp_hello_ack_resume *x);
bool sdp_rsm_hello_ack(struct sdp_sock *ssk, const struct sdp_hello_ack *ha,
		       u32 len);
void sdp_rsm_forget(struct sdp_sock *ssk);

#endif /* _SDP_RESUME_H */
